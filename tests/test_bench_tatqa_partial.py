"""bench/tatqa_partial.py: a TAT-QA run cut short, scored on the questions every system answered, with the token
counts of a rerun over the warm LLM cache (pure: no Neo4j, no model; the answers are scored by TAT-QA's metric)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from conftest import bench_script

from finkg.eval.tatqa import evaluate, read_answers, retrieved_experiences, write_answers
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


def test_a_memory_system_s_retrievals_wins_and_losses_are_counted_against_the_baseline(tmp_path):
    """Answers as ``finkg eval tatqa`` writes them for the memory systems (the retrieved ids on the first line); the
    counts are worked out by hand from each question's EM."""
    partial = bench_script("tatqa_partial")
    agent = evaluate(read_tatqa(SAMPLE), {"agent": lambda *_: "Answer: 1"}, limit=5).results

    def answers(system: str, ems: list[float], used: list[str]) -> list:
        return [
            dataclasses.replace(r, system=system, em=em, generated=f"experiences: {ids}\nAnswer: 1")
            for r, em, ids in zip(agent, ems, used, strict=True)
        ]

    hits = ["none", "exp:a, exp:b", "exp:a", "exp:c", "none"]
    run = tmp_path / "run"
    run.mkdir()
    write_answers(
        run / "answers.jsonl",
        [
            *(dataclasses.replace(r, em=em) for r, em in zip(agent, [1.0, 1.0, 1.0, 0.0, 0.0], strict=True)),
            *answers("agent-memory", [1.0, 1.0, 1.0, 1.0, 0.0], hits),  # wins the 4th, which retrieved one
            *answers("agent-shuffled", [1.0, 0.0, 0.0, 0.0, 0.0], hits),  # loses the 2nd and 3rd
        ],
    )
    bench = tmp_path / "results"
    systems = "agent,agent-memory,agent-shuffled"
    assert partial.main([str(run), "mem", "--systems", systems, "--results-dir", str(bench)]) == 0
    used = json.loads((bench / "mem.json").read_text(encoding="utf-8"))["tables"]["memory_use"]
    common = {"against": "agent", "answers": 5, "retrieved": 3}
    assert used == [
        {"system": "agent-memory", **common, "won": 1, "lost": 0, "won_retrieved": 1, "lost_retrieved": 0},
        {"system": "agent-shuffled", **common, "won": 0, "lost": 2, "won_retrieved": 0, "lost_retrieved": 2},
    ]
    assert partial.main([str(run), "plain", "--systems", "agent", "--results-dir", str(bench)]) == 0
    assert "memory_use" not in json.loads((bench / "plain.json").read_text(encoding="utf-8"))["tables"]


def test_the_retrieved_ids_are_read_from_the_answer_s_first_line():
    assert retrieved_experiences("experiences: exp:a, exp:b\nx * y with x=1\nAnswer: 2") == ["exp:a", "exp:b"]
    assert retrieved_experiences("experiences: none\nAnswer: 2") == []
    assert retrieved_experiences("quoted from the evidence\nAnswer: 2") is None
    assert retrieved_experiences("Answer: 2\nexperiences: exp:a") is None  # only the first line names them


