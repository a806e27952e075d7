"""The experience memory's hit rate against the bank's size (seed 001, section 5.5 and Figure 4(a)).

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 5.5 ("hit rate measures the fraction of test queries
for which at least one bank entry exceeds the threshold"; at tau = 0.65 it rises from 43.2 % at 120 entries to
79.8 % at 1,200) and Appendix E (cumulative bank snapshots, tau swept over [0.50, 0.90]). A question that retrieves
nothing gets the agent's answer unchanged (the fallback), so the memory can change an answer only on a hit: the hit
rate bounds the share of questions on which the memory can move EM.

finkg's bank is learned from the training half's arithmetic questions in file order (``finkg experience learn``),
one entry per question except where a near-duplicate is merged into an earlier one (which keeps the earlier
entry's embedding, at cosine >= 0.97 with the dropped one). So the bank after ``n`` learned questions is, up to
those merges, the first ``n`` training questions' query embeddings, and its hit rate can be read off for every
``n`` up to the whole training half without learning them (:func:`hit_rates`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

SEED_THRESHOLDS = (0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80, 0.85, 0.90)
"""The nine thresholds of seed 001's sweep (Figure 4(a))."""


def hit_rates(
    queries: np.ndarray, bank: np.ndarray, sizes: Sequence[int], thresholds: Sequence[float] = SEED_THRESHOLDS
) -> list[dict[str, Any]]:
    """The hit rate of each bank prefix: for each ``size`` in ``sizes``, the fraction of ``queries`` whose best
    cosine with the first ``size`` rows of ``bank`` is at least ``tau``, for each ``tau`` of ``thresholds``.

    Args:
        queries: (n, d) L2-normalised query embeddings (n >= 1). bank: (m, d) L2-normalised entry embeddings in
            the order they were learned. sizes: prefix lengths, each in 0..m (0: the empty bank, hit rate 0).
        thresholds: cosine thresholds.

    Returns:
        One row per size, in the given order: ``{"entries": size, "hit_rate": {f"{tau:.2f}": fraction}}``.

    Raises:
        ValueError: no queries, dimensions that differ, or a size outside 0..m.
    """
    if queries.ndim != 2 or len(queries) == 0:
        raise ValueError(f"queries: expected an (n, d) array with n >= 1, got shape {queries.shape}")
    if bank.ndim != 2 or (len(bank) and bank.shape[1] != queries.shape[1]):
        raise ValueError(f"bank: expected an (m, {queries.shape[1]}) array, got shape {bank.shape}")
    bad = [s for s in sizes if not 0 <= s <= len(bank)]
    if bad:
        raise ValueError(f"bank size {bad[0]}: the bank has {len(bank)} entries (sizes must be 0..{len(bank)})")
    best = np.maximum.accumulate(queries @ bank.T, axis=1) if len(bank) else np.empty((len(queries), 0))
    rows = []
    for size in sizes:
        top = best[:, size - 1] if size else np.full(len(queries), -np.inf)
        rows.append({"entries": int(size), "hit_rate": {f"{t:.2f}": float(np.mean(top >= t)) for t in thresholds}})
    return rows
