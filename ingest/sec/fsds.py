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

import hashlib
import math
import re
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, overload

from ingest import runs
from ingest.sec.evidence import evidence_rows
from kg import BatchWriter, WriteStats
from kg.errors import IngestError
from kg.progress import Advance, StageProgress
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
few hundred MB). The reader keeps an archive's facts in memory, so a bigger member is refused before a byte of it
is read; Python's zipfile never reads a member past its declared size (then the CRC check fails)."""

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


@dataclass
class FsdsData:
    """One archive, normalized into graph rows (lists of dicts ready for :class:`kg.BatchWriter`).

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
    """Read and normalize one FSDS ZIP (quarterly or daily layout).

    Args:
        path: the archive.
        max_bytes: the cap on a member's declared uncompressed size (:data:`MAX_MEMBER_BYTES`).
        max_ratio: the cap on a member's compression ratio (:data:`MAX_RATIO`).

    Returns:
        :class:`FsdsData` with node rows and counts; nothing is written.

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
    data = FsdsData(source=path, sha256=digest)
    with zf:
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
                "source": path.name,
            }
        data.companies = list(companies.values())
        data.filings = list(subs.values())

        labels: dict[tuple[str, str], dict[str, Any]] = {}
        if "tag.txt" in members:
            for _, r in _rows(zf, path, members, "tag.txt"):
                labels[(r["tag"], r["version"])] = {
                    "label": r["tlabel"] or None,
                    "datatype": r["datatype"] or None,
                    "crdr": r.get("crdr") or None,
                    "iord": r.get("iord") or None,
                    "custom": r.get("custom") == "1",
                    "abstract": r.get("abstract") == "1",
                }
        presentation: dict[tuple[str, str, str], dict[str, Any]] = {}
        if "pre.txt" in members:
            for line, r in _rows(zf, path, members, "pre.txt"):
                k = (r["adsh"], r["tag"], r["version"])
                order = (_field(r, "report", path, "pre.txt", line), _field(r, "line", path, "pre.txt", line))
                if k not in presentation or order < presentation[k]["_order"]:
                    presentation[k] = {
                        "_order": order,
                        "stmt": r["stmt"] or None,
                        "report": order[0],
                        "line": order[1],
                        "plabel": r["plabel"] or None,
                        "negating": r.get("negating") == "1",
                    }

        concepts: dict[str, dict[str, Any]] = {}
        for line, r in _rows(zf, path, members, "num.txt"):
            data.counts["rows"] += 1
            sub = subs.get(r["adsh"])
            if sub is None:
                raise FsdsFormatError(f"{path}: num.txt line {line}: adsh {r['adsh']} is not in sub.txt")
            coreg, segments = r.get("coreg", "").strip(), r.get("segments", "").strip()
            qtrs = _field(r, "qtrs", path, "num.txt", line)
            value = _field(r, "value", path, "num.txt", line, float)
            ddate = _date(r, "ddate", path, "num.txt", line)
            if value is not None and not math.isfinite(value):  # NaN, inf, 1e999: never a fact
                data.counts["skipped_non_finite"] += 1
                continue
            if r["uom"] != "USD":
                data.counts["skipped_not_usd"] += 1
                continue
            if LEGAL_ENTITY.sub("", segments):  # a co-registrant's own figures carry only LegalEntity=<coreg>;
                data.counts["skipped_dimensional"] += 1
                continue
            if value is None:
                data.counts["nil_value"] += 1
            tag, version = r["tag"], r["version"]
            concept_key = f"{version}:{tag}"
            if concept_key not in concepts:
                concepts[concept_key] = {
                    "key": concept_key,
                    "tag": tag,
                    "version": version,
                    **labels.get((tag, version), {}),
                }
            pre = presentation.get((r["adsh"], tag, version), {})
            citation = f"{r['adsh']}:{sub['cik']}:{tag}:{ddate}:{qtrs}:{r['uom']}"
            if coreg:
                data.counts["coregistrant"] += 1
                citation += f":{coreg}"
            data.facts.append(
                {
                    "key": ":".join((r["adsh"], tag, version, ddate, str(qtrs), r["uom"], coreg, segments)),
                    "citation": citation,
                    "coreg": coreg or None,
                    "adsh": r["adsh"],
                    "cik": sub["cik"],
                    "tag": tag,
                    "version": version,
                    "concept": concept_key,
                    "ddate": ddate,
                    "qtrs": qtrs,
                    "uom": r["uom"],
                    "value": value,
                    "period_role": period_role(sub["form"], sub["period"], ddate, qtrs),
                    "footnote": r.get("footnote") or None,
                    "stmt": pre.get("stmt"),
                    "report": pre.get("report"),
                    "line": pre.get("line"),
                    "plabel": pre.get("plabel"),
                    "negating": pre.get("negating"),
                }
            )
            data.counts["kept"] += 1
        data.concepts = list(concepts.values())
    return count_totals(data)


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


