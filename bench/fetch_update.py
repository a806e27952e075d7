"""`finkg fetch`'s throughput and cache, and an incremental update against a full rebuild (issue 46, "Measure").

Everything runs through the CLI (`finkg` subprocesses, as the tests run it) against a private Neo4j server of its
own (a temporary home, free ports; the configured server is not touched) and a real local HTTP server that serves
the saved real SEC companyfacts responses the tests use (tests/test_fetch.py's ``EdgarServer``, the three companies
of tests/test_own_companies.py: Tesla, Snowflake, Marvell; provenance in data/NOTICE.md) at their SEC URL paths,
counting every request. Bytes are the sizes of the files the server answered with.

1. Fetch: `finkg fetch TSLA SNOW MRVL --no-filings` into the empty graph (requests, bytes, seconds, facts loaded),
   with Marvell's companyfacts as SEC served it before its latest 10-Q (the saved response less that filing's
   entries, tests/test_own_companies.py's ``without_filing``); the same command again (requests: must be 0,
   seconds); then `--offline` (no identity, EDGAR a closed port).
2. `finkg memo --all` (the default structured system: no LLM), the baseline every later step starts from.
3. Incremental: the server now serves Marvell's full response (its 10-Q of 2026-05-28 added); `finkg fetch
   --refresh MRVL --no-filings` then `finkg memo --all`: requests, facts added, memos written against already done,
   seconds.
4. Full rebuild, same run: the graph emptied, `finkg fetch --offline TSLA SNOW MRVL --no-filings` from the cache
   (which holds what step 3 fetched), `finkg memo --all` into a fresh memo folder: memos written, seconds. The
   rebuilt graph must hold the same facts and memos as the incrementally updated one.

Each step's seconds are the wall time of its `finkg` process, start-up (imports, settings, the Bolt connection)
included; "total" rows add the steps. Steps 1 to 4 run ``--repeat`` times (default 3), each from an empty graph
and an empty cache; the table and figures give each step's median seconds (every run's in ``<figure>_runs``), and
the counts, which every run must share. ``rebuild_over_incremental_x`` is the full rebuild's seconds over the
incremental update's. Reports are not measured. Writes
bench/results/fetch-update.json (table ``fetch-update``, rendered in docs/edgar.md). On a shared machine:

    nice -n 10 python bench/fetch_update.py [--repeat 3]

It exits 1 when a check fails: the second fetch made a request, the incremental update wrote other than the one new
memo, the rebuilt graph's facts, filings and memos differ from the updated one's, or runs disagree on a count.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from test_fetch import EdgarServer  # noqa: E402  # pyright: ignore[reportMissingImports]  (the tests' SEC server)
from test_own_companies import (  # noqa: E402  # pyright: ignore[reportMissingImports]  (the three companies)
    FILES,
    MRVL,
    MRVL_10Q,
    SNOW,
    TICKERS,
    TSLA,
    edgar,
    facts_path,
    run,
    table,
    without_filing,
)

from finkg.eval.results import write_result  # noqa: E402
from finkg.neo4j_server import LocalNeo4j, private_settings  # noqa: E402
from kg import Graph, schema  # noqa: E402


def served_bytes(server: Any, since: int = 0) -> int:
    """Bytes the server answered with for its requests from index ``since`` on (a 404 answers none)."""
    return sum(server.files[p].stat().st_size for p in server.requests[since:] if p in server.files)


def timed(*args: str, env: dict[str, str]) -> tuple[str, float]:
    """``finkg *args`` (it must succeed): its standard output and wall seconds."""
    t = time.perf_counter()
    out = run(*args, env=env)
    return out, round(time.perf_counter() - t, 2)


def facts_new(stdout: str) -> int:
    """Facts a `finkg fetch` added, all companies together (its table's ``facts new`` column)."""
    return sum(int(r["facts new"].replace(",", "")) for r in table(stdout))


def memo_counts(stdout: str) -> tuple[int, int]:
    """``(written, already done)`` of `finkg memo`'s summary (one system)."""
    [row] = table(stdout)
    return int(row["written"].replace(",", "")), int(row["already done"].replace(",", ""))


def graph_counts(graph: Graph) -> dict[str, int]:
    """Facts, filings and memos in the graph."""
    return {
        label: graph.read(f"MATCH (n:{label}) RETURN count(n) AS n")[0]["n"] for label in ("Fact", "Filing", "Memo")
    }


def step(
    rows: list[dict[str, Any]],
    name: str,
    seconds: float,
    *,
    requests: int | None = None,
    nbytes: int | None = None,
    facts: int | None = None,
    memos: int | None = None,
) -> None:
    """One row of the table, printed as it is measured."""
    rows.append(
        {
            "step": name,
            "requests": requests,
            "bytes": nbytes,
            "facts": facts,
            "memos written": memos,
            "seconds": seconds,
        }
    )
    shown = ", ".join(
        f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}"
        for k, v in (("requests", requests), ("bytes", nbytes), ("facts", facts), ("memos written", memos))
        if v is not None
    )
    print(f"  {name}: {seconds:.2f} s" + (f" ({shown})" if shown else ""), flush=True)


