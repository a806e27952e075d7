"""Property-based tests (issue 22): generated rows fed to every parser of outside input (FSDS archives,
companyfacts JSON, XBRL instances, report batch files) end in the parser's named error or a clean result
(rows reconcile, every value finite), never in another exception (a traceback for the user)."""

from __future__ import annotations

import io
import json
import math
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from finkg.pipelines.reports import BatchFileError, load_questions
from ingest.sec.companyfacts import CompanyFactsFormatError, read_companyfacts
from ingest.sec.fsds import FsdsData, FsdsFormatError, read_fsds
from ingest.sec.xbrl_instance import XbrlInstanceFormatError, read_instance

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text that breaks parsers: control characters, tabs and newlines, surrogate-free unicode, long runs.
nasty = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
numberish = st.sampled_from(
    ["0", "-1", "12.5", "1e3", "NaN", "nan", "inf", "-Infinity", "1e999", "-1e999", "1_000", "", " ", "12,5", "0x10"]
)
digits = st.integers(min_value=-(10**25), max_value=10**25).map(str)
field_value = st.one_of(numberish, digits, nasty)


def _clean(data: FsdsData, unique_keys: bool = True) -> None:
    """What a successful parse promises: rows reconcile, no non-finite value, keys unique (FSDS: num.txt's
    own primary key makes them unique, and the writer's MERGE would fold a repeated one)."""
    c = data.counts
    assert c["rows"] == c["kept"] + sum(v for k, v in c.items() if k.startswith("skipped_")), dict(c)
    assert all(f["value"] is None or math.isfinite(f["value"]) for f in data.facts)
    assert not unique_keys or len({f["key"] for f in data.facts}) == len(data.facts)


def _write(suffix: str, body: bytes) -> Path:
    with tempfile.NamedTemporaryFile(suffix=suffix, delete=False) as fh:
        fh.write(body)
    return Path(fh.name)


# --- FSDS -------------------------------------------------------------------------------------------------

SUB = ("adsh", "cik", "name", "sic", "form", "period", "fy", "fp", "filed", "accepted")
NUM = ("adsh", "tag", "version", "ddate", "qtrs", "uom", "segments", "coreg", "value", "footnote")
ADSH = "0000000001-25-000001"


@st.composite
def fsds_archive(draw) -> bytes:
    """A ZIP with sub.txt and num.txt whose cells are mostly plausible and sometimes anything at all."""

    def cell(plausible):
        return draw(st.one_of(plausible, field_value)) if draw(st.integers(0, 4)) == 0 else draw(plausible)

    subs = [
        [
            ADSH,
            cell(st.just("1")),
            cell(st.just("ACME")),
            cell(st.just("1000")),
            cell(st.sampled_from(["10-K", "10-Q"])),
            cell(st.just("20241231")),
            cell(st.just("2024")),
            "FY",
            cell(st.just("20250201")),
            "",
        ]
    ]
    nums = [
        [
            cell(st.just(ADSH)),
            cell(st.sampled_from(["Revenues", "Assets"])),
            "us-gaap/2024",
            cell(st.sampled_from(["20241231", "20231231"])),
            cell(st.sampled_from(["0", "4"])),
            cell(st.sampled_from(["USD", "shares"])),
            cell(st.just("")),
            cell(st.just("")),
            cell(st.one_of(numberish, digits)),
            cell(st.just("")),
        ]
        for _ in range(draw(st.integers(0, 6)))
    ]
    eol = draw(st.sampled_from(["\n", "\r\n"]))

    def table(header, rows) -> bytes:
        text = eol.join("\t".join(r) for r in [list(header), *rows]) + eol
        return text.encode("utf-8") if draw(st.booleans()) else text.encode("utf-8", "surrogatepass")

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("sub.txt", table(SUB, subs))
        zf.writestr("num.txt", table(NUM, nums) + draw(st.sampled_from([b"", b"\xff\xfe\n", b"\t\t\n"])))
    return buf.getvalue()


