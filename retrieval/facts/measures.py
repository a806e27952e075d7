"""The measure catalog: one entry per standard measure an analyst asks for, each a formula over us-gaap concepts.

Issue 44 ("Measures"): a question's measure is resolved against this catalog, not against a list of fixed
phrases. Each :class:`Measure` has its formula(s) over canonical concepts, its unit (``USD``, ``%``, ``x``,
``days``) and the standard definition it follows. Operands are canonical concepts: the eight memo concepts of
:mod:`retrieval.facts.concepts` (seed 003, Table 3, with their synonym order) and the further concepts here
(:data:`EXTRA_CONCEPTS`), whose synonyms come from a maintained mapping, edgartools' synonym groups
(``data/edgartools_synonym_groups.json``, see ``data/NOTICE.md``), less the tags that name a part or another
quantity (:data:`EXCLUDED_SYNONYMS`, each with its reason).

Formulas are tried in order: the first whose operands the filing reports is used (gross profit is ``GrossProfit``
when tagged, else revenue minus cost of revenue). Banks (SIC 6000-6199) are asked for revenue as their total net
revenue where they report one (``Revenues``), else interest and dividend income plus noninterest income (the total
a bank's income statement builds, not one interest line), before the generic formula. A percent measure's formula gives a fraction; the engine states it times 100.

Definitions (CFA Institute, *Financial Reporting and Analysis*, ratio analysis; the flows of a 10-Q are the
quarter's unless the question names a longer span; balance-sheet items are at the period end and not averaged;
returns are not annualised):
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from retrieval.facts import concepts as cc
from retrieval.facts.concepts import CanonicalConcept
from retrieval.facts.labels import content_words

DATA = Path(__file__).resolve().parent / "data"

EXCLUDED_SYNONYMS: dict[str, str] = {
    "IncomeTaxesPaidNet": "cash paid for taxes, not the income tax expense",
    "InterestIncomeExpenseNet": "net interest (income less expense), not interest expense",
    "GeneralAndAdministrativeExpense": "a part of SG&A",
    "SellingAndMarketingExpense": "a part of SG&A",
    "SellingExpense": "a part of SG&A",
    "AdministrativeExpense": "a part of SG&A",
    "Depreciation": "a part of D&A",
    "AmortizationOfIntangibleAssets": "a part of D&A",
    "CapitalExpenditures": "not a us-gaap element (a custom name)",
    "PurchaseOfPropertyPlantAndEquipment": "not a us-gaap element (an IFRS-style name)",
}
"""Tags of edgartools' groups that the catalog does not use as synonyms, and why."""


@cache
def synonym_group(name: str) -> tuple[str, ...]:
    """The synonyms of edgartools' group ``name`` (priority order), less :data:`EXCLUDED_SYNONYMS`.

    Raises:
        KeyError: no such group in ``data/edgartools_synonym_groups.json``.
    """
    groups = json.loads((DATA / "edgartools_synonym_groups.json").read_text(encoding="utf-8"))["groups"]
    for g in groups:
        if g["name"] == name:
            return tuple(t for t in g["synonyms"] if t not in EXCLUDED_SYNONYMS)
    raise KeyError(f"no synonym group {name!r} in edgartools_synonym_groups.json")


