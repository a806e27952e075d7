"""Residual-impact labels (seed 000, section 3.4) for every ticker x session of 2014-2015, timed.

Reads the 88 price files of ../shared/data/market/prices and the S&P 500 (the market proxy), then:

1. vectorized: ``generation.feedback.market_model.residual_labels`` (rolling OLS moments by cumulative sums),
   every ticker x session x horizon of the data, timed over ``--repeat`` runs (best time);
2. baseline, measured in the same run: a naive per-anchor loop, as one would write it per news
   anchor: slice the estimation window, build the overlapping h-day returns, ``numpy.polyfit``,
   residual standard deviation, forward return, label; on a random sample of (ticker, 2014-2015
   session, horizon) items (``--naive-sample``; 0 = all), extrapolated per item to the whole set;
3. checks that both give the same labels and the same z (max abs difference) on the sample.

    python bench/market_labels.py                     # 3,000-item naive sample
    python bench/market_labels.py --naive-sample 0    # the naive loop over all 2014-2015 items
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generation.feedback import market_model as mm  # noqa: E402  (after the sys.path line: runs as a script)

DATA = ROOT.parent / "shared" / "data" / "market"


def naive_label(p: np.ndarray, m: np.ndarray, d: int, h: int, cfg: mm.MarketModelConfig) -> tuple[int | None, float]:
    """One (ticker, decision session, horizon) label the straightforward way (the baseline)."""
    e = d - cfg.gap
    ends = np.arange(max(e - cfg.estimation_window + 1, h), e + 1)
    y = p[ends] / p[ends - h] - 1
    x = m[ends] / m[ends - h] - 1
    ok = np.isfinite(y) & np.isfinite(x)
    if ok.sum() < cfg.min_observations or d + h >= len(p) or not np.isfinite(p[d + h] / p[d]):
        return None, float("nan")
    beta, alpha = np.polyfit(x[ok], y[ok], 1)
    sigma = np.std(y[ok] - alpha - beta * x[ok], ddof=cfg.ddof)
    z = ((p[d + h] / p[d] - 1) - alpha - beta * (m[d + h] / m[d] - 1)) / sigma
    return (1 if z > cfg.threshold else -1 if z < -cfg.threshold else 0), float(z)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prices", type=Path, default=DATA / "prices")
    parser.add_argument("--market", type=Path, default=DATA / "index" / "sp500.csv")
    parser.add_argument("--start", default="2014-01-01")
    parser.add_argument("--end", default="2015-12-31")
    parser.add_argument("--naive-sample", type=int, default=3000, help="naive items to time (0 = all)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    console = Console(width=150)
    cfg = mm.MarketModelConfig()

    t0 = time.perf_counter()
    panel = mm.load_price_panel(args.prices)
    market = mm.load_market_proxy(args.market)
    load_s = time.perf_counter() - t0

    best = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        labels = mm.residual_labels(panel, market, cfg)
        best = min(best, time.perf_counter() - t0)
    window = labels[(labels.decision_date >= args.start) & (labels.decision_date <= args.end)]
    n_items = len(window)

    calendar = mm.TradingCalendar.from_series(market)
    aligned = mm.align_to_calendar(panel, calendar)
    sessions = aligned.index
    prices = aligned.to_numpy(dtype=float)
    m = market.reindex(sessions).to_numpy(dtype=float)
    col = {t: i for i, t in enumerate(aligned.columns)}
    items = window[["ticker", "decision_date", "horizon"]].reset_index(drop=True)
    if args.naive_sample and args.naive_sample < len(items):
        items = items.sample(args.naive_sample, random_state=0).reset_index(drop=True)
    positions = sessions.get_indexer(pd.DatetimeIndex(items.decision_date))
    naive_labels: list[int | None] = []
    naive_z: list[float] = []
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task("naive per-anchor loop", total=len(items))
        t0 = time.perf_counter()
        for i, (ticker, h) in enumerate(zip(items.ticker, items.horizon)):
            label, z = naive_label(prices[:, col[ticker]], m, int(positions[i]), int(h), cfg)
            naive_labels.append(label)
            naive_z.append(z)
            if i % 500 == 0:
                progress.update(task, completed=i)
        naive_s = time.perf_counter() - t0
    per_item = naive_s / len(items)

    keyed = window.set_index(["ticker", "decision_date", "horizon"])
    vec = keyed.loc[list(zip(items.ticker, items.decision_date, items.horizon))]
    vec_label = [None if pd.isna(v) else int(v) for v in vec["label"]]
    mismatches = sum(a != b for a, b in zip(vec_label, naive_labels))
    both = np.isfinite(vec["z"].to_numpy(dtype=float)) & np.isfinite(np.array(naive_z))
    max_dz = (
        float(np.max(np.abs(vec["z"].to_numpy(dtype=float)[both] - np.array(naive_z)[both]))) if both.any() else 0.0
    )

    labelled = window["label"].notna()
    console.print(f"data: {panel.shape[1]} tickers, {len(sessions)} sessions; load {load_s:.2f} s")
    console.print(
        f"vectorized: {len(labels):,} rows (all sessions x tickers x {len(cfg.horizons)} horizons) in {best:.3f} s "
        f"(best of {args.repeat})"
    )
    reasons = {k: v for k, v in window["reason"].value_counts().to_dict().items() if v}
    console.print(f"{args.start}..{args.end}: {n_items:,} items, {int(labelled.sum()):,} labelled, excluded: {reasons}")
    console.print(f"vectorized per row: {best / len(labels) * 1e6:.2f} us")
    console.print(
        f"naive loop: {len(items):,} items in {naive_s:.2f} s = {per_item * 1e6:.1f} us/item; "
        f"extrapolated to the {n_items:,} items: {per_item * n_items:.1f} s"
    )
    console.print(f"speed-up (naive extrapolated / vectorized all rows): {per_item * n_items / best:,.0f}x")
    console.print(f"agreement on the sample: {mismatches} label mismatches, max |dz| = {max_dz:.2e}")
    counts = window[labelled].groupby("horizon")["label"].value_counts(normalize=True).unstack().round(3)
    console.print("label shares (2014-2015, all ticker-days):")
    console.print(counts.to_string())


if __name__ == "__main__":
    main()
