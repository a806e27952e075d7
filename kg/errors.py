"""finkg's errors: one root, :class:`FinkgError`, and a base class per family.

Every error finkg raises on purpose is a :class:`FinkgError`; its message names what failed (the
file, line or field, the URI, the setting) and what to do. The command line prints the message
and exits with code 2, without a traceback; anything else that escapes is a bug and keeps its
traceback. The classes live here, in the lowest layer, so that every room can raise them (kg <-
retrieval <- generation <- finkg; ingest -> kg); :mod:`finkg.errors` re-exports the whole tree for
users.

Families:

- :class:`ConfigError`: the settings file, an environment variable or a command-line value.
- :class:`GraphError`: Neo4j (unavailable, authentication, the read-only guard and its caps, schema, server,
  a query's time, memory or stack limit: :class:`QueryLimitExceeded`, a connection a query broke).
- :class:`IngestError`: an input file or source (malformed rows name file, line and field).
- :class:`ModelError`: a model directory or file (embedder, reranker, BERTScore, installs).
- :class:`LLMError`: the LLM backend (unavailable, malformed answer, token budget).
- :class:`RetrievalError`: a retriever's input or contract (``as_of`` missing or not honoured).
- :class:`GenerationError`: a memo or report batch (bad batch file, unknown system).
- :class:`VerificationError`: a number that cannot be checked as asked.
- :class:`EvaluationError`: an evaluation's input or output folder.
"""


class FinkgError(Exception):
    """Root of every error finkg raises on purpose (message = what failed and what to do)."""

    exit_code: int = 2


class ConfigError(FinkgError, ValueError):
    """The settings file, an environment variable or an option value is invalid; the message names which."""


class GraphError(FinkgError, RuntimeError):
    """Base class of every error the graph layer raises on purpose."""


class GraphUnavailable(GraphError):
    """Neo4j does not answer at the configured URI (not started, wrong port, firewall)."""


class GraphAuthError(GraphError):
    """Neo4j answered but refused the configured user and password."""


class ReadOnlyViolation(GraphError):
    """A query given to the read-only runner would write, change the schema or read server files."""


class QueryTooLarge(GraphError):
    """A query given to ``finkg cypher`` is longer or more deeply nested than it sends (kg.guard's caps);
    refused before anything reaches the server."""


class QueryLimitExceeded(GraphError):
    """A query hit a limit the server enforces (time or memory); never retried. The message names the
    limit and how to raise it."""


class QueryTimeout(QueryLimitExceeded):
    """A transaction ran longer than its timeout (the query's own, or the server's ``db.transaction.timeout``)."""


class QueryMemoryExceeded(QueryLimitExceeded):
    """A transaction needed more heap than ``db.memory.transaction.max`` (or the server's total) allows."""


class QueryStackOverflow(QueryLimitExceeded):
    """The server ran out of stack parsing or planning a query (a StackOverflowError: nesting too deep)."""


class QueryBrokeConnection(GraphError):
    """The server dropped the connection while running a query, yet answers on a fresh one: the query itself
    broke it (never reported as "not reachable")."""


class SchemaConflict(GraphError):
    """A constraint or index name that finkg owns exists with another definition."""


class IngestError(FinkgError, ValueError):
    """An input file or source cannot be read; the message names the file, line and field."""


class ModelError(FinkgError, ValueError):
    """A configured model (directory, GGUF file, installed package) is missing or unusable."""


class LLMError(FinkgError, RuntimeError):
    """The LLM backend failed: unavailable, a malformed answer, or the token budget spent."""


class RetrievalError(FinkgError, ValueError):
    """A retriever was asked something it cannot do as asked (bad input, ``as_of`` not honoured)."""


class GenerationError(FinkgError, ValueError):
    """A memo or report batch cannot run as asked (bad batch file, unknown system or source)."""


class VerificationError(FinkgError, ValueError):
    """A number or claim cannot be verified as asked."""


class EvaluationError(FinkgError, ValueError):
    """An evaluation's input, output folder or resume state is inconsistent."""
