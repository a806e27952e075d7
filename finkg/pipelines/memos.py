"""``finkg memo``: risk memos for filings in the graph, written as files and as an audit trail.

For each filing (``--accession`` or ``--all``) and system, in batches of ``memo_batch_size``
filings (one Neo4j read of their fact maps, one set of batched writes):

- the graph gets ``(:Memo {id: "<system>:<adsh>"})-[:ABOUT]->(:Filing)`` and
  ``(:Memo)-[:HAS_CLAIM]->(:Claim)-[:CITES]->(:Fact)``; each claim carries its status
  (exact / repaired / unsupported / not_applicable), gold and original values, citation status
  and its repair records as JSON, so a reviewer walks from a number to its filing in Neo4j Browser;
- system ``structured-llm``: the configured LLM (``[llm]`` settings) writes the body from the
  structured claims; the verifier then checks and repairs its numbers like any other body;
- ``OUT/<system>/<adsh>.md`` (the memo) and ``OUT/<system>/claims/<adsh>.jsonl`` (its claims);
  at the end ``OUT/<system>/claims.jsonl`` and ``claims.csv`` gather all claims of the run;
- ``OUT/<system>/<adsh>.png``: the filer's current ratio and leverage against its SIC peers of the same
  quarter (:class:`PeerPictures`), linked from the memo's "Peers" section, named in its claim records
  (``picture``) and on its Memo node; a memo whose filer lacks either ratio, or has no peer, gets a line
  saying why instead.

Resumable through the item ledger (:mod:`kg.ledger`): a memo is recorded ``status: 'done'`` in the graph,
with the digest of the facts it was made from (:func:`input_digest`: the filing and every candidate fact
read), only after its files and claims are written; a memo that fails is recorded ``failed`` with its error.
A rerun skips the memos done from the same facts whose file exists and redoes the rest: never done, failed,
or made from facts that have changed since (a graph repaired by a re-ingest). Redoing replaces the memo's
claims; every other write is a MERGE on a deterministic key. Every file is replaced whole (written beside
it, then renamed), so a memo killed mid-write never leaves half a file that a rerun could take as done.
Kill points of the test hook (:func:`ingest.runs.checkpoint`): ``memo-file`` (before each memo's files),
``memo-graph``, ``memo-claims`` and ``memo-ledger`` (before a batch's Memo nodes, claims, ledger entries),
``memo-gather`` (between the run's claims.jsonl and claims.csv).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from finkg import plots
from finkg.config import Settings
from finkg.output import write_text_atomic
from generation import llm
from generation.memo import llm_render
from generation.memo.claims import RiskThresholds
from generation.memo.drafting import Prior
from generation.memo.peers import SIC_LEVEL, PeerGroup, QuarterPeers, RatioPoint, ratio_point
from generation.memo.render import EVIDENCE_HEADING, claim_sentence
from generation.memo.systems import SYSTEMS, MemoContext, MemoResult, generate_memo
from ingest import runs
from ingest.runs import now
from kg import BatchWriter, Graph, cypher
from kg.errors import GenerationError
from kg.ledger import DONE, WRITING, Ledger, digest
from kg.progress import StageProgress
from retrieval.facts.fact_map import (
    FactMap,
    filing_sources,
    list_filings,
    read_fact_maps,
    read_quarter_fact_maps,
    resolve_amendments,
)
from retrieval.text.tfidf import EvidenceIndex, load_evidence


class MemoError(GenerationError):
    """A memo run cannot start: an unknown system or an accession that is not in the graph."""


CLAIM_FIELDS = (
    "memo_id",
    "system",
    "adsh",
    "n",
    "kind",
    "name",
    "value",
    "qtrs",
    "ddate",
    "status",
    "original_value",
    "gold_value",
    "citation_status",
    "citations",
    "citation_labels",
    "note",
    "flag",
    "sentence",
    "repairs",
    "picture",
)


def thresholds(settings: Settings) -> RiskThresholds:
    """The risk tests' thresholds from the ``[memo]`` settings."""
    return RiskThresholds(
        settings.memo.current_ratio_floor,
        settings.memo.leverage_ceiling,
        settings.memo.ocf_margin_floor,
        settings.memo.net_margin_floor,
    )


