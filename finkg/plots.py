"""Pictures of evaluation results (matplotlib, PNG): equity curves and bars with confidence intervals.

Figures are drawn on a :class:`matplotlib.figure.Figure` (no pyplot, no global backend state), so drawing is
safe from worker threads and never opens a window. Every function writes one PNG and returns its path; the
file is written whole or not at all (a temporary file renamed into place).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.atomic import replacing
from kg.errors import EvaluationError

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

#: Colours for the systems of one picture (the shuffled controls are drawn grey).
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
CONTROL = "#9a9a9a"


def _atomic(path: Path, write: Callable[[Path], object]) -> Path:
    """Run ``write(tmp)`` on a uniquely named temporary file beside ``path``, then rename it into place
    (:func:`kg.atomic.replacing`: two runs drawing the same picture at once both finish, the file whole)."""
    with replacing(path, suffix=".part.png") as tmp:
        write(tmp)
    return path


def _save(fig: Figure, path: Path, dpi: int = 110) -> Path:
    return _atomic(path, lambda tmp: fig.savefig(tmp, dpi=dpi, bbox_inches="tight"))


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
    ``low``..``high`` (same units as value; None when there is no interval); ``panel`` names the stacked panel
    of :func:`interval_bars` it is drawn in (e.g. a metric; "" for a picture of one panel)."""

    group: str
    system: str
    value: float
    low: float | None = None
    high: float | None = None
    panel: str = ""


