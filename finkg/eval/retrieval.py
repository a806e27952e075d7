"""NDCG@10 of BM25, dense, hybrid and hybrid + rerank on TAT-QA, the alpha sweep, and the rankers that mine hard
negatives for training.

Source: ../shared/seeds/002_9c24ef5b42924291.txt: section 4.2 (NDCG@10), 4.3 and 5.4 (alpha swept from 0
to 1 in steps of 0.025, the best NDCG@10 designates the corpus's alpha; TAT-QA is one of the paper's seven
datasets, optimal alpha 0.5 there), 4.3 and 5.5 (the top-20 reranked, evaluated by NDCG@10).

**Data and split.** TAT-QA's dev file (the only split here) is split **by context**
(:func:`ingest.datasets.tatqa.split_contexts`, seed 0): the training half trains finkg's embedder and
cross-encoder (:mod:`finkg.train.embedder`, :mod:`finkg.train.reranker`), the evaluation half is the retrieval
corpus: every table and paragraph of its contexts is a (:Chunk) of the corpus ``tatqa-dev-eval`` in Neo4j
(:func:`ingest_corpus`), and its questions are the queries. No evaluation context, paragraph or question is seen in training.

**Relevance and NDCG.** For a question, its own context's evidence (the table when ``answer_from`` is
table or table-text, the paragraphs in ``rel_paragraphs``) has gain 2, the context's other chunks gain 1,
everything else 0 (:func:`ingest.datasets.tatqa.question_gains`). NDCG@10 is rank-based with the paper's linear gain
(seed 002 §4.2): ``DCG@10 = sum_{i=1..10} gain(doc at rank i) / log2(i + 1)``; the ideal DCG is the same sum
over the question's gains sorted in descending order (all its relevant chunks, not only the retrieved
ones), cut at 10; NDCG = DCG / IDCG (0 when IDCG is 0), averaged over questions.

**Systems** (one candidate pool: the whole corpus; TAT-QA has no dates, so no as-of cut): ``bm25``
(alpha = 0), ``dense`` (alpha = 1, MiniLM cosine), ``hybrid@0.5`` (seed 000's equal weights), ``hybrid``
(the swept alpha, stored on ``(:Corpus {name})``; chosen on these same queries, as the paper's Table 6 is),
``hybrid-rrf`` (no tuned parameter), and ``hybrid+rerank`` (the hybrid top-20 reordered by the
reranker; on a seeded sample of questions when ``rerank_queries`` is set, with ``hybrid`` on the same
sample beside it, and ``hybrid+shuffled``, the same top-20 in a seeded random order: the control a reranker
must beat to have learned anything).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from finkg import plots
from finkg.eval.metrics.intervals import bootstrap_mean, paired_bootstrap_difference
from finkg.eval.results import write_result
from ingest.datasets.tatqa import (
    TatqaContext,
    corpus_rows,
    question_gains,
    read_tatqa,
    split_contexts,
)
from kg import BatchWriter, Graph
from kg.errors import EvaluationError
from kg.progress import StageProgress
from retrieval.embeddings import Embedder
from retrieval.text.hybrid import HybridIndex, PoolScores, check_alpha, store_alpha, top_k
from retrieval.text.rerank import JUDGE_SCHEMA, LLMJudgeReranker, Reranker

CORPUS = "tatqa-dev-eval"
K = 10
STEP = 0.025


class RetrievalEvalError(EvaluationError):
    """The evaluation cannot run (no questions, an empty corpus, a bad step); the message says why."""


@dataclass(frozen=True)
class LabelledQuery:
    """A query with graded relevance: ``uid``, ``text``, ``gains`` (chunk id -> gain > 0)."""

    uid: str
    text: str
    gains: Mapping[str, int]


def dcg(gains: Sequence[float], k: int = K) -> float:
    """``sum_{i=1..k} gains[i-1] / log2(i + 1)`` (the first ``k`` gains, in rank order)."""
    return float(sum(g / math.log2(i + 2) for i, g in enumerate(list(gains)[:k])))


def ndcg_at_k(ranked: Sequence[str], gains: Mapping[str, float], k: int = K) -> float:
    """NDCG@k of one ranking (see the module doc): DCG of ``ranked``'s gains over the ideal DCG of all of
    ``gains`` sorted descending; 0.0 when nothing is relevant.

    Raises:
        ValueError: k < 1.
    """
    if k < 1:
        raise ValueError(f"k {k}: must be >= 1")
    ideal = dcg(sorted(gains.values(), reverse=True), k)
    return dcg([gains.get(c, 0) for c in ranked], k) / ideal if ideal > 0 else 0.0


def evidence(gains: Mapping[str, float]) -> set[str]:
    """The question's evidence: its chunks of the highest gain (gain 2, see the module doc)."""
    top = max(gains.values(), default=0)
    return {c for c, g in gains.items() if g == top and g > 0}


