"""Question understanding without a server (issue 44): periods as filings state them, the measure catalog, and
companies as people name them, resolved against the shipped 2009q3 quarter's real company names (sub.txt read
here with pandas) and the SEC's ticker table.

The FSDS rule under test is the SEC's own: ``ddate`` is "the end date for the data value, rounded to the nearest
month end" (Financial Statement Data Sets readme, NUM).
"""

from __future__ import annotations

import datetime as dt
import json
import zipfile
from functools import cache
from pathlib import Path

import pandas as pd
import pytest

from generation.agent.ask import Plan, without_measure_words
from retrieval.facts.measures import (
    BY_ID,
    EXCLUDED_SYNONYMS,
    EXTRA_CONCEPTS,
    MEASURES,
    find_measures,
    measure_phrase_words,
    synonym_group,
)
from retrieval.facts.names import CompanyIndex, core_name, instance_ticker, ticker_table
from retrieval.facts.periods import (
    PeriodAsk,
    find_periods,
    fiscal_period_end,
    fsds_ddate,
    months_before,
    relative_period,
    year_earlier,
)

ROOT = Path(__file__).resolve().parents[1]
QUARTER = ROOT / "data" / "sec-fsds" / "2009q3.zip"


@pytest.mark.parametrize(
    ("stated", "ddate"),
    [
        ("2009-06-28", "20090630"),  # J&J's second quarter ended on Sunday June 28, 2009
        ("2010-01-02", "20091231"),  # a 52/53-week year ending on the Saturday nearest December 31
        ("2009-10-03", "20090930"),
        ("2010-01-30", "20100131"),  # a retailer's year nearest January 31
        ("2009-06-30", "20090630"),
        ("2009-02-13", "20090131"),
        ("2009-02-15", "20090228"),
        # Costco's 10-Q for the quarter ended February 14, 2010: 14 days from January's end and from February's; FSDS
        # (2010q1 sub.txt period, num.txt ddate) rounded it to January's
        ("2010-02-14", "20100131"),
        ("2009-09-15", "20090831"),  # a 30-day month's 15th: a tie too
    ],
)
def test_a_stated_period_end_rounds_to_the_nearest_month_end_as_fsds_does(stated, ddate):
    assert fsds_ddate(dt.date.fromisoformat(stated)) == ddate


@pytest.mark.parametrize(
    ("question", "ddate", "qtrs", "fiscal"),
    [
        ("gross margin in the quarter ended June 28, 2009", "20090630", 1, None),
        ("revenue for Q2 2009", "20090630", 1, None),
        ("2Q09 sales", "20090630", 1, None),
        ("sales in the second quarter of 2009", "20090630", 1, None),
        ("revenue in the fiscal 2010 second quarter", "20100630", 1, (2010, "Q2")),
        ("revenue in the first half of 2009", "20090630", 2, None),
        ("revenue for the six months ended June 30, 2009", "20090630", 2, None),
        ("revenue for the nine months ended September 30, 2009", "20090930", 3, None),
        ("cash at the end of 2009", "20091231", None, None),
        ("total assets as of 6/30/2009", "20090630", None, None),
        ("revenue in the June 2009 quarter", "20090630", 1, None),
        ("FY2008 revenue", "20081231", 4, (2008, "FY")),
        ("revenue in 2008", "20081231", 4, (2008, "FY")),
        ("total assets at 28 June 2009", "20090630", None, None),
    ],
)
def test_periods_as_users_write_them(question, ddate, qtrs, fiscal):
    (p,) = find_periods(question)
    assert (p.ddate, p.qtrs, p.fiscal) == (ddate, qtrs, fiscal)


def test_no_period_means_the_latest_and_an_impossible_date_is_named():
    assert find_periods("What is Abbott's latest revenue?") == []
    assert find_periods("How much did Abbott spend on R&D last quarter?") == []
    with pytest.raises(ValueError, match="February 30, 2009"):
        find_periods("revenue on February 30, 2009")
    assert year_earlier("20090630") == "20080630" and year_earlier("20090228") == "20080229"


@pytest.mark.parametrize(
    ("question", "ids"),
    [
        ("What was J&J's gross margin?", ["gross_margin"]),
        ("gross profit", ["gross_profit"]),
        ("What is Abbott's debt to equity ratio?", ["debt_to_equity"]),
        ("How much did Abbott spend on research and development?", ["rd_expense"]),
        ("R&D as a percentage of sales", ["rd_intensity"]),
        ("SG&A as a share of revenue", ["sga_ratio"]),
        ("capital expenditure as a share of revenue", ["capex_to_revenue"]),
        ("effective tax rate", ["effective_tax_rate"]),
        ("free cash flow", ["free_cash_flow"]),
        ("operating cash flow margin", ["ocf_margin"]),
        ("operating margin", ["operating_margin"]),
        ("return on equity", ["roe"]),
        ("current assets and current liabilities", ["current_assets", "current_liabilities"]),
        ("How profitable is it? net profit margin", ["net_margin"]),
        ("Amgen's op margin", ["operating_margin"]),  # analysts' short form
        ("op income", ["operating_income"]),
        ("income tax as a share of revenue", ["income_tax_to_revenue"]),  # "income tax" alone was not read
        ("IBM's income tax rate", ["effective_tax_rate"]),
    ],
)
def test_measures_by_their_names_longest_first(question, ids):
    assert [m.id for _, m in find_measures(question)] == ids


