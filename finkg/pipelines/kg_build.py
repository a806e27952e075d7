"""``finkg extract``: the knowledge graph built from the text chunks in Neo4j (seed 004, section 3.1).

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, section 3.1 (schema definition, few-shot triple
extraction, LLM verification of each triple against its source text) and Appendix B.1 (the schema).
The passes themselves are :class:`generation.kgbuild.extraction.TripleExtractor`; this module reads the
chunks, schedules the passes, and writes the results in batches.

Graph written:

- ``(:KGSchema {version, document})``: the schema and few-shot examples the extraction used;
- ``(:Extraction {id: "<chunk id>:<suffix>", ...})-[:FROM_CHUNK]->(:Chunk)`` per chunk, an entry of the item
  ledger (:mod:`kg.ledger`: ``status`` ``proposed`` (the checkpoint between the two passes) or ``done``,
  ``input_digest`` of the chunk's sentences, ``attempts``, ``ledger_at``), holding the proposed, rejected,
  verified and dropped triples with reasons, failed calls with their raw answers, and token counts.
  ``suffix`` = schema version : model identity : ``v`` (verified) or ``nv`` (``--no-verify``): the same
  chunk, schema and model is extracted once; a changed schema or model extracts again, and so does a chunk
  whose input digest changed (its sentences split anew, its overlap with the previous chunk, the content
  filter switched). A record written before the ledger (no digest) is made again from the sentence memo,
  without an LLM call for a sentence it holds;
- ``(:Entity {id, name, type})`` and typed relationships ``AFFECT | INDICATE | BELONG_TO | EQUAL_TO |
  MAY_LEAD_TO {id, chunk_id, sentence, verified, verification, ...}`` between them, and
  ``(:Chunk)-[:MENTIONS]->(:Entity)``.

Scheduling: every pending chunk's extraction calls run first, then every verification call (two
phases, each with one shared prompt prefix, so llama.cpp reuses its KV cache); each phase commits
every ``batch_chunks`` chunks, so an interrupted run resumes where it stopped (a chunk whose
proposals are stored from the same input digest goes straight to verification; the LLM cache makes
repeated calls free).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from finkg.config import Settings
from generation.kgbuild import schema as kg_schema
from generation.kgbuild.extraction import ChunkExtraction, SentenceMemo, Triple, TripleExtractor, overlap
from generation.kgbuild.names import entity_id
from generation.kgbuild.resolution import write_entities, write_relations
from kg import BatchWriter, Graph, batches, cypher
from kg.ledger import DONE, Ledger, at_stage, digest, is_pending
from kg.progress import StageProgress

PROPOSED = "proposed"
"""The ledger stage of a chunk whose proposals are stored and whose verification and writes are not done."""


def extraction_suffix(schema_version: str, model_id: str, verify: bool) -> str:
    """``<schema version>:<sha256(model id)[:12]>:<v|nv>``: what an (:Extraction) id adds to its chunk id."""
    model = hashlib.sha256(model_id.encode()).hexdigest()[:12]
    return f"{schema_version}:{model}:{'v' if verify else 'nv'}"


def chunk_digest(sentences: Sequence[str], skip_first: int, content_filter: bool) -> str:
    """The ledger input digest of one chunk's extraction (sha256 hex): its sentences, how many of them it
    shares with the previous chunk (not sent) and whether the content filter chose what is sent."""
    return digest({"sentences": list(sentences), "skip_first": skip_first, "content_filter": content_filter})


def store_schema(graph: Graph) -> str:
    """Write the schema as ``(:KGSchema {version})`` (idempotent); returns the version."""
    version = kg_schema.schema_version()
    doc = kg_schema.schema_document()
    graph.write(
        cypher.MERGE_KG_SCHEMA,
        {
            "version": version,
            "document": json.dumps(doc, ensure_ascii=False),
            "entity_types": list(kg_schema.ENTITY_CODES),
            "relations": list(kg_schema.RELATION_CODES),
        },
    )
    return version


@dataclass
class ExtractSummary:
    """Totals of one ``finkg extract`` run (the closing table)."""

    chunks: int = 0
    sentences_sent: int = 0
    sentences_skipped: int = 0
    sentences_reused: int = 0
    verdicts_reused: int = 0
    proposed: int = 0
    rejected: int = 0
    verified: int = 0
    fixed: int = 0
    dropped: int = 0
    failures: int = 0
    repaired: int = 0
    entities_written: int = 0
    relationships_written: int = 0
    relationships_deleted: int = 0
    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    drop_reasons: dict[str, int] = field(default_factory=dict)

    def rows(self) -> list[dict[str, Any]]:
        """The closing table, one ``{"measure", "value"}`` row per total (reads well in a narrow terminal)."""
        rate = self.completion_tokens / self.seconds if self.seconds else 0.0
        values = {
            "chunks to do": self.chunks,
            "sentences sent": self.sentences_sent,
            "sentences skipped (boilerplate, overlap)": self.sentences_skipped,
            "sentences reused (identical sentence extracted before)": self.sentences_reused,
            "triples proposed": self.proposed,
            "rejected by the checks": self.rejected,
            "verified (kept or fixed)": self.verified,
            "of which fixed": self.fixed,
            "dropped": self.dropped,
            "verdicts reused": self.verdicts_reused,
            "failed calls (raw answer recorded)": self.failures,
            "repaired answers": self.repaired,
            "entities written": self.entities_written,
            "relationships created": self.relationships_written,
            "relationships deleted (a remade chunk no longer has them)": self.relationships_deleted,
            "LLM calls": self.calls,
            "answered from the cache": self.cached_calls,
            "tokens in / out": f"{self.prompt_tokens} / {self.completion_tokens}",
            "completion tokens/s": f"{rate:.1f}",
            "seconds": f"{self.seconds:.1f}",
        }
        return [{"measure": k, "value": v} for k, v in values.items()]


def _record_rows(
    done: Sequence[tuple[dict[str, Any], ChunkExtraction]], suffix: str, status: str, schema_version: str, model_id: str
) -> list[dict[str, Any]]:
    """Ledger rows (:meth:`kg.ledger.Ledger.record`) of chunks at ``status``, the record's fields beside."""
    return [
        {
            "id": f"{c['id']}:{suffix}",
            "status": status,
            "input_digest": c["input_digest"],
            "chunk_id": c["id"],
            "document_id": c["document"],
            "suffix": suffix,
            "schema_version": schema_version,
            "model_id": model_id,
            **ex.record(),
        }
        for c, ex in done
    ]


