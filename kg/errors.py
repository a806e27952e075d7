"""Errors raised by the graph layer. Each message names what failed and what to do."""


class GraphError(RuntimeError):
    """Base class of every error the graph layer raises on purpose."""


class GraphUnavailable(GraphError):
    """Neo4j does not answer at the configured URI (not started, wrong port, firewall)."""


class GraphAuthError(GraphError):
    """Neo4j answered but refused the configured user and password."""


class ReadOnlyViolation(GraphError):
    """A query given to the read-only runner would write, change the schema or read server files."""


class SchemaConflict(GraphError):
    """A constraint or index name that finkg owns exists with another definition."""
