"""Write the frozen TAT-QA question lists of the evaluation half (issue 45: a test set never tuned on).

- ``data/questions/tatqa-dev-uids.txt``: the 300-question development sample (:func:`finkg.eval.tatqa.stratified_sample`
  of the evaluation half, seed 0): memory configurations, routes and the engine's per-route choice were tuned on it;
- ``data/questions/tatqa-test-uids.txt``: :func:`finkg.eval.tatqa.held_out_questions`, 150 questions of the evaluation
  half outside that sample and outside the contexts of the tests' fixtures ``tests/data/tatqa*.json``
  (stratified, seed 1): scored, never read;
- ``data/questions/tatqa-test2-uids.txt``: 150 more questions drawn the same way from what is left (outside the
  development sample, the fixtures' contexts and the first test list). Written at stop 50, after the first test
  list had been scored several times while the table-forms rule grew: this one is scored once, with the engine
  as it stands, so its figure was never used to choose anything.

Deterministic from the TAT-QA file (``tatqa_dataset_dev.json``, Zhu et al., ACL 2021):

    python scripts/make_tatqa_test_split.py ../shared/data/tatqa/tatqa_dataset_dev.json

Score the test questions with ``finkg eval tatqa FILE --half eval --questions data/questions/tatqa-test-uids.txt``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from finkg.eval.tatqa import DEV_SAMPLE, held_out_questions, stratified_sample  # noqa: E402
from ingest.datasets.tatqa import read_tatqa, split_contexts  # noqa: E402

TEST_SIZE = 150
FIXTURES = sorted((ROOT / "tests" / "data").glob("tatqa*.json"))


def _write(path: Path, uids: set[str], header: str, order: dict[str, int]) -> None:
    lines = [f"# {line}" for line in header.splitlines()] + sorted(uids, key=order.__getitem__)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{path}: {len(uids)} questions")


def main() -> None:
    ap = argparse.ArgumentParser(description="Write the frozen TAT-QA question lists of the evaluation half.")
    ap.add_argument("tatqa", type=Path, help="tatqa_dataset_dev.json")
    ap.add_argument("--out", type=Path, default=ROOT / "data" / "questions")
    a = ap.parse_args()
    evaluation = split_contexts(read_tatqa(a.tatqa))[1]
    order = {q.uid: i for i, q in enumerate(q for c in evaluation for q in c.questions)}
    dev = stratified_sample(evaluation, DEV_SAMPLE)
    fixture_tables = {c.table_uid for f in FIXTURES for c in read_tatqa(f)}
    read = {q.uid for c in evaluation if c.table_uid in fixture_tables for q in c.questions}
    test = held_out_questions(evaluation, TEST_SIZE, exclude=read)
    test2 = held_out_questions(evaluation, TEST_SIZE, exclude=read | test)
    assert not dev & test and not dev & test2 and not test & test2
    made = f"made by scripts/make_tatqa_test_split.py from {a.tatqa.name} (evaluation half)"
    _write(
        a.out / "tatqa-dev-uids.txt",
        dev,
        f"TAT-QA development sample: {DEV_SAMPLE} questions, tuned on.\n{made}",
        order,
    )
    _write(
        a.out / "tatqa-test-uids.txt",
        test,
        f"TAT-QA test questions: {TEST_SIZE} of the evaluation half outside the development sample; "
        f"scored, never read.\n{made}",
        order,
    )
    _write(
        a.out / "tatqa-test2-uids.txt",
        test2,
        f"TAT-QA second test questions: {TEST_SIZE} more of the evaluation half outside the development sample and "
        f"the first test list; scored once, never read.\n{made}",
        order,
    )


if __name__ == "__main__":
    main()
