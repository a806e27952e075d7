"""CSV files in ``neo4j-admin database import`` format: what the bulk loader writes instead of MERGE.

Format (Neo4j Operations Manual 5, "Import", CSV header format): one file per node or relationship
group, header on its first line. A node file's ``:ID(<Label>)`` column is the import-time id (in an id
space named after the label, so keys of different labels never collide) and is *not* stored; the key
is written again as a typed property column (``cik:long``), so the imported node carries the same
property, of the same type, as a node written by :class:`kg.writer.BatchWriter`. A relationship file
has ``:START_ID(<Label>)`` and ``:END_ID(<Label>)``. Labels and types are given on the command line
(``--nodes=Label=file``), not in the files.

Values: a Python ``None`` is an empty unquoted field (no property, as the batch writer drops nulls);
strings are always quoted (``""`` inside), so an empty string stays an empty string; ``bool`` ->
``boolean``, ``int`` -> ``long``, ``float`` -> ``double`` (``repr``, exact round trip). A column's type
is fixed per file from its values; a column that mixes types, which one CSV column cannot hold, raises
:class:`BulkFormatError` naming the file and column.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from kg.cypher.core import quote
from kg.errors import GraphError

_TYPES: tuple[tuple[type, str], ...] = ((bool, "boolean"), (int, "long"), (float, "double"), (str, "string"))


class BulkFormatError(GraphError):
    """Rows cannot be written in the import format (a column of mixed types, a key that is null, a
    non-finite number); the message names the file and the column."""


def _kind(value: Any, where: str) -> str:
    for py, name in _TYPES:  # bool before int: True is an int too
        if isinstance(value, py):
            if py is float and not math.isfinite(value):
                raise BulkFormatError(f"{where}: {value!r} is not a finite number")
            return name
    raise BulkFormatError(f"{where}: value {value!r} of type {type(value).__name__} has no import type")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return '"' + value.replace('"', '""') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


@dataclass
class ImportFile:
    """One written file: ``kind`` ``nodes`` or ``relationships``, the ``label`` (or type), its path and rows."""

    kind: str
    label: str
    path: Path
    rows: int


class NodeStream:
    """One node file of ``label`` written from rows given in batches, in two passes (:meth:`ImportFiles.node_stream`):
    :meth:`scan` every batch first (the column types, fixed for the file, come from every value), then :meth:`write`
    the same batches in the same order, then :meth:`close`. Only one batch is held at a time; the file is the one
    :meth:`ImportFiles.add_nodes` writes from all the rows at once, byte for byte."""

    def __init__(self, files: ImportFiles, label: str, key: str, entry: ImportFile) -> None:
        for name in (label, key):
            quote(name)  # valid identifiers, as the batch writer requires
        self.files, self.key, self.entry = files, key, entry
        self.columns: dict[str, str] = {}
        self._scanned = 0
        self._names: list[str] | None = None
        self._fh: IO[str] | None = None

    def scan(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Pass 1: note the types of the non-null values of ``rows`` (first-seen column order).

        Raises:
            BulkFormatError: a column of mixed types, a non-finite number, a value with no import type."""
        path = self.entry.path
        for row in rows:
            self._scanned += 1
            for name, value in row.items():
                if value is None:
                    continue
                kind = _kind(value, f"{path.name}: row {self._scanned}: column {name!r}")
                if name not in self.columns:
                    quote(name)  # a property name is a plain identifier (no ':' or ',' in the header)
                seen = self.columns.setdefault(name, kind)
                if seen != kind:
                    raise BulkFormatError(
                        f"{path.name}: row {self._scanned}: column {name!r} holds a {kind} after {seen} values; one "
                        "import column has one type (load this source with the transactional `finkg ingest sec`)"
                    )
                if kind == "string" and ("\n" in value or "\r" in value):
                    self.files.multiline = True

    def _open(self) -> IO[str]:
        """The file, its header written (the column types are final now)."""
        if self._fh is not None:
            return self._fh
        self.columns.setdefault(self.key, "string")
        self._names = [self.key, *(c for c in self.columns if c != self.key)]
        header = [f":ID({self.entry.label})", *(f"{c}:{self.columns[c]}" for c in self._names)]
        self._fh = fh = self.entry.path.open("w", encoding="utf-8", newline="")
        fh.write(",".join(header) + "\n")
        return fh

    def write(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Pass 2: write ``rows`` (after every batch was scanned; the header is written with the first).

        Raises:
            BulkFormatError: a row without its key."""
        fh = self._open()
        assert self._names is not None, "set by _open"
        for row in rows:
            ident = row.get(self.key)
            if ident is None:
                raise BulkFormatError(
                    f"{self.entry.path.name}: row {self.entry.rows + 1}: key {self.key!r} is missing or null"
                )
            fh.write(",".join([_cell(str(ident)), *(_cell(row.get(c)) for c in self._names)]) + "\n")
            self.entry.rows += 1

    def close(self) -> ImportFile:
        """Finish the file (a file of no rows still gets its header); returns its :class:`ImportFile`."""
        self._open().close()
        return self.entry


class RelStream:
    """One relationship file written from rows given in batches (:meth:`ImportFiles.relationship_stream`): one
    pass, :meth:`write` then :meth:`close`; the file :meth:`ImportFiles.add_relationships` writes, byte for byte."""

    def __init__(self, rel_type: str, start: str, end: str, entry: ImportFile) -> None:
        quote(rel_type)
        self.entry = entry
        self._fh = entry.path.open("w", encoding="utf-8", newline="")
        self._fh.write(f":START_ID({start}),:END_ID({end})\n")

    def write(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Write ``rows`` (``{"start": key value, "end": key value}``).

        Raises:
            BulkFormatError: a row without ``start`` or ``end``."""
        for row in rows:
            s, e = row.get("start"), row.get("end")
            if s is None or e is None:
                raise BulkFormatError(
                    f"{self.entry.path.name}: row {self.entry.rows + 1}: a relationship row needs 'start' and 'end'"
                )
            self._fh.write(f"{_cell(str(s))},{_cell(str(e))}\n")
            self.entry.rows += 1

    def close(self) -> ImportFile:
        """Finish the file; returns its :class:`ImportFile`."""
        self._fh.close()
        return self.entry


@dataclass
class ImportFiles:
    """The CSV files of one import, written into ``folder`` (created), and the command-line arguments
    ``neo4j-admin database import full`` needs for them (:meth:`arguments`).

    A file is named and placed in the import's order when it is started: whole (:meth:`add_nodes`,
    :meth:`add_relationships`) or streamed from batches of rows (:meth:`node_stream`, :meth:`relationship_stream`:
    several files may be open at once, each holding one batch at a time).

    Attributes:
        files: every file started, in order.
        multiline: True when a string holds a line break (the import then needs ``--multiline-fields``).
    """

    folder: Path
    files: list[ImportFile] = field(default_factory=list)
    multiline: bool = False

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)

    def _entry(self, kind: str, label: str, name: str) -> ImportFile:
        entry = ImportFile(kind, label, self.folder / f"{len(self.files):04d}-{name}.csv", 0)
        self.files.append(entry)
        return entry

    def node_stream(self, label: str, key: str, name: str) -> NodeStream:
        """Start a node file of ``label`` keyed by ``key`` (``name`` in its file name), written in two passes over
        the same batches (:class:`NodeStream`)."""
        return NodeStream(self, label, key, self._entry("nodes", label, name))

    def relationship_stream(self, rel_type: str, start: str, end: str, name: str) -> RelStream:
        """Start a relationship file of ``rel_type`` from ``start``- to ``end``-labelled nodes (:class:`RelStream`)."""
        return RelStream(rel_type, start, end, self._entry("relationships", rel_type, name))

    def add_nodes(self, label: str, key: str, rows: Iterable[Mapping[str, Any]], name: str) -> ImportFile:
        """Write ``rows`` (each with its ``key`` and properties) as one node file of ``label``.

        Raises:
            BulkFormatError: a row without its key, a column of mixed types, a non-finite number.
        """
        rows = list(rows)
        stream = self.node_stream(label, key, name)
        stream.scan(rows)
        stream.write(rows)
        return stream.close()

    def add_relationships(
        self, rel_type: str, start: str, end: str, rows: Iterable[Mapping[str, Any]], name: str
    ) -> ImportFile:
        """Write ``rows`` (``{"start": key value, "end": key value}``) as one relationship file of
        ``rel_type`` from ``start``-labelled to ``end``-labelled nodes (their id spaces).

        Raises:
            BulkFormatError: a row without ``start`` or ``end``.
        """
        stream = self.relationship_stream(rel_type, start, end, name)
        stream.write(rows)
        return stream.close()

    def counts(self, kind: str) -> dict[str, int]:
        """Rows written per label (``kind="nodes"``) or type (``"relationships"``)."""
        out: dict[str, int] = {}
        for f in self.files:
            if f.kind == kind:
                out[f.label] = out.get(f.label, 0) + f.rows
        return out

    def arguments(self) -> list[str]:
        """The ``--nodes=Label=file`` and ``--relationships=TYPE=file`` arguments (empty files left out),
        and ``--multiline-fields=true`` where a string holds a line break."""
        args = [f"--{f.kind}={f.label}={f.path}" for f in self.files if f.rows]
        return [*args, "--multiline-fields=true"] if self.multiline else args
