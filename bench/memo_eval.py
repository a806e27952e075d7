"""Independent memo evaluation (issue 19 part 3): seed 003's system table against a gold finkg did not choose.

The gold items of every filing of the quarter come from ``tests/gold/fsds_memo_gold.py`` (plain pandas over
sub.txt / num.txt / pre.txt, written from the SEC readme; nothing of finkg's fact selection). finkg's memos
are made from the graph (the quarter loaded by ``finkg ingest sec``) by four systems:

- ``structured``: the canonical fact map's claims rendered by the deterministic renderer, not verified;
- ``structured+verifier``: finkg's production memo (``generate_memo("structured")``: the same, verified);
- ``llm``: the configured LLM's prose from the same claims, not verified (its raw answer);
- ``llm+verifier``: the same prose after the verifier (``generate_llm_memo``).

The structured systems run on every filing; the LLM systems on a fixed stratified sample (``--llm-sample``
filings, strata form x SIC division, by a hash of the accession) within ``--llm-minutes``, because a 2-core
shared machine cannot write 435 LLM memos in a bench run; each LLM memo scored is appended to
``--llm-checkpoint`` (``bench/results/memo-eval-llm.jsonl``, an :class:`finkg.eval.checkpoint.ItemLog`), so a rerun reuses them and extends the sample
(the time bound counts new memos only). Scoring: :mod:`finkg.eval.memo_accuracy`.
Writes ``bench/results/memo-eval.json`` (every miss listed with its cause) for ``python bench/tables.py``.

    python bench/memo_eval.py                                   # SmolLM2-135M for the LLM systems
    python bench/memo_eval.py --llm-sample 0                    # structured systems only
    python bench/memo_eval.py --llm-model PATH.gguf --llm-sample 12 --llm-minutes 15
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import math
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from gold.fsds_memo_gold import gold_items, load_quarter  # noqa: E402

from finkg import models  # noqa: E402
from finkg.api import open_graph  # noqa: E402
from finkg.config import load_settings  # noqa: E402
from finkg.eval import memo_accuracy as acc  # noqa: E402
from finkg.eval.checkpoint import ItemLog  # noqa: E402
from finkg.eval.results import RESULTS_DIR, write_result  # noqa: E402
from finkg.pipelines.memos import thresholds  # noqa: E402
from generation.llm import LLMClient  # noqa: E402
from generation.llm.factory import backend_from_settings  # noqa: E402
from generation.memo import render  # noqa: E402
from generation.memo.drafting import draft_structured  # noqa: E402
from generation.memo.llm_render import generate_llm_memo  # noqa: E402
from generation.memo.systems import MemoContext, generate_memo  # noqa: E402
from generation.verify.claims import verify_body  # noqa: E402
from retrieval.facts.fact_map import FactMap, list_filings, read_fact_maps  # noqa: E402

QUARTER = ROOT / "data" / "sec-fsds" / "2009q3.zip"
SYSTEMS = ("structured", "structured+verifier", "llm", "llm+verifier")
NAMES = {
    "structured": "Structured (no verifier)",
    "structured+verifier": "Structured+Verifier",
    "llm": "LLM (no verifier)",
    "llm+verifier": "LLM+Verifier",
}
# Seed 003's own figures (Table 6 "Overall memo reliability by system" and Table 11 "Runtime per memo"): 300
# memos of a synthetic SEC-schema fixture, tasks chosen among filings with all required tags (so complete by
# construction); the paper has no LLM system (its renderer is deterministic; "Compared systems").
SEED_003 = [
    {"system": "No-RAG", "exact": 0.538, "ms": 60.9},
    {"system": "Text RAG", "exact": 0.881, "ms": 112.5},
    {"system": "Verifier RAG", "exact": 0.984, "ms": 134.3},
    {"system": "Structured+Verifier", "exact": 1.000, "ms": 147.9},
]


def gold_by_filing(quarter: Path) -> dict[str, dict[str, acc.GoldItem]]:
    """adsh -> item -> :class:`acc.GoldItem` from the independent gold."""
    frame = gold_items(load_quarter(quarter))
    out: dict[str, dict[str, acc.GoldItem]] = defaultdict(dict)
    for r in frame.to_dict("records"):
        out[r["adsh"]][r["item"]] = acc.GoldItem(
            adsh=r["adsh"],
            item=r["item"],
            kind=r["kind"],
            value=float(r["value"]),
            tag=r["tag"],
            qtrs=int(r["qtrs"]),
            ddate=r["ddate"],
            rule=r["rule"],
            mezzanine=r["mezzanine"],
            source_adsh=r["source_adsh"],
            own_value=float(r["own_value"]),
            entity=r["entity"],
        )
    return out


def stratified_sample(maps: list[FactMap], n: int) -> list[FactMap]:
    """``n`` filings, round robin over strata (form x SIC division), each stratum in the order of a hash of
    the accession: the same quarter always gives the same sample."""
    strata: dict[tuple[str, str], list[FactMap]] = defaultdict(list)
    for fm in sorted(maps, key=lambda f: hashlib.sha1(f.adsh.encode()).hexdigest()):
        sic = str(fm.filing.get("sic") or "-")
        strata[(str(fm.filing.get("form")), sic[:1])].append(fm)
    order = sorted(strata.values(), key=len, reverse=True)
    out: list[FactMap] = []
    while len(out) < n and any(order):
        for group in order:
            if group and len(out) < n:
                out.append(group.pop(0))
    return out


def llm_client(settings, model: str) -> LLMClient:
    """A llama.cpp client for ``model`` (a registry name or a GGUF path), no disk cache (real latency)."""
    path = Path(model) if Path(model).suffix == ".gguf" else models.installed_path(model)
    if path is None:
        raise SystemExit(f"model {model!r} is not installed: finkg models install --only {model}")
    settings.llm.backend = "llama-cpp"
    settings.llm.model_path = path
    return LLMClient(backend_from_settings(settings), cache=None, seed=settings.llm.seed)


def of_model(records: list[dict[str, Any]], model: str) -> dict[str, dict[str, Any]]:
    """The LLM memos of the checkpoint's ``records`` scored with ``model`` (adsh -> record)."""
    return {r["adsh"]: r for r in records if r.get("model") == model}


