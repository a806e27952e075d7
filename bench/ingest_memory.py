"""Peak memory of `finkg ingest sec`'s reading and row building: every fact in memory (the reader before issue 47
item 3) against the streamed reader (a group of facts at a time), in the same run, on the same archives.

Archives: the shipped quarter data/sec-fsds/2009q3.zip and a synthetic one ``--times`` times its size (default 4):
every sub.txt, num.txt and pre.txt row again under another accession number (its first digit replaced by the copy's
number; a custom tag's ``version``, which is its filing's accession number, renamed with it and its tag.txt row
copied), so the copy has N times the filings, facts and custom concepts of the real quarter.

Each measurement runs in a fresh process (peak RSS is per process: ``VmHWM`` of ``/proc/self/status``), and the
figure is the peak less the process's RSS after its imports:

- ``old``: the reader of git revision ``--baseline`` (``ingest/sec/fsds.py`` as it was, loaded from git):
  ``read_fsds``, then ``graph_rows`` (every fact, chunk and relationship row at once), as ``finkg ingest sec`` did;
- ``new``: ``open_fsds`` (facts spilled to a temporary SQLite file), then ``graph_parts`` a group at a time
  (``GROUP_BATCHES`` x the default writer batch, 20,000 facts), as ``finkg ingest sec`` does now.

Both hash every row of every stage in order (the seconds include it): the digests must be equal, i.e. the graph
content is identical. With ``--ingest`` the real quarter is also ingested (``finkg ingest sec``'s pipeline, new code)
into a private Neo4j server of its own (a temporary home, free ports; the configured server is not touched), in a
process of its own whose peak RSS is recorded with the graph's counts.

With ``--bulk`` the same archives also go through ``finkg ingest sec --bulk``'s CSV writing
(``bulk_import_sec(..., csv_only=True)``, no server), each in a fresh process:

- ``bulk-old``: the code of git revision ``--bulk-baseline`` (the whole tree of that commit, extracted to a temporary
  folder and put first on ``PYTHONPATH``): every archive read whole (``read_fsds``), its rows made at once
  (``graph_rows``), each CSV file written from all its rows;
- ``bulk-new``: this tree's: the archive spilled (``open_fsds``), its rows gone through twice a group at a time.

Their CSV files are hashed (all but the run record, whose times and process differ): the digests must be equal.

Writes bench/results/ingest-memory.json and prints the old / new ratio per archive. On a shared machine:

    nice -n 10 python bench/ingest_memory.py [--times 4] [--ingest] [--bulk]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
QUARTER = ROOT / "data" / "sec-fsds" / "2009q3.zip"
BASELINE = "25932a6"
"""The last commit whose reader kept every fact in memory (the parent of the streamed reader)."""
BULK_BASELINE = "910f5f8"
"""The last commit whose bulk import read an archive whole (the parent of the streamed bulk CSV writer)."""
PASSWORD = "bench-ingest-memory-pw"
GROUP_FACTS = 4 * 5_000
"""Facts per group: ingest.sec.fsds.GROUP_BATCHES x the default [writer] batch_size."""


def rss_mb() -> float:
    """This process's resident set now, in MB (``/proc/self/statm``)."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def peak_mb() -> float:
    """This process's peak resident set so far, in MB: ``VmHWM`` of ``/proc/self/status`` (kB), the peak of this
    program's own memory. Not ``resource.getrusage``'s ``ru_maxrss``: Linux keeps it across ``exec``, so a child
    would report at least its parent's resident set when it was started."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1e3
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3  # no /proc: the nearest there is


def synthetic(quarter: Path, times: int, out: Path) -> Path:
    """``quarter`` with its filings ``times`` times (see the module docstring); the copy's path."""
    with zipfile.ZipFile(quarter) as src:
        members = {Path(n).name: n for n in src.namelist()}
        sub = src.read(members["sub.txt"]).decode("utf-8").splitlines()
        adshs = {line.split("\t", 1)[0] for line in sub[1:] if line}
        assert all(a.startswith("0") for a in adshs), "a copy's accession number replaces a leading 0"
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
            for name, member in members.items():
                if name not in ("sub.txt", "num.txt", "pre.txt", "tag.txt"):
                    dst.writestr(member, src.read(member))  # readme.htm
                    continue
                lines = src.read(member).decode("utf-8").splitlines()
                header = lines[0].split("\t")
                at = header.index("adsh") if "adsh" in header else None
                version = header.index("version") if "version" in header else None
                rows = [line.split("\t") for line in lines[1:] if line]
                out_lines = list(lines)
                for i in range(1, times):
                    for r in rows:
                        if at is None and (version is None or r[version] not in adshs):
                            continue  # a standard tag: once in tag.txt
                        c = list(r)
                        if at is not None:
                            c[at] = f"{i}{c[at][1:]}"
                        if version is not None and c[version] in adshs:
                            c[version] = f"{i}{c[version][1:]}"
                        out_lines.append("\t".join(c))
                dst.writestr(member, "\n".join(out_lines) + "\n")
    return out


