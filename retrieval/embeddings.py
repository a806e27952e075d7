"""Sentence embeddings of graph nodes: one :class:`Embedder` interface, two local backends.

Seed 004 (section 3.2, "Clustering of Triples") encodes the knowledge graph's nodes with
bge-base-zh before clustering them. finkg takes the model from configuration (``[embedding]
model_path``), never from a hub:

- ``sentence-transformers``: any sentence-transformers directory (e.g. all-MiniLM-L6-v2, 384-d);
- ``flag``: FlagEmbedding's ``FlagModel`` (the bge family's own encoder) on a local directory,
  with the pooling the directory declares (``1_Pooling/config.json``: mean for MiniLM-style
  models), else CLS pooling (the bge default).

``backend = "auto"`` picks ``flag`` when the directory's name contains "bge", else
sentence-transformers. Vectors are float32 and L2-normalized, so a dot product is the cosine
similarity. Each embedder has an identity string (backend, directory name and a fingerprint of
its config and weights) stored on nodes as ``embedding_model``: a node is re-embedded only when
its stored identity differs.
"""

from __future__ import annotations

import hashlib
import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from kg.errors import ModelError
from kg.progress import Tick

BACKENDS = ("auto", "sentence-transformers", "flag")

Progress = Tick  # an item-level callback (kg.progress)


class EmbeddingModelError(ModelError):
    """The configured embedding model cannot be used; the message names the setting and path."""


def model_fingerprint(path: Path) -> str:
    """12 hex digits identifying a model directory's content: sha256 over ``config.json`` and, per
    weight file (``*.safetensors``, ``*.bin``), its name, size and first MiB. Cheap (no full read)
    and changes when the weights are replaced.

    Raises:
        EmbeddingModelError: ``path`` is not a directory.
    """
    path = Path(path)
    if not path.is_dir():
        raise EmbeddingModelError(f"[embedding] model_path {path}: not a directory")
    h = hashlib.sha256()
    for name in ("config.json", "modules.json", "1_Pooling/config.json"):
        f = path / name
        if f.is_file():
            h.update(name.encode() + b"\0" + f.read_bytes())
    for f in sorted([*path.glob("*.safetensors"), *path.glob("*.bin")]):
        h.update(f.name.encode() + b"\0" + str(f.stat().st_size).encode())
        with f.open("rb") as fh:
            h.update(fh.read(1 << 20))
    return h.hexdigest()[:12]


class Embedder(ABC):
    """Encodes texts into L2-normalized float32 vectors.

    Attributes:
        identity: ``"<backend>:<directory name>@<fingerprint>"``; equal identities give equal
            vectors for equal texts.
        dimensions: vector length (384 for all-MiniLM-L6-v2, 768 for bge-base).
        batch_size: texts per forward pass.
    """

    identity: str
    dimensions: int
    batch_size: int

    @abstractmethod
    def _encode_batch(self, texts: list[str]) -> np.ndarray: ...

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """Encode ``texts`` in batches of ``batch_size``.

        Args:
            texts: strings (empty strings are encoded as such).
            progress: called with the number of texts done after each batch.

        Returns:
            float32 array of shape ``(len(texts), dimensions)``, each row of unit L2 norm
            (a zero row stays zero).
        """
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        step = self.batch_size * 4  # a few batches per call keeps the progress bar lively
        for start in range(0, len(texts), step):
            chunk = [str(t) for t in texts[start : start + step]]
            vecs = np.asarray(self._encode_batch(chunk), dtype=np.float32)
            out[start : start + len(chunk)] = normalize_rows(vecs)
            if progress is not None:
                progress(len(chunk))
        return out