def graph_rows(data: FsdsData) -> tuple[list[NodeSet], list[RelSet]]:
    """What one normalized archive becomes in the graph, in write order: the nodes (companies,
    filings, concepts, facts, evidence chunks), then ``REPORTS``, ``OF_CONCEPT``, ``EVIDENCE_FOR`` and
    last ``FILED``. The one description both loaders use: :func:`write_fsds` (transactional MERGE)
    and the bulk import (``finkg.pipelines.bulk``, CSV for ``neo4j-admin database import``). Each fact row
    gets ``source_file``, the name of the file it came from (:mod:`ingest.sec.conflicts`)."""
    for f in data.facts:
        f["source_file"] = data.source.name
    # a co-registrant's own figures get no evidence sentence (a text reader would take them for the registrant's)
    chunks = evidence_rows([f for f in data.facts if not f.get("coreg")], data.filings, data.companies, data.concepts)
    nodes = [
        NodeSet("companies", "Company", "cik", data.companies),
        NodeSet("filings", "Filing", "adsh", data.filings),
        NodeSet("concepts", "Concept", "key", data.concepts),
        NodeSet("facts", "Fact", "key", data.facts),
        NodeSet("evidence", "Chunk", "id", chunks),
    ]
    rels = [
        RelSet(
            "reports", "REPORTS", ("Filing", "adsh"), ("Fact", "key"),
            [{"start": f["adsh"], "end": f["key"]} for f in data.facts],
        ),
        RelSet(
            "of_concept", "OF_CONCEPT", ("Fact", "key"), ("Concept", "key"),
            [{"start": f["key"], "end": f["concept"]} for f in data.facts],
        ),
        RelSet(
            "evidence_for", "EVIDENCE_FOR", ("Chunk", "id"), ("Fact", "key"),
            [{"start": c["id"], "end": c["fact_key"]} for c in chunks],
        ),
        RelSet(
            "filed", "FILED", ("Company", "cik"), ("Filing", "adsh"),
            [{"start": f["cik"], "end": f["adsh"]} for f in data.filings],
        ),
    ]  # fmt: skip
    return nodes, rels


def write_fsds(writer: BatchWriter, data: FsdsData, progress: StageProgress | None = None) -> dict[str, WriteStats]:
    """Write one normalized archive (:func:`graph_rows`): nodes, then
    ``(:Filing)-[:REPORTS]->(:Fact)-[:OF_CONCEPT]->(:Concept)``, one evidence
    ``(:Chunk)-[:EVIDENCE_FOR]->(:Fact)`` per fact (:mod:`ingest.sec.evidence`) and last
    ``(:Company)-[:FILED]->(:Filing)``, each stage batched (UNWIND + labelled MERGE on its key).

    ``FILED`` comes last because readers find filings through it (:mod:`ingest.runs`): a filing becomes
    visible, in one transaction, only once everything of it is written; a process killed before never
    leaves a half filing in sight, and a rerun completes it.

    Idempotent: re-writing the same archive creates nothing. Relationship rows whose endpoint is
    missing are counted (``missing_endpoints``), never dropped silently.

    Args:
        writer: the batched writer (its graph, batch size and workers).
        data: from :func:`read_fsds`.
        progress: ``progress(stage, total)`` returns a callback advanced by rows written.

    Returns:
        Write statistics per stage (``companies``, ``filings``, ... ``of_concept``).
    """

    def tick(name: str, total: int) -> Advance:
        return open_stage(progress, name, total)

    stats: dict[str, WriteStats] = {}
    nodes, rels = graph_rows(data)
    for n in nodes:
        runs.checkpoint(n.stage)
        stats[n.stage] = writer.merge_nodes(
            n.label, n.rows, key=n.key, progress=runs.checkpointed(n.stage, tick(n.stage, len(n.rows)))
        )
    for r in rels:
        runs.checkpoint(r.stage)
        stats[r.stage] = writer.merge_relationships(
            r.type, r.rows, start=r.start, end=r.end, progress=runs.checkpointed(r.stage, tick(r.stage, len(r.rows)))
        )
    return stats
