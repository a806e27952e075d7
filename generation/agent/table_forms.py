"""Table questions in their commonest forms, answered from the table by rule, without an LLM.

Issue 44 item 3 ("for table questions the engine takes the better answerer per route, measured"). Half of
TAT-QA's arithmetic questions, and many of its span questions, are one of a few forms over one row of the
question's table and its year columns. Read by a rule, they need no language model:

- ``change``: "What was the change in <row> from 2018 to 2019?" (also *increase*, *decrease*,
  *increase/(decrease)*, *variance*, *between 2018 and 2019*, *in 2019 from 2018*): later year minus earlier
  year ("difference" is not read: TAT-QA's answers to it take either order);
- ``percentage change``: "What is the percentage change in <row> between 2018 and 2019?": (later - earlier) /
  earlier x 100, in percent (the earlier value's sign kept: TAT-QA divides by it as shown); on a row of
  percentages, "absolute percentage change" is the difference in points;
- ``average``: "What is the average <row> for 2018 and 2019?" (also "from 2015 to 2019" or "2017-2019": every
  year of the range; "2017, 2018 and 2019": the years listed);
- ``sum``: "What is the total <row> in 2018 and 2019?" (two years named: one year is a ``value``);
- ``value``: "What was the <row> in 2019?" (also "as at December 31, 2019", "for fiscal 2019"): the cell as the
  table shows it;
- ``which year``: "In which year was <row> higher?" / "Which year has the lowest <row>?": the year column whose
  cell is the largest (smallest); a tie is not answered;
- ``respective``: "What are the respective <row> in 2018 and 2019?": the two cells as the table shows them.

The row is found by :func:`generation.agent.tables.match_row` (one label, or none); a year by the one column
whose header names it. A percentage row's result is in percent; otherwise the answer's scale is the one the
table (captions included) or, failing that, the paragraphs name (:func:`generation.agent.questions.evidence_scale`),
except for per-share and ratio rows, which have none. Every operand is a ``table_cell`` call, the result a
``calculate`` call, and the answer passes the gate (:func:`generation.agent.gate.check_answer`) or is not given.
Anything the rule cannot place (no form, no row or more than one, a year without its one column, a cell without
one number) returns None and the question goes to the model.

Measured on the TAT-QA training half and the development sample (never on the test questions):
``python bench/tatqa_forms.py`` (``bench/results/tatqa-forms.json``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from generation.agent.arithmetic import calculate
from generation.agent.gate import check_answer
from generation.agent.loop import AgentAnswer, Step, format_result, table_evidence
from generation.agent.questions import evidence_scale
from generation.agent.results import ToolResult
from generation.agent.tables import YEAR, Table, match_row, table_cell
from retrieval.facts.tables import column_headers, parse_numbers

_Y = r"(?:fy ?|fiscal (?:year )?|year )?'?(?P<{}>(?:19|20)\d\d)"
_CHANGE = r"(?:change|increase|decrease|increase ?/ ?\(?decrease\)?|decrease ?/ ?\(?increase\)?|growth|variance)"
_TO = r"(?: (?:and|to) | ?[-–] ?)"
_SPAN = rf",? (?:from|between|in) {_Y.format('y1')}{_TO}{_Y.format('y2')}"
_BACK = rf",? (?:in|for) {_Y.format('y2')} (?:from|compared (?:to|with)|over|against|versus|vs\.?) {_Y.format('y1')}"
_YEARS = rf"'?(?P<y1>(?:19|20)\d\d)(?:, (?:19|20)\d\d)*,?{_TO}{_Y.format('y2')}"
"""Two or more years ("2018 and 2019", "2017-2019", "2017, 2018 and 2019"): the first and the last as ``y1``, ``y2``."""
_BIG = "larger|largest|higher|highest|greater|greatest|more|most|bigger|biggest"
_SMALL = "lower|lowest|smaller|smallest|less|least|fewer|fewest"
_OF = r"(?:(?:amount|value|balance|number) (?:of|for) )?(?:the )?"

FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("percentage change", re.compile(rf"(?:percentage|percent|%) {_CHANGE}(?: rate)? (?:in|of) (?:the )?(?P<row>.+?){_SPAN}")),
    ("change", re.compile(rf"{_CHANGE} (?:in|of) (?:the )?(?P<row>.+?){_SPAN}")),
    ("percentage change", re.compile(rf"(?:percentage|percent|%) {_CHANGE}(?: rate)? (?:in|of) (?:the )?(?P<row>.+?){_BACK}$")),
    ("change", re.compile(rf"{_CHANGE} (?:in|of) (?:the )?(?P<row>.+?){_BACK}$")),
    (
        "sum",
        re.compile(
            r"^what (?:is|was) the (?:sum|total)(?: (?:value|amount|number))?(?: of)? (?:the )?(?P<row>.+?),? "
            r"(?:in|for|of|as of|as at|at the end of|between|from)? ?(?:both )?(?:the )?(?:fiscal (?:years? )?|years? )?"
            rf"{_YEARS}(?: altogether| combined)?$"
        ),
    ),
    (
        "average",
        re.compile(
            r"(?:average|mean) (?:of |value of )?(?:the )?(?P<row>.+?),? "
            r"(?:in|for|between|from|across|over|during|of)? ?(?:the )?(?:years? |fy ?|fiscal (?:years? )?)?" + _YEARS
        ),
    ),
    ("which year", re.compile(rf"^(?:in )?which year (?:was|is|were|did|had) (?:the )?{_OF}(?P<row>.+?) (?:the )?(?P<dir>{_BIG}|{_SMALL})$")),
    ("which year", re.compile(rf"^(?:in )?which year (?:has|had|was|is) the (?P<dir>{_BIG}|{_SMALL}) {_OF}(?P<row>.+?)$")),
    (
        "value",
        re.compile(
            r"^(?:what|how much) (?:is|was|were|are) (?:the )?(?:(?:amount|value|balance) (?:of|for) )?(?:the )?"
            r"(?P<row>.+?),? (?:in|for|as at|as of|at|during) (?:the )?(?:(?:fiscal )?years? (?:ended |ending )?|fy ?|fiscal )?"
            r"(?:(?:[a-z]+ \d{1,2},? )|(?:\d{1,2} [a-z]+,? ))?(?P<y1>(?:19|20)\d\d)$"
        ),
    ),
    (
        "respective",
        re.compile(
            r"^what (?:are|were) the respective (?:values? of |amounts? of )?(?:the )?(?P<row>.+?) "
            r"(?:in|for|as at|as of|at) (?:the )?(?:years? |fiscal (?:years? )?)?"
            r"(?P<y1>(?:19|20)\d\d),? and (?:fiscal )?(?P<y2>(?:19|20)\d\d)(?: respectively)?$"
        ),
    ),
)  # fmt: skip
"""The forms, tried in this order on the lower-cased question without its final ``?``: each names the row
(``row``) and its years (``y1``, ``y2``) or direction (``dir``)."""

_NO_SCALE = re.compile(r"\bper (?:\w+ )?(?:share|unit)\b|\bratio\b|\(\$\)")
_PERCENT_WORDS = re.compile(r"percent|%|proportion|share of")


@dataclass(frozen=True)
class TableForm:
    """A question read as one of :data:`FORMS`: ``form`` (``change``, ``percentage change``, ``average``, ``sum``,
    ``value``, ``which year``, ``respective``), the row as the question names it, the years it names (in its order; empty for
    ``which year``), ``largest`` (``which year``: the largest cell is asked, else the smallest) and ``absolute``
    (the question says "absolute")."""

    form: str
    row: str
    years: tuple[int, ...]
    largest: bool = True
    absolute: bool = False


def read_form(question: str) -> TableForm | None:
    """The question's form (:class:`TableForm`), or None when it is none of :data:`FORMS`."""
    text = " ".join(question.lower().split()).rstrip("?").strip()
    for form, pattern in FORMS:
        m = pattern.search(text)
        if not m:
            continue
        names = m.groupdict()
        if form == "which year":
            return TableForm(form, names["row"], (), largest=bool(re.fullmatch(_BIG, names["dir"])))
        if form == "value":
            return TableForm(form, names["row"], (int(names["y1"]),))
        years = (int(names["y1"]), int(names["y2"]))
        if form in ("average", "sum"):
            rest = text[m.start() :]
            listed = tuple(int(y) for y in YEAR.findall(rest))
            if len(listed) > 2:
                years = listed
            elif years[1] - years[0] > 1 and re.search(rf"\b(?:from|between)\b|{years[0]} ?[-–] ?'?{years[1]}", rest):
                years = tuple(range(years[0], years[1] + 1))
        return TableForm(form, names["row"], years, absolute="absolute" in text)
    return None


