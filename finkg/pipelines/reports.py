"""``finkg report``: report-generation batches with two-stage KG-guided generation (seed 004, sections 2-3).

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, section 2 (the task: answer Q from financial facts F
with an analysis A), section 3.2 (cluster-weighted triple retrieval) and section 3.3 (two-stage
generation). Per question of a JSONL batch (:class:`ReportQuestion`):

1. F: the AKShare indicator facts available on its as-of date (:func:`retrieval.facts.indicators.indicator_facts`),
   the XBRL facts of the companies it names (:func:`retrieval.facts.company.company_facts`) and the
   extra facts it brings;
2. the two stages (:class:`generation.report.two_stage.TwoStageGenerator`) with the configured retrieval system;
3. every number of the answer checked against the facts (:func:`generation.verify.report_numbers.check_numbers`;
   unsupported ones are marked ``[unverified]``), then the answer gate (:func:`generation.agent.gate.gate_report`):
   a claim about an indicator no cited fact is about is marked ``[unsupported: ...]``, and the verdict
   (``passed`` / ``could not verify``) is the record's ``gate`` and the Report node's ``gate_verdict``; a sentence
   carrying either mark is withheld (:func:`generation.verify.withhold.withhold_claims`): the published answer
   (record ``answer``, the Markdown, the node) holds only verified numbers, the withheld claims are listed with their
   reasons (record ``withheld``, node ``withheld_claims``; the gated text is ``answer_gated``, the model's
   ``answer_raw``);
4. written: ``DIR/<id>.md`` (the report with its sources), ``DIR/<id>.json`` (the record: facts, selected
   facts, retrieved triples with clusters and scores, claims and verification, tokens, times) and a
   ``(:Report)`` node linked to every fact node, chunk and triple it used (``cited`` true for those the
   answer cites); and ``DIR/<id>.indicators.png``, linked from the Markdown: the indicators the selected
   facts are about, three years up to the as-of date (only observations public by then), the cited
   observations marked.

Resumable through the item ledger (:mod:`kg.ledger`, on the ``(:Report)`` node): an item is skipped when it
is recorded ``done`` from the same input digest (:func:`input_digest`: the question, system, mode, model and
the facts F it was given) and its JSON record is there; an item never made, one that failed, and one whose
facts changed are made (again). An item fails when anything raises or when its answer stage failed (the LLM's
answer was malformed or cut off): it is recorded ``failed`` with the error (its JSON record says
``status: "failed"``) and the batch goes on; the next run retries it. ``--redo`` redoes every item; the LLM
cache answers repeated calls. Crash-safe: the (:Report) node is ``status: "writing"`` from its first write until
the ledger records the outcome, and every file is replaced whole (written beside it, then renamed), so an item
killed at any point is made again by the next run (the test hook's kill points, :func:`ingest.runs.checkpoint`:
``report-graph``, ``report-links``, ``report-files``, ``report-record``, ``report-ledger``). Bounded parallelism: ``workers`` items at a time (useful with
an HTTP backend; llama.cpp serializes its calls).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, overload

from pydantic import BaseModel, Field, FiniteFloat, ValidationError, field_validator

from finkg import plots
from finkg.config import Settings
from finkg.output import short_model_id, write_text_atomic
from generation.agent.computed import computed_facts
from generation.agent.evidence import ScopedRetriever
from generation.agent.gate import gate_report
from generation.agent.reader import ReaderAnswer, read_question
from generation.agent.trajectory import run_id, write_runs
from generation.llm import BudgetExceeded, LLMClient, LLMUnavailable, unconfigured
from generation.qa.reader import thought_reader
from generation.report.two_stage import Generation, TwoStageGenerator
from generation.verify.report_numbers import NumberCheck, check_numbers
from generation.verify.withhold import withhold_claims
from ingest import runs
from kg import BatchWriter, Graph, cypher
from kg.errors import GenerationError, ModelError
from kg.ledger import WRITING, Ledger, digest
from kg.progress import StageProgress
from retrieval.contract import Retriever, as_of_cutoff
from retrieval.embeddings import Embedder, LazyEmbedder
from retrieval.facts.company import company_facts
from retrieval.facts.indicators import FinancialFact, indicator_facts
from retrieval.facts.lookup import CompanyFactRetriever, IndicatorFactRetriever
from retrieval.facts.series import indicator_series, window_start
from retrieval.knowledge import KnowledgeRetriever
from retrieval.text.documents import DocumentIndex
from retrieval.triples.tfr import TripleIndex

MODES = ("two-stage", "single-stage")
READERS = ("two-stage", "agent", "reader-calc")
"""``two-stage``: seed 004's two stages (the default); ``agent``: the analyst agent (seed 001,
:mod:`generation.agent.reader`): the deterministic plan or the LLM calling tools, the answer with its derivation;
``reader-calc``: the same agent whose LLM route is seed 004's reader (LoRA-tuned by ``finkg train reader``; its
``calculate`` thought run by the tool, the answer through the gate: :func:`generation.agent.thought.
answer_with_thought`)."""
AGENT_READERS = ("agent", "reader-calc")
"""The readers that answer through the analyst agent (a derivation, the gate's verdict and an agent run per
report)."""


MAX_BATCH_BYTES = 64 * 1024 * 1024
"""The largest batch file read (64 MiB)."""
MAX_LINE_BYTES = 1024 * 1024
"""The longest line of a batch file (1 MiB): one question with its facts and reference."""
MAX_QUESTION_CHARS = 4_000
"""The longest question: retrieval and the LLM prompt grow with it (a 10 MB question took 2.6 GB)."""
MAX_TEXT_CHARS = 100_000
"""The longest reference analysis or conclusion."""
MAX_FACT_CHARS = 4_000
MAX_ITEMS = 200
"""The most companies, extra facts, or numbers of one fact, a question may bring."""


class ExtraFact(BaseModel):
    """A fact a question brings itself: ``{"id": ..., "text": ..., "numbers": [...]}`` (numbers as stated,
    finite)."""

    id: str = Field(min_length=1, max_length=200)
    text: str = Field(min_length=1, max_length=MAX_FACT_CHARS)
    numbers: list[FiniteFloat] = Field(default=[], max_length=MAX_ITEMS)


class ReportQuestion(BaseModel):
    """One line of a batch file.

    ``{"id": "cn-yield-2015q2", "question": "...", "as_of": "2015-06-30", "companies": ["FACTSET"],
    "facts": [{"id": "...", "text": "...", "numbers": [1.5]}]}``; ``id`` is letters, digits, ``.``, ``_``
    and ``-`` (it names the output files).
    """

    id: str = Field(pattern=r"^[A-Za-z0-9._-]{1,80}$")
    question: str = Field(min_length=3, max_length=MAX_QUESTION_CHARS)
    as_of: date | None = None
    companies: list[str] = Field(default=[], max_length=MAX_ITEMS)
    facts: list[ExtraFact] = Field(default=[], max_length=MAX_ITEMS)
    # a reference analysis (text) and its conclusion, used by `finkg eval reports`
    reference: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)
    conclusion: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)

    @field_validator("companies")
    @classmethod
    def _names(cls, v: list[str]) -> list[str]:
        if any(not x.strip() for x in v):
            raise ValueError("empty company name")
        if any(len(x) > 200 for x in v):
            raise ValueError("a company name longer than 200 characters")
        return v


class ReportItemFailed(GenerationError):
    """A question's report could not be made (its answer stage failed); the message says why."""


