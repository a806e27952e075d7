"""Entity resolution (generation/kgbuild/resolution.py, generation/kgbuild/names.py) against the real Neo4j and the real
MiniLM model: normalization, exact duplicates across writes, fuzzy/embedding/identifier merges
within a type, merge records, relationships moved with their properties, redirects of merged names.

The embedding model comes from ``[embedding] model_path`` / ``FINKG_EMBEDDING_MODEL_PATH``, else
all-MiniLM-L6-v2 from ``finkg models install`` (installed if missing). Every entity name carries a token unique to the test
(``zq<hex>``); the test's entities, merge records and companies are deleted afterwards.
"""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from finkg.pipelines import clusters as knowledge
from generation.kgbuild import resolution
from generation.kgbuild.names import company_key, entity_id, name_guard, normalize_name
from kg import BatchWriter

# the fixtures `embedder` (MiniLM) and `tok` (a name token, cleaned up afterwards) live in conftest.py


def ids_with(graph, tok):
    return [
        r["id"]
        for r in graph.read("MATCH (e:Entity) WHERE e.key CONTAINS $t RETURN e.id AS id ORDER BY id", {"t": tok})
    ]


def run(graph, settings, embedder, tok, **overrides):
    s = settings.model_copy(update=overrides)
    return knowledge.run_cluster(graph, s, ids=ids_with(graph, tok), embedder=embedder)


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    "raw, key",
    [
        ("Net Income (Loss)", "net income loss"),
        ("WAL-MART STORES, INC.", "wal mart stores inc"),
        ("Stockholders’ Equity", "stockholders equity"),
        ("U.S. GDP grew 3.5% in 2009", "us gdp grew 3.5% in 2009"),
        ("CPI above -0.5%", "cpi above -0.5%"),
        ("Revenues, net of 1,000,000 returns", "revenues net of 1000000 returns"),
        ("Research & Development", "research and development"),
        ("ＣＰＩ　同比", "cpi 同比"),
        ("COVID-19 impact", "covid 19 impact"),
    ],
)
def test_normalize_name(raw, key):
    assert normalize_name(raw) == key


def test_entity_ids_are_type_and_key_and_refuse_bad_input():
    assert entity_id("indicator", "  Net Income (Loss) ") == "indicator:net income loss"
    assert entity_id("indicator", "NET INCOME LOSS") == entity_id("indicator", "net income (loss)")
    with pytest.raises(ValueError, match="not one of"):
        entity_id("company", "Walmart")
    with pytest.raises(ValueError, match="no letters or digits"):
        entity_id("indicator", " (–) ")


def test_company_keys_drop_legal_forms_and_state_suffixes():
    assert company_key("WAL MART STORES INC") == company_key("Wal-Mart Stores, Inc.") == "wal mart stores"
    assert company_key("APPLE INC /CA/") == "apple"


def test_guard_keeps_numbers_and_directions_apart():
    assert name_guard("cpi above 3%") != name_guard("cpi above 5%")
    assert name_guard("revenue increase") != name_guard("revenue decrease")
    assert name_guard("net sales") == name_guard("sales net")
    assert name_guard("operating income") == name_guard("operating incomes")


# --------------------------------------------------------------------------- graph


def test_exact_duplicates_across_two_writes_make_one_entity(graph, tok):
    first = resolution.write_entities(graph, [{"type": "indicator", "name": f"Net Revenue {tok}"}])
    second = resolution.write_entities(graph, [{"type": "indicator", "name": f"NET REVENUE, {tok.upper()}."}])
    eid = f"indicator:net revenue {tok}"
    assert first == {eid: eid} and second == {eid: eid}
    rows = graph.read(
        "MATCH (e:Entity {id: $id}) RETURN e.name AS name, e.aliases AS aliases, e.type AS type", {"id": eid}
    )
    assert rows == [{"name": f"Net Revenue {tok}", "aliases": [f"NET REVENUE, {tok.upper()}."], "type": "indicator"}]


def test_fuzzy_merge_within_a_type_never_across_types(graph, settings, embedder, tok):
    resolution.write_entities(
        graph,
        [
            {"type": "indicator", "name": f"accounts receivable net {tok}"},
            {"type": "indicator", "name": f"account receivable net {tok}"},
            {"type": "market_status", "name": f"accounts receivables net {tok}"},
        ],
    )
    summary = run(graph, settings, embedder, tok, cluster_fuzzy_threshold=90.0, cluster_embedding_merge_threshold=1.0)
    assert summary.merges["fuzzy"] == 1 and summary.merges["embedding"] == 0
    # no relationships on either: the shorter key survives
    assert ids_with(graph, tok) == [
        f"indicator:account receivable net {tok}",
        f"market_status:accounts receivables net {tok}",
    ]
    merge = graph.read(
        "MATCH (m:EntityMerge {id: $id})-[:MERGED_INTO]->(s:Entity) RETURN m {.*} AS m, s.id AS s",
        {"id": f"indicator:accounts receivable net {tok}"},
    )
    assert merge[0]["s"] == f"indicator:account receivable net {tok}"
    m = merge[0]["m"]
    assert m["method"] == "fuzzy" and m["threshold"] == 90.0 and 90 <= m["score"] < 100
    assert m["into"] == merge[0]["s"] and m["from_name"] == f"accounts receivable net {tok}"


