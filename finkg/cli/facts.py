"""``finkg facts``: the financial facts a question asked on a date gets (seed 004, section 2)."""

from __future__ import annotations

from typing import Annotated

import typer

from finkg import api
from finkg.cli._common import console, day, err
from finkg.output import Format, render


def facts(
    as_of: Annotated[
        str,
        typer.Option(
            "--as-of", help="The question's date, YYYY-MM-DD: only observations available by its end (UTC) count."
        ),
    ],
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
    when = day(as_of, "--as-of")
    assert when is not None
    rows = api.indicator_facts(when, indicators=indicator or None, max_age_days=max_age_days)
    render(rows, fmt, console, title=f"financial facts as of {when}")
    if not rows:
        err.print(
            "[yellow]no indicator has an observation available by that day: load some with "
            "`finkg ingest akshare data/china-macro/*.csv data/china-bond/*.csv`[/yellow]"
        )
