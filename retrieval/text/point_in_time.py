"""Point-in-time evidence preparation for a news-event anchor (seed 000, section 3.3 and Appendix B).

The paper's rules, in the order finkg applies them (a candidate removed is counted once, under the first
reason that applies; :data:`REMOVAL_REASONS` lists them):

1. ``future``: a passage whose availability time is after the anchor's decision time is dropped **before
   anything else**, in particular before any textual scoring (the paper: "future documents are excluded not
   only from the reader input, but also from candidate scoring and reranking"). A passage available at
   exactly the decision time is eligible (``available_at <= decision_time``); one second later it is not.
2. ``anchor``: the anchor itself (same passage id or same document id) is never retrieved evidence.
3. ``exact_url``: a passage that links the same URL as the anchor (its ``url`` or any URL in its text,
   compared after :func:`normalize_url`); for tweets this is the retweet of the anchor's link.
4. ``title_duplicate``: a passage whose title equals the anchor's title after :func:`normalize_text`
   (only when both have a title).
5. ``near_duplicate``: a passage whose text is a near-duplicate of the anchor's: rapidfuzz ``fuzz.ratio``
   (normalized Indel similarity, 0-100) of the two :func:`normalize_text` forms at or above
   :data:`NEAR_DUPLICATE_THRESHOLD` = 90. The normalization lowercases, removes URLs, a leading
   ``RT @user:`` and the trailing ellipsis of a truncated retweet, and collapses whitespace and punctuation,
   so a retweet, a re-post with another short link or a headline with a changed word or two is caught,
   while two different headlines about the same event (ratio typically 40-75) are kept. This is the
   paper's "duplicate-cluster matches" of the anchor, measured pairwise.
6. ``pool_duplicate``: a passage whose normalized text equals that of a passage already kept (the earliest
   available one is kept; ties by id), so seven copies of one retweet take one place, not seven. This is
   finkg's addition; the paper deduplicates its news before building anchors.
7. ``unrelated``: the pool is company-matched; a passage about none of the anchor's ticker and no ticker of
   the anchor's sector (:func:`load_sectors`) is not a candidate.

Then the scorer ranks the eligible passages (the hybrid retriever; never given a removed one) and
:func:`build_pool` keeps at most ``pool_size`` (K = 20 in the paper) of them by score, of which same-sector
peer passages (``peer``: a passage not about the anchor's ticker but about one of its sector) fill at most
``floor(peer_share * K)`` places (peer_share = 0.20: four places when K = 20) and at most ``peer_share`` of
the pool actually built (``peer_cap``; a short pool gets proportionally fewer peers); the rest beyond K are
``pool_size``.

The selected context (the memory-reranked top-k) is stored per anchor and evaluation run as
``(:EvidenceSelection {id: "<run>|<anchor id>", run, anchor_id, ticker, decision_time, anchor_text,
anchor_url, pool, removed_*})-[:SELECTED {rank, score, relevance}]->(:Chunk)`` by
:func:`store_selections`, and :func:`audit_evidence` reads them back and reports the future-document rate
(must be 0.00%) and the near-duplicate-anchor rate of the selected evidence (seed 000, section 4.3).

Times are ISO 8601 UTC, ``YYYY-MM-DDTHH:MM:SSZ`` (what ``Chunk.available_at`` holds), or timezone-aware
:class:`datetime.datetime` values; a naive time is an error.
"""

from __future__ import annotations

import csv
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from kg import BatchWriter, Graph, cypher
from kg.errors import RetrievalError

DATA_DIR = Path(__file__).resolve().parents[2] / "data"
STOCK_TABLE = DATA_DIR / "market" / "StockTable.tsv"
"""Sector of each of the stocknet-dataset's 88 tickers (data/NOTICE.md)."""

NEAR_DUPLICATE_THRESHOLD = 90.0
"""rapidfuzz ``fuzz.ratio`` (0-100) at or above which a passage is a near-duplicate of the anchor."""
POOL_SIZE = 20
"""K, the cached point-in-time candidate pool per anchor (seed 000, section 3.3)."""
PEER_SHARE = 0.20
"""At most this share of the pool is same-sector peer evidence (seed 000, section 3.3)."""