def test_another_folders_variant_is_joined_and_paired_only_when_the_baseline_was_asked_the_same(tmp_path, capsys):
    """``--join OTHER:SYSTEM=ALIAS`` and ``--pair SYSTEM:BASELINE``: a variant run in another folder (the same
    baseline texts) scored beside this folder's, the paired difference worked out by hand from each question's EM."""
    partial = bench_script("tatqa_partial")
    agent = evaluate(read_tatqa(SAMPLE), {"agent": lambda *_: "Answer: 1"}, limit=5).results

    def answers(system: str, ems: list[float]) -> list:
        return [dataclasses.replace(r, system=system, em=em) for r, em in zip(agent, ems, strict=True)]

    here, other = tmp_path / "here", tmp_path / "other"
    here.mkdir()
    other.mkdir()
    write_answers(here / "answers.jsonl", [*agent, *answers("agent-memory", [1, 0, 1, 0, 1])])
    write_answers(other / "answers.jsonl", [*agent, *answers("agent-memory", [0, 0, 1, 0, 0])])
    (other / "manifest.json").write_text('{"memory": {"solution": "program"}}', encoding="utf-8")
    bench = tmp_path / "results"
    args = [str(here), "joined", "--systems", "agent,agent-memory,values", "--results-dir", str(bench)]
    join = ["--join", f"{other}:agent-memory=values"]
    assert partial.main([*args, *join, "--pair", "agent-memory:values"]) == 0
    record = json.loads((bench / "joined.json").read_text(encoding="utf-8"))
    diffs = {(d["system"], d["baseline"], d["answer_type"]): d for d in record["tables"]["differences"]}
    assert diffs[("agent-memory", "values", "all")]["em_diff"] == 40.0  # (1-0 + 0 + 0 + 0 + 1-0) / 5
    assert diffs[("agent-memory", "values", "all")]["questions"] == 5
    assert diffs[("values", "agent", "all")]["em_diff"] == round(100 * (1 / 5 - sum(r.em for r in agent) / 5), 2)
    assert record["parameters"]["joined"] == [
        {
            "folder": str(other),
            "system": "agent-memory",
            "alias": "values",
            "manifest": {"memory": {"solution": "program"}},
        }
    ]
    # the other folder asked the baseline otherwise: not paired, refused
    write_answers(other / "answers.jsonl", [dataclasses.replace(agent[2], generated="Answer: 7")])
    assert partial.main([*args, *join]) == 2
    assert (
        f"agent answered {agent[2].question_uid} otherwise in {other}: not the same prompts" in capsys.readouterr().err
    )
    assert partial.main([*args, "--join", f"{other}:agent-memory"]) == 2  # no alias
    assert partial.main([*args, "--join", f"{here}:agent-memory=agent"]) == 2  # the alias is taken
    write_answers(other / "answers.jsonl", answers("agent-memory", [0, 0, 1, 0, 0]))
    assert partial.main([*args, *join, "--pair", "agent-memory:nobody"]) == 2
    assert "both among --systems" in capsys.readouterr().err


def test_differences_by_route_group_the_questions_by_the_route_the_agent_takes(tmp_path, capsys):
    partial = bench_script("tatqa_partial")
    contexts = read_tatqa(SAMPLE)
    systems = {"base": lambda *_: "Answer: 1", "other": lambda q, *_: "Answer: 1" if "2019" in q else "Answer: x"}
    results = evaluate(contexts, systems).results
    run = tmp_path / "run"
    run.mkdir()
    write_answers(run / "answers.jsonl", results)
    bench = tmp_path / "results"
    args = [str(run), "by-route", "--systems", "base,other", "--by-route", str(SAMPLE), "--results-dir", str(bench)]
    assert partial.main(args) == 0
    rows = json.loads((bench / "by-route.json").read_text(encoding="utf-8"))["tables"]["route_differences"]
    routes = partial.question_routes(SAMPLE)
    em = {(r.system, r.question_uid): r.em for r in results}
    assert {r["route"] for r in rows} == set(routes.values()) and all(r["system"] == "other" for r in rows)
    for row in rows:
        uids = [u for u in routes if routes[u] == row["route"]]
        diffs = [em[("other", u)] - em[("base", u)] for u in uids]
        assert row["questions"] == len(uids)
        assert (row["won"], row["lost"]) == (sum(d > 0 for d in diffs), sum(d < 0 for d in diffs))
        assert abs(row["em_diff"] - 100 * sum(diffs) / len(diffs)) < 0.01
        assert row["ci_low"] <= row["em_diff"] <= row["ci_high"]
    # a file that does not hold the run's questions is refused, naming one
    other = tmp_path / "other.json"
    other.write_text(json.dumps([json.loads(SAMPLE.read_text(encoding="utf-8"))[0]]), encoding="utf-8")
    assert partial.main([*args[:5], str(other), "--results-dir", str(bench)]) == 2
    assert "in that file" in capsys.readouterr().err
