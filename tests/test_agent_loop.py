"""The program-of-thought loop (generation/agent/loop.py) with the real SmolLM2 (mechanics only: SmolLM2 is too
small to be right; what is asserted is that steps are recorded, the gate always ran or the failure is recorded,
and no answer ever carries a number the gate cannot trace)."""

from __future__ import annotations

import pytest
from test_agent_tools import SALES
from test_llm import smol_gguf

from generation.agent.arithmetic import calculate
from generation.agent.gate import check_answer
from generation.agent.loop import answer_arithmetic, format_result, identifier_operands, shape_complaint, table_evidence
from generation.llm import LlamaCppBackend, LLMClient


def test_format_result_keeps_two_decimals():
    assert format_result(-22.2222) == "-22.22" and format_result(15_608_000_000.0) == "15608000000"
    assert format_result(-0.001) == "0" and format_result(12.5) == "12.5"


@pytest.fixture(scope="module")
def smol_client():
    return LLMClient(LlamaCppBackend(smol_gguf(), n_ctx=2048, n_threads=2))


@pytest.mark.model
def test_the_loop_records_steps_and_never_returns_an_untraceable_number(smol_client):
    evidence = table_evidence(SALES)
    out = answer_arithmetic(smol_client, "What is the change in Other in 2019 from 2018?", evidence)
    assert out.steps and out.steps[0].kind == "llm"
    assert out.status in ("answered", "could not verify", "could not answer")
    if out.answer is not None:
        assert out.status == "answered" and out.verdict is not None and out.verdict.passed
        assert check_answer(out.answer, "arithmetic", [], [*evidence, str(out.derivation["result"])]).passed
        assert out.derivation["expression"]
    else:
        assert out.reasons and out.status != "answered"
    if any(s.kind == "tool" and s.error is None for s in out.steps):
        assert out.verdict is not None  # a successful calculation always reaches the gate
        assert any(s.kind == "gate" for s in out.steps)


@pytest.mark.model
def test_invalid_json_is_a_failed_step(smol_client):
    # four tokens cannot hold the JSON object: the answer is cut off, fails the schema, the step is recorded failed
    out = answer_arithmetic(smol_client, "What is 44.1 minus 56.7?", table_evidence(SALES), max_tokens=4)
    assert out.answer is None and out.status == "could not answer" and out.verdict is None
    assert len(out.steps) == 2 and all(s.kind == "llm" and s.error and "invalid JSON" in s.error for s in out.steps)
    assert out.steps[0].output is not None  # the raw answer is kept


def test_operand_names_that_are_not_identifiers_are_repaired_in_the_expression():
    ops, expr = identifier_operands(
        {"2019 Men Years": 5.0, "2018 Men Years": 4.0, "x": 1.0}, "(2019 Men Years - 2018 Men Years) / x"
    )
    assert ops == {"v_2019_Men_Years": 5.0, "v_2018_Men_Years": 4.0, "x": 1.0}
    assert expr == "(v_2019_Men_Years - v_2018_Men_Years) / x"
    assert calculate(expr, ops).value == 1.0


def test_an_average_must_divide_a_parenthesized_sum():
    question = "What is the average revenue in 2018 and 2019?"
    assert shape_complaint(question, "a + b / 2") and shape_complaint(question, "a + b")
    assert shape_complaint(question, "(a + b) / 2") is None and shape_complaint(question, "[a + b]/2") is None
    assert shape_complaint(question, "avg_2019") is None  # an average the table states
    assert shape_complaint("What is the change in revenue?", "a + b / 2") is None
