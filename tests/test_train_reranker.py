"""``finkg train reranker`` (finkg/train/reranker.py): labelled pairs from TAT-QA's training half with hard
negatives mined by the real MiniLM embedder, a cross-encoder trained by sentence-transformers' trainer,
resumed, measured against the hybrid order and a shuffled control in the real Neo4j, and registered."""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import minilm_dir
from test_retrieval_eval import DELETE_CORPUS

from finkg import models
from finkg.eval import retrieval as rev
from finkg.train import reranker as rr
from finkg.train.common import TrainingDataError, TrainingError, tuned_models, write_jsonl
from ingest.datasets.tatqa import corpus_rows, read_tatqa, split_contexts
from retrieval.embeddings import make_embedder
from retrieval.text.rerank import CrossEncoderReranker

SAMPLE = Path(__file__).parent / "data" / "tatqa_dev_sample.json"


@pytest.fixture(scope="module")
def mined():
    """The real MiniLM, and the pairs it mines on the sample's training half (2 negatives a question)."""
    embedder = make_embedder(minilm_dir())
    config = rr.RerankerConfig(negatives=2)
    pairs = rr.tatqa_pairs(SAMPLE, lambda chunks, depth: rev.dense_ranker(chunks, embedder, depth), config)
    return embedder, pairs


@pytest.mark.model
def test_pairs_come_from_the_training_half_with_the_embedders_hard_negatives(mined):
    from sentence_transformers import SentenceTransformer

    embedder, pairs = mined
    train, held = split_contexts(read_tatqa(SAMPLE), 0)
    assert pairs and {p["context"] for p in pairs} <= {c.table_uid for c in train}
    assert not {p["context"] for p in pairs} & {c.table_uid for c in held}
    assert {p["label"] for p in pairs} <= {0.0, 0.5, 1.0}
    chunks = corpus_rows(train, rev.TRAIN_CORPUS, "tatqa:sample")["chunks"]
    texts = [c["text"] for c in chunks]
    context_of = [c["document_id"].rsplit(":", 1)[-1] for c in chunks]
    # independently: the sentence-transformers model itself, cosine over the training half's chunks
    st = SentenceTransformer(str(minilm_dir()), device="cpu")
    matrix = st.encode(texts, normalize_embeddings=True)
    for uid in {p["uid"] for p in pairs}:
        mine = [p for p in pairs if p["uid"] == uid]
        assert any(p["label"] == 1.0 for p in mine)  # its evidence
        context = mine[0]["context"]
        outside = [i for i, c in enumerate(context_of) if c != context]
        scores = matrix[outside] @ st.encode([mine[0]["query"]], normalize_embeddings=True)[0]
        best = [texts[outside[j]] for j in np.argsort(-scores)[:2]]
        assert [p["passage"] for p in mine if p["label"] == 0.0] == best  # the top-2 outside its context
    again = rr.tatqa_pairs(
        SAMPLE, lambda chunks, depth: rev.dense_ranker(chunks, embedder, depth), rr.RerankerConfig(negatives=2)
    )
    assert again == pairs  # deterministic


@pytest.mark.model
def test_bad_settings_and_inputs_are_refused_before_any_training(tmp_path):
    with pytest.raises(TrainingError, match="mine_with 'tfidf'"):
        rr.RerankerConfig(mine_with="tfidf")
    with pytest.raises(TrainingError, match="negatives -1"):
        rr.RerankerConfig(negatives=-1)
    missing = tmp_path / "no-such-encoder"
    with pytest.raises(TrainingError, match=f"{missing}: cannot load it"):
        rr.train([{"query": "q", "passage": "p", "label": 1.0}], missing, tmp_path / "out", rr.RerankerConfig())
    with pytest.raises(TrainingDataError, match="empty split"):
        rr.train([], minilm_dir(), tmp_path / "out", rr.RerankerConfig())
    assert not (tmp_path / "out" / "checkpoints").exists()


