"""bench/tables.py: the tables of README.md and the docs pages, generated from bench/results/*.json (pure: no Neo4j,
no model)."""

from __future__ import annotations

import json
import re
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


def test_committed_readme_and_docs_are_up_to_date():
    """The generated tables of README.md and docs/**/*.md match the committed results files
    (`python bench/tables.py --check`), and every table has its place in one of them."""
    proc = _run("--check")
    assert proc.returncode == 0, proc.stderr
    assert "tables up to date in" in proc.stdout
    tables = bench_script("tables")
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    texts = {path: path.read_text(encoding="utf-8") for path in pages}
    placed = {m["name"] for text in texts.values() for m in tables.BLOCK.finditer(text)}
    assert set(tables.TABLES) <= placed, sorted(set(tables.TABLES) - placed)
    assert "<!-- table:headline -->" in texts[ROOT / "README.md"]  # the README's headline figures
    for path, text in texts.items():  # a page with generated tables names their results files once
        names = {m["name"] for m in tables.BLOCK.finditer(text)} - {"headline"}
        if names and path != ROOT / "README.md":
            assert "<!-- table:sources -->" in text, path


def test_no_link_to_files_a_user_does_not_have():
    """README.md and the docs never point into ../shared/ (the machine the project was built on)."""
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        assert "../shared" not in text and "/work/shared" not in text, path


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


def test_typed_in_results_are_refused_and_measured_ones_bold_the_best(tmp_path: Path):
    """A results file whose figures were typed in (``provenance``) is refused: every table figure comes from a
    command's own file; a measured file renders with its best value bold."""
    tables = bench_script("tables")
    results = tmp_path / "results"
    results.mkdir()
    record = {
        "name": "eval-reports-reader-qwen",
        "date": "2026-11-26T09:41:56+00:00",
        "git_sha": "8f861d16f773e06ce0939a78fd058fb71ad1aebe",
        "machine": {"cores": 2, "ram_gib": 23.5},
        "command": "finkg eval reports --batch data/questions/main.jsonl",
        "parameters": {},
        "figures": {},
        "tables": {
            "systems": [
                {"system": "tfr", "rouge_l_f1": 0.25, "numbers verified": 3, "numbers unverified": 0},
                {"system": "none", "rouge_l_f1": 0.5, "numbers verified": 1, "numbers unverified": 2},
            ]
        },
    }
    path = results / "eval-reports-reader-qwen.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    body = tables.render("eval-reports-reader-qwen", results)
    assert "| none | **0.500** |" in body and "| tfr | 0.250 |" in body
    assert "_From `bench/results/eval-reports-reader-qwen.json`, measured 2026-11-26._" in body
    sources = tables.render_sources(["eval-reports-reader-qwen"], results)
    assert "| `bench/results/eval-reports-reader-qwen.json` | measured | 2026-11-26 | `8f861d1` |" in sources

    path.write_text(json.dumps({**record, "provenance": "imported from README at commit 52dc52c"}), encoding="utf-8")
    typed_in = (
        r"eval-reports-reader-qwen\.json: figures typed in, not written by its command .*rerun the command or retire"
    )
    with pytest.raises(tables.TablesError, match=typed_in):
        tables.render("eval-reports-reader-qwen", results)
    with pytest.raises(tables.TablesError, match=typed_in):
        tables.render_sources(["eval-reports-reader-qwen"], results)

    cell = tables.num(0.317, ".3f")
    assert (cell.text, cell.value) == ("0.317", 0.317)


def test_errors_name_the_file(tmp_path: Path):
    tables = bench_script("tables")
    with pytest.raises(tables.TablesError, match=r"eval-tatqa-test-engine\.json: no such results file"):
        tables.render("eval-tatqa-test-engine", tmp_path)
    with pytest.raises(tables.TablesError, match=r"R.md:3: <!-- table:benchmarks --> has no"):
        tables.update("a\nb\n<!-- table:benchmarks -->\nx\n", tmp_path, "R.md")
    readme = tmp_path / "README.md"
    readme.write_text("<!-- table:nope -->\n<!-- /table:nope -->\n", encoding="utf-8")
    proc = _run("--readme", str(readme), "--results-dir", str(tmp_path))
    assert proc.returncode == 2 and "unknown table 'nope'" in proc.stderr


