"""The TAT-QA harness: run answerers over TAT-QA questions and score them with TAT-QA's EM and F1.

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, sections 4.1-4.2 (the generators compared: the
two-stage generator, single-stage retrieval, an LLM without retrieval); the metric is TAT-QA's (Zhu et
al., ACL 2021; :mod:`finkg.eval.metrics.tatqa`). Each system is an *answerer*
``answerer(question_text, facts, passages) -> generated text`` that sees one context's table cells as
:class:`retrieval.facts.indicators.FinancialFact` objects and its paragraphs as :class:`ingest.datasets.tatqa.Passage`
objects (never the gold answer) and ends its text with ``Answer: ...``
(:data:`generation.qa.answer.ANSWER_INSTRUCTION`).

For each question and system, :func:`evaluate` records the generated text, the comparable answer
(:func:`generation.llm.answer_line.extract_answer`: spans + scale), EM and F1. An answerer that raises
:class:`generation.llm.LLMAnswerError` (the model's answer was unusable) scores 0 with the error
recorded; any other exception stops the run. :meth:`TatqaResults.rows` gives, per system, EM and F1
(in percent, as TAT-QA reports them) over all questions and by answer type, the number of questions,
how many texts had no ``Answer:`` line and how many answers failed.

**Resumable** (the evaluations' one scheme, :mod:`finkg.eval.checkpoint`). With an output folder, every
answer is appended to ``answers.jsonl`` as soon as it is scored (all systems on one question, then the next;
``workers`` questions at a time with a parallel LLM server), so an interrupted run keeps what it did and a
comparable table for the questions done; a rerun with the same folder skips the (system, question) pairs
already there. ``manifest.json`` records the model (and the LoRA-tuned model of the ``<system>+lora`` systems,
``finkg eval tatqa --adapter``); a folder written with another model is refused (:class:`TatqaRunError`), so
answers of two models are never mixed. Each answer records the id of the model that gave it.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from finkg import plots
from finkg.eval import checkpoint
from finkg.eval.checkpoint import ItemLog
from finkg.eval.metrics.intervals import bootstrap_mean, paired_bootstrap_difference
from finkg.eval.metrics.tatqa import ANSWER_TYPES, gold_answers, score
from finkg.eval.results import write_result
from generation.agent.counting import answer_count
from generation.agent.loop import AgentAnswer, answer_arithmetic, table_evidence
from generation.agent.memory import DEFAULT_SOLUTION, ExperienceMemory, memory_block
from generation.agent.questions import evidence_scale, needs_arithmetic, percent_hint
from generation.agent.span import answer_span
from generation.agent.table_forms import answer_table_form
from generation.agent.tables import row_labels
from generation.agent.thought import with_calculator
from generation.llm import LLMAnswerError, LLMClient, metered
from generation.llm.answer_line import extract_answer
from generation.qa.answer import Answerer, direct_answerer
from generation.qa.reader import FORM_SYSTEM, reader_answerer
from ingest.datasets.tatqa import TatqaContext, TatqaQuestion
from kg.errors import ConfigError, EvaluationError
from kg.progress import StageProgress

ANSWERS, SUMMARY, MANIFEST, CHART = "answers.jsonl", "summary.json", checkpoint.MANIFEST, "tatqa-em-f1.png"
TUNED = "+lora"  # the suffix of a system answered by the LoRA-tuned model (``finkg eval tatqa --adapter``)


class TatqaRunError(EvaluationError):
    """An output folder that cannot be resumed: written with another model, or ``answers.jsonl`` has a
    malformed line before its last (the message names the file and line)."""


@dataclass(frozen=True)
class QuestionResult:
    """One system's answer to one question.

    Attributes:
        system: the answerer's name. context_index / question_uid / answer_type / gold_scale: the
            question's. gold: the gold answer strings. generated: the answerer's full text ("" on error).
        predicted: the extracted answer spans. predicted_scale: their scale. answer_line: the text had an
            ``Answer:`` line. em / f1: TAT-QA's scores (0/1 and 0..1). error: the answer error, or None.
            seconds: the answerer's wall-clock seconds for this answer (with ``workers`` > 1, while others were in
            flight; near 0 when every call came from the LLM cache); None in logs written before it was kept.
            model_id: the LLM that answered (``gguf:<sha256>``, ``...+lora:<hex>`` for a tuned reader); None in
            logs written before it was kept.
            llm_calls / prompt_tokens / completion_tokens: the answer's LLM calls and their tokens
            (:func:`generation.llm.meter.metered`; a call answered from the LLM cache counts the tokens of the
            call that produced it); None in logs written before they were kept.
    """

    system: str
    context_index: int
    question_uid: str
    question: str
    answer_type: str
    gold: list[str]
    gold_scale: str
    generated: str
    predicted: list[str]
    predicted_scale: str
    answer_line: bool
    em: float
    f1: float
    error: str | None = None
    seconds: float | None = None
    model_id: str | None = None
    llm_calls: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass
class TatqaResults:
    """All answers of one :func:`evaluate` run; :meth:`rows` aggregates them."""

    systems: list[str]
    results: list[QuestionResult] = field(default_factory=list)

    def rows(self) -> list[dict[str, Any]]:
        """One row per system and answer type (``all`` first, then span, multi-span, arithmetic, count
        where present): ``{"system", "answer_type", "questions", "em", "em_ci_low", "em_ci_high", "f1",
        "f1_ci_low", "f1_ci_high", "no_answer_line", "errors", "median_seconds", "median_prompt_tokens",
        "median_llm_calls"}``; em and f1 in percent, 2 decimals, each with its 95 % percentile-bootstrap interval
        over the questions (:func:`finkg.eval.metrics.intervals.bootstrap_mean`, seed 0); median_seconds: the
        median of the answers' ``seconds`` (None when none was timed); median_prompt_tokens / median_llm_calls:
        the medians of the answers' prompt tokens and LLM calls (an answer made without the LLM counts 0; None
        when none was counted); a system with no question has a row ``all`` of zeros."""
        out = []
        for system in self.systems:
            mine = [r for r in self.results if r.system == system]
            for kind in ("all", *ANSWER_TYPES):
                group = mine if kind == "all" else [r for r in mine if r.answer_type == kind]
                if not group and kind != "all":
                    continue
                em = _percent([r.em for r in group])
                f1 = _percent([r.f1 for r in group])
                out.append(
                    {
                        "system": system,
                        "answer_type": kind,
                        "questions": len(group),
                        "em": em[0],
                        "em_ci_low": em[1],
                        "em_ci_high": em[2],
                        "f1": f1[0],
                        "f1_ci_low": f1[1],
                        "f1_ci_high": f1[2],
                        "no_answer_line": sum(not r.answer_line for r in group),
                        "errors": sum(r.error is not None for r in group),
                        "median_seconds": _median([r.seconds for r in group if r.seconds is not None]),
                        "median_prompt_tokens": _median(
                            [r.prompt_tokens for r in group if r.prompt_tokens is not None]
                        ),
                        "median_llm_calls": _median([r.llm_calls for r in group if r.llm_calls is not None]),
                    }
                )
        return out

    def differences(self, baseline: str | None = None) -> list[dict[str, Any]]:
        """EM of each system minus ``baseline``'s (default: the first system; a tuned ``<X>+lora`` against its
        ``<X>``) on the questions both answered, overall and by answer type, in points with the 95 % paired
        bootstrap interval: ``{"system", "baseline", "answer_type", "questions", "em_diff", "ci_low",
        "ci_high"}``."""
        first = baseline or (self.systems[0] if self.systems else None)
        by = {(r.system, r.question_uid): r for r in self.results}
        out = []
        for system in self.systems:
            untuned = system.removesuffix(TUNED)
            base = untuned if baseline is None and untuned != system and untuned in self.systems else first
            if system == base:
                continue
            for kind in ("all", *ANSWER_TYPES):
                pairs = [
                    (by[(system, r.question_uid)].em, r.em)
                    for r in self.results
                    if r.system == base and (system, r.question_uid) in by and (kind == "all" or r.answer_type == kind)
                ]
                if pairs:
                    out.append({"system": system, "baseline": base, "answer_type": kind, **em_difference(pairs)})
        return out

    def question_scores(self) -> list[dict[str, Any]]:
        """Per question, in first-answer order: ``{"question_uid", "answer_type", "em": {system: 0|1}, "f1":
        {system: float}}`` (F1 as a fraction, 4 decimals). Kept in the results record, so that a later run on the
        same questions can be paired with this one after its answers folder is gone."""
        by: dict[str, dict[str, Any]] = {}
        for r in self.results:
            row = by.setdefault(
                r.question_uid, {"question_uid": r.question_uid, "answer_type": r.answer_type, "em": {}, "f1": {}}
            )
            row["em"][r.system] = r.em
            row["f1"][r.system] = round(r.f1, 4)
        return list(by.values())

    def save(self, out: Path, results_dir: Path | None = None) -> list[Path]:
        """Write ``answers.jsonl`` (one :class:`QuestionResult` per line, in run order; replaces the file
        :func:`evaluate` appended to), ``summary.json`` (:meth:`rows`) and, when some system answered a question,
        the picture ``tatqa-em-f1.png`` (:func:`chart`) into the folder ``out``; returns their paths. The summary
        is also written in the one results format (:mod:`finkg.eval.results`) as ``eval-tatqa.json`` in
        ``results_dir`` (e.g. ``bench/results``, whose README table ``bench/tables.py`` regenerates), else in
        ``out``; its parameter ``chart`` is the picture's path (None when none was drawn)."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        answers, summary = out / ANSWERS, out / SUMMARY
        write_answers(answers, self.results)
        rows = self.rows()
        summary.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        picture = chart(rows, out / CHART) if any(r["questions"] for r in rows) else None
        overall = [r for r in rows if r["answer_type"] == "all"]
        write_result(
            "eval-tatqa",
            {
                "systems": self.systems,
                "questions": max((r["questions"] for r in overall), default=0),
                "chart": str(picture) if picture else None,
            },
            {f"{r['system']}_{m}_pct": r[m] for r in overall for m in ("em", "f1")},
            tables={"rows": rows, "differences": self.differences(), "questions": self.question_scores()},
            directory=results_dir or out,
        )
        return [answers, summary, *([picture] if picture else [])]


