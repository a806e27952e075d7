"""Kill -9 during a memo batch and during a report batch (issue 22, section 1), with real processes, the real
Neo4j and real files: ``finkg memo`` and ``finkg report --batch`` run in a subprocess that SIGKILLs itself at a
named point between its writes (the test-only hook ``FINKG_TEST_KILL_AT``, :func:`ingest.runs.checkpoint`;
``name#N`` kills on the point's Nth pass, i.e. in the middle of the batch). Then a plain rerun, and what the
graph and the output folder hold is compared with a clean run: equal but for times and attempt counts.

The ``--redo`` cases kill a run that remakes items recorded done (the memo's claims deleted and not yet
written again, the report's links deleted): the next plain run must not take them as done.

Also: two ingests of one file at once, and XML entity attacks (XXE, billion laughs) on the XBRL instance reader.

Part of the reliability suite (``-m reliability``; ``python bench/reliability.py`` counts the outcomes).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import minilm_dir
from test_cli import finkg
from test_crash_consistency import Copy, clean_counts, copies  # noqa: F401  (fixtures)
from test_limits import _one_line_error
from test_reports import QUESTIONS, ready, rsettings  # noqa: F401  (fixtures used by the report cases)

from finkg.config import load_settings
from finkg.pipelines import sec as pipelines
from ingest import runs
from ingest.sec.xbrl_instance import read_instance
from kg.errors import IngestError
from kg.ledger import Ledger

VOLATILE = {"seconds", "seconds_retrieval", "calls", "created_at", "written_at", "ledger_at", "attempts", "latency_ms"}
"""Keys that differ between any two runs (times, cache hits, the ledger's attempt count): left out of a comparison."""


def _stable(value: Any) -> Any:
    """``value`` without the :data:`VOLATILE` keys, at any depth."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _diff(got: Any, want: Any, at: str = "") -> list[str]:
    """Where ``got`` and ``want`` differ (paths of keys and indexes; the first 20), for an assertion message."""
    if isinstance(got, dict) and isinstance(want, dict):
        out = [f"{at}/{k}: only in {'got' if k in got else 'want'}" for k in set(got) ^ set(want)]
        for k in sorted(set(got) & set(want), key=str):
            out += _diff(got[k], want[k], f"{at}/{k}")
        return out[:20]
    if isinstance(got, (list, tuple)) and isinstance(want, (list, tuple)) and len(got) == len(want):
        return [d for i, (g, w) in enumerate(zip(got, want, strict=True)) for d in _diff(g, w, f"{at}[{i}]")][:20]
    return [] if got == want else [f"{at}: {str(got)[:150]!r} != {str(want)[:150]!r}"]


def _files(out: Path) -> dict[str, Any]:
    """Every file under ``out``: JSON records without their volatile keys, other files as bytes."""
    got: dict[str, Any] = {}
    for p in sorted(out.rglob("*")):
        if p.is_file():
            rel = str(p.relative_to(out))
            got[rel] = _stable(json.loads(p.read_text("utf-8"))) if p.suffix == ".json" else p.read_bytes()
    return got


def _killed(run: subprocess.CompletedProcess) -> None:
    assert run.returncode == -signal.SIGKILL, (run.returncode, run.stderr[-2000:])


# --- memos ------------------------------------------------------------------------------------------------

MEMO_KILLS = [
    ("memo-file#2", False),  # the first memo done, the second not begun
    ("memo-graph#2", False),  # the second memo's files written, nothing of it in the graph
    ("memo-claims#2", False),  # its Memo node written ("writing"), its claims not
    ("memo-ledger#2", False),  # everything written but its ledger entry
    ("memo-gather", False),  # every memo done, the run's claims.csv not yet written
    ("memo-claims#1", True),  # a --redo: the claims of a done memo deleted, not yet written again
    ("memo-ledger#1", True),  # a --redo: files and graph rewritten, the ledger still from before
]


@pytest.fixture(scope="module")
def memo_copy(graph, settings, tmp_path_factory):
    """Two real filings under a token of their own (tests/test_crash_consistency.py), ingested once."""
    c = Copy(tmp_path_factory.mktemp("memo-copy"))
    pipelines.ingest_sec(graph, settings, [c.path])
    yield c
    c.remove(graph)


def _memo(c: Copy, out: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    args = [a for adsh in c.adshs for a in ("-a", adsh)]
    return finkg("memo", *args, "--out", str(out), *extra, env={"FINKG_MEMO__BATCH_SIZE": "1", **(env or {})})


def _memo_graph(graph, c: Copy) -> dict[str, Any]:
    """The copy's memos in the graph: each Memo's properties, its claims' and their CITES and ABOUT links."""
    rows = graph.read(
        "MATCH (m:Memo) WHERE m.id CONTAINS $t\n"
        "OPTIONAL MATCH (m)-[:ABOUT]->(f:Filing)\n"
        "CALL (m) { OPTIONAL MATCH (m)-[:HAS_CLAIM]->(k:Claim) OPTIONAL MATCH (k)-[:CITES]->(x:Fact)\n"
        "  WITH k, x ORDER BY x.key WITH k, collect(x.key) AS cited ORDER BY k.id RETURN collect(k {.*, cited: cited}) AS claims }\n"
        "RETURN m {.*} AS memo, f.adsh AS about, claims ORDER BY m.id",
        {"t": c.token},
    )
    return {r["memo"]["id"]: _stable(r) for r in rows}


def _clear_memos(graph, c: Copy) -> None:
    graph.run_autocommit("MATCH (k:Claim) WHERE k.id CONTAINS $t DETACH DELETE k", {"t": c.token})
    graph.run_autocommit("MATCH (m:Memo) WHERE m.id CONTAINS $t DETACH DELETE m", {"t": c.token})


@pytest.fixture(scope="module")
def memo_clean(graph, memo_copy, tmp_path_factory) -> tuple[dict[str, Any], dict[str, Any]]:
    """A clean ``finkg memo`` of the copy: (files, graph); the graph's memos removed afterwards."""
    _clear_memos(graph, memo_copy)
    out = tmp_path_factory.mktemp("memo-clean")
    run = _memo(memo_copy, out)
    assert run.returncode == 0, run.stderr[-2000:]
    clean = (_files(out), _memo_graph(graph, memo_copy))
    _clear_memos(graph, memo_copy)
    assert len(clean[1]) == 2 and all(m["memo"]["status"] == "done" for m in clean[1].values())
    assert all(m["claims"] and m["about"] for m in clean[1].values())
    assert {f"structured/{a}.md" for a in memo_copy.adshs} <= set(clean[0])
    return clean


@pytest.mark.reliability("crash")
@pytest.mark.neo4j
@pytest.mark.parametrize(("stage", "redo"), MEMO_KILLS, ids=[f"{s}{'-redo' if r else ''}" for s, r in MEMO_KILLS])
def test_a_memo_batch_killed_mid_way_ends_equal_to_a_clean_run(graph, memo_copy, memo_clean, tmp_path, stage, redo):
    c, out = memo_copy, tmp_path / "memos"
    _clear_memos(graph, c)
    try:
        if redo:
            assert _memo(c, out).returncode == 0
        _killed(_memo(c, out, *(["--redo"] if redo else []), env={runs.KILL_AT_ENV: stage}))
        ids = [f"structured:{a}" for a in c.adshs]
        state = Ledger(graph, "Memo").state(ids)
        unfinished = [i for i in ids if state.get(i, {}).get("status") != "done"]
        if stage != "memo-gather":  # killed in the middle: at least one memo is not recorded done
            assert unfinished, state
        assert not list(out.rglob("*.part"))  # no half-written file is left under a final name or beside it
        again = _memo(c, out)
        assert again.returncode == 0, again.stderr[-2000:]
        got = (_files(out), _memo_graph(graph, c))
        assert got == memo_clean, _diff(got, memo_clean)
    finally:
        _clear_memos(graph, c)


# --- report batches ---------------------------------------------------------------------------------------

REPORT_KILLS = [
    ("report-graph#2", False),  # the first item done, the second's answer made, nothing of it written
    ("report-links#2", False),  # its Report node written ("writing"), its CITES links not
    ("report-files#2", False),  # graph written, the Markdown and the record not
    ("report-record#2", False),  # the Markdown written, the JSON record not
    ("report-ledger#2", False),  # everything written but its ledger entry
    ("report-links#1", True),  # a --redo: a done report's links deleted, not yet written again
]


def _report_env(rsettings) -> dict[str, str]:  # noqa: F811
    """The report tests' settings (SmolLM2 through llama.cpp, MiniLM) for a subprocess, with an LLM cache of
    their own that outlives the session (``llm-cache-reliability`` beside the default cache): the attacks are
    on the batch's writes, and a cached answer is the same answer, so only the first session pays for the
    LLM calls (minutes of SmolLM2 on a shared CPU)."""
    return {
        "FINKG_LLM_BACKEND": "llama-cpp",
        "FINKG_LLM_MODEL_PATH": str(rsettings.llm.model_path),
        "FINKG_LLM_N_CTX": "8192",
        "FINKG_LLM_CACHE_DIR": str(load_settings().llm.cache_dir.with_name("llm-cache-reliability")),
        "FINKG_EMBEDDING_MODEL_PATH": str(minilm_dir()),
        "FINKG_REPORT_MAX_FACTS": "12",
        "FINKG_REPORT_ANSWER_TOKENS": "120",
    }


class ReportBatch:
    """A question of tests/test_reports.py under two ids of their own, as ``finkg report --batch`` runs them."""

    def __init__(self, folder: Path, rsettings) -> None:  # noqa: F811
        self.token = (
            "reliability"  # fixed: the questions (and so the LLM prompts and their cache) are the same each session
        )
        self.path = folder / "questions.jsonl"
        # the first question twice, under two ids: two items whose LLM calls are the same, so the session's LLM
        # cost is one question's (the attacks are on the batch's writes, which are per item)
        rows = [{**QUESTIONS[0], "id": f"{self.token}-{QUESTIONS[0]['id']}{suffix}"} for suffix in ("", "-again")]
        self.path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        self.env = _report_env(rsettings)

    def run(self, graph, out: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        args = ["report", "--batch", str(self.path), "--out", str(out), "--system", "none", *extra]
        return subprocess.run(
            [sys.executable, "-m", "finkg", *args],
            capture_output=True,
            text=True,
            timeout=900,
            env={**os.environ, "COLUMNS": "200", **self.env, **(env or {})},
        )

    def in_graph(self, graph) -> dict[str, Any]:
        """The batch's Report nodes with their CITES links (ids and properties)."""
        rows = graph.read(
            "MATCH (r:Report) WHERE r.id STARTS WITH $p\n"
            "CALL (r) { OPTIONAL MATCH (r)-[c:CITES]->() WITH c ORDER BY c.id RETURN collect(c {.*}) AS cites }\n"
            "RETURN r {.*} AS report, cites ORDER BY r.id",
            {"p": f"report:{self.token}"},
        )
        return {r["report"]["id"]: _stable(r) for r in rows}

    def remove(self, graph) -> None:
        graph.run_autocommit(
            "MATCH (r:Report) WHERE r.id STARTS WITH $p DETACH DELETE r", {"p": f"report:{self.token}"}
        )


@pytest.fixture(scope="module")
def report_clean(graph, rsettings, ready, tmp_path_factory):  # noqa: F811
    """A clean ``finkg report --batch`` of the two questions (it fills the LLM cache, when empty, the killed runs read):
    the batch, and (files, graph) it left; its graph records removed afterwards."""
    batch = ReportBatch(tmp_path_factory.mktemp("report-batch"), rsettings)
    out = tmp_path_factory.mktemp("report-clean")
    run = batch.run(graph, out)
    assert run.returncode in (0, 1), run.stderr[-2000:]  # 1: an item failed (SmolLM2's answer), recorded so
    clean = (_files(out), batch.in_graph(graph), run.returncode)
    batch.remove(graph)
    assert len(clean[1]) == 2 and {r["report"]["status"] for r in clean[1].values()} <= {"done", "failed"}
    assert any(r["cites"] for r in clean[1].values())  # links to its facts: what a cut-off redo would lose
    assert len([f for f in clean[0] if f.endswith(".json")]) == 2
    yield batch, clean
    batch.remove(graph)


@pytest.mark.reliability("crash")
@pytest.mark.neo4j
@pytest.mark.parametrize(("stage", "redo"), REPORT_KILLS, ids=[f"{s}{'-redo' if r else ''}" for s, r in REPORT_KILLS])
def test_a_report_batch_killed_mid_way_ends_equal_to_a_clean_run(graph, report_clean, tmp_path, stage, redo):
    batch, clean = report_clean
    out = tmp_path / "reports"
    batch.remove(graph)
    try:
        if redo:
            assert batch.run(graph, out).returncode == clean[2]
        _killed(batch.run(graph, out, *(["--redo"] if redo else []), env={runs.KILL_AT_ENV: stage}))
        states = [r["report"]["status"] for r in batch.in_graph(graph).values()]
        assert len(states) < 2 or "writing" in states, states  # the killed item is absent or not taken as made
        assert not list(out.rglob("*.part"))
        again = batch.run(graph, out)
        got = (_files(out), batch.in_graph(graph), again.returncode)
        assert got == clean, (_diff(got, clean), again.stderr[-2000:])
    finally:
        batch.remove(graph)


def test_the_kill_points_are_the_pipelines_own():
    """Every kill point named here is passed by the pipelines (a renamed point would make a case kill nothing)."""
    root = Path(__file__).resolve().parents[1] / "finkg" / "pipelines"
    text = (root / "memos.py").read_text() + (root / "reports.py").read_text()
    for stage, _ in MEMO_KILLS + REPORT_KILLS:
        assert f'runs.checkpoint("{stage.split("#")[0]}")' in text, stage


# --- two ingests of one file at once ----------------------------------------------------------------------


@pytest.mark.reliability("crash")
@pytest.mark.neo4j
def test_two_concurrent_ingests_of_one_file_end_equal_to_a_clean_load(graph, copies, tmp_path, clean_counts):  # noqa: F811
    c = Copy(tmp_path)
    copies.append(c)
    env = {**os.environ, "COLUMNS": "200", "FINKG_WRITER__BATCH_SIZE": "100"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "finkg", "ingest", "sec", str(c.path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
    assert c.counts(graph) == clean_counts
    assert c.run(graph)["status"] == "done"


# --- XML entity attacks on the XBRL instance reader -------------------------------------------------------

TSLA = Path(__file__).resolve().parents[1] / "data" / "sec-xbrl-instances" / "tsla-20240630-10q.xml"
REVENUE = ">22486000000</us-gaap:Revenues>"  # a fact of the real instance the attacks replace
SECRET = "987654321"
LAUGHS = '<!ENTITY lol0 "lol">' + "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10))
XML_ATTACKS = {
    "xxe": ('<!DOCTYPE xbrl [<!ENTITY xxe SYSTEM "file://{secret}">]>', "&xxe;"),
    "parameter entity": ('<!DOCTYPE xbrl [<!ENTITY % p SYSTEM "file://{secret}"> %p;]>', "22486000000"),
    "billion laughs": (f"<!DOCTYPE xbrl [{LAUGHS}]>", "&lol9;"),
    "external dtd": ('<!DOCTYPE xbrl SYSTEM "file://{secret}">', "22486000000"),
}


@pytest.mark.reliability("input")
@pytest.mark.parametrize("attack", sorted(XML_ATTACKS))
def test_xml_entity_attacks_read_no_file_and_expand_nothing(tmp_path, attack):
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    dtd, value = XML_ATTACKS[attack]
    head = '<?xml version="1.0" encoding="utf-8"?>\n'
    raw = TSLA.read_text(encoding="utf-8")
    assert raw.startswith(head) and raw.count(REVENUE) >= 1
    body = raw[len(head) :].replace(REVENUE, f">{value}</us-gaap:Revenues>", 1)
    path = tmp_path / "attack.xml"
    path.write_text(head + dtd.format(secret=secret) + "\n" + body, encoding="utf-8")
    try:
        data = read_instance(path)
    except IngestError as exc:  # a named error is handled: it names the file and does not quote the secret
        assert str(path) in str(exc) and SECRET not in str(exc)
        return
    assert all(SECRET not in str(f) for f in data.facts)  # read without resolving the entity
    assert data.counts["kept"] > 300


# --- URIs a user may type -----------------------------------------------------------------------------------

BAD_URIS = {
    "http://127.0.0.1:7474": "is not a Bolt URI",
    "bolt://127.0.0.1:99999": "Port out of range",
    "bolt://127.0.0.1:0": "port 0",
    "bolt://127.0.0.1:x": "is not a usable URI",
    "bolt://[::1": "Invalid IPv6 URL",
    "bolt://nosuchhost.invalid:7687": "Cannot resolve address nosuchhost.invalid:7687",
    "neo4j://127.0.0.1:1": "is not reachable at neo4j://127.0.0.1:1",
}


@pytest.mark.reliability("small")
@pytest.mark.parametrize("uri", sorted(BAD_URIS))
def test_a_bad_uri_is_one_line_exit_2(uri):
    line = _one_line_error(finkg("cypher", "RETURN 1", env={"NEO4J_URI": uri}))
    assert repr(uri) in line or uri in line, line
    assert BAD_URIS[uri] in line, line


# --- input that never ends: devices and pipes given as files -------------------------------------------------

ENDLESS = ["ingest sec", "ingest companyfacts", "ingest xbrl", "ingest text", "ingest akshare", "report --batch"]


@pytest.mark.reliability("input")
@pytest.mark.parametrize("command", ENDLESS)
def test_a_device_or_a_pipe_given_as_a_file_is_one_line_exit_2(tmp_path, command):
    """/dev/zero read whole filled the memory (an ingest hashed it first); a named pipe would block for ever.
    The input is checked before the command connects: the path is named with no server at NEO4J_URI."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path in ("/dev/zero", str(fifo)):
        line = _one_line_error(finkg(*command.split(), path, env={"NEO4J_URI": "bolt://127.0.0.1:1"}))
        assert path in line and ("not a regular file" in line or "a device or a pipe" in line), line
