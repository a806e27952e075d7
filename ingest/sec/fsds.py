"""SEC Financial Statement Data Sets (FSDS) into the graph: Company, Filing, Concept and Fact nodes.

Source: ../shared/seeds/003_2b4a46a307636297.txt (section 3, data and normalization). Reads the
official quarterly ZIP (sub.txt, num.txt, pre.txt, tag.txt) and the daily ZIP layout (no tag.txt,
other column order, CRLF line ends) straight from the archive, without unpacking to disk.

Normalization, as the paper does it: a fact is *in scope* when its unit is USD and it has no
dimensions (empty ``segments``: the whole entity). Facts out of scope are not written but counted by
reason in the ingest run (``not_usd``, ``dimensional``), so nothing disappears unaccounted.

Co-registrants (the SEC readme: ``coreg`` names the co-registrant, "NULL indicates the consolidated
entity"): a parent filing with its subsidiaries (SEMPRA ENERGY's 10-Q 0000086521-09-000047, every fact
of which carries ``coreg``: ``ParentCompany``, ``SanDiegoGasAndElectricCompanyAndSubsidiary`` ...) is
kept whole: each such fact is written with its ``coreg`` (a separate legal entity of the same filing,
counted ``coregistrant``; its ``segments`` is only ``LegalEntity=<coreg>;``, which names the entity and is
not a dimension) and cited as ``adsh:cik:tag:ddate:qtrs:uom:coreg``; it gets no evidence
sentence (a text reader would take a subsidiary's figure for the registrant's). Which entity a memo
speaks for is :func:`retrieval.facts.fact_map.parent_entity`'s choice. A value that is not a finite
number (``NaN``, ``inf``, ``1e999``) is refused: its row is skipped and counted ``skipped_non_finite``.

Keys. The paper's evidence key ``adsh:cik:tag:ddate:uom`` is not unique on real data (3-month
and 6-month flows share a ddate), so a fact's graph key is
``adsh:tag:version:ddate:qtrs:uom:coreg:segments`` (num.txt's own primary key) and its readable
citation is ``adsh:cik:tag:ddate:qtrs:uom``.

Period role of each fact (``period_role``): ``current`` when ``ddate`` equals the filing's
``period`` and, for flows, ``qtrs`` is the form's own span (10-K/20-F/40-F: 4 quarters; 10-Q: 1);
``current_ytd`` for the other flows ending on the period (a 10-Q's year-to-date); ``comparative``
for every other date. Comparatives are kept and marked, never cited as current.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import re
import sqlite3
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Protocol, overload

from ingest import runs
from ingest.sec.evidence import evidence_rows
from kg import BatchWriter, WriteStats, batches
from kg.errors import IngestError
from kg.progress import StageProgress, Tick
from kg.progress import stage as open_stage
from retrieval.facts.concepts import FORM_QUARTERS

REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "sub.txt": ("adsh", "cik", "name", "form", "period", "filed"),
    "num.txt": ("adsh", "tag", "version", "ddate", "qtrs", "uom", "value"),
    "pre.txt": ("adsh", "tag", "version", "report", "line", "stmt", "plabel"),
    "tag.txt": ("tag", "version", "tlabel", "datatype"),
}


#: Maximum sizes of the fields the graph keys and indexes are made of, from the SEC's own layout (the readme.htm
#: of every FSDS archive, "Fields in the ... data set": adsh ALPHANUMERIC 20, tag 256, version 20, uom 20, coreg
#: 256, segments 1024, name 150, form 10). ``value`` is NUMERIC(28,4), at most 30 characters written out; 40 are
#: allowed. The free text the graph keeps (plabel, tlabel, footnote: 512 in the layout) may hold four times that,
#: 2048 (2009q3 has a 515-character footnote). A longer field is refused at read with its file, line and column
#: (Neo4j refuses an index key above ~8 kB only when it is written, with a traceback: "Property value is too large
#: to index").
MAX_CHARS: dict[str, int] = {
    "adsh": 20,
    "tag": 256,
    "version": 20,
    "uom": 20,
    "coreg": 256,
    "segments": 1024,
    "name": 150,
    "form": 10,
    "value": 40,
    "plabel": 2048,
    "tlabel": 2048,
    "footnote": 2048,
}


DATE_RANGE = ("19000101", "21001231")
"""The dates an FSDS date column (``ddate``, ``period``, ``filed``) may hold: a real date YYYYMMDD within these."""

MEMBERS = tuple(REQUIRED_COLUMNS)
"""The FSDS members: an archive holding one of them twice (in two folders) is refused, not read as one."""

MAX_MEMBER_BYTES = 1 << 30
"""Default cap on one member's declared uncompressed size, 1 GiB (2009q3's num.txt is 14 MB, a recent quarter's a
few hundred MB). ``finkg ingest sec`` keeps one group of facts in memory (:data:`GROUP_BATCHES`) and the rest in a
temporary file about as large as num.txt and pre.txt; :func:`read_fsds` and the bulk import keep all of them in memory.
A bigger member is refused before a byte of it is read; Python's zipfile never reads a member past its declared size
(then the CRC check fails)."""

MAX_RATIO = 100.0
"""Default cap on a member's compression ratio, uncompressed / compressed (FSDS text compresses 5-10 times, a ZIP
bomb of repeated rows hundreds of times). Members under :data:`RATIO_FREE_BYTES` are not held to it."""

RATIO_FREE_BYTES = 1 << 20
"""Members this small (1 MiB) may compress at any ratio: they cannot fill memory."""

LEGAL_ENTITY = re.compile(r"LegalEntity=[^;]*;?")
"""The segments part that names a co-registrant (``LegalEntity=ParentCompany;``): not a dimension of the figure."""


class FsdsFormatError(IngestError):
    """The archive does not have the FSDS layout; the message names the file, member, line, column."""


def _rows(
    zf: zipfile.ZipFile, path: Path, members: dict[str, str], member: str
) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line number, row)`` of the tab-separated ``member`` (e.g. ``num.txt``, found by file name
    in ``members`` wherever the archive keeps it), validated against its required columns.

    Lines end with LF or CRLF (the daily layout). Each line is decoded on its own, so text that is not
    UTF-8 is named with its exact line number. Every field of :data:`MAX_CHARS` is checked against the SEC's
    maximum size (an accession number at most 20 characters; its ``nnnnnnnnnn-nn-nnnnnn`` shape is not required,
    so that the suite's own files can carry accession numbers no real filing has).

    Raises:
        FsdsFormatError: a missing column, a line with the wrong number of fields, text that is not UTF-8, a
            field longer than the layout allows, or a damaged member."""
    line = 0
    limits: list[tuple[int, str, int]] = []
    try:
        with zf.open(members[member]) as raw:
            header: list[str] | None = None
            for line, data in enumerate(raw, start=1):
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise FsdsFormatError(
                        f"{path}: {member} line {line}: not UTF-8 (byte 0x{data[exc.start]:02x} at column "
                        f"{exc.start + 1}); FSDS files are UTF-8"
                    ) from None
                text = text.removesuffix("\n").removesuffix("\r")
                if header is None:
                    if line == 1 and text.startswith("\ufeff"):
                        text = text[1:]
                    header = text.split("\t")
                    missing = [c for c in REQUIRED_COLUMNS[member] if c not in header]
                    if missing:
                        raise FsdsFormatError(f"{path}: {member} line 1: missing column(s) {missing}")
                    limits = [(i, c, MAX_CHARS[c]) for i, c in enumerate(header) if c in MAX_CHARS]
                    continue
                if not text:
                    continue
                fields = text.split("\t")
                if len(fields) != len(header):
                    raise FsdsFormatError(
                        f"{path}: {member} line {line}: expected {len(header)} tab-separated fields, got {len(fields)}"
                    )
                for i, column, most in limits:
                    if len(fields[i]) > most:
                        raise FsdsFormatError(
                            f"{path}: {member} line {line}: column {column!r} is {len(fields[i]):,} characters, "
                            f"the SEC's layout allows at most {most}: {fields[i][:40]!r}..."
                        )
                yield line, dict(zip(header, fields))
            if header is None:
                raise FsdsFormatError(f"{path}: {member} is empty")
    except (zipfile.BadZipFile, EOFError, zlib.error) as exc:
        raise FsdsFormatError(f"{path}: {member}: archive member is damaged or truncated ({exc})") from exc


