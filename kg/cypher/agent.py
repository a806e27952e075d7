"""The analyst agent (seed 001, FinAcumen; issue 17): trajectories and experience memory.

Trajectories: ``(:AgentRun {id, question, as_of, answer, verdict, model, created_at, ...})-[:STEP {i}]->(:Step {id,
i, tool, input, output, error})``, each step ``-[:USED]->`` the ``(:Fact {key})`` and ``(:Chunk {id})`` it read, so
an answer's computation can be walked in Neo4j Browser (:func:`agent_run_browser_query`).

Experience memory (seed 001, section 4.2): ``(:Experience {id, question, embedding, strategy, program, outcome,
created_at, split, context_id, ...})-[:DISTILLED_FROM]->(:AgentRun)``; the vector index :data:`EXPERIENCE_INDEX` on
``Experience.embedding`` serves the lookup (:data:`QUERY_EXPERIENCES`).
"""

from __future__ import annotations

from kg.cypher.core import string_literal

EXPERIENCE_INDEX = "experience_embedding"
"""The cosine vector index on ``Experience.embedding``."""

WRITE_AGENT_RUNS = (
    "UNWIND $rows AS row\n"
    "MERGE (r:AgentRun {id: row.id})\n"
    "SET r += row.props\n"
    "WITH r, row\n"
    "OPTIONAL MATCH (r)-[old:STEP]->(s:Step)\n"
    "DETACH DELETE s\n"
    "RETURN count(DISTINCT r) AS updated"
)
"""Write agent runs (``$rows``: ``{id, props}``); a run written again loses its old steps (a redo replaces them)."""

WRITE_AGENT_STEPS = (
    "UNWIND $rows AS row\n"
    "MATCH (r:AgentRun {id: row.run})\n"
    "CREATE (s:Step {id: row.id, i: row.i, tool: row.tool, input: row.input, output: row.output, error: row.error})\n"
    "CREATE (r)-[:STEP {i: row.i}]->(s)\n"
    "WITH s, row\n"
    "CALL {\n"
    "  WITH s, row\n"
    "  UNWIND row.facts AS key\n"
    "  MATCH (f:Fact {key: key})\n"
    "  MERGE (s)-[:USED]->(f)\n"
    "  RETURN count(*) AS facts\n"
    "}\n"
    "CALL {\n"
    "  WITH s, row\n"
    "  UNWIND row.chunks AS cid\n"
    "  MATCH (c:Chunk {id: cid})\n"
    "  MERGE (s)-[:USED]->(c)\n"
    "  RETURN count(*) AS chunks\n"
    "}\n"
    "CALL {\n"
    "  WITH s, row\n"
    "  UNWIND coalesce(row.observations, []) AS oid\n"
    "  MATCH (o:Observation {id: oid})\n"
    "  MERGE (s)-[:USED]->(o)\n"
    "  RETURN count(*) AS observations\n"
    "}\n"
    "RETURN count(s) AS updated"
)
"""Write steps (``$rows``: ``{run, id, i, tool, input, output, error, facts, chunks, observations}``; input and output
JSON text) with a ``USED`` link to each fact key, chunk id and indicator observation id that exists in the graph
(others are kept in the step's text)."""

AGENT_RUN = (
    "MATCH (r:AgentRun {id: $id})\n"
    "OPTIONAL MATCH (r)-[e:STEP]->(s:Step)\n"
    "OPTIONAL MATCH (s)-[:USED]->(x)\n"
    "WITH r, e, s, [k IN collect(coalesce(x.key, x.id)) WHERE k IS NOT NULL] AS used\n"
    "ORDER BY e.i\n"
    "RETURN r {.*} AS run, collect(CASE WHEN s IS NULL THEN NULL ELSE s {.*, used: used} END) AS steps"
)
"""One run and its steps in order, each with the keys of the facts and ids of the chunks it used."""

AGENT_RUNS = (
    "MATCH (r:AgentRun) WHERE $kind IS NULL OR r.kind = $kind\n"
    "RETURN r.id AS id, r.kind AS kind, r.question AS question, r.answer AS answer, r.verdict AS verdict,\n"
    "       r.created_at AS created_at\n"
    "ORDER BY r.created_at DESC LIMIT $limit"
)
"""The latest runs (``$kind`` or null for all), newest first."""

