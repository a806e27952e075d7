"""Agglomerative clustering of node embeddings on cosine distance with a distance threshold, at scale.

Seed 004, section 3.2 ("Clustering of Triples"): nodes are encoded, then grouped by agglomerative
clustering (Müllner 2011) on cosine distance with a distance threshold; a triple's cluster is the
pair (head cluster, tail cluster). Pure functions on numpy arrays; the graph side is in
``finkg.knowledge``.

**Why not the textbook algorithm.** Exact average-linkage clustering needs every pairwise
distance: for 50,000 nodes that is 1.25e9 distances, 10 GB as scipy's condensed float64 matrix
(20 GB as a square one), over an 8 GB budget. :func:`agglomerative_clusters` is
**connectivity-constrained** average linkage instead:

1. an exact k-nearest-neighbour graph by cosine (:func:`knn`, blocked matrix products: memory
   ``block_rows x n`` floats at a time, O(n * k) kept), made symmetric;
2. its connected components are clustered separately (no cluster can span two components);
3. within each component, scikit-learn's ``AgglomerativeClustering(metric="cosine",
   linkage="average", distance_threshold=t, connectivity=<the kNN graph>)``: two clusters may
   merge only when an edge of the graph joins them, and the distance between clusters is
   scikit-learn's size-weighted average of the *edge* distances between them (not of all
   member pairs).

Memory is O(n * k) instead of O(n^2). **What it changes against exact clustering:** (a) two
clusters whose members are never among each other's k nearest neighbours are never merged, even
when their exact average distance is below the threshold (this splits loose, elongated groups);
(b) the linkage distance is the average over neighbour edges, which are the closest pairs, so it
is smaller than the exact average and a constrained merge can happen where the exact one would
stop (this joins chains of close neighbours). ``bench/clustering.py`` measures the net effect
against exact full-matrix clustering on the same real labels (adjusted Rand index, number of
clusters) and the time and peak memory at 10k and 50k nodes.

Labels are deterministic: the same vectors in the same order give the same labels; labels are
numbered by their smallest member index (the cluster of row 0 is 0).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components
from sklearn.cluster import AgglomerativeClustering

Progress = Callable[[int], None]
LINKAGES = ("average", "complete", "single")


def _check_vectors(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"vectors must be a 2-d array (n, d); got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("vectors hold NaN or infinite values")
    return x


def knn(x: np.ndarray, k: int, block_rows: int = 1024,
        progress: Progress | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact k nearest neighbours of every row by cosine similarity (rows of unit norm), self excluded.

    Computed in blocks of ``block_rows`` rows against all rows (peak extra memory
    ``block_rows * n * 4`` bytes: 200 MB for 1,024 x 50,000). Neighbours are ordered by
    decreasing similarity, ties by increasing index, so the result is deterministic.

    Args:
        x: float array ``(n, d)`` of L2-normalized rows.
        k: neighbours per row (capped at ``n - 1``; >= 1).
        block_rows: rows per matrix product (>= 1).
        progress: called with the rows done after each block.

    Returns:
        ``(indices, similarities)``: int64 and float32 arrays of shape ``(n, min(k, n - 1))``.

    Raises:
        ValueError: ``k < 1``, ``block_rows < 1`` or ``x`` not a finite 2-d array.
    """
    x = _check_vectors(x)
    if k < 1 or block_rows < 1:
        raise ValueError("k and block_rows must be >= 1")
    n = len(x)
    k = min(k, n - 1)
    indices = np.empty((n, max(k, 0)), dtype=np.int64)
    sims = np.empty((n, max(k, 0)), dtype=np.float32)
    if k == 0:
        return indices, sims
    for start in range(0, n, block_rows):
        block = x[start:start + block_rows] @ x.T
        rows = np.arange(len(block))
        block[rows, start + rows] = -np.inf
        part = np.argpartition(-block, k - 1, axis=1)[:, :k]
        psim = np.take_along_axis(block, part, axis=1)
        order = np.lexsort((part, -psim), axis=1)
        indices[start:start + len(block)] = np.take_along_axis(part, order, axis=1)
        sims[start:start + len(block)] = np.take_along_axis(psim, order, axis=1)
        if progress is not None:
            progress(len(block))
    return indices, sims


def connectivity_graph(indices: np.ndarray) -> sparse.csr_matrix:
    """The symmetric kNN graph as a sparse boolean ``(n, n)`` matrix: ``i ~ j`` when either is
    among the other's neighbours (``indices`` as returned by :func:`knn`)."""
    n, k = indices.shape
    rows = np.repeat(np.arange(n), k)
    graph = sparse.csr_matrix((np.ones(n * k, dtype=bool), (rows, indices.ravel())), shape=(n, n))
    return (graph + graph.T).tocsr()


