"""A fact's history across filings (``finkg facts history``, issue 19) on Snowflake's and Tesla's real companyfacts files.

Gold values come from the file itself, read here with ``json`` alone (no finkg code): for each period the
unit entries of one tag, grouped by (end, months), the earliest and the latest filing's value. Derived
series are checked against identities of the data, not against the code: the four quarters of a fiscal year
sum to the year the 10-K reports (TTM at a fiscal year end = FY), and Q4 = FY - 9M from the file's entries.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import date
from itertools import pairwise
from pathlib import Path

import pytest
from test_cli import finkg

from finkg import api
from finkg.pipelines import sec
from kg.errors import ConfigError, RetrievalError

SNOW = Path(__file__).resolve().parents[1] / "data" / "sec-companyfacts" / "CIK0001640147-snowflake.json"
CIK = 1640147
TSLA = SNOW.with_name("CIK0001318605-tesla-2022.json")
TSLA_CIK = 1318605
REVENUE = "RevenueFromContractWithCustomerExcludingAssessedTax"
OCI = "ComprehensiveIncomeNetOfTax"  # restated: the quarter to 2022-10-31, -222,764,000 then -222,258,000


@pytest.fixture(scope="module")
def loaded(graph, settings):
    sec.ingest_companyfacts(graph, settings, [SNOW])  # idempotent: a second load changes nothing
    return graph


def _months(start: str | None, end: str) -> int:
    if start is None:
        return 0
    days = (date.fromisoformat(end) - date.fromisoformat(start)).days + 1
    return round(days / 30.44)


def _gold(tag: str, path: Path = SNOW) -> dict[tuple[str, int], list[dict]]:
    """(end, months) -> the file's unit entries in USD, earliest filing first."""
    rows = json.loads(path.read_text())["facts"]["us-gaap"][tag]["units"]["USD"]
    out: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for r in rows:
        out[(r["end"], _months(r.get("start"), r["end"]))].append(r)
    for entries in out.values():
        entries.sort(key=lambda r: (r["filed"], r["accn"]))
    return out


def test_each_period_shows_first_reported_and_latest_as_the_file_does(loaded):
    gold = _gold(REVENUE)
    got = api.fact_history(str(CIK), REVENUE, graph=loaded)
    assert got.name == "SNOWFLAKE INC."
    by_period = {(r["period end"], r["months"]): r for r in got.periods}
    assert set(by_period) == set(gold)
    for key, entries in gold.items():
        row = by_period[key]
        assert row["first reported"] == entries[0]["val"], key
        assert row["first filed"].endswith(entries[0]["accn"]), key
        assert row["latest"] == entries[-1]["val"], key
        assert row["latest filed"].endswith(entries[-1]["accn"]), key
        assert row["reports"] == len({e["accn"] for e in entries}), key
        assert row["restated"] == 0, key  # revenue was never restated


def test_a_restatement_is_listed_and_known_only_from_its_filing(loaded):
    gold = _gold(OCI)[("2022-10-31", 3)]
    assert [(e["val"], e["filed"]) for e in gold] == [(-222764000, "2022-12-02"), (-222258000, "2023-12-01")]
    for as_of, expected in (("2022-12-01", None), ("2023-06-01", -222764000.0), ("2023-12-01", -222258000.0)):
        got = api.fact_history("snowflake", OCI, as_of=as_of, graph=loaded)
        row = next(r for r in got.periods if (r["period end"], r["months"]) == ("2022-10-31", 3))
        assert (row["first reported"], row["latest"], row["restated"]) == (-222764000.0, -222258000.0, 1)
        assert row[f"known on {as_of}"] == expected, as_of


def test_tesla_restatements_first_reported_latest_and_ttm_as_its_file_has_them(graph, settings):
    """Tesla's net income (2009-2022): every period's first-reported and latest value and whether it was
    restated, as the file lists them; TTM at each calendar year end equals the year the latest 10-K reports."""
    sec.ingest_companyfacts(graph, settings, [TSLA])
    gold = _gold("NetIncomeLoss", TSLA)

    # restated: a later filing's value differs from the one before it by more than the documented rounding
    # allowance (0.05 % of the larger, at least 0.5): Tesla's 10-K of 2015-02-26 gives Q2 2014 as -61,902,000
    # against -61,900,000, which is rounding, not a restatement
    def differs(a: float, b: float) -> bool:
        return abs(a - b) > max(0.5, 0.0005 * max(abs(a), abs(b)))

    restated = {k for k, e in gold.items() if any(differs(a["val"], b["val"]) for a, b in pairwise(e))}
    assert len(restated) >= 5  # the file itself restates Tesla's net income (guards this test's power)
    got = api.fact_history(str(TSLA_CIK), "NetIncomeLoss", graph=graph)
    assert got.name == "Tesla, Inc."
    by_period = {(r["period end"], r["months"]): r for r in got.periods}
    # a graph `scripts/demo` loaded also holds Tesla's 2024 10-Q instance (data/sec-xbrl-instances), whose
    # periods (2023-2024) all end after this 2022 file's: only those may be extra
    last = max(end for end, _ in gold)
    assert set(gold) <= set(by_period)
    assert all(end > last for end, _ in set(by_period) - set(gold)), set(by_period) - set(gold)
    for key, entries in gold.items():
        row = by_period[key]
        assert (row["first reported"], row["latest"]) == (entries[0]["val"], entries[-1]["val"]), key
        assert (row["restated"] > 0) == (key in restated), key

    # TTM = FY is an identity of one vintage: years none of whose entries (3, 6, 9, 12 months) was restated
    def clean_year(end: str) -> bool:
        return not any(k in restated for k in gold if end[:4] == k[0][:4] and k[1] in (3, 6, 9, 12))

    years = {end: e[-1]["val"] for (end, m), e in gold.items() if m == 12 and clean_year(end)}
    ttm = {
        r["period end"]: r for r in api.fact_history(str(TSLA_CIK), "NetIncomeLoss", derived="ttm", graph=graph).derived
    }
    checked = [end for end in years if end in ttm]
    assert len(checked) >= 3
    for end in checked:
        # within the same allowance: a quarter restated by less than it (e.g. Q4 2017 by 600,000) is not a restatement
        assert not differs(ttm[end]["ttm"], years[end]), end