def _graph_rows(
    chunk: dict[str, Any], ex: ChunkExtraction, verify: bool, suffix: str, schema_version: str, model_id: str
) -> tuple[list[dict], list[dict]]:
    """Entity rows (``type``, ``name``) and relationship rows (``type``, ``head``, ``tail``, ``id``,
    ``props``) for one chunk's accepted triples, in the shapes of :mod:`generation.kgbuild.resolution`."""
    entities: list[dict] = []
    rels: list[dict] = []
    decisions = {v.triple: v for v in ex.verdicts if v.triple is not None}
    sentences = chunk["sentences"]
    for t in ex.accepted(verify):
        head, tail = entity_id(t.head_type, t.head), entity_id(t.tail_type, t.tail)
        entities += [{"type": t.head_type, "name": t.head}, {"type": t.tail_type, "name": t.tail}]
        rel_type = kg_schema.RELATIONSHIP_TYPES[t.relation]
        verdict = decisions.get(t)
        rels.append(
            {
                "type": rel_type,
                "head": head,
                "tail": tail,
                "id": hashlib.sha256(f"{chunk['id']}|{head}|{rel_type}|{tail}".encode()).hexdigest()[:20],
                "props": {
                    "chunk_id": chunk["id"],
                    "sentence_index": t.sentence,
                    "sentence": sentences[t.sentence] if t.sentence < len(sentences) else None,
                    "head_text": t.head,
                    "tail_text": t.tail,
                    "verified": bool(verify and verdict),
                    "verification": verdict.decision if verdict else "unverified",
                    "verification_reason": (verdict.reason or None) if verdict else None,
                    "schema_version": schema_version,
                    "model_id": model_id,
                    "extraction_id": f"{chunk['id']}:{suffix}",
                },
            }
        )
    return entities, rels


