"""Tweets (one JSON object per line, the Twitter v1.1 shape of the stocknet-dataset files).

Input: files of ``{"created_at": "Thu Jan 02 09:48:35 +0000 2014", "id_str": "...", "text": "...",
"user": {"screen_name": ..., "followers_count": ...}, "entities": {"symbols": [...]}}`` lines,
e.g. ``tweets/MSFT/2014-01-02``. The folder name is the ticker the dataset filed the tweet under
(or ``--ticker``).

**One Document per tweet**, not per author-day: each tweet has its own availability time
(``created_at``, to the second), and point-in-time retrieval must not date a 09:48 tweet at the
author's last tweet of the day (a leak for an earlier cut-off) nor the last one at the first
(a leak the other way); the market-feedback memory also needs each cited piece of evidence to be
one tweet with one author and one family. A tweet is short, so it is one chunk.

**Source family** from the author: ``news`` when the screen name is one of
:data:`NEWS_OUTLET_ACCOUNTS`, else ``social``. The list holds accounts operated by a news
organisation (a newspaper, magazine, broadcaster, wire or financial news publisher with an
editorial staff), including its desk, programme and topic accounts. It excludes individual
journalists' own accounts (they speak for themselves), companies' own accounts (J.P. Morgan,
GE Reports), automated aggregators and stock-promotion accounts whose names say "news"
(``stockwire24``, ``IHNewsDesk``, ``Breaking News Now``), and accounts whose link to the outlet
could not be told from the data. It was built from every author of the 9,578 tweets of
../shared/data/market/tweets/{MSFT,JPM,XOM,GE} (4,033 authors; each one whose name or profile
names a news organisation, and each verified account, was looked at). Matching ignores case.

Duplicates: the same tweet id in several files (the dataset files a tweet under every ticker it
mentions) is one Document; its ``tickers`` are the union of its cashtags and the folders it was
found in within one run (first copy's other fields kept, later copies counted as duplicates).

Bad input: a line that is not JSON, not an object, or lacks ``id_str``/``id``, ``created_at``,
``text`` or ``user.screen_name``, or has an unreadable ``created_at``, is **recorded and skipped**
(:class:`~ingest.text.documents.BadLine`, naming file, line and problem): one corrupt line must not cost a
day's other tweets, and the skipped lines are counted in the summary and in the ``IngestRun``.
A file that is not UTF-8 or is empty fails as a whole (:class:`~ingest.text.documents.TextFormatError`).
"""

from __future__ import annotations

import html
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from ingest.text.documents import BadLine, ReadResult, TextDocument, decode, iso_utc, read_bytes, sha256_hex

SOURCE = "twitter"
TICKER_NAME = re.compile(r"^[A-Z][A-Z.]{0,5}$")
CREATED_AT = "%a %b %d %H:%M:%S %z %Y"

NEWS_OUTLET_ACCOUNTS: dict[str, str] = {
    # screen name (as on Twitter) -> the news organisation that runs it
    "CNBC": "CNBC",
    "CNBCnow": "CNBC",
    "CNBCWorld": "CNBC",
    "CNBCFastMoney": "CNBC",
    "CNBCClosingBell": "CNBC",
    "CNBCFuturesNow": "CNBC",
    "CNBCOptions": "CNBC",
    "OptionsAction": "CNBC",
    "PowerLunch": "CNBC",
    "SquawkStreet": "CNBC",
    "SquawkAlley": "CNBC",
    "WSJbusiness": "The Wall Street Journal",
    "WSJD": "The Wall Street Journal",
    "WSJMoneyBeat": "The Wall Street Journal",
    "WSJAsia": "The Wall Street Journal",
    "WSJheard": "The Wall Street Journal",
    "barronsonline": "Barron's",
    "CNNMoney": "CNN",
    "CNNMoneyInvest": "CNN",
    "FoxBusiness": "Fox Business Network",
    "bsurveillance": "Bloomberg",
    "bpolitics": "Bloomberg",
    "BloombergPhotos": "Bloomberg",
    "BNN": "BNN (Business News Network)",
    "ReutersInsider": "Reuters",
    "Breakingviews": "Reuters",
    "businessinsider": "Business Insider",
    "BI_Europe": "Business Insider",
    "clusterstock": "Business Insider",
    "YahooFinance": "Yahoo Finance",
    "FortuneMagazine": "Fortune",
    "daily_finance": "AOL DailyFinance",
    "TheStreet": "TheStreet",
    "TheStreetTech": "TheStreet",
    "TSTbanking": "TheStreet",
    "TSTEnergy": "TheStreet",
    "TSTbiotech": "TheStreet",
    "TheStreetAlerts": "TheStreet",
    "StockAction": "TheStreet",
    "SeekingAlpha": "Seeking Alpha",
    "sa_alerts": "Seeking Alpha",
    "SAlphaTrending": "Seeking Alpha",
    "SATopNews": "Seeking Alpha",
    "Benzinga": "Benzinga",
    "theflynews": "The Fly",
    "Street_Insider": "StreetInsider.com",
    "ZacksResearch": "Zacks Investment Research",
    "TMFBreaking": "The Motley Fool",
    "globeinvestor": "The Globe and Mail",
    "AmerBanker": "American Banker",
    "SFBusinessTimes": "American City Business Journals",
    "BosBizJournal": "American City Business Journals",
    "TheDealNewsroom": "The Deal",
    "ForTraders": "4-traders (MarketScreener)",
    "ZonebourseNews": "Zonebourse (MarketScreener)",
    "ADVFNplc": "ADVFN",
    "Bidnessetc": "Bidness Etc",
    "QmedNews": "Qmed",
}
_OUTLET_BY_NAME = {name.lower(): outlet for name, outlet in NEWS_OUTLET_ACCOUNTS.items()}


