"""AKShare indicator series: five AKShare functions read from saved CSVs or fetched live.

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, section 2: the financial facts F of a question are
"the values and changes of financial indicators", selected "from the financial indicator database
AKshare" for the bond market of the report's date. Five functions give them:

- ``bond_china_yield``: daily (日期, ``YYYY-MM-DD``); the yields of each ChinaBond curve (曲线名称) at
  3M, 6M, 1Y, 3Y, 5Y, 7Y, 10Y and 30Y, in %.
- ``macro_china_money_supply``: monthly (月份, ``2025年09月份``); M2, M1 and M0 in 亿元 (CNY 100 million),
  and their year-on-year and month-on-month growth in %.
- ``macro_china_cpi``: monthly; CPI national, urban and rural: index, year-on-year and month-on-month
  change in %, year-to-date index.
- ``macro_china_ppi``: monthly; PPI index, year-on-year change in %, year-to-date index.
- ``macro_china_shibor_all``: daily; SHIBOR fixings O/N, 1W, 2W, 1M, 3M, 6M, 9M and 1Y, in %.

One indicator per column that carries a level or a rate (:data:`FUNCTIONS` lists them with their codes).
Indices are AKShare's (same period of the previous year as the base). SHIBOR's ``*-涨跌幅`` columns
(the day change in bp, derived from the fixings) are read past, not stored: the facts compute changes
from the fixings themselves.

Two sources, one parser. A CSV that AKShare wrote (``df.to_csv(...)``; a UTF-8 BOM and a leading
unnamed index column are accepted) is checked against the function's columns (the error names the
file and the missing and unexpected columns); a live call (:func:`fetch_live`) serializes the returned
frame to the same CSV text, so both paths parse, validate and cite alike. Empty cells (``""``,
``-``, ``--``, ``nan``, ``None``) are skipped and counted; any other cell that is not a finite number,
and a date that is not one, is an :class:`AkshareFormatError` naming file, line and column.

Point in time. Each observation carries ``available_at``, the first moment it was public (ISO UTC,
``YYYY-MM-DDTHH:MM:SSZ``), by the conventions below (:data:`DAILY_CURVE`, :data:`DAILY_FIXING`,
:data:`MONTHLY`), all flagged ``available_at_approx`` because no source file records a release time:

- ``bond_china_yield``: the day's curve, at 18:00 Beijing time (10:00 UTC): ChinaBond publishes the
  closing curves in the evening of the trading day.
- ``macro_china_shibor_all``: the day's fixing at 11:30 Beijing (03:30 UTC): the fixing is published
  at 11:00 (11:30 before 2015), so 11:30 is never early.
- monthly statistics (money supply, CPI, PPI): the period end plus :data:`MONTHLY_LAG_DAYS` (20) days,
  at 12:00 UTC (20:00 Beijing). NBS publishes CPI and PPI on about the 9th-19th of the next month
  (mid-month in 2006-2010, the 9th-10th since), the PBOC its monetary statistics on about the
  10th-17th; 20 days is later than the release of nearly every month, so a backtest does not see a
  number before it was out, at the cost of up to ten days of staleness.

Graph rows (written by :mod:`finkg.pipelines.indicators`)::

    (:Indicator {code, name, name_zh, unit, frequency, category, source_function, source_column})
      -[:HAS_OBSERVATION]->
    (:Observation {id: "<code>:<YYYY-MM-DD>", indicator, date, value, available_at, available_at_approx,
                   availability_basis, source_function, source_file, source_line, source_column})

``date`` is the observation day (a Neo4j date), the period end for monthly series; ``value`` a float in
the indicator's ``unit`` (``%``, ``CNY 100 million`` or ``index``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import re
import socket
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any, Literal

from kg.errors import IngestError
from retrieval.text.point_in_time import ISO_UTC

MONTHLY_LAG_DAYS = 20
"""Days after a month's end at which its money supply, CPI and PPI figures count as public."""