DELETE_AGENT_RUNS = (
    "MATCH (r:AgentRun) WHERE r.id IN $ids\n"
    "OPTIONAL MATCH (r)-[:STEP]->(s:Step)\n"
    "DETACH DELETE s, r\n"
    "RETURN count(*) AS updated"
)
"""Delete runs (``$ids``) with their steps."""

COMPANY_CONCEPT_PERIODS = (
    "MATCH (c:Company)-[:FILED]->(f:Filing)-[:REPORTS]->(x:Fact)\n"
    "WHERE (c.cik = $cik OR ($name IS NOT NULL AND toLower(c.name) CONTAINS toLower($name)))\n"
    "  AND x.tag IN $tags AND x.uom = $uom\n"
    "RETURN DISTINCT c.cik AS cik, c.name AS company, x.ddate AS ddate, x.qtrs AS qtrs, f.filed AS filed,\n"
    "       f.accepted AS accepted\n"
    "ORDER BY ddate DESC, cik"
)
"""The period ends (``YYYYMMDD``) at which the company (by CIK or part of its name) reports a tag of ``$tags``, with
each reporting filing's dates (for point-in-time filtering), latest period first."""

COMPANY_NAMES = (
    "MATCH (c:Company)\n"
    "OPTIONAL MATCH (c)-[:FILED]->(f:Filing)\n"
    "WITH c, collect(DISTINCT f.instance) AS instances, collect(DISTINCT f.former) AS formers\n"
    "RETURN c.cik AS cik, c.name AS name, c.sic AS sic, c.ticker AS ticker, instances, formers ORDER BY c.name"
)
"""Every company's CIK, name and SIC code (to find the companies a question names), with the ticker ``finkg fetch``
stored, its filings' XBRL instance file names (FSDS ``sub.txt`` ``instance``) and the former names they state."""

COMPANY_FACT_DDATES = (
    "MATCH (:Company {cik: $cik})-[:FILED]->(:Filing)-[:REPORTS]->(x:Fact)\n"
    "WHERE x.ddate IN $ddates\n"
    "RETURN DISTINCT x.ddate AS ddate"
)
"""Which of the period ends ``$ddates`` (``YYYYMMDD``) company ``$cik``'s facts are stated at: FSDS rounds every end to
a month end, companyfacts and XBRL instances keep the filing's own (a 52/53-week quarter ended Saturday May 2)."""

COMPANY_FISCAL_PERIODS = (
    "MATCH (c:Company {cik: $cik})-[:FILED]->(f:Filing)\n"
    "WHERE f.fy IS NOT NULL AND f.fp IS NOT NULL AND f.period IS NOT NULL\n"
    "RETURN f.fy AS fy, f.fp AS fp, f.period AS period, f.form AS form, f.fye AS fye ORDER BY f.period DESC"
)
"""The fiscal focus of a company's filings (``fy``, ``fp`` as FSDS states them: ``2009``, ``Q2``/``FY``), its fiscal
year end (``fye``, ``MMDD``, where the source gives it) and each filing's period end (``YYYYMMDD``): how a company's
fiscal quarters map to calendar dates."""

# --------------------------------------------------------------------------- experience memory

WRITE_EXPERIENCES = (
    "UNWIND $rows AS row\n"
    "MERGE (x:Experience {id: row.id})\n"
    "SET x += row.props\n"
    "WITH x, row\n"
    "CALL db.create.setNodeVectorProperty(x, 'embedding', row.embedding)\n"
    "WITH x, row\n"
    "OPTIONAL MATCH (r:AgentRun {id: row.run})\n"
    "FOREACH (_ IN CASE WHEN r IS NULL THEN [] ELSE [1] END | MERGE (x)-[:DISTILLED_FROM]->(r))\n"
    "RETURN count(x) AS updated"
)
"""Write experiences (``$rows``: ``{id, props, embedding, run}``): the embedding as a float32 vector property, a
``DISTILLED_FROM`` link to the agent run (a merged near-duplicate gains a link per run)."""

