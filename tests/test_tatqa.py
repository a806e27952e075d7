"""TAT-QA: the metric (finkg/eval/metrics/tatqa.py), the reader (ingest/datasets/tatqa.py), the final-answer step
(generation/qa/answer.py) and the harness (finkg/eval/tatqa.py), on real TAT-QA dev questions.

Data: tests/data/tatqa_dev_sample.json holds 5 contexts of the TAT-QA dev set, unchanged (CC BY 4.0,
Zhu et al. 2021; data/NOTICE.md): 30 questions of every answer type (span, multi-span, arithmetic,
count) and every scale ("", thousand, million, billion, percent), with negative answers and a
parenthesized multi-span answer. The expected EM/F1 values below were worked out by hand from the
rules in finkg/eval/metrics/tatqa.py's docstring (each case names the dev question's uid).
The LLM path runs SmolLM2-135M through llama.cpp (real model, no mock).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import free_port, model_weights

from finkg import models
from finkg.errors import ConfigError
from finkg.eval.metrics.tatqa import TatqaScore, answer_string, gold_answers, normalize_answer, score, to_number
from finkg.eval.tatqa import (
    agent_systems,
    chart,
    chart_bars,
    direct_systems,
    evaluate,
    of_answer_types,
    score_text,
    stratified_sample,
)
from generation.agent.loop import table_evidence
from generation.agent.questions import answer_scale, evidence_scale, needs_arithmetic
from generation.agent.tables import row_labels
from generation.agent.thought import run_thought
from generation.llm import LlamaCppBackend, LLMCache, LLMClient
from generation.llm.answer_line import extract_answer
from generation.qa.answer import ANSWER_INSTRUCTION, answer_messages
from ingest.datasets.tatqa import TatqaFormatError, parse_numbers, read_tatqa, split_contexts

SAMPLE = Path(__file__).parent / "data" / "tatqa_dev_sample.json"
SMOL = "smollm2-135m-instruct-q4_1"


@pytest.fixture(scope="module")
def contexts():
    return read_tatqa(SAMPLE)


def question(contexts, uid):
    return next(q for c in contexts for q in c.questions if q.uid == uid)


# --------------------------------------------------------------------------------- the metric

# (question uid, predicted spans, predicted scale, expected EM, expected F1)
CASES = [
    # arithmetic, percent, negative: -67.6 (($166.3-$513.3)/$513.3); gold string "-0.6760"
    ("58adf6c4-41ae-4f3f-84cb-cf3469a80ce4", ["-67.6%"], "", 1.0, 1.0),
    ("58adf6c4-41ae-4f3f-84cb-cf3469a80ce4", ["-67.6"], "percent", 1.0, 1.0),
    ("58adf6c4-41ae-4f3f-84cb-cf3469a80ce4", ["-0.676"], "", 1.0, 1.0),  # tried unscaled: "-0.6760"
    ("58adf6c4-41ae-4f3f-84cb-cf3469a80ce4", ["67.6%"], "", 0.0, 0.0),  # sign wrong
    ("58adf6c4-41ae-4f3f-84cb-cf3469a80ce4", ["-67.6"], "", 0.0, 0.0),  # scale missing: -67.6 is not -0.676
    ("58adf6c4-41ae-4f3f-84cb-cf3469a80ce4", ["-67.56%"], "", 0.0, 0.0),  # another number: F1 = EM = 0
    # span, million: "3,181" -> 3,181,000,000
    ("c2c72e15-a955-4c45-bc51-95112d7db982", ["3,181"], "million", 1.0, 1.0),
    ("c2c72e15-a955-4c45-bc51-95112d7db982", ["$3,181 million"], "", 1.0, 1.0),  # scale word in the text
    ("c2c72e15-a955-4c45-bc51-95112d7db982", ["3,181"], "", 0.0, 0.0),  # the scale must match
    ("c2c72e15-a955-4c45-bc51-95112d7db982", ["3,181"], "thousand", 0.0, 0.0),
    # multi-span, thousand, parenthesized negatives: (5,062), (6,533), (18,494)
    ("016bb970-bbb3-43a1-a56b-898eb9e63ee5", ["-5,062", "-6,533", "-18,494"], "thousand", 1.0, 1.0),
    ("016bb970-bbb3-43a1-a56b-898eb9e63ee5", ["(18,494)", "(5,062)", "(6,533)"], "thousand", 1.0, 1.0),
    ("016bb970-bbb3-43a1-a56b-898eb9e63ee5", ["(5,062)", "(6,533)"], "thousand", 0.0, 0.8),  # P 1, R 2/3
    ("016bb970-bbb3-43a1-a56b-898eb9e63ee5", ["5,062", "6,533", "18,494"], "thousand", 0.0, 0.0),  # signs
    # multi-span, no scale: years 2020, 2019, 2018 (order does not matter)
    ("43b30c14-c73b-42af-8986-1b312905590f", ["2018", "2019", "2020"], "", 1.0, 1.0),
    ("43b30c14-c73b-42af-8986-1b312905590f", ["2019", "2020"], "", 0.0, 0.8),
    # span with the scale inside the answer text: "$2.8 billion" (question scale "")
    ("464473b5-6a98-4b83-a1c6-16f3e82ccc32", ["$2.8"], "billion", 1.0, 1.0),
    ("464473b5-6a98-4b83-a1c6-16f3e82ccc32", ["2,800 million"], "", 1.0, 1.0),
    ("464473b5-6a98-4b83-a1c6-16f3e82ccc32", ["2.8"], "", 0.0, 0.0),
    # count: 1
    ("3d384cee-82de-48f1-98ff-a972404bce4c", ["1"], "", 1.0, 1.0),
    ("3d384cee-82de-48f1-98ff-a972404bce4c", ["2"], "", 0.0, 0.0),
    # arithmetic, thousand, negative: -10029.67
    ("f49252e2-158b-4a79-ac56-d21ea67082a8", ["-10,029.67"], "thousand", 1.0, 1.0),
    ("f49252e2-158b-4a79-ac56-d21ea67082a8", ["-10,030"], "thousand", 0.0, 0.0),
    # arithmetic, billion: 5.4
    ("f8073b0e-9327-40f7-9646-dd96da92ea3a", ["5.4"], "billion", 1.0, 1.0),
    ("f8073b0e-9327-40f7-9646-dd96da92ea3a", ["5,400"], "million", 1.0, 1.0),  # same value, other scale word
    # text span: 11 of the gold's 25 distinct normalized words, all correct: P 1, R 0.44, F1 0.61
    (
        "75cadcb4-da5e-4e3e-b2ad-36a31be3d013",
        ["components of an enterprise for which separate financial information is evaluated regularly"],
        "",
        0.0,
        0.61,
    ),
    (
        "75cadcb4-da5e-4e3e-b2ad-36a31be3d013",
        [
            "Components of an enterprise for which separate financial information is evaluated regularly by the chief "
            "operating decision maker in deciding how to allocate resources and assessing performance"
        ],
        "",
        1.0,
        1.0,
    ),
    ("75cadcb4-da5e-4e3e-b2ad-36a31be3d013", [""], "", 0.0, 0.0),  # empty prediction
]


@pytest.mark.parametrize("uid,predicted,scale,em,f1", CASES)
def test_tatqa_em_and_f1_follow_the_published_rules(contexts, uid, predicted, scale, em, f1):
    q = question(contexts, uid)
    assert score(predicted, scale, gold_answers(q.record()), q.answer_type, q.scale) == TatqaScore(em, f1)


def test_answer_strings_apply_the_scale_and_read_negatives_and_percentages():
    assert answer_string(["$1,496.5"], "million") == "1496500000.0000"
    assert answer_string(["12.5%"], "") == "0.1250"
    assert answer_string(["12.5%"], "percent") == "0.1250"  # a written % is not scaled again
    assert answer_string(["(1,212)"], "million") == "-1212000000.0000"  # the documented difference
    assert answer_string(["(0.4)"], "million") == "-400000.0000"
    assert answer_string(["fixed-price type", "cost-plus type"], "") == "cost-plus type fixed-price type"
    assert answer_string(["some text"], "million") == "some text million"
    assert to_number("-$9.8 million") == -9800000 and to_number("2019") == 2019 and to_number("n/a") is None
    assert normalize_answer("The 1,234.50 Million") == "1234.5 million"  # per space-separated token
    assert normalize_answer("the (loss) gain, net") == "loss gain net"


def test_gold_answers_by_type_and_bad_records_are_refused():
    assert gold_answers({"answer_type": "arithmetic", "answer": -67.6}) == ["-67.6"]
    assert gold_answers({"answer_type": "count", "answer": "2"}) == ["2"]
    assert gold_answers({"answer_type": "multi-span", "answer": ["a", "b"]}) == ["a", "b"]
    with pytest.raises(ValueError, match="list of strings"):
        gold_answers({"answer_type": "span", "answer": "not a list"})
    with pytest.raises(ValueError, match="count answer must be a number"):
        gold_answers({"answer_type": "count", "answer": "several"})


# --------------------------------------------------------------------------------- the reader


def test_the_reader_turns_cells_into_facts_and_paragraphs_into_passages(contexts):
    assert len(contexts) == 5 and sum(len(c.questions) for c in contexts) == 30
    assert {q.answer_type for c in contexts for q in c.questions} == {"span", "multi-span", "arithmetic", "count"}
    assert {q.scale for c in contexts for q in c.questions} == {"", "thousand", "million", "billion", "percent"}
    deferred = contexts[4]  # "As of December 31," / "2019", "2018" / "(Dollars in millions)"; sections
    assert deferred.table_uid == "561569ae-db50-4eb5-8d0a-5a80bd1be46c"
    facts = {f.id: f for f in deferred.facts}
    less = facts["tatqa:561569ae-db50-4eb5-8d0a-5a80bd1be46c:r9c1"]
    assert less.text == (
        "Deferred tax assets / Less valuation allowance | As of December 31, 2019 (Dollars in millions): (1,319)"
    )
    assert less.numbers == (-1319.0,) and less.indicator == "Deferred tax assets / Less valuation allowance"
    assert less.source == "tatqa:tatqa_dev_sample.json"
    net = facts["tatqa:561569ae-db50-4eb5-8d0a-5a80bd1be46c:r16c1"]
    assert net.text.endswith("| As of December 31, 2019 (Dollars in millions): $(2,780)")
    assert net.numbers == (-2780.0,) and net.unit == "USD"
    assert facts["tatqa:561569ae-db50-4eb5-8d0a-5a80bd1be46c:r14c1"].numbers == ()  # "—"
    assert facts["tatqa:561569ae-db50-4eb5-8d0a-5a80bd1be46c:r14c2"].text == (
        "Deferred tax liabilities / Other | 2018: (23)"
    )
    # every non-empty value cell is a fact: 12 value rows x 2 columns ("—" included)
    cells = sum(1 for row in deferred.table[3:] for c in row[1:] if c.strip())
    assert len(deferred.facts) == cells == 24
    revenue = contexts[1]  # a caption row above the dates, and sections "Revenue:" / "Services:"
    texts = [f.text for f in revenue.facts]
    assert "Revenue / License | January 31, 2020: $3,181" in texts
    assert "Services / Professional services | February 2, 2018: 862" in texts
    assert [(p.id, p.order, p.text) for p in revenue.passages[:1]] == [
        ("tatqa:2a9b3ee7-884d-48ae-bf53-41443a2014f7", 1, "R. Segment Information")
    ]
    assert [p.order for p in revenue.passages] == list(range(1, len(revenue.passages) + 1))
    q = question(contexts, "9307945c-0f8a-4ab8-8f5a-c5ee43b4d6d7")
    assert (q.answer, q.answer_type, q.scale, q.derivation, q.answer_from) == (
        432,
        "arithmetic",
        "million",
        "4,351-3,919",
        "table-text",
    )


@pytest.mark.parametrize(
    "cell,numbers",
    [
        ("(1,234)", (-1234.0,)),
        ("$(2,780)", (-2780.0,)),
        ("12.5%", (12.5,)),
        ("-3.2 %", (-3.2,)),
        ("$ 1,452.4", (1452.4,)),
        ("—", ()),
        ("N/A", ()),
        ("(3.2)%", (-3.2,)),
        ("2018-2019", (2018.0, 2019.0)),
        ("−5", (-5.0,)),
        ("Q2", ()),
    ],
)
def test_cell_numbers(cell, numbers):
    assert parse_numbers(cell) == numbers


def test_bad_tatqa_files_name_the_file_and_the_context(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('[{"table": ', encoding="utf-8")
    with pytest.raises(TatqaFormatError, match=r"broken\.json: not JSON"):
        read_tatqa(bad)
    data = json.loads(SAMPLE.read_text(encoding="utf-8"))
    del data[2]["table"]
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(TatqaFormatError, match=r"broken\.json: context 2: missing 'table'"):
        read_tatqa(bad)
    data = json.loads(SAMPLE.read_text(encoding="utf-8"))
    del data[3]["questions"][4]["answer"]
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(
        TatqaFormatError, match=r"context 3: question f49252e2-158b-4a79-ac56-d21ea67082a8: missing 'answer'"
    ):
        read_tatqa(bad)
    bad.write_text('{"table": {}}', encoding="utf-8")
    with pytest.raises(TatqaFormatError, match="expected a JSON list"):
        read_tatqa(bad)
    with pytest.raises(FileNotFoundError):
        read_tatqa(tmp_path / "missing.json")
    assert len(read_tatqa(SAMPLE, limit=2)) == 2


# --------------------------------------------------------------------------- the answer line


@pytest.mark.parametrize(
    "text,spans,scale,found",
    [
        ("The change is large.\nAnswer: -67.6%", ("-67.6%",), "", True),
        ("**Answer:** $2.8 billion.", ("$2.8",), "billion", True),
        ("Answer: 2020, 2019 and 2018", ("2020", "2019", "2018"), "", True),
        ("Answer: fixed-price type | cost-plus type", ("fixed-price type", "cost-plus type"), "", True),
        ("Final answer: 1,234.5 million", ("1,234.5",), "million", True),
        ("Answer: −5,062 thousand; −6,533 thousand", ("-5,062", "-6,533"), "thousand", True),
        ('Answer: "Property, plant and equipment"', ("Property, plant and equipment",), "", True),
        ("Answer: 12.5 per cent", ("12.5",), "percent", True),
        ("Answer: $2.8bn", ("$2.8",), "billion", True),
        ("Answer: 1\nAnswer: 2", ("2",), "", True),  # the last answer line counts
        ("Answer: $4,143 | thousand", ("$4,143",), "thousand", True),  # a scale word alone is the scale
        ("Answer: 2019 | Answer: $ 175", ("2019",), "", True),  # a second answer in the line is cut off
        ("Answer: Answer: 42", ("42",), "", True),
        ("Answer: 2018 | 2019 | Answer: 2018 and 2019", ("2018", "2019"), "", True),
        ("I think it is 42", ("I think it is 42",), "", False),
        ("So the answer is 1,234.5 million.", ("1,234.5",), "million", False),
        ("", (), "", False),
    ],
)
def test_the_final_answer_is_read_from_the_generated_text(text, spans, scale, found):
    got = extract_answer(text)
    assert (got.spans, got.scale, got.found) == (spans, scale, found)


# --------------------------------------------------------------------------------- the harness


def _gold_text(q) -> str:
    """The gold answer written the way ANSWER_INSTRUCTION asks (numbers with their scale word)."""
    gold = gold_answers(q.record())
    if q.scale == "percent":
        return f"Answer: {gold[0]}%"
    word = f" {q.scale}" if q.scale else ""
    return "Reasoning first.\nAnswer: " + " | ".join(f"{g}{word}" for g in gold)


def test_gold_answers_written_as_instructed_score_full_marks_for_every_type(contexts):
    by_question = {q.question: q for c in contexts for q in c.questions}
    results = evaluate(contexts, {"gold": lambda question, facts, passages: _gold_text(by_question[question])})
    assert len(results.results) == 30
    wrong = [(r.question_uid, r.generated, r.predicted, r.predicted_scale) for r in results.results if r.em != 1.0]
    assert wrong == []
    rows = {r["answer_type"]: r for r in results.rows()}
    assert 0 <= rows["all"]["median_seconds"] < 1  # each answer timed (no LLM here)
    assert {k: v for k, v in rows["all"].items() if k != "median_seconds"} == {
        "system": "gold",
        "answer_type": "all",
        "questions": 30,
        "em": 100.0,
        "em_ci_low": 100.0,
        "em_ci_high": 100.0,
        "f1": 100.0,
        "f1_ci_low": 100.0,
        "f1_ci_high": 100.0,
        "no_answer_line": 0,
        "errors": 0,
        "median_prompt_tokens": 0,  # no LLM call: nothing counted
        "median_llm_calls": 0,
    }
    assert {k: rows[k]["questions"] for k in ("span", "multi-span", "arithmetic", "count")} == {
        "span": 11,
        "multi-span": 4,
        "arithmetic": 10,
        "count": 5,
    }


def test_a_scale_slip_costs_the_exact_match_and_rows_average_the_answers(contexts):
    q = question(contexts, "c2c72e15-a955-4c45-bc51-95112d7db982")  # 3,181 million
    context = next(c for c in contexts if q in c.questions)
    i = context.questions.index(q)
    assert score_text("s", context, i, "Answer: 3,181 million").em == 1.0
    slip = score_text("s", context, i, "License revenue was 3,181.\nAnswer: 3,181")
    assert (slip.em, slip.f1, slip.predicted, slip.predicted_scale, slip.answer_line) == (0.0, 0.0, ["3,181"], "", True)
    # the same fixed answer to the context's first 4 questions: only the license revenue question is right
    results = evaluate([context], {"fixed": lambda question, facts, passages: "Answer: 3,181 million"}, limit=4)
    rows = {r["answer_type"]: r for r in results.rows()}
    assert [r.question_uid for r in results.results if r.em == 1.0] == [q.uid]
    assert (rows["all"]["questions"], rows["all"]["em"], rows["all"]["f1"]) == (4, 25.0, 25.0)
    assert (rows["span"]["questions"], rows["span"]["em"]) == (2, 50.0)
    assert set(rows) == {"all", "span", "multi-span", "arithmetic"}


@pytest.fixture(scope="module")
def smol_client():
    path = models.installed_path(SMOL) or models.install([SMOL])[0].path
    return LLMClient(LlamaCppBackend(path, n_ctx=4096, n_threads=2))


def tokens(result: Any, field: str = "prompt_tokens") -> int:
    """An answer's token count (``prompt_tokens`` or ``completion_tokens``), which must have been counted."""
    value = getattr(result, field)
    assert value is not None, f"{result.system} {result.question_uid}: {field} not counted"
    return value


