"""The read-only guard of `finkg cypher`: an allow-list, then EXPLAIN, then a read transaction."""

from __future__ import annotations

import re

import pytest
from neo4j.exceptions import ClientError

from kg import ReadOnlyViolation, cypher
from kg.guard import (
    check_plan,
    check_read_only,
    explain_and_check,
    resolve_unicode_escapes,
    run_user_query,
    screen,
)

REFUSED = {
    "create": ("CREATE (n:{L} {{k: 1}}) RETURN n", "CREATE writes"),
    "merge": ("MERGE (n:{L} {{k: 1}})", "MERGE writes"),
    "delete": ("MATCH (n:{L}) DELETE n", "DELETE writes"),
    "detach delete": ("MATCH (n:{L}) DETACH DELETE n", "DETACH \\(DELETE\\) writes"),
    "set": ("MATCH (n:{L}) SET n.k = 2", "SET writes"),
    "remove": ("MATCH (n:{L}) REMOVE n.k", "REMOVE writes"),
    "load csv": ("LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row", "LOAD CSV"),
    "load csv with write": ("LOAD CSV FROM 'file:///x.csv' AS row CREATE (:{L} {{k: row[0]}})", "LOAD CSV"),
    "write procedure": ("CALL db.createLabel('{L}Made')", "CALL db.createLabel is not on the allow-list"),
    "schema": ("CREATE INDEX {L}_i FOR (n:{L}) ON (n.k)", "CREATE writes"),
    "write in a subquery": ("MATCH (n:{L}) CALL (n) {{ SET n.k = 3 }} RETURN count(*)", "SET writes"),
    "server statistics": ("CALL db.stats.collect('QUERIES')", "CALL db.stats.collect is not on the allow-list"),
    "other sessions' queries": ("CALL db.stats.retrieve('QUERIES')", "db.stats.retrieve is not on the allow-list"),
    "terminate": ("TERMINATE TRANSACTIONS 'neo4j-transaction-1'", "TERMINATE acts on other sessions"),
    "show transactions": ("SHOW TRANSACTIONS", "SHOW TRANSACTIONS shows other sessions' query text"),
}


@pytest.mark.parametrize("kind", sorted(REFUSED))
@pytest.mark.reliability("guard")
def test_refuses_writes_and_server_file_reads(graph, label, kind):
    graph.write(f"CREATE (:{label} {{k: 1}})")
    query, expected = REFUSED[kind]
    with pytest.raises(ReadOnlyViolation, match=f"refused: .*{expected}.*--write"):
        run_user_query(graph, query.format(L=label))
    # nothing changed
    assert graph.read(f"MATCH (n:{label}) RETURN n.k AS k") == [{"k": 1}]


@pytest.mark.parametrize(
    "query",
    ["MATCH (n:{L}) RETURN n.k AS k", "SHOW CONSTRAINTS YIELD name RETURN count(*) AS n", "RETURN 1 AS one"],
)
def test_allows_reads(graph, label, query):
    assert check_read_only(graph, query.format(L=label)) == "r"
    assert run_user_query(graph, query.format(L=label)) is not None


def test_write_flag_runs_the_write(graph, label):
    run_user_query(graph, f"CREATE (:{label} {{k: $k}})", {"k": 7}, allow_write=True)
    assert graph.read(cypher.count_nodes(label)) == [{"n": 1}]


def test_params_reach_the_query(graph, label):
    graph.write(f"UNWIND range(1, 5) AS i CREATE (:{label} {{k: i}})")
    got = run_user_query(graph, f"MATCH (n:{label}) WHERE n.k > $min RETURN count(n) AS n", {"min": 3})
    assert got == [{"n": 2}]


