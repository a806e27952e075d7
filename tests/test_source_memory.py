"""The Bayesian source memory (seed 000, section 3.5) in the real Neo4j: equation 6 by hand, class-balanced
fractional credit over the cited families, invalid ids ignored, no citation no update, matured-only and
idempotent updates, the shuffled controls, runs side by side. Evidence ids and source families are real
tweets' (data/tweets and tests/data/market_tweets, stocknet-dataset; news = a news outlet's account)."""

from __future__ import annotations

import uuid
from collections import Counter
from pathlib import Path

import pytest
from test_cli import finkg

from ingest.text.tweets import read_tweets
from kg import cypher
from retrieval.memory.source_memory import (
    Feedback,
    MemoryControl,
    MemoryParams,
    SourceMemory,
    class_weights,
    memory_adjustment,
    memory_score,
    rank_evidence,
    shrinkage,
    utility,
)
from retrieval.text.point_in_time import Candidate

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(
    p
    for d in (ROOT / "data" / "tweets", ROOT / "tests" / "data" / "market_tweets")
    for p in d.rglob("*")
    if p.is_file()
)
DOCS = read_tweets(FILES).documents
NEWS = [d for d in DOCS if d.source_family == "news"][:2]
SOCIAL = [d for d in DOCS if d.source_family == "social"][:3]
CONTEXT = {d.id: d.source_family for d in NEWS + SOCIAL}  # the retrieved top-5: 2 news, 3 social passages
EARNINGS, LEGAL = "Earnings & Guidance", "Legal & Regulatory"
EVENT_TYPES = (EARNINGS, LEGAL, "Capital & Transactions", "Management & Operations", "Other/Mixed")
# Validation-split label shares per horizon (seed 000, Table 1, Validation row: +1 / 0 / -1 in %)
VALIDATION = {
    "1D": {1: 0.184, 0: 0.637, -1: 0.179},
    "3D": {1: 0.192, 0: 0.615, -1: 0.193},
    "5D": {1: 0.207, 0: 0.586, -1: 0.207},
}
PARAMS = MemoryParams(kappa=10.0, clip=0.2, strength=0.3, top_k=5)


@pytest.fixture
def runs(graph):
    """Memories under fresh run ids; their cells and feedback are deleted afterwards."""
    made: list[SourceMemory] = []

    def make(control: MemoryControl = MemoryControl(), run: str | None = None) -> SourceMemory:
        memory = SourceMemory(graph, run or f"test-{uuid.uuid4().hex[:8]}", VALIDATION, PARAMS, control)
        made.append(memory)
        return memory

    yield make
    for m in made:
        m.reset()


def _fb(anchor: str, horizon: str, predicted: int, label: int, matured: str, cited, event_type: str = EARNINGS):
    return Feedback(anchor, event_type, horizon, predicted, label, matured, list(cited), CONTEXT)


def test_equation_6_by_hand():
    assert len(NEWS) == 2 and len(SOCIAL) == 3
    assert utility(0, 0) == 0.5 and shrinkage(0, 0, 10) == 0 and memory_score(0.7, 0, 0, PARAMS) == 0.7
    # a = 3, b = 1: u = 4/6, rho = 4/14, term = rho (u - 1/2) = 1/21 (inside the clip), s = r + 0.3/21
    assert utility(3, 1) == pytest.approx(4 / 6)
    assert shrinkage(3, 1, 10) == pytest.approx(4 / 14)
    assert memory_adjustment(3, 1, PARAMS) == pytest.approx(1 / 21)
    assert memory_score(0.5, 3, 1, PARAMS) == pytest.approx(0.5 + 0.3 / 21) == pytest.approx(0.5142857)
    # a = 60, b = 0: rho (u - 1/2) = 60/70 * (61/62 - 1/2) = 0.4147 -> clipped to c = 0.2: at most lambda * c = 0.06
    assert pytest.approx(0.414747, abs=1e-6) == 60 / 70 * (61 / 62 - 0.5)
    assert memory_score(0.5, 60, 0, PARAMS) == pytest.approx(0.56)
    assert memory_score(0.5, 0, 60, PARAMS) == pytest.approx(0.44)
    # lambda = 0: static ranking
    assert memory_score(0.5, 60, 0, MemoryParams(strength=0.0)) == 0.5
    with pytest.raises(ValueError, match="kappa must be > 0"):
        MemoryParams(kappa=0)
    w = class_weights(VALIDATION)
    assert w["3D"][1] == pytest.approx(1 / (3 * 0.192)) and w["3D"][0] == pytest.approx(1 / (3 * 0.615))
    with pytest.raises(ValueError, match=r"sum to 96\.0, not 1"):
        class_weights({"1D": {1: 18.0, 0: 60.0, -1: 18.0}})


