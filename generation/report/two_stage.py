"""Two-stage knowledge-graph-guided generation (TFR): fact selection, then answering with pruning.

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, section 3.3, equations (1) and (2):

- stage 1, financial facts selection: ``K1 = Retriever(Q)``; ``F_select = LLM(Q, K1, F, prompt)``;
- stage 2, question answering: ``K2 = Retriever(Q, F_select)``; ``A = LLM(Q, F_select, K2, prompt)``,
  the prompt telling the model to ignore retrieved knowledge that is irrelevant to the question.

The retriever is any :class:`retrieval.knowledge.KnowledgeRetriever` (TFR or a baseline;
``none`` gives the no-retrieval rows). :meth:`TwoStageGenerator.single_stage` is the ablation without
stage 1 (``A = LLM(Q, F, K)``, ``K = Retriever(Q)``).

finkg's choices where the paper is silent, for small local models:

- facts and knowledge are shown with short ids (``F1``..``Fn``, ``K1``..``Km``), mapped back to their
  real ids; stage 1 answers JSON whose ids are constrained (schema enum) and validated against F
  (an id not in F is recorded in ``invalid_ids``, never used);
- F is capped at ``max_facts`` facts, the ones most similar to the question when a ranking function
  is given (the paper's F averages 199 facts; a 1.5B model with a 4k context cannot take them all);
  the record keeps both counts;
- stage 2 cites ids in brackets; citations of ids that were not shown are recorded as invalid;
- stage 2's answer format (``answer_format``): ``cited-points`` (the default for reports) asks for JSON
  ``{"points": [{"claim": ..., "cites": ["F2", "K1"]}], "conclusion": ...}`` under a schema whose ``cites``
  are an enum of the ids shown, at least one per claim, at most :data:`MAX_POINTS` claims of at most
  :data:`MAX_CLAIM_CHARS` characters: a small model can neither leave a claim uncited, cite an id it
  was not shown, nor repeat itself until the token cap (Qwen2.5-Coder-1.5B did all three with free
  text). The points are rendered as text with bracketed citations (:func:`render_points`), so the
  number check and the citation reader treat both formats alike. ``text`` keeps free text (the QA
  benchmark's final ``Answer:`` line).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from generation.llm import LLMAnswerError
from retrieval.contract import as_of_cutoff
from retrieval.facts.indicators import FinancialFact
from retrieval.facts.names import mentions_company
from retrieval.knowledge import Knowledge, KnowledgeRetriever

SELECT_SYSTEM = (
    "You are a financial market analyst. Before answering a question you select the financial facts "
    "that the answer needs. Knowledge distilled from expert analyses is given to show which facts matter."
)
ANSWER_SYSTEM = (
    "You are a financial market analyst. Answer the question by reasoning from the financial facts given. "
    "Knowledge from expert analyses is also given: use what is relevant to the question and ignore the rest. "
    "Cite the facts and knowledge you use by their ids in brackets, e.g. [F2] or [K1], right after the "
    "statement they support. Use only numbers that appear in the facts. Write at most two short paragraphs, "
    "then one final line that starts with 'Conclusion:'."
)

ANSWER_POINTS_SYSTEM = (
    "You are a financial market analyst. Answer the question by reasoning from the financial facts given. "
    "Knowledge from expert analyses is also given: use what is relevant to the question and ignore the rest. "
    "Write a few short claims, each citing the ids of the facts and knowledge it rests on, and use only numbers "
    "that appear in the facts you cite; then a one-sentence conclusion that answers the question."
)
ANSWER_FORMATS = ("cited-points", "text")
MAX_POINTS = 4
"""Most claims in a ``cited-points`` answer."""
MAX_CLAIM_CHARS = 280
"""Longest claim or conclusion in a ``cited-points`` answer, in characters."""

CITATION = re.compile(r"\[((?:[FK]\d+)(?:\s*[,;]\s*[FK]\d+)*)\]")
"""A bracketed citation of short ids in a generated answer: ``[F2]``, ``[K1, F3]``, ``[K3; F1]``."""


def citation_refs(text: str) -> list[str]:
    """Every short id cited in ``text`` (``"F2"``, ``"K1"``), in text order, repeats kept."""
    return [ref for group in CITATION.findall(text) for ref in re.split(r"\s*[,;]\s*", group)]


@dataclass
class StageCall:
    """One LLM call: tokens, seconds, whether the cache answered, the raw answer and any failure."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cached: bool = False
    raw: str = ""
    error: str | None = None


