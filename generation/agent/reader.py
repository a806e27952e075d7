"""The analyst agent as a report reader (``finkg report --reader agent``): one question, its date and its facts F in;
an answer with its derivation, the gate's verdict and the agent run out.

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.4 (deterministic tools, grounded retrieval, the answer
gate) and section 4.2 (each run kept as a trajectory). Two routes, tried in this order:

1. **plan** (no LLM): a question :func:`generation.agent.ask.plan_question` can read (a company of the question's
   ``companies`` or its text, and a concept, ratio, growth, difference or "which is larger") is answered by
   :func:`generation.agent.ask.answer_sec_question` as of the question's date: ``fact_lookup``, ``ratio``,
   ``calculate``, ``compare`` and the gate, exactly as ``finkg ask``.
2. **tools** (the LLM): any other question goes to the tool-calling loop (:mod:`generation.agent.toolloop`) with F
   shown as facts and the tools ``calculate``, ``compare``, ``date_diff``, ``scale``, ``fact_lookup``, ``ratio`` and
   ``search_evidence`` (over the report's sources), every graph tool bound to the question's date.
2'. **reader** (the LLM, given a ``thought`` reader: ``finkg report --reader reader-calc``): instead of the tool
   loop, seed 004's reader (LoRA-tuned by ``finkg train reader`` to write its thought as a ``calculate`` call)
   answers over F's sentences; the tool runs the thought, its operands must be numbers of F, and the answer goes
   through the gate (:func:`generation.agent.thought.answer_with_thought`). Source:
   ../shared/seeds/004_7a67e4eaf6285e0b.txt section 3.4 and appendix C (the reader), seed 001 section 4.4 (the tool
   and the gate).

Either way the run is a :class:`generation.agent.trajectory.RunRecord` of kind ``report`` (its id given by the
caller, so a redo replaces it), and the derivation names each operand's fact key where one can be found (a
``fact_lookup``'s fact, else a fact of F stating that number).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from generation.agent.ask import answer_sec_question, fact_operand, plan_question, ratio_operands, run_record
from generation.agent.gate import evidence_numbers, same_number
from generation.agent.questions import needs_arithmetic
from generation.agent.registry import registry
from generation.agent.results import ToolResult
from generation.agent.thought import ThoughtReader, answer_with_thought
from generation.agent.toolloop import answer_with_tools, last_computation
from generation.agent.trajectory import RunRecord, StepRecord
from generation.llm import LLMClient, metered
from kg import Graph
from retrieval.contract import Retriever
from retrieval.facts.indicators import FinancialFact

ROUTES = ("plan", "tools", "reader")


@dataclass
class ReaderAnswer:
    """A report question answered by the agent.

    Attributes:
        answer: the gated answer, or None. status: ``answered``, ``could not verify``, ``could not answer`` or ``not in
        graph``. reasons: why not answered. verdict: the gate's verdict as a dict (None when it did not run).
        derivation: ``operands`` (name -> ``{value, fact_key, ...}``), ``expression``, ``result`` (empty when nothing
        was computed). route: :data:`ROUTES`. run: the agent run to store. calls: the LLM's usage (empty on the
        plan route).
    """

    answer: str | None
    status: str
    reasons: list[str]
    verdict: dict[str, Any] | None
    derivation: dict[str, Any]
    route: str
    run: RunRecord
    calls: dict[str, Any] = field(default_factory=dict)


def operand_source(value: Any, results: Sequence[ToolResult], facts: Sequence[FinancialFact]) -> dict[str, Any]:
    """Where an operand's value comes from: a successful ``fact_lookup`` with that value (its fact key, filing...),
    else the first fact of ``facts`` stating it (``fact_key`` its XBRL fact node when it cites one, ``fact_id``,
    ``text``), else a ``search_evidence`` item stating it (``evidence_id``), else ``{"value": value, "fact_key":
    None}``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return {"value": value, "fact_key": None}
    for r in results:
        if r.ok and r.tool == "fact_lookup" and isinstance(r.value, int | float) and same_number(float(r.value), value):
            return fact_operand(r)
    for f in facts:
        if any(same_number(float(n), value) for n in f.numbers):
            keys = [k for label, _, k in f.cites if label == "Fact"]
            return {"value": value, "fact_key": keys[0] if keys else None, "fact_id": f.id, "text": f.text}
    for r in results:
        if r.ok and r.tool == "search_evidence" and any(same_number(n, value) for n in r.numbers):
            ids = [str(i["id"]) for i in r.value if any(same_number(n, value) for n in evidence_numbers([i["text"]]))]
            if ids:
                return {"value": value, "fact_key": None, "evidence_id": ids[0]}
    return {"value": value, "fact_key": None}


