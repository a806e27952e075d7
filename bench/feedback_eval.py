"""Benchmarks of the market-feedback evaluation (issue 6: "memory update cost per matured label; evaluation run
time for the whole 2014-2015 period"; seed 000, sections 3.5 and 4).

1. **Memory update cost per matured label.** N feedback events (seeded: families news/social, the five
   Appendix A event types, three horizons, signals and labels in {-1, 0, 1}, one or two cited families) are
   recorded in two fresh source-memory runs of the real Neo4j; one applies them with
   :meth:`retrieval.memory.source_memory.SourceMemory.apply_matured` (batched UNWIND, one transaction per batch),
   the other with a per-row write loop (the same statement, one transaction per event): the baseline, in the
   same run. The two runs' cells must agree. Prints seconds per matured label and the ratio.
2. **Evaluation run time per anchor** on a small real slice (default: tests/data/feedback_tweets, the four
   MSFT news anchors of July 2015, real MSFT and S&P 500 prices) with SmolLM2, split into retrieval
   (candidates from the graph, filtering, hybrid scoring, the market card), memory (matured feedback,
   ranking, stored selections) and reader (the LLM); then the same slice again under a new run id with the
   LLM cache warm (identical contexts, so every answer is a cache hit): the baseline without LLM time.

Run: ``python bench/feedback_eval.py --events 2000`` (needs the local Neo4j, MiniLM and SmolLM2; the
``[llm]`` settings are overridden with SmolLM2 unless ``--model`` names another GGUF). Everything it writes
is removed at the end (the tweets stay in the graph, as an ingest would leave them).
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
import uuid
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from finkg import models  # noqa: E402
from finkg.api import open_graph  # noqa: E402
from finkg.config import load_settings  # noqa: E402
from finkg.eval.feedback import FeedbackOptions, condition_runs, reset_run, run_evaluation  # noqa: E402
from finkg.eval.results import RESULTS_DIR, write_result  # noqa: E402
from generation.feedback.events import EVENT_TYPES  # noqa: E402
from generation.feedback.reader import FrozenReader  # noqa: E402
from generation.llm import LlamaCppBackend, LLMCache, LLMClient  # noqa: E402
from kg import Graph, cypher  # noqa: E402
from retrieval.embeddings import make_embedder  # noqa: E402
from retrieval.memory.source_memory import HORIZONS, Feedback, SourceMemory  # noqa: E402

VALIDATION = {
    "1D": {1: 0.184, 0: 0.637, -1: 0.179},
    "3D": {1: 0.192, 0: 0.615, -1: 0.193},
    "5D": {1: 0.207, 0: 0.586, -1: 0.207},
}  # seed 000, Table 1, validation row


def synthetic_feedback(n: int, seed: int) -> list[Feedback]:
    """n feedback events (anchor-horizon pairs) with a seeded mix of families, event types and outcomes."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        retrieved = {f"c{i}-{k}": rng.choice(("news", "social")) for k in range(5)}
        cited = rng.sample(sorted(retrieved), rng.choice((0, 1, 2)))
        out.append(
            Feedback(
                f"a{i // 3}",
                rng.choice(EVENT_TYPES),
                HORIZONS[i % 3],
                rng.choice((-1, 0, 1)),
                rng.choice((-1, 0, 0, 1)),
                "2015-01-02T21:00:00Z",
                cited,
                retrieved,
            )
        )
    return out


def bench_memory(graph: Graph, n: int, seed: int) -> dict[str, float]:
    """Batched apply_matured vs a per-row write loop on the same N events (cells must agree)."""
    events = synthetic_feedback(n, seed)
    batched = SourceMemory(graph, f"bench-{uuid.uuid4().hex[:8]}", VALIDATION)
    looped = SourceMemory(graph, f"bench-{uuid.uuid4().hex[:8]}", VALIDATION)
    try:
        batched.record(events)
        looped.record(events)
        as_of = "2015-01-05T00:00:00Z"
        t0 = time.perf_counter()
        stats = batched.apply_matured(as_of)
        t_batched = time.perf_counter() - t0
        pending = [
            r["feedback"] for r in graph.read(cypher.PENDING_MEMORY_FEEDBACK, {"run": looped.run, "as_of": as_of})
        ]
        t0 = time.perf_counter()
        for fb in pending:
            graph.write(cypher.APPLY_MEMORY_FEEDBACK, {"rows": [looped._update(fb)], "as_of": as_of})
        t_loop = time.perf_counter() - t0
        a = {k: tuple(round(x, 9) for x in v) for k, v in batched.cells().items()}
        b = {k: tuple(round(x, 9) for x in v) for k, v in looped.cells().items()}
        if a != b or stats.applied != n:
            raise SystemExit(f"the batched and the per-row memories disagree ({stats.applied} applied of {n})")
        return {"events": n, "updated": stats.updated, "cells": len(a), "batched_s": t_batched, "loop_s": t_loop}
    finally:
        batched.reset()
        looped.reset()


