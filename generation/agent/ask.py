"""``finkg ask``: a question about the SEC graph, understood as a typed plan, answered by deterministic tools, gated.

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.4 ("Grounded Data Retrieval": all filtering in the
tool backend, the model never fabricates lookup parameters or results; "Answer Consolidation Gate": the only way
out). Issue 44: a question in a user's own words is read into a :class:`Plan` (companies, measures, periods,
operation, unit), every part resolved against the graph's own catalogs:

- **companies** by :class:`retrieval.facts.names.CompanyIndex` (EDGAR names, short names, ``J&J``, tickers from the
  SEC's table, fuzzy matching with a margin rule; two close candidates -> the question is asked back);
- **measures** by the catalog :mod:`retrieval.facts.measures` (margins, ratios, R&D, tax rate, capex, free cash
  flow..., each a formula over us-gaap concepts with its unit; "X as a share of revenue" and "the ratio of X to
  Y" compose formulas);
- **periods** by :mod:`retrieval.facts.periods` (a fiscal date as the filing states it -> FSDS's month-end
  ``ddate``; quarters, halves, fiscal years through the company's own ``fy``/``fp``; none -> the latest);
- **operation**: ``value``, ``change`` (year over year; a balance's change over the span the question names is
  its end less its start, :attr:`Plan.over_span`), ``difference`` (first minus second), ``sum`` ("combined"),
  ``compare`` (which is higher, optionally by how much), ``rank``, ``threshold`` (yes or no against a number the
  question gives, :attr:`Plan.threshold`); among a group named by its industry ("Chevron's peers", "oil
  companies": :mod:`retrieval.facts.peers`, :attr:`Plan.peers`) ``rank``, ``compare`` (the top) and ``standing``
  (a company beside the group's median or mean).

The plan runs the ``measure`` tool (:func:`generation.agent.measure.measure_value`) and ``calculate``/``compare``;
the answer passes two gates: every number traced (:func:`generation.agent.gate.check_answer`) and the answer is
the one asked (:func:`plan_checks`: the unit is the measure's, a ratio question is never answered with an amount,
every company and period of the question is in the derivation). What is not in the graph is answered as such,
with what was searched; a question whose company is ambiguous is asked back.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from generation.agent import facts as agent_facts
from generation.agent.arithmetic import calculate
from generation.agent.gate import Verdict, check_answer
from generation.agent.loop import format_result
from generation.agent.measure import measure_value
from generation.agent.results import ToolError, ToolResult
from generation.agent.trajectory import RunRecord, StepRecord, run_id, tool_step
from generation.llm.client import LLMClient
from kg import Graph, cypher
from retrieval.contract import AsOf, as_of_cutoff, available
from retrieval.facts import concepts as cc
from retrieval.facts.fact_map import filing_available_at
from retrieval.facts.labels import content_words, element_rows, label_terms, match_label, question_words
from retrieval.facts.measures import (
    CONCEPT_MEASURE_PREFIX,
    MEASURES,
    Measure,
    concept_measure,
    find_measures,
    joined_by_to,
    measure_phrase_words,
    uncovered_words,
)
from retrieval.facts.names import (
    QUESTION_WORDS,
    CompanyHit,
    CompanyIndex,
    CompanyMatch,
    core_name,
    instance_ticker,
    normalize,
)
from retrieval.facts.peers import PeerGroup, find_peer_group, industry_named, peer_words
from retrieval.facts.periods import (
    LATEST_QUARTER_WORDS,
    RELATIVE_WORDS,
    YEAR_AGO_WORDS,
    PeriodAsk,
    find_periods,
    fiscal_period_end,
    iso,
    month_end,
    months_before,
    relative_period,
    year_earlier,
)

OPERATIONS = ("value", "change", "difference", "sum", "compare", "rank")
"""The operations a plan names by itself (the LLM's plan schema, :mod:`generation.agent.understand`); ``standing``
(a company among its peers, :attr:`Plan.peers`) and ``threshold`` (a yes/no against a number,
:attr:`Plan.threshold`) also need what only the words give."""

_RANK = re.compile(r"\b(?:rank|ranking|ranked|order|sort|sorted|from (?:highest|lowest|largest|smallest|best))\b", re.I)
_WHICH = re.compile(r"\b(?:which|who|whose)\b", re.I)
_COMPARATIVE = re.compile(
    r"\b(?:higher|highest|larger|largest|bigger|biggest|greater|greatest|more|most|better|best|stronger|strongest|"
    r"lower|lowest|smaller|smallest|less|least|fewer|fewest|worse|worst|weaker|weakest|compare|compared|versus|vs|"
    r"faster|fastest|quicker|quickest|slower|slowest|steeper|steepest|sharper|sharpest)\b",
    re.I,
)
_SMALLER = re.compile(
    r"\b(?:lower|lowest|smaller|smallest|less|least|fewer|fewest|worse|worst|weaker|weakest|slower|slowest)\b", re.I
)
_BETTER_WORSE = re.compile(r"\b(?:better|best|worse|worst)\b", re.I)
"""Words that judge a figure: "better" is the higher of a margin or return but the lower of a debt ratio
(:data:`LOWER_IS_BETTER`)."""
_DECLINE = re.compile(
    r"\b(?:(?:fell|fall|falls|fallen|falling)(?! short)|decline|declined|declines|declining|drop|dropped|drops|shrank|shrink|shrinks|"
    r"shrunk|decrease|decreased|decreases|contracted|contraction|slump|slumped|slide|slid|worsen|worsened|deteriorate|"
    r"deteriorated|deterioration)\b",
    re.I,
)
"""Words of a change downwards: "which revenue fell more" picks the lower growth."""
_RISE = re.compile(
    r"\b(?:rise|rises|rose|risen|rising|grow|grows|grew|grown|increase|increased|increases|gain|gained|climb|climbed|"
    r"jump|jumped|soar|soared|improve|improved|expand|expanded)\b",
    re.I,
)
"""Words of a change upwards ("how much did IBM's revenue increase"): a one-company change that went down says so."""
HIGHER_IS_BETTER = frozenset(
    {
        "revenue", "gross_profit", "gross_margin", "operating_income", "operating_margin", "net_income", "net_margin",
        "ebitda", "ebitda_margin", "pretax_income", "pretax_margin", "operating_cash_flow", "free_cash_flow",
        "ocf_margin", "current_ratio", "quick_ratio", "cash_ratio", "interest_coverage", "roa", "roe",
        "asset_turnover", "inventory_turnover", "working_capital",
    }
)  # fmt: skip
"""Catalog measures where a higher figure is the better one (profit, returns, liquidity, coverage, turnover)."""
LOWER_IS_BETTER = frozenset({"debt_to_equity", "liabilities_to_equity", "liabilities_to_assets", "dso", "dio"})
"""Catalog measures where a lower figure is the better one (leverage, days outstanding); any other measure (a cost,
a tax rate, R&D intensity, cash) has no better side, so "better" or "worse" about it is refused."""
_BY_HOW_MUCH = re.compile(
    r"\bby how much\b|\bhow much (?:higher|more|larger|bigger|greater|lower|less|smaller)\b|\bby what (?:margin|amount)\b"
    r"|\b(?:and|what(?:'s| is| was)) the (?:difference|gap)\b|\bhow (?:big|large|wide) (?:is|was) the (?:difference|gap)\b"
    r"|\b(?:by )?how many (?:percentage |percent |basis )?points\b|\b(?:by )?how many bps\b",
    re.I,
)
_RELATIVE_PERCENT = re.compile(
    r"\bby (?:what|how many|how much|which) (?:percent(?:age)?\b|per cent\b|%)(?!\s*points?\b)|"
    r"\bhow many (?:percent(?:age)?\b|per cent\b)(?!\s*points?\b)|"
    r"\bhow much percent\b|"
    r"\bwhat (?:percent(?:age)?|per cent|%) (?:higher|more|larger|bigger|greater|lower|less|smaller)\b|"
    r"\bin (?:percent(?:age)?|relative) terms\b",
    re.I,
)
"""A gap between two figures asked relative to the other ("By what percentage did IBM's revenue exceed Amgen's?",
"by how many percent was it higher"): the gap over the figure it is set against, in percent."""
_RELATIVE_TIMES = re.compile(r"\bhow many times\b|\b(?:what|which) multiple of\b|\bthe ratio of\b", re.I)
"""Two figures asked as a multiple ("How many times bigger was IBM's revenue than Amgen's?", "the ratio of IBM's
revenue to Amgen's"): the one over the other."""
_DIFFERENCE = re.compile(
    r"\b(?:difference|gap|delta|spread between|how much more|how much less|exceed|exceeded|exceeds|minus|net of|"
    r"less than|more than|less)\b",
    re.I,
)
_NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_COUNT = re.compile(
    r"\b(?:top|bottom|which|what|name|list|the|first|show)\s+(?:are\s+the\s+)?(?P<n>two|three|four|five|six|seven|eight|"
    r"nine|ten|[2-9]|1[0-9])\b(?![-/.,]\d|-[a-z]|\s*(?:months?|quarters?|years?|weeks?|days?|%|percent))",
    re.I,
)
"""A count of companies asked ("Which 2 oil companies had the highest ...", "the three largest utilities", "top 5",
"bottom two", "which two of IBM, 3M and Amgen"): that many, ranked, where more companies are named; not a span ("the 3
months ended")."""
_PLACE = re.compile(
    r"\b(?P<o>second|third|fourth|fifth|2nd|3rd|4th|5th)[\s-]+(?:highest|largest|biggest|greatest|most|lowest|"
    r"smallest|least|best|worst|strongest|weakest)\b|\b(?:ranked|ranks|rank|came|comes|placed|finished)\s+(?:in\s+)?"
    r"(?P<r>second|third|fourth|fifth|2nd|3rd|4th|5th|last)\b|\b(?P<l>last)\s+place\b",
    re.I,
)
"""A place asked among the companies ("the second highest revenue", "which railroad ranked second", "who came
last"): the company at that place, not the top (all three were answered with the highest)."""
_ORDINAL_PLACES = {"second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5, "5th": 5}
_PAID = re.compile(r"\b(?:paid|pay|pays|paying|payments?)\b", re.I)
"""Words of cash paid: taxes paid are not the income tax expense."""
_FORECAST = re.compile(
    r"(?<!^)\b(?:estimates?|estimated|consensus|forecasts?|forecasted|guidance|projected(?! benefit)|projections?|outlook)\b",
    re.I,
)
"""Words that ask a figure no filing reports yet ("IBM's revenue estimate", "the consensus"); the imperative
"Estimate X's revenue" opening a question asks the reported figure."""
_SHORTFALL = re.compile(
    r"\bhow much (?:less|lower|smaller|fewer)\b|\btrail(?:s|ed|ing)?\b|\blag(?:s|ged|ging)?\b|"
    r"\b(?:fall|falls|fell|falling) short\b|\bbehind\b",
    re.I,
)
"""A difference asked as the first figure's shortfall ("How much less did Amgen spend on R&D than IBM?", "by how many
points did IBM's margin trail Amgen's"): the second less the first (it was the first less the second, -741,000,000
for a shortfall of 741,000,000)."""
_GROWTH = re.compile(
    r"\b(?:growth|grow|grew|grown|year[- ](?:over|on)[- ]year|yoy|y/y|change|changed|increase|increased|decrease|"
    r"decreased|decline|declined|rise|rose|risen|fall(?! short)|fallen|fell(?! short)|drop|dropped|year[- ]ago|"
    r"a year (?:earlier|ago|before)|prior[- ]year|"
    r"previous year|same (?:quarter|period) (?:of |in )?(?:the )?(?:last|previous|prior) year|last year's|"
    r"improve|improved|improvement|worsen|worsened|deteriorate|deteriorated|expand|expanded|shrink|shrank|shrunk|"
    r"(?:compared?|comparing|versus|vs\.?|against|relative)\s+(?:to\s+|with\s+)?(?:the\s+)?"
    r"(?:last year|(?:prior|previous) year|year before|year earlier))\b",
    re.I,
)
"""Words of a change ("growth", "fell", "compared to last year": "How did Amgen's revenue do in Q2 2009 compared to
last year?" was answered with the quarter's revenue alone)."""
_YEAR_AGO = re.compile(
    r"\b(?:year[- ](?:over|on)[- ]year|yoy|y/y|year[- ]ago|a year (?:earlier|ago|before)|prior[- ]year|previous year|"
    r"same (?:quarter|period|month)|last year's|(?:a|the) year (?:earlier|before))\b",
    re.I,
)
"""Words that make a change year over year (the default of a flow's change)."""
_ALL_DEBT = re.compile(r"\b(?:total|gross|all|overall|entire|combined)\s+(?:debt|borrowings)\b", re.I)
"""Debt said as all of it ("total debt"): short-term borrowings and current maturities too, which the catalog's debt
(long-term debt, noncurrent) leaves out, so such a question is refused rather than answered with part of it."""
_EXCHANGE = re.compile(r"\b(?:NYSE|NASDAQ|Nasdaq|AMEX|NYSE\s*American|NYSE\s*Arca|OTC|OTCBB)\s*:\s*(?=[A-Z])")
"""A stock exchange written before a ticker ("NYSE:CVX", "NASDAQ: AMGN"): the ticker names the company, the exchange
none (NYSE Euronext was read beside Chevron)."""
_AGAINST_ONE = re.compile(
    r"\b(?:versus|vs\.?|compared\s+(?:to|with)|relative\s+to|against|from|since)\s+(?:the\s+)?(?P<p>.+?)(?=[?.,;]|$)",
    re.I,
)
"""A change set against one named period ("revenue growth versus Q2 2008"): the period named is the base, not the
period to measure."""
_LONG_TERM = re.compile(r"\blong[\s-]*term\b|\bnon-?current\b|\bLT\s+debt\b", re.I)
_BARE_DEBT = re.compile(r"\b(?:debt|borrowings)\b", re.I)
"""Debt said without "long-term" ("How much debt did Chevron have?", "debt-to-assets"): all of it, which the catalog's
long-term debt (noncurrent) is not; refused as "total debt" is. Debt to equity is the catalog's named ratio (long-term
debt over equity, as documented)."""
_OTHER_CURRENCY = re.compile(
    r"\b(?:EUR|GBP|JPY|CNY|RMB|CHF|CAD|AUD|HKD|INR|euros?|yen|yuan|renminbi|sterling|pounds?|(?:swiss )?francs?|"
    r"rupees?|(?:canadian|australian|hong kong|singapore|new zealand) dollars?)\b|[€£¥]",
    re.I,
)
"""A currency other than the filing's US dollars ("revenue in EUR"): finkg converts none, so an amount asked in one is
refused rather than answered in USD."""
_AMBIGUOUS_TERMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"\breturn on (?:net )?(?:sales|revenues?)\b|\bROS\b"),
        "operating income / revenue (operating margin) in some uses and net income / revenue (net margin) in others",
    ),
    (
        re.compile(r"\bleverage(?:\s+ratio)?\b", re.I),
        "debt to equity, liabilities to equity, liabilities to assets or debt to EBITDA, as analysts use it",
    ),
    (
        re.compile(r"\bdebt\s+ratio\b", re.I),
        "total debt / total assets in some uses and total liabilities / total assets in others",
    ),
    (
        re.compile(r"\bgearing\b", re.I),
        "net debt / equity in most uses; finkg's debt to equity is long-term debt (noncurrent) / equity",
    ),
    (re.compile(r"\bliquidity\s+ratio\b", re.I), "the current, quick or cash ratio"),
)
"""Names of measures that analysts define differently, asked back, never answered with one of their definitions:
"return on sales" (operating income / revenue in Investopedia's, net income / revenue as the DuPont analysis' net
profit margin), "leverage" or "debt ratio", "gearing", "liquidity ratio"."""
_SINCE = re.compile(r"\b(?:compare|compared|comparison|versus|vs|than|from|since|relative to|against)\b", re.I)
"""Words that set a period against another ("versus a year ago"): a change, not the value a year ago."""