def test_every_measure_has_a_unit_a_definition_and_known_operands():
    known = {c.name for c in EXTRA_CONCEPTS} | {
        "Revenues", "NetIncomeLoss", "OperatingCashFlow", "OperatingIncomeLoss", "GrossProfit", "CostOfRevenue",
        "CurrentAssets", "CurrentLiabilities", "Cash", "Liabilities", "Assets", "StockholdersEquity",
        "AccountsReceivable", "Inventory", "LongTermDebt",
    }  # fmt: skip
    assert len(MEASURES) >= 35 and len(BY_ID) == len(MEASURES)
    for m in MEASURES:
        assert m.unit in ("USD", "%", "x", "days") and m.definition and m.phrases, m.id
        for f in (*m.formulas, *m.bank_formulas):
            assert set(m.operands(f)) <= known, (m.id, f)
    # the ratio question of issue 44's "Why" is a multiple, never an amount
    assert BY_ID["debt_to_equity"].unit == "x" and BY_ID["effective_tax_rate"].unit == "%"


def test_synonyms_come_from_edgartools_groups_less_the_documented_exclusions():
    data = json.loads((ROOT / "retrieval/facts/data/edgartools_synonym_groups.json").read_text())
    raw = next(g for g in data["groups"] if g["name"] == "income_tax_expense")["synonyms"]
    assert "IncomeTaxesPaidNet" in raw and "IncomeTaxesPaidNet" in EXCLUDED_SYNONYMS
    assert synonym_group("income_tax_expense") == tuple(t for t in raw if t != "IncomeTaxesPaidNet")
    with pytest.raises(KeyError, match="no synonym group"):
        synonym_group("no_such_group")


@cache
def sub_txt() -> pd.DataFrame:
    with zipfile.ZipFile(QUARTER) as z, z.open("sub.txt") as f:
        return pd.read_csv(f, sep="\t", dtype=str, keep_default_na=False, encoding="latin-1")


@cache
def index() -> CompanyIndex:
    """The graph's company index as ``generation.agent.ask.company_index`` builds it after ``finkg ingest sec`` of
    the quarter: names, the instance files' ticker prefixes and the former names, read here from sub.txt."""
    sub = sub_txt()
    prefixes: dict[int, set[str]] = {}
    former: dict[int, list[str]] = {}
    for c, i, f in zip(sub.cik, sub["instance"], sub["former"], strict=True):
        if t := instance_ticker(i):  # the filer manual's <prefix>-<YYYYMMDD>.xml
            prefixes.setdefault(int(c), set()).add(t)
        if f:
            former.setdefault(int(c), []).append(f)
    names = {int(c): n for c, n in zip(sub.cik, sub.name, strict=True)}
    return CompanyIndex(names.items(), None, prefixes, former)


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("What was J&J's gross margin?", ["JOHNSON & JOHNSON"]),
        ("Johnson and Johnson's tax rate", ["JOHNSON & JOHNSON"]),
        ("How much did Abbott spend on R&D last quarter?", ["ABBOTT LABORATORIES"]),
        ("What is ABT's debt to equity?", ["ABBOTT LABORATORIES"]),
        ("Which had the higher operating margin, Pfizer or Merck, and by how much?", ["PFIZER INC", "MERCK & CO INC"]),
        ("Colgate's net margin", ["COLGATE PALMOLIVE CO"]),
        ("Exxon vs Chevron revenue", ["EXXON MOBIL CORP", "CHEVRON CORP"]),
        ("Jonson & Jonson revenue", ["JOHNSON & JOHNSON"]),  # a typo, matched fuzzily
        ("Coca-Cola revenue", ["COCA COLA CO"]),  # its own name beats Coca-Cola Enterprises' short form
        ("IBM's return on equity", ["INTERNATIONAL BUSINESS MACHINES CORP"]),
    ],
)
def test_companies_by_the_names_people_use(question, names):
    assert [h.name for h in index().find(question).found] == names


def test_a_short_name_two_companies_share_is_asked_back_never_guessed():
    got = index().find("What is Johnson's cash?")
    assert got.found == []
    (words, candidates), *_ = got.ambiguous
    assert words == "johnson" and {n for _, n in candidates} == {"JOHNSON & JOHNSON", "JOHNSON CONTROLS INC"}


def test_a_ticker_that_is_another_companys_initials_is_asked_back():
    """'HP' is Helmerich & Payne's ticker and Hewlett-Packard's initials: asked back, never read as the ticker alone
    (it answered Helmerich & Payne's working capital to a question about Hewlett-Packard: an exhaustive dev check)."""
    got = index().find("How much working capital does HP have?")
    assert got.found == []
    (words, candidates), *_ = got.ambiguous
    assert words == "HP" and {n for _, n in candidates} == {"HELMERICH & PAYNE INC", "HEWLETT PACKARD CO"}
    assert [h.name for h in index().find("What was GE's net income?").found] == ["GENERAL ELECTRIC CO"]


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("What was Conoco's net income?", ["CONOCOPHILLIPS"]),  # the head of a compound name
        ("Compare Conoco's and Murphy Oil's current ratio", ["CONOCOPHILLIPS", "MURPHY OIL CORP /DE"]),
        ("LabCorp's operating income", ["LABORATORY CORP OF AMERICA HOLDINGS"]),  # camel case: Lab-oratory Corp
        ("What was LabCorp's ROA in Q2 2009?", ["LABORATORY CORP OF AMERICA HOLDINGS"]),  # run with a measure
        ("how did Conoco's ROE come out in 2009 Q2", ["CONOCOPHILLIPS"]),  # found by a development probe
        ("Conoco total liabilities as a share of total assets?", ["CONOCOPHILLIPS"]),  # the question's first word
        ("AmEx debt to equity", ["AMERICAN EXPRESS CO"]),
        ("DirecTV Group: working capital", ["DIRECTV GROUP INC"]),  # the name less its legal form only
        ("GOOG's operating margin", ["GOOGLE INC."]),  # its instance file's prefix: today's table gives GOOG to
        ("How did BNI's net income move?", ["BURLINGTON NORTHERN SANTA FE CORP"]),  # Alphabet; BNI is delisted
        ("Host Marriott's revenue", ["HOST HOTELS & RESORTS, INC."]),  # a former name
        ("Marriott's revenue", ["MARRIOTT INTERNATIONAL INC /MD/"]),  # a present name beats another's former one
    ],
)
def test_short_forms_data_tickers_and_former_names(question, names):
    assert [h.name for h in index().find(question).found] == names


