"""Cluster-weighted triple retrieval from the extracted knowledge graph (TFR), and dense triple retrieval.

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, section 3.2, "Cluster-based Retrieval": the query and
the KG triples are encoded with one encoder; the top-n triples (n >> k) are retrieved; each triple
belongs to a cluster (the pair head cluster, tail cluster); the mean similarity of each cluster's
retrieved triples goes through a softmax into a weight; k * weight triples are taken from each cluster,
rounded to the nearest integer, "then minor adjustments" so that exactly k come back. finkg's
adjustments (the paper does not spell them out) are in :func:`allocate`. The dense-triples baseline
(Table 2, "Triples Retrieve") is :meth:`TripleIndex.dense`: the top-k by similarity, no clusters.

The index holds every triple's embedding in memory (float32, ``n x d``; 100,000 triples with a
384-d encoder take 154 MB); a query is one matrix-vector product plus a partial sort. Embeddings
are stored on the relationships (``r.embedding``, ``r.embedding_model``), so only new triples are
encoded when the index is loaded again.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kg import BatchWriter, Graph, cypher
from kg.progress import Tick
from retrieval.contract import AsOf, Undated, as_of_cutoff, available
from retrieval.embeddings import Embedder, stored_vectors

RELATION_WORDS = {
    "AFFECT": "affects",
    "INDICATE": "indicates",
    "BELONG_TO": "belongs to",
    "EQUAL_TO": "equals",
    "MAY_LEAD_TO": "may lead to",
}


@dataclass(frozen=True)
class Triple:
    """One extracted triple as retrieval sees it.

    Attributes:
        id: the relationship's ``id``; relation: its type (``AFFECT`` ...); head, tail: entity names;
        head_id, tail_id: entity ids; cluster: ``"<head cluster>|<tail cluster>"``; chunk_id: source chunk;
        available_at: when the source chunk became available (ISO UTC), None when undated.
    """

    id: str
    relation: str
    head: str
    tail: str
    head_id: str
    tail_id: str
    cluster: str
    chunk_id: str | None
    available_at: str | None = None

    @property
    def text(self) -> str:
        """``"<head> <relation words> <tail>"``, what is encoded and shown to the LLM."""
        return f"{self.head} {RELATION_WORDS.get(self.relation, self.relation.lower())} {self.tail}"


@dataclass(frozen=True)
class ScoredTriple:
    """A retrieved triple with its cosine similarity to the query and its cluster's weight (TFR only)."""

    triple: Triple
    score: float
    cluster_weight: float | None = None


def softmax(x: np.ndarray, temperature: float) -> np.ndarray:
    """``exp(x / T) / sum(exp(x / T))``, computed stably.

    Raises:
        ValueError: ``temperature`` <= 0.
    """
    if temperature <= 0:
        raise ValueError(f"softmax temperature must be > 0, got {temperature}")
    z = np.asarray(x, dtype=np.float64) / temperature
    z = np.exp(z - z.max())
    return z / z.sum()


def allocate(weights: Sequence[float], available: Sequence[int], k: int) -> list[int]:
    """How many triples to take from each cluster: ``round(k * weight)``, then adjusted to exactly k.

    Seed 004 section 3.2 ("we round the calculated number of triples for each cluster to the nearest
    integer and then make minor adjustments"). The adjustments, in order:

    1. a cluster never gives more than it has among the top-n (``available``);
    2. while the total is below k, one more from the cluster whose share ``k * w`` exceeds its count
       most (ties: the larger weight, then the earlier cluster), among clusters with triples left;
    3. while above k, one fewer from the cluster whose count exceeds its share most (ties: the
       smaller weight, then the later cluster).

    Args:
        weights: one weight per cluster (softmax output, sums to 1).
        available: triples of each cluster among the top-n.
        k: triples wanted (>= 0).

    Returns:
        Counts per cluster, summing to ``min(k, sum(available))``.

    Raises:
        ValueError: lengths differ, or k < 0.
    """
    if len(weights) != len(available):
        raise ValueError(f"{len(weights)} weights for {len(available)} clusters")
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    share = [k * float(w) for w in weights]
    counts = [min(math.floor(s + 0.5), a) for s, a in zip(share, available)]
    target = min(k, sum(available))
    while sum(counts) < target:
        i = max(
            (i for i in range(len(counts)) if counts[i] < available[i]),
            key=lambda i: (share[i] - counts[i], weights[i], -i),
        )
        counts[i] += 1
    while sum(counts) > target:
        i = max((i for i in range(len(counts)) if counts[i] > 0), key=lambda i: (counts[i] - share[i], -weights[i], i))
        counts[i] -= 1
    return counts


