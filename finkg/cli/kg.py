"""``finkg extract`` and ``finkg cluster``: the knowledge-graph build (seed 004, 3.1-3.2)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from finkg import api
from finkg.cli._common import YesOption, batch_cost, console, progress
from finkg.output import Format, render


def extract(
    family: Annotated[
        list[str], typer.Option("--family", "-f", help="Only documents of this source family (repeatable), e.g. fomc.")
    ] = [],
    document: Annotated[list[str], typer.Option("--document", "-d", help="Only this Document id (repeatable).")] = [],
    limit: Annotated[int | None, typer.Option(help="At most N pending chunks.")] = None,
    verify: Annotated[
        bool | None,
        typer.Option(
            "--verify/--no-verify",
            help="Run the LLM verification pass (default: [extract] verify, off: it removes more correct triples "
            "than wrong ones on the gold set).",
        ),
    ] = None,
    redo: Annotated[
        bool, typer.Option("--redo", help="Re-extract chunks already done (cached LLM answers are reused).")
    ] = False,
    parallel: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="LLM calls in flight at once (default: [llm] parallel; the llama-server backend decodes them together).",
        ),
    ] = None,
    yes: YesOption = False,
) -> None:
    """Extract and verify knowledge-graph triples from the text chunks with the [llm] model (seed 004, 3.1).

    Resumable: chunks already extracted with the same schema and model are skipped. Before the first LLM call: the
    chunks and the time they take at the rate measured for the model (a long run asks, or needs --yes when not run
    on a terminal; [batch] in the settings).
    """
    with progress() as p:
        done = api.extract(
            families=family or None,
            documents=document or None,
            limit=limit,
            verify=verify,
            redo=redo,
            parallel=parallel,
            progress=p,
            cost=batch_cost("finkg extract", "chunk", yes),
        )
    render(done.summary.rows(), Format.table, console, title=f"extraction with {done.model_id[:40]}")
    if done.dropped:
        render(done.dropped, Format.table, console)


def cluster(
    ids_file: Annotated[
        Path | None,
        typer.Option(
            "--ids",
            help="Only the entity ids listed in this file (one per line); default: every entity.",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
) -> None:
    """Embed, resolve and cluster the extracted entities (seed 004, section 3.2).

    Embeds entities whose embedding is missing or from another model ([embedding]), keeps the
    vector index entity_embedding, merges duplicates (exact, identifier, fuzzy, embedding; each
    merge recorded as an EntityMerge), clusters the entities by agglomerative clustering on cosine
    distance ([cluster]) and writes Entity.cluster and each triple's cluster (head|tail).
    """
    ids = api.read_ids(ids_file) if ids_file is not None else None
    with progress() as p:
        summary = api.cluster(ids=ids, progress=p)
    render(summary.rows(), Format.table, console, title="finkg cluster")
