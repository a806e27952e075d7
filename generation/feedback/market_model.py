"""Market feedback: daily prices, the close-to-close decision calendar and residual-impact labels.

Source: ../shared/seeds/000_79d55a8598b40f79.txt, sections 3.3 (close-to-close decision
convention) and 3.4 (market-feedback label construction, equations 1-3), Appendix B (the AAPL
example's ``anchor_time`` / ``prediction_day`` / market-card ``as_of``).

**Data.** Daily prices come from CSV files with the columns ``Date, Open, High, Low, Close,
Adj Close, Volume`` (../shared/data/market/prices, ISO dates; ../shared/data/market/index,
M/D/YYYY dates). Returns use ``Adj Close`` ("returns are computed from adjusted daily prices").
The paper's market proxy is QQQ; QQQ is not in finkg's data, so the S&P 500 index
(``index/sp500.csv``) stands in for it: :func:`load_market_proxy` takes any such file, and the
NASDAQ Composite (``index/nasdaq.csv``) can be passed instead.

**Calendar and decision time** (section 3.3, made exact). The trading sessions are the market
index's dates (:class:`TradingCalendar`). An anchor's UTC timestamp is converted to US/Eastern
(``zoneinfo`` America/New_York, so daylight saving is handled); regular hours are 09:30 <= t <
16:00 on a session. Then:

- a **regular-hours** anchor on session *d* is decided after *d*'s close and is tradable from the
  next session: ``decision_date = d``, ``prediction_day = next(d)``;
- an **after-hours** anchor (t >= 16:00 on session *d*) is decided before the next session opens,
  with market data through *d*'s close: ``decision_date = d``, ``prediction_day = next(d)``
  (Appendix B: an anchor "2020-04-30 after close" has ``prediction_day 2020-05-01`` and a market
  card ``as_of 2020-04-30 close``);
- a **pre-market** anchor (t < 09:30 on session *d*) is decided before *d* opens:
  ``decision_date = previous(d)``, ``prediction_day = d``;
- a **weekend or holiday** anchor goes to the next session *s*: ``decision_date = previous(s)``,
  ``prediction_day = s``.

In one line: ``prediction_day`` is the first session whose 09:30 open is strictly after the
anchor, and ``decision_date`` is the session before it (the last close whose data the decision may
use). Early closes (13:00 half days) are not in the data and need no special case: an anchor
between an early close and 16:00 is decided with that day's close either way.

**Labels** (section 3.4). For decision session index *D* and horizon *h* (1, 3, 5 sessions) the
post-prediction returns are close to close from the decision close: ``R_h = P[D+h] / P[D] - 1``
for the stock and ``M_h`` likewise for the market proxy (the first return day is the prediction
day; the label matures at the close of session ``D+h``). The symbols of equations 1-3 are lost in
the extracted text; they are reconstructed as the standard event-study market model (MacKinlay
1997, which the paper cites)::

    (1) e_h = R_h - (alpha_h + beta_h * M_h)
    (2) z_h = e_h / sigma_h
    (3) y_h = +1 if z_h > tau;  -1 if z_h < -tau;  0 otherwise

``alpha_h, beta_h`` are the OLS fit of overlapping *h*-day stock returns on overlapping *h*-day
market returns (``r_t = P[t] / P[t-h] - 1``, one per session *t*) whose end *t* lies in the
estimation window: the ``estimation_window`` (252 sessions, "past 12 months") sessions ending at
``e = D - gap`` (``gap`` = 20: "ending 20 trading days before the prediction time"; every price
the fit uses is dated at or before session ``D - 20``). Only observations where both returns are
finite count; fewer than ``min_observations`` (120) exclude the pair with a reason.
``sigma_h`` is the standard deviation of the fit's residuals with ``ddof = 2`` (two estimated
parameters): the "horizon-specific pre-event residual volatility".

**The threshold tau** is lost in the extraction ("We define the residual-impact label as (3)").
finkg uses ``tau = 1.0`` (a one-sigma residual move) and makes it a parameter. Why: the paper's
Table 1 gives about 35% (1D) to 41% (5D) non-neutral labels with symmetric classes; for a
standardized residual that would be about 0.93-0.84 sigma under normality, and post-event
residuals of news days are fatter-tailed and more volatile than the estimation window, which
pushes the implied cut-off up towards 1; tau = 1 is the conventional value that matches this, and
tau = 0.5 (62% non-neutral under normality) or 2 (5%) are far from the reported class shares.

Everything is vectorized over sessions x tickers with cumulative sums (rolling OLS moments), so
labels for 88 tickers x 5 years x 3 horizons take well under a second (``bench/market_labels.py``
measures it against a per-anchor loop).
"""

