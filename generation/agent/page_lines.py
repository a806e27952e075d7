"""A filing page's text read into lines, and the few lines a question needs (issue 46 item 4, line selection).

A page is the text a PDF or HTML extract gives of one page of a 10-K / 10-Q (FinanceBench's
``evidence_text_full_page``): statement rows broken over several lines (``"Purchases of property, plant and
equipment (PP&E)"``, then ``"(1,577)"``, ``"(1,373)"``...), ``$`` signs on lines of their own, year headers as
lines (``"2018"``, ``"2017"``) and prose. :func:`read_page` rebuilds it as :class:`PageLine` objects:

- a **row**: a label followed by its numbers (on its own line or the lines after it), the cells as shown;
- the **year header**: the first run of two or more year-only lines (or one line of years), which names the
  columns of the rows that have as many numbers as it has years;
- a **sentence** of the prose that holds a number;

and the page's scale (``"(Millions)"``, ``"in millions"``: :func:`generation.agent.tables.scale_named_in`).

:func:`select_lines` keeps the rows whose label matches a line item the question names (:data:`LINE_ITEMS`: the
standard statement items and the labels filings give them, compared by rapidfuzz ``ratio`` with spaces ignored), then the
rows and sentences sharing most of the question's content words (:func:`retrieval.facts.labels.content_words`),
at most ``k`` lines: what is put in front of the model instead of the page.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from generation.agent.tables import YEAR, Table, scale_named_in
from retrieval.facts.labels import content_words
from retrieval.facts.tables import parse_numbers

_CELL = re.compile(r"^\(?-?\$?\s*\(?\d[\d,]*(?:\.\d+)?\)?%?\)?$|^[—–-]+$")
_YEAR_ONLY = re.compile(
    r"^(?:(?:(?:at |as of )?[a-z]{3,9}\.? \d{1,2}, ?|fiscal |fy ?)?(?:19|20)\d\d\s*)+$", re.IGNORECASE
)
_MONTH_DAY = re.compile(r"^[A-Za-z]{3,9}\.? \d{1,2},?$")
_SENTENCE = re.compile(r"(?<=[.;])\s+(?=[A-Z(])")

LINE_ITEMS: dict[str, tuple[str, tuple[str, ...]]] = {
    "revenue": (
        r"\brevenues?\b|\bnet sales\b|\bsales\b|\bturnover ratio\b|\bdso\b",
        ("total revenues", "net revenues", "revenues", "net sales", "total net sales", "revenue", "net revenue"),
    ),
    "cost of revenue": (
        r"\bcogs\b|\bcost of (?:goods )?(?:sold|sales|revenues?)\b|\binventory turnover\b|\bdio\b|\bdpo\b",
        (
            "cost of sales",
            "total cost of sales",
            "cost of goods sold",
            "cost of revenue",
            "total cost of revenue",
            "cost of products sold",
        ),
    ),
    "operating income": (
        r"\boperating (?:income|profit)\b|\bebit(?:da|dar)?\b|\boperating margin\b",
        ("operating income", "income from operations", "operating profit", "operating income (loss)"),
    ),
    "net income": (
        r"\bnet (?:income|earnings|profit)\b|\breturn on (?:assets|equity)\b|\broa\b|\broe\b|\bpayout\b",
        ("net income", "net earnings", "consolidated net income", "net income (loss)", "net earnings attributable to"),
    ),
    "depreciation and amortization": (
        r"\bdepreciation\b|\bamortization\b|\bd&a\b|\bebitda\b",
        ("depreciation and amortization", "depreciation, depletion and amortization", "depreciation & amortization"),
    ),
    "capital expenditure": (
        r"\bcapital expenditures?\b|\bcapex\b|\bcapital spending\b|\bfree cash flow\b|\bfcf\b",
        (
            "purchases of property, plant and equipment",
            "capital expenditures",
            "capital spending",
            "additions to property, plant and equipment",
            "purchases of property and equipment",
            "payments for acquisition of property, plant and equipment",
            "purchases of land, buildings, and equipment",
            "capital expenditures, net",
        ),
    ),
    "cash from operations": (
        r"\bcash (?:flows? )?(?:from|provided by) operati\w*|\boperating cash flows?\b|\bcash from operations\b|"
        r"\bfree cash flow\b|\bfcf\b",
        (
            "net cash provided by operating activities",
            "net cash provided by (used in) operating activities",
            "cash provided by operations",
            "net cash from operating activities",
            "cash flows from operating activities",
        ),
    ),
    "total assets": (r"\btotal assets\b|\breturn on assets\b|\broa\b|\basset turnover\b", ("total assets",)),
    "current assets": (r"\bcurrent assets\b|\bworking capital\b|\bcurrent ratio\b", ("total current assets",)),
    "current liabilities": (
        r"\bcurrent liabilities\b|\bworking capital\b|\bcurrent ratio\b|\boperating cash flow ratio\b",
        ("total current liabilities",),
    ),
    "inventory": (r"\binventor(?:y|ies)\b|\bdio\b", ("inventories", "inventory", "merchandise inventories")),
    "receivables": (r"\breceivables?\b|\bdso\b", ("accounts receivable", "receivables", "accounts receivable, net")),
    "payables": (r"\bpayables?\b|\bdpo\b", ("accounts payable",)),
    "property, plant and equipment": (
        r"\bpp&e\b|\bproperty,? plant\b|\bfixed asset",
        ("property, plant and equipment, net", "property and equipment, net", "net property, plant and equipment"),
    ),
    "dividends": (r"\bdividends?\b", ("dividends paid", "cash dividends paid", "dividends")),
    "restructuring": (r"\brestructuring\b", ("restructuring", "restructuring charges", "restructuring costs")),
}
"""Statement line items a question may name: item -> (what in a question names it, a regex on the lower-cased
question; the labels filings give its row). Standard statement captions (income statement, balance sheet, cash
flow statement), not any one company's."""

