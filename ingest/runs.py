"""The one resume scheme of every ingest: an ``(:IngestRun)`` node per source file, keyed by its content hash.

Lifecycle: :func:`start` records the run ``running`` with the process that runs it (``pid``, ``host``,
``proc_start``: the process's start time, so that a reused pid is not taken for the same process),
``started_at``; then exactly one of :func:`finish` (``done``, ``finished_at`` and the counts as JSON) or
:func:`fail` (``failed`` with the error). A process killed in between (kill -9, out of memory, a power cut)
leaves its run ``running``: :func:`mark_interrupted`, called when any ingest starts and by ``finkg db status``,
finds the running runs of this host whose process is gone and marks them ``interrupted`` (a run of another
host cannot be checked from here and stays ``running``; ``finkg db status`` shows its host and pid).

Re-ingesting the same file updates the same node (``running`` again, then ``done``), and every write is a
MERGE on a constrained key, so a rerun of an interrupted or failed run completes it.

What readers see of an unfinished run: :func:`ingest.sec.fsds.write_fsds` writes a filing's
``(:Company)-[:FILED]->(:Filing)`` link last, after its facts, concepts and evidence are linked (after every group of
facts of the file, when it is streamed a group at a time), and every
filing reader starts from that link (evidence readers check it too), so a filing is invisible until it is
whole, whatever stage the process died in.

Test hook (tests only, never set in production): ``FINKG_TEST_KILL_AT=<stage>`` makes the process SIGKILL
itself at :func:`checkpoint` ``<stage>`` (before the stage starts; ``<stage>+1`` after the stage's first
batch is committed; ``<stage>#N``: on the stage's Nth pass in the process). Stage names are those of
:func:`ingest.sec.fsds.write_fsds` (``companies`` ... ``filed``; the fact stages pass once per group of facts, so
``facts#2`` is the second group's) and ``link``/``done`` of the pipelines
(before the run's LOADED links, before it is marked done); the memo and report batches of
:mod:`finkg.pipelines` pass ``memo-*`` and ``report-*`` checkpoints between their writes (their modules
name them), so a test can kill them mid-batch too.
"""

from __future__ import annotations

import json
import os
import signal
import socket
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kg import BatchWriter, Graph, cypher
from kg.errors import IngestError
from kg.progress import Tick

KILL_AT_ENV = "FINKG_TEST_KILL_AT"
STATUSES = ("running", "done", "failed", "interrupted")


def source_file(path: Path) -> Path:
    """``path``, checked to be a regular file before an ingest reads it whole (a device such as /dev/zero or a
    named pipe would be read without end, until the memory is gone).

    Raises:
        kg.errors.IngestError: ``path`` does not exist, or is not a regular file (a device, a pipe, a folder).
    """
    if not path.is_file():
        what = "not a regular file (a device, a pipe or a folder)" if path.exists() else "no such file"
        raise IngestError(f"{path}: {what}; give the path of a file to ingest")
    return path


def source_files(paths: Iterable[Path]) -> list[Path]:
    """Every path checked by :func:`source_file`, in order: an ingest calls it before it connects to the
    server, so a wrong path is reported as such even where no server is running.

    Raises:
        kg.errors.IngestError: the first path that does not exist or is not a regular file.
    """
    return [source_file(path) for path in paths]


def run_id(kind: str, sha256: str) -> str:
    """Deterministic run id, e.g. ``sec-fsds:dca07de82a7c40d2`` (first 16 hex digits)."""
    return f"{kind}:{sha256[:16]}"


def now() -> str:
    """UTC time as ISO 8601 (seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def host() -> str:
    """This machine's name, as runs record it."""
    return socket.gethostname()


