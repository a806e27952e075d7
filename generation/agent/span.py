"""Answers read from the evidence (spans, multi-spans, counts): one LLM call over the table as rows and the
text, the answer's scale from the table, and the answer gate.

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.4 (the "Visual Structure Decoder" reads a table
into rows before the agent answers from it; the Answer Consolidation Gate is the only way out: every number
traced to the evidence, the answer's form valid) and section 4.3 (the solver inventories the inputs with their
units). A question that names no operation (:func:`generation.agent.questions.needs_arithmetic` is False) asks
for something the report states: the LLM quotes it, nothing is computed.

What finkg does, in order:

1. **The prompt**: the experience memory's entries for the question when there are some (the ``span`` route's:
   similar questions with their gold answers, findings and cautions, :func:`generation.agent.memory.memory_block`),
   the table as rows (``cell | cell | ...``, captions and header rows included, so ``"$ in
   thousands"`` is seen once, not per cell), then the paragraphs, then the question and
   :data:`SPAN_INSTRUCTION` (the shortest exact words; a table value as its cell shows it; several items with
   `` | ``). A prompt that would not fit the model's context window leaves out the paragraphs that share the
   fewest words with the question first (:func:`fit_paragraphs`); how many is recorded.
2. **The answer** is read by :func:`generation.llm.answer_line.extract_answer`. A number taken from a table cell,
   written without a scale word, is in the table's scale (:func:`generation.agent.tables.scale_named_in` of the
   rows): TAT-QA states a table's scale once, in its caption; a number taken from a paragraph is in the scale
   word that follows it there (:func:`quoted_scale`). For a "which years" question, an item naming one year
   is that year (:func:`years_only`).
3. **The gate** (:func:`generation.agent.gate.check_answer`): every number of the answer must be in the
   evidence; a direction word must be one the evidence states; the form must fit the question (``count`` for a
   "how many" question answered by one whole number, ``multi-span`` for several items, else ``span``). A
   failing answer goes back to the LLM once with the gate's complaint; a second failure is "could not verify",
   with **no answer**.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

from generation.agent.gate import check_answer, evidence_numbers, same_number
from generation.agent.loop import AgentAnswer, Step
from generation.agent.questions import YEAR
from generation.agent.tables import scale_named_in
from generation.llm import LLMAnswerError, LLMClient
from generation.llm.answer_line import ExtractedAnswer, extract_answer
from generation.verify.numbers import find_numbers
from retrieval.text.overlap import by_shared_words

SPAN_SYSTEM = "You answer questions about a company's financial report by quoting its table or its text."

SPAN_INSTRUCTION = (
    "Answer with one line 'Answer: <answer>' and nothing else. The answer is the shortest exact words from the "
    "table or the text that answer the question: a table value exactly as its cell shows it (keep $, % and "
    "parentheses), a year as the year, a reason or a definition in the text's own words; for 'how many', a "
    "whole number; several items separated by ' | '."
)

_COUNT_QUESTION = re.compile(
    r"^\s*how\s+many\b(?!\s+(?:dollars|shares|employees\s+\w+\s+paid|million|thousand|billion))", re.IGNORECASE
)


@dataclass(frozen=True)
class SpanPrompt:
    """The messages of a span question, the paragraphs they hold (in their order) and how many were left out to
    fit the context window."""

    messages: list[dict[str, str]]
    paragraphs: list[str]
    paragraphs_trimmed: int


def span_messages(
    question: str,
    table: Sequence[str],
    paragraphs: Sequence[str],
    complaint: str | None = None,
    examples: str = "",
) -> list[dict[str, str]]:
    """The chat messages of one attempt: the few-shot ``examples`` (the experience memory's block,
    :func:`generation.agent.memory.memory_block`; none when empty), the table rows, the paragraphs, the question,
    :data:`SPAN_INSTRUCTION` and the previous attempt's complaint when there is one."""
    body = (examples + "\n\n" if examples else "") + "Table:\n" + "\n".join(table)
    body += "\n\nText:\n" + "\n\n".join(paragraphs)
    body += f"\n\nQuestion: {question}\n\n{SPAN_INSTRUCTION}"
    if complaint:
        body += f"\n\nYour previous answer was rejected: {complaint}. Try again."
    return [{"role": "system", "content": SPAN_SYSTEM}, {"role": "user", "content": body}]


def fit_paragraphs(
    client: LLMClient,
    question: str,
    table: Sequence[str],
    paragraphs: Sequence[str],
    max_tokens: int,
    examples: str = "",
) -> SpanPrompt:
    """:func:`span_messages` (with ``examples``) with as many paragraphs as fit ``client``'s context window with
    ``max_tokens`` of answer (and room for one complaint): the paragraphs sharing the fewest words with the question
    are left out first; the kept ones stay in their order. A backend that cannot count tokens gets every
    paragraph."""
    order = by_shared_words(question, paragraphs)
    keep = set(order)
    reserve = max_tokens + 64
    while True:
        kept = [p for i, p in enumerate(paragraphs) if i in keep]
        messages = span_messages(question, table, kept, examples=examples)
        if not keep or client.fits(messages, reserve):
            return SpanPrompt(messages, kept, len(paragraphs) - len(keep))
        keep.discard(next(i for i in reversed(order) if i in keep))


