"""Canonical financial concepts: which real us-gaap tags stand for each memo concept, in which order.

Source: ../shared/seeds/003_2b4a46a307636297.txt, Table 3 ("Canonical XBRL tags used for desk-risk
evidence"). The paper ran on a fixture with one invented tag per concept (``CurrentAssets``,
``Revenues``); real filers use several tags for the same line item, so each canonical concept
here lists its **synonyms in priority order**: the first tag a filing reports for the period
wins, and the others it also reports are kept as alternatives (shown in the memo, never summed).

Why this order (documented so that a reviewer can disagree with a line, not with a black box):

- ``Revenues``: ``Revenues`` first (the total, e.g. Walmart reports Revenues = net sales +
  membership income and also SalesRevenueNet = net sales; the total is the memo's scale figure),
  then ``SalesRevenueNet`` (the pre-2018 taxonomy's usual total), ``SalesRevenueGoodsNet`` and
  ``SalesRevenueServicesNet`` (filers that only sell one of the two), then the ASC 606 tags
  ``RevenueFromContractWithCustomerExcludingAssessedTax`` / ``...IncludingAssessedTax`` (2018 on).
- ``NetIncomeLoss`` (attributable to the parent) before ``ProfitLoss`` (including
  non-controlling interests) before ``NetIncomeLossAvailableToCommonStockholdersBasic``.
- ``CurrentAssets`` = ``AssetsCurrent``, ``CurrentLiabilities`` = ``LiabilitiesCurrent`` (the
  paper's names are the fixture's; these are the taxonomy's). Banks, insurers and brokers present
  an unclassified balance sheet: there is no current ratio to compute, and the memo says so.
- ``Liabilities`` is reported by only about 6 in 10 filers of 2009 (249 of 424 balance sheets in
  2009q3). When it is absent it is **derived**: LiabilitiesAndStockholdersEquity minus total
  equity (``StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest``, else
  ``StockholdersEquity`` plus ``MinorityInterest`` when reported) minus temporary (mezzanine)
  equity when reported; the derived fact carries its formula and component facts.
- ``OperatingCashFlow``: 10-Q cash-flow statements are year-to-date, so the 3-month figure
  usually does not exist; the fact map then takes the longest year-to-date span ending on the
  period, and ratios pair it with revenue of the same span.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CanonicalConcept:
    """One memo concept.

    Attributes:
        name: canonical name (the paper's tag name, e.g. ``CurrentAssets``).
        synonyms: us-gaap tags that report it, highest priority first.
        duration: True for flows (income and cash-flow items, measured over ``qtrs`` quarters),
            False for instants (balance-sheet items at the period end).
        label: how the memo names it ("revenue", "current assets").
        role: the risk-memo role (Table 3).
    """

    name: str
    synonyms: tuple[str, ...]
    duration: bool
    label: str
    role: str


CONCEPTS: tuple[CanonicalConcept, ...] = (
    CanonicalConcept(
        "Revenues",
        (
            "Revenues",
            "SalesRevenueNet",
            "SalesRevenueGoodsNet",
            "SalesRevenueServicesNet",
            "RevenueFromContractWithCustomerExcludingAssessedTax",
            "RevenueFromContractWithCustomerIncludingAssessedTax",
        ),
        True,
        "revenue",
        "Scale, growth, demand risk",
    ),
    CanonicalConcept(
        "NetIncomeLoss",
        ("NetIncomeLoss", "ProfitLoss", "NetIncomeLossAvailableToCommonStockholdersBasic"),
        True,
        "net income",
        "Profitability and loss alerts",
    ),
    CanonicalConcept(
        "OperatingCashFlow",
        (
            "NetCashProvidedByUsedInOperatingActivities",
            "NetCashProvidedByUsedInOperatingActivitiesContinuingOperations",
        ),
        True,
        "operating cash flow",
        "Cash conversion",
    ),
    CanonicalConcept("OperatingIncomeLoss", ("OperatingIncomeLoss",), True, "operating income", "Operating leverage"),
    CanonicalConcept("GrossProfit", ("GrossProfit",), True, "gross profit", "Pricing and cost buffer"),
    CanonicalConcept(
        "CostOfRevenue",
        ("CostOfRevenue", "CostOfGoodsAndServicesSold", "CostOfGoodsSold", "CostOfServices"),
        True,
        "cost of revenue",
        "Gross-margin pressure",
    ),
    CanonicalConcept("CurrentAssets", ("AssetsCurrent",), False, "current assets", "Current-ratio numerator"),
    CanonicalConcept(
        "CurrentLiabilities", ("LiabilitiesCurrent",), False, "current liabilities", "Current-ratio denominator"
    ),
    CanonicalConcept(
        "Cash",
        (
            "CashAndCashEquivalentsAtCarryingValue",
            "Cash",
            "CashAndDueFromBanks",
            "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents",
        ),
        False,
        "cash and cash equivalents",
        "Liquidity reserve",
    ),
    CanonicalConcept("Liabilities", ("Liabilities",), False, "total liabilities", "Leverage numerator"),
    CanonicalConcept("Assets", ("Assets",), False, "total assets", "Balance-sheet denominator"),
    CanonicalConcept(
        "StockholdersEquity",
        ("StockholdersEquity", "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest"),
        False,
        "stockholders' equity",
        "Capital buffer",
    ),
    CanonicalConcept(
        "AccountsReceivable",
        ("AccountsReceivableNetCurrent", "ReceivablesNetCurrent"),
        False,
        "accounts receivable",
        "Collections and working capital",
    ),
    CanonicalConcept("Inventory", ("InventoryNet",), False, "inventory", "Inventory build risk"),
    CanonicalConcept(
        "LongTermDebt", ("LongTermDebtNoncurrent", "LongTermDebt"), False, "long-term debt", "Funding pressure"
    ),
)
BY_NAME: dict[str, CanonicalConcept] = {c.name: c for c in CONCEPTS}

# The span of a form's own flows, in quarters (annual reports 4, quarterly reports 1).
FORM_QUARTERS: dict[str, int] = {"10-K": 4, "10-K/A": 4, "20-F": 4, "40-F": 4, "10-KT": 4, "10-Q": 1, "10-Q/A": 1}

# The eight facts every memo needs (recall@k is measured against them): the components of the
# four ratios plus the liquidity reserve.
REQUIRED: tuple[str, ...] = (
    "Revenues",
    "NetIncomeLoss",
    "OperatingCashFlow",
    "CurrentAssets",
    "CurrentLiabilities",
    "Liabilities",
    "Assets",
    "Cash",
)

# Components of a derived Liabilities figure (see the module docstring).
LIABILITIES_AND_EQUITY = "LiabilitiesAndStockholdersEquity"
EQUITY_INCLUDING_NCI = "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest"
EQUITY_PARENT = "StockholdersEquity"
MINORITY_INTEREST = "MinorityInterest"
TEMPORARY_EQUITY = "TemporaryEquityCarryingAmount"
DERIVATION_TAGS: tuple[str, ...] = (
    LIABILITIES_AND_EQUITY,
    EQUITY_INCLUDING_NCI,
    EQUITY_PARENT,
    MINORITY_INTEREST,
    TEMPORARY_EQUITY,
)


def all_tags() -> list[str]:
    """Every tag the fact map reads: all synonyms plus the derivation components (sorted)."""
    tags = {t for c in CONCEPTS for t in c.synonyms} | set(DERIVATION_TAGS)
    return sorted(tags)


def concept_of_tag(tag: str) -> str | None:
    """The canonical concept a tag is a synonym of (``SalesRevenueNet`` -> ``Revenues``), or None."""
    for c in CONCEPTS:
        if tag in c.synonyms:
            return c.name
    return None


def unclassified_balance_sheet(sic: int | None) -> bool:
    """True for industries that present no current assets/liabilities: banks and savings
    institutions, credit and mortgage firms, brokers, insurers (SIC 6000-6411)."""
    return sic is not None and 6000 <= sic <= 6411


def iso_date(yyyymmdd: str | None) -> str:
    """``20090630`` -> ``2009-06-30`` (other shapes are returned unchanged)."""
    s = str(yyyymmdd or "")
    return f"{s[:4]}-{s[4:6]}-{s[6:8]}" if len(s) == 8 and s.isdigit() else s