def extract(
    graph: Graph,
    settings: Settings,
    client: Any,
    *,
    families: Sequence[str] | None = None,
    documents: Sequence[str] | None = None,
    limit: int | None = None,
    verify: bool = True,
    redo: bool = False,
    parallel: int | None = None,
    progress: StageProgress | None = None,
    on_pending: Callable[[int], object] | None = None,
) -> ExtractSummary:
    """Extract (and verify) triples from the text chunks in the graph, resumably.

    Args:
        graph: the connection. settings: ``[extract]`` keys (sentences per call, max tokens, batch).
        client: a :class:`generation.llm.LLMClient`; its model identity is part of the record ids.
        families: only chunks of documents of these source families (e.g. ``["central_bank"]``).
        documents: only these Document ids. limit: at most this many pending chunks.
        verify: run the verification pass (seed 004 §3.1 phase 3); ``False`` writes the proposals
            unverified (``verified: false``) under a separate record id.
        redo: re-extract chunks already done (the LLM cache still answers repeated calls).
        parallel: LLM calls in flight at once; the calls of a batch of
            ``[extract] batch_chunks`` chunks go out together, and the result equals a one-at-a-time run
            (None: ``[llm] parallel`` with a backend that serves calls in parallel, else 1).
        progress: ``progress(stage, total)`` returning an ``advance(n, tokens=...)`` callback (chunks
            done, completion tokens they cost: the bar shows chunks/s and tokens/s).
        on_pending: called with the number of chunks this run goes through once they are known, before the first LLM
            call or triple written (it may raise to stop the run: :class:`finkg.cost.BatchCost`).

    Returns:
        :class:`ExtractSummary` of this run.

    Raises:
        LLMUnavailable, BudgetExceeded: from the client; what was committed before stays and a
            rerun resumes after it.
    """
    t0 = time.perf_counter()
    schema_version = store_schema(graph)
    model_id = client.model_id
    suffix = extraction_suffix(schema_version, model_id, verify)
    writer = BatchWriter(graph, batch_size=settings.writer.batch_size)
    ledger = Ledger(graph, "Extraction", settings.writer.batch_size, stages=(PROPOSED,))
    memo = SentenceMemo() if settings.extract.reuse_sentences else None
    if memo is not None and not redo:  # what earlier runs extracted answers identical sentences now
        for r in graph.read(cypher.EXTRACTION_RECORDS_OF_SUFFIX, {"suffix": suffix}):
            memo.add(list(r["sentences"] or []), ChunkExtraction.from_record(r["chunk"], r["record"]))
    extractor = TripleExtractor(
        client,
        sentences_per_call=settings.extract.sentences_per_call,
        max_tokens=settings.extract.max_tokens,
        memo=memo,
        workers=settings.llm.concurrency() if parallel is None else parallel,
        content_filter=settings.extract.content_filter,
    )
    rows = []
    for r in graph.read(
        cypher.TEXT_CHUNKS_FOR_EXTRACTION,
        {
            "families": list(families) if families else None,
            "documents": list(documents) if documents else None,
            "suffix": suffix,
        },
    ):
        r["sentences"] = list(r["sentences"] or [])
        r["skip_first"] = overlap(r["previous_sentences"], r["sentences"])
        r["input_digest"] = chunk_digest(r["sentences"], r["skip_first"], settings.extract.content_filter)
        if is_pending(r["state"], r["input_digest"], redo):
            rows.append(r)
    rows = rows[:limit] if limit is not None else rows
    if on_pending is not None:
        on_pending(len(rows))
    summary = ExtractSummary(chunks=len(rows))
    batch = settings.extract.batch_chunks

    def noop(_n: int, **_fields: object) -> None:
        return None

    def resumable(r: dict[str, Any]) -> bool:  # proposals stored from the same input: verification goes on
        return not redo and at_stage(r["state"], PROPOSED, r["input_digest"])

    # Phase 2 of seed 004 §3.1: few-shot extraction of every chunk not yet proposed.
    todo = [r for r in rows if not resumable(r)]
    proposals: dict[str, ChunkExtraction] = {
        r["id"]: ChunkExtraction.from_record(r["id"], r["record"]) for r in rows if resumable(r)
    }
    # what resumed proposals cost in an earlier run: the closing table counts this run's calls only
    carried = {
        cid: (ex.calls, ex.cached_calls, ex.prompt_tokens, ex.completion_tokens) for cid, ex in proposals.items()
    }
    advance = progress("extract (LLM)", len(todo)) if progress else noop
    for part in batches(todo, batch):
        done = []
        chunks = [(c["id"], c["sentences"], c["skip_first"]) for c in part]
        for c, ex in zip(part, extractor.propose_many(chunks)):
            done.append((c, ex))
            advance(1, tokens=ex.completion_tokens)
        ledger.record(_record_rows(done, suffix, PROPOSED, schema_version, model_id))
        writer.merge_relationships(
            "FROM_CHUNK",
            [{"start": f"{c['id']}:{suffix}", "end": c["id"]} for c, _ in done],
            start=("Extraction", "id"),
            end=("Chunk", "id"),
        )
        proposals.update({c["id"]: ex for c, ex in done})

    # Phase 3: verification of each chunk's proposals, then entities and relationships.
    advance = progress("verify (LLM) + write" if verify else "write", len(rows)) if progress else noop
    for part in batches(rows, batch):
        finished = []
        entities: list[dict] = []
        rels: list[dict] = []
        mentioned: list[tuple[str, str]] = []
        keep: dict[str, list[str]] = {}
        before = {c["id"]: proposals[c["id"]].completion_tokens for c in part}
        if verify:
            extractor.verify_many([(proposals[c["id"]], c["sentences"]) for c in part])
        for c in part:
            ex = proposals[c["id"]]
            if verify:
                advance(1, tokens=ex.completion_tokens - before[c["id"]])
            else:
                advance(1)
            e, r = _graph_rows(c, ex, verify, suffix, schema_version, model_id)
            keep[c["id"]] = [x["id"] for x in r]
            entities += e
            rels += r
            mentioned += [(c["id"], x) for rel in r for x in (rel["head"], rel["tail"])]
            finished.append((c, ex))
        # a chunk made before from another input: what its earlier extraction wrote and this one does not goes
        remade = [
            {"extraction_id": f"{c['id']}:{suffix}", "chunk": c["id"], "keep": keep[c["id"]]}
            for c in part
            if c["state"] is not None
        ]
        if remade:
            summary.relationships_deleted += writer.run_batches(cypher.delete_stale_triples(), remade)
        # entity resolution on write: a name merged earlier lands on its surviving entity
        where = write_entities(graph, entities, batch_size=settings.writer.batch_size)
        for st in write_relations(graph, writer, rels).values():
            summary.relationships_written += st.created
        writer.merge_relationships(
            "MENTIONS",
            [{"start": c, "end": where[e]} for c, e in dict.fromkeys(mentioned)],
            start=("Chunk", "id"),
            end=("Entity", "id"),
        )
        summary.entities_written += len(set(where.values()))
        # the record is marked done last: a crash before this line redoes the chunk (idempotently)
        ledger.record(_record_rows(finished, suffix, DONE, schema_version, model_id))
        for c, ex in finished:
            _add(summary, ex, carried.get(c["id"]))
    summary.seconds = time.perf_counter() - t0
    return summary


