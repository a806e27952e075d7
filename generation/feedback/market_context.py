"""The pre-decision market-context card of a (ticker, decision date) (seed 000, sections 3.2-3.3, Appendix B).

Source: ../shared/seeds/000_79d55a8598b40f79.txt, section 3.3 ("The market-context card uses only
information observable by the assigned decision time and excludes post-decision returns, future volume
reactions, and future documents") and Appendix B (the AAPL card: ``as_of: 2020-04-30 close``, the market
proxy, the stock's prior 1D / 5D / 20D returns, relative performance against the proxy, a risk state).

The paper's card mixes numbers and words ("strong positive momentum", "elevated realized volatility");
it does not say how the words are derived, so finkg's card gives the numbers only, as a few short lines,
and leaves their reading to the reader:

- the stock's and the market proxy's simple returns over the last 1, 5 and 20 sessions, each ending at the
  decision close: ``P[D] / P[D - n] - 1`` on adjusted closes;
- the stock's return minus the proxy's over 5 sessions (relative performance);
- 20-session realized volatility of daily returns (sample standard deviation of the 20 daily returns
  ending at D, annualized by sqrt(252)) for both;
- the stock's volume on the decision session divided by its mean volume over the 20 sessions before it
  (``V[D] / mean(V[D-20 .. D-1])``).

**Point in time.** Every figure is computed on the rows dated at or before the decision date (the frame
is cut with ``.loc[:decision_date]`` before anything is computed), so no price or volume after the
decision close can reach the card (tests/test_market_context.py changes a later price and checks the card).
A figure whose window reaches before the data is ``None`` and rendered ``n/a``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from generation.feedback.market_model import read_price_file, read_price_frames

RETURN_WINDOWS = (1, 5, 20)
"""Sessions of the card's prior returns (Appendix B: prior 1D, 5D, 20D)."""
VOLATILITY_WINDOW = 20
"""Sessions of the realized-volatility and mean-volume windows."""
PERIODS_PER_YEAR = 252


@dataclass(frozen=True)
class SeriesState:
    """Pre-decision figures of one price series (a stock or the market proxy).

    Attributes:
        returns: window in sessions -> simple return ending at the decision close (None: not enough data).
        volatility: annualized 20-session realized volatility (None: fewer than 20 daily returns).
        volume_ratio: decision-session volume / mean of the 20 sessions before (None: no volume data).
    """

    returns: Mapping[int, float | None]
    volatility: float | None
    volume_ratio: float | None


@dataclass(frozen=True)
class MarketCard:
    """The market-context card of one ticker at one decision close.

    Attributes:
        ticker: the stock; ``proxy``: the market proxy's name (e.g. ``sp500``).
        as_of: the decision session (the card uses data through its close).
        last_session: the latest session in the stock's data at or before ``as_of`` (equal to ``as_of``
            unless the stock did not trade that day).
        stock, market: the figures of the stock and of the proxy.
    """

    ticker: str
    proxy: str
    as_of: pd.Timestamp
    last_session: pd.Timestamp | None
    stock: SeriesState
    market: SeriesState

    @property
    def relative_5d(self) -> float | None:
        """The stock's 5-session return minus the proxy's (None when either is missing)."""
        a, b = self.stock.returns.get(5), self.market.returns.get(5)
        return None if a is None or b is None else a - b

    def render(self) -> str:
        """The card as a few short lines (what the reader sees)."""

        def pct(x: float | None) -> str:
            return "n/a" if x is None else f"{100 * x:+.2f}%"

        def rets(state: SeriesState) -> str:
            return ", ".join(f"prior {n}D {pct(state.returns.get(n))}" for n in RETURN_WINDOWS)

        vol = lambda x: "n/a" if x is None else f"{100 * x:.1f}%"  # noqa: E731
        volume = "n/a" if self.stock.volume_ratio is None else f"{self.stock.volume_ratio:.2f}x"
        return "\n".join(
            [
                f"as_of: {self.as_of.date()} close; market_proxy: {self.proxy}",
                f"{self.ticker} returns: {rets(self.stock)}",
                f"{self.proxy} returns: {rets(self.market)}",
                f"relative 5D ({self.ticker} minus {self.proxy}): {pct(self.relative_5d)}",
                f"20D realized volatility (annualized): {self.ticker} {vol(self.stock.volatility)}, "
                f"{self.proxy} {vol(self.market.volatility)}",
                f"{self.ticker} volume on the decision day: {volume} its 20-session mean",
            ]
        )


