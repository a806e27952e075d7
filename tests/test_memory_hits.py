"""The experience memory's hit rate against its bank's size (finkg/eval/memory_hits.py; seed 001, section 5.5 and
Figure 4(a)), its picture (finkg/plots.py ``hit_rate_curves``) and the questions bench/memory_hit_rate.py asks
about (the shipped TAT-QA sample). The expected rates are worked out by hand from
the cosines of unit vectors in the plane."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import bench_script
from PIL import Image

from finkg.eval.experience import learning_order
from finkg.eval.memory_hits import SEED_THRESHOLDS, hit_rates
from finkg.plots import hit_rate_curves
from ingest.datasets.tatqa import read_tatqa
from kg.errors import EvaluationError

SAMPLE = Path(__file__).parent / "data" / "tatqa_dev_sample.json"

QUERIES = np.array([[1.0, 0.0], [0.0, 1.0]])
BANK = np.array([[0.6, 0.8], [1.0, 0.0], [0.0, 1.0]])  # cosines with the queries: (0.6, 0.8), (1, 0), (0, 1)


def test_each_snapshot_counts_the_queries_with_an_entry_at_or_above_tau():
    rows = hit_rates(QUERIES, BANK, [0, 1, 2, 3], (0.7, 0.9))
    assert [r["entries"] for r in rows] == [0, 1, 2, 3]
    assert [r["hit_rate"] for r in rows] == [
        {"0.70": 0.0, "0.90": 0.0},  # the empty bank: the fallback for every question
        {"0.70": 0.5, "0.90": 0.0},  # 0.6 and 0.8 against the first entry
        {"0.70": 1.0, "0.90": 0.5},  # the second entry is the first query itself
        {"0.70": 1.0, "0.90": 1.0},
    ]


def test_a_larger_bank_never_lowers_the_hit_rate_and_a_higher_tau_never_raises_it():
    rng = np.random.default_rng(0)
    queries, bank = rng.normal(size=(40, 8)), rng.normal(size=(60, 8))
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    bank /= np.linalg.norm(bank, axis=1, keepdims=True)
    rows = hit_rates(queries, bank, range(0, 61, 10))
    for tau in (f"{t:.2f}" for t in SEED_THRESHOLDS):
        rates = [r["hit_rate"][tau] for r in rows]
        assert rates == sorted(rates)
    for r in rows:
        rates = list(r["hit_rate"].values())
        assert rates == sorted(rates, reverse=True)
    assert rows[-1]["hit_rate"]["0.50"] > 0  # 60 random directions in 8 dimensions: some come close


@pytest.mark.parametrize(
    ("queries", "bank", "sizes", "message"),
    [
        (np.empty((0, 2)), BANK, [1], "queries: expected an"),
        (QUERIES, np.ones((3, 4)), [1], r"bank: expected an \(m, 2\) array"),
        (QUERIES, BANK, [4], "bank size 4: the bank has 3 entries"),
        (QUERIES, BANK, [-1], "bank size -1"),
    ],
)
def test_bad_shapes_and_sizes_are_named(queries, bank, sizes, message):
    with pytest.raises(ValueError, match=message):
        hit_rates(queries, bank, sizes)


def test_the_picture_draws_every_threshold_and_the_stored_bank(tmp_path):
    rows = hit_rates(QUERIES, BANK, [0, 1, 2, 3])
    png = hit_rate_curves(
        [(r["entries"], r["hit_rate"]) for r in rows],
        tmp_path / "hits.png",
        title="t",
        highlight="0.65",
        measured=(2, 0.5),
    )
    with Image.open(png) as im:
        assert im.format == "PNG" and im.width > 600 and im.height > 350
    assert not list(tmp_path.glob("*.part.png"))
    with pytest.raises(EvaluationError, match="no bank snapshots"):
        hit_rate_curves([], tmp_path / "none.png", title="t", highlight="0.65")


def test_the_bench_queries_only_the_chosen_questions_that_reach_the_memory():
    """bench/memory_hit_rate.py: the evaluated questions are the chosen ones that ``finkg eval tatqa`` answers through
    the memory (arithmetic, not answered by the count route), in file order; the bank's are the learning order."""
    hits = bench_script("memory_hit_rate")
    contexts = read_tatqa(SAMPLE)
    order = learning_order(contexts)
    everything = {q.uid for c in contexts for q in c.questions}
    got = hits.evaluated(contexts, everything)
    counted = [q.question for c, q in order if q.answer_type == "count"]
    assert counted and not {q.question for _, q in got} & set(counted)  # the count route answers it
    assert [q.uid for _, q in got] == [q.uid for _, q in order if q.answer_type != "count"]
    some = {q.uid for _, q in got[:3]}
    assert [q.uid for _, q in hits.evaluated(contexts, some)] == [q.uid for _, q in got[:3]]
    texts = hits.with_evidence(got[:1])
    row = [cell.strip() for cell in got[0][0].table[1]]
    assert texts[0][0] is got[0][1] and any(row) and " | ".join(row) in texts[0][1]  # the table rows are evidence


def test_the_bench_s_span_route_queries_the_quoted_questions_against_the_span_learning_order():
    """``--route span``: the evaluated questions are the chosen ones the agent quotes, which are exactly the questions
    ``finkg experience learn --route span`` learns from when the contexts are the training half's."""
    hits = bench_script("memory_hit_rate")
    contexts = read_tatqa(SAMPLE)
    everything = {q.uid for c in contexts for q in c.questions}
    quoted = hits.evaluated(contexts, everything, "span")
    assert quoted and [q.uid for _, q in quoted] == [q.uid for _, q in learning_order(contexts, "span")]
    assert not {q.uid for _, q in quoted} & {q.uid for _, q in hits.evaluated(contexts, everything)}
