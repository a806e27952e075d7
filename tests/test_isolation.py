"""The suite never touches the user's graph, and leaves no Neo4j running (issue 45).

A second real server stands for the user's: its settings file, ``NEO4J_URI``/``NEO4J_PASSWORD``,
``FINKG_NEO4J__*`` and ``FINKG_SERVER_HOME`` all name it, as a user's shell may. A pytest subprocess with that
environment runs :func:`test_probe`, which deletes everything the graph fixture reaches, and has a ``finkg``
subprocess (which opens whatever its inherited settings name) do the same; the user's graph, every node,
relationship, property, constraint and index, is the same afterwards. Then pytest running the probe is killed
(SIGTERM, SIGINT, SIGKILL) once its private server is up: every server it started, its own and a second one as
tests/test_bulk_import.py starts, is gone within a timeout (`bash scripts/test` execs pytest: the same process).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SuiteNeo4j, endpoint, free_port, suite_cache, sweep_stale_runs

from finkg.config import LEGACY_NEO4J_ENV, Settings
from finkg.neo4j_server import LocalNeo4j, private_settings
from kg import Graph

ROOT = Path(__file__).resolve().parents[1]
PROBE = "FINKG_ISOLATION_PROBE"  # a folder: the probe writes probe.json there (set only for the subprocess)
PROBE_HOLD = "FINKG_ISOLATION_PROBE_HOLD"  # 1: the probe then waits to be killed
PROBE_SECOND = "FINKG_ISOLATION_PROBE_SECOND"  # 1: the probe also starts a second server (as bulk import does)
USER_PASSWORD = "user-graph-pw"
PROBE_ID = "tests/test_isolation.py::test_probe"

USER_GRAPH = """
CREATE (d:Document {id: 'fomc:statement:20081216', source: 'fomc', date: date('2008-12-16'), n_chunks: 1})
CREATE (c:Chunk {id: 'fomc:statement:20081216:0', text: 'The Federal Open Market Committee decided today...'})
CREATE (d)-[:HAS_CHUNK {i: 0}]->(c)
CREATE (i:Indicator {id: 'akshare:macro_china_m2_yearly', function: 'macro_china_m2_yearly', unit: '%'})
CREATE (o:Observation {date: date('2015-06-30'), value: 10.2, values: [1, 2, 3], final: true})
CREATE (i)-[:HAS_OBSERVATION]->(o)
CREATE (r:Report {id: 'report:cn-yields-2015q2:tfr:two-stage', text: 'Yields fell.'})-[:CITES {kind: 'fact'}]->(i)
CREATE (:Memo {id: 'structured:0001193125-09-189177', risk: 'elevated', claims: 4})
CREATE (:Entity {key: 'federal reserve', name: 'Federal Reserve', model_id: 'smollm2-135m-instruct-q4_1'})
CREATE (:Experience {id: 'tatqa:0001', reward: 0.5, created: datetime('2026-11-30T12:00:00Z')})
CREATE (:Tweet:Document {id: 'tweet:1', text: 'TSLA to the moon', at: datetime('2020-01-02T03:04:05Z')})
"""


def snapshot(g: Graph) -> dict:
    """Every node and relationship with its labels or type and properties, and every constraint and index."""
    nodes = g.read("MATCH (n) RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS p")
    rels = g.read(
        "MATCH (a)-[r]->(b) RETURN elementId(r) AS id, type(r) AS type, properties(r) AS p, "
        "elementId(a) AS a, elementId(b) AS b"
    )
    rows = {
        "nodes": sorted(json.dumps(r, sort_keys=True, default=str) for r in nodes),
        "relationships": sorted(json.dumps(r, sort_keys=True, default=str) for r in rels),
        "constraints": sorted(r["name"] for r in g.read("SHOW CONSTRAINTS YIELD name RETURN name")),
        "indexes": sorted(r["name"] for r in g.read("SHOW INDEXES YIELD name RETURN name")),
    }
    return rows


@pytest.fixture(scope="module")
def user(tmp_path_factory, settings: Settings) -> Iterator[dict]:
    """A second real server standing for the user's, with a fixture graph, and the environment of a shell
    whose every settings source names it."""
    folder = tmp_path_factory.mktemp("user")
    config = folder / "config.toml"
    bolt, http = free_port(), free_port()
    config.write_text(
        f'[neo4j]\npassword = "{USER_PASSWORD}"\n\n[server]\nhome = "{folder / "neo4j"}"\n'
        f'dist_dir = "{settings.server.dist_dir}"\nbolt_port = {bolt}\nhttp_port = {http}\n'
        'heap = "512m"\npagecache = "64m"\n',
        encoding="utf-8",
    )
    config.chmod(0o600)
    s = private_settings(folder / "neo4j", USER_PASSWORD, ports=(bolt, http))
    server = LocalNeo4j(s)
    server.start()
    try:
        with Graph(s.uri, "neo4j", USER_PASSWORD) as g:
            g.write(USER_GRAPH)
            g.run_autocommit("CREATE CONSTRAINT user_memo_id IF NOT EXISTS FOR (m:Memo) REQUIRE m.id IS UNIQUE")
            before = snapshot(g)
        env = {
            "FINKG_CONFIG": str(config),
            "NEO4J_URI": s.uri,
            "NEO4J_PASSWORD": USER_PASSWORD,
            "FINKG_NEO4J__URI": s.uri,
            "FINKG_NEO4J__PASSWORD": USER_PASSWORD,
            "FINKG_SERVER_HOME": str(folder / "neo4j"),
            "FINKG_SERVER__BOLT_PORT": str(bolt),
        }
        yield {"settings": s, "server": server, "before": before, "env": env, "uri": s.uri}
    finally:
        server.stop()


def user_graph_now(user: dict) -> dict:
    with Graph(user["uri"], "neo4j", USER_PASSWORD) as g:
        return snapshot(g)


def gone(pid: int) -> bool:
    """True when ``pid`` has exited (no such process, or a zombie nobody has reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def wait_gone(pids: list[int], timeout: float) -> list[int]:
    """The pids still alive after waiting up to ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not all(gone(p) for p in pids):
        time.sleep(0.5)
    return [p for p in pids if not gone(p)]


def start_probe(user: dict, out: Path, command: list[str], **extra: str) -> subprocess.Popen:
    """The probe in a pytest subprocess (own session, SIGINT at its default, as in a terminal), with the
    user's environment; its output goes to ``out/output.txt``."""
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **user["env"], PROBE: str(out), **extra}
    log = open(out / "output.txt", "wb")  # noqa: SIM115 (closed by the caller through finish())
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def output(out: Path) -> str:
    return (out / "output.txt").read_text(errors="replace")[-4000:]


