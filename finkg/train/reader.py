"""LoRA SFT of the reader on {I, F, T, Y} examples from TAT-QA's training half (``finkg train reader``).

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, section 3.4 ("Supervision Fine-tuning with KG retrieval":
facts, knowledge and question concatenated as the prompt, the analysis as the target) and appendix C
("the training data format ... is {I, F, T, Y}"; LoRA, batch size 1, 3 epochs, rank 8, cosine schedule,
learning rate 1e-3). finkg's T is not retrieved triples but the *thought* TAT-QA gives for each answer: its
derivation written as the program the analyst agent's ``calculate`` tool runs
(:func:`generation.agent.arithmetic.calculate`), checked against the gold answer.

**Examples** (:func:`tatqa_examples`; only the training half of :func:`ingest.datasets.tatqa.split_contexts`,
the evaluation half is never read):

- I: the question;
- F: the context as fact sentences: the paragraphs TAT-QA marks as evidence, then the table's cells as
  ``"<row> | <column>: <value>"`` sentences (:func:`ingest.datasets.tatqa.table_facts`), then the other
  paragraphs, cut at ``max_fact_tokens`` (512) tokens of the base model's tokenizer;
- T: for an arithmetic question, ``calculate(expression="(n1 - n2) / n2 * 100", operands={"n1": 44.1, "n2": 56.7})``
  (:func:`generation.agent.arithmetic.derivation_program`: every number of the derivation becomes an operand;
  ``* 100`` is appended when the answer is a percentage of a ratio); the program is kept only if ``calculate``
  reproduces the gold answer, else T is the derivation as TAT-QA writes it; for the other questions T names the
  facts the answer is read from;
- Y: the answer (spans joined by ``"; "``) with its scale (``"-12.6 million"``).

The prompt is the base model's chat template over one user message (I and F), the target one assistant
message (``Thought: T`` then ``Answer: Y``); the loss is on the target's tokens only.

**Training** (:func:`train`): peft LoRA (defaults r 8, alpha 16, dropout 0.05, q_proj and v_proj, learning rate
1e-3, cosine schedule, 3 epochs, batch 1), Hugging Face ``Trainer``, checkpoints every ``save_steps`` steps
and ``--resume``; the adapter is saved with :data:`generation.llm.adapters.ADAPTER_META` naming its base model
so that a backend configured with another base refuses it.

**Base model.** peft trains a normal Hugging Face checkpoint; the offline weights here are GGUF files, so
:func:`hf_checkpoint_from_gguf` rebuilds one (transformers dequantizes the GGUF; the config is rebuilt without
its quantization entry and saved as safetensors), as ../shared/MODELS.md describes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from finkg.train import common
from finkg.train.common import LossLog, TrainingError
from generation.agent.arithmetic import checked_program
from generation.agent.thought import calculate_call
from generation.llm.adapters import write_adapter_meta
from generation.qa.reader import reader_messages, truncate
from ingest.datasets.tatqa import TatqaContext, TatqaQuestion, read_tatqa, split_contexts, table_facts
from kg.progress import StageProgress

EXAMPLE_FIELDS: dict[str, type | tuple[type, ...]] = {"I": str, "F": str, "T": str, "Y": str}
"""The fields each line of a reader training file must have (strings)."""


@dataclass(frozen=True)
class ReaderConfig:
    """Settings of a reader LoRA SFT run (defaults: seed 004 appendix C).

    Attributes:
        r, alpha, dropout, target_modules: the LoRA adapter (rank 8, alpha 16, q/v projections).
        learning_rate: 1e-3, cosine schedule with a 3 % warm-up. epochs: 3. batch_size: 1.
        max_length: tokens of prompt + target (longer examples are cut from the facts' end first).
        max_fact_tokens: tokens of F (512). save_steps: steps between checkpoints. logging_steps: steps between
        loss lines. max_steps: stop after this many steps (-1: the epochs decide). max_questions: a seeded
        sample of the training half (None: all). seed: split, sampling and training seed. max_minutes: stop
        (with a checkpoint) after this much wall time: a bounded slice that ``--resume`` continues.
    """

    r: int = 8
    alpha: int = 16
    dropout: float = 0.05
    target_modules: tuple[str, ...] = ("q_proj", "v_proj")
    learning_rate: float = 1e-3
    epochs: float = 3.0
    batch_size: int = 1
    max_length: int = 768
    max_fact_tokens: int = 512
    save_steps: int = 50
    logging_steps: int = 10
    max_steps: int = -1
    max_minutes: float | None = None
    max_questions: int | None = None
    seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- {I, F, T, Y}


def thought(question: TatqaQuestion) -> tuple[str, bool]:
    """T for a question (see the module doc) and whether it is a ``calculate`` program checked against the gold
    answer (:func:`generation.agent.arithmetic.checked_program`)."""
    if question.answer_type == "arithmetic":
        gold = question.answer if isinstance(question.answer, int | float) else None
        found = checked_program(question.derivation, float(gold)) if gold is not None else None
        if found:
            return calculate_call(*found), True
        return f"derivation: {question.derivation.strip()}", False
    if question.derivation.strip():
        return f"from the facts: {question.derivation.strip()}", False
    return f"read from the {question.answer_from.replace('-', ' and ')}", False


def answer_text(question: TatqaQuestion) -> str:
    """Y: the gold answer (spans joined by ``"; "``) followed by its scale when it has one."""
    a = question.answer
    text = "; ".join(str(x) for x in a) if isinstance(a, list) else str(a)
    return f"{text} {question.scale}".strip() if question.scale else text


def fact_sentences(context: TatqaContext, question: TatqaQuestion) -> list[str]:
    """F before truncation: the question's evidence paragraphs, the table's cells as sentences, the other
    paragraphs."""
    wanted = set(question.rel_paragraphs)
    first = [p.text for p in context.passages if p.order in wanted]
    rest = [p.text for p in context.passages if p.order not in wanted]
    cells = [f.text for f in table_facts(context.table_uid, context.table, "tatqa")]
    return [*first, *cells, *rest]


def tatqa_examples(
    path: Path, count: Callable[[str], int], max_fact_tokens: int = 512, seed: int = 0, max_questions: int | None = None
) -> list[dict[str, Any]]:
    """The {I, F, T, Y} examples of TAT-QA's training half (see the module doc).

    Args:
        count: text -> tokens (the base model's tokenizer). max_questions: a seeded sample (None: all).

    Returns:
        ``[{"I", "F", "T", "Y", "uid", "context", "answer_type", "program"}]`` (``program``: T is a checked
        ``calculate`` call).

    Raises:
        TrainingDataError: the training half has no question.
    """
    import random

    train, _ = split_contexts(read_tatqa(path), seed)
    pairs = [(c, q) for c in train for q in c.questions]
    common.require_examples(len(pairs), f"{path}: the training half of the context split")
    if max_questions is not None and len(pairs) > max_questions:
        pairs = sorted(random.Random(seed).sample(pairs, max_questions), key=lambda p: p[1].uid)
    out = []
    for c, q in pairs:
        t, checked = thought(q)
        out.append(
            {
                "I": q.question,
                "F": truncate(fact_sentences(c, q), count, max_fact_tokens),
                "T": t,
                "Y": answer_text(q),
                "uid": q.uid,
                "context": c.table_uid,
                "answer_type": q.answer_type,
                "program": checked,
            }
        )
    return out


def messages(example: dict[str, Any], with_target: bool = True) -> list[dict[str, str]]:
    """The chat of one example (:func:`generation.qa.reader.reader_messages`): system, user (I and F), and the
    assistant's ``Thought: T`` / ``Answer: Y``."""
    target = f"Thought: {example['T']}\nAnswer: {example['Y']}" if with_target else None
    return reader_messages(example["I"], example["F"], target)


def tokenize(example: dict[str, Any], tokenizer: Any, max_length: int) -> dict[str, list[int]]:
    """``input_ids``, ``attention_mask`` and ``labels`` (-100 on the prompt: the loss is on the target only),
    the prompt cut from its end when prompt + target exceed ``max_length``."""
    prompt = tokenizer.apply_chat_template(messages(example, False), add_generation_prompt=True, tokenize=False)
    full = tokenizer.apply_chat_template(messages(example), tokenize=False)
    p_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    t_ids = tokenizer(full[len(prompt) :], add_special_tokens=False)["input_ids"]
    keep = max(1, max_length - len(t_ids))
    ids = p_ids[:keep] + t_ids
    ids = ids[:max_length]
    labels = [-100] * min(len(p_ids), keep) + t_ids
    labels = labels[: len(ids)]
    return {"input_ids": ids, "attention_mask": [1] * len(ids), "labels": labels}


# --------------------------------------------------------------------------- the base model


def hf_checkpoint_from_gguf(gguf: Path, out_dir: Path) -> Path:
    """A normal Hugging Face checkpoint (config, tokenizer, safetensors) rebuilt from a GGUF file, for peft
    (../shared/MODELS.md): transformers dequantizes the GGUF to float32; the model is rebuilt from its config
    without ``quantization_config`` and saved. Reuses ``out_dir`` when it already holds one. Records the GGUF's
    sha256 in ``out_dir/finkg_source.json``.

    Raises:
        TrainingError: the file is missing or transformers cannot read it.
    """
    from generation.llm.base import file_sha256

    out_dir = Path(out_dir)
    if (out_dir / "config.json").is_file() and list(out_dir.glob("*.safetensors")):
        return out_dir
    gguf = Path(gguf).expanduser()
    if not gguf.is_file():
        raise TrainingError(f"base GGUF {gguf}: no such file (`finkg models list` shows the installed ones)")
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    except (OSError, ValueError, RuntimeError) as exc:
        raise TrainingError(f"transformers cannot read {gguf}: {exc}") from exc
    cfg = loaded.config.to_dict()
    cfg.pop("quantization_config", None)
    config = AutoConfig.for_model(**cfg)
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(loaded.state_dict(), strict=False)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out_dir))
    tok.save_pretrained(str(out_dir))
    (out_dir / "finkg_source.json").write_text(
        json.dumps({"gguf": str(gguf), "gguf_sha256": file_sha256(gguf)}, indent=2) + "\n", encoding="utf-8"
    )
    return out_dir