def test_an_evaluation_summary_feeds_its_readme_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """TatqaResults.save writes eval-tatqa.json in the one format; the docs' TAT-QA tables (EM and F1 with their
    intervals per system) render from it."""
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
    tables = bench_script("tables")
    monkeypatch.setitem(tables.TABLES, "eval-tatqa", tables.tatqa_ci_table("eval-tatqa"))
    body = tables.render("eval-tatqa", tmp_path / "results")
    assert "| single-stage | 50.0 [" in body and "| no retrieval | 0.0 [0.0, 0.0] |" in body
    assert "arithmetic EM (1)" in body and "_From `bench/results/eval-tatqa.json`, measured " in body


def _startup_result(results: Path, command: str = "startup.py") -> None:
    """A small startup.json (its table `startup` has one row) in the one results format."""
    rows = [{"command": "finkg --help", "median s": 0.5, "baseline s": 9.0}]
    write_result("startup", {}, {}, tables={"startup": rows}, directory=results, command=command)


def test_one_sources_table_per_page(tmp_path: Path):
    """A page's `sources` table lists each results file its other tables read once (a footer per table names only
    its file), with the command's machine paths shown as the docs' names for the public data sets."""
    tables = bench_script("tables")
    results = tmp_path / "results"
    _startup_result(results, "startup.py ../shared/data/tatqa/tatqa_dataset_dev.json --out /tmp/x")
    with pytest.raises(tables.TablesError, match="no results files for the sources table"):
        tables.update("# page\n\n<!-- table:sources -->\n<!-- /table:sources -->\n", results, "page.md")
    text = "<!-- table:startup -->\n<!-- /table:startup -->\n" * 2
    text += "<!-- table:sources -->\nstale\n<!-- /table:sources -->\n"
    new, changed = tables.update(text, results, "page.md")
    assert changed == ["startup", "startup", "sources"]
    assert new.count("_From `bench/results/startup.json`, measured ") == 2  # one line per table, no machine
    assert new.count("| `bench/results/startup.json` | measured |") == 1  # the page's one provenance row
    assert "`startup.py $TATQA_DEV --out /tmp/x`" in new and "../shared" not in new
    assert tables.public_command("x /work/shared/data/market/prices y") == "x $MARKET/prices y"
    assert tables.public_command("--zip /work/shared/data/sec-fsds/2009q3.zip") == "--zip data/sec-fsds/2009q3.zip"


def test_check_covers_every_file_it_is_given(tmp_path: Path):
    """`--check` with two files fails naming the stale one and its table; the run rewrites only what differs."""
    results = tmp_path / "results"
    _startup_result(results)
    fresh, stale = tmp_path / "fresh.md", tmp_path / "stale.md"
    for path in (fresh, stale):
        path.write_text("<!-- table:startup -->\n<!-- /table:startup -->\n", encoding="utf-8")
    assert _run("--readme", str(fresh), "--results-dir", str(results)).returncode == 0
    args = ("--readme", str(fresh), "--readme", str(stale), "--results-dir", str(results))
    proc = _run("--check", *args)
    assert proc.returncode == 1 and f"{stale}: startup" in proc.stderr and str(fresh) + ":" not in proc.stderr
    assert _run(*args).returncode == 0
    proc = _run("--check", *args)
    assert proc.returncode == 0 and "2 tables up to date in 2 files" in proc.stdout
    assert "| `finkg --help` | 0.50 | 9.0 |" in stale.read_text(encoding="utf-8")


def test_readme_gives_the_two_commands_ci_runs():
    """The README's first code block is the two commands; .ci/run runs the second one exactly."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("```bash\n", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in block.splitlines()] == ["bash scripts/demo", "bash scripts/test"]
    assert "\nbash scripts/test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_docs_site_pages_and_links_exist():
    """Without mkdocs installed: every page mkdocs.yml names exists, every page of docs/ is in the nav or
    excluded, and every relative link of README.md and the docs' pages points to a file that exists."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = re.findall(r"^\s+- (?:[^:\n]+: )?([\w./-]+\.md)$", config, re.M)
    excluded = set(re.findall(r"^  ([\w./-]+)$", config.split("exclude_docs: |", 1)[1], re.M))
    docs = ROOT / "docs"
    pages = {str(p.relative_to(docs)) for p in docs.rglob("*.md")}
    assert nav and set(nav) <= pages, sorted(set(nav) - pages)
    assert pages - excluded == set(nav), sorted(pages - excluded - set(nav))
    for page in [ROOT / "README.md", *(docs / p for p in sorted(pages - excluded))]:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)}: {target}"
