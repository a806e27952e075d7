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

``--phrasings N --seed S``: each pair asked N times in the question sets' words instead of once plainly: a
template of the generator's for the measure's kind and period style, a name form, a measure phrase and a period
phrase drawn with ``random.Random(S)``; for a balance-sheet measure of a company with no newer shipped data, the
first of the N asks names no period ("What is X's current ratio?"), as the question sets do. So the words are
checked too, on the development half only. Writes ``bench/results/ask-dev-phrasings.json``.

``--annual``: the quarter's 10-Ks (fp FY) instead of its 10-Qs: every flow over the fiscal year ("the year ended
December 31, 2009", qtrs 4; a margin or ROA too), balances at the year end. Names end in ``-annual``.

``--more``: the catalog measures the question sets never ask (the generator's ``MORE_MEASURES``: cost of revenue,
pretax income, EBITDA, receivables, current assets and liabilities, asset and inventory turnover, days sales
outstanding) instead of theirs, gold from the generator's pandas computation as above. Names end in ``-more``.

``--ttm ZIP``: the trailing twelve months ended each development-half 10-Q's period (``--quarter``) of the
generator's ``TTM_MEASURES`` (revenue, net and operating income, operating and free cash flow, operating and net
margin), for companies whose 10-K for the fiscal year before is in the FSDS quarter ``ZIP`` (ingested in the graph
too): gold ``ttm_gold``, each flow the 10-K's year + the 10-Q's year to date - its comparative a year earlier, with
pandas; asked in the words of ``T_TTM`` drawn with ``--seed`` ("What was X's trailing twelve months revenue as of
March 31, 2010?", "LTM net margin at X through ..."). Names end in ``-ttm``.

``--span-change``: how much each balance of the generator's ``SPAN_CHANGE_MEASURES`` (cash, total assets and
liabilities, equity, long-term debt, inventory, working capital, receivables, current assets and liabilities, the
current ratio, debt to equity) changed over each development-half 10-Q's year to date ("How much did X's cash change
in the six months ended June 30, 2009?"; every third amount asked in percent): gold ``span_change_gold``, the balance
at the period end less the balance at the fiscal year end before (the 10-Q's comparative balance sheet), with
pandas; words of ``T_SPAN_CHANGE`` drawn with ``--seed``. Name ``ask-dev-span-change``.

    python bench/ask_dev_exhaustive.py [--kinds value,ratio] [--limit N] [--out DIR] [--phrasings N --seed S]
        [--quarter ZIP] [--annual] [--more] [--ttm ZIP] [--span-change]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

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


def ask_checkpointed(
    rows: list[dict], out: Path, saved: Callable[[dict, Any], dict], what: str = "questions"
) -> dict[str, dict]:
    """Ask every row's ``question`` (``finkg ask``'s engine, the configured graph) not answered in an earlier run,
    appending ``{"id", **saved(row, answer), "seconds"}`` to ``out/answers.jsonl`` as each comes (a killed run
    resumes there), with progress (count, rate, ETA); returns id -> saved answer for every row asked so far."""
    from finkg.api import open_graph
    from finkg.config import load_settings
    from generation.agent.ask import answer_sec_question

    out.mkdir(parents=True, exist_ok=True)
    path = out / "answers.jsonl"
    done: dict[str, dict] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            a = json.loads(line)
            done[a["id"]] = a
    todo = [r for r in rows if r["id"] not in done]
    print(f"{len(rows)} {what} ({len(done)} answered before, {len(todo)} to ask)", flush=True)
    t0 = time.perf_counter()
    with open_graph(load_settings()) as graph, path.open("a", encoding="utf-8") as fh:
        for i, r in enumerate(todo, 1):
            s = time.perf_counter()
            a = answer_sec_question(graph, r["question"])
            row = {"id": r["id"], **saved(r, a), "seconds": time.perf_counter() - s}
            done[r["id"]] = row
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            if i % 100 == 0 or i == len(todo):
                rate = i / (time.perf_counter() - t0)
                print(f"{i}/{len(todo)} asked, {rate:.2f} q/s, ETA {(len(todo) - i) / rate:.0f} s", flush=True)
    return done


def summary(
    rows: list[dict], done: dict[str, dict], category: Callable[[dict, dict], str], kind: Callable[[dict], str]
) -> tuple[dict[str, Any], list[dict[str, Any]], list[tuple[dict, dict, str]]]:
    """A probe's figures (questions, companies, correct, abstained, wrong with the gate passed, median seconds), its
    table by ``kind(row)``, and the ``(row, answer, category)`` of every answer not correct; ``category(row, answer)``
    is ``correct``, ``abstained`` or ``wrong_gate_passed``. Prints the figures."""
    cats: Counter[str] = Counter()
    by_kind: dict[str, Counter[str]] = {}
    missed = []
    for r in rows:
        a = done[r["id"]]
        cat = category(r, a)
        cats[cat] += 1
        by_kind.setdefault(kind(r), Counter())[cat] += 1
        if cat != "correct":
            missed.append((r, a, cat))
    secs = [done[r["id"]]["seconds"] for r in rows]
    figures = {
        "questions": len(rows),
        "companies": len({r["cik"] for r in rows if r.get("cik") is not None}),
        **{k: cats[k] for k in ("correct", "abstained", "wrong_gate_passed")},
        "median_seconds": statistics.median(secs) if secs else None,
    }
    table = [
        {"kind": k, "questions": sum(c.values()), "correct": c["correct"], "abstained": c["abstained"],
         "wrong, gate passed": c["wrong_gate_passed"]}
        for k, c in sorted(by_kind.items())
    ]  # fmt: skip
    for k, v in figures.items():
        print(f"{k}: {v}")
    return figures, table, missed


def not_correct(missed: list[tuple[dict, dict, str]], gold: Callable[[dict], dict]) -> list[dict[str, Any]]:
    """The rows of a results file's "not correct" table: each missed question, its category, the answer and the reason
    given, and the row's gold as ``gold(row)`` states it."""
    return [
        {"id": r["id"], "question": r["question"], "category": cat, "answer": a.get("answer"),
         "reasons": a.get("reasons"), **gold(r)}
        for r, a, cat in missed
    ]  # fmt: skip


def development_filings(mq, quarter: Path | None = None, annual: bool = False):
    """``(facts, daily, filings)`` of an FSDS quarter ZIP (default the shipped 2009q3): the generator's
    :class:`Facts` over its num.txt, the daily file's sub.txt, and its development-half question filings (10-Qs, or
    10-Ks with ``annual``), by the generator's rules."""
    quarter = quarter or mq.QUARTER
    sub, num, daily = mq.read(quarter, "sub.txt"), mq.read(quarter, "num.txt"), mq.read(mq.DAILY, "sub.txt")
    filings = [f for f in mq.question_filings(sub, mq.company_names(sub, daily), annual) if mq.split_of(f.cik) == "dev"]
    return mq.Facts(num), daily, filings


def items(
    mq,
    kinds: list[str],
    phrasings: int = 0,
    seed: int = 0,
    quarter: Path | None = None,
    annual: bool = False,
    more: bool = False,
) -> list[dict]:
    """Every (development filing, measure) pair with a gold, as question rows: one plain question each, or
    ``phrasings`` questions in drawn words (module doc). ``quarter``: an FSDS quarter ZIP other than the shipped
    2009q3 (``--quarter``); its development half is the same rule's (sha256 of the CIK). ``annual``: the quarter's
    10-Ks instead of its 10-Qs (``--annual``). ``more``: the generator's ``MORE_MEASURES`` instead of its
    ``MEASURES`` (``--more``)."""
    facts, daily, filings = development_filings(mq, quarter, annual)
    later = mq.later_ciks(daily)
    rng = random.Random(seed)
    out = []
    for f in filings:
        catalog = mq.MORE_MEASURES if more else mq.MEASURES
        asked = [(m, m.kind, mq.compute(facts, f, m)) for m in catalog.values() if m.kind in kinds]
        if "element" in kinds:
            asked += [(e, "value", mq.element_gold(facts, f, e)) for e in mq.ELEMENTS.values()]
        for m, kind, spec in asked:
            if spec is None:
                continue
            style, periods = mq.style_phrases(f, m)
            row = {"kind": "element" if isinstance(m, mq.Element) else kind, "measure": m.id, "cik": f.cik,
                   "gold": spec["value"]}  # fmt: skip
            if not phrasings:
                q = "What was {pos} {m} in {p}?" if style != "instant" else "What was {pos} {m} {p}?"
                question = q.format(pos=mq.possessive(f.names[0]), m=m.phrases[0], p=periods[0])
                out.append({"id": f"{f.adsh}:{m.id}", **row, "question": question})
                continue
            for j in range(phrasings):
                st = "latest" if style == "instant" and j == 0 and f.cik not in later else style
                co = rng.choice(f.names)
                template = rng.choice(mq.SINGLE_TEMPLATES[kind][st])
                p = "" if st == "latest" else rng.choice(periods)
                question = mq.fill(template, co=co, pos=mq.possessive(co), m=rng.choice(m.phrases), p=p)
                out.append({"id": f"{f.adsh}:{m.id}:{j}", **row, "style": st, "question": question})
    return out


def ttm_items(mq, quarter: Path, annual_zip: Path, seed: int = 0) -> list[dict]:
    """The ``--ttm`` questions (module doc): one per (development 10-Q of ``quarter``, TTM measure) with a gold."""
    daily = mq.read(mq.DAILY, "sub.txt")
    sub_q, sub_k = mq.read(quarter, "sub.txt"), mq.read(annual_zip, "sub.txt")
    facts = mq.Facts(pd.concat([mq.read(quarter, "num.txt"), mq.read(annual_zip, "num.txt")], ignore_index=True))
    tenk = {k.cik: k for k in mq.question_filings(sub_k, mq.company_names(sub_k, daily), annual=True)}
    rng = random.Random(seed)
    out = []
    for f in mq.question_filings(sub_q, mq.company_names(sub_q, daily)):
        if mq.split_of(f.cik) != "dev" or f.cik not in tenk:
            continue
        for mid in mq.TTM_MEASURES:
            m = mq.MEASURES[mid]
            spec = mq.ttm_gold(facts, f, tenk[f.cik], m)
            if spec is None:
                continue
            co = rng.choice(f.names)
            question = mq.fill(rng.choice(mq.T_TTM), co=co, pos=mq.possessive(co), m=rng.choice(m.phrases),
                               d=mq.day(f.fiscal))  # fmt: skip
            out.append({"id": f"{f.adsh}:{mid}:ttm", "kind": m.kind, "measure": mid, "cik": f.cik,
                        "gold": spec["value"], "question": question})  # fmt: skip
    return out


def span_change_items(mq, quarter: Path | None = None, seed: int = 0) -> list[dict]:
    """The ``--span-change`` questions (module doc): one per (development 10-Q, balance measure of
    ``SPAN_CHANGE_MEASURES``) with a gold, in drawn words; every third asks the change in percent."""
    facts, _, filings = development_filings(mq, quarter)
    rng = random.Random(seed)
    out = []
    for f in filings:
        for mid in mq.SPAN_CHANGE_MEASURES:
            m = mq.MEASURES.get(mid) or mq.MORE_MEASURES[mid]
            percent = m.unit == "USD" and rng.random() < 1 / 3
            spec = mq.span_change_gold(facts, f, m, percent)
            if spec is None:
                continue
            co = rng.choice(f.names)
            template = rng.choice(mq.T_SPAN_CHANGE_PERCENT if percent else mq.T_SPAN_CHANGE)
            question = mq.fill(template, co=co, pos=mq.possessive(co), m=rng.choice(m.phrases),
                               span=mq.change_span(f.ytd_qtrs), d=mq.day(f.fiscal))  # fmt: skip
            out.append({"id": f"{f.adsh}:{mid}:span", "kind": "span change" + (" (%)" if percent else ""),
                        "measure": mid, "cik": f.cik, "gold": spec["value"], "question": question})  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", default="value,ratio", help="value, ratio, element (line items beyond the catalog)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N questions (a smoke run)")
    ap.add_argument("--out", type=Path, default=None, help="checkpoint folder (default out/<results name>)")
    ap.add_argument("--results-dir", type=Path, default=None)
    ap.add_argument("--phrasings", type=int, default=0, help="ask each pair N times in drawn words (module doc)")
    ap.add_argument("--seed", type=int, default=0, help="the draw of --phrasings")
    ap.add_argument("--annual", action="store_true", help="ask the quarter's 10-Ks (module doc)")
    ap.add_argument("--more", action="store_true", help="the catalog measures the question sets never ask")
    ap.add_argument("--ttm", type=Path, default=None, help="trailing twelve months, 10-Ks from this FSDS ZIP")
    ap.add_argument("--span-change", action="store_true", help="how much a balance changed over the year to date")
    ap.add_argument(
        "--quarter", type=Path, default=None, help="another FSDS quarter ZIP, ingested in the graph (default 2009q3)"
    )
    args = ap.parse_args()
    name = "ask-dev-phrasings" if args.phrasings else "ask-dev-exhaustive"
    if args.kinds == "element":
        name = "ask-dev-elements" + ("-phrasings" if args.phrasings else "")
    if args.more:
        name += "-more"
    if args.ttm:
        name = "ask-dev-ttm"
    if args.span_change:
        name = "ask-dev-span-change"
    if args.annual:
        name += "-annual"
    if args.quarter:
        name += "-" + args.quarter.name.removesuffix(".zip")
    args.out = args.out or ROOT / "out" / name
    kinds = [k for k in args.kinds.split(",") if k]
    mq = generator()
    if args.ttm:
        rows = ttm_items(mq, args.quarter or mq.QUARTER, args.ttm, args.seed)
    elif args.span_change:
        rows = span_change_items(mq, args.quarter, args.seed)
    else:
        rows = items(mq, kinds, args.phrasings, args.seed, args.quarter, args.annual, args.more)
    if args.limit:
        rows = rows[: args.limit]

    def saved(r: dict, a: Any) -> dict:
        operands = (a.derivation or {}).get("operands") or {}
        return {"status": a.status, "value": a.value, "answer": a.answer,
                "concepts": sorted({str(o.get("concept")) for o in operands.values()}), "reasons": a.reasons[:1]}  # fmt: skip

    done = ask_checkpointed(rows, args.out, saved, "development questions")

    def category(r: dict, a: dict) -> str:
        if a["status"] != "answered":
            return "abstained"
        close = a["value"] is not None and abs(a["value"] - r["gold"]) <= TOLERANCE * abs(r["gold"]) + 1e-9
        return "correct" if close else "wrong_gate_passed"

    figures, table, missed = summary(
        rows, done, category, lambda r: f"{r['kind']} ({r['style']})" if "style" in r else r["kind"]
    )
    figures = {**figures, "measures": len({r["measure"] for r in rows})}
    print(f"measures: {figures['measures']}")
    wrong = [
        {**r, "got": a["value"], "answer": a["answer"], "concepts": a.get("concepts")}
        for r, a, cat in missed
        if cat == "wrong_gate_passed"
    ]
    params = {
        "kinds": args.kinds,
        "tolerance": TOLERANCE,
        "split": "dev",
        **({"quarter": args.quarter.name} if args.quarter else {}),
        **({"limit": args.limit} if args.limit else {}),
        **({"filings": "10-K"} if args.annual else {}),
        **({"measures": "MORE_MEASURES"} if args.more else {}),
        **({"ttm": args.ttm.name, "seed": args.seed} if args.ttm else {}),
        **({"span_change": True, "seed": args.seed} if args.span_change else {}),
    }
    if args.phrasings:
        params |= {"phrasings": args.phrasings, "seed": args.seed}
    out = write_result(
        name,
        params,
        figures,
        tables={"kinds": table, "wrong": wrong},
        directory=args.results_dir,
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
