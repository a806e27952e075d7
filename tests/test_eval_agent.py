"""``finkg eval agent`` (finkg/eval/agent.py, finkg.api.eval_agent): issue 17's benchmark in one command.

The SEC part's gold (computed by finkg/eval/agent.py from num.txt) is checked against this suite's own gold
(tests/test_agent_sec_questions.py, pandas over the same file, written separately); the agent's answers are scored
against it on the real Neo4j with the shipped quarter. The targets are checked on rows whose outcome is known, met
and missed; bad question files name the file and line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import test_agent_ask
import test_agent_sec_questions as sec_test
from conftest import minilm_dir
from test_agent_tools import QUARTER
from test_llm import smol_gguf

from finkg import api
from finkg.config import load_settings
from finkg.eval import agent as agent_eval
from kg.errors import ConfigError, EvaluationError

loaded = test_agent_ask.loaded  # the fixture: the shipped quarter, loaded once
SAMPLE = Path(__file__).parent / "data" / "tatqa_dev_sample.json"


def test_the_gold_of_every_sec_question_equals_the_suites_own():
    num = agent_eval.read_num(QUARTER)
    questions = agent_eval.read_sec_questions(sec_test.QUESTIONS)
    assert len(questions) == len(sec_test.questions()) >= 40
    for q in questions:
        assert agent_eval.sec_gold(q, num) == sec_test.gold(q), q["id"]


def test_a_bad_question_file_names_its_file_and_line(tmp_path):
    path = tmp_path / "q.jsonl"
    good = '{"id": "a", "kind": "current-ratio", "question": "q?", "gold": {}}'
    for bad, said in (
        ("{not json", "not JSON"),
        ('{"id": "b", "kind": "current-ratio", "question": "q?"}', "missing gold"),
        ('{"id": "b", "kind": "ebitda", "question": "q?", "gold": {}}', "unknown kind 'ebitda'"),
    ):
        path.write_text(f"# a comment\n{good}\n{bad}\n", encoding="utf-8")
        with pytest.raises(agent_eval.SecQuestionError, match=f"{path}:3: {said}"):
            agent_eval.read_sec_questions(path)
    q = json.loads(good)
    with pytest.raises(agent_eval.SecQuestionError, match="question a: its gold record lacks 'adsh'"):
        agent_eval.sec_gold(q, agent_eval.read_num(QUARTER))


def test_answers_are_exact_to_the_cent_or_by_name():
    assert agent_eval.exact("1.79", "number", 1.79) and agent_eval.exact("USD 15,608,000,000", "number", 15608000000.0)
    assert agent_eval.exact("-7.36%", "number", -7.36) and not agent_eval.exact("-7.37%", "number", -7.36)
    assert agent_eval.exact("Johnson & Johnson", "name", "JOHNSON & JOHNSON")
    assert not agent_eval.exact(None, "number", 1.0) and not agent_eval.exact("n/a", "number", 1.0)


def _rows(em: float, arith: float, seconds: float) -> list[dict]:
    def row(system, kind, value):
        return {
            "system": system,
            "answer_type": kind,
            "questions": 300,
            "em": value,
            "em_ci_low": value - 5,
            "em_ci_high": value + 5,
            "median_seconds": seconds,
        }

    return [row("agent", "all", em), row("agent", "arithmetic", arith)]


def _diffs(memory: float, shuffled: float) -> list[dict]:
    return [
        {"system": s, "answer_type": "all", "em_diff": d, "ci_low": d - 3, "ci_high": d + 3}
        for s, d in (("agent-memory", memory), ("agent-shuffled", shuffled))
    ]


def test_the_targets_are_met_missed_or_not_run():
    sec = [{"exact": True, "answer": "1", "gate_passed": True}] * 9 + [
        {"exact": False, "answer": None, "gate_passed": None}
    ]
    met = agent_eval.targets(_rows(41.7, 42.2, 12.0), _diffs(3.5, 0.5), sec)
    assert [t["met"] for t in met] == [True, True, True, True, True, True]
    missed = agent_eval.targets(_rows(39.9, 30.0, 29.1), _diffs(1.0, -1.0), sec[1:])
    assert [t["met"] for t in missed] == [False, False, False, False, True, False]
    assert "memory +1.0 [-2.0, +4.0], shuffled -1.0" in missed[2]["measured"]
    control = agent_eval.targets(_rows(41.7, 42.2, 12.0), _diffs(3.5, 3.5), [])  # the control shows it too
    assert control[2]["met"] is False and control[3] == {
        "target": "SEC questions >= 90 % exact",
        "measured": "not run",
        "met": None,
    }
    ungated = [{"exact": True, "answer": "1", "gate_passed": False}]
    assert agent_eval.targets([], [], ungated)[4]["met"] is False


def test_the_sec_part_answers_every_question_exactly_and_writes_the_results(loaded, tmp_path):
    got = api.eval_agent(None, sec_questions=sec_test.QUESTIONS, quarter=QUARTER, out=tmp_path / "agent")
    total = len(sec_test.questions())
    assert got.tatqa is None and len(got.sec) == total
    assert got.sec_summary[0] == {**got.sec_summary[0], "kind": "all", "questions": total}
    assert sum(r["exact"] for r in got.sec) / total >= 0.9
    assert all(r["gate_passed"] for r in got.sec if r["answer"] is not None)
    by = {t["target"]: t for t in got.targets}
    assert by["SEC questions >= 90 % exact"]["met"] is True and by["TAT-QA EM >= 40 (agent)"]["met"] is None
    record = json.loads((tmp_path / "agent" / "eval-agent.json").read_text())
    assert record["name"] == "eval-agent" and len(record["tables"]["sec"]) == total
    assert len((tmp_path / "agent" / "sec.jsonl").read_text().splitlines()) == total


def test_a_quarter_not_in_the_graph_or_nothing_to_do_is_a_clear_error(loaded, tmp_path):
    other = tmp_path / "1999q1.zip"
    other.write_bytes(b"")
    with pytest.raises(EvaluationError, match=r"no filing of 1999q1\.zip in the graph.*finkg ingest sec"):
        api.eval_agent(None, sec_questions=sec_test.QUESTIONS, quarter=other, out=tmp_path / "x")
    with pytest.raises(ConfigError, match="nothing to evaluate"):
        api.eval_agent(None, sec_questions=None, out=tmp_path / "y")
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


@pytest.mark.model
def test_the_tatqa_part_asks_the_same_questions_of_each_system_and_resumes(tmp_path):
    """SmolLM2 through llama.cpp (too small to be right: the mechanics), two systems on the sample file's
    evaluation half; a rerun with the same folder asks nothing again."""
    settings = load_settings(
        llm_backend="llama-cpp",
        llm_model_path=smol_gguf(),
        llm_cache_dir=tmp_path / "llm-cache",
        embedding_model_path=minilm_dir(),
    )
    kwargs = {"sec_questions": None, "systems": ["agent", "two-stage"], "sample": 4, "limit": 1, "workers": 1}
    got = api.eval_agent(SAMPLE, out=tmp_path / "agent", settings=settings, **kwargs)
    assert got.tatqa is not None and got.tatqa.systems == ["agent", "two-stage"]
    answered = {(r.system, r.question_uid) for r in got.tatqa.results}
    assert len(answered) == 2 and {u for _, u in answered} == {u for s, u in answered if s == "agent"}
    assert [d["system"] for d in got.tatqa.differences() if d["answer_type"] == "all"] == ["two-stage"]
    by = {t["target"]: t for t in got.targets}
    assert (
        by["TAT-QA EM >= 40 (agent)"]["measured"].endswith("on 1") and by["SEC questions >= 90 % exact"]["met"] is None
    )
    record = json.loads((tmp_path / "agent" / "eval-agent.json").read_text())
    assert [r["system"] for r in record["tables"]["tatqa"] if r["answer_type"] == "all"] == ["agent", "two-stage"]
    lines = (tmp_path / "agent" / "tatqa" / "answers.jsonl").read_text().splitlines()
    again = api.eval_agent(SAMPLE, out=tmp_path / "agent", settings=settings, **kwargs)
    assert (tmp_path / "agent" / "tatqa" / "answers.jsonl").read_text().splitlines() == lines
    assert [r.generated for r in again.tatqa.results] == [r.generated for r in got.tatqa.results]