EXTRA_CONCEPTS: tuple[CanonicalConcept, ...] = (
    CanonicalConcept(
        "ResearchAndDevelopment",
        (*synonym_group("research_and_development"), "ResearchAndDevelopmentExpenseExcludingAcquiredInProcessCost"),
        True,
        "research and development expense",
        "Innovation spend",
    ),
    CanonicalConcept(
        "SellingGeneralAndAdministrative",
        synonym_group("sga_expense"),
        True,
        "selling, general and administrative expense",
        "Overhead",
    ),
    CanonicalConcept(
        "PretaxIncome",
        (
            *synonym_group("income_before_tax"),
            "IncomeLossFromContinuingOperationsBeforeIncomeTaxesMinorityInterestAndIncomeLossFromEquityMethodInvestments",
        ),
        True,
        "income before income taxes",
        "Tax base",
    ),
    CanonicalConcept("IncomeTax", synonym_group("income_tax_expense"), True, "income tax expense", "Tax"),
    CanonicalConcept("CapitalExpenditure", synonym_group("capex"), True, "capital expenditure", "Investment"),
    CanonicalConcept("InterestExpense", synonym_group("interest_expense"), True, "interest expense", "Debt service"),
    CanonicalConcept(
        "DepreciationAmortization",
        synonym_group("depreciation_and_amortization"),
        True,
        "depreciation and amortization",
        "Non-cash charges",
    ),
    CanonicalConcept(
        "InterestAndDividendIncome",
        ("InterestAndDividendIncomeOperating",),
        True,
        "interest and dividend income",
        "A bank's revenue (interest side)",
    ),
    CanonicalConcept("NoninterestIncome", ("NoninterestIncome",), True, "noninterest income", "A bank's fee revenue"),
    CanonicalConcept(
        "BankNetRevenue", ("Revenues",), True, "net revenue", "A bank's total net revenue, where it reports one"
    ),
    CanonicalConcept(
        "TotalEquity",
        (cc.EQUITY_INCLUDING_NCI, cc.EQUITY_PARENT),
        False,
        "total equity",
        "Equity including noncontrolling interests (ASC 810); a filer that reports no such total has none outside the "
        "parent's stockholders' equity",
    ),
    CanonicalConcept(
        "ConsolidatedNetIncome",
        ("ProfitLoss",),
        True,
        "net income including noncontrolling interests",
        "Consolidated net income, the parent's and the noncontrolling interests' (ASC 810)",
    ),
)
"""Concepts beyond the memo's eight: synonyms from edgartools' groups (extended where a 2009 filer's tag is
missing from the group: ``ResearchAndDevelopmentExpenseExcludingAcquiredInProcessCost``, the pre-2010 pretax
income element with equity-method income)."""

ALL_CONCEPTS: dict[str, CanonicalConcept] = {c.name: c for c in (*cc.CONCEPTS, *EXTRA_CONCEPTS)}
"""Every canonical concept a formula may name."""

UNITS = ("USD", "%", "x", "days")


@dataclass(frozen=True)
class Measure:
    """One catalog measure.

    Attributes:
        id: its name (``gross_margin``). label: how an answer names it. unit: ``USD``, ``%`` (the formula gives
        a fraction, stated times 100), ``x`` (a multiple) or ``days``. formulas: expressions over canonical
        concept names (``+ - * /`` and parentheses; ``DAYS`` is the period's length, 91.25 days a quarter),
        tried in order. phrases: how users name it (lower case, longest wins). definition: the standard
        definition it follows. bank_formulas: tried first for banks (SIC 6000-6199). own_concepts: operands that
        are not catalog concepts (a measure read straight from one us-gaap element: :func:`concept_measure`).
    """

    id: str
    label: str
    unit: str
    formulas: tuple[str, ...]
    phrases: tuple[str, ...]
    definition: str
    bank_formulas: tuple[str, ...] = ()
    own_concepts: tuple[CanonicalConcept, ...] = ()

    def concept(self, name: str) -> CanonicalConcept:
        """The concept an operand ``name`` of this measure's formulas stands for (its own, else the catalog's).

        Raises:
            KeyError: ``name`` is neither.
        """
        return next((c for c in self.own_concepts if c.name == name), None) or ALL_CONCEPTS[name]

    def formulas_for(self, sic: int | None) -> tuple[str, ...]:
        """The formulas to try, in order, for a company of SIC code ``sic``: a bank's (:func:`bank`) first."""
        return (*self.bank_formulas, *self.formulas) if bank(sic) else self.formulas

    def operands(self, formula: str) -> list[str]:
        """The concept names ``formula`` reads, in order, each once."""
        return list(dict.fromkeys(w for w in re.findall(r"[A-Za-z_]\w*", formula) if w != "DAYS"))

    @property
    def balance(self) -> bool:
        """A balance-sheet measure: every operand of its first formula is an instant (cash, working capital, the
        current ratio), never a flow over a span (revenue, a margin, ROE)."""
        return not any(self.concept(c).duration for c in self.operands(self.formulas[0]))


