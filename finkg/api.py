"""finkg's public Python API: what the command line calls and what a notebook user imports.

Every function takes keyword options with the command line's defaults, reads the settings
(:func:`finkg.config.load_settings`) when none are given, opens a graph handle with
:func:`open_graph` when none is given (and closes it afterwards), and reports long work through
``progress`` (a :class:`kg.progress.StageProgress`; None: silent). Errors are
:class:`kg.errors.FinkgError` subclasses whose message names what failed and what to do.

Example::

    import kg.cypher
    from finkg import api

    with api.open_graph() as g:
        api.apply_schema(graph=g)
        rows = api.cypher(kg.cypher.EXAMPLE_QUERY, graph=g)  # a read-only query

Heavy libraries (the Neo4j driver, torch, scikit-learn, pandas) are imported inside the
functions, so ``import finkg.api`` is cheap.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.errors import ConfigError, EvaluationError, FinkgError, GenerationError
from kg.progress import StageProgress

if TYPE_CHECKING:
    from finkg.config import Settings
    from finkg.cost import BatchCost
    from finkg.eval.memos import EvalResult
    from finkg.pipelines.bulk import BulkResult
    from finkg.pipelines.clusters import ClusterSummary
    from finkg.pipelines.fetch import FetchSummary
    from finkg.pipelines.graph import ExportSummary, GraphAnalysis
    from finkg.pipelines.kg_build import ExtractSummary
    from finkg.pipelines.memos import MemoRunSummary
    from finkg.pipelines.reports import BatchSummary
    from generation.agent.page import PageAnswer
    from generation.llm import LLMClient
    from kg import Graph
    from kg.browser import SavedQuery
    from kg.schema import ApplyReport


def load_settings() -> Settings:
    """:func:`finkg.config.load_settings` (imported on first use: pydantic-settings is slow to import)."""
    from finkg.config import load_settings as load

    return load()


__all__ = [
    "BrowserWorkspace",
    "DbStatus",
    "ExtractResult",
    "ReportBatchResult",
    "apply_schema",
    "audit_evidence",
    "browser_query",
    "browser_style",
    "browser_url",
    "browser_workspace",
    "bulk_served_hint",
    "cluster",
    "cypher",
    "eval_extraction",
    "eval_feedback",
    "eval_memos",
    "eval_reports",
    "eval_retrieval",
    "eval_tatqa",
    "extract",
    "fact_history",
    "fetch",
    "graph_analyze",
    "graph_export",
    "indicator_facts",
    "ingest_akshare",
    "ingest_companyfacts",
    "ingest_sec",
    "ingest_sec_bulk",
    "ingest_text",
    "ingest_xbrl",
    "memo_batch",
    "memory_cells",
    "open_graph",
    "report_batch",
    "schema_status",
]


def open_graph(settings: Settings | None = None) -> Graph:
    """The one way to get a graph handle: a :class:`kg.Graph` on the configured Neo4j.

    Args:
        settings: the settings to connect with (default: :func:`finkg.config.load_settings`).

    Returns:
        A :class:`kg.Graph` (a context manager; ``close()`` it, or use ``with``). Connecting is
        lazy: the first query raises :class:`kg.errors.GraphUnavailable` (naming the URI and
        ``finkg neo4j start``) or :class:`kg.errors.GraphAuthError`.

    Raises:
        ConfigError: no Neo4j password is configured (run ``finkg init``).
    """
    from kg import Graph

    s = settings or load_settings()
    return Graph(s.uri, s.neo4j.user, s.password(), s.neo4j.database)


@contextmanager
def _opened(graph: Graph | None, settings: Settings | None) -> Iterator[tuple[Graph, Settings]]:
    """``(graph, settings)``: the given ones, or fresh ones (a graph opened here is closed here)."""
    s = settings or load_settings()
    if graph is not None:
        yield graph, s
        return
    g = open_graph(s)
    try:
        yield g, s
    except BaseException:
        # Ctrl-C while a query's worker thread still holds a connection: closing it may fail (BufferError in the
        # driver's socket buffer); the interruption, not the close, is what the user must see (exit 130)
        with contextlib.suppress(Exception):
            g.close()
        raise
    g.close()


@contextmanager
def _registry(graph: Graph | None, settings: Settings) -> Iterator[Graph]:
    """The graph a training run registers its model in (``(:TunedModel)``), checked before training starts:
    the registry is written after training, so an unreachable server fails now, not after an hour of it.

    Raises:
        GraphUnavailable: the server does not answer.
    """
    with _opened(graph, settings) as (g, _):
        g.verify()
        yield g


def _embedder(s: Settings, directory: Path | None = None) -> Any:
    """The ``[embedding]`` backend's embedder for ``directory`` (default ``[embedding] model_path``).

    Raises:
        ModelError: the model does not load.
    """
    from retrieval.embeddings import make_embedder

    return make_embedder(
        directory or s.embedding.model_path, s.embedding.backend, s.embedding.batch_size, s.embedding.device
    )


# --------------------------------------------------------------------------- schema


@dataclass
class DbStatus:
    """The recorded schema version, the code's version and every constraint and index (rows of dicts)."""

    version: Any
    code_version: Any
    constraints: list[dict[str, Any]]
    indexes: list[dict[str, Any]]
    run_counts: list[dict[str, Any]] = field(default_factory=list)
    unfinished_runs: list[dict[str, Any]] = field(default_factory=list)
    hidden_filings: int = 0


def apply_schema(*, graph: Graph | None = None, settings: Settings | None = None) -> ApplyReport:
    """Create every constraint and index (idempotent, versioned); ``finkg db init``."""
    from kg import schema

    with _opened(graph, settings) as (g, _):
        return schema.apply_schema(g)


def schema_status(*, graph: Graph | None = None, settings: Settings | None = None) -> DbStatus:
    """The schema version recorded in the graph, the constraints and indexes, the ingest runs per status,
    the runs that did not finish (``running``, ``failed``, ``interrupted``: those left running by a
    process that is gone are marked ``interrupted`` first) and the filings readers do not see yet;
    ``finkg db status``."""
    from ingest import runs
    from kg import cypher, schema

    with _opened(graph, settings) as (g, _):
        version = schema.current_version(g)
        shown = schema.show_schema(g)
        runs.mark_interrupted(g)
        counts = g.read(cypher.INGEST_RUN_STATUS_COUNTS)
        unfinished = runs.list_runs(g, ("running", "failed", "interrupted"))
        hidden = g.read(cypher.HIDDEN_FILINGS)[0]["filings"]
    return DbStatus(
        version, schema.STEPS[-1].version, shown["constraints"], shown["indexes"], counts, unfinished, hidden
    )


# --------------------------------------------------------------------------- ingest


def _schema_ready(g: Graph) -> None:
    """Apply the schema when the graph is behind it (as ``finkg db init`` does): without the Fact key constraint an
    ingest's keyed MERGE scans every fact (measured here: 20,000 of 106,922 facts in 25 minutes, against the whole
    quarter in 33 s with it)."""
    from kg import schema

    if schema.current_version(g) < schema.STEPS[-1].version:
        schema.apply_schema(g)


def ingest_sec(
    paths: Sequence[Path],
    *,
    graph: Graph | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
    on_conflict: str = "refuse",
) -> Any:
    """SEC Financial Statement Data Sets ZIPs into the graph; returns the summary rows.

    ``on_conflict`` (``refuse``, ``keep``, ``replace``): what a file that would change facts another file wrote
    (same filing, other values) does (:mod:`ingest.sec.conflicts`).

    Raises:
        IngestError: a malformed file (named with file, line and field); a file refused for its conflicts
            (``SourceConflict``). ConfigError: an unknown ``on_conflict``.
    """
    from finkg.pipelines import sec
    from ingest.runs import source_files
    from ingest.sec.conflicts import mode

    chosen = mode(on_conflict)
    files = source_files(paths)  # before connecting: a wrong path is named even with no server running
    with _opened(graph, settings) as (g, s):
        _schema_ready(g)
        return sec.ingest_sec(g, s, files, progress=progress, on_conflict=chosen)


def ingest_sec_bulk(
    paths: Sequence[Path],
    *,
    database: str = "edgar",
    force: bool = False,
    csv_dir: Path | None = None,
    csv_only: bool = False,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
) -> BulkResult:
    """SEC FSDS ZIPs (or folders of them) into a new database of the local server with
    ``neo4j-admin database import full`` (``finkg ingest sec --bulk``): the nodes and relationships the
    transactional :func:`ingest_sec` writes, as CSV, imported offline (:mod:`finkg.pipelines.bulk`).

    The running server's own database is never the target; an existing database is replaced only with
    ``force``. The result is served once ``[neo4j] database`` names it and the server restarts
    (:func:`finkg.pipelines.bulk.served_hint`), then ``finkg db init`` adds the schema.

    Returns:
        :class:`finkg.pipelines.bulk.BulkResult` (per-archive summary, nodes and relationships per
        label and type, the tool's report, seconds).

    Raises:
        IngestError: a malformed archive (FsdsFormatError, named with member, line and column), no
            archive, overlapping archives, a remote ``[neo4j] uri``.
        GraphError: the database exists (no ``force``) or is the served one (DatabaseExists, DatabaseInUse),
            or the tool failed (ServerError).
    """
    from finkg.pipelines import bulk

    return bulk.bulk_import_sec(
        settings or load_settings(),
        list(paths),
        database=database,
        force=force,
        csv_dir=csv_dir,
        csv_only=csv_only,
        progress=progress,
    )


def bulk_served_hint(database: str, settings: Settings | None = None) -> str:
    """How to serve a bulk-imported ``database`` (one line for the command line to print)."""
    from finkg.pipelines import bulk

    return bulk.served_hint(settings or load_settings(), database)


