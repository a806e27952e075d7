"""bench/ask_user_questions.py's scorer on hand-written answers (no Neo4j): a wrong number is wrong, 0.5 % off is
correct, an abstention on an abstain question is correct, a ratio question answered in USD is wrong, and the
company of a comparison and the order of a ranking are read from ``pick`` or from the answer's text."""

from __future__ import annotations

import pytest
from conftest import bench_script

B = bench_script("ask_user_questions")

VALUE = {"id": "v", "kind": "value", "gold": {"value": 1_395_000_000.0, "unit": "USD"}, "companies": []}
MARGIN = {"id": "r", "kind": "ratio", "gold": {"value": 23.4, "unit": "%"}, "companies": []}
DE = {"id": "d", "kind": "ratio", "gold": {"value": 0.4863, "unit": "x"}, "companies": []}
ABSTAIN = {"id": "a", "kind": "abstain", "gold": "abstain", "companies": []}
COMPARE = {
    "id": "c",
    "kind": "compare",
    "gold": {"winner": "SPRINT NEXTEL CORP", "winner_cik": 101830, "difference": 0.502054, "unit": "x"},
    "companies": [{"cik": 732712, "name": "VERIZON COMMUNICATIONS INC"}, {"cik": 101830, "name": "SPRINT NEXTEL CORP"}],
}
RANK = {
    "id": "k",
    "kind": "rank",
    "gold": {"order": ["TEXAS INSTRUMENTS INC", "FIRST SOLAR, INC.", "SYMANTEC CORP"]},
    "companies": [],
}


def ans(answer=None, status="answered", **kw):
    return {"answer": answer, "status": status, **kw}


def test_a_wrong_number_is_wrong_and_half_a_percent_off_is_correct():
    assert B.judge(VALUE, ans("USD 1,395,000,000")) == ("correct", True)
    assert B.judge(VALUE, ans("USD 1,402,000,000")) == ("correct", True)  # 0.5 % off
    assert B.judge(VALUE, ans("USD 1,450,000,000")) == ("wrong_gate_passed", False)  # 3.9 % off
    assert B.judge(VALUE, ans("USD 1,395,000")) == ("wrong_gate_passed", False)  # 10^3 off
    assert B.judge(MARGIN, ans("23.5%")) == ("correct", True)
    assert B.judge(MARGIN, ans("25.0%")) == ("wrong_gate_passed", False)
    # the engine's value field wins over the text
    assert B.judge(MARGIN, ans("about a quarter", value=23.3, unit="%")) == ("correct", True)
    assert B.judge(DE, ans("0.49", value=0.4863 * 1.005, unit="x")) == ("correct", True)


def test_an_abstention_is_correct_only_on_an_abstain_question():
    assert B.judge(ABSTAIN, ans(None, status="not in graph")) == ("correct", True)
    assert B.judge(ABSTAIN, ans("USD 5", status="could not verify")) == ("correct", True)
    assert B.judge(ABSTAIN, ans("USD 1,000,000")) == ("wrong_gate_passed", False)
    assert B.judge(VALUE, ans(None, status="not in graph")) == ("abstained", False)
    assert B.judge(VALUE, ans(None, status="error")) == ("abstained", False)


def test_a_ratio_question_answered_in_usd_is_wrong():
    assert B.judge(DE, ans("USD 11,371,518,000")) == ("wrong_gate_passed", False)
    assert B.judge(DE, ans("0.49", value=0.4863, unit="USD")) == ("wrong_gate_passed", False)
    assert B.judge(MARGIN, ans("$23.4")) == ("wrong_gate_passed", False)
    assert B.judge(VALUE, ans("1395000000", value=1_395_000_000.0, unit="%")) == ("wrong_gate_passed", False)


def test_compare_needs_the_winner_and_the_difference():
    text = "Sprint Nextel had the higher current ratio (1.32 vs 0.82), by 0.50."
    assert B.judge(COMPARE, ans(text)) == ("correct", True)
    wrong = "Verizon had the higher current ratio, by 0.50 over Sprint."
    assert B.judge(COMPARE, ans(wrong)) == ("wrong_gate_passed", False)
    assert B.judge(COMPARE, ans("Sprint Nextel, by 0.9")) == ("wrong_gate_passed", False)
    assert B.judge(COMPARE, ans("x", pick=["SPRINT NEXTEL CORP"], value=0.5023)) == ("correct", True)
    assert B.judge(COMPARE, ans("x", pick=["VERIZON COMMUNICATIONS INC"], value=0.5023)) == ("wrong_gate_passed", False)


def test_rank_needs_the_order():
    assert B.judge(RANK, ans("1. Texas Instruments 3.1, 2. First Solar 2.5, 3. Symantec 1.1"))[1]
    assert not B.judge(RANK, ans("1. First Solar, 2. Texas Instruments, 3. Symantec"))[1]
    assert not B.judge(RANK, ans("Texas Instruments, then First Solar"))[1]  # one missing
    assert B.judge(RANK, ans("x", pick=["TEXAS INSTRUMENTS INC", "FIRST SOLAR, INC.", "SYMANTEC CORP"]))[1]
    assert not B.judge(RANK, ans("x", pick=["SYMANTEC CORP", "FIRST SOLAR, INC.", "TEXAS INSTRUMENTS INC"]))[1]


def test_numbers_are_read_as_analysts_write_them():
    assert B.numbers("USD 1,234") == [(1234.0, "usd")]
    assert B.numbers("23.4%") == [(23.4, "%")]
    assert B.numbers("-5.2% and 1.52x") == [(-5.2, "%"), (1.52, "x")]
    assert B.numbers("$(1,234)") == [(-1234.0, "usd")]
    # dates, quarters and years are no answer
    assert B.numbers("In the quarter ended June 30, 2009 (Q2 2009, fiscal 2009): USD 7") == [(7.0, "usd")]
    text = "For the quarter ended June 30, 2009, Corning's revenue was USD 1,395,000,000."
    assert B.judge(VALUE, ans(text)) == ("correct", True)
    assert B.company_key("J P MORGAN CHASE & CO") == "morgan"


def test_wilson_intervals_and_the_summary():
    lo, hi = B.wilson(45, 50)
    assert lo == pytest.approx(0.786, abs=1e-3) and hi == pytest.approx(0.957, abs=1e-3)
    rows = [
        {"category": "correct", "status": "answered", "seconds": 1.0},
        {"category": "abstained", "status": "error", "seconds": 3.0},
        {"category": "wrong_gate_passed", "status": "answered", "seconds": 2.0},
    ]
    s = B.summarize(rows)
    assert s["n"] == 3 and s["correct"]["count"] == 1 and s["errors"] == 1 and s["median_seconds"] == 2.0
