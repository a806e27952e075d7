"""Connection errors name the URI and the command that starts Neo4j."""

from __future__ import annotations

import pytest
from conftest import free_port

from kg import Graph, GraphAuthError, GraphUnavailable


def test_unreachable_server_is_a_named_error():
    uri = f"bolt://127.0.0.1:{free_port()}"
    with Graph(uri, "neo4j", "whatever", connection_timeout=2) as g, pytest.raises(GraphUnavailable) as info:
        g.read("RETURN 1")
    assert uri in str(info.value)
    assert "finkg neo4j start" in str(info.value)


@pytest.mark.neo4j  # its subprocess talks to the server
def test_wrong_password_is_a_named_error(settings):
    with (
        Graph(settings.uri, settings.neo4j.user, settings.password() + "-wrong") as g,
        pytest.raises(GraphAuthError, match=r"refused user 'neo4j'.*NEO4J_PASSWORD"),
    ):
        g.verify()


def test_verify_reports_the_server(graph):
    info = graph.verify()
    assert info["agent"].startswith("Neo4j/5.26")
    assert graph.server_components()[0]["versions"][0].startswith("5.26")
