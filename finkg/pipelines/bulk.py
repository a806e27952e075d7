"""Bulk import of SEC Financial Statement Data Sets: CSV files and ``neo4j-admin database import full``.

For loads far larger than a quarter (full EDGAR history: about 60 quarterly archives of millions of
facts each), MERGE through Bolt is the slow part. This path reads every archive with the one FSDS
reader into its temporary SQLite spill (:func:`ingest.sec.fsds.open_fsds`, as ``finkg ingest sec`` does), streams
it into the graph rows the transactional loader writes (:func:`ingest.sec.fsds.graph_parts`, a group of facts at a
time, so memory does not grow with the archive: companies, filings, concepts, facts, evidence chunks,
``REPORTS``, ``OF_CONCEPT``, ``EVIDENCE_FOR``, ``FILED``), adds what
:func:`finkg.pipelines.sec.ingest_sec` records around them (one ``done`` ``(:IngestRun)`` per archive
with its counts, ``(:IngestRun)-[:LOADED]->(:Filing)``), writes them as CSV in the import tool's format
(:mod:`kg.bulk`) and runs the tool into a *new* database of the local server
(:meth:`finkg.neo4j_server.LocalNeo4j.import_database`).

What it is equal to: the transactional load of the same archives, in the same order, into an empty
database (``tests/test_bulk_import.py`` checks nodes and relationships per label and type, and the
properties of a sample, on the shipped 2009q3 quarter). Merge semantics across archives are kept: a
company or concept seen in several archives is one node whose properties are the later archive's where
it has them (as ``SET n += row`` does). Two archives that hold the same filing are refused: the import
tool cannot merge facts (load overlapping archives, such as a quarter and its daily files, with
``finkg ingest sec``).

Safety: the target database is never the one the running server serves, and an existing one is
replaced only with ``force``; the import does not start or stop the server. The new database is served
once ``[neo4j] database`` names it and the server restarts; ``finkg db init`` then adds constraints and
indexes (the tool imports none).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from finkg.config import Settings
from finkg.neo4j_server import ImportReport, LocalNeo4j
from finkg.pipelines.sec import summary_row
from ingest import runs
from ingest.sec import fsds
from kg.bulk import ImportFiles, NodeStream, RelStream
from kg.errors import ConfigError, IngestError
from kg.progress import StageProgress
from kg.progress import stage as open_stage

KIND = "sec-fsds"
MERGED = ("Company", "Filing", "Concept")
"""Labels whose nodes several archives may share (merged in memory, written once at the end)."""
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class BulkImportError(IngestError):
    """A bulk import's input cannot be imported as asked (no archives, overlapping archives, a remote
    ``[neo4j] uri``) or the tool imported other counts than written; the message says what to do."""


@dataclass
class BulkResult:
    """One bulk import.

    Attributes:
        database: the target database; ``folder``: where the CSV files are (removed unless kept).
        summary: one row per archive (the columns of ``finkg ingest sec``, ``s``: read + CSV seconds).
        nodes, relationships: rows written per label / type (what the database holds after the import).
        report: what the import tool reported (None with ``csv_only``).
        csv_seconds: reading the archives and writing CSV; ``seconds``: the whole call.
    """

    database: str
    folder: Path
    summary: list[dict[str, Any]] = field(default_factory=list)
    nodes: dict[str, int] = field(default_factory=dict)
    relationships: dict[str, int] = field(default_factory=dict)
    report: ImportReport | None = None
    csv_seconds: float = 0.0
    seconds: float = 0.0

    @property
    def facts(self) -> int:
        return self.nodes.get("Fact", 0)

    def count_rows(self) -> list[dict[str, Any]]:
        """``{"label or type", "kind", "count"}`` rows: nodes per label, then relationships per type."""
        return [{"label or type": k, "kind": "nodes", "count": v} for k, v in self.nodes.items()] + [
            {"label or type": k, "kind": "relationships", "count": v} for k, v in self.relationships.items()
        ]


def archives(paths: Sequence[Path]) -> list[Path]:
    """The FSDS ZIPs named: files as given, folders by their ``*.zip`` (sorted by name, so quarters load
    in order).

    Raises:
        BulkImportError: a path does not exist, or nothing to import is found.
    """
    found: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found.extend(sorted(p.glob("*.zip")))
        elif p.is_file():
            found.append(p)
        else:
            raise BulkImportError(f"{p}: no such file or folder (give FSDS ZIPs or folders holding them)")
    if not found:
        raise BulkImportError(f"no FSDS ZIP found in {', '.join(map(str, paths)) or 'the arguments'}")
    return found


def check_local(settings: Settings) -> None:
    """Refuse when ``[neo4j] uri`` is not the local server's: the import writes database files of the
    local server's home, which a cluster or Aura does not share.

    Raises:
        BulkImportError: naming the URI and what to do instead.
    """
    if settings.neo4j.uri is None:
        return
    u = urlsplit(settings.neo4j.uri)
    if u.hostname in LOOPBACK and (u.port or 7687) == settings.server.bolt_port:
        return
    raise BulkImportError(
        f"[neo4j] uri is {settings.neo4j.uri}, not the local server (bolt://127.0.0.1:{settings.server.bolt_port}); "
        "a bulk import writes database files on this machine. Write the CSV files with --csv DIR --csv-only "
        "and run neo4j-admin database import on the server's machine (docs/scale.md), or load "
        "transactionally with `finkg ingest sec`."
    )


def _merge(into: dict[Any, dict[str, Any]], key: str, rows: list[dict[str, Any]]) -> int:
    """Merge ``rows`` into ``into`` by ``row[key]`` as ``SET n += row`` does (non-null values win);
    returns how many keys are new."""
    new = 0
    for row in rows:
        k = row[key]
        if k not in into:
            into[k] = {}
            new += 1
        into[k].update({p: v for p, v in row.items() if v is not None})
    return new


def bulk_import_sec(
    settings: Settings,
    paths: Sequence[Path],
    *,
    database: str,
    force: bool = False,
    csv_dir: Path | None = None,
    csv_only: bool = False,
    progress: StageProgress | None = None,
) -> BulkResult:
    """Import FSDS archives into database ``database`` of the local server with ``neo4j-admin``
    (``finkg ingest sec --bulk``); see the module docstring for what is written and the safety rules.

    Args:
        paths: FSDS ZIPs or folders of them (:func:`archives`).
        database: the new database's name (e.g. ``edgar``).
        force: replace ``database`` if it exists (never the one the running server serves).
        csv_dir: write and keep the CSV files there (default: a temporary folder in the server's
            ``import/``, removed afterwards).
        csv_only: write the CSV files and stop (for a server on another machine); needs ``csv_dir``.

    Returns:
        :class:`BulkResult`.

    Raises:
        BulkImportError: see the class; ConfigError: ``csv_only`` without ``csv_dir``;
        FsdsFormatError: a malformed archive (named with member, line and column; nothing is imported), or a
            member above ``[ingest] max_member_bytes`` or ``max_compression_ratio`` (checked before it is read);
        DatabaseExists, DatabaseInUse, ServerError: from the server (:meth:`LocalNeo4j.import_database`).
    """
    t0 = time.perf_counter()
    if csv_only and csv_dir is None:
        raise ConfigError("--csv-only needs --csv DIR (where to keep the files)")
    files_in = archives(paths)
    server = LocalNeo4j(settings)
    if not csv_only:
        check_local(settings)
        server.check_import_target(database, force=force)
    keep = csv_dir is not None
    if csv_dir is None:
        (server.home / "import").mkdir(parents=True, exist_ok=True)
        csv_dir = Path(tempfile.mkdtemp(prefix=f"bulk-{database}.", dir=server.home / "import"))
    result = BulkResult(database, Path(csv_dir))
    try:
        files = ImportFiles(result.folder)
        _write_csv(files, files_in, result, progress, settings)
        result.csv_seconds = time.perf_counter() - t0
        result.nodes, result.relationships = files.counts("nodes"), files.counts("relationships")
        if csv_only:
            return result
        advance = open_stage(progress, f"neo4j-admin database import full {database}", 1)
        result.report = server.import_database(database, files.arguments(), force=force)
        advance(1)
        expected = (sum(result.nodes.values()), sum(result.relationships.values()))
        if (result.report.nodes, result.report.relationships) != expected:
            raise BulkImportError(
                f"neo4j-admin imported {result.report.nodes} nodes and {result.report.relationships} relationships "
                f"into {database!r}, but {expected[0]} and {expected[1]} were written ({result.folder}); see "
                f"{server.home / 'logs' / f'import-{database}.report'}"
            )
    finally:
        if not keep:
            shutil.rmtree(result.folder, ignore_errors=True)
        result.seconds = time.perf_counter() - t0
    return result


def _write_csv(
    files: ImportFiles, paths: list[Path], result: BulkResult, progress: StageProgress | None, settings: Settings
) -> None:
    """Stream each archive into ``files`` (facts and evidence per archive; merged labels, runs and ``LOADED`` at the
    end); fills ``result.summary``. An archive is checked whole into a temporary SQLite spill first
    (:func:`ingest.sec.fsds.open_fsds`, under ``[ingest] max_member_bytes`` and ``max_compression_ratio``, as
    ``finkg ingest sec`` reads it), then its rows are gone through twice, a group of ``GROUP_BATCHES x [writer]
    batch_size`` facts at a time (:func:`ingest.sec.fsds.graph_parts`): once for the column types of each node file
    (fixed for a file) and the merged labels, once to write the files. So memory holds one group, the companies,
    filings and concepts (merged across archives), whatever the size of the archive; the files are those a whole
    read writes, byte for byte."""
    limits = settings.ingest
    group = fsds.GROUP_BATCHES * settings.writer.batch_size
    merged: dict[str, dict[Any, dict[str, Any]]] = {label: {} for label in MERGED}
    keys: dict[str, str] = {}
    owner: dict[str, Path] = {}  # adsh -> the archive that holds it
    run_rows: list[dict[str, Any]] = []
    loaded: list[dict[str, Any]] = []
    for i, path in enumerate(paths):
        t = time.perf_counter()
        started = runs.now()
        with fsds.open_fsds(path, max_bytes=limits.max_member_bytes, max_ratio=limits.max_compression_ratio) as data:
            for f in data.filings:
                if f["adsh"] in owner:
                    raise BulkImportError(
                        f"{path}: filing {f['adsh']} is also in {owner[f['adsh']]}; the import tool cannot merge "
                        "facts of one filing from two archives: bulk-import archives that do not overlap, and load "
                        "the others with `finkg ingest sec`"
                    )
                owner[f["adsh"]] = path
            created = _stream_archive(files, data, f"{i:03d}", group, merged, keys, progress)
            rid = runs.run_id(KIND, data.sha256)
            c = data.counts
            fields = {"kind": KIND, "source": str(path.resolve()), "sha256": data.sha256}
            run_rows.append(
                runs.done_record(rid, fields, started, {**c, **{f"{k}_created": v for k, v in created.items()}})
            )
            loaded.extend({"start": rid, "end": f["adsh"]} for f in data.filings)
        result.summary.append(summary_row(path, c, created["facts"], time.perf_counter() - t, rid))
    for label, rows in merged.items():
        if label in keys:
            files.add_nodes(label, keys[label], rows.values(), label.lower())
    files.add_nodes("IngestRun", "id", run_rows, "ingest-runs")
    files.add_relationships("LOADED", "IngestRun", "Filing", loaded, "loaded")


def _stream_archive(
    files: ImportFiles,
    data: fsds.FsdsSpill,
    prefix: str,
    group: int,
    merged: dict[str, dict[Any, dict[str, Any]]],
    keys: dict[str, str],
    progress: StageProgress | None,
) -> dict[str, int]:
    """One archive's parts (:func:`ingest.sec.fsds.graph_parts`, ``group`` facts at a time) into ``files``, one file
    per stage named ``<prefix>-<stage>`` in first-seen stage order, the :data:`MERGED` labels into ``merged`` (their
    key property into ``keys``). Returns rows created per stage (new keys for the merged labels)."""
    streams: dict[str, NodeStream | RelStream] = {}
    created: dict[str, int] = {}
    for part in fsds.graph_parts(data, group):  # pass 1: merged labels, the files in order, column types
        if isinstance(part, fsds.NodeSet) and part.label in merged:
            keys[part.label] = part.key
            created[part.stage] = created.get(part.stage, 0) + _merge(merged[part.label], part.key, part.rows)
        elif isinstance(part, fsds.NodeSet):
            stream = streams.get(part.stage) or files.node_stream(part.label, part.key, f"{prefix}-{part.stage}")
            assert isinstance(stream, NodeStream), "a stage is nodes or relationships"
            streams[part.stage] = stream
            stream.scan(part.rows)
        elif part.stage not in streams:
            streams[part.stage] = files.relationship_stream(
                part.type, part.start[0], part.end[0], f"{prefix}-{part.stage}"
            )
    sizes = data.sizes()
    advance = open_stage(
        progress, f"{data.source.name} csv", len(data.companies) + len(data.filings) + sum(sizes.values())
    )
    for part in fsds.graph_parts(data, group):  # pass 2: the same rows, written
        stream = streams.get(part.stage)
        if stream is not None:
            stream.write(part.rows)
        if isinstance(part, fsds.NodeSet):
            advance(len(part.rows))
    for stage, stream in streams.items():
        created[stage] = stream.close().rows
    return created


def served_hint(settings: Settings, database: str) -> str:
    """How to serve ``database`` (the line ``finkg ingest sec --bulk`` prints after an import)."""
    if settings.neo4j.database == database:
        return f"`finkg neo4j stop && finkg neo4j start && finkg db init` serves {database!r} (it is [neo4j] database)"
    return (
        f'to use {database!r}: set [neo4j] database = "{database}" in the settings file (or '
        f"FINKG_NEO4J__DATABASE={database}), then `finkg neo4j stop && finkg neo4j start && finkg db init`"
    )
