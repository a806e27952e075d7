"""SEC numbers a user can trust (issue 19, part 1): each defect found on the shipped 2009q3 quarter, tested on
its real rows.

Gold values here are read by the test itself from the shipped archive (data/sec-fsds/2009q3.zip, num.txt /
sub.txt / pre.txt, with the csv module), never from the code under test. Fixtures that need a small archive
are cut at test time from the shipped one (:func:`cut_quarter`: the header and every row of the chosen
accessions, unchanged). The module loads the quarter into Neo4j once (idempotent) when the graph does not
hold it with its co-registrant facts.
"""

from __future__ import annotations

import csv
import io
import logging
import zipfile
from functools import cache
from pathlib import Path

import pytest
from test_cli import finkg

from finkg.pipelines import sec as pipelines
from finkg.pipelines.memos import build_context
from generation.memo.claims import INSUFFICIENT_DATA, RiskThresholds, risk_label
from generation.memo.systems import generate_memo
from ingest.sec.fsds import read_fsds, write_fsds
from kg import BatchWriter
from kg.writer import node_lanes
from retrieval.facts import statements as st
from retrieval.facts.fact_map import list_filings, read_fact_maps, resolve_amendments

DATA = Path(__file__).resolve().parents[1] / "data"
QUARTER = DATA / "sec-fsds" / "2009q3.zip"
DAILY = DATA / "sec-fsds" / "20250404.zip"
TSLA = DATA / "sec-xbrl-instances" / "tsla-20240630-10q.xml"

SEMPRA = "0000086521-09-000047"  # 10-Q: every fact carries coreg (parent + 3 utility subsidiaries)
CITIGROUP = "0001047469-09-007400"  # its whole-entity facts all carry coreg ParentCompany
EDISON_MISSION = "0001047469-09-007342"  # revenue only as ElectricalGenerationRevenue
NEWMONT = "0000950123-09-024448"  # gold sales, copper sales, then RevenueMineralSales "Total revenues, net"
DTE = "0000950123-09-039236"  # UtilityRevenue "Operating Revenues"
WELLS_FARGO = "0000950123-09-032191"  # a bank: the income statement starts with interest income
WALMART = "0001193125-09-189177"  # OtherMinorityInterests "Redeemable noncontrolling interest" (mezzanine)
KIMBERLY_CLARK = "0000055785-09-000026"  # RedeemablePreferredAndCommonSecuritiesOfSubsidiaries
ILLINOIS_TOOL = "0000049826-09-000066"  # no items between liabilities and equity
CF_ORIGINAL, CF_AMENDMENT = "0001047469-09-007107", "0001104659-09-047214"  # prevrpt 1, then its 10-Q/A
AK_STEEL = "0000918160-09-000029"  # prevrpt 1; its amendment is in a later quarter


# --------------------------------------------------------------------------- the test's own reading of the archive


@cache
def table(member: str) -> list[dict[str, str]]:
    """All rows of one member of the shipped quarter (the SEC readme's tab-separated layout)."""
    with zipfile.ZipFile(QUARTER) as zf, zf.open(member) as fh:
        return list(csv.DictReader(io.TextIOWrapper(fh, encoding="utf-8"), delimiter="\t", quoting=csv.QUOTE_NONE))


def num(adsh: str, tag: str, ddate: str, qtrs: str, coreg: str = "") -> float:
    """The USD value of one num.txt row (whole entity, or the co-registrant ``coreg``)."""
    rows = [
        r
        for r in table("num.txt")
        if r["adsh"] == adsh
        and r["tag"] == tag
        and r["ddate"] == ddate
        and r["qtrs"] == qtrs
        and r["uom"] == "USD"
        and r["coreg"] == coreg
        and r["segments"] in ("", f"LegalEntity={coreg};")
    ]
    assert len(rows) == 1, (adsh, tag, ddate, qtrs, coreg, rows)
    return float(rows[0]["value"])