def test_the_shared_context_ranks_by_equation_6_averaged_over_horizons():
    cands = [
        Candidate(
            id=d.id,
            document_id=d.id,
            text=d.sections[0][1],
            source_family=d.source_family,
            available_at=d.available_at,
            score=s,
        )
        for d, s in zip(SOCIAL + NEWS, (0.9, 0.8, 0.7, 0.68, 0.6))
    ]
    cells = {("news", EARNINGS, "3D"): (60.0, 0.0), ("social", EARNINGS, "3D"): (0.0, 60.0)}
    ranked = rank_evidence(cands, cells, EARNINGS, PARAMS, k=5)
    # news +0.06 / 3 horizons = +0.02, social -0.02: 0.88, 0.78, 0.70 (news), 0.68 (social), 0.62 (news)
    assert [round(r.score, 4) for r in ranked] == [0.88, 0.78, 0.70, 0.68, 0.62]
    assert [r.id for r in ranked] == [SOCIAL[0].id, SOCIAL[1].id, NEWS[0].id, SOCIAL[2].id, NEWS[1].id]
    assert ranked[2].by_horizon == pytest.approx({"1D": 0.68, "3D": 0.74, "5D": 0.68})
    assert [r.id for r in rank_evidence(cands, {}, EARNINGS, PARAMS, k=2)] == [SOCIAL[0].id, SOCIAL[1].id]
    assert [r.id for r in rank_evidence(cands, cells, LEGAL, PARAMS)] == [c.id for c in cands]  # other type: static


def test_fractional_credit_invalid_ids_no_citation_matured_only_and_idempotent(graph, runs):
    memory = runs()
    news, social = NEWS[0].id, SOCIAL[0].id
    memory.record(
        [
            # correct +1 at 3D citing a news and a social passage and a hallucinated id: each family w(+1)/2
            _fb("A", "3D", 1, 1, "2015-07-24T20:00:00Z", [news, social, "N9", news]),
            # wrong at 3D (label -1) citing one social passage: social gets w(-1) negative
            _fb("B", "3D", 0, -1, "2015-07-27T20:00:00Z", [SOCIAL[1].id]),
            # only invalid ids, and no ids: no update
            _fb("C", "3D", 1, 1, "2015-07-24T20:00:00Z", ["F1", "not-retrieved"]),
            _fb("D", "1D", 1, 1, "2015-07-22T20:00:00Z", []),
        ]
    )
    w_pos, w_neg = 1 / (3 * 0.192), 1 / (3 * 0.193)
    assert memory.apply_matured("2015-07-22T19:59:59Z").applied == 0  # nothing matured yet
    assert memory.cells() == {}
    first = memory.apply_matured("2015-07-24T20:00:00Z")  # A, C and D matured; B has not
    assert (first.applied, first.updated, first.no_citation, first.cells_touched) == (3, 1, 2, 2)
    assert first.positive == pytest.approx(w_pos) and first.negative == 0
    cells = memory.cells()
    assert set(cells) == {("news", EARNINGS, "3D"), ("social", EARNINGS, "3D")}
    assert cells[("news", EARNINGS, "3D")] == pytest.approx((w_pos / 2, 0.0))
    assert cells[("social", EARNINGS, "3D")] == pytest.approx((w_pos / 2, 0.0))
    # the same update again, from this object or a fresh one (a rerun), counts nothing
    assert memory.apply_matured("2015-07-24T20:00:00Z").applied == 0
    memory.record([_fb("A", "3D", 1, 1, "2015-07-24T20:00:00Z", [news, social])])  # re-recorded after applying
    rerun = SourceMemory(graph, memory.run, VALIDATION, PARAMS)
    assert rerun.apply_matured("2015-07-24T20:00:00Z").applied == 0
    assert memory.cells() == cells
    later = rerun.apply_matured("2015-07-31T20:00:00Z")
    assert (later.applied, later.updated) == (1, 1)
    assert memory.cells()[("social", EARNINGS, "3D")] == pytest.approx((w_pos / 2, w_neg))
    assert memory.counts() == {"recorded": 4, "applied": 4, "no_citation": 2}
    # inspectable: each applied event links to the cells it moved, with its credit
    links = graph.read(
        "MATCH (f:SourceMemoryFeedback {run: $run})-[k:CREDITED]->(c:SourceMemoryCell) "
        "RETURN f.anchor_id AS anchor, c.family AS family, k.positive AS pos, k.negative AS neg "
        "ORDER BY anchor, family",
        {"run": memory.run},
    )
    assert [(r["anchor"], r["family"]) for r in links] == [("A", "news"), ("A", "social"), ("B", "social")]
    out = finkg("audit", "memory", "--run", memory.run)
    assert out.returncode == 0, out.stderr
    assert "Earnings & Guidance" in out.stdout and "Neo4j Browser: MATCH (c:SourceMemoryCell" in out.stdout
    assert (
        graph.read(cypher.memory_browser_query(memory.run).replace("RETURN c, k, f", "RETURN count(c) AS n"))[0]["n"]
        == 3
    )


