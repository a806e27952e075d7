"""SEC filing text (10-K, 10-Q) from Markdown or HTML / inline XBRL, as clean text by section.

Both readers turn the file into *blocks* (``heading``, ``para``, ``row``) and share
:func:`sections_from_blocks`:

- **Markdown**: ATX (``#``) and setext headings, and paragraphs that are bold only, are headings;
  HTML tags left in the Markdown (``<div align='center'>``) are removed and entities unescaped;
  a table row (``| a | b |``) is one ``row`` block; alignment rows are dropped.
- **HTML** (lxml): ``script``, ``style``, ``head``, ``noscript``, ``template``, the inline XBRL
  header (``ix:header``) and every element hidden with ``display:none`` are dropped before any
  text is taken; ``h1``-``h6`` are headings; block elements (``p``, ``div``, ``li``, ``br`` ...)
  end a paragraph; each table row is one ``row`` block. Inline XBRL tags (``ix:nonFraction``)
  keep their visible text.
- **Tables flattened to lines**: a row's non-empty cells joined with `` | ``; a cell holding only
  ``$`` is joined to the next cell and one holding only ``%`` or ``)`` to the previous one
  (``$ | 61,564`` becomes ``$61,564``).
- **Sections**: a heading block, or a paragraph that is an SEC part or item caption
  (``PART I — FINANCIAL INFORMATION``, ``Item 2. Management's Discussion ...``), starts a section;
  titles nest (``PART I — FINANCIAL INFORMATION / Item 2. Management's ...``). Text before the
  first heading is the section ``cover``. Rows never start a section (a table of contents lists
  the items too). Running page footers (``Apple Inc. | Q3 2024 Form 10-Q | 13``), bare page
  numbers and ``Table of Contents`` links are dropped.

Availability. A filing is public at its EDGAR **acceptance time**: give it (``accepted``, the
CLI's ``--accepted``) and it is used as is (``availability_basis`` ``accepted``). Without it, the
period end alone would date the text 4 to 13 weeks before anyone could read it, and a backtest
would use it early. So the reader takes the **latest regular filing deadline** for the form and
the filer category the cover page declares (10-Q: 40 days after the period for large accelerated
and accelerated filers, 45 otherwise; 10-K: 60, 75, 90 days; unknown category: the longest), at
17:30 America/New_York (EDGAR's cut-off for a filing date), moved from a weekend to the Monday,
and marks it ``available_at_approx`` (basis ``filing-deadline-estimate``): never before the true
acceptance of a filing made on time, and flagged. Late filings (Form 12b-25) can be later still:
give ``--accepted`` for those. Other forms, or no period found, need ``--accepted`` (an error
says so).

Metadata (form, period end, filer category, company name, ticker) come from the inline XBRL
``dei:`` facts where the file has them (read before the hidden header is dropped), else from the
cover page text.
"""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Iterable
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from ingest.text.documents import ReadResult, TextDocument, TextFormatError, decode, iso_utc, read_bytes, sha256_hex

SOURCE = "sec-edgar"
NEW_YORK = ZoneInfo("America/New_York")
EDGAR_CUTOFF = time(17, 30)
FILER_CATEGORIES = ("Large accelerated filer", "Accelerated filer", "Non-accelerated filer")
DEADLINE_DAYS: dict[str, dict[str | None, int]] = {
    "10-Q": {"Large accelerated filer": 40, "Accelerated filer": 40, "Non-accelerated filer": 45, None: 45},
    "10-K": {"Large accelerated filer": 60, "Accelerated filer": 75, "Non-accelerated filer": 90, None: 90},
}
"""Days after the period end by form and filer category (SEC Release 33-8644, in force since 2006)."""

