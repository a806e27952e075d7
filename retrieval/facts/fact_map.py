"""The canonical filing fact map: for one accession, the fact that stands for each canonical concept.

Source: ../shared/seeds/003_2b4a46a307636297.txt, "Compared systems" (Structured+Verifier
"supplies the generator with a canonical filing fact map") and "Numeric verification" (the gold
facts the verifier checks against). Concepts and their synonym order: :mod:`retrieval.facts.concepts`.

Only facts of the filing's own period are candidates (``period_role`` ``current``, or
``current_ytd`` for flows, see :mod:`ingest.sec.fsds`); comparatives are never picked. Facts are
read from Neo4j in batches of accessions (:func:`read_fact_maps`), one read transaction each.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from typing import Any
from zoneinfo import ZoneInfo

from kg import Graph, cypher
from retrieval.facts import concepts as cc


@dataclass(frozen=True)
class ResolvedFact:
    """The fact chosen for a canonical concept (or derived from components).

    Attributes:
        concept: canonical name (``Revenues``).
        tag: the us-gaap tag reported (``SalesRevenueNet``), or ``derived``.
        key: the fact's graph key (``(:Fact {key})``); for a derived fact ``derived:<adsh>:<concept>``.
        citation: the readable evidence key ``adsh:cik:tag:ddate:qtrs:uom``.
        value: in USD at full scale.
        ddate: period end ``YYYYMMDD``; qtrs: 0 for instants, else the span in quarters.
        decimals: the source's precision (XBRL ``decimals``), None when the source has none.
        components: for a derived fact, ``(sign, fact)`` pairs that sum to it.
        formula: for a derived fact, the formula in words.
    """

    concept: str
    tag: str
    key: str
    citation: str
    value: float
    ddate: str
    qtrs: int
    decimals: int | None = None
    components: tuple[tuple[int, ResolvedFact], ...] = ()
    formula: str = ""

    @property
    def derived(self) -> bool:
        return bool(self.components)

    @property
    def cited_keys(self) -> list[str]:
        """Fact keys a claim about this fact cites (the components when derived)."""
        return [f.key for _, f in self.components] if self.components else [self.key]


@dataclass
class FactMap:
    """One filing's canonical facts.

    Attributes:
        filing: ``adsh, cik, name, sic, form, period, fy, fp, filed`` of the accession.
        facts: canonical concept -> its fact for the filing's own span (flows) or period end.
        spans: canonical concept -> {qtrs: fact} for every current span of a flow (a 10-Q's
            3-month and year-to-date figures), so that ratios pair figures of the same span.
        alternatives: concept -> other synonym tags the filing also reports for the period.
        not_applicable: concept -> why it does not apply (e.g. a bank's current assets).
        raw: every candidate fact read, by key (the verifier's gold table for this filing).
    """

    filing: dict[str, Any]
    facts: dict[str, ResolvedFact] = field(default_factory=dict)
    spans: dict[str, dict[int, ResolvedFact]] = field(default_factory=dict)
    alternatives: dict[str, list[str]] = field(default_factory=dict)
    not_applicable: dict[str, str] = field(default_factory=dict)
    raw: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def adsh(self) -> str:
        return self.filing["adsh"]

    @property
    def available_at(self) -> str | None:
        """When the filing became public (:func:`filing_available_at`), ISO UTC; None when undated."""
        return filing_available_at(self.filing.get("accepted"), self.filing.get("filed"))

    def missing(self, names: Iterable[str] = cc.REQUIRED) -> list[str]:
        """Required concepts with neither a fact nor a not-applicable reason."""
        return [n for n in names if n not in self.facts and n not in self.not_applicable]

    def complete(self, names: Iterable[str] = cc.REQUIRED) -> bool:
        """True when every concept in ``names`` has a fact (derived counts; not-applicable does not)."""
        return all(n in self.facts for n in names)

    def at_span(self, concept: str, qtrs: int) -> ResolvedFact | None:
        """The concept's fact over ``qtrs`` quarters (flows), or its period-end fact (instants)."""
        if not cc.BY_NAME[concept].duration:
            return self.facts.get(concept)
        return self.spans.get(concept, {}).get(qtrs)


EDGAR_TIME_ZONE = "America/New_York"
"""EDGAR's clock: the SEC Financial Statement Data Sets' ``accepted`` is EDGAR acceptance time, US Eastern."""


def filing_available_at(accepted: Any, filed: Any) -> str | None:
    """When a filing (and every fact it reports) became public, as ``YYYY-MM-DDTHH:MM:SSZ``.

    Its EDGAR acceptance time (``Filing.accepted``, e.g. ``2009-09-04 21:13:00.0``, US Eastern; seed 000
    section 3.3: "filings timestamped by acceptance time") when the graph has it; else the end of its
    filing date (``Filing.filed``, ``YYYYMMDD``, 23:59:59 UTC: the companyfacts JSON has no acceptance
    time); else None (an XBRL instance carries neither: undated, so never available to a point-in-time
    retrieval built from the graph).
    """
    if accepted not in (None, ""):
        text = str(accepted).strip()
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            moment = None
        if moment is not None:
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=ZoneInfo(EDGAR_TIME_ZONE))
            return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    day = str(filed or "").replace("-", "").strip()
    if len(day) == 8 and day.isdigit():
        return f"{day[:4]}-{day[4:6]}-{day[6:]}T23:59:59Z"
    return None


def _resolved(concept: str, row: dict[str, Any]) -> ResolvedFact:
    return ResolvedFact(
        concept=concept,
        tag=row["tag"],
        key=row["key"],
        citation=row["citation"],
        value=float(row["value"]),
        ddate=row["ddate"],
        qtrs=int(row["qtrs"] or 0),
        decimals=row.get("decimals"),
    )


def build_fact_map(filing: dict[str, Any], rows: Sequence[dict[str, Any]]) -> FactMap:
    """Resolve one filing's candidate facts into its canonical fact map.

    Args:
        filing: the accession's fields (``adsh, cik, name, sic, form, period, ...``).
        rows: candidate facts of that accession (``key, citation, tag, value, ddate, qtrs,
            period_role, decimals``), current-period roles only; nil values are ignored.

    Returns:
        The :class:`FactMap`. Rules: synonyms in :mod:`retrieval.facts.concepts` order; flows take the
        form's own span (``period_role == 'current'``) as the headline fact, and, when there is
        none (a 10-Q's cash-flow statement), the longest year-to-date span; Liabilities is
        derived when not reported; current assets/liabilities are not applicable for an
        unclassified balance sheet (banks, insurers, brokers) that reports neither.
    """
    fm = FactMap(filing=dict(filing))
    by_tag: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("value") is None:
            continue
        fm.raw[r["key"]] = r
        by_tag.setdefault(r["tag"], []).append(r)

    for concept in cc.CONCEPTS:
        present = [t for t in concept.synonyms if t in by_tag]
        if not present:
            continue
        if concept.duration:
            spans: dict[int, ResolvedFact] = {}
            headline: ResolvedFact | None = None
            for tag in present:  # priority order: a higher synonym's span wins
                for r in by_tag[tag]:
                    q = int(r["qtrs"] or 0)
                    if q and q not in spans:
                        spans[q] = _resolved(concept.name, r)
                    if r["period_role"] == "current" and headline is None:
                        headline = _resolved(concept.name, r)
            if headline is None and spans:
                headline = spans[max(spans)]
            if headline is None:
                continue
            fm.spans[concept.name] = spans
            fm.facts[concept.name] = headline
            chosen = headline.tag
        else:
            instants = [r for t in present for r in by_tag[t] if not r["qtrs"]]
            if not instants:
                continue
            fm.facts[concept.name] = _resolved(concept.name, instants[0])
            chosen = instants[0]["tag"]
        others = [t for t in present if t != chosen]
        if others:
            fm.alternatives[concept.name] = others

    if "Liabilities" not in fm.facts:
        derived = derive_liabilities(fm.filing, by_tag)
        if derived is not None:
            fm.facts["Liabilities"] = derived
    if cc.unclassified_balance_sheet(fm.filing.get("sic")):
        for name in ("CurrentAssets", "CurrentLiabilities"):
            if name not in fm.facts:
                fm.not_applicable[name] = (
                    "the filer presents an unclassified balance sheet "
                    "(banks, insurers and brokers report no current assets "
                    "or liabilities)"
                )
    return fm


def derive_liabilities(filing: dict[str, Any], by_tag: dict[str, list[dict[str, Any]]]) -> ResolvedFact | None:
    """Total liabilities when the filing does not report ``Liabilities``.

    Liabilities = LiabilitiesAndStockholdersEquity - total equity - temporary equity, where total
    equity is ``StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest`` when
    reported, else ``StockholdersEquity`` (+ ``MinorityInterest`` when reported). All at the
    period end. Returns None when LiabilitiesAndStockholdersEquity or equity is missing.
    """

    def instant(tag: str) -> dict[str, Any] | None:
        return next((r for r in by_tag.get(tag, []) if not r["qtrs"]), None)

    total = instant(cc.LIABILITIES_AND_EQUITY)
    if total is None:
        return None
    parts: list[tuple[int, dict[str, Any]]] = [(1, total)]
    equity = instant(cc.EQUITY_INCLUDING_NCI)
    if equity is not None:
        parts.append((-1, equity))
    else:
        parent = instant(cc.EQUITY_PARENT)
        if parent is None:
            return None
        parts.append((-1, parent))
        minority = instant(cc.MINORITY_INTEREST)
        if minority is not None:
            parts.append((-1, minority))
    temporary = instant(cc.TEMPORARY_EQUITY)
    if temporary is not None:
        parts.append((-1, temporary))
    components = tuple((sign, _resolved(r["tag"], r)) for sign, r in parts)
    value = sum(sign * f.value for sign, f in components)
    formula = components[0][1].tag + "".join(f" - {f.tag}" for _, f in components[1:])
    decimals = [f.decimals for _, f in components if f.decimals is not None]
    return ResolvedFact(
        concept="Liabilities",
        tag="derived",
        key=f"derived:{filing['adsh']}:Liabilities",
        citation=f"{filing['adsh']}:{filing.get('cik')}:Liabilities(derived):{total['ddate']}:0:USD",
        value=value,
        ddate=total["ddate"],
        qtrs=0,
        decimals=min(decimals) if decimals else None,
        components=components,
        formula=formula,
    )


def _chunks(items: Sequence[str], size: int) -> Iterator[list[str]]:
    it = iter(items)
    while batch := list(islice(it, size)):
        yield batch


def read_fact_maps(graph: Graph, adshs: Sequence[str], batch_size: int = 200) -> Iterator[FactMap]:
    """Fact maps for ``adshs`` read from Neo4j, ``batch_size`` accessions per read transaction.

    Yields maps in the order of ``adshs``; an accession that is not in the graph is skipped
    (callers compare counts). Raises :class:`kg.GraphError` when Neo4j is unavailable.
    """
    tags = cc.all_tags()
    for batch in _chunks(list(adshs), batch_size):
        records = graph.read(cypher.FILING_FACT_CANDIDATES, {"adshs": batch, "tags": tags})
        by_adsh = {r["filing"]["adsh"]: r for r in records}
        for adsh in batch:
            r = by_adsh.get(adsh)
            if r is not None:
                yield build_fact_map({**r["filing"], **r["company"]}, r["facts"])


def filing_sources(graph: Graph) -> list[str]:
    """The file names filings of the graph were loaded from (``Filing.source``), sorted."""
    return [r["source"] for r in graph.read(cypher.FILING_SOURCES)]


def list_filings(graph: Graph, adshs: Sequence[str] | None = None, source: str | None = None) -> list[dict[str, Any]]:
    """Accession, form, period, company and SIC of the filings in the graph (all, or ``adshs``;
    only those loaded from the file named ``source``, e.g. ``2009q3.zip``), by accession number."""
    return graph.read(cypher.LIST_FILINGS, {"adshs": list(adshs) if adshs else None, "source": source})