from __future__ import annotations

import csv
import datetime as dt
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from kg.errors import IngestError

EASTERN = ZoneInfo("America/New_York")
REGULAR_OPEN = dt.time(9, 30)
REGULAR_CLOSE = dt.time(16, 0)
PRICE_COLUMNS = ("Date", "Open", "High", "Low", "Close", "Adj Close", "Volume")
_FIELDS = ("open", "high", "low", "close", "adj_close", "volume")
_MISSING = "null"  # Yahoo Finance's marker for a day without data (three real files have one)
_DATE_FORMATS = ("%Y-%m-%d", "%m/%d/%Y")

#: Reasons an (anchor or ticker-day, horizon) pair has no label; checked in this order.
REASON_OUTSIDE_CALENDAR = "outside_calendar"
REASON_UNKNOWN_TICKER = "unknown_ticker"
REASON_INSUFFICIENT = "insufficient_estimation_observations"
REASON_DEGENERATE = "degenerate_market_model"
REASON_NOT_MATURED = "not_matured"
REASON_MISSING_PRICE = "missing_price"
REASONS = (
    REASON_OUTSIDE_CALENDAR,
    REASON_UNKNOWN_TICKER,
    REASON_INSUFFICIENT,
    REASON_DEGENERATE,
    REASON_NOT_MATURED,
    REASON_MISSING_PRICE,
)

#: Session phases of an anchor's local (US/Eastern) time.
PHASES = ("pre_market", "regular", "after_hours", "closed_day")


class MarketDataError(IngestError):
    """A price file that cannot be read; the message names the file and, where known, the line."""

    def __init__(self, path: Path | str, line: int | None, message: str) -> None:
        self.path = Path(path)
        self.line = line
        where = f"{self.path}:{line}" if line is not None else str(self.path)
        super().__init__(f"{where}: {message}")


# --------------------------------------------------------------------------- price files


def read_price_file(path: Path | str) -> pd.DataFrame:
    """Read one daily OHLCV file (``Date, Open, High, Low, Close, Adj Close, Volume``).

    Dates may be ``YYYY-MM-DD`` or ``M/D/YYYY`` (one format per file). A field reading ``null``
    (Yahoo's marker for a day without data) is a missing value (NaN); a day whose ``Adj Close`` is
    missing is a missing observation downstream.

    Returns:
        A frame indexed by session date (``DatetimeIndex`` named ``date``, naive, strictly
        increasing) with float columns ``open, high, low, close, adj_close, volume``.

    Raises:
        MarketDataError: naming the file and line for a missing file, a wrong header, a row with
            the wrong number of fields, an unparseable date or number, a non-positive adjusted
            close, or a date not after the previous one (duplicate or out of order).
    """
    path = Path(path)
    try:
        handle = path.open(newline="", encoding="utf-8")
    except OSError as exc:
        raise MarketDataError(path, None, f"cannot open price file ({exc.strerror})") from exc
    with handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None:
            raise MarketDataError(path, 1, "empty file: expected the header " + ",".join(PRICE_COLUMNS))
        if tuple(h.strip() for h in header) != PRICE_COLUMNS:
            raise MarketDataError(path, 1, f"header is {','.join(header)!r}, expected {','.join(PRICE_COLUMNS)!r}")
        lines: list[int] = []
        rows: list[list[str]] = []
        for row in reader:
            if not row:
                continue
            if len(row) != len(PRICE_COLUMNS):
                raise MarketDataError(path, reader.line_num, f"{len(row)} fields, expected {len(PRICE_COLUMNS)}")
            lines.append(reader.line_num)
            rows.append(row)
    if not rows:
        raise MarketDataError(path, None, "no price rows after the header")
    table = np.array(rows, dtype=object)
    dates = _parse_dates(path, table[:, 0], lines)
    values = np.empty((len(rows), len(_FIELDS)), dtype=float)
    for j, column in enumerate(PRICE_COLUMNS[1:]):
        raw = table[:, j + 1]
        numbers = pd.to_numeric(pd.Series(raw), errors="coerce").to_numpy(dtype=float)
        bad = np.isnan(numbers) & (raw != _MISSING)
        if bad.any():
            i = int(np.argmax(bad))
            raise MarketDataError(path, lines[i], f"{column} is {raw[i]!r}, not a number")
        values[:, j] = numbers
    adj = values[:, _FIELDS.index("adj_close")]
    nonpositive = adj <= 0
    if nonpositive.any():
        i = int(np.argmax(nonpositive))
        raise MarketDataError(path, lines[i], f"Adj Close is {adj[i]}, must be > 0")
    order = np.diff(dates.asi8) <= 0
    if order.any():
        i = int(np.argmax(order)) + 1
        raise MarketDataError(
            path, lines[i], f"date {dates[i].date()} is not after the previous row's {dates[i - 1].date()}"
        )
    return pd.DataFrame(values, index=pd.DatetimeIndex(dates, name="date"), columns=list(_FIELDS))