def derivation_of(results: Sequence[ToolResult], facts: Sequence[FinancialFact]) -> dict[str, Any]:
    """The derivation of a tool run: its last ``calculate`` (each operand with its source,
    :func:`operand_source`, the expression, the result) or ``ratio`` (its input facts, formula, expression,
    result); empty when nothing was computed."""
    comp = last_computation(results)
    if comp is None:
        return {}
    d = comp.detail
    if comp.tool == "ratio":
        return {
            "operands": ratio_operands(d.get("facts", [])),
            "formula": d.get("formula"),
            "expression": d.get("expression"),
            "result": comp.value,
        }
    operands = {name: operand_source(v, results, facts) for name, v in (d.get("operands") or {}).items()}
    return {"operands": operands, "expression": d.get("expression"), "result": comp.value}


def link_operand_facts(steps: list[StepRecord], derivation: dict[str, Any]) -> None:
    """Link the last successful ``calculate`` step of ``steps`` (in place) to the fact keys of ``derivation``'s
    operands, so ``(:Step)-[:USED]->(:Fact)`` walks a computed answer back to the XBRL facts it read (the reader
    route shows F's facts; no ``fact_lookup`` step reads them)."""
    keys = tuple(
        dict.fromkeys(str(o["fact_key"]) for o in derivation.get("operands", {}).values() if o.get("fact_key"))
    )
    for i in range(len(steps) - 1, -1, -1):
        if steps[i].tool == "calculate" and steps[i].error is None:
            steps[i] = dataclasses.replace(steps[i], facts=tuple(dict.fromkeys((*steps[i].facts, *keys))))
            return


def read_question(
    graph: Graph,
    client: LLMClient,
    question: str,
    run: str,
    *,
    as_of: str | None,
    companies: Sequence[str] = (),
    facts: Sequence[FinancialFact] = (),
    sources: Sequence[Retriever] = (),
    max_steps: int = 6,
    max_tokens: int = 200,
    thought: ThoughtReader | None = None,
) -> ReaderAnswer:
    """Answer one report question with the agent (see the module doc).

    Args:
        graph: the Neo4j graph. client: the LLM (used on the tools route only). question: its text. run: the
            agent run's id. as_of: the question's date (ISO; None: as of now, every filing). companies: the names
            the question brings (the first is the plan's company). facts: F as shown (ranked, at most
            ``[report] max_facts``). sources: what ``search_evidence`` searches. max_steps, max_tokens: the tool
            loop's turn limit and completion cap. thought: seed 004's reader
            (:func:`generation.qa.reader.thought_reader`); given, the LLM route is ``reader`` instead of ``tools``.

    Returns:
        :class:`ReaderAnswer`.

    Raises:
        LLMUnavailable, BudgetExceeded: the LLM cannot be used. GraphError: Neo4j is unavailable.
    """
    company = companies[0] if companies else None
    plan = plan_question(graph, question, company)
    if plan.kind not in ("no company", "unknown", "ambiguous"):
        got = answer_sec_question(graph, question, company, as_of)
        rec = dataclasses.replace(run_record(got, question, company, as_of), id=run, kind="report")
        rec.props["route"] = "plan"
        verdict = got.verdict.as_dict() if got.verdict is not None else None
        return ReaderAnswer(got.answer, got.status, got.reasons, verdict, got.derivation, "plan", rec)
    qtype = "arithmetic" if needs_arithmetic(question) else "span"
    if thought is not None:
        names, route = ["calculate"], "reader"
        t0 = time.perf_counter()
        with metered() as m:
            got = answer_with_thought(thought, question, [f.text for f in facts], question_type=qtype)
        got.calls = {
            "seconds": round(time.perf_counter() - t0, 3),
            "llm_calls": m.calls,
            "cached_calls": m.cache_hits,
            "prompt_tokens": m.prompt_tokens,
            "completion_tokens": m.completion_tokens,
        }
    else:
        tools, route = registry(graph, as_of=as_of, sources=sources), "tools"
        names = list(tools)
        shown = [(f.id, f.text) for f in facts]
        got = answer_with_tools(
            client, question, tools, shown, as_of=as_of, question_type=qtype, max_steps=max_steps, max_tokens=max_tokens
        )
    derivation = derivation_of(got.tool_results, facts) if got.answer is not None else {}
    if route == "reader" and derivation:
        link_operand_facts(got.steps, derivation)
    if got.verdict is None:
        verdict_text = "not run"
    else:
        verdict_text = "passed" if got.verdict.passed else "failed"
    rec = RunRecord(
        run,
        question,
        got.answer,
        verdict_text,
        client.model_id,
        kind="report",
        as_of=as_of,
        props={
            "status": got.status,
            "reasons": got.reasons,
            "route": route,
            "tools": names,
            "facts_trimmed": got.facts_trimmed,
            "company": company or "",
            "derivation": json.dumps(derivation, default=str),
        },
        steps=got.steps,
    )
    verdict = got.verdict.as_dict() if got.verdict is not None else None
    return ReaderAnswer(got.answer, got.status, got.reasons, verdict, derivation, route, rec, got.calls)