LABEL_MATCH = 85.0
"""The least :func:`label_score` (0-100) of a row label and an item's label for the row to be the item's."""


LABEL_CHARS = 80
SENTENCE_CHARS = 240
"""A row label and a sentence are cut to these many characters before the model (a PDF extract can run a column
of labels into one line)."""


def plain(cell: str) -> str:
    """A cell as a plain signed number (``"(1,577)"`` -> ``"-1577"``, ``"12.5%"`` -> ``"12.5%"``); a cell without
    one number as shown."""
    numbers = parse_numbers(cell)
    if len(numbers) != 1:
        return cell
    return f"{numbers[0]:.12g}" + ("%" if "%" in cell else "")


@dataclass(frozen=True)
class PageLine:
    """One line of a page as the reader shows it.

    Attributes:
        page: the page's id (a FinanceBench ``"<doc>#p<n>"`` or a graph Chunk id). n: its position on the page.
        kind: ``row``, ``years`` (the year header) or ``sentence``. label: a row's label (a sentence's text).
        cells: a row's numbers as shown (``"(1,577)"``), in column order; the years for ``years``.
        years: the year of each cell where the page's year header names the row's columns (else empty).
    """

    page: str
    n: int
    kind: str
    label: str
    cells: tuple[str, ...] = ()
    years: tuple[int, ...] = ()

    @property
    def text(self) -> str:
        """The line as put in front of the model, a row's cells as plain signed numbers: ``label | 2018: -1577 |
        2017: -1373`` (``"(1,577)"`` shown as -1577, so that the model copies the sign and no comma)."""
        if self.kind != "row":
            return self.label[:SENTENCE_CHARS] if self.kind == "sentence" else "years | " + " | ".join(self.cells)
        cells, label = [plain(c) for c in self.cells], self.label[:LABEL_CHARS]
        if self.years:
            return " | ".join([label, *(f"{y}: {c}" for y, c in zip(self.years, cells, strict=True))])
        return " | ".join([label, *cells])

    def value(self, year: int) -> float | None:
        """The row's number in ``year``'s column (``"(1,577)"`` -> -1577.0), or None (no such column)."""
        if year not in self.years:
            return None
        numbers = parse_numbers(self.cells[self.years.index(year)])
        return numbers[0] if len(numbers) == 1 else None


@dataclass(frozen=True)
class Page:
    """A page read by :func:`read_page`: ``id``, its ``lines`` in page order, the ``years`` of its year header
    (empty: none) and the ``scale`` it names (``thousand``, ``million``, ``billion`` or ``""``)."""

    id: str
    lines: tuple[PageLine, ...]
    years: tuple[int, ...]
    scale: str


def _split_cells(line: str) -> tuple[str, list[str]]:
    tokens = line.replace("$", " ").split()
    cells: list[str] = []
    while tokens and _CELL.match(tokens[-1]):
        cells.insert(0, tokens.pop())
    return " ".join(tokens), cells


