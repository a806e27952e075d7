"""The extracted knowledge graph's entities: embeddings, resolution and clustering (``finkg cluster``).

Seed 004, section 3.2 ("Clustering of Triples"): entities are embedded, clustered by agglomerative
clustering on cosine distance with a distance threshold, and each triple's cluster is the pair
(head cluster, tail cluster). :func:`run_cluster` does, over the ``(:Entity)`` nodes:

1. reads the entities page by page with their stored embedding when ``embedding_model`` equals the
   configured model's identity; embeds the others (``[embedding]``) and writes their vectors in
   batches (``db.create.setNodeVectorProperty``: float32 on the node);
2. ensures the vector index ``entity_embedding`` (cosine, the model's dimensions; created
   idempotently; an index of other dimensions is an error that says how to replace it);
3. resolves entities (``generation.kgbuild.resolution``: exact, identifier, fuzzy, embedding; merges
   recorded, relationships moved);
4. clusters the surviving entities (``generation.kgbuild.clustering.agglomerative_clusters``) and writes
   each entity's ``cluster`` (the id of the member closest to the cluster's mean direction: stable
   and readable, e.g. ``indicator:net income loss``) and ``cluster_run``; then each extracted
   relationship's ``cluster = "<head cluster>|<tail cluster>"``.

``cluster_run`` is a hash of the model, the parameters and the entity ids, so a rerun on unchanged
entities writes nothing and embeds nothing.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from finkg.config import Settings
from generation.kgbuild import resolution
from generation.kgbuild.clustering import agglomerative_clusters, knn, representatives
from generation.kgbuild.resolution import Entity
from kg import BatchWriter, Graph, GraphError, cypher
from kg.progress import Advance, StageProgress, stage
from retrieval.embeddings import Embedder, make_embedder, stored_vectors

VECTOR_INDEX = "entity_embedding"
PAGE = 5_000


class VectorIndexMismatch(GraphError):
    """The vector index exists with other dimensions than the configured embedding model's."""


@dataclass
class ClusterSummary:
    """What :func:`run_cluster` did.

    Attributes:
        entities: entities read (before merges).
        embedded: entities (re-)embedded in this run.
        merges: merges per method (``exact``, ``identifier``, ``fuzzy``, ``embedding``).
        linked: entities linked to a Company or Concept (SAME_AS).
        clusters, singletons, largest: clusters of the surviving entities, those with one member,
            members of the biggest.
        triples: extracted relationships among the entities; ``triple_clusters``: their distinct
            (head cluster, tail cluster) pairs.
        updated: entities and relationships whose cluster changed.
        run: the clustering run id; ``model``: the embedder identity; ``seconds``: wall time.
    """

    entities: int = 0
    embedded: int = 0
    merges: Counter = field(default_factory=Counter)
    linked: int = 0
    clusters: int = 0
    singletons: int = 0
    largest: int = 0
    triples: int = 0
    triple_clusters: int = 0
    updated: int = 0
    run: str = ""
    model: str = ""
    seconds: float = 0.0

    def rows(self) -> list[dict[str, Any]]:
        """The closing table of ``finkg cluster``: one row per figure."""
        figures = [("entities", self.entities), ("embedded", self.embedded)]
        figures += [(f"merges: {m}", self.merges.get(m, 0)) for m in resolution.METHODS]
        figures += [
            ("linked to Company/Concept", self.linked),
            ("clusters", self.clusters),
            ("singleton clusters", self.singletons),
            ("largest cluster", self.largest),
            ("triples", self.triples),
            ("triple clusters", self.triple_clusters),
            ("cluster values changed", self.updated),
            ("run", self.run),
            ("model", self.model),
            ("seconds", round(self.seconds, 1)),
        ]
        return [{"figure": k, "value": v} for k, v in figures]


def _tick(progress: StageProgress | None, name: str, total: int) -> Advance:
    return stage(progress, name, total)


