"""Count questions answered by a table tool: "how many years did net income exceed $30,000 thousand?".

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.4 (arithmetic decoupled from generation and run by
deterministic tools; the Answer Consolidation Gate as the only way out). A question of this form
(:func:`generation.agent.questions.threshold_count`) names a row and a threshold; the row is found in the question's
table (:func:`generation.agent.tables.match_row`) and :func:`generation.agent.tables.table_count` counts its year
columns past the threshold. No LLM is called. The count goes through the gate as a ``count`` answer (a whole
number a tool produced). When the question has another form, the table no row that fits or a compared cell no
number, the route answers None and the question goes to the LLM routes as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from generation.agent.arithmetic import SCALES
from generation.agent.gate import check_answer
from generation.agent.loop import AgentAnswer, Step, format_result, table_evidence
from generation.agent.questions import YEAR, threshold_count
from generation.agent.tables import Table, match_row, scale_named_in, table_count, table_scale


def answer_count(question: str, table: Table | None, paragraphs: Sequence[str] = ()) -> AgentAnswer | None:
    """Answer a threshold-count question from ``table`` (rows of cell strings), or None (see the module doc).

    The table's cells are read in the scale its header rows name, else the one ``paragraphs`` (the context's
    text, where TAT-QA often says "in thousands") name, else the one the question's amount is written in
    (``"$30,000 thousand"``): TAT-QA writes a question's amount in its table's scale.

    Returns:
        :class:`AgentAnswer` with the count (``"2"``), the steps (the ``table_count`` call and the gate) and the
        derivation (:func:`count_derivation`, with its ``result``); or None when the route does not apply.
    """
    ask = threshold_count(question)
    if ask is None or not table:
        return None
    row = match_row(table, ask.subject)
    if row is None:
        return None
    scale = table_scale(table) or scale_named_in(" ".join(paragraphs)) or ask.scale
    got = table_count(table, row, ask.op, ask.threshold, scale, percent=ask.percent)
    if not got.ok:
        return None
    d = got.detail
    steps = [Step(0, "tool", got.args, got.as_dict())]
    answer = format_result(float(got.value))
    verdict = check_answer(answer, "count", [got], table_evidence(table))
    steps.append(Step(1, "gate", answer, verdict.as_dict(), None if verdict.passed else "; ".join(verdict.reasons)))
    if not verdict.passed:
        return AgentAnswer(None, "could not verify", list(verdict.reasons), verdict, steps=steps)
    derivation = count_derivation(d, ask.threshold, ask.percent)
    derivation["result"] = float(got.value)
    return AgentAnswer(answer, "answered", [], verdict, derivation, steps)


def count_derivation(detail: dict[str, Any], threshold: float, percent: bool) -> dict[str, Any]:
    """A ``table_count`` result as a derivation a reader can re-evaluate: ``operands`` the compared cells as the
    table shows them, named by their column's year (``y2019``; ``c1``, ``c2``... for a column without one), and
    ``expression`` the sum of one comparison per cell with the threshold in the table's scale (a percentage in
    percent): ``(y2019 > 5000) + (y2018 > 5000)``. ``detail`` is the tool's detail; ``threshold`` in base
    units."""
    shown = threshold * 100 if percent else threshold / SCALES[detail["scale"]]
    operands: dict[str, float] = {}
    for i, cell in enumerate(detail["cells"], 1):
        years = YEAR.findall(cell["column_header"])
        base = f"y{years[-1]}" if years else f"c{i}"
        name, k = base, 2
        while name in operands:
            name, k = f"{base}_{k}", k + 1
        operands[name] = float(cell["value"])
    expression = " + ".join(f"({name} {detail['op']} {shown:.15g})" for name in operands)
    return {"operands": operands, "expression": expression, "row": detail["row_label"]}
