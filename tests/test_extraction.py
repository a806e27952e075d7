"""Triple extraction end to end (seed 004, section 3.1) on real FOMC statements in the real Neo4j,
with a real model (SmolLM2-135M-Instruct through llama.cpp: weak, but every path of the pipeline
runs for real: constrained JSON, repairs, checks, verification, writes, cache, resume).

What users rely on: every chunk gets a record; every proposed triple ends kept, fixed or dropped
with a reason (none vanishes); relationships carry their source chunk; a rerun costs no LLM call
and writes nothing; an interrupted run resumes; a truncated answer is recorded, not lost.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_llm import smol_gguf

from finkg.config import load_settings
from finkg.pipelines import kg_build as extraction
from finkg.pipelines import text as text_ingest
from generation.kgbuild import schema as kg_schema
from generation.kgbuild.extraction import overlap
from generation.llm import BudgetExceeded, client_from_settings
from kg import cypher

ROOT = Path(__file__).resolve().parents[1]
STATEMENTS = [ROOT / "data" / "fomc-statements" / "statements" / f"{d}.txt" for d in ("19940204", "20070810")]
DOCS = ["fomc:statement:" + p.stem for p in STATEMENTS]


def _settings(cache_dir, **kw):
    return load_settings(
        llm_backend="llama-cpp", llm_model_path=smol_gguf(), llm_n_ctx=4096, llm_cache_dir=cache_dir, **kw
    )


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    """One LLM cache for the module: a prompt answered once is not asked again by a later test."""
    return tmp_path_factory.mktemp("llm-cache")


@pytest.fixture(scope="module")
def model_id(graph, tmp_path_factory):
    """SmolLM2's model id, with no extraction of it in the graph before and after the module (every one of
    them, and entities left without relationships, are deleted: on the suite's own server, tests/conftest.py,
    they are this run's)."""
    s = _settings(tmp_path_factory.mktemp("ids"))
    text_ingest.ingest_text(graph, s, STATEMENTS)
    mid = client_from_settings(s).model_id
    graph.run_autocommit(cypher.DELETE_EXTRACTIONS_OF_MODEL, {"model_id": mid})
    yield mid
    graph.run_autocommit(cypher.DELETE_EXTRACTIONS_OF_MODEL, {"model_id": mid})


def records(graph, mid, verify=True):
    suffix = extraction.extraction_suffix(kg_schema.schema_version(), mid, verify)
    return graph.read(cypher.EXTRACTION_RECORDS_OF_DOCUMENTS, {"documents": DOCS, "suffix": suffix})


def relationships(graph, mid):
    return graph.read(
        "MATCH (h:Entity)-[r]->(t:Entity) WHERE r.model_id = $m "
        "OPTIONAL MATCH (c:Chunk {id: r.chunk_id}) "
        "RETURN type(r) AS type, r.id AS id, r.chunk_id AS chunk, c IS NOT NULL AS chunk_exists, "
        "h.type AS ht, t.type AS tt, r.verification AS verification ORDER BY id",
        {"m": mid},
    )


def test_every_chunk_is_extracted_verified_and_written_with_provenance(graph, model_id, shared_cache):
    s = _settings(shared_cache)
    client = client_from_settings(s)
    summary = extraction.extract(graph, s, client, documents=DOCS)
    recs = records(graph, model_id)
    assert recs and all(r["record"] and r["record"]["status"] == "done" for r in recs)
    assert summary.chunks == len(recs) and summary.calls == client.usage.calls > 0
    for r in (x["record"] for x in recs):
        # no candidate vanishes: each proposal got a verdict (kept, fixed or dropped with a reason)
        assert r["n_kept"] + r["n_fixed"] + r["n_dropped"] == r["n_proposed"]
        for v in json.loads(r["verdicts"]):
            assert v["decision"] in ("keep", "fix", "drop") and (v["decision"] == "keep" or v["reason"])
        for rej in json.loads(r["rejected"]):
            assert rej["reason"]
    rels = relationships(graph, model_id)
    assert {x["type"] for x in rels} <= set(kg_schema.RELATIONSHIP_TYPES.values())
    assert all(
        x["chunk_exists"]
        and x["ht"] in kg_schema.ENTITY_CODES
        and x["tt"] in kg_schema.ENTITY_CODES
        and x["verification"] in ("keep", "fix")
        for x in rels
    )
    kept = sum(r["record"]["n_kept"] + r["record"]["n_fixed"] for r in recs)
    assert len(rels) <= kept and summary.relationships_written == len(rels)
    schema_rows = graph.read(
        "MATCH (k:KGSchema {version: $v}) RETURN k.entity_types AS types", {"v": kg_schema.schema_version()}
    )
    assert schema_rows[0]["types"] == list(kg_schema.ENTITY_CODES)

    # a rerun: every chunk is done, so nothing is asked of the LLM and nothing is written
    again = extraction.extract(graph, s, client_from_settings(s), documents=DOCS)
    assert again.chunks == 0 and again.calls == 0
    # redo with the cache: the same answers come from disk, the graph does not change
    redo_client = client_from_settings(s)
    redo = extraction.extract(graph, s, redo_client, documents=DOCS, redo=True)
    assert redo_client.usage.calls == 0 and redo_client.usage.cache_hits == summary.calls
    assert redo.relationships_written == 0 and relationships(graph, model_id) == rels