def cut_quarter(tmp_path: Path, adshs: set[str]) -> Path:
    """A small archive cut from the shipped quarter: the header and every row of ``adshs`` in sub, num and
    pre, and the tag.txt rows those facts use; no value changed."""
    out = tmp_path / "cut.zip"
    with zipfile.ZipFile(QUARTER) as src, zipfile.ZipFile(out, "w") as dst:
        used: set[tuple[str, str]] = set()
        for member in ("sub.txt", "num.txt", "pre.txt"):
            lines = src.read(member).decode("utf-8").splitlines(keepends=True)
            kept = [lines[0]] + [x for x in lines[1:] if x.split("\t", 1)[0] in adshs]
            if member == "num.txt":
                used = {(x.split("\t")[1], x.split("\t")[2]) for x in kept[1:]}
            dst.writestr(member, "".join(kept))
        lines = src.read("tag.txt").decode("utf-8").splitlines(keepends=True)
        dst.writestr("tag.txt", "".join([lines[0]] + [x for x in lines[1:] if tuple(x.split("\t")[:2]) in used]))
    return out


@pytest.fixture(scope="module")
def loaded(graph, settings):
    n = len(list_filings(graph, source=QUARTER.name))
    coreg = graph.read("MATCH (x:Fact) WHERE x.coreg IS NOT NULL RETURN count(x) > 0 AS any")[0]["any"]
    if n != 435 or not coreg:
        pipelines.ingest_sec(graph, settings, [QUARTER])
    return graph


@pytest.fixture(scope="module")
def maps(loaded):
    wanted = [SEMPRA, CITIGROUP, EDISON_MISSION, NEWMONT, DTE, WELLS_FARGO, WALMART, KIMBERLY_CLARK, ILLINOIS_TOOL]
    wanted += [CF_ORIGINAL, CF_AMENDMENT, AK_STEEL]
    return {fm.adsh: fm for fm in read_fact_maps(loaded, wanted)}


@pytest.fixture(scope="module")
def ctx(loaded, settings):
    return build_context(loaded, settings, ["structured"])


# --------------------------------------------------------------------------- co-registrants


def test_a_coregistrant_filing_keeps_every_entity_apart(tmp_path):
    d = read_fsds(cut_quarter(tmp_path, {SEMPRA}))
    sempra = d.facts
    gold = [r for r in table("num.txt") if r["adsh"] == SEMPRA and r["uom"] == "USD"]
    assert len(sempra) == len(gold) == d.counts["coregistrant"] > 0  # before: every one skipped
    assert {f["coreg"] for f in sempra} == {
        "ParentCompany",
        "SanDiegoGasAndElectricCompanyAndSubsidiary",
        "PacificEnterprises",
        "SouthernCaliforniaGasCompany",
    }
    assert d.counts["kept"] + d.counts["skipped_not_usd"] + d.counts["skipped_dimensional"] == d.counts["rows"]
    parent = next(
        f for f in sempra if f["tag"] == "Assets" and f["ddate"] == "20090630" and f["coreg"] == "ParentCompany"
    )
    assert parent["citation"] == f"{SEMPRA}:1032208:Assets:20090630:0:USD:ParentCompany"
    assert parent["value"] == num(SEMPRA, "Assets", "20090630", "0", "ParentCompany")


def test_the_coregistrant_filing_gets_a_memo_of_its_parent(maps, ctx):
    fm = maps[SEMPRA]
    assert fm.entity == "ParentCompany" and len(fm.coregistrants) == 3
    assert fm.facts["Assets"].value == num(SEMPRA, "Assets", "20090630", "0", "ParentCompany")
    revenue = fm.facts["Revenues"]  # "Total revenues", above "Total utility operating revenues"
    assert revenue.tag == "RegulatedAndUnregulatedOperatingRevenue"
    assert revenue.value == num(SEMPRA, revenue.tag, "20090630", "1", "ParentCompany")
    assert all(fm.raw[k].get("coreg") == "ParentCompany" for k in fm.raw)  # no subsidiary figure mixed in
    memo = generate_memo("structured", fm, ctx)
    assert "Co-registrant filing: this memo uses its ParentCompany facts" in memo.markdown
    assert "SouthernCaliforniaGasCompany" in memo.markdown
    assert memo.verification.counts()["exact"] > 10 and memo.verification.counts()["unsupported"] == 0


