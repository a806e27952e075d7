"""Financial facts: the sentences F that the two-stage generator selects from (seed 004, sections 2 and 3.3).

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, section 2 ("financial facts F": "the values and changes
of financial indicators", from AKShare) and section 3.3 (stage 1 selects F_select from F). A fact is one
sentence with an id, the numbers it states (what the verifier checks a report's numbers against) and the
graph nodes it comes from (what a report's citation resolves to in Neo4j Browser).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from kg import Graph, cypher
from retrieval.contract import AsOf, as_of_cutoff


@dataclass(frozen=True)
class FinancialFact:
    """One financial fact, as shown to the LLM and as cited by a report.

    Attributes:
        id: deterministic and unique within a question's F, e.g.
            ``akshare:cn_treasury_10y:2015-06-30:level`` or an XBRL fact key ``adsh:cik:tag:ddate:uom``.
        text: the sentence, e.g. ``"China treasury yield, 10-year: 3.62 % on 2015-06-30."``.
        numbers: every number the sentence states, in the units the sentence states them (a report
            number is verified when it matches one of a cited fact's numbers).
        unit: the unit of the main value (``%``, ``pp``, ``CNY 100 million``, ``index``, ``USD``).
        date: ISO date of the observation (the period end for monthly series).
        indicator: the Indicator code or XBRL concept (tag).
        source: where the value comes from, e.g. ``akshare:bond_china_yield`` or ``sec:2009q3.zip``.
        cites: ``(label, key property, key)`` of each graph node behind the fact, e.g.
            ``(("Observation", "id", "cn_treasury_10y:2015-06-30"),)``; a report links to them.
    """

    id: str
    text: str
    numbers: tuple[float, ...]
    unit: str
    date: str
    indicator: str
    source: str
    cites: tuple[tuple[str, str, str], ...] = ()


# --------------------------------------------------------------------------- AKShare indicator facts

FACT_KINDS = ("level", "change_prev", "change_3m", "change_6m", "change_12m")
"""The facts rendered per indicator, in order: its value, and its change against the previous observation
and against the observation three, six and twelve months earlier."""

LOOKBACK_MONTHS = (3, 6, 12)
MAX_GAP_DAYS = 14
"""A daily series' observation "N months earlier" is the last one on or before that day, but no more than
this many days before it (two weeks covers the longest Chinese market holidays); none, no fact."""

MARKET_RATE_CATEGORIES = frozenset({"yield", "interest_rate"})
"""Indicator categories whose changes are also stated in basis points."""

_MONTH_WORDS = {3: "three", 6: "six", 12: "twelve"}  # words, so the sentence's numbers are only its values
_UNIT_WORDS = {"CNY 100 million": " hundred million yuan", "index": " points"}


@dataclass(frozen=True)
class _Number:
    """A number as the sentence writes it (``text``) and as :attr:`FinancialFact.numbers` lists it."""

    text: str

    @property
    def value(self) -> float:
        return float(self.text.replace(",", "").rstrip("%"))


def _fmt(x: float, decimals: int = 2, grouped: bool = False) -> _Number:
    text = f"{x:,.{decimals}f}" if grouped else f"{x:.{decimals}f}"
    if text.lstrip("-").replace(",", "").replace(".", "").strip("0") == "":
        text = text.lstrip("-")  # no "-0.00"
    return _Number(text)


def _value(x: float, unit: str) -> tuple[str, list[_Number]]:
    """``x`` in ``unit`` as the sentence writes it: ``3.60%``, ``1,307,357.63 hundred million yuan``,
    ``101.20 points``."""
    n = _fmt(x, grouped=unit == "CNY 100 million")
    return (f"{n.text}%" if unit == "%" else n.text + _UNIT_WORDS.get(unit, f" {unit}")), [n]


def _change(now: float, then: float, unit: str, category: str) -> tuple[str, list[_Number], str]:
    """The change from ``then`` to ``now`` as a phrase, its numbers and the change's unit.

    Rates (unit ``%``) change in percentage points (and basis points for yields and interest rates);
    levels (money supply, indices) in their unit and in percent of ``then``.
    """
    delta = now - then
    if unit == "%":
        pp = _fmt(abs(delta))
        numbers = [pp]
        text = f"{pp.text} percentage points"
        if category in MARKET_RATE_CATEGORIES:
            bp = _fmt(abs(delta) * 100, decimals=1)
            numbers.append(bp)
            text += f" ({bp.text} bp)"
        change_unit = "pp"
    else:
        amount, numbers = _value(abs(delta), unit)
        text = amount
        if then != 0:
            pct = _fmt(abs(delta) / abs(then) * 100)
            numbers.append(pct)
            text += f" ({pct.text}%)"
        change_unit = unit
    if all(n.value == 0 for n in numbers):
        return f"unchanged ({text})", numbers, change_unit
    return f"{'an increase' if delta > 0 else 'a decrease'} of {text}", numbers, change_unit


def _iso(d: object) -> str:
    """``YYYY-MM-DD`` of a neo4j Date (``iso_format``) or of anything whose str is that."""
    iso_format = getattr(d, "iso_format", None)
    return str(iso_format()) if callable(iso_format) else str(d)


def _when(day: str, frequency: str) -> str:
    return f"in the month ending {day}" if frequency == "monthly" else f"on {day}"


def indicator_facts(
    graph: Graph, as_of: AsOf | None, codes: Sequence[str] | None = None, max_age_days: int | None = None
) -> list[FinancialFact]:
    """The financial facts F of a question asked on ``as_of``: each indicator's value and changes.

    Source: seed 004 (../shared/seeds/004_7a67e4eaf6285e0b.txt), section 2 (F holds "the values and changes
    of financial indicators", from AKShare, for the report's date) and section 3.3 (stage 1 selects
    F_select from F); the sentences follow the paper's examples ("the year-on-year growth rate of M2 was
    8.8%, an increase of 0.4 percentage points from the previous month").

    Point in time: for each indicator only observations with ``available_at`` on or before the end of
    ``as_of`` (23:59:59 UTC) count, so a monthly figure is no fact before its publication convention
    (:mod:`ingest.market.akshare`). The latest such observation gives up to five facts (:data:`FACT_KINDS`):

    - ``level``: ``"China M2 money supply, year-on-year growth: 10.80% in the month ending 2015-05-31."``
    - ``change_prev``: against the previous observation, naming its date and value;
    - ``change_3m`` / ``change_6m`` / ``change_12m``: against the observation three, six or twelve months
      earlier (monthly series: the same calendar month; daily series: the last observation on or before
      that day, at most :data:`MAX_GAP_DAYS` before it); a missing one gives no fact.

    Rates (unit ``%``) change in percentage points, yields and interest rates also in basis points;
    money supply and indices change in their unit and in percent. Every number is written with two
    decimals (basis points with one); dates are ISO dates and other counts are words, so
    :attr:`FinancialFact.numbers` lists exactly the numbers a reader sees (changes as magnitudes, the
    direction in words).

    Args:
        graph: the connection.
        as_of: the question's date (a UTC calendar day: its end counts) or time (:mod:`retrieval.contract`).
        codes: Indicator codes (default: every indicator in the graph).
        max_age_days: leave out an indicator whose latest available observation is dated more than this
            many days before ``as_of`` (default: no limit; the sentences always state the date). The
            shipped yield curve ends in 2016 and SHIBOR has a gap from 2015-05-08 to 2017-03-17, so a
            limit keeps stale series out of F.

    Returns:
        Facts ordered by indicator code, then kind; ids ``akshare:<code>:<date of the latest
        observation>:<kind>``; ``cites`` the Observation ids used. Indicators with no observation
        available by ``as_of`` (or unknown codes) give none.

    Raises:
        AsOfRequired: ``as_of`` is None.
    """
    return [f for f, _ in dated_indicator_facts(graph, as_of, codes, max_age_days)]


def dated_indicator_facts(
    graph: Graph, as_of: AsOf | None, codes: Sequence[str] | None = None, max_age_days: int | None = None
) -> list[tuple[FinancialFact, str | None]]:
    """:func:`indicator_facts`, each with its latest observation's publication time (``available_at``).

    Raises:
        AsOfRequired: ``as_of`` is None.
    """
    cutoff = as_of_cutoff(as_of)
    day = date.fromisoformat(cutoff[:10])
    rows = graph.read(
        cypher.INDICATOR_FACT_ROWS,
        {
            "codes": list(codes) if codes is not None else None,
            "cutoff": cutoff,
            "months": list(LOOKBACK_MONTHS),
            "max_gap_days": MAX_GAP_DAYS,
            "oldest": (day - timedelta(days=max_age_days)).isoformat() if max_age_days is not None else None,
        },
    )
    facts: list[tuple[FinancialFact, str | None]] = []
    for row in rows:
        ind, latest = row["indicator"], row["latest"]
        code, unit, freq = ind["code"], ind["unit"], ind["frequency"]
        day, value = _iso(latest["date"]), float(latest["value"])
        source = f"akshare:{ind['source_function']}"
        shown, numbers = _value(value, unit)
        head = f"{ind['name']}: {shown} {_when(day, freq)}"

        def fact(
            kind: str,
            text: str,
            nums: list[_Number],
            fact_unit: str,
            cited: list[str],
            code: str = code,
            day: str = day,
            source: str = source,
        ) -> FinancialFact:
            return FinancialFact(
                id=f"akshare:{code}:{day}:{kind}",
                text=text,
                numbers=tuple(n.value for n in nums),
                unit=fact_unit,
                date=day,
                indicator=code,
                source=source,
                cites=tuple(("Observation", "id", c) for c in cited),
            )

        published = latest.get("available_at")
        facts.append((fact("level", head + ".", numbers, unit, [latest["id"]]), published))
        earlier = [("change_prev", row["previous"])]
        by_months = {b["months"]: b for b in row["lookbacks"]}
        earlier += [(f"change_{m}m", by_months.get(m)) for m in LOOKBACK_MONTHS]
        for kind, then in earlier:
            if then is None:
                continue
            then_value = float(then["value"])
            phrase, change_numbers, change_unit = _change(value, then_value, unit, ind["category"])
            then_shown, then_numbers = _value(then_value, unit)
            then_when = _when(_iso(then["date"]), freq)
            if kind == "change_prev":
                previous = "the previous month" if freq == "monthly" else "the previous observation"
                text = f"{head}, {phrase} from {then_shown} {then_when} ({previous})."
            else:
                span = _MONTH_WORDS[int(then["months"])]
                text = f"{head}, {phrase} over {span} months, from {then_shown} {then_when}."
            facts.append(
                (
                    fact(kind, text, numbers + change_numbers + then_numbers, change_unit, [latest["id"], then["id"]]),
                    published,
                )
            )
    return facts
