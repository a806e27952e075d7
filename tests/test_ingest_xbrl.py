"""XBRL instance and SEC companyfacts ingest on the real files shipped in data/ (Tesla's 10-Q for
2024-06-30, Snowflake's companyfacts), written into the real Neo4j, and failures on broken copies.

The expected values were looked up by hand in the files (line numbers are those of
data/sec-xbrl-instances/tsla-20240630-10q.xml)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from test_cli import finkg

from ingest.sec import fsds as sec_fsds
from ingest.sec.companyfacts import CompanyFactsFormatError, read_companyfacts
from ingest.sec.xbrl_instance import XbrlInstanceFormatError, read_instance, taxonomy_version
from kg import BatchWriter

DATA = Path(__file__).resolve().parents[1] / "data"
TSLA = DATA / "sec-xbrl-instances" / "tsla-20240630-10q.xml"
SNOW = DATA / "sec-companyfacts" / "CIK0001640147-snowflake.json"
TSLA_ADSH = f"tsla-20240630-10q.{hashlib.sha256(TSLA.read_bytes()).hexdigest()[:12]}"  # pseudo accession
SNOW_10K = "0001640147-25-000052"  # 10-K for the fiscal year ended 2025-01-31, filed 2025-03-21
SNOW_10Q = "0001640147-24-000135"  # 10-Q for the quarter ended 2024-04-30, filed 2024-05-31
REVENUE = "RevenueFromContractWithCustomerExcludingAssessedTax"


def _reconciles(counts) -> bool:
    return counts["rows"] == counts["kept"] + sum(v for k, v in counts.items() if k.startswith("skipped_"))


def _by(facts, **match):
    return {(f["ddate"], f["qtrs"]): f for f in facts if all(f[k] == v for k, v in match.items())}


# --- XBRL instance -------------------------------------------------------------------------------


def test_instance_is_read_and_normalized():
    d = read_instance(TSLA)
    c = d.counts
    assert (
        c["rows"],
        c["kept"],
        c["skipped_not_usd"],
        c["skipped_dimensional"],
        c["skipped_non_numeric"],
        c["skipped_duplicate"],
        c["nil_value"],
    ) == (1149, 402, 105, 495, 105, 42, 2)
    assert _reconciles(c)
    assert len({f["key"] for f in d.facts}) == len(d.facts)
    assert d.companies == [{"cik": 1318605, "name": "Tesla, Inc.", "sic": None}]
    assert d.filings == [
        {
            "adsh": TSLA_ADSH,
            "cik": 1318605,
            "form": "10-Q",
            "period": "20240630",
            "fy": 2024,
            "fp": "Q2",
            "filed": None,
            "accepted": None,
            "source": TSLA.name,
        }
    ]
    revenues = _by(d.facts, tag="Revenues")
    q2 = revenues[("20240630", 1)]  # line 5196: contextRef c-33 (2024-04-01 .. 2024-06-30)
    assert (q2["value"], q2["decimals"], q2["period_role"], q2["version"], q2["source"]) == (
        25_500_000_000.0,
        -6,
        "current",
        "us-gaap/2023",
        "xbrl-instance",
    )
    assert q2["key"] == f"{TSLA_ADSH}:Revenues:us-gaap/2023:20240630:1:USD::"
    assert q2["citation"] == f"{TSLA_ADSH}:1318605:Revenues:20240630:1:USD"
    assert (q2["stmt"], q2["negating"], q2["footnote"]) == (None, None, None)
    assert revenues[("20240630", 2)]["value"] == 46_801_000_000.0
    assert revenues[("20240630", 2)]["period_role"] == "current_ytd"
    assert revenues[("20230630", 1)]["value"] == 24_927_000_000.0
    assert revenues[("20230630", 1)]["period_role"] == "comparative"
    liabilities = _by(d.facts, tag="Liabilities")[("20231231", 0)]  # line 4049: instant c-4
    assert (liabilities["value"], liabilities["period_role"]) == (43_009_000_000.0, "comparative")
    nil = _by(d.facts, tag="CommitmentsAndContingencies")[("20240630", 0)]  # line 4050: xsi:nil
    assert nil["value"] is None
    # line 4102: automotive sales only (ProductOrServiceAxis, context c-9): dimensional, not a fact
    assert 18_530_000_000.0 not in {f["value"] for f in d.facts if f["tag"] == REVENUE}
    assert _by(d.facts, tag=REVENUE)[("20240630", 1)]["value"] == 25_500_000_000.0  # the whole entity
    assert {f["version"] for f in d.facts} == {"us-gaap/2023", "tsla"}
    assert {k["key"] for k in d.concepts} == {f["concept"] for f in d.facts}


def test_instance_with_accession_names_extension_concepts_by_it():
    adsh = "0000000000-24-000001"
    d = read_instance(TSLA, adsh=adsh)
    assert d.filings[0]["adsh"] == adsh
    assert {f["version"] for f in d.facts} == {"us-gaap/2023", adsh}
    assert d.counts == read_instance(TSLA).counts


def test_taxonomy_version_rules():
    assert taxonomy_version("http://xbrl.sec.gov/dei/2023", "dei", None) == "dei/2023"
    assert taxonomy_version("http://fasb.org/srt/2022", "srt", "x") == "srt/2022"
    assert (
        taxonomy_version("https://xbrl.ifrs.org/taxonomy/2023-03-23/ifrs-full", "ifrs-full", None) == "ifrs-full/2023"
    )
    assert taxonomy_version("http://www.tesla.com/20240630", "tsla", None) == "tsla"


def _broken_xml(tmp_path: Path, old: str, new: str) -> Path:
    text = TSLA.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    out = tmp_path / "broken.xml"
    out.write_text(text.replace(old, new), encoding="utf-8")
    return out


@pytest.mark.reliability("input")
def test_truncated_xml_is_named(tmp_path):
    out = tmp_path / "cut.xml"
    out.write_bytes(TSLA.read_bytes()[:700_000])
    with pytest.raises(XbrlInstanceFormatError, match=r"cut.xml: line \d+: not well-formed XML"):
        read_instance(out)


def test_missing_context_is_named(tmp_path):
    bad = _broken_xml(
        tmp_path,
        '<us-gaap:Revenues contextRef="c-33" decimals="-6" id="f-1114"',
        '<us-gaap:Revenues contextRef="c-999" decimals="-6" id="f-1114"',
    )
    with pytest.raises(
        XbrlInstanceFormatError,
        match=r"broken.xml: line 5196: fact us-gaap:Revenues: contextRef 'c-999' is not a defined context",
    ):
        read_instance(bad)


def test_non_numeric_xml_value_is_named(tmp_path):
    bad = _broken_xml(tmp_path, 'id="f-1114" unitRef="usd">25500000000<', 'id="f-1114" unitRef="usd">25,5 bn<')
    with pytest.raises(
        XbrlInstanceFormatError,
        match=r"broken.xml: line 5196: fact us-gaap:Revenues \(context c-33\): value is not a number: '25,5 bn'",
    ):
        read_instance(bad)


def test_bad_xml_date_is_named(tmp_path):
    text = TSLA.read_text(encoding="utf-8")
    start = text.index('<context id="c-4">')
    old = text[start : text.index("</context>", start)]
    bad = _broken_xml(tmp_path, old, old.replace("2023-12-31", "2023-12-32"))
    with pytest.raises(XbrlInstanceFormatError, match=r"broken.xml: line 48: context c-4 instant: bad date"):
        read_instance(bad)


def test_missing_document_type_is_named(tmp_path):
    bad = _broken_xml(tmp_path, '<dei:DocumentType contextRef="c-1" id="f-1">10-Q</dei:DocumentType>', "")
    with pytest.raises(XbrlInstanceFormatError, match=r"broken.xml: dei:DocumentType is missing"):
        read_instance(bad)


# --- SEC companyfacts ----------------------------------------------------------------------------


def test_companyfacts_is_read_and_normalized():
    d = read_companyfacts(SNOW)
    c = d.counts
    assert (c["rows"], c["kept"], c["skipped_not_usd"], c["skipped_dimensional"], c["filings"]) == (
        8163,
        7003,
        1160,
        0,
        19,
    )
    assert _reconciles(c) and c["filings_without_period"] == 0
    assert len({f["key"] for f in d.facts}) == len(d.facts)
    assert d.companies == [{"cik": 1640147, "name": "SNOWFLAKE INC.", "sic": None}]
    filings = {f["adsh"]: f for f in d.filings}
    assert filings[SNOW_10K] == {
        "adsh": SNOW_10K,
        "cik": 1640147,
        "form": "10-K",
        "period": "20250131",
        "fy": 2025,
        "fp": "FY",
        "filed": "20250321",
        "accepted": None,
        "source": SNOW.name,
    }
    assert (filings[SNOW_10Q]["period"], filings[SNOW_10Q]["fp"]) == ("20240430", "Q1")
    annual = _by(d.facts, adsh=SNOW_10K, tag=REVENUE)
    assert annual[("20250131", 4)]["value"] == 3_626_396_000.0
    assert annual[("20250131", 4)]["period_role"] == "current"
    assert annual[("20240131", 4)]["value"] == 2_806_489_000.0
    assert annual[("20240131", 4)]["period_role"] == "comparative"
    quarter = _by(d.facts, adsh=SNOW_10Q, tag=REVENUE)
    assert (quarter[("20240430", 1)]["value"], quarter[("20240430", 1)]["period_role"]) == (828_709_000.0, "current")
    assert quarter[("20230430", 1)]["value"] == 623_599_000.0
    fact = annual[("20250131", 4)]
    assert fact["key"] == f"{SNOW_10K}:{REVENUE}:us-gaap:20250131:4:USD::"
    assert (fact["version"], fact["concept"], fact["decimals"], fact["source"]) == (
        "us-gaap",
        f"us-gaap:{REVENUE}",
        None,
        "sec-companyfacts",
    )
    concept = next(k for k in d.concepts if k["key"] == f"us-gaap:{REVENUE}")
    assert concept["label"] == "Revenue from Contract with Customer, Excluding Assessed Tax"


def _companyfacts(tmp_path: Path, entries: list[dict], name: str = "cf.json") -> Path:
    doc = {
        "cik": 1,
        "entityName": "X",
        "facts": {"us-gaap": {"Revenues": {"label": "Revenues", "units": {"USD": entries}}}},
    }
    out = tmp_path / name
    out.write_text(json.dumps(doc))
    return out


def test_companyfacts_period_is_the_most_frequent_end(tmp_path):
    meta = {"accn": "0000000001-22-000001", "fy": 2022, "fp": "Q1", "form": "10-Q", "filed": "2022-04-25"}
    entries = [
        {"start": "2022-01-01", "end": "2022-03-31", "val": 10, **meta},
        {"start": "2021-01-01", "end": "2021-03-31", "val": 9, **meta},
        {"end": "2022-03-31", "val": 100, **meta},
        {"end": "2022-04-13", "val": 5, **meta},  # a subsequent event: later, but not the period
    ]
    d = read_companyfacts(_companyfacts(tmp_path, entries))
    assert d.filings[0]["period"] == "20220331"
    roles = {(f["ddate"], f["qtrs"]): f["period_role"] for f in d.facts}
    assert roles == {
        ("20220331", 1): "current",
        ("20210331", 1): "comparative",
        ("20220331", 0): "current",
        ("20220413", 0): "comparative",
    }


@pytest.mark.reliability("input")
def test_truncated_json_is_named(tmp_path):
    out = tmp_path / "cut.json"
    out.write_bytes(SNOW.read_bytes()[:100_000])
    with pytest.raises(CompanyFactsFormatError, match=r"cut.json: line \d+ column \d+: not valid JSON"):
        read_companyfacts(out)


def _broken_json(tmp_path: Path, edit) -> Path:
    doc = json.loads(SNOW.read_text())
    edit(doc["facts"]["us-gaap"][REVENUE]["units"]["USD"][3])
    out = tmp_path / "broken.json"
    out.write_text(json.dumps(doc))
    return out


def test_non_numeric_json_value_is_named(tmp_path):
    bad = _broken_json(tmp_path, lambda e: e.update(val="12,5"))
    with pytest.raises(
        CompanyFactsFormatError,
        match=rf"broken.json: facts.us-gaap.{REVENUE}.units.USD\[3\].val: expected int/float, got \"12,5\"",
    ):
        read_companyfacts(bad)


def test_bad_json_date_is_named(tmp_path):
    bad = _broken_json(tmp_path, lambda e: e.update(end="2024-02-30"))
    with pytest.raises(
        CompanyFactsFormatError, match=rf"broken.json: facts.us-gaap.{REVENUE}.units.USD\[3\].end: bad date"
    ):
        read_companyfacts(bad)


def test_missing_json_field_is_named(tmp_path):
    bad = _broken_json(tmp_path, lambda e: e.pop("accn"))
    with pytest.raises(
        CompanyFactsFormatError,
        match=rf"broken.json: facts.us-gaap.{REVENUE}.units.USD\[3\].accn: required field is missing",
    ):
        read_companyfacts(bad)


# --- into Neo4j ----------------------------------------------------------------------------------


def test_instance_ingest_twice_changes_nothing(graph):
    d = read_instance(TSLA)
    writer = BatchWriter(graph, batch_size=500, workers=2)
    first = sec_fsds.write_fsds(writer, d)
    second = sec_fsds.write_fsds(writer, d)
    for stage, st in second.items():
        assert (st.created, st.updated, st.missing_endpoints) == (0, 0, 0), stage
        assert st.written == first[stage].written
    got = graph.read(
        "MATCH (c:Company)-[:FILED]->(f:Filing {adsh: $a})-[:REPORTS]->(x:Fact)-[:OF_CONCEPT]->(k:Concept) "
        "WHERE x.tag = 'Revenues' AND x.period_role = 'current' "
        "RETURN c.name AS company, f.period AS period, x.value AS value, x.decimals AS decimals, "
        "x.source AS source, k.key AS concept",
        {"a": TSLA_ADSH},
    )
    assert got == [
        {
            "company": "Tesla, Inc.",
            "period": "20240630",
            "value": 25_500_000_000.0,
            "decimals": -6,
            "source": "xbrl-instance",
            "concept": "us-gaap/2023:Revenues",
        }
    ]
    n = graph.read("MATCH (:Filing {adsh: $a})-[:REPORTS]->(x:Fact) RETURN count(x) AS n", {"a": TSLA_ADSH})
    assert n == [{"n": 402}]


def test_companyfacts_ingest_twice_changes_nothing(graph):
    d = read_companyfacts(SNOW)
    writer = BatchWriter(graph, batch_size=5_000, workers=2)
    first = sec_fsds.write_fsds(writer, d)
    second = sec_fsds.write_fsds(writer, d)
    for stage, st in second.items():
        assert (st.created, st.updated, st.missing_endpoints) == (0, 0, 0), stage
        assert st.written == first[stage].written
    got = graph.read(
        "MATCH (c:Company {cik: 1640147})-[:FILED]->(f:Filing {adsh: $a})-[:REPORTS]->(x:Fact)"
        "-[:OF_CONCEPT]->(k:Concept) WHERE x.tag = $t AND x.period_role = 'current' "
        "RETURN c.name AS company, f.form AS form, x.value AS value, x.qtrs AS qtrs, k.label AS label",
        {"a": SNOW_10K, "t": REVENUE},
    )
    assert got == [
        {
            "company": "SNOWFLAKE INC.",
            "form": "10-K",
            "value": 3_626_396_000.0,
            "qtrs": 4,
            "label": "Revenue from Contract with Customer, Excluding Assessed Tax",
        }
    ]
    n = graph.read("MATCH (:Filing {source: $s})-[:REPORTS]->(x:Fact) RETURN count(x) AS n", {"s": SNOW.name})
    assert n == [{"n": d.counts["kept"]}]


def test_cli_records_the_xbrl_run(graph):
    out = finkg("ingest", "xbrl", str(TSLA))
    assert out.returncode == 0, out.stderr
    assert "XBRL instance ingest" in out.stdout and "tsla-20240630-10q.xml" in out.stdout
    run = graph.read(
        "MATCH (r:IngestRun {kind: 'xbrl-instance'}) WHERE r.source ENDS WITH $s "
        "OPTIONAL MATCH (r)-[:LOADED]->(f:Filing) RETURN r.status AS status, r.counts AS counts, "
        "collect(f.adsh) AS filings",
        {"s": TSLA.name},
    )
    assert run[0]["status"] == "done" and run[0]["filings"] == [TSLA_ADSH]
    assert json.loads(run[0]["counts"])["kept"] == 402


@pytest.mark.neo4j  # its subprocess talks to the server
def test_cli_names_a_broken_companyfacts_file(tmp_path):
    out = tmp_path / "cut.json"
    out.write_bytes(SNOW.read_bytes()[:100_000])
    res = finkg("ingest", "companyfacts", str(out))
    assert res.returncode == 2
    assert "cut.json" in res.stderr and "not valid JSON" in res.stderr and "Traceback" not in res.stderr
