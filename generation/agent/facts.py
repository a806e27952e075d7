"""The analyst agent's graph tools: ``fact_lookup`` (one XBRL fact) and ``ratio`` (a ratio with its derivation).

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.4, "Grounded Data Retrieval" (``Lookup(symbol,
date, indicator)`` returns a structured entry, every numerical claim anchored to a source row, all filtering
deterministic in the tool backend). finkg's panel is the SEC graph: a company (CIK or part of its name), a
concept (a canonical memo concept, its label, or a us-gaap tag) and a period end give the fact node, read with
the fixed Cypher ``kg.cypher.COMPANY_CONCEPT_FACTS``.

Concept synonyms are resolved as the memos resolve them (:mod:`retrieval.facts.concepts`: the first synonym
reported wins; total liabilities, when not reported, derived from its components by
:func:`retrieval.facts.fact_map.derive_liabilities`). Ratios are the memo ratios
(:mod:`retrieval.facts.ratios`, shared with :mod:`generation.memo.claims`) plus ``growth``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from generation.agent.arithmetic import parse_date
from generation.agent.results import ToolError, ToolResult, tool_call
from kg import Graph, cypher
from retrieval.contract import AsOf, as_of_cutoff, available
from retrieval.facts import concepts as cc
from retrieval.facts.fact_map import derive_liabilities, filing_available_at
from retrieval.facts.history import END_SLACK_DAYS
from retrieval.facts.measures import ALL_CONCEPTS
from retrieval.facts.periods import iso, months_before, year_earlier
from retrieval.facts.ratios import RATIO_BY_NAME

RATIO_NAMES: tuple[str, ...] = ("growth", *RATIO_BY_NAME)
"""The ``ratio`` tool's names: ``growth`` and the memo ratios (``current_ratio``, ``leverage``, ``net_margin``,
``ocf_margin``)."""


def resolve_concept(concept: str | cc.CanonicalConcept) -> tuple[str, tuple[str, ...], bool | None]:
    """The tags that report ``concept``, in priority order.

    Args:
        concept: a canonical concept (``CurrentAssets``, or one of the measure catalog's further concepts:
            :data:`retrieval.facts.measures.EXTRA_CONCEPTS`), its label (``current assets``, case-insensitive) or a
            us-gaap tag (``AssetsCurrent``; a synonym of a canonical concept resolves to that concept); or a
            measure's own :class:`~retrieval.facts.concepts.CanonicalConcept`, read as it is (an element found by
            its label is that element alone: IBM's ``CostOfServices`` is not its total cost, ``CostOfRevenue``,
            the first synonym of the concept ``CostOfServices`` belongs to).

    Returns:
        ``(name, tags, duration)``: the canonical name (or the tag itself when it belongs to no canonical
        concept), its synonyms, and whether it is a flow (None when unknown: a tag outside the canonical list).
    """
    if isinstance(concept, cc.CanonicalConcept):
        return concept.name, concept.synonyms, concept.duration
    text = str(concept).strip()
    low = text.lower()
    for c in ALL_CONCEPTS.values():
        if low in (c.name.lower(), c.label.lower()):
            return c.name, c.synonyms, c.duration
    for c in ALL_CONCEPTS.values():
        if text in c.synonyms:
            return c.name, c.synonyms, c.duration
    return text, (text,), None


def period_key(period: str) -> str:
    """A period end as the graph's ``ddate`` (``YYYYMMDD``) from ``2009-06-30``, ``20090630``, ``June 30, 2009``.

    Raises:
        ToolError: not a date.
    """
    return parse_date(period).strftime("%Y%m%d")


def _company(rows: list[dict[str, Any]], company: str) -> list[dict[str, Any]]:
    """The rows of the one company ``company`` names; ToolError when the name matches several."""
    ciks = list(dict.fromkeys(r["cik"] for r in rows))
    if len(ciks) <= 1:
        return rows
    exact = [r for r in rows if str(r["company"]).lower() == company.strip().lower()]
    if exact:
        return exact
    names = ", ".join(sorted({f"{r['company']} (CIK {r['cik']})" for r in rows}))
    raise ToolError(f"company {company!r} matches several companies: {names}; name one by CIK")


def _fact(row: dict[str, Any], concept: str) -> dict[str, Any]:
    return {
        "company": row["company"],
        "cik": row["cik"],
        "concept": concept,
        "tag": row["tag"],
        "value": float(row["value"]),
        "uom": row["uom"],
        "period": cc.iso_date(row["ddate"]),
        "qtrs": int(row["qtrs"] or 0),
        "key": row["key"],
        "citation": row["citation"],
        "adsh": row["adsh"],
        "form": row["form"],
        "filed": cc.iso_date(row["filed"]),
        "available_at": filing_available_at(row.get("accepted"), row.get("filed")),
        **({"entity": row["coreg"]} if row.get("coreg") else {}),
    }


def find_fact(
    graph: Graph,
    company: str,
    concept: str | cc.CanonicalConcept,
    period: str,
    qtrs: int | None = None,
    as_of: AsOf | None = None,
    uom: str = "USD",
) -> dict[str, Any]:
    """The XBRL fact for ``company``'s ``concept`` at period end ``period`` (see :func:`fact_lookup`).

    Returns:
        the fact as a dict (``company, cik, concept, tag, value, uom, period, qtrs, key, citation, adsh, form,
        filed, available_at``; a derived fact adds ``formula`` and ``components``, a list of ``(sign, fact)``; a
        co-registrant filing's ``ParentCompany`` fact, read where the filing has no consolidated one, adds
        ``entity``).

    Raises:
        ToolError: the company, concept or period is not in the graph, or the name is ambiguous.
        GraphError: Neo4j is unavailable.
    """
    name, tags, duration = resolve_concept(concept)
    ddate = period_key(period)
    cik = int(company) if str(company).strip().isdigit() else None
    params = {"cik": cik, "name": None if cik is not None else str(company).strip(), "ddate": ddate, "uom": uom}
    derive = name == "Liabilities"
    all_tags = list(tags) + (list(cc.DERIVATION_TAGS) if derive else [])
    rows = graph.read(cypher.COMPANY_CONCEPT_FACTS, {**params, "tags": all_tags})
    if as_of is not None:
        cutoff = as_of_cutoff(as_of)
        rows = [r for r in rows if available(filing_available_at(r["accepted"], r["filed"]), cutoff, "drop")]
    searched = f"company {company!r}, concept {name} (tags {', '.join(tags)}), period {cc.iso_date(ddate)}, {uom}"
    if as_of is not None:
        searched += f", filings public by {as_of}"
    if not rows:
        raise ToolError(f"not in the graph: no fact for {searched}")
    rows = _company(rows, str(company))
    # the latest filing first (the query's order): a restated value supersedes the earlier statement
    candidates = [r for r in rows if r["tag"] in tags and r["value"] is not None]
    if duration is not False:
        spans = sorted({int(r["qtrs"] or 0) for r in candidates if duration is None or r["qtrs"]})
        want = qtrs if qtrs is not None else (spans[0] if spans else None)
        candidates = [r for r in candidates if int(r["qtrs"] or 0) == want]
        if not candidates and spans:
            raise ToolError(f"no {want}-quarter fact for {searched}; spans reported: {spans}")
    else:
        candidates = [r for r in candidates if not r["qtrs"]]
    for tag in tags:  # synonyms in priority order
        for r in candidates:
            if r["tag"] == tag:
                fact = _fact(r, name)
                others = sorted({x["tag"] for x in candidates if x["tag"] != tag})
                if others:
                    fact["alternatives"] = others
                return fact
    if derive:
        adsh = rows[0]["adsh"]
        by_tag: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            if r["adsh"] == adsh:
                by_tag.setdefault(r["tag"], []).append(r)
        derived = derive_liabilities({"adsh": adsh, "cik": rows[0]["cik"]}, by_tag)
        if derived is not None:
            parts = [
                (sign, _fact(next(r for r in by_tag[f.tag] if r["key"] == f.key), f.tag))
                for sign, f in derived.components
            ]
            fact = _fact(
                {
                    **rows[0],
                    "tag": "derived",
                    "value": derived.value,
                    "key": derived.key,
                    "citation": derived.citation,
                    "qtrs": 0,
                },
                name,
            )
            return {**fact, "formula": derived.formula, "components": parts}
    raise ToolError(f"not in the graph: no fact for {searched}")


def fact_near(
    graph: Graph,
    company: str,
    concept: str | cc.CanonicalConcept,
    ddate: str,
    qtrs: int,
    as_of: AsOf | None = None,
) -> dict[str, Any]:
    """:func:`find_fact` over ``qtrs`` quarters at ``ddate`` (``YYYYMMDD``, a month end "three months" or "a year"
    from another period), else at the company's reported period end closest to it within
    :data:`~retrieval.facts.history.END_SLACK_DAYS` days: a 52/53-week fiscal year's quarters end on a Saturday
    (Marvell's nine months ended 2025-11-01, its year 2026-01-31), and SEC companyfacts keeps the exact dates.

    Raises:
        ToolError: no such fact within the slack (the error of the month end's search), or the name is ambiguous.
        GraphError: Neo4j is unavailable.
    """
    try:
        return find_fact(graph, company, concept, iso(ddate), qtrs, as_of)
    except ToolError as exc:
        first_error = exc
    _, tags, _ = resolve_concept(concept)
    day = parse_date(iso(ddate))
    cik = int(company) if str(company).strip().isdigit() else None
    params = {"cik": cik, "name": None if cik is not None else str(company).strip(), "tags": list(tags), "uom": "USD"}
    first, last = ((day + timedelta(days=d)).strftime("%Y%m%d") for d in (-END_SLACK_DAYS, END_SLACK_DAYS))
    rows = graph.read(cypher.COMPANY_CONCEPT_PERIODS, params)
    ends = {r["ddate"] for r in rows if int(r["qtrs"] or 0) == qtrs and first <= r["ddate"] <= last} - {ddate}
    for end in sorted(ends, key=lambda e: abs((parse_date(iso(e)) - day).days)):
        try:
            return find_fact(graph, company, concept, iso(end), qtrs, as_of)
        except ToolError:
            continue  # reported there, but not public by ``as_of``
    raise first_error


def fourth_quarter_fact(
    graph: Graph, company: str, concept: str | cc.CanonicalConcept, period: str, as_of: AsOf | None = None
) -> dict[str, Any]:
    """The fourth quarter of flow ``concept``'s fiscal year ended ``period``, which a 10-K does not report: the year
    less its first nine months (``Q4 = FY - 9M``, the year to date of the third quarter's 10-Q, ending about three
    months earlier), the derivation :mod:`retrieval.facts.history` uses for its quarterly series.

    Returns:
        a derived fact (see :func:`find_fact`): ``tag`` ``"derived"``, ``qtrs`` 1, ``value`` in USD, ``formula``
        (``FY <end> - 9M <end>``), ``components`` (``(sign, fact)``: the fiscal year's fact and the nine months'), ``key``
        ``q4:<adsh>:<concept>:<ddate>``; the filing fields are the fiscal year's (its 10-K).

    Raises:
        ToolError: ``concept`` is not a flow, or the year's or the nine months' fact is not in the graph (naming what
            was searched).
        GraphError: Neo4j is unavailable.
    """
    name, _, duration = resolve_concept(concept)
    if duration is False:
        raise ToolError(f"{name} is a balance, not a flow: it has no fourth quarter")
    ddate = period_key(period)
    year = find_fact(graph, company, concept, period, 4, as_of)
    nine = fact_near(graph, company, concept, months_before(ddate, 3), 3, as_of)
    return {
        **year,
        "tag": "derived",
        "value": year["value"] - nine["value"],
        "qtrs": 1,
        "key": f"q4:{year['adsh']}:{name}:{ddate}",
        "citation": f"{year['adsh']}:{year['cik']}:{name}(Q4):{ddate}:1:{year['uom']}",
        "formula": f"FY {iso(ddate)} - 9M {nine['period']} (the fourth quarter, which the 10-K does not report)",
        "components": [(1, year), (-1, nine)],
    }


def trailing_year_fact(
    graph: Graph, company: str, concept: str | cc.CanonicalConcept, period: str, as_of: AsOf | None = None
) -> dict[str, Any]:
    """The trailing twelve months (TTM, LTM) of flow ``concept`` ended at ``period``, derived from three facts where
    no filing reports a twelve-month span ending there: the last fiscal year + this year to date - the same span a
    year earlier (``FY + YTD - prior YTD``, the standard last-twelve-months build). The year to date is the longest
    span of one to three quarters the company reports at ``period`` (a 10-Q's fiscal year to date) whose fiscal
    year, ending that many quarters earlier, is reported too.

    Returns:
        a derived fact (see :func:`find_fact`): ``tag`` ``"derived"``, ``qtrs`` 4, ``value`` in USD, ``formula``
        (``FY <end> + YTD <end> - YTD <end a year earlier>``), ``components`` (``(sign, fact)``: the fiscal year's,
        the year to date's and the earlier year to date's fact, each with its key and filing; what the gate traces
        and Neo4j Browser walks back to), ``key`` ``ttm:<adsh>:<concept>:<ddate>``; the filing fields are the year to
        date's.

    Raises:
        ToolError: ``concept`` is not a flow, or no span's three facts are all in the graph (naming what was
            searched).
        GraphError: Neo4j is unavailable.
    """
    name, _, duration = resolve_concept(concept)
    if duration is False:
        raise ToolError(f"{name} is a balance, not a flow: it has no trailing twelve months")
    ddate = period_key(period)
    tried: list[str] = []  # the longest year to date's missing fact first: the fiscal year's
    for k in (3, 2, 1):
        try:
            ytd = find_fact(graph, company, concept, period, k, as_of)
        except ToolError:
            continue  # no such span at ``period``
        year_end, before_end = months_before(ddate, 3 * k), year_earlier(ddate)
        try:
            year = fact_near(graph, company, concept, year_end, 4, as_of)
            before = fact_near(graph, company, concept, before_end, k, as_of)
        except ToolError as exc:
            tried.append(str(exc))
            continue
        value = year["value"] + ytd["value"] - before["value"]
        formula = f"FY {year['period']} + YTD {iso(ddate)} - YTD {before['period']} ({3 * k} months each)"
        return {
            **ytd,
            "tag": "derived",
            "value": value,
            "qtrs": 4,
            "key": f"ttm:{ytd['adsh']}:{name}:{ddate}",
            "citation": f"{ytd['adsh']}:{ytd['cik']}:{name}(TTM):{ddate}:4:{ytd['uom']}",
            "formula": formula,
            "components": [(1, year), (1, ytd), (-1, before)],
        }
    raise ToolError(
        f"not in the graph: no trailing twelve months of {name} ended {iso(ddate)} (the fiscal year, the year to "
        f"date and the year to date a year earlier): {tried[0] if tried else 'no year-to-date fact'}"
    )


def fact_numbers(fact: dict[str, Any]) -> tuple[float, ...]:
    """A fact's value and, for a derived fact, its components' values (what the answer gate may trace)."""
    return (fact["value"], *(f["value"] for _, f in fact.get("components", [])))


def fact_lookup(
    graph: Graph, company: str, concept: str, period: str, qtrs: int | None = None, as_of: AsOf | None = None
) -> ToolResult:
    """The XBRL fact a company reported for a concept at a period end, with its key, filing and date.

    Args:
        graph: the Neo4j graph. company: a CIK (digits) or a case-insensitive part of the company name (an
            exact name wins when the part matches several; otherwise an error lists them). concept: a canonical
            concept, its label or a us-gaap tag (:func:`resolve_concept`). period: the period end
            (``2009-06-30``). qtrs: for flows, the span in quarters (None: the shortest reported, a 10-Q's
            three months); instants are always ``qtrs`` 0. as_of: when given, only filings public by then
            (EDGAR acceptance, else the end of the filing date) count.

    Returns:
        ``value``: the fact's value in USD (full scale); ``detail``: the fact (see :func:`find_fact`): its key,
        citation (``adsh:cik:tag:ddate:qtrs:uom``), filing accession, form, filing date, tag and the other
        synonyms reported; ``numbers``: the value (and a derived fact's components). When several filings report
        the fact (a comparative restated later), the latest filing's. An error result, naming what was
        searched, when it is not in the graph.

    Raises:
        GraphError: Neo4j is unavailable.
    """
    args = {"company": company, "concept": concept, "period": period, "qtrs": qtrs}

    def body() -> ToolResult:
        fact = find_fact(graph, company, concept, period, qtrs, as_of)
        return ToolResult("fact_lookup", args, fact["value"], fact_numbers(fact), fact)

    return tool_call("fact_lookup", args, body)


def _year_before(period: str) -> str:
    d = parse_date(period)
    try:
        return d.replace(year=d.year - 1).isoformat()
    except ValueError:  # 29 February
        return (d.replace(day=28, year=d.year - 1)).isoformat()


def ratio(
    graph: Graph,
    name: str,
    company: str,
    period: str,
    concept: str = "Revenues",
    as_of: AsOf | None = None,
) -> ToolResult:
    """A financial ratio of ``company`` at period end ``period``, with its derivation.

    Args:
        name: ``growth`` (year-on-year: (concept at period - concept a year earlier, same span) / |earlier|, a
            fraction), or a memo ratio (:mod:`retrieval.facts.ratios`): ``current_ratio`` (current assets /
            current liabilities, times), ``leverage`` (total liabilities / total assets, a fraction),
            ``net_margin`` (net income / revenue), ``ocf_margin`` (operating cash flow / revenue). Flows are
            paired over the same span (the numerator's). concept: the concept ``growth`` is about (default
            revenue); ignored by the other ratios. company, period, as_of: as for :func:`fact_lookup`.

    Returns:
        ``value``: the ratio (a fraction, or times for the current ratio); ``detail``: ``formula`` (in concept
        names), ``expression`` (with the values), ``facts`` (each input fact: key, citation, value, period,
        filing), ``style`` (``x`` or ``%``); ``numbers``: the ratio, its percentage for ``%`` ratios and the
        input values. An error result for an unknown name, a fact not in the graph, or a zero (or negative
        revenue) denominator.

    Raises:
        GraphError: Neo4j is unavailable.
    """
    args = {"name": name, "company": company, "period": period, "concept": concept}

    def body() -> ToolResult:
        key = str(name).strip().lower()
        if key == "growth":
            now = find_fact(graph, company, concept, period, as_of=as_of)
            before = find_fact(graph, company, concept, _year_before(period), qtrs=now["qtrs"], as_of=as_of)
            if before["value"] == 0:
                raise ToolError(f"growth of {now['concept']}: the earlier value is zero")
            value = (now["value"] - before["value"]) / abs(before["value"])
            formula = f"({now['concept']}[{now['period']}] - {now['concept']}[{before['period']}]) / |{now['concept']}[{before['period']}]|"
            expression = f"({now['value']:.0f} - {before['value']:.0f}) / {abs(before['value']):.0f}"
            facts, style = [now, before], "%"
        elif key in RATIO_BY_NAME:
            r = RATIO_BY_NAME[key]
            num = find_fact(graph, company, r.numerator, period, as_of=as_of)
            span = num["qtrs"] if cc.BY_NAME[r.denominator].duration else None
            den = find_fact(graph, company, r.denominator, period, qtrs=span, as_of=as_of)
            if den["value"] == 0 or (r.denominator == "Revenues" and den["value"] < 0):
                raise ToolError(f"{r.label}: {cc.BY_NAME[r.denominator].label} is zero or negative")
            value = num["value"] / den["value"]
            formula = f"{r.numerator} / {r.denominator}"
            expression = f"{num['value']:.0f} / {den['value']:.0f}"
            facts, style = [num, den], r.style
        else:
            raise ToolError(f"unknown ratio {name!r}: use one of {', '.join(RATIO_NAMES)}")
        numbers = (value, value * 100) if style == "%" else (value,)
        numbers += tuple(x for f in facts for x in fact_numbers(f))
        detail = {"formula": formula, "expression": expression, "style": style, "facts": facts}
        return ToolResult("ratio", args, value, numbers, detail)

    return tool_call("ratio", args, body)


FACT_LOOKUP_SCHEMA: dict[str, Any] = {
    "description": "Look up one XBRL fact of a company in the graph: value, fact key, filing and date.",
    "type": "object",
    "properties": {
        "company": {"type": "string", "description": "CIK or part of the company name"},
        "concept": {"type": "string", "description": "e.g. Revenues, CurrentAssets, net income, AssetsCurrent"},
        "period": {"type": "string", "description": "period end, YYYY-MM-DD"},
        "qtrs": {"type": "integer", "description": "span in quarters for income and cash-flow items (optional)"},
    },
    "required": ["company", "concept", "period"],
}
RATIO_SCHEMA: dict[str, Any] = {
    "description": "Compute a ratio from the graph's facts, with its derivation (facts and formula).",
    "type": "object",
    "properties": {
        "name": {"type": "string", "enum": list(RATIO_NAMES)},
        "company": {"type": "string", "description": "CIK or part of the company name"},
        "period": {"type": "string", "description": "period end, YYYY-MM-DD"},
        "concept": {"type": "string", "description": "for growth: the concept that grows (default Revenues)"},
    },
    "required": ["name", "company", "period"],
}