def _m(
    id_: str, label: str, unit: str, formulas: tuple[str, ...], phrases: tuple[str, ...], definition: str, **kw
) -> Measure:
    return Measure(id_, label, unit, formulas, phrases, definition, **kw)


_BANK_REVENUE = ("BankNetRevenue", "InterestAndDividendIncome + NoninterestIncome")
"""A bank's revenue: its total net revenue where it reports one (``Revenues``, e.g. JPMorgan's "total net revenue"),
else interest and dividend income plus noninterest income (the total its income statement builds), never one
interest line."""
_GROSS = ("GrossProfit", "Revenues - CostOfRevenue")

MEASURES: tuple[Measure, ...] = (
    _m(
        "revenue",
        "revenue",
        "USD",
        ("Revenues",),
        ("revenue", "revenues", "sales", "net sales", "total revenue", "total revenues", "top line", "turnover"),
        "total revenue (net sales); a bank's is its net revenue where reported, else interest and dividend income "
        "plus noninterest income",
        bank_formulas=_BANK_REVENUE,
    ),
    _m(
        "cost_of_revenue",
        "cost of revenue",
        "USD",
        ("CostOfRevenue",),
        ("cost of revenue", "cost of sales", "cost of goods sold", "cogs", "cost of products sold"),
        "cost of revenue",
    ),
    _m(
        "gross_profit",
        "gross profit",
        "USD",
        _GROSS,
        ("gross profit", "gross income"),
        "revenue minus cost of revenue",
    ),
    _m(
        "gross_margin",
        "gross margin",
        "%",
        tuple(f"({f}) / Revenues" for f in _GROSS),
        ("gross margin", "gross profit margin", "gross margin percentage", "gross margin %", "gross profit percentage"),
        "gross profit / revenue",
    ),
    _m(
        "operating_income",
        "operating income",
        "USD",
        ("OperatingIncomeLoss",),
        ("operating income", "operating profit", "income from operations", "operating earnings", "ebit", "op income"),
        "operating income (loss)",
    ),
    _m(
        "operating_margin",
        "operating margin",
        "%",
        ("OperatingIncomeLoss / Revenues",),
        ("operating margin", "operating profit margin", "ebit margin", "operating income margin", "op margin"),
        "operating income / revenue",
    ),
    _m(
        "net_income",
        "net income",
        "USD",
        ("NetIncomeLoss",),
        ("net income", "net earnings", "net profit", "net loss", "profit", "earnings", "bottom line", "earn", "earns"),
        "net income attributable to the parent",
    ),
    _m(
        "net_income_including_nci",
        "net income including noncontrolling interests",
        "USD",
        ("ConsolidatedNetIncome",),
        (
            "net income including noncontrolling interests",
            "net income including noncontrolling interest",
            "net income including minority interests",
            "net income including minority interest",
            "consolidated net income",
        ),
        "consolidated net income, the parent's and the noncontrolling interests' (us-gaap ProfitLoss)",
    ),
    _m(
        "net_margin",
        "net margin",
        "%",
        ("NetIncomeLoss / Revenues",),
        (
            "net margin",
            "net profit margin",
            "profit margin",
            "net income margin",
            "earn per dollar of sales",
            "earn per dollar of revenue",
            "profit per dollar of sales",
            "profit per dollar of revenue",
        ),
        "net income / revenue",
        bank_formulas=tuple(f"NetIncomeLoss / ({f})" if "+" in f else f"NetIncomeLoss / {f}" for f in _BANK_REVENUE),
    ),
    _m(
        "ebitda",
        "EBITDA",
        "USD",
        ("OperatingIncomeLoss + DepreciationAmortization",),
        ("ebitda",),
        "operating income plus depreciation and amortization (same span)",
    ),
    _m(
        "rd_expense",
        "research and development expense",
        "USD",
        ("ResearchAndDevelopment",),
        ("research and development", "r&d", "r & d", "r and d", "research & development", "research spending"),
        "research and development expense",
    ),
    _m(
        "rd_intensity",
        "R&D as a share of revenue",
        "%",
        ("ResearchAndDevelopment / Revenues",),
        ("r&d intensity", "research intensity"),
        "research and development expense / revenue",
    ),
    _m(
        "sga_expense",
        "selling, general and administrative expense",
        "USD",
        ("SellingGeneralAndAdministrative",),
        ("sg&a", "sga", "selling general and administrative", "selling, general and administrative", "overhead"),
        "selling, general and administrative expense",
    ),
    _m(
        "sga_ratio",
        "SG&A as a share of revenue",
        "%",
        ("SellingGeneralAndAdministrative / Revenues",),
        ("sg&a ratio", "overhead ratio"),
        "SG&A expense / revenue",
    ),
    _m(
        "pretax_income",
        "income before income taxes",
        "USD",
        ("PretaxIncome",),
        (
            "pretax income",
            "pre-tax income",
            "income before taxes",
            "income before income taxes",
            "income before tax",
            "pretax profit",
            "pre-tax profit",
            "pretax earnings",
            "pre-tax earnings",
            "earnings before taxes",
            "earnings before income taxes",
            "profit before tax",
            "profit before taxes",
        ),
        "income from continuing operations before income taxes",
    ),
    _m(
        "income_tax",
        "income tax expense",
        "USD",
        ("IncomeTax",),
        (
            "income tax expense",
            "income taxes",
            "income tax",
            "tax expense",
            "provision for income taxes",
            "income tax provision",
            "tax provision",
            "provision for taxes",
            "tax charge",
            "tax bill",
            "taxes",
        ),
        "income tax expense (benefit)",
    ),
    _m(
        "effective_tax_rate",
        "effective tax rate",
        "%",
        ("IncomeTax / PretaxIncome",),
        ("effective tax rate", "tax rate", "etr", "effective rate", "effective income tax rate", "income tax rate"),
        "income tax expense / income before income taxes",
    ),
    _m(
        "capex",
        "capital expenditure",
        "USD",
        ("CapitalExpenditure",),
        ("capital expenditure", "capital expenditures", "capex", "cap ex", "capital spending", "purchases of property"),
        "payments to acquire property, plant and equipment",
    ),
    _m(
        "operating_cash_flow",
        "operating cash flow",
        "USD",
        ("OperatingCashFlow",),
        (
            "operating cash flow",
            "cash from operations",
            "cash flow from operations",
            "cash from operating activities",
            "cash generated by operations",
            "ocf",
        ),
        "net cash provided by operating activities",
    ),
    _m(
        "free_cash_flow",
        "free cash flow",
        "USD",
        ("OperatingCashFlow - CapitalExpenditure",),
        ("free cash flow", "fcf"),
        "operating cash flow minus capital expenditure (same span)",
    ),
    _m(
        "ocf_margin",
        "operating cash flow margin",
        "%",
        ("OperatingCashFlow / Revenues",),
        ("operating cash flow margin", "cash flow margin", "ocf margin", "cash conversion margin"),
        "operating cash flow / revenue (same span)",
    ),
    _m(
        "cash",
        "cash and cash equivalents",
        "USD",
        ("Cash",),
        ("cash and cash equivalents", "cash and equivalents", "cash balance", "cash on hand", "cash pile", "cash"),
        "cash and cash equivalents at the period end",
    ),
    _m(
        "current_assets",
        "current assets",
        "USD",
        ("CurrentAssets",),
        ("current assets", "total current assets"),
        "total current assets",
    ),
    _m(
        "current_liabilities",
        "current liabilities",
        "USD",
        ("CurrentLiabilities",),
        ("current liabilities", "total current liabilities"),
        "total current liabilities",
    ),
    _m(
        "total_assets",
        "total assets",
        "USD",
        ("Assets",),
        ("total assets", "assets", "balance sheet size", "asset base"),
        "total assets",
    ),
    _m(
        "total_liabilities",
        "total liabilities",
        "USD",
        ("Liabilities",),
        ("total liabilities", "liabilities"),
        "total liabilities (derived from liabilities and equity when not reported)",
    ),
    _m(
        "equity",
        "stockholders' equity",
        "USD",
        ("StockholdersEquity",),
        (
            "stockholders equity",
            "stockholders' equity",
            "shareholders equity",
            "shareholders' equity",
            "book value",
            "equity",
            "net worth",
        ),
        "total stockholders' equity attributable to the parent",
    ),
    _m(
        "total_equity",
        "total equity",
        "USD",
        ("TotalEquity",),
        (
            "total equity",
            "equity including noncontrolling interests",
            "equity including noncontrolling interest",
            "equity including minority interests",
            "equity including minority interest",
            "stockholders equity including noncontrolling interests",
            "stockholders equity including noncontrolling interest",
            "shareholders equity including noncontrolling interests",
            "shareholders equity including noncontrolling interest",
        ),
        "stockholders' equity including noncontrolling interests (the balance sheet's total equity); the parent's "
        "where the filer reports no such total",
    ),
    _m(
        "long_term_debt",
        "long-term debt",
        "USD",
        ("LongTermDebt",),
        ("long-term debt", "long term debt", "debt", "borrowings"),
        "long-term debt (noncurrent)",
    ),
    _m("inventory", "inventory", "USD", ("Inventory",), ("inventory", "inventories", "stock on hand"), "inventory"),
    _m(
        "receivables",
        "accounts receivable",
        "USD",
        ("AccountsReceivable",),
        ("accounts receivable", "receivables", "trade receivables"),
        "accounts receivable, net, current",
    ),
    _m(
        "working_capital",
        "working capital",
        "USD",
        ("CurrentAssets - CurrentLiabilities",),
        ("working capital", "net working capital"),
        "current assets minus current liabilities",
    ),
    _m(
        "current_ratio",
        "current ratio",
        "x",
        ("CurrentAssets / CurrentLiabilities",),
        ("current ratio", "working capital ratio"),
        "current assets / current liabilities",
    ),
    _m(
        "quick_ratio",
        "quick ratio",
        "x",
        ("(CurrentAssets - Inventory) / CurrentLiabilities",),
        ("quick ratio", "acid test", "acid-test ratio", "acid test ratio"),
        "(current assets - inventory) / current liabilities",
    ),
    _m(
        "cash_ratio",
        "cash ratio",
        "x",
        ("Cash / CurrentLiabilities",),
        ("cash ratio",),
        "cash and cash equivalents / current liabilities",
    ),
    _m(
        "debt_to_equity",
        "debt to equity",
        "x",
        ("LongTermDebt / StockholdersEquity",),
        ("debt to equity", "debt-to-equity", "debt/equity", "d/e", "debt-equity ratio", "debt equity ratio"),
        "long-term debt / stockholders' equity",
    ),
    _m(
        "liabilities_to_equity",
        "liabilities to equity",
        "x",
        ("Liabilities / StockholdersEquity",),
        ("liabilities to equity", "liabilities-to-equity", "total liabilities to equity"),
        "total liabilities / stockholders' equity",
    ),
    _m(
        "liabilities_to_assets",
        "liabilities to assets",
        "%",
        ("Liabilities / Assets",),
        ("liabilities to assets", "liabilities-to-assets", "total liabilities to assets"),
        "total liabilities / total assets",
    ),
    _m(
        "interest_coverage",
        "interest coverage",
        "x",
        ("OperatingIncomeLoss / InterestExpense",),
        ("interest coverage", "times interest earned", "interest cover"),
        "operating income / interest expense",
    ),
    _m(
        "roa",
        "return on assets",
        "%",
        ("NetIncomeLoss / Assets",),
        ("return on assets", "roa", "returns on assets", "return on total assets"),
        "net income / total assets at the period end (not annualised)",
    ),
    _m(
        "roe",
        "return on equity",
        "%",
        ("NetIncomeLoss / StockholdersEquity",),
        (
            "return on equity",
            "roe",
            "returns on equity",
            "return on shareholders equity",
            "return on stockholders equity",
        ),
        "net income / stockholders' equity at the period end (not annualised)",
    ),
    _m(
        "asset_turnover",
        "asset turnover",
        "x",
        ("Revenues / Assets",),
        ("asset turnover", "total asset turnover"),
        "revenue / total assets at the period end",
    ),
    _m(
        "inventory_turnover",
        "inventory turnover",
        "x",
        ("CostOfRevenue / Inventory",),
        ("inventory turnover", "inventory turns"),
        "cost of revenue / inventory at the period end",
    ),
    _m(
        "dso",
        "days sales outstanding",
        "days",
        ("AccountsReceivable / Revenues * DAYS",),
        ("days sales outstanding", "dso", "days of sales outstanding", "collection period"),
        "accounts receivable / revenue x days in the period (91.25 a quarter)",
    ),
    _m(
        "dio",
        "days inventory outstanding",
        "days",
        ("Inventory / CostOfRevenue * DAYS",),
        (
            "days inventory outstanding",
            "dio",
            "days of inventory",
            "days of inventory outstanding",
            "inventory days",
            "days in inventory",
            "days sales of inventory",
            "days sales in inventory",
            "dsi",
            "inventory period",
        ),
        "inventory / cost of revenue x days in the period (91.25 a quarter)",
    ),
    _m(
        "pretax_margin",
        "pretax margin",
        "%",
        ("PretaxIncome / Revenues",),
        ("pretax margin", "pre-tax margin", "pretax profit margin", "pre-tax profit margin", "ebt margin"),
        "income before income taxes / revenue",
    ),
    _m(
        "ebitda_margin",
        "EBITDA margin",
        "%",
        ("(OperatingIncomeLoss + DepreciationAmortization) / Revenues",),
        ("ebitda margin",),
        "(operating income + depreciation and amortization) / revenue (same span)",
    ),
)
BY_ID: dict[str, Measure] = {m.id: m for m in MEASURES}

