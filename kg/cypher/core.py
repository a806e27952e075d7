"""Building blocks: identifier quoting, batched MERGE/UNWIND writes, counts, literals."""

from __future__ import annotations

import re
from collections.abc import Sequence

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

#: The example query in ``finkg cypher --help``.
EXAMPLE_QUERY = "MATCH (c:Company) RETURN c.name LIMIT 5"


def quote(name: str) -> str:
    """Return ``name`` backtick-quoted after checking it is a plain identifier.

    Raises:
        ValueError: ``name`` is empty or holds anything but letters, digits and underscores
            (which rules out Cypher injection through a label, type or property key).
    """
    if not isinstance(name, str) or not IDENTIFIER.match(name):
        raise ValueError(
            f"invalid Cypher identifier {name!r}: use letters, digits and underscores, "
            "starting with a letter or underscore"
        )
    return f"`{name}`"


def _key_map(keys: Sequence[str], source: str) -> str:
    return "{" + ", ".join(f"{quote(k)}: {source}.{quote(k)}" for k in keys) + "}"


# --------------------------------------------------------------------------- batched writes


def merge_nodes(label: str, keys: Sequence[str]) -> str:
    """``UNWIND $rows`` and MERGE one ``label`` node per row on its key properties.

    Each row is ``{"key": {k: v, ...}, "props": {...}}``. The statement returns one record with
    ``updated`` (existing nodes whose properties changed) and ``written`` (rows merged); the
    created count comes from the server's counters. Rows must be unique on their key within one
    call (the writer ensures it).
    """
    lab = quote(label)
    key = _key_map(keys, "row.key")
    changed = (
        "existing IS NOT NULL AND any(p IN keys(row.props) WHERE existing[p] IS NULL OR existing[p] <> row.props[p])"
    )
    return (
        "UNWIND $rows AS row\n"
        f"OPTIONAL MATCH (existing:{lab} {key})\n"
        f"WITH row, {changed} AS is_changed\n"
        f"MERGE (n:{lab} {key})\n"
        "SET n += row.props\n"
        "RETURN sum(toInteger(is_changed)) AS updated, count(*) AS written"
    )


def merge_relationships(
    rel_type: str,
    start_label: str,
    start_keys: Sequence[str],
    end_label: str,
    end_keys: Sequence[str],
    rel_keys: Sequence[str] = (),
) -> str:
    """``UNWIND $rows`` and MERGE one ``rel_type`` relationship per row between existing nodes.

    Each row is ``{"start": {...}, "end": {...}, "key": {...}, "props": {...}}``; ``key`` holds
    ``rel_keys`` (empty: at most one relationship of this type per node pair). Endpoints are
    MATCHed with their label on their key, so rows whose endpoints are missing write nothing and
    are counted as ``written`` minus the input size by the caller.
    """
    typ = quote(rel_type)
    rkey = " " + _key_map(rel_keys, "row.key") if rel_keys else ""
    changed = (
        "existing IS NOT NULL AND any(p IN keys(row.props) WHERE existing[p] IS NULL OR existing[p] <> row.props[p])"
    )
    return (
        "UNWIND $rows AS row\n"
        f"MATCH (a:{quote(start_label)} {_key_map(start_keys, 'row.start')})\n"
        f"MATCH (b:{quote(end_label)} {_key_map(end_keys, 'row.end')})\n"
        f"OPTIONAL MATCH (a)-[existing:{typ}{rkey}]->(b)\n"
        f"WITH a, b, row, {changed} AS is_changed\n"
        f"MERGE (a)-[r:{typ}{rkey}]->(b)\n"
        "SET r += row.props\n"
        "RETURN sum(toInteger(is_changed)) AS updated, count(*) AS written"
    )


def matched_relationship_rows(
    start_label: str, start_keys: Sequence[str], end_label: str, end_keys: Sequence[str]
) -> str:
    """Indexes ``i`` of the ``$rows`` whose two endpoints exist (read-only; used to report the
    rows :func:`merge_relationships` could not write)."""
    return (
        "UNWIND range(0, size($rows) - 1) AS i\n"
        "WITH i, $rows[i] AS row\n"
        f"MATCH (a:{quote(start_label)} {_key_map(start_keys, 'row.start')})\n"
        f"MATCH (b:{quote(end_label)} {_key_map(end_keys, 'row.end')})\n"
        "RETURN DISTINCT i"
    )


def delete_nodes_in_transactions(label: str, rows_per_transaction: int = 10_000) -> str:
    """DETACH DELETE every ``label`` node, committing every ``rows_per_transaction`` rows.

    Must run in an auto-commit transaction (``Graph.run_autocommit``).
    """
    if rows_per_transaction < 1:
        raise ValueError("rows_per_transaction must be >= 1")
    return (
        f"MATCH (n:{quote(label)}) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF {int(rows_per_transaction)} ROWS"
    )


def count_nodes(label: str) -> str:
    """Count the ``label`` nodes; returns one record with ``n``."""
    return f"MATCH (n:{quote(label)}) RETURN count(n) AS n"


def count_relationships(rel_type: str) -> str:
    """Count the ``rel_type`` relationships; returns one record with ``n``."""
    return f"MATCH ()-[r:{quote(rel_type)}]->() RETURN count(r) AS n"


def string_literal(value: str) -> str:
    """``value`` as a single-quoted Cypher string literal (backslashes and quotes escaped), for the
    statements a person pastes into Neo4j Browser, where no parameters can travel."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