def ingest_companyfacts(
    paths: Sequence[Path],
    *,
    on_conflict: str = "refuse",
    graph: Graph | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
) -> Any:
    """SEC companyfacts JSON files into the graph; returns the summary rows. Raises IngestError (also for a file
    refused for its conflicts, as :func:`ingest_sec`'s ``on_conflict`` says)."""
    from finkg.pipelines import sec
    from ingest.runs import source_files
    from ingest.sec.conflicts import mode

    chosen = mode(on_conflict)
    files = source_files(paths)
    with _opened(graph, settings) as (g, s):
        return sec.ingest_companyfacts(g, s, files, progress=progress, on_conflict=chosen)


def fetch(
    companies: Sequence[str],
    *,
    offline: bool = False,
    refresh: bool = False,
    facts: bool = True,
    filings: bool = True,
    text: bool = True,
    forms: Sequence[str] | None = None,
    since: date | None = None,
    until: date | None = None,
    graph: Graph | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
    on_conflict: str = "refuse",
) -> FetchSummary:
    """Companies (tickers or CIKs) from SEC EDGAR through edgartools into the graph (``finkg fetch``): each one's
    companyfacts (``facts``), loaded as :func:`ingest_companyfacts` loads a file; its filing index (``filings``:
    the filings of ``forms``, default 10-K and 10-Q, filed since the company's watermark, or ``since``, up to
    ``until``) and the text of their 10-K and 10-Q primary documents (``text``), point in time at their acceptance
    (:mod:`finkg.pipelines.fetch`). Responses are kept in ``[edgar] cache_dir``: one there is not requested again
    (``refresh``: ask EDGAR again for companyfacts and indexes; ``offline``: never ask, only the cache). SEC's
    fair-access rules are edgartools' (:mod:`ingest.sec.edgar`): the User-Agent ``[edgar] identity``, at most
    ``[edgar] rate_limit`` requests per second, retries with back-off.

    Returns:
        :class:`finkg.pipelines.fetch.FetchSummary`: ``facts``, one row per company (company, cik, from: ``EDGAR``
        or ``cache``, then the ingest summary's columns); ``filings``, one row per company (listed, new, unchanged,
        skipped, documents, chunks, watermark: :func:`finkg.pipelines.fetch.load_filings`).

    Raises:
        ConfigError: no ``[edgar] identity`` (checked before anything else, unless ``offline``); a name that is
            neither a ticker nor a CIK; an unknown ``on_conflict``; no form; ``since`` after ``until``; nothing to
            fetch (neither facts nor filings). IngestError: an unknown company, no companyfacts or submissions at
            EDGAR, a failed request, a response not in the cache (``offline``), a file refused for its conflicts,
            a primary document the filing reader cannot read.
    """
    from finkg.pipelines import fetch as pipeline
    from ingest.sec.conflicts import mode

    chosen = mode(on_conflict)
    s = settings or load_settings()
    if not companies:
        raise ConfigError("name at least one company: a ticker (AAPL) or a CIK (320193)")
    chosen_forms = tuple(dict.fromkeys(f.strip().upper() for f in (forms or pipeline.edgar.DEFAULT_FORMS)))
    if not chosen_forms or "" in chosen_forms:
        raise ConfigError(f"--forms {','.join(forms or ())!r}: name form types separated by commas, e.g. 10-K,10-Q")
    if since and until and since > until:
        raise ConfigError(f"--since {since} is after --until {until}: nothing to fetch")
    if not (facts or filings):
        raise ConfigError("--no-facts and --no-filings together leave nothing to fetch")
    options = pipeline.FetchOptions(
        facts=facts,
        filings=filings,
        text=text,
        forms=chosen_forms,
        since=since,
        until=until,
        offline=offline,
        refresh=refresh,
    )
    # every company fetched (or refused: no identity, unknown, offline and not cached) before connecting
    fetched = pipeline.fetch_files(s, companies, options, progress=progress)
    with _opened(graph, s) as (g, s):
        _schema_ready(g)
        return pipeline.load_fetched(g, s, fetched, options, progress=progress, on_conflict=chosen)


def ingest_xbrl(
    paths: Sequence[Path],
    *,
    accession: str | None = None,
    graph: Graph | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
    on_conflict: str = "refuse",
) -> Any:
    """XBRL instance documents into the graph; ``accession`` names the filing of a single file; ``on_conflict``
    as :func:`ingest_sec` has it.

    Raises:
        ConfigError: ``accession`` given with more than one file; an unknown ``on_conflict``. IngestError: a
            malformed file, or one refused for its conflicts.
    """
    from finkg.pipelines import sec
    from ingest.runs import source_files
    from ingest.sec.conflicts import mode

    if accession and len(paths) > 1:
        raise ConfigError("--accession names one filing: give one file with it")
    chosen = mode(on_conflict)
    files = source_files(paths)
    with _opened(graph, settings) as (g, s):
        return sec.ingest_xbrl(g, s, files, accession=accession, progress=progress, on_conflict=chosen)


def ingest_text(
    paths: Sequence[Path],
    *,
    kind: str = "auto",
    ticker: str | None = None,
    accepted: str | None = None,
    graph: Graph | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
) -> tuple[Any, list[str]]:
    """Text files (FOMC statements, filings, tweets) into Document and Chunk nodes.

    Returns:
        ``(summary rows, skipped-line warnings)``. Raises IngestError on an unreadable file.
    """
    from finkg.pipelines import text
    from ingest.text.documents import expand

    for path in paths:  # before connecting: a wrong path is named even with no server running
        expand(path)
    options = text.TextIngestOptions(kind=kind, ticker=ticker, accepted=accepted)
    with _opened(graph, settings) as (g, s):
        return text.ingest_text(g, s, list(paths), options, progress=progress)


def ingest_akshare(
    paths: Sequence[Path] = (),
    *,
    function: Sequence[str] = (),
    live: bool = False,
    start: date | None = None,
    end: date | None = None,
    save: Path | None = None,
    graph: Graph | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
) -> Any:
    """AKShare indicators: CSV files AKShare wrote (``function``: at most the one that wrote them),
    or ``live`` calls of the named functions (network). Raises IngestError (AkshareFormatError,
    AkshareUnavailable)."""
    from finkg.pipelines import indicators
    from ingest.runs import source_files

    files = source_files(paths)  # before connecting: a wrong path is named even with no server running
    with _opened(graph, settings) as (g, s):
        if live:
            return indicators.ingest_akshare_live(g, s, list(function), start, end, save, progress=progress)
        return indicators.ingest_akshare_files(g, s, files, function[0] if function else None, progress=progress)


# --------------------------------------------------------------------------- memos and reports


def memo_batch(
    accessions: Sequence[str] | None,
    *,
    systems: Sequence[str] = ("structured",),
    out: Path = Path("memos"),
    source: str | None = None,
    resume: bool = True,
    graph: Graph | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
    cost: BatchCost | None = None,
) -> list[MemoRunSummary]:
    """Desk-risk memos for ``accessions`` (None: every filing), one summary per system.

    Writes OUT/<system>/<adsh>.md (with its peer picture <adsh>.png), claims.jsonl and claims.csv and the audit
    trail in the graph. ``cost``: with ``structured-llm`` asked, said (and confirmed) with its memos still to write
    once the filings are read, before the LLM is called or anything written; their rate recorded at the end
    (:class:`finkg.cost.BatchCost`; the other systems use no LLM and are not counted).
    Raises GenerationError (MemoError): an unknown accession or system; LLMError for structured-llm.
    """
    from finkg.pipelines import memos
    from generation.llm import client_from_settings
    from generation.memo.llm_render import SYSTEM as LLM_SYSTEM

    with _opened(graph, settings) as (g, s):
        client = client_from_settings(s) if LLM_SYSTEM in systems else None
        summaries = memos.run_memos(
            g,
            s,
            out,
            list(systems),
            accessions or None,
            source,
            resume=resume,
            progress=progress,
            client=client,
            on_pending=None if cost is None else (lambda n: cost.start(s, n, detail=LLM_SYSTEM)),
        )
    if cost is not None and client is not None:
        written = sum(x.written for x in summaries if x.system == LLM_SYSTEM)
        cost.finish(written, calls=client.usage.calls, cache_hits=client.usage.cache_hits)
    return summaries


def memo_summary_rows(summaries: Sequence[MemoRunSummary]) -> list[dict[str, Any]]:
    """One display row per system of :func:`memo_batch`'s summaries."""
    return [
        {
            "system": x.system,
            "filings": x.requested,
            "written": x.written,
            "already done": x.skipped_done,
            "superseded by an amendment": len(x.superseded),
            "numbers exact": x.exact,
            "repaired": x.repaired,
            "unsupported": x.unsupported,
            "labels": ", ".join(f"{k} {v}" for k, v in sorted(x.labels.items())),
            "claims in run": x.claims,
        }
        for x in summaries
    ]


def _tuned_client(s: Settings, adapter: Path) -> Any:
    """The configured LLM with the LoRA ``adapter`` (``[llm] adapter_path``), its base checked now (the backends
    check it when the model is first loaded, which a batch may reach late or never).

    Raises:
        AdapterBaseMismatch: the adapter was trained on another base model. ConfigError: the backend applies no
        adapter (an OpenAI-compatible endpoint: serve the tuned model there instead). LLMError: the backend.
    """
    from generation.llm import check_adapter_base, client_from_settings

    client = client_from_settings(s.model_copy(update={"llm_adapter_path": adapter}))
    base_id, tagged, _ = str(client.model_id).partition("+lora:")
    if not tagged:
        raise ConfigError(
            f"the [llm] backend {s.llm.backend!r} does not apply a LoRA adapter ({adapter}); llama-cpp, llama-server "
            "and transformers do; for an OpenAI-compatible endpoint, serve the tuned model there and name it in "
            "[llm] model"
        )
    check_adapter_base(adapter, base_id, str(s.llm.model_path or s.llm.base_url or "the configured model"))
    return client