SHARE_OF_REVENUE = re.compile(
    r"\b(?:as\s+an?\s+|as\s+)?(?:share|percent(?:age)?|proportion|fraction|%|ratio|part|pct)\s+(?:of|to)\s+"
    r"(?:total\s+|net\s+)?(?:revenues?|sales|turnover)\b|(?:\bto|/)\s+(?:revenues?|sales)\b|\bintensity\b",
    re.I,
)
"""Words that turn a USD flow into its share of revenue (``R&D as a percentage of sales``, ``capex to revenue``,
``capex/revenue``)."""


def share_of_revenue(measure: Measure) -> Measure:
    """The measure as a share of revenue (``rd_expense`` -> ``R&D as a share of revenue``, unit ``%``).

    Raises:
        ValueError: ``measure`` is not a USD amount.
    """
    if measure.unit != "USD":
        raise ValueError(f"{measure.id} is in {measure.unit}, not an amount: it has no share of revenue")
    known = {"rd_expense": "rd_intensity", "sga_expense": "sga_ratio", "net_income": "net_margin"}
    if measure.id in known:
        return BY_ID[known[measure.id]]
    return Measure(
        f"{measure.id}_to_revenue",
        f"{measure.label} as a share of revenue",
        "%",
        tuple(f"({f}) / Revenues" for f in measure.formulas),
        (),
        f"{measure.definition} / revenue",
    )


