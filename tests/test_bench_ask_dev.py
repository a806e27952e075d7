"""bench/ask_dev_exhaustive.py's questions (no Neo4j): one plain question per (development filing, measure) pair, or
``--phrasings N`` questions in the question sets' words, drawn reproducibly; never a test-half company, and a
question naming no period only where the company's latest period is the one asked."""

from __future__ import annotations

import zipfile
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from conftest import bench_script

ROOT = Path(__file__).resolve().parents[1]

B = bench_script("ask_dev_exhaustive")
MQ = B.generator()


def test_phrasings_draw_n_questions_per_pair_in_the_sets_words_on_the_development_half_only():
    plain = B.items(MQ, ["ratio"])
    drawn = B.items(MQ, ["ratio"], phrasings=2, seed=7)
    assert len(drawn) == 2 * len(plain) and len({r["id"] for r in drawn}) == len(drawn)
    assert {MQ.split_of(r["cik"]) for r in drawn} == {"dev"}
    assert B.items(MQ, ["ratio"], phrasings=2, seed=7) == drawn  # the same seed, the same questions
    assert B.items(MQ, ["ratio"], phrasings=2, seed=8) != drawn
    # the pair's gold is the plain question's, whatever the words
    gold = {r["id"]: r["gold"] for r in plain}
    assert all(r["gold"] == gold[r["id"].rsplit(":", 1)[0]] for r in drawn)
    styles = Counter(r["style"] for r in drawn)
    assert set(styles) == {"quarter", "ytd", "instant", "latest"}
    later = MQ.later_ciks(MQ.read(MQ.DAILY, "sub.txt"))
    for r in drawn:
        if r["style"] == "latest":  # no period named: only a company whose latest period is 2009q3's, first ask
            assert r["cik"] not in later and r["id"].endswith(":0")
            assert not any(w in r["question"] for w in ("2009", "quarter", "June", "months"))
    # the words vary: more distinct question shapes than the one plain template
    assert len({r["question"].split()[0] for r in drawn}) > 5


CUMMINS_10K = ROOT / "tests" / "data" / "sec-fsds" / "2010q1-cummins-10k.zip"  # data/NOTICE.md
"""Cummins Inc's 10-K for 2009 (accession number 0001047469-10-001435), cut from the 2010q1 quarter."""


def _fact(tag: str, ddate: str, qtrs: int) -> float:
    """The whole-entity USD fact of the sample's num.txt, with pandas (independent of the generator)."""
    with zipfile.ZipFile(CUMMINS_10K) as z, z.open("num.txt") as f:
        num = pd.read_csv(f, sep="\t", dtype=str, keep_default_na=False)
    row = num[(num.tag == tag) & (num.ddate == ddate) & (num.qtrs == str(qtrs)) & (num.segments == "")]
    assert len(row) == 1, (tag, ddate, qtrs)
    return float(row.value.iloc[0])


def test_annual_asks_a_10k_its_fiscal_year_flows_and_year_end_balances():
    rows = B.items(MQ, ["value", "ratio"], quarter=CUMMINS_10K, annual=True)
    by = {r["measure"]: r for r in rows}
    assert {r["id"].split(":")[0] for r in rows} == {"0001047469-10-001435"}
    assert by["revenue"]["question"] == "What was Cummins' revenue in the year ended December 31, 2009?"
    assert by["revenue"]["gold"] == _fact("SalesRevenueNet", "20091231", 4)  # the year (qtrs 4), not a quarter
    want = _fact("GrossProfit", "20091231", 4) / _fact("SalesRevenueNet", "20091231", 4) * 100
    assert by["gross_margin"]["gold"] == pytest.approx(want)
    assert by["current_ratio"]["question"] == "What was Cummins' current ratio as of December 31, 2009?"
    want = _fact("AssetsCurrent", "20091231", 0) / _fact("LiabilitiesCurrent", "20091231", 0)
    assert by["current_ratio"]["gold"] == pytest.approx(want)
    assert B.items(MQ, ["value", "ratio"], quarter=CUMMINS_10K) == []  # a 10-K is never asked as a quarter


def test_more_asks_the_catalog_measures_the_question_sets_never_ask():
    rows = B.items(MQ, ["value", "ratio"], quarter=CUMMINS_10K, annual=True, more=True)
    by = {r["measure"]: r for r in rows}
    assert set(by) <= set(MQ.MORE_MEASURES) and not set(by) & set(MQ.MEASURES)
    assert by["ebitda"]["question"] == "What was Cummins' EBITDA in the year ended December 31, 2009?"
    # EBITDA: operating income plus depreciation and amortization, both over the fiscal year
    want = _fact("OperatingIncomeLoss", "20091231", 4) + _fact("DepreciationAndAmortization", "20091231", 4)
    assert by["ebitda"]["gold"] == pytest.approx(want)
    # turnovers: the year's flow over the year-end balance (not averaged, as the catalog defines them)
    want = _fact("SalesRevenueNet", "20091231", 4) / _fact("Assets", "20091231", 0)
    assert by["asset_turnover"]["gold"] == pytest.approx(want)
    want = _fact("CostOfRevenue", "20091231", 4) / _fact("InventoryNet", "20091231", 0)
    assert by["inventory_turnover"]["gold"] == pytest.approx(want)
    assert "dso" not in by  # Cummins tags its receivables otherwise: no gold, no question