# The allow-list wall on its own (no server needed): each string with its verdict, True = allowed.
CORPUS: list[tuple[str, bool]] = [
    # plain reads
    ("MATCH (n) RETURN n LIMIT 5", True),
    ("match (n:Company)-[:FILED]->(f) return f.adsh", True),
    ("OPTIONAL MATCH (n)-[r]-() RETURN type(r), count(*)", True),
    ("MATCH (n) WITH n ORDER BY n.k SKIP 1 LIMIT 2 RETURN n", True),
    ("UNWIND [1, 2, 3] AS x RETURN sum(x)", True),
    ("MATCH (a) RETURN a.name UNION MATCH (b) RETURN b.name", True),
    ("MATCH p = shortestPath((a)-[*..3]-(b)) RETURN length(p)", True),
    ("CALL { MATCH (n) RETURN n } RETURN count(n)", True),
    ("MATCH (n) CALL (n) { MATCH (n)--(m) RETURN m } RETURN m", True),
    ("USE neo4j MATCH (n) RETURN count(n)", True),
    ("EXPLAIN MATCH (n) RETURN n", True),
    ("RETURN 1 AS one", True),
    ("RETURN $x AS x", True),
    # words that look like writes but are data, labels, keys or comments
    ("MATCH (n) WHERE n.name = 'CREATE (x)' RETURN n", True),
    ('MATCH (n) WHERE n.text CONTAINS "DELETE" RETURN n', True),
    ("MATCH (n:Create) RETURN n", True),
    ("MATCH (n) RETURN n.set, n.delete, n.merge", True),
    ("MATCH ()-[r:SET]->() RETURN r", True),
    ("MATCH (n) // DELETE n\nRETURN n", True),
    ("/* CREATE (x) */ MATCH (n) RETURN n", True),
    ("MATCH (`CREATE`) RETURN `CREATE`", True),
    ("MATCH (n) RETURN n;", True),
    # exploration procedures and Cypher's own function namespaces
    ("CALL db.labels()", True),
    ("CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType", True),
    ("CALL db.propertyKeys()", True),
    ("CALL db.schema.visualization()", True),
    ("call DB.LABELS()", True),
    ("CALL db.index.fulltext.queryNodes('chunk_text', 'inflation') YIELD node RETURN node", True),
    ("CALL db.index.vector.queryNodes('chunk_embedding', 5, $v) YIELD node, score RETURN node, score", True),
    ("CALL dbms.components() YIELD name, versions RETURN name, versions", True),
    ("SHOW INDEXES", True),
    ("SHOW CONSTRAINTS YIELD name RETURN name", True),
    ("SHOW PROCEDURES", True),
    ("SHOW FUNCTIONS", True),
    ("SHOW RANGE INDEXES", True),
    ("RETURN date.truncate('month', date())", True),
    ("RETURN duration.between(date('2020-01-01'), date())", True),
    ("RETURN vector.similarity.cosine([1.0, 0.0], [0.0, 1.0])", True),
    ("RETURN point.distance(point({x: 0, y: 0}), point({x: 1, y: 1}))", True),
    # writes
    ("CREATE (n)", False),
    ("create (n)", False),
    ("MERGE (n:X {k: 1})", False),
    ("MATCH (n) SET n.k = 1", False),
    ("MATCH (n) DELETE n", False),
    ("MATCH (n) DETACH DELETE n", False),
    ("MATCH (n) REMOVE n:Label", False),
    ("FOREACH (x IN [1] | CREATE (:X))", False),
    ("MATCH (n) CALL (n) { SET n.k = 1 } RETURN n", False),
    ("CALL { CREATE (n) RETURN n } RETURN n", False),
    ("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10 ROWS", False),
    ("LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row", False),
    ("load csv with headers from 'http://127.0.0.1/x' as r return r", False),
    # tricks: comments, strings, case, several statements
    ("MATCH (n) RETURN n; CREATE (m)", False),
    ("MATCH (n) RETURN n /* */ ; MATCH (m) DETACH DELETE m", False),
    ("MATCH (n) RETURN n // ok\n; DROP INDEX x", False),
    ("RETURN 'unterminated", False),
    ("MATCH (n) RETURN n /* unterminated", False),
    ("MATCH (n) CrEaTe (m)", False),
    # schema and administration
    ("CREATE INDEX i FOR (n:X) ON (n.k)", False),
    ("DROP INDEX i", False),
    ("DROP CONSTRAINT c", False),
    ("TERMINATE TRANSACTIONS 'neo4j-transaction-42'", False),
    ("terminate transaction 'neo4j-transaction-42'", False),
    ("SHOW TRANSACTIONS", False),
    ("SHOW TRANSACTIONS YIELD currentQuery RETURN currentQuery", False),
    ("SHOW USERS", False),
    ("SHOW SETTINGS", False),
    ("SHOW DATABASES", False),
    ("STOP DATABASE neo4j", False),
    ("START DATABASE neo4j", False),
    ("ALTER USER neo4j SET PASSWORD 'x'", False),
    ("GRANT ROLE admin TO bob", False),
    ("ENABLE SERVER 'x'", False),
    # procedures and functions off the allow-list
    ("CALL db.stats.collect('QUERIES')", False),
    ("CALL db.stats.stop('QUERIES')", False),
    ("CALL db.stats.clear('QUERIES')", False),
    ("CALL db.stats.retrieve('QUERIES')", False),
    ("CALL db.createLabel('X')", False),
    ("CALL db.clearQueryCaches()", False),
    ("CALL dbms.killTransaction('x')", False),
    ("CALL dbms.setConfigValue('db.logs.query.enabled', 'OFF')", False),
    ("CALL apoc.create.node(['X'], {})", False),
    ("CALL `db`.`stats`.`collect`('QUERIES')", False),
    ("MATCH (n) CALL apoc.cypher.runWrite('CREATE (:X)', {}) YIELD value RETURN value", False),
    ("RETURN apoc.cypher.runFirstColumnSingle('MATCH (n) RETURN n', {})", False),
    # the bypasses of issue 47: a `//` comment ends at a carriage return; \u0027 closes a string
    ('USE neo4j //x\rTERMINATE TRANSACTIONS "neo4j-transaction-141"', False),
    ("USE neo4j //x\rSHOW TRANSACTIONS YIELD transactionId, currentQuery RETURN *", False),
    ("USE neo4j //x\rSHOW SETTINGS", False),
    ('USE neo4j //x\rCALL db.stats.collect("QUERIES")', False),
    ("WITH '\\u0027 AS x CALL db.stats.status() YIELD section RETURN section //' AS y RETURN y", False),
    ("WITH '\\u0027 AS x RETURN 42 AS hacked //' AS y RETURN y", True),
]