def test_a_ticker_the_table_gives_one_company_and_the_filings_another_is_asked_back():
    """Today's SEC table gives MRK to the CIK that filed as SCHERING PLOUGH CORP in 2009 (it became Merck & Co in the
    merger); Merck & Co's own 2009 filings are mrk-*.xml. Neither is guessed."""
    assert "MRK" in ticker_table()[310158]
    assert set(sub_txt().query("cik == '64978'")["instance"].str.split("-").str[0]) == {"mrk"}
    got = index().find("What was MRK's revenue?")
    assert got.found == []
    (words, candidates), *_ = got.ambiguous
    assert words == "MRK" and {n for _, n in candidates} == {"MERCK & CO INC", "SCHERING PLOUGH CORP"}


def test_a_short_form_two_companies_fit_is_asked_back_and_a_common_word_is_no_short_form():
    ix = CompanyIndex([(1, "GENERAL DYNAMICS CORP"), (2, "CONOCOPHILLIPS"), (3, "TEXTRON INC")])
    assert ix.short_form("Conoco") == [2] and ix.short_form("ConocoPhillips") == []  # a whole word is its alias's
    assert ix.short_form("Textr") == []  # two letters short of TEXTRON: a typo's business (fuzzy), not a head
    assert ix.short_form("General") == []  # a common word is never a short form
    both = CompanyIndex([(1, "CONOCOPHILLIPS"), (2, "CONOCOFOODS INC")])
    got = both.find("What was Conoco's revenue?")
    assert got.found == [] and got.ambiguous == [("Conoco", [(1, "CONOCOPHILLIPS"), (2, "CONOCOFOODS INC")])]
    got = both.find("What was Conoco's ROE?")  # a measure's letters glued to the name's run: the same ask-back
    assert got.found == [] and got.ambiguous == [("Conoco", [(1, "CONOCOPHILLIPS"), (2, "CONOCOFOODS INC")])]
    # the question's first word is a short form only when one company fits; a verb never is one
    assert both.find("Conoco revenue?").found == [] and both.find("Conoco revenue?").ambiguous == []
    verbs = CompanyIndex([(1, "ESTIMATED ENERGY INC"), (2, "TEXTRON INC")])
    assert [h.cik for h in verbs.find("Estimate the current ratio of Textron.").found] == [2]
    assert verbs.find("Estimate current ratio?").found == []  # a head is at least 3 letters short of the word
    asking = CompanyIndex([(1, "COMPAREXXX SYSTEMS INC"), (2, "CONOCOPHILLIPS")])  # "Compare" heads its first word
    assert [h.cik for h in asking.find("Compare Conoco's current ratio with Xyzzy's").found] == [2]


def test_initials_that_are_no_ticker_are_asked_back_with_the_companies_they_fit():
    """ "TI" is no ticker; it is the initials of TEXAS INSTRUMENTS and of TYCO INTERNATIONAL: asked back, also after
    a capitalised question word ("Rank TI, ..."), which is not part of a name."""
    for question in ("What was TI's operating margin in Q2 2009?", "Rank TI, Ametek and Pfizer by net margin."):
        got = index().find(question)
        assert "TI" not in got.unresolved and all(h.text != "TI" for h in got.found)
        (words, candidates), *_ = got.ambiguous
        assert words == "TI" and {n for _, n in candidates} == {"TEXAS INSTRUMENTS INC", "TYCO INTERNATIONAL LTD /BER/"}


def test_a_four_letter_head_names_a_company_inside_the_question_never_as_its_first_word():
    """ "Citi" is the head of CITIGROUP (2010q2 development questions: "What was Citi's net income in the March 2010
    quarter?" found no company); a capitalised first word of four letters ("Free cash flow at ...") is the
    question's, not FREEPORT MCMORAN's."""
    ix = CompanyIndex([(1, "CITIGROUP INC"), (2, "FREEPORT MCMORAN COPPER & GOLD INC"), (3, "DOVER CORP")])
    assert [h.cik for h in ix.find("What was Citi's net income in the March 2010 quarter?").found] == [1]
    assert [h.cik for h in ix.find("By how much did Citi's equity exceed Dover's?").found] == [1, 3]
    assert [h.cik for h in ix.find("Free cash flow at Dover in the first three months of 2010?").found] == [3]
    two = CompanyIndex([(1, "CITIGROUP INC"), (2, "CITIZENS REPUBLIC BANCORP INC")])
    got = two.find("What was Citi's net income?")  # the head of two companies' first words: asked back
    assert got.found == [] and [c for c, _ in got.ambiguous[0][1]] == [1, 2]


