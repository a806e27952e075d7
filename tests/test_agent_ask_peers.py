"""Issue 44: rankings among SIC peers and industries ("Which oil company had the highest ROE?", "Rank Chevron's peers
by return on equity", "How does Wyeth's R&D intensity stack up against other drugmakers?") on the shipped 2009q3 graph.

Gold is computed here with pandas from the quarter's sub.txt (``sic``) and num.txt, never through finkg code: the
groups from the SIC code and from Kenneth French's definition of the Fama-French 48 industries (``det_48_ind_port``:
"30 Oil Petroleum and Natural Gas" is SIC 1300, 1310-1339, 1370-1382, 1389, 2900-2912, 2990-2999; "13 Drugs" is
2830-2836), each operand the first tag of its documented synonym list that the company's filing reports for the
quarter ended 2009-06-30, a member without one left out, a ratio over a negative or zero denominator left out.
"""

from __future__ import annotations

import statistics
import zipfile
from functools import cache

import pandas as pd
import pytest
import test_agent_ask
from test_agent_ask import QUARTER, num

from generation.agent.ask import answer_sec_question, plan_question
from retrieval.facts.peers import find_peer_group, industry_named

loaded = test_agent_ask.loaded  # the fixture: the shipped quarter, loaded once

NET_INCOME = ("NetIncomeLoss", "ProfitLoss", "NetIncomeLossAvailableToCommonStockholdersBasic")
EQUITY = ("StockholdersEquity", "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest")
REVENUE = ("Revenues", "SalesRevenueNet", "SalesRevenueGoodsNet", "SalesRevenueServicesNet")
RND = ("ResearchAndDevelopmentExpense", "ResearchAndDevelopmentCosts",
       "ResearchAndDevelopmentExpenseExcludingAcquiredInProcessCost")  # fmt: skip
OIL = [(1300, 1300), (1310, 1339), (1370, 1382), (1389, 1389), (2900, 2912), (2990, 2999)]
DRUGS = [(2830, 2836)]


@cache
def sub() -> pd.DataFrame:
    with zipfile.ZipFile(QUARTER) as z, z.open("sub.txt") as f:
        df = pd.read_csv(f, sep="\t", dtype=str, keep_default_na=False, encoding="latin-1")
    df["sic"] = pd.to_numeric(df.sic, errors="coerce")
    return df


def operand(adsh: str, tags: tuple[str, ...], qtrs: int) -> float | None:
    rows = num()
    for tag in tags:
        hit = rows[(rows.adsh == adsh) & (rows.tag == tag) & (rows.ddate == "20090630") & (rows.qtrs == str(qtrs))]
        if len(hit):
            return float(hit.value.iloc[0])
    return None


def ratios(filings: pd.DataFrame, top: tuple[str, ...], bottom: tuple[str, ...], bottom_qtrs: int) -> dict[str, float]:
    """EDGAR name -> top (the quarter's flow) / bottom * 100, for the filings reporting both, bottom > 0."""
    out = {}
    for r in filings.itertuples():
        a, b = operand(r.adsh, top, 1), operand(r.adsh, bottom, bottom_qtrs)
        if a is not None and b is not None and b > 0:
            out[r.name] = a / b * 100
    return out


def in_ranges(sic: float, ranges: list[tuple[int, int]]) -> bool:
    return any(a <= sic <= b for a, b in ranges)


def test_a_companys_sic_peers_are_ranked_by_the_measure_asked(loaded):
    chevron = sub()[sub().name == "CHEVRON CORP"].iloc[0]
    peers = sub()[sub().sic == chevron.sic]
    want = ratios(peers, NET_INCOME, EQUITY, 0)
    assert len(want) >= 3  # a real group: Exxon, ConocoPhillips, Marathon ...
    got = answer_sec_question(loaded, "Rank Chevron's peers by return on equity for the June 2009 quarter.")
    assert got.status == "answered", got.reasons
    assert got.pick == sorted(want, key=lambda n: -want[n])
    for item, name in zip(got.answer.split("; "), got.pick, strict=True):
        assert item.startswith(name) and f"({want[name]:.2f}".rstrip("0").rstrip(".") in item
    assert any(f"SIC {int(chevron.sic)} peers of CHEVRON CORP" in n for n in got.notes)
    assert got.verdict is not None and got.verdict.passed


