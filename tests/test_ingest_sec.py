"""SEC FSDS ingest on the real daily file shipped in data/ (and failures on broken copies of it)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from test_cli import finkg

from ingest.sec import fsds as sec_fsds
from ingest.sec.fsds import FsdsFormatError, period_role, read_fsds
from kg import BatchWriter

DATA = Path(__file__).resolve().parents[1] / "data" / "sec-fsds"
DAILY = DATA / "20250404.zip"


def test_daily_layout_is_read_and_normalized():
    d = read_fsds(DAILY)
    c = d.counts
    assert (c["filings"], c["rows"]) == (12, 2107)
    assert c["kept"] + c["skipped_not_usd"] + c["skipped_dimensional"] == c["rows"]
    assert c["skipped_dimensional"] == 36 and c["skipped_not_usd"] == 187
    assert all(f["uom"] == "USD" for f in d.facts)
    assert len({f["key"] for f in d.facts}) == len(d.facts)  # keys unique
    factset = next(f for f in d.filings if f["adsh"] == "0001013237-25-000051")
    assert (factset["form"], factset["period"], factset["fp"]) == ("10-Q", "20250228", "Q2")
    revenue = {
        (f["ddate"], f["qtrs"]): f
        for f in d.facts
        if f["adsh"] == factset["adsh"] and f["tag"] == "RevenueFromContractWithCustomerExcludingAssessedTax"
    }
    assert revenue[("20250228", 1)]["period_role"] == "current"
    assert revenue[("20250228", 2)]["period_role"] == "current_ytd"
    assert revenue[("20240229", 1)]["period_role"] == "comparative"
    assert revenue[("20250228", 1)]["stmt"] == "IS"
    assert revenue[("20250228", 1)]["citation"] == (
        "0001013237-25-000051:1013237:RevenueFromContractWithCustomerExcludingAssessedTax:20250228:1:USD"
    )


def test_period_role_rules():
    assert period_role("10-K", "20091231", "20091231", 4) == "current"
    assert period_role("10-K", "20091231", "20091231", 0) == "current"
    assert period_role("10-Q", "20090630", "20090630", 2) == "current_ytd"
    assert period_role("10-Q", "20090630", "20081231", 0) == "comparative"


def test_ingest_twice_changes_nothing(graph):
    d = read_fsds(DAILY)
    writer = BatchWriter(graph, batch_size=500, workers=2)
    first = sec_fsds.write_fsds(writer, d)
    second = sec_fsds.write_fsds(writer, d)
    for stage, st in second.items():
        assert (st.created, st.updated, st.missing_endpoints) == (0, 0, 0), stage
        assert st.written == first[stage].written
    got = graph.read(
        "MATCH (c:Company)-[:FILED]->(f:Filing {adsh: $a})-[:REPORTS]->(x:Fact)-[:OF_CONCEPT]->(k:Concept) "
        "WHERE x.tag = $t AND x.period_role = 'current' "
        "RETURN c.name AS company, x.value AS value, k.key AS concept",
        {"a": "0001013237-25-000051", "t": "RevenueFromContractWithCustomerExcludingAssessedTax"},
    )
    assert got == [
        {
            "company": "FACTSET RESEARCH SYSTEMS INC",
            "value": 570_660_000.0,
            "concept": "us-gaap/2024:RevenueFromContractWithCustomerExcludingAssessedTax",
        }
    ]
    n = graph.read("MATCH (:Filing {source: $s})-[:REPORTS]->(x:Fact) RETURN count(x) AS n", {"s": DAILY.name})
    assert n == [{"n": d.counts["kept"]}]


def test_a_streamed_ingest_writes_group_by_group_what_a_whole_one_does(graph):
    whole = read_fsds(DAILY)
    with sec_fsds.open_fsds(DAILY) as spill:  # what `finkg ingest sec` writes from: facts on disk, not in memory
        assert spill.counts == whole.counts and spill.sizes() == whole.sizes()
        assert [f for chunk, _ in spill.fact_batches(97) for f in chunk] == whole.facts
        writer = BatchWriter(graph, batch_size=50, workers=2)
        first = sec_fsds.write_fsds(writer, whole, group=len(whole.facts))  # one group: as it was written before
        grouped = sec_fsds.write_fsds(writer, spill, group=97)
    assert list(grouped) == list(first) == [
        "companies", "filings", "concepts", "facts", "evidence", "reports", "of_concept", "evidence_for", "filed"
    ]  # fmt: skip
    assert grouped["facts"].batches >= len(whole.facts) // 97  # written a group at a time
    for stage, st in grouped.items():
        assert (st.created, st.updated, st.missing_endpoints, st.duplicates) == (0, 0, 0, 0), stage
        assert (st.rows, st.written) == (first[stage].rows, first[stage].written), stage


def _rewrite(tmp_path: Path, member: str, edit) -> Path:
    out = tmp_path / "broken.zip"
    with zipfile.ZipFile(DAILY) as src, zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            body = src.read(name)
            if name == member:
                body = edit(body)
                if body is None:
                    continue
            dst.writestr(name, body)
    return out


def test_missing_member_is_named(tmp_path):
    with pytest.raises(FsdsFormatError, match=r"member num\.txt is missing"):
        read_fsds(_rewrite(tmp_path, "num.txt", lambda b: None))


def test_missing_column_is_named(tmp_path):
    bad = _rewrite(tmp_path, "num.txt", lambda b: b.replace(b"ddate", b"date", 1))
    with pytest.raises(FsdsFormatError, match=r"num.txt line 1: missing column\(s\) \['ddate'\]"):
        read_fsds(bad)


def test_malformed_line_is_named(tmp_path):
    def cut(body: bytes) -> bytes:
        lines = body.split(b"\n")
        lines[4] = lines[4].split(b"\t", 3)[0]
        return b"\n".join(lines)

    with pytest.raises(FsdsFormatError, match=r"broken.zip: num.txt line 5: expected 10 tab-separated fields, got 1"):
        read_fsds(_rewrite(tmp_path, "num.txt", cut))


def test_non_numeric_value_is_named(tmp_path):
    def corrupt(body: bytes) -> bytes:
        lines = body.split(b"\n")
        f = lines[2].split(b"\t")
        f[7] = b"12,5"
        lines[2] = b"\t".join(f)
        return b"\n".join(lines)

    with pytest.raises(FsdsFormatError, match=r"num.txt line 3: column 'value' is not a number: '12,5'"):
        read_fsds(_rewrite(tmp_path, "num.txt", corrupt))


@pytest.mark.reliability("input")
def test_not_a_zip_is_named(tmp_path):
    p = tmp_path / "x.zip"
    p.write_text("hello")
    with pytest.raises(FsdsFormatError, match=r"x\.zip: not a ZIP archive"):
        read_fsds(p)


def test_cli_records_the_run(graph):
    out = finkg("ingest", "sec", str(DAILY))
    assert out.returncode == 0, out.stderr
    run = graph.read(
        "MATCH (r:IngestRun {kind: 'sec-fsds'}) WHERE r.source ENDS WITH $s "
        "OPTIONAL MATCH (r)-[:LOADED]->(f:Filing) RETURN r.status AS status, r.counts AS counts, "
        "count(f) AS filings",
        {"s": DAILY.name},
    )
    assert run[0]["status"] == "done" and run[0]["filings"] == 12
    assert json.loads(run[0]["counts"])["kept"] == 1884


def test_members_inside_a_folder_are_found(tmp_path):
    nested = tmp_path / "nested.zip"
    with zipfile.ZipFile(DAILY) as src, zipfile.ZipFile(nested, "w") as dst:
        for name in src.namelist():
            dst.writestr(f"20250404/{name}", src.read(name))
    assert read_fsds(nested).counts == read_fsds(DAILY).counts


def test_non_numeric_sic_is_named(tmp_path):
    def corrupt(body: bytes) -> bytes:
        lines = body.split(b"\n")
        header = lines[0].split(b"\t")
        f = lines[1].split(b"\t")
        f[header.index(b"sic")] = b"n/a"
        lines[1] = b"\t".join(f)
        return b"\n".join(lines)

    with pytest.raises(FsdsFormatError, match=r"sub.txt line 2: column 'sic' is not a number: 'n/a'"):
        read_fsds(_rewrite(tmp_path, "sub.txt", corrupt))


def _edit_line(member_line: int, column: str, value: bytes):
    def edit(body: bytes) -> bytes:
        lines = body.split(b"\n")
        header = lines[0].rstrip(b"\r").split(b"\t")
        f = lines[member_line - 1].split(b"\t")
        f[header.index(column.encode())] = value
        lines[member_line - 1] = b"\t".join(f)
        return b"\n".join(lines)

    return edit


def test_bad_date_is_named(tmp_path):
    bad = _rewrite(tmp_path, "num.txt", _edit_line(4, "ddate", b"20251340"))
    with pytest.raises(FsdsFormatError, match=r"num.txt line 4: column 'ddate' is not a date YYYYMMDD: '20251340'"):
        read_fsds(bad)


@pytest.mark.reliability("input")
def test_wrong_encoding_is_named(tmp_path):
    with zipfile.ZipFile(DAILY) as zf:
        sub = zf.read("sub.txt")
    line = sub[: sub.index(b"FACTSET")].count(b"\n") + 1
    bad = _rewrite(tmp_path, "sub.txt", lambda b: b.replace(b"FACTSET", "FACTSÉT".encode("latin-1"), 1))
    with pytest.raises(FsdsFormatError, match=rf"sub.txt line {line}: not UTF-8 \(byte 0xc9 at column \d+\)"):
        read_fsds(bad)


@pytest.mark.reliability("input")
def test_wrong_encoding_deep_in_a_member_names_its_exact_line(tmp_path):
    """The line of a bad byte is exact, however far into the member (text is decoded line by line)."""
    bad = _rewrite(tmp_path, "num.txt", _edit_line(1500, "footnote", "café".encode("latin-1")))
    with pytest.raises(FsdsFormatError, match=r"num.txt line 1500: not UTF-8 \(byte 0xe9 at column \d+\)"):
        read_fsds(bad)


@pytest.mark.reliability("input")
def test_truncated_zip_is_named(tmp_path):
    cut = tmp_path / "truncated.zip"
    cut.write_bytes(DAILY.read_bytes()[: DAILY.stat().st_size // 2])
    with pytest.raises(FsdsFormatError, match=r"truncated\.zip: not a ZIP archive"):
        read_fsds(cut)


def test_failed_ingest_is_recorded_then_a_fixed_rerun_completes(graph, tmp_path):
    bad = _rewrite(tmp_path, "num.txt", _edit_line(3, "value", b"n/a"))
    out = finkg("ingest", "sec", str(bad))
    assert out.returncode == 2 and "broken.zip: num.txt line 3: column 'value'" in out.stderr
    assert "Traceback" not in out.stderr
    run = graph.read(
        "MATCH (r:IngestRun) WHERE r.source = $s RETURN r.status AS status, r.error AS error, "
        "count{(r)-[:LOADED]->()} AS loaded",
        {"s": str(bad.resolve())},
    )
    assert run[0]["status"] == "failed" and "line 3" in run[0]["error"] and run[0]["loaded"] == 0
    assert finkg("ingest", "sec", str(DAILY)).returncode == 0  # the rerun with the good file completes
    runs = graph.read(
        "MATCH (r:IngestRun) WHERE r.source IN $s RETURN r.status AS status ORDER BY status",
        {"s": [str(bad.resolve()), str(DAILY.resolve())]},
    )
    assert [r["status"] for r in runs] == ["done", "failed"]  # the failed attempt stays on record
