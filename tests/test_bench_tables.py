"""bench/tables.py: README tables generated from bench/results/*.json (pure: no Neo4j, no model)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import bench_script

from finkg.eval.results import read_result, write_result

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "tables.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT)


def test_committed_readme_is_up_to_date():
    """The README's generated tables match the committed results files (`python bench/tables.py --check`)."""
    proc = _run("--check")
    assert proc.returncode == 0, proc.stderr
    tables = bench_script("tables").TABLES  # every table has its place in the README
    assert f"{len(tables)} tables up to date" in proc.stdout


def test_every_results_file_is_in_the_one_format():
    for path in sorted((ROOT / "bench" / "results").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        assert record["name"] == path.stem
        for key in ("date", "git_sha", "machine", "command", "parameters", "figures"):
            assert key in record, f"{path}: no {key}"
        if record["machine"].get("cores") is None:  # not measured here: must say where it comes from
            assert "imported from README" in record["provenance"], path


def _readme(tmp_path: Path) -> Path:
    readme = tmp_path / "README.md"
    readme.write_text(
        "# title\n\nprose before\n\n<!-- table:benchmarks -->\nhand-typed, stale\n<!-- /table:benchmarks -->\n\n"
        "prose after\n",
        encoding="utf-8",
    )
    return readme


def test_generator_on_a_small_results_file(tmp_path: Path):
    results = tmp_path / "results"
    write_result(
        "market_labels",
        {"naive_sample": 10},
        {
            "tickers": 2,
            "vectorized_rows": 1234,
            "vectorized_s": 0.5,
            "naive_us_per_item": 150.0,
            "naive_extrapolated_s": 12.5,
            "speedup_x": 25.0,
            "label_mismatches": 0,
        },
        directory=results,
        command="market_labels.py --naive-sample 10",
    )
    record = read_result("market_labels", results)
    readme = _readme(tmp_path)
    args = ("--readme", str(readme), "--results-dir", str(results))

    assert _run("--check", *args).returncode == 1  # stale before the first run
    proc = _run(*args)
    assert proc.returncode == 0, proc.stderr
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("# title\n\nprose before\n\n<!-- table:benchmarks -->\n| benchmark |")
    assert text.endswith("<!-- /table:benchmarks -->\n\nprose after\n")
    assert "hand-typed" not in text
    assert "1,234 residual labels (2 tickers x 3 horizons) in 0.50 s" in text
    assert "| 25x |" in text
    assert record["date"][:10] in text and record["git_sha"][:7] in text
    assert f"{record['machine']['cores']} cores" in text

    assert _run(*args).returncode == 0
    assert readme.read_text(encoding="utf-8") == text  # idempotent
    assert _run("--check", *args).returncode == 0

    readme.write_text(text.replace("| 25x |", "| 26x |"), encoding="utf-8")  # a hand edit
    proc = _run("--check", *args)
    assert proc.returncode == 1 and "benchmarks" in proc.stderr


def test_imported_results_say_so_and_bold_the_best(tmp_path: Path):
    tables = bench_script("tables")
    results = tmp_path / "results"
    results.mkdir()
    (results / "eval-rerank.json").write_text(
        json.dumps(
            {
                "name": "eval-rerank",
                "date": "2026-11-23T03:39:36+00:00",
                "git_sha": "8f861d16f773e06ce0939a78fd058fb71ad1aebe",
                "machine": {"cores": None, "note": "README: shared machine"},
                "command": "finkg eval retrieval dev.json --rerank",
                "provenance": "imported from README at commit 52dc52c",
                "parameters": {},
                "figures": {},
                "tables": {
                    "runs": [
                        {"reranker": "a", "questions": 2, "hybrid_ndcg@10": 0.5, "rerank_ndcg@10": 0.25},
                        {"reranker": "b", "questions": 2, "hybrid_ndcg@10": 0.5, "rerank_ndcg@10": 0.75},
                    ]
                },
            }
        ),
        encoding="utf-8",
    )
    body = tables.render("eval-rerank", results)
    assert "| b | 2 | 0.500 | 0.750 |" in body
    assert "_Imported, measured by 2026-11-23" in body and "`8f861d1`" in body

    cell = tables.num(0.317, ".3f")
    assert (cell.text, cell.value) == ("0.317", 0.317)
    assert tables.mean_sd({"m": 0.3031, "sd_m": 0.0042}, "m").text == "0.303 ± 0.004"


def test_errors_name_the_file(tmp_path: Path):
    tables = bench_script("tables")
    with pytest.raises(tables.TablesError, match=r"eval-tatqa\.json: no such results file"):
        tables.render("eval-tatqa", tmp_path)
    with pytest.raises(tables.TablesError, match=r"R.md:3: <!-- table:benchmarks --> has no"):
        tables.update("a\nb\n<!-- table:benchmarks -->\nx\n", tmp_path, "R.md")
    readme = tmp_path / "README.md"
    readme.write_text("<!-- table:nope -->\n<!-- /table:nope -->\n", encoding="utf-8")
    proc = _run("--readme", str(readme), "--results-dir", str(tmp_path))
    assert proc.returncode == 2 and "unknown table 'nope'" in proc.stderr


def test_an_evaluation_summary_feeds_its_readme_table(tmp_path: Path):
    """TatqaResults.save writes eval-tatqa.json in the one format; the README's TAT-QA table renders from it."""
    from finkg.eval.tatqa import QuestionResult, TatqaResults

    def answer(system: str, uid: str, kind: str, em: float, f1: float) -> QuestionResult:
        return QuestionResult(system, 0, uid, "q", kind, ["1"], "", "Answer: 1", ["1"], "", True, em, f1)

    results = TatqaResults(["single-stage", "no-retrieval"])
    results.results += [
        answer("single-stage", "a", "span", 1.0, 1.0),
        answer("single-stage", "b", "arithmetic", 0.0, 0.5),
        answer("no-retrieval", "a", "span", 0.0, 0.0),
        answer("no-retrieval", "b", "arithmetic", 0.0, 0.0),
    ]
    results.save(tmp_path / "out", results_dir=tmp_path / "results")
    record = read_result("eval-tatqa", tmp_path / "results")
    assert record["parameters"]["questions"] == 2 and record["figures"]["single-stage_em_pct"] == 50.0
    body = bench_script("tables").render("eval-tatqa", tmp_path / "results")
    assert "| single-stage | **50.00** | **75.00** | 100.00 | n/a | 0.00 |" in body
    assert "span F1 (1)" in body and "_Measured " in body
