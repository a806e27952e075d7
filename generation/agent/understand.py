"""The LLM reads a question into the typed plan, under a JSON schema; the graph's catalogs resolve what it read.

Issue 44, "Question understanding": the plan is data (``{companies[], measure, periods[], operation}``); the
configured LLM fills it with constrained decoding (the client's ``json_schema``: llama.cpp's grammar, or the
OpenAI-compatible server's structured outputs), and every field is then resolved by the same code as the
word-based reading (companies by :class:`retrieval.facts.names.CompanyIndex`, the measure by its catalog id,
periods by :func:`retrieval.facts.periods.find_periods`). The model never gives a number, a CIK or a tag: only the
words it read and a catalog id the schema's enum allows. A plan that does not resolve is asked for once more with
the reason; then the question is answered "not understood" with what was read.

The word-based plan (:func:`generation.agent.ask.plan_question`) stays the fast path: the LLM is asked only when
it found no company or no measure.
"""

from __future__ import annotations

from typing import Any

from generation.agent.ask import OPERATIONS, Plan
from generation.llm.base import LLMAnswerError
from generation.llm.client import LLMClient
from retrieval.facts.measures import BY_ID, MEASURES
from retrieval.facts.names import CompanyIndex
from retrieval.facts.periods import find_periods


def plan_schema() -> dict[str, Any]:
    """The JSON schema of an LLM-filled plan: companies as named, a catalog measure id (enum), period phrases as
    written, the operation (enum), and whether the lower value is the answer."""
    return {
        "type": "object",
        "properties": {
            "companies": {"type": "array", "items": {"type": "string", "maxLength": 80}, "maxItems": 6},
            "measure": {"type": "string", "enum": [m.id for m in MEASURES]},
            "periods": {"type": "array", "items": {"type": "string", "maxLength": 80}, "maxItems": 2},
            "operation": {"type": "string", "enum": list(OPERATIONS)},
            "lower_wins": {"type": "boolean"},
        },
        "required": ["companies", "measure", "periods", "operation", "lower_wins"],
        "additionalProperties": False,
    }


def plan_messages(question: str, complaint: str | None = None) -> list[dict[str, str]]:
    """The chat messages that ask for a plan: the catalog (id: definition) and the question."""
    catalog = "\n".join(f"- {m.id}: {m.label} ({m.definition})" for m in MEASURES)
    system = (
        "You read a financial analyst's question into a plan. Copy company names and period phrases exactly as the "
        "question writes them (no period phrase: an empty list). measure: the one catalog id the question asks "
        "about. operation: value (one figure), change (growth over a year), difference (first minus second), "
        "compare (which is higher), rank (order several). lower_wins: true only when the question asks which is "
        "lower. Answer with JSON only.\n\nCatalog:\n" + catalog
    )
    user = f"Question: {question}"
    if complaint:
        user += f"\n\nYour previous plan could not be used: {complaint}. Try again."
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def resolve(data: dict[str, Any], index: CompanyIndex, sic: dict[int, int | None]) -> tuple[Plan | None, str]:
    """An LLM-filled plan resolved against the graph's catalogs: ``(plan, "")``, or ``(None, why not)``."""
    measure = BY_ID.get(str(data.get("measure")))
    if measure is None:
        return None, f"measure {data.get('measure')!r} is not a catalog id"
    companies: list[tuple[int, str]] = []
    for said in data.get("companies") or []:
        found = index.find(str(said))
        if found.ambiguous and not found.found:
            words, cands = found.ambiguous[0]
            plan = Plan("ambiguous", sic=sic, ambiguous=[(words, cands)], measures=[measure])
            return plan, ""
        if not found.found:
            return None, f"no company in the graph is named {said!r}"
        companies.append((found.found[0].cik, found.found[0].name))
    if not companies:
        return None, "no company named"
    try:
        periods = find_periods(" ; ".join(str(p) for p in data.get("periods") or []))
    except ValueError as exc:
        return None, str(exc)
    op = str(data.get("operation"))
    if op not in OPERATIONS:
        return None, f"operation {op!r} is not one of {', '.join(OPERATIONS)}"
    if op in ("difference", "sum", "compare", "rank") and len(companies) < 2:
        op = "value"
    plan = Plan(op, companies=list(dict.fromkeys(companies)), measures=[measure], periods=periods, sic=sic)
    plan.smaller = bool(data.get("lower_wins"))
    plan.unit = "%" if op == "change" and measure.unit != "%" else "pp" if op == "change" else measure.unit
    plan.searched.append("the LLM's reading of the question, resolved against the graph's companies and catalog")
    return plan, ""


def llm_plan(
    client: LLMClient, question: str, index: CompanyIndex, sic: dict[int, int | None]
) -> tuple[Plan | None, str]:
    """The plan the LLM reads, resolved (:func:`resolve`); one retry with the reason. Returns ``(plan, "")`` or
    ``(None, what was read and why it could not be used)``.

    Raises:
        LLMUnavailable, BudgetExceeded: the LLM cannot be used.
    """
    complaint: str | None = None
    read: Any = None
    for _ in range(2):
        try:
            got = client.chat(plan_messages(question, complaint), max_tokens=160, json_schema=plan_schema())
        except LLMAnswerError as exc:
            complaint = f"the answer was not a valid plan ({exc})"
            continue
        read = got.data
        plan, why = resolve(read if isinstance(read, dict) else {}, index, sic)
        if plan is not None:
            return plan, ""
        complaint = why
    return None, f"not understood: read {read!r}; {complaint}"