def test_more_days_sales_outstanding_counts_a_quarter_as_365_4_days():
    rows = [r for r in B.items(MQ, ["ratio"], more=True) if r["measure"] == "dso"]
    assert rows and {MQ.split_of(r["cik"]) for r in rows} == {"dev"}
    r = rows[0]
    adsh = r["id"].split(":")[0]
    with zipfile.ZipFile(MQ.QUARTER) as z:
        sub = pd.read_csv(z.open("sub.txt"), sep="\t", dtype=str, keep_default_na=False, encoding="latin-1")
        num = pd.read_csv(z.open("num.txt"), sep="\t", dtype=str, keep_default_na=False, encoding="latin-1")
    period = sub[sub.adsh == adsh].period.iloc[0]
    rows_of = num[(num.adsh == adsh) & (num.ddate == period) & (num.coreg == "") & (num.uom == "USD")]

    def value(tags: list[str], qtrs: str) -> float:
        hit = rows_of[rows_of.tag.isin(tags) & (rows_of.qtrs == qtrs)]
        assert len(set(hit.value)) == 1, (tags, qtrs)
        return float(hit.value.iloc[0])

    receivables = value(["AccountsReceivableNetCurrent"], "0")
    revenue = value(["Revenues", "SalesRevenueNet", "SalesRevenueGoodsNet", "SalesRevenueServicesNet"], "1")
    assert r["gold"] == pytest.approx(receivables / revenue * 365 / 4)  # days: a quarter is a fourth of 365
    assert "days sales outstanding" in r["question"]


def test_ttm_asks_the_twelve_months_ended_a_10q_from_the_10k_before_it():
    samples = ROOT / "tests" / "data" / "sec-fsds"
    rows = B.ttm_items(MQ, samples / "2010q2-avon-10q.zip", samples / "2010q1-avon-10k.zip", seed=3)
    by = {r["measure"]: r for r in rows}
    assert set(by) <= set(MQ.TTM_MEASURES) and {"net_income", "operating_income"} <= set(by)
    assert "revenue" not in by  # Avon tags Revenues and SalesRevenueGoodsNet, two values: no unambiguous revenue
    assert all("March 31, 2010" in r["question"] for r in rows)

    def read(name: str, tag: str, ddate: str, qtrs: int) -> float:
        with zipfile.ZipFile(samples / name) as z, z.open("num.txt") as f:
            num = pd.read_csv(f, sep="\t", dtype=str, keep_default_na=False, encoding="latin-1")
        hit = num[(num.tag == tag) & (num.ddate == ddate) & (num.qtrs == str(qtrs)) & (num.coreg == "")]
        assert len(hit) == 1
        return float(hit.value.iloc[0])

    def ttm(tag: str) -> float:
        return (
            read("2010q1-avon-10k.zip", tag, "20091231", 4)
            + read("2010q2-avon-10q.zip", tag, "20100331", 1)
            - read("2010q2-avon-10q.zip", tag, "20090331", 1)
        )

    assert by["net_income"]["gold"] == pytest.approx(ttm("NetIncomeLoss"))
    assert by["operating_income"]["gold"] == pytest.approx(ttm("OperatingIncomeLoss"))
    # without the 10-K before it there is no year to build on: no question
    assert B.ttm_items(MQ, samples / "2010q2-avon-10q.zip", CUMMINS_10K) == []


def test_span_change_asks_how_much_a_balance_changed_over_the_year_to_date():
    rows = B.span_change_items(MQ, seed=3)
    assert rows and {MQ.split_of(r["cik"]) for r in rows} == {"dev"}
    assert {r["measure"] for r in rows} <= set(MQ.SPAN_CHANGE_MEASURES)
    assert {r["kind"] for r in rows} == {"span change", "span change (%)"}
    assert rows == B.span_change_items(MQ, seed=3)  # reproducible
    wyeth = {r["measure"]: r for r in rows if r["id"].startswith("0001193125-09-167069:")}  # WYETH, 10-Q 2009-06-30
    with zipfile.ZipFile(MQ.QUARTER) as z:
        num = pd.read_csv(z.open("num.txt"), sep="\t", dtype=str, keep_default_na=False, encoding="latin-1")
    cash = num[(num.adsh == "0001193125-09-167069") & (num.tag == "CashAndCashEquivalentsAtCarryingValue")]
    end, start = (float(cash[(cash.ddate == d) & (cash.qtrs == "0")].value.iloc[0]) for d in ("20090630", "20081231"))
    r = wyeth["cash"]
    want = (end - start) / abs(start) * 100 if r["kind"] == "span change (%)" else end - start
    assert r["gold"] == pytest.approx(want)
    assert "six months ended June 30, 2009" in r["question"]


