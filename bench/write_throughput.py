"""Write throughput: batched UNWIND MERGE vs one transaction per row, in the same run.

Writes N nodes and M relationships twice against the configured Neo4j (finkg settings):
once with ``kg.BatchWriter`` (one transaction per batch) and once row at a time (the same
MERGE statement, one transaction per row: the pattern peer tools are criticised for). Prints
rows/s for each and the ratio. Nodes are real SEC facts (num.txt of the 2009q3 Financial
Statement Data Set, ../shared/data/sec-fsds/2009q3.zip) when that file is there; relationships
link each fact to the next two facts of the same listing.

    python bench/write_throughput.py                       # 50,000 nodes, 100,000 relationships
    python bench/write_throughput.py --row-fraction 0.1    # time row-at-a-time on a 10 % sample
                                                           # (all of it takes about 10 minutes)

Everything is written under bench-only labels with their own uniqueness constraints and deleted
afterwards.
"""

from __future__ import annotations

import argparse
import csv
import io
import zipfile
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from finkg.api import open_graph
from finkg.config import load_settings
from finkg.eval.results import RESULTS_DIR, write_result
from kg import BatchWriter, Graph, cypher

DEFAULT_ZIP = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "sec-fsds" / "2009q3.zip"
console = Console()


def load_facts(path: Path, n: int) -> list[dict]:
    """The first ``n`` rows of num.txt as fact rows with a deterministic key."""
    rows: list[dict] = []
    with zipfile.ZipFile(path) as zf, zf.open("num.txt") as fh:
        reader = csv.DictReader(io.TextIOWrapper(fh, encoding="utf-8"), delimiter="\t")
        for r in reader:
            key = ":".join(r[c] for c in ("adsh", "tag", "version", "ddate", "qtrs", "uom", "segments", "coreg"))
            rows.append(
                {
                    "key": key,
                    "adsh": r["adsh"],
                    "tag": r["tag"],
                    "ddate": r["ddate"],
                    "qtrs": int(r["qtrs"]),
                    "uom": r["uom"],
                    "value": float(r["value"]) if r["value"] else None,
                }
            )
            if len(rows) == n:
                break
    return rows


def synthetic_facts(n: int) -> list[dict]:
    return [{"key": f"f{i}", "tag": f"Tag{i % 500}", "qtrs": i % 5, "value": float(i)} for i in range(n)]


def links(facts: list[dict], m: int) -> list[dict]:
    out: list[dict] = []
    step = 1
    while len(out) < m:
        for i in range(len(facts) - step):
            out.append(
                {"start": facts[i]["key"], "end": facts[i + step]["key"], "id": f"{step}:{i}", "props": {"step": step}}
            )
            if len(out) == m:
                break
        step += 1
    return out


