"""The text document model, shared reading helpers, the reader dispatch, and graph rows.

A :class:`TextDocument` is what every text reader returns (:mod:`ingest.text.fomc`,
:mod:`ingest.text.filing_text`, :mod:`ingest.text.tweets`): clean text in titled sections, with the
document's source family and its **availability time**, the first moment the text was public.
Point-in-time retrieval keeps a chunk only when ``available_at <= as_of``, so a reader that
cannot know the exact time must give a time no earlier than the true one, or say that it is an
approximation (``available_at_approx``); see each reader for its convention.

Graph (written by ``finkg.pipelines.text`` through :class:`kg.BatchWriter`)::

    (:Document {id, source_family, source, doc_type, title, published_at, available_at,
                available_at_approx, availability_basis, path, sha256, ticker?, tickers?, author?, ...})
      -[:HAS_CHUNK {seq}]->
    (:Chunk {id, kind: "text", text, sentences, n_tokens, seq, section, available_at,
             source_family, document_id, tokenizer})

Times are ISO 8601 UTC strings of one fixed shape, ``YYYY-MM-DDTHH:MM:SSZ``, so that string
order is time order (Cypher compares them directly, and the range index on
``Chunk.available_at`` serves ``WHERE c.available_at <= $as_of``).

Ids. A Document id is ``<prefix>:<natural key>``: ``fomc:statement:20081216``,
``sec_filing:aapl-10q-2024-06-29.md`` (the file name, stable across clones), ``tweet:<tweet id>``.
A Chunk id is ``text:`` + sha256(document id + NUL + chunk text), first 32 hex digits. The
document id is part of the hash on purpose: the same words in two documents (FOMC boilerplate,
a retweeted headline) are two pieces of evidence with different availability times and source
families, and must stay two chunks; a hash of the text alone would merge them and give the later
document's chunk the earlier one's time. Unchanged text gives the same id, so re-ingesting
creates nothing; changed text (or other chunk settings) gives new ids, and the document's stale
chunks are removed.
"""

from __future__ import annotations

import codecs
import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from ingest.text.chunking import TextChunk
from kg.errors import IngestError
from retrieval.text.point_in_time import ISO_UTC

SOURCE_FAMILIES = ("central_bank", "sec_filing", "news", "social")
"""``central_bank``: FOMC statements and notes; ``sec_filing``: filing text; ``news``: posts of
news-outlet accounts (:data:`ingest.text.tweets.NEWS_OUTLET_ACCOUNTS`); ``social``: other accounts."""

Kind = Literal["fomc", "markdown", "html", "tweets"]
KINDS: tuple[str, ...] = ("fomc", "markdown", "html", "tweets")
CHUNK_PREFIX = "text:"


class TextFormatError(IngestError):
    """A text source cannot be read: the message names the file and, where one applies, the line
    (``path:line: what is wrong``)."""


@dataclass(frozen=True)
class BadLine:
    """A line a reader could not use and skipped (only the tweet reader skips; it records why)."""

    path: str
    line: int
    error: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.error}"


@dataclass
class TextDocument:
    """One document: clean text by section, with provenance and availability.

    Attributes:
        id: deterministic id (see the module docstring).
        source_family: one of :data:`SOURCE_FAMILIES`.
        source: the collection, e.g. ``fomc-statements``, ``sec-edgar``, ``twitter``.
        doc_type: e.g. ``fomc_statement``, ``10-Q``, ``tweet``.
        title: a short human title.
        available_at: ISO UTC time from which the text may be used (never earlier than the truth
            unless ``available_at_approx``).
        available_at_approx: True when ``available_at`` is a convention or estimate, not a
            recorded time.
        availability_basis: how ``available_at`` was obtained (e.g. ``created_at``, ``accepted``).
        published_at: ISO UTC publication time when the source records one, else None.
        sections: ``(title, text)`` pairs; text holds one paragraph, list item or table row per line.
        path: the file read (resolved), sha256: hex digest of the document's source bytes.
        props: more properties for the Document node (ticker, author, form, period_end, ...).
    """

    id: str
    source_family: str
    source: str
    doc_type: str
    title: str
    available_at: str
    available_at_approx: bool
    availability_basis: str
    published_at: str | None
    sections: list[tuple[str, str]]
    path: str
    sha256: str
    props: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.source_family not in SOURCE_FAMILIES:
            raise ValueError(f"{self.id}: unknown source family {self.source_family!r}")
        for name in ("available_at", "published_at"):
            value = getattr(self, name)
            if value is not None:
                datetime.strptime(value, ISO_UTC)  # raises ValueError on any other shape

    @property
    def n_chars(self) -> int:
        """Characters of clean text over all sections."""
        return sum(len(t) for _, t in self.sections)


