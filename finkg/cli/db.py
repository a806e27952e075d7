"""``finkg db``: the graph schema."""

from __future__ import annotations

import typer

from finkg import api
from finkg.cli._common import FormatOption, console
from finkg.output import Format, render

app = typer.Typer(help="The graph schema.", no_args_is_help=True)


@app.command("init")
def db_init() -> None:
    """Create every constraint and index (idempotent, versioned) and record the schema version."""
    report = api.apply_schema()
    console.print(
        f"schema version {report.version_before} -> {report.version_after}: "
        f"{len(report.created)} created, {len(report.unchanged)} already present, "
        f"{len(report.dropped)} dropped"
    )


@app.command("status")
def db_status(fmt: FormatOption = Format.table) -> None:
    """Show the recorded schema version and every constraint and index."""
    st = api.schema_status()
    console.print(f"finkg schema version {st.version} (this code: {st.code_version})")
    render(st.constraints, fmt, console, title="constraints")
    render(st.indexes, fmt, console, title="indexes")