def run(
    graph: Graph, label: str, facts: list[dict], rels: list[dict], batch_size: int, workers: int, progress: Progress
) -> tuple[float, float]:
    writer = BatchWriter(graph, batch_size=batch_size, workers=workers)
    t = progress.add_task(f"{label} nodes", total=len(facts))
    ns = writer.merge_nodes(label, facts, key="key", progress=lambda k: progress.advance(t, k))
    t = progress.add_task(f"{label} relationships", total=len(rels))
    rs = writer.merge_relationships(
        "BENCH_LINK",
        rels,
        start=(label, "key"),
        end=(label, "key"),
        key="id",
        progress=lambda k: progress.advance(t, k),
    )
    assert ns.created == len(facts) and rs.created == len(rels), (ns, rs)
    return ns.seconds, rs.seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=50_000)
    ap.add_argument("--rels", type=int, default=100_000)
    ap.add_argument("--batch-size", type=int, default=None, help="default: [writer] batch_size")
    ap.add_argument("--workers", type=int, default=None, help="default: [writer] workers")
    ap.add_argument(
        "--row-fraction",
        type=float,
        default=1.0,
        help="share of the rows written row at a time (rates are compared, not totals)",
    )
    ap.add_argument("--sec-zip", type=Path, default=DEFAULT_ZIP)
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="where write_throughput.json goes")
    args = ap.parse_args()

    s = load_settings()
    batch = args.batch_size or s.writer.batch_size
    workers = args.workers or s.writer.workers
    if args.sec_zip.is_file():
        facts, source = load_facts(args.sec_zip, args.nodes), f"SEC num.txt ({args.sec_zip.name})"
    else:
        facts, source = synthetic_facts(args.nodes), "synthetic (SEC zip not found)"
    rels = links(facts, args.rels)
    k = max(1, int(len(facts) * args.row_fraction))
    row_facts = facts[:k]
    row_keys = {f["key"] for f in row_facts}
    row_rels = [r for r in rels if r["start"] in row_keys and r["end"] in row_keys][
        : int(len(rels) * args.row_fraction)
    ]

    labels = {"warmup": "BenchWarmup", "batched": "BenchFactBatched", "row": "BenchFactRow"}
    results = {}
    with open_graph(s) as g:
        for lab in labels.values():
            g.run_autocommit(cypher.delete_nodes_in_transactions(lab))
            g.run_autocommit(cypher.create_constraint(f"{lab.lower()}_key", "unique", lab, ["key"]))
        try:
            with Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
            ) as progress:
                # untimed warm-up (JIT, page cache, query plans) so neither mode pays for it
                warm_facts = facts[:10_000]
                warm_rels = links(warm_facts, 2 * len(warm_facts))
                run(g, labels["warmup"], warm_facts, warm_rels, batch, workers, progress)
                results["batched"] = run(g, labels["batched"], facts, rels, batch, workers, progress)
                results["row"] = run(g, labels["row"], row_facts, row_rels, 1, 1, progress)
        finally:
            for lab in labels.values():
                g.run_autocommit(cypher.delete_nodes_in_transactions(lab))
                g.run_autocommit(cypher.drop_constraint(f"{lab.lower()}_key"))

    sizes = {"batched": (len(facts), len(rels)), "row": (len(row_facts), len(row_rels))}
    table = Table(
        title=f"write throughput: {source}; batched: {batch} rows per transaction, "
        f"{workers} in flight; row: 1 row per transaction; Neo4j at {s.uri}"
    )
    for col in ("mode", "nodes", "node rows/s", "relationships", "rel rows/s", "all rows/s"):
        table.add_column(col, justify="right")
    rate = {}
    for mode, (tn, tr) in results.items():  # warm-up not reported
        n, m = sizes[mode]
        rate[mode] = (n / tn, m / tr, (n + m) / (tn + tr))
        table.add_row(
            mode, f"{n:,}", f"{rate[mode][0]:,.0f}", f"{m:,}", f"{rate[mode][1]:,.0f}", f"{rate[mode][2]:,.0f}"
        )
    console.print(table)
    ratio = [b / r for b, r in zip(rate["batched"], rate["row"])]
    console.print(
        f"batched / row-at-a-time: nodes {ratio[0]:.1f}x, relationships {ratio[1]:.1f}x, all rows {ratio[2]:.1f}x"
    )
    rows = []
    for mode, (tn, tr) in results.items():
        n, m = sizes[mode]
        rows.append(
            {
                "mode": mode,
                "nodes": n,
                "node_s": round(tn, 3),
                "node_rows_per_s": round(rate[mode][0], 1),
                "relationships": m,
                "rel_s": round(tr, 3),
                "rel_rows_per_s": round(rate[mode][1], 1),
                "all_rows_per_s": round(rate[mode][2], 1),
            }
        )
    path = write_result(
        "write_throughput",
        {
            "nodes": args.nodes,
            "rels": args.rels,
            "batch_size": batch,
            "workers": workers,
            "row_fraction": args.row_fraction,
            "source": source,
        },
        {
            "batched_all_rows_per_s": round(rate["batched"][2], 1),
            "row_all_rows_per_s": round(rate["row"][2], 1),
            "ratio_nodes_x": round(ratio[0], 2),
            "ratio_relationships_x": round(ratio[1], 2),
            "ratio_all_rows_x": round(ratio[2], 2),
        },
        tables={"modes": rows},
        directory=args.results_dir,
    )
    console.print(f"results: {path}")


if __name__ == "__main__":
    main()