def _members(path: Path, zf: zipfile.ZipFile) -> dict[str, str]:
    """``{file name: member name}`` of the archive's files, wherever it keeps them (``20250404/num.txt``).

    Raises:
        FsdsFormatError: an FSDS member (:data:`MEMBERS`) is in the archive more than once (in two folders,
            or twice under one name): which one holds the data cannot be told, so none is read."""
    found: dict[str, list[str]] = {}
    for n in zf.namelist():
        if not n.endswith("/"):
            found.setdefault(Path(n).name, []).append(n)
    for m in MEMBERS:
        if len(found.get(m, ())) > 1:
            raise FsdsFormatError(
                f"{path}: the archive holds {m} {len(found[m])} times ({', '.join(found[m])}); an FSDS archive "
                "has one, and which to read cannot be told"
            )
    return {name: names[-1] for name, names in found.items()}


GROUP_BATCHES = 4
"""Writer batches per group of facts of ``finkg ingest sec`` (:func:`write_fsds`): a group of ``GROUP_BATCHES x
[writer] batch_size`` facts (20,000 by default) is what is held in memory at once, with its evidence and relationship
rows, whatever the size of the archive (about 3.5 kB per fact: 20,000 facts are some 70 MB)."""


class FactSource(Protocol):
    """What a loader needs of a normalized file (:class:`FsdsData` in memory, :class:`FsdsSpill` on disk): its
    filings and companies (one row each: small), and its concepts and facts in batches, so that a loader holds one
    batch at a time.

    Attributes:
        source: the file's path; ``sha256``: its content hash (the ingest run's id).
        companies, filings: node rows keyed by ``cik`` and ``adsh``.
        counts: how many rows were read, kept, and skipped per reason (:func:`count_totals`'s totals included).
    """

    source: Path
    sha256: str
    companies: list[dict[str, Any]]
    filings: list[dict[str, Any]]
    counts: Counter

    def sizes(self) -> dict[str, int]:
        """``concepts``, ``facts`` and ``evidence`` (facts without a co-registrant): rows each stage will write."""
        ...

    def concept_batches(self, size: int) -> Iterator[list[dict[str, Any]]]:
        """The concept rows, at most ``size`` per list, in the order they were first seen."""
        ...

    def fact_batches(self, size: int) -> Iterator[tuple[list[dict[str, Any]], dict[str, str | None]]]:
        """The fact rows in file order, at most ``size`` per list (facts :meth:`drop_facts` named left out), each
        list with ``{concept key: label}`` of (at least) its concepts."""
        ...

    def fact_values(self) -> Iterator[tuple[str, str, float | None]]:
        """``(adsh, key, value)`` of every fact, in file order (the conflict check's input)."""
        ...

    def drop_facts(self, keys: Collection[str]) -> None:
        """Leave the facts of ``keys`` out of what :meth:`fact_batches` gives from now on."""
        ...

    def close(self) -> None:
        """Free what the source holds (a temporary file)."""
        ...