def _beside_tuned(s: Settings) -> Settings:
    """The settings for a base model served at once with its LoRA-tuned twin (``--adapter``): a local backend's
    ``[llm] threads`` per model lowered by :func:`generation.llm.shared_threads` so the two ask for no more
    threads than the cores (two llama-servers with 2 threads each on 2 cores: ``bench/two_servers.py``); other
    backends, and machines with cores enough, unchanged."""
    from generation.llm import LOCAL_BACKENDS, shared_threads

    threads = shared_threads(s.llm.threads, 2)
    if s.llm.backend not in LOCAL_BACKENDS or threads == s.llm.threads:
        return s
    return s.model_copy(update={"llm_threads": threads})


def _base_and_tuned(s: Settings, adapter: Path | None) -> tuple[LLMClient, LLMClient | None]:
    """The configured LLM client and, with ``adapter``, its LoRA-tuned twin (:func:`_tuned_client`), both built
    from :func:`_beside_tuned`'s settings since they run at once. Raises as :func:`_tuned_client`."""
    from generation.llm import client_from_settings

    if adapter is None:
        return client_from_settings(s), None
    models = _beside_tuned(s)
    return client_from_settings(models), _tuned_client(models, adapter)


def _report_models(s: Settings, adapter: Path | None = None, reader: str = "two-stage") -> tuple[Any, Any]:
    """The LLM client (with the LoRA ``adapter`` when given) and the encoder of a report batch, each loaded when first
    used: the encoder a :class:`retrieval.embeddings.LazyEmbedder`; the client of the agent readers without an
    adapter one that may have no backend (the analyst answers many questions by its plan, with no LLM call), which
    raises LLMUnavailable, naming the setting, at its first call. The two-stage reader always calls the LLM: its
    ``[llm]`` is checked now. Raises LLMError, AdapterBaseMismatch (now); ModelError (the encoder, at first use)."""
    from generation.llm import client_from_settings
    from retrieval.embeddings import LazyEmbedder

    embedder = LazyEmbedder(lambda: _embedder(s))
    client = _tuned_client(s, adapter) if adapter else client_from_settings(s, required=reader == "two-stage")
    return client, embedder


@dataclass
class ReportBatchResult:
    """What :func:`report_batch` did: the batch summary, the system, mode and model used."""

    summary: BatchSummary
    system: str
    mode: str
    model_id: str
    reader: str = "two-stage"


def report_batch(
    batch: Path,
    *,
    out: Path = Path("reports"),
    system: str | None = None,
    mode: str = "two-stage",
    workers: int | None = None,
    redo: bool = False,
    only: Sequence[str] = (),
    graph: Graph | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
    reader: str = "two-stage",
    adapter: Path | None = None,
    cost: BatchCost | None = None,
) -> ReportBatchResult:
    """An analysis report per question of a batch file (seed 004, 3.2-3.3); resumable.

    Args:
        batch: JSON lines with id, question, as_of, companies, facts.
        system: retrieval system (default ``[report] system``); mode: two-stage or single-stage.
        workers: questions in flight (default ``[report] workers``, else ``[llm] parallel`` with a backend that
            serves calls in parallel). only: just the questions with these ids (an unknown id is an error).
        reader: ``two-stage`` (seed 004) or ``agent`` (the analyst agent, seed 001: each answer with its
            derivation, gate verdict and ``(:Report)-[:ANSWERED_BY]->(:AgentRun)``; a question it cannot answer is
            a report saying so, with the reason); ``reader-calc`` (the same agent whose LLM route is seed 004's reader,
            its ``calculate`` thought run by the tool and gated: meant for a reader tuned by ``finkg train reader``).
        adapter: a LoRA adapter of the configured model (``[llm] adapter_path`` for this batch; its model id is on
            every report).
        cost: said (and confirmed) with the batch's questions before any model is loaded or the graph opened,
            the rate of the questions made recorded at the end (:class:`finkg.cost.BatchCost`).

    Raises:
        GenerationError: a bad batch line (file and line named), an unknown mode or system, or an
            empty index the system needs. ModelError, LLMError: the encoder or the LLM, each loaded when first used
            (:func:`_report_models`): an agent batch whose questions the analyst answers by its plan needs neither
            configured; one that reaches the LLM with no ``[llm]`` backend stops there, naming the setting.
            AdapterBaseMismatch: the adapter was trained on another base model.
    """
    from finkg.pipelines import reports

    questions = reports.load_questions(batch)  # before connecting: a bad batch is named even with no server running
    questions = reports.select_questions(questions, only, batch)
    s = settings or load_settings()
    if cost is not None:
        cost.start(s, len(questions), detail="" if redo else "those already done are skipped", adapter=adapter)
    with _opened(graph, s) as (g, s):
        client, embedder = _report_models(s, adapter, reader)
        try:
            ctx = reports.ReportContext(
                g, s, client, embedder, system or s.report.system, mode, progress=progress, reader=reader
            )
        except ValueError as exc:  # the pipeline's unknown mode/system, empty index: a user error
            if isinstance(exc, FinkgError):
                raise
            raise GenerationError(str(exc)) from exc
        summary = reports.run_batch(
            questions,
            ctx,
            out,
            redo=redo,
            workers=workers or s.report.workers or s.llm.concurrency(),
            progress=progress,
        )
    if cost is not None:
        cost.finish(summary.done, seconds=summary.seconds, calls=client.usage.calls, cache_hits=client.usage.cache_hits)
    return ReportBatchResult(summary, ctx.system, ctx.mode, client.model_id, ctx.reader)


def report_browser_query(reader: str = "two-stage") -> str:
    """The Neo4j Browser statement that shows the stored reports (``agent``, ``reader-calc``: the agent reports with
    their runs)."""
    from kg import cypher as kg_cypher

    return (
        kg_cypher.report_run_browser_query(reader=reader) if reader != "two-stage" else kg_cypher.report_browser_query()
    )


# --------------------------------------------------------------------------- knowledge graph build


@dataclass
class ExtractResult:
    """What :func:`extract` did: the summary, the model, and (reason, count) rows of dropped triples."""

    summary: ExtractSummary
    model_id: str
    dropped: list[dict[str, Any]] = field(default_factory=list)


def extract(
    *,
    families: Sequence[str] | None = None,
    documents: Sequence[str] | None = None,
    limit: int | None = None,
    verify: bool | None = None,
    redo: bool = False,
    parallel: int | None = None,
    graph: Graph | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
    cost: BatchCost | None = None,
) -> ExtractResult:
    """Extract (and verify) triples from pending text chunks with the ``[llm]`` model (seed 004, 3.1).

    ``verify`` None: ``[extract] verify``; ``parallel`` None: ``[llm] parallel`` calls in flight. ``cost``: said
    (and confirmed) with the chunks to go through before the first LLM call, their rate recorded at the end
    (:class:`finkg.cost.BatchCost`).

    Raises LLMError (backend unavailable or budget spent).
    """
    from finkg.pipelines import kg_build
    from generation.llm import client_from_settings

    with _opened(graph, settings) as (g, s):
        client = client_from_settings(s)
        try:
            summary = kg_build.extract(
                g,
                s,
                client,
                families=list(families) if families else None,
                documents=list(documents) if documents else None,
                limit=limit,
                verify=s.extract.verify if verify is None else verify,
                redo=redo,
                parallel=parallel,
                progress=progress,
                on_pending=None if cost is None else (lambda n: cost.start(s, n)),
            )
        finally:
            client.close()
    if cost is not None:
        cost.finish(summary.chunks, calls=summary.calls, cache_hits=summary.cached_calls)
    dropped = [
        {"dropped by the verification pass because": k, "triples": v}
        for k, v in sorted(summary.drop_reasons.items(), key=lambda kv: -kv[1])
    ]
    return ExtractResult(summary, client.model_id, dropped)


def cluster(
    *,
    ids: Sequence[str] | None = None,
    graph: Graph | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
) -> ClusterSummary:
    """Embed, resolve and cluster the extracted entities (seed 004, 3.2); ``ids``: only these entities."""
    from finkg.pipelines import clusters

    with _opened(graph, settings) as (g, s):
        return clusters.run_cluster(g, s, ids=list(ids) if ids is not None else None, progress=progress)


def graph_analyze(
    *,
    as_of: str | date | None = None,
    families: Sequence[str] | None = None,
    documents: Sequence[str] | None = None,
    alpha: float = 0.85,
    seed: int = 0,
    resolution: float = 1.0,
    write: bool = True,
    graph: Graph | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
) -> GraphAnalysis:
    """PageRank, degree, connected components and Louvain communities of the extracted triples (networkx),
    written back as ``Entity`` properties (``write``) so Neo4j Browser can size and colour by them.

    Args:
        as_of: only triples whose source chunk was available then (a date means the end of that day, UTC).
        families: only triples from documents of these source families.
        documents: only triples from documents with these ids.
        alpha: PageRank's damping. seed, resolution: Louvain's.

    Raises:
        EmptySubgraph (a GenerationError): no triple in that scope. RetrievalError: a malformed ``as_of``.
    """
    from finkg.pipelines import graph as graph_pipeline

    scope = graph_pipeline.Scope.of(as_of, families, documents)
    with _opened(graph, settings) as (g, s):
        return graph_pipeline.analyze_graph(
            g,
            scope,
            alpha=alpha,
            seed=seed,
            resolution=resolution,
            write=write,
            batch_size=s.writer.batch_size,
            progress=progress,
        )


