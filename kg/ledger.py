"""The one item ledger of derived outputs (memos, report items): what each was made from, and whether it
was made.

Every derived output has a node keyed by ``id`` (``(:Memo)``, ``(:Report)``; the label carries a uniqueness
constraint). The ledger keeps on that node ``status`` (``done`` or ``failed``), ``error`` (empty when done),
``input_digest`` (:func:`digest` of what the output was made from: the facts it read), ``attempts`` and
``ledger_at``. A run asks :meth:`Ledger.pending` which of its items to make: those never made, those that
failed, and those whose input digest changed since they were made (the graph was repaired or updated); it
records each outcome with :meth:`Ledger.record` (batched writes through :class:`kg.writer.BatchWriter`).

The ingest side has its own records, the ``(:IngestRun)`` lifecycle of :mod:`ingest.runs`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from kg import cypher
from kg.driver import Graph
from kg.writer import BatchWriter

DONE, FAILED = "done", "failed"


def digest(value: Any) -> str:
    """sha256 (hex) of ``value`` as canonical JSON (keys sorted; what JSON cannot hold as its ``str``)."""
    text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Ledger:
    """The ledger entries of the outputs labelled ``label`` (module docstring)."""

    def __init__(self, graph: Graph, label: str, batch_size: int = 1000) -> None:
        cypher.quote(label)  # raises ValueError for a label that is not a plain identifier
        self.graph, self.label = graph, label
        self.writer = BatchWriter(graph, batch_size=batch_size)

    def state(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """``{id: {status, input_digest, error, attempts}}`` of the items of ``ids`` that have a node."""
        if not ids:
            return {}
        return {r["id"]: r for r in self.graph.read(cypher.ledger_state(self.label), {"ids": list(ids)})}

    def pending(self, items: Mapping[str, str], redo: bool = False) -> list[str]:
        """The ids of ``items`` (``{id: input digest}``, in order) to make now: all with ``redo``; else those
        not recorded ``done``, or recorded ``done`` from another input digest."""
        if redo:
            return list(items)
        state = self.state(list(items))
        return [
            i
            for i, d in items.items()
            if (s := state.get(i)) is None or s.get("status") != DONE or s.get("input_digest") != d
        ]

    def is_done(self, item: str, input_digest: str) -> bool:
        """Whether ``item`` is recorded ``done`` from ``input_digest``."""
        return not self.pending({item: input_digest})

    def record(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Record outcomes: rows ``{id, status, input_digest, error}`` (``error`` empty or absent when done);
        other keys of a row are set on the node too. Returns the rows written."""
        at = datetime.now(UTC).isoformat(timespec="seconds")
        shaped = []
        for r in rows:
            if r["status"] not in (DONE, FAILED):
                raise ValueError(f"ledger status {r['status']!r}: expected {DONE!r} or {FAILED!r}")
            extra = {k: v for k, v in r.items() if k not in ("id", "status", "input_digest", "error")}
            shaped.append(
                {
                    "id": r["id"],
                    "status": r["status"],
                    "input_digest": r.get("input_digest") or "",
                    "error": str(r.get("error") or "")[:2000],
                    "props": extra,
                }
            )
        return self.writer.run_batches(cypher.ledger_record(self.label), shaped, {"at": at})

    def done(self, item: str, input_digest: str, **props: Any) -> None:
        """Record ``item`` made from ``input_digest``."""
        self.record([{"id": item, "status": DONE, "input_digest": input_digest, **props}])

    def failed(self, item: str, input_digest: str, error: BaseException | str, **props: Any) -> None:
        """Record ``item`` failed with ``error`` (``Type: message`` for an exception); a rerun retries it."""
        text = f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else error
        self.record([{"id": item, "status": FAILED, "input_digest": input_digest, "error": text, **props}])
