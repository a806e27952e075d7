"""The answer gate (generation/agent/gate.py, seed 001 §4.4): traceable numbers, direction words, answer type."""

from __future__ import annotations

import pytest

from generation.agent.arithmetic import calculate, compare
from generation.agent.gate import check_answer, direction_of, gate_report

# The README demo's jnj-2009q2 case: the cited facts and the tool's difference (issue 17)
JNJ_EVIDENCE = [
    "JOHNSON & JOHNSON current assets at 2009-06-30: USD 35,494,000,000 [0000950123-09-029672:200406:AssetsCurrent:20090630:0:USD]",
    "JOHNSON & JOHNSON current liabilities at 2009-06-30: USD 19,886,000,000 [0000950123-09-029672:200406:LiabilitiesCurrent:20090630:0:USD]",
]
SALES_ROWS = [
    "Fixed Price | $  1,452.4 | $  1,146.2 | $  1,036.9",
    "Other | 44.1 | 56.7 | 70.8",
    "Total sales | $1,496.5 | $1,202.9 | $1,107.7",
]


def _working_capital():
    r = calculate("ca - cl", {"ca": 35_494_000_000, "cl": 19_886_000_000})
    assert r.value == 15_608_000_000
    return r


def test_a_miscopied_difference_fails_even_with_cited_facts():
    v = check_answer("15,603,000,000", "arithmetic", [_working_capital()], JNJ_EVIDENCE)
    assert not v.passed and not v.checks["numbers_traced"]
    assert "15,603,000,000" in v.reasons[0] and "15,608,000,000" in v.reasons[0]
    assert v.numbers[0].source is None


def test_the_tool_output_passes_in_any_scale():
    tool = _working_capital()
    for answer in ("15,608,000,000", "USD 15,608,000,000", "$15.608 billion", "15.6 billion", "15,608 million"):
        v = check_answer(answer, "arithmetic", [tool], JNJ_EVIDENCE)
        assert v.passed, (answer, v.reasons)
        assert v.numbers[0].source == "tool:calculate"
    # a failed tool call produces nothing to trace to
    assert not check_answer("1", "arithmetic", [calculate("1 / 0", {})], []).passed


def test_a_number_present_only_in_evidence_passes():
    v = check_answer("$1,496.5", "span", [], SALES_ROWS)
    assert v.passed and v.numbers[0].source == "evidence"
    assert check_answer("35,494,000,000", "span", [], JNJ_EVIDENCE).passed
    assert check_answer("$35.5 billion", "span", [], JNJ_EVIDENCE).passed  # scale-aware, rounded as written
    assert not check_answer("$36.5 billion", "span", [], JNJ_EVIDENCE).passed


def test_percentages_trace_to_fractions_and_rounding_is_bounded_by_the_digits_written():
    pct = calculate("(a - b) / b * 100", {"a": 44.1, "b": 56.7})  # TAT-QA gold -22.22
    assert check_answer("-22.22", "arithmetic", [pct], SALES_ROWS).passed
    assert check_answer("-22.22%", "arithmetic", [pct], SALES_ROWS).passed
    frac = calculate("(a - b) / b", {"a": 44.1, "b": 56.7})
    assert check_answer("-22.2%", "arithmetic", [frac], SALES_ROWS).passed
    assert not check_answer("-22.3%", "arithmetic", [frac], SALES_ROWS).passed


def test_increased_with_a_negative_change_fails():
    c = compare(56.7, 44.1)  # Other, 2018 -> 2019
    v = check_answer("Other increased by 12.6", "span", [c], SALES_ROWS)
    assert not v.passed and not v.checks["direction"] and v.direction == "increased"
    assert "decreased" in v.reasons[0] and v.change is not None and v.change < 0
    ok = check_answer("Other decreased by 12.6", "span", [c], SALES_ROWS)
    assert ok.passed, ok.reasons
    # the caller's change wins over a compare call
    assert not check_answer("it went up", "span", [], [], change=-1.0).passed
    assert check_answer("unchanged", "span", [], [], change=0.0).passed


def test_a_direction_with_no_computed_change_needs_the_evidence_to_say_it():
    # fed-zero-2008-12: "China's money supply was moving downward" with no money-supply fact selected
    v = check_answer(
        "China's money supply was moving downward", "span", [], ["The federal funds rate target is 0 to 1/4 percent."]
    )
    assert not v.passed and "no change was computed" in v.reasons[0]
    assert check_answer("sales declined", "span", [], ["Net sales declined in fiscal 2019."]).passed


def test_the_answer_type_must_match_the_question_type():
    tool = _working_capital()
    assert not check_answer(["15,608,000,000", "35,494,000,000"], "arithmetic", [tool], JNJ_EVIDENCE).passed
    span = check_answer("Fixed Price", "arithmetic", [], SALES_ROWS)
    assert not span.checks["answer_type"]
    assert list(span.reasons) == ["the question is arithmetic and needs exactly one number; the answer is span"]
    assert check_answer(["Fixed Price", "Other"], "multi-span", [], SALES_ROWS).passed
    assert not check_answer("Fixed Price", "multi-span", [], SALES_ROWS).passed
    three = calculate("a + b + c", {"a": 1, "b": 1, "c": 1})
    assert check_answer("3", "count", [three], []).passed
    v = check_answer("2.5", "count", [calculate("a", {"a": 2.5})], [])
    assert not v.passed and v.answer_type == "arithmetic"
    assert not check_answer("", "span", [], []).passed
    with pytest.raises(ValueError):
        check_answer("x", "boolean", [], [])