def test_the_harness_runs_real_llm_answerers_end_to_end(contexts, smol_client, tmp_path):
    """SmolLM2 with and without the context on the first 2 questions: every answer is generated, read
    and scored; a model answer that cannot be used is recorded as an error, not dropped."""
    silent = [
        m for _ in range(6) for m in ({"role": "user", "content": "Stay silent."}, {"role": "assistant", "content": ""})
    ] + [{"role": "user", "content": "Stay silent."}]  # SmolLM2 answers "" here (see tests/test_llm.py)
    cached = LLMClient(smol_client.backend, cache=LLMCache(tmp_path / "llm-cache"))  # reader-calc: reader's call
    answerers = {
        **direct_systems(cached, max_tokens=48),
        "silent": lambda question, facts, passages: smol_client.chat(silent, max_tokens=16).text,
    }
    ticks: list[tuple[str, int]] = []

    def progress(stage, total):
        ticks.append((stage, total))
        return lambda n, tokens=None: ticks.append((stage, n))

    results = evaluate(contexts[:1], answerers, limit=2, progress=progress)
    assert len(results.results) == 14
    stages = [
        "TAT-QA: no-retrieval",
        "TAT-QA: whole-context",
        "TAT-QA: reader",
        "TAT-QA: reader-calc",
        "TAT-QA: reader-form",
        "TAT-QA: reader-calc-form",
        "TAT-QA: silent",
    ]
    assert ticks == [(s, 2) for s in stages] + [(s, 1) for s in stages] * 2  # question by question
    for r in results.results:
        assert r.em in (0.0, 1.0) and 0.0 <= r.f1 <= 1.0
        if r.system == "silent":
            assert r.error and "empty" in r.error and r.generated == "" and r.em == 0.0
        else:
            assert r.error is None and r.generated.strip()
    rows = {(r["system"], r["answer_type"]): r for r in results.rows()}
    assert rows[("silent", "all")]["errors"] == 2 and rows[("no-retrieval", "all")]["errors"] == 0
    by = {(r.system, r.question_uid): r for r in results.results}
    for q in contexts[0].questions[:2]:  # the reader's call (a cache hit), its calculate thought run by the tool
        assert by[("reader-calc", q.uid)].generated == run_thought(by[("reader", q.uid)].generated).text
        assert by[("reader-calc-form", q.uid)].generated == run_thought(by[("reader-form", q.uid)].generated).text
        assert tokens(by[("reader-form", q.uid)]) > tokens(by[("reader", q.uid)])  # the form's words
        # tokens per answer: one call each; the cache hit counts the tokens of the call that produced it
        reader, calc = by[("reader", q.uid)], by[("reader-calc", q.uid)]
        assert reader.llm_calls == calc.llm_calls == 1 and tokens(calc) == tokens(reader) > 100
        assert tokens(by[("no-retrieval", q.uid)]) < tokens(by[("whole-context", q.uid)])
        assert 0 < tokens(reader, "completion_tokens") <= 48 and by[("silent", q.uid)].llm_calls == 1
    assert rows[("reader", "all")]["median_prompt_tokens"] > rows[("no-retrieval", "all")]["median_prompt_tokens"] > 0
    answers, summary, _ = results.save(tmp_path / "tatqa")
    lines = [json.loads(x) for x in answers.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 14 and lines[0]["question_uid"] == contexts[0].questions[0].uid
    assert json.loads(summary.read_text(encoding="utf-8")) == results.rows()


def test_the_reader_prompt_puts_the_cells_first_and_cuts_the_facts_at_the_models_token_budget(contexts, smol_client):
    """Seed 004's reader (the prompt `finkg train reader` tunes): the table's cells in table order, then the
    paragraphs sharing the most words with the question; F cut at whole sentences within the budget, counted
    with the served model's own tokenizer."""
    from generation.qa.reader import answer_facts, reader_messages, truncate

    context = contexts[0]
    q = context.questions[0]
    cells, paragraphs = [f.text for f in context.facts], [p.text for p in context.passages]
    sentences = answer_facts(q.question, cells, paragraphs)
    assert sentences[: len(cells)] == cells and sorted(sentences[len(cells) :]) == sorted(paragraphs)
    count = smol_client.count_tokens
    llama = smol_client.backend.llama()
    assert count("Revenue rose 4.5% to $3,181 million") == len(
        llama.tokenize(b"Revenue rose 4.5% to $3,181 million", add_bos=False, special=False)
    )
    facts = truncate(sentences, count, 60)
    lines = facts.split("\n")
    assert lines == sentences[: len(lines)] and 0 < len(lines) < len(sentences)
    assert sum(count(x) + 1 for x in lines) <= 60 < sum(count(x) + 1 for x in sentences[: len(lines) + 1])
    chat = reader_messages(q.question, facts)
    assert chat[1]["content"] == f"Question: {q.question}\nFacts:\n{facts}" and len(chat) == 2


def test_the_answer_form_control_differs_from_the_trained_prompt_only_in_the_stated_form(smol_client):
    """``reader-form`` (the untuned model's second control): the system prompt is training's plus the form of T and Y
    in words, whose example is a call the calculator reads back; the user message is the same; ``reader-calc-form``
    runs its thought like ``reader-calc``."""
    from finkg.eval.tatqa import direct_systems
    from finkg.train.reader import messages
    from generation.agent.thought import thought_program
    from generation.qa.reader import FORM_SYSTEM, SYSTEM, reader_messages

    assert FORM_SYSTEM.startswith(SYSTEM) and len(FORM_SYSTEM) > len(SYSTEM)
    assert thought_program(FORM_SYSTEM) == ("(n1 - n2) / n2 * 100", {"n1": 4.3, "n2": 19.6})
    trained = messages({"I": "q?", "F": "f", "T": "t", "Y": "y"})
    assert trained[0]["content"] == SYSTEM  # training never sees the form prompt
    form = reader_messages("q?", "f", system=FORM_SYSTEM)
    assert form[0]["content"] == FORM_SYSTEM and form[1] == reader_messages("q?", "f")[1]
    systems = direct_systems(smol_client, max_tokens=8)
    assert {"reader-form", "reader-calc-form"} <= set(systems)


def test_an_interrupted_run_resumes_without_asking_again_and_refuses_another_models_folder(contexts, tmp_path):
    """Answers are appended as they come; a rerun asks only what is missing (a last line cut off by a
    killed write is asked again); a malformed earlier line is named; another model's folder is refused."""
    from finkg.eval.tatqa import TatqaRunError, check_manifest

    asked: list[tuple[str, str]] = []

    def answerer(name: str):
        def answer(question, facts, passages):
            asked.append((name, question))
            if name == "b" and len(asked) > 3:
                raise KeyboardInterrupt  # the run is stopped after 3 answers
            return "Answer: 3,181 million"

        return answer

    out = tmp_path / "tatqa"
    systems = {"a": answerer("a"), "b": answerer("b")}
    with pytest.raises(KeyboardInterrupt):
        evaluate(contexts[:1], systems, limit=3, out=out)
    lines = (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["system"] for x in lines] == ["a", "b", "a"]  # written before the interruption
    (out / "answers.jsonl").write_text("\n".join(lines) + '\n{"system": "b", "context_in', encoding="utf-8")
    asked.clear()
    systems = {"a": answerer("a"), "b": lambda q, f, p: (asked.append(("b", q)), "Answer: 1")[1]}
    results = evaluate(contexts[:1], systems, limit=3, out=out)
    qs = [q.question for q in contexts[0].questions[:3]]
    assert asked == [("b", qs[1]), ("a", qs[2]), ("b", qs[2])]
    assert [(r.system, r.question) for r in results.results] == [(s, q) for q in qs for s in ("a", "b")]
    assert len((out / "answers.jsonl").read_text(encoding="utf-8").splitlines()) == 6
    asked.clear()
    assert evaluate(contexts[:1], systems, limit=3, out=out).rows() == results.rows() and asked == []
    broken = (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    (out / "answers.jsonl").write_text("\n".join([broken[0], "{not json", *broken[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(TatqaRunError, match=r"answers\.jsonl:2: not a TAT-QA answer record"):
        evaluate(contexts[:1], systems, limit=3, out=out)
    check_manifest(out, "gguf:aaa", "dev.json")
    check_manifest(out, "gguf:aaa", "dev.json")
    with pytest.raises(TatqaRunError, match="answers have model_id 'gguf:aaa', this run's is 'gguf:bbb'"):
        check_manifest(out, "gguf:bbb", "dev.json")
    # the memory systems' options are recorded; a resume with other ones is refused, one without memory keeps them
    memory = {"threshold": 0.65, "top_k": 5, "solution": "program"}
    check_manifest(out, "gguf:aaa", "dev.json", memory=memory)
    with pytest.raises(TatqaRunError, match=r"memory .*'solution': 'program'.*'solution': 'expression'"):
        check_manifest(out, "gguf:aaa", "dev.json", memory=memory | {"solution": "expression"})
    check_manifest(out, "gguf:aaa", "dev.json")  # only the agent: nothing about the memory to disagree with
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8"))["memory"] == memory
    with pytest.raises(TatqaRunError, match=r"'top_k': 5.*'top_k': 3"):
        check_manifest(out, "gguf:aaa", "dev.json", memory=memory | {"top_k": 3})


def test_questions_asked_concurrently_give_the_one_at_a_time_results_and_a_failure_stops_soon(contexts, tmp_path):
    """``workers`` questions in flight: the same results, in question order, and the same answers file as a
    one-at-a-time run; an answerer's error surfaces at its question and waits only for the calls in flight."""
    import threading

    from finkg.eval.tatqa import in_order

    def answerer(name: str):
        def answer(question, facts, passages):
            return f"Answer: {len(question) % 7 if name == 'a' else 3, 181} million"

        return answer

    systems = {"a": answerer("a"), "b": answerer("b")}
    one = evaluate(contexts, systems, limit=9, out=tmp_path / "one")
    many = evaluate(contexts, systems, limit=9, out=tmp_path / "many", workers=4)
    assert many.results == one.results and many.rows() == one.rows() and len(one.results) == 18
    assert {(r.llm_calls, r.prompt_tokens) for r in many.results} == {(0, 0)}  # no LLM: nothing counted
    assert many.rows()[0]["median_prompt_tokens"] == 0
    lines = {k: (tmp_path / k / "answers.jsonl").read_text(encoding="utf-8").splitlines() for k in ("one", "many")}
    assert sorted(lines["many"]) == sorted(lines["one"]) and len(lines["one"]) == 18

    calls: list[int] = []
    lock = threading.Lock()

    def fn(x: int) -> int:
        with lock:
            calls.append(x)
        if x == 2:
            raise RuntimeError("boom at 2")
        return x * x

    got = []
    with pytest.raises(RuntimeError, match="boom at 2"):
        for y in in_order(fn, range(100), 3):
            got.append(y)
    assert got == [0, 1] and len(calls) <= 6  # the window, not the 100 items
    assert list(in_order(lambda x: x + 1, range(10), 4)) == list(range(1, 11))


def test_retrieved_passages_that_overflow_the_context_window_are_trimmed_lowest_ranked_first(contexts, smol_client):
    """A prompt that would not fit the model's window (here 1,024 tokens) is cut down by leaving out the
    lowest-ranked passages, recorded; an over-long prompt sent as it is fails as a recorded answer error."""
    from generation.llm import LLMAnswerError
    from generation.report.two_stage import TwoStageGenerator
    from retrieval.knowledge import KnowledgeRetriever
    from retrieval.text.documents import DocumentIndex, Passage

    small = LLMClient(LlamaCppBackend(smol_client.backend.model_path, n_ctx=1024, n_threads=2))
    c = contexts[0]
    long_passages = [Passage(f"p{i}", " ".join(p.text for p in c.passages)) for i in range(8)]
    retriever = KnowledgeRetriever("bm25-docs", k=8, documents=DocumentIndex(long_passages))
    gen = TwoStageGenerator(small, retriever, answer_tokens=32).single_stage(c.questions[0].question, c.facts[:5])
    trimmed = gen.knowledge_trimmed["answer"]
    assert 0 < trimmed < 8 and len(gen.k1) == 8 - trimmed
    assert gen.calls["answer"].error is None and gen.calls["answer"].prompt_tokens <= 1024 - 32
    whole = [{"role": "user", "content": " ".join(p.text for p in long_passages)}]
    assert not small.fits(whole, 32)
    with pytest.raises(LLMAnswerError, match="the prompt does not fit"):
        small.chat(whole, max_tokens=32)


def test_the_direct_prompt_holds_the_context_only_when_asked(contexts):
    c = contexts[0]
    with_context = answer_messages("What?", c.facts, c.passages)[1]["content"]
    bare = answer_messages("What?")[1]["content"]
    assert c.facts[0].text in with_context and c.passages[0].text in with_context
    assert c.facts[0].text not in bare and bare.endswith(ANSWER_INSTRUCTION)


def altered(tmp_path: Path, change: Callable[[list], None], name: str = "altered.json") -> Path:
    """The dev sample's five real contexts with one alteration (``change`` edits the loaded JSON list), written
    to ``tmp_path / name``."""
    data = json.loads(SAMPLE.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _set(context: int, question: int, key: str, value: Any) -> Callable[[list], None]:
    def change(data: list) -> None:
        data[context]["questions"][question][key] = value

    return change


def _delete(context: int, question: int, key: str) -> Callable[[list], None]:
    def change(data: list) -> None:
        del data[context]["questions"][question][key]

    return change


def _paragraph(context: int, paragraph: int, key: str, value: Any) -> Callable[[list], None]:
    def change(data: list) -> None:
        data[context]["paragraphs"][paragraph][key] = value

    return change


def _row(data: list) -> None:
    data[1]["table"]["table"][2] = "Revenue 2019 2018"


def _question_string(data: list) -> None:
    data[2]["questions"][1] = "What was the revenue?"


SPAN_UID = "a5992e2e-726e-469c-88f3-e7b2ea8db24c"  # context 0, question 0: span, gold ["27.0"]
BAD_RECORDS = [
    (
        _set(0, 0, "answer", "27.0"),
        f"context 0: question {SPAN_UID}: 'answer' of a span question must be a non-empty list of strings, "
        "not str '27.0'",
    ),
    (_set(0, 0, "answer", []), f"question {SPAN_UID}: 'answer' of a span question must be a non-empty list"),
    (
        _set(1, 1, "answer", ["2020", 2019]),
        "context 1: question 43b30c14-c73b-42af-8986-1b312905590f: 'answer' of a multi-span question must be a "
        "non-empty list of strings, not list ['2020', 2019]",
    ),
    (
        _set(0, 5, "answer", "about -67.6"),
        "question 58adf6c4-41ae-4f3f-84cb-cf3469a80ce4: 'answer' of an arithmetic question must be a number, "
        "not str 'about -67.6'",
    ),
    (
        _set(0, 3, "answer", None),
        "question 3d384cee-82de-48f1-98ff-a972404bce4c: 'answer' of a count question must be a number, not "
        "NoneType None",
    ),
    (_set(0, 5, "answer", float("nan")), "'answer' of an arithmetic question must be a number, not float nan"),
    (_set(0, 0, "answer_type", "yes-no"), f"question {SPAN_UID}: 'answer_type' must be one of span, multi-span"),
    (_delete(0, 0, "question"), f"context 0: question {SPAN_UID}: missing 'question'"),
    (_delete(0, 0, "uid"), "context 0: question 0: missing 'uid'"),  # no uid: the question's index
    (_set(0, 0, "scale", "millions"), f"question {SPAN_UID}: 'scale' must be one of '', 'thousand'"),
    (_set(0, 0, "order", "first"), f"question {SPAN_UID}: 'order' must be an integer, not 'first'"),
    (_set(0, 0, "derivation", 27), f"question {SPAN_UID}: 'derivation' must be str, not int 27"),
    (_paragraph(4, 1, "text", None), "context 4: paragraph 1: 'text' must be str, not NoneType None"),
    (_row, "context 1: table "),
    (_question_string, "context 2: question 1: must be a JSON object, not str 'What was the revenue?'"),
]


@pytest.mark.parametrize(("change", "said"), BAD_RECORDS)
def test_an_invalid_record_is_one_line_naming_the_file_the_record_and_the_field(tmp_path, change, said):
    path = altered(tmp_path, change)
    with pytest.raises(TatqaFormatError) as err:
        read_tatqa(path)
    message = str(err.value)
    assert message.startswith(f"{path}: context ") and said in message and "\n" not in message


def test_the_published_shapes_are_read_as_they_are(tmp_path):
    def change(data: list) -> None:  # TAT-QA's own variants: all accepted
        _set(0, 3, "answer", 1)(data)  # a count as a number (the data writes "1")
        _set(0, 5, "answer", "-67.6")(data)  # an arithmetic answer as a numeric string
        _set(0, 0, "order", "1")(data)  # an order as a string
        _set(0, 0, "scale", None)(data)  # a null scale: none

    q = read_tatqa(altered(tmp_path, change))[0].questions
    assert q[3].answer == 1 and q[5].answer == "-67.6" and q[0].order == 1 and q[0].scale == ""


BAD_FILES = {
    "span-not-a-list": (_set(0, 0, "answer", "27.0"), f"question {SPAN_UID}: 'answer' of a span question"),
    "missing-field": (
        _delete(3, 4, "answer_type"),
        "question f49252e2-158b-4a79-ac56-d21ea67082a8: missing 'answer_type'",
    ),
}


def _bad_files(tmp_path: Path) -> list[tuple[Path, str]]:
    """The invalid files a command is given: the two alterations of :data:`BAD_FILES` and a truncated file."""
    files = [(altered(tmp_path, change, f"{name}.json"), said) for name, (change, said) in BAD_FILES.items()]
    broken = tmp_path / "truncated.json"
    broken.write_text(SAMPLE.read_text(encoding="utf-8")[:5000], encoding="utf-8")
    return [*files, (broken, "not JSON: ")]


def _one_line_exit_2(run: subprocess.CompletedProcess, path: Path, said: str) -> None:
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr and len(lines) == 1, run.stderr
    assert lines[0].startswith(f"error: {path}: ") and said in lines[0], lines[0]


def test_eval_and_experience_learn_refuse_an_invalid_tatqa_file_in_one_line(tmp_path):
    # nothing is reached before the file is read: no model is configured, the Neo4j URI has no server
    env = {
        "FINKG_CONFIG": str(tmp_path / "none.toml"),
        "FINKG_NEO4J__URI": f"bolt://127.0.0.1:{free_port()}",
        "FINKG_NEO4J__PASSWORD": "not-used-before-the-file-is-read",
        "COLUMNS": "400",
    }
    for path, said in _bad_files(tmp_path):
        for command in (["eval", "tatqa"], ["experience", "learn"]):
            _one_line_exit_2(_finkg(*command, str(path), env=env), path, said)


@pytest.mark.neo4j  # `finkg train reader` checks the model registry's server before it reads the file
@pytest.mark.model  # and loads the base model's tokenizer (MiniLM's, the smallest installed)
def test_train_reader_refuses_an_invalid_tatqa_file_in_one_line_before_training(tmp_path):
    base = model_weights("all-minilm-l6-v2")
    for path, said in _bad_files(tmp_path):
        out = tmp_path / f"run-{path.stem}"
        run = _finkg(
            "train", "reader", str(path), "--base-model", str(base), "--out-dir", str(out), env={"COLUMNS": "400"}
        )
        _one_line_exit_2(run, path, said)
        assert not (out / "checkpoints").exists()  # stopped before training


# --------------------------------------------------------------------------------- the command


def _finkg(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "finkg", *args], capture_output=True, text=True, timeout=600, env={**os.environ, **env}
    )


def test_finkg_eval_tatqa_runs_and_reports_bad_files(tmp_path, smol_client):
    env = {
        "FINKG_CONFIG": str(tmp_path / "none.toml"),
        "FINKG_LLM_BACKEND": "llama-cpp",
        "FINKG_LLM_MODEL_PATH": str(smol_client.backend.model_path),
        "FINKG_LLM_CACHE_DIR": str(tmp_path / "cache"),
        "COLUMNS": "200",
    }
    run = _finkg(
        "eval",
        "tatqa",
        str(SAMPLE),
        "--system",
        "no-retrieval",
        "--limit",
        "2",
        "--max-tokens",
        "32",
        "--out",
        str(tmp_path / "out"),
        env=env,
    )
    assert run.returncode == 0, run.stderr
    assert "TAT-QA EM / F1 (%) on tatqa_dev_sample.json" in run.stdout and "no-retrieval" in run.stdout
    rows = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert rows[0]["system"] == "no-retrieval" and rows[0]["questions"] == 2
    picture = tmp_path / "out" / "tatqa-em-f1.png"
    assert f"with 95% intervals: {picture}" in run.stdout.replace("\n", "") and picture.read_bytes()[:4] == b"\x89PNG"
    bad = tmp_path / "bad.json"
    bad.write_text('[{"paragraphs": []}]', encoding="utf-8")
    run = _finkg("eval", "tatqa", str(bad), env=env)
    assert run.returncode == 2 and "bad.json: context 0: missing 'table'" in run.stderr
    run = _finkg("eval", "tatqa", str(SAMPLE), "--system", "three-stage", env=env)
    assert run.returncode == 2 and "unknown system(s) three-stage" in run.stderr
    run = _finkg("eval", "tatqa", str(SAMPLE), "-s", "agent", "--memory-solution", "values", env=env)
    assert run.returncode == 2 and "unknown memory solution form 'values'" in run.stderr
    run = _finkg("eval", "agent", str(SAMPLE), "--no-sec", "-s", "agent", "--memory-solution", "values", env=env)
    assert run.returncode == 2 and "unknown memory solution form 'values'" in run.stderr


def test_two_stage_single_stage_and_facts_only_answer_tatqa_questions(contexts, smol_client):
    """The two-stage generator as TAT-QA answerers (seed 004 section 3.3 and its ablations): the table's
    cells are F, the context's paragraphs the knowledge; each answer is generated and scored."""
    from generation.qa.systems import tfr_answerer, tfr_answerers

    answerers = tfr_answerers(smol_client, answer_tokens=48)
    assert list(answerers) == ["two-stage", "single-stage", "facts-only"]
    results = evaluate(contexts[:1], answerers, limit=1)
    assert [r.system for r in results.results] == ["two-stage", "single-stage", "facts-only"]
    for r in results.results:
        assert r.error is None and r.generated.strip() and r.em in (0.0, 1.0) and 0.0 <= r.f1 <= 1.0
    with pytest.raises(ValueError, match="unknown mode"):
        tfr_answerer(smol_client, "three-stage")


# --------------------------------------------------------------------------- the analyst agent on TAT-QA


def test_the_agent_route_counts_computes_or_quotes_and_only_computing_reads_the_memory(contexts):
    """finkg.eval.tatqa.agent_route: the one statement of which questions the agent counts (no LLM), computes by
    program of thought (the route that reads the experience memory) or quotes."""
    from finkg.eval.tatqa import agent_route, of_agent_routes

    routes = {
        q.uid: (q.answer_type, agent_route(q.question, c.table, [p.text for p in c.passages]))
        for c in contexts
        for q in c.questions
    }
    assert {r for t, r in routes.values() if t == "arithmetic"} == {"program"}
    assert any(r == "count" for t, r in routes.values() if t == "count")  # the table_count tool answers it
    assert {r for t, r in routes.values() if t == "span"} <= {"span", "program"} and any(
        r == "span" for t, r in routes.values() if t == "span"
    )
    table = [["", "2019", "2018"], ["Revenue", "4,351", "3,919"]]
    assert agent_route("What was the Revenue in 2019?", table, []) == "span"
    assert agent_route("What was the change in Revenue from 2018 to 2019?", table, []) == "program"
    # --route: the questions of a route, within a selection; an unknown route is named
    program = {uid for uid, (_, r) in routes.items() if r == "program"}
    assert of_agent_routes(contexts, ["program"]) == program and program
    some = set(list(routes)[:4])
    assert of_agent_routes(contexts, ["program", "span"], some) == {u for u in some if routes[u][1] != "count"}
    with pytest.raises(ConfigError, match="unknown agent route 'memory': count, program, span"):
        of_agent_routes(contexts, ["memory"])


def test_the_router_sends_the_sample_s_arithmetic_questions_to_the_calculator(contexts):
    arithmetic = [q for c in contexts for q in c.questions if q.answer_type == "arithmetic"]
    assert arithmetic and all(needs_arithmetic(q.question) for q in arithmetic)  # gold types from the data
    assert all(
        needs_arithmetic(q.question, row_labels(c.table)) for c in contexts for q in c.questions if q in arithmetic
    )
    assert not needs_arithmetic("What was the revenue in 2019?")
    # what the report states is quoted, not computed: reasons, picks, values "respectively", a table's total row
    for question in (
        "Why did interest expense increase in fiscal 2019?",
        "What caused the increase in interest income?",
        "What led to the decrease in other income in 2018?",
        "How is the average selling price calculated?",
        "In which year was the total revenue larger?",
        "What are the total net sales in 2019 and 2018 respectively?",
    ):
        assert not needs_arithmetic(question), question
    labels = ["Revenue", "Cost of sales", "Total net sales"]
    assert not needs_arithmetic("What is the total net sales in 2019?", labels)
    assert needs_arithmetic("What is the total net sales in 2019?")  # no table row to read it from
    assert needs_arithmetic("What is the total net sales in 2019 and 2018?", labels)  # two years: a sum
    assert needs_arithmetic("What is the total revenue in 2019?", labels)  # no "Total revenue" row
    assert needs_arithmetic("What is the change in total net sales from 2018 to 2019?", labels)
    # the answer's scale against TAT-QA's gold scale of each arithmetic question (table first, then paragraphs):
    # 7 of the sample's 10 (two "thousand" named nowhere in the table or text, one "billion" read as million)
    right = [
        evidence_scale(q.question, table_evidence(c.table), [p.text for p in c.passages]) == q.scale
        for c in contexts
        for q in c.questions
        if q.answer_type == "arithmetic"
    ]
    assert len(right) == 10 and sum(right) >= 7
    assert answer_scale("What is the ratio of A to B?", ["$ million | 2019"]) == ""
    assert answer_scale("What is the percentage change in sales?", ["in thousands"]) == "percent"


def test_an_answer_type_stratum_of_the_sample_keeps_only_its_questions(contexts):
    _, held_out = split_contexts(contexts)
    sample = stratified_sample(held_out, 6)
    types = {q.uid: q.answer_type for c in held_out for q in c.questions}
    got = of_answer_types(held_out, ["arithmetic"], sample)
    assert got == {u for u in sample if types[u] == "arithmetic"}
    assert of_answer_types(held_out, ["arithmetic"]) == {u for u, t in types.items() if t == "arithmetic"}
    with pytest.raises(ConfigError, match="unknown answer type 'numeric': span, multi-span, arithmetic, count"):
        of_answer_types(held_out, ["numeric"])


def test_the_stratified_sample_is_fixed_proportional_and_inside_the_half(contexts):
    train, held_out = split_contexts(contexts)
    assert {c.table_uid for c in train}.isdisjoint({c.table_uid for c in held_out})
    sample = stratified_sample(held_out, 6)
    assert len(sample) == 6 and sample == stratified_sample(list(reversed(held_out)), 6)  # order-free
    train_uids = {q.uid for c in train for q in c.questions}
    assert sample.isdisjoint(train_uids)
    strata: dict[tuple[str, str], int] = {}
    for c in held_out:
        for q in c.questions:
            strata[(q.answer_type, q.answer_from)] = strata.get((q.answer_type, q.answer_from), 0) + 1
    total = sum(strata.values())
    got = {
        k: sum(q.uid in sample for c in held_out for q in c.questions if (q.answer_type, q.answer_from) == k)
        for k in strata
    }
    for k, n in strata.items():
        assert abs(got[k] - 6 * n / total) < 1.0, k  # largest remainder: within one of the share
    with pytest.raises(ValueError):
        stratified_sample(held_out, 0)


def test_paired_differences_compare_systems_on_the_same_questions(contexts):
    q = question(contexts, "c2c72e15-a955-4c45-bc51-95112d7db982")  # 3,181 million
    context = next(c for c in contexts if q in c.questions)
    results = evaluate(
        [context],
        {"wrong": lambda *_: "Answer: 1", "right-once": lambda *_: "Answer: 3,181 million"},
        limit=4,
    )
    overall = next(d for d in results.differences() if d["answer_type"] == "all")
    assert (overall["system"], overall["baseline"], overall["questions"], overall["em_diff"]) == (
        "right-once",
        "wrong",
        4,
        25.0,
    )
    assert overall["ci_low"] <= 25.0 <= overall["ci_high"]
    row = next(r for r in results.rows() if r["system"] == "right-once" and r["answer_type"] == "all")
    assert row["em_ci_low"] <= row["em"] == 25.0 <= row["em_ci_high"]


def test_the_agent_answers_arithmetic_with_a_derivation_that_recomputes(contexts, smol_client):
    """SmolLM2 through the agent on the sample's arithmetic questions: every answer it gives carries its
    expression and operands, and evaluating that expression independently (simpleeval) gives the answer;
    every other outcome is an empty answer with the reason."""
    from simpleeval import simple_eval

    agent = agent_systems(smol_client, 160, {c.table_uid: c.table for c in contexts})["agent"]
    asked = 0
    for c in contexts:
        for q in [q for q in c.questions if q.answer_type == "arithmetic"][:1]:
            text = agent(q.question, c.facts, c.passages)
            asked += 1
            answer = extract_answer(text)
            if not answer.spans:
                assert text.startswith(("could not answer", "could not verify")) and text.rstrip().endswith("Answer:")
                continue
            expression, rest = text.split(" with ", 1)
            operands = dict(kv.split("=") for kv in rest.split(" = ")[0].split(", "))
            value = simple_eval(expression, names={k: float(v) for k, v in operands.items()})
            assert float(answer.spans[0].replace(",", "")) == pytest.approx(round(value, 2), abs=0.006)
    assert asked == sum(any(q.answer_type == "arithmetic" for q in c.questions) for c in contexts) > 0


# --------------------------------------------------------------------------------- the picture


def _partial_text(q) -> str:
    """The gold answer's first span only, scale word dropped: full marks on span and count questions without a
    scale, a partial F1 on a multi-span answer, 0 where the scale is needed."""
    return f"Answer: {gold_answers(q.record())[0]}"


def _chart_results(contexts):
    """Three systems on the 30 sample questions, scored by the metric against the dataset's gold answers: the
    gold answer as instructed, the first span without its scale, and no answer line at all."""
    by_question = {q.question: q for c in contexts for q in c.questions}
    return evaluate(
        contexts,
        {
            "two-stage": lambda question, facts, passages: _gold_text(by_question[question]),
            "agent": lambda question, facts, passages: _partial_text(by_question[question]),
            "agent-shuffled": lambda question, facts, passages: "I cannot tell.",
        },
    )


def test_save_draws_em_and_f1_with_intervals_and_names_the_picture(contexts, tmp_path):
    from PIL import Image

    results = _chart_results(contexts)
    rows = {(r["system"], r["answer_type"]): r for r in results.rows()}
    assert [rows[("two-stage", "all")][k] for k in ("em", "em_ci_low", "f1", "f1_ci_low", "f1_ci_high")] == [100.0] * 5
    assert [rows[("agent-shuffled", "all")][k] for k in ("em", "f1", "f1_ci_high", "no_answer_line")] == [0, 0, 0, 30]
    partial = rows[("agent", "multi-span")]  # one of 2-3 gold spans: F1 strictly between EM and 100
    assert partial["em"] == 0.0 < partial["f1_ci_low"] <= partial["f1"] <= partial["f1_ci_high"] < 100.0
    out, bench = tmp_path / "tatqa", tmp_path / "results"
    paths = results.save(out, results_dir=bench)
    png = out / "tatqa-em-f1.png"
    assert paths == [out / "answers.jsonl", out / "summary.json", png]
    first = png.read_bytes()
    assert first[:8] == b"\x89PNG\r\n\x1a\n" and len(first) > 20_000
    with Image.open(png) as im:
        assert im.format == "PNG" and 1000 <= im.width <= 2500 and 800 <= im.height <= 1500, im.size
    assert not list(out.glob("*.part.png"))
    written = json.loads((bench / "eval-tatqa.json").read_text(encoding="utf-8"))
    assert written["parameters"]["chart"] == str(png) and written["parameters"]["questions"] == 30
    assert written["tables"]["rows"] == results.rows()
    questions = written["tables"]["questions"]  # per question, so a later run can be paired with this one
    assert len(questions) == 30 and len({q["question_uid"] for q in questions}) == 30
    assert all(q["em"]["two-stage"] == 1 and q["em"]["agent-shuffled"] == 0 for q in questions)
    assert sum(q["em"]["agent"] for q in questions) == round(rows[("agent", "all")]["em"] * 30 / 100)
    results.save(out, results_dir=bench)
    assert png.read_bytes() == first  # no metadata that changes between runs


def test_a_system_without_questions_of_a_type_has_no_bar_there(contexts, tmp_path):
    results = _chart_results(contexts)
    # agent answered only the span and arithmetic questions; agent-shuffled answered none
    results.results = [
        r
        for r in results.results
        if r.system == "two-stage" or (r.system == "agent" and r.answer_type in ("span", "arithmetic"))
    ]
    rows = results.rows()
    assert {r["answer_type"] for r in rows if r["system"] == "agent"} == {"all", "span", "arithmetic"}
    assert [r["questions"] for r in rows if r["system"] == "agent-shuffled"] == [0]
    bars = chart_bars(rows)
    assert {(b.system, b.group.split("\n")[0]) for b in bars} == {
        *(("two-stage", kind) for kind in ("all", "span", "multi-span", "arithmetic", "count")),
        *(("agent", kind) for kind in ("all", "span", "arithmetic")),
    }
    assert len(bars) == 2 * 8 and {b.panel for b in bars} == {"exact match (EM)", "numeracy-aware F1"}
    groups = {b.group for b in bars}  # the two systems answered different numbers of questions overall
    assert "all\n(n=21-30)" in groups and "span\n(n=11)" in groups and "count\n(n=5)" in groups
    paths = results.save(tmp_path / "tatqa")
    assert paths[-1] == tmp_path / "tatqa" / "tatqa-em-f1.png" and paths[-1].read_bytes()[:4] == b"\x89PNG"


def test_no_answered_question_draws_no_picture_and_a_bad_interval_is_refused(contexts, tmp_path):
    from finkg import plots
    from finkg.eval.tatqa import TatqaResults
    from kg.errors import EvaluationError

    out = tmp_path / "empty"
    assert TatqaResults(["agent"]).save(out) == [out / "answers.jsonl", out / "summary.json"]
    assert not (out / "tatqa-em-f1.png").exists()
    assert json.loads((out / "eval-tatqa.json").read_text(encoding="utf-8"))["parameters"]["chart"] is None
    with pytest.raises(EvaluationError, match="no figures to draw"):
        chart([], tmp_path / "none.png")
    with pytest.raises(EvaluationError, match=re.escape("agent / span: interval 10.0..20.0 misses 30.0")):
        plots.interval_bars([plots.Bar("span", "agent", 30.0, 10.0, 20.0)], tmp_path / "bad.png", title="t", ylabel="%")
    assert not (tmp_path / "bad.png").exists()