def test_the_parent_company_member_is_the_registrant_itself(maps):
    fm = maps[CITIGROUP]  # every whole-entity figure carries coreg ParentCompany: $1.85 trillion of assets
    assert fm.entity == "ParentCompany"
    assert fm.facts["Assets"].value == num(CITIGROUP, "Assets", "20090630", "0", "ParentCompany") == 1_848_533e6
    assert fm.facts["Liabilities"].value == num(CITIGROUP, "Liabilities", "20090630", "0", "ParentCompany")


def test_history_reads_the_registrant_only(loaded):
    rows = loaded.read(
        "MATCH (:Company {cik: 1032208})-[:FILED]->(:Filing)-[:REPORTS]->(x:Fact {tag: 'Assets'}) "
        "RETURN count(x) AS all, count(x.coreg) AS coreg"
    )
    assert rows[0]["all"] == rows[0]["coreg"] > 0  # every Sempra fact belongs to one of its legal entities


# --------------------------------------------------------------------------- revenue from the income statement


@pytest.mark.parametrize(
    "adsh,tag",
    [(EDISON_MISSION, "ElectricalGenerationRevenue"), (NEWMONT, "RevenueMineralSales"), (DTE, "UtilityRevenue")],
)
def test_revenue_is_the_income_statements_top_revenue_line(maps, adsh, tag):
    fm = maps[adsh]
    period = next(r["period"] for r in table("sub.txt") if r["adsh"] == adsh)
    revenue = fm.facts["Revenues"]
    assert (revenue.tag, revenue.qtrs) == (tag, 1)
    assert revenue.value == num(adsh, tag, period, "1")
    assert "income statement's top revenue line" in revenue.basis and f"tag {tag}" in revenue.basis


def test_the_chosen_tag_and_why_reach_the_memo_claim(maps, ctx):
    memo = generate_memo("structured", maps[NEWMONT], ctx)
    claim = next(c for c in memo.claims if c.name == "Revenues")
    assert claim.kind == "fact" and claim.status == "exact"
    assert "reported tag RevenueMineralSales" in claim.note and "'Total revenues, net'" in claim.note
    assert "income statement's top revenue line" in memo.markdown


def test_a_bank_without_a_total_revenue_line_gets_none(maps):
    assert "Revenues" not in maps[WELLS_FARGO].facts


def test_top_revenue_line_on_newmonts_presentation():
    lines = [
        {"tag": r["tag"], "plabel": r["plabel"], "report": int(r["report"]), "line": int(r["line"]), "value": 1.0}
        for r in table("pre.txt")
        if r["adsh"] == NEWMONT and r["stmt"] == "IS"
    ]
    tag, why = st.top_revenue_line(lines) or ("", "")
    assert tag == "RevenueMineralSales" and "lines 4-6" in why  # gold sales, copper sales, the total


# --------------------------------------------------------------------------- temporary equity


def test_derived_liabilities_subtract_the_items_between_liabilities_and_equity(maps):
    liab = maps[WALMART].facts["Liabilities"]
    assert [f.tag for _, f in liab.components] == [
        "LiabilitiesAndStockholdersEquity",
        "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest",
        "OtherMinorityInterests",
    ]
    d = "20090731"
    gold = (
        num(WALMART, "LiabilitiesAndStockholdersEquity", d, "0")
        - num(WALMART, "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest", d, "0")
        - num(WALMART, "OtherMinorityInterests", d, "0")
    )
    assert liab.value == gold
    assert "OtherMinorityInterests 'Redeemable noncontrolling interest' (line 36)" in liab.basis
    kmb = maps[KIMBERLY_CLARK].facts["Liabilities"]
    assert kmb.components[-1][1].tag == "RedeemablePreferredAndCommonSecuritiesOfSubsidiaries"
    assert kmb.value == num(KIMBERLY_CLARK, "LiabilitiesAndStockholdersEquity", "20090630", "0") - num(
        KIMBERLY_CLARK, "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest", "20090630", "0"
    ) - num(KIMBERLY_CLARK, "RedeemablePreferredAndCommonSecuritiesOfSubsidiaries", "20090630", "0")
    itw = maps[ILLINOIS_TOOL].facts["Liabilities"]
    assert itw.formula == "LiabilitiesAndStockholdersEquity - StockholdersEquity - MinorityInterest"
    assert itw.basis.endswith("balance sheet: none")