def test_an_interrupted_run_resumes_where_it_stopped(graph, model_id, shared_cache, tmp_path):
    full = _settings(shared_cache)
    extraction.extract(graph, full, client_from_settings(full), documents=DOCS, verify=False)
    wanted = {r["chunk"]: r["record"]["proposed"] for r in records(graph, model_id, verify=False)}
    graph.run_autocommit(cypher.DELETE_EXTRACTIONS_OF_MODEL, {"model_id": model_id})

    # commits after every chunk; the budget (about one call of SmolLM2 here) stops the run after a chunk
    s = _settings(tmp_path / "b", llm_budget_tokens=1000, extract_batch_chunks=1)
    with pytest.raises(BudgetExceeded):
        extraction.extract(graph, s, client_from_settings(s), documents=DOCS, verify=False)
    partial = [r for r in records(graph, model_id, verify=False) if r["record"]]
    assert 0 < len(partial) < len(wanted)
    resumed = _settings(tmp_path / "b")  # the same cache, no budget
    extraction.extract(graph, resumed, client_from_settings(resumed), documents=DOCS, verify=False)
    after = {r["chunk"]: r["record"]["proposed"] for r in records(graph, model_id, verify=False)}
    assert after == wanted  # same model, same prompts, temperature 0: the same triples
    assert all(r["record"]["status"] == "done" for r in records(graph, model_id, verify=False))


def chunk_relationships(graph, extraction_id):
    return graph.read(
        "MATCH (:Entity)-[r]->(:Entity) WHERE r.extraction_id = $x RETURN r.id AS id, r.sentence AS sentence",
        {"x": extraction_id},
    )


def test_the_ledger_remakes_a_changed_chunk_and_a_record_from_before_it_without_llm_calls(
    graph, model_id, shared_cache
):
    s = _settings(shared_cache)
    extraction.extract(graph, s, client_from_settings(s), documents=DOCS, verify=False)
    by_doc: dict[str, list[dict]] = {}
    for r in records(graph, model_id, verify=False):
        by_doc.setdefault(r["document"], []).append(r)
    assert all(len(r["record"]["input_digest"]) == 64 for rs in by_doc.values() for r in rs)
    # the chunk to change: the last of its statement (no later chunk overlaps it) with triples
    lasts = [(d, rs[-1], chunk_relationships(graph, rs[-1]["record"]["id"])) for d, rs in by_doc.items()]
    doc, changed, before = next(((d, c, b) for d, c, b in lasts if b), (None, None, []))
    assert doc is not None and changed is not None, "a statement's last chunk has triples (SmolLM2, temperature 0)"
    legacy = next(r for rs in by_doc.values() for r in rs if r["chunk"] != changed["chunk"])
    dropped = before[0]["sentence"]
    # a record written before the ledger has no input digest; a chunk whose sentences were split anew (one
    # sentence that gave a triple is gone)
    graph.run_autocommit("MATCH (x:Extraction {id: $id}) REMOVE x.input_digest", {"id": legacy["record"]["id"]})
    shorter = [x for x in changed["sentences"] if x != dropped]
    graph.run_autocommit("MATCH (c:Chunk {id: $id}) SET c.sentences = $s", {"id": changed["chunk"], "s": shorter})
    try:
        client = client_from_settings(s)
        remade = extraction.extract(graph, s, client, documents=DOCS, verify=False)
        # exactly those two, and every sentence answered from the memo of what was extracted before
        assert remade.chunks == 2 and client.usage.calls == 0 and remade.sentences_reused > 0
        after = {r["chunk"]: r["record"] for r in records(graph, model_id, verify=False)}
        previous = by_doc[doc][-2]["sentences"] if len(by_doc[doc]) > 1 else None
        assert after[changed["chunk"]]["input_digest"] == extraction.chunk_digest(
            shorter, overlap(previous, shorter), s.extract.content_filter
        )
        assert after[changed["chunk"]]["attempts"] == changed["record"]["attempts"] + 1
        assert after[legacy["chunk"]]["input_digest"] == legacy["record"]["input_digest"]
        assert after[legacy["chunk"]]["proposed"] == legacy["record"]["proposed"]
        # the triples of the sentence that is gone are gone, and only those
        now = chunk_relationships(graph, changed["record"]["id"])
        assert dropped not in {r["sentence"] for r in now}
        assert remade.relationships_deleted == len({r["id"] for r in before} - {r["id"] for r in now}) > 0
        assert extraction.extract(graph, s, client_from_settings(s), documents=DOCS, verify=False).chunks == 0
    finally:
        graph.run_autocommit(
            "MATCH (c:Chunk {id: $id}) SET c.sentences = $s", {"id": changed["chunk"], "s": changed["sentences"]}
        )
    # restored: made again; only the sentence no stored record holds any more (the remade record replaced the
    # chunk's record) is asked, on its own
    restored = extraction.extract(graph, s, client_from_settings(s), documents=DOCS, verify=False)
    assert restored.chunks == 1 and restored.sentences_sent == 1 and restored.sentences_reused > 0


def test_a_truncated_answer_is_recorded_not_lost(graph, model_id, shared_cache):
    s = _settings(shared_cache, extract_max_tokens=16)
    extraction.extract(graph, s, client_from_settings(s), documents=DOCS[:1], verify=False, redo=True)
    recs = [r["record"] for r in records(graph, model_id, verify=False) if r["chunk"] and r["record"]]
    repaired = [x for r in recs for x in json.loads(r["repairs"])] + [
        x for r in recs for x in json.loads(r["failures"])
    ]
    assert repaired and all(x["raw"] for x in repaired)  # the raw (cut) answers are kept


def test_record_ids_change_with_the_model_and_the_verification_mode():
    a = extraction.extraction_suffix("kgs-1", "gguf:aa", True)
    assert a != extraction.extraction_suffix("kgs-1", "gguf:bb", True)
    assert a != extraction.extraction_suffix("kgs-1", "gguf:aa", False)
    assert a != extraction.extraction_suffix("kgs-2", "gguf:aa", True)
