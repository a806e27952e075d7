"""The reader's thought run by the calculator: when seed 004's reader writes its thought T as a ``calculate`` call
(the form ``finkg train reader`` teaches: ``Thought: calculate(expression="(n1 - n2) / n2 * 100", operands={"n1":
4.3, "n2": 19.6})``), the call is evaluated by the agent's deterministic ``calculate`` tool and the number of the
answer line Y is replaced by the tool's result, so a computed number in the answer is the tool's, not the model's
(when the call fails, the text stays as the model wrote it and the error is returned beside it).

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt appendix C (the {I, F, T, Y} format, T the derivation) and
../shared/seeds/001_70c6b08e66b7be55.txt section 4.4 (deterministic tools: a number in an answer comes from a tool).
Measured reason: the tuned Qwen2.5-Coder-1.5B reader wrote a program whose value equals the gold answer for 52 of
71 arithmetic questions but answered 14 of them right by its own arithmetic (README, issue 18).

:func:`answer_with_thought` is the agent's route over such a reader (``finkg report --reader reader-calc``): the
thought run by the tool, the thought's operands checked against the facts, the answer through the gate
(:func:`generation.agent.gate.check_answer`), one repair with the gate's complaint, the trajectory kept; no answer
with a number the gate cannot trace is returned.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from generation.agent.arithmetic import calculate
from generation.agent.gate import check_answer, evidence_numbers
from generation.agent.loop import format_result, untraced_operands
from generation.agent.results import ToolResult
from generation.agent.toolloop import ToolRun
from generation.agent.trajectory import StepRecord, tool_step
from generation.llm import LLMAnswerError
from generation.llm.answer_line import extract_answer

ThoughtReader = Callable[[str, Sequence[str], "tuple[str, str] | None"], str]
"""Seed 004's reader as the agent calls it: ``read(question, facts, repair) -> "Thought: ...\\nAnswer: ..."``, the
facts as sentences (ranked; the reader cuts them to its budget), ``repair`` None or ``(its previous text, the
gate's complaint)`` for the second attempt (:func:`generation.qa.reader.thought_reader` builds one)."""

_CALL = re.compile(
    r'calculate\(\s*expression\s*=\s*(?P<expr>"(?:[^"\\]|\\.)*")\s*,\s*operands\s*=\s*(?P<ops>\{[^{}]*\})\s*\)'
)
_ANSWER_LINE = re.compile(r"^\s*Answer:\s*(?P<body>.*)$", re.MULTILINE | re.IGNORECASE)
_NUMBER = re.compile(r"-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)")
"""A number of the answer line (the currency sign and the words around it stay as written)."""


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


def answer_with_thought(
    read: ThoughtReader,
    question: str,
    evidence: Sequence[str],
    *,
    question_type: str = "arithmetic",
    attempts: int = 2,
) -> ToolRun:
    """Answer ``question`` with seed 004's reader whose ``calculate`` thought the tool runs (see the module doc).

    Each attempt: the reader's text; its thought's program run by ``calculate`` (:func:`run_thought`), its operands
    required to be numbers of ``evidence`` (sign aside); the answer line (:func:`generation.llm.answer_line.
    extract_answer`; for a multi-span question its items, each with the scale word) through the gate, with the
    tool's result as the only tool output and ``evidence`` (a number-free answer must quote the evidence or the
    question). A failed attempt's reason goes back to the reader once (``attempts`` = 2).

    Args:
        read: the reader (:data:`ThoughtReader`). question: the question. evidence: the fact sentences shown, in
            rank order (every number an answer or an operand may use). question_type: the gate's answer type
            (``span``, ``multi-span``, ``count``, ``arithmetic``). attempts: the first try plus repairs.

    Returns:
        :class:`generation.agent.toolloop.ToolRun`: ``answer`` (the answer line as the tool left it) set only when
        the gate passed; ``status`` ``answered``, ``could not verify`` (the gate rejected) or ``could not answer``
        (no usable answer: an empty text, no answer line, a failed calculation, an operand not in the facts);
        steps ``llm`` (the reader's text), ``calculate`` (the thought's program) and ``gate``.

    Raises:
        LLMUnavailable, BudgetExceeded: the LLM cannot be used (an empty answer is a failed step instead).
        ValueError: ``question_type`` is not one the gate knows.
    """
    out = ToolRun(None, "could not answer")
    pool = evidence_numbers(evidence)
    repair: tuple[str, str] | None = None
    for _ in range(attempts):
        asked = {"question": question, "repair": repair[1] if repair else None}
        try:
            text = read(question, evidence, repair)
        except LLMAnswerError as exc:
            error = f"the reader gave no answer: {exc}"
            out.steps.append(StepRecord("llm", asked, exc.raw, error))
            out.reasons.append(error)
            repair = (str(exc.raw or ""), "write a Thought and an Answer line")
            continue
        out.steps.append(StepRecord("llm", asked, text))
        out.tool_results = []  # the attempt's own (the derivation's); the steps keep every attempt's
        ran = run_thought(text)
        error: str | None = None
        if ran.result is not None:
            operands = ran.result.args.get("operands")
            untraced = untraced_operands(operands if isinstance(operands, dict) else {}, pool)
            error = ran.result.error or (
                f"operand(s) {', '.join(untraced)} are not numbers of the facts" if untraced else None
            )
            out.steps.append(dataclasses.replace(tool_step(ran.result), error=error))
            if error is None:
                out.tool_results.append(ran.result)
        read_back = extract_answer(ran.text)
        line = read_back.line.strip() if error is None else ""
        if error is None and not line:
            error = "the text has no answer line"
        if error is None:
            observed = [r.observation() for r in out.tool_results]
            items = [f"{x} {read_back.scale}".strip() for x in read_back.spans]
            gated = items if question_type == "multi-span" else line
            verdict = check_answer(gated, question_type, out.tool_results, evidence, quote_from=[question, *observed])
            out.verdict = verdict
            error = None if verdict.passed else "; ".join(verdict.reasons)
            out.steps.append(StepRecord("gate", line, verdict.as_dict(), error))
            if verdict.passed:
                out.answer, out.status, out.reasons = line, "answered", []
                return out
            out.status = "could not verify"
        out.reasons.append(error or "")
        repair = (text, error or "")
    return out