@dataclass
class ReadResult:
    """What a reader returns for one input path: documents, the files read, skipped lines."""

    documents: list[TextDocument] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    bad_lines: list[BadLine] = field(default_factory=list)
    duplicates: int = 0


def iso_utc(moment: datetime) -> str:
    """``moment`` (timezone-aware) as ``YYYY-MM-DDTHH:MM:SSZ``.

    Raises:
        ValueError: ``moment`` is naive (a time without zone cannot be placed in UTC).
    """
    if moment.tzinfo is None:
        raise ValueError(f"{moment!r} has no time zone")
    return moment.astimezone(UTC).strftime(ISO_UTC)


def parse_iso_utc(text: str, what: str = "time") -> str:
    """A user-given ISO 8601 time (``2024-08-02T18:04:57-04:00``, ``...Z``, or a date, read as
    00:00 UTC) normalized to ``YYYY-MM-DDTHH:MM:SSZ``.

    Raises:
        ValueError: not ISO 8601, or a date-time without a zone (ambiguous: say ``Z`` or an offset).
    """
    raw = text.strip()
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{what} {text!r} is not an ISO 8601 time, e.g. 2024-08-02T18:04:57-04:00") from None
    if moment.tzinfo is None:
        if "T" in raw or " " in raw:
            raise ValueError(f"{what} {text!r} has no time zone: add Z or an offset such as -04:00")
        moment = moment.replace(tzinfo=UTC)
    return iso_utc(moment)


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