def test_a_short_name_said_only_inside_a_measure_phrase_is_the_measure_not_the_company():
    """RESEARCH IN MOTION's short name is "research": "Research and development spending at Boeing in the March
    2010 quarter?" asked for Research In Motion's R&D (2010q2 development questions); the words are a measure's."""
    ix = CompanyIndex([(1, "RESEARCH IN MOTION LTD"), (2, "BOEING CO")])
    question = "Research and development spending at Boeing in the March 2010 quarter?"
    assert [h.cik for h in ix.find(question).found] == [1, 2]  # what the index alone reads
    assert ("research", True) in measure_phrase_words(question) and ("boeing", False) in measure_phrase_words(question)
    plan = Plan("value")
    assert [h.cik for h in without_measure_words(question, ix.find(question).found, plan)] == [2]
    assert "'research' is a word of a measure here, not RESEARCH IN MOTION LTD (CIK 1)" in plan.searched
    heads = CompanyIndex([(1, "GROSSMANS INC")])  # a short form (the head of GROSSMANS) inside a measure, too
    hits = heads.find("Gross margin in Q2 2009?").found
    assert [h.how for h in hits] == ["short form"] and without_measure_words(
        "Gross margin in Q2 2009?", hits, plan
    ) == []
    named = "What was Research In Motion's revenue?"  # the name itself is kept
    assert [h.cik for h in without_measure_words(named, ix.find(named).found, Plan("value"))] == [1]


def test_a_name_that_matches_nothing_is_reported_not_matched_to_a_lookalike():
    got = index().find("What is the net margin of Acme Widgets?")
    assert got.found == [] and got.unresolved == ["Acme Widgets"]
    assert core_name("JOHNSON & JOHNSON /NJ/") == "johnson & johnson"
    assert "JNJ" in ticker_table()[200406]


@pytest.mark.parametrize(
    ("question", "words", "cik"),
    [
        ("Gross profit at Dana in the second quarter of 2009?", "Dana", 26780),  # not DANAHER's short form
        ("Dana's gross profit in Q2 2009?", "Dana", 26780),
        ("EON Resources operating profit margin for Q2 2009?", "EON Resources", 1842556),  # not a fuzzy EOG
        ("What was Marathon Petroleum's current ratio?", "Marathon Petroleum", 1510295),  # not MARATHON OIL
        ("Total assets for Teledyne Technologies?", "Teledyne Technologies", 1094285),  # not ALLEGHENY TELEDYNE
        ("What was MARA's cash ratio at the end of June 2009?", "MARA", 1507605),  # a ticker the table gives
        ("Operating cash flow at Herc Holdings in the first half of 2009?", "Herc Holdings", 1364479),  # no fuzzy
        ("ASR Nederland N V: shareholders' equity at June 30, 2009?", "ASR Nederland N V", 1719117),  # "V": no Visa
        ("Latest liabilities to equity ratio for Q/C Technologies?", "Q/C Technologies", 1321834),  # no "C", no FMC
    ],
)
def test_a_company_the_graph_does_not_hold_is_never_read_as_a_lookalike(question, words, cik):
    """The SEC's ticker table names companies the graph does not hold: their names and tickers are reported as
    such, never matched to a graph company by a short form, a fuzzy match, a former name or the words of a name."""
    got = index().find(question)
    assert got.found == [] and got.ambiguous == []
    assert [(w, c) for w, c, _ in got.elsewhere] == [(words, cik)]
    assert got.unresolved and all(words in u for u in got.unresolved)


def test_a_short_name_other_companies_share_in_the_table_names_none_of_them():
    """ "United States" begins many names (UNITED STATES STEEL's former name too), "Steel" is STEEL DYNAMICS' first
    word but "US Steel" is not STEEL DYNAMICS: neither is read as a graph company."""
    ix = index()
    for question in (
        "In the six months ended June 30, 2009, what did KE Holdings post in operating cash flow?",  # no "HE HOLDINGS"
        "Calculate United States 12 Month Natural Gas Fund's return on assets for Q2 2009.",
        "What was US Steel's revenue in Q2 2009?",
    ):
        assert ix.find(question).found == [], question
    assert [h.name for h in ix.find("What was United States Steel's revenue?").found] == ["UNITED STATES STEEL CORP"]
    assert [h.name for h in ix.find("What was Steel Dynamics' revenue?").found] == ["STEEL DYNAMICS INC"]
    got = ix.find("Rank Celgene, Wyeth and Eastman Chemical by current ratio")  # a list: "Celgene," names no Wyeth
    assert [h.name for h in got.found] == ["CELGENE CORP /DE/", "WYETH", "EASTMAN CHEMICAL CO"]
    assert [h.name for h in ix.find("Compare W.W. Grainger's ROE").found] == ["GRAINGER W W INC"]


def test_initials_said_with_dots_spaces_or_run_together_name_one_company():
    """EDGAR writes initials apart (``J P MORGAN CHASE & CO``, ``C H ROBINSON WORLDWIDE INC``), after the surname
    (``HEINZ H J CO``) or run together (``RR DONNELLEY & SONS CO``, ``US BANCORP``); people write "JP Morgan", "J.P.
    Morgan", "HJ Heinz", "R.R. Donnelley", "U.S. Bancorp". "C H Robinson's revenue" was also Citigroup's ("C", its
    ticker, was placed a character before the name found there, so its span missed it)."""
    ix = index()
    for question, name in [
        ("What was JP Morgan's net income in Q2 2009?", "J P MORGAN CHASE & CO"),
        ("What was J.P. Morgan's net income in Q2 2009?", "J P MORGAN CHASE & CO"),
        ("What was C H Robinson's revenue in Q2 2009?", "C H ROBINSON WORLDWIDE INC"),
        ("What was C.H. Robinson's revenue in Q2 2009?", "C H ROBINSON WORLDWIDE INC"),
        ("What was HJ Heinz's revenue in the quarter ended July 29, 2009?", "HEINZ H J CO"),
        ("What was H.J. Heinz's revenue in the quarter ended July 29, 2009?", "HEINZ H J CO"),
        ("What was R.R. Donnelley's revenue in Q2 2009?", "RR DONNELLEY & SONS CO"),
        ("What was U.S. Bancorp's net income in Q2 2009?", "US BANCORP \\DE\\"),
    ]:
        got = ix.find(question)
        assert [h.name for h in got.found] == [name] and not got.ambiguous and not got.unresolved, question
    got = ix.find("Rank Citigroup, C H Robinson and RR Donnelley by current ratio")
    assert [h.name for h in got.found] == ["CITIGROUP INC", "C H ROBINSON WORLDWIDE INC", "RR DONNELLEY & SONS CO"]
    assert [h.name for h in ix.find("What was C's revenue in Q2 2009?").found] == ["CITIGROUP INC"]  # its ticker


