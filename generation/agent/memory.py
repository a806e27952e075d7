"""Experience memory (seed 001, FinAcumen's Financial Memory): strategies distilled from graded trajectories,
stored in Neo4j, retrieved by cosine similarity above a threshold, used as the agent prompt's few-shot examples:
the program-of-thought prompt's (``program`` route) and the quoting prompt's (``span`` route), each question reading
the experiences learned on its own route (:data:`ROUTES`).

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.2 (memory bank: question, gold answer, findings from
successful trajectories, cautions from failed ones; activation: cosine similarity >= tau, deduplicated, top-k,
empty-return fallback), Appendix B (Algorithm 1: the query embedding is the question and the first 600 characters
of the context; dedup by source item), Appendix F.2 (tau = 0.65, k_max = 5; the bank is built from training
trajectories only and read-only during evaluation) and Appendix G (findings "To <goal>, use/do <method>.",
cautions "When <detectable condition>, <corrective action>.", specific values stripped).

finkg's distillation is deterministic (:func:`distill`): the seed's summary agent is an LLM; here the finding is
the successful expression's shape over generalised operand names, and the caution is chosen by comparing the
failed answer with the gold one (sign, percent, scale, average) or by the failure's kind (invalid JSON, an operand
not in the table, a name not defined), with the gold derivation's shape when the data set has one. The seed's
"Answer" field is a format reference; finkg's solver writes a program, so each entry also carries its worked
solution in that form (:func:`worked_program`: the run's own program when it was right, else the data set's
derivation of the gold answer, operands named after their table cells), shown in the block before the answer: by
default its expression alone, the values left out (:data:`DEFAULT_SOLUTION`; :func:`memory_block`). A ``span``
entry (:func:`distill_span`) has the quoting method that fits the gold answer's form as its finding and, for a
failure, a caution chosen by comparing the quoted items with the gold ones (too long, too short, too few items...).

Graph: ``(:Experience {id, question, answer, program, route, strategy, caution, outcome, split, context_id, merged,
sources, created_at, embedding})-[:DISTILLED_FROM]->(:AgentRun)``; the vector index ``experience_embedding``
(cosine) serves :meth:`ExperienceMemory.retrieve`. A near-duplicate (cosine >= ``merge_threshold`` with the nearest
stored experience of the same split) is merged into it: its strategy and caution gain the new sentences, ``merged``
counts the merges, and it gains a link to the new run.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from generation.agent.arithmetic import checked_program
from generation.agent.loop import AgentAnswer
from generation.agent.tables import Table, cell_name
from kg import Graph, cypher
from kg.errors import ConfigError, GenerationError
from retrieval.embeddings import Embedder

THRESHOLD = 0.65
"""Seed 001's cosine threshold tau (Appendix F.2)."""
TOP_K = 5
"""Seed 001's k_max (Appendix F.2, section 5.5)."""
MERGE_THRESHOLD = 0.97
"""Cosine at or above which a new experience is a near-duplicate of a stored one and merged into it."""
SMALL_CONSTANT = 12
"""A whole number up to this that no table cell states is written into a worked program as a literal (``/ 2``)."""
CONTEXT_CHARS = 600
"""The context characters the query embedding reads after the question (Algorithm 1, line 2)."""


class MemoryLeak(GenerationError):
    """An experience would be learned from, or retrieved for, a context it must not touch (an evaluation-half
    context); the message names the context."""


@dataclass(frozen=True)
class Experience:
    """One experience entry.

    Attributes:
        id: ``exp:<16 hex>``. question: the question it was learned from. answer: its gold answer (a format
        reference, never to be copied). strategy: findings (what worked). caution: guard rules (what failed).
        outcome: ``success`` or ``failure`` (the graded trajectory's). split: ``train`` (or another split's name).
        context_id: the data set's context (TAT-QA: the table uid). run: the AgentRun it was distilled from.
        cosine: the similarity with the query when retrieved (None otherwise). program: the worked solution in
        the solver's own output form, ``{"operands": {...}, "expression": "..."}`` as JSON text
        (:func:`worked_program`; ``""`` when there is none). route: the agent route it was learned on and is
        retrieved for (:data:`ROUTES`: ``program``, the program-of-thought questions; ``span``, the questions
        quoted from the evidence).
    """

    id: str
    question: str
    answer: str
    strategy: str
    caution: str
    outcome: str
    split: str
    context_id: str
    run: str | None = None
    cosine: float | None = None
    program: str = ""
    route: str = "program"


