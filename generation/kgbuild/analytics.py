"""Graph analytics of the extracted knowledge graph with networkx: PageRank, degree, components, communities.

The entity graph is the extracted triples ``(head:Entity)-[relation]->(tail:Entity)`` (seed 004, 3.1), one
edge per triple, so two entities linked by three triples are linked three times. On it:

- **PageRank** (Brin and Page 1998; ``networkx.pagerank``): damping ``alpha`` (0.85), on the directed graph
  whose edge weight is the number of triples from head to tail; a dangling entity (no outgoing triple)
  spreads its rank over every entity. Ranks sum to 1.
- **Degree**: triples that touch the entity, incoming plus outgoing (a triple from an entity to itself counts
  twice, as in graph theory).
- **Connected components**: weakly connected (the direction of a triple ignored), numbered ``0, 1, ...`` from
  the largest; ties by the smallest entity id in them.
- **Communities**: Louvain modularity maximisation (Blondel et al. 2008; ``networkx.community.
  louvain_communities``) on the undirected graph whose edge weight is the number of triples between the two
  entities in either direction, with a fixed ``seed`` so a rerun gives the same partition; numbered like the
  components. ``modularity`` is Newman's Q of that partition.

Everything here is pure (no Neo4j): :mod:`finkg.pipelines.graph` reads the subgraph, calls :func:`analyze`,
writes the figures back and exports files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import networkx as nx

from kg.atomic import replacing
from kg.errors import GenerationError

ExportFormat = Literal["graphml", "gexf"]


class EmptySubgraph(GenerationError):
    """The subgraph asked for holds no triple (nothing to analyse or export)."""


@dataclass(frozen=True)
class EntityNode:
    """An entity of the subgraph: its ``id`` (``<type>:<name>``), ``name`` and ``type``."""

    id: str
    name: str
    type: str | None = None


@dataclass(frozen=True)
class TripleEdge:
    """A triple of the subgraph: relationship ``id``, ``relation`` (e.g. ``AFFECT``), ``head``/``tail`` entity
    ids, its source ``chunk_id`` and the chunk's ``available_at`` (ISO UTC; None when undated)."""

    id: str
    relation: str
    head: str
    tail: str
    chunk_id: str | None = None
    available_at: str | None = None


@dataclass(frozen=True)
class EntityScore:
    """One entity's figures: ``pagerank`` (0..1, all sum to 1), ``degree`` (triples), ``component`` and
    ``community`` (0 is the largest)."""

    id: str
    name: str
    pagerank: float
    degree: int
    component: int
    community: int


@dataclass
class Analysis:
    """The result of :func:`analyze`.

    Attributes:
        scores: one :class:`EntityScore` per entity, by PageRank descending (ties by id).
        entities, triples: sizes of the subgraph. components: weakly connected components.
        communities: sizes of the Louvain communities, largest first (index = community number).
        modularity: Newman's Q of the partition (-0.5..1). alpha, seed, resolution: the parameters used.
    """

    scores: list[EntityScore]
    entities: int
    triples: int
    components: int
    communities: list[int] = field(default_factory=list)
    modularity: float = 0.0
    alpha: float = 0.85
    seed: int = 0
    resolution: float = 1.0

    def top(self, per_community: int = 5, communities: int = 10) -> list[dict[str, Any]]:
        """Rows for a table: for each of the first ``communities`` communities, its size and its
        ``per_community`` entities of highest PageRank (``name (pagerank)``)."""
        members: dict[int, list[EntityScore]] = {}
        for s in self.scores:  # already by PageRank descending
            members.setdefault(s.community, []).append(s)
        return [
            {
                "community": c,
                "entities": self.communities[c],
                "top entities (PageRank)": "; ".join(
                    f"{s.name} ({s.pagerank:.3f})" for s in members[c][:per_community]
                ),
            }
            for c in range(min(communities, len(self.communities)))
        ]


def entity_graph(entities: Iterable[EntityNode], triples: Iterable[TripleEdge]) -> nx.MultiDiGraph:
    """The subgraph as a networkx multigraph: a node per entity (attributes ``name``, ``type``), an edge per
    triple keyed by its id (attributes ``relation``, ``chunk_id``, ``available_at``).

    Raises:
        GenerationError: a triple names an entity that is not among ``entities``.
    """
    g = nx.MultiDiGraph()
    for e in sorted(entities, key=lambda e: e.id):
        g.add_node(e.id, name=e.name, type=e.type)
    for t in sorted(triples, key=lambda t: t.id):
        for end in (t.head, t.tail):
            if end not in g:
                raise GenerationError(f"triple {t.id}: entity {end!r} is not in the subgraph's entities")
        g.add_edge(t.head, t.tail, key=t.id, relation=t.relation, chunk_id=t.chunk_id, available_at=t.available_at)
    return g


