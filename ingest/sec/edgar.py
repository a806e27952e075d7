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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from pathlib import Path
from types import ModuleType
from typing import Any
from zoneinfo import ZoneInfo

from kg.atomic import replacing
from kg.errors import ConfigError, IngestError

COMPANYFACTS_DIR = "companyfacts"
SUBMISSIONS_DIR = "submissions"
DOCUMENTS_DIR = "documents"
#: An older page of a filing index as EDGAR names it under ``filings.files`` (``CIK##########-submissions-###.json``).
PAGE_NAME = re.compile(r"CIK(\d{10})-submissions-\d{3}\.json")
#: Forms whose filings are fetched unless asked otherwise, and the forms whose primary document is read as text.
DEFAULT_FORMS = ("10-K", "10-Q")
TEXT_FORMS = ("10-K", "10-Q", "10-K/A", "10-Q/A")
ADSH = re.compile(r"\d{10}-\d{2}-\d{6}")
#: A primary document's name as a plain file name (no folder, no "..").
PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,200}")
OPTIONAL_COLUMNS = ("primaryDocument", "primaryDocDescription", "isXBRL", "isInlineXBRL", "size")
NEW_YORK = ZoneInfo("America/New_York")
ACCEPTANCE_ZONES = {"America/New_York": NEW_YORK, "UTC": ZoneInfo("UTC")}
#: EDGAR's filing-date cut-off (17:30 New York time) and the forms it applies to, read by :func:`acceptance_zone`.
FILING_CUTOFF = time(17, 30)
EVIDENCE_FORMS = frozenset({"10-K", "10-Q", "8-K", "10-K/A", "10-Q/A", "8-K/A"})
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


def _json_with(key: str) -> Callable[[bytes], str | None]:
    """A check of a response body: JSON holding ``key`` at its top level (None), else what is wrong."""

    def check(body: bytes) -> str | None:
        try:
            doc = json.loads(body)
        except ValueError as exc:
            return f"did not answer JSON ({exc})"
        return None if isinstance(doc, dict) and key in doc else f"answered JSON without {key!r}"

    return check


def _not_empty(body: bytes) -> str | None:
    return None if body.strip() else "answered an empty document"


def _cached(
    query: str,
    cik: int,
    path: Path,
    url: Callable[[], str],
    what: str,
    config: EdgarConfig,
    refresh: bool,
    check: Callable[[bytes], str | None],
) -> Fetched:
    """``path`` from the cache, else the response of ``url()`` (through edgartools) checked and kept there.

    Raises:
        ConfigError: ``offline`` with ``refresh``.
        EdgarError: offline and not in the cache; 404 (EDGAR has no ``what``); another status; a request failed
            after edgartools' retries; a body ``check`` refuses.
    """
    if config.offline and refresh:
        raise ConfigError("--refresh asks EDGAR again, --offline never does: give one of them")
    if path.is_file() and not refresh:
        return Fetched(query, cik, path, requested=False)
    if config.offline:
        raise EdgarError(
            f"{query}: CIK {cik}: its {what} is not in the EDGAR cache ({path} is missing); "
            "fetch it once without --offline"
        )
    configure(config)
    from edgar.httprequests import get_with_retry

    where = url()
    try:
        response = get_with_retry(url=where)
    except Exception as exc:  # edgartools' retries are spent: httpx, TransportError, TooManyRequestsError
        raise EdgarError(f"{query}: {where} failed after edgartools' retries: {type(exc).__name__}: {exc}") from exc
    if response.status_code == 404:
        raise EdgarError(f"{query}: EDGAR has no {what} for CIK {cik} ({where}: 404)")
    if response.status_code not in (200, 304):
        raise EdgarError(f"{query}: {where} answered HTTP {response.status_code}")
    body = response.content
    if problem := check(body):
        raise EdgarError(f"{query}: {where} {problem}")
    with replacing(path) as tmp:
        tmp.write_bytes(body)
    return Fetched(query, cik, path, requested=True)


def companyfacts(query: str, config: EdgarConfig, refresh: bool = False) -> Fetched:
    """The companyfacts file of ``query`` (a ticker or a CIK) in the cache, requested from EDGAR when it is not
    there (or ``refresh``); ``config.offline`` never requests.

    Raises:
        ConfigError: ``query`` is neither a ticker nor a CIK; ``offline`` with ``refresh``.
        EdgarError: an unknown ticker; EDGAR has no companyfacts for the CIK (404: not an XBRL filer?); a request
            failed after edgartools' retries; offline and not in the cache.
    """
    cik = resolve(query, config)

    def url() -> str:
        from edgar.urls import build_company_facts_url

        return build_company_facts_url(cik)

    path = companyfacts_path(config.cache_dir, cik)
    return _cached(query, cik, path, url, "companyfacts", config, refresh, _json_with("facts"))


