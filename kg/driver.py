"""The Neo4j connection: one wrapper over the official driver with retries and named errors."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, LiteralString, TypeVar, cast

import neo4j
from neo4j.exceptions import (
    AuthError,
    ConfigurationError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)
from tenacity import (
    Retrying,
    before_sleep_log,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from kg import cypher
from kg.errors import (
    ConfigError,
    GraphAuthError,
    GraphError,
    GraphUnavailable,
    QueryBrokeConnection,
    QueryLimitExceeded,
    QueryMemoryExceeded,
    QueryStackOverflow,
    QueryTimeout,
)

log = logging.getLogger(__name__)
# The driver's own warnings ("Unable to retrieve routing information") would reach stderr through logging's
# last-resort handler, beside the one line finkg prints for the same failure; an application that configures
# logging still gets them.
logging.getLogger("neo4j").addHandler(logging.NullHandler())
T = TypeVar("T")

DEFAULT_START_HINT = "`finkg neo4j start` (or `docker compose up -d neo4j`)"


TIMEOUT_CODES = frozenset(
    {
        "Neo.ClientError.Transaction.TransactionTimedOut",
        "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
    }
)
"""Status codes of a transaction stopped by its timeout (Neo4j 5.26 sends the second for the server's default
too, so which limit it was is told by whether the client set one)."""
MEMORY_CODE_PARTS = ("MemoryPoolOutOfMemoryError", "OutOfMemoryError", "TransactionMemoryLimit")
"""Parts of the status codes of a transaction stopped for memory (``Neo.TransientError.General.*``)."""
STACK_OVERFLOW = "StackOverflowError"
"""What the server's message holds when parsing or planning a query ran out of stack (too deeply nested)."""
DEADLINE_GRACE_S = 5.0
"""Seconds a user query may outlive its timeout before the client stops waiting (:meth:`Graph.run_user`):
Neo4j checks a transaction's timeout while it executes, not while it parses or plans."""
QUERY_TAG = "finkg_query"
"""The transaction-metadata key that tags a user query (:meth:`Graph.run_user`), so Ctrl-C can find it."""

TIMEOUT_HINT = "raise it with `finkg cypher --timeout SECONDS` or [neo4j] query_timeout (FINKG_NEO4J__QUERY_TIMEOUT)"
SERVER_TIMEOUT_HINT = (
    "raise db.transaction.timeout: [server] transaction_timeout (FINKG_SERVER__TRANSACTION_TIMEOUT), then "
    "`finkg neo4j stop && finkg neo4j start`; with Docker, FINKG_SERVER__TRANSACTION_TIMEOUT for "
    "docker-compose.yml"
)
MEMORY_HINT = (
    "raise db.memory.transaction.max: [server] transaction_memory (FINKG_SERVER__TRANSACTION_MEMORY), then "
    "`finkg neo4j stop && finkg neo4j start` (with Docker, FINKG_SERVER__TRANSACTION_MEMORY for "
    "docker-compose.yml), or make the work smaller (LIMIT, count() instead of collect(), a smaller "
    "[writer] batch_size)"
)


def _is_limit(exc: BaseException) -> bool:
    """True for a transaction the server stopped at a limit (timeout, memory, or its stack)."""
    if not isinstance(exc, Neo4jError):
        return False
    code = exc.code or ""
    return (
        code in TIMEOUT_CODES
        or any(part in code for part in MEMORY_CODE_PARTS)
        or STACK_OVERFLOW in (exc.message or "")
    )


def _is_transient(exc: BaseException) -> bool:
    """True for errors the driver marks retryable (transient, leader switch, dropped connection).

    A transaction stopped at a time or memory limit is never retried, although Neo4j marks a memory
    error transient: the same work would hit the same limit again."""
    if isinstance(exc, AuthError) or _is_limit(exc):
        return False
    if isinstance(exc, (Neo4jError, DriverError)):
        return exc.is_retryable()
    return False