def interval_bars(bars: Sequence[Bar], path: Path, *, title: str, ylabel: str, fmt: str = "%.3f") -> Path:
    """Grouped bars, one colour per system, with error bars for the intervals (systems, groups and panels in
    first-seen order); each value printed above its bar and interval with ``fmt``. Bars of more than one ``panel`` are drawn
    in panels stacked top to bottom (the panel's name as its title, the same groups on every x axis, one
    legend beside the first); a system with no bar in a group leaves its slot empty.

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
    panels = list(dict.fromkeys(b.panel for b in bars))
    if len(groups) == 1:  # one group: the systems are the x axis, named under their bars
        bars = [Bar(b.system, groups[0], b.value, b.low, b.high, b.panel) for b in bars]
        groups, systems = systems, groups
    fig = Figure(figsize=(max(6.0, 1.3 * len(groups) * max(1, len(systems)) ** 0.5 + 2), 4.6 * len(panels)))
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for ax, panel in zip(axes, panels):
        _bars_on(ax, [b for b in bars if b.panel == panel], groups, systems, fmt)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)
    if len(panels) == 1:
        axes[0].set_title(title)
        axes[0].legend(fontsize=8, loc="lower right")
    else:
        for ax, panel in zip(axes, panels):
            ax.set_title(panel, fontsize=10)
        axes[0].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.suptitle(title)
        fig.tight_layout()
    return _save(fig, path)


def _bars_on(ax: Any, bars: Sequence[Bar], groups: Sequence[str], systems: Sequence[str], fmt: str) -> None:
    """Draw ``bars`` on ``ax``: group ``g`` centred at x = g, the systems side by side in their colours."""
    width = 0.8 / len(systems)
    for i, system in enumerate(systems):
        mine = [(g, b) for g, group in enumerate(groups) for b in bars if b.system == system and b.group == group]
        xs = [g + (i - (len(systems) - 1) / 2) * width for g, _ in mine]
        below = [b.value - (b.low if b.low is not None else b.value) for _, b in mine]
        above = [(b.high if b.high is not None else b.value) - b.value for _, b in mine]
        ax.bar(xs, [b.value for _, b in mine], width * 0.95, color=PALETTE[i % len(PALETTE)], label=system,
               yerr=[below, above], capsize=3, error_kw={"lw": 1.0})  # fmt: skip
        for x, (_, b) in zip(xs, mine):  # the value above the bar and its interval, clear of both
            top = max(b.value, b.high if b.high is not None else b.value)
            ax.annotate(fmt % b.value, (x, top), xytext=(0, 2), textcoords="offset points", ha="center", va="bottom",
                        fontsize=7)  # fmt: skip
    ax.set_xticks(range(len(groups)), groups, rotation=0 if len(groups) < 6 else 30, ha="center")


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


def _one_panel(path: Path, has_data: bool, what: str, size: tuple[float, float]) -> tuple[Figure, Any]:
    """A figure of ``size`` inches with one set of axes.

    Raises:
        EvaluationError: not ``has_data`` (the message names ``path`` and ``what`` is missing).
    """
    from matplotlib.figure import Figure

    if not has_data:
        raise EvaluationError(f"{path}: no {what} to plot")
    fig = Figure(figsize=size)
    return fig, fig.add_subplot()


def loss_curve(points: Sequence[tuple[float, float]], path: Path, *, title: str, ylabel: str = "training loss") -> Path:
    """The training loss against the optimizer step (one line with markers), as a PNG at ``path``.

    Args:
        points: ``(step, loss)`` pairs in step order (at least one).

    Raises:
        EvaluationError: no points.
    """
    from matplotlib.ticker import MaxNLocator

    fig, ax = _one_panel(path, bool(points), "loss values", (7.0, 3.8))
    steps, losses = zip(*points)
    ax.plot(steps, losses, marker="o", markersize=3, color=PALETTE[0])
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("optimizer step")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def hit_rate_curves(
    snapshots: Sequence[tuple[int, Mapping[str, float]]],
    path: Path,
    *,
    title: str,
    highlight: str,
    measured: tuple[int, float] | None = None,
) -> Path:
    """The memory's hit rate against its bank's size, one line per threshold (seed 001's Figure 4(a)), as a PNG.

    Args:
        snapshots: ``(entries, {tau label: hit rate as a fraction})`` per bank snapshot, in size order (at least
            one). highlight: the tau label drawn thick (the operating threshold). measured: ``(entries, hit rate)``
            of the stored bank, drawn as a marker, or None.

    Raises:
        EvaluationError: no snapshots.
    """
    fig, ax = _one_panel(path, bool(snapshots), "bank snapshots", (7.5, 4.2))
    sizes = [n for n, _ in snapshots]
    labels = list(snapshots[0][1])
    ends: list[tuple[float, str]] = []
    for i, tau in enumerate(labels):
        rates = [100 * r[tau] for _, r in snapshots]
        bold = tau == highlight
        ax.plot(
            sizes,
            rates,
            color=PALETTE[0] if bold else CONTROL,
            linewidth=2.4 if bold else 0.9,
            alpha=1.0 if bold else 0.45 + 0.5 * i / max(len(labels) - 1, 1),
            label=f"tau = {tau}" if bold else None,
        )
        ends.append((rates[-1], tau))
    last = -10.0
    for y, tau in sorted(ends):  # each threshold named at its line's end, labels at least 4 points apart
        last = max(y, last + 4.0)
        ax.annotate(tau, (sizes[-1], last), fontsize=7, xytext=(4, -3), textcoords="offset points")
    if measured is not None:
        ax.plot([measured[0]], [100 * measured[1]], "o", color=PALETTE[1], label="stored bank (vector index)")
    ax.set_xlabel("training questions learned (bank snapshot)")
    ax.set_ylabel("evaluated questions with a hit (%)")
    ax.set_ylim(0, 105)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(loc="center right", bbox_to_anchor=(0.98, 0.66), fontsize=8)
    return _save(fig, path)


@dataclass(frozen=True)
class PeerDot:
    """One filing of a :class:`PeerChart`: ``leverage`` (total liabilities / total assets, a fraction),
    ``current_ratio`` (current assets / current liabilities, times) and its ``label`` (the company)."""

    label: str
    leverage: float
    current_ratio: float


PEER_CLIP = (5.0, 95.0)
"""Percentiles of a peer group that bound a :class:`PeerChart`'s axes when a point lies beyond them."""


def _clipped_limits(values: Sequence[float]) -> tuple[float, float, bool]:
    """Axis limits for ``values``, padded by 8 %, and whether some lie outside them (then drawn on the edge):
    all values, except those more than half the :data:`PEER_CLIP` inter-percentile range beyond those
    percentiles (far-out points that would squash the others)."""
    import numpy as np

    lo, hi = (float(v) for v in np.percentile(values, PEER_CLIP))
    reach = 0.5 * (hi - lo if hi > lo else max(abs(hi), 1.0))
    kept = [v for v in values if lo - reach <= v <= hi + reach]
    low, high = min(kept), max(kept)
    pad = 0.08 * (high - low) if high > low else max(0.1 * abs(high), 0.05)
    return low - pad, high + pad, len(kept) < len(values)


class _PeerCanvas:
    """The figure every :class:`PeerChart` of a thread draws on: built once, its artists' data changed per peer
    group (a new figure per group costs more than drawing it)."""

    def __init__(self) -> None:
        import numpy as np
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(7.0, 5.2), dpi=100)
        fig.subplots_adjust(left=0.1, right=0.96, top=0.87, bottom=0.27)
        ax = fig.add_subplot()
        none = np.empty((0, 2))
        self.inside = ax.scatter(none[:, 0], none[:, 1], s=22, color=CONTROL, alpha=0.85, zorder=2)
        self.outside = ax.scatter(none[:, 0], none[:, 1], s=34, marker="^", zorder=2, clip_on=False,
                                  facecolors="none", edgecolors="#555555")  # fmt: skip
        self.median_x = ax.axvline(0.0, color="#555555", ls="--", lw=0.9)
        self.median_y = ax.axhline(0.0, color="#555555", ls="--", lw=0.9)
        self.ceiling = ax.axvline(0.0, color=PALETTE[4], ls=":", lw=1.2)
        self.floor = ax.axhline(0.0, color=PALETTE[4], ls=":", lw=1.2)
        self.dot = ax.scatter([0.0], [0.0], s=80, color=PALETTE[1], edgecolors="black", linewidths=0.7, zorder=4,
                              animated=True, clip_on=False)  # fmt: skip
        self.edge = ax.scatter([0.0], [0.0], s=90, marker="^", color=PALETTE[1], edgecolors="black", linewidths=0.7,
                               zorder=4, animated=True, clip_on=False)  # fmt: skip
        ax.set_xlabel("leverage: total liabilities / total assets (%)")
        ax.set_ylabel("current ratio: current assets / current liabilities (x)")
        ax.grid(alpha=0.3)
        self.caption = fig.text(0.01, 0.012, "", fontsize=7, ha="left", va="bottom")
        self.fig, self.ax = fig, ax
        self.canvas = FigureCanvasAgg(fig)


