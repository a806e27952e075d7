"""The AKShare ingest pipeline (``finkg ingest akshare``): read or fetch, write, record the run.

For each source (a saved CSV, or a live call of one AKShare function), :mod:`ingest.market.akshare` gives the
indicators and observations; :class:`kg.BatchWriter` merges ``(:Indicator {code})``,
``(:Observation {id})`` and ``(:Indicator)-[:HAS_OBSERVATION]->(:Observation)`` on their
constrained keys (schema steps 1 and 3), so a rerun creates nothing. One ``(:IngestRun {kind:
"akshare"})`` per source, keyed by the content hash (``akshare:<sha256 prefix>``), records status
(``running``, ``done``, or ``failed`` with the error), counts and skipped cells, and ``-[:LOADED]->``
the indicators it wrote. A live call that fails writes nothing (no content, no run).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from finkg.config import Settings
from ingest import runs
from ingest.market.akshare import AkshareFormatError, IndicatorData, fetch_live, read_csv
from ingest.sec.fsds import StageProgress
from kg import BatchWriter, Graph

KIND = "akshare"


def ingest_akshare_files(
    graph: Graph,
    settings: Settings,
    paths: Sequence[Path],
    function: str | None = None,
    progress: StageProgress | None = None,
) -> list[dict[str, Any]]:
    """Load saved AKShare CSVs, one ``(:IngestRun)`` per file.

    Args:
        function: the AKShare function that wrote every file (default: chosen per file by name or
            columns, see :func:`ingest.market.akshare.read_csv`).

    Returns:
        One summary row per file: file, function, indicators, rows, observations, skipped cells
        with reasons, nodes and relationships created and updated, seconds, run id.

    Raises:
        AkshareFormatError: a file cannot be read (its run is recorded as ``failed`` and nothing of it
            is written; files before it stay loaded).
        kg.errors.IngestError: a path is missing or not a regular file (a device, a pipe).
    """
    writer = BatchWriter(graph, batch_size=settings.writer.batch_size, workers=settings.writer.workers)
    runs.mark_interrupted(graph)
    summary = []
    for path in map(Path, paths):
        t0 = time.perf_counter()
        runs.source_file(path)
        try:
            data = read_csv(path, function)
        except AkshareFormatError as exc:
            digest = _digest(path)
            runs.fail(
                writer,
                runs.run_id(KIND, digest),
                exc,
                {"kind": KIND, "source": str(path.resolve()), "sha256": digest, "started_at": runs.now()},
            )
            raise
        summary.append(_load(writer, data, progress, t0))
    return summary


def ingest_akshare_live(
    graph: Graph,
    settings: Settings,
    functions: Sequence[str],
    start: date | None = None,
    end: date | None = None,
    save_dir: Path | None = None,
    progress: StageProgress | None = None,
) -> list[dict[str, Any]]:
    """Fetch AKShare functions now and load them (network needed), one ``(:IngestRun)`` per function.

    Retries, timeouts and the bond date windows follow :func:`ingest.market.akshare.fetch_live` with the
    ``[akshare]`` settings (``retry_attempts``, ``retry_wait``, ``timeout``); ``start`` / ``end``
    bound ``bond_china_yield`` only; ``save_dir`` keeps each frame as ``<function>_df.csv``.

    Returns:
        One summary row per function (the columns of :func:`ingest_akshare_files`).

    Raises:
        AkshareUnavailable: a call failed after its retries (nothing of it is written).
        AkshareFormatError: an unknown function, or a frame in another layout.
    """
    writer = BatchWriter(graph, batch_size=settings.writer.batch_size, workers=settings.writer.workers)
    runs.mark_interrupted(graph)
    summary = []
    for name in functions:
        t0 = time.perf_counter()
        data = fetch_live(
            name,
            start=start,
            end=end,
            attempts=settings.akshare.retry_attempts,
            wait_s=settings.akshare.retry_wait,
            timeout_s=settings.akshare.timeout,
            save_dir=save_dir,
        )
        summary.append(_load(writer, data, progress, t0))
    return summary


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return hashlib.sha256(str(path).encode("utf-8")).hexdigest()


def _skipped_text(data: IndicatorData) -> str:
    return "; ".join(f"{reason} {n}" for reason, n in sorted(data.skipped.items())) or "none"


def _load(writer: BatchWriter, data: IndicatorData, progress: StageProgress | None, t0: float) -> dict[str, Any]:
    """Write one source's indicators, observations and links around its run record; its summary row."""
    rid = runs.run_id(KIND, data.sha256)
    runs.start(writer, rid, {"kind": KIND, "function": data.function, "source": data.path, "sha256": data.sha256})

    def stage(name: str, total: int):
        return progress(f"{data.source}: {name}", total) if progress else None

    try:
        ind = writer.merge_nodes(
            "Indicator", data.indicator_rows(), key="code", progress=stage("indicators", len(data.indicators))
        )
        obs = writer.merge_nodes(
            "Observation", data.observations, key="id", progress=stage("observations", len(data.observations))
        )
        rel = writer.merge_relationships(
            "HAS_OBSERVATION",
            data.links(),
            start=("Indicator", "code"),
            end=("Observation", "id"),
            progress=stage("HAS_OBSERVATION", len(data.observations)),
        )
        runs.link_run(writer, rid, "Indicator", "code", (i.code for i in data.indicators))
    except Exception as exc:
        runs.fail(writer, rid, exc)
        raise
    counts = {
        "function": data.function,
        "rows": data.rows,
        "rows_with_values": data.rows_with_values,
        "indicators": len(data.indicators),
        "observations": len(data.observations),
        "skipped": dict(sorted(data.skipped.items())),
        "indicators_created": ind.created,
        "observations_created": obs.created,
        "observations_updated": obs.updated,
        "has_observation_created": rel.created,
        "missing_endpoints": rel.missing_endpoints,
    }
    runs.finish(writer, rid, counts)
    return {
        "file": data.source,
        "function": data.function,
        "indicators": len(data.indicators),
        "rows": data.rows,
        "observations": len(data.observations),
        "skipped cells": _skipped_text(data),
        "created": ind.created + obs.created + rel.created,
        "updated": ind.updated + obs.updated,
        "s": round(time.perf_counter() - t0, 1),
        "run": rid,
    }
