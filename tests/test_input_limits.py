"""The FSDS reader's input limits (issue 47, items 3 and 4): fields checked against the SEC's own layout at read
(tag, version, value, adsh, dates) and an archive holding one member twice refused, each as one line naming the
file, line and field. Every archive is a real small FSDS ZIP built in tmp_path from rows of the shipped
2009q3 quarter (one filing), with one field altered."""

from __future__ import annotations

import contextlib
import functools
import random
import re
import string
import zipfile
from pathlib import Path

import pytest
from test_cli import finkg

from ingest.sec.fsds import FsdsFormatError, read_fsds

QUARTER = Path(__file__).resolve().parents[1] / "data" / "sec-fsds" / "2009q3.zip"
NUM_ROWS = 40

Table = tuple[list[str], list[list[str]]]


@functools.cache
def _tables() -> dict[str, Table]:
    """The four members of 2009q3.zip cut to its first filing: its sub.txt row, its first :data:`NUM_ROWS`
    num.txt rows, its pre.txt rows and the tag.txt rows of the tags it uses."""
    with zipfile.ZipFile(QUARTER) as zf:
        raw = {m: zf.read(m).decode("utf-8").splitlines() for m in ("sub.txt", "num.txt", "pre.txt", "tag.txt")}
    split = {m: ([*lines[0].split("\t")], [line.split("\t") for line in lines[1:] if line]) for m, lines in raw.items()}
    sub_h, subs = split["sub.txt"]
    adsh = subs[0][sub_h.index("adsh")]
    out: dict[str, Table] = {"sub.txt": (sub_h, subs[:1])}
    for m in ("num.txt", "pre.txt"):
        h, rows = split[m]
        out[m] = (h, [r for r in rows if r[h.index("adsh")] == adsh])
    num_h, nums = out["num.txt"]
    out["num.txt"] = (num_h, nums[:NUM_ROWS])
    used = {(r[num_h.index("tag")], r[num_h.index("version")]) for r in out["num.txt"][1]}
    tag_h, tags = split["tag.txt"]
    out["tag.txt"] = (tag_h, [r for r in tags if (r[tag_h.index("tag")], r[tag_h.index("version")]) in used])
    assert all(out[m][1] for m in out), "2009q3's first filing has rows in every member"
    return out


def _zip(tmp_path: Path, alter: tuple[str, int, str, str] | None = None, name: str = "small.zip") -> Path:
    """The small quarter as a ZIP in ``tmp_path``; ``alter = (member, line, column, value)`` sets one field
    (line 1 is the header, line 2 the first row)."""
    path = tmp_path / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, (header, rows) in _tables().items():
            rows = [list(r) for r in rows]
            if alter is not None and alter[0] == member:
                rows[alter[1] - 2][header.index(alter[2])] = alter[3]
            zf.writestr(member, "\n".join("\t".join(r) for r in [header, *rows]) + "\n")
    return path


def test_the_small_quarter_reads_whole(tmp_path):
    d = read_fsds(_zip(tmp_path))
    assert d.counts["rows"] == NUM_ROWS and d.counts["kept"] > 0 and d.counts["filings"] == 1


MEGABYTE_TAG = "".join(random.Random(47).choices(string.ascii_letters, k=1_048_576))
"""A 1 MB tag that does not compress (so the compression-ratio cap is not what refuses it)."""


