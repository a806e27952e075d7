"""One retrieval contract with as_of everywhere (issue 16), against the real Neo4j.

Per retriever: evidence dated after ``as_of`` (a later tweet, a later filing's facts and evidence sentences, a
later indicator observation, feedback matured later) never reaches its output, nor the memo or report built
for the earlier date, while the earlier item does (so each test can fail); every retriever refuses
``as_of=None`` and is a :class:`retrieval.contract.Retriever`. (The later FOMC triple of TFR is covered in
tests/test_tfr_retrieval.py and tests/test_reports.py.)
"""

from __future__ import annotations

import uuid
from datetime import date
from pathlib import Path

import pytest

from finkg.pipelines import sec as pipelines
from finkg.pipelines.memos import build_context
from finkg.pipelines.reports import ReportContext, ReportQuestion
from generation.memo.claims import RiskThresholds
from generation.memo.drafting import Prior
from generation.memo.systems import MemoContext, generate_memo
from retrieval.contract import AsOfRequired, Evidence, Retriever
from retrieval.facts.fact_map import FactMap, ResolvedFact, filing_available_at, list_filings, read_fact_maps
from retrieval.facts.lookup import CompanyFactRetriever, IndicatorFactRetriever
from retrieval.knowledge import KnowledgeRetriever
from retrieval.memory.source_memory import Feedback, MemoryReranker, SourceMemory
from retrieval.text.hybrid import HybridIndex
from retrieval.text.tfidf import EvidenceIndex, load_evidence

QUARTER = Path(__file__).resolve().parents[1] / "data" / "sec-fsds" / "2009q3.zip"
CF = 1324404  # CF Industries: a 10-Q and, two days later, its 10-Q/A (same figures, another accession)
CF_10Q = "0001047469-09-007107"  # accepted 2009-08-03 14:58 ET = 18:58 UTC
CF_10QA = "0001104659-09-047214"  # accepted 2009-08-05 12:05 ET

EARLY, LATE = "2015-01-01T14:00:00Z", "2015-02-01T14:00:00Z"
AS_OF = "2015-01-15"  # between the two tweets
TWEETS = [
    ("early", "social", EARLY, "$AAPL Apple shares rise after record iPhone sales in the holiday quarter"),
    ("news", "news", "2014-12-20T10:00:00Z", "Apple iPhone sales expected to beat estimates, analysts say"),
    ("late", "social", LATE, "$AAPL Apple shares fall after iPhone sales warning for the next quarter"),
]
FREQUENCIES = {h: {-1: 0.3, 0: 0.4, 1: 0.3} for h in ("1D", "3D", "5D")}


# --------------------------------------------------------------------------- the text corpus (tweets)


@pytest.fixture
def corpus(graph, label):
    """Three dated chunks (two tweets a month apart, one news item) of a corpus of their own."""
    name = f"contract-{uuid.uuid4().hex[:8]}"
    rows = [{"id": f"{name}:{i}", "family": f, "at": at, "text": t, "doc": f"{name}:doc:{i}"} for i, f, at, t in TWEETS]
    graph.write(
        f"UNWIND $rows AS r CREATE (d:Document:{label} {{id: r.doc, corpus: $corpus, source_family: r.family, "
        "tickers: ['AAPL'], published_at: r.at}) "
        f"CREATE (d)-[:HAS_CHUNK]->(:Chunk:{label} {{id: r.id, corpus: $corpus, kind: 'text', text: r.text, "
        "document_id: r.doc, source_family: r.family, available_at: r.at})",
        {"rows": rows, "corpus": name},
    )
    return name


@pytest.fixture
def hybrid(graph, corpus, embedder):
    return HybridIndex.from_graph(graph, embedder, corpus=corpus, kinds=None)


def test_hybrid_never_scores_a_later_tweet(hybrid, corpus):
    query = "Apple shares after iPhone sales"
    early = hybrid.search(query, as_of=AS_OF, k=10)
    assert {e.id for e in early} == {f"{corpus}:early", f"{corpus}:news"}
    assert all(isinstance(e, Evidence) and e.kind == "chunk" and e.available_at <= f"{AS_OF}T23:59:59Z" for e in early)
    later = hybrid.search(query, as_of="2015-03-01", k=10)
    assert f"{corpus}:late" in {e.id for e in later}  # the filter, not the data, kept it out
    # filtered before scoring: the early scores are those of an index that never held the later tweet
    alone = hybrid.hits(query, k=10, as_of=f"{AS_OF}T23:59:59Z")
    assert [(h.passage.id, h.score) for h in alone] == [(e.id, e.score) for e in early]
    assert [e.id for e in hybrid.search(query, as_of=AS_OF, filters={"families": ["news"]})] == [f"{corpus}:news"]