def measure(work: Path, neo4j: dict[str, str], graph: Graph) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Steps 1 to 4 of the module docstring, from an empty graph and an empty cache under ``work``; the figures and
    the table rows."""
    work.mkdir(parents=True)
    graph.run_autocommit("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS")
    figures: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    cache = work / "edgar"
    offline = {**neo4j, **edgar(None, cache)}
    earlier = without_filing(FILES[MRVL], MRVL_10Q, work / "CIK0001835632.earlier.json")

    print("1. fetch: three companies from the local EDGAR server", flush=True)
    server = EdgarServer({facts_path(TSLA): FILES[TSLA], facts_path(SNOW): FILES[SNOW], facts_path(MRVL): earlier})
    try:
        online = {**neo4j, **edgar(server, cache)}
        out, s = timed("fetch", *TICKERS, "--no-filings", env=online)
        n, nbytes, facts = len(server.requests), served_bytes(server), facts_new(out)
        figures |= {"first_fetch_requests": n, "first_fetch_bytes": nbytes, "first_fetch_s": s}
        figures |= {"first_fetch_facts": facts, "first_fetch_mb_per_s": round(nbytes / 1e6 / s, 2)}
        step(rows, "fetch 3 companies (EDGAR)", s, requests=n, nbytes=nbytes, facts=facts)
        out, s = timed("fetch", *TICKERS, "--no-filings", env=online)
        n2 = len(server.requests) - n
        figures |= {"second_fetch_requests": n2, "second_fetch_s": s, "second_fetch_facts": facts_new(out)}
        step(rows, "same fetch again (cache)", s, requests=n2, nbytes=served_bytes(server, n), facts=facts_new(out))
    finally:
        server.close()
    out, s = timed("fetch", "--offline", *TICKERS, "--no-filings", env=offline)
    figures |= {"offline_fetch_s": s}
    step(rows, "fetch --offline (cache)", s, requests=0, nbytes=0, facts=facts_new(out))

    print("2. memos of every filing (structured, no LLM)", flush=True)
    out, s = timed("memo", "--all", "-o", str(work / "memos"), env=offline)
    written, _ = memo_counts(out)
    figures |= {"memo_all_s": s, "memo_all_written": written}
    step(rows, "memo --all", s, memos=written)

    print("3. incremental: Marvell's 10-Q of 2026-05-28 on EDGAR", flush=True)
    server = EdgarServer({facts_path(MRVL): FILES[MRVL]})  # another URL: no HTTP cache of edgartools answers
    try:
        out, fetch_s = timed("fetch", "--refresh", "MRVL", "--no-filings", env={**neo4j, **edgar(server, cache)})
        n, nbytes, added = len(server.requests), served_bytes(server), facts_new(out)
    finally:
        server.close()
    step(rows, "incremental: fetch --refresh MRVL", fetch_s, requests=n, nbytes=nbytes, facts=added)
    out, memo_s = timed("memo", "--all", "-o", str(work / "memos"), env=offline)
    written, done = memo_counts(out)
    step(rows, "incremental: memo --all", memo_s, memos=written)
    incremental_s = round(fetch_s + memo_s, 2)
    step(rows, "incremental, total", incremental_s, requests=n, nbytes=nbytes, facts=added, memos=written)
    incremental = graph_counts(graph)
    figures |= {
        "incremental_fetch_requests": n,
        "incremental_fetch_bytes": nbytes,
        "incremental_fetch_s": fetch_s,
        "incremental_facts_added": added,
        "incremental_memo_s": memo_s,
        "incremental_memos_written": written,
        "incremental_memos_already_done": done,
        "incremental_s": incremental_s,
    }
    print(f"  memos written {written}, already done {done}; graph: {incremental}", flush=True)

    print("4. full rebuild: an emptied graph, three companies from the cache, every memo", flush=True)
    t = time.perf_counter()
    graph.run_autocommit("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS")
    wipe_s = round(time.perf_counter() - t, 2)
    step(rows, "rebuild: empty the graph", wipe_s)
    out, rfetch_s = timed("fetch", "--offline", *TICKERS, "--no-filings", env=offline)
    rfacts = facts_new(out)
    step(rows, "rebuild: fetch 3 companies (cache)", rfetch_s, requests=0, nbytes=0, facts=rfacts)
    out, rmemo_s = timed("memo", "--all", "-o", str(work / "memos-rebuild"), env=offline)
    rwritten, _ = memo_counts(out)
    step(rows, "rebuild: memo --all", rmemo_s, memos=rwritten)
    rebuild_s = round(wipe_s + rfetch_s + rmemo_s, 2)
    step(rows, "rebuild, total", rebuild_s, requests=0, nbytes=0, facts=rfacts, memos=rwritten)
    rebuilt = graph_counts(graph)
    ratio = round(rebuild_s / incremental_s, 2)
    figures |= {
        "rebuild_wipe_s": wipe_s,
        "rebuild_fetch_s": rfetch_s,
        "rebuild_facts": rfacts,
        "rebuild_memo_s": rmemo_s,
        "rebuild_memos_written": rwritten,
        "rebuild_s": rebuild_s,
        "rebuild_over_incremental_x": ratio,
        "graph_facts": rebuilt["Fact"],
        "graph_filings": rebuilt["Filing"],
        "graph_memos": rebuilt["Memo"],
        "rebuild_equals_incremental": rebuilt == incremental,
    }
    print(f"  graph: {rebuilt} (the same as the incremental update's: {rebuilt == incremental})", flush=True)
    print(f"full rebuild {rebuild_s:.2f} s / incremental {incremental_s:.2f} s = {ratio}x", flush=True)
    return figures, rows


def combined(runs: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The repetitions as one: each step's median seconds (each run's seconds kept in ``<key>_runs``); the counts,
    which every run must share (``counts_equal_across_runs``)."""
    figures: dict[str, Any] = {}
    for key, first in runs[0][0].items():
        values = [f[key] for f, _ in runs]
        if key.endswith(("_s", "_x", "_per_s")):
            figures[key] = round(statistics.median(values), 2)
            figures[f"{key}_runs"] = values
        else:
            figures[key] = first
    figures["counts_equal_across_runs"] = all(
        {k: v for k, v in f.items() if not k.endswith(("_s", "_x", "_per_s"))}
        == {k: v for k, v in runs[0][0].items() if not k.endswith(("_s", "_x", "_per_s"))}
        and [{**r, "seconds": 0} for r in rows] == [{**r, "seconds": 0} for r in runs[0][1]]
        for f, rows in runs
    )
    figures["rebuild_over_incremental_x"] = round(figures["rebuild_s"] / figures["incremental_s"], 2)
    rows = [
        {**row, "seconds": round(statistics.median(r[i]["seconds"] for _, r in runs), 2)}
        for i, row in enumerate(runs[0][1])
    ]
    return figures, rows


