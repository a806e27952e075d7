"""`finkg graph analyze | export` on a small real subgraph: the gold triples of two FOMC statements
(tests/data/kg_gold.jsonl, 1994-02-04 and 1998-09-29), checked against figures computed here from the
definitions (degree and components by hand, PageRank by power iteration, the best modularity by trying
every partition), never against networkx itself."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from finkg import api
from generation.kgbuild.analytics import EmptySubgraph
from generation.kgbuild.names import entity_id
from generation.kgbuild.resolution import write_entities, write_relations
from kg import BatchWriter

GOLD = Path(__file__).parent / "data" / "kg_gold.jsonl"
STATEMENTS = {"19940204": "1994-02-04T19:00:00Z", "19980929": "1998-09-29T18:15:00Z"}


@pytest.fixture
def fomc(graph):
    """The two statements' gold triples written as extracted triples, each from its statement's chunk.
    Yields (prefix, document ids by statement, triples as (head id, relation, tail id) by statement)."""
    prefix = f"ga{uuid.uuid4().hex[:8]} "
    docs, by_statement, ents, rels = {}, {}, [], []
    rows = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]
    for statement, at in STATEMENTS.items():
        doc, chunk = f"{prefix.strip()}-doc-{statement}", f"{prefix.strip()}-chunk-{statement}"
        docs[statement] = doc
        graph.write(
            "MERGE (d:Document {id: $doc}) SET d.source_family = 'central_bank' "
            "MERGE (c:Chunk {id: $chunk}) SET c.available_at = $at, c.kind = 'text' MERGE (d)-[:HAS_CHUNK]->(c)",
            {"doc": doc, "chunk": chunk, "at": at},
        )
        by_statement[statement] = []
        for i, r in enumerate(x for x in rows if x["statement"] == statement):
            head, tail = prefix + r["head"], prefix + r["tail"]
            ents += [{"type": r["head_type"], "name": head}, {"type": r["tail_type"], "name": tail}]
            h, t = entity_id(r["head_type"], head), entity_id(r["tail_type"], tail)
            rels.append(
                {"type": r["relation"].upper(), "head": h, "tail": t, "id": f"{doc}-{i}", "props": {"chunk_id": chunk}}
            )
            by_statement[statement].append((h, r["relation"], t))
    write_entities(graph, ents)
    write_relations(graph, BatchWriter(graph), rels)
    yield prefix, docs, by_statement
    graph.run_autocommit("MATCH (e:Entity) WHERE e.name STARTS WITH $p DETACH DELETE e", {"p": prefix})
    graph.run_autocommit(
        "MATCH (n) WHERE (n:Document OR n:Chunk) AND n.id STARTS WITH $p DETACH DELETE n", {"p": prefix.strip()}
    )


def pagerank_by_power_iteration(edges: list[tuple[str, str]], alpha: float = 0.85) -> dict[str, float]:
    """PageRank from its definition: PR(v) = (1-a)/N + a * (sum over u->v of PR(u) * w(u,v) / out(u)
    + sum over dangling u of PR(u) / N), iterated to a fixed point."""
    nodes = sorted({n for e in edges for n in e})
    n, index = len(nodes), {v: i for i, v in enumerate(nodes)}
    w = np.zeros((n, n))
    for u, v in edges:
        w[index[u], index[v]] += 1
    out = w.sum(axis=1)
    pr = np.full(n, 1 / n)
    for _ in range(10_000):
        dangling = pr[out == 0].sum()
        spread = np.divide(pr, out, out=np.zeros(n), where=out > 0) @ w
        new = (1 - alpha) / n + alpha * (spread + dangling / n)
        if np.abs(new - pr).sum() < 1e-14:
            break
        pr = new
    return {v: float(pr[index[v]]) for v in nodes}


def modularity_by_definition(edges: list[tuple[str, str]], community: dict[str, int]) -> float:
    """Newman's Q = 1/(2m) * sum_ij [A_ij - k_i k_j / (2m)] delta(c_i, c_j) on the undirected graph."""
    nodes = sorted(community)
    a = {(i, j): 0.0 for i in nodes for j in nodes}
    for u, v in edges:
        a[u, v] += 1
        a[v, u] += 1
    k = {i: sum(a[i, j] for j in nodes) for i in nodes}
    two_m = sum(k.values())
    return sum(a[i, j] - k[i] * k[j] / two_m for i in nodes for j in nodes if community[i] == community[j]) / two_m


def partitions(items: list[str]):
    """Every partition of ``items`` (as a node -> block number map)."""
    if not items:
        yield {}
        return
    first, rest = items[0], items[1:]
    for p in partitions(rest):
        blocks = sorted(set(p.values()))
        for b in [*blocks, len(blocks)]:
            yield {**p, first: b}


