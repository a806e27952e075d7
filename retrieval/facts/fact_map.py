"""The canonical filing fact map: for one accession, the fact that stands for each canonical concept.

Source: ../shared/seeds/003_2b4a46a307636297.txt, "Compared systems" (Structured+Verifier
"supplies the generator with a canonical filing fact map") and "Numeric verification" (the gold
facts the verifier checks against). Concepts and their synonym order: :mod:`retrieval.facts.concepts`.

Only facts of the filing's own period are candidates (``period_role`` ``current``, or
``current_ytd`` for flows, see :mod:`ingest.sec.fsds`); comparatives are never picked. Facts are
read from Neo4j in batches of accessions (:func:`read_fact_maps`), one read transaction each.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from itertools import islice
from typing import Any
from zoneinfo import ZoneInfo

from kg import Graph, cypher
from retrieval.facts import concepts as cc
from retrieval.facts import statements as st


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
        basis: why this fact was chosen when no canonical rule chose it (the income statement's top
            revenue line) or what its derivation subtracted (temporary equity items and their lines):
            :mod:`retrieval.facts.statements`; "" otherwise.
        flag: a plausibility warning (:func:`retrieval.facts.statements.implausible`), "" when none.
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
    basis: str = ""
    flag: str = ""

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
        entity: the co-registrant whose facts the map holds (None: the consolidated registrant;
            ``ParentCompany`` when every fact of the filing carries one: :func:`statements.parent_entity`).
        coregistrants: the filing's other legal entities (their facts stay in the graph, not in this map).
    """

    filing: dict[str, Any]
    facts: dict[str, ResolvedFact] = field(default_factory=dict)
    spans: dict[str, dict[int, ResolvedFact]] = field(default_factory=dict)
    alternatives: dict[str, list[str]] = field(default_factory=dict)
    not_applicable: dict[str, str] = field(default_factory=dict)
    raw: dict[str, dict[str, Any]] = field(default_factory=dict)
    entity: str | None = None
    coregistrants: list[str] = field(default_factory=list)

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


def _flow(concept: str, present: Sequence[str], by_tag: dict[str, list[dict[str, Any]]]):
    """``(headline, spans)`` of a flow concept reported under the tags ``present`` (priority order: a
    higher tag's span wins): the form's own span, else the longest year-to-date span; None when no span."""
    spans: dict[int, ResolvedFact] = {}
    headline: ResolvedFact | None = None
    for tag in present:
        for r in by_tag[tag]:
            q = int(r["qtrs"] or 0)
            if q and q not in spans:
                spans[q] = _resolved(concept, r)
            if r["period_role"] == "current" and headline is None:
                headline = _resolved(concept, r)
    if headline is None and spans:
        headline = spans[max(spans)]
    return None if headline is None else (headline, spans)


