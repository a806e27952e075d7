"""The two-stage generator as TAT-QA answerers: two-stage vs single-stage vs facts only (issue 5, item 5).

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, section 3.3 (the two stages) and section 5.2 (the
ablation without fact selection). On TAT-QA (Zhu et al., ACL 2021) a context's table cells are the facts F
(:func:`ingest.datasets.tatqa.table_facts`) and its paragraphs are the knowledge the retriever draws from (BM25 over
the context's paragraphs, k of them), so:

- ``two-stage``: K1 = BM25(Q); F_select = LLM(Q, K1, F); K2 = BM25(Q + F_select); A = LLM(Q, F_select, K2);
- ``single-stage``: K = BM25(Q); A = LLM(Q, F, K);
- ``facts-only``: no retrieval, A = LLM(Q, F).

Each ends its answer with TAT-QA's final line (:data:`generation.qa.answer.ANSWER_INSTRUCTION`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from generation.qa.answer import ANSWER_INSTRUCTION, Answerer
from generation.report.two_stage import TwoStageGenerator
from retrieval.facts.indicators import FinancialFact
from retrieval.knowledge import KnowledgeRetriever
from retrieval.text.documents import DocumentIndex, Passage

QA_SYSTEM = (
    "You are a financial analyst answering a question about a company's annual report. The financial facts "
    "are cells of its table ('row | column: value'); the knowledge is passages of its text. Use what is "
    "relevant, ignore the rest, cite facts and knowledge by their ids in brackets, and compute carefully. "
    + ANSWER_INSTRUCTION
)
MODES = {
    "two-stage": ("two-stage", "bm25-docs"),
    "single-stage": ("single-stage", "bm25-docs"),
    "facts-only": ("single-stage", "none"),
}


def tfr_answerer(
    client: Any, mode: str, k: int = 3, max_facts: int = 60, max_selected: int = 12, answer_tokens: int = 256
) -> Answerer:
    """An ``answerer(question, facts, passages) -> text`` running :class:`TwoStageGenerator` in ``mode``
    (a key of :data:`MODES`).

    Raises:
        ValueError: an unknown mode.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: one of {', '.join(MODES)}")
    generation, system = MODES[mode]

    def answer(question: str, facts: Sequence[FinancialFact], passages: Sequence[Any]) -> str:
        docs = DocumentIndex([Passage(p.id, p.text) for p in passages]) if passages and system != "none" else None
        retriever = KnowledgeRetriever(system if docs is not None else "none", k=k, documents=docs)
        gen = TwoStageGenerator(
            client,
            retriever,
            max_facts=max_facts,
            max_selected=max_selected,
            answer_tokens=answer_tokens,
            answer_system=QA_SYSTEM,
        )
        out = gen.run(question, facts) if generation == "two-stage" else gen.single_stage(question, facts)
        return out.answer

    return answer


def tfr_answerers(client: Any, **kwargs: Any) -> dict[str, Answerer]:
    """The three answerers of :data:`MODES`, by name."""
    return {mode: tfr_answerer(client, mode, **kwargs) for mode in MODES}