def source_family(screen_name: str) -> str:
    """``news`` for a news-outlet account (:data:`NEWS_OUTLET_ACCOUNTS`, any case), else ``social``."""
    return "news" if screen_name.lower() in _OUTLET_BY_NAME else "social"


def _tweet(obj: Any) -> tuple[str, datetime, str, dict[str, Any]]:
    """``(id, created_at, text, user)`` of a parsed line; ValueError names what is wrong."""
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    tid = obj.get("id_str") or (str(obj["id"]) if isinstance(obj.get("id"), int) else None)
    if not tid or not str(tid).isdigit():
        raise ValueError("missing or invalid field 'id_str' (and 'id')")
    user = obj.get("user")
    if not isinstance(user, dict) or not isinstance(user.get("screen_name"), str) or not user["screen_name"]:
        raise ValueError("missing field 'user.screen_name'")
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("missing or empty field 'text'")
    raw = obj.get("created_at")
    try:
        created = datetime.strptime(str(raw), CREATED_AT)
    except (TypeError, ValueError):
        raise ValueError(f"field 'created_at' {raw!r} is not a time like 'Thu Jan 02 09:48:35 +0000 2014'") from None
    return str(tid), created, text, user


def _cashtags(obj: dict[str, Any]) -> set[str]:
    symbols = (obj.get("entities") or {}).get("symbols") or []
    return {s["text"].upper() for s in symbols if isinstance(s, dict) and isinstance(s.get("text"), str)}


def read_tweet_file(path: Path, ticker: str | None, result: ReadResult, seen: dict[str, TextDocument]) -> None:
    """Add the tweets of one file to ``result`` (documents, bad lines, duplicates).

    Args:
        ticker: the ticker the file is filed under (None: the parent folder's name when it looks
            like a ticker).
        seen: documents by tweet id already read in this run (duplicates merge into them).

    Raises:
        TextFormatError: the file is unreadable, empty, or not UTF-8 (names the line).
    """
    data = read_bytes(path)
    text = decode(path, data)
    folder = ticker or (path.parent.name if TICKER_NAME.match(path.parent.name) else None)
    resolved = str(path.resolve())
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            tid, created, body, user = _tweet(obj)
        except json.JSONDecodeError as exc:
            result.bad_lines.append(BadLine(str(path), n, f"not JSON: {exc.msg} (column {exc.colno})"))
            continue
        except ValueError as exc:
            result.bad_lines.append(BadLine(str(path), n, str(exc)))
            continue
        tickers = _cashtags(obj) | ({folder.upper()} if folder else set())
        if tid in seen:
            doc = seen[tid]
            doc.props["tickers"] = sorted(set(doc.props["tickers"]) | tickers)
            result.duplicates += 1
            continue
        when = iso_utc(created)
        name = user["screen_name"]
        clean = html.unescape(body)
        canonical = json.dumps({"id": tid, "created_at": when, "text": body, "screen_name": name}, sort_keys=True)
        doc = TextDocument(
            id=f"tweet:{tid}",
            source_family=source_family(name),
            source=SOURCE,
            doc_type="tweet",
            title=f"@{name} {when}",
            available_at=when,
            available_at_approx=False,
            availability_basis="created_at",
            published_at=when,
            sections=[("", clean)],
            path=resolved,
            sha256=sha256_hex(canonical.encode("utf-8")),
            props={
                "author": name,
                "author_name": user.get("name"),
                "author_followers": user.get("followers_count"),
                "author_verified": bool(user.get("verified")),
                "news_outlet": _OUTLET_BY_NAME.get(name.lower()),
                "tickers": sorted(tickers),
                "tweet_id": tid,
                "lang": obj.get("lang"),
                "retweet": clean.startswith("RT @") or "retweeted_status" in obj,
                "line": n,
            },
        )
        seen[tid] = doc
        result.documents.append(doc)


def read_tweets(files: list[Path], ticker: str | None = None) -> ReadResult:
    """Every tweet of ``files`` (see the module docstring for duplicates and bad lines).

    Raises:
        TextFormatError: the first file that is unreadable, empty or not UTF-8.
    """
    result = ReadResult(files=list(files))
    seen: dict[str, TextDocument] = {}
    for path in files:
        read_tweet_file(path, ticker, result, seen)
    return result