def test_runs_live_side_by_side_and_bad_feedback_is_named(graph, runs):
    a, b = runs(), runs()
    a.record([_fb("A", "5D", -1, -1, "2015-07-28T20:00:00Z", [NEWS[0].id])])
    b.record([_fb("A", "5D", 1, -1, "2015-07-28T20:00:00Z", [NEWS[0].id])])
    a.apply_matured("2015-07-28T20:00:00Z")
    b.apply_matured("2015-07-28T20:00:00Z")
    w = 1 / (3 * 0.207)
    assert list(a.cells()) == list(b.cells()) == [("news", EARNINGS, "5D")]
    assert a.cells()[("news", EARNINGS, "5D")] == pytest.approx((w, 0.0))
    assert b.cells()[("news", EARNINGS, "5D")] == pytest.approx((0.0, w))
    with pytest.raises(ValueError, match="feedback X/2D: horizon '2D' has no validation label frequencies"):
        a.record([_fb("X", "2D", 1, 1, "2015-07-28T20:00:00Z", [])])
    with pytest.raises(ValueError, match="feedback X/1D: label must be -1, 0 or 1, got 2"):
        a.record([_fb("X", "1D", 1, 2, "2015-07-28T20:00:00Z", [])])
    with pytest.raises(ValueError, match="has no timezone"):
        a.apply_matured("2015-07-28T20:00:00")


def _history(n: int) -> list[Feedback]:
    """n anchors of alternating event types, 3D, predicted +1, true label +1, each citing one passage."""
    ids = list(CONTEXT)
    return [_fb(f"H{i}", "3D", 1, 1, "2015-08-03T20:00:00Z", [ids[i % len(ids)]], EVENT_TYPES[i % 2]) for i in range(n)]


def test_shuffled_label_control_is_seeded_and_follows_the_validation_distribution(runs):
    control = MemoryControl("shuffled_label", seed=3)
    draws = [control.draw_label(f"run|A{i}|3D", VALIDATION["3D"]) for i in range(4000)]
    assert draws == [
        MemoryControl("shuffled_label", seed=3).draw_label(f"run|A{i}|3D", VALIDATION["3D"]) for i in range(4000)
    ]
    shares = Counter(draws)
    assert abs(shares[0] / 4000 - 0.615) < 0.03 and abs(shares[1] / 4000 - 0.192) < 0.03
    other = [MemoryControl("shuffled_label", seed=4).draw_label(f"run|A{i}|3D", VALIDATION["3D"]) for i in range(200)]
    assert other != draws[:200]
    # in the graph: the same seed gives the same cells under two run ids, the true labels other cells
    cells = []
    for seed in (3, 3):
        m = runs(MemoryControl("shuffled_label", seed=seed))
        m.record(_history(40))
        m.apply_matured("2015-08-03T20:00:00Z")
        cells.append(m.cells())
    assert cells[0] == cells[1]
    true = runs()
    true.record(_history(40))
    true.apply_matured("2015-08-03T20:00:00Z")
    assert all(b == 0 for _, b in true.cells().values())  # every prediction was right
    assert any(b > 0 for _, b in cells[0].values())  # shuffled labels make some of them wrong


def test_shuffled_event_type_control_permutes_the_update_key(runs):
    control = MemoryControl("shuffled_event_type", seed=1, event_types=EVENT_TYPES)
    perm = control.permutation()
    assert sorted(perm) == sorted(perm.values()) == sorted(EVENT_TYPES)  # a permutation
    assert perm == MemoryControl("shuffled_event_type", seed=1, event_types=EVENT_TYPES).permutation()
    assert any(
        perm != MemoryControl("shuffled_event_type", seed=s, event_types=EVENT_TYPES).permutation() for s in range(2, 6)
    )
    m = runs(control)
    m.record(_history(4))
    m.apply_matured("2015-08-03T20:00:00Z")
    assert {e for _, e, _ in m.cells()} == {perm[EARNINGS], perm[LEGAL]}
    with pytest.raises(ValueError, match="needs the list"):
        MemoryControl("shuffled_event_type", seed=1)
    with pytest.raises(ValueError, match="not among the control's event types"):
        m.record([_fb("Z", "3D", 1, 1, "2015-08-03T20:00:00Z", [], "Weather")])
