"""bench/report_readers.py: two agent readers' reports of one batch side by side (pure: no Neo4j, no model; the
records are in the format ``finkg report --reader agent|reader-calc`` writes, cut to the fields the script reads)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import bench_script


def _record(qid: str, reader: str, route: str, status: str, answer: str, calls: int, tokens: int) -> dict:
    reasons = [] if status == "answered" else [f"{status}: why"]
    return {
        "id": qid,
        "reader": reader,
        "model_id": "gguf:abc" + ("+lora:ed7b" if reader == "reader-calc" else ""),
        "route": route,
        "answer_status": status,
        "answer": answer if status == "answered" else f"could not answer ({status}): why",
        "reasons": reasons,
        "gate": {"reasons": reasons},
        "calls": {"agent": {"llm_calls": calls, "prompt_tokens": tokens}},
        "seconds": 1.5,
    }


def _folder(tmp_path: Path, reader: str, records: list[dict]) -> Path:
    folder = tmp_path / reader
    folder.mkdir()
    for r in records:
        (folder / f"{r['id']}.{reader}.json").write_text(json.dumps(r), encoding="utf-8")
    return folder


def test_the_readers_are_counted_and_put_side_by_side_per_question(tmp_path):
    agent = _folder(
        tmp_path,
        "agent",
        [
            _record("q1", "agent", "plan", "answered", "47.11%", 0, 0),
            _record("q2", "agent", "tools", "could not answer", "", 6, 19000),
        ],
    )
    calc = _folder(
        tmp_path,
        "reader-calc",
        [
            _record("q1", "reader-calc", "plan", "answered", "47.11%", 0, 0),
            _record("q2", "reader-calc", "reader", "answered", "3.48%", 1, 544),
        ],
    )
    out = tmp_path / "results"
    assert (
        bench_script("report_readers").main(
            ["x-readers", f"agent={agent}", f"reader-calc={calc}", "--results-dir", str(out)]
        )
        == 0
    )
    rec = json.loads((out / "x-readers.json").read_text())
    assert rec["name"] == "x-readers" and rec["figures"] == {"agent_answered": 1, "reader-calc_answered": 2}
    readers = {r["reader"]: r for r in rec["tables"]["readers"]}
    assert readers["agent"]["llm_route_answered"] == 0 and readers["agent"]["llm_calls"] == 6
    assert readers["reader-calc"]["llm_route_questions"] == 1 and readers["reader-calc"]["llm_route_answered"] == 1
    q2 = next(q for q in rec["tables"]["questions"] if q["id"] == "q2")
    assert q2["agent.answer"] == "" and q2["agent.reason"] == "could not answer: why"
    assert q2["reader-calc.answer"] == "3.48%" and q2["reader-calc.route"] == "reader"


def test_a_question_missing_from_one_folder_or_another_readers_file_is_refused(tmp_path, capsys):
    agent = _folder(tmp_path, "agent", [_record("q1", "agent", "plan", "answered", "1", 0, 0)])
    calc = _folder(tmp_path, "reader-calc", [_record("q9", "reader-calc", "plan", "answered", "1", 0, 0)])
    out = tmp_path / "results"
    assert (
        bench_script("report_readers").main(["x", f"agent={agent}", f"reader-calc={calc}", "--results-dir", str(out)])
        == 2
    )
    assert "missing" in capsys.readouterr().err and not out.exists()
    (calc / "q1.reader-calc.json").write_text(json.dumps(_record("q1", "agent", "plan", "answered", "1", 0, 0)))
    assert (
        bench_script("report_readers").main(["x", f"agent={agent}", f"reader-calc={calc}", "--results-dir", str(out)])
        == 2
    )
    assert "q1.reader-calc.json: written by reader 'agent'" in capsys.readouterr().err