# --------------------------------------------------------------------------- the filing index (submissions)


def submissions_path(cache_dir: Path, cik: int) -> Path:
    """Where the cache keeps a company's submissions (edgartools' local-storage layout)."""
    return Path(cache_dir).expanduser() / SUBMISSIONS_DIR / f"CIK{cik:010d}.json"


def submissions(query: str, config: EdgarConfig, refresh: bool = False) -> Fetched:
    """The submissions file of ``query`` (SEC's filing index of the company, ``data.sec.gov/submissions/``) in the
    cache, requested from EDGAR when it is not there (or ``refresh``); ``config.offline`` never requests.

    Raises:
        ConfigError, EdgarError: as :func:`companyfacts` (404: EDGAR has no such CIK).
    """
    cik = resolve(query, config)

    def url() -> str:
        from edgar.urls import build_submissions_url

        return build_submissions_url(cik)

    path = submissions_path(config.cache_dir, cik)
    return _cached(query, cik, path, url, "filing index (submissions)", config, refresh, _json_with("filings"))


@dataclass(frozen=True)
class IndexEntry:
    """One filing of a company's EDGAR filing index.

    ``filed`` and ``period`` (the period of report; None when EDGAR gives none) are ``YYYY-MM-DD``; ``accepted`` is
    EDGAR's acceptance time as ISO 8601 UTC (``2025-05-02T10:00:46Z``), read in :attr:`FilingIndex.accepted_zone`;
    ``primary_document`` is a file name in the filing's folder (None: none given); ``size`` in bytes."""

    adsh: str
    cik: int
    form: str
    filed: str
    period: str | None
    accepted: str
    primary_document: str | None
    description: str | None
    xbrl: bool
    inline_xbrl: bool
    size: int | None


@dataclass(frozen=True)
class FilingIndex:
    """A company's submissions file read: CIK, name, tickers, the zone its acceptance times were read in
    (``America/New_York`` or ``UTC``: see :func:`acceptance_zone`), and its filings as SEC lists them: first
    ``filings.recent`` (the latest 1,000 filings or the last year, whichever is more), newest first, then the filings of
    each older page of ``pages`` (:func:`index_pages`) found beside the file in the cache, each page read in its own
    zone; ``listed``: the older pages the file lists (:func:`index_pages`)."""

    cik: int
    name: str
    tickers: tuple[str, ...]
    accepted_zone: str
    entries: tuple[IndexEntry, ...]
    pages: tuple[str, ...] = ()
    listed: tuple[IndexPage, ...] = ()


@dataclass(frozen=True)
class IndexPage:
    """An older page of a company's filing index as its submissions list it under ``filings.files``: the file name,
    how many filings it holds, and the first and last filing dates it spans (``YYYY-MM-DD``; None when not given)."""

    name: str
    filings: int | None
    filed_from: str | None
    filed_to: str | None


def index_pages(doc: Any, path: Path) -> tuple[IndexPage, ...]:
    """The older pages of the filing index a submissions file lists (``filings.files``), in its order (edgartools reads
    the same list: ``Entity._load_older_filings``; its local storage merges the pages kept beside the file); ``doc``:
    the file parsed, ``path``: where it was read (for messages).

    Raises:
        EdgarError: not a submissions file; a page that is not EDGAR's ``CIK##########-submissions-###.json`` of
            this company (a path, another CIK), or a date that is not ``YYYY-MM-DD``.
    """
    try:
        cik = int(doc["cik"])
        files = doc["filings"].get("files") or []
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise EdgarError(f"{path}: not an EDGAR submissions file (cik, filings): {exc}") from None
    if not isinstance(files, list):
        raise EdgarError(f"{path}: filings.files is not a list")
    pages = []
    for i, f in enumerate(files):
        name = f.get("name") if isinstance(f, dict) else None
        m = PAGE_NAME.fullmatch(name) if isinstance(name, str) else None
        if m is None or int(m.group(1)) != cik:
            raise EdgarError(f"{path}: filings.files[{i}].name: {name!r} is not a page of CIK {cik}'s filing index")
        first, last = (
            _day(f.get(k), path, f"filings.files[{i}].{k}", optional=True) for k in ("filingFrom", "filingTo")
        )
        count = f.get("filingCount")
        pages.append(
            IndexPage(
                m.group(0),
                count if isinstance(count, int) else None,
                first.isoformat() if first else None,
                last.isoformat() if last else None,
            )
        )
    return tuple(pages)


def page_path(cache_dir: Path, name: str) -> Path:
    """Where the cache keeps an older page of a filing index: beside the company's submissions file, under its EDGAR
    name (edgartools' local-storage layout, which ``edgar.entity.submissions.load_company_submissions_from_local``
    merges)."""
    return Path(cache_dir).expanduser() / SUBMISSIONS_DIR / name


