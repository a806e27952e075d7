"""Point-in-time hybrid retrieval over (:Chunk) nodes: BM25 + dense cosine, min-max fused or RRF.

Sources:

- ../shared/seeds/002_9c24ef5b42924291.txt, section 3.2 ("Hybrid Retrieval Strategy", equation 1):
  ``S_total = alpha * S_dense + (1 - alpha) * S_sparse``; section 4.3 / 5.4: alpha is chosen per
  dataset by NDCG@10 over alpha = 0, 0.025, ..., 1 (the sweep is :func:`finkg.eval.retrieval.sweep_alpha`;
  its result is stored on the corpus node by :func:`store_alpha`). Section 3.2 also names reciprocal
  rank fusion (RRF) as the alternative fusion; the paper gives no constant, so RRF uses k = 60
  (Cormack, Clarke and Buettcher, SIGIR 2009).
- ../shared/seeds/000_79d55a8598b40f79.txt, section 3.3: "Filtering is applied before textual
  scoring: future documents are excluded ... from candidate scoring"; BM25 and dense cosine "with
  equal weights after min-max normalizing both scores within each anchor's candidate pool"
  (alpha = 0.5 is therefore the default when a corpus has no swept alpha).

How finkg does it (choices measured in bench/hybrid_latency.py, see its docstring):

- **Candidate pool first.** A query names ``as_of`` (timezone-aware) and optional restrictions (chunk
  ids, document ids, source families, tickers). The pool is the chunks with ``available_at <= as_of``
  (a chunk with no ``available_at`` is never eligible when ``as_of`` is given: its availability is
  unknown) that pass every restriction. Only pool rows reach the scorers; nothing else is scored.
  Chunks are held sorted by ``available_at``, so the as-of cut is a prefix (one binary search) and
  the dense product runs on a view, not a copy.
- **Sparse = BM25 computed within the pool** (Lucene variant as bm25s implements it: k1 = 1.5,
  b = 0.75, ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, ``tf / (tf + k1 (1 - b + b dl / avgdl))``),
  where N, df and avgdl are the pool's, not the whole corpus's: a global BM25 (bm25s over every chunk,
  or a Neo4j fulltext index) would let future documents shape the term statistics of a past query,
  and a fulltext index filters after scoring. Tokens are bm25s's (lower-cased words, English stop
  words removed), as :class:`retrieval.text.documents.DocumentIndex` tokenizes; a term-count
  matrix (scipy CSC) is built once, and a query reads only its terms' columns.
- **Dense = cosine** of unit embeddings (:mod:`retrieval.embeddings`) held in memory as one
  ``(n, d)`` float32 matrix loaded from ``Chunk.embedding`` (missing or stale ones are encoded and
  written back through :class:`kg.BatchWriter`). The Neo4j vector index (``chunk_embedding``) is
  created too, for exploration and other readers, but not queried here: Neo4j 5.26's
  ``db.index.vector.queryNodes`` cannot filter before scoring (it ranks every node, approximately,
  and a filter afterwards can leave fewer than k).
- **Fusion.** ``minmax``: each score min-max normalized to [0, 1] within the pool (a constant score
  normalizes to 0: it carries no ranking information), then ``alpha * dense + (1 - alpha) * sparse``.
  ``rrf``: ``1 / (60 + rank_sparse) + 1 / (60 + rank_dense)``, 1-based ranks within the pool; chunks
  with BM25 score 0 (no query term) have no sparse rank and get no sparse term. Ties: pool order
  (availability time, then chunk id), so rankings are deterministic.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np

from kg import BatchWriter, Graph, cypher
from kg.errors import RetrievalError
from kg.progress import Tick
from retrieval.contract import AsOf, Evidence, as_of_cutoff
from retrieval.embeddings import Embedder, stored_vectors
from retrieval.text.documents import Passage
from retrieval.text.point_in_time import utc_text

BM25_K1 = 1.5
BM25_B = 0.75
RRF_K = 60
DEFAULT_ALPHA = 0.5
VECTOR_INDEX = "chunk_embedding"
Fusion = Literal["minmax", "rrf"]
FUSIONS = ("minmax", "rrf")
FILTERS = ("chunk_ids", "documents", "families", "tickers")
"""The restrictions :meth:`HybridIndex.search` takes as ``filters`` (applied before scoring)."""


class HybridError(RetrievalError):
    """Hybrid retrieval cannot run as asked (an empty corpus, a naive as-of time, a bad alpha...)."""


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk.

    Attributes:
        passage: the chunk (id, text, document, source family, availability time).
        score: the fused score (min-max: in [0, 1]; rrf: a sum of ``1 / (k + rank)``).
        sparse, dense: the raw BM25 score (pool statistics) and cosine similarity.
        sparse_norm, dense_norm: their min-max normalized values within the pool.
        rank: 1-based position in the result.
    """

    passage: Passage
    score: float
    sparse: float
    dense: float
    sparse_norm: float
    dense_norm: float
    rank: int


