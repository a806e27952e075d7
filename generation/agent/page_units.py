"""The unit a page question asks for, the answer stated in it, and the gate that refuses a unit mismatch (issue 46
item 4: "state the answer in the question's unit").

A question over a filing page asks for one of three kinds of number (:func:`asked_unit`):

- ``percent``: it says "percent", "%", or asks for a margin, growth or rate (not a ratio): the answer is a
  percentage (a fraction x 100; a change of margins is in points);
- ``ratio``: a ratio, turnover, times, days, cycle, per-share figure or a return on assets/equity (a fraction, as
  FinanceBench states it): a plain number;
- ``amount``: anything else, in the currency scale the question names ("in USD millions", "USD billions"), else
  the page's own scale (its "(in millions)").

:func:`unit_problems` is the gate: an amount question answered by a division of two page numbers (a ratio), or a
percent/ratio question answered by a page amount with no division, is refused; so is a number of the expression
that no selected line shows. :func:`state` writes the answer in the asked unit and rounding ("65.4%", "$1,577
million", "0.83").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from generation.agent.arithmetic import SCALES
from generation.agent.gate import same_number

_PERCENT = re.compile(r"\bpercent|%|\bpct\b", re.IGNORECASE)
_RATIO = re.compile(
    r"\bratio\b|\bturnover\b|\btimes\b|\bdays\b|\bcycle\b|\bper share\b|\bdio\b|\bdso\b|\bdpo\b|\bccc\b|\bmultiple\b|"
    r"\breturn on\b|\broa\b|\broe\b",
    re.IGNORECASE,
)
_RATE = re.compile(r"\bmargin\b|\bgrowth\b|\brate\b", re.IGNORECASE)
_SCALE = re.compile(
    r"\b(?:usd|us\$|\$|dollars?)\s*(thousands?|millions?|billions?)\b|\bin (thousands|millions|billions)\b",
    re.IGNORECASE,
)
_DECIMALS = re.compile(r"\b(one|two|three|four|\d) decimal", re.IGNORECASE)
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4}
SMALL_CONSTANTS = (1.0, 2.0, 3.0, 4.0, 12.0, 100.0, 365.0)
"""Numbers an expression may use without a page showing them (halves, averages of up to four years, months,
percent, days in a year)."""
_NUM = re.compile(r"\d+(?:\.\d+)?")


@dataclass(frozen=True)
class AskedUnit:
    """What the question asks: ``kind`` (``percent``, ``ratio`` or ``amount``), ``scale`` for an amount
    (``thousand``, ``million``, ``billion`` or ``""``: as the page states it) and ``decimals`` (the rounding asked;
    2 when none)."""

    kind: str
    scale: str
    decimals: int


def asked_unit(question: str, page_scale: str = "") -> AskedUnit:
    """The unit ``question`` asks for (module doc); an amount's scale defaults to ``page_scale``."""
    m = _DECIMALS.search(question)
    decimals = (_WORDS.get(m.group(1).lower()) or int(m.group(1))) if m else 2
    if _PERCENT.search(question):
        return AskedUnit("percent", "", decimals)
    if _RATIO.search(question):
        return AskedUnit("ratio", "", decimals)
    if _RATE.search(question):
        return AskedUnit("percent", "", decimals)
    s = _SCALE.search(question)
    scale = (s.group(1) or s.group(2)).lower().rstrip("s") if s else page_scale
    return AskedUnit("amount", scale, decimals)


def rescale(value: float, scale_from: str, scale_to: str) -> float:
    """``value`` in ``scale_from`` (``""``: units) restated in ``scale_to``."""
    return value * SCALES.get(scale_from, 1.0) / SCALES.get(scale_to, 1.0)


def state(value: float, unit: AskedUnit) -> str:
    """The answer as the question asks it: ``"65.4%"``, ``"$1,577 million"``, ``"0.83"``."""
    if unit.kind == "percent":
        return f"{value:.{unit.decimals}f}%"
    if unit.kind == "ratio":
        return f"{value:.{unit.decimals}f}"
    digits = 0 if abs(value) >= 1000 or float(value).is_integer() else unit.decimals
    sign = "-" if value < 0 else ""
    return f"{sign}${abs(value):,.{digits}f}" + (f" {unit.scale}" if unit.scale else "")


def expression_numbers(expression: str) -> list[float]:
    """The numbers written in an arithmetic expression, in order."""
    return [float(x) for x in _NUM.findall(expression.replace(",", ""))]


def divides_amounts(expression: str) -> bool:
    """Whether the expression divides by something other than a small constant (a ratio of page numbers)."""
    for m in re.finditer(r"/\s*(\(?)\s*([\d.]+)?", expression.replace(",", "")):
        if m.group(1) or m.group(2) is None or float(m.group(2)) not in SMALL_CONSTANTS:
            return True
    return False


def unit_problems(expression: str, unit: AskedUnit, shown: Sequence[float], percent_cell: bool = False) -> list[str]:
    """Why an answer computed by ``expression`` is not in the asked unit or not traced (empty: it passes).

    Args:
        expression: the arithmetic over page numbers. unit: :func:`asked_unit`. shown: the numbers of the selected
            lines (as shown, sign dropped). percent_cell: the one operand is a percentage the page shows.
    """
    problems: list[str] = []
    untraced = [
        x
        for x in expression_numbers(expression)
        if x not in SMALL_CONSTANTS and not any(same_number(x, s) for s in shown)
    ]
    if untraced:
        problems.append("numbers no selected line shows: " + ", ".join(f"{x:g}" for x in untraced))
    ratio = divides_amounts(expression)
    if unit.kind == "amount" and ratio:
        problems.append("an amount was asked; the expression is a ratio of page numbers")
    if unit.kind in ("percent", "ratio") and not ratio and not percent_cell:
        problems.append(f"a {unit.kind} was asked; the expression is an amount (no division)")
    return problems
