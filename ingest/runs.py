"""Ingest-run records: one ``(:IngestRun)`` node per source file, keyed by its content hash.

A run records the source path and sha256, start and end times, status (``running``, ``done``,
``failed``), and counts as JSON, and links to the filings it loaded. Re-ingesting the same file
updates the same node, so the graph always says when and how each source was last loaded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from kg import BatchWriter


def run_id(kind: str, sha256: str) -> str:
    """Deterministic run id, e.g. ``sec-fsds:dca07de82a7c40d2`` (first 16 hex digits)."""
    return f"{kind}:{sha256[:16]}"


def now() -> str:
    """UTC time as ISO 8601 (seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def record_run(writer: BatchWriter, run: dict[str, Any], counts: dict[str, Any] | None = None) -> None:
    """MERGE the run node with ``run``'s properties (``id`` required) and ``counts`` as JSON."""
    row = dict(run)
    if counts is not None:
        row["counts"] = json.dumps(counts, sort_keys=True)
    writer.merge_nodes("IngestRun", [row], key="id")


def record_failure(writer: BatchWriter, rid: str, exc: BaseException, fields: dict[str, Any] | None = None) -> None:
    """Mark run ``rid`` ``failed`` now, with the error's message (first 2,000 characters); ``fields``
    are further run properties (``kind``, ``source``, ``sha256``, ``started_at`` when the run fails
    before it was recorded as running)."""
    record_run(
        writer, {**(fields or {}), "id": rid, "status": "failed", "error": str(exc)[:2000], "finished_at": now()}
    )


def link_run(writer: BatchWriter, rid: str, label: str, key: str, keys: Iterable[Any]) -> None:
    """``(:IngestRun {id: rid})-[:LOADED]->(:label {key: k})`` for each ``k`` in ``keys``."""
    rows = [{"start": rid, "end": k} for k in keys]
    writer.merge_relationships("LOADED", rows, start=("IngestRun", "id"), end=(label, key))