def needs_statements(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The statements (``IS``, ``BS``) a filing's presentation must be read for, from its candidate facts:
    ``IS`` when no canonical revenue tag is reported (the top revenue line), ``BS`` when ``Liabilities``
    is not (items between liabilities and equity, for the derivation)."""
    entity = st.parent_entity(r.get("coreg") for r in rows)
    tags = {r["tag"] for r in rows if r.get("value") is not None and r.get("coreg") == entity}
    out = []
    if not tags & set(cc.BY_NAME["Revenues"].synonyms):
        out.append("IS")
    if "Liabilities" not in tags:
        out.append("BS")
    return out


def build_fact_map(
    filing: dict[str, Any],
    rows: Sequence[dict[str, Any]],
    statements: Mapping[str, Sequence[dict[str, Any]]] | None = None,
) -> FactMap:
    """Resolve one filing's candidate facts into its canonical fact map.

    Args:
        filing: the accession's fields (``adsh, cik, name, sic, form, period, ...``).
        rows: candidate facts of that accession (``key, citation, tag, value, ddate, qtrs,
            period_role, decimals, coreg``), current-period roles only; nil values are ignored.
        statements: the filing's own-period facts of its income statement (``IS``) and balance sheet
            (``BS``) with their presentation (``report, line, plabel``), where :func:`needs_statements`
            asked for them; None or missing: not read (companyfacts and XBRL instances have none).

    Returns:
        The :class:`FactMap`. Rules: the registrant's own facts (:func:`statements.parent_entity`; the
        other co-registrants are listed); synonyms in :mod:`retrieval.facts.concepts` order; flows take the
        form's own span (``period_role == 'current'``) as the headline fact, and, when there is
        none (a 10-Q's cash-flow statement), the longest year-to-date span; revenue from the income
        statement's top revenue line when no canonical tag is reported; Liabilities is derived when not
        reported, less the items between liabilities and equity; current assets/liabilities are not
        applicable for an unclassified balance sheet (banks, insurers, brokers) that reports neither.
    """
    fm = FactMap(filing=dict(filing))
    fm.entity = st.parent_entity(r.get("coreg") for r in rows)
    fm.coregistrants = sorted({r["coreg"] for r in rows if r.get("coreg") and r.get("coreg") != fm.entity})
    if fm.coregistrants:
        fm.filing.update(entity=fm.entity, coregistrants=fm.coregistrants)
    by_tag: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("value") is None or r.get("coreg") != fm.entity:
            continue
        fm.raw[r["key"]] = r
        by_tag.setdefault(r["tag"], []).append(r)
    statements = {
        k: [r for r in v if r.get("value") is not None and r.get("coreg") == fm.entity]
        for k, v in (statements or {}).items()
    }

    for concept in cc.CONCEPTS:
        present = [t for t in concept.synonyms if t in by_tag]
        if not present:
            continue
        if concept.duration:
            flow = _flow(concept.name, present, by_tag)
            if flow is None:
                continue
            headline, fm.spans[concept.name] = flow
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

    if "Revenues" not in fm.facts and statements.get("IS"):
        _revenue_from_income_statement(fm, statements["IS"])
    if "Liabilities" not in fm.facts:
        derived = derive_liabilities(fm.filing, by_tag, statements.get("BS"))
        if derived is not None:
            fm.facts["Liabilities"] = derived
            cited = set(derived.cited_keys)
            fm.raw.update({r["key"]: r for r in statements.get("BS", ()) if r["key"] in cited})
    if cc.unclassified_balance_sheet(fm.filing.get("sic")):
        for name in ("CurrentAssets", "CurrentLiabilities"):
            if name not in fm.facts:
                fm.not_applicable[name] = (
                    "the filer presents an unclassified balance sheet "
                    "(banks, insurers and brokers report no current assets "
                    "or liabilities)"
                )
    return fm


def _revenue_from_income_statement(fm: FactMap, lines: Sequence[dict[str, Any]]) -> None:
    """Revenue from the income statement's top revenue line (:func:`statements.top_revenue_line`) when no
    canonical revenue tag is reported; the tag chosen and why go into the fact's ``basis``."""
    found = st.top_revenue_line(lines)
    if found is None:
        return
    tag, why = found
    rows = [r for r in lines if r["tag"] == tag]
    flow = _flow("Revenues", [tag], {tag: rows})
    if flow is None:
        return
    headline, spans = flow
    basis = f"none of {', '.join(cc.BY_NAME['Revenues'].synonyms)} is reported; {tag} is {why}"
    fm.facts["Revenues"] = replace(headline, basis=basis)
    fm.spans["Revenues"] = {q: replace(f, basis=basis) for q, f in spans.items()}
    fm.raw.update({r["key"]: r for r in rows})


def derive_liabilities(
    filing: dict[str, Any],
    by_tag: dict[str, list[dict[str, Any]]],
    balance_sheet: Sequence[dict[str, Any]] | None = None,
) -> ResolvedFact | None:
    """Total liabilities when the filing does not report ``Liabilities``.

    Liabilities = LiabilitiesAndStockholdersEquity - total equity - each item between liabilities and
    equity, where total equity is ``StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest``
    when reported, else ``StockholdersEquity`` (+ ``MinorityInterest`` when reported). The items between
    liabilities and equity (temporary equity: redeemable noncontrolling interests, a subsidiary's preferred
    stock ...) are read from the balance sheet's presentation (``balance_sheet``: its facts at the period
    end with ``report, line, plabel``; :func:`statements.mezzanine_items`) and named in the ``basis``;
    without a presentation, ``TemporaryEquityCarryingAmount`` when reported. All at the period end.
    Returns None when LiabilitiesAndStockholdersEquity or equity is missing.
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
    used = {r["tag"] for _, r in parts}
    instants = [r for r in balance_sheet or () if not r["qtrs"]]
    items = st.mezzanine_items(instants, (cc.EQUITY_PARENT, cc.EQUITY_INCLUDING_NCI)) if instants else None
    basis = ""
    if items is None:
        temporary = instant(cc.TEMPORARY_EQUITY)
        if temporary is not None:
            parts.append((-1, temporary))
    else:
        items = [r for r in items if r["tag"] not in used]
        parts.extend((-1, r) for r in items)
        basis = "items between liabilities and equity on the balance sheet: " + (
            "; ".join(f"{r['tag']} {r.get('plabel')!r} (line {r['line']})" for r in items) if items else "none"
        )
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
        basis=basis,
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
        wanted = [
            {"adsh": a, "stmt": stmt, "coreg": st.parent_entity(x.get("coreg") for x in r["facts"])}
            for a, r in by_adsh.items()
            for stmt in needs_statements(r["facts"])
        ]
        statements: dict[str, dict[str, list[dict[str, Any]]]] = {}
        if wanted:
            for row in graph.read(cypher.FILING_STATEMENT_FACTS, {"rows": wanted}):
                statements.setdefault(row["adsh"], {})[row["stmt"]] = row["facts"]
        maps = []
        for adsh in batch:
            r = by_adsh.get(adsh)
            if r is not None:
                filing = {**r["filing"], **r["company"], **_amendments(r)}
                maps.append(build_fact_map(filing, r["facts"], statements.get(adsh)))
        flag_implausible(graph, maps)
        yield from maps


def read_quarter_fact_maps(graph: Graph, source: str) -> list[FactMap]:
    """The balance-sheet fact maps of every filing loaded from file ``source`` (e.g. ``2009q3.zip``, an FSDS
    quarter), in one read (:data:`kg.cypher.QUARTER_FACT_CANDIDATES`), by accession number: what a memo's
    peer picture compares. Built by :func:`build_fact_map` like :func:`read_fact_maps`' maps, with the balance
    sheet's presentation (so a derived ``Liabilities`` equals the memo's) but without the income statement's (a
    revenue found only from its top line is missing) and without plausibility flags. Empty for an unknown
    ``source``. Raises :class:`kg.GraphError` when Neo4j is unavailable."""
    maps = []
    for r in graph.read(cypher.QUARTER_FACT_CANDIDATES, {"source": source, "tags": cc.all_tags()}):
        filing = {**r["filing"], **r["company"], **_amendments(r)}
        maps.append(build_fact_map(filing, r["facts"], {"BS": r["balance_sheet"]} if r["balance_sheet"] else None))
    return maps


def _amendments(record: dict[str, Any]) -> dict[str, Any]:
    """``supersedes`` (the earlier filings of the same company, period and form family that this one
    amends), ``superseded_by`` (the latest such filing when this one was amended; None when it is the latest)
    and ``amended_later`` (sub.txt ``prevrpt``: amended by a filing that may not be in the graph)."""
    this = {**record["filing"], "cik": record["company"]["cik"]}
    group = [{**f, "cik": this["cik"]} for f in record.get("same_period") or []]
    latest = st.latest_amendments([this, *group])
    newest = latest.get(this["adsh"])
    return {
        "supersedes": sorted(a for a, b in latest.items() if b == this["adsh"]),
        "superseded_by": newest,
        "amended_later": bool(this.get("prevrpt")),
    }


SIGNED_FLOWS = ("NetIncomeLoss", "OperatingIncomeLoss", "OperatingCashFlow")
"""Concepts whose value crosses zero: a near-zero period is no scale error (:func:`statements.implausible`)."""


def flag_implausible(graph: Graph, maps: Sequence[FactMap]) -> None:
    """Set the ``flag`` of each reported (not derived) fact of ``maps`` whose value is more than two orders
    of magnitude from the same filer's same tag and span at its other period ends
    (:func:`statements.implausible`); one read for all ``maps``."""
    rows = [
        {
            "adsh": fm.adsh,
            "cik": fm.filing.get("cik"),
            "coreg": fm.entity,
            "tags": sorted({f.tag for f in fm.facts.values() if not f.derived}),
        }
        for fm in maps
    ]
    if not rows:
        return
    history = {r["adsh"]: r["facts"] for r in graph.read(cypher.FILER_TAG_VALUES, {"rows": rows})}
    for fm in maps:
        seen = history.get(fm.adsh) or []
        for name, f in list(fm.facts.items()):
            if f.derived:
                continue
            others = {
                x["ddate"]: float(x["value"])
                for x in seen
                if x["tag"] == f.tag and x["ddate"] != f.ddate and int(x["qtrs"] or 0) == f.qtrs
            }
            why = st.implausible(f.value, list(others.values()), signed=name in SIGNED_FLOWS)
            if why:
                fm.facts[name] = replace(f, flag=why)
                if name in fm.spans and f.qtrs in fm.spans[name]:
                    fm.spans[name][f.qtrs] = fm.facts[name]


def filing_sources(graph: Graph) -> list[str]:
    """The file names filings of the graph were loaded from (``Filing.source``), sorted."""
    return [r["source"] for r in graph.read(cypher.FILING_SOURCES)]


def list_filings(graph: Graph, adshs: Sequence[str] | None = None, source: str | None = None) -> list[dict[str, Any]]:
    """Accession, form, period, company and SIC of the filings in the graph (all, or ``adshs``;
    only those loaded from the file named ``source``, e.g. ``2009q3.zip``), by accession number."""
    return graph.read(cypher.LIST_FILINGS, {"adshs": list(adshs) if adshs else None, "source": source})


def resolve_amendments(graph: Graph, adshs: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """``adshs`` with each filing replaced by the latest amendment in the graph of the same company, period
    and form family (:func:`statements.latest_amendments`), duplicates dropped, order kept; and the
    replacements made (superseded accession -> its latest amendment). The superseded filings' facts stay
    in the graph as history."""
    latest = st.latest_amendments(list_filings(graph))
    out: list[str] = []
    seen: set[str] = set()
    for a in adshs:
        b = latest.get(a, a)
        if b not in seen:
            seen.add(b)
            out.append(b)
    return out, {a: latest[a] for a in adshs if a in latest}
