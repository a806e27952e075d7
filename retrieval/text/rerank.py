"""Reranking of the top retrieved passages behind one interface, and the two offline rerankers.

Source: ../shared/seeds/002_9c24ef5b42924291.txt, section 3.3 ("Reranking": a cross-encoder scores each
(query, document) pair of the top-K) and section 4.3 ("We utilized the top-20 retrieval results ... as the
reranking target", evaluated by NDCG@10; the paper's rerankers are bge-reranker-v2-m3 and voyage-rerank-2).

- :class:`Reranker`: ``score(query, passages) -> scores`` (higher is more relevant) and
  :meth:`Reranker.rerank`, which reorders the first ``top_n`` (20) hits by those scores and keeps the
  rest after them.
- :class:`CrossEncoderReranker`: a local model directory, loaded with FlagEmbedding's ``FlagReranker``
  when the directory name holds "bge" (the bge-reranker family), else sentence-transformers'
  ``CrossEncoder``. Nothing is downloaded; a missing directory raises :class:`RerankModelError` naming it.
- Two offline rerankers, because no reranker weights can be fetched here:
  - a cross-encoder finkg trains itself (``finkg train reranker``, :mod:`finkg.train.reranker`): an encoder
    body (the configured MiniLM, tuned or not) with a fresh one-logit head, trained with
    sentence-transformers' ``CrossEncoderTrainer`` on TAT-QA training-half pairs from :func:`training_pairs`
    (evidence 1.0, the context's other chunks 0.5, hard negatives mined by the embedder 0.0), measured in the
    same run against the hybrid order and a random order of the same top-20;
  - :class:`LLMJudgeReranker`, the configured LLM grading each (question, passage) 0-3
    (``[rerank] backend = "llm"``).
  ``finkg eval retrieval --rerank`` measures either (NDCG@10 with and without it, and each reranked
  question's top-20, gains and scores in ``retrieval_eval.json``).

**The default is no reranking, by measurement**, unless ``finkg train reranker`` finds reranking better than
the hybrid order (a paired 95 % interval above 0) and marks its model, which an unset ``[rerank] model_path``
then resolves to. The measurement (``bench/results/train-reranker.json``, docs/fine-tuning.md): the retrained
MiniLM cross-encoder reorders the hybrid top-20 of the 834 evaluation-half questions to NDCG@10 0.259, against
0.528 in the hybrid's order and 0.206 in a random order: it scores tables above paragraphs whatever the
question. The LLM judge has no measured figure (its first figures were typed in from an earlier README and
retired); ``finkg eval retrieval --rerank`` with ``[rerank] backend = "llm"`` measures it.

- :func:`select_documents`: the paper's optional LLM document selection (section 4.3, appendix A.2 prompt)
  over the top-10, given any ``ask(prompt) -> answer`` callable (the retrieval layer imports no LLM code);
  tested with SmolLM2; no pipeline turns it on yet.

A real cross-encoder (a bge-reranker-v2-m3 directory, as in the paper) goes in ``[rerank] model_path``; keep
it only if ``finkg eval retrieval --rerank`` shows a gain.
"""

from __future__ import annotations

import random
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from kg.errors import ModelError

TOP_N = 20
H = TypeVar("H")


class RerankModelError(ModelError):
    """The configured reranker cannot be used; the message names the setting and the path."""


class Reranker(ABC):
    """Scores (query, passage) pairs; higher is more relevant.

    Attributes:
        name: a short description shown in tables (backend and model directory name).
    """

    name: str

    @abstractmethod
    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """One relevance score per passage, shape ``(len(passages),)`` float64 (empty for none)."""

    def rerank(self, query: str, hits: Sequence[H], text: Callable[[H], str], top_n: int = TOP_N) -> list[H]:
        """``hits`` with the first ``top_n`` reordered by :meth:`score` (descending, ties by the original
        order) and the rest unchanged after them (seed 002 §4.3: the top-20 are reranked).

        Args:
            hits: retrieved items, best first. text: the passage text of a hit. top_n: how many to rerank.
        """
        head, tail = list(hits[:top_n]), list(hits[top_n:])
        if not head:
            return tail
        scores = np.asarray(self.score(query, [text(h) for h in head]), dtype=np.float64)
        order = np.lexsort((np.arange(len(head)), -scores))
        return [head[i] for i in order] + tail


