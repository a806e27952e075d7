"""Evaluation metrics of the market-feedback source memory (seed 000, section 4).

Source: ../shared/seeds/000_79d55a8598b40f79.txt, sections 3.1 (stock-day signal), 4.2-4.3
(event-level metrics) and 4.4 (the fixed downstream portfolio, Table 4). Several symbols are lost
in the extracted text; what finkg reconstructs, and why, is said where it is used:

- **Macro-F1**: unweighted mean of the F1 of the three classes -1, 0, +1 (scikit-learn
  ``f1_score(average="macro", labels=[-1, 0, 1])``; a class absent from both truth and prediction
  scores 0, ``zero_division=0``).
- **Non-neutral F1**: "excludes the 0 label and evaluates performance on positive and negative
  residual-impact events": the macro mean of the F1 of classes +1 and -1, computed over all
  pairs (a neutral prediction of a +1 event is a miss for +1's recall).
- **Stock-day signal** (section 3.1): "When multiple anchors are assigned to the same ticker and
  prediction day, we average their predictions within each horizon". Invalid (missing) anchor
  predictions are left out of the mean.
- **Rank IC**: the Spearman rank correlation, across tickers on one prediction day, between the
  stock-day signal and the realized residual return, averaged over days. Ranks are average ranks
  (ties share a rank, as in scipy's ``spearmanr``); a day with fewer than two names, or with a
  constant signal or a constant outcome (the correlation is undefined), is skipped and counted.
- **Portfolio** (section 4.4): on each prediction day *t*, names with a positive 3D score are
  eligible; the top ``K`` by score (ties broken by the mean static retrieval score, then by
  ticker symbol) form a long-only sleeve, equal-weighted at ``1/K`` each, with the rest in cash
  when fewer than ``K`` names qualify. Each sleeve is held for three sessions (*t*, *t+1*, *t+2*),
  and the portfolio is the average of the three active sleeves,
  ``w_t = (S_t + S_{t-1} + S_{t-2}) / 3`` (so each sleeve holds a third of the capital). ``K`` is
  lost in the extraction ("top-K sleeve with K = ."); finkg's default is ``K = 10`` and it is a
  parameter. Daily gross return ``R_t = sum_i w_{t,i} r_{t,i}``, with ``r_{t,i}`` the session's
  close-to-close return: the prediction day's return is the first one after the decision close,
  as in the labels (``generation.feedback.market_model``). One-way turnover
  ``TO_t = 1/2 * sum_i |w_{t,i} - w~_{t,i}|`` over the names and cash, where ``w~_t`` is the
  previous day's weights after price drift; the book starts in cash, so the first purchase is
  counted. Net return ``R_t - c * TO_t`` with ``c`` = 10 bps.
- **Performance row** (Table 4): annualized return ``252 * mean(R_net)``, annualized volatility
  ``sqrt(252) * std(R_net, ddof=1)``, Sharpe = their ratio (no risk-free rate: the paper's rows
  satisfy Sharpe = Ann. Ret. / Ann. Vol., e.g. .142 / .169 = .84), maximum drawdown of the wealth
  curve ``prod(1 + R_net)`` (a negative fraction), and the mean daily turnover.
- **Benchmarks**: the equal-weight universe portfolio (every name with a return that session,
  ``1/N_t`` each, rebalanced daily, same turnover and costs) and a single-asset market proxy
  (:func:`equal_weight_portfolio` of one column: turnover is only the first purchase).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.metrics import f1_score

CLASSES = (-1, 0, 1)
NON_NEUTRAL = (-1, 1)
PERIODS_PER_YEAR = 252


# --------------------------------------------------------------------------- event-level


def _show(value: object) -> str:
    """A value for an error message: numpy scalars as plain numbers, strings quoted."""
    return repr(value.item() if isinstance(value, np.generic) else value)


Labels = Sequence[int] | np.ndarray | pd.Series


def _labels(y_true: Labels, y_pred: Labels) -> tuple[np.ndarray, np.ndarray]:
    """Both label vectors as int arrays, checked: same non-zero length, values in {-1, 0, +1}."""
    t = np.asarray(y_true)
    p = np.asarray(y_pred)
    if t.ndim != 1 or p.ndim != 1:
        raise ValueError("labels must be one-dimensional")
    if len(t) != len(p):
        raise ValueError(f"y_true has {len(t)} labels, y_pred {len(p)}: they must pair up")
    if len(t) == 0:
        raise ValueError("no labels to score")
    for name, values in (("y_true", t), ("y_pred", p)):
        bad = ~np.isin(values, CLASSES)
        if bad.any():
            raise ValueError(f"{name}[{int(np.argmax(bad))}] is {_show(values[np.argmax(bad)])}, expected -1, 0 or +1")
    return t.astype(int), p.astype(int)


def macro_f1(y_true: Labels, y_pred: Labels) -> float:
    """Macro-F1 over the classes -1, 0, +1 (seed 000, section 4.2).

    Args:
        y_true: realized residual-impact labels, length n.
        y_pred: predicted labels, length n.

    Raises:
        ValueError: for different lengths, empty input or a value outside {-1, 0, +1}.
    """
    t, p = _labels(y_true, y_pred)
    return float(f1_score(t, p, labels=list(CLASSES), average="macro", zero_division=0))  # pyright: ignore[reportArgumentType]  # sklearn types zero_division as str; 0 is documented


def non_neutral_f1(y_true: Labels, y_pred: Labels) -> float:
    """Non-neutral F1: the mean F1 of classes +1 and -1 over all pairs (seed 000, section 4.2).

    Raises:
        ValueError: as :func:`macro_f1`.
    """
    t, p = _labels(y_true, y_pred)
    return float(f1_score(t, p, labels=list(NON_NEUTRAL), average="macro", zero_division=0))  # pyright: ignore[reportArgumentType]  # sklearn types zero_division as str; 0 is documented


def stock_day_signals(
    predictions: pd.DataFrame,
    *,
    ticker: str = "ticker",
    day: str = "prediction_day",
    horizon: str = "horizon",
    signal: str = "signal",
    also_mean: Iterable[str] = (),
) -> pd.DataFrame:
    """Average anchor predictions per (ticker, prediction day, horizon) (seed 000, section 3.1).

    Args:
        predictions: one row per anchor and horizon, with the named columns; ``signal`` in
            {-1, 0, +1}, or missing for an invalid reader output (left out of the mean).
        also_mean: other columns averaged the same way (e.g. the static retrieval score that
            breaks portfolio ties).

    Returns:
        Frame with ``ticker, day, horizon`` columns, ``score`` (mean signal, in [-1, 1]),
        ``n_anchors`` (valid anchors averaged) and the ``also_mean`` columns; groups without a
        valid signal are absent.

    Raises:
        KeyError: for a missing column. ValueError: for a signal outside {-1, 0, +1}.
    """
    columns = [ticker, day, horizon, signal, *also_mean]
    missing = [c for c in columns if c not in predictions.columns]
    if missing:
        raise KeyError(f"predictions lack the column(s) {missing}")
    valid = predictions[predictions[signal].notna()]
    bad = ~valid[signal].isin(CLASSES)
    if bad.any():
        raise ValueError(f"signal {_show(valid[signal][bad].iloc[0])} at row {valid.index[bad][0]} is not -1, 0 or +1")
    grouped = valid.groupby([ticker, day, horizon], sort=True)
    out = grouped[signal].agg(score="mean", n_anchors="count")
    for column in also_mean:
        out[column] = grouped[column].mean()
    return out.reset_index()


@dataclass(frozen=True)
class RankIC:
    """Mean daily cross-sectional Spearman correlation.

    Attributes:
        mean: the average over scored days (NaN when no day could be scored).
        daily: per-day correlation, indexed by day.
        skipped_days: days left out (fewer than two names, or a constant signal or outcome).
    """

    mean: float
    daily: pd.Series
    skipped_days: int


def rank_ic(
    frame: pd.DataFrame, *, day: str = "prediction_day", signal: str = "score", realized: str = "residual"
) -> RankIC:
    """Rank IC: daily Spearman correlation of signal and realized residual return, averaged.

    Args:
        frame: one row per (day, ticker) with the signal and the realized residual return (for
            one horizon; rows with a missing value in either are left out).

    Raises:
        KeyError: for a missing column. ValueError: if no row has both values.
    """
    missing = [c for c in (day, signal, realized) if c not in frame.columns]
    if missing:
        raise KeyError(f"frame lacks the column(s) {missing}")
    rows = frame[[day, signal, realized]].dropna()
    if rows.empty:
        raise ValueError("no row has both a signal and a realized return")
    g = rows.groupby(day, sort=True)
    rs = g[signal].rank(method="average")
    rr = g[realized].rank(method="average")
    ds = rs - rs.groupby(rows[day]).transform("mean")
    dr = rr - rr.groupby(rows[day]).transform("mean")
    parts = pd.DataFrame({day: rows[day], "ss": ds * ds, "rr": dr * dr, "sr": ds * dr})
    sums = parts.groupby(day, sort=True).sum()
    counts = g.size()
    ok = (counts >= 2) & (sums["ss"] > 0) & (sums["rr"] > 0)
    daily = (sums["sr"] / np.sqrt(sums["ss"] * sums["rr"]))[ok]
    daily.name = "rank_ic"
    return RankIC(float(daily.mean()) if len(daily) else math.nan, daily, int((~ok).sum()))


# --------------------------------------------------------------------------- portfolio


@dataclass(frozen=True)
class PortfolioConfig:
    """The fixed portfolio rule of seed 000, section 4.4.

    Attributes:
        top_k: names per sleeve (K; lost in the extraction, default 10: see the module docstring).
        holding_days: sessions each sleeve is held (3, matching the 3D signal).
        cost_bps: proportional cost on one-way turnover, in basis points (10).

    Raises:
        ValueError: for a non-positive ``top_k`` or ``holding_days`` or a negative cost.
    """

    top_k: int = 10
    holding_days: int = 3
    cost_bps: float = 10.0

    def __post_init__(self) -> None:
        if self.top_k < 1 or self.holding_days < 1 or not self.cost_bps >= 0:
            raise ValueError("top_k and holding_days must be >= 1 and cost_bps >= 0")


@dataclass(frozen=True)
class PortfolioResult:
    """A simulated portfolio.

    Attributes:
        weights: sessions x tickers, the weights ``w_t`` held over each session (cash is 1 - sum).
        daily: per session ``gross_return``, ``turnover``, ``net_return``, ``invested`` (sum of weights).
        missing_returns: held (session, name) pairs without a return, counted as 0.
    """

    weights: pd.DataFrame
    daily: pd.DataFrame
    missing_returns: int


def _check_returns(returns: pd.DataFrame) -> pd.DataFrame:
    if returns.empty or len(returns.index) == 0:
        raise ValueError("no returns to simulate")
    if not returns.index.is_monotonic_increasing or returns.index.has_duplicates:
        raise ValueError("returns must be indexed by strictly increasing sessions")
    return returns


def simulate(weights: pd.DataFrame, returns: pd.DataFrame, cost_bps: float = 10.0) -> PortfolioResult:
    """Daily gross and net returns and one-way turnover of target weights (seed 000, section 4.4).

    Args:
        weights: sessions x tickers target weights ``w_t`` (long-only, sum <= 1; the rest is cash
            earning 0), on the same sessions and tickers as ``returns``.
        returns: sessions x tickers one-session close-to-close returns ``r_t`` (from session t-1's
            close to session t's); a missing return of a held name counts as 0 and is counted.
        cost_bps: cost per unit of one-way turnover, in basis points.

    Returns:
        The result; turnover on the first session is the purchase from an all-cash book.

    Raises:
        ValueError: for empty returns, misaligned frames, negative weights or weights summing above 1.
    """
    returns = _check_returns(returns)
    if not weights.index.equals(returns.index) or list(weights.columns) != list(returns.columns):
        raise ValueError("weights and returns must have the same sessions and tickers")
    w = weights.to_numpy(dtype=float)
    if (w < -1e-12).any() or (w.sum(axis=1) > 1 + 1e-9).any():
        raise ValueError("weights must be long-only and sum to at most 1")
    r_raw = returns.to_numpy(dtype=float)
    held_missing = (w > 0) & ~np.isfinite(r_raw)
    r = np.where(np.isfinite(r_raw), r_raw, 0.0)
    gross = (w * r).sum(axis=1)
    cash = 1.0 - w.sum(axis=1)
    # pre-rebalance weights: yesterday's weights after yesterday's returns (day 0: all cash)
    drifted = np.zeros_like(w)
    drifted_cash = np.ones(len(w))
    drifted[1:] = w[:-1] * (1.0 + r[:-1]) / (1.0 + gross[:-1])[:, None]
    drifted_cash[1:] = cash[:-1] / (1.0 + gross[:-1])
    turnover = 0.5 * (np.abs(w - drifted).sum(axis=1) + np.abs(cash - drifted_cash))
    net = gross - cost_bps / 1e4 * turnover
    daily = pd.DataFrame(
        {"gross_return": gross, "turnover": turnover, "net_return": net, "invested": w.sum(axis=1)}, index=returns.index
    )
    return PortfolioResult(weights, daily, int(held_missing.sum()))


def sleeve_weights(
    scores: pd.DataFrame,
    sessions: pd.DatetimeIndex,
    tickers: Sequence[str],
    config: PortfolioConfig | None = None,
    *,
    day: str = "prediction_day",
    ticker: str = "ticker",
    score: str = "score",
    tiebreak: str | None = None,
) -> pd.DataFrame:
    """Weights of the overlapping top-K long-only sleeves (seed 000, section 4.4).

    Args:
        scores: stock-day 3D scores (:func:`stock_day_signals` for horizon 3), one row per
            (prediction day, ticker).
        sessions: the sessions to simulate on (the return frame's index).
        tickers: the universe, in column order.
        config: K, holding period.
        tiebreak: optional column breaking score ties (higher first; the paper's mean static
            retrieval score); then the ticker symbol, ascending.

    Returns:
        Frame sessions x tickers: ``w_t = mean of the sleeves formed on t, t-1, ..., t-H+1``,
        each sleeve ``1/K`` per selected name (cash for missing names).

    Raises:
        ValueError: for an empty score frame, a duplicated (day, ticker), a prediction day that
            is not a session, or a ticker outside the universe.
        KeyError: for a missing column.
    """
    config = config or PortfolioConfig()
    columns = [day, ticker, score] + ([tiebreak] if tiebreak else [])
    missing = [c for c in columns if c not in scores.columns]
    if missing:
        raise KeyError(f"scores lack the column(s) {missing}")
    if scores.empty:
        raise ValueError("no scores to trade on")
    if scores.duplicated([day, ticker]).any():
        first = scores[scores.duplicated([day, ticker])].iloc[0]
        when = pd.Timestamp(first[day]).date()
        raise ValueError(f"more than one score for {first[ticker]} on {when}: aggregate with stock_day_signals")
    days = pd.DatetimeIndex(scores[day])
    off = ~days.isin(sessions)
    if off.any():
        raise ValueError(f"prediction day {days[off][0].date()} is not a session of the return frame")
    unknown = ~scores[ticker].isin(list(tickers))
    if unknown.any():
        raise ValueError(f"ticker {scores[ticker][unknown].iloc[0]!r} is not in the universe")
    eligible = scores[scores[score] > 0]
    keys = [day, score] + ([tiebreak] if tiebreak else []) + [ticker]
    ascending = [True, False] + ([False] if tiebreak else []) + [True]
    chosen = eligible.sort_values(keys, ascending=ascending, kind="stable").groupby(day, sort=False).head(config.top_k)
    rows = sessions.get_indexer(pd.DatetimeIndex(chosen[day]))
    cols = pd.Index(list(tickers)).get_indexer(pd.Index(chosen[ticker]))
    values = np.zeros((len(sessions), len(tickers)))
    values[rows, cols] = 1.0 / config.top_k
    total = np.zeros_like(values)
    for lag in range(config.holding_days):
        total[lag:] += values[: len(values) - lag]
    return pd.DataFrame(total / config.holding_days, index=sessions, columns=list(tickers))


def top_k_sleeve_portfolio(
    scores: pd.DataFrame, returns: pd.DataFrame, config: PortfolioConfig | None = None, **columns: str
) -> PortfolioResult:
    """The paper's fixed portfolio: :func:`sleeve_weights` simulated with :func:`simulate`.

    Args:
        scores: stock-day 3D scores (see :func:`sleeve_weights`; ``columns`` passes its column names).
        returns: sessions x tickers one-session returns over the evaluation window.
        config: K, holding period, cost.

    Raises:
        ValueError: as :func:`sleeve_weights` and :func:`simulate`.
    """
    config = config or PortfolioConfig()
    returns = _check_returns(returns)
    weights = sleeve_weights(scores, pd.DatetimeIndex(returns.index), list(returns.columns), config, **columns)
    return simulate(weights, returns, config.cost_bps)


def equal_weight_portfolio(returns: pd.DataFrame | pd.Series, cost_bps: float = 10.0) -> PortfolioResult:
    """The equal-weight universe benchmark (every name with a return that session, ``1/N_t``).

    A single column (or a Series) is the market-proxy row: fully invested in that one asset.

    Raises:
        ValueError: for empty returns.
    """
    frame = returns.to_frame() if isinstance(returns, pd.Series) else returns
    frame = _check_returns(frame)
    have = frame.notna().to_numpy()
    n = have.sum(axis=1, keepdims=True)
    weights = np.divide(have, n, out=np.zeros(have.shape), where=n > 0)
    return simulate(pd.DataFrame(weights, index=frame.index, columns=frame.columns), frame, cost_bps)


# --------------------------------------------------------------------------- performance


@dataclass(frozen=True)
class Performance:
    """One row of Table 4: annualized return and volatility, Sharpe, max drawdown, mean turnover."""

    name: str
    annual_return: float
    annual_volatility: float
    sharpe: float
    max_drawdown: float
    turnover: float
    days: int


def performance(name: str, result: PortfolioResult | pd.Series, turnover: pd.Series | None = None) -> Performance:
    """Table-4 figures of a portfolio (net returns) or of a plain daily return series.

    Args:
        name: the row's label.
        result: a :class:`PortfolioResult` (its net returns and turnover are used), or a Series
            of daily returns (then ``turnover`` may be given, else 0).

    Raises:
        ValueError: for fewer than two daily returns or a non-finite return.
    """
    if isinstance(result, PortfolioResult):
        r = result.daily["net_return"]
        to = result.daily["turnover"]
    else:
        r = result
        to = turnover if turnover is not None else pd.Series(0.0, index=r.index)
    values = np.asarray(r, dtype=float)
    if len(values) < 2:
        raise ValueError(f"{name}: at least two daily returns are needed, got {len(values)}")
    if not np.isfinite(values).all():
        raise ValueError(f"{name}: daily returns must be finite")
    annual_return = float(values.mean() * PERIODS_PER_YEAR)
    annual_vol = float(values.std(ddof=1) * math.sqrt(PERIODS_PER_YEAR))
    wealth = np.concatenate([[1.0], np.cumprod(1.0 + values)])
    drawdown = float((wealth / np.maximum.accumulate(wealth) - 1.0).min())
    sharpe = annual_return / annual_vol if annual_vol > 0 else math.nan
    return Performance(name, annual_return, annual_vol, sharpe, drawdown, float(np.mean(to)), len(values))


def performance_table(rows: Iterable[Performance]) -> pd.DataFrame:
    """Rows of :class:`Performance` as a frame indexed by name (Table 4's columns)."""
    frame = pd.DataFrame([row.__dict__ for row in rows])
    if frame.empty:
        raise ValueError("no performance rows")
    return frame.set_index("name")
