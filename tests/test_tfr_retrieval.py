"""Cluster-weighted triple retrieval (seed 004, section 3.2) and its baselines, with the real MiniLM encoder
and the real Neo4j: the allocation arithmetic, exactly k results, cluster diversity against plain dense
retrieval, embeddings stored on the relationships (a second load encodes nothing), and the document
baselines (BM25, dense) over real FOMC sentences."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import minilm_dir

from generation.kgbuild.names import entity_id
from generation.kgbuild.resolution import write_entities, write_relations
from kg import BatchWriter
from retrieval.contract import AsOfRequired, Retriever
from retrieval.embeddings import make_embedder
from retrieval.knowledge import KnowledgeRetriever
from retrieval.text.documents import DocumentIndex, Passage
from retrieval.triples.tfr import Triple, TripleIndex, allocate, softmax

# Real triples from FOMC statements (2008-2015), in three clusters of meaning.
ROWS = [
    ("inflation", "indicator", "AFFECT", "household spending", "indicator", "c:price"),
    ("energy prices", "indicator", "AFFECT", "inflation", "indicator", "c:price"),
    ("rise in energy prices", "indicator_change", "AFFECT", "headline inflation", "indicator", "c:price"),
    ("commodity prices", "indicator", "AFFECT", "inflation expectations", "indicator", "c:price"),
    ("labor market conditions", "market_status", "INDICATE", "economic activity", "indicator", "c:labor"),
    ("unemployment rate", "indicator", "INDICATE", "labor market slack", "market_status", "c:labor"),
    ("job gains", "indicator_change", "BELONG_TO", "labor market", "indicator", "c:labor"),
    ("strains in financial markets", "market_status", "AFFECT", "credit conditions", "market_status", "c:credit"),
    (
        "tight credit conditions",
        "market_status",
        "MAY_LEAD_TO",
        "weaker economic growth",
        "indicator_change",
        "c:credit",
    ),
]


def test_softmax_and_allocation_give_exactly_k():
    w = softmax(np.array([0.8, 0.6, 0.2]), 0.1)
    assert w.sum() == pytest.approx(1.0) and w[0] > w[1] > w[2]
    with pytest.raises(ValueError):
        softmax(np.array([1.0]), 0)
    # k * w = [7.3, 2.4, 0.3] rounds to [7, 2, 0] = 9: one more to the largest shortfall (cluster 1: 0.4)
    assert allocate([0.73, 0.24, 0.03], [10, 10, 10], 10) == [7, 3, 0]
    # rounding up everywhere overshoots: [3.5, 3.5, 3] -> [4, 4, 3] = 11 -> remove from the most over-allocated
    assert sum(allocate([0.35, 0.35, 0.30], [9, 9, 9], 10)) == 10
    # a cluster cannot give more than it has in the top-n; the rest goes to the others
    assert allocate([0.9, 0.1], [2, 10], 5) == [2, 3]
    # fewer candidates than k: all of them
    assert allocate([0.5, 0.5], [1, 1], 5) == [1, 1]
    with pytest.raises(ValueError):
        allocate([1.0], [1, 2], 3)


@pytest.fixture(scope="module")
def embedder():
    return make_embedder(minilm_dir())


@pytest.fixture(scope="module")
def index(embedder):
    triples = [
        Triple(f"t{i}", rel, h, t, f"e{i}h", f"e{i}t", cluster, None)
        for i, (h, _ht, rel, t, _tt, cluster) in enumerate(ROWS)
    ]
    return TripleIndex(triples, embedder.encode([t.text for t in triples]), embedder)


def test_cluster_weighted_returns_exactly_k_best_first_within_clusters(index):
    got = index.cluster_weighted("How do energy prices affect inflation?", k=4, n=9, temperature=0.05)
    assert len(got) == 4 and len({s.triple.id for s in got}) == 4
    # the price cluster weighs most and comes first; within a cluster the order is by similarity
    assert got[0].triple.cluster == "c:price"
    for a, b in itertools.pairwise(got):
        if a.triple.cluster == b.triple.cluster:
            assert a.score >= b.score
    weights = {s.triple.cluster: s.cluster_weight for s in got}
    assert weights["c:price"] == max(weights.values())
    with pytest.raises(ValueError, match="top-n"):
        index.cluster_weighted("inflation", k=5, n=3, temperature=0.1)


def test_cluster_weighting_diversifies_where_dense_concentrates(index):
    q = "inflation and prices"
    dense = index.dense(q, 4)
    tfr = index.cluster_weighted(q, k=4, n=9, temperature=1.0)  # a flat softmax spreads k over the clusters
    assert {s.triple.cluster for s in dense} == {"c:price"}
    assert len({s.triple.cluster for s in tfr}) >= 2
    assert [s.score for s in dense] == sorted((s.score for s in dense), reverse=True)


# The source chunks' availability times: even rows come from a 2008 statement, odd rows from a 2015 one.
CHUNK_TIMES = {"tfrtest-chunk-2008": "2008-12-16T19:15:00Z", "tfrtest-chunk-2015": "2015-12-16T19:00:00Z"}


def test_triples_load_from_the_graph_and_keep_their_embeddings(graph, embedder):
    graph.run_autocommit("MATCH (e:Entity) WHERE e.id STARTS WITH 'indicator:tfrtest ' DETACH DELETE e")
    graph.run_autocommit("MATCH (e:Entity) WHERE e.name STARTS WITH 'tfrtest ' DETACH DELETE e")
    for cid, at in CHUNK_TIMES.items():
        graph.write("MERGE (c:Chunk {id: $id}) SET c.available_at = $at, c.kind = 'text'", {"id": cid, "at": at})
    ents, rels = [], []
    for i, (h, ht, rel, t, tt, cluster) in enumerate(ROWS):
        h, t = f"tfrtest {h}", f"tfrtest {t}"
        ents += [{"type": ht, "name": h}, {"type": tt, "name": t}]
        rels.append(
            {
                "type": rel,
                "head": entity_id(ht, h),
                "tail": entity_id(tt, t),
                "id": f"tfrtest-{i}",
                "props": {"chunk_id": "tfrtest-chunk-2008" if i % 2 == 0 else "tfrtest-chunk-2015", "cluster": cluster},
            }
        )
    write_entities(graph, ents)
    write_relations(graph, BatchWriter(graph), rels)
    first = TripleIndex.from_graph(graph, embedder)
    ours = [t for t in first.triples if t.id.startswith("tfrtest-")]
    assert len(ours) == len(ROWS) and {t.cluster for t in ours} == {"c:price", "c:labor", "c:credit"}
    encoded = []
    TripleIndex.from_graph(graph, embedder, progress=encoded.append)
    assert sum(encoded) == 0  # every embedding came back from the relationships
    stored = graph.read("MATCH ()-[r]->() WHERE r.id = 'tfrtest-0' RETURN r.embedding AS v, r.embedding_model AS m")[0]
    assert len(stored["v"]) == embedder.dimensions and stored["m"] == embedder.identity
    assert {t.available_at for t in ours} == set(CHUNK_TIMES.values())
    retriever = KnowledgeRetriever("tfr", k=3, top_n=50, temperature=0.1, triples=first)
    got = retriever.retrieve("tfrtest energy prices and inflation", as_of="2016-01-01")
    assert len(got) == 3 and all(k.kind == "triple" and k.chunk_id for k in got)
    graph.run_autocommit("MATCH (e:Entity) WHERE e.name STARTS WITH 'tfrtest ' DETACH DELETE e")
    graph.run_autocommit("MATCH (c:Chunk) WHERE c.id STARTS WITH 'tfrtest-chunk' DETACH DELETE c")


def _dated_index(embedder) -> TripleIndex:
    triples = [
        Triple(f"t{i}", rel, h, t, f"h{i}", f"t{i}", cluster, f"chunk{i % 2}", list(CHUNK_TIMES.values())[i % 2])
        for i, (h, _, rel, t, _, cluster) in enumerate(ROWS)
    ]
    return TripleIndex(triples, embedder.encode([x.text for x in triples]), embedder, undated="drop")


@pytest.mark.parametrize("system", ["tfr", "dense-triples"])
def test_a_triple_from_a_later_statement_never_reaches_an_earlier_question(embedder, system):
    """The look-ahead bug: a report as of 2008-12-31 cited triples of the 2015-12-16 statement."""
    index = _dated_index(embedder)
    retriever = KnowledgeRetriever(system, k=len(ROWS), top_n=len(ROWS), temperature=0.1, triples=index)
    early = retriever.retrieve("inflation, energy prices and the labor market", as_of="2008-12-31")
    assert early and {k.available_at for k in early} == {CHUNK_TIMES["tfrtest-chunk-2008"]}
    assert len(early) == (len(ROWS) + 1) // 2  # every 2008 triple, none of 2015
    late = retriever.retrieve("inflation, energy prices and the labor market", as_of="2016-01-01")
    assert {k.available_at for k in late} == set(CHUNK_TIMES.values()) and len(late) == len(ROWS)
    # the cutoff is a time: the evening of the 2015 statement, before and after it was released
    assert len(retriever.retrieve("inflation", as_of="2015-12-16T18:00:00Z")) == len(early)
    assert len(retriever.retrieve("inflation", as_of="2015-12-16T19:00:00Z")) == len(ROWS)
    with pytest.raises(AsOfRequired, match="as_of"):
        retriever.retrieve("inflation", as_of=None)
    # the same under the one retrieval contract
    assert isinstance(retriever, Retriever)
    evidence = retriever.search("inflation and energy prices", as_of="2008-12-31", k=3)
    assert len(evidence) == 3 and all(e.kind == "triple" and (e.available_at or "9") <= "2008-12-31" for e in evidence)
    with pytest.raises(AsOfRequired):
        retriever.search("inflation", as_of=None)


def test_tfr_cluster_weights_come_only_from_available_triples(embedder):
    index = _dated_index(embedder)
    got = index.cluster_weighted("labor market and job gains", k=3, n=len(ROWS), temperature=0.1, as_of="2008-12-31")
    assert got and all(s.triple.available_at == CHUNK_TIMES["tfrtest-chunk-2008"] for s in got)
    assert index.cluster_weighted("inflation", k=3, n=len(ROWS), temperature=0.1, as_of="2001-01-01") == []
    undated = TripleIndex([Triple("u", "AFFECT", "a", "b", "ha", "hb", "c", None)], embedder.encode(["a b"]), embedder)
    assert len(undated.dense("a", 1, as_of="2008-12-31")) == 1  # kept: an in-memory index keeps undated items
    dropped = TripleIndex(undated.triples, undated.vectors, embedder, undated="drop")
    assert dropped.dense("a", 1, as_of="2008-12-31") == []  # the graph's index drops them


def test_document_baselines_rank_the_right_sentence(embedder):
    passages = [
        Passage("p1", "The Committee decided to lower its target for the federal funds rate by 50 basis points."),
        Passage("p2", "Energy and other commodity prices have increased, and inflation expectations have risen."),
        Passage("p3", "Labor market conditions improved further, with solid job gains and a lower unemployment rate."),
    ]
    docs = DocumentIndex(passages, embedder)
    assert docs.bm25("unemployment rate and job gains", 2)[0].passage.id == "p3"
    assert docs.dense("Has the labor market improved?", 1)[0].passage.id == "p3"
    assert docs.bm25("zebra", 3) == []  # no term in common: nothing, not noise
    dated = DocumentIndex(
        [
            Passage(
                "old",
                "Labor market conditions weakened and the unemployment rate rose.",
                available_at="2008-12-16T19:15:00Z",
            ),
            Passage(
                "new",
                "Labor market conditions improved, with a lower unemployment rate.",
                available_at="2015-12-16T19:00:00Z",
            ),
        ],
        embedder,
        undated="drop",
    )
    for search in (dated.bm25, dated.dense):
        assert [p.passage.id for p in search("unemployment rate labor market", 5, as_of="2009-01-01")] == ["old"]
        assert {p.passage.id for p in search("unemployment rate labor market", 5, as_of="2016-01-01")} == {"old", "new"}
    with pytest.raises(ValueError, match="no passages"):
        DocumentIndex([], embedder)
    with pytest.raises(ValueError, match="unknown retrieval system"):
        KnowledgeRetriever("magic")
    with pytest.raises(ValueError, match="finkg extract"):
        KnowledgeRetriever("tfr")