def graph_export(
    path: Path,
    *,
    fmt: str = "graphml",
    as_of: str | date | None = None,
    families: Sequence[str] | None = None,
    documents: Sequence[str] | None = None,
    graph: Graph | None = None,
    settings: Settings | None = None,
) -> ExportSummary:
    """Write the extracted triples (optionally as of a date, of some families or documents) to ``path`` as
    GraphML or GEXF (Gephi, yEd), each entity with its PageRank, degree, component and community.

    Raises:
        EmptySubgraph: no triple in that scope (nothing is written). GenerationError: an unknown ``fmt``.
    """
    from finkg.pipelines import graph as graph_pipeline

    if fmt != "graphml" and fmt != "gexf":
        raise GenerationError(f"unknown export format {fmt!r}: use graphml or gexf")
    scope = graph_pipeline.Scope.of(as_of, families, documents)
    with _opened(graph, settings) as (g, _):
        return graph_pipeline.export_graph(g, path, fmt, scope)


@dataclass
class FactHistoryResult:
    """What :func:`fact_history` found: the company (``cik``, ``name``), the ``concept``, one row per period
    (``periods``: end, months, uom, first reported and latest value with their filings, reports, restated,
    conflicts (records of another file's value for its facts) and, with ``as_of``, the value known then), the
    ``derived`` series rows (empty unless asked: end, the value (a fraction for ``yoy``), formula, the number of
    facts used and their keys) and the ``conflicts`` rows (one per record, period order: period end, months,
    filing, the value held and its file, the other file's value and name, resolution, recorded at; empty when no
    file ever disagreed)."""

    cik: int
    name: str
    concept: str
    periods: list[dict[str, Any]]
    derived: list[dict[str, Any]]
    conflicts: list[dict[str, Any]] = field(default_factory=list)


def fact_history(
    company: str,
    concept: str,
    *,
    as_of: str | date | None = None,
    uom: str | None = "USD",
    derived: str | None = None,
    basis: str = "latest",
    graph: Graph | None = None,
    settings: Settings | None = None,
) -> FactHistoryResult:
    """A fact's history across filings (issue 19: as first reported vs restated, TTM).

    Args:
        company: a CIK, a ticker or part of the company's name (one company must match).
        concept: a canonical concept (``Revenues``: its us-gaap synonyms) or a us-gaap tag.
        as_of: also show, per period, the value known then (the latest report filed by that day).
        uom: the unit (``USD``; None: any). derived: ``quarterly``, ``ttm`` or ``yoy`` (quarterly values from
            year-to-date flows, trailing twelve months, year-over-year growth of the quarters).
        basis: which report of a period a derived series uses: ``latest``, ``first`` or ``as-of`` (then
            ``as_of`` is required).

    Raises:
        RetrievalError: no such company or several, no fact of the concept, a malformed as_of.
        ConfigError: an unknown ``derived`` or ``basis``.
    """
    from retrieval.facts import history as h

    if derived not in (None, "quarterly", "ttm", "yoy"):
        raise ConfigError(f"unknown derived series {derived!r}: use quarterly, ttm or yoy")
    if basis not in ("latest", "first", "as-of") or (basis == "as-of" and as_of is None):
        raise ConfigError(f"basis {basis!r}: use latest, first, or as-of together with an as-of date")
    with _opened(graph, settings) as (g, _):
        cik, name = h.find_company(g, company)
        periods = h.read_history(g, cik, concept, uom)
        records = h.read_conflicts(g, periods)
    rows, conflicts = [], []
    for p in periods:
        known = p.known_at(as_of) if as_of is not None else None
        for r in p.reports:
            conflicts += [
                {
                    "period end": p.end,
                    "months": p.qtrs * 3,
                    "filing": f"{r.filed} {r.form} {r.adsh}",
                    "value": c.value,
                    "from": c.source,
                    "other value": c.other_value,
                    "other file": c.other_file,
                    "resolution": c.resolution,
                    "recorded at": c.recorded_at,
                }
                for c in records.get(r.key, [])
            ]
        rows.append(
            {
                "period end": p.end,
                "months": p.qtrs * 3,
                "uom": p.uom,
                "first reported": p.first.value,
                "first filed": f"{p.first.filed} {p.first.form} {p.first.adsh}",
                "latest": p.latest.value,
                "latest filed": f"{p.latest.filed} {p.latest.form} {p.latest.adsh}",
                "reports": len(p.reports),
                "restated": len(p.restatements),
                "conflicts": sum(len(records.get(r.key, [])) for r in p.reports),
            }
            | ({f"known on {as_of}": known.value if known else None} if as_of is not None else {})
        )
    series: list[Any] = []
    if derived:
        chosen: str | date = as_of if basis == "as-of" and as_of is not None else basis
        quarters = h.quarterly([p for p in periods if p.qtrs >= 1], chosen)
        series = {"quarterly": quarters, "ttm": h.ttm(quarters), "yoy": h.yoy(quarters)}[derived]
    out = [
        {
            "period end": d.end,
            derived or "": d.value,
            "formula": d.formula,
            "facts": len(d.keys),
            "fact keys": list(d.keys),
        }
        for d in series
    ]
    return FactHistoryResult(cik, name, concept, rows, out, conflicts)


def read_ids(path: Path) -> list[str]:
    """Entity ids of a file, one per line (blank lines skipped)."""
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# --------------------------------------------------------------------------- reading the graph


def cypher(
    query: str,
    params: Mapping[str, Any] | None = None,
    *,
    write: bool = False,
    timeout: float | None = None,
    graph: Graph | None = None,
    settings: Settings | None = None,
) -> list[dict[str, Any]]:
    """Run a user's Cypher query: refused unless read-only (EXPLAIN first), or ``write``.

    Args:
        timeout: seconds the server lets it run (default ``[neo4j] query_timeout``; 0: no limit of its own,
            the server's ``db.transaction.timeout`` still applies). Ctrl-C stops it, server side too.

    Returns:
        The records as dicts. Raises ReadOnlyViolation (a GraphError) for a refused query,
        QueryTimeout / QueryMemoryExceeded for one stopped at a limit, and
        ``neo4j.exceptions.ClientError`` for one Neo4j rejects.
    """
    from kg.guard import run_user_query

    with _opened(graph, settings) as (g, s):
        seconds = s.neo4j.query_timeout if timeout is None else timeout
        return list(run_user_query(g, query, dict(params or {}), allow_write=write, timeout=seconds or None))


def indicator_facts(
    as_of: date,
    *,
    indicators: Sequence[str] | None = None,
    max_age_days: int | None = None,
    graph: Graph | None = None,
    settings: Settings | None = None,
) -> list[dict[str, Any]]:
    """The financial facts a question asked on ``as_of`` gets (seed 004, section 2), as display rows
    (id, fact, numbers, unit, cites)."""
    from retrieval.facts.indicators import indicator_facts as read_facts

    with _opened(graph, settings) as (g, _):
        found = read_facts(g, as_of, list(indicators) if indicators else None, max_age_days)
    return [
        {
            "id": f.id,
            "fact": f.text,
            "numbers": ", ".join(str(n) for n in f.numbers),
            "unit": f.unit,
            "cites": ", ".join(c[2] for c in f.cites),
        }
        for f in found
    ]


# --------------------------------------------------------------------------- the Neo4j Browser workspace


@dataclass
class BrowserWorkspace:
    """What ``finkg browser`` prints: where Browser is, what to connect it to, the style sheet and the
    saved queries (:class:`kg.browser.SavedQuery`, by name)."""

    url: str
    connect_url: str
    bolt_uri: str
    user: str
    database: str
    style_path: Path
    queries: list[SavedQuery] = field(default_factory=list)


def browser_url(settings: Settings | None = None) -> str:
    """The Neo4j Browser address of the configured server.

    With no ``[neo4j] uri`` the local server of ``finkg neo4j start`` is used:
    ``http://127.0.0.1:<server.http_port>/browser/``. Otherwise the host comes from the URI and the port
    from ``server.http_port`` (docker-compose.yml publishes Browser on that port); a TLS scheme
    (``neo4j+s``, ``bolt+ssc``, ...) gives ``https``.
    """
    from urllib.parse import urlsplit

    s = settings or load_settings()
    if not s.neo4j.uri:
        return f"http://127.0.0.1:{s.server.http_port}/browser/"
    parts = urlsplit(s.neo4j.uri)
    host = parts.hostname or "127.0.0.1"
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    scheme = "https" if parts.scheme.endswith(("+s", "+ssc")) else "http"
    return f"{scheme}://{host}:{s.server.http_port}/browser/"


def browser_workspace(settings: Settings | None = None) -> BrowserWorkspace:
    """The Neo4j Browser workspace: the Browser address, a link that fills in its connect form (the Bolt
    URI with the user, and the database), the GRASS style sheet's path and every saved query.

    Raises:
        ConfigError: a saved query file with a malformed header (a packaging error).
    """
    from urllib.parse import quote, urlsplit, urlunsplit

    from kg import browser

    s = settings or load_settings()
    url = browser_url(s)
    bolt = urlsplit(s.uri)
    with_user = urlunsplit(bolt._replace(netloc=f"{quote(s.neo4j.user, safe='')}@{bolt.netloc}"))
    connect = f"{url}?dbms={quote(with_user, safe='')}&db={quote(s.neo4j.database, safe='')}"
    return BrowserWorkspace(
        url=url,
        connect_url=connect,
        bolt_uri=s.uri,
        user=s.neo4j.user,
        database=s.neo4j.database,
        style_path=browser.style_path(),
        queries=browser.saved_queries(),
    )


def browser_style() -> str:
    """The GRASS style sheet's text (Browser: ``:style`` then paste it, or drop the file on that frame)."""
    from kg import browser

    return browser.style_text()


def browser_query(name: str) -> SavedQuery:
    """The saved query ``name`` (a :class:`kg.browser.SavedQuery`).

    Raises:
        ConfigError: no saved query has that name; the message lists them.
    """
    from kg import browser

    return browser.saved_query(name)