ROUTES = ("program", "span")
"""The agent routes an experience is learned on and retrieved for (``finkg.eval.tatqa.agent_route``; the ``count``
route has no LLM, so nothing to learn): a question reads only the experiences of its own route."""

CANDIDATES = 100
"""The nearest entries the vector index returns before the split, context and route filters (:meth:`retrieve`)."""


def _one_of(value: str, choices: Sequence[str], what: str) -> str:
    """``value`` when it is one of ``choices``, else ConfigError ``unknown <what> 'x': choose from ...``."""
    if value not in choices:
        raise ConfigError(f"unknown {what} {value!r}: choose from {', '.join(choices)}")
    return value


def check_route(route: str) -> str:
    """``route`` when it is one of :data:`ROUTES`.

    Raises:
        ConfigError: another name (the message lists the routes).
    """
    return _one_of(route, ROUTES, "experience route")


def query_text(question: str, context: str) -> str:
    """The text embedded for retrieval and storage: the question and the context's first 600 characters."""
    return f"{question}\n{context[:CONTEXT_CHARS]}"


# ----------------------------------------------------------------------------------------------- distillation


def _generalise(expression: str, names: Sequence[str]) -> tuple[str, dict[str, str]]:
    """Operand names with years made relative (the latest ``later``, the others ``earlier``/``earliest``) and
    other digits dropped; returns the rewritten expression and the renaming."""
    years = sorted({int(y) for n in names for y in re.findall(r"(?:19|20)\d\d", n)}, reverse=True)
    words = ["later", "earlier", "earliest", "older"]
    rel = {str(y): words[min(i, len(words) - 1)] for i, y in enumerate(years)}
    renamed: dict[str, str] = {}
    for n in names:
        new = re.sub(r"(?:19|20)\d\d", lambda m: rel[m.group(0)], n)
        new = re.sub(r"\d+", "", new).strip("_") or "x"
        while new in renamed.values():
            new += "_"
        renamed[n] = new
    out = expression
    for old in sorted(renamed, key=len, reverse=True):
        out = re.sub(rf"\b{re.escape(old)}\b", renamed[old], out)
    return out, renamed


def derivation_shape(derivation: str) -> str:
    """A data set's derivation with its numbers replaced by letters (``(4,351-3,919)/3,919`` -> ``(a-b)/b``)."""
    letters: dict[str, str] = {}

    def sub(m: re.Match[str]) -> str:
        key = m.group(0).replace(",", "")
        letters.setdefault(key, chr(ord("a") + min(len(letters), 25)))
        return letters[key]

    return re.sub(r"\d[\d,]*(?:\.\d+)?", sub, derivation).replace(" ", "")


def operation_of(question: str) -> str:
    """The operation a question names (``percentage change``, ``average``, ``difference``...), for the finding's
    goal."""
    low = question.lower()
    for words, name in (
        (("percentage change", "percent change", "% change", "growth rate"), "a percentage change"),
        (("percentage", "proportion", "%"), "a percentage"),
        (("average", "mean"), "an average"),
        (("ratio",), "a ratio"),
        (("change", "difference", "increase", "decrease"), "a change"),
        (("total", "sum", "combined"), "a total"),
    ):
        if any(w in low for w in words):
            return name
    return "a computed value"


def _number(text: str) -> float | None:
    m = re.search(r"-?\d[\d,]*(?:\.\d+)?", str(text))
    return float(m.group(0).replace(",", "")) if m else None


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= max(0.01, 0.005 * abs(b))