def test_the_graph_companies_keep_their_names_beside_the_tables_others():
    ix = index()
    for question, name in [
        ("Gross profit at Danaher in Q2 2009?", "DANAHER CORP /DE/"),
        ("What was Marathon's current ratio?", "MARATHON OIL CORP"),
        ("What was EOG Resorces' revenue?", "EOG RESOURCES INC"),  # a typo: still a fuzzy match
        ("What was CH Robinson's revenue?", "C H ROBINSON WORLDWIDE INC"),  # initials run together
        ("What was Disney's revenue?", "WALT DISNEY CO/"),  # the table's WALT DISNEY is its 2019 successor
        ("What was Conoco's revenue in Q2 2009?", "CONOCOPHILLIPS"),  # a short form no other company has
        ("Which had the higher D/E ratio, Amazon COM or CVS?", "AMAZON COM INC"),  # the "E" of D/E is no ticker
    ]:
        got = ix.find(question)
        assert got.found[0].name == name and got.elsewhere == [], question


def test_a_short_name_or_initials_another_company_owns_are_asked_back_with_it():
    """ "Cabot" is CABOT OIL & GAS's short name and CABOT CORP's whole name; "CTS" is COGNIZANT TECHNOLOGY SOLUTIONS'
    initials and CTS CORP's ticker: both asked back, the company outside the graph named so."""
    ix = index()
    (words, cands), *_ = ix.find("What was Cabot's revenue in Q2 2009?").ambiguous
    assert (
        words == "cabot"
        and (858470, "CABOT OIL & GAS CORP") in cands
        and (16040, "CABOT CORP, not in the graph") in cands
    )
    (words, cands), *_ = ix.find("What is CTS's current ratio?").ambiguous
    assert words == "CTS" and {c for c, _ in cands} == {1058290, 26058}
    assert ix.find("What was Cabot Oil & Gas's revenue?").found[0].cik == 858470


@pytest.mark.parametrize(
    ("question", "ddate"),
    [
        ("What was Avon's TTM revenue as of March 31, 2010?", "20100331"),
        ("LTM net margin at Avon through March 31, 2010?", "20100331"),
        ("Avon revenue for the twelve months ended March 27, 2010?", "20100331"),
        ("How much did Avon earn over the trailing 12 months ended 3/31/2010?", "20100331"),
        ("What is Avon's trailing-twelve-month revenue?", None),  # no date: the latest period end
        ("What was IBM's trailing ROE at June 30, 2009?", "20090630"),  # "trailing" alone was not read
        ("Avon's revenue over the rolling 12 months ended March 31, 2010", "20100331"),
    ],
)
def test_trailing_twelve_months_words_ask_the_twelve_months_ended_a_date(question, ddate):
    (ask,) = find_periods(question)
    assert (ask.ddate, ask.qtrs, ask.trailing) == (ddate, 4, True)


@pytest.mark.parametrize(
    "question", ["What was Avon's revenue in fiscal 2009?", "Avon's revenue in 2009?", "Avon's revenue in Q1 2010?"]
)
def test_a_fiscal_year_or_quarter_is_never_a_trailing_twelve_months(question):
    assert not any(p.trailing for p in find_periods(question))


def test_months_before_a_month_end_is_a_month_end():
    assert [months_before("20100331", 3), months_before("20100630", 6), months_before("20100228", 12)] == [
        "20091231",
        "20091231",
        "20090228",
    ]
    assert months_before("20080331", 1) == "20080229"  # a leap year's February


def test_several_periods_at_once_are_refused_and_four_quarters_are_the_trailing_twelve_months():
    for q in (
        "revenue for the last two quarters",
        "net income over the past 3 years",
        "revenue in each quarter of 2009",
        "What was IBM's revenue each quarter?",
        "IBM revenue by quarter",
    ):
        with pytest.raises(ValueError, match="several periods"):
            find_periods(q)
    (ttm,) = find_periods("revenue over the last four quarters")
    assert ttm.trailing and ttm.qtrs == 4 and ttm.ddate is None
    assert find_periods("revenue last quarter") == []  # the latest: one period


@pytest.mark.parametrize(
    ("question", "ddate", "qtrs", "fiscal"),
    [
        ("revenue in the second quarter, 2009", "20090630", 1, None),
        ("revenue in 1H09", "20090630", 2, None),
        ("revenue in H1'09", "20090630", 2, None),
        ("revenue in H2 2009", "20091231", 2, None),
        ("calendar year 2009 revenue", "20091231", 4, None),  # calendar: not the company's fiscal year
        ("revenue over 2009", "20091231", 4, (2009, "FY")),
    ],
)
def test_halves_calendar_years_and_a_year_over_which(question, ddate, qtrs, fiscal):
    (p,) = find_periods(question)
    assert (p.ddate, p.qtrs, p.fiscal) == (ddate, qtrs, fiscal)