def _add(summary: ExtractSummary, ex: ChunkExtraction, carried: tuple[int, int, int, int] | None = None) -> None:
    """Add one chunk to the totals; ``carried`` is what its proposals cost in an earlier run (not counted)."""
    calls, cached, prompt, completion = carried or (0, 0, 0, 0)
    summary.sentences_sent += ex.sentences_sent
    summary.sentences_skipped += ex.sentences_skipped
    summary.sentences_reused += ex.sentences_reused
    summary.verdicts_reused += ex.verdicts_reused
    summary.proposed += len(ex.proposed)
    summary.rejected += len(ex.rejected)
    summary.failures += len(ex.failures)
    summary.repaired += len(ex.repairs)
    summary.calls += ex.calls - calls
    summary.cached_calls += ex.cached_calls - cached
    summary.prompt_tokens += ex.prompt_tokens - prompt
    summary.completion_tokens += ex.completion_tokens - completion
    for v in ex.verdicts:
        if v.decision == "drop":
            summary.dropped += 1
            summary.drop_reasons[v.reason] = summary.drop_reasons.get(v.reason, 0) + 1
        else:
            summary.verified += 1
            summary.fixed += v.decision == "fix"


FOMC_STATEMENT_PREFIX = "fomc:statement:"  # Document id of an FOMC statement (ingest/text/documents.py): + YYYYMMDD


def stored_stages(
    graph: Graph, model_id: str, verify: bool, statements: Sequence[str]
) -> dict[str, dict[str, list[Triple]]]:
    """Per FOMC statement (``YYYYMMDD``) that has stored extraction records for the current schema and
    ``model_id``: the triples at each stage, ``{"proposed": [...], "verified": [...]}`` (verified = kept
    or fixed by the verification pass; sentence indexes count across the statement's chunks)."""
    suffix = extraction_suffix(kg_schema.schema_version(), model_id, verify)
    documents = [FOMC_STATEMENT_PREFIX + s for s in statements]
    out: dict[str, dict[str, list[Triple]]] = {}
    offsets: dict[str, int] = {}
    for r in graph.read(cypher.EXTRACTION_RECORDS_OF_DOCUMENTS, {"documents": documents, "suffix": suffix}):
        if r["record"] is None:
            continue
        statement = r["document"].removeprefix(FOMC_STATEMENT_PREFIX)
        rec, offset = r["record"], offsets.get(statement, 0)
        offsets[statement] = offset + len(r["sentences"] or [])
        stages = out.setdefault(statement, {"proposed": [], "verified": []})
        for t in json.loads(rec.get("proposed") or "[]"):
            stages["proposed"].append(Triple(**{**t, "sentence": t["sentence"] + offset}))
        for v in json.loads(rec.get("verdicts") or "[]"):
            if v.get("triple"):
                stages["verified"].append(Triple(**{**v["triple"], "sentence": v["triple"]["sentence"] + offset}))
    return out