def _norm(text: str) -> str:
    text = re.sub(r"['’]s\b", "", text.lower())
    return " ".join(re.sub(r"[^a-z0-9&/%\-]+", " ", text).replace("-", " ").split())


@cache
def _phrase_index() -> tuple[tuple[str, str], ...]:
    """Every measure phrase (normalised) with its measure id, longest first; a phrase ending in a word for one
    figure also in the plural ("the two companies' net margins", "current ratios", "tax rates")."""
    pairs = {(_norm(p), m.id) for m in MEASURES for p in (*m.phrases, m.label)}
    pairs |= {(f"{p}s", mid) for p, mid in pairs if re.search(r"(?:margin|ratio|rate|turnover|coverage|return)$", p)}
    return tuple(sorted(pairs, key=lambda kv: (-len(kv[0]), kv[1])))


def find_measures(question: str, names: Sequence[str] = ()) -> list[tuple[int, Measure]]:
    """The catalog measures a question names, as ``(position, measure)`` in the order they appear; the words of
    ``names`` (the companies found, e.g. ``equity residential``) are not read as measures.

    The longest phrase wins where phrases overlap (``gross margin`` before ``margin``, ``net income margin``
    before ``net income``). A USD flow followed by "as a share of revenue" (or "% of sales", "to revenue",
    "intensity") becomes its share of revenue (:func:`share_of_revenue`).
    """
    return [(a, m) for a, _, m in _measure_spans(question, names)[1]]