EMPTY = frozenset({"", "-", "--", "nan", "NaN", "NAN", "None", "null", "NULL"})
"""Cells that mean "no value" (AKShare writes NaN as an empty cell; its sources use ``-`` and ``--``)."""

MONTH = re.compile(r"^(\d{4})年(\d{1,2})月份?$")
DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[ T]00:00:00)?$")
BOND_WINDOW_DAYS = 360
"""``bond_china_yield`` answers at most a year per call (its docstring); live fetches go in windows of this many days."""


class AkshareFormatError(IngestError):
    """A saved AKShare CSV (or a live frame) cannot be read: the message names the file and, where one
    applies, the line and column (``path:line: column X: what is wrong``)."""


class AkshareUnavailable(IngestError):
    """A live AKShare call failed after its retries (no network, the source changed or refused); the
    one-line message names the function and how to load a saved CSV instead."""


@dataclass(frozen=True)
class Indicator:
    """One indicator series: one column of an AKShare function's output (one curve's column for
    ``bond_china_yield``).

    Attributes:
        code: English snake-case key, e.g. ``cn_treasury_yield_10y``, ``cn_m2_yoy``, ``shibor_on``.
        name: English name used in fact sentences (no digits outside hyphenated tenors, so that a
            sentence's numbers are only its values).
        name_zh: the source's own (Chinese) column name, with the curve name where there is one.
        unit: ``%`` (yields, rates, growth), ``CNY 100 million`` (亿元) or ``index`` (points).
        frequency: ``daily`` or ``monthly``.
        category: ``yield``, ``interest_rate``, ``growth_rate``, ``money_supply`` or ``price_index``.
        column: the source column.
        curve: for ``bond_china_yield``, the 曲线名称 value the row must have.
    """

    code: str
    name: str
    name_zh: str
    unit: str
    frequency: Literal["daily", "monthly"]
    category: str
    column: str
    curve: str | None = None

    def row(self, function: str) -> dict[str, Any]:
        """The ``(:Indicator)`` node properties."""
        return {
            "code": self.code,
            "name": self.name,
            "name_zh": self.name_zh,
            "unit": self.unit,
            "frequency": self.frequency,
            "category": self.category,
            "source_function": function,
            "source_column": self.column,
        }


@dataclass(frozen=True)
class Availability:
    """When an observation dated ``d`` becomes public: ``d + lag_days`` at ``time_utc`` (see the module
    docstring), flagged ``approx``, with ``basis`` naming the convention."""

    lag_days: int
    time_utc: time
    basis: str
    approx: bool = True

    def at(self, d: date) -> str:
        """ISO UTC availability time of the observation dated ``d``."""
        moment = datetime.combine(d + timedelta(days=self.lag_days), self.time_utc, tzinfo=UTC)
        return moment.strftime(ISO_UTC)


@dataclass(frozen=True)
class AkshareFunction:
    """An AKShare function's output layout: its columns in order, the date column and its format
    (``day``: ``YYYY-MM-DD``; ``month``: ``2025年09月份``, dated at the month's end), the
    indicators, the curve column (``bond_china_yield``) and the availability convention."""

    name: str
    description: str
    columns: tuple[str, ...]
    date_column: str
    period: Literal["day", "month"]
    indicators: tuple[Indicator, ...]
    availability: Availability
    curve_column: str | None = None


# --------------------------------------------------------------------------- the five functions

BOND_CURVES: dict[str, tuple[str, str]] = {
    "中债国债收益率曲线": ("cn_treasury_yield", "China treasury bond yield (ChinaBond curve)"),
    "中债中短期票据收益率曲线(AAA)": ("cn_mtn_aaa_yield", "China AAA medium-term note yield (ChinaBond curve)"),
    "中债商业银行普通债收益率曲线(AAA)": (
        "cn_bank_bond_aaa_yield",
        "China AAA commercial bank bond yield (ChinaBond curve)",
    ),
}
"""The curves ``bond_china_yield`` returns (曲线名称) and their code prefixes; rows of another curve are
skipped and counted."""

