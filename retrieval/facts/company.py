"""XBRL facts of the companies a question names, as financial-fact sentences.

The facts F of seed 004 (../shared/seeds/004_7a67e4eaf6285e0b.txt, section 2) come from indicator
databases; finkg adds the SEC XBRL facts of the companies a question names (issue 5), resolved exactly as
the risk memos resolve them (:mod:`retrieval.facts.fact_map`: the filing's own period, canonical concepts,
whole entity, USD). A company is named by CIK or by part of its name; the filing used is the latest whose
filing date is on or before the question's as-of date (the latest filing when there is none).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kg import Graph, cypher
from retrieval.facts import concepts as cc
from retrieval.facts.concepts import iso_date
from retrieval.facts.fact_map import read_fact_maps
from retrieval.facts.indicators import FinancialFact


@dataclass
class CompanyFacts:
    """The facts found for a question's companies, and the names that matched no filing."""

    facts: list[FinancialFact] = field(default_factory=list)
    filings: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)


def _usd(value: float) -> str:
    return f"USD {value:,.0f}"


def company_facts(graph: Graph, companies: Sequence[str], as_of: str | None = None) -> CompanyFacts:
    """Financial facts (one per canonical concept) of the latest filing of each named company.

    Args:
        companies: CIKs (digits) or parts of company names (case-insensitive), e.g. ``"FACTSET"``.
        as_of: ISO date; only filings filed on or before it count (None: the latest filing).

    Returns:
        :class:`CompanyFacts`; each fact's id is the XBRL fact key (``adsh:cik:tag:ddate:uom``) and it
        cites the ``(:Fact {key})`` node; derived facts (e.g. total liabilities from components) cite
        their components.
    """
    out = CompanyFacts()
    cutoff = as_of.replace("-", "") if as_of else None
    adshs: list[str] = []
    for name in companies:
        cik = int(name) if name.strip().isdigit() else None
        rows = graph.read(cypher.COMPANY_FILINGS, {"cik": cik, "name": name.strip() if cik is None else None})
        rows = [r for r in rows if cutoff is None or str(r["filed"] or "") <= cutoff]
        if not rows:
            out.unmatched.append(name)
            continue
        if rows[0]["adsh"] not in adshs:
            adshs.append(rows[0]["adsh"])
    for fm in read_fact_maps(graph, adshs):
        out.filings.append(fm.adsh)
        company, form, period = fm.filing.get("name", ""), fm.filing.get("form", ""), iso_date(fm.filing.get("period"))
        for concept in cc.CONCEPTS:
            f = fm.facts.get(concept.name)
            if f is None:
                continue
            span = "" if not concept.duration else f" for the {f.qtrs * 3} months ended {iso_date(f.ddate)}"
            at = f" at {iso_date(f.ddate)}" if not concept.duration else ""
            text = (
                f"{company} ({form} for the period ended {period}, accession {fm.adsh}): {concept.label}"
                f"{span}{at} was {_usd(f.value)}."
            )
            out.facts.append(
                FinancialFact(
                    id=f.key,
                    text=text,
                    numbers=(f.value,),
                    unit="USD",
                    date=iso_date(f.ddate),
                    indicator=f.tag,
                    source=f"sec:{fm.filing.get('source') or fm.adsh}",
                    cites=tuple(("Fact", "key", k) for k in f.cited_keys),
                )
            )
    return out
