"""Start-up time of the command line: ``finkg --help``, ``finkg --version``, ``finkg cypher --help``.

Median wall time over N runs of each (a fresh ``python -m finkg`` process each time), against a
baseline measured in the same run on the same machine: a Python process that imports what the
old CLI imported at start-up (torch, scikit-learn, sentence-transformers, the neo4j driver,
pandas, transformers). Writes bench/results/startup.json (finkg.eval.results.write_result).

    python bench/startup.py            # 7 runs each
    python bench/startup.py --runs 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from finkg.eval.results import write_result  # noqa: E402

COMMANDS = {
    "finkg --help": ["-m", "finkg", "--help"],
    "finkg --version": ["-m", "finkg", "--version"],
    "finkg cypher --help": ["-m", "finkg", "cypher", "--help"],
}
OLD_IMPORTS = ("torch", "sklearn", "sentence_transformers", "neo4j", "pandas", "transformers")
BASELINE = ["-c", "import " + ", ".join(OLD_IMPORTS)]


def _wall(args: list[str]) -> float:
    """Seconds one ``python ARGS`` process takes from start to exit (it must exit 0)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, *args], capture_output=True, env=env, cwd=ROOT)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"python {' '.join(args)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="runs per command (median reported)")
    a = ap.parse_args()
    _wall(COMMANDS["finkg --version"])  # warm the file cache and .pyc files
    _wall(BASELINE)
    figures: dict[str, float] = {}
    rows = []
    baseline = statistics.median(_wall(BASELINE) for _ in range(a.runs))
    figures["baseline_old_imports_median_s"] = round(baseline, 3)
    for name, args in COMMANDS.items():
        median = statistics.median(_wall(args) for _ in range(a.runs))
        key = name.removeprefix("finkg ").replace(" ", "_").replace("--", "")
        figures[f"{key}_median_s"] = round(median, 3)
        figures[f"{key}_speedup_vs_baseline"] = round(baseline / median, 2)
        rows.append({"command": name, "median s": round(median, 3), "baseline s": round(baseline, 3)})
        print(f"{name:24s} median {median:6.3f} s   baseline {baseline:6.3f} s   ratio {baseline / median:5.2f}x")
    print(f"{'baseline (old imports)':24s} median {baseline:6.3f} s   ({', '.join(OLD_IMPORTS)})")
    path = write_result(
        "startup",
        {"runs": a.runs, "python": sys.version.split()[0], "baseline_imports": list(OLD_IMPORTS)},
        figures,
        tables={"startup": rows},
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