def test_peer_questions_name_development_half_companies_only_with_gold_that_can_fail():
    peers = bench_script("ask_dev_peers")
    mq = MQ
    gold = peers.Gold(mq)
    rows = peers.items(mq, gold, seed=7)
    assert len(rows) > 100 and {MQ.split_of(r["cik"]) for r in rows} == {"dev"}
    assert {r["kind"] for r in rows} == {"standing", "rank", "top"}
    assert peers.items(mq, gold, seed=7) == rows  # reproducible
    # Chevron's peers: its SIC code's companies, itself included; a ratio over negative equity is left out
    chevron = next(c for c, r in gold.by_cik.items() if r.name == "CHEVRON CORP")
    group = gold.group(chevron)
    assert chevron in group and {gold.by_cik[c].sicn for c in group} == {gold.by_cik[chevron].sicn}
    roe = gold.values(group, "roe")
    assert roe is not None and all(v == v for v in roe.values())
    row = next(r for r in rows if r["kind"] == "rank")
    wrong_order = {"status": "answered", "pick": list(reversed(row["order"])), "values": row["values"]}
    assert peers.judge(row, wrong_order) == "wrong_gate_passed"
    assert peers.judge(row, {**wrong_order, "pick": row["order"]}) == "correct"
    assert peers.judge(row, {"status": "not in graph"}) == "abstained"
    # industries said as groups name no company; every member of the industry is in the gold's group
    industries = peers.industry_items(gold, seed=7)
    assert industries and all(r["cik"] is None and r["kind"].startswith("industry ") for r in industries)
    assert peers.industry_items(gold, seed=7) == industries


def test_sum_and_threshold_questions_name_development_half_companies_with_gold_that_can_fail():
    ops = bench_script("ask_dev_operations")
    rows = ops.items(MQ, seed=11)
    assert {r["kind"] for r in rows} == {"sum", "threshold"} and {MQ.split_of(r["cik"]) for r in rows} == {"dev"}
    assert ops.items(MQ, seed=11) == rows
    t = next(r for r in rows if r["kind"] == "threshold")
    right = {"status": "answered", "value": t["gold"], "answer": ("yes" if t["meets"] else "no") + ": ..."}
    assert ops.judge(t, right) == "correct"
    assert ops.judge(t, {**right, "answer": ("no" if t["meets"] else "yes") + ": ..."}) == "wrong_gate_passed"
    s = next(r for r in rows if r["kind"] == "sum")
    assert ops.judge(s, {"status": "answered", "value": s["gold"] * 1.02, "answer": "USD 1"}) == "wrong_gate_passed"
    assert ops.judge(s, {"status": "not in graph"}) == "abstained"
    assert (
        ops.written(1.2e9, "USD") == "$1.2 billion" and ops.written(35.0, "%") == "35%" and ops.round2(0.5678) == 0.57
    )


def test_absent_company_questions_name_development_half_companies_the_graph_does_not_hold():
    """bench/ask_dev_absent.py: every company asked about is of the development half and not held (here: the
    shipped quarter's companies), a successor registrant of a held company's name is left out, the draw is
    reproducible, and any answer is wrong."""
    absent = bench_script("ask_dev_absent")
    with zipfile.ZipFile(ROOT / "data" / "sec-fsds" / "2009q3.zip") as z, z.open("sub.txt") as f:
        sub = pd.read_csv(f, sep="\t", dtype=str, keep_default_na=False, encoding="latin-1")
    held = {int(c): n for c, n in zip(sub.cik, sub.name, strict=True)}
    rows = absent.items(MQ, held, seed=5)
    assert len(rows) > 1000 and absent.items(MQ, held, seed=5) == rows
    assert {MQ.split_of(r["cik"]) for r in rows} == {"dev"} and not {r["cik"] for r in rows} & set(held)
    written = {absent.written(MQ.clean_name(n)) for n in held.values()}
    assert not {absent.written(r["name"]) for r in rows} & written
    assert absent.written("Ingersoll-Rand") == absent.written("INGERSOLL RAND") == "ingersoll rand"
    assert {r["by"] for r in rows} == {"name", "ticker"}
    by_ticker = next(r for r in rows if r["by"] == "ticker")  # a ticker the held filings carry is not asked
    again = {r["id"]: r for r in absent.items(MQ, held, 5, {by_ticker["ticker"].upper()})}
    assert again[by_ticker["id"]]["by"] == "name" and len(again) == len(rows)
    r = rows[0]
    assert absent.judge(r, {"status": "answered"}) == "wrong_gate_passed"
    assert {absent.judge(r, {"status": s}) for s in ("not in graph", "ask back", "not understood")} == {"correct"}
