"""Issue 46 item 4: questions over a filing page, the page reader against the whole page given to the model.

Data: FinanceBench's open-source sample (Islam et al. 2023, ``data/financebench/financebench_open_source.jsonl``),
its one-number questions split once by ``scripts/make_financebench_split.py``: the development part (26, tuned on)
and the test part (40, scored here, never read). Each question is given its evidence pages (the PDF text of one
or two filing pages) and answered by

- ``reader``: :func:`generation.agent.page.answer_page_question` (lines selected, a rule where one applies, else
  the LLM over the selected lines; the answer in the asked unit, gated, the page cited);
- ``whole page``: :func:`generation.agent.page.whole_page_answer` (the whole page(s) given to the model, as
  before), on the first ``--baseline-limit`` questions of the list (a fixed subset: the baseline takes minutes
  a question on 2 cores).

Scored by :func:`finkg.eval.financebench.score` (correct / abstained / wrong, the gold's unit; unit slips counted:
an answer in percent for a gold that is not a percentage, or the other way round), with percentile
bootstrap 95 % intervals (:func:`finkg.eval.metrics.intervals.bootstrap_mean`) and the median seconds a question.
The model is the configured one (``FINKG_LLM__BACKEND=llama-server FINKG_LLM__MODEL_PATH=...``), its disk cache
off so that every second is measured. Each answer is appended to ``--out``/``<system>.jsonl`` as it is made
(:class:`finkg.eval.checkpoint.ItemLog`): a rerun resumes.

    python bench/page_questions.py --out /tmp/page-q --baseline-limit 40
    python bench/page_questions.py --questions data/questions/financebench-dev-ids.txt --part dev \
        --baseline-limit 0 --name page-questions-dev
    python bench/page_questions.py --data data/financebench/page-dev-extra.jsonl --questions all \
        --part dev-extra --baseline-limit 0 --name page-questions-dev-extra

The third line runs the larger development set (79 questions written by hand over FinanceBench pages that no test
question uses, 11 of them with gold ``NOT ON PAGE``: right when refused, wrong when answered; see
``scripts/check_page_dev_extra.py``). ``--no-llm`` runs the reader's rules alone (no model), for a quick loop.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from finkg.config import load_settings  # noqa: E402
from finkg.eval.checkpoint import ItemLog  # noqa: E402
from finkg.eval.financebench import NOT_ON_PAGE, gold_number, read_uids, score  # noqa: E402
from finkg.eval.metrics.intervals import bootstrap_mean, paired_bootstrap_difference  # noqa: E402
from finkg.eval.results import write_result  # noqa: E402
from generation.agent.arithmetic import SCALES  # noqa: E402
from generation.agent.page import PageAnswer, answer_page_question, whole_page_answer  # noqa: E402
from generation.llm import LLMClient, backend_from_settings  # noqa: E402
from generation.llm.cache import LLMCache  # noqa: E402
from ingest.datasets.financebench import PageQuestion, read_financebench  # noqa: E402

DATA = ROOT / "data" / "financebench" / "financebench_open_source.jsonl"
TEST = ROOT / "data" / "questions" / "financebench-test-ids.txt"
OUTCOMES = ("correct", "abstained", "wrong")


def record(q: PageQuestion, got: PageAnswer) -> dict[str, Any]:
    """One answer's log line: the answer, its outcome against the gold, its seconds and whether it slipped a unit
    (a number answered in percent for a gold that is not one, or the other way round)."""
    if q.answer == NOT_ON_PAGE:
        outcome = "correct" if got.value is None else "wrong"
        return {"uid": q.uid, "gold": q.answer, "outcome": outcome, "unit_slip": False, **got.as_dict()}
    gold = gold_number(q.answer)
    assert gold is not None
    outcome = score(got.value, got.unit, SCALES.get(got.scale, 1.0), gold)
    slip = got.value is not None and gold.percent != (got.unit == "percent")
    return {"uid": q.uid, "gold": q.answer, "outcome": outcome, "unit_slip": slip, **got.as_dict()}


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts, rates with bootstrap intervals, and seconds (median, p90, total) of one system's answers."""
    out: dict[str, Any] = {"n": len(rows)}
    for outcome in OUTCOMES:
        hits = [1.0 if r["outcome"] == outcome else 0.0 for r in rows]
        interval = bootstrap_mean(hits) if rows else None
        out[outcome] = {
            "count": int(sum(hits)),
            "rate": round(interval.mean, 4) if interval else 0.0,
            "ci95": [round(interval.low, 4), round(interval.high, 4)] if interval else [0.0, 0.0],
        }
    out["unit_slips"] = sum(bool(r.get("unit_slip")) for r in rows)
    secs = sorted(float(r["seconds"]) for r in rows)
    out["median_seconds"] = round(statistics.median(secs), 2) if secs else None
    out["p90_seconds"] = round(secs[int(0.9 * (len(secs) - 1))], 2) if secs else None
    out["total_seconds"] = round(sum(secs), 1)
    routes: dict[str, int] = {}
    for r in rows:
        routes[r["route"]] = routes.get(r["route"], 0) + 1
    out["routes"] = routes
    prompts = [r["llm"]["prompt_tokens"] for r in rows if r.get("llm")]
    out["median_prompt_tokens"] = statistics.median(prompts) if prompts else None
    out["llm_calls"] = len(prompts)
    return out


