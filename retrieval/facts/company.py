"""XBRL facts of the companies a question names, as financial-fact sentences.

The facts F of seed 004 (../shared/seeds/004_7a67e4eaf6285e0b.txt, section 2) come from indicator
databases; finkg adds the SEC XBRL facts of the companies a question names (issue 5), resolved exactly as
the risk memos resolve them (:mod:`retrieval.facts.fact_map`: the filing's own period, canonical concepts,
whole entity, USD). A company is named by CIK or by part of its name; the filing used is the latest (by
period) that was public at the question's as-of time: its EDGAR acceptance, else the end of its filing date
(:func:`retrieval.facts.fact_map.filing_available_at`); an undated filing (an XBRL instance) never counts.
So a fact of a filing made after ``as_of``, of the same company or any other, never reaches the question.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kg import Graph, cypher
from retrieval.contract import AsOf, as_of_cutoff, available
from retrieval.facts import concepts as cc
from retrieval.facts.concepts import iso_date
from retrieval.facts.fact_map import filing_available_at, read_fact_maps
from retrieval.facts.indicators import FinancialFact


@dataclass
class CompanyFacts:
    """The facts found for a question's companies, and the names that matched no filing."""

    facts: list[FinancialFact] = field(default_factory=list)
    filings: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    available_at: dict[str, str] = field(default_factory=dict)
    """Fact id -> when its filing became public (ISO UTC)."""


def _usd(value: float) -> str:
    return f"USD {value:,.0f}"


def company_facts(graph: Graph, companies: Sequence[str], as_of: AsOf | None) -> CompanyFacts:
    """Financial facts (one per canonical concept) of the latest filing of each named company public at ``as_of``.

    Args:
        companies: CIKs (digits) or parts of company names (case-insensitive), e.g. ``"FACTSET"``.
        as_of: the question's date (its end counts) or time; filings public later are left out before
            the latest is chosen.

    Returns:
        :class:`CompanyFacts`; each fact's id is the XBRL fact key (``adsh:cik:tag:ddate:uom``) and it
        cites the ``(:Fact {key})`` node; derived facts (e.g. total liabilities from components) cite
        their components.

    Raises:
        AsOfRequired: ``as_of`` is None.
    """
    out = CompanyFacts()
    cutoff = as_of_cutoff(as_of)
    adshs: list[str] = []
    when: dict[str, str] = {}
    for name in companies:
        cik = int(name) if name.strip().isdigit() else None
        rows = graph.read(cypher.COMPANY_FILINGS, {"cik": cik, "name": name.strip() if cik is None else None})
        public = []
        for r in rows:
            at = filing_available_at(r["accepted"], r["filed"])
            if available(at, cutoff, "drop"):
                assert at is not None  # undated filings are dropped
                public.append(r)
                when[r["adsh"]] = at
        if not public:
            out.unmatched.append(name)
            continue
        if public[0]["adsh"] not in adshs:
            adshs.append(public[0]["adsh"])
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
            out.available_at[f.key] = when[fm.adsh]
    return out
