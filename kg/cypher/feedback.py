"""Point-in-time evidence, the source memory and the market-feedback evaluation (seed 000 §3.3-3.5, §4)."""

from __future__ import annotations

from kg.cypher.core import string_literal

# --------------------------------------------------------------------------- point-in-time evidence and source memory
# (seed 000, sections 3.3 and 3.5: retrieval/text/point_in_time.py, retrieval/memory/source_memory.py)

POINT_IN_TIME_CANDIDATES = (
    "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk)\n"
    "WHERE c.available_at <= $as_of AND c.kind = 'text'\n"
    "  AND any(t IN coalesce(d.tickers, CASE WHEN d.ticker IS NULL THEN [] ELSE [d.ticker] END) WHERE t IN $tickers)\n"
    "RETURN c.id AS id, d.id AS document_id, c.text AS text, d.source_family AS source_family,\n"
    "       c.available_at AS available_at,\n"
    "       coalesce(d.tickers, CASE WHEN d.ticker IS NULL THEN [] ELSE [d.ticker] END) AS tickers, d.url AS url,\n"
    "       d.title AS title\n"
    "ORDER BY c.available_at DESC, c.id"
)
"""The text chunks of documents filed under any of ``$tickers`` (``Document.tickers`` or ``ticker``) that
were available at ``$as_of`` (an ISO UTC string; ``available_at <= $as_of``, served by the range index on
``Chunk.available_at``): a future document never leaves the database. Latest first."""

DELETE_STALE_SELECTED = (
    "UNWIND $rows AS row\n"
    "MATCH (:EvidenceSelection {id: row.id})-[r:SELECTED]->(c:Chunk)\n"
    "WHERE NOT c.id IN row.chunk_ids\n"
    "DELETE r\n"
    "RETURN count(r) AS updated"
)
"""Remove the ``SELECTED`` links of each selection ``row.id`` to chunks not in ``row.chunk_ids`` (a rerun
that selects other evidence replaces the links instead of adding to them)."""

EVIDENCE_SELECTIONS = (
    "MATCH (s:EvidenceSelection) WHERE $run IS NULL OR s.run = $run\n"
    "OPTIONAL MATCH (s)-[r:SELECTED]->(c:Chunk)\n"
    "RETURN s.id AS selection, s.run AS run, s.anchor_id AS anchor_id, s.anchor_text AS anchor_text,\n"
    "       s.anchor_url AS anchor_url, s.decision_time AS decision_time, r.rank AS rank, r.score AS score,\n"
    "       c.id AS chunk_id, c.document_id AS document_id, c.text AS text, c.available_at AS available_at\n"
    "ORDER BY s.id, r.rank"
)
"""Every stored evidence selection (of run ``$run``; all runs when null) with each selected chunk, one row
per link (a selection with no link gives one row with null chunk fields): what ``finkg audit evidence``
checks."""

DELETE_SELECTIONS_OF_RUN = "MATCH (s:EvidenceSelection {run: $run}) DETACH DELETE s"
"""Remove the evidence selections of one run (and their links)."""

RECORD_MEMORY_FEEDBACK = (
    "UNWIND $rows AS row\n"
    "MERGE (f:SourceMemoryFeedback {id: row.id})\n"
    "WITH f, row WHERE f.applied_at IS NULL\n"
    "SET f += row.props\n"
    "RETURN count(f) AS updated"
)
"""Record pending feedback events (``{id, props}`` rows). One that was applied already is left as it is:
the memory counted it, and changing it now would make the record disagree with the cells."""

PENDING_MEMORY_FEEDBACK = (
    "MATCH (f:SourceMemoryFeedback)\n"
    "WHERE f.run = $run AND f.matured_at <= $as_of AND f.applied_at IS NULL\n"
    "RETURN f {.*} AS feedback\n"
    "ORDER BY f.matured_at, f.id"
)
"""The feedback events of run ``$run`` whose horizon matured by ``$as_of`` (ISO UTC strings compare in time
order) and that were not applied yet, oldest first."""