# --- the generated bypass family (issue 47): every comment and string form of Cypher's grammar ---------------
# Each template is (name, text with {P}, where Neo4j reads {P}: "code" or "data"). A forbidden payload in code
# must be refused; a harmless payload, or any payload Neo4j reads as data, must be allowed. The truth of
# "code"/"data" is Neo4j 5.26's own, found by running each form on the server (tests below check it).
FORBIDDEN_COMMANDS = {  # head payloads: whole statements; harmless to the server if one ever ran
    "terminate": "TERMINATE TRANSACTIONS 'neo4j-transaction-999999999'",
    "show transactions": "SHOW TRANSACTIONS YIELD transactionId, currentQuery RETURN *",
    "show settings": "SHOW SETTINGS YIELD name RETURN name",
    "stats status": "CALL db.stats.status() YIELD section RETURN section",
}
FORBIDDEN_CLAUSES = {  # clause payloads: they follow WITH ... (no quotes, so they fit inside any string)
    "stats status": "CALL db.stats.status() YIELD section RETURN section",
    "list connections": "CALL dbms.listConnections() YIELD connectionId, clientAddress RETURN *",
}
HARMLESS = "RETURN 42 AS hacked"

# Characters that end a `//` comment for Neo4j 5.26, and some that do not, written raw and as \uXXXX escapes
# (Neo4j resolves an escape before its lexer runs, anywhere in the text).
ENDS = {"CR": "\r", "LF": "\n", "CRLF": "\r\n", "esc-CR": "\\u000d", "esc-LF": "\\u000A"}
NOT_ENDS = {"LS": "\u2028", "PS": "\u2029", "NEL": "\u0085", "FF": "\f", "VT": "\v", "esc-LS": "\\u2028"}
USE = {"use": "USE neo4j ", "lower use": "use neo4j ", "quoted use": "USE `neo4j`\t", "no use": ""}

