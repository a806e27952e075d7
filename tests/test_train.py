"""finkg train: embedder fine-tuning (seed 002) and reader LoRA SFT (seed 004) on real TAT-QA examples
(tests/data/tatqa_dev_sample.json: 5 real contexts of TAT-QA's dev file, 30 questions), real models (MiniLM,
SmolLM2-135M rebuilt from its GGUF), a real Neo4j for the registry. Every training run here is a few steps on
CPU; nothing needs a GPU."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import MINILM, model_weights

from finkg import api
from finkg.train import embedder as emb
from finkg.train import reader as rdr
from finkg.train.common import (
    TrainingDataError,
    TrainingError,
    out_of_memory_advice,
    read_jsonl,
    register_model,
    tuned_models,
    write_jsonl,
)
from generation.agent.arithmetic import calculate, derivation_program
from ingest.datasets.tatqa import read_tatqa, split_contexts
from kg.errors import EvaluationError

SAMPLE = Path(__file__).parent / "data" / "tatqa_dev_sample.json"
SMOLLM2 = "smollm2-135m-instruct-q4_1"


def _words(text: str) -> int:
    return len(text.split())


@pytest.fixture(scope="module")
def halves():
    train, held = split_contexts(read_tatqa(SAMPLE), 0)
    return {c.table_uid for c in train}, {c.table_uid for c in held}


# --------------------------------------------------------------------------- data: split, {I, F, T, Y}, bad input


def test_embedder_examples_come_from_the_training_half_only(halves):
    train, held = halves
    examples = emb.tatqa_examples(SAMPLE, seed=0)
    assert examples and train and held
    contexts = {e["context"] for e in examples}
    assert contexts <= train
    assert not contexts & held  # never an evaluation-half context
    assert emb.evaluation_contexts(SAMPLE, 0) == held
    for e in examples:
        assert e["negative"] and e["negative"] != e["positive"]


def test_reader_examples_come_from_the_training_half_only_and_programs_reproduce_the_gold_answer(halves):
    train, held = halves
    examples = rdr.tatqa_examples(SAMPLE, _words, max_fact_tokens=60, seed=0)
    assert {e["context"] for e in examples} <= train and not {e["context"] for e in examples} & held
    gold = {q.uid: q for c in read_tatqa(SAMPLE) for q in c.questions}
    programs = [e for e in examples if e["program"]]
    assert programs, "the sample's training half has arithmetic questions"
    for e in programs:
        expression = e["T"].split('expression="', 1)[1].split('"', 1)[0]
        operands = json.loads(e["T"].split("operands=", 1)[1].rstrip(")"))
        value = calculate(expression, operands).value
        assert abs(round(value, 2) - float(gold[e["uid"]].answer)) <= 0.011 + 1e-3 * abs(float(gold[e["uid"]].answer))
    for e in examples:
        assert _words(e["F"]) <= 60 + 60 // 2  # truncated (whole sentences; newlines not counted as words)
        q = gold[e["uid"]]
        assert e["I"] == q.question
        assert not q.scale or e["Y"].endswith(q.scale)


def test_derivation_program_on_real_derivations():
    # derivations and answers from TAT-QA's dev file
    expression, operands = derivation_program("(44.1-56.7)/56.7")  # answer -22.22 percent
    assert operands == {"n1": 44.1, "n2": 56.7, "n3": 56.7}
    assert round(calculate(f"({expression}) * 100", operands).value, 2) == -22.22
    expression, operands = derivation_program("[(1,062+1,018)/2] - [(1,018+950)/2]")  # answer 56 million
    assert calculate(expression, operands).value == 56
    expression, operands = derivation_program("-5,637-(-3,990)")  # answer -1647 thousand
    assert calculate(expression, operands).value == -1647
    assert derivation_program("the sum of the 2019 column") is None


def test_a_malformed_training_line_names_the_file_and_line(tmp_path):
    good = {"anchor": "q", "positive": "p", "negative": "n"}
    f = tmp_path / "pairs.jsonl"
    f.write_text(json.dumps(good) + "\n" + '{"anchor": "q", "positive": \n', encoding="utf-8")
    with pytest.raises(TrainingDataError, match=rf"{f}:2: not JSON"):
        read_jsonl(f, emb.EXAMPLE_FIELDS)
    f.write_text(json.dumps(good) + "\n\n" + json.dumps({"anchor": "q", "positive": "p"}) + "\n", encoding="utf-8")
    with pytest.raises(TrainingDataError, match=rf"{f}:3: field 'negative' is missing"):
        read_jsonl(f, emb.EXAMPLE_FIELDS)
    f.write_text(json.dumps({"I": "q", "F": "f", "T": 3, "Y": "y"}) + "\n", encoding="utf-8")
    with pytest.raises(TrainingDataError, match=rf"{f}:1: field 'T' is int"):
        read_jsonl(f, rdr.EXAMPLE_FIELDS)
    f.write_text("\n", encoding="utf-8")
    with pytest.raises(TrainingDataError, match="no training examples"):
        read_jsonl(f, rdr.EXAMPLE_FIELDS)
    assert read_jsonl(write_jsonl(tmp_path / "ok.jsonl", [good]), emb.EXAMPLE_FIELDS) == [good]


def test_an_empty_split_stops_with_a_clear_message(tmp_path):
    one = tmp_path / "one_context.json"
    one.write_text(json.dumps(json.loads(SAMPLE.read_text(encoding="utf-8"))[:1]), encoding="utf-8")
    with pytest.raises(TrainingDataError, match=r"no training examples .*empty split"):
        emb.tatqa_examples(one)
    with pytest.raises(TrainingDataError, match="empty split"):
        rdr.tatqa_examples(one, _words)


def test_out_of_memory_is_caught_with_advice():
    with pytest.raises(TrainingError, match="lower --batch-size or --max-length"), out_of_memory_advice(16, 256):
        raise MemoryError("cannot allocate 3 GiB")
    with pytest.raises(ValueError, match="not memory"), out_of_memory_advice(16, 256):
        raise ValueError("not memory")


def test_a_resumed_runs_progress_counts_only_its_own_steps():
    """Resuming at step 100 of 2,502: the bar counts the 2,402 steps left, so its rate and ETA are this run's
    (the checkpoint's 100 steps arriving at once made a resumed run's ETA minutes instead of hours)."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from finkg.output import LogProgress
    from finkg.train.common import LossLog, progress_callback

    now = [0.0]
    out = io.StringIO()
    log = LogProgress(Console(file=out, width=200), interval_s=1e9, clock=lambda: now[0])
    callback = progress_callback(log, None, LossLog())
    state = SimpleNamespace(global_step=100, max_steps=2502)
    callback.on_train_begin(None, state, None)
    for _ in range(5):
        now[0] += 3.0
        callback.on_step_end(None, state, None)
    log.close()
    last = out.getvalue().strip().splitlines()[-1]
    assert last.startswith("train (resumed at step 100): 5/2,402, 0.3/s"), last
    assert "ETA 1:59:51" in last  # 2,397 steps left at 3 s each: 7,191 s


