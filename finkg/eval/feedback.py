"""``finkg eval feedback``: the prequential market-feedback evaluation on real tweets and prices (seed 000).

Source: ../shared/seeds/000_79d55a8598b40f79.txt, sections 3.1-3.5 (framework, frozen reader, point-in-time
evidence, labels, source memory), 4.1-4.4 (protocol, event-level metrics, validity checks, the fixed
portfolio) and Appendix B (anchor, context, card, prompt). Data: ../shared/data/market (stocknet-dataset
tweets of MSFT, JPM, XOM and GE, 2014-2015; daily prices; the S&P 500 as the market proxy).

**Anchors.** Tweets of news-outlet accounts (``source_family = news``, :mod:`ingest.text.tweets`) about a ticker
of the universe, in ``[start, end]``; a tweet about two tickers of the universe is an anchor of each
(``<chunk id>@<TICKER>``). Within one ticker and prediction day, anchors whose normalized text repeats an
earlier one are dropped (retweets of one headline; the paper deduplicates its news before building
anchors). **Sampling** (``max_anchors_per_day``, to make a CPU run feasible): at most N anchors per ticker
and prediction day, chosen by a seeded hash of the anchor id (not by time of day, so early and late news are
kept alike); ``limit`` then keeps the first anchors in decision-time order. Both are recorded in the
manifest.

**Evidence.** Every tweet (news and social families) in the graph (``finkg ingest text``, done here when
``ingest`` is on; idempotent). Per anchor: :func:`retrieval.text.point_in_time.load_candidates` (only chunks
available by the decision time leave the database) and :func:`retrieval.text.point_in_time.prepare_evidence`
(future, anchor, URL, title and near-duplicate removal, then scoring, then the K = 20 pool with the 20% peer
cap), scored by :class:`retrieval.text.hybrid.HybridIndex` over exactly the eligible candidates: BM25 and MiniLM
cosine, each min-max normalized within the pool, equal weights (``[feedback] alpha`` = 0.5). SEC filing
passages are not used: the filings in finkg's data are not of 2014-2015 (see the README).

**Decision time.** The close-to-close assignment of :class:`generation.feedback.market_model.TradingCalendar`; the
evidence cut-off (and the memory's as-of time) is the later of the anchor's time and the decision session's
16:00 New York close: a regular-hours anchor is decided after the close, an after-hours, weekend or
pre-market anchor at its own time (before the next session opens), never with anything published after it.
The market-context card (:mod:`generation.feedback.market_context`) uses data through the decision close.

**Conditions** (section 4.2-4.3), each a run of its own (``<run>.<condition>``; memory cells, feedback and
selections are keyed by it): ``no-memory`` (static relevance), ``memory`` (equation 6),
``shuffled-label-<s>`` and ``shuffled-event-type-<s>`` for seeds s = 1..``shuffles``. For each anchor in
decision-time order, each condition applies the feedback matured by the decision time
(:meth:`retrieval.memory.source_memory.SourceMemory.apply_matured`), ranks the pool (top k = 5), stores the
selection, calls the frozen reader (:mod:`generation.feedback.reader`; identical contexts are answered by the LLM
disk cache), and records one feedback event per horizon with a label, maturing at the close of the
horizon's label session. Feedback is only applied to later anchors (prequential).

**Class weights.** p_val(y | h) of section 3.5 comes from a validation period that precedes the test
period: the residual labels of the universe's ticker-days decided in the 252 sessions before ``start``
whose labels matured before ``start`` (the paper uses its 2020 validation split). With fewer than 30
labels per horizon or an empty class, the paper's Table 1 validation shares are used (the manifest says
which).

**Resumable.** One JSONL file per condition run in ``out/predictions/``; a rerun skips anchors that every
requested condition has done (no retrieval, no LLM call) and does the missing conditions of the others
(their memory state is in Neo4j). ``redo`` starts the run again (files, memory and selections deleted).

**Metrics** (:func:`summarize`): per condition macro-F1 (all horizons pooled, and per horizon), non-neutral
F1, Rank IC of the 3D stock-day signal against the realized 3D residual return (daily Spearman across
tickers, averaged; needs two or more tickers), the reader's citation rate (answers citing at least one valid
id) and failure rate; shuffled controls as mean and sample standard deviation over their seeds. The fixed
portfolio (top-K long-only 3-day sleeves of the 3D stock-day score, ties by the context's mean static
relevance, 10 bps on one-way turnover) for each condition, the equal-weight universe and the market proxy.
The future-document audit of every stored selection of the run (must be 0.00%).
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from finkg import plots
from finkg.config import Settings
from finkg.eval import checkpoint
from finkg.eval import feedback_metrics as fm
from finkg.eval.checkpoint import ItemLog
from finkg.eval.results import write_result
from finkg.pipelines.text import TextIngestOptions, ingest_text
from generation.feedback.events import EVENT_TYPES, event_type
from generation.feedback.market_context import MarketContext
from generation.feedback.market_model import (
    EASTERN,
    REGULAR_CLOSE,
    MarketModelConfig,
    TradingCalendar,
    adj_close_panel,
    label_anchors,
    load_market_proxy,
    residual_labels,
)
from generation.feedback.reader import EventAnchor, EvidenceItem, FrozenReader, ReaderAnswer
from kg import BatchWriter, Graph, cypher
from kg.errors import EvaluationError
from kg.progress import StageProgress
from retrieval.embeddings import Embedder
from retrieval.memory.source_memory import (
    HORIZONS,
    Feedback,
    MemoryControl,
    MemoryParams,
    SourceMemory,
    rank_evidence,
)
from retrieval.text.hybrid import HybridIndex
from retrieval.text.point_in_time import (
    Anchor,
    EvidencePool,
    EvidenceSelection,
    SelectedEvidence,
    audit_evidence,
    delete_selections,
    load_candidates,
    load_sectors,
    normalize_text,
    prepare_evidence,
    store_selections,
    utc_text,
)

CONDITIONS = ("no-memory", "memory", "shuffled-label", "shuffled-event-type")
"""The compared variants (seed 000, Tables 2-3; the frozen reader throughout)."""
PAPER_VALIDATION_SHARES = {
    "1D": {1: 0.184, 0: 0.637, -1: 0.179},
    "3D": {1: 0.192, 0: 0.615, -1: 0.193},
    "5D": {1: 0.207, 0: 0.586, -1: 0.207},
}
"""Seed 000, Table 1, the Validation row (+1 / 0 / -1), the fallback class shares."""
MIN_VALIDATION_LABELS = 30
VALIDATION_SESSIONS = 252


class FeedbackEvalError(EvaluationError):
    """The evaluation cannot run as asked; the message names the path, option or field."""


# --------------------------------------------------------------------------- options and conditions


@dataclass
class FeedbackOptions:
    """One evaluation.

    Attributes:
        tweets: folder of ``<TICKER>/<date>`` tweet files; prices: folder of ``<TICKER>.csv``; market: the
            market proxy's price file.
        tickers: the universe; start, end: the anchors' dates (inclusive, UTC dates of the tweets).
        out: output folder; run: the run id prefix (letters, digits, ``-``, ``_``).
        conditions: a subset of :data:`CONDITIONS`; shuffles: seeds per shuffled control.
        limit: most anchors (first in decision-time order); max_anchors_per_day: sampling (module doc);
            sample_seed: its seed.
        ingest: load the tweets into the graph first (idempotent); redo: start the run again.
    """

    tweets: Path
    prices: Path
    market: Path
    tickers: tuple[str, ...]
    start: date
    end: date
    out: Path
    run: str = "feedback"
    conditions: tuple[str, ...] = CONDITIONS
    shuffles: int = 5
    limit: int | None = None
    max_anchors_per_day: int | None = None
    sample_seed: int = 0
    ingest: bool = True
    redo: bool = False

    def check(self) -> None:
        """Raises FeedbackEvalError for a bad option (naming it) or a missing input path (naming it)."""
        if not self.run or not all(ch.isalnum() or ch in "-_" for ch in self.run):
            raise FeedbackEvalError(f"--run {self.run!r}: use letters, digits, '-' and '_'")
        unknown = [c for c in self.conditions if c not in CONDITIONS]
        if unknown or not self.conditions:
            raise FeedbackEvalError(f"--conditions {','.join(self.conditions)!r}: choose from {', '.join(CONDITIONS)}")
        if self.end < self.start:
            raise FeedbackEvalError(f"--end {self.end} is before --start {self.start}")
        if not self.tickers:
            raise FeedbackEvalError("--tickers: give at least one ticker")
        if not self.tweets.is_dir():
            raise FeedbackEvalError(f"{self.tweets}: tweets folder not found (expected <TICKER>/<date> files)")
        if not self.prices.is_dir():
            raise FeedbackEvalError(f"{self.prices}: prices folder not found (expected <TICKER>.csv files)")
        if not self.market.is_file():
            raise FeedbackEvalError(f"{self.market}: market proxy price file not found")
        for t in self.tickers:
            if not (self.prices / f"{t}.csv").is_file():
                raise FeedbackEvalError(f"unknown ticker {t!r}: no price file {self.prices / f'{t}.csv'}")
            if not (self.tweets / t).is_dir():
                raise FeedbackEvalError(f"unknown ticker {t!r}: no tweets folder {self.tweets / t}")


@dataclass(frozen=True)
class ConditionRun:
    """One condition run: ``name`` (``memory``, ``shuffled-label-3``), its condition, seed and run id."""

    name: str
    condition: str
    seed: int
    run_id: str

    def control(self) -> MemoryControl:
        """The memory control of this run (``none`` for the method)."""
        kind = {"shuffled-label": "shuffled_label", "shuffled-event-type": "shuffled_event_type"}.get(
            self.condition, "none"
        )
        return MemoryControl(kind, self.seed, EVENT_TYPES)  # type: ignore[arg-type]


def condition_runs(run: str, conditions: Sequence[str], shuffles: int) -> list[ConditionRun]:
    """The condition runs of an evaluation, in :data:`CONDITIONS` order (shuffled controls: seeds 1..shuffles)."""
    out = []
    for c in CONDITIONS:
        if c not in conditions:
            continue
        if c.startswith("shuffled"):
            out += [ConditionRun(f"{c}-{s}", c, s, f"{run}.{c}-{s}") for s in range(1, shuffles + 1)]
        else:
            out.append(ConditionRun(c, c, 0, f"{run}.{c}"))
    return out


# --------------------------------------------------------------------------- market data and anchors


@dataclass
class MarketData:
    """Prices, calendar, residual labels and context cards of the universe."""

    panel: pd.DataFrame
    market: pd.Series
    calendar: TradingCalendar
    labels: pd.DataFrame
    context: MarketContext


def load_market(options: FeedbackOptions, config: MarketModelConfig | None = None) -> MarketData:
    """Read the prices of the universe and the proxy, and build the residual labels (section 3.4).

    Raises:
        MarketDataError: a missing or bad price file (names the file and line).
    """
    context = MarketContext.from_files(options.prices, options.tickers, options.market)
    panel = adj_close_panel(context.frames)  # the cards' frames: each ticker's file is read once
    market = load_market_proxy(options.market)
    calendar = TradingCalendar.from_series(market)
    labels = residual_labels(panel, market, config, calendar)
    return MarketData(panel, market, calendar, labels, context)


def close_instant(day: pd.Timestamp) -> datetime:
    """The 16:00 New York close of session ``day`` as an aware UTC datetime."""
    local = datetime.combine(pd.Timestamp(day).date(), REGULAR_CLOSE, tzinfo=EASTERN)
    return local.astimezone(UTC)


def validation_shares(
    labels: pd.DataFrame, calendar: TradingCalendar, start: date
) -> tuple[dict[str, dict[int, float]], str]:
    """p_val(y | h): label shares of the ticker-days decided in the :data:`VALIDATION_SESSIONS` sessions before
    ``start`` whose labels matured before it; the paper's Table 1 shares when too few (module doc).

    Returns:
        ``(shares per horizon, source description)``.
    """
    first = pd.Timestamp(start)
    before = calendar.sessions[calendar.sessions < first]
    if len(before) == 0:
        return PAPER_VALIDATION_SHARES, "seed 000 Table 1 (no session before the start)"
    window_start = before[max(0, len(before) - VALIDATION_SESSIONS)]
    rows = labels[(labels["decision_date"] >= window_start) & (labels["label_date"] < first) & labels["label"].notna()]
    shares: dict[str, dict[int, float]] = {}
    for h in sorted(labels["horizon"].unique()):
        y = rows.loc[rows["horizon"] == h, "label"].astype(int)
        counts = {v: int((y == v).sum()) for v in (-1, 0, 1)}
        if len(y) < MIN_VALIDATION_LABELS or min(counts.values()) == 0:
            return PAPER_VALIDATION_SHARES, f"seed 000 Table 1 (only {len(y)} validation labels at {h}D)"
        shares[f"{int(h)}D"] = {v: counts[v] / len(y) for v in (-1, 0, 1)}
    return shares, f"residual labels of {window_start.date()}..{before[-1].date()} (ticker-days)"


@dataclass
class AnchorRow:
    """One anchor with its decision assignment and labels (one per horizon)."""

    id: str
    chunk_id: str
    document_id: str
    ticker: str
    text: str
    url: str | None
    event_time: str
    local_time: pd.Timestamp
    phase: str
    decision_date: pd.Timestamp
    prediction_day: pd.Timestamp
    decision_time: datetime
    event_type: str
    labels: dict[str, int | None]
    residuals: dict[str, float | None]
    matured_at: dict[str, str | None]
    reasons: dict[str, str | None]

    def anchor(self) -> Anchor:
        """The point-in-time anchor (evidence cut-off: the decision time)."""
        return Anchor(
            id=self.id,
            ticker=self.ticker,
            event_time=self.event_time,
            text=self.text,
            url=self.url,
            document_id=self.document_id,
            decision_time=self.decision_time,
        )

    def event_anchor(self) -> EventAnchor:
        """The reader's view (Appendix B's A0)."""
        when = f"{self.local_time.strftime('%Y-%m-%d %H:%M')} New York ({self.phase.replace('_', ' ')})"
        return EventAnchor(self.ticker, self.text, when, str(self.prediction_day.date()), self.event_type)


@dataclass
class AnchorSet:
    """The anchors of a run and what was dropped on the way (counts for the manifest)."""

    anchors: list[AnchorRow]
    found: int = 0
    duplicates: int = 0
    unassigned: int = 0
    sampled_out: int = 0
    limited_out: int = 0

    def counts(self) -> dict[str, int]:
        """The counts as a dict."""
        return {
            "found": self.found,
            "duplicates_dropped": self.duplicates,
            "outside_calendar": self.unassigned,
            "sampled_out": self.sampled_out,
            "beyond_limit": self.limited_out,
            "anchors": len(self.anchors),
        }


def _sample_key(seed: int, anchor_id: str) -> str:
    return hashlib.sha256(f"{seed}|{anchor_id}".encode()).hexdigest()


def load_anchors(graph: Graph, options: FeedbackOptions, market: MarketData) -> AnchorSet:
    """The run's anchors in decision-time order, labelled (section 3.4), deduplicated and sampled (module doc)."""
    end = datetime.combine(options.end, datetime.min.time(), tzinfo=UTC) + pd.Timedelta(days=1)
    start = datetime.combine(options.start, datetime.min.time(), tzinfo=UTC)
    rows = graph.read(
        cypher.FEEDBACK_ANCHORS,
        {
            "doc_type": "tweet",
            "families": ["news"],
            "start": utc_text(start),
            "end": utc_text(end),
            "tickers": list(options.tickers),
        },
    )
    flat = [{**r, "ticker": t} for r in rows for t in sorted(r["tickers"])]
    result = AnchorSet([], found=len(flat))
    if not flat:
        return result
    frame = pd.DataFrame(flat)
    frame["anchor_time"] = pd.to_datetime(frame["available_at"], utc=True)
    labelled = label_anchors(frame, market.labels, market.calendar)
    keep: dict[tuple[str, pd.Timestamp], list[AnchorRow]] = defaultdict(list)
    seen: set[tuple[str, pd.Timestamp, str]] = set()
    for _, group in labelled.groupby(["id", "ticker"], sort=False):
        first = group.iloc[0]
        if pd.isna(first["decision_date"]):
            result.unassigned += 1
            continue
        dedupe = (first["ticker"], first["prediction_day"], normalize_text(first["text"]))
        if dedupe in seen:
            result.duplicates += 1
            continue
        seen.add(dedupe)
        by_h = {f"{int(r['horizon'])}D": r for _, r in group.iterrows()}
        moment = max(first["anchor_time"].to_pydatetime(), close_instant(first["decision_date"]))
        row = AnchorRow(
            id=f"{first['id']}@{first['ticker']}",
            chunk_id=first["id"],
            document_id=first["document_id"],
            ticker=first["ticker"],
            text=first["text"],
            url=first["url"] if isinstance(first["url"], str) else None,
            event_time=first["available_at"],
            local_time=first["local_time"],
            phase=str(first["phase"]),
            decision_date=first["decision_date"],
            prediction_day=first["prediction_day"],
            decision_time=moment,
            event_type=event_type(first["text"]),
            labels={h: (None if pd.isna(r["label"]) else int(r["label"])) for h, r in by_h.items()},
            residuals={h: (None if pd.isna(r["residual"]) else float(r["residual"])) for h, r in by_h.items()},
            matured_at={
                h: (None if pd.isna(r["label_date"]) else utc_text(close_instant(r["label_date"])))
                for h, r in by_h.items()
            },
            reasons={h: (None if pd.isna(r["reason"]) else str(r["reason"])) for h, r in by_h.items()},
        )
        keep[(row.ticker, row.prediction_day)].append(row)
    anchors: list[AnchorRow] = []
    for group_rows in keep.values():
        if options.max_anchors_per_day is not None and len(group_rows) > options.max_anchors_per_day:
            chosen = sorted(group_rows, key=lambda a: _sample_key(options.sample_seed, a.id))
            result.sampled_out += len(group_rows) - options.max_anchors_per_day
            group_rows = chosen[: options.max_anchors_per_day]
        anchors += group_rows
    anchors.sort(key=lambda a: (a.decision_time, a.event_time, a.id))
    if options.limit is not None and len(anchors) > options.limit:
        result.limited_out = len(anchors) - options.limit
        anchors = anchors[: options.limit]
    result.anchors = anchors
    return result


