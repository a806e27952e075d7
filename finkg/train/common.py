"""What both trainers share: training files (JSON lines) checked before training, the out-of-memory advice,
resumable checkpoints, the progress of a Hugging Face ``Trainer`` and the model registry in the graph.

A training run writes its checkpoints under ``<out_dir>/checkpoints/checkpoint-<step>`` every
``save_steps`` optimizer steps (the model's trainable weights, the optimizer, the scheduler and the random
states: Hugging Face ``Trainer``'s own checkpoint format); ``resume=True`` continues from the newest one, so a
run killed at any step loses at most ``save_steps - 1`` steps.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generation.llm.base import file_sha256
from kg.errors import ModelError
from kg.progress import Advance, StageProgress, stage


class TrainingError(ModelError):
    """A training run cannot start or went out of memory; the message names the file, line or setting and
    what to do."""


class TrainingDataError(TrainingError):
    """A training file has a malformed line (the message names the file, the line and the field) or a split
    has no examples."""


def read_jsonl(path: Path, required: Mapping[str, type | tuple[type, ...]]) -> list[dict[str, Any]]:
    """Every line of a JSON-lines training file as a dict, checked before any training starts.

    Args:
        path: the file (UTF-8, one JSON object per line; blank lines are skipped).
        required: field name -> the type(s) its value must have.

    Raises:
        TrainingDataError: the file is missing, a line is not a JSON object, or lacks a field or has one of
            the wrong type (``<file>:<line>: ...``); or the file holds no example.
    """
    path = Path(path)
    if not path.is_file():
        raise TrainingDataError(f"{path}: no such training file")
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise TrainingDataError(
                    f"{path}:{n}: not JSON ({exc.msg} at column {exc.colno}); fix or remove the line"
                ) from None
            if not isinstance(row, dict):
                raise TrainingDataError(f"{path}:{n}: expected a JSON object, got {type(row).__name__}")
            for key, kind in required.items():
                if key not in row:
                    raise TrainingDataError(f"{path}:{n}: field {key!r} is missing")
                if not isinstance(row[key], kind):
                    raise TrainingDataError(f"{path}:{n}: field {key!r} is {type(row[key]).__name__}, expected {kind}")
            rows.append(row)
    if not rows:
        raise TrainingDataError(f"{path}: no training examples (an empty file or an empty split)")
    return rows


def write_jsonl(path: Path, rows: Sequence[Mapping[str, Any]]) -> Path:
    """Write ``rows`` as JSON lines (UTF-8), creating the folder; returns ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def require_examples(n: int, what: str) -> None:
    """Raise TrainingDataError naming ``what`` when there are no examples (an empty split)."""
    if n <= 0:
        raise TrainingDataError(
            f"{what}: no training examples (an empty split: check the data file, --max-questions and the seed)"
        )


def is_out_of_memory(exc: BaseException) -> bool:
    """True for torch's CUDA/MPS out-of-memory errors, MemoryError and allocator RuntimeErrors."""
    if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and ("out of memory" in text or "can't allocate memory" in text)


@contextmanager
def out_of_memory_advice(batch_size: int, max_length: int) -> Iterator[None]:
    """Turn running out of memory inside the block into a TrainingError with the advice to lower the batch
    size or the sequence length (the checkpoints already written are kept: ``--resume`` continues)."""
    try:
        yield
    except BaseException as exc:
        if is_out_of_memory(exc):
            raise TrainingError(
                f"out of memory while training (batch size {batch_size}, max length {max_length} tokens): "
                f"lower --batch-size or --max-length and rerun with --resume ({type(exc).__name__}: {exc})"
            ) from exc
        raise


def last_checkpoint(folder: Path) -> Path | None:
    """The newest ``checkpoint-<step>`` folder under ``folder`` holding a ``trainer_state.json``, or None."""
    found = [p for p in Path(folder).glob("checkpoint-*") if (p / "trainer_state.json").is_file()]
    found = [p for p in found if p.name.split("-")[-1].isdigit()]
    return max(found, key=lambda p: int(p.name.split("-")[-1])) if found else None


def resume_checkpoint(out_dir: Path, resume: bool) -> Path | None:
    """The checkpoint a run continues from: the newest under ``out_dir/checkpoints`` when ``resume``, else None.

    Raises:
        TrainingError: ``resume`` and no checkpoint there.
    """
    if not resume:
        return None
    checkpoint = last_checkpoint(Path(out_dir) / "checkpoints")
    if checkpoint is None:
        raise TrainingError(f"--resume: no checkpoint under {Path(out_dir) / 'checkpoints'} (start without --resume)")
    return checkpoint


def steps_run(out_dir: Path, losses: LossLog) -> int:
    """The optimizer steps a run has done: the later of its last logged step and its newest checkpoint's (the
    ``Trainer`` checkpoints its final step, while the loss is logged only every ``logging_steps``)."""
    saved = last_checkpoint(Path(out_dir) / "checkpoints")
    logged = int(losses.rows[-1]["step"]) if losses.rows else 0
    return max(logged, int(saved.name.split("-")[-1]) if saved else 0)


