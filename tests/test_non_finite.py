"""Numbers that are not numbers (issue 22, section 3): NaN, inf and 1e999 are refused at ingest in FSDS
num.txt, companyfacts JSON and XBRL instances; the row is skipped, counted ``skipped_non_finite`` and the
ingest summary prints the count. Real files from data/, edited copies of them, and the real Neo4j."""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path

import pytest
from test_cli import finkg

from ingest.sec.companyfacts import finite, read_companyfacts
from ingest.sec.fsds import read_fsds
from ingest.sec.xbrl_instance import read_instance

DATA = Path(__file__).resolve().parents[1] / "data"
DAILY = DATA / "sec-fsds" / "20250404.zip"
TSLA = DATA / "sec-xbrl-instances" / "tsla-20240630-10q.xml"
SNOW = DATA / "sec-companyfacts" / "CIK0001640147-snowflake.json"
NON_FINITE = (b"NaN", b"inf", b"1e999", b"-Infinity")


def _reconciles(counts) -> bool:
    return counts["rows"] == counts["kept"] + sum(v for k, v in counts.items() if k.startswith("skipped_"))


def _fsds_with(tmp_path: Path, values: tuple[bytes, ...]) -> tuple[Path, list[str]]:
    """DAILY with the value of its first USD num.txt rows replaced by ``values``; the edited fact keys' prefixes."""
    out = tmp_path / "nonfinite.zip"
    edited: list[str] = []
    with zipfile.ZipFile(DAILY) as src, zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            body = src.read(name)
            if name.endswith("num.txt"):
                lines = body.split(b"\n")
                header = lines[0].rstrip(b"\r").split(b"\t")
                col = {c.decode(): i for i, c in enumerate(header)}
                todo = list(values)
                for n in range(1, len(lines)):
                    f = lines[n].rstrip(b"\r").split(b"\t")
                    if not todo or len(f) != len(header):
                        continue
                    if f[col["uom"]] == b"USD" and not f[col["coreg"]] and not f[col["segments"]] and f[col["value"]]:
                        f[col["value"]] = todo.pop(0)
                        edited.append(":".join(x.decode() for x in (f[col["adsh"]], f[col["tag"]], f[col["version"]])))
                        lines[n] = b"\t".join(f) + (b"\r" if lines[n].endswith(b"\r") else b"")
                body = b"\n".join(lines)
            dst.writestr(name, body)
    return out, edited


@pytest.mark.reliability("non-finite")
def test_fsds_refuses_non_finite_values(tmp_path):
    clean = read_fsds(DAILY).counts
    path, edited = _fsds_with(tmp_path, NON_FINITE)
    d = read_fsds(path)
    assert d.counts["skipped_non_finite"] == len(NON_FINITE) == len(edited)
    assert d.counts["kept"] == clean["kept"] - len(NON_FINITE)
    assert _reconciles(d.counts) and clean["skipped_non_finite"] == 0
    assert all(f["value"] is None or math.isfinite(f["value"]) for f in d.facts)


@pytest.mark.reliability("non-finite")
def test_companyfacts_refuses_non_finite_values(tmp_path):
    doc = json.loads(SNOW.read_text())
    entries = doc["facts"]["us-gaap"]["RevenueFromContractWithCustomerExcludingAssessedTax"]["units"]["USD"]
    text = json.dumps(doc)
    # JSON parsers accept NaN, Infinity and 1e999 (a float overflow) and integers beyond the float range.
    for i, raw in enumerate(("NaN", "Infinity", "-Infinity", "1e999", "1" + "0" * 400)):
        marker = f'"val": {entries[i]["val"]}, "accn": "{entries[i]["accn"]}"'
        assert text.count(marker) >= 1, marker
        text = text.replace(marker, f'"val": {raw}, "accn": "{entries[i]["accn"]}"', 1)
    bad = tmp_path / "nonfinite.json"
    bad.write_text(text)
    clean = read_companyfacts(SNOW).counts
    d = read_companyfacts(bad)
    assert d.counts["skipped_non_finite"] == 5 and clean["skipped_non_finite"] == 0
    assert d.counts["rows"] == clean["rows"] and _reconciles(d.counts)
    assert all(f["value"] is None or math.isfinite(f["value"]) for f in d.facts)


def test_finite_helper():
    assert finite(1) == 1.0 and finite(-2.5) == -2.5
    assert finite(float("inf")) is None and finite(float("nan")) is None and finite(10**400) is None


@pytest.mark.reliability("non-finite")
def test_xbrl_instance_refuses_non_finite_values(tmp_path):
    text = TSLA.read_text(encoding="utf-8")
    old = 'id="f-1114" unitRef="usd">25500000000<'
    assert text.count(old) == 1
    text = text.replace(old, 'id="f-1114" unitRef="usd">INF<')
    old = 'id="f-1115" unitRef="usd">'
    assert text.count(old) == 1, "second fact"
    start = text.index(old) + len(old)
    text = text[:start] + "NaN" + text[text.index("<", start) :]
    bad = tmp_path / "nonfinite.xml"
    bad.write_text(text, encoding="utf-8")
    clean = read_instance(TSLA).counts
    d = read_instance(bad)
    assert d.counts["skipped_non_finite"] == 2 and clean["skipped_non_finite"] == 0
    assert d.counts["rows"] == clean["rows"] and _reconciles(d.counts)
    assert all(f["value"] is None or math.isfinite(f["value"]) for f in d.facts)


@pytest.mark.neo4j
@pytest.mark.reliability("non-finite")
def test_ingest_summary_prints_the_non_finite_count(graph, tmp_path):
    """`finkg ingest sec` on a file with 4 non-finite values: the summary's ``non-finite`` column says 4, the
    run records ``skipped_non_finite`` 4, and no fact of the graph holds a non-finite value."""
    path, _ = _fsds_with(tmp_path, NON_FINITE)
    out = finkg("ingest", "sec", str(path))
    assert out.returncode == 0, out.stderr
    header = next(line for line in out.stdout.splitlines() if "non-finite" in line)
    row = next(line for line in out.stdout.splitlines() if path.name in line)
    cells = [c.strip() for c in row.split("│") if c.strip()]
    names = [c.strip() for c in header.split("┃") if c.strip()]
    assert dict(zip(names, cells))["non-finite"] == "4", out.stdout
    run = graph.read(
        "MATCH (r:IngestRun {kind: 'sec-fsds'}) WHERE r.source ENDS WITH $s RETURN r.counts AS counts",
        {"s": path.name},
    )
    assert json.loads(run[-1]["counts"])["skipped_non_finite"] == 4
    bad = graph.read(
        "MATCH (x:Fact) WHERE x.value IS NOT NULL AND (x.value <> x.value OR abs(x.value) = 1.0 / 0.0) "
        "RETURN count(x) AS n"
    )
    assert bad == [{"n": 0}]
