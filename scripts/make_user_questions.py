"""Write data/questions/sec-user.jsonl: analyst questions in users' own words over the shipped 2009q3 quarter (issue 44
part 4, "a question set that can fail").

Reproducible: ``python scripts/make_user_questions.py`` (fixed seed, reads only the shipped raw file
data/sec-fsds/2009q3.zip with pandas, and data/sec-fsds/20250404.zip's sub.txt to keep "latest" questions away from
companies that file again there). Written independently of finkg's answer engine: no finkg code is imported.

Rules (see also the header this writes into the question file):
- Filings: 10-Q and 10-Q/A, the company's only filing in the quarter, one registrant (nciks 1).
- Facts: whole-entity rows of num.txt (empty ``segments`` and ``coreg``), uom USD; a (tag, ddate, qtrs) with two
  different values is ambiguous and not used. FSDS rounds ddate to the nearest month end.
- Spans: a quarter is qtrs 1 at the filing's period end; year to date is qtrs = the fiscal quarter number (fp Qn);
  balance-sheet values are qtrs 0 at the period end; the year-earlier quarter is ddate one year earlier, qtrs 1.
- Measures: each has a documented priority list of us-gaap synonyms (MEASURES below). A measure is skipped for a
  filing and period when two of its synonyms are both reported with different values, or when no synonym is there.
  Current-ratio-type measures (and inventory, working capital) are skipped for banks and insurers (SIC 6000-6411);
  revenue for those only where ``Revenues`` itself is tagged.
- Names: rules over the EDGAR name (legal suffixes and /DE/-style state tags dropped, acronyms kept upper case) and a
  hand-written alias list (ALIASES: short names, abbreviations, tickers); an alias is kept only when no other
  company of the 2009q3 or 20250404 files has a name containing it (word-wise), checked here.
- Split: by company, sha256 of the decimal CIK: an even digest is ``dev``, an odd one ``test``. Two-company questions
  are drawn within one half only.

More development questions: ``python scripts/make_user_questions.py --seed 45 --splits dev --out
data/questions/sec-user-dev2.jsonl`` draws other companies, names, phrasings and periods of the development half
only (the same rules and templates), so a developer can look for failures without reading a test question.
"""

from __future__ import annotations

import argparse
import calendar
import hashlib
import json
import random
import re
import zipfile
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
QUARTER = ROOT / "data" / "sec-fsds" / "2009q3.zip"
DAILY = ROOT / "data" / "sec-fsds" / "20250404.zip"
OUT = ROOT / "data" / "questions" / "sec-user.jsonl"
SEED = 44

# ---------------------------------------------------------------------------------------------------------------
# measures: tag synonyms in priority order (a filing reporting two of them with different values is skipped)
# ---------------------------------------------------------------------------------------------------------------
TAGS: dict[str, list[str]] = {
    "revenue": ["Revenues", "SalesRevenueNet", "SalesRevenueGoodsNet", "SalesRevenueServicesNet"],
    "cost_of_revenue": ["CostOfRevenue", "CostOfGoodsSold", "CostOfGoodsAndServicesSold", "CostOfServices"],
    "gross_profit": ["GrossProfit"],
    "net_income": ["NetIncomeLoss"],
    "operating_income": ["OperatingIncomeLoss"],
    "rnd": ["ResearchAndDevelopmentExpense"],
    "sga": ["SellingGeneralAndAdministrativeExpense"],
    "income_tax": ["IncomeTaxExpenseBenefit"],
    "pretax_income": [
        "IncomeLossFromContinuingOperationsBeforeIncomeTaxesExtraordinaryItemsNoncontrollingInterest",
        "IncomeLossFromContinuingOperationsBeforeIncomeTaxesMinorityInterestAndIncomeLossFromEquityMethodInvestments",
    ],
    "capex": ["PaymentsToAcquirePropertyPlantAndEquipment"],
    "ocf": [
        "NetCashProvidedByUsedInOperatingActivities",
        "NetCashProvidedByUsedInOperatingActivitiesContinuingOperations",
    ],
    "interest_expense": ["InterestExpense"],
    "cash": ["CashAndCashEquivalentsAtCarryingValue", "Cash"],
    "assets": ["Assets"],
    "liabilities": ["Liabilities"],
    "equity": ["StockholdersEquity"],
    "ltd": ["LongTermDebtNoncurrent", "LongTermDebt"],
    "inventory": ["InventoryNet"],
    "current_assets": ["AssetsCurrent"],
    "current_liabilities": ["LiabilitiesCurrent"],
    # operands of MORE_MEASURES only
    "da": ["DepreciationAndAmortization", "DepreciationDepletionAndAmortization"],
    "receivables": ["AccountsReceivableNetCurrent"],
}


@dataclass(frozen=True)
class Measure:
    id: str
    kind: str  # value | ratio
    span: str  # quarter | ytd | instant
    unit: str  # USD | % | x | days
    formula: str  # over operand names (keys of TAGS)
    phrases: tuple[str, ...]
    balance_only: bool = False  # needs a classified balance sheet: not for banks and insurers


MEASURES: dict[str, Measure] = {
    m.id: m
    for m in [
        # values
        Measure("revenue", "value", "quarter", "USD", "revenue", ("revenue", "sales", "total revenues", "net sales")),
        Measure("net_income", "value", "quarter", "USD", "net_income", ("net income", "net earnings", "profit")),
        Measure(
            "operating_income", "value", "quarter", "USD", "operating_income", ("operating income", "operating profit")
        ),
        Measure("gross_profit", "value", "quarter", "USD", "gross_profit", ("gross profit",)),
        Measure("rnd", "value", "quarter", "USD", "rnd", ("R&D expense", "research and development spending", "R&D")),
        Measure("sga", "value", "quarter", "USD", "sga", ("SG&A", "selling, general and administrative expense")),
        Measure("income_tax", "value", "quarter", "USD", "income_tax", ("income tax expense", "tax provision")),
        Measure("capex", "value", "ytd", "USD", "capex", ("capital expenditure", "capex", "capital spending")),
        Measure("ocf", "value", "ytd", "USD", "ocf", ("operating cash flow", "cash from operations")),
        Measure("fcf", "value", "ytd", "USD", "ocf - capex", ("free cash flow", "FCF")),
        Measure("cash", "value", "instant", "USD", "cash", ("cash", "cash and cash equivalents", "cash on hand")),
        Measure("assets", "value", "instant", "USD", "assets", ("total assets",)),
        Measure("liabilities", "value", "instant", "USD", "liabilities", ("total liabilities",)),
        Measure("equity", "value", "instant", "USD", "equity", ("stockholders' equity", "shareholders' equity")),
        Measure("ltd", "value", "instant", "USD", "ltd", ("long-term debt",)),
        Measure("inventory", "value", "instant", "USD", "inventory", ("inventory", "inventories"), True),
        Measure(
            "working_capital",
            "value",
            "instant",
            "USD",
            "current_assets - current_liabilities",
            ("working capital",),
            True,
        ),
        # ratios
        Measure(
            "gross_margin",
            "ratio",
            "quarter",
            "%",
            "gross_profit / revenue * 100",
            ("gross margin", "gross profit margin", "gross margin %"),
        ),
        Measure(
            "operating_margin",
            "ratio",
            "quarter",
            "%",
            "operating_income / revenue * 100",
            ("operating margin", "operating profit margin"),
        ),
        Measure(
            "net_margin", "ratio", "quarter", "%", "net_income / revenue * 100", ("net margin", "net profit margin")
        ),
        Measure(
            "rnd_share",
            "ratio",
            "quarter",
            "%",
            "rnd / revenue * 100",
            ("R&D as a percentage of revenue", "R&D intensity", "R&D spending as a share of sales"),
        ),
        Measure(
            "sga_share",
            "ratio",
            "quarter",
            "%",
            "sga / revenue * 100",
            ("SG&A as a percent of sales", "SG&A to revenue ratio", "SG&A as a share of revenue"),
        ),
        Measure(
            "tax_rate",
            "ratio",
            "quarter",
            "%",
            "income_tax / pretax_income * 100",
            ("effective tax rate", "effective tax rate (ETR)"),
        ),
        Measure(
            "current_ratio",
            "ratio",
            "instant",
            "x",
            "current_assets / current_liabilities",
            ("current ratio",),
            True,
        ),
        Measure(
            "quick_ratio",
            "ratio",
            "instant",
            "x",
            "(current_assets - inventory) / current_liabilities",
            ("quick ratio", "acid-test ratio"),
            True,
        ),
        Measure("cash_ratio", "ratio", "instant", "x", "cash / current_liabilities", ("cash ratio",), True),
        Measure(
            "debt_to_equity",
            "ratio",
            "instant",
            "x",
            "ltd / equity",
            ("debt to equity ratio", "debt-to-equity", "D/E ratio"),
        ),
        Measure(
            "liabilities_to_equity",
            "ratio",
            "instant",
            "x",
            "liabilities / equity",
            ("liabilities to equity ratio", "total liabilities to equity"),
        ),
        Measure(
            "liabilities_to_assets",
            "ratio",
            "instant",
            "%",
            "liabilities / assets * 100",
            ("liabilities to assets ratio", "total liabilities as a share of total assets"),
        ),
        Measure("roa", "ratio", "quarter_instant", "%", "net_income / assets * 100", ("return on assets", "ROA")),
        Measure("roe", "ratio", "quarter_instant", "%", "net_income / equity * 100", ("return on equity", "ROE")),
        Measure(
            "ocf_margin",
            "ratio",
            "ytd",
            "%",
            "ocf / revenue * 100",
            ("operating cash flow margin", "cash flow margin", "OCF margin"),
        ),
        Measure(
            "interest_coverage",
            "ratio",
            "quarter",
            "x",
            "operating_income / interest_expense",
            ("interest coverage", "interest coverage ratio", "times interest earned"),
        ),
    ]
}
MORE_MEASURES: dict[str, Measure] = {
    m.id: m
    for m in [
        Measure("cost_of_revenue", "value", "quarter", "USD", "cost_of_revenue",
                ("cost of revenue", "cost of sales", "cost of goods sold", "COGS")),
        Measure("pretax_income", "value", "quarter", "USD", "pretax_income",
                ("pretax income", "income before income taxes", "pre-tax profit")),
        Measure("ebitda", "value", "ytd", "USD", "operating_income + da", ("EBITDA",)),
        Measure("receivables", "value", "instant", "USD", "receivables", ("accounts receivable", "receivables")),
        Measure("current_assets", "value", "instant", "USD", "current_assets", ("current assets", "total current assets"),
                True),
        Measure("current_liabilities", "value", "instant", "USD", "current_liabilities",
                ("current liabilities", "total current liabilities"), True),
        Measure("asset_turnover", "ratio", "quarter_instant", "x", "revenue / assets",
                ("asset turnover", "total asset turnover")),
        Measure("inventory_turnover", "ratio", "quarter_instant", "x", "cost_of_revenue / inventory",
                ("inventory turnover", "inventory turns"), True),
        Measure("dso", "ratio", "quarter_instant", "days", "receivables / revenue * days",
                ("days sales outstanding", "DSO", "days of sales outstanding")),
        Measure("dio", "ratio", "quarter_instant", "days", "inventory / cost_of_revenue * days",
                ("days inventory outstanding", "DIO", "days of inventory"), True),
        Measure("pretax_margin", "ratio", "quarter", "%", "pretax_income / revenue * 100",
                ("pretax margin", "pre-tax margin")),
        Measure("ebitda_margin", "ratio", "ytd", "%", "(operating_income + da) / revenue * 100", ("EBITDA margin",)),
    ]
}  # fmt: skip
"""Measures beyond MEASURES, for the development probe of catalog measures the question sets never ask
(``bench/ask_dev_exhaustive.py --more``): EBITDA (operating income plus depreciation and amortization, over the cash
flow statement's year-to-date span, where D&A is reported) and its margin, the pretax margin, turnover ratios, days
sales outstanding (receivables over the period's revenue times its days, a year of 365 days, a quarter of 365/4:
:data:`DAYS_PER_QUARTER`) and days inventory outstanding (inventory over the period's cost of revenue times its days;
balances at the period end, not averaged, as the catalog's definitions). Not used by :func:`main`, so the shipped
question sets do not change."""