@dataclass
class FsdsData:
    """One file, normalized into graph rows held in memory (lists of dicts ready for :class:`kg.BatchWriter`): what
    :func:`read_fsds`, the companyfacts and XBRL instance readers return; a :class:`FactSource`.

    Attributes:
        source: the archive path; ``sha256``: its content hash (the ingest run's id).
        companies, filings, concepts, facts: node rows keyed by ``cik``, ``adsh``, ``key``, ``key``.
        counts: how many num.txt rows were read, kept, and skipped per reason.
    """

    source: Path
    sha256: str
    companies: list[dict[str, Any]] = field(default_factory=list)
    filings: list[dict[str, Any]] = field(default_factory=list)
    concepts: list[dict[str, Any]] = field(default_factory=list)
    facts: list[dict[str, Any]] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)

    def sizes(self) -> dict[str, int]:
        evidence = sum(1 for f in self.facts if not f.get("coreg"))
        return {"concepts": len(self.concepts), "facts": len(self.facts), "evidence": evidence}

    def concept_batches(self, size: int) -> Iterator[list[dict[str, Any]]]:
        return batches(self.concepts, size)

    def fact_batches(self, size: int) -> Iterator[tuple[list[dict[str, Any]], dict[str, str | None]]]:
        labels = {c["key"]: c.get("label") for c in self.concepts}
        for chunk in batches(self.facts, size):
            yield chunk, labels

    def fact_values(self) -> Iterator[tuple[str, str, float | None]]:
        return ((f["adsh"], f["key"], f["value"]) for f in self.facts)

    def drop_facts(self, keys: Collection[str]) -> None:
        drop = set(keys)
        self.facts = [f for f in self.facts if f["key"] not in drop]

    def close(self) -> None:
        return None


FACT_COLUMNS: tuple[str, ...] = (
    "key", "citation", "coreg", "adsh", "cik", "tag", "version", "concept", "ddate", "qtrs", "uom", "value",
    "period_role", "footnote",
)  # fmt: skip
"""A fact row's fields as num.txt and sub.txt give them, in row order; pre.txt's follow (:data:`PRE_COLUMNS`)."""
PRE_COLUMNS: tuple[str, ...] = ("stmt", "report", "line", "plabel", "negating")
TAG_COLUMNS: tuple[str, ...] = ("label", "datatype", "crdr", "iord", "custom", "abstract")

_SCHEMA = (
    # no column types: SQLite keeps each value as Python gave it (a float stays a float, "0001" a string)
    f"CREATE TABLE fact (seq INTEGER PRIMARY KEY, {', '.join(FACT_COLUMNS)})",
    "CREATE TABLE concept (seq INTEGER PRIMARY KEY, key UNIQUE, tag, version)",
    f"CREATE TABLE tag (tag, version, {', '.join(TAG_COLUMNS)}, PRIMARY KEY (tag, version)) WITHOUT ROWID",
    f"CREATE TABLE pre (adsh, tag, version, {', '.join(PRE_COLUMNS)}, PRIMARY KEY (adsh, tag, version)) WITHOUT ROWID",
    "CREATE TABLE dropped (key PRIMARY KEY)",
)
_SPILL_ROWS = 5_000  # rows per executemany while reading