def submissions_page(query: str, cik: int, page: IndexPage, config: EdgarConfig, refresh: bool = False) -> Fetched:
    """An older page of company ``cik``'s filing index in the cache (:func:`page_path`), requested when it is not there
    (or ``refresh``) where edgartools asks for older filings (``<data URL>/submissions/<name>``, its
    ``Entity._load_older_filings``); ``config.offline`` never requests.

    Raises:
        ConfigError, EdgarError: as :func:`companyfacts` (404: EDGAR has no such page).
    """

    def url() -> str:
        from edgar.config import SEC_DATA_URL

        return f"{SEC_DATA_URL}/submissions/{page.name}"

    path = page_path(config.cache_dir, page.name)
    what = f"filing index page {page.name}"
    return _cached(query, cik, path, url, what, config, refresh, _json_with("accessionNumber"))


def acceptance_zone(rows: Iterable[tuple[str, date, datetime]]) -> ZoneInfo:
    """The zone a submissions file's ``acceptanceDateTime`` wall times are in, from ``(form, filing date, naive
    acceptance time)`` of its filings.

    SEC labels the times ``Z``, but files fetched before 2026 give New York time under that label and later ones
    UTC (edgartools' test data holds both: Alzamend Neuro's 10-Q 0001214659-25-017793 accepted
    ``2025-12-09T16:30:59.000Z`` in a response of 2026-03-10, ``2025-12-09T21:30:59.000Z`` in one of 2026-06-20).
    EDGAR's rule tells them apart: a 10-K, 10-Q or 8-K accepted by 17:30 New York time on a weekday gets that day as
    its filing date, one accepted later the next business day. The zone under which fewer filings break the rule is
    taken; on a tie (no filing tells) New York, the later of the two readings, so text is never dated before it
    was public.
    """
    misses = dict.fromkeys(ACCEPTANCE_ZONES, 0)
    for form, filed, naive in rows:
        if form not in EVIDENCE_FORMS:
            continue
        for name, zone in ACCEPTANCE_ZONES.items():
            local = naive.replace(tzinfo=zone).astimezone(NEW_YORK)
            same_day = local.weekday() < 5 and local.time() <= FILING_CUTOFF
            if not (filed == local.date() if same_day else filed > local.date()):
                misses[name] += 1
    name = "UTC" if misses["UTC"] < misses["America/New_York"] else "America/New_York"
    return ACCEPTANCE_ZONES[name]


def _column(recent: dict[str, Any], field: str, n: int, path: Path, where: str) -> list[Any]:
    values = recent.get(field)
    if not isinstance(values, list) or len(values) != n:
        got = f"{len(values)} values" if isinstance(values, list) else "missing"
        raise EdgarError(f"{path}: {where}{field}: {got}, expected a list of {n} (one per accessionNumber)")
    return values


def _day(text: Any, path: Path, at: str, optional: bool = False) -> date | None:
    if optional and text in (None, ""):
        return None
    try:
        return date.fromisoformat(str(text))
    except ValueError:
        raise EdgarError(f"{path}: {at}: {text!r} is not a date (YYYY-MM-DD)") from None


