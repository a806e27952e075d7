"""The reader's thought run by the calculator (generation/agent/thought.py; seed 004 appendix C, seed 001 §4.4).

The answer texts are real: written by the Qwen2.5-Coder-1.5B reader LoRA-tuned on a GPU (README, issue 18) for
questions of TAT-QA dev's evaluation half. The gold answers in the last test are the dataset's."""

from __future__ import annotations

from pathlib import Path

import pytest

from finkg.eval.tatqa import score_text
from finkg.train.reader import thought
from generation.agent.thought import calculate_call, run_thought, thought_program, with_calculator
from generation.llm.answer_line import extract_answer
from ingest.datasets.tatqa import read_tatqa

DATA = Path(__file__).parent / "data"

# the tuned reader's own arithmetic was wrong (1.67); its program gives the gold 1.57
WRONG_SUM = (
    'Thought: calculate(expression="(n1+n2+n3) /n4", operands={"n1": 1.7, "n2": 1.5, "n3": 1.5, "n4": 3.0})\n'
    "Answer: 1.67 percent"
)
# gold -78.06: the program is right, the model's number (-70.51) is not
WRONG_CHANGE = (
    'Thought: calculate(expression="((n1-n2)/n3) * 100", operands={"n1": 4.3, "n2": 19.6, "n3": 19.6})\n'
    "Answer: -70.51 percent"
)
SPAN = "Thought: read from the table\nAnswer: 73,260; 57,768 thousand"


def test_the_program_is_parsed_from_the_thought():
    assert thought_program(WRONG_CHANGE) == ("((n1-n2)/n3) * 100", {"n1": 4.3, "n2": 19.6, "n3": 19.6})
    assert thought_program(SPAN) is None
    assert thought_program(calculate_call("(n1-n2)/n2", {"n1": 4.3, "n2": 19.6})) == (
        "(n1-n2)/n2",
        {"n1": 4.3, "n2": 19.6},
    )
    assert thought_program('Thought: calculate(expression="n1-n2", operands={"n1": 1,})\nAnswer: 1') is None


@pytest.mark.parametrize(("text", "number"), [(WRONG_SUM, "1.57"), (WRONG_CHANGE, "-78.06")])
def test_the_answer_number_is_the_calculators_and_the_scale_word_stays(text, number):
    ran = run_thought(text)
    assert ran.replaced and ran.result is not None and ran.result.ok
    assert ran.text.splitlines()[-1] == f"Answer: {number} percent"
    assert ran.text.splitlines()[0] == text.splitlines()[0]  # the thought is kept as written
    got = extract_answer(ran.text)
    assert (got.spans, got.scale) == ((number,), "percent")


def test_answers_without_a_program_or_with_several_numbers_are_left_as_written():
    assert run_thought(SPAN).text == SPAN
    assert run_thought(SPAN).result is None
    two = 'Thought: calculate(expression="n1-n2", operands={"n1": 5, "n2": 3})\nAnswer: 5; 3'
    ran = run_thought(two)
    assert ran.text == two and not ran.replaced and ran.result is not None and ran.result.value == 2


def test_a_tool_error_keeps_the_models_text_and_reports_the_error():
    text = 'Thought: calculate(expression="(n1-n2)/n3", operands={"n1": 4.3, "n2": 19.6, "n3": 0})\nAnswer: 7 percent'
    ran = run_thought(text)
    assert ran.text == text and not ran.replaced
    assert ran.result is not None and "division by zero" in str(ran.result.error)
    unknown = run_thought('Thought: calculate(expression="n1-n9", operands={"n1": 4})\nAnswer: 4')
    assert unknown.result is not None and "n9" in str(unknown.result.error) and not unknown.replaced


def test_a_program_without_an_answer_line_gets_one():
    ran = run_thought('Thought: calculate(expression="n1*n2", operands={"n1": 2.5, "n2": 4})')
    assert ran.replaced and ran.text.endswith("\nAnswer: 10")


def test_the_wrapped_answerer_makes_the_same_call_and_returns_the_tools_number():
    calls = []

    def reader(question, facts, passages):
        calls.append((question, facts, passages))
        return WRONG_CHANGE

    answer = with_calculator(reader)("What was the change?", ["f"], ["p"])
    assert calls == [("What was the change?", ["f"], ["p"])]
    assert answer.endswith("Answer: -78.06 percent")


def test_programs_from_the_datasets_derivations_give_the_datasets_answers():
    """Every arithmetic question of the sample whose derivation is a program: T (the training target) with a
    wrong number in Y, run through the calculator, scores EM 1 against the dataset's own gold answer."""
    contexts = read_tatqa(DATA / "tatqa_dev_sample.json")
    checked = 0
    for c in contexts:
        for i, q in enumerate(c.questions):
            if q.answer_type != "arithmetic":
                continue
            t, is_program = thought(q)
            if not is_program:
                continue
            text = f"Thought: {t}\nAnswer: 123456789 {q.scale}".rstrip()
            assert score_text("x", c, i, text).em == 0.0  # the wrong number scores nothing
            assert score_text("x", c, i, run_thought(text).text).em == 1.0, (q.question, t, q.answer)
            checked += 1
    assert checked >= 5
