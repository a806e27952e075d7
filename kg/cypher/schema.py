"""Schema steps: constraints, indexes, the schema version."""

from __future__ import annotations

from collections.abc import Sequence

from kg.cypher.core import quote

# --------------------------------------------------------------------------- schema

SHOW_CONSTRAINTS = (
    "SHOW CONSTRAINTS YIELD name, type, entityType, labelsOrTypes, properties "
    "RETURN name, type, entityType, labelsOrTypes, properties ORDER BY name"
)
SHOW_INDEXES = (
    "SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, owningConstraint, "
    "options RETURN name, type, entityType, labelsOrTypes, properties, owningConstraint, options "
    "ORDER BY name"
)


def create_constraint(name: str, kind: str, label: str, properties: Sequence[str]) -> str:
    """``CREATE CONSTRAINT name IF NOT EXISTS`` of ``kind`` ``"unique"`` or ``"node_key"``.

    Raises:
        ValueError: unknown ``kind`` or invalid identifiers.
    """
    props = ", ".join(f"n.{quote(p)}" for p in properties)
    props = f"({props})" if len(properties) > 1 else props
    if kind == "unique":
        requirement = "IS UNIQUE"
    elif kind == "node_key":
        requirement = "IS NODE KEY"
    else:
        raise ValueError(f"unknown constraint kind {kind!r} (expected 'unique' or 'node_key')")
    return f"CREATE CONSTRAINT {quote(name)} IF NOT EXISTS FOR (n:{quote(label)}) REQUIRE {props} {requirement}"


def create_index(
    name: str,
    kind: str,
    label: str,
    properties: Sequence[str],
    dimensions: int | None = None,
    similarity: str = "cosine",
) -> str:
    """``CREATE ... INDEX name IF NOT EXISTS`` of ``kind`` ``range``, ``text``, ``fulltext`` or ``vector``.

    Vector indexes need ``dimensions`` (an int) and ``similarity`` (``cosine`` or ``euclidean``).

    Raises:
        ValueError: unknown ``kind``, a vector index without dimensions, or invalid identifiers.
    """
    n, lab = quote(name), quote(label)
    if kind == "range":
        props = ", ".join(f"n.{quote(p)}" for p in properties)
        return f"CREATE INDEX {n} IF NOT EXISTS FOR (n:{lab}) ON ({props})"
    if kind == "text":
        (prop,) = properties
        return f"CREATE TEXT INDEX {n} IF NOT EXISTS FOR (n:{lab}) ON (n.{quote(prop)})"
    if kind == "fulltext":
        props = ", ".join(f"n.{quote(p)}" for p in properties)
        return f"CREATE FULLTEXT INDEX {n} IF NOT EXISTS FOR (n:{lab}) ON EACH [{props}]"
    if kind == "vector":
        if not isinstance(dimensions, int) or dimensions < 1:
            raise ValueError(f"vector index {name!r} needs a positive integer 'dimensions'")
        if similarity not in ("cosine", "euclidean"):
            raise ValueError(f"vector index {name!r}: similarity must be 'cosine' or 'euclidean'")
        (prop,) = properties
        return (
            f"CREATE VECTOR INDEX {n} IF NOT EXISTS FOR (n:{lab}) ON (n.{quote(prop)}) "
            f"OPTIONS {{indexConfig: {{`vector.dimensions`: {dimensions}, "
            f"`vector.similarity_function`: '{similarity}'}}}}"
        )
    raise ValueError(f"unknown index kind {kind!r} (expected range, text, fulltext or vector)")


def drop_constraint(name: str) -> str:
    """``DROP CONSTRAINT name IF EXISTS``."""
    return f"DROP CONSTRAINT {quote(name)} IF EXISTS"


def drop_index(name: str) -> str:
    """``DROP INDEX name IF EXISTS``."""
    return f"DROP INDEX {quote(name)} IF EXISTS"


AWAIT_INDEXES = "CALL db.awaitIndexes($timeout_s)"

READ_SCHEMA_VERSION = (
    "OPTIONAL MATCH (s:FinkgSchema {name: $name}) RETURN s.version AS version, s.applied_at AS applied_at"
)
RECORD_SCHEMA_VERSION = (
    "MERGE (s:FinkgSchema {name: $name}) "
    "SET s.version = $version, s.applied_at = datetime(), s.definitions = $definitions"
)
