"""The ``finkg`` command line: a thin layer over ``finkg.config``, ``finkg.neo4j_server`` and ``kg``.

Errors that finkg raises on purpose print one red line (what failed, what to do) and exit 1;
a refused write in ``finkg cypher`` exits 2.
"""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Iterator

import typer
from neo4j.exceptions import ClientError
from rich.console import Console

from ingest.sec_fsds import FsdsFormatError
from kg import Graph, GraphError, ReadOnlyViolation, schema
from kg.guard import run_user_query
from finkg import __version__, pipelines
from finkg.config import ConfigError, Settings, config_path, load_settings, write_settings_file
from finkg.neo4j_server import LocalNeo4j, ServerError
from finkg.output import Format, progress_bar, render

app = typer.Typer(help="finkg: a knowledge-graph-centric financial analysis engine on Neo4j.",
                  no_args_is_help=True, add_completion=False)
neo4j_app = typer.Typer(help="The local Neo4j server (no Docker needed).", no_args_is_help=True)
db_app = typer.Typer(help="The graph schema.", no_args_is_help=True)
ingest_app = typer.Typer(help="Load real sources into the graph (idempotent).", no_args_is_help=True)
app.add_typer(neo4j_app, name="neo4j")
app.add_typer(db_app, name="db")
app.add_typer(ingest_app, name="ingest")

console = Console()
err = Console(stderr=True)


def settings() -> Settings:
    """Settings for this command (environment over settings file over defaults)."""
    return load_settings()


@contextmanager
def graph(s: Settings | None = None) -> Iterator[Graph]:
    """A connected :class:`kg.Graph` from the settings, closed afterwards."""
    s = s or settings()
    g = Graph(s.uri, s.neo4j_user, s.password(), s.neo4j_database)
    try:
        yield g
    finally:
        g.close()


@app.callback()
def _main(version: Annotated[bool, typer.Option("--version", help="Print the version.")] = False) -> None:
    if version:
        console.print(f"finkg {__version__}")
        raise typer.Exit()


@app.command()
def init(force: Annotated[bool, typer.Option(help="Overwrite an existing settings file.")] = False) -> None:
    """Write a commented settings file with a freshly generated Neo4j password."""
    path, written = write_settings_file(force=force)
    if written:
        console.print(f"wrote {path} (mode 600)")
    else:
        console.print(f"{path} exists; kept it (--force overwrites)")


@app.command("config")
def show_config(
    fmt: Annotated[Format, typer.Option("--format", help="table, json or csv")] = Format.table,
) -> None:
    """Show where the settings file is and every setting in effect (the password masked)."""
    s = settings()
    rows = [{"setting": "settings file", "value": str(config_path())},
            {"setting": "neo4j uri (in use)", "value": s.uri}]
    for name, value in s.model_dump().items():
        if name == "neo4j_password":
            value = "(set)" if value else "(not set: run `finkg init` or set NEO4J_PASSWORD)"
        rows.append({"setting": name, "value": "" if value is None else str(value)})
    rows.append({"setting": "neo4j browser", "value": LocalNeo4j(s).browser_url})
    render(rows, fmt, console)


@neo4j_app.command("start")
def neo4j_start() -> None:
    """Assemble Neo4j from Maven Central on first use, start it, wait until Bolt answers."""
    server = LocalNeo4j(settings())
    with console.status("starting Neo4j") as status:
        st, started = server.start(progress=lambda msg: status.update(msg))
    if started:
        console.print(f"Neo4j {st.version} started (pid {st.pid}): {st.bolt_uri}, Browser {st.browser_url}")
    else:
        console.print(f"Neo4j is already running (pid {st.pid}): {st.bolt_uri}; nothing to do")


@neo4j_app.command("stop")
def neo4j_stop() -> None:
    """Stop the local Neo4j server (SIGTERM, then wait)."""
    if LocalNeo4j(settings()).stop():
        console.print("Neo4j stopped")
    else:
        console.print("Neo4j was not running")


@neo4j_app.command("status")
def neo4j_status(
    fmt: Annotated[Format, typer.Option("--format", help="table, json or csv")] = Format.table,
) -> None:
    """Show whether the local server runs, its pid, addresses and home; exit 3 when stopped."""
    st = LocalNeo4j(settings()).status()
    row = {"running": st.running, "pid": st.pid, "version": st.version, "bolt": st.bolt_uri,
           "browser": st.browser_url, "home": str(st.home)}
    render([row], fmt, console)
    if not st.running:
        raise typer.Exit(3)


@db_app.command("init")
def db_init() -> None:
    """Create every constraint and index (idempotent, versioned) and record the schema version."""
    with graph() as g:
        report = schema.apply_schema(g)
    console.print(
        f"schema version {report.version_before} -> {report.version_after}: "
        f"{len(report.created)} created, {len(report.unchanged)} already present, "
        f"{len(report.dropped)} dropped"
    )


@db_app.command("status")
def db_status(
    fmt: Annotated[Format, typer.Option("--format", help="table, json or csv")] = Format.table,
) -> None:
    """Show the recorded schema version and every constraint and index."""
    with graph() as g:
        version = schema.current_version(g)
        shown = schema.show_schema(g)
    console.print(f"finkg schema version {version} (this code: {schema.STEPS[-1].version})")
    render(shown["constraints"], fmt, console, title="constraints")
    render(shown["indexes"], fmt, console, title="indexes")


@ingest_app.command("sec")
def ingest_sec(
    paths: Annotated[list[Path], typer.Argument(help="FSDS ZIP files (quarterly or daily layout)", exists=True, dir_okay=False)],
) -> None:
    """SEC Financial Statement Data Sets: Company, Filing, Concept and Fact nodes (USD, whole entity)."""
    s = settings()
    with graph(s) as g, progress_bar(console) as bar:

        def stage(name: str, total: int):
            task = bar.add_task(name, total=total)
            return lambda n: bar.advance(task, n)

        summary = pipelines.ingest_sec(g, s, paths, progress=stage)
    render(summary, Format.table, console, title="SEC FSDS ingest")


@app.command()
def cypher(
    query: Annotated[str, typer.Argument(help="A Cypher query, e.g. \"MATCH (c:Company) RETURN c.name LIMIT 5\"")],
    param: Annotated[list[str], typer.Option("--param", "-p", help="name=value (value parsed as JSON if it can be)")] = [],
    write: Annotated[bool, typer.Option("--write", help="Allow queries that write or change the schema.")] = False,
    fmt: Annotated[Format, typer.Option("--format", help="table, json or csv")] = Format.table,
) -> None:
    """Run Cypher for exploration: planned with EXPLAIN first, refused unless read-only (or --write)."""
    params = {}
    for p in param:
        name, sep, raw = p.partition("=")
        if not sep or not name:
            raise typer.BadParameter(f"--param {p!r}: expected name=value")
        try:
            params[name] = json.loads(raw)
        except json.JSONDecodeError:
            params[name] = raw
    with graph() as g:
        records = run_user_query(g, query, params, allow_write=write)
    render(records, fmt, console)


def main() -> None:
    """Console entry point: runs the app and turns finkg's own errors into one clear line."""
    try:
        app()
    except ReadOnlyViolation as exc:
        err.print(f"[red]error:[/red] {exc}")
        sys.exit(2)
    except (ConfigError, GraphError, ServerError, FsdsFormatError) as exc:
        err.print(f"[red]error:[/red] {exc}")
        sys.exit(1)
    except ClientError as exc:  # Cypher syntax, unknown procedure, constraint violation ...
        err.print(f"[red]Neo4j refused the query:[/red] {exc.code}: {exc.message}")
        sys.exit(1)
