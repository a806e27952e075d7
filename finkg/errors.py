"""The whole error tree for users of finkg's Python API: ``except FinkgError`` catches every error
finkg raises on purpose. The classes are defined in :mod:`kg.errors` (the lowest layer, so every
room can raise them); each room's specific errors subclass one family here."""

from kg.errors import (
    ConfigError,
    EvaluationError,
    FinkgError,
    GenerationError,
    GraphAuthError,
    GraphError,
    GraphUnavailable,
    IngestError,
    LLMError,
    ModelError,
    ReadOnlyViolation,
    RetrievalError,
    SchemaConflict,
    VerificationError,
)

__all__ = [
    "ConfigError",
    "EvaluationError",
    "FinkgError",
    "GenerationError",
    "GraphAuthError",
    "GraphError",
    "GraphUnavailable",
    "IngestError",
    "LLMError",
    "ModelError",
    "ReadOnlyViolation",
    "RetrievalError",
    "SchemaConflict",
    "VerificationError",
]