DAYS_PER_QUARTER = 365 / 4

TTM_MEASURES = ("revenue", "net_income", "operating_income", "ocf", "fcf", "operating_margin", "net_margin")
"""Measures asked over the trailing twelve months (``bench/ask_dev_exhaustive.py --ttm``): flows and flow margins."""
T_TTM = [
    "What was {pos} trailing twelve months {m} as of {d}?",
    "{co} TTM {m} as of {d}?",
    "What was {pos} {m} for the twelve months ended {d}?",
    "LTM {m} at {co} through {d}?",
    "How much {m} did {co} have over the trailing 12 months ended {d}?",
]
"""Trailing-twelve-months questions, ``{d}`` the 10-Q's period end as it states it."""


def months_before(ddate: str, months: int) -> str:
    """The month end ``months`` months before the month end ``ddate`` (``YYYYMMDD``)."""
    y, m = divmod(int(ddate[:4]) * 12 + int(ddate[4:6]) - 1 - months, 12)
    return f"{y}{m + 1:02d}{calendar.monthrange(y, m + 1)[1]:02d}"


def ttm_gold(facts: Facts, q: Filing, k: Filing, m: Measure) -> dict | None:
    """Measure ``m`` over the twelve months ended 10-Q ``q``'s period, ``k`` the company's 10-K for the fiscal year
    before: each flow operand is the 10-K's year (qtrs 4) + the 10-Q's year to date - the 10-Q's same span a year
    earlier (its comparative column), each by the operand's synonym list; None when a fact is missing or ambiguous,
    or the 10-K's year does not end where the 10-Q's year to date begins."""
    n = q.ytd_qtrs
    if months_before(q.period, 3 * n) != k.period:
        return None
    names = sorted(set(re.findall(r"[a-z_]+", m.formula)))
    values: dict[str, float] = {}
    parts: dict[str, list[dict]] = {}
    for name in names:
        ops = [facts.operand(k, name, k.period, 4), facts.operand(q, name, q.period, n),
               facts.operand(q, name, year_earlier(q.period), n)]  # fmt: skip
        if any(o is None for o in ops):
            return None
        values[name] = ops[0]["value"] + ops[1]["value"] - ops[2]["value"]
        parts[name] = ops  # type: ignore[assignment]
    try:
        value = evaluate(m.formula, values)
    except ZeroDivisionError:
        return None
    if m.unit == "%" and (values.get("revenue", 1) <= 0 or abs(value) > 100):
        return None
    return {"cik": q.cik, "name": q.name, "adsh": q.adsh, "annual_adsh": k.adsh, "formula": m.formula,
            "operands": parts, "value": value}  # fmt: skip


SPAN_CHANGE_MEASURES = (
    "cash",
    "assets",
    "liabilities",
    "equity",
    "ltd",
    "inventory",
    "working_capital",
    "receivables",
    "current_assets",
    "current_liabilities",
    "current_ratio",
    "debt_to_equity",
)
"""Balances asked how much they changed over a 10-Q's year to date (``bench/ask_dev_exhaustive.py --span-change``)."""
T_SPAN_CHANGE = [
    "How much did {pos} {m} change in the {span} ended {d}?",
    "What was the change in {pos} {m} during the {span} ended {d}?",
    "By how much did {pos} {m} increase or decrease over the {span} ended {d}?",
]
T_SPAN_CHANGE_PERCENT = [
    "By what percent did {pos} {m} change in the {span} ended {d}?",
    "What was the percentage change in {pos} {m} over the {span} ended {d}?",
]


def change_span(n: int) -> str:
    """How a question names a 10-Q's year to date of ``n`` quarters: "quarter", "six months", "nine months"."""
    return "quarter" if n == 1 else f"{SPANS[n]} months"


def span_change_gold(facts: Facts, f: Filing, m: Measure, percent: bool = False) -> dict | None:
    """How much balance measure ``m`` changed over 10-Q ``f``'s year to date: its value at the period end less its
    value at the fiscal year end before (the 10-Q's comparative balance sheet, ddate ``ytd_qtrs`` quarters
    earlier), both by the measure's synonym lists; in percent of the start's absolute value with ``percent``. None
    when either is missing or ambiguous, or the start is 0 (percent)."""
    if f.annual:
        return None
    end, start = compute(facts, f, m), compute(facts, f, m, months_before(f.period, 3 * f.ytd_qtrs))
    if end is None or start is None or (percent and start["value"] == 0):
        return None
    change = end["value"] - start["value"]
    value = change / abs(start["value"]) * 100 if percent else change
    return {"cik": f.cik, "name": f.name, "adsh": f.adsh, "formula": f"({m.formula}) at end - at start",
            "operands": {"end": end, "start": start}, "value": value}  # fmt: skip


GROWTH = {"revenue": "revenue", "net_income": "net income", "operating_income": "operating income"}
GROWTH_PHRASES = {
    "revenue": ("revenue", "sales", "top line"),
    "net_income": ("net income", "earnings", "net profit"),
    "operating_income": ("operating income", "operating profit"),
}


@dataclass(frozen=True)
class Element:
    """A reported line item outside the measure catalog, asked for in users' words ("how much goodwill", "diluted
    EPS", "share buybacks"): its value is the one us-gaap element's fact, no formula. ``tags``: the elements that
    report it (more than one only where they are the same quantity; all that are present must agree)."""

    id: str
    span: str  # quarter | ytd | instant
    tags: tuple[str, ...]
    phrases: tuple[str, ...]


