"""The reranker interface (retrieval/text/rerank.py) with a cross-encoder trained here from the real MiniLM
directory on real TAT-QA question-evidence pairs (tests/data/tatqa_dev_sample.json)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import minilm_dir
from test_llm import smol_gguf

from ingest.datasets.tatqa import corpus_rows, question_gains, read_tatqa
from retrieval.text.documents import Passage
from retrieval.text.hybrid import Hit
from retrieval.text.rerank import (
    UNGRADED,
    CrossEncoderReranker,
    LLMJudgeReranker,
    RerankModelError,
    make_reranker,
    rerank_hits,
    training_pairs,
)

SAMPLE = Path(__file__).parent / "data" / "tatqa_dev_sample.json"


@pytest.fixture(scope="module")
def sample():
    contexts = read_tatqa(SAMPLE)
    texts = {r["id"]: r["text"] for r in corpus_rows(contexts, "", "tatqa:sample")["chunks"]}
    questions = [(q.question, question_gains(c, q)) for c in contexts for q in c.questions]
    return texts, questions


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, sample) -> Path:
    """A cross-encoder trained from MiniLM on 4 real questions' pairs (a few seconds on 2 cores)."""
    from finkg.train.reranker import RerankerConfig, train

    texts, questions = sample
    pairs = training_pairs(questions[:4], texts, lambda q: [], negatives_per_query=1, seed=0)
    rows = [{"query": p.query, "passage": p.passage, "label": p.label} for p in pairs]
    config = RerankerConfig(epochs=1, batch_size=4, max_length=64, save_steps=100)
    model, _, _ = train(rows, minilm_dir(), tmp_path_factory.mktemp("reranker") / "tiny", config)
    return model


def test_training_pairs_grade_evidence_context_and_negatives(sample):
    texts, questions = sample
    q, gains = questions[0]
    hard = [c for c in texts if c not in gains][::-1]
    pairs = training_pairs([(q, gains)], texts, lambda _: hard, negatives_per_query=2, seed=0)
    evidence = {texts[c] for c, g in gains.items() if g == 2}
    assert {p.passage for p in pairs if p.label == 1.0} == evidence
    assert [p.label for p in pairs].count(0.5) == (1 if any(g == 1 for g in gains.values()) else 0)
    negatives = [p.passage for p in pairs if p.label == 0.0]
    assert negatives == [texts[c] for c in hard[:2]]  # hard negatives first, in their order
    assert pairs == training_pairs([(q, gains)], texts, lambda _: hard, negatives_per_query=2, seed=0)
    with pytest.raises(ValueError, match="has no text"):
        training_pairs([(q, {"missing-chunk": 2})], texts, lambda _: [])


def test_trained_cross_encoder_scores_and_reranks(tiny_model, sample):
    texts, questions = sample
    reranker = CrossEncoderReranker(tiny_model, max_length=64)
    assert reranker.name == "cross-encoder:model"
    q = questions[5][0]
    passages = list(texts.values())[:6]
    scores = reranker.score(q, passages)
    assert scores.shape == (6,) and np.isfinite(scores).all()
    np.testing.assert_allclose(reranker.score(q, passages), scores, rtol=1e-5)  # deterministic
    assert reranker.score(q, []).shape == (0,)
    hits = [Hit(Passage(f"c{i}", t), 1.0 - i / 10, 0.0, 0.0, 0.0, 0.0, i + 1) for i, t in enumerate(passages)]
    out = rerank_hits(reranker, q, hits, lambda h: h.passage.text, top_n=4)
    head = sorted(range(4), key=lambda i: (-scores[i], i))
    assert [h.passage.id for h in out] == [f"c{i}" for i in head] + ["c4", "c5"]  # only the top-4 move
    assert [h.rank for h in out] == [1, 2, 3, 4, 5, 6]


