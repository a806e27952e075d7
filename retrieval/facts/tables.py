"""Reading a financial table laid out as TAT-QA lays it out: rows of cell strings, header rows on top.

Shared by the TAT-QA reader (:mod:`ingest.datasets.tatqa`, which turns cells into facts) and the analyst
agent's table tools (:mod:`generation.agent.tables`), so both see the same header rows and the same numbers.
The rules (header rows, section rows, cell numbers) are described in :mod:`ingest.datasets.tatqa`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_YEARISH = re.compile(r"\b(?:FY|Q[1-4]\s*)?(?:19|20)\d{2}\b(?:\s*\(\w+\))?|\bQ[1-4]\b", re.IGNORECASE)
# a number with optional currency sign, minus or parentheses, thousands separators and percent sign
_CELL_NUMBER = re.compile(
    r"(?P<open>\()?\s*[$€£¥]?\s*(?<![\w.])(?P<sign>[-−–])?\s*[$€£¥]?\s*"
    r"(?P<num>\d[\d,]*(?:\.\d+)?|\.\d+)\s*(?P<pct>%)?\s*(?P<close>\))?"
)


def parse_numbers(cell: str) -> tuple[float, ...]:
    """The numbers a table cell states, in its units: ``"(1,234)"`` -> (-1234.0,), ``"$(2,780)"`` ->
    (-2780.0,), ``"12.5%"`` -> (12.5,), ``"-3.2 %"`` -> (-3.2,), ``"$ 1,452.4"`` -> (1452.4,),
    ``"—"`` or ``"N/A"`` -> (). A minus sign counts only at the start of a number (``"2018-2019"`` is
    2018 and 2019)."""
    out = []
    for m in _CELL_NUMBER.finditer(cell):
        value = float(m.group("num").replace(",", ""))
        if m.group("sign") or (m.group("open") and m.group("close")):
            value = -value
        out.append(value)
    return tuple(out)


def _is_numeric_value(cell: str) -> bool:
    """A value cell (``"$1,169"``, ``"4.5%"``, ``"(23)"``), not a column label (``"2019"``, ``"Q4 2019"``,
    ``"2019 €m"``, ``"2021-2022"``, ``"January 31, 2020"``, ``"% CHANGE"``)."""
    text = _YEARISH.sub(" ", cell.strip())
    return bool(parse_numbers(text)) and not re.search(r"[A-Za-z]{3,}", text)


def _is_header_like(row: Sequence[str]) -> bool:
    first, rest = (row[0].strip() if row else ""), [c.strip() for c in row[1:]]
    if first and not any(rest):
        return False  # a section row
    return not (first and any(_is_numeric_value(c) for c in rest))  # else a value row


def header_rows(rows: Sequence[Sequence[str]]) -> int:
    """How many leading rows of ``rows`` are column headers (captions above them included)."""
    n = 0
    while n < len(rows):
        row = rows[n]
        if row and row[0].strip() and not any(c.strip() for c in row[1:]):
            nxt = rows[n + 1] if n + 1 < len(rows) else None
            if nxt and _is_header_like(nxt) and any(c.strip() for c in nxt[1:]):
                n += 1  # a caption above the column headers ("Income statement expense")
                continue
            break  # a section row: the body has started
        if not _is_header_like(row):
            break
        n += 1
    return n


def column_headers(rows: Sequence[Sequence[str]]) -> list[str]:
    """Each column's header: its cells in the header rows (:func:`header_rows`) joined by spaces
    (``"Years Ended September 30, 2018"`` when a spanning caption sits above that column); one string per
    column of the widest row, ``""`` where a column has no header."""
    n_header = header_rows(rows)
    width = max((len(r) for r in rows), default=0)
    return [" ".join(r[c].strip() for r in rows[:n_header] if c < len(r) and r[c].strip()) for c in range(width)]