ELEMENTS: dict[str, Element] = {
    e.id: e
    for e in [
        # balance sheet
        Element("goodwill", "instant", ("Goodwill",), ("goodwill",)),
        Element("retained_earnings", "instant", ("RetainedEarningsAccumulatedDeficit",), ("retained earnings",)),
        Element("ppe_net", "instant", ("PropertyPlantAndEquipmentNet",), ("net PP&E", "net property, plant and equipment")),
        Element("aoci", "instant", ("AccumulatedOtherComprehensiveIncomeLossNetOfTax",),
                ("accumulated other comprehensive income", "AOCI")),
        Element("treasury_stock", "instant", ("TreasuryStockValue",), ("treasury stock",)),
        Element("intangibles", "instant", ("IntangibleAssetsNetExcludingGoodwill",),
                ("intangible assets excluding goodwill", "net intangibles other than goodwill")),
        Element("accounts_payable", "instant", ("AccountsPayableCurrent",), ("accounts payable", "payables")),
        Element("accrued_liabilities", "instant", ("AccruedLiabilitiesCurrent",), ("accrued liabilities",)),
        Element("short_term_investments", "instant", ("ShortTermInvestments",), ("short-term investments",)),
        Element("current_ltd", "instant", ("LongTermDebtCurrent",),
                ("current portion of long-term debt", "long-term debt due within a year")),
        Element("deferred_revenue", "instant", ("DeferredRevenueCurrent",), ("current deferred revenue",)),
        Element("apic", "instant", ("AdditionalPaidInCapital",), ("additional paid-in capital", "APIC")),
        Element("nci", "instant", ("MinorityInterest",), ("noncontrolling interest", "minority interest")),
        Element("liabilities_and_equity", "instant", ("LiabilitiesAndStockholdersEquity",),
                ("total liabilities and shareholders' equity",)),
        # income statement, the quarter
        Element("eps_diluted", "quarter", ("EarningsPerShareDiluted",), ("diluted EPS", "diluted earnings per share")),
        Element("eps_basic", "quarter", ("EarningsPerShareBasic",), ("basic EPS", "basic earnings per share")),
        Element("interest_expense", "quarter", ("InterestExpense",), ("interest expense",)),
        Element("dividends_per_share", "quarter", ("CommonStockDividendsPerShareDeclared",),
                ("dividends declared per share", "declared dividend per share")),
        Element("nci_income", "quarter", ("NetIncomeLossAttributableToNoncontrollingInterest",),
                ("net income attributable to noncontrolling interests", "minority interest in earnings")),
        Element("costs_and_expenses", "quarter", ("CostsAndExpenses",), ("total costs and expenses",)),
        Element("equity_method_income", "quarter", ("IncomeLossFromEquityMethodInvestments",),
                ("equity-method income", "income from equity method investments")),
        # cash flow statement, year to date
        Element("sbc", "ytd", ("ShareBasedCompensation",), ("stock-based compensation", "share-based compensation")),
        Element("buybacks", "ytd", ("PaymentsForRepurchaseOfCommonStock",),
                ("share repurchases", "stock buybacks", "common stock repurchases")),
        Element("dividends_paid", "ytd", ("PaymentsOfDividends", "PaymentsOfDividendsCommonStock"),
                ("dividends paid", "cash dividends paid")),
        Element("investing_cash_flow", "ytd", ("NetCashProvidedByUsedInInvestingActivities",),
                ("net cash from investing activities", "investing cash flow")),
        Element("financing_cash_flow", "ytd", ("NetCashProvidedByUsedInFinancingActivities",),
                ("net cash from financing activities", "financing cash flow")),
        Element("acquisitions", "ytd", ("PaymentsToAcquireBusinessesNetOfCashAcquired",),
                ("cash paid for acquisitions", "acquisition spending")),
        Element("debt_repayments", "ytd", ("RepaymentsOfLongTermDebt",), ("repayments of long-term debt",)),
        Element("debt_issued", "ytd", ("ProceedsFromIssuanceOfLongTermDebt",),
                ("proceeds from long-term debt issuance", "new long-term borrowing")),
        Element("deferred_taxes", "ytd", ("DeferredIncomeTaxExpenseBenefit",), ("deferred income taxes",)),
        Element("d_and_a", "ytd", ("DepreciationAndAmortization", "DepreciationDepletionAndAmortization"),
                ("depreciation and amortization", "D&A")),
        Element("change_in_cash", "ytd", ("CashAndCashEquivalentsPeriodIncreaseDecrease",),
                ("net change in cash", "increase or decrease in cash")),
        Element("option_proceeds", "ytd", ("ProceedsFromStockOptionsExercised",),
                ("proceeds from stock option exercises",)),
    ]
}  # fmt: skip
"""Line items beyond MEASURES, for the development probe of "measures the code has never seen" (issue 44;
``bench/ask_dev_exhaustive.py --kinds element``). Phrases are the words analysts use, written before any was asked
of the engine; not used by :func:`main`, so the shipped question sets do not change."""


def element_gold(facts: Facts, f: Filing, e: Element) -> dict | None:
    """The element's value for filing ``f`` at its period end (instant: qtrs 0; quarter: 1, a 10-K's 4; ytd: the fiscal
    quarter number): ``{"tag", "value", "ddate", "qtrs"}``, or None when no tag is reported, a tag is ambiguous, or the
    present tags disagree."""
    qtrs = {"instant": 0, "quarter": f.quarter_qtrs, "ytd": f.ytd_qtrs}[e.span]
    found = []
    for tag in e.tags:
        v = facts.one(f.adsh, tag, f.period, qtrs)
        if v == "ambiguous":
            return None
        if v is not None:
            found.append((tag, float(v)))
    if not found or len({v for _, v in found}) > 1:
        return None
    return {"tag": found[0][0], "value": found[0][1], "ddate": f.period, "qtrs": qtrs}