REMOVAL_REASONS = (
    "future",
    "anchor",
    "exact_url",
    "title_duplicate",
    "near_duplicate",
    "pool_duplicate",
    "unrelated",
    "peer_cap",
    "pool_size",
)
"""Why a candidate left the pool, in the order the rules apply (module docstring)."""

ISO_UTC = "%Y-%m-%dT%H:%M:%SZ"
_URL = re.compile(r"https?://\S+", re.IGNORECASE)
_RT = re.compile(r"^rt @\w+:?\s*", re.IGNORECASE)
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
_SPACE = re.compile(r"\s+")


class EvidenceInputError(RetrievalError):
    """A candidate, an anchor or the sector table is malformed; the message names the item and field
    (or the file and line)."""


# --------------------------------------------------------------------------- times, text, URLs


def to_utc(value: str | datetime, what: str = "time") -> datetime:
    """``value`` as an aware UTC datetime (whole seconds kept as given).

    Args:
        value: ``YYYY-MM-DDTHH:MM:SSZ`` (or any ISO 8601 form with an offset) or an aware datetime.
        what: the item and field, for the error message.

    Raises:
        EvidenceInputError: not a time, or a time without a timezone.
    """
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise EvidenceInputError(f"{what}: {value!r} is not an ISO 8601 time like 2015-07-21T20:00:00Z") from None
    else:
        raise EvidenceInputError(f"{what}: expected an ISO 8601 time, got {type(value).__name__}")
    if moment.tzinfo is None:
        raise EvidenceInputError(f"{what}: {value!r} has no timezone (give UTC, e.g. 2015-07-21T20:00:00Z)")
    return moment.astimezone(UTC)


def utc_text(value: str | datetime, what: str = "time") -> str:
    """``value`` as ``YYYY-MM-DDTHH:MM:SSZ`` (string order is time order; what the graph stores).

    Raises:
        EvidenceInputError: as :func:`to_utc`.
    """
    return to_utc(value, what).strftime(ISO_UTC)


def normalize_text(text: str) -> str:
    """Text as compared for duplicates: lowercase, URLs and a leading ``RT @user:`` removed, a trailing
    ellipsis dropped, punctuation and whitespace collapsed to single spaces.

    >>> normalize_text("RT @Selerity: #BREAKING: Microsoft $MSFT Q4 Revenues beat http://t.co/x …")
    'breaking microsoft msft q4 revenues beat'
    """
    text = _URL.sub(" ", text.strip())
    text = _RT.sub("", text.strip())
    text = text.replace("…", " ").lower()
    return _SPACE.sub(" ", _NON_WORD.sub(" ", text)).strip()


def normalize_url(url: str) -> str:
    """A URL as compared for exact matches: scheme and host lowercased, ``www.``, a trailing slash,
    trailing punctuation and the truncation ellipsis dropped.

    >>> normalize_url("HTTP://www.Example.com/a/b/")
    'http://example.com/a/b'
    """
    url = url.strip().rstrip("…").rstrip(".,;:!?)\"'")
    m = re.match(r"^(https?)://([^/]+)(.*)$", url, re.IGNORECASE)
    if not m:
        return url.rstrip("/")
    host = m.group(2).lower().removeprefix("www.")
    return f"{m.group(1).lower()}://{host}{m.group(3)}".rstrip("/")


def urls_of(text: str, url: str | None = None) -> set[str]:
    """The normalized URLs a passage links: ``url`` (when given) and every http(s) URL in ``text``;
    a URL cut short by a truncated retweet (ending in an ellipsis) is left out."""
    found = {normalize_url(u) for u in _URL.findall(text or "") if not u.endswith("…")}
    if url:
        found.add(normalize_url(url))
    return {u for u in found if u}


def near_duplicate_score(a: str, b: str) -> float:
    """rapidfuzz ``fuzz.ratio`` (0-100) of the :func:`normalize_text` forms of ``a`` and ``b``."""
    return float(fuzz.ratio(normalize_text(a), normalize_text(b)))


# --------------------------------------------------------------------------- sectors