@dataclass
class Generation:
    """Everything one question went through.

    Attributes:
        question, as_of: the input. mode: ``two-stage``, ``single-stage``.
        facts_total: facts in F before the cap; facts: the facts shown (F, capped).
        k1, k2: knowledge retrieved for stage 1 and stage 2 (``k2`` only in two-stage mode).
        selected: F_select (facts whose ids stage 1 returned and that are in F).
        invalid_ids: ids stage 1 returned that are not in F (recorded, not used).
        answer: stage 2's text; cited_facts / cited_knowledge: the real ids the answer cites (valid ones);
        invalid_citations: bracketed ids in the answer that were not shown.
        calls: ``{"select": StageCall, "answer": StageCall}``; seconds_retrieval: time spent retrieving.
        knowledge_trimmed: per stage, the lowest-ranked retrieved items left out because the prompt would
            not fit the model's context window (``k1``/``k2`` hold only what was shown).
        scope: the companies the question names (knowledge must mention one of them; empty: no scope).
        retrieval_calls: one record per retrieval call: ``stage`` (K1/K2), ``retriever`` (the system),
            ``as_of`` (the ISO UTC cutoff used: nothing available later was scored), ``as_of_from``
            (``question``, or ``now`` when the question has no date), ``k`` and ``returned``.
    """

    question: str
    as_of: str | None
    mode: str
    facts_total: int = 0
    facts: list[FinancialFact] = field(default_factory=list)
    k1: list[Knowledge] = field(default_factory=list)
    k2: list[Knowledge] = field(default_factory=list)
    selected: list[FinancialFact] = field(default_factory=list)
    invalid_ids: list[str] = field(default_factory=list)
    answer: str = ""
    cited_facts: list[str] = field(default_factory=list)
    cited_knowledge: list[str] = field(default_factory=list)
    invalid_citations: list[str] = field(default_factory=list)
    calls: dict[str, StageCall] = field(default_factory=dict)
    seconds_retrieval: float = 0.0
    knowledge_trimmed: dict[str, int] = field(default_factory=dict)
    retrieval_calls: list[dict[str, Any]] = field(default_factory=list)
    scope: list[str] = field(default_factory=list)

    @property
    def knowledge(self) -> list[Knowledge]:
        """The knowledge the answer was written with (K2 in two-stage mode, else K1)."""
        return self.k2 if self.mode == "two-stage" else self.k1


def _listing(prefix: str, texts: Sequence[str]) -> str:
    return "\n".join(f"[{prefix}{i}] {t}" for i, t in enumerate(texts, 1)) or "(none)"


def selection_schema(n_facts: int, max_selected: int) -> dict[str, Any]:
    """JSON schema of the stage-1 answer: ``{"facts": ["F3", ...]}``, ids among F1..Fn, at most ``max_selected``."""
    return {
        "type": "object",
        "properties": {
            "facts": {
                "type": "array",
                "items": {"type": "string", "enum": [f"F{i}" for i in range(1, n_facts + 1)]},
                "maxItems": max_selected,
            }
        },
        "required": ["facts"],
    }


def selection_messages(
    question: str, facts: Sequence[FinancialFact], knowledge: Sequence[Knowledge], max_selected: int
) -> list[dict[str, str]]:
    """Stage 1 prompt (equation 1): Q, K1 and F; the answer lists the ids of the facts needed."""
    return [
        {"role": "system", "content": SELECT_SYSTEM},
        {
            "role": "user",
            "content": f"Question: {question}\n\nKnowledge:\n{_listing('K', [k.text for k in knowledge])}\n\n"
            f"Financial facts:\n{_listing('F', [f.text for f in facts])}\n\n"
            f'Answer with JSON {{"facts": [ids]}}: the ids of the facts needed to answer the question, '
            f"at most {max_selected}.",
        },
    ]


