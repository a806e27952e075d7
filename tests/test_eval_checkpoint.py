"""The evaluations' one resume scheme (finkg/eval/checkpoint.py): an append-only item log and a manifest."""

from __future__ import annotations

import json

import pytest

from finkg.eval.checkpoint import ItemLog, check_manifest, write_manifest
from kg.errors import EvaluationError


class RunError(EvaluationError):
    pass


def test_items_are_kept_line_by_line_and_a_killed_write_is_asked_again(tmp_path):
    """Each item is on disk once ``add`` returns; a last line cut off by a kill is dropped, and the file is
    rewritten without it before new lines follow, so no record is glued to half a line."""
    log = ItemLog(tmp_path / "out" / "answers.jsonl", "an answer record")
    assert log.read() == []
    with log.appending() as (earlier, add):
        assert earlier == []
        add({"id": "q1", "answer": "3,181"})
        assert json.loads(log.path.read_text(encoding="utf-8")) == {"id": "q1", "answer": "3,181"}  # flushed
        add({"id": "q2", "answer": "ç"})
    log.path.write_text(log.path.read_text(encoding="utf-8") + '{"id": "q3", "ans', encoding="utf-8")
    assert [r["id"] for r in log.read()] == ["q1", "q2"]
    with log.appending() as (earlier, add):
        assert [r["id"] for r in earlier] == ["q1", "q2"]
        add({"id": "q3", "answer": "1"})
    lines = log.path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["id"] for x in lines] == ["q1", "q2", "q3"]
    assert not log.path.with_name("answers.jsonl.tmp").exists()


@pytest.mark.parametrize("bad", ["{not json", "[1, 2]", '"a string"'])
def test_a_malformed_line_before_the_last_names_the_file_and_line_and_changes_nothing(tmp_path, bad):
    path = tmp_path / "answers.jsonl"
    text = "\n".join(['{"id": "q1"}', bad, '{"id": "q3"}']) + "\n"
    path.write_text(text, encoding="utf-8")
    log = ItemLog(path, "an answer record", RunError)
    with pytest.raises(RunError, match=r"answers\.jsonl:2: not an answer record .*move the file away"):
        log.read()
    with pytest.raises(RunError), log.appending():
        pass
    assert path.read_text(encoding="utf-8") == text  # nothing rewritten or lost


def test_a_folder_is_resumed_only_by_a_run_that_agrees_on_the_fields_that_decide_the_answers(tmp_path):
    folder = tmp_path / "run"
    check_manifest(folder, {"model_id": "gguf:aaa"}, ["model_id"])  # no manifest yet: nothing to disagree with
    write_manifest(folder, {"model_id": "gguf:aaa", "source": "dev.json"})
    check_manifest(folder, {"model_id": "gguf:aaa", "source": "other.json"}, ["model_id"])  # source may differ
    with pytest.raises(
        RunError, match=r"manifest\.json: this folder's answers have model_id 'gguf:aaa', this run's is 'gguf:bbb'"
    ):
        check_manifest(folder, {"model_id": "gguf:bbb"}, ["model_id"], "use another --out", RunError)
    check_manifest(folder, {"model_id": "gguf:aaa", "embedder": "x"}, ["model_id", "embedder"])  # not recorded then
    (folder / "manifest.json").write_text("{oops", encoding="utf-8")
    with pytest.raises(EvaluationError, match=r"manifest\.json: not JSON"):
        check_manifest(folder, {"model_id": "gguf:aaa"}, ["model_id"])
