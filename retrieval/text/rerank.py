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
  - a cross-encoder finkg trains itself (:func:`train_cross_encoder`) from a sentence-transformers encoder
    directory (all-MiniLM-L6-v2: its BERT body plus a fresh one-logit head) on real question-evidence pairs,
    binary cross-entropy with graded targets (see :func:`training_pairs`), saved as a ``CrossEncoder``
    directory. finkg trains it on the training half of TAT-QA's dev split (split by context,
    :func:`ingest.datasets.tatqa.split_contexts`) so that no evaluation context is seen in training;
    ``finkg rerank train`` runs it (on a GPU when one is visible);
  - :class:`LLMJudgeReranker`, the configured LLM grading each (question, passage) 0-3
    (``[rerank] backend = "llm"``).
  ``finkg eval retrieval --rerank`` measures either (NDCG@10 with and without it, and each reranked
  question's top-20, gains and scores in ``retrieval_eval.json``).

**The default is no reranking, by measurement** (TAT-QA evaluation half, hybrid alpha 0.5, top-20 reranked,
seeded question samples; the hybrid figure is on the same sample):

=====================================================================  =========  ======  ========
reranker                                                               questions  hybrid  + rerank
=====================================================================  =========  ======  ========
finkg cross-encoder: 200 training questions, 1,072 pairs, 1 epoch      100        0.5456  0.2488
finkg cross-encoder: all 834 training questions, 5,271 pairs, 1 epoch  100        0.5456  0.2747
the same 834-question cross-encoder                                    40         0.4952  0.3001
Qwen2.5-Coder-1.5B judge (Q4_K_M, llama.cpp)                           40         0.4952  0.4586
=====================================================================  =========  ======  ========

A random order of the same top-20 gives 0.2208 on the 100 questions: the cross-encoders learned little
beyond "a table is more relevant than a paragraph" (the 834-question model scores tables about 0.43 and
paragraphs about 0.15 whatever the question; 26 min of training on 2 cores shared with a test run). The
judge lowers NDCG@10 on 21 of the 40 questions and raises it on 16 (mean change -0.037, standard error
0.026): it grades the 50 evidence passages 2.2 on average and the 685 passages of other contexts 0.8, but
grades 233 of those 2 or 3, and they then outrank evidence. It costs 20 LLM calls per question (about 35 s a
question at 2 threads, with the shared prompt prefix reused). Reproduce::

    finkg rerank train ../shared/data/tatqa/tatqa_dataset_dev.json --max-questions 0 --negatives 4
    FINKG_RERANK_MODEL_PATH=~/.cache/finkg/models/finkg-reranker-minilm \
        finkg eval retrieval ../shared/data/tatqa/tatqa_dataset_dev.json --rerank --rerank-queries 100
    FINKG_RERANK_BACKEND=llm FINKG_LLM_BACKEND=llama-cpp FINKG_LLM_MODEL_PATH=<qwen gguf> \
        finkg eval retrieval ../shared/data/tatqa/tatqa_dataset_dev.json --rerank-queries 40

- :func:`select_documents`: the paper's optional LLM document selection (section 4.3, appendix A.2 prompt)
  over the top-10, given any ``ask(prompt) -> answer`` callable (the retrieval layer imports no LLM code);
  tested with SmolLM2; no pipeline turns it on yet.

So ``[rerank] model_path`` is unset by default; set it to a real cross-encoder (a bge-reranker-v2-m3
directory, as in the paper) or to a better-trained finkg model, and keep it only if
``finkg eval retrieval --rerank`` shows a gain.
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
from kg.progress import Tick

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
                "`finkg rerank train`, or point it at a local cross-encoder)"
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
            "local cross-encoder directory, or train one with `finkg rerank train`"
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


# ---------------------------------------------------------------------- training finkg's own cross-encoder


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
    """Pairs for :func:`train_cross_encoder` from graded questions.

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


def train_cross_encoder(
    pairs: Sequence[TrainingPair],
    base_model: Path | str,
    out_dir: Path | str,
    epochs: int = 1,
    batch_size: int = 16,
    learning_rate: float = 5e-5,
    max_length: int = 192,
    seed: int = 0,
    threads: int | None = None,
    device: str | None = None,
    progress: Tick | None = None,
) -> Path:
    """Fine-tune a cross-encoder (one logit, binary cross-entropy on the pairs' targets) from ``base_model``
    and save it as a sentence-transformers ``CrossEncoder`` directory ``out_dir``.

    AdamW, linear warm-up over the first 10% of steps then linear decay, shuffled with ``seed``
    (torch seeded too, so a rerun on one machine gives the same weights). ``progress(n)`` after each batch
    of ``n`` pairs.

    Args:
        pairs: the training pairs (non-empty). base_model: a local encoder directory (e.g. all-MiniLM-L6-v2).
        out_dir: where the model is saved (created). threads: torch CPU threads (None: unchanged).
        device: torch device (None: ``cuda`` when one is visible, else ``cpu``); the weights are trained
            in float32 whatever the base model's stored dtype.

    Returns:
        ``out_dir``.

    Raises:
        RerankModelError: ``base_model`` is not a directory or does not load.
        ValueError: no pairs, or epochs / batch_size < 1.
    """
    import torch
    from sentence_transformers import CrossEncoder

    if not pairs:
        raise ValueError("no training pairs")
    if epochs < 1 or batch_size < 1:
        raise ValueError(f"epochs ({epochs}) and batch_size ({batch_size}) must be >= 1")
    base = Path(base_model).expanduser()
    if not base.is_dir():
        raise RerankModelError(f"[rerank] base_model {base}: not a directory")
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(seed)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    try:
        model = CrossEncoder(str(base), num_labels=1, max_length=max_length, device=device)
    except Exception as exc:
        raise RerankModelError(f"[rerank] base_model {base}: cannot load it as a cross-encoder ({exc})") from exc
    encoder: Any = model.model  # a transformers module (typed Optional in the stubs)
    net: Any = encoder.float()
    tok: Any = model.tokenizer
    net.train()
    steps = epochs * ((len(pairs) + batch_size - 1) // batch_size)
    optim = torch.optim.AdamW(net.parameters(), lr=learning_rate, weight_decay=0.01)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        optim, lambda s: (s + 1) / warm if s < warm else max(0.0, (steps - s) / max(1, steps - warm))
    )
    loss_fn = torch.nn.BCEWithLogitsLoss()
    rng = random.Random(seed)
    for _ in range(epochs):
        order = list(range(len(pairs)))
        rng.shuffle(order)
        for start in range(0, len(order), batch_size):
            batch = [pairs[i] for i in order[start : start + batch_size]]
            enc = tok(
                [p.query for p in batch],
                [p.passage for p in batch],
                truncation=True,
                max_length=max_length,
                padding=True,
                return_tensors="pt",
            ).to(device)
            logits = net(**enc).logits.view(-1)
            loss = loss_fn(logits, torch.tensor([p.label for p in batch], dtype=torch.float32, device=device))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            optim.step()
            sched.step()
            optim.zero_grad()
            if progress:
                progress(len(batch))
    net.eval()
    out = Path(out_dir).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    model.save(str(out))
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