def test_the_derivation_names_the_items_in_the_memo(maps, ctx):
    memo = generate_memo("structured", maps[WALMART], ctx)
    claim = next(c for c in memo.claims if c.name == "Liabilities")
    assert claim.status == "exact" and "OtherMinorityInterests" in claim.note
    assert "Redeemable noncontrolling interest" in memo.markdown


# --------------------------------------------------------------------------- amendments and scale


def test_a_filing_amended_in_the_graph_resolves_to_its_amendment(loaded, maps, ctx):
    prevrpt = {r["adsh"] for r in table("sub.txt") if r["prevrpt"] == "1"}
    assert CF_ORIGINAL in prevrpt and CF_AMENDMENT not in prevrpt
    order, superseded = resolve_amendments(loaded, [CF_ORIGINAL, CF_AMENDMENT, WALMART])
    assert order == [CF_AMENDMENT, WALMART] and superseded == {CF_ORIGINAL: CF_AMENDMENT}
    assert maps[CF_ORIGINAL].filing["superseded_by"] == CF_AMENDMENT
    assert maps[CF_AMENDMENT].filing["supersedes"] == [CF_ORIGINAL]
    assert f"Amendment: supersedes {CF_ORIGINAL}" in generate_memo("structured", maps[CF_AMENDMENT], ctx).markdown
    history = loaded.read(  # the superseded filing's values stay as history
        "MATCH (:Filing {adsh: $a})-[:REPORTS]->(x:Fact) RETURN count(x) AS n", {"a": CF_ORIGINAL}
    )
    assert history[0]["n"] > 0


def test_a_filing_amended_later_outside_the_graph_is_flagged(maps, ctx):
    fm = maps[AK_STEEL]
    assert fm.filing["amended_later"] and fm.filing["superseded_by"] is None
    assert "Amended later (sub.txt `prevrpt`)" in generate_memo("structured", fm, ctx).markdown


def test_a_value_off_by_a_thousand_is_flagged_against_the_filers_other_periods():
    now = num(WALMART, "Revenues", "20090731", "1")
    before = num(WALMART, "Revenues", "20080731", "1")  # the same quarter a year earlier, in the same filing
    assert st.implausible(now, [before]) == ""
    assert "more than two orders of magnitude" in st.implausible(now * 1000, [before])  # an unscaled filing
    assert "more than two orders of magnitude" in st.implausible(now / 1000, [before])


def test_no_plausibility_flag_on_the_real_quarter_reaches_a_claim_silently(loaded):
    maps = list(read_fact_maps(loaded, [f["adsh"] for f in list_filings(loaded, source=QUARTER.name)]))
    flagged = [(fm.adsh, n, f.flag) for fm in maps for n, f in fm.facts.items() if f.flag]
    for adsh, name, why in flagged:  # each flag is real: >100x off the filer's other periods
        assert "two orders of magnitude" in why, (adsh, name)


# --------------------------------------------------------------------------- labels and rendering


def test_no_leverage_or_liquidity_evidence_is_insufficient_data_never_low():
    label, _ = risk_label(
        {"current_ratio": None, "leverage": None, "net_margin": 0.1, "ocf_margin": 0.1}, RiskThresholds()
    )
    assert label == INSUFFICIENT_DATA
    assert risk_label({"current_ratio": 2.0, "leverage": None}, RiskThresholds())[0] == "Low"
    both = {"current_ratio": None, "leverage": None, "net_margin": -0.1, "ocf_margin": -0.1}
    assert risk_label(both, RiskThresholds())[0] == INSUFFICIENT_DATA  # two active tests are not High


def test_insufficient_data_memos_on_the_quarter_name_what_is_missing(loaded, ctx):
    maps = list(read_fact_maps(loaded, [f["adsh"] for f in list_filings(loaded, source=QUARTER.name)]))
    memos = [generate_memo("structured", fm, ctx) for fm in maps]
    thin = [m for m in memos if m.risk_label == INSUFFICIENT_DATA]
    assert thin, "the quarter has filings with neither current ratio nor leverage"
    for m in thin:
        label = next(c for c in m.claims if c.kind == "label")
        assert "no liquidity or leverage test can be made" in label.note and "current ratio:" in label.note
        assert m.verification.counts()["repaired"] == 0
    assert all(
        m.risk_label != "Low"
        for m in memos
        if all(c.kind == "not_applicable" for c in m.claims if c.name in ("current_ratio", "leverage"))
    )


