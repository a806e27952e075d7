"""Reports (seed 004 §3.3): citation links and the Browser statement."""

from __future__ import annotations

from kg.cypher.core import string_literal

# --------------------------------------------------------------------------- reports (seed 004 §3.3)

DELETE_REPORT_LINKS = "MATCH (:Report {id: $id})-[c:CITES]->() DELETE c"
"""Remove a report's citation links before it is written again (a redo replaces them)."""


def report_browser_query(report_id: str | None = None) -> str:
    """The statement a person pastes into Neo4j Browser to see a report and what it cites (all reports
    when ``report_id`` is None); the id is quoted as a Cypher string literal."""
    if report_id is None:
        return "MATCH (r:Report)-[c:CITES]->(x) RETURN r, c, x"
    return f"MATCH (r:Report {{id: {string_literal(report_id)}}})-[c:CITES]->(x) RETURN r, c, x"