def test_a_year_no_period_phrase_reads_is_refused_never_the_latest_period():
    for q in ("Abbott 2009 revenue", "What was Abbott's cash at mid-2009?"):
        with pytest.raises(ValueError, match="unread period"):
            find_periods(q)
    assert find_periods("What is Abbott's current ratio?") == []  # no year named: the latest


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("What was Abbott's revenue last year?", "last year"),
        ("Abbott revenue this fiscal year", "this fiscal year"),
        ("Abbott's revenue YTD", None),  # the fiscal year to date: read (PeriodAsk.ytd)
        ("Amgen's revenue this year", "this year"),
        ("Abbott's cash at year-end", "year-end"),
        ("Abbott's annual revenue", "annual"),
        ("Abbott's revenue in the prior quarter", "prior quarter"),
        ("What was Abbott's revenue in Q2 2009?", None),
        ("What was Abbott's latest revenue?", None),
    ],
)
def test_periods_relative_to_an_unstated_date_are_named(question, words):
    assert relative_period(question) == words


def test_the_year_to_date_is_the_fiscal_year_to_date_of_the_period_named_or_the_latest():
    assert find_periods("Abbott's revenue YTD") == [PeriodAsk(None, text="YTD", ytd=True)]
    (got,) = find_periods("Amgen's revenue year-to-date as of June 30, 2009")
    assert got.ddate == "20090630" and got.ytd and got.qtrs is None
    assert PeriodAsk("20090630", years_back=1).end() == "20080630"
    assert PeriodAsk(None, years_back=1).end("20100331") == "20090331"


@pytest.mark.parametrize(
    ("fye", "fy", "fp", "ddate"),
    [
        ("0331", 2010, "Q1", "20090630"),  # Symantec: fiscal 2010's first quarter ended July 3, 2009
        ("0331", 2009, "Q1", "20080630"),  # ... fiscal 2009's, July 4, 2008 (FSDS's fy says 2009 for the 2009 one)
        ("0228", 2010, "FY", "20100228"),  # SuperValu: fiscal 2010 ended February 27, 2010
        ("0531", 2010, "Q1", "20090831"),  # Oracle, FedEx: as FSDS's fy says
        ("0930", 2009, "Q3", "20090630"),  # Disney, Starbucks
        ("1031", 2009, "Q3", "20090731"),  # Hewlett-Packard
        ("1231", 2009, "H1", "20090630"),
        ("0102", 2009, "FY", "20091231"),  # a 52/53-week year ended January 2, 2010 is fiscal 2009
        ("0103", 2009, "Q2", "20090630"),
    ],
)
def test_a_fiscal_period_is_named_by_the_calendar_year_its_fiscal_year_ends_in(fye, fy, fp, ddate):
    assert fiscal_period_end(fye, fy, fp) == ddate


def test_a_fiscal_year_ending_in_january_is_named_either_way_and_not_read():
    """Home Depot's fiscal 2009 and Dell's fiscal 2010 both ended in late January 2010; FSDS's fy is 2009 for both."""
    for fye in ("0131", "0129", "0201", "0215"):
        with pytest.raises(ValueError, match=r"starts in .* or ends in"):
            fiscal_period_end(fye, 2010, "Q2")
    with pytest.raises(ValueError, match="MMDD"):
        fiscal_period_end("1331", 2010, "Q2")
    with pytest.raises(ValueError, match="Q1-Q4"):
        fiscal_period_end("1231", 2010, "Q5")


def test_a_legal_form_word_that_starts_the_next_listed_name_is_that_company():
    """ "Marvell Technology Group, Limited Brands": "Limited" is Limited Brands' first word, not Marvell's "Ltd"."""
    found = index().find("Order Macy's, Marvell Technology Group, Limited Brands from highest to lowest ROA.")
    assert [h.name for h in found.found] == ["MACY'S, INC.", "MARVELL TECHNOLOGY GROUP LTD", "LIMITED BRANDS INC"]
    found = index().find("What was Marvell Technology Group Limited's revenue?")  # its own legal form, said in full
    assert [h.name for h in found.found] == ["MARVELL TECHNOLOGY GROUP LTD"] and not found.unresolved


def test_a_measure_named_in_the_plural_is_the_measure():
    """ "the difference between Amgen's and IBM's net margins" was refused as naming no measure."""
    for q, mid in [
        ("the difference between Amgen's and IBM's net margins", "net_margin"),
        ("Compare the current ratios of IBM and 3M", "current_ratio"),
        ("Rank them by effective tax rates", "effective_tax_rate"),
    ]:
        assert [m.id for _, m in find_measures(q)] == [mid], q


def test_a_place_is_no_companys_short_name():
    """ "Texas" was Texas Instruments' short name (its first word), though Texas Roadhouse, Texas Capital Bancshares
    and Texas Pacific Land begin with it too."""
    found = index().find("What was Texas's revenue in Q2 2009?")
    assert not found.found
    assert [h.name for h in index().find("What was Texas Instruments' revenue?").found] == ["TEXAS INSTRUMENTS INC"]


@pytest.mark.parametrize(
    "question",
    [
        "What was Amgen's revenue in the third quarter?",
        "What was Amgen's revenue in Q3?",
        "Amgen revenue, the September quarter",
        "What was Amgen's revenue in the first half?",
        "What was Amgen's cash at the end of December?",
        "What was Amgen's revenue for the nine months?",
        "What was Amgen's revenue in fiscal Q3?",
    ],
)
def test_a_period_without_its_year_is_refused_never_read_as_the_latest(question):
    """Each was answered with Amgen's latest quarter (the June 2009 quarter's revenue for "the first half")."""
    with pytest.raises(ValueError, match=r"unread period: .* names no year"):
        find_periods(question)


def test_a_period_with_its_year_and_the_latest_and_ttm_words_are_still_read():
    assert [p.ddate for p in find_periods("Amgen's revenue in the third quarter of 2009")] == ["20090930"]
    assert find_periods("What is Amgen's revenue for the last quarter?") == []  # the latest
    assert find_periods("Amgen's revenue over the trailing twelve months")[0].trailing