def test_embedding_merge_at_its_threshold(graph, settings, embedder, tok):
    a, b = f"share buyback program {tok}", f"stock repurchase program {tok}"
    c, d = f"share buyback plan {tok}", f"stock repurchase plan {tok}"
    va, vb, vc, vd = embedder.encode([a, b, c, d])
    sim_ab, sim_cd = float(va @ vb), float(vc @ vd)
    resolution.write_entities(graph, [{"type": "policy", "name": n} for n in (a, b)])
    # just above the pair's similarity: no merge
    assert (
        run(
            graph,
            settings,
            embedder,
            tok,
            cluster_fuzzy_threshold=100.0,
            cluster_embedding_merge_threshold=round(sim_ab + 0.005, 4),
        ).merges["embedding"]
        == 0
    )
    assert len(ids_with(graph, tok)) == 2
    # just below: one merge, recorded with the pair's score and the threshold
    threshold = round(sim_ab - 0.005, 4)
    assert (
        run(
            graph, settings, embedder, tok, cluster_fuzzy_threshold=100.0, cluster_embedding_merge_threshold=threshold
        ).merges["embedding"]
        == 1
    )
    assert len(ids_with(graph, tok)) == 1
    rec = graph.read(
        "MATCH (m:EntityMerge) WHERE m.id CONTAINS $t RETURN m.method AS method, m.score AS score, "
        "m.threshold AS threshold",
        {"t": tok},
    )
    assert rec == [{"method": "embedding", "score": pytest.approx(sim_ab, abs=1e-3), "threshold": threshold}]
    assert abs(sim_cd - sim_ab) < 0.2  # the measured pair is a real paraphrase, not a fluke


def test_merge_moves_relationships_with_their_properties(graph, settings, embedder, tok):
    writer = BatchWriter(graph, batch_size=100)
    ids = resolution.write_entities(
        graph,
        [
            {"type": "indicator", "name": n}
            for n in (
                f"operating income {tok}",
                f"operating incomes {tok}",
                f"interest rate {tok}",
                f"credit spread {tok}",
            )
        ],
    )
    a, b, c, d = ids  # a: survivor (more relationships), b: merged into a
    rels = [
        {
            "type": "AFFECT",
            "head": a,
            "tail": c,
            "id": f"r1{tok}",
            "props": {"chunk_id": "c1", "verified": True, "w": 1},
        },
        {"type": "INDICATE", "head": d, "tail": a, "id": f"r2{tok}", "props": {"chunk_id": "c2", "verified": False}},
        {"type": "EQUAL_TO", "head": a, "tail": b, "id": f"r3{tok}", "props": {"chunk_id": "c3", "verified": True}},
        {"type": "MAY_LEAD_TO", "head": b, "tail": d, "id": f"r4{tok}", "props": {"chunk_id": "c4", "verified": True}},
        {"type": "AFFECT", "head": c, "tail": b, "id": f"r5{tok}", "props": {"chunk_id": "c5", "verified": True}},
    ]
    stats = resolution.write_relations(graph, writer, rels)
    assert sum(s.created for s in stats.values()) == 5
    query = (
        "MATCH (h:Entity)-[r]->(t:Entity) WHERE r.id ENDS WITH $t "
        "RETURN r.id AS id, type(r) AS type, h.id AS h, t.id AS t, properties(r) AS p ORDER BY id"
    )
    before = graph.read(query, {"t": tok})
    summary = run(graph, settings, embedder, tok, cluster_fuzzy_threshold=90.0, cluster_embedding_merge_threshold=1.0)
    assert summary.merges["fuzzy"] == 1
    after = graph.read(query, {"t": tok})
    assert len(after) == len(before) == 5
    moved = {r["id"]: r for r in after}
    for r in before:  # same type, same properties (cluster ids added), endpoints b -> a
        m = moved[r["id"]]
        assert m["type"] == r["type"] and (m["h"], m["t"]) == (
            a if r["h"] == b else r["h"],
            a if r["t"] == b else r["t"],
        )
        assert {k: v for k, v in m["p"].items() if not k.startswith("cluster")} == r["p"]
    assert (moved[f"r3{tok}"]["h"], moved[f"r3{tok}"]["t"]) == (a, a)  # a EQUAL_TO b became a self-loop
    survivor = graph.read("MATCH (e:Entity {id: $id}) RETURN e.aliases AS aliases", {"id": a})
    assert survivor == [{"aliases": [f"operating incomes {tok}"]}]
    assert graph.read("MATCH (e:Entity {id: $id}) RETURN e", {"id": b}) == []