class CrossEncoderReranker(Reranker):
    """A cross-encoder from a local directory.

    Args:
        path: the model directory (a sentence-transformers CrossEncoder, a Hugging Face sequence
            classification model with one logit, or a bge-reranker directory).
        backend: ``auto`` (``flag`` when the directory name holds "bge", else ``cross-encoder``),
            ``cross-encoder`` or ``flag``.
        max_length: tokens per (query, passage) pair (longer pairs are truncated).
        batch_size: pairs per forward pass. device: torch device or None (the library's choice).

    Raises:
        RerankModelError: no such directory, an unknown backend, or a model that does not load.
    """

    def __init__(
        self,
        path: Path | str,
        backend: str = "auto",
        max_length: int = 256,
        batch_size: int = 32,
        device: str | None = None,
    ) -> None:
        path = Path(path).expanduser()
        if not path.is_dir():
            raise RerankModelError(
                f"[rerank] model_path {path}: not a directory (train one with "
                "`finkg train reranker`, or point it at a local cross-encoder)"
            )
        if backend == "auto":
            backend = "flag" if "bge" in path.name.lower() else "cross-encoder"
        if backend not in ("cross-encoder", "flag"):
            raise RerankModelError(f"[rerank] backend {backend!r}: expected auto, cross-encoder or flag")
        self.path, self.backend, self.batch_size = path, backend, batch_size
        try:
            if backend == "flag":
                from FlagEmbedding import FlagReranker

                self._model = FlagReranker(
                    str(path), use_fp16=False, devices=device, max_length=max_length, batch_size=batch_size
                )
            else:
                from sentence_transformers import CrossEncoder

                self._model = CrossEncoder(str(path), max_length=max_length, device=device)
        except Exception as exc:  # the libraries raise OSError, ValueError, KeyError ...
            raise RerankModelError(f"[rerank] model_path {path}: {backend} cannot load it ({exc})") from exc
        self.name = f"{backend}:{path.name}"

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        if not passages:
            return np.zeros(0)
        pairs = [(query, p) for p in passages]
        model: Any = self._model  # FlagReranker or CrossEncoder (their stubs disagree on the call's types)
        if self.backend == "flag":
            out = model.compute_score(pairs, batch_size=self.batch_size)
            return np.atleast_1d(np.asarray(out, dtype=np.float64))
        return np.asarray(
            model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False), dtype=np.float64
        ).reshape(-1)


def make_reranker(
    model_path: Path | str | None,
    backend: str = "auto",
    max_length: int = 256,
    batch_size: int = 32,
    device: str | None = None,
) -> CrossEncoderReranker:
    """The reranker ``[rerank]`` settings describe.

    Raises:
        RerankModelError: no path configured, or what :class:`CrossEncoderReranker` raises.
    """
    if not model_path:
        raise RerankModelError(
            "no reranker configured: set [rerank] model_path (or FINKG_RERANK_MODEL_PATH) to a "
            "local cross-encoder directory, or train one with `finkg train reranker`"
        )
    return CrossEncoderReranker(model_path, backend, max_length, batch_size, device)


# ---------------------------------------------------------------------- an LLM relevance judge

JUDGE_PROMPT = (
    "You grade how much a passage from a company's annual report helps to answer a financial question.\n"
    "Question: {query}\n"
    "Grades: 3 = the passage holds the figures or facts needed to answer; 2 = it holds part of them; "
    "1 = same subject, but it does not help to answer; 0 = unrelated.\n"
    "Passage: {passage}\n"
    'Answer with JSON only: {{"relevance": <0, 1, 2 or 3>}}'
)
"""The judge's prompt: the question comes before the passage, so the 20 prompts of one query share a prefix
that llama.cpp evaluates once (it keeps the previous prompt's tokens)."""

