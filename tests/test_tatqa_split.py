"""The frozen TAT-QA question lists (issue 45: a test set never tuned on) and the answer engine's count route
(issue 44 item 3). The lists are data/questions/tatqa-{dev,test,test2}-uids.txt, written by
scripts/make_tatqa_test_split.py from TAT-QA's dev file; the contexts read here are real TAT-QA records
(tests/data/tatqa_*.json, data/NOTICE.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from finkg.eval.tatqa import DEV_SAMPLE, engine_system, held_out_questions, read_question_list, stratified_sample
from ingest.datasets.tatqa import read_tatqa
from kg.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
UID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _uids(name: str) -> list[str]:
    lines = (ROOT / "data" / "questions" / name).read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize("name", ["tatqa-test-uids.txt", "tatqa-test2-uids.txt"])
def test_the_test_questions_are_disjoint_from_everything_tuned_on(name):
    dev, test = _uids("tatqa-dev-uids.txt"), _uids(name)
    assert len(dev) == len(set(dev)) == DEV_SAMPLE and len(test) == len(set(test)) == 150
    assert all(UID.match(u) for u in dev + test)
    assert not set(dev) & set(test)
    fixtures = {q.uid for f in sorted(DATA.glob("tatqa*.json")) for c in read_tatqa(f) for q in c.questions}
    fixture_text = "\n".join(f.read_text(encoding="utf-8") for f in DATA.glob("tatqa*.json"))
    assert not set(test) & fixtures and not any(u in fixture_text for u in test)


def test_the_two_test_lists_share_no_question():
    assert not set(_uids("tatqa-test-uids.txt")) & set(_uids("tatqa-test2-uids.txt"))


def test_test_questions_leave_out_the_development_sample_and_the_excluded():
    contexts = read_tatqa(DATA / "tatqa_dev_sample.json")
    everything = {q.uid for c in contexts for q in c.questions}
    dev = stratified_sample(contexts, 10)
    excluded = {next(iter(everything - dev))}
    test = held_out_questions(contexts, 5, dev_sample=10, exclude=excluded)
    assert len(test) == 5 and not test & dev and not test & excluded and test <= everything
    assert test == held_out_questions(contexts, 5, dev_sample=10, exclude=excluded)  # deterministic


def test_a_question_list_names_the_line_of_an_unknown_uid(tmp_path):
    contexts = read_tatqa(DATA / "tatqa_dev_sample.json")
    known = contexts[0].questions[0].uid
    good = tmp_path / "uids.txt"
    good.write_text(f"# a comment\n\n{known}  # the first\n", encoding="utf-8")
    assert read_question_list(good, contexts) == {known}
    bad = tmp_path / "bad.txt"
    bad.write_text(f"{known}\n00000000-0000-0000-0000-000000000000\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.txt:2: question 00000000-0000-0000-0000-000000000000 is not in"):
        read_question_list(bad, contexts)


def test_the_engine_answers_a_count_question_with_the_table_count_tool_and_no_llm():
    samples = read_tatqa(DATA / "tatqa_dev_sample.json")
    c = next(c for c in samples if any("Total services" in q.question for q in c.questions))
    q = next(q for q in c.questions if "Total services" in q.question)
    answer = engine_system(None, tables={c.table_uid: c.table})  # type: ignore[arg-type]  (no LLM on this route)
    text = answer(q.question, list(c.facts), list(c.passages))
    assert text.endswith(f"Answer: {q.answer}") and "(y2020 > 5000)" in text
