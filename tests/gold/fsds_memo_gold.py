"""Independent gold memo items for every filing of an SEC Financial Statement Data Sets quarter.

Written from the SEC's own readme (``readme.htm`` inside the quarter's ZIP, "Financial Statement Data
Sets", section 5 "Table Definitions") and the definitions of issue 19, with plain pandas. It imports
nothing of finkg's fact selection (no ``retrieval``, ``generation`` or ``ingest``): the memo evaluation
(:mod:`finkg.eval.memo_gold`, ``bench/memo_eval.py``) compares finkg's memos with these values.

Fields used (readme, Figures 2, 4 and 5):

- SUB (5.1): ``adsh`` (accession number, the key), ``cik``, ``form``, ``period`` ("Balance Sheet Date,
  rounded to nearest month-end"), ``fp`` (fiscal period focus: FY, Q1..Q4), ``accepted`` (EDGAR
  acceptance date and time), ``prevrpt`` ("TRUE indicates that the submission information was
  subsequently amended").
- NUM (5.3): ``adsh``, ``tag``, ``ddate`` ("the end date for the data value, rounded to the nearest month
  end"), ``qtrs`` ("the count of the number of quarters represented by the data value ... 0 indicates it is
  a point-in-time value"), ``uom``, ``segments`` ("tags used to represent axis and member reporting"),
  ``coreg`` ("if specified, indicates a specific co-registrant, the parent company, or other entity ...
  NULL indicates the consolidated entity"), ``value`` ("not scaled").
- PRE (5.4): ``adsh``, ``report``, ``line`` ("the tag's presentation line order for a given report"),
  ``stmt`` (BS balance sheet, IS income statement), ``inpth`` (presented parenthetically), ``tag``,
  ``plabel`` (the text presented on the line).

The items are those a finkg memo states: eight facts (revenue, net income, operating cash flow, cash,
current assets, current liabilities, total liabilities, total assets) and four ratios (current ratio,
leverage = liabilities / assets, net margin = net income / revenue, operating-cash-flow margin = operating
cash flow / revenue; seed 003, "Numeric verification and evaluation metrics"). Definitions (issue 19):

- **The filing's entity**: NUM rows with empty ``coreg`` and empty ``segments`` (the consolidated entity,
  no axis/member). A filing that has no such USD row at all (SEMPRA ENERGY's 10-Q, whose every fact
  carries a co-registrant) uses the rows of co-registrant ``ParentCompany``. USD only.
- **The filing's own period**: ``ddate == period``. Instants: ``qtrs == 0``. Flows: the form's own span
  (4 quarters when ``fp`` is FY, else 1) when reported, else the longest span ending on the period (a
  10-Q's year-to-date cash flow).
- **Tags**, first reported wins (flows: the first tag reported over the form's own span; only when no tag
  has that span, the first tag's longest span): net income ``NetIncomeLoss``, ``ProfitLoss``,
  ``NetIncomeLossAvailableToCommonStockholdersBasic``; operating cash flow
  ``NetCashProvidedByUsedInOperatingActivities``, ``...ContinuingOperations``; cash
  ``CashAndCashEquivalentsAtCarryingValue``, ``Cash``, ``CashAndDueFromBanks``; current assets
  ``AssetsCurrent``; current liabilities ``LiabilitiesCurrent``; total assets ``Assets``.
- **Revenue**: ``Revenues``, ``SalesRevenueNet``, ``SalesRevenueGoodsNet``, ``SalesRevenueServicesNet``
  (first reported wins); when none is reported, the income statement's top revenue line from PRE: the
  revenue block at the top of the first IS report that has current values (lines whose tag or label says
  revenue or sales, before the first line whose tag or label says cost, expense, interest expense or
  benefit), and within it the line with the largest value (the total sits above its components in
  value). None when there is no such line (a bank's statement opens with interest income, not revenue).
- **Total liabilities**: ``Liabilities`` when reported; else ``LiabilitiesAndStockholdersEquity`` minus
  total equity (``StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest``, else
  ``StockholdersEquity`` plus ``MinorityInterest``) minus every item the balance sheet presents between
  the liabilities and the equity section (PRE stmt BS, by line: before the first equity line, tag or
  label naming redeemable, temporary or mezzanine equity, a minority / noncontrolling interest or a
  subsidiary's preferred stock), each named in the record. us-gaap's equity-section preferred stock
  (``ConvertiblePreferredStockNonredeemableOrRedeemableIssuerOptionValue``) is an equity line, not temporary
  equity, though its name says "redeemable".
- **Amendments**: the latest filing (by ``accepted``) of the same ``cik`` and ``period`` in the quarter
  that reports the item supplies its value (``source_adsh``); the filing's own value is kept
  (``own_value``).
- **Ratios** from the gold facts, flows over the same span (net margin over net income's span, the
  operating-cash-flow margin over the cash flow's span, revenue of that span); none when a component is
  missing, a denominator is zero, or revenue is not positive.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

FACT_ITEMS: tuple[str, ...] = (
    "Revenues", "NetIncomeLoss", "OperatingCashFlow", "Cash",
    "CurrentAssets", "CurrentLiabilities", "Liabilities", "Assets",
)  # fmt: skip
# ratio -> (numerator, denominator)
RATIO_ITEMS: dict[str, tuple[str, str]] = {
    "current_ratio": ("CurrentAssets", "CurrentLiabilities"),
    "leverage": ("Liabilities", "Assets"),
    "net_margin": ("NetIncomeLoss", "Revenues"),
    "ocf_margin": ("OperatingCashFlow", "Revenues"),
}
ITEMS: tuple[str, ...] = (*FACT_ITEMS, *RATIO_ITEMS)

TAGS: dict[str, tuple[str, ...]] = {
    "Revenues": ("Revenues", "SalesRevenueNet", "SalesRevenueGoodsNet", "SalesRevenueServicesNet"),
    "NetIncomeLoss": ("NetIncomeLoss", "ProfitLoss", "NetIncomeLossAvailableToCommonStockholdersBasic"),
    "OperatingCashFlow": (
        "NetCashProvidedByUsedInOperatingActivities",
        "NetCashProvidedByUsedInOperatingActivitiesContinuingOperations",
    ),
    "Cash": ("CashAndCashEquivalentsAtCarryingValue", "Cash", "CashAndDueFromBanks"),
    "CurrentAssets": ("AssetsCurrent",),
    "CurrentLiabilities": ("LiabilitiesCurrent",),
    "Liabilities": ("Liabilities",),
    "Assets": ("Assets",),
}
FLOWS = {"Revenues", "NetIncomeLoss", "OperatingCashFlow"}

REVENUE_WORDS = re.compile(r"revenue|sales", re.I)
NOT_REVENUE = re.compile(
    r"cost|expense|purchase|proceeds|gain|loss|deferred|unearned|receivable|allowance|return|tax", re.I
)
EXPENSE_WORDS = re.compile(r"cost|expense|benefit", re.I)
EQUITY_TOTALS = ("StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest", "StockholdersEquity")
EQUITY_LINE = re.compile(
    r"^(StockholdersEquity|CommonStock|PreferredStockValue|AdditionalPaidInCapital|RetainedEarnings|TreasuryStock"
    r"|AccumulatedOtherComprehensive|PartnersCapital|MembersEquity|LimitedPartners|GeneralPartners"
    r"|ConvertiblePreferredStockNonredeemable)"  # us-gaap's equity-section preferred (redeemable at the issuer's option)
)
# Temporary equity by name; a subsidiary's preferred stock presented outside equity is one too (Spectra's
# "Preferred Stock of Subsidiaries", PreferredSecuritiesOfSubsidiary).
MEZZANINE = re.compile(
    r"redeemable|temporary|mezzanine|minority|noncontrolling|PreferredSecuritiesOfSubsidiary|preferred stock of subsidiar",
    re.I,
)


@dataclass
class Quarter:
    """The SUB, NUM and PRE tables of one quarter, every column as text (``keep_default_na=False``: an
    empty ``coreg`` is ``""``), and NUM's ``value`` as a float column ``v`` (NaN when empty)."""

    sub: pd.DataFrame
    num: pd.DataFrame
    pre: pd.DataFrame


