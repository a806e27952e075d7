"""The Neo4j connection: one wrapper over the official driver with retries and named errors."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, LiteralString, TypeVar, cast

import neo4j
from neo4j.exceptions import AuthError, DriverError, Neo4jError, ServiceUnavailable
from tenacity import (
    Retrying,
    before_sleep_log,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from kg import cypher
from kg.errors import GraphAuthError, GraphUnavailable

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_START_HINT = "`finkg neo4j start` (or `docker compose up -d neo4j`)"


def _is_transient(exc: BaseException) -> bool:
    """True for errors the driver marks retryable (transient, leader switch, dropped connection)."""
    if isinstance(exc, AuthError):
        return False
    if isinstance(exc, (Neo4jError, DriverError)):
        return exc.is_retryable()
    return False


@dataclass(frozen=True)
class WriteResult:
    """What a write returned: its records (list of dicts) and the server's update counters."""

    records: list[dict[str, Any]]
    counters: dict[str, int] = field(default_factory=dict)


class Graph:
    """A connection to one Neo4j database, with retries and errors that say what to do.

    Every unit of work runs in a managed transaction. Transient failures (deadlocks, a dropped
    connection, a database briefly unavailable) are retried with exponential backoff (tenacity:
    ``max_attempts`` tries, waits from 0.2 s doubling up to 5 s); the driver's own retry loop is
    switched off so there is exactly one, visible, policy.

    Args:
        uri: Bolt URI, e.g. ``bolt://127.0.0.1:7687``.
        user, password: credentials; the password comes from configuration, never from code.
        database: database name (``neo4j`` on Community Edition).
        start_hint: the command named in :class:`GraphUnavailable` messages.
        max_attempts: tries per unit of work (>= 1).
        connection_timeout: seconds to wait for a TCP connection.

    Raises (from any method):
        GraphUnavailable: nothing answers at ``uri``; the message names the URI and ``start_hint``.
        GraphAuthError: the server refused the credentials.
    """

    def __init__(
        self,
        uri: str,
        user: str,
        password: str,
        database: str = "neo4j",
        *,
        start_hint: str = DEFAULT_START_HINT,
        max_attempts: int = 5,
        connection_timeout: float = 5.0,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        self.uri, self.user, self.database = uri, user, database
        self.start_hint = start_hint
        self.max_attempts = max_attempts
        self._driver = neo4j.GraphDatabase.driver(
            uri,
            auth=(user, password),
            connection_timeout=connection_timeout,
            max_transaction_retry_time=0,
            notifications_min_severity="OFF",
        )
        self._verified = False

    # ----------------------------------------------------------------- lifecycle
    def close(self) -> None:
        """Close the driver and its connection pool."""
        self._driver.close()

    def __enter__(self) -> Graph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def verify(self) -> dict[str, Any]:
        """Check that the server answers and accepts the credentials.

        Returns:
            ``{"uri", "database", "agent", "protocol_version"}`` of the server.
        """
        try:
            info = self._driver.get_server_info()
        except AuthError as exc:
            raise GraphAuthError(
                f"Neo4j at {self.uri} refused user {self.user!r}: {exc.message}. Check NEO4J_USER / "
                "NEO4J_PASSWORD (or [neo4j] in the finkg settings file); a local server keeps the "
                "password it was first started with."
            ) from exc
        except (ServiceUnavailable, OSError) as exc:
            raise self._unavailable(exc) from exc
        self._verified = True
        return {
            "uri": self.uri,
            "database": self.database,
            "agent": info.agent,
            "protocol_version": ".".join(map(str, info.protocol_version)),
        }

    def _unavailable(self, exc: BaseException) -> GraphUnavailable:
        return GraphUnavailable(
            f"Neo4j is not reachable at {self.uri} ({exc}). Start it with {self.start_hint}, "
            "or point NEO4J_URI at a running server."
        )

    # ----------------------------------------------------------------- units of work
    def _run(self, access: str, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        if not self._verified:
            self.verify()
        retrying = Retrying(
            retry=retry_if_exception(_is_transient),
            stop=stop_after_attempt(self.max_attempts),
            wait=wait_exponential(multiplier=0.2, max=5),
            before_sleep=before_sleep_log(log, logging.WARNING),
            reraise=True,
        )
        try:
            for attempt in retrying:
                mode = neo4j.READ_ACCESS if access == "r" else neo4j.WRITE_ACCESS
                with attempt, self._driver.session(database=self.database, default_access_mode=mode) as session:
                    if access == "r":
                        return session.execute_read(work)
                    return session.execute_write(work)
        except ServiceUnavailable as exc:
            raise self._unavailable(exc) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def read(self, query: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run ``query`` in a read transaction; returns its records as dicts (nodes as property maps)."""

        def work(tx: neo4j.ManagedTransaction) -> list[dict[str, Any]]:
            return [r.data() for r in tx.run(_text(query), dict(params or {}))]

        return self._run("r", work)

    def write(self, query: str, params: Mapping[str, Any] | None = None) -> WriteResult:
        """Run ``query`` in one write transaction; returns its records and update counters."""

        def work(tx: neo4j.ManagedTransaction) -> WriteResult:
            result = tx.run(_text(query), dict(params or {}))
            records = [r.data() for r in result]
            counters = result.consume().counters
            return WriteResult(records, _counters(counters))

        return self._run("w", work)

    def run_autocommit(self, query: str, params: Mapping[str, Any] | None = None) -> WriteResult:
        """Run ``query`` in an auto-commit transaction (needed for ``CALL {...} IN TRANSACTIONS``
        and for schema commands that must not share a transaction). Not retried: it may have
        committed part of its work."""
        if not self._verified:
            self.verify()
        try:
            with self._driver.session(database=self.database) as session:
                result = session.run(_text(query), dict(params or {}))
                records = [r.data() for r in result]
                return WriteResult(records, _counters(result.consume().counters))
        except ServiceUnavailable as exc:
            raise self._unavailable(exc) from exc

    def explain(self, query: str, params: Mapping[str, Any] | None = None) -> neo4j.ResultSummary:
        """Plan ``query`` with EXPLAIN (runs nothing) and return the summary (query_type, plan)."""

        def work(tx: neo4j.ManagedTransaction) -> neo4j.ResultSummary:
            return tx.run(_text(cypher.explain(query)), dict(params or {})).consume()

        return self._run("r", work)

    def server_components(self) -> list[dict[str, Any]]:
        """``dbms.components()``: name, versions and edition of the server."""
        return self.read(cypher.SERVER_COMPONENTS)


def _text(query: str) -> LiteralString:
    """The driver types a query as ``LiteralString`` (a guard against string-built Cypher); finkg's
    queries are composed in kg/cypher.py from constants and take user values only as parameters, and
    ``finkg cypher`` queries pass kg.guard first, so a plain ``str`` is accepted here, in one place."""
    return cast(LiteralString, query)


def _counters(c: neo4j.SummaryCounters) -> dict[str, int]:
    names = (
        "nodes_created",
        "nodes_deleted",
        "relationships_created",
        "relationships_deleted",
        "properties_set",
        "labels_added",
        "constraints_added",
        "constraints_removed",
        "indexes_added",
        "indexes_removed",
    )
    return {n: getattr(c, n) for n in names if getattr(c, n)}