def recall_at_k(ranked: Sequence[str], gains: Mapping[str, float], k: int = K) -> float:
    """Recall@k: the share of the question's evidence (:func:`evidence`) among the first ``k`` of ``ranked``
    (seed 002 appendix, Table 10); 0.0 when it has none."""
    gold = evidence(gains)
    return len(gold & set(ranked[:k])) / len(gold) if gold else 0.0


def reciprocal_rank(ranked: Sequence[str], gains: Mapping[str, float], k: int = K) -> float:
    """1 / the rank of the first evidence chunk within the first ``k`` of ``ranked``, else 0.0; its mean over
    questions is MRR@k (seed 002 appendix, Table 10)."""
    gold = evidence(gains)
    return next((1.0 / (i + 1) for i, c in enumerate(ranked[:k]) if c in gold), 0.0)


def alphas(step: float = STEP) -> list[float]:
    """``0, step, 2 step, ..., 1`` (rounded to 6 decimals).

    Raises:
        RetrievalEvalError: ``step`` not in (0, 1] or not dividing 1.
    """
    n = round(1.0 / step) if step > 0 else 0
    if not 0 < step <= 1 or abs(n * step - 1.0) > 1e-9:
        raise RetrievalEvalError(f"alpha step {step}: must lie in (0, 1] and divide 1 (e.g. 0.025)")
    return [round(i * step, 6) for i in range(n + 1)]


def sweep_alpha(
    pools: Sequence[PoolScores], ids: Sequence[str], queries: Sequence[LabelledQuery], step: float = STEP, k: int = K
) -> tuple[float, float, list[dict[str, float]]]:
    """Mean NDCG@k for each alpha of :func:`alphas` (seed 002 §4.3, §5.4).

    Args:
        pools: each query's :class:`PoolScores` (rows index ``ids``). ids: chunk id per index row.

    Returns:
        ``(best alpha, its mean NDCG@k, [{"alpha", "ndcg"}...])``; ties go to the smallest alpha.

    Raises:
        RetrievalEvalError: no queries, or pools and queries of different lengths.
    """
    if not queries or len(pools) != len(queries):
        raise RetrievalEvalError(f"{len(queries)} queries for {len(pools)} scored pools: need one pool per query, >= 1")
    curve = []
    for a in alphas(step):
        scores = [
            ndcg_at_k([ids[int(p.rows[j])] for j in top_k(p.fused(a), k)], q.gains, k) for p, q in zip(pools, queries)
        ]
        curve.append({"alpha": a, "ndcg": float(np.mean(scores))})
    best = max(curve, key=lambda r: (r["ndcg"], -r["alpha"]))
    return best["alpha"], best["ndcg"], curve


TRAIN_CORPUS = "tatqa-dev-train"