def wait_for_probe(proc: subprocess.Popen, out: Path, timeout: float = 420.0) -> dict:
    """What the probe saw, once it has written it (its servers are up by then)."""
    deadline = time.monotonic() + timeout
    while not (out / "probe.json").exists():
        if proc.poll() is not None:
            pytest.fail(f"the probe exited ({proc.returncode}) before it wrote probe.json:\n{output(out)}")
        if time.monotonic() > deadline:
            pytest.fail(f"no probe.json after {timeout:.0f} s:\n{output(out)}")
        time.sleep(0.5)
    time.sleep(0.2)  # written in one call; let the write finish
    return json.loads((out / "probe.json").read_text())


def stop_probe(proc: subprocess.Popen) -> None:
    """Kill what is left of a probe's process group (only after a failed test)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


# --------------------------------------------------------------------------- in this run


def test_the_graph_fixture_is_the_suites_own_server(graph, settings, test_neo4j: SuiteNeo4j):
    """The graph fixture's URI is not the one the user's settings name, and nothing in this run's environment
    (which subprocesses inherit) names the user's server or settings file."""
    assert endpoint(settings.uri) == endpoint(test_neo4j.uri)
    assert test_neo4j.user_uri is None or endpoint(settings.uri) != endpoint(test_neo4j.user_uri)
    assert os.environ["FINKG_CONFIG"] == str(test_neo4j.config)
    leaks = [v for v in os.environ if v in LEGACY_NEO4J_ENV or v.startswith(("FINKG_NEO4J", "FINKG_SERVER"))]
    assert leaks == []
    if not test_neo4j.external:
        assert test_neo4j.server is not None and test_neo4j.server.pid() is not None
        assert settings.server.home.is_relative_to(test_neo4j.work) and test_neo4j.work.is_relative_to(suite_cache())
        assert settings.server.home != test_neo4j.user_home
    assert settings.llm.cache_dir.is_relative_to(suite_cache())
    assert graph.read("RETURN 1 AS one") == [{"one": 1}]