def test_years_and_dates_trace_exactly():
    rows = ["| 2019 | 2018 | 2017", *SALES_ROWS]
    assert check_answer("2019", "span", [], rows).passed
    assert not check_answer("2016", "span", [], rows).passed
    assert direction_of("rose then fell") == "mixed"


def test_the_verdict_is_recordable():
    d = check_answer("15,603,000,000", "arithmetic", [_working_capital()], JNJ_EVIDENCE).as_dict()
    assert d["passed"] is False and d["numbers"][0]["text"] == "15,603,000,000" and d["checks"]["answer_type"]


# The README demo's cn-prices-2016-06 case (stop 29): the tool loop's answer was the model's complaint about a
# calculate call's operand name, and it passed the gate because it states no number but a date of the facts.
CPI_FACT = (
    "China rural CPI, year-on-year change: 2.10% in the month ending 2016-05-31, a decrease of 0.30 percentage "
    "points from 2.40% in the month ending 2016-04-30 (the previous month)."
)
CPI_QUESTION = "Do consumer and producer prices point to deflation risk in China in mid-2016?"
CPI_ANSWER = (
    "The observation is incorrect because the operand name 'akshare:cn_cpi_rural_yoy:2016-05-31:change_prev' is "
    "not an identifier (letters, digits, _) as it contains a colon. The correct operand name should be "
    "'akshare:cn_cpi_rural_yoy:2016-05-31:change_prev'."
)


def test_a_made_up_text_answer_fails_when_quotes_are_required():
    failed_call = calculate("a:b - c", {"a:b": 2.1, "c": 2.0})
    assert not failed_call.ok  # the tool's error is no source to quote
    v = check_answer(CPI_ANSWER, "span", [failed_call], [CPI_FACT], quote_from=[CPI_QUESTION])
    assert not v.passed and v.checks["quoted"] is False and v.checks["numbers_traced"]
    assert "observation, incorrect, operand" in v.reasons[0] and "quote the facts" in v.reasons[0]
    # without quote_from (the TAT-QA span route) the check does not run: the answer passed as it did in the demo
    assert check_answer(CPI_ANSWER, "span", [failed_call], [CPI_FACT]).passed


def test_a_quoted_text_answer_passes_and_numbers_are_left_to_the_number_check():
    text = "Net sales increased primarily due to higher volumes in the Americas and favorable pricing."
    question = "What was the reason for the increase in net sales?"
    ok = check_answer("higher volumes in the Americas", "span", [], [text], quote_from=[question])
    assert ok.passed and ok.checks["quoted"]
    # one unquoted word of five content words is within QUOTE_SHARE; one of three ("higher" is a direction word) is not
    assert check_answer(
        "volumes in the Americas and Europe, favorable pricing", "span", [], [text], quote_from=[]
    ).passed
    assert not check_answer("higher volumes in the Americas and Europe", "span", [], [text], quote_from=[]).passed
    bad = check_answer("strong consumer demand", "span", [], [text], quote_from=[question])
    assert not bad.passed and "strong, consumer, demand" in bad.reasons[0]
    # direction words are the direction check's business, question words may be repeated
    assert check_answer("net sales increased", "span", [], [text], quote_from=[question]).passed
    # an item with an amount is judged by its number, not its wording
    amount = check_answer(
        "Working capital of USD 15,608,000,000", "arithmetic", [_working_capital()], JNJ_EVIDENCE, quote_from=[]
    )
    assert amount.passed and amount.checks["quoted"]


# ----------------------------------------------------------------------------------------- the report path


def test_the_report_gate_marks_the_readme_demo_failures():
    # fed-zero-2008-12: a direction claim about China's money supply, no money-supply fact cited
    cited = [("cn_treasury_10y", "China treasury yield, 10-year: 3.62 % on 2008-12-15.")]
    answer = "China's money supply was moving downward. The 10-year yield was 3.62% [F1]."
    g = gate_report(answer, [("3.62%", "verified")], cited)
    assert not g.passed and g.unsupported == (
        {
            "sentence": "China's money supply was moving downward.",
            "topic": "money supply",
            "why": "no cited fact is about money supply",
        },
    )
    assert g.text == (
        "China's money supply was moving downward. [unsupported: no cited fact is about money supply] "
        "The 10-year yield was 3.62% [F1]."
    )
    assert g.as_dict()["verdict"] == "could not verify"
    # the same claim with a money-supply fact cited that states the change passes (a level alone does not: the
    # trend check)
    level = [*cited, ("cn_m2_yoy", "China M2 money supply, year-on-year: 14.8 % in 2008-11.")]
    assert gate_report(answer, [("3.62%", "verified")], level).unsupported[0]["why"] == "no cited fact states a change"
    m2 = [
        *cited,
        ("cn_m2_yoy", "China M2 money supply, year-on-year: 14.8 % in 2008-11, a decrease of 1.2 percentage points."),
    ]
    assert gate_report(answer, [("3.62%", "verified")], m2).passed
    # jnj-2009q2: 15,603,000,000 is not what the cited facts give (35,494,000,000 - 19,886,000,000)
    jnj = [("AssetsCurrent", "current assets 35494000000"), ("LiabilitiesCurrent", "current liabilities 19886000000")]
    g = gate_report(
        "Current assets exceed current liabilities by USD 15,603,000,000 [unverified] [F1, F2].",
        [("USD 15,603,000,000", "unverified")],
        jnj,
    )
    assert not g.passed and g.unverified == ("USD 15,603,000,000",) and not g.unsupported
    assert "could not verify 1 number(s)" in g.reasons[0]
    # a sentence with no claim (no number, no direction) about an uncited indicator is left alone
    assert gate_report("Money supply matters for banks.", [], []).passed