_THREAD = threading.local()


def _peer_canvas() -> _PeerCanvas:
    if getattr(_THREAD, "peer_canvas", None) is None:
        _THREAD.peer_canvas = _PeerCanvas()
    return _THREAD.peer_canvas


class PeerChart:
    """A peer group's liquidity against leverage, drawn once, then one PNG per filer of the group.

    A scatter of current ratio (y, times) against leverage (x, total liabilities / total assets, %): the
    group's filings grey, their medians dashed, the memo's risk thresholds ``(leverage ceiling, current ratio
    floor)`` dotted, a ``caption`` under it; :meth:`draw` adds the filer in red with its two values and a title,
    and writes the PNG. Points far out would squash the others: a point more than half the inter-percentile range
    beyond the group's :data:`PEER_CLIP` percentiles is left outside the axes and drawn on their edge as a hollow
    triangle; the legend says how many, the caption how the axes were limited.

    Speed (a quarter has ~60 groups and ~350 pictures): the groups of a thread share one figure; a group is
    drawn once and kept as a bitmap; each filer's picture draws only its own dot on it (matplotlib's blitting),
    its values and title with Pillow, and is stored with a palette of at most 128 colours. The PNG carries no
    metadata (nothing time-dependent): the same figures give the same bytes.

    Args:
        members: every filing of the group (at least one), the filers drawn later among them.
        caption: a line under the picture (what the group is), wrapped to its width.
        thresholds: the risk tests' ``(leverage ceiling as a fraction, current ratio floor)``; None: not drawn.

    Raises:
        EvaluationError: no members.
    """

    def __init__(
        self, members: Sequence[PeerDot], *, caption: str, thresholds: tuple[float, float] | None = None
    ) -> None:
        import textwrap

        import numpy as np

        if not members:
            raise EvaluationError("a peer chart needs at least one filing")
        xs = np.array([100.0 * p.leverage for p in members])
        ys = np.array([p.current_ratio for p in members])
        x0, x1, x_cut = _clipped_limits(list(xs))
        y0, y1, y_cut = _clipped_limits(list(ys))
        self.limits = (x0, x1, y0, y1)
        self.clipped = x_cut or y_cut
        c = self._c = _peer_canvas()
        inside = (xs >= x0) & (xs <= x1) & (ys >= y0) & (ys <= y1)
        c.inside.set_offsets(np.column_stack([xs[inside], ys[inside]]))
        c.outside.set_offsets(np.column_stack([np.clip(xs[~inside], x0, x1), np.clip(ys[~inside], y0, y1)]))
        c.median_x.set_xdata([float(np.median(xs))] * 2)
        c.median_y.set_ydata([float(np.median(ys))] * 2)
        handles: list = [c.inside]
        labels = [f"filings of the group ({len(members)})"]
        if not inside.all():
            handles.append(c.outside)
            labels.append(f"off the axes ({int((~inside).sum())}), drawn on the edge")
        handles.append(c.median_x)
        labels.append("group medians")
        ceiling, floor = thresholds if thresholds is not None else (float("nan"), float("nan"))
        c.ceiling.set_xdata([100.0 * ceiling] * 2)
        c.floor.set_ydata([floor] * 2)
        c.ceiling.set_visible(x0 <= 100.0 * ceiling <= x1)
        c.floor.set_visible(y0 <= floor <= y1)
        if c.ceiling.get_visible() or c.floor.get_visible():
            handles.append(c.ceiling)
            labels.append("memo risk thresholds")
        handles.append(c.dot)
        labels.append("this memo's filer")
        for old in list(c.fig.legends):
            old.remove()
        c.fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 0.085), ncol=3, fontsize=7.5,
                     frameon=False)  # fmt: skip
        if self.clipped:
            caption += (
                f"; axes limited to the group's {PEER_CLIP[0]:g}th-{PEER_CLIP[1]:g}th percentiles widened by half "
                "their range (points beyond it drawn on the edge)"
            )
        c.caption.set_text(textwrap.fill(caption, 125))
        c.ax.set_xlim(x0, x1)
        c.ax.set_ylim(y0, y1)
        c.canvas.draw()
        self._background = c.canvas.copy_from_bbox(c.fig.bbox)

    def draw(self, filer: PeerDot, path: Path, *, title: str) -> Path:
        """Draw ``filer`` on the group (on the edge, as a triangle, when off the axes) with its values, under
        ``title`` (lines centred), into the PNG ``path``. The two texts are set with Pillow in matplotlib's
        DejaVu Sans (matplotlib's text layout would take most of a picture's time)."""
        import numpy as np
        from PIL import Image, ImageDraw

        c = self._c
        x0, x1, y0, y1 = self.limits
        c.ax.set_xlim(x0, x1)  # the figure may have drawn another group since
        c.ax.set_ylim(y0, y1)
        fx, fy = 100.0 * filer.leverage, filer.current_ratio
        off = not (x0 <= fx <= x1 and y0 <= fy <= y1)
        at = (min(max(fx, x0), x1), min(max(fy, y0), y1))
        dot = c.edge if off else c.dot
        dot.set_offsets([at])
        c.canvas.restore_region(self._background)
        c.fig.draw_artist(dot)
        image = Image.fromarray(np.asarray(c.canvas.buffer_rgba())[..., :3])
        pen = ImageDraw.Draw(image)
        title_font, value_font = _pillow_fonts()
        pen.multiline_text((image.width / 2, 8), title, fill="black", font=title_font, anchor="ma", align="center")
        px, py = c.ax.transData.transform(at)
        right = at[0] > x0 + 0.7 * (x1 - x0)
        where = (px - 10 if right else px + 10, image.height - py - 10)
        label = f"{fy:.2f}x, {fx:.1f}%" + (" (off the axes)" if off else "")
        box = pen.textbbox(where, label, font=value_font, anchor="rd" if right else "ld")
        pen.rectangle((box[0] - 2, box[1] - 2, box[2] + 2, box[3] + 2), fill="white")
        pen.text(where, label, fill=PALETTE[1], font=value_font, anchor="rd" if right else "ld")
        image = image.quantize(colors=128, method=Image.Quantize.FASTOCTREE)
        return _atomic(path, lambda tmp: image.save(tmp, format="PNG", compress_level=3))


def _pillow_fonts() -> tuple[Any, Any]:
    """matplotlib's DejaVu Sans for Pillow at a :class:`PeerChart`'s title and value sizes (9.5 and 8 points at
    100 dpi)."""
    if getattr(_THREAD, "pillow_fonts", None) is None:
        from matplotlib import font_manager
        from PIL import ImageFont

        path = font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans"))
        _THREAD.pillow_fonts = (ImageFont.truetype(path, 13), ImageFont.truetype(path, 11))
    return _THREAD.pillow_fonts