def run(
    system: str, questions: list[PageQuestion], log: ItemLog, llm: LLMClient | None, readings: int = 2
) -> list[dict[str, Any]]:
    """Answer ``questions`` not yet in ``log`` with ``system`` (``reader``: ``readings`` readings that must agree;
    ``whole page``), appending each; every record of the list."""
    with log.appending() as (done, add):
        seen = {r["uid"] for r in done}
        for i, q in enumerate(questions, 1):
            if q.uid in seen:
                continue
            pages = [(p.id, p.text) for p in q.pages]
            t0 = time.perf_counter()
            got = (
                answer_page_question(q.question, pages, llm, readings=readings)
                if system.startswith("reader")
                else whole_page_answer(q.question, pages, llm)  # type: ignore[arg-type]  (never None here)
            )
            got.seconds = time.perf_counter() - t0
            rec = record(q, got)
            add(rec)
            done.append(rec)
            print(
                f"[{system} {i}/{len(questions)}] {q.uid} {rec['outcome']} {got.route} {got.seconds:.1f}s {got.answer!r}",
                flush=True,
            )
    wanted = {q.uid for q in questions}
    return [r for r in done if r["uid"] in wanted]


def main() -> None:
    ap = argparse.ArgumentParser(description="Questions over a filing page: the page reader against the whole page.")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument(
        "--questions", type=Path, default=TEST, help="a frozen uid list (default: the test part); 'all': every question"
    )
    ap.add_argument("--part", default="test", help="the part's name in the results")
    ap.add_argument("--limit", type=int, default=None, help="the first N questions of the list")
    ap.add_argument("--baseline-limit", type=int, default=12, help="the whole-page baseline on the first N (0: none)")
    ap.add_argument("--out", type=Path, default=Path("/tmp/finkg-page-questions"), help="checkpoint folder")
    ap.add_argument("--no-write", action="store_true", help="print the summary; write no results file")
    ap.add_argument("--no-llm", action="store_true", help="the reader's rules only (no model; the baseline is skipped)")
    ap.add_argument(
        "--one-reading",
        action="store_true",
        help="also the reader with one reading of the lines (the control of the two readings' agreement)",
    )
    ap.add_argument(
        "--llm-cache",
        type=Path,
        default=None,
        help="an LLM disk cache for development loops (a rerun replays the same prompts; seconds are then lookups)",
    )
    ap.add_argument("--name", default="page-questions", help="the results file's name (bench/results/NAME.json)")
    a = ap.parse_args()
    everything = read_financebench(a.data)
    by_uid = {q.uid: q for q in everything}
    listed = everything if str(a.questions) == "all" else [by_uid[u] for u in read_uids(a.questions)]
    questions = listed[: a.limit]
    settings = load_settings()
    cache = LLMCache(a.llm_cache) if a.llm_cache else None
    llm = None if a.no_llm else LLMClient(backend_from_settings(settings), cache=cache, seed=settings.llm.seed)
    out = a.out / a.part
    load_start = os.getloadavg()[0]
    reader = run("reader", questions, ItemLog(out / "reader.jsonl", "a page-reader answer"), llm)
    one = (
        run("reader one reading", questions, ItemLog(out / "reader-one.jsonl", "a one-reading answer"), llm, 1)
        if a.one_reading and llm is not None
        else []
    )
    subset = questions[: a.baseline_limit] if llm is not None else []
    baseline = (
        run("whole page", subset, ItemLog(out / "whole-page.jsonl", "a whole-page answer"), llm) if subset else []
    )
    subset_ids = {q.uid for q in subset}
    figures = {
        "reader": summary(reader),
        "reader_on_baseline_subset": summary([r for r in reader if r["uid"] in subset_ids]),
        "whole_page": summary(baseline),
    }
    if one:
        figures["reader_one_reading"] = summary(one)
        paired_one = {r["uid"]: r for r in one}
        figures["wrong_rate_difference_two_minus_one_reading"] = paired_bootstrap_difference(
            [1.0 if r["outcome"] == "wrong" else 0.0 for r in reader],
            [1.0 if paired_one[r["uid"]]["outcome"] == "wrong" else 0.0 for r in reader],
        ).as_dict()
    paired = {r["uid"]: r for r in baseline}
    both = [r for r in reader if r["uid"] in paired]
    if both:
        diff = paired_bootstrap_difference(
            [1.0 if r["outcome"] == "correct" else 0.0 for r in both],
            [1.0 if paired[r["uid"]]["outcome"] == "correct" else 0.0 for r in both],
        )
        figures["correct_rate_difference_reader_minus_whole_page"] = diff.as_dict()
    print(figures)
    if a.no_write:
        return
    parameters = {
        "data": "FinanceBench open-source sample (Islam et al. 2023), one-number questions",
        "part": a.part,
        "data_file": str(a.data.relative_to(ROOT) if a.data.is_absolute() else a.data),
        "questions": str(a.questions.relative_to(ROOT) if a.questions.is_absolute() else a.questions),
        "n_questions": len(questions),
        "baseline_subset": f"the first {len(subset)} questions of the list",
        "model": llm.model_id if llm is not None else "none (rules only)",
        "backend": settings.llm.backend if llm is not None else "none",
        "llm_cache": str(a.llm_cache) if a.llm_cache else "off",
        "intervals": "percentile bootstrap 95 %, 2000 resamples, seed 0",
        "load_average_1m": {"start": round(load_start, 2), "end": round(os.getloadavg()[0], 2)},
        "note": "the 2 cores were shared with other runs (the 1-minute load average above); a resumed run's seconds "
        "are those of the run that made each answer",
    }
    tables = {
        "page-questions": [
            {
                "system": name,
                "questions": s["n"],
                **{k: s[k]["count"] for k in OUTCOMES},
                "median_s": s["median_seconds"],
            }
            for name, s in (
                ("page reader", figures["reader"]),
                *((("page reader, one reading", figures["reader_one_reading"]),) if one else ()),
                ("page reader, baseline subset", figures["reader_on_baseline_subset"]),
                ("whole page to the model", figures["whole_page"]),
            )
        ]
    }
    path = write_result(a.name, parameters, figures, tables=tables)
    print(path)


if __name__ == "__main__":
    main()