def llm_memo_record(fm: FactMap, ctx: MemoContext, client: LLMClient, gold, settings, model: str) -> dict[str, Any]:
    """One filing's LLM memo, scored unverified (its raw answer) and verified: outcomes and latencies.
    ``llm`` latency is drafting and the LLM call; ``llm+verifier`` adds the verification."""
    memo = generate_llm_memo(fm, ctx, client, settings.llm.max_tokens, settings.llm.temperature)
    drafted = draft_structured(fm, ctx.thresholds)
    start = time.perf_counter()
    verify_body(memo.raw_body, copy.deepcopy(drafted), fm, ctx.thresholds, repair=True)
    verify_ms = (time.perf_counter() - start) * 1000
    outcomes = acc.score_memo("llm", fm.adsh, memo.raw_body, drafted, gold)
    outcomes += acc.score_memo("llm+verifier", fm.adsh, memo.body, memo.claims, gold)
    return {
        "adsh": fm.adsh,
        "model": model,
        "latency_ms": {"llm": memo.latency_ms - verify_ms, "llm+verifier": memo.latency_ms},
        "completion_tokens": memo.completion_tokens,
        "outcomes": [o.record() for o in outcomes],
    }


def run(args: argparse.Namespace) -> Path:
    settings = load_settings()
    t0 = time.perf_counter()
    gold = gold_by_filing(args.quarter)
    gold_s = time.perf_counter() - t0
    graph = open_graph(settings)
    filings = list_filings(graph, source=args.quarter.name)
    if not filings:
        raise SystemExit(f"no filing of {args.quarter.name} in the graph: finkg ingest sec {args.quarter}")
    t0 = time.perf_counter()
    maps = list(read_fact_maps(graph, [f["adsh"] for f in filings], settings.memo.batch_size))
    read_ms = (time.perf_counter() - t0) * 1000 / max(len(maps), 1)
    ctx = MemoContext(thresholds(settings))
    outcomes: list[acc.ItemOutcome] = []
    latency: dict[str, list[float]] = defaultdict(list)
    for fm in maps:
        g = gold.get(fm.adsh, {})
        start = time.perf_counter()
        claims = draft_structured(fm, ctx.thresholds)
        body = render.body(claims)
        latency["structured"].append((time.perf_counter() - start) * 1000)
        outcomes += acc.score_memo("structured", fm.adsh, body, claims, g)
        memo = generate_memo("structured", fm, ctx)
        latency["structured+verifier"].append(memo.latency_ms)
        outcomes += acc.score_memo("structured+verifier", fm.adsh, memo.body, memo.claims, g)
    print(f"structured systems: {len(maps)} memos", flush=True)
    sample: list[FactMap] = []
    llm_done: list[str] = []
    if args.llm_sample:
        sample = stratified_sample(maps, args.llm_sample)
        client = llm_client(settings, args.llm_model)
        deadline = time.monotonic() + args.llm_minutes * 60
        with ItemLog(args.llm_checkpoint, "an LLM memo record").appending() as (earlier, add):
            done = of_model(earlier, args.llm_model)
            for fm in sample:
                rec = done.get(fm.adsh)
                if rec is None:
                    if time.monotonic() > deadline:
                        print(f"--llm-minutes {args.llm_minutes} reached after {len(llm_done)} LLM memos", flush=True)
                        break
                    rec = llm_memo_record(fm, ctx, client, gold.get(fm.adsh, {}), settings, args.llm_model)
                    add(rec)
                for system in ("llm", "llm+verifier"):
                    latency[system].append(rec["latency_ms"][system])
                outcomes += [acc.ItemOutcome(**o) for o in rec["outcomes"]]
                llm_done.append(fm.adsh)
                print(
                    f"llm memo {len(llm_done)}/{len(sample)}: {fm.adsh} {rec['latency_ms']['llm+verifier'] / 1000:.1f} s"
                )
    # the structured systems on the LLM sample too, so the four rows can be compared on the same filings
    on_sample = [
        acc.ItemOutcome(**{**o.record(), "system": o.system + "@sample"})
        for o in outcomes
        if o.system in ("structured", "structured+verifier") and o.adsh in set(llm_done)
    ]
    sample_lat = {
        f"{s}@sample": [ms for fm, ms in zip(maps, latency[s], strict=True) if fm.adsh in set(llm_done)]
        for s in ("structured", "structured+verifier")
    }
    summary = acc.summarize([*outcomes, *on_sample], {**latency, **sample_lat})
    return save(args, summary, outcomes, len(maps), read_ms, gold_s, llm_done, sum(len(v) for v in gold.values()))