def tatqa_queries(
    path: Path, seed: int = 0, train_corpus: str = TRAIN_CORPUS, eval_corpus: str = CORPUS
) -> tuple[list[TatqaContext], list[TatqaContext], list[LabelledQuery], list[LabelledQuery]]:
    """TAT-QA split by context, with the labelled questions of each half (gains keyed by the chunk ids of
    ``train_corpus`` and ``eval_corpus``, :func:`ingest.datasets.tatqa.scoped_id`).

    Returns:
        ``(train contexts, evaluation contexts, train queries, evaluation queries)``.
    """
    contexts = read_tatqa(path)
    train, held = split_contexts(contexts, seed)

    def labelled(half: Sequence[TatqaContext], corpus: str) -> list[LabelledQuery]:
        return [LabelledQuery(q.uid, q.question, question_gains(c, q, corpus)) for c in half for q in c.questions]

    return train, held, labelled(train, train_corpus), labelled(held, eval_corpus)


def ingest_corpus(
    graph: Graph, contexts: Sequence[TatqaContext], corpus: str, source: str, stage: StageProgress | None = None
) -> dict[str, int]:
    """Write the contexts as a retrieval corpus (:func:`ingest.datasets.tatqa.corpus_rows`) through
    :class:`kg.BatchWriter`; idempotent (deterministic ids). Returns created counts per part."""
    rows = corpus_rows(contexts, corpus, source)
    w = BatchWriter(graph, batch_size=1000)
    tick = (lambda name, n: stage(name, n)) if stage else (lambda name, n: None)
    out = {
        "corpus": w.merge_nodes("Corpus", rows["corpus"], key="name").created,
        "documents": w.merge_nodes(
            "Document", rows["documents"], key="id", progress=tick("documents", len(rows["documents"]))
        ).created,
        "chunks": w.merge_nodes(
            "Chunk", rows["chunks"], key="id", progress=tick("chunks", len(rows["chunks"]))
        ).created,
    }
    w.merge_relationships("HAS_DOCUMENT", rows["has_document"], start=("Corpus", "name"), end=("Document", "id"))
    w.merge_relationships("HAS_CHUNK", rows["has_chunk"], start=("Document", "id"), end=("Chunk", "id"))
    return out


