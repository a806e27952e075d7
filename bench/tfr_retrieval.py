"""Seed 004 §3.2 benchmark: cluster-weighted (TFR) triple retrieval latency, against dense top-k in the same run.

Two corpora:

1. the knowledge graph in Neo4j (the triples ``finkg extract`` wrote, e.g. from the FOMC statements),
   loaded with :meth:`TripleIndex.from_graph` (embeddings stored on the relationships);
2. 100,000 real triples made from the SEC XBRL facts in the graph (``finkg ingest sec``): ``(company,
   concept, value)``, e.g. "JOHNSON & JOHNSON reports Revenues of USD 15,239,000,000", clustered by
   (company SIC | concept tag). Their embeddings are cached in ``~/.cache/finkg/bench`` (keyed by encoder
   and texts), so only the first run encodes them.

For each corpus: p50 / p95 / mean latency of ``cluster_weighted(k=10, n=100)`` and of ``dense(k=10)``
over the same queries (the query encoding included, as a user pays it), and the ratio TFR / dense.
Target: TFR p50 <= 50 ms on 2 cores.

    python bench/tfr_retrieval.py                 # both corpora, 200 queries each
    python bench/tfr_retrieval.py --triples 20000 --queries 50
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from finkg import models
from finkg.api import open_graph
from finkg.config import load_settings
from finkg.eval.results import RESULTS_DIR, write_result
from retrieval.embeddings import make_embedder
from retrieval.triples.tfr import Triple, TripleIndex

QUERIES = [
    "How do energy prices affect inflation?",
    "What drives long-term interest rates?",
    "Is the labor market improving?",
    "credit conditions and economic growth",
    "federal funds rate target",
    "household spending and consumer confidence",
    "revenue growth of technology companies",
    "net income and cash from operations",
    "liquidity risk current assets current liabilities",
    "leverage of mining companies",
    "inflation expectations",
    "housing sector weakness",
    "money supply growth and bond yields",
    "business fixed investment",
    "exports and the dollar",
]
XBRL_TRIPLES = (
    "MATCH (c:Company)-[:FILED]->(:Filing)-[:REPORTS]->(f:Fact) WHERE f.value IS NOT NULL\n"
    "RETURN f.key AS id, c.name AS company, coalesce(c.sic, 0) AS sic, f.tag AS tag, f.value AS value\n"
    "ORDER BY f.key LIMIT $n"
)


def _cached_vectors(embedder, texts: list[str], console: Console) -> np.ndarray:
    key = hashlib.sha256((embedder.identity + "\n" + "\n".join(texts)).encode()).hexdigest()[:16]
    path = Path.home() / ".cache" / "finkg" / "bench" / f"xbrl-triples-{key}.npy"
    if path.exists():
        return np.load(path)
    console.print(f"encoding {len(texts):,} triples once (cached in {path}) ...")
    t0 = time.perf_counter()
    vecs = embedder.encode(texts)
    console.print(f"  {len(texts) / (time.perf_counter() - t0):,.0f} triples/s")
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vecs)
    return vecs


def _latency(fn, queries: list[str]) -> list[float]:
    out = []
    for q in queries:
        t0 = time.perf_counter()
        fn(q)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def _row(table: Table, corpus: str, n: int, tfr: list[float], dense: list[float]) -> dict:
    def p(xs: list[float], q: float) -> float:
        return float(np.percentile(xs, q))

    table.add_row(
        corpus,
        f"{n:,}",
        f"{p(tfr, 50):.1f}",
        f"{p(tfr, 95):.1f}",
        f"{statistics.mean(tfr):.1f}",
        f"{p(dense, 50):.1f}",
        f"{p(dense, 95):.1f}",
        f"{p(tfr, 50) / p(dense, 50):.2f}x",
    )
    return {
        "corpus": corpus,
        "triples": n,
        "tfr_p50_ms": round(p(tfr, 50), 2),
        "tfr_p95_ms": round(p(tfr, 95), 2),
        "tfr_mean_ms": round(statistics.mean(tfr), 2),
        "dense_p50_ms": round(p(dense, 50), 2),
        "dense_p95_ms": round(p(dense, 95), 2),
        "tfr_over_dense_p50": round(p(tfr, 50) / p(dense, 50), 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--triples", type=int, default=100_000, help="XBRL triples (default 100,000)")
    ap.add_argument("--queries", type=int, default=200, help="queries per corpus")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="where tfr_retrieval.json goes")
    args = ap.parse_args()
    console = Console()
    s = load_settings()
    path = s.embedding.model_path or models.installed_path("all-minilm-l6-v2")
    embedder = make_embedder(path, s.embedding.backend, s.embedding.batch_size, s.embedding.device)
    latency_rows: list[dict] = []
    queries = [QUERIES[i % len(QUERIES)] + ("" if i < len(QUERIES) else f" ({i})") for i in range(args.queries)]
    table = Table(
        title=f"TFR retrieval latency, ms (k={args.k}, n={args.n}, {embedder.identity.split('@')[0]}, "
        "query encoding included)"
    )
    for col in ("corpus", "triples", "TFR p50", "TFR p95", "TFR mean", "dense p50", "dense p95", "TFR / dense p50"):
        table.add_column(col)
    g = open_graph(s)
    try:
        kg_index = TripleIndex.from_graph(g, embedder)
        if len(kg_index) >= args.k:
            embedder.encode(["warm up"])
            n = min(args.n, len(kg_index))
            tfr = _latency(lambda q: kg_index.cluster_weighted(q, args.k, n, s.retrieval.temperature), queries)
            dense = _latency(lambda q: kg_index.dense(q, args.k), queries)
            latency_rows.append(_row(table, "knowledge graph (Neo4j)", len(kg_index), tfr, dense))
        else:
            console.print(
                f"[yellow]the graph holds {len(kg_index)} triples (< k = {args.k}): run finkg extract first[/yellow]"
            )
        rows = g.read(XBRL_TRIPLES, {"n": args.triples})
    finally:
        g.close()
    if len(rows) < args.triples:
        console.print(
            f"[yellow]{len(rows):,} XBRL facts in the graph (asked {args.triples:,}): "
            "`finkg ingest sec ../shared/data/sec-fsds/*.zip` loads more[/yellow]"
        )
    triples = [
        Triple(
            r["id"],
            "EQUAL_TO",
            r["company"],
            f"{r['tag']} of USD {r['value']:,.0f}",
            "",
            "",
            f"{r['sic']}|{r['tag']}",
            None,
        )
        for r in rows
    ]
    texts = [f"{t.head} reports {t.tail}" for t in triples]
    index = TripleIndex(triples, _cached_vectors(embedder, texts, console), embedder)
    tfr = _latency(lambda q: index.cluster_weighted(q, args.k, args.n, s.retrieval.temperature), queries)
    dense = _latency(lambda q: index.dense(q, args.k), queries)
    latency_rows.append(_row(table, "XBRL facts as triples", len(index), tfr, dense))
    console.print(table)
    xbrl = latency_rows[-1]
    path = write_result(
        "tfr_retrieval",
        {"triples": args.triples, "queries": args.queries, "k": args.k, "n": args.n, "encoder": embedder.identity},
        {
            "xbrl_triples": xbrl["triples"],
            "tfr_p50_ms": xbrl["tfr_p50_ms"],
            "tfr_p95_ms": xbrl["tfr_p95_ms"],
            "dense_p50_ms": xbrl["dense_p50_ms"],
            "dense_p95_ms": xbrl["dense_p95_ms"],
            "ratio_tfr_over_dense_p50_x": xbrl["tfr_over_dense_p50"],
        },
        tables={"latency": latency_rows},
        directory=args.results_dir,
    )
    console.print(f"results: {path}")


if __name__ == "__main__":
    main()