# --------------------------------------------------------------------------- audits


def audit_evidence(run: str | None = None, *, graph: Graph | None = None, settings: Settings | None = None) -> Any:
    """Future-document and near-duplicate rates of stored evidence selections (seed 000, 4.3)."""
    from retrieval.text.point_in_time import audit_evidence as audit

    with _opened(graph, settings) as (g, s):
        return audit(g, run, s.memory.near_duplicate_threshold)


def memory_cells(
    run: str, *, graph: Graph | None = None, settings: Settings | None = None
) -> tuple[list[dict[str, Any]], str]:
    """A run's source-memory cells with equation 6's terms (seed 000, section 3.5).

    Returns:
        ``(rows, browser statement)``: per cell family, event_type, horizon, positive, negative,
        updates, utility, rho (shrinkage) and lambda_x_term (lambda times the clipped adjustment),
        rounded to 4 places; and the statement that shows the cells in Neo4j Browser.
    """
    from kg import cypher as kg_cypher
    from retrieval.memory.source_memory import MemoryParams, memory_adjustment, read_cells, shrinkage, utility

    with _opened(graph, settings) as (g, s):
        params = MemoryParams(kappa=s.memory.kappa, clip=s.memory.clip, strength=s.memory.lambda_, top_k=s.memory.top_k)
        cells = read_cells(g, run)
    rows = [
        {
            "family": r["family"],
            "event_type": r["event_type"],
            "horizon": r["horizon"],
            "positive": round(r["positive"], 4),
            "negative": round(r["negative"], 4),
            "updates": r["updates"],
            "utility": round(utility(r["positive"], r["negative"]), 4),
            "rho": round(shrinkage(r["positive"], r["negative"], params.kappa), 4),
            "lambda_x_term": round(params.strength * memory_adjustment(r["positive"], r["negative"], params), 4),
        }
        for r in cells
    ]
    return rows, kg_cypher.memory_browser_query(run)


# --------------------------------------------------------------------------- evaluations


def eval_memos(
    *,
    systems: Sequence[str] | None = None,
    limit: int | None = None,
    source: str | None = None,
    graph: Graph | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
) -> EvalResult:
    """The four-system memo evaluation of seed 003 (Tables 5-10, 12) on the filings in the graph."""
    from finkg.eval import memos as evaluation
    from generation.memo.systems import SYSTEMS

    with _opened(graph, settings) as (g, s):
        return evaluation.evaluate(g, s, list(systems or SYSTEMS), limit, source, progress=progress)


def eval_extraction(
    gold: Path,
    *,
    threshold: float = 70.0,
    verify: bool | None = None,
    graph: Graph | None = None,
    settings: Settings | None = None,
) -> tuple[list[dict[str, Any]], list[str], str]:
    """Precision/recall of the stored extraction against gold triples (``verify`` None: the records of a run
    with ``[extract] verify``).

    Returns:
        ``(score rows, statements of the gold set with no stored extraction, model id)``.
    """
    from finkg.eval import kg as kg_eval
    from finkg.pipelines import kg_build
    from generation.llm import client_from_settings

    with _opened(graph, settings) as (g, s):
        client = client_from_settings(s)
        gold_rows = kg_eval.load_gold(gold)
        statements = sorted({x.statement for x in gold_rows})
        stages = kg_build.stored_stages(g, client.model_id, s.extract.verify if verify is None else verify, statements)
    missing = sorted(set(statements) - set(stages))
    return kg_eval.score(stages, gold_rows, threshold), missing, client.model_id


def eval_tatqa(
    path: Path,
    *,
    systems: Sequence[str] = (),
    limit: int | None = None,
    max_tokens: int = 128,
    out: Path = Path("eval/tatqa"),
    half: str = "all",
    sample: int | None = None,
    question_list: Path | None = None,
    answer_types: Sequence[str] = (),
    routes: Sequence[str] = (),
    threshold: float | None = None,
    top_k: int | None = None,
    memory_solution: str | None = None,
    workers: int | None = None,
    adapter: Path | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
    cost: BatchCost | None = None,
) -> tuple[Any, str]:
    """TAT-QA EM/F1 of the answerers (seed 004, 3.3; the analyst agent of issue 17); resumes from ``out``.

    Args:
        half: ``all``, or ``train`` / ``eval``: one half of the contexts split by a hash of the table uid
            (:func:`ingest.datasets.tatqa.split_contexts`, seed 0; the agent's experience is learned on
            ``train`` only). sample: a stratified sample of this many questions (by answer type and source,
            :func:`finkg.eval.tatqa.stratified_sample`), the same for every system; None: every question.
        question_list: a file of question uids, one a line (``#`` comments), e.g. the frozen test questions
            ``data/questions/tatqa-test-uids.txt``: only those (of the sample, when there is one).
        answer_types: only the questions (of the sample, when there is one) of these TAT-QA answer types
            (``span``, ``multi-span``, ``arithmetic``, ``count``); empty: every type.
        routes: only the questions (of the sample, of those types) the analyst agent answers by these routes
            (:func:`finkg.eval.tatqa.agent_route`: ``count``, ``program``, ``span``; each of the last two reads the
            experiences learned on it); empty: every route.
        threshold: the experience memory's cosine threshold for ``agent-memory`` and ``agent-shuffled`` (None:
            seed 001's 0.65). Those systems read the experiences learned by ``finkg experience learn`` (training
            split only, never a context being evaluated).
        top_k: the experience memory's depth for those systems (None: seed 001's 5).
        memory_solution: how those systems show each entry's worked solution
            (:data:`generation.agent.memory.SOLUTION_FORMS`: ``program``, ``expression`` or ``none``; None:
            :data:`generation.agent.memory.DEFAULT_SOLUTION`, ``expression``). The three are recorded in
            ``out``'s manifest when a memory system runs; a rerun with others is refused.
        workers: questions asked at once (None: ``[llm] parallel`` with llama-server or an OpenAI-compatible
            server, else 1); the scores equal a one-at-a-time run's.
        adapter: a LoRA adapter of the configured model (``finkg train reader``: a GGUF LoRA for llama.cpp, a
            peft directory for transformers): every chosen system is also run as ``<system>+lora`` by the tuned
            model, on the same questions in the same run (issue 18's before/after); each answer records its
            model id.
        cost: said (and confirmed) with the answers still to ask before the LLM is loaded or anything written
            (the memory systems read the graph's experiences first), their rate recorded at the end
            (:class:`finkg.cost.BatchCost`).

    Returns:
        ``(results, backend name)``; the results have ``rows()``, ``differences()`` and ``save(out)`` (answers,
        summary, ``eval-tatqa.json`` and the EM/F1 picture ``tatqa-em-f1.png``).

    Raises:
        ConfigError: an unknown system, half, answer type, route or memory solution form; a question list
            naming a uid that is not in the chosen half of the file. IngestError: a malformed TAT-QA file. EvaluationError: ``out`` holds a run of another model or file, or of other memory options.
    """
    from finkg.eval import tatqa as tatqa_eval
    from generation.agent.memory import DEFAULT_SOLUTION, THRESHOLD, TOP_K, check_solution_form
    from generation.qa.systems import tfr_answerers
    from ingest.datasets.tatqa import read_tatqa, split_contexts

    if half not in ("all", "train", "eval"):
        raise ConfigError(f"unknown half {half!r}: all, train or eval")
    memory_solution = check_solution_form(memory_solution or DEFAULT_SOLUTION)
    s = settings or load_settings()
    contexts = read_tatqa(path)
    if half != "all":
        contexts = split_contexts(contexts)[0 if half == "train" else 1]
    chosen_questions = tatqa_eval.stratified_sample(contexts, sample) if sample else None
    if question_list is not None:
        listed = tatqa_eval.read_question_list(question_list, contexts)
        chosen_questions = listed if chosen_questions is None else listed & chosen_questions
    if answer_types:
        chosen_questions = tatqa_eval.of_answer_types(contexts, answer_types, chosen_questions)
    if routes:
        chosen_questions = tatqa_eval.of_agent_routes(contexts, routes, chosen_questions)
    client, tuned = _base_and_tuned(s, adapter)
    memory_systems = {"agent-memory", "agent-shuffled"} & set(systems)
    with _opened(None, s) if memory_systems else nullcontext((None, s)) as (g, _):
        memory = _memory(g, s, threshold, top_k) if g is not None and "agent-memory" in memory_systems else None
        shuffled = (
            _memory(g, s, threshold, top_k, shuffled=True)
            if g is not None and "agent-shuffled" in memory_systems
            else None
        )

        def answerers(llm: Any) -> dict[str, Any]:
            return {
                **tfr_answerers(llm, answer_tokens=max_tokens),
                **tatqa_eval.direct_systems(llm, max_tokens),
                "engine": tatqa_eval.engine_system(llm, max_tokens, {c.table_uid: c.table for c in contexts}),
                **tatqa_eval.agent_systems(
                    llm,
                    max(max_tokens, 160),
                    {c.table_uid: c.table for c in contexts},
                    memory,
                    shuffled,
                    exclude_contexts={c.table_uid for c in contexts},
                    solution=memory_solution,
                ),
            }

        available = answerers(client)
        unknown = sorted(set(systems) - set(available) - memory_systems)
        if unknown:
            raise ConfigError(
                f"unknown system(s) {', '.join(unknown)}; choose from {', '.join([*available, *sorted(memory_systems)])}"
            )
        chosen = {name: available[name] for name in (systems or list(available))}
        model_ids = dict.fromkeys(chosen, client.model_id)
        if tuned is not None:
            tuned_available = answerers(tuned)
            chosen |= {name + tatqa_eval.TUNED: tuned_available[name] for name in list(chosen)}
            model_ids |= {name + tatqa_eval.TUNED: tuned.model_id for name in list(model_ids)}
        memory_options = (
            {
                "threshold": THRESHOLD if threshold is None else threshold,
                "top_k": TOP_K if top_k is None else top_k,
                "solution": memory_solution,
            }
            if memory_systems & set(chosen)
            else None
        )
        if cost is not None:
            asked, answers = tatqa_eval.pending(
                contexts, list(chosen), limit=limit, questions=chosen_questions, out=out
            )
            cost.start(
                s,
                answers,
                detail=f"{asked:,} questions x {len(chosen)} systems" if len(chosen) > 1 else "",
                adapter=adapter,
                unit="answer" if len(chosen) > 1 else "question",
            )
        tatqa_eval.check_manifest(out, client.model_id, str(path), tuned.model_id if tuned else None, memory_options)
        results = tatqa_eval.evaluate(
            contexts,
            chosen,
            limit=limit,
            progress=progress,
            out=out,
            questions=chosen_questions,
            workers=s.llm.concurrency() if workers is None else workers,
            model_ids=model_ids,
        )
    if cost is not None and cost.estimate is not None:
        usage = [c.usage for c in (client, tuned) if c is not None]
        cost.finish(cost.estimate.items, calls=sum(u.calls for u in usage), cache_hits=sum(u.cache_hits for u in usage))
    return results, client.name