JUDGE_SCHEMA = {
    "type": "object",
    "properties": {"relevance": {"type": "integer", "minimum": 0, "maximum": 3}},
    "required": ["relevance"],
}
"""The judge's answer shape, for backends that constrain decoding to a schema."""

UNGRADED = 1.5
"""The score of a passage whose grade cannot be read from the answer: mid-scale, so it is neither promoted
nor buried (ties keep the retrieval order); the answer is recorded in :attr:`LLMJudgeReranker.ungraded`."""


class LLMJudgeReranker(Reranker):
    """A pointwise LLM relevance judge: each (query, passage) gets a grade 0-3 (:data:`JUDGE_PROMPT`, the
    graded relevance of seed 002 §4.2's NDCG), ties broken by the retrieval order.

    One of finkg's two offline rerankers (the other is its own cross-encoder); it costs one
    LLM call per passage (20 per query), so it is an evaluation option, not a default (see the module doc
    for the measurement).

    Args:
        ask: sends a prompt and returns the answer text (e.g. an ``LLMClient.chat`` wrapper with
            :data:`JUDGE_SCHEMA`; the retrieval layer imports no LLM code). An ``ask`` that raises stops
            the reranking (the caller's error).
        name: shown in tables (e.g. ``llm-judge:<model id>``). max_chars: passage characters shown
            (spaces collapsed within lines, empty lines dropped, so a table keeps one row a line), to keep
            each prompt well inside the context window.

    Attributes:
        ungraded: ``{"query", "passage", "answer"}`` for every answer with no readable grade (scored
            :data:`UNGRADED`).
    """

    def __init__(self, ask: Callable[[str], str], name: str = "llm-judge", max_chars: int = 1200) -> None:
        self.ask, self.name, self.max_chars = ask, name, max_chars
        self.ungraded: list[dict[str, object]] = []

    @staticmethod
    def grade(answer: str) -> int | None:
        """The grade in an answer: ``{"relevance": g}`` (also unquoted or with spaces), else a lone digit
        0-3; None when there is none."""
        found = re.search(r'relevance"?\s*[:=]\s*"?([0-3])\b', answer or "") or re.fullmatch(
            r"\s*([0-3])\s*\.?\s*", answer or ""
        )
        return int(found.group(1)) if found else None

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        out = np.zeros(len(passages))
        for i, passage in enumerate(passages):
            shown = "\n".join(" ".join(line.split()) for line in passage.splitlines() if line.strip())[: self.max_chars]
            answer = self.ask(JUDGE_PROMPT.format(query=query, passage=shown))
            g = self.grade(answer)
            if g is None:
                self.ungraded.append({"query": query, "passage": i, "answer": answer})
            out[i] = UNGRADED if g is None else g
        return out


# ---------------------------------------------------------------------- the pairs finkg's cross-encoder trains on


@dataclass(frozen=True)
class TrainingPair:
    """One (query, passage) pair and its target relevance in [0, 1]."""

    query: str
    passage: str
    label: float


def training_pairs(
    questions: Sequence[tuple[str, Mapping[str, int]]],
    texts: Mapping[str, str],
    hard_negatives: Callable[[str], Sequence[str]],
    negatives_per_query: int = 3,
    seed: int = 0,
) -> list[TrainingPair]:
    """Labelled pairs for training a cross-encoder (:mod:`finkg.train.reranker`) from graded questions.

    For each ``(question, gains)`` (gains: chunk id -> 2 for evidence, 1 for the same context's other
    chunks, see :func:`ingest.datasets.tatqa.question_gains`): every gain-2 chunk with target 1.0, one gain-1 chunk
    (if any, chosen at random) with target 0.5, and ``negatives_per_query`` gain-0 chunks with target 0.0,
    taken first from ``hard_negatives(question)`` (chunk ids, best first, e.g. BM25's top hits) then at
    random. Deterministic for a ``seed``.

    Raises:
        ValueError: a gain names a chunk missing from ``texts``.
    """
    rng = random.Random(seed)
    ids = sorted(texts)
    out: list[TrainingPair] = []
    for query, gains in questions:
        missing = [c for c in gains if c not in texts]
        if missing:
            raise ValueError(f"question {query!r}: relevant chunk {missing[0]} has no text")
        for cid in sorted(c for c, g in gains.items() if g >= 2):
            out.append(TrainingPair(query, texts[cid], 1.0))
        partial = sorted(c for c, g in gains.items() if g == 1)
        if partial:
            out.append(TrainingPair(query, texts[rng.choice(partial)], 0.5))
        negs = [c for c in hard_negatives(query) if c not in gains][:negatives_per_query]
        while len(negs) < negatives_per_query and len(ids) > len(gains) + len(negs):
            c = rng.choice(ids)
            if c not in gains and c not in negs:
                negs.append(c)
        out.extend(TrainingPair(query, texts[c], 0.0) for c in negs)
    return out


