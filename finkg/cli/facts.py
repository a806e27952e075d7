"""``finkg facts``: the financial facts a question asked on a date gets (seed 004, section 2), and
``finkg facts history``: an XBRL fact across filings (as first reported, as known on a date, restated; TTM)."""

from __future__ import annotations

from typing import Annotated

import typer

from finkg import api
from finkg.cli._common import console, day, err
from finkg.output import Format, render

app = typer.Typer(help="Financial facts: indicators as of a date; XBRL facts across filings (history).")


@app.callback(invoke_without_command=True)
def facts(
    ctx: typer.Context,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of", help="The question's date, YYYY-MM-DD: only observations available by its end (UTC) count."
        ),
    ] = None,
    indicator: Annotated[
        list[str],
        typer.Option("--indicator", "-i", help="An Indicator code, e.g. cn_m2_yoy (repeatable; default: all)."),
    ] = [],
    max_age_days: Annotated[
        int | None,
        typer.Option(
            "--max-age-days",
            min=0,
            help="Leave out indicators whose latest available observation is older than this many days.",
        ),
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", help="table, json or csv")] = Format.table,
) -> None:
    """The financial facts F a question asked on --as-of gets: each indicator's value and changes (seed 004, section 2)."""
    if ctx.invoked_subcommand is not None:
        return
    when = day(as_of, "--as-of")
    if when is None:
        raise typer.BadParameter("--as-of is required (or use `finkg facts history`)", param_hint="--as-of")
    rows = api.indicator_facts(when, indicators=indicator or None, max_age_days=max_age_days)
    render(rows, fmt, console, title=f"financial facts as of {when}")
    if not rows:
        err.print(
            "[yellow]no indicator has an observation available by that day: load some with "
            "`finkg ingest akshare data/china-macro/*.csv data/china-bond/*.csv`[/yellow]"
        )


@app.command()
def history(
    company: Annotated[str, typer.Option("--company", "-c", help="A CIK, a ticker or part of the company's name.")],
    concept: Annotated[
        str, typer.Option("--concept", help="A canonical concept (Revenues, NetIncomeLoss, ...) or a us-gaap tag.")
    ],
    as_of: Annotated[
        str | None, typer.Option("--as-of", help="Also show what was known on this day (YYYY-MM-DD).")
    ] = None,
    uom: Annotated[str, typer.Option(help="Unit of measure.")] = "USD",
    derived: Annotated[
        str | None, typer.Option("--derived", help="quarterly (Q4 = FY - 9M), ttm or yoy (quarterly growth).")
    ] = None,
    basis: Annotated[
        str, typer.Option(help="Which report a derived series uses: latest, first (as first reported) or as-of.")
    ] = "latest",
    fmt: Annotated[Format, typer.Option("--format", help="table, json or csv")] = Format.table,
) -> None:
    """An XBRL fact across filings: for each period, the value as first reported, the latest (restated) and
    how many filings reported it; --as-of adds what was known that day; --derived draws quarterly, TTM or
    year-over-year series, each value with its formula and fact keys. When another source file gave one of the
    facts another value (ingest --on-conflict keep or replace), a last table lists each such record: the value
    held and its file, the other file's value and name, which was kept, and when it was recorded."""
    when = day(as_of, "--as-of")
    result = api.fact_history(company, concept, as_of=when, uom=uom, derived=derived, basis=basis)
    render(result.periods, fmt, console, title=f"{result.name} (CIK {result.cik}): {concept} across filings")
    if derived:
        rows = result.derived
        if fmt == Format.table:  # the keys are long; --format json or csv lists them
            rows = [{k: v for k, v in r.items() if k != "fact keys"} for r in rows]
        render(rows, fmt, console, title=f"{derived}, basis {basis} (--format json lists each value's fact keys)")
    if result.conflicts:
        render(
            result.conflicts,
            fmt,
            console,
            title="values other source files gave these facts (ingest --on-conflict keep or replace)",
        )