BOND_TENORS = (
    ("3月", "3m", "3-month"),
    ("6月", "6m", "6-month"),
    ("1年", "1y", "1-year"),
    ("3年", "3y", "3-year"),
    ("5年", "5y", "5-year"),
    ("7年", "7y", "7-year"),
    ("10年", "10y", "10-year"),
    ("30年", "30y", "30-year"),
)

SHIBOR_TENORS = (
    ("O/N", "on", "overnight"),
    ("1W", "1w", "1-week"),
    ("2W", "2w", "2-week"),
    ("1M", "1m", "1-month"),
    ("3M", "3m", "3-month"),
    ("6M", "6m", "6-month"),
    ("9M", "9m", "9-month"),
    ("1Y", "1y", "1-year"),
)

DAILY_CURVE = Availability(0, time(10, 0), "chinabond-evening-release-convention")
DAILY_FIXING = Availability(0, time(3, 30), "shibor-fixing-time-convention")
MONTHLY = Availability(MONTHLY_LAG_DAYS, time(12, 0), f"month-end-plus-{MONTHLY_LAG_DAYS}-days-convention")


def _bond() -> AkshareFunction:
    inds = tuple(
        Indicator(f"{prefix}_{code}", f"{name}, {label}", f"{curve} {col}", "%", "daily", "yield", col, curve)
        for curve, (prefix, name) in BOND_CURVES.items()
        for col, code, label in BOND_TENORS
    )
    return AkshareFunction(
        "bond_china_yield",
        "ChinaBond yield curves, daily (中国债券信息网)",
        ("日期", "曲线名称", *(c for c, _, _ in BOND_TENORS)),
        "日期",
        "day",
        inds,
        DAILY_CURVE,
        curve_column="曲线名称",
    )


def _money_supply() -> AkshareFunction:
    aggregates = (
        ("货币和准货币(M2)", "cn_m2", "China M2 money supply"),
        ("货币(M1)", "cn_m1", "China M1 money supply"),
        ("流通中的现金(M0)", "cn_m0", "China M0 currency in circulation"),
    )
    cols, inds = ["月份"], []
    for zh, code, name in aggregates:
        amount, yoy, mom = f"{zh}-数量(亿元)", f"{zh}-同比增长", f"{zh}-环比增长"
        cols += [amount, yoy, mom]
        inds += [
            Indicator(code, name, amount, "CNY 100 million", "monthly", "money_supply", amount),
            Indicator(f"{code}_yoy", f"{name}, year-on-year growth", yoy, "%", "monthly", "growth_rate", yoy),
            Indicator(f"{code}_mom", f"{name}, month-on-month growth", mom, "%", "monthly", "growth_rate", mom),
        ]
    return AkshareFunction(
        "macro_china_money_supply",
        "China money supply M2/M1/M0, monthly (PBOC via AKShare)",
        tuple(cols),
        "月份",
        "month",
        tuple(inds),
        MONTHLY,
    )


def _cpi() -> AkshareFunction:
    regions = (
        ("全国", "cn_cpi", "China CPI"),
        ("城市", "cn_cpi_urban", "China urban CPI"),
        ("农村", "cn_cpi_rural", "China rural CPI"),
    )
    cols, inds = ["月份"], []
    for zh, code, name in regions:
        level, yoy, mom, ytd = f"{zh}-当月", f"{zh}-同比增长", f"{zh}-环比增长", f"{zh}-累计"
        cols += [level, yoy, mom, ytd]
        inds += [
            Indicator(
                code,
                f"{name} (index, same month of the previous year as base)",
                level,
                "index",
                "monthly",
                "price_index",
                level,
            ),
            Indicator(f"{code}_yoy", f"{name}, year-on-year change", yoy, "%", "monthly", "growth_rate", yoy),
            Indicator(f"{code}_mom", f"{name}, month-on-month change", mom, "%", "monthly", "growth_rate", mom),
            Indicator(
                f"{code}_ytd",
                f"{name}, year-to-date (index, same period of the previous year as base)",
                ytd,
                "index",
                "monthly",
                "price_index",
                ytd,
            ),
        ]
    return AkshareFunction(
        "macro_china_cpi",
        "China consumer price index, monthly (NBS via AKShare)",
        tuple(cols),
        "月份",
        "month",
        tuple(inds),
        MONTHLY,
    )