@SETTINGS
@given(fsds_archive())
@pytest.mark.reliability("input")
def test_fsds_rows_are_read_or_named(archive):
    path = _write(".zip", archive)
    try:
        _clean(read_fsds(path), unique_keys=False)
    except FsdsFormatError:
        pass
    finally:
        path.unlink()


@SETTINGS
@given(st.binary(max_size=400))
@pytest.mark.reliability("input")
def test_fsds_any_bytes_are_read_or_named(body):
    path = _write(".zip", body)
    try:
        _clean(read_fsds(path), unique_keys=False)
    except FsdsFormatError:
        pass
    finally:
        path.unlink()


# --- companyfacts ------------------------------------------------------------------------------------------

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    nasty,
)
json_any = st.recursive(
    json_leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(nasty, inner, max_size=3), max_leaves=8
)


@st.composite
def companyfacts_doc(draw) -> bytes:
    def val(plausible):
        return draw(json_any) if draw(st.integers(0, 5)) == 0 else draw(plausible)

    entries = [
        {
            k: v
            for k, v in {
                "start": val(st.sampled_from(["2024-01-01", "2024-10-01", None])),
                "end": val(st.sampled_from(["2024-12-31", "2024-02-30", "2023-12-31"])),
                "val": val(st.one_of(st.integers(-(10**400), 10**400), st.floats(allow_nan=True, allow_infinity=True))),
                "accn": val(st.sampled_from([ADSH, "0000000001-25-000002", "bad"])),
                "fy": val(st.sampled_from([2024, 99999])),
                "fp": "FY",
                "form": val(st.sampled_from(["10-K", "10-Q"])),
                "filed": val(st.just("2025-02-01")),
            }.items()
            if draw(st.integers(0, 12))  # now and then a field is missing
        }
        for _ in range(draw(st.integers(0, 5)))
    ]

    def key(plausible):  # JSON keys are strings
        return draw(nasty) if draw(st.integers(0, 5)) == 0 else draw(plausible)

    units = {key(st.sampled_from(["USD", "shares"])): entries}
    doc = {
        "cik": val(st.sampled_from([1, "0000000001", "1" * 30, -5])),
        "entityName": val(st.just("ACME")),
        "facts": {key(st.sampled_from(["us-gaap", "dei"])): {"Revenues": {"label": "Revenues", "units": units}}},
    }
    text = json.dumps(doc, allow_nan=True)
    cut = draw(st.integers(0, 20))
    return text.encode()[: len(text) - cut] if cut > 17 else text.encode()


@SETTINGS
@given(companyfacts_doc())
@pytest.mark.reliability("input")
def test_companyfacts_rows_are_read_or_named(body):
    path = _write(".json", body)
    try:
        _clean(read_companyfacts(path))
    except CompanyFactsFormatError:
        pass
    finally:
        path.unlink()


@SETTINGS
@given(st.one_of(st.binary(max_size=300), json_any.map(lambda v: json.dumps(v, allow_nan=True).encode())))
@pytest.mark.reliability("input")
def test_companyfacts_any_document_is_read_or_named(body):
    path = _write(".json", body)
    try:
        _clean(read_companyfacts(path))
    except CompanyFactsFormatError:
        pass
    finally:
        path.unlink()


# --- XBRL instances ----------------------------------------------------------------------------------------

xml_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20).map(
    lambda s: s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
)


