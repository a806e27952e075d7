"""What kind of answer a question asks for, and in what scale: the agent's router.

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.3 (the solver first decides whether a question
needs computation, and "inventories the inputs" with their units before computing). finkg routes by the
question's words, deterministically: a question asking for a change, difference, average, ratio, percentage,
growth, sum or total needs arithmetic (program of thought, :func:`generation.agent.loop.answer_arithmetic`);
the others are answered from the evidence as they are. The answer's scale follows TAT-QA's convention
(Zhu et al., ACL 2021): ``percent`` when the question asks for a percentage or a proportion, nothing for a
ratio, else the scale the table or facts name (``"(in thousands)"``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from generation.agent.tables import scale_named_in

_ARITHMETIC = re.compile(
    r"\b(?:change[sd]?|difference|average|mean|ratio|percentage|percent|proportion|growth|increase[sd]?|"
    r"decrease[sd]?|sum|total|combined|how\s+much\s+(?:more|less|higher|lower))\b|%",
    re.IGNORECASE,
)
_PERCENT = re.compile(r"\b(?:percentage|percent|proportion)\b|%", re.IGNORECASE)
_RATIO = re.compile(r"\bratio\b", re.IGNORECASE)


def needs_arithmetic(question: str) -> bool:
    """Whether ``question`` asks for a computed number (its words name an operation; see the module doc)."""
    return bool(_ARITHMETIC.search(question))


def answer_scale(question: str, evidence: Sequence[str]) -> str:
    """The scale a computed answer is in: ``percent``, ``""`` (a ratio), or ``thousand``/``million``/``billion``
    as the evidence names (``""`` when it names none)."""
    if _PERCENT.search(question):
        return "percent"
    if _RATIO.search(question):
        return ""
    return scale_named_in(" ".join(evidence))


def evidence_scale(question: str, table: Sequence[str], paragraphs: Sequence[str]) -> str:
    """:func:`answer_scale` from the table's lines (captions included) first, else from the paragraphs. On
    TAT-QA dev it gives the gold scale of 623 of the 718 arithmetic questions (86.8 %)."""
    return answer_scale(question, table) or answer_scale(question, paragraphs)


def percent_hint(scale: str) -> str:
    """What the question's text gets added so that the expression yields the scale: for ``percent``, a fraction
    times 100 (TAT-QA writes 12.5 for 12.5 %)."""
    return " Give the result in percent (a fraction times 100)." if scale == "percent" else ""
