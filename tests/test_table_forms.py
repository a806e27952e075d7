"""The table-forms rule of the answer engine (generation/agent/table_forms.py, issue 44 item 3) on real TAT-QA
contexts of the training half (tests/data/tatqa_forms_sample.json, data/NOTICE.md; tests/test_tatqa_split.py checks
that no question of it is a frozen test question): every answer is scored by
TAT-QA's metric against the dataset's gold, every derivation re-evaluated from the table's cells, and the
questions it must leave to the model are left."""

from __future__ import annotations

from pathlib import Path

import pytest

from finkg.eval.metrics.tatqa import gold_answers, score
from finkg.eval.tatqa import agent_text
from generation.agent.table_forms import answer_table_form, read_form, year_column
from generation.llm.answer_line import extract_answer
from ingest.datasets.tatqa import TatqaContext, read_tatqa
from retrieval.facts.tables import parse_numbers

SAMPLE = Path(__file__).parent / "data" / "tatqa_forms_sample.json"


@pytest.fixture(scope="module")
def contexts() -> list[TatqaContext]:
    return read_tatqa(SAMPLE)


def _questions(contexts: list[TatqaContext]):
    for c in contexts:
        for q in c.questions:
            yield c, q


def _em(text: str, q) -> float:
    got = extract_answer(text)
    gold = gold_answers({"answer": q.answer, "answer_type": q.answer_type})
    return score(list(got.spans), got.scale, gold, q.answer_type, q.scale or "").em


def test_every_rule_answer_in_the_sample_is_the_gold(contexts):
    answered = {}
    for c, q in _questions(contexts):
        got = answer_table_form(q.question, c.table, [p.text for p in c.passages])
        if got is None:
            continue
        answer, scale = got
        assert answer.status == "answered" and answer.verdict is not None and answer.verdict.passed
        assert _em(agent_text(answer, scale), q) == 1.0, (q.question, answer.answer, scale, q.answer, q.scale)
        form = read_form(q.question)
        assert form is not None
        answered[form.form] = answered.get(form.form, 0) + 1
    assert answered == {
        "value": 1,
        "which year": 2,
        "change": 1,
        "percentage change": 2,
        "average": 4,
        "respective": 3,
        "sum": 1,
    }


def test_a_derivation_is_the_tables_cells_and_recomputes(contexts):
    """ "What is the percentage change in Other in 2019 from 2018?": y2019 and y2018 are the row's cells as shown,
    the expression re-evaluated gives the result, and the answer is in percent."""
    c = contexts[0]
    q = next(q for q in c.questions if q.question.startswith("What is the percentage change in Other"))
    got = answer_table_form(q.question, c.table, [p.text for p in c.passages])
    assert got is not None
    answer, scale = got
    d = answer.derivation
    row = next(r for r in c.table if r[0].strip() == "Other")
    rows = [list(r) for r in c.table]
    assert d["operands"]["y2019"] == parse_numbers(row[year_column(rows, 2019) or 0])[0]
    assert d["operands"]["y2018"] == parse_numbers(row[year_column(rows, 2018) or 0])[0]
    assert d["expression"] == "(y2019 - y2018) / y2018 * 100"
    y19, y18 = d["operands"]["y2019"], d["operands"]["y2018"]
    assert d["result"] == pytest.approx((y19 - y18) / y18 * 100)
    assert (answer.answer, scale) == ("-22.22", "percent")
    assert [s.kind for s in answer.steps] == ["tool", "tool", "tool", "gate"]


def test_questions_the_rule_cannot_place_go_to_the_model(contexts):
    """Two rows named "discount rate" (domestic and international), a figure only the text states, a "difference"
    (TAT-QA's answers take either order) and a question without a table: no answer, not a guess."""
    c = contexts[1]
    for q in c.questions:
        if "percentage change" in q.question:
            assert read_form(q.question) is not None
            assert answer_table_form(q.question, c.table, [p.text for p in c.passages]) is None
    senior = next(q for q in contexts[2].questions if "senior notes" in q.question)
    assert answer_table_form(senior.question, contexts[2].table, [p.text for p in contexts[2].passages]) is None
    assert read_form("What is the difference in revenue between 2018 and 2019?") is None
    assert answer_table_form("What was the change in revenue from 2018 to 2019?", None) is None


@pytest.mark.parametrize(
    ("question", "form", "row", "years"),
    [
        ("What was the change in Net sales from 2018 to 2019?", "change", "net sales", (2018, 2019)),
        ("What is the increase/ (decrease) in Revenues from, 2019 to 2018?", None, None, None),
        ("What was the change in Other assets in 2019 from 2018?", "change", "other assets", (2018, 2019)),
        ("What is the percentage change in interest cost between 2018 and 2019?", "percentage change", "interest cost", (2018, 2019)),
        ("What was the average Net cash used in financing activities between fiscal years 2017-2019?", "average", "net cash used in financing activities", (2017, 2018, 2019)),
        ("What is the average number of new restaurants opened for 2017, 2018 and 2019?", "average", "number of new restaurants opened", (2017, 2018, 2019)),
        ("What is the total special termination benefits charge in 2018 and 2019?", "sum", "special termination benefits charge", (2018, 2019)),
        ("What was the Basic weighted average common shares outstanding in 2018?", "value", "basic weighted average common shares outstanding", (2018,)),
        ("What is the company's total other non-current assets as at December 31, 2019?", "value", "company's total other non-current assets", (2019,)),
        ("In which year was the amount of Investments higher?", "which year", "investments", ()),
        ("What are the respective values of raw materials in 2018 and 2019?", "respective", "raw materials", (2018, 2019)),
        ("Why did revenue increase in 2019?", None, None, None),
    ],
)  # fmt: skip
def test_read_form(question, form, row, years):
    got = read_form(question)
    if form is None:
        assert got is None
        return
    assert got is not None
    assert (got.form, got.row, got.years) == (form, row, years)


@pytest.mark.model
def test_the_engine_answers_a_form_by_the_rule_and_the_rest_by_the_reader(contexts):
    """finkg eval tatqa -s engine: the forms rule before the model (its derivation, TAT-QA's gold), the model
    (SmolLM2 here) for a question of no form."""
    from test_llm import smol_gguf

    from finkg.eval.tatqa import engine_system
    from generation.llm import LlamaCppBackend, LLMClient

    c = contexts[0]
    engine = engine_system(
        LLMClient(LlamaCppBackend(smol_gguf(), n_ctx=2048, n_threads=2)), tables={c.table_uid: c.table}
    )
    q = next(q for q in c.questions if q.question.startswith("What is the percentage change in Other"))
    text = engine(q.question, c.facts, c.passages)
    assert text.startswith("(y2019 - y2018) / y2018 * 100 with y2018=56.7, y2019=44.1 = ")
    assert _em(text, q) == 1.0
    other = next(q for q in c.questions if q.question == "What are the contract types?")
    assert read_form(other.question) is None
    text = engine(other.question, c.facts, c.passages)
    assert "y2019" not in text and extract_answer(text).spans