# --------------------------------------------------------------------------- the loop


def hybrid_scorer(index: HybridIndex, alpha: float) -> Callable[[Anchor, Sequence[Any]], list[float]]:
    """Static relevance of the eligible candidates of an anchor (seed 000, 3.3): the hybrid index's BM25 and
    cosine over exactly those chunks (pool statistics), min-max normalized within them, ``alpha * dense +
    (1 - alpha) * BM25``.

    Raises:
        FeedbackEvalError: an eligible candidate is not in the index (the index is older than the graph).
    """

    def score(anchor: Anchor, eligible: Sequence[Any]) -> list[float]:
        if not eligible:
            return []
        rows = index.pool(as_of=anchor.as_of, chunk_ids=[c.id for c in eligible])
        pool = index.score_pool(anchor.text, rows)
        fused = pool.fused(alpha, "minmax")
        by_id = {index.passages[int(r)].id: float(s) for r, s in zip(rows, fused)}
        missing = [c.id for c in eligible if c.id not in by_id]
        if missing:
            raise FeedbackEvalError(f"candidate chunk {missing[0]} is not in the hybrid index (rebuild it)")
        return [by_id[c.id] for c in eligible]

    return score


@dataclass
class RunSummary:
    """Totals of one :func:`run_evaluation` call."""

    anchors: int = 0
    done: int = 0
    skipped: int = 0
    records: int = 0
    reader_calls: int = 0
    cache_hits: int = 0
    failed_answers: int = 0
    completion_tokens: int = 0
    prompt_tokens: int = 0
    seconds: float = 0.0
    seconds_retrieval: float = 0.0
    seconds_memory: float = 0.0
    seconds_reader: float = 0.0
    anchor_counts: dict[str, int] = field(default_factory=dict)
    validation: str = ""

    def rows(self) -> list[dict[str, Any]]:
        """The closing table."""
        per = self.done or 1
        values = {
            "anchors (after dedup, sampling, limit)": self.anchors,
            "anchors evaluated now": self.done,
            "anchors skipped (already done)": self.skipped,
            "prediction records written": self.records,
            "LLM calls / cache hits": f"{self.reader_calls} / {self.cache_hits}",
            "reader answers failed (recorded)": self.failed_answers,
            "tokens (prompt / completion, backend)": f"{self.prompt_tokens} / {self.completion_tokens}",
            "seconds": f"{self.seconds:.1f}",
            "per anchor: retrieval / memory / reader s": f"{self.seconds_retrieval / per:.3f} / "
            f"{self.seconds_memory / per:.3f} / {self.seconds_reader / per:.2f}",
            "class shares p_val from": self.validation,
        }
        return [{"measure": k, "value": v} for k, v in values.items()]


