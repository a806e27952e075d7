"""Issue 44: an exhaustive development check of `finkg ask`: every development-half 10-Q of the shipped 2009q3 quarter
asked every value and ratio measure of ``scripts/make_user_questions.py`` that its facts hold, once each.

The question sets (``data/questions/sec-user*.jsonl``) draw a few questions per company at random; a fault that
shows on one company's facts (a synonym the engine reads first, a scale, a co-registrant) may not be drawn. Here
every (filing, measure) pair the generator can compute a gold for is asked, in one plain phrasing ("What was
Abbott's operating margin in the quarter ended June 30, 2009?": the company's first name form, the measure's first
phrase, the filing's first period phrase), so what is checked is the facts, not the words. Development half only
(the split rule of the generator: sha256 of the CIK); the test half is never asked here.

Gold: the generator's own pandas computation from num.txt (independent of finkg's engine, as the question sets'
gold). Scored as the question sets are: correct within 1 % relative, abstained, wrong with the gate passed.
Answers are checkpointed in ``--out`` (a killed run resumes there). Writes
``bench/results/ask-dev-exhaustive.json``.

    python bench/ask_dev_exhaustive.py [--kinds value,ratio] [--limit N] [--out DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from finkg.eval.results import write_result

ROOT = Path(__file__).resolve().parents[1]
TOLERANCE = 0.01


def generator():
    """scripts/make_user_questions.py as a module (its rules, measures and gold computation)."""
    spec = importlib.util.spec_from_file_location("make_user_questions", ROOT / "scripts" / "make_user_questions.py")
    assert spec is not None and spec.loader is not None
    mq = importlib.util.module_from_spec(spec)
    sys.modules["make_user_questions"] = mq
    spec.loader.exec_module(mq)
    return mq


def items(mq, kinds: list[str]) -> list[dict]:
    """Every (development filing, measure) pair with a gold, as a question row."""
    sub, num, daily = mq.read(mq.QUARTER, "sub.txt"), mq.read(mq.QUARTER, "num.txt"), mq.read(mq.DAILY, "sub.txt")
    facts = mq.Facts(num)
    out = []
    for f in mq.question_filings(sub, mq.company_names(sub, daily)):
        if mq.split_of(f.cik) != "dev":
            continue
        for m in mq.MEASURES.values():
            if m.kind not in kinds:
                continue
            spec = mq.compute(facts, f, m)
            if spec is None:
                continue
            if m.span in ("quarter", "quarter_instant"):
                period, q = mq.quarter_phrases(f)[0], "What was {pos} {m} in {p}?"
            elif m.span == "ytd":
                period, q = mq.ytd_phrases(f)[0], "What was {pos} {m} in {p}?"
            else:
                period, q = mq.instant_phrases(f)[0], "What was {pos} {m} {p}?"
            question = q.format(pos=mq.possessive(f.names[0]), m=m.phrases[0], p=period)
            out.append({"id": f"{f.adsh}:{m.id}", "kind": m.kind, "measure": m.id, "cik": f.cik,
                        "question": question, "gold": spec["value"]})  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", default="value,ratio", help="measure kinds: value, ratio or both")
    ap.add_argument("--limit", type=int, default=0, help="only the first N questions (a smoke run)")
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "ask-dev-exhaustive", help="checkpoint folder")
    ap.add_argument("--results-dir", type=Path, default=None)
    args = ap.parse_args()
    from finkg.api import open_graph
    from finkg.config import load_settings
    from generation.agent.ask import answer_sec_question

    rows = items(generator(), [k for k in args.kinds.split(",") if k])
    if args.limit:
        rows = rows[: args.limit]
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "answers.jsonl"
    done = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            a = json.loads(line)
            done[a["id"]] = a
    todo = [r for r in rows if r["id"] not in done]
    print(f"{len(rows)} development questions ({len(done)} answered before, {len(todo)} to ask)", flush=True)
    t0 = time.perf_counter()
    with open_graph(load_settings()) as graph, path.open("a", encoding="utf-8") as fh:
        for i, r in enumerate(todo, 1):
            s = time.perf_counter()
            a = answer_sec_question(graph, r["question"])
            row = {"id": r["id"], "status": a.status, "value": a.value, "answer": a.answer,
                   "seconds": time.perf_counter() - s}  # fmt: skip
            done[r["id"]] = row
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            if i % 100 == 0 or i == len(todo):
                rate = i / (time.perf_counter() - t0)
                print(f"{i}/{len(todo)} asked, {rate:.2f} q/s, ETA {(len(todo) - i) / rate:.0f} s", flush=True)
    cats: Counter[str] = Counter()
    by_kind: dict[str, Counter[str]] = {}
    wrong = []
    for r in rows:
        a = done[r["id"]]
        if a["status"] != "answered":
            cat = "abstained"
        elif a["value"] is not None and abs(a["value"] - r["gold"]) <= TOLERANCE * abs(r["gold"]) + 1e-9:
            cat = "correct"
        else:
            cat = "wrong_gate_passed"
            wrong.append({**r, "got": a["value"], "answer": a["answer"]})
        cats[cat] += 1
        by_kind.setdefault(r["kind"], Counter())[cat] += 1
    secs = [done[r["id"]]["seconds"] for r in rows]
    figures = {
        "questions": len(rows),
        "companies": len({r["cik"] for r in rows}),
        "measures": len({r["measure"] for r in rows}),
        **{k: cats[k] for k in ("correct", "abstained", "wrong_gate_passed")},
        "median_seconds": statistics.median(secs) if secs else None,
    }
    table = [
        {
            "kind": k,
            "questions": sum(c.values()),
            "correct": c["correct"],
            "abstained": c["abstained"],
            "wrong, gate passed": c["wrong_gate_passed"],
        }
        for k, c in sorted(by_kind.items())
    ]
    for k, v in figures.items():
        print(f"{k}: {v}")
    out = write_result(
        "ask-dev-exhaustive",
        {"kinds": args.kinds, "tolerance": TOLERANCE, "split": "dev", **({"limit": args.limit} if args.limit else {})},
        figures,
        tables={"kinds": table, "wrong": wrong},
        directory=args.results_dir,
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
