"""One results format for every benchmark and evaluation: ``bench/results/<name>.json``.

Each file holds one run: ``name``, ``date`` (UTC, ISO 8601), ``git_sha`` (the commit measured, with
``-dirty`` when the tree had changes), ``machine`` (cores, RAM in GiB, CPU model, Python, platform),
``command`` (how it was run), ``parameters`` and ``figures`` (the measured numbers; units in the key
names, e.g. ``p50_ms``, ``rows_per_s``), and optional ``tables`` (named lists of rows that README
tables are generated from, see ``bench/tables.py``). A rerun overwrites the file: the README always
shows the latest measurement, and git history keeps the earlier ones.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parents[2] / "bench" / "results"


def git_sha(root: Path | None = None) -> str:
    """The checked-out commit (``-dirty`` appended when tracked files differ), or ``unknown``."""
    cwd = root or RESULTS_DIR.parent.parent
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "-uno"], cwd=cwd, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return sha.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def machine() -> dict[str, Any]:
    """Cores, memory (GiB), CPU model, Python version and platform of this machine."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = None
    try:
        ram = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    return {
        "cores": os.cpu_count(),
        "ram_gib": ram,
        "cpu": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def write_result(
    name: str,
    parameters: dict[str, Any],
    figures: dict[str, Any],
    *,
    tables: dict[str, list[dict[str, Any]]] | None = None,
    directory: Path | None = None,
    command: str | None = None,
) -> Path:
    """Write ``<directory or bench/results>/<name>.json`` in the one results format; return its path.

    Args:
        name: the benchmark's name (file stem), e.g. ``startup``.
        parameters: what was run (sizes, models, options); JSON-serializable.
        figures: the measured numbers, units in the keys; JSON-serializable.
        tables: optional named row lists for README tables.
        directory: where to write (default ``bench/results``).
        command: the command line that produced it (default: this process's argv).
    """
    out = (directory or RESULTS_DIR) / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "name": name,
        "date": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "git_sha": git_sha(),
        "machine": machine(),
        "command": command or " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "parameters": parameters,
        "figures": figures,
    }
    if tables:
        record["tables"] = tables
    out.write_text(json.dumps(record, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return out


def read_result(name: str, directory: Path | None = None) -> dict[str, Any]:
    """The stored result ``name`` (raises FileNotFoundError naming the path when it was never run)."""
    path = (directory or RESULTS_DIR) / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))
