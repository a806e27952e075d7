"""Bulk import (neo4j-admin) against the transactional load of the same SEC quarter, in the same run.

On a second Neo4j server of its own (a fresh home in a temporary folder, free ports, small memory; the
configured server is not touched), with the shipped quarter data/sec-fsds/2009q3.zip:

1. the transactional path as a user runs it: `finkg db init` (schema on the empty database), then
   `finkg ingest sec` (read, then batched MERGE through Bolt), timed;
2. the bulk path: `finkg ingest sec --bulk --database bulk` while that server runs (read, CSV, then
   `neo4j-admin database import full`), timed, with the CSV part, the tool's wall time (two JVM starts
   included) and the tool's own import time reported apart;
3. the server restarted serving `bulk`, and `finkg db init` there (constraints and indexes built over the
   imported data), timed: the rest of what the bulk path costs before the graph is usable;
4. the nodes per label and relationships per type of both databases compared (they must be equal).

Prints and records (bench/results/bulk-import.json, finkg/eval/results.py format) the seconds and facts/s
of each path and their ratios, and the full-EDGAR-history extrapolation of the README's scale section
(assumptions in :func:`extrapolate`). Run it with `nice` on a shared machine:

    nice -n 10 python bench/bulk_import.py
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from finkg import api
from finkg.eval.results import RESULTS_DIR, write_result
from finkg.neo4j_server import LocalNeo4j, free_port, private_settings
from kg import Graph, schema

QUARTER = Path(__file__).resolve().parents[1] / "data" / "sec-fsds" / "2009q3.zip"
SMALL = QUARTER.with_name("20250404.zip")  # a daily file: the bulk path's fixed cost
PASSWORD = "bench-bulk-pw"
console = Console()


def counts(g: Graph) -> dict[str, dict[str, int]]:
    """Nodes per label and relationships per type (this benchmark's own Cypher)."""
    labels = g.read("MATCH (n) UNWIND labels(n) AS l RETURN l, count(*) AS n")
    types = g.read("MATCH ()-[r]->() RETURN type(r) AS t, count(*) AS n")
    return {"nodes": {r["l"]: r["n"] for r in labels}, "relationships": {r["t"]: r["n"] for r in types}}


def extrapolate(
    bulk_facts_per_s: float, tx_facts_per_s: float, kept_share: float, fixed_s: float
) -> list[dict[str, Any]]:
    """Hours to load full EDGAR history (60 quarterly FSDS archives) by each path, from the rates of what
    grows with the data (bulk: read + CSV, the tool's own import, the schema build; transactional: read +
    MERGE, without the schema step on the empty database).

    Assumptions (stated in the README): time grows linearly with the facts kept (the import tool's
    stages and the reader are single passes; the transactional MERGE is a batched index lookup per row,
    measured here on an empty database, so its figure is a lower bound once the graph holds millions of
    facts); ``kept_share`` of num.txt rows are kept as measured on 2009q3 (an upper bound for later
    quarters, which carry more dimensional rows); the bulk path pays ``fixed_s`` (JVM starts) once, for
    one import of all archives; the same machine as measured.
    """
    rows = []
    for per_quarter in (1_000_000, 3_000_000, 5_000_000):
        facts = 60 * per_quarter * kept_share
        rows.append(
            {
                "num.txt rows per quarter": per_quarter,
                "facts kept (60 quarters)": round(facts),
                "bulk h": round((facts / bulk_facts_per_s + fixed_s) / 3600, 1),
                "transactional h": round(facts / tx_facts_per_s / 3600, 1),
            }
        )
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--quarter", type=Path, default=QUARTER)
    p.add_argument("--heap", default="768m")
    p.add_argument("--pagecache", default="256m")
    p.add_argument("--keep", action="store_true", help="keep the temporary server home")
    args = p.parse_args()
    home = Path(tempfile.mkdtemp(prefix="finkg-bench-bulk.")) / "neo4j"
    ports = (free_port(), free_port())

    def settings(database: str):
        return private_settings(
            home, PASSWORD, ports=ports, heap=args.heap, pagecache=args.pagecache, database=database
        )

    tx_settings, bulk_settings = settings("neo4j"), settings("bulk")
    server = LocalNeo4j(tx_settings)
    try:
        server.start()
        with Graph(tx_settings.uri, "neo4j", PASSWORD) as g:
            t = time.perf_counter()
            schema.apply_schema(g)
            tx_schema_s = time.perf_counter() - t
            t = time.perf_counter()
            api.ingest_sec([args.quarter], graph=g, settings=tx_settings)
            tx_ingest_s = time.perf_counter() - t
            tx_counts = counts(g)
            bulk = api.ingest_sec_bulk([args.quarter], database="bulk", settings=tx_settings)
            small = api.ingest_sec_bulk([SMALL], database="small", settings=tx_settings)
        server.stop()
        store = LocalNeo4j(tx_settings).database_dir("bulk")
        store_mb = sum(f.stat().st_size for f in store.rglob("*") if f.is_file()) / 1e6
        server = LocalNeo4j(bulk_settings)
        server.start()
        with Graph(bulk_settings.uri, "neo4j", PASSWORD, database="bulk") as g:
            t = time.perf_counter()
            schema.apply_schema(g)
            bulk_schema_s = time.perf_counter() - t
            bulk_counts = counts(g)
    finally:
        server.stop()
        if not args.keep:
            shutil.rmtree(home.parent, ignore_errors=True)
    assert bulk.report is not None and small.report is not None
    equal = bulk_counts == tx_counts
    facts = tx_counts["nodes"]["Fact"]
    tx_s = tx_schema_s + tx_ingest_s
    bulk_s = bulk.seconds + bulk_schema_s
    tool_fixed_s = bulk.report.seconds - bulk.report.tool_seconds
    # What grows with the data: the quarter's read + CSV and the tool's own import less the daily file's
    # (the tool's fixed stage costs), and the schema build over the import less the same build on the empty
    # database (its fixed cost).
    marginal_s = (
        bulk.csv_seconds + bulk.report.tool_seconds - small.csv_seconds - small.report.tool_seconds
        + max(bulk_schema_s - tx_schema_s, 0.0)
    )  # fmt: skip
    figures: dict[str, Any] = {
        "facts": facts,
        "nodes": sum(tx_counts["nodes"].values()),
        "relationships": sum(tx_counts["relationships"].values()),
        "counts_equal": equal,
        "tx_schema_s": round(tx_schema_s, 2),
        "tx_ingest_s": round(tx_ingest_s, 2),
        "tx_s": round(tx_s, 2),
        "tx_facts_per_s": round(facts / tx_s, 1),
        "tx_marginal_facts_per_s": round(facts / tx_ingest_s, 1),
        "bulk_csv_s": round(bulk.csv_seconds, 2),
        "bulk_admin_s": round(bulk.report.seconds, 2),
        "bulk_tool_s": round(bulk.report.tool_seconds, 2),
        "bulk_jvm_fixed_s": round(tool_fixed_s, 2),
        "bulk_schema_s": round(bulk_schema_s, 2),
        "bulk_store_mb": round(store_mb, 1),
        "bulk_store_kb_per_fact": round(store_mb * 1000 / facts, 2),
        "bulk_s": round(bulk_s, 2),
        "bulk_facts_per_s": round(facts / bulk_s, 1),
        "small_facts": small.facts,
        "small_csv_s": round(small.csv_seconds, 2),
        "small_tool_s": round(small.report.tool_seconds, 2),
        "bulk_marginal_s": round(marginal_s, 2),
        "bulk_marginal_facts_per_s": round((facts - small.facts) / marginal_s, 1),
        "ratio_tx_over_bulk_s_x": round(tx_s / bulk_s, 2),
        "ratio_marginal_x": round((facts - small.facts) / marginal_s / (facts / tx_ingest_s), 2),
    }
    kept_share = bulk.summary[0]["kept"] / bulk.summary[0]["rows"]
    scale = extrapolate(
        figures["bulk_marginal_facts_per_s"], figures["tx_marginal_facts_per_s"], kept_share, tool_fixed_s
    )
    paths = [
        {
            "path": "transactional (`finkg db init`, `finkg ingest sec`)",
            "seconds": figures["tx_s"],
            "facts_per_s": figures["tx_facts_per_s"],
            "parts": f"schema {tx_schema_s:.1f} s, read + MERGE {tx_ingest_s:.1f} s",
        },
        {
            "path": "bulk (`finkg ingest sec --bulk`, restart, `finkg db init`)",
            "seconds": figures["bulk_s"],
            "facts_per_s": figures["bulk_facts_per_s"],
            "parts": f"read + CSV {bulk.csv_seconds:.1f} s, neo4j-admin {bulk.report.seconds:.1f} s "
            f"(import {bulk.report.tool_seconds:.1f} s + JVM starts {tool_fixed_s:.1f} s), "
            f"schema over the import {bulk_schema_s:.1f} s",
        },
        {
            "path": "bulk, what grows with the data (marginal)",
            "seconds": round(marginal_s, 2),
            "facts_per_s": figures["bulk_marginal_facts_per_s"],
            "parts": f"less the fixed costs: the daily file's read + CSV and import ({small.facts:,} facts, "
            f"{small.csv_seconds + small.report.tool_seconds:.1f} s), the schema step on an empty database",
        },
        {
            "path": "transactional, what grows with the data (read + MERGE)",
            "seconds": round(tx_ingest_s, 2),
            "facts_per_s": figures["tx_marginal_facts_per_s"],
            "parts": "without the schema step on the empty database",
        },
    ]
    table = Table(title=f"{args.quarter.name}: {facts:,} facts; counts equal: {equal}")
    for col in ("path", "seconds", "facts/s", "parts"):
        table.add_column(col)
    for r in paths:
        table.add_row(r["path"], f"{r['seconds']:.1f}", f"{r['facts_per_s']:,.0f}", r["parts"])
    console.print(table)
    console.print(
        f"ratio transactional / bulk seconds: {figures['ratio_tx_over_bulk_s_x']}x "
        f"(marginal rates {figures['ratio_marginal_x']}x)"
    )
    for r in scale:
        console.print(r)
    write_result(
        "bulk-import",
        {"quarter": args.quarter.name, "heap": args.heap, "pagecache": args.pagecache, "kept_share": kept_share},
        figures,
        tables={"paths": paths, "scale": scale, "counts": [tx_counts, bulk_counts]},
        directory=RESULTS_DIR,
    )
    return 0 if equal else 1


if __name__ == "__main__":
    raise SystemExit(main())
