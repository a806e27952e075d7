"""The `finkg` console command as a user runs it (a real subprocess against the real Neo4j)."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest
from conftest import free_port


def finkg(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "finkg", *args],
        capture_output=True,
        text=True,
        timeout=300,  # a hang guard, not a timing: a three-company fetch under load took over 120 s once
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


@pytest.mark.reliability("guard")
def test_cypher_refuses_a_write_with_exit_code_2(label):
    out = finkg("cypher", f"CREATE (:{label})")
    assert out.returncode == 2
    assert "refused" in out.stderr and "--write" in out.stderr


def test_cypher_write_flag_and_formats(graph, label):
    assert finkg("cypher", f"CREATE (:{label} {{k: 1, name: 'a,b'}})", "--write").returncode == 0
    js = finkg("cypher", f"MATCH (n:{label}) RETURN n.k AS k, n.name AS name", "--format", "json")
    assert js.returncode == 0, js.stderr
    assert json.loads(js.stdout) == [{"k": 1, "name": "a,b"}]
    c = finkg(
        "cypher", f"MATCH (n:{label}) WHERE n.k = $k RETURN n.k AS k, n.name AS name", "-p", "k=1", "--format", "csv"
    )
    assert list(csv.reader(io.StringIO(c.stdout))) == [["k", "name"], ["1", "a,b"]]


@pytest.mark.neo4j  # its subprocess talks to the server
def test_show_constraints_lists_the_schema_after_db_init():
    assert finkg("db", "init").returncode == 0
    out = finkg("cypher", "SHOW CONSTRAINTS YIELD name RETURN name", "--format", "json")
    names = {r["name"] for r in json.loads(out.stdout)}
    assert {"fact_key_unique", "filing_adsh_unique", "company_cik_unique"} <= names


@pytest.mark.neo4j  # its subprocess talks to the server
@pytest.mark.reliability("small")
def test_syntax_error_is_one_clear_line():
    out = finkg("cypher", "MATCH (n RETURN n")
    assert out.returncode == 2
    assert "Neo.ClientError.Statement.SyntaxError" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.reliability("small")
def test_unreachable_server_names_uri_and_command():
    uri = f"bolt://127.0.0.1:{free_port()}"
    out = finkg("cypher", "RETURN 1", env={"NEO4J_URI": uri})
    assert out.returncode == 2
    assert uri in out.stderr and "finkg neo4j start" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.reliability("small")
def test_init_then_no_password_error(tmp_path):
    env = {"FINKG_CONFIG": str(tmp_path / "c.toml"), "NEO4J_PASSWORD": ""}
    out = finkg("cypher", "RETURN 1", env=env)
    assert out.returncode == 2 and "finkg init" in out.stderr
    assert finkg("init", env=env).returncode == 0
    assert "password = " in (tmp_path / "c.toml").read_text()


def test_help_shows_settings_sections_in_brackets():
    """Help texts name settings as ``[section] key``; rich markup must not swallow the brackets."""
    run = finkg("eval", "tatqa", "--help")
    assert run.returncode == 0 and "([llm] model)" in run.stdout
    run = finkg("report", "--help")
    assert "(default [report] workers)" in " ".join(run.stdout.split())


def _help_texts(command, path=("finkg",)):
    """(command path, text) for every help text of the click command tree: the commands' and their options'."""
    yield " ".join(path), command.help or ""
    for param in command.params:
        yield f"{' '.join(path)} {param.name}", getattr(param, "help", None) or ""
    for name, sub in getattr(command, "commands", {}).items():
        yield from _help_texts(sub, (*path, name))


def test_no_help_text_holds_a_placeholder_that_markdown_drops():
    """The help is rendered as markdown (``rich_markup_mode``), where ``<system>`` is an HTML tag and vanishes:
    "run as <system>+lora" printed "run as +lora". A placeholder in angle brackets goes in backticks."""
    import re

    import typer.main

    from finkg.cli import app

    outside_code = re.compile(r"`[^`]*`")
    found = [
        (where, tag)
        for where, text in _help_texts(typer.main.get_command(app))
        for tag in re.findall(r"<[A-Za-z][^<>\s]*>", outside_code.sub("", text))
    ]
    assert not found, found
    run = finkg("eval", "tatqa", "--help", env={"COLUMNS": "400"})
    assert "run as <system>+lora by the tuned model" in run.stdout


def test_version_prints_the_version_and_exits_0():
    from finkg import __version__

    out = finkg("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"finkg {__version__}"