def stored_vectors(stored: Sequence[Sequence[float] | None], dimensions: int) -> tuple[np.ndarray, list[int]]:
    """The vectors already stored for n items, and which items still need encoding.

    Args:
        stored: per item, its stored embedding (read for the embedder's identity) or None.
        dimensions: the embedder's vector length; a stored vector of another length counts as missing.

    Returns:
        ``(float32 (n, dimensions) array with the usable stored rows filled, zeros elsewhere,
        positions to encode in ascending order)``.
    """
    vectors = np.zeros((len(stored), dimensions), dtype=np.float32)
    missing = []
    for i, vec in enumerate(stored):
        if vec is not None and len(vec) == dimensions:
            vectors[i] = vec
        else:
            missing.append(i)
    return vectors, missing


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` (shape ``(n, d)``) scaled to unit L2 norm, float32; zero rows stay zero."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers directory (``SentenceTransformer(path)``).

    Args:
        path: the model directory.
        batch_size: texts per forward pass (>= 1).
        device: ``cpu``, ``cuda``, ``cuda:0`` ... or None (the library's choice).

    Raises:
        EmbeddingModelError: the directory does not hold a loadable model.
    """

    def __init__(self, path: Path, batch_size: int = 64, device: str | None = None) -> None:
        from sentence_transformers import SentenceTransformer

        self.path, self.batch_size = Path(path), batch_size
        fingerprint = model_fingerprint(self.path)
        try:
            self._model = SentenceTransformer(str(self.path), device=device)
        except Exception as exc:  # the library raises OSError, ValueError, KeyError ...
            raise EmbeddingModelError(
                f"[embedding] model_path {self.path}: not a loadable sentence-transformers model ({exc})"
            ) from exc
        get_dim = (
            getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        )  # renamed in sentence-transformers 6
        dim = get_dim()
        if not dim:
            dim = int(self._model.encode(["x"]).shape[1])
        self.dimensions = int(dim)
        self.identity = f"sentence-transformers:{self.path.name}@{fingerprint}"

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        return self._model.encode(
            texts, batch_size=self.batch_size, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
        )


def _declared_pooling(path: Path) -> str:
    """``mean`` when the directory's sentence-transformers pooling config says mean tokens, else
    ``cls`` (how bge models are pooled)."""
    cfg = path / "1_Pooling" / "config.json"
    if cfg.is_file():
        data = json.loads(cfg.read_text(encoding="utf-8"))
        if data.get("pooling_mode_mean_tokens"):
            return "mean"
    return "cls"


class FlagEmbedder(Embedder):
    """FlagEmbedding's ``FlagModel`` on a local directory (the bge family's encoder).

    Args:
        path: the model directory (a bge model, or any BERT-style encoder).
        batch_size: texts per forward pass (>= 1).
        device: ``cpu``, ``cuda:0`` ... or None (FlagEmbedding's choice: every GPU, else CPU).
        pooling: ``cls`` or ``mean``; None reads the directory's declared pooling.

    Raises:
        EmbeddingModelError: the directory does not hold a loadable model.
    """

    def __init__(self, path: Path, batch_size: int = 64, device: str | None = None, pooling: str | None = None) -> None:
        from FlagEmbedding import FlagModel

        self.path, self.batch_size = Path(path), batch_size
        fingerprint = model_fingerprint(self.path)
        self.pooling = pooling or _declared_pooling(self.path)
        try:
            self._model = FlagModel(
                str(self.path),
                pooling_method=self.pooling,
                normalize_embeddings=True,
                use_fp16=False,
                devices=device,
                batch_size=batch_size,
            )
        except Exception as exc:
            raise EmbeddingModelError(f"[embedding] model_path {self.path}: FlagModel cannot load it ({exc})") from exc
        self.dimensions = int(np.asarray(self._encode_batch(["dimension probe"])).shape[1])
        self.identity = f"flag-{self.pooling}:{self.path.name}@{fingerprint}"

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True))


class LazyEmbedder:
    """An embedder made on first use (:meth:`get`), for a command that may not need one (a report the analyst answers
    from the graph): a missing or unloadable model is then an error only when something encodes.

    Args:
        make: builds the embedder (e.g. :func:`make_embedder` with the ``[embedding]`` settings); called once, on the
            first :meth:`get` (again after a failure).
    """

    def __init__(self, make: Callable[[], Embedder]) -> None:
        self._make = make
        self._model: Embedder | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> Embedder | None:
        """The embedder when it was made, else None (nothing has encoded yet)."""
        return self._model

    def get(self) -> Embedder:
        """The embedder, made now if it is not yet (thread-safe).

        Raises:
            EmbeddingModelError: as ``make`` raises (no model configured, not loadable).
        """
        with self._lock:
            if self._model is None:
                self._model = self._make()
            return self._model


def make_embedder(
    model_path: Path | str | None, backend: str = "auto", batch_size: int = 64, device: str | None = None
) -> Embedder:
    """The embedder that ``[embedding]`` settings describe.

    Args:
        model_path: a local model directory (required; nothing is downloaded).
        backend: ``auto`` (``flag`` when the directory name contains "bge", else
            sentence-transformers), ``sentence-transformers`` or ``flag``.
        batch_size: texts per forward pass (>= 1).
        device: torch device string or None.

    Raises:
        EmbeddingModelError: no path, a path that is not a directory, an unknown backend or a
            model that does not load; the message names the setting.
    """
    if not model_path:
        raise EmbeddingModelError(
            "no embedding model configured: set [embedding] model_path (or FINKG_EMBEDDING_MODEL_PATH) to a "
            "local sentence-transformers or bge directory"
        )
    path = Path(model_path).expanduser()
    if not path.is_dir():
        raise EmbeddingModelError(f"[embedding] model_path {path}: not a directory")
    if backend not in BACKENDS:
        raise EmbeddingModelError(f"[embedding] backend {backend!r}: expected one of {', '.join(BACKENDS)}")
    if batch_size < 1:
        raise EmbeddingModelError(f"[embedding] batch_size {batch_size}: must be >= 1")
    if backend == "auto":
        backend = "flag" if "bge" in path.name.lower() else "sentence-transformers"
    if backend == "flag":
        return FlagEmbedder(path, batch_size=batch_size, device=device)
    return SentenceTransformerEmbedder(path, batch_size=batch_size, device=device)
