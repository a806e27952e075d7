"""The reader of seed 004: one LLM call over the question I and the facts F, answering with a thought T and the
answer Y; the prompt the LoRA reader is trained on (``finkg train reader``) and asked with.

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, section 3.4 ("Supervision Fine-tuning with KG retrieval": facts
and question concatenated as the prompt, the analysis as the target) and appendix C (the training data format
{I, F, T, Y}). One prompt serves training and answering, so a tuned reader is asked exactly the way it was
taught:

- system: :data:`SYSTEM`; user: ``Question: <I>`` then ``Facts:`` and F, one fact sentence per line;
- the answer: ``Thought: <T>`` then ``Answer: <Y>`` (read back by
  :func:`generation.llm.answer_line.extract_answer`).

F at training time puts the paragraphs TAT-QA marks as the question's evidence first
(:mod:`finkg.train.reader`); a question being answered has no such marks, so :func:`answer_facts` puts the
table's cells first, then the paragraphs sharing the most words with the question, and cuts F at the same
token budget (512 tokens of the model's tokenizer).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from generation.llm import LLMClient
from generation.qa.answer import Answerer
from retrieval.text.overlap import by_shared_words

SYSTEM = "You answer financial questions from the facts given. Think with a calculation, then answer."
FORM_SYSTEM = (
    SYSTEM + " Reply in exactly two lines. Line 1: 'Thought: ' then, when the answer needs arithmetic, a call "
    'calculate(expression="(n1 - n2) / n2 * 100", operands={"n1": 4.3, "n2": 19.6}) with every number copied '
    "from the facts under a name, else the words 'read from the table' or 'read from the text'. Line 2: "
    "'Answer: ' then the answer only: a number with its scale word (thousand, million, billion, percent) when the "
    "facts give one, or the words copied from the facts; several items separated by '; '."
)
"""The answer-form prompt: :data:`SYSTEM` plus the form of T and Y that ``finkg train reader`` teaches, stated in
words (the untuned model's second control, issue 18: how much of the tuning's gain is the form alone). Its one
example is made up, no data set's question."""
MAX_FACT_TOKENS = 512


def reader_messages(question: str, facts: str, target: str | None = None, system: str = SYSTEM) -> list[dict[str, str]]:
    """The reader's chat: ``system`` (:data:`SYSTEM`, the prompt training uses; :data:`FORM_SYSTEM` for the
    answer-form control), user (``Question: I`` / ``Facts:`` F) and, with ``target`` (``"Thought: T\\n
    Answer: Y"``), the assistant's answer."""
    chat = [
        {"role": "system", "content": system},
        {"role": "user", "content": f"Question: {question}\nFacts:\n{facts}"},
    ]
    if target is not None:
        chat.append({"role": "assistant", "content": target})
    return chat


def truncate(sentences: Sequence[str], count: Callable[[str], int], budget: int) -> str:
    """Sentences joined by newlines, whole sentences only, while their tokens (``count``, +1 for the newline) fit
    ``budget``; a first sentence longer than the budget is cut by characters in proportion."""
    out, used = [], 0
    for s in sentences:
        n = count(s) + 1
        if used + n > budget:
            if not out:
                out.append(s[: max(1, len(s) * budget // max(n, 1))])
            break
        out.append(s)
        used += n
    return "\n".join(out)


def answer_facts(question: str, cells: Sequence[str], paragraphs: Sequence[str]) -> list[str]:
    """F before truncation for a question being answered: the table's cell sentences in table order, then the
    paragraphs, those sharing the most words with the question first (ties in their order)."""
    return [*cells, *(paragraphs[i] for i in by_shared_words(question, paragraphs))]


def reader_answerer(
    client: LLMClient, max_fact_tokens: int = MAX_FACT_TOKENS, max_tokens: int = 128, system: str = SYSTEM
) -> Answerer:
    """Seed 004's reader as an answerer: ``answerer(question, facts, passages) -> "Thought: ...\\nAnswer: ..."``.

    Args:
        client: the LLM, base or LoRA-tuned (``[llm] adapter_path``).
        max_fact_tokens: F's budget in the model's tokens (training's ``--max-fact-tokens``, 512).
        max_tokens: the answer's length limit.
        system: the system prompt (:data:`SYSTEM`; :data:`FORM_SYSTEM`: the answer-form control).

    F is :func:`answer_facts` over the facts' and passages' ``.text``, cut by :func:`truncate`. Raises what
    :meth:`LLMClient.chat` raises (``LLMAnswerError`` for an empty answer).
    """
    count = client.count_tokens

    def answer(question: str, facts: Sequence[Any], passages: Sequence[Any]) -> str:
        sentences = answer_facts(question, [f.text for f in facts], [p.text for p in passages])
        prompt = reader_messages(question, truncate(sentences, count, max_fact_tokens), system=system)
        return client.chat(prompt, max_tokens=max_tokens).text

    return answer


REPAIR = (
    "Your answer was rejected: {complaint}. Write the Thought as a calculate call over numbers copied from the "
    "facts, then the Answer line."
)
"""The second turn after a rejected answer (the agent's repair, seed 001 section 4.4)."""


def thought_reader(
    client: LLMClient, max_fact_tokens: int = MAX_FACT_TOKENS, max_tokens: int = 128
) -> Callable[[str, Sequence[str], tuple[str, str] | None], str]:
    """Seed 004's reader as the analyst agent's thought route calls it
    (:data:`generation.agent.thought.ThoughtReader`): ``read(question, facts, repair) -> "Thought: ...\\nAnswer:
    ..."``.

    ``facts`` are fact sentences in rank order, cut at ``max_fact_tokens`` of the model's tokens
    (:func:`truncate`); the chat is :func:`reader_messages` (the prompt ``finkg train reader`` teaches), and with
    ``repair`` = ``(previous text, complaint)`` the previous answer and :data:`REPAIR` follow it. Raises what
    :meth:`LLMClient.chat` raises (``LLMAnswerError`` for an empty answer)."""

    def read(question: str, facts: Sequence[str], repair: tuple[str, str] | None = None) -> str:
        chat = reader_messages(question, truncate(facts, client.count_tokens, max_fact_tokens))
        if repair is not None:
            chat += [
                {"role": "assistant", "content": repair[0]},
                {"role": "user", "content": REPAIR.format(complaint=repair[1])},
            ]
        return client.chat(chat, max_tokens=max_tokens).text

    return read