def test_memory_reranker_sees_neither_later_tweets_nor_later_feedback(graph, hybrid, corpus):
    run = f"contract{uuid.uuid4().hex[:8]}"
    memory = SourceMemory(graph, run, FREQUENCIES)
    try:
        early_id, late_id = f"{corpus}:early", f"{corpus}:late"
        news_id = f"{corpus}:news"
        memory.record(
            [  # a correct call citing news, matured before as_of; a wrong one citing social, matured after
                Feedback("a1", "Earnings", "1D", 1, 1, "2015-01-05T21:00:00Z", [news_id], {news_id: "news"}),
                Feedback("a2", "Earnings", "1D", 1, -1, "2015-02-05T21:00:00Z", [late_id], {late_id: "social"}),
            ]
        )
        assert memory.apply_matured("2015-03-01T00:00:00Z").applied == 2
        assert set(memory.cells_as_of(AS_OF, "Earnings")) == {("news", "Earnings", "1D")}
        assert set(memory.cells("Earnings")) == {("news", "Earnings", "1D"), ("social", "Earnings", "1D")}

        reranker = MemoryReranker(hybrid, memory, "Earnings", horizons=("1D",))
        out = reranker.search("Apple shares after iPhone sales", as_of=AS_OF, k=5)
        assert {e.id for e in out} == {early_id, news_id}
        assert all(e.metadata["reranker"] == "source-memory" for e in out)
        news = next(e for e in out if e.id == news_id)
        assert news.score > news.metadata["relevance"]  # the early, matured credit moved it
        later = reranker.search("Apple shares after iPhone sales", as_of="2015-03-01", k=5)
        assert late_id in {e.id for e in later}
        social = next(e for e in later if e.id == late_id)
        assert social.score < social.metadata["relevance"]  # the later (wrong) feedback counts only then
    finally:
        memory.reset()


# --------------------------------------------------------------------------- filings (the real 2009q3 archive)


@pytest.fixture(scope="module")
def loaded(graph, settings):
    if len(list_filings(graph, source=QUARTER.name)) != 435:
        pipelines.ingest_sec(graph, settings, [QUARTER])
    return graph


@pytest.fixture(scope="module")
def cf(loaded):
    maps = {fm.adsh: fm for fm in read_fact_maps(loaded, [CF_10Q, CF_10QA])}
    return maps[CF_10Q], maps[CF_10QA]


def test_a_filing_is_public_at_its_edgar_acceptance(cf):
    early, late = cf
    assert early.available_at == "2009-08-03T18:58:00Z" and late.available_at == "2009-08-05T16:05:00Z"
    assert filing_available_at(None, "20250321") == "2025-03-21T23:59:59Z"  # companyfacts: filing date
    assert filing_available_at(None, None) is None  # an XBRL instance: undated


def test_company_facts_of_a_later_filing_never_reach_the_lookup_or_the_report(loaded, settings):
    retriever = CompanyFactRetriever(loaded)
    early = retriever.search(str(CF), as_of="2009-08-04", k=None)
    assert early and all(CF_10Q in e.id and e.kind == "fact" for e in early)
    assert {e.available_at for e in early} == {"2009-08-03T18:58:00Z"}
    later = retriever.search(str(CF), as_of="2009-08-06")
    assert later and all(CF_10QA in e.id for e in later)
    assert retriever.search(str(CF), as_of="2009-08-03T18:57:59Z") == []  # a second before its acceptance

    ctx = ReportContext(loaded, settings, None, None, "none")  # type: ignore[arg-type]  # F needs no model
    q = ReportQuestion(id="cf", question="How did CF Industries do?", as_of=date(2009, 8, 4), companies=[str(CF)])
    facts, unmatched, calls = ctx.facts_with_calls(q)
    sec = [f for f in facts if f.source.startswith("sec:")]
    assert sec and unmatched == [] and all(CF_10Q in f.id and CF_10QA not in f.id for f in sec)
    assert {(c["retriever"], c["as_of"], c["as_of_from"]) for c in calls} >= {
        ("company-facts", "2009-08-04T23:59:59Z", "question")
    }
    assert all(c["as_of"] == "2009-08-04T23:59:59Z" for c in calls)


