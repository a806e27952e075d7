"""Bootstrap intervals of evaluation means, checked against the normal approximation computed by hand."""

from __future__ import annotations

import math

import pytest

from finkg.eval.metrics.intervals import bootstrap_mean, paired_bootstrap_difference
from kg.errors import EvaluationError


def test_the_interval_of_a_proportion_matches_the_normal_approximation():
    values = [1.0, 0.0] * 200  # p = 0.5, n = 400: standard error sqrt(.25 / 400) = .025
    ci = bootstrap_mean(values, resamples=4000, seed=1)
    assert ci.mean == 0.5 and ci.n == 400
    assert ci.low == pytest.approx(0.5 - 1.96 * 0.025, abs=0.006)
    assert ci.high == pytest.approx(0.5 + 1.96 * 0.025, abs=0.006)
    assert bootstrap_mean(values, resamples=4000, seed=1) == ci  # a fixed seed gives the same interval
    constant = bootstrap_mean([0.4] * 10)
    assert (constant.low, constant.mean, constant.high) == pytest.approx((0.4, 0.4, 0.4))


def test_the_paired_difference_removes_what_the_items_share():
    base = [i / 100 for i in range(100)]  # widely spread items
    better = [v + 0.05 for v in base]  # the same items, each 0.05 better
    d = paired_bootstrap_difference(better, base)
    assert (d.mean, d.low, d.high) == pytest.approx((0.05, 0.05, 0.05))
    unpaired_width = bootstrap_mean(better).high - bootstrap_mean(better).low
    assert unpaired_width > 0.1 and math.isclose(d.high - d.low, 0.0, abs_tol=1e-12)
    as_dict = d.as_dict()
    assert set(as_dict) == {"mean", "ci_low", "ci_high", "n"} and as_dict["n"] == 100


def test_bad_scores_are_named_errors():
    with pytest.raises(EvaluationError, match="no scores"):
        bootstrap_mean([])
    with pytest.raises(EvaluationError, match="finite"):
        bootstrap_mean([0.1, float("nan")])
    with pytest.raises(EvaluationError, match="3 and 2 scores"):
        paired_bootstrap_difference([1, 2, 3], [1, 2])