def test_q4_is_the_year_minus_nine_months(loaded):
    gold = _gold(REVENUE)
    fy, nine = gold[("2025-01-31", 12)][-1]["val"], gold[("2024-10-31", 9)][-1]["val"]
    got = api.fact_history(str(CIK), "Revenues", derived="quarterly", graph=loaded)
    q4 = next(r for r in got.derived if r["period end"] == "2025-01-31")
    assert q4["quarterly"] == fy - nine == 986_770_000
    assert q4["facts"] == 2 and "20250131:4" in q4["fact keys"][0] and "20241031:3" in q4["fact keys"][1]
    reported = {end: e[-1]["val"] for (end, m), e in gold.items() if m == 3}
    for r in got.derived:  # a quarter reported for three months is taken as reported
        if r["period end"] in reported:
            assert r["quarterly"] == reported[r["period end"]]


def test_ttm_at_each_fiscal_year_end_is_the_year_reported(loaded):
    gold = _gold(REVENUE)
    years = {end: e[-1]["val"] for (end, m), e in gold.items() if m == 12}
    got = {r["period end"]: r for r in api.fact_history(str(CIK), "Revenues", derived="ttm", graph=loaded).derived}
    checked = [end for end in years if end in got]
    assert len(checked) >= 4  # fiscal years 2022-2025 have four quarters each in the file
    for end in checked:
        assert got[end]["ttm"] == years[end], end
        assert got[end]["formula"].count("Q to") == 4


def test_yoy_growth_of_a_quarter(loaded):
    gold = _gold(REVENUE)
    cur, base = gold[("2025-04-30", 3)][-1]["val"], gold[("2024-04-30", 3)][-1]["val"]
    got = api.fact_history(str(CIK), "Revenues", derived="yoy", graph=loaded)
    row = next(r for r in got.derived if r["period end"] == "2025-04-30")
    assert row["yoy"] == pytest.approx(cur / base - 1.0)


def test_the_basis_chooses_first_reported_or_restated(loaded):
    def quarter(basis: str, as_of: str | None = None) -> float:
        got = api.fact_history(str(CIK), OCI, derived="quarterly", basis=basis, as_of=as_of, graph=loaded)
        return next(r["quarterly"] for r in got.derived if r["period end"] == "2022-10-31")

    assert quarter("first") == -222764000.0
    assert quarter("latest") == -222258000.0
    assert quarter("as-of", "2023-06-01") == -222764000.0


def test_bad_requests_name_what_is_wrong(loaded):
    with pytest.raises(RetrievalError, match="no company matches"):
        api.fact_history("no such company xyz", "Revenues", graph=loaded)
    with pytest.raises(RetrievalError, match="NoSuchTag"):
        api.fact_history(str(CIK), "NoSuchTag", graph=loaded)
    with pytest.raises(ConfigError, match="unknown derived"):
        api.fact_history(str(CIK), "Revenues", derived="monthly", graph=loaded)
    with pytest.raises(ConfigError, match="as-of"):
        api.fact_history(str(CIK), "Revenues", derived="ttm", basis="as-of", graph=loaded)


def test_cli_history_and_the_indicator_facts_command(loaded):
    out = finkg("facts", "history", "-c", str(CIK), "--concept", "Revenues", "--derived", "ttm", "--format", "json")
    assert out.returncode == 0, out.stderr
    start = out.stdout.index("[", out.stdout.index("]") + 1)  # the second JSON list: the derived series
    series = json.loads(out.stdout[start:])
    fy2025 = next(r for r in series if r["period end"] == "2025-01-31")
    assert fy2025["ttm"] == 3_626_396_000 and len(fy2025["fact keys"]) == fy2025["facts"]
    bad = finkg("facts", "history", "-c", "no such company xyz", "--concept", "Revenues")
    assert bad.returncode != 0 and "no company matches" in bad.stderr
    missing = finkg("facts")
    assert missing.returncode == 2 and "--as-of" in missing.stderr
