"""NDCG@10, the alpha sweep, the TAT-QA split and corpus, and the evaluation end to end on the real Neo4j."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest
from conftest import minilm_dir, model_weights
from typer.testing import CliRunner

from finkg.cli import app
from finkg.eval import retrieval as rev
from ingest.datasets.tatqa import (
    TatqaFormatError,
    question_gains,
    read_tatqa,
    split_contexts,
    table_chunk_id,
)
from kg import Graph
from retrieval.embeddings import make_embedder
from retrieval.text.hybrid import HybridIndex, PoolScores, read_alpha

SAMPLE = Path(__file__).parent / "data" / "tatqa_dev_sample.json"
DELETE_CORPUS = (
    "MATCH (n) WHERE (n:Chunk OR n:Document) AND n.corpus = $corpus DETACH DELETE n "
    "WITH count(*) AS gone MATCH (c:Corpus {name: $corpus}) DETACH DELETE c"
)


def test_ndcg_at_10_by_hand():
    gains = {"a": 2, "b": 1, "c": 1}
    # DCG = 0 + 2/log2(3) + 1/log2(4); IDCG = 2/log2(2) + 1/log2(3) + 1/log2(4)
    want = (2 / math.log2(3) + 0.5) / (2 + 1 / math.log2(3) + 0.5)
    assert rev.ndcg_at_k(["x", "a", "c"], gains) == pytest.approx(want)
    assert rev.ndcg_at_k(["a", "b", "c"], gains) == pytest.approx(1.0)
    assert rev.ndcg_at_k([f"x{i}" for i in range(10)] + ["a"], gains) == 0.0  # rank 11 is past the cut
    assert rev.ndcg_at_k(["a"], {}) == 0.0
    with pytest.raises(ValueError):
        rev.ndcg_at_k(["a"], gains, k=0)


def test_recall_and_reciprocal_rank_by_hand():
    gains = {"c": 2, "x": 2, "b": 1}  # evidence: c and x (gain 2); b is the same context (gain 1)
    assert rev.recall_at_k(["a", "b", "c"], gains) == 0.5
    assert rev.reciprocal_rank(["a", "b", "c"], gains) == 1 / 3
    assert rev.reciprocal_rank(["a", "b"], gains) == 0.0
    assert rev.recall_at_k(["x", "c"], gains, k=1) == 0.5
    assert rev.recall_at_k(["a"], {}) == 0.0


def test_alphas_step_0025():
    a = rev.alphas(0.025)
    assert len(a) == 41 and a[0] == 0.0 and a[1] == 0.025 and a[-1] == 1.0
    with pytest.raises(rev.RetrievalEvalError):
        rev.alphas(0.3)


def test_sweep_picks_the_best_alpha():
    ids = ["rel", "other"]
    query = rev.LabelledQuery("q", "q", {"rel": 1})
    # sparse prefers "rel", dense prefers "other": only small alphas rank "rel" first
    pool = PoolScores(np.array([0, 1]), np.array([3.0, 1.0]), np.array([0.2, 0.6]))
    alpha, best, curve = rev.sweep_alpha([pool], ids, [query])
    assert alpha == 0.0 and best == pytest.approx(1.0)
    by = {c["alpha"]: c["ndcg"] for c in curve}
    assert by[0.475] == pytest.approx(1.0) and by[0.525] < 1.0  # fused = alpha * dense + (1 - alpha) * sparse
    with pytest.raises(rev.RetrievalEvalError):
        rev.sweep_alpha([], ids, [])


def test_split_by_context_is_disjoint_and_deterministic():
    contexts = read_tatqa(SAMPLE)
    train, held = split_contexts(contexts, seed=0)
    assert len(train) == 2 and len(held) == 3
    assert {c.table_uid for c in train}.isdisjoint({c.table_uid for c in held})
    again = split_contexts(list(reversed(contexts)), seed=0)
    assert {c.table_uid for c in again[0]} == {c.table_uid for c in train}  # file order does not matter


def test_question_gains_grade_evidence_2_and_context_1():
    contexts = read_tatqa(SAMPLE)
    c = contexts[0]
    table = table_chunk_id(c.table_uid)
    for q in c.questions:
        gains = question_gains(c, q, corpus="x")
        assert set(gains) == {f"x/{table}", *(f"x/{p.id}" for p in c.passages)}
        from_table = q.answer_from in ("table", "table-text")
        marked = {p.order for p in c.passages} & set(q.rel_paragraphs)
        assert gains[f"x/{table}"] == (2 if from_table or not marked else 1)
        for p in c.passages:
            assert gains[f"x/{p.id}"] == (2 if p.order in marked or not (from_table or marked) else 1)


def test_bad_rel_paragraphs_name_the_question(tmp_path):
    data = json.loads(SAMPLE.read_text())
    data[1]["questions"][2]["rel_paragraphs"] = ["two"]
    uid = data[1]["questions"][2]["uid"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(TatqaFormatError, match=f"context 1: question {uid}: 'rel_paragraphs'"):
        read_tatqa(bad)


@pytest.fixture
def corpus(graph: Graph):
    name = f"test-eval-{uuid.uuid4().hex[:8]}"
    yield name
    graph.run_autocommit(DELETE_CORPUS, {"corpus": name})


@pytest.mark.model
def test_evaluate_end_to_end_on_the_sample(graph: Graph, corpus, tmp_path):
    embedder = make_embedder(minilm_dir())
    result = rev.evaluate(graph, SAMPLE, embedder, corpus=corpus)
    rows = {r["system"]: r for r in result["rows"]}
    assert set(rows) == {"bm25", "dense", "hybrid@0.5", "hybrid", "hybrid-rrf"}
    _, held, _, queries = rev.tatqa_queries(SAMPLE, eval_corpus=corpus)
    assert result["queries"] == len(queries) == rows["bm25"]["queries"]
    assert result["chunks"] == sum(1 + len(c.passages) for c in held)
    assert rows["hybrid"]["ndcg@10"] >= max(
        rows["bm25"]["ndcg@10"], rows["dense"]["ndcg@10"], rows["hybrid@0.5"]["ndcg@10"]
    )  # the sweep includes 0, 0.5 and 1
    stored = read_alpha(graph, corpus)
    assert stored["hybrid_alpha"] == result["alpha"] and stored["hybrid_alpha_queries"] == len(queries)
    # bm25's figure is the mean NDCG@10 of the alpha = 0 rankings, recomputed here through hits()
    index = HybridIndex.from_graph(graph, embedder, corpus=corpus, kinds=None)
    mine = np.mean(
        [rev.ndcg_at_k([h.passage.id for h in index.hits(q.text, k=10, alpha=0.0)], q.gains) for q in queries]
    )
    assert rows["bm25"]["ndcg@10"] == pytest.approx(mine, abs=1e-4)
    saved = json.loads(rev.save(result, tmp_path).read_text())
    assert saved["alpha"] == result["alpha"] and len(saved["sweep"]) == 41
    # each figure has its 95 % bootstrap interval; hybrid is compared with bm25 and dense on the same questions
    for r in rows.values():
        assert r["ci_low"] <= r["ndcg@10"] <= r["ci_high"]
    diffs = {(d["system"], d["baseline"]): d for d in result["differences"]}
    assert diffs[("hybrid", "bm25")]["mean"] == pytest.approx(
        rows["hybrid"]["ndcg@10"] - rows["bm25"]["ndcg@10"], abs=2e-4
    )
    assert diffs[("hybrid", "bm25")]["n"] == len(queries)
    assert (tmp_path / "retrieval_ndcg.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.model
def test_no_questions_is_an_error(graph: Graph, corpus, tmp_path):
    data = json.loads(SAMPLE.read_text())
    for c in data:
        c["questions"] = []
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps(data))
    with pytest.raises(rev.RetrievalEvalError, match="no questions"):
        rev.evaluate(graph, empty, make_embedder(minilm_dir()), corpus=corpus)


@pytest.mark.model
def test_cli_names_a_missing_reranker_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("FINKG_EMBEDDING_MODEL_PATH", str(minilm_dir()))
    monkeypatch.setenv("FINKG_RERANK_MODEL_PATH", str(tmp_path / "no-reranker"))
    result = subprocess.run(
        [sys.executable, "-m", "finkg", "eval", "retrieval", str(SAMPLE), "--rerank", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    said = " ".join(result.stderr.split())
    assert "no-reranker: not a directory" in said


@pytest.mark.model
def test_cli_reranks_with_the_llm_judge_when_the_backend_is_llm(graph: Graph, tmp_path, monkeypatch):
    """`[rerank] backend = "llm"`: the real SmolLM2 grades the hybrid top-20 of one question (20 calls)."""
    smol = model_weights("smollm2-135m-instruct-q4_1")
    monkeypatch.setenv("FINKG_EMBEDDING_MODEL_PATH", str(minilm_dir()))
    monkeypatch.setenv("FINKG_RERANK_BACKEND", "llm")
    monkeypatch.setenv("FINKG_LLM_BACKEND", "llama-cpp")
    monkeypatch.setenv("FINKG_LLM_MODEL_PATH", str(smol))
    monkeypatch.setenv("FINKG_LLM_CACHE", "false")
    result = CliRunner().invoke(
        app, ["eval", "retrieval", str(SAMPLE), "--rerank-queries", "1", "--no-store", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    saved = json.loads((tmp_path / "retrieval_eval.json").read_text())
    rows = {r["system"]: r for r in saved["rows"]}
    assert saved["reranker"].startswith("llm-judge:") and rows["hybrid+rerank"]["queries"] == 1
    assert 0.0 <= rows["hybrid+rerank"]["ndcg@10"] <= 1.0
    assert all(set(u) == {"query", "passage", "answer"} for u in saved["rerank_ungraded"])
