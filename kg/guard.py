"""Running user-typed Cypher safely: the walls before a query typed into ``finkg cypher`` runs.

0. **Bounds** (:func:`check_bounds`): at most :data:`MAX_QUERY_CHARS` characters, :data:`MAX_TOKENS` tokens
   and :data:`MAX_NESTING` levels (brackets, parentheses, braces, chained NOT), checked before anything is
   sent, with or without ``--write`` (Neo4j 5.26's parser recurses per level: about 200 nested lists
   overflow its stack, and the server then never answers).
1. **A text pre-check** (:func:`screen`), a cheap first wall on the query's tokens read as Neo4j's lexer
   reads them (``\\uXXXX`` escapes resolved first, anywhere in the text, as Neo4j's Java-style input
   stream resolves them; ``//`` comments end at a line feed or a carriage return): one statement; no clause
   that writes (CREATE, MERGE, SET, DELETE, REMOVE, FOREACH, LOAD CSV, ``IN TRANSACTIONS``), no schema or
   administration command (DROP, ALTER, GRANT, DENY, REVOKE, TERMINATE, START/STOP DATABASE, ENABLE ...);
   ``CALL`` only of the procedures a person exploring the graph needs (:data:`ALLOWED_PROCEDURES`:
   labels, relationship types, property keys, the schema, index queries, ``dbms.components``); namespaced
   functions only from Cypher's own namespaces (:data:`ALLOWED_FUNCTION_NAMESPACES`); ``SHOW`` only of
   indexes, constraints, procedures and functions (``SHOW TRANSACTIONS`` shows other users' query text,
   ``SHOW USERS``/``PRIVILEGES``/``SETTINGS`` the server's set-up).
2. **The plan** (:func:`check_plan`), the wall that decides: the same allow-list applied to what the server
   itself parsed, its EXPLAIN plan. Every operator is walked:
   ``ProcedureCall`` must name an allowed procedure, ``Show*`` operators only the allowed SHOW commands,
   ``Terminate*`` and the other command operators are refused, as is ``LoadCSV``; a namespaced function in
   any operator's details must be in an allowed namespace; then the planned query type must be ``"r"``
   (``"s"`` for ``dbms.components()`` alone). No comment, escape or Unicode trick can make this wall and
   the server disagree, because it reads the server's own parse. Administration commands plan as
   ``AdministrationCommand`` or cannot be EXPLAINed at all: both are refused.
3. **A read transaction** in READ access mode: the server itself rejects any write.

``db.stats.*``, ``TERMINATE TRANSACTIONS`` and the other procedures that change server state or act on
other sessions are therefore refused although Neo4j plans them as reads. EXPLAIN runs under the same time
limit as the query, once, never retried (:func:`run_user_query`). With ``--write`` (``allow_write``) walls 1 to 3 do not apply
(the bounds do): the query runs in an auto-commit transaction. Borrowed habit: the read-only guard of
neo4j-graphrag-python's ``retrievers/text2cypher.py``, hardened as ../shared/NEO4J.md advises.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from neo4j.exceptions import ClientError

from kg.errors import QueryTooLarge, ReadOnlyViolation

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

MAX_QUERY_CHARS = 20_000
"""The longest query text ``finkg cypher`` sends, in characters (exploration queries take a few hundred;
large values belong in ``--param``)."""
MAX_TOKENS = 3_000
"""The most tokens (names, literals, operators, brackets) ``finkg cypher`` sends: Neo4j 5.26 needs 1 s to
plan ``RETURN 1 + 1 + ...`` with 1,000 additions, 5 s with 2,000."""
MAX_NESTING = 64
"""The deepest nesting ``finkg cypher`` sends: ``(`` ``[`` ``{`` levels outside strings and comments, plus
a chain of ``NOT``. Measured on Neo4j 5.26 (EXPLAIN): 150 nested lists plan in 0.6 s; 200 overflowed the
parser's stack on one server (where exactly depends on the JIT; 3,000 always do), as do 300 chained NOTs: a
StackOverflowError the server cannot even report, so the client waits for an answer that never comes."""

LINE_ENDS = "\r\n"
r"""The characters that end a ``//`` comment in Neo4j 5.26, found by experiment on the server: CR and LF (raw or
as ``\u000d``/``\u000a``); a Unicode line or paragraph separator, NEL, FF or VT does not end one."""

_TOKEN = re.compile(
    rf"""
    (?P<comment>//[^{LINE_ENDS}]*|/\*.*?\*/)
  | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<quoted>`(?:[^`]|``)*`)
  | (?P<param>\$\w+)
  | (?P<word>[^\W\d]\w*)
  | (?P<number>\d+(?:\.\d+)?)
  | (?P<space>\s+)
  | (?P<punct>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_HEX = frozenset("0123456789abcdefABCDEF")


def resolve_unicode_escapes(query: str) -> str:
    r"""``query`` with its ``\uXXXX`` escapes replaced by their characters, everywhere, as Neo4j 5.26's input
    stream replaces them before its lexer runs (a backslash that follows an even number of backslashes, then
    ``u`` and four hex digits; found by experiment on 5.26). So ``'\u0027`` is a closed string, ``\u000a``
    ends a ``//`` comment, ``\u002F\u002F`` starts one and ``\u005C`` is a backslash that escapes what
    follows it; ``\\u0027`` stays text (an escaped backslash).

    Raises:
        ReadOnlyViolation: a ``\u`` not followed by four hex digits (``\uu0027`` included); Neo4j refuses
            the query too.
    """
    if "\\" not in query:
        return query
    out: list[str] = []
    i, n = 0, len(query)
    while i < n:
        c = query[i]
        if c != "\\":
            j = query.find("\\", i)
            j = n if j < 0 else j
            out.append(query[i:j])
            i = j
            continue
        j = i
        while j < n and query[j] == "\\":
            j += 1
        run = j - i
        if run % 2 == 1 and j < n and query[j] == "u":
            k = j + 1
            digits = query[k : k + 4]
            if len(digits) != 4 or not set(digits) <= _HEX:
                raise ReadOnlyViolation(
                    f"refused: an invalid \\u escape at character {j - 1} (\\u takes four hex digits)"
                )
            out.append("\\" * (run - 1) + chr(int(digits, 16)))
            i = k + 4
        else:
            out.append(query[i:j])
            i = j
    return "".join(out)


def _tokens(query: str) -> list[tuple[str, str]]:
    r"""``(kind, text)`` tokens of ``query`` (``\uXXXX`` escapes already resolved) without comments and
    whitespace; strings become ``("string", "")``, backtick-quoted names ``("quoted", name)`` (never keywords).

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


def nesting_depth(tokens: list[tuple[str, str]]) -> int:
    """The deepest nesting among ``tokens`` (from :func:`_tokens`): open ``(``, ``[`` and ``{`` plus the
    length of the current chain of ``NOT`` (each level is a recursion of Neo4j's parser)."""
    depth = deepest = chain = 0
    for kind, text in tokens:
        if kind == "word" and text.upper() == "NOT":
            chain += 1
            deepest = max(deepest, depth + chain)
            continue
        chain = 0
        if kind != "punct":
            continue
        if text in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif text in ")]}":
            depth -= 1
    return deepest


def check_bounds(query: str) -> None:
    """Refuse a query longer than :data:`MAX_QUERY_CHARS`, with more than :data:`MAX_TOKENS` tokens or nested
    deeper than :data:`MAX_NESTING`, before it is sent (with or without ``--write``): past a few hundred levels
    Neo4j's parser overflows its stack and never answers, and long operator chains plan slowly.

    Raises:
        QueryTooLarge: one line with the length, token count or depth found and the cap.
    """
    if len(query) > MAX_QUERY_CHARS:
        raise QueryTooLarge(
            f"refused: the query is {len(query):,} characters long; finkg cypher sends at most "
            f"{MAX_QUERY_CHARS:,} (pass large values with --param name=value)"
        )
    try:
        tokens = _tokens(resolve_unicode_escapes(query))
    except ReadOnlyViolation:  # unterminated or a bad escape: count every bracket, in strings and comments too
        tokens = [("punct", c) for c in query if c in "()[]{}"]
    if len(tokens) > MAX_TOKENS:
        raise QueryTooLarge(
            f"refused: the query has {len(tokens):,} tokens; finkg cypher sends at most {MAX_TOKENS:,} "
            "(pass long lists of values with --param name=value)"
        )
    depth = nesting_depth(tokens)
    if depth > MAX_NESTING:
        raise QueryTooLarge(
            f"refused: the query nests {depth} levels (brackets, parentheses, braces, chained NOT); finkg cypher "
            f"sends at most {MAX_NESTING} (Neo4j's parser runs out of stack from about 200)"
        )


def _dotted(tokens: list[tuple[str, str]], i: int) -> tuple[str, int]:
    """The dotted name starting at token ``i`` (``db.index.fulltext.queryNodes``) and the index after it."""
    parts = [tokens[i][1]]
    j = i + 1
    while j + 1 < len(tokens) and tokens[j] == ("punct", ".") and tokens[j + 1][0] in ("word", "quoted"):
        parts.append(tokens[j + 1][1])
        j += 2
    return ".".join(parts), j


def screen(query: str) -> None:
    """The text pre-check, a cheap first wall: the allow-list on ``query``'s tokens read as Neo4j 5.26 reads
    them (``\\uXXXX`` escapes resolved first, ``//`` comments ended at CR or LF); refuses a query that is not a
    plain read before anything is sent. :func:`check_plan` decides on the server's own parse after it.

    Raises:
        ReadOnlyViolation: the message says what was found and why it needs ``--write`` (or names an
            unterminated string or comment, or an invalid ``\\u`` escape).
    """
    tokens = _tokens(resolve_unicode_escapes(query))
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


SHOW_OPERATORS_ALLOWED = frozenset({"ShowIndexes", "ShowConstraints", "ShowProcedures", "ShowFunctions"})
"""The SHOW commands' plan operators that run without ``--write``."""
COMMAND_REASONS = {
    "ShowTransactions": "SHOW TRANSACTIONS shows other sessions' query text",
    "TerminateTransactions": "TERMINATE TRANSACTIONS acts on other sessions' transactions",
    "ShowSettings": "SHOW SETTINGS shows the server's configuration",
    "AdministrationCommand": "an administration command (users, roles, databases, privileges)",
}
"""Why a command operator is refused (Neo4j 5.26's operator names; other commands by :data:`COMMAND_PREFIXES`)."""
COMMAND_PREFIXES = ("Show", "Terminate", "Create", "Drop", "Alter", "Grant", "Deny", "Revoke", "Rename", "Enable")
"""Plan operators of commands (``ShowServers``, ``CreateIndex`` ...): refused unless in :data:`SHOW_OPERATORS_ALLOWED`;
no read operator starts with one of these."""
UNEXPLAINABLE = frozenset({"Neo.ClientError.Statement.UnsupportedAdministrationCommand"})
"""Codes of an EXPLAIN that fails because the statement is a command Neo4j will not plan here."""


def _walk(plan: Mapping[str, Any] | None) -> Iterator[Mapping[str, Any]]:
    """Every operator of ``plan`` (the driver's ``summary.plan`` dict), the root first."""
    if not plan:
        return
    yield plan
    for child in plan.get("children", []) or []:
        yield from _walk(child)


def _operator(node: Mapping[str, Any]) -> str:
    """The operator's name without its database (``ProcedureCall@neo4j`` -> ``ProcedureCall``)."""
    return str(node.get("operatorType", "")).split("@")[0]


def _calls(text: str) -> list[str]:
    """The namespaced names called in ``text`` (an operator's details, as Neo4j prints its own parse):
    ``db.labels() :: (label :: STRING)`` -> ``["db.labels"]``; a property access (``n.k``) is not a call.

    Raises:
        ReadOnlyViolation: ``text`` does not tokenize (an unterminated string in the details).
    """
    tokens = _tokens(text)
    found: list[str] = []
    for i, (kind, _text) in enumerate(tokens):
        if kind not in ("word", "quoted") or (i and tokens[i - 1] == ("punct", ".")):
            continue
        name, j = _dotted(tokens, i)
        if "." in name and j < len(tokens) and tokens[j] == ("punct", "("):
            found.append(name)
    return found


def _details(node: Mapping[str, Any]) -> str:
    args = node.get("args") or {}
    return str(args.get("Details", "") or "")


def check_plan(plan: Mapping[str, Any] | None, query_type: str) -> None:
    """The wall that decides: the allow-list applied to the server's own parse of the query (its EXPLAIN
    ``summary.plan``, a dict of ``operatorType``, ``args``, ``identifiers``, ``children``, and ``query_type``).

    Refused (the operators are checked first, so the message names the most specific finding): ``LoadCSV``; a ``ProcedureCall`` of a procedure outside
    :data:`ALLOWED_PROCEDURES`; a ``Show*`` operator outside :data:`SHOW_OPERATORS_ALLOWED`; ``Terminate*`` and
    every other command operator; a namespaced function outside :data:`ALLOWED_FUNCTION_NAMESPACES` in any
    operator's details; then a query type other than ``"r"`` (``"s"`` is let through for ``dbms.components()``
    alone, a DBMS procedure Neo4j plans as ``"s"``).

    Raises:
        ReadOnlyViolation: the message names the operator, procedure or function found.
    """
    if not plan:
        raise ReadOnlyViolation("refused: the server returned no plan to check; run it with --write")
    for node in _walk(plan):
        op = _operator(node)
        details = _details(node)
        if op in REFUSED_OPERATORS:
            raise ReadOnlyViolation(f"refused: the query uses {REFUSED_OPERATORS[op]}; run it with --write")
        if op in COMMAND_REASONS:
            raise ReadOnlyViolation(f"refused: {COMMAND_REASONS[op]} (plan operator {op}); run it with --write")
        if (op.startswith(COMMAND_PREFIXES) or op.endswith("Command")) and op not in SHOW_OPERATORS_ALLOWED:
            raise ReadOnlyViolation(
                f"refused: the plan runs the command {op}; only SHOW INDEXES, CONSTRAINTS, PROCEDURES and "
                "FUNCTIONS run without --write"
            )
        calls = _calls(details)
        if op == "ProcedureCall":
            procedure = calls[0] if calls else ""
            if procedure.lower() not in ALLOWED_PROCEDURES:
                raise ReadOnlyViolation(
                    f"refused: CALL {procedure or details[:80]!s} is not on the allow-list of exploration procedures "
                    f"({', '.join(sorted(ALLOWED_PROCEDURES))}); run it with --write"
                )
            calls = calls[1:]
        for name in calls:
            if name.split(".")[0].lower() not in ALLOWED_FUNCTION_NAMESPACES:
                raise ReadOnlyViolation(
                    f"refused: function {name}() is outside Cypher's own namespaces "
                    f"({', '.join(sorted(ALLOWED_FUNCTION_NAMESPACES))}); run it with --write"
                )
    dbms_call = query_type == "s" and any(
        _operator(n) == "ProcedureCall" and [c.lower() for c in _calls(_details(n))[:1]] == ["dbms.components"]
        for n in _walk(plan)
    )  # dbms.components(), a DBMS procedure, plans as "s"; its operators passed the checks above like any
    if query_type != "r" and not dbms_call:
        raise ReadOnlyViolation(
            f"refused: this is a {QUERY_TYPES.get(query_type, query_type or 'unknown')} query "
            f"(query type {query_type!r}); only read queries run without --write"
        )


def explain_and_check(
    graph: Graph, query: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
) -> str:
    """The plan wall on its own: EXPLAIN ``query`` on the server (under ``timeout`` seconds) and check the plan
    (:func:`check_plan`); returns the query type (``"r"``).

    Raises:
        ReadOnlyViolation: the plan is refused, or Neo4j cannot EXPLAIN the statement (administration
            commands: SHOW USERS, SHOW DATABASES ...), so nothing can be checked.
        QueryTimeout, QueryStackOverflow, QueryBrokeConnection: planning hit a limit (:meth:`Graph.explain`).
        neo4j.exceptions.ClientError: the query does not parse (CypherSyntaxError) or names something unknown.
    """
    try:
        summary = graph.explain(query, params, timeout=timeout)
    except ClientError as exc:
        if exc.code in UNEXPLAINABLE:
            raise ReadOnlyViolation(
                "refused: Neo4j cannot EXPLAIN this statement (an administration command), so the guard cannot "
                "check it; run it with --write"
            ) from None
        raise
    qtype = summary.query_type or ""
    check_plan(summary.plan, qtype)
    return qtype


def check_read_only(
    graph: Graph, query: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
) -> str:
    """All the walls before a read: bound (:func:`check_bounds`) and screen (:func:`screen`) ``query``, then
    EXPLAIN it and check the plan (:func:`explain_and_check`); returns the query type (``"r"``).

    Raises:
        QueryTooLarge: the query is too long or too deeply nested.
        ReadOnlyViolation: the text pre-check or the plan refuses it, or Neo4j cannot EXPLAIN it; the message
            names what was found.
        QueryTimeout, QueryStackOverflow, QueryBrokeConnection: planning hit a limit.
        neo4j.exceptions.ClientError: the query does not parse (CypherSyntaxError) or names something unknown.
    """
    check_bounds(query)
    screen(query)
    return explain_and_check(graph, query, params, timeout=timeout)


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
        QueryTooLarge, ReadOnlyViolation: see :func:`check_read_only` (the bounds hold with ``allow_write``).
        QueryTimeout, QueryMemoryExceeded: the query (or its EXPLAIN) hit a time or memory limit.
        QueryBrokeConnection: the server dropped the connection while running it (not retried).
    """
    if allow_write:
        check_bounds(query)
    else:
        check_read_only(graph, query, params, timeout=timeout)
    return graph.run_user(query, params, write=allow_write, timeout=timeout)
