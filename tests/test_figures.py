"""bench/figures.py: every measured figure in the prose of README.md and the docs pages is in a results file the
page names, or on the allow-list with its reason (pure: no Neo4j, no model)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "figures.py"


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, cwd=ROOT, check=False
    )


def _results(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    results.mkdir()
    record = {
        "name": "demo_bench",
        "command": "demo_bench.py",
        "parameters": {"queries": 200},
        "figures": {"hybrid_p50_ms": 25.64, "wall_s": 2664.8, "exact_rate": 0.998, "speedup_x": 2.34},
        "tables": {"rows": [{"system": "agent", "em": 41.67}]},
        "run_note": "one run, 54 min in all",
    }
    (results / "demo_bench.json").write_text(json.dumps(record), encoding="utf-8")
    return results


def _page(tmp_path: Path, prose: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\nFrom `bench/results/demo_bench.json`:\n\n"
        + prose
        + "\n\n```bash\npython bench/demo.py --timeout 99 s   # code is not prose\n```\n\n"
        "<!-- table:benchmarks -->\n| generated | 77.7 ms |\n<!-- /table:benchmarks -->\n",
        encoding="utf-8",
    )
    return page


def test_committed_readme_and_docs_quote_only_results_files():
    """What CI runs: README.md and docs/**/*.md against bench/results/ and bench/figures-allow.toml."""
    proc = _run("--check")
    assert proc.returncode == 0, proc.stderr
    assert "figures from results files" in proc.stdout


def test_figures_of_the_results_file_pass(tmp_path: Path):
    """Each figure equal, within its printed rounding and in its unit, to a number of the named results file:
    ms as ms, seconds printed as minutes, a share as a percentage, a score, a ratio, a run note's figure."""
    page = _page(
        tmp_path,
        "Hybrid p50 25.6 ms, all of it in 44.4 min (54 min with the notes), 99.8 % exact, EM 41.7, **2.34x** faster.",
    )
    proc = _run("--check", page, "--results-dir", _results(tmp_path), "--allow", tmp_path / "none.toml")
    assert proc.returncode == 0, proc.stderr
    assert "6 figures from results files" in proc.stdout


def test_an_invented_or_contradicting_figure_fails(tmp_path: Path):
    results = _results(tmp_path)
    for prose, figure in (("Hybrid p50 19.8 ms here.", "19.8 ms"), ("It takes 12 min.", "12 min")):
        page = _page(tmp_path, prose)
        proc = _run("--check", page, "--results-dir", results, "--allow", tmp_path / "none.toml")
        assert proc.returncode == 1, proc.stdout
        assert f"page.md:5: {figure!r} is in no results file" in proc.stderr
    # the right number in a unit it is not in does not pass either (25.64 is milliseconds, not seconds)
    proc = _run("--check", _page(tmp_path, "p50 25.6 s."), "--results-dir", results, "--allow", tmp_path / "none")
    assert proc.returncode == 1 and "'25.6 s'" in proc.stderr


def test_a_figure_from_a_results_file_the_page_does_not_name_fails(tmp_path: Path):
    page = tmp_path / "page.md"
    page.write_text("# A page\n\nHybrid p50 25.6 ms.\n", encoding="utf-8")
    proc = _run("--check", page, "--results-dir", _results(tmp_path), "--allow", tmp_path / "none.toml")
    assert proc.returncode == 1
    assert "'25.6 ms' is in bench/results/demo_bench.json, which the page does not name" in proc.stderr


def test_the_allow_list_lets_a_non_measurement_through_and_must_stay_current(tmp_path: Path):
    results = _results(tmp_path)
    page = _page(tmp_path, "The default timeout is 30 s; the target is 90 %.")
    allow = tmp_path / "allow.toml"
    allow.write_text(
        f'[[allow]]\nfile = "{page}"\nfigure = "30 s"\nreason = "the default timeout, a setting"\n\n'
        '[[allow]]\nfile = "*"\nfigure = "90 %"\nreason = "a target"\n',
        encoding="utf-8",
    )
    proc = _run("--check", page, "--results-dir", results, "--allow", allow)
    assert proc.returncode == 0, proc.stderr
    assert "2 allowed" in proc.stdout
    # an entry no figure matches any more fails, so the list stays short
    page.write_text("# A page\n\nThe target is 90 %.\n", encoding="utf-8")
    proc = _run("--check", page, "--results-dir", results, "--allow", allow)
    assert proc.returncode == 1
    assert "allowed '30 s'" in proc.stderr and "matches no figure there" in proc.stderr
    # an entry without its reason is an error
    allow.write_text('[[allow]]\nfile = "*"\nfigure = "90 %"\nreason = ""\n', encoding="utf-8")
    assert _run("--check", page, "--results-dir", results, "--allow", allow).returncode == 2
