"""Check ``data/financebench/page-dev-extra.jsonl``: the hand-written development page questions.

The file holds extra development questions over FinanceBench open-sample pages (questions and gold written by hand,
``data/NOTICE.md``), in FinanceBench's own JSON-lines format plus three keys :func:`read_financebench` ignores:
``question_form``, ``gold_lines`` (the page lines the gold was read from, verbatim) and ``gold_arithmetic`` (the
arithmetic over those operands; null for a "NOT ON PAGE" question). Checked:

(a) the file parses with :func:`ingest.datasets.financebench.read_financebench`, ids unique, one page a question;
(b) no page of the file (doc_name, page) is an evidence page of a frozen test-list question (the test ids are used
    only to exclude pages; their questions, answers and pages are never printed);
(c) every gold other than ``NOT ON PAGE`` parses with :func:`finkg.eval.financebench.gold_number`, and equals its
    ``gold_arithmetic`` recomputed here, to the gold's decimals; every operand of the arithmetic is in the quoted lines;
(d) every ``gold_lines`` entry is in its page's text (whitespace normalised).

Prints counts; exits 1 on a failure.

    python scripts/check_page_dev_extra.py
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import operator
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from finkg.eval.financebench import gold_number, read_uids  # noqa: E402
from ingest.datasets.financebench import read_financebench  # noqa: E402

NOT_ON_PAGE = "NOT ON PAGE"
MAX_PER_PAGE = 4
_SCALE_CONSTANTS = {"100", "1000", "1000000"}
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _norm(text: str) -> str:
    return " ".join(text.split())


def _calc(expr: str) -> float:
    """The value of an arithmetic expression of numbers, + - * / and parentheses (nothing else is evaluated)."""

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        raise ValueError(f"not plain arithmetic: {expr!r}")

    return ev(ast.parse(expr, mode="eval"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", type=Path, default=ROOT / "data" / "financebench" / "page-dev-extra.jsonl")
    ap.add_argument(
        "--financebench", type=Path, default=ROOT / "data" / "financebench" / "financebench_open_source.jsonl"
    )
    ap.add_argument("--test-ids", type=Path, default=ROOT / "data" / "questions" / "financebench-test-ids.txt")
    a = ap.parse_args()
    failures: list[str] = []

    # (a) FinanceBench's format
    questions = read_financebench(a.file)
    raw = [json.loads(line) for line in a.file.read_text(encoding="utf-8").splitlines() if line.strip()]
    uids = [q.uid for q in questions]
    if len(set(uids)) != len(uids):
        failures.append("duplicate financebench_id")
    for q in questions:
        if len(q.pages) != 1:
            failures.append(f"{q.uid}: {len(q.pages)} evidence pages (one expected)")
    per_page = collections.Counter(p.id for q in questions for p in q.pages)
    crowded = [pid for pid, n in per_page.items() if n > MAX_PER_PAGE]
    if crowded:
        failures.append(f"more than {MAX_PER_PAGE} questions on {crowded}")
    print(f"(a) {a.file.name}: {len(questions)} questions parsed by read_financebench")

    # (b) no page of a test-list question (test ids used only to exclude pages)
    test = set(read_uids(a.test_ids))
    test_pages = {(p.doc_name, p.page) for q in read_financebench(a.financebench) if q.uid in test for p in q.pages}
    clash = sorted({p.id for q in questions for p in q.pages if (p.doc_name, p.page) in test_pages})
    if clash:
        failures.append(f"{len(clash)} page(s) are evidence pages of test-list questions: {clash}")
    print(f"(b) {len(per_page)} pages checked against {len(test_pages)} test-question pages: {len(clash)} shared")

    # (c) gold numbers and arithmetic, (d) quoted lines on the page
    parsed = abstain = lines_ok = 0
    for q, r in zip(questions, raw, strict=True):
        page = _norm(q.pages[0].text) if q.pages else ""
        lines = r.get("gold_lines")
        if not isinstance(lines, list) or not lines:
            failures.append(f"{q.uid}: no gold_lines")
            lines = []
        for line in lines:
            if _norm(line) in page:
                lines_ok += 1
            else:
                failures.append(f"{q.uid}: quoted line not on its page: {line!r}")
        if q.answer == NOT_ON_PAGE:
            abstain += 1
            if r.get("gold_arithmetic") is not None:
                failures.append(f"{q.uid}: NOT ON PAGE with arithmetic")
            continue
        gold = gold_number(q.answer)
        if gold is None:
            failures.append(f"{q.uid}: gold {q.answer!r} does not parse with gold_number")
            continue
        parsed += 1
        expr = r.get("gold_arithmetic")
        if not expr:
            failures.append(f"{q.uid}: no gold_arithmetic")
            continue
        value = _calc(expr)
        if abs(round(value, gold.decimals) - gold.value) > 1e-9:
            failures.append(f"{q.uid}: gold {q.answer!r} != {expr} = {value}")
        quoted = re.sub(r"(?<=\d),(?=\d{3})", "", " ".join(lines))
        for operand in re.findall(r"\d+(?:\.\d+)?", expr):
            if operand not in _SCALE_CONSTANTS and not re.search(rf"(?<![\d.]){re.escape(operand)}(?!\d)", quoted):
                failures.append(f"{q.uid}: operand {operand} of {expr!r} not in its quoted lines")
    print(f"(c) {parsed} one-number golds parse with gold_number and match their arithmetic; {abstain} NOT ON PAGE")
    print(f"(d) {lines_ok} quoted lines found on their pages")

    forms = collections.Counter(r.get("question_form", "?") for r in raw)
    print("forms:", ", ".join(f"{k} {v}" for k, v in sorted(forms.items())))
    print(
        f"pages {len(per_page)}, documents {len({q.doc_name for q in questions})}, "
        f"companies {len({q.company for q in questions})}"
    )
    for f in failures:
        print("FAIL", f)
    print("OK" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