def distill(
    question: str,
    got: AgentAnswer,
    gold: Sequence[str],
    correct: bool,
    gold_derivation: str = "",
) -> tuple[str, str]:
    """The finding and the caution of one graded trajectory (seed 001, section 4.2 and Appendix G), deterministic.

    Args:
        question: the question. got: the agent's outcome (its derivation when answered, its reasons when not).
        gold: the gold answer strings. correct: the trajectory's grade (e.g. TAT-QA EM = 1).
        gold_derivation: the data set's derivation of the gold answer (``"44.1-56.7"``), when it has one.

    Returns:
        ``(strategy, caution)``: ``strategy`` "To compute <operation>, ..." (the successful expression's shape over
        generalised operand names; empty for a failure without a gold derivation), ``caution`` "When ..., ..."
        (empty for a success).
    """
    goal = operation_of(question)
    shape = derivation_shape(gold_derivation) if gold_derivation else ""
    if correct and got.derivation:
        expr, names = _generalise(got.derivation["expression"], list(got.derivation["operands"]))
        inputs = ", ".join(dict.fromkeys(names.values()))
        return (f"To compute {goal}, copy the operands ({inputs}) from the table and evaluate {expr}.", "")
    strategy = f"To compute {goal}, the correct computation has the shape {shape}." if shape else ""
    reasons = " ".join(got.reasons).lower()
    predicted = _number(got.answer) if got.answer is not None else None
    target = _number(gold[0]) if gold else None
    if got.answer is None and "invalid json" in reasons:
        caution = 'When answering, write only the JSON object {"operands": {...}, "expression": "..."} and no prose.'
    elif got.answer is None and "not numbers in the table" in reasons:
        caution = "When copying an operand, copy the number exactly as the table or text states it (no rounding)."
    elif got.answer is None and "unknown name" in reasons:
        caution = "When writing the expression, use only the operand names defined in operands."
    elif got.answer is None:
        caution = "When the calculation fails, define every operand with a number and divide by a non-zero value."
    elif predicted is not None and target is not None and _close(-predicted, target) and not _close(predicted, target):
        caution = "When the question asks for the change from an earlier to a later value, compute later - earlier."
    elif predicted is not None and target is not None and _close(predicted * 100, target):
        caution = "When the question asks for a percentage, multiply the fraction by 100."
    elif predicted is not None and target is not None and target != 0 and _close(predicted / 100, target):
        caution = "When the question asks for a ratio or amount, do not multiply by 100."
    elif "average" in question.lower():
        caution = "When the question asks for an average, add the values it names and divide by their count."
    else:
        caution = (
            "When several rows or years look alike, check that each operand is the row and column the question names."
        )
    return strategy, caution


def worked_program(
    got: AgentAnswer, correct: bool, gold_derivation: str, gold: float | None, table: Table | None
) -> str:
    """The entry's worked solution in the program-of-thought solver's output form, as JSON text: the seed's
    "Answer: a format reference" (seed 001, Appendix G, Memory_Block) given in the form the solver must write.

    A correct trajectory gives its own operands and expression. Otherwise the data set's derivation of the gold
    answer (TAT-QA's ``derivation``, training half only) becomes the program when :func:`calculate` reproduces
    ``gold`` with it (:func:`generation.agent.arithmetic.checked_program`); each operand is named after the table
    cell that states it (:func:`generation.agent.tables.cell_name`: ``revenue_2019``), else ``n1``, ``n2``...;
    equal values share one name; a whole number up to :data:`SMALL_CONSTANT` that no cell states (the count of an
    average) stays a literal. ``""`` when there is neither.
    """
    if correct and got.derivation:
        operands = {k: float(v) for k, v in got.derivation["operands"].items()}
        return json.dumps({"operands": operands, "expression": got.derivation["expression"]})
    found = checked_program(gold_derivation, gold) if gold_derivation and gold is not None else None
    if found is None:
        return ""
    expression, numbered = found
    names: dict[float, str] = {}
    rename: dict[str, str] = {}
    for key, value in numbered.items():
        if value not in names:
            name = cell_name(table, value) if table else None
            if name is None and value.is_integer() and abs(value) <= SMALL_CONSTANT:
                # a count or a factor (the 2 of an average): a literal, as the solver writes it
                rename[key] = str(int(value))
                continue
            name = name or key
            while name in names.values():
                name += "_"
            names[value] = name
        rename[key] = names[value]
    expression = re.sub(r"\bn\d+\b", lambda m: rename[m.group(0)], expression)
    return json.dumps({"operands": {name: value for value, name in names.items()}, "expression": expression})


def _words(text: str) -> str:
    return " ".join(re.sub(r"[^\w%.$-]+", " ", text.lower()).split())


def span_goal(question: str, gold: Sequence[str]) -> tuple[str, str]:
    """What a span question asks for and how the gold answer quotes it, for a span finding: ``(goal, method)``,
    e.g. ``("a table value", "quote the cell exactly as the table shows it")``."""
    if len(gold) > 1:
        return "several items", f"give each of the {len(gold)} items, separated by ' | '"
    answer = gold[0] if gold else ""
    if re.fullmatch(r"\s*(?:19|20)\d\d\s*", answer):
        return "a year", "give the year alone"
    if _number(answer) is not None and len(answer.split()) <= 3:
        return "a table value", "quote the cell exactly as the table shows it"
    n = len(answer.split())
    return "a phrase from the text", f"quote the text's own words, about {n} word{'s' * (n != 1)}"


