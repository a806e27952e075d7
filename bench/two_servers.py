"""Two llama-servers side by side (a base model and its LoRA-tuned twin, as `finkg eval tatqa|reports --adapter`
runs them): the configured threads per server against the threads `generation.llm.shared_threads` gives them.

Every prompt goes to both servers (the evaluation asks every question of the base and of the tuned model), with
``--parallel`` requests in flight per server, the two servers busy at once. The prompts are finkg's own extraction
prompts over sentences of the FOMC statements shipped in data/fomc-statements (as in ``bench/llm_throughput.py``),
sent without a schema and capped at ``--max-tokens``, like the reader's free-text answers. Each thread setting has
its own pair of servers (all four started before timing); every setting completes every prompt in each of two
rounds, the order of the settings reversed in the second round. It prints the completion tokens/s of the pair and
the ratio of each setting to the configured one (the baseline), and writes ``bench/results/two_servers.json``.

    python bench/two_servers.py                       # Qwen2.5-Coder-1.5B Q4_K_M + the shipped GGUF LoRA
    python bench/two_servers.py --threads 2 1 --n 8 --max-tokens 48
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import typer
from llm_throughput import DEFAULT_MODEL, DEFAULT_TEXTS, prompts_from, resolve_model
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from finkg.config import load_settings
from finkg.eval.results import RESULTS_DIR, write_result
from generation.kgbuild.extraction import extraction_messages
from generation.llm import LLMClient, shared_threads
from generation.llm.server import LlamaServerBackend

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ADAPTER = ROOT / "data" / "adapters" / "qwen2.5-coder-1.5b-tatqa-reader" / "adapter.gguf"
console = Console()


def main(
    model: str = typer.Option(DEFAULT_MODEL, help="GGUF file or registry name of the base model"),
    adapter: Path = typer.Option(DEFAULT_ADAPTER, help="GGUF LoRA of that base, served by the second server"),
    threads: list[int] = typer.Option(
        [], help="threads per server to compare (default: \\[llm] threads, then shared_threads of it for 2 models)"
    ),
    n: int = typer.Option(8, help="prompts per setting and round (each sent to both servers)"),
    parallel: int = typer.Option(4, help="slots per server = requests in flight per server"),
    max_tokens: int = typer.Option(48, help="completion cap per request"),
    n_ctx: int = typer.Option(2048, help="context per slot"),
    texts: Path = typer.Option(DEFAULT_TEXTS, help="folder of FOMC statement .txt files"),
    results_dir: Path = typer.Option(RESULTS_DIR, help="where two_servers.json goes"),
) -> None:
    """Completion tokens/s of a base + LoRA pair of llama-servers at each thread setting, same prompts, same run."""
    configured = load_settings().llm.threads
    settings = threads or sorted({configured, shared_threads(configured, 2)}, reverse=True)
    if len(settings) < 2:
        console.print(
            f"\\[llm] threads = {configured} already fits this machine for two servers; comparing {configured} with 1"
        )
        settings = [configured, 1]
    base_path = resolve_model(model)
    groups = prompts_from(texts, n)
    pairs = {
        t: (
            LlamaServerBackend(base_path, n_ctx=n_ctx, parallel=parallel, n_threads=t),
            LlamaServerBackend(base_path, n_ctx=n_ctx, parallel=parallel, n_threads=t, lora_path=adapter),
        )
        for t in settings
    }
    totals = {t: [0, 0.0] for t in settings}
    try:
        for pair in pairs.values():
            for srv in pair:
                srv.start()
        clients = {t: (LLMClient(a), LLMClient(b)) for t, (a, b) in pairs.items()}

        def ask(client: LLMClient, group: list[str]) -> int:
            return client.chat(extraction_messages(group), max_tokens=max_tokens, temperature=0.0).completion_tokens

        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
        ) as bar:
            task = bar.add_task("settings x prompts x 2 servers x 2 rounds", total=2 * len(settings) * 2 * len(groups))
            for rnd in range(2):
                for t in settings if rnd == 0 else settings[::-1]:
                    base, tuned = clients[t]
                    jobs = [(c, g) for g in groups for c in (base, tuned)]
                    start = time.perf_counter()
                    with ThreadPoolExecutor(2 * parallel) as pool:
                        for tokens in pool.map(lambda job: ask(*job), jobs):
                            totals[t][0] += tokens
                            bar.advance(task)
                    totals[t][1] += time.perf_counter() - start
    finally:
        for pair in pairs.values():
            for srv in pair:
                srv.close()

    baseline = settings[0]
    base_tps = totals[baseline][0] / totals[baseline][1]
    table = Table(
        title=f"{base_path.name} + {adapter.name}: {len(groups)} prompts to each of 2 servers x 2 rounds, "
        f"{parallel} in flight per server, max_tokens {max_tokens}"
    )
    rows = []
    for t in settings:
        tok, sec = totals[t]
        rows.append(
            {
                "threads_per_server": t,
                "threads_in_all": 2 * t,
                "completion_tokens": tok,
                "seconds": round(sec, 1),
                "tokens_per_s": round(tok / sec, 2),
                "x_configured": round(tok / sec / base_tps, 2),
            }
        )
    for c in rows[0]:
        table.add_column(c.replace("_", " "))
    for r in rows:
        table.add_row(*(str(v) for v in r.values()))
    console.print(table)
    best = max(rows, key=lambda r: r["tokens_per_s"])
    path = write_result(
        "two_servers",
        {
            "model": base_path.name,
            "adapter": str(adapter.relative_to(ROOT) if adapter.is_relative_to(ROOT) else adapter),
            "prompts": len(groups),
            "rounds": 2,
            "parallel": parallel,
            "max_tokens": max_tokens,
            "configured_threads": configured,
            "settings": settings,
        },
        {
            "configured_tokens_per_s": round(base_tps, 3),
            "shared_threads": shared_threads(configured, 2),
            "best_threads_per_server": best["threads_per_server"],
            "best_tokens_per_s": best["tokens_per_s"],
            "ratio_best_over_configured_x": best["x_configured"],
        },
        tables={"settings": rows},
        directory=results_dir,
    )
    console.print(f"results: {path}")


if __name__ == "__main__":
    typer.run(main)
