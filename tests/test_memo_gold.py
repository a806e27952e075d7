"""The independent memo evaluation (issue 19 part 3): its gold, and the instrument that scores memos against it.

The gold (``tests/gold/fsds_memo_gold.py``) is checked against values read by hand from the shipped quarter's
num.txt and pre.txt (file line numbers cited, counting the header as line 1); the instrument
(:mod:`finkg.eval.memo_accuracy`) must find a memo that states the gold exact, and must catch a wrong number, a
too-coarse number, a miscopied one, a missing one and an extra one. Nothing here asserts how well finkg's
memos do (that is the bench's figure, ``bench/memo_eval.py``); the last tests run finkg's real memo on the
real graph and check the instrument's invariants on it.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from gold.fsds_memo_gold import gold_items, load_quarter

from finkg.eval import memo_accuracy as acc
from finkg.pipelines import sec as pipelines
from finkg.pipelines.memos import thresholds
from generation.memo import render
from generation.memo.claims import Claim
from generation.memo.systems import MemoContext, generate_memo
from generation.verify.numbers import find_numbers
from retrieval.facts.fact_map import list_filings, read_fact_maps

QUARTER = Path(__file__).resolve().parents[1] / "data" / "sec-fsds" / "2009q3.zip"
WALMART = "0001193125-09-189177"  # 10-Q, period 2009-07-31; no Liabilities tag; a redeemable NCI
SEMPRA = "0000086521-09-000047"  # every fact carries a co-registrant (the parent: ParentCompany)
EXXON = "0001193125-09-165196"  # none of the four standard revenue tags
QWEST = "0001047469-09-006994"  # 10-Q with prevrpt=1, amended by the 10-Q/A below in the same quarter
QWEST_AMENDMENT = "0001047469-09-007075"
EL_PASO = "0000950123-09-032414"  # convertible preferred stock inside its stockholders' equity
SPECTRA = "0001193125-09-168965"  # "Preferred Stock of Subsidiaries" between liabilities and equity
HAND = [WALMART, SEMPRA, EXXON, QWEST, QWEST_AMENDMENT, EL_PASO, SPECTRA]


@pytest.fixture(scope="module")
def gold():
    frame = gold_items(load_quarter(QUARTER), HAND)
    return {(r["adsh"], r["item"]): r for r in frame.to_dict("records")}


def test_gold_revenue_and_cash_flow_spans_match_num_txt(gold):
    # num.txt line 11956: 0001193125-09-189177 Revenues us-gaap/2009 20090731 1 USD 100910000000.0000
    rev = gold[(WALMART, "Revenues")]
    assert (rev["value"], rev["tag"], rev["qtrs"], rev["ddate"]) == (100_910_000_000, "Revenues", 1, "20090731")
    # line 123349: NetCashProvidedByUsedInOperatingActivities 20090731 2 9895000000 (no 3-month figure)
    ocf = gold[(WALMART, "OperatingCashFlow")]
    assert (ocf["value"], ocf["qtrs"]) == (9_895_000_000, 2)
    # the margin pairs it with revenue of the same six months (line 43518: Revenues 20090731 2 195152000000)
    assert gold[(WALMART, "ocf_margin")]["value"] == pytest.approx(9_895_000_000 / 195_152_000_000)


def test_gold_liabilities_subtract_what_sits_between_liabilities_and_equity(gold):
    # line 114852 LiabilitiesAndStockholdersEquity 168942000000; line 40392 StockholdersEquityIncluding...
    # 68822000000; line 123991 OtherMinorityInterests 326000000, which pre.txt (line 46920: report 2, line 36,
    # BS, "Redeemable noncontrolling interest") places after the liabilities and before the equity lines
    liab = gold[(WALMART, "Liabilities")]
    assert liab["value"] == 168_942_000_000 - 68_822_000_000 - 326_000_000
    assert liab["tag"] == "derived" and liab["mezzanine"] == "OtherMinorityInterests"


def test_gold_liabilities_follow_the_balance_sheets_own_arithmetic(gold):
    # El Paso, num.txt at 20090630: LiabilitiesAndStockholdersEquity 21643000000, total equity (incl. NCI)
    # 3719000000, StockholdersEquity 2970000000; pre.txt report 2 puts ConvertiblePreferredStock...Value
    # (750000000, "Preferred stock, par value $0.01") at line 67, among the lines 67-75 that add up to line 76's
    # StockholdersEquity: it is equity, not temporary equity, though its tag says "Nonredeemable or Redeemable"
    el_paso = gold[(EL_PASO, "Liabilities")]
    assert (el_paso["value"], el_paso["mezzanine"]) == (21_643_000_000 - 3_719_000_000, "")
    # Spectra: LiabilitiesAndStockholdersEquity 22658000000, total equity 6991000000 (= StockholdersEquity
    # 6447000000 + MinorityInterest 544000000), PreferredSecuritiesOfSubsidiary 225000000 at line 36, after
    # the liabilities (line 34) and outside the lines 38-42 that add up to StockholdersEquity
    spectra = gold[(SPECTRA, "Liabilities")]
    assert spectra["value"] == 22_658_000_000 - 6_991_000_000 - 225_000_000
    assert spectra["mezzanine"] == "PreferredSecuritiesOfSubsidiary"


def test_gold_uses_the_parent_when_every_fact_has_a_co_registrant(gold):
    # line 55867: 0000086521-09-000047 Assets 20090630 0 USD LegalEntity=ParentCompany; ParentCompany 27922000000
    # (the subsidiaries' totals, e.g. line 74507 SanDiegoGasAndElectric 10469000000, are not the filer's)
    assets = gold[(SEMPRA, "Assets")]
    assert (assets["value"], assets["entity"]) == (27_922_000_000, "ParentCompany")


def test_gold_revenue_falls_back_to_the_income_statements_top_revenue_line(gold):
    # line 37942: 0001193125-09-165196 TotalRevenuesAndOtherIncome (a custom tag) 20090630 1 74457000000;
    # pre.txt labels it "Total revenues and other income", below "Sales and other operating revenue"
    rev = gold[(EXXON, "Revenues")]
    assert (rev["value"], rev["tag"]) == (74_457_000_000, "TotalRevenuesAndOtherIncome")
    assert "pre.txt" in rev["rule"]


def test_gold_takes_the_latest_amendment_of_the_period(gold):
    # sub.txt: Qwest's 10-Q (prevrpt 1, accepted 2009-07-29) and its 10-Q/A (accepted 2009-07-31), same period
    rev = gold[(QWEST, "Revenues")]
    assert rev["source_adsh"] == QWEST_AMENDMENT and rev["value"] == 3_090_000_000  # num.txt line 43479
    assert gold[(QWEST_AMENDMENT, "Revenues")]["source_adsh"] == QWEST_AMENDMENT


# --------------------------------------------------------------------------- the instrument


def _gold_items(gold, adsh: str) -> dict[str, acc.GoldItem]:
    return {
        item: acc.GoldItem(
            adsh=adsh,
            item=item,
            kind=r["kind"],
            value=r["value"],
            tag=r["tag"],
            qtrs=r["qtrs"],
            ddate=r["ddate"],
            mezzanine=r["mezzanine"],
            source_adsh=r["source_adsh"],
        )
        for (a, item), r in gold.items()
        if a == adsh
    }


def _claims_from(items: dict[str, acc.GoldItem]) -> list[Claim]:
    """Claims that state the gold itself, in the memo's order, citing the gold's own tags."""
    claims = []
    for name in acc.ITEMS:
        g = items.get(name)
        n = len(claims) + 1
        if g is None:
            claims.append(Claim(n, "not_applicable", name, None, note="not reported for the period"))
            continue
        label = f"{g.adsh}:0:{g.tag}:{g.ddate}:{g.qtrs}:USD"
        claims.append(Claim(n, g.kind, name, g.value, g.qtrs, g.ddate, [label], [label]))
    return claims


def test_a_memo_stating_the_gold_is_exact_and_complete(gold):
    items = _gold_items(gold, WALMART)
    claims = _claims_from(items)
    outcomes = acc.score_memo("s", WALMART, render.body(claims), claims, items)
    assert [o.item for o in outcomes] == list(acc.ITEMS)
    assert {o.outcome for o in outcomes} == {"exact"}
    s = acc.summarize(outcomes, {"s": [1.0]})["s"]
    assert s["exact_rate"]["mean"] == 1.0 and s["completeness"]["mean"] == 1.0 and s["misses"] == {}


def test_the_instrument_catches_wrong_coarse_miscopied_missing_and_extra_numbers(gold):
    items = _gold_items(gold, WALMART)
    claims = _claims_from(items)
    body = render.body(claims)
    assert "$100,910 million" in body

    wrong = _claims_from(items)
    wrong[0].value = 100_910_000_000 * 1.5  # a wrong fact chosen: the claim itself is off
    o = acc.score_memo("s", WALMART, render.body(wrong), wrong, items)[0]
    assert (o.outcome, o.stated) == ("wrong_fact", 151_365_000_000)

    coarse = body.replace("$100,910 million", "$101 billion")  # the right claim shown too coarsely
    o = acc.score_memo("s", WALMART, coarse, claims, items)[0]
    assert o.outcome == "rounding"
    o = acc.score_memo("llm", WALMART, body.replace("$100,910 million", "$100,190 million"), claims, items)[0]
    assert o.outcome == "miscopied"

    dropped = [c for c in claims if c.name != "Assets"]  # the memo says nothing about total assets
    outcomes = {o.item: o for o in acc.score_memo("s", WALMART, render.body(dropped), dropped, items)}
    assert outcomes["Assets"].outcome == "missing"

    fewer = {k: v for k, v in items.items() if k != "Cash"}  # the gold has no cash: the memo's is extra
    outcomes = {o.item: o for o in acc.score_memo("s", WALMART, body, claims, fewer)}
    assert outcomes["Cash"].outcome == "extra"
    summary = acc.summarize(list(outcomes.values()), {"s": [2.0, 4.0]})["s"]
    assert summary["exact_rate"]["n"] == 12 and summary["completeness"]["n"] == 11
    assert summary["exact_rate"]["mean"] == pytest.approx(11 / 12, abs=1e-4) and summary["ms_per_memo"]["mean"] == 3.0


def test_exactness_is_the_seeds_tolerance_on_the_number_as_written():
    # seed 003: exact when off by no more than max($1, 0.01% of the gold); 477,520,000 written as $477.5 million
    # is off by 20,000 <= 47,752; written as $478 million it is off by 480,000
    (m,) = [x for x in find_numbers("$477.5 million") if x.kind == "currency"]
    assert acc.is_exact(m, 477_520_000, "fact")
    (m,) = [x for x in find_numbers("$478 million") if x.kind == "currency"]
    assert not acc.is_exact(m, 477_520_000, "fact")
    (m,) = [x for x in find_numbers("5.1%") if x.kind == "percent"]
    assert acc.is_exact(m, 9_895 / 195_152, "ratio") and not acc.is_exact(m, 0.0517, "ratio")


# --------------------------------------------------------------------------- finkg's real memos


@pytest.fixture(scope="module")
def loaded(graph, settings):
    if len(list_filings(graph, source=QUARTER.name)) != 435:
        pipelines.ingest_sec(graph, settings, [QUARTER])
    return graph


def test_finkgs_real_memo_scored_and_an_injected_wrong_number_caught(loaded, settings, gold):
    fm = next(iter(read_fact_maps(loaded, [WALMART])))
    memo = generate_memo("structured", fm, MemoContext(thresholds(settings)))
    items = _gold_items(gold, WALMART)
    outcomes = acc.score_memo("structured+verifier", WALMART, memo.body, memo.claims, items)
    assert len(outcomes) == len(acc.ITEMS) and all(o.outcome in acc.OUTCOMES for o in outcomes)
    assert outcomes[0].outcome == "exact" and outcomes[0].stated_text == "$100,910 million"
    for o in outcomes:  # every miss names its cause
        assert o.outcome in ("exact", "none") or o.detail, o
    injected = memo.body.replace("$100,910 million", "$109,910 million", 1)
    assert injected != memo.body
    hit = acc.score_memo("structured+verifier", WALMART, injected, memo.claims, items)[0]
    assert hit.outcome == "miscopied" and math.isclose(hit.stated or 0, 109_910_000_000)
