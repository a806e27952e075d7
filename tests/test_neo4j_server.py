"""`finkg neo4j start | stop | status` on a real second server (own home, own ports)."""

from __future__ import annotations

import socket
import urllib.request

import pytest

from finkg.config import ConfigError
from finkg.neo4j_server import JavaMissing, LocalNeo4j, PortInUse, private_settings
from kg import Graph

# Each test runs or starts a real Neo4j (a second server in its own home, or the configured one).
pytestmark = pytest.mark.neo4j


@pytest.fixture
def second(tmp_path, settings):
    """Settings for a second local server in a fresh home on free ports, small memory.

    The password starts with "-" (token_urlsafe generates such passwords): it must still be
    taken as the password by neo4j-admin, not as an option."""
    return private_settings(tmp_path / "neo4j", "-second-server-pw", pagecache="128m")


def test_start_twice_is_a_no_op_then_stop(second):
    server = LocalNeo4j(second)
    try:
        status, started = server.start()
        assert started and status.running and status.pid
        again, started_again = server.start()
        assert not started_again and again.pid == status.pid
        with Graph(second.uri, "neo4j", "-second-server-pw") as g:
            assert g.read("RETURN 1 AS one") == [{"one": 1}]
        conf = (second.server.home / "conf" / "neo4j.conf").read_text()
        assert "server.default_listen_address=127.0.0.1" in conf
        assert "dbms.security.auth_enabled=true" in conf
        assert "-second-server-pw" not in conf
        with urllib.request.urlopen(status.browser_url, timeout=10) as resp:
            assert b"<title>Neo4j Browser</title>" in resp.read()
    finally:
        assert server.stop()
    assert not server.status().running
    assert server.stop() is False


def test_port_in_use_is_a_clear_error(second):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", second.server.bolt_port))
        taken.listen()
        with pytest.raises(PortInUse, match=f"port {second.server.bolt_port} \\(Bolt\\).*FINKG_SERVER_BOLT_PORT"):
            LocalNeo4j(second).start()
    assert not (second.server.home / "data").exists()


def test_missing_java_is_a_clear_error(second):
    s = second.model_copy(update={"server_java": "/nonexistent/bin/java"})
    with pytest.raises(JavaMissing, match=r"Java 17 or 21.*FINKG_SERVER_JAVA"):
        LocalNeo4j(s).start()


def test_missing_password_is_a_clear_error(second):
    s = second.model_copy(update={"neo4j_password": None})
    with pytest.raises(ConfigError, match=r"NEO4J_PASSWORD.*finkg init"):
        LocalNeo4j(s).start()


def test_the_configured_server_is_already_running_so_start_is_a_no_op(settings, graph):
    """The suite's own server (started by `finkg neo4j start`): a second start changes nothing."""
    server = LocalNeo4j(settings)
    before = server.status()
    if not before.running:
        pytest.skip(f"the server at {settings.uri} is not finkg-managed (e.g. docker compose)")
    status, started = server.start()
    assert not started and status.pid == before.pid
