"""The program-of-thought loop: the LLM picks operands and writes one expression; ``calculate`` evaluates; the
gate decides.

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.3 (the solver: inventory the inputs, write every
value as a named variable before computing, then execute) and section 4.4 (the Numerical Reasoning Engine and
the Answer Consolidation Gate as the only way out of the loop). finkg's small offline model does not run code:
in JSON mode (:mod:`generation.llm.jsonmode`) it answers ``{"operands": {name: number}, "expression": "..."}``,
the operands picked from the question's table and facts, and :func:`generation.agent.arithmetic.calculate`
evaluates the expression.

Each attempt is recorded as steps (``llm``, ``tool``, ``gate``). An attempt fails when the LLM's answer is not
JSON that fits the schema (the raw answer is kept), when an operand is not a number stated in the table or
facts, when ``calculate`` returns an error, when the expression's shape does not fit the question
(:func:`shape_complaint`: an average's sum in parentheses), or when the gate rejects the answer; the complaint
goes back to the LLM once (``attempts`` = 2 by default). When no attempt passes, the result is "could not verify" (the gate ran)
or "could not answer", with the reasons, and **no answer**: a number the gate cannot trace is never returned.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from generation.agent.arithmetic import calculate
from generation.agent.gate import Verdict, check_answer, evidence_numbers, same_number
from generation.agent.results import ToolResult
from generation.llm import LLMAnswerError, LLMClient

POT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "operands": {"type": "object", "description": "name -> number copied from the table or facts"},
        "expression": {"type": "string", "description": "arithmetic over the operand names"},
    },
    "required": ["operands", "expression"],
}

SYSTEM = (
    "You answer a financial question by writing one arithmetic expression. Copy every number you need from "
    "the table or facts into operands, each under a short name (letters, digits, _), then write the expression "
    "over those names with + - * / and parentheses. Do not compute the result yourself."
)


@dataclass(frozen=True)
class Step:
    """One step of a run: ``kind`` ``llm`` (input: the prompt's last message; output: the parsed JSON), ``tool``
    (a :class:`ToolResult` as a dict) or ``gate`` (the verdict as a dict); ``error`` None when it succeeded."""

    n: int
    kind: str
    input: Any
    output: Any
    error: str | None = None


@dataclass
class AgentAnswer:
    """A question's outcome.

    Attributes:
        answer: the gated answer text, or None. status: ``answered``, ``could not verify`` (the gate rejected
        every attempt) or ``could not answer`` (no attempt reached the gate). reasons: why not answered.
        verdict: the last gate verdict (None when the gate never ran). derivation: operands, expression, result of
        the answer's calculation. steps: the trajectory.
    """

    answer: str | None
    status: str
    reasons: list[str] = field(default_factory=list)
    verdict: Verdict | None = None
    derivation: dict[str, Any] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)


def table_evidence(table: Sequence[Sequence[str]]) -> list[str]:
    """A table as evidence texts: one line per row, cells joined by `` | ``."""
    return [" | ".join(c.strip() for c in row) for row in table]


def format_result(value: float) -> str:
    """A computed value as an answer: at most two decimals, trailing zeros dropped (``-22.2222`` -> ``-22.22``)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def prompt(
    question: str, evidence: Sequence[str], complaint: str | None = None, examples: str = ""
) -> list[dict[str, str]]:
    """The chat messages of one attempt: the system instruction, the few-shot ``examples`` (the experience
    memory's block, :func:`generation.agent.memory.memory_block`; none when empty), the evidence and the question,
    and the previous attempt's complaint when there is one."""
    body = (examples + "\n\n" if examples else "") + "Table and facts:\n" + "\n".join(evidence)
    body += f"\n\nQuestion: {question}"
    if complaint:
        body += f"\n\nYour previous answer was rejected: {complaint}. Try again."
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": body}]


def identifier_operands(operands: dict[str, Any], expression: str) -> tuple[dict[str, Any], str]:
    """Operand names made identifiers (``"2019 Men Years"`` -> ``v_2019_Men_Years``), the expression rewritten to
    match (longest names first): a small model's usual slip, repaired rather than sent back. Names that are
    identifiers already are kept."""
    renamed: dict[str, str] = {}
    for name in operands:
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            continue
        new = re.sub(r"\W+", "_", name).strip("_") or "v"
        new = f"v_{new}" if new[0].isdigit() else new
        while new in operands or new in renamed.values():
            new += "_"
        renamed[name] = new
    for old in sorted(renamed, key=len, reverse=True):
        expression = expression.replace(old, renamed[old])
    return {renamed.get(k, k): v for k, v in operands.items()}, expression


def untraced_operands(operands: dict[str, Any], pool: Sequence[float]) -> list[str]:
    """The operands (``name=value``) whose value, sign aside, is no number of ``pool`` (the evidence's numbers,
    :func:`generation.agent.gate.evidence_numbers`); values that are not numbers are left to ``calculate``."""
    out = []
    for name, value in operands.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue  # calculate reports it
        if not any(same_number(abs(value), abs(p)) for p in pool):
            out.append(f"{name}={value}")
    return out


_AVERAGE = re.compile(r"\b(?:average|mean)\b", re.IGNORECASE)


def shape_complaint(question: str, expression: str) -> str | None:
    """What is wrong with the expression's shape for the question, or None: an average (the question says
    "average" or "mean") must divide a parenthesized sum (``(a + b) / 2``); ``a + b / 2`` divides only ``b``, and
    a sum with no division is not an average. Sent back to the LLM like the gate's complaints."""
    if _AVERAGE.search(question) and "+" in expression and not re.search(r"[)\]]\s*/", expression):
        return "an average is the sum in parentheses divided by the count, e.g. (a + b) / 2"
    return None


def answer_arithmetic(
    client: LLMClient,
    question: str,
    evidence: Sequence[str],
    question_type: str = "arithmetic",
    attempts: int = 2,
    max_tokens: int = 160,
    examples: str = "",
) -> AgentAnswer:
    """Answer one arithmetic question by program of thought (see the module doc).

    Args:
        client: the LLM client (JSON mode). question: the question text. evidence: the table rows
            (:func:`table_evidence`) and fact or passage texts the operands must come from.
        question_type: the gate's answer type (``arithmetic`` or ``count``). attempts: tries, the first plus
            repairs. max_tokens: the LLM's answer limit. examples: the few-shot block put before the evidence
            (retrieved experiences; seed 001, equation 5: with none, the prompt is the plain one).

    Returns:
        :class:`AgentAnswer`; ``answer`` is set only when the gate passed.

    Raises:
        LLMUnavailable, BudgetExceeded: the LLM cannot be used (an unusable answer is a failed step instead).
    """
    out = AgentAnswer(None, "could not answer")
    pool = evidence_numbers(evidence)
    complaint: str | None = None
    for _ in range(attempts):
        messages = prompt(question, evidence, complaint, examples)
        try:
            result = client.chat(messages, max_tokens=max_tokens, json_schema=POT_SCHEMA)
        except LLMAnswerError as exc:
            out.steps.append(Step(len(out.steps), "llm", messages[-1]["content"], exc.raw, f"invalid JSON: {exc}"))
            complaint = 'answer with JSON only: {"operands": {...}, "expression": "..."}'
            out.reasons.append(complaint)
            continue
        data = result.data
        out.steps.append(Step(len(out.steps), "llm", messages[-1]["content"], data))
        given = data.get("operands") if isinstance(data.get("operands"), dict) else {}
        operands, expression = identifier_operands(given, str(data.get("expression", "")))
        untraced = untraced_operands(operands, pool)
        calc: ToolResult = calculate(expression, operands)
        error = (
            calc.error
            or (f"operand(s) {', '.join(untraced)} are not numbers in the table or facts" if untraced else None)
            or shape_complaint(question, expression)
        )
        out.steps.append(
            Step(
                len(out.steps),
                "tool",
                {"operands": operands, "expression": expression},
                calc.as_dict(),
                error,
            )
        )
        if error is not None:
            complaint = error
            out.reasons.append(error)
            continue
        answer = format_result(calc.value)
        verdict = check_answer(answer, question_type, [calc], evidence)
        out.verdict = verdict
        out.steps.append(
            Step(
                len(out.steps),
                "gate",
                answer,
                verdict.as_dict(),
                None if verdict.passed else "; ".join(verdict.reasons),
            )
        )
        if verdict.passed:
            out.answer, out.status, out.reasons = answer, "answered", []
            out.derivation = {
                "operands": calc.detail["operands"],
                "expression": calc.detail["expression"],
                "result": calc.value,
            }
            return out
        out.status = "could not verify"
        complaint = "; ".join(verdict.reasons)
        out.reasons.append(complaint)
    return out


def trajectory(answer: AgentAnswer) -> str:
    """The run's steps as JSON text (for a log or a record)."""
    return json.dumps([s.__dict__ for s in answer.steps], default=str)
