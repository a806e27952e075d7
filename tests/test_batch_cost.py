"""Long LLM batches say what they will cost before they start, and a long one needs --yes (issue 47 item 7).

The real command line as a subprocess (the line the user reads is what is tested), the real SmolLM2 GGUF as the
configured model (only loaded by the batches that run), a measured-rates file per test.
"""

from __future__ import annotations

import copy
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import model_weights  # pyright: ignore[reportMissingImports]  (tests/ is on sys.path under pytest)

SAMPLE = Path(__file__).parent / "data" / "tatqa_dev_sample.json"
SMOL = "smollm2-135m-instruct-q4_1"
pytestmark = pytest.mark.model


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A run with SmolLM2 as the [llm] model, its own LLM cache and measured-rates file, no settings file."""
    return {
        "FINKG_CONFIG": str(tmp_path / "none.toml"),
        "FINKG_LLM_BACKEND": "llama-cpp",
        "FINKG_LLM_MODEL_PATH": str(model_weights(SMOL)),
        "FINKG_LLM_CACHE_DIR": str(tmp_path / "cache"),
        "FINKG_BATCH__RATES_FILE": str(tmp_path / "rates.json"),
        "COLUMNS": "200",
    }


def model(env: dict[str, str]) -> str:
    """The configured model as the rates file names it."""
    return f"llama-cpp:{Path(env['FINKG_LLM_MODEL_PATH']).name}"


def measured(env: dict[str, str], command: str, seconds: float, day: str = "2026-12-01") -> None:
    """A rate measured earlier for ``command`` with the configured model."""
    record = {command: {model(env): {"seconds_per_item": seconds, "items": 40, "seconds": 40 * seconds, "date": day}}}
    Path(env["FINKG_BATCH__RATES_FILE"]).write_text(json.dumps(record), encoding="utf-8")


def finkg(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """The command line with stdin not a terminal."""
    return subprocess.run(
        [sys.executable, "-m", "finkg", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
    )


def tatqa_file(path: Path, questions: int) -> Path:
    """A TAT-QA file of ``questions`` questions: the sample's contexts repeated, each copy's uids made unique."""
    sample = json.loads(SAMPLE.read_text(encoding="utf-8"))
    contexts, n, copy_no = [], 0, 0
    while n < questions:
        for context in sample:
            c = copy.deepcopy(context)
            c["table"]["uid"] += f"-{copy_no}"
            c["questions"] = c["questions"][: questions - n]
            for q in c["questions"]:
                q["uid"] += f"-{copy_no}"
            contexts.append(c)
            n += len(c["questions"])
            if n == questions:
                break
        copy_no += 1
    path.write_text(json.dumps(contexts), encoding="utf-8")
    return path


@pytest.mark.reliability("cost")
def test_a_100000_question_batch_says_its_cost_and_is_refused_without_yes(tmp_path, env):
    """The attack: 100,000 questions at the measured 38.1 s/question are 1,058 hours; said in one line, and not
    started when stdin is not a terminal and --yes is not given (exit 2): no answer written, no rate recorded."""
    big = tatqa_file(tmp_path / "big.json", 100_000)
    measured(env, "finkg eval tatqa", 38.1)
    rates = Path(env["FINKG_BATCH__RATES_FILE"]).read_text(encoding="utf-8")
    out = tmp_path / "out"
    run = finkg("eval", "tatqa", str(big), "-s", "two-stage", "--out", str(out), env=env)
    assert run.returncode == 2, run.stderr
    assert (
        f"finkg eval tatqa: 100,000 questions, about 1,058 h at 38.1 s/question (measured 2026-12-01 for {model(env)})"
        in run.stderr
    )
    assert (
        "error: finkg eval tatqa not started: estimated above [batch] confirm_above_hours = 1; pass --yes to start it"
        in run.stderr
    )
    assert "Traceback" not in run.stderr and not out.exists()
    assert Path(env["FINKG_BATCH__RATES_FILE"]).read_text(encoding="utf-8") == rates  # nothing ran, nothing measured

    # no rate measured for the model yet: said so, and a batch above [batch] confirm_above_items asks too
    Path(env["FINKG_BATCH__RATES_FILE"]).unlink()
    run = finkg("eval", "tatqa", str(big), "-s", "two-stage", "-s", "no-retrieval", "--out", str(out), env=env)
    assert run.returncode == 2, run.stderr
    assert (
        f"finkg eval tatqa: 200,000 answers (100,000 questions x 2 systems); no rate measured for {model(env)} yet"
        in run.stderr
    )
    assert "more than [batch] confirm_above_items = 1,000 answers; pass --yes to start it" in run.stderr
    assert not out.exists() and not Path(env["FINKG_BATCH__RATES_FILE"]).exists()


@pytest.mark.reliability("cost")
def test_a_long_report_batch_is_refused_before_the_graph_or_a_model_is_touched(tmp_path, env):
    """`finkg report --batch`: 1,001 questions with no rate measured: refused before connecting (this run has no
    Neo4j password: any connection would fail otherwise) and before any model; nothing written."""
    batch = tmp_path / "questions.jsonl"
    line = {"question": "What was the company's revenue?", "as_of": "2015-06-30", "companies": [], "facts": []}
    batch.write_text("".join(json.dumps({"id": f"q{i}", **line}) + "\n" for i in range(1_001)), encoding="utf-8")
    out = tmp_path / "reports"
    run = finkg("report", "--batch", str(batch), "--out", str(out), env=env)
    assert run.returncode == 2, run.stderr
    assert (
        f"finkg report: 1,001 questions (those already done are skipped); no rate measured for {model(env)} yet"
        in run.stderr
    )
    assert "error: finkg report not started:" in run.stderr and "pass --yes to start it" in run.stderr
    assert not out.exists()


def test_a_small_batch_runs_without_asking_and_records_its_rate(tmp_path, env):
    """Two questions at 38.1 s are 76 s, under [batch] confirm_above_hours: said, not asked; the real rate of the
    run replaces the earlier one in the rates file."""
    measured(env, "finkg eval tatqa", 38.1)
    args = ("eval", "tatqa", str(SAMPLE), "-s", "no-retrieval", "--limit", "2", "--max-tokens", "16")
    run = finkg(*args, "--out", str(tmp_path / "out"), env=env)
    assert run.returncode == 0, run.stderr
    assert f"finkg eval tatqa: 2 questions, about 76 s at 38.1 s/question (measured 2026-12-01 for {model(env)})" in (
        run.stderr
    )
    assert "not started" not in run.stderr and (tmp_path / "out" / "summary.json").exists()
    rate = json.loads(Path(env["FINKG_BATCH__RATES_FILE"]).read_text(encoding="utf-8"))["finkg eval tatqa"][model(env)]
    assert rate["items"] == 2 and rate["date"] != "2026-12-01" and 0 < rate["seconds_per_item"] < 38.1

    # the same questions again from the warm LLM cache elsewhere: run, but the cache's speed is not recorded
    run = finkg(*args, "--out", str(tmp_path / "again"), env=env)
    assert run.returncode == 0, run.stderr
    again = json.loads(Path(env["FINKG_BATCH__RATES_FILE"]).read_text(encoding="utf-8"))["finkg eval tatqa"]
    assert again[model(env)] == rate


def test_yes_starts_a_long_batch_that_is_refused_without_it(tmp_path, env):
    """Two questions at a measured hour each: refused without --yes, run with it."""
    measured(env, "finkg eval tatqa", 3600.0)
    args = ("eval", "tatqa", str(SAMPLE), "-s", "no-retrieval", "--limit", "2", "--max-tokens", "16")
    run = finkg(*args, "--out", str(tmp_path / "out"), env=env)
    assert run.returncode == 2 and "about 2.0 h at 3600.0 s/question" in run.stderr and "pass --yes" in run.stderr
    assert not (tmp_path / "out").exists()
    run = finkg(*args, "--out", str(tmp_path / "out"), "--yes", env=env)
    assert run.returncode == 0, run.stderr
    assert "about 2.0 h at 3600.0 s/question" in run.stderr and "not started" not in run.stderr
    assert json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))[0]["questions"] == 2


def test_on_a_terminal_a_long_batch_asks_and_no_stops_it(tmp_path, env):
    """stdin a terminal: the question is asked (typer's confirm, the progress display paused); "n" stops the batch
    (exit 1) before anything is written."""
    measured(env, "finkg eval tatqa", 3600.0)
    out = tmp_path / "out"
    pid, fd = pty.fork()
    if pid == 0:  # the child: finkg on the terminal
        os.environ.update(env)
        args = ["eval", "tatqa", str(SAMPLE), "-s", "no-retrieval", "--limit", "2", "--out", str(out)]
        os.execv(sys.executable, [sys.executable, "-m", "finkg", *args])
    seen, answered, deadline = b"", False, time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
        if not answered and b"start it? [y/N]" in seen:
            os.write(fd, b"n\n")
            answered = True
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    text = seen.decode(errors="replace")
    assert answered, text
    assert "estimated above [batch] confirm_above_hours = 1: start it? [y/N]" in text
    assert os.waitstatus_to_exitcode(status) == 1 and "Aborted" in text
    assert not out.exists()


FEEDBACK = Path(__file__).parent / "data"
FEEDBACK_ARGS = (
    "eval",
    "feedback",
    "--tweets",
    str(FEEDBACK / "feedback_tweets"),
    "--prices",
    str(FEEDBACK / "market" / "prices"),
    "--market",
    str(FEEDBACK / "market" / "index" / "sp500.csv"),
    "--tickers",
    "MSFT",
    "--start",
    "2015-07-01",
    "--end",
    "2015-07-31",
    "--shuffles",
    "1",
)


@pytest.fixture
def graph_env(env: dict[str, str], test_neo4j) -> dict[str, str]:
    """:func:`env` on the suite's own Neo4j (its settings file), with MiniLM as the [embedding] model."""
    from conftest import minilm_dir  # pyright: ignore[reportMissingImports]

    return {k: v for k, v in env.items() if k != "FINKG_CONFIG"} | {"FINKG_EMBEDDING__MODEL_PATH": str(minilm_dir())}


@pytest.fixture
def feedback_tweets_removed(graph):
    """The feedback tweets `finkg eval feedback` adds to the suite's graph are removed afterwards (those already
    there are kept): later tests read the graph's documents of July 2015 (tests/test_point_in_time.py)."""
    from ingest.text.tweets import read_tweets

    tweets = FEEDBACK / "feedback_tweets"
    ids = [d.id for d in read_tweets(sorted(p for p in tweets.rglob("*") if p.is_file())).documents]
    find = "UNWIND $ids AS id MATCH (d:Document {id: id}) RETURN d.id AS id"
    present = {r["id"] for r in graph.read(find, {"ids": ids})}
    yield
    added = [i for i in ids if i not in present]
    graph.write(
        "UNWIND $ids AS id MATCH (d:Document {id: id}) OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk) DETACH DELETE c, d",
        {"ids": added},
    )


@pytest.mark.reliability("cost")
@pytest.mark.usefixtures("feedback_tweets_removed")
def test_a_long_feedback_evaluation_says_its_answers_and_is_refused_before_its_run_is_written(tmp_path, graph_env):
    """`finkg eval feedback`: 4 anchors x 4 condition runs are 16 reader answers, 16 h at a measured hour each:
    said, refused without --yes (exit 2) before its folder, manifest or memory is written or a reader call made;
    with --yes one anchor in one condition runs and its rate is recorded."""
    env = graph_env
    measured(env, "finkg eval feedback", 3600.0)
    out = tmp_path / "feedback"
    run = finkg(*FEEDBACK_ARGS, "--run", "cost", "--out", str(out), env=env)
    assert run.returncode == 2, run.stderr
    assert (
        "finkg eval feedback: 16 answers (4 anchors x the condition runs not yet recorded), about 16 h at "
        f"3600.0 s/answer (measured 2026-12-01 for {model(env)})" in run.stderr
    )
    assert (
        "error: finkg eval feedback not started: estimated above [batch] confirm_above_hours = 1; pass --yes to "
        "start it" in run.stderr
    )
    assert "Traceback" not in run.stderr and not out.exists()

    measured(env, "finkg eval feedback", 7200.0)
    small = (*FEEDBACK_ARGS, "--run", "cost", "--conditions", "no-memory", "--limit", "1", "--out", str(out))
    run = finkg(*small, env=env)
    assert run.returncode == 2 and "1 answer (1 anchor x" in run.stderr and "about 2.0 h" in run.stderr
    assert not out.exists()
    run = finkg(*small, "--yes", env=env)
    assert run.returncode == 0, run.stderr
    assert "not started" not in run.stderr
    assert len((out / "predictions" / "no-memory.jsonl").read_text(encoding="utf-8").splitlines()) == 1
    rate = json.loads(Path(env["FINKG_BATCH__RATES_FILE"]).read_text(encoding="utf-8"))["finkg eval feedback"]
    assert rate[model(env)]["items"] == 1 and rate[model(env)]["date"] != "2026-12-01"


@pytest.mark.reliability("cost")
def test_a_long_structured_llm_memo_batch_is_refused_before_a_memo_is_written(tmp_path, graph_env, graph):
    """`finkg memo --all -s structured-llm` over the 435 filings of 2009q3 (431 once the amended are replaced by
    their amendments) at a measured minute a memo: 7.2 h, said and refused without --yes (exit 2), no memo file
    or Memo node; the structured system alone (no LLM) is not gated; one memo with --yes is written and its rate
    recorded."""
    from test_memos import QUARTER, WALMART  # pyright: ignore[reportMissingImports]

    from finkg.config import load_settings
    from finkg.pipelines import sec as pipelines
    from retrieval.facts.fact_map import list_filings, resolve_amendments

    if len(list_filings(graph, source=QUARTER.name)) != 435:
        pipelines.ingest_sec(graph, load_settings(), [QUARTER])
    env = graph_env
    filings = len(resolve_amendments(graph, [f["adsh"] for f in list_filings(graph)])[0])
    measured(env, "finkg memo", 60.0)
    out = tmp_path / "memos"
    memos_before = graph.read("MATCH (m:Memo) WHERE m.id STARTS WITH 'structured-llm:' RETURN count(m) AS n")
    run = finkg("memo", "--all", "-s", "structured", "-s", "structured-llm", "--out", str(out), "--redo", env=env)
    assert run.returncode == 2, run.stderr
    assert (
        f"finkg memo: {filings} memos (structured-llm), about {filings / 60:.1f} h at 60.0 s/memo "
        f"(measured 2026-12-01 for {model(env)})" in run.stderr
    )
    assert "error: finkg memo not started: estimated above [batch] confirm_above_hours = 1; pass --yes" in run.stderr
    assert "Traceback" not in run.stderr and not out.exists()
    assert graph.read("MATCH (m:Memo) WHERE m.id STARTS WITH 'structured-llm:' RETURN count(m) AS n") == memos_before

    plain = finkg("memo", "-a", WALMART, "-s", "structured", "--out", str(out), env=env)
    assert plain.returncode == 0, plain.stderr
    assert "finkg memo:" not in plain.stderr  # no LLM, no estimate

    measured(env, "finkg memo", 7200.0)
    one = ("memo", "-a", WALMART, "-s", "structured-llm", "--out", str(out), "--redo")
    run = finkg(*one, env={**env, "FINKG_LLM__MAX_TOKENS": "200"})
    assert run.returncode == 2 and "1 memo (structured-llm), about 2.0 h" in run.stderr
    assert not (out / "structured-llm").exists()
    run = finkg(*one, "--yes", env={**env, "FINKG_LLM__MAX_TOKENS": "200"})
    assert run.returncode == 0, run.stderr
    assert (out / "structured-llm" / f"{WALMART}.md").exists()
    rate = json.loads(Path(env["FINKG_BATCH__RATES_FILE"]).read_text(encoding="utf-8"))["finkg memo"][model(env)]
    assert rate["items"] == 1 and rate["date"] != "2026-12-01"