@pytest.fixture
def corpus(graph):
    name = f"test-rerank-{uuid.uuid4().hex[:8]}"
    yield name
    graph.run_autocommit(DELETE_CORPUS, {"corpus": name})


@pytest.mark.model
@pytest.mark.neo4j
def test_the_reranker_trains_resumes_is_measured_against_a_control_and_registers(mined, tmp_path, graph, corpus):
    embedder, pairs = mined
    examples = write_jsonl(tmp_path / "pairs.jsonl", pairs[:24])
    config = rr.RerankerConfig(
        batch_size=4, learning_rate=1e-4, max_length=96, save_steps=2, logging_steps=1, max_steps=3, rerank_questions=3
    )
    out = tmp_path / "reranker"
    _, losses, _ = rr.train(pairs[:24], minilm_dir(), out, config)
    assert [r["step"] for r in losses.rows] == [1, 2, 3] and (out / "checkpoints" / "checkpoint-2").is_dir()
    results = tmp_path / "results"
    summary = rr.run(
        SAMPLE,
        minilm_dir(),
        out,
        replace(config, max_steps=6),
        graph=graph,
        make_embedder=lambda: embedder,
        examples_file=examples,
        resume=True,
        results_dir=results,
        corpus=corpus,
    )
    try:
        assert summary["steps"] == 6 and summary["pairs"] == 24 and summary["kind"] == "reranker"
        first, last = summary["loss_first"], summary["loss_last"]
        assert last < first  # the loss falls over the 6 steps (steps 1-3 read back from the checkpoint)
        saved = json.loads((results / "train-reranker.json").read_text())
        rows = {r["system"]: r for r in saved["tables"]["systems"]}
        assert set(rows) == set(rr.SYSTEMS)
        assert rows["hybrid+rerank"]["queries"] == rows["hybrid+shuffled"]["queries"] == 3
        diffs = {(d["baseline"], d["metric"]): d for d in saved["tables"]["differences"]}
        assert len(diffs) == 6
        d = diffs[("hybrid (rerank sample)", "ndcg@10")]
        assert d["system_value"] == pytest.approx(rows["hybrid+rerank"]["ndcg@10"], abs=1e-4)
        assert d["baseline_value"] == pytest.approx(rows["hybrid (rerank sample)"]["ndcg@10"], abs=1e-4)
        assert d["mean"] == pytest.approx(d["system_value"] - d["baseline_value"], abs=2e-4) and d["n"] == 3
        model = Path(summary["model_dir"])
        assert (model / models.PROMOTED).is_file() == rr.promoted(summary["differences"])
        card = (model / "README.md").read_text()
        assert summary["sha256"] in card and "BinaryCrossEntropyLoss" in card
        scores = CrossEncoderReranker(model, max_length=96).score(pairs[0]["query"], [p["passage"] for p in pairs[:5]])
        assert scores.shape == (5,) and np.isfinite(scores).all()
        found = [m for m in tuned_models(graph, "reranker") if m["name"] == summary["name"]]
        assert found and found[0]["sha256"] == summary["sha256"]
    finally:
        graph.write("MATCH (m:TunedModel {name: $n}) DELETE m", {"n": summary["name"]})


def test_a_trained_reranker_is_the_default_only_when_reranking_measured_better(tmp_path):
    model = tmp_path / models.TUNED_RERANKER / "model"
    model.mkdir(parents=True)
    assert models.promoted_model(tmp_path, models.TUNED_RERANKER) is None
    (model / models.PROMOTED).write_text("{}", encoding="utf-8")
    assert models.promoted_model(tmp_path, models.TUNED_RERANKER) == model
    better = {"baseline": "hybrid (rerank sample)", "metric": "ndcg@10", "ci_low": 0.01}
    assert rr.promoted([better])
    assert not rr.promoted([{**better, "ci_low": -0.01}])
    assert not rr.promoted([{**better, "baseline": "hybrid+shuffled"}])  # beating the control is not enough