def year_column(rows: Table, year: int) -> int | None:
    """The one value column whose header names ``year``, or None (no column, or several)."""
    headers = column_headers([list(r) for r in rows])
    found = [c for c in range(1, len(headers)) if str(year) in YEAR.findall(headers[c])]
    return found[0] if len(found) == 1 else None


def _year_columns(rows: Table) -> list[tuple[int, int]]:
    headers = column_headers([list(r) for r in rows])
    named = [(YEAR.findall(headers[c]), c) for c in range(1, len(headers))]
    out = [(int(ys[0]), c) for ys, c in named if len(ys) == 1]
    return out if len({y for y, _ in out}) == len(out) else []


def _scale(question: str, rows: Table, paragraphs: Sequence[str], label: str, percent: bool) -> str:
    if percent:
        return "percent"
    if _NO_SCALE.search(label):
        return ""
    return evidence_scale(_PERCENT_WORDS.sub("", question), [" ".join(r) for r in rows], paragraphs)


def _gated(
    answer: str | list[str],
    answer_type: str,
    results: list[ToolResult],
    rows: Table,
    derivation: dict[str, Any],
    scale: str,
) -> tuple[AgentAnswer, str] | None:
    steps = [Step(i, "tool", r.args, r.as_dict()) for i, r in enumerate(results)]
    verdict = check_answer(answer, answer_type, results, table_evidence(rows))
    reason = None if verdict.passed else "; ".join(verdict.reasons)
    steps.append(Step(len(steps), "gate", answer, verdict.as_dict(), reason))
    if not verdict.passed:
        return None
    text = answer if isinstance(answer, str) else " | ".join(answer)
    return AgentAnswer(text, "answered", [], verdict, derivation, steps), scale