def process_start(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (``/proc/<pid>/stat`` field 22) as a
    string, or None where there is no ``/proc`` or no such process."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            stat = fh.read()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold spaces: split after its closing one
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def process_alive(pid: int, started: str | None = None) -> bool:
    """Whether process ``pid`` runs on this host (and, when ``started`` is given and ``/proc`` can tell,
    is the process that started then, not a later one that reuses the pid)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, owned by another user
    if started is not None:
        now_started = process_start(pid)
        if now_started is not None and now_started != started:
            return False
    return True


def _process_fields() -> dict[str, Any]:
    pid = os.getpid()
    return {"pid": pid, "host": host(), "proc_start": process_start(pid)}


def start(writer: BatchWriter, rid: str, fields: dict[str, Any]) -> None:
    """Record run ``rid`` ``running`` now by this process; ``fields`` are its other properties (``kind``,
    ``source``, ``sha256`` ...). A previous error or end time of the same run is cleared."""
    record_run(
        writer,
        {**fields, "id": rid, "status": "running", "error": "", "finished_at": None, "started_at": now()}
        | _process_fields(),
    )


def done_record(rid: str, fields: dict[str, Any], started_at: str, counts: dict[str, Any]) -> dict[str, Any]:
    """The properties a run has once :func:`start` then :func:`finish` recorded it (``done``, no error, this
    process, ``counts`` as JSON), for a loader that writes the run node itself (the bulk import)."""
    return {
        **fields,
        "id": rid,
        "status": "done",
        "error": "",
        "started_at": started_at,
        "finished_at": now(),
        **_process_fields(),
        "counts": json.dumps(counts, sort_keys=True),
    }


def finish(writer: BatchWriter, rid: str, counts: dict[str, Any] | None = None) -> None:
    """Mark run ``rid`` ``done`` now, with ``counts`` (stored as JSON)."""
    checkpoint("done")
    record_run(writer, {"id": rid, "status": "done", "finished_at": now()}, counts)


def fail(writer: BatchWriter, rid: str, exc: BaseException, fields: dict[str, Any] | None = None) -> None:
    """Mark run ``rid`` ``failed`` now, with the error's message (first 2,000 characters); ``fields``
    are further run properties (``kind``, ``source``, ``sha256``, ``started_at`` when the run fails
    before it was recorded as running)."""
    record_run(
        writer,
        {**(fields or {}), "id": rid, "status": "failed", "error": str(exc)[:2000], "finished_at": now()}
        | _process_fields(),
    )


def record_run(writer: BatchWriter, run: dict[str, Any], counts: dict[str, Any] | None = None) -> None:
    """MERGE the run node with ``run``'s properties (``id`` required) and ``counts`` as JSON."""
    row = dict(run)
    if counts is not None:
        row["counts"] = json.dumps(counts, sort_keys=True)
    writer.merge_nodes("IngestRun", [row], key="id")


class SourceAlreadyLoaded(IngestError):
    """The same file (same content hash) was loaded before as other filings (another accession number):
    writing it again would count its facts twice."""


def run_state(graph: Graph, rid: str) -> dict[str, Any] | None:
    """Run ``rid``'s ``status``, ``source`` and ``adshs`` (the filings it loaded); None when never run."""
    rows = graph.read(cypher.INGEST_RUN_STATE, {"id": rid})
    return rows[0] if rows else None


def check_same_filings(graph: Graph, rid: str, path: Any, adshs: Iterable[str]) -> None:
    """Refuse to load the file of run ``rid`` as filings other than those an earlier run of it loaded.

    Raises:
        SourceAlreadyLoaded: the earlier run loaded the same content as other accession numbers (e.g.
            ``finkg ingest xbrl --accession`` with another number); nothing is written and the earlier run
            is left as it is.
    """
    state = run_state(graph, rid)
    earlier = sorted(state["adshs"]) if state else []
    now_adshs = sorted(set(adshs))
    if earlier and earlier != now_adshs:
        raise SourceAlreadyLoaded(
            f"{path}: this file (run {rid}, {state['status'] if state else ''}) was loaded before as accession(s) "
            f"{', '.join(earlier)}; loading it as {', '.join(now_adshs)} would count its facts twice: "
            f"ingest it again as {', '.join(earlier)} (e.g. --accession {earlier[0]})"
        )


def fail_unless_done(graph: Graph, writer: BatchWriter, rid: str, exc: BaseException, fields: dict[str, Any]) -> bool:
    """:func:`fail` run ``rid`` unless an earlier run of the same content finished ``done``: a file that
    loaded once cannot turn bad, so the failure comes from this call (an argument such as a rejected
    ``--accession``) and the earlier, successful run is left as it is. Returns True when recorded."""
    state = run_state(graph, rid)
    if state is not None and state["status"] == "done":
        return False
    fail(writer, rid, exc, fields)
    return True


def link_run(writer: BatchWriter, rid: str, label: str, key: str, keys: Iterable[Any]) -> None:
    """``(:IngestRun {id: rid})-[:LOADED]->(:label {key: k})`` for each ``k`` in ``keys``."""
    checkpoint("link")
    rows = [{"start": rid, "end": k} for k in keys]
    writer.merge_relationships("LOADED", rows, start=("IngestRun", "id"), end=(label, key))


def mark_interrupted(graph: Graph) -> list[dict[str, Any]]:
    """Mark ``interrupted`` every ``running`` run of this host whose process is gone (or that recorded no
    process: written before runs did); returns those runs (``id``, ``pid``, ``started_at``, ``error``).

    A run whose process still runs, and a run of another host, is left as it is. The update matches the
    run's pid as read, so a run restarted meanwhile by a new process is not touched.
    """
    here = host()
    stale = []
    for r in graph.read(cypher.RUNNING_INGEST_RUNS):
        pid = r.get("pid")
        if pid is None:
            why = "no process recorded (a run from before runs recorded their process)"
        elif r.get("host") != here or process_alive(int(pid), r.get("proc_start")):
            continue
        else:
            why = f"process {pid} on {here} ended without finishing the run (killed or crashed)"
        stale.append({"id": r["id"], "pid": pid, "started_at": r.get("started_at"), "error": why})
    if stale:
        graph.write(cypher.MARK_RUNS_INTERRUPTED, {"rows": stale, "finished_at": now()})
    return stale


def list_runs(graph: Graph, statuses: Iterable[str] | None = None, limit: int = 50) -> list[dict[str, Any]]:
    """The latest ingest runs (of ``statuses``; all when None), newest first: id, kind, source, status,
    host, pid, started and finished times, error."""
    return graph.read(
        cypher.INGEST_RUNS, {"statuses": list(statuses) if statuses is not None else None, "limit": limit}
    )


_passed: dict[str, int] = {}  # checkpoint name -> times passed in this process (the hook's ``#N``)


def _kill_target() -> tuple[str, int]:
    """The hook's stage and the pass that kills (``name#N``: the Nth pass, default 1); ``("", 0)`` when off."""
    name, _, nth = os.environ.get(KILL_AT_ENV, "").partition("#")
    return name, int(nth) if nth.isdigit() else 1


def checkpoint(stage: str) -> None:
    """The test hook (module docstring): SIGKILL this process when ``FINKG_TEST_KILL_AT`` names ``stage``
    (``stage#N``: on its Nth pass in this process)."""
    name, nth = _kill_target()
    if name != stage:
        return
    _passed[stage] = _passed.get(stage, 0) + 1
    if _passed[stage] >= nth:
        os.kill(os.getpid(), signal.SIGKILL)


def checkpointed(stage: str, advance: Tick | None) -> Tick | None:
    """``advance`` (a progress callback called after each committed batch) that also passes
    :func:`checkpoint` ``<stage>+1`` after the stage's first batch; ``advance`` itself when the hook is off."""
    if _kill_target()[0] != f"{stage}+1":
        return advance

    def tick(n: int) -> None:
        if advance is not None:
            advance(n)
        checkpoint(f"{stage}+1")

    return tick