def read_page(page_id: str, text: str) -> Page:
    """The page's rows, year header and sentences (module doc). Never raises; a page of prose has no rows."""
    raw = [" ".join(s.split()) for s in text.splitlines()]
    raw = [s for s in raw if s and s != "$"]
    years: tuple[int, ...] = ()
    rows: list[tuple[int, str, list[str]]] = []
    prose: list[tuple[int, str]] = []
    run: list[int] = []
    for n, line in enumerate(raw):
        if _YEAR_ONLY.match(line):
            run += [int(y) for y in YEAR.findall(line)]
            continue
        if _MONTH_DAY.match(line):
            continue
        if len(run) >= 2 and not years and len(set(run)) == len(run):
            years = tuple(run)
        run = []
        label, cells = _split_cells(line)
        if not label and cells and rows:
            rows[-1][2].extend(cells)
        elif cells:
            rows.append((n, label, cells))
        elif len(label) > 60 or re.search(r"\d", label):
            prose.append((n, label))
        else:
            rows.append((n, label, []))
    lines: list[PageLine] = []
    if years:
        lines.append(PageLine(page_id, -1, "years", "years", tuple(str(y) for y in years)))
    for n, label, cells in rows:
        if cells:
            named = years if len(cells) == len(years) else ()
            lines.append(PageLine(page_id, n, "row", label.rstrip(":"), tuple(cells), named))
    text_prose = " ".join(s for _, s in prose)
    for i, sentence in enumerate(_SENTENCE.split(text_prose)):
        if re.search(r"\d", sentence) and len(sentence) > 20:
            lines.append(PageLine(page_id, 10_000 + i, "sentence", sentence.strip()))
    spaced = re.sub(r"(?i)\bin(thousands|millions|billions)", r"in \1", text)
    return Page(page_id, tuple(lines), years, scale_named_in(" ".join(raw[:12])) or scale_named_in(spaced))


def asked_items(question: str) -> list[str]:
    """The line items of :data:`LINE_ITEMS` the question names, in catalog order."""
    q = question.lower()
    return [item for item, (pattern, _) in LINE_ITEMS.items() if re.search(pattern, q)]


def _squash(text: str) -> str:
    return re.sub(r"[^a-z&]", "", text.lower())


def label_score(label: str, alias: str) -> float:
    """How well a row ``label`` matches an item's ``alias`` (0-100), spaces and punctuation ignored (PDF text runs
    words together: ``"Operatingincome"``): rapidfuzz ``ratio``, or 95 less 0.2 a character for a label that
    starts with the alias and says more (``"Net income attributable to ..."``)."""
    a, b = _squash(label), _squash(alias)
    score = fuzz.ratio(a, b)
    if b and a.startswith(b):
        score = max(score, 95.0 - 0.2 * (len(a) - len(b)))
    return score


def item_rows(item: str, pages: Sequence[Page]) -> list[PageLine]:
    """The rows of ``pages`` whose label matches ``item``'s labels (:func:`label_score` at least
    :data:`LABEL_MATCH`), best match first (ties: page order)."""
    labels = LINE_ITEMS[item][1]
    scored: list[tuple[float, int, PageLine]] = []
    for i, line in enumerate(line for p in pages for line in p.lines if line.kind == "row"):
        best = max(label_score(line.label, a) for a in labels)
        if best >= LABEL_MATCH:
            scored.append((best, i, line))
    return [line for _, _, line in sorted(scored, key=lambda t: (-t[0], t[1]))]


def select_lines(question: str, pages: Sequence[Page], k: int = 8) -> list[PageLine]:
    """The lines of ``pages`` the question needs, at most ``k``, in page order: each page's year header, the two
    best rows of each line item the question names (:func:`item_rows`), then rows and sentences by the share of
    the question's content words they hold (at least two words)."""
    chosen: dict[tuple[str, int], PageLine] = {}
    for item in asked_items(question):
        for line in item_rows(item, pages)[:2]:
            chosen.setdefault((line.page, line.n), line)
    words = content_words(question)
    ranked: list[tuple[int, int, PageLine]] = []
    for i, line in enumerate(line for p in pages for line in p.lines if line.kind != "years"):
        shared = len(words & content_words(line.label))
        if shared >= 2:
            ranked.append((shared, i, line))
    for _, _, line in sorted(ranked, key=lambda t: (-t[0], t[1])):
        if len(chosen) >= k:
            break
        chosen.setdefault((line.page, line.n), line)
    out = [line for p in pages for line in p.lines if line.kind == "years" and any(c[0] == p.id for c in chosen)]
    order = {p.id: i for i, p in enumerate(pages)}
    return out + sorted(chosen.values(), key=lambda x: (order[x.page], x.n))


def as_table(page: Page, rows: Sequence[PageLine]) -> Table:
    """``rows`` of ``page`` with year columns as a table (header ``["", "2018", ...]``, then one row per line):
    the shape :mod:`generation.agent.tables` reads."""
    return [["", *(str(y) for y in page.years)], *([r.label, *r.cells] for r in rows if r.years == page.years)]
