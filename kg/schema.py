"""The graph schema: every constraint and index finkg owns, versioned, applied idempotently.

Later work adds a :class:`SchemaStep` with the next version; it never edits an applied step
(drop an object in a later step instead). Names are unique across all steps, checked at import:
``CREATE ... IF NOT EXISTS`` silently skips a reused name, so :func:`apply_schema` also verifies,
after creating, that every name exists with exactly the definition declared here, and raises
:class:`~kg.errors.SchemaConflict` where it does not.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from kg import cypher
from kg.driver import Graph
from kg.errors import SchemaConflict

SCHEMA_NAME = "finkg"

Kind = Literal["unique", "node_key", "range", "text", "fulltext", "vector"]
CONSTRAINT_KINDS = ("unique", "node_key")

# SHOW CONSTRAINTS / SHOW INDEXES type names per kind (5.26 names first, older aliases after).
_SHOW_TYPES: dict[str, tuple[str, ...]] = {
    "unique": ("NODE_PROPERTY_UNIQUENESS", "UNIQUENESS"),
    "node_key": ("NODE_KEY",),
    "range": ("RANGE",),
    "text": ("TEXT",),
    "fulltext": ("FULLTEXT",),
    "vector": ("VECTOR",),
}


@dataclass(frozen=True)
class SchemaObject:
    """One constraint or index: its unique name, kind, node label and properties.

    ``options`` holds ``dimensions`` and ``similarity`` for vector indexes.
    """

    name: str
    kind: Kind
    label: str
    properties: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def is_constraint(self) -> bool:
        return self.kind in CONSTRAINT_KINDS

    def create_statement(self) -> str:
        """The ``CREATE ... IF NOT EXISTS`` statement for this object."""
        if self.is_constraint:
            return cypher.create_constraint(self.name, self.kind, self.label, self.properties)
        return cypher.create_index(self.name, self.kind, self.label, self.properties, **self.options)

    def matches(self, shown: dict[str, Any]) -> bool:
        """True when a SHOW CONSTRAINTS/INDEXES row describes this very object."""
        return (
            shown.get("type") in _SHOW_TYPES[self.kind]
            and shown.get("entityType") == "NODE"
            and list(shown.get("labelsOrTypes") or []) == [self.label]
            and list(shown.get("properties") or []) == list(self.properties)
        )


@dataclass(frozen=True)
class SchemaStep:
    """A schema version: what it adds (``objects``) and what it removes (``drops``, by name)."""

    version: int
    description: str
    objects: tuple[SchemaObject, ...] = ()
    drops: tuple[str, ...] = ()


def _u(label: str, *props: str) -> SchemaObject:
    name = f"{label.lower()}_{'_'.join(props)}_unique"
    kind: Kind = "unique" if len(props) == 1 else "node_key"
    return SchemaObject(name, kind, label, tuple(props))


STEPS: tuple[SchemaStep, ...] = (
    SchemaStep(
        1,
        "Keys of the graph model in DESIGN.md, run bookkeeping and common lookups",
        (
            _u("FinkgSchema", "name"),
            _u("IngestRun", "id"),
            # XBRL: (:Company)-[:FILED]->(:Filing)-[:REPORTS]->(:Fact)-[:OF_CONCEPT]->(:Concept)
            _u("Company", "cik"),
            _u("Filing", "adsh"),
            _u("Fact", "key"),
            _u("Concept", "key"),
            # Indicators (AKShare, prices) and their dated observations
            _u("Indicator", "code"),
            _u("Observation", "key"),
            # Text and extracted knowledge
            _u("Document", "id"),
            _u("Chunk", "id"),
            _u("Entity", "id"),
            # Outputs and their claims
            _u("Report", "id"),
            _u("Memo", "id"),
            _u("Claim", "id"),
            SchemaObject("filing_period", "range", "Filing", ("period",)),
            SchemaObject("fact_tag", "range", "Fact", ("tag",)),
            SchemaObject("document_published_at", "range", "Document", ("published_at",)),
        ),
    ),
    SchemaStep(
        2,
        "Knowledge-graph construction (seed 004, section 3.1): the stored extraction schema, one "
        "extraction record per chunk, entity merges, and lookups by availability time, chunk kind, "
        "source family, entity type and cluster",
        (
            _u("KGSchema", "version"),
            _u("Extraction", "id"),
            _u("EntityMerge", "id"),
            SchemaObject("chunk_available_at", "range", "Chunk", ("available_at",)),
            SchemaObject("entity_type", "range", "Entity", ("type",)),
            SchemaObject("entity_cluster", "range", "Entity", ("cluster",)),
            SchemaObject("chunk_kind", "range", "Chunk", ("kind",)),
            SchemaObject("chunk_source_family", "range", "Chunk", ("source_family",)),
            SchemaObject("document_source_family", "range", "Document", ("source_family",)),
        ),
    ),
    SchemaStep(
        3,
        "Indicator observations (AKShare, seed 004 section 2): (:Observation) keyed by id "
        "('<indicator code>:<YYYY-MM-DD>') instead of key, lookups by observation date (the latest "
        "value on or before a day) and by availability time (point-in-time facts)",
        (
            _u("Observation", "id"),
            SchemaObject("observation_date", "range", "Observation", ("date",)),
            SchemaObject("observation_available_at", "range", "Observation", ("available_at",)),
        ),
        drops=("observation_key_unique",),
    ),
    SchemaStep(
        4,
        "Point-in-time evidence and the market-feedback source memory (seed 000, sections 3.3 and 3.5): "
        "one (:EvidenceSelection) per anchor and evaluation run, one (:SourceMemoryCell) per run, source "
        "family, event type and horizon, one (:SourceMemoryFeedback) per run, anchor and horizon (applied "
        "once); the hybrid retriever's per-corpus settings on (:Corpus {name}) (seed 002, section 5.4); "
        "lookups by run and, for pending feedback, by run and maturity time",
        (
            _u("SourceMemoryCell", "id"),
            _u("SourceMemoryFeedback", "id"),
            _u("EvidenceSelection", "id"),
            _u("Corpus", "name"),
            SchemaObject("sourcememorycell_run", "range", "SourceMemoryCell", ("run",)),
            SchemaObject("sourcememoryfeedback_run_matured_at", "range", "SourceMemoryFeedback", ("run", "matured_at")),
            SchemaObject("evidenceselection_run", "range", "EvidenceSelection", ("run",)),
        ),
    ),
    SchemaStep(
        5,
        "The EDGAR filing index of `finkg fetch` (issue 46): one (:Submission) per filing EDGAR lists, keyed by "
        "accession number, and one (:EdgarWatermark) per company and form, keyed '<cik>:<form>'",
        (
            _u("Submission", "adsh"),
            _u("EdgarWatermark", "id"),
        ),
    ),
)


def _check_steps(steps: tuple[SchemaStep, ...]) -> None:
    versions = [s.version for s in steps]
    if versions != list(range(1, len(steps) + 1)):
        raise SchemaConflict(f"schema steps must be numbered 1..n in order, got {versions}")
    names = Counter(o.name for s in steps for o in s.objects)
    reused = sorted(n for n, c in names.items() if c > 1)
    if reused:
        raise SchemaConflict(f"schema object names used twice: {reused}")


_check_steps(STEPS)


def target_objects(steps: tuple[SchemaStep, ...] = STEPS) -> dict[str, SchemaObject]:
    """The objects that exist after every step is applied, by name."""
    objs: dict[str, SchemaObject] = {}
    for step in steps:
        for name in step.drops:
            objs.pop(name, None)
        for o in step.objects:
            objs[o.name] = o
    return objs


def show_schema(graph: Graph) -> dict[str, list[dict[str, Any]]]:
    """``{"constraints": [...], "indexes": [...]}`` as SHOW CONSTRAINTS / SHOW INDEXES list them."""
    return {
        "constraints": graph.read(cypher.SHOW_CONSTRAINTS),
        "indexes": graph.read(cypher.SHOW_INDEXES),
    }


def current_version(graph: Graph, name: str = SCHEMA_NAME) -> int:
    """The schema version recorded in the graph under ``name`` (0 when never applied)."""
    rows = graph.read(cypher.READ_SCHEMA_VERSION, {"name": name})
    return int(rows[0]["version"] or 0) if rows else 0


@dataclass
class ApplyReport:
    """What :func:`apply_schema` did: version before and after, names created, dropped, present."""

    version_before: int
    version_after: int
    created: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def apply_schema(
    graph: Graph,
    steps: tuple[SchemaStep, ...] = STEPS,
    await_seconds: int = 300,
    name: str = SCHEMA_NAME,
) -> ApplyReport:
    """Bring the database to the newest schema version; safe to run any number of times.

    Creates each missing object, drops what later steps drop, waits for indexes to come online,
    verifies every object by name and definition, and records the version in the
    ``(:FinkgSchema {name: name})`` node (``name`` other than "finkg" is for tests and tools
    that keep a schema of their own).

    Raises:
        SchemaConflict: a name finkg owns exists with another definition (label, properties or
            kind), or the database holds a newer schema version than this code knows.
    """
    _check_steps(steps)
    before = current_version(graph, name)
    newest = steps[-1].version if steps else 0
    if before > newest:
        raise SchemaConflict(
            f"the database has finkg schema version {before}, newer than this code's {newest}: upgrade finkg"
        )
    report = ApplyReport(before, newest)
    existing = _existing(graph)
    for step in steps:
        for dropped in step.drops:
            if dropped in existing:
                kind = existing.pop(dropped)["_kind"]
                stmt = cypher.drop_constraint(dropped) if kind == "constraint" else cypher.drop_index(dropped)
                graph.run_autocommit(stmt)
                report.dropped.append(dropped)
    target = target_objects(steps)
    for obj_name, obj in target.items():
        shown = existing.get(obj_name)
        if shown is None:
            graph.run_autocommit(obj.create_statement())
            report.created.append(obj_name)
        elif obj.matches(shown):
            report.unchanged.append(obj_name)
        else:
            raise SchemaConflict(_conflict_message(obj, shown))
    graph.run_autocommit(cypher.AWAIT_INDEXES, {"timeout_s": await_seconds})
    existing = _existing(graph)
    for obj_name, obj in target.items():
        shown = existing.get(obj_name)
        if shown is None or not obj.matches(shown):
            # IF NOT EXISTS skipped it: an equivalent object under another name already exists.
            raise SchemaConflict(
                f"{obj_name}: not created; an equivalent constraint or index under another name "
                f"probably exists ({obj.create_statement()}). Drop the other one and rerun `finkg db init`."
                if shown is None
                else _conflict_message(obj, shown)
            )
    definitions = json.dumps({n: [o.kind, o.label, list(o.properties)] for n, o in sorted(target.items())})
    graph.write(
        cypher.RECORD_SCHEMA_VERSION,
        {"name": name, "version": newest, "definitions": definitions},
    )
    return report


def _existing(graph: Graph) -> dict[str, dict[str, Any]]:
    shown = show_schema(graph)
    out = {c["name"]: {**c, "_kind": "constraint"} for c in shown["constraints"]}
    for i in shown["indexes"]:
        if i.get("owningConstraint"):
            continue  # the backing index of a constraint is listed under the constraint's name
        out.setdefault(i["name"], {**i, "_kind": "index"})
    return out


def _conflict_message(obj: SchemaObject, shown: dict[str, Any]) -> str:
    return (
        f"{obj.name}: exists as {shown.get('type')} on {shown.get('labelsOrTypes')}"
        f"{shown.get('properties')}, but finkg defines it as {obj.kind} on [{obj.label}]"
        f"{list(obj.properties)}. Drop it (DROP CONSTRAINT/INDEX {obj.name}) and rerun `finkg db init`."
    )
