"""Cross-encoder (reranker) training with hard negatives mined by the embedder, measured before and after
(``finkg train reranker``).

Source: ../shared/seeds/002_9c24ef5b42924291.txt, section 3.3 ("Reranking": a cross-encoder scores each
(query, document) pair of the top-K) and 4.3 (the top-20 retrieval results reranked, evaluated by NDCG@10);
the paper's rerankers are off the shelf (bge-reranker-v2-m3, voyage-rerank-2), which cannot be had here
(../shared/MODELS.md), so finkg trains its own the way it trains its embedder (:mod:`finkg.train.embedder`,
seed 002 §2.1): real question-evidence pairs with mined hard negatives, sentence-transformers' trainer.

**Data.** TAT-QA's dev file split **by context** with the retrieval evaluation's own split
(:func:`finkg.eval.retrieval.tatqa_queries`): only training-half contexts give pairs, and every pair records
its question's context (``context``: the table uid) so that a file holding an evaluation-half context is
refused (:func:`finkg.train.embedder.check_training_half`). Per question
(:func:`retrieval.text.rerank.training_pairs`): each evidence chunk (gain 2) with label 1.0, one other chunk
of its context (gain 1) with 0.5, and ``negatives`` chunks of other training-half contexts with 0.0, taken
from the top hits of the **embedder** (``mine_with="embedder"``, the configured ``[embedding]`` model: the
tuned one once ``finkg train embedder`` promoted it; cosine over the training half's chunks) or of BM25
(``mine_with="bm25"``, the earlier recipe). Pairs are written to ``<out>/pairs.jsonl``
(``query, passage, label, uid, context``) and read back through the checked reader, so ``--examples FILE``
trains on any file of that shape.

**Training.** sentence-transformers' ``CrossEncoderTrainer`` with ``BinaryCrossEntropyLoss`` (one logit, soft
targets), starting from ``base_model`` (a sentence-transformers encoder directory: its transformer body with a
fresh one-logit head), AdamW with a 10 % linear warm-up then linear decay, checkpoints every ``save_steps``
under ``<out>/checkpoints`` (``--resume``), a progress bar with loss and ETA. Saved as a ``CrossEncoder``
directory ``<out>/model`` with a model card and the sha256 of its weights in ``(:TunedModel {name})``.

**Measurement** (:func:`finkg.eval.retrieval.evaluate` on the evaluation half, the configured embedder's
hybrid with its swept alpha): NDCG@10, Recall@10 and MRR@10 of the hybrid top-20 before and after reranking,
and of the same top-20 in a seeded random order (the control: what reranking without information gives),
with paired 95 % bootstrap intervals on the same questions. The model is *promoted* (marked
:data:`finkg.models.PROMOTED`, and then the installed-model default of ``[rerank] model_path`` when it sits in
``<[models] dir>/finkg-reranker-minilm-tatqa/model``) only when reranking's NDCG@10 difference over the hybrid
has an interval above 0; otherwise no reranking stays the default.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from finkg.train import common
from finkg.train.common import LossLog, TrainingError
from finkg.train.embedder import check_training_half
from ingest.datasets.tatqa import corpus_rows
from kg.progress import StageProgress
from retrieval.text.rerank import training_pairs

PAIR_FIELDS: dict[str, type | tuple[type, ...]] = {"query": str, "passage": str, "label": (int, float)}
"""The fields each line of a reranker training file must have."""

MINERS = ("embedder", "bm25")
"""Where the hard negatives come from: the embedder's top hits (cosine) or BM25's."""


@dataclass(frozen=True)
class RerankerConfig:
    """Settings of a cross-encoder training run.

    Attributes:
        epochs: passes over the pairs (2, as the embedder). batch_size: pairs per step (16).
        learning_rate: AdamW peak rate (5e-5: the head starts from scratch), linear decay after a 10 % warm-up.
        max_length: tokens per (question, passage) pair (256: a TAT-QA table is ~120 tokens at the median,
            ~240 at the 90th percentile, in MiniLM's tokenizer). negatives: hard negatives per question (4).
        mine_with: ``embedder`` or ``bm25`` (:data:`MINERS`). max_questions: a seeded sample of the training
            half's questions (None: all). rerank_questions: evaluation-half questions reranked in the
            measurement (None: all). save_steps, logging_steps, seed, max_steps, max_minutes: as
            :class:`finkg.train.embedder.EmbedderConfig`.

    Raises:
        TrainingError: an unknown ``mine_with`` or a negative ``negatives``.
    """

    epochs: float = 2.0
    batch_size: int = 16
    learning_rate: float = 5e-5
    max_length: int = 256
    negatives: int = 4
    mine_with: str = "embedder"
    max_questions: int | None = None
    rerank_questions: int | None = None
    save_steps: int = 50
    logging_steps: int = 10
    seed: int = 0
    max_steps: int = -1
    max_minutes: float | None = None

    def __post_init__(self) -> None:
        if self.mine_with not in MINERS:
            raise TrainingError(f"mine_with {self.mine_with!r}: expected one of {', '.join(MINERS)}")
        if self.negatives < 0:
            raise TrainingError(f"negatives {self.negatives}: expected 0 or more")


def tatqa_pairs(
    path: Path,
    rank_with: Callable[[Sequence[Mapping[str, Any]], int], Callable[[str], list[str]]],
    config: RerankerConfig,
) -> list[dict[str, Any]]:
    """The labelled (question, passage) pairs of TAT-QA's **training half** (see the module doc).

    Args:
        rank_with: ``(chunks, depth) -> rank(question) -> chunk ids, best first`` over the training half's
            chunks (:func:`finkg.eval.retrieval.dense_ranker` or :func:`~finkg.eval.retrieval.bm25_ranker`).

    Returns:
        ``[{"query", "passage", "label", "uid", "context"}]`` in question order (``context``: the question's
        table uid).

    Raises:
        TrainingDataError: the training half has no question.
    """
    from finkg.eval.retrieval import TRAIN_CORPUS, tatqa_queries

    train, _, queries, _ = tatqa_queries(path, config.seed)
    common.require_examples(len(queries), f"{path}: the training half of the context split")
    if config.max_questions is not None and len(queries) > config.max_questions:
        queries = sorted(random.Random(config.seed).sample(queries, config.max_questions), key=lambda q: q.uid)
    chunks = corpus_rows(train, TRAIN_CORPUS, f"tatqa:{Path(path).name}")["chunks"]
    texts = {r["id"]: r["text"] for r in chunks}
    context_of = {r["id"]: r["document_id"].rsplit(":", 1)[-1] for r in chunks}
    rank = rank_with(chunks, 10 + 2 * config.negatives)
    out = []
    for q in queries:
        context = context_of[next(iter(q.gains))]
        for p in training_pairs([(q.text, q.gains)], texts, rank, config.negatives, seed=hash_seed(config.seed, q.uid)):
            out.append({"query": p.query, "passage": p.passage, "label": p.label, "uid": q.uid, "context": context})
    return out


def hash_seed(seed: int, uid: str) -> int:
    """A per-question random seed that does not depend on Python's salted ``hash``."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{uid}".encode()).digest()[:8], "big")


def train(
    pairs: Sequence[Mapping[str, Any]],
    base_model: Path,
    out_dir: Path,
    config: RerankerConfig,
    *,
    resume: bool = False,
    progress: StageProgress | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[Path, LossLog, float]:
    """Train a one-logit ``CrossEncoder`` from the encoder ``base_model`` with ``BinaryCrossEntropyLoss`` on
    ``pairs`` (sentence-transformers' ``CrossEncoderTrainer``) and save it to ``out_dir/model``.

    Returns:
        ``(model directory, the logged losses, seconds)``.

    Raises:
        TrainingError: a base model that does not load, no checkpoint to resume from, or out of memory.
        TrainingDataError: no pairs.
    """
    import torch
    from datasets import Dataset
    from sentence_transformers.cross_encoder import CrossEncoder, CrossEncoderTrainer, CrossEncoderTrainingArguments
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    common.require_examples(len(pairs), "reranker training")
    out_dir = Path(out_dir)
    checkpoint = common.resume_checkpoint(out_dir, resume)
    torch.manual_seed(config.seed)
    try:
        model = CrossEncoder(
            str(base_model),
            num_labels=1,
            max_length=config.max_length,
            device="cuda" if torch.cuda.is_available() else "cpu",
            local_files_only=True,
        )
    except Exception as exc:  # OSError, ValueError ... from the library
        raise TrainingError(f"base model {base_model}: cannot load it as a cross-encoder ({exc})") from exc
    data = Dataset.from_dict(
        {
            "query": [p["query"] for p in pairs],
            "passage": [p["passage"] for p in pairs],
            "label": [float(p["label"]) for p in pairs],
        }
    )
    losses = common.checkpoint_losses(checkpoint)
    trainer = CrossEncoderTrainer(
        model=model,
        args=common.trainer_arguments(out_dir, config, arguments_class=CrossEncoderTrainingArguments),
        train_dataset=data,
        loss=BinaryCrossEntropyLoss(model),
        callbacks=[common.progress_callback(progress, log, losses, config.max_minutes)],
    )
    seconds = common.run_trainer(trainer, checkpoint, config.batch_size, config.max_length)
    saved = out_dir / "model"
    model.save(str(saved), create_model_card=False)
    return saved, losses, seconds


SYSTEMS = ("hybrid", "hybrid (rerank sample)", "hybrid+rerank", "hybrid+shuffled")
"""The rows of the measurement a run keeps: the hybrid on every question, then the reranked questions before
reranking, after it, and in a seeded random order (the control)."""

COMPARED = (("hybrid+rerank", "hybrid (rerank sample)"), ("hybrid+rerank", "hybrid+shuffled"))
"""The paired differences a run reports: reranked against the hybrid order, and against the control."""


def compare(result: Mapping[str, Any], seed: int = 0) -> list[dict[str, Any]]:
    """Rows ``{"system", "baseline", "metric", "system_value", "baseline_value", "mean", "ci_low", "ci_high",
    "n"}``: for each pair of :data:`COMPARED` and each of NDCG@10, Recall@10, MRR@10, the paired bootstrap
    difference over the reranked questions of one :func:`finkg.eval.retrieval.evaluate` result."""
    rows = []
    for system, baseline in COMPARED:
        for metric in common.RETRIEVAL_METRICS:
            value, against, d = common.paired_difference(
                result["per_query"][metric][system], result["per_query"][metric][baseline], seed
            )
            row = {"system": system, "baseline": baseline, "metric": metric}
            rows.append({**row, "system_value": value, "baseline_value": against, **d})
    return rows


def promoted(differences: Sequence[Mapping[str, Any]]) -> bool:
    """True when reranking measures better than the hybrid order: its NDCG@10 paired difference over
    ``hybrid (rerank sample)`` has a 95 % interval above 0."""
    return any(
        r["baseline"] == "hybrid (rerank sample)" and r["metric"] == "ndcg@10" and r["ci_low"] > 0 for r in differences
    )


def model_card(
    model_dir: Path,
    *,
    base_model: Path,
    source: Path,
    pairs: int,
    config: RerankerConfig,
    losses: LossLog,
    differences: Sequence[Mapping[str, Any]],
    sha256: str,
    is_promoted: bool,
) -> Path:
    """Write ``model_dir/README.md``: the model card (base model, data, loss, epochs, metrics). Returns its
    path."""
    first, last = losses.first_last()
    return common.write_model_card(
        model_dir,
        front_matter=[
            "library_name: sentence-transformers",
            "pipeline_tag: text-ranking",
            f"base_model: {base_model.name}",
            "tags: [sentence-transformers, cross-encoder, reranker, finkg, tat-qa, binary-cross-entropy]",
        ],
        title=f"finkg reranker: a cross-encoder from {base_model.name} trained on TAT-QA question-evidence pairs",
        facts=[
            f"**Base model:** `{base_model}` (its encoder body; a fresh one-logit head)",
            f"**Data:** {pairs} labelled (question, passage) pairs from the training half of `{source.name}` (split "
            f"by context, seed {config.seed}): evidence 1.0, one other chunk of the context 0.5, {config.negatives} "
            f"hard negatives a question mined by {config.mine_with} 0.0; no evaluation-half context is used.",
            "**Loss:** BinaryCrossEntropyLoss (sentence-transformers' CrossEncoderTrainer).",
            f"**Training:** {config.epochs:g} epochs (max steps {config.max_steps}), batch {config.batch_size}, "
            f"learning rate {config.learning_rate:g}, warm-up 0.1, max length {config.max_length} tokens; "
            f"loss {first} -> {last}.",
            f"**Weights sha256:** `{sha256}`",
            "**Default:** "
            + (
                "yes, reranking measured better"
                if is_promoted
                else "no: reranking did not measure better than the hybrid order"
            )
            + ".",
        ],
        table_title="Metrics (TAT-QA evaluation half, hybrid top-20; paired 95 % bootstrap interval)",
        columns=["reranked", "against", "metric", "against value", "reranked value", "difference", "95 % interval"],
        rows=[
            [
                r["system"],
                r["baseline"],
                r["metric"],
                f"{r['baseline_value']:.4f}",
                f"{r['system_value']:.4f}",
                *common.difference_cells(r),
            ]
            for r in differences
        ],
    )


def run(
    path: Path,
    base_model: Path,
    out_dir: Path,
    config: RerankerConfig,
    *,
    graph: Any,
    make_embedder: Callable[[], Any],
    examples_file: Path | None = None,
    resume: bool = False,
    evaluate: bool = True,
    results_dir: Path | None = None,
    corpus: str | None = None,
    progress: StageProgress | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """``finkg train reranker`` end to end: pairs (mined, or read from ``examples_file``), training, the
    before/after measurement (unless ``evaluate`` is False), the model card, the promotion marker, the registry
    node and the results file ``train-reranker.json`` (in ``results_dir``, default ``bench/results``).

    Args:
        make_embedder: returns the configured :class:`retrieval.embeddings.Embedder` (called only when needed,
            after the examples file is checked): it mines the hard negatives when ``config.mine_with`` is
            ``embedder`` and is the dense half of the measured hybrid.
        corpus: the evaluation corpus's name in the graph (default :data:`finkg.eval.retrieval.CORPUS`).

    Returns:
        The summary: ``{"name", "model_dir", "sha256", "pairs", "steps", "loss_first", "loss_last", "seconds",
        "promoted", "differences", ...}``.

    Raises:
        TrainingDataError, TrainingError: see :func:`train`; EvaluationError from the measurement.
    """
    from finkg.eval import retrieval as retrieval_eval
    from finkg.eval.results import write_result
    from retrieval.text.rerank import CrossEncoderReranker

    out_dir = Path(out_dir)
    if examples_file is None:
        if config.mine_with == "embedder":

            def rank_with(chunks: Sequence[Mapping[str, Any]], depth: int) -> Callable[[str], list[str]]:
                return retrieval_eval.dense_ranker(chunks, make_embedder(), depth, progress)

        else:
            rank_with = retrieval_eval.bm25_ranker
        examples_file = common.write_jsonl(out_dir / "pairs.jsonl", tatqa_pairs(path, rank_with, config))
    pairs = common.read_jsonl(examples_file, PAIR_FIELDS)
    check_training_half(pairs, path, config.seed, examples_file)
    model_dir, losses, seconds = train(pairs, base_model, out_dir, config, resume=resume, progress=progress, log=log)
    sha = common.weights_sha256(model_dir)
    differences: list[dict[str, Any]] = []
    measured: dict[str, Any] = {}
    if evaluate:
        reranker = CrossEncoderReranker(model_dir, max_length=config.max_length)
        measured = retrieval_eval.evaluate(
            graph,
            path,
            make_embedder(),
            reranker=reranker,
            rerank_queries=config.rerank_questions,
            seed=config.seed,
            store=False,
            corpus=corpus or retrieval_eval.CORPUS,
            stage=progress,
        )
        differences = compare(measured, config.seed)
    is_promoted = promoted(differences)
    model_card(
        model_dir,
        base_model=Path(base_model),
        source=Path(path),
        pairs=len(pairs),
        config=config,
        losses=losses,
        differences=differences,
        sha256=sha,
        is_promoted=is_promoted,
    )
    common.mark_promoted(model_dir, is_promoted, differences)  # the default of [rerank] model_path follows it
    first, last = losses.first_last()
    summary = {
        "name": f"reranker:{out_dir.name}",
        "kind": "reranker",
        "model_dir": str(model_dir),
        "base_model": str(base_model),
        "sha256": sha,
        "pairs": len(pairs),
        "examples_file": str(examples_file),
        "mine_with": config.mine_with,
        "loss": "BinaryCrossEntropyLoss",
        "epochs": config.epochs,
        "steps": common.steps_run(out_dir, losses),
        "loss_first": first,
        "loss_last": last,
        "seconds": round(seconds, 1),
        "promoted": is_promoted,
        "embedding_model": measured.get("embedding_model"),
        "alpha": measured.get("alpha"),
        "trained_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if evaluate:
        write_result(
            "train-reranker",
            {
                "source": str(path),
                "base_model": str(base_model),
                "embedding_model": summary["embedding_model"],
                "split": {"by": "context", "seed": config.seed},
                **{
                    k: getattr(config, k)
                    for k in (
                        "epochs",
                        "batch_size",
                        "learning_rate",
                        "max_length",
                        "negatives",
                        "mine_with",
                        "max_questions",
                        "rerank_questions",
                        "max_steps",
                    )
                },
                "pairs": len(pairs),
            },
            {k: summary[k] for k in ("sha256", "loss_first", "loss_last", "seconds", "promoted", "alpha", "steps")},
            tables={
                "systems": [r for r in measured["rows"] if r["system"] in SYSTEMS],
                "differences": differences,
                "loss": losses.rows,
            },
            directory=results_dir,
        )
    common.register_model(graph, summary["name"], {**summary, "metrics": {"differences": differences}})
    return {**summary, "differences": differences}