def evaluate(
    graph: Graph,
    path: Path,
    embedder: Embedder,
    reranker: Reranker | None = None,
    rerank_queries: int | None = 100,
    seed: int = 0,
    step: float = STEP,
    store: bool = True,
    corpus: str = CORPUS,
    stage: StageProgress | None = None,
) -> dict[str, Any]:
    """The TAT-QA retrieval evaluation end to end (see the module doc): ingest the evaluation half, embed
    its chunks (stored on the chunks), score every question's pool once, sweep alpha (stored on the corpus
    node when ``store``), and NDCG@10 per system.

    Returns:
        ``{"rows": [{"system", "ndcg@10", "ci_low", "ci_high", "queries", "note"}] (95 % bootstrap interval
        over the questions), "differences": [{"system", "baseline", "mean", "ci_low", "ci_high", "n"}] (paired
        bootstrap on the same questions), "sweep": [...], "alpha", "corpus",
        "chunks", "queries", "split", "rerank_questions": [{"uid", "ndcg_before", "ndcg_after", "top20",
        "gains", "scores"}], "rerank_ungraded": [...], ...}``.

    Raises:
        RetrievalEvalError: no evaluation questions. HybridError: an empty corpus.
    """
    tick = stage or (lambda name, n: None)
    _, held, _, queries = tatqa_queries(path, seed, eval_corpus=corpus)
    if not queries:
        raise RetrievalEvalError(f"{path}: no questions in the evaluation half")
    ingest_corpus(graph, held, corpus, f"tatqa:{Path(path).name}", stage)
    n_chunks = sum(1 + len(c.passages) for c in held)
    index = HybridIndex.from_graph(graph, embedder, corpus=corpus, kinds=None, progress=tick("embed chunks", n_chunks))
    ids = [p.id for p in index.passages]
    text_of = {p.id: p.text for p in index.passages}
    qvecs = embedder.encode([q.text for q in queries], progress=tick("embed questions", len(queries)))
    rows = index.pool()
    bar = tick("score", len(queries))
    pools = []
    for q, v in zip(queries, qvecs):
        pools.append(index.score_pool(q.text, rows, v))
        if bar:
            bar(1)
    alpha, best, curve = sweep_alpha(pools, ids, queries, step)
    if store:
        store_alpha(graph, corpus, alpha, f"ndcg@{K}", len(queries), best, step, embedding_model=embedder.identity)

    per_query: dict[str, list[float]] = {}  # system -> NDCG@10 of each of its questions (for the intervals)
    per_recall: dict[str, list[float]] = {}  # system -> Recall@10 of each question
    per_rr: dict[str, list[float]] = {}  # system -> reciprocal rank (within the top 10) of each question

    def mean_ndcg(scores_of: Callable[[PoolScores], np.ndarray], which: Sequence[int], system: str = "") -> float:
        ranked = [[ids[int(pools[i].rows[j])] for j in top_k(scores_of(pools[i]), K)] for i in which]
        values = [ndcg_at_k(r, queries[i].gains) for r, i in zip(ranked, which)]
        if system:
            per_query[system] = values
            per_recall[system] = [recall_at_k(r, queries[i].gains) for r, i in zip(ranked, which)]
            per_rr[system] = [reciprocal_rank(r, queries[i].gains) for r, i in zip(ranked, which)]
        return float(np.mean(values))

    everyone = range(len(queries))
    n = len(queries)
    table = [
        {
            "system": "bm25",
            "ndcg@10": mean_ndcg(lambda p: p.fused(0.0), everyone, "bm25"),
            "queries": n,
            "note": "BM25 (pool statistics), alpha = 0",
        },
        {
            "system": "dense",
            "ndcg@10": mean_ndcg(lambda p: p.fused(1.0), everyone, "dense"),
            "queries": n,
            "note": f"cosine, {embedder.identity.split('@')[0]}, alpha = 1",
        },
        {
            "system": "hybrid@0.5",
            "ndcg@10": mean_ndcg(lambda p: p.fused(0.5), everyone, "hybrid@0.5"),
            "queries": n,
            "note": "min-max, equal weights (seed 000 §3.3)",
        },
        {
            "system": "hybrid",
            "ndcg@10": mean_ndcg(lambda p: p.fused(alpha), everyone, "hybrid"),
            "queries": n,
            "note": f"min-max, swept alpha = {alpha}",
        },
        {
            "system": "hybrid-rrf",
            "ndcg@10": mean_ndcg(lambda p: p.fused(fusion="rrf"), everyone, "hybrid-rrf"),
            "queries": n,
            "note": "reciprocal rank fusion, k = 60",
        },
    ]
    details: list[dict[str, Any]] = []
    if reranker is not None:
        sample = sorted(random.Random(seed).sample(list(everyone), min(rerank_queries or n, n)))
        bar = tick("rerank", len(sample))
        orders: dict[str, list[list[str]]] = {"hybrid+rerank": [], "hybrid+shuffled": []}
        shuffle = random.Random(seed)
        for i in sample:
            fused = pools[i].fused(alpha)
            top = [ids[int(pools[i].rows[j])] for j in top_k(fused, 20)]
            scores = np.asarray(reranker.score(queries[i].text, [text_of[c] for c in top]), dtype=np.float64)
            order = np.lexsort((np.arange(len(top)), -scores))
            orders["hybrid+rerank"].append([top[j] for j in order])
            orders["hybrid+shuffled"].append(shuffle.sample(top, len(top)))
            details.append(
                {
                    "uid": queries[i].uid,
                    "ndcg_before": round(ndcg_at_k(top, queries[i].gains), 4),
                    "ndcg_after": round(ndcg_at_k(orders["hybrid+rerank"][-1], queries[i].gains), 4),
                    "top20": top,
                    "gains": [queries[i].gains.get(c, 0) for c in top],
                    "scores": [round(float(x), 4) for x in scores],
                }
            )
            if bar:
                bar(1)
        table.append(
            {
                "system": "hybrid (rerank sample)",
                "ndcg@10": mean_ndcg(lambda p: p.fused(alpha), sample, "hybrid (rerank sample)"),
                "queries": len(sample),
                "note": f"the reranked questions, before reranking (alpha = {alpha})",
            }
        )
        ungraded = len(getattr(reranker, "ungraded", ()))
        notes = {
            "hybrid+rerank": f"top-20 reranked by {reranker.name}"
            + (f"; {ungraded} answers without a grade (mid-scale)" if ungraded else ""),
            "hybrid+shuffled": "control: the same top-20 in a seeded random order",
        }
        gains_of = [queries[i].gains for i in sample]
        for system, ranked in orders.items():
            per_query[system] = [ndcg_at_k(r, g) for r, g in zip(ranked, gains_of)]
            per_recall[system] = [recall_at_k(r, g) for r, g in zip(ranked, gains_of)]
            per_rr[system] = [reciprocal_rank(r, g) for r, g in zip(ranked, gains_of)]
            table.append(
                {
                    "system": system,
                    "ndcg@10": float(np.mean(per_query[system])),
                    "queries": len(sample),
                    "note": notes[system],
                }
            )
    for r in table:
        ci = bootstrap_mean(per_query[r["system"]], seed=seed)
        r["ndcg@10"], r["ci_low"], r["ci_high"] = round(r["ndcg@10"], 4), round(ci.low, 4), round(ci.high, 4)
        for name, values in (("recall@10", per_recall), ("mrr@10", per_rr)):
            if r["system"] in values:
                ci = bootstrap_mean(values[r["system"]], seed=seed)
                r[name], r[f"{name}_ci_low"], r[f"{name}_ci_high"] = (
                    round(float(np.mean(values[r["system"]])), 4),
                    round(ci.low, 4),
                    round(ci.high, 4),
                )
    # paired differences on the same questions (95 % paired bootstrap): what hybrid and reranking add
    pairs = [
        ("hybrid", "bm25"),
        ("hybrid", "dense"),
        ("hybrid+rerank", "hybrid (rerank sample)"),
        ("hybrid+rerank", "hybrid+shuffled"),
    ]
    differences = [
        {"system": a, "baseline": b, **paired_bootstrap_difference(per_query[a], per_query[b], seed=seed).as_dict()}
        for a, b in pairs
        if a in per_query and b in per_query
    ]
    return {
        "corpus": corpus,
        "source": str(path),
        "split": {"by": "context", "seed": seed, "evaluation_contexts": len(held)},
        "chunks": len(index),
        "queries": n,
        "alpha": alpha,
        "alpha_step": step,
        "k": K,
        "embedding_model": embedder.identity,
        "reranker": reranker.name if reranker else None,
        "rerank_ungraded": list(getattr(reranker, "ungraded", [])),
        "rerank_questions": details,
        "evaluated_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "rows": table,
        "differences": differences,
        "sweep": [{"alpha": c["alpha"], "ndcg": round(c["ndcg"], 4)} for c in curve],
        "per_query": {
            "uids": [q.uid for q in queries],
            "ndcg@10": per_query,
            "recall@10": per_recall,
            "mrr@10": per_rr,
        },
    }


