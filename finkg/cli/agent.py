"""``finkg ask``: a question answered by the analyst agent over the SEC graph; ``finkg experience``: the agent's
experience memory (learn from TAT-QA's training half, list, show, clear). Issue 17, seed 001."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from finkg import api
from finkg.cli._common import FormatOption, YesOption, batch_cost, console, day, progress
from finkg.output import Format, render

experience_app = typer.Typer(help="The analyst agent's experience memory (seed 001): learn, list, show, clear.")


def ask(
    question: Annotated[str, typer.Argument(help='The question, e.g. "What is Johnson & Johnson\'s current ratio?"')],
    company: Annotated[
        str | None, typer.Option("--company", "-c", help="A CIK or part of the company's name (else the question's).")
    ] = None,
    as_of: Annotated[
        str | None, typer.Option("--as-of", help="Only filings public by the end of this day (YYYY-MM-DD).")
    ] = None,
    record: Annotated[bool, typer.Option(help="Write the run to the graph as (:AgentRun)-[:STEP]->(:Step).")] = True,
    llm: Annotated[
        bool,
        typer.Option(
            "--llm",
            help="When the words name no company or measure finkg knows, let the configured LLM read the question "
            "into a plan (JSON schema; resolved against the graph, never a number from the model).",
        ),
    ] = False,
    fmt: Annotated[Format, typer.Option("--format", help="table or json")] = Format.table,
    page: Annotated[
        list[Path] | None,
        typer.Option(
            "--page",
            help="A text file of a filing page (repeatable): answer from the page, citing it, instead of the graph's "
            "facts (the configured LLM reads the page's selected lines when no rule applies; --llm not needed).",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    chunk: Annotated[
        list[str] | None, typer.Option("--chunk", help="A Chunk id of filing text in the graph, read as a page.")
    ] = None,
) -> None:
    """Answer a question in your own words from the graph's SEC facts: companies by short name or ticker, measures
    from the catalog (margins, ratios, R&D, tax rate, free cash flow...), periods as filings state them; computed by
    deterministic tools and gated (numbers traced, the answer is the one asked). Prints the answer, its derivation
    (operands with their fact keys, the formula, the expression, the result) and the gate's verdict. What the graph
    does not hold is answered as such, with what was searched; an ambiguous company name is asked back. With
    --page/--chunk: answered from the filing page's lines, in the question's unit, the page cited."""
    if page or chunk:
        from finkg.cli.page import print_page_answer

        pages = [(str(p), p.read_text(encoding="utf-8")) for p in page or ()]
        print_page_answer(api.ask_page(question, pages, chunks=chunk or ()), fmt)
        return
    result = api.ask(question, company=company, as_of=day(as_of, "--as-of"), record=record, llm=llm)
    if fmt is Format.json:
        print(json.dumps(result.__dict__, indent=1, default=str))
        return
    console.print(f"answer: {result.answer if result.answer is not None else '(none)'}", highlight=False, markup=False)
    console.print(f"status: {result.status}", highlight=False, markup=False)
    for reason in result.reasons:
        console.print(f"  reason: {reason}", highlight=False, markup=False, soft_wrap=True)
    for note in result.notes:
        console.print(f"  note: {note}", highlight=False, markup=False, soft_wrap=True)
    d = result.derivation
    if d:
        rows = [{"operand": k, **v} for k, v in d.get("operands", {}).items()]
        render(rows, Format.table, console, title="operands")
        if d.get("formula"):
            console.print(f"formula: {d['formula']}", highlight=False, markup=False)
        console.print(f"expression: {d.get('expression')} = {d.get('result')}", highlight=False, markup=False)
    if result.verdict is not None:
        v = result.verdict
        checks = ", ".join(f"{k} {'ok' if ok else 'FAILED'}" for k, ok in v["checks"].items())
        console.print(f"gate: {'passed' if v['passed'] else 'failed'} ({checks})", highlight=False, markup=False)
    else:
        console.print("gate: not run (no answer to check)", highlight=False, markup=False)
    if result.as_of:
        console.print(f"as of: {result.as_of} (filings public by then)", highlight=False, markup=False)
    if result.browser_query:
        console.print(
            f"run {result.run}; walk it in Neo4j Browser: {result.browser_query}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )


@experience_app.command("learn")
def learn(
    path: Annotated[
        Path, typer.Argument(help="A TAT-QA JSON file (its training half is used).", exists=True, dir_okay=False)
    ],
    limit: Annotated[int | None, typer.Option(min=1, help="At most N new questions.")] = None,
    max_tokens: Annotated[int, typer.Option(help="Completion cap per answer.")] = 160,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Questions answered at once (default: [llm] parallel with llama-server, else 1); each retrieves "
            "from the bank as it stands when it starts.",
        ),
    ] = None,
    route: Annotated[
        str,
        typer.Option(
            help="The agent route to learn: program (the arithmetic questions, answered by program of thought) or "
            "span (the questions answered by quoting the table or the text)."
        ),
    ] = "program",
    yes: YesOption = False,
) -> None:
    """Learn experiences from the questions of the file's training half the agent answers on --route (split by a
    hash of the table uid, as `finkg eval tatqa --half` splits): the agent answers, the answer is graded, the run is
    stored and a strategy (or a caution) distilled from it. Resumable. A long run says its estimated time and asks
    first (--yes: does not ask; [batch] in the settings)."""
    with progress() as p:
        summary = api.experience_learn(
            path,
            limit=limit,
            max_tokens=max_tokens,
            workers=workers,
            route=route,
            progress=p,
            cost=batch_cost("finkg experience learn", "question", yes),
        )
    console.print(
        f"learned {summary.learned} question(s) ({summary.correct} correct, {summary.merged} merged into a "
        f"near-duplicate), {summary.skipped} already learned",
        highlight=False,
        markup=False,
    )


@experience_app.command("list")
def list_(
    split: Annotated[str | None, typer.Option(help="Only this split (train).")] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most N experiences.")] = 100,
    fmt: FormatOption = Format.table,
) -> None:
    """Stored experiences, oldest first."""
    rows = api.experience_list(split=split, limit=limit)
    keep = ("id", "route", "outcome", "split", "context_id", "merged", "question", "program", "strategy", "caution")
    render([{k: r.get(k) for k in keep} for r in rows], fmt, console, title=f"{len(rows)} experience(s)")


@experience_app.command("show")
def show(exp_id: Annotated[str, typer.Argument(help="An experience id (exp:...).")]) -> None:
    """One experience and the runs it was distilled from."""
    print(json.dumps(api.experience_show(exp_id), indent=1, default=str))


@experience_app.command("clear")
def clear(
    split: Annotated[str | None, typer.Option(help="Only this split (default: all).")] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask.")] = False,
) -> None:
    """Delete the experiences (of --split, else all), with the runs they were distilled from and their steps."""
    if not yes:
        typer.confirm("delete the experiences and their runs?", abort=True)
    console.print(f"deleted {api.experience_clear(split=split)} experience(s)", highlight=False, markup=False)