@dataclass
class AgentEvalResult:
    """What :func:`eval_agent` measured: the SEC rows and their summary per kind, the TAT-QA results (None when
    not run), the targets (:func:`finkg.eval.agent.targets`) and the files written."""

    sec: list[dict[str, Any]]
    sec_summary: list[dict[str, Any]]
    tatqa: Any
    targets: list[dict[str, Any]]
    paths: list[Path]


def eval_agent(
    tatqa: Path | None,
    *,
    sec_questions: Path | None = Path("data/questions/sec-agent.jsonl"),
    quarter: Path = Path("data/sec-fsds/2009q3.zip"),
    systems: Sequence[str] = (),
    sample: int | None = 300,
    limit: int | None = None,
    workers: int | None = None,
    threshold: float | None = None,
    top_k: int | None = None,
    memory_solution: str | None = None,
    out: Path = Path("eval/agent"),
    results_dir: Path | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
    cost: BatchCost | None = None,
) -> AgentEvalResult:
    """Issue 17's benchmark of the analyst agent (:mod:`finkg.eval.agent`): the SEC questions over the quarter in
    the graph (gold from its ``num.txt``), the TAT-QA evaluation half (``sample`` questions stratified, the same for
    every system; resumable in ``out/tatqa``), and the targets; everything in ``eval-agent.json`` (the one results
    format) in ``results_dir`` or ``out``.

    Args:
        tatqa: a TAT-QA file (its evaluation half is used), or None to skip that part. sec_questions: the SEC
            question file, or None to skip that part. quarter: the Financial Statement Data Sets zip the questions'
            filings come from (loaded into the graph by ``finkg ingest sec``). systems: TAT-QA systems (default
            :data:`finkg.eval.agent.SYSTEMS`: agent, two-stage, agent-memory, agent-shuffled; the differences are
            against the first). sample, limit, workers, threshold, top_k, memory_solution, cost: as ``finkg eval
            tatqa`` (the cost is the TAT-QA part's).

    Raises:
        ConfigError: neither part chosen; a memory system without any learned experience (run ``finkg experience
            learn`` first). EvaluationError: the quarter is not in the graph, a malformed question file (file and
            line named), ``out/tatqa`` holds another model's run. GraphError, LLMError.
    """
    from finkg.eval import agent as agent_eval
    from finkg.eval.results import write_result
    from generation.agent.memory import list_experiences
    from retrieval.facts.fact_map import list_filings

    if tatqa is None and sec_questions is None:
        raise ConfigError("nothing to evaluate: give a TAT-QA file, SEC questions, or both")
    chosen = list(systems or agent_eval.SYSTEMS)
    s = settings or load_settings()
    sec_rows: list[dict[str, Any]] = []
    memory_systems = tatqa is not None and {"agent-memory", "agent-shuffled"} & set(chosen)
    needs_graph = sec_questions is not None or memory_systems
    with _opened(None, s) if needs_graph else nullcontext((None, s)) as (g, _):
        if sec_questions is not None and g is not None:
            questions = agent_eval.read_sec_questions(sec_questions)
            if not list_filings(g, source=quarter.name):
                raise EvaluationError(
                    f"no filing of {quarter.name} in the graph: the SEC questions are about it "
                    f"(load it with `finkg ingest sec {quarter}`)"
                )
            advance = progress("agent: SEC questions", len(questions)) if progress else (lambda _n: None)
            sec_rows = agent_eval.run_sec(g, questions, agent_eval.read_num(quarter), advance)
        if memory_systems and g is not None and not list_experiences(g, "train", limit=1):
            raise ConfigError(
                "the memory systems need learned experiences and the graph has none: run "
                f"`finkg experience learn {tatqa}` first (training half only), or leave out agent-memory and "
                "agent-shuffled"
            )
    results = None
    if tatqa is not None:
        results, _ = eval_tatqa(
            tatqa,
            systems=chosen,
            limit=limit,
            out=out / "tatqa",
            half="eval",
            sample=sample,
            threshold=threshold,
            top_k=top_k,
            memory_solution=memory_solution,
            workers=workers,
            settings=s,
            progress=progress,
            cost=cost,
        )
    rows = results.rows() if results is not None else []
    diffs = results.differences() if results is not None else []
    goals = agent_eval.targets(rows, diffs, sec_rows)
    summary = agent_eval.sec_summary(sec_rows)
    out.mkdir(parents=True, exist_ok=True)
    paths = [*(results.save(out / "tatqa") if results is not None else [])]
    if sec_rows:
        sec_file = out / "sec.jsonl"
        sec_file.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in sec_rows), encoding="utf-8")
        paths.append(sec_file)
    paths.append(
        write_result(
            "eval-agent",
            {
                "tatqa": str(tatqa) if tatqa else None,
                "sec_questions": str(sec_questions) if sec_questions else None,
                "quarter": str(quarter),
                "systems": chosen if tatqa else [],
                "sample": sample,
                "limit": limit,
            },
            {f"target_{i}_met": t["met"] for i, t in enumerate(goals)},
            tables={"sec": sec_rows, "sec_summary": summary, "tatqa": rows, "differences": diffs, "targets": goals},
            directory=results_dir or out,
        )
    )
    return AgentEvalResult(sec_rows, summary, results, goals, paths)


def eval_reports(
    batch: Path,
    *,
    systems: Sequence[str] = (),
    out: Path = Path("eval/reports"),
    adapter: Path | None = None,
    graph: Graph | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
    cost: BatchCost | None = None,
) -> tuple[list[dict[str, Any]], str, str | None]:
    """TFR vs its baselines on the same questions (seed 004, Table 2): ROUGE-L, BERTScore, LLM judge.

    Args:
        adapter: a LoRA adapter of the configured model (``finkg train reader``): every system is also written
            by the tuned model (``<system>+lora``), judged by the untuned one like the others.
        cost: said (and confirmed) with the reports to write (questions x systems) before any model is loaded or
            the graph opened, their rate recorded at the end (:class:`finkg.cost.BatchCost`).

    Returns:
        ``(rows, model id, BERTScore description or None)``. Raises ConfigError: an unknown system.
    """
    from finkg.eval import reports as report_eval
    from finkg.eval.metrics.text import bertscore_from_settings
    from finkg.pipelines import reports
    from retrieval.knowledge import SYSTEMS as retrieval_systems

    unknown = sorted(set(systems) - set(retrieval_systems))
    if unknown:
        raise ConfigError(f"unknown system(s) {', '.join(unknown)}; choose from {', '.join(retrieval_systems)}")
    questions = reports.load_questions(batch)
    s = settings or load_settings()
    names = list(systems or retrieval_systems)
    if cost is not None:
        written = len(questions) * len(names) * (2 if adapter else 1)
        detail = f"{len(questions):,} questions x {len(names) * (2 if adapter else 1)} systems, those done are skipped"
        cost.start(s, written, detail=detail, adapter=adapter)
    with _opened(graph, s) as (g, s):
        client, tuned = _base_and_tuned(s, adapter)
        embedder = _embedder(s)
        bert = bertscore_from_settings(s) if s.eval.bertscore_model_path else None
        rows = report_eval.evaluate_reports(
            g,
            s,
            client,
            embedder,
            questions,
            names,
            out,
            bertscore=bert,
            judge=client if s.eval.judge else None,
            progress=progress,
            tuned=tuned,
        )
    if cost is not None and cost.estimate is not None:
        usage = [c.usage for c in (client, tuned) if c is not None]
        cost.finish(cost.estimate.items, calls=sum(u.calls for u in usage), cache_hits=sum(u.cache_hits for u in usage))
    return rows, client.model_id, bert.description if bert else None


def eval_retrieval(
    path: Path,
    *,
    rerank: bool | None = None,
    rerank_queries: int | None = 100,
    seed: int = 0,
    store: bool = True,
    graph: Graph | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
) -> dict[str, Any]:
    """NDCG@10 on TAT-QA for BM25, dense, hybrid and hybrid + rerank (seed 002, 4.2-5.5).

    ``rerank`` None: when ``[rerank] model_path`` is set or ``[rerank] backend`` is llm. Returns the
    result dict (rows, chunks, queries, alpha) that ``finkg.eval.retrieval.save`` writes.
    """
    from finkg.eval import retrieval as retrieval_eval
    from generation.llm import client_from_settings
    from retrieval.text.rerank import make_reranker

    s = settings or load_settings()
    wanted = rerank if rerank is not None else bool(s.rerank.model_path) or s.rerank.backend == "llm"
    if not wanted:
        reranker = None
    elif s.rerank.backend == "llm":
        reranker = retrieval_eval.llm_judge(client_from_settings(s))
    else:
        reranker = make_reranker(
            s.rerank.model_path, s.rerank.backend, s.rerank.max_length, s.rerank.batch_size, s.rerank.device
        )
    embedder = _embedder(s)
    with _opened(graph, s) as (g, _):
        return retrieval_eval.evaluate(
            g, path, embedder, reranker, rerank_queries or None, seed, s.hybrid.alpha_step, store, stage=progress
        )


