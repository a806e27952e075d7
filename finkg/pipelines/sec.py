"""Pipelines that compose ``ingest``, ``retrieval`` and ``generation`` over ``kg``; the CLI calls these.

Each pipeline takes a connected :class:`kg.Graph` and the settings, reports progress through a
callback and returns rows for a summary table.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from finkg.config import Settings
from ingest import runs
from ingest.sec import companyfacts as sec_companyfacts
from ingest.sec import fsds as sec_fsds
from ingest.sec import xbrl_instance
from ingest.sec.companyfacts import ADSH
from ingest.sec.conflicts import OnConflict, SourceConflict, find_conflicts, refusal, settle
from ingest.sec.fsds import FactSource, StageProgress
from kg import BatchWriter, Graph, WriteStats

COMPANYFACTS_KIND = "sec-companyfacts"
"""The kind of the ingest run of a companyfacts file (``(:IngestRun {kind})``; its id ``sec-companyfacts:<sha256>``)."""


def ingest_sec(
    graph: Graph,
    settings: Settings,
    paths: Sequence[Path],
    progress: StageProgress | None = None,
    on_conflict: OnConflict = "refuse",
) -> list[dict[str, Any]]:
    """Load SEC FSDS ZIPs (``finkg ingest sec``), one ``(:IngestRun)`` per archive, streamed: each archive is
    checked whole into a temporary file first (:func:`ingest.sec.fsds.open_fsds`), then written a group of facts at a
    time (:func:`ingest.sec.fsds.write_fsds`), so memory does not grow with the archive.

    A fact already in the graph with another value (another file of the same filing) is refused, kept or
    replaced as ``on_conflict`` says, and recorded beside its fact (:mod:`ingest.sec.conflicts`).

    A run is recorded as ``running`` before writing, ``done`` with its counts after, or
    ``failed`` with the error (then the error is raised again); a run left ``running`` by a
    process that died is marked ``interrupted`` first (:mod:`ingest.runs`). Re-running an archive
    rewrites the same run node and creates nothing else.

    Returns:
        One summary row per archive: filings, num.txt rows, kept, skipped per reason (non-finite
        values first), facts
        created, seconds, run id.

    Raises:
        sec_fsds.FsdsFormatError: an archive is malformed, or a member is above ``[ingest] max_member_bytes``
            or ``max_compression_ratio`` (nothing of it is written).
        ingest.sec.conflicts.SourceConflict: ``on_conflict`` is ``refuse`` and an archive would change facts
            another file wrote (nothing of it is written).
        kg.errors.IngestError: a path is missing or not a regular file (a device, a pipe).
    """
    limits = settings.ingest

    def read(path: Path) -> FactSource:  # streamed: one group of facts in memory at a time (sec_fsds.open_fsds)
        return sec_fsds.open_fsds(path, max_bytes=limits.max_member_bytes, max_ratio=limits.max_compression_ratio)

    return _ingest_files(graph, settings, paths, read, "sec-fsds", progress, on_conflict)


def _ingest_files(
    graph: Graph,
    settings: Settings,
    paths: Sequence[Path],
    read: Callable[[Path], FactSource],
    kind: str,
    progress: StageProgress | None,
    on_conflict: OnConflict = "refuse",
) -> list[dict[str, Any]]:
    """The loop every XBRL source shares: ``read(path)`` (when it raises, only a ``failed`` run
    naming the error is written), then
    one ``(:IngestRun {kind})`` per file around :func:`sec_fsds.write_fsds`; a summary row per file.
    The ``other`` column counts the skip reasons without a column of their own (duplicates,
    non-numeric facts ...), so that rows = kept + non-finite + not USD + dimensional + other; ``co-reg. kept``
    counts the kept facts of co-registrants (separate legal entities of a filing, e.g. a parent's utility
    subsidiaries: :mod:`ingest.sec.fsds`), part of ``kept``.
    ``non-finite`` (``skipped_non_finite``) counts values refused because they are NaN or infinite. Before a
    file is written its facts are compared with those of its filings already in the graph
    (:func:`ingest.sec.conflicts.find_conflicts`): ``on_conflict`` refuses (the run recorded failed, unless an earlier
    run of the same file is done), keeps or replaces; ``conflicts`` counts them."""
    writer = BatchWriter(graph, batch_size=settings.writer.batch_size, workers=settings.writer.workers)
    runs.mark_interrupted(graph)
    summary = []
    for path in map(Path, paths):
        runs.source_file(path)
        with path.open("rb") as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
        rid = runs.run_id(kind, digest)
        try:
            data = read(path)
        except ValueError as exc:  # every reader's format error: recorded (never over a done run), nothing written
            runs.fail_unless_done(
                graph,
                writer,
                rid,
                exc,
                {"kind": kind, "source": str(path.resolve()), "sha256": digest, "started_at": runs.now()},
            )
            raise
        with closing(data):  # the spill's temporary file, if the reader made one
            stats = _write_file(graph, writer, path, data, kind, rid, digest, progress, on_conflict, settings)
        c = data.counts
        runs.finish(writer, rid, {**c, **{f"{k}_created": v.created for k, v in stats.items()}})
        summary.append(summary_row(path, c, stats["facts"].created, sum(v.seconds for v in stats.values()), rid))
    return summary


def _write_file(
    graph: Graph,
    writer: BatchWriter,
    path: Path,
    data: FactSource,
    kind: str,
    rid: str,
    digest: str,
    progress: StageProgress | None,
    on_conflict: OnConflict,
    settings: Settings,
) -> dict[str, WriteStats]:
    """One read file of :func:`_ingest_files`: the checks against the graph (the same filings as an earlier run of
    it; the conflicts, before anything is written), then the run ``running``, the file's writes and its LOADED links;
    the run recorded failed on an error."""
    runs.check_same_filings(graph, rid, path, (f["adsh"] for f in data.filings))
    conflicts = find_conflicts(graph, data, settings.writer.batch_size)
    if conflicts and on_conflict == "refuse":  # before anything of the file is written
        refused = SourceConflict(refusal(path, conflicts))
        fields = {"kind": kind, "source": str(path.resolve()), "sha256": digest, "started_at": runs.now()}
        runs.fail_unless_done(graph, writer, rid, refused, fields)
        raise refused
    runs.start(writer, rid, {"kind": kind, "source": str(path.resolve()), "sha256": data.sha256})
    try:
        settle(writer, data, conflicts, on_conflict)
        stats = sec_fsds.write_fsds(writer, data, progress=_prefixed(progress, path.name))
        runs.link_run(writer, rid, "Filing", "adsh", (f["adsh"] for f in data.filings))
    except Exception as exc:
        runs.fail(writer, rid, exc)
        raise
    return stats


def summary_row(path: Path, c: Counter, facts_new: int, seconds: float, rid: str) -> dict[str, Any]:
    """One archive's row of the ingest summary from its reader counts ``c`` (see :func:`_ingest_files`);
    ``conflicts``: facts already in the graph from another file with another value (kept or replaced)."""
    named = c["skipped_non_finite"] + c["skipped_not_usd"] + c["skipped_dimensional"]
    return {
        "source": path.name,
        "filings": c["filings"],
        "rows": c["rows"],
        "kept": c["kept"],
        "non-finite": c["skipped_non_finite"],
        "not USD": c["skipped_not_usd"],
        "co-reg. kept": c["coregistrant"],
        "dimensional": c["skipped_dimensional"],
        "other": c["rows"] - c["kept"] - named,
        "facts new": facts_new,
        "conflicts": c["conflicts"],
        "s": round(seconds, 1),
        "run": rid,
    }


def _prefixed(progress: StageProgress | None, prefix: str) -> StageProgress | None:
    """``progress`` with every stage named ``"{prefix} {stage}"`` (None stays None)."""
    if progress is None:
        return None
    return lambda stage, total: progress(f"{prefix} {stage}", total)


def ingest_companyfacts(
    graph: Graph,
    settings: Settings,
    paths: Sequence[Path],
    on_conflict: OnConflict = "refuse",
    progress: StageProgress | None = None,
) -> list[dict[str, Any]]:
    """Load SEC companyfacts JSON files (``finkg ingest companyfacts``), one ``(:IngestRun {kind:
    "sec-companyfacts"})`` per file, recorded as :func:`ingest_sec` does (``on_conflict`` too).

    Returns:
        One summary row per file (the columns of :func:`ingest_sec`; rows are unit entries).

    Raises:
        sec_companyfacts.CompanyFactsFormatError: a file is malformed (nothing of it is written).
    """
    return _ingest_files(
        graph, settings, paths, sec_companyfacts.read_companyfacts, COMPANYFACTS_KIND, progress, on_conflict
    )


def ingest_xbrl(
    graph: Graph,
    settings: Settings,
    paths: Sequence[Path],
    accession: str | None = None,
    progress: StageProgress | None = None,
    on_conflict: OnConflict = "refuse",
) -> list[dict[str, Any]]:
    """Load XBRL instance documents (``finkg ingest xbrl``), one ``(:IngestRun {kind:
    "xbrl-instance"})`` per file, recorded as :func:`ingest_sec` does (``on_conflict`` too).

    Args:
        accession: the filing's accession number (only with one path); else each file's
            ``dei:AccessionNumber`` or a pseudo accession (:func:`ingest.sec.xbrl_instance.read_instance`).

    Returns:
        One summary row per file (the columns of :func:`ingest_sec`; rows are fact elements,
        ``other`` holds non-numeric facts and duplicates).

    Raises:
        ValueError: ``accession`` given with more than one path.
        xbrl_instance.XbrlInstanceFormatError: ``accession`` is not an accession number (checked before any
            run is recorded), or a file is malformed (nothing of it is written).
        runs.SourceAlreadyLoaded: the same file was loaded before under another accession number.
    """
    if accession and len(paths) > 1:
        raise ValueError(f"one accession number ({accession}) cannot name {len(paths)} files")
    if accession is not None and not ADSH.fullmatch(accession):
        raise xbrl_instance.XbrlInstanceFormatError(
            f"--accession {accession!r} is not an accession number (##########-##-######, e.g. 0000950170-24-087843)"
        )
    return _ingest_files(
        graph,
        settings,
        paths,
        lambda path: xbrl_instance.read_instance(path, adsh=accession),
        "xbrl-instance",
        progress,
        on_conflict,
    )