class FsdsSpill:
    """One FSDS archive normalized into a private temporary SQLite database (:func:`open_fsds`): the
    :class:`FactSource` of ``finkg ingest sec``. Only the filings and companies (one row each) are in memory; facts,
    concepts, tag.txt's labels and pre.txt's presentation are on disk, and :meth:`fact_batches` joins them a batch at
    a time, so memory does not grow with the archive (the disk does: about the size of num.txt and pre.txt).

    The database is SQLite's private temporary file (an empty file name: removed when closed, or when the process
    dies); :meth:`close` it (or use the spill as a context manager)."""

    def __init__(self, source: Path, sha256: str) -> None:
        self.source = source
        self.sha256 = sha256
        self.companies: list[dict[str, Any]] = []
        self.filings: list[dict[str, Any]] = []
        self.counts: Counter = Counter()
        self._dropping = False
        self.db = sqlite3.connect("")
        self.db.execute("PRAGMA journal_mode = OFF")
        self.db.execute("PRAGMA synchronous = OFF")
        self.db.execute("PRAGMA cache_size = -16384")  # 16 MiB of pages in memory, the rest on disk
        for statement in _SCHEMA:
            self.db.execute(statement)

    def __enter__(self) -> FsdsSpill:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    def _one(self, query: str) -> int:
        return int(self.db.execute(query).fetchone()[0])

    def sizes(self) -> dict[str, int]:
        live = f"FROM fact WHERE true{self._live('key')}"
        return {
            "concepts": self._one("SELECT count(*) FROM concept"),
            "facts": self._one(f"SELECT count(*) {live}"),
            "evidence": self._one(f"SELECT count(*) {live} AND coreg IS NULL"),
        }

    def _live(self, key: str) -> str:
        """The condition that leaves out the facts :meth:`drop_facts` named (none when it named none)."""
        return f" AND {key} NOT IN (SELECT key FROM dropped)" if self._dropping else ""

    def concept_batches(self, size: int) -> Iterator[list[dict[str, Any]]]:
        after = 0
        query = (
            f"SELECT c.seq, c.key, c.tag, c.version, t.tag IS NOT NULL, {', '.join('t.' + c for c in TAG_COLUMNS)}\n"
            "FROM concept c LEFT JOIN tag t ON t.tag = c.tag AND t.version = c.version\n"
            "WHERE c.seq > ? ORDER BY c.seq LIMIT ?"
        )
        while rows := self.db.execute(query, (after, size)).fetchall():
            yield [_concept_row(r[1:]) for r in rows]
            after = rows[-1][0]

    def fact_batches(self, size: int) -> Iterator[tuple[list[dict[str, Any]], dict[str, str | None]]]:
        after = 0
        query = (
            f"SELECT f.seq, {', '.join('f.' + c for c in FACT_COLUMNS)}, {', '.join('p.' + c for c in PRE_COLUMNS)},\n"
            "       t.label\n"
            "FROM fact f\n"
            "LEFT JOIN pre p ON p.adsh = f.adsh AND p.tag = f.tag AND p.version = f.version\n"
            "LEFT JOIN tag t ON t.tag = f.tag AND t.version = f.version\n"
            f"WHERE f.seq > ?{self._live('f.key')} ORDER BY f.seq LIMIT ?"
        )
        n = len(FACT_COLUMNS)
        while rows := self.db.execute(query, (after, size)).fetchall():
            after = rows[-1][0]
            facts, labels = [], {}
            for r in rows:
                fact: dict[str, Any] = dict(zip(FACT_COLUMNS, r[1 : n + 1]))
                fact.update(zip(PRE_COLUMNS, r[n + 1 : n + 1 + len(PRE_COLUMNS)]))
                if fact["negating"] is not None:
                    fact["negating"] = bool(fact["negating"])
                facts.append(fact)
                labels[fact["concept"]] = r[-1]
            del rows
            yield facts, labels
            del facts, labels  # one group in memory at a time, not two

    def fact_values(self) -> Iterator[tuple[str, str, float | None]]:
        return iter(self.db.execute("SELECT adsh, key, value FROM fact ORDER BY seq"))

    def drop_facts(self, keys: Collection[str]) -> None:
        self.db.executemany("INSERT OR IGNORE INTO dropped VALUES (?)", ((k,) for k in keys))
        self._dropping = self._one("SELECT count(*) FROM dropped") > 0

    def materialize(self) -> FsdsData:
        """Everything in memory, as :func:`read_fsds` returns it."""
        data = FsdsData(self.source, self.sha256, self.companies, self.filings, counts=self.counts)
        data.concepts = [c for chunk in self.concept_batches(_SPILL_ROWS) for c in chunk]
        data.facts = [f for chunk, _ in self.fact_batches(_SPILL_ROWS) for f in chunk]
        return data


def _concept_row(r: tuple[Any, ...]) -> dict[str, Any]:
    """A concept node row from ``(key, tag, version, has a tag.txt row, *TAG_COLUMNS)``: the labels only when
    tag.txt has the concept (as it was read: ``custom`` and ``abstract`` booleans)."""
    row: dict[str, Any] = {"key": r[0], "tag": r[1], "version": r[2]}
    if r[3]:
        row.update(zip(TAG_COLUMNS, r[4:]))
        row["custom"], row["abstract"] = bool(row["custom"]), bool(row["abstract"])
    return row


def _field(
    row: dict[str, str], name: str, path: Path, member: str, line: int, kind: Callable[[str], float] = int
) -> Any:
    """``row[name]`` as ``kind`` (int or float); None when empty or absent (optional columns)."""
    raw = row.get(name, "")
    try:
        value = kind(raw) if raw.strip() else None
    except ValueError:
        raise FsdsFormatError(
            f"{path}: {member} line {line}: column {name!r} is not a number: {row[name][:80]!r}"
        ) from None
    if kind is int and value is not None and not -(2**63) <= value < 2**63:
        raise FsdsFormatError(f"{path}: {member} line {line}: column {name!r} is out of range: {row[name][:80]!r}")
    return value