class BatchFileError(GenerationError):
    """A batch file that cannot be read; the message names the file, line and field."""


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of a UTF-8 batch file; lines end at LF (a CR before it is dropped), so
    the numbers are an editor's. Each line is decoded on its own, so a bad byte names its own line.

    Raises:
        BatchFileError: the file is larger than :data:`MAX_BATCH_BYTES`, a line longer than
            :data:`MAX_LINE_BYTES`, or a line is not UTF-8 (a latin-1 file, say).
    """
    size = path.stat().st_size
    if size > MAX_BATCH_BYTES:
        raise BatchFileError(
            f"{path}: {size:,} bytes; a batch file may hold at most {MAX_BATCH_BYTES // 2**20} MiB: split it"
        )
    with path.open("rb") as fh:
        n = 0
        while raw := fh.readline(MAX_LINE_BYTES + 1):
            n += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                raise BatchFileError(
                    f"{path}:{n}: the line is longer than {MAX_LINE_BYTES // 2**20} MiB; one question (at most "
                    f"{MAX_QUESTION_CHARS:,} characters) with its facts must fit on a line"
                )
            try:
                text = raw.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise BatchFileError(
                    f"{path}:{n}: not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
                    "save the batch file as UTF-8"
                ) from None
            yield n, text.removesuffix("\n").removesuffix("\r")


def load_questions(path: Path) -> list[ReportQuestion]:
    """Read a JSONL batch file (blank lines and ``#`` comments skipped), UTF-8, one question per line.

    Limits: the file at most 64 MiB, a line at most 1 MiB, a question at most 4,000 characters, a
    reference or conclusion at most 100,000, at most 200 companies, extra facts, or numbers per fact
    (numbers finite).

    Raises:
        BatchFileError: missing file, a limit passed, text that is not UTF-8, invalid JSON, a field that
            fails validation, or a repeated id; the message names ``path:line`` and the field.
    """
    if not path.is_file():
        raise BatchFileError(f"{path}: {'not a regular file' if path.exists() else 'no such file'}")
    out: list[ReportQuestion] = []
    seen: dict[str, int] = {}
    for n, line in _lines(path):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            q = ReportQuestion.model_validate_json(line)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(x) for x in err.get("loc", ())) or "line"
            raise BatchFileError(f"{path}:{n}: field {where!r}: {err.get('msg')}") from None
        if q.id in seen:
            raise BatchFileError(f"{path}:{n}: field 'id': {q.id!r} repeats line {seen[q.id]}")
        seen[q.id] = n
        out.append(q)
    if not out:
        raise BatchFileError(f"{path}: no questions")
    return out


def select_questions(questions: Sequence[ReportQuestion], only: Sequence[str], path: Path) -> list[ReportQuestion]:
    """The questions of ``path`` whose ids are in ``only``, in the batch's order (all of them for an empty ``only``).

    Raises:
        BatchFileError: an id of ``only`` names no question of the batch (the file and the ids it has are named).
    """
    if not only:
        return list(questions)
    ids = {q.id for q in questions}
    unknown = [x for x in only if x not in ids]
    if unknown:
        raise BatchFileError(
            f"{path}: no question with id {', '.join(map(repr, unknown))} (its ids: {', '.join(sorted(ids))})"
        )
    return [q for q in questions if q.id in set(only)]


@dataclass
class BatchSummary:
    """Totals of one batch: items, done now, skipped (already done), failed, time (wall; retrieval; seconds per LLM
    stage, ``stage_seconds`` keyed `select` and `answer`), tokens, numbers, unsupported and withheld claims."""

    items: int = 0
    done: int = 0
    skipped: int = 0
    failed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    tokens: int = 0
    stage_seconds: dict[str, float] = field(default_factory=dict)
    retrieval_seconds: float = 0.0
    verified: int = 0
    context: int = 0
    unverified: int = 0
    withheld: int = 0
    unsupported: int = 0
    invalid_ids: int = 0
    invalid_citations: int = 0
    answered: int = 0
    unanswered: int = 0

    def rows(self) -> list[dict[str, Any]]:
        """The closing table as ``{"measure", "value"}`` rows (the agent's rows only when it read the batch)."""
        values = {
            "questions": self.items,
            "reports written": self.done,
            "skipped (already done)": self.skipped,
            "failed": len(self.failed),
            "seconds": f"{self.seconds:.1f}",
            "questions per minute": f"{60 * self.done / self.seconds:.2f}" if self.seconds > 0 else "-",
            "seconds in retrieval": f"{self.retrieval_seconds:.2f}",
            "seconds in LLM stage 1 (fact selection)": f"{self.stage_seconds.get('select', 0.0):.1f}",
            "seconds in LLM stage 2 (answer)": f"{self.stage_seconds.get('answer', 0.0):.1f}",
            "tokens (backend)": self.tokens,
            "numbers verified": self.verified,
            "numbers that are context (dates, tenors, the question's)": self.context,
            "numbers unverified (withheld with their claims)": self.unverified,
            "unsupported claims (withheld)": self.unsupported,
            "claims withheld in all": self.withheld,
            "selected ids not in F (ignored)": self.invalid_ids,
            "citations of ids not shown": self.invalid_citations,
        }
        if "agent" in self.stage_seconds or self.answered or self.unanswered:
            values.update(
                {
                    "seconds in the agent (LLM turns)": f"{self.stage_seconds.get('agent', 0.0):.1f}",
                    "answered by the agent (gate passed)": self.answered,
                    "not answered (reason recorded)": self.unanswered,
                }
            )
        return [{"measure": k, "value": v} for k, v in values.items()]


class ReportContext:
    """What a batch shares: the graph, the LLM client, the embedder and the retrieval indexes.

    The embedder may be a :class:`retrieval.embeddings.LazyEmbedder` and the client one without a backend
    (:func:`generation.llm.client_from_settings` with ``required=False``): each is loaded, or found missing, when
    something first uses it. A question the analyst answers by its plan uses neither (it ranks no facts and makes no
    LLM call), so such a batch runs with no ``[llm]`` backend and no embedding model configured.

    Args:
        system: retrieval system (:data:`retrieval.knowledge.SYSTEMS`); mode: two- or single-stage (the two-stage
            reader's); reader: :data:`READERS` (``agent``: the analyst agent answers; ``search_evidence`` searches the
            retrieval system's knowledge, the indicator facts and the question's companies' facts; ``reader-calc``:
            the agent with seed 004's reader as its LLM route, for a client with the tuned adapter).
        variant: a tag for reports written by another model on the same system and mode (e.g. ``lora``, the
            LoRA-tuned reader of ``finkg eval reports --adapter``): it goes into the report's id and file name,
            so base and tuned reports stand side by side in the graph and the folder ("": none).

    Raises:
        ValueError: an unknown mode, reader or system, or the index the system needs is empty.
    """

    def __init__(
        self,
        graph: Graph,
        settings: Settings,
        client: Any,
        embedder: Embedder | LazyEmbedder,
        system: str,
        mode: str = "two-stage",
        progress: StageProgress | None = None,
        reader: str = "two-stage",
        variant: str = "",
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}: one of {', '.join(MODES)}")
        if reader not in READERS:
            raise ValueError(f"unknown reader {reader!r}: one of {', '.join(READERS)}")
        self.graph, self.settings, self.client, self._embedder = graph, settings, client, embedder
        self.system, self.mode, self.reader, self.variant = system, mode, reader, variant
        self.agent = reader in AGENT_READERS
        self.thought = thought_reader(client) if reader == "reader-calc" else None
        triples = documents = None
        if system in ("tfr", "dense-triples"):
            triples = TripleIndex.from_graph(
                graph, self.embedder, progress=progress("embed triples", 0) if progress else None
            )
        elif system.endswith("-docs"):  # these systems encode now: the encoder loads here
            documents = DocumentIndex.from_graph(graph, self.embedder, extracted=True)
        self.retriever = KnowledgeRetriever(
            system,
            k=settings.retrieval.k,
            top_n=settings.retrieval.top_n,
            temperature=settings.retrieval.temperature,
            triples=triples,
            documents=documents,
        )
        self.generator = TwoStageGenerator(
            client,
            self.retriever,
            max_facts=settings.report.max_facts,
            rank=self.rank,
            max_selected=settings.report.max_selected,
            answer_tokens=settings.report.answer_tokens,
            answer_format=settings.report.answer_format,
        )

    @property
    def embedder(self) -> Embedder:
        """The encoder (loaded now when it is lazy and not loaded yet).

        Raises:
            kg.errors.ModelError: no embedding model configured, or it does not load.
        """
        return self._embedder.get() if isinstance(self._embedder, LazyEmbedder) else self._embedder

    @property
    def embedder_identity(self) -> str | None:
        """The encoder's identity when it was loaded, else None (nothing was encoded: the record says so)."""
        e = self._embedder.loaded if isinstance(self._embedder, LazyEmbedder) else self._embedder
        return e.identity if e is not None else None

    def require_llm(self) -> None:
        """Raises LLMUnavailable (naming the missing ``[llm]`` setting) when the client has no backend: before work
        that only an LLM reads (F ranked for the agent's LLM route)."""
        reason = unconfigured(self.client) if isinstance(self.client, LLMClient) else None
        if reason is not None:
            raise LLMUnavailable(reason)

    def rank(self, question: str, facts: Sequence[FinancialFact]) -> list[FinancialFact]:
        """``facts`` ordered by cosine similarity to ``question`` (ties: input order)."""
        vecs = self.embedder.encode([question, *(f.text for f in facts)])
        sims = vecs[1:] @ vecs[0]
        order = sorted(range(len(facts)), key=lambda i: (-float(sims[i]), i))
        return [facts[i] for i in order]

    def facts(self, q: ReportQuestion) -> tuple[list[FinancialFact], list[str]]:
        """F for a question, and the company names that matched no filing."""
        facts, unmatched, _ = self.facts_with_calls(q)
        return facts, unmatched

    def facts_with_calls(self, q: ReportQuestion) -> tuple[list[FinancialFact], list[str], list[dict[str, Any]]]:
        """F for a question, the company names that matched no filing, and one record per fact lookup
        (``retriever``, ``as_of``: the ISO UTC cutoff used, ``as_of_from``: ``question`` or ``now``, ``returned``).

        Everything is read as of the question's date: indicator facts from observations published by its
        end, company facts from the latest filing public by then. A question without a date gets no
        indicator facts and the company facts public now (recorded as such).
        """
        as_of = q.as_of.isoformat() if q.as_of else None
        when = as_of or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        calls: list[dict[str, Any]] = []

        def call(retriever: str, returned: int) -> None:
            calls.append(
                {
                    "retriever": retriever,
                    "as_of": as_of_cutoff(when),
                    "as_of_from": "question" if as_of else "now",
                    "returned": returned,
                }
            )

        facts: list[FinancialFact] = []
        if q.as_of is not None:
            facts += indicator_facts(self.graph, q.as_of)
            call("indicator-facts", len(facts))
        found = company_facts(self.graph, q.companies, when) if q.companies else None
        if found is not None:
            facts += found.facts
            call("company-facts", len(found.facts))
            # the engine's measures (issue 44): the report's numbers are computed, the prose model cites them
            measured = computed_facts(self.graph, q.companies, when)
            facts = measured + facts
            call("engine-measures", len(measured))
        facts += [
            FinancialFact(
                id=f"extra:{q.id}:{x.id}",
                text=x.text,
                numbers=tuple(x.numbers),
                unit="",
                date=as_of or "",
                indicator="",
                source="question",
            )
            for x in q.facts
        ]
        return facts, (found.unmatched if found else []), calls


def _report_id(q: ReportQuestion, ctx: ReportContext) -> str:
    base = f"report:{q.id}:{ctx.system}:{ctx.reader if ctx.agent else ctx.mode}"
    return f"{base}:{ctx.variant}" if ctx.variant else base


def _record(
    q: ReportQuestion,
    ctx: ReportContext,
    gen: Generation,
    marked: str,
    checks: list[NumberCheck],
    unmatched: list[str],
    seconds: float,
    fact_calls: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "id": q.id,
        "report_id": _report_id(q, ctx),
        "status": "done",
        "question": q.question,
        "as_of": q.as_of.isoformat() if q.as_of else None,
        "companies": q.companies,
        "unmatched_companies": unmatched,
        "system": ctx.system,
        "mode": ctx.mode,
        "model_id": ctx.client.model_id,
        "embedder": ctx.embedder_identity,
        "facts_total": gen.facts_total,
        "facts_shown": [f.id for f in gen.facts],
        "selected_facts": [asdict(f) for f in gen.selected],
        "invalid_ids": gen.invalid_ids,
        "k1": [asdict(k) for k in gen.k1],
        "k2": [asdict(k) for k in gen.k2],
        "knowledge_trimmed": gen.knowledge_trimmed,
        "retrieval_calls": gen.retrieval_calls,
        "fact_retrieval_calls": fact_calls or [],
        "answer_raw": gen.answer,
        "answer": marked,
        "cited_facts": gen.cited_facts,
        "cited_knowledge": gen.cited_knowledge,
        "invalid_citations": gen.invalid_citations,
        "numbers": [asdict(c) for c in checks],
        "calls": {k: asdict(v) for k, v in gen.calls.items()},
        "seconds": round(seconds, 3),
        "seconds_retrieval": round(gen.seconds_retrieval, 4),
    }


CHART_YEARS = 3
"""Years of history a report's indicator chart shows, up to its as-of date."""
CHART_PANELS = 6
"""Indicators one chart draws at most."""


def _chart(graph: Graph, gen: Generation, as_of: date | None, path: Path) -> str | None:
    """Draw the indicators the selected facts are about (AKShare series) over :data:`CHART_YEARS` years up to
    ``as_of``, only observations public by then, the observations the facts state marked; returns the PNG's file name,
    or None when no indicator fact was selected (or the question has no date)."""
    if as_of is None:
        return None
    cited: dict[str, set[str]] = {}
    for f in gen.selected:
        if f.source.startswith("akshare:"):
            cited.setdefault(f.indicator, set()).add(f.date)
            for label, _, key in f.cites:  # a change's other observation (``<code>:<date>``) too
                if label == "Observation" and ":" in key:
                    code, day = key.rsplit(":", 1)
                    cited.setdefault(code, set()).add(day)
    panels = []
    for code, days in sorted(cited.items()):
        series = indicator_series(graph, code, as_of=as_of, start=window_start(as_of, CHART_YEARS))
        if series is None or not series.points:
            continue
        marked = [(d, v) for d, v in series.points if d in days]
        panels.append(plots.Panel(f"{series.name} ({series.unit})", series.points, marked))
    if not panels:
        return None
    title = f"Cited indicators, as known on {as_of.isoformat()}"
    if len(panels) > CHART_PANELS:
        title += f" (the first {CHART_PANELS} of {len(panels)} by code)"
    plots.indicator_panels(panels[:CHART_PANELS], as_of.isoformat(), path, title=title)
    return path.name


def _gate_line(gate: dict[str, Any] | None) -> str:
    """The answer gate's verdict as a line of the report (issue 17: every answer finkg writes is gated)."""
    if not gate:
        return "Answer gate: not run."
    if gate["passed"]:
        return "Answer gate: passed (every number verified, every indicator claim backed by a cited fact)."
    if gate.get("withheld_claims"):
        n = gate["withheld_claims"]
        return (
            f"Answer gate: {n} claim(s) withheld, listed under Withheld claims ("
            + "; ".join(dict.fromkeys(gate["reasons"]))
            + "); every number published is verified."
        )
    return "Answer gate: could not verify: " + "; ".join(gate["reasons"]) + "."


def _markdown(rec: dict[str, Any], gen: Generation) -> str:
    short_f = {f.id: f"F{i}" for i, f in enumerate(gen.selected, 1)}
    short_k = {k.id: f"K{i}" for i, k in enumerate(gen.knowledge, 1)}
    n = {s: sum(1 for c in rec["numbers"] if c["status"] == s) for s in ("verified", "context", "unverified")}
    lines = [
        f"# {rec['question']}",
        "",
        f"*As of {rec['as_of'] or '-'} · retrieval `{rec['system']}` · {rec['mode']} · model `{rec['model_id'][:24]}`*",
        "",
        rec["answer"] or "*(no answer: see the record's calls)*",
        "",
        f"Numbers: {n['verified']} verified against a fact, {n['context']} context (dates, tenors, the question's), "
        + (
            f"{n['unverified']} unverified, withheld with their claims."
            if rec.get("withheld") is not None
            else f"{n['unverified']} marked [unverified]."
        ),
        "",
        _gate_line(rec.get("gate")),
        "",
        "## Facts (F_select)",
        "",
    ]
    lines += [
        f"- **[{short_f[f.id]}]** {f.text} `{f.id}`" + (" (cited)" if f.id in rec["cited_facts"] else "")
        for f in gen.selected
    ] or ["- none selected"]
    if rec.get("chart"):
        lines += ["", f"![The cited indicators up to {rec['as_of']}]({rec['chart']})"]
    lines += ["", "## Knowledge", ""]
    lines += [
        f"- **[{short_k[k.id]}]** {k.text} (score {k.score:.3f}"
        + (f", cluster `{k.cluster}` weight {k.cluster_weight:.2f}" if k.cluster_weight is not None else "")
        + f", chunk `{k.chunk_id}`)"
        + (" (cited)" if k.id in rec["cited_knowledge"] else "")
        for k in gen.knowledge
    ] or ["- none"]
    if rec.get("withheld"):
        lines += ["", "## Withheld claims", ""] + [
            f"- {w['claim']} (withheld: {'; '.join(w['reasons'])})" for w in rec["withheld"]
        ]
    elif any(c["status"] == "unverified" for c in rec["numbers"]):
        lines += ["", "## Unverified numbers", ""] + [
            f"- {c['text']}: {c['why']}" for c in rec["numbers"] if c["status"] == "unverified"
        ]
    lines += ["", "## In Neo4j Browser", "", "```cypher", cypher.report_browser_query(rec["report_id"]), "```", ""]
    return "\n".join(lines)


def _graph_rows(rec: dict[str, Any], gen: Generation) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    rid = rec["report_id"]
    node = {
        "id": rid,
        "question": rec["question"],
        "as_of": rec["as_of"],
        "system": rec["system"],
        "mode": rec["mode"],
        "model_id": rec["model_id"],
        "answer": rec["answer"],
        "numbers_verified": sum(c["status"] == "verified" for c in rec["numbers"]),
        "numbers_unverified": sum(c["status"] == "unverified" for c in rec["numbers"]),
        "gate_verdict": (rec.get("gate") or {}).get("verdict"),
        "published_verdict": (rec.get("gate") or {}).get("published"),
        "withheld_claims": len(rec.get("withheld") or []),
        "unsupported_claims": len((rec.get("gate") or {}).get("unsupported_claims", [])),
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    links: dict[str, list[dict[str, Any]]] = {}
    for f in gen.selected:
        for label, key, value in f.cites:
            links.setdefault(f"{label}.{key}", []).append(
                {
                    "start": rid,
                    "end": value,
                    "id": f"{rid}|{f.id}|{value}",
                    "props": {"kind": "fact", "fact_id": f.id, "cited": f.id in rec["cited_facts"]},
                }
            )
    for k in gen.knowledge:
        props = {
            "kind": k.kind,
            "knowledge_id": k.id,
            "cited": k.id in rec["cited_knowledge"],
            "score": k.score,
            "cluster": k.cluster,
        }
        if k.chunk_id:
            links.setdefault("Chunk.id", []).append(
                {"start": rid, "end": k.chunk_id, "id": f"{rid}|{k.id}|chunk", "props": props}
            )
        if k.head_id:  # a triple: the link lands on its head entity; the relationship id is in the props
            links.setdefault("Entity.id", []).append(
                {"start": rid, "end": k.head_id, "id": f"{rid}|{k.id}|head", "props": {**props, "triple_id": k.id}}
            )
    return node, links


def _write_report(
    graph: Graph, settings: Settings, node: dict[str, Any], links: dict[str, list[dict[str, Any]]]
) -> BatchWriter:
    """Write a report's node and its ``CITES`` links (``links``: ``"Label.key"`` -> relationship rows), replacing
    the links of an earlier write; returns the writer for further links."""
    writer = BatchWriter(graph, batch_size=settings.writer.batch_size)
    # "writing" until the ledger records the outcome: a redo killed from here on is never taken as done
    writer.merge_nodes("Report", [{**node, "status": WRITING}], key="id")
    graph.write(cypher.DELETE_REPORT_LINKS, {"id": node["id"]})  # a redo replaces the links
    runs.checkpoint("report-links")
    for target, rows in links.items():
        label, key = target.split(".")
        writer.merge_relationships("CITES", rows, start=("Report", "id"), end=(label, key), key="id")
    return writer


def _write_graph(graph: Graph, settings: Settings, rec: dict[str, Any], gen: Generation) -> None:
    _write_report(graph, settings, *_graph_rows(rec, gen))


def _done(path: Path, ctx: ReportContext) -> bool:
    if not path.is_file():
        return False
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    if rec.get("status") != "done" or rec.get("system") != ctx.system:
        return False
    if rec.get("reader", "two-stage") != ctx.reader:
        return False
    return ctx.agent or rec.get("mode") == ctx.mode


def input_digest(q: ReportQuestion, ctx: ReportContext, facts: Sequence[FinancialFact]) -> str:
    """The digest of what a question's report is made from: the question, the retrieval system and mode, the
    model, and the facts F (the knowledge retrieved later is not in it); for the agent reader also the reader and
    its turn limit (the two-stage digest is as before, so reports made earlier are still skipped)."""
    made: dict[str, Any] = {
        "question": q.model_dump(mode="json"),
        "system": ctx.system,
        "mode": ctx.mode,
        "model": ctx.client.model_id,
        "facts": [asdict(f) for f in facts],
    }
    if ctx.agent:
        made.update({"reader": ctx.reader, "mode": None, "agent_steps": ctx.settings.report.agent_steps})
    return digest(made)


def _failure(gen: Generation) -> str | None:
    """Why a generation failed, or None: the answer stage's recorded error (a stage-1 error is not a failure:
    stage 2 then runs without selected facts, as documented in :class:`TwoStageGenerator`)."""
    call = gen.calls.get("answer")
    return f"the answer stage failed: {call.error}" if call is not None and call.error else None


def _one(
    q: ReportQuestion,
    ctx: ReportContext,
    out: Path,
    facts: list[FinancialFact],
    unmatched: list[str],
    fact_calls: list[dict[str, Any]],
) -> dict[str, Any]:
    if ctx.agent:
        return _one_agent(q, ctx, out, (facts, unmatched, fact_calls))
    t0 = time.perf_counter()
    as_of = q.as_of.isoformat() if q.as_of else None
    gen = (
        ctx.generator.run(q.question, facts, as_of, scope=q.companies)
        if ctx.mode == "two-stage"
        else ctx.generator.single_stage(q.question, facts, as_of, scope=q.companies)
    )
    short = {f"F{i}": f.id for i, f in enumerate(gen.selected, 1)}
    marked, checks = check_numbers(gen.answer, q.question, gen.selected, short)
    cited = [(f.indicator, f.text) for f in gen.selected if f.id in gen.cited_facts]
    gate = gate_report(marked, [(c.text, c.status) for c in checks], cited)
    kept = withhold_claims(gate.text)
    rec = _record(q, ctx, gen, kept.published, checks, unmatched, time.perf_counter() - t0, fact_calls)
    rec["answer_gated"], rec["withheld"] = gate.text, kept.withheld
    rec["gate"] = {
        **gate.as_dict(),
        "withheld_claims": len(kept.withheld),
        "published": "passed" if gate.passed else f"passed after withholding {len(kept.withheld)} claim(s)",
    }
    failure = _failure(gen)
    if failure:
        rec["status"], rec["error"] = "failed", failure
    runs.checkpoint("report-graph")
    _write_graph(ctx.graph, ctx.settings, rec, gen)
    stem = report_stem(q, ctx)
    rec["chart"] = _chart(ctx.graph, gen, q.as_of, out / f"{stem}.indicators.png")
    runs.checkpoint("report-files")
    write_text_atomic(out / f"{stem}.md", _markdown(rec, gen))
    runs.checkpoint("report-record")
    write_text_atomic(out / f"{stem}.json", json.dumps(rec, ensure_ascii=False, indent=1))  # last, and whole
    if failure:
        raise ReportItemFailed(failure)
    return rec


# --------------------------------------------------------------------------- the agent reader (seed 001)


def agent_sources(ctx: ReportContext, q: ReportQuestion) -> list[Retriever]:
    """What the agent's ``search_evidence`` searches for a question: the indicator facts, the XBRL facts of the
    companies it names, and the retrieval system's knowledge (triples or chunks; none for ``none``)."""
    sources: list[Retriever] = [IndicatorFactRetriever(ctx.graph)]
    if q.companies:
        sources.append(ScopedRetriever(CompanyFactRetriever(ctx.graph), {"companies": q.companies}, "company-facts"))
    if ctx.system != "none":
        sources.append(ctx.retriever)
    return sources


def _answer_text(got: ReaderAnswer) -> str:
    if got.answer is not None:
        return got.answer
    why = "; ".join(got.reasons) or "no reason recorded"
    return f"could not answer: {why}" if got.status == "could not answer" else f"could not answer ({got.status}): {why}"


def _agent_gate(got: ReaderAnswer) -> dict[str, Any]:
    if got.verdict is None:
        return {"verdict": "not run", "passed": False, "reasons": list(got.reasons)}
    return {**got.verdict, "verdict": "passed" if got.verdict["passed"] else "could not verify"}


def _step_rows(got: ReaderAnswer) -> list[dict[str, Any]]:
    return [
        {
            "i": i,
            "tool": st.tool,
            "input": st.input,
            "output": st.output,
            "error": st.error,
            "facts": list(st.facts),
            "observations": list(st.observations),
            "chunks": list(st.chunks),
        }
        for i, st in enumerate(got.run.steps)
    ]


def _agent_record(
    q: ReportQuestion,
    ctx: ReportContext,
    got: ReaderAnswer,
    shown: Sequence[FinancialFact],
    facts_total: int,
    unmatched: list[str],
    fact_calls: list[dict[str, Any]],
    seconds: float,
) -> dict[str, Any]:
    rid = _report_id(q, ctx)
    calls = got.calls
    return {
        "id": q.id,
        "report_id": rid,
        "status": "done",
        "reader": ctx.reader,
        "question": q.question,
        "as_of": q.as_of.isoformat() if q.as_of else None,
        "as_of_from": "question" if q.as_of else "now",
        "companies": q.companies,
        "unmatched_companies": unmatched,
        "system": ctx.system,
        "mode": None,
        "model_id": ctx.client.model_id,
        "agent_model": got.run.model,
        "embedder": ctx.embedder_identity,
        "route": got.route,
        "answer": _answer_text(got),
        "answer_status": got.status,
        "reasons": got.reasons,
        "derivation": got.derivation,
        "gate": _agent_gate(got),
        "agent_run": got.run.id,
        "steps": _step_rows(got),
        "facts_total": facts_total,
        "facts_shown": [f.id for f in shown],
        "facts_trimmed": got.run.props.get("facts_trimmed", 0),
        "fact_retrieval_calls": fact_calls,
        "calls": {
            "agent": {
                "prompt_tokens": calls.get("prompt_tokens", 0),
                "completion_tokens": calls.get("completion_tokens", 0),
                "cached": False,
                "seconds": calls.get("seconds", 0.0),
                "llm_calls": calls.get("llm_calls", 0),
                "cached_calls": calls.get("cached_calls", 0),
            }
        },
        "numbers": [],
        "invalid_ids": [],
        "invalid_citations": [],
        "seconds": round(seconds, 3),
        "seconds_retrieval": 0.0,
        "browser": cypher.report_run_browser_query(rid),
    }


def _fmt_value(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return f"{value:,.0f}" if abs(value) >= 1000 and value == int(value) else f"{value:,.6g}"


def _agent_markdown(rec: dict[str, Any]) -> str:
    gate = rec["gate"]
    if gate["verdict"] == "passed":
        gate_line = "Answer gate: passed (every number traced to a tool output or a fact)."
    elif gate["verdict"] == "not run":
        gate_line = "Answer gate: not run (no answer reached it)."
    else:
        gate_line = "Answer gate: could not verify: " + "; ".join(gate.get("reasons", [])) + "."
    lines = [
        f"# {rec['question']}",
        "",
        f"*As of {rec['as_of'] or 'now'} · reader `{rec['reader']}` ({rec['route']}) · retrieval `{rec['system']}` "
        f"· model `{short_model_id(str(rec['agent_model']), 24)}`*",
        "",
        ("**Answer:** " if rec["answer_status"] == "answered" else "**")
        + rec["answer"]
        + ("" if rec["answer_status"] == "answered" else "**"),
        "",
        gate_line,
        "",
    ]
    d = rec["derivation"]
    if d:
        lines += ["## Derivation", "", "| operand | value | fact key | source |", "|---|---|---|---|"]
        for name, o in d.get("operands", {}).items():
            source = o.get("filing") or o.get("text") or o.get("evidence_id") or "-"
            lines.append(f"| `{name}` | {_fmt_value(o.get('value'))} | `{o.get('fact_key') or '-'}` | {source} |")
        if d.get("formula"):
            lines += ["", f"Formula: {d['formula']}"]
        lines += ["", f"Expression: `{d.get('expression')}` = {_fmt_value(d.get('result'))}", ""]
    lines += [f"## Trajectory (agent run `{rec['agent_run']}`)", ""]
    for st in rec["steps"]:
        used = st["facts"] + st["observations"] + st["chunks"]
        text = json.dumps(st["input"], ensure_ascii=False, default=str)
        lines.append(
            f"{st['i'] + 1}. `{st['tool']}` {text[:160]}"
            + (f" — error: {st['error']}" if st["error"] else "")
            + (f" — used: {', '.join(f'`{u}`' for u in used)}" if used else "")
        )
    if not rec["steps"]:
        lines.append("- no steps")
    lines += ["", "## In Neo4j Browser", "", "```cypher", rec["browser"], "```", ""]
    return "\n".join(lines)


def _write_agent_graph(graph: Graph, settings: Settings, rec: dict[str, Any], got: ReaderAnswer) -> None:
    rid = rec["report_id"]
    write_runs(graph, [got.run], settings.writer.batch_size)
    node = {
        "id": rid,
        "question": rec["question"],
        "as_of": rec["as_of"],
        "system": rec["system"],
        "mode": "agent",
        "reader": rec["reader"],
        "model_id": rec["model_id"],
        "answer": rec["answer"],
        "answer_status": rec["answer_status"],
        "route": rec["route"],
        "agent_run": got.run.id,
        "gate_verdict": rec["gate"]["verdict"],
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    links: dict[str, dict[str, dict[str, Any]]] = {}
    for st in got.run.steps:
        for target, kind, values in (
            ("Fact.key", "fact", st.facts),
            ("Observation.id", "fact", st.observations),
            ("Chunk.id", "chunk", st.chunks),
        ):
            for v in values:
                row = {"start": rid, "end": v, "id": f"{rid}|agent|{v}", "props": {"kind": kind, "cited": True}}
                links.setdefault(target, {})[row["id"]] = row
    writer = _write_report(graph, settings, node, {t: list(rows.values()) for t, rows in links.items()})
    writer.merge_relationships(
        "ANSWERED_BY",
        [{"start": rid, "end": got.run.id, "id": f"{rid}|run", "props": {"route": got.route}}],
        start=("Report", "id"),
        end=("AgentRun", "id"),
        key="id",
    )


def _one_agent(
    q: ReportQuestion, ctx: ReportContext, out: Path, found: tuple[list[FinancialFact], list[str], list[dict[str, Any]]]
) -> dict[str, Any]:
    """One question read by the analyst agent (:func:`generation.agent.reader.read_question`): ``found`` is F, the
    unmatched company names and the fact lookups (:meth:`ReportContext.facts_with_calls`); F ranked by similarity
    to the question (at most ``[report] max_facts`` shown), the run stored and linked, the files written. An answer
    the agent could not give is a report saying so with the reason (``answer_status``), recorded done."""
    facts, unmatched, fact_calls = found
    t0 = time.perf_counter()
    shown = RankedOnUse(lambda: _shown(ctx, q, facts))
    when = q.as_of.isoformat() if q.as_of else datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    got = read_question(
        ctx.graph,
        ctx.client,
        q.question,
        run_id("report", q.question, _report_id(q, ctx)),
        as_of=when,
        companies=q.companies,
        facts=shown,
        sources=agent_sources(ctx, q),
        max_steps=ctx.settings.report.agent_steps,
        thought=ctx.thought,
    )
    rec = _agent_record(q, ctx, got, shown.ranked or [], len(facts), unmatched, fact_calls, time.perf_counter() - t0)
    runs.checkpoint("report-graph")
    _write_agent_graph(ctx.graph, ctx.settings, rec, got)
    stem = report_stem(q, ctx)
    runs.checkpoint("report-files")
    write_text_atomic(out / f"{stem}.md", _agent_markdown(rec))
    runs.checkpoint("report-record")
    write_text_atomic(out / f"{stem}.json", json.dumps(rec, ensure_ascii=False, indent=1, default=str))
    return rec


def _shown(ctx: ReportContext, q: ReportQuestion, facts: Sequence[FinancialFact]) -> list[FinancialFact]:
    """F as the agent's LLM route shows it: ranked by similarity to the question, at most ``[report] max_facts``.
    Raises LLMUnavailable first when no LLM is configured (F is ranked only for the model that reads it)."""
    ctx.require_llm()
    return ctx.rank(q.question, facts)[: ctx.settings.report.max_facts] if facts else []


class RankedOnUse(Sequence[FinancialFact]):
    """F as shown to the agent, ranked (the encoder loaded) on first use: the LLM route reads it, the plan route
    answers from the graph and never does, so a report answered by the plan encodes nothing.

    Args:
        rank: makes the shown facts (:func:`_shown`); called once, on first use.
    """

    def __init__(self, rank: Callable[[], list[FinancialFact]]) -> None:
        self._rank = rank
        self._facts: list[FinancialFact] | None = None

    @property
    def ranked(self) -> list[FinancialFact] | None:
        """The facts shown, or None when nothing looked at them."""
        return self._facts

    def _all(self) -> list[FinancialFact]:
        if self._facts is None:
            self._facts = self._rank()
        return self._facts

    def __len__(self) -> int:
        return len(self._all())

    @overload
    def __getitem__(self, i: int) -> FinancialFact: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[FinancialFact]: ...

    def __getitem__(self, i: int | slice) -> FinancialFact | Sequence[FinancialFact]:
        return self._all()[i]


def report_stem(q: ReportQuestion, ctx: ReportContext) -> str:
    """The file name (no suffix) of a question's report: its id, plus system and mode unless TFR two-stage; the
    agent readers': its id, the system unless TFR, and ``.agent`` (``.reader-calc``); then ``.<variant>`` when the
    context has one."""
    if ctx.agent:
        suffix = ("" if ctx.system == "tfr" else f".{ctx.system}") + f".{ctx.reader}"
    else:
        suffix = "" if (ctx.system, ctx.mode) == ("tfr", "two-stage") else f".{ctx.system}.{ctx.mode}"
    suffix += f".{ctx.variant}" if ctx.variant else ""
    return re.sub(r"[^A-Za-z0-9._-]", "_", q.id + suffix)


def run_batch(
    questions: Sequence[ReportQuestion],
    ctx: ReportContext,
    out: Path,
    redo: bool = False,
    workers: int = 1,
    progress: StageProgress | None = None,
) -> BatchSummary:
    """Write a report per question into ``out`` (created), skipping those already done unless ``redo``.

    A question that fails (an LLM or graph error, or its answer stage failed) is recorded ``failed`` in the
    ledger with its error, reported in ``failed`` with the reason, and the batch goes on; ``LLMUnavailable``,
    ``BudgetExceeded`` and ``ModelError`` (the encoder, loaded at its first use) are recorded too and stop the batch
    (what is written stays; a rerun resumes).
    """
    out.mkdir(parents=True, exist_ok=True)
    summary = BatchSummary(items=len(questions))
    t0 = time.perf_counter()
    ledger = Ledger(ctx.graph, "Report", ctx.settings.writer.batch_size, stages=(WRITING,))
    advance = progress("reports (LLM)", len(questions)) if progress else (lambda _n, **_k: None)

    def account(rec: dict[str, Any]) -> None:
        summary.done += 1
        calls = rec["calls"].values()
        spent = sum(c["prompt_tokens"] + c["completion_tokens"] for c in calls if not c["cached"])
        summary.tokens += spent
        for stage, c in rec["calls"].items():
            summary.stage_seconds[stage] = summary.stage_seconds.get(stage, 0.0) + c["seconds"]
        summary.retrieval_seconds += rec["seconds_retrieval"]
        for c in rec["numbers"]:
            setattr(summary, c["status"], getattr(summary, c["status"]) + 1)
        summary.withheld += len(rec.get("withheld") or [])
        summary.unsupported += len((rec.get("gate") or {}).get("unsupported_claims") or [])
        summary.invalid_ids += len(rec["invalid_ids"])
        summary.invalid_citations += len(rec["invalid_citations"])
        if rec.get("reader") in AGENT_READERS:
            if rec["answer_status"] == "answered":
                summary.answered += 1
            else:
                summary.unanswered += 1
        advance(1, tokens=sum(c["completion_tokens"] for c in calls if not c["cached"]))

    def attempt(q: ReportQuestion) -> dict[str, Any] | str:
        """The item's record when made now, ``"skipped"`` when done already, else the failure's text."""
        rid, made = _report_id(q, ctx), ""
        try:
            facts, unmatched, fact_calls = ctx.facts_with_calls(q)
            made = input_digest(q, ctx, facts)
            if not redo and ledger.is_done(rid, made) and _done(out / (report_stem(q, ctx) + ".json"), ctx):
                return "skipped"
            rec = _one(q, ctx, out, facts, unmatched, fact_calls)
        except (LLMUnavailable, BudgetExceeded, ModelError) as exc:  # no model to go on with: the batch stops
            ledger.failed(rid, made, exc)
            raise
        except Exception as exc:
            runs.checkpoint("report-ledger")
            ledger.failed(rid, made, exc)
            return f"{q.id}: {type(exc).__name__}: {exc}"
        runs.checkpoint("report-ledger")
        ledger.done(rid, made)
        return rec

    with ThreadPoolExecutor(max(1, workers)) as pool:
        for got in pool.map(attempt, questions):
            if isinstance(got, dict):
                account(got)
            elif got == "skipped":
                summary.skipped += 1
                advance(1, tokens=0)
            else:
                summary.failed.append(got)
                advance(1, tokens=0)
    summary.seconds = time.perf_counter() - t0
    return summary