HEAD_TEMPLATES: list[tuple[str, str, str]] = []
for use_name, use in USE.items():
    for end_name, end in ENDS.items():
        HEAD_TEMPLATES.append((f"{use_name} // {end_name}", use + "//x" + end + "{P}", "code"))
    HEAD_TEMPLATES += [
        (f"{use_name} /* */", use + "/* x */ {P}", "code"),
        (f"{use_name} /* esc-star-slash", use + "/* x \\u002a/ {P}", "code"),
        (f"{use_name} /* esc-star esc-slash", use + "/* x \\u002A\\u002F {P}", "code"),
        (f"{use_name} esc-slash-slash", use + "\\u002F\\u002F x\n{P}", "code"),
    ]
CLAUSE_TEMPLATES: list[tuple[str, str, str]] = [
    # a string closed by an escape Neo4j resolves to its quote
    ("' esc-quote", "WITH '\\u0027 AS x {P} //' AS y RETURN y", "code"),
    ('" esc-dquote', 'WITH "\\u0022 AS x {P} //" AS y RETURN y', "code"),
    ("' esc-backslash esc-backslash", "WITH 'a\\u005C\\u005C' AS x {P} //' AS y RETURN y", "code"),
    ("' escaped backslash", "WITH 'a\\\\' AS x {P} //' AS y RETURN y", "code"),
    ('" escaped backslash', 'WITH "a\\\\" AS x {P} //" AS y RETURN y', "code"),
    ("` esc-backtick", "WITH 1 AS `x\\u0060, 2 AS y {P} //` RETURN 1", "code"),
    ("` doubled backtick", "WITH 1 AS `x`````, 2 AS y {P}", "code"),
    ("/* */ between", "WITH 1 AS x /* y */ {P}", "code"),
    ("// CR between", "WITH 1 AS x //y\r{P}", "code"),
    ("mixed case WITH", "wItH 1 aS x {P}", "code"),
    # the payload inside a string, a comment or a name: data
    ("' escaped quote", "RETURN 'a\\' {P} ' AS s", "data"),
    ("' esc-backslash quote", "RETURN 'a\\u005C' {P} ' AS s", "data"),
    ("' esc-backslash esc-quote", "RETURN 'a\\u005C\\u0027 {P} ' AS s", "data"),
    ('" escaped dquote', 'RETURN "a\\" {P} " AS s', "data"),
    ('" esc-backslash dquote', 'RETURN "a\\u005C" {P} " AS s', "data"),
    ("' escaped backslash escape", "RETURN 'a\\\\u0027 {P} ' AS s", "data"),
    ("' dquote inside", "RETURN '\" {P} \"' AS s", "data"),
    ('" quote inside', "RETURN \"' {P} '\" AS s", "data"),
    ("` name", "WITH 1 AS `x {P}` RETURN 1 AS one", "data"),
    ("` doubled backtick name", "WITH 1 AS `x`` {P}` RETURN 1 AS one", "data"),
    ("/* */ inside", "RETURN 1 AS one /* {P} */", "data"),
    ("/* // */ inside", "RETURN 1 AS one /* // */ /* {P} */", "data"),
    ("// in string", "RETURN '//' AS s, 1 AS one /* {P} */", "data"),
] + [(f"// {n}", "RETURN 1 AS one //x" + e + "{P}", "data") for n, e in NOT_ENDS.items()]


KEYWORDS = ("TERMINATE", "TRANSACTIONS", "SHOW", "SETTINGS", "YIELD", "RETURN", "CALL", "AS")


def _mixed_case(text: str) -> str:
    """``text`` with its keywords in alternating case (``TeRmInAtE``); names and strings unchanged."""

    def mix(m: re.Match[str]) -> str:
        return "".join(c.upper() if i % 2 == 0 else c.lower() for i, c in enumerate(m.group()))

    return re.sub(rf"\b({'|'.join(KEYWORDS)})\b", mix, text)