def measure_phrase_words(question: str) -> list[tuple[str, bool]]:
    """The question's words (lower case, possessives dropped) each with whether a catalog measure phrase
    (:func:`find_measures`, no company names blanked) covers it: ``("research", True)`` in "Research and development
    spending at Boeing", where the capitalised first word is a measure's, not the short name of Research In Motion."""
    text, spans, _ = _measure_spans(question, ())
    out: list[tuple[str, bool]] = []
    for m in re.finditer(r"\S+", text):
        out.append((m.group(), any(a <= m.start() and m.end() <= b for a, b, _ in spans)))
    return out


def uncovered_words(question: str, names: Sequence[str] = ()) -> set[str]:
    """The question's content words (:func:`retrieval.facts.labels.content_words`: no question, period, unit or
    operation words) that neither a company name of ``names`` nor a catalog measure phrase
    (:func:`find_measures`) accounts for: ``{"retained"}`` in "Abbott's retained earnings", ``{"repayment"}`` in
    "repayments of long-term debt"; a word of the measure's own label is read, as "expense" in "R&D expense". Non-empty
    means the catalog reading leaves words of the question unread."""
    read, spans, shares = _measure_spans(question, names)
    text = read
    for a, b in [(a, b) for a, b, _ in spans] + shares:
        text = text[:a] + " " * (b - a) + text[b:]
    own = content_words(" ".join(m.label for _, _, m in spans))  # "R&D expense": the measure's own word
    for a, b, m in spans:  # ... unless it sits right beside another measure's phrase, whose name it extends
        label = content_words(m.label)
        after = _NEXT_WORD.match(read, b)
        before = _PREVIOUS_WORD.search(read[:a])
        own -= content_words(" ".join(w.group("word") for w in (after, before) if w)) - label
    return content_words(text.replace("#", " "), names) - own