def _parse_dates(path: Path, raw: np.ndarray, lines: list[int]) -> pd.DatetimeIndex:
    """Parse a file's Date column in the one format its first row uses."""
    strings = pd.Series(raw.astype(str))
    parsed = pd.to_datetime(strings, format=_DATE_FORMATS[0], errors="coerce")
    for fmt in _DATE_FORMATS[1:]:
        if not pd.isna(parsed.iloc[0]):
            break
        parsed = pd.to_datetime(strings, format=fmt, errors="coerce")
    bad = parsed.isna().to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        raise MarketDataError(path, lines[i], f"Date is {raw[i]!r}, expected YYYY-MM-DD or M/D/YYYY (as the first row)")
    return pd.DatetimeIndex(parsed)


def read_price_frames(prices_dir: Path | str, tickers: Iterable[str] | None = None) -> dict[str, pd.DataFrame]:
    """The OHLCV frames (:func:`read_price_file`) of ``<TICKER>.csv`` files in ``prices_dir``.

    Args:
        prices_dir: folder of price files (the ticker is the file's stem; other files, such as
            ``StockTable.tsv``, are ignored).
        tickers: the tickers to read (default: every ``*.csv``), in the order given.

    Returns:
        ticker -> frame, in the order read.

    Raises:
        MarketDataError: for a missing folder, a requested ticker without a file, or a bad file.
    """
    folder = Path(prices_dir)
    if not folder.is_dir():
        raise MarketDataError(folder, None, "not a folder of price files")
    names = list(tickers) if tickers is not None else sorted(p.stem for p in folder.glob("*.csv"))
    return {name: read_price_file(folder / f"{name}.csv") for name in names}