@overload
def _date(
    row: dict[str, str], name: str, path: Path, member: str, line: int, required: Literal[True] = True
) -> str: ...
@overload
def _date(row: dict[str, str], name: str, path: Path, member: str, line: int, required: bool) -> str | None: ...
def _date(row: dict[str, str], name: str, path: Path, member: str, line: int, required: bool = True) -> str | None:
    """``row[name]`` checked as a calendar date ``YYYYMMDD`` within :data:`DATE_RANGE` (returned unchanged).

    Raises:
        FsdsFormatError: not such a date (or empty where ``required``)."""
    raw = row.get(name, "").strip()
    if not raw and not required:
        return None
    try:
        datetime.strptime(raw, "%Y%m%d")
    except ValueError:
        raise FsdsFormatError(
            f"{path}: {member} line {line}: column {name!r} is not a date YYYYMMDD: {raw[:40]!r}"
        ) from None
    if len(raw) != 8 or not DATE_RANGE[0] <= raw <= DATE_RANGE[1]:
        raise FsdsFormatError(
            f"{path}: {member} line {line}: column {name!r} is not a date YYYYMMDD between "
            f"{DATE_RANGE[0]} and {DATE_RANGE[1]}: {raw!r}"
        )
    return raw


def _check_sizes(path: Path, zf: zipfile.ZipFile, members: dict[str, str], max_bytes: int, max_ratio: float) -> None:
    """Refuse the archive when an FSDS member declares more than ``max_bytes`` uncompressed, or (above
    :data:`RATIO_FREE_BYTES`) compresses more than ``max_ratio`` times; nothing of it has been read then.

    Raises:
        FsdsFormatError: naming the member, its sizes, the cap and the setting that raises it."""
    for m in MEMBERS:
        if m not in members:
            continue
        info = zf.getinfo(members[m])
        if info.file_size > max_bytes:
            raise FsdsFormatError(
                f"{path}: {m} declares {info.file_size:,} bytes uncompressed, above the cap of {max_bytes:,} "
                "(raise it with [ingest] max_member_bytes)"
            )
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > RATIO_FREE_BYTES and ratio > max_ratio:
            raise FsdsFormatError(
                f"{path}: {m} compresses {ratio:,.0f} times ({info.compress_size:,} to {info.file_size:,} bytes), "
                f"above the cap of {max_ratio:g} (raise it with [ingest] max_compression_ratio)"
            )


def read_fsds(path: Path, *, max_bytes: int = MAX_MEMBER_BYTES, max_ratio: float = MAX_RATIO) -> FsdsData:
    """Read and normalize one FSDS ZIP (quarterly or daily layout), all of it in memory (:func:`open_fsds`, then
    :meth:`FsdsSpill.materialize`); ``finkg ingest sec`` streams it instead.

    Args:
        path: the archive.
        max_bytes: the cap on a member's declared uncompressed size (:data:`MAX_MEMBER_BYTES`).
        max_ratio: the cap on a member's compression ratio (:data:`MAX_RATIO`).

    Returns:
        :class:`FsdsData` with node rows and counts; nothing is written.

    Raises:
        FileNotFoundError, FsdsFormatError: as :func:`open_fsds`.
    """
    with open_fsds(path, max_bytes=max_bytes, max_ratio=max_ratio) as spill:
        return spill.materialize()


def open_fsds(path: Path, *, max_bytes: int = MAX_MEMBER_BYTES, max_ratio: float = MAX_RATIO) -> FsdsSpill:
    """Read, check and normalize one FSDS ZIP (quarterly or daily layout) into a :class:`FsdsSpill`, one pass over
    each member: every row is checked before the spill is returned (a malformed row anywhere raises here, before a
    loader writes anything), and what grows with the archive (facts, concepts, labels, presentation) goes to the
    spill's temporary file, not to memory.

    Args:
        path: the archive.
        max_bytes: the cap on a member's declared uncompressed size (:data:`MAX_MEMBER_BYTES`).
        max_ratio: the cap on a member's compression ratio (:data:`MAX_RATIO`).

    Returns:
        The open :class:`FsdsSpill` (close it) with filings, companies and counts; nothing is written to the graph.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        FsdsFormatError: not a ZIP (or a truncated one), a required member or column missing, a
            malformed line, a non-numeric value, an integer out of range, a date that is not YYYYMMDD
            between 1900 and 2100, a field longer than the SEC's layout allows (:data:`MAX_CHARS`), text
            that is not UTF-8 (its line named), a member
            present twice, a member above ``max_bytes`` or ``max_ratio`` (checked before it is read), or a fact
            whose filing is not in sub.txt.
    """
    path = Path(path)
    with path.open("rb") as fh:  # hashed in blocks: the archive is never held in memory whole
        digest = hashlib.file_digest(fh, "sha256").hexdigest()
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise FsdsFormatError(f"{path}: not a ZIP archive ({exc})") from exc
    spill = FsdsSpill(path, digest)
    try:
        with zf:
            _spill(path, zf, spill, max_bytes, max_ratio)
    except BaseException:
        spill.close()
        raise
    return spill