def load_quarter(path: Path) -> Quarter:
    """Read ``sub.txt``, ``num.txt`` and ``pre.txt`` from the quarter's ZIP (readme section 4: UTF-8, tab
    delimited, first line the lower-case column names)."""
    with zipfile.ZipFile(path) as z:

        def read(name: str) -> pd.DataFrame:
            with z.open(name) as fh:
                return pd.read_csv(fh, sep="\t", dtype=str, keep_default_na=False, quoting=3)

        sub, num, pre = read("sub.txt"), read("num.txt"), read("pre.txt")
    num["v"] = pd.to_numeric(num["value"].replace("", None), errors="coerce")
    num["q"] = num["qtrs"].astype(int)
    return Quarter(sub, num, pre)


def entity_rows(q: Quarter, adsh: str, period: str) -> tuple[pd.DataFrame, str]:
    """The filing's own-period USD rows of its reporting entity, and which entity (see the module doc)."""
    rows = q.num[(q.num["adsh"] == adsh) & (q.num["uom"] == "USD")]
    whole = rows[(rows["coreg"] == "") & (rows["segments"] == "")]
    entity = "consolidated"
    if whole.empty:
        whole = rows[rows["coreg"] == "ParentCompany"]
        entity = "ParentCompany"
    whole = whole[(whole["ddate"] == period) & whole["v"].notna()]
    return whole, entity