def chart(rows: Sequence[Mapping[str, Any]], path: Path) -> Path:
    """Draw :meth:`TatqaResults.rows` as a PNG at ``path`` (:func:`finkg.plots.interval_bars` of
    :func:`chart_bars`): two panels, EM and F1 (%), each with one group of bars per answer type and one bar per
    system with its 95 % bootstrap interval; the number of questions in the title.

    Raises:
        EvaluationError: no row with at least one question.
    """
    return plots.interval_bars(
        chart_bars(rows),
        path,
        title=f"TAT-QA: EM and F1 of {_question_counts(rows).get('all', '0')} questions per system, "
        "with 95% bootstrap intervals",
        ylabel="%",
        fmt="%.1f",
    )


def chart_bars(rows: Sequence[Mapping[str, Any]]) -> list[plots.Bar]:
    """The bars of :func:`chart`: for EM then F1 (the panels ``exact match (EM)`` and ``numeracy-aware F1``),
    one bar per row with at least one question, in the rows' order (systems as named in the rows; answer type
    ``all`` first), grouped by answer type, the group named ``"<type>\\n(n=<questions>)"`` (``n=28-30`` when
    the systems answered different numbers); value and interval in percent. A system with no question of an
    answer type has no bar there."""
    counts = _question_counts(rows)
    return [
        plots.Bar(
            f"{r['answer_type']}\n(n={counts[r['answer_type']]})",
            r["system"],
            r[metric],
            r[f"{metric}_ci_low"],
            r[f"{metric}_ci_high"],
            panel,
        )
        for metric, panel in (("em", "exact match (EM)"), ("f1", "numeracy-aware F1"))
        for r in rows
        if r["questions"]
    ]