@pytest.mark.parametrize(
    ("question", "ddate", "qtrs"),
    [
        ("Amgen's revenue in the 26 weeks ended June 27, 2009", "20090630", 2),  # was read as the quarter
        ("revenue in the 13 weeks ended June 27, 2009", "20090630", 1),
        ("revenue for the 39 weeks ended October 3, 2009", "20090930", 3),
        ("net sales, the 52 weeks ended January 2, 2010", "20091231", 4),
        ("SuperValu's sales in the 16 weeks ended June 20, 2009", "20090630", 1),  # FSDS rounds 1.2 quarters to 1
    ],
)
def test_a_span_in_weeks_is_its_quarters_as_fsds_rounds_them(question, ddate, qtrs):
    assert [(p.ddate, p.qtrs) for p in find_periods(question)] == [(ddate, qtrs)]


@pytest.mark.parametrize(
    ("question", "ddate", "qtrs"),
    [
        ("revenue for the six-month period ended June 30, 2009", "20090630", 2),  # each was read as the quarter
        ("revenue for the 6-month period ended June 30, 2009", "20090630", 2),
        ("revenue for the six month period ended June 30, 2009", "20090630", 2),
        ("revenue in the two quarters ended June 30, 2009", "20090630", 2),
        ("revenue for the nine-month period ended September 30, 2009", "20090930", 3),
        ("revenue for the three-month period ended June 30, 2009", "20090630", 1),
        ("net margin for the half year ended June 30 2009", "20090630", 2),  # was read as a year ("year ended")
        ("net margin for the half-year ended June 30, 2009", "20090630", 2),
    ],
)
def test_a_span_counted_in_months_or_quarters_is_read_as_filings_state_it(question, ddate, qtrs):
    assert [(p.ddate, p.qtrs) for p in find_periods(question)] == [(ddate, qtrs)]


def test_a_twelve_month_period_is_trailing_and_a_span_no_filing_reports_is_refused():
    (ttm,) = find_periods("revenue for the twelve-month period ended June 30, 2009")
    assert (ttm.ddate, ttm.qtrs, ttm.trailing) == ("20090630", 4, True)
    for q in ("revenue for the 18 months ended June 30, 2009", "revenue in the two months ended May 31, 2009"):
        with pytest.raises(ValueError, match="unread period"):
            find_periods(q)


@pytest.mark.parametrize(
    ("question", "ddate", "fiscal"),
    [
        ("revenue during the second quarter of calendar 2009", "20090630", None),  # was calendar 2009, a year
        ("revenue in the second calendar quarter of 2009", "20090630", None),  # was fiscal 2009, a year
        ("revenue in Q2 of calendar 2009", "20090630", None),
        ("revenue for fiscal 2010's first quarter", "20100331", (2010, "Q1")),  # was fiscal 2010, a year
    ],
)
def test_a_quarter_said_with_calendar_or_a_possessive_year_is_that_quarter_never_the_year(question, ddate, fiscal):
    assert [(p.ddate, p.qtrs, p.fiscal) for p in find_periods(question)] == [(ddate, 1, fiscal)]


def test_the_same_quarter_of_a_named_year_is_refused_never_read_as_the_year():
    """ "Amgen's revenue in the same quarter of 2008" was read as fiscal 2008, the whole year."""
    with pytest.raises(ValueError, match="unread period"):
        find_periods("What was Amgen's revenue in the same quarter of 2008?")


@pytest.mark.parametrize(
    ("question", "ddate", "qtrs"),
    [
        ("Domo's revenue in the fourth quarter of the year ended January 31, 2025", "20250131", 1),
        ("revenue in Q4 of the fiscal year ended January 31, 2025", "20250131", 1),
        ("revenue in Q1 of fiscal year ended March 31, 2010", "20090630", 1),
        ("revenue in the third quarter of the year ending 2009-12-31", "20090930", 1),
        ("revenue in the first half of the year ended January 31, 2025", "20240731", 2),
        ("revenue in the second half of its fiscal year ended January 31, 2025", "20250131", 2),
        ("revenue in the first nine months of the year ended December 31, 2009", "20090930", 3),
    ],
)
def test_a_part_of_a_year_named_by_its_end_is_that_part_never_the_year(question, ddate, qtrs):
    """ "The fourth quarter of the year ended January 31, 2025" was read as the year (the date alone), and Domo's
    fiscal-year revenue answered for its fourth quarter with the gate passed."""
    (ask,) = find_periods(question)
    assert (ask.ddate, ask.qtrs) == (ddate, qtrs)


@pytest.mark.parametrize(
    ("question", "ddate", "qtrs", "fiscal"),
    [
        ("revenue in the third quarter of its fiscal 2009", "20090930", 1, (2009, "Q3")),
        ("net income in the fourth quarter of its 2008 fiscal year", "20081231", 1, (2008, "Q4")),
        ("net income in the last quarter of fiscal year 2008", "20081231", 1, (2008, "Q4")),
        ("revenue in Q2 of fiscal year 2010", "20100630", 1, (2010, "Q2")),
        ("revenue in H1 fiscal 2010", "20100630", 2, (2010, "H1")),
        ("revenue in the second half of its fiscal 2009", "20091231", 2, (2009, "H2")),
        ("revenue in the first half of 2009", "20090630", 2, None),
    ],
)
def test_a_fiscal_quarter_or_half_is_that_part_never_the_year(question, ddate, qtrs, fiscal):
    """ "The fourth quarter of its 2008 fiscal year" was the fiscal year (span words "fiscal year" outside the
    quarter's own), "the third quarter of its fiscal 2009" the whole fiscal 2009 ("its" broke the quarter's phrase),
    and a fiscal half was read as the calendar half."""
    (ask,) = find_periods(question)
    assert (ask.ddate, ask.qtrs, ask.fiscal) == (ddate, qtrs, fiscal)