def answer_table_form(
    question: str, table: Table | None, paragraphs: Sequence[str] = ()
) -> tuple[AgentAnswer, str] | None:
    """Answer ``question`` from ``table`` by its form (see the module doc), or None when the rule does not apply.

    Args:
        question: the question as asked. table: the question's table, rows of cell strings (None: no table).
        paragraphs: the context's paragraph texts (read for the scale when the table names none).

    Returns:
        ``(answer, scale)``: the gated :class:`generation.agent.loop.AgentAnswer` (its ``derivation`` holds the
        ``expression``, the ``operands`` named ``y<year>`` and the ``result`` for a computed answer; its steps the
        ``table_cell`` and ``calculate`` calls and the gate) and the answer's scale (``percent``, ``thousand``,
        ``million``, ``billion`` or ``""``). A ``respective`` answer is the cells joined by `` | ``.
    """
    form = read_form(question)
    if form is None or not table:
        return None
    rows = [[str(c) for c in r] for r in table]
    r = match_row(rows, form.row)
    if r is None:
        return None
    if form.form == "which year":
        return _which_year(form, rows, r)
    columns = [year_column(rows, y) for y in form.years]
    if any(c is None for c in columns) or len(set(columns)) != len(columns):
        return None
    texts = [rows[r][c].strip() if c is not None and c < len(rows[r]) else "" for c in columns]
    if any(len(parse_numbers(t)) != 1 for t in texts):
        return None
    percent = any("%" in t for t in texts)
    if _PERCENT_WORDS.search(form.row) and not percent:
        return None  # the question asks for a percentage the row's cells do not show (another column holds it)
    scale = _scale(question, rows, paragraphs, f"{rows[r][0]} {form.row}".lower(), percent)
    if form.form == "respective":
        return _gated(texts, "multi-span", [], rows, {}, "" if percent else scale)
    if form.form == "value":
        return _gated(texts[0], "span", [], rows, {}, "" if percent else scale)
    cells = [table_cell(rows, r, c, "") for c in columns if c is not None]
    operands = {f"y{y}": float(cell.value) for y, cell in zip(form.years, cells, strict=True)}
    first, last = f"y{min(form.years)}", f"y{max(form.years)}"
    if form.form == "average":
        expression = f"({' + '.join(operands)}) / {len(operands)}"
    elif form.form == "sum":
        expression = " + ".join(operands)
    elif form.form == "change" or (form.absolute and percent):
        expression = f"{last} - {first}"
        scale = "percent" if percent else scale
    else:
        if operands[first] == 0:
            return None
        expression, scale = f"({last} - {first}) / {first} * 100", "percent"
    calc = calculate(expression, operands)
    if not calc.ok:
        return None
    result = float(calc.value)
    derivation = {"operands": operands, "expression": expression, "result": result}
    return _gated(format_result(result), "arithmetic", [*cells, calc], rows, derivation, scale)


def _which_year(form: TableForm, rows: Table, r: int) -> tuple[AgentAnswer, str] | None:
    columns = _year_columns(rows)
    if len(columns) < 2:
        return None
    cells = [table_cell(rows, r, c, "") for _, c in columns]
    if not all(cell.ok for cell in cells):
        return None
    ranked = sorted((float(cell.value), y) for cell, (y, _) in zip(cells, columns, strict=True))
    if ranked[0][0] == ranked[1][0] or ranked[-1][0] == ranked[-2][0]:
        return None
    year = ranked[-1][1] if form.largest else ranked[0][1]
    return _gated(str(year), "span", cells, rows, {}, "")
