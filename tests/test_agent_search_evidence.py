"""The agent's ``search_evidence(query, as_of)`` tool (generation/agent/evidence.py) against the real Neo4j: the
retrieval contract point in time, as tests/test_retrieval_contract.py checks the retrievers themselves.

Per kind (a chunk, a triple, an indicator fact, a company fact): the item dated after ``as_of`` never appears, the
earlier one does (so each test can fail), the question's date caps the LLM's ``as_of``, and the call is stored as a
Step linked to the chunks, observations and facts it returned. Gold times are the data's own (the tweets'
timestamps written here, CF Industries' EDGAR acceptances read in tests/test_retrieval_contract.py).
"""

from __future__ import annotations

import json
import uuid

import pytest
from test_retrieval_contract import CF, CF_10Q, CF_10QA, QUARTER

from finkg.pipelines import sec as pipelines
from generation.agent import registry
from generation.agent.evidence import SEARCH_EVIDENCE_SCHEMA, ScopedRetriever, search_evidence
from generation.agent.trajectory import RunRecord, delete_runs, read_run, tool_step, write_runs
from retrieval.facts.fact_map import list_filings
from retrieval.facts.lookup import CompanyFactRetriever, IndicatorFactRetriever
from retrieval.knowledge import KnowledgeRetriever
from retrieval.text.hybrid import HybridIndex
from retrieval.triples.tfr import Triple, TripleIndex

EARLY, LATE = "2015-01-01T14:00:00Z", "2015-02-01T14:00:00Z"
AS_OF = "2015-01-15"


@pytest.fixture
def world(graph, label, embedder):
    """Two tweets a month apart (chunks), a triple sourced from each, an indicator with an observation on each
    date; returns ``(name, sources)``."""
    name = f"se{uuid.uuid4().hex[:8]}"
    texts = {
        "early": "Apple shares rise after record iPhone sales in the holiday quarter",
        "late": "Apple shares fall after an iPhone sales warning for the next quarter",
    }
    rows = [
        {"id": f"{name}:{k}", "at": at, "text": texts[k], "doc": f"{name}:doc:{k}"}
        for k, at in (("early", EARLY), ("late", LATE))
    ]
    graph.write(
        f"UNWIND $rows AS r CREATE (d:Document:{label} {{id: r.doc, corpus: $corpus, source_family: 'social', "
        "published_at: r.at}) "
        f"CREATE (d)-[:HAS_CHUNK]->(:Chunk:{label} {{id: r.id, corpus: $corpus, kind: 'text', text: r.text, "
        "document_id: r.doc, source_family: 'social', available_at: r.at})",
        {"rows": rows, "corpus": name},
    )
    graph.write(
        f"CREATE (i:Indicator:{label} {{code: $code, name: 'Apple test yield', unit: '%', frequency: 'daily', "
        "category: 'yield', source_function: 'test'}) WITH i UNWIND $obs AS o "
        f"CREATE (i)-[:HAS_OBSERVATION]->(:Observation:{label} {{id: $code + ':' + o.day, date: date(o.day), "
        "value: o.value, available_at: o.at})",
        {
            "code": name,
            "obs": [
                {"day": "2015-01-01", "value": 3.51, "at": EARLY},
                {"day": "2015-02-01", "value": 3.73, "at": LATE},
            ],
        },
    )
    triples = [
        Triple(f"{name}:t-early", "RAISE", "iphone sales", "apple shares", "h1", "t1", "c1", f"{name}:early", EARLY),
        Triple(
            f"{name}:t-late", "LOWER", "iphone sales warning", "apple shares", "h2", "t2", "c1", f"{name}:late", LATE
        ),
    ]
    index = TripleIndex(triples, embedder.encode([t.text for t in triples]), embedder, undated="drop")
    sources = [
        IndicatorFactRetriever(graph, codes=[name]),
        KnowledgeRetriever("dense-triples", k=5, triples=index),
        HybridIndex.from_graph(graph, embedder, corpus=name, kinds=None),
    ]
    return name, sources


