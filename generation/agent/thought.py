"""The reader's thought run by the calculator: when seed 004's reader writes its thought T as a ``calculate`` call
(the form ``finkg train reader`` teaches: ``Thought: calculate(expression="(n1 - n2) / n2 * 100", operands={"n1":
4.3, "n2": 19.6})``), the call is evaluated by the agent's deterministic ``calculate`` tool and the number of the
answer line Y is replaced by the tool's result, so a computed number in the answer is the tool's, not the model's
(when the call fails, the text stays as the model wrote it and the error is returned beside it).

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt appendix C (the {I, F, T, Y} format, T the derivation) and
../shared/seeds/001_70c6b08e66b7be55.txt section 4.4 (deterministic tools: a number in an answer comes from a tool).
Measured reason: the tuned Qwen2.5-Coder-1.5B reader wrote a program whose value equals the gold answer for 52 of
71 arithmetic questions but answered 14 of them right by its own arithmetic (README, issue 18).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from generation.agent.arithmetic import calculate
from generation.agent.loop import format_result
from generation.agent.results import ToolResult

_CALL = re.compile(
    r'calculate\(\s*expression\s*=\s*(?P<expr>"(?:[^"\\]|\\.)*")\s*,\s*operands\s*=\s*(?P<ops>\{[^{}]*\})\s*\)'
)
_ANSWER_LINE = re.compile(r"^\s*Answer:\s*(?P<body>.*)$", re.MULTILINE | re.IGNORECASE)
_NUMBER = re.compile(r"-?\$?\s?(?:\d[\d,]*(?:\.\d+)?|\.\d+)")


@dataclass(frozen=True)
class ThoughtRun:
    """What :func:`run_thought` did to one answer.

    Attributes:
        text: the answer text, its answer line's number replaced by the program's result when one ran.
        result: the ``calculate`` tool's result (its ``value``, or its ``error``); None when T held no call.
        replaced: whether the answer line now carries the tool's number.
    """

    text: str
    result: ToolResult | None
    replaced: bool


def calculate_call(expression: str, operands: dict[str, float]) -> str:
    """The thought T as ``finkg train reader`` writes it and :func:`thought_program` reads it back:
    ``calculate(expression="n1 - n2", operands={"n1": 5.0, "n2": 3.0})`` (both arguments as JSON)."""
    return f"calculate(expression={json.dumps(expression)}, operands={json.dumps(operands)})"


def thought_program(text: str) -> tuple[str, dict[str, Any]] | None:
    """The first ``calculate(expression="...", operands={...})`` call in ``text`` (:func:`calculate_call`'s form)
    as ``(expression, operands)`` (both parsed as JSON), or None when there is none or it is not valid JSON."""
    m = _CALL.search(text or "")
    if m is None:
        return None
    try:
        expression, operands = json.loads(m.group("expr")), json.loads(m.group("ops"))
    except json.JSONDecodeError:
        return None
    if not isinstance(expression, str) or not isinstance(operands, dict):
        return None
    return expression, operands


def run_thought(text: str) -> ThoughtRun:
    """Evaluate the reader's ``calculate`` thought with the tool and put its result into the answer line.

    The answer line (the last ``Answer: ...`` line) keeps its words (the scale: ``million``, ``percent``) and its
    number is replaced by the result (at most two decimals, :func:`generation.agent.loop.format_result`); an answer
    line with no number, or with more than one (a multi-span answer), is left as it is; with no answer line,
    ``Answer: <result>`` is appended. A tool error (an unknown operand, division by zero) leaves the text as the
    model wrote it, with the error in ``result``.
    """
    program = thought_program(text)
    if program is None:
        return ThoughtRun(text, None, False)
    result = calculate(*program)
    if not result.ok:
        return ThoughtRun(text, result, False)
    value = format_result(float(result.value))
    lines = list(_ANSWER_LINE.finditer(text))
    if not lines:
        return ThoughtRun(f"{text.rstrip()}\nAnswer: {value}", result, True)
    last = lines[-1]
    numbers = list(_NUMBER.finditer(last.group("body")))
    if len(numbers) != 1:
        return ThoughtRun(text, result, False)
    body = last.group("body")
    n = numbers[0]
    new_body = body[: n.start()] + value + body[n.end() :]
    return ThoughtRun(text[: last.start("body")] + new_body + text[last.end("body") :], result, True)


def with_calculator(answerer: Callable[..., str]) -> Callable[..., str]:
    """``answerer`` (question, facts, passages -> text, e.g. seed 004's reader) whose texts go through
    :func:`run_thought`: the same LLM call, the number computed by the tool."""

    def answer(*args: Any, **kwargs: Any) -> str:
        return run_thought(answerer(*args, **kwargs)).text

    return answer
