"""Seed 004 §3.1 benchmark: LLM triple extraction on FOMC statements with finkg's defaults, against raw llama.cpp.

1. Ingests the FOMC statements (default: the 18 ``*.txt`` statements shipped in data/, the 10 of the
   gold set among them; ``--all``: the 160 statements of ../shared/data/fomc-statements) and runs
   ``finkg extract`` with the configured backend (``--backend``; the default is ``llama-server`` with
   ``[llm] parallel`` slots where the binary is built), the content filter, no verification pass (the
   defaults) and a fresh LLM cache: chunks, sentences sent and skipped, LLM calls, tokens in/out, seconds,
   completion tokens/s, seconds per statement and the projected time for all 160 statements (target <= 45 min).
2. Quality: precision / recall / F1 of the triples on the statements of the hand-checked gold set among them
   (tests/data/kg_gold.jsonl; head, relation and tail matched, :mod:`finkg.eval.kg`).
3. Baseline in the same run: the first ``--baseline-calls`` of the very same extraction prompts sent one at a
   time straight to ``llama_cpp.Llama.create_chat_completion`` (same model, JSON schema and completion cap,
   no finkg, no server): completion tokens/s and seconds per prompt, the time all prompts would take that way,
   and the ratio to finkg's wall time.
4. Reruns the extraction with the cache kept: the backend calls it makes (target 0).

A run killed midway continues with ``--resume --cache-dir DIR`` (the cache of the killed run, printed at
start): chunks already proposed are kept (the graph's extraction records) and the figures then cover the
rest only (``resumed: true`` in the results).

    python bench/extraction.py                      # Qwen2.5-Coder-1.5B (finkg models install --only qwen...)
    python bench/extraction.py --model PATH.gguf --statements 3
    python bench/extraction.py --all                # all 160 statements (about an hour on 2 cores)
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from finkg import models
from finkg.api import open_graph
from finkg.config import load_settings
from finkg.eval import kg as kg_eval
from finkg.eval.results import RESULTS_DIR, write_result
from finkg.output import stage_progress
from finkg.pipelines import kg_build
from finkg.pipelines import text as text_ingest
from generation.kgbuild.extraction import extraction_json_schema, extraction_messages, overlap, sentence_groups
from generation.llm import client_from_settings
from generation.llm.server import default_server_path
from ingest.text.documents import FOMC_NAME
from kg import cypher

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "tests" / "data" / "kg_gold.jsonl"
GOLD_DIR = ROOT / "data" / "fomc-statements" / "statements"
ALL_DIR = ROOT.parent / "shared" / "data" / "fomc-statements" / "statements"
QWEN = "qwen2.5-coder-1.5b-instruct-q4_k_m"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, help=f"GGUF file (default: the installed {QWEN})")
    ap.add_argument(
        "--backend",
        choices=("llama-server", "llama-cpp"),
        help="default: llama-server where scripts/bootstrap.sh built it, else llama-cpp",
    )
    ap.add_argument("--statements", type=int, default=None, help="only the first N statements")
    ap.add_argument("--all", action="store_true", help=f"all statements in {ALL_DIR}")
    ap.add_argument("--baseline-calls", type=int, default=24, help="raw llama.cpp calls (default: 24; 0: none)")
    ap.add_argument("--cache-dir", type=Path, help="LLM cache (default: a fresh temporary directory)")
    ap.add_argument("--resume", action="store_true", help="keep chunks already proposed (with the killed run's cache)")
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="where extraction.json goes")
    args = ap.parse_args()
    console = Console(width=None if Console().is_terminal else 200)
    model = args.model or models.installed_path(QWEN)
    if model is None:
        raise SystemExit(f"no model: give --model PATH.gguf or run `finkg models install --only {QWEN}`")
    cache_dir = args.cache_dir or Path(tempfile.mkdtemp(prefix="finkg-bench-llm-cache-"))
    console.print(f"LLM cache: {cache_dir} (a killed run continues with --resume --cache-dir {cache_dir})")
    backend = args.backend or ("llama-server" if default_server_path() is not None else "llama-cpp")
    s = load_settings(llm_backend=backend, llm_model_path=model, llm_cache=True, llm_cache_dir=cache_dir)
    source = ALL_DIR if args.all else GOLD_DIR
    # every statement file, whatever its extension (the dataset names one 20080916.xt), as `finkg ingest text` reads them
    files = sorted(p for p in source.iterdir() if p.is_file() and FOMC_NAME.match(p.name))[: args.statements]
    gold = kg_eval.load_gold(GOLD)
    gold_statements = sorted({x.statement for x in gold} & {f.stem for f in files})
    gold = [x for x in gold if x.statement in gold_statements]
    g = open_graph(s)
    client = client_from_settings(s)
    try:
        text_ingest.ingest_text(g, s, files)
        docs = ["fomc:statement:" + f.stem for f in files]
        t0 = time.perf_counter()
        with stage_progress(console) as progress:
            first = kg_build.extract(
                g, s, client, documents=docs, redo=not args.resume, verify=False, progress=progress
            )
        wall = time.perf_counter() - t0
        n = len(files)
        scores = {
            (r["stage"], r["matching"]): r
            for r in kg_eval.score(kg_build.stored_stages(g, client.model_id, False, gold_statements), gold)
        }
        quality = scores.get(("proposed", "head+relation+tail"), {})
        table = Table(
            title=f"finkg extract on {n} FOMC statements ({Path(model).name}, {s.llm.backend}, "
            f"{s.llm.concurrency()} in flight, {s.llm.threads} threads)"
        )
        cells = {
            "chunks": str(first.chunks),
            "sentences sent": str(first.sentences_sent),
            "skipped": str(first.sentences_skipped),
            "LLM calls": str(first.calls),
            "tokens in": str(first.prompt_tokens),
            "tokens out": str(first.completion_tokens),
            "seconds": f"{wall:.1f}",
            "out tok/s": f"{first.completion_tokens / wall:.1f}",
            "s / statement": f"{wall / n:.1f}",
            "projected 160 statements": f"{wall / n * 160 / 60:.0f} min",
            f"P / R / F1 ({len(gold_statements)} gold statements)": (
                f"{quality['precision']:.3f} / {quality['recall']:.3f} / {quality['f1']:.3f}" if quality else "-"
            ),
        }
        for c in cells:
            table.add_column(c)
        table.add_row(*cells.values())
        console.print(table)

        # the baseline: the same extraction prompts, raw llama.cpp one at a time, same model and schema
        rows = g.read(
            cypher.TEXT_CHUNKS_FOR_EXTRACTION,
            {"families": None, "documents": docs, "suffix": "-"},
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
        sample = prompts[: args.baseline_calls]
        raw_tokens, raw_s = 0, 0.0
        if sample:
            client.close()  # the server's threads would share the CPU with the baseline
            import llama_cpp  # the baseline needs it directly

            llm: Any = llama_cpp.Llama(
                model_path=str(model),
                n_ctx=s.llm.n_ctx,
                n_threads=s.llm.threads,
                n_batch=s.llm.n_batch,
                seed=0,
                verbose=False,
            )
            t1 = time.perf_counter()
            for p in sample:
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
        raw = raw_tokens / raw_s if raw_s else 0.0
        ours = first.completion_tokens / wall if wall else 0.0
        # every prompt of the run sent one at a time (the filter off), at the sample's seconds per prompt
        raw_all_s = raw_s / len(sample) * len(prompts) if sample else 0.0
        ratio = raw_all_s / wall if wall and raw_all_s else None
        if sample:
            console.print(
                f"raw llama.cpp, one at a time, {len(sample)} of the {len(prompts)} extraction prompts: {raw_tokens} "
                f"completion tokens in {raw_s:.1f} s = {raw:.1f} tok/s, {raw_s / len(sample):.1f} s per prompt; all "
                f"{len(prompts)} that way: about {raw_all_s / 60:.0f} min; finkg: {ours:.1f} tok/s, {wall / 60:.1f} min"
                f" wall ({ratio:.2f}x faster)"
            )

        client = client_from_settings(s)
        before = client.usage.snapshot()
        second = kg_build.extract(g, s, client, documents=docs, redo=True, verify=False)
        spent = client.usage - before
        console.print(
            f"rerun: {second.chunks} chunks, {spent.calls} LLM backend calls, "
            f"{spent.cache_hits} answered from the cache (target: 0 backend calls)"
        )
        path = write_result(
            "extraction",
            {
                "model": Path(model).name,
                "backend": s.llm.backend,
                "in_flight": s.llm.concurrency(),
                "threads": s.llm.threads,
                "content_filter": s.extract.content_filter,
                "verify": False,
                "statements": n,
                "all": args.all,
                "resumed": args.resume,
                "gold_statements": gold_statements,
                "baseline_calls": len(sample),
            },
            {
                "chunks": first.chunks,
                "sentences_sent": first.sentences_sent,
                "sentences_skipped": first.sentences_skipped,
                "sentences_reused": first.sentences_reused,
                "llm_calls": first.calls,
                "prompt_tokens": first.prompt_tokens,
                "completion_tokens": first.completion_tokens,
                "wall_s": round(wall, 1),
                "wall_min": round(wall / 60, 1),
                "finkg_tokens_per_s": round(ours, 3),
                "s_per_statement": round(wall / n, 2),
                "projected_160_min": round(wall / n * 160 / 60, 1),
                "gold_precision": quality.get("precision"),
                "gold_recall": quality.get("recall"),
                "gold_f1": quality.get("f1"),
                "raw_tokens_per_s": round(raw, 3),
                "raw_s_per_prompt": round(raw_s / len(sample), 2) if sample else None,
                "raw_all_prompts_min": round(raw_all_s / 60, 1) if sample else None,
                "ratio_raw_over_finkg_x": round(ratio, 2) if ratio else None,
                "rerun_backend_calls": spent.calls,
            },
            directory=args.results_dir,
        )
        console.print(f"results: {path}")
    finally:
        client.close()
        g.close()


if __name__ == "__main__":
    main()