def test_which_company_of_an_industry_had_the_highest_ratio_leaves_out_negative_equity(loaded):
    oil = sub()[sub().sic.map(lambda s: in_ranges(s, OIL))]
    want = ratios(oil, NET_INCOME, EQUITY, 0)
    top = max(want, key=lambda n: want[n])
    got = answer_sec_question(loaded, "Which oil company had the highest ROE in Q2 2009?")
    assert got.status == "answered", got.reasons
    assert got.pick == [top] and got.value == pytest.approx(want[top], rel=1e-9)
    negative = [r.name for r in oil.itertuples() if (operand(r.adsh, EQUITY, 0) or 1) <= 0]
    assert negative, "the quarter has an oil company with negative equity (SandRidge Energy)"
    note = next(n for n in got.notes if "Petroleum and Natural Gas" in n)
    assert all(name in note for name in negative)  # left out, named, never ranked first on a loss over a deficit
    # every member measured is one the gold measures, but for co-registrant filings (NOBLE CORP), which the engine
    # answers with the parent's facts as memos do (test_agent_ask_users' co-registrant test)
    coreg = set(oil[oil.nciks != "1"].name)
    measured = {n for _, n in got.plan.companies}
    assert measured - coreg == set(want) - coreg and f" of {len(oil)} companies" in note


def test_a_named_company_stands_among_an_industry_with_the_groups_median(loaded):
    drugs = sub()[sub().sic.map(lambda s: in_ranges(s, DRUGS))]
    want = ratios(drugs, RND, REVENUE, 1)
    got = answer_sec_question(loaded, "How does Wyeth's R&D intensity stack up against other drugmakers in Q2 2009?")
    assert got.status == "answered", got.reasons
    assert got.plan is not None and got.plan.kind == "standing"
    assert got.value == pytest.approx(want["WYETH"], rel=1e-9)
    median = statistics.median(want.values())
    assert f"group median ({median:.2f}".rstrip("0").rstrip(".") in got.answer
    place = sorted(want, key=lambda n: -want[n]).index("WYETH") + 1
    assert f"WYETH ranks {place} of {len(want)}" in " ".join(got.notes)


def test_a_peer_question_whose_company_lacks_the_measure_is_refused_naming_it(loaded):
    got = answer_sec_question(loaded, "How does Amgen's gross margin compare with its peers in Q2 2009?")
    assert got.status == "not in graph" and got.answer is None
    assert "AMGEN INC reports no gross margin" in got.reasons[0]


def test_industry_words_name_a_group_only_as_a_group():
    assert industry_named("Which oil company had the highest ROE?") == ("Oil", "oil company")
    assert industry_named("Rank the REITs by debt to equity") == (6798, "REITs")
    assert industry_named("Which bank had the lowest net margin?") == ("Banks", "bank")
    assert industry_named("What was Exxon's oil revenue?") is None  # "oil" names a product here
    assert industry_named("How much did Abbott spend on drug research?") is None
    names = {1: "WELLS FARGO & CO", 2: "BANK OF AMERICA CORP"}
    sic = {1: 6021, 2: 6021}
    # a named company's figure that mentions an industry is not a group question
    assert find_peer_group("What were Wells Fargo's loans to banks?", [(1, names[1])], sic, names) is None
    # "its peers" without one named company names no group
    assert find_peer_group("Rank the peers by ROE", [], sic, names) is None
    group = find_peer_group("How does Wells Fargo compare with its peers?", [(1, names[1])], sic, names)
    assert group is not None and group.anchor == 1 and group.ciks == (1, 2)


def test_a_plain_question_about_one_bank_is_not_a_peer_question(loaded):
    plan = plan_question(loaded, "What was Wells Fargo's net income in Q2 2009?")
    assert plan.peers is None and plan.kind == "value"