# --------------------------------------------------------------------------- the embedder


@pytest.mark.model
@pytest.mark.neo4j
def test_embedder_trains_a_few_steps_loss_falls_resumes_and_registers(tmp_path, graph):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from retrieval.embeddings import SentenceTransformerEmbedder

    base = model_weights(MINILM)
    examples = emb.tatqa_examples(SAMPLE, seed=0)[:8]
    config = emb.EmbedderConfig(
        batch_size=4, learning_rate=5e-5, max_length=64, save_steps=2, logging_steps=1, max_steps=4
    )
    out = tmp_path / "embedder"
    model_dir, losses, _ = emb.train(examples, base, out, config)
    steps = [r["step"] for r in losses.rows]
    assert steps == [1, 2, 3, 4]
    first, last = losses.first_last()
    assert first is not None and last is not None and last < first
    assert (out / "checkpoints" / "checkpoint-4").is_dir()
    # resume: a longer run continues from step 4 (the steps before are not run again)
    longer = emb.EmbedderConfig(**{**config.__dict__, "max_steps": 6})
    _, resumed, _ = emb.train(examples, base, out, longer, resume=True)
    assert [r["step"] for r in resumed.rows] == [1, 2, 3, 4, 5, 6]  # steps 1-4 from the checkpoint's log
    vec = SentenceTransformerEmbedder(model_dir).encode(["revenue 2019"])
    assert vec.shape == (1, 384)
    name = f"embedder:test-{tmp_path.name}"
    register_model(graph, name, {"kind": "embedder", "sha256": "ab" * 32, "metrics": {"ndcg": 0.5}})
    try:
        found = [m for m in tuned_models(graph, "embedder") if m["name"] == name]
        assert found and found[0]["sha256"] == "ab" * 32 and json.loads(found[0]["metrics"]) == {"ndcg": 0.5}
    finally:
        graph.write("MATCH (m:TunedModel {name: $n}) DELETE m", {"n": name})
    with pytest.raises(TrainingError, match="no checkpoint"):
        emb.train(examples, base, tmp_path / "fresh", config, resume=True)


# --------------------------------------------------------------------------- the reader


