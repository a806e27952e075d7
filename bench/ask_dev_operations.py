"""Issue 44: a development check of two operations users ask for in `finkg ask`: sums ("What was the combined
revenue of Chevron and ConocoPhillips in the quarter ended June 30, 2009?") and yes/no thresholds ("Was Amgen's
current ratio above 2.5 as of June 30, 2009?"), over the shipped 2009q3 quarter's development half.

Items, drawn with ``--seed`` from the development-half 10-Qs of the question sets' generator
(``scripts/make_user_questions.py``: its filing rules, split rule, name forms, measures, phrases and periods):

- **sum**: pairs of companies whose 10-Qs end on the same date in the same fiscal quarter (so "the six months ended"
  is both companies' span), an amount measure (USD) both have a gold for; gold: the sum of the two golds.
- **threshold**: a company, a measure (amount or ratio) with a gold, a number 0.5, 0.8, 1.25 or 2 times the gold
  (two significant digits; "$1.2 billion" for amounts, "35%" for percents, "1.2" for multiples) and a comparison
  ("above", "below", "more than", "less than", "at least", "at most"); gold: whether the gold value meets it.

Gold values come from the generator's pandas computation over num.txt, independent of finkg's engine. Scored: sum:
the value within 1 %; threshold: the answer's yes/no is the gold's and its value within 1 %. Abstained (not answered)
and wrong with the gate passed are counted apart. Writes ``bench/results/ask-dev-operations.json``; answers
checkpointed in ``--out``.

    python bench/ask_dev_operations.py [--seed S] [--limit N] [--out DIR] [--results-dir DIR]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path
from typing import Any

from finkg.eval.results import write_result

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ask_dev_exhaustive as exhaustive  # pyright: ignore[reportMissingImports]

ROOT = Path(__file__).resolve().parents[1]
TOLERANCE = 0.01
FACTORS = (0.5, 0.8, 1.25, 2.0)
COMPARISONS = {"above": ">", "below": "<", "more than": ">", "less than": "<", "at least": ">=", "at most": "<="}


def round2(x: float) -> float:
    """``x`` to two significant digits."""
    if x == 0:
        return 0.0
    return round(x, 1 - math.floor(math.log10(abs(x))))


def written(value: float, unit: str) -> str:
    """A threshold as a user writes it: ``$1.2 billion``, ``$350 million``, ``35%``, ``1.2``."""
    if unit == "USD":
        for scale, word in ((1e9, "billion"), (1e6, "million"), (1e3, "thousand")):
            if abs(value) >= scale:
                return f"${value / scale:g} {word}"
        return f"${value:g}"
    return f"{value:g}%" if unit == "%" else f"{value:g}"


def items(mq, seed: int) -> list[dict]:
    facts, _, filings = exhaustive.development_filings(mq)
    rng = random.Random(seed)
    golds: dict[tuple[str, str], float] = {}
    for f in filings:
        for m in mq.MEASURES.values():
            spec = mq.compute(facts, f, m)
            if spec is not None:
                golds[(f.adsh, m.id)] = spec["value"]
    out = []
    by_period: dict[str, list] = {}
    for f in filings:  # the same period end and the same fiscal quarter: "the six months ended" is both companies'
        by_period.setdefault((f.fiscal, f.ytd_qtrs), []).append(f)
    amounts = [m for m in mq.MEASURES.values() if m.unit == "USD"]
    for f in filings:  # sum: one pair per filing, its partner drawn among the filings of its period end
        partners = [g for g in by_period[(f.fiscal, f.ytd_qtrs)] if g.cik != f.cik]
        m = rng.choice(amounts)
        ok = [g for g in partners if (g.adsh, m.id) in golds]
        if (f.adsh, m.id) not in golds or not ok:
            continue
        g = rng.choice(ok)
        style, phrases = mq.style_phrases(f, m)
        p = phrases[0] if style == "instant" else f"in {phrases[0]}"
        a, b = rng.choice(f.names), rng.choice(g.names)
        question = f"What was the combined {rng.choice(m.phrases)} of {a} and {b} {p}?"
        out.append({"id": f"{f.adsh}:{g.adsh}:{m.id}:sum", "kind": "sum", "measure": m.id, "cik": f.cik,
                    "question": question, "gold": golds[(f.adsh, m.id)] + golds[(g.adsh, m.id)]})  # fmt: skip
    for f in filings:  # threshold: two measures per filing
        have = [m for m in mq.MEASURES.values() if (f.adsh, m.id) in golds and golds[(f.adsh, m.id)] != 0]
        for m in rng.sample(have, min(2, len(have))):
            value = golds[(f.adsh, m.id)]
            number = round2(value * rng.choice(FACTORS))
            words = rng.choice(list(COMPARISONS))
            op = COMPARISONS[words]
            meets = {">": value > number, "<": value < number, ">=": value >= number, "<=": value <= number}[op]
            style, phrases = mq.style_phrases(f, m)
            p = phrases[0] if style == "instant" else f"in {phrases[0]}"
            co = rng.choice(f.names)
            question = f"Was {mq.possessive(co)} {rng.choice(m.phrases)} {words} {written(number, m.unit)} {p}?"
            out.append({"id": f"{f.adsh}:{m.id}:threshold", "kind": "threshold", "measure": m.id, "cik": f.cik,
                        "question": question, "gold": value, "meets": meets})  # fmt: skip
    return out


def judge(row: dict, a: dict) -> str:
    if a["status"] != "answered":
        return "abstained"
    got = a.get("value")
    close = got is not None and abs(got - row["gold"]) <= TOLERANCE * abs(row["gold"]) + 1e-9
    if row["kind"] == "threshold":
        close = close and str(a.get("answer") or "").startswith("yes" if row["meets"] else "no")
    return "correct" if close else "wrong_gate_passed"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "ask-dev-operations")
    ap.add_argument("--results-dir", type=Path, default=None)
    ap.add_argument("--name", default="ask-dev-operations")
    args = ap.parse_args()
    mq = exhaustive.generator()
    rows = items(mq, args.seed)[: args.limit or None]

    def saved(r: dict, a: Any) -> dict:
        return {"status": a.status, "value": a.value, "answer": a.answer, "reasons": a.reasons[:1]}

    done = exhaustive.ask_checkpointed(rows, args.out, saved, "sum and threshold questions")
    figures, table, missed = exhaustive.summary(rows, done, judge, lambda r: r["kind"])
    wrong = exhaustive.not_correct(missed, lambda r: {"gold": r["gold"], "meets": r.get("meets")})
    params = {
        "seed": args.seed,
        "tolerance": TOLERANCE,
        "split": "dev",
        **({"limit": args.limit} if args.limit else {}),
    }
    out = write_result(args.name, params, figures, tables={"kinds": table, "not correct": wrong},
                       directory=args.results_dir)  # fmt: skip
    print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())