def base_identities(base_dir: Path) -> dict[str, str]:
    """The ids a backend may report for ``base_dir``: ``hf:<dir identity>`` and, when it was rebuilt from a GGUF,
    ``gguf:<sha256>`` (llama.cpp) and ``hf-gguf:<sha256>`` (transformers reading the GGUF)."""
    from generation.llm.hf import hf_dir_identity

    ids = {"hf": f"hf:{hf_dir_identity(base_dir)}"}
    source = base_dir / "finkg_source.json"
    if source.is_file():
        sha = json.loads(source.read_text(encoding="utf-8"))["gguf_sha256"]
        ids |= {"gguf": f"gguf:{sha}", "hf-gguf": f"hf-gguf:{sha}"}
    return ids


# --------------------------------------------------------------------------- training


def train(
    examples: Sequence[dict[str, Any]],
    base_dir: Path,
    out_dir: Path,
    config: ReaderConfig,
    *,
    progress: StageProgress | None = None,
    log: Callable[[str], None] | None = None,
    resume: bool = False,
) -> tuple[Path, LossLog, float, int, int]:
    """LoRA SFT of the causal LM in ``base_dir`` on ``examples`` (see the module doc); the adapter is saved to
    ``out_dir/adapter`` with its base model's identities (:func:`generation.llm.adapters.write_adapter_meta`).

    Returns:
        ``(adapter directory, the logged losses, seconds, trainable parameters, the step it started from)``.

    Raises:
        TrainingDataError: no examples. TrainingError: a base model that does not load, no checkpoint to
        resume from, or out of memory (with the advice to lower the batch size or the sequence length).
    """
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForSeq2Seq, Trainer

    common.require_examples(len(examples), "reader fine-tuning")
    out_dir = Path(out_dir)
    checkpoint = common.resume_checkpoint(out_dir, resume)
    torch.manual_seed(config.seed)
    try:
        tok = AutoTokenizer.from_pretrained(str(base_dir))
        model = AutoModelForCausalLM.from_pretrained(str(base_dir), dtype=torch.float32)
    except (OSError, ValueError, RuntimeError) as exc:
        raise TrainingError(f"base model {base_dir}: transformers cannot load it ({exc})") from exc
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    lora = LoraConfig(
        r=config.r,
        lora_alpha=config.alpha,
        lora_dropout=config.dropout,
        target_modules=list(config.target_modules),
        task_type="CAUSAL_LM",
    )
    try:
        model = get_peft_model(model, lora)
    except ValueError as exc:  # target modules absent from the model
        raise TrainingError(f"LoRA target modules {config.target_modules}: {exc}") from exc
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    data = [tokenize(e, tok, config.max_length) for e in examples]
    args = common.trainer_arguments(
        out_dir,
        config,
        scheduler="cosine",
        warmup_ratio=0.03,
        remove_unused_columns=False,
    )
    losses = common.checkpoint_losses(checkpoint)
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=data,  # pyright: ignore[reportArgumentType]  # a list is a map-style dataset
        data_collator=DataCollatorForSeq2Seq(tok, padding=True, label_pad_token_id=-100),
        callbacks=[common.progress_callback(progress, log, losses, config.max_minutes)],
    )
    seconds = common.run_trainer(trainer, checkpoint, config.batch_size, config.max_length)
    adapter = out_dir / "adapter"
    model.save_pretrained(str(adapter))
    tok.save_pretrained(str(adapter))
    write_adapter_meta(adapter, base_name=str(base_dir), base_ids=base_identities(Path(base_dir)))
    start = int(checkpoint.name.split("-")[-1]) if checkpoint else 0
    return adapter, losses, seconds, trainable, start


