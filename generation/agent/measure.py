"""The ``measure`` tool: a catalog measure of one company at one period, computed from the graph's facts.

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.4 ("Grounded Data Retrieval": every number anchored
to a source row; "Numerical Reasoning Engine": arithmetic executed deterministically, never by the model). The
measure's formula (:mod:`retrieval.facts.measures`) names canonical concepts; each is read with
:func:`generation.agent.facts.find_fact` (synonyms in their documented order, the latest filing's value) and the
formula is evaluated by the ``calculate`` tool, so the answer gate traces the result to the facts.

Spans: every flow of one formula is read over the same span (``qtrs``). A question that names a span longer than
a quarter ("six months ended", "fiscal year") gets exactly that span or no answer; twelve months ("TTM", "trailing
twelve months", "the twelve months ended": ``trailing``) that no filing reports at that period end are the
trailing twelve months, the last fiscal year + the year to date - the year to date a year earlier
(:func:`generation.agent.facts.trailing_year_fact`), and the answer's note shows the build. Otherwise the filing's
own span is preferred (a 10-Q's quarter) and, where a flow is only reported year-to-date (a 10-Q's cash flows), the
shortest span every operand reports is used and the result says so (``note``).
"""

from __future__ import annotations

import re
from typing import Any

from generation.agent.arithmetic import calculate
from generation.agent.facts import fact_numbers, find_fact, fourth_quarter_fact, trailing_year_fact
from generation.agent.results import ToolError, ToolResult, tool_call
from kg import Graph
from retrieval.contract import AsOf
from retrieval.facts.measures import BY_ID, Measure
from retrieval.facts.periods import iso

DAYS_PER_QUARTER = 91.25


def _facts_at(
    graph: Graph,
    m: Measure,
    company: str,
    concepts: list[str],
    ddate: str,
    span: int | None,
    as_of: AsOf | None,
    trailing: bool = False,
    quarter: bool = False,
) -> dict[str, dict[str, Any]]:
    """Each concept's fact at ``ddate`` (flows over ``span``); ``trailing``: a flow with no twelve-month fact there is
    its trailing twelve months (:func:`~generation.agent.facts.trailing_year_fact`); ``quarter`` (a quarter asked,
    ``span`` 1): a flow no filing reports over the quarter ended at a fiscal year's end is the year less its nine months
    (:func:`~generation.agent.facts.fourth_quarter_fact`)."""
    out: dict[str, dict[str, Any]] = {}
    for c in concepts:
        concept = m.concept(c)  # the measure's own: an element found by its label is read alone, not its synonyms
        flow = bool(concept.duration)
        try:
            out[c] = find_fact(graph, company, concept, iso(ddate), span if flow else None, as_of)
        except ToolError as exc:
            if not flow or not (trailing or (quarter and span == 1)):
                raise
            if trailing:
                out[c] = trailing_year_fact(graph, company, concept, iso(ddate), as_of)
                continue
            try:
                out[c] = fourth_quarter_fact(graph, company, concept, iso(ddate), as_of)
            except ToolError:
                raise exc from None  # no fiscal year ends here: the quarter's own search says what is missing
    return out