def test_a_member_that_states_the_flow_over_another_span_only_is_left_out(loaded):
    # Open Text's 10-K states net income for the year ended June 30, 2009 only; the others' quarter is asked
    open_text = sub()[sub().name == "OPEN TEXT CORP"].iloc[0]
    assert open_text.form == "10-K" and operand(open_text.adsh, NET_INCOME, 1) is None
    assert operand(open_text.adsh, NET_INCOME, 4) is not None
    got = answer_sec_question(
        loaded, "Rank Computer Sciences' peers by return on equity in the quarter ended July 3, 2009."
    )
    assert got.status == "answered", got.reasons
    assert got.pick is not None and "OPEN TEXT CORP" not in got.pick and "COMPUTER SCIENCES CORP" in got.pick
    assert "OPEN TEXT CORP (reports return on equity over 12 months only)" in " ".join(got.notes)


def test_an_industry_word_inside_a_companys_name_is_the_name():
    names = {1: "SOUTHWEST AIRLINES CO", 2: "DELTA AIR LINES INC", 3: "UNION PACIFIC CORP", 4: "HOST HOTELS & RESORTS"}
    sic = {1: 4512, 2: 4512, 3: 4011, 4: 6798}
    q = "Rank Southwest Airlines' peers by ROE in the quarter ended June 30, 2009."
    assert industry_named(q) == (4512, "Airlines")  # the word alone is an industry
    group = find_peer_group(q, [(1, names[1])], sic, names, ["Southwest Airlines"])
    # its SIC code holds two companies, fewer than three: widened to its Fama-French industry, and said so
    assert group is not None and group.anchor == 1 and group.ciks == (1, 2, 3) and group.widened
    assert "Transportation" in group.description and "SIC 4512 holds fewer than 3" in group.description
    q = "How does Host Hotels & Resorts' net margin compare with its peers?"
    group = find_peer_group(q, [(4, names[4])], sic, names, ["Host Hotels & Resorts"])
    assert group is not None and group.anchor == 4  # its SIC's peers, not the hotel industry it is not in


def test_an_industry_read_as_a_capitalised_run_names_no_company(loaded):
    plan = plan_question(loaded, "Rank REITs by liabilities to assets ratio at June 30, 2009, highest first.")
    assert plan.kind == "rank" and plan.peers is not None and plan.unresolved == []
    reits = set(sub()[sub().sic == 6798].cik.astype(int))
    assert {c for c, _ in plan.companies} == reits


def test_the_industry_average_is_the_mean_of_the_companys_sic_peers(loaded):
    wyeth = sub()[sub().name == "WYETH"].iloc[0]
    want = ratios(sub()[sub().sic == wyeth.sic], RND, REVENUE, 1)
    got = answer_sec_question(loaded, "How does Wyeth's R&D intensity compare with the industry average in Q2 2009?")
    assert got.status == "answered" and got.plan is not None and got.plan.kind == "standing", got.reasons
    mean = sum(want.values()) / len(want)
    assert got.value == pytest.approx(want["WYETH"], rel=1e-9)
    assert f"group mean ({mean:.2f}".rstrip("0").rstrip(".") in got.answer


def test_an_industrys_average_and_its_top_n(loaded):
    drugs = sub()[sub().sic.map(lambda s: in_ranges(s, DRUGS))]
    assert set(drugs.nciks) == {"1"}  # no co-registrant filing: the whole-entity gold is the engine's reading
    want = ratios(drugs, NET_INCOME, REVENUE, 1)
    got = answer_sec_question(loaded, "What was the average net margin of drugmakers in Q2 2009?")
    assert got.status == "answered" and got.plan is not None and got.plan.kind == "group average", got.reasons
    assert got.value == pytest.approx(sum(want.values()) / len(want), rel=1e-9)
    got = answer_sec_question(loaded, "Rank the top 3 drugmakers by net margin in Q2 2009")
    assert got.status == "answered" and got.pick == sorted(want, key=lambda n: -want[n])[:3]
    assert f"the first 3 of {len(want)} shown" in got.notes
