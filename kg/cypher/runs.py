"""Ingest runs (ingest/runs.py) and the item ledger of derived outputs (kg/ledger.py)."""

from __future__ import annotations

from kg.cypher.core import quote

# --------------------------------------------------------------------------- ingest runs (ingest/runs.py)

RUNNING_INGEST_RUNS = (
    "MATCH (r:IngestRun) WHERE r.status = 'running'\n"
    "RETURN r.id AS id, r.pid AS pid, r.host AS host, r.proc_start AS proc_start, r.started_at AS started_at\n"
    "ORDER BY r.id"
)
"""The runs recorded as ``running`` with the process that runs them (null pid: recorded before runs kept it)."""

MARK_RUNS_INTERRUPTED = (
    "UNWIND $rows AS row\n"
    "MATCH (r:IngestRun {id: row.id})\n"
    "WHERE r.status = 'running' AND coalesce(r.pid, -1) = coalesce(row.pid, -1)\n"
    "SET r.status = 'interrupted', r.error = row.error, r.finished_at = $finished_at\n"
    "RETURN count(r) AS updated"
)
"""Mark runs ``interrupted`` (``$rows``: ``{id, pid, error}``), only while still ``running`` by the same pid."""

INGEST_RUNS = (
    "MATCH (r:IngestRun) WHERE $statuses IS NULL OR r.status IN $statuses\n"
    "RETURN r.id AS id, r.kind AS kind, r.source AS source, r.status AS status, r.host AS host, r.pid AS pid,\n"
    "       r.started_at AS started_at, r.finished_at AS finished_at, r.error AS error\n"
    "ORDER BY r.started_at DESC, r.id LIMIT $limit"
)
"""The latest ingest runs of ``$statuses`` (null: all), at most ``$limit``, newest first."""

INGEST_RUN_STATE = (
    "MATCH (r:IngestRun {id: $id})\n"
    "RETURN r.status AS status, r.source AS source, [(r)-[:LOADED]->(f:Filing) | f.adsh] AS adshs"
)
"""One ingest run's status, source and the accession numbers of the filings it loaded (no row: never run)."""

INGEST_RUN_STATUS_COUNTS = "MATCH (r:IngestRun) RETURN r.status AS status, count(r) AS runs ORDER BY status"
"""How many ingest runs are in each status."""

HIDDEN_FILINGS = "MATCH (f:Filing) WHERE NOT EXISTS { (:Company)-[:FILED]->(f) }\nRETURN count(f) AS filings"
"""Filings written by a run that has not finished them (no ``FILED`` link yet): readers do not see them."""

# --------------------------------------------------------------------------- the item ledger (kg/ledger.py)


def ledger_state(label: str) -> str:
    """The ledger fields of the ``label`` nodes whose ``id`` is in ``$ids``."""
    return (
        "UNWIND $ids AS id\n"
        f"MATCH (n:{quote(label)} {{id: id}})\n"
        "RETURN n.id AS id, n.status AS status, n.input_digest AS input_digest, n.error AS error,\n"
        "       n.attempts AS attempts"
    )


def ledger_record(label: str) -> str:
    """MERGE one ``label`` node per ``$rows`` item (``{id, status, input_digest, error, props}``) and set
    its ledger fields and ``ledger_at = $at``; an outcome (``done``, ``failed``) counts one more attempt, a
    checkpoint stage none. Returns ``updated`` (rows written)."""
    return (
        "UNWIND $rows AS row\n"
        f"MERGE (n:{quote(label)} {{id: row.id}})\n"
        "SET n += row.props, n.status = row.status, n.input_digest = row.input_digest, n.error = row.error,\n"
        "    n.ledger_at = $at,\n"
        "    n.attempts = coalesce(n.attempts, 0) + CASE WHEN row.status IN ['done', 'failed'] THEN 1 ELSE 0 END\n"
        "RETURN count(n) AS updated"
    )


DELETE_CLAIMS_OF_MEMOS = "UNWIND $ids AS id\nMATCH (:Memo {id: id})-[:HAS_CLAIM]->(c:Claim)\nDETACH DELETE c"
"""Remove the claims of memos about to be written again (a redo may make fewer claims, or cite other facts)."""
