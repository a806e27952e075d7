"""LLM throughput: raw llama.cpp, finkg's client, and llama.cpp's server with parallel slots, in the same run.

The same GGUF model and the same real prompts: finkg's own extraction prompts (seed 004 section 3.1:
instructions + few-shot turns + four numbered sentences of a real FOMC statement shipped in
data/fomc-statements, with the JSON schema that constrains the answer), completed

1. by ``llama_cpp.Llama.create_chat_completion`` directly, one call at a time (the baseline);
2. by :class:`generation.llm.LLMClient` over :class:`generation.llm.LlamaCppBackend` (cache off), one at a time
   (finkg's overhead: JSON parsing, schema check, usage accounting; target <= 20 %);
3. by :class:`generation.llm.LLMClient` over :class:`generation.llm.server.LlamaServerBackend`, llama.cpp's own
   server with ``S`` parallel slots and ``S`` calls in flight (continuous batching), for each ``--slots`` S.

Every path completes every prompt in each of two rounds; the order of the paths is reversed in the second
round, so machine load swings fall on all of them alike. It prints completion tokens/s and wall seconds of
each, the ratio to raw llama.cpp, and how many answers equal raw llama.cpp's (greedy decoding; batched
decoding may round differently). Then it runs the prompts twice through a client with a fresh disk cache and
prints the backend calls of the second pass (must be 0).

    python bench/llm_throughput.py                 # Qwen2.5-Coder-1.5B Q4_K_M (`finkg models install --all`)
    python bench/llm_throughput.py --model PATH.gguf --n 8 --slots 1 2 4
    python bench/llm_throughput.py --model smollm2-135m-instruct-q4_1 --n 20   # a registry name works too
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from finkg import models
from finkg.eval.results import RESULTS_DIR, write_result
from generation.kgbuild.extraction import eligible_sentences, extraction_json_schema, extraction_messages
from generation.llm import LlamaCppBackend, LLMCache, LLMClient
from generation.llm.server import LlamaServerBackend
from ingest.text.chunking import split_sentences
from ingest.text.fomc import read_fomc_file

DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
DEFAULT_TEXTS = Path(__file__).resolve().parents[1] / "data" / "fomc-statements" / "statements"
console = Console()


def prompts_from(folder: Path, n: int, per_call: int = 4) -> list[list[str]]:
    """``n`` groups of ``per_call`` consecutive extraction-eligible sentences, one group per statement (sorted
    by date, cycling through the statements' later groups when there are fewer statements than ``n``)."""
    per_file: list[list[list[str]]] = []
    for f in sorted(folder.glob("*.txt")):
        doc = read_fomc_file(f)
        sents = [s for _, text in doc.sections for line in text.split("\n") for s in split_sentences(line)]
        keep = [sents[i] for i in eligible_sentences(sents, content_filter=True)]
        per_file.append([keep[k : k + per_call] for k in range(0, len(keep) - per_call + 1, per_call)])
    out: list[list[str]] = []
    depth = 0
    while len(out) < n and any(len(g) > depth for g in per_file):
        out += [g[depth] for g in per_file if len(g) > depth]
        depth += 1
    if len(out) < n:
        raise SystemExit(f"{folder}: {len(out)} groups of {per_call} sentences, fewer than --n {n}")
    return out[:n]


def resolve_model(arg: str) -> Path:
    """A GGUF path, or a registry name installed by `finkg models install`."""
    p = Path(arg).expanduser()
    if p.is_file():
        return p
    path = models.installed_path(arg)
    if path is None:
        raise SystemExit(f"{arg}: not a file and not an installed model (finkg models install --only {arg})")
    return path


Call = Callable[[list[str]], tuple[int, str]]


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--model", default=DEFAULT_MODEL, help="GGUF file or registry name (default: %(default)s)")
    ap.add_argument("--n", type=int, default=8, help="prompts per path and round (default: %(default)s)")
    ap.add_argument("--slots", type=int, nargs="+", default=[1, 4], help="llama-server slot counts (default: 1 4)")
    ap.add_argument("--max-tokens", type=int, default=384, help="completion cap ([extract] max_tokens)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--texts", type=Path, default=DEFAULT_TEXTS, help="folder of FOMC statement .txt files")
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="where llm_throughput.json goes")
    args = ap.parse_args()

    model = resolve_model(args.model)
    groups = prompts_from(args.texts, args.n)
    backend = LlamaCppBackend(model, n_ctx=args.n_ctx, n_threads=args.threads)
    t0 = time.perf_counter()
    llama = backend.llama()
    load_s = time.perf_counter() - t0
    client = LLMClient(backend)  # cache disabled
    model_id = client.model_id

    def raw_call(g: list[str]) -> tuple[int, str]:
        schema = {"type": "json_object", "schema": extraction_json_schema(len(g))}
        out = llama.create_chat_completion(
            messages=extraction_messages(g), max_tokens=args.max_tokens, temperature=0.0, seed=0, response_format=schema
        )
        return out["usage"]["completion_tokens"], out["choices"][0]["message"]["content"].strip()

    def client_call(c: LLMClient) -> Call:
        def call(g: list[str]) -> tuple[int, str]:
            res = c.chat(
                extraction_messages(g),
                max_tokens=args.max_tokens,
                temperature=0.0,
                json_schema=extraction_json_schema(len(g)),
            )
            return res.completion_tokens, res.text

        return call

    servers = {s: LlamaServerBackend(model, n_ctx=args.n_ctx, parallel=s, n_threads=args.threads) for s in args.slots}
    start_s = {}
    for s, srv in servers.items():
        t0 = time.perf_counter()
        srv.start()
        start_s[s] = time.perf_counter() - t0
    paths: dict[str, tuple[Call, int]] = {"raw llama.cpp": (raw_call, 1), "finkg llama-cpp": (client_call(client), 1)}
    for s, srv in servers.items():
        paths[f"finkg llama-server, {s} slot{'s' if s > 1 else ''}"] = (client_call(LLMClient(srv)), s)

    raw_call(groups[0])  # warm-up (not counted)
    totals = {k: [0, 0.0] for k in paths}
    texts: dict[str, list[str]] = {k: [] for k in paths}
    names = list(paths)
    try:
        with Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
        ) as bar:
            task = bar.add_task("paths x prompts x 2 rounds", total=2 * len(paths) * len(groups))
            for rnd in range(2):
                for name in names if rnd == 0 else names[::-1]:
                    call, inflight = paths[name]
                    t = time.perf_counter()
                    with ThreadPoolExecutor(inflight) as pool:
                        outs = list(pool.map(call, groups))
                    totals[name][1] += time.perf_counter() - t
                    totals[name][0] += sum(n for n, _ in outs)
                    if rnd == 0:
                        texts[name] = [x for _, x in outs]
                    bar.advance(task, len(groups))
    finally:
        for srv in servers.values():
            srv.close()

    # the cache: two passes through a client with a fresh disk cache
    with tempfile.TemporaryDirectory() as tmp:
        cached = LLMClient(backend, cache=LLMCache(Path(tmp) / "llm-cache"))
        passes = []
        for _ in range(2):
            before = cached.usage.snapshot()
            t = time.perf_counter()
            for g in groups:
                cached.chat(
                    extraction_messages(g), max_tokens=args.max_tokens, json_schema=extraction_json_schema(len(g))
                )
            d = cached.usage - before
            passes.append((d.calls, d.cache_hits, time.perf_counter() - t))

    table = Table(
        title=f"{model.name}: {len(groups)} extraction prompts x 2 rounds per path, {args.threads} threads, "
        f"max_tokens {args.max_tokens}"
    )
    for c in ("path", "in flight", "completion tokens", "seconds", "tokens/s", "x raw", "answers = raw"):
        table.add_column(c)
    raw_tps = totals["raw llama.cpp"][0] / totals["raw llama.cpp"][1]
    rows = []
    for name, (tok, sec) in totals.items():
        same = sum(a == b for a, b in zip(texts[name], texts["raw llama.cpp"]))
        row = {
            "path": name,
            "in_flight": paths[name][1],
            "completion_tokens": tok,
            "seconds": round(sec, 1),
            "tokens_per_s": round(tok / sec, 2),
            "x_raw": round(tok / sec / raw_tps, 2),
            "answers_equal_raw": f"{same}/{len(groups)}",
        }
        rows.append(row)
        table.add_row(*(str(v) for v in row.values()))
    console.print(table)
    client_tps = totals["finkg llama-cpp"][0] / totals["finkg llama-cpp"][1]
    overhead = (raw_tps - client_tps) / raw_tps * 100
    best = max((r for r in rows if r["path"].startswith("finkg llama-server")), key=lambda r: r["tokens_per_s"])
    console.print(f"finkg client overhead over raw llama.cpp: {overhead:+.1f} % of tokens/s (target <= 20 %)")
    console.print(f"best server path: {best['path']}, {best['tokens_per_s']} tokens/s, {best['x_raw']}x raw llama.cpp")
    console.print(
        f"model load {load_s:.1f} s (in process); server start "
        + ", ".join(f"{s} slots {v:.1f} s" for s, v in start_s.items())
    )
    for i, (n_calls, hits, sec) in enumerate(passes, 1):
        console.print(f"cache pass {i}: {n_calls} backend calls, {hits} cache hits, {sec:.2f} s")
    path = write_result(
        "llm_throughput",
        {
            "model": model.name,
            "model_id": model_id,
            "prompts": len(groups),
            "rounds": 2,
            "slots": args.slots,
            "max_tokens": args.max_tokens,
            "threads": args.threads,
            "n_ctx": args.n_ctx,
        },
        {
            "raw_tokens_per_s": round(raw_tps, 3),
            "client_tokens_per_s": round(client_tps, 3),
            "client_overhead_pct": round(overhead, 2),
            "best_server_path": best["path"],
            "best_server_tokens_per_s": best["tokens_per_s"],
            "ratio_best_server_over_raw_x": best["x_raw"],
            "model_load_s": round(load_s, 2),
            "cached_rerun_backend_calls": passes[1][0],
        },
        tables={"paths": rows},
        directory=args.results_dir,
    )
    console.print(f"results: {path}")


if __name__ == "__main__":
    main()
