"""The read-only guard of `finkg cypher`: EXPLAIN first, refuse anything but a read."""

from __future__ import annotations

import pytest

from kg import ReadOnlyViolation, cypher
from kg.guard import check_read_only, run_user_query

REFUSED = {
    "create": ("CREATE (n:{L} {{k: 1}}) RETURN n", "read-write"),
    "merge": ("MERGE (n:{L} {{k: 1}})", "write"),
    "delete": ("MATCH (n:{L}) DELETE n", "write"),
    "detach delete": ("MATCH (n:{L}) DETACH DELETE n", "write"),
    "set": ("MATCH (n:{L}) SET n.k = 2", "write"),
    "remove": ("MATCH (n:{L}) REMOVE n.k", "write"),
    "load csv": ("LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row", "LOAD CSV"),
    "load csv with write": ("LOAD CSV FROM 'file:///x.csv' AS row CREATE (:{L} {{k: row[0]}})", "read-write|write"),
    "write procedure": ("CALL db.createLabel('{L}Made')", "write"),
    "schema": ("CREATE INDEX {L}_i FOR (n:{L}) ON (n.k)", "schema"),
    "write in a subquery": ("MATCH (n:{L}) CALL (n) {{ SET n.k = 3 }} RETURN count(*)", "write"),
}


@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_refuses_writes_and_server_file_reads(graph, label, kind):
    graph.write(f"CREATE (:{label} {{k: 1}})")
    query, expected = REFUSED[kind]
    with pytest.raises(ReadOnlyViolation, match=f"refused: .*({expected})"):
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
