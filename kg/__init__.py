"""finkg's graph layer: the Neo4j access, the graph schema and every Cypher statement.

Dependency direction (../shared/DESIGN.md, enforced by import-linter): ``kg`` imports nothing
from ``retrieval``, ``generation``, ``ingest`` or ``finkg``.

The names below are imported on first use (PEP 562), so that ``import kg.errors`` (which the
settings and the command line need at start-up) does not load the Neo4j driver or pandas.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from kg.errors import (
    GraphAuthError,
    GraphError,
    GraphUnavailable,
    ReadOnlyViolation,
    SchemaConflict,
)

if TYPE_CHECKING:
    from kg.driver import Graph
    from kg.writer import BatchWriter, WriteStats, batches

_LAZY = {"Graph": "kg.driver", "BatchWriter": "kg.writer", "WriteStats": "kg.writer", "batches": "kg.writer"}

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


def __getattr__(name: str) -> Any:
    """``kg.Graph`` and the batch writer's names, imported when first asked for."""
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'kg' has no attribute {name!r}")