def test_a_merged_name_lands_on_the_survivor_in_later_writes(graph, settings, embedder, tok):
    writer = BatchWriter(graph, batch_size=100)
    a, b = resolution.write_entities(
        graph,
        [{"type": "indicator", "name": f"gross margin {tok}"}, {"type": "indicator", "name": f"gross margins {tok}"}],
    )
    (c,) = resolution.write_entities(graph, [{"type": "market_status", "name": f"pricing pressure {tok}"}])
    resolution.write_relations(graph, writer, [{"type": "AFFECT", "head": c, "tail": a, "id": f"x1{tok}"}])
    run(graph, settings, embedder, tok, cluster_fuzzy_threshold=90.0, cluster_embedding_merge_threshold=1.0)
    assert ids_with(graph, tok) == [a, c]  # b merged into a (a has a relationship)
    # a later extraction run produces the merged name again, and a triple on it
    again = resolution.write_entities(graph, [{"type": "indicator", "name": f"Gross Margins {tok}"}])
    assert again == {b: a}
    stats = resolution.write_relations(
        graph, writer, [{"type": "AFFECT", "head": c, "tail": b, "id": f"x2{tok}", "props": {"chunk_id": "later"}}]
    )
    assert stats["AFFECT"].created == 1 and stats["AFFECT"].missing_endpoints == 0
    assert ids_with(graph, tok) == [a, c]
    tails = graph.read("MATCH (:Entity {id: $c})-[r:AFFECT]->(t) RETURN r.id AS r, t.id AS t ORDER BY r", {"c": c})
    assert tails == [{"r": f"x1{tok}", "t": a}, {"r": f"x2{tok}", "t": a}]
    aliases = graph.read("MATCH (e:Entity {id: $a}) RETURN e.aliases AS x", {"a": a})[0]["x"]
    assert aliases == [f"gross margins {tok}", f"Gross Margins {tok}"]


@pytest.fixture
def company(graph, tok):
    cik = 9_000_000_000 + int(uuid.uuid4().hex[:6], 16)
    name = f"{tok.upper()} HOLDINGS INC /DE/"
    graph.write(
        "CREATE (:Company {cik: $cik, name: $name, ticker: $ticker})", {"cik": cik, "name": name, "ticker": tok.upper()}
    )
    concept = f"us-gaap/zq:{tok}Reserve"
    graph.write(
        "CREATE (:Concept {key: $key, tag: $tag, version: 'us-gaap/zq', label: $label})",
        {"key": concept, "tag": f"{tok.capitalize()}Reserve", "label": f"{tok} reserve, current"},
    )
    yield {"cik": cik, "name": name, "concept": concept}
    graph.write("MATCH (c:Company {cik: $cik}) DETACH DELETE c", {"cik": cik})
    graph.write("MATCH (c:Concept {key: $key}) DETACH DELETE c", {"key": concept})


def test_identifier_resolution_to_a_company_by_name_and_ticker_and_to_a_concept(
    graph, settings, embedder, tok, company
):
    by_name, by_ticker = resolution.write_entities(
        graph,
        [
            {"type": "market_status", "name": f"{tok.capitalize()} Holdings, Inc."},
            {"type": "market_status", "name": f"${tok.upper()}"},
        ],
    )
    (other_type,) = resolution.write_entities(graph, [{"type": "indicator", "name": f"{tok} holdings"}])
    (concept,) = resolution.write_entities(graph, [{"type": "indicator", "name": f"{tok} Reserve Current"}])
    summary = run(graph, settings, embedder, tok, cluster_fuzzy_threshold=100.0, cluster_embedding_merge_threshold=1.0)
    assert summary.merges["identifier"] == 1 and summary.linked == 4
    links = graph.read(
        "MATCH (e:Entity)-[s:SAME_AS]->(x) WHERE e.key CONTAINS $t "
        "RETURN e.id AS e, labels(x)[0] AS label, coalesce(x.cik, x.key) AS target, s.how AS how "
        "ORDER BY e",
        {"t": tok},
    )
    survivor = by_ticker  # same degree: the shorter key ("market_status:<tok>") survives
    assert links == sorted(
        [
            {"e": concept, "label": "Concept", "target": company["concept"], "how": "concept label"},
            {"e": other_type, "label": "Company", "target": company["cik"], "how": "company name"},
            {"e": survivor, "label": "Company", "target": company["cik"], "how": "ticker"},
        ],
        key=lambda r: r["e"],
    )  # the merged entity's SAME_AS collapsed into the survivor's
    assert graph.read("MATCH (m:EntityMerge {id: $id}) RETURN m.method AS m, m.into AS into", {"id": by_name}) == [
        {"m": "identifier", "into": survivor}
    ]
    # types stay apart: the indicator with the company's name is linked, not merged
    assert ids_with(graph, tok) == sorted([concept, other_type, survivor])


def test_plan_refuses_unknown_methods_and_chained_merges(graph):
    with pytest.raises(ValueError, match="unknown resolution method"):
        resolution.plan_merges([], None, None, "phonetic")
    with pytest.raises(ValueError, match="needs a threshold"):
        resolution.plan_merges([], np.zeros((0, 3)), None, "embedding", 0.9)
    chained = [
        resolution.Merge("indicator:a", "indicator:b", "fuzzy", 95.0, 92.0),
        resolution.Merge("indicator:b", "indicator:c", "fuzzy", 95.0, 92.0),
    ]
    with pytest.raises(ValueError, match="flat"):
        resolution.apply_merges(graph, chained, "test")
