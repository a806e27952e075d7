"""The reader's thought run by the calculator (generation/agent/thought.py; seed 004 appendix C, seed 001 §4.4).

The answer texts are real: written by the Qwen2.5-Coder-1.5B reader LoRA-tuned on a GPU (README, issue 18) for
questions of TAT-QA dev's evaluation half. The gold answers in the last test are the dataset's."""

from __future__ import annotations

from pathlib import Path

import pytest

from finkg.eval.tatqa import score_text
from finkg.train.reader import thought
from generation.agent.thought import (
    answer_with_thought,
    calculate_call,
    run_thought,
    thought_program,
    with_calculator,
)
from generation.llm import LLMAnswerError
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


# ---------------------------------------------------------------- the agent's reader route (answer_with_thought)

CHANGE_FACTS = ["Net income was $4.3 million in 2019.", "Net income was $19.6 million in 2018."]


class Scripted:
    """The reader's texts in turn (real tuned-Qwen texts above), recording what each call was given."""

    def __init__(self, *texts):
        self.texts, self.calls = list(texts), []

    def __call__(self, question, facts, repair):
        self.calls.append((question, list(facts), repair))
        text = self.texts.pop(0)
        if isinstance(text, Exception):
            raise text
        return text


def test_the_route_answers_with_the_tools_number_and_records_llm_calculate_and_gate_steps():
    read = Scripted(WRONG_CHANGE)
    got = answer_with_thought(read, "What was the change in net income?", CHANGE_FACTS)
    assert (got.answer, got.status, got.reasons) == ("-78.06 percent", "answered", [])
    assert [s.tool for s in got.steps] == ["llm", "calculate", "gate"]
    assert got.steps[0].output == WRONG_CHANGE  # the model's text kept as written (its -70.51 included)
    assert got.verdict is not None and got.verdict.passed
    (calc,) = got.tool_results
    assert calc.detail["operands"] == {"n1": 4.3, "n2": 19.6, "n3": 19.6} and round(calc.value, 2) == -78.06
    assert read.calls == [("What was the change in net income?", CHANGE_FACTS, None)]


def test_an_operand_not_in_the_facts_is_sent_back_once_then_could_not_answer():
    read = Scripted(WRONG_SUM, WRONG_SUM)  # 1.7, 1.5, 3.0 are not numbers of these facts
    got = answer_with_thought(read, "What was the average?", CHANGE_FACTS)
    assert got.answer is None and got.status == "could not answer" and got.tool_results == []
    assert len(got.reasons) == 2 and "n1=1.7" in got.reasons[0] and "not numbers of the facts" in got.reasons[0]
    assert read.calls[1][2] == (WRONG_SUM, got.reasons[0])  # the repair carries the text and the complaint
    assert [s.tool for s in got.steps] == ["llm", "calculate", "llm", "calculate"]
    assert all(s.error for s in got.steps if s.tool == "calculate")


def test_the_models_own_number_without_a_program_fails_the_gate_and_a_repair_can_pass():
    own = "Thought: the change is the difference\nAnswer: -15.2 million"  # -15.3 is right; no tool ran
    read = Scripted(own, WRONG_CHANGE)
    got = answer_with_thought(read, "What was the change in net income?", CHANGE_FACTS)
    assert got.status == "answered" and got.answer == "-78.06 percent"
    assert [s.tool for s in got.steps] == ["llm", "gate", "llm", "calculate", "gate"]
    assert got.steps[1].error and "15.2" in got.steps[1].error
    assert read.calls[1][2][0] == own and "15.2" in read.calls[1][2][1]


def test_a_gate_failure_twice_is_could_not_verify_and_an_empty_answer_is_a_failed_step():
    own = "Thought: the change is the difference\nAnswer: -15.2 million"
    got = answer_with_thought(Scripted(own, own), "What was the change in net income?", CHANGE_FACTS)
    assert got.answer is None and got.status == "could not verify" and len(got.reasons) == 2
    empty = LLMAnswerError("the answer is empty", "test reader", "")
    got = answer_with_thought(
        Scripted(empty, SPAN), "What were the revenues?", ["Revenues: 73,260; 57,768"], question_type="multi-span"
    )
    assert got.steps[0].tool == "llm" and "no answer" in str(got.steps[0].error)
    assert got.status == "answered" and got.answer == "73,260; 57,768 thousand"
    with pytest.raises(ValueError):
        answer_with_thought(Scripted(SPAN), "q?", ["Revenues: 73,260; 57,768"], question_type="table")
