"""The dependency direction of ../shared/DESIGN.md, checked by import-linter (pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    out = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Contracts: 1 kept, 0 broken." in out.stdout


def test_all_cypher_lives_in_kg_cypher():
    """No module outside kg/cypher.py builds Cypher statements (a crude but useful check)."""
    offenders = []
    for path in ROOT.glob("*/**/*.py"):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in {"tests", "bench", ".git"} or rel == Path("kg/cypher.py"):
            continue
        text = path.read_text(encoding="utf-8")
        for marker in ("UNWIND $", "MERGE (", "MATCH (", "CREATE CONSTRAINT", "DETACH DELETE"):
            if marker in text:
                offenders.append(f"{rel}: {marker}")
    assert offenders == []
