"""An independent check of the agent's TAT-QA answers: is every number it returned traceable?

Written from TAT-QA's file format only (no finkg code): for each answer of a system whose name starts with
``agent`` in an ``answers.jsonl`` of ``finkg eval tatqa``, every number of a quoted answer (``quoted from the
evidence``) must be stated in the question's table or paragraphs (digits, or a number word one to twelve;
also in thousands, millions or billions of a stated number, rounded as written); for a computed answer, every
operand of its derivation line (``expression with a=1, b=2 = 3``) must be stated there (compared at 6
significant digits: runs before 2026-11-26 wrote operands that way) and the expression, evaluated with
simpleeval, must give the answer (to 2 decimals). Answers with no number ("could not verify") are not counted.

    python bench/tatqa_trace.py ../shared/data/tatqa/tatqa_dataset_dev.json /tmp/exp18/eval300/answers.jsonl

Prints ``{"answers", "traced", "untraced": [[system, question, answer], ...]}`` and exits 1 when any answer
is untraced.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from simpleeval import simple_eval

NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]


def stated_numbers(context: dict) -> set[float]:
    """Every number a TAT-QA context's table cells and paragraphs state."""
    text = " ".join(" ".join(map(str, row)) for row in context["table"]["table"])
    text += " " + " ".join(p["text"] for p in context["paragraphs"])
    numbers = {float(x.replace(",", "")) for x in NUMBER.findall(text)}
    return numbers | {float(i) for i, w in enumerate(WORDS) if re.search(rf"\b{w}\b", text, re.IGNORECASE)}


def is_stated(written: str, pool: set[float]) -> bool:
    """``written`` (digits) equals a stated number, or one in thousands/millions/billions, rounded as written."""
    decimals, value = len(written.partition(".")[2]), float(written.replace(",", ""))
    return any(
        round(p / 1000**k, decimals) == value or round(p * 1000**k, decimals) == value for p in pool for k in range(4)
    )


def six(x: float) -> float:
    return float(f"{x:.6g}")


def traced(record: dict, pool: set[float]) -> bool:
    """Whether every number of one answer record is traceable (module doc)."""
    numbers = [n for item in record["predicted"] for n in NUMBER.findall(item)]
    if "quoted from the evidence" in record["generated"]:
        return all(is_stated(n, pool) for n in numbers)
    line = next(ln for ln in record["generated"].splitlines() if " with " in ln and " = " in ln)
    expression, rest = line.split(" with ", 1)
    operands_text = rest.rsplit(" = ", 1)[0]
    operands = {k.strip(): float(v) for k, v in (kv.split("=", 1) for kv in operands_text.split(", "))}
    value = float(simple_eval(expression, names=operands))
    pool6 = {six(p) for p in pool}
    return all(six(abs(v)) in pool6 for v in operands.values()) and all(
        abs(float(n.replace(",", "")) - round(abs(value), 2)) <= max(0.006, 5e-6 * abs(value)) for n in numbers
    )


def main(dataset: Path, answers: Path) -> int:
    pools = {q["uid"]: stated_numbers(c) for c in json.loads(dataset.read_text()) for q in c["questions"]}
    report: dict = {"answers": 0, "traced": 0, "untraced": []}
    for line in answers.read_text().splitlines():
        record = json.loads(line) if line.strip() else None
        if not record or not record["system"].startswith("agent") or not record["predicted"]:
            continue
        report["answers"] += 1
        if traced(record, pools[record["question_uid"]]):
            report["traced"] += 1
        else:
            report["untraced"].append([record["system"], record["question"], record["predicted"]])
    print(json.dumps(report, indent=1))
    return 1 if report["untraced"] else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