def test_a_bge_named_directory_loads_with_flag_reranker(tiny_model, tmp_path, sample):
    """backend auto picks FlagEmbedding's FlagReranker for a bge-named directory; its raw logits order the
    passages as the CrossEncoder's sigmoid scores do."""
    texts, questions = sample
    bge = tmp_path / "bge-reranker-tiny"
    shutil.copytree(tiny_model, bge)
    flag = make_reranker(bge, max_length=64)
    assert flag.backend == "flag"
    passages = list(texts.values())[:5]
    q = questions[0][0]
    ce = CrossEncoderReranker(tiny_model, max_length=64)
    assert np.argsort(-flag.score(q, passages)).tolist() == np.argsort(-ce.score(q, passages)).tolist()


def test_errors_name_the_path(tmp_path):
    missing = tmp_path / "no-such-reranker"
    with pytest.raises(RerankModelError, match=str(missing)):
        make_reranker(missing)
    with pytest.raises(RerankModelError, match="model_path"):
        make_reranker(None)
    (tmp_path / "empty").mkdir()
    with pytest.raises(RerankModelError, match="cannot load"):
        CrossEncoderReranker(tmp_path / "empty")
    with pytest.raises(RerankModelError, match="backend"):
        CrossEncoderReranker(tmp_path / "empty", backend="voyage")


@pytest.mark.model
def test_llm_document_selection_with_smollm2(sample):
    """Seed 002 §4.3 selection with the real SmolLM2 (constrained to a JSON list of indices)."""
    from generation.llm import LLMClient
    from generation.llm.llamacpp import LlamaCppBackend
    from retrieval.text.rerank import SELECTION_SCHEMA, select_documents

    gguf = smol_gguf()
    client = LLMClient(LlamaCppBackend(gguf, n_ctx=4096, n_threads=2))
    prompts = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return client.chat([{"role": "user", "content": prompt}], max_tokens=48, json_schema=SELECTION_SCHEMA).text

    texts, questions = sample
    passages = list(texts.values())[:10]
    sel = select_documents(ask, questions[0][0], passages, max_chars=200)
    assert sel.parsed and set(sel.indices) <= set(range(10)) and list(sel.indices) == sorted(set(sel.indices))
    assert "Corpus #9 :" in prompts[0] and questions[0][0] in prompts[0] and "from 0 to 9" in prompts[0]
    # parsing, by hand: out-of-range indices dropped; no list keeps everything
    assert select_documents(lambda p: "Relevant: [3, 1, 12, 3]", "q", passages).indices == (1, 3)
    assert select_documents(lambda p: "Relevant: [3, 1, 12, 3]", "q", passages).dropped == (12,)
    unsure = select_documents(lambda p: "I cannot tell.", "q", passages[:4])
    assert unsure.indices == (0, 1, 2, 3) and not unsure.parsed
    assert select_documents(lambda p: "[]", "q", passages).indices == ()


def test_llm_judge_grades_each_passage_and_records_answers_without_a_grade():
    """The judge's prompt carries the question before the passage; grades order the passages, an answer
    without a grade is recorded and scored mid-scale, and ties keep the retrieval order."""
    answers = iter(['{"relevance": 0}', '{"relevance":3}', "I think it is relevant", '{"relevance": 3}', "2"])
    prompts: list[str] = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return next(answers)

    judge = LLMJudgeReranker(ask, max_chars=20)
    passages = ["a  b\nc " * 10, "second", "third", "fourth", "fifth"]
    scores = judge.score("What was revenue in 2019?", passages)
    assert scores.tolist() == [0.0, 3.0, UNGRADED, 3.0, 2.0]
    assert judge.ungraded == [{"query": "What was revenue in 2019?", "passage": 2, "answer": "I think it is relevant"}]
    assert prompts[0].index("What was revenue in 2019?") < prompts[0].index("Passage: a b\nc a b\nc a b\nc a \n")
    assert "c a b\nc a b\nc a b\nc a b" not in prompts[0]  # rows kept, spaces collapsed, cut to max_chars
    reordered = LLMJudgeReranker(lambda p: '{"relevance": 1}' if "third" in p else '{"relevance": 0}').rerank(
        "q", passages, str
    )
    assert reordered == [passages[2], passages[0], passages[1], passages[3], passages[4]]
    assert [LLMJudgeReranker.grade(a) for a in ['{"relevance": 2}', "relevance: 1", " 3 ", "grade 7", "", "12"]] == [
        2,
        1,
        3,
        None,
        None,
        None,
    ]