def distill_span(question: str, got: AgentAnswer, gold: Sequence[str], correct: bool) -> tuple[str, str]:
    """The finding and the caution of one graded span trajectory (the ``span`` route: the answer quoted from the
    table or the text), deterministic, in seed 001's forms (section 4.2, Appendix G: findings "To <goal>,
    <method>.", cautions "When <detectable condition>, <corrective action>.").

    Args:
        question: the question. got: the agent's outcome (``answer`` the quoted items joined by `` | ``; None when
            the gate refused every attempt). gold: the gold answer strings. correct: the trajectory's grade.

    Returns:
        ``(strategy, caution)``: ``strategy`` "To answer with <goal>, <method>." from the gold answer's form
        (:func:`span_goal`; the method that works, for a failure too), ``caution`` "When ..., ..." chosen by
        comparing the quoted items with the gold ones (empty for a success).
    """
    goal, method = span_goal(question, gold)
    strategy = f"To answer with {goal}, {method}."
    if correct:
        return strategy, ""
    items = [i for i in (got.answer or "").split(" | ") if i.strip()]
    said, wanted = _words(" ".join(items)), _words(" ".join(gold))
    if not items:
        caution = "When quoting, copy the numbers and words exactly as the table or the text states them."
    elif len(gold) > 1 and len(items) < len(gold):
        caution = "When the question asks for several items, give every one of them, separated by ' | '."
    elif len(gold) == 1 and len(items) > 1:
        caution = "When the question asks for one thing, give only that one item."
    elif wanted and wanted in said:
        caution = "When quoting, give only the shortest words that answer the question, not the whole sentence."
    elif said and said in wanted:
        caution = "When quoting, give the complete phrase that answers the question, not a part of it."
    elif _number(said) is not None and _number(wanted) is not None:
        caution = "When several rows or years look alike, quote the cell of the row and the column the question names."
    else:
        caution = "When several sentences look alike, quote the one that answers exactly what the question asks."
    return strategy, caution


# ----------------------------------------------------------------------------------------------- the store


def experience_id(split: str, context_id: str, question: str) -> str:
    """``exp:<16 hex of sha256(split, context, question)>``: the same question learned again replaces its entry."""
    return "exp:" + hashlib.sha256(f"{split}\0{context_id}\0{question}".encode()).hexdigest()[:16]


def _join(old: str, new: str) -> str:
    parts = [p for p in (old or "").split("\n") if p]
    if new and new not in parts:
        parts.append(new)
    return "\n".join(parts)