def _numbered(groups: Iterable[Iterable[str]]) -> tuple[dict[str, int], list[int]]:
    """Number node groups from the largest (ties: smallest member id first); returns node -> number, sizes."""
    ordered = sorted((sorted(group) for group in groups), key=lambda members: (-len(members), members[0]))
    return {node: i for i, members in enumerate(ordered) for node in members}, [len(m) for m in ordered]


def _weighted(g: nx.MultiDiGraph, directed: bool) -> nx.Graph:
    """The simple (di)graph of ``g`` whose edge ``weight`` counts the triples between the two nodes."""
    simple: nx.Graph = nx.DiGraph() if directed else nx.Graph()
    simple.add_nodes_from(g.nodes)
    counts = Counter((u, v) if directed else tuple(sorted((u, v))) for u, v in g.edges())
    simple.add_weighted_edges_from((u, v, w) for (u, v), w in sorted(counts.items()))
    return simple


def analyze(g: nx.MultiDiGraph, *, alpha: float = 0.85, seed: int = 0, resolution: float = 1.0) -> Analysis:
    """PageRank, degree, weakly connected components and Louvain communities of the entity graph ``g``.

    Args:
        g: from :func:`entity_graph`. alpha: PageRank's damping factor (0 < alpha < 1).
        seed: Louvain's random seed (same graph and seed, same partition).
        resolution: Louvain's resolution (> 0; above 1 favours smaller communities).

    Raises:
        EmptySubgraph: ``g`` has no edge.
        GenerationError: alpha or resolution out of range.
    """
    if g.number_of_edges() == 0:
        raise EmptySubgraph("the subgraph has no triple: nothing to analyse")
    if not 0.0 < alpha < 1.0:
        raise GenerationError(f"PageRank alpha must be between 0 and 1, not {alpha}")
    if resolution <= 0:
        raise GenerationError(f"Louvain resolution must be above 0, not {resolution}")
    ranks = nx.pagerank(_weighted(g, directed=True), alpha=alpha, weight="weight", tol=1e-10, max_iter=1000)
    component_of, _ = _numbered(nx.weakly_connected_components(g))
    undirected = _weighted(g, directed=False)
    parts = nx.community.louvain_communities(undirected, weight="weight", resolution=resolution, seed=seed)
    community_of, sizes = _numbered(parts)
    scores = [
        EntityScore(
            id=node,
            name=str(g.nodes[node].get("name") or node),
            pagerank=float(ranks[node]),
            degree=int(g.degree(node)),
            component=component_of[node],
            community=community_of[node],
        )
        for node in g.nodes
    ]
    scores.sort(key=lambda s: (-s.pagerank, s.id))
    return Analysis(
        scores=scores,
        entities=g.number_of_nodes(),
        triples=g.number_of_edges(),
        components=len(set(component_of.values())),
        communities=sizes,
        modularity=float(nx.community.modularity(undirected, parts, weight="weight", resolution=resolution)),
        alpha=alpha,
        seed=seed,
        resolution=resolution,
    )


def export(
    g: nx.MultiDiGraph, path: Path, fmt: ExportFormat, scores: Sequence[EntityScore] | None = None
) -> tuple[int, int]:
    """Write ``g`` to ``path`` as GraphML or GEXF (what Gephi and yEd open), with the node attributes
    ``name``, ``type`` and, given ``scores``, ``pagerank``, ``degree``, ``component``, ``community``; edges keep
    ``relation``, ``chunk_id`` and ``available_at``. Missing values are left out (neither format has a null).
    The file is written whole or not at all (a temporary file renamed into place).

    Returns:
        (nodes, edges) written.

    Raises:
        EmptySubgraph: ``g`` has no edge (nothing is written).
        GenerationError: an unknown format.
    """
    if g.number_of_edges() == 0:
        raise EmptySubgraph("the subgraph has no triple: nothing was exported")
    if fmt not in ("graphml", "gexf"):
        raise GenerationError(f"unknown export format {fmt!r}: use graphml or gexf")
    out = nx.MultiDiGraph()
    by_id = {s.id: s for s in scores or ()}
    for node, attrs in g.nodes(data=True):
        row = {k: v for k, v in attrs.items() if v is not None}
        if (s := by_id.get(node)) is not None:
            row.update(pagerank=s.pagerank, degree=s.degree, component=s.component, community=s.community)
        out.add_node(node, **row)
    for u, v, key, attrs in g.edges(keys=True, data=True):
        out.add_edge(u, v, key=key, id=key, **{k: val for k, val in attrs.items() if val is not None})
    with replacing(path) as tmp:  # a unique temporary name: two exports of one path at once both finish
        if fmt == "graphml":
            nx.write_graphml(out, tmp)
        else:
            nx.write_gexf(out, tmp)
    return out.number_of_nodes(), out.number_of_edges()