# ---------------------------------------------------------------------------------------------------------------
# names
# ---------------------------------------------------------------------------------------------------------------
# Hand-written aliases for well-known firms (by CIK): short names, abbreviations and 2009 tickers people use.
ALIASES: dict[int, list[str]] = {
    1800: ["Abbott", "Abbott Labs", "ABT"],
    200406: ["J&J", "Johnson and Johnson", "JNJ"],
    78003: ["Pfizer", "PFE"],
    21665: ["Colgate", "Colgate-Palmolive"],
    47217: ["HP", "Hewlett-Packard", "HPQ"],
    97476: ["Texas Instruments", "TI", "TXN"],
    826083: ["Dell"],
    72971: ["Wells Fargo", "WFC"],
    30554: ["DuPont"],
    732717: ["AT&T"],
    37996: ["Ford"],
    40545: ["GE", "General Electric"],
    51143: ["IBM", "Big Blue"],
    34088: ["Exxon", "ExxonMobil", "XOM"],
    93410: ["Chevron", "CVX"],
    50863: ["Intel", "INTC"],
    320193: ["Apple", "AAPL"],
    1288776: ["Google", "GOOG"],
    1018724: ["Amazon", "Amazon.com", "AMZN"],
    21344: ["Coca-Cola", "Coke", "KO"],
    104169: ["Walmart", "Wal-Mart", "WMT"],
    64978: ["Merck", "MRK"],
    59478: ["Eli Lilly", "Lilly", "LLY"],
    14272: ["Bristol-Myers Squibb", "Bristol-Myers", "BMS"],
    318154: ["Amgen", "AMGN"],
    882095: ["Gilead"],
    310158: ["Schering-Plough"],
    66740: ["3M", "MMM"],
    12927: ["Boeing"],
    18230: ["Caterpillar", "CAT"],
    315189: ["Deere", "John Deere"],
    354950: ["Home Depot"],
    60667: ["Lowe's", "Lowes"],
    63908: ["McDonald's", "McDonalds", "MCD"],
    829224: ["Starbucks", "SBUX"],
    1001039: ["Disney", "Walt Disney"],
    732712: ["Verizon"],
    1341439: ["Oracle", "ORCL"],
    1045810: ["Nvidia", "NVDA"],
    804328: ["Qualcomm", "QCOM"],
    1065088: ["eBay"],
    1011006: ["Yahoo", "Yahoo!"],
    1065280: ["Netflix", "NFLX"],
    64670: ["Medtronic"],
    10456: ["Baxter"],
    64803: ["CVS", "CVS Caremark"],
    1166691: ["Comcast"],
    56873: ["Kroger"],
    55067: ["Kellogg", "Kellogg's"],
    1103982: ["Kraft", "Kraft Foods"],
    46640: ["Heinz", "H.J. Heinz"],
    47111: ["Hershey"],
    55785: ["Kimberly-Clark"],
    1413329: ["Philip Morris International", "PMI"],
    764180: ["Altria"],
    1090727: ["UPS"],
    1048911: ["FedEx"],
    92380: ["Southwest Airlines"],
    101829: ["United Technologies", "UTX"],
    773840: ["Honeywell"],
    936468: ["Lockheed Martin", "Lockheed"],
    1047122: ["Raytheon"],
    1133421: ["Northrop Grumman", "Northrop"],
    19617: ["JPMorgan", "JPMorgan Chase", "JPM"],
    70858: ["Bank of America", "BofA"],
    831001: ["Citigroup", "Citi"],
    886982: ["Goldman Sachs", "Goldman"],
    1067983: ["Berkshire Hathaway", "Berkshire"],
    5272: ["AIG"],
    4962: ["American Express", "Amex"],
    1163165: ["ConocoPhillips", "Conoco"],
    797468: ["Occidental", "Occidental Petroleum"],
    87347: ["Schlumberger"],
    45012: ["Halliburton"],
    29915: ["Dow Chemical", "Dow"],
    831259: ["Freeport-McMoRan", "Freeport"],
    1164727: ["Newmont"],
    24545: ["Molson Coors"],
    1170650: ["Medco"],
    731766: ["UnitedHealth"],
    1108524: ["Salesforce", "salesforce.com"],
    712515: ["Electronic Arts"],
    718877: ["Activision Blizzard", "Activision"],
    885639: ["Kohl's"],
    794367: ["Macy's"],
    1166126: ["J.C. Penney", "JCPenney"],
    793952: ["Harley-Davidson", "Harley"],
    49826: ["Illinois Tool Works", "ITW"],
    32604: ["Emerson Electric", "Emerson"],
    1021860: ["National Oilwell Varco", "NOV"],
    934612: ["Burlington Northern", "BNSF"],
    89800: ["Sherwin-Williams"],
    875045: ["Biogen Idec", "Biogen"],
    10795: ["Becton Dickinson", "Becton"],
    203077: ["St. Jude Medical", "St. Jude"],
    9892: ["C.R. Bard", "Bard"],
    97745: ["Thermo Fisher"],
    920148: ["LabCorp"],
    1059556: ["Moody's"],
    64040: ["McGraw-Hill"],
    277135: ["W.W. Grainger", "Grainger"],
    804055: ["Coca-Cola Enterprises", "CCE"],
    101778: ["Marathon Oil", "Marathon"],
    1163302: ["U.S. Steel", "US Steel"],
    101830: ["Sprint Nextel", "Sprint"],
    901491: ["Papa John's"],
    1000697: ["Waters"],
    29989: ["Omnicom"],
    1058290: ["Cognizant"],
    827054: ["Microchip"],
    23082: ["Computer Sciences", "CSC"],
    86144: ["Safeway"],
    40704: ["General Mills"],
    26172: ["Cummins"],
    75362: ["Paccar"],
    31277: ["Eaton"],
    313616: ["Danaher"],
    79879: ["PPG"],
    884905: ["Praxair"],
    2969: ["Air Products"],
    31462: ["Ecolab"],
    850693: ["Allergan"],
    816284: ["Celgene"],
    732485: ["Genzyme"],
    310764: ["Stryker"],
    885725: ["Boston Scientific"],
    1035267: ["Intuitive Surgical"],
    1274057: ["Hospira"],
    1121788: ["Garmin"],
    1274494: ["First Solar"],
    1339947: ["Viacom"],
    1105705: ["Time Warner"],
    12659: ["H&R Block"],
    723531: ["Paychex"],
    798354: ["Fiserv"],
    1365135: ["Western Union"],
    815556: ["Fastenal"],
    63276: ["Mattel"],
    1275283: ["Reynolds American"],
    1424847: ["Lorillard"],
    4447: ["Hess"],
    773910: ["Anadarko"],
    6769: ["Apache"],
    1090012: ["Devon", "Devon Energy"],
    1035002: ["Valero"],
    895126: ["Chesapeake"],
    808362: ["Baker Hughes"],
    1064728: ["Peabody"],
    106535: ["Weyerhaeuser"],
    51434: ["International Paper"],
    24741: ["Corning"],
    1053507: ["American Tower"],
    1048286: ["Marriott"],
    818686: ["Teva"],
    1144519: ["Bunge"],
    1124198: ["Fluor"],
    52988: ["Jacobs Engineering", "Jacobs"],
    68505: ["Motorola"],
    790070: ["EMC"],
    108772: ["Xerox"],
    849399: ["Symantec"],
    1403161: ["Visa"],
    1141391: ["MasterCard"],
    769397: ["Autodesk"],
    877890: ["Citrix"],
    1043604: ["Juniper", "Juniper Networks"],
    6951: ["Applied Materials", "AMAT"],
    6281: ["Analog Devices", "ADI"],
    1054374: ["Broadcom"],
    768251: ["Altera"],
    1086222: ["Akamai"],
    1326380: ["GameStop"],
    791519: ["Staples"],
    109198: ["TJX"],
    72333: ["Nordstrom"],
    927653: ["McKesson"],
    885721: ["Express Scripts"],
    1156039: ["WellPoint"],
    1122304: ["Aetna"],
    701221: ["Cigna"],
    49071: ["Humana"],
    73309: ["Nucor"],
    4281: ["Alcoa"],
    8868: ["Avon"],
    27419: ["Target"],
    1001082: ["DISH Network", "Dish"],
    316709: ["Charles Schwab", "Schwab"],
    1113169: ["T. Rowe Price"],
    103379: ["VF Corp", "VF"],
    29669: ["RR Donnelley"],
    39911: ["Gap"],
    944868: ["DirecTV Group"],
    1043277: ["C.H. Robinson", "CH Robinson"],
}
SUFFIXES = {
    "INC",
    "INCORPORATED",
    "CORP",
    "CORPORATION",
    "CO",
    "COMPANY",
    "LTD",
    "LIMITED",
    "PLC",
    "LLC",
    "LP",
    "L P",
    "AG",
    "NV",
    "SA",
    "THE",
}
LOWER_WORDS = {"OF", "AND", "THE", "DE"}
COMMON_WORDS = {"OIL", "GAS", "AIR", "ART", "NEW", "ONE", "SUN", "GAP", "TEX", "BIG", "CAN"}
CASE = {
    "Amerisourcebergen": "AmerisourceBergen",
    "Directv": "DirecTV",
    "Ebay": "eBay",
    "Memc": "MEMC",
    "Mastercard": "MasterCard",
    "Gamestop": "GameStop",
    "Conocophillips": "ConocoPhillips",
    "Borgwarner": "BorgWarner",
    "Intercontinentalexchange": "IntercontinentalExchange",
    "Unitedhealth": "UnitedHealth",
    "Wellpoint": "WellPoint",
    "Davita": "DaVita",
    "Firstenergy": "FirstEnergy",
    "Centerpoint": "CenterPoint",
    "Verisign": "VeriSign",
    "Paccar": "PACCAR",
    "Mcafee": "McAfee",
    "Sandridge": "SandRidge",
    "Graftech": "GrafTech",
    "Petrohawk": "PetroHawk",
    "Ace": "ACE",
    "Kbr": "KBR",
    "Fedex": "FedEx",
    "McMoran": "McMoRan",
}
# EDGAR names written surname-first or letter by letter: the rule-made name is not what people write
RULE_NAME_UNUSED = {316709, 1113169, 59478, 46640, 277135, 9892, 30554, 1166126, 103379, 19617, 1043277, 1099534}


def clean_name(edgar: str) -> str:
    """EDGAR name -> the name people write: state tags, punctuation and legal suffixes dropped, case restored."""
    s = re.sub(r"\s*[/\\][A-Z]{2,3}[/\\]?\s*$", "", edgar.strip())  # /DE/, /NY, \DE\, /NEW/
    s = re.sub(r"\s*[/\\][A-Z]+[/\\]\s*$", "", s)
    s = s.rstrip("/").replace(",", " ").replace(".", " ")
    words = s.split()
    while len(words) > 1 and words[-1] in SUFFIXES:
        words.pop()
    while len(words) > 2 and " ".join(words[-2:]) in SUFFIXES:
        words = words[:-2]
    out = []
    for i, w in enumerate(words):
        if i and w in LOWER_WORDS:
            out.append(w.lower())  # Expeditors International of Washington
        elif "&" in w or not re.search(r"[AEIOUY]", w) or (len(w) <= 3 and w not in COMMON_WORDS):
            out.append(w)  # AT&T, NRG, CSX, EOG, 3M
        else:
            t = "-".join(x[:1] + x[1:].lower() for x in w.split("-"))  # Ingersoll-Rand
            t = re.sub(r"^Mc([a-z])", lambda m: "Mc" + m.group(1).upper(), t)  # McDermott
            out.append(CASE.get(t, t))
    return " ".join(out)


def norm_words(s: str) -> list[str]:
    return re.sub(r"[^a-z0-9&]+", " ", s.lower().replace("-", " ").replace("'s", "")).split()


