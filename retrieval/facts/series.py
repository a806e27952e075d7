"""An indicator's observations over a window, as known at a time (the series a report's chart draws).

Point in time like every read on the report path (:mod:`retrieval.contract`): only observations available
at ``as_of`` count, so a chart in a report dated 2015-06-30 never shows a figure published later.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta

from kg import Graph, cypher
from retrieval.contract import AsOf, as_of_cutoff


@dataclass(frozen=True)
class IndicatorSeries:
    """An Indicator's observations: ``code``, ``name``, ``unit``, ``frequency`` and ``points`` as
    ``(ISO date, value)`` in date order (values in ``unit``)."""

    code: str
    name: str
    unit: str
    frequency: str
    points: list[tuple[str, float]] = field(default_factory=list)


def indicator_series(graph: Graph, code: str, *, as_of: AsOf | None, start: date) -> IndicatorSeries | None:
    """The observations of Indicator ``code`` dated from ``start`` and available at ``as_of``; None when
    there is none (an unknown code, or nothing public yet).

    Raises:
        AsOfRequired: ``as_of`` is None. RetrievalError: a malformed ``as_of``.
    """
    rows = graph.read(
        cypher.INDICATOR_SERIES, {"code": code, "cutoff": as_of_cutoff(as_of), "start": start.isoformat()}
    )
    if not rows:
        return None
    first = rows[0]
    points = [(_iso(r["date"]), float(r["value"])) for r in rows if r["value"] is not None]
    return IndicatorSeries(code, first["name"] or code, first["unit"] or "", first["frequency"] or "", points)


def window_start(as_of: date, years: int = 3) -> date:
    """The first day a chart of ``years`` years up to ``as_of`` shows."""
    return as_of - timedelta(days=365 * years)


def _iso(d: object) -> str:
    iso_format = getattr(d, "iso_format", None)
    return str(iso_format()) if callable(iso_format) else str(d)