_NEXT_WORD = re.compile(r" (?P<word>[a-z][^\s#/]*)")
_PREVIOUS_WORD = re.compile(r"(?P<word>[a-z][^\s#/]*) $")
"""The word right beside a measure's phrase: one of another measure's label words there extends this phrase, so it is
not read as that other measure's ("equity income as a percentage of net income" was read as stockholders' equity over
net income, "income" taken as net income's own word: 2,698.53 % for Exxon, with the gate passed)."""


def _measure_spans(
    question: str, names: Sequence[str]
) -> tuple[str, list[tuple[int, int, Measure]], list[tuple[int, int]]]:
    """The :func:`_blanked` text, :func:`find_measures`' hits in it as ``(start, end, measure)``, and the spans of
    their "as a share of revenue" tails."""
    text = _SLASH.sub(
        lambda m: m.group() if m.group() in _slash_phrases() else m.group().replace("/", " / "),
        _blanked(question, names),
    )
    taken: list[tuple[int, int]] = []
    shares: list[tuple[int, int]] = []
    hits: list[tuple[int, int, Measure]] = []
    for phrase, mid in _phrase_index():
        for m in re.finditer(rf"(?<= ){re.escape(phrase)}(?= )", text):
            a, b = m.start(), m.end()
            if any(x < b and a < y for x, y in taken):
                continue
            measure = BY_ID[mid]
            share = SHARE_OF_REVENUE.match(text, b + 1) if is_flow(measure) and measure.id != "revenue" else None
            if share is not None:
                measure = share_of_revenue(measure)
                shares.append((b, share.end()))
            taken.append((a, b))
            hits.append((a, b, measure))
    hits = [h for h in hits if not any(x <= h[0] < y for x, y in shares)]  # "of sales" is part of the share
    hits.sort(key=lambda h: h[0])
    return text, hits, shares