def limit_error(exc: Neo4jError, timeout: float | None) -> QueryLimitExceeded | None:
    """The named error for a transaction stopped at a limit, one line that says which limit and how
    to raise it; None for any other error. ``timeout``: the seconds the client asked for, if any (then
    a timeout is that one, else the server's db.transaction.timeout)."""
    code = exc.code or ""
    first = (exc.message or "").strip().split("\n")[0]
    if STACK_OVERFLOW in (exc.message or ""):
        return QueryStackOverflow(
            "the server ran out of stack parsing or planning the query (StackOverflowError): it nests too "
            "deeply; write it flatter (UNWIND, a list parameter) instead of thousands of nested brackets"
        )
    if code in TIMEOUT_CODES and timeout:  # Neo4j 5.26 reports either limit as ...ClientConfiguration
        limit = f" ({timeout:g} s)"
        return QueryTimeout(
            f"the query ran past its time limit{limit} and the server stopped it; {TIMEOUT_HINT}, "
            "or make the query cheaper (LIMIT, a narrower MATCH)"
        )
    if code in TIMEOUT_CODES:
        return QueryTimeout(
            f"the transaction ran past the server's time limit (db.transaction.timeout) and was stopped; "
            f"{SERVER_TIMEOUT_HINT}"
        )
    if any(part in code for part in MEMORY_CODE_PARTS):
        return QueryMemoryExceeded(
            f"the transaction needed more memory than the server allows one transaction "
            f"(db.memory.transaction.max; the server says: {first[:300]}); {MEMORY_HINT}"
        )
    return None


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
    switched off so there is exactly one, visible, policy. A query a person typed (:meth:`run_user`,
    :meth:`explain`) runs once; a transaction stopped at a time, memory or stack limit is never retried; a
    connection lost while the server still answers a fresh one is not retried either (the work broke it) and
    is :class:`QueryBrokeConnection`, never "not reachable".

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
        try:
            self._driver = neo4j.GraphDatabase.driver(
                uri,
                auth=(user, password),
                connection_timeout=connection_timeout,
                max_transaction_retry_time=0,
                notifications_min_severity="OFF",
            )
        except (ConfigurationError, ValueError) as exc:
            raise ConfigError(
                f"Neo4j URI {uri!r} is not usable ({exc}): use one of bolt://, bolt+s://, bolt+ssc://, neo4j://, "
                "neo4j+s://, neo4j+ssc:// with the Bolt port (NEO4J_URI or [neo4j] uri)"
            ) from None
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
        except ValueError as exc:  # the driver's "Cannot resolve address HOST:PORT" (an unknown host name)
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
            f"Neo4j is not reachable at {self.uri} ({' '.join(str(exc).split())}). Start it with {self.start_hint}, "
            "or point NEO4J_URI at a running server."
        )

    # ----------------------------------------------------------------- units of work
    def _run(
        self,
        access: str,
        work: Callable[[neo4j.ManagedTransaction], T],
        timeout: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        cancelled: threading.Event | None = None,
        retry: bool = True,
    ) -> T:
        if not self._verified:
            self.verify()
        if timeout is not None or metadata:
            work = neo4j.unit_of_work(timeout=timeout, metadata=dict(metadata or {}) or None)(work)

        def again(exc: BaseException) -> bool:
            """Retry a transient failure, but never after Ctrl-C stopped the work, nor when the connection was
            lost while the server answers a fresh one (the work itself broke it: a StackOverflowError, the
            server out of memory; the same work would break it again)."""
            if not _is_transient(exc) or (cancelled is not None and cancelled.is_set()):
                return False
            return not (isinstance(exc, (ServiceUnavailable, SessionExpired)) and self._answers())

        retrying = Retrying(
            retry=retry_if_exception(again),
            stop=stop_after_attempt(self.max_attempts if retry else 1),
            wait=wait_exponential(multiplier=0.2, max=5),
            before_sleep=before_sleep_log(log, logging.WARNING),
            reraise=True,
        )
        with self._translated(timeout):
            for attempt in retrying:
                mode = neo4j.READ_ACCESS if access == "r" else neo4j.WRITE_ACCESS
                with attempt, self._driver.session(database=self.database, default_access_mode=mode) as session:
                    if access == "r":
                        return session.execute_read(work)
                    return session.execute_write(work)
        raise AssertionError("unreachable")  # pragma: no cover

    def _answers(self) -> bool:
        """Whether the server answers on a fresh connection now (after one was lost)."""
        try:
            self._driver.get_server_info()
        except (DriverError, Neo4jError, OSError, ValueError):
            return False
        return True

    @contextlib.contextmanager
    def _translated(self, timeout: float | None) -> Iterator[None]:
        """Raise a lost server as :class:`GraphUnavailable`; a connection lost while the server still answers
        as :class:`QueryBrokeConnection` (the work itself broke it: never "not reachable"); a transaction
        stopped at a time, memory or stack limit as :class:`QueryTimeout` / :class:`QueryMemoryExceeded` /
        :class:`QueryStackOverflow` (see :func:`limit_error`)."""
        try:
            yield
        except (ServiceUnavailable, SessionExpired) as exc:
            if self._answers():
                raise QueryBrokeConnection(
                    f"the server at {self.uri} dropped the connection while running the query, and answers "
                    "other queries: the query itself broke it (the server's logs/debug.log says why, e.g. a "
                    "StackOverflowError from deep nesting or an OutOfMemoryError)"
                ) from None
            raise self._unavailable(exc) from exc
        except Neo4jError as exc:
            limit = limit_error(exc, timeout)
            if limit is None:
                raise
            raise limit from None

    def read(
        self,
        query: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        cancelled: threading.Event | None = None,
        retry: bool = True,
    ) -> list[dict[str, Any]]:
        """Run ``query`` in a read transaction; returns its records as dicts (nodes as property maps).

        Args:
            timeout: seconds the server lets the transaction run (None: the server's db.transaction.timeout).
            metadata: transaction metadata (``SHOW TRANSACTIONS`` shows it).
            cancelled: once set, a failure is not retried (the caller has given up on the work).
            retry: False runs it once (a user's query: its failure is shown, not retried).

        Raises:
            QueryTimeout, QueryMemoryExceeded: the server stopped the transaction at a limit (not retried).
        """

        def work(tx: neo4j.ManagedTransaction) -> list[dict[str, Any]]:
            return [r.data() for r in tx.run(_text(query), dict(params or {}))]

        return self._run("r", work, timeout, metadata, cancelled, retry)

    def write(self, query: str, params: Mapping[str, Any] | None = None) -> WriteResult:
        """Run ``query`` in one write transaction; returns its records and update counters."""

        def work(tx: neo4j.ManagedTransaction) -> WriteResult:
            result = tx.run(_text(query), dict(params or {}))
            records = [r.data() for r in result]
            counters = result.consume().counters
            return WriteResult(records, _counters(counters))

        return self._run("w", work)

    def run_autocommit(
        self,
        query: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> WriteResult:
        """Run ``query`` in an auto-commit transaction (needed for ``CALL {...} IN TRANSACTIONS``
        and for schema commands that must not share a transaction). Not retried: it may have
        committed part of its work. ``timeout`` and ``metadata`` as in :meth:`read`."""
        if not self._verified:
            self.verify()
        with self._translated(timeout), self._driver.session(database=self.database) as session:
            q = neo4j.Query(_text(query), metadata=dict(metadata or {}) or None, timeout=timeout)
            result = session.run(q, dict(params or {}))
            records = [r.data() for r in result]
            return WriteResult(records, _counters(result.consume().counters))

    def run_user(
        self, query: str, params: Mapping[str, Any] | None = None, *, write: bool = False, timeout: float | None = None
    ) -> list[dict[str, Any]]:
        """Run a query a person typed (``finkg cypher``) once, so that Ctrl-C and its time limit stop it, on
        the server too.

        The query runs in a read transaction (``write``: auto-commit) with ``timeout`` seconds, tagged in its
        metadata (:data:`QUERY_TAG`), and is never retried: its failure is shown as it is (see :meth:`_watched`).

        Returns:
            The records as dicts (nodes as property maps).

        Raises:
            QueryTimeout, QueryMemoryExceeded, QueryStackOverflow: the query hit a limit; QueryBrokeConnection:
            the server dropped the connection while running it; KeyboardInterrupt: Ctrl-C (after the
            server's transaction is stopped); what the query itself raises.
        """

        def call(tag: dict[str, str], cancelled: threading.Event) -> list[dict[str, Any]]:
            if write:
                return self.run_autocommit(query, params, timeout=timeout, metadata=tag).records
            return self.read(query, params, timeout=timeout, metadata=tag, cancelled=cancelled, retry=False)

        return self._watched(call, timeout)

    def _watched(self, call: Callable[[dict[str, str], threading.Event], T], timeout: float | None) -> T:
        """Run ``call(tag, cancelled)`` in a worker thread and wait for it, stopping the tagged transaction when
        the wait ends early.

        ``tag`` is the transaction metadata to send (``{QUERY_TAG: <uuid>}``). When Ctrl-C interrupts the wait,
        or the worker is still running ``timeout`` + :data:`DEADLINE_GRACE_S` seconds after it started (Neo4j
        does not apply a transaction's timeout while it parses or plans), the tagged transaction is terminated
        (``TERMINATE TRANSACTIONS``; the driver alone would wait for the query to finish) and the wait ends
        with KeyboardInterrupt or :class:`QueryTimeout`. A worker the server does not release is left behind
        (a daemon thread).

        Raises:
            QueryTimeout: the deadline passed; KeyboardInterrupt: Ctrl-C; what ``call`` raises.
        """
        tag = {QUERY_TAG: uuid.uuid4().hex}
        box: dict[str, Any] = {}
        cancelled = threading.Event()

        def target() -> None:
            try:
                box["result"] = call(tag, cancelled)
            except BaseException as exc:  # handed to the calling thread
                box["error"] = exc

        deadline = time.monotonic() + timeout + DEADLINE_GRACE_S if timeout else None
        worker = threading.Thread(target=target, name="finkg-user-query", daemon=True)
        worker.start()
        try:
            while worker.is_alive():
                worker.join(0.1)
                if deadline is not None and worker.is_alive() and time.monotonic() > deadline:
                    cancelled.set()
                    self._terminate(tag[QUERY_TAG], worker, wait=2.0)
                    raise QueryTimeout(
                        f"the query ran past its time limit ({timeout:g} s) while the server was still parsing or "
                        f"planning it, and the client stopped waiting; {TIMEOUT_HINT}, or make the query simpler"
                    )
        except KeyboardInterrupt:
            cancelled.set()
            self._terminate(tag[QUERY_TAG], worker)
            raise
        if "error" in box:
            raise box["error"]
        return box["result"]

    def _terminate(self, tag: str, worker: threading.Thread, wait: float = 10.0) -> None:
        """Terminate the transaction tagged ``tag`` until ``worker`` (which runs it) has ended, at most ``wait`` s
        (each of its own queries under that time limit too)."""
        deadline = time.monotonic() + wait
        while worker.is_alive() and time.monotonic() < deadline:
            try:
                found = self.run_autocommit(cypher.TAGGED_TRANSACTIONS, {"key": QUERY_TAG, "tag": tag}, timeout=wait)
                ids = [r["id"] for r in found.records]
                if ids:
                    self.run_autocommit(cypher.TERMINATE_TRANSACTIONS, {"ids": ids}, timeout=wait)
            except (Neo4jError, DriverError, GraphError) as exc:  # the query may just have ended
                log.debug("terminating the interrupted query: %s", exc)
            worker.join(0.3)

    def transactions(self) -> list[dict[str, Any]]:
        """The server's running transactions: id, query, metadata, status, elapsed_ms (``SHOW TRANSACTIONS``)."""
        return self.run_autocommit(cypher.SHOW_TRANSACTIONS).records

    def explain(
        self, query: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> neo4j.ResultSummary:
        """Plan ``query`` with EXPLAIN (runs nothing) and return the summary (``query_type``, ``plan``: a dict
        of ``operatorType``, ``args``, ``identifiers``, ``children``).

        It runs as a user query does (:meth:`run_user`): once, tagged, under ``timeout`` seconds (and the
        client's deadline), stopped by Ctrl-C.

        Raises:
            neo4j.exceptions.ClientError: the query does not parse or names something unknown;
            QueryTimeout, QueryStackOverflow, QueryBrokeConnection: as :meth:`run_user`.
        """

        def call(tag: dict[str, str], cancelled: threading.Event) -> neo4j.ResultSummary:
            def work(tx: neo4j.ManagedTransaction) -> neo4j.ResultSummary:
                return tx.run(_text(cypher.explain(query)), dict(params or {})).consume()

            return self._run("r", work, timeout, tag, cancelled, retry=False)

        return self._watched(call, timeout)

    def server_components(self) -> list[dict[str, Any]]:
        """``dbms.components()``: name, versions and edition of the server."""
        return self.read(cypher.SERVER_COMPONENTS)


def _text(query: str) -> LiteralString:
    """The driver types a query as ``LiteralString`` (a guard against string-built Cypher); finkg's
    queries are composed in kg/cypher/ from constants and take user values only as parameters, and
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
