"""Hybrid retrieval (retrieval/text/hybrid.py) on real TAT-QA text with the real MiniLM model and the real Neo4j."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import bm25s
import numpy as np
import pytest
from conftest import minilm_dir

from finkg.eval.retrieval import ingest_corpus
from ingest.datasets.tatqa import read_tatqa, scoped_id, table_chunk_id
from kg import Graph
from retrieval.embeddings import make_embedder
from retrieval.text.documents import Passage
from retrieval.text.hybrid import (
    RRF_K,
    VECTOR_INDEX,
    HybridError,
    HybridIndex,
    minmax,
    read_alpha,
    store_alpha,
    tokenize,
)

SAMPLE = Path(__file__).parent / "data" / "tatqa_dev_sample.json"
DELETE_CORPUS = (
    "MATCH (n) WHERE (n:Chunk OR n:Document) AND n.corpus = $corpus DETACH DELETE n "
    "WITH count(*) AS gone MATCH (c:Corpus {name: $corpus}) DETACH DELETE c"
)


@pytest.fixture(scope="module")
def embedder():
    return make_embedder(minilm_dir())


@pytest.fixture(scope="module")
def contexts():
    return read_tatqa(SAMPLE)


@pytest.fixture(scope="module")
def passages(contexts):
    """Every table and paragraph of the sample, as chunks (real text); the two first contexts get
    availability times a day apart."""
    out = []
    for i, c in enumerate(contexts):
        day = f"2020-01-0{i + 1}T12:00:00Z"
        out.append(
            Passage(
                table_chunk_id(c.table_uid),
                "\n".join(" | ".join(r) for r in c.table),
                f"doc{i}",
                "annual_report" if i % 2 == 0 else "news",
                day,
            )
        )
        out += [Passage(p.id, p.text, f"doc{i}", "annual_report" if i % 2 == 0 else "news", day) for p in c.passages]
    return out


@pytest.fixture(scope="module")
def index(passages, embedder):
    return HybridIndex(passages, embedder.encode([p.text for p in passages]), embedder)


QUERY = "What was the change in revenue between 2019 and 2018?"


def test_bm25_within_the_whole_pool_equals_bm25s(index, passages):
    """With the whole corpus as the pool, finkg's BM25 gives bm25s's scores (Lucene variant, k1 1.5, b 0.75)."""
    ref = bm25s.BM25()
    ref.index(
        bm25s.tokenize([p.text for p in index.passages], stopwords="en", show_progress=False), show_progress=False
    )
    expected = ref.get_scores(tokenize([QUERY])[0])
    got = index.bm25(QUERY, index.pool())
    assert got.max() > 0
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_minmax_within_the_pool_by_hand(index):
    """Min-max over a three-chunk pool, checked against the raw scores by hand."""
    ids = [p.id for p in index.passages[:3]]
    hits = index.hits(QUERY, k=3, alpha=0.3, chunk_ids=ids)
    assert len(hits) == 3
    sparse = [h.sparse for h in hits]
    dense = [h.dense for h in hits]
    lo, hi = min(sparse), max(sparse)
    dlo, dhi = min(dense), max(dense)
    for h in hits:
        sn = (h.sparse - lo) / (hi - lo) if hi > lo else 0.0
        dn = (h.dense - dlo) / (dhi - dlo)
        assert h.sparse_norm == pytest.approx(sn)
        assert h.dense_norm == pytest.approx(dn)
        assert h.score == pytest.approx(0.3 * dn + 0.7 * sn)
    assert sorted(h.dense_norm for h in hits)[0] == 0.0 and max(h.dense_norm for h in hits) == 1.0
    assert minmax(np.array([2.0, 2.0])).tolist() == [0.0, 0.0]  # constant: no information
    assert minmax(np.array([1.0, 3.0, 2.0])).tolist() == [0.0, 1.0, 0.5]


def test_alpha_zero_and_one_reduce_to_sparse_and_dense(index, embedder):
    n = len(index)
    sparse_only = index.hits(QUERY, k=n, alpha=0.0)
    bm25 = index.bm25(QUERY, index.pool())
    expected = sorted(range(n), key=lambda i: (-bm25[i], i))
    assert [h.passage.id for h in sparse_only] == [index.passages[i].id for i in expected]
    dense_only = index.hits(QUERY, k=n, alpha=1.0)
    cos = index.vectors @ embedder.encode([QUERY])[0]
    expected = sorted(range(n), key=lambda i: (-cos[i], i))
    assert [h.passage.id for h in dense_only] == [index.passages[i].id for i in expected]
    assert [h.rank for h in dense_only] == list(range(1, n + 1))


def test_rrf_by_hand(index):
    ids = [p.id for p in index.passages[:4]]
    hits = index.hits(QUERY, k=4, fusion="rrf", chunk_ids=ids)
    sparse = {h.passage.id: h.sparse for h in hits}
    dense = {h.passage.id: h.dense for h in hits}
    order = [p.id for p in index.passages[:4]]  # pool order breaks ties
    s_rank = {
        c: r + 1
        for r, c in enumerate(sorted((c for c in order if sparse[c] > 0), key=lambda c: (-sparse[c], order.index(c))))
    }
    d_rank = {c: r + 1 for r, c in enumerate(sorted(order, key=lambda c: (-dense[c], order.index(c))))}
    for h in hits:
        want = 1 / (RRF_K + d_rank[h.passage.id]) + (
            1 / (RRF_K + s_rank[h.passage.id]) if h.passage.id in s_rank else 0
        )
        assert h.score == pytest.approx(want)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_a_document_one_second_after_as_of_is_never_scored(passages, embedder):
    """A chunk available one second after as_of whose text IS the query: absent, and the pool's scores are
    exactly those of an index that never held it (so it shaped no BM25 statistic either)."""
    as_of = datetime(2020, 1, 2, 12, 0, 0, tzinfo=UTC)
    future = Passage(
        "future-chunk", QUERY, "future-doc", "news", (as_of + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    )
    undated = Passage("undated-chunk", QUERY, "undated-doc", "news", None)
    both = [*passages, future, undated]
    index = HybridIndex(both, embedder.encode([p.text for p in both]), embedder)
    assert index.hits(QUERY, k=1)[0].passage.id in (
        "future-chunk",
        "undated-chunk",
    )  # without as_of: the exact match wins
    hits = index.hits(QUERY, k=len(both), as_of=as_of)
    got = {h.passage.id for h in hits}
    assert "future-chunk" not in got and "undated-chunk" not in got
    assert got == {p.id for p in passages if p.available_at <= "2020-01-02T12:00:00Z"}
    past = [p for p in passages if p.available_at <= "2020-01-02T12:00:00Z"]
    alone = HybridIndex(past, embedder.encode([p.text for p in past]), embedder)
    ref = {h.passage.id: (h.sparse, h.score) for h in alone.hits(QUERY, k=len(past))}
    for h in hits:
        assert h.sparse == pytest.approx(ref[h.passage.id][0]) and h.score == pytest.approx(
            ref[h.passage.id][1], abs=1e-4
        )
    # at exactly the availability time the chunk is in
    at = index.hits(QUERY, k=1, as_of=as_of + timedelta(seconds=1))
    assert at[0].passage.id == "future-chunk"
    with pytest.raises(HybridError, match="timezone-aware"):
        index.hits(QUERY, as_of=datetime(2020, 1, 2))


def test_restriction_applies_before_scoring(index, passages, embedder):
    news = [p for p in passages if p.source_family == "news"]
    hits = index.hits(QUERY, k=50, families=["news"])
    assert {h.passage.id for h in hits} == {p.id for p in news}
    alone = HybridIndex(news, embedder.encode([p.text for p in news]), embedder)
    ref = {h.passage.id: h for h in alone.hits(QUERY, k=50)}
    for h in hits:  # normalization and BM25 statistics are the restricted pool's own
        assert h.sparse == pytest.approx(ref[h.passage.id].sparse)
        assert h.sparse_norm == pytest.approx(ref[h.passage.id].sparse_norm)
        assert h.dense_norm == pytest.approx(ref[h.passage.id].dense_norm, abs=1e-4)  # float32 re-encoding
    assert max(h.sparse_norm for h in hits) == 1.0
    assert {h.passage.document for h in index.hits(QUERY, k=50, documents=["doc1"])} == {"doc1"}
    assert index.hits(QUERY, k=5, chunk_ids=[]) == []
    assert index.hits(QUERY, k=5, chunk_ids=["no-such-chunk"]) == []


def test_errors(passages, embedder):
    with pytest.raises(HybridError, match="no chunks"):
        HybridIndex([], None, embedder)
    sparse_only = HybridIndex(passages)
    assert sparse_only.bm25(QUERY, sparse_only.pool()).max() > 0
    with pytest.raises(HybridError, match="embedder"):
        sparse_only.hits(QUERY)
    idx = HybridIndex(passages, np.zeros((len(passages), 4), dtype=np.float32), embedder)
    with pytest.raises(HybridError, match="alpha"):
        idx.hits(QUERY, alpha=1.5, qvec=np.zeros(4, dtype=np.float32))


@pytest.fixture
def corpus(graph: Graph, contexts):
    name = f"test-hybrid-{uuid.uuid4().hex[:8]}"
    ingest_corpus(graph, contexts, name, "tatqa:sample")
    yield name
    graph.run_autocommit(DELETE_CORPUS, {"corpus": name})


def test_from_graph_stores_embeddings_and_reads_them_back(graph: Graph, corpus, contexts, embedder):
    index = HybridIndex.from_graph(graph, embedder, corpus=corpus, kinds=None)
    n_chunks = sum(1 + len(c.passages) for c in contexts)
    assert len(index) == n_chunks
    again = HybridIndex.from_graph(graph, embedder, corpus=corpus, kinds=None)  # read, not re-encoded
    np.testing.assert_allclose(again.vectors, index.vectors, atol=1e-6)
    direct = embedder.encode([p.text for p in index.passages])
    np.testing.assert_allclose(index.vectors, direct, atol=1e-5)
    assert (
        graph.read("SHOW INDEXES YIELD name, type WHERE name = $n RETURN type", {"n": VECTOR_INDEX})[0]["type"]
        == "VECTOR"
    )
    table = scoped_id(corpus, table_chunk_id(contexts[0].table_uid))
    assert table in {p.id for p in index.passages}
    assert index.alpha == 0.5  # no sweep stored yet: seed 000's equal weights
    with pytest.raises(HybridError, match="no chunks"):
        HybridIndex.from_graph(graph, embedder, corpus=corpus + "-missing")


def test_alpha_is_stored_on_the_corpus_and_read_back(graph: Graph, corpus, embedder):
    moment = datetime(2024, 5, 1, 8, 30, tzinfo=UTC)
    store_alpha(graph, corpus, 0.375, "ndcg@10", 18, 0.81, 0.025, moment, embedder.identity)
    got = read_alpha(graph, corpus)
    assert got["hybrid_alpha"] == 0.375 and got["hybrid_alpha_metric"] == "ndcg@10"
    assert got["hybrid_alpha_queries"] == 18 and got["hybrid_alpha_swept_at"] == "2024-05-01T08:30:00Z"
    assert HybridIndex.from_graph(graph, embedder, corpus=corpus, kinds=None).alpha == 0.375
    store_alpha(graph, corpus, 0.5, "ndcg@10", 18, 0.8, 0.025, moment)  # a new sweep replaces it
    assert read_alpha(graph, corpus)["hybrid_alpha"] == 0.5
    assert graph.read("MATCH (c:Corpus {name: $n}) RETURN count(c) AS n", {"n": corpus})[0]["n"] == 1
    with pytest.raises(HybridError, match="alpha"):
        store_alpha(graph, corpus, -0.1, "ndcg@10", 1, 0.0, 0.025)
    assert read_alpha(graph, corpus + "-none") is None