APPLY_MEMORY_FEEDBACK = (
    "UNWIND $rows AS row\n"
    "MATCH (f:SourceMemoryFeedback {id: row.id}) WHERE f.applied_at IS NULL\n"
    "SET f.applied_at = $as_of, f.update_label = row.label, f.update_event_type = row.event_type,\n"
    "    f.correct = row.correct, f.weight = row.weight, f.outcome = row.outcome\n"
    "WITH f, row\n"
    "UNWIND row.credits AS credit\n"
    "MERGE (c:SourceMemoryCell {id: credit.cell})\n"
    "ON CREATE SET c.run = row.run, c.family = credit.family, c.event_type = row.event_type,\n"
    "              c.horizon = row.horizon, c.positive = 0.0, c.negative = 0.0, c.updates = 0\n"
    "SET c.positive = c.positive + credit.positive, c.negative = c.negative + credit.negative,\n"
    "    c.updates = c.updates + 1, c.last_update = $as_of\n"
    "MERGE (f)-[k:CREDITED]->(c)\n"
    "SET k.positive = credit.positive, k.negative = credit.negative\n"
    "RETURN count(k) AS updated"
)
"""Apply matured feedback rows ``{id, run, horizon, event_type, label, correct, weight, outcome, credits:
[{cell, family, positive, negative}]}`` at ``$as_of``: each feedback node still unapplied is marked applied
and its credits are added to its cells (created at zero counts), with a ``CREDITED`` link from the feedback to
each cell it moved. A feedback node already applied matches nothing, so applying it again counts nothing."""

MEMORY_CELLS = (
    "MATCH (c:SourceMemoryCell) WHERE c.run = $run AND ($event_type IS NULL OR c.event_type = $event_type)\n"
    "RETURN c.family AS family, c.event_type AS event_type, c.horizon AS horizon, c.positive AS positive,\n"
    "       c.negative AS negative, c.updates AS updates\n"
    "ORDER BY c.event_type, c.horizon, c.family"
)
"""The source-memory cells of run ``$run`` (of one event type, or all when ``$event_type`` is null)."""

MEMORY_CELLS_AS_OF = (
    "MATCH (f:SourceMemoryFeedback)-[k:CREDITED]->(c:SourceMemoryCell)\n"
    "WHERE f.run = $run AND f.applied_at IS NOT NULL AND f.matured_at <= $as_of\n"
    "  AND ($event_type IS NULL OR c.event_type = $event_type)\n"
    "WITH c, sum(k.positive) AS positive, sum(k.negative) AS negative, count(k) AS updates\n"
    "RETURN c.family AS family, c.event_type AS event_type, c.horizon AS horizon, positive, negative, updates\n"
    "ORDER BY event_type, horizon, family"
)
"""The source-memory cells of run ``$run`` as of ``$as_of`` (ISO UTC): the credits of the applied feedback
events whose horizon matured by then, summed per cell (one event type, or all when ``$event_type`` is null).
Feedback that matured later, even when already applied, is left out."""

MEMORY_FEEDBACK_COUNTS = (
    "MATCH (f:SourceMemoryFeedback) WHERE f.run = $run\n"
    "RETURN count(f) AS recorded, count(f.applied_at) AS applied,\n"
    "       sum(CASE WHEN f.outcome = 'no_citation' THEN 1 ELSE 0 END) AS no_citation"
)
"""How many feedback events run ``$run`` recorded, applied, and applied without a valid citation."""

DELETE_MEMORY_RUN = (
    "CALL () { MATCH (f:SourceMemoryFeedback {run: $run}) DETACH DELETE f }\n"
    "CALL () { MATCH (c:SourceMemoryCell {run: $run}) DETACH DELETE c }"
)
"""Remove the source memory of one run: its cells and its feedback records."""


def memory_browser_query(run: str) -> str:
    """The statement a person pastes into Neo4j Browser to see the source-memory cells of ``run`` with
    the feedback that moved them; the run id is quoted as a Cypher string literal."""
    return (
        f"MATCH (c:SourceMemoryCell {{run: {string_literal(run)}}}) "
        "OPTIONAL MATCH (f:SourceMemoryFeedback)-[k:CREDITED]->(c) RETURN c, k, f"
    )


# --------------------------------------------------------------------------- market-feedback evaluation
# (seed 000, sections 3.1 and 4: finkg/eval/feedback.py)

FEEDBACK_ANCHORS = (
    "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk)\n"
    "WHERE d.doc_type = $doc_type AND d.source_family IN $families AND c.kind = 'text'\n"
    "  AND c.available_at >= $start AND c.available_at < $end\n"
    "  AND any(t IN coalesce(d.tickers, []) WHERE t IN $tickers)\n"
    "RETURN c.id AS id, d.id AS document_id, c.text AS text, c.available_at AS available_at,\n"
    "       d.source_family AS source_family, [t IN d.tickers WHERE t IN $tickers] AS tickers, d.url AS url,\n"
    "       d.author AS author\n"
    "ORDER BY c.available_at, c.id"
)
"""News-event anchors: the text chunks of ``$doc_type`` documents (``tweet``) of the source ``$families``
(``["news"]``: news-outlet accounts) available in ``[$start, $end)`` (ISO UTC strings) about any of
``$tickers``, with the requested tickers they are about. Oldest first."""