def bench_loop(
    graph: Graph,
    settings,
    tweets: Path,
    prices: Path,
    market: Path,
    tickers: tuple[str, ...],
    start: date,
    end: date,
    model: Path,
    minilm: Path,
    conditions: tuple[str, ...],
) -> list[dict]:
    """The evaluation of a slice twice: cold LLM cache, then warm (new run id, same contexts)."""
    cache_dir = Path(tempfile.mkdtemp(prefix="finkg-bench-feedback-"))
    client = LLMClient(LlamaCppBackend(model, n_ctx=2048, n_threads=settings.llm.threads), cache=LLMCache(cache_dir))
    reader = FrozenReader(client, settings.feedback.reader_max_tokens)
    embedder = make_embedder(minilm)
    rows = []
    try:
        for label in ("cold LLM cache", "warm LLM cache (baseline: no LLM time)"):
            options = FeedbackOptions(
                tweets,
                prices,
                market,
                tickers,
                start,
                end,
                cache_dir / uuid.uuid4().hex[:6],
                f"bench{uuid.uuid4().hex[:6]}",
                conditions,
                shuffles=1,
            )
            try:
                s = run_evaluation(graph, settings, options, reader, embedder)
            finally:
                reset_run(graph, options, condition_runs(options.run, options.conditions, options.shuffles), {})
            n = max(s.done, 1)
            rows.append(
                {
                    "pass": label,
                    "anchors": s.done,
                    "records": s.records,
                    "llm_calls": s.reader_calls,
                    "cache_hits": s.cache_hits,
                    "completion_tokens": s.completion_tokens,
                    "prompt_tokens": s.prompt_tokens,
                    "total_s": s.seconds,
                    "retrieval_s_per_anchor": s.seconds_retrieval / n,
                    "memory_s_per_anchor": s.seconds_memory / n,
                    "reader_s_per_anchor": s.seconds_reader / n,
                    "reader_s_per_call": s.seconds_reader / max(s.reader_calls, 1),
                }
            )
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    return rows


def main() -> None:
    data = ROOT / "tests" / "data"
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--events", type=int, default=2000, help="feedback events for the memory benchmark")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="where feedback_eval.json goes")
    p.add_argument("--tweets", type=Path, default=data / "feedback_tweets")
    p.add_argument("--prices", type=Path, default=data / "market" / "prices")
    p.add_argument("--market", type=Path, default=data / "market" / "index" / "sp500.csv")
    p.add_argument("--tickers", default="MSFT")
    p.add_argument("--start", default="2015-07-01")
    p.add_argument("--end", default="2015-07-31")
    p.add_argument("--conditions", default="no-memory,memory")
    p.add_argument("--model", type=Path, default=None, help="GGUF of the reader (default: SmolLM2-135M)")
    p.add_argument("--skip-loop", action="store_true", help="only the memory benchmark")
    args = p.parse_args()
    settings = load_settings(text_tokenizer=None, text_chunk_tokens=240, text_chunk_overlap=48)
    graph = open_graph(settings)
    try:
        m = bench_memory(graph, args.events, args.seed)
        print(
            f"memory update, {m['events']} matured labels ({m['updated']} with a valid citation, {m['cells']} cells):"
        )
        print(
            f"  apply_matured (batched): {m['batched_s']:.3f} s = {1e3 * m['batched_s'] / m['events']:.3f} ms per label"
        )
        print(f"  per-row write loop:      {m['loop_s']:.3f} s = {1e3 * m['loop_s'] / m['events']:.3f} ms per label")
        print(f"  ratio loop / batched:    {m['loop_s'] / m['batched_s']:.1f}x (cells agree)")
        parameters = {k: v for k, v in vars(args).items() if k != "results_dir"}
        figures = {
            "events": m["events"],
            "updated": m["updated"],
            "cells": m["cells"],
            "batched_s": round(m["batched_s"], 4),
            "loop_s": round(m["loop_s"], 4),
            "batched_ms_per_label": round(1e3 * m["batched_s"] / m["events"], 4),
            "loop_ms_per_label": round(1e3 * m["loop_s"] / m["events"], 4),
            "ratio_loop_over_batched_x": round(m["loop_s"] / m["batched_s"], 2),
        }
        if args.skip_loop:
            print(f"results: {write_result('feedback_eval', parameters, figures, directory=args.results_dir)}")
            return
        model = args.model or models.installed_path("smollm2-135m-instruct-q4_1")
        minilm = settings.embedding.model_path or models.installed_path("all-minilm-l6-v2")
        if model is None or minilm is None:
            raise SystemExit("SmolLM2 / MiniLM are not installed: `finkg models install`")
        rows = bench_loop(
            graph,
            settings,
            args.tweets,
            args.prices,
            args.market,
            tuple(t.strip().upper() for t in args.tickers.split(",")),
            date.fromisoformat(args.start),
            date.fromisoformat(args.end),
            Path(model),
            Path(minilm),
            tuple(c.strip() for c in args.conditions.split(",")),
        )
        print(
            f"evaluation loop on {args.tweets.name} {args.tickers} {args.start}..{args.end}, conditions "
            f"{args.conditions}, reader {Path(model).name}:"
        )
        for r in rows:
            print(
                f"  {r['pass']}: {r['anchors']} anchors, {r['records']} records, {r['llm_calls']} LLM calls / "
                f"{r['cache_hits']} cache hits, {r['completion_tokens']} completion + {r['prompt_tokens']} prompt tokens, "
                f"{r['total_s']:.1f} s total"
            )
            print(
                f"    per anchor: retrieval {r['retrieval_s_per_anchor']:.3f} s, memory {r['memory_s_per_anchor']:.3f} s, "
                f"reader {r['reader_s_per_anchor']:.2f} s ({r['reader_s_per_call']:.2f} s per LLM call)"
            )
        cold, warm = rows
        print(
            f"  ratio cold / warm total: {cold['total_s'] / max(warm['total_s'], 1e-9):.1f}x "
            f"(reader share of the cold run: {cold['reader_s_per_anchor'] * cold['anchors'] / cold['total_s']:.0%})"
        )
        figures["ratio_cold_over_warm_total_x"] = round(cold["total_s"] / max(warm["total_s"], 1e-9), 2)
        parameters["model"] = Path(model).name
        path = write_result(
            "feedback_eval",
            parameters,
            figures,
            tables={"loop": [{k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()} for r in rows]},
            directory=args.results_dir,
        )
        print(f"results: {path}")
    finally:
        graph.close()


if __name__ == "__main__":
    main()