def _ppi() -> AkshareFunction:
    inds = (
        Indicator(
            "cn_ppi",
            "China PPI (index, same month of the previous year as base)",
            "当月",
            "index",
            "monthly",
            "price_index",
            "当月",
        ),
        Indicator(
            "cn_ppi_yoy",
            "China PPI, year-on-year change",
            "当月同比增长",
            "%",
            "monthly",
            "growth_rate",
            "当月同比增长",
        ),
        Indicator(
            "cn_ppi_ytd",
            "China PPI, year-to-date (index, same period of the previous year as base)",
            "累计",
            "index",
            "monthly",
            "price_index",
            "累计",
        ),
    )
    return AkshareFunction(
        "macro_china_ppi",
        "China producer price index, monthly (NBS via AKShare)",
        ("月份", "当月", "当月同比增长", "累计"),
        "月份",
        "month",
        inds,
        MONTHLY,
    )


def _shibor() -> AkshareFunction:
    cols = ["日期"]
    inds = []
    for zh, code, label in SHIBOR_TENORS:
        cols += [f"{zh}-定价", f"{zh}-涨跌幅"]
        inds.append(
            Indicator(f"shibor_{code}", f"SHIBOR, {label}", f"{zh}-定价", "%", "daily", "interest_rate", f"{zh}-定价")
        )
    return AkshareFunction(
        "macro_china_shibor_all",
        "SHIBOR fixings, daily (NIFC via AKShare)",
        tuple(cols),
        "日期",
        "day",
        tuple(inds),
        DAILY_FIXING,
    )


FUNCTIONS: dict[str, AkshareFunction] = {f.name: f for f in (_bond(), _money_supply(), _cpi(), _ppi(), _shibor())}
"""The supported AKShare functions by name."""


def function(name: str) -> AkshareFunction:
    """The :class:`AkshareFunction` called ``name``.

    Raises:
        AkshareFormatError: an unknown name (the message lists the known ones).
    """
    try:
        return FUNCTIONS[name]
    except KeyError:
        raise AkshareFormatError(f"unknown AKShare function {name!r}: use one of {', '.join(FUNCTIONS)}") from None


# --------------------------------------------------------------------------- reading


@dataclass
class IndicatorData:
    """What one CSV or one live call holds, ready for the graph.

    Attributes:
        function: the AKShare function name.
        source: the file name, or ``akshare.<function>`` for a live call (``Observation.source_file``).
        path: the resolved file path, or ``live:<function>``.
        sha256: hex digest of the bytes parsed (a live frame: of its CSV text).
        indicators: the indicators with at least one observation, in the function's order.
        observations: ``(:Observation)`` property rows (see the module docstring).
        rows: data rows read; ``rows_with_values``: rows that gave at least one observation.
        skipped: skipped cells by reason (``empty cell``, ``duplicate date``, ``curve not mapped: X``).
    """

    function: str
    source: str
    path: str
    sha256: str
    indicators: list[Indicator] = field(default_factory=list)
    observations: list[dict[str, Any]] = field(default_factory=list)
    rows: int = 0
    rows_with_values: int = 0
    skipped: Counter = field(default_factory=Counter)

    def indicator_rows(self) -> list[dict[str, Any]]:
        """``(:Indicator)`` node rows."""
        return [i.row(self.function) for i in self.indicators]

    def links(self) -> list[dict[str, Any]]:
        """``(:Indicator)-[:HAS_OBSERVATION]->(:Observation)`` relationship rows."""
        return [{"start": o["indicator"], "end": o["id"]} for o in self.observations]