def test_a_not_applicable_ratio_is_stated_once(maps, ctx):
    body = generate_memo("structured", maps[WELLS_FARGO], ctx).body
    assert body.count("Current ratio: not applicable") == 1
    assert body.count("Net margin: not applicable") == 1


def test_memo_help_names_the_output_files():
    out = finkg("memo", "--help")
    assert out.returncode == 0 and "OUT/SYSTEM/ADSH.md" in out.stdout and "OUT//" not in out.stdout


# --------------------------------------------------------------------------- re-ingest


def test_the_same_instance_under_another_accession_is_refused(graph, settings):
    pipelines.ingest_xbrl(graph, settings, [TSLA])  # as the other tests load it (its pseudo accession)
    before = graph.read("MATCH (:Company {cik: 1318605})-[:FILED]->(:Filing)-[:REPORTS]->(x:Fact) RETURN count(x) AS n")
    out = finkg("ingest", "xbrl", str(TSLA), "--accession", "0000950170-24-087843")
    assert out.returncode == 2 and "would count its facts twice" in out.stderr and "Traceback" not in out.stderr
    after = graph.read("MATCH (:Company {cik: 1318605})-[:FILED]->(:Filing)-[:REPORTS]->(x:Fact) RETURN count(x) AS n")
    assert after == before


def test_a_rejected_accession_leaves_the_earlier_run_done(graph, settings):
    pipelines.ingest_xbrl(graph, settings, [TSLA])
    out = finkg("ingest", "xbrl", str(TSLA), "--accession", "123")
    assert out.returncode == 2 and "'123' is not an accession number" in out.stderr
    runs = graph.read(
        "MATCH (r:IngestRun {kind: 'xbrl-instance'}) WHERE r.source ENDS WITH $s RETURN r.status AS s", {"s": TSLA.name}
    )
    assert runs == [{"s": "done"}]


def test_relationship_lanes_never_share_a_node():
    d = read_fsds(DAILY)
    rows = [{"start": f["key"], "end": f["concept"]} for f in d.facts]  # OF_CONCEPT: concepts shared by facts
    lanes = node_lanes(rows, lambda r: (("Fact", r["start"]), ("Concept", r["end"])), 2)
    assert sum(map(len, lanes)) == len(rows) and len(lanes) == 2
    concepts = [{r["end"] for r in lane} for lane in lanes]
    assert not concepts[0] & concepts[1]
    assert min(map(len, lanes)) > len(rows) / 3  # balanced


def test_a_first_ingest_with_parallel_writers_logs_no_deadlock(graph, keyed_label, caplog):
    d = read_fsds(DAILY)
    writer = BatchWriter(graph, batch_size=100, workers=4)
    facts = [{"key": f["key"]} for f in d.facts]
    concepts = [{"key": "concept:" + c["key"]} for c in d.concepts]
    writer.merge_nodes(keyed_label, facts + concepts, key="key")
    with caplog.at_level(logging.WARNING, logger="kg.driver"):
        stats = writer.merge_relationships(
            "OF_CONCEPT",
            [{"start": f["key"], "end": "concept:" + f["concept"]} for f in d.facts],
            start=(keyed_label, "key"),
            end=(keyed_label, "key"),
        )
    assert stats.created == len(d.facts) and stats.missing_endpoints == 0
    assert not [r for r in caplog.records if "Deadlock" in r.getMessage()]


def test_write_fsds_counts_coregistrant_facts_and_gives_them_no_evidence(graph, tmp_path):
    d = read_fsds(cut_quarter(tmp_path, {SEMPRA}))
    write_fsds(BatchWriter(graph, batch_size=500, workers=2), d)
    got = graph.read(
        "MATCH (:Filing {adsh: $a})-[:REPORTS]->(x:Fact) OPTIONAL MATCH (c:Chunk)-[:EVIDENCE_FOR]->(x) "
        "RETURN count(x) AS facts, count(c) AS chunks",
        {"a": SEMPRA},
    )
    assert got == [{"facts": d.counts["kept"], "chunks": 0}] and d.counts["coregistrant"] == d.counts["kept"]
