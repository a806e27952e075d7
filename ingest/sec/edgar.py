"""SEC EDGAR through edgartools: a company's companyfacts JSON, fetched once and kept in edgartools' local data
directory, for :func:`ingest.sec.companyfacts.read_companyfacts` to read like any other companyfacts file.

finkg writes no EDGAR client: every request goes through edgartools (``edgar.httprequests.get_with_retry``), so
SEC's fair-access rules are edgartools' own: the User-Agent is the identity given here (``edgar.set_identity``),
at most ``rate_limit`` requests per second (its limiter, ``EDGAR_RATE_LIMIT_PER_SEC``), retries with exponential
back-off on 429, 5xx and dropped connections (stamina), and its HTTP cache under ``<cache_dir>/_tcache``.

The cache. ``cache_dir`` is edgartools' local data directory (``EDGAR_LOCAL_DATA_DIR``); a fetched companyfacts
response is kept there as ``companyfacts/CIK##########.json``, the layout of edgartools' local storage
(``edgar.entity.entity_facts.load_company_facts_from_local`` reads the same path), written whole or not at all
(:func:`kg.atomic.replacing`: a process killed mid-write leaves no half file). A company whose file is there is
not requested again unless ``refresh`` asks for it; ``offline`` never makes a request and refuses a company that
is not there. Tickers are resolved without a request from the ticker table edgartools ships
(``edgar.reference.tickers.get_company_cik_lookup``), then from ``tickers.json`` in the cache (the tickers this
cache resolved before), and only then, online, from SEC's ``company_tickers.json`` (edgartools'
``find_company_cik``); a ticker resolved that way is recorded in ``tickers.json``.

edgartools reads its URLs (``EDGAR_BASE_URL``, ``EDGAR_DATA_URL``: a mirror, or a local server in the tests), its
rate limit and its data directory once, when it is first imported: :func:`configure` sets them before that import,
and refuses a later call in the same process that asks for other values.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from kg.atomic import replacing
from kg.errors import ConfigError, IngestError

COMPANYFACTS_DIR = "companyfacts"
TICKERS_FILE = "tickers.json"
#: A CIK as a user types it: 1 to 10 digits, with or without "CIK" and leading zeros.
CIK = re.compile(r"(?:CIK)?(\d{1,10})", re.IGNORECASE)
TICKER = re.compile(r"[A-Z][A-Z0-9.\-]{0,9}")
#: The SEC's User-Agent rule: a name and an email address (https://www.sec.gov/os/accessing-edgar-data).
IDENTITY = re.compile(r"\S.*\s\S+@\S+\.\S+|\S+@\S+\.\S+\s+\S.*")


class EdgarError(IngestError):
    """EDGAR has no such company or no companyfacts for it, a request failed after edgartools' retries, or
    ``--offline`` asked for a company that is not in the cache; the message names the company and what to do."""


@dataclass(frozen=True)
class EdgarConfig:
    """What :func:`configure` applies to edgartools (``[edgar]`` of the settings, plus ``offline``)."""

    identity: str | None
    cache_dir: Path
    rate_limit: int = 9
    base_url: str | None = None
    data_url: str | None = None
    offline: bool = False


@dataclass(frozen=True)
class Fetched:
    """One company's companyfacts file: what was asked (``query``), its CIK, the file in the cache, and whether
    this call requested it from EDGAR (``requested``; False: it was in the cache)."""

    query: str
    cik: int
    path: Path
    requested: bool


def check_identity(identity: str | None, where: str) -> str:
    """The User-Agent identity, checked: a name and an email (SEC's fair-access rule).

    Raises:
        ConfigError: none set, or not a name and an email; one line naming the setting and ``where`` it is set.
    """
    text = (identity or "").strip()
    if not text:
        raise ConfigError(
            "SEC EDGAR needs to know who is asking: set [edgar] identity to your name and email, e.g. "
            f'identity = "Jane Doe jane@example.com" in {where} (or FINKG_EDGAR__IDENTITY); nothing was fetched'
        )
    if not IDENTITY.fullmatch(text):
        raise ConfigError(
            f"[edgar] identity {text!r} is not a name and an email (SEC's User-Agent rule), e.g. "
            f'"Jane Doe jane@example.com"; set it in {where} (or FINKG_EDGAR__IDENTITY); nothing was fetched'
        )
    return text


def parse_company(text: str) -> int | str:
    """A CIK (``320193``, ``0000320193``, ``CIK0000320193``) as an int, or a ticker (``AAPL``, ``brk.b``) upper-cased.

    Raises:
        ConfigError: neither (empty, spaces, or characters no ticker has).
    """
    raw = text.strip()
    if m := CIK.fullmatch(raw):
        cik = int(m.group(1))
        if cik > 0:
            return cik
    if TICKER.fullmatch(raw.upper()):
        return raw.upper()
    raise ConfigError(f"{text!r} is neither a ticker (e.g. AAPL) nor a CIK (e.g. 320193)")


_applied: dict[str, str] | None = None


def _environment(config: EdgarConfig) -> dict[str, str]:
    """The environment edgartools reads when first imported, for ``config``."""
    env = {
        "EDGAR_LOCAL_DATA_DIR": str(Path(config.cache_dir).expanduser().resolve()),
        "EDGAR_RATE_LIMIT_PER_SEC": str(config.rate_limit),
    }
    if config.base_url:
        env["EDGAR_BASE_URL"] = config.base_url.rstrip("/")
    if config.data_url:
        env["EDGAR_DATA_URL"] = config.data_url.rstrip("/")
    return env


def configure(config: EdgarConfig) -> ModuleType:
    """Point edgartools at ``config`` (set before its first import) and return the ``edgar`` package.

    The identity is set (``edgar.set_identity``) when one is given; :func:`check_identity` is the caller's.

    Raises:
        ConfigError: edgartools was imported in this process with another data directory, rate limit or URL
            (it reads them once); restart the process to use other ones.
    """
    global _applied
    wanted = _environment(config)
    if _applied is None and "edgar" in sys.modules:
        _applied = {k: os.environ.get(k, "") for k in wanted}  # imported by someone else: what it read then
    if _applied is not None:
        differ = sorted(k for k, v in wanted.items() if _applied.get(k) != v)
        if differ:
            raise ConfigError(
                "edgartools was set up in this process with other "
                + ", ".join(f"{k} ({_applied.get(k) or 'unset'})" for k in differ)
                + "; it reads them once: start a new process to use other [edgar] settings"
            )
    else:
        Path(wanted["EDGAR_LOCAL_DATA_DIR"]).mkdir(parents=True, exist_ok=True)
        os.environ.update(wanted)
        _applied = wanted
    import edgar

    if config.identity:
        edgar.set_identity(config.identity)
    return edgar


def companyfacts_path(cache_dir: Path, cik: int) -> Path:
    """Where the cache keeps a company's companyfacts (edgartools' local-storage layout)."""
    return Path(cache_dir).expanduser() / COMPANYFACTS_DIR / f"CIK{cik:010d}.json"


def _recorded_tickers(cache_dir: Path) -> dict[str, int]:
    path = Path(cache_dir).expanduser() / TICKERS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): int(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _record_ticker(cache_dir: Path, ticker: str, cik: int) -> None:
    known = _recorded_tickers(cache_dir)
    known[ticker] = cik
    with replacing(Path(cache_dir).expanduser() / TICKERS_FILE) as tmp:
        tmp.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def resolve(query: str, config: EdgarConfig) -> int:
    """The CIK of ``query`` (a CIK or a ticker; see the module docstring for the order of the ticker tables).

    Raises:
        ConfigError: ``query`` is neither a ticker nor a CIK.
        EdgarError: an unknown ticker (offline: one not in edgartools' table nor in the cache's ``tickers.json``).
    """
    parsed = parse_company(query)
    if isinstance(parsed, int):
        return parsed
    configure(config)
    from edgar.reference.tickers import find_company_cik, get_company_cik_lookup

    key = parsed.replace(".", "-")
    cik: Any = get_company_cik_lookup().get(key)  # edgartools' bundled table: no request
    if cik is None:
        cik = _recorded_tickers(config.cache_dir).get(key)
    if cik is None and not config.offline:
        cik = find_company_cik(key)  # SEC's company_tickers.json through edgartools
        if cik is not None:
            _record_ticker(config.cache_dir, key, int(cik))
    if cik is None:
        where = "in edgartools' ticker table or this cache (--offline)" if config.offline else "at SEC EDGAR"
        raise EdgarError(f"{query}: no such ticker {where}; give the company's CIK instead")
    return int(cik)


def companyfacts(query: str, config: EdgarConfig, refresh: bool = False) -> Fetched:
    """The companyfacts file of ``query`` (a ticker or a CIK) in the cache, requested from EDGAR when it is not
    there (or ``refresh``); ``config.offline`` never requests.

    Raises:
        ConfigError: ``query`` is neither a ticker nor a CIK; ``offline`` with ``refresh``.
        EdgarError: an unknown ticker; EDGAR has no companyfacts for the CIK (404); a request failed after
            edgartools' retries; offline and not in the cache.
    """
    if config.offline and refresh:
        raise ConfigError("--refresh asks EDGAR again, --offline never does: give one of them")
    cik = resolve(query, config)
    path = companyfacts_path(config.cache_dir, cik)
    if path.is_file() and not refresh:
        return Fetched(query, cik, path, requested=False)
    if config.offline:
        raise EdgarError(
            f"{query}: CIK {cik} is not in the EDGAR cache ({path} is missing); fetch it once without --offline"
        )
    configure(config)
    from edgar.httprequests import get_with_retry
    from edgar.urls import build_company_facts_url

    url = build_company_facts_url(cik)
    try:
        response = get_with_retry(url=url)
    except Exception as exc:  # edgartools' retries are spent: httpx, TransportError, TooManyRequestsError
        raise EdgarError(f"{query}: {url} failed after edgartools' retries: {type(exc).__name__}: {exc}") from exc
    if response.status_code == 404:
        raise EdgarError(f"{query}: EDGAR has no companyfacts for CIK {cik} ({url}: 404); is it an XBRL filer?")
    if response.status_code not in (200, 304):
        raise EdgarError(f"{query}: {url} answered HTTP {response.status_code}")
    body = response.content
    try:
        doc = json.loads(body)
    except ValueError as exc:
        raise EdgarError(f"{query}: {url} did not answer JSON ({exc})") from exc
    if not isinstance(doc, dict) or "facts" not in doc:
        raise EdgarError(f"{query}: {url} answered JSON without companyfacts' 'facts'")
    with replacing(path) as tmp:
        tmp.write_bytes(body)
    return Fetched(query, cik, path, requested=True)
