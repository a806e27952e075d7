"""bench/tatqa_partial.py: a TAT-QA run cut short, scored on the questions every system answered, with the token
counts of a rerun over the warm LLM cache (pure: no Neo4j, no model; the answers are scored by TAT-QA's metric)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from conftest import bench_script

from finkg.eval.tatqa import evaluate, read_answers, write_answers
from ingest.datasets.tatqa import read_tatqa

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "tatqa_dev_sample.json"


def _run(tmp_path: Path):
    """Two systems on 6 questions (all their answers), and a run folder as a finkg that did not count tokens wrote
    it, where the second system's last answer is missing (the run was cut there)."""
    contexts = read_tatqa(SAMPLE)
    systems = {"base": lambda *_: "Answer: 1", "other": lambda q, *_: f"Answer: {len(q)}"}
    results = evaluate(contexts, systems, limit=6).results
    uncounted = [dataclasses.replace(r, llm_calls=None, prompt_tokens=None, completion_tokens=None) for r in results]
    cut = [r for r in uncounted if not (r.system == "other" and r.question_uid == results[-1].question_uid)]
    run = tmp_path / "run"
    run.mkdir()
    write_answers(run / "answers.jsonl", cut)
    return results, run


def test_a_cut_run_is_scored_on_the_questions_every_system_answered_with_the_rerun_s_tokens(tmp_path):
    partial = bench_script("tatqa_partial")
    results, run = _run(tmp_path)
    rerun = tmp_path / "rerun"
    rerun.mkdir()
    counted = [  # what a rerun over the warm cache records: the same texts, tokens per answer
        dataclasses.replace(r, llm_calls=2, prompt_tokens=100 + i, completion_tokens=10) for i, r in enumerate(results)
    ]
    write_answers(rerun / "answers.jsonl", counted[:4])  # the rerun reached 2 of the 6 questions
    bench = tmp_path / "results"
    args = [str(run), "eval-tatqa-cut", "--systems", "base,other", "--tokens-from", str(rerun)]
    assert partial.main([*args, "--results-dir", str(bench)]) == 0
    record = json.loads((bench / "eval-tatqa-cut.json").read_text(encoding="utf-8"))
    assert record["name"] == "eval-tatqa-cut" and record["parameters"]["questions_answered_by_all"] == 5
    assert record["parameters"]["questions_seen"] == 6 and record["parameters"]["tokens_from"] == str(rerun)
    rows = {(r["system"], r["answer_type"]): r for r in record["tables"]["rows"]}
    assert rows[("base", "all")]["questions"] == rows[("other", "all")]["questions"] == 5
    assert rows[("base", "all")]["median_llm_calls"] == 2  # 2 counted answers (2, 2) and 3 not counted (None)
    assert rows[("base", "all")]["median_prompt_tokens"] == (100 + 102) / 2
    kept = read_answers(run / "partial" / "answers.jsonl")
    assert {r.question_uid for r in kept} == {r.question_uid for r in results[:10]}
    assert sum(r.prompt_tokens is not None for r in kept) == 4


def test_a_rerun_that_answered_otherwise_is_refused(tmp_path, capsys):
    partial = bench_script("tatqa_partial")
    results, run = _run(tmp_path)
    rerun = tmp_path / "rerun"
    rerun.mkdir()
    write_answers(rerun / "answers.jsonl", [dataclasses.replace(results[1], generated="Answer: 2")])
    bench = tmp_path / "results"
    args = [str(run), "x", "--systems", "base,other", "--tokens-from", str(rerun), "--results-dir", str(bench)]
    assert partial.main(args) == 2
    assert "otherwise in the rerun" in capsys.readouterr().err and not bench.exists()
    assert partial.main([str(run), "x", "--systems", "base,missing", "--results-dir", str(bench)]) == 2
