"""Write the frozen FinanceBench page-question lists (issue 46 item 4): a development part and a test part.

The pool is the 66 questions of FinanceBench's open-source sample whose gold answer states one number
(:func:`finkg.eval.financebench.page_pool`); ordered by the SHA-256 of each ``financebench_id``, the first 26 are
the development part (the page reader is tuned on them), the other 40 the test part (scored, never read):

- ``data/questions/financebench-dev-ids.txt``
- ``data/questions/financebench-test-ids.txt``

Deterministic from the data file (Islam et al. 2023, github.com/patronus-ai/financebench):

    python scripts/make_financebench_split.py data/financebench/financebench_open_source.jsonl

Score the test part with ``python bench/page_questions.py`` (``bench/results/page-questions.json``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from finkg.eval.financebench import DEV_SIZE, page_pool, split_pool  # noqa: E402
from ingest.datasets.financebench import read_financebench  # noqa: E402


def _write(path: Path, uids: list[str], header: str) -> None:
    lines = [f"# {line}" for line in header.splitlines()] + uids
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{path}: {len(uids)} questions")


def main() -> None:
    ap = argparse.ArgumentParser(description="Write the frozen FinanceBench page-question lists.")
    ap.add_argument("financebench", type=Path, help="financebench_open_source.jsonl")
    ap.add_argument("--out", type=Path, default=ROOT / "data" / "questions")
    a = ap.parse_args()
    pool = page_pool(read_financebench(a.financebench))
    dev, test = split_pool(pool, DEV_SIZE)
    assert not set(dev) & set(test)
    made = f"made by scripts/make_financebench_split.py from {a.financebench.name} ({len(pool)} one-number questions)"
    _write(a.out / "financebench-dev-ids.txt", dev, f"FinanceBench page questions, development part: tuned on.\n{made}")
    _write(
        a.out / "financebench-test-ids.txt",
        test,
        f"FinanceBench page questions, test part: scored, never read.\n{made}",
    )


if __name__ == "__main__":
    main()