def contains_words(name: str, alias: str) -> bool:
    n, a = norm_words(name), norm_words(alias)
    return any(n[i : i + len(a)] == a for i in range(len(n) - len(a) + 1))


def names_for(cik: int, edgar: str, all_names: dict[int, str]) -> list[str]:
    """Names people would write for the company, each unambiguous among all companies of the shipped files."""
    rule = [] if cik in RULE_NAME_UNUSED else [clean_name(edgar)]
    cands = [*rule, *ALIASES.get(cik, [])]
    keep: list[str] = []
    for a in cands:
        if not a or a in keep:
            continue
        clash = [c for c, n in all_names.items() if c != cik and (contains_words(n, a) or contains_words(a, n))]
        if not clash:
            keep.append(a)
    return keep


def possessive(name: str) -> str:
    if name.endswith("'s"):
        return name  # Lowe's, Macy's
    return name + ("'" if name.endswith("s") and not name.isupper() else "'s")


# ---------------------------------------------------------------------------------------------------------------
# periods
# ---------------------------------------------------------------------------------------------------------------
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
ORD = {1: "first", 2: "second", 3: "third", 4: "fourth"}
SPANS = {1: "three", 2: "six", 3: "nine", 4: "twelve"}


def fiscal_date(instance: str, period: str) -> str:
    """The period end the filing states: the date in its XBRL instance's name (``jnj-20090628.xml``: June 28, 2009,
    the EDGAR naming rule), when within 16 days of FSDS's month-end ``period``; else ``period``."""
    m = re.search(r"-(\d{8})\.xml$", instance)
    if m:
        try:
            a, b = date.fromisoformat(m.group(1)), date.fromisoformat(period)
        except ValueError:
            return period
        if abs((a - b).days) <= 16:
            return m.group(1)
    return period


def day(d: str) -> str:
    dt = date(int(d[:4]), int(d[4:6]), int(d[6:]))
    return f"{MONTHS[dt.month - 1]} {dt.day}, {dt.year}"