def run_trainer(trainer: Any, checkpoint: Path | None, batch_size: int, max_length: int) -> float:
    """``trainer.train()`` (a Hugging Face or sentence-transformers trainer), from ``checkpoint`` when given;
    returns the seconds it took.

    Raises:
        TrainingError: out of memory, with the advice to lower the batch size or the sequence length.
    """
    started = time.perf_counter()
    with out_of_memory_advice(batch_size, max_length):
        trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    return time.perf_counter() - started


def weights_sha256(model_dir: Path) -> str:
    """The sha256 of a saved model's weights: of its one ``*.safetensors`` file, else of the sorted
    ``name:sha256`` lines of all of them (sharded or adapter + head)."""
    files = sorted(Path(model_dir).rglob("*.safetensors"))
    if not files:
        raise TrainingError(f"{model_dir}: no *.safetensors weights were saved")
    if len(files) == 1:
        return file_sha256(files[0])
    lines = "".join(f"{f.relative_to(model_dir)}:{file_sha256(f)}\n" for f in files)
    return hashlib.sha256(lines.encode()).hexdigest()


def _duration(seconds: float) -> str:
    h, rest = divmod(round(seconds), 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}"


@dataclass
class LossLog:
    """The training loss as the ``Trainer`` logs it: ``[{"step", "epoch", "loss", "learning_rate"}]``."""

    rows: list[dict[str, float]] = field(default_factory=list)

    def first_last(self) -> tuple[float | None, float | None]:
        """The first and the last logged loss (None when nothing was logged)."""
        return (self.rows[0]["loss"], self.rows[-1]["loss"]) if self.rows else (None, None)


def checkpoint_losses(checkpoint: Path | None) -> LossLog:
    """The losses a checkpoint's ``trainer_state.json`` logged before it was saved (empty for None): a resumed
    run's loss curve starts from step 1."""
    if checkpoint is None:
        return LossLog()
    state = json.loads((Path(checkpoint) / "trainer_state.json").read_text(encoding="utf-8"))
    return LossLog(
        [
            {
                "step": int(r["step"]),
                "epoch": round(float(r.get("epoch", 0.0)), 4),
                "loss": round(float(r["loss"]), 5),
                "learning_rate": float(r.get("learning_rate", 0.0)),
            }
            for r in state.get("log_history", [])
            if "loss" in r
        ]
    )


def progress_callback(
    progress: StageProgress | None,
    log: Callable[[str], None] | None,
    losses: LossLog,
    max_minutes: float | None = None,
) -> Any:
    """A ``transformers.TrainerCallback`` that advances the ``train`` stage of ``progress`` by one per
    optimizer step (the stage's total is the run's steps; a resumed run's stage, named for its checkpoint's step,
    counts the steps left, so that its rate and ETA are its own), and at
    every logging step records the loss in ``losses`` and calls ``log`` with
    ``step s/S, epoch e, loss x, lr y, ETA h:mm:ss``. With ``max_minutes``, the run stops (after saving a
    checkpoint, so ``--resume`` continues it) at the first step end past that much wall time: a bounded slice."""
    from transformers import TrainerCallback

    class _Progress(TrainerCallback):
        advance: Advance | None = None
        started = 0.0
        first_step = 0

        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            # A resumed run's stage counts only the steps left, so its rate and ETA are this run's, not
            # inflated by the checkpoint's steps arriving at once.
            self.started, self.first_step = time.monotonic(), int(state.global_step)
            name = f"train (resumed at step {self.first_step:,})" if self.first_step else "train"
            self.advance = stage(progress, name, int(state.max_steps) - self.first_step)

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if self.advance:
                self.advance(1)
            if max_minutes is not None and time.monotonic() - self.started > 60 * max_minutes:
                control.should_training_stop = True
                control.should_save = True
                control.should_log = True
                if log:
                    log(
                        f"stopping at step {state.global_step}: the {max_minutes:g}-minute budget is spent (--resume continues)"
                    )

        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kw: Any) -> None:
            if not logs or "loss" not in logs:
                return
            step, total = int(state.global_step), int(state.max_steps)
            row = {
                "step": step,
                "epoch": round(float(state.epoch or 0.0), 4),
                "loss": round(float(logs["loss"]), 5),
                "learning_rate": float(logs.get("learning_rate", 0.0)),
            }
            losses.rows.append(row)
            done = step - self.first_step
            eta = (time.monotonic() - self.started) / done * (total - step) if done > 0 else 0.0
            if log:
                log(
                    f"step {step}/{total}, epoch {row['epoch']:.2f}, loss {row['loss']:.4f}, "
                    f"lr {row['learning_rate']:.2e}, ETA {_duration(eta)}"
                )

    return _Progress()


