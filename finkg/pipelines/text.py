"""The text ingest pipeline (``finkg ingest text``): read, chunk, write, record the run.

For each input path (a file or a folder): the readers of :mod:`ingest.text.sources` give clean
documents; :mod:`ingest.text.chunking` packs each document's sentences into chunks under the ``[text]``
token budget; :class:`kg.BatchWriter` merges ``(:Document)``, ``(:Chunk {kind: "text"})`` and
``(:Document)-[:HAS_CHUNK {seq}]->(:Chunk)`` on their deterministic ids, then removes each
document's chunks that the new chunking no longer produces. One ``(:IngestRun)`` per path,
keyed by the content of the files under it (``text-<kind>:<sha256 prefix>``), records status
(``running``, ``done`` or ``failed`` with the error), counts, skipped lines, and
``-[:LOADED]->`` the documents. Re-running the same input creates nothing.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from finkg.config import ConfigError, Settings
from ingest import runs
from ingest.sec.fsds import StageProgress
from ingest.text.chunking import ChunkingStats, TokenCounter, chunk_sections, load_token_counter
from ingest.text.documents import (
    ReadResult,
    TextFormatError,
    chunk_rows,
    detect_kind,
    document_row,
    expand,
    parse_iso_utc,
)
from ingest.text.sources import read_source
from kg import BatchWriter, Graph, cypher

BAD_LINE_EXAMPLES = 20


@dataclass
class TextIngestOptions:
    """What the command line adds to the settings: reader ``kind`` (``auto`` or a kind of
    :data:`ingest.text.documents.KINDS`), a ``ticker``, and a filing's ``accepted`` time (any ISO 8601 with a zone)."""

    kind: str = "auto"
    ticker: str | None = None
    accepted: str | None = None


def tokenizer_path(settings: Settings) -> Path | None:
    """The tokenizer that counts chunk tokens: ``[text] tokenizer`` (a tokenizer.json or model dir),
    else None (the word-and-punctuation approximation)."""
    return settings.text.tokenizer


def _check(settings: Settings) -> None:
    if not 0 <= settings.text.chunk_overlap < settings.text.chunk_tokens / 2:
        raise ConfigError(
            f"[text] chunk_overlap ({settings.text.chunk_overlap}) must be below half of "
            f"chunk_tokens ({settings.text.chunk_tokens})"
        )


def _source_digest(path: Path, kind: str) -> tuple[str, str]:
    """``(kind label, sha256 over the sorted relative names and contents of the files under path)``.

    The label is ``kind``, or with ``auto`` the one kind every file has (``mixed`` when they
    differ, ``auto`` when a file fits none). A path that cannot be expanded hashes its name.
    """
    h = hashlib.sha256()
    try:
        files = expand(path)
    except TextFormatError:
        return kind, hashlib.sha256(str(path).encode("utf-8")).hexdigest()
    base = path if path.is_dir() else path.parent
    for f in files:
        h.update(str(f.relative_to(base)).encode("utf-8") + b"\0")
        try:
            h.update(hashlib.sha256(f.read_bytes()).digest())
        except OSError:
            h.update(b"unreadable")
    if kind == "auto":
        try:
            kinds = {detect_kind(f) for f in files}
            kind = kinds.pop() if len(kinds) == 1 else "mixed"
        except TextFormatError:
            pass
    return kind, h.hexdigest()


