"""The tool-calling loop: the LLM sees the tools' JSON schemas, calls them one at a time, and answers through the gate.

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.4 (the tool set and calling schema shared by every
configuration; every numerical claim anchored to a tool's captured output; the Answer Consolidation Gate as the
only way out) and section 4.3 (inventory the inputs, then compute). finkg's offline models call tools in JSON mode
(:mod:`generation.llm.jsonmode`): each turn the LLM answers one object, ``{"tool": NAME, "arguments": {...}}`` to
call a tool of the registry (:mod:`generation.agent.registry`), or ``{"tool": "answer", "arguments": {"answer":
"..."}}`` to answer; the tool's result goes back as an observation (:meth:`ToolResult.observation`, an error
included: a bad call never ends the run). The prompt is fitted to the model's context window
(:meth:`generation.llm.LLMClient.fits`): facts are left out lowest-ranked first until the first prompt leaves
:data:`TURN_RESERVE` tokens free, and when a later turn would overflow, the oldest call and its observation are
dropped from the conversation (the trajectory keeps them).

An answer goes through the gate (:func:`generation.agent.gate.check_answer`: every number a tool output or in the
evidence, direction words against the computed change, the answer type, and a number-free answer's words quoted
from the facts, the tools' outputs or the question); a rejected answer goes back to the LLM
once with the gate's complaint, then the run ends "could not verify". Invalid JSON is a failed ``llm`` step (the raw
text kept) and the LLM is told to answer with JSON. When ``max_steps`` LLM turns pass without a gated answer, the
run ends "could not answer", its trajectory kept. No answer with a number the gate cannot trace is ever returned.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from generation.agent.gate import Verdict, check_answer
from generation.agent.registry import Tool, call
from generation.agent.results import ToolResult
from generation.agent.trajectory import StepRecord, tool_step
from generation.llm import LLMAnswerError, LLMClient

MAX_OBSERVATION_CHARS = 1500
"""The longest observation put back into the prompt (a long search result is cut; the step keeps it whole)."""
TURN_RESERVE = 800
"""Tokens of the context window kept free for later turns when the facts are fitted (each turn adds the LLM's
call and its observation)."""

SYSTEM = (
    "You are a financial analyst. Answer the question with the tools: look numbers up, compute with calculate, "
    "never write a number that no tool output or fact gave you. Each turn reply with one JSON object: "
    '{{"tool": NAME, "arguments": {{...}}}} to call a tool, or {{"tool": "answer", "arguments": {{"answer": '
    '"..."}}}} to give the final answer (short: the number with its unit, or one sentence).\n'
    "Tools (arguments as JSON schema):\n{tools}"
)


@dataclass
class ToolRun:
    """One question's tool-calling run.

    Attributes:
        answer: the gated answer, or None. status: ``answered``, ``could not verify`` (the gate rejected every
        answer) or ``could not answer`` (no answer reached the gate: step limit, invalid JSON). reasons: why not
        answered. verdict: the last gate verdict (None when the gate never ran). steps: the trajectory (``llm``,
        tool and ``gate`` steps, tool steps linked to the facts and chunks they read). tool_results: every tool
        call in order. calls: the LLM's usage (``llm_calls``, ``cached_calls``, ``prompt_tokens`` and
        ``completion_tokens`` of the calls not answered from the cache, ``seconds``). facts_trimmed: facts left out
        to fit the context window.
    """

    answer: str | None
    status: str
    reasons: list[str] = field(default_factory=list)
    verdict: Verdict | None = None
    steps: list[StepRecord] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)
    calls: dict[str, Any] = field(default_factory=dict)
    facts_trimmed: int = 0


ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}
"""The arguments of the ``answer`` action."""


def _arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's argument schema as the decoder's grammar gets it: no description, and an object property that
    declares no properties (the calculator's operands) holds numbers, so a small model cannot nest objects
    without end."""
    props = {
        k: (
            {**v, "additionalProperties": {"type": "number"}}
            if v.get("type") == "object" and "properties" not in v
            else v
        )
        for k, v in schema.get("properties", {}).items()
    }
    return {"type": "object", "properties": props, "required": list(schema.get("required", []))}


def action_schema(tools: dict[str, Tool]) -> dict[str, Any]:
    """The JSON schema of one turn: ``tool`` one of the tools' names or ``answer``; ``arguments`` one of the tools'
    argument schemas or ``{"answer": "..."}`` (a name and arguments that do not belong together come back as the
    tool's error)."""
    return {
        "type": "object",
        "properties": {
            "tool": {"type": "string", "enum": [*tools, "answer"]},
            "arguments": {"anyOf": [*(_arguments(t.schema) for t in tools.values()), ANSWER_SCHEMA]},
        },
        "required": ["tool", "arguments"],
    }


def system_prompt(tools: dict[str, Tool]) -> str:
    """The system message: the protocol and each tool's name with its JSON schema (what the LLM sees)."""
    lines = [f"- {name}: {json.dumps(t.schema, separators=(',', ':'))}" for name, t in tools.items()]
    return SYSTEM.format(tools="\n".join(lines))


def user_prompt(question: str, evidence: Sequence[tuple[str, str]], as_of: str | None) -> str:
    """The question, its date and the facts (``(id, text)``) as the first user message."""
    facts = "\n".join(f"[{fid}] {text}" for fid, text in evidence) or "(none)"
    when = f"As of: {as_of} (use no evidence published later)\n" if as_of else ""
    return f"{when}Facts:\n{facts}\n\nQuestion: {question}"