def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise AkshareFormatError(f"{where}:{line}: not UTF-8 text (AKShare CSVs are UTF-8)") from None


def _header(text: str, where: str) -> list[str]:
    first = next(csv.reader(io.StringIO(text)), None)
    if not first:
        raise AkshareFormatError(f"{where}: empty file (expected a header line of AKShare columns)")
    return [c.strip() for c in first]


def _match_function(header: list[str], name_hint: str) -> AkshareFunction | None:
    """The function whose name occurs in ``name_hint`` (the longest), else the one sharing most columns
    with ``header`` (at least half of its columns), else None."""
    named = [n for n in FUNCTIONS if n in name_hint]
    if named:
        return FUNCTIONS[max(named, key=len)]
    cols = set(header)
    best = max(FUNCTIONS.values(), key=lambda f: len(cols & set(f.columns)))
    return best if len(cols & set(best.columns)) * 2 >= len(best.columns) else None


def _check_columns(fn: AkshareFunction, header: list[str], where: str) -> bool:
    """Raise unless ``header`` holds exactly ``fn``'s columns; True when a leading unnamed index column
    (``df.to_csv()`` without ``index=False``) must be dropped from every row."""
    index_column = bool(header) and header[0] in ("", "Unnamed: 0") and header[0] not in fn.columns
    names = header[1:] if index_column else header
    twice = sorted(n for n, c in Counter(names).items() if c > 1)
    missing = [c for c in fn.columns if c not in names]
    unexpected = [c for c in names if c not in fn.columns]
    if missing or unexpected or twice:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(missing)}")
        if unexpected:
            parts.append(f"unexpected {', '.join(repr(c) for c in unexpected)}")
        if twice:
            parts.append(f"repeated {', '.join(twice)}")
        raise AkshareFormatError(
            f"{where}: the columns do not match AKShare {fn.name}: {'; '.join(parts)} "
            f"(expected: {', '.join(fn.columns)})"
        )
    return index_column


