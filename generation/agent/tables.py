"""The analyst agent's table tools: ``table_cell``, ``table_column`` and ``table_count`` over a question's table.

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.4 ("Visual Structure Decoder": tables read
into structured values before the agent computes, so that every operand is a value read from the source).
finkg's tables are already text: TAT-QA's layout, rows of cell strings with header rows on top. Header rows
and cell numbers are read exactly as the TAT-QA reader reads them (:mod:`retrieval.facts.tables`).

Scale: TAT-QA states a table's scale in its text or caption, not per cell. A cell's number is returned as
shown (``"$ 1,452.4"`` -> 1452.4) with the scale given by the caller, else the one a header or caption names
(``"(in millions)"``, ``"$'000"``), and its value in base units (1,452,400,000); a percentage cell stays a
percentage (``"12.5%"`` -> 12.5, unit ``%``, base value 0.125).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from generation.agent.arithmetic import SCALES
from generation.agent.results import ToolError, ToolResult, finite, tool_call
from retrieval.facts.tables import column_headers, header_rows, parse_numbers
from retrieval.text.overlap import content_words

YEAR = re.compile(r"\b(?:19|20)\d\d\b")
"""A four-digit year (1900-2099) as a whole word."""

Table = Sequence[Sequence[str]]
"""A table: rows of cell strings (TAT-QA's ``table.table``)."""

_SCALE_IN_TEXT = (
    (
        re.compile(r"\bin\s+billions?\b|[$€£¥]\s*bn\b|\bbillions\b|[$€£¥]\s*billions?\b|\busd\s*bn\b", re.IGNORECASE),
        "billion",
    ),
    (
        re.compile(
            r"\bin\s+millions?\b|\$\s*m\b|\$'?000,?000\b|\bmillions\b|€m\b|£m\b|[$€£¥]\s*millions?\b|\busd\s*m(?:illion)?\b|"
            r"\b(?:eur|gbp|rmb)\s*m\b",
            re.IGNORECASE,
        ),
        "million",
    ),
    (
        re.compile(
            r"\bin\s+thousands?\b|\$'?000\b|\bthousands\b|€'?000\b|£'?000\b|\$\s*thousand\b|\busd\s*['‘’]?000\b|[$€£][‘’]000\b",
            re.IGNORECASE,
        ),
        "thousand",
    ),
)


def _norm(text: str) -> str:
    return " ".join(str(text).lower().replace(":", " ").split())


def scale_named_in(text: str) -> str:
    """The scale a text names (``"(in millions)"``, ``"$'000"``): ``thousand``, ``million``, ``billion`` or ``""``;
    the largest when it names several."""
    for pattern, name in _SCALE_IN_TEXT:
        if pattern.search(text):
            return name
    return ""


def row_labels(table: Table | None) -> list[str]:
    """The first cell of each row of ``table`` (none for None): what the router compares a question's words with."""
    return [str(row[0]) for row in table or () if row]


def table_scale(table: Table) -> str:
    """The scale a table's header rows (captions included) name: ``thousand``, ``million``, ``billion`` or ``""``."""
    return scale_named_in(" ".join(c for r in table[: max(header_rows(table), 1)] for c in r))


def _check_table(table: Any) -> list[list[str]]:
    if not isinstance(table, list | tuple) or not table or not all(isinstance(r, list | tuple) for r in table):
        raise ToolError("the table must be a non-empty list of rows (lists of cell strings)")
    return [[str(c) for c in r] for r in table]


def _scale_of(rows: list[list[str]], scale: str | None) -> str:
    if scale is None:
        return table_scale(rows)
    s = scale.strip().lower()
    if s == "percent":
        return ""  # TAT-QA's answer scale "percent": the cells show their own % sign
    if s not in SCALES:
        raise ToolError(f"unknown scale {scale!r}: use thousand, million, billion or an empty string")
    return s.rstrip("s") if s.endswith("s") else s


def _find_row(rows: list[list[str]], row: str | int) -> int:
    start = header_rows(rows)
    if isinstance(row, int) and not isinstance(row, bool):
        if not start <= row < len(rows):
            raise ToolError(f"row {row} is outside the table body (rows {start}..{len(rows) - 1})")
        return row
    want = _norm(str(row))
    labels = [(i, _norm(rows[i][0]) if rows[i] else "") for i in range(start, len(rows))]
    exact = [i for i, lab in labels if lab == want]
    if exact:
        return exact[0]
    partial = [i for i, lab in labels if want and want in lab]
    if len(partial) == 1:
        return partial[0]
    names = ", ".join(repr(rows[i][0]) for i, lab in labels if lab)
    if partial:
        raise ToolError(f"row {row!r} is ambiguous: {', '.join(repr(rows[i][0]) for i in partial)}")
    raise ToolError(f"no row {row!r}; the rows are: {names}")


def _find_column(rows: list[list[str]], column: str | int) -> int:
    headers = column_headers(rows)
    if isinstance(column, int) and not isinstance(column, bool):
        if not 1 <= column < len(headers):
            raise ToolError(f"column {column} is outside the table (value columns 1..{len(headers) - 1})")
        return column
    want = _norm(str(column))
    exact = [c for c in range(1, len(headers)) if _norm(headers[c]) == want]
    if exact:
        return exact[0]
    partial = [c for c in range(1, len(headers)) if want and want in _norm(headers[c])]
    if len(partial) == 1:
        return partial[0]
    if partial:
        raise ToolError(f"column {column!r} is ambiguous: {', '.join(repr(headers[c]) for c in partial)}")
    raise ToolError(f"no column {column!r}; the columns are: {', '.join(repr(h) for h in headers[1:])}")


def _cell(rows: list[list[str]], r: int, c: int, scale: str) -> dict[str, Any]:
    text = rows[r][c].strip() if c < len(rows[r]) else ""
    numbers = parse_numbers(text)
    percent = "%" in text
    value = numbers[0] if len(numbers) == 1 else None
    base = None
    if value is not None:
        base = value / 100 if percent else value * SCALES[scale]
    return {
        "row": r,
        "column": c,
        "row_label": rows[r][0].strip() if rows[r] else "",
        "column_header": column_headers(rows)[c],
        "text": text,
        "value": value,
        "unit": "%" if percent else "",
        "scale": "" if percent else scale,
        "base_value": base,
    }


def table_cell(table: Table, row: str | int, column: str | int, scale: str | None = None) -> ToolResult:
    """One cell of ``table`` and its number.

    Args:
        table: rows of cell strings, header rows first. row: the row's first-cell label (case-insensitive,
            ``:`` ignored; a unique part of it will do) or its 0-based index in ``table``. column: the column's
            header (its header cells joined by spaces, e.g. ``"2019"``; a unique part of it will do) or its
            0-based index (1 and up: column 0 holds the row labels). scale: ``thousand``, ``million``,
            ``billion`` or ``""`` (TAT-QA's question scale); None: read it from the header rows.

    Returns:
        ``value``: the number the cell shows (``"(1,234)"`` -> -1234.0); ``detail``: ``text``, ``unit``
        (``%`` or ``""``), ``scale``, ``base_value`` (scale applied; a percentage as a fraction), row label and
        column header; ``numbers``: the shown value and the base value. An error result for an unknown or
        ambiguous row or column, or a cell that holds no single number (its text is in the message).
    """
    args = {"row": row, "column": column, "scale": scale}

    def body() -> ToolResult:
        rows = _check_table(table)
        s = _scale_of(rows, scale)
        cell = _cell(rows, _find_row(rows, row), _find_column(rows, column), s)
        if cell["value"] is None:
            raise ToolError(
                f"the cell at row {cell['row_label']!r}, column {cell['column_header']!r} holds no single number: {cell['text']!r}"
            )
        numbers = tuple(dict.fromkeys((cell["value"], cell["base_value"])))
        return ToolResult("table_cell", args, cell["value"], numbers, cell)

    return tool_call("table_cell", args, body)


def table_column(table: Table, column: str | int, scale: str | None = None) -> ToolResult:
    """Every body row's cell of one column of ``table`` (see :func:`table_cell` for ``column`` and ``scale``).

    Returns:
        ``value``: ``[{"row_label", "text", "value", "base_value"}, ...]`` in table order, section rows (only a
        first cell) left out, ``value`` None where a cell holds no single number; ``numbers``: the shown and base
        values of the numeric cells; ``detail``: ``column_header``, ``scale``. An error result for an unknown or
        ambiguous column.
    """
    args = {"column": column, "scale": scale}

    def body() -> ToolResult:
        rows = _check_table(table)
        s = _scale_of(rows, scale)
        c = _find_column(rows, column)
        cells = []
        numbers: list[float] = []
        for r in range(header_rows(rows), len(rows)):
            if not rows[r] or (rows[r][0].strip() and not any(x.strip() for x in rows[r][1:])):
                continue  # empty or a section row
            cell = _cell(rows, r, c, s)
            cells.append({k: cell[k] for k in ("row_label", "text", "value", "base_value")})
            if cell["value"] is not None:
                numbers += [cell["value"], cell["base_value"]]
        return ToolResult(
            "table_column",
            args,
            cells,
            tuple(dict.fromkeys(numbers)),
            {"column_header": column_headers(rows)[c], "scale": s},
        )

    return tool_call("table_column", args, body)


def _slug(text: str, words: int, year_first: bool = False) -> str:
    parts = re.findall(r"[a-z0-9]+", text.lower())
    years = [w for w in parts if YEAR.fullmatch(w)] if year_first else []
    kept = years[-1:] if years else [w for w in parts if w not in {"the", "of", "and", "in", "for", "at"}][:words]
    return "_".join(kept)


def cell_name(table: Table, value: float) -> str | None:
    """An operand name for ``value`` read from the body cell of ``table`` that states it (sign aside): the row
    label's first three words and the column header's year (else its first two words), lower case, joined by
    ``_`` (``"Revenue"`` under ``"2019"`` -> ``revenue_2019``; a leading digit gets ``v_``); None when no cell, or
    more than one cell with different names, states it."""
    rows = [[str(c) for c in r] for r in table]
    headers = column_headers(rows)
    names: set[str] = set()
    for r in range(header_rows(rows), len(rows)):
        for c in range(1, len(rows[r])):
            numbers = parse_numbers(rows[r][c])
            if len(numbers) == 1 and abs(abs(numbers[0]) - abs(value)) < 1e-9:
                name = "_".join(
                    p for p in (_slug(rows[r][0], 3), _slug(headers[c] if c < len(headers) else "", 2, True)) if p
                )
                names.add(f"v_{name}" if name[:1].isdigit() else name or f"column{c}")
    return names.pop() if len(names) == 1 else None


def match_row(table: Table, words: str, min_score: float = 90.0, max_unexplained: float = 0.25) -> int | None:
    """The index of the body row whose label the question's ``words`` name, or None when no label or more than
    one fits.

    An exact (case-insensitive) label first. Else a label that shares a content word with ``words`` (three
    letters or more, not a stop word) and leaves at most ``max_unexplained`` of those content words unexplained,
    a word being explained when the label, a header row or a section row (a row with only a label:
    ``"Revenue:"``) holds it (``"net sales from Americas"`` is the row ``Americas`` of a table headed ``Net
    Sales``; ``"Total services"`` is not the row ``Total`` of that table); among those, the best rapidfuzz
    ``token_set_ratio`` of at least ``min_score``, ties broken by ``token_sort_ratio`` (a tie on both: None)."""
    from rapidfuzz import fuzz

    rows = [[str(c) for c in r] for r in table]
    want = _norm(words)
    content = set(content_words(want))
    top = header_rows(rows)
    body = [(i, _norm(rows[i][0])) for i in range(top, len(rows)) if rows[i] and rows[i][0].strip()]
    exact = [i for i, label in body if label == want]
    if len(exact) == 1:
        return exact[0]
    sections = [r[0] for r in rows[top:] if r and r[0].strip() and not any(c.strip() for c in r[1:])]
    context = set(content_words(" ".join([c for r in rows[:top] for c in r] + sections)))
    scored = []
    for i, label in body:
        own = set(content_words(label))
        unexplained = content - own - context
        if content & own and len(unexplained) <= max_unexplained * len(content):
            scored.append((fuzz.token_set_ratio(want, label), fuzz.token_sort_ratio(want, label), i))
    scored.sort(reverse=True)
    if not scored or scored[0][0] < min_score or (len(scored) > 1 and scored[0][:2] == scored[1][:2]):
        return None
    return scored[0][2]


COMPARISONS = {
    ">": lambda x, t: x > t,
    ">=": lambda x, t: x >= t,
    "<": lambda x, t: x < t,
    "<=": lambda x, t: x <= t,
}
"""The comparisons :func:`table_count` counts with: a cell's base value against the threshold."""


def table_count(
    table: Table,
    row: str | int,
    op: str,
    threshold: float,
    scale: str | None = None,
    columns: str = "years",
    percent: bool = False,
) -> ToolResult:
    """How many cells of one row of ``table`` compare ``op`` with ``threshold``: "how many years did net income
    exceed $30,000 thousand?" is ``table_count(t, "Net income", ">", 30_000_000)``.

    Args:
        table, row, scale: as for :func:`table_cell`. op: ``>``, ``>=``, ``<`` or ``<=``. threshold: in base
            units (dollars with the scale applied, a percentage as a fraction: ``20%`` is 0.2).
        columns: ``years``: the value columns whose header names a year (1900-2099); ``all``: every value column.
        percent: compare the row's percentage cells (a threshold like ``20%``) instead of its amounts; cells of
            the other kind are left out, so that an amount is never compared with a percentage.

    Returns:
        ``value``: the count (a float, a whole number); ``numbers``: the count; ``detail``: ``row_label``, ``op``,
        ``threshold``, ``scale``, ``cells`` (``column_header``, ``text``, ``value`` as shown, ``base_value``, ``counted`` for each
        column compared) and ``counted_columns``. An error result for an unknown or ambiguous row, an unknown
        ``op`` or ``columns``, a non-finite threshold, no column to compare (none of the kind ``percent`` asks for),
        or a compared cell holding no single number (the count would be a guess).
    """
    args = {"row": row, "op": op, "threshold": threshold, "scale": scale, "columns": columns, "percent": percent}

    def body() -> ToolResult:
        if op not in COMPARISONS:
            raise ToolError(f"unknown comparison {op!r}: use one of {', '.join(COMPARISONS)}")
        if columns not in ("years", "all"):
            raise ToolError(f"unknown columns {columns!r}: use 'years' or 'all'")
        limit = finite(threshold, "threshold")
        rows = _check_table(table)
        s = _scale_of(rows, scale)
        r = _find_row(rows, row)
        headers = column_headers(rows)
        chosen = [c for c in range(1, len(headers)) if columns == "all" or YEAR.search(headers[c])]
        if not chosen:
            raise ToolError(
                f"no {'year ' if columns == 'years' else ''}column to compare; the columns are: "
                + ", ".join(repr(h) for h in headers[1:])
            )
        cells = []
        for c in chosen:
            cell = _cell(rows, r, c, s)
            if cell["base_value"] is None:
                raise ToolError(
                    f"the cell at row {cell['row_label']!r}, column {cell['column_header']!r} holds no single number: "
                    f"{cell['text']!r}"
                )
            if (cell["unit"] == "%") != percent:
                continue  # an amount is never compared with a percentage, nor a percentage with an amount
            counted = COMPARISONS[op](cell["base_value"], limit)
            cells.append({k: cell[k] for k in ("column_header", "text", "value", "base_value")} | {"counted": counted})
        if not cells:
            kind = "percentage" if percent else "amount"
            raise ToolError(f"row {rows[r][0].strip()!r} has no {kind} cell in the columns compared")
        count = float(sum(c["counted"] for c in cells))
        detail = {
            "row_label": rows[r][0].strip(),
            "op": op,
            "threshold": limit,
            "scale": s,
            "cells": cells,
            "counted_columns": [c["column_header"] for c in cells if c["counted"]],
        }
        return ToolResult("table_count", args, count, (count,), detail)

    return tool_call("table_count", args, body)


TABLE_CELL_SCHEMA: dict[str, Any] = {
    "description": "Read one cell of the question's table: its number as shown and in base units.",
    "type": "object",
    "properties": {
        "row": {"type": ["string", "integer"], "description": "row label (first cell) or row index"},
        "column": {"type": ["string", "integer"], "description": "column header (e.g. 2019) or column index"},
        "scale": {"type": "string", "description": "thousand, million, billion or empty; omit to read the caption"},
    },
    "required": ["row", "column"],
}
TABLE_COLUMN_SCHEMA: dict[str, Any] = {
    "description": "Read every row of one column of the question's table.",
    "type": "object",
    "properties": {
        "column": {"type": ["string", "integer"], "description": "column header (e.g. 2019) or column index"},
        "scale": {"type": "string", "description": "thousand, million, billion or empty; omit to read the caption"},
    },
    "required": ["column"],
}
TABLE_COUNT_SCHEMA: dict[str, Any] = {
    "description": "Count the year columns (or all columns) of one row whose value compares with a threshold.",
    "type": "object",
    "properties": {
        "row": {"type": ["string", "integer"], "description": "row label (first cell) or row index"},
        "op": {"type": "string", "enum": list(COMPARISONS), "description": "cell op threshold"},
        "threshold": {"type": "number", "description": "in base units: dollars, a percentage as a fraction"},
        "scale": {"type": "string", "description": "thousand, million, billion or empty; omit to read the caption"},
        "columns": {"type": "string", "enum": ["years", "all"], "description": "year columns (default) or all"},
    },
    "required": ["row", "op", "threshold"],
}
