"""SEC "companyfacts" JSON into the graph model of :mod:`ingest.sec.fsds` (Company, Filing, Concept, Fact).

Input: one file in the shape of ``https://data.sec.gov/api/xbrl/companyfacts/CIK##########.json``::

    {"cik": 1640147, "entityName": "SNOWFLAKE INC.",
     "facts": {"us-gaap": {"Revenues": {"label": "Revenues", "description": "...",
               "units": {"USD": [{"start": "2024-02-01", "end": "2024-04-30", "val": 828709000,
                                  "accn": "0001640147-24-000135", "fy": 2025, "fp": "Q1",
                                  "form": "10-Q", "filed": "2024-05-31", "frame": "CY2024Q1"}]}}}}}

Each entry of ``units`` is one fact *as one filing reported it*: a value reported again as a
comparative in later filings appears once per filing, so every entry becomes a fact of its own
accession (the FSDS model: num.txt also holds each filing's comparatives). The result is the
:class:`~ingest.sec.fsds.FsdsData` that :func:`ingest.sec.fsds.write_fsds` writes unchanged.

Normalization, as :mod:`ingest.sec.fsds` does it: only USD facts are kept; companyfacts holds
whole-entity facts only (no dimensions), so ``skipped_dimensional`` is always 0 here. Other units
are counted (``skipped_not_usd``). A null ``val`` is kept as a fact without value (``nil_value``).
A ``val`` that is not a finite number (``NaN``, ``Infinity``, ``1e999``, an integer too large for a
float: JSON parsers accept all of them) is refused: the entry is skipped and counted
``skipped_non_finite``.

Fields. ``version`` is the taxonomy name (``us-gaap``, ``dei``, ``srt``, ...): the JSON has no
taxonomy year, so concept keys read ``us-gaap:Revenues`` (FSDS: ``us-gaap/2024:Revenues``).
``ddate`` is the exact ``end`` date as YYYYMMDD; ``qtrs`` is 0 without ``start`` (an instant),
else ``round(days / 91.3)`` with ``days = end - start``. FSDS rounds ddate to the nearest month
end; we keep the exact date, because rounding would merge a subsequent-event date such as
2022-04-13 into the 2022-03-31 period. ``decimals`` is None (the JSON has no precision).

Filing period rule. The JSON gives no period per filing, only per fact. A filing's ``period`` is
the most frequent ``end`` among its non-``dei`` entries (all units), the later date on a tie: a
10-Q or 10-K reports more facts at its own period end (balance sheet plus the period's flows)
than at any comparative date. The latest ``end`` would be wrong: Tesla's 10-K for 2021 reports a
subsequent event at 2022-03-31. On both shipped files the rule gives, for every filing, a date
20 to 66 days before ``filed`` at the company's fiscal quarter end. A filing with ``dei``
entries only (Tesla's 10-K/A cover-page amendments) gets ``period`` None (counted as
``filings_without_period``); its facts are then ``comparative``.

Duplicates: two entries with the same fact key (same accession, tag, end and quarters) are one
fact. The first is kept; a later equal value is counted ``skipped_duplicate``; a different value
is counted ``skipped_duplicate_conflict`` and the more precise fact is kept (``decimals`` INF,
then larger). So ``rows == kept + sum(skipped_*)`` always holds.

The helpers :func:`quarters`, :func:`fact_row` and :func:`add_fact` are shared with
:mod:`ingest.sec.xbrl_instance`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter, defaultdict
from datetime import date
from pathlib import Path
from typing import Any, Literal, overload

from ingest.sec.fsds import FsdsData, count_totals, period_role
from kg.errors import IngestError

SOURCE = "sec-companyfacts"
DAYS_PER_QUARTER = 91.3
ADSH = re.compile(r"\d{10}-\d{2}-\d{6}")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class CompanyFactsFormatError(IngestError):
    """The file is not companyfacts JSON; the message names the file and the JSON path and field,
    e.g. ``facts.us-gaap.Revenues.units.USD[3].val``, or the line and column of a syntax error."""


def quarters(start: date | None, end: date) -> int:
    """Quarters a period spans: 0 for an instant (``start`` None), else ``round(days / 91.3)``.

    >>> quarters(None, date(2024, 6, 30)), quarters(date(2024, 4, 1), date(2024, 6, 30))
    (0, 1)
    >>> quarters(date(2024, 1, 1), date(2024, 6, 30)), quarters(date(2023, 1, 1), date(2023, 12, 31))
    (2, 4)
    """
    return 0 if start is None else round((end - start).days / DAYS_PER_QUARTER)


def parse_date(text: Any) -> date:
    """``YYYY-MM-DD`` (an XBRL dateTime's date part is accepted too) as a :class:`date`.

    Raises:
        ValueError: not a string of that shape, or not a calendar date (``2024-02-30``).
    """
    if not isinstance(text, str) or not DATE.match(text.strip()):
        raise ValueError(f"not a YYYY-MM-DD date: {text!r}")
    return date.fromisoformat(text.strip()[:10])


def fact_row(
    *,
    adsh: str,
    cik: int,
    tag: str,
    version: str,
    end: date,
    qtrs: int,
    value: float | None,
    form: str,
    period: str | None,
    decimals: int | None,
    source: str,
    coreg: str | None = None,
) -> dict[str, Any]:
    """One Fact row with exactly the fields of :func:`ingest.sec.fsds.read_fsds` (key, citation,
    adsh, cik, tag, version, concept, ddate, qtrs, uom, value, period_role, footnote, stmt, report,
    line, plabel, negating) plus ``decimals`` and ``source``. The unit is always USD (whole entity:
    empty segments in the key; ``coreg`` a co-registrant's name, None for the registrant, as in FSDS);
    ``period`` is the filing's YYYYMMDD period or None."""
    ddate = end.strftime("%Y%m%d")
    return {
        "key": f"{adsh}:{tag}:{version}:{ddate}:{qtrs}:USD:{coreg or ''}:",
        "citation": f"{adsh}:{cik}:{tag}:{ddate}:{qtrs}:USD" + (f":{coreg}" if coreg else ""),
        "coreg": coreg,
        "adsh": adsh,
        "cik": cik,
        "tag": tag,
        "version": version,
        "concept": f"{version}:{tag}",
        "ddate": ddate,
        "qtrs": qtrs,
        "uom": "USD",
        "value": value,
        "period_role": period_role(form, period, ddate, qtrs),
        "footnote": None,
        "stmt": None,
        "report": None,
        "line": None,
        "plabel": None,
        "negating": None,
        "decimals": decimals,
        "source": source,
    }


def _precision(row: dict[str, Any]) -> tuple[bool, float]:
    return bool(row.get("precision_inf")), float("-inf") if row["decimals"] is None else row["decimals"]


def add_fact(data: FsdsData, index: dict[str, int], row: dict[str, Any]) -> None:
    """Append ``row`` to ``data.facts`` and count it ``kept`` (and ``nil_value`` when its value is
    None), unless a fact with its key is there already: then count ``skipped_duplicate`` (same
    value) or ``skipped_duplicate_conflict`` (different value; the more precise row stays).
    ``index`` maps fact keys to positions in ``data.facts``."""
    at = index.get(row["key"])
    if at is None:
        index[row["key"]] = len(data.facts)
        data.facts.append(row)
        data.counts["kept"] += 1
        data.counts["nil_value"] += row["value"] is None
        return
    old = data.facts[at]
    if old["value"] == row["value"]:
        data.counts["skipped_duplicate"] += 1
        return
    data.counts["skipped_duplicate_conflict"] += 1
    if _precision(row) > _precision(old):
        data.counts["nil_value"] += (row["value"] is None) - (old["value"] is None)
        data.facts[at] = row


def finite(value: float | int) -> float | None:
    """``value`` as a float, or None when it is not a finite number (NaN, an infinity, an integer
    beyond the float range): such a value is never stored as a fact.

    >>> finite(12), finite(float("nan")), finite(10**400)
    (12.0, None, None)
    """
    try:
        out = float(value)
    except OverflowError:
        return None
    return out if math.isfinite(out) else None


def _fail(path: Path, where: str, message: str) -> CompanyFactsFormatError:
    return CompanyFactsFormatError(f"{path}: {where}: {message}" if where else f"{path}: {message}")


def _get(obj: Any, name: str, kinds: type | tuple[type, ...], path: Path, where: str, optional: bool = False) -> Any:
    """``obj[name]`` checked to be one of ``kinds`` (None allowed when ``optional``)."""
    here = f"{where}.{name}" if where else name
    if not isinstance(obj, dict):
        raise _fail(path, where or "top level", f"expected a JSON object, got {type(obj).__name__}")
    if name not in obj:
        if optional:
            return None
        raise _fail(path, here, "required field is missing")
    value = obj[name]
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, kinds):
        names = kinds.__name__ if isinstance(kinds, type) else "/".join(k.__name__ for k in kinds)
        raise _fail(path, here, f"expected {names}, got {json.dumps(value)[:80]}")
    return value


@overload
def _date(entry: dict, name: str, path: Path, where: str, optional: Literal[False] = False) -> date: ...
@overload
def _date(entry: dict, name: str, path: Path, where: str, optional: bool) -> date | None: ...
def _date(entry: dict, name: str, path: Path, where: str, optional: bool = False) -> date | None:
    raw = _get(entry, name, str, path, where, optional)
    if raw is None:
        return None
    try:
        return parse_date(raw)
    except ValueError as exc:
        raise _fail(path, f"{where}.{name}", f"bad date ({exc})") from None


def _year(entry: dict, path: Path, where: str) -> int | None:
    fy = _get(entry, "fy", int, path, where, optional=True)
    if fy is not None and not 0 < fy < 10_000:
        raise _fail(path, f"{where}.fy", f"not a fiscal year: {fy}")
    return fy


def read_companyfacts(path: Path) -> FsdsData:
    """Read and normalize one companyfacts JSON file (see the module docstring for the rules).

    Returns:
        :class:`~ingest.sec.fsds.FsdsData`: one company; one filing per accession (adsh, cik,
        form, period, fy, fp, filed as YYYYMMDD, accepted None, source = file name); concepts
        (key ``taxonomy:tag``, tag, version, label); USD facts; ``counts`` with rows (unit
        entries read), kept, skipped_non_finite, skipped_not_usd, skipped_dimensional (0), skipped_duplicate,
        skipped_duplicate_conflict, nil_value, filings, filings_without_period, companies,
        concepts, current. Nothing is written.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        CompanyFactsFormatError: not UTF-8 JSON (truncated files included: line and column are
            named), a required field missing or of the wrong type (``cik``, ``entityName``,
            ``facts``, ``units``; per entry ``end``, ``val``, ``accn``, ``form``, ``filed``), a
            non-numeric ``val``, a bad date, ``start`` after ``end``, a malformed accession, or a
            ``fy`` or ``cik`` out of range.
    """
    path = Path(path)
    raw = path.read_bytes()
    data = FsdsData(source=path, sha256=hashlib.sha256(raw).hexdigest())
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise _fail(path, f"line {line} column {col}", f"not UTF-8 (byte 0x{raw[exc.start]:02x})") from None
    except RecursionError:
        raise _fail(path, "", "not valid JSON: nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise _fail(path, f"line {exc.lineno} column {exc.colno}", f"not valid JSON: {exc.msg}") from None

    cik_raw = _get(doc, "cik", (int, str), path, "")
    if isinstance(cik_raw, str) and not (cik_raw.strip().isascii() and cik_raw.strip().isdigit()):
        raise _fail(path, "cik", f"not a CIK number: {cik_raw[:80]!r}")
    if isinstance(cik_raw, str) and len(cik_raw.strip()) > 10:
        raise _fail(path, "cik", f"not a CIK number (1 to 10 digits): {cik_raw[:80]!r}")
    cik = int(cik_raw)
    if not 0 < cik < 10**10:
        raise _fail(path, "cik", f"not a CIK number (1 to 10 digits): {cik_raw!r}")
    name = _get(doc, "entityName", str, path, "")
    data.companies = [{"cik": cik, "name": name.strip(), "sic": None}]

    filings: dict[str, dict[str, Any]] = {}
    ends: dict[str, Counter] = defaultdict(Counter)  # accession -> non-dei end dates
    pending: list[tuple[str, str, str, date, int, float | None]] = []
    labels: dict[str, str | None] = {}
    for taxonomy, tags in _get(doc, "facts", dict, path, "").items():
        if not isinstance(tags, dict):
            raise _fail(path, f"facts.{taxonomy}", "expected a JSON object of tags")
        for tag, concept in tags.items():
            where = f"facts.{taxonomy}.{tag}"
            label = _get(concept, "label", str, path, where, optional=True)
            for unit, entries in _get(concept, "units", dict, path, where).items():
                if not isinstance(entries, list):
                    raise _fail(path, f"{where}.units.{unit}", "expected a JSON array of facts")
                for i, e in enumerate(entries):
                    at = f"{where}.units.{unit}[{i}]"
                    data.counts["rows"] += 1
                    accn = _get(e, "accn", str, path, at)
                    if not ADSH.fullmatch(accn):
                        raise _fail(path, f"{at}.accn", f"not an accession number (##########-##-######): {accn!r}")
                    end = _date(e, "end", path, at)
                    start = _date(e, "start", path, at, optional=True)
                    if start is not None and start > end:
                        raise _fail(path, f"{at}.start", f"start {start} is after end {end}")
                    if "val" not in e:
                        raise _fail(path, f"{at}.val", "required field is missing")
                    val = _get(e, "val", (int, float), path, at, optional=True)  # null: a nil fact
                    filing = {
                        "adsh": accn,
                        "cik": cik,
                        "form": _get(e, "form", str, path, at),
                        "period": None,
                        "fy": _year(e, path, at),
                        "fp": _get(e, "fp", str, path, at, optional=True),
                        "filed": _date(e, "filed", path, at).strftime("%Y%m%d"),
                        "accepted": None,
                        "source": path.name,
                    }
                    known = filings.setdefault(accn, filing)
                    if known is not filing and known != filing:
                        data.counts["filing_metadata_conflicts"] += 1  # the first entry's values stay
                    if taxonomy != "dei":
                        ends[accn][end] += 1
                    value = None if val is None else finite(val)
                    if val is not None and value is None:  # NaN, Infinity, 1e999: never a fact
                        data.counts["skipped_non_finite"] += 1
                        continue
                    if unit != "USD":
                        data.counts["skipped_not_usd"] += 1
                        continue
                    labels[f"{taxonomy}:{tag}"] = label
                    pending.append((accn, taxonomy, tag, end, quarters(start, end), value))

    for accn, counter in ends.items():
        best = max(counter.items(), key=lambda kv: (kv[1], kv[0]))[0]
        filings[accn]["period"] = best.strftime("%Y%m%d")
    data.counts["filings_without_period"] = sum(1 for f in filings.values() if f["period"] is None)
    data.counts["skipped_dimensional"] = 0  # companyfacts holds whole-entity facts only

    index: dict[str, int] = {}
    for accn, taxonomy, tag, end, qtrs, value in pending:
        f = filings[accn]
        add_fact(
            data,
            index,
            fact_row(
                adsh=accn,
                cik=cik,
                tag=tag,
                version=taxonomy,
                end=end,
                qtrs=qtrs,
                value=value,
                form=f["form"],
                period=f["period"],
                decimals=None,
                source=SOURCE,
            ),
        )
    used = {f["concept"] for f in data.facts}
    data.concepts = [
        {"key": k, "tag": k.split(":", 1)[1], "version": k.split(":", 1)[0], "label": labels[k]}
        for k in labels
        if k in used
    ]
    data.filings = list(filings.values())
    return count_totals(data)
