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
from typing import Any

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


@dataclass
class ImportFiles:
    """The CSV files of one import, written into ``folder`` (created), and the command-line arguments
    ``neo4j-admin database import full`` needs for them (:meth:`arguments`).

    Attributes:
        files: every file written, in order.
        multiline: True when a string holds a line break (the import then needs ``--multiline-fields``).
    """

    folder: Path
    files: list[ImportFile] = field(default_factory=list)
    multiline: bool = False

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)

    def _path(self, name: str) -> Path:
        return self.folder / f"{len(self.files):04d}-{name}.csv"

    def _columns(self, rows: list[Mapping[str, Any]], skip: set[str], path: Path) -> dict[str, str]:
        """``{property: import type}`` of the non-null values in ``rows`` (first-seen order)."""
        kinds: dict[str, str] = {}
        for i, row in enumerate(rows, start=1):
            for name, value in row.items():
                if name in skip or value is None:
                    continue
                kind = _kind(value, f"{path.name}: row {i}: column {name!r}")
                if name not in kinds:
                    quote(name)  # a property name is a plain identifier (no ':' or ',' in the header)
                seen = kinds.setdefault(name, kind)
                if seen != kind:
                    raise BulkFormatError(
                        f"{path.name}: row {i}: column {name!r} holds a {kind} after {seen} values; one import "
                        "column has one type (load this source with the transactional `finkg ingest sec`)"
                    )
                if kind == "string" and ("\n" in value or "\r" in value):
                    self.multiline = True
        return kinds

    def add_nodes(self, label: str, key: str, rows: Iterable[Mapping[str, Any]], name: str) -> ImportFile:
        """Write ``rows`` (each with its ``key`` and properties) as one node file of ``label``.

        Raises:
            BulkFormatError: a row without its key, a column of mixed types, a non-finite number.
        """
        rows = list(rows)
        path = self._path(name)
        for name_ in (label, key):
            quote(name_)  # valid identifiers, as the batch writer requires
        columns = self._columns(rows, set(), path)
        columns.setdefault(key, "string")
        names = [key, *(c for c in columns if c != key)]
        header = [f":ID({label})", *(f"{c}:{columns[c]}" for c in names)]
        with path.open("w", encoding="utf-8", newline="") as fh:
            fh.write(",".join(header) + "\n")
            for i, row in enumerate(rows, start=1):
                ident = row.get(key)
                if ident is None:
                    raise BulkFormatError(f"{path.name}: row {i}: key {key!r} is missing or null")
                fh.write(",".join([_cell(str(ident)), *(_cell(row.get(c)) for c in names)]) + "\n")
        return self._added("nodes", label, path, len(rows))

    def add_relationships(
        self, rel_type: str, start: str, end: str, rows: Iterable[Mapping[str, Any]], name: str
    ) -> ImportFile:
        """Write ``rows`` (``{"start": key value, "end": key value}``) as one relationship file of
        ``rel_type`` from ``start``-labelled to ``end``-labelled nodes (their id spaces).

        Raises:
            BulkFormatError: a row without ``start`` or ``end``.
        """
        rows = list(rows)
        path = self._path(name)
        quote(rel_type)
        with path.open("w", encoding="utf-8", newline="") as fh:
            fh.write(f":START_ID({start}),:END_ID({end})\n")
            for i, row in enumerate(rows, start=1):
                s, e = row.get("start"), row.get("end")
                if s is None or e is None:
                    raise BulkFormatError(f"{path.name}: row {i}: a relationship row needs 'start' and 'end'")
                fh.write(f"{_cell(str(s))},{_cell(str(e))}\n")
        return self._added("relationships", rel_type, path, len(rows))

    def _added(self, kind: str, label: str, path: Path, rows: int) -> ImportFile:
        f = ImportFile(kind, label, path, rows)
        self.files.append(f)
        return f

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