def llm_judge(client: Any, max_tokens: int = 16) -> LLMJudgeReranker:
    """The LLM relevance judge (:class:`retrieval.text.rerank.LLMJudgeReranker`) over an ``LLMClient``: each
    prompt is sent with :data:`retrieval.text.rerank.JUDGE_SCHEMA`; an answer the client rejects as malformed
    (``LLMAnswerError``) is handed to the judge as its raw text, so it is graded if a grade can be read and
    recorded in ``ungraded`` if not. LLMUnavailable and BudgetExceeded propagate."""
    from generation.llm import LLMAnswerError

    def ask(prompt: str) -> str:
        try:
            return client.chat(
                [{"role": "user", "content": prompt}], max_tokens=max_tokens, json_schema=JUDGE_SCHEMA
            ).text
        except LLMAnswerError as exc:
            return str(exc.raw or "")

    return LLMJudgeReranker(ask, f"llm-judge:{client.model_id}")


def save(result: Mapping[str, Any], out: Path, results_dir: Path | None = None) -> Path:
    """Write ``result`` as ``<out>/retrieval_eval.json``; returns the path. Its summary (NDCG@10 per system,
    the alpha sweep) is also written in the one results format (:mod:`finkg.eval.results`) as
    ``eval-retrieval.json`` in ``results_dir`` (e.g. ``bench/results``), else in ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "retrieval_eval.json"
    path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    rows = [r for r in result.get("rows", []) if "ci_low" in r]
    if rows:
        plots.interval_bars(
            [
                plots.Bar(f"{r['queries']} questions", r["system"], r["ndcg@10"], r["ci_low"], r["ci_high"])
                for r in rows
            ],
            out / "retrieval_ndcg.png",
            title=f"TAT-QA retrieval, NDCG@{result.get('k', K)} with 95% bootstrap intervals",
            ylabel=f"NDCG@{result.get('k', K)}",
        )
    write_result(
        "eval-retrieval",
        {
            k: result.get(k)
            for k in ("source", "corpus", "split", "k", "alpha_step", "embedding_model", "reranker")
            if k in result
        },
        {
            "queries": result.get("queries"),
            "chunks": result.get("chunks"),
            "alpha": result.get("alpha"),
            **{f"{r['system']}_ndcg@10": r["ndcg@10"] for r in result.get("rows", [])},
        },
        tables={
            "systems": list(result.get("rows", [])),
            "differences": list(result.get("differences", [])),
            "sweep": list(result.get("sweep", [])),
        },
        directory=results_dir or out,
    )
    return path


def bm25_ranker(chunks: Sequence[Mapping[str, Any]], depth: int) -> Callable[[str], list[str]]:
    """``rank(query) -> chunk ids``: the ``depth`` best BM25 hits among ``chunks`` (rows with ``id``, ``text``,
    ``document_id``, e.g. :func:`ingest.datasets.tatqa.corpus_rows`' chunks), best first: the source of the
    hard negatives of finkg's cross-encoder and of its embedder fine-tuning (seed 002 §3.2, §3.3)."""
    from retrieval.text.documents import Passage

    sparse = HybridIndex([Passage(r["id"], r["text"], r["document_id"]) for r in chunks])
    pool = sparse.pool()

    def rank(query: str) -> list[str]:
        return [sparse.passages[int(pool[j])].id for j in top_k(sparse.bm25(query, pool), depth)]

    return rank


def dense_ranker(
    chunks: Sequence[Mapping[str, Any]], embedder: Embedder, depth: int, stage: StageProgress | None = None
) -> Callable[[str], list[str]]:
    """``rank(query) -> chunk ids``: the ``depth`` chunks with the highest cosine similarity to the query under
    ``embedder`` (rows with ``id`` and ``text``), best first: the embedder-mined hard negatives of finkg's
    cross-encoder (:mod:`finkg.train.reranker`). The chunks are encoded once, here (stage ``embed chunks``)."""
    tick = stage or (lambda name, n: None)
    matrix = embedder.encode([r["text"] for r in chunks], progress=tick("embed chunks", len(chunks)))
    chunk_ids = [r["id"] for r in chunks]

    def rank(query: str) -> list[str]:
        scores = matrix @ embedder.encode([query])[0]
        return [chunk_ids[int(j)] for j in top_k(scores, depth)]

    return rank


__all__ = [
    "CORPUS",
    "LabelledQuery",
    "RetrievalEvalError",
    "alphas",
    "bm25_ranker",
    "check_alpha",
    "dcg",
    "dense_ranker",
    "evaluate",
    "ingest_corpus",
    "llm_judge",
    "ndcg_at_k",
    "recall_at_k",
    "reciprocal_rank",
    "save",
    "sweep_alpha",
    "tatqa_queries",
]
