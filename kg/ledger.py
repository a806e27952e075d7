"""The one item ledger of derived outputs (memos, report items, triple extraction records): what each was made
from, and whether it was made.

Every derived output has a node keyed by ``id`` (``(:Memo)``, ``(:Report)``, ``(:Extraction)`` per chunk; the
label carries a uniqueness constraint). The ledger keeps on that node ``status`` (``done``, ``failed``, or a
checkpoint stage the output declares: extraction's ``proposed``, memos' and reports' ``writing``), ``error``
(empty unless failed), ``input_digest`` (:func:`digest` of what the output was made from: the facts a memo read, a chunk's
sentences), ``attempts`` (outcomes recorded: ``done`` or ``failed``; a checkpoint does not count) and
``ledger_at``. A run asks :meth:`Ledger.pending` (or :func:`is_pending`, for rows it has read already) which of
its items to make: those never made, those that failed or stopped at a checkpoint, and those whose input digest
changed since they were made (the graph was repaired or updated); it records each outcome with
:meth:`Ledger.record` (batched writes through :class:`kg.writer.BatchWriter`).

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
WRITING = "writing"
"""The checkpoint stage of an output whose node and links are being written (memos, reports): set in the same
transaction as the node's properties, replaced by the outcome once every link is written, so an output killed
half-written is never taken as done."""


def digest(value: Any) -> str:
    """sha256 (hex) of ``value`` as canonical JSON (keys sorted; what JSON cannot hold as its ``str``)."""
    text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def is_pending(state: Mapping[str, Any] | None, input_digest: str, redo: bool = False) -> bool:
    """Whether an item is to be made now, from its ledger ``state`` (``{status, input_digest, ...}``, None when it
    has no node): with ``redo`` always; else when it is not recorded ``done`` from ``input_digest``."""
    return redo or state is None or state.get("status") != DONE or state.get("input_digest") != input_digest


def at_stage(state: Mapping[str, Any] | None, stage: str, input_digest: str) -> bool:
    """Whether an item's ledger ``state`` is the checkpoint ``stage`` reached from ``input_digest``: what the stage
    stored on the node is still good, so a resumed run goes on from there."""
    return state is not None and state.get("status") == stage and state.get("input_digest") == input_digest


class Ledger:
    """The ledger entries of the outputs labelled ``label`` (module docstring).

    ``stages``: checkpoint statuses the output may record besides ``done`` and ``failed`` (an item at a stage is
    still pending; its node keeps what the stage produced, so a resumed run can go on from there).

    Raises:
        ValueError: ``label`` is not a plain identifier, or a stage is named ``done`` or ``failed``.
    """

    def __init__(self, graph: Graph, label: str, batch_size: int = 1000, stages: Sequence[str] = ()) -> None:
        cypher.quote(label)  # raises ValueError for a label that is not a plain identifier
        if {DONE, FAILED} & set(stages):
            raise ValueError(f"ledger stages {list(stages)}: {DONE!r} and {FAILED!r} are outcomes, not stages")
        self.graph, self.label, self.stages = graph, label, tuple(stages)
        self.writer = BatchWriter(graph, batch_size=batch_size)

    def state(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """``{id: {status, input_digest, error, attempts}}`` of the items of ``ids`` that have a node."""
        if not ids:
            return {}
        return {r["id"]: r for r in self.graph.read(cypher.ledger_state(self.label), {"ids": list(ids)})}

    def pending(self, items: Mapping[str, str], redo: bool = False) -> list[str]:
        """The ids of ``items`` (``{id: input digest}``, in order) to make now: all with ``redo``; else those
        not recorded ``done``, or recorded ``done`` from another input digest."""
        state = {} if redo else self.state(list(items))
        return [i for i, d in items.items() if is_pending(state.get(i), d, redo)]

    def is_done(self, item: str, input_digest: str) -> bool:
        """Whether ``item`` is recorded ``done`` from ``input_digest``."""
        return not self.pending({item: input_digest})

    def record(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Record outcomes or checkpoints: rows ``{id, status, input_digest, error}`` (``status`` ``done``,
        ``failed`` or one of ``stages``; ``error`` empty or absent unless failed); other keys of a row are set on
        the node too. Returns the rows written.

        Raises:
            ValueError: a status that is neither an outcome nor one of ``stages`` (nothing is written).
        """
        at = datetime.now(UTC).isoformat(timespec="seconds")
        allowed = (DONE, FAILED, *self.stages)
        shaped = []
        for r in rows:
            if r["status"] not in allowed:
                raise ValueError(f"{self.label} ledger status {r['status']!r}: expected one of {list(allowed)}")
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