def baseline_module(revision: str, folder: Path) -> Any:
    """``ingest/sec/fsds.py`` of git ``revision``, loaded as the module ``fsds_baseline``."""
    source = subprocess.run(
        ["git", "show", f"{revision}:ingest/sec/fsds.py"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    path = folder / "fsds_baseline.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("fsds_baseline", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fsds_baseline"] = module
    spec.loader.exec_module(module)
    return module


def _digest(digests: dict[str, Any], counts: dict[str, int], stage: str, rows: list[dict[str, Any]]) -> None:
    h = digests.setdefault(stage, hashlib.sha256())
    for row in rows:
        h.update(json.dumps(row, sort_keys=True, default=str).encode())
    counts[stage] = counts.get(stage, 0) + len(rows)


def child_phase(mode: str, archive: Path, revision: str) -> dict[str, Any]:
    """One measurement (in its own process): read and build every row of ``archive`` the ``mode`` way."""
    from ingest.sec import fsds

    folder = Path(tempfile.mkdtemp(prefix="finkg-bench-memory."))
    old = baseline_module(revision, folder) if mode == "old" else None
    start_rss = rss_mb()
    digests: dict[str, Any] = {}
    counts: dict[str, int] = {}
    t = time.perf_counter()
    if old is not None:
        data = old.read_fsds(archive)
        nodes, rels = old.graph_rows(data)
        for part in [*nodes, *rels]:
            _digest(digests, counts, part.stage, part.rows)
    else:
        group = fsds.GROUP_BATCHES * 5_000
        assert group == GROUP_FACTS
        with fsds.open_fsds(archive) as spill:
            for part in fsds.graph_parts(spill, group):
                _digest(digests, counts, part.stage, part.rows)
    seconds = time.perf_counter() - t
    shutil.rmtree(folder, ignore_errors=True)
    peak = peak_mb()
    return {
        "mode": mode,
        "archive": archive.name,
        "rss_after_imports_mb": round(start_rss, 1),
        "peak_rss_mb": round(peak, 1),
        "phase_peak_mb": round(peak - start_rss, 1),
        "seconds": round(seconds, 2),
        "rows": counts,
        "digest": hashlib.sha256("".join(f"{k}:{h.hexdigest()}" for k, h in digests.items()).encode()).hexdigest(),
    }


def child_bulk(mode: str, archive: Path) -> dict[str, Any]:
    """``finkg ingest sec --bulk --csv-only``'s CSV writing of ``archive`` (in its own process, ``mode`` ``bulk-old``
    with the baseline tree first on ``PYTHONPATH``): peak memory, seconds, and the digest of the CSV files but the
    run record."""
    import finkg
    from finkg.config import load_settings
    from finkg.pipelines.bulk import bulk_import_sec

    folder = Path(tempfile.mkdtemp(prefix="finkg-bench-bulk-csv."))
    start_rss = rss_mb()
    t = time.perf_counter()
    result = bulk_import_sec(load_settings(), [archive], database="benchmemory", csv_dir=folder, csv_only=True)
    seconds = time.perf_counter() - t
    peak = peak_mb()
    h = hashlib.sha256()
    for path in sorted(folder.iterdir()):
        if not path.name.endswith("-ingest-runs.csv"):
            h.update(path.name.encode())
            with path.open("rb") as fh:
                h.update(hashlib.file_digest(fh, "sha256").digest())
    shutil.rmtree(folder, ignore_errors=True)
    return {
        "mode": mode,
        "archive": archive.name,
        "code": str(Path(finkg.__file__).parents[1]),
        "rss_after_imports_mb": round(start_rss, 1),
        "peak_rss_mb": round(peak, 1),
        "phase_peak_mb": round(peak - start_rss, 1),
        "seconds": round(seconds, 2),
        "rows": {"facts": result.facts},
        "digest": h.hexdigest(),
    }


def baseline_tree(revision: str, folder: Path) -> Path:
    """The packages of git ``revision`` extracted into ``folder`` (for ``PYTHONPATH``)."""
    packages = ["finkg", "kg", "ingest", "retrieval", "generation"]
    folder.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "archive", revision, *packages], cwd=ROOT, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def child_ingest(archive: Path, home: Path, bolt: int, http: int) -> dict[str, Any]:
    """``finkg ingest sec``'s pipeline on ``archive`` into the private server (in its own process)."""
    from finkg import api
    from finkg.neo4j_server import private_settings
    from kg import Graph

    settings = private_settings(home, PASSWORD, ports=(bolt, http))
    start_rss = rss_mb()
    t = time.perf_counter()
    with Graph(settings.uri, "neo4j", PASSWORD) as g:
        summary = api.ingest_sec([archive], graph=g, settings=settings)
        facts = g.read("MATCH (:Company)-[:FILED]->(:Filing)-[:REPORTS]->(x:Fact) RETURN count(x) AS n")[0]["n"]
    seconds = time.perf_counter() - t
    peak = peak_mb()
    return {
        "archive": archive.name,
        "rss_after_imports_mb": round(start_rss, 1),
        "peak_rss_mb": round(peak, 1),
        "phase_peak_mb": round(peak - start_rss, 1),
        "seconds": round(seconds, 1),
        "kept": summary[0]["kept"],
        "facts_in_graph": facts,
    }


