"""scripts/fsds_from_parquet.py: secfsdstools' parquet of an FSDS quarter written back as the SEC's text ZIP.

Real data on both sides: ``tests/data/sec-fsds/2010q2-alpha-natural-resources-parquet/`` holds the rows of one
filing (accession number 0001140361-10-019699) cut from HansjoergW/sec-fincancial-statement-data-set's
``tests/_testdata/parquet_new/quarter/2010q2.zip/*.txt.parquet``, and
``tests/data/sec-fsds/2010q2-alpha-natural-resources.zip`` the same filing's rows cut, byte for byte, from the same
repository's ``tests/_testdata/zip/2010q2.zip`` (data/NOTICE.md). Pure file work: no graph.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from conftest import repo_script

ROOT = Path(__file__).resolve().parents[1]
PARQUET = ROOT / "tests" / "data" / "sec-fsds" / "2010q2-alpha-natural-resources-parquet"
ZIP = ROOT / "tests" / "data" / "sec-fsds" / "2010q2-alpha-natural-resources.zip"


S = repo_script("scripts", "fsds_from_parquet")


def test_the_parquet_of_a_filing_writes_back_the_sec_text_files_byte_for_byte(tmp_path):
    out = tmp_path / "2010q2-alpha.zip"
    counts = S.convert(PARQUET, out, [ZIP])
    assert counts == {"sub.txt": 1, "num.txt": 206, "pre.txt": 106, "tag.txt": 102}
    with zipfile.ZipFile(ZIP) as want, zipfile.ZipFile(out) as got:
        for member in ("sub.txt", "num.txt", "pre.txt", "tag.txt"):
            assert got.read(member) == want.read(member), member
    # the fields the parquet stores as numbers come back as FSDS writes them
    sub = zipfile.ZipFile(out).read("sub.txt").decode().splitlines()
    row = dict(zip(sub[0].split("\t"), sub[1].split("\t"), strict=True))
    assert (row["sic"], row["ein"], row["fy"], row["period"]) == ("1221", "421638663", "2010", "20100331")


def test_without_tag_quarters_a_filing_gets_no_tag_file_as_in_a_daily_file(tmp_path):
    out = tmp_path / "no-tags.zip"
    counts = S.convert(PARQUET, out, [])
    assert counts["tag.txt"] == 0
    assert sorted(zipfile.ZipFile(out).namelist()) == ["num.txt", "pre.txt", "sub.txt"]


def test_a_missing_parquet_file_is_named(tmp_path):
    for member in ("sub", "num"):
        (tmp_path / f"{member}.txt.parquet").write_bytes((PARQUET / f"{member}.txt.parquet").read_bytes())
    with pytest.raises(SystemExit, match=r"pre\.txt\.parquet: no such file"):
        S.convert(tmp_path, tmp_path / "out.zip", [])
    assert not (tmp_path / "out.zip").exists()