# --------------------------------------------------------------------------- the probe (run in a subprocess)


@pytest.fixture(scope="module")
def second_server(tmp_path_factory, settings: Settings) -> Iterator[LocalNeo4j]:
    """A second private server, started as tests/test_bulk_import.py starts its own."""
    s = private_settings(tmp_path_factory.mktemp("second") / "neo4j", "second-probe-pw")
    server = LocalNeo4j(s)
    server.start()
    yield server
    server.stop()


@pytest.mark.skipif(PROBE not in os.environ, reason="run by the tests below in a pytest subprocess")
def test_probe(graph, settings, test_neo4j: SuiteNeo4j, request):
    """What a careless test does: delete everything the graph fixture reaches, and have a `finkg` subprocess
    (it opens whatever the inherited settings name) apply the schema and delete everything too."""
    out = Path(os.environ[PROBE])
    graph.run_autocommit("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 1000 ROWS")
    init = subprocess.run([sys.executable, "-m", "finkg", "db", "init"], capture_output=True, text=True, timeout=300)
    assert init.returncode == 0, init.stderr
    code = (
        "from finkg.api import open_graph\nfrom finkg.config import load_settings\ns = load_settings()\n"
        "with open_graph(s) as g:\n    g.write('MATCH (n) DETACH DELETE n')\nprint(s.uri)"
    )
    wipe = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert wipe.returncode == 0, wipe.stderr
    assert test_neo4j.server is not None
    info = {
        "uri": settings.uri,
        "subprocess_uri": wipe.stdout.strip(),
        "user_uri": test_neo4j.user_uri,
        "pid": test_neo4j.server.pid(),
        "work": str(test_neo4j.work),
    }
    if os.environ.get(PROBE_SECOND) == "1":
        info["second_pid"] = request.getfixturevalue("second_server").pid()
    (out / "probe.tmp").write_text(json.dumps(info))
    (out / "probe.tmp").rename(out / "probe.json")
    if os.environ.get(PROBE_HOLD) == "1":
        time.sleep(900)


# --------------------------------------------------------------------------- a user's graph, stray servers


