"""Count questions answered by the ``table_count`` tool (generation/agent/counting.py, seed 001 §4.4): "how many
years did <row> exceed <amount>?". Real TAT-QA contexts: tests/data/tatqa_count_sample.json (every training-half
context of TAT-QA dev with such a question, data/NOTICE.md) and tests/data/tatqa_dev_sample.json. Gold answers are
the dataset's; no LLM is called on this route (the harness test passes no client)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from simpleeval import simple_eval

from finkg.eval.tatqa import agent_systems
from generation.agent.counting import answer_count
from generation.agent.questions import threshold_count
from generation.agent.tables import match_row, table_count
from ingest.datasets.tatqa import read_tatqa

DATA = Path(__file__).parent / "data"
COUNT = read_tatqa(DATA / "tatqa_count_sample.json")
SAMPLE = read_tatqa(DATA / "tatqa_dev_sample.json")


def _questions(contexts):
    return [(c, q) for c in contexts for q in c.questions]


def test_threshold_questions_are_parsed_and_no_other_question_is():
    got = threshold_count("How many years did Total services exceed $5,000 million?")
    assert got is not None and (got.subject, got.op, got.threshold, got.scale) == (
        "Total services",
        ">",
        5_000_000_000.0,
        "million",
    )
    rd = threshold_count(
        "From 2017 to 2019, how many of the years was the research and development more than 5 million?"
    )
    assert rd is not None and (rd.subject, rd.op, rd.threshold) == ("research and development", ">", 5_000_000.0)
    below = threshold_count("How many years did the net loss be less than $2,000 thousand?")
    assert below is not None and below.op == "<" and below.threshold == 2_000_000.0
    amount = threshold_count("How many years did the amount of Finished Goods exceed $10,000 thousand?")
    assert amount is not None and amount.subject == "Finished Goods"
    parsed = [q for _, q in _questions(COUNT + SAMPLE) if threshold_count(q.question)]
    # every parsed question is a count question with "years"; the segment and component counts are not parsed
    assert parsed and all(q.answer_type == "count" and "years" in q.question for q in parsed)
    assert threshold_count("How many expenses segments in 2019 were above $50 million?") is None
    assert threshold_count("How many years did revenue exceed the budget?") is None  # no amount


def test_the_route_answers_the_training_half_with_the_datasets_gold():
    answered, declined = [], []
    for c, q in _questions(COUNT):
        got = answer_count(q.question, c.table, [p.text for p in c.passages])
        if threshold_count(q.question) is None:
            assert got is None, q.question
            continue
        if got is None:
            declined.append(q.question)
            continue
        answered.append(q.question)
        assert got.status == "answered" and got.answer == str(q.answer), (q.question, got.answer, q.answer)
        assert got.verdict is not None and got.verdict.passed and got.verdict.answer_type == "count"
        assert [s.kind for s in got.steps] == ["tool", "gate"] and got.steps[0].output["tool"] == "table_count"
        # the derivation re-evaluates (simpleeval, not finkg) to the gold count, its operands as the table shows them
        d = got.derivation
        assert simple_eval(d["expression"], names=d["operands"]) == d["result"] == float(q.answer)
        shown = {float(x.replace(",", "")) for row in c.table for x in re.findall(r"\d[\d,]*(?:\.\d+)?", " ".join(row))}
        assert set(d["operands"].values()) <= shown
    assert len(answered) == 4
    # "Current income tax expense (benefit):" is a section row (its Federal and State rows sum to it): no number
    # to compare, so the route declines and the LLM routes answer
    assert declined == ["How many years did the Current income tax expense exceed $2 thousand? "]


def test_cells_are_read_in_the_tables_scale_else_the_texts_else_the_questions():
    c = next(c for c in SAMPLE if any("Income tax benefit" in q.question for q in c.questions))
    q = next(q for q in c.questions if "Income tax benefit" in q.question)
    got = answer_count(q.question, c.table, [p.text for p in c.passages])
    assert got is not None and got.answer == str(q.answer) == "1"
    # the same table read as dollars instead of the question's thousands would count no year
    flat = answer_count(q.question.replace("$1,500 thousand", "$1,500,000"), c.table, ["amounts in units"])
    assert flat is not None and flat.answer == "0"


def test_a_row_is_matched_only_when_the_question_names_it():
    c = next(c for c in SAMPLE if any("Total services" in q.question for q in c.questions))
    labels = [r[0] for r in c.table]
    i = match_row(c.table, "Total services")
    assert i is not None and labels[i] == "Total services"
    assert match_row(c.table, "total SERVICES") == i  # case-insensitive
    # a phrase that only contains a short label somewhere is not that row
    assert match_row(c.table, "the percentages of net revenue from EMEA of total revenue") is None
    assert match_row(c.table, "goodwill impairment") is None


def test_the_agent_harness_answers_count_questions_without_an_llm():
    c = next(c for c in SAMPLE if any("Total services" in q.question for q in c.questions))
    q = next(q for q in c.questions if "Total services" in q.question)
    answer = agent_systems(None, tables={c.table_uid: c.table})["agent"]  # type: ignore[arg-type]
    text = answer(q.question, list(c.facts), list(c.passages))
    assert (
        text.endswith(f"Answer: {q.answer}")
        and "(y2020 > 5000) + (y2019 > 5000) + (y2018 > 5000) with y2020=5753" in text
    )


@pytest.mark.parametrize("question", ["How many years did Total services exceed $5,000 million?"])
def test_a_table_without_the_row_falls_back(question):
    c = next(c for c in COUNT if c.table)
    assert answer_count(question, c.table) is None
    assert answer_count(question, None) is None


def test_a_percentage_threshold_compares_percentages_only():
    c = next(c for c in COUNT if any("net sales from Americas" in q.question for q in c.questions))
    # the year columns hold net sales in dollars; the "% of Total" columns carry no year in their header
    question = "How many years did the percentages of net sales from Americas exceed 25%?"
    ask = threshold_count(question)
    assert ask is not None and ask.percent and ask.threshold == 0.25
    assert answer_count(question, c.table) is None  # never 259,105 > 0.25
    refused = table_count(c.table, "Americas", ">", 0.25, percent=True)
    assert not refused.ok and "no percentage cell" in (refused.error or "")
    share = table_count(c.table, "Americas", ">", 0.25, columns="all", percent=True)
    assert share.ok and [x["text"] for x in share.detail["cells"]] == ["21.6%", "29.6%"] and share.value == 1