@dataclass
class ExperienceMemory:
    """The experience bank in Neo4j.

    Attributes:
        graph: the Neo4j graph. embedder: the sentence encoder (the same for storing and retrieving).
        threshold: the cosine threshold (seed: 0.65). top_k: at most this many entries (seed: 5).
        merge_threshold: a new entry this similar to the nearest stored one of its split is merged into it.
        shuffled: the control: each retrieved entry's content is replaced by that of a random entry of the bank
            (a fixed permutation, ``seed``), so the same number of examples is shown, unrelated to the question.
    """

    graph: Graph
    embedder: Embedder
    threshold: float = THRESHOLD
    top_k: int = TOP_K
    merge_threshold: float = MERGE_THRESHOLD
    shuffled: bool = False
    seed: int = 0
    _permutation: dict[str, Experience] | None = field(default=None, repr=False)
    _indexed: bool = field(default=False, repr=False)

    def ensure_index(self) -> None:
        """Create the cosine vector index on ``Experience.embedding`` if absent (idempotent; once per object
        unless an entry was added since), and wait until it is online."""
        self.graph.run_autocommit(
            cypher.create_index(
                cypher.EXPERIENCE_INDEX,
                "vector",
                "Experience",
                ["embedding"],
                dimensions=self.embedder.dimensions,
                similarity="cosine",
            )
        )
        self.graph.run_autocommit(cypher.AWAIT_INDEXES, {"timeout_s": 60})
        self._indexed = True

    def add(self, entry: Experience, text: str) -> str:
        """Store ``entry`` (embedding of ``text``, :func:`query_text`), merged into its nearest stored entry of the
        same split and route when that is a near-duplicate. Returns the id written (the merged-into entry's when
        merged).

        Raises:
            ConfigError: the entry's route is not one of :data:`ROUTES`.
        """
        self.ensure_index()
        vector = self.embedder.encode([text])[0].tolist()
        props = {
            "question": entry.question,
            "answer": entry.answer,
            "strategy": entry.strategy,
            "caution": entry.caution,
            "program": entry.program,
            "route": check_route(entry.route),
            "outcome": entry.outcome,
            "split": entry.split,
            "context_id": entry.context_id,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "merged": 0,
            "sources": [entry.id],
        }
        target = entry.id
        near = self.graph.read(
            cypher.QUERY_EXPERIENCES,
            {
                "index": cypher.EXPERIENCE_INDEX,
                "candidates": CANDIDATES,
                "vector": vector,
                "splits": [entry.split],
                "exclude": [],
                "route": entry.route,
            },
        )
        if near and near[0]["id"] != entry.id and near[0]["cosine"] >= self.merge_threshold:
            n = near[0]
            target = n["id"]
            old = self.graph.read(cypher.EXPERIENCE, {"id": target})[0]["experience"]
            props = {
                **{k: old[k] for k in ("question", "answer", "split", "context_id", "created_at", "route") if k in old},
                "strategy": _join(old.get("strategy", ""), entry.strategy),
                "caution": _join(old.get("caution", ""), entry.caution),
                "program": old.get("program") or entry.program,
                "outcome": old.get("outcome") if old.get("outcome") == entry.outcome else "mixed",
                "merged": int(old.get("merged") or 0) + 1,
                "sources": [*(old.get("sources") or [target]), entry.id],
            }
            vector = None  # the merged entry keeps its own embedding
        row: dict[str, Any] = {"id": target, "props": props, "embedding": vector, "run": entry.run}
        if vector is None:
            self.graph.write(cypher.MERGE_INTO_EXPERIENCE, {"rows": [row]})
        else:
            self.graph.write(cypher.WRITE_EXPERIENCES, {"rows": [row]})
        self.graph.run_autocommit(cypher.AWAIT_INDEXES, {"timeout_s": 60})
        self._permutation = None
        return target

    def retrieve(
        self,
        question: str,
        context: str = "",
        splits: Sequence[str] = ("train",),
        exclude_contexts: Sequence[str] = (),
        route: str = "program",
    ) -> list[Experience]:
        """The experiences for a question (seed 001, Algorithm 1): cosine >= ``threshold``, of a split in
        ``splits``, a context not in ``exclude_contexts`` and the agent route ``route`` (:data:`ROUTES`: a question
        reads the experiences of its own route), one per source context (the most similar), at most ``top_k``, most
        similar first; empty when none qualifies (the fallback: no memory block). With ``shuffled``, each entry's
        content is a random other entry's of the same route (the control).

        Raises:
            ConfigError: ``route`` is not one of :data:`ROUTES`.
            MemoryLeak: a returned entry's split is not in ``splits`` or its context is excluded (never, unless
            the graph's filter failed: checked again here).
        """
        if not self._indexed:
            self.ensure_index()  # an empty bank (nothing learned yet) has no index to query
        rows = self.graph.read(
            cypher.QUERY_EXPERIENCES,
            {
                "index": cypher.EXPERIENCE_INDEX,
                "candidates": max(CANDIDATES, 4 * self.top_k),
                "vector": self.embedder.encode([query_text(question, context)])[0].tolist(),
                "splits": list(splits),
                "exclude": list(exclude_contexts),
                "route": check_route(route),
            },
        )
        out: list[Experience] = []
        seen: set[str] = set()
        banned = set(exclude_contexts)
        for r in rows:
            if r["cosine"] < self.threshold or r["context_id"] in seen:
                continue
            if r["split"] not in splits or r["context_id"] in banned:
                raise MemoryLeak(f"experience {r['id']} of context {r['context_id']} ({r['split']}) was retrieved")
            seen.add(r["context_id"])
            out.append(_experience(r, r["cosine"]))
            if len(out) == self.top_k:
                break
        if self.shuffled and out:
            perm = self._shuffle(splits, exclude_contexts, route)
            out = [Experience(**{**perm.get(e.id, e).__dict__, "cosine": e.cosine}) if e.id in perm else e for e in out]
        return out

    def _shuffle(self, splits: Sequence[str], exclude: Sequence[str], route: str) -> dict[str, Experience]:
        """The control's fixed permutation of the bank's entries of ``route`` (oldest first, shuffled by ``seed``):
        entry id -> the entry whose content replaces it."""
        if self._permutation is None:
            self._permutation = {}
            rows = list_experiences(self.graph)
            for one in ROUTES:
                bank = [
                    _experience(r)
                    for r in rows
                    if r["split"] in splits and r["context_id"] not in set(exclude) and r["route"] == one
                ]
                others = bank[:]
                random.Random(self.seed).shuffle(others)
                self._permutation.update({a.id: b for a, b in zip(bank, others, strict=True)})
        return self._permutation


