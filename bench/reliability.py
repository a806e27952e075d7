"""The reliability suite (issue 22): replay every attack and count, per family, attempts, handled and mishandled.

The attacks are the tests marked ``@pytest.mark.reliability(FAMILY)`` (the families and what each attacks:
``RELIABILITY_FAMILIES`` in tests/conftest.py); this script runs exactly those tests, in this process through
``pytest.main``, so the suite and the benchmark share one definition of every attack. Each collected test case
is one attempt (a parametrized case, e.g. one string of the guard corpus or one kill point, is one attempt):
``handled`` when it passes (setup, call and teardown), ``mishandled`` when any phase fails, ``skipped`` when
it cannot run here. Real processes, the real Neo4j of the settings (``finkg neo4j start``) and real files, as
the tests use them; the report-batch kills load SmolLM2 and MiniLM (``finkg models install``; ``--no-models``
leaves them out).

Writes ``bench/results/reliability.json`` (:mod:`finkg.eval.results`): figures ``<family>_attempts``,
``_handled``, ``_mishandled``, ``_skipped``, ``_s`` and the totals, a ``families`` table for the README
(``python bench/tables.py``), and the node ids of any mishandled case in the parameters. Exits 1 when an
attack was mishandled.

    python bench/reliability.py                       # every family (--no-models took 19 min on 2 cores at load 17)
    python bench/reliability.py --family guard --family small
    python bench/reliability.py --no-models           # without the SmolLM2 report-batch kills
    python bench/reliability.py --family guard --family limits --merge   # rerun two, keep the others' rows

Every family's row carries the date and commit it was measured at (``measured``, ``git_sha``). ``--merge``
(with ``--family``) replaces only the rerun families' rows of the existing results file and keeps the others
as they were measured; the file records which rows are new (``rerun_families``) and where the kept rows come
from (``kept_rows_from``); the totals are summed over the merged rows.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
sys.path.insert(0, str(ROOT))

from finkg.eval.results import git_sha, read_result, write_result  # noqa: E402


def attack_modules() -> list[Path]:
    """The test modules that hold reliability-marked tests."""
    return sorted(p for p in TESTS.glob("test_*.py") if "mark.reliability(" in p.read_text(encoding="utf-8"))


class Tally:
    """A pytest plugin: the family of every collected reliability test and the outcome of each phase."""

    def __init__(self, families: set[str] | None) -> None:
        self.families = families
        self.family: dict[str, str] = {}
        self.failed: set[str] = set()
        self.skipped: set[str] = set()
        self.seconds: dict[str, float] = defaultdict(float)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        keep, drop = [], []
        for item in items:
            mark = item.get_closest_marker("reliability")
            if mark is None or (self.families is not None and mark.args[0] not in self.families):
                drop.append(item)
                continue
            self.family[item.nodeid] = mark.args[0]
            keep.append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid] += report.duration
        if report.failed:
            self.failed.add(report.nodeid)
        elif report.skipped:
            self.skipped.add(report.nodeid)

    def rows(self, order: list[str]) -> list[dict[str, Any]]:
        """One row per family: attempts, handled, mishandled, skipped, seconds."""
        rows = []
        for fam in order:
            ids = [i for i, f in self.family.items() if f == fam]
            if not ids:
                continue
            bad = [i for i in ids if i in self.failed]
            skipped = [i for i in ids if i in self.skipped and i not in self.failed]
            rows.append(
                {
                    "family": fam,
                    "attempts": len(ids),
                    "handled": len(ids) - len(bad) - len(skipped),
                    "mishandled": len(bad),
                    "skipped": len(skipped),
                    "seconds": round(sum(self.seconds[i] for i in ids), 1),
                    "mishandled_cases": bad,
                }
            )
        return rows


def merged_rows(rows: list[dict[str, Any]], order: list[str]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``rows`` (the families just rerun, stamped ``measured`` and ``git_sha``) merged into the stored results
    file's rows, in ``order``: a rerun family's row replaces the stored one, every other stored row is kept as
    measured, with the date and commit of the run that measured it (a family no longer defined is dropped).
    Returns the rows and where the kept ones come from (per family, and the stored run's command, models and
    mishandled cases: the stored file does not say which family each case belongs to).

    Raises:
        FileNotFoundError: there is no stored results file to merge into (run without ``--merge`` first).
    """
    stored = read_result("reliability")
    prior = stored["parameters"].get("kept_rows_from") or {}  # a stored file that was itself merged
    new = {r["family"]: r for r in rows}
    old: dict[str, dict[str, Any]] = {}
    for r in stored.get("tables", {}).get("families", []):
        fam = r["family"]
        if "measured" not in r:  # a row written before rows were stamped
            earlier = fam in prior.get("families", [])
            r = {
                **r,
                "measured": prior.get("date") if earlier else stored.get("date"),
                "git_sha": prior.get("git_sha") if earlier else stored.get("git_sha"),
            }
        old[fam] = {**r, "mishandled_cases": []}
    merged = [new.get(f) or old[f] for f in order if f in new or f in old]
    kept = [r["family"] for r in merged if r["family"] not in new]
    source = {
        "families": {f: {"measured": old[f]["measured"], "git_sha": old[f]["git_sha"]} for f in kept},
        "command": stored.get("command"),
        "models": stored["parameters"].get("models"),
        "mishandled_cases": stored["parameters"].get("mishandled_cases", []),  # of that whole run
    }
    return [{k: v for k, v in r.items() if k != "what"} for r in merged], source


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--family", action="append", help="only this family (repeatable); default: every family")
    ap.add_argument("--no-models", action="store_true", help="leave out the attacks that load model weights")
    ap.add_argument("--no-write", action="store_true", help="print the figures, do not write the results file")
    ap.add_argument(
        "--merge",
        action="store_true",
        help="with --family: replace only these families' rows in the existing results file, keep the others",
    )
    a = ap.parse_args(argv)
    if a.merge and not a.family:
        ap.error("--merge needs --family (the families to rerun)")

    tally = Tally(set(a.family) if a.family else None)
    marker = "reliability and not model" if a.no_models else "reliability"
    load = [round(os.getloadavg()[0], 1)]
    t0 = time.perf_counter()
    os.chdir(ROOT)
    code = pytest.main(
        ["-m", marker, "-q", "-p", "no:cacheprovider", "-W", "ignore", *map(str, attack_modules())],
        plugins=[tally],
    )
    seconds = time.perf_counter() - t0
    load.append(round(os.getloadavg()[0], 1))
    from conftest import RELIABILITY_FAMILIES  # pyright: ignore[reportMissingImports]  (tests/, put on sys.path by pytest.main)

    unknown = sorted(set(tally.family.values()) - set(RELIABILITY_FAMILIES))
    if unknown or (a.family and set(a.family) - set(RELIABILITY_FAMILIES)):
        print(f"unknown family: {', '.join(unknown or sorted(set(a.family) - set(RELIABILITY_FAMILIES)))}")
        return 2
    if not tally.family:
        print(f"no reliability test collected (pytest exit {int(code)})")
        return 2
    rows = tally.rows(list(RELIABILITY_FAMILIES))
    stamp = {"measured": datetime.now(UTC).replace(microsecond=0).isoformat(), "git_sha": git_sha()}
    rows = [{**r, **stamp} for r in rows]
    kept_from: dict[str, Any] | None = None
    if a.merge:
        rows, kept_from = merged_rows(rows, list(RELIABILITY_FAMILIES))
    figures: dict[str, Any] = {}
    for r in rows:
        for k in ("attempts", "handled", "mishandled", "skipped"):
            figures[f"{r['family']}_{k}"] = r[k]
        figures[f"{r['family']}_s"] = r["seconds"]
    for k in ("attempts", "handled", "mishandled", "skipped"):
        figures[f"total_{k}"] = sum(r[k] for r in rows)
    figures["wall_s"] = round(seconds, 1)  # of this run (the rerun families only, with --merge)

    print(f"\n{'family':<11} {'attempts':>8} {'handled':>8} {'mishandled':>10} {'skipped':>8} {'seconds':>8}")
    for r in rows:
        print(
            f"{r['family']:<11} {r['attempts']:>8} {r['handled']:>8} {r['mishandled']:>10} {r['skipped']:>8} "
            f"{r['seconds']:>8.1f}"
        )
    print(
        f"{'total':<11} {figures['total_attempts']:>8} {figures['total_handled']:>8} "
        f"{figures['total_mishandled']:>10} {figures['total_skipped']:>8} {seconds:>8.1f}"
    )
    for r in rows:
        for case in r["mishandled_cases"]:
            print(f"MISHANDLED {r['family']}: {case}")

    if not a.no_write:
        table = [
            {**{k: v for k, v in r.items() if k != "mishandled_cases"}, "what": RELIABILITY_FAMILIES[r["family"]]}
            for r in rows
        ]
        merge = {"rerun_families": a.family, "kept_rows_from": kept_from} if a.merge else {}
        path = write_result(
            "reliability",
            {
                "families": [r["family"] for r in rows] if a.merge else a.family or list(RELIABILITY_FAMILIES),
                **merge,
                "models": not a.no_models,
                "pytest_marker": marker,
                "modules": [str(p.relative_to(ROOT)) for p in attack_modules()],
                "mishandled_cases": [c for r in rows for c in r["mishandled_cases"]],
                "load_average_1m": load,  # at the start and the end: the machine may be shared
            },
            figures,
            tables={"families": table},
            command="python bench/reliability.py" + "".join(f" {x}" for x in (argv or sys.argv[1:])),
        )
        print(f"wrote {path}")
    return 1 if figures["total_mishandled"] else 0


if __name__ == "__main__":
    sys.exit(main())
