"""A fact's history across filings: as first reported, as known on a date, latest (restated), and derived series.

The same value (company, concept, period end, duration) is reported again by later filings: a 10-Q repeats
last year's quarter as its comparative, a 10-K its three fiscal years, an amendment corrects a figure. Each
filing's fact is its own ``(:Fact)`` node (its key holds the accession number), so the graph keeps them all.
:func:`read_history` groups them by period; a :class:`PeriodHistory` answers "what was known then"
(:meth:`PeriodHistory.known_at`: the latest report filed on or before a date, point in time like every read
that serves an answer) and "latest" (the restated value), and lists restatements.

Derived series (each value keeps its formula and the fact keys it used, so it is verifiable like a
reported one):

- **quarterly** values from year-to-date flows: a 3-month fact as reported; otherwise ``Q = YTD(n) - YTD(n-1)``
  (the fiscal year's n-quarter figure minus its (n-1)-quarter figure ending about three months earlier),
  so Q4 = FY - 9M;
- **TTM** (trailing twelve months): the sum of four consecutive quarters;
- **YoY growth**: a quarter against the same quarter a year earlier, ``q / q(-4) - 1``.

Which report of a period a derived series uses is its ``basis``: ``latest``, ``first`` (as first reported)
or an ``as_of`` time (what was known then).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from itertools import pairwise

from kg import Graph, batches, cypher
from kg.errors import RetrievalError
from retrieval.contract import AsOf, as_of_cutoff
from retrieval.facts.concepts import BY_NAME

#: Two values differ (a restatement) when they differ by more than this fraction of the larger (0.05 %), or
#: by more than 0.5 in the unit, whichever is larger: rounding to thousands is not a restatement.
RESTATEMENT_TOLERANCE = 0.0005

#: How far from "about three months" / "about a year" consecutive period ends may be (fiscal calendars end
#: on the last Saturday, on 52/53-week years, on month ends).
END_SLACK_DAYS = 20


@dataclass(frozen=True)
class Report:
    """One filing's report of a period: ``adsh`` (accession number), ``form``, ``filed`` (ISO date),
    ``value`` (in ``uom`` units), the fact ``key`` and the ``tag`` it was reported under."""

    adsh: str
    form: str
    filed: str
    value: float
    key: str
    tag: str


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= max(0.5, RESTATEMENT_TOLERANCE * max(abs(a), abs(b)))


@dataclass
class PeriodHistory:
    """Every report of one period: ``end`` (ISO date), ``qtrs`` (0 an instant, 1 a quarter, 4 a year...),
    ``uom`` and ``reports`` in filing order (earliest first; ties by accession number)."""

    end: str
    qtrs: int
    uom: str
    reports: list[Report] = field(default_factory=list)

    @property
    def first(self) -> Report:
        """The report as first filed."""
        return self.reports[0]

    @property
    def latest(self) -> Report:
        """The latest report (the restated value when it was restated)."""
        return self.reports[-1]

    @property
    def restatements(self) -> list[Report]:
        """The reports whose value differs from the report before them."""
        return [b for a, b in pairwise(self.reports) if not _same(a.value, b.value)]

    def known_at(self, as_of: AsOf | None) -> Report | None:
        """The latest report filed on or before ``as_of`` (a filing counts from the end of its filing day);
        None when none was filed yet.

        Raises:
            AsOfRequired: ``as_of`` is None.
        """
        cutoff = as_of_cutoff(as_of)
        known = [r for r in self.reports if f"{r.filed}T23:59:59Z" <= cutoff]
        return known[-1] if known else None

    def pick(self, basis: str | AsOf) -> Report | None:
        """The report a derived series uses: ``"latest"``, ``"first"`` or the one known at an as-of time."""
        if basis == "latest":
            return self.latest
        if basis == "first":
            return self.first
        return self.known_at(basis)


def _iso(yyyymmdd: object) -> str:
    text = str(yyyymmdd)
    return f"{text[:4]}-{text[4:6]}-{text[6:8]}" if len(text) == 8 and text.isdigit() else text[:10]


def tags_of(concept: str) -> list[str]:
    """The us-gaap tags of a canonical concept (``Revenues``: its synonyms in priority order), else the
    concept itself as a tag."""
    c = BY_NAME.get(concept)
    return list(c.synonyms) if c else [concept]


def histories(rows: Iterable[dict], tags: Sequence[str]) -> list[PeriodHistory]:
    """Group fact rows (``key, tag, ddate, qtrs, uom, value, adsh, form, filed``) by period. A filing that
    reports the period under several of ``tags`` counts once, under the highest-priority one."""
    rank = {t: i for i, t in enumerate(tags)}
    best: dict[tuple[str, int, str, str], dict] = {}
    for r in rows:
        if r["value"] is None:
            continue
        k = (_iso(r["ddate"]), int(r["qtrs"]), str(r["uom"]), str(r["adsh"]))
        if k not in best or rank.get(r["tag"], len(rank)) < rank.get(best[k]["tag"], len(rank)):
            best[k] = r
    periods: dict[tuple[str, int, str], PeriodHistory] = {}
    for (end, qtrs, uom, _), r in best.items():
        p = periods.setdefault((end, qtrs, uom), PeriodHistory(end, qtrs, uom))
        p.reports.append(
            Report(str(r["adsh"]), str(r["form"] or ""), _iso(r["filed"]), float(r["value"]), str(r["key"]), r["tag"])
        )
    for p in periods.values():
        p.reports.sort(key=lambda x: (x.filed, x.adsh))
    return sorted(periods.values(), key=lambda p: (p.end, p.qtrs, p.uom))


def read_history(graph: Graph, cik: int, concept: str, uom: str | None = "USD") -> list[PeriodHistory]:
    """The history of ``concept`` (a canonical concept or a us-gaap tag) for company ``cik``.

    Raises:
        RetrievalError: the company reported no fact of ``concept`` (the message names the tags searched).
    """
    tags = tags_of(concept)
    rows = graph.read(cypher.FACT_HISTORY, {"cik": cik, "tags": tags, "uom": uom})
    if not rows:
        raise RetrievalError(f"CIK {cik} reported no fact of {concept} (tags searched: {', '.join(tags)}; uom {uom})")
    return histories(rows, tags)


@dataclass(frozen=True)
class ConflictRecord:
    """A value another source file gave a fact of the history, recorded beside it (:mod:`ingest.sec.conflicts`):
    the fact ``key``, the ``value`` it holds and the file it holds it from (``source``), the other file's value
    (``other_value``, in the fact's unit; None: that file gave none) and name (``other_file``), the
    ``resolution`` (``kept``: the fact kept its value; ``replaced``: ``against`` replaced ``other_file``'s value),
    ``against`` (the file that won) and ``recorded_at`` (ISO time the record was first made)."""

    key: str
    value: float | None
    source: str | None
    other_value: float | None
    other_file: str
    resolution: str
    against: str | None
    recorded_at: str


def read_conflicts(
    graph: Graph, periods: Sequence[PeriodHistory], batch_size: int = 5_000
) -> dict[str, list[ConflictRecord]]:
    """The conflict records of the facts ``periods`` report, by fact key (keys without a record are absent): one
    read per ``batch_size`` keys on the fact key's index."""
    keys = [r.key for p in periods for r in p.reports]
    out: dict[str, list[ConflictRecord]] = {}
    for chunk in batches(keys, batch_size):
        for r in graph.read(cypher.FACT_CONFLICTS, {"keys": chunk}):
            record = ConflictRecord(
                str(r["key"]),
                r["value"],
                r["source"],
                r["other_value"],
                str(r["other_file"]),
                str(r["resolution"]),
                r["against"],
                str(r["recorded_at"] or ""),
            )
            out.setdefault(record.key, []).append(record)
    return out


def find_company(graph: Graph, name: str) -> tuple[int, str]:
    """The one company ``name`` names (a CIK, a ticker or a part of its name): ``(cik, name)``.

    Raises:
        RetrievalError: no company, or several (the message lists them).
    """
    cik = int(name) if name.strip().isdigit() else None
    rows = graph.read(cypher.COMPANY_MATCHES, {"cik": cik, "name": name.strip()})
    if not rows:
        raise RetrievalError(f"no company matches {name!r} (give a CIK, a ticker or part of the name)")
    exact = [r for r in rows if r["cik"] == cik or str(r["name"]).lower() == name.strip().lower()]
    if len(rows) > 1 and len(exact) != 1:
        listed = "; ".join(f"{r['name']} (CIK {r['cik']})" for r in rows)
        raise RetrievalError(f"{name!r} matches several companies: {listed}; give the CIK")
    r = exact[0] if exact else rows[0]
    return int(r["cik"]), str(r["name"])


@dataclass(frozen=True)
class Derived:
    """A derived value: the period ``end`` (ISO date), ``value``, the ``formula`` in words with the values
    used, and the ``keys`` of the facts it was computed from."""

    end: str
    value: float
    formula: str
    keys: tuple[str, ...]


def _near(a: str, b: str, days: int) -> bool:
    """Whether ISO date ``a`` is about ``days`` before ``b``."""
    gap = (date.fromisoformat(b) - date.fromisoformat(a)).days
    return abs(gap - days) <= END_SLACK_DAYS


def quarterly(periods: Sequence[PeriodHistory], basis: str | AsOf = "latest") -> list[Derived]:
    """Quarterly values of a flow concept: 3-month reports as they are, the others as the difference of two
    year-to-date reports (``YTD(n) - YTD(n-1)``, the shorter one ending about 91 days earlier). Quarters
    with a reported 3-month value are not derived again. Ordered by end date."""
    picked = {(p.end, p.qtrs): r for p in periods if p.qtrs >= 1 and (r := p.pick(basis)) is not None}
    out: dict[str, Derived] = {}
    for (end, qtrs), r in sorted(picked.items()):
        if qtrs == 1:
            out[end] = Derived(end, r.value, f"reported 3 months ({r.value:,.0f})", (r.key,))
    for (end, qtrs), r in sorted(picked.items()):
        if qtrs < 2 or end in out:
            continue
        shorter = [
            (e, s) for (e, q), s in picked.items() if q == qtrs - 1 and _near(e, end, 91)
        ]  # the same fiscal year's (n-1)-quarter figure
        if len(shorter) == 1:
            e, s = shorter[0]
            out[end] = Derived(
                end,
                r.value - s.value,
                f"{qtrs}-quarter YTD to {end} ({r.value:,.0f}) - {qtrs - 1}-quarter YTD to {e} ({s.value:,.0f})",
                (r.key, s.key),
            )
    return [out[e] for e in sorted(out)]


def ttm(quarters: Sequence[Derived]) -> list[Derived]:
    """Trailing twelve months: each quarter plus the three before it, when all four are consecutive."""
    out = []
    for i in range(3, len(quarters)):
        four = quarters[i - 3 : i + 1]
        if all(_near(a.end, b.end, 91) for a, b in pairwise(four)):
            value = sum(q.value for q in four)
            formula = " + ".join(f"Q to {q.end} ({q.value:,.0f})" for q in four)
            out.append(Derived(four[-1].end, value, formula, tuple(k for q in four for k in q.keys)))
    return out


def yoy(series: Sequence[Derived]) -> list[Derived]:
    """Year-over-year growth (a fraction: 0.25 = +25 %) of each value against the one about a year earlier;
    a zero or missing base gives none."""
    out = []
    for cur in series:
        base = [b for b in series if _near(b.end, cur.end, 365)]
        if len(base) == 1 and base[0].value != 0:
            b = base[0]
            out.append(
                Derived(cur.end, cur.value / b.value - 1.0, f"{cur.value:,.0f} / {b.value:,.0f} - 1", cur.keys + b.keys)
            )
    return out