def _flow(rows: pd.DataFrame, own: int) -> pd.Series | None:
    if rows.empty:
        return None
    at_own = rows[rows["q"] == own]
    return (at_own if not at_own.empty else rows[rows["q"] == rows["q"].max()]).iloc[0]


def _instant(rows: pd.DataFrame) -> pd.Series | None:
    rows = rows[rows["q"] == 0]
    return None if rows.empty else rows.iloc[0]


def revenue_line(q: Quarter, adsh: str, rows: pd.DataFrame, own: int) -> tuple[str, str] | None:
    """``(tag, plabel)`` of the income statement's top revenue line (module doc), or None."""
    pre = q.pre[(q.pre["adsh"] == adsh) & (q.pre["stmt"] == "IS") & (q.pre["inpth"] == "0")].copy()
    if pre.empty:
        return None
    pre["r"], pre["l"] = pre["report"].astype(int), pre["line"].astype(int)
    valued = set(rows["tag"])
    for _, report in sorted(pre.groupby("r"), key=lambda kv: kv[0]):
        report = report.sort_values("l")
        report = report[report["tag"].isin(valued)]
        if report.empty:
            continue
        block: list[tuple[str, str]] = []
        for _, line in report.iterrows():
            text = f"{line['tag']} {line['plabel']}"
            if REVENUE_WORDS.search(text) and not NOT_REVENUE.search(text):
                block.append((line["tag"], line["plabel"]))
            elif EXPENSE_WORDS.search(text):
                break
        best: tuple[float, str, str] | None = None
        for tag, label in block:
            r = _flow(rows[rows["tag"] == tag], own)
            if r is not None and (best is None or r["v"] > best[0]):
                best = (float(r["v"]), tag, label)
        return (best[1], best[2]) if best else None
    return None


