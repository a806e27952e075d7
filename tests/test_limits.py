"""Bounded work and private files (issue 22, sections 4 to 6), with real processes, the real Neo4j and a
throw-away second server with small limits:

- a query's time limit (the driver's per-transaction timeout, and the server's db.transaction.timeout),
  the per-transaction memory cap (db.memory.transaction.max): named one-line errors, never retried;
- Ctrl-C (SIGINT to a real ``finkg cypher``) stops the query on the server too and exits 130;
- report batch files: size limits, a latin-1 file, exact line numbers;
- the settings file made 0600 by ``finkg init --force`` and checked on every start; the managed server's
  folders 0700; docker-compose.yml's healthcheck without the password on a command line;
- ``finkg memo --source <unknown>`` and an ``http://`` URI: exit 2, one line.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import yaml
from test_cli import finkg

from finkg.config import load_settings, write_settings_file
from finkg.neo4j_server import LocalNeo4j, private_settings
from kg import Graph
from kg.driver import DEADLINE_GRACE_S
from kg.errors import QueryMemoryExceeded, QueryTimeout, QueryTooLarge
from kg.guard import MAX_NESTING, MAX_QUERY_CHARS, MAX_TOKENS, check_bounds, run_user_query

ROOT = Path(__file__).resolve().parents[1]
SLOW = "UNWIND range(1, 3000000000) AS x RETURN count(x) AS n"  # about a minute of work, no memory
BIG = "UNWIND range(1, 3000000) AS x RETURN size(collect(x)) AS n"  # a list of 3 million: about 60 MB of heap
SECOND_PASSWORD = "limits-second-server-pw"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _one_line_error(out: subprocess.CompletedProcess) -> str:
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    return lines[0]


# --- the query's time limit, on the suite's server -------------------------------------------------------


@pytest.mark.neo4j
@pytest.mark.reliability("limits")
def test_query_timeout_is_named_and_not_retried(graph, caplog):
    caplog.set_level(logging.WARNING, logger="kg.driver")
    started = time.monotonic()
    with pytest.raises(QueryTimeout, match=r"time limit \(1 s\).*--timeout SECONDS.*query_timeout"):
        graph.read(SLOW, timeout=1.0)
    assert time.monotonic() - started < 10
    assert not [r for r in caplog.records if "Retrying" in r.getMessage()]


@pytest.mark.neo4j
@pytest.mark.reliability("limits")
def test_cypher_timeout_is_one_line_exit_2(graph):
    started = time.monotonic()
    line = _one_line_error(finkg("cypher", SLOW, "--timeout", "1"))
    assert "time limit (1 s)" in line and "finkg cypher --timeout SECONDS" in line
    assert "FINKG_NEO4J__QUERY_TIMEOUT" in line
    # the default comes from the settings
    line = _one_line_error(finkg("cypher", SLOW, env={"FINKG_NEO4J__QUERY_TIMEOUT": "1"}))
    assert "time limit (1 s)" in line
    assert time.monotonic() - started < 60


# --- Ctrl-C ------------------------------------------------------------------------------------------------


def _mine(graph: Graph, marker: str) -> list[dict]:
    return [t for t in graph.transactions() if marker in (t["query"] or "") and "SHOW TRANSACTIONS" not in t["query"]]


@pytest.mark.neo4j
@pytest.mark.parametrize("write", [False, True], ids=["read", "write"])
@pytest.mark.reliability("limits")
def test_ctrl_c_stops_the_query_on_the_server_and_exits_130(graph, write):
    marker = f"ctrlc{uuid.uuid4().hex[:10]}"
    args = [sys.executable, "-m", "finkg", "cypher", f"{SLOW} // {marker}", "--timeout", "300"]
    proc = subprocess.Popen(
        [*args, *(["--write"] if write else [])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a test run from a background shell inherits SIGINT ignored; the child must see it as a user would
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 90
        while not _mine(graph, marker):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the query never showed in SHOW TRANSACTIONS"
            time.sleep(0.2)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert time.monotonic() - sent < 15  # not the minute the query would take
    assert "Traceback" not in stderr and "interrupted" in stderr
    assert "Retrying" not in stderr  # the interrupted query is not run again
    assert _mine(graph, marker) == []  # the server's transaction is gone


# --- bounded queries (issue 47): length, tokens and nesting capped before sending; EXPLAIN under the limit ------


def _nested(levels: int) -> str:
    return "RETURN " + "[" * levels + "1" + "]" * levels + " AS x"


@pytest.mark.neo4j
@pytest.mark.parametrize("levels", [300, 10_000])
@pytest.mark.parametrize("write", [False, True], ids=["read", "write"])
@pytest.mark.reliability("limits")
def test_deeply_nested_query_is_one_line_before_sending(graph, levels, write):
    """The attack of issue 47: a 10,000-deep list ran 608 s, was retried 5 times and ended "not reachable"."""
    started = time.monotonic()
    line = _one_line_error(finkg("cypher", _nested(levels), *(["--write"] if write else [])))
    if len(_nested(levels)) > MAX_QUERY_CHARS:  # 10,000 levels: the length cap speaks first
        assert f"{len(_nested(levels)):,} characters long" in line, line
    else:
        assert f"nests {levels} levels" in line and f"at most {MAX_NESTING}" in line, line
    assert "not reachable" not in line
    assert time.monotonic() - started < 30  # refused before anything reaches the server


@pytest.mark.neo4j
@pytest.mark.reliability("limits")
def test_a_syntax_error_is_one_line():
    """Issue 47 ("also seen"): a syntax error printed three lines (the server's message and its caret)."""
    line = _one_line_error(finkg("cypher", "MATCH (n RETURN n"))
    assert "Neo4j refused the query: Neo.ClientError.Statement.SyntaxError" in line


@pytest.mark.parametrize(
    ("query", "what"),
    [
        ("RETURN 1 AS x // " + "x" * MAX_QUERY_CHARS, "characters long"),
        ("RETURN " + " + ".join(["1"] * (MAX_TOKENS // 2 + 1)) + " AS x", "tokens"),
        ("RETURN " + "NOT " * (MAX_NESTING + 1) + "true AS x", "chained NOT"),
        ("RETURN " + "(" * (MAX_NESTING + 1) + "1" + ")" * (MAX_NESTING + 1) + " AS x", "nests"),
        ("RETURN " + "{a: " * (MAX_NESTING + 1) + "1" + "}" * (MAX_NESTING + 1) + " AS x", "nests"),
        ("RETURN '" + "[" * 300 + "' AS s, " + "[" * (MAX_NESTING + 1) + "1" + "]" * (MAX_NESTING + 1), "nests"),
        ("RETURN '" + "(" * 300, "nests"),  # unterminated: every bracket counts
    ],
    ids=["length", "tokens", "not chain", "parens", "maps", "brackets after a string", "unterminated"],
)
@pytest.mark.reliability("limits")
def test_the_caps_refuse_with_one_clear_line(query, what):
    with pytest.raises(QueryTooLarge, match=f"refused: .*{what}") as info:
        check_bounds(query)
    assert "\n" not in str(info.value)


@pytest.mark.neo4j
@pytest.mark.reliability("limits")
def test_queries_at_the_caps_run_quickly(graph):
    """Just under the caps the server plans and runs the query in seconds (the caps sit below its cliff)."""
    started = time.monotonic()
    deep = _nested(MAX_NESTING)
    assert run_user_query(graph, deep, timeout=60)[0]["x"] is not None
    assert run_user_query(graph, "RETURN " + "NOT " * MAX_NESTING + "true AS x", timeout=60) == [{"x": True}]
    assert run_user_query(graph, "RETURN '" + "[" * 300 + "' AS s") == [{"s": "[" * 300}]  # data, not nesting
    long = "RETURN " + " + ".join(["1"] * (MAX_TOKENS // 2 - 5)) + " AS x"
    assert run_user_query(graph, long, timeout=60) == [{"x": MAX_TOKENS // 2 - 5}]
    assert time.monotonic() - started < 60


@pytest.mark.neo4j
@pytest.mark.reliability("limits")
def test_explain_holds_the_time_limit_and_a_stack_overflow_is_not_retried(graph, caplog):
    """Behind the caps: 3,000 nested lists overflow Neo4j's parser stack (200 already may: where depends on
    the JIT) and the server never answers; the guard's EXPLAIN runs under the query's time limit, so it ends as
    a named timeout, once, not "not reachable", and the server keeps answering."""
    caplog.set_level(logging.WARNING, logger="kg.driver")
    started = time.monotonic()
    with pytest.raises(QueryTimeout, match=r"time limit \(2 s\)"):
        graph.explain(_nested(3000), timeout=2.0)
    assert time.monotonic() - started < 2 + DEADLINE_GRACE_S + 6
    assert not [r for r in caplog.records if "Retrying" in r.getMessage()]
    assert graph.read("RETURN 1 AS one") == [{"one": 1}]


# --- a second server with small limits ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A throw-away second server (own home, free ports) with a 20 MB memory cap per transaction and a 10 s
    default transaction timeout; its home's folders exist world-readable before the first start."""
    home = tmp_path_factory.mktemp("limits") / "neo4j"
    for d in ("conf", "data", "logs"):
        (home / d).mkdir(parents=True)
        (home / d).chmod(0o755)
    home.chmod(0o755)
    s = private_settings(home, SECOND_PASSWORD, server_transaction_memory="20m", server_transaction_timeout="10s")
    server = LocalNeo4j(s)
    server.start()
    try:
        # a new JVM on a loaded machine can take longer than the 10 s limit over its first queries: warm it up
        with Graph(s.uri, "neo4j", SECOND_PASSWORD) as g:
            for _ in range(6):
                try:
                    g.read("RETURN 1 AS one")
                    break
                except QueryTimeout:
                    continue
        yield s
    finally:
        server.stop()


@pytest.mark.neo4j
@pytest.mark.reliability("secrets")
def test_the_written_conf_holds_the_limits_and_the_folders_are_private(small):
    home = small.server.home
    conf = (home / "conf" / "neo4j.conf").read_text()
    assert "db.transaction.timeout=10s" in conf and "db.memory.transaction.max=20m" in conf
    assert _mode(home) == 0o700
    for d in ("conf", "data", "logs", "plugins", "import", "run"):
        assert _mode(home / d) == 0o700, d
    assert _mode(home / "conf" / "neo4j.conf") == 0o600
    assert (home / "data" / "dbms" / "auth.ini").is_file()  # behind a 0700 folder
    defaults = load_settings(server_home=home).server
    assert (defaults.transaction_timeout, defaults.transaction_memory) == ("30m", "1g")
    text = LocalNeo4j(load_settings(server_home=home)).neo4j_conf()
    assert "db.transaction.timeout=30m" in text and "db.memory.transaction.max=1g" in text


@pytest.mark.neo4j
@pytest.mark.reliability("secrets")
def test_the_password_is_in_no_process_listing_log_or_conf(small):
    """What `ps` shows (every process's command line) and every file the server wrote hold no password."""
    with Graph(small.uri, "neo4j", SECOND_PASSWORD) as g:
        assert g.read("RETURN 1 AS one") == [{"one": 1}]
    secret = SECOND_PASSWORD.encode()
    listed = 0
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes()
        except OSError:  # the process ended meanwhile
            continue
        listed += 1
        assert secret not in args, cmdline
    assert listed > 1
    written = [p for p in small.server.home.rglob("*") if p.is_file() and p.stat().st_size < 50_000_000]
    assert any(p.parent.name == "logs" for p in written)
    for p in written:
        assert secret not in p.read_bytes(), p


@pytest.mark.neo4j
@pytest.mark.reliability("limits")
def test_memory_cap_is_named_and_not_retried(small, caplog):
    caplog.set_level(logging.WARNING, logger="kg.driver")
    with Graph(small.uri, "neo4j", SECOND_PASSWORD) as g:
        assert g.read("RETURN 1 AS one") == [{"one": 1}]
        with pytest.raises(QueryMemoryExceeded, match=r"db\.memory\.transaction\.max.*transaction_memory"):
            g.read(BIG)
        with pytest.raises(QueryMemoryExceeded):
            g.run_autocommit(BIG)
        assert g.read("RETURN 2 AS two") == [{"two": 2}]  # the server lives on
    assert not [r for r in caplog.records if "Retrying" in r.getMessage()]


@pytest.mark.neo4j
@pytest.mark.reliability("limits")
def test_memory_cap_in_finkg_cypher_is_one_line(small):
    env = {"NEO4J_URI": small.uri, "NEO4J_PASSWORD": SECOND_PASSWORD}
    line = _one_line_error(finkg("cypher", BIG, env=env))
    assert "db.memory.transaction.max" in line and "FINKG_SERVER__TRANSACTION_MEMORY" in line


@pytest.mark.neo4j
@pytest.mark.reliability("limits")
def test_server_transaction_timeout_is_named(small):
    with Graph(small.uri, "neo4j", SECOND_PASSWORD) as g:
        started = time.monotonic()
        with pytest.raises(QueryTimeout, match=r"db\.transaction\.timeout.*transaction_timeout"):
            g.read(SLOW)  # no timeout of its own: the server's 10 s
        assert 8 < time.monotonic() - started < 40


# --- report batch files -------------------------------------------------------------------------------------


def _with_peak_memory(*args: str) -> tuple[subprocess.CompletedProcess, int]:
    """``finkg *args`` and its peak resident memory in KiB (measured by a wrapper whose only child it is)."""
    code = (
        "import json, resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "print(json.dumps([r.returncode, r.stdout, r.stderr, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))"
    )
    wrapper = subprocess.run(
        [sys.executable, "-c", code, sys.executable, "-m", "finkg", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    rc, stdout, stderr, peak = json.loads(wrapper.stdout)
    return subprocess.CompletedProcess(args, rc, stdout, stderr), peak


def _batch(tmp_path: Path, body: bytes) -> Path:
    path = tmp_path / "batch.jsonl"
    path.write_bytes(body)
    return path


@pytest.mark.reliability("input")
def test_a_10_mb_question_is_a_clear_error_without_the_memory(tmp_path):
    line = json.dumps({"id": "big", "question": "How did yields move? " * 500_000}).encode()
    assert len(line) > 10_000_000
    path = _batch(tmp_path, b'{"id": "ok", "question": "What happened?"}\n' + line + b"\n")
    out, peak_kib = _with_peak_memory("report", "--batch", str(path), "--out", str(tmp_path / "out"))
    line = _one_line_error(out)
    assert f"{path}:2: the line is longer than 1 MiB" in line
    assert peak_kib < 700_000, peak_kib  # the batch is refused before anything grows with it (was 2.6 GB)
    question = json.dumps({"id": "long", "question": "x" * 5000}).encode()
    line = _one_line_error(finkg("report", "--batch", str(_batch(tmp_path, question + b"\n"))))
    assert f"{path}:1: field 'question': String should have at most 4000 characters" in line


@pytest.mark.reliability("input")
def test_a_latin_1_batch_file_names_the_line(tmp_path):
    body = '{"id": "a", "question": "What moved?"}\n\n# comment\n{"id": "b", "question": "Qué pasó?"}\n'
    path = _batch(tmp_path, body.encode("latin-1"))
    line = _one_line_error(finkg("report", "--batch", str(path)))
    assert f"{path}:4: not UTF-8 (byte 0xe9 at column 28)" in line


@pytest.mark.reliability("input")
def test_batch_line_numbers_are_an_editors(tmp_path):
    """U+2028 or U+0085 inside a line does not start a new line (str.splitlines would count them)."""
    body = '{"id": "a", "question": "What\u2028moved\x85then?"}\r\n{"id": "b", "question": "ab"}\n{"id": "c"}\n'
    path = _batch(tmp_path, body.encode())
    line = _one_line_error(finkg("report", "--batch", str(path)))
    assert f"{path}:2: field 'question'" in line
    path = _batch(tmp_path, b'{"id": "a", "question": "abc", "facts": [{"id": "f", "text": "t", "numbers": [NaN]}]}\n')
    line = _one_line_error(finkg("report", "--batch", str(path)))
    assert "field 'facts.0.numbers.0': Input should be a finite number" in line


# --- the settings file and the compose file -----------------------------------------------------------------


@pytest.mark.reliability("secrets")
def test_init_force_makes_an_existing_settings_file_private(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text("# an old file\n")
    cfg.chmod(0o644)
    out = finkg("init", "--force", env={"FINKG_CONFIG": str(cfg)})
    assert out.returncode == 0, out.stderr
    assert "mode 600" in out.stdout and _mode(cfg) == 0o600
    path, written = write_settings_file(tmp_path / "new" / "config.toml")
    assert written and _mode(path) == 0o600


@pytest.mark.reliability("secrets")
def test_every_start_warns_about_an_open_settings_file(tmp_path):
    cfg = tmp_path / "config.toml"
    write_settings_file(cfg)
    cfg.chmod(0o640)
    out = finkg("config", "show", env={"FINKG_CONFIG": str(cfg)})
    assert out.returncode == 0, out.stderr
    assert f"the settings file {cfg} holds the Neo4j password but is mode 640" in out.stderr
    assert f"chmod 600 {cfg}" in out.stderr
    cfg.chmod(0o600)
    out = finkg("config", "show", env={"FINKG_CONFIG": str(cfg)})
    assert out.returncode == 0 and "warning" not in out.stderr


@pytest.mark.reliability("secrets")
def test_compose_healthcheck_keeps_the_password_off_the_command_line():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    neo4j = compose["services"]["neo4j"]
    shell = neo4j["healthcheck"]["test"][1]
    assert "cypher-shell" in shell and " -p " not in shell and "--password" not in shell
    assert 'NEO4J_PASSWORD="$${NEO4J_AUTH#*/}" cypher-shell' in shell  # compose turns $$ into $
    env = neo4j["environment"]
    assert env["NEO4J_db_transaction_timeout"].endswith(":-30m}")
    assert env["NEO4J_db_memory_transaction_max"].endswith(":-1g}")


# --- small ones -------------------------------------------------------------------------------------------


@pytest.mark.reliability("small")
def test_an_http_uri_names_the_accepted_schemes():
    line = _one_line_error(finkg("cypher", "RETURN 1", env={"NEO4J_URI": "http://127.0.0.1:7474"}))
    assert "'http://127.0.0.1:7474' is not a Bolt URI" in line and "bolt://" in line and "neo4j+s://" in line
    with pytest.raises(Exception, match=r"bolt://, bolt\+s://"):
        Graph("http://127.0.0.1:7474", "neo4j", "x")


@pytest.mark.neo4j
@pytest.mark.reliability("small")
def test_memo_with_an_unknown_source_is_exit_2(graph, tmp_path):
    name = f"no-such-{uuid.uuid4().hex[:8]}.zip"
    line = _one_line_error(finkg("memo", "--all", "--source", name, "--out", str(tmp_path)))
    assert f"--source '{name}': no filing in the graph was loaded from a file of that name" in line
    assert not any(tmp_path.iterdir())


@pytest.mark.reliability("small")
def test_settings_reject_a_malformed_limit():
    from finkg.config import ConfigError

    for bad in ({"server_transaction_memory": "1g\nfoo=bar"}, {"server_transaction_timeout": "forever"}):
        with pytest.raises(ConfigError):
            load_settings(**bad)
    assert os.environ.get("FINKG_SERVER__TRANSACTION_MEMORY") is None
