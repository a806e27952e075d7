"""``finkg report --reader agent`` (finkg/pipelines/reports.py over generation/agent/reader.py) end to end: the shipped
2009q3 SEC filings in the real Neo4j, MiniLM ranking F, SmolLM2 through llama.cpp on the LLM route (too small to be
right: what is asserted there is the mechanics, and that no answer carries a number the gate cannot trace).

What users rely on: a report per question with the answer, its derivation (operands with fact keys, expression,
result), the gate's verdict and the agent run; ``(:Report)-[:ANSWERED_BY]->(:AgentRun)-[:STEP]->(:Step)-[:USED]->
(:Fact)`` walkable in Cypher; a question the agent cannot answer is a report saying so with the reason and the
batch goes on; a rerun skips what is done; the two readers' reports of one question coexist. Gold values are read
from num.txt with pandas (tests/test_agent_ask.py's ``gold``), never through finkg code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import minilm_dir
from test_agent_ask import gold
from test_agent_tools import JNJ_ADSH, QUARTER
from test_llm import smol_gguf

from finkg import api
from finkg.config import load_settings
from finkg.pipelines import reports
from finkg.pipelines import sec as pipelines
from generation.agent import arithmetic, facts, registry
from generation.agent.gate import same_number
from generation.agent.reader import derivation_of, read_question
from generation.agent.thought import calculate_call
from generation.agent.toolloop import action_schema, system_prompt
from generation.agent.trajectory import delete_runs, read_run, write_runs
from generation.llm import AdapterBaseMismatch, client_from_settings
from kg.errors import ConfigError
from kg.ledger import Ledger
from retrieval.embeddings import make_embedder
from retrieval.facts.fact_map import list_filings
from retrieval.facts.indicators import FinancialFact

ROOT = Path(__file__).resolve().parents[1]

QUESTIONS = [
    {
        "id": "t-agent-wc",
        "question": "What is Johnson & Johnson's working capital (current assets minus current liabilities)?",
        "as_of": "2009-09-30",
        "companies": ["JOHNSON & JOHNSON"],
    },
    {  # the plan reads it, the graph has no such period: a report saying so, recorded, the batch goes on
        "id": "t-agent-missing",
        "question": "What was Johnson & Johnson's current ratio on 2012-06-30?",
        "as_of": "2012-09-30",
        "companies": ["JOHNSON & JOHNSON"],
    },
    {  # no concept the plan knows: the LLM calls the tools
        "id": "t-agent-llm",
        "question": "What do Johnson & Johnson's statements say about its liquidity?",
        "as_of": "2009-09-30",
        "companies": ["JOHNSON & JOHNSON"],
    },
]


@pytest.fixture(scope="module")
def rsettings(tmp_path_factory):
    return load_settings(
        llm_backend="llama-cpp",
        llm_model_path=smol_gguf(),
        llm_n_ctx=4096,
        llm_cache_dir=tmp_path_factory.mktemp("llm-cache"),
        embedding_model_path=minilm_dir(),
        report_max_facts=3,
        report_agent_steps=1,  # one LLM turn (SmolLM2 on 2 shared cores: ~20 s for a 1,000-token prompt)
    )


@pytest.fixture(scope="module")
def loaded(graph, settings):
    if len(list_filings(graph, source=QUARTER.name)) != 435:
        pipelines.ingest_sec(graph, settings, [QUARTER])
    return graph


@pytest.fixture
def cleanup(loaded):
    ids = [f"report:{q['id']}:none:agent" for q in QUESTIONS]
    yield ids
    loaded.write(
        "MATCH (r:Report) WHERE r.id IN $ids OPTIONAL MATCH (r)-[:ANSWERED_BY]->(a:AgentRun) "
        "OPTIONAL MATCH (a)-[:STEP]->(s:Step) DETACH DELETE s, a, r",
        {"ids": ids},
    )


def _batch(tmp_path, rows):
    path = tmp_path / "batch.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_agent_reports_carry_the_derivation_link_the_run_and_resume(loaded, rsettings, cleanup, tmp_path):
    ca = gold(JNJ_ADSH, "AssetsCurrent", "20090630", 0)
    cl = gold(JNJ_ADSH, "LiabilitiesCurrent", "20090630", 0)
    out = tmp_path / "reports"
    client = client_from_settings(rsettings)
    ctx = reports.ReportContext(loaded, rsettings, client, make_embedder(minilm_dir()), "none", reader="agent")
    questions = reports.load_questions(_batch(tmp_path, QUESTIONS))
    summary = reports.run_batch(questions, ctx, out)
    assert summary.failed == [] and summary.done == 3 and summary.answered + summary.unanswered == 3

    # the computed answer, its derivation and its verdict, in the JSON and the Markdown
    rec = json.loads((out / "t-agent-wc.none.agent.json").read_text())
    assert rec["reader"] == "agent" and rec["route"] == "plan" and rec["answer_status"] == "answered"
    assert rec["answer"] == f"USD {ca - cl:,.0f}" == "USD 15,608,000,000"
    ops = rec["derivation"]["operands"]
    assert [o["value"] for o in ops.values()] == [ca, cl] and rec["derivation"]["result"] == ca - cl
    assert all(o["fact_key"].startswith(JNJ_ADSH) for o in ops.values())
    assert rec["gate"]["verdict"] == "passed"
    md = (out / "t-agent-wc.none.agent.md").read_text()
    assert (
        "USD 15,608,000,000" in md
        and "currentassets_2009_06_30 - currentliabilities_2009_06_30" in md
        and rec["agent_run"] in md
    )

    # Report -> AgentRun -> Step -> Fact, the facts of the derivation; the report cites them too
    walked = loaded.read(
        "MATCH (:Report {id: $id})-[:ANSWERED_BY]->(:AgentRun {id: $run})-[e:STEP]->(s:Step)-[:USED]->(f:Fact) "
        "RETURN s.tool AS tool, f.key AS key, f.value AS v ORDER BY e.i",
        {"id": rec["report_id"], "run": rec["agent_run"]},
    )
    assert sorted((r["tool"], r["v"]) for r in walked) == sorted([("measure", ca), ("measure", cl)])
    assert sorted(r["key"] for r in walked) == sorted(o["fact_key"] for o in ops.values())
    cited = loaded.read(
        "MATCH (:Report {id: $id})-[:CITES]->(f:Fact) RETURN f.key AS key ORDER BY key", {"id": rec["report_id"]}
    )
    assert sorted(r["key"] for r in cited) == sorted(o["fact_key"] for o in ops.values())

    # not in the graph: a report saying so with what was searched, recorded done, the run kept
    miss = json.loads((out / "t-agent-missing.none.agent.json").read_text())
    assert miss["status"] == "done" and miss["answer_status"] == "not in graph"
    assert miss["answer"].startswith("could not answer") and "2012-06-30" in miss["answer"]
    run = read_run(loaded, miss["agent_run"])
    assert run is not None and run["run"]["verdict"] == "not in graph"
    node = loaded.read("MATCH (r:Report {id: $id}) RETURN r.answer_status AS s", {"id": miss["report_id"]})
    assert node == [{"s": "not in graph"}]

    # the LLM route: the tools' schemas shown, every turn recorded; an answer only when the gate passed it
    llm = json.loads((out / "t-agent-llm.none.agent.json").read_text())
    assert llm["route"] == "tools" and llm["calls"]["agent"]["llm_calls"] >= 1
    steps = read_run(loaded, llm["agent_run"])
    assert steps is not None and steps["steps"][0]["tool"] == "llm"
    assert {"calculate", "fact_lookup", "ratio", "search_evidence"} <= set(steps["run"]["tools"])
    if llm["gate"] is not None:  # the tool loop's gate also asks a number-free answer to quote its sources
        assert "quoted" in llm["gate"]["checks"]
    if llm["answer_status"] == "answered":
        assert llm["gate"]["passed"] and all(n["source"] for n in llm["gate"]["numbers"])
    else:
        assert llm["answer"].startswith("could not answer") and llm["reasons"]

    # every item done in the ledger; a rerun skips them all without an LLM call
    state = Ledger(loaded, "Report").state(cleanup)
    assert [state[i]["status"] for i in cleanup] == ["done"] * 3
    calls = client.usage.calls
    again = reports.run_batch(questions, ctx, out)
    assert again.skipped == 3 and again.done == 0 and client.usage.calls == calls

    # the two-stage reader's report of the same question has its own id and files
    two = reports.ReportContext(loaded, rsettings, client, ctx.embedder, "none")
    q = questions[0]
    assert reports.report_stem(q, two) != reports.report_stem(q, ctx)
    assert reports.input_digest(q, two, []) != reports.input_digest(q, ctx, [])


def test_the_cli_runs_the_agent_reader_and_exits_0_when_a_question_is_not_answered(
    loaded, rsettings, cleanup, tmp_path
):
    batch = _batch(tmp_path, QUESTIONS[:2])
    got = api.report_batch(batch, out=tmp_path / "r", system="none", reader="agent", graph=loaded, settings=rsettings)
    assert got.reader == "agent" and got.summary.failed == [] and got.summary.unanswered == 1
    assert {r["measure"]: r["value"] for r in got.summary.rows()}["answered by the agent (gate passed)"] == 1
    with pytest.raises(ValueError, match="unknown reader"):
        reports.ReportContext(loaded, rsettings, None, None, "none", reader="three-stage")  # type: ignore[arg-type]


def test_the_reader_route_runs_the_thought_and_walks_the_answer_back_to_its_xbrl_facts(loaded, rsettings, tmp_path):
    """``--reader reader-calc``'s LLM route with a reader whose text is fixed (what the tuned reader writes: a
    ``calculate`` thought and its own, wrong, number): the answer is the tool's number, each operand names its XBRL
    fact, and ``(:AgentRun)-[:STEP]->(:Step {tool: 'calculate'})-[:USED]->(:Fact)`` reaches both facts."""
    ca = gold(JNJ_ADSH, "AssetsCurrent", "20090630", 0)
    cl = gold(JNJ_ADSH, "LiabilitiesCurrent", "20090630", 0)
    ctx = reports.ReportContext(loaded, rsettings, None, make_embedder(minilm_dir()), "none", reader="reader-calc")
    q = reports.load_questions(_batch(tmp_path, [QUESTIONS[2]]))[0]
    found, _, _ = ctx.facts_with_calls(q)
    xbrl = [f for f in found if not f.id.startswith("measure:")]  # the filing's own facts, not the engine's measures
    shown = [f for f in xbrl if any(same_number(n, ca) or same_number(n, cl) for n in f.numbers)][:2]
    assert len(shown) == 2 and all(f.cites for f in shown)
    text = f"Thought: {calculate_call('n1 - n2', {'n1': ca, 'n2': cl})}\nAnswer: USD 15,603,000,000"
    seen = []

    def reader(question, facts, repair):
        seen.append((question, list(facts), repair))
        return text

    client = client_from_settings(rsettings)
    got = read_question(
        loaded,
        client,
        q.question,
        "report:t-reader-route",
        as_of="2009-09-30",
        companies=q.companies,
        facts=shown,
        thought=reader,
    )
    assert seen == [(q.question, [f.text for f in shown], None)] and client.usage.calls == 0
    assert got.route == "reader" and got.status == "answered" and got.answer == f"USD {ca - cl:.0f}"
    assert got.derivation["result"] == ca - cl
    assert [o["fact_key"][: len(JNJ_ADSH)] for o in got.derivation["operands"].values()] == [JNJ_ADSH] * 2
    assert [s.tool for s in got.run.steps] == ["llm", "calculate", "gate"] and got.run.props["route"] == "reader"
    write_runs(loaded, [got.run])
    try:
        walked = loaded.read(
            "MATCH (:AgentRun {id: $run})-[:STEP]->(:Step {tool: 'calculate'})-[:USED]->(f:Fact) "
            "RETURN f.value AS v ORDER BY v DESC",
            {"run": got.run.id},
        )
        assert [r["v"] for r in walked] == [ca, cl]
    finally:
        delete_runs(loaded, [got.run.id])


def test_the_reader_calc_batch_writes_gated_agent_reports_beside_the_agents(loaded, rsettings, tmp_path):
    """The pipeline end to end with SmolLM2 as the reader (untuned and tiny: what is asserted is the mechanics, and
    that a returned answer carries no number the gate cannot trace)."""
    out = tmp_path / "reports"
    batch = _batch(tmp_path, [QUESTIONS[2]])
    got = api.report_batch(batch, out=out, system="none", reader="reader-calc", graph=loaded, settings=rsettings)
    rid = "report:t-agent-llm:none:reader-calc"
    qwen_adapter = ROOT / "data" / "adapters" / "qwen2.5-coder-1.5b-tatqa-reader" / "adapter.gguf"
    with pytest.raises(AdapterBaseMismatch, match=r"qwen2\.5-coder.*SmolLM2"):  # refused before any report
        api.report_batch(
            batch,
            out=tmp_path / "refused",
            reader="reader-calc",
            adapter=qwen_adapter,
            graph=loaded,
            settings=rsettings,
        )
    remote = load_settings(
        llm_backend="openai", llm_base_url="http://127.0.0.1:9/v1", llm_model="m", embedding_model_path=minilm_dir()
    )
    with pytest.raises(ConfigError, match="does not apply a LoRA adapter"):  # never silently untuned
        api.report_batch(
            batch, out=tmp_path / "refused", reader="reader-calc", adapter=qwen_adapter, graph=loaded, settings=remote
        )
    assert not (tmp_path / "refused").exists()
    try:
        assert got.reader == "reader-calc" and got.summary.failed == [] and got.summary.done == 1
        rec = json.loads((out / "t-agent-llm.none.reader-calc.json").read_text())
        assert rec["reader"] == "reader-calc" and rec["route"] == "reader" and rec["report_id"] == rid
        assert rec["calls"]["agent"]["llm_calls"] in (1, 2) and rec["steps"][0]["tool"] == "llm"
        if rec["answer_status"] == "answered":
            assert rec["gate"]["passed"] and all(n["source"] for n in rec["gate"]["numbers"])
        else:
            assert rec["answer"].startswith("could not answer") and rec["reasons"]
        node = loaded.read("MATCH (r:Report {id: $id})-[:ANSWERED_BY]->(a:AgentRun) RETURN r.reader AS r", {"id": rid})
        assert node == [{"r": "reader-calc"}]
        assert "reader `reader-calc` (reader)" in (out / "t-agent-llm.none.reader-calc.md").read_text()
        assert "reader: 'reader-calc'" in api.report_browser_query("reader-calc")  # what the CLI prints
        assert len(loaded.read(api.report_browser_query("reader-calc"))) >= len(rec["steps"]) >= 1
        assert rec["calls"]["agent"]["seconds"] > 0
    finally:
        loaded.write(
            "MATCH (r:Report {id: $id}) OPTIONAL MATCH (r)-[:ANSWERED_BY]->(a:AgentRun) "
            "OPTIONAL MATCH (a)-[:STEP]->(s:Step) DETACH DELETE s, a, r",
            {"id": rid},
        )


def test_a_tool_runs_derivation_names_each_operands_fact(loaded):
    """The LLM route's derivation (no LLM needed: the tools' results are what it is built from)."""
    ca = gold(JNJ_ADSH, "AssetsCurrent", "20090630", 0)
    cl = gold(JNJ_ADSH, "LiabilitiesCurrent", "20090630", 0)
    looked = facts.fact_lookup(loaded, "200406", "CurrentAssets", "2009-06-30", as_of="2009-09-30")
    f_cl = FinancialFact("fact-cl", f"Current liabilities were USD {cl:,.0f}.", (cl,), "USD", "2009-06-30", "x", "t")
    calc = arithmetic.calculate("ca - cl", {"ca": ca, "cl": cl})
    d = derivation_of([looked, calc], [f_cl])
    assert d["result"] == ca - cl and d["expression"] == "ca - cl"
    assert d["operands"]["ca"]["fact_key"].startswith(f"{JNJ_ADSH}:AssetsCurrent:")  # from the lookup
    assert d["operands"]["cl"]["fact_id"] == "fact-cl" and d["operands"]["cl"]["fact_key"] is None  # from F
    stray = arithmetic.calculate("a * 2", {"a": 7.0})
    assert derivation_of([stray], [])["operands"]["a"] == {"value": 7.0, "fact_key": None}
    assert derivation_of([], []) == {} and derivation_of([arithmetic.calculate("1 / 0", {})], []) == {}
    growth = facts.ratio(loaded, "growth", "200406", "2009-06-30", concept="Revenues", as_of="2009-09-30")
    g = derivation_of([growth], [])
    assert g["formula"] and all(o["fact_key"].startswith(JNJ_ADSH) for o in g["operands"].values())


def test_a_tuned_models_id_keeps_its_adapter_tag_when_shortened():
    """Reports and the CLI title show the model id cut short; a LoRA-tuned model's tag must survive the cut."""
    from finkg.output import short_model_id

    tuned = "gguf:cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046+lora:ed7bdee79520eb12"
    assert short_model_id(tuned, 24) == "gguf:cc324af070c2ecbfd32+lora:ed7bdee79520eb12"
    assert short_model_id(tuned.split("+")[0], 24) == "gguf:cc324af070c2ecbfd32"


def test_the_llm_sees_every_tools_json_schema_and_may_only_name_them():
    tools = registry.registry(None)
    prompt = system_prompt(tools)
    for name, tool in tools.items():
        assert f"- {name}: {json.dumps(tool.schema, separators=(',', ':'))}" in prompt
    action = action_schema(tools)["properties"]
    assert action["tool"]["enum"] == [*tools, "answer"]
    assert [set(a["properties"]) for a in action["arguments"]["anyOf"]] == [
        *(set(t.schema["properties"]) for t in tools.values()),
        {"answer"},
    ]