@pytest.mark.parametrize(
    "question", ["net income in Q4, fiscal 2008", "net income for fiscal 2008 (the fourth quarter)"]
)
def test_a_quarter_beside_a_year_read_whole_is_refused(question):
    with pytest.raises(ValueError, match="is part of a year"):
        find_periods(question)


def test_a_fuzzy_company_match_keeps_each_words_first_letter():
    """ "Public Service's net income" was Republic Services' (rapidfuzz ratio 88.9), with the gate passed; a typo
    keeps its words' first letters ("Republc Services")."""
    ix = CompanyIndex([(1, "REPUBLIC SERVICES, INC."), (2, "HONEYWELL INTERNATIONAL INC")])
    assert [h.cik for h in ix.find("What was Public Service's net income in Q2 2009?").found] == []
    assert [h.cik for h in ix.find("What was Republc Services' net income in Q2 2009?").found] == [1]
    assert [h.cik for h in ix.find("What was Honeywel International's revenue in Q2 2009?").found] == [2]


@pytest.mark.parametrize(
    ("question", "ddate", "qtrs"),
    [
        ("revenue in the 1st half of 2009", "20090630", 2),  # was refused beside the year read whole (was the year)
        ("revenue in the 2nd half of 2009", "20091231", 2),
        ("cash on 30-Jun-2009", "20090630", None),
    ],
)
def test_more_period_forms_users_write(question, ddate, qtrs):
    (ask,) = find_periods(question)
    assert (ask.ddate, ask.qtrs) == (ddate, qtrs)


@pytest.mark.parametrize(
    "question", ["revenue during the second three months of 2009", "revenue in the last six months of 2009"]
)
def test_a_later_span_of_a_year_is_never_its_first_span_or_the_year(question):
    """ "The second three months of 2009" was read as the first three ("three months of 2009"), then as the year."""
    with pytest.raises(ValueError, match="unread period"):
        find_periods(question)


def test_a_fuzzy_name_after_an_operation_word_leaves_the_word_to_the_operation():
    """ "Sort ExxonMobil, Murphy Oil and Chevron by current ratio, highest first" named "Sort ExxonMobil" (the
    capitalised run), so "Sort" was blanked with the name: a comparison, answered with one company."""
    ix = CompanyIndex([(1, "EXXON MOBIL CORP"), (2, "MURPHY OIL CORP /DE"), (3, "CHEVRON CORP")])
    got = ix.find("Sort ExxonMobil, Murphy Oil and Chevron by current ratio, highest first, as of June 30, 2009.")
    assert [(h.cik, h.text) for h in got.found][:1] == [(1, "ExxonMobil")]


def test_a_fiscal_year_end_is_the_companys_not_december():
    """ "General Mills' cash at fiscal year-end 2009" was read as December 31, 2009 (its fiscal year ends in May)."""
    (ask,) = find_periods("General Mills' cash at fiscal year-end 2009")
    assert ask.fiscal == (2009, "FY")
    (ask,) = find_periods("Amgen's cash at year-end 2008")
    assert (ask.ddate, ask.fiscal) == ("20081231", None)


@pytest.mark.parametrize(
    ("question", "ddate", "qtrs"),
    [
        ("Chevron's revenue from January through June 2009", "20090630", 2),  # was the June quarter
        ("Amgen's revenue for January-June 2009", "20090630", 2),
        ("revenue Jan-Jun 2009", "20090630", 2),
        ("revenue for the period April 1 to June 30, 2009", "20090630", 1),
        ("revenue July 2008 to June 2009", "20090630", 4),
    ],
)
def test_a_span_said_by_its_first_and_last_months(question, ddate, qtrs):
    (ask,) = find_periods(question)
    assert (ask.ddate, ask.qtrs) == (ddate, qtrs)


def test_two_period_ends_are_not_a_span_and_an_odd_span_is_refused():
    ends = find_periods("the change in cash from December 31, 2008 to June 30, 2009")
    assert [(p.ddate, p.qtrs) for p in ends] == [("20081231", None), ("20090630", None)]
    with pytest.raises(ValueError, match="spans 5 months"):
        find_periods("revenue from January to May 2009")


@pytest.mark.parametrize(
    ("question", "month"),
    [
        ("What was Amgen's revenue in June 2009?", True),
        ("What was Amgen's revenue for the month of June 2009?", True),
        ("What was Amgen's cash in June 2009?", True),  # a balance: its end (the caller reads it so)
        ("What was Amgen's revenue in the June 2009 quarter?", False),
        ("What was Amgen's revenue in the quarter ending June 2009?", False),
        ("Domo R&D as a % of revenue, FY ended Jan 2025", False),
        ("What was Amgen's cash as of June 2009?", False),
        ("What was Amgen's LTM revenue as of June 2009?", False),
        ("What was Amgen's revenue for the six months to June 2009?", False),
        ("What was Amgen's revenue YTD June 2009?", False),
    ],
)
def test_a_month_named_alone_is_marked_so_a_flow_over_it_is_refused(question, month):
    """ "Amgen's revenue in June 2009" was answered with the quarter's revenue: a month alone is a month, and no
    filing reports a flow over one; a month that ends a named period ("the year ended Jan 2025") is that period's end."""
    [ask] = find_periods(question)
    assert ask.month is month and ask.ddate is not None and ask.ddate.endswith(("0630", "0131")), question
