"""``finkg audit``: audits of stored evidence selections and source memory (seed 000, 3.3, 3.5, 4.3)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from finkg import api
from finkg.cli._common import console, err
from finkg.output import Format, render

app = typer.Typer(help="Audits of stored evidence selections and source memory.", no_args_is_help=True)


@app.command("evidence")
def audit_evidence_command(
    run: Annotated[
        str | None, typer.Option("--run", help="One evaluation run's selections (default: all runs).")
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", help="table, json or csv")] = Format.table,
) -> None:
    """Future-document rate (must be 0.00%) and near-duplicate-anchor rate of the selected evidence stored
    in the graph (seed 000, section 4.3); exit 1 when any selected passage is a future document."""
    result = api.audit_evidence(run)
    render(
        result.rows(), fmt, console, title="point-in-time audit of selected evidence" + (f" (run {run})" if run else "")
    )
    if result.examples:
        render(result.examples, fmt, console, title="offending selected passages (first 5)")
    if result.selections == 0:
        err.print(
            "[yellow]no (:EvidenceSelection) in the graph" + (f" for run {escape(run)}" if run else "") + "[/yellow]"
        )
    if result.future:
        err.print(
            f"[red]error:[/red] {result.future} selected passage(s) were not available at their decision time "
            f"(future-document rate {100 * result.future_rate:.2f}%)"
        )
        raise typer.Exit(1)


@app.command("memory")
def audit_memory_command(
    run: Annotated[str, typer.Option("--run", help="The evaluation run whose source-memory cells to show.")],
    fmt: Annotated[Format, typer.Option("--format", help="table, json or csv")] = Format.table,
) -> None:
    """The source-memory cells of a run with equation 6's terms (seed 000, section 3.5), and the statement that
    shows them in Neo4j Browser."""
    rows, browser = api.memory_cells(run)
    render(rows, fmt, console, title=f"source memory of run {run}")
    console.print(f"Neo4j Browser: {escape(browser)}", highlight=False)
