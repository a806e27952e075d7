"""Market feedback (seed 000, sections 3.3-3.4) on a small real sample: tests/data/market/.

MSFT (2013-01-02 .. 2015-12-31), BABA (from its listing, 2014-09-19, to 2015-12-31) and the S&P 500
(2013-2015, M/D/YYYY dates), trimmed from ../shared/data/market (provenance in data/NOTICE.md).
The expected values are recomputed here independently: plain pandas indexing and numpy.polyfit.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from generation.feedback import market_model as mm

DATA = Path(__file__).parent / "data" / "market"


@pytest.fixture(scope="module")
def market() -> pd.Series:
    return mm.load_market_proxy(DATA / "index" / "sp500.csv")


@pytest.fixture(scope="module")
def panel() -> pd.DataFrame:
    return mm.load_price_panel(DATA / "prices")


@pytest.fixture(scope="module")
def calendar(market) -> mm.TradingCalendar:
    return mm.TradingCalendar.from_series(market)


@pytest.fixture(scope="module")
def labels(panel, market) -> pd.DataFrame:
    return mm.residual_labels(panel, market)


def _row(labels: pd.DataFrame, ticker: str, day: str, h: int) -> pd.Series:
    hit = labels[(labels.ticker == ticker) & (labels.decision_date == pd.Timestamp(day)) & (labels.horizon == h)]
    assert len(hit) == 1
    return hit.iloc[0]


# --------------------------------------------------------------------------- files


def test_reads_iso_and_us_dates(panel, market):
    assert list(panel.columns) == ["BABA", "MSFT"]
    assert market.name == "sp500" and len(market) == 756
    assert market.index[0] == pd.Timestamp("2013-01-02") and market.iloc[0] == pytest.approx(1462.420044)
    msft = mm.read_price_file(DATA / "prices" / "MSFT.csv")
    assert list(msft.columns) == ["open", "high", "low", "close", "adj_close", "volume"]
    assert (
        msft.loc["2015-12-31", "adj_close"] == 53.084164
    )  # the file's last row: 2015-12-31,...,55.480000,53.084164,26529600
    assert panel["BABA"].first_valid_index() == pd.Timestamp("2014-09-19")


def _corrupt(tmp_path: Path, line: int, text: str | None) -> Path:
    """A copy of the real MSFT file whose line ``line`` (1-based) is replaced (or removed)."""
    lines = (DATA / "prices" / "MSFT.csv").read_text().splitlines()
    if text is None:
        del lines[line - 1]
    else:
        lines[line - 1] = text
    out = tmp_path / "MSFT.csv"
    out.write_text("\n".join(lines) + "\n")
    return out


@pytest.mark.parametrize(
    ("line", "text", "message"),
    [
        (5, "2013-01-07,27.45,27.49,27.26,27.34,abc,33905200", "MSFT.csv:5: Adj Close is 'abc', not a number"),
        (5, "2013-01-07,27.45,27.49,27.26,27.34,24.0", "MSFT.csv:5: 6 fields, expected 7"),
        (5, "2013-01-07,27.45,27.49,27.26,27.34,24.0,1,9", "MSFT.csv:5: 8 fields, expected 7"),
        (5, "2013-13-07,27.45,27.49,27.26,27.34,24.0,33905200", "MSFT.csv:5: Date is '2013-13-07'"),
        (5, "2013-01-04,27.45,27.49,27.26,27.34,24.0,33905200", "MSFT.csv:5: date 2013-01-04 is not after"),
        (5, "2013-01-07,27.45,27.49,27.26,27.34,0,33905200", "MSFT.csv:5: Adj Close is 0.0, must be > 0"),
        (1, "Date,Open,High,Low,Close,Volume,Adj Close", "MSFT.csv:1: header is"),
    ],
)
def test_bad_rows_name_file_and_line(tmp_path, line, text, message):
    path = _corrupt(tmp_path, line, text)
    with pytest.raises(mm.MarketDataError, match="^" + re.escape(f"{tmp_path}/{message}")):
        mm.read_price_file(path)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(mm.MarketDataError, match=r"NOPE\.csv: cannot open price file"):
        mm.load_price_panel(DATA / "prices", tickers=["MSFT", "NOPE"])
    with pytest.raises(mm.MarketDataError, match="not a folder"):
        mm.load_price_panel(tmp_path / "absent")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(mm.MarketDataError, match=r"empty\.csv:1: empty file"):
        mm.read_price_file(tmp_path / "empty.csv")


def test_yahoo_null_row_is_a_missing_day(tmp_path):
    # the real files PTR.csv, REX.csv and SNP.csv have the row "2016-06-29,null,null,null,null,null,null"
    path = _corrupt(tmp_path, 5, "2013-01-07,null,null,null,null,null,null")
    frame = mm.read_price_file(path)
    assert np.isnan(frame.loc["2013-01-07"]).all() and len(frame) == 756
    assert frame.loc["2013-01-08", "adj_close"] > 0


# --------------------------------------------------------------------------- calendar


@pytest.mark.parametrize(
    ("anchor", "phase", "decision", "prediction"),
    [
        # regular hours, Thursday 10:00 EST -> decided after Thursday's close, tradable Friday
        ("2014-01-23T15:00:00Z", "regular", "2014-01-23", "2014-01-24"),
        # a real after-close tweet (MSFT/2014-01-23, @FoxBusiness, "Thu Jan 23 21:40:19 +0000 2014")
        ("Thu Jan 23 21:40:19 +0000 2014", "after_hours", "2014-01-23", "2014-01-24"),
        # 03:10 UTC on Friday is 22:10 EST on Thursday: after hours of Thursday
        ("2014-01-24T03:10:17Z", "after_hours", "2014-01-23", "2014-01-24"),
        # the open and the close themselves: 09:30 is regular, 16:00 is after hours
        ("2014-01-23T14:30:00Z", "regular", "2014-01-23", "2014-01-24"),
        ("2014-01-23T21:00:00Z", "after_hours", "2014-01-23", "2014-01-24"),
        # pre-market, 09:29 EST: tradable the same day, with data through the previous close
        ("2014-01-23T14:29:59Z", "pre_market", "2014-01-22", "2014-01-23"),
        # Saturday and Sunday -> Friday's close, Monday
        ("2014-01-25T17:00:00Z", "closed_day", "2014-01-24", "2014-01-27"),
        ("2014-01-26T23:59:00-05:00", "closed_day", "2014-01-24", "2014-01-27"),
        # holidays: Thanksgiving 2014, Good Friday 2015, Independence Day observed 2015-07-03
        ("2014-11-27T16:00:00Z", "closed_day", "2014-11-26", "2014-11-28"),
        ("2015-04-03T15:00:00Z", "closed_day", "2015-04-02", "2015-04-06"),
        ("2015-07-03T15:00:00Z", "closed_day", "2015-07-02", "2015-07-06"),
        # after hours before a long weekend: Thursday 2015-07-02 18:00 EDT -> Monday
        ("2015-07-02T22:00:00Z", "after_hours", "2015-07-02", "2015-07-06"),
        # daylight saving: 13:45 UTC is 08:45 EST on Friday 2015-03-06 but 09:45 EDT on Monday 03-09
        ("2015-03-06T13:45:00Z", "pre_market", "2015-03-05", "2015-03-06"),
        ("2015-03-09T13:45:00Z", "regular", "2015-03-09", "2015-03-10"),
    ],
)
def test_decision_assignment(calendar, anchor, phase, decision, prediction):
    d = calendar.decide(anchor)
    assert (d.phase, d.decision_date, d.prediction_day) == (phase, pd.Timestamp(decision), pd.Timestamp(prediction))
    assert d.anchor_time.tzname() == "UTC" and d.local_time.tzinfo is not None


def test_holidays_are_not_sessions(calendar):
    for day in ("2014-11-27", "2015-04-03", "2015-07-03", "2014-12-25"):
        assert pd.Timestamp(day) not in calendar.sessions


def test_assign_vectorized_matches_decide_and_rejects_naive_times(calendar):
    times = pd.Series(pd.to_datetime(["2014-01-23T15:00Z", "2014-01-25T17:00Z", "2020-01-02T15:00Z"], utc=True))
    frame = calendar.assign(times)
    assert list(frame["decision_date"][:2]) == [pd.Timestamp("2014-01-23"), pd.Timestamp("2014-01-24")]
    assert frame["reason"].isna().tolist() == [True, True, False]
    assert frame["reason"][2] == mm.REASON_OUTSIDE_CALENDAR
    assert pd.isna(frame["decision_date"][2]) and frame["decision_index"][2] == -1
    with pytest.raises(ValueError, match="has no time zone"):
        calendar.assign(["2014-01-23 15:00"])
    with pytest.raises(ValueError, match="outside the calendar"):
        calendar.decide("2020-01-02T15:00Z")


# --------------------------------------------------------------------------- labels


def _by_hand(panel, market, ticker: str, day: str, h: int, tau: float = 1.0):
    """Section 3.4 recomputed with plain indexing and numpy.polyfit."""
    sessions = market.index
    p = panel[ticker].reindex(sessions).to_numpy()
    m = market.to_numpy()
    d = sessions.get_loc(pd.Timestamp(day))
    e = d - 20
    ends = np.arange(e - 251, e + 1)
    ends = ends[ends - h >= 0]  # the sample starts 2013-01-02: no wrap-around to its end
    y = p[ends] / p[ends - h] - 1
    x = m[ends] / m[ends - h] - 1
    ok = np.isfinite(y) & np.isfinite(x)
    beta, alpha = np.polyfit(x[ok], y[ok], 1)
    sigma = np.std(y[ok] - alpha - beta * x[ok], ddof=2)
    r = p[d + h] / p[d] - 1
    mr = m[d + h] / m[d] - 1
    z = (r - alpha - beta * mr) / sigma
    return dict(
        n=int(ok.sum()), alpha=alpha, beta=beta, sigma=sigma, r=r, mr=mr, z=z, label=int(np.sign(z) * (abs(z) > tau))
    )


@pytest.mark.parametrize("h", [1, 3, 5])
@pytest.mark.parametrize("day", ["2014-01-23", "2015-06-15", "2015-12-01"])
def test_market_model_matches_polyfit(labels, panel, market, day, h):
    want = _by_hand(panel, market, "MSFT", day, h)
    got = _row(labels, "MSFT", day, h)
    assert got["n_obs"] == want["n"] >= 120  # 252 from 2014-02 on; the sample starts 2013-01-02
    if day != "2014-01-23":
        assert want["n"] == 252
    assert got["beta"] == pytest.approx(want["beta"], abs=1e-10)
    assert got["alpha"] == pytest.approx(want["alpha"], abs=1e-12)
    assert got["sigma"] == pytest.approx(want["sigma"], rel=1e-9)
    assert got["stock_return"] == pytest.approx(want["r"], abs=1e-14)
    assert got["market_return"] == pytest.approx(want["mr"], abs=1e-14)
    assert got["z"] == pytest.approx(want["z"], rel=1e-8)
    assert got["label"] == want["label"] and pd.isna(got["reason"])
    sessions = market.index
    assert got["label_date"] == sessions[sessions.get_loc(pd.Timestamp(day)) + h]
    assert got["prediction_day"] == sessions[sessions.get_loc(pd.Timestamp(day)) + 1]


def test_msft_earnings_after_close_is_a_positive_1d_residual(labels):
    # MSFT reported after the close of 2014-01-23 ("earnings beat ... +3% after hours"): the 1D
    # residual from the 01-23 close to the 01-24 close is positive and larger than one sigma
    row = _row(labels, "MSFT", "2014-01-23", 1)
    assert row["stock_return"] > 0 > row["market_return"]
    assert row["label"] == 1 and row["z"] > 1


def test_fewer_than_120_observations_is_excluded_with_a_reason(labels, market):
    sessions = market.index
    first = sessions.get_loc(pd.Timestamp("2014-09-19"))  # BABA's first price
    for h in (1, 3, 5):
        # valid overlapping h-day returns end at first+h .. D-20: n = D - 20 - first - h + 1
        edge = first + h + 139
        inside = _row(labels, "BABA", str(sessions[edge].date()), h)
        outside = _row(labels, "BABA", str(sessions[edge - 1].date()), h)
        assert inside["n_obs"] == 120 and pd.notna(inside["label"]) and pd.isna(inside["reason"])
        assert outside["n_obs"] == 119 and pd.isna(outside["label"])
        assert outside["reason"] == mm.REASON_INSUFFICIENT and np.isnan(outside["z"])
    # nothing is dropped: every BABA session x horizon has a row, labelled or with a reason
    baba = labels[labels.ticker == "BABA"]
    assert len(baba) == 3 * len(market)
    assert (baba["label"].notna() ^ baba["reason"].notna()).all()


def test_min_observations_is_a_parameter(panel, market):
    sessions = market.index
    first = sessions.get_loc(pd.Timestamp("2014-09-19"))
    strict = mm.residual_labels(panel, market, mm.MarketModelConfig(min_observations=200))
    assert _row(strict, "BABA", str(sessions[first + 1 + 139].date()), 1)["reason"] == mm.REASON_INSUFFICIENT
    assert pd.notna(_row(strict, "BABA", str(sessions[first + 1 + 219].date()), 1)["label"])


def test_threshold_is_a_parameter(labels, panel, market):
    wide = mm.residual_labels(panel, market, mm.MarketModelConfig(threshold=2.0))
    ok = labels["label"].notna()
    z = labels.loc[ok, "z"]
    assert (labels.loc[ok, "label"] == np.where(z > 1, 1, np.where(z < -1, -1, 0))).all()
    assert (wide.loc[ok, "label"] == np.where(z > 2, 1, np.where(z < -2, -1, 0))).all()
    assert (wide.loc[ok, "label"] != 0).sum() < (labels.loc[ok, "label"] != 0).sum()


def test_not_matured_at_the_end_of_the_data(labels):
    last = labels[(labels.ticker == "MSFT") & (labels.decision_date == pd.Timestamp("2015-12-28"))]
    # 2015-12-28 + 3 sessions = 12-31 (the last row): 1D and 3D mature, 5D does not
    reasons = last.set_index("horizon")["reason"]
    assert reasons.isna().tolist() == [True, True, False] and reasons[5] == mm.REASON_NOT_MATURED
    assert last.set_index("horizon")["label_date"].tolist()[:2] == [
        pd.Timestamp("2015-12-29"),
        pd.Timestamp("2015-12-31"),
    ]


def test_no_look_ahead(panel, market):
    """Prices after the estimation window's end (D - 20) never change the market model at D."""
    day = pd.Timestamp("2015-06-15")
    sessions = market.index
    d = sessions.get_loc(day)
    base = mm.residual_labels(panel, market)
    cols = ["n_obs", "alpha", "beta", "sigma"]

    def fit_at(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[(frame.ticker == "MSFT") & (frame.decision_date == day)].set_index("horizon")[cols]

    for moved in (d + 1, d, d - 19):  # after the decision, at it, and inside the 20-session gap
        changed = panel.copy()
        changed.loc[sessions[moved], "MSFT"] *= 1.25
        market_changed = market.copy()
        market_changed.iloc[moved] *= 0.8
        pd.testing.assert_frame_equal(fit_at(mm.residual_labels(changed, market_changed)), fit_at(base))
    # the forward return does see the day-after price: the label is post-decision by design
    changed = panel.copy()
    changed.loc[sessions[d + 1], "MSFT"] *= 1.25
    after = mm.residual_labels(changed, market)
    assert _row(after, "MSFT", "2015-06-15", 1)["stock_return"] != _row(base, "MSFT", "2015-06-15", 1)["stock_return"]
    # and the window's last price (session D - 20) is used: the test above could fail
    changed = panel.copy()
    changed.loc[sessions[d - 20], "MSFT"] *= 1.25
    assert not fit_at(mm.residual_labels(changed, market)).equals(fit_at(base))


def test_label_anchors_keeps_every_anchor(labels, calendar):
    anchors = pd.DataFrame(
        {
            "ticker": ["MSFT", "XOM", "MSFT", "BABA"],
            "anchor_time": [
                "Thu Jan 23 21:40:19 +0000 2014",
                "2014-01-23T15:00Z",
                "2030-01-02T15:00Z",
                "2014-10-01T15:00Z",
            ],
            "id": [1, 2, 3, 4],
        }
    )
    out = mm.label_anchors(anchors, labels, calendar)
    assert len(out) == 12 and sorted(out["id"].unique()) == [1, 2, 3, 4]
    first = out[(out.id == 1) & (out.horizon == 1)].iloc[0]
    assert first["decision_date"] == pd.Timestamp("2014-01-23") and first["label"] == 1
    assert set(out.loc[out.id == 2, "reason"]) == {mm.REASON_UNKNOWN_TICKER}
    assert set(out.loc[out.id == 3, "reason"]) == {mm.REASON_OUTSIDE_CALENDAR}
    assert set(out.loc[out.id == 4, "reason"]) == {mm.REASON_INSUFFICIENT}  # BABA, 8 sessions after its listing
    assert out.loc[out.id != 1, "label"].isna().all()
    with pytest.raises(KeyError, match="anchor_time"):
        mm.label_anchors(anchors.drop(columns="anchor_time"), labels, calendar)


def test_price_on_a_non_session_is_an_error(panel, market):
    bad = panel.copy()
    bad.loc[pd.Timestamp("2015-07-04"), "MSFT"] = 45.0  # a Saturday, Independence Day
    with pytest.raises(ValueError, match="MSFT has a price on 2015-07-04, which is not a session"):
        mm.residual_labels(bad.sort_index(), market)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(horizons=()),
        dict(horizons=(0,)),
        dict(min_observations=300),
        dict(min_observations=2),
        dict(threshold=0.0),
        dict(gap=-1),
    ],
)
def test_config_validation(kwargs):
    with pytest.raises(ValueError):
        mm.MarketModelConfig(**kwargs)


def test_sample_files_are_real_copies():
    """The sample's rows are the shared data's rows, unchanged (when the shared data is present)."""
    shared = Path(__file__).resolve().parents[2] / "shared" / "data" / "market" / "prices" / "MSFT.csv"
    if not shared.exists():
        shared = Path("/work/shared/data/market/prices/MSFT.csv")
    if not shared.exists():
        pytest.skip("../shared/data is not present on this machine")
    full = set(shared.read_text().splitlines())
    assert set((DATA / "prices" / "MSFT.csv").read_text().splitlines()) <= full