def load_sectors(path: Path = STOCK_TABLE) -> dict[str, str]:
    """Ticker -> sector from a stocknet ``StockTable.tsv`` (``Sector<TAB>Symbol<TAB>Company``, symbols
    like ``$MSFT``; the ticker is returned without ``$``, upper-case; the file's own spelling of sector
    names, e.g. "Basic Matierials", is kept).

    Raises:
        EvidenceInputError: the file is missing, lacks the header, or a line has no sector or symbol
            or a ticker is listed twice with different sectors (the message names the file and line).
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise EvidenceInputError(f"{path}: cannot read the sector table ({exc.strerror})") from None
    rows = list(csv.reader(lines, delimiter="\t"))
    if not rows or [c.strip() for c in rows[0][:2]] != ["Sector", "Symbol"]:
        raise EvidenceInputError(f"{path}:1: expected the header 'Sector<TAB>Symbol<TAB>Company'")
    sectors: dict[str, str] = {}
    for n, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) < 2 or not row[0].strip() or not row[1].strip().lstrip("$"):
            raise EvidenceInputError(f"{path}:{n}: expected a sector and a symbol, got {row!r}")
        ticker, sector = row[1].strip().lstrip("$").upper(), row[0].strip()
        if sectors.get(ticker, sector) != sector:
            raise EvidenceInputError(
                f"{path}:{n}: {ticker} listed again with another sector ({sector!r} after {sectors[ticker]!r})"
            )
        sectors[ticker] = sector
    return sectors


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Anchor:
    """A news-event anchor (seed 000, section 3.1 and Appendix B).

    Attributes:
        id: the anchor's id (for a tweet anchor its Chunk id; the id stored on the selection).
        ticker: the firm, e.g. ``"MSFT"``.
        event_time: when the news became public (ISO UTC or aware datetime).
        text: the headline / event query (reader input, never retrieved evidence).
        url: the article's URL, if any.
        document_id: the anchor's Document id, so its other chunks are removed too.
        title: a headline distinct from ``text``, if any.
        decision_time: the assigned decision (prediction) time of the close-to-close convention; evidence
            must be available by it. None: ``event_time``.
    """

    id: str
    ticker: str
    event_time: str | datetime
    text: str
    url: str | None = None
    document_id: str | None = None
    title: str | None = None
    decision_time: str | datetime | None = None

    @property
    def as_of(self) -> datetime:
        """The decision time (UTC); evidence available after it is future evidence."""
        return to_utc(
            self.decision_time if self.decision_time is not None else self.event_time,
            f"anchor {self.id}: decision_time",
        )


@dataclass(frozen=True)
class Candidate:
    """One candidate evidence passage (a Chunk).

    Attributes:
        id: the Chunk id (what the reader cites and the selection links).
        document_id: its Document id.
        text: the passage.
        source_family: e.g. ``news``, ``social``, ``sec_filing`` (the source-memory key).
        available_at: when it became public (ISO UTC or aware datetime).
        tickers: the firms it is about (a tweet: its cashtags and the folder it was filed under).
        url: the document's URL, if any (URLs in ``text`` count too).
        title: the document's headline, if any.
        sector: the sector, when the caller knows it better than the tickers' sectors.
        score: static relevance in [0, 1] (the hybrid score, min-max normalized within the pool); set
            by the scorer, after filtering.
    """

    id: str
    document_id: str
    text: str
    source_family: str
    available_at: str | datetime
    tickers: tuple[str, ...] = ()
    url: str | None = None
    title: str | None = None
    sector: str | None = None
    score: float | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Candidate:
        """A candidate from a mapping (a graph record, a JSON object) with the attribute names above;
        ``ticker`` (one) is accepted for ``tickers``.

        Raises:
            EvidenceInputError: a required field is missing or empty (names the row's id and field).
        """
        ident = row.get("id")
        for name in ("id", "document_id", "text", "source_family", "available_at"):
            if row.get(name) in (None, ""):
                raise EvidenceInputError(f"candidate {ident!r}: missing field {name!r}")
        tickers = row.get("tickers") or ([row["ticker"]] if row.get("ticker") else [])
        return cls(
            id=str(ident),
            document_id=str(row["document_id"]),
            text=str(row["text"]),
            source_family=str(row["source_family"]),
            available_at=row["available_at"],
            tickers=tuple(str(t).upper() for t in tickers if t),
            url=row.get("url"),
            title=row.get("title"),
            sector=row.get("sector"),
            score=row.get("score"),
        )


@dataclass
class FilterResult:
    """The eligible candidates of one anchor and what was removed.

    Attributes:
        anchor: the anchor.
        eligible: the kept candidates, in input order.
        peers: ids of the eligible candidates that are same-sector peer evidence (not company-matched).
        removed: reason -> count (every reason of :data:`REMOVAL_REASONS` present, zeros included).
        removed_ids: candidate id -> the reason it was removed.
    """

    anchor: Anchor
    eligible: list[Candidate]
    peers: set[str]
    removed: dict[str, int]
    removed_ids: dict[str, str] = field(default_factory=dict)


@dataclass
class EvidencePool:
    """The point-in-time candidate pool of one anchor, ranked by static relevance.

    Attributes:
        anchor: the anchor; ``decision_time``: its decision time as ``YYYY-MM-DDTHH:MM:SSZ``.
        candidates: at most K candidates, best first, each with its ``score``.
        peers: ids of the same-sector peer candidates in the pool.
        removed: reason -> count over all rules (:data:`REMOVAL_REASONS`).
        removed_ids: candidate id -> reason.
        n_input: candidates received.
    """

    anchor: Anchor
    decision_time: str
    candidates: list[Candidate]
    peers: set[str]
    removed: dict[str, int]
    removed_ids: dict[str, str]
    n_input: int

    @property
    def peer_share(self) -> float:
        """Share of the pool that is same-sector peer evidence (0 for an empty pool)."""
        return len(self.peers) / len(self.candidates) if self.candidates else 0.0


Scorer = Callable[[Anchor, Sequence[Candidate]], Sequence[float]]
"""Static relevance of each eligible candidate for the anchor (one float per candidate, same order)."""


# --------------------------------------------------------------------------- the rules


def filter_candidates(
    anchor: Anchor,
    candidates: Iterable[Candidate],
    sectors: Mapping[str, str],
    near_duplicate_threshold: float = NEAR_DUPLICATE_THRESHOLD,
) -> FilterResult:
    """Apply rules 1-7 of the module docstring to ``candidates`` for ``anchor``.

    Args:
        anchor: the news anchor; its decision time is the cut-off.
        candidates: the candidate passages (any order).
        sectors: ticker -> sector (:func:`load_sectors`).
        near_duplicate_threshold: ``fuzz.ratio`` (0-100) at or above which a passage is a near-duplicate.

    Returns:
        :class:`FilterResult` with removal counts per reason.

    Raises:
        EvidenceInputError: a candidate's time is not an aware ISO time (names the candidate), or two
            candidates share an id.
    """
    as_of = anchor.as_of
    anchor_sector = sectors.get(anchor.ticker.upper())
    anchor_urls = urls_of(anchor.text, anchor.url)
    anchor_title = normalize_text(anchor.title) if anchor.title else ""
    anchor_norm = normalize_text(anchor.text)
    removed: Counter[str] = Counter()
    removed_ids: dict[str, str] = {}
    seen_ids: set[str] = set()
    survivors: list[tuple[datetime, Candidate, bool]] = []

    def drop(c: Candidate, reason: str) -> None:
        removed[reason] += 1
        removed_ids[c.id] = reason

    for c in candidates:
        if c.id in seen_ids:
            raise EvidenceInputError(f"candidate {c.id!r} given twice")
        seen_ids.add(c.id)
        available = to_utc(c.available_at, f"candidate {c.id}: available_at")
        if available > as_of:
            drop(c, "future")
            continue
        if c.id == anchor.id or c.document_id in {anchor.id, anchor.document_id}:
            drop(c, "anchor")
            continue
        if anchor_urls and urls_of(c.text, c.url) & anchor_urls:
            drop(c, "exact_url")
            continue
        if anchor_title and c.title and normalize_text(c.title) == anchor_title:
            drop(c, "title_duplicate")
            continue
        if anchor_norm and fuzz.ratio(anchor_norm, normalize_text(c.text)) >= near_duplicate_threshold:
            drop(c, "near_duplicate")
            continue
        tickers = {t.upper() for t in c.tickers}
        if anchor.ticker.upper() in tickers:
            peer = False
        elif anchor_sector is not None and (
            c.sector == anchor_sector or any(sectors.get(t) == anchor_sector for t in tickers)
        ):
            peer = True
        else:
            drop(c, "unrelated")
            continue
        survivors.append((available, c, peer))

    kept: dict[str, Candidate] = {}
    peers: set[str] = set()
    for _, c, peer in sorted(survivors, key=lambda s: (s[0], s[1].id)):
        key = normalize_text(c.text)
        if key in kept:
            drop(c, "pool_duplicate")
            continue
        kept[key] = c
        if peer:
            peers.add(c.id)
    keep_ids = {c.id for c in kept.values()}
    eligible = [c for _, c, _ in survivors if c.id in keep_ids]
    counts = {r: removed.get(r, 0) for r in REMOVAL_REASONS}
    return FilterResult(anchor, eligible, peers, counts, removed_ids)


def build_pool(
    filtered: FilterResult,
    scores: Sequence[float] | None = None,
    pool_size: int = POOL_SIZE,
    peer_share: float = PEER_SHARE,
) -> EvidencePool:
    """Rank the eligible candidates by static relevance and keep the top ``pool_size``, with same-sector
    peers capped at ``floor(peer_share * pool_size)`` places and at ``peer_share`` of the pool built
    (seed 000, section 3.3: "at most 20% of the cached candidate pool, i.e., up to four passages when
    K = 20").

    Args:
        filtered: the output of :func:`filter_candidates` (never unfiltered candidates).
        scores: relevance per eligible candidate, same order as ``filtered.eligible``; None: each
            candidate's own ``score`` (None counts as 0). Ties break by later availability, then id.
        pool_size: K >= 1.
        peer_share: in [0, 1).

    Returns:
        :class:`EvidencePool`; candidates carry their score.

    Raises:
        ValueError: ``scores`` has another length, a score is not finite, or K / peer_share are out of range.
    """
    if pool_size < 1:
        raise ValueError(f"pool_size must be >= 1, got {pool_size}")
    if not 0.0 <= peer_share < 1.0:
        raise ValueError(f"peer_share must be in [0, 1), got {peer_share}")
    eligible = filtered.eligible
    if scores is None:
        scores = [c.score if c.score is not None else 0.0 for c in eligible]
    if len(scores) != len(eligible):
        raise ValueError(f"{len(scores)} scores for {len(eligible)} eligible candidates")
    scored = []
    for c, s in zip(eligible, scores):
        s = float(s)
        if not math.isfinite(s):
            raise ValueError(f"candidate {c.id}: score {s} is not finite")
        scored.append(replace(c, score=s))
    scored.sort(key=lambda c: (-c.score, -to_utc(c.available_at).timestamp(), c.id))

    max_peers = math.floor(peer_share * pool_size + 1e-9)
    removed = dict(filtered.removed)
    removed_ids = dict(filtered.removed_ids)
    pool: list[Candidate] = []
    n_peers = 0
    for c in scored:
        is_peer = c.id in filtered.peers
        if len(pool) >= pool_size:
            removed["pool_size"] += 1
            removed_ids[c.id] = "pool_size"
        elif is_peer and n_peers >= max_peers:
            removed["peer_cap"] += 1
            removed_ids[c.id] = "peer_cap"
        else:
            pool.append(c)
            n_peers += is_peer
    # A short pool: keep peers at most peer_share of what was built (drop the lowest-scored peers).
    while n_peers and n_peers > math.floor(peer_share * len(pool) + 1e-9):
        worst = max((i for i, c in enumerate(pool) if c.id in filtered.peers))
        removed["peer_cap"] += 1
        removed_ids[pool[worst].id] = "peer_cap"
        del pool[worst]
        n_peers -= 1
    peers = {c.id for c in pool if c.id in filtered.peers}
    n_input = len(eligible) + sum(filtered.removed.values())
    return EvidencePool(filtered.anchor, utc_text(filtered.anchor.as_of), pool, peers, removed, removed_ids, n_input)


def prepare_evidence(
    anchor: Anchor,
    candidates: Iterable[Candidate],
    sectors: Mapping[str, str],
    scorer: Scorer | None = None,
    pool_size: int = POOL_SIZE,
    peer_share: float = PEER_SHARE,
    near_duplicate_threshold: float = NEAR_DUPLICATE_THRESHOLD,
) -> EvidencePool:
    """The point-in-time candidate pool of ``anchor``: :func:`filter_candidates`, then ``scorer`` over the
    eligible candidates only (filtering precedes scoring), then :func:`build_pool`.

    Args:
        scorer: static relevance of the eligible candidates (e.g. the hybrid retriever); None: the
            candidates' own ``score``.
        (the rest as :func:`filter_candidates` and :func:`build_pool`)

    Raises:
        EvidenceInputError, ValueError: as those two functions.
    """
    filtered = filter_candidates(anchor, candidates, sectors, near_duplicate_threshold)
    scores = None if scorer is None else list(scorer(anchor, filtered.eligible))
    return build_pool(filtered, scores, pool_size, peer_share)


def load_candidates(graph: Graph, anchor: Anchor, sectors: Mapping[str, str]) -> list[Candidate]:
    """The text chunks about the anchor's ticker or a ticker of its sector that were available at its
    decision time, from the graph (``Document.tickers``); the query itself leaves future chunks out.

    Returns:
        Candidates, latest first, without scores (run :func:`prepare_evidence` on them).
    """
    sector = sectors.get(anchor.ticker.upper())
    tickers = sorted({anchor.ticker.upper()} | {t for t, s in sectors.items() if sector is not None and s == sector})
    rows = graph.read(cypher.POINT_IN_TIME_CANDIDATES, {"as_of": utc_text(anchor.as_of), "tickers": tickers})
    return [Candidate.from_row(r) for r in rows]


# --------------------------------------------------------------------------- selections in the graph


@dataclass(frozen=True)
class SelectedEvidence:
    """One passage of a selected context: its Chunk id, rank (1 = first) and the scores that ranked it
    (``score``: the memory-adjusted score, ``relevance``: the static one)."""

    chunk_id: str
    rank: int
    score: float
    relevance: float | None = None


@dataclass(frozen=True)
class EvidenceSelection:
    """The evidence one run gave the reader for one anchor.

    Attributes:
        run: the evaluation run (e.g. ``"2014-2015|memory"``, ``"2014-2015|shuffled-label|3"``).
        pool: the anchor's :class:`EvidencePool` (decision time, removal counts).
        selected: the context, ranks 1..k.
    """

    run: str
    pool: EvidencePool
    selected: tuple[SelectedEvidence, ...]

    @property
    def id(self) -> str:
        """Deterministic key ``"<run>|<anchor id>"``."""
        return f"{self.run}|{self.pool.anchor.id}"

    def node(self) -> dict[str, Any]:
        """The ``(:EvidenceSelection)`` properties."""
        a = self.pool.anchor
        return {
            "id": self.id,
            "run": self.run,
            "anchor_id": a.id,
            "ticker": a.ticker,
            "event_time": utc_text(a.event_time, f"anchor {a.id}: event_time"),
            "decision_time": self.pool.decision_time,
            "anchor_text": a.text,
            "anchor_url": a.url,
            "pool": len(self.pool.candidates),
            "peers": len(self.pool.peers),
            "candidates_in": self.pool.n_input,
            "selected": len(self.selected),
            **{f"removed_{r}": n for r, n in self.pool.removed.items()},
        }


def store_selections(writer: BatchWriter, selections: Sequence[EvidenceSelection]) -> dict[str, int]:
    """Write selections as ``(:EvidenceSelection)-[:SELECTED {rank, score, relevance}]->(:Chunk)``.

    Idempotent: the selection is MERGEd on its id, links on (selection, chunk); a rerun that selects other
    chunks removes the stale links first. Each write is batched (UNWIND, one transaction per batch).

    Returns:
        ``{"selections", "links", "created", "stale_links_removed", "missing_chunks"}``.

    Raises:
        ValueError: two selections share an id, or a selection ranks a chunk twice.
    """
    ids = Counter(s.id for s in selections)
    twice = sorted(i for i, n in ids.items() if n > 1)
    if twice:
        raise ValueError(f"evidence selections given twice: {twice[:5]}")
    for s in selections:
        chunk_ids = [e.chunk_id for e in s.selected]
        if len(set(chunk_ids)) != len(chunk_ids):
            raise ValueError(f"selection {s.id}: a chunk is selected twice")
    stale = writer.run_batches(
        cypher.DELETE_STALE_SELECTED, [{"id": s.id, "chunk_ids": [e.chunk_id for e in s.selected]} for s in selections]
    )
    nodes = writer.merge_nodes("EvidenceSelection", [s.node() for s in selections], "id")
    links = writer.merge_relationships(
        "SELECTED",
        [
            {"start": s.id, "end": e.chunk_id, "props": {"rank": e.rank, "score": e.score, "relevance": e.relevance}}
            for s in selections
            for e in s.selected
        ],
        start=("EvidenceSelection", "id"),
        end=("Chunk", "id"),
    )
    return {
        "selections": nodes.written,
        "links": links.written,
        "created": nodes.created + links.created,
        "stale_links_removed": stale,
        "missing_chunks": links.missing_endpoints,
    }


@dataclass
class EvidenceAudit:
    """What :func:`audit_evidence` found (seed 000, section 4.3: "0.00% future-document rate ... near-duplicate
    anchor matches remain below 1%").

    Attributes:
        selections: selections read; ``selected``: selected passages (links) read.
        future: selected passages available after their selection's decision time.
        near_duplicate: selected passages that are the anchor, link its URL or are near-duplicates of it.
        examples: up to 5 offending ``{selection, chunk_id, available_at, decision_time, problem}``.
    """

    selections: int = 0
    selected: int = 0
    future: int = 0
    near_duplicate: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)

    @property
    def future_rate(self) -> float:
        """Future passages / selected passages (0 when none was selected)."""
        return self.future / self.selected if self.selected else 0.0

    @property
    def near_duplicate_rate(self) -> float:
        """Near-duplicate-anchor passages / selected passages (0 when none was selected)."""
        return self.near_duplicate / self.selected if self.selected else 0.0

    def rows(self) -> list[dict[str, Any]]:
        """The audit as table rows (metric, count, rate in %)."""
        return [
            {"metric": "selections", "count": self.selections, "rate": ""},
            {"metric": "selected evidence", "count": self.selected, "rate": ""},
            {"metric": "future documents", "count": self.future, "rate": f"{100 * self.future_rate:.2f}%"},
            {
                "metric": "near-duplicates of the anchor",
                "count": self.near_duplicate,
                "rate": f"{100 * self.near_duplicate_rate:.2f}%",
            },
        ]


def audit_evidence(
    graph: Graph, run: str | None = None, near_duplicate_threshold: float = NEAR_DUPLICATE_THRESHOLD
) -> EvidenceAudit:
    """Check every stored selection (of ``run``; all when None) against its decision time and anchor.

    A selected passage is future when its Chunk's ``available_at`` is after the selection's
    ``decision_time``, and a near-duplicate when it is the anchor, shares a URL with it, or its text's
    ``fuzz.ratio`` with the anchor text is at or above ``near_duplicate_threshold`` (the rules of
    :func:`filter_candidates`, checked again on what was actually stored).
    """
    audit = EvidenceAudit()
    seen: set[str] = set()
    for row in graph.read(cypher.EVIDENCE_SELECTIONS, {"run": run}):
        if row["selection"] not in seen:
            seen.add(row["selection"])
            audit.selections += 1
        if row["chunk_id"] is None:
            continue
        audit.selected += 1
        problems = []
        if to_utc(row["available_at"], f"chunk {row['chunk_id']}") > to_utc(row["decision_time"], row["selection"]):
            audit.future += 1
            problems.append("future")
        anchor_text = row["anchor_text"] or ""
        text = row["text"] or ""
        if (
            row["chunk_id"] == row["anchor_id"]
            or row["document_id"] == row["anchor_id"]
            or (urls_of(anchor_text, row["anchor_url"]) & urls_of(text))
            or near_duplicate_score(anchor_text, text) >= near_duplicate_threshold
        ):
            audit.near_duplicate += 1
            problems.append("near_duplicate")
        if problems and len(audit.examples) < 5:
            audit.examples.append(
                {
                    "selection": row["selection"],
                    "chunk_id": row["chunk_id"],
                    "available_at": row["available_at"],
                    "decision_time": row["decision_time"],
                    "problem": ", ".join(problems),
                }
            )
    return audit


def delete_selections(graph: Graph, run: str) -> None:
    """Remove the stored selections of ``run`` (a fresh evaluation of the same run id)."""
    graph.write(cypher.DELETE_SELECTIONS_OF_RUN, {"run": run})
