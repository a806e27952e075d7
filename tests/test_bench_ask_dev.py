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