def question_type_of(question: str, answer: ExtractedAnswer) -> str:
    """The gate's answer type for a span question: ``multi-span`` for several items, ``count`` for a "how many"
    question (not "how many dollars/millions"), else ``span``."""
    if len(answer.spans) > 1:
        return "multi-span"
    return "count" if _COUNT_QUESTION.search(question) else "span"


def _plain_numbers(answer: ExtractedAnswer) -> list[float] | None:
    """Each item's number when every item is one plain number (no ``%``, no year), else None."""
    values = []
    for item in answer.spans:
        found = find_numbers(item)
        if len(found) != 1 or found[0].kind not in ("number", "currency") or "%" in item:
            return None
        values.append(found[0].value)
    return values


def quoted_scale(answer: ExtractedAnswer, table: Sequence[str], paragraphs: Sequence[str] = ()) -> str:
    """The answer's scale: the one it wrote; else, when every item is a plain number (no ``%``, no year), the
    table's (captions and headers, :func:`scale_named_in`) if each is stated in a table row, or the scale word
    that follows the first item's number in a paragraph (``"$36.5 million"`` for an answer ``$36.5``); else
    ``""``."""
    if answer.scale or not answer.spans:
        return answer.scale
    values = _plain_numbers(answer)
    if values is None:
        return ""
    scale = scale_named_in(" ".join(table))
    cells = evidence_numbers(table)
    if scale and all(any(same_number(v, c) for c in cells) for v in values):
        return scale
    digits = re.sub(r"[^\d.,]", "", answer.spans[0]).strip(".,")
    if not digits:
        return ""
    written = re.compile(rf"(?<![\d.,]){re.escape(digits)}\s*(thousand|million|billion)\b", re.IGNORECASE)
    for text in paragraphs:
        if m := written.search(text):
            return m.group(1).lower()
    return ""


_WHICH_YEARS = re.compile(r"\b(?:which|what)\s+(?:fiscal\s+|financial\s+|calendar\s+)?years?\b", re.IGNORECASE)


def years_only(question: str, spans: Sequence[str]) -> list[str]:
    """For a question asking which year(s), each item that names exactly one year and at most three other words
    (``"Fiscal Year 2018"``) becomes the year; other questions' items are kept as they are."""
    if not _WHICH_YEARS.search(question):
        return list(spans)
    out = []
    for item in spans:
        years = YEAR.findall(item)
        rest = YEAR.sub(" ", item).split()
        out.append(years[0] if len(years) == 1 and len(rest) <= 3 else item)
    return out


def answer_span(
    client: LLMClient,
    question: str,
    table: Sequence[str],
    paragraphs: Sequence[str],
    *,
    max_tokens: int = 160,
    attempts: int = 2,
    examples: str = "",
) -> tuple[AgentAnswer, str]:
    """Answer a question the report states (see the module doc).

    Args:
        client: the LLM client. question: its text. table: the table's rows as text
            (:func:`generation.agent.loop.table_evidence`; empty without a table). paragraphs: the texts.
        max_tokens: the answer's length limit. attempts: tries, the first plus repairs. examples: the few-shot
            block put before the table (the experience memory's, :func:`generation.agent.memory.memory_block`).

    Returns:
        ``(outcome, scale)``: the :class:`AgentAnswer` (``answer`` the items joined by `` | ``, set only when the
        gate passed; ``derivation`` empty: nothing was computed) and the answer's scale (``""``, ``thousand``,
        ``million``, ``billion`` or ``percent``).

    Raises:
        LLMUnavailable, BudgetExceeded: the LLM cannot be used (an empty answer is a failed step instead).
    """
    out = AgentAnswer(None, "could not answer")
    fitted = fit_paragraphs(client, question, table, paragraphs, max_tokens, examples)
    kept = fitted.paragraphs
    trimmed = [f"{fitted.paragraphs_trimmed} paragraph(s) left out to fit the context window"]
    out.reasons = trimmed[: bool(fitted.paragraphs_trimmed)]
    evidence = list(table) + kept
    messages, complaint, scale = fitted.messages, None, ""
    for _ in range(attempts):
        if complaint is not None:
            messages = span_messages(question, table, kept, complaint, examples)
        try:
            text = client.chat(messages, max_tokens=max_tokens).text
        except LLMAnswerError as exc:
            out.steps.append(Step(len(out.steps), "llm", messages[-1]["content"], exc.raw, str(exc)))
            complaint = "answer with one line 'Answer: <answer>'"
            continue
        got = extract_answer(text)
        got = dataclasses.replace(got, spans=tuple(years_only(question, got.spans)))
        out.steps.append(Step(len(out.steps), "llm", messages[-1]["content"], text))
        verdict = check_answer(list(got.spans), question_type_of(question, got), (), evidence)
        out.verdict = verdict
        out.steps.append(
            Step(len(out.steps), "gate", list(got.spans), verdict.as_dict(), "; ".join(verdict.reasons) or None)
        )
        if verdict.passed:
            scale = quoted_scale(got, table, kept)
            out.answer, out.status = " | ".join(got.spans), "answered"
            out.reasons = trimmed[: bool(fitted.paragraphs_trimmed)]
            return out, scale
        out.status = "could not verify"
        complaint = "; ".join(verdict.reasons)
        out.reasons.append(complaint)
    return out, scale