def _listed(question: str, name: str) -> bool:
    """Whether the unresolved ``name`` stands in a list of companies ("IBM and Accenture", "Accenture, IBM", "IBM or
    Accenture", "IBM vs. Accenture")."""
    at = question.find(name)
    if at < 0:
        return False
    before, after = question[:at].rstrip(), question[at + len(name) :].lstrip()
    joins = r"(?:and|or|&|vs\.?|versus|,)"
    return bool(re.search(rf"(?:^|\W){joins}$", before, re.I) or re.match(rf"{joins}(?:\W|$)", after, re.I))


def _asks_change(question: str) -> bool:
    """Whether the question asks a change (:data:`_GROWTH`), not a value one year back (:func:`_year_ago_value`)."""
    return _GROWTH.search(question) is not None and not _year_ago_value(question)


def _year_ago_value(question: str) -> bool:
    """True when the question asks a value one year back ("Abbott's revenue a year ago", "cash in the year-ago
    quarter") or at a relative period ("last year's revenue"), not a change: its only words of change are those
    periods' (:data:`YEAR_AGO_WORDS`, :data:`RELATIVE_WORDS`) and nothing sets them against another period."""
    back = [m.span() for rx in (YEAR_AGO_WORDS, RELATIVE_WORDS) for m in rx.finditer(question)]
    if not back or _SINCE.search(question):
        return False
    return all(any(a <= m.start() and m.end() <= b for a, b in back) for m in _GROWTH.finditer(question))


_PERCENT = re.compile(r"\b(?:percent|percentage|per cent|pct|growth rate|rate of growth)\b|%", re.I)
"""Words that ask a change in percent."""
_IN_DOLLARS = re.compile(
    r"\b(?:how many dollars|in (?:us )?dollars|in usd|in dollar terms|in absolute terms|dollar (?:change|amount|"
    r"increase|decrease|decline|drop|growth|gain|rise|fall)|absolute (?:change|increase|decrease|amount))\b",
    re.I,
)
"""Words that ask a change of an amount in dollars ("by how many dollars did revenue change"), not in percent."""
_SEQUENTIAL = re.compile(
    r"\b(?:quarter[\s-]+(?:over|on|to)[\s-]+quarter|qoq|q/q|sequential(?:ly)?|(?:previous|prior|preceding) quarter|"
    r"month[\s-]+(?:over|on)[\s-]+month)\b",
    re.I,
)
"""A change against the quarter before ("quarter-over-quarter revenue growth", "QoQ", "sequential"): finkg's change of
a flow is year over year, so such a question is refused rather than answered with the year-over-year change."""
_MULTI_YEAR = re.compile(
    r"\b(?:(?:two|three|four|five|ten|multi|several|\d{1,2})[\s-]+years?|over (?:the )?(?:past |last )?(?:two|three|"
    r"four|five|ten|several|\d{1,2}) years)\b(?!\s+(?:ago|earlier|before))",
    re.I,
)
"""A change over several years ("two-year revenue growth", "over the past three years"): finkg's change is over one
year (or the span asked), so such a question is refused rather than answered with the one-year change."""

_THRESHOLD = re.compile(
    r"\b(?P<op>above|below|over|under|more than|less than|greater than|higher than|lower than|at least|at most|"
    r"exceed(?:s|ed)?|top(?:s|ped)?)\s+(?P<usd>USD\s*|\$\s*)?(?P<num>-?\d[\d,]*(?:\.\d+)?)\s*"
    r"(?P<unit>%|percent\b|per cent\b|x\b|times\b|trillion\b|tn\b|billion\b|bn\b|b\b|million\b|mm\b|mn\b|m\b|"
    r"thousand\b|k\b)?"
    r"(?!\s*(?:months?|quarters?|years?|weeks?|days?|periods?)\b)",
    re.I,
)
"""A threshold a yes/no question sets ("Was X's effective tax rate above 35%?", "Did X's revenue exceed $10
billion?"): the comparison, the number and its unit or scale as written."""
_SCALES = {
    "trillion": 1e12,
    "tn": 1e12,
    "billion": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "million": 1e6,
    "mm": 1e6,
    "mn": 1e6,
    "m": 1e6,
    "thousand": 1e3,
    "k": 1e3,
}
UNSCALED_AMOUNT = 1e5
"""A bare number below this, set against an amount ("Was net income more than 1.2?"), says no scale: refused, never
compared with the amount in dollars."""

_SUM = re.compile(
    r"\b(?:combined|together|in total(?![\s-]+[A-Za-z])|sum of|aggregate|altogether|added up|add up)\b", re.I
)
"""Words that ask for the sum of several companies' (or measures') amounts ("the combined revenue of Chevron and
ConocoPhillips")."""
_YES_NO = re.compile(r"\s*(?:is|was|were|are|did|does|do|has|had|have)\b", re.I)
"""A question that opens with an auxiliary verb asks yes or no ("Is IBM's current ratio higher than 3M's?")."""
_THAN = re.compile(r"\bthan\b", re.I)
_TOTAL = re.compile(r"\b(?:total|overall|aggregate)\b(?!\s+(?:assets|liabilities)\b)", re.I)
"""A word that may ask several companies' figures summed ("the total revenue of IBM and 3M"), or name the line item
("total revenue"): with several companies, asked which. "Total assets" and "total liabilities" are the line items'
names, as everyone says them."""
_SHARE_OF_WHAT = re.compile(
    r"\b(?:what|which)\s+(?:percentage|percent|per\s+cent|%|share|proportion|fraction|portion|part)\s+of\b", re.I
)
"""A ratio asked with its denominator first: "What percentage of Humana's assets is cash?" (cash / assets)."""

_TWO_WAY = re.compile(
    r"\b(?:than|between|versus|vs|or|rank|order|which|who|whose|exceed(?:s|ed)?|outpaced?|surpass(?:es|ed)?|"
    r"trail(?:s|ed)?|beat)\b",
    re.I,
)
_DESCENDING = re.compile(
    r"\b(?:highest|largest|biggest|greatest|most) to (?:lowest|smallest|least)\b|\bdescending\b", re.I
)
_ASCENDING = re.compile(
    r"\b(?:lowest|smallest|least) to (?:highest|largest|biggest|greatest|most)\b|\bascending\b", re.I
)
_RATIO_OF = re.compile(
    r"\bratio of\b|\bdivided by\b|\bas an? (?:share|percentage|percent|proportion|fraction) of\b|\brelative to\b"
    r"|\bto\b(?=[^?]*\bratio\b)",
    re.I,
)
_ASKS_RATIO = re.compile(
    r"\b(?:ratio|margin|rate|percent|percentage|share of|proportion|coverage|turnover|return on|multiple|intensity|"
    r"yield|profitab\w*|per dollar|per share|for every dollar|of each dollar|how many times)\b|%",
    re.I,
)

_DAYS_WORD = re.compile(r"\bdays?\b", re.I)
_DAYS_COUNTED = re.compile(
    r"(?:\d[\d,]*|\b(?:thirty|sixty|ninety|hundred|one|two|three|seven|few|several|many(?<!how many)))[\s-]*$", re.I
)
"""A number of days counted out ("the 91 days ended June 27", "90-day"): a period, not a measure in days."""


def asks_days(question: str) -> bool:
    """Whether ``question`` asks for a number of days ("How many days of inventory ...", "DSO in days", "days
    payable"), not a span of days ("the 91 days ended June 27, 2009"): the answer's unit must then be days."""
    return any(not _DAYS_COUNTED.search(question[: m.start()]) for m in _DAYS_WORD.finditer(question))


