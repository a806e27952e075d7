"""``finkg train``: fine-tuning as the seeds do it (embedder: seed 002 §2.1; its cross-encoder reranker: seed 002
§3.3; reader LoRA SFT: seed 004 §3.4)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from finkg import api
from finkg.cli._common import console, err, progress
from finkg.output import Format, render

app = typer.Typer(
    help="Fine-tune finkg's embedder, reranker and reader on TAT-QA's training half.", no_args_is_help=True
)

TatqaFile = Annotated[
    Path,
    typer.Argument(
        help="TAT-QA JSON file (tatqa_dataset_dev.json); only its training half (split by context) is trained on.",
        exists=True,
        dir_okay=False,
    ),
]
Resume = Annotated[bool, typer.Option("--resume", help="Continue from the newest checkpoint in the run folder.")]
MaxSteps = Annotated[int, typer.Option(help="Stop after this many optimizer steps (-1: the epochs decide).")]
MaxMinutes = Annotated[
    float, typer.Option(help="Stop with a checkpoint after this many minutes (0: no limit); --resume continues.")
]


def _log(line: str) -> None:
    err.print(line, markup=False, highlight=False)


def _schedule(
    epochs: float,
    batch_size: int,
    learning_rate: float,
    max_length: int,
    max_questions: int,
    save_steps: int,
    max_steps: int,
    max_minutes: float,
    seed: int,
) -> dict[str, Any]:
    """The options both trainers share, as config fields (0 means "none" for questions and minutes)."""
    return {
        "epochs": epochs,
        "batch_size": batch_size,
        "learning_rate": learning_rate,
        "max_length": max_length,
        "max_questions": max_questions or None,
        "save_steps": save_steps,
        "max_steps": max_steps,
        "max_minutes": max_minutes or None,
        "seed": seed,
    }


def _run(out_dir: Path | None, base_model: Path | None, examples: Path | None, resume: bool, p: Any) -> dict[str, Any]:
    """The run options both ``api.train_*`` take."""
    return {
        "out_dir": out_dir,
        "base_model": base_model,
        "examples_file": examples,
        "resume": resume,
        "progress": p,
        "log": _log,
    }


@app.command("embedder")
def train_embedder(
    path: TatqaFile,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out-dir", help="Run folder (default <[models] dir>/finkg-embedder-minilm-tatqa)."),
    ] = None,
    base_model: Annotated[
        Path | None,
        typer.Option("--base-model", help="sentence-transformers directory (default [embedding] model_path)."),
    ] = None,
    examples: Annotated[
        Path | None,
        typer.Option("--examples", help="Train on this JSON-lines file (anchor, positive, negative) instead."),
    ] = None,
    epochs: Annotated[float, typer.Option(help="Passes over the examples (seed 002: 2).")] = 2.0,
    batch_size: Annotated[int, typer.Option(help="Triples per step (seed 002: 16).")] = 16,
    learning_rate: Annotated[float, typer.Option(help="Peak learning rate (seed 002: 2e-5).")] = 2e-5,
    max_length: Annotated[int, typer.Option(help="Tokens per text.")] = 256,
    max_questions: Annotated[int, typer.Option(help="A seeded sample of training questions (0: all).")] = 0,
    save_steps: Annotated[int, typer.Option(help="Steps between checkpoints.")] = 20,
    max_steps: MaxSteps = -1,
    max_minutes: MaxMinutes = 0.0,
    seed: Annotated[int, typer.Option(help="Split, sampling and training seed.")] = 0,
    resume: Resume = False,
    no_eval: Annotated[bool, typer.Option("--no-eval", help="Skip the before/after retrieval measurement.")] = False,
) -> None:
    """Fine-tune the embedder (MultipleNegativesRankingLoss, BM25 hard negatives) and measure it before/after."""
    config = api.retrieval_trainer_config(
        "embedder",
        **_schedule(
            epochs, batch_size, learning_rate, max_length, max_questions, save_steps, max_steps, max_minutes, seed
        ),
    )
    with progress() as p:
        info = api.train_retrieval_model(
            "embedder", path, config, evaluate=not no_eval, **_run(out_dir, base_model, examples, resume, p)
        )
    differences = info.pop("differences")
    render([info], Format.table, console, title="embedder trained")
    if differences:
        render(differences, Format.table, console, title="tuned - base (evaluation half, paired 95% intervals)")


@app.command("reranker")
def train_reranker(
    path: TatqaFile,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out-dir", help="Run folder (default <[models] dir>/finkg-reranker-minilm-tatqa)."),
    ] = None,
    base_model: Annotated[
        Path | None,
        typer.Option("--base-model", help="Encoder directory to start from (default [embedding] model_path)."),
    ] = None,
    examples: Annotated[
        Path | None,
        typer.Option("--examples", help="Train on this JSON-lines file (query, passage, label) instead."),
    ] = None,
    mine_with: Annotated[
        str, typer.Option(help="Hard negatives from the configured embedder's top hits, or BM25's (embedder|bm25).")
    ] = "embedder",
    negatives: Annotated[int, typer.Option(help="Hard negatives per question.")] = 4,
    epochs: Annotated[float, typer.Option(help="Passes over the pairs.")] = 2.0,
    batch_size: Annotated[int, typer.Option(help="Pairs per step.")] = 16,
    learning_rate: Annotated[float, typer.Option(help="Peak learning rate.")] = 5e-5,
    max_length: Annotated[int, typer.Option(help="Tokens per (question, passage) pair.")] = 256,
    max_questions: Annotated[int, typer.Option(help="A seeded sample of training questions (0: all).")] = 0,
    rerank_questions: Annotated[
        int, typer.Option(help="Evaluation-half questions reranked in the measurement (0: all).")
    ] = 0,
    save_steps: Annotated[int, typer.Option(help="Steps between checkpoints.")] = 50,
    max_steps: MaxSteps = -1,
    max_minutes: MaxMinutes = 0.0,
    seed: Annotated[int, typer.Option(help="Split, sampling and training seed.")] = 0,
    resume: Resume = False,
    no_eval: Annotated[bool, typer.Option("--no-eval", help="Skip the before/after reranking measurement.")] = False,
) -> None:
    """Train the cross-encoder reranker (BinaryCrossEntropyLoss, embedder-mined hard negatives) and measure
    reranking against the hybrid order and a random order of the same top-20."""
    config = api.retrieval_trainer_config(
        "reranker",
        mine_with=mine_with,
        negatives=negatives,
        rerank_questions=rerank_questions or None,
        **_schedule(
            epochs, batch_size, learning_rate, max_length, max_questions, save_steps, max_steps, max_minutes, seed
        ),
    )
    with progress() as p:
        info = api.train_retrieval_model(
            "reranker", path, config, evaluate=not no_eval, **_run(out_dir, base_model, examples, resume, p)
        )
    differences = info.pop("differences")
    render([info], Format.table, console, title="reranker trained")
    if differences:
        render(differences, Format.table, console, title="reranked - baseline (evaluation half, paired 95% intervals)")


@app.command("reader")
def train_reader(
    path: TatqaFile,
    out_dir: Annotated[
        Path | None, typer.Option("--out-dir", help="Run folder (default `<[models] dir>/finkg-reader-<base>`).")
    ] = None,
    base_model: Annotated[
        Path | None,
        typer.Option("--base-model", help="HF directory or GGUF file (rebuilt as HF once); default [llm] model_path."),
    ] = None,
    examples: Annotated[
        Path | None, typer.Option("--examples", help="Train on this JSON-lines file of {I, F, T, Y} instead.")
    ] = None,
    r: Annotated[int, typer.Option("--r", help="LoRA rank (seed 004: 8).")] = 8,
    alpha: Annotated[int, typer.Option(help="LoRA alpha.")] = 16,
    target_modules: Annotated[list[str], typer.Option("--target-module", help="Modules LoRA adapts.")] = [
        "q_proj",
        "v_proj",
    ],
    learning_rate: Annotated[float, typer.Option(help="Peak learning rate, cosine schedule (seed 004: 1e-3).")] = 1e-3,
    epochs: Annotated[float, typer.Option(help="Passes over the examples (seed 004: 3).")] = 3.0,
    batch_size: Annotated[int, typer.Option(help="Examples per step (seed 004: 1).")] = 1,
    max_length: Annotated[int, typer.Option(help="Tokens of prompt + target.")] = 768,
    max_fact_tokens: Annotated[int, typer.Option(help="Tokens of the facts F.")] = 512,
    max_questions: Annotated[int, typer.Option(help="A seeded sample of training questions (0: all).")] = 0,
    save_steps: Annotated[int, typer.Option(help="Steps between checkpoints.")] = 50,
    logging_steps: Annotated[int, typer.Option(help="Steps between loss lines.")] = 10,
    max_steps: MaxSteps = -1,
    max_minutes: MaxMinutes = 0.0,
    seed: Annotated[int, typer.Option(help="Split, sampling and training seed.")] = 0,
    resume: Resume = False,
    gguf: Annotated[
        bool, typer.Option("--gguf", help="Also convert the adapter to a GGUF LoRA for llama.cpp.")
    ] = False,
    llama_cpp_dir: Annotated[
        Path | None, typer.Option("--llama-cpp-dir", help="llama.cpp source tree with convert_lora_to_gguf.py.")
    ] = None,
) -> None:
    """LoRA SFT of the reader on {I, F, T, Y} examples (seed 004), with checkpoints and --resume."""
    config = api.reader_config(
        r=r,
        alpha=alpha,
        target_modules=target_modules,
        max_fact_tokens=max_fact_tokens,
        logging_steps=logging_steps,
        **_schedule(
            epochs, batch_size, learning_rate, max_length, max_questions, save_steps, max_steps, max_minutes, seed
        ),
    )
    with progress() as p:
        info = api.train_reader(
            path, config, gguf=gguf, llama_cpp_dir=llama_cpp_dir, **_run(out_dir, base_model, examples, resume, p)
        )
    render([info], Format.table, console, title="reader adapter trained")
