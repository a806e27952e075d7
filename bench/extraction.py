"""Seed 004 §3.1 benchmark: LLM triple extraction on FOMC statements, through finkg vs raw llama.cpp.

1. Ingests the FOMC statements (default: the 18 ``*.txt`` statements shipped in data/, the 10 of the
   gold set among them; ``--all``: the 160 statements of ../shared/data/fomc-statements) and runs ``finkg extract`` (extraction and
   verification) with a fresh LLM cache: chunks, sentences sent, LLM calls, tokens in/out, seconds,
   completion tokens/s, seconds per statement and the projected time for all 160 statements.
2. Baseline in the same run: the very same extraction prompts (the chunks' sentence groups) sent
   straight to ``llama_cpp.Llama.create_chat_completion`` with the same model, JSON schema and
   completion cap, no finkg in between; completion tokens/s of both and finkg's overhead in %
   (target <= 20 %).
3. Reruns the extraction (``redo``) with the cache kept: the backend calls it makes (target 0).

    python bench/extraction.py                      # Qwen2.5-Coder-1.5B (finkg models install --only qwen...)
    python bench/extraction.py --model PATH.gguf --statements 3
    python bench/extraction.py --all                # all 160 statements (about an hour on 2 cores)
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from finkg import models
from finkg.api import open_graph
from finkg.config import load_settings
from finkg.eval.results import RESULTS_DIR, write_result
from finkg.pipelines import kg_build as extraction
from finkg.pipelines import text as text_ingest
from generation.kgbuild.extraction import extraction_json_schema, extraction_messages, overlap, sentence_groups
from generation.llm import client_from_settings
from kg import cypher

ROOT = Path(__file__).resolve().parents[1]
GOLD_DIR = ROOT / "data" / "fomc-statements" / "statements"
ALL_DIR = ROOT.parent / "shared" / "data" / "fomc-statements" / "statements"
QWEN = "qwen2.5-coder-1.5b-instruct-q4_k_m"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, help=f"GGUF file (default: the installed {QWEN})")
    ap.add_argument("--statements", type=int, default=None, help="only the first N statements")
    ap.add_argument("--all", action="store_true", help=f"all statements in {ALL_DIR}")
    ap.add_argument("--baseline-calls", type=int, default=None, help="raw llama.cpp calls (default: all of them)")
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="where extraction.json goes")
    args = ap.parse_args()
    console = Console()
    model = args.model or models.installed_path(QWEN)
    if model is None:
        raise SystemExit(f"no model: give --model PATH.gguf or run `finkg models install --only {QWEN}`")
    cache_dir = Path(tempfile.mkdtemp(prefix="finkg-bench-llm-cache-"))
    s = load_settings(llm_backend="llama-cpp", llm_model_path=model, llm_cache=True, llm_cache_dir=cache_dir)
    source = ALL_DIR if args.all else GOLD_DIR
    files = sorted(source.glob("*.txt"))[: args.statements] if args.statements else sorted(source.glob("*.txt"))
    g = open_graph(s)
    try:
        text_ingest.ingest_text(g, s, files)
        docs = ["fomc:statement:" + f.stem for f in files]
        client = client_from_settings(s)
        t0 = time.perf_counter()
        first = extraction.extract(g, s, client, documents=docs, redo=True)
        wall = time.perf_counter() - t0
        n = len(files)
        table = Table(title=f"finkg extract on {n} FOMC statements ({Path(model).name}, {s.llm.threads} threads)")
        for c in (
            "chunks",
            "sentences sent",
            "LLM calls",
            "tokens in",
            "tokens out",
            "seconds",
            "out tok/s",
            "s / statement",
            "projected 160 statements",
        ):
            table.add_column(c)
        table.add_row(
            str(first.chunks),
            str(first.sentences_sent),
            str(first.calls),
            str(first.prompt_tokens),
            str(first.completion_tokens),
            f"{wall:.1f}",
            f"{first.completion_tokens / wall:.1f}",
            f"{wall / n:.1f}",
            f"{wall / n * 160 / 60:.0f} min",
        )
        console.print(table)

        # the baseline: the same extraction prompts, raw llama.cpp, same model and schema
        import llama_cpp  # the baseline needs it directly

        rows = g.read(
            cypher.TEXT_CHUNKS_FOR_EXTRACTION,
            {"families": None, "documents": docs, "suffix": "-", "redo": True, "limit": None},
        )
        prompts = [
            [r["sentences"][i] for i in grp]
            for r in rows
            for grp in sentence_groups(
                r["sentences"] or [],
                s.extract.sentences_per_call,
                overlap(r["previous_sentences"], r["sentences"] or []),
            )
        ]
        prompts = prompts[: args.baseline_calls] if args.baseline_calls else prompts
        llm = llama_cpp.Llama(
            model_path=str(model),
            n_ctx=s.llm.n_ctx,
            n_threads=s.llm.threads,
            n_batch=s.llm.n_batch,
            seed=0,
            verbose=False,
        )
        raw_tokens, t1 = 0, time.perf_counter()
        for p in prompts:
            out = llm.create_chat_completion(
                messages=extraction_messages(p),
                max_tokens=s.extract.max_tokens,
                temperature=0.0,
                seed=0,
                response_format={"type": "json_object", "schema": extraction_json_schema(len(p))},
            )
            raw_tokens += out["usage"]["completion_tokens"]
        raw_s = time.perf_counter() - t1
        del llm
        ours = first.completion_tokens / first.seconds if first.seconds else 0.0
        raw = raw_tokens / raw_s if raw_s else 0.0
        console.print(
            f"raw llama.cpp, the {len(prompts)} extraction prompts: {raw_tokens} completion tokens in "
            f"{raw_s:.1f} s = {raw:.1f} tok/s; finkg (extraction + verification, {first.calls} calls, "
            f"{first.completion_tokens} tokens in {first.seconds:.1f} s) = {ours:.1f} tok/s; "
            f"overhead {100 * (raw - ours) / raw if raw else 0:.1f} % (target <= 20 %)"
        )

        before = client.usage.snapshot()
        second = extraction.extract(g, s, client, documents=docs, redo=True)
        spent = client.usage - before
        console.print(
            f"rerun: {second.chunks} chunks, {spent.calls} LLM backend calls, "
            f"{spent.cache_hits} answered from the cache (target: 0 backend calls)"
        )
        path = write_result(
            "extraction",
            {"model": Path(model).name, "statements": n, "all": args.all, "baseline_calls": len(prompts)},
            {
                "chunks": first.chunks,
                "sentences_sent": first.sentences_sent,
                "llm_calls": first.calls,
                "prompt_tokens": first.prompt_tokens,
                "completion_tokens": first.completion_tokens,
                "wall_s": round(wall, 1),
                "finkg_tokens_per_s": round(ours, 3),
                "raw_tokens_per_s": round(raw, 3),
                "overhead_pct": round(100 * (raw - ours) / raw, 2) if raw else None,
                "s_per_statement": round(wall / n, 2),
                "projected_160_min": round(wall / n * 160 / 60, 1),
                "rerun_backend_calls": spent.calls,
            },
            directory=args.results_dir,
        )
        console.print(f"results: {path}")
    finally:
        g.close()


if __name__ == "__main__":
    main()
