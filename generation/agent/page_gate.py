"""The checks an LLM's answer over a filing page's lines must pass besides its unit (issue 46 item 4; the gate of
:func:`generation.agent.page.llm_answer`): the analyst's second gate ("the answer answers the question", issue 44)
for page answers.

- **period** (:func:`unplaced`): with a fiscal year named, every operand is a cell of that year's column or a number
  of a sentence naming the year;
- **subject** (:func:`unnamed`): a number read from a sentence comes from a sentence that mentions the question's
  most specific name (the segment, the acquired company);
- **scale** (:func:`operand_scale`): an amount is restated from the scale its operands are stated in: a row's page
  scale, or the scale word written after a sentence's number.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence

from generation.agent.gate import same_number
from generation.agent.page_lines import Page, PageLine
from generation.agent.page_units import SMALL_CONSTANTS, expression_numbers
from retrieval.facts.tables import parse_numbers


def shown_numbers(lines: Sequence[PageLine]) -> list[float]:
    """The numbers the lines show, sign dropped: a row's cells, a sentence's numbers."""
    out: list[float] = []
    for line in lines:
        if line.kind == "row":
            out += [abs(x) for cell in line.cells for x in parse_numbers(cell)]
        elif line.kind == "sentence":
            out += [float(x.replace(",", "")) for x in re.findall(r"\d[\d,]*(?:\.\d+)?", line.label)]
    return out


def unplaced(expression: str, lines: Sequence[PageLine], years: Sequence[int]) -> list[float]:
    """The operands of ``expression`` that are not where the question's period puts them (the period check of the
    gate: the answer is of the period asked). With ``years`` named by the question, an operand must be a row's cell
    in the column of one of those years, or a number of a sentence that names one of them; a number shown only in
    a row without year columns, a label (a share count in a caption) or another year's column is unplaced. Small
    constants (:data:`generation.agent.page_units.SMALL_CONSTANTS`) are always placed. Without ``years``: none.

    Returns:
        The unplaced operands, in the expression's order (empty: every operand is placed).
    """
    if not years:
        return []
    placed: list[float] = []
    for line in lines:
        if line.kind == "row":
            placed += [abs(v) for y in years if (v := line.value(y)) is not None]
        elif line.kind == "sentence" and any(str(y) in line.label for y in years):
            placed += shown_numbers([line])
    return [
        x
        for x in expression_numbers(expression)
        if x not in SMALL_CONSTANTS and not any(same_number(x, p) for p in placed)
    ]


_SENTENCE_NUMBER = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(thousand|million|billion|trillion)?\b", re.IGNORECASE)
_NAME = re.compile(r"\b[A-Z][a-zA-Z&'-]+")
_NOT_NAMES = {m.lower() for m in calendar.month_name if m} | {
    "fy", "fiscal", "usd", "us", "gaap", "eps", "ebitda", "capex", "q1", "q2", "q3", "q4",
}  # fmt: skip


def question_names(question: str) -> list[str]:
    """The capitalised words of a question that may name something (a segment, an acquired company, a product):
    not a sentence's first word, a month or a fiscal abbreviation; in question order, without repeats."""
    out: list[str] = []
    for m in _NAME.finditer(question):
        before = question[: m.start()].rstrip()
        if not before or before[-1] in ".?!:" or m.group(0).lower() in _NOT_NAMES:
            continue
        out.append(re.sub(r"['’]s$", "", m.group(0)))
    return list(dict.fromkeys(out))


def operand_scale(expression: str, lines: Sequence[PageLine], pages: Sequence[Page]) -> str | None:
    """The scale the operands of ``expression`` are stated in: a row's cell is in its page's scale ("(in
    millions)"); a number of a sentence in the scale word written after it ("292.3 billion"; none: units).
    ``thousand``, ``million``, ``billion``, ``""`` (units), or None when the operands are in different scales or
    one cannot be found on the lines (the answer cannot be restated then)."""
    by_id = {p.id: p.scale for p in pages}
    found: set[str] = set()
    for x in expression_numbers(expression):
        if x in SMALL_CONSTANTS:
            continue
        scales = {
            by_id[line.page]
            for line in lines
            if line.kind == "row" and any(same_number(x, v) for v in shown_numbers([line]))
        }
        for line in lines:
            if line.kind == "sentence":
                for m in _SENTENCE_NUMBER.finditer(line.label):
                    if same_number(x, float(m.group(1).replace(",", ""))):
                        scales.add((m.group(2) or "").lower())  # "trillion": no scale to restate it in
        if len(scales) != 1 or "trillion" in scales:
            return None
        found |= scales
    if len(found) > 1:
        return None
    return found.pop() if found else ""


def unnamed(question: str, expression: str, lines: Sequence[PageLine], pages: Sequence[Page]) -> str:
    """The name of the question that a sentence operand's sentence does not mention, or ``""`` (the subject check
    of the gate: "the price Pfizer paid for Trillium" is not read from the sentence about Array; "AMD's Gaming
    revenue" not from the sentence about Client). The name checked is the question's most specific one
    (:func:`question_names`): the one the fewest sentences of the pages mention, at least one and at most half of
    them (a company's own name, written all over its pages, is not it). Only operands no row shows are checked: a
    row is chosen by its label."""
    sentences = [line for p in pages for line in p.lines if line.kind == "sentence"]
    hits = {
        w: sum(bool(re.search(rf"\b{re.escape(w)}\b", line.label)) for line in sentences)
        for w in question_names(question)
    }
    named = sorted((n, w) for w, n in hits.items() if 0 < n <= len(sentences) / 2)
    if not named:
        return ""
    name = named[0][1]
    for x in expression_numbers(expression):
        if x in SMALL_CONSTANTS or any(
            line.kind == "row" and any(same_number(x, v) for v in shown_numbers([line])) for line in lines
        ):
            continue
        holders = [
            line for line in lines if line.kind == "sentence" and any(same_number(x, v) for v in shown_numbers([line]))
        ]
        if holders and not any(re.search(rf"\b{re.escape(name)}\b", h.label) for h in holders):
            return name
    return ""