_DECLARED = re.compile(rb"""(?:charset|encoding)\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.I)


def decode(path: Path, data: bytes, sniff_declared: bool = False) -> str:
    """``data`` (the bytes of ``path``) as text: UTF-8 (a BOM is dropped), or, with
    ``sniff_declared``, the charset an HTML/XML file declares in its first 2 KB.

    Raises:
        TextFormatError: the bytes are not valid in that encoding (names file, line and byte),
            the declared encoding is unknown, or the file holds no text at all.
    """
    encoding = "utf-8-sig"
    if sniff_declared and (m := _DECLARED.search(data[:2048])):
        declared = m.group(1).decode("ascii").lower()
        try:
            encoding = "utf-8-sig" if codecs.lookup(declared).name == "utf-8" else declared
        except LookupError:
            raise TextFormatError(f"{path}: declares an unknown encoding {declared!r}") from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise TextFormatError(
            f"{path}:{line}: not valid {encoding.removesuffix('-sig').upper()} "
            f"(byte 0x{data[exc.start]:02x} at column {col}); convert the file to UTF-8"
        ) from None
    if not text.strip():
        raise TextFormatError(f"{path}: empty file (no text)")
    return text


def read_bytes(path: Path) -> bytes:
    """The bytes of ``path``.

    Raises:
        TextFormatError: the file cannot be read (missing, a directory, no permission).
    """
    try:
        return path.read_bytes()
    except OSError as exc:
        raise TextFormatError(f"{path}: cannot read ({exc.strerror or exc})") from None


_BULLET = re.compile(r"^\s*(?:[*\u2022\u25cf\u25aa-]|\(?\d{1,2}[.)]|\(?[a-z][.)])\s+")


def unwrap(text: str) -> str:
    r"""Hard-wrapped plain text as one paragraph per line: lines of a blank-line-separated block
    are joined with spaces, a bullet (``*``, ``-``, ``•``, ``1.``, ``(a)``) starts a new line,
    runs of whitespace collapse.

    >>> unwrap("The Committee decided\ntoday to act.\n\n* First item\ncontinued\n* Second")
    'The Committee decided today to act.\n* First item continued\n* Second'
    """
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n").replace("\r", "\n")):
        current: list[str] = []
        for line in block.split("\n"):
            if _BULLET.match(line) and current:
                out.append(" ".join(" ".join(current).split()))
                current = []
            current.append(line)
        if joined := " ".join(" ".join(current).split()):
            out.append(joined)
    return "\n".join(out)


FOMC_NAME = re.compile(r"^(\d{8})(\.\w+)?$")
TWEET_DAY_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def detect_kind(path: Path) -> str:
    """The reader for a file, from its name: ``YYYYMMDD[.ext]`` fomc, ``.md`` markdown,
    ``.htm(l)`` html, ``YYYY-MM-DD`` or ``.jsonl`` tweets.

    Raises:
        TextFormatError: the name fits no reader (the message says to pass ``--kind``).
    """
    name, suffix = path.name, path.suffix.lower()
    if suffix in (".md", ".markdown"):
        return "markdown"
    if suffix in (".htm", ".html", ".xhtml"):
        return "html"
    if TWEET_DAY_NAME.match(name) or suffix == ".jsonl":
        return "tweets"
    if FOMC_NAME.match(name):
        return "fomc"
    raise TextFormatError(f"{path}: cannot tell which reader fits this file name; pass --kind ({'|'.join(KINDS)})")


def expand(path: Path) -> list[Path]:
    """``path`` itself, or for a directory every regular file under it (hidden ones skipped),
    sorted by path.

    Raises:
        TextFormatError: ``path`` does not exist, or is a directory with no files.
    """
    if path.is_file():
        return [path]
    if not path.exists():
        raise TextFormatError(f"{path}: no such file or directory")
    if not path.is_dir():
        raise TextFormatError(f"{path}: not a regular file or a folder (a device or a pipe)")
    files = sorted(
        p
        for p in path.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
    )
    if not files:
        raise TextFormatError(f"{path}: directory holds no files")
    return files


# --------------------------------------------------------------------------- graph rows


def chunk_id(document_id: str, text: str, occurrence: int = 0) -> str:
    """``text:`` + the first 32 hex digits of sha256(document id, NUL, chunk text); a text that
    occurs again in the same document (``occurrence`` 1, 2, ...) adds NUL and that number."""
    key = f"{document_id}\x00{text}" + (f"\x00{occurrence}" if occurrence else "")
    return CHUNK_PREFIX + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def document_row(doc: TextDocument) -> dict[str, Any]:
    """The ``(:Document)`` properties of ``doc`` (None values are not written)."""
    return {
        "id": doc.id,
        "source_family": doc.source_family,
        "source": doc.source,
        "doc_type": doc.doc_type,
        "title": doc.title,
        "published_at": doc.published_at,
        "available_at": doc.available_at,
        "available_at_approx": doc.available_at_approx,
        "availability_basis": doc.availability_basis,
        "path": doc.path,
        "sha256": doc.sha256,
        "n_sections": len(doc.sections),
        **doc.props,
    }


def chunk_rows(doc: TextDocument, chunks: Iterable[TextChunk], tokenizer: str) -> list[dict[str, Any]]:
    """The ``(:Chunk {kind: "text"})`` properties of ``doc``'s chunks (see the module docstring)."""
    seen: Counter[str] = Counter()
    rows = []
    for c in chunks:
        rows.append(
            {
                "id": chunk_id(doc.id, c.text, seen[c.text]),
                "kind": "text",
                "text": c.text,
                "sentences": list(c.sentences),
                "n_sentences": len(c.sentences),
                "n_tokens": c.n_tokens,
                "seq": c.seq,
                "section": c.section,
                "overlap_sentences": c.overlap_sentences,
                "available_at": doc.available_at,
                "available_at_approx": doc.available_at_approx,
                "source_family": doc.source_family,
                "document_id": doc.id,
                "tokenizer": tokenizer,
            }
        )
        seen[c.text] += 1
    return rows
