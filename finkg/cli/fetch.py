"""``finkg fetch``: a user's companies from SEC EDGAR (through edgartools) into the graph."""

from __future__ import annotations

from typing import Annotated

import typer

from finkg import api
from finkg.cli._common import console, progress
from finkg.cli.ingest import OnConflict, OnConflictOption
from finkg.output import Format, render


def fetch(
    companies: Annotated[list[str], typer.Argument(help="Tickers (AAPL) or CIKs (320193, CIK0000320193)")],
    offline: Annotated[
        bool, typer.Option("--offline", help="Make no request: only companies already in [edgar] cache_dir.")
    ] = False,
    refresh: Annotated[
        bool, typer.Option("--refresh", help="Ask EDGAR again for companies already in the cache.")
    ] = False,
    on_conflict: OnConflictOption = OnConflict.REFUSE,
) -> None:
    """Companies from SEC EDGAR through edgartools: each one's companyfacts (facts as first reported and as
    restated, one filing per accession) into the fact model, as `finkg ingest companyfacts` loads a file.

    Needs `[edgar] identity` (your name and email: SEC's fair-access rule) unless --offline. Responses are kept in
    `[edgar] cache_dir`: a company fetched once is not requested again.
    """
    if offline and refresh:
        raise typer.BadParameter("--refresh asks EDGAR again, --offline never does: give one of them")
    with progress() as p:
        summary = api.fetch(companies, offline=offline, refresh=refresh, progress=p, on_conflict=on_conflict.value)
    render(summary, Format.table, console, title="finkg fetch: companyfacts")