def _spill(path: Path, zf: zipfile.ZipFile, spill: FsdsSpill, max_bytes: int, max_ratio: float) -> None:
    """:func:`open_fsds`'s pass over the members of ``zf`` into ``spill``."""
    db, counts = spill.db, spill.counts
    members = _members(path, zf)
    _check_sizes(path, zf, members, max_bytes, max_ratio)
    for m in ("sub.txt", "num.txt"):
        if m not in members:
            raise FsdsFormatError(f"{path}: member {m} is missing (found {sorted(members)})")
    companies: dict[int, dict[str, Any]] = {}
    subs: dict[str, dict[str, Any]] = {}
    for line, r in _rows(zf, path, members, "sub.txt"):
        cik = _field(r, "cik", path, "sub.txt", line)
        if cik is None:
            raise FsdsFormatError(f"{path}: sub.txt line {line}: empty cik")
        companies[cik] = {"cik": cik, "name": r["name"].strip(), "sic": _field(r, "sic", path, "sub.txt", line)}
        subs[r["adsh"]] = {
            "adsh": r["adsh"],
            "cik": cik,
            "form": r["form"],
            "period": _date(r, "period", path, "sub.txt", line, required=False),
            "fy": _field(r, "fy", path, "sub.txt", line),
            "fp": r.get("fp") or None,
            "filed": _date(r, "filed", path, "sub.txt", line),
            "accepted": r.get("accepted") or None,
            "fye": r.get("fye") or None,
            "prevrpt": r.get("prevrpt", "").strip() == "1",
            # the XBRL instance's file name (``goog-20090630.xml``: its prefix is the filer's ticker when filed) and
            # the company's former name as the filing states it; the company index reads both (issue 44, names)
            "instance": (r.get("instance") or "").strip() or None,
            "former": (r.get("former") or "").strip() or None,
            "source": path.name,
        }
    spill.companies = list(companies.values())
    spill.filings = list(subs.values())

    if "tag.txt" in members:  # a (tag, version) given twice: the later row wins
        tags = (
            (
                r["tag"],
                r["version"],
                r["tlabel"] or None,
                r["datatype"] or None,
                r.get("crdr") or None,
                r.get("iord") or None,
                r.get("custom") == "1",
                r.get("abstract") == "1",
            )
            for _, r in _rows(zf, path, members, "tag.txt")
        )
        for chunk in batches(tags, _SPILL_ROWS):
            db.executemany("INSERT OR REPLACE INTO tag VALUES (?, ?, ?, ?, ?, ?, ?, ?)", chunk)
    if "pre.txt" in members:  # per (adsh, tag, version), the row of the first report and line it is shown on
        upsert = (
            f"INSERT INTO pre VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (adsh, tag, version) DO UPDATE SET\n"
            f"{', '.join(f'{c} = excluded.{c}' for c in PRE_COLUMNS)}\n"
            "WHERE (excluded.report, excluded.line) < (pre.report, pre.line)"
        )
        pres = (
            (
                r["adsh"],
                r["tag"],
                r["version"],
                r["stmt"] or None,
                _field(r, "report", path, "pre.txt", line),
                _field(r, "line", path, "pre.txt", line),
                r["plabel"] or None,
                r.get("negating") == "1",
            )
            for line, r in _rows(zf, path, members, "pre.txt")
        )
        for chunk in batches(pres, _SPILL_ROWS):
            db.executemany(upsert, chunk)

    facts: list[tuple[Any, ...]] = []
    concepts: list[tuple[str, str, str]] = []

    def flush() -> None:
        db.executemany(
            f"INSERT INTO fact ({', '.join(FACT_COLUMNS)}) VALUES ({', '.join('?' * len(FACT_COLUMNS))})", facts
        )
        db.executemany("INSERT OR IGNORE INTO concept (key, tag, version) VALUES (?, ?, ?)", concepts)
        facts.clear()
        concepts.clear()

    for line, r in _rows(zf, path, members, "num.txt"):
        counts["rows"] += 1
        sub = subs.get(r["adsh"])
        if sub is None:
            raise FsdsFormatError(f"{path}: num.txt line {line}: adsh {r['adsh']} is not in sub.txt")
        coreg, segments = r.get("coreg", "").strip(), r.get("segments", "").strip()
        qtrs = _field(r, "qtrs", path, "num.txt", line)
        value = _field(r, "value", path, "num.txt", line, float)
        ddate = _date(r, "ddate", path, "num.txt", line)
        if value is not None and not math.isfinite(value):  # NaN, inf, 1e999: never a fact
            counts["skipped_non_finite"] += 1
            continue
        if r["uom"] != "USD":
            counts["skipped_not_usd"] += 1
            continue
        if LEGAL_ENTITY.sub("", segments):  # a co-registrant's own figures carry only LegalEntity=<coreg>;
            counts["skipped_dimensional"] += 1
            continue
        if value is None:
            counts["nil_value"] += 1
        tag, version = r["tag"], r["version"]
        concept_key = f"{version}:{tag}"
        citation = f"{r['adsh']}:{sub['cik']}:{tag}:{ddate}:{qtrs}:{r['uom']}"
        if coreg:
            counts["coregistrant"] += 1
            citation += f":{coreg}"
        role = period_role(sub["form"], sub["period"], ddate, qtrs)
        facts.append(
            (
                ":".join((r["adsh"], tag, version, ddate, str(qtrs), r["uom"], coreg, segments)),  # key
                citation,
                coreg or None,
                r["adsh"],
                sub["cik"],
                tag,
                version,
                concept_key,
                ddate,
                qtrs,
                r["uom"],
                value,
                role,
                r.get("footnote") or None,
            )
        )
        concepts.append((concept_key, tag, version))
        counts["kept"] += 1
        counts["current"] += int(role == "current")
        if len(facts) >= _SPILL_ROWS:
            flush()
    flush()
    counts["filings"] = len(spill.filings)
    counts["companies"] = len(spill.companies)
    counts["concepts"] = spill.sizes()["concepts"]
    for zero in ("current", "skipped_non_finite", "coregistrant", "conflicts"):
        counts[zero] += 0  # present in the run record even when 0 (as count_totals has them)


