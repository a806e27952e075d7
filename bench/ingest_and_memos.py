"""Seed 003 benchmarks: SEC FSDS ingest end to end, and Structured+Verifier memos per second.

1. **Ingest** a quarter (default: the shipped data/sec-fsds/2009q3.zip) end to end: parse and
   normalize (``ingest.sec.fsds.read_fsds``), then write every node, relationship and evidence
   chunk (``write_fsds``). Baseline measured in the same run: the time pandas alone takes to
   parse num.txt from the same ZIP (``pandas.read_csv``, tab separated, no normalization).
   Prints facts/s and the ratio ingest/pandas. Target (issue 3): <= 30 s for the quarter.
   ``--fresh`` first deletes the quarter's facts and chunks so that the run writes them anew
   (otherwise a re-ingest, which writes nothing new).
2. **Memos**: Structured+Verifier over every complete filing of the quarter, fact maps read from
   Neo4j in batches (``memo_batch_size``), generation + verification timed separately, nothing
   written. Baseline in the same run: the fact-map reads alone. Target: >= 100 memos/s (the
   paper: 147.9 ms per memo).

    python bench/ingest_and_memos.py            # against the configured Neo4j (finkg settings)
    python bench/ingest_and_memos.py --fresh
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
import zipfile
from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.table import Table

from finkg.api import open_graph
from finkg.config import load_settings
from finkg.eval.results import RESULTS_DIR, write_result
from finkg.pipelines.memos import thresholds
from generation.memo.systems import MemoContext, generate_memo
from ingest.sec import fsds as sec_fsds
from kg import BatchWriter, cypher
from retrieval.facts.fact_map import list_filings, read_fact_maps

QUARTER = Path(__file__).resolve().parents[1] / "data" / "sec-fsds" / "2009q3.zip"
console = Console()


def pandas_parse(path: Path) -> tuple[float, int]:
    """Seconds for pandas to parse num.txt from the ZIP, and its rows."""
    start = time.perf_counter()
    with zipfile.ZipFile(path) as zf:
        name = next(n for n in zf.namelist() if n.endswith("num.txt"))
        with zf.open(name) as fh:
            df = pd.read_csv(io.TextIOWrapper(fh, encoding="utf-8"), sep="\t", dtype=str, quoting=3)
    return time.perf_counter() - start, len(df)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quarter", type=Path, default=QUARTER)
    ap.add_argument(
        "--fresh",
        action="store_true",
        help="delete the quarter's facts and chunks first (memos lose their CITES to them: rerun finkg memo --redo)",
    )
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="where ingest_and_memos.json goes")
    args = ap.parse_args()
    s = load_settings()
    g = open_graph(s)
    writer = BatchWriter(g, batch_size=s.writer.batch_size, workers=s.writer.workers)

    pandas_s, pandas_rows = pandas_parse(args.quarter)
    start = time.perf_counter()
    data = sec_fsds.read_fsds(args.quarter)
    parse_s = time.perf_counter() - start
    if args.fresh:
        adshs = [f["adsh"] for f in data.filings]
        g.run_autocommit(cypher.DELETE_FACTS_OF_FILINGS, {"adshs": adshs})
    start = time.perf_counter()
    stats = sec_fsds.write_fsds(writer, data)
    write_s = time.perf_counter() - start
    total = parse_s + write_s
    created = sum(v.created for v in stats.values())

    t = Table(title=f"ingest {args.quarter.name} ({'fresh' if args.fresh else 're-ingest'})")
    for c in ("step", "seconds", "rows", "rows/s"):
        t.add_column(c)
    t.add_row(
        "pandas read_csv num.txt (baseline)", f"{pandas_s:.2f}", f"{pandas_rows:,}", f"{pandas_rows / pandas_s:,.0f}"
    )
    t.add_row(
        "finkg parse + normalize", f"{parse_s:.2f}", f"{data.counts['rows']:,}", f"{data.counts['rows'] / parse_s:,.0f}"
    )
    t.add_row(
        "finkg write (nodes, rels, chunks)",
        f"{write_s:.2f}",
        f"{data.counts['kept']:,} facts",
        f"{data.counts['kept'] / write_s:,.0f}",
    )
    t.add_row(
        "finkg end to end", f"{total:.2f}", f"{data.counts['kept']:,} facts", f"{data.counts['kept'] / total:,.0f}"
    )
    console.print(t)
    console.print("write seconds per stage: " + ", ".join(f"{k} {v.seconds:.1f}" for k, v in stats.items()))
    console.print(
        f"graph objects created: {created:,}; end to end / pandas parse = {total / pandas_s:.1f}x; "
        f"target <= 30 s: {'met' if total <= 30 else 'NOT met'}"
    )

    adshs = [f["adsh"] for f in list_filings(g, source=args.quarter.name)]
    start = time.perf_counter()
    maps = [fm for fm in read_fact_maps(g, adshs, s.memo.batch_size)]
    read_s = time.perf_counter() - start
    complete = [fm for fm in maps if fm.complete()]
    ctx = MemoContext(thresholds(s))
    lat = []
    start = time.perf_counter()
    for fm in complete:
        m = generate_memo("structured", fm, ctx)
        lat.append(m.latency_ms)
        assert m.verification.counts()["repaired"] == 0
    gen_s = time.perf_counter() - start
    read_per_memo = read_s / len(maps)
    per_memo = gen_s / len(complete) + read_per_memo
    t = Table(title=f"Structured+Verifier memos over {len(complete)} complete filings of {len(maps)}")
    for c in ("step", "seconds", "ms per memo", "memos/s"):
        t.add_column(c)
    t.add_row(
        "fact maps read from Neo4j (baseline)",
        f"{read_s:.2f}",
        f"{1000 * read_per_memo:.2f}",
        f"{1 / read_per_memo:,.0f}",
    )
    t.add_row(
        "draft + render + verify",
        f"{gen_s:.2f}",
        f"{1000 * gen_s / len(complete):.2f}",
        f"{len(complete) / gen_s:,.0f}",
    )
    t.add_row(
        "read + generate + verify",
        f"{read_per_memo * len(complete) + gen_s:.2f}",
        f"{1000 * per_memo:.2f}",
        f"{1 / per_memo:,.0f}",
    )
    console.print(t)
    console.print(
        f"latency per memo (generation + verification): mean {statistics.fmean(lat):.2f} ms, "
        f"p95 {sorted(lat)[int(0.95 * (len(lat) - 1))]:.2f} ms; end to end / read alone = "
        f"{per_memo / read_per_memo:.1f}x; target >= 100 memos/s: {'met' if 1 / per_memo >= 100 else 'NOT met'}"
    )
    path = write_result(
        "ingest_and_memos",
        {"quarter": args.quarter.name, "fresh": args.fresh},
        {
            "pandas_parse_s": round(pandas_s, 3),
            "pandas_rows": pandas_rows,
            "parse_s": round(parse_s, 3),
            "write_s": round(write_s, 3),
            "ingest_total_s": round(total, 3),
            "facts_kept": data.counts["kept"],
            "graph_objects_created": created,
            "ratio_ingest_over_pandas_x": round(total / pandas_s, 2),
            "filings": len(maps),
            "complete_filings": len(complete),
            "read_s": round(read_s, 3),
            "generate_verify_s": round(gen_s, 3),
            "ms_per_memo": round(1000 * per_memo, 3),
            "memos_per_s": round(1 / per_memo, 1),
            "latency_mean_ms": round(statistics.fmean(lat), 3),
            "ratio_memo_over_read_x": round(per_memo / read_per_memo, 2),
        },
        directory=args.results_dir,
    )
    console.print(f"results: {path}")
    g.close()


if __name__ == "__main__":
    main()
