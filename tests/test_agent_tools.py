"""The analyst agent's deterministic tools (generation/agent): gold values from TAT-QA's own answers, from the
real 2009q3 SEC facts read with the test's own Cypher, or computed independently here; error cases included."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from finkg.pipelines import sec as pipelines
from generation.agent import arithmetic, facts, registry, tables
from generation.agent.results import ToolResult
from retrieval.facts.fact_map import list_filings

# TAT-QA dev (tatqa_dataset_dev.json, CC BY 4.0), context 0, table uid 3ffd9053-a45d-491c-957a-1b2fa0af0570,
# copied unchanged so the test needs no data folder
SALES = [
    ["", "", "Years Ended September 30,", ""],
    ["", "2019", "2018", "2017"],
    ["Fixed Price", "$  1,452.4", "$  1,146.2", "$  1,036.9"],
    ["Other", "44.1", "56.7", "70.8"],
    ["Total sales", "$1,496.5", "$1,202.9", "$1,107.7"],
]

JNJ = 200406
JNJ_ADSH = "0000950123-09-029672"
QUARTER = Path(__file__).resolve().parents[1] / "data" / "sec-fsds" / "2009q3.zip"


@pytest.fixture(scope="module")
def loaded(graph, settings):
    """The shipped 2009q3 Financial Statement Data Sets (Johnson & Johnson's 10-Q among them), loaded once."""
    if len(list_filings(graph, source=QUARTER.name)) != 435:
        pipelines.ingest_sec(graph, settings, [QUARTER])
    return graph


# ----------------------------------------------------------------------------------------- calculate


def test_calculate_evaluates_tatqa_derivations_to_their_gold_answers():
    # "What is the change in Other in 2019 from 2018?" gold -12.6 (44.1-56.7), scale million
    r = arithmetic.calculate("other_2019 - other_2018", {"other_2019": 44.1, "other_2018": 56.7})
    assert r.ok and round(r.value, 2) == -12.6
    # "What is the percentage change in Other in 2019 from 2018?" gold -22.22
    r = arithmetic.calculate("(a - b) / b * 100", {"a": 44.1, "b": 56.7})
    assert round(r.value, 2) == -22.22
    assert r.numbers == (r.value,) and r.detail["expression"] == "(a - b) / b * 100"
    assert arithmetic.calculate("abs(x) + max(1, 2) ** 2", {"x": -3}).value == 7.0


@pytest.mark.parametrize(
    ("expression", "operands", "says"),
    [
        ("a / b", {"a": 1, "b": 0}, "division by zero"),
        ("a // b", {"a": 1, "b": 0}, "division by zero"),
        ("a * c", {"a": 1}, "unknown name 'c'"),
        ("(a + ", {"a": 1}, "malformed"),
        ("", {}, "empty"),
        ("a ** b", {"a": 10.0, "b": 400}, "overflow"),
        ("a * b", {"a": 1e300, "b": 1e300}, "not finite"),
        ("__import__('os')", {}, ""),
        ("a.real", {"a": 1}, ""),
        ("'x' * 3", {}, "must be a number"),
        ("a", {"a": "12"}, "operand 'a' must be a number"),
        ("a", {"a": float("nan")}, "not finite"),
        ("a", {"1a": 1}, "not an identifier"),
        ("x" * 600, {}, "longer than"),
    ],
)
def test_calculate_returns_a_readable_error_never_raises(expression, operands, says):
    r = arithmetic.calculate(expression, operands)
    assert not r.ok and r.value is None and r.numbers == ()
    assert says in (r.error or "")
    assert json.loads(r.observation())["error"] == r.error


# ----------------------------------------------------------------------------------------- compare, date_diff, scale


def test_compare_gives_direction_change_and_percent_change():
    r = arithmetic.compare(56.7, 44.1)
    assert r.value == "decreased"
    assert math.isclose(r.detail["change"], -12.6) and round(r.detail["percent_change"], 2) == -22.22
    assert arithmetic.compare(19_886_000_000, 35_494_000_000).detail["change"] == 15_608_000_000
    assert arithmetic.compare(1, 2).value == "increased"
    z = arithmetic.compare(0, 0)
    assert z.value == "unchanged" and z.detail["percent_change"] is None and z.numbers == (0.0,)
    assert "must be a number" in (arithmetic.compare("a", 1).error or "")  # type: ignore[arg-type]


def test_date_diff_in_days_months_and_years():
    assert arithmetic.date_diff("2008-06-30", "2009-06-30").value == 365
    assert arithmetic.date_diff("20081231", "June 30, 2009", "months").value == 6
    assert arithmetic.date_diff("2009-06-30", "2009-01-31", "months").value == -5  # month ends count
    assert arithmetic.date_diff("2009-01-15", "2009-06-14", "months").value == 4  # whole months only
    assert math.isclose(arithmetic.date_diff("2000-01-01", "2010-01-01", "years").value, 3653 / 365.25)
    assert "not a date" in (arithmetic.date_diff("yesterday", "2009-01-01").error or "")
    assert "not a valid date" in (arithmetic.date_diff("20090231", "2009-01-01").error or "")
    assert "unknown unit" in (arithmetic.date_diff("2009-01-01", "2009-01-02", "weeks").error or "")


def test_scale_between_amount_scales_and_between_rates():
    assert math.isclose(arithmetic.scale(1452.4, "million", "billion").value, 1.4524)
    assert arithmetic.scale(15_608_000_000, "", "millions").value == 15_608
    assert arithmetic.scale(3, "thousand", "units").value == 3000
    assert math.isclose(arithmetic.scale(0.125, "fraction", "percent").value, 12.5)
    assert math.isclose(arithmetic.scale(-22.22, "%", "fraction").value, -0.2222)
    assert "amount is not a rate" in (arithmetic.scale(1, "million", "percent").error or "")
    assert "unknown scale" in (arithmetic.scale(1, "lakh", "million").error or "")


# ----------------------------------------------------------------------------------------- tables


def test_table_cell_reads_numbers_with_scale():
    # "What is the amount of total sales in 2019?" gold "$1,496.5", scale million
    r = tables.table_cell(SALES, "Total sales", "2019", scale="million")
    assert r.value == 1496.5 and r.detail["base_value"] == 1_496_500_000 and r.detail["text"] == "$1,496.5"
    assert set(r.numbers) == {1496.5, 1_496_500_000}
    r = tables.table_cell(SALES, "other", "2018", scale="million")  # case-insensitive; header "Years Ended ... 2018"
    assert r.value == 56.7 and r.detail["column_header"] == "Years Ended September 30, 2018"
    assert tables.table_cell(SALES, 3, 3, scale="").value == 70.8  # by index
    assert tables.table_cell(SALES, "Other", "2017").detail["scale"] == ""  # no caption names a scale


def test_table_scale_from_the_caption_negatives_and_percentages():
    t = [["", "2019", "2018"], ["(in thousands)", "", ""], ["Net loss", "(1,234)", "12.5%"]]
    t2 = [["(in thousands)", "", ""], ["", "2019", "2018"], ["Net loss", "(1,234)", "12.5%"]]
    assert tables.table_scale(t2) == "thousand"
    r = tables.table_cell(t2, "Net loss", "2019")
    assert r.value == -1234 and r.detail["base_value"] == -1_234_000
    p = tables.table_cell(t2, "Net loss", "2018")
    assert p.value == 12.5 and p.detail["unit"] == "%" and p.detail["base_value"] == 0.125
    assert tables.table_scale(t) == ""


def test_table_errors_name_the_rows_and_columns():
    assert "the rows are: 'Fixed Price', 'Other', 'Total sales'" in (
        tables.table_cell(SALES, "Revenue", "2019").error or ""
    )
    assert "no column '2016'" in (tables.table_cell(SALES, "Other", "2016").error or "")
    assert "outside" in (tables.table_cell(SALES, 0, 1).error or "")  # a header row is not a body row
    assert "non-empty list" in (tables.table_cell([], "Other", "2019").error or "")
    assert "holds no single number" in (
        tables.table_cell([["", "2019", "2018"], ["A", "—", "5"]], "A", "2019").error or ""
    )
    assert "unknown scale" in (tables.table_cell(SALES, "Other", "2019", scale="lakh").error or "")


def test_table_column_lists_every_body_row():
    r = tables.table_column(SALES, "2019", scale="million")
    assert [c["row_label"] for c in r.value] == ["Fixed Price", "Other", "Total sales"]
    assert [c["value"] for c in r.value] == [1452.4, 44.1, 1496.5]
    # Fixed Price + Other = Total sales: the column's numbers are what the data says
    assert math.isclose(r.value[0]["value"] + r.value[1]["value"], r.value[2]["value"])
    assert 1_452_400_000 in r.numbers
    assert not tables.table_column(SALES, "2020").ok


def test_table_count_counts_a_rows_year_columns_past_a_threshold():
    r = tables.table_count(SALES, "Fixed Price", ">", 1_100_000_000, scale="million")
    assert r.ok and r.value == 2 and r.numbers == (2.0,)
    assert r.detail["counted_columns"] == ["2019", "Years Ended September 30, 2018"]
    assert [c["base_value"] for c in r.detail["cells"]] == pytest.approx([1_452_400_000, 1_146_200_000, 1_036_900_000])
    assert tables.table_count(SALES, "Fixed Price", "<=", 1_146_300_000, scale="million").value == 2
    assert "unknown comparison" in (tables.table_count(SALES, "Other", "!=", 1).error or "")
    assert "threshold" in (tables.table_count(SALES, "Other", ">", float("nan")).error or "")
    assert "no row 'Services'" in (tables.table_count(SALES, "Services", ">", 1).error or "")


# ----------------------------------------------------------------------------------------- registry


def test_registry_offers_the_tools_with_schemas_and_reports_bad_calls():
    tools = registry.registry(table=SALES)
    assert set(tools) == {"calculate", "compare", "date_diff", "scale", "table_cell", "table_column", "table_count"}
    for t in tools.values():
        assert (
            t.schema["type"] == "object"
            and t.schema["description"]
            and set(t.schema["required"]) <= set(t.schema["properties"])
        )
    assert registry.call(tools, "table_cell", {"row": "Other", "column": "2019"}).value == 44.1
    assert registry.call(tools, "scale", {"value": 2, "from": "billion", "to": "million"}).value == 2000
    assert "unknown tool" in (registry.call(tools, "python", {}).error or "")
    assert "missing ['operands']" in (registry.call(tools, "calculate", {"expression": "1"}).error or "")
    assert "must be a JSON object" in (registry.call(tools, "compare", [1, 2]).error or "")


# ----------------------------------------------------------------------------------------- graph tools (real 2009q3 data)


def _gold(graph, tag: str, ddate: str, qtrs: int, cik: int = JNJ) -> dict:
    rows = graph.read(
        "MATCH (:Company {cik: $cik})-[:FILED]->(f:Filing)-[:REPORTS]->(x:Fact {tag: $tag, ddate: $ddate, qtrs: $qtrs}) "
        "WHERE x.uom = 'USD' RETURN x.key AS key, x.value AS value, f.adsh AS adsh",
        {"cik": cik, "tag": tag, "ddate": ddate, "qtrs": qtrs},
    )
    assert len(rows) == 1, rows
    return rows[0]


def test_fact_lookup_returns_the_real_fact_with_key_filing_and_date(loaded):
    graph = loaded
    gold = _gold(graph, "AssetsCurrent", "20090630", 0)
    r = facts.fact_lookup(graph, str(JNJ), "CurrentAssets", "2009-06-30")
    assert r.ok and r.value == gold["value"] == 35_494_000_000
    assert r.detail["key"] == gold["key"] and r.detail["adsh"] == gold["adsh"] == JNJ_ADSH
    assert r.detail["period"] == "2009-06-30" and r.detail["filed"] == "2009-08-04" and r.detail["form"] == "10-Q"
    # the label and a name resolve to the same fact; the synonym SalesRevenueGoodsNet stands for revenue
    assert facts.fact_lookup(graph, "Johnson & Johnson", "current assets", "June 30, 2009").value == gold["value"]
    rev = facts.fact_lookup(graph, str(JNJ), "Revenues", "2009-06-30")
    assert (
        rev.detail["tag"] == "SalesRevenueGoodsNet"
        and rev.value == _gold(graph, "SalesRevenueGoodsNet", "20090630", 1)["value"]
    )
    assert (
        facts.fact_lookup(graph, str(JNJ), "revenue", "2009-06-30", qtrs=2).value
        == _gold(graph, "SalesRevenueGoodsNet", "20090630", 2)["value"]
    )


def test_fact_lookup_errors_say_what_was_searched(loaded):
    graph = loaded
    r = facts.fact_lookup(graph, "no such company zq", "Revenues", "2009-06-30")
    assert not r.ok and "not in the graph" in (r.error or "") and "no such company zq" in (r.error or "")
    assert "matches several companies" in (facts.fact_lookup(graph, "johnson", "Assets", "2009-06-30").error or "")
    assert "not a date" in (facts.fact_lookup(graph, str(JNJ), "Assets", "last quarter").error or "")
    assert "not in the graph" in (facts.fact_lookup(graph, str(JNJ), "Assets", "1999-12-31").error or "")
    # point in time: the 10-Q was accepted on 2009-08-04, so on 2009-08-01 it was not public
    assert "public by" in (facts.fact_lookup(graph, str(JNJ), "Assets", "2009-06-30", as_of="2009-08-01").error or "")
    assert facts.fact_lookup(graph, str(JNJ), "Assets", "2009-06-30", as_of="2009-08-05").ok


def test_ratio_values_and_derivations_match_independent_arithmetic(loaded):
    graph = loaded
    ca, cl = _gold(graph, "AssetsCurrent", "20090630", 0), _gold(graph, "LiabilitiesCurrent", "20090630", 0)
    r = facts.ratio(graph, "current_ratio", str(JNJ), "2009-06-30")
    assert math.isclose(r.value, ca["value"] / cl["value"])
    assert [f["key"] for f in r.detail["facts"]] == [ca["key"], cl["key"]]
    assert (
        r.detail["formula"] == "CurrentAssets / CurrentLiabilities"
        and r.detail["expression"] == "35494000000 / 19886000000"
    )

    li, assets = _gold(graph, "Liabilities", "20090630", 0), _gold(graph, "Assets", "20090630", 0)
    assert math.isclose(facts.ratio(graph, "leverage", str(JNJ), "2009-06-30").value, li["value"] / assets["value"])

    # J&J reports ProfitLoss (no NetIncomeLoss): the synonym the memos accept next
    assert not graph.read("MATCH (x:Fact {tag: 'NetIncomeLoss', adsh: $a}) RETURN x LIMIT 1", {"a": JNJ_ADSH})
    ni, rev = _gold(graph, "ProfitLoss", "20090630", 1), _gold(graph, "SalesRevenueGoodsNet", "20090630", 1)
    m = facts.ratio(graph, "net_margin", str(JNJ), "2009-06-30")
    assert math.isclose(m.value, ni["value"] / rev["value"]) and m.detail["style"] == "%"
    assert any(math.isclose(x, m.value * 100) for x in m.numbers)

    prior = _gold(graph, "SalesRevenueGoodsNet", "20080630", 1)
    g = facts.ratio(graph, "growth", str(JNJ), "2009-06-30")
    assert math.isclose(g.value, (rev["value"] - prior["value"]) / prior["value"])  # 15,239 vs 16,450 million: down
    assert g.value < 0 and [f["key"] for f in g.detail["facts"]] == [rev["key"], prior["key"]]

    assert "unknown ratio" in (facts.ratio(graph, "roe", str(JNJ), "2009-06-30").error or "")
    assert "not in the graph" in (facts.ratio(graph, "current_ratio", str(JNJ), "2001-06-30").error or "")


def test_graph_tools_through_the_registry(loaded):
    graph = loaded
    tools = registry.registry(graph=graph, as_of="2009-12-31")
    r = registry.call(tools, "fact_lookup", {"company": str(JNJ), "concept": "AssetsCurrent", "period": "2009-06-30"})
    assert isinstance(r, ToolResult) and r.value == 35_494_000_000
    r = registry.call(tools, "ratio", {"name": "current_ratio", "company": str(JNJ), "period": "2009-06-30"})
    assert math.isclose(r.value, 35_494 / 19_886)
