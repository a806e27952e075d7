"""The dependency direction of ../shared/DESIGN.md and the rooms of docs/ARCHITECTURE.md, checked by
import-linter (the contracts in pyproject.toml)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    out = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"][
        "contracts"
    ]
    assert len(contracts) >= 8  # the layers, kg without ML libraries, the retrieval, generation and ingest rooms
    assert f"Contracts: {len(contracts)} kept, 0 broken." in out.stdout


# A string literal that starts a Cypher statement (not an escaped quote inside help text).
STATEMENT = re.compile(
    r"""(?<![\\\w])[fr]?["']{1,3}\s*(UNWIND \$|MERGE \(|OPTIONAL MATCH|MATCH \(|CREATE CONSTRAINT|"""
    r"""CREATE INDEX|DETACH DELETE|CALL \w+\.)"""
)


def test_all_cypher_lives_in_kg_cypher():
    """No package module outside the kg/cypher/ package holds a Cypher statement (a crude but useful check)."""
    offenders = []
    for package in ("kg", "retrieval", "generation", "ingest", "finkg"):
        for path in (ROOT / package).rglob("*.py"):
            rel = path.relative_to(ROOT)
            if rel.parts[:2] == ("kg", "cypher"):
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if m := STATEMENT.search(line):
                    offenders.append(f"{rel}:{n}: {m.group(1)}")
    assert offenders == []


def test_the_cypher_check_catches_a_statement():
    assert STATEMENT.search('q = "MATCH (n) RETURN n"')
    assert STATEMENT.search("    f'UNWIND $rows AS row'")
    assert not STATEMENT.search('help="a query, e.g. \\"MATCH (c) RETURN c\\""')


def test_cypher_files_live_in_kg():
    """Saved Cypher files (Neo4j Browser's, kg/browser/queries) are Cypher too: only under kg/, no copies in docs."""
    stray = [
        str(p.relative_to(ROOT))
        for p in ROOT.rglob("*.cypher")
        if not p.relative_to(ROOT).parts[0].startswith(".") and p.relative_to(ROOT).parts[0] not in ("kg", "tests")
    ]
    assert stray == []