@dataclass
class Plan:
    """What a question asks (issue 44's typed plan).

    Attributes:
        kind: the operation (``value``, ``change``, ``difference``, ``sum`` ("combined"), ``compare``, ``rank``,
            ``standing``: a company among its peers, ``group average``: an industry's mean or median), or why there
            is none: ``no company``, ``unknown`` (no measure),
            ``ambiguous`` (a company name fits several: ask back), ``ambiguous measure`` (the words name several
            elements by their labels: ask back), ``one of two`` (a comparison that found one company only: refused,
            never answered with that company's value), ``no peers`` (the group holds one company).
        companies: ``(cik, EDGAR name)`` in the order named. measures: catalog measures (a composed one for "X as a
        share of revenue" or "the ratio of X to Y"). periods: the periods named (empty: the latest). unit: the
        answer's unit. smaller: a comparison asks for the lower. by_how_much: a comparison asks for the gap too.
        relative: the gap of two figures asked relative to the second: ``percent`` (the gap over it, in %) or
        ``times`` (the one over the other, a multiple), else "". change: a comparison, ranking or difference of the
        companies' changes ("which company's revenue fell more"), each as a one-company ``change`` is. yes_no: a
        comparison of two companies asked as a yes/no question ("Is IBM's current ratio higher than 3M's?"): the
        answer says yes or no before the company it picks. shortfall: a ``difference`` of two companies asked as the
        first one's shortfall (:data:`_SHORTFALL`): the second less the first. latest_quarter: no period named and
        the question asks the latest quarter itself (:data:`~retrieval.facts.periods.LATEST_QUARTER_WORDS`): a
        flow over one quarter, never a 10-K's year. place: the place a comparison asks for (:data:`_PLACE`: 2 for
        "the second highest"), 1 the top. direction: the way a one-company ``change`` is asked to have gone (``up``:
        "how much did revenue increase", ``down``: "how much did net income fall"; :data:`_RISE`, :data:`_DECLINE`),
        else "": an answer the other way says so ("12.22% (an increase)"), never read as the drop asked. since: a
        balance's ``change`` since the one period the question names ("since December 31, 2008"): from it to the
        latest period (``periods`` is then the latest, unnamed, and that period).
        searched: what was searched (for a "not in the graph" answer). ambiguous: ``(words, [(cik, name)])`` to ask
        back. unresolved: capitalised words that matched no company. sic: CIK -> SIC code. elements: the elements
        tied for the words of an ``ambiguous measure`` (``(tag, label)``). refusal: why the catalog measures the
        question names were not used ("the words 'net' are not part of cash and cash equivalents"), else "".
        notes: what the reading chose that the question did not say (which of two registrants of one name), passed
        to the answer's ``notes``. over_span: a ``change`` of a balance over the span the question names ("how much
        did cash change in the six months ended June 30, 2009": the balance at June 30 less the balance at the
        span's start, December 31, 2008), not year over year.
    """

    kind: str
    companies: list[tuple[int, str]] = field(default_factory=list)
    measures: list[Measure] = field(default_factory=list)
    periods: list[PeriodAsk] = field(default_factory=list)
    unit: str | None = None
    smaller: bool = False
    by_how_much: bool = False
    searched: list[str] = field(default_factory=list)
    ambiguous: list[tuple[str, list[tuple[int, str]]]] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    sic: dict[int, int | None] = field(default_factory=dict)
    elements: list[tuple[str, str]] = field(default_factory=list)
    refusal: str = ""
    notes: list[str] = field(default_factory=list)
    over_span: bool = False
    peers: PeerGroup | None = None
    threshold: tuple[str, float, str] | None = None
    average: bool = False
    limit: int | None = None
    relative: str = ""
    change: bool = False
    yes_no: bool = False
    shortfall: bool = False
    latest_quarter: bool = False
    place: int = 1
    direction: str = ""
    since: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The plan as JSON-able data: ``{companies, measures (id, formula, unit), periods, operation, unit}``."""
        return {
            "operation": self.kind,
            "companies": [{"cik": c, "name": n} for c, n in self.companies],
            "measures": [{"id": m.id, "formula": m.formulas[0], "unit": m.unit} for m in self.measures],
            "periods": [
                {"ddate": p.ddate, "qtrs": p.qtrs, "text": p.text, "fiscal": p.fiscal, "trailing": p.trailing}
                for p in self.periods
            ],
            "unit": self.unit,
            "smaller": self.smaller,
            "by_how_much": self.by_how_much,
            "over_span": self.over_span,
            **({"relative": self.relative} if self.relative else {}),
            **({"change": True} if self.change else {}),
            **({"peers": self.peers.description} if self.peers else {}),
        }


@dataclass
class SecAnswer:
    """The answer to an SEC question.

    Attributes:
        answer: the gated answer text, or None. status: ``answered``, ``could not verify``, ``not in graph``,
        ``ask back`` (a company name fits several), ``not understood`` (the LLM's plan did not resolve) or
        ``could not answer``. reasons: why not answered (or what to
        ask back). verdict: the gate's (None when it did not run). derivation: ``operands`` (name -> ``{value,
        fact_key, company, concept, period, filing}``), ``formula``, ``expression``, ``result``. tool_results: every
        tool call in order. plan: the question's :class:`Plan`. value: the answer's number in ``unit`` (a percent
        as its number), None for a name. unit: ``USD``, ``%``, ``x``, ``days``, ``pp`` (percentage points), ``bp`` (basis
        points) or None.
        pick: the companies a comparison or ranking chose, in order. notes: what the answer used that the question
        did not say (a year-to-date span, each company's latest period).
    """

    answer: str | None
    status: str
    reasons: list[str] = field(default_factory=list)
    verdict: Verdict | None = None
    derivation: dict[str, Any] = field(default_factory=dict)
    tool_results: list[ToolResult] = field(default_factory=list)
    plan: Plan | None = None
    value: float | None = None
    unit: str | None = None
    pick: list[str] | None = None
    notes: list[str] = field(default_factory=list)


_CompanyRow = tuple[int, str, Any, Any, tuple[str, ...], tuple[str, ...]]


def company_index(graph: Graph) -> tuple[CompanyIndex, dict[int, int | None]]:
    """The graph's companies as a :class:`CompanyIndex`, and CIK -> SIC code. The index is built once per state of
    the graph's companies (their names, SIC codes, tickers, instances and former names, read with every call) and
    reused while that state lasts (:func:`_company_index`)."""
    rows = graph.read(cypher.COMPANY_NAMES)
    key = tuple(
        (
            int(r["cik"]),
            str(r["name"]),
            r.get("sic"),
            r.get("ticker"),
            tuple(str(i) for i in r.get("instances") or []),
            tuple(str(n) for n in r.get("formers") or [] if n),
        )
        for r in rows
    )
    index, sic = _company_index(key)
    return index, dict(sic)


@lru_cache(maxsize=4)
def _company_index(rows: tuple[_CompanyRow, ...]) -> tuple[CompanyIndex, dict[int, int | None]]:
    """:func:`company_index` of the rows of ``kg.cypher.COMPANY_NAMES`` as ``(cik, name, sic, ticker, instances,
    formers)``: a :class:`CompanyIndex` is never changed after it is built, so one serves every question asked of
    the same companies."""
    sic = {cik: (int(code) if code not in (None, "") else None) for cik, _, code, *_ in rows}
    data_tickers = {
        cik: {t for t in [ticker, *map(instance_ticker, instances)] if t} for cik, _, _, ticker, instances, _ in rows
    }
    former = {cik: list(formers) for cik, *_, formers in rows}
    return CompanyIndex(((cik, name) for cik, name, *_ in rows), None, data_tickers, former), sic


def _named_company(graph: Graph, company: str) -> list[tuple[int, str]]:
    cik = int(company) if company.strip().isdigit() else None
    rows = graph.read(cypher.COMPANY_MATCHES, {"cik": cik, "name": company.strip()})
    exact = [r for r in rows if core_name(r["name"]) == core_name(company)]
    return [(int(r["cik"]), r["name"]) for r in (exact or rows)[:1]]


def _composed(question: str, measures: list[Measure], joined: bool = False) -> list[Measure]:
    """``the ratio of cash to total assets``: two amounts named with ratio words (or ``joined`` by "to" alone:
    "total liabilities to total assets", :func:`joined_by_to`) become one measure, their quotient (``x``; ``%`` when
    asked "as a share/percentage of"), or the catalog's measure of that quotient (cash to current liabilities is the
    cash ratio); "what percentage of total assets is cash" names the denominator first."""
    reversed_ = bool(_SHARE_OF_WHAT.search(question))  # "what percentage of assets is cash": cash / assets
    if len(measures) != 2 or not all(m.unit == "USD" for m in measures):
        return measures
    if not (reversed_ or joined or _RATIO_OF.search(question)):
        return measures
    a, b = reversed(measures) if reversed_ else measures
    pct = bool(re.search(r"\b(?:share|percentage|percent|proportion|fraction|portion)\b|%", question, re.I))
    same = next((m for m in MEASURES if m.formulas[0] == f"{a.formulas[0]} / {b.formulas[0]}"), None)
    if same is not None and (same.unit == "%" or not pct):  # "total liabilities to total assets": the catalog's
        return [same]
    return [
        Measure(
            f"{a.id}_to_{b.id}",
            f"{a.label} to {b.label}",
            "%" if pct else "x",
            (f"({a.formulas[0]}) / ({b.formulas[0]})",),
            (),
            f"{a.definition} / {b.definition}",
        )
    ]


_OPENING_OPERATION = re.compile(r"rank|list|show|sort|order|compare|name|top|give|find|which|what|how|who", re.I)
"""First words of a question that ask for an operation ("Rank REITs by debt to equity")."""

_PLACE_BEFORE = re.compile(
    r"\b(?:in|from|to|outside|across|within|throughout|inside|excluding|ex)\s+(?:the\s+)?$", re.I
)
"""Words before a capitalised run that make it a place or part of the business of the company found, not another
company: "revenue in Europe", "sales to China", "outside the United States" (a second company the graph does not hold
is refused either way: a comparison that finds one company, or words the measure does not account for)."""


def _in_place(question: str, run: str) -> bool:
    """Whether every occurrence of the unresolved capitalised ``run`` follows :data:`_PLACE_BEFORE` ("IBM's revenue in
    Europe"): a region, segment or product of the company found, whose words the measure must then account for (so
    the whole company's revenue is never the answer), not another company's name."""
    at = [m.start() for m in re.finditer(rf"(?<![\w&]){re.escape(run)}(?![\w&])", question)]
    return bool(at) and all(_PLACE_BEFORE.search(question[:i]) for i in at)


def _inside_longer_names(question: str, found: CompanyMatch) -> None:
    """Drop a company found by the first words of a longer name the graph does not hold: the found words followed by
    "of", "de" or a number and then a capitalised run that matched nothing ("Energy Services of America" was read
    as ENSCO's former name "Energy Services", "Blackrock 2037 Municipal Target Term Trust" as BlackRock Inc, both
    answered with that company's figures). The whole name becomes unresolved."""
    for hit in list(found.found):
        for run in list(found.unresolved):
            joined = re.search(
                rf"(?<![\w&])(?i:{re.escape(hit.text)})\s+(?:of|de|du|\d{{1,4}})\s+{re.escape(run)}(?![\w&])", question
            )
            if joined is not None:
                found.found.remove(hit)
                found.unresolved[found.unresolved.index(run)] = joined.group()
                break


def _without_companies(question: str, said: Sequence[str]) -> str:
    """The question with the words that named its companies blanked out (case-insensitive, whole words). A one-word
    name is blanked only where it is written with a capital letter, as the company index reads it (unless the whole
    question is lower case): "the gap between Gap's and GameStop's net income" keeps the difference's "gap"."""
    lower = question == question.lower()
    for words in sorted(said, key=len, reverse=True):
        parts = [w for w in re.split(r"[\s&]+", words) if w]
        pattern = r"[\s&.'’-]+".join(re.escape(w) for w in parts)
        if not pattern:
            continue
        cased = len(parts) == 1 and not lower  # only its capitalised occurrences are the name

        def blank(m: re.Match[str], cased: bool = cased) -> str:
            return m.group() if cased and m.group().islower() else " "

        question = re.sub(rf"(?<![A-Za-z]){pattern}(?![A-Za-z])", blank, question, flags=re.I)
    return question


def _without_definition(measures: list[Measure]) -> list[Measure]:
    """The measures less those that spell out the first one's formula: "working capital (current assets minus
    current liabilities)" asks for working capital, not for a difference of working capital and current assets."""
    if len(measures) < 2:
        return measures
    first = set(measures[0].operands(measures[0].formulas[0]))
    if len(first) < 2:
        return measures
    rest = [m for m in measures[1:] if not (len(m.formulas[0].split()) == 1 and m.formulas[0] in first)]
    return [measures[0], *rest]


def without_measure_words(question: str, hits: list[CompanyHit], plan: Plan) -> list[CompanyHit]:
    """``hits`` without a one-word short name that the question says only inside a catalog measure phrase
    (:func:`measure_phrase_words`): "Research and development spending at Boeing" names Boeing, not Research In
    Motion (whose short name is "research"); what was left out is said in ``plan.searched``."""
    if not any(h.how in ("alias", "short form") and " " not in h.text for h in hits):
        return hits  # no one-word short name: nothing a measure phrase could hold
    words = measure_phrase_words(question)
    keep = []
    for h in hits:
        said = [inside for w, inside in words if w == h.text.lower()]  # a short form as written: "Gross"
        if h.how in ("alias", "short form") and " " not in h.text and said and all(said):
            plan.searched.append(f"{h.text!r} is a word of a measure here, not {h.name} (CIK {h.cik})")
            continue
        keep.append(h)
    return keep


def _registrant_for_period(graph: Graph, plan: Plan, found: CompanyMatch, question: str) -> None:
    """One name, two registrants: a company and its predecessor. When a successor takes a registrant's name, EDGAR
    files the predecessor's reports under the name with ``/OLD`` (``ALPHA NATURAL RESOURCES, INC./OLD``, CIK 1310243,
    filed for June 2009; ``ALPHA NATURAL RESOURCES, INC.``, CIK 1301063, for March 2010). For each ambiguous name of
    the question whose candidates have the same name (:func:`core_name`), when exactly one of them filed a report for
    every period the question asks (its own period end; no period: the one whose latest report is the latest), that
    one is the company asked about, placed among the question's other companies where the question names it (a
    difference is the first-named company's figure minus the second's), and ``plan.notes`` says why; otherwise the
    name stays ambiguous (ask back). A fiscal period ("fiscal 2010 second quarter") is each company's own, so it
    leaves the name ambiguous.

    Args:
        found: the question's company match (:meth:`CompanyIndex.find`), for where each company is named.

    Raises:
        GraphError: Neo4j is unavailable.
    """
    if not plan.ambiguous or any(p.fiscal for p in plan.periods):
        return
    asked = [p.ddate for p in plan.periods if p.ddate]
    text = f" {normalize(question)} "
    named = [(h.at, (h.cik, h.name)) for h in found.found]
    still: list[tuple[str, list[tuple[int, str]]]] = []
    for words, cands in plan.ambiguous:
        pick = _one_registrant(graph, words, cands, asked)
        if pick is None:
            still.append((words, cands))
            continue
        at = text.find(f" {normalize(words)} ")
        named.append((at + 1 if at >= 0 else len(text), pick[0]))
        plan.notes.append(pick[1])
    if len(still) == len(plan.ambiguous):
        return
    plan.companies = list(dict.fromkeys(c for _, c in sorted(named, key=lambda x: x[0])))
    plan.ambiguous = still


def _one_registrant(
    graph: Graph, words: str, cands: list[tuple[int, str]], asked: list[str]
) -> tuple[tuple[int, str], str] | None:
    """The one of ``cands`` (``(CIK, EDGAR name)``, all of one name) that filed a report for every period end of
    ``asked`` (``YYYYMMDD``; none: the latest report of any of them), and the note that says why; None when not
    exactly one did (see :func:`_registrant_for_period`)."""
    if len(cands) < 2 or len({core_name(n) for _, n in cands}) != 1:
        return None
    reported = {c: {str(r["period"]) for r in graph.read(cypher.COMPANY_FISCAL_PERIODS, {"cik": c})} for c, _ in cands}
    if asked:
        fits = [(c, n) for c, n in cands if all(d in reported[c] for d in asked)]
        why = f"filed a report for {', '.join(iso(d) for d in asked)}"
    else:
        latest = max((max(v) for v in reported.values() if v), default=None)
        if latest is None:
            return None
        fits = [(c, n) for c, n in cands if latest in reported[c]]
        why = f"filed the latest report ({iso(latest)})"
    if len(fits) != 1:
        return None
    (cik, name), others = fits[0], [f"{n} (CIK {c})" for c, n in cands if c != fits[0][0]]
    return (cik, name), f"{words!r} is the name of {name} (CIK {cik}) and of {'; '.join(others)}; only {name} {why}"


def plan_question(graph: Graph, question: str, company: str | None = None) -> Plan:
    """The :class:`Plan` of a question (see the module doc); the word-based reading, no LLM.

    Raises:
        GraphError: Neo4j is unavailable.
    """
    index, sic = company_index(graph)
    plan = Plan("value", sic=sic)
    question = _EXCHANGE.sub("", question)  # "NYSE:CVX" is Chevron's ticker, not NYSE Euronext and Chevron
    if company:
        plan.companies = _named_company(graph, company)
        plan.searched.append(f"the companies whose CIK, ticker or name matches {company!r}")
        found = None
    else:
        found = index.find(question)
        found.found = without_measure_words(question, found.found, plan)
        industry = industry_named(question)
        if industry is not None:  # "Rank the REITs": the industry's words name no company
            inside = f" {normalize(industry[1])} "
            # the question's first word, capitalised as any first word, is an operation's ("Rank REITs by ..."), not
            # a name's ("Lloyds Banking Group tax provision" is a company the graph does not hold, not the banks)
            opening = [w for w in normalize(question).split()[:1] if _OPENING_OPERATION.fullmatch(w)]

            def only_industry(run: str) -> bool:
                """Whether a capitalised run is the industry's words ("REITs", "Rank REITs"), not a name that holds
                them ("Darden Restaurants")."""
                padded = f" {normalize(run)} "
                rest = padded.replace(inside, " ").split() if inside in padded else None
                return padded in inside or (
                    rest is not None and all(w in QUESTION_WORDS or [w] == opening for w in rest)
                )

            found.found = [h for h in found.found if f" {normalize(h.text)} " not in inside]
            found.unresolved = [u for u in found.unresolved if not only_industry(u)]
            found.ambiguous = [(w, c) for w, c in found.ambiguous if f" {normalize(w)} " not in inside]
        _inside_longer_names(question, found)
        plan.companies = [(h.cik, h.name) for h in found.found]
        plan.ambiguous = found.ambiguous
        plan.unresolved = [u for u in found.unresolved if not find_measures(u)]  # "SG&A" is a measure
        plan.searched.append(
            f"the names, short names and tickers of the graph's {len(index.names)} companies"
            + (f"; no company matches {', '.join(repr(u) for u in found.unresolved)}" if found.unresolved else "")
            + "".join(
                f" ({words!r} is {name}, CIK {cik}, in the SEC's ticker table: a company the graph does not hold)"
                for words, cik, name in found.elsewhere
            )
        )
    try:
        plan.periods = find_periods(question)
        plan.latest_quarter = not plan.periods and LATEST_QUARTER_WORDS.search(question) is not None
    except ValueError as exc:
        plan.kind = "unknown"
        plan.searched.append(str(exc))
        if str(exc).startswith(("several periods", "unread period")):
            plan.refusal = str(exc)
        return plan
    if found is not None:
        _registrant_for_period(graph, plan, found, question)
    said = [h.text for h in found.found] if found is not None else []
    # a name that matched no company ("Darden Restaurants", "Intelligent Hotel Group") holds no industry group
    unnamed = list(found.unresolved) if found is not None else []
    group = None if company else find_peer_group(question, plan.companies, sic, index.names, [*said, *unnamed])
    if group is not None:
        said.append(group.words)  # "oil companies", "its peers": not measure words
    hits = find_measures(question, said)
    measures = list({m.id: m for _, m in hits}.values())  # "effective tax rate (ETR)": one
    plan.measures = _composed(question, _without_definition(measures), joined_by_to(question, said))
    operation = " ".join(m.group() for rx in _OPERATION_WORDS for m in rx.finditer(question))
    if _RATIO_OF.search(question) or _SHARE_OF_WHAT.search(question):  # "total liabilities as a share of total assets"
        operation += " share percentage percent proportion fraction portion part went go goes devoted allocated"
    if group is not None:  # "How does Wyeth stack up against other drugmakers"
        operation += " " + " ".join(peer_words(question))
    operation += " " + " ".join(p.text for p in plan.periods)  # "over the past four quarters": the period's words
    term = next(((m, why) for rx, why in _AMBIGUOUS_TERMS if (m := rx.search(question)) is not None), None)
    if term is not None:  # "return on sales": read, and asked back below
        operation += " " + term[0].group()
    # unresolved capitalised words may be names and are not measure words; a question's first word is capitalised
    # anyway ("Pre-tax profit at Apache ...": "pre" and "tax" stay unread, never excused as a name)
    first = re.match(r"\W*([\w&'.-]+)", question)
    elsewhere = {normalize(w) for w, _, _ in found.elsewhere} if found is not None else set()  # the table's
    names = [
        u
        for u in plan.unresolved
        if (first is None or u != first.group(1))
        and not (
            plan.companies
            and normalize(u) not in elsewhere
            and not _OTHER_CURRENCY.fullmatch(u)  # "in EUR": the currency's refusal says why
            and _in_place(question, u)
        )
    ]
    named = " ".join([*names, *(n for _, n in plan.companies), company or ""])  # a report's company too
    unread = uncovered_words(question, said) - content_words(f"{operation} {named}")
    if plan.companies and (not plan.measures or unread):
        read = plan.measures
        plan.measures = []
        _element_by_label(graph, plan, question, said)
        if read and not plan.measures and not plan.elements:
            plan.refusal = (
                f"the words {', '.join(repr(w) for w in sorted(unread))} are not part of "
                f"{', '.join(m.label for m in read)}, so it is not the measure asked"
            )
    asked = question
    question = _without_companies(question, said)  # "Gap" and "Equity Residential" are names, not operation words
    plan.smaller = bool(_SMALLER.search(question))
    if _DESCENDING.search(question) or _ASCENDING.search(question):
        plan.smaller = bool(_ASCENDING.search(question))
    plan.by_how_much = bool(_BY_HOW_MUCH.search(question))
    shortfall = _SHORTFALL.search(question)
    gap = bool(_DIFFERENCE.search(question) or plan.by_how_much or shortfall)  # two figures set against each other
    n, k = len(plan.companies), len(plan.measures)
    if plan.ambiguous:  # one name that fits several companies is asked back, even beside other named companies
        plan.kind = "ambiguous"
    elif plan.elements:
        plan.kind = "ambiguous measure"
    elif n == 0:
        plan.kind = "no company"
    elif k == 0:
        plan.kind = "unknown"
    elif (n >= 2 or k >= 2) and _SUM.search(question):
        plan.kind = "sum"
        mixed = _DIFFERENCE.search(question) or _COMPARATIVE.search(question) or _WHICH.search(question)
        if mixed is not None or _RANK.search(question):  # "How much more cash did IBM have than Chevron and 3M
            plan.kind, plan.refusal = (  # combined": never the sum of all three
                "unknown",
                "the question sets a sum against another figure; finkg answers a sum, or a comparison of single "
                "figures: ask for the sum first",
            )
    elif n >= 2 and _RANK.search(question):
        plan.kind = "rank"
    elif (
        n >= 2
        and (_WHICH.search(question) or _COMPARATIVE.search(question))
        and not (_DIFFERENCE.search(question) and not _WHICH.search(question))
    ):
        plan.kind = "compare"
    elif n == 2 and gap:
        plan.kind = "difference"
        plan.shortfall = shortfall is not None
    elif n > 2 and gap:
        plan.kind, plan.refusal = (  # "the difference between IBM's, 3M's and Amgen's revenue" was IBM's less 3M's
            "unknown",
            f"a difference of {n} companies' figures: finkg answers the difference of two (or, asked which, the "
            "highest and by how much): ask for two at a time",
        )
    elif n == 1 and k >= 2 and _WHICH.search(question):
        plan.kind = "compare"
    elif n == 1 and k == 2 and _DIFFERENCE.search(question):
        plan.kind = "difference"
    elif n == 1 and k > 2 and _DIFFERENCE.search(question):  # "revenue minus cost of revenue minus SG&A" was the
        plan.kind, plan.refusal = (  # first two alone, SG&A dropped
            "unknown",
            f"the question sets {k} measures against each other ({', '.join(m.label for m in plan.measures)}); finkg "
            "answers the difference of two: ask for them two at a time",
        )
    elif _asks_change(question):
        plan.kind = "change"
    elif (
        n == 1
        and k == 1
        and (_TWO_WAY.search(question) or plan.unresolved)
        and (
            _DIFFERENCE.search(question)
            or _COMPARATIVE.search(question)
            or _RANK.search(question)
            or _SUM.search(question)
            or plan.by_how_much
        )
    ):
        plan.kind = "one of two"  # a comparison that found one company: never answered with its value alone
    if plan.kind in ("value", "change") and n < 2 and k < 2 and _SUM.search(question):
        plan.kind = "one of two"  # "the combined revenue of xyzzy and Ametek": a sum of one figure is not answered
    if plan.kind in ("value", "change") and n == 1 and any(_listed(question, u) for u in plan.unresolved):
        plan.kind = "one of two"  # "the revenue of IBM and Accenture" was IBM's revenue alone
    if plan.kind == "sum" and (_SHARE_OF_WHAT.search(question) or _RATIO_OF.search(question)):
        plan.kind, plan.refusal = (  # "What share of IBM's and 3M's combined revenue was IBM's?" was the sum
            "unknown",
            "a share of a sum: finkg answers the sum, or one company's figure as a share of its own total",
        )
    total = _TOTAL.search(question)
    if plan.kind == "value" and n >= 2 and total is not None:
        plan.kind, plan.refusal = (  # "the total revenue of IBM and 3M" listed each company's revenue
            "unknown",
            f'{total.group()!r} of several companies: ask for their combined figure ("the combined revenue of '
            "...\") or for each one's",
        )
    if n >= 2 and k >= 2 and plan.kind in ("compare", "difference", "rank", "sum", "change"):
        # "the difference between Amgen's revenue and IBM's net income" was Amgen's revenue less IBM's revenue
        plan.kind, plan.refusal = (
            "unknown",
            f"the question names several companies and several measures ({', '.join(m.label for m in plan.measures)}"
            "): finkg sets one measure of several companies, or several measures of one company, against each other;"
            " ask for one measure",
        )
    _relative_plan(plan, question)
    _direction_plan(plan, question)
    plan.yes_no = (
        plan.kind == "compare" and n == 2 and bool(_YES_NO.match(question)) and _THAN.search(question) is not None
    )
    if (
        plan.kind == "change"
        and k == 1
        and re.search(r"\b(?:increase|decrease|change)\b", plan.measures[0].label, re.I)
    ):
        plan.kind = "value"  # "net change in cash": the element is the change ("Period Increase (Decrease)")
    if plan.kind in ("value", "change") and k >= 2:  # "total liabilities and shareholders' equity" is one element
        read, plan.measures = plan.measures, []
        _element_by_label(graph, plan, asked, said)
        if plan.elements:
            plan.kind = "ambiguous measure"
        elif not plan.measures:
            plan.kind = "unknown"
            plan.refusal = (
                f"the question names {k} measures ({', '.join(m.label for m in read)}) and no element's label holds "
                "them all: ask for one at a time"
            )
    if group is not None and plan.measures and plan.kind not in ("ambiguous", "ambiguous measure"):
        _peer_plan(plan, group, index.names, question)
        n = len(plan.companies)
        if plan.peers is not None:
            _peer_direction(plan, question)
    said_loss = _LOSS.search(_INCOME_OR_LOSS.sub(" ", question))  # "net income (loss)" names the line, not a loss
    if (
        plan.kind in ("compare", "rank", "standing")
        and said_loss
        and not plan.change
        and _BETTER_WORSE.search(question) is None
        and _income(plan.measures[0])
    ):
        plan.smaller = not plan.smaller  # "the bigger net loss" is the lower net income (was the higher: AK Steel's)
    count = _COUNT.search(question)
    top_bottom = count is not None and count.group().lower().startswith(("top", "bottom"))
    if count is not None and (plan.kind in ("compare", "rank") or (plan.kind == "value" and top_bottom)):
        many = _NUMBER_WORDS.get(count.group("n").lower()) or int(count.group("n"))
        if many < n:  # "Which 2 oil companies had the highest net margin?" was answered with one company
            plan.kind, plan.limit = "rank", many
            plan.smaller = plan.smaller or count.group().lower().startswith("bottom")
    place = _PLACE.search(question)
    if place is not None and plan.kind in ("compare", "rank") and n >= 2:
        word = (place.group("o") or place.group("r") or place.group("l")).lower()
        if word == "last":  # "who came last": the lowest
            plan.kind, plan.smaller, plan.limit = "compare", not plan.smaller, None
        else:
            plan.kind, plan.place, plan.limit, plan.by_how_much = "compare", _ORDINAL_PLACES[word], None, False
            if plan.place > n:
                plan.kind, plan.refusal = "unknown", f"{place.group()!r}: the question names {n} companies"
    if n == 1 and k == 1 and plan.kind in ("value", "one of two", "difference", "compare") and not plan.peers:
        _threshold_plan(plan, question)
    forecast = _FORECAST.search(question)
    if forecast is not None and plan.kind not in _NO_ANSWER:  # "IBM's revenue estimate" was its reported revenue
        plan.kind, plan.refusal = (
            "unknown",
            f"{forecast.group()!r}: finkg answers the figures filings report, not estimates or forecasts",
        )
    number = _threshold(question)
    if number is not None and plan.threshold is None and plan.kind not in _NO_ANSWER:
        # "above $7 billion" was read as the operation's words: never answered as if the question had not said it
        plan.kind, plan.refusal = (
            "unknown",
            (f"{number.group().strip()!r} compares with a number, which finkg answers for one company's one measure"),
        )
    if plan.kind == "compare" and n == 1 and _RANK.search(question) is None:
        plan.by_how_much = plan.by_how_much and k >= 2
    one_of_two = plan.kind == "one of two" and n == 1  # "Was Amgen's revenue higher in Q2 2009 than in Q2 2008?"
    if len({p.ddate for p in plan.periods}) >= 2 and (plan.kind not in (*_NO_ANSWER, "change") or one_of_two):
        plan.kind, plan.refusal = (  # "revenue in Q2 2009 and Q2 2008": never one of them alone
            "unknown",
            f"several periods: the question names {', '.join(repr(p.text) for p in plan.periods)}; ask for one "
            "period at a time, or for the change between two",
        )
    all_debt = _ALL_DEBT.search(question)
    debt = [m for m in plan.measures if any("LongTermDebt" in f for f in m.formulas)]
    bare = any(m.id != "debt_to_equity" for m in debt)  # debt to equity is long-term debt by its definition
    if all_debt is None and bare and term is None and _LONG_TERM.search(question) is None:  # "debt ratio": asked back
        all_debt = _BARE_DEBT.search(question)  # "How much debt did Chevron have?": all of it, not the long-term part
    if all_debt is not None and debt:
        plan.kind, plan.refusal = (
            "unknown",
            f"{all_debt.group()!r} includes short-term borrowings and current maturities; finkg's debt measure is "
            "long-term debt (noncurrent): ask for long-term debt",
        )
    paid = _PAID.search(question)
    if paid is not None and any(m.id == "income_tax" for m in plan.measures) and plan.kind not in _NO_ANSWER:
        plan.kind, plan.refusal = (  # "3M's income taxes paid in H1 2009" was its tax expense, 580,000,000
            "unknown",
            f"{paid.group()!r}: taxes paid in cash are not the income tax expense (the provision) finkg's catalog "
            "reads: ask for the income tax expense",
        )
    currency = _OTHER_CURRENCY.search(question)
    if currency is not None and any(m.unit == "USD" for m in plan.measures) and plan.kind not in _NO_ANSWER:
        plan.kind, plan.refusal = (
            "unknown",
            f"{currency.group()!r}: finkg answers in the currency the filing reports (USD) and converts none",
        )
    if (
        term is not None
        and plan.companies
        and not unread
        and (plan.kind not in _NO_ANSWER or (plan.kind, plan.refusal) == ("unknown", ""))
    ):
        # a question with other unread words ("what do J&J's statements say about its liquidity and leverage?", a
        # report's) stays unread: the report's reader answers it otherwise
        plan.kind, plan.elements, plan.refusal = "ambiguous measure", [], f"{term[0].group()!r} is {term[1]}"
    if plan.kind not in (*_NO_ANSWER, "change"):
        back, relative = YEAR_AGO_WORDS.search(question), relative_period(question)
        if back is not None and _year_ago_value(question):  # "revenue a year ago": the value then, not the growth
            plan.periods = [replace(p, years_back=1) for p in plan.periods] or [
                PeriodAsk(None, text=back.group(), years_back=1)
            ]
        elif relative is not None and not plan.periods:  # "last year", "at year-end": never the latest quarter
            plan.kind, plan.refusal = (
                "unknown",
                f"{relative!r} names a period relative to a date the question does not give; name the period "
                '("fiscal 2008", "the year ended December 31, 2008", "the six months ended June 30, 2009")',
            )
    _since_plan(plan, question)
    if plan.measures:
        m = plan.measures[0]
        plan.unit = "%" if plan.kind == "change" and m.unit != "%" else "pp" if plan.kind == "change" else m.unit
        span = plan.periods[0].qtrs if len(plan.periods) == 1 else None
        if plan.kind == "change" and span and m.balance and not _YEAR_AGO.search(question):
            # a balance changes over the span asked: its start and end, in the measure's unit unless percent is asked
            plan.over_span = True
            plan.unit = "%" if _PERCENT.search(question) and m.unit != "%" else "pp" if m.unit == "%" else m.unit
        elif (
            plan.kind == "change"
            and m.unit == "USD"
            and not _PERCENT.search(question)
            and (_IN_DOLLARS.search(question) or (m.balance and len(plan.periods) >= 2))
        ):
            plan.unit = "USD"  # "by how many dollars", "the change in cash from December 31, 2008 to June 30, 2009"
        if plan.change:  # several companies' changes: growth in %, points for a ratio in %, dollars where asked
            dollars = m.unit == "USD" and _IN_DOLLARS.search(question) and not _PERCENT.search(question)
            plan.unit = "USD" if dollars else "pp" if m.unit == "%" else "%"
        against = _AGAINST_ONE.search(question) if len(plan.periods) == 1 else None
        if plan.kind == "change" and against is not None and against.group("p").startswith(plan.periods[0].text):
            plan.kind, plan.refusal = (  # "revenue growth versus Q2 2008" was Q2 2008 against Q2 2007
                "unknown",
                f'{against.group()!r} names the period to compare with but not the one to compare: name both ("Q2 '
                '2009 versus Q2 2008")',
            )
        sequential = _SEQUENTIAL.search(question)
        if plan.kind == "change" and sequential is not None and not plan.over_span and len(plan.periods) < 2:
            plan.kind, plan.refusal = (
                "unknown",
                f"{sequential.group()!r}: finkg's change of a flow is year over year (the same quarter a year "
                "earlier); for the change between two periods, name both",
            )
        years = _MULTI_YEAR.search(question)
        if plan.kind == "change" and years is not None:
            plan.kind, plan.refusal = (
                "unknown",
                f"{years.group()!r}: finkg computes a change over one year, or over the span or between the two "
                "periods a question names",
            )
        if plan.kind in ("difference", "compare") and m.unit == "%" and (n >= 2 or k >= 2) and not plan.change:
            plan.unit = "pp" if plan.kind == "difference" else m.unit
    return plan


_SUPERLATIVE = re.compile(
    r"\b(?:highest|largest|biggest|greatest|most|best|strongest|top|lowest|smallest|least|worst|weakest)\b", re.I
)


_NO_ANSWER = ("unknown", "no company", "ambiguous", "ambiguous measure", "one of two", "no peers")
"""Plan kinds that are answered with why not, not with a number."""


def _threshold(question: str) -> re.Match[str] | None:
    """The question's threshold (:data:`_THRESHOLD`), a year ("revenue over 2009") left out."""
    m = _THRESHOLD.search(question)
    if m is None:
        return None
    bare = not (m.group("usd") or m.group("unit"))
    if bare and (re.fullmatch(r"(?:19|20)\d\d", m.group("num")) or m.group("op").lower().startswith("top")):
        return None  # "revenue over 2009": a year; "the top 5 oil companies": a count
    return m


def _since_plan(plan: Plan, question: str) -> None:
    """A change since a date (:data:`_SINCE_DATE`): a balance from the one period named to the latest period
    (:attr:`Plan.since`); a flow since a date, or "since" beside no single period, is refused (which span of the flow
    to set against which is not said). "Since" was an unread word: such questions were refused as not understood."""
    if _SINCE_DATE.search(question) is None or plan.kind in _NO_ANSWER:
        return
    asked = plan.periods[0] if len(plan.periods) == 1 else None
    if (
        plan.kind != "change"
        or asked is None
        or asked.ddate is None
        or not re.search(rf"\bsince\s+(?:the\s+)?{re.escape(asked.text)}", question, re.I)
    ):
        plan.kind, plan.refusal = "unknown", "'since': finkg computes a balance's change since one date named"
        return
    if any(not m.balance for m in plan.measures):
        plan.kind, plan.refusal = (
            "unknown",
            f"'since {asked.text}' for {plan.measures[0].label}, a flow: name both periods to compare (\"Q2 2009 versus "
            'Q2 2008")',
        )
        return
    plan.since = True
    plan.periods = [PeriodAsk(None, text="the latest period"), replace(asked, qtrs=None)]


def _direction_plan(plan: Plan, question: str) -> None:
    """Set what a comparison, ranking or difference of several companies sets against each other and which way.

    Their changes where the question asks one (:data:`_GROWTH`: "which company's revenue fell more", "rank them by
    revenue growth"; ``plan.change``), the lower change where it says a decline and "more" (:data:`_DECLINE`: "the
    bigger decline", "shrank more") or a rise and "less". "Better" or "worse" pick by the measure's side
    (:data:`HIGHER_IS_BETTER`, :data:`LOWER_IS_BETTER`; a change: the higher growth is better); about a measure
    with no better side they are refused. A sum of changes is refused. Each was answered by the companies' levels
    before ("Which had higher sales growth, IBM or Amgen?": IBM, whose revenue fell 13 %, against Amgen's 1 %)."""
    n = len(plan.companies)
    if plan.kind == "change":
        down, up = _DECLINE.search(question), _RISE.search(question)
        plan.direction = "down" if down and not up else "up" if up and not down else ""
    if plan.kind not in ("compare", "rank", "difference", "sum") or not plan.measures:
        return
    growth = n >= 2 and _asks_change(question)
    if growth and plan.kind == "sum":
        plan.kind, plan.refusal = "unknown", "a sum of changes: ask for each company's change"
        return
    if growth and plan.relative:
        plan.kind, plan.refusal = "unknown", "a gap in percent between two changes: ask for the difference in points"
        return
    if growth:
        plan.change = True
    if plan.kind in ("compare", "rank") and _judged(plan, question):
        return
    if plan.change and _DECLINE.search(question):
        plan.smaller = not plan.smaller  # "fell more": the lower growth; "the smaller drop": the higher


_LOSS = re.compile(r"\blos(?:s|ses)\b", re.I)
_INCOME_OR_LOSS = re.compile(r"\(\s*loss(?:es)?\s*\)|\b(?:income|profit|earnings)\s*(?:/|or|and)\s*loss(?:es)?\b", re.I)
_INCOME = frozenset({"net_income", "operating_income", "pretax_income", "net_income_including_nci", "gross_profit"})
"""Income measures a question may name by their loss ("net loss", "operating loss"): a bigger loss is a lower
income, so comparisons and rankings by a loss run the other way."""


def _income(m: Measure) -> bool:
    """Whether ``m`` is an income (a loss is its negative): a catalog income measure (:data:`_INCOME`) or an element
    found by its label whose tag is an income or loss (``NetIncomeLoss``, ``OperatingIncomeLoss``, ``ProfitLoss``)."""
    tag = m.formulas[0] if m.id.startswith(CONCEPT_MEASURE_PREFIX) else ""
    return m.id in _INCOME or re.search(r"IncomeLoss|ProfitLoss|GrossProfit", tag) is not None


def _judged(plan: Plan, question: str) -> bool:
    """Whether the question judges the figures ("better", "worst"); if so, set ``plan.smaller`` by the measure's
    better side (:data:`HIGHER_IS_BETTER`, :data:`LOWER_IS_BETTER`; a change: the higher), or refuse the plan where
    the measure has none ("the best effective tax rate" was the highest)."""
    judged = _BETTER_WORSE.search(question)
    if judged is None:
        return False
    m = plan.measures[0]
    worse = judged.group().lower() in ("worse", "worst")
    if plan.change or m.id in HIGHER_IS_BETTER:
        plan.smaller = worse
    elif m.id in LOWER_IS_BETTER:
        plan.smaller = not worse
    else:
        plan.kind, plan.refusal = (
            "unknown",
            f"{judged.group()!r}: {m.label} has no better side (a higher one is not better or worse); ask for the "
            "higher or the lower",
        )
    return True


def _peer_direction(plan: Plan, question: str) -> None:
    """A group's ranking, top or standing judged ("the best debt to equity": the lowest, :func:`_judged`); a group's
    changes ("Which oil company had the highest revenue growth?", ranked by revenue before) are refused: members
    are measured at one period."""
    if _asks_change(question):
        plan.kind, plan.refusal = (
            "unknown",
            "a group ranked by its members' changes: finkg ranks a group by each member's figure at one period; ask "
            "for the figure, or for two named companies' changes",
        )
        return
    if plan.kind in ("compare", "rank", "standing"):
        _judged(plan, question)


def _relative_plan(plan: Plan, question: str) -> None:
    """Read a gap asked relative to the second figure (:data:`_RELATIVE_PERCENT`, :data:`_RELATIVE_TIMES`) into
    ``plan.relative``: two companies' one measure, or one company's two measures in a comparison or difference. Any
    other question with those words is refused (``plan.refusal``): "by how many percent was IBM's revenue higher
    than Amgen's" was answered with the larger company's name alone, "what's the ratio of IBM's revenue to Amgen's"
    with neither figure set against the other."""
    percent, times = _RELATIVE_PERCENT.search(question), _RELATIVE_TIMES.search(question)
    words = percent or times
    n, k = len(plan.companies), len(plan.measures)
    if words is None or plan.kind in (*_NO_ANSWER, "change") or (percent is None and n < 2):
        return  # "the ratio of R&D to revenue": one company's quotient, a catalog measure
    pair = (n == 2 and k == 1) or (n == 1 and k == 2 and plan.kind in ("compare", "difference"))
    why = ""
    if not pair or plan.kind in ("sum", "rank"):
        why = "finkg sets one figure against one other: two companies' one measure, or one company's two measures"
    elif percent is not None and any(m.unit == "%" for m in plan.measures):
        why = "a percent of a percent is ambiguous: ask for the difference (in percentage points)"
    elif percent is None and plan.smaller:
        why = "a multiple is asked of the larger figure: ask how many times larger the other is"
    if why:
        plan.kind, plan.refusal = "unknown", f"{words.group()!r}: {why}"
        return
    plan.relative = "percent" if percent is not None else "times"
    plan.kind = "compare" if plan.kind == "compare" else "difference"


def _threshold_plan(plan: Plan, question: str) -> None:
    """A yes/no question about one company's measure against a number (:data:`_THRESHOLD`): ``threshold`` kind, the
    number in the measure's unit (a scale word multiplies an amount: "$10 billion"); a percent threshold for an
    amount, or an amount for a ratio, is refused (``unknown`` with the reason)."""
    m = _threshold(question)
    if m is None:
        return
    measure = plan.measures[0]
    word = m.group("op").lower()
    op = ">=" if word == "at least" else "<=" if word == "at most" else "<" if word in (
        "below", "under", "less than", "lower than"
    ) else ">"  # fmt: skip
    number = float(m.group("num").replace(",", ""))
    unit = (m.group("unit") or "").lower().strip()
    percent = unit in ("%", "percent", "per cent")
    if measure.unit == "USD":
        if percent:
            plan.kind, plan.refusal = "unknown", f"{m.group().strip()!r} is a percent but {measure.label} is an amount"
            return
        if not unit and abs(number) < UNSCALED_AMOUNT:
            plan.kind, plan.refusal = (
                "unknown",
                f'{m.group().strip()!r} gives no scale for {measure.label}, an amount in USD: say "$1.2 billion"',
            )
            return
        number *= _SCALES.get(unit, 1.0)
    elif m.group("usd") or unit in _SCALES:
        plan.kind, plan.refusal = "unknown", f"{m.group().strip()!r} is an amount but {measure.label} is a ratio"
        return
    written = question[m.start("usd") if m.group("usd") else m.start("num") : m.end()].strip()  # "$10 billion"
    plan.kind, plan.threshold = "threshold", (op, number, written)


def _peer_plan(plan: Plan, group: PeerGroup, names: dict[int, str], question: str) -> None:
    """A question that names a group by industry (:func:`retrieval.facts.peers.find_peer_group`): its companies are
    the group's members, the anchor first; "rank" words rank them, "which"/a superlative picks the top (or bottom),
    a named company's peers without either place it among them (``standing``), an industry alone is ranked."""
    plan.peers = group
    plan.companies = [(c, names[c]) for c in group.ciks]
    plan.average = bool(re.search(r"\b(?:average|mean)\b", question, re.I))
    if len(group.ciks) < 2:
        plan.kind = "no peers"
    elif group.anchor is None and re.search(r"\b(?:average|mean|median)\b", question, re.I):
        plan.kind = "group average"  # "the average ROE of oil companies": the group's mean (or median)
    elif _RANK.search(question):
        plan.kind = "rank"
    elif _WHICH.search(question) or _SUPERLATIVE.search(question):
        plan.kind = "compare"
    elif group.anchor is not None:
        plan.kind = "standing"
    else:
        plan.kind = "rank"


_BASIS_POINTS = re.compile(r"\b(?:(?:by\s+)?how\s+many\s+)?(?:basis[\s-]+points?|bps)\b", re.I)
"""A gap or change in percentage points asked in basis points ("By how many basis points did Amgen's operating margin
change?", "bps"; never "BP", a company): the points times 100."""

_SINCE_DATE = re.compile(r"\bsince\b", re.I)
"""A change since a date ("How much has IBM's cash changed since December 31, 2008?"): from that date to the latest."""

_OPERATION_WORDS = (
    _RANK, _WHICH, _COMPARATIVE, _BY_HOW_MUCH, _DIFFERENCE, _GROWTH, _TWO_WAY, _DESCENDING, _ASCENDING, _SUM,
    _THRESHOLD, _RELATIVE_PERCENT, _RELATIVE_TIMES, _SHORTFALL, _COUNT, _PLACE, _BASIS_POINTS, _SINCE_DATE,
)  # fmt: skip
"""The operation's words ("exceed", "outpace", "rank"): read as the operation, never as words of a measure."""

_PER_SHARE = re.compile(r"\bper[- ](?:common )?share\b", re.I)
"""A per-share amount asked ("dividends declared per share", "earnings per share")."""

_HOLDERS = re.compile(r"\b(?:share|stock)holders?['’]?(?=\s+equity\b)", re.I)
"""The owners named before "equity" ("shareholders' equity"), a word us-gaap labels leave out ("Liabilities and
Equity")."""

_AT_DATE = re.compile(r"\b(?:as of|as at|at|on)\s+(?:the\s+)?(?:end|close|[A-Z][a-z]+\s+\d|Q[1-4]\b|\d)|"
                      r"\b(?:quarter|year|period)[- ]end\b|\bbalance sheet\b", re.I)  # fmt: skip


def _asks_flow(question: str, periods: Sequence[PeriodAsk]) -> bool | None:
    """Whether the question's period asks for a flow (True: "in the six months ended", "for Q2"), a balance (False:
    "as of June 30", "at quarter-end", "on the balance sheet") or does not say (None)."""
    if _AT_DATE.search(question):
        return False
    if any(p.qtrs for p in periods):
        return True
    return None


def _element_by_label(graph: Graph, plan: Plan, question: str, said: list[str]) -> None:
    """A question no catalog measure fits: the element of the named companies whose label holds its words
    (:mod:`retrieval.facts.labels`) becomes its measure (:func:`retrieval.facts.measures.concept_measure`); elements
    tied for the words are put in ``plan.elements`` (asked back). Whole-entity USD elements only."""
    text = label_terms(question)
    per_share = bool(_PER_SHARE.search(text))
    # "per share" is the unit asked (``per_share``), not a word the label must hold beside its own "Common Stock";
    # "shareholders' equity" is what labels call "Equity" ("Liabilities and Equity")
    words = content_words(_HOLDERS.sub(" ", _PER_SHARE.sub(" ", text)), [*said, *(n for _, n in plan.companies)])
    if not words:
        return
    rows = graph.read(cypher.COMPANY_CONCEPT_LABELS, {"ciks": [c for c, _ in plan.companies]})
    spoken = question_words(_without_companies(text, said))  # a line label naming the company is not the measure
    paid = bool(re.search(r"\bpaid\b", text, re.I))
    got = match_label(words, element_rows(rows), _asks_flow(question, plan.periods), spoken, per_share, paid)
    plan.searched.append(
        f"the labels of the {len(rows)} elements {', '.join(n for _, n in plan.companies)} report in USD for "
        f"{' '.join(sorted(words))!r}"
    )
    if got.found is not None:
        plan.measures = [concept_measure(got.found.tag, got.found.label, got.found.duration)]
    elif got.tied:
        plan.elements = [(e.tag, e.label) for e in got.tied]


FISCAL_NEAR_DAYS = 45
"""A filing's period end this near the end :func:`fiscal_period_end` computes is that fiscal period's (a 16-week first
quarter ends a month after three months would); quarters are some 91 days apart."""


def _fiscal_ddate(graph: Graph, cik: int, fy: int, fp: str) -> str | None:
    """The period end of company ``cik``'s fiscal period ``(fy, fp)`` (``fp`` ``Q1``-``Q4`` or ``FY``): from its fiscal
    year end (sub.txt's ``fye``, :func:`fiscal_period_end`; a filing's period end within :data:`FISCAL_NEAR_DAYS` of
    it is the one), else, where no filing states ``fye``, offset from a filing's stated ``fy``/``fp`` (a quarter is
    three months). FSDS's ``fy`` names a year ending February 27, 2010 or April 2, 2010 2009 where the companies say
    fiscal 2010, so it is not read where ``fye`` is known.

    Raises:
        ToolError: the company's fiscal year end leaves its years' names unsettled (:data:`FISCAL_NAME_UNSETTLED`).
    """
    rows = graph.read(cypher.COMPANY_FISCAL_PERIODS, {"cik": cik})
    fye = next((str(r["fye"]) for r in rows if r.get("fye")), None)
    if fye is not None:
        try:
            end = fiscal_period_end(fye, fy, fp)
        except ValueError as exc:
            raise ToolError(f"fiscal {fy} {fp.upper()} of CIK {cik} is not read: {exc}") from exc
        day = dt.date.fromisoformat(iso(end))
        near = [
            p
            for p in {str(r["period"]) for r in rows}
            if abs((dt.date.fromisoformat(iso(p)) - day).days) <= FISCAL_NEAR_DAYS
        ]
        return min(near, key=lambda p: abs((dt.date.fromisoformat(iso(p)) - day).days)) if near else end

    def index(year: int, period: str) -> int | None:
        q = {"Q1": 1, "Q2": 2, "Q3": 3, "Q4": 4, "FY": 4, "H1": 2, "H2": 4}.get(period.upper())
        return None if q is None else year * 4 + q

    want = index(fy, fp)
    if want is None:
        return None
    for r in rows:
        have = index(int(r["fy"]), str(r["fp"]))
        if have is None:
            continue
        p = str(r["period"])
        months = 3 * (want - have)
        y, mth = divmod(int(p[:4]) * 12 + int(p[4:6]) - 1 + months, 12)
        return month_end(y, mth + 1).strftime("%Y%m%d")
    return None


SAME_PERIOD_DAYS = 7
"""Two period ends this many days apart or fewer are one period: a month end FSDS rounded to and the date the
filing states (a quarter ended Saturday May 2 is FSDS's April 30); periods are months apart."""


def stated_period_end(graph: Graph, cik: int, ddate: str) -> str:
    """The period end (``YYYYMMDD``) at which company ``cik``'s facts are stated for the period ending ``ddate``:
    ``ddate`` itself when a fact is stated there (FSDS's month ends), else the nearest end within
    :data:`SAME_PERIOD_DAYS` days at which one is (companyfacts and XBRL instances keep the filing's own date, so a
    52/53-week filer's quarter ended May 2, 2026 is not at FSDS's April 30), else ``ddate``."""
    day = dt.date.fromisoformat(iso(ddate))
    near = [day + dt.timedelta(days=k) for k in range(-SAME_PERIOD_DAYS, SAME_PERIOD_DAYS + 1)]
    rows = graph.read(cypher.COMPANY_FACT_DDATES, {"cik": cik, "ddates": [d.strftime("%Y%m%d") for d in near]})
    found = {str(r["ddate"]) for r in rows}
    if not found or ddate in found:
        return ddate
    return min(found, key=lambda d: (abs((dt.date.fromisoformat(iso(d)) - day).days), d))


def _same_period(a: str, b: str) -> bool:
    """Whether two ISO period ends are one period (:data:`SAME_PERIOD_DAYS`)."""
    return abs((dt.date.fromisoformat(a) - dt.date.fromisoformat(b)).days) <= SAME_PERIOD_DAYS


def latest_period(
    graph: Graph, cik: int, concept: str | cc.CanonicalConcept, as_of: AsOf | None = None, uom: str = "USD"
) -> str | None:
    """The latest period end (ISO) at which company ``cik`` reports ``concept`` in a filing public by ``as_of``
    (any filing when None); None when there is none."""
    _, tags, _ = agent_facts.resolve_concept(concept)
    rows = graph.read(
        cypher.COMPANY_CONCEPT_PERIODS,
        {"cik": cik, "name": None, "tags": list(tags) + list(cc.DERIVATION_TAGS), "uom": uom},
    )
    cutoff = as_of_cutoff(as_of) if as_of is not None else None
    for r in rows:
        if cutoff is None or available(filing_available_at(r["accepted"], r["filed"]), cutoff, "drop"):
            return cc.iso_date(r["ddate"])
    return None


def latest_measure_period(
    graph: Graph, cik: int, measure: Measure, sic: int | None = None, as_of: AsOf | None = None
) -> str | None:
    """The latest period end (``YYYYMMDD``) at which company ``cik`` reports the first operand of one of the
    measure's formulas (a bank's first, :meth:`~retrieval.facts.measures.Measure.formulas_for`) in a filing public
    by ``as_of``; None when none does."""
    ends = [
        latest_period(graph, cik, measure.concept(measure.operands(f)[0]), as_of) for f in measure.formulas_for(sic)
    ]
    found = [p for p in ends if p is not None]
    return max(found).replace("-", "") if found else None


def _money(value: float) -> str:
    return f"USD {value:,.0f}" if abs(value) >= 1000 else f"USD {format_result(value)}"


SMALL_FIGURE = 0.1
"""Below this size a figure is shown in two significant digits, not two decimals: two decimals would show a debt to
equity of 0.0077 as ``0.01`` (30 % off) and an operating margin of 0.0021 % as ``0%``."""


def _figure(value: float) -> str:
    """A percent, days or points figure: at most two decimals (:func:`format_result`), or two significant digits
    when smaller than :data:`SMALL_FIGURE` (an operating margin of 0.0021 % is ``0.0021``, not ``0``)."""
    if not value or abs(value) >= SMALL_FIGURE:
        return format_result(value)
    return f"{value:.{1 - math.floor(math.log10(abs(value)))}f}".rstrip("0").rstrip(".")


def format_value(value: float, unit: str) -> str:
    """An answer's number in its unit: ``USD 1,234,000``, ``23.4%``, ``1.52`` or ``1.00`` (a multiple, always two
    decimals: a current ratio of 0.9994 is not "1"), ``45.2 days``, ``3.1 percentage points``; a non-zero figure
    below :data:`SMALL_FIGURE` in two significant digits (``0.0021%``, a debt to equity of ``0.0077``)."""
    if unit == "USD":
        return _money(value)
    if unit == "%":
        return f"{_figure(value)}%"
    if unit == "days":
        return f"{_figure(value)} days"
    if unit == "pp":
        return f"{_figure(value)} percentage points"
    if unit == "bp":
        return f"{_figure(value)} basis points"
    if unit == "x":
        return _figure(value) if value and abs(value) < SMALL_FIGURE else f"{value:,.2f}"
    return format_result(value)


def fact_operand(result: ToolResult) -> dict[str, Any]:
    """A ``fact_lookup`` result as a derivation's operand: ``{value, fact_key, company, concept, period, filing}``; a
    derived fact's adds its ``formula`` and ``components`` (each a reported fact's operand with its ``sign``)."""
    return _fact_operand(result.detail)


def ratio_operands(facts: Sequence[dict[str, Any]], name: Callable[[str], str] = str) -> dict[str, dict[str, Any]]:
    """The input facts of a ``ratio`` or ``measure`` result (its ``detail["facts"]``) as a derivation's operands,
    each named ``name("<concept>_<period>")``, each as :func:`fact_operand` gives it."""
    return {name(f"{f['concept']}_{f['period']}"): _fact_operand(f) for f in facts}


def _fact_operand(f: dict[str, Any]) -> dict[str, Any]:
    operand = {
        "value": f["value"],
        "fact_key": f["key"],
        "company": f["company"],
        "concept": f["concept"],
        "period": f["period"],
        "filing": f"{f['form']} {f['adsh']} filed {f['filed']}",
    }
    if f.get("components"):  # a derived fact (a fourth quarter, a TTM): its formula and the reported facts it adds up
        operand["formula"] = f["formula"]
        operand["components"] = [{"sign": sign, **_fact_operand(c)} for sign, c in f["components"]]
    return operand


def _slug(text: str) -> str:
    return re.sub(r"\W+", "_", text.lower()).strip("_")[:64] or "x"


_FP_QUARTERS = {"Q1": 1, "Q2": 2, "Q3": 3, "Q4": 4, "FY": 4}
"""A filing's fiscal focus (``fp``) -> the quarters of its fiscal year to date."""


class _Runner:
    """Runs one plan's tools, keeping every call (see :func:`answer_sec_question`)."""

    def __init__(self, graph: Graph, plan: Plan, as_of: AsOf | None, out: SecAnswer):
        self.graph, self.plan, self.as_of, self.out = graph, plan, as_of, out

    def call(self, result: ToolResult) -> ToolResult:
        self.out.tool_results.append(result)
        if not result.ok:
            raise ToolError(result.error or "tool failed")
        return result

    def period(self, cik: int, measure: Measure, i: int = 0) -> tuple[str, int | None]:
        """``(ddate, qtrs)`` for company ``cik``: the question's ``i``-th period (a fiscal one through the company's
        filings), else the latest period the company reports the measure's first operand in."""
        ask = self.plan.periods[min(i, len(self.plan.periods) - 1)] if self.plan.periods else None
        if ask is not None and ask.ddate is not None:
            ddate = ask.ddate
            if ask.fiscal is not None:
                ddate = _fiscal_ddate(self.graph, cik, *ask.fiscal) or ddate
            end = self._back(ask, ddate)
            return end, self._ytd(cik, end) if ask.ytd else ask.qtrs
        sic = self.plan.sic.get(cik)
        latest = latest_measure_period(self.graph, cik, measure, sic, self.as_of)
        if latest is None:
            when = f" in filings public by {self.as_of}" if self.as_of is not None else ""
            first = measure.operands(measure.formulas_for(sic)[0])[0]
            raise ToolError(f"not in the graph: no {first} fact for CIK {cik}{when}")
        if ask is None:  # "revenue last quarter": one quarter, never a 10-K's year
            return latest, 1 if self.plan.latest_quarter else None
        end = self._back(ask, latest)
        return end, self._ytd(cik, end) if ask.ytd else ask.qtrs  # "TTM revenue": the twelve months ended the latest

    def _ytd(self, cik: int, ddate: str) -> int:
        """The quarters of company ``cik``'s fiscal year to date ended ``ddate``: its filing for that period states
        the fiscal quarter (``fp`` Q1-Q3, FY: 4), the answer's notes saying so.

        Raises:
            ToolError: no filing of the company states its fiscal quarter at ``ddate``.
        """
        rows = self.graph.read(cypher.COMPANY_FISCAL_PERIODS, {"cik": cik})
        fps = {str(r["fp"]).upper() for r in rows if str(r["period"]) == ddate}
        qtrs = {_FP_QUARTERS[f] for f in fps if f in _FP_QUARTERS}
        if len(qtrs) != 1:
            raise ToolError(f"not in the graph: no filing of CIK {cik} states its fiscal quarter at {iso(ddate)}, so "
                            "its year to date is not known")  # fmt: skip
        n = qtrs.pop()
        note = f"the fiscal year to date ended {iso(ddate)}: {3 * n} months (fiscal {'FY' if n == 4 else f'Q{n}'})"
        if note not in self.out.notes:
            self.out.notes.append(note)
        return n

    def _back(self, ask: PeriodAsk, ddate: str) -> str:
        """``ddate`` moved back ``ask.years_back`` years ("a year ago"), the answer's notes saying so."""
        end = replace(ask, ddate=ddate).end()
        assert end is not None
        if ask.years_back:
            note = f"{ask.text!r}: the period ended {iso(end)}, {ask.years_back} year(s) before {iso(ddate)}"
            if note not in self.out.notes:
                self.out.notes.append(note)
        return end

    def measure(self, cik: int, m: Measure, ddate: str, qtrs: int | None) -> ToolResult:
        ddate = stated_period_end(self.graph, cik, ddate)
        trailing = any(p.trailing for p in self.plan.periods)
        sic = self.plan.sic.get(cik)
        res = self.call(measure_value(self.graph, str(cik), m, ddate, qtrs, self.as_of, sic, trailing))
        if res.detail.get("note"):
            self.out.notes.append(f"{res.detail['facts'][0]['company']}: {m.label} over {res.detail['note']}")
        return res


LATEST_APART_DAYS = 183
"""Companies compared at their latest periods (no period named) whose latest periods are further apart than this (half
a year) are not compared: their latest quarters differ by a fiscal calendar's offset, not by years."""


def _one_span(
    run: _Runner, pairs: Sequence[tuple[int, str, Measure]], ends: Sequence[str], results: list[ToolResult]
) -> list[ToolResult]:
    """The figures set against each other over one span: where some are over a longer one (a company whose filing
    reports no 3-month figure, answered over its year to date), all are measured again over that span at the same
    period ends ``ends`` (``YYYYMMDD``, one per pair), and the notes say so (McDonald's quarter's operating cash flow
    was set against Amgen's six months, and Amgen picked).

    Raises:
        ToolError: a company does not report the figure over that span (not comparable; the message names the
            spans).
    """
    spans = [int(r.detail["qtrs"] or 0) for r in results]
    if len({q for q in spans if q}) < 2:
        return results
    longest = max(spans)
    shown = ", ".join(f"{n}: {3 * q} months" for (_, n, _), q in zip(pairs, spans, strict=True) if q)
    run.out.notes[:] = [n for n in run.out.notes if "(year to date)" not in n]
    again = []
    for (cik, name, x), ddate in zip(pairs, ends, strict=True):
        try:
            again.append(run.measure(cik, x, ddate, longest))
        except ToolError as exc:
            raise ToolError(f"not comparable: the figures are reported over different spans ({shown}), and {name} "
                            f"reports none over {3 * longest} months: {exc}") from exc  # fmt: skip
    run.out.notes.append(f"set against each other over {3 * longest} months: the spans reported differ ({shown})")
    return again


def _operands(results: Sequence[ToolResult], prefix: Callable[[int], str]) -> dict[str, dict[str, Any]]:
    ops: dict[str, dict[str, Any]] = {}
    for i, r in enumerate(results):
        ops.update(ratio_operands(r.detail["facts"], lambda s, i=i: _slug(prefix(i) + s)))
    return ops


def _named_expression(result: ToolResult, prefix: str = "") -> str:
    """A ``measure`` result's formula over its operands' derivation names (``currentassets_2009_06_30 -
    currentliabilities_2009_06_30``; ``* 100`` for a percent)."""
    text = result.detail["formula"]
    for f in result.detail["facts"]:
        text = re.sub(rf"\b{f['concept']}\b", _slug(prefix + f"{f['concept']}_{f['period']}"), text)
    return f"({text}) * 100" if result.detail["unit"] == "%" else text


CASH_CHANGE = "CashAndCashEquivalentsPeriodIncreaseDecrease"
"""The cash flow statement's net change in cash and cash equivalents (us-gaap)."""


def _reported_cash_change(run: _Runner, cik: int, m: Measure, ddate: str, qtrs: int | None, change: float) -> None:
    """Where the filing's cash flow statement reports a net change in cash for the span (:data:`CASH_CHANGE`) that
    differs from the balances' change by more than 1 % (a change stated before exchange-rate effects, or over another
    definition of cash), the question has two answers: refused, naming both, never one of them silently.

    Raises:
        ToolError: the two disagree.
    """
    if m.id != "cash" or not qtrs:
        return
    stated = concept_measure(CASH_CHANGE, "net change in cash and cash equivalents", True)
    res = measure_value(run.graph, str(cik), stated, stated_period_end(run.graph, cik, ddate), qtrs, run.as_of)
    if res.ok and res.value is not None and abs(float(res.value) - change) > 0.01 * abs(float(res.value)) + 0.5:
        raise ToolError(
            f"two answers: cash and cash equivalents changed by {format_value(change, 'USD')} between the balance "
            f"sheets, while the cash flow statement reports a net change of {format_value(float(res.value), 'USD')} "
            f"({CASH_CHANGE}, {res.detail['facts'][0]['key']}): ask for one of them"
        )


def _run(run: _Runner) -> tuple[list[str] | str, str, dict[str, Any]]:
    """Run the plan; returns ``(answer text or items, gate question type, derivation)`` and fills value/unit/pick."""
    plan, out = run.plan, run.out
    m = plan.measures[0]
    kind = plan.kind
    month = next((p for p in plan.periods if p.month), None)
    flow = next((x for x in plan.measures if not x.balance), None)
    if month is not None and flow is not None:  # "Amgen's revenue in June 2009" was the quarter's
        raise ToolError(
            f"could not answer: {month.text!r} names a month, and filings report {flow.label} over quarters and "
            f'years, not months: ask for the quarter ("the quarter ended {iso(month.ddate or "")}") or the year to date'
        )
    if plan.peers is not None:
        return _run_peers(run, plan.peers)
    if kind == "value":
        results = []
        for cik, _ in plan.companies:
            ddate, qtrs = run.period(cik, m)
            results.append(run.measure(cik, m, ddate, qtrs))
        derivation = {
            "operands": _operands(results, lambda i: f"{i}_" if len(results) > 1 else ""),
            "formula": results[0].detail["formula"],
            "expression": _named_expression(results[0], "0_" if len(results) > 1 else ""),
            "values": results[0].detail["expression"],
            "result": results[0].value,
        }
        out.unit = m.unit
        if len(results) == 1:
            out.value = float(results[0].value)
            return format_value(out.value, m.unit), "arithmetic", derivation
        items = [f"{n}: {format_value(r.value, m.unit)}" for (_, n), r in zip(plan.companies, results, strict=True)]
        return items, "multi-span", derivation
    if kind == "threshold" and plan.threshold is not None:
        cik, _ = plan.companies[0]
        ddate, qtrs = run.period(cik, m)
        res = run.measure(cik, m, ddate, qtrs)
        op, number, words = plan.threshold
        value = float(res.value)
        yes = {">": value > number, "<": value < number, ">=": value >= number, "<=": value <= number}[op]
        out.value, out.unit = value, m.unit
        side = "above" if value > number else "below" if value < number else "equal to"
        derivation = {
            "operands": _operands([res], lambda i: ""),
            "formula": res.detail["formula"],
            "expression": _named_expression(res),
            "result": value,
            "threshold": {"comparison": op, "value": number, "words": words, "met": yes},
        }
        return (
            f"{'yes' if yes else 'no'}: {format_value(value, m.unit)}, {side} {words}",
            "span",
            derivation,
        )
    if kind == "change":
        cik, _name = plan.companies[0]
        now, before, calc, out.unit, formula = _change(run, cik, m, single=True)
        out.value = float(calc.value)
        derivation = {
            "operands": _operands([now, before], lambda i: ("now_", "before_")[i]),
            "formula": formula,
            "expression": calc.detail["expression"],
            "result": calc.value,
        }
        text = format_value(out.value, out.unit)
        if plan.direction and out.value and (out.value > 0) != (plan.direction == "up"):
            text += f" ({'an increase' if out.value > 0 else 'a decrease'})"  # "how much did IBM's net income fall"
        return text, "arithmetic", derivation
    if plan.change:  # "which company's revenue fell more": each company's change, set against each other
        changes = [_change(run, cik, m) for cik, _ in plan.companies]
        values = [float(c[2].value) for c in changes]
        unit = changes[0][3]
        labels = [n for _, n in plan.companies]
        derivation = {
            "operands": _operands(
                [r for c in changes for r in c[:2]], lambda i: f"{_letters(i // 2)}_{('now_', 'before_')[i % 2]}"
            ),
            "formula": changes[0][4],
            "changes": {_letters(i): c[2].detail["expression"] for i, c in enumerate(changes)},
        }
        return _set_against(run, values, labels, unit, derivation)
    pairs: list[tuple[int, str, Measure]]
    if len(plan.companies) >= 2:
        pairs = [(c, n, m) for c, n in plan.companies]
    else:
        pairs = [(plan.companies[0][0], plan.companies[0][1], x) for x in plan.measures]
    results, ends = [], []
    for i, (cik, _, x) in enumerate(pairs):
        ddate, qtrs = run.period(cik, x, i if len(plan.companies) < 2 else 0)
        results.append(run.measure(cik, x, ddate, qtrs))
        ends.append(ddate)
    results = _one_span(run, pairs, ends, results)
    if plan.kind in ("compare", "rank"):  # a return over negative equity is no high or low return among others
        for (_, name, _), r in zip(pairs, results, strict=True):
            negative = _non_positive_denominator(r)
            if negative:
                raise ToolError(f"not comparable: {name}'s {r.detail['label']} divides by {negative}, a figure at or "
                                "below zero")  # fmt: skip
    periods = {r.detail["period"] for r in results}
    if len(periods) > 1 and not plan.periods:
        latest = ", ".join(f"{n} {r.detail['period']}" for (_, n, _), r in zip(pairs, results, strict=True))
        days = (dt.date.fromisoformat(max(periods)) - dt.date.fromisoformat(min(periods))).days
        if days > LATEST_APART_DAYS:  # Domo's cash at January 31, 2025 was set against Amgen's at June 30, 2009
            raise ToolError(f"not comparable: the companies' latest periods are {days} days apart ({latest}): name "
                            "the period to compare")  # fmt: skip
        out.notes.append("latest periods differ: " + latest)
    values = [float(r.value) for r in results]
    derivation: dict[str, Any] = {
        "operands": _operands(results, lambda i: "abcdefghij"[i] + "_"),
        "formula": " ; ".join(dict.fromkeys(r.detail["formula"] for r in results)),
    }
    unit = m.unit
    labels = [n if len(plan.companies) >= 2 else x.label for _, n, x in pairs]
    names = {chr(97 + i): v for i, v in enumerate(values)}
    if kind == "sum":
        if unit != "USD":
            raise ToolError(
                f"could not answer: {m.label} is a ratio ({unit}); a sum of ratios is no ratio: ask for each"
            )
        calc = run.call(calculate(" + ".join(names), names))
        out.value, out.unit = float(calc.value), unit
        derivation.update(expression=calc.detail["expression"], result=calc.value)
        return format_value(out.value, out.unit), "arithmetic", derivation
    return _set_against(run, values, labels, unit, derivation)


def _set_against(
    run: _Runner, values: list[float], labels: list[str], unit: str, derivation: dict[str, Any]
) -> tuple[list[str] | str, str, dict[str, Any]]:
    """Answer a ``difference`` (the first less the second), ``rank`` or ``compare`` (the top, by how much where
    asked) of ``values`` (one per label, in ``unit``), or their relative gap (:func:`_relative_gap`); fills the
    answer's value, unit and pick and returns ``(answer text or items, gate question type, derivation)``."""
    plan, out = run.plan, run.out
    kind = plan.kind
    names = {_letters(i): v for i, v in enumerate(values)}
    if plan.relative:
        return _relative_gap(run, values, labels, unit, derivation)
    if kind == "difference":
        calc = run.call(calculate("b - a" if plan.shortfall else "a - b", {"a": values[0], "b": values[1]}))
        out.value, out.unit = float(calc.value), ("pp" if unit == "%" else unit)
        out.notes.append(_figures(labels, values, unit, range(len(values))))  # the sign read against the figures
        derivation.update(expression=calc.detail["expression"], result=calc.value)
        return format_value(out.value, out.unit), "arithmetic", derivation
    order = sorted(range(len(values)), key=lambda i: values[i], reverse=not plan.smaller)
    derivation.update(expression=("min" if plan.smaller else "max") + f"({', '.join(names)})", result=values[order[0]])
    if kind == "rank":
        shown = order[: plan.limit] if plan.limit else order  # "which two of IBM, 3M and Amgen": the first two
        if plan.limit and plan.limit < len(order):
            out.notes.append(f"the first {plan.limit} of {len(order)} shown: " + _figures(labels, values, unit, order))
        out.pick = [labels[i] for i in shown]
        derivation["result"] = [labels[i] for i in order]
        run.call(calculate(f"{'min' if plan.smaller else 'max'}({', '.join(names)})", names))
        return [f"{labels[i]} ({format_value(values[i], unit)})" for i in shown], "multi-span", derivation
    top, second = _at_place(run, labels, values, unit, order)
    if plan.place > 1:  # "the second highest": the company at that place
        way = "ascending" if plan.smaller else "descending"
        derivation.update(expression=f"sorted({', '.join(names)}, {way})[{plan.place - 1}]", result=values[top])
    cmp = run.call(calculate("abs(top - second)", {"top": values[top], "second": values[second]}))
    out.pick = [labels[top]]
    if values[top] == values[second]:
        out.pick = None
        return "neither: they are equal", "span", derivation
    if plan.by_how_much:
        out.value, out.unit = float(cmp.value), ("pp" if unit == "%" else unit)
        derivation.update(expression=cmp.detail["expression"], result=cmp.value, pick=labels[top])
        return f"{labels[top]}, by {format_value(out.value, out.unit)}", "span", derivation
    if plan.change:  # the changes compared: say them, so the pick is read as growth, not as the larger company
        out.notes.append(_figures(labels, values, unit, order))
    if plan.yes_no:  # "Is IBM's current ratio higher than 3M's?": yes when the first named is the one picked
        shown = _figures(labels, values, unit, range(len(values)))
        return f"{'yes' if top == 0 else 'no'}: {labels[top]} ({shown})", "span", derivation
    return labels[top], "span", derivation


def _at_place(
    run: _Runner, labels: Sequence[str], values: Sequence[float], unit: str, order: Sequence[int]
) -> tuple[int, int]:
    """``(picked, next)``: the positions of the company at the place the plan asks (:attr:`Plan.place`, 1 the top)
    in ``order`` and of the one it is set against (the next place, or the one before at the last); a place below
    the top says every figure in the notes.

    Raises:
        ToolError: fewer companies report the measure than the place asked.
    """
    place = run.plan.place
    if place > len(order):
        raise ToolError(f"not in the graph: {len(order)} companies report {run.plan.measures[0].label}, fewer than "
                        f"the place asked ({place})")  # fmt: skip
    if place > 1:
        run.out.notes.append(f"place {place} of {len(order)}: " + _figures(labels, values, unit, order))
    return order[place - 1], order[place if place < len(order) else place - 2]


_SPANS_REPORTED = re.compile(r"spans reported: \[([\d, ]+)\]")
"""The spans a "no 1-quarter fact" error says the company reports (:func:`~generation.agent.facts.find_fact`)."""


def _figures(labels: Sequence[str], values: Sequence[float], unit: str, order: Iterable[int]) -> str:
    """The figures at ``order``'s positions, each with its label: ``"AMGEN INC: 34.18%; INTERNATIONAL BUSINESS
    MACHINES CORP: 13.35%"``."""
    return "; ".join(f"{labels[i]}: {format_value(values[i], unit)}" for i in order)


def _change(
    run: _Runner, cik: int, m: Measure, single: bool = False
) -> tuple[ToolResult, ToolResult, ToolResult, str, str]:
    """One company's change in ``m``: year over year (a flow's span as asked, else the quarter); with ``single`` (a
    one-company ``change``) also between the two periods the question names, or over the span it names
    (:attr:`Plan.over_span`). In the measure's unit where the question asks it in dollars, in percentage points for
    a ratio in %, else growth in %. Returns ``(now, before, calculate result, unit, formula)``.

    Raises:
        ToolError: a period's fact is not in the graph.
    """
    plan, out = run.plan, run.out
    if single and len(plan.periods) >= 2:
        ddate, qtrs = run.period(cik, m, 0)
        before_ddate, _ = run.period(cik, m, 1)
        if plan.since and before_ddate >= ddate:
            raise ToolError(
                f"could not answer: the latest period the graph holds, {iso(ddate)}, is not after {iso(before_ddate)}"
            )
        if before_ddate > ddate:
            ddate, before_ddate = before_ddate, ddate
    else:
        ddate, qtrs = run.period(cik, m)
        over = single and plan.over_span
        before_ddate = months_before(ddate, 3 * (qtrs or 0)) if over else year_earlier(ddate)
    now = run.measure(cik, m, ddate, qtrs)
    before = run.measure(cik, m, before_ddate, now.detail["qtrs"] or None)
    if single and plan.over_span:
        _reported_cash_change(run, cik, m, ddate, qtrs, float(now.value) - float(before.value))
    ops = {"now": now.value, "before": before.value}
    if plan.unit == m.unit != "%":  # a change in the measure's own unit: its end less its start
        calc, unit = run.call(calculate("now - before", ops)), m.unit
        over = f"over the {3 * (qtrs or 0)} months ended {iso(ddate)}" if single and plan.over_span else "in the amount"
        out.notes.append(f"the change {over}: {m.label} at {iso(ddate)} less {m.label} at {iso(before_ddate)}")
    elif m.unit == "%":
        calc, unit = run.call(calculate("now - before", ops)), "pp"
    else:
        calc, unit = run.call(calculate("(now - before) / abs(before) * 100", ops)), "%"
    formula = f"{m.formulas[0]}: ({iso(ddate)} - {iso(before_ddate)})" + (" / |earlier| * 100" if unit == "%" else "")
    return now, before, calc, unit, formula


def _relative_gap(
    run: _Runner, values: list[float], labels: list[str], unit: str, derivation: dict[str, Any]
) -> tuple[str, str, dict[str, Any]]:
    """Two figures set against each other relative to the second (:attr:`Plan.relative`): the gap over the second in
    percent, ``(a - b) / b * 100``, or the multiple ``a / b``. A ``difference`` takes them in the order named; a
    ``compare`` picks the larger (the smaller where asked) and sets it against the other.

    Raises:
        ToolError: the figure set against is zero or negative (a gap relative to it has no meaning).
    """
    plan, out = run.plan, run.out
    first, base = 0, 1  # a difference: in the order named
    if plan.kind == "compare" and (values[0] >= values[1]) == plan.smaller:
        first, base = 1, 0  # the second named is the one picked
    if values[base] <= 0:
        raise ToolError(
            f"could not answer: {labels[base]}: {format_value(values[base], unit)}; a gap relative to a figure at or "
            "below zero has no meaning"
        )
    ops = {"a": values[first], "b": values[base]}
    calc = run.call(calculate("a / b" if plan.relative == "times" else "(a - b) / b * 100", ops))
    out.value, out.unit = float(calc.value), ("x" if plan.relative == "times" else "%")
    derivation.update(expression=calc.detail["expression"], result=calc.value)
    whose = "'s" if len(plan.companies) >= 2 else ""  # a company's figure, or one company's other measure
    if plan.relative == "times":
        text = f"{format_value(out.value, 'x')} times {labels[base]}{whose}"
    else:
        text = f"{format_value(abs(out.value), '%')} {'more' if out.value >= 0 else 'less'} than {labels[base]}{whose}"
    out.notes.append(_figures(labels, values, unit, (first, base)))
    if plan.kind == "difference":
        return f"{labels[first]}: {text}", "arithmetic", derivation
    if values[0] == values[1]:
        out.pick, out.value = None, None
        return "neither: they are equal", "span", derivation
    out.pick = [labels[first]]
    derivation["pick"] = labels[first]
    return f"{labels[first]}, {text}", "span", derivation


def _in_basis_points(run: _Runner, answer: list[str] | str, derivation: dict[str, Any]) -> list[str] | str:
    """A gap or change in percentage points said in basis points, as the question asked (:data:`_BASIS_POINTS`): the
    points times 100 (a ``calculate`` call, so the gate traces the figure), in the answer's text, value and
    derivation.

    Raises:
        ToolError: the answer is no figure in percentage points (basis points measure a percent's gap or change: "the
            revenue in basis points" has none).
    """
    out = run.out
    pp = out.value if out.unit == "pp" else None
    shown = [format_value(v, "pp") for v in (pp, abs(pp))] if pp is not None else []
    if not isinstance(answer, str) or pp is None or not any(t in answer for t in shown):
        raise ToolError(
            "could not answer: basis points measure a gap or change between two percents (a margin's change, two "
            "companies' margins); this answer is no such figure"
        )
    calc = run.call(calculate("pp * 100", {"pp": pp}))
    value = float(calc.value)
    for old, new in ((shown[0], format_value(value, "bp")), (shown[1], format_value(abs(value), "bp"))):
        answer = answer.replace(old, new)
    out.value, out.unit = value, "bp"
    derivation["basis_points"] = {"expression": calc.detail["expression"], "result": calc.value}
    return answer


def _common_latest(run: _Runner, m: Measure) -> str:
    """The period end (``YYYYMMDD``) most of the plan's companies report ``m`` at last (the later one on a tie).

    Raises:
        ToolError: none of them reports it.
    """
    ends = [latest_measure_period(run.graph, cik, m, run.plan.sic.get(cik), run.as_of) for cik, _ in run.plan.companies]
    counts = Counter(e for e in ends if e is not None)
    if not counts:
        raise ToolError(f"not in the graph: none of the {len(ends)} companies reports {m.label}")
    return max(counts, key=lambda e: (counts[e], e))


def _run_peers(run: _Runner, group: PeerGroup) -> tuple[list[str] | str, str, dict[str, Any]]:
    """Rank, pick the top of, or place the anchor among a group named by industry (:attr:`Plan.peers`).

    Every member is measured at the question's period (a fiscal one: each company's own), else at the anchor's
    latest period, else at the period most members report last, a flow over the span asked (else the quarter); a
    member without the measure there, with the flow over another span only (a 10-K's year), or whose ratio divides
    by a figure at or below zero is left out and named in the notes; ``plan.companies`` becomes the members
    measured. ``standing``: the anchor's value and the group's median (a tool's number: the middle value, or the
    ``calculate`` mean of the middle two), or its mean where the question says "average" or "mean"; the notes give
    the anchor's place.

    Raises:
        ToolError: fewer than two members report the measure, or the anchor of a ``standing`` does not.
    """
    plan, out = run.plan, run.out
    m = plan.measures[0]
    fixed: tuple[str, int | None] | None = None
    if not plan.periods:
        fixed = run.period(group.anchor, m) if group.anchor is not None else (_common_latest(run, m), None)
    want = (plan.periods[0].qtrs if plan.periods else None) or 1  # a flow's span: the one asked, else the quarter
    members, results, left = [], [], []
    for cik, name in plan.companies:
        try:
            ddate, qtrs = fixed or run.period(cik, m)
            res = run.measure(cik, m, ddate, qtrs)
        except ToolError as exc:
            other = _SPANS_REPORTED.search(str(exc))  # a 10-K filer's year where a quarter is asked: said so
            months = " or ".join(str(3 * int(q)) for q in other.group(1).split(",")) if other else ""
            left.append(f"{name} (reports {m.label} over {months} months only)" if months else name)
            continue
        span = int(res.detail["qtrs"] or 0)
        if span and span != want:  # a 10-K filer's year beside the others' quarter: not comparable
            left.append(f"{name} (reports {m.label} over {3 * span} months only)")
            continue
        negative = _non_positive_denominator(res)
        if negative:
            left.append(f"{name} ({negative})")
            continue
        results.append(res)
        members.append((cik, name))
    period = ", ".join(sorted({str(r.detail["period"]) for r in results})) or "the period asked"
    if group.anchor is not None and plan.kind == "standing" and (not members or members[0][0] != group.anchor):
        raise ToolError(f"not in the graph: {plan.companies[0][1]} reports no {m.label} for {period}")
    if len(results) < 2:
        raise ToolError(
            f"not in the graph: {len(results)} of the {len(plan.companies)} companies of {group.description} "
            f"report {m.label} for {period}"
        )
    shown = "; ".join(left[:12]) + (f" and {len(left) - 12} more" if len(left) > 12 else "")
    out.notes.append(
        f"{group.description}: {len(members)} of {len(plan.companies)} companies in the graph report {m.label} for "
        f"{period}" + (f"; left out: {shown}" if left else "")
    )
    plan.companies = members
    values = [float(r.value) for r in results]
    names = {_letters(i): v for i, v in enumerate(values)}
    order = sorted(range(len(values)), key=lambda i: values[i], reverse=not plan.smaller)
    labels = [n for _, n in members]
    derivation: dict[str, Any] = {
        "operands": _operands(results, lambda i: _letters(i) + "_"),
        "formula": " ; ".join(dict.fromkeys(r.detail["formula"] for r in results)),
        "group": group.description,
        "values": dict(zip(labels, values, strict=True)),
    }
    unit = m.unit
    out.unit = unit
    if plan.kind in ("group average", "standing"):
        center = _group_center(run, names, plan.average)
        what = "group mean" if plan.average else "group median"
        derivation.update(expression=f"{'mean' if plan.average else 'median'}({', '.join(names)})")
        if plan.kind == "group average":
            out.value = float(center.value)
            derivation.update(result=out.value)
            return f"{what} ({format_value(out.value, unit)})", "span", derivation
        out.value = values[0]
        out.pick = [labels[0]]
        place = order.index(0) + 1
        out.notes.append(
            f"{labels[0]} ranks {place} of {len(values)} by {m.label} ({'lowest' if plan.smaller else 'highest'} first)"
        )
        derivation.update(result=center.value, order=[labels[i] for i in order])
        return (
            [f"{labels[0]} ({format_value(values[0], unit)})", f"{what} ({format_value(float(center.value), unit)})"],
            "multi-span",
            derivation,
        )
    run.call(calculate(f"{'min' if plan.smaller else 'max'}({', '.join(names)})", names))
    derivation.update(expression=("min" if plan.smaller else "max") + f"({', '.join(names)})", result=values[order[0]])
    if plan.kind == "rank":
        shown = order[: plan.limit] if plan.limit else order
        if plan.limit and plan.limit < len(order):
            out.notes.append(f"the first {plan.limit} of {len(order)} shown")
        out.pick = [labels[i] for i in shown]
        derivation["result"] = [labels[i] for i in order]
        return [f"{labels[i]} ({format_value(values[i], unit)})" for i in shown], "multi-span", derivation
    top, second = _at_place(run, labels, values, unit, order)
    out.pick = [labels[top]]
    if plan.by_how_much:
        cmp = run.call(calculate("abs(top - second)", {"top": values[top], "second": values[second]}))
        out.value, out.unit = float(cmp.value), ("pp" if unit == "%" else unit)
        derivation.update(expression=cmp.detail["expression"], result=cmp.value, pick=labels[top])
        return f"{labels[top]}, by {format_value(out.value, out.unit)} over {labels[second]}", "span", derivation
    out.value = values[top]
    return f"{labels[top]} ({format_value(values[top], unit)})", "span", derivation


def _group_center(run: _Runner, names: dict[str, float], mean: bool) -> ToolResult:
    """The group's mean (``mean``: the ``calculate`` of their sum over their count) or median (the middle value, or
    the ``calculate`` mean of the middle two) of the members' values ``names`` (operand name -> value), as a tool's
    result so the gate traces it."""
    if mean:
        return run.call(calculate(f"({' + '.join(names)}) / {len(names)}", names))
    mid = sorted(names.values())
    half = len(mid) // 2
    pair = {"a": mid[half - 1], "b": mid[half]} if len(mid) % 2 == 0 else {"a": mid[half]}
    return run.call(calculate("(a + b) / 2" if len(pair) == 2 else "a", pair))


def _non_positive_denominator(result: ToolResult) -> str:
    """Why a ratio is not comparable with its peers' (a ``measure`` result whose formula divides by a fact that is
    zero or negative: "StockholdersEquity -1,234": a return on negative equity ranks a loss as a high return), else
    ""."""
    formula = str(result.detail["formula"])
    if "/" not in formula:
        return ""
    below = formula.split("/", 1)[1]
    for f in result.detail["facts"]:
        if re.search(rf"\b{re.escape(str(f['concept']))}\b", below) and float(f["value"]) <= 0:
            return f"{f['concept']} {format_value(float(f['value']), 'USD')} at {f['period']}"
    return ""


def _letters(i: int) -> str:
    """An operand name for the ``i``-th company: ``a`` .. ``z``, then ``aa``, ``ab`` ..."""
    return chr(97 + i) if i < 26 else _letters(i // 26 - 1) + chr(97 + i % 26)


def _without_names(answer: str | list[str], plan: Plan) -> str | list[str]:
    """The answer with the plan's company names and measure labels replaced by ``X``: the number gate traces the
    numbers, the names are the plan's (checked by :func:`plan_checks`), so a name's digits (``3M``) or words
    (``General Growth``) are not read as numbers or directions."""
    names = sorted([n for _, n in plan.companies] + [m.label for m in plan.measures], key=len, reverse=True)

    def blank(text: str) -> str:
        for n in names:
            text = text.replace(n, "X")
        return text

    return blank(answer) if isinstance(answer, str) else [blank(a) for a in answer]


STABLE_CONCEPTS = frozenset(
    {
        "Revenues", "CostOfRevenue", "CurrentAssets", "CurrentLiabilities", "Assets", "Liabilities", "Cash",
        "StockholdersEquity", "Inventory", "AccountsReceivable", "LongTermDebt", "ResearchAndDevelopment",
        "SellingGeneralAndAdministrative",
    }
)  # fmt: skip
"""Concepts whose size moves slowly from period to period (levels, not results that cross zero): what the scale
check judges."""
SCALE_SLIP = 500.0
"""A stable concept's value this many times larger or smaller than the median of the filer's other periods is a
scale slip (a 10^3 or 10^6 error), flagged, not answered."""


def scale_checks(graph: Graph, out: SecAnswer) -> list[str]:
    """Issue 44's scale check: every stable-concept fact of the derivation against the same filer's values of the same
    tag and span in its other periods (any filing, comparatives included); one reason per fact
    :data:`SCALE_SLIP` times off their median.

    Raises:
        GraphError: Neo4j is unavailable.
    """
    facts = [
        f
        for r in out.tool_results
        if r.ok and r.tool == "measure"
        for f in r.detail["facts"]
        if f["concept"] in STABLE_CONCEPTS and f.get("tag") not in (None, "derived")
    ]
    if not facts:
        return []
    rows = [{"adsh": f["key"], "cik": int(f["cik"]), "coreg": None, "tags": [f["tag"]]} for f in facts]
    others = {r["adsh"]: r["facts"] for r in graph.read(cypher.FILER_TAG_VALUES, {"rows": rows})}
    reasons = []
    for f in facts:
        period = f["period"].replace("-", "")
        values = sorted(
            abs(float(x["value"]))
            for x in others.get(f["key"], [])
            if x["tag"] == f["tag"] and x["ddate"] != period and int(x["qtrs"] or 0) == int(f["qtrs"] or 0)
        )
        values = [v for v in values if v > 0]
        if not values or f["value"] == 0:
            continue
        median = values[len(values) // 2]
        ratio = abs(f["value"]) / median
        if ratio >= SCALE_SLIP or ratio <= 1 / SCALE_SLIP:
            reasons.append(
                f"scale check: {f['company']}'s {f['tag']} at {f['period']} is {abs(f['value']):,.0f}, "
                f"{ratio:,.4g} times the median ({median:,.0f}) of its other periods: a scale slip, not answered"
            )
    return reasons


_LOSS = re.compile(r"\b(?:loss|losses|lose|lost)\b", re.I)


def _loss_words(question: str, plan: Plan, value: float) -> str:
    """Words that say which way a profit figure asked as a loss goes ("Amgen's net loss": ``" (a profit, not a
    loss)"`` after USD 1,269,000,000, never read as a loss of that much; ``" (a loss)"`` after a negative one), or
    ""."""
    profit = len(plan.measures) == 1 and re.search(r"\b(?:income|profit|earnings)\b", plan.measures[0].label, re.I)
    if plan.kind != "value" or len(plan.companies) != 1 or not profit or not _LOSS.search(question):
        return ""
    return " (a profit, not a loss)" if value > 0 else " (a loss)" if value < 0 else " (neither profit nor loss)"


def plan_checks(plan: Plan, question: str, out: SecAnswer) -> list[str]:
    """Whether the answer answers the question asked (issue 44's second gate), one reason per failed check.

    1. The unit is the measure's: a question that asks for a ratio, margin, rate or share is never answered with an
       amount (``USD``); one that asks for a number of days (:func:`asks_days`) is answered in days.
    2. Every company the question names is in the derivation's facts.
    3. Every period the question names is the period of the derivation's facts (a year earlier for a change).
    4. Every measure's formula is the catalog's.
    5. A comparison or ranking picks only companies (or measures) the question names.
    6. A gap asked in percent ("by how many percent was IBM's revenue higher") is answered with a percent, never with
       the larger company's name alone.
    """
    reasons: list[str] = []
    named = {n for _, n in plan.companies} | {m.label for m in plan.measures}
    if out.pick and not set(out.pick) <= named:
        reasons.append(f"the answer picks {', '.join(sorted(set(out.pick) - named))}, which the question does not name")
    measured = [r for r in out.tool_results if r.ok and r.tool == "measure"]
    asked = re.sub(r"\b(?:profit|gross|net|operating) margin\b", "margin", question)
    if plan.measures and all(_PER_SHARE.search(m.label) for m in plan.measures):
        asked = _PER_SHARE.sub(" ", asked)  # a per-share element (dividends declared per share) is asked per share
    asks_ratio = bool(_ASKS_RATIO.search(asked))
    if (
        asks_ratio
        and plan.kind in ("value", "difference", "compare", "rank", "standing", "group average", "sum")
        and out.unit == "USD"
    ):
        labels = ", ".join(m.label for m in plan.measures)
        reasons.append(f"the question asks for a ratio, margin, rate or share, but {labels} is an amount in USD")
    relative = _RELATIVE_PERCENT.search(question)
    if relative is not None and out.unit not in ("%", "pp"):
        reasons.append(f"the question asks {relative.group()!r}, but the answer gives no percent")
    if (
        asks_days(question)
        and plan.kind in ("value", "difference", "compare", "rank", "standing", "group average")
        and out.unit not in ("days", None)
    ):
        labels = ", ".join(m.label for m in plan.measures)
        reasons.append(f"the question asks for a number of days, but {labels} is in {out.unit}")
    ciks = {int(f["cik"]) for r in measured for f in r.detail["facts"]}
    missing = [n for c, n in plan.companies if c not in ciks]
    if missing:
        reasons.append(f"the derivation holds no fact of {', '.join(missing)}, which the question names")
    if any(p.ddate for p in plan.periods):  # "TTM revenue" names no date: the latest, as a question without one
        wanted: set[str] = set()
        for r in measured:
            wanted.add(r.detail["period"])
        asked = set()
        for p in plan.periods:
            if end := p.end():  # the period asked, "a year ago" moved back
                before = months_before(end, 3 * (p.qtrs or 0)) if plan.over_span else year_earlier(end)
                asked |= {iso(end), iso(before)} if plan.kind == "change" or plan.change else {iso(end)}
        if plan.since:  # "since December 31, 2008": to the latest period, whichever it is
            asked |= {w for w in wanted if w > min(asked)}
        fiscal = any(p.fiscal for p in plan.periods)
        if not fiscal and not all(any(_same_period(w, a) for a in asked) for w in wanted):
            reasons.append(
                f"the question asks for {', '.join(sorted(asked))} but the answer uses {', '.join(sorted(wanted))}"
            )
    for r in measured:
        m = next((x for x in plan.measures if x.id == r.detail["measure"]), None)
        if m is not None and r.detail["formula"] not in (*m.formulas, *m.bank_formulas):
            reasons.append(f"{m.label} was computed as {r.detail['formula']}, not the catalog's formula")
    return reasons


def answer_sec_question(
    graph: Graph,
    question: str,
    company: str | None = None,
    as_of: AsOf | None = None,
    client: LLMClient | None = None,
) -> SecAnswer:
    """Answer an SEC question from the graph (see the module doc).

    Args:
        graph: the Neo4j graph with SEC facts. question: the question. company: a CIK or part of a name (else the
            question's). as_of: only filings public by then count (a date, datetime or ISO text; None: all).
        client: an LLM that reads the question into the plan under a JSON schema when the word-based reading
            finds no company or no measure (:func:`generation.agent.understand.llm_plan`); None: words only.

    Returns:
        :class:`SecAnswer`: ``answered`` with a gated answer, its value, unit and derivation; ``not in graph`` (the
        reason says what was searched); ``ask back`` (the candidates); or ``could not verify`` (the gates' reasons).

    Raises:
        GraphError: Neo4j is unavailable.
    """
    plan = plan_question(graph, question, company)
    if client is not None and plan.kind in ("no company", "unknown") and not company and not plan.refusal:
        from generation.agent.understand import llm_plan  # understand builds on this module's Plan

        index, sic = company_index(graph)
        read, why = llm_plan(client, question, index, sic)
        if read is None:
            return SecAnswer(None, "not understood", [why], plan=plan)
        plan = read
    out = SecAnswer(None, "not in graph", plan=plan, notes=list(plan.notes))
    if plan.kind == "ambiguous":
        words, cands = plan.ambiguous[0]
        listed = "; ".join(f"{n} (CIK {c})" for c, n in cands)
        out.status, out.reasons = "ask back", [f"which company do you mean by {words!r}: {listed}?"]
        return out
    if plan.kind == "ambiguous measure":
        listed = "; ".join(f"{label} ({tag})" for tag, label in plan.elements)
        asked = (
            f"which element do you mean: {listed}?" if plan.elements else f"which measure do you mean: {plan.refusal}?"
        )
        out.status, out.reasons = "ask back", [asked]
        return out
    if plan.kind == "no company":
        where = "" if company else " in the question"
        out.reasons = [f"not in the graph: no company found{where}; searched {plan.searched[0]}"]
        return out
    if plan.kind == "unknown" and plan.refusal:
        labels = next((s for s in plan.searched if s.startswith("the labels of")), None)
        out.status = "not understood"
        out.reasons = [
            f"not understood: {plan.refusal}" + (f"; no label matched either (searched {labels})" if labels else "")
        ]
        return out
    if plan.kind == "unknown":
        known = ", ".join(m.label for m in MEASURES)
        bad_date = f" ({plan.searched[-1]})" if plan.searched and "not a date" in plan.searched[-1] else ""
        labels = next((s for s in plan.searched if s.startswith("the labels of")), None)
        out.reasons = [
            f"not in the graph: the question names no concept or ratio finkg knows{bad_date}; the measures it "
            f"knows: {known}" + (f"; searched {labels}" if labels else "")
        ]
        return out
    if plan.kind == "no peers" and plan.peers is not None:
        out.reasons = [f"not in the graph: {plan.peers.description} holds no other company in the graph"]
        return out
    if plan.kind == "one of two" or (
        plan.kind in ("compare", "difference", "sum", "rank")
        and (plan.unresolved or len(plan.companies) < 2)
        and len(plan.measures) < 2
    ):
        out.reasons = [
            f"not in the graph: the question compares companies but only {', '.join(n for _, n in plan.companies)} "
            f"found; searched {plan.searched[0] if plan.searched else 'the names of the graph companies'}"
        ]
        return out
    try:
        runner = _Runner(graph, plan, as_of, out)
        answer, qtype, derivation = _run(runner)
        if _BASIS_POINTS.search(question):
            answer = _in_basis_points(runner, answer, derivation)
    except ToolError as exc:
        out.reasons = [str(exc)]
        out.status = "not in graph" if str(exc).startswith(("not in the graph", "no ")) else "could not answer"
        out.value = out.unit = out.pick = None
        return out
    if isinstance(answer, str) and out.value is not None:
        answer += _loss_words(question, plan, out.value)
    quoted = [question] if plan.kind == "threshold" else []  # a threshold's number is the question's own
    change = out.value if plan.kind == "change" else None  # a direction word must agree with the change computed
    verdict = check_answer(_without_names(answer, plan), qtype, out.tool_results, quoted, change=change)
    extra = plan_checks(plan, question, out) + scale_checks(graph, out)
    if extra:
        checks = {**verdict.checks, "answers_the_question": False}
        verdict = Verdict(False, (*verdict.reasons, *extra), verdict.numbers, verdict.direction, verdict.change,
                          verdict.answer_type, verdict.question_type, checks)  # fmt: skip
    else:
        verdict.checks["answers_the_question"] = True
    out.verdict, out.derivation = verdict, derivation
    text = answer if isinstance(answer, str) else "; ".join(answer)
    if verdict.passed:
        out.answer, out.status = text, "answered"
    else:
        out.status, out.reasons = "could not verify", list(verdict.reasons)
        out.value = out.unit = out.pick = None
    return out


def run_record(got: SecAnswer, question: str, company: str | None = None, as_of: AsOf | None = None) -> RunRecord:
    """An SEC answer as an agent run (``kind`` ``ask``, model ``deterministic``): its tool calls as steps (linked
    to the facts they read) and the gate's verdict as the last step; the run's ``verdict`` is ``passed``,
    ``failed``, ``not in graph`` or ``not run``."""
    steps = [tool_step(r) for r in got.tool_results]
    if got.verdict is not None:
        error = None if got.verdict.passed else "; ".join(got.verdict.reasons)
        steps.append(StepRecord("gate", got.answer or "", got.verdict.as_dict(), error))
    if got.status == "not in graph":
        verdict = "not in graph"
    elif got.verdict is None:
        verdict = "not run"
    else:
        verdict = "passed" if got.verdict.passed else "failed"
    return RunRecord(
        run_id("ask", question, company or "", str(as_of or "")),
        question,
        got.answer,
        verdict,
        "deterministic",
        kind="ask",
        as_of=str(as_of) if as_of else None,
        props={
            "status": got.status,
            "reasons": got.reasons,
            "company": company or "",
            "derivation": json.dumps(got.derivation, default=str),
            "plan": json.dumps(got.plan.as_dict() if got.plan else {}, default=str),
            "notes": got.notes,
        },
        steps=steps,
    )