def answer_messages(
    question: str,
    as_of: str | None,
    facts: Sequence[FinancialFact],
    knowledge: Sequence[Knowledge],
    system: str = ANSWER_SYSTEM,
) -> list[dict[str, str]]:
    """Stage 2 prompt (equation 2): Q, F_select and K2, with the instruction to ignore irrelevant knowledge."""
    when = f" (as of {as_of})" if as_of else ""
    return [
        {"role": "system", "content": system},
        {
            "role": "user",
            "content": f"Question{when}: {question}\n\nFinancial facts:\n{_listing('F', [f.text for f in facts])}\n\n"
            f"Knowledge:\n{_listing('K', [k.text for k in knowledge])}",
        },
    ]


def points_schema(n_facts: int, n_knowledge: int) -> dict[str, Any]:
    """JSON schema of a ``cited-points`` answer.

    ``{"points": [{"claim": str, "cites": [id, ...]}], "conclusion": str}``: 1..:data:`MAX_POINTS`
    points, each with 1..3 cited ids among ``F1..F<n_facts>`` and ``K1..K<n_knowledge>``; claims and the
    conclusion at most :data:`MAX_CLAIM_CHARS` characters. With nothing to cite (no facts, no knowledge)
    ``cites`` is an empty array.
    """
    ids = [f"F{i}" for i in range(1, n_facts + 1)] + [f"K{i}" for i in range(1, n_knowledge + 1)]
    text = {"type": "string", "minLength": 1, "maxLength": MAX_CLAIM_CHARS}
    cites: dict[str, Any] = (
        {"type": "array", "items": {"type": "string", "enum": ids}, "minItems": 1, "maxItems": 3}
        if ids
        else {"type": "array", "maxItems": 0}
    )
    return {
        "type": "object",
        "properties": {
            "points": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_POINTS,
                "items": {
                    "type": "object",
                    "properties": {"claim": text, "cites": cites},
                    "required": ["claim", "cites"],
                },
            },
            "conclusion": text,
        },
        "required": ["points", "conclusion"],
    }


def render_points(data: Any) -> str:
    """A ``cited-points`` answer as text: one line per claim with its citations before the closing stop
    (``"M2 growth rose to 10.8% [F5, K2]."``, inside the sentence, where the number check looks for
    them), then ``"Conclusion: ..."``.

    Raises:
        ValueError: ``data`` is not ``{"points": [{"claim", "cites"}...], "conclusion"}`` with one claim at least.
    """
    if not isinstance(data, dict) or not isinstance(data.get("points"), list):
        raise ValueError('the answer is not {"points": [...], "conclusion": ...}')
    if not data["points"]:  # the schema asks for one at least: a repaired, cut-off answer
        raise ValueError("the answer has no claim (cut off before its first point?)")
    lines = []
    for p in data["points"]:
        if not isinstance(p, dict) or not str(p.get("claim", "")).strip():
            raise ValueError(f"a point is not {{'claim': ..., 'cites': [...]}}: {p!r:.120}")
        cites = list(dict.fromkeys(str(c).strip() for c in p.get("cites") or []))
        claim = _mark_cut(str(p["claim"]).strip())
        body, end = (claim[:-1].rstrip(), claim[-1]) if claim[-1] in ".!?" else (claim, ".")
        lines.append(body + (f" [{', '.join(cites)}]" if cites else "") + end)
    conclusion = str(data.get("conclusion", "")).strip()
    if conclusion:
        lines.append("Conclusion: " + _mark_cut(conclusion))
    return "\n".join(lines)


def _mark_cut(text: str) -> str:
    """``text`` with `` …`` appended when the schema's length cap cut it mid-sentence (shown as cut, not as a
    finished sentence)."""
    return text + " …" if len(text) >= MAX_CLAIM_CHARS - 1 and text[-1] not in ".!?" else text


def parse_citations(answer: str, n_facts: int, n_knowledge: int) -> tuple[list[int], list[int], list[str]]:
    """The 0-based fact and knowledge positions an answer cites (``[F2]``, ``[K1, F3]``), in first-cited
    order, and the cited ids that are out of range (e.g. ``F9`` when 5 facts were shown)."""
    facts: list[int] = []
    knowledge: list[int] = []
    invalid: list[str] = []
    for ref in citation_refs(answer):
        kind, n = ref[0], int(ref[1:])
        bound, out = (n_facts, facts) if kind == "F" else (n_knowledge, knowledge)
        if 1 <= n <= bound:
            if n - 1 not in out:
                out.append(n - 1)
        elif ref not in invalid:
            invalid.append(ref)
    return facts, knowledge, invalid