def mezzanine_items(q: Quarter, adsh: str, rows: pd.DataFrame, subtracted: set[str]) -> list[pd.Series]:
    """Rows of the items the balance sheet presents between liabilities and equity (module doc)."""
    pre = q.pre[(q.pre["adsh"] == adsh) & (q.pre["stmt"] == "BS") & (q.pre["inpth"] == "0")].copy()
    if pre.empty:
        return []
    pre["r"], pre["l"] = pre["report"].astype(int), pre["line"].astype(int)
    with_total = pre[pre["tag"] == "LiabilitiesAndStockholdersEquity"]
    report = pre[pre["r"] == (with_total["r"].min() if not with_total.empty else pre["r"].min())].sort_values("l")
    start = report[report["tag"] == "Assets"]["l"]
    equity = report[report["tag"].str.match(EQUITY_LINE)]["l"]
    lo = int(start.min()) if not start.empty else -1
    hi = int(equity.min()) if not equity.empty else 10**9
    out = []
    for _, line in report[(report["l"] > lo) & (report["l"] < hi)].iterrows():
        tag = line["tag"]
        if tag in subtracted or "Liabilit" in tag or not MEZZANINE.search(f"{tag} {line['plabel']}"):
            continue
        r = _instant(rows[rows["tag"] == tag])
        if r is not None:
            out.append(r)
            subtracted.add(tag)
    return out


def filing_items(q: Quarter, filing: pd.Series) -> dict[str, dict]:
    """One filing's gold facts from its own rows: item -> {value, tag, qtrs, ddate, entity, rule, spans}."""
    adsh, period = filing["adsh"], filing["period"]
    own = 4 if filing["fp"] == "FY" else 1
    rows, entity = entity_rows(q, adsh, period)
    out: dict[str, dict] = {}
    for item, tags in TAGS.items():
        if item in FLOWS:  # a tag over the form's own span first (module doc)
            with_span = [t for t in tags if ((rows["tag"] == t) & (rows["q"] == own)).any()]
            tags = (*with_span, *[t for t in tags if t not in with_span])
        for tag in tags:
            these = rows[rows["tag"] == tag]
            r = _flow(these, own) if item in FLOWS else _instant(these)
            if r is not None:
                spans = {int(x["q"]): float(x["v"]) for _, x in these.iterrows()} if item in FLOWS else {}
                out[item] = {
                    "value": float(r["v"]),
                    "tag": tag,
                    "qtrs": int(r["q"]),
                    "ddate": period,
                    "entity": entity,
                    "rule": "tag",
                    "spans": spans,
                }
                break
    if "Revenues" not in out:
        line = revenue_line(q, adsh, rows, own)
        if line is not None:
            these = rows[rows["tag"] == line[0]]
            r = _flow(these, own)
            assert r is not None, "revenue_line only returns a line with a value"
            out["Revenues"] = {
                "value": float(r["v"]),
                "tag": line[0],
                "qtrs": int(r["q"]),
                "ddate": period,
                "entity": entity,
                "rule": f"income statement's top revenue line {line[1]!r} (pre.txt)",
                "spans": {int(x["q"]): float(x["v"]) for _, x in these.iterrows()},
            }
    if "Liabilities" not in out:
        derived = derive_liabilities(q, adsh, rows)
        if derived is not None:
            out["Liabilities"] = {**derived, "ddate": period, "entity": entity, "qtrs": 0, "spans": {}}
    return out


def derive_liabilities(q: Quarter, adsh: str, rows: pd.DataFrame) -> dict | None:
    """Total liabilities from the balance sheet when ``Liabilities`` is not reported (module doc)."""
    total = _instant(rows[rows["tag"] == "LiabilitiesAndStockholdersEquity"])
    if total is None:
        return None
    parts = [("+", total)]
    nci = _instant(rows[rows["tag"] == EQUITY_TOTALS[0]])
    if nci is not None:
        parts.append(("-", nci))
    else:
        parent = _instant(rows[rows["tag"] == EQUITY_TOTALS[1]])
        if parent is None:
            return None
        parts.append(("-", parent))
        minority = _instant(rows[rows["tag"] == "MinorityInterest"])
        if minority is not None:
            parts.append(("-", minority))
    subtracted = {str(r["tag"]) for _, r in parts}
    mezz = mezzanine_items(q, adsh, rows, subtracted)
    parts += [("-", r) for r in mezz]
    value = sum(float(r["v"]) * (1 if s == "+" else -1) for s, r in parts)
    return {
        "value": value,
        "tag": "derived",
        "rule": "LiabilitiesAndStockholdersEquity" + "".join(f" - {r['tag']}" for _, r in parts[1:]),
        "mezzanine": [str(r["tag"]) for r in mezz],
    }