def _predictions_dir(out: Path) -> Path:
    return out / "predictions"


def predictions_path(out: Path, cr: ConditionRun) -> Path:
    """``out/predictions/<condition run>.jsonl``."""
    return _predictions_dir(out) / f"{cr.name}.jsonl"


def prediction_log(path: Path) -> ItemLog:
    """The :class:`finkg.eval.checkpoint.ItemLog` of one condition run's predictions file."""
    return ItemLog(path, "a prediction record", FeedbackEvalError)


def read_records(path: Path) -> list[dict[str, Any]]:
    """The prediction records of one condition file (a cut-off last line, from an interrupted run, is skipped).

    Raises:
        FeedbackEvalError: a malformed line before the last, naming the file and line.
    """
    return prediction_log(path).read()


def _manifest(
    options: FeedbackOptions,
    crs: Sequence[ConditionRun],
    anchors: AnchorSet,
    shares: dict,
    source: str,
    settings: Settings,
    model_id: str,
    embedder: str,
) -> dict[str, Any]:
    return {
        "run": options.run,
        "tickers": list(options.tickers),
        "start": str(options.start),
        "end": str(options.end),
        "limit": options.limit,
        "max_anchors_per_day": options.max_anchors_per_day,
        "sample_seed": options.sample_seed,
        "conditions": [c.name for c in crs],
        "tweets": str(options.tweets),
        "prices": str(options.prices),
        "market": str(options.market),
        "anchor_counts": anchors.counts(),
        "validation_shares": {h: {str(k): v for k, v in d.items()} for h, d in shares.items()},
        "validation_source": source,
        "model_id": model_id,
        "embedder": embedder,
        "alpha": settings.feedback.alpha,
        "pool_size": settings.memory.pool_size,
        "peer_share": settings.memory.peer_share,
        "top_k": settings.memory.top_k,
        "kappa": settings.memory.kappa,
        "clip": settings.memory.clip,
        "lambda": settings.memory.lambda_,
        "reader_max_tokens": settings.feedback.reader_max_tokens,
    }