def build_context(
    graph: Graph,
    settings: Settings,
    systems: Sequence[str],
    progress: StageProgress | None = None,
) -> MemoContext:
    """What the chosen systems need: the prior from every filing's fact map (No-RAG and the text
    systems), the TF-IDF index over every evidence sentence (text systems). Both are point in time: each
    memo reads them as of its own filing's acceptance (:func:`generation.memo.systems.memo_as_of`)."""
    ctx = MemoContext(thresholds(settings))
    if any(s != "structured" for s in systems):
        adshs = [f["adsh"] for f in list_filings(graph)]
        ctx.prior = Prior(read_fact_maps(graph, adshs, settings.memo.batch_size))
    if any(s in ("text-rag", "verifier-rag") for s in systems):
        tick = progress("evidence sentences", 0) if progress else None
        ctx.index = EvidenceIndex(load_evidence(graph, progress=tick))
    return ctx


PEERS_HEADING = "## Peers"


class PeerPictures:
    """The memos' peer pictures (issue 20, part 4) for one run: the filer's current ratio and leverage
    against its SIC peers of the same quarter (:mod:`generation.memo.peers`), a PNG beside the memo.

    Each quarter's ratios come from ONE read of its filings (:func:`read_quarter_fact_maps`, on the first
    memo of that quarter); each peer group is drawn once (:class:`finkg.plots.PeerChart`), each memo's picture
    adds its filer to it. The pictures are drawn by one worker thread while the run goes on (its reads and
    writes wait on Neo4j); :meth:`wait` returns when a batch's pictures are written (before its ledger entries:
    a memo is done only with its picture), :meth:`close` ends the worker. Use it as a context manager.
    """

    def __init__(self, graph: Graph, thresholds: RiskThresholds, enabled: bool = True) -> None:
        self.graph = graph
        self.enabled = enabled
        self.thresholds = (thresholds.leverage_ceiling, thresholds.current_ratio_floor)
        self.quarters: dict[str, QuarterPeers] = {}
        self.charts: dict[tuple[str, str, int], plots.PeerChart] = {}  # used by the worker only
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memo-pictures")
        self._pending: dict[str, Future[Path]] = {}

    def __enter__(self) -> PeerPictures:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Wait for the pictures in progress and end the worker."""
        self._worker.shutdown(wait=True)

    def wait(self, memos: Iterable[MemoResult]) -> None:
        """Return when the pictures of ``memos`` are written (raising what drawing one raised)."""
        for m in memos:
            pending = self._pending.pop(m.memo_id, None)
            if pending is not None:
                pending.result()

    def quarter(self, source: str) -> QuarterPeers:
        """The ratio points of the filings loaded from ``source`` (read once per run)."""
        if source not in self.quarters:
            self.quarters[source] = QuarterPeers(source, read_quarter_fact_maps(self.graph, source))
        return self.quarters[source]

    def add(self, memo: MemoResult, fm: FactMap, folder: Path) -> None:
        """Start drawing ``memo``'s picture into ``folder/<adsh>.png`` and add its "Peers" section to the memo's
        Markdown (before the evidence list): the picture's link and caption, or why there is no picture. Sets
        ``memo.picture`` (the file name; None without one). Nothing when pictures are off (``[memo] pictures``)."""
        if not self.enabled:
            return
        filer = ratio_point(fm)
        source = fm.filing.get("source")
        group: PeerGroup | str
        if not filer.complete:
            group = f"the filer's {filer.missing()}"
        elif not source:
            group = "the filing was not loaded from a quarter's file (no `source`), so it has no quarter peers"
        else:
            group = self.quarter(source).group(filer)
        if isinstance(group, str):
            memo.picture = None
            text = f"No peer picture: {group}."
        else:
            memo.picture = f"{fm.adsh}.png"
            against = f"{group.level} {group.code}"
            if group.level != SIC_LEVEL:
                against += f" (too few SIC {filer.sic} peers)"
            lines = (f"{filer.name} (SIC {filer.sic}), {source}", f"liquidity and leverage against {against}")
            title = ": ".join(lines)
            self._pending[memo.memo_id] = self._worker.submit(
                self._draw, str(source), group, filer, folder / memo.picture, "\n".join(lines)
            )
            caption = (
                f"Peers: {group.describe()}; dashed lines: the medians of the group's {len(group.members)} filings"
            )
            text = f"![{title}]({memo.picture})\n\n{caption}."
        section = f"{PEERS_HEADING}\n\n{text}\n\n"
        at = memo.markdown.rfind(EVIDENCE_HEADING)
        memo.markdown = memo.markdown[:at] + section + memo.markdown[at:] if at >= 0 else memo.markdown + "\n" + section

    def _draw(self, source: str, group: PeerGroup, filer: RatioPoint, path: Path, title: str) -> Path:
        key = (source, group.level, group.code)
        chart = self.charts.get(key)
        if chart is None:
            what = (
                f"Grey: the {len(group.members)} filings of {group.level} {group.code} in {source} with both "
                "ratios; dashed: their medians"
            )
            dots = [plots.PeerDot(p.name, *p.dot()) for p in group.members]
            chart = self.charts[key] = plots.PeerChart(dots, caption=what, thresholds=self.thresholds)
        return chart.draw(plots.PeerDot(filer.name, *filer.dot()), path, title=title)


def claim_rows(memo: MemoResult) -> list[dict[str, Any]]:
    """The memo's claims as flat records (CSV/JSONL/graph), each with its sentence, repairs and the memo's peer
    picture (``picture``: the PNG's file name beside the memo, None when it has none)."""
    rows = []
    for c in memo.claims:
        r = c.record()
        repairs = [x for x in memo.verification.repairs if x["claim"] == c.n]
        r.update(
            memo_id=memo.memo_id,
            system=memo.system,
            adsh=memo.filing["adsh"],
            sentence=claim_sentence(c),
            repairs=json.dumps(repairs, default=str) if repairs else "",
            picture=memo.picture,
        )
        for k in ("value", "original_value", "gold_value"):
            if r[k] is not None and not isinstance(r[k], (int, float)):
                r[k] = str(r[k])
        rows.append({k: r.get(k) for k in CLAIM_FIELDS})
    return rows


def input_digest(fm: FactMap) -> str:
    """The digest of what a memo of ``fm``'s filing is made from: the filing's fields and every candidate
    fact read for it (:attr:`FactMap.raw`)."""
    return digest({"filing": fm.filing, "facts": fm.raw})


def write_memos(
    writer: BatchWriter,
    memos: Sequence[MemoResult],
    out: Path,
    digests: dict[str, str] | None = None,
    ready: Callable[[Sequence[MemoResult]], None] | None = None,
) -> None:
    """Files first, then the graph audit trail (replacing the claims of a memo written before), then the
    memos' ledger entries: ``done`` from the input digest ``digests[memo id]`` (see module doc); ``ready(memos)``
    returns when the memos' other files are written (their pictures: :meth:`PeerPictures.wait`)."""
    memo_rows, claim_nodes, has_claim, cites, about = [], [], [], [], []
    for m in memos:
        folder = out / m.system
        (folder / "claims").mkdir(parents=True, exist_ok=True)
        runs.checkpoint("memo-file")
        write_text_atomic(folder / f"{m.filing['adsh']}.md", m.markdown)
        rows = claim_rows(m)
        write_text_atomic(
            folder / "claims" / f"{m.filing['adsh']}.jsonl", "".join(json.dumps(r, default=str) + "\n" for r in rows)
        )
        counts = m.verification.counts()
        memo_rows.append(
            {
                "id": m.memo_id,
                "system": m.system,
                "adsh": m.filing["adsh"],
                "issuer": m.filing.get("name"),
                "risk_label": m.risk_label,
                "text": m.markdown,
                "latency_ms": round(m.latency_ms, 3),
                "as_of": m.as_of,
                "numbers_exact": counts["exact"],
                "numbers_repaired": counts["repaired"],
                "numbers_unsupported": counts["unsupported"],
                "picture": m.picture,
                "status": WRITING,
                "written_at": now(),
            }
        )
        about.append({"start": m.memo_id, "end": m.filing["adsh"]})
        for r in rows:
            cid = f"{m.memo_id}:{r['n']}"
            claim_nodes.append({"id": cid, **{k: v for k, v in r.items() if v is not None}})
            has_claim.append({"start": m.memo_id, "end": cid, "n": r["n"]})
            cites.extend({"start": cid, "end": key} for key in (r["citations"] or "").split("|") if key)
    runs.checkpoint("memo-graph")
    writer.merge_nodes("Memo", memo_rows, key="id")
    writer.graph.write(cypher.DELETE_CLAIMS_OF_MEMOS, {"ids": [r["id"] for r in memo_rows]})
    runs.checkpoint("memo-claims")
    writer.merge_nodes("Claim", claim_nodes, key="id")
    writer.merge_relationships("ABOUT", about, start=("Memo", "id"), end=("Filing", "adsh"))
    writer.merge_relationships("HAS_CLAIM", has_claim, start=("Memo", "id"), end=("Claim", "id"))
    writer.merge_relationships("CITES", cites, start=("Claim", "id"), end=("Fact", "key"))
    if ready is not None:
        ready(memos)
    runs.checkpoint("memo-ledger")
    Ledger(writer.graph, "Memo", writer.batch_size, stages=(WRITING,)).record(
        {"id": r["id"], "status": DONE, "input_digest": (digests or {}).get(r["id"], "")} for r in memo_rows
    )


def gather_claims(out: Path, system: str) -> int:
    """Concatenate ``OUT/<system>/claims/*.jsonl`` into ``claims.jsonl`` and ``claims.csv``
    (sorted by accession); returns the number of claim rows."""
    folder = out / system
    rows: list[dict[str, Any]] = []
    for path in sorted((folder / "claims").glob("*.jsonl")):
        rows.extend(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line)
    write_text_atomic(folder / "claims.jsonl", "".join(json.dumps(r, default=str) + "\n" for r in rows))
    table = io.StringIO(newline="")
    w: csv.DictWriter[str] = csv.DictWriter(table, fieldnames=CLAIM_FIELDS)
    w.writeheader()
    w.writerows(rows)
    runs.checkpoint("memo-gather")
    write_text_atomic(folder / "claims.csv", table.getvalue())
    return len(rows)


@dataclass
class MemoRunSummary:
    """Per system: filings asked for, memos written now, skipped as already done, not in graph; ``superseded``:
    the filings asked for that a later amendment of the same period replaced (accession -> amendment)."""

    system: str
    requested: int
    written: int
    skipped_done: int
    not_found: int
    claims: int
    exact: int
    repaired: int
    unsupported: int
    labels: dict[str, int]
    superseded: dict[str, str] = field(default_factory=dict)


def run_memos(
    graph: Graph,
    settings: Settings,
    out: Path,
    systems: Sequence[str],
    adshs: Sequence[str] | None = None,
    source: str | None = None,
    resume: bool = True,
    progress: StageProgress | None = None,
    client: llm.LLMClient | None = None,
    on_pending: Callable[[int], object] | None = None,
) -> list[MemoRunSummary]:
    """Generate, verify and write memos (``finkg memo``); see the module docstring.

    Args:
        adshs: accession numbers; None for every filing in the graph. A filing amended later by a filing
            in the graph (same company, period and form family) is replaced by its latest amendment, which
            gets the memo (``MemoRunSummary.superseded``).
        source: only filings loaded from this file (e.g. ``2009q3.zip``).
        resume: skip memos already done from the same facts (ledger entry and file present).
        progress: ``progress(stage, total)`` returns a callback advanced by filings done.
        client: the LLM of ``structured-llm`` (None: made from the ``[llm]`` settings when that system is asked).
        on_pending: with ``structured-llm`` asked, called with the number of its memos still to write (those
            never written, failed, stopped half-written or whose file is gone; all with ``resume`` False) once the
            filings are known, before the first LLM call or anything written (it may raise to stop the run:
            :class:`finkg.cost.BatchCost`). A memo done from facts changed since is redone though not counted.

    Raises:
        MemoError: an unknown system, an accession that is not in the graph, or a ``source`` no
            filing was loaded from.
        generation.llm.LLMUnavailable: ``structured-llm`` without a configured ``[llm]`` backend.
        generation.llm.LLMAnswerError: the LLM returned an empty or malformed body.
        generation.llm.BudgetExceeded: ``[llm] budget_tokens`` is spent.
    """
    for s in systems:
        if s not in SYSTEMS and s != llm_render.SYSTEM:
            raise MemoError(f"unknown system {s!r}; choose from {', '.join((*SYSTEMS, llm_render.SYSTEM))}")
    if client is None and llm_render.SYSTEM in systems:
        client = llm.client_from_settings(settings)
    filings = list_filings(graph, adshs, source)
    if source is not None and not filings:
        known = filing_sources(graph)
        if source not in known:
            shown = ", ".join(known[:10]) + (f" and {len(known) - 10} more" if len(known) > 10 else "")
            raise MemoError(
                f"--source {source!r}: no filing in the graph was loaded from a file of that name "
                f"(known sources: {shown or 'none; ingest a file first'})"
            )
    found = {f["adsh"] for f in filings}
    if adshs:
        missing = [a for a in adshs if a not in found]
        if missing:
            raise MemoError(f"accession(s) not in the graph: {', '.join(missing)} (ingest them first)")
    ledger = Ledger(graph, "Memo", settings.writer.batch_size, stages=(WRITING,))
    order, superseded = resolve_amendments(graph, [f["adsh"] for f in filings])
    if on_pending is not None and llm_render.SYSTEM in systems:
        on_pending(_unwritten(ledger, out, llm_render.SYSTEM, order, redo=not resume))
    ctx = build_context(graph, settings, systems, progress)
    writer = BatchWriter(graph, batch_size=settings.writer.batch_size, workers=1)
    summaries = []
    with PeerPictures(graph, ctx.thresholds, settings.memo.pictures) as pictures:
        for system in systems:
            tick = progress(f"memos {system}", len(order)) if progress else None
            s = MemoRunSummary(system, len(filings), 0, 0, 0, 0, 0, 0, 0, {}, superseded)
            batch: list[MemoResult] = []
            digests: dict[str, str] = {}
            for fms in _batches(read_fact_maps(graph, order, settings.memo.batch_size), settings.memo.batch_size):
                made = {f"{system}:{fm.adsh}": input_digest(fm) for fm in fms}
                pending = set(ledger.pending(made, redo=not resume))
                for fm in fms:
                    mid = f"{system}:{fm.adsh}"
                    if mid not in pending and (out / system / f"{fm.adsh}.md").exists():
                        s.skipped_done += 1
                        if tick:
                            tick(1)
                        continue
                    try:
                        if system == llm_render.SYSTEM:
                            assert client is not None, "made above when the llm system is asked for"
                            memo = llm_render.generate_llm_memo(
                                fm, ctx, client, settings.llm.max_tokens, settings.llm.temperature
                            )
                        else:
                            memo = generate_memo(system, fm, ctx)
                        pictures.add(memo, fm, out / system)
                    except Exception as exc:
                        ledger.failed(mid, made[mid], exc, system=system, adsh=fm.adsh)
                        raise
                    batch.append(memo)
                    digests[mid] = made[mid]
                    _tally(s, memo)
                    if len(batch) >= settings.memo.batch_size:
                        write_memos(writer, batch, out, digests, pictures.wait)
                        if tick:
                            tick(len(batch))
                        batch = []
            if batch:
                write_memos(writer, batch, out, digests, pictures.wait)
                if tick:
                    tick(len(batch))
            s.claims = gather_claims(out, system) if (out / system / "claims").exists() else 0
            summaries.append(s)
    return summaries


def _unwritten(ledger: Ledger, out: Path, system: str, adshs: Sequence[str], redo: bool) -> int:
    """How many of ``adshs``' memos of ``system`` a run makes: all with ``redo``, else those not recorded done
    or whose file is gone (one ledger read; the input digests are not compared: that needs every fact map)."""
    if redo:
        return len(adshs)
    states = ledger.state([f"{system}:{a}" for a in adshs])
    return sum(
        1
        for a in adshs
        if (states.get(f"{system}:{a}") or {}).get("status") != DONE or not (out / system / f"{a}.md").exists()
    )


def _tally(s: MemoRunSummary, memo: MemoResult) -> None:
    s.written += 1
    c = memo.verification.counts()
    s.exact += c["exact"]
    s.repaired += c["repaired"]
    s.unsupported += c["unsupported"]
    s.labels[memo.risk_label] = s.labels.get(memo.risk_label, 0) + 1


def _batches(items: Iterable[FactMap], size: int) -> Iterator[list[FactMap]]:
    it = iter(items)
    while chunk := list(islice(it, max(1, size))):
        yield chunk
