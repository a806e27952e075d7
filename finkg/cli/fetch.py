"""``finkg fetch``: a user's companies from SEC EDGAR (through edgartools) into the graph."""

from __future__ import annotations

from typing import Annotated

import typer

from finkg import api
from finkg.cli._common import console, day, progress
from finkg.cli.ingest import OnConflict, OnConflictOption
from finkg.output import Format, render


def fetch(
    companies: Annotated[list[str], typer.Argument(help="Tickers (AAPL) or CIKs (320193, CIK0000320193)")],
    offline: Annotated[
        bool, typer.Option("--offline", help="Make no request: only what is already in [edgar] cache_dir.")
    ] = False,
    refresh: Annotated[
        bool, typer.Option("--refresh", help="Ask EDGAR again for companyfacts and filing indexes in the cache.")
    ] = False,
    forms: Annotated[
        str, typer.Option("--forms", help="Form types of the filing index to add, separated by commas.")
    ] = "10-K,10-Q",
    since: Annotated[
        str | None,
        typer.Option("--since", help="Filings filed on or after this day (YYYY-MM-DD) instead of the watermark's."),
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", help="Only filings filed on or before this day (YYYY-MM-DD).")
    ] = None,
    no_facts: Annotated[bool, typer.Option("--no-facts", help="Skip companyfacts.")] = False,
    no_filings: Annotated[bool, typer.Option("--no-filings", help="Skip the filing index and its text.")] = False,
    no_text: Annotated[
        bool, typer.Option("--no-text", help="Skip the text of 10-K and 10-Q primary documents.")
    ] = False,
    on_conflict: OnConflictOption = OnConflict.REFUSE,
) -> None:
    """Companies from SEC EDGAR through edgartools: each one's companyfacts (facts as first reported and as
    restated) into the fact model, its filing index (form, accession, period, filed date, acceptance time, primary
    document) and the text of its new 10-K and 10-Q filings as point-in-time chunks (available at acceptance).

    A per-company watermark makes a second fetch add only filings filed since the last one (--since overrides it).
    Needs `[edgar] identity` (your name and email: SEC's fair-access rule) unless --offline. Responses are kept in
    `[edgar] cache_dir`: what was fetched once is not requested again.
    """
    if offline and refresh:
        raise typer.BadParameter("--refresh asks EDGAR again, --offline never does: give one of them")
    with progress() as p:
        summary = api.fetch(
            companies,
            offline=offline,
            refresh=refresh,
            facts=not no_facts,
            filings=not no_filings,
            text=not no_text,
            forms=forms.split(","),
            since=day(since, "--since"),
            until=day(until, "--until"),
            progress=p,
            on_conflict=on_conflict.value,
        )
    if summary.facts:
        render(summary.facts, Format.table, console, title="finkg fetch: companyfacts")
    if summary.filings:
        render(summary.filings, Format.table, console, title="finkg fetch: filings")