MERGE_INTO_EXPERIENCE = (
    "UNWIND $rows AS row\n"
    "MATCH (x:Experience {id: row.id})\n"
    "SET x += row.props\n"
    "WITH x, row\n"
    "OPTIONAL MATCH (r:AgentRun {id: row.run})\n"
    "FOREACH (_ IN CASE WHEN r IS NULL THEN [] ELSE [1] END | MERGE (x)-[:DISTILLED_FROM]->(r))\n"
    "RETURN count(x) AS updated"
)
"""Merge a near-duplicate into a stored experience (``$rows``: ``{id, props, run}``): new properties, its embedding
kept, a ``DISTILLED_FROM`` link to the new run."""

QUERY_EXPERIENCES = (
    "CALL db.index.vector.queryNodes($index, $candidates, $vector) YIELD node, score\n"
    "WHERE node.split IN $splits AND NOT node.context_id IN $exclude\n"
    "  AND coalesce(node.route, 'program') = $route\n"
    "RETURN node.id AS id, node.question AS question, node.answer AS answer, node.strategy AS strategy,\n"
    "       node.caution AS caution, node.program AS program, node.outcome AS outcome,\n"
    "       node.context_id AS context_id, node.split AS split, coalesce(node.route, 'program') AS route,\n"
    "       2 * score - 1 AS cosine\n"
    "ORDER BY cosine DESC"
)
"""Of the ``$candidates`` experiences nearest to ``$vector`` in index ``$index``, those of a split in ``$splits``, a
context not in ``$exclude`` and the agent route ``$route`` (``program`` or ``span``; an entry written before routes
were stored is a ``program`` one); ``cosine`` is the cosine similarity (Neo4j's cosine score is ``(1 + cos) / 2``)."""

EXPERIENCES = (
    "MATCH (x:Experience) WHERE $split IS NULL OR x.split = $split\n"
    "OPTIONAL MATCH (x)-[:DISTILLED_FROM]->(r:AgentRun)\n"
    "RETURN x.id AS id, x.question AS question, x.outcome AS outcome, x.split AS split, x.context_id AS context_id,\n"
    "       x.strategy AS strategy, x.caution AS caution, x.program AS program, x.answer AS answer,\n"
    "       x.merged AS merged, coalesce(x.sources, [x.id]) AS sources, coalesce(x.route, 'program') AS route,\n"
    "       x.created_at AS created_at, collect(r.id) AS runs\n"
    "ORDER BY x.created_at, x.id LIMIT $limit"
)
"""Experiences (of ``$split`` or all), oldest first, with the runs each was distilled from."""

EXPERIENCE = (
    "MATCH (x:Experience {id: $id})\n"
    "OPTIONAL MATCH (x)-[:DISTILLED_FROM]->(r:AgentRun)\n"
    "RETURN x {.*, embedding: null} AS experience, collect(r {.*}) AS runs"
)
"""One experience (its embedding left out) with its runs."""

DELETE_EXPERIENCES = (
    "MATCH (x:Experience)\n"
    "WHERE ($ids IS NULL OR x.id IN $ids) AND ($split IS NULL OR x.split = $split)\n"
    "OPTIONAL MATCH (x)-[:DISTILLED_FROM]->(r:AgentRun)\n"
    "OPTIONAL MATCH (r)-[:STEP]->(s:Step)\n"
    "DETACH DELETE s, r, x\n"
    "RETURN count(DISTINCT x) AS updated"
)
"""Delete experiences (those of ``$ids`` and ``$split``; null: any) with the runs they were distilled from and
their steps."""


def agent_run_browser_query(run_id: str) -> str:
    """The statement a person pastes into Neo4j Browser to walk one run: its steps and the facts and chunks they
    used (the id quoted as a Cypher string literal)."""
    return (
        f"MATCH (r:AgentRun {{id: {string_literal(run_id)}}})-[e:STEP]->(s:Step) "
        "OPTIONAL MATCH (s)-[u:USED]->(x) RETURN r, e, s, u, x"
    )