def eval_feedback(
    options: Any,
    *,
    graph: Graph | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
    cost: BatchCost | None = None,
) -> tuple[Any, dict[str, Any]]:
    """The prequential market-feedback evaluation (seed 000, 3.1-4.4) for ``options``
    (:class:`finkg.eval.feedback.FeedbackOptions`, checked here); resumable.

    ``cost``: said (and confirmed) with the reader answers still to make (anchors x condition runs not yet
    recorded) once the anchors are read, before the first reader call or anything of the run is written; their
    rate recorded at the end (:class:`finkg.cost.BatchCost`).

    Returns:
        ``(run summary, metrics dict)``. Raises EvaluationError, IngestError, ModelError, LLMError.
    """
    from finkg.eval import feedback as feedback_eval
    from generation.feedback.reader import FrozenReader
    from generation.llm import client_from_settings

    s = settings or load_settings()
    options.check()
    embedder = _embedder(s)
    reader = FrozenReader(client_from_settings(s), s.feedback.reader_max_tokens)

    def pending(answers: int, anchors: int) -> None:
        if cost is not None:
            cost.start(
                s,
                answers,
                detail=f"{anchors:,} anchor{'' if anchors == 1 else 's'} x the condition runs not yet recorded",
            )

    with _opened(graph, s) as (g, _):
        summary = feedback_eval.run_evaluation(g, s, options, reader, embedder, progress=progress, on_pending=pending)
        result = feedback_eval.summarize(g, options, s)
    if cost is not None:
        made = summary.reader_calls + summary.cache_hits
        cost.finish(made, calls=summary.reader_calls, cache_hits=summary.cache_hits)
    return summary, result


def feedback_options(
    *,
    out: Path,
    start: date,
    end: date,
    tickers: str | None,
    data: Path | None,
    tweets: Path | None,
    prices: Path | None,
    market: Path | None,
    run: str,
    conditions: str,
    shuffles: int | None,
    limit: int | None,
    max_anchors_per_day: int | None,
    sample_seed: int,
    ingest: bool,
    redo: bool,
    settings: Settings | None = None,
) -> Any:
    """:class:`finkg.eval.feedback.FeedbackOptions` from ``finkg eval feedback``'s options and the
    ``[feedback]`` settings (comma-separated ``tickers`` and ``conditions``). Raises EvaluationError."""
    from finkg.eval import feedback as feedback_eval

    s = settings or load_settings()
    root = data or s.feedback.data_dir
    if root is None and not (tweets and prices and market):
        raise feedback_eval.FeedbackEvalError(
            "give --data (or [feedback] data_dir), or --tweets, --prices and --market"
        )
    return feedback_eval.FeedbackOptions(
        tweets=tweets or Path(root) / "tweets",  # type: ignore[arg-type]
        prices=prices or Path(root) / "prices",  # type: ignore[arg-type]
        market=market or Path(root) / s.feedback.market_proxy,  # type: ignore[arg-type]
        tickers=tuple(t.strip().upper() for t in (tickers.split(",") if tickers else s.feedback.tickers) if t.strip()),
        start=start,
        end=end,
        out=out,
        run=run,
        conditions=tuple(c.strip() for c in conditions.split(",") if c.strip()),
        shuffles=shuffles or s.feedback.shuffles,
        limit=limit,
        max_anchors_per_day=max_anchors_per_day or s.feedback.max_anchors_per_day,
        sample_seed=sample_seed,
        ingest=ingest,
        redo=redo,
    )


def retrieval_trainer_config(kind: str, **fields: Any) -> Any:
    """A :class:`finkg.train.embedder.EmbedderConfig` (``kind`` embedder) or
    :class:`finkg.train.reranker.RerankerConfig` (``kind`` reranker) from keyword fields (for the CLI, which
    imports no room).

    Raises:
        ConfigError: an unknown ``kind``. TrainingError: a bad field value.
    """
    from finkg.train import embedder, reranker

    configs = {"embedder": embedder.EmbedderConfig, "reranker": reranker.RerankerConfig}
    if kind not in configs:
        raise ConfigError(f"unknown trainer {kind!r}: one of {', '.join(configs)}")
    return configs[kind](**fields)


def train_retrieval_model(
    kind: str,
    path: Path,
    config: Any = None,
    *,
    out_dir: Path | None = None,
    base_model: Path | None = None,
    examples_file: Path | None = None,
    resume: bool = False,
    evaluate: bool = True,
    graph: Graph | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
    log: Any = None,
) -> dict[str, Any]:
    """Fine-tune finkg's embedder (``kind`` embedder: seed 002 §2.1, §5.2; :func:`finkg.train.embedder.run`) or
    train its cross-encoder reranker with hard negatives mined by the configured embedder (``kind`` reranker:
    seed 002 §3.3, §4.3; :func:`finkg.train.reranker.run`) on TAT-QA's training half, and measure it
    before/after on the evaluation half.

    Args:
        config: the kind's config (:func:`retrieval_trainer_config`; default: its defaults, the seed's settings).
        out_dir: run folder (default ``<[models] dir>/finkg-embedder-minilm-tatqa`` or
            ``.../finkg-reranker-minilm-tatqa``): ``model/``, ``checkpoints/``, the examples file.
        base_model: the encoder to start from (default ``[embedding] model_path``). examples_file: train on
            this file instead of building one.
        log: called with a line of loss, learning rate and ETA at every logging step.

    Raises:
        ConfigError: an unknown kind, no encoder to start from, or (reranker) no embedder to mine with and
            measure. TrainingDataError, TrainingError, EvaluationError: see the modules.
    """
    from finkg import models
    from finkg.train import embedder, reranker

    s = settings or load_settings()
    config = config or retrieval_trainer_config(kind)
    base = base_model or s.embedding.model_path
    if base is None:
        raise ConfigError(f"no encoder to start the {kind} from: pass --base-model or set [embedding] model_path")
    folder = models.TUNED_EMBEDDER if kind == "embedder" else models.TUNED_RERANKER

    @functools.cache  # mining and measuring share one loaded model
    def configured() -> Any:
        if s.embedding.model_path is None:
            raise ConfigError(
                "no embedder: set [embedding] model_path (it mines the hard negatives and is the dense half "
                "of the measured hybrid)"
            )
        return _embedder(s)

    out = Path(out_dir or s.models.dir / folder)
    options = {"examples_file": examples_file, "resume": resume, "evaluate": evaluate, "progress": progress, "log": log}
    with _registry(graph, s) as g:
        if kind == "embedder":  # its run measures base and tuned: it embeds with a model per directory
            return embedder.run(
                path, Path(base), out, config, graph=g, make_embedder=lambda d: _embedder(s, d), **options
            )
        return reranker.run(path, Path(base), out, config, graph=g, make_embedder=configured, **options)


def reader_config(**fields: Any) -> Any:
    """A :class:`finkg.train.reader.ReaderConfig` from keyword fields (for the CLI, which imports no room)."""
    from finkg.train.reader import ReaderConfig

    if "target_modules" in fields:
        fields["target_modules"] = tuple(fields["target_modules"])
    return ReaderConfig(**fields)


def train_reader(
    path: Path,
    config: Any = None,
    *,
    gguf: bool = False,
    llama_cpp_dir: Path | None = None,
    out_dir: Path | None = None,
    base_model: Path | None = None,
    examples_file: Path | None = None,
    resume: bool = False,
    graph: Graph | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
    log: Any = None,
) -> dict[str, Any]:
    """LoRA SFT of the reader on TAT-QA's training half in seed 004's {I, F, T, Y} form
    (:func:`finkg.train.reader.run`), optionally converted to a GGUF LoRA adapter for llama.cpp.

    Args:
        config: a :class:`finkg.train.reader.ReaderConfig` (default: the seed's settings).
        base_model: a Hugging Face directory, or a GGUF file (rebuilt once as a Hugging Face checkpoint in
            ``<[models] dir>/<file stem>-hf``); default ``[llm] model_path``.
        out_dir: run folder (default ``<[models] dir>/finkg-reader-<base name>``). gguf: also write
            ``out_dir/adapter.gguf`` (:func:`finkg.train.reader.export_gguf_lora`).

    The training data (``examples_file`` line by line, else the TAT-QA file) is checked first
    (:func:`finkg.train.reader.check_training_data`): a malformed line stops the run before a model is loaded or
    converted, a graph opened or a file written.

    Raises:
        ConfigError: no base model. TrainingDataError, TrainingError: see the module.
    """
    from finkg.train import reader

    config = config or reader.ReaderConfig()
    reader.check_training_data(path, examples_file, config.seed)
    s = settings or load_settings()
    base = Path(base_model or s.llm.model_path or "").expanduser()
    if not str(base_model or s.llm.model_path or ""):
        raise ConfigError("no reader to start from: pass --base-model or set [llm] model_path")
    if base.is_file() and base.suffix == ".gguf":
        base = reader.hf_checkpoint_from_gguf(base, s.models.dir / f"{base.stem}-hf")
    out = Path(out_dir or s.models.dir / f"finkg-reader-{base.name}")
    with _registry(graph, s) as g:
        summary = reader.run(
            path,
            base,
            out,
            config,
            examples_file=examples_file,
            resume=resume,
            graph=g,
            progress=progress,
            log=log,
        )
    if gguf:
        summary["adapter_gguf"] = str(
            reader.export_gguf_lora(Path(summary["adapter"]), base, out / "adapter.gguf", llama_cpp_dir)
        )
    return summary