PART = re.compile(r"^part\s+(?:i{1,3}|iv)\b", re.I)
ITEM = re.compile(r"^item\s+\d{1,2}[a-c]?\s*[.:]", re.I)
PAGE_FOOTER = re.compile(r"^[^|]{1,100}\|[^|]{1,100}\|\s*\d{1,4}$")
NOISE = re.compile(r"^(?:\d{1,4}|table of contents|index|[\W_]+)$", re.I)
ATX = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
SETEXT = re.compile(r"^(=+|-+)\s*$")
BOLD_ONLY = re.compile(r"^(\*\*|__)(.+?)\1$")
ALIGN_ROW = re.compile(r"^\|?[\s:|-]+\|?$")
TAG = re.compile(r"<[^>]+>")
FORM_TEXT = re.compile(r"\bFORM\s+(10-K|10-Q)\b", re.I)
PERIOD_TEXT = re.compile(r"(?:quarterly period|fiscal year|period)\s+ended\s+([A-Z][a-z]+\.?\s+\d{1,2},?\s+\d{4})")
REGISTRANT_TEXT = re.compile(r"(?:^|\n)([^\n|]{2,120})\n+\(Exact name of registrant", re.I)
TICKER_ROW = re.compile(
    r"^[^|\n]+\|\s*([A-Z]{1,5}(?:\.[A-Z])?)\s*\|[^\n]*(?:Nasdaq|New York Stock Exchange|NYSE)", re.M
)
HIDDEN = re.compile(r"display\s*:\s*none", re.I)
DROP_TAGS = {"script", "style", "head", "noscript", "template", "ix:header", "title"}
BLOCK_TAGS = {
    "p",
    "div",
    "li",
    "ul",
    "ol",
    "section",
    "article",
    "blockquote",
    "pre",
    "center",
    "hr",
    "body",
    "html",
    "dl",
    "dt",
    "dd",
    "form",
    "header",
    "footer",
    "nav",
    "main",
    "aside",
    "figure",
    "caption",
}
HEADING_TAGS = {f"h{i}": i for i in range(1, 7)}


def flatten_row(cells: Iterable[str]) -> str:
    """A table row as one line: non-empty cells joined with `` | ``, ``$`` joined to the next cell,
    ``%`` and ``)`` to the previous one.

    >>> flatten_row(["Products", "$", "", "61,564", "", "(7)", "%"])
    'Products | $61,564 | (7)%'
    """
    out: list[str] = []
    pending = ""
    for cell in cells:
        cell = " ".join(cell.replace("**", "").split())
        if not cell:
            continue
        if cell in ("$", "€", "£", "¥"):
            pending += cell
            continue
        if cell in ("%", ")", ")%") and out:
            out[-1] += cell
            continue
        out.append(pending + cell)
        pending = ""
    return " | ".join(out)


def _heading_level(kind: str, text: str, level: int) -> int | None:
    """The nesting level of a block that starts a section, or None for body text."""
    if kind == "heading":
        return level
    if kind == "para" and len(text) <= 200:
        if PART.match(text):
            return 1
        if ITEM.match(text):
            return 2
    return None


def sections_from_blocks(blocks: Iterable[tuple[str, str, int]]) -> list[tuple[str, str]]:
    """``(title, text)`` sections from ``(kind, text, heading level)`` blocks (rules above).

    Sections without body text are dropped; text lines are one block each.
    """
    stack: list[str] = []
    title, lines, out = "cover", [], []
    for kind, text, level in blocks:
        if kind == "para" and (PAGE_FOOTER.match(text) or NOISE.match(text)):
            continue
        lvl = _heading_level(kind, text, level)
        if lvl is None:
            lines.append(text)
            continue
        if lines:
            out.append((title, "\n".join(lines)))
            lines = []
        del stack[lvl - 1 :]
        stack.extend([""] * (lvl - 1 - len(stack)))
        stack.append(text)
        title = " / ".join(s for s in stack if s)
    if lines:
        out.append((title, "\n".join(lines)))
    return out


# --------------------------------------------------------------------------- Markdown


def markdown_blocks(text: str) -> list[tuple[str, str, int]]:
    """Blocks of a Markdown text (see the module docstring)."""
    blocks: list[tuple[str, str, int]] = []
    para: list[str] = []

    def flush() -> None:
        joined = " ".join(" ".join(para).split())
        para.clear()
        if not joined:
            return
        if m := BOLD_ONLY.match(joined):
            blocks.append(("heading", m.group(2).strip(), 3))
        else:
            blocks.append(("para", joined.replace("**", ""), 0))

    for raw in html_lib.unescape(TAG.sub("\n", text)).replace("\r\n", "\n").split("\n"):
        line = raw.strip()
        if not line:
            flush()
        elif line.startswith("|"):
            flush()
            if not ALIGN_ROW.match(line) and (row := flatten_row(line.strip("|").split("|"))):
                blocks.append(("row", row, 0))
        elif m := ATX.match(line):
            flush()
            blocks.append(("heading", m.group(2).replace("**", ""), len(m.group(1))))
        elif SETEXT.match(line) and para:
            heading = " ".join(" ".join(para).split())
            para.clear()
            blocks.append(("heading", heading, 1 if line.startswith("=") else 2))
        elif line.startswith(("•", "* ", "- ", "+ ")):
            flush()
            para.append(line)
        else:
            para.append(line)
    flush()
    return blocks