@pytest.mark.neo4j
def test_a_run_that_wipes_its_graph_leaves_the_users_graph_as_it_was(user, tmp_path):
    """The probe's graph, and its `finkg` subprocess's, is the private server, not the one every settings source
    of the user's shell names; the user's graph is unchanged, the private server is stopped and its folder gone."""
    out = tmp_path / "probe"
    proc = start_probe(user, out, [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", PROBE_ID])
    try:
        rc = proc.wait(timeout=600)
        assert rc == 0, output(out)
        seen = json.loads((out / "probe.json").read_text())
    finally:
        stop_probe(proc)
    assert endpoint(seen["user_uri"]) == endpoint(user["uri"])  # the probe read the user's settings ...
    assert endpoint(seen["uri"]) != endpoint(user["uri"])  # ... and used its own server
    assert endpoint(seen["subprocess_uri"]) == endpoint(seen["uri"])
    assert user_graph_now(user) == user["before"]
    assert wait_gone([seen["pid"]], 5) == []
    assert not Path(seen["work"]).exists()


@pytest.mark.neo4j
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=lambda s: s.name)
def test_killing_the_test_run_leaves_no_neo4j_running(user, tmp_path, sig):
    """pytest running the probe, killed once its servers are up: its private server and a second one started as
    tests/test_bulk_import.py does are gone within 60 s (SIGTERM, SIGINT: stopped by pytest's teardown, the
    run's folder removed; SIGKILL: stopped by the kernel's parent-death signal, the folder removed by the next
    run's sweep). The user's graph is unchanged. (`bash scripts/test` execs pytest: the same process.)"""
    out = tmp_path / "probe"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", PROBE_ID]
    second = "0" if sig == signal.SIGINT else "1"  # SIGINT takes SIGTERM's path (KeyboardInterrupt): one server
    proc = start_probe(user, out, command, **{PROBE_HOLD: "1", PROBE_SECOND: second})
    try:
        seen = wait_for_probe(proc, out)
        pids = [seen["pid"], *([seen["second_pid"]] if second == "1" else [])]
        assert all(not gone(p) for p in pids)
        os.kill(proc.pid, sig)
        proc.wait(timeout=240)
        assert wait_gone(pids, 60) == [], output(out)
    finally:
        stop_probe(proc)
    work = Path(seen["work"])
    if sig == signal.SIGKILL:  # nothing ran in the killed process: the next run's sweep (this one's, or another
        sweep_stale_runs(work.parent)  # run's that started meanwhile) removes its folder
        assert not work.exists()
    else:
        assert proc.returncode == pytest.ExitCode.INTERRUPTED and not work.exists(), output(out)
    assert user_graph_now(user) == user["before"]


def test_the_sweep_removes_the_folders_of_dead_runs_only(tmp_path):
    """A run killed with SIGKILL leaves its folder; the next run removes it, and never a live run's."""
    finished = subprocess.Popen(["true"])  # its pid has exited
    finished.wait(timeout=60)
    stale, live = tmp_path / f"{finished.pid}-00000000", tmp_path / f"{os.getpid()}-00000000"
    for run in (stale, live):
        (run / "neo4j" / "run").mkdir(parents=True)
        (run / "neo4j" / "run" / "finkg-neo4j.pid").write_text(f"{os.getpid()}\n")  # not a Neo4j: never signalled
    assert sweep_stale_runs(tmp_path) == [stale]
    assert not stale.exists() and live.exists()


def test_scripts_test_hands_signals_to_pytest():
    """`bash scripts/test` ends by exec'ing pytest, so SIGINT or SIGTERM sent to it reaches pytest itself (which
    stops its Neo4j, test above), and it starts no Neo4j of its own (no `finkg neo4j start`, no `finkg init`)."""
    script = (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    code = [line.strip() for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert code[-1] == 'exec python -m pytest "$@"'
    assert not [line for line in code if re.search(r"finkg (neo4j|init)", line)]


# --------------------------------------------------------------------------- the demo's outputs


def test_the_demo_writes_its_files_under_its_out_folder_only():
    """Every path scripts/demo hands a writing command (``--out``, ``graph export``) and every file it shows is
    under ``$OUT`` (default out/, which git ignores), so a user who runs it keeps a clean checkout; the tracked
    reports/ samples are never an output."""
    demo = (ROOT / "scripts" / "demo").read_text(encoding="utf-8")
    code = "\n".join(line for line in demo.splitlines() if not line.lstrip().startswith("#"))
    assert "OUT=${FINKG_DEMO_OUT:-$ROOT/out/demo}" in code
    outputs = re.findall(r"--out\s+(\S+)", code) + re.findall(r"graph export\s+(\S+)", code)
    shown = re.findall(r"^cat\s+(\S+)", code, flags=re.MULTILINE)
    assert len(outputs) == 4 and len(shown) == 3
    assert [p for p in outputs + shown if not p.startswith('"$OUT/')] == []
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "out/demo/reports/x.md"], cwd=ROOT, capture_output=True, timeout=60
    )
    assert ignored.returncode == 0  # out/ is in .gitignore
