"""``finkg report``: analysis reports with two-stage KG-guided generation (seed 004, 3.2-3.3)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from finkg import api
from finkg.cli._common import YesOption, batch_cost, console, err, progress
from finkg.output import Format, render, short_model_id


def report(
    batch: Annotated[
        Path,
        typer.Option(
            "--batch", "-b", help="Questions, one JSON object per line: id, question, as_of, companies, facts."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the Markdown reports and JSON records.")] = Path(
        "reports"
    ),
    system: Annotated[
        str | None,
        typer.Option("--system", "-s", help="Retrieval: tfr (default), dense-triples, bm25-docs, dense-docs, none."),
    ] = None,
    mode: Annotated[
        str, typer.Option("--mode", help="two-stage (default) or single-stage (no fact selection).")
    ] = "two-stage",
    workers: Annotated[int | None, typer.Option(help="Questions in flight at once (default [report] workers).")] = None,
    redo: Annotated[
        bool, typer.Option("--redo", help="Redo questions already done (cached LLM answers are reused).")
    ] = False,
    only: Annotated[
        list[str], typer.Option("--only", help="Only the question with this id (repeatable); default: all.")
    ] = [],
    reader: Annotated[
        str,
        typer.Option(
            "--reader",
            help="two-stage (default, seed 004), agent (the analyst agent: tools, derivation, gate, agent run) or "
            "reader-calc (the agent with seed 004's tuned reader: its calculate thought run by the tool, gated; "
            "use with --adapter).",
        ),
    ] = "two-stage",
    adapter: Annotated[
        Path | None,
        typer.Option(
            "--adapter",
            help="A LoRA adapter of the [llm] model for this batch (`finkg train reader`; e.g. "
            "data/adapters/qwen2.5-coder-1.5b-tatqa-reader/adapter.gguf).",
            exists=True,
            dir_okay=True,
        ),
    ] = None,
    yes: YesOption = False,
) -> None:
    """Write an analysis report per question with two-stage KG-guided generation (seed 004, 3.2-3.3).

    Facts: AKShare indicators on the question's as-of date, XBRL facts of the companies it names, and its
    own facts. Every number of a report is checked against the facts; unsupported ones are marked.
    Resumable: questions already done with the same reader, system and mode are skipped. With --reader agent
    (or reader-calc) each report carries the answer, its derivation (operands with fact keys, expression, result),
    the gate's verdict and the agent run; a question the agent cannot answer is a report saying so, with the reason.
    Before it starts: the questions and the time they take at the rate measured for the model (a long batch asks,
    or needs --yes when not run on a terminal; [batch] in the settings).
    """
    with progress() as p:
        done = api.report_batch(
            batch,
            out=out,
            system=system,
            mode=mode,
            workers=workers,
            redo=redo,
            only=only,
            progress=p,
            reader=reader,
            adapter=adapter,
            cost=batch_cost("finkg report" + (f" --reader {reader}" if reader != "two-stage" else ""), "question", yes),
        )
    how = done.mode if done.reader == "two-stage" else done.reader
    render(
        done.summary.rows(),
        Format.table,
        console,
        title=f"finkg report: {done.system}, {how}, {short_model_id(done.model_id)}",
    )
    for line in done.summary.failed:
        err.print(f"[red]failed:[/red] {escape(line)}")
    console.print(
        escape(
            f"reports in {out}/ (Markdown and JSON per question); in Neo4j Browser: "
            f"{api.report_browser_query(done.reader)}"
        )
    )
    if done.summary.failed:
        raise typer.Exit(1)