# --------------------------------------------------------------------------- HTML


def _dei_facts(root: Any) -> dict[str, str]:
    """Inline XBRL ``dei:`` facts of the document (``{"DocumentType": "10-K", ...}``), first wins."""
    facts: dict[str, str] = {}
    for el in root.iter():
        name = el.get("name") if isinstance(el.tag, str) else None
        if name and name.startswith("dei:"):
            facts.setdefault(name[4:], " ".join(el.text_content().split()))
    return facts


def html_blocks(root: Any) -> list[tuple[str, str, int]]:
    """Blocks of a parsed HTML tree whose dropped elements are already removed."""
    blocks: list[tuple[str, str, int]] = []
    buf: list[str] = []

    def flush() -> None:
        joined = " ".join("".join(buf).split())
        buf.clear()
        if joined:
            blocks.append(("para", joined, 0))

    def walk(el: Any) -> None:
        tag = el.tag.lower() if isinstance(el.tag, str) else ""
        if tag == "table":
            flush()
            for tr in el.iter("tr"):
                cells = [
                    " ".join(td.text_content().split())
                    for td in tr
                    if isinstance(td.tag, str) and td.tag.lower() in ("td", "th")
                ]
                if row := flatten_row(cells):
                    blocks.append(("row", row, 0))
        elif tag in HEADING_TAGS:
            flush()
            if text := " ".join(el.text_content().split()):
                blocks.append(("heading", text, HEADING_TAGS[tag]))
        elif tag == "br":
            flush()
        elif tag:
            block = tag in BLOCK_TAGS
            if block:
                flush()
            if el.text:
                buf.append(el.text)
            for child in el:
                walk(child)
            if block:
                flush()
        if el.tail:
            buf.append(el.tail)

    walk(root)
    flush()
    return blocks


def clean_html(path: Path, text: str) -> tuple[list[tuple[str, str, int]], dict[str, str]]:
    """Parse ``text`` (the decoded file ``path``), drop the elements named in the module
    docstring, and return its blocks and its ``dei:`` facts.

    Raises:
        TextFormatError: lxml cannot parse the file.
    """
    import lxml.etree
    import lxml.html

    body = re.sub(r"^\s*<\?xml[^>]*\?>", "", text)
    try:
        root = lxml.html.document_fromstring(body)
    except (lxml.etree.ParserError, ValueError) as exc:
        raise TextFormatError(f"{path}: not parseable as HTML ({exc})") from None
    dei = _dei_facts(root)
    doomed = [
        el
        for el in root.iter()
        if isinstance(el.tag, str) and (el.tag.lower() in DROP_TAGS or HIDDEN.search(el.get("style") or ""))
    ]
    for el in doomed:
        if el.getparent() is not None:
            el.drop_tree()  # pyright: ignore[reportAttributeAccessIssue]  # an lxml.html element; lxml-stubs types it as _Element
    return html_blocks(root), dei


# --------------------------------------------------------------------------- metadata and availability


def _parse_date(text: str) -> date | None:
    for fmt in ("%B %d, %Y", "%B %d %Y", "%b %d, %Y", "%b. %d, %Y", "%Y-%m-%d"):
        try:
            return datetime.strptime(" ".join(text.replace(",", ", ").split()).replace(" ,", ","), fmt).date()
        except ValueError:
            continue
    return None


def filing_metadata(blocks: list[tuple[str, str, int]], dei: dict[str, str]) -> dict[str, Any]:
    """Form, period end, filer category, company and ticker from ``dei`` facts or the cover text
    (the first 300 blocks); missing ones are None."""
    cover = "\n".join(text for _, text, _ in blocks[:300])
    form = dei.get("DocumentType") or ((m := FORM_TEXT.search(cover)) and m.group(1).upper()) or None
    period = None
    if dei.get("DocumentPeriodEndDate"):
        period = _parse_date(dei["DocumentPeriodEndDate"])
    if period is None and (m := PERIOD_TEXT.search(cover)):
        period = _parse_date(m.group(1))
    category = dei.get("EntityFilerCategory")
    if category not in FILER_CATEGORIES:
        category = next((c for c in FILER_CATEGORIES if re.search(rf"(?:^|\|\s*){c}\s*\|\s*☒", cover, re.M)), None)
    company = dei.get("EntityRegistrantName") or ((m := REGISTRANT_TEXT.search(cover)) and m.group(1).strip())
    ticker = dei.get("TradingSymbol") or ((m := TICKER_ROW.search(cover)) and m.group(1))
    return {
        "form": form,
        "period_end": period.isoformat() if period else None,
        "filer_category": category,
        "company": company or None,
        "ticker": ticker or None,
    }