def bypass_family() -> list[tuple[str, str, bool]]:
    """``(id, query, allowed)`` for every template with every payload."""
    members: list[tuple[str, str, bool]] = []
    for templates, payloads in ((HEAD_TEMPLATES, FORBIDDEN_COMMANDS), (CLAUSE_TEMPLATES, FORBIDDEN_CLAUSES)):
        for name, template, where in templates:
            members.append((f"{name} | harmless", template.replace("{P}", HARMLESS), True))
            for pname, payload in payloads.items():
                members.append((f"{name} | {pname}", template.replace("{P}", payload), where == "data"))
                if where == "code":
                    members.append(
                        (f"{name} | {pname} mixed case", template.replace("{P}", _mixed_case(payload)), False)
                    )
    return members


BYPASS_FAMILY = bypass_family()


def test_the_corpus_is_large_and_covers_both_verdicts():
    assert len(CORPUS) >= 60
    assert {allowed for _, allowed in CORPUS} == {True, False}
    assert len({q for q, _ in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize(("query", "allowed"), CORPUS, ids=[q[:48] for q, _ in CORPUS])
@pytest.mark.reliability("guard")
def test_the_allow_list_verdicts(query, allowed):
    if allowed:
        screen(query)
    else:
        with pytest.raises(ReadOnlyViolation, match=r"refused: .*--write"):
            screen(query)


@pytest.mark.reliability("guard")
def test_a_refused_terminate_leaves_another_sessions_transaction_running(graph, label):
    """TERMINATE TRANSACTIONS without --write must not kill another session's open write transaction."""
    driver = graph._driver  # a second session of the same server: the "other user"
    with driver.session(database=graph.database) as other:
        tx = other.begin_transaction()
        try:
            tx.run(f"CREATE (:{label} {{k: 1}})").consume()
            ids = [r["transactionId"] for r in graph.read("SHOW TRANSACTIONS YIELD transactionId RETURN transactionId")]
            assert ids
            for tid in ids:
                with pytest.raises(ReadOnlyViolation, match="TERMINATE acts on other sessions"):
                    run_user_query(graph, f"TERMINATE TRANSACTIONS '{tid}'")
            tx.commit()  # still alive: the commit succeeds
        finally:
            if not tx.closed():
                tx.close()
    assert graph.read(f"MATCH (n:{label}) RETURN n.k AS k") == [{"k": 1}]


@pytest.mark.reliability("guard")
def test_refused_statistics_procedures_change_nothing(graph):
    before = graph.read("CALL db.stats.status() YIELD section, status RETURN section, status ORDER BY section")
    for query in (
        "CALL db.stats.collect('QUERIES')",
        "CALL db.stats.clear('QUERIES')",
        "CALL db.stats.stop('QUERIES')",
    ):
        with pytest.raises(ReadOnlyViolation, match="not on the allow-list"):
            run_user_query(graph, query)
    after = graph.read("CALL db.stats.status() YIELD section, status RETURN section, status ORDER BY section")
    assert after == before


@pytest.mark.reliability("guard")
def test_the_read_transaction_is_the_last_wall(graph, label):
    """A write that got past the first two walls would still fail: user queries run in READ access mode."""
    from neo4j.exceptions import ClientError

    with pytest.raises(ClientError):
        graph.read(f"CREATE (:{label} {{k: 1}})")
    assert graph.read(f"MATCH (n:{label}) RETURN count(n) AS n") == [{"n": 0}]


# --- issue 47: the guard and the server read the query alike ---------------------------------------------------


def test_the_family_covers_every_form_and_both_verdicts():
    assert len(BYPASS_FAMILY) >= 300
    assert len({q for _, q, _ in BYPASS_FAMILY}) == len(BYPASS_FAMILY)
    allowed = [a for _, _, a in BYPASS_FAMILY]
    assert 50 <= sum(allowed) <= len(allowed) - 200
    text = "".join(q for _, q, _ in BYPASS_FAMILY)
    for form in ("\r", "\n", "\r\n", "\u2028", "\u2029", "\u0085", "/*", "\\u0027", "\\u0022", "\\u005C", "`", "\\\\"):
        assert form in text, form


@pytest.mark.parametrize(("query", "allowed"), [m[1:] for m in BYPASS_FAMILY], ids=[m[0] for m in BYPASS_FAMILY])
@pytest.mark.reliability("guard")
def test_the_text_wall_reads_the_family_as_neo4j_does(query, allowed):
    if allowed:
        screen(query)
    else:
        with pytest.raises(ReadOnlyViolation, match=r"refused: .*--write"):
            screen(query)


@pytest.mark.parametrize(("query", "allowed"), [m[1:] for m in BYPASS_FAMILY], ids=[m[0] for m in BYPASS_FAMILY])
@pytest.mark.reliability("guard")
def test_the_plan_wall_alone_refuses_the_family(graph, query, allowed):
    """The plan wall on its own (no text pre-check): the server's EXPLAIN of each member, then the whole guard.
    A harmless member in code form runs and returns ``hacked`` (so Neo4j did read the payload as code)."""
    summary = graph.explain(query)
    if allowed:
        check_plan(summary.plan, summary.query_type or "")
        rows = run_user_query(graph, query)
        assert rows
        if "RETURN 42 AS hacked" in query and "hacked" in rows[0]:
            assert rows == [{"hacked": 42}]
    else:
        with pytest.raises(ReadOnlyViolation, match=r"refused: .*--write"):
            check_plan(summary.plan, summary.query_type or "")
        with pytest.raises(ReadOnlyViolation, match=r"refused: .*--write"):
            run_user_query(graph, query)


@pytest.mark.parametrize(
    ("template", "where"),
    [(t, w) for _, t, w in HEAD_TEMPLATES + CLAUSE_TEMPLATES],
    ids=[n for n, _, _ in HEAD_TEMPLATES + CLAUSE_TEMPLATES],
)
@pytest.mark.reliability("guard")
def test_the_family_says_what_neo4j_reads(graph, template, where):
    """Each template's "code"/"data" is Neo4j's own reading: the harmless payload in code form returns
    ``hacked``, in data form it does not (run straight on the server, behind no guard)."""
    rows = graph.read(template.replace("{P}", HARMLESS))
    assert ("hacked" in rows[0]) == (where == "code"), rows


@pytest.mark.parametrize(
    ("raw", "resolved"),
    [
        ("'\\u0027", "''"),
        ("\\u005C\\u0027", "\\'"),
        ("\\\\u0027", "\\\\u0027"),  # an escaped backslash, then text
        ("\\\\\\u0027", "\\\\'"),
        ("\\u0041\\u00e9", "A\u00e9"),
        ("//x\\u000dRETURN", "//x\rRETURN"),
        ("no escape", "no escape"),
    ],
)
def test_unicode_escapes_are_resolved_as_neo4j_resolves_them(raw, resolved):
    assert resolve_unicode_escapes(raw) == resolved


@pytest.mark.parametrize("query", ["RETURN '\\u12G4' AS s", "RETURN 1 AS one // \\uZZZZ", "RETURN '\\uu0027' AS s"])
def test_an_invalid_unicode_escape_is_refused_as_neo4j_refuses_it(graph, query):
    with pytest.raises(ReadOnlyViolation, match=r"invalid \\u escape"):
        screen(query)
    with pytest.raises(ClientError, match="four hexadecimal digits"):
        graph.read(query)


REPORTED = {  # issue 47, as the attacker typed them, and what each must be refused for
    "terminate after CR": ('USE neo4j //x\rTERMINATE TRANSACTIONS "neo4j-transaction-141"', "TERMINATE"),
    "show transactions after CR": (
        "USE neo4j //x\rSHOW TRANSACTIONS YIELD transactionId, currentQuery RETURN *",
        "SHOW TRANSACTIONS",
    ),
    "show settings after CR": ("USE neo4j //x\rSHOW SETTINGS", "SHOW SETTINGS"),
    "stats collect after CR": ('USE neo4j //x\rCALL db.stats.collect("QUERIES")', "db.stats.collect"),
    "stats status after an escaped quote": (
        "WITH '\\u0027 AS x CALL db.stats.status() YIELD section RETURN section //' AS y RETURN y",
        "db.stats.status",
    ),
}


@pytest.mark.parametrize("name", sorted(REPORTED))
@pytest.mark.reliability("guard")
def test_the_reported_bypasses_are_refused_by_both_walls(graph, name):
    query, what = REPORTED[name]
    with pytest.raises(ReadOnlyViolation, match=re.escape(what)):
        screen(query)
    summary = graph.explain(query)
    with pytest.raises(ReadOnlyViolation, match=re.escape(what)):
        check_plan(summary.plan, summary.query_type or "")
    before = graph.read("CALL db.stats.status() YIELD section, status RETURN section, status ORDER BY section")
    with pytest.raises(ReadOnlyViolation, match=re.escape(what)):
        run_user_query(graph, query)
    after = graph.read("CALL db.stats.status() YIELD section, status RETURN section, status ORDER BY section")
    assert after == before


@pytest.mark.reliability("guard")
def test_the_escaped_quote_trick_reads_as_neo4j_reads_it(graph):
    """``'\\u0027`` is a closed string for Neo4j: the harmless form returns ``hacked``, through the guard."""
    assert run_user_query(graph, "WITH '\\u0027 AS x RETURN 42 AS hacked //' AS y RETURN y") == [{"hacked": 42}]


PLAN_ONLY = {  # what the text pre-check lets through on purpose or cannot see; the plan wall still decides
    "terminate": ("TERMINATE TRANSACTIONS 'neo4j-transaction-999999999'", "TERMINATE TRANSACTIONS"),
    "show transactions": ("SHOW TRANSACTIONS", "SHOW TRANSACTIONS"),
    "show settings": ("SHOW SETTINGS", "SHOW SETTINGS"),
    "stats": ("CALL db.stats.status()", "db.stats.status"),
    "stats in a subquery": ("CALL { CALL db.stats.status() YIELD section RETURN section } RETURN 1", "db.stats"),
    "clear caches": ("CALL db.clearQueryCaches()", "db.clearQueryCaches"),
    "load csv": ("LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row", "LOAD CSV"),
    "create": ("CREATE (n) RETURN n", "write"),
}


@pytest.mark.parametrize("name", sorted(PLAN_ONLY))
@pytest.mark.reliability("guard")
def test_the_plan_wall_names_what_it_refuses(graph, name):
    query, what = PLAN_ONLY[name]
    summary = graph.explain(query)
    with pytest.raises(ReadOnlyViolation, match=re.escape(what)):
        check_plan(summary.plan, summary.query_type or "")


@pytest.mark.parametrize(
    "query",
    [
        "SHOW INDEXES",
        "SHOW CONSTRAINTS YIELD name RETURN name",
        "SHOW PROCEDURES YIELD name RETURN name",
        "SHOW FUNCTIONS YIELD name RETURN name",
        "CALL db.labels()",
        "CALL db.propertyKeys() YIELD propertyKey RETURN propertyKey",
        "CALL dbms.components()",
        "RETURN date.truncate('month', date('2020-05-17')) AS d",
        "MATCH (n) WHERE n.name = 'db.stats.collect()' RETURN n.k LIMIT 1",
        "UNWIND [1, 2] AS x RETURN duration.between(date('2020-01-01'), date('2021-01-01')) AS d, x",
    ],
)
@pytest.mark.reliability("guard")
def test_the_plan_wall_lets_exploration_through(graph, query):
    summary = graph.explain(query)
    check_plan(summary.plan, summary.query_type or "")
    assert check_read_only(graph, query) == ("s" if "dbms.components" in query else "r")
    assert run_user_query(graph, query) is not None


@pytest.mark.parametrize(
    ("query", "error", "what"),
    [
        ("SHOW USERS", ReadOnlyViolation, "an administration command"),
        ("SHOW DATABASES", ReadOnlyViolation, "an administration command"),
        ("SHOW PRIVILEGES", ReadOnlyViolation, "cannot EXPLAIN"),
        ("USE system SHOW USERS", ClientError, "USE"),
    ],
)
@pytest.mark.reliability("guard")
def test_administration_commands_are_refused_by_the_plan_wall(graph, query, error, what):
    """The plan wall on its own: an administration command plans as ``AdministrationCommand``, or cannot be
    EXPLAINed at all (refused), or does not parse (the server's error); it never runs."""
    with pytest.raises(error, match=what):
        explain_and_check(graph, query)
    with pytest.raises(ReadOnlyViolation, match="refused: "):
        check_read_only(graph, query)
