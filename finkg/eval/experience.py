"""Learning the analyst agent's experience memory from TAT-QA's training half (seed 001, section 4.2).

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.2 (memory consolidation: a trajectory per problem,
scored against the gold answer, summarised into findings and cautions) and Appendix F.2 (the bank is built from
training trajectories only). One agent route at a time (:data:`generation.agent.memory.ROUTES`): ``program``, the
arithmetic questions (the ones the agent answers by program of thought), or ``span``, the questions it quotes from
the evidence (:func:`finkg.eval.tatqa.agent_route`). For each such question of a training-half context: the agent
answers on that route with the route's memory learned so far (the seed's bank grows as it goes), the answer is graded
with TAT-QA's EM, the run is written as ``(:AgentRun)-[:STEP]->(:Step)`` and an experience of the route is distilled
and stored, linked to the run: a ``program`` one (:func:`generation.agent.memory.distill`) with its worked solution
in the solver's output form (:func:`generation.agent.memory.worked_program`: the run's own program when it was right,
else TAT-QA's derivation of the gold answer with operands named after their table cells), a ``span`` one
(:func:`generation.agent.memory.distill_span`) with the quoting method that fits the gold answer. With ``workers`` > 1
the questions are answered ``workers`` at a time (a server with that many slots decodes them together) and each
retrieves from the bank as it stands when its answer starts, so a question may miss the experience of one still in
flight: the seed's growing bank, with at most ``workers - 1`` entries not yet visible; ``workers=1`` is the seed's
order.

A context of the evaluation half is refused (:class:`generation.agent.memory.MemoryLeak`): the split is
:func:`ingest.datasets.tatqa.split_contexts` (a hash of the table uid, seed 0), the one ``finkg eval tatqa --half``
uses. Resumable: a question whose experience is stored already is skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from finkg.eval.metrics.tatqa import gold_answers, score
from finkg.eval.tatqa import agent_evidence, agent_text, in_order, question_route
from generation.agent.loop import AgentAnswer, answer_arithmetic
from generation.agent.memory import (
    Experience,
    ExperienceMemory,
    MemoryLeak,
    check_route,
    distill,
    distill_span,
    experience_id,
    list_experiences,
    memory_block,
    query_text,
    worked_program,
)
from generation.agent.questions import needs_arithmetic, percent_hint
from generation.agent.span import answer_span
from generation.agent.tables import row_labels
from generation.agent.trajectory import RunRecord, run_id, steps_of, verdict_of, write_runs
from generation.llm import LLMClient
from generation.llm.answer_line import extract_answer
from ingest.datasets.tatqa import TatqaContext, TatqaQuestion
from kg.progress import StageProgress


@dataclass
class LearnSummary:
    """What a learning pass did: questions ``learned`` (runs and experiences written), ``skipped`` (stored
    already), ``correct`` (EM 1 among the learned), ``merged`` (experiences merged into a near-duplicate),
    ``experiences`` (ids written)."""

    learned: int = 0
    skipped: int = 0
    correct: int = 0
    merged: int = 0
    experiences: list[str] = field(default_factory=list)


class _Attempt(NamedTuple):
    """One training question answered: its context and question, the ids of the experiences it retrieved, the
    agent's answer, the table's scale and the evidence text the experience is keyed by."""

    context: TatqaContext
    question: TatqaQuestion
    used: list[str]
    got: AgentAnswer
    scale: str
    evidence: str


def learning_order(
    contexts: Sequence[TatqaContext], route: str = "program"
) -> list[tuple[TatqaContext, TatqaQuestion]]:
    """The questions :func:`learn` learns from on ``route``, in the order it learns them, file order: for
    ``program`` the arithmetic questions of ``contexts`` (:func:`generation.agent.questions.needs_arithmetic`, the
    ones the agent answers by program of thought), for ``span`` the ones it quotes
    (:func:`finkg.eval.tatqa.agent_route` is ``span``). After ``n`` learned questions the bank holds the first ``n``
    of them (``--limit`` takes a prefix).

    Raises:
        ConfigError: ``route`` is not one of :data:`generation.agent.memory.ROUTES`.
    """
    if check_route(route) == "program":
        return [(c, q) for c in contexts for q in c.questions if needs_arithmetic(q.question, row_labels(c.table))]
    return [(c, q) for c in contexts for q in c.questions if question_route(c, q) == "span"]


def learn(
    client: LLMClient,
    memory: ExperienceMemory,
    contexts: Sequence[TatqaContext],
    evaluation_contexts: Collection[str],
    *,
    limit: int | None = None,
    max_tokens: int = 160,
    attempts: int = 2,
    workers: int = 1,
    route: str = "program",
    progress: StageProgress | None = None,
    on_pending: Callable[[int], object] | None = None,
) -> LearnSummary:
    """Learn experiences of ``route`` from the questions of ``contexts`` the agent answers on it (see the module
    doc; :func:`learning_order`).

    Args:
        client: the LLM. memory: the bank (its graph gets the runs too). contexts: training-half contexts.
        evaluation_contexts: the evaluation half's table uids: a context among them is refused.
        limit: at most this many new questions. max_tokens: the LLM's answer limit. attempts: tries per question
            (the first plus repairs, :func:`generation.agent.loop.answer_arithmetic`).
        workers: questions answered at once (see the module doc); each finished question is stored at once, in the
            order of the file, so an interruption keeps every stored one and a rerun skips them.
        route: ``program`` (the arithmetic questions) or ``span`` (the quoted ones).
        progress: ``progress(stage, total)`` -> a callback advanced per question.
        on_pending: called with the number of new questions once they are known, before the first LLM call (it may
            raise to stop the run: :class:`finkg.cost.BatchCost`).

    Raises:
        MemoryLeak: a context of the evaluation half. ConfigError: an unknown route. LLMUnavailable,
            BudgetExceeded: the LLM cannot be used. GraphError: Neo4j is unavailable.
    """
    leaked = [c.table_uid for c in contexts if c.table_uid in set(evaluation_contexts)]
    if leaked:
        raise MemoryLeak(
            f"context {leaked[0]} is in the evaluation half: experience is learned from the training half only "
            "(finkg experience learn reads the training half of the file itself)"
        )
    memory.ensure_index()
    stored = {i for r in list_experiences(memory.graph) for i in [r["id"], *r["sources"]]}
    work = learning_order(contexts, route)
    todo = [(c, q) for c, q in work if experience_id("train", c.table_uid, q.question) not in stored]
    todo = todo[:limit] if limit is not None else todo
    if on_pending is not None:
        on_pending(len(todo))
    summary = LearnSummary(skipped=len(work) - len(todo))
    tick = progress(f"experience: learn ({route})", len(todo)) if progress else (lambda n: None)

    def answer(item: tuple[TatqaContext, TatqaQuestion]) -> _Attempt:
        c, q = item
        cells, paragraphs, scale = agent_evidence(q.question, c.facts, c.passages, {c.table_uid: c.table})
        context = "\n".join(cells + paragraphs)
        entries = memory.retrieve(q.question, context, exclude_contexts=list(evaluation_contexts), route=route)
        if route == "span":
            got, scale = answer_span(
                client,
                q.question,
                cells,
                paragraphs,
                max_tokens=max_tokens,
                attempts=attempts,
                examples=memory_block(entries),
            )
            return _Attempt(c, q, [e.id for e in entries], got, scale, context)
        got = answer_arithmetic(
            client,
            q.question + percent_hint(scale),
            cells + paragraphs,
            attempts=attempts,
            max_tokens=max_tokens,
            examples=memory_block(entries),
        )
        return _Attempt(c, q, [e.id for e in entries], got, scale, context)

    for c, q, used, got, scale, context in in_order(answer, todo, workers):  # in the file's order
        gold = gold_answers(q.record())
        predicted = extract_answer(agent_text(got, scale))
        graded = score(list(predicted.spans), predicted.scale, gold, q.answer_type, q.scale)
        correct = graded.em == 1
        rid = run_id("tatqa", q.uid, "train")
        write_runs(
            memory.graph,
            [
                RunRecord(
                    rid,
                    q.question,
                    got.answer,
                    verdict_of(got),
                    client.model_id,
                    kind="tatqa-learn",
                    props={
                        "status": got.status,
                        "split": "train",
                        "context_id": c.table_uid,
                        "question_uid": q.uid,
                        "em": graded.em,
                        "f1": graded.f1,
                        "gold": " | ".join(gold),
                        "experiences_used": used,
                        "route": route,
                    },
                    steps=steps_of(got, [p.id for p in c.passages]),
                )
            ],
        )
        if route == "span":
            (strategy, caution), program = distill_span(q.question, got, gold, correct), ""
        else:
            strategy, caution = distill(q.question, got, gold, correct, q.derivation)
            gold_value = float(q.answer) if isinstance(q.answer, int | float) else None
            program = worked_program(got, correct, q.derivation, gold_value, c.table)
        entry = Experience(
            experience_id("train", c.table_uid, q.question),
            q.question,
            f"{' | '.join(gold)} {q.scale}".strip(),
            strategy,
            caution,
            "success" if correct else "failure",
            "train",
            c.table_uid,
            rid,
            program=program,
            route=route,
        )
        written = memory.add(entry, query_text(q.question, context))
        summary.learned += 1
        summary.correct += int(correct)
        summary.merged += int(written != entry.id)
        summary.experiences.append(written)
        tick(1)
    return summary