def _check_manifest(out: Path, options: FeedbackOptions, model_id: str, embedder: str) -> None:
    """A folder's predictions are resumed only by the same run, reader model and embedder (``--redo`` starts over).

    Raises:
        FeedbackEvalError: the folder's manifest names another run, model or embedder.
    """
    if options.redo:
        return
    fields = {"run": options.run, "model_id": model_id, "embedder": embedder}
    checkpoint.check_manifest(
        out, fields, list(fields), "use another --out, the same --run and models, or --redo", FeedbackEvalError
    )


def reset_run(graph: Graph, options: FeedbackOptions, crs: Sequence[ConditionRun], shares: dict) -> None:
    """Delete the run's prediction files, memory cells and feedback, and stored selections."""
    for cr in crs:
        predictions_path(options.out, cr).unlink(missing_ok=True)
        SourceMemory(graph, cr.run_id, shares).reset()
        delete_selections(graph, cr.run_id)


def run_evaluation(
    graph: Graph,
    settings: Settings,
    options: FeedbackOptions,
    reader: FrozenReader,
    embedder: Embedder,
    progress: StageProgress | None = None,
    market: MarketData | None = None,
    on_pending: Callable[[int, int], object] | None = None,
) -> RunSummary:
    """The prequential loop of the module docstring; writes ``out/predictions/*.jsonl`` and ``out/manifest.json``.

    ``on_pending(answers, anchors)``: called once the anchors still to do are known (after the tweets are loaded
    with ``options.ingest``, which makes no LLM call), with the reader answers they need (one per anchor and
    condition run not yet recorded) and their number, before the run's folder, manifest, memory or the first
    reader call is written or made (``--redo``'s reset included); it may raise to stop the run
    (:class:`finkg.cost.BatchCost`). Not called when nothing is left to do.

    Raises:
        FeedbackEvalError: a bad option or input path (named). MarketDataError: a bad price file.
        LLMUnavailable, BudgetExceeded: from the reader (what is written stays; a rerun resumes).
    """
    t_start = time.perf_counter()
    options.check()
    _check_manifest(options.out, options, reader.client.model_id, embedder.identity)
    if options.ingest:
        ingest_text(graph, settings, [options.tweets], TextIngestOptions(kind="tweets"), progress=progress)
    market = market or load_market(options)
    shares, source = validation_shares(market.labels, market.calendar, options.start)
    crs = condition_runs(options.run, options.conditions, options.shuffles)
    anchors = load_anchors(graph, options, market)
    done = {
        cr.name: set() if options.redo else {r["anchor_id"] for r in read_records(predictions_path(options.out, cr))}
        for cr in crs
    }
    todo = [a for a in anchors.anchors if any(a.id not in done[cr.name] for cr in crs)]
    if on_pending is not None and todo:
        on_pending(sum(a.id not in done[cr.name] for a in todo for cr in crs), len(todo))
    options.out.mkdir(parents=True, exist_ok=True)
    _predictions_dir(options.out).mkdir(exist_ok=True)
    if options.redo:
        reset_run(graph, options, crs, shares)
    summary = RunSummary(anchors=len(anchors.anchors), anchor_counts=anchors.counts(), validation=source)
    checkpoint.write_manifest(
        options.out,
        _manifest(options, crs, anchors, shares, source, settings, reader.client.model_id, embedder.identity),
    )
    summary.skipped = len(anchors.anchors) - len(todo)
    if not todo:
        summary.seconds = time.perf_counter() - t_start
        return summary
    index = HybridIndex.from_graph(
        graph, embedder, kinds=("text",), progress=progress("embed chunks", 0) if progress else None
    )
    scorer = hybrid_scorer(index, settings.feedback.alpha)
    sectors = load_sectors()
    params = MemoryParams(settings.memory.kappa, settings.memory.clip, settings.memory.lambda_, settings.memory.top_k)
    writer = BatchWriter(graph, batch_size=settings.writer.batch_size)
    memories = {
        cr.name: SourceMemory(graph, cr.run_id, shares, params, cr.control(), writer)
        for cr in crs
        if cr.condition != "no-memory"
    }
    advance = progress("anchors (reader)", len(todo)) if progress else (lambda _n, **_k: None)
    with ExitStack() as stack:
        files = {
            cr.name: stack.enter_context(prediction_log(predictions_path(options.out, cr)).appending())[1] for cr in crs
        }
        for a in todo:
            tokens = _one_anchor(
                graph,
                settings,
                a,
                [cr for cr in crs if a.id not in done[cr.name]],
                memories,
                files,
                reader,
                scorer,
                sectors,
                params,
                market,
                writer,
                summary,
            )
            summary.done += 1
            advance(1, tokens=tokens)
    summary.seconds = time.perf_counter() - t_start
    return summary


