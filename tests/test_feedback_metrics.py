"""Seed-000 evaluation metrics (section 4) on small cases computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from finkg.eval import feedback_metrics as fm

# --------------------------------------------------------------------------- F1


def test_macro_and_non_neutral_f1_by_hand():
    # +1: tp 1 -> F1 1; 0: tp 1, fp 1, fn 1 -> F1 .5; -1: tp 0 -> F1 0
    t, p = [1, 0, -1, 0], [1, 0, 0, -1]
    assert fm.macro_f1(t, p) == pytest.approx((1 + 0.5 + 0) / 3)
    assert fm.non_neutral_f1(t, p) == pytest.approx((1 + 0) / 2)
    # +1: P 1, R .5 -> 2/3; -1: P .5, R 1 -> 2/3; 0: never right -> 0
    t, p = np.array([1, 1, -1, 0]), pd.Series([1, 0, -1, -1])
    assert fm.macro_f1(t, p) == pytest.approx(4 / 9)
    assert fm.non_neutral_f1(t, p) == pytest.approx(2 / 3)


def test_non_neutral_f1_ignores_neutral_agreement_but_not_neutral_misses():
    # all-neutral truth and prediction: perfect macro on class 0, nothing on +-1
    assert fm.non_neutral_f1([0, 0, 0], [0, 0, 0]) == 0.0
    assert fm.macro_f1([0, 0, 0], [0, 0, 0]) == pytest.approx(1 / 3)  # absent classes score 0
    # predicting 0 for a +1 event lowers +1's recall
    assert fm.non_neutral_f1([1, 1, -1, -1], [1, 0, -1, -1]) == pytest.approx((2 / 3 + 1) / 2)


@pytest.mark.parametrize(
    ("t", "p", "message"),
    [
        ([1, 0], [1], "y_true has 2 labels, y_pred 1"),
        ([], [], "no labels"),
        ([1, 2], [1, 0], r"y_true\[1\] is 2"),
        ([1, 0], [1, None], r"y_pred\[1\] is None"),
    ],
)
def test_f1_rejects_bad_input(t, p, message):
    with pytest.raises(ValueError, match=message):
        fm.macro_f1(t, p)
    with pytest.raises(ValueError, match=message):
        fm.non_neutral_f1(t, p)


# --------------------------------------------------------------------------- signals and Rank IC


def test_stock_day_signal_is_the_mean_of_valid_anchors():
    preds = pd.DataFrame(
        {
            "ticker": ["MSFT", "MSFT", "MSFT", "MSFT", "GE", "GE"],
            "prediction_day": pd.to_datetime(["2014-01-24"] * 4 + ["2014-01-24", "2014-01-27"]),
            "horizon": [3, 3, 3, 3, 3, 3],
            "signal": [1, 1, -1, None, 0, None],
            "static_score": [0.9, 0.5, 0.1, 0.7, 0.3, 0.2],
        }
    )
    out = fm.stock_day_signals(preds, also_mean=["static_score"])
    msft = out[out.ticker == "MSFT"].iloc[0]
    assert msft["score"] == pytest.approx(1 / 3) and msft["n_anchors"] == 3
    assert msft["static_score"] == pytest.approx(0.5)  # mean over the three valid anchors
    assert len(out) == 2  # GE on 01-27 had no valid prediction
    with pytest.raises(ValueError, match="signal 2"):
        fm.stock_day_signals(preds.assign(signal=[1, 2, 0, 0, 0, 0]))
    with pytest.raises(KeyError, match="horizon"):
        fm.stock_day_signals(preds.drop(columns="horizon"))


def test_rank_ic_by_hand():
    frame = pd.DataFrame(
        {
            "prediction_day": ["d1"] * 3 + ["d2"] * 3 + ["d3"] * 3 + ["d4"] * 3 + ["d5"],
            "score": [1, 0, -1, 1, 0, -1, 1, 1, 0, 0.5, 0.5, 0.5, 1],
            "residual": [0.03, 0.01, -0.02, -0.01, 0.0, 0.02, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.4],
        }
    )
    ic = fm.rank_ic(frame)
    # d1 +1, d2 -1; d3 ranks (2.5, 2.5, 1) vs (1, 2, 3): -1.5 / sqrt(1.5 * 2); d4 constant, d5 alone
    d3 = -1.5 / math.sqrt(1.5 * 2)
    assert ic.daily.to_dict() == pytest.approx({"d1": 1.0, "d2": -1.0, "d3": d3})
    assert ic.mean == pytest.approx((1 - 1 + d3) / 3) and ic.skipped_days == 2


def test_rank_ic_rejects_empty_and_skips_missing_values():
    with pytest.raises(ValueError, match="no row"):
        fm.rank_ic(pd.DataFrame({"prediction_day": [], "score": [], "residual": []}))
    frame = pd.DataFrame({"prediction_day": ["d"] * 3, "score": [1, 0, None], "residual": [0.1, -0.1, 0.5]})
    assert fm.rank_ic(frame).mean == pytest.approx(1.0)


# --------------------------------------------------------------------------- portfolio

DAYS = pd.DatetimeIndex(["2015-01-05", "2015-01-06", "2015-01-07", "2015-01-08"])
RETURNS = pd.DataFrame({"A": [0.03, -0.03, 0.06, 0.0], "B": [0.0, 0.03, 0.0, 0.03]}, index=DAYS)
SCORES = pd.DataFrame(
    {
        "prediction_day": [DAYS[0], DAYS[0], DAYS[1], DAYS[1], DAYS[2]],
        "ticker": ["A", "B", "A", "B", "A"],
        "score": [1.0, 0.5, -0.5, 1 / 3, 0.0],
    }
)


def test_sleeves_by_hand():
    w = fm.sleeve_weights(SCORES, DAYS, ["A", "B"], fm.PortfolioConfig(top_k=1))
    # sleeve of day 0 = {A}, of day 1 = {B} (A is negative), day 2: nothing positive (score 0)
    expected = np.array([[1 / 3, 0], [1 / 3, 1 / 3], [1 / 3, 1 / 3], [0, 1 / 3]])
    np.testing.assert_allclose(w.to_numpy(), expected)
    # K = 2: both names on day 0 at 1/2 each, B alone on day 1 (half the sleeve stays cash)
    w2 = fm.sleeve_weights(SCORES, DAYS, ["A", "B"], fm.PortfolioConfig(top_k=2))
    np.testing.assert_allclose(w2.to_numpy()[1], [1 / 6, 1 / 6 + 1 / 6])


def test_ties_break_by_static_score_then_ticker():
    scores = pd.DataFrame(
        {
            "prediction_day": [DAYS[0]] * 3,
            "ticker": ["C", "B", "A"],
            "score": [1.0, 1.0, 1.0],
            "static": [0.2, 0.9, 0.2],
        }
    )
    cfg = fm.PortfolioConfig(top_k=2)
    w = fm.sleeve_weights(scores, DAYS, ["A", "B", "C"], cfg, tiebreak="static")
    assert w.iloc[0].to_dict() == pytest.approx({"A": 1 / 6, "B": 1 / 6, "C": 0.0})  # B (static), then A < C
    w = fm.sleeve_weights(scores, DAYS, ["A", "B", "C"], fm.PortfolioConfig(top_k=1))
    assert w.iloc[0].to_dict() == pytest.approx({"A": 1 / 3, "B": 0.0, "C": 0.0})  # symbol order alone


def test_portfolio_returns_turnover_and_costs_by_hand():
    result = fm.top_k_sleeve_portfolio(SCORES, RETURNS, fm.PortfolioConfig(top_k=1, cost_bps=10))
    d = result.daily
    np.testing.assert_allclose(d["gross_return"], [0.01, 0.0, 0.02, 0.01])
    # day 0: from cash to A = 1/3: buys 1/3
    # day 1: drifted A = (1/3)(1.03)/1.01, cash = (2/3)/1.01; target A 1/3, B 1/3, cash 1/3
    a1, c1 = (1 / 3) * 1.03 / 1.01, (2 / 3) / 1.01
    to1 = 0.5 * (abs(1 / 3 - a1) + 1 / 3 + abs(1 / 3 - c1))
    # day 2: day 1's gross is 0: A = (1/3)(0.97), B = (1/3)(1.03), cash 1/3
    to2 = 0.5 * (abs(1 / 3 - 0.97 / 3) + abs(1 / 3 - 1.03 / 3) + 0)
    # day 3: A's sleeve ends; drifted A = (1/3)(1.06)/1.02, B = (1/3)/1.02, cash = (1/3)/1.02
    to3 = 0.5 * (1.06 / 3 / 1.02 + abs(1 / 3 - 1 / 3 / 1.02) + abs(2 / 3 - 1 / 3 / 1.02))
    np.testing.assert_allclose(d["turnover"], [1 / 3, to1, to2, to3])
    np.testing.assert_allclose(d["net_return"], d["gross_return"] - 0.001 * d["turnover"])
    assert result.missing_returns == 0


def test_equal_weight_and_single_asset_benchmarks():
    ew = fm.equal_weight_portfolio(RETURNS, cost_bps=0)
    np.testing.assert_allclose(ew.daily["gross_return"], [0.015, 0.0, 0.03, 0.015])
    # day 1 pre-trade weights after day 0's drift: A 0.515/1.015, B 0.5/1.015
    assert ew.daily["turnover"].iloc[1] == pytest.approx(0.5 * (abs(0.5 - 0.515 / 1.015) + abs(0.5 - 0.5 / 1.015)))
    market = fm.equal_weight_portfolio(RETURNS["A"])
    np.testing.assert_allclose(market.daily["turnover"], [1.0, 0.0, 0.0, 0.0])  # only the first purchase
    # a name without a return that day is left out of 1/N_t
    gaps = RETURNS.copy()
    gaps.iloc[2, 1] = np.nan
    assert fm.equal_weight_portfolio(gaps).weights.iloc[2].tolist() == [1.0, 0.0]


def test_performance_row_by_hand():
    r = pd.Series([0.01, -0.02, 0.03])
    row = fm.performance("x", r, turnover=pd.Series([0.2, 0.1, 0.0]))
    mean, std = 0.02 / 3, math.sqrt(((0.01 - 0.02 / 3) ** 2 + (-0.02 - 0.02 / 3) ** 2 + (0.03 - 0.02 / 3) ** 2) / 2)
    assert row.annual_return == pytest.approx(252 * mean)
    assert row.annual_volatility == pytest.approx(math.sqrt(252) * std)
    assert row.sharpe == pytest.approx(row.annual_return / row.annual_volatility)
    assert row.max_drawdown == pytest.approx(1.01 * 0.98 / 1.01 - 1)  # peak 1.01 -> 0.9898
    assert row.turnover == pytest.approx(0.1) and row.days == 3
    table = fm.performance_table([row, fm.performance("y", pd.Series([0.01, 0.02]))])
    assert list(table.index) == ["x", "y"] and table.loc["y", "max_drawdown"] == 0.0


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: fm.performance("x", pd.Series([0.01])), ValueError, "at least two"),
        (lambda: fm.performance("x", pd.Series([0.01, np.nan])), ValueError, "finite"),
        (lambda: fm.top_k_sleeve_portfolio(SCORES.iloc[:0], RETURNS), ValueError, "no scores"),
        (lambda: fm.top_k_sleeve_portfolio(SCORES, RETURNS.iloc[:0]), ValueError, "no returns"),
        (
            lambda: fm.top_k_sleeve_portfolio(pd.concat([SCORES, SCORES.iloc[:1]]), RETURNS),
            ValueError,
            "more than one score for A",
        ),
        (
            lambda: fm.top_k_sleeve_portfolio(
                SCORES.iloc[:1].assign(prediction_day=pd.Timestamp("2015-01-10")), RETURNS
            ),
            ValueError,
            "2015-01-10 is not a session",
        ),
        (
            lambda: fm.top_k_sleeve_portfolio(SCORES.iloc[:1].assign(ticker="Z"), RETURNS),
            ValueError,
            "'Z' is not in the universe",
        ),
        (lambda: fm.top_k_sleeve_portfolio(SCORES.drop(columns="score"), RETURNS), KeyError, "score"),
        (
            lambda: fm.simulate(pd.DataFrame(0.6, index=DAYS, columns=["A", "B"]), RETURNS),
            ValueError,
            "sum to at most 1",
        ),
        (
            lambda: fm.simulate(pd.DataFrame(0.1, index=DAYS[:3], columns=["A", "B"]), RETURNS),
            ValueError,
            "same sessions",
        ),
        (lambda: fm.PortfolioConfig(top_k=0), ValueError, "top_k"),
        (lambda: fm.performance_table([]), ValueError, "no performance rows"),
    ],
)
def test_failures_are_explicit(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_missing_return_of_a_held_name_counts_as_zero_and_is_reported():
    gaps = RETURNS.copy()
    gaps.iloc[1, 0] = np.nan
    result = fm.top_k_sleeve_portfolio(SCORES, gaps, fm.PortfolioConfig(top_k=1))
    assert result.missing_returns == 1
    assert result.daily["gross_return"].iloc[1] == pytest.approx(0.03 / 3)
