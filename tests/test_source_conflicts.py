"""One source per fact, or a recorded conflict (issue 47, item 3): two files of the same filings with other values.

The attack: ``finkg ingest sec a.zip; finkg ingest sec b.zip``, where b holds a's accessions with some values
changed and some rows missing, left every filing a mix of both files (and loading a again flipped them back).
Both archives here are real FSDS ZIPs: the rows of the first three filings of the shipped 2009q3 quarter under
accession numbers of this test (so that no other test's graph data is touched), b with every fifth kept fact's
value times 1,000, one value emptied and every seventh row dropped. The expected conflicts are counted from the
rows themselves, not by the code under test."""

from __future__ import annotations

import functools
import json
import random
import zipfile
from pathlib import Path

import pytest
from test_cli import finkg

from finkg.cli.ingest import OnConflict
from finkg.pipelines import sec
from finkg.pipelines.bulk import bulk_import_sec
from ingest.sec.conflicts import ON_CONFLICT, find_conflicts
from ingest.sec.fsds import FsdsFormatError, read_fsds

QUARTER = Path(__file__).resolve().parents[1] / "data" / "sec-fsds" / "2009q3.zip"
FILINGS = 3

Table = tuple[list[str], list[list[str]]]


@functools.cache
def _quarter_rows() -> dict[str, Table]:
    """sub, num, pre and tag.txt of 2009q3.zip cut to its first :data:`FILINGS` filings."""
    with zipfile.ZipFile(QUARTER) as zf:
        raw = {m: zf.read(m).decode("utf-8").splitlines() for m in ("sub.txt", "num.txt", "pre.txt", "tag.txt")}
    split = {m: (lines[0].split("\t"), [line.split("\t") for line in lines[1:] if line]) for m, lines in raw.items()}
    sub_h, subs = split["sub.txt"]
    out: dict[str, Table] = {"sub.txt": (sub_h, subs[:FILINGS])}
    adshs = {r[0] for r in subs[:FILINGS]}
    for m in ("num.txt", "pre.txt"):
        h, rows = split[m]
        out[m] = (h, [r for r in rows if r[h.index("adsh")] in adshs])
    num_h, nums = out["num.txt"]
    used = {(r[num_h.index("tag")], r[num_h.index("version")]) for r in nums}
    tag_h, tags = split["tag.txt"]
    out["tag.txt"] = (tag_h, [r for r in tags if (r[tag_h.index("tag")], r[tag_h.index("version")]) in used])
    return out


def _accessions() -> dict[str, str]:
    """The real accession numbers mapped to numbers no real filing has, new for each test."""
    base = random.randrange(10**7, 10**8)
    return {r[0]: f"00{base}-47-{i:06d}" for i, r in enumerate(_quarter_rows()["sub.txt"][1])}


def _num(text: str) -> float | None:
    return float(text) if text else None


def _short(key: str) -> str:
    """A fact key's ``adsh:tag:version:ddate:qtrs``."""
    return ":".join(key.split(":")[:5])