def ratios(facts: dict[str, dict]) -> dict[str, dict]:
    """The four ratios from one filing's gold facts (module doc); absent when not computable."""
    out: dict[str, dict] = {}
    for name, (num, den) in RATIO_ITEMS.items():
        n, d = facts.get(num), facts.get(den)
        if n is None or d is None:
            continue
        if den in FLOWS:
            dv = d["spans"].get(n["qtrs"])
            if dv is None or dv <= 0:
                continue
        else:
            dv = d["value"]
            if dv == 0:
                continue
        out[name] = {
            "value": n["value"] / dv,
            "tag": f"{n['tag']} / {d['tag']}",
            "qtrs": n["qtrs"],
            "ddate": n["ddate"],
            "entity": n["entity"],
            "rule": "ratio of gold facts",
            "source_adsh": "|".join(sorted({x["source_adsh"] for x in (n, d) if "source_adsh" in x})),
        }
    return out


def gold_items(q: Quarter, adshs: Collection[str] | None = None) -> pd.DataFrame:
    """Every gold item of every filing of the quarter (or of ``adshs`` only): one row per ``(adsh, item)``
    that has a value.

    Columns: ``adsh, item, kind`` (fact / ratio), ``value`` (USD for facts, a fraction for ratios),
    ``tag`` (or ``derived``, or ``A / B`` for a ratio), ``qtrs, ddate, entity, rule, mezzanine`` (tags
    subtracted as temporary equity, ``|``-joined), ``source_adsh`` (the filing whose rows gave the value: the
    latest amendment of the period) and ``own_value`` (the filing's own value, NaN when it has none).
    Filings with no gold for an item have no row for it.
    """
    sub = q.sub.copy()
    if adshs is not None:
        wanted = sub[sub["adsh"].isin(set(adshs))]
        sub = sub[sub.set_index(["cik", "period"]).index.isin(wanted.set_index(["cik", "period"]).index)]
    own = {f["adsh"]: filing_items(q, f) for _, f in sub.iterrows()}
    sub = sub.sort_values("accepted")
    rows = []
    for _, f in sub.iterrows():
        if adshs is not None and f["adsh"] not in adshs:
            continue
        later = sub[(sub["cik"] == f["cik"]) & (sub["period"] == f["period"]) & (sub["accepted"] >= f["accepted"])]
        sources = list(reversed(later["adsh"].tolist()))  # latest first, the filing itself last
        facts: dict[str, dict] = {}
        for item in FACT_ITEMS:
            src = next((a for a in sources if item in own[a]), None)
            if src is not None:
                facts[item] = {**own[src][item], "source_adsh": src}
        for kind, values in (("fact", facts), ("ratio", ratios(facts))):
            for item, g in values.items():
                mine = own[f["adsh"]].get(item) if kind == "fact" else ratios(own[f["adsh"]]).get(item)
                rows.append(
                    {
                        "adsh": f["adsh"],
                        "item": item,
                        "kind": kind,
                        "value": g["value"],
                        "tag": g["tag"],
                        "qtrs": g["qtrs"],
                        "ddate": g["ddate"],
                        "entity": g["entity"],
                        "rule": g["rule"],
                        "mezzanine": "|".join(g.get("mezzanine", [])),
                        "source_adsh": g.get("source_adsh", f["adsh"]),
                        "own_value": mine["value"] if mine else float("nan"),
                    }
                )
    return pd.DataFrame(rows)
