"""``finkg fetch``: a user's companies from SEC EDGAR (through edgartools, :mod:`ingest.sec.edgar`) into the graph.

For each company, in this order, every response fetched (or found in ``[edgar] cache_dir``) before the graph changes:

- **facts**: its companyfacts, loaded by the companyfacts loader every other companyfacts file goes through
  (:func:`finkg.pipelines.sec.ingest_companyfacts`), unless the company's facts were loaded from the same response
  before (its companyfacts watermark, :func:`load_companyfacts`): a fetch the cache serves with nothing new writes
  nothing;
- **the filing index**: its submissions, one ``(:Company)-[:SUBMITTED]->(:Submission {adsh})`` per filing of the
  forms asked (``10-K``, ``10-Q`` unless told otherwise), with form, filed date, period of report, acceptance time
  (UTC) and primary document; with the filings of the older pages of the index (``filings.files``, for a company
  with more than 1,000 filings) that the window reaches (:func:`pages_needed`), fetched as edgartools fetches them. A per-company, per-form watermark ``(:Company)-[:FETCHED_UP_TO]->(:EdgarWatermark)``
  (the latest filing fetched, by acceptance time) makes the next fetch consider only filings accepted after it;
  ``since`` replaces the watermark (filings filed on or after that day), ``until`` caps the window;
- **text**: for each 10-K or 10-Q of the window whose text is not in the graph yet, its primary document (fetched
  into the cache) through the text ingest pipeline (:func:`finkg.pipelines.text.ingest_text`, the SEC filing
  reader of :mod:`ingest.text.filing_text`) with the acceptance time as its availability, then
  ``(:Submission)-[:HAS_DOCUMENT]->(:Document)``.

The watermark moves last, after the filings and their text are written, so a fetch killed half-way leaves the
window where it was and a rerun completes it; every write is a MERGE, so a rerun adds nothing twice.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from finkg.config import Settings, config_path
from finkg.pipelines import sec, text
from ingest import runs
from ingest.sec import edgar
from ingest.sec.conflicts import OnConflict
from kg import BatchWriter, Graph, cypher
from kg.progress import StageProgress, stage

HTML_SUFFIXES = (".htm", ".html", ".xhtml")


def edgar_config(settings: Settings, offline: bool = False) -> edgar.EdgarConfig:
    """``[edgar]`` as :class:`ingest.sec.edgar.EdgarConfig`; online, the identity is checked first.

    Raises:
        ConfigError: online without ``[edgar] identity`` (or one that is not a name and an email): one line.
    """
    e = settings.edgar
    identity = e.identity
    if not offline:
        identity = edgar.check_identity(identity, str(config_path()))
    return edgar.EdgarConfig(
        identity=identity,
        cache_dir=e.cache_dir,
        rate_limit=e.rate_limit,
        base_url=e.base_url,
        data_url=e.data_url,
        offline=offline,
    )


@dataclass(frozen=True)
class FetchOptions:
    """What to fetch: ``facts`` (companyfacts), ``filings`` (the filing index of ``forms``, filed on or after
    ``since`` (default: the company's watermark) and on or before ``until``), ``text`` (the primary documents of
    the window's 10-K and 10-Q filings); ``offline``: only the cache; ``refresh``: ask EDGAR again for the
    companyfacts and the index (documents never change once filed)."""

    facts: bool = True
    filings: bool = True
    text: bool = True
    forms: tuple[str, ...] = edgar.DEFAULT_FORMS
    since: date | None = None
    until: date | None = None
    offline: bool = False
    refresh: bool = False


@dataclass(frozen=True)
class FetchedCompany:
    """One company's responses in the cache: its companyfacts and its submissions (None: not asked for)."""

    query: str
    cik: int
    facts: edgar.Fetched | None
    submissions: edgar.Fetched | None


@dataclass
class FetchSummary:
    """The summary of one ``finkg fetch``: one row per company and file of the facts loaded (``facts``), one per
    company of the filing index and its text (``filings``: see :func:`load_filings`)."""

    facts: list[dict[str, Any]] = field(default_factory=list)
    filings: list[dict[str, Any]] = field(default_factory=list)


def fetch_files(
    settings: Settings,
    companies: Sequence[str],
    options: FetchOptions | None = None,
    *,
    progress: StageProgress | None = None,
) -> list[FetchedCompany]:
    """Each company's companyfacts and submissions (a ticker or a CIK) from the EDGAR cache, requested from EDGAR
    when they are not there (or ``options.refresh``; ``options.offline``: never). Nothing is written to the graph,
    so a company that cannot be fetched is named before the graph changes; a company asked twice (its ticker and its
    CIK) comes once.

    Raises:
        ConfigError: no identity (online), a name that is neither a ticker nor a CIK, ``offline`` with ``refresh``.
        ingest.sec.edgar.EdgarError: an unknown company, no companyfacts or submissions at EDGAR, a failed request,
            offline and not in the cache.
    """
    o = options or FetchOptions()
    config = edgar_config(settings, o.offline)
    advance = stage(progress, "fetch (SEC EDGAR)", len(companies))
    fetched: dict[int, FetchedCompany] = {}
    for query in companies:
        facts = edgar.companyfacts(query, config, refresh=o.refresh) if o.facts else None
        index = edgar.submissions(query, config, refresh=o.refresh) if o.filings else None
        cik = facts.cik if facts else index.cik if index else edgar.resolve(query, config)
        fetched.setdefault(cik, FetchedCompany(query, cik, facts, index))
        advance(1)
    return list(fetched.values())


def load_fetched(
    graph: Graph,
    settings: Settings,
    fetched: Sequence[FetchedCompany],
    options: FetchOptions | None = None,
    *,
    progress: StageProgress | None = None,
    on_conflict: OnConflict = "refuse",
) -> FetchSummary:
    """The fetched companies into the graph: their companyfacts as ``finkg ingest companyfacts`` loads a file (one
    ``(:IngestRun {kind: "sec-companyfacts"})`` per file, conflicts as ``on_conflict`` says), then their filing
    index and text (:func:`load_filings`).

    Returns:
        ``facts``: one row per company: ``company`` (as asked), ``cik``, ``from`` (``EDGAR``: requested now;
        ``cache``), then the columns of :func:`finkg.pipelines.sec.summary_row`; ``filings``: the rows of
        :func:`load_filings`.

    Raises:
        ingest.sec.conflicts.SourceConflict: as in :func:`finkg.pipelines.sec.ingest_companyfacts`.
        ingest.sec.edgar.EdgarError: a submissions file that cannot be read, a document that cannot be fetched.
        ingest.text.documents.TextFormatError: a primary document the filing reader cannot read.
    """
    o = options or FetchOptions()
    summary = FetchSummary()
    for got in fetched:
        if got.facts is not None:
            row = load_companyfacts(graph, settings, got.cik, got.facts.path, o.refresh, progress, on_conflict)
            summary.facts.append({"company": got.query, "cik": got.cik, "from": _origin(got.facts), **row})
    asked = [(got.cik, edgar.parse_company(got.query)) for got in fetched]
    tickers = [{"cik": cik, "ticker": q} for cik, q in asked if isinstance(q, str)]  # asked by its ticker, not a CIK
    if tickers:
        graph.write(cypher.SET_COMPANY_TICKERS, {"rows": tickers})
    config = edgar_config(settings, o.offline)
    for got in fetched:
        if got.submissions is not None:
            summary.filings.append(load_filings(graph, settings, got, config, o, progress=progress))
    return summary


def load_companyfacts(
    graph: Graph,
    settings: Settings,
    cik: int,
    path: Path,
    refresh: bool = False,
    progress: StageProgress | None = None,
    on_conflict: OnConflict = "refuse",
) -> dict[str, Any]:
    """Company ``cik``'s companyfacts file into the graph as ``finkg ingest companyfacts`` loads it, unless its facts
    were loaded from this very response before: the company's watermark (``companyfacts_sha256``, the SHA-256 of the
    response last loaded, with its run finished) equals the file's, and ``refresh`` is not asked. Such a file is
    neither read nor written again: a fetch served by the cache, with nothing new, writes nothing. A loaded file
    moves the watermark, written after its run is recorded done (a load killed before leaves the watermark where it
    was, and the next fetch loads the file again).

    Returns:
        ``loaded`` (``yes``, or ``unchanged``: skipped), then the columns of
        :func:`finkg.pipelines.sec.summary_row` (skipped: the counts of the run that loaded the file, no new facts,
        no conflicts, the seconds of the check).

    Raises:
        As :func:`finkg.pipelines.sec.ingest_companyfacts`.
    """
    t0 = time.perf_counter()
    with path.open("rb") as fh:
        digest = hashlib.file_digest(fh, "sha256").hexdigest()
    rid = runs.run_id(sec.COMPANYFACTS_KIND, digest)
    if not refresh:
        hit = graph.read(cypher.COMPANYFACTS_LOADED, {"cik": cik, "sha256": digest, "run": rid})
        if hit and hit[0]["counts"]:
            counts = Counter(json.loads(hit[0]["counts"]))
            counts["conflicts"] = 0
            return {"loaded": "unchanged", **sec.summary_row(path, counts, 0, time.perf_counter() - t0, rid)}
    [row] = sec.ingest_companyfacts(graph, settings, [path], progress=progress, on_conflict=on_conflict)
    runs.checkpoint("companyfacts-watermark")
    graph.write(cypher.SET_COMPANYFACTS_LOADED, {"cik": cik, "sha256": digest, "run": rid, "at": runs.now()})
    return {"loaded": "yes", **row}


def _origin(fetched: edgar.Fetched) -> str:
    return "EDGAR" if fetched.requested else "cache"


def window(entries: Sequence[edgar.IndexEntry], marks: dict[str, str], options: FetchOptions) -> list[edgar.IndexEntry]:
    """The entries a fetch considers: of ``options.forms``, filed on or after ``options.since`` (without it:
    accepted after the form's watermark in ``marks``, ``{form: acceptance time, ISO UTC}``; all when the form has
    none) and filed on or before ``options.until``."""
    since = options.since.isoformat() if options.since else None
    until = options.until.isoformat() if options.until else None
    return [
        e
        for e in entries
        if e.form in options.forms
        and (e.filed >= since if since else e.accepted > marks.get(e.form, ""))
        and (until is None or e.filed <= until)
    ]


def _submission_row(e: edgar.IndexEntry) -> dict[str, Any]:
    props = {
        "cik": e.cik,
        "form": e.form,
        "filed": e.filed,
        "period": e.period,
        "accepted": e.accepted,
        "primary_document": e.primary_document,
        "description": e.description,
        "xbrl": e.xbrl,
        "inline_xbrl": e.inline_xbrl,
        "size": e.size,
        "source": "sec-edgar-submissions",
    }
    return {"cik": e.cik, "adsh": e.adsh, "props": props}


def load_filings(
    graph: Graph,
    settings: Settings,
    got: FetchedCompany,
    config: edgar.EdgarConfig,
    options: FetchOptions,
    *,
    progress: StageProgress | None = None,
) -> dict[str, Any]:
    """One company's filing index into the graph, then the text of its window's 10-K and 10-Q filings, then its
    watermarks (see the module docstring). The older pages of the index the window reaches (:func:`pages_needed`)
    are fetched first (from the cache when there, unless ``options.refresh``), before anything of the company is
    written.

    Returns:
        The company's row: ``company``, ``cik``, ``from`` (the index and its pages: ``EDGAR`` when any was requested
        now, else ``cache``), ``forms``,
        ``listed`` (filings of those forms in the index) = ``new`` (written now) + ``unchanged`` (in the graph
        before) + ``skipped`` (outside the window: before ``since`` or the watermark, after ``until``),
        ``documents`` (primary documents read into text now), ``chunks`` (their text chunks), ``no text`` (10-K
        or 10-Q filings of the window whose primary document is not HTML), ``watermark`` (per form, the latest
        acceptance time fetched), ``older pages`` (``<read> of <listed>``: the older pages of the index read into it,
        of those it lists), ``s`` (seconds).

    Raises:
        ValueError: ``got`` has no submissions file.
        ingest.sec.edgar.EdgarError: the submissions file or a page cannot be read; a page not in the cache offline,
            or one that cannot be fetched (nothing of the company written); a document cannot be fetched (the
            filings are written, the watermark is not moved: a rerun resumes).
        ingest.text.documents.TextFormatError: a primary document the filing reader cannot read.
    """
    t0 = time.perf_counter()
    if got.submissions is None:
        raise ValueError(f"{got.query}: no filing index was fetched (fetch_files with filings=False)")
    index = edgar.read_submissions(got.submissions.path)
    cik = index.cik
    stored = {r["adsh"]: r for r in graph.read(cypher.EDGAR_SUBMISSIONS, {"cik": cik})}
    marks = {r["form"]: r["accepted"] for r in graph.read(cypher.EDGAR_WATERMARKS, {"cik": cik})}
    pages = pages_needed(index.listed, marks, options)
    fetched = [edgar.submissions_page(got.query, cik, p, config, refresh=options.refresh) for p in pages]
    pages_requested = any(f.requested for f in fetched)
    requested = got.submissions.requested or pages_requested
    if pages_requested or any(p.name not in index.pages for p in pages):
        index = edgar.read_submissions(got.submissions.path)  # with the pages now in the cache
    listed = [e for e in index.entries if e.form in options.forms]
    considered = window(listed, marks, options)
    new = [e for e in considered if e.adsh not in stored]
    graph.write(cypher.MERGE_EDGAR_COMPANIES, {"rows": [{"cik": cik, "name": index.name}]})
    writer = BatchWriter(graph, batch_size=settings.writer.batch_size, workers=1)
    writer.run_batches(cypher.MERGE_SUBMISSIONS, [_submission_row(e) for e in new])
    runs.checkpoint("edgar-text")
    documents = chunks = no_text = 0
    if options.text:
        todo = [
            e for e in considered if e.form in edgar.TEXT_FORMS and not (e.adsh in stored and stored[e.adsh]["text"])
        ]
        readable = [e for e in todo if (e.primary_document or "").lower().endswith(HTML_SUFFIXES)]
        no_text = len(todo) - len(readable)
        advance = stage(progress, f"{got.query}: filing text", len(readable))
        for e in readable:
            doc = edgar.document(got.query, e, config)
            rows, _ = text.ingest_text(
                graph,
                settings,
                [doc.path],
                text.TextIngestOptions(
                    kind="html", ticker=index.tickers[0] if index.tickers else None, accepted=e.accepted
                ),
            )
            graph.write(cypher.LINK_SUBMISSION_DOCUMENTS, {"rows": [{"adsh": e.adsh, "run": rows[0]["run"]}]})
            documents += 1
            chunks += int(rows[0]["chunks"])
            advance(1)
    runs.checkpoint("edgar-watermark")
    marks = _advance_watermarks(graph, cik, marks, listed, set(stored) | {e.adsh for e in new})
    return {
        "company": got.query,
        "cik": cik,
        "from": "EDGAR" if requested else "cache",
        "forms": ",".join(options.forms),
        "listed": len(listed),
        "new": len(new),
        "unchanged": sum(1 for e in listed if e.adsh in stored),
        "skipped": sum(1 for e in listed if e.adsh not in stored) - len(new),
        "documents": documents,
        "chunks": chunks,
        "no text": no_text,
        "watermark": ", ".join(f"{form} {accepted}" for form, accepted in sorted(marks.items())),
        "older pages": f"{len(index.pages)} of {len(index.listed)}",
        "s": round(time.perf_counter() - t0, 1),
    }


def pages_needed(
    pages: Sequence[edgar.IndexPage], marks: dict[str, str], options: FetchOptions
) -> list[edgar.IndexPage]:
    """The older pages of a filing index (:func:`ingest.sec.edgar.index_pages`) that a fetch's window reaches: those
    holding filings filed on or after its start, and none filed after ``options.until``. The start is
    ``options.since``; without it, the day before the earliest watermark of the forms asked (a filing is dated no
    earlier than the New York day it was accepted), or none (every page) when one of those forms has no watermark
    yet: a company's first fetch reads its whole index, a later one only the pages its watermark does not pass."""
    if options.since:
        start: str | None = options.since.isoformat()
    elif all(form in marks for form in options.forms):
        earliest = min(marks[form] for form in options.forms)
        start = (date.fromisoformat(earliest[:10]) - timedelta(days=1)).isoformat()
    else:
        start = None
    until = options.until.isoformat() if options.until else None
    return [
        p
        for p in pages
        if (start is None or p.filed_to is None or p.filed_to >= start)
        and (until is None or p.filed_from is None or p.filed_from <= until)
    ]


def _advance_watermarks(
    graph: Graph, cik: int, marks: dict[str, str], listed: Sequence[edgar.IndexEntry], stored: set[str]
) -> dict[str, str]:
    """Move each form's watermark (``marks``: ``{form: acceptance time}``) to the latest accepted filing of
    ``listed`` now in the graph, never back; returns the marks."""
    latest: dict[str, edgar.IndexEntry] = {}
    for e in listed:
        if e.adsh in stored and (e.form not in latest or e.accepted > latest[e.form].accepted):
            latest[e.form] = e
    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    rows = [
        {"id": f"{cik}:{form}", "cik": cik, "form": form, "accepted": e.accepted, "filed": e.filed, "adsh": e.adsh}
        | {"at": at}
        for form, e in sorted(latest.items())
        if e.accepted > marks.get(form, "")
    ]
    if rows:
        graph.write(cypher.SET_EDGAR_WATERMARKS, {"rows": rows})
    return {**marks, **{r["form"]: r["accepted"] for r in rows}}
