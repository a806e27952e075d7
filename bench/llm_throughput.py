"""LLM throughput: extraction through finkg's LLMClient vs raw llama.cpp, in the same run.

The same GGUF model, the same prompts and the same JSON schema (a triple-extraction prompt in
the shape of seed 004 section 3.1: instructions + one few-shot example + a paragraph of a real
FOMC statement from ../shared/data/fomc-statements) are completed

1. by ``llama_cpp.Llama.create_chat_completion`` directly (the baseline), and
2. by :class:`generation.llm.LLMClient` over :class:`generation.llm.LlamaCppBackend` with the
   cache disabled (JSON parsing, schema check, usage accounting included),

on the same ``Llama`` object, prompt by prompt in ABBA order (who goes first alternates) so
machine load swings and the KV prefix left by the previous call fall on both paths alike. It
prints completion tokens/s of each, the client's overhead (target: <= 20 %) and the time spent
in the client outside the backend call (ms per call). Then it runs the prompts twice through a
client with a fresh disk cache and prints the backend calls of the second pass (must be 0).

    python bench/llm_throughput.py                 # Qwen2.5-Coder-1.5B Q4_K_M (`finkg models install --all`)
    python bench/llm_throughput.py --model PATH.gguf --n 10
    python bench/llm_throughput.py --model smollm2-135m-instruct-q4_1 --n 20   # a registry name works too
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from finkg import models
from finkg.eval.results import RESULTS_DIR, write_result
from generation.llm import LlamaCppBackend, LLMCache, LLMClient

DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
DEFAULT_TEXTS = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "fomc-statements" / "statements"
console = Console()

RELATIONS = ["belong_to", "affect", "indicate", "equal_to", "may_lead_to"]
SCHEMA = {
    "type": "object",
    "required": ["triples"],
    "properties": {
        "triples": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["head", "relation", "tail"],
                "properties": {"head": {"type": "string"}, "relation": {"enum": RELATIONS}, "tail": {"type": "string"}},
            },
        }
    },
}
SYSTEM = (
    "You build a financial knowledge graph. From the text, extract triples (head, relation, tail) whose "
    "head and tail are financial indicators, changes of indicators, market status or macro-economic "
    "policies, and whose relation is one of: " + ", ".join(RELATIONS) + ". Answer with JSON only."
)
SHOT_TEXT = (
    "The Committee raised the federal funds rate by 25 basis points; higher rates are expected to slow inflation."
)
SHOT_ANSWER = (
    '{"triples": [{"head": "federal funds rate increase", "relation": "may_lead_to", "tail": "slower inflation"}]}'
)


def paragraphs(folder: Path, n: int, max_chars: int = 700) -> list[str]:
    """The first paragraph of the first ``n`` statements (sorted by date), at most ``max_chars``."""
    files = sorted(folder.glob("*.txt"))
    if len(files) < n:
        raise SystemExit(f"{folder}: {len(files)} statements, fewer than --n {n}")
    out = []
    for f in files[:n]:
        text = " ".join(f.read_text(encoding="utf-8", errors="replace").split("\n\n")[0].split())
        out.append(text[:max_chars])
    return out


def messages(text: str) -> list[dict]:
    """The extraction chat: instructions, one few-shot pair, the text."""
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": SHOT_TEXT},
        {"role": "assistant", "content": SHOT_ANSWER},
        {"role": "user", "content": text},
    ]


def resolve_model(arg: str) -> Path:
    """A GGUF path, or a registry name installed by `finkg models install`."""
    p = Path(arg).expanduser()
    if p.is_file():
        return p
    path = models.installed_path(arg)
    if path is None:
        raise SystemExit(f"{arg}: not a file and not an installed model (finkg models install --only {arg})")
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=DEFAULT_MODEL, help="GGUF file or registry name (default: %(default)s)")
    ap.add_argument("--n", type=int, default=10, help="prompts per pass (default: %(default)s)")
    ap.add_argument("--max-tokens", type=int, default=160)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--texts", type=Path, default=DEFAULT_TEXTS, help="folder of FOMC statement .txt files")
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="where llm_throughput.json goes")
    args = ap.parse_args()

    model = resolve_model(args.model)
    prompts = [messages(t) for t in paragraphs(args.texts, args.n)]
    backend = LlamaCppBackend(model, n_ctx=args.n_ctx, n_threads=args.threads)
    t0 = time.perf_counter()
    llama = backend.llama()
    load_s = time.perf_counter() - t0
    client = LLMClient(backend)  # cache disabled
    t0 = time.perf_counter()
    model_id = client.model_id  # the file's sha256: once per process, reported apart
    hash_s = time.perf_counter() - t0
    fmt = {"type": "json_object", "schema": SCHEMA}

    def raw_call(m: list[dict]) -> tuple[int, str]:
        out = llama.create_chat_completion(
            messages=m, max_tokens=args.max_tokens, temperature=0.0, seed=0, response_format=fmt
        )
        return out["usage"]["completion_tokens"], out["choices"][0]["message"]["content"]

    def client_call(m: list[dict]) -> tuple[int, str]:
        res = client.chat(m, max_tokens=args.max_tokens, temperature=0.0, json_schema=SCHEMA)
        return res.completion_tokens, res.text

    raw_call(prompts[0])  # warm-up (not counted)
    names = ("raw llama.cpp", "finkg LLMClient")
    calls = {"raw llama.cpp": raw_call, "finkg LLMClient": client_call}
    totals = {k: [0, 0.0] for k in names}
    texts: dict[str, list[str]] = {k: [] for k in names}
    backend_s = 0.0
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    ) as bar:
        task = bar.add_task("raw and client, prompt by prompt", total=2 * 2 * len(prompts))
        for rnd in range(2):
            for i, m in enumerate(prompts):
                # ABBA: who goes first alternates, so load swings and the KV prefix left by the
                # previous call fall on both paths alike
                for name in names if (i + rnd) % 2 == 0 else names[::-1]:
                    if name == names[1]:
                        before = client.usage.seconds
                    t = time.perf_counter()
                    n, text = calls[name](m)
                    totals[name][1] += time.perf_counter() - t
                    totals[name][0] += n
                    if name == names[1]:
                        backend_s += client.usage.seconds - before
                    if rnd == 0:
                        texts[name].append(text)
                    bar.advance(task)

    # the cache: two passes through a client with a fresh disk cache
    with tempfile.TemporaryDirectory() as tmp:
        cached = LLMClient(backend, cache=LLMCache(Path(tmp) / "llm-cache"))
        passes = []
        for _ in range(2):
            before = cached.usage.snapshot()
            t = time.perf_counter()
            for m in prompts:
                cached.chat(m, max_tokens=args.max_tokens, temperature=0.0, json_schema=SCHEMA)
            d = cached.usage - before
            passes.append((d.calls, d.cache_hits, time.perf_counter() - t))

    table = Table(
        title=f"{model.name}: {args.n} prompts x 2 rounds, max_tokens {args.max_tokens}, {args.threads} threads"
    )
    for c in ("path", "calls", "completion tokens", "seconds", "tokens/s"):
        table.add_column(c)
    tps = {}
    for name, (tok, sec) in totals.items():
        tps[name] = tok / sec
        table.add_row(name, str(2 * len(prompts)), f"{tok:,}", f"{sec:.1f}", f"{tps[name]:.2f}")
    console.print(table)
    overhead = (tps["raw llama.cpp"] - tps["finkg LLMClient"]) / tps["raw llama.cpp"] * 100
    same = sum(a == b.strip() for a, b in zip(texts["finkg LLMClient"], texts["raw llama.cpp"]))
    in_client_ms = (totals["finkg LLMClient"][1] - backend_s) / (2 * len(prompts)) * 1000
    console.print(
        f"client overhead: {overhead:+.1f} % of raw tokens/s (target <= 20 %); identical answers: "
        f"{same}/{len(prompts)}; time spent in the client outside the backend call: "
        f"{in_client_ms:.2f} ms per call"
    )
    console.print(f"model load {load_s:.1f} s; model identity ({model_id[:21]}...) {hash_s:.2f} s, once per process")
    for i, (n_calls, hits, sec) in enumerate(passes, 1):
        console.print(f"cache pass {i}: {n_calls} backend calls, {hits} cache hits, {sec:.2f} s")
    console.print(f"backend calls on the second pass: {passes[1][0]} (must be 0)")
    path = write_result(
        "llm_throughput",
        {
            "model": model.name,
            "n": args.n,
            "max_tokens": args.max_tokens,
            "threads": args.threads,
            "n_ctx": args.n_ctx,
        },
        {
            "raw_tokens_per_s": round(tps["raw llama.cpp"], 3),
            "client_tokens_per_s": round(tps["finkg LLMClient"], 3),
            "client_overhead_pct": round(overhead, 2),
            "identical_answers": same,
            "in_client_ms_per_call": round(in_client_ms, 3),
            "model_load_s": round(load_s, 2),
            "cached_rerun_backend_calls": passes[1][0],
        },
        directory=args.results_dir,
    )
    console.print(f"results: {path}")


if __name__ == "__main__":
    main()
