"""The item ledger (kg/ledger.py) in the real Neo4j: what users rely on when a batch is rerun. An item is made
again when it was never made, failed, stopped at a checkpoint stage or was made from other inputs; a checkpoint
does not count as an attempt; a status the output did not declare is refused before anything is written."""

from __future__ import annotations

import pytest

from kg.ledger import DONE, FAILED, Ledger, at_stage, digest, is_pending


def test_pending_items_are_the_unmade_the_failed_the_staged_and_the_changed(graph, label):
    ledger = Ledger(graph, label, stages=("proposed",))
    a, b, c, d = digest("a"), digest("b"), digest("c"), digest("d")
    ledger.record(
        [
            {"id": "done", "status": DONE, "input_digest": a, "note": "kept"},
            {"id": "failed", "status": FAILED, "input_digest": b, "error": "ValueError: bad row 3"},
            {"id": "staged", "status": "proposed", "input_digest": c},
        ]
    )
    items = {"done": a, "failed": b, "staged": c, "new": d}
    assert ledger.pending(items) == ["failed", "staged", "new"]
    assert ledger.pending({**items, "done": digest("a, repaired")}) == ["done", "failed", "staged", "new"]
    assert ledger.pending(items, redo=True) == list(items)
    state = ledger.state(["done", "failed", "staged"])
    assert state["failed"]["error"] == "ValueError: bad row 3" and state["done"]["error"] == ""
    # the pure form, for rows a pipeline has read already
    assert not is_pending(state["done"], a) and is_pending(state["done"], a, redo=True)
    assert is_pending(None, a) and is_pending(state["staged"], c) and is_pending(state["done"], b)
    # a stage is gone on from only when reached from the same input
    assert at_stage(state["staged"], "proposed", c) and not at_stage(state["staged"], "proposed", d)
    assert not at_stage(state["done"], "proposed", a) and not at_stage(None, "proposed", c)
    # a checkpoint is not an attempt; each outcome is
    ledger.record([{"id": "staged", "status": DONE, "input_digest": c}])
    ledger.done("done", a)
    after = ledger.state(["done", "failed", "staged"])
    assert (after["staged"]["attempts"], after["done"]["attempts"], after["failed"]["attempts"]) == (1, 2, 1)
    extra = graph.read(f"MATCH (n:{label} {{id: 'done'}}) RETURN n.note AS note, n.ledger_at AS at")
    assert extra[0]["note"] == "kept" and extra[0]["at"]


def test_a_status_the_output_did_not_declare_is_refused_and_nothing_is_written(graph, label):
    ledger = Ledger(graph, label)
    with pytest.raises(ValueError, match=r"ledger status 'proposed': expected one of \['done', 'failed'\]"):
        ledger.record([{"id": "x", "status": DONE, "input_digest": "d"}, {"id": "y", "status": "proposed"}])
    assert ledger.state(["x", "y"]) == {}
    with pytest.raises(ValueError, match="outcomes, not stages"):
        Ledger(graph, label, stages=(DONE,))
    with pytest.raises(ValueError):
        Ledger(graph, "Not a label; MATCH (n) DETACH DELETE n")