def _parse_date(fn: AkshareFunction, cell: str, where: str, line: int) -> date:
    cell = cell.strip()
    try:
        if fn.period == "month":
            m = MONTH.match(cell)
            if m and 1 <= int(m.group(2)) <= 12:
                year, month = int(m.group(1)), int(m.group(2))
                first_next = date(year + month // 12, month % 12 + 1, 1)
                return first_next - timedelta(days=1)
        else:
            m = DAY.match(cell)
            if m:
                return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        pass
    shape = "YYYY年MM月份, e.g. 2025年09月份" if fn.period == "month" else "YYYY-MM-DD"
    raise AkshareFormatError(f"{where}:{line}: column {fn.date_column}: {cell!r} is not a date ({shape})")


def _parse_value(cell: str, where: str, line: int, column: str) -> float | None:
    cell = cell.strip()
    if cell in EMPTY:
        return None
    try:
        value = float(cell.replace(",", ""))
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise AkshareFormatError(f"{where}:{line}: column {column}: {cell!r} is not a number")
    return value


def parse_table(fn: AkshareFunction, text: str, where: str, source: str, path: str, sha256: str) -> IndicatorData:
    """Parse AKShare CSV text of function ``fn`` into :class:`IndicatorData`.

    Args:
        text: the CSV text (header line first, BOM removed).
        where: how errors name the input (a path, or ``akshare.<function>``).
        source, path, sha256: provenance for the rows (see :class:`IndicatorData`).

    Raises:
        AkshareFormatError: the columns differ from ``fn``'s; a row has another number of cells than
            the header; a date or value cell is malformed (names line and column).
    """
    reader = csv.reader(io.StringIO(text))
    header = [c.strip() for c in next(reader, [])]
    drop_index = _check_columns(fn, header, where)
    if drop_index:
        header = header[1:]
    pos = {c: i for i, c in enumerate(header)}
    data = IndicatorData(fn.name, source, path, sha256)
    used: set[str] = set()
    seen: set[str] = set()
    for cells in reader:
        line = reader.line_num
        if not any(c.strip() for c in cells):
            continue  # blank line
        if drop_index:
            cells = cells[1:]
        if len(cells) != len(header):
            raise AkshareFormatError(f"{where}:{line}: {len(cells)} cells, but the header has {len(header)} columns")
        data.rows += 1
        day = _parse_date(fn, cells[pos[fn.date_column]], where, line)
        indicators = fn.indicators
        if fn.curve_column is not None:
            curve = cells[pos[fn.curve_column]].strip()
            indicators = tuple(i for i in fn.indicators if i.curve == curve)
            if not indicators:
                data.skipped[f"curve not mapped: {curve}"] += len(BOND_TENORS)
                continue
        found = False
        for ind in indicators:
            value = _parse_value(cells[pos[ind.column]], where, line, ind.column)
            if value is None:
                data.skipped["empty cell"] += 1
                continue
            oid = f"{ind.code}:{day.isoformat()}"
            if oid in seen:
                data.skipped["duplicate date (first kept)"] += 1
                continue
            seen.add(oid)
            used.add(ind.code)
            found = True
            data.observations.append(
                {
                    "id": oid,
                    "indicator": ind.code,
                    "date": day,
                    "value": value,
                    "available_at": fn.availability.at(day),
                    "available_at_approx": fn.availability.approx,
                    "availability_basis": fn.availability.basis,
                    "source_function": fn.name,
                    "source_file": source,
                    "source_line": line,
                    "source_column": ind.column,
                }
            )
        data.rows_with_values += found
    data.indicators = [i for i in fn.indicators if i.code in used]
    return data


def read_csv(path: Path, function_name: str | None = None) -> IndicatorData:
    """Read a CSV that AKShare's ``function_name`` wrote (``df.to_csv``), in AKShare's own columns.

    Without ``function_name`` the function is the one whose name is part of the file name (e.g.
    ``macro_china_cpi_df.csv``), else the one whose columns the header shares most (at least half;
    e.g. ``chinabond_treasury_curve_..._akshare_wide.csv`` is ``bond_china_yield``).

    Returns:
        :class:`IndicatorData`; ``source`` is the file name, ``source_line`` the line in the file.

    Raises:
        AkshareFormatError: unreadable, not UTF-8, no function fits, wrong columns, a bad cell (the
            message names the file and, for a cell, line and column).
    """
    path = Path(path)
    where = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise AkshareFormatError(f"{where}: cannot read it ({exc.strerror or exc})") from None
    text = _decode(raw, where)
    header = _header(text, where)
    if function_name is not None:
        fn = function(function_name)
    else:
        fn = _match_function(header, path.name)
        if fn is None:
            raise AkshareFormatError(
                f"{where}: cannot tell which AKShare function wrote it: its name contains none of "
                f"{', '.join(FUNCTIONS)} and its columns match none; name it with --function"
            )
    return parse_table(fn, text, where, path.name, str(path.resolve()), hashlib.sha256(raw).hexdigest())


# --------------------------------------------------------------------------- live


@contextmanager
def _socket_timeout(seconds: float) -> Iterator[None]:
    """AKShare calls ``requests.get`` without a timeout; the socket default bounds every connect and read."""
    before = socket.getdefaulttimeout()
    socket.setdefaulttimeout(seconds)
    try:
        yield
    finally:
        socket.setdefaulttimeout(before)


TRANSIENT = (OSError, ValueError, KeyError, TypeError)
"""What a failed or odd answer raises inside AKShare (requests' errors are OSErrors; a changed or
error page gives ValueError, KeyError or TypeError while parsing): retried."""


def _reason(exc: BaseException) -> str:
    """A short one-line cause: the exception type, and the host for connection errors."""
    text = " ".join(str(exc).split())
    host = re.search(r"host='([^']+)'", text)
    if host:
        cause = "name resolution failed" if "resolve" in text.lower() else "no connection"
        return f"{type(exc).__name__}: {cause} for {host.group(1)}"
    return f"{type(exc).__name__}: {text[:160]}"


def _windows(start: date, end: date, days: int = BOND_WINDOW_DAYS) -> list[tuple[date, date]]:
    out, lo = [], start
    while lo <= end:
        hi = min(end, lo + timedelta(days=days - 1))
        out.append((lo, hi))
        lo = hi + timedelta(days=1)
    return out


def fetch_live(
    function_name: str,
    start: date | None = None,
    end: date | None = None,
    attempts: int = 3,
    wait_s: float = 2.0,
    timeout_s: float = 30.0,
    save_dir: Path | None = None,
) -> IndicatorData:
    """Call AKShare's ``function_name`` now (network needed), with retries, and parse its frame.

    ``bond_china_yield`` takes ``start`` .. ``end`` (default: the last 365 days up to today) and is called
    in windows of at most :data:`BOND_WINDOW_DAYS` days (AKShare's limit is a year); the macro functions
    take no dates and return their whole history. Each call is retried with tenacity: up to ``attempts``
    tries, exponential waits from ``wait_s`` seconds, every socket operation bounded by ``timeout_s``.
    The frame is written as AKShare CSV text (``to_csv(index=False)``) and parsed by
    :func:`parse_table`, so a live load validates and cites like a file (``source_file`` is
    ``akshare.<function>``, ``source_line`` the line of that text); ``save_dir`` keeps the text as
    ``<function>_df.csv`` for later offline loads.

    Raises:
        AkshareUnavailable: the call still failed after the retries (one line naming the function,
            the error and the CSV route), or the akshare package is missing.
        AkshareFormatError: an unknown function, or the frame has other columns than expected.
    """
    fn = function(function_name)
    try:
        import akshare
    except ImportError as exc:
        raise AkshareUnavailable(
            f"akshare.{fn.name}: the akshare package cannot be imported ({exc}); "
            f"load a saved CSV instead: finkg ingest akshare FILE.csv --function {fn.name}"
        ) from None
    from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

    call = getattr(akshare, fn.name)
    if fn.name == "bond_china_yield":
        end = end or date.today()
        start = start or end - timedelta(days=364)
        if start > end:
            raise AkshareFormatError(f"bond_china_yield: start {start} is after end {end}")
        requests = [
            {"start_date": lo.strftime("%Y%m%d"), "end_date": hi.strftime("%Y%m%d")} for lo, hi in _windows(start, end)
        ]
    else:
        requests = [{}]
    frames = []
    for kwargs in requests:
        shown = f"akshare.{fn.name}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"
        try:
            for attempt in Retrying(
                stop=stop_after_attempt(attempts),
                reraise=True,
                wait=wait_exponential(multiplier=wait_s, min=wait_s, max=60),
                retry=retry_if_exception_type(TRANSIENT),
            ):
                with attempt, _socket_timeout(timeout_s):
                    frames.append(call(**kwargs))
        except TRANSIENT as exc:
            reason = _reason(exc)
            raise AkshareUnavailable(
                f"{shown} failed after {attempts} attempts ({reason}); is its host reachable? Offline, load a "
                f"saved CSV instead: finkg ingest akshare {fn.name}_df.csv (save one where there is network with "
                f"akshare.{fn.name}(...).to_csv('{fn.name}_df.csv', index=False))"
            ) from None
    import pandas as pd

    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    text = frame.to_csv(index=False)
    where = f"akshare.{fn.name}"
    if save_dir is not None:
        save_dir.mkdir(parents=True, exist_ok=True)
        (save_dir / f"{fn.name}_df.csv").write_text(text, encoding="utf-8")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return parse_table(fn, text, where, where, f"live:{fn.name}", digest)