def count_totals(data: FsdsData) -> FsdsData:
    """Set ``data.counts`` filings, companies, concepts and current (facts of the filing's own
    period) from what was read; returns ``data``. Every SEC reader ends with it."""
    data.counts["filings"] = len(data.filings)
    data.counts["companies"] = len(data.companies)
    data.counts["concepts"] = len(data.concepts)
    data.counts["current"] = sum(1 for f in data.facts if f["period_role"] == "current")
    data.counts["skipped_non_finite"] += 0  # present in the run record even when 0
    data.counts["coregistrant"] += 0
    data.counts["conflicts"] += 0  # facts another file gave other values (ingest.sec.conflicts sets it)
    return data


def period_role(form: str, period: str | None, ddate: str, qtrs: int | None) -> str:
    """``current``, ``current_ytd`` or ``comparative`` for a fact of a filing (see module docstring).

    >>> period_role("10-Q", "20250228", "20250228", 1), period_role("10-Q", "20250228", "20250228", 2)
    ('current', 'current_ytd')
    >>> period_role("10-K", "20091231", "20081231", 4)
    'comparative'
    """
    if ddate != period:
        return "comparative"
    if not qtrs:
        return "current"  # an instant (balance sheet) at the period end
    own = FORM_QUARTERS.get(form)
    return "current" if own is None or qtrs == own else "current_ytd"


@dataclass(frozen=True)
class NodeSet:
    """One node stage of an archive: ``stage`` name, ``label``, ``key`` property and ``rows``."""

    stage: str
    label: str
    key: str
    rows: list[dict[str, Any]]


@dataclass(frozen=True)
class RelSet:
    """One relationship stage: ``stage`` name, ``type``, ``start``/``end`` as ``(label, key)`` and
    ``rows`` ``{"start": key value, "end": key value}``."""

    stage: str
    type: str
    start: tuple[str, str]
    end: tuple[str, str]
    rows: list[dict[str, Any]]


def graph_parts(data: FactSource, group: int) -> Iterator[NodeSet | RelSet]:
    """What one normalized file becomes in the graph, in write order, ``group`` facts at a time: the companies, the
    filings and the concepts (in batches of ``group``), then for each group of facts its ``facts``, ``evidence``
    chunks, ``REPORTS``, ``OF_CONCEPT`` and ``EVIDENCE_FOR`` rows, and last ``FILED`` for every filing. Lazily: only
    one group's rows exist at a time (what bounds ``finkg ingest sec``'s memory). Each stage is given at least once
    (with no rows when the file has none). Each fact row gets ``source_file``, the name of the file it came from
    (:mod:`ingest.sec.conflicts`)."""
    yield NodeSet("companies", "Company", "cik", data.companies)
    yield NodeSet("filings", "Filing", "adsh", data.filings)
    empty = True
    for concepts in data.concept_batches(group):
        empty = False
        yield NodeSet("concepts", "Concept", "key", concepts)
    if empty:
        yield NodeSet("concepts", "Concept", "key", [])
    empty = True
    for facts, labels in data.fact_batches(group):
        empty = False
        yield from _fact_parts(data, facts, labels)
        del facts, labels  # gone before the next group is read
    if empty:
        yield from _fact_parts(data, [], {})
    yield RelSet(
        "filed", "FILED", ("Company", "cik"), ("Filing", "adsh"),
        [{"start": f["cik"], "end": f["adsh"]} for f in data.filings],
    )  # fmt: skip


