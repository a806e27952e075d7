"""Verified risk memos on the real 2009q3 filings shipped in data/ (seed 003), against the real Neo4j.

The module loads data/sec-fsds/2009q3.zip once (idempotent: nothing changes when it is there).
Figures asserted here were read by hand from the archive's num.txt / sub.txt.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli import finkg

from finkg.eval.memos import evaluate, mutation_test, mutations
from finkg.pipelines import sec as pipelines
from finkg.pipelines.memos import build_context
from generation.memo.claims import RiskThresholds
from generation.memo.systems import generate_memo
from generation.verify.claims import REMOVED, verify_body
from retrieval.facts.fact_map import list_filings, read_fact_maps
from retrieval.text.tfidf import EvidenceIndex, memo_query

QUARTER = Path(__file__).resolve().parents[1] / "data" / "sec-fsds" / "2009q3.zip"
DAILY = QUARTER.with_name("20250404.zip")
WALMART = "0001193125-09-189177"  # 10-Q, period 2009-07-31; reports Revenues and SalesRevenueNet
ILLINOIS_TOOL = "0000049826-09-000066"  # no Liabilities tag: derived with minority interest
BBT = "0000092230-09-000076"  # BB&T, SIC 6021: unclassified balance sheet
CORNING = "0000024741-09-000027"  # revenue tagged SalesRevenueGoodsNet only


@pytest.fixture(scope="module")
def loaded(graph, settings):
    if len(list_filings(graph, source=QUARTER.name)) != 435:
        pipelines.ingest_sec(graph, settings, [QUARTER])
    return graph


@pytest.fixture(scope="module")
def maps(loaded):
    return {fm.adsh: fm for fm in read_fact_maps(loaded, [WALMART, ILLINOIS_TOOL, BBT, CORNING])}


@pytest.fixture(scope="module")
def ctx(loaded, settings):
    return build_context(loaded, settings, ["structured"])


def test_canonical_revenue_follows_the_documented_synonym_order(maps):
    wmt = maps[WALMART]
    assert wmt.facts["Revenues"].tag == "Revenues" and wmt.facts["Revenues"].value == 100_910_000_000
    assert wmt.alternatives["Revenues"] == ["SalesRevenueNet"]
    assert (wmt.facts["Revenues"].ddate, wmt.facts["Revenues"].qtrs) == ("20090731", 1)
    assert maps[CORNING].facts["Revenues"].tag == "SalesRevenueGoodsNet"


def test_ten_q_cash_flow_is_year_to_date_and_ratios_pair_spans(maps, ctx):
    wmt = maps[WALMART]
    ocf = wmt.facts["OperatingCashFlow"]
    assert (ocf.qtrs, ocf.value) == (2, 9_895_000_000)  # no 3-month cash-flow figure in a 10-Q
    assert wmt.at_span("Revenues", 2).value == 195_152_000_000
    assert (
        "Operating-cash-flow margin for the six months ended 2009-07-31 was 5.1%"
        in generate_memo("structured", wmt, ctx).body
    )


def test_derived_liabilities_are_marked_with_their_components(maps):
    itw = maps[ILLINOIS_TOOL]
    liab = itw.facts["Liabilities"]
    assert liab.derived and liab.tag == "derived"
    assert liab.formula == "LiabilitiesAndStockholdersEquity - StockholdersEquity - MinorityInterest"
    assert [(sign, f.tag) for sign, f in liab.components] == [
        (1, "LiabilitiesAndStockholdersEquity"),
        (-1, "StockholdersEquity"),
        (-1, "MinorityInterest"),
    ]
    assert liab.value == sum(sign * f.value for sign, f in liab.components) == 6_803_560_000
    assert liab.cited_keys == [f.key for _, f in liab.components]


def test_a_bank_gets_not_applicable_never_an_invented_current_ratio(maps, ctx):
    bank = maps[BBT]
    assert "CurrentAssets" not in bank.facts and "unclassified balance sheet" in bank.not_applicable["CurrentAssets"]
    memo = generate_memo("structured", bank, ctx)
    current = next(c for c in memo.claims if c.name == "current_ratio")
    assert current.kind == "not_applicable" and current.status == "not_applicable" and current.value is None
    assert "Current ratio: not applicable; the filer presents an unclassified balance sheet" in memo.body


def test_structured_memo_states_exact_cited_numbers(maps, ctx):
    memo = generate_memo("structured", maps[WALMART], ctx)
    assert "- Revenue was $100,910 million for the three months ended 2009-07-31 [1]." in memo.body
    assert "Operating cash flow was $9,895 million for the six months ended 2009-07-31 [3]" in memo.body
    assert "- Current ratio as of 2009-07-31 was 0.86x [9]." in memo.body
    assert "0001193125-09-189177:104169:Revenues:20090731:1:USD" in memo.markdown
    counts = memo.verification.counts()
    assert counts["repaired"] == counts["unsupported"] == 0 and counts["exact"] > 20
    assert all(c.status == "exact" and c.citation_status in ("correct", "") for c in memo.claims)
    assert memo.risk_label == "Medium"  # current ratio 0.86 < 1.0 is the one active test


def test_verifier_repairs_wrong_numbers_and_removes_unsupported_ones(maps, ctx):
    fm = maps[WALMART]
    memo = generate_memo("structured", fm, ctx)
    body = (
        memo.body.replace("Revenue was $100,910 million", "Revenue was $100.9 billion")  # within 0.01%: exact
        .replace("Net income was $3,442 million", "Net income was $(3,442) million")  # sign
        .replace("$9,895 million", "$9,895 billion")  # scale
        .replace("was 0.86x [9]", "was 1.86x [9]")  # ratio
        .replace("Desk-risk label: Medium", "Desk-risk label: Low")  # label
        .replace("as of 2009-07-31 [4]", "as of 2008-07-31 [4]")  # period
        .replace("[8].", "[8]. Backlog grew by $12.5 million.")
    )  # unsupported
    claims = [type(c)(**{**c.__dict__}) for c in memo.claims]
    v = verify_body(body, claims, fm, RiskThresholds())
    assert "Revenue was $100.9 billion" in v.body  # 100.9e9 vs 100.91e9: 0.0099% <= 0.01%
    assert "Net income was $3,442 million" in v.body
    assert "Operating cash flow was $9,895 million" in v.body
    assert "was 0.86x [9]" in v.body and "Desk-risk label: Medium" in v.body
    assert "as of 2009-07-31 [4]" in v.body
    assert f"Backlog grew by {REMOVED}." in v.body
    fields = sorted(r["field"] for r in v.repairs)
    assert fields == ["currency", "currency", "currency", "date", "label", "ratio"]
    scale = next(r for r in v.repairs if r["original"] == "$9,895 billion")
    assert scale["gold"] == 9_895_000_000 and scale["keys"] == [
        "0001193125-09-189177:104169:NetCashProvidedByUsedInOperatingActivities:20090731:2:USD"
    ]
    by_name = {c.name: c for c in v.claims}
    assert by_name["risk_label"].status == "repaired" and by_name["current_ratio"].status == "repaired"
    assert by_name["Revenues"].status == "exact"


def test_check_only_mode_changes_nothing(maps, ctx):
    fm = maps[WALMART]
    memo = generate_memo("structured", fm, ctx)
    wrong = memo.body.replace("$100,910 million", "$110,910 million")
    v = verify_body(wrong, [type(c)(**c.__dict__) for c in memo.claims], fm, RiskThresholds(), repair=False)
    assert v.body == wrong and v.repairs == []
    assert [c.status for c in v.checks if c.text == "$110,910 million"] == ["repaired"]


def test_mutation_test_catches_and_restores_every_injected_error(maps, ctx):
    fm = maps[WALMART]
    memo = generate_memo("structured", fm, ctx)
    kinds = {k for k, _, _ in mutations(memo.body)}
    assert kinds == {"digit", "scale", "sign", "period", "span"}
    for row in mutation_test([(memo, fm)], ctx):
        assert row["injected"] > 0 and row["caught"] == row["injected"] == row["restored"], row


def test_text_retrieval_finds_the_filing_and_its_comparatives(loaded, maps):
    from retrieval.text.tfidf import load_evidence

    index = EvidenceIndex([c for c in load_evidence(loaded) if c["adsh"] in maps])
    hits = index.hits(memo_query(maps[WALMART].filing), 30, as_of=maps[WALMART].available_at)
    assert len(hits) == 30 and all(h.adsh == WALMART for h in hits[:10])
    assert [h.rank for h in hits] == list(range(1, 31)) and hits[0].score >= hits[-1].score
    keys = {h.fact_key for h in hits}
    assert maps[WALMART].facts["CurrentAssets"].key in keys
    assert any(":20080731:" in k for k in keys)  # comparatives compete: the Text RAG's trap


def test_four_systems_on_the_daily_file(loaded, settings):
    pipelines.ingest_sec(loaded, settings, [DAILY])  # idempotent; makes it the daily filings' source
    result = evaluate(loaded, settings, source="20250404.zip")
    s = result.summary
    assert result.tasks >= 5
    assert s["structured"]["numeric_exact"] == 1.0 and s["structured"]["citation_precision"] == 1.0
    assert s["structured"]["hallucinated_per_memo"] == 0 and s["structured"]["risk_label_accuracy"] == 1.0
    assert s["verifier-rag"]["numeric_exact"] == 1.0
    assert s["no-rag"]["citation_precision"] == 0.0 and s["no-rag"]["numeric_exact"] < 0.5
    assert s["text-rag"]["numeric_exact"] < 1.0  # copies comparatives: the verifier's reason to exist
    for row in result.mutation:
        assert row["caught"] == row["injected"], row


def test_memo_cli_writes_files_and_the_audit_trail_then_resumes(loaded, tmp_path):
    out = finkg("memo", "--accession", WALMART, "--out", str(tmp_path), "--redo")
    assert out.returncode == 0, out.stderr
    md = (tmp_path / "structured" / f"{WALMART}.md").read_text()
    assert md.startswith("# Desk-risk memo: WAL MART STORES INC") and "## Evidence" in md
    rows = [json.loads(x) for x in (tmp_path / "structured" / "claims.jsonl").read_text().splitlines()]
    assert len(rows) == 13 and {r["status"] for r in rows} == {"exact"}
    assert (tmp_path / "structured" / "claims.csv").read_text().startswith("memo_id,system,adsh,n,kind")
    trail = loaded.read(
        "MATCH (m:Memo {id: $id})-[:HAS_CLAIM]->(c:Claim {name: 'Revenues'})-[:CITES]->(x:Fact)"
        "<-[:REPORTS]-(f:Filing)<-[:FILED]-(co:Company) "
        "RETURN m.status AS status, c.value AS value, x.value AS fact, f.adsh AS adsh, co.name AS company",
        {"id": f"structured:{WALMART}"},
    )
    assert trail == [
        {
            "status": "done",
            "value": 100_910_000_000.0,
            "fact": 100_910_000_000.0,
            "adsh": WALMART,
            "company": "WAL MART STORES INC",
        }
    ]
    n = loaded.read(
        "MATCH (:Memo {id: $id})-[:HAS_CLAIM]->(c:Claim) RETURN count(c) AS n", {"id": f"structured:{WALMART}"}
    )
    assert n == [{"n": 13}]
    stamp = loaded.read("MATCH (m:Memo {id: $id}) RETURN m.written_at AS t", {"id": f"structured:{WALMART}"})
    again = finkg("memo", "--accession", WALMART, "--out", str(tmp_path))  # resumes: nothing to redo
    assert again.returncode == 0, again.stderr
    assert loaded.read("MATCH (m:Memo {id: $id}) RETURN m.written_at AS t", {"id": f"structured:{WALMART}"}) == stamp


def test_memo_cli_names_an_unknown_accession(loaded, tmp_path):
    out = finkg("memo", "--accession", "0000000000-00-000000", "--out", str(tmp_path))
    assert out.returncode == 2
    assert "0000000000-00-000000" in out.stderr and "not in the graph" in out.stderr
    assert "Traceback" not in out.stderr


def test_xbrl_decimals_widen_the_tolerance_and_reach_the_memo(loaded, settings, ctx):
    from generation.verify.claims import fact_tolerance

    assert fact_tolerance(3_000_000, None) == 300.0  # the paper's 0.01%
    assert fact_tolerance(3_000_000, -6) == 500_000.0  # the source itself is rounded to millions
    tsla = Path(__file__).resolve().parents[1] / "data" / "sec-xbrl-instances" / "tsla-20240630-10q.xml"
    pipelines.ingest_xbrl(loaded, settings, [tsla])
    adsh = next(f["adsh"] for f in list_filings(loaded, source=tsla.name))
    fm = next(read_fact_maps(loaded, [adsh]))
    revenue = fm.facts["Revenues"]
    assert (revenue.value, revenue.qtrs, revenue.decimals) == (25_500_000_000, 1, -6)
    memo = generate_memo("structured", fm, ctx)
    claim = next(c for c in memo.claims if c.name == "Revenues")
    assert claim.decimals == -6 and claim.status == "exact"
    assert "Revenue was $25,500 million for the three months ended 2024-06-30 [1]." in memo.body
    assert fact_tolerance(revenue.value, revenue.decimals) == 2_550_000.0  # here 0.01% is the wider one


def test_prose_without_markers_keeps_true_numbers_and_fixes_a_wrong_label(maps, ctx):
    fm = maps[WALMART]
    memo = generate_memo("structured", fm, ctx)
    prose = (
        "Walmart's current ratio as of 2009-07-31 was 0.86x. Revenue was $100,910 million for the "
        "quarter. Given high leverage concerns the desk-risk label is low. Inventory rose by $7.5 million."
    )
    v = verify_body(prose, [type(c)(**c.__dict__) for c in memo.claims], fm, RiskThresholds())
    assert "as of 2009-07-31 was 0.86x" in v.body and "$100,910 million" in v.body
    assert "the desk-risk label is Medium" in v.body and "high leverage" in v.body
    assert f"Inventory rose by {REMOVED}." in v.body
    assert sorted(r["field"] for r in v.repairs) == ["currency", "label"]


def test_llm_system_without_a_configured_backend_says_which_settings(loaded, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FINKG_LLM_")}
    out = subprocess.run(
        [sys.executable, "-m", "finkg", "memo", "-a", WALMART, "-s", "structured-llm", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "COLUMNS": "200"},
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "[llm] backend" in out.stderr and "FINKG_LLM_MODEL_PATH" in out.stderr
