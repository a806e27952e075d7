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
    """Show the recorded schema version, every constraint and index, and the ingest runs: how many per
    status and those not done (running, failed, interrupted: a run whose process died is marked
    interrupted here), with the filings readers do not see because their run did not finish them."""
    st = api.schema_status()
    console.print(f"finkg schema version {st.version} (this code: {st.code_version})")
    render(st.constraints, fmt, console, title="constraints")
    render(st.indexes, fmt, console, title="indexes")
    render(st.run_counts, fmt, console, title="ingest runs")
    if st.unfinished_runs:
        render(st.unfinished_runs, fmt, console, title="ingest runs not done (rerun the same ingest to complete one)")
    if st.hidden_filings:
        console.print(f"{st.hidden_filings} filing(s) not visible to readers: their ingest did not finish them")
