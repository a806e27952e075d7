"""The pre-decision market-context card (seed 000, section 3.3 and Appendix B) on real MSFT and S&P 500 prices
(tests/data/market): figures by hand from the raw CSV rows, nothing after the decision close, clear errors."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from generation.feedback.market_context import MarketContext, series_state
from generation.feedback.market_model import MarketDataError, read_price_file

DATA = Path(__file__).resolve().parent / "data" / "market"
PRICES, PROXY = DATA / "prices", DATA / "index" / "sp500.csv"
DECISION = "2015-07-21"  # Microsoft's fiscal Q4 2015 earnings day (results after the close)


def _raw(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_card_figures_by_hand_from_the_raw_rows():
    rows = _raw(PRICES / "MSFT.csv")
    i = next(n for n, r in enumerate(rows) if r["Date"] == DECISION)
    adj = [float(r["Adj Close"]) for r in rows[: i + 1]]
    vol = [float(r["Volume"]) for r in rows[: i + 1]]
    card = MarketContext.from_files(PRICES, ["MSFT"], PROXY).card("msft", DECISION)
    assert card.ticker == "MSFT" and card.proxy == "sp500" and str(card.last_session.date()) == DECISION
    for n in (1, 5, 20):
        assert card.stock.returns[n] == pytest.approx(adj[-1] / adj[-1 - n] - 1, rel=1e-12)
    daily = [adj[k] / adj[k - 1] - 1 for k in range(len(adj) - 20, len(adj))]
    mean = sum(daily) / 20
    by_hand = math.sqrt(sum((d - mean) ** 2 for d in daily) / 19) * math.sqrt(252)
    assert card.stock.volatility == pytest.approx(by_hand, rel=1e-9)
    assert card.stock.volume_ratio == pytest.approx(vol[-1] / (sum(vol[-21:-1]) / 20), rel=1e-12)
    spx = _raw(PROXY)
    j = next(n for n, r in enumerate(spx) if r["Date"] == "7/21/2015")
    assert card.market.returns[5] == pytest.approx(float(spx[j]["Adj Close"]) / float(spx[j - 5]["Adj Close"]) - 1)
    assert card.relative_5d == pytest.approx(card.stock.returns[5] - card.market.returns[5])
    text = card.render()
    assert text.splitlines()[0] == "as_of: 2015-07-21 close; market_proxy: sp500"
    assert f"prior 1D {100 * card.stock.returns[1]:+.2f}%" in text and "volume on the decision day" in text
    assert len(text.splitlines()) == 6


def test_a_later_price_or_volume_changes_nothing():
    frame = read_price_file(PRICES / "MSFT.csv")
    proxy = read_price_file(PROXY)
    before = MarketContext({"MSFT": frame}, proxy, "sp500").card("MSFT", DECISION)
    later = frame.index > pd.Timestamp(DECISION)
    assert later.sum() > 100
    changed = frame.copy()
    changed.loc[later, ["adj_close", "volume"]] *= 3.0  # the earnings jump, and any later move, tripled
    changed_proxy = proxy.copy()
    changed_proxy.loc[proxy.index > pd.Timestamp(DECISION), "adj_close"] *= 0.5
    after = MarketContext({"MSFT": changed}, changed_proxy, "sp500").card("MSFT", DECISION)
    assert after == before and after.render() == before.render()
    # while a change on the decision day itself does move the card
    changed.loc[pd.Timestamp(DECISION), "adj_close"] *= 1.1
    moved = MarketContext({"MSFT": changed}, changed_proxy, "sp500").card("MSFT", DECISION)
    assert moved.stock.returns[1] != before.stock.returns[1]


def test_short_history_is_not_available_and_a_non_session_uses_the_last_close():
    frame = read_price_file(PRICES / "BABA.csv")  # listed 2014-09-19
    state, last = series_state(frame, "2014-09-26")
    assert state.returns[1] is not None and state.returns[5] is not None and state.returns[20] is None
    assert state.volatility is None and state.volume_ratio is None and str(last.date()) == "2014-09-26"
    nothing, none = series_state(frame, "2014-01-02")
    assert none is None and all(v is None for v in nothing.returns.values())
    card = MarketContext.from_files(PRICES, ["BABA"], PROXY).card("BABA", "2014-09-27")  # a Saturday
    assert str(card.last_session.date()) == "2014-09-26" and "n/a" in card.render()
    assert np.isfinite(card.stock.returns[5])


def test_bad_inputs_name_the_ticker_or_path(tmp_path):
    ctx = MarketContext.from_files(PRICES, ["MSFT"], PROXY)
    with pytest.raises(KeyError, match=r"'XOM'.*known: MSFT"):
        ctx.card("XOM", DECISION)
    with pytest.raises(MarketDataError, match=r"nowhere.*not a folder"):
        MarketContext.from_files(tmp_path / "nowhere", ["MSFT"], PROXY)
    with pytest.raises(MarketDataError, match=r"FOO\.csv.*cannot open"):
        MarketContext.from_files(PRICES, ["FOO"], PROXY)
