"""Every number in a generated report checked against the financial facts it may come from.

The rule of the XBRL issue (seed 003, ../shared/seeds/003_2b4a46a307636297.txt, section 3.4: a number
is supported only when a cited source carries it, within the rounding of the digits shown) applied to
reports: each number mention (:func:`generation.verify.numbers.find_numbers`) of the answer is

- ``verified`` when it equals, within half a unit of its last digit shown, a number of a fact cited in
  the same sentence; else of any fact the report was given (``F_select``), which is then recorded as its
  source (``cited_in_sentence: false``);
- ``context`` when it is not a financial value: a date or a year, a tenor or horizon ("10-year",
  "3 months"), a citation id, or a number the question itself states;
- ``unverified`` otherwise: the number stays, followed by the marker ``[unverified]`` in the text, so no
  number without a source survives unmarked.

Percentages compare as written: "3.62%" matches a fact number 3.62 stated in percent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from generation.report.two_stage import CITATION, citation_refs
from generation.verify.numbers import NumberMention, find_numbers, rounding_tolerance
from retrieval.facts.indicators import FinancialFact

MARK = " [unverified]"
_TENOR_ONLY = re.compile(r"^[\s-]?(?:years?|yrs?|months?|mos?|weeks?|days?|Y|M|W)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])|\n+")


@dataclass(frozen=True)
class NumberCheck:
    """The verdict on one number of a report.

    Attributes:
        text: the mention as written; value: its value (see :class:`generation.verify.numbers.NumberMention`).
        status: ``verified``, ``context`` or ``unverified``; why: the rule that decided.
        fact_id: the fact that supports it (verified only); cited_in_sentence: that fact is cited in the
            number's sentence.
    """

    text: str
    value: float
    status: str
    why: str
    fact_id: str | None = None
    cited_in_sentence: bool = False


def _shown(m: NumberMention) -> float:
    """The number as written (a percentage in percent, a scaled amount in its base units)."""
    return m.value * 100 if m.kind == "percent" else m.value


def _tolerance(m: NumberMention) -> float:
    return rounding_tolerance(m) * (100 if m.kind == "percent" else 1)


def _matches(m: NumberMention, fact: FinancialFact) -> bool:
    shown, tol = _shown(m), _tolerance(m) + 1e-9
    return any(abs(abs(shown) - abs(n)) <= tol and (shown >= 0) == (n >= 0 or not m.negative) for n in fact.numbers)


def _sentence_bounds(text: str) -> list[tuple[int, int]]:
    bounds, start = [], 0
    for sep in _SENTENCE.finditer(text):
        bounds.append((start, sep.start()))
        start = sep.end()
    bounds.append((start, len(text)))
    return bounds


def check_numbers(
    answer: str, question: str, facts: Sequence[FinancialFact], short_ids: dict[str, str]
) -> tuple[str, list[NumberCheck]]:
    """Check the numbers of ``answer``; returns the answer with ``[unverified]`` after each unsupported
    number, and one :class:`NumberCheck` per number mention, in text order.

    Args:
        answer: the generated text (citations like ``[F2]`` in it).
        question: the question (numbers it states are context).
        facts: the facts the report was given (F_select, or F in single-stage mode).
        short_ids: ``{"F2": fact id}`` for the facts shown, to read the citations of each sentence.
    """
    by_id = {f.id: f for f in facts}
    question_values = {round(_shown(m), 9) for m in find_numbers(question)}
    cite_spans = [(c.start(), c.end()) for c in CITATION.finditer(answer)]
    bounds = _sentence_bounds(answer)
    checks: list[NumberCheck] = []
    marks: list[int] = []
    for m in find_numbers(answer):
        if any(s <= m.start < e for s, e in cite_spans):
            continue  # the digits of a citation id
        after = answer[m.end : m.end + 16]
        if m.kind in ("date", "year"):
            checks.append(NumberCheck(m.text, m.value, "context", m.kind))
            continue
        if m.kind == "number" and _TENOR_ONLY.match(after) and float(m.value).is_integer():
            checks.append(NumberCheck(m.text, m.value, "context", "tenor or horizon"))
            continue
        if round(_shown(m), 9) in question_values:
            checks.append(NumberCheck(m.text, m.value, "context", "stated in the question"))
            continue
        s, e = next(((s, e) for s, e in bounds if s <= m.start < e), (0, len(answer)))
        cited_here = [short_ids[ref] for ref in citation_refs(answer[s:e]) if ref in short_ids]
        found = next((fid for fid in cited_here if fid in by_id and _matches(m, by_id[fid])), None)
        if found is not None:
            checks.append(NumberCheck(m.text, m.value, "verified", "a fact cited in its sentence", found, True))
            continue
        found = next((f.id for f in facts if _matches(m, f)), None)
        if found is not None:
            checks.append(NumberCheck(m.text, m.value, "verified", "a fact the report was given", found, False))
            continue
        checks.append(NumberCheck(m.text, m.value, "unverified", "no fact carries this number"))
        marks.append(m.end)
    marked = answer
    for end in sorted(marks, reverse=True):
        marked = marked[:end] + MARK + marked[end:]
    return marked, checks
