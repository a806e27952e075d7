"""``finkg ingest``: load real sources into the graph (idempotent)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from finkg import api
from finkg.cli._common import console, day, err, progress
from finkg.output import Format, render

app = typer.Typer(help="Load real sources into the graph (idempotent).", no_args_is_help=True)

#: ``ingest.text.documents.KINDS`` and ``ingest.market.akshare.FUNCTIONS``, repeated here for the help
#: texts so that ``finkg --help`` does not import pandas (tests/test_cli_startup.py checks they agree).
TEXT_KINDS = ("fomc", "markdown", "html", "tweets")
AKSHARE_FUNCTIONS = (
    "bond_china_yield",
    "macro_china_money_supply",
    "macro_china_cpi",
    "macro_china_ppi",
    "macro_china_shibor_all",
)


class OnConflict(StrEnum):
    """``ingest.sec.conflicts.ON_CONFLICT`` (repeated so that ``finkg --help`` imports no ingest code)."""

    REFUSE = "refuse"
    KEEP = "keep"
    REPLACE = "replace"


ON_CONFLICT_HELP = (
    "A fact already in the graph from another file of the same filing with another value: refuse the file "
    "(nothing written, exit 2), keep the graph's value and record this file's beside it, or replace it and record "
    "the graph's."
)
OnConflictOption = Annotated[OnConflict, typer.Option("--on-conflict", help=ON_CONFLICT_HELP)]


@app.command("sec")
def ingest_sec(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="FSDS ZIP files (quarterly or daily layout); with --bulk also folders of them", exists=True
        ),
    ],
    bulk: Annotated[
        bool,
        typer.Option(
            "--bulk",
            help="Import offline with neo4j-admin into a new database of the local server (--database), for "
            "many quarters; the served database is never touched.",
        ),
    ] = False,
    database: Annotated[
        str, typer.Option("--database", help="--bulk: the database to create (served once [neo4j] database names it).")
    ] = "edgar",
    force: Annotated[bool, typer.Option("--force", help="--bulk: replace the database if it exists.")] = False,
    csv: Annotated[
        Path | None, typer.Option("--csv", help="--bulk: write and keep the import CSV files in DIR.", file_okay=False)
    ] = None,
    csv_only: Annotated[
        bool, typer.Option("--csv-only", help="--bulk: write the CSV files (--csv DIR) and stop, for a remote server.")
    ] = False,
    on_conflict: OnConflictOption = OnConflict.REFUSE,
) -> None:
    """SEC Financial Statement Data Sets: Company, Filing, Concept and Fact nodes (USD, whole entity)."""
    if not bulk:
        if force or csv or csv_only or database != "edgar":
            raise typer.BadParameter("--database, --force, --csv and --csv-only go with --bulk")
        if any(p.is_dir() for p in paths):
            raise typer.BadParameter("folders go with --bulk; give the ZIP files")
        with progress() as p:
            summary = api.ingest_sec(paths, progress=p, on_conflict=on_conflict.value)
        render(summary, Format.table, console, title="SEC FSDS ingest")
        return
    if on_conflict is not OnConflict.REFUSE:
        raise typer.BadParameter("--on-conflict goes without --bulk (a bulk import fills a new database)")
    with progress() as p:
        result = api.ingest_sec_bulk(paths, database=database, force=force, csv_dir=csv, csv_only=csv_only, progress=p)
    render(result.summary, Format.table, console, title=f"SEC FSDS bulk import into {database!r}")
    render(result.count_rows(), Format.table, console, title="written")
    if result.report is None:
        console.print(f"CSV files in {escape(str(result.folder))} ({result.csv_seconds:.1f} s); nothing imported")
        return
    r = result.report
    console.print(
        f"imported {r.nodes:,} nodes, {r.relationships:,} relationships, {r.properties:,} properties into "
        f"{database!r} in {result.seconds:.1f} s (CSV {result.csv_seconds:.1f} s, neo4j-admin {r.seconds:.1f} s)"
    )
    console.print(escape(api.bulk_served_hint(database)))


@app.command("companyfacts")
def ingest_companyfacts(
    paths: Annotated[
        list[Path], typer.Argument(help="SEC companyfacts JSON files (CIK##########.json)", exists=True, dir_okay=False)
    ],
    on_conflict: OnConflictOption = OnConflict.REFUSE,
) -> None:
    """SEC companyfacts JSON: Company, Filing, Concept and Fact nodes (USD, whole entity)."""
    with progress() as p:
        summary = api.ingest_companyfacts(paths, progress=p, on_conflict=on_conflict.value)
    render(summary, Format.table, console, title="SEC companyfacts ingest")


@app.command("xbrl")
def ingest_xbrl(
    paths: Annotated[list[Path], typer.Argument(help="XBRL instance documents (.xml)", exists=True, dir_okay=False)],
    accession: Annotated[
        str | None,
        typer.Option(
            "--accession",
            help="The filing's accession number (one file only); default: dei:AccessionNumber or a pseudo accession from file name and hash.",
        ),
    ] = None,
    on_conflict: OnConflictOption = OnConflict.REFUSE,
) -> None:
    """XBRL instance documents: Company, Filing, Concept and Fact nodes (USD, whole entity)."""
    if accession and len(paths) > 1:
        raise typer.BadParameter("--accession names one filing: give one file with it")
    with progress() as p:
        summary = api.ingest_xbrl(paths, accession=accession, progress=p, on_conflict=on_conflict.value)
    render(summary, Format.table, console, title="XBRL instance ingest")


@app.command("text")
def ingest_text(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Files or folders: FOMC statements (YYYYMMDD.txt), filings (.md, .html), tweet files (one JSON per line)"
        ),
    ],
    kind: Annotated[str, typer.Option("--kind", help="auto (by file name), fomc, markdown, html or tweets")] = "auto",
    ticker: Annotated[
        str | None,
        typer.Option(
            "--ticker", help="Ticker of a filing, or of a tweet folder (default: the cover page's / the folder's name)"
        ),
    ] = None,
    accepted: Annotated[
        str | None,
        typer.Option(
            "--accepted",
            help="A filing's EDGAR acceptance time, ISO 8601 with zone, e.g. 2024-08-02T18:04:57-04:00 (one filing); without it the latest filing deadline is used, flagged approximate",
        ),
    ] = None,
) -> None:
    """Text: Document and Chunk nodes (sentence-aware, token-budgeted chunks; point-in-time availability)."""
    if kind not in ("auto", *TEXT_KINDS):
        raise typer.BadParameter(f"--kind {kind!r}: use auto, {', '.join(TEXT_KINDS)}")
    if accepted and len(paths) > 1:
        raise typer.BadParameter("--accepted names one filing's acceptance time: give one file with it")
    with progress() as p:
        summary, warnings = api.ingest_text(paths, kind=kind, ticker=ticker, accepted=accepted, progress=p)
    for line in warnings[:20]:
        err.print(f"[yellow]skipped:[/yellow] {escape(line)}")
    if len(warnings) > 20:
        err.print(f"[yellow]skipped {len(warnings) - 20} more lines (the ingest run records the count)[/yellow]")
    render(summary, Format.table, console, title="Text ingest")


@app.command("akshare")
def ingest_akshare(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="CSVs that AKShare wrote (df.to_csv), in its own columns", dir_okay=False),
    ] = None,
    function: Annotated[
        list[str],
        typer.Option(
            "--function",
            "-f",
            help=f"The AKShare function: with files, the one that wrote them (default: by file name, else by columns); with --live, the ones to call (repeatable). One of {', '.join(AKSHARE_FUNCTIONS)}.",
        ),
    ] = [],
    live: Annotated[
        bool, typer.Option("--live", help="Call AKShare now (network needed) instead of reading files.")
    ] = False,
    start: Annotated[
        str | None, typer.Option(help="--live bond_china_yield: first day, YYYY-MM-DD (default: a year before --end).")
    ] = None,
    end: Annotated[
        str | None, typer.Option(help="--live bond_china_yield: last day, YYYY-MM-DD (default: today).")
    ] = None,
    save: Annotated[
        Path | None,
        typer.Option("--save", help="--live: also keep each frame as DIR/FUNCTION_df.csv.", file_okay=False),
    ] = None,
) -> None:
    """AKShare indicators (yield curve, money supply, CPI, PPI, SHIBOR): Indicator and Observation nodes.

    Idempotent: observations are keyed by indicator and date, a rerun creates nothing.
    """
    if live == bool(paths):
        raise typer.BadParameter("give CSV files, or --live with --function NAME")
    if live and not function:
        raise typer.BadParameter(f"--live needs --function (one or more of {', '.join(AKSHARE_FUNCTIONS)})")
    if not live and len(function) > 1:
        raise typer.BadParameter("with files, --function names the one function that wrote them")
    first, last = day(start, "--start"), day(end, "--end")
    with progress() as p:
        summary = api.ingest_akshare(
            paths or [], function=function, live=live, start=first, end=last, save=save, progress=p
        )
    render(summary, Format.table, console, title="AKShare ingest")
