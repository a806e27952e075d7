"""bench/agent_latency.py: the agent's seconds per question one at a time and several in flight, each pass with an
empty LLM cache of its own (SmolLM2 through llama.cpp on the shipped TAT-QA sample: the mechanics, not the
figures)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import bench_script
from rich.console import Console
from test_llm import smol_gguf

SAMPLE = Path(__file__).resolve().parent / "data" / "tatqa_dev_sample.json"


def test_the_percentile_interpolates_and_takes_a_single_value():
    latency = bench_script("agent_latency")
    assert latency.percentile([3.0], 0.9) == 3.0
    assert latency.percentile([float(v) for v in range(1, 11)], 0.9) == pytest.approx(9.1)
    assert latency.percentile([1.0, 2.0, 3.0, 4.0, 5.0], 0.5) == pytest.approx(3.0)


@pytest.mark.model
def test_each_pass_asks_the_llm_for_every_answer_and_times_it(tmp_path):
    latency = bench_script("agent_latency")
    smol = {"llm_backend": "llama-cpp", "llm_model_path": smol_gguf()}
    console = Console(quiet=True)
    passes = [latency.one_pass(SAMPLE, 2, w, tmp_path / f"w{w}", console, **smol) for w in (1, 2)]
    for p in passes:
        assert p["answers"] == 2 and p["median_s"] > 0 and p["p90_s"] >= p["median_s"]
        assert p["median_prompt_tokens"] > 0  # each answer counts its LLM call
        assert (tmp_path / f"w{p['workers']}" / "llm-cache").is_dir()
    assert set(passes[0]["predicted"]) == set(passes[1]["predicted"])  # the same questions in both passes
    with pytest.raises(FileExistsError, match="not empty"):  # a pass over answers already there times nothing
        latency.one_pass(SAMPLE, 2, 1, tmp_path / "w1", console, **smol)