def canonical_labels(labels: np.ndarray) -> np.ndarray:
    """Renumber cluster labels ``0..c-1`` in the order of each cluster's smallest member index."""
    labels = np.asarray(labels)
    if labels.size == 0:
        return labels.astype(np.int64)
    uniq, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(uniq))
    return rank[inverse]


def agglomerative_clusters(
    x: np.ndarray,
    distance_threshold: float,
    n_neighbors: int = 15,
    linkage: str = "average",
    block_rows: int = 1024,
    progress: Progress | None = None,
) -> np.ndarray:
    """Connectivity-constrained agglomerative clustering on cosine distance (see the module
    docstring for the method, its memory and what it changes against exact clustering).

    Args:
        x: float array ``(n, d)`` of L2-normalized embeddings.
        distance_threshold: cosine distance (``1 - cosine similarity``, in [0, 2]) at or above
            which clusters are not merged (scikit-learn's meaning).
        n_neighbors: k of the kNN connectivity graph (>= 1); more neighbours approach exact
            clustering at more memory and time.
        linkage: ``average`` (seed 004 / the default), ``complete`` or ``single``.
        block_rows: rows per block of the kNN search.
        progress: called with a count of rows done (kNN rows, then clustered rows; total ``2n``).

    Returns:
        int64 labels of shape ``(n,)``, numbered by smallest member index (:func:`canonical_labels`).

    Raises:
        ValueError: a threshold outside (0, 2], ``n_neighbors < 1``, an unknown linkage, or
            vectors that are not a finite 2-d array.
    """
    x = _check_vectors(x)
    if not 0 < distance_threshold <= 2:
        raise ValueError(f"distance_threshold {distance_threshold}: a cosine distance in (0, 2]")
    if n_neighbors < 1:
        raise ValueError("n_neighbors must be >= 1")
    if linkage not in LINKAGES:
        raise ValueError(f"linkage {linkage!r}: expected one of {LINKAGES}")
    n = len(x)
    if n <= 1:
        if progress is not None:
            progress(2 * n)
        return np.zeros(n, dtype=np.int64)
    indices, _ = knn(x, n_neighbors, block_rows, progress)
    graph = connectivity_graph(indices)
    n_comp, comp = connected_components(graph, directed=False)
    labels = np.empty(n, dtype=np.int64)
    order = np.argsort(comp, kind="stable")
    bounds = np.searchsorted(comp[order], np.arange(n_comp + 1))
    next_label = 0
    for c in range(n_comp):
        members = order[bounds[c]:bounds[c + 1]]
        if len(members) == 1:
            labels[members] = next_label
            next_label += 1
        else:
            model = AgglomerativeClustering(n_clusters=None, distance_threshold=distance_threshold,
                                            metric="cosine", linkage=linkage,
                                            connectivity=graph[members][:, members])
            sub = model.fit_predict(x[members])
            labels[members] = next_label + sub
            next_label += int(sub.max()) + 1
        if progress is not None:
            progress(len(members))
    return canonical_labels(labels)


def exact_agglomerative_clusters(x: np.ndarray, distance_threshold: float,
                                 linkage: str = "average") -> np.ndarray:
    """Exact agglomerative clustering on the full cosine distance matrix (scikit-learn, no
    connectivity; scipy's Müllner implementation underneath): the baseline of
    :func:`agglomerative_clusters`. Memory O(n^2): 8 bytes x n(n-1)/2 (400 MB at 10,000 rows,
    10 GB at 50,000); use it for samples only.

    Returns:
        int64 labels ``(n,)`` numbered by smallest member index.
    """
    x = _check_vectors(x)
    if len(x) <= 1:
        return np.zeros(len(x), dtype=np.int64)
    model = AgglomerativeClustering(n_clusters=None, distance_threshold=distance_threshold,
                                    metric="cosine", linkage=linkage)
    return canonical_labels(model.fit_predict(x))


def representatives(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """For each cluster label ``0..c-1``, the index of the member closest to the cluster's mean
    direction (ties: the smallest index). ``x`` rows L2-normalized; O(n * d).

    Returns:
        int64 array ``(c,)``.
    """
    x = _check_vectors(x)
    labels = np.asarray(labels)
    c = int(labels.max()) + 1 if labels.size else 0
    centroids = np.zeros((c, x.shape[1]), dtype=np.float64)
    np.add.at(centroids, labels, x)
    score = np.einsum("ij,ij->i", x, centroids[labels])
    order = np.lexsort((np.arange(len(x)), -score, labels))  # by label, best score, index
    first = np.searchsorted(labels[order], np.arange(c))
    return order[first]
