"""Extraction speed and quality, one change at a time (issue 20 part 1), on the FOMC gold set, in one run.

The ten FOMC statements of the hand-checked gold set (tests/data/kg_gold.jsonl, 87 triples; the statements
are shipped in data/fomc-statements) are extracted again and again with the same model, each step adding one
change to the one before, every step with a fresh LLM cache (so each pays for its own calls) and
``redo`` (the same chunks every time):

0. **before**: ``llama-cpp`` (llama-cpp-python in process, one call at a time), every non-boilerplate
   sentence sent, the verification pass on (finkg's default until this change);
1. **+ server**: ``llama-server`` with ``--slots`` parallel slots and as many calls in flight (continuous
   batching; the prompt prefix stays cached per slot); verification off;
2. **+ filter**: ``[extract] content_filter`` (sentences with no number and no word of the financial
   lexicon are not sent).

For each step: wall seconds of ``finkg extract`` (LLM, checks and graph writes), LLM calls, sentences
sent, completion tokens and tokens/s, and precision / recall / F1 against the gold set (head, relation and
tail matched; :mod:`finkg.eval.kg`), for the proposed triples and, where the pass ran, the verified ones.
The last line projects all 160 statements of ../shared/data/fomc-statements from the last step's seconds
per statement (``python bench/extraction.py --all`` measures them).

    python bench/extraction_ladder.py                          # Qwen2.5-Coder-1.5B, 4 slots
    python bench/extraction_ladder.py --slots 2 --model PATH.gguf
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
from finkg.config import Settings, load_settings
from finkg.eval import kg as kg_eval
from finkg.eval.results import RESULTS_DIR, write_result
from finkg.pipelines import kg_build
from finkg.pipelines import text as text_ingest
from generation.llm import client_from_settings

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "tests" / "data" / "kg_gold.jsonl"
SHIPPED = ROOT / "data" / "fomc-statements" / "statements"
ALL_DIR = ROOT.parent / "shared" / "data" / "fomc-statements" / "statements"
QWEN = "qwen2.5-coder-1.5b-instruct-q4_k_m"
console = Console()


def run_step(
    name: str, settings: Settings, docs: list[str], statements: list[str], gold: list[Any], verify: bool
) -> dict[str, Any]:
    """One ``finkg extract`` of ``docs`` (redo, fresh cache) and its scores against ``gold``."""
    g = open_graph(settings)
    client = client_from_settings(settings)
    try:
        t0 = time.perf_counter()
        summary = kg_build.extract(g, settings, client, documents=docs, redo=True, verify=verify)
        wall = time.perf_counter() - t0
        stages = kg_build.stored_stages(g, client.model_id, verify, statements)
    finally:
        client.close()
        g.close()
    rows = {(r["stage"], r["matching"]): r for r in kg_eval.score(stages, gold)}
    out: dict[str, Any] = {
        "step": name,
        "backend": settings.llm.backend,
        "in_flight": settings.llm.concurrency(),
        "content_filter": settings.extract.content_filter,
        "verify": verify,
        "wall_s": round(wall, 1),
        "llm_calls": summary.calls,
        "sentences_sent": summary.sentences_sent,
        "completion_tokens": summary.completion_tokens,
        "tokens_per_s_wall": round(summary.completion_tokens / wall, 2) if wall else 0.0,
        "s_per_statement": round(wall / len(docs), 2),
    }
    for stage in ("proposed", "verified") if verify else ("proposed",):
        r = rows[(stage, "head+relation+tail")]
        out |= {f"{stage}_precision": r["precision"], f"{stage}_recall": r["recall"], f"{stage}_f1": r["f1"]}
        out[f"{stage}_predicted"] = r["predicted"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, help=f"GGUF file (default: the installed {QWEN})")
    ap.add_argument("--slots", type=int, default=4, help="llama-server slots and calls in flight (default: 4)")
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="where extraction_ladder.json goes")
    args = ap.parse_args()
    model = args.model or models.installed_path(QWEN)
    if model is None:
        raise SystemExit(f"no model: give --model PATH.gguf or run `finkg models install --only {QWEN}`")
    gold = kg_eval.load_gold(GOLD)
    statements = sorted({x.statement for x in gold})
    files = [SHIPPED / f"{s}.txt" for s in statements]
    docs = [f"fomc:statement:{s}" for s in statements]

    def settings(**kw: Any) -> Settings:
        return load_settings(
            llm_model_path=model, llm_cache=True, llm_cache_dir=Path(tempfile.mkdtemp(prefix="finkg-ladder-")), **kw
        )

    base = settings(llm_backend="llama-cpp")
    g = open_graph(base)
    try:
        text_ingest.ingest_text(g, base, files)
    finally:
        g.close()
    steps = [
        (
            "0 before: llama-cpp, one call at a time, all sentences, verification",
            settings(llm_backend="llama-cpp", extract_content_filter=False),
            True,
        ),
        (
            f"1 + llama-server, {args.slots} slots in flight, no verification",
            settings(llm_backend="llama-server", llm_parallel=args.slots, extract_content_filter=False),
            False,
        ),
        (
            "2 + content filter",
            settings(llm_backend="llama-server", llm_parallel=args.slots, extract_content_filter=True),
            False,
        ),
    ]
    rows = []
    for name, s, verify in steps:
        console.print(f"[bold]{name}[/bold] ...")
        rows.append(run_step(name, s, docs, statements, gold, verify))
        console.print(rows[-1])
    table = Table(title=f"extraction on the {len(statements)} gold statements ({Path(model).name})")
    cols = ("step", "wall_s", "llm_calls", "sentences_sent", "completion_tokens", "tokens_per_s_wall")
    for c in (*cols, "P / R proposed", "P / R verified"):
        table.add_column(c)
    for r in rows:
        pv = f"{r['verified_precision']:.3f} / {r['verified_recall']:.3f}" if r["verify"] else "-"
        table.add_row(*(str(r[c]) for c in cols), f"{r['proposed_precision']:.3f} / {r['proposed_recall']:.3f}", pv)
    console.print(table)
    first, last = rows[0], rows[-1]
    speedup = first["wall_s"] / last["wall_s"] if last["wall_s"] else 0.0
    projected = last["s_per_statement"] * 160 / 60
    console.print(
        f"speed-up over step 0: {speedup:.2f}x; recall of the proposed triples {first['proposed_recall']:.3f} -> "
        f"{last['proposed_recall']:.3f}; the verification pass (step 0): precision {first['proposed_precision']:.3f}"
        f" -> {first['verified_precision']:.3f}, recall {first['proposed_recall']:.3f} -> {first['verified_recall']:.3f};"
        f" all 160 statements at the last step's {last['s_per_statement']:.1f} s per statement: about {projected:.0f} min"
    )
    path = write_result(
        "extraction_ladder",
        {"model": Path(model).name, "statements": statements, "slots": args.slots, "gold_triples": len(gold)},
        {
            "before_wall_s": first["wall_s"],
            "after_wall_s": last["wall_s"],
            "ratio_before_over_after_x": round(speedup, 2),
            "before_proposed_recall": first["proposed_recall"],
            "after_proposed_recall": last["proposed_recall"],
            "before_proposed_precision": first["proposed_precision"],
            "after_proposed_precision": last["proposed_precision"],
            "verified_precision": first["verified_precision"],
            "verified_recall": first["verified_recall"],
            "after_s_per_statement": last["s_per_statement"],
            "projected_160_statements_min": round(projected, 1),
        },
        tables={"steps": rows},
        directory=args.results_dir,
    )
    console.print(f"results: {path}")


if __name__ == "__main__":
    main()