def run_child(*args: str, code: Path | None = None) -> dict[str, Any]:
    """This script's ``--child`` ``args`` in a fresh process (with the packages of ``code`` first on the path);
    its JSON result."""
    env = {**os.environ, "PYTHONPATH": str(code)} if code is not None else None
    out = subprocess.run(
        [sys.executable, __file__, "--child", *args],
        cwd=code or ROOT,
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def ingest_private(archive: Path, heap: str, pagecache: str) -> dict[str, Any]:
    """Start a private server, apply the schema, ingest ``archive`` in a child process; stop and remove the server."""
    from finkg.neo4j_server import LocalNeo4j, free_port, private_settings
    from kg import Graph, schema

    home = Path(tempfile.mkdtemp(prefix="finkg-bench-memory.")) / "neo4j"
    bolt, http = free_port(), free_port()
    settings = private_settings(home, PASSWORD, ports=(bolt, http), heap=heap, pagecache=pagecache)
    server = LocalNeo4j(settings)
    try:
        server.start()
        with Graph(settings.uri, "neo4j", PASSWORD) as g:
            schema.apply_schema(g)
        return run_child("ingest", str(archive), str(home), str(bolt), str(http))
    finally:
        server.stop()
        shutil.rmtree(home.parent, ignore_errors=True)


def compared(
    figures: dict[str, Any], prefix: str, old: dict[str, Any], new: dict[str, Any], same_key: str
) -> tuple[float, bool]:
    """Add one old/new pair of child runs to ``figures`` (keys ``<prefix>old_phase_peak_mb`` ... ``<prefix><same_key>``:
    phase peaks and peak RSS in MB, seconds, the old/new phase-peak ratio, and whether both made the same output);
    return the ratio and that flag."""
    same = old["digest"] == new["digest"] and old["rows"] == new["rows"]
    ratio = old["phase_peak_mb"] / max(new["phase_peak_mb"], 0.1)
    for name, key in (("phase_peak_mb", "phase_peak_mb"), ("peak_rss_mb", "peak_rss_mb"), ("s", "seconds")):
        for side, r in (("old", old), ("new", new)):
            figures[f"{prefix}{side}_{name}"] = r[key]
    figures[f"{prefix}ratio_old_over_new_x"] = round(ratio, 2)
    figures[f"{prefix}{same_key}"] = same
    return ratio, same


def main() -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--quarter", type=Path, default=QUARTER)
    p.add_argument("--times", type=int, default=4, help="the synthetic archive's size, in copies of the quarter")
    p.add_argument("--baseline", default=BASELINE, help="the git revision of the in-memory reader")
    p.add_argument("--ingest", action="store_true", help="also ingest the quarter into a private Neo4j server")
    p.add_argument("--bulk", action="store_true", help="also measure finkg ingest sec --bulk's CSV writing")
    p.add_argument("--bulk-baseline", default=BULK_BASELINE, help="the git revision of the whole-read bulk import")
    p.add_argument("--heap", default="768m")
    p.add_argument("--pagecache", default="256m")
    p.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        kind, *rest = args.child
        if kind == "phase":
            result = child_phase(rest[0], Path(rest[1]), rest[2])
        elif kind == "bulk":
            result = child_bulk(rest[0], Path(rest[1]))
        else:
            result = child_ingest(Path(rest[0]), Path(rest[1]), int(rest[2]), int(rest[3]))
        print(json.dumps(result))
        return 0

    from finkg.eval.results import RESULTS_DIR, write_result

    work = Path(tempfile.mkdtemp(prefix="finkg-bench-memory."))
    try:
        archives = [args.quarter, synthetic(args.quarter, args.times, work / f"{args.quarter.stem}-x{args.times}.zip")]
        rows: list[dict[str, Any]] = []
        figures: dict[str, Any] = {}
        for archive in archives:
            old = run_child("phase", "old", str(archive), args.baseline)
            new = run_child("phase", "new", str(archive), args.baseline)
            tag = "x1" if archive == args.quarter else f"x{args.times}"
            facts = new["rows"]["facts"]
            figures[f"{tag}_facts"] = facts
            ratio, same = compared(figures, f"{tag}_", old, new, "rows_identical")
            for r in (old, new):
                rows.append({k: v for k, v in r.items() if k not in ("rows", "digest")} | {"facts": facts})
            print(
                f"{archive.name}: {facts:,} facts; phase peak old {old['phase_peak_mb']:,.0f} MB ({old['seconds']} s), "
                f"new {new['phase_peak_mb']:,.0f} MB ({new['seconds']} s): ratio {ratio:.1f}x; rows identical: {same}"
            )
        x1, xn = figures["x1_new_phase_peak_mb"], figures[f"x{args.times}_new_phase_peak_mb"]
        figures["new_growth_x"] = round(xn / max(x1, 0.1), 2)
        figures["old_growth_x"] = round(
            figures[f"x{args.times}_old_phase_peak_mb"] / figures["x1_old_phase_peak_mb"], 2
        )
        print(
            f"{args.times}x the facts: old phase peak grows {figures['old_growth_x']}x, new {figures['new_growth_x']}x"
        )
        if args.bulk:
            old_code = baseline_tree(args.bulk_baseline, work / "bulk-baseline")
            for archive in archives:
                tag = "x1" if archive == args.quarter else f"x{args.times}"
                old = run_child("bulk", "bulk-old", str(archive), code=old_code)
                new = run_child("bulk", "bulk-new", str(archive))
                ratio, same = compared(figures, f"bulk_{tag}_", old, new, "csv_identical")
                for r in (old, new):
                    rows.append(
                        {k: v for k, v in r.items() if k not in ("rows", "digest", "code")}
                        | {"facts": r["rows"]["facts"]}
                    )
                print(
                    f"bulk CSV of {archive.name}: phase peak old {old['phase_peak_mb']:,.0f} MB ({old['seconds']} s), "
                    f"new {new['phase_peak_mb']:,.0f} MB ({new['seconds']} s): ratio {ratio:.1f}x; "
                    f"CSV identical: {same}"
                )
            figures["bulk_new_growth_x"] = round(
                figures[f"bulk_x{args.times}_new_phase_peak_mb"] / max(figures["bulk_x1_new_phase_peak_mb"], 0.1), 2
            )
            figures["bulk_old_growth_x"] = round(
                figures[f"bulk_x{args.times}_old_phase_peak_mb"] / max(figures["bulk_x1_old_phase_peak_mb"], 0.1), 2
            )
        ingest = None
        if args.ingest:
            ingest = ingest_private(args.quarter, args.heap, args.pagecache)
            figures |= {
                "ingest_peak_rss_mb": ingest["peak_rss_mb"],
                "ingest_phase_peak_mb": ingest["phase_peak_mb"],
                "ingest_s": ingest["seconds"],
                "ingest_facts_in_graph": ingest["facts_in_graph"],
                "ingest_kept": ingest["kept"],
            }
            print(f"finkg ingest sec {args.quarter.name} into a private server: {ingest}")
        write_result(
            "ingest-memory",
            {
                "quarter": args.quarter.name,
                "times": args.times,
                "baseline": args.baseline,
                "group_facts": GROUP_FACTS,
                "ingest": args.ingest,
                "bulk": args.bulk,
                "bulk_baseline": args.bulk_baseline if args.bulk else None,
            },
            figures,
            tables={"phases": rows, **({"ingest": [ingest]} if ingest else {})},
            directory=RESULTS_DIR,
        )
        identical = all(v for k, v in figures.items() if k.endswith(("_rows_identical", "_csv_identical")))
        return 0 if identical else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