def adj_close_panel(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Frame dates x tickers of ``Adj Close`` from OHLCV frames (NaN where a ticker has no price that
    day), the union of their dates, sorted."""
    return pd.DataFrame({name: frame["adj_close"] for name, frame in frames.items()}).sort_index()


def load_price_panel(prices_dir: Path | str, tickers: Iterable[str] | None = None) -> pd.DataFrame:
    """Adjusted closes of many tickers: one ``<TICKER>.csv`` per ticker in ``prices_dir``
    (:func:`read_price_frames`, then :func:`adj_close_panel`).

    Raises:
        MarketDataError: for a missing folder, no price file to read, a requested ticker without a
            file, or a bad file.
    """
    frames = read_price_frames(prices_dir, tickers)
    if not frames:
        raise MarketDataError(Path(prices_dir), None, "no *.csv price files")
    return adj_close_panel(frames)


def load_market_proxy(path: Path | str) -> pd.Series:
    """The market proxy's adjusted close (S&P 500 here; the paper's QQQ is not in the data).

    Returns:
        Series indexed by session date, named after the file's stem (``sp500``).

    Raises:
        MarketDataError: as :func:`read_price_file`.
    """
    frame = read_price_file(path)
    return frame["adj_close"].rename(Path(path).stem)


# --------------------------------------------------------------------------- calendar


def _dates_at(dates: pd.DatetimeIndex, positions: np.ndarray) -> pd.DatetimeIndex:
    """``dates[positions]``, NaT where a position is outside ``0 .. len(dates) - 1``."""
    inside = (positions >= 0) & (positions < len(dates))
    picked = dates.values[np.clip(positions, 0, len(dates) - 1)]
    return pd.DatetimeIndex(np.where(inside, picked, np.datetime64("NaT")))


def _to_utc(anchor_times: Sequence[object] | pd.Series | pd.DatetimeIndex) -> pd.DatetimeIndex:
    """Anchor times as a UTC ``DatetimeIndex``; every time must carry a zone or offset."""
    if isinstance(anchor_times, (pd.Series, pd.DatetimeIndex)) and isinstance(anchor_times.dtype, pd.DatetimeTZDtype):
        return pd.DatetimeIndex(anchor_times).tz_convert("UTC")
    stamps = []
    for i, value in enumerate(anchor_times):
        try:
            stamp = pd.Timestamp(value)  # pyright: ignore[reportArgumentType]  # any value is tried; a bad one raises
        except (ValueError, TypeError) as exc:
            raise ValueError(f"anchor {i}: unparseable time {value!r}") from exc
        if stamp is pd.NaT or stamp.tzinfo is None:
            raise ValueError(
                f"anchor {i}: time {value!r} has no time zone (tweets' created_at is UTC: give the offset)"
            )
        stamps.append(stamp.tz_convert("UTC"))
    return pd.DatetimeIndex(stamps, tz="UTC") if stamps else pd.DatetimeIndex([], tz="UTC")


@dataclass(frozen=True)
class Decision:
    """The decision assignment of one anchor (module docstring, "Calendar and decision time").

    Attributes:
        anchor_time: the anchor's timestamp, UTC.
        local_time: the same instant in US/Eastern.
        phase: ``pre_market``, ``regular``, ``after_hours`` or ``closed_day`` (weekend/holiday).
        decision_date: the session whose close is the decision's information cut-off.
        prediction_day: the first session the signal is tradable in (the next session).
    """

    anchor_time: pd.Timestamp
    local_time: pd.Timestamp
    phase: str
    decision_date: pd.Timestamp
    prediction_day: pd.Timestamp


class TradingCalendar:
    """Trading sessions (naive dates) and the close-to-close decision assignment of anchors.

    Args:
        sessions: session dates, e.g. the market index's dates; duplicates are an error.

    Raises:
        ValueError: for an empty, unsorted or duplicated session list.
    """

    def __init__(self, sessions: Iterable[pd.Timestamp | dt.date | str]) -> None:
        # pandas-stubs has no overload for a list mixing Timestamps, dates and strings
        index = pd.DatetimeIndex(pd.to_datetime(list(sessions))).normalize()  # pyright: ignore[reportCallIssue, reportArgumentType]
        if index.tz is not None:
            raise ValueError("sessions must be naive dates (exchange-local), not time zone aware")
        if len(index) == 0:
            raise ValueError("a trading calendar needs at least one session")
        if not index.is_monotonic_increasing or index.has_duplicates:
            raise ValueError("sessions must be strictly increasing dates")
        self.sessions = index

    @classmethod
    def from_series(cls, prices: pd.Series | pd.DataFrame) -> TradingCalendar:
        """The sessions of a price series (the market proxy's dates: one row per session)."""
        return cls(prices.index)

    def __len__(self) -> int:
        return len(self.sessions)

    def assign(self, anchor_times: Sequence[object] | pd.Series | pd.DatetimeIndex) -> pd.DataFrame:
        """Decision assignment of many anchors at once (vectorized).

        Args:
            anchor_times: time-zone-aware timestamps (any zone; tweets' ``created_at`` is UTC) or
                ISO strings with an offset.

        Returns:
            Frame in input order with ``anchor_time`` (UTC), ``local_time`` (US/Eastern),
            ``phase``, ``decision_date``, ``prediction_day``, ``decision_index`` (position of
            ``decision_date`` in :attr:`sessions`) and ``reason`` (categorical): missing, or
            ``outside_calendar`` when the calendar has no session before or after the anchor (then
            the dates are NaT and the index -1).

        Raises:
            ValueError: if a timestamp is naive (a wall-clock time without a zone is ambiguous)
                or unparseable.
        """
        utc = _to_utc(anchor_times)
        local = utc.tz_convert(EASTERN)
        local_date = local.tz_localize(None).normalize()
        seconds = (local.tz_localize(None) - local_date).total_seconds().to_numpy()
        open_s = REGULAR_OPEN.hour * 3600 + REGULAR_OPEN.minute * 60
        close_s = REGULAR_CLOSE.hour * 3600 + REGULAR_CLOSE.minute * 60
        n = len(self.sessions)
        left = self.sessions.searchsorted(local_date, side="left")
        right = self.sessions.searchsorted(local_date, side="right")
        is_session = right > left
        before_open = seconds < open_s
        prediction_pos = np.where(is_session & before_open, left, right)
        decision_pos = prediction_pos - 1
        ok = (decision_pos >= 0) & (prediction_pos < n)
        phase = np.where(
            ~is_session,
            "closed_day",
            np.where(before_open, "pre_market", np.where(seconds < close_s, "regular", "after_hours")),
        )
        decision_date = _dates_at(self.sessions, np.where(ok, decision_pos, -1))
        prediction_day = _dates_at(self.sessions, np.where(ok, prediction_pos, -1))
        outside = REASONS.index(REASON_OUTSIDE_CALENDAR)
        return pd.DataFrame(
            {
                "anchor_time": utc,
                "local_time": local,
                "phase": phase,
                "decision_date": decision_date,
                "prediction_day": prediction_day,
                "decision_index": np.where(ok, decision_pos, -1).astype(np.int64),
                "reason": pd.Categorical.from_codes(np.where(ok, -1, outside), categories=list(REASONS)),  # pyright: ignore[reportCallIssue, reportArgumentType]  # pandas-stubs types categories as None
            }
        )

    def decide(self, anchor_time: object) -> Decision:
        """The decision assignment of one anchor (see :meth:`assign`).

        Raises:
            ValueError: for a naive timestamp, or an anchor outside the calendar.
        """
        row = self.assign([anchor_time]).iloc[0]
        if pd.notna(row["reason"]):
            span = f"{self.sessions[0].date()}..{self.sessions[-1].date()}"
            raise ValueError(f"anchor {anchor_time} is outside the calendar {span}")
        return Decision(
            row["anchor_time"], row["local_time"], row["phase"], row["decision_date"], row["prediction_day"]
        )


# --------------------------------------------------------------------------- market model


@dataclass(frozen=True)
class MarketModelConfig:
    """Parameters of the seed-000 section 3.4 labels (defaults: the paper's, tau reconstructed).

    Attributes:
        horizons: forecast horizons in sessions (1D, 3D, 5D).
        estimation_window: sessions in the estimation window ("past 12 months"; 252 sessions).
        gap: sessions between the window's end and the decision ("20 trading days before").
        min_observations: fewest valid overlapping-return observations for a label (120).
        threshold: tau of equation 3, in residual standard deviations (module docstring).
        ddof: degrees of freedom removed from the residual volatility (2: alpha and beta).

    Raises:
        ValueError: for a non-positive horizon, window or threshold, a negative gap, or a
            ``min_observations`` the window cannot reach or that leaves no residual degrees of freedom.
    """

    horizons: tuple[int, ...] = (1, 3, 5)
    estimation_window: int = 252
    gap: int = 20
    min_observations: int = 120
    threshold: float = 1.0
    ddof: int = 2

    def __post_init__(self) -> None:
        if not self.horizons or any(int(h) != h or h < 1 for h in self.horizons):
            raise ValueError(f"horizons must be positive whole numbers of sessions, got {self.horizons}")
        if self.estimation_window < 2 or self.gap < 0:
            raise ValueError("estimation_window must be >= 2 and gap >= 0")
        if not (self.ddof < self.min_observations <= self.estimation_window):
            raise ValueError(
                f"min_observations must be in (ddof={self.ddof}, estimation_window={self.estimation_window}], "
                f"got {self.min_observations}"
            )
        if not (self.threshold > 0 and math.isfinite(self.threshold)):
            raise ValueError(f"threshold must be a positive number, got {self.threshold}")


def horizon_returns(prices: np.ndarray, h: int) -> np.ndarray:
    """Overlapping h-session simple returns ``P[t] / P[t-h] - 1`` at each end session t.

    Args:
        prices: adjusted closes, shape ``(T,)`` or ``(T, N)`` (NaN = missing).
        h: horizon in sessions, >= 1.

    Returns:
        Array of the same shape; the first ``h`` rows are NaN, as is any return with a missing end.
    """
    out = np.full(prices.shape, np.nan)
    out[h:] = prices[h:] / prices[:-h] - 1.0
    return out


def forward_returns(prices: np.ndarray, h: int) -> np.ndarray:
    """Post-decision returns ``P[D+h] / P[D] - 1`` at each decision session D (NaN past the end)."""
    out = np.full(prices.shape, np.nan)
    out[:-h] = prices[h:] / prices[:-h] - 1.0
    return out


@dataclass(frozen=True)
class MarketModelFit:
    """Rolling horizon-specific market-model estimates at every decision session.

    All arrays have shape ``(T, N)`` (sessions x tickers); row D holds the fit used for a decision
    at session D, estimated on the window ending at session ``D - gap``.
    """

    n_obs: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    sigma: np.ndarray


def fit_market_model(stock: np.ndarray, market: np.ndarray, h: int, config: MarketModelConfig) -> MarketModelFit:
    """Rolling OLS of overlapping h-day stock returns on market returns, for every decision session.

    Vectorized with cumulative sums of ``n, x, y, x^2, x*y, y^2`` over valid observations (both
    returns finite): each window's centred moments give ``beta = Sxy / Sxx``,
    ``alpha = mean(y) - beta * mean(x)`` and ``sigma = sqrt((Syy - beta * Sxy) / (n - ddof))``.

    Args:
        stock: adjusted closes, shape ``(T, N)``, aligned to the sessions of ``market``.
        market: the market proxy's adjusted closes, shape ``(T,)``.
        h: horizon in sessions.
        config: window, gap and ddof.

    Returns:
        The fit at each decision session (NaN where the window holds fewer than ``ddof + 1``
        observations or lies before the data).
    """
    y_all = horizon_returns(stock, h)
    x_all = horizon_returns(market, h)[:, None]
    valid = np.isfinite(y_all) & np.isfinite(x_all)
    x = np.where(valid, x_all, 0.0)
    y = np.where(valid, y_all, 0.0)
    window, gap = config.estimation_window, config.gap

    def window_sums(v: np.ndarray) -> np.ndarray:
        c = np.concatenate([np.zeros((1, v.shape[1])), np.cumsum(v, axis=0)])
        t = np.arange(v.shape[0])
        start = np.maximum(t - window + 1, 0)
        ends = c[t + 1] - c[start]
        shifted = np.full(v.shape, np.nan)  # row D <- window ending at D - gap
        if gap < v.shape[0]:
            shifted[gap:] = ends[: v.shape[0] - gap]
        return shifted

    n = window_sums(valid.astype(float))
    sx, sy = window_sums(x), window_sums(y)
    sxx, sxy, syy = window_sums(x * x), window_sums(x * y), window_sums(y * y)
    with np.errstate(invalid="ignore", divide="ignore"):
        cxx = sxx - sx * sx / n
        cxy = sxy - sx * sy / n
        cyy = syy - sy * sy / n
        degenerate_x = cxx <= 1e-12 * np.maximum(sxx, 1e-300)
        beta = np.where(degenerate_x, np.nan, cxy / cxx)
        alpha = (sy - beta * sx) / n
        ssr = np.maximum(cyy - beta * cxy, 0.0)
        sigma = np.sqrt(ssr / (n - config.ddof))
        sigma = np.where(ssr <= 1e-12 * np.maximum(syy, 1e-300), 0.0, sigma)
    n_obs = np.nan_to_num(n, nan=0.0).astype(np.int64)
    too_few = n_obs <= config.ddof
    return MarketModelFit(
        n_obs=n_obs,
        alpha=np.where(too_few, np.nan, alpha),
        beta=np.where(too_few, np.nan, beta),
        sigma=np.where(too_few, np.nan, sigma),
    )


def align_to_calendar(prices: pd.DataFrame, calendar: TradingCalendar) -> pd.DataFrame:
    """Reindex a dates x tickers price frame onto the calendar's sessions within the data's span.

    Returns:
        Frame whose index is every session from the first to the last price date (NaN where a
        ticker has no price).

    Raises:
        ValueError: naming the first ticker and date that is not a session of the calendar.
    """
    dates = pd.DatetimeIndex(prices.index).normalize()
    outside = ~dates.isin(calendar.sessions)
    if outside.any():
        day = dates[int(np.argmax(outside))]
        row = prices.loc[prices.index[int(np.argmax(outside))]]
        tickers = [str(t) for t, v in row.items() if pd.notna(v)] or ["?"]
        raise ValueError(f"{tickers[0]} has a price on {day.date()}, which is not a session of the calendar")
    span = calendar.sessions[(calendar.sessions >= dates.min()) & (calendar.sessions <= dates.max())]
    return prices.set_axis(dates).reindex(span)


def residual_labels(
    prices: pd.DataFrame,
    market: pd.Series,
    config: MarketModelConfig | None = None,
    calendar: TradingCalendar | None = None,
) -> pd.DataFrame:
    """Residual-impact labels (equations 1-3) for every ticker, decision session and horizon.

    Args:
        prices: adjusted closes, dates x tickers (:func:`load_price_panel`).
        market: the market proxy's adjusted closes (:func:`load_market_proxy`).
        config: parameters (default :class:`MarketModelConfig`).
        calendar: sessions (default: the market proxy's dates).

    Returns:
        Long frame, one row per (ticker, decision_date, horizon) for every session in the price
        data's span, with ``prediction_day`` (next session), ``label_date`` (the close at which the
        label matures, ``D + h``; NaT past the data), ``n_obs``, ``alpha``, ``beta``, ``sigma``,
        ``stock_return`` (R_h), ``market_return`` (M_h), ``residual`` (e_h), ``z``,
        ``label`` (Int8: +1/0/-1, <NA> when excluded) and ``reason`` (None, or one of
        :data:`REASONS`: the first failing check of insufficient observations, degenerate fit,
        not matured, missing price).

    Raises:
        ValueError: if a price date is not a session, or the market proxy lacks a price on a
            session of the data's span.
    """
    config = config or MarketModelConfig()
    calendar = calendar or TradingCalendar.from_series(market)
    panel = align_to_calendar(prices, calendar)
    sessions = pd.DatetimeIndex(panel.index)
    mkt = market.set_axis(pd.DatetimeIndex(market.index).normalize()).reindex(sessions)
    if mkt.isna().any():
        raise ValueError(f"the market proxy has no price on {mkt.index[mkt.isna().to_numpy()][0].date()}")
    stock = panel.to_numpy(dtype=float)
    m = mkt.to_numpy(dtype=float)
    tickers = np.asarray(panel.columns, dtype=object)
    t_count, n_count = stock.shape
    positions = np.arange(t_count)
    prediction_day = _dates_at(calendar.sessions, calendar.sessions.searchsorted(sessions, side="right"))
    frames = []
    for h in config.horizons:
        fit = fit_market_model(stock, m, h, config)
        r = forward_returns(stock, h)
        mr = forward_returns(m, h)[:, None] * np.ones((1, n_count))
        with np.errstate(invalid="ignore", divide="ignore"):
            resid = r - (fit.alpha + fit.beta * mr)
            z = resid / fit.sigma
        code = np.full((t_count, n_count), -1, dtype=np.int8)  # index into REASONS, -1 = labelled
        matured = (positions + h < t_count)[:, None] & np.ones((1, n_count), dtype=bool)
        checks = [
            (REASON_INSUFFICIENT, fit.n_obs < config.min_observations),
            (REASON_DEGENERATE, ~np.isfinite(fit.beta) | ~(fit.sigma > 0)),
            (REASON_NOT_MATURED, ~matured),
            (REASON_MISSING_PRICE, ~np.isfinite(r)),
        ]
        for name, failed in checks:
            code[(code < 0) & failed] = REASONS.index(name)
        ok = code < 0
        label = np.where(z > config.threshold, 1, np.where(z < -config.threshold, -1, 0)).astype(np.int8)
        label_date = _dates_at(sessions, positions + h)
        frames.append(
            pd.DataFrame(
                {
                    "ticker": np.tile(tickers, t_count),
                    "decision_date": np.repeat(sessions.values, n_count),
                    "horizon": np.int8(h),
                    "prediction_day": np.repeat(prediction_day.values, n_count),
                    "label_date": np.repeat(label_date.values, n_count),
                    "n_obs": fit.n_obs.ravel(),
                    "alpha": fit.alpha.ravel(),
                    "beta": fit.beta.ravel(),
                    "sigma": fit.sigma.ravel(),
                    "stock_return": r.ravel(),
                    "market_return": mr.ravel(),
                    "residual": np.where(ok, resid, np.nan).ravel(),
                    "z": np.where(ok, z, np.nan).ravel(),
                    "label": pd.arrays.IntegerArray(np.where(ok, label, 0).ravel(), ~ok.ravel()),
                    "reason": pd.Categorical.from_codes(code.ravel(), categories=list(REASONS)),  # pyright: ignore[reportCallIssue, reportArgumentType]  # pandas-stubs types categories as None
                }
            )
        )
    out = pd.concat(frames, ignore_index=True)
    return out.sort_values(["ticker", "decision_date", "horizon"], kind="stable").reset_index(drop=True)


def label_anchors(
    anchors: pd.DataFrame,
    labels: pd.DataFrame,
    calendar: TradingCalendar,
) -> pd.DataFrame:
    """Attach decision times and residual labels to news anchors, one row per anchor and horizon.

    Args:
        anchors: frame with ``ticker`` and ``anchor_time`` (time-zone aware) and any other
            columns (kept).
        labels: :func:`residual_labels` output.
        calendar: the calendar the labels were built on.

    Returns:
        The anchors' columns, the :meth:`TradingCalendar.assign` columns and the labels' columns
        (``horizon``, ``label``, ``z``, ...). Anchors that cannot be labelled are kept, with
        ``label`` <NA> and ``reason`` ``outside_calendar`` or ``unknown_ticker`` (one row per
        horizon), so that no anchor disappears silently.

    Raises:
        KeyError: if ``anchors`` lacks ``ticker`` or ``anchor_time``.
    """
    missing = {"ticker", "anchor_time"} - set(anchors.columns)
    if missing:
        raise KeyError(f"anchors lack the column(s) {sorted(missing)}")
    horizons = sorted(labels["horizon"].unique())
    assigned = calendar.assign(anchors["anchor_time"]).drop(columns="anchor_time")
    base = pd.concat([anchors.reset_index(drop=True), assigned.rename(columns={"reason": "assign_reason"})], axis=1)
    base = base.merge(pd.DataFrame({"horizon": np.array(horizons, dtype=np.int8)}), how="cross")
    merged = base.merge(
        labels.drop(columns=["prediction_day"]),
        on=["ticker", "decision_date", "horizon"],
        how="left",
        validate="many_to_one",
    )
    known = set(labels["ticker"].unique())
    reason = merged["reason"].astype(object)
    reason = reason.where(merged["assign_reason"].isna(), merged["assign_reason"].astype(object))
    unknown = merged["assign_reason"].isna() & ~merged["ticker"].isin(known)
    reason = reason.where(~unknown, REASON_UNKNOWN_TICKER)
    # a known ticker whose decision date lies outside its price span has no labels row
    reason = reason.where(~(reason.isna() & merged["label"].isna()), REASON_MISSING_PRICE)
    merged["reason"] = pd.Categorical(reason, categories=list(REASONS))
    return merged.drop(columns="assign_reason")
