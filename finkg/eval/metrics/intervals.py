"""Confidence intervals of evaluation means: the percentile bootstrap over items, and its paired form.

Every benchmark reports a mean over items (questions, anchors); its 95 % interval comes from resampling the
items with replacement ``resamples`` times with a fixed seed (Efron and Tibshirani 1993, ch. 13, the
percentile interval). Two systems scored on the same items are compared with the *paired* bootstrap: the
items are resampled once per round for both, so the interval is that of the mean difference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np

from kg.errors import EvaluationError

Scores: TypeAlias = Sequence[float] | np.ndarray
"""One score per item: a sequence of floats or a 1-d numpy array."""


@dataclass(frozen=True)
class Interval:
    """A mean and its ``level`` (0.95) percentile-bootstrap interval ``low``..``high``; ``n`` items."""

    mean: float
    low: float
    high: float
    n: int
    level: float = 0.95

    def as_dict(self, digits: int = 4) -> dict[str, float | int]:
        """``{"mean", "ci_low", "ci_high", "n"}`` rounded to ``digits``."""
        return {
            "mean": round(self.mean, digits),
            "ci_low": round(self.low, digits),
            "ci_high": round(self.high, digits),
            "n": self.n,
        }


def _check(values: Scores, what: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or len(array) == 0:
        raise EvaluationError(f"{what}: no scores to bootstrap")
    if not np.isfinite(array).all():
        raise EvaluationError(f"{what}: scores must be finite")
    return array


def bootstrap_mean(values: Scores, *, resamples: int = 2000, level: float = 0.95, seed: int = 0) -> Interval:
    """The mean of ``values`` (one score per item) with its percentile-bootstrap interval.

    Raises:
        EvaluationError: no values, or a non-finite one.
    """
    x = _check(values, "bootstrap")
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), size=(resamples, len(x)))].mean(axis=1)
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Interval(float(x.mean()), float(low), float(high), len(x), level)


def paired_bootstrap_difference(
    a: Scores, b: Scores, *, resamples: int = 2000, level: float = 0.95, seed: int = 0
) -> Interval:
    """The mean of ``a - b`` over the same items (``a[i]`` and ``b[i]`` score item ``i``) with its paired
    percentile-bootstrap interval; an interval that excludes 0 is a difference the sample supports.

    Raises:
        EvaluationError: lengths differ, no values, or a non-finite one.
    """
    x, y = _check(a, "paired bootstrap (a)"), _check(b, "paired bootstrap (b)")
    if len(x) != len(y):
        raise EvaluationError(f"paired bootstrap: {len(x)} and {len(y)} scores; the items must be the same")
    return bootstrap_mean(x - y, resamples=resamples, level=level, seed=seed)
