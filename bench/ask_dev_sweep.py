"""Sweep the development half of the analyst question set far beyond its 159 questions: many more questions over the
dev-half companies only, phrased by the question set's own generator, gold from its own independent pandas code.

Issue 44 ("0 wrong answers with the gate passed"): the test half may not be read, so wrong answers are hunted on the
dev half. The generator (``scripts/make_user_questions.py``: its filing rules, company names, templates, measure and
period phrases, and ``compute``: the gold from the shipped 2009q3 num.txt with pandas, no finkg code) writes, for
dev-half filings only (the split rule: sha256 of the CIK, even = dev),

- ``--mode every``: every dev filing x every value and ratio measure, one fixed phrasing;
- ``--mode random``: ``--n`` questions with random filings, measures, names, templates and period phrases
  (``--seed``; ``--kinds ratio`` for ratios only).

Each is asked to ``generation.agent.ask.answer_sec_question`` on the graph of the settings (the shipped quarter
loaded: ``finkg ingest sec data/sec-fsds/2009q3.zip``); an answer within 1 % of the gold is right. Prints the counts
and every wrong answer; writes ``bench/results/ask-dev-sweep-<mode>.json``.

    python bench/ask_dev_sweep.py --mode every
    python bench/ask_dev_sweep.py --mode random --seed 8 --n 2500
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import make_user_questions as mk  # noqa: E402  # pyright: ignore[reportMissingImports]  (the question set generator)

from finkg.api import _opened  # noqa: E402
from finkg.config import load_settings  # noqa: E402
from finkg.eval.results import write_result  # noqa: E402
from generation.agent.ask import answer_sec_question  # noqa: E402


def dev_filings() -> tuple[list[mk.Filing], mk.Facts, set[int]]:
    """The dev-half filings the generator would use (its rules), their facts, and the CIKs filing again later."""
    sub, num, daily = mk.read(mk.QUARTER, "sub.txt"), mk.read(mk.QUARTER, "num.txt"), mk.read(mk.DAILY, "sub.txt")
    known = set(sub.cik.astype(int))
    all_names = {int(r.cik): r.name for r in sub.itertuples()} | {
        int(r.cik): r.name for r in daily.itertuples() if int(r.cik) not in known
    }
    counts = sub.cik.value_counts()
    out = []
    for r in sub.itertuples():
        if counts[r.cik] != 1 or r.form not in ("10-Q", "10-Q/A") or r.nciks != "1" or not r.fp.startswith("Q"):
            continue
        f = mk.Filing(
            r.adsh, int(r.cik), r.name, int(r.sic or 0), r.fye, r.fp, r.period, mk.fiscal_date(r.instance, r.period)
        )
        f.names = mk.names_for(f.cik, f.name, all_names)
        if f.names and mk.split_of(f.cik) == "dev":
            out.append(f)
    later = set(daily.cik.astype(int)) | {1318605, 1640147, 320193, 1045810}
    return out, mk.Facts(num), later


def fixed_question(f: mk.Filing, m: mk.Measure) -> str:
    co = f.names[0]
    if m.span == "instant":
        return f"What was {mk.possessive(co)} {m.phrases[0]} as of {mk.day(f.fiscal)}?"
    if m.span == "ytd":
        return f"What was {mk.possessive(co)} {m.phrases[0]} for the {mk.SPANS[f.ytd_qtrs]} months ended {mk.day(f.fiscal)}?"
    return f"What was {mk.possessive(co)} {m.phrases[0]} in the quarter ended {mk.day(f.fiscal)}?"


def random_question(rng: random.Random, f: mk.Filing, m: mk.Measure, later: set[int]) -> str:
    if m.span in ("quarter", "quarter_instant"):
        style, p = "quarter", rng.choice(mk.quarter_phrases(f))
    elif m.span == "ytd":
        style, p = "ytd", rng.choice(mk.ytd_phrases(f))
    elif f.cik not in later and rng.random() < 0.3:
        style, p = "latest", ""
    else:
        style, p = "instant", rng.choice(mk.instant_phrases(f))
    values = {
        "quarter": mk.T_VALUE_FLOW,
        "ytd": mk.T_VALUE_FLOW,
        "instant": mk.T_VALUE_INSTANT,
        "latest": mk.T_VALUE_LATEST,
    }
    ratios = {"quarter": mk.T_RATIO, "ytd": mk.T_RATIO, "instant": mk.T_RATIO_INSTANT, "latest": mk.T_RATIO_LATEST}
    co = rng.choice(f.names)
    template = rng.choice((values if m.kind == "value" else ratios)[style])
    return mk.fill(template, co=co, pos=mk.possessive(co), m=rng.choice(m.phrases), p=p)


def main() -> int:
    ap = argparse.ArgumentParser(description="Sweep the dev half of the analyst questions (issue 44).")
    ap.add_argument("--mode", choices=("every", "random"), default="every")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--n", type=int, default=2500, help="random mode: questions asked")
    ap.add_argument("--kinds", default="value,ratio", help="measure kinds: value, ratio or both")
    a = ap.parse_args()
    filings, facts, later = dev_filings()
    measures = [m for m in mk.MEASURES.values() if m.kind in a.kinds.split(",")]
    rng = random.Random(a.seed)
    if a.mode == "every":
        items = [(f, m) for f in filings for m in measures]
    else:
        items = [(rng.choice(filings), rng.choice(measures)) for _ in range(20 * a.n)]
    counts = {"questions": 0, "correct": 0, "abstained": 0, "wrong_gate_passed": 0}
    wrong = []
    with _opened(None, load_settings()) as (graph, _):
        for f, m in items:
            if a.mode == "random" and counts["questions"] >= a.n:
                break
            spec = mk.compute(facts, f, m)
            if spec is None:
                continue
            q = fixed_question(f, m) if a.mode == "every" else random_question(rng, f, m, later)
            got = answer_sec_question(graph, q)
            counts["questions"] += 1
            if got.status != "answered" or got.value is None:
                counts["abstained"] += 1
            elif abs(got.value - spec["value"]) <= 0.01 * abs(spec["value"]) + 1e-9:
                counts["correct"] += 1
            else:
                counts["wrong_gate_passed"] += 1
                wrong.append({"question": q, "gold": spec["value"], "answer": got.value})
    print(json.dumps(counts))
    for w in wrong:
        print("WRONG", json.dumps(w))
    params = {"mode": a.mode, "seed": a.seed, "n": a.n, "kinds": a.kinds, "split": "dev", "filings": len(filings)}
    write_result(f"ask-dev-sweep-{a.mode}", params, counts, tables={"wrong": wrong})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
