"""The command line starts without the heavy libraries, keeps its names in step with the sources
it repeats, and its output works in pipes (full-width tables, progress log lines)."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from rich.console import Console

HEAVY = ("torch", "transformers", "sklearn", "sentence_transformers", "FlagEmbedding", "pandas", "neo4j")


def test_importing_the_cli_loads_no_heavy_library():
    code = f"import sys, finkg.cli; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_help_and_version_load_no_heavy_library():
    code = (
        "import sys, runpy\n"
        "sys.argv = ['finkg', '--version']\n"
        "try:\n    runpy.run_module('finkg', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.splitlines()[-1].strip() == "", out.stdout


def test_names_repeated_for_help_texts_match_their_sources():
    from finkg.cli import eval as cli_eval
    from finkg.cli import ingest as cli_ingest
    from generation.memo.systems import SYSTEMS
    from ingest.market.akshare import FUNCTIONS
    from ingest.text.documents import KINDS

    assert tuple(cli_ingest.TEXT_KINDS) == tuple(KINDS)
    assert tuple(cli_ingest.AKSHARE_FUNCTIONS) == tuple(FUNCTIONS)
    assert tuple(cli_eval.MEMO_SYSTEMS) == tuple(SYSTEMS)


def test_a_piped_table_keeps_a_long_cell_on_one_line(monkeypatch):
    from finkg.output import Format, make_console, render

    monkeypatch.setenv("COLUMNS", "80")  # a CI runner's default: ignored when not a terminal
    buf = io.StringIO()
    console = make_console()
    console.file = buf  # not a terminal
    long = "word " * 60
    render([{"id": 1, "text": long.strip()}], Format.table, console)
    assert any(long.strip() in line for line in buf.getvalue().splitlines())


def test_progress_logs_lines_when_not_a_terminal():
    from finkg.output import LogProgress

    now = [0.0]
    buf = io.StringIO()
    log = LogProgress(Console(file=buf, width=200), interval_s=10.0, clock=lambda: now[0])
    advance = log("embed chunks", 100)
    for _ in range(10):
        now[0] += 6.0
        advance(5)
    log.close()
    lines = buf.getvalue().splitlines()
    assert lines[0] == "embed chunks: started, 100 to do"
    periodic = [x for x in lines[1:] if x.startswith("embed chunks: ")]
    assert 4 <= len(periodic) <= 6  # every ~10 s over 60 s, not every call
    assert "/100" in periodic[0] and "/s" in periodic[0] and "ETA" in periodic[0]
    assert periodic[-1].startswith("embed chunks: 50/100")


@pytest.mark.neo4j  # its subprocess talks to the server
def test_a_piped_command_prints_progress_lines_on_stderr(tmp_path):
    """`finkg ingest text` on a file, stdout piped: progress lines go to stderr, not the table."""
    doc = tmp_path / "20081216.txt"
    doc.write_text("The Committee decided today to establish a target range.\n", encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "finkg", "ingest", "text", str(doc)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert ": started" in out.stderr
    assert "Text ingest" in out.stdout and ": started" not in out.stdout
