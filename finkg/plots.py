"""Pictures of evaluation results (matplotlib, PNG): equity curves and bars with confidence intervals.

Figures are drawn on a :class:`matplotlib.figure.Figure` (no pyplot, no global backend state), so drawing is
safe from worker threads and never opens a window. Every function writes one PNG and returns its path; the
file is written whole or not at all (a temporary file renamed into place).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kg.errors import EvaluationError

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

#: Colours for the systems of one picture (the shuffled controls are drawn grey).
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
CONTROL = "#9a9a9a"


def _save(fig: Figure, path: Path, dpi: int = 110) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + ".part.png")
    fig.savefig(tmp, dpi=dpi, bbox_inches="tight")
    tmp.replace(path)
    return path


def equity_curves(
    daily_returns: Mapping[str, pd.Series],
    path: Path,
    *,
    title: str,
    controls: Sequence[str] = (),
    benchmarks: Sequence[str] = (),
) -> Path:
    """Draw the growth of 1 invested in each strategy: ``cumprod(1 + r)`` of its daily net returns.

    Args:
        daily_returns: strategy name -> daily returns (a Series indexed by session date; fractions, 0.01 = 1 %).
        path: the PNG to write. title: the picture's title.
        controls: strategies drawn thin and grey, as one legend entry (e.g. the shuffled-memory seeds).
        benchmarks: strategies drawn dashed (the market proxy, the equal-weight universe).

    Raises:
        EvaluationError: no strategy has at least one return.
    """
    import pandas as pd
    from matplotlib.figure import Figure

    series = {name: r.dropna() for name, r in daily_returns.items() if len(r.dropna())}
    if not series:
        raise EvaluationError(f"{path}: no daily returns to draw")
    fig = Figure(figsize=(9, 4.8))
    ax = fig.add_subplot()
    colours = iter(PALETTE)
    control_drawn = False
    for name, r in series.items():
        wealth = (1.0 + r.astype(float)).cumprod()
        if isinstance(wealth.index, pd.DatetimeIndex) and len(wealth):  # start at 1 the day before
            start = pd.Series([1.0], index=[wealth.index[0] - pd.Timedelta(days=1)])
            wealth = pd.concat([start, wealth])
        if name in controls:
            ax.plot(wealth.index.to_numpy(), wealth.to_numpy(dtype=float), color=CONTROL, lw=0.9, alpha=0.8,
                    label=None if control_drawn else f"shuffled controls ({len([c for c in controls if c in series])} runs)")  # fmt: skip
            control_drawn = True
        else:
            ax.plot(wealth.index.to_numpy(), wealth.to_numpy(dtype=float), color=next(colours, "black"), lw=2.0 if name not in benchmarks else 1.4,
                    ls="--" if name in benchmarks else "-", label=name)  # fmt: skip
    ax.axhline(1.0, color="black", lw=0.6)
    ax.set_title(title)
    ax.set_ylabel("growth of 1 (net of costs)")
    ax.set_xlabel("session")
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    fig.autofmt_xdate()
    return _save(fig, path)


@dataclass(frozen=True)
class Bar:
    """One bar: its ``group`` (e.g. a metric or answer type), ``system``, ``value`` and 95 % interval
    ``low``..``high`` (same units as value; None when there is no interval)."""

    group: str
    system: str
    value: float
    low: float | None = None
    high: float | None = None


def interval_bars(bars: Sequence[Bar], path: Path, *, title: str, ylabel: str) -> Path:
    """Grouped bars, one colour per system, with error bars for the intervals (systems in first-seen order).

    Raises:
        EvaluationError: no bar, or an interval that does not contain its value.
    """
    from matplotlib.figure import Figure

    if not bars:
        raise EvaluationError(f"{path}: no figures to draw")
    for b in bars:
        if b.low is not None and b.high is not None and not b.low - 1e-9 <= b.value <= b.high + 1e-9:
            raise EvaluationError(f"{path}: {b.system} / {b.group}: interval {b.low}..{b.high} misses {b.value}")
    groups = list(dict.fromkeys(b.group for b in bars))
    systems = list(dict.fromkeys(b.system for b in bars))
    if len(groups) == 1:  # one group: the systems are the x axis, named under their bars
        bars = [Bar(b.system, groups[0], b.value, b.low, b.high) for b in bars]
        groups, systems = systems, groups
    width = 0.8 / len(systems)
    fig = Figure(figsize=(max(6.0, 1.3 * len(groups) * max(1, len(systems)) ** 0.5 + 2), 4.6))
    ax = fig.add_subplot()
    for i, system in enumerate(systems):
        mine = [(g, b) for g, group in enumerate(groups) for b in bars if b.system == system and b.group == group]
        xs = [g + (i - (len(systems) - 1) / 2) * width for g, _ in mine]
        below = [b.value - (b.low if b.low is not None else b.value) for _, b in mine]
        above = [(b.high if b.high is not None else b.value) - b.value for _, b in mine]
        drawn = ax.bar(xs, [b.value for _, b in mine], width * 0.95, color=PALETTE[i % len(PALETTE)], label=system,
                       yerr=[below, above], capsize=3, error_kw={"lw": 1.0})  # fmt: skip
        ax.bar_label(drawn, fmt="%.3f", fontsize=7, label_type="center")
    ax.set_xticks(range(len(groups)), groups, rotation=0 if len(groups) < 6 else 30, ha="center")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    return _save(fig, path)


@dataclass(frozen=True)
class Panel:
    """One indicator of :func:`indicator_panels`: its ``title`` (name and unit), ``points`` as ``(ISO date,
    value)`` in date order, and the ``cited`` points (those a report's facts state), drawn as red dots."""

    title: str
    points: Sequence[tuple[str, float]]
    cited: Sequence[tuple[str, float]] = ()


def indicator_panels(panels: Sequence[Panel], as_of: str, path: Path, *, title: str) -> Path:
    """Small multiples: one time series per indicator, stacked, each with the ``as_of`` date (ISO) as a
    dashed vertical line and the cited observations marked.

    Raises:
        EvaluationError: no panel with at least one point.
    """
    from datetime import date

    from matplotlib.figure import Figure

    drawn = [p for p in panels if p.points]
    if not drawn:
        raise EvaluationError(f"{path}: no observations to draw")
    fig = Figure(figsize=(8.5, 1.9 * len(drawn) + 0.8), layout="constrained")
    axes = fig.subplots(len(drawn), 1, sharex=True, squeeze=False)[:, 0]
    when = date.fromisoformat(as_of[:10])
    for ax, panel in zip(axes, drawn):
        days = [date.fromisoformat(d) for d, _ in panel.points]
        ax.plot(days, [v for _, v in panel.points], color=PALETTE[0], lw=1.4, marker="." if len(days) < 40 else None)
        if panel.cited:
            ax.scatter([date.fromisoformat(d) for d, _ in panel.cited], [v for _, v in panel.cited], color="#d62728",
                       zorder=3, s=22, label="cited")  # fmt: skip
        ax.axvline(when, color="black", ls="--", lw=0.9)
        ax.set_title(panel.title, fontsize=9, loc="left")
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=8)
    axes[0].annotate(f"as of {as_of[:10]}", xy=(when, 1.0), xycoords=("data", "axes fraction"), fontsize=8,
                     ha="right", va="bottom", xytext=(-3, 2), textcoords="offset points")  # fmt: skip
    fig.suptitle(title, fontsize=10)
    fig.autofmt_xdate()
    return _save(fig, path)


def loss_curve(points: Sequence[tuple[float, float]], path: Path, *, title: str, ylabel: str = "training loss") -> Path:
    """The training loss against the optimizer step (one line with markers), as a PNG at ``path``.

    Args:
        points: ``(step, loss)`` pairs in step order (at least one).

    Raises:
        EvaluationError: no points.
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    if not points:
        raise EvaluationError(f"{path}: no loss values to plot")
    fig = Figure(figsize=(7.0, 3.8))
    ax = fig.add_subplot()
    steps, losses = zip(*points)
    ax.plot(steps, losses, marker="o", markersize=3, color=PALETTE[0])
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("optimizer step")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    return _save(fig, path)