def _question_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Answer type -> its number of questions over the systems that answered some: ``"30"``, or ``"28-30"``."""
    counts: dict[str, list[int]] = {}
    for r in rows:
        if r["questions"]:
            counts.setdefault(r["answer_type"], []).append(r["questions"])
    return {k: f"{min(v)}-{max(v)}" if min(v) != max(v) else str(v[0]) for k, v in counts.items()}


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


def _percent(scores: Sequence[float]) -> tuple[float, float, float]:
    """The mean of ``scores`` (0..1 each) and its 95 % bootstrap interval, in percent, 2 decimals; zeros when
    there is no score."""
    if not scores:
        return 0.0, 0.0, 0.0
    i = bootstrap_mean(scores)
    return round(100 * i.mean, 2), round(100 * i.low, 2), round(100 * i.high, 2)


def answer_log(path: Path) -> ItemLog:
    """The :class:`finkg.eval.checkpoint.ItemLog` of ``answers.jsonl`` (one :class:`QuestionResult` per line)."""
    return ItemLog(path, "a TAT-QA answer record", TatqaRunError)


def write_answers(path: Path, results: Sequence[QuestionResult]) -> None:
    """Replace ``path`` with ``results``, one JSON record per line (written to a temporary file first)."""
    answer_log(path).rewrite(asdict(r) for r in results)


def read_answers(path: Path) -> list[QuestionResult]:
    """The answers an earlier run appended to ``path`` (missing file: none). A last line cut off by an
    interrupted write is ignored (that answer is asked again).

    Raises:
        TatqaRunError: a malformed line before the last, naming the file and line.
    """
    return [_result(path, n, r) for n, r in enumerate(answer_log(path).read(), 1)]


def _result(path: Path, n: int, record: dict[str, Any]) -> QuestionResult:
    try:
        return QuestionResult(**record)
    except TypeError as exc:
        raise TatqaRunError(
            f"{path}: record {n}: not a TAT-QA answer record ({exc}); move the file away to start again"
        ) from exc


def check_manifest(
    out: Path,
    model_id: str,
    source: str,
    tuned_model_id: str | None = None,
    memory: Mapping[str, Any] | None = None,
) -> None:
    """Write ``out/manifest.json`` (model, TAT-QA file, the LoRA-tuned model of the ``+lora`` systems, the
    experience memory's options when a memory system runs: ``{"threshold", "top_k", "solution"}``), or check that
    the folder's agrees (:func:`finkg.eval.checkpoint.check_manifest`). A run without memory systems keeps the
    folder's recorded memory options.

    Raises:
        TatqaRunError: the folder holds answers of another model, or of other memory options.
    """
    fields: dict[str, Any] = {"model_id": model_id, "source": source}
    if tuned_model_id is not None:
        fields["tuned_model_id"] = tuned_model_id
    if memory is not None:
        fields["memory"] = dict(memory)
    checkpoint.check_manifest(out, fields, [k for k in fields if k != "source"], "use another --out", TatqaRunError)
    earlier = checkpoint.read_manifest(out)
    if memory is None and "memory" in earlier:
        fields["memory"] = earlier["memory"]
    checkpoint.write_manifest(out, fields)


def direct_systems(client: LLMClient, max_tokens: int = 128) -> dict[str, Answerer]:
    """The answerers this module ships (one LLM call each): ``no-retrieval`` (the question alone) and
    ``whole-context`` (every fact and passage of the context; :func:`generation.qa.answer.direct_answerer`), and
    ``reader`` (seed 004's {I, F} -> {T, Y} prompt that ``finkg train reader`` tunes,
    :func:`generation.qa.reader.reader_answerer`: the table's cells and the paragraphs cut at 512 tokens), and
    ``reader-calc`` (the same call, its ``calculate`` thought run by the agent's calculator and the answer's number
    replaced by the result: :func:`generation.agent.thought.with_calculator`; asked beside ``reader``, its calls
    are the LLM cache's), and ``reader-form`` / ``reader-calc-form``: the same with the answer-form prompt
    (:data:`generation.qa.reader.FORM_SYSTEM`: the form of T and Y that tuning teaches, stated in words; the
    untuned model's second control)."""
    reader = reader_answerer(client, max_tokens=max_tokens)
    form = reader_answerer(client, max_tokens=max_tokens, system=FORM_SYSTEM)
    return {
        "no-retrieval": direct_answerer(client, with_context=False, max_tokens=max_tokens),
        "whole-context": direct_answerer(client, with_context=True, max_tokens=max_tokens),
        "reader": reader,
        "reader-calc": with_calculator(reader),
        "reader-form": form,
        "reader-calc-form": with_calculator(form),
    }


def table_uid_of(facts: Sequence[Any]) -> str:
    """The TAT-QA table uid in a context's fact ids (``tatqa:<table uid>:r<row>c<col>``), else ``""``."""
    return str(facts[0].id).split(":")[1] if facts and str(facts[0].id).count(":") >= 2 else ""


def agent_evidence(
    question: str,
    facts: Sequence[Any],
    passages: Sequence[Any],
    tables: Mapping[str, Sequence[Sequence[str]]] | None = None,
) -> tuple[list[str], list[str], str]:
    """The agent's evidence for a TAT-QA question: ``(table lines, paragraphs, answer scale)``; the table as rows
    (captions included) when ``tables`` has its uid, else the cells' fact texts."""
    table = (tables or {}).get(table_uid_of(facts))
    cells = table_evidence(table) if table else [f.text for f in facts]
    paragraphs = [p.text for p in passages]
    return cells, paragraphs, evidence_scale(question, cells, paragraphs)


USED_PREFIX = "experiences: "
"""The first line of a memory system's answer text: the ids of the experiences it retrieved, or ``none``."""


def retrieved_experiences(generated: str) -> list[str] | None:
    """The experience ids a memory system's answer text names on its first line (``experiences: a, b`` or
    ``experiences: none``: ``[]``), or None when the text has no such line (a system without memory, or a question
    it answered without reading the memory, e.g. by counting)."""
    first = generated.split("\n", 1)[0]
    if not first.startswith(USED_PREFIX):
        return None
    ids = first.removeprefix(USED_PREFIX).strip()
    return [] if ids == "none" else [i.strip() for i in ids.split(",")]


def em_difference(pairs: Sequence[tuple[float, float]]) -> dict[str, Any]:
    """The paired EM difference of ``(system EM, baseline EM)`` per question (each 0 or 1), in points with its 95 %
    paired bootstrap interval: ``{"questions", "em_diff", "ci_low", "ci_high"}``."""
    d = paired_bootstrap_difference([a for a, _ in pairs], [b for _, b in pairs])
    return {
        "questions": d.n,
        "em_diff": round(100 * d.mean, 2),
        "ci_low": round(100 * d.low, 2),
        "ci_high": round(100 * d.high, 2),
    }


def agent_text(got: AgentAnswer, scale: str) -> str:
    """An agent outcome as an answerer's text: the derivation (``quoted from the evidence`` for an answer that
    computed nothing) and ``Answer: <value> <scale>``, or the status and reasons with an empty ``Answer:`` (a
    number the gate cannot trace is never given)."""
    if got.answer is None:
        return f"{got.status}: {'; '.join(got.reasons)}\nAnswer: "
    d = got.derivation
    if not d:
        return f"quoted from the evidence\nAnswer: {got.answer} {scale}".rstrip()
    operands = ", ".join(f"{k}={v:.15g}" for k, v in d["operands"].items())
    return f"{d['expression']} with {operands} = {d['result']:.15g}\nAnswer: {got.answer} {scale}".rstrip()


def agent_route(question: str, table: Sequence[Sequence[str]] | None, paragraphs: Sequence[str]) -> str:
    """The first of :func:`routed`: how :func:`agent_systems` answers a question."""
    return routed(question, table, paragraphs)[0]


def question_route(context: TatqaContext, question: TatqaQuestion) -> str:
    """:func:`agent_route` of a TAT-QA ``question`` of ``context`` (its table, its paragraphs' texts)."""
    return agent_route(question.question, context.table, [p.text for p in context.passages])


def routed(
    question: str, table: Sequence[Sequence[str]] | None, paragraphs: Sequence[str]
) -> tuple[str, AgentAnswer | None]:
    """``(route, counted)``: how :func:`agent_systems` answers a question and, on the ``count`` route, the count
    (None on the others). The routes: ``count`` (the ``table_count`` tool answers it,
    :func:`generation.agent.counting.answer_count`: no LLM, no experience memory), else ``program`` (program of
    thought: :func:`generation.agent.questions.needs_arithmetic`), else ``span`` (quoted from the table rows and
    paragraphs); each of the last two reads the experiences learned on it. ``table``: the question's table as rows
    (None: none); ``paragraphs``: the context's paragraph texts."""
    counted = answer_count(question, table, paragraphs)
    if counted is not None:
        return "count", counted
    return ("program" if needs_arithmetic(question, row_labels(table)) else "span"), None


def agent_systems(
    client: LLMClient,
    max_tokens: int = 160,
    tables: Mapping[str, Sequence[Sequence[str]]] | None = None,
    memory: ExperienceMemory | None = None,
    shuffled: ExperienceMemory | None = None,
    exclude_contexts: Collection[str] = (),
    solution: str = DEFAULT_SOLUTION,
) -> dict[str, Answerer]:
    """The analyst agent as a TAT-QA answerer (issue 17; seed 001, sections 4.2-4.4), ``agent``: a question that
    needs arithmetic (:func:`generation.agent.questions.needs_arithmetic`) is answered by program of thought
    over the context's cells and paragraphs (:func:`generation.agent.loop.answer_arithmetic`: the LLM picks
    operands and one expression, ``calculate`` evaluates it, the gate checks it) in the scale
    :func:`generation.agent.questions.answer_scale` gives. A question counting the years a row passed a threshold
    is answered by the ``table_count`` tool without an LLM (:func:`generation.agent.counting.answer_count`, when
    the table has the row; the three routes: :func:`agent_route`). The other questions are quoted from the table's rows
    and the paragraphs (:func:`generation.agent.span.answer_span`: one LLM call, the table's scale for a cell's
    number, the gate). When no attempt passes the gate, the text says why and has an empty ``Answer:`` (a number
    the gate cannot trace is never given).

    With ``memory``, ``agent-memory`` is the same agent whose prompt starts with the experiences retrieved for
    the question (:meth:`generation.agent.memory.ExperienceMemory.retrieve`: training split only, never a context
    of ``exclude_contexts``: pass every evaluated context; the experiences of the question's route, ``program``
    or ``span``); with ``shuffled`` (an ExperienceMemory with
    ``shuffled=True``), ``agent-shuffled`` is the control (the same retrieval, each entry's content a random
    other entry's). The retrieved ids are in the text (``experiences: ...``). ``solution``: how each entry's worked
    solution is shown (:data:`generation.agent.memory.SOLUTION_FORMS`), the same for both.

    ``tables`` (table uid -> rows, e.g. each :class:`TatqaContext`'s ``table``): the agent reads the question's
    table as rows, captions included (``"$ million"`` names the scale), found by the table uid in its facts'
    ids (``tatqa:<table uid>:r<row>c<col>``); without it, the cells as fact texts."""

    def make(bank: ExperienceMemory | None) -> Answerer:
        def answer(question: str, facts: Sequence[Any], passages: Sequence[Any]) -> str:
            cells, paragraphs, scale = agent_evidence(question, facts, passages, tables)
            table = (tables or {}).get(table_uid_of(facts))
            route, counted = routed(question, table, paragraphs)
            if counted is not None:
                return agent_text(counted, "")
            entries = []
            if bank is not None:
                context = "\n".join(cells + paragraphs)
                entries = bank.retrieve(question, context, exclude_contexts=list(exclude_contexts), route=route)
            used = f"{USED_PREFIX}{', '.join(e.id for e in entries) or 'none'}\n" if bank is not None else ""
            if route == "span":
                quoted, table_scale = answer_span(
                    client, question, cells, paragraphs, max_tokens=max_tokens, examples=memory_block(entries)
                )
                return used + agent_text(quoted, table_scale)
            got = answer_arithmetic(
                client,
                question + percent_hint(scale),
                cells + paragraphs,
                max_tokens=max_tokens,
                examples=memory_block(entries, solution),
            )
            return used + agent_text(got, scale)

        return answer

    systems = {"agent": make(None)}
    if memory is not None:
        systems["agent-memory"] = make(memory)
    if shuffled is not None:
        systems["agent-shuffled"] = make(shuffled)
    return systems


def engine_system(
    client: LLMClient, max_tokens: int = 128, tables: Mapping[str, Sequence[Sequence[str]]] | None = None
) -> Answerer:
    """The answer engine on table questions (issue 44 item 3: the better answerer per route, measured): the
    ``count`` route is the ``table_count`` tool (:func:`generation.agent.counting.answer_count`, no LLM); a
    question in one of the commonest table forms (change, percentage change, average, which year, respective
    values of one row: :func:`generation.agent.table_forms.answer_table_form`, no LLM) is answered by that rule
    when it places the row and years; every other question goes to ``reader-calc`` (seed 004's reader, its
    ``calculate`` thought run by the calculator; LoRA-tuned when the configured model carries the adapter of
    ``finkg train reader``).

    The forms rule was developed on the training half and the development sample only: there it answers 241
    of 834 training-half questions at 89.2 EM and 95 of the 300 sample questions at 94.7 EM
    (``bench/results/tatqa-forms.json``). On the frozen test questions the engine scores 54.7 EM with it and
    45.3 without it, the same 150 questions (``bench/results/eval-tatqa-test-engine-forms.json``).

    The choice per route was measured on the 300-question development sample of the evaluation half
    (``bench/results/eval-tatqa-reader-calc-vs-agent.json``, the same questions for both): reader-calc + LoRA
    beats the agent on span (44.3 vs 37.4 EM), multi-span (67.6 vs 52.9) and arithmetic (59.4 vs 42.2), the
    agent's count tool wins on count (57.1 vs 14.3). Its score is reported on the frozen test questions
    (``data/questions/tatqa-test-uids.txt``), never on the sample it was chosen on.

    ``tables``: table uid -> rows, as for :func:`agent_systems` (the count tool reads the table's rows).
    """
    readers: list[Answerer] = []  # made on the first question that needs the LLM (the count route needs none)

    def answer(question: str, facts: Sequence[Any], passages: Sequence[Any]) -> str:
        table = (tables or {}).get(table_uid_of(facts))
        paragraphs = [p.text for p in passages]
        counted = answer_count(question, table, paragraphs)
        if counted is not None:
            return agent_text(counted, "")
        formed = answer_table_form(question, table, paragraphs)
        if formed is not None:
            return agent_text(*formed)
        if not readers:
            readers.append(with_calculator(reader_answerer(client, max_tokens=max_tokens)))
        return readers[0](question, facts, passages)

    return answer


def stratified_sample(contexts: Sequence[TatqaContext], n: int, seed: int = 0) -> set[str]:
    """The uids of ``n`` questions stratified by (answer type, answer source): each stratum gets its share of
    ``n`` by largest remainder (at least one question where ``n`` allows), its questions taken in the order of
    sha256(``"<seed>:<uid>"``). Deterministic; the same ``n`` and seed give the same questions for every system.

    Raises:
        ValueError: ``n`` < 1.
    """
    import hashlib

    if n < 1:
        raise ValueError(f"a sample of {n} questions: give at least 1")
    strata: dict[tuple[str, str], list[str]] = {}
    for c in contexts:
        for q in c.questions:
            strata.setdefault((q.answer_type, q.answer_from), []).append(q.uid)
    total = sum(len(v) for v in strata.values())
    if n >= total:
        return {u for v in strata.values() for u in v}
    share = {k: n * len(v) / total for k, v in strata.items()}
    take = {k: int(x) for k, x in share.items()}
    for k in sorted(strata, key=lambda k: share[k] - take[k], reverse=True)[: n - sum(take.values())]:
        take[k] += 1
    out: set[str] = set()
    for k, uids in strata.items():
        ranked = sorted(uids, key=lambda u: hashlib.sha256(f"{seed}:{u}".encode()).hexdigest())
        out.update(ranked[: take[k]])
    return out


DEV_SAMPLE = 300
"""The development sample of the evaluation half: :func:`stratified_sample` of this many questions, seed 0. Memory
configurations, routes and the engine's per-route choice were tuned on it, so its scores are development scores."""
TEST_SEED = 1
"""Seed of :func:`held_out_questions`' stratified draw (another order than the development sample's)."""


def held_out_questions(
    contexts: Sequence[TatqaContext], n: int, dev_sample: int = DEV_SAMPLE, exclude: Collection[str] = ()
) -> set[str]:
    """The frozen test questions of the evaluation half (issue 45): ``n`` questions stratified like
    :func:`stratified_sample` (seed :data:`TEST_SEED`) among the questions of ``contexts`` that are NOT in the
    ``dev_sample``-question development sample (:func:`stratified_sample`, seed 0) and not in ``exclude`` (e.g. the
    questions of the repository's test fixtures, which were read), so nothing tuned on is scored on them.
    ``contexts``: the evaluation half (:func:`ingest.datasets.tatqa.split_contexts`).

    Raises:
        ValueError: ``n`` < 1.
    """
    seen = stratified_sample(contexts, dev_sample) | set(exclude)
    rest = [
        dataclasses.replace(c, questions=tuple(q for q in c.questions if q.uid not in seen))
        for c in contexts
        if any(q.uid not in seen for q in c.questions)
    ]
    return stratified_sample(rest, n, seed=TEST_SEED)


def read_question_list(path: Path, contexts: Sequence[TatqaContext]) -> set[str]:
    """The question uids of a list file (one a line; blank lines and ``#`` comments skipped), each checked to be a
    question of ``contexts``.

    Raises:
        ConfigError: the file cannot be read, or a line names a uid that is not a question of ``contexts``
            (``<file>:<line>: question <uid> is not in ...``).
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the question list: {exc}") from None
    known = {q.uid for c in contexts for q in c.questions}
    out: set[str] = set()
    for n, line in enumerate(lines, 1):
        uid = line.split("#", 1)[0].strip()
        if not uid:
            continue
        if uid not in known:
            raise ConfigError(
                f"{path}:{n}: question {uid} is not in the chosen questions of the TAT-QA file (wrong --half?)"
            )
        out.add(uid)
    return out


def _questions_where(
    contexts: Sequence[TatqaContext],
    values: Collection[str],
    known: Sequence[str],
    what: str,
    value_of: Callable[[TatqaContext, Any], str],
    within: Collection[str] | None,
) -> set[str]:
    """The uids of the questions (among ``within`` when given) whose ``value_of`` is one of ``values``; an unknown
    value raises ConfigError naming it (``unknown <what> 'x': <known>``)."""
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ConfigError(f"unknown {what} {unknown[0]!r}: {', '.join(known)}")
    return {
        q.uid for c in contexts for q in c.questions if (within is None or q.uid in within) and value_of(c, q) in values
    }


def of_answer_types(
    contexts: Sequence[TatqaContext], answer_types: Collection[str], within: Collection[str] | None = None
) -> set[str]:
    """The uids of the questions of ``contexts`` whose answer type is one of ``answer_types`` (among ``within``
    when given, e.g. a :func:`stratified_sample`).

    Raises:
        ConfigError: an answer type TAT-QA does not have (the message lists them).
    """
    return _questions_where(contexts, answer_types, ANSWER_TYPES, "answer type", lambda _c, q: q.answer_type, within)


AGENT_ROUTES = ("count", "program", "span")
"""The routes of :func:`agent_route`."""


def of_agent_routes(
    contexts: Sequence[TatqaContext], routes: Collection[str], within: Collection[str] | None = None
) -> set[str]:
    """The uids of the questions of ``contexts`` the agent answers by one of ``routes`` (:func:`agent_route`; among
    ``within`` when given): ``program`` selects every question that reads the experience memory.

    Raises:
        ConfigError: a route that is not one of :data:`AGENT_ROUTES`.
    """
    return _questions_where(
        contexts,
        routes,
        AGENT_ROUTES,
        "agent route",
        question_route,
        within,
    )


def score_text(
    system: str, context: TatqaContext, question_index: int, generated: str, error: str | None = None
) -> QuestionResult:
    """Score one generated text against the question's gold answer (extract, then TAT-QA EM/F1)."""
    q = context.questions[question_index]
    gold = gold_answers(q.record())
    answer = extract_answer(generated)
    s = score(list(answer.spans), answer.scale, gold, q.answer_type, q.scale)
    return QuestionResult(
        system,
        context.index,
        q.uid,
        q.question,
        q.answer_type,
        gold,
        q.scale,
        generated,
        list(answer.spans),
        answer.scale,
        answer.found,
        s.em,
        s.f1,
        error,
    )


def evaluate(
    contexts: Sequence[TatqaContext],
    answerers: Mapping[str, Answerer],
    limit: int | None = None,
    progress: StageProgress | None = None,
    out: Path | None = None,
    questions: Collection[str] | None = None,
    workers: int = 1,
    model_ids: Mapping[str, str] | None = None,
) -> TatqaResults:
    """Ask every answerer every question (the first ``limit`` questions in file order) and score them,
    question by question.

    Args:
        contexts: from :func:`ingest.datasets.tatqa.read_tatqa`.
        answerers: system name -> ``answerer(question_text, facts, passages) -> text``.
        limit: at most this many questions (per system); None: all.
        progress: ``progress(stage, total)`` returns a callback advanced by 1 per answer (one stage per
            system, its total the answers still to ask).
        out: a folder: answers already in ``out/answers.jsonl`` are reused, new ones appended as they
            come (module doc); None: nothing is written.
        questions: only these question uids (e.g. :func:`stratified_sample`); None: every question.
        workers: questions asked at once (a server with that many slots decodes them together: ``[llm]
            parallel``); the results and the scores are those of a one-at-a-time run (``answers.jsonl`` holds the
            same lines, in the order they finished, until :meth:`TatqaResults.save` writes it in question order).
        model_ids: system -> the id of the LLM behind it, recorded on each of its answers.

    Returns:
        :class:`TatqaResults` (``rows()`` for the table, ``results`` per question, in question order).

    Raises:
        TatqaRunError: see :func:`read_answers`. Whatever an answerer raises other than
        :class:`generation.llm.LLMAnswerError` (e.g. ``BudgetExceeded``, ``LLMUnavailable``); what was
        answered before stays in ``out``.
    """
    work = [
        (c, i)
        for c in contexts
        for i in range(len(c.questions))
        if questions is None or c.questions[i].uid in questions
    ]
    work = work[:limit] if limit is not None else work
    if out is None:
        return _ask(work, answerers, {}, lambda _record: None, progress, workers, model_ids)
    path = Path(out) / ANSWERS
    with answer_log(path).appending() as (earlier, add):
        done = [_result(path, n, x) for n, x in enumerate(earlier, 1)]
        done_by_key = {(r.system, r.question_uid): r for r in done}
        return _ask(work, answerers, done_by_key, add, progress, workers, model_ids)


def pending(
    contexts: Sequence[TatqaContext],
    systems: Sequence[str],
    limit: int | None = None,
    questions: Collection[str] | None = None,
    out: Path | None = None,
) -> tuple[int, int]:
    """What :func:`evaluate` with these arguments has still to ask: ``(questions, answers)``, the answers of
    ``systems`` to the chosen questions not already in ``out/answers.jsonl`` (nothing is written).

    Raises:
        TatqaRunError: see :func:`read_answers`.
    """
    work = [
        c.questions[i].uid
        for c in contexts
        for i in range(len(c.questions))
        if questions is None or c.questions[i].uid in questions
    ]
    work = work[:limit] if limit is not None else work
    done = {(r.system, r.question_uid) for r in read_answers(Path(out) / ANSWERS)} if out is not None else set()
    return len(work), sum((system, uid) not in done for uid in work for system in systems)


def _ask(
    work: Sequence[tuple[TatqaContext, int]],
    answerers: Mapping[str, Answerer],
    done: Mapping[tuple[str, str], QuestionResult],
    add: Callable[[Mapping[str, Any]], None],
    progress: StageProgress | None,
    workers: int = 1,
    model_ids: Mapping[str, str] | None = None,
) -> TatqaResults:
    """The loop of :func:`evaluate`: every answerer on each question (``workers`` questions at a time), each new
    answer passed to ``add`` as soon as it is scored; the results in question order."""
    todo = {system: sum((system, c.questions[i].uid) not in done for c, i in work) for system in answerers}
    ticks = {
        system: progress(f"TAT-QA: {system}", todo[system]) if progress else (lambda n: None) for system in answerers
    }

    lock = threading.Lock()

    def one(item: tuple[TatqaContext, int]) -> list[QuestionResult]:
        context, i = item
        q = context.questions[i]
        out = []
        for system, answerer in answerers.items():
            if (system, q.uid) in done:
                out.append(done[(system, q.uid)])
                continue
            t0 = time.perf_counter()
            with metered() as tokens:
                try:
                    text, error = answerer(q.question, context.facts, context.passages), None
                except LLMAnswerError as exc:
                    text, error = "", str(exc)
            seconds = round(time.perf_counter() - t0, 3)
            scored = score_text(system, context, i, text, error)
            out.append(
                dataclasses.replace(
                    scored,
                    seconds=seconds,
                    model_id=(model_ids or {}).get(system),
                    llm_calls=tokens.calls,
                    prompt_tokens=tokens.prompt_tokens,
                    completion_tokens=tokens.completion_tokens,
                )
            )
            with lock:  # kept the moment it is scored: an interruption loses no finished answer
                add(asdict(out[-1]))
                ticks[system](1)
        return out

    results = TatqaResults(list(answerers))
    for answered in in_order(one, work, workers):
        results.results.extend(answered)
    return results


def in_order(fn: Callable[[Any], Any], items: Iterable[Any], workers: int) -> Iterator[Any]:
    """``fn(x)`` for each of ``items``, yielded in order, with at most ``workers`` calls running at once (a
    bounded window: an exception, or the consumer stopping, waits only for the calls in flight, never for the
    rest of ``items``).

    Raises:
        whatever ``fn`` raises, at that item's turn.
    """
    if workers <= 1:
        yield from map(fn, items)
        return
    pool = ThreadPoolExecutor(workers, thread_name_prefix="tatqa")
    pending: deque[Future[Any]] = deque()
    rest = iter(items)
    try:
        pending.extend(pool.submit(fn, x) for x in itertools.islice(rest, workers))
        while pending:
            got = pending.popleft().result()
            pending.extend(pool.submit(fn, x) for x in itertools.islice(rest, 1))
            yield got
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