def deadline_estimate(form: str, period_end: date, category: str | None) -> str:
    """The latest regular filing deadline as ISO UTC (rules in the module docstring).

    >>> deadline_estimate("10-Q", date(2024, 6, 29), "Large accelerated filer")  # a Thursday
    '2024-08-08T21:30:00Z'
    >>> deadline_estimate("10-K", date(2023, 1, 29), None)  # 90 days: Sat 2023-04-29 -> Monday
    '2023-05-01T21:30:00Z'

    Raises:
        KeyError: no deadline rule for ``form``.
    """
    day = period_end + timedelta(days=DEADLINE_DAYS[form][category])
    day += timedelta(days=(7 - day.weekday()) % 7 if day.weekday() >= 5 else 0)
    return iso_utc(datetime.combine(day, EDGAR_CUTOFF, tzinfo=NEW_YORK))


def _document(
    path: Path,
    data: bytes,
    blocks: list[tuple[str, str, int]],
    dei: dict[str, str],
    accepted: str | None,
    ticker: str | None,
    fmt: str,
) -> TextDocument:
    sections = sections_from_blocks(blocks)
    if not sections:
        raise TextFormatError(f"{path}: no text left after cleaning")
    meta = filing_metadata(blocks, dei)
    form, period = meta["form"], meta["period_end"]
    if accepted:
        available, approx, basis, published = accepted, False, "accepted", accepted
    elif period and form in DEADLINE_DAYS:
        available = deadline_estimate(form, date.fromisoformat(period), meta["filer_category"])
        approx, basis, published = True, "filing-deadline-estimate", None
    else:
        found = f"form {form or 'not found'}, period end {period or 'not found'}"
        raise TextFormatError(
            f"{path}: no acceptance time given and none can be estimated ({found}); "
            "pass --accepted with the EDGAR acceptance time, e.g. 2024-08-02T18:04:57-04:00"
        )
    title = " ".join(x for x in (meta["company"], form, f"for the period ended {period}" if period else "") if x)
    return TextDocument(
        id=f"sec_filing:{path.name}",
        source_family="sec_filing",
        source=SOURCE,
        doc_type=form or "filing",
        title=title or path.name,
        available_at=available,
        available_at_approx=approx,
        availability_basis=basis,
        published_at=published,
        sections=sections,
        path=str(path.resolve()),
        sha256=sha256_hex(data),
        props={
            "format": fmt,
            "ticker": (ticker or meta["ticker"] or "").upper() or None,
            "form": form,
            "period_end": period,
            "filer_category": meta["filer_category"],
            "company": meta["company"],
        },
    )


def read_markdown_file(path: Path, accepted: str | None = None, ticker: str | None = None) -> TextDocument:
    """A filing in Markdown as a :class:`TextDocument` (``accepted``: ISO UTC acceptance time).

    Raises:
        TextFormatError: unreadable, empty, not UTF-8 (names the line), no text, or no way to
            date it (see the module docstring).
    """
    data = read_bytes(path)
    return _document(path, data, markdown_blocks(decode(path, data)), {}, accepted, ticker, "markdown")


def read_html_file(path: Path, accepted: str | None = None, ticker: str | None = None) -> TextDocument:
    """A filing in HTML or inline XBRL as a :class:`TextDocument` (see :func:`read_markdown_file`).

    The file's declared charset is honoured (UTF-8 when none is declared).
    """
    data = read_bytes(path)
    blocks, dei = clean_html(path, decode(path, data, sniff_declared=True))
    return _document(path, data, blocks, dei, accepted, ticker, "html")


def read_filings(files: list[Path], fmt: str, accepted: str | None = None, ticker: str | None = None) -> ReadResult:
    """Every file as a filing in ``fmt`` (``markdown`` or ``html``).

    Raises:
        TextFormatError: the first file that cannot be read; ``accepted`` given for several files.
    """
    if accepted and len(files) > 1:
        raise TextFormatError(f"--accepted names one filing's acceptance time, but {len(files)} files were given")
    read = read_markdown_file if fmt == "markdown" else read_html_file
    return ReadResult(documents=[read(p, accepted, ticker) for p in files], files=list(files))
