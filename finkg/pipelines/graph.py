"""``finkg graph analyze`` and ``finkg graph export``: the extracted knowledge graph through networkx.

Reads a subgraph of the extracted triples (all of them, or those of some source families or documents,
optionally only what was available at an ``as_of`` time), computes PageRank, degree, weakly connected
components and Louvain communities (:mod:`generation.kgbuild.analytics`), writes them back as ``Entity``
properties (``pagerank``, ``degree``, ``component``, ``community``, ``analytics_run``) so Neo4j Browser can size
and colour by them, and exports the subgraph as GraphML or GEXF for Gephi or yEd.

The last analysis wins: entities an earlier run wrote and this one did not lose those properties.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx

from generation.kgbuild.analytics import (
    Analysis,
    EmptySubgraph,
    EntityNode,
    ExportFormat,
    TripleEdge,
    analyze,
    entity_graph,
    export,
)
from kg import BatchWriter, Graph, cypher
from kg.progress import StageProgress, stage
from retrieval.contract import AsOf, as_of_cutoff


@dataclass(frozen=True)
class Scope:
    """Which triples a subgraph holds: available at ``cutoff`` (ISO UTC; None: any time) and from documents
    of ``families`` / with ids in ``documents`` (None: any)."""

    cutoff: str | None = None
    families: tuple[str, ...] | None = None
    documents: tuple[str, ...] | None = None

    @classmethod
    def of(
        cls, as_of: AsOf | None = None, families: Sequence[str] | None = None, documents: Sequence[str] | None = None
    ) -> Scope:
        """A scope from user input (``as_of`` a date, a datetime or an ISO string; None: no time limit).

        Raises:
            RetrievalError: ``as_of`` is not an ISO date or time.
        """
        return cls(
            as_of_cutoff(as_of) if as_of is not None else None,
            tuple(families) if families else None,
            tuple(documents) if documents else None,
        )

    def describe(self) -> str:
        """One line for messages: ``as of ..., families ..., documents ...`` or ``the whole graph``."""
        parts = [f"as of {self.cutoff}"] if self.cutoff else []
        parts += [f"families {', '.join(self.families)}"] if self.families else []
        parts += [f"documents {', '.join(self.documents)}"] if self.documents else []
        return "; ".join(parts) or "the whole graph"

    def params(self) -> dict[str, Any]:
        return {
            "cutoff": self.cutoff,
            "families": list(self.families) if self.families else None,
            "documents": list(self.documents) if self.documents else None,
        }


def read_subgraph(graph: Graph, scope: Scope) -> nx.MultiDiGraph:
    """The triples of ``scope`` and their entities as a networkx multigraph (:func:`entity_graph`).

    Raises:
        EmptySubgraph: no extracted triple in ``scope`` (the message names the scope).
    """
    entities: dict[str, EntityNode] = {}
    triples: list[TripleEdge] = []
    for r in graph.read(cypher.entity_subgraph(), scope.params()):
        for end in ("head", "tail"):
            entities.setdefault(r[end], EntityNode(r[end], r[f"{end}_name"] or r[end], r[f"{end}_type"]))
        triples.append(TripleEdge(r["id"], r["relation"], r["head"], r["tail"], r["chunk_id"], r["available_at"]))
    if not triples:
        raise EmptySubgraph(
            f"no extracted triple in {scope.describe()} (run `finkg extract` first, or widen the scope)"
        )
    return entity_graph(entities.values(), triples)


@dataclass
class GraphAnalysis:
    """What :func:`analyze_graph` did: the :class:`Analysis`, its ``scope``, the ``run`` id written on the
    entities (None when not written) and how many entities were ``written``."""

    analysis: Analysis
    scope: Scope
    run: str | None
    written: int

    def rows(self) -> list[dict[str, Any]]:
        """The summary as table rows."""
        a = self.analysis
        return [
            {"figure": "scope", "value": self.scope.describe()},
            {"figure": "entities", "value": a.entities},
            {"figure": "triples", "value": a.triples},
            {"figure": "connected components", "value": a.components},
            {"figure": "communities (Louvain)", "value": len(a.communities)},
            {"figure": "modularity", "value": round(a.modularity, 4)},
            {"figure": "entities written", "value": self.written},
        ]


def _run_id(scope: Scope, a: Analysis, g: nx.MultiDiGraph) -> str:
    """A digest of the scope, the parameters and the triple ids: the same subgraph and parameters give the
    same run id."""
    payload = {
        "scope": scope.params(),
        "alpha": a.alpha,
        "seed": a.seed,
        "resolution": a.resolution,
        "triples": sorted(str(k) for _, _, k in g.edges(keys=True)),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def analyze_graph(
    graph: Graph,
    scope: Scope,
    *,
    alpha: float = 0.85,
    seed: int = 0,
    resolution: float = 1.0,
    write: bool = True,
    batch_size: int = 5_000,
    progress: StageProgress | None = None,
) -> GraphAnalysis:
    """Analyse the subgraph of ``scope`` and (``write``) store each entity's figures on its node.

    Raises:
        EmptySubgraph: no triple in ``scope`` (nothing is written).
        GenerationError: alpha or resolution out of range.
    """
    g = read_subgraph(graph, scope)
    a = analyze(g, alpha=alpha, seed=seed, resolution=resolution)
    if not write:
        return GraphAnalysis(a, scope, None, 0)
    run = _run_id(scope, a, g)
    advance = stage(progress, "write entity analytics", len(a.scores))
    rows = [
        {"id": s.id, "pagerank": s.pagerank, "degree": s.degree, "component": s.component, "community": s.community}
        for s in a.scores
    ]
    written = 0
    writer = BatchWriter(graph, batch_size)
    for start in range(0, len(rows), batch_size):
        chunk = rows[start : start + batch_size]
        written += writer.run_batches(cypher.SET_ENTITY_ANALYTICS, chunk, {"run": run})
        advance(len(chunk))
    graph.run_autocommit(cypher.CLEAR_STALE_ENTITY_ANALYTICS, {"run": run})
    return GraphAnalysis(a, scope, run, written)


@dataclass(frozen=True)
class ExportSummary:
    """A written export: ``path``, ``format``, ``nodes`` and ``edges`` written, the ``scope``."""

    path: Path
    format: str
    nodes: int
    edges: int
    scope: Scope

    def rows(self) -> list[dict[str, Any]]:
        return [
            {"file": str(self.path), "format": self.format, "entities": self.nodes, "triples": self.edges}
            | {"scope": self.scope.describe()}
        ]


def export_graph(
    graph: Graph,
    path: Path,
    fmt: ExportFormat,
    scope: Scope,
    *,
    alpha: float = 0.85,
    seed: int = 0,
    resolution: float = 1.0,
) -> ExportSummary:
    """Write the subgraph of ``scope`` to ``path`` (GraphML or GEXF) with each entity's PageRank, degree,
    component and community computed on that subgraph.

    Raises:
        EmptySubgraph: no triple in ``scope`` (no file is written).
        GenerationError: an unknown format.
    """
    g = read_subgraph(graph, scope)
    a = analyze(g, alpha=alpha, seed=seed, resolution=resolution)
    nodes, edges = export(g, path, fmt, a.scores)
    return ExportSummary(path, fmt, nodes, edges, scope)
