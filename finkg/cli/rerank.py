"""``finkg rerank``: rerankers of retrieved chunks (seed 002, section 3.3)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from finkg import api
from finkg.cli._common import console, progress
from finkg.output import Format, render

app = typer.Typer(help="Rerankers of retrieved chunks (seed 002, section 3.3).", no_args_is_help=True)


@app.command("train")
def rerank_train(
    path: Annotated[
        Path,
        typer.Argument(
            help="TAT-QA JSON file (tatqa_dataset_dev.json); its training half (split by context) is used.",
            exists=True,
            dir_okay=False,
        ),
    ],
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out-dir",
            help="Where the cross-encoder is saved (default: [rerank] model_path, else <[models] dir>/finkg-reranker-minilm).",
        ),
    ] = None,
    base_model: Annotated[
        Path | None,
        typer.Option("--base-model", help="Encoder directory to start from (default: [embedding] model_path)."),
    ] = None,
    max_questions: Annotated[
        int, typer.Option(help="Training questions (a seeded sample of the training half; 0: all).")
    ] = 200,
    max_length: Annotated[int, typer.Option(help="Tokens per (question, passage) pair.")] = 128,
    negatives: Annotated[
        int, typer.Option(help="Negative passages per question (BM25's top hits outside its context first).")
    ] = 3,
    epochs: Annotated[int, typer.Option(help="Passes over the pairs.")] = 1,
    batch_size: Annotated[int, typer.Option(help="Pairs per optimizer step.")] = 16,
    learning_rate: Annotated[float, typer.Option(help="AdamW peak learning rate.")] = 5e-5,
    device: Annotated[str | None, typer.Option(help="torch device (default: cuda when visible, else cpu).")] = None,
    seed: Annotated[int, typer.Option(help="Split and sampling seed.")] = 0,
) -> None:
    """Train finkg's offline cross-encoder from MiniLM on TAT-QA question-evidence pairs (no download)."""
    with progress() as p:
        info = api.train_reranker(
            path,
            out_dir=out_dir,
            base_model=base_model,
            max_questions=max_questions,
            max_length=max_length,
            negatives=negatives,
            epochs=epochs,
            batch_size=batch_size,
            learning_rate=learning_rate,
            device=device,
            seed=seed,
            progress=p,
        )
    render([info], Format.table, console, title="reranker trained")