def _one_anchor(
    graph: Graph,
    settings: Settings,
    a: AnchorRow,
    crs: Sequence[ConditionRun],
    memories: dict[str, SourceMemory],
    files: dict[str, Callable[[Mapping[str, Any]], None]],
    reader: FrozenReader,
    scorer: Callable,
    sectors: dict[str, str],
    params: MemoryParams,
    market: MarketData,
    writer: BatchWriter,
    summary: RunSummary,
) -> int:
    """Retrieval once, then per condition: matured feedback, ranking, selection, reader, feedback, record."""
    t0 = time.perf_counter()
    anchor = a.anchor()
    pool: EvidencePool = prepare_evidence(
        anchor,
        load_candidates(graph, anchor, sectors),
        sectors,
        scorer,
        settings.memory.pool_size,
        settings.memory.peer_share,
        settings.memory.near_duplicate_threshold,
    )
    card = market.context.card(a.ticker, a.decision_date).render()
    t_retrieval = time.perf_counter() - t0
    family = {c.id: c.source_family for c in pool.candidates}
    text = {c.id: c.text for c in pool.candidates}
    contexts = {}
    t1 = time.perf_counter()
    for cr in crs:
        memory = memories.get(cr.name)
        if memory is None:
            ranked = rank_evidence(pool.candidates, {}, a.event_type, params)
        else:
            memory.apply_matured(a.decision_time)
            ranked = memory.rank(pool.candidates, a.event_type)
        contexts[cr.name] = ranked
    store_selections(
        writer,
        [
            EvidenceSelection(
                cr.run_id, pool, tuple(SelectedEvidence(r.id, r.rank, r.score, r.relevance) for r in contexts[cr.name])
            )
            for cr in crs
        ],
    )
    t_memory = time.perf_counter() - t1
    summary.seconds_retrieval += t_retrieval
    summary.seconds_memory += t_memory
    tokens = 0
    for cr in crs:
        ranked = contexts[cr.name]
        evidence = [EvidenceItem(r.id, r.source_family, text[r.id]) for r in ranked]
        answer: ReaderAnswer = reader.read(a.event_anchor(), evidence, card)
        summary.seconds_reader += answer.seconds
        if answer.cached:
            summary.cache_hits += 1
        else:
            summary.reader_calls += 1
            summary.prompt_tokens += answer.prompt_tokens
            summary.completion_tokens += answer.completion_tokens
            tokens += answer.completion_tokens
        summary.failed_answers += not answer.ok
        memory = memories.get(cr.name)
        if memory is not None and answer.ok:
            retrieved = {r.id: family[r.id] for r in ranked}
            memory.record(
                [
                    Feedback(
                        a.id,
                        a.event_type,
                        h,
                        answer.predictions[h],
                        label,
                        matured,
                        answer.cited_ids,
                        retrieved,
                    )
                    for h in HORIZONS
                    if (label := a.labels.get(h)) is not None and (matured := a.matured_at.get(h))
                ]
            )
        record = {
            "anchor_id": a.id,
            "chunk_id": a.chunk_id,
            "ticker": a.ticker,
            "text": a.text,
            "event_time": a.event_time,
            "phase": a.phase,
            "decision_time": utc_text(a.decision_time),
            "decision_date": str(a.decision_date.date()),
            "prediction_day": str(a.prediction_day.date()),
            "event_type": a.event_type,
            "condition": cr.condition,
            "condition_run": cr.name,
            "run": cr.run_id,
            "labels": a.labels,
            "residuals": a.residuals,
            "label_reasons": a.reasons,
            "matured_at": a.matured_at,
            "pool": len(pool.candidates),
            "removed": {k: v for k, v in pool.removed.items() if v},
            "context": [
                {
                    "id": r.id,
                    "family": r.source_family,
                    "rank": r.rank,
                    "relevance": round(r.relevance, 6),
                    "score": round(r.score, 6),
                }
                for r in ranked
            ],
            "relevance_mean": (sum(r.relevance for r in ranked) / len(ranked)) if ranked else 0.0,
            "status": answer.status,
            "predictions": answer.predictions,
            "cited_ids": answer.cited_ids,
            "cited_families": sorted({family[i] for i in answer.cited_ids}),
            "invalid_ids": answer.invalid_ids,
            "reason": answer.reason,
            "error": answer.error,
            "raw": answer.raw if not answer.ok else "",
            "prompt_tokens": answer.prompt_tokens,
            "completion_tokens": answer.completion_tokens,
            "cached": answer.cached,
            "repaired": answer.repaired,
            "seconds_retrieval": round(t_retrieval, 4),
            "seconds_memory": round(t_memory / max(len(crs), 1), 4),
            "seconds_reader": round(answer.seconds, 3),
        }
        files[cr.name](record)
        summary.records += 1
    return tokens