@dataclass
class PoolScores:
    """Scores of one query over its candidate pool (arrays aligned with ``rows``).

    Attributes:
        rows: index rows of the pool (ascending). sparse, dense: raw scores. sparse_norm, dense_norm:
        min-max normalized within the pool.
    """

    rows: np.ndarray
    sparse: np.ndarray
    dense: np.ndarray
    sparse_norm: np.ndarray = field(init=False)
    dense_norm: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.sparse_norm = minmax(self.sparse)
        self.dense_norm = minmax(self.dense)

    def fused(self, alpha: float = DEFAULT_ALPHA, fusion: Fusion = "minmax", rrf_k: int = RRF_K) -> np.ndarray:
        """The fused score of every pool row (see the module doc)."""
        if fusion == "minmax":
            check_alpha(alpha)
            return alpha * self.dense_norm + (1.0 - alpha) * self.sparse_norm
        if fusion == "rrf":
            return rrf(self.sparse, self.dense, rrf_k)
        raise HybridError(f"unknown fusion {fusion!r}: expected one of {', '.join(FUSIONS)}")


def check_alpha(alpha: float) -> float:
    """``alpha`` if it lies in [0, 1].

    Raises:
        HybridError: outside [0, 1] (alpha is the dense weight of seed 002 equation 1).
    """
    if not 0.0 <= float(alpha) <= 1.0:
        raise HybridError(f"alpha {alpha}: must lie in [0, 1] (the weight of the dense score)")
    return float(alpha)


