"""Every number of a generated report is verified against a fact, is context, or is marked: the rules of
generation/verify/report_numbers.py and the citation parsing of the two-stage generator, on real values (the
ChinaBond 10-year yield and SHIBOR of 2015-06-30, a 2009 10-Q revenue figure)."""

from __future__ import annotations

import pytest

from generation.report.two_stage import parse_citations, points_schema, render_points, selection_schema
from generation.verify.report_numbers import MARK, check_numbers
from retrieval.facts.indicators import FinancialFact

YIELD = FinancialFact(
    "akshare:cn_treasury_yield_10y:2015-06-30:level",
    "China treasury yield, 10-year: 3.62 % on 2015-06-30.",
    (3.62,),
    "%",
    "2015-06-30",
    "cn_treasury_yield_10y",
    "akshare:bond_china_yield",
    (("Observation", "id", "cn_treasury_yield_10y:2015-06-30"),),
)
CHANGE = FinancialFact(
    "akshare:cn_treasury_yield_10y:2015-06-30:change_3m",
    "China treasury yield, 10-year: 3.62 % on 2015-06-30, up 0.05 pp from 3.57 % on 2015-03-31.",
    (3.62, 0.05, 3.57),
    "pp",
    "2015-06-30",
    "cn_treasury_yield_10y",
    "akshare:bond_china_yield",
)
REVENUE = FinancialFact(
    "0001193125-09-189177:1:Revenues:20090630:USD",
    "ACME revenue was USD 1,234,567,000.",
    (1234567000.0,),
    "USD",
    "2009-06-30",
    "Revenues",
    "sec:2009q3.zip",
)
SHORT = {"F1": YIELD.id, "F2": CHANGE.id, "F3": REVENUE.id}


def test_numbers_cited_in_their_sentence_are_verified():
    text = "The 10-year yield stood at 3.62% [F1], 0.05 pp above its level three months earlier [F2]."
    marked, checks = check_numbers(text, "Where were China's bond yields?", [YIELD, CHANGE, REVENUE], SHORT)
    assert marked == text
    assert [(c.text, c.status) for c in checks] == [("3.62%", "verified"), ("0.05", "verified")]
    assert checks[0].fact_id == YIELD.id and checks[0].cited_in_sentence
    # "10-year" is a tenor, not a value: neither verified nor marked
    assert all(c.text != "10" for c in checks)


def test_a_number_no_fact_carries_is_marked_and_kept():
    text = "Yields rose to 3.70% [F1] while revenue reached $1.2 billion [F3]."
    marked, checks = check_numbers(text, "q", [YIELD, CHANGE, REVENUE], SHORT)
    assert [(c.text, c.status) for c in checks] == [("3.70%", "unverified"), ("$1.2 billion", "verified")]
    assert marked == "Yields rose to 3.70%" + MARK + " [F1] while revenue reached $1.2 billion [F3]."
    # rounding: $1.2 billion stands for 1.15e9 .. 1.25e9, and the fact is 1.2346e9
    assert checks[1].fact_id == REVENUE.id


def test_uncited_support_dates_and_question_numbers():
    text = "On June 30, 2015 the yield was 3.57% three months before; in 2015 the question's 2 percent goal held."
    marked, checks = check_numbers(text, "Is inflation near the 2 percent goal?", [CHANGE], SHORT)
    got = {c.text: (c.status, c.why) for c in checks}
    assert got["June 30, 2015"][0] == "context" and got["2015"][0] == "context"
    assert got["3.57%"] == ("verified", "a fact the report was given")
    assert got["2 percent"][0] == "context"
    assert MARK not in marked


def test_citations_are_parsed_and_out_of_range_ids_recorded():
    facts, knowledge, invalid = parse_citations("Rates fell [F2, K1]. Growth slowed [F2][F9]. See [K3; F1].", 3, 2)
    assert facts == [1, 0] and knowledge == [0] and invalid == ["F9", "K3"]
    schema = selection_schema(3, 2)
    assert schema["properties"]["facts"]["items"]["enum"] == ["F1", "F2", "F3"]
    assert schema["properties"]["facts"]["maxItems"] == 2


def test_cited_points_answers_cite_only_shown_ids_and_render_as_checkable_text():
    schema = points_schema(2, 1)
    point = schema["properties"]["points"]
    assert point["maxItems"] == 4 and point["items"]["properties"]["cites"]["items"]["enum"] == ["F1", "F2", "K1"]
    assert point["items"]["properties"]["cites"]["minItems"] == 1  # a claim cannot go uncited
    assert points_schema(0, 0)["properties"]["points"]["items"]["properties"]["cites"]["maxItems"] == 0
    answer = render_points(
        {
            "points": [
                {"claim": "The 10-year yield was 3.62 %.", "cites": ["F1", "F1", "K1"]},
                {"claim": "It rose 0.05 pp over three months.", "cites": ["F2"]},
            ],
            "conclusion": "Long yields edged up.",
        }
    )
    assert answer == (
        "The 10-year yield was 3.62 % [F1, K1].\nIt rose 0.05 pp over three months [F2].\n"
        "Conclusion: Long yields edged up."
    )
    # the rendered text goes through the same citation reader and number check as free text
    assert parse_citations(answer, 2, 1) == ([0, 1], [0], [])
    _marked, checks = check_numbers(answer, "How did yields move?", [YIELD, CHANGE], SHORT)
    got = {c.text: (c.status, c.fact_id, c.cited_in_sentence) for c in checks}
    assert got == {"3.62 %": ("verified", YIELD.id, True), "0.05": ("verified", CHANGE.id, True)}
    long = "Yields fell across the curve " + "and kept falling " * 20
    cut = render_points({"points": [{"claim": long[:280], "cites": ["F1"]}], "conclusion": long[:280]})
    assert cut.splitlines()[0].endswith(" … [F1].") and cut.splitlines()[1].endswith(" …")
    for bad in ({"facts": []}, {"points": [{"cites": ["F1"]}], "conclusion": "x"}, ["F1"], {"points": []}):
        with pytest.raises(ValueError, match=r"points|point|no claim"):
            render_points(bad)
