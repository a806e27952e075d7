"""Batched, idempotent writes: UNWIND one batch per transaction, labelled MERGE on a constrained key.

Borrowed habit: neo4j-graphrag-python's ``components/kg_writer.py`` (batch and return statistics).
One transaction per row is the known cause of slow ingestion in peer tools; ``bench/write_throughput.py``
measures the difference.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from kg import cypher
from kg.driver import Graph, WriteResult
from kg.progress import Tick

Row = Mapping[str, Any]
Progress = Tick  # an item-level callback (kg.progress)


@dataclass
class WriteStats:
    """Counts of one batched write.

    Attributes:
        rows: rows received.
        written: rows that reached the graph (for relationships: both endpoints existed).
        created: nodes or relationships that did not exist before.
        updated: existing ones whose properties changed.
        unchanged: existing ones whose properties were already equal.
        duplicates: rows dropped because a later row in the same batch had the same key
            (the later row wins).
        missing_endpoints: relationship rows skipped because an endpoint node does not exist;
            ``missing_examples`` keeps up to 5 of them.
        batches: transactions committed.
        seconds: wall time.
    """

    rows: int = 0
    written: int = 0
    created: int = 0
    updated: int = 0
    duplicates: int = 0
    missing_endpoints: int = 0
    batches: int = 0
    seconds: float = 0.0
    missing_examples: list[dict[str, Any]] = field(default_factory=list)

    @property
    def unchanged(self) -> int:
        return self.written - self.created - self.updated

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        """The counts as a plain dict (for tables, JSON and ingest-run records)."""
        return {
            "rows": self.rows,
            "written": self.written,
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "duplicates": self.duplicates,
            "missing_endpoints": self.missing_endpoints,
            "batches": self.batches,
            "seconds": round(self.seconds, 3),
        }


def batches(rows: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """``rows`` in lists of at most ``size`` (the last may be shorter), lazily."""
    it = iter(rows)
    while batch := list(islice(it, size)):
        yield batch


def _pick(row: Row, names: Sequence[str], where: str, index: int) -> dict[str, Any]:
    try:
        values = {n: row[n] for n in names}
    except KeyError as exc:
        raise ValueError(f"row {index}: missing {where} property {exc.args[0]!r}") from None
    for n, v in values.items():
        if v is None:
            raise ValueError(f"row {index}: {where} property {n!r} is null")
    return values


def node_lanes(
    rows: Sequence[dict[str, Any]], nodes: Callable[[dict[str, Any]], tuple[Hashable, Hashable]], lanes: int
) -> list[list[dict[str, Any]]]:
    """Split relationship rows into at most ``lanes`` lists such that no node is touched by rows of two lanes.

    ``nodes(row)`` gives a row's two endpoint identities (``(label, key values)``). Rows joined through a
    shared node (a concept's facts, a filing's facts) form one component (union-find); components go,
    largest first, to the lane with the fewest rows, so lanes stay balanced while sharing no node. Row
    order is kept inside a lane. Empty lanes are dropped.
    """
    parent: dict[Hashable, Hashable] = {}

    def find(x: Hashable) -> Hashable:
        root = x
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    for row in rows:
        a, b = (find(n) for n in nodes(row))
        if a != b:
            parent[a] = b
    groups: dict[Hashable, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(find(nodes(row)[0]), []).append(row)
    out: list[list[dict[str, Any]]] = [[] for _ in range(max(1, lanes))]
    for group in sorted(groups.values(), key=len, reverse=True):
        min(out, key=len).extend(group)
    return [lane for lane in out if lane]


class BatchWriter:
    """Writes rows to Neo4j in batches: UNWIND, one transaction per batch, labelled MERGE on a key.

    Re-writing the same rows creates nothing (``created == 0``, ``updated == 0``). Null property
    values are dropped from ``SET`` (Neo4j cannot store null), so a later null never erases a value.

    Args:
        graph: the connection.
        batch_size: rows per transaction (>= 1); 5,000 suits nodes with a few properties on a
            2-core machine (bench/write_throughput.py).
        workers: transactions in flight at once (>= 1). Two keep both cores of the server busy
            while the client prepares the next batch. Relationship batches are split into lanes that
            share no node (:func:`node_lanes`), one lane per worker, so two transactions in flight never
            lock the same node (no DeadlockDetected retries on a first ingest); nodes are merged on
            distinct keys, which never conflict. Each batch stays one transaction either way.
    """

    def __init__(self, graph: Graph, batch_size: int = 5_000, workers: int = 1) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.graph = graph
        self.batch_size = batch_size
        self.workers = workers

    def merge_nodes(
        self,
        label: str,
        rows: Iterable[Row],
        key: str | Sequence[str],
        progress: Progress | None = None,
    ) -> WriteStats:
        """MERGE one ``label`` node per row on ``key``; the other keys of the row become properties.

        Args:
            label: node label (should carry a uniqueness constraint on ``key``; see kg.schema).
            rows: mappings holding ``key`` and the properties, e.g. ``{"cik": 320193, "name": "Apple"}``.
            key: the key property name, or names for a composite key.
            progress: called with the number of rows after each committed batch.

        Raises:
            ValueError: a row lacks a key property or has a null key; an invalid label or key.
        """
        keys = (key,) if isinstance(key, str) else tuple(key)
        query = cypher.merge_nodes(label, keys)

        def shape(row: Row, i: int) -> tuple[tuple, dict[str, Any]]:
            k = _pick(row, keys, "key", i)
            props = {p: v for p, v in row.items() if p not in k and v is not None}
            return tuple(k.values()), {"key": k, "props": props}

        return self._write(query, rows, shape, progress)

    def merge_relationships(
        self,
        rel_type: str,
        rows: Iterable[Row],
        start: tuple[str, str | Sequence[str]],
        end: tuple[str, str | Sequence[str]],
        key: str | Sequence[str] = (),
        progress: Progress | None = None,
    ) -> WriteStats:
        """MERGE one ``rel_type`` relationship per row between two existing nodes.

        Args:
            rel_type: relationship type, e.g. ``"REPORTS"``.
            rows: mappings with ``"start"`` and ``"end"`` (the endpoints' key values: a scalar
                for a one-property key, a mapping for a composite one) and optional ``"props"``
                (and the ``key`` properties of the relationship itself, at top level).
            start, end: ``(label, key property or properties)`` of the endpoint nodes.
            key: relationship key properties (empty: one relationship of this type per pair).
            progress: called with the number of rows after each committed batch.

        Returns:
            :class:`WriteStats`; rows whose endpoints do not exist are counted in
            ``missing_endpoints`` (with examples), never silently dropped.

        Raises:
            ValueError: a row lacks ``start``/``end`` or a key; invalid identifiers.
        """
        (s_label, s_key), (e_label, e_key) = start, end
        s_keys = (s_key,) if isinstance(s_key, str) else tuple(s_key)
        e_keys = (e_key,) if isinstance(e_key, str) else tuple(e_key)
        r_keys = (key,) if isinstance(key, str) else tuple(key)
        query = cypher.merge_relationships(rel_type, s_label, s_keys, e_label, e_keys, r_keys)

        def endpoint(value: Any, names: tuple[str, ...], where: str, i: int) -> dict[str, Any]:
            if isinstance(value, Mapping):
                return _pick(value, names, where, i)
            if len(names) != 1 or value is None:
                raise ValueError(f"row {i}: {where} must be a mapping with {list(names)}")
            return {names[0]: value}

        def shape(row: Row, i: int) -> tuple[tuple, dict[str, Any]]:
            if "start" not in row or "end" not in row:
                raise ValueError(f"row {i}: a relationship row needs 'start' and 'end'")
            s = endpoint(row["start"], s_keys, "start", i)
            e = endpoint(row["end"], e_keys, "end", i)
            k = _pick(row, r_keys, "relationship key", i)
            props = {p: v for p, v in (row.get("props") or {}).items() if v is not None}
            ident = (tuple(s.values()), tuple(e.values()), tuple(k.values()))
            return ident, {"start": s, "end": e, "key": k, "props": props}

        probe = cypher.matched_relationship_rows(s_label, s_keys, e_label, e_keys)

        def nodes(shaped: dict[str, Any]) -> tuple[Hashable, Hashable]:
            return (s_label, tuple(shaped["start"].values())), (e_label, tuple(shaped["end"].values()))

        return self._write(query, rows, shape, progress, endpoint_probe=probe, nodes=nodes)

    def run_batches(self, query: str, rows: Iterable[Row], params: dict[str, Any] | None = None) -> int:
        """Run a write ``query`` that UNWINDs ``$rows``, one transaction per ``batch_size`` rows, with
        ``params`` as further parameters; returns the sum of the query's ``updated`` column."""
        updated = 0
        for batch in batches(rows, self.batch_size):
            result = self.graph.write(query, {**(params or {}), "rows": batch})
            updated += sum(int(r.get("updated") or 0) for r in result.records)
        return updated

    def _write(
        self,
        query: str,
        rows: Iterable[Row],
        shape: Callable[[Row, int], tuple[tuple, dict[str, Any]]],
        progress: Progress | None,
        endpoint_probe: str | None = None,
        nodes: Callable[[dict[str, Any]], tuple[Hashable, Hashable]] | None = None,
    ) -> WriteStats:
        stats = WriteStats()
        t0 = time.perf_counter()
        lock = threading.Lock()

        def prepared() -> Iterator[tuple[int, list[dict[str, Any]]]]:
            offset = 0
            for batch in batches(rows, self.batch_size):
                unique: dict[tuple, dict[str, Any]] = {}
                for i, row in enumerate(batch, start=offset):
                    ident, shaped = shape(row, i)
                    if ident in unique:
                        stats.duplicates += 1
                        unique.pop(ident)  # keep the later row, in its later position
                    unique[ident] = shaped
                offset += len(batch)
                yield len(batch), list(unique.values())

        def commit(item: tuple[int, list[dict[str, Any]]]) -> tuple[int, list[dict[str, Any]], WriteResult]:
            n, payload = item
            return n, payload, self.graph.write(query, {"rows": payload})

        def account(n: int, payload: list[dict[str, Any]], result: WriteResult) -> None:
            with lock:
                _account(n, payload, result)

        def _account(n: int, payload: list[dict[str, Any]], result: WriteResult) -> None:
            rec = result.records[0] if result.records else {}
            written = int(rec.get("written") or 0)
            stats.rows += n
            stats.written += written
            stats.created += result.counters.get("nodes_created", 0) + result.counters.get("relationships_created", 0)
            stats.updated += int(rec.get("updated") or 0)
            stats.batches += 1
            if endpoint_probe is not None and written < len(payload):
                stats.missing_endpoints += len(payload) - written
                if len(stats.missing_examples) < 5:
                    found = {r["i"] for r in self.graph.read(endpoint_probe, {"rows": payload})}
                    stats.missing_examples.extend(
                        {"start": row["start"], "end": row["end"]} for i, row in enumerate(payload) if i not in found
                    )
                    del stats.missing_examples[5:]
            if progress is not None:
                progress(n)

        if self.workers == 1:
            for item in prepared():
                account(*commit(item))
        elif nodes is not None:
            # Relationships: batches that touch the same node never run in parallel transactions (two
            # MERGEs on one node lock it in both and deadlock); each lane's batches run one after another.
            unique: dict[tuple, dict[str, Any]] = {}
            for i, row in enumerate(rows):
                ident, shaped = shape(row, i)
                if ident in unique:
                    stats.duplicates += 1
                    unique.pop(ident)
                unique[ident] = shaped

            def run_lane(lane: list[dict[str, Any]]) -> None:
                for batch in batches(lane, self.batch_size):
                    account(*commit((len(batch), batch)))

            with ThreadPoolExecutor(self.workers) as pool:
                for f in [
                    pool.submit(run_lane, lane) for lane in node_lanes(list(unique.values()), nodes, self.workers)
                ]:
                    f.result()
            stats.rows += stats.duplicates
        else:
            # Bounded pipeline: at most 2 x workers batches prepared or in flight at once.
            with ThreadPoolExecutor(self.workers) as pool:
                pending: set[Future] = set()
                for item in prepared():
                    pending.add(pool.submit(commit, item))
                    if len(pending) >= 2 * self.workers:
                        done, pending = wait(pending, return_when=FIRST_COMPLETED)
                        for f in done:
                            account(*f.result())
                for f in pending:
                    account(*f.result())
        stats.seconds = time.perf_counter() - t0
        return stats