# --------------------------------------------------------------------------- metrics


def _frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per (anchor, horizon) with the prediction (NaN when the answer failed) and the label."""
    rows = []
    for r in records:
        for h in HORIZONS:
            rows.append(
                {
                    "anchor_id": r["anchor_id"],
                    "ticker": r["ticker"],
                    "horizon": h,
                    "prediction_day": pd.Timestamp(r["prediction_day"]),
                    "signal": r["predictions"].get(h) if r["status"] == "ok" else np.nan,
                    "label": r["labels"].get(h),
                    "residual": r["residuals"].get(h),
                    "relevance": r["relevance_mean"],
                    "ok": r["status"] == "ok",
                    "cited": bool(r["cited_ids"]),
                }
            )
    return pd.DataFrame(rows)


def event_metrics(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Macro-F1 (pooled and per horizon), non-neutral F1, Rank IC (3D), citation and failure rates of one
    condition run (seed 000, 4.2-4.3). Metrics without data are NaN."""
    out: dict[str, Any] = {"anchors": len(records), "failed": sum(r["status"] != "ok" for r in records)}
    ok = [r for r in records if r["status"] == "ok"]
    out["citation_rate"] = (sum(bool(r["cited_ids"]) for r in ok) / len(ok)) if ok else math.nan
    out["failure_rate"] = out["failed"] / len(records) if records else math.nan
    frame = _frame(records)
    scored = frame[frame["signal"].notna() & frame["label"].notna()] if len(frame) else frame
    out["scored_pairs"] = len(scored)
    nan = math.nan
    out["macro_f1"] = fm.macro_f1(scored["label"].astype(int), scored["signal"].astype(int)) if len(scored) else nan
    out["non_neutral_f1"] = (
        fm.non_neutral_f1(scored["label"].astype(int), scored["signal"].astype(int)) if len(scored) else nan
    )
    for h in HORIZONS:
        part = scored[scored["horizon"] == h] if len(scored) else scored
        out[f"macro_f1_{h}"] = fm.macro_f1(part["label"].astype(int), part["signal"].astype(int)) if len(part) else nan
    out["rank_ic_3d"], out["rank_ic_days"] = nan, 0
    three = frame[(frame["horizon"] == "3D")] if len(frame) else frame
    if len(three) and three["signal"].notna().any():
        days = fm.stock_day_signals(three, also_mean=["residual"])
        if days["residual"].notna().any():
            ic = fm.rank_ic(days, day="prediction_day", signal="score", realized="residual")
            out["rank_ic_3d"], out["rank_ic_days"] = ic.mean, len(ic.daily)
    return out


def _returns(
    market: MarketData, tickers: Sequence[str], first: pd.Timestamp, last: pd.Timestamp
) -> tuple[pd.DataFrame, pd.Series]:
    sessions = market.calendar.sessions
    span = sessions[(sessions >= first) & (sessions <= last)]
    prices = market.panel.reindex(columns=list(tickers))
    returns = prices.pct_change(fill_method=None).reindex(span)
    proxy = market.market.pct_change(fill_method=None).reindex(span)
    return returns, proxy


