"""Hybrid retrieval latency at 100,000 chunks (retrieval/text/hybrid.py), against BM25 alone in the same run.

Corpus: the SEC evidence sentences of ../shared/data/sec-fsds/2009q3.zip (:mod:`ingest.sec.evidence`, one
sentence per XBRL fact: 103,293 in that quarter, about 350 characters each), the first ``--chunks`` by
fact key, each available from its filing's EDGAR acceptance time (``sub.txt`` ``accepted``, read as
US Eastern time). Read straight from the ZIP: no Neo4j needed.

Vectors: encoding 100,000 sentences with the full all-MiniLM-L6-v2 takes hours on a shared 2-core machine, so the corpus vectors are MiniLM's *static* token embeddings (its input
embedding table, mean-pooled over each sentence's WordPiece tokens, L2-normalized): real 384-d vectors of
the real text, computed in seconds. The dense step's cost depends on the matrix shape (100,000 x 384
float32), not on the values, so the timing is the one the full model's vectors would give. The query's own
encoding by the full MiniLM is timed separately (a user pays it once per query) and added in the
"hybrid + encode" row.

Queries: 200 analyst-style queries made from the data, ``"<company> <concept label> fiscal <year> <period>"``
of a seeded sample of facts, each with ``as_of`` = its filing's acceptance time (so the pool is every
sentence already public then, about half the corpus on average); a second pass runs them with no as-of
(the whole corpus as the pool).

Rows: p50 / p95 / mean per query of
- ``bm25``: pool + BM25 (pool statistics) + top-10;
- ``hybrid``: pool + BM25 + cosine + min-max fusion (alpha 0.5) + top-10, query vector given;
- ``hybrid-rrf``: the same with reciprocal rank fusion;
- ``encode``: the full-MiniLM query encoding alone; ``hybrid + encode``: the sum per query.
Ratio: each row's p50 over bm25's p50. Target: hybrid p50 <= 30 ms on 2 cores.

    nice -n 19 python bench/hybrid_latency.py                  # 100,000 chunks, 200 queries
    nice -n 19 python bench/hybrid_latency.py --chunks 20000 --queries 50

The figures of the latest run (the run's date, commit, machine and command with them) are in
``bench/results/hybrid_latency.json``, which this script writes; the docs quote them only through the tables
``python bench/tables.py`` generates from that file (``hybrid-latency`` in docs/benchmarks.md, the README's
headline row), so this docstring quotes none.
"""

from __future__ import annotations

import argparse
import random
import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
from rich.console import Console
from rich.table import Table

from finkg import models
from finkg.config import load_settings
from finkg.eval.results import RESULTS_DIR, write_result
from ingest.sec.evidence import evidence_rows
from ingest.sec.fsds import read_fsds
from ingest.text.documents import iso_utc
from retrieval.embeddings import make_embedder, normalize_rows
from retrieval.text.documents import Passage
from retrieval.text.hybrid import HybridIndex, top_k

EASTERN = ZoneInfo("America/New_York")
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "sec-fsds" / "2009q3.zip"


def accepted_utc(text: str | None) -> str | None:
    """``2009-08-07 09:10:00.0`` (EDGAR acceptance, US Eastern) as ``2009-08-07T13:10:00Z``."""
    if not text:
        return None
    return iso_utc(datetime.strptime(text.split(".")[0], "%Y-%m-%d %H:%M:%S").replace(tzinfo=EASTERN))


def static_vectors(model_dir: Path, texts: list[str]) -> np.ndarray:
    """Mean of MiniLM's input token embeddings over each text's WordPiece tokens, unit rows ``(n, 384)``."""
    from scipy.sparse import csr_matrix
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(model_dir), device="cpu")
    table = st[0].auto_model.embeddings.word_embeddings.weight.detach().numpy()
    ids = st.tokenizer(texts, add_special_tokens=False, truncation=True, max_length=256)["input_ids"]
    rows = np.repeat(np.arange(len(ids)), [len(x) for x in ids])
    counts = csr_matrix(
        (np.ones(len(rows), dtype=np.float32), (rows, np.concatenate(ids))), shape=(len(ids), table.shape[0])
    )
    return normalize_rows(np.asarray(counts @ table))


