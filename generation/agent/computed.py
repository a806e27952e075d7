"""The answer engine's measures of a report's companies, as facts F the report's prose model may only cite.

Issue 44, "One answer engine": every number in a report is computed by the engine (the ``measure`` tool of
:mod:`generation.agent.measure` over the catalog :mod:`retrieval.facts.measures`), never by the language model.
For each company a report question names, the measures an analyst reads first (liquidity, leverage, margins, cash
generation: :data:`REPORT_MEASURES`) are computed at the company's latest period public by the question's date and
given to the report as financial facts: each states the value with its formula, carries every number of its
derivation (so the report's number check verifies a copied figure), and cites the XBRL facts it was computed from.
The demo's flagship report wrote working capital USD 15,603,000,000 by its own arithmetic; the fact it now reads
says USD 15,608,000,000, computed.
"""

from __future__ import annotations

from collections.abc import Sequence

from generation.agent.ask import company_index, format_value, latest_measure_period
from generation.agent.measure import measure_value
from kg import Graph
from retrieval.contract import AsOf
from retrieval.facts.indicators import FinancialFact
from retrieval.facts.measures import BY_ID
from retrieval.facts.names import CompanyIndex

REPORT_MEASURES: tuple[str, ...] = (
    "working_capital",
    "current_ratio",
    "quick_ratio",
    "cash_ratio",
    "liabilities_to_assets",
    "liabilities_to_equity",
    "debt_to_equity",
    "gross_margin",
    "operating_margin",
    "net_margin",
    "ocf_margin",
    "free_cash_flow",
    "roe",
)
"""The catalog measures a report gets for each company it names (those the filing's facts allow)."""


def _cik(index: CompanyIndex, name: str) -> int | None:
    if name.strip().isdigit():
        return int(name)
    found = index.find(name)
    if found.found:
        return found.found[0].cik
    exact = [c for c, n in index.names.items() if n.lower() == name.strip().lower()]
    return exact[0] if exact else None


def computed_facts(
    graph: Graph, companies: Sequence[str], as_of: AsOf | None, measures: Sequence[str] = REPORT_MEASURES
) -> list[FinancialFact]:
    """The engine's measures of each named company at its latest period public by ``as_of``, as financial facts.

    Args:
        graph: the Neo4j graph. companies: CIKs or names (EDGAR names, short names, tickers). as_of: only filings
            public by then count (None: all). measures: catalog ids (default :data:`REPORT_MEASURES`).

    Returns:
        one :class:`FinancialFact` per measure the facts allow: id ``measure:<cik>:<id>:<period>``, a sentence with
        the value, the formula and the period, ``numbers`` every number of the derivation (the value, its
        fraction for a percent, the operands), ``cites`` the XBRL facts it was computed from. A measure whose
        facts are not in the graph is left out; a name that matches no company gives nothing.

    Raises:
        GraphError: Neo4j is unavailable.
    """
    out: list[FinancialFact] = []
    index, sic = company_index(graph)
    for name in companies:
        cik = _cik(index, name)
        if cik is None:
            continue
        for mid in measures:
            m = BY_ID[mid]
            ddate = latest_measure_period(graph, cik, m, sic.get(cik), as_of)
            if ddate is None:
                continue
            res = measure_value(graph, str(cik), m, ddate, None, as_of, sic.get(cik))
            if not res.ok:
                continue
            d = res.detail
            first = d["facts"][0]
            span = f"the {3 * d['qtrs']} months ended {d['period']}" if d["qtrs"] else f"{d['period']}"
            text = (
                f"{first['company']} ({first['form']} {first['adsh']}): {m.label} for {span} was "
                f"{format_value(float(res.value), m.unit)} ({m.definition}; computed by finkg from the filing's facts)."
            )
            keys = [f["key"] for f in d["facts"]] + [c["key"] for f in d["facts"] for _, c in f.get("components", [])]
            out.append(
                FinancialFact(
                    id=f"measure:{cik}:{mid}:{d['period']}",
                    text=text,
                    numbers=tuple(res.numbers),
                    unit=m.unit,
                    date=d["period"],
                    indicator=f"measure:{mid}",
                    source="finkg:measure",
                    cites=tuple(("Fact", "key", k) for k in dict.fromkeys(keys)),
                )
            )
    return out