@pytest.mark.parametrize(
    ("member", "line", "column", "value", "message"),
    [
        (
            "num.txt",
            3,
            "tag",
            MEGABYTE_TAG,
            r"column 'tag' is 1,048,576 characters, the SEC's layout allows at most 256",
        ),
        ("tag.txt", 2, "tag", "T" * 257, r"column 'tag' is 257 characters, the SEC's layout allows at most 256"),
        ("pre.txt", 4, "tag", "T" * 300, r"column 'tag' is 300 characters"),
        ("num.txt", 5, "version", "us-gaap/2009/extended", r"column 'version' is 21 characters, .* at most 20"),
        ("num.txt", 6, "value", "1" * 41, r"column 'value' is 41 characters, .* at most 40"),
        ("num.txt", 7, "uom", "U" * 21, r"column 'uom' is 21 characters"),
        ("num.txt", 8, "segments", "Axis=Member;" * 100, r"column 'segments' is 1,200 characters, .* at most 1024"),
        ("num.txt", 9, "footnote", "f" * 5000, r"column 'footnote' is 5,000 characters, .* at most 2048"),
        ("sub.txt", 2, "name", "N" * 151, r"column 'name' is 151 characters, .* at most 150"),
        ("num.txt", 3, "ddate", "18991231", r"column 'ddate' is not a date YYYYMMDD between 19000101 and 21001231"),
        ("num.txt", 4, "ddate", "21010101", r"column 'ddate' is not a date YYYYMMDD between 19000101 and 21001231"),
        ("num.txt", 5, "ddate", "200906300", r"column 'ddate' is 9 characters|column 'ddate' is not a date"),
        ("sub.txt", 2, "filed", "00010101", r"column 'filed' is not a date YYYYMMDD between"),
        ("pre.txt", 2, "adsh", "x" * 21, r"column 'adsh' is 21 characters, .* at most 20"),
    ],
)
def test_a_field_beyond_the_sec_layout_is_one_line_naming_file_line_and_field(
    tmp_path, member, line, column, value, message
):
    bad = _zip(tmp_path, (member, line, column, value))
    with pytest.raises(FsdsFormatError) as caught:
        read_fsds(bad)
    text = str(caught.value)
    assert text.startswith(f"{bad}: {member} line {line}: ")
    assert re.search(message, text), text
    assert "\n" not in text and len(text) < 400  # one short line, never the field itself


@pytest.mark.parametrize(
    ("member", "column", "value"),
    [
        ("num.txt", "tag", "T" * 256),
        ("num.txt", "version", "v" * 20),
        ("num.txt", "ddate", "19000101"),
        ("num.txt", "ddate", "21001231"),
        ("num.txt", "value", "-123456789012345678901234.1234"),
    ],
)
def test_a_field_at_the_limit_is_read(tmp_path, member, column, value):
    assert read_fsds(_zip(tmp_path, (member, 3, column, value))).counts["rows"] == NUM_ROWS


def _with_second(tmp_path: Path, member: str, folder: str | None) -> Path:
    """The small quarter plus a second copy of ``member``, in ``folder`` or, when None, under the very same name."""
    path = _zip(tmp_path, name="twice.zip")
    header, rows = _tables()[member]
    body = "\n".join("\t".join(r) for r in [header, *rows]) + "\n"
    warned = pytest.warns(UserWarning, match="Duplicate name") if folder is None else contextlib.nullcontext()
    with zipfile.ZipFile(path, "a") as zf, warned:
        zf.writestr(member if folder is None else f"{folder}/{member}", body)
    return path


@pytest.mark.parametrize("member", ["num.txt", "sub.txt", "tag.txt", "pre.txt"])
def test_a_member_in_two_folders_is_refused_naming_both(tmp_path, member):
    bad = _with_second(tmp_path, member, "2009q3-again")
    with pytest.raises(FsdsFormatError) as caught:
        read_fsds(bad)
    text = str(caught.value)
    assert text.startswith(f"{bad}: the archive holds {member} 2 times ({member}, 2009q3-again/{member})")
    assert "\n" not in text


def test_a_member_twice_under_one_name_is_refused(tmp_path):
    bad = _with_second(tmp_path, "num.txt", None)
    with pytest.raises(FsdsFormatError, match=r"twice\.zip: the archive holds num\.txt 2 times \(num\.txt, num\.txt\)"):
        read_fsds(bad)


def test_other_files_beside_the_members_are_still_read(tmp_path):
    """Only the FSDS members must be unique: two readme files in two folders are no reason to refuse."""
    path = _zip(tmp_path)
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("readme.htm", "<p>one</p>")
        zf.writestr("old/readme.htm", "<p>two</p>")
    assert read_fsds(path).counts["rows"] == NUM_ROWS


