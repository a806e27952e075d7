"""Running user-typed Cypher safely: three walls before a query typed into ``finkg cypher`` runs.

1. **An allow-list** (:func:`screen`), applied to the query's tokens after comments and string
   literals are removed: one statement; no clause that writes (CREATE, MERGE, SET, DELETE, REMOVE,
   FOREACH, LOAD CSV, ``IN TRANSACTIONS``), no schema or administration command (DROP, ALTER, GRANT,
   DENY, REVOKE, TERMINATE, START/STOP DATABASE, ENABLE ...); ``CALL`` only of the procedures a person
   exploring the graph needs (:data:`ALLOWED_PROCEDURES`: labels, relationship types, property keys,
   the schema, index queries, ``dbms.components``); namespaced functions only from Cypher's own
   namespaces (:data:`ALLOWED_FUNCTION_NAMESPACES`); ``SHOW`` only of indexes, constraints, procedures
   and functions (``SHOW TRANSACTIONS`` shows other users' query text, ``SHOW USERS``/``PRIVILEGES``/
   ``SETTINGS`` the server's set-up). ``db.stats.*``, ``TERMINATE TRANSACTIONS`` and the other
   procedures that change server state or act on other sessions are therefore refused although Neo4j
   plans them as reads.
2. **EXPLAIN** (:func:`check_read_only`): the planned query type must be ``"r"`` and the plan must not
   read files (LOAD CSV).
3. **A read transaction** in READ access mode: the server itself rejects any write.

With ``--write`` (``allow_write``) none of this applies: the query runs in an auto-commit transaction.
Borrowed habit: the read-only guard of neo4j-graphrag-python's ``retrievers/text2cypher.py``, hardened as
../shared/NEO4J.md advises.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from kg.errors import ReadOnlyViolation

if TYPE_CHECKING:
    from kg.driver import Graph

QUERY_TYPES = {"r": "read", "w": "write", "rw": "read-write", "s": "schema"}
# Plan operators that read from outside the graph.
REFUSED_OPERATORS = {"LoadCSV": "LOAD CSV"}

ALLOWED_PROCEDURES = frozenset(
    name.lower()
    for name in (
        "db.labels",
        "db.relationshipTypes",
        "db.propertyKeys",
        "db.schema.visualization",
        "db.schema.nodeTypeProperties",
        "db.schema.relTypeProperties",
        "db.indexes",
        "db.constraints",
        "db.info",
        "db.index.fulltext.queryNodes",
        "db.index.fulltext.queryRelationships",
        "db.index.fulltext.listAvailableAnalyzers",
        "db.index.vector.queryNodes",
        "db.index.vector.queryRelationships",
        "dbms.components",
    )
)
"""Procedures ``CALL`` may name without ``--write`` (compared case-insensitively)."""

ALLOWED_FUNCTION_NAMESPACES = frozenset(
    {"date", "datetime", "localdatetime", "time", "localtime", "duration", "point", "vector", "db"}
)
"""Namespaces of functions an expression may call (Cypher's own: temporal, spatial, vector, db.nameFromElementId)."""

WRITE_CLAUSES = {
    "CREATE": "CREATE writes",
    "MERGE": "MERGE writes",
    "SET": "SET writes",
    "DELETE": "DELETE writes",
    "DETACH": "DETACH (DELETE) writes",
    "REMOVE": "REMOVE writes",
    "FOREACH": "FOREACH runs write clauses",
    "LOAD": "LOAD CSV makes the server read files and URLs",
    "INSERT": "INSERT writes",
}
ADMIN_COMMANDS = {
    "DROP": "DROP changes the schema or the server",
    "ALTER": "ALTER changes the server",
    "GRANT": "GRANT changes privileges",
    "DENY": "DENY changes privileges",
    "REVOKE": "REVOKE changes privileges",
    "TERMINATE": "TERMINATE acts on other sessions' transactions",
    "START": "START DATABASE acts on the server",
    "STOP": "STOP DATABASE acts on the server",
    "ENABLE": "ENABLE acts on the server",
    "DEALLOCATE": "DEALLOCATE acts on the server",
    "REALLOCATE": "REALLOCATE acts on the server",
    "RENAME": "RENAME changes the server",
}
SHOW_ALLOWED = {"INDEX", "INDEXES", "CONSTRAINT", "CONSTRAINTS", "PROCEDURE", "PROCEDURES", "FUNCTION", "FUNCTIONS"}
SHOW_REASONS = {
    "TRANSACTION": "SHOW TRANSACTIONS shows other sessions' query text",
    "TRANSACTIONS": "SHOW TRANSACTIONS shows other sessions' query text",
    "USER": "SHOW USERS shows the server's accounts",
    "USERS": "SHOW USERS shows the server's accounts",
    "SETTING": "SHOW SETTINGS shows the server's configuration",
    "SETTINGS": "SHOW SETTINGS shows the server's configuration",
}

_TOKEN = re.compile(
    r"""
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<quoted>`(?:[^`]|``)*`)
  | (?P<param>\$\w+)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>\d+(?:\.\d+)?)
  | (?P<space>\s+)
  | (?P<punct>.)
    """,
    re.VERBOSE | re.DOTALL,
)


def _tokens(query: str) -> list[tuple[str, str]]:
    """``(kind, text)`` tokens of ``query`` without comments and whitespace; strings become ``("string", "")``,
    backtick-quoted names ``("quoted", name)`` (never keywords).

    Raises:
        ReadOnlyViolation: an unterminated comment, string or quoted name (the rest could hide anything).
    """
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(query):
        m = _TOKEN.match(query, pos)
        assert m is not None  # the punct alternative matches any character
        unterminated = m.lastgroup == "punct" and (m.group() in "'\"`" or query.startswith("/*", pos))
        if unterminated:
            raise ReadOnlyViolation("refused: an unterminated string, quoted name or comment; run it with --write")
        pos = m.end()
        kind = m.lastgroup or "punct"
        if kind in ("comment", "space"):
            continue
        if kind == "string":
            out.append(("string", ""))
        elif kind == "quoted":
            out.append(("quoted", m.group()[1:-1].replace("``", "`")))
        else:
            out.append((kind, m.group()))
    return out


def _dotted(tokens: list[tuple[str, str]], i: int) -> tuple[str, int]:
    """The dotted name starting at token ``i`` (``db.index.fulltext.queryNodes``) and the index after it."""
    parts = [tokens[i][1]]
    j = i + 1
    while j + 1 < len(tokens) and tokens[j] == ("punct", ".") and tokens[j + 1][0] in ("word", "quoted"):
        parts.append(tokens[j + 1][1])
        j += 2
    return ".".join(parts), j


def screen(query: str) -> None:
    """The allow-list wall: refuse a query that is not a plain read, whatever Neo4j would plan.

    Raises:
        ReadOnlyViolation: the message says what was found and why it needs ``--write``.
    """
    tokens = _tokens(query)
    if any(t == ("punct", ";") for t in tokens[:-1]) or not tokens:
        raise ReadOnlyViolation("refused: one statement at a time without --write (found ';' between statements)")
    words = [(i, t[1].upper()) for i, t in enumerate(tokens) if t[0] == "word"]
    for n, (i, word) in enumerate(words):
        prev = tokens[i - 1] if i else ("punct", "")
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ("punct", "")
        if prev in (("punct", "."), ("punct", ":")):
            continue  # a property key (n.set), a label or relationship type (:Create)
        if word in WRITE_CLAUSES and nxt != ("punct", "."):
            raise ReadOnlyViolation(f"refused: {WRITE_CLAUSES[word]}; run it with --write")
        if word == "IN" and n + 1 < len(words) and words[n + 1][1] in ("TRANSACTIONS", "TRANSACTION"):
            raise ReadOnlyViolation("refused: CALL ... IN TRANSACTIONS runs batched writes; run it with --write")
        if word in ADMIN_COMMANDS and nxt != ("punct", "."):
            raise ReadOnlyViolation(f"refused: {ADMIN_COMMANDS[word]}; run it with --write")
        if word == "SHOW":
            shown = [w for _, w in words[n + 1 : n + 5]]
            bad = next((SHOW_REASONS[w] for w in shown if w in SHOW_REASONS), None)
            if bad or not any(w in SHOW_ALLOWED for w in shown):
                reason = (
                    bad
                    or f"SHOW {' '.join(shown[:2])} is not on the allow-list (indexes, constraints, procedures, functions)"
                )
                raise ReadOnlyViolation(f"refused: {reason}; run it with --write")
        if word == "CALL" and nxt[0] in ("word", "quoted"):
            name, _ = _dotted(tokens, i + 1)
            if name.lower() not in ALLOWED_PROCEDURES:
                raise ReadOnlyViolation(
                    f"refused: CALL {name} is not on the allow-list of exploration procedures "
                    f"({', '.join(sorted(ALLOWED_PROCEDURES))}); run it with --write"
                )
    for i, (kind, _text) in enumerate(tokens):  # namespaced function calls outside CALL
        if kind not in ("word", "quoted") or (i and tokens[i - 1][0] == "word" and tokens[i - 1][1].upper() == "CALL"):
            continue
        if i and tokens[i - 1] == ("punct", "."):
            continue
        name, j = _dotted(tokens, i)
        if "." in name and j < len(tokens) and tokens[j] == ("punct", "("):
            namespace = name.split(".")[0].lower()
            if namespace not in ALLOWED_FUNCTION_NAMESPACES:
                raise ReadOnlyViolation(
                    f"refused: function {name}() is outside Cypher's own namespaces "
                    f"({', '.join(sorted(ALLOWED_FUNCTION_NAMESPACES))}); run it with --write"
                )


def _operators(plan: Mapping[str, Any] | None) -> Iterator[str]:
    if not plan:
        return
    yield str(plan.get("operatorType", "")).split("@")[0]
    for child in plan.get("children", []) or []:
        yield from _operators(child)


def check_read_only(graph: Graph, query: str, params: Mapping[str, Any] | None = None) -> str:
    """Screen ``query`` (:func:`screen`), plan it with EXPLAIN and return its query type (``"r"``).

    Raises:
        ReadOnlyViolation: the allow-list refuses it, or the plan writes (``w``/``rw``), changes the schema
            (``s``) or uses LOAD CSV; the message names what was found.
        neo4j.exceptions.CypherSyntaxError: the query does not parse.
    """
    screen(query)
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
    timeout: float | None = None,
) -> list[dict[str, Any]]:
    """Run a user's Cypher and return its records (dicts; nodes become property maps).

    Without ``allow_write`` the query must pass :func:`check_read_only` and runs in a read
    transaction (READ access mode); with it, the query runs in an auto-commit transaction (so
    ``CALL ... IN TRANSACTIONS`` and schema commands work). Either way the server stops it after
    ``timeout`` seconds, and Ctrl-C stops it, server side too (:meth:`kg.driver.Graph.run_user`).

    Raises:
        ReadOnlyViolation: see :func:`check_read_only`.
        QueryTimeout, QueryMemoryExceeded: the query hit a time or memory limit.
    """
    if not allow_write:
        check_read_only(graph, query, params)
    return graph.run_user(query, params, write=allow_write, timeout=timeout)