def read_submissions(path: Path) -> FilingIndex:
    """A submissions file (``CIK##########.json`` as SEC serves it) as a :class:`FilingIndex`, with the filings of its
    older pages (:func:`index_pages`) that are in the cache beside it (:func:`page_path`; a page not there is left
    out), after ``filings.recent`` in the order the file lists them, as edgartools merges them; a filing listed twice
    is kept once, where it comes first.

    Raises:
        EdgarError: not JSON, no ``cik`` or ``filings.recent``, columns of unequal length, or a field that is not
            what SEC gives (an accession number, a date, an acceptance time, a plain file name); the message names
            the file and the field (``filings.recent.filingDate[12]``, a page's ``filingDate[12]``).
    """
    try:
        doc = json.loads(Path(path).read_bytes())
        recent = doc["filings"]["recent"]
        cik = int(doc["cik"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise EdgarError(f"{path}: not an EDGAR submissions file (cik, filings.recent): {exc}") from None
    if not isinstance(recent, dict):
        raise EdgarError(f"{path}: filings.recent is not an object of columns")
    zone, entries = _read_columns(recent, cik, path, "filings.recent.")
    listed = index_pages(doc, path)
    read = []
    for page in listed:
        where = Path(path).parent / page.name
        if not where.is_file():
            continue
        try:
            columns = json.loads(where.read_bytes())
        except (OSError, ValueError) as exc:
            raise EdgarError(f"{where}: not an EDGAR filing index page: {exc}") from None
        if not isinstance(columns, dict):
            raise EdgarError(f"{where}: not an EDGAR filing index page (an object of columns)")
        entries += _read_columns(columns, cik, where, "")[1]
        read.append(page.name)
    seen: set[str] = set()
    kept = []
    for e in entries:
        if e.adsh not in seen:
            seen.add(e.adsh)
            kept.append(e)
    tickers = tuple(str(t) for t in doc.get("tickers") or () if t)
    return FilingIndex(cik, str(doc.get("name") or ""), tickers, str(zone), tuple(kept), tuple(read), listed)


def _read_columns(recent: dict[str, Any], cik: int, path: Path, where: str) -> tuple[ZoneInfo, tuple[IndexEntry, ...]]:
    """The filings of one table of columns (``filings.recent`` of a submissions file, or an older page, whose
    columns are its top level; ``where`` prefixes the field names in messages) and the zone its acceptance times
    were read in (:func:`acceptance_zone`, over this table's filings alone)."""
    adshs = recent.get("accessionNumber")
    if not isinstance(adshs, list):
        raise EdgarError(f"{path}: {where}accessionNumber is missing")
    n = len(adshs)
    cols = {f: _column(recent, f, n, path, where) for f in ("form", "filingDate", "reportDate", "acceptanceDateTime")}
    optional: dict[str, list[Any]] = {}
    for f in OPTIONAL_COLUMNS:
        values = recent.get(f)
        optional[f] = values if isinstance(values, list) and len(values) == n else [None] * n
    raw = []
    for i, adsh in enumerate(adshs):
        at = f"{where}{{}}[{i}]"
        if not isinstance(adsh, str) or not ADSH.fullmatch(adsh):
            raise EdgarError(f"{path}: {at.format('accessionNumber')}: {adsh!r} is not ##########-##-######")
        form = cols["form"][i]
        if not isinstance(form, str) or not form.strip():
            raise EdgarError(f"{path}: {at.format('form')}: {form!r} is not a form type")
        filed = _day(cols["filingDate"][i], path, at.format("filingDate"))
        period = _day(cols["reportDate"][i], path, at.format("reportDate"), optional=True)
        text = cols["acceptanceDateTime"][i]
        try:
            naive = datetime.fromisoformat(str(text).removesuffix("Z")).replace(tzinfo=None)
        except ValueError:
            raise EdgarError(f"{path}: {at.format('acceptanceDateTime')}: {text!r} is not a date and time") from None
        primary = optional["primaryDocument"][i] or None
        if primary is not None and not PLAIN_NAME.fullmatch(str(primary)):
            primary = None  # a document in a subfolder (an XSL rendering of a Form 4): no file name to keep
        raw.append((adsh, form.strip(), filed, period, naive, primary, i))
    zone = acceptance_zone((form, filed, naive) for _, form, filed, _, naive, _, _ in raw if filed)
    entries = tuple(
        IndexEntry(
            adsh=adsh,
            cik=cik,
            form=form,
            filed=filed.isoformat() if filed else "",
            period=period.isoformat() if period else None,
            accepted=naive.replace(tzinfo=zone).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            primary_document=primary,
            description=optional["primaryDocDescription"][i] or None,
            xbrl=bool(optional["isXBRL"][i]),
            inline_xbrl=bool(optional["isInlineXBRL"][i]),
            size=optional["size"][i] if isinstance(optional["size"][i], int) else None,
        )
        for adsh, form, filed, period, naive, primary, i in raw
    )
    return zone, entries


def document_path(cache_dir: Path, entry: IndexEntry) -> Path:
    """Where the cache keeps a filing's primary document: ``documents/CIK##########/<accession>_<file name>`` (the
    accession makes the file name, and so the text document's id, unique)."""
    return (
        Path(cache_dir).expanduser() / DOCUMENTS_DIR / f"CIK{entry.cik:010d}" / f"{entry.adsh}_{entry.primary_document}"
    )


def document(query: str, entry: IndexEntry, config: EdgarConfig, refresh: bool = False) -> Fetched:
    """A filing's primary document (``www.sec.gov/Archives/edgar/data/<cik>/<accession digits>/<file>``) in the
    cache, requested from EDGAR when it is not there (or ``refresh``); ``config.offline`` never requests.

    Raises:
        ValueError: ``entry`` has no primary document.
        ConfigError, EdgarError: as :func:`companyfacts` (404: EDGAR has no such document).
    """
    name = entry.primary_document
    if name is None:
        raise ValueError(f"{entry.adsh}: the filing index names no primary document")

    def url() -> str:
        from edgar.urls import build_archive_url

        return build_archive_url(f"data/{entry.cik}/{entry.adsh.replace('-', '')}/{name}")

    path = document_path(config.cache_dir, entry)
    what = f"document {name} of filing {entry.adsh}"
    return _cached(query, entry.cik, path, url, what, config, refresh, _not_empty)
