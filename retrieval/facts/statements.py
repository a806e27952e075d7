"""What a filing's own presentation says: its top revenue line, the items between its liabilities and its
equity, which legal entity it speaks for, whether it was amended, and values implausible for the filer.

Source: the SEC's Financial Statement Data Sets readme (``readme.htm`` in every FSDS archive): pre.txt
gives, per accession, each tag's statement (``stmt``: BS balance sheet, IS income statement, CF cash
flow ...), its ``report`` and ``line`` (the order the filer presents it in) and its ``plabel``; num.txt's
``coreg`` names a co-registrant ("NULL indicates the consolidated entity"); sub.txt's ``prevrpt`` is 1
when "the submission was subsequently amended". :mod:`ingest.sec.fsds` writes these onto the Fact and
Filing nodes (``stmt``, ``report``, ``line``, ``plabel``, ``coreg``, ``prevrpt``).

Rules (each decision a memo takes from here is written into its claim's note, so a reader can disagree
with a line, not with a black box):

- **Entity** (:func:`parent_entity`): the consolidated registrant's facts (no ``coreg``) when the filing
  has any; when every fact carries a ``coreg`` (SEMPRA ENERGY's 10-Q 0000086521-09-000047: a parent and its
  utility subsidiaries filing together), the ``ParentCompany`` member's, which is the registrant itself in
  the legal-entity axis. The other co-registrants stay in the graph as separate entities of the filing
  (their facts keep their ``coreg``) and the memo names them.
- **Top revenue line** (:func:`top_revenue_line`): when none of the canonical revenue tags is reported,
  the income statement (the first IS report) is read in line order; its revenue block runs from the first
  line to the first cost or expense line; of the block's lines whose tag or label says revenue or sales,
  the largest (own-period figure; the later line on a tie) is the total: a total is at least its parts
  (Newmont's "Sales - gold", "Sales - copper", then "Total revenues, net"; SEMPRA's "Total revenues" above its
  "Total utility operating revenues"). An income statement without such a line (a bank's starts with
  interest income) has no total revenue line and revenue stays not reported.
- **Temporary (mezzanine) equity** (:func:`mezzanine_items`): the balance sheet (the first BS report) is
  read backwards from the first equity total (``StockholdersEquity`` or its including-NCI form) over the
  equity section's lines (stock, capital, earnings, treasury ... tags, and a noncontrolling interest that
  follows them: AT&T's "Noncontrolling interest" above its "Total stockholders' equity"), then over the lines
  just before it, which are between liabilities and equity when their tag or label says temporary,
  redeemable or mezzanine equity, noncontrolling or minority interest, or a subsidiary's preferred stock;
  the walk stops at ``CommitmentsAndContingencies`` or the first other line with a value (a liability).
  Each such item is subtracted from the derived liabilities.
- **Plausibility** (:func:`implausible`): a value more than 100 times larger or smaller (two orders of
  magnitude) than the median of the same filer's same tag over the same span at other period ends.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from typing import Any

PARENT_COMPANY = "ParentCompany"
"""FSDS's ``coreg`` (the LegalEntityAxis member) for the registrant itself in a co-registrant filing."""

REVENUE_WORDS = re.compile(r"revenue|sales", re.IGNORECASE)
COST_WORDS = re.compile(
    r"cost|expense|fuel|purchased|depreciation|amortization|provision|maintenance|impairment", re.IGNORECASE
)
EQUITY_SECTION_TAG = re.compile(
    r"Stock(?!holdersEquityIncludingPortion)|Capital(?!Lease)|Earnings|Deficit|ComprehensiveIncome|Treasury|Equity|"
    r"Partners|Members|Units|Shares",
    re.IGNORECASE,
)
MEZZANINE_TAG = re.compile(r"Temporary|^Redeemable|RedeemableNoncontrolling|RedeemablePreferred|Mezzanine")
"""Tags that name temporary equity whatever their label (``ConvertiblePreferredStockNonredeemableOrRedeemable...``
is permanent equity: it does not match)."""
NONCONTROLLING_WORDS = re.compile(r"noncontrolling|non-controlling|minority", re.IGNORECASE)
MEZZANINE_WORDS = re.compile(
    r"temporary|redeemable|mezzanine|noncontrolling|non-controlling|minority|"
    r"preferred stock of subsidiar|subsidiar(?:y|ies)'? preferred|preferred (?:and common )?securities of subsidiar",
    re.IGNORECASE,
)
COMMITMENTS = "CommitmentsAndContingencies"
PLAUSIBLE_FACTOR = 100.0
"""Two orders of magnitude: beyond it a value is flagged against the filer's other periods."""


def parent_entity(coregs: Iterable[str | None]) -> str | None:
    """The ``coreg`` whose facts a memo of the filing uses: None (the consolidated registrant) when any
    fact has none, else ``ParentCompany`` when present, else None (a filing of subsidiaries only: no
    parent facts; its co-registrants are listed, never merged)."""
    seen = set(coregs)
    if not seen or None in seen or "" in seen:
        return None
    return PARENT_COMPANY if PARENT_COMPANY in seen else None


