"""Reports (seed 004 §3.3): citation links and the Browser statement."""

from __future__ import annotations

from kg.cypher.core import string_literal

# --------------------------------------------------------------------------- reports (seed 004 §3.3)

DELETE_REPORT_LINKS = "MATCH (:Report {id: $id})-[c:CITES|ANSWERED_BY]->() DELETE c"
"""Remove a report's citation links (and an agent report's link to its run) before it is written again (a redo
replaces them)."""


def report_browser_query(report_id: str | None = None) -> str:
    """The statement a person pastes into Neo4j Browser to see a report and what it cites (all reports
    when ``report_id`` is None); the id is quoted as a Cypher string literal."""
    if report_id is None:
        return "MATCH (r:Report)-[c:CITES]->(x) RETURN r, c, x"
    return f"MATCH (r:Report {{id: {string_literal(report_id)}}})-[c:CITES]->(x) RETURN r, c, x"


def report_run_browser_query(report_id: str | None = None, reader: str = "agent") -> str:
    """The statement a person pastes into Neo4j Browser to walk an agent report (``finkg report --reader agent`` or
    ``reader-calc``): the report, its agent run, the run's steps and the facts, observations and chunks each step
    used (every report of ``reader`` when ``report_id`` is None); the id and the reader are quoted as Cypher string
    literals."""
    match = f"{{reader: {string_literal(reader)}}}" if report_id is None else f"{{id: {string_literal(report_id)}}}"
    return (
        f"MATCH (r:Report {match})-[a:ANSWERED_BY]->(run:AgentRun)-[e:STEP]->(s:Step) "
        "OPTIONAL MATCH (s)-[u:USED]->(x) RETURN r, a, run, e, s, u, x"
    )