def test_text_rag_memo_never_reads_a_later_filing(loaded, settings, cf):
    early, late = cf
    ctx = build_context(loaded, settings, ["text-rag"])
    memo = generate_memo("text-rag", early, ctx)
    assert memo.as_of == "2009-08-03T18:58:00Z"
    assert memo.hits and all(h.adsh != CF_10QA and h.available_at <= memo.as_of for h in memo.hits)
    assert any(h.adsh == CF_10Q for h in memo.hits)
    cited = {k for c in memo.claims for k in c.citations}
    assert cited and not any(CF_10QA in k for k in cited)
    assert generate_memo("text-rag", late, ctx).as_of == late.available_at
    # a query naming the amendment still gets only the original as of the original's acceptance, and the
    # amendment (ranked first) two days later: the cut is time, not the query or the accession
    index = EvidenceIndex([c for c in load_evidence(loaded) if c["adsh"] in (CF_10Q, CF_10QA)])
    query = f"CF Industries accession {CF_10QA} Revenues"
    found = index.search(query, as_of=early.available_at, k=50)
    assert len(found) == 50 and {e.metadata["adsh"] for e in found} == {CF_10Q}
    assert index.search(query, as_of=late.available_at, k=1)[0].metadata["adsh"] == CF_10QA


def test_no_rag_prior_counts_only_filings_public_at_the_memo(cf):
    early, _ = cf

    def later_filing(revenue: float) -> FactMap:  # the same company, two months later, another figure
        fact = ResolvedFact("Revenues", "Revenues", "k", "c", revenue, "20090930", 1)
        filing = {**early.filing, "adsh": "later", "accepted": "2009-10-01 09:00:00.0"}
        return FactMap(filing, facts={"Revenues": fact})

    prior = Prior([early, later_filing(5e9)], min_group=1)
    revenue = early.facts["Revenues"].value
    assert prior.value("Revenues", early.filing["sic"], as_of=early.available_at) == revenue
    assert prior.value("Revenues", early.filing["sic"], as_of="2009-12-31") == (revenue + 5e9) / 2
    memo = generate_memo("no-rag", early, MemoContext(RiskThresholds(), prior))
    assert memo.as_of == early.available_at
    assert next(c.value for c in memo.claims if c.name == "Revenues") == revenue


# --------------------------------------------------------------------------- indicator observations


def test_indicator_facts_never_use_a_later_observation(graph, label):
    code = f"test_{uuid.uuid4().hex[:8]}"
    graph.write(
        f"CREATE (i:Indicator:{label} {{code: $code, name: 'Test yield', unit: '%', frequency: 'daily', "
        "category: 'yield', source_function: 'test'}) "
        "WITH i UNWIND $obs AS o "
        f"CREATE (i)-[:HAS_OBSERVATION]->(:Observation:{label} {{id: $code + ':' + o.day, date: date(o.day), "
        "value: o.value, available_at: o.at})",
        {
            "code": code,
            "obs": [
                {"day": "2015-06-29", "value": 3.51, "at": "2015-06-29T10:00:00Z"},
                {"day": "2015-06-30", "value": 3.73, "at": "2015-06-30T10:00:00Z"},
            ],
        },
    )
    retriever = IndicatorFactRetriever(graph, codes=[code])
    early = retriever.search("", as_of="2015-06-29T12:00:00Z")
    assert [e.id for e in early] == [f"akshare:{code}:2015-06-29:level"]
    assert "3.51" in early[0].text and not any("3.73" in e.text for e in early)
    assert early[0].available_at == "2015-06-29T10:00:00Z"
    later = retriever.search("", as_of="2015-06-30")
    assert later[0].id == f"akshare:{code}:2015-06-30:level" and "3.73" in later[0].text


# --------------------------------------------------------------------------- the contract itself


def test_every_retriever_is_one_and_refuses_without_as_of(graph, hybrid):
    memory = SourceMemory(graph, "contract-refusal", FREQUENCIES)
    rows = [{"id": "c1", "adsh": "a", "fact_key": "k", "text": "Revenues 1", "available_at": EARLY}]
    retrievers = [
        hybrid,
        MemoryReranker(hybrid, memory, "Earnings"),
        CompanyFactRetriever(graph),
        IndicatorFactRetriever(graph),
        EvidenceIndex(rows),
        KnowledgeRetriever("none"),
    ]
    for r in retrievers:
        assert isinstance(r, Retriever), type(r).__name__
        with pytest.raises(AsOfRequired):
            r.search("Apple", as_of=None)
    with pytest.raises(AsOfRequired):
        Prior([]).value("Revenues", None, as_of=None)