def _pct(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(100 * x, 2)


def system_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per system (and per system on the LLM sample): rates in percent with their 95% intervals."""
    rows = []
    for key, s in summary.items():
        base, _, sample = key.partition("@")
        rows.append(
            {
                "system": NAMES[base] + (" (LLM sample)" if sample else ""),
                "key": key,
                "memos": s["memos"],
                "filings": "LLM sample" if sample or base.startswith("llm") else "all",
                **{
                    f"{m}_{part}": _pct(s[m][part])
                    for m in ("exact_rate", "completeness", "exact_of_gold")
                    for part in ("mean", "ci_low", "ci_high")
                },
                "exact_n": s["exact_rate"]["n"],
                "gold_n": s["completeness"]["n"],
                "ms_mean": s["ms_per_memo"]["mean"],
                "ms_ci_low": s["ms_per_memo"]["ci_low"],
                "ms_ci_high": s["ms_per_memo"]["ci_high"],
                "filings_all_exact": s["filings_all_exact"],
                **{f"miss_{k}": s["misses"].get(k, 0) for k in acc.MISSES},
            }
        )
    return rows


def save(
    args: argparse.Namespace,
    summary: dict[str, Any],
    outcomes: list[acc.ItemOutcome],
    memos: int,
    read_ms: float,
    gold_s: float,
    llm_done: list[str],
    gold_items_n: int,
) -> Path:
    misses = [o.record() for o in outcomes if o.outcome in acc.MISSES]
    per_item = [
        {"system": NAMES[s], "item": item, **v}
        for s in ("structured+verifier", "llm+verifier")
        if s in summary
        for item, v in summary[s]["per_item"].items()
    ]
    path = write_result(
        "memo-eval",
        {
            "quarter": args.quarter.name,
            "systems": list(SYSTEMS),
            "items": list(acc.ITEMS),
            "llm_model": args.llm_model if args.llm_sample else None,
            "llm_sample": llm_done,
            "llm_minutes": args.llm_minutes,
            "gold": "tests/gold/fsds_memo_gold.py (independent pandas over sub/num/pre)",
            "note": "machine shared with other agents: latencies are honest but slow",
        },
        {
            "memos": memos,
            "gold_items": gold_items_n,
            "fact_map_read_ms_per_memo": round(read_ms, 3),
            "gold_seconds": round(gold_s, 2),
            "systems": summary,
        },
        tables={
            "systems": system_rows(summary),
            "seed_003": SEED_003,
            "top_causes": acc.top_causes(outcomes, "structured+verifier"),
            "top_causes_llm": acc.top_causes(outcomes, "llm+verifier"),
            "per_item": per_item,
            "misses": misses,
        },
        directory=args.out,
    )
    for r in system_rows(summary):
        print(
            f"{r['system']:<40} memos {r['memos']:>3}  exact {r['exact_rate_mean']}%  complete "
            f"{r['completeness_mean']}%  {r['ms_mean']:.2f} ms/memo  misses "
            + ", ".join(f"{k[5:]} {v}" for k, v in r.items() if k.startswith("miss_") and v)
        )
    print(f"wrote {path}")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quarter", type=Path, default=QUARTER)
    ap.add_argument("--llm-sample", type=int, default=12, help="filings for the LLM systems (0: none)")
    ap.add_argument("--llm-model", default="smollm2-135m-instruct-q4_1", help="registry name or GGUF path")
    ap.add_argument("--llm-minutes", type=float, default=15.0, help="stop starting LLM memos after this")
    ap.add_argument("--out", type=Path, default=RESULTS_DIR)
    ap.add_argument(
        "--llm-checkpoint",
        type=Path,
        default=RESULTS_DIR / "memo-eval-llm.jsonl",
        help="LLM memos scored so far (JSON lines); a rerun reuses them and only adds new ones",
    )
    run(ap.parse_args(argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