def stats(ms: list[float]) -> tuple[float, float, float]:
    a = np.asarray(ms)
    return float(np.percentile(a, 50)), float(np.percentile(a, 95)), float(a.mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--zip", type=Path, default=DATA)
    ap.add_argument(
        "--model",
        type=Path,
        default=None,
        help="MiniLM directory (default: [embedding] model_path, else the installed all-minilm-l6-v2)",
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="where hybrid_latency.json goes")
    args = ap.parse_args()
    if args.model is None:
        args.model = load_settings().embedding.model_path or models.installed_path("all-minilm-l6-v2")
        if args.model is None:
            raise SystemExit("no MiniLM model: run `finkg models install` or pass --model DIR")
    import torch

    torch.set_num_threads(args.threads)
    console = Console()
    t0 = time.perf_counter()
    data = read_fsds(args.zip)
    rows = sorted(evidence_rows(data.facts, data.filings, data.companies, data.concepts), key=lambda r: r["id"])
    rows = rows[: args.chunks]
    filings = {f["adsh"]: f for f in data.filings}
    names = {c["cik"]: c["name"] for c in data.companies}
    labels = {c["key"]: c.get("label") or c["tag"] for c in data.concepts}
    facts = {f["key"]: f for f in data.facts}
    passages = [
        Passage(r["id"], r["text"], r["adsh"], "sec_filing", accepted_utc(filings[r["adsh"]].get("accepted")))
        for r in rows
    ]
    read_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    vectors = static_vectors(args.model, [p.text for p in passages])
    vec_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    index = HybridIndex(passages, vectors)
    build_s = time.perf_counter() - t0

    rng = random.Random(0)
    sample = [facts[r["fact_key"]] for r in rng.sample(rows, args.queries)]
    queries = []
    for f in sample:
        filing = filings[f["adsh"]]
        text = f"{names.get(f['cik'], '')} {labels.get(f['concept'], f['tag'])} fiscal {filing.get('fy') or ''} {filing.get('fp') or ''}"
        queries.append((text, datetime.fromisoformat(accepted_utc(filing["accepted"]).replace("Z", "+00:00"))))
    qvecs = static_vectors(args.model, [q for q, _ in queries])
    encoder = make_embedder(args.model, batch_size=1)
    encoder.encode(["warm up"])
    for (q, a), v in list(zip(queries, qvecs))[:5]:  # warm-up
        index.hits(q, k=10, as_of=a, qvec=v)

    def run(as_of: bool) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {"bm25": [], "hybrid": [], "hybrid-rrf": [], "encode": [], "pool": []}
        for (q, a), v in zip(queries, qvecs):
            when = a if as_of else None
            t = time.perf_counter()
            pool = index.pool(when)
            top_k(index.bm25(q, pool), 10)
            out["bm25"].append((time.perf_counter() - t) * 1e3)
            out["pool"].append(len(pool))
            t = time.perf_counter()
            index.hits(q, k=10, alpha=0.5, as_of=when, qvec=v)
            out["hybrid"].append((time.perf_counter() - t) * 1e3)
            t = time.perf_counter()
            index.hits(q, k=10, fusion="rrf", as_of=when, qvec=v)
            out["hybrid-rrf"].append((time.perf_counter() - t) * 1e3)
            t = time.perf_counter()
            encoder.encode([q])
            out["encode"].append((time.perf_counter() - t) * 1e3)
        out["hybrid + encode"] = [h + e for h, e in zip(out["hybrid"], out["encode"])]
        return out

    table = Table(
        title=f"hybrid retrieval latency, {len(index):,} SEC evidence sentences, {len(queries)} queries, "
        f"{args.threads} threads (ms)"
    )
    for col in ("pool", "system", "p50", "p95", "mean", "p50 / bm25 p50"):
        table.add_column(col, justify="right" if col != "system" else "left")
    rows = []
    for as_of in (True, False):
        res = run(as_of)
        base = stats(res["bm25"])[0]
        pool = f"as-of ({np.mean(res['pool']):,.0f} avg)" if as_of else f"all ({len(index):,})"
        for name in ("bm25", "hybrid", "hybrid-rrf", "encode", "hybrid + encode"):
            p50, p95, mean = stats(res[name])
            table.add_row(pool, name, f"{p50:.1f}", f"{p95:.1f}", f"{mean:.1f}", f"{p50 / base:.2f}")
            rows.append(
                {
                    "pool": "as-of" if as_of else "all",
                    "pool_chunks_mean": round(float(np.mean(res["pool"])), 1),
                    "system": name,
                    "p50_ms": round(p50, 2),
                    "p95_ms": round(p95, 2),
                    "mean_ms": round(mean, 2),
                    "p50_over_bm25_p50": round(p50 / base, 3),
                }
            )
    console.print(table)
    console.print(
        f"read + render {read_s:.1f} s, static vectors {vec_s:.1f} s, index build {build_s:.1f} s "
        f"(tokens + term matrix for {len(index):,} chunks)"
    )
    pick = {(r["pool"], r["system"]): r for r in rows}
    path = write_result(
        "hybrid_latency",
        {
            "chunks": args.chunks,
            "queries": args.queries,
            "threads": args.threads,
            "zip": str(args.zip),
            "model": str(args.model),
        },
        {
            "chunks_indexed": len(index),
            "hybrid_asof_p50_ms": pick[("as-of", "hybrid")]["p50_ms"],
            "hybrid_asof_p95_ms": pick[("as-of", "hybrid")]["p95_ms"],
            "bm25_asof_p50_ms": pick[("as-of", "bm25")]["p50_ms"],
            "hybrid_all_p50_ms": pick[("all", "hybrid")]["p50_ms"],
            "bm25_all_p50_ms": pick[("all", "bm25")]["p50_ms"],
            "ratio_hybrid_over_bm25_asof_p50_x": pick[("as-of", "hybrid")]["p50_over_bm25_p50"],
            "read_s": round(read_s, 2),
            "static_vectors_s": round(vec_s, 2),
            "index_build_s": round(build_s, 2),
        },
        tables={"latency": rows},
        directory=args.results_dir,
    )
    console.print(f"results: {path}")


if __name__ == "__main__":
    main()