def _bomb(tmp_path: Path, megabytes: int = 3) -> Path:
    """The small quarter with its num.txt rows repeated to ``megabytes`` MB: valid rows that compress hundreds of
    times (the issue's bomb was 23 MB holding a 3 GB num.txt)."""
    header, rows = _tables()["num.txt"]
    block = "".join("\t".join(r) + "\n" for r in rows)
    body = "\t".join(header) + "\n" + block * (megabytes * 2**20 // len(block) + 1)
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, (h, r) in _tables().items():
            zf.writestr(member, body if member == "num.txt" else "\n".join("\t".join(x) for x in [h, *r]) + "\n")
    return path


def test_a_member_compressing_beyond_the_ratio_cap_is_refused_before_it_is_read(tmp_path):
    bomb = _bomb(tmp_path)
    info = zipfile.ZipFile(bomb).getinfo("num.txt")
    assert info.file_size / info.compress_size > 100
    with pytest.raises(FsdsFormatError) as caught:
        read_fsds(bomb)
    text = str(caught.value)
    assert re.fullmatch(
        rf"{re.escape(str(bomb))}: num\.txt compresses [\d,]+ times \({info.compress_size:,} to {info.file_size:,} "
        r"bytes\), above the cap of 100 \(raise it with \[ingest\] max_compression_ratio\)",
        text,
    ), text
    d = read_fsds(bomb, max_ratio=info.file_size / info.compress_size)  # raised: read, every row counted
    assert d.counts["rows"] > 1000 * NUM_ROWS // 40


def test_a_member_above_the_size_cap_is_refused_and_the_option_raises_it(tmp_path):
    small = _zip(tmp_path)
    biggest = max(zipfile.ZipFile(small).infolist(), key=lambda i: i.file_size)
    declared = biggest.file_size
    with pytest.raises(FsdsFormatError) as caught:
        read_fsds(small, max_bytes=declared - 1)
    assert str(caught.value) == (
        f"{small}: {biggest.filename} declares {declared:,} bytes uncompressed, above the cap of {declared - 1:,} "
        "(raise it with [ingest] max_member_bytes)"
    )
    assert read_fsds(small, max_bytes=declared).counts["rows"] == NUM_ROWS


def test_a_small_member_may_compress_at_any_ratio(tmp_path):
    """Under 1 MiB a member cannot fill memory: a small num.txt of repeated rows is read."""
    assert read_fsds(_bomb(tmp_path, megabytes=0)).counts["rows"] >= NUM_ROWS


def test_cli_refuses_a_megabyte_tag_in_one_line_and_records_the_run_failed(graph, tmp_path):
    """Issue 47's attack: a 1 MB tag in one otherwise valid row was a 338-line traceback from Neo4j."""
    bad = _zip(tmp_path, ("num.txt", 3, "tag", MEGABYTE_TAG), name="megatag.zip")
    out = finkg("ingest", "sec", str(bad))
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert f"{bad}: num.txt line 3: column 'tag' is 1,048,576 characters" in out.stderr
    run = graph.read(
        "MATCH (r:IngestRun) WHERE r.source = $s RETURN r.status AS status, r.error AS error, "
        "count{(r)-[:LOADED]->()} AS loaded",
        {"s": str(bad.resolve())},
    )
    assert run[0]["status"] == "failed" and "line 3" in run[0]["error"] and run[0]["loaded"] == 0
    assert graph.read("MATCH (f:Fact) WHERE size(f.tag) > 256 RETURN count(f) AS n")[0]["n"] == 0


def test_cli_refuses_a_zip_bomb_in_one_line_and_the_setting_raises_the_cap(graph, tmp_path):
    """The issue's ZIP bomb: refused before a byte of num.txt is read; ``[ingest] max_compression_ratio`` (here
    from the environment) raises the cap, and ``max_member_bytes`` caps the declared size."""
    bomb = _bomb(tmp_path)
    out = finkg("ingest", "sec", str(bomb))
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "num.txt compresses" in out.stderr, out.stderr
    small = _zip(tmp_path)
    out = finkg("ingest", "sec", str(small), env={"FINKG_INGEST__MAX_MEMBER_BYTES": "1000"})
    assert out.returncode == 2 and "above the cap of 1,000 (raise it with [ingest] max_member_bytes)" in out.stderr
    status = graph.read(
        "MATCH (r:IngestRun) WHERE r.source IN $s RETURN r.source AS source, r.status AS status ORDER BY source",
        {"s": [str(bomb.resolve()), str(small.resolve())]},
    )
    assert [r["status"] for r in status] == ["failed", "failed"]