_SLASH = re.compile(r"(?<= )[a-z0-9&%\-]*[a-z&][a-z0-9&%\-]+/[a-z0-9&%\-/]*[a-z&][a-z0-9&%\-]+(?= )")
"""Words joined by a slash ("r&d/revenue", "net income/revenue" ends in "income/revenue"), each side two characters
or more: "y/y" and "6/30/09" are not."""


@cache
def _slash_phrases() -> frozenset[str]:
    """The catalog phrases written with a slash ("debt/equity", "d/e"), kept whole."""
    return frozenset(p for p, _ in _phrase_index() if "/" in p)


def joined_by_to(question: str, names: Sequence[str] = ()) -> bool:
    """Whether the question names exactly two catalog measures joined by "to" or a slash alone ("total liabilities
    to total assets", "cash to current liabilities", "R&D/revenue"): a quotient, as "the ratio of ... to ...". The
    words of ``names`` (the companies found) are not read as measures."""
    text, hits, _ = _measure_spans(question, names)
    return len(hits) == 2 and text[hits[0][1] : hits[1][0]].strip() in ("to", "/")


def _blanked(question: str, names: Sequence[str]) -> str:
    """The normalised question between spaces, each company name of ``names`` overwritten with ``#`` (positions kept)."""
    text = f" {_norm(question)} "
    for name in names:
        alias = _norm(name)
        text = re.sub(rf"(?<= ){re.escape(alias)}(?= )", lambda m: "#" * len(m.group()), text) if alias else text
    return text


def is_flow(measure: Measure) -> bool:
    """True when every operand of the measure's first formula is a flow (an income or cash-flow item)."""
    return all(measure.concept(c).duration for c in measure.operands(measure.formulas[0]))


CONCEPT_MEASURE_PREFIX = "tag:"
"""The id prefix of a :func:`concept_measure` (``tag:Goodwill``)."""


def concept_measure(tag: str, label: str, duration: bool) -> Measure:
    """A measure read straight from one us-gaap element (issue 44: "any other us-gaap concept is reachable by its
    label"): id ``tag:<tag>``, the element's standard label (tag.txt ``tlabel``) as its label, unit USD, formula the
    tag itself; ``duration``: a flow (tag.txt ``iord`` ``D``) or an instant (``I``)."""
    own = CanonicalConcept(tag, (tag,), duration, label, "")
    return Measure(
        f"{CONCEPT_MEASURE_PREFIX}{tag}", label, "USD", (tag,), (), f"the us-gaap element {tag} ({label})", (), (own,)
    )


def bank(sic: int | None) -> bool:
    """True for banks, savings institutions and credit firms (SIC 6000-6199), whose revenue is built from
    interest and dividend income plus noninterest income."""
    return sic is not None and 6000 <= sic <= 6199