def read_entities(
    graph: Graph, model: str, ids: Sequence[str] | None = None
) -> tuple[list[Entity], list[list[float] | None]]:
    """Every entity (or those of ``ids``) ordered by id, with its stored embedding when it was made
    by ``model`` (else None)."""
    entities: list[Entity] = []
    vectors: list[list[float] | None] = []
    after = ""
    while True:
        page = graph.read(
            cypher.ENTITIES_PAGE,
            {"after": after, "ids": list(ids) if ids is not None else None, "model": model, "limit": PAGE},
        )
        for r in page:
            entities.append(
                Entity(r["id"], r["type"] or "", r["key"] or "", r["name"] or r["id"], int(r["degree"] or 0))
            )
            vectors.append(r["embedding"])
        if len(page) < PAGE:
            return entities, vectors
        after = page[-1]["id"]


def embed_entities(
    graph: Graph,
    embedder: Embedder,
    entities: Sequence[Entity],
    stored: Sequence[list[float] | None],
    batch_size: int = 1_000,
    progress: StageProgress | None = None,
) -> tuple[np.ndarray, int]:
    """Vectors of all ``entities``: the stored ones, and new ones for the rest (written back).

    Returns:
        ``(float32 (n, d) unit rows, number embedded now)``.
    """
    x, missing = stored_vectors(stored, embedder.dimensions)
    if missing:
        new = embedder.encode(
            [entities[i].name for i in missing], progress=_tick(progress, "embedding entities", len(missing))
        )
        x[missing] = new
        tick = _tick(progress, "writing embeddings", len(missing))
        for start in range(0, len(missing), batch_size):
            part = missing[start : start + batch_size]
            rows = [{"id": entities[i].id, "embedding": x[i].tolist()} for i in part]
            graph.write(cypher.SET_ENTITY_EMBEDDINGS, {"rows": rows, "model": embedder.identity})
            tick(len(part))
    return x, len(missing)


def ensure_vector_index(graph: Graph, dimensions: int, name: str = VECTOR_INDEX) -> bool:
    """Create the cosine vector index on ``Entity.embedding`` if absent; True when created.

    Raises:
        VectorIndexMismatch: an index of that name exists with other dimensions (another model);
            the message says to drop it and rerun.
    """
    shown = graph.read(cypher.SHOW_VECTOR_INDEX, {"name": name})
    if shown:
        config = (shown[0].get("options") or {}).get("indexConfig") or {}
        have = config.get("vector.dimensions")
        if have is not None and int(have) != dimensions:
            raise VectorIndexMismatch(
                f"vector index {name} has {have} dimensions but the [embedding] model makes {dimensions}: "
                f'drop it (finkg cypher --write "DROP INDEX {name}") and rerun `finkg cluster` '
                "(every entity is re-embedded with the new model)"
            )
        return False
    graph.run_autocommit(
        cypher.create_index(name, "vector", "Entity", ["embedding"], dimensions=dimensions, similarity="cosine")
    )
    graph.run_autocommit(cypher.AWAIT_INDEXES, {"timeout_s": 300})
    return True


def cluster_run_id(model: str, settings: Settings, ids: Sequence[str]) -> str:
    """``"cl-<12 hex>"``: a hash of the model identity, the clustering parameters and the ids."""
    h = hashlib.sha256(f"{model}|{settings.cluster.distance_threshold}|{settings.cluster.n_neighbors}|average".encode())
    for i in ids:
        h.update(i.encode() + b"\0")
    return "cl-" + h.hexdigest()[:12]


def resolve(
    graph: Graph,
    settings: Settings,
    entities: list[Entity],
    x: np.ndarray,
    run: str,
    summary: ClusterSummary,
    progress: StageProgress | None = None,
) -> tuple[list[Entity], np.ndarray]:
    """Run the four resolution stages (``generation.kgbuild.resolution``) and apply each stage's merges.

    Returns:
        The surviving entities and their vectors (rows of ``x``).
    """
    writer = BatchWriter(graph, batch_size=settings.writer.batch_size)
    redirected = {k: v for k, v in resolution.resolve_ids(graph, [e.id for e in entities]).items() if k != v}
    summary.linked = resolution.identifier_links(graph, writer, entities)
    keep = np.arange(len(entities))
    for method, threshold in (
        ("exact", None),
        ("identifier", None),
        ("fuzzy", settings.cluster.fuzzy_threshold),
        ("embedding", settings.cluster.embedding_merge_threshold),
    ):
        active = [entities[i] for i in keep]
        neighbors = None
        if method in ("fuzzy", "embedding") and len(active) > 1:
            neighbors, _ = knn(
                x[keep],
                settings.cluster.n_neighbors,
                progress=_tick(progress, f"{method} candidates (kNN)", len(active)),
            )
        merges = resolution.plan_merges(active, x[keep], neighbors, method, threshold, redirected)
        if merges:
            summary.merges.update(
                resolution.apply_merges(graph, merges, run, progress=_tick(progress, f"{method} merges", len(merges)))
            )
            gone = {m.from_id for m in merges}
            keep = np.array([i for i in keep if entities[i].id not in gone], dtype=np.int64)
    return [entities[i] for i in keep], x[keep]