def trainer_arguments(
    out_dir: Path,
    config: Any,
    *,
    scheduler: str = "linear",
    warmup_ratio: float = 0.1,
    arguments_class: Any = None,
    **extra: Any,
) -> Any:
    """The ``TrainingArguments`` (or ``arguments_class``, e.g. sentence-transformers') both trainers use, from
    ``config`` (an ``EmbedderConfig`` or ``ReaderConfig``: epochs, batch_size, learning_rate, save_steps,
    logging_steps, seed, max_steps): checkpoints under ``out_dir/checkpoints`` every ``save_steps`` steps (the
    newest two kept), the loss logged every ``logging_steps`` steps, no tqdm and no reporting service, the CPU
    unless a GPU is visible."""
    import torch

    if arguments_class is None:
        from transformers import TrainingArguments as arguments_class
    max_steps = config.max_steps
    return arguments_class(
        output_dir=str(Path(out_dir) / "checkpoints"),
        num_train_epochs=config.epochs,
        max_steps=max_steps,
        per_device_train_batch_size=config.batch_size,
        learning_rate=config.learning_rate,
        lr_scheduler_type=scheduler,
        warmup_steps=max(0, int(warmup_ratio * max_steps)) if max_steps > 0 else warmup_ratio,
        save_strategy="steps",
        save_steps=config.save_steps,
        save_total_limit=2,
        logging_strategy="steps",
        logging_steps=config.logging_steps,
        report_to="none",
        disable_tqdm=True,
        seed=config.seed,
        data_seed=config.seed,
        use_cpu=not torch.cuda.is_available(),
        dataloader_num_workers=0,
        **extra,
    )


RETRIEVAL_METRICS = ("ndcg@10", "recall@10", "mrr@10")
"""The per-question retrieval metrics a run compares (seed 002 appendix Table 10)."""


def paired_difference(a: Sequence[float], b: Sequence[float], seed: int = 0) -> tuple[float, float, dict[str, Any]]:
    """``(mean of a, mean of b, {"mean", "ci_low", "ci_high", "n"})``: the paired bootstrap difference a - b
    over the same questions (95 %, :func:`finkg.eval.metrics.intervals.paired_bootstrap_difference`), all
    rounded to 4 places."""
    from finkg.eval.metrics.intervals import paired_bootstrap_difference

    d = paired_bootstrap_difference(a, b, seed=seed).as_dict()
    rounded = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in d.items()}
    return round(sum(a) / len(a), 4), round(sum(b) / len(b), 4), rounded


def difference_cells(row: Mapping[str, Any]) -> list[str]:
    """A paired difference as model-card cells: ``["+0.0123", "[+0.0050, +0.0200]"]`` (``mean``, ``ci_low``,
    ``ci_high`` of a :func:`paired_difference` row)."""
    return [f"{row['mean']:+.4f}", f"[{row['ci_low']:+.4f}, {row['ci_high']:+.4f}]"]


def write_model_card(
    model_dir: Path,
    *,
    front_matter: Sequence[str],
    title: str,
    facts: Sequence[str],
    table_title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
) -> Path:
    """Write ``model_dir/README.md``, a Hugging Face model card: the YAML ``front_matter`` lines, a ``# title``,
    the ``facts`` as a bullet list (base model, data, loss, training, weights, default) and the metrics as a
    table under ``## table_title``. Returns its path."""
    lines = [
        "---",
        *front_matter,
        "---",
        "",
        f"# {title}",
        "",
        *(f"- {f}" for f in facts),
        "",
        f"## {table_title}",
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
        *("| " + " | ".join(r) + " |" for r in rows),
        "",
    ]
    card = Path(model_dir) / "README.md"
    card.write_text("\n".join(lines), encoding="utf-8")
    return card


def mark_promoted(model_dir: Path, is_promoted: bool, differences: Sequence[Mapping[str, Any]]) -> None:
    """Write the marker :data:`finkg.models.PROMOTED` (the measured differences) into ``model_dir`` when the
    model measured better, else remove it: the installed-model defaults follow the marker
    (:func:`finkg.models.promoted_model`)."""
    from finkg.models import PROMOTED

    marker = Path(model_dir) / PROMOTED
    if is_promoted:
        marker.write_text(json.dumps({"differences": list(differences)}, indent=2) + "\n", encoding="utf-8")
    else:
        marker.unlink(missing_ok=True)


def register_model(graph: Any, name: str, props: Mapping[str, Any]) -> None:
    """Create or update ``(:TunedModel {name})`` with ``props`` (dicts and lists of dicts are stored as JSON
    text; None values are dropped)."""
    from kg.cypher import MERGE_TUNED_MODELS

    clean = {
        k: (
            json.dumps(v, sort_keys=True)
            if isinstance(v, dict) or (isinstance(v, list) and v and isinstance(v[0], dict))
            else v
        )
        for k, v in props.items()
        if v is not None
    }
    graph.write(MERGE_TUNED_MODELS, {"rows": [{"name": name, "props": clean}]})


def tuned_models(graph: Any, kind: str | None = None) -> list[dict[str, Any]]:
    """The registered tuned models (``{"name", **props}``), of ``kind`` when given."""
    from kg.cypher import TUNED_MODELS

    return [{"name": r["name"], **dict(r["props"])} for r in graph.read(TUNED_MODELS, {"kind": kind})]