def measure_value(
    graph: Graph,
    company: str,
    measure: Measure | str,
    ddate: str,
    qtrs: int | None = None,
    as_of: AsOf | None = None,
    sic: int | None = None,
    trailing: bool = False,
) -> ToolResult:
    """A catalog measure of ``company`` at period end ``ddate``, with its derivation.

    Args:
        graph: the Neo4j graph. company: a CIK (digits) or a part of the company's name. measure: a
            :class:`~retrieval.facts.measures.Measure` or its id (``gross_margin``). ddate: the FSDS period end
            (``YYYYMMDD``). qtrs: the span the question names for flows (2, 3, 4 are required exactly; None or 1
            prefer the shortest span and fall back to a longer one, saying so: 1, a quarter asked, never to the
            whole year, which a 10-K reports for its fourth quarter: that quarter is the year less its nine months).
            as_of: only filings public by then count. sic: the company's SIC code (banks get the bank formulas
            first). trailing: with ``qtrs`` 4, a flow no filing reports over the twelve months ended ``ddate`` is its
            trailing twelve months (the question said "TTM", "trailing twelve months", "the twelve months ended";
            never for a fiscal year).

    Returns:
        ``value``: the measure in its unit (a percent as its number: 23.4 for 23.4 %); ``numbers``: the value and
        every input fact's value; ``detail``: ``measure``, ``label``, ``unit``, ``formula`` (in concept names),
        ``expression`` (with the values), ``facts`` (each input fact: key, citation, value, period, span, filing),
        ``period`` (ISO), ``qtrs`` (the span of the flows, 0 for instants only) and ``note`` (the span used when
        it is not the one preferred, else None). An error result when no formula's facts are all in the graph
        (naming what was searched), or a division by zero.

    Raises:
        GraphError: Neo4j is unavailable.
    """
    m = BY_ID[measure] if isinstance(measure, str) else measure
    args = {
        "company": company,
        "measure": m.id,
        "period": iso(ddate),
        "qtrs": qtrs,
        **({"ttm": True} if trailing else {}),
    }

    def body() -> ToolResult:
        formulas = m.formulas_for(sic)
        errors: list[str] = []
        for formula in formulas:
            concepts = m.operands(formula)
            flows = [c for c in concepts if m.concept(c).duration]
            if not flows:
                spans: list[int | None] = [None]
            elif qtrs is not None and qtrs > 1:
                spans = [qtrs]
            else:  # a quarter asked: its fiscal year to date, never the whole year of a 10-K's fourth quarter
                spans = [1, 2, 3] if qtrs == 1 else [1, 2, 3, 4]
            for span in spans:
                try:
                    facts = _facts_at(
                        graph,
                        m,
                        company,
                        concepts,
                        ddate,
                        span,
                        as_of,
                        trailing=trailing and qtrs == 4,
                        quarter=qtrs == 1,
                    )
                except ToolError as exc:
                    errors.append(str(exc))
                    continue
                return _evaluate(m, formula, facts, span, ddate, preferred=qtrs or 1)
        detail = errors[0] if errors else "no formula"
        raise ToolError(f"not in the graph: {m.label} needs {' or '.join(formulas)}; {detail}")

    return tool_call("measure", args, body)


def _evaluate(
    m: Measure, formula: str, facts: dict[str, dict[str, Any]], span: int | None, ddate: str, preferred: int
) -> ToolResult:
    operands = {c: f["value"] for c, f in facts.items()}
    expression = formula
    if "DAYS" in formula:
        operands["DAYS"] = DAYS_PER_QUARTER * (span or 1)
    if m.unit == "%":
        expression = f"({formula}) * 100"
    calc = calculate(expression, operands)
    if not calc.ok:
        raise ToolError(f"{m.label}: {calc.error}")
    value = float(calc.value)
    notes = []
    if span is not None and span != preferred:
        months = 3 * span
        notes.append(
            f"the {months} months ended {iso(ddate)} (year to date): the filing reports no "
            f"{3 * preferred}-month figure for {_one_of([c for c in facts if m.concept(c).duration])}"
        )

    def builds(kind: str) -> str:
        return "; ".join(
            f"{f['concept']} = {f['formula']} = "
            + " ".join(f"{sign * c['value']:+,.0f}" for sign, c in f["components"])
            for f in facts.values()
            if str(f.get("key", "")).startswith(f"{kind}:")
        )

    if ttm := builds("ttm"):
        notes.append(f"the twelve months ended {iso(ddate)} (trailing twelve months, which no filing reports: {ttm})")
    if q4 := builds("q4"):
        notes.append(
            f"the three months ended {iso(ddate)} (the fiscal year's fourth quarter, which no filing reports: {q4})"
        )
    entities = sorted({(f["entity"], f["adsh"], f["company"]) for f in facts.values() if f.get("entity")})
    notes += [
        f"{company}'s own facts (legal entity {entity}) of the co-registrant filing {adsh}, which states no "
        "consolidated figures without a legal entity (as its memo reads it)"
        for entity, adsh, company in entities
    ]
    note = "; ".join(notes) or None
    shown = " ".join(f"{facts[w]['value']:.0f}" if w in facts else str(operands.get(w, w)) for w in _words(expression))
    numbers = (value, *(x for f in facts.values() for x in fact_numbers(f)))
    if m.unit == "%":
        numbers += (value / 100,)
    detail = {
        "measure": m.id,
        "label": m.label,
        "unit": m.unit,
        "formula": formula,
        "expression": shown,
        "facts": list(facts.values()),
        "period": iso(ddate),
        "qtrs": span or 0,
        "note": note,
    }
    return ToolResult("measure", {"measure": m.id, "period": iso(ddate)}, value, numbers, detail)


def _one_of(concepts: list[str]) -> str:
    """``X``, or ``at least one of X, Y`` (the note cannot tell which operand lacks the shorter span)."""
    return concepts[0] if len(concepts) == 1 else "at least one of " + ", ".join(concepts)


def _words(expression: str) -> list[str]:
    """The expression split into names, numbers and operators (for the derivation's readable ``expression``)."""
    return re.findall(r"[A-Za-z_]\w*|\d+(?:\.\d+)?|[()+\-*/]", expression)
