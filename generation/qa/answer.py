"""Question answering over facts and passages: the final-answer line every answerer asks for and one direct
LLM answerer (with or without the context).

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, sections 3.3 and 4.2 (generation from selected facts,
compared with a vanilla LLM that sees no retrieved knowledge); the comparable form is what TAT-QA's
metric (:mod:`finkg.eval.metrics.tatqa`, Zhu et al., ACL 2021) scores: the answer spans and the scale.

An answerer writes free text that ends with one line ``Answer: <answer>`` (:data:`ANSWER_INSTRUCTION`
asks for it); :func:`generation.llm.answer_line.extract_answer` reads it back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from generation.llm import LLMClient

ANSWER_INSTRUCTION = (
    "Finish with one last line of the form 'Answer: <answer>'. Write a number in digits followed by its scale "
    "word (thousand, million or billion) or by a percent sign; a count as a number; a text answer as the exact "
    "words from the context; several items separated by ' | '."
)


def _context_block(facts: Sequence[Any], passages: Sequence[Any]) -> str:
    rows = [f"[{f.id}] {f.text}" for f in facts]
    texts = [p.text for p in passages]
    return "Table facts:\n" + "\n".join(rows) + "\n\nText:\n" + "\n\n".join(texts)


def answer_messages(question: str, facts: Sequence[Any] = (), passages: Sequence[Any] = ()) -> list[dict]:
    """The chat messages of a direct answer: the question, the facts (``[id] text`` lines) and the
    passages when any are given, and :data:`ANSWER_INSTRUCTION`."""
    system = "You answer questions about a company's financial report. Think briefly, then answer."
    context = _context_block(facts, passages) + "\n\n" if facts or passages else ""
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"{context}Question: {question}\n\n{ANSWER_INSTRUCTION}"},
    ]


Answerer = Callable[[str, Sequence[Any], Sequence[Any]], str]


def direct_answerer(client: LLMClient, with_context: bool, max_tokens: int = 128) -> Answerer:
    """An answerer that asks the LLM once: ``answerer(question, facts, passages) -> generated text``.

    Args:
        client: the LLM (:func:`generation.llm.client_from_settings`).
        with_context: True: every fact and passage goes into the prompt (no selection); False: the
            question alone (the vanilla-LLM baseline of seed 004, section 4.2).
        max_tokens: the answer's length limit.

    The answerer raises what :meth:`LLMClient.chat` raises (``LLMAnswerError`` for an empty answer).
    """

    def answer(question: str, facts: Sequence[Any], passages: Sequence[Any]) -> str:
        messages = answer_messages(question, facts, passages) if with_context else answer_messages(question)
        return client.chat(messages, max_tokens=max_tokens).text

    return answer
