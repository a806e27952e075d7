"""``finkg memo``: desk-risk memos whose every number is verified against XBRL facts (seed 003)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from finkg import api
from finkg.cli._common import YesOption, batch_cost, console, progress
from finkg.output import Format, render


def memo(
    accession: Annotated[list[str], typer.Option("--accession", "-a", help="Accession number (repeatable).")] = [],
    all_filings: Annotated[bool, typer.Option("--all", help="Every filing in the graph.")] = False,
    system: Annotated[
        list[str],
        typer.Option(
            "--system",
            "-s",
            help="structured (default), structured-llm (the [llm] backend writes the prose), verifier-rag, text-rag, no-rag; repeatable",
        ),
    ] = ["structured"],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the Markdown memos and claim records.")] = Path(
        "memos"
    ),
    resume: Annotated[
        bool, typer.Option("--resume/--redo", help="Skip memos already done (default) or redo them.")
    ] = True,
    source: Annotated[str | None, typer.Option(help="Only filings loaded from this file, e.g. 2009q3.zip.")] = None,
    yes: YesOption = False,
) -> None:
    """Desk-risk memos whose every number is verified against the filing's XBRL facts.

    Writes OUT/SYSTEM/ADSH.md, its picture against the SIC peers OUT/SYSTEM/ADSH.png ([memo] pictures),
    OUT/SYSTEM/claims.jsonl and OUT/SYSTEM/claims.csv, and the audit trail
    (:Memo)-[:HAS_CLAIM]->(:Claim)-[:CITES]->(:Fact) in the graph.

    With structured-llm, before the first LLM call: its memos still to write and the time they take at the rate
    measured for the model (a long run asks, or needs --yes when not run on a terminal; [batch] in the settings).
    """
    if bool(accession) == all_filings:
        raise typer.BadParameter("give --accession ADSH (one or more) or --all")
    with progress() as p:
        summaries = api.memo_batch(
            accession or None,
            systems=system,
            out=out,
            source=source,
            resume=resume,
            progress=p,
            cost=batch_cost("finkg memo", "memo", yes),
        )
    render(api.memo_summary_rows(summaries), Format.table, console, title=f"memos in {out}")