def portfolio_rows(
    by_run: dict[str, list[dict[str, Any]]],
    market: MarketData,
    tickers: Sequence[str],
    config: fm.PortfolioConfig,
    daily: dict[str, pd.Series] | None = None,
) -> list[dict[str, Any]]:
    """Table-4 rows (section 4.4): market proxy, equal-weight universe, and each condition run's top-K sleeves
    of its 3D stock-day score (ties by the context's mean static relevance, then ticker). ``daily``, when
    given, receives each strategy's daily net returns (for the equity curves)."""
    days = [pd.Timestamp(r["prediction_day"]) for rs in by_run.values() for r in rs]
    if not days:
        return []
    first = min(days)
    sessions = market.calendar.sessions
    after = sessions[sessions >= max(days)]
    last = after[min(config.holding_days - 1, len(after) - 1)] if len(after) else max(days)
    returns, proxy = _returns(market, tickers, first, last)
    if len(returns) < 2:
        return []
    baselines = {
        f"market proxy ({market.market.name})": fm.equal_weight_portfolio(proxy.fillna(0.0), config.cost_bps),
        "equal-weight universe": fm.equal_weight_portfolio(returns, config.cost_bps),
    }
    rows = [fm.performance(name, result) for name, result in baselines.items()]
    if daily is not None:
        daily.update({name: result.daily["net_return"] for name, result in baselines.items()})
    for name, records in by_run.items():
        frame = _frame(records)
        three = frame[(frame["horizon"] == "3D") & frame["signal"].notna()] if len(frame) else frame
        if len(three) == 0:
            rows.append(fm.Performance(name, math.nan, math.nan, math.nan, math.nan, math.nan, 0))
            continue
        scores = fm.stock_day_signals(three, also_mean=["relevance"])
        scores = scores[scores["prediction_day"].isin(returns.index)]
        if scores.empty:
            rows.append(fm.Performance(name, math.nan, math.nan, math.nan, math.nan, math.nan, 0))
            continue
        result = fm.top_k_sleeve_portfolio(scores, returns, config, tiebreak="relevance")
        rows.append(fm.performance(name, result))
        if daily is not None:
            daily[name] = result.daily["net_return"]
    return [
        {
            "strategy": p.name,
            "ann_return": p.annual_return,
            "ann_volatility": p.annual_volatility,
            "sharpe": p.sharpe,
            "max_drawdown": p.max_drawdown,
            "turnover": p.turnover,
            "days": p.days,
        }
        for p in rows
    ]


METRIC_KEYS = (
    "non_neutral_f1",
    "macro_f1",
    "macro_f1_1D",
    "macro_f1_3D",
    "macro_f1_5D",
    "rank_ic_3d",
    "citation_rate",
    "failure_rate",
)


def _mean_sd(values: Sequence[float]) -> tuple[float, float]:
    finite = [v for v in values if v is not None and not math.isnan(v)]
    if not finite:
        return math.nan, math.nan
    return statistics.fmean(finite), (statistics.stdev(finite) if len(finite) > 1 else 0.0)


def condition_table(per_run: dict[str, dict[str, Any]], crs: Sequence[ConditionRun]) -> list[dict[str, Any]]:
    """One row per condition: the metric (shuffled controls: mean and sd over seeds, ``sd_<metric>``)."""
    rows = []
    for condition in CONDITIONS:
        names = [cr.name for cr in crs if cr.condition == condition and cr.name in per_run]
        if not names:
            continue
        row: dict[str, Any] = {
            "condition": condition,
            "runs": len(names),
            "anchors": per_run[names[0]]["anchors"],
            "scored_pairs": per_run[names[0]]["scored_pairs"],
        }
        for k in METRIC_KEYS:
            mean, sd = _mean_sd([per_run[n][k] for n in names])
            row[k] = mean
            if len(names) > 1:
                row[f"sd_{k}"] = sd
        rows.append(row)
    return rows


def summarize(
    graph: Graph,
    options: FeedbackOptions,
    settings: Settings,
    market: MarketData | None = None,
    results_dir: Path | None = None,
) -> dict[str, Any]:
    """Metrics, portfolio and audit of the run in ``options.out``; writes ``metrics.json``,
    ``event_metrics.csv``, ``event_metrics_by_run.csv``, ``portfolio.csv``, ``audit.csv``, the daily net returns
    of every portfolio (``equity_daily_returns.csv``) and their equity curves (``equity.png``) there, and the
    summary in the one results format (:mod:`finkg.eval.results`) as ``eval-feedback.json`` in
    ``results_dir`` (e.g. ``bench/results``), else in ``options.out``.
    Conditions are compared on the anchors every condition run has done (``anchors``); records of an
    anchor some run has not done yet are left out of the metrics (``records_not_compared``).

    Raises:
        FeedbackEvalError: no prediction records in ``options.out``.
    """
    crs = condition_runs(options.run, options.conditions, options.shuffles)
    by_run = {cr.name: read_records(predictions_path(options.out, cr)) for cr in crs}
    by_run = {k: v for k, v in by_run.items() if v}
    if not by_run:
        raise FeedbackEvalError(f"{_predictions_dir(options.out)}: no prediction records (run the evaluation first)")
    # conditions are compared on the same anchors: those every condition run has done (an interrupted run
    # can stop between the condition runs of one anchor)
    common = set.intersection(*({r["anchor_id"] for r in records} for records in by_run.values()))
    partial = sum(len(records) for records in by_run.values())
    by_run = {k: [r for r in records if r["anchor_id"] in common] for k, records in by_run.items()}
    partial -= sum(len(records) for records in by_run.values())
    market = market or load_market(options)
    per_run = {name: event_metrics(records) for name, records in by_run.items()}
    table = condition_table(per_run, crs)
    config = fm.PortfolioConfig(settings.feedback.portfolio_top_k, 3, settings.feedback.cost_bps)
    daily: dict[str, pd.Series] = {}
    portfolio = portfolio_rows(by_run, market, options.tickers, config, daily)
    audit_rows = []
    for cr in crs:
        if cr.name not in by_run:
            continue
        a = audit_evidence(graph, cr.run_id, settings.memory.near_duplicate_threshold)
        audit_rows.append(
            {
                "condition_run": cr.name,
                "selections": a.selections,
                "selected": a.selected,
                "future": a.future,
                "future_rate": a.future_rate,
                "near_duplicate": a.near_duplicate,
                "near_duplicate_rate": a.near_duplicate_rate,
            }
        )
    selected = sum(r["selected"] for r in audit_rows)
    future = sum(r["future"] for r in audit_rows)
    near = sum(r["near_duplicate"] for r in audit_rows)
    audit = {
        "selected": selected,
        "future": future,
        "future_rate": future / selected if selected else 0.0,
        "near_duplicate": near,
        "near_duplicate_rate": near / selected if selected else 0.0,
        "runs": audit_rows,
    }
    result = {
        "run": options.run,
        "anchors": len(common),
        "records_not_compared": partial,
        "conditions": table,
        "by_run": per_run,
        "portfolio": portfolio,
        "audit": audit,
        "portfolio_top_k": config.top_k,
        "cost_bps": config.cost_bps,
        "rank_ic": "3D stock-day signal vs realized 3D residual return, daily Spearman across tickers, mean",
    }
    out = options.out
    (out / "metrics.json").write_text(json.dumps(result, indent=1, default=_json_default), encoding="utf-8")
    pd.DataFrame(table).to_csv(out / "event_metrics.csv", index=False)
    pd.DataFrame([{"condition_run": k, **v} for k, v in per_run.items()]).to_csv(
        out / "event_metrics_by_run.csv", index=False
    )
    pd.DataFrame(portfolio).to_csv(out / "portfolio.csv", index=False)
    pd.DataFrame(audit_rows).to_csv(out / "audit.csv", index=False)
    if daily:
        pd.DataFrame(daily).to_csv(out / "equity_daily_returns.csv", index_label="session")
        plots.equity_curves(
            daily,
            out / "equity.png",
            title=f"Market feedback, run {options.run}: top-{config.top_k} portfolios, {config.cost_bps:g} bps costs",
            controls=[cr.name for cr in crs if cr.condition.startswith("shuffled")],
            benchmarks=[name for name in daily if name not in {cr.name for cr in crs}],
        )
    _write_summary(result, options, crs, results_dir or out)
    return result


