"""One source per fact, or a recorded conflict (issue 47): a file never silently changes a fact another file wrote.

A fact's key holds its accession number (:mod:`ingest.sec.fsds`), so two files that hold the same filing write the
same fact nodes: an FSDS quarter and its daily files, a companyfacts JSON and an XBRL instance, or two copies of a
quarter of which one was altered. When both give a fact the same value, loading the second changes nothing (a
rerun of one file is idempotent the same way). When they differ, MERGE would let the later file win, fact by fact,
and leave each filing a mix of two sources. So, before anything of a file is written, :func:`find_conflicts` looks
up the facts of its filings already in the graph (only filings the graph has; batched UNWIND on the fact key's
index) and compares values; what then happens is the ingest's ``on_conflict``:

- ``refuse`` (the default): :class:`SourceConflict`, one line naming the file, how many facts of how many filings
  differ, the file they came from and the first few keys with both values; nothing is written.
- ``keep``: the graph's values stay; each of the file's other values is recorded beside its fact as
  ``(:Fact)-[:HAS_CONFLICT]->(:FactConflict {source_file, value, resolution: "kept", against, recorded_at})`` and
  the file's other facts are written as usual.
- ``replace``: the file's values replace the graph's; each replaced value is recorded the same way
  (``resolution: "replaced"``, ``against``: the file that replaced it).

Every fact records the file it came from (``source_file``, the file's name as ``Filing.source`` has it), so
either way a filing's facts name their sources and nothing is lost: facts a file lacks are never deleted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ingest import runs
from ingest.sec.fsds import FactSource
from kg import BatchWriter, Graph, batches, cypher
from kg.errors import ConfigError, IngestError

OnConflict = Literal["refuse", "keep", "replace"]
ON_CONFLICT: tuple[OnConflict, ...] = ("refuse", "keep", "replace")

EXAMPLES = 3
"""How many conflicting facts the refusal names."""


def mode(value: str) -> OnConflict:
    """``value`` checked to be one of :data:`ON_CONFLICT`.

    Raises:
        ConfigError: naming the value and the choices."""
    for m in ON_CONFLICT:
        if value == m:
            return m
    raise ConfigError(f"--on-conflict {value!r}: choose one of {', '.join(ON_CONFLICT)}")


class SourceConflict(IngestError):
    """A file would change facts another file wrote (same accession and key, another value); nothing is written."""


@dataclass(frozen=True)
class Conflict:
    """One fact whose value in the graph (``value``, from file ``source``) differs from the file's (``file_value``).
    ``key`` and its parts (``adsh``, ``tag``, ``ddate``, ``qtrs``, ``uom``, ``coreg``) name the fact."""

    key: str
    adsh: str
    tag: str
    ddate: str
    qtrs: int | None
    uom: str
    coreg: str | None
    value: float | None
    file_value: float | None
    source: str | None


def find_conflicts(graph: Graph, data: FactSource, batch_size: int = 5_000) -> list[Conflict]:
    """The facts of ``data`` already in the graph with another value, by key. Only the facts of filings the graph
    already has are looked up (none on a first load: the facts are not even read), ``batch_size`` keys per read;
    the facts stream past (:meth:`~ingest.sec.fsds.FactSource.fact_values`), only the conflicts are kept."""
    adshs = sorted({f["adsh"] for f in data.filings})
    present: set[str] = set()
    for chunk in batches(adshs, batch_size):
        present.update(r["adsh"] for r in graph.read(cypher.FILINGS_PRESENT, {"adshs": chunk}))
    if not present:
        return []
    rows = ({"key": key, "value": value} for adsh, key, value in data.fact_values() if adsh in present)
    found: list[Conflict] = []
    for chunk in batches(rows, batch_size):
        found.extend(Conflict(**r) for r in graph.read(cypher.FACT_VALUE_CONFLICTS, {"rows": chunk}))
    return sorted(found, key=lambda c: c.key)


def _number(value: float | None) -> str:
    if value is None:
        return "no value"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,}"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def refusal(path: Any, conflicts: Sequence[Conflict]) -> str:
    """The one line that refuses ``path``: counts, the other file(s), the first :data:`EXAMPLES` facts, the options."""
    filings = len({c.adsh for c in conflicts})
    sources = sorted({c.source or "an unnamed source" for c in conflicts})
    named = ", ".join(sources[:3]) + (f" and {len(sources) - 3} other files" if len(sources) > 3 else "")
    first = "; ".join(
        f"{c.adsh} {c.tag} {c.ddate} {c.qtrs} {c.uom}{f' {c.coreg}' if c.coreg else ''}: "
        f"{_number(c.value)} vs {_number(c.file_value)}"
        for c in conflicts[:EXAMPLES]
    )
    return (
        f"{path}: {_count(len(conflicts), 'fact')} of {_count(filings, 'filing')} "
        f"{'is' if len(conflicts) == 1 else 'are'} already in the graph from {named} with other "
        f"values (first: {first}); nothing written. Use --on-conflict keep to keep the graph's values and record "
        "this file's beside them, or --on-conflict replace to write this file's and record the graph's"
    )


def settle(
    writer: BatchWriter, data: FactSource, conflicts: Sequence[Conflict], on_conflict: OnConflict, at: str | None = None
) -> int:
    """Apply ``on_conflict`` to ``conflicts`` before ``data`` is written (see the module docstring): ``keep`` records
    the file's values and drops those facts from ``data`` (so the write leaves them as they are); ``replace``
    records the graph's values and sets the file's (a fact the file gives no value loses its value). Sets
    ``data.counts["conflicts"]``; returns how many facts conflicted.

    Raises:
        SourceConflict: ``on_conflict`` is ``refuse`` and there are conflicts (nothing is written)."""
    data.counts["conflicts"] = len(conflicts)
    if not conflicts:
        return 0
    if on_conflict == "refuse":
        raise SourceConflict(refusal(data.source, conflicts))
    name = data.source.name
    if on_conflict == "keep":
        rows = [
            _row(c, source_file=name, value=c.file_value, resolution="kept", against=c.source, new_value=c.value)
            for c in conflicts
        ]
        data.drop_facts({c.key for c in conflicts})
    else:
        rows = [
            _row(c, source_file=c.source, value=c.value, resolution="replaced", against=name, new_value=c.file_value)
            for c in conflicts
        ]
    runs.checkpoint("conflicts")
    writer.run_batches(cypher.RECORD_FACT_CONFLICTS, rows, {"at": at or runs.now()})
    return len(conflicts)


def _text(value: float | None) -> str:
    """A value as a record tells it apart (an int and a float of one number are one value)."""
    return "none" if value is None else repr(float(value))


def _row(c: Conflict, **fields: Any) -> dict[str, Any]:
    return {
        "key": c.key,
        **fields,
        "source_file": fields["source_file"] or "unknown",
        "value_text": _text(fields["value"]),
        "new_text": _text(fields["new_value"]),
    }
