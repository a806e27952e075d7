"""Running user-typed Cypher safely: plan it first, refuse anything that is not a pure read.

Borrowed habit: the read-only guard of neo4j-graphrag-python's ``retrievers/text2cypher.py``,
hardened as ../shared/NEO4J.md advises: ``EXPLAIN`` first, refuse unless the planned query type
is ``"r"``, refuse ``LOAD CSV`` (a read that makes the server open files and URLs), then run the
query inside a read transaction, which the server itself rejects on any write.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kg.driver import Graph
from kg.errors import ReadOnlyViolation

QUERY_TYPES = {"r": "read", "w": "write", "rw": "read-write", "s": "schema"}
# Plan operators that read from outside the graph.
REFUSED_OPERATORS = {"LoadCSV": "LOAD CSV"}


def _operators(plan: Mapping[str, Any] | None) -> Iterator[str]:
    if not plan:
        return
    yield str(plan.get("operatorType", "")).split("@")[0]
    for child in plan.get("children", []) or []:
        yield from _operators(child)


def check_read_only(graph: Graph, query: str, params: Mapping[str, Any] | None = None) -> str:
    """Plan ``query`` with EXPLAIN and return its query type (``"r"``) if it only reads the graph.

    Raises:
        ReadOnlyViolation: the query writes (``w``/``rw``), changes the schema (``s``) or uses
            LOAD CSV; the message names what was found.
        neo4j.exceptions.CypherSyntaxError: the query does not parse.
    """
    summary = graph.explain(query, params)
    qtype = summary.query_type or ""
    if qtype != "r":
        raise ReadOnlyViolation(
            f"refused: this is a {QUERY_TYPES.get(qtype, qtype or 'unknown')} query "
            f"(query type {qtype!r}); only read queries run without --write"
        )
    used = sorted({REFUSED_OPERATORS[o] for o in _operators(summary.plan) if o in REFUSED_OPERATORS})
    if used:
        raise ReadOnlyViolation(f"refused: the query uses {', '.join(used)}; run it with --write")
    return qtype


def run_user_query(
    graph: Graph,
    query: str,
    params: Mapping[str, Any] | None = None,
    allow_write: bool = False,
) -> list[dict[str, Any]]:
    """Run a user's Cypher and return its records (dicts; nodes become property maps).

    Without ``allow_write`` the query must pass :func:`check_read_only` and runs in a read
    transaction; with it, the query runs in an auto-commit transaction (so ``CALL ... IN
    TRANSACTIONS`` and schema commands work).

    Raises:
        ReadOnlyViolation: see :func:`check_read_only`.
    """
    if allow_write:
        return graph.run_autocommit(query, params).records
    check_read_only(graph, query, params)
    return graph.read(query, params)
