"""``finkg ask`` and agent trajectories in the graph (generation/agent/ask.py, generation/agent/trajectory.py,
kg/cypher/agent.py) on the shipped 2009q3 SEC Financial Statement Data Sets and the real Neo4j.

Gold values are read from the quarter's num.txt with pandas here (never through finkg code): the whole-entity
(no segments, no co-registrant) USD value of the tag at the period end and span, from Johnson & Johnson's 10-Q.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from functools import cache

import pandas as pd
import pytest
from test_agent_tools import JNJ_ADSH, QUARTER

from finkg import api
from finkg.pipelines import sec as pipelines
from generation.agent.ask import answer_sec_question, plan_question
from generation.agent.trajectory import RunRecord, StepRecord, delete_runs, read_run, write_runs
from retrieval.facts.fact_map import list_filings


@pytest.fixture(scope="module")
def loaded(graph, settings):
    """The shipped 2009q3 quarter (435 filings, Johnson & Johnson's 10-Q among them), loaded once."""
    if len(list_filings(graph, source=QUARTER.name)) != 435:
        pipelines.ingest_sec(graph, settings, [QUARTER])
    return graph


@cache
def num() -> pd.DataFrame:
    """num.txt of the shipped quarter: whole-entity USD facts."""
    with zipfile.ZipFile(QUARTER) as z, z.open("num.txt") as f:
        df = pd.read_csv(f, sep="\t", dtype=str, keep_default_na=False, encoding="latin-1")
    df = df[(df.segments == "") & (df.coreg == "") & (df.uom == "USD") & (df.value != "")].copy()
    df["value"] = df["value"].astype(float)
    return df


def gold(adsh: str, tag: str, ddate: str, qtrs: int) -> float:
    rows = num()
    hit = rows[(rows.adsh == adsh) & (rows.tag == tag) & (rows.ddate == ddate) & (rows.qtrs == str(qtrs))]
    assert len(hit) == 1, (adsh, tag, ddate, qtrs, len(hit))
    return float(hit.value.iloc[0])


@pytest.fixture
def runs(graph):
    """Run ids written by a test, deleted afterwards."""
    ids: list[str] = []
    yield ids
    delete_runs(graph, ids)


def test_working_capital_is_computed_from_the_facts_and_walked_back_in_the_graph(loaded, runs):
    ca = gold(JNJ_ADSH, "AssetsCurrent", "20090630", 0)
    cl = gold(JNJ_ADSH, "LiabilitiesCurrent", "20090630", 0)
    result = api.ask("What is Johnson & Johnson's working capital?", graph=loaded)
    runs.append(result.run or "")
    assert result.status == "answered" and result.verdict is not None and result.verdict["passed"]
    assert result.answer == f"USD {ca - cl:,.0f}" == "USD 15,608,000,000"  # the README demo's miswritten 15,603
    ops = result.derivation["operands"]
    assert [o["value"] for o in ops.values()] == [ca, cl]
    assert all(o["fact_key"].startswith(JNJ_ADSH) for o in ops.values())
    assert result.derivation["result"] == ca - cl
    # the run in the graph: steps in order, the lookups linked to the very facts of the derivation
    run = read_run(loaded, result.run or "")
    assert run is not None and run["run"]["verdict"] == "passed" and run["run"]["answer"] == result.answer
    # one measure call (issue 44's catalog: working capital = current assets - current liabilities) that read both
    # facts and computed the difference, then the gate
    assert [s["tool"] for s in run["steps"]] == ["measure", "gate"]
    assert sorted(run["steps"][0]["used"]) == sorted(o["fact_key"] for o in ops.values())
    assert json.loads(run["steps"][0]["output"])["value"] == ca - cl
    assert result.derivation["formula"] == "CurrentAssets - CurrentLiabilities"
    walked = loaded.read(
        "MATCH (:AgentRun {id: $id})-[e:STEP]->(:Step)-[:USED]->(f:Fact) RETURN f.value AS v ORDER BY e.i",
        {"id": result.run},
    )
    assert sorted(r["v"] for r in walked) == sorted([ca, cl])


def test_a_run_written_again_replaces_its_steps(loaded, runs):
    record = RunRecord("test-run:replace", "q", "1", "passed", "m", steps=[StepRecord("calculate", {}, {})] * 3)
    runs.append(record.id)
    write_runs(loaded, [record])
    write_runs(loaded, [RunRecord("test-run:replace", "q", "2", "passed", "m", steps=[StepRecord("gate", "", {})])])
    run = read_run(loaded, "test-run:replace")
    assert run is not None and run["run"]["answer"] == "2" and [s["tool"] for s in run["steps"]] == ["gate"]
    assert read_run(loaded, "test-run:none") is None


def test_ratio_growth_and_which_is_larger_match_num_txt(loaded, runs):
    ca = gold(JNJ_ADSH, "AssetsCurrent", "20090630", 0)
    cl = gold(JNJ_ADSH, "LiabilitiesCurrent", "20090630", 0)
    got = answer_sec_question(loaded, "What is Johnson & Johnson's current ratio on 2009-06-30?")
    assert got.status == "answered" and got.answer == f"{ca / cl:.2f}"
    assert got.derivation["formula"] == "CurrentAssets / CurrentLiabilities"
    now = gold(JNJ_ADSH, "SalesRevenueGoodsNet", "20090630", 1)
    before = gold(JNJ_ADSH, "SalesRevenueGoodsNet", "20080630", 1)
    got = answer_sec_question(loaded, "How much did Johnson & Johnson's revenue grow year over year?")
    went = " (a decrease)" if now < before else ""  # "grow" asked: a fall says so
    assert got.status == "answered" and got.answer == f"{(now - before) / before * 100:.2f}%{went}"
    got = answer_sec_question(loaded, "Which is larger, Johnson & Johnson's current liabilities or current assets?")
    assert got.answer == ("current assets" if ca > cl else "current liabilities")
    got = answer_sec_question(loaded, "Which is smaller, Johnson & Johnson's current liabilities or current assets?")
    assert got.answer == ("current liabilities" if ca > cl else "current assets")


@pytest.mark.parametrize(
    ("question", "company", "says"),
    [
        ("What is the net margin of Acme Widgets?", None, "no company found in the question"),
        ("What is Johnson & Johnson's brand value?", None, "names no concept or ratio"),
        ("What were the revenues on 2012-06-30?", "200406", "period 2012-06-30"),
        ("What were the total assets?", "Acme Widgets", "name matches 'Acme Widgets'"),
    ],
)
def test_what_is_not_in_the_graph_is_answered_as_such_with_what_was_searched(loaded, runs, question, company, says):
    result = api.ask(question, company=company, graph=loaded)
    runs.append(result.run or "")
    assert result.answer is None and result.status == "not in graph" and result.verdict is None
    assert result.reasons and "not in the graph" in result.reasons[0] and says in result.reasons[0]
    run = read_run(loaded, result.run or "")
    assert run is not None and run["run"]["verdict"] == "not in graph"


def test_as_of_uses_only_filings_public_by_then(loaded, runs):
    # Johnson & Johnson's 10-Q was accepted on 2009-08-04: the day before, the graph knows nothing of it
    before = answer_sec_question(loaded, "What were Johnson & Johnson's total assets?", as_of="2009-08-03")
    assert before.status == "not in graph" and "public by 2009-08-03" in before.reasons[0]
    # a question dated long after the newest data is answered from what was known then: the latest period
    later = answer_sec_question(loaded, "What were Johnson & Johnson's total assets?", as_of="2030-01-01")
    assert later.answer == f"USD {gold(JNJ_ADSH, 'Assets', '20090630', 0):,.0f}"
    assert later.derivation["operands"]["assets_2009_06_30"]["period"] == "2009-06-30"


def test_the_plan_reads_two_companies_and_the_concept(loaded):
    plan = plan_question(loaded, "Which company had larger revenues, Johnson & Johnson or cik 320193?")
    assert plan.kind == "compare" and [m.id for m in plan.measures] == ["revenue"]
    assert plan.companies[0][0] == 200406


@pytest.mark.neo4j
def test_finkg_ask_prints_answer_derivation_and_verdict(loaded, runs):
    out = subprocess.run(
        [sys.executable, "-m", "finkg", "ask", "What is the liabilities to assets ratio of Johnson & Johnson?"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    liabilities = gold(JNJ_ADSH, "Liabilities", "20090630", 0)
    assets = gold(JNJ_ADSH, "Assets", "20090630", 0)
    assert f"answer: {liabilities / assets * 100:.2f}%" in out.stdout
    assert "gate: passed" in out.stdout and "formula: Liabilities / Assets" in out.stdout
    assert f"{JNJ_ADSH}:Liabilities:" in out.stdout.replace("\n", "")
    runs.append(out.stdout.split("run ")[-1].split(";")[0])
    missing = subprocess.run(
        [sys.executable, "-m", "finkg", "ask", "What is the liabilities to assets of Acme Widgets?", "--no-record"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 0 and "status: not in graph" in missing.stdout