def rerank_hits(
    reranker: Reranker, query: str, hits: Sequence[H], text: Callable[[H], str], top_n: int = TOP_N
) -> list[H]:
    """:meth:`Reranker.rerank`, re-numbering ``rank`` fields of dataclass hits that have one."""
    out = reranker.rerank(query, hits, text, top_n)
    return [replace(h, rank=i + 1) if hasattr(h, "rank") else h for i, h in enumerate(out)]  # pyright: ignore[reportArgumentType]  # only dataclass hits have a rank field


# ---------------------------------------------------------------------- LLM document selection (optional)

SELECTION_PROMPT = (
    "You are an expert financial advisor and evaluator focused on improving responses.\n"
    "You are given the pair of Query, Corpus (same query). Out of the {n} documents, only provide the list of "
    "indices of those that are RELEVANT (e.g. the content is somehow needed to answer the question), from 0 to "
    "{last}. Example : [0, 2, 8, 9]\n\n"
    "Query : {query}\n"
    "{corpus}"
)
"""Seed 002 appendix A.2 ("Selection Agent Prompt"), the task part: the query and the numbered documents."""

SELECTION_SCHEMA = {"type": "array", "items": {"type": "integer", "minimum": 0}}
"""The answer's JSON shape, for backends that constrain decoding to a schema."""


@dataclass(frozen=True)
class Selection:
    """What :func:`select_documents` kept.

    Attributes:
        indices: positions (0-based, ascending, unique) of the kept documents.
        raw: the LLM's answer. parsed: an index list was found in it (else every document is kept).
        dropped: indices the answer named that do not exist (ignored).
    """

    indices: tuple[int, ...]
    raw: str
    parsed: bool
    dropped: tuple[int, ...] = ()


def select_documents(
    ask: Callable[[str], str], query: str, passages: Sequence[str], top: int = 10, max_chars: int = 800
) -> Selection:
    """LLM document selection (seed 002 §3.3 "Document Selection", §4.3 "Selection Agent": the top-10
    retrieved documents, the LLM keeps those needed to answer; prompt from appendix A.2).

    Args:
        ask: sends a prompt to the LLM and returns its answer text (e.g. an ``LLMClient.chat`` wrapper;
            the retrieval layer imports no LLM code).
        query: the question. passages: retrieved texts, best first; the first ``top`` are shown, each
            cut to ``max_chars`` characters.

    Returns:
        The kept indices (into ``passages[:top]``). An answer without a ``[i, j, ...]`` list keeps every
        shown document (``parsed`` False): selection may only remove what the model clearly rejects.
    """
    shown = list(passages[:top])
    if not shown:
        return Selection((), "", True)
    corpus = "\n".join(f"Corpus #{i} : {' '.join(p.split())[:max_chars]}" for i, p in enumerate(shown))
    raw = ask(SELECTION_PROMPT.format(n=len(shown), last=len(shown) - 1, query=query, corpus=corpus))
    found = re.search(r"\[\s*((?:\d+\s*,\s*)*\d*)\s*\]", raw or "")
    if found is None:
        return Selection(tuple(range(len(shown))), raw or "", False)
    named = [int(x) for x in re.findall(r"\d+", found.group(1))]
    kept = tuple(sorted({i for i in named if i < len(shown)}))
    return Selection(kept, raw, True, tuple(sorted({i for i in named if i >= len(shown)})))
