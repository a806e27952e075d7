"""What kind of answer a question asks for, and in what scale: the agent's router.

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.3 (the solver first decides whether a question
needs computation, and "inventories the inputs" with their units before computing). finkg routes by the
question's words, deterministically: a question asking for a change, difference, average, ratio, percentage,
growth, sum or total needs arithmetic (program of thought, :func:`generation.agent.loop.answer_arithmetic`);
the others are answered from the evidence as they are. The answer's scale follows TAT-QA's convention
(Zhu et al., ACL 2021): ``percent`` when the question asks for a percentage, nothing for a ratio or a
proportion (on the training half of TAT-QA dev, 5 of the 7 "proportion" questions' gold answers are
fractions), else the scale the table or facts name (``"(in thousands)"``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from generation.agent.tables import YEAR, scale_named_in
from generation.verify.numbers import find_numbers

_ARITHMETIC = re.compile(
    r"\b(?:change[sd]?|difference|average|mean|ratio|percentage|percent|proportion|growth|increase[sd]?|"
    r"decrease[sd]?|sum|total|combined|how\s+much\s+(?:more|less|higher|lower))\b|%",
    re.IGNORECASE,
)
_PERCENT = re.compile(r"\b(?:percentage|percent)\b|%", re.IGNORECASE)
_RATIO = re.compile(r"\b(?:ratio|proportion)\b", re.IGNORECASE)


_EXPLAIN = re.compile(
    r"^\s*(?:why\b|what\s+(?:caused|led|leads|drove|resulted)\b|what\s+(?:is|are|was|were)\s+the\s+reasons?\b|"
    r"how\s+(?:is|are|was|were)\b.*\b(?:calculated|determined|defined|measured|computed|recogni[sz]ed)\b)",
    re.IGNORECASE,
)
_CHOICE = re.compile(r"^\s*(?:in\s+)?which\b|\brespective(?:ly)?\b", re.IGNORECASE)
_TOTAL_OF = re.compile(
    r"\btotal\s+([a-z][a-z\- ]*?)(?:\s+(?:in|for|as|at|of|from|on|between|during)\b|[?,]|$)", re.IGNORECASE
)


def needs_arithmetic(question: str, row_labels: Sequence[str] = ()) -> bool:
    """Whether ``question`` asks for a computed number: its words name an operation (see the module doc), except

    - a question asking why, what caused or led to something, for the reasons, or how a figure is calculated or
      defined (the answer is the report's words);
    - a question asking which item or year, or for values "respectively" (the answer is picked, not computed);
    - a question whose only operation word is "total", about one year at most, when the table has a row
      ``Total <the question's next word> ...`` (``row_labels``: the first cell of each table row): the total is
      read, not summed.

    On TAT-QA dev's training half the exceptions route 47 more of the 473 non-arithmetic questions away from
    the calculator and none of its 361 arithmetic questions."""
    if _EXPLAIN.search(question) or _CHOICE.search(question):
        return False
    triggers = {m.group(0).lower() for m in _ARITHMETIC.finditer(question)}
    if not triggers:
        return False
    if triggers == {"total"} and len(YEAR.findall(question)) <= 1 and (m := _TOTAL_OF.search(question)):
        word = m.group(1).split()[0].lower()
        labels = [str(label).strip().lower() for label in row_labels]
        if any(label.startswith("total") and word in label for label in labels):
            return False
    return True


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
    TAT-QA dev it gives the gold scale of 630 of the 718 arithmetic questions (87.7 %)."""
    return answer_scale(question, table) or answer_scale(question, paragraphs)


def percent_hint(scale: str) -> str:
    """What the question's text gets added so that the expression yields the scale: for ``percent``, a fraction
    times 100 (TAT-QA writes 12.5 for 12.5 %)."""
    return " Give the result in percent (a fraction times 100)." if scale == "percent" else ""


_HOW_MANY_YEARS = re.compile(
    r"^\s*(?:from\s+\S+\s+to\s+\S+\s*,\s*)?how\s+many\s+(?:of\s+the\s+)?years\s+(?:did|was|were|has|had|have|is|are)\s+"
    r"(?P<subject>.+?)\s+(?P<op>exceed(?:ed|s)?|(?:(?:been|be)\s+)?(?:more|greater|higher|larger|less|lower|smaller)"
    r"\s+than|(?:(?:been|be)\s+)?(?:above|over|below|under))\s+(?P<amount>[^?]+?)\s*\??\s*$",
    re.IGNORECASE,
)
_BELOW = re.compile(r"\b(?:less|lower|smaller|below|under)\b", re.IGNORECASE)
_FILLER = re.compile(r"^(?:the\s+)?(?:(?:amount|value|balance)\s+of\s+(?:the\s+)?)?", re.IGNORECASE)


@dataclass(frozen=True)
class ThresholdCount:
    """A "how many years did <subject> exceed <amount>" question: the row it names (``subject``, as written),
    the comparison (``>`` or ``<``), the threshold in base units (dollars, a percentage as a fraction) and the
    scale word the amount was written with (``thousand``, ``million``, ``billion`` or ``""``) and whether it is a
    percentage (``exceed 20%``: the row's percentage cells are compared)."""

    subject: str
    op: str
    threshold: float
    scale: str = ""
    percent: bool = False


def threshold_count(question: str) -> ThresholdCount | None:
    """The row, comparison and threshold of a question counting the years a figure passed a threshold, or None
    for any other question. Example: ``"How many years did net income exceed $30,000 thousand?"`` ->
    ``ThresholdCount("net income", ">", 30_000_000.0, "thousand")``; ``"... was R&D less than 5 million?"``
    -> ``<``. On TAT-QA dev, 17 of the 32 count questions have this form."""
    m = _HOW_MANY_YEARS.search(question)
    if m is None:
        return None
    amounts = [n for n in find_numbers(m.group("amount")) if n.kind in ("currency", "number", "percent")]
    if len(amounts) != 1:
        return None
    subject = _FILLER.sub("", m.group("subject").strip()).strip()
    scale = {1e3: "thousand", 1e6: "million", 1e9: "billion"}.get(amounts[0].scale, "")
    op = "<" if _BELOW.search(m.group("op")) else ">"
    return ThresholdCount(subject, op, amounts[0].value, scale, amounts[0].kind == "percent")