def ingest_text(
    graph: Graph,
    settings: Settings,
    paths: Sequence[Path],
    options: TextIngestOptions | None = None,
    progress: StageProgress | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Load text sources (``finkg ingest text``), one ``(:IngestRun {kind: "text-<kind>"})`` per path.

    Returns:
        ``(summary, warnings)``: one row per path (files, documents, chunks, sentences, tokens,
        created, skipped lines, duplicates, removed stale chunks, families, seconds, run id), and
        one line per skipped input line (``file:line: problem``).

    Raises:
        TextFormatError: a path cannot be read (its run is recorded as ``failed``; paths before it
            stay loaded).
        ConfigError: the ``[text]`` settings are inconsistent, or ``accepted`` is not ISO 8601.
        FileNotFoundError, ValueError: the configured tokenizer is missing or invalid.
    """
    options = options or TextIngestOptions()
    _check(settings)
    try:
        accepted = parse_iso_utc(options.accepted, "--accepted") if options.accepted else None
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    counter = load_token_counter(tokenizer_path(settings))
    writer = BatchWriter(graph, batch_size=settings.writer.batch_size, workers=settings.writer.workers)
    runs.mark_interrupted(graph)
    summary, warnings = [], []
    for path in map(Path, paths):
        t0 = time.perf_counter()
        label, digest = _source_digest(path, options.kind)
        kind = f"text-{label}"
        rid = runs.run_id(kind, digest)
        base = {"kind": kind, "source": str(path.resolve()), "sha256": digest}
        try:
            read = read_source(path, options.kind, options.ticker, accepted)
        except TextFormatError as exc:
            runs.fail(writer, rid, exc, {**base, "started_at": runs.now()})
            raise
        runs.start(writer, rid, base)
        try:
            row = _write(writer, graph, settings, counter, path, read, rid, progress)
        except Exception as exc:
            runs.fail(writer, rid, exc)
            raise
        examples = [str(b) for b in read.bad_lines[:BAD_LINE_EXAMPLES]]
        runs.finish(writer, rid, {**row["counts"], "bad_line_examples": examples})
        warnings.extend(str(b) for b in read.bad_lines)
        summary.append(
            {k: v for k, v in row.items() if k != "counts"} | {"s": round(time.perf_counter() - t0, 1), "run": rid}
        )
    return summary, warnings


def _write(
    writer: BatchWriter,
    graph: Graph,
    settings: Settings,
    counter: TokenCounter,
    path: Path,
    read: ReadResult,
    rid: str,
    progress: StageProgress | None,
) -> dict[str, Any]:
    """Chunk and write one source's documents; the summary row with its ``counts`` for the run."""
    docs = read.documents
    stats = ChunkingStats()
    doc_rows, chunk_rows_all, links, keep = [], [], [], []
    advance = progress(f"{path.name}: chunk", len(docs)) if progress else None
    for doc in docs:
        chunks = chunk_sections(doc.sections, counter, settings.text.chunk_tokens, settings.text.chunk_overlap, stats)
        rows = chunk_rows(doc, chunks, counter.name)
        doc_rows.append(document_row(doc) | {"n_chunks": len(rows), "ingest_run": rid})
        chunk_rows_all.extend(rows)
        links.extend({"start": doc.id, "end": r["id"], "props": {"seq": r["seq"]}} for r in rows)
        keep.append({"id": doc.id, "keep": [r["id"] for r in rows]})
        if advance:
            advance(1)

    def stage(name: str, total: int):
        return progress(f"{path.name}: {name}", total) if progress else None

    d = writer.merge_nodes("Document", doc_rows, key="id", progress=stage("documents", len(doc_rows)))
    c = writer.merge_nodes("Chunk", chunk_rows_all, key="id", progress=stage("chunks", len(chunk_rows_all)))
    r = writer.merge_relationships(
        "HAS_CHUNK", links, start=("Document", "id"), end=("Chunk", "id"), progress=stage("HAS_CHUNK", len(links))
    )
    removed = 0
    for i in range(0, len(keep), 500):
        result = graph.write(cypher.DELETE_STALE_TEXT_CHUNKS, {"docs": keep[i : i + 500]})
        removed += int(result.records[0]["removed"]) if result.records else 0
    runs.link_run(writer, rid, "Document", "id", (doc.id for doc in docs))
    families = Counter(doc.source_family for doc in docs)
    tokens = sum(row["n_tokens"] for row in chunk_rows_all)
    counts = {
        "files": len(read.files),
        "documents": len(docs),
        "chunks": len(chunk_rows_all),
        "sentences": stats.sentences,
        "sentences_split": stats.split_sentences,
        "tokens": tokens,
        "documents_created": d.created,
        "documents_updated": d.updated,
        "chunks_created": c.created,
        "chunks_updated": c.updated,
        "has_chunk_created": r.created,
        "stale_chunks_removed": removed,
        "bad_lines": len(read.bad_lines),
        "duplicates": read.duplicates,
        "families": dict(sorted(families.items())),
        "tokenizer": counter.name,
        "chunk_tokens": settings.text.chunk_tokens,
        "chunk_overlap": settings.text.chunk_overlap,
    }
    return {
        "source": path.name,
        "files": len(read.files),
        "documents": len(docs),
        "chunks": len(chunk_rows_all),
        "sentences": stats.sentences,
        "tokens": tokens,
        "created": d.created + c.created,
        "updated": d.updated + c.updated,
        "skipped lines": len(read.bad_lines),
        "duplicates": read.duplicates,
        "stale removed": removed,
        "families": ", ".join(f"{k} {v}" for k, v in sorted(families.items())),
        "counts": counts,
    }
