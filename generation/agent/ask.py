"""``finkg ask``: a question about the SEC graph answered by the agent's deterministic tools, with its derivation.

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.4 ("Grounded Data Retrieval": all filtering in the
tool backend, the model never fabricates lookup parameters or results; "Answer Consolidation Gate": the only way
out). finkg's SEC questions are planned deterministically from the question's words, no LLM: the companies it
names (by name, ticker-free, or ``--company``), the concepts (:mod:`retrieval.facts.concepts` labels and common
words), a ratio (``current ratio``, ``leverage``, ``net margin``, ``operating cash flow margin``), a growth, a
difference, or "which is larger", and the period end (a date in the question, else the latest period the company
reported, among filings public by ``as_of``). The plan runs ``fact_lookup``, ``ratio``, ``calculate`` and
``compare``; the answer is gated (:func:`generation.agent.gate.check_answer`) and every step kept.

What is not in the graph (no company named, an unknown concept, a period no filing reports, a fact not public by
``as_of``) is answered as such, with what was searched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from generation.agent import facts as agent_facts
from generation.agent.arithmetic import calculate, compare
from generation.agent.gate import Verdict, check_answer
from generation.agent.loop import format_result
from generation.agent.results import ToolError, ToolResult
from generation.agent.trajectory import RunRecord, StepRecord, run_id, tool_step
from generation.verify.numbers import find_numbers
from kg import Graph, cypher
from retrieval.contract import AsOf, as_of_cutoff, available
from retrieval.facts import concepts as cc
from retrieval.facts.fact_map import filing_available_at
from retrieval.facts.ratios import RATIO_BY_NAME

CONCEPT_WORDS: tuple[tuple[str, str], ...] = tuple(
    sorted(
        {
            **{c.label.lower(): c.name for c in cc.CONCEPTS},
            "revenues": "Revenues",
            "sales": "Revenues",
            "net sales": "Revenues",
            "net earnings": "NetIncomeLoss",
            "net loss": "NetIncomeLoss",
            "profit": "NetIncomeLoss",
            "cash from operations": "OperatingCashFlow",
            "cash flow from operations": "OperatingCashFlow",
            "operating profit": "OperatingIncomeLoss",
            "cost of sales": "CostOfRevenue",
            "cash": "Cash",
            "liabilities": "Liabilities",
            "assets": "Assets",
            "equity": "StockholdersEquity",
            "shareholders' equity": "StockholdersEquity",
            "stockholders equity": "StockholdersEquity",
            "receivables": "AccountsReceivable",
            "inventories": "Inventory",
            "debt": "LongTermDebt",
        }.items(),
        key=lambda kv: -len(kv[0]),
    )
)
"""Words naming a concept -> canonical concept, longest first (``current assets`` before ``assets``)."""

RATIO_WORDS: tuple[tuple[str, str], ...] = (
    ("operating cash flow margin", "ocf_margin"),
    ("cash flow margin", "ocf_margin"),
    ("ocf margin", "ocf_margin"),
    ("current ratio", "current_ratio"),
    ("net profit margin", "net_margin"),
    ("profit margin", "net_margin"),
    ("net margin", "net_margin"),
    ("leverage", "leverage"),
    ("debt ratio", "leverage"),
)
"""Words naming a memo ratio -> its name (:data:`retrieval.facts.ratios.RATIO_BY_NAME`)."""

_GROWTH = re.compile(r"\b(?:growth|grow|grew|year[- ]over[- ]year|yoy|change)\b", re.I)
_LARGER = re.compile(
    r"\b(?:which|who)\b.*\b(?:larger|largest|higher|highest|bigger|greater|more|smaller|lower|less)\b", re.I
)
_SMALLER = re.compile(r"\b(?:smaller|smallest|lower|lowest|less|fewer)\b", re.I)
_DIFFERENCE = re.compile(r"\b(?:difference|minus|less|exceed|working capital|net of)\b", re.I)
_SUFFIX = re.compile(
    r"\b(?:inc|incorporated|corp|corporation|co|company|ltd|limited|plc|lp|llc|holdings?|group|the|de|nv|sa|ag)\b"
)


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9&]+", " ", text.lower()).split())


def _core(name: str) -> str:
    """A company name without its legal suffix and punctuation (``JOHNSON & JOHNSON /NJ/`` -> ``johnson & johnson``)."""
    core = _SUFFIX.sub(" ", _norm(re.sub(r"/[A-Za-z]{2}/?", " ", name)))
    return " ".join(core.split())


@dataclass
class Plan:
    """What a question asks: ``kind`` (``fact``, ``ratio``, ``growth``, ``larger`` (two companies or two
    concepts), ``difference`` (first concept minus second)), the companies (CIK, name), concepts, a ratio name,
    the period end (ISO, or None: the latest) and what was searched (for a "not in the graph" answer)."""

    kind: str
    companies: list[tuple[int, str]] = field(default_factory=list)
    concepts: list[str] = field(default_factory=list)
    ratio: str | None = None
    period: str | None = None
    searched: list[str] = field(default_factory=list)
    smaller: bool = False


@dataclass
class SecAnswer:
    """The answer to an SEC question.

    Attributes:
        answer: the gated answer, or None. status: ``answered``, ``could not verify`` or ``not in graph``.
        reasons: why not answered. verdict: the gate's (None when it did not run). derivation: ``operands`` (name ->
        ``{value, fact_key, company, concept, period, filing}``), ``expression``, ``result`` (and ``formula`` for
        a ratio). tool_results: every tool call in order. plan: the question's :class:`Plan` (None when no
        company was found).
    """

    answer: str | None
    status: str
    reasons: list[str] = field(default_factory=list)
    verdict: Verdict | None = None
    derivation: dict[str, Any] = field(default_factory=dict)
    tool_results: list[ToolResult] = field(default_factory=list)
    plan: Plan | None = None


def find_companies(graph: Graph, question: str, company: str | None = None) -> tuple[list[tuple[int, str]], str]:
    """The companies a question names: ``company`` (a CIK or part of a name, through the graph's company match),
    else every company whose name (legal suffix dropped) or ``CIK n`` appears in the question, in the order they
    appear. Returns ``(companies, what was searched)``."""
    if company:
        cik = int(company) if company.strip().isdigit() else None
        rows = graph.read(cypher.COMPANY_MATCHES, {"cik": cik, "name": company.strip()})
        exact = [r for r in rows if _core(r["name"]) == _core(company)]
        rows = exact or rows
        return [
            (int(r["cik"]), r["name"]) for r in rows[:1]
        ], f"the companies whose CIK, ticker or name matches {company!r}"
    rows = graph.read(cypher.COMPANY_NAMES)
    text = f" {_core(question)} "  # the question's words as company names are reduced (no legal suffixes)
    found: list[tuple[int, int, str]] = []
    taken: list[tuple[int, int]] = []
    for r in sorted(rows, key=lambda r: -len(_core(r["name"]))):
        core = _core(r["name"])
        if len(core) < 3:
            continue
        at = text.find(f" {core} ")
        if at < 0 or any(a <= at < b for a, b in taken):
            continue
        taken.append((at, at + len(core) + 1))
        found.append((at, int(r["cik"]), r["name"]))
    for m in re.finditer(r"\bcik\s*(\d{1,10})\b", question, re.I):
        cik = int(m.group(1))
        name = next((r["name"] for r in rows if int(r["cik"]) == cik), None)
        if name is not None:
            found.append((m.start(), cik, name))
    found.sort()
    return [(cik, name) for _, cik, name in found], f"the names of the graph's {len(rows)} companies"


def find_concepts(question: str) -> list[str]:
    """The canonical concepts a question names (:data:`CONCEPT_WORDS`), in the order they appear, each once."""
    text = f" {_norm(question)} "
    hits: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for words, name in CONCEPT_WORDS:
        for m in re.finditer(rf" {re.escape(_norm(words))} ", text):
            if any(a <= m.start() < b for a, b in taken):
                continue
            taken.append((m.start(), m.end()))
            hits.append((m.start(), name))
    return list(dict.fromkeys(name for _, name in sorted(hits)))


def plan_question(graph: Graph, question: str, company: str | None = None) -> Plan:
    """The :class:`Plan` of an SEC question (see the module doc); ``kind`` ``unknown`` when no concept or ratio is
    named, ``no company`` when no company is."""
    companies, searched = find_companies(graph, question, company)
    dates = [m.iso_date for m in find_numbers(question) if m.kind == "date" and m.iso_date]
    low = question.lower()
    ratio = next((name for words, name in RATIO_WORDS if words in low), None)
    concepts = find_concepts(question)
    plan = Plan("fact", companies, concepts, ratio, dates[0] if dates else None, [searched])
    plan.smaller = bool(_SMALLER.search(question))
    if not companies:
        plan.kind = "no company"
    elif ratio is not None:
        plan.kind = "ratio"
    elif "working capital" in low:
        plan.kind, plan.concepts = "difference", ["CurrentAssets", "CurrentLiabilities"]
    elif not concepts:
        plan.kind = "unknown"
    elif _LARGER.search(question) and (len(companies) >= 2 or len(concepts) >= 2):
        plan.kind = "larger"
    elif _GROWTH.search(question):
        plan.kind = "growth"
    elif len(concepts) >= 2 and _DIFFERENCE.search(question):
        plan.kind = "difference"
    return plan


def latest_period(graph: Graph, cik: int, concept: str, as_of: AsOf | None = None, uom: str = "USD") -> str | None:
    """The latest period end (ISO) at which company ``cik`` reports ``concept`` in a filing public by ``as_of``
    (any filing when None); None when there is none."""
    _, tags, _ = agent_facts.resolve_concept(concept)
    rows = graph.read(
        cypher.COMPANY_CONCEPT_PERIODS,
        {"cik": cik, "name": None, "tags": list(tags) + list(cc.DERIVATION_TAGS), "uom": uom},
    )
    cutoff = as_of_cutoff(as_of) if as_of is not None else None
    for r in rows:
        if cutoff is None or available(filing_available_at(r["accepted"], r["filed"]), cutoff, "drop"):
            return cc.iso_date(r["ddate"])
    return None


def _money(value: float) -> str:
    return f"USD {value:,.0f}" if abs(value) >= 1000 else f"USD {format_result(value)}"


def fact_operand(result: ToolResult) -> dict[str, Any]:
    """A ``fact_lookup`` result as a derivation's operand: ``{value, fact_key, company, concept, period, filing}``."""
    return _fact_operand(result.detail)


def ratio_operands(facts: Sequence[dict[str, Any]], name: Callable[[str], str] = str) -> dict[str, dict[str, Any]]:
    """The input facts of a ``ratio`` result (its ``detail["facts"]``) as a derivation's operands, each named
    ``name("<concept>_<period>")``, each as :func:`fact_operand` gives it."""
    return {name(f"{f['concept']}_{f['period']}"): _fact_operand(f) for f in facts}


def _fact_operand(f: dict[str, Any]) -> dict[str, Any]:
    return {
        "value": f["value"],
        "fact_key": f["key"],
        "company": f["company"],
        "concept": f["concept"],
        "period": f["period"],
        "filing": f"{f['form']} {f['adsh']} filed {f['filed']}",
    }


def _slug(text: str) -> str:
    return re.sub(r"\W+", "_", text.lower()).strip("_")[:24] or "x"


def answer_sec_question(
    graph: Graph, question: str, company: str | None = None, as_of: AsOf | None = None
) -> SecAnswer:
    """Answer an SEC question from the graph (see the module doc).

    Args:
        graph: the Neo4j graph with SEC facts. question: the question. company: a CIK or part of a name (else the
            question's). as_of: only filings public by then count (a date, datetime or ISO text; None: all).

    Returns:
        :class:`SecAnswer`: ``answered`` with a gated answer and its derivation, ``not in graph`` (the reason says
        what was searched), or ``could not verify`` (the gate's reasons).

    Raises:
        GraphError: Neo4j is unavailable.
    """
    plan = plan_question(graph, question, company)
    out = SecAnswer(None, "not in graph", plan=plan)
    if plan.kind == "no company":
        where = "" if company else " in the question"
        out.reasons = [f"not in the graph: no company found{where}; searched {plan.searched[0]}"]
        return out
    if plan.kind == "unknown":
        known = ", ".join(sorted({w for w, _ in CONCEPT_WORDS} | {w for w, _ in RATIO_WORDS}))
        out.reasons = [f"not in the graph: the question names no concept or ratio finkg knows; searched for: {known}"]
        return out

    def call(result: ToolResult) -> ToolResult:
        out.tool_results.append(result)
        if not result.ok:
            raise ToolError(result.error or "tool failed")
        return result

    def period_for(cik: int, concept: str) -> str:
        if plan.period:
            return plan.period
        p = latest_period(graph, cik, concept, as_of)
        if p is None:
            when = f" in filings public by {as_of}" if as_of is not None else ""
            raise ToolError(f"not in the graph: no {concept} fact for CIK {cik}{when}")
        return p

    try:
        answer, qtype, derivation, change = _run_plan(graph, plan, as_of, call, period_for)
    except ToolError as exc:
        out.reasons = [str(exc)]
        out.status = "not in graph" if str(exc).startswith(("not in the graph", "no ")) else "could not answer"
        return out
    verdict = check_answer(answer, qtype, out.tool_results, [], change)
    out.verdict, out.derivation = verdict, derivation
    if verdict.passed:
        out.answer, out.status = answer, "answered"
    else:
        out.status, out.reasons = "could not verify", list(verdict.reasons)
    return out


def _run_plan(
    graph: Graph, plan: Plan, as_of: AsOf | None, call: Any, period_for: Any
) -> tuple[str, str, dict[str, Any], float | None]:
    """Run a plan's tools; returns ``(answer, gate question type, derivation, change or None)``."""
    cik, name = plan.companies[0]
    c = str(cik)
    if plan.kind == "ratio":
        r = RATIO_BY_NAME[plan.ratio or ""]
        res = call(agent_facts.ratio(graph, r.name, c, period_for(cik, r.numerator), as_of=as_of))
        return _ratio_answer(res, r.style)
    concept = plan.concepts[0]
    if plan.kind == "growth":
        res = call(agent_facts.ratio(graph, "growth", c, period_for(cik, concept), concept=concept, as_of=as_of))
        text, qtype, derivation, _ = _ratio_answer(res, "%")
        now, before = res.detail["facts"]
        return text, qtype, derivation, now["value"] - before["value"]
    if plan.kind == "larger":
        if len(plan.companies) >= 2:
            pairs = [(k, n, concept) for k, n in plan.companies[:2]]
        else:
            pairs = [(cik, name, x) for x in plan.concepts[:2]]
        looked = [call(agent_facts.fact_lookup(graph, str(k), x, period_for(k, x), as_of=as_of)) for k, _, x in pairs]
        cmp = call(compare(looked[0].value, looked[1].value))
        pick = 1 if (cmp.value == "increased") != plan.smaller else 0
        if cmp.value == "unchanged":
            return "neither: they are equal", "span", _pair_derivation(looked, cmp), None
        _, n, x = pairs[pick]
        label = n if len(plan.companies) >= 2 else cc.BY_NAME[x].label if x in cc.BY_NAME else x
        return label, "span", _pair_derivation(looked, cmp), None
    if plan.kind == "difference":
        a, b = plan.concepts[:2]
        looked = [call(agent_facts.fact_lookup(graph, c, x, period_for(cik, a), as_of=as_of)) for x in (a, b)]
        names = [_slug(a), _slug(b)]
        calc = call(calculate(f"{names[0]} - {names[1]}", {names[0]: looked[0].value, names[1]: looked[1].value}))
        operands = {n: fact_operand(r) for n, r in zip(names, looked, strict=True)}
        derivation = {"operands": operands, "expression": calc.detail["expression"], "result": calc.value}
        return _money(calc.value), "arithmetic", derivation, None
    res = call(agent_facts.fact_lookup(graph, c, concept, period_for(cik, concept), as_of=as_of))
    name_ = _slug(concept)
    derivation = {"operands": {name_: fact_operand(res)}, "expression": name_, "result": res.value}
    return _money(res.value), "arithmetic", derivation, None


def _ratio_answer(res: ToolResult, style: str) -> tuple[str, str, dict[str, Any], float | None]:
    d = res.detail
    operands = ratio_operands(d["facts"], _slug)
    text = f"{format_result(res.value * 100)}%" if style == "%" else format_result(res.value)
    derivation = {
        "operands": operands,
        "formula": d["formula"],
        "expression": d["expression"] + (" * 100" if style == "%" else ""),
        "result": res.value * 100 if style == "%" else res.value,
    }
    return text, "arithmetic", derivation, None


def _pair_derivation(looked: Sequence[ToolResult], cmp: ToolResult) -> dict[str, Any]:
    names = ["a", "b"]
    return {
        "operands": {n: fact_operand(r) for n, r in zip(names, looked, strict=True)},
        "expression": "compare(a, b)",
        "result": cmp.value,
        "change": cmp.detail["change"],
    }


def run_record(got: SecAnswer, question: str, company: str | None = None, as_of: AsOf | None = None) -> RunRecord:
    """An SEC answer as an agent run (``kind`` ``ask``, model ``deterministic``): its tool calls as steps (linked
    to the facts they read) and the gate's verdict as the last step; the run's ``verdict`` is ``passed``,
    ``failed``, ``not in graph`` or ``not run``."""
    steps = [tool_step(r) for r in got.tool_results]
    if got.verdict is not None:
        error = None if got.verdict.passed else "; ".join(got.verdict.reasons)
        steps.append(StepRecord("gate", got.answer or "", got.verdict.as_dict(), error))
    if got.status == "not in graph":
        verdict = "not in graph"
    elif got.verdict is None:
        verdict = "not run"
    else:
        verdict = "passed" if got.verdict.passed else "failed"
    return RunRecord(
        run_id("ask", question, company or "", str(as_of or "")),
        question,
        got.answer,
        verdict,
        "deterministic",
        kind="ask",
        as_of=str(as_of) if as_of else None,
        props={
            "status": got.status,
            "reasons": got.reasons,
            "company": company or "",
            "derivation": json.dumps(got.derivation, default=str),
        },
        steps=steps,
    )