def _write(path: Path, tables: dict[str, Table]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, (header, rows) in tables.items():
            zf.writestr(member, "\n".join("\t".join(r) for r in [header, *rows]) + "\n")
    return path


def _archives(tmp_path: Path) -> tuple[Path, Path, dict[str, tuple[float | None, float | None]]]:
    """a.zip and b.zip in ``tmp_path`` and the facts whose values differ: ``{"adsh:tag:version:ddate:qtrs":
    (a's value, b's value)}`` (USD, whole entity, in both files)."""
    rename = _accessions()
    a: dict[str, Table] = {}
    for member, (header, rows) in _quarter_rows().items():
        i = header.index("adsh") if "adsh" in header else None
        a[member] = (header, [[rename[v] if n == i else v for n, v in enumerate(r)] for r in rows])
    h, nums = a["num.txt"]
    col = {c: h.index(c) for c in ("adsh", "tag", "version", "ddate", "qtrs", "uom", "segments", "coreg", "value")}
    b_rows, differ = [], {}
    kept = 0
    for n, row in enumerate(nums):
        row = list(row)
        in_scope = row[col["uom"]] == "USD" and not row[col["segments"]] and not row[col["coreg"]]
        if in_scope and row[col["value"]]:
            kept += 1
            old = row[col["value"]]
            if kept == 3:
                row[col["value"]] = ""  # a nil value in b where a has one
            elif kept % 5 == 0:
                row[col["value"]] = str(float(old) * 1000)
        if n % 7 == 6:
            continue  # missing from b
        if _num(row[col["value"]]) != _num(nums[n][col["value"]]):
            key = ":".join(row[col[c]] for c in ("adsh", "tag", "version", "ddate", "qtrs"))
            differ[key] = (_num(nums[n][col["value"]]), _num(row[col["value"]]))
        b_rows.append(row)
    b = {**a, "num.txt": (h, b_rows)}
    return _write(tmp_path / "a.zip", a), _write(tmp_path / "b.zip", b), differ


def _facts(graph, adshs: list[str]) -> dict[str, tuple[float | None, str | None]]:
    rows = graph.read(
        "MATCH (:Company)-[:FILED]->(:Filing)-[:REPORTS]->(x:Fact) WHERE x.adsh IN $adshs "
        "RETURN x.key AS key, x.value AS value, x.source_file AS source",
        {"adshs": adshs},
    )
    return {r["key"]: (r["value"], r["source"]) for r in rows}


def _records(graph, adshs: list[str]) -> list[dict]:
    return graph.read(
        "MATCH (x:Fact)-[:HAS_CONFLICT]->(c:FactConflict) WHERE x.adsh IN $adshs "
        "RETURN x.key AS key, x.value AS fact_value, c.value AS value, c.source_file AS source, "
        "c.resolution AS resolution, c.against AS against, c.recorded_at IS NOT NULL AS dated ORDER BY key, source",
        {"adshs": adshs},
    )


@pytest.mark.reliability("sources")
def test_two_files_of_one_filing_with_other_values_are_refused_kept_or_replaced_never_mixed(graph, tmp_path):
    a, b, differ = _archives(tmp_path)
    adshs = sorted(f["adsh"] for f in read_fsds(a).filings)
    b_keys = {f["key"] for f in read_fsds(b).facts}
    filings = len({k.split(":")[0] for k in differ})
    assert len(differ) > 30 and filings == FILINGS

    out = finkg("ingest", "sec", str(a))
    assert out.returncode == 0, out.stderr
    first = _facts(graph, adshs)
    assert len(first) > 500 and {s for _, s in first.values()} == {"a.zip"}
    assert finkg("ingest", "sec", str(a)).returncode == 0  # the same file again: nothing changes
    assert _facts(graph, adshs) == first

    # the attack: refused in one line, naming the file, the counts and the other file; nothing written
    out = finkg("ingest", "sec", str(b))
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert (
        f"{b}: {len(differ)} facts of {filings} filings are already in the graph from a.zip with other values "
        "(first: " in out.stderr
    ), out.stderr
    assert "nothing written. Use --on-conflict keep" in out.stderr and "--on-conflict replace" in out.stderr
    assert _facts(graph, adshs) == first and _records(graph, adshs) == []
    run = graph.read("MATCH (r:IngestRun {source: $s}) RETURN r.status AS status", {"s": str(b.resolve())})
    assert run == [{"status": "failed"}]

    # keep: every value stays a's; b's other values are recorded beside their facts, dated (idempotent)
    out = finkg("ingest", "sec", str(b), "--on-conflict", "keep")
    assert out.returncode == 0, out.stderr
    assert _facts(graph, adshs) == {
        k: (v, "b.zip" if k in b_keys and _short(k) not in differ else "a.zip") for k, (v, _) in first.items()
    }
    kept = _records(graph, adshs)
    assert {_short(r["key"]): r["value"] for r in kept} == {k: v[1] for k, v in differ.items()}
    assert len(kept) == len(differ) and all(r["dated"] for r in kept)
    assert {(r["source"], r["resolution"], r["against"]) for r in kept} == {("b.zip", "kept", "a.zip")}
    assert finkg("ingest", "sec", str(b), "--on-conflict", "keep").returncode == 0
    assert _records(graph, adshs) == kept

    # replace: b's values, a's recorded beside them; the facts b lacks keep a's values; nothing deleted
    out = finkg("ingest", "sec", str(b), "--on-conflict", "replace")
    assert out.returncode == 0, out.stderr
    now = _facts(graph, adshs)
    assert now.keys() == first.keys()
    for key, (value, source) in now.items():
        if _short(key) in differ:
            assert (value, source) == (differ[_short(key)][1], "b.zip"), key
        else:
            assert (value, source) == (first[key][0], "b.zip" if key in b_keys else "a.zip"), key
    replaced = _records(graph, adshs)
    assert {_short(r["key"]): r["value"] for r in replaced} == {k: v[0] for k, v in differ.items()}
    assert {(r["source"], r["resolution"], r["against"]) for r in replaced} == {("a.zip", "replaced", "b.zip")}

    # loading a again no longer flips the facts back: refused, naming b
    out = finkg("ingest", "sec", str(a))
    assert out.returncode == 2, out.stderr
    assert f"{a}: {len(differ)} facts of {filings} filings are already in the graph from b.zip" in out.stderr
    assert _facts(graph, adshs) == now


def test_the_conflict_check_reads_in_batches_and_only_filings_in_the_graph(graph, settings, tmp_path):
    """Batches of 7 keys find what one batch finds; a file of filings the graph lacks finds none."""
    a, b, differ = _archives(tmp_path)
    assert find_conflicts(graph, read_fsds(b)) == []
    sec.ingest_sec(graph, settings, [a])
    whole = find_conflicts(graph, read_fsds(b))
    assert len(whole) == len(differ) and find_conflicts(graph, read_fsds(b), batch_size=7) == whole
    assert {c.source for c in whole} == {"a.zip"}
    assert {_short(c.key): (c.value, c.file_value) for c in whole} == differ


def test_the_cli_choices_are_the_ingest_modes():
    assert tuple(m.value for m in OnConflict) == ON_CONFLICT


@pytest.mark.reliability("input")
def test_the_bulk_import_honours_the_ingest_size_caps(settings, tmp_path):
    """``finkg ingest sec --bulk`` reads under ``[ingest] max_member_bytes`` too (it kept the defaults)."""
    a, _, _ = _archives(tmp_path)
    capped = settings.model_copy(deep=True)
    capped.ingest.max_member_bytes = 1000
    with pytest.raises(FsdsFormatError, match=r"above the cap of 1,000 \(raise it with \[ingest\] max_member_bytes\)"):
        bulk_import_sec(capped, [a], database="capped", csv_dir=tmp_path / "csv", csv_only=True)
    capped.ingest.max_member_bytes = 1 << 30
    result = bulk_import_sec(capped, [a], database="capped", csv_dir=tmp_path / "csv", csv_only=True)
    assert result.facts == len(read_fsds(a).facts)


def _json_lists(text: str) -> list[list[dict]]:
    """The JSON lists ``--format json`` printed one after the other."""
    decoder, out, i = json.JSONDecoder(), [], 0
    while (i := text.find("[", i)) >= 0:
        value, i = decoder.raw_decode(text, i)
        out.append(value)
    return out


@pytest.mark.reliability("sources")
def test_facts_history_shows_the_values_other_files_gave_a_fact(graph, tmp_path):
    """After b.zip is loaded with --on-conflict keep, then replace, `finkg facts history` of the company and tag
    with the most conflicting facts lists one record per such fact: the value held and its file, the other file's
    value and name, the resolution, dated; the period rows count them. Expected from the archives' rows."""
    a, b, differ = _archives(tmp_path)
    per_tag: dict[tuple[str, str], list[str]] = {}
    for key in differ:
        adsh, tag = key.split(":")[:2]
        per_tag.setdefault((adsh, tag), []).append(key)
    (adsh, tag), keys = max(per_tag.items(), key=lambda kv: (len(kv[1]), kv[0]))
    assert len(keys) >= 2

    def expected(resolution: str) -> dict[tuple[str, int], tuple]:
        """(period end, months) -> (value held, its file, the other file's value, that file, resolution)."""
        out = {}
        for key in keys:
            ddate, qtrs = key.split(":")[3:5]
            a_value, b_value = differ[key]
            row = (a_value, "a.zip", b_value, "b.zip") if resolution == "kept" else (b_value, "b.zip", a_value, "a.zip")
            if row[0] is not None:  # a fact with no value has no history row
                out[(f"{ddate[:4]}-{ddate[4:6]}-{ddate[6:]}", int(qtrs) * 3)] = (*row, resolution)
        return out

    def history(cik: int) -> tuple[list[dict], dict[tuple[str, int], tuple]]:
        out = finkg("facts", "history", "-c", str(cik), "--concept", tag, "--format", "json")
        assert out.returncode == 0, out.stderr
        periods, *rest = _json_lists(out.stdout)
        mine = [r for r in (rest[0] if rest else []) if r["filing"].endswith(adsh)]
        assert all(r["recorded at"] for r in mine)
        fields = ("value", "from", "other value", "other file", "resolution")
        return periods, {(r["period end"], r["months"]): tuple(r[f] for f in fields) for r in mine}

    assert finkg("ingest", "sec", str(a)).returncode == 0
    [company] = graph.read("MATCH (c:Company)-[:FILED]->(:Filing {adsh: $a}) RETURN c.cik AS cik", {"a": adsh})
    cik = company["cik"]
    _, got = history(cik)
    # none of this filing's facts has a conflict yet (a period row also counts the conflicts of the same company's
    # other filings of that period, e.g. another test's copies of these filings, so only this filing's records)
    assert got == {}

    assert finkg("ingest", "sec", str(b), "--on-conflict", "keep").returncode == 0
    periods, got = history(cik)
    assert got == expected("kept") and len(got) >= 2
    assert sum(p["conflicts"] for p in periods) >= len(got)

    assert finkg("ingest", "sec", str(b), "--on-conflict", "replace").returncode == 0
    periods, got = history(cik)
    assert got == expected("replaced")
    shown = finkg("facts", "history", "-c", str(cik), "--concept", tag)
    assert shown.returncode == 0 and "values other source files gave these facts" in shown.stdout