class TwoStageGenerator:
    """Runs seed 004 section 3.3 for one question at a time.

    Args:
        client: a :class:`generation.llm.LLMClient`.
        retriever: the knowledge retriever (TFR, a baseline, or ``none``).
        max_facts: the cap on F shown to the LLM; rank: ``rank(question, facts) -> facts`` ordered by
            relevance (used when F is over the cap; without it the first ``max_facts`` are kept).
        max_selected: most facts stage 1 may select. select_tokens / answer_tokens: completion caps.
        answer_system: stage 2's system prompt in ``text`` format (default :data:`ANSWER_SYSTEM`; a QA
            benchmark asks for a final ``Answer:`` line instead of a conclusion).
        answer_format: ``text`` (free text) or ``cited-points`` (schema-constrained claims with citations,
            rendered by :func:`render_points`; its system prompt is :data:`ANSWER_POINTS_SYSTEM`).

    Errors: a stage-1 answer that is not usable JSON is recorded (``calls["select"].error``) and stage 2
    runs with no selected facts; a stage-2 failure is recorded with an empty answer. ``LLMUnavailable``
    and ``BudgetExceeded`` propagate.
    """

    def __init__(
        self,
        client: Any,
        retriever: KnowledgeRetriever,
        max_facts: int = 40,
        rank: Callable[[str, Sequence[FinancialFact]], list[FinancialFact]] | None = None,
        max_selected: int = 8,
        select_tokens: int = 96,
        answer_tokens: int = 400,
        answer_system: str = ANSWER_SYSTEM,
        answer_format: str = "text",
    ) -> None:
        if answer_format not in ANSWER_FORMATS:
            raise ValueError(f"unknown answer format {answer_format!r}: one of {', '.join(ANSWER_FORMATS)}")
        self.client, self.retriever, self.answer_format = client, retriever, answer_format
        self.answer_system = ANSWER_POINTS_SYSTEM if answer_format == "cited-points" else answer_system
        self.max_facts, self.rank, self.max_selected = max_facts, rank, max_selected
        self.select_tokens, self.answer_tokens = select_tokens, answer_tokens

    def _facts(self, gen: Generation, facts: Sequence[FinancialFact]) -> None:
        unique = list({f.id: f for f in facts}.values())
        gen.facts_total = len(unique)
        if len(unique) > self.max_facts and self.rank is not None:
            unique = self.rank(gen.question, unique)
        gen.facts = unique[: self.max_facts]

    def _retrieve(self, gen: Generation, query: str, stage: str) -> list[Knowledge]:
        """Retrieve as of the question's date (else now, recorded as such): the point-in-time contract. A question
        about named companies (``gen.scope``) keeps only knowledge that mentions one of them (issue 44: a question
        about Johnson & Johnson's liquidity gets that company's text, or none, never FOMC statements)."""
        t0 = time.perf_counter()
        when = gen.as_of or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        out = self.retriever.retrieve(query, as_of=when)
        returned = len(out)
        if gen.scope:
            out = [k for k in out if mentions_company(k.text, gen.scope)]
        gen.seconds_retrieval += time.perf_counter() - t0
        gen.retrieval_calls.append(
            {
                "stage": stage,
                "retriever": self.retriever.system,
                "as_of": as_of_cutoff(when),
                "as_of_from": "question" if gen.as_of else "now",
                "k": self.retriever.k,
                "returned": len(out),
                "out_of_scope": returned - len(out),
            }
        )
        return out

    def _chat(
        self,
        gen: Generation,
        stage: str,
        messages: list[dict[str, str]],
        max_tokens: int,
        json_schema: dict | None = None,
    ) -> Any:
        call = StageCall()
        gen.calls[stage] = call
        try:
            res = self.client.chat(messages, max_tokens=max_tokens, temperature=0.0, json_schema=json_schema)
        except LLMAnswerError as exc:
            call.error, call.raw = str(exc)[:300], str(exc.raw)[:2000]
            return None
        call.prompt_tokens, call.completion_tokens = int(res.prompt_tokens or 0), int(res.completion_tokens or 0)
        call.seconds, call.cached, call.raw = float(res.seconds or 0.0), bool(res.cached), res.text
        return res

    def _fit(
        self,
        gen: Generation,
        stage: str,
        knowledge: list[Knowledge],
        max_tokens: int,
        build: Callable[[list[Knowledge]], list[dict[str, str]]],
    ) -> tuple[list[Knowledge], list[dict[str, str]]]:
        """``knowledge`` without its lowest-ranked items until ``build(knowledge)`` and the answer fit the
        client's context window (:meth:`generation.llm.LLMClient.fits`), and the messages built from what is
        kept; the count left out is recorded."""
        fits = getattr(self.client, "fits", None)
        kept = list(knowledge)
        messages = build(kept)
        while kept and fits is not None and not fits(messages, max_tokens):
            kept.pop()
            messages = build(kept)
        if len(kept) < len(knowledge):
            gen.knowledge_trimmed[stage] = len(knowledge) - len(kept)
        return kept, messages

    def _answer(self, gen: Generation, facts: Sequence[FinancialFact], knowledge: list[Knowledge]) -> list[Knowledge]:
        """Stage 2 (or the single stage) with ``knowledge`` trimmed to fit; returns the knowledge shown."""
        knowledge, messages = self._fit(
            gen,
            "answer",
            knowledge,
            self.answer_tokens,
            lambda k: answer_messages(gen.question, gen.as_of, facts, k, self.answer_system),
        )
        if self.answer_format == "text":
            res = self._chat(gen, "answer", messages, self.answer_tokens)
            gen.answer = res.text if res is not None else ""
        else:
            res = self._chat(gen, "answer", messages, self.answer_tokens, points_schema(len(facts), len(knowledge)))
            try:
                gen.answer = render_points(res.data) if res is not None else ""
            except ValueError as exc:  # recorded with the raw answer, never silently empty
                gen.calls["answer"].error, gen.answer = str(exc), ""
        fi, ki, gen.invalid_citations = parse_citations(gen.answer, len(facts), len(knowledge))
        gen.cited_facts = [facts[i].id for i in fi]
        gen.cited_knowledge = [knowledge[i].id for i in ki]
        return knowledge

    def run(
        self, question: str, facts: Sequence[FinancialFact], as_of: str | None = None, scope: Sequence[str] = ()
    ) -> Generation:
        """Both stages for ``question`` with facts F (equations 1 and 2); ``scope``: the companies the question
        names (knowledge must mention one of them)."""
        gen = Generation(question, as_of, "two-stage", scope=list(scope))
        self._facts(gen, facts)
        gen.k1 = self._retrieve(gen, question, "K1")
        if gen.facts:
            gen.k1, messages = self._fit(
                gen,
                "select",
                gen.k1,
                self.select_tokens,
                lambda k: selection_messages(question, gen.facts, k, self.max_selected),
            )
            res = self._chat(
                gen, "select", messages, self.select_tokens, selection_schema(len(gen.facts), self.max_selected)
            )
            picked = _picked_ids(res.data if res is not None else None, gen)
            by_short = {f"F{i}": f for i, f in enumerate(gen.facts, 1)}
            gen.selected = [by_short[x] for x in picked if x in by_short]
            gen.invalid_ids = [x for x in picked if x not in by_short]
        # K2 = Retriever(Q, F_select): the question and the selected facts' sentences, as one query
        gen.k2 = self._retrieve(gen, " ".join([question, *(f.text for f in gen.selected)]), "K2")
        gen.k2 = self._answer(gen, gen.selected, gen.k2)
        return gen

    def single_stage(
        self, question: str, facts: Sequence[FinancialFact], as_of: str | None = None, scope: Sequence[str] = ()
    ) -> Generation:
        """The ablation without fact selection: ``K = Retriever(Q)``, ``A = LLM(Q, F, K)``."""
        gen = Generation(question, as_of, "single-stage", scope=list(scope))
        self._facts(gen, facts)
        gen.k1 = self._retrieve(gen, question, "K1")
        gen.selected = list(gen.facts)
        gen.k1 = self._answer(gen, gen.facts, gen.k1)
        return gen


def _picked_ids(data: Any, gen: Generation) -> list[str]:
    """The ids of a stage-1 answer, de-duplicated in order; a malformed answer is recorded on the call."""
    if not isinstance(data, dict) or not isinstance(data.get("facts"), list):
        if data is not None:
            gen.calls["select"].error = 'the answer is not {"facts": [...]}'
        return []
    return list(dict.fromkeys(str(x).strip() for x in data["facts"]))