def minmax(x: np.ndarray) -> np.ndarray:
    """``(x - min) / (max - min)`` over the array (float64); a constant (or empty) array gives zeros."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return x
    lo, hi = float(x.min()), float(x.max())
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def ranks(scores: np.ndarray) -> np.ndarray:
    """1-based rank of each entry by descending score, ties by position (stable)."""
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    out = np.empty(len(scores), dtype=np.int64)
    out[order] = np.arange(1, len(scores) + 1)
    return out


def rrf(sparse: np.ndarray, dense: np.ndarray, k: int = RRF_K) -> np.ndarray:
    """Reciprocal rank fusion: ``1 / (k + rank_sparse) + 1 / (k + rank_dense)`` per pool entry.

    Only entries with a positive sparse score are ranked in the sparse list (a BM25 score of 0 means no
    query term matched: the chunk was not retrieved by BM25); every entry is ranked in the dense list.
    """
    if k < 1:
        raise HybridError(f"RRF k {k}: must be >= 1")
    sparse = np.asarray(sparse, dtype=np.float64)
    out = 1.0 / (k + ranks(dense))
    matched = sparse > 0
    if matched.any():
        r = ranks(np.where(matched, sparse, -np.inf))
        out = out + np.where(matched, 1.0 / (k + r), 0.0)
    return out


def iso_as_of(as_of: datetime) -> str:
    """``as_of`` as the ``YYYY-MM-DDTHH:MM:SSZ`` string chunks store (UTC); a fractional second is
    cut (a chunk available at 12:00:00 is available at 12:00:00.5).

    Raises:
        HybridError: ``as_of`` is naive (no time zone: it cannot be placed in UTC).
    """
    if not isinstance(as_of, datetime) or as_of.tzinfo is None or as_of.utcoffset() is None:
        raise HybridError(f"as_of {as_of!r}: must be a timezone-aware datetime")
    return utc_text(as_of)


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """bm25s's tokens of each text (lower-cased words, English stop words removed), the tokenization
    :class:`retrieval.text.documents.DocumentIndex` uses."""
    import bm25s

    if not texts:
        return []
    out = bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)
    return [[str(w) for w in t] for t in out]


class HybridIndex:
    """Chunks, their term counts and embeddings, for point-in-time hybrid retrieval.

    Args:
        passages: the chunks (``available_at``: ISO UTC string or None).
        vectors: ``(len(passages), d)`` float32 unit rows (cosine = dot product), or None for a
            sparse-only index (dense and hybrid scoring then raise).
        embedder: encodes queries (needed with ``vectors``).
        tickers: per passage, the tickers its document is about (restriction by ticker), or None.
        corpus: the corpus name whose stored alpha :meth:`hits` uses by default.
        alpha: the default dense weight (the corpus's swept alpha, else 0.5 as in seed 000 §3.3).

    Raises:
        HybridError: no passages, or vectors whose shape does not match.
    """

    def __init__(
        self,
        passages: Sequence[Passage],
        vectors: np.ndarray | None = None,
        embedder: Embedder | None = None,
        tickers: Sequence[Iterable[str]] | None = None,
        corpus: str | None = None,
        alpha: float = DEFAULT_ALPHA,
    ) -> None:
        if not passages:
            raise HybridError(
                "no chunks to retrieve from" + (f" in corpus {corpus!r}" if corpus else "") + ": ingest text first"
            )
        if vectors is not None:
            vectors = np.asarray(vectors, dtype=np.float32)
            if vectors.ndim != 2 or vectors.shape[0] != len(passages):
                raise HybridError(f"{len(passages)} chunks but vectors of shape {vectors.shape}")
        # sorted by availability (unknown last), then id: an as-of cut is a prefix of the rows
        order = sorted(
            range(len(passages)),
            key=lambda i: (passages[i].available_at is None, passages[i].available_at or "", passages[i].id),
        )
        self.passages = [passages[i] for i in order]
        self.vectors = np.ascontiguousarray(vectors[order]) if vectors is not None else None
        self.embedder = embedder
        self.tickers = [frozenset(tickers[i] or ()) for i in order] if tickers is not None else None
        self.corpus = corpus
        self.alpha = check_alpha(alpha)
        self._row = {p.id: i for i, p in enumerate(self.passages)}
        self._available = [p.available_at for p in self.passages if p.available_at is not None]
        self._build_terms(tokenize([p.text for p in self.passages]))

    def _build_terms(self, tokens: list[list[str]]) -> None:
        from scipy.sparse import csc_matrix

        vocab: dict[str, int] = {}
        rows, cols = [], []
        for i, toks in enumerate(tokens):
            for t in toks:
                cols.append(vocab.setdefault(t, len(vocab)))
            rows.extend([i] * len(toks))
        data = np.ones(len(rows), dtype=np.float32)
        self.vocab = vocab
        self.terms = csc_matrix(
            (data, (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
            shape=(len(tokens), max(len(vocab), 1)),
            dtype=np.float32,
        )
        self.terms.sum_duplicates()  # counts per (chunk, term)
        self.lengths = np.asarray([len(t) for t in tokens], dtype=np.float64)

    def __len__(self) -> int:
        return len(self.passages)

    # ------------------------------------------------------------------ loading from the graph

    @classmethod
    def from_graph(
        cls,
        graph: Graph,
        embedder: Embedder | None,
        corpus: str | None = None,
        kinds: Sequence[str] | None = ("text",),
        families: Sequence[str] | None = None,
        page: int = 20_000,
        batch_size: int = 500,
        progress: Tick | None = None,
    ) -> HybridIndex:
        """The chunks of ``corpus`` (``Chunk.corpus``; None: any) of ``kinds`` (None: any) and source
        ``families`` (None: any), with their embeddings from ``embedder``: stored ones are read from
        ``Chunk.embedding`` (when ``Chunk.embedding_model`` is the embedder's identity), the others are
        encoded (``progress(n)`` per batch) and written back; the vector index is ensured. The corpus's
        stored alpha (:func:`read_alpha`) becomes the default alpha.

        Raises:
            HybridError: no chunk matches.
        """
        model = embedder.identity if embedder is not None else ""
        rows: list[dict[str, Any]] = []
        after = ""
        params = {
            "corpus": corpus,
            "kinds": list(kinds) if kinds else None,
            "families": list(families) if families else None,
            "model": model,
            "limit": page,
        }
        while got := graph.read(cypher.HYBRID_CHUNKS_PAGE, {**params, "after": after}):
            rows.extend(got)
            after = got[-1]["id"]
        if not rows:
            raise HybridError(
                f"no chunks in the graph for corpus={corpus!r} kinds={kinds!r} families={families!r}: ingest text first"
            )
        passages = [
            Passage(r["id"], r["text"] or "", r["document"] or "", r["source_family"] or "", r["available_at"])
            for r in rows
        ]
        vectors = None
        if embedder is not None:
            vectors = chunk_vectors(graph, passages, [r["embedding"] for r in rows], embedder, batch_size, progress)
        stored = read_alpha(graph, corpus) if corpus else None
        return cls(
            passages,
            vectors,
            embedder,
            [r["tickers"] or () for r in rows],
            corpus,
            stored["hybrid_alpha"] if stored and stored.get("hybrid_alpha") is not None else DEFAULT_ALPHA,
        )

    # ------------------------------------------------------------------ the candidate pool

    def pool(
        self,
        as_of: datetime | str | None = None,
        chunk_ids: Iterable[str] | None = None,
        documents: Iterable[str] | None = None,
        families: Iterable[str] | None = None,
        tickers: Iterable[str] | None = None,
    ) -> np.ndarray:
        """Row numbers (ascending) of the candidate pool: available by ``as_of`` and passing every given
        restriction (None: no restriction; an empty collection: nothing passes).

        Raises:
            HybridError: ``as_of`` is naive.
        """
        end = len(self.passages)
        if as_of is not None:
            cutoff = as_of if isinstance(as_of, str) else iso_as_of(as_of)
            end = bisect.bisect_right(self._available, cutoff)  # unknown times sort last
        if chunk_ids is not None:
            rows = np.asarray(
                sorted(r for c in set(chunk_ids) if (r := self._row.get(c)) is not None and r < end), dtype=np.int64
            )
        else:
            rows = np.arange(end, dtype=np.int64)
        keep: list[Callable[[int], bool]] = []
        if documents is not None:
            docs = frozenset(documents)
            keep.append(lambda i: self.passages[i].document in docs)
        if families is not None:
            fams = frozenset(families)
            keep.append(lambda i: self.passages[i].source_family in fams)
        if tickers is not None:
            want = frozenset(tickers)
            have = self.tickers or [frozenset()] * len(self.passages)
            keep.append(lambda i: bool(have[i] & want))
        if keep:
            rows = np.asarray([i for i in rows.tolist() if all(f(i) for f in keep)], dtype=np.int64)
        return rows

    # ------------------------------------------------------------------ scoring (pool rows only)

    def bm25(self, query: str | Sequence[str], rows: np.ndarray) -> np.ndarray:
        """BM25 of each pool row for ``query`` (a string, or its tokens), with the pool's statistics
        (N = pool size, df and avgdl over the pool; see the module doc). Shape ``(len(rows),)``."""
        rows = np.asarray(rows, dtype=np.int64)
        scores = np.zeros(len(rows), dtype=np.float64)
        if len(rows) == 0:
            return scores
        tokens = tokenize([query])[0] if isinstance(query, str) else list(query)
        cols = sorted({self.vocab[t] for t in tokens if t in self.vocab})
        if not cols:
            return scores
        prefix = bool(rows[-1] == len(rows) - 1)  # rows == arange(n): an as-of cut alone
        position = None
        if not prefix:
            position = np.full(len(self.passages), -1, dtype=np.int64)
            position[rows] = np.arange(len(rows))
        lengths = self.lengths[rows] if not prefix else self.lengths[: len(rows)]
        avgdl = float(lengths.mean()) or 1.0
        n = len(rows)
        for c in cols:
            start, stop = self.terms.indptr[c], self.terms.indptr[c + 1]
            docs, tf = self.terms.indices[start:stop], self.terms.data[start:stop].astype(np.float64)
            if prefix:
                inside = docs < n
                where = docs[inside]
            else:
                assert position is not None  # set above when not prefix
                where = position[docs]
                inside = where >= 0
                where = where[inside]
            tf = tf[inside]
            df = len(where)
            if df == 0:
                continue
            idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
            dl = lengths[where]
            scores[where] += idf * tf / (tf + BM25_K1 * (1.0 - BM25_B + BM25_B * dl / avgdl))
        return scores

    def encode(self, query: str) -> np.ndarray:
        """The query's unit vector ``(d,)``.

        Raises:
            HybridError: the index has no embedder or no vectors.
        """
        if self.embedder is None or self.vectors is None:
            raise HybridError("dense scoring needs chunk embeddings and an embedder ([embedding] model_path)")
        return self.embedder.encode([query])[0]

    def dense(self, qvec: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Cosine of each pool row's embedding with the unit query vector ``qvec``, ``(len(rows),)``."""
        if self.vectors is None:
            raise HybridError("dense scoring needs chunk embeddings ([embedding] model_path)")
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) == 0:
            return np.zeros(0)
        block = self.vectors[: len(rows)] if rows[-1] == len(rows) - 1 else self.vectors[rows]
        return (block @ np.asarray(qvec, dtype=np.float32)).astype(np.float64)

    def score_pool(self, query: str, rows: np.ndarray, qvec: np.ndarray | None = None) -> PoolScores:
        """BM25 and cosine of every pool row for ``query`` (``qvec``: its vector, encoded if None)."""
        qvec = self.encode(query) if qvec is None else qvec
        return PoolScores(np.asarray(rows, dtype=np.int64), self.bm25(query, rows), self.dense(qvec, rows))

    def hits(
        self,
        query: str,
        k: int = 10,
        alpha: float | None = None,
        fusion: Fusion = "minmax",
        as_of: datetime | str | None = None,
        chunk_ids: Iterable[str] | None = None,
        documents: Iterable[str] | None = None,
        families: Iterable[str] | None = None,
        tickers: Iterable[str] | None = None,
        qvec: np.ndarray | None = None,
        rrf_k: int = RRF_K,
    ) -> list[Hit]:
        """The ``k`` best chunks of the candidate pool for ``query``, best first.

        Args:
            query: the query text. k: hits wanted (>= 0).
            alpha: the dense weight (None: the index's default, the corpus's swept alpha or 0.5);
                0 ranks by BM25 alone, 1 by cosine alone (ties by pool order).
            fusion: ``minmax`` (seed 002 eq. 1 on min-max normalized scores) or ``rrf``.
            as_of: timezone-aware (or an ISO UTC cutoff string); chunks available later (or of unknown
                time) are never scored; None: no time restriction (evaluation on undated corpora only:
                the paths that serve an answer call :meth:`search`, which requires it).
            chunk_ids, documents, families, tickers: restrictions applied before scoring.
            qvec: the query's unit vector when already encoded.

        Returns:
            Up to ``k`` hits (fewer when the pool is smaller; none for an empty pool).

        Raises:
            HybridError: a naive ``as_of``, alpha outside [0, 1], an unknown fusion, k < 0, or no
                embeddings.
        """
        if k < 0:
            raise HybridError(f"k {k}: must be >= 0")
        rows = self.pool(as_of, chunk_ids, documents, families, tickers)
        if len(rows) == 0 or k == 0:
            return []
        pool = self.score_pool(query, rows, qvec)
        fused = pool.fused(self.alpha if alpha is None else alpha, fusion, rrf_k)
        top = top_k(fused, k)
        return [
            Hit(
                self.passages[int(rows[j])],
                float(fused[j]),
                float(pool.sparse[j]),
                float(pool.dense[j]),
                float(pool.sparse_norm[j]),
                float(pool.dense_norm[j]),
                r + 1,
            )
            for r, j in enumerate(top)
        ]

    def search(
        self,
        query: str,
        *,
        as_of: AsOf | None,
        k: int | None = None,
        filters: Mapping[str, Any] | None = None,
        alpha: float | None = None,
        fusion: Fusion = "minmax",
    ) -> list[Evidence]:
        """The :class:`retrieval.contract.Retriever` contract: :meth:`hits` as of ``as_of`` as :class:`Evidence`
        (kind ``chunk``; ``source_key`` the document; fused score, BM25, cosine and rank in ``metadata``).

        Args:
            as_of: a date (its end, UTC), an aware datetime or an ISO string; chunks available later, or
                of unknown time, are removed before scoring. k: hits (default 10).
            filters: restrictions applied before scoring: ``chunk_ids``, ``documents``, ``families``
                (source families), ``tickers``.
            alpha, fusion: as :meth:`hits`.

        Raises:
            AsOfRequired: ``as_of`` is None. HybridError: an unknown filter (or as :meth:`hits`).
        """
        cutoff = as_of_cutoff(as_of)
        given = dict(filters or {})
        unknown = sorted(set(given) - set(FILTERS))
        if unknown:
            raise HybridError(f"unknown hybrid filter(s) {unknown}; known: {', '.join(FILTERS)}")
        found = self.hits(
            query,
            10 if k is None else k,
            alpha,
            fusion,
            as_of=cutoff,
            chunk_ids=given.get("chunk_ids"),
            documents=given.get("documents"),
            families=given.get("families"),
            tickers=given.get("tickers"),
        )
        return [
            Evidence(
                id=h.passage.id,
                text=h.passage.text,
                score=h.score,
                kind="chunk",
                source_key=h.passage.document or h.passage.id,
                available_at=h.passage.available_at,
                source_family=h.passage.source_family or None,
                metadata={
                    "retriever": "hybrid",
                    "fusion": fusion,
                    "sparse": h.sparse,
                    "dense": h.dense,
                    "rank": h.rank,
                },
            )
            for h in found
        ]


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` highest scores, best first, ties by position."""
    scores = np.asarray(scores, dtype=np.float64)
    k = min(k, len(scores))
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    part = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    # ties at the cut: argpartition may pick any; take all entries >= the k-th score, then sort
    cut = scores[part].min()
    part = np.flatnonzero(scores >= cut)
    return part[np.lexsort((part, -scores[part]))][:k]


# ---------------------------------------------------------------------- embeddings and the corpus alpha


def chunk_vectors(
    graph: Graph,
    passages: Sequence[Passage],
    stored: Sequence[Sequence[float] | None],
    embedder: Embedder,
    batch_size: int = 500,
    progress: Tick | None = None,
) -> np.ndarray:
    """The chunks' unit embeddings ``(n, d)`` float32: ``stored[i]`` when it has the embedder's
    dimension (the caller read it for the embedder's identity), else encoded now and written to
    ``Chunk.embedding`` / ``Chunk.embedding_model`` in batches of ``batch_size``; the vector index
    :data:`VECTOR_INDEX` is created if absent (idempotent)."""
    vectors, todo = stored_vectors(stored, embedder.dimensions)
    if todo:
        vectors[todo] = embedder.encode([passages[i].text for i in todo], progress=progress)
        BatchWriter(graph, batch_size=batch_size).run_batches(
            cypher.SET_CHUNK_EMBEDDINGS,
            [{"id": passages[i].id, "vector": vectors[i].tolist()} for i in todo],
            {"model": embedder.identity},
        )
    ensure_vector_index(graph, embedder.dimensions)
    return vectors


def ensure_vector_index(graph: Graph, dimensions: int) -> None:
    """Create the cosine vector index :data:`VECTOR_INDEX` on ``Chunk.embedding`` if absent
    (``CREATE VECTOR INDEX ... IF NOT EXISTS``, through :func:`kg.cypher.create_index`)."""
    graph.run_autocommit(
        cypher.create_index(VECTOR_INDEX, "vector", "Chunk", ["embedding"], dimensions=dimensions, similarity="cosine")
    )


def store_alpha(
    graph: Graph,
    corpus: str,
    alpha: float,
    metric: str,
    queries: int,
    score: float,
    step: float,
    swept_at: datetime | None = None,
    embedding_model: str = "",
) -> None:
    """Record a corpus's swept alpha on ``(:Corpus {name})`` (MERGE through :class:`kg.BatchWriter`):
    ``hybrid_alpha``, ``hybrid_alpha_metric`` (e.g. ``ndcg@10``), ``hybrid_alpha_queries`` (labelled
    queries), ``hybrid_alpha_score`` (the metric at that alpha), ``hybrid_alpha_step``,
    ``hybrid_alpha_swept_at`` (ISO UTC), ``hybrid_alpha_embedding_model``.

    Raises:
        HybridError: alpha outside [0, 1] or an empty corpus name.
    """
    if not corpus:
        raise HybridError("a corpus name is required to store its alpha")
    check_alpha(alpha)
    moment = swept_at or datetime.now(UTC)
    BatchWriter(graph).merge_nodes(
        "Corpus",
        [
            {
                "name": corpus,
                "hybrid_alpha": float(alpha),
                "hybrid_alpha_metric": metric,
                "hybrid_alpha_queries": int(queries),
                "hybrid_alpha_score": float(score),
                "hybrid_alpha_step": float(step),
                "hybrid_alpha_swept_at": iso_as_of(moment),
                "hybrid_alpha_embedding_model": embedding_model,
            }
        ],
        key="name",
    )


def read_alpha(graph: Graph, corpus: str) -> dict[str, Any] | None:
    """The ``hybrid_alpha*`` properties of ``(:Corpus {name: corpus})`` (None: no such corpus node)."""
    rows = graph.read(cypher.READ_CORPUS_ALPHA, {"name": corpus})
    return rows[0]["props"] if rows else None
