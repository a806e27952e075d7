"""Embedder fine-tuning on financial question-evidence pairs, measured before and after (``finkg train embedder``).

Source: ../shared/seeds/002_9c24ef5b42924291.txt, section 2.1 and 4.1 ("Embedder Fine-tuning": relevant
query-document pairs, Multiple Negatives Ranking Loss, Henderson et al. 2017), section 5.2 (Table 3: NDCG@10
.40 -> .51 after fine-tuning) and appendix Table 11 (2 epochs, warm-up 0.1, batch 16, MNRLoss; the learning
rate reads "2x10^-5"), Table 10 (Recall@10, NDCG@10, MRR@10).

**Data.** TAT-QA's dev file split **by context** with the retrieval evaluation's own split
(:func:`finkg.eval.retrieval.tatqa_queries`, :func:`ingest.datasets.tatqa.split_contexts`): only the
training half's contexts give examples; the evaluation half is where the model is measured. One example per
(question, evidence chunk) of the training half (evidence: the question's gain-2 chunks, the table for table
questions and the paragraphs TAT-QA marks), with one mined hard negative: the best BM25 hit among the
training half's chunks that is not one of the question's context's chunks (:func:`finkg.eval.retrieval.bm25_ranker`).
The other examples of a batch are the in-batch negatives of MultipleNegativesRankingLoss (anchor i against
every positive and hard negative of the batch; batches hold no duplicate texts). The examples are written to
``<out>/examples.jsonl`` (``anchor, positive, negative, uid, context``) and read back through the checked
reader (:func:`finkg.train.common.read_jsonl`), so ``--examples FILE`` trains on any file of that shape.

**Output.** A normal sentence-transformers directory ``<out>/model`` with a model card (README.md: base
model, data, loss, epochs, metrics), the sha256 of its weights in ``(:TunedModel {name})`` (the graph's
registry of finkg-trained models), checkpoints in ``<out>/checkpoints`` (``--resume``).

**Measurement.** The same run evaluates the base and the tuned model with ``finkg eval retrieval``'s
evaluation (:func:`finkg.eval.retrieval.evaluate`) on the evaluation half: dense and hybrid NDCG@10,
Recall@10, MRR@10 with 95 % bootstrap intervals and paired differences (tuned - base, same questions); the
hybrid alpha is swept again for each model. The tuned model is *promoted* only when its hybrid NDCG@10 is
higher and the paired interval of the difference lies above 0: it then gets the marker
:data:`finkg.models.PROMOTED`, and a model so marked in ``<[models] dir>/finkg-embedder-minilm-tatqa/model``
becomes the installed-model default of ``[embedding] model_path`` (:func:`finkg.models.promoted_model`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from finkg.train.common import (
    RETRIEVAL_METRICS,
    LossLog,
    TrainingError,
    checkpoint_losses,
    difference_cells,
    mark_promoted,
    paired_difference,
    progress_callback,
    read_jsonl,
    require_examples,
    resume_checkpoint,
    run_trainer,
    steps_run,
    trainer_arguments,
    weights_sha256,
    write_jsonl,
    write_model_card,
)
from ingest.datasets.tatqa import corpus_rows, split_contexts
from kg.progress import StageProgress

EXAMPLE_FIELDS: dict[str, type | tuple[type, ...]] = {"anchor": str, "positive": str, "negative": str}
"""The fields each line of an embedder training file must have (strings)."""


@dataclass(frozen=True)
class EmbedderConfig:
    """Settings of an embedder fine-tuning run (defaults: seed 002 appendix Table 11).

    Attributes:
        epochs: passes over the examples (2). batch_size: (anchor, positive, negative) triples per step (16).
        learning_rate: AdamW peak rate (2e-5), linear decay after a 10 % warm-up.
        max_length: tokens per text (256; longer tables are truncated). max_questions: a seeded sample of the
            training half's questions (None: all). save_steps: steps between checkpoints. seed: split, sampling
            and training seed. max_steps: stop after this many steps (-1: the epochs decide; tests use a few).
        max_minutes: stop (with a checkpoint) after this much wall time; ``--resume`` continues.
    """

    epochs: float = 2.0
    batch_size: int = 16
    learning_rate: float = 2e-5
    max_length: int = 256
    max_questions: int | None = None
    save_steps: int = 20
    logging_steps: int = 5
    seed: int = 0
    max_steps: int = -1
    max_minutes: float | None = None


def tatqa_examples(path: Path, seed: int = 0, max_questions: int | None = None) -> list[dict[str, Any]]:
    """The (question, evidence, hard negative) examples of TAT-QA's **training half** (see the module doc).

    Returns:
        ``[{"anchor", "positive", "negative", "uid", "context"}]`` (``context``: the table uid), in file order.

    Raises:
        TrainingDataError: the training half has no question (via :func:`require_examples`).
    """
    from finkg.eval.retrieval import TRAIN_CORPUS, bm25_ranker, tatqa_queries

    train, _, queries, _ = tatqa_queries(path, seed)
    require_examples(len(queries), f"{path}: the training half of the context split")
    if max_questions is not None and len(queries) > max_questions:
        queries = sorted(random.Random(seed).sample(queries, max_questions), key=lambda q: q.uid)
    chunks = corpus_rows(train, TRAIN_CORPUS, f"tatqa:{Path(path).name}")["chunks"]
    texts = {r["id"]: r["text"] for r in chunks}
    context_of = {r["id"]: r["document_id"].rsplit(":", 1)[-1] for r in chunks}
    rank = bm25_ranker(chunks, 20)
    out = []
    for q in queries:
        negatives = [c for c in rank(q.text) if c not in q.gains]
        gold = sorted(c for c, g in q.gains.items() if g >= 2)
        for cid in gold:
            out.append(
                {
                    "anchor": q.text,
                    "positive": texts[cid],
                    "negative": texts[negatives[0]] if negatives else "",
                    "uid": q.uid,
                    "context": context_of[cid],
                }
            )
    return [e for e in out if e["negative"]]


def evaluation_contexts(path: Path, seed: int = 0) -> set[str]:
    """The table uids of the evaluation half (what no training example may come from)."""
    from ingest.datasets.tatqa import read_tatqa

    return {c.table_uid for c in split_contexts(read_tatqa(path), seed)[1]}


def check_training_half(examples: Sequence[dict[str, Any]], path: Path, seed: int, source: Path) -> None:
    """Refuse examples whose ``context`` (a table uid) lies in the evaluation half of ``path``'s split.

    Raises:
        TrainingError: naming ``source``, how many examples leak and one of their contexts.
    """
    leaked = sorted({str(e.get("context")) for e in examples} & evaluation_contexts(path, seed))
    if leaked:
        raise TrainingError(f"{source}: {len(leaked)} examples come from evaluation-half contexts (e.g. {leaked[0]})")


def train(
    examples: Sequence[dict[str, Any]],
    base_model: Path,
    out_dir: Path,
    config: EmbedderConfig,
    *,
    resume: bool = False,
    progress: StageProgress | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[Path, LossLog, float]:
    """Fine-tune the sentence-transformers model ``base_model`` with MultipleNegativesRankingLoss on
    ``examples`` (sentence-transformers' trainer, no duplicate texts in a batch) and save it to
    ``out_dir/model`` (without the model card; :func:`model_card` writes it).

    Returns:
        ``(model directory, the logged losses, seconds)``.

    Raises:
        TrainingError: a base model that does not load, no checkpoint to resume from, or out of memory.
        TrainingDataError: no examples.
    """
    import torch
    from datasets import Dataset
    from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    from sentence_transformers.sentence_transformer.training_args import (
        BatchSamplers,
        SentenceTransformerTrainingArguments,
    )

    require_examples(len(examples), "embedder fine-tuning")
    out_dir = Path(out_dir)
    checkpoint = resume_checkpoint(out_dir, resume)
    torch.manual_seed(config.seed)
    try:
        model = SentenceTransformer(str(base_model), device="cuda" if torch.cuda.is_available() else "cpu")
    except Exception as exc:  # OSError, ValueError ... from the library
        raise TrainingError(f"base model {base_model}: not a loadable sentence-transformers model ({exc})") from exc
    model.max_seq_length = config.max_length
    data = Dataset.from_dict({k: [e[k] for e in examples] for k in ("anchor", "positive", "negative")})
    args = trainer_arguments(
        out_dir,
        config,
        arguments_class=SentenceTransformerTrainingArguments,
        batch_sampler=BatchSamplers.NO_DUPLICATES,
    )
    losses = checkpoint_losses(checkpoint)
    trainer = SentenceTransformerTrainer(
        model=model,
        args=args,
        train_dataset=data,
        loss=MultipleNegativesRankingLoss(model),
        callbacks=[progress_callback(progress, log, losses, config.max_minutes)],
    )
    seconds = run_trainer(trainer, checkpoint, config.batch_size, config.max_length)
    saved = out_dir / "model"
    model.save(str(saved), create_model_card=False)
    return saved, losses, seconds


def compare(base: dict[str, Any], tuned: dict[str, Any], seed: int = 0) -> list[dict[str, Any]]:
    """Rows ``{"system", "metric", "base", "tuned", "mean", "ci_low", "ci_high", "n"}``: for dense and hybrid
    (each model's swept alpha) and each of NDCG@10, Recall@10, MRR@10, the paired bootstrap difference
    tuned - base over the same questions (two :func:`finkg.eval.retrieval.evaluate` results)."""
    if base["per_query"]["uids"] != tuned["per_query"]["uids"]:
        raise TrainingError("the base and tuned evaluations ran on different questions")
    rows = []
    for system in ("dense", "hybrid"):
        for metric in RETRIEVAL_METRICS:
            after, before, d = paired_difference(
                tuned["per_query"][metric][system], base["per_query"][metric][system], seed
            )
            rows.append({"system": system, "metric": metric, "base": before, "tuned": after, **d})
    return rows


def promoted(differences: Sequence[dict[str, Any]]) -> bool:
    """True when the tuned model measures better: its hybrid NDCG@10 paired difference has a 95 % interval
    above 0 (a higher mean alone is not enough)."""
    return any(r["system"] == "hybrid" and r["metric"] == "ndcg@10" and r["ci_low"] > 0 for r in differences)


def model_card(
    model_dir: Path,
    *,
    base_model: Path,
    source: Path,
    examples: int,
    config: EmbedderConfig,
    losses: LossLog,
    differences: Sequence[dict[str, Any]],
    sha256: str,
    is_promoted: bool,
) -> Path:
    """Write ``model_dir/README.md``: the model card (base model, data, loss, epochs, metrics). Returns its
    path."""
    first, last = losses.first_last()
    return write_model_card(
        model_dir,
        front_matter=[
            "library_name: sentence-transformers",
            "pipeline_tag: sentence-similarity",
            f"base_model: {base_model.name}",
            "tags: [sentence-transformers, finkg, tat-qa, multiple-negatives-ranking-loss]",
        ],
        title=f"finkg embedder: {base_model.name} fine-tuned on TAT-QA question-evidence pairs",
        facts=[
            f"**Base model:** `{base_model}`",
            f"**Data:** {examples} (question, evidence, BM25 hard negative) triples from the training half of "
            f"`{source.name}` (split by context, seed {config.seed}); no evaluation-half context is used.",
            "**Loss:** MultipleNegativesRankingLoss (in-batch negatives + one mined hard negative; seed 002 §2.1).",
            f"**Training:** {config.epochs:g} epochs (max steps {config.max_steps}), batch {config.batch_size}, "
            f"learning rate {config.learning_rate:g}, warm-up 0.1, max length {config.max_length} tokens; "
            f"loss {first} -> {last}.",
            f"**Weights sha256:** `{sha256}`",
            f"**Default:** {'yes, it measured better' if is_promoted else 'no: it did not measure better than the base'}.",
        ],
        table_title="Metrics (TAT-QA evaluation half; tuned - base, paired 95 % bootstrap interval)",
        columns=["system", "metric", "base", "tuned", "difference", "95 % interval"],
        rows=[
            [r["system"], r["metric"], f"{r['base']:.4f}", f"{r['tuned']:.4f}", *difference_cells(r)]
            for r in differences
        ],
    )


def run(
    path: Path,
    base_model: Path,
    out_dir: Path,
    config: EmbedderConfig,
    *,
    graph: Any,
    make_embedder: Callable[[Path], Any],
    examples_file: Path | None = None,
    resume: bool = False,
    evaluate: bool = True,
    results_dir: Path | None = None,
    progress: StageProgress | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """``finkg train embedder`` end to end: examples (built, or read from ``examples_file``), training,
    the before/after measurement (unless ``evaluate`` is False), the model card, the registry node and the
    results file ``train-embedder.json`` (in ``results_dir``, default ``bench/results``).

    Args:
        make_embedder: model directory -> a :class:`retrieval.embeddings.Embedder` (the configured backend).

    Returns:
        The summary: ``{"model_dir", "sha256", "examples", "steps", "loss_first", "loss_last", "seconds",
        "promoted", "differences", ...}``.

    Raises:
        TrainingDataError, TrainingError: see :func:`train`; EvaluationError from the evaluation.
    """
    from finkg.eval import retrieval as retrieval_eval
    from finkg.eval.results import write_result
    from finkg.train.common import register_model

    out_dir = Path(out_dir)
    if examples_file is None:
        examples_file = write_jsonl(out_dir / "examples.jsonl", tatqa_examples(path, config.seed, config.max_questions))
    examples = read_jsonl(examples_file, EXAMPLE_FIELDS)
    check_training_half(examples, path, config.seed, examples_file)
    model_dir, losses, seconds = train(examples, base_model, out_dir, config, resume=resume, progress=progress, log=log)
    sha = weights_sha256(model_dir)
    differences: list[dict[str, Any]] = []
    measured: dict[str, dict[str, Any]] = {}
    if evaluate:
        for label, directory in (("base", base_model), ("tuned", model_dir)):
            measured[label] = retrieval_eval.evaluate(
                graph, path, make_embedder(directory), seed=config.seed, store=False, stage=progress
            )
        differences = compare(measured["base"], measured["tuned"], config.seed)
    is_promoted = promoted(differences)
    model_card(
        model_dir,
        base_model=Path(base_model),
        source=Path(path),
        examples=len(examples),
        config=config,
        losses=losses,
        differences=differences,
        sha256=sha,
        is_promoted=is_promoted,
    )
    mark_promoted(model_dir, is_promoted, differences)  # the default of [embedding] model_path follows it
    first, last = losses.first_last()
    name = f"embedder:{Path(out_dir).name}"
    summary = {
        "name": name,
        "kind": "embedder",
        "model_dir": str(model_dir),
        "base_model": str(base_model),
        "sha256": sha,
        "examples": len(examples),
        "examples_file": str(examples_file),
        "loss": "MultipleNegativesRankingLoss",
        "epochs": config.epochs,
        "steps": steps_run(out_dir, losses),
        "loss_first": first,
        "loss_last": last,
        "seconds": round(seconds, 1),
        "promoted": is_promoted,
        "alpha_base": measured["base"]["alpha"] if measured else None,
        "alpha_tuned": measured["tuned"]["alpha"] if measured else None,
        "trained_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    register_model(graph, name, {**summary, "metrics": {"differences": differences}})
    if evaluate:
        rows = [
            {"model": label, **r}
            for label, result in measured.items()
            for r in result["rows"]
            if r["system"] in ("bm25", "dense", "hybrid")
        ]
        write_result(
            "train-embedder",
            {
                "source": str(path),
                "base_model": str(base_model),
                "split": {"by": "context", "seed": config.seed},
                **{k: getattr(config, k) for k in ("epochs", "batch_size", "learning_rate", "max_length", "max_steps")},
                "examples": len(examples),
            },
            {
                k: summary[k]
                for k in (
                    "sha256",
                    "loss_first",
                    "loss_last",
                    "seconds",
                    "promoted",
                    "alpha_base",
                    "alpha_tuned",
                    "steps",
                )
            },
            tables={"systems": rows, "differences": differences, "loss": losses.rows},
            directory=results_dir,
        )
    return {**summary, "differences": differences}
