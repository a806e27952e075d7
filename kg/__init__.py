"""finkg's graph layer: the Neo4j access, the graph schema and every Cypher statement.

Dependency direction (../shared/DESIGN.md, enforced by import-linter): ``kg`` imports nothing
from ``retrieval``, ``generation``, ``ingest`` or ``finkg``.
"""

from kg.driver import Graph
from kg.errors import (
    GraphAuthError,
    GraphError,
    GraphUnavailable,
    ReadOnlyViolation,
    SchemaConflict,
)
from kg.writer import BatchWriter, WriteStats, batches

__all__ = [
    "BatchWriter",
    "Graph",
    "GraphAuthError",
    "GraphError",
    "GraphUnavailable",
    "ReadOnlyViolation",
    "SchemaConflict",
    "WriteStats",
    "batches",
]