def _fact_parts(
    data: FactSource, facts: list[dict[str, Any]], labels: dict[str, str | None]
) -> Iterator[NodeSet | RelSet]:
    """One group's facts, evidence chunks, ``REPORTS``, ``OF_CONCEPT`` and ``EVIDENCE_FOR`` rows."""
    for f in facts:
        f["source_file"] = data.source.name
    # a co-registrant's own figures get no evidence sentence (a text reader would take them for the registrant's)
    concepts = [{"key": k, "label": v} for k, v in labels.items()]
    chunks = evidence_rows([f for f in facts if not f.get("coreg")], data.filings, data.companies, concepts)
    yield NodeSet("facts", "Fact", "key", facts)
    yield NodeSet("evidence", "Chunk", "id", chunks)
    yield RelSet(
        "reports", "REPORTS", ("Filing", "adsh"), ("Fact", "key"),
        [{"start": f["adsh"], "end": f["key"]} for f in facts],
    )  # fmt: skip
    yield RelSet(
        "of_concept", "OF_CONCEPT", ("Fact", "key"), ("Concept", "key"),
        [{"start": f["key"], "end": f["concept"]} for f in facts],
    )  # fmt: skip
    yield RelSet(
        "evidence_for", "EVIDENCE_FOR", ("Chunk", "id"), ("Fact", "key"),
        [{"start": c["id"], "end": c["fact_key"]} for c in chunks],
    )  # fmt: skip


def graph_rows(data: FsdsData) -> tuple[list[NodeSet], list[RelSet]]:
    """:func:`graph_parts` of a file held in memory, one set per stage: the nodes (companies, filings, concepts,
    facts, evidence chunks), then ``REPORTS``, ``OF_CONCEPT``, ``EVIDENCE_FOR`` and last ``FILED``; what the bulk
    import (``finkg.pipelines.bulk``, CSV for ``neo4j-admin database import``) writes. The one description both
    loaders use (:func:`write_fsds` writes the same parts, a group at a time)."""
    whole: dict[str, NodeSet | RelSet] = {}
    for part in graph_parts(data, max(1, len(data.facts), len(data.concepts))):
        before = whole.get(part.stage)
        whole[part.stage] = part if before is None else dataclasses.replace(before, rows=before.rows + part.rows)
    nodes = [p for p in whole.values() if isinstance(p, NodeSet)]
    rels = [p for p in whole.values() if isinstance(p, RelSet)]
    return nodes, rels


def _add(total: WriteStats, part: WriteStats) -> None:
    """Add one group's write statistics ``part`` to its stage's ``total``."""
    for name in ("rows", "written", "created", "updated", "duplicates", "missing_endpoints", "batches", "seconds"):
        setattr(total, name, getattr(total, name) + getattr(part, name))
    total.missing_examples = (total.missing_examples + part.missing_examples)[:5]


def write_fsds(
    writer: BatchWriter, data: FactSource, progress: StageProgress | None = None, group: int | None = None
) -> dict[str, WriteStats]:
    """Write one normalized file (:func:`graph_parts`, ``group`` facts at a time): nodes, then
    ``(:Filing)-[:REPORTS]->(:Fact)-[:OF_CONCEPT]->(:Concept)``, one evidence
    ``(:Chunk)-[:EVIDENCE_FOR]->(:Fact)`` per fact (:mod:`ingest.sec.evidence`) and last
    ``(:Company)-[:FILED]->(:Filing)``, each stage batched (UNWIND + labelled MERGE on its key). The companies,
    filings and concepts are written first; then each group of facts with its evidence and links; so one group's
    rows are in memory at a time, whatever the size of the file.

    ``FILED`` comes last, after every group, because readers find filings through it (:mod:`ingest.runs`): a filing
    becomes visible, in one transaction, only once everything of it is written; a process killed before never
    leaves a half filing in sight, and a rerun completes it.

    Idempotent: re-writing the same archive creates nothing. Relationship rows whose endpoint is
    missing are counted (``missing_endpoints``), never dropped silently.

    Args:
        writer: the batched writer (its graph, batch size and workers).
        data: from :func:`open_fsds` or :func:`read_fsds` (or another :class:`FactSource`).
        progress: ``progress(stage, total)`` returns a callback advanced by rows written.
        group: facts per group (default :data:`GROUP_BATCHES` writer batches).

    Returns:
        Write statistics per stage (``companies``, ``filings``, ... ``filed``), summed over the groups.
    """
    group = group or GROUP_BATCHES * writer.batch_size
    sizes = data.sizes()
    totals = {
        "companies": len(data.companies),
        "filings": len(data.filings),
        "concepts": sizes["concepts"],
        "facts": sizes["facts"],
        "evidence": sizes["evidence"],
        "reports": sizes["facts"],
        "of_concept": sizes["facts"],
        "evidence_for": sizes["evidence"],
        "filed": len(data.filings),
    }
    stats: dict[str, WriteStats] = {}
    ticks: dict[str, Tick | None] = {}
    for part in graph_parts(data, group):
        runs.checkpoint(part.stage)  # the crash hook, before each group of the stage (``facts#2``: the second)
        if part.stage not in stats:  # a stage's first group: its progress
            ticks[part.stage] = runs.checkpointed(part.stage, open_stage(progress, part.stage, totals[part.stage]))
            stats[part.stage] = WriteStats()
        tick = ticks[part.stage]
        if isinstance(part, NodeSet):
            done = writer.merge_nodes(part.label, part.rows, key=part.key, progress=tick)
        else:
            done = writer.merge_relationships(part.type, part.rows, start=part.start, end=part.end, progress=tick)
        _add(stats[part.stage], done)
    return stats
