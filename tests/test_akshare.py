"""AKShare indicators (seed 004, section 2): the five shipped CSVs into the real Neo4j, format errors, the
offline live call, and the point-in-time financial facts with values read by hand from the CSVs."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pandas as pd
import pytest
from conftest import free_port
from test_cli import finkg

from finkg.pipelines.indicators import ingest_akshare_files
from generation.verify.numbers import find_numbers
from ingest.market.akshare import FUNCTIONS, AkshareFormatError, AkshareUnavailable, fetch_live, read_csv
from kg import cypher
from retrieval.facts.indicators import FACT_KINDS, indicator_facts

DATA = Path(__file__).resolve().parents[1] / "data"
FILES = {
    "bond_china_yield": DATA / "china-bond" / "chinabond_treasury_curve_2002_2016_akshare_wide.csv",
    "macro_china_money_supply": DATA / "china-macro" / "macro_china_money_supply_df.csv",
    "macro_china_cpi": DATA / "china-macro" / "macro_china_cpi_df.csv",
    "macro_china_ppi": DATA / "china-macro" / "macro_china_ppi_df.csv",
    "macro_china_shibor_all": DATA / "china-macro" / "macro_china_shibor_all_df.csv",
}
DELETE_SERIES = (
    "MATCH (n) WHERE (n:Observation OR n:Indicator) AND n.source_function IN $functions "
    "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS"
)
COUNT_BY_FILE = "MATCH (o:Observation) WHERE o.source_file = $file RETURN count(o) AS n"
COUNT_LINKED = (
    "MATCH (:Indicator)-[r:HAS_OBSERVATION]->(o:Observation) WHERE o.source_file = $file RETURN count(r) AS n"
)
OBSERVATION = "MATCH (i:Indicator)-[:HAS_OBSERVATION]->(o:Observation {id: $id}) RETURN i {.*} AS i, o {.*} AS o"
RUN = "MATCH (r:IngestRun {id: $id}) RETURN r {.*} AS r"


def _expected_observations(function: str, path: Path) -> int:
    """Cells that carry a value in the indicator columns, counted by pandas (independently of the reader)."""
    frame = pd.read_csv(path, encoding="utf-8-sig", dtype=str)
    columns = sorted({i.column for i in FUNCTIONS[function].indicators})
    if function == "bond_china_yield":
        frame = frame[frame["曲线名称"] == "中债国债收益率曲线"]
    return int(frame[columns].notna().sum().sum())


@pytest.fixture(scope="module")
def loaded(graph, settings):
    """The five shipped CSVs loaded into an empty series space (twice: the second summary is the rerun).

    The series are removed before, so the first load's counts are its own (on the suite's own server,
    tests/conftest.py: what is removed was loaded earlier in this run, never a user's graph), and left loaded
    after: the graph then holds what ``finkg ingest akshare data/china-macro/*.csv data/china-bond/*.csv`` gives
    (what the Browser's saved queries and the report tests read)."""
    functions = list(FUNCTIONS)
    graph.run_autocommit(DELETE_SERIES, {"functions": functions})
    paths = list(FILES.values())
    first = ingest_akshare_files(graph, settings, paths)
    again = ingest_akshare_files(graph, settings, paths)
    return first, again


# --------------------------------------------------------------------------- ingest


def test_all_five_files_load_with_the_counts_of_their_value_cells(graph, loaded):
    first, _ = loaded
    by_file = {row["file"]: row for row in first}
    assert [by_file[p.name]["function"] for p in FILES.values()] == list(FILES)  # chosen by name or columns
    expected = {f: _expected_observations(f, p) for f, p in FILES.items()}
    # read by hand: 3,745 curve days x 8 tenors; 213 months x 9 and x 12; 232 x 3; 2,045 days x 8 fixings
    assert expected == {
        "bond_china_yield": 29960,
        "macro_china_money_supply": 1917,
        "macro_china_cpi": 2556,
        "macro_china_ppi": 696,
        "macro_china_shibor_all": 16360,
    }
    for function, path in FILES.items():
        row = by_file[path.name]
        assert row["observations"] == expected[function]
        assert graph.read(COUNT_BY_FILE, {"file": path.name})[0]["n"] == expected[function]
        assert graph.read(COUNT_LINKED, {"file": path.name})[0]["n"] == expected[function]
        assert row["skipped cells"] == "none"
    assert {r["file"]: r["indicators"] for r in first} == {
        FILES["bond_china_yield"].name: 8,
        FILES["macro_china_money_supply"].name: 9,
        FILES["macro_china_cpi"].name: 12,
        FILES["macro_china_ppi"].name: 3,
        FILES["macro_china_shibor_all"].name: 8,
    }
    # nodes + relationships, all new on the first load
    assert sum(r["created"] for r in first) == 40 + 2 * sum(expected.values())


def test_rerun_creates_and_changes_nothing(loaded):
    _, again = loaded
    assert [(r["created"], r["updated"]) for r in again] == [(0, 0)] * 5


def test_an_observation_keeps_value_units_provenance_and_availability(graph, loaded):
    (rec,) = graph.read(OBSERVATION, {"id": "cn_m2_yoy:2015-05-31"})
    i, o = rec["i"], rec["o"]
    assert (i["code"], i["unit"], i["frequency"], i["name_zh"]) == (
        "cn_m2_yoy",
        "%",
        "monthly",
        "货币和准货币(M2)-同比增长",
    )
    assert o["value"] == 10.8 and o["date"].iso_format() == "2015-05-31"
    # 2015年05月份 is line 126 of the CSV; available 20 days after the month's end (a convention, flagged)
    assert (o["source_file"], o["source_line"], o["source_column"]) == (
        "macro_china_money_supply_df.csv",
        126,
        "货币和准货币(M2)-同比增长",
    )
    assert (o["available_at"], o["available_at_approx"]) == ("2015-06-20T12:00:00Z", True)
    (amount,) = graph.read(OBSERVATION, {"id": "cn_m2:2015-06-30"})
    assert amount["i"]["unit"] == "CNY 100 million" and amount["o"]["value"] == 1333375.36453853
    (y,) = graph.read(OBSERVATION, {"id": "cn_treasury_yield_10y:2015-06-30"})
    assert (
        y["o"]["value"] == 3.5976 and y["o"]["available_at"] == "2015-06-30T10:00:00Z" and y["o"]["source_line"] == 3368
    )


def test_each_load_is_recorded_as_a_done_run(graph, loaded):
    first, _ = loaded
    (rec,) = graph.read(RUN, {"id": first[1]["run"]})
    run = rec["r"]
    assert (run["kind"], run["function"], run["status"]) == ("akshare", "macro_china_money_supply", "done")
    assert run["source"] == str(FILES["macro_china_money_supply"].resolve())
    assert '"observations": 1917' in run["counts"]


def test_the_schema_keys_observations_by_id_and_indexes_their_date(graph):
    names = {c["name"] for c in graph.read(cypher.SHOW_CONSTRAINTS)}
    indexes = {i["name"] for i in graph.read(cypher.SHOW_INDEXES)}
    assert {"observation_id_unique", "indicator_code_unique"} <= names
    assert {"observation_date", "observation_available_at"} <= indexes


# --------------------------------------------------------------------------- errors users hit


def _copy(tmp_path: Path, function: str, name: str | None = None) -> Path:
    dst = tmp_path / (name or FILES[function].name)
    shutil.copyfile(FILES[function], dst)
    return dst


def test_a_wrong_header_names_the_file_and_the_missing_and_unexpected_columns(tmp_path):
    path = _copy(tmp_path, "macro_china_cpi")
    text = path.read_text(encoding="utf-8-sig").replace("全国-同比增长", "全国同比", 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AkshareFormatError) as info:
        read_csv(path)
    msg = str(info.value)
    assert str(path) in msg and "macro_china_cpi" in msg
    assert "missing 全国-同比增长" in msg and "unexpected '全国同比'" in msg


def test_an_unknown_layout_asks_for_the_function(tmp_path):
    path = tmp_path / "rates.csv"
    path.write_text("day,rate\n2015-01-05,3.1\n", encoding="utf-8")
    with pytest.raises(AkshareFormatError, match=r"rates\.csv: cannot tell which AKShare function.*--function"):
        read_csv(path)
    # named explicitly, the same file gets the column diagnosis
    with pytest.raises(AkshareFormatError, match=r"missing 日期, O/N-定价.*unexpected 'day', 'rate'"):
        read_csv(path, "macro_china_shibor_all")


def test_a_bad_cell_names_file_line_and_column(tmp_path):
    path = _copy(tmp_path, "macro_china_ppi")
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    assert lines[119].startswith("2015年06月份,95.1865,")  # line 120 of the file
    lines[119] = lines[119].replace("95.1865", "95.18x")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(AkshareFormatError) as info:
        read_csv(path)
    assert str(info.value) == f"{path}:120: column 当月: '95.18x' is not a number"


def test_a_bad_month_names_file_line_and_column(tmp_path):
    path = _copy(tmp_path, "macro_china_money_supply")
    text = path.read_text(encoding="utf-8-sig").replace("2015年05月份", "2015年13月份", 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AkshareFormatError, match=r":126: column 月份: '2015年13月份' is not a date"):
        read_csv(path)


def test_empty_cells_are_skipped_and_counted(tmp_path):
    path = _copy(tmp_path, "macro_china_shibor_all")
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    cells = lines[2].split(",")  # 2017-03-17
    cells[1] = cells[3] = ""  # O/N and 1W fixings
    lines[2] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = read_csv(path)
    assert data.skipped == {"empty cell": 2}
    assert len(data.observations) == 16360 - 2
    assert "shibor_on:2017-03-17" not in {o["id"] for o in data.observations}


def test_a_frame_saved_with_its_index_reads_the_same(tmp_path):
    # what `akshare.macro_china_ppi().to_csv(path)` writes: a leading unnamed index column, no BOM
    path = tmp_path / "macro_china_ppi_df.csv"
    pd.read_csv(FILES["macro_china_ppi"], encoding="utf-8-sig", dtype=str).to_csv(path)
    assert path.read_text(encoding="utf-8").startswith(",月份,当月,")
    ours, original = read_csv(path), read_csv(FILES["macro_china_ppi"])
    assert [(o["id"], o["value"]) for o in ours.observations] == [(o["id"], o["value"]) for o in original.observations]


def test_the_cli_prints_one_red_line_and_exits_2_on_a_bad_file(tmp_path, graph):
    path = _copy(tmp_path, "macro_china_ppi")
    path.write_text(path.read_text(encoding="utf-8-sig").replace("当月同比增长", "同比", 1), encoding="utf-8")
    out = finkg("ingest", "akshare", str(path))
    graph.write("MATCH (r:IngestRun) WHERE r.source = $p DETACH DELETE r", {"p": str(path.resolve())})
    assert out.returncode == 2
    assert out.stderr.startswith("error: ") and "missing 当月同比增长" in out.stderr


def test_the_live_call_fails_with_one_line_naming_the_function_and_the_csv_route(monkeypatch):
    # A proxy port nothing listens on: the real akshare call fails the way it does offline, on any machine.
    proxy = f"http://127.0.0.1:{free_port()}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, proxy)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with pytest.raises(AkshareUnavailable) as info:
        fetch_live("macro_china_cpi", attempts=2, wait_s=0.01, timeout_s=5)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith("akshare.macro_china_cpi() failed after 2 attempts")
    assert "finkg ingest akshare macro_china_cpi_df.csv" in msg


@pytest.mark.neo4j  # the ingest connects to its server before it calls AKShare
def test_the_live_cli_fails_offline_with_exit_2():
    proxy = f"http://127.0.0.1:{free_port()}"
    env = {
        "HTTPS_PROXY": proxy,
        "HTTP_PROXY": proxy,
        "https_proxy": proxy,
        "http_proxy": proxy,
        "NO_PROXY": "",
        "FINKG_AKSHARE_RETRY_ATTEMPTS": "1",
    }
    out = finkg(
        "ingest",
        "akshare",
        "--live",
        "--function",
        "bond_china_yield",
        "--start",
        "2024-01-02",
        "--end",
        "2024-03-29",
        env=env,
    )
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: akshare.bond_china_yield(start_date='20240102', end_date='20240329') failed after 1 attempts"
    )


# --------------------------------------------------------------------------- financial facts


def _by_id(facts):
    return {f.id: f for f in facts}


def test_facts_on_a_real_date_state_hand_checked_values_and_changes(graph, loaded):
    facts = _by_id(
        indicator_facts(
            graph,
            date(2015, 6, 30),
            ["cn_treasury_yield_10y", "cn_m2", "cn_m2_yoy", "cn_cpi_yoy", "cn_ppi_yoy", "shibor_on"],
        )
    )
    # ChinaBond 10-year: 3.5976 on 2015-06-30 (line 3368), 3.6030 the day before, 4.0612 on 2014-06-30
    y = facts["akshare:cn_treasury_yield_10y:2015-06-30:level"]
    assert y.text == "China treasury bond yield (ChinaBond curve), 10-year: 3.60% on 2015-06-30."
    assert (
        y.numbers == (3.6,)
        and y.unit == "%"
        and y.cites == (("Observation", "id", "cn_treasury_yield_10y:2015-06-30"),)
    )
    prev = facts["akshare:cn_treasury_yield_10y:2015-06-30:change_prev"]
    assert "a decrease of 0.01 percentage points (0.5 bp) from 3.60% on 2015-06-29" in prev.text
    assert prev.unit == "pp" and prev.cites[1] == ("Observation", "id", "cn_treasury_yield_10y:2015-06-29")
    year = facts["akshare:cn_treasury_yield_10y:2015-06-30:change_12m"]
    assert "a decrease of 0.46 percentage points (46.4 bp) over twelve months, from 4.06% on 2014-06-30" in year.text
    assert year.numbers == (3.6, 0.46, 46.4, 4.06)
    # June's monthly figures are not out on 2015-06-30: May 2015 is the latest (M2 growth 10.8, April 10.1,
    # February 12.5, November 12.3, May 2014 13.4)
    m2 = facts["akshare:cn_m2_yoy:2015-05-31:change_prev"]
    assert m2.text == (
        "China M2 money supply, year-on-year growth: 10.80% in the month ending 2015-05-31, an "
        "increase of 0.70 percentage points from 10.10% in the month ending 2015-04-30 (the previous month)."
    )
    assert m2.numbers == (10.8, 0.7, 10.1)
    assert (
        "a decrease of 1.70 percentage points over three months, from 12.50%"
        in facts["akshare:cn_m2_yoy:2015-05-31:change_3m"].text
    )
    assert (
        "a decrease of 2.60 percentage points over twelve months, from 13.40% in the month ending 2014-05-31"
        in facts["akshare:cn_m2_yoy:2015-05-31:change_12m"].text
    )
    # M2 amount (亿元): 1,307,357.63 in May, 1,280,779.14 in April: +26,578.49, +2.08 %
    amount = facts["akshare:cn_m2:2015-05-31:change_prev"]
    assert "1,307,357.63 hundred million yuan" in amount.text
    assert "an increase of 26,578.49 hundred million yuan (2.08%) from 1,280,779.14" in amount.text
    assert amount.numbers == (1307357.63, 26578.49, 2.08, 1280779.14) and amount.unit == "CNY 100 million"
    # CPI yoy 1.2 (April 1.5); PPI yoy -4.607 (April -4.5725)
    assert (
        "1.20% in the month ending 2015-05-31, a decrease of 0.30 percentage points from 1.50%"
        in facts["akshare:cn_cpi_yoy:2015-05-31:change_prev"].text
    )
    assert facts["akshare:cn_ppi_yoy:2015-05-31:level"].numbers == (-4.61,)
    # SHIBOR: the file's only 2015 fixing is 2015-05-08 (1.443), with nothing before it: one fact
    shibor = [f for f in facts.values() if f.indicator == "shibor_on"]
    assert [f.id for f in shibor] == ["akshare:shibor_on:2015-05-08:level"]
    assert (
        shibor[0].text == "SHIBOR, overnight: 1.44% on 2015-05-08."
        and shibor[0].source == "akshare:macro_china_shibor_all"
    )


def test_every_fact_lists_exactly_the_numbers_its_sentence_states(graph, loaded):
    facts = indicator_facts(graph, date(2015, 6, 30))
    assert len({f.indicator for f in facts}) == 40
    assert len(facts) == len({f.id for f in facts})
    for f in facts:
        stated = sorted(
            round(m.value * 100 if m.kind == "percent" else m.value, 6)
            for m in find_numbers(f.text)
            if m.kind not in ("date", "year")
        )
        assert stated == sorted(round(n, 6) for n in f.numbers), f.text
        assert f.id.split(":")[-1] in FACT_KINDS and f.date <= "2015-06-30"


def test_a_monthly_value_is_no_fact_before_its_availability(graph, loaded):
    # May 2015 money supply counts from 2015-06-20T12:00Z (month end + 20 days)
    before = _by_id(indicator_facts(graph, date(2015, 6, 19), ["cn_m2_yoy"]))
    after = _by_id(indicator_facts(graph, date(2015, 6, 20), ["cn_m2_yoy"]))
    assert "akshare:cn_m2_yoy:2015-04-30:level" in before and not any("2015-05-31" in k for k in before)
    assert "akshare:cn_m2_yoy:2015-05-31:level" in after
    # before the first observation of a series there is no fact at all
    assert indicator_facts(graph, date(2015, 5, 7), ["shibor_on"]) == []


def test_a_maximum_age_leaves_stale_series_out(graph, loaded):
    codes = ["shibor_on", "cn_treasury_yield_10y", "cn_cpi_yoy"]
    # on 2015-06-30 the SHIBOR fixing (2015-05-08) is 53 days old, May's CPI (2015-05-31) 30 days
    assert {f.indicator for f in indicator_facts(graph, date(2015, 6, 30), codes, max_age_days=31)} == {
        "cn_treasury_yield_10y",
        "cn_cpi_yoy",
    }
    assert {f.indicator for f in indicator_facts(graph, date(2015, 6, 30), codes, max_age_days=53)} == set(codes)
    # the shipped curve ends in 2016: in 2018 only SHIBOR is current
    assert {f.indicator for f in indicator_facts(graph, date(2018, 6, 29), codes, max_age_days=31)} == {
        "shibor_on",
        "cn_cpi_yoy",
    }


def test_facts_cli_prints_the_table(loaded):
    out = finkg("facts", "--as-of", "2015-06-30", "--indicator", "cn_cpi_yoy", "--format", "csv")
    assert out.returncode == 0, out.stderr
    assert (
        'akshare:cn_cpi_yoy:2015-05-31:level,"China CPI, year-on-year change: 1.20% in the month ending 2015-05-31."'
        in out.stdout
    )
    assert out.stdout.count("akshare:cn_cpi_yoy:2015-05-31:") == 5
