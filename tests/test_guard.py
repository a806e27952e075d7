"""The read-only guard of `finkg cypher`: an allow-list, then EXPLAIN, then a read transaction."""

from __future__ import annotations

import pytest

from kg import ReadOnlyViolation, cypher
from kg.guard import check_read_only, run_user_query, screen

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
]


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
