"""Issue 44: questions about companies the graph does not hold, asked of `finkg ask`: every answer is wrong.

A user asks about the companies they follow, and most of them are not in the graph ("What was Dana's gross profit
in Q2 2009?", "EON Resources operating margin for the second quarter of 2009?", "What is CTS's current ratio?").
The right reply is "not in the graph" (or a question back when the name fits a graph company too), never another
company's figure: Danaher's gross profit for "Dana", EOG Resources' margin for "EON Resources", a ranking of the
restaurant companies for "Darden Restaurants".

Items, drawn with ``--seed``: companies of the SEC's ticker table shipped with finkg
(``retrieval/facts/data/company_tickers.csv``) whose CIK is none of the configured graph's companies and falls in
the development half of the question sets' split rule (sha256 of the CIK, ``scripts/make_user_questions.py``); each
named by its name as people write it (the generator's ``clean_name``) or, one time in five, its ticker (a company
whose written name is a graph company's, a successor registrant under a new CIK, is left out; a ticker the graph's own
filings give a held company is not used); asked one
measure of the generator's catalog in the generator's words (its templates and measure phrases) for a 2009q3 period
("the quarter ended June 30, 2009", "Q2 2009", "as of June 30, 2009", no period).

Scored: **correct** when not answered (``not in graph``, ``ask back``, ``not understood``), **wrong with the gate
passed** when answered. No gold values are needed: the company asked about has no facts in the graph. Writes
``bench/results/<name>.json`` (figures, statuses, every answered question with its answer); answers checkpointed in
``--out``. Run it with ``PYTHONPATH=<worktree of another commit>`` to score that commit's engine on the same items
(``--name ask-dev-absent-baseline``).

    python bench/ask_dev_absent.py [--seed S] [--limit N] [--out DIR] [--results-dir DIR] [--name NAME]
"""

from __future__ import annotations

import argparse
import csv
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from finkg.eval.results import write_result

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ask_dev_exhaustive as exhaustive  # pyright: ignore[reportMissingImports]

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "retrieval" / "facts" / "data" / "company_tickers.csv"
PERIODS = {
    "quarter": ["the quarter ended June 30, 2009", "Q2 2009", "the second quarter of 2009"],
    "ytd": ["the six months ended June 30, 2009", "the first half of 2009"],
    "instant": ["as of June 30, 2009", "at the end of June 2009"],
}
"""2009q3's usual period (calendar second quarter) in the generator's words, by measure span."""
INSTANCE = re.compile(r"([a-z]{1,5})-\d{8}")
"""An XBRL instance file's name: the filer's ticker, a hyphen and the period end (EDGAR's filer manual)."""


def written(name: str) -> str:
    """A name as words, case and punctuation aside (``Ingersoll-Rand`` and ``Ingersoll Rand`` are one name)."""
    return " ".join(re.sub(r"[^a-z0-9&]+", " ", name.lower()).split())


def graph_companies() -> tuple[dict[int, str], set[str]]:
    """CIK -> EDGAR name of the configured graph's companies, and the tickers their own filings carry (the prefix of
    each XBRL instance file's name, ``via-20090630.xml``: VIA, upper case)."""
    from finkg.api import open_graph
    from finkg.config import load_settings
    from kg.cypher.agent import COMPANY_NAMES

    with open_graph(load_settings()) as graph:
        rows = graph.read(COMPANY_NAMES)
    tickers = {m.group(1).upper() for r in rows for i in r["instances"] or [] if (m := INSTANCE.match(str(i).lower()))}
    return {int(r["cik"]): str(r["name"]) for r in rows}, tickers


def items(mq, held: dict[int, str], seed: int, held_tickers: set[str] = frozenset()) -> list[dict]:
    """One question per development-half ticker-table company not in ``held`` (CIK -> name), in drawn order (module
    doc); a company whose name as people write it is a held company's (a successor registrant under a new CIK: EATON
    CORP's 2012 plc, LIBERTY GLOBAL's 2013 plc) is not asked, nor by a ticker a held company's own filings carry
    (``held_tickers``: FTI was FMC TECHNOLOGIES' in 2009, TechnipFMC's today): the held one is what it means."""
    rng = random.Random(seed)
    held_names = {written(mq.clean_name(n)) for n in held.values()}
    companies: dict[int, tuple[str, str]] = {}
    with TABLE.open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            cik = int(row["cik"])
            if cik not in held and cik not in companies and mq.split_of(cik) == "dev":
                companies[cik] = (mq.clean_name(row["name"].upper()), row["ticker"])
    order = sorted(companies)
    rng.shuffle(order)
    measures = list(mq.MEASURES.values())
    out = []
    for cik in order:
        name, ticker = companies[cik]
        if len(name) < 3 or written(name) in held_names:
            continue
        m = rng.choice(measures)
        style = {"instant": "instant", "ytd": "ytd"}.get(m.span, "quarter")
        latest = style == "instant" and rng.random() < 0.3
        template = rng.choice(mq.SINGLE_TEMPLATES[m.kind]["latest" if latest else style])
        co = ticker if rng.random() < 0.2 and ticker.upper() not in held_tickers else name
        question = mq.fill(template, co=co, pos=mq.possessive(co), m=rng.choice(m.phrases),
                           p="" if latest else rng.choice(PERIODS[style]))  # fmt: skip
        out.append({"id": f"{cik}:{m.id}", "cik": cik, "name": name, "ticker": ticker, "by": "ticker" if co == ticker else "name",
                    "measure": m.id, "question": question})  # fmt: skip
    return out


def judge(row: dict, a: dict) -> str:
    return "wrong_gate_passed" if a["status"] == "answered" else "correct"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--limit", type=int, default=0, help="only the first N questions (a smoke run)")
    ap.add_argument("--out", type=Path, default=None, help="checkpoint folder (default out/<name>)")
    ap.add_argument("--results-dir", type=Path, default=None)
    ap.add_argument("--name", default="ask-dev-absent")
    args = ap.parse_args()
    mq = exhaustive.generator()
    held, held_tickers = graph_companies()
    rows = items(mq, held, args.seed, held_tickers)[: args.limit or None]

    def saved(r: dict, a: Any) -> dict:
        return {"status": a.status, "answer": a.answer, "reasons": [str(x) for x in a.reasons[:1]]}

    out = args.out or ROOT / "out" / args.name
    done = exhaustive.ask_checkpointed(rows, out, saved, "questions about companies the graph does not hold")
    figures, table, missed = exhaustive.summary(rows, done, judge, lambda r: r["by"])
    statuses = Counter(done[r["id"]]["status"] for r in rows)
    print("statuses:", dict(statuses))
    answered = exhaustive.not_correct(missed, lambda r: {"company asked": r["name"], "cik": r["cik"]})
    params = {
        "seed": args.seed,
        "split": "dev",
        "graph_companies": len(held),
        **({"limit": args.limit} if args.limit else {}),
    }
    path = write_result(
        args.name,
        params,
        {**figures, "statuses": dict(statuses)},
        tables={"by how named": table, "answered": answered},
        directory=args.results_dir,
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