def _write_summary(result: dict[str, Any], options: FeedbackOptions, crs: Sequence[ConditionRun], out: Path) -> None:
    """``eval-feedback.json``: the condition rows, each with its portfolio Sharpe (shuffled controls: the
    range over seeds, ``sharpe_min`` / ``sharpe_max``), the portfolio and the audit figures."""
    sharpe = {p["strategy"]: p["sharpe"] for p in result["portfolio"]}
    conditions = []
    for row in result["conditions"]:
        values = [sharpe[cr.name] for cr in crs if cr.condition == row["condition"] and cr.name in sharpe]
        values = [v for v in values if not math.isnan(v)]
        extra: dict[str, Any] = {}
        if len(values) == 1:
            extra["sharpe"] = values[0]
        elif values:
            extra["sharpe_min"], extra["sharpe_max"] = min(values), max(values)
        conditions.append({**row, **extra})
    audit = result["audit"]
    write_result(
        "eval-feedback",
        {
            "run": options.run,
            "tickers": list(options.tickers),
            "start": str(options.start),
            "end": str(options.end),
            "conditions": list(options.conditions),
            "shuffles": options.shuffles,
            "portfolio_top_k": result["portfolio_top_k"],
            "cost_bps": result["cost_bps"],
        },
        {
            "anchors": result["anchors"],
            "records_not_compared": result["records_not_compared"],
            "selected_passages": audit["selected"],
            "future_documents": audit["future"],
            "near_duplicates": audit["near_duplicate"],
        },
        tables={"conditions": conditions, "portfolio": result["portfolio"]},
        directory=out,
    )


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    return str(value)


def display_rows(result: dict[str, Any]) -> tuple[list[dict[str, str]], list[dict[str, str]], list[dict[str, str]]]:
    """The three closing tables (event metrics, portfolio, audit) with formatted cells."""

    def f3(row: dict[str, Any], key: str) -> str:
        v = row.get(key)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "n/a"
        sd = row.get(f"sd_{key}")
        return f"{v:.3f}" + (f" ± {sd:.3f}" if sd is not None and not math.isnan(sd) else "")

    events = [
        {
            "condition": r["condition"] + (f" (x{r['runs']})" if r["runs"] > 1 else ""),
            "anchors": str(r["anchors"]),
            "non-neutral F1": f3(r, "non_neutral_f1"),
            "macro-F1": f3(r, "macro_f1"),
            "1D": f3(r, "macro_f1_1D"),
            "3D": f3(r, "macro_f1_3D"),
            "5D": f3(r, "macro_f1_5D"),
            "Rank IC (3D)": f3(r, "rank_ic_3d"),
            "cites >=1 id": f3(r, "citation_rate"),
            "failed": f3(r, "failure_rate"),
        }
        for r in result["conditions"]
    ]

    def pct(v: float) -> str:
        return "n/a" if v is None or math.isnan(v) else f"{100 * v:.1f}%"

    portfolio = [
        {
            "strategy": p["strategy"],
            "ann. return": pct(p["ann_return"]),
            "ann. vol.": pct(p["ann_volatility"]),
            "Sharpe": "n/a" if math.isnan(p["sharpe"]) else f"{p['sharpe']:.2f}",
            "max DD": pct(p["max_drawdown"]),
            "turnover": "n/a" if math.isnan(p["turnover"]) else f"{p['turnover']:.3f}",
            "days": str(p["days"]),
        }
        for p in result["portfolio"]
    ]
    a = result["audit"]
    audit = [
        {
            "metric": "anchors compared (done by every condition run)",
            "value": str(result["anchors"])
            + (
                f" ({result['records_not_compared']} records of unfinished anchors left out)"
                if result["records_not_compared"]
                else ""
            ),
        },
        {"metric": "selected evidence (all condition runs)", "value": str(a["selected"])},
        {"metric": "future documents", "value": f"{a['future']} ({100 * a['future_rate']:.2f}%)"},
        {
            "metric": "near-duplicates of the anchor",
            "value": f"{a['near_duplicate']} ({100 * a['near_duplicate_rate']:.2f}%)",
        },
    ]
    return events, portfolio, audit