def series_state(frame: pd.DataFrame, decision_date: pd.Timestamp | str) -> tuple[SeriesState, pd.Timestamp | None]:
    """The pre-decision figures of one OHLCV frame (:func:`generation.feedback.market_model.read_price_file`).

    Args:
        frame: indexed by session date, with ``adj_close`` and ``volume`` columns.
        decision_date: the decision session; rows after it are cut off first.

    Returns:
        ``(state, last session used)``; the last session is None when no row is at or before the date.
    """
    cut = frame.loc[: pd.Timestamp(decision_date)]
    prices = cut["adj_close"].dropna().to_numpy(dtype=float)
    if len(prices) == 0:
        return SeriesState({n: None for n in RETURN_WINDOWS}, None, None), None
    returns = {n: (float(prices[-1] / prices[-1 - n] - 1.0) if len(prices) > n else None) for n in RETURN_WINDOWS}
    daily = np.diff(prices[-(VOLATILITY_WINDOW + 1) :]) / prices[-(VOLATILITY_WINDOW + 1) : -1]
    volatility = float(np.std(daily, ddof=1) * math.sqrt(PERIODS_PER_YEAR)) if len(daily) == VOLATILITY_WINDOW else None
    volume = cut["volume"].to_numpy(dtype=float)
    ratio = None
    if len(volume) > VOLATILITY_WINDOW and np.isfinite(volume[-1]):
        before = volume[-1 - VOLATILITY_WINDOW : -1]
        mean = float(np.nanmean(before)) if np.isfinite(before).any() else math.nan
        ratio = float(volume[-1] / mean) if mean > 0 else None
    return SeriesState(returns, volatility, ratio), pd.Timestamp(cut.index[-1])


class MarketContext:
    """OHLCV frames of a universe and a market proxy, and the cards built from them.

    Args:
        frames: ticker -> OHLCV frame (:func:`generation.feedback.market_model.read_price_file`).
        proxy: the market proxy's frame; ``proxy_name``: how the card names it.
    """

    def __init__(self, frames: Mapping[str, pd.DataFrame], proxy: pd.DataFrame, proxy_name: str) -> None:
        self.frames = {t.upper(): f for t, f in frames.items()}
        self.proxy, self.proxy_name = proxy, proxy_name

    @classmethod
    def from_files(cls, prices_dir: Path | str, tickers: Iterable[str], proxy_path: Path | str) -> MarketContext:
        """Read ``prices_dir/<TICKER>.csv`` of each ticker and the proxy file.

        Raises:
            generation.feedback.market_model.MarketDataError: a missing folder or file, or a bad file (names the path and line).
        """
        frames = read_price_frames(prices_dir, [t.upper() for t in tickers])
        return cls(frames, read_price_file(proxy_path), Path(proxy_path).stem)

    def card(self, ticker: str, decision_date: pd.Timestamp | str) -> MarketCard:
        """The card of ``ticker`` at the close of ``decision_date`` (data after that close is never read).

        Raises:
            KeyError: ``ticker`` has no price frame (names the ticker and the known ones).
        """
        key = ticker.upper()
        if key not in self.frames:
            raise KeyError(f"no prices for ticker {ticker!r} (known: {', '.join(sorted(self.frames))})")
        day = pd.Timestamp(decision_date).normalize()
        stock, last = series_state(self.frames[key], day)
        market, _ = series_state(self.proxy, day)
        return MarketCard(key, self.proxy_name, day, last, stock, market)