class TripleIndex:
    """The knowledge graph's triples and their embeddings, for dense and cluster-weighted retrieval.

    Args:
        triples: the triples, in a fixed order.
        vectors: ``(len(triples), d)`` float32, rows of unit norm (cosine = dot product).
        embedder: the encoder of the vectors (queries are encoded with it).
        undated: what an ``as_of`` retrieval does with triples that have no availability time: ``drop``
            (the graph's index: nothing proves they were public) or ``keep`` (see :mod:`retrieval.contract`).

    Raises:
        ValueError: the shapes disagree.
    """

    def __init__(
        self, triples: Sequence[Triple], vectors: np.ndarray, embedder: Embedder, undated: Undated = "keep"
    ) -> None:
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(triples):
            raise ValueError(f"{len(triples)} triples but vectors of shape {vectors.shape}")
        self.triples = list(triples)
        self.vectors = vectors
        self.embedder = embedder
        self._cluster_of = [t.cluster for t in self.triples]
        self.undated: Undated = undated
        self._available = np.array([t.available_at or "" for t in self.triples], dtype=object)

    def __len__(self) -> int:
        return len(self.triples)

    @classmethod
    def from_graph(
        cls, graph: Graph, embedder: Embedder, batch_size: int = 1000, progress: Tick | None = None
    ) -> TripleIndex:
        """Load every extracted triple; encode (and store on its relationship) those without an
        embedding from ``embedder``; ``progress(n)`` is called as triples are encoded."""
        rows = graph.read(cypher.triples_for_retrieval(), {"model": embedder.identity})
        triples = [
            Triple(
                r["id"],
                r["relation"],
                r["head"],
                r["tail"],
                r["head_id"],
                r["tail_id"],
                r["cluster"],
                r["chunk_id"],
                str(r["available_at"]) if r["available_at"] is not None else None,
            )
            for r in rows
        ]
        vectors, todo = stored_vectors([r["embedding"] for r in rows], embedder.dimensions)
        if todo:
            vectors[todo] = embedder.encode([triples[i].text for i in todo], progress=progress)
            writer = BatchWriter(graph, batch_size=batch_size)
            writer.run_batches(
                cypher.SET_TRIPLE_EMBEDDINGS,
                [
                    {
                        "id": triples[i].id,
                        "head_id": triples[i].head_id,
                        "tail_id": triples[i].tail_id,
                        "vector": vectors[i].tolist(),
                    }
                    for i in todo
                ],
                {"model": embedder.identity},
            )
        return cls(triples, vectors, embedder, undated="drop")

    def encode(self, query: str) -> np.ndarray:
        """The query's unit vector, shape ``(d,)``."""
        return self.embedder.encode([query])[0]

    def allowed(self, as_of: AsOf | None) -> np.ndarray:
        """Boolean mask of the triples available at ``as_of`` (all of them when ``as_of`` is None).

        Raises:
            RetrievalError: an unreadable ``as_of``.
        """
        if as_of is None:
            return np.ones(len(self.triples), dtype=bool)
        cutoff = as_of_cutoff(as_of)
        return np.array([available(a or None, cutoff, self.undated) for a in self._available], dtype=bool)

    def _top(self, qvec: np.ndarray, n: int, as_of: AsOf | None = None) -> tuple[np.ndarray, np.ndarray]:
        sims = self.vectors @ qvec
        if as_of is not None:  # future triples leave before any score is compared (seed 000, 3.3)
            mask = self.allowed(as_of)
            sims = np.where(mask, sims, -np.inf)
            n = min(n, int(mask.sum()))
        n = min(n, len(sims))
        if n <= 0:
            return np.empty(0, dtype=np.int64), sims
        idx = np.argpartition(-sims, n - 1)[:n]
        idx = idx[np.lexsort((idx, -sims[idx]))]  # best first, ties by position (deterministic)
        return idx, sims

    def dense(self, query: str | np.ndarray, k: int, *, as_of: AsOf | None = None) -> list[ScoredTriple]:
        """The dense-triples baseline: the ``k`` triples most similar to ``query``, best first; with
        ``as_of``, only triples available then (:mod:`retrieval.contract`)."""
        qvec = self.encode(query) if isinstance(query, str) else query
        idx, sims = self._top(qvec, k, as_of)
        return [ScoredTriple(self.triples[i], float(sims[i])) for i in idx]

    def cluster_weighted(
        self, query: str | np.ndarray, k: int, n: int, temperature: float, *, as_of: AsOf | None = None
    ) -> list[ScoredTriple]:
        """TFR retrieval (seed 004 section 3.2): top-``n`` triples, per-cluster mean similarity,
        softmax with ``temperature`` into weights, :func:`allocate` ``k`` over the clusters, the best
        triples of each cluster. With ``as_of``, triples available later are removed first, so they
        shape neither the top-``n`` nor the cluster weights.

        Returns:
            Exactly ``min(k, available triples)`` triples: clusters in order of weight, best first within each.

        Raises:
            ValueError: ``n < k`` (the paper's n >> k), or temperature <= 0.
        """
        if n < k:
            raise ValueError(f"top-n ({n}) must be at least k ({k})")
        qvec = self.encode(query) if isinstance(query, str) else query
        idx, sims = self._top(qvec, n, as_of)
        if len(idx) == 0:  # nothing available at as_of
            return []
        members: dict[str, list[int]] = defaultdict(list)
        for i in idx:  # best first within each cluster, since idx is sorted
            members[self._cluster_of[i]].append(int(i))
        clusters = list(members)
        means = np.array([float(np.mean(sims[members[c]])) for c in clusters])
        weights = softmax(means, temperature)
        counts = allocate(weights.tolist(), [len(members[c]) for c in clusters], k)
        order = sorted(range(len(clusters)), key=lambda j: (-weights[j], j))
        return [
            ScoredTriple(self.triples[i], float(sims[i]), float(weights[j]))
            for j in order
            for i in members[clusters[j]][: counts[j]]
        ]
