"""How often the rule of :mod:`generation.agent.table_forms` applies to TAT-QA questions, and how often it is right.

Scored with TAT-QA's own EM (:mod:`finkg.eval.metrics.tatqa`; gold from the dataset) on the questions the rule was
developed on, never on the frozen test questions (``data/questions/tatqa-test-uids.txt`` and ``tatqa-test2-uids.txt``;
the script refuses to score one):

- ``train``: every question of the training half of TAT-QA dev (split by context, ``split_contexts``);
- ``dev-sample``: the 300-question development sample of the evaluation half (``stratified_sample``, seed 0).

For each form: questions of that form (``read``), answered by the rule (the others go to the model), and the EM of
the rule's answers with a bootstrap 95 % interval. No LLM, no graph.

    python bench/tatqa_forms.py [TATQA_DEV_JSON]

Writes ``bench/results/tatqa-forms.json``.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from finkg.eval.metrics.intervals import bootstrap_mean  # noqa: E402
from finkg.eval.metrics.tatqa import gold_answers, score  # noqa: E402
from finkg.eval.results import write_result  # noqa: E402
from finkg.eval.tatqa import DEV_SAMPLE, read_question_list, stratified_sample  # noqa: E402
from generation.agent.table_forms import answer_table_form, read_form  # noqa: E402
from generation.llm.answer_line import extract_answer  # noqa: E402
from ingest.datasets.tatqa import read_tatqa, split_contexts  # noqa: E402

TEST_UIDS = (ROOT / "data" / "questions" / "tatqa-test-uids.txt", ROOT / "data" / "questions" / "tatqa-test2-uids.txt")
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "tatqa" / "tatqa_dataset_dev.json"


def main() -> int:
    ap = argparse.ArgumentParser(description="How often the table-forms rule applies to TAT-QA questions, and its EM.")
    ap.add_argument("path", nargs="?", type=Path, default=DEFAULT_DATA, help="TAT-QA's tatqa_dataset_dev.json")
    a = ap.parse_args()
    contexts = read_tatqa(a.path)
    train, evaluation = split_contexts(contexts)
    test = set().union(*(read_question_list(p, evaluation) for p in TEST_UIDS))
    sample = stratified_sample(evaluation, DEV_SAMPLE)
    if sample & test:
        raise SystemExit(f"{len(sample & test)} test questions are in the development sample: refusing")
    parts = {"train": (train, None), "dev-sample": (evaluation, sample)}
    rows, figures = [], {}
    for part, (ctxs, keep) in parts.items():
        scores: dict[str, list[float]] = defaultdict(list)
        read: dict[str, int] = defaultdict(int)
        total = 0
        for c in ctxs:
            paragraphs = [p.text for p in c.passages]
            for q in c.questions:
                if keep is not None and q.uid not in keep:
                    continue
                if q.uid in test:
                    raise SystemExit(f"question {q.uid} is a frozen test question: refusing to score it")
                total += 1
                form = read_form(q.question)
                if form is None:
                    continue
                read[form.form] += 1
                got = answer_table_form(q.question, c.table, paragraphs)
                if got is None:
                    continue
                answer, scale = got
                extracted = extract_answer(f"Answer: {answer.answer} {scale}".rstrip())
                gold = gold_answers({"answer": q.answer, "answer_type": q.answer_type})
                s = score(list(extracted.spans), extracted.scale, gold, q.answer_type, q.scale or "")
                scores[form.form].append(s.em)
        every = [x for v in scores.values() for x in v]
        for name, ems in [*sorted(scores.items()), ("all forms", every)]:
            ci = bootstrap_mean(ems)
            row = {
                "part": part,
                "form": name,
                "questions": total,
                "read": sum(read.values()) if name == "all forms" else read[name],
                "answered": len(ems),
                "em": f"{100 * ci.mean:.1f} [{100 * ci.low:.1f}, {100 * ci.high:.1f}]",
            }
            rows.append(row)
            print(f"{part:10s} {name:18s} read {row['read']:4d} answered {len(ems):4d} EM {row['em']}")
        figures[part] = {
            "questions": total,
            "answered": len(every),
            "coverage_pct": round(100 * len(every) / total, 1),
            "em_pct": round(100 * sum(every) / len(every), 1) if every else None,
        }
    write_result(
        "tatqa-forms",
        {"data": a.path.name, "dev_sample": DEV_SAMPLE, "test_questions_excluded": len(test)},
        figures,
        tables={"tatqa-forms": rows},
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