def run_cluster(
    graph: Graph,
    settings: Settings,
    ids: Sequence[str] | None = None,
    embedder: Embedder | None = None,
    progress: StageProgress | None = None,
) -> ClusterSummary:
    """Embed, resolve and cluster the entities; write cluster ids and triple clusters (``finkg cluster``).

    Args:
        ids: only these entity ids (None: every ``(:Entity)``); relationships are clustered when
            both ends are among them.
        embedder: the model (default: from ``[embedding]`` settings).
        progress: ``progress(stage, total)`` returns a callback advanced with counts.

    Returns:
        A :class:`ClusterSummary`.

    Raises:
        retrieval.embeddings.EmbeddingModelError: no usable ``[embedding] model_path``.
        VectorIndexMismatch: the vector index has other dimensions than the model.
    """
    t0 = time.perf_counter()
    embedder = embedder or make_embedder(
        settings.embedding.model_path,
        settings.embedding.backend,
        settings.embedding.batch_size,
        settings.embedding.device,
    )
    summary = ClusterSummary(model=embedder.identity)
    entities, stored = read_entities(graph, embedder.identity, ids)
    summary.entities = len(entities)
    x, summary.embedded = embed_entities(graph, embedder, entities, stored, progress=progress)
    ensure_vector_index(graph, embedder.dimensions)
    resolution_run = "er-" + hashlib.sha256("\0".join(e.id for e in entities).encode()).hexdigest()[:12]
    entities, x = resolve(graph, settings, entities, x, resolution_run, summary, progress)
    ids_after = [e.id for e in entities]
    summary.run = run = cluster_run_id(embedder.identity, settings, ids_after)
    if entities:
        labels = agglomerative_clusters(
            x,
            settings.cluster.distance_threshold,
            settings.cluster.n_neighbors,
            progress=_tick(progress, "clustering", 2 * len(entities)),
        )
        reps = representatives(x, labels)
        sizes = np.bincount(labels)
        summary.clusters, summary.singletons = len(sizes), int((sizes == 1).sum())
        summary.largest = int(sizes.max())
        rows = [{"id": e.id, "cluster": entities[reps[label]].id} for e, label in zip(entities, labels)]
        tick = _tick(progress, "writing clusters", len(rows))
        for start in range(0, len(rows), PAGE):
            res = graph.write(cypher.SET_ENTITY_CLUSTERS, {"rows": rows[start : start + PAGE], "run": run})
            summary.updated += int(res.records[0]["updated"]) if res.records else 0
            tick(len(rows[start : start + PAGE]))
    scope = None if ids is None else ids_after
    res = graph.run_autocommit(cypher.set_triple_clusters(), {"ids": scope, "run": run})
    summary.updated += int(res.records[0]["updated"]) if res.records else 0
    counts = graph.read(cypher.count_triple_clusters(), {"ids": scope})
    summary.triples, summary.triple_clusters = counts[0]["triples"], counts[0]["clusters"]
    summary.seconds = time.perf_counter() - t0
    return summary


def query_similar(graph: Graph, vector: Sequence[float], k: int = 10) -> list[dict[str, Any]]:
    """The ``k`` entities nearest to ``vector`` through the vector index (``db.index.vector.queryNodes``):
    rows ``{id, score}``, best first (score: Neo4j's cosine score in [0, 1])."""
    return graph.read(cypher.QUERY_VECTOR_INDEX, {"index": VECTOR_INDEX, "k": k, "vector": list(map(float, vector))})