@dataclass
class Filing:
    adsh: str
    cik: int
    name: str
    sic: int
    fye: str
    fp: str
    period: str
    fiscal: str  # the period end as the filing states it (its XBRL instance's date), else FSDS's month end
    names: list[str] = field(default_factory=list)

    @property
    def calendar(self) -> bool:
        """A calendar fiscal year: fiscal quarter n ends in calendar month 3n."""
        return (
            self.fye == "1231"
            and self.period[4:] in ("0331", "0630", "0930", "1231")
            and (int(self.period[4:6]) // 3 == self.ytd_qtrs)
        )

    @property
    def annual(self) -> bool:
        """A 10-K: its flows are the fiscal year's (qtrs 4), its balances the year end's."""
        return self.fp == "FY"

    @property
    def ytd_qtrs(self) -> int:
        return 4 if self.annual else int(self.fp[1])

    @property
    def quarter_qtrs(self) -> int:
        """The span of a quarter's flow: 1, a 10-K's fiscal year 4 (:attr:`annual`)."""
        return self.ytd_qtrs if self.annual else 1

    @property
    def financial(self) -> bool:
        return 6000 <= self.sic <= 6411


def year_phrases(f: Filing) -> list[str]:
    """A 10-K's fiscal year, as its flows are asked (:attr:`Filing.annual`)."""
    return [f"the year ended {day(f.fiscal)}", f"the twelve months ended {day(f.fiscal)}",
            f"the fiscal year ended {day(f.fiscal)}"]  # fmt: skip


def quarter_phrases(f: Filing) -> list[str]:
    y, m = f.period[:4], int(f.period[4:6])
    out = [f"the quarter ended {day(f.fiscal)}", f"the three months ended {day(f.fiscal)}"]
    if f.fiscal[4:6] == f.period[4:6]:
        out.append(f"the {MONTHS[m - 1]} {y} quarter")
    if f.calendar:
        q = m // 3
        out += [f"Q{q} {y}", f"the {ORD[q]} quarter of {y}", f"{y} Q{q}", f"{ORD[q]}-quarter {y}"]
    return out


def instant_phrases(f: Filing) -> list[str]:
    y, m = f.period[:4], int(f.period[4:6])
    out = [f"as of {day(f.fiscal)}", f"at {day(f.fiscal)}"]
    if f.fiscal == f.period:
        out.append(f"at the end of {MONTHS[m - 1]} {y}")
    if f.calendar:
        out += [f"at the end of the {ORD[m // 3]} quarter of {y}", f"at Q{m // 3} {y} quarter-end"]
    return out


def ytd_phrases(f: Filing) -> list[str]:
    n = f.ytd_qtrs
    y = f.period[:4]
    out = [f"the {SPANS[n]} months ended {day(f.fiscal)}"]
    if f.calendar and n == 2:
        out += [f"the first half of {y}", f"H1 {y}"]
    if f.calendar:
        out += [f"the first {SPANS[n]} months of {y}"]
    return out


def style_phrases(f: Filing, m: Measure) -> tuple[str, list[str]]:
    """The period style of measure ``m`` (``quarter``, ``ytd`` or ``instant``) and the phrases that name filing ``f``'s
    period in it. A 10-K's flows, whatever their span, are its fiscal year's (``ytd``, :func:`year_phrases`)."""
    if f.annual and m.span != "instant":
        return "ytd", year_phrases(f)
    if m.span in ("quarter", "quarter_instant"):
        return "quarter", quarter_phrases(f)
    if m.span == "ytd":
        return "ytd", ytd_phrases(f)
    return "instant", instant_phrases(f)


# ---------------------------------------------------------------------------------------------------------------
# facts
# ---------------------------------------------------------------------------------------------------------------
def read(zpath: Path, member: str) -> pd.DataFrame:
    with zipfile.ZipFile(zpath) as z, z.open(member) as f:
        return pd.read_csv(f, sep="\t", dtype=str, keep_default_na=False, encoding="latin-1")


class Facts:
    def __init__(self, num: pd.DataFrame):
        whole = num[(num.segments == "") & (num.coreg == "") & (num.uom == "USD") & (num.value != "")]
        self.index: dict[tuple[str, str, str, int], set[float]] = {}
        for r in whole.itertuples(index=False):
            self.index.setdefault((r.adsh, r.tag, r.ddate, int(r.qtrs)), set()).add(float(r.value))
        self.tags_by_adsh: dict[str, set[str]] = {}
        self.ddates_by_adsh: dict[str, set[str]] = {}
        for r in num[["adsh", "tag", "ddate"]].itertuples(index=False):
            self.tags_by_adsh.setdefault(r.adsh, set()).add(r.tag)
            self.ddates_by_adsh.setdefault(r.adsh, set()).add(r.ddate)

    def one(self, adsh: str, tag: str, ddate: str, qtrs: int) -> float | str | None:
        """The value; None when absent; "ambiguous" when the whole-entity fact has two values."""
        vals = self.index.get((adsh, tag, ddate, qtrs))
        if not vals:
            return None
        return next(iter(vals)) if len(vals) == 1 else "ambiguous"

    def operand(self, f: Filing, name: str, ddate: str, qtrs: int) -> dict | None:
        """The operand by its synonym list: the first tag present, or None when absent or ambiguous."""
        found: list[tuple[str, float]] = []
        for tag in TAGS[name]:
            v = self.one(f.adsh, tag, ddate, qtrs)
            if v == "ambiguous":
                return None
            if v is not None:
                found.append((tag, float(v)))
        if not found or len({v for _, v in found}) > 1:
            return None
        if name == "revenue" and f.financial and found[0][0] != "Revenues":
            return None
        tag, v = found[0]
        return {"tag": tag, "adsh": f.adsh, "ddate": ddate, "qtrs": qtrs, "value": v}


def evaluate(formula: str, values: dict[str, float]) -> float:
    return float(eval(formula, {"__builtins__": {}}, dict(values)))


def year_earlier(d: str) -> str:
    return str(int(d[:4]) - 1) + d[4:]


def operand_span(m: Measure, name: str, f: Filing) -> tuple[str, int]:
    flow = name not in {"cash", "assets", "liabilities", "equity", "ltd", "inventory", "current_assets",
                        "current_liabilities", "receivables"}  # fmt: skip
    if m.span == "instant" or not flow:
        return f.period, 0
    if m.span == "ytd":
        return f.period, f.ytd_qtrs
    return f.period, f.quarter_qtrs  # quarter, quarter_instant


def compute(facts: Facts, f: Filing, m: Measure, ddate: str | None = None) -> dict | None:
    """The measure for the filing at its period end (or ``ddate`` for a quarter flow): value and spec."""
    base = m.formula.replace("days", repr(DAYS_PER_QUARTER * f.quarter_qtrs))  # dso: the period's days
    names = sorted(set(re.findall(r"[a-z_]+", base)))
    ops: dict[str, dict] = {}
    if m.id == "gross_profit" or "gross_profit" in names:
        # gross profit: GrossProfit where tagged, else revenue - cost of revenue
        d, q = ddate or f.period, f.quarter_qtrs
        gp = facts.operand(f, "gross_profit", d, q)
        if gp is None:
            rev, cost = facts.operand(f, "revenue", d, q), facts.operand(f, "cost_of_revenue", d, q)
            if rev is None or cost is None:
                return None
            formula = base.replace("gross_profit", "(revenue - cost_of_revenue)")
            names = sorted(set(re.findall(r"[a-z_]+", formula)))
        else:
            formula = base
    else:
        formula = base
    for n in names:
        d, q = operand_span(m, n, f)
        if ddate is not None:
            d = ddate
        op = facts.operand(f, n, d, q)
        if op is None:
            return None
        ops[n] = op
    if m.balance_only and f.financial:
        return None
    try:
        value = evaluate(formula, {k: v["value"] for k, v in ops.items()})
    except ZeroDivisionError:
        return None
    if (
        m.unit in ("%", "x", "days")
        and m.id not in ("tax_rate",)
        and any(ops[n]["value"] <= 0 for n in ops if n in ("revenue", "current_liabilities", "equity", "assets"))
    ):
        return None
    if m.id in MORE_MEASURES and any(ops[n]["value"] <= 0 for n in ops if n in ("inventory", "receivables")):
        return None  # a turnover or DSO over a zero or negative balance
    if m.id == "tax_rate" and not (ops["pretax_income"]["value"] > 0 and 0 <= value <= 60):
        return None  # a loss-year or odd tax rate is no question an analyst asks this way
    if m.id == "interest_coverage" and (ops["interest_expense"]["value"] <= 0 or ops["operating_income"]["value"] <= 0):
        return None
    if m.id in ("gross_margin", "operating_margin", "net_margin") and abs(value) > 100:
        return None
    if m.id == "debt_to_equity" and value > 20:
        return None
    return {
        "cik": f.cik,
        "name": f.name,
        "adsh": f.adsh,
        "formula": formula,
        "operands": ops,
        "value": value,
    }


# ---------------------------------------------------------------------------------------------------------------
# templates (at least four per kind; word order and vocabulary varied)
# ---------------------------------------------------------------------------------------------------------------
T_VALUE_FLOW = [
    "What was {pos} {m} in {p}?",
    "How much {m} did {co} report for {p}?",
    "{co} {m}, {p}?",
    "In {p}, what did {co} post in {m}?",
    "Give me {pos} {m} for {p}.",
    "{M} at {co} in {p}?",
    "what was {co}'s {m} for {p}",
]
T_VALUE_INSTANT = [
    "What was {pos} {m} {p}?",
    "How much {m} did {co} have {p}?",
    "{co}: {m} {p}?",
    "{P}, what was {pos} {m}?",
    "Show me {pos} {m} {p}.",
    "{M} on {pos} balance sheet {p}?",
]
T_VALUE_LATEST = [
    "What is {pos} {m}?",
    "{co} latest {m}?",
    "How much {m} does {co} have?",
    "What's the most recent {m} for {co}?",
    "{pos} {m} right now?",
]
T_RATIO = [
    "What was {pos} {m} in {p}?",
    "{co} {m} for {p}?",
    "Calculate {pos} {m} for {p}.",
    "In {p}, what was the {m} at {co}?",
    "What {m} did {co} run in {p}?",
    "how did {pos} {m} come out in {p}",
]
T_RATIO_INSTANT = [
    "What was {pos} {m} {p}?",
    "{co} {m} {p}?",
    "Compute the {m} for {co} {p}.",
    "{P}, what was {pos} {m}?",
    "Where did {pos} {m} stand {p}?",
]
T_RATIO_LATEST = [
    "What is {pos} {m}?",
    "{co} {m}?",
    "What's {pos} {m} now?",
    "Latest {m} for {co}?",
]
SINGLE_TEMPLATES = {
    "value": {"quarter": T_VALUE_FLOW, "ytd": T_VALUE_FLOW, "instant": T_VALUE_INSTANT, "latest": T_VALUE_LATEST},
    "ratio": {"quarter": T_RATIO, "ytd": T_RATIO, "instant": T_RATIO_INSTANT, "latest": T_RATIO_LATEST},
}
"""One company's value or ratio question, by measure kind and period style (``latest``: no period named)."""
T_CHANGE = [
    "How much did {pos} {m} grow year over year in {p}?",
    "{co} {m} growth y/y, {p}?",
    "What was the year-on-year change in {pos} {m} for {p}?",
    "By what percent did {pos} {m} change versus the same quarter a year earlier, {p}?",
    "{M} growth at {co} in {p} vs a year ago?",
    "How did {pos} {m} in {p} compare with the year-ago quarter, in percent?",
]
T_DIFF_FLOW = [
    "How much more {m} did {x} have than {y} in {p}?",
    "By how much did {xpos} {m} exceed {ypos} in {p}?",
    "What was the gap between {xpos} and {ypos} {m} in {p}?",
    "{xpos} {m} minus {ypos}, {p}?",
    "In {p}, how much higher was {xpos} {m} than {ypos}?",
]
T_DIFF_INSTANT = [
    "How much more {m} did {x} have than {y} {p}?",
    "By how much did {xpos} {m} exceed {ypos} {p}?",
    "{P}, what was the gap between {xpos} and {ypos} {m}?",
    "{xpos} {m} minus {ypos}, {p}?",
]
T_COMPARE = [
    "Which had the higher {m} in {p}, {x} or {y}, and by how much?",
    "Who had the higher {m} in {p}: {x} or {y}? By how much?",
    "{x} or {y}: which had a higher {m} in {p}, and by how much?",
    "Compare {xpos} and {ypos} {m} for {p}: which is higher, and by how much?",
    "In {p}, was {xpos} {m} higher than {ypos}? Which one was higher and by how much?",
]
T_COMPARE_INSTANT = [
    "Which had the higher {m} {p}, {x} or {y}, and by how much?",
    "{x} or {y}: whose {m} was higher {p}, and by how much?",
    "Compare {xpos} and {ypos} {m} {p}: which is higher, and by how much?",
    "{P}, which company had a higher {m}, {x} or {y}? By how much?",
]
T_RANK = [
    "Rank {a}, {b} and {c} by {m} in {p}.",
    "Order {a}, {b}, {c} from highest to lowest {m} for {p}.",
    "Which of {a}, {b} and {c} had the highest {m} in {p}? Rank all three.",
    "Sort {a}, {b} and {c} by {m}, highest first, {p}.",
]
T_RANK_INSTANT = [
    "Rank {a}, {b} and {c} by {m} {p}.",
    "Order {a}, {b}, {c} from highest to lowest {m} {p}.",
    "Sort {a}, {b} and {c} by {m}, highest first, {p}.",
    "{P}, which of {a}, {b} and {c} had the highest {m}? Rank them.",
]


def cap(s: str) -> str:
    return s[0].upper() + s[1:] if s else s


def fill(t: str, **kw: str) -> str:
    if "p" in kw:
        kw["P"] = cap(kw["p"])
    if "m" in kw:
        kw["M"] = cap(kw["m"])
    return t.format(**kw)


def split_of(cik: int) -> str:
    return "dev" if int(hashlib.sha256(str(cik).encode()).hexdigest(), 16) % 2 == 0 else "test"


HEADER = """# {over}, issue 44 part 4 ("a question set that can fail"). Written by
# scripts/make_user_questions.py (seed {seed}) with pandas from sub.txt and num.txt, independently of finkg's answer
# engine; regenerate with `python scripts/make_user_questions.py{args}`. Provenance of every gold: `spec` names each
# operand's filing (adsh), CIK, EDGAR name, us-gaap tag, ddate (FSDS month end), qtrs (span in quarters; 0 = balance
# sheet) and the formula; the value is whole-entity (empty segments and coreg), uom USD. Units: USD amounts in dollars;
# % measures (margins, shares, tax rate, ROA, ROE, liabilities to assets, growth) as percent numbers; x for current,
# quick and cash ratio, debt to equity, liabilities to equity, interest coverage. ROA and ROE are quarterly net income
# over period-end assets or equity, not annualised. Growth is against the same quarter a year earlier (ddate one year
# earlier, qtrs 1). compare gold: the winner (higher value) and the difference (points for %); rank gold: highest
# first; difference gold: the first-named company minus the second (positive). `abstain`: not in the data.
# SPLIT RULE (fixed before any tuning): by company: sha256 of the decimal CIK as text; an even digest is `dev`, an
# odd one `test`; two-company questions are drawn within one half only. Develop on dev; report test.
"""


def company_names(sub: pd.DataFrame, daily: pd.DataFrame) -> dict[int, str]:
    """CIK -> EDGAR name of every company of the quarter's and the later daily file's sub.txt (the names an alias
    must not collide with)."""
    return {int(r.cik): r.name for r in sub.itertuples()} | {
        int(r.cik): r.name for r in daily.itertuples() if int(r.cik) not in set(sub.cik.astype(int))
    }


def question_filings(sub: pd.DataFrame, all_names: dict[int, str], annual: bool = False) -> list[Filing]:
    """The filings questions are asked about (the rules of the module doc: a company's only 10-Q of the quarter, one
    registrant), in CIK order, each with the names it may be called by (:func:`company_names`). ``annual``: its only
    10-K instead (fp ``FY``; :attr:`Filing.annual`)."""
    counts = sub.cik.value_counts()
    forms, fp = (("10-K", "10-K/A"), "FY") if annual else (("10-Q", "10-Q/A"), "Q")
    filings: list[Filing] = []
    for r in sub.sort_values("cik", key=lambda s: s.astype(int)).itertuples():
        if counts[r.cik] != 1 or r.form not in forms or r.nciks != "1" or not r.fp.startswith(fp):
            continue
        f = Filing(
            r.adsh, int(r.cik), r.name, int(r.sic or 0), r.fye, r.fp, r.period, fiscal_date(r.instance, r.period)
        )
        f.names = names_for(f.cik, f.name, all_names)
        if f.names:
            filings.append(f)
    return filings


def later_ciks(daily: pd.DataFrame) -> set[int]:
    """Companies with newer periods in other shipped data (the 2025 daily file, companyfacts, XBRL instances): a
    question with no period ("What is X's current ratio?") is asked only of the others, whose latest is 2009q3's."""
    return set(daily.cik.astype(int)) | {1318605, 1640147, 320193, 1045810}


def draw(seed: int, splits: tuple[str, ...], quarter: Path) -> list[str]:
    """The questions of the halves ``splits`` only, drawn with ``random.Random(seed)`` over the FSDS quarter ZIP
    ``quarter``, as JSON lines (ids ``user-<kind>-NNN``)."""
    rng = random.Random(seed)
    sub = read(quarter, "sub.txt")
    num = read(quarter, "num.txt")
    daily = read(DAILY, "sub.txt")
    later = later_ciks(daily)
    all_names = company_names(sub, daily)
    filings = question_filings(sub, all_names)
    facts = Facts(num)
    by_split: dict[str, list[Filing]] = {s: [] for s in splits}
    for f in filings:
        if split_of(f.cik) in by_split:
            by_split[split_of(f.cik)].append(f)

    rows: list[dict] = []
    used: dict[int, int] = {}

    def name(f: Filing) -> str:
        return rng.choice(f.names)

    def pname(n: str) -> str:
        return possessive(n)

    def add(kind: str, measure: str, question: str, split: str, specs: list[dict], gold: dict, period: dict) -> None:
        rows.append(
            {
                "kind": kind,
                "measure": measure,
                "question": question,
                "split": split,
                "companies": [{"cik": s["cik"], "name": s["name"], "adsh": s["adsh"]} for s in specs],
                "period": period,
                "spec": [{k: s[k] for k in ("cik", "name", "adsh", "formula", "operands")} for s in specs],
                "gold": gold,
            }
        )

    def period_phrase(f: Filing, m: Measure, allow_latest: bool) -> tuple[str, str]:
        """(style, phrase): quarter/ytd/instant styles; 'latest' for a question with no period."""
        style, phrases = style_phrases(f, m)
        if style == "instant" and allow_latest and f.cik not in later and rng.random() < 0.3:
            return "latest", ""
        return style, rng.choice(phrases)

    def single(kind: str, m: Measure, f: Filing, split: str) -> bool:
        spec = compute(facts, f, m)
        if spec is None:
            return False
        style, p = period_phrase(f, m, allow_latest=True)
        co = name(f)
        mp = rng.choice(m.phrases)
        q = fill(rng.choice(SINGLE_TEMPLATES[kind][style]), co=co, pos=pname(co), m=mp, p=p)
        gold = {"value": spec["value"], "unit": m.unit}
        add(kind, m.id, q, split, [spec], gold, {"style": style, "phrase": p, "ddate": f.period, "fiscal": f.fiscal})
        used[f.cik] = used.get(f.cik, 0) + 1
        return True

    # 1. single-company value and ratio questions: measures in turn, companies drawn at random, at most 3 each
    for split, fs in by_split.items():
        for kind, per in (("value", 3), ("ratio", 3)):
            ms = [m for m in MEASURES.values() if m.kind == kind]
            for _round in range(per):
                for m in ms:
                    pool = [f for f in fs if used.get(f.cik, 0) < 3]
                    rng.shuffle(pool)
                    for f in pool:
                        if single(kind, m, f, split):
                            break
    # 2. year-over-year growth
    for split, fs in by_split.items():
        for _round in range(6):
            for mid in GROWTH:
                m = MEASURES[mid]
                pool = [f for f in fs if used.get(f.cik, 0) < 4]
                rng.shuffle(pool)
                for f in pool:
                    cur, prev = compute(facts, f, m), compute(facts, f, m, ddate=year_earlier(f.period))
                    if cur is None or prev is None or prev["value"] <= 0 or cur["value"] <= 0:
                        continue
                    tag = cur["operands"][mid]["tag"]
                    if prev["operands"][mid]["tag"] != tag:
                        continue
                    g = (cur["value"] / prev["value"] - 1) * 100
                    co, p = name(f), rng.choice(quarter_phrases(f))
                    q = fill(rng.choice(T_CHANGE), co=co, pos=pname(co), m=rng.choice(GROWTH_PHRASES[mid]), p=p)
                    spec = dict(cur)
                    spec["formula"] = f"({mid} - {mid}_year_earlier) / {mid}_year_earlier * 100"
                    spec["operands"] = {mid: cur["operands"][mid], f"{mid}_year_earlier": prev["operands"][mid]}
                    add(
                        "change",
                        f"{mid}_growth",
                        q,
                        split,
                        [spec],
                        {"value": g, "unit": "%"},
                        {"style": "quarter", "phrase": p, "ddate": f.period, "fiscal": f.fiscal},
                    )
                    used[f.cik] = used.get(f.cik, 0) + 1
                    break

    # 3. two-company questions, within one split, same period end
    def group(fs: list[Filing], m: Measure, k: int, gap: float) -> list[tuple[Filing, dict]] | None:
        """k companies of one period end (and one 2-digit SIC where possible) with the measure, values apart."""
        have = [(f, compute(facts, f, m)) for f in fs]
        have = [(f, s) for f, s in have if s is not None]
        rng.shuffle(have)
        for f0, s0 in have:
            same = [
                (f, s) for f, s in have if (f.fiscal, f.period, f.fye, f.fp) == (f0.fiscal, f0.period, f0.fye, f0.fp)
            ]
            same = [x for x in same if x[0].cik != f0.cik]
            peers = [x for x in same if str(x[0].sic)[:2] == str(f0.sic)[:2]] or same
            rng.shuffle(peers)
            pick = [(f0, s0)]
            for x in peers:
                vals = [s["value"] for _, s in pick]
                if all(abs(x[1]["value"] - v) > gap * max(abs(v), abs(x[1]["value"])) for v in vals):
                    pick.append(x)
                if len(pick) == k:
                    return pick
        return None

    diff_measures = ["revenue", "net_income", "operating_income", "cash", "assets", "equity", "gross_profit"]
    cmp_measures = ["gross_margin", "operating_margin", "net_margin", "current_ratio", "debt_to_equity", "roe",
                    "rnd_share", "liabilities_to_assets"]  # fmt: skip
    rank_measures = ["current_ratio", "net_margin", "operating_margin", "liabilities_to_assets", "roa", "quick_ratio"]
    for split, fs in by_split.items():
        for i in range(14):
            m = MEASURES[diff_measures[i % len(diff_measures)]]
            g = group(fs, m, 2, 0.05)
            if g is None:
                continue
            (fx, sx), (fy, sy) = sorted(g, key=lambda x: -x[1]["value"])
            x, y = name(fx), name(fy)
            style, p = period_phrase(fx, m, allow_latest=False)
            t = T_DIFF_INSTANT if style == "instant" else T_DIFF_FLOW
            q = fill(rng.choice(t), x=x, y=y, xpos=pname(x), ypos=pname(y), m=rng.choice(m.phrases), p=p)
            gold = {"value": sx["value"] - sy["value"], "unit": "USD"}
            add(
                "difference",
                m.id,
                q,
                split,
                [sx, sy],
                gold,
                {"style": style, "phrase": p, "ddate": fx.period, "fiscal": fx.fiscal},
            )
        for i in range(14):
            m = MEASURES[cmp_measures[i % len(cmp_measures)]]
            g = group(fs, m, 2, 0.05)
            if g is None:
                continue
            rng.shuffle(g)
            (fx, sx), (fy, sy) = g
            x, y = name(fx), name(fy)
            style, p = period_phrase(fx, m, allow_latest=False)
            t = T_COMPARE_INSTANT if style == "instant" else T_COMPARE
            q = fill(rng.choice(t), x=x, y=y, xpos=pname(x), ypos=pname(y), m=rng.choice(m.phrases), p=p)
            win, lose = (sx, sy) if sx["value"] > sy["value"] else (sy, sx)
            gold = {
                "winner": win["name"],
                "winner_cik": win["cik"],
                "difference": win["value"] - lose["value"],
                "unit": "points" if m.unit == "%" else m.unit,
            }
            add(
                "compare",
                m.id,
                q,
                split,
                [sx, sy],
                gold,
                {"style": style, "phrase": p, "ddate": fx.period, "fiscal": fx.fiscal},
            )
        for i in range(9):
            m = MEASURES[rank_measures[i % len(rank_measures)]]
            g = group(fs, m, 3, 0.05)
            if g is None:
                continue
            rng.shuffle(g)
            ns = [name(f) for f, _ in g]
            style, p = period_phrase(g[0][0], m, allow_latest=False)
            t = T_RANK_INSTANT if style == "instant" else T_RANK
            q = fill(rng.choice(t), a=ns[0], b=ns[1], c=ns[2], m=rng.choice(m.phrases), p=p)
            order = sorted(g, key=lambda x: -x[1]["value"])
            gold = {"order": [s["name"] for _, s in order], "order_cik": [s["cik"] for _, s in order]}
            specs = [s for _, s in g]
            add(
                "rank",
                m.id,
                q,
                split,
                specs,
                gold,
                {"style": style, "phrase": p, "ddate": g[0][0].period, "fiscal": g[0][0].fiscal},
            )

    # 4. abstain: the answer is not in the data
    for split, fs in by_split.items():
        pool = sorted(fs, key=lambda f: f.cik)
        rng.shuffle(pool)
        made = {"no_rnd": 0, "no_inventory": 0, "no_period": 0}
        for f in pool:
            tags = facts.tags_by_adsh.get(f.adsh, set())
            co = name(f)
            if made["no_rnd"] < 1 and not any("Research" in t for t in tags) and not f.financial:
                q = fill(
                    rng.choice(["How much did {co} spend on R&D in {p}?", "What was {pos} R&D expense for {p}?"]),
                    co=co,
                    pos=pname(co),
                    p=rng.choice(quarter_phrases(f)),
                )
                made["no_rnd"] += 1
            elif made["no_inventory"] < 1 and not any("Inventor" in t for t in tags) and not f.financial:
                q = fill("What was {pos} inventory {p}?", co=co, pos=pname(co), p=rng.choice(instant_phrases(f)))
                made["no_inventory"] += 1
            elif made["no_period"] < 2 and not any(
                d[:4] in ("2004", "2005", "2012") for d in facts.ddates_by_adsh[f.adsh]
            ):
                p = rng.choice(["Q2 2005", "the quarter ended March 31, 2012", "fiscal 2004"])
                q = fill(
                    rng.choice(["What was {pos} revenue in {p}?", "{co} net income for {p}?"]),
                    co=co,
                    pos=pname(co),
                    p=p,
                )
                made["no_period"] += 1
            else:
                continue
            rows.append(
                {
                    "kind": "abstain",
                    "measure": None,
                    "question": q,
                    "split": split,
                    "companies": [{"cik": f.cik, "name": f.name, "adsh": f.adsh}],
                    "period": None,
                    "spec": [],
                    "gold": "abstain",
                }
            )
            if all(v >= (1 if k != "no_period" else 2) for k, v in made.items()):
                break
    # companies in none of the shipped files (checked against every name): half to each split by the name's hash
    absent = ["Microsoft", "Procter & Gamble", "Cisco", "Nike", "Costco", "PepsiCo"]
    if quarter == QUARTER:
        for co in absent:
            assert not any(contains_words(n, co) for n in all_names.values()), co
    absent = [co for co in absent if not any(contains_words(n, co) for n in all_names.values())]
    absent_q = [
        "What was {pos} revenue in Q2 2009?",
        "{co} operating margin, the quarter ended June 30, 2009?",
        "How much cash did {co} have as of June 30, 2009?",
        "What is {pos} current ratio?",
        "{co} net income growth y/y in the second quarter of 2009?",
        "What was {pos} gross margin in the June 2009 quarter?",
    ]
    for co, t in zip(absent, absent_q, strict=False):
        split = "dev" if int(hashlib.sha256(co.encode()).hexdigest(), 16) % 2 == 0 else "test"
        if split not in splits:
            continue
        rows.append(
            {
                "kind": "abstain",
                "measure": None,
                "question": fill(t, co=co, pos=pname(co)),
                "split": split,
                "companies": [],
                "period": None,
                "spec": [],
                "gold": "abstain",
            }
        )

    counters: dict[str, int] = {}
    lines = []
    for r in rows:
        counters[r["kind"]] = counters.get(r["kind"], 0) + 1
        r = {"id": f"user-{r['kind']}-{counters[r['kind']]:03d}", **r}
        lines.append(json.dumps(r, ensure_ascii=False))
    return lines


def main(seed: int = SEED, out: Path = OUT, splits: tuple[str, ...] = ("dev", "test"), quarter: Path = QUARTER) -> None:
    """Write the question file ``out`` (:func:`draw`) over the FSDS quarter ZIP ``quarter`` (default: the shipped
    2009q3; another quarter: a question set over data the engine was never tuned on, its development half only for a
    developer)."""
    lines = draw(seed, splits, quarter)

    def shown(path: Path) -> Path:
        return path.resolve().relative_to(ROOT) if path.resolve().is_relative_to(ROOT) else path

    args = (
        ""
        if (seed, out, splits, quarter) == (SEED, OUT, ("dev", "test"), QUARTER)
        else (f" --seed {seed} --splits {','.join(splits)} --out {shown(out)}")
        + ("" if quarter == QUARTER else f" --quarter {shown(quarter)}")
    )
    over = (
        "sec-user.jsonl: analyst questions in users' own words over the shipped 2009q3 SEC Financial Statement Data Sets"
        "\n# (data/sec-fsds/2009q3.zip)"
        if quarter == QUARTER
        else f"{out.name}: analyst questions in users' own words over the SEC Financial Statement Data Sets quarter"
        f"\n# {shown(quarter)}"
    )
    header = HEADER.format(seed=seed, args=args, over=over)
    out.write_text(header + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} questions -> {shown(out)}")


def many(seeds: range, out: Path, splits: tuple[str, ...], quarter: Path) -> None:
    """One question file ``out`` of several seeds' sets (:func:`draw` for each seed of ``seeds``): each row's id
    prefixed with its seed (``s53:user-value-001``), a question already drawn by an earlier seed left out."""
    rows: list[str] = []
    seen: set[str] = set()
    for seed in seeds:
        for line in draw(seed, splits, quarter):
            r = json.loads(line)
            if r["question"] not in seen:
                seen.add(r["question"])
                rows.append(json.dumps({**r, "id": f"s{seed}:{r['id']}"}, ensure_ascii=False))
    head = (
        f"# {out.name}: the question sets of scripts/make_user_questions.py --seeds {seeds.start}-{seeds.stop - 1}"
        f" --splits {','.join(splits)} --quarter {quarter.name}, one file; each id prefixed with its seed, a\n"
        "# question an earlier seed drew left out. Rules, gold and units: the header of one seed's file.\n"
    )
    out.write_text(head + "\n".join(rows) + "\n", encoding="utf-8")
    print(f"{len(rows)} questions of {len(seeds)} seeds -> {out}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=SEED, help="random seed (44: the shipped set)")
    ap.add_argument("--splits", default="dev,test", help="halves to draw questions from: dev, test or dev,test")
    ap.add_argument("--out", type=Path, default=OUT, help="question file to write")
    ap.add_argument("--quarter", type=Path, default=QUARTER, help="FSDS quarter ZIP (default: the shipped 2009q3)")
    ap.add_argument("--seeds", default=None, help="A-B: the sets of seeds A to B in one file (ids prefixed by seed)")
    a = ap.parse_args()
    halves = tuple(x for x in a.splits.split(",") if x)
    if not halves or any(x not in ("dev", "test") for x in halves):
        ap.error(f"--splits: dev, test or dev,test, not {a.splits!r}")
    if not a.quarter.is_file():
        ap.error(f"--quarter: no such file: {a.quarter}")
    if a.seeds:
        lo, _, hi = a.seeds.partition("-")
        if not (lo.isdigit() and hi.isdigit() and int(lo) <= int(hi)):
            ap.error(f"--seeds: A-B with A <= B, not {a.seeds!r}")
        many(range(int(lo), int(hi) + 1), a.out, halves, a.quarter)
    else:
        main(a.seed, a.out, halves, a.quarter)