def _usage(calls: dict[str, Any], result: Any) -> None:
    calls["llm_calls"] = calls.get("llm_calls", 0) + 1
    calls["seconds"] = round(calls.get("seconds", 0.0) + result.seconds, 3)
    if result.cached:
        calls["cached_calls"] = calls.get("cached_calls", 0) + 1
    else:
        calls["prompt_tokens"] = calls.get("prompt_tokens", 0) + result.prompt_tokens
        calls["completion_tokens"] = calls.get("completion_tokens", 0) + result.completion_tokens


def answer_with_tools(
    client: LLMClient,
    question: str,
    tools: dict[str, Tool],
    evidence: Sequence[tuple[str, str]] = (),
    *,
    as_of: str | None = None,
    question_type: str = "span",
    max_steps: int = 6,
    max_tokens: int = 200,
) -> ToolRun:
    """Answer ``question`` by calling ``tools`` (see the module doc).

    Args:
        client: the LLM client (JSON mode). question: the question. tools: the registry
            (:func:`generation.agent.registry.registry`). evidence: ``(id, text)`` of the facts shown (the numbers
            they state are traceable). as_of: the question's date (shown; the tools are bound to it).
        question_type: the gate's answer type (``span``, ``multi-span``, ``count``, ``arithmetic``).
        max_steps: LLM turns at most (tool calls and answers). max_tokens: each turn's completion cap.

    Returns:
        :class:`ToolRun`; ``answer`` is set only when the gate passed.

    Raises:
        LLMUnavailable, BudgetExceeded: the LLM cannot be used (an unusable answer is a failed step instead).
        GraphError: Neo4j is unavailable inside a graph tool.
    """
    out = ToolRun(None, "could not answer")
    fits = getattr(client, "fits", None)
    shown = list(evidence)

    def first(kept: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": system_prompt(tools)},
            {"role": "user", "content": user_prompt(question, kept, as_of)},
        ]

    messages = first(shown)
    while shown and fits is not None and not fits(messages, max_tokens + TURN_RESERVE):
        shown.pop()
        messages = first(shown)
    out.facts_trimmed = len(evidence) - len(shown)
    texts = [text for _, text in shown]
    schema = action_schema(tools)
    repairs = 1
    for _ in range(max_steps):
        while len(messages) > 3 and fits is not None and not fits(messages, max_tokens):
            del messages[2:4]  # the oldest call and its observation
        if fits is not None and not fits(messages, max_tokens):
            out.reasons.append("the prompt does not fit the model's context window ([llm] n_ctx)")
            break
        try:
            result = client.chat(messages, max_tokens=max_tokens, json_schema=schema)
        except LLMAnswerError as exc:
            out.steps.append(StepRecord("llm", messages[-1]["content"], exc.raw, f"invalid JSON: {exc}"))
            out.reasons.append(f"invalid JSON: {exc}")
            messages += [
                {"role": "assistant", "content": str(exc.raw or "")[:400]},
                {"role": "user", "content": 'Reply with one JSON object: {"tool": ..., "arguments": {...}}.'},
            ]
            continue
        _usage(out.calls, result)
        data = result.data if isinstance(result.data, dict) else {}
        out.steps.append(StepRecord("llm", messages[-1]["content"], data))
        messages.append({"role": "assistant", "content": json.dumps(data, ensure_ascii=False)})
        name, args = data.get("tool"), data.get("arguments")
        if name == "answer":
            text = args.get("answer") if isinstance(args, dict) else None
            if not isinstance(text, str) or not text.strip():
                complaint = 'an answer needs {"tool": "answer", "arguments": {"answer": "<text>"}}'
                out.steps[-1] = dataclasses.replace(out.steps[-1], error=complaint)
                messages.append({"role": "user", "content": f"Rejected: {complaint}."})
                continue
            quotable = [question, *(r.observation() for r in out.tool_results if r.ok)]
            verdict = check_answer(text.strip(), question_type, out.tool_results, texts, quote_from=quotable)
            out.verdict = verdict
            error = None if verdict.passed else "; ".join(verdict.reasons)
            out.steps.append(StepRecord("gate", text.strip(), verdict.as_dict(), error))
            if verdict.passed:
                out.answer, out.status, out.reasons = text.strip(), "answered", []
                return out
            out.status = "could not verify"
            out.reasons.append(error or "")
            if repairs <= 0:
                return out
            repairs -= 1
            messages.append(
                {
                    "role": "user",
                    "content": f"Your answer was rejected: {error}. Use the tools' outputs and answer again.",
                }
            )
            continue
        got = call(tools, str(name), args)
        out.tool_results.append(got)
        out.steps.append(tool_step(got))
        messages.append({"role": "user", "content": "Observation: " + got.observation()[:MAX_OBSERVATION_CHARS]})
    else:
        if out.status == "could not answer":
            out.reasons.append(f"the step limit ({max_steps} LLM turns) was reached before an answer passed the gate")
    return out


def last_computation(results: Sequence[ToolResult]) -> ToolResult | None:
    """The run's last successful ``calculate`` or ``ratio`` call (what a derivation shows), or None."""
    return next((r for r in reversed(results) if r.ok and r.tool in ("calculate", "ratio")), None)
