"""The analyst agent's seconds per question: one question at a time (the wait a user sees) against several in
flight (the throughput of a batch), on the same TAT-QA questions in the same run (issue 17's speed target:
"median seconds per question with Qwen2.5-Coder-1.5B on 2 cores", <= 15 s).

The questions are the first ``--n`` of the stratified 300-question sample of TAT-QA's evaluation half, the sample
``finkg eval tatqa --half eval --sample 300`` and ``finkg eval agent`` use. Each pass is
``finkg eval tatqa -s agent`` (:func:`finkg.api.eval_tatqa`) with the configured LLM and an empty LLM cache of
its own, so no answer comes from a cache; the one-at-a-time pass runs first, then ``--workers`` at once (the
baseline of the ratio: one at a time). Per pass it reports the median and 90th-percentile seconds per answer
(each answer's own wall clock: with several in flight, the time it waited for the others' decoding too), the
wall clock of the pass divided by its answers (throughput), the median prompt tokens, EM, and how many answers
equal the other pass's (batched decoding is not bit-identical). The first answer of each pass includes the LLM
server's start; the median does not feel it.

    python bench/agent_latency.py ../shared/data/tatqa/tatqa_dataset_dev.json             # 24 questions, 1 and 4
    python bench/agent_latency.py tatqa_dataset_dev.json --n 40 --workers 4 --keep /tmp/latency

Writes ``bench/results/agent-latency.json``; exit status 2 when a pass answered nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from finkg import api
from finkg.config import load_settings
from finkg.eval.results import write_result
from finkg.output import stage_progress


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by linear interpolation (statistics' "inclusive" method)."""
    if len(values) == 1:
        return values[0]
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return cuts[round(q * 100) - 1]


def one_pass(path: Path, n: int, workers: int, work: Path, console: Console, **overrides: Any) -> dict[str, Any]:
    """Answer the first ``n`` questions with ``workers`` in flight and an empty LLM cache under ``work``; the
    pass's figures and its answers (``predicted``: ``{question uid: predicted spans}``). ``overrides``: settings
    (:func:`finkg.config.load_settings`) over the configured ones.

    Raises:
        FileExistsError: ``work`` is not empty (a pass over answers already there would time nothing).
    """
    if work.exists() and any(work.iterdir()):
        raise FileExistsError(f"{work}: not empty; a latency pass needs an empty folder (choose another --keep)")
    settings = load_settings(llm_cache=True, llm_cache_dir=work / "llm-cache", **overrides)
    t0 = time.perf_counter()
    with stage_progress(console) as progress:
        results, backend = api.eval_tatqa(
            path,
            systems=["agent"],
            half="eval",
            sample=300,
            limit=n,
            workers=workers,
            out=work / "answers",
            settings=settings,
            progress=progress,
        )
    wall = time.perf_counter() - t0
    answers = [r for r in results.results if r.system == "agent"]
    seconds = [r.seconds for r in answers if r.seconds is not None]
    tokens = [r.prompt_tokens for r in answers if r.prompt_tokens is not None]
    return {
        "workers": workers,
        "backend": backend,
        "answers": len(answers),
        "median_s": round(statistics.median(seconds), 2) if seconds else None,
        "p90_s": round(percentile(seconds, 0.9), 2) if seconds else None,
        "wall_s": round(wall, 1),
        "wall_s_per_answer": round(wall / len(answers), 2) if answers else None,
        "median_prompt_tokens": statistics.median(tokens) if tokens else None,
        "em": round(100 * statistics.fmean(r.em for r in answers), 1) if answers else None,
        "predicted": {r.question_uid: r.predicted for r in answers},
    }


def main(argv: list[str] | None = None) -> int:
    """Entry point (see the module doc); returns the exit status."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("tatqa", type=Path, help="a TAT-QA JSON file (its evaluation half is used)")
    ap.add_argument("--n", type=int, default=24, help="the first N questions of the 300-question sample")
    ap.add_argument("--workers", type=int, default=4, help="questions in flight in the second pass")
    ap.add_argument("--keep", type=Path, help="keep the passes' answers and caches here (default: a temp folder)")
    args = ap.parse_args(argv)
    console = Console()
    root = args.keep or Path(tempfile.mkdtemp(prefix="finkg-agent-latency-"))
    passes = [one_pass(args.tatqa, args.n, w, root / f"workers-{w}", console) for w in (1, args.workers)]
    if not all(p["answers"] for p in passes):
        console.print(f"{args.tatqa}: a pass answered nothing", style="red")
        return 2
    one, many = passes
    same = sum(one["predicted"].get(uid) == spans for uid, spans in many["predicted"].items())
    for p in passes:
        console.print(
            f"{p['workers']} in flight: median {p['median_s']} s per answer (p90 {p['p90_s']}), "
            f"{p['wall_s_per_answer']} s of wall clock per answer, median {p['median_prompt_tokens']} prompt tokens, "
            f"EM {p['em']} over {p['answers']}",
            highlight=False,
        )
    ratio = round(many["median_s"] / one["median_s"], 2)
    throughput = round(one["wall_s_per_answer"] / many["wall_s_per_answer"], 2)
    console.print(
        f"median latency {args.workers} in flight / one at a time: {ratio}x; throughput {throughput}x; "
        f"{same} of {many['answers']} answers equal",
        highlight=False,
    )
    figures = {
        "questions": one["answers"],
        "one_median_s": one["median_s"],
        "one_p90_s": one["p90_s"],
        "one_wall_s_per_answer": one["wall_s_per_answer"],
        "many_median_s": many["median_s"],
        "many_p90_s": many["p90_s"],
        "many_wall_s_per_answer": many["wall_s_per_answer"],
        "median_prompt_tokens": one["median_prompt_tokens"],
        "one_em": one["em"],
        "many_em": many["em"],
        "answers_equal": same,
        "ratio_many_over_one_median_x": ratio,
        "ratio_throughput_many_over_one_x": throughput,
        "target_median_s": 15,
        "target_met": one["median_s"] <= 15,
    }
    out = write_result(
        "agent-latency",
        {"tatqa": str(args.tatqa), "n": args.n, "workers": args.workers, "backend": one["backend"]},
        figures,
        tables={"passes": [{k: v for k, v in p.items() if k != "predicted"} for p in passes]},
    )
    console.print(f"wrote {out}", highlight=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