def check_training_data(path: Path, examples_file: Path | None = None, seed: int = 0) -> int:
    """The checks of ``finkg train reader``'s input that need no model, made before one is loaded or converted,
    a graph opened or a file written: with ``examples_file``, every line (JSON, an object, the string fields of
    :data:`EXAMPLE_FIELDS`) and no example from an evaluation-half context of ``path``; the TAT-QA file ``path``
    read whole in any case (its shape: the examples are built from it, or the split is).

    Returns:
        The examples in ``examples_file`` (0 when none is given).

    Raises:
        TrainingDataError: a malformed line (``<file>:<line>: field 'T' is missing``) or no example.
        TrainingError: examples from evaluation-half contexts. TatqaFormatError: ``path`` not in TAT-QA's shape.
        FileNotFoundError: ``path`` does not exist.
    """
    from finkg.train.embedder import check_training_half

    if examples_file is None:
        read_tatqa(path)
        return 0
    examples = common.read_jsonl(examples_file, EXAMPLE_FIELDS)
    check_training_half(examples, path, seed, examples_file)
    return len(examples)


def run(
    path: Path,
    base_dir: Path,
    out_dir: Path,
    config: ReaderConfig,
    *,
    examples_file: Path | None = None,
    resume: bool = False,
    graph: Any = None,
    results_dir: Path | None = None,
    progress: StageProgress | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """``finkg train reader`` end to end: {I, F, T, Y} examples (built into ``out_dir/examples.jsonl``, or read
    from ``examples_file``; checked line by line before training), training, the loss curve
    (``out_dir/loss.png``), the results file ``train-reader.json`` (``results_dir``, default ``bench/results``)
    and the registry node (when ``graph`` is given).

    Returns:
        The summary ``{"adapter", "base_model", "sha256", "examples", "steps", "loss_first", "loss_last",
        "seconds", "seconds_per_step", "epochs_done", ...}``.
    """
    from finkg import plots
    from finkg.eval.results import write_result
    from finkg.train.common import register_model
    from finkg.train.embedder import check_training_half

    out_dir = Path(out_dir)
    if examples_file is None:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(base_dir))

        def count(text: str) -> int:
            return len(tok(text, add_special_tokens=False)["input_ids"])

        examples_file = common.write_jsonl(
            out_dir / "examples.jsonl",
            tatqa_examples(path, count, config.max_fact_tokens, config.seed, config.max_questions),
        )
    examples = common.read_jsonl(examples_file, EXAMPLE_FIELDS)
    check_training_half(examples, path, config.seed, examples_file)
    adapter, losses, seconds, trainable, start = train(
        examples, base_dir, out_dir, config, resume=resume, progress=progress, log=log
    )
    steps = common.steps_run(out_dir, losses)
    first, last = losses.first_last()
    steps_per_epoch = math.ceil(len(examples) / config.batch_size)
    summary = {
        "name": f"reader:{out_dir.name}",
        "kind": "reader",
        "adapter": str(adapter),
        "base_model": str(base_dir),
        "sha256": common.weights_sha256(adapter),
        "examples": len(examples),
        "programs": sum(1 for e in examples if e.get("program")),
        "trainable_parameters": trainable,
        "steps": steps,
        "steps_per_epoch": steps_per_epoch,
        "epochs_done": round(steps / steps_per_epoch, 3),
        "loss_first": first,
        "loss_last": last,
        "seconds": round(seconds, 1),
        "seconds_per_step": round(seconds / max(1, steps - start), 2),
        "trained_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if losses.rows:
        plots.loss_curve(
            [(r["step"], r["loss"]) for r in losses.rows],
            out_dir / "loss.png",
            title=f"reader LoRA SFT on TAT-QA (r={config.r}, lr={config.learning_rate:g}), {Path(base_dir).name}",
        )
        summary["loss_png"] = str(out_dir / "loss.png")
    cfg = {k: v for k, v in asdict(config).items() if k != "extra"}
    cfg["target_modules"] = list(config.target_modules)
    write_result(
        "train-reader",
        {"source": str(path), "base_model": str(base_dir), "split": {"by": "context", "seed": config.seed}, **cfg},
        {
            k: summary[k]
            for k in (
                "examples",
                "steps",
                "steps_per_epoch",
                "epochs_done",
                "loss_first",
                "loss_last",
                "seconds",
                "seconds_per_step",
                "sha256",
            )
        },
        tables={"loss": losses.rows},
        directory=results_dir,
    )
    if graph is not None:  # last: the results file is written even when the registry fails
        register_model(graph, summary["name"], summary)
    return summary


LLAMA_CPP_HINT = (
    "pass --llama-cpp-dir (or set FINKG_LLAMA_CPP_DIR) to a llama.cpp source tree holding convert_lora_to_gguf.py "
    "(llama-cpp-python's sdist carries one under vendor/llama.cpp)"
)


def llama_cpp_dir(given: Path | None = None) -> Path:
    """The llama.cpp source tree whose ``convert_lora_to_gguf.py`` converts a peft adapter: ``given``, else
    ``$FINKG_LLAMA_CPP_DIR``, else the ``vendor/llama.cpp`` of a llama-cpp-python sdist unpacked in finkg's uv
    cache (``~/.cache/finkg/uv-cache-*``, where ``scripts/bootstrap.sh`` builds llama-cpp-python).

    Raises:
        TrainingError: none of them holds the script.
    """
    import os

    candidates = [given] if given else []
    if os.environ.get("FINKG_LLAMA_CPP_DIR"):
        candidates.append(Path(os.environ["FINKG_LLAMA_CPP_DIR"]))
    cache = Path("~/.cache/finkg").expanduser()
    candidates += sorted(cache.glob("uv-cache-*/sdists-*/pypi/llama-cpp-python/*/*/src/vendor/llama.cpp"))
    for c in candidates:
        if c and (Path(c) / "convert_lora_to_gguf.py").is_file():
            return Path(c)
    raise TrainingError(f"no convert_lora_to_gguf.py found: {LLAMA_CPP_HINT}")


def export_gguf_lora(adapter: Path, base_dir: Path, out_file: Path, source_dir: Path | None = None) -> Path:
    """Convert a peft LoRA adapter to a GGUF LoRA adapter for llama.cpp (``[llm] adapter_path`` with
    ``backend = "llama-cpp"``) with llama.cpp's ``convert_lora_to_gguf.py`` (f32), and give it the adapter's
    base-model record (:mod:`generation.llm.adapters`).

    Raises:
        TrainingError: no converter (see :func:`llama_cpp_dir`), or the conversion failed (its last output lines).
    """
    import os
    import subprocess
    import sys

    from generation.llm.adapters import read_adapter_meta

    tree = llama_cpp_dir(source_dir)
    out_file = Path(out_file)
    out_file.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(tree / "gguf-py")}
    cmd = [sys.executable, str(tree / "convert_lora_to_gguf.py"), "--base", str(base_dir), "--outfile", str(out_file)]
    done = subprocess.run([*cmd, "--outtype", "f32", str(adapter)], capture_output=True, text=True, env=env, cwd=tree)
    if done.returncode != 0 or not out_file.is_file():
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        raise TrainingError(f"convert_lora_to_gguf.py failed on {adapter} (exit {done.returncode}): {tail}")
    meta = read_adapter_meta(adapter) or {}
    write_adapter_meta(
        out_file,
        base_name=str(meta.get("base_name", base_dir)),
        base_ids=meta.get("base_ids", {}),
        peft_adapter=str(adapter),
    )
    return out_file