# --------------------------------------------------------------------------- the analyst agent (issue 17, seed 001)


@dataclass
class AskResult:
    """``finkg ask``: the answer (None when not answered), ``status`` (``answered``, ``not in graph``, ``could not
    verify``, ``ask back``, ``could not answer``), ``reasons``, the gate ``verdict`` (its dict, None when it did not
    run), ``derivation`` (operands with their fact keys, formula, expression, result), the ``run`` id written to the
    graph (None when not recorded) and the Browser statement that walks it; ``value`` and ``unit`` (the answer's
    number: ``USD``, ``%``, ``x``, ``days``, ``pp``), ``pick`` (the companies a comparison chose), ``notes`` (what
    the answer used that the question did not say) and ``plan`` (the question as read: companies, measures,
    periods, operation, unit)."""

    question: str
    answer: str | None
    status: str
    reasons: list[str]
    verdict: dict[str, Any] | None
    derivation: dict[str, Any]
    run: str | None
    browser_query: str | None
    as_of: str | None
    value: float | None = None
    unit: str | None = None
    pick: list[str] | None = None
    notes: list[str] = field(default_factory=list)
    plan: dict[str, Any] = field(default_factory=dict)


def ask(
    question: str,
    *,
    company: str | None = None,
    as_of: date | None = None,
    record: bool = True,
    llm: bool = False,
    graph: Graph | None = None,
    settings: Settings | None = None,
) -> AskResult:
    """Answer a question about the SEC graph: read into a typed plan (companies, measure, periods, operation),
    computed by the agent's deterministic tools (``measure``, ``calculate``) and passed by both gates (numbers
    traced, the answer is the one asked): :func:`generation.agent.ask.answer_sec_question`.

    Args:
        question: e.g. "What is Johnson & Johnson's current ratio?". company: a CIK or part of a name (else the
            question's). as_of: only filings public by the end of that day count (None: all). record: write the
            run as ``(:AgentRun)-[:STEP]->(:Step)``, steps linked to the facts they used. llm: when the words name no
            company or measure the engine knows, the configured LLM reads the question into the plan under a JSON
            schema (resolved against the graph's catalogs; never a number from the model).

    Raises:
        GraphError: Neo4j is unavailable. LLMUnavailable, ModelError: ``llm`` and the model cannot be used.
    """
    from generation.agent.ask import answer_sec_question, run_record
    from generation.agent.trajectory import write_runs
    from generation.llm import client_from_settings
    from kg import cypher as kg_cypher

    with _opened(graph, settings) as (g, s):
        client = client_from_settings(s) if llm else None
        got = answer_sec_question(g, question, company, as_of, client)
        verdict = got.verdict.as_dict() if got.verdict is not None else None
        rid = None
        if record:
            run = run_record(got, question, company, as_of)
            write_runs(g, [run])
            rid = run.id
    return AskResult(
        question,
        got.answer,
        got.status,
        got.reasons,
        verdict,
        got.derivation,
        rid,
        kg_cypher.agent_run_browser_query(rid) if rid else None,
        str(as_of) if as_of else None,
        got.value,
        got.unit,
        got.pick,
        got.notes,
        got.plan.as_dict() if got.plan is not None else {},
    )


def ask_page(
    question: str,
    pages: Sequence[tuple[str, str]] = (),
    *,
    chunks: Sequence[str] = (),
    llm: bool = True,
    graph: Graph | None = None,
    settings: Settings | None = None,
) -> PageAnswer:
    """Answer a question from the text of filing pages, when the graph's facts do not hold it (a segment's revenue, a
    figure only in a note): the lines the question needs, a rule where one applies, else the configured LLM over
    those lines only; the answer in the question's unit, gated, with the pages cited
    (:func:`generation.agent.page.answer_page_question`; issue 46 item 4).

    Args:
        question: e.g. "What is the FY2018 capital expenditure amount (in USD millions) for 3M?".
        pages: ``(page id, page text)`` pairs (the text of a 10-K page). chunks: ids of ``Chunk`` nodes in the graph
            (``finkg fetch``'s filing text), read as pages with their own ids. llm: use the configured model when no
            rule applies (False: rule or refusal only).

    Returns:
        A :class:`generation.agent.page.PageAnswer` (``answer``, ``status``, ``value``, ``unit``, ``citations``...).

    Raises:
        GraphError: ``chunks`` given and Neo4j is unavailable. EvaluationError: no page, or a chunk id not in the
        graph. LLMUnavailable, ModelError: ``llm`` and the model cannot be used.
    """
    from generation.agent.page import answer_page_question
    from generation.llm import client_from_settings
    from kg import cypher as kg_cypher

    s = settings or load_settings()
    given = list(pages)
    if chunks:
        with _opened(graph, s) as (g, _):
            rows = {r["id"]: r for r in g.read(kg_cypher.CHUNK_TEXTS, {"ids": list(chunks)})}
        missing = [c for c in chunks if c not in rows]
        if missing:
            raise EvaluationError(
                f"no Chunk with id {', '.join(missing)} in the graph (finkg fetch stores filing text)"
            )
        given += [(c, str(rows[c]["text"] or "")) for c in chunks]
    if not given:
        raise EvaluationError("ask_page needs a page: give pages=[(id, text)] or chunk ids")
    ruled = answer_page_question(question, given, None)
    if ruled.status == "answered" or not llm:
        return ruled  # a rule answered (or no model is wanted): the model is not even started
    client = client_from_settings(s)
    try:
        return answer_page_question(question, given, client)
    finally:
        client.close()


def agent_run(run: str, *, graph: Graph | None = None, settings: Settings | None = None) -> dict[str, Any] | None:
    """One agent run with its steps in order (each with the fact keys and chunk ids it used), or None."""
    from generation.agent.trajectory import read_run

    with _opened(graph, settings) as (g, _):
        return read_run(g, run)


def _memory(g: Graph, s: Settings, threshold: float | None, top_k: int | None, shuffled: bool = False) -> Any:
    from generation.agent.memory import THRESHOLD, TOP_K, ExperienceMemory

    embedder = _embedder(s)
    return ExperienceMemory(
        g, embedder, THRESHOLD if threshold is None else threshold, TOP_K if top_k is None else top_k, shuffled=shuffled
    )


def experience_learn(
    path: Path,
    *,
    limit: int | None = None,
    max_tokens: int = 160,
    workers: int | None = None,
    route: str = "program",
    graph: Graph | None = None,
    settings: Settings | None = None,
    progress: StageProgress | None = None,
    cost: BatchCost | None = None,
) -> Any:
    """Learn experiences from the TAT-QA file's training half (split by a hash of the table uid,
    :func:`ingest.datasets.tatqa.split_contexts`, the split ``finkg eval tatqa --half`` uses): its questions the
    agent answers on ``route`` (``program``: the arithmetic ones; ``span``: the quoted ones); see
    :func:`finkg.eval.experience.learn`. Resumable (learned questions are skipped). ``workers``: questions answered
    at once (None: ``[llm] parallel`` with llama-server or an OpenAI-compatible endpoint, else 1). ``cost``: said
    (and confirmed) with the new questions before the first LLM call, their rate recorded at the end
    (:class:`finkg.cost.BatchCost`).

    Returns:
        :class:`finkg.eval.experience.LearnSummary`.

    Raises:
        IngestError: a malformed TAT-QA file. ConfigError: an unknown route. GraphError, ModelError, LLMUnavailable.
    """
    from finkg.eval.experience import learn
    from generation.agent.memory import check_route
    from generation.llm import client_from_settings
    from ingest.datasets.tatqa import read_tatqa, split_contexts

    check_route(route)
    with _opened(graph, settings) as (g, s):
        train, evaluation = split_contexts(read_tatqa(path))
        memory = _memory(g, s, None, None)
        client = client_from_settings(s)
        summary = learn(
            client,
            memory,
            train,
            {c.table_uid for c in evaluation},
            limit=limit,
            max_tokens=max_tokens,
            workers=s.llm.concurrency() if workers is None else workers,
            route=route,
            progress=progress,
            on_pending=None if cost is None else (lambda n: cost.start(s, n)),
        )
    if cost is not None:
        cost.finish(summary.learned, calls=client.usage.calls, cache_hits=client.usage.cache_hits)
    return summary


def experience_list(
    *, split: str | None = None, limit: int = 100, graph: Graph | None = None, settings: Settings | None = None
) -> list[dict[str, Any]]:
    """Stored experiences (of ``split`` or all), oldest first."""
    from generation.agent.memory import list_experiences

    with _opened(graph, settings) as (g, _):
        return list_experiences(g, split, limit)


def experience_show(exp_id: str, *, graph: Graph | None = None, settings: Settings | None = None) -> dict[str, Any]:
    """One experience with the runs it was distilled from.

    Raises:
        GenerationError: no experience has that id.
    """
    from generation.agent.memory import show_experience

    with _opened(graph, settings) as (g, _):
        found = show_experience(g, exp_id)
    if found is None:
        raise GenerationError(f"no experience {exp_id!r}: `finkg experience list` shows the ids")
    return found


def experience_clear(*, split: str | None = None, graph: Graph | None = None, settings: Settings | None = None) -> int:
    """Delete the experiences (of ``split``; None: all), the runs they were distilled from and their steps;
    returns how many."""
    from generation.agent.memory import clear_experiences

    with _opened(graph, settings) as (g, _):
        return clear_experiences(g, split)
