"""Pipelines that compose ``ingest``, ``retrieval`` and ``generation`` over ``kg``; the CLI calls these.

Each pipeline takes a connected :class:`kg.Graph` and the settings, reports progress through a
callback and returns rows for a summary table.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ingest import runs, sec_fsds
from ingest.sec_fsds import StageProgress
from kg import BatchWriter, Graph

from finkg.config import Settings


def ingest_sec(
    graph: Graph, settings: Settings, paths: Sequence[Path], progress: StageProgress | None = None
) -> list[dict[str, Any]]:
    """Load SEC FSDS ZIPs (``finkg ingest sec``), one ``(:IngestRun)`` per archive.

    A run is recorded as ``running`` before writing, ``done`` with its counts after, or
    ``failed`` with the error (then the error is raised again). Re-running an archive rewrites
    the same run node and creates nothing else.

    Returns:
        One summary row per archive: filings, num.txt rows, kept, skipped per reason, facts
        created, seconds, run id.

    Raises:
        sec_fsds.FsdsFormatError: an archive is malformed (nothing of it is written).
    """
    writer = BatchWriter(graph, batch_size=settings.writer_batch_size, workers=settings.writer_workers)
    summary = []
    for path in map(Path, paths):
        data = sec_fsds.read_fsds(path)
        rid = runs.run_id("sec-fsds", data.sha256)
        runs.record_run(writer, {"id": rid, "kind": "sec-fsds", "source": str(path.resolve()),
                                 "sha256": data.sha256, "started_at": runs.now(), "status": "running",
                                 "error": ""})
        try:
            labelled = (lambda stage, total: progress(f"{path.name} {stage}", total)) if progress else None
            stats = sec_fsds.write_fsds(writer, data, progress=labelled)
            runs.link_run(writer, rid, "Filing", "adsh", (f["adsh"] for f in data.filings))
        except Exception as exc:
            runs.record_run(writer, {"id": rid, "status": "failed", "error": str(exc)[:2000],
                                     "finished_at": runs.now()})
            raise
        c = data.counts
        runs.record_run(writer, {"id": rid, "status": "done", "finished_at": runs.now()},
                        {**c, **{f"{k}_created": v.created for k, v in stats.items()}})
        summary.append({
            "source": path.name, "filings": c["filings"], "num rows": c["rows"], "kept": c["kept"],
            "not USD": c["skipped_not_usd"], "co-reg.": c["skipped_coregistrant"],
            "dimensional": c["skipped_dimensional"], "facts new": stats["facts"].created,
            "s": round(sum(v.seconds for v in stats.values()), 1), "run": rid,
        })
    return summary
