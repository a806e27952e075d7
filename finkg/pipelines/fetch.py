"""``finkg fetch``: a user's companies from SEC EDGAR (through edgartools, :mod:`ingest.sec.edgar`) into the fact
model, by the companyfacts loader every other companyfacts file goes through (:func:`finkg.pipelines.sec.ingest_companyfacts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from finkg.config import Settings, config_path
from finkg.pipelines import sec
from ingest.sec import edgar
from ingest.sec.conflicts import OnConflict
from kg import Graph
from kg.progress import StageProgress, stage


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


def fetch_files(
    settings: Settings,
    companies: Sequence[str],
    *,
    offline: bool = False,
    refresh: bool = False,
    progress: StageProgress | None = None,
) -> list[edgar.Fetched]:
    """Each company's companyfacts file (a ticker or a CIK) from the EDGAR cache, requested from EDGAR when it is
    not there (or ``refresh``; ``offline``: never). Nothing is written to the graph, so a company that cannot be
    fetched is named before the graph changes; a company asked twice (its ticker and its CIK) comes once.

    Raises:
        ConfigError: no identity (online), a name that is neither a ticker nor a CIK, ``offline`` with ``refresh``.
        ingest.sec.edgar.EdgarError: an unknown company, no companyfacts at EDGAR, a failed request, offline and
            not in the cache.
    """
    config = edgar_config(settings, offline)
    advance = stage(progress, "fetch (SEC EDGAR)", len(companies))
    fetched: dict[int, edgar.Fetched] = {}
    for query in companies:
        got = edgar.companyfacts(query, config, refresh=refresh)
        fetched.setdefault(got.cik, got)
        advance(1)
    return list(fetched.values())


def load_fetched(
    graph: Graph,
    settings: Settings,
    fetched: Sequence[edgar.Fetched],
    *,
    progress: StageProgress | None = None,
    on_conflict: OnConflict = "refuse",
) -> list[dict[str, Any]]:
    """The fetched files into the graph, as ``finkg ingest companyfacts`` loads a file: one
    ``(:IngestRun {kind: "sec-companyfacts"})`` per file, conflicts as ``on_conflict`` says.

    Returns:
        One row per company: ``company`` (as asked), ``cik``, ``from`` (``EDGAR``: requested now; ``cache``),
        then the columns of :func:`finkg.pipelines.sec.summary_row`.

    Raises:
        ingest.sec.conflicts.SourceConflict: as in :func:`finkg.pipelines.sec.ingest_companyfacts`.
    """
    rows = []
    for got in fetched:
        [row] = sec.ingest_companyfacts(graph, settings, [got.path], progress=progress, on_conflict=on_conflict)
        rows.append({"company": got.query, "cik": got.cik, "from": "EDGAR" if got.requested else "cache", **row})
    return rows