def test_analytics_match_the_definitions_on_two_real_statements(graph, settings, fomc):
    prefix, docs, triples = fomc
    both = triples["19940204"] + triples["19980929"]
    result = api.graph_analyze(documents=list(docs.values()), graph=graph, settings=settings)
    a = result.analysis
    nodes = {n for h, _, t in both for n in (h, t)}
    assert (a.entities, a.triples) == (len(nodes), len(both)) == (18, 12)
    # degree and weakly connected components by hand: 1994: A->B->F and E->C->D->G; 1998: three of three
    # entities, one of two (the discount rate)
    degree = {n: sum((h == n) + (t == n) for h, _, t in both) for n in nodes}
    assert {s.id: s.degree for s in a.scores} == degree
    assert a.components == 6
    sizes = sorted((sum(1 for s in a.scores if s.component == c) for c in range(6)), reverse=True)
    assert sizes == [4, 3, 3, 3, 3, 2]
    assert [sum(1 for s in a.scores if s.component == c) for c in range(6)] == sizes  # numbered from the largest
    # PageRank from its definition
    expected = pagerank_by_power_iteration([(h, t) for h, _, t in both])
    assert {s.id: s.pagerank for s in a.scores} == pytest.approx(expected, abs=1e-8)
    assert [s.pagerank for s in a.scores] == sorted((s.pagerank for s in a.scores), reverse=True)
    # a community never spans two components
    for c in range(len(a.communities)):
        assert len({s.component for s in a.scores if s.community == c}) == 1
    # written back on the entities, for Browser to size and colour by
    stored = graph.read(
        "MATCH (e:Entity) WHERE e.name STARTS WITH $p RETURN e.id AS id, e.pagerank AS pr, e.degree AS d, "
        "e.community AS c, e.analytics_run AS run",
        {"p": prefix},
    )
    assert {r["id"]: r["d"] for r in stored} == degree and {r["run"] for r in stored} == {result.run}
    assert {r["id"]: r["pr"] for r in stored} == pytest.approx(expected, abs=1e-8)


def test_louvain_finds_the_best_partition_of_the_1994_statement_as_of_1995(graph, settings, fomc):
    prefix, docs, triples = fomc
    early = triples["19940204"]
    result = api.graph_analyze(as_of="1995-01-01", documents=list(docs.values()), graph=graph, settings=settings)
    a = result.analysis
    assert (a.entities, a.triples) == (7, 5)  # the 1998 statement was not public yet
    edges = [(h, t) for h, _, t in early]
    found = {s.id: s.community for s in a.scores}
    best = max(modularity_by_definition(edges, p) for p in partitions(sorted(found)))
    assert modularity_by_definition(edges, found) == pytest.approx(best, abs=1e-12)
    assert a.modularity == pytest.approx(best, abs=1e-12)
    # a rerun gives the same partition; the later statement's entities lost the earlier run's figures
    again = api.graph_analyze(as_of="1995-01-01", documents=list(docs.values()), graph=graph, settings=settings)
    assert {s.id: s.community for s in again.analysis.scores} == found and again.run == result.run
    later = graph.read(
        "MATCH (e:Entity) WHERE e.name STARTS WITH $p AND NOT e.id IN $ids RETURN e.pagerank AS pr",
        {"p": prefix, "ids": list(found)},
    )
    assert len(later) == 11 and all(r["pr"] is None for r in later)


def test_exports_open_as_graphml_and_gexf_and_an_empty_scope_writes_nothing(graph, settings, fomc, tmp_path):
    _, docs, triples = fomc
    out = tmp_path / "fomc.graphml"
    summary = api.graph_export(out, fmt="graphml", documents=list(docs.values()), graph=graph, settings=settings)
    assert (summary.nodes, summary.edges) == (18, 12)
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    root = ET.parse(out).getroot()
    keys = {k.get("id"): k.get("attr.name") for k in root.findall("g:key", ns)}
    nodes = root.findall("g:graph/g:node", ns)
    edges = root.findall("g:graph/g:edge", ns)
    assert len(nodes) == 18 and len(edges) == 12
    names = {
        n.get("id"): {keys[d.get("key")]: d.text for d in n.findall("g:data", ns)} for n in nodes
    }  # every node carries its name and figures
    assert all({"name", "pagerank", "degree", "community"} <= set(attrs) for attrs in names.values())
    relations = sorted(
        keys[d.get("key")] + "=" + (d.text or "")
        for e in edges
        for d in e.findall("g:data", ns)
        if keys[d.get("key")] == "relation"
    )
    assert relations == sorted(f"relation={r.upper()}" for _, r, _ in triples["19940204"] + triples["19980929"])
    gexf = tmp_path / "fomc.gexf"
    api.graph_export(
        gexf, fmt="gexf", as_of="1995-01-01", documents=list(docs.values()), graph=graph, settings=settings
    )
    groot = ET.parse(gexf).getroot()
    assert len([e for e in groot.iter() if e.tag.endswith("}node")]) == 7
    empty = tmp_path / "empty.graphml"
    with pytest.raises(EmptySubgraph, match="as of 1990-01-01"):
        api.graph_export(empty, as_of="1990-01-01", documents=list(docs.values()), graph=graph, settings=settings)
    assert not empty.exists() and not list(tmp_path.glob("empty*"))


@pytest.mark.neo4j
def test_the_cli_prints_communities_and_names_an_empty_scope(fomc, tmp_path):
    prefix, docs, _ = fomc
    args = [arg for d in docs.values() for arg in ("--document", d)]
    ran = subprocess.run(
        [sys.executable, "-m", "finkg", "graph", "analyze", *args, "--no-write", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    assert "modularity" in ran.stdout and prefix + "federal funds rate" in ran.stdout
    out = tmp_path / "x.gexf"
    empty = subprocess.run(
        [
            sys.executable,
            "-m",
            "finkg",
            "graph",
            "export",
            str(out),
            "--format",
            "gexf",
            "--as-of",
            "1990-01-01",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert empty.returncode == 2 and "Traceback" not in empty.stderr
    assert "no extracted triple in as of 1990-01-01T23:59:59Z" in " ".join(empty.stderr.split()) and not out.exists()