def _experience(r: dict[str, Any], cosine: float | None = None) -> Experience:
    return Experience(
        r["id"],
        r["question"] or "",
        r.get("answer") or "",
        r.get("strategy") or "",
        r.get("caution") or "",
        r.get("outcome") or "",
        r.get("split") or "",
        r.get("context_id") or "",
        None,
        cosine,
        r.get("program") or "",
        r.get("route") or "program",
    )


def list_experiences(graph: Graph, split: str | None = None, limit: int = 100_000) -> list[dict[str, Any]]:
    """Stored experiences (of ``split`` or all), oldest first: id, question, outcome, split, context_id,
    strategy, caution, answer, merged, sources (the ids of the entries merged into it, its own first), created_at,
    runs."""
    return graph.read(cypher.EXPERIENCES, {"split": split, "limit": limit})


def show_experience(graph: Graph, exp_id: str) -> dict[str, Any] | None:
    """One experience (its embedding left out) with the runs it was distilled from, or None."""
    rows = graph.read(cypher.EXPERIENCE, {"id": exp_id})
    return rows[0] if rows and rows[0]["experience"] is not None else None


def clear_experiences(graph: Graph, split: str | None = None, ids: Sequence[str] | None = None) -> int:
    """Delete experiences (of ``split`` and among ``ids``; None: any) with the runs they were distilled from and
    their steps; returns how many."""
    result = graph.write(cypher.DELETE_EXPERIENCES, {"split": split, "ids": None if ids is None else list(ids)})
    return int(result.records[0]["updated"]) if result.records else 0


SOLUTION_FORMS = ("program", "expression", "none")
"""How :func:`memory_block` shows an entry's worked solution: ``program`` (its operands with their values and the
expression, the solver's own output form), ``expression`` (the expression over the operand names, the values left
out: the method without another table's numbers), ``none`` (seed 001's entry as printed: question, answer,
findings, cautions)."""
DEFAULT_SOLUTION = "expression"
"""The form shown unless another is chosen: measured best (README, "Solutions without their values help": on 77
TAT-QA arithmetic questions, +13.0 EM [+3.9, +22.1] over ``program`` with the same bank)."""


def check_solution_form(solution: str) -> str:
    """``solution`` when it is one of :data:`SOLUTION_FORMS`.

    Raises:
        ConfigError: another name (the message lists the forms).
    """
    return _one_of(solution, SOLUTION_FORMS, "memory solution form")


def memory_block(entries: Sequence[Experience], solution: str = DEFAULT_SOLUTION) -> str:
    """The few-shot block of an agent prompt (seed 001, Appendix G's Memory_Block, in plain text): each entry's
    question, its worked solution (:func:`worked_program`) in the form ``solution`` names (:data:`SOLUTION_FORMS`;
    a ``span`` entry has none), its answer (a format reference), findings and cautions, then the opt-out line;
    ``""`` when there are none (the fallback). Span entries get their own heading (answers to follow in form).

    Raises:
        ConfigError: ``solution`` is not one of :data:`SOLUTION_FORMS` (:func:`check_solution_form`).
    """
    check_solution_form(solution)
    if not entries:
        return ""
    if all(e.route == "span" for e in entries):
        lines = ["Experience from similar answered questions (follow the form of their answers; never copy them):"]
    else:
        lines = ["Experience from similar solved questions (follow the method; never copy their numbers):"]
    for e in entries:
        lines.append(f"- Question: {e.question}")
        if e.program and solution == "program":
            lines.append(f"  Solution: {e.program}")
        elif e.program and solution == "expression":
            lines.append(f"  Solution expression: {json.loads(e.program)['expression']}")
        lines.append(f"  Answer: {e.answer}")
        if e.strategy:
            lines.append(f"  Findings: {e.strategy}")
        if e.caution:
            lines.append(f"  Cautions: {e.caution}")
    lines.append("If an entry above does not fit this question, ignore it.")
    return "\n".join(lines)