def test_nothing_later_than_as_of_appears_and_everything_earlier_can(world):
    name, sources = world
    early = search_evidence(sources, "Apple shares iPhone sales test yield", AS_OF, k=10)
    assert early.ok, early.error
    ids = {i["id"] for i in early.value}
    assert {f"{name}:early", f"{name}:t-early", f"akshare:{name}:2015-01-01:level"} <= ids
    assert not any("late" in i or "2015-02-01" in i for i in ids)
    assert all(i["available_at"] <= f"{AS_OF}T23:59:59Z" for i in early.value)
    assert early.detail["as_of"] == f"{AS_OF}T23:59:59Z"
    assert {i["kind"] for i in early.value} == {"fact", "triple", "chunk"}
    # what the gate may trace: only what was returned
    assert any(abs(n - 3.51) < 1e-9 for n in early.numbers) and not any(abs(n - 3.73) < 1e-9 for n in early.numbers)
    # the links a Step gets: the chunk itself, the triple's source chunk, the fact's observation
    assert early.detail["used"]["Chunk"] == [f"{name}:early"]
    assert early.detail["used"]["Observation"] == [f"{name}:2015-01-01"]
    later = search_evidence(sources, "Apple shares iPhone sales test yield", "2015-03-01", k=10)
    assert {f"{name}:late", f"{name}:t-late"} <= {i["id"] for i in later.value}  # the filter, not the data


def test_the_questions_date_caps_the_llms_as_of(world):
    name, sources = world
    capped = search_evidence(sources, "Apple shares iPhone sales", "2015-03-01", k=10, ceiling=AS_OF)
    assert capped.ok and capped.detail["as_of"] == f"{AS_OF}T23:59:59Z"
    assert not any(i["available_at"] > f"{AS_OF}T23:59:59Z" for i in capped.value)
    assert f"{name}:late" not in {i["id"] for i in capped.value}


def test_the_tool_is_deterministic_bounded_and_reports_bad_input_as_errors(world):
    _, sources = world
    a = search_evidence(sources, "Apple shares iPhone sales", AS_OF, k=2)
    b = search_evidence(sources, "Apple shares iPhone sales", AS_OF, k=2)
    assert a.value == b.value and len(a.value) == 2
    assert "as_of must be a date" in (search_evidence(sources, "Apple", "mid-January").error or "")
    assert "query must be" in (search_evidence(sources, "  ", AS_OF).error or "")
    assert "k must be" in (search_evidence(sources, "Apple", AS_OF, k=50).error or "")
    assert search_evidence([], "Apple", AS_OF).value == []


def test_the_llm_sees_its_schema_and_calls_it_through_the_registry(world, graph):
    _, sources = world
    tools = registry.registry(graph, as_of=AS_OF, sources=sources)
    assert tools["search_evidence"].schema is SEARCH_EVIDENCE_SCHEMA
    assert set(SEARCH_EVIDENCE_SCHEMA["required"]) == {"query", "as_of"}
    got = registry.call(tools, "search_evidence", {"query": "Apple shares", "as_of": "2015-03-01"})
    assert got.ok and got.detail["as_of"] == f"{AS_OF}T23:59:59Z"  # bound to the question's date
    assert "unknown ['when']" in (registry.call(tools, "search_evidence", {"query": "x", "when": "y"}).error or "")
    assert "search_evidence" not in registry.registry(graph, as_of=AS_OF)  # offered only with sources


def test_a_call_is_a_step_linked_to_the_chunks_and_observations_it_returned(world, graph):
    name, sources = world
    got = search_evidence(sources, "Apple shares iPhone sales test yield", AS_OF, k=10)
    run = RunRecord(f"test-search:{name}", "q", None, "not run", "m", steps=[tool_step(got)])
    try:
        write_runs(graph, [run])
        stored = read_run(graph, run.id)
        assert stored is not None
        step = stored["steps"][0]
        assert step["tool"] == "search_evidence" and json.loads(step["output"])["detail"]["returned"] == len(got.value)
        assert set(step["used"]) == {f"{name}:early", f"{name}:2015-01-01"}
    finally:
        delete_runs(graph, [run.id])


@pytest.fixture(scope="module")
def loaded(graph, settings):
    if len(list_filings(graph, source=QUARTER.name)) != 435:
        pipelines.ingest_sec(graph, settings, [QUARTER])
    return graph


def test_a_later_filings_facts_never_appear_before_its_acceptance(loaded):
    facts = [ScopedRetriever(CompanyFactRetriever(loaded), {"companies": [str(CF)]})]
    early = search_evidence(facts, "CF Industries current assets liabilities", "2009-08-04", k=10)
    assert early.ok and early.value and all(CF_10Q in i["id"] and CF_10QA not in i["id"] for i in early.value)
    assert {i["available_at"] for i in early.value} == {"2009-08-03T18:58:00Z"}
    assert early.detail["used"]["Fact"] and all(k.startswith(CF_10Q) for k in early.detail["used"]["Fact"])
    later = search_evidence(facts, "CF Industries current assets liabilities", "2009-08-06", k=10)
    assert later.value and all(CF_10QA in i["id"] for i in later.value)
    # a second before the 10-Q's acceptance there is nothing
    assert search_evidence(facts, "CF Industries current assets", "2009-08-03T18:57:59Z").value == []