@pytest.fixture(scope="module")
def smol_hf(settings) -> Path:
    """SmolLM2-135M-Instruct rebuilt as a Hugging Face checkpoint from its GGUF (../shared/MODELS.md), where
    `finkg train reader` keeps it (``<[models] dir>/<GGUF stem>-hf``; rebuilt once, a few minutes)."""
    gguf = Path(model_weights(SMOLLM2))
    gguf = gguf if gguf.is_file() else next(gguf.glob("*.gguf"))
    return rdr.hf_checkpoint_from_gguf(gguf, settings.models.dir / f"{gguf.stem}-hf")


@pytest.mark.model
def test_reader_lora_loss_falls_resumes_and_the_adapter_loads_in_both_backends(tmp_path, smol_hf, settings):
    from generation.llm import AdapterBaseMismatch, LlamaCppBackend, TransformersBackend
    from generation.llm.adapters import write_adapter_meta

    examples = [e for e in rdr.tatqa_examples(SAMPLE, _words, max_fact_tokens=40, seed=0) if e["program"]][:2]
    config = rdr.ReaderConfig(max_steps=6, save_steps=3, logging_steps=1, max_length=192, learning_rate=1e-3)
    out = tmp_path / "reader"
    adapter, losses, _, trainable, start = rdr.train(examples, smol_hf, out, config)
    assert start == 0 and 0 < trainable < 1_000_000  # r=8 on q/v only
    first, last = losses.first_last()
    assert first is not None and last is not None and last < first
    longer = rdr.ReaderConfig(**{**config.__dict__, "max_steps": 8})
    _, resumed, _, _, start = rdr.train(examples, smol_hf, out, longer, resume=True)
    assert start == 6 and [r["step"] for r in resumed.rows] == [1, 2, 3, 4, 5, 6, 7, 8]

    hf = TransformersBackend(smol_hf, adapter_path=adapter)
    assert "+lora:" in hf.model_id and hf.model_id.startswith("hf:")
    done = hf.generate(rdr.messages(examples[0], with_target=False), max_tokens=8, temperature=0.0)
    assert done.completion_tokens > 0

    other = tmp_path / "other-adapter"
    other.mkdir()
    for f in adapter.iterdir():
        (other / f.name).write_bytes(f.read_bytes())
    write_adapter_meta(other, base_name="/models/qwen2.5-1.5b", base_ids={"hf": "hf:0123"})
    with pytest.raises(AdapterBaseMismatch, match=r"qwen2\.5-1\.5b.*configured base model is .*hf"):
        TransformersBackend(smol_hf, adapter_path=other).generate(
            rdr.messages(examples[0], with_target=False), max_tokens=2, temperature=0.0
        )

    gguf_lora = rdr.export_gguf_lora(adapter, smol_hf, tmp_path / "adapter.gguf")
    base_gguf = json.loads((smol_hf / "finkg_source.json").read_text(encoding="utf-8"))["gguf"]
    cpp = LlamaCppBackend(base_gguf, n_ctx=1024, lora_path=gguf_lora)
    assert "+lora:" in cpp.model_id and cpp.model_id.startswith("gguf:")
    done = cpp.generate(rdr.messages(examples[0], with_target=False), max_tokens=8, temperature=0.0)
    assert done.completion_tokens > 0

    # base and tuned reader on the same questions in one run (`finkg eval tatqa --adapter`), paired
    run = settings.model_copy(
        update={"llm_backend": "llama-cpp", "llm_model_path": base_gguf, "llm_cache_dir": tmp_path / "cache"}
    )
    results, _ = api.eval_tatqa(
        SAMPLE, systems=["reader"], limit=2, max_tokens=24, out=tmp_path / "eval", adapter=gguf_lora, settings=run
    )
    assert results.systems == ["reader", "reader+lora"] and len(results.results) == 4
    ids = {r.system: r.model_id for r in results.results}
    assert ids["reader+lora"] == cpp.model_id and ids["reader"] == cpp.model_id.split("+lora:")[0]
    assert {(d["system"], d["baseline"]) for d in results.differences()} == {("reader+lora", "reader")}
    manifest = json.loads((tmp_path / "eval" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["model_id"] == ids["reader"] and manifest["tuned_model_id"] == ids["reader+lora"]
    manifest["tuned_model_id"] = ids["reader"] + "+lora:0123456789abcdef"  # as if another adapter answered
    (tmp_path / "eval" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(EvaluationError, match=r"tuned_model_id"):  # its answers are never mixed with these
        api.eval_tatqa(SAMPLE, systems=["reader"], limit=2, out=tmp_path / "eval", adapter=gguf_lora, settings=run)

    write_adapter_meta(gguf_lora, base_name="/models/other.gguf", base_ids={"gguf": "gguf:ff"})
    with pytest.raises(AdapterBaseMismatch, match=r"other\.gguf"):
        LlamaCppBackend(base_gguf, n_ctx=1024, lora_path=gguf_lora).llama()


@pytest.mark.neo4j  # its subprocess talks to the server
@pytest.mark.parametrize(
    ("command", "good", "bad", "said"),
    [
        ("embedder", {"anchor": "q", "positive": "p", "negative": "n"}, {"anchor": 1}, "field 'anchor' is int"),
        (
            "reranker",
            {"query": "q", "passage": "p", "label": 1.0},
            {"query": "q", "passage": "p"},
            "field 'label' is missing",
        ),
    ],
)
def test_cli_stops_on_a_malformed_training_line_before_training(tmp_path, command, good, bad, said):
    import subprocess
    import sys

    lines = tmp_path / "pairs.jsonl"
    lines.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    args = ["train", command, str(SAMPLE), "--examples", str(lines), "--out-dir", str(tmp_path / "run")]
    out = subprocess.run(
        [sys.executable, "-m", "finkg", *args, "--base-model", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "300"},
    )
    assert out.returncode == 2, out.stderr
    assert f"{lines}:2: {said}" in out.stderr.replace("\n", "")
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "run" / "checkpoints").exists()  # stopped before training


@pytest.mark.parametrize("bad", ["examples", "tatqa"])
def test_train_reader_stops_on_bad_training_data_with_one_line_before_any_model(tmp_path, bad):
    """`finkg train reader` checks its data first: a real bad line (the second example lacks 'T') or a TAT-QA file
    whose span answer is not a list is one `error:` line naming the file and the line (or context and field),
    exit 2, before the base GGUF is rebuilt as a Hugging Face checkpoint, a graph opened or a file written. The
    base model here is a file transformers cannot read and Neo4j a closed port: reaching either would end in
    another message."""
    import subprocess
    import sys

    tatqa = SAMPLE
    lines = tmp_path / "reader.jsonl"
    good = {"I": "What was the 2019 revenue?", "F": "Revenue | 2019: 1,200", "T": "the revenue row", "Y": "1,200"}
    lines.write_text(json.dumps(good) + "\n" + json.dumps({k: good[k] for k in ("I", "F", "Y")}) + "\n")
    args = ["--examples", str(lines)]
    if bad == "tatqa":
        contexts = json.loads(SAMPLE.read_text(encoding="utf-8"))
        question = next(q for q in contexts[1]["questions"] if q["answer_type"] == "span")
        question["answer"] = "not a list"
        tatqa = tmp_path / "tatqa.json"
        tatqa.write_text(json.dumps(contexts), encoding="utf-8")
        args = []
    base = tmp_path / "base.gguf"
    base.write_bytes(b"not a GGUF file")
    models, run_dir = tmp_path / "models", tmp_path / "run"
    command = [sys.executable, "-m", "finkg", "train", "reader", str(tatqa), *args, "--base-model", str(base)]
    out = subprocess.run(
        [*command, "--out-dir", str(run_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        env={
            **os.environ,
            "COLUMNS": "80",  # the message is longer: still one line
            "FINKG_MODELS__DIR": str(models),
            "FINKG_NEO4J__URI": "bolt://127.0.0.1:9",
        },
    )
    assert out.returncode == 2, out.stderr
    said = out.stderr.strip().splitlines()
    assert len(said) == 1 and said[0].startswith("error: "), out.stderr
    if bad == "examples":
        assert f"{lines}:2: field 'T' is missing" in said[0]
    else:
        assert f"{tatqa}: context 1: question {question['uid']}" in said[0] and "answer" in said[0]
    assert not models.exists() and not run_dir.exists()  # no checkpoint rebuilt from the GGUF, nothing written


def test_a_tuned_embedder_becomes_the_default_only_when_marked_better(tmp_path):
    from finkg import models

    model = tmp_path / models.TUNED_EMBEDDER / "model"
    model.mkdir(parents=True)
    assert models.promoted_model(tmp_path, models.TUNED_EMBEDDER) is None  # trained, not measured better
    (model / models.PROMOTED).write_text("{}", encoding="utf-8")
    assert models.promoted_model(tmp_path, models.TUNED_EMBEDDER) == model
    assert emb.promoted([{"system": "hybrid", "metric": "ndcg@10", "ci_low": 0.01}])
    assert not emb.promoted([{"system": "hybrid", "metric": "ndcg@10", "ci_low": -0.01}])
    assert not emb.promoted([{"system": "dense", "metric": "ndcg@10", "ci_low": 0.05}])