@st.composite
def xbrl_instance(draw) -> bytes:
    def val(plausible):
        return draw(xml_text) if draw(st.integers(0, 5)) == 0 else draw(plausible)

    def fact() -> str:
        name = val(st.sampled_from(["Revenues", "Assets"]))
        close = name if draw(st.integers(0, 9)) else val(st.just("Other"))  # now and then mismatched
        return (
            f'<us-gaap:{name} contextRef="{val(st.sampled_from(["c1", "c2"]))}" '
            f'unitRef="{val(st.sampled_from(["usd", "shares"]))}" decimals="{val(st.sampled_from(["-6", "INF", "2"]))}">'
            f"{val(st.one_of(numberish, digits))}</us-gaap:{close}>"
        )

    facts = "".join(fact() for _ in range(draw(st.integers(0, 5))))
    body = f"""<?xml version="1.0" encoding="utf-8"?>
<xbrli:xbrl xmlns:xbrli="http://www.xbrl.org/2003/instance" xmlns:iso4217="http://www.xbrl.org/2003/iso4217"
  xmlns:us-gaap="http://fasb.org/us-gaap/2024" xmlns:dei="http://xbrl.sec.gov/dei/2024">
<xbrli:context id="c1"><xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">{val(st.sampled_from(["0000000001", "9" * 30]))}</xbrli:identifier></xbrli:entity>
<xbrli:period><xbrli:instant>{val(st.sampled_from(["2024-12-31", "2024-13-01"]))}</xbrli:instant></xbrli:period></xbrli:context>
<xbrli:context id="c2"><xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">0000000001</xbrli:identifier></xbrli:entity>
<xbrli:period><xbrli:startDate>{val(st.just("2024-01-01"))}</xbrli:startDate><xbrli:endDate>{val(st.just("2024-12-31"))}</xbrli:endDate></xbrli:period></xbrli:context>
<xbrli:unit id="usd"><xbrli:measure>{val(st.sampled_from(["iso4217:USD", "bad:USD", "USD"]))}</xbrli:measure></xbrli:unit>
<xbrli:unit id="shares"><xbrli:measure>xbrli:shares</xbrli:measure></xbrli:unit>
<dei:DocumentType contextRef="c1">{val(st.just("10-K"))}</dei:DocumentType>
<dei:DocumentPeriodEndDate contextRef="c1">{val(st.just("2024-12-31"))}</dei:DocumentPeriodEndDate>
<dei:DocumentFiscalYearFocus contextRef="c1">{val(st.sampled_from(["2024", "99999"]))}</dei:DocumentFiscalYearFocus>
{facts}
</xbrli:xbrl>
"""
    return body.encode("utf-8")


@SETTINGS
@given(xbrl_instance())
@pytest.mark.reliability("input")
def test_xbrl_instance_facts_are_read_or_named(body):
    path = _write(".xml", body)
    try:
        _clean(read_instance(path))
    except XbrlInstanceFormatError:
        pass
    finally:
        path.unlink()


@SETTINGS
@given(st.binary(max_size=300))
@pytest.mark.reliability("input")
def test_xbrl_any_bytes_are_read_or_named(body):
    path = _write(".xml", body)
    try:
        _clean(read_instance(path))
    except XbrlInstanceFormatError:
        pass
    finally:
        path.unlink()


# --- report batch files ------------------------------------------------------------------------------------


@st.composite
def batch_line(draw) -> bytes:
    obj = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "id": st.one_of(st.sampled_from(["q1", "q2", "bad id!"]), json_any),
                "question": st.one_of(st.just("What moved yields?"), json_any),
                "as_of": st.one_of(st.sampled_from(["2024-06-30", "2024-02-30"]), json_any),
                "companies": st.one_of(st.lists(nasty, max_size=3), json_any),
                "facts": st.one_of(
                    st.lists(
                        st.fixed_dictionaries({"id": nasty, "text": nasty, "numbers": st.lists(json_leaf, max_size=3)}),
                        max_size=2,
                    ),
                    json_any,
                ),
            },
        )
    )
    text = json.dumps(obj, allow_nan=True, ensure_ascii=draw(st.booleans()))
    encoding = draw(st.sampled_from(["utf-8", "latin-1", "utf-16"]))
    return text.encode(encoding, "replace")


@SETTINGS
@given(st.lists(st.one_of(batch_line(), st.binary(max_size=40)), max_size=5), st.sampled_from([b"\n", b"\r\n"]))
@pytest.mark.reliability("input")
def test_batch_file_lines_are_read_or_named(lines, eol):
    path = _write(".jsonl", eol.join(lines) + eol)
    try:
        questions = load_questions(path)
        assert questions and len({q.id for q in questions}) == len(questions)
        assert all(math.isfinite(n) for q in questions for f in q.facts for n in f.numbers)
    except BatchFileError:
        pass
    finally:
        path.unlink()
