"""The server: EXPLAIN, components, running transactions."""

from __future__ import annotations

# --------------------------------------------------------------------------- server


def explain(query: str) -> str:
    """Prefix a user's query with ``EXPLAIN`` (plans it, runs nothing)."""
    return "EXPLAIN " + query


SERVER_COMPONENTS = "CALL dbms.components() YIELD name, versions, edition RETURN name, versions, edition"

# The server's running transactions (``Graph.transactions``), and the termination of a user query that
# Ctrl-C interrupted, found by the tag in its transaction metadata (``Graph.run_user``).
SHOW_TRANSACTIONS = (
    "SHOW TRANSACTIONS YIELD transactionId, currentQuery, metaData, status, elapsedTime\n"
    "RETURN transactionId AS id, currentQuery AS query, metaData AS metadata, status,\n"
    "       elapsedTime.milliseconds AS elapsed_ms"
)
TAGGED_TRANSACTIONS = (
    "SHOW TRANSACTIONS YIELD transactionId, metaData\nWHERE metaData[$key] = $tag\nRETURN transactionId AS id"
)
TERMINATE_TRANSACTIONS = "TERMINATE TRANSACTIONS $ids"