def main() -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--heap", default="768m")
    p.add_argument("--pagecache", default="256m")
    p.add_argument("--repeat", type=int, default=3, help="runs of steps 1 to 4; the seconds are their medians")
    p.add_argument("--no-write", action="store_true", help="print the figures only")
    args = p.parse_args()
    for var in list(os.environ):  # the user's own edgartools and finkg EDGAR settings never reach the subprocesses
        if var.startswith(("FINKG_EDGAR_", "EDGAR_")):
            del os.environ[var]

    work = Path(tempfile.mkdtemp(prefix="finkg-bench-fetch."))
    password = secrets.token_urlsafe(16)
    settings = private_settings(work / "neo4j", password, heap=args.heap, pagecache=args.pagecache)
    neo4j = {
        "FINKG_NEO4J__URI": settings.uri,
        "FINKG_NEO4J__USER": "neo4j",
        "FINKG_NEO4J__PASSWORD": password,
        "FINKG_NEO4J__DATABASE": "neo4j",
        "FINKG_LLM__CACHE_DIR": str(work / "llm-cache"),
    }
    server = LocalNeo4j(settings)
    print(f"a private Neo4j server in {work / 'neo4j'}", flush=True)
    server.start()
    try:
        with Graph(settings.uri, "neo4j", password) as g:
            schema.apply_schema(g)
            runs: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
            for i in range(args.repeat):
                print(f"run {i + 1} of {args.repeat}", flush=True)
                runs.append(measure(work / f"run-{i + 1}", neo4j, g))
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    figures, rows = combined(runs)
    figures["repeats"] = args.repeat
    print(
        f"median of {args.repeat}: full rebuild {figures['rebuild_s']:.2f} s / incremental "
        f"{figures['incremental_s']:.2f} s = {figures['rebuild_over_incremental_x']}x "
        f"(runs: {figures['rebuild_over_incremental_x_runs']})",
        flush=True,
    )
    ok = figures["second_fetch_requests"] == 0 and figures["incremental_memos_written"] == 1
    ok = ok and figures["rebuild_equals_incremental"] and figures["counts_equal_across_runs"]
    if not args.no_write:
        path = write_result(
            "fetch-update",
            {
                "tickers": list(TICKERS),
                "new_filing": MRVL_10Q,
                "responses": {t: str(FILES[c].relative_to(ROOT)) for t, c in zip(TICKERS, (TSLA, SNOW, MRVL))},
                "memo_system": "structured",
                "repeat": args.repeat,
                "heap": args.heap,
                "pagecache": args.pagecache,
            },
            figures,
            tables={"fetch-update": rows},
        )
        print(f"wrote {path.relative_to(ROOT)}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