def _first_report(lines: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The facts of the lowest-numbered report among ``lines``, in line order."""
    placed = [x for x in lines if x.get("report") is not None and x.get("line") is not None]
    if not placed:
        return []
    first = min(int(x["report"]) for x in placed)
    return sorted((x for x in placed if int(x["report"]) == first), key=lambda x: int(x["line"]))


def _words(x: dict[str, Any]) -> str:
    return f"{x.get('tag') or ''} {x.get('plabel') or ''}"


def _is_cost(tag: str, label: str) -> bool:
    """A cost or expense line (``CostOfRevenue``, "Fuel"), not a revenue total named after its deductions
    (``RevenuesNetOfInterestExpense``)."""
    if tag.lower().startswith(("revenue", "sales")):
        return False
    return bool(COST_WORDS.search(tag) or (COST_WORDS.search(label) and not REVENUE_WORDS.search(tag)))


def top_revenue_line(lines: Sequence[dict[str, Any]]) -> tuple[str, str] | None:
    """``(tag, why)`` of the income statement's total revenue line (module docstring), or None.

    Args:
        lines: the filing's income-statement facts of its own period (``tag, report, line, plabel``; several
            spans of one tag are several rows).
    """
    ordered = _first_report(lines)
    chosen: dict[str, Any] | None = None
    seen_lines: list[int] = []
    for x in sorted(ordered, key=lambda x: (int(x["line"]), x.get("period_role") != "current")):
        tag, label = str(x.get("tag") or ""), str(x.get("plabel") or "")
        if _is_cost(tag, label):
            break
        if int(x["line"]) in seen_lines:
            continue  # a line's other spans: its own period's figure (sorted first) stands for it
        seen_lines.append(int(x["line"]))
        if not REVENUE_WORDS.search(f"{tag} {label}"):
            continue
        if (x.get("value") or 0) > 0 and (chosen is None or float(x["value"]) >= float(chosen["value"])):
            chosen = x
    if chosen is None:
        return None
    why = (
        f"the income statement's top revenue line: report {chosen['report']} line {chosen['line']} "
        f"{chosen.get('plabel')!r} (tag {chosen['tag']}), the largest revenue line (a total is at least its parts; "
        f"the later line on a tie) before the first cost or expense line (revenue block: lines "
        f"{min(seen_lines)}-{max(seen_lines)})"
    )
    return chosen["tag"], why


def mezzanine_items(lines: Sequence[dict[str, Any]], equity_tags: Sequence[str]) -> list[dict[str, Any]] | None:
    """The items between total liabilities and equity on the balance sheet (module docstring), in line order.

    Args:
        lines: the filing's balance-sheet facts at the period end (``tag, value, report, line, plabel``).
        equity_tags: the equity totals (``StockholdersEquity`` ...): the equity section ends at the first.

    Returns:
        The items (fact rows, with a value); an empty list when there are none; None when the balance
        sheet has no presentation or no equity total to start from (then the caller cannot tell).
    """
    ordered = _first_report(lines)
    at = next((i for i, x in enumerate(ordered) if x["tag"] in equity_tags), None)
    if at is None:
        return None

    def component(i: int) -> bool:
        return bool(EQUITY_SECTION_TAG.search(ordered[i]["tag"])) and not MEZZANINE_TAG.search(ordered[i]["tag"])

    def in_equity(i: int) -> bool:
        # a noncontrolling interest presented after equity components is permanent equity (ASC 810)
        if component(i):
            return True
        nci = NONCONTROLLING_WORDS.search(_words(ordered[i])) and not MEZZANINE_TAG.search(ordered[i]["tag"])
        return bool(nci) and i > 0 and component(i - 1) and "redeemable" not in _words(ordered[i]).lower()

    i = at - 1
    while i >= 0 and in_equity(i):
        i -= 1
    items: list[dict[str, Any]] = []
    while i >= 0:
        x = ordered[i]
        if x["tag"] == COMMITMENTS:
            break
        if MEZZANINE_WORDS.search(_words(x)):
            if x.get("value"):
                items.append(x)
        elif x.get("value"):
            break  # a liability: the section between liabilities and equity ends here
        i -= 1
    return sorted(items, key=lambda x: int(x["line"]))


def implausible(value: float, others: Sequence[float], signed: bool = False) -> str:
    """Why ``value`` is implausible against the same filer's ``others`` (same tag and span, other period
    ends): more than :data:`PLAUSIBLE_FACTOR` times their median absolute value, or less than
    1/:data:`PLAUSIBLE_FACTOR` of it; "" when plausible or when there is nothing to compare. ``signed``: a
    flow that crosses zero (net income, operating income, operating cash flow), where a small value is a
    near-breakeven period, not a scale error: only the upward jump is flagged."""
    typical = statistics.median(abs(v) for v in others) if others else 0.0
    if not typical or not value:
        return ""
    ratio = abs(value) / typical
    if (signed or ratio >= 1 / PLAUSIBLE_FACTOR) and ratio <= PLAUSIBLE_FACTOR:
        return ""
    return (
        f"implausible scale: {ratio:,.4g}x the median ({typical:,.0f}) of the filer's {len(others)} other "
        f"period(s) of this tag and span (more than two orders of magnitude apart; check the filing's scale)"
    )


def base_form(form: str | None) -> str:
    """``10-Q/A`` -> ``10-Q``: an amendment and its original share a form family."""
    return str(form or "").removesuffix("/A")


def latest_amendments(filings: Iterable[dict[str, Any]]) -> dict[str, str]:
    """For filings (``adsh, cik, form, period, filed, accepted``), each superseded accession -> the latest
    filing of the same company, period and form family (by acceptance, then filing date, then accession).
    Filings that are the latest of their group are not in the result."""
    groups: dict[tuple[Any, Any, str], list[dict[str, Any]]] = {}
    for f in filings:
        groups.setdefault((f.get("cik"), f.get("period"), base_form(f.get("form"))), []).append(f)
    out: dict[str, str] = {}
    for group in groups.values():
        if len(group) < 2:
            continue
        latest = max(group, key=lambda f: (str(f.get("accepted") or ""), str(f.get("filed") or ""), f["adsh"]))
        out.update({f["adsh"]: latest["adsh"] for f in group if f["adsh"] != latest["adsh"]})
    return out
