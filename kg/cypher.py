"""Every Cypher statement finkg runs, built by small functions (habit borrowed from
neo4j-graphrag-python's ``neo4j_queries.py``).

Labels, relationship types and property keys cannot be query parameters in Cypher, so the
builders here take them as names, validate them against :data:`IDENTIFIER` and quote them with
backticks. Values always travel as parameters (``$rows``), never inside the text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

#: The example query in ``finkg cypher --help``.
EXAMPLE_QUERY = "MATCH (c:Company) RETURN c.name LIMIT 5"


def quote(name: str) -> str:
    """Return ``name`` backtick-quoted after checking it is a plain identifier.

    Raises:
        ValueError: ``name`` is empty or holds anything but letters, digits and underscores
            (which rules out Cypher injection through a label, type or property key).
    """
    if not isinstance(name, str) or not IDENTIFIER.match(name):
        raise ValueError(
            f"invalid Cypher identifier {name!r}: use letters, digits and underscores, "
            "starting with a letter or underscore"
        )
    return f"`{name}`"


def _key_map(keys: Sequence[str], source: str) -> str:
    return "{" + ", ".join(f"{quote(k)}: {source}.{quote(k)}" for k in keys) + "}"


# --------------------------------------------------------------------------- batched writes


def merge_nodes(label: str, keys: Sequence[str]) -> str:
    """``UNWIND $rows`` and MERGE one ``label`` node per row on its key properties.

    Each row is ``{"key": {k: v, ...}, "props": {...}}``. The statement returns one record with
    ``updated`` (existing nodes whose properties changed) and ``written`` (rows merged); the
    created count comes from the server's counters. Rows must be unique on their key within one
    call (the writer ensures it).
    """
    lab = quote(label)
    key = _key_map(keys, "row.key")
    changed = (
        "existing IS NOT NULL AND any(p IN keys(row.props) WHERE existing[p] IS NULL OR existing[p] <> row.props[p])"
    )
    return (
        "UNWIND $rows AS row\n"
        f"OPTIONAL MATCH (existing:{lab} {key})\n"
        f"WITH row, {changed} AS is_changed\n"
        f"MERGE (n:{lab} {key})\n"
        "SET n += row.props\n"
        "RETURN sum(toInteger(is_changed)) AS updated, count(*) AS written"
    )


def merge_relationships(
    rel_type: str,
    start_label: str,
    start_keys: Sequence[str],
    end_label: str,
    end_keys: Sequence[str],
    rel_keys: Sequence[str] = (),
) -> str:
    """``UNWIND $rows`` and MERGE one ``rel_type`` relationship per row between existing nodes.

    Each row is ``{"start": {...}, "end": {...}, "key": {...}, "props": {...}}``; ``key`` holds
    ``rel_keys`` (empty: at most one relationship of this type per node pair). Endpoints are
    MATCHed with their label on their key, so rows whose endpoints are missing write nothing and
    are counted as ``written`` minus the input size by the caller.
    """
    typ = quote(rel_type)
    rkey = " " + _key_map(rel_keys, "row.key") if rel_keys else ""
    changed = (
        "existing IS NOT NULL AND any(p IN keys(row.props) WHERE existing[p] IS NULL OR existing[p] <> row.props[p])"
    )
    return (
        "UNWIND $rows AS row\n"
        f"MATCH (a:{quote(start_label)} {_key_map(start_keys, 'row.start')})\n"
        f"MATCH (b:{quote(end_label)} {_key_map(end_keys, 'row.end')})\n"
        f"OPTIONAL MATCH (a)-[existing:{typ}{rkey}]->(b)\n"
        f"WITH a, b, row, {changed} AS is_changed\n"
        f"MERGE (a)-[r:{typ}{rkey}]->(b)\n"
        "SET r += row.props\n"
        "RETURN sum(toInteger(is_changed)) AS updated, count(*) AS written"
    )


def matched_relationship_rows(
    start_label: str, start_keys: Sequence[str], end_label: str, end_keys: Sequence[str]
) -> str:
    """Indexes ``i`` of the ``$rows`` whose two endpoints exist (read-only; used to report the
    rows :func:`merge_relationships` could not write)."""
    return (
        "UNWIND range(0, size($rows) - 1) AS i\n"
        "WITH i, $rows[i] AS row\n"
        f"MATCH (a:{quote(start_label)} {_key_map(start_keys, 'row.start')})\n"
        f"MATCH (b:{quote(end_label)} {_key_map(end_keys, 'row.end')})\n"
        "RETURN DISTINCT i"
    )


def delete_nodes_in_transactions(label: str, rows_per_transaction: int = 10_000) -> str:
    """DETACH DELETE every ``label`` node, committing every ``rows_per_transaction`` rows.

    Must run in an auto-commit transaction (``Graph.run_autocommit``).
    """
    if rows_per_transaction < 1:
        raise ValueError("rows_per_transaction must be >= 1")
    return (
        f"MATCH (n:{quote(label)}) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF {int(rows_per_transaction)} ROWS"
    )


def count_nodes(label: str) -> str:
    """Count the ``label`` nodes; returns one record with ``n``."""
    return f"MATCH (n:{quote(label)}) RETURN count(n) AS n"


def count_relationships(rel_type: str) -> str:
    """Count the ``rel_type`` relationships; returns one record with ``n``."""
    return f"MATCH ()-[r:{quote(rel_type)}]->() RETURN count(r) AS n"


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

# --------------------------------------------------------------------------- server


def explain(query: str) -> str:
    """Prefix a user's query with ``EXPLAIN`` (plans it, runs nothing)."""
    return "EXPLAIN " + query


SERVER_COMPONENTS = "CALL dbms.components() YIELD name, versions, edition RETURN name, versions, edition"

# The server's running transactions (``Graph.transactions``), and the termination of a user query that
# Ctrl-C interrupted, found by the tag in its transaction metadata (``Graph.run_user``).
SHOW_TRANSACTIONS = (
    "SHOW TRANSACTIONS YIELD transactionId, currentQuery, metaData, status, elapsedTime\n"
    "RETURN transactionId AS id, currentQuery AS query, metaData AS metadata, status,\n"
    "       elapsedTime.milliseconds AS elapsed_ms"
)
TAGGED_TRANSACTIONS = (
    "SHOW TRANSACTIONS YIELD transactionId, metaData\nWHERE metaData[$key] = $tag\nRETURN transactionId AS id"
)
TERMINATE_TRANSACTIONS = "TERMINATE TRANSACTIONS $ids"


# --------------------------------------------------------------------------- ingest runs (ingest/runs.py)

RUNNING_INGEST_RUNS = (
    "MATCH (r:IngestRun) WHERE r.status = 'running'\n"
    "RETURN r.id AS id, r.pid AS pid, r.host AS host, r.proc_start AS proc_start, r.started_at AS started_at\n"
    "ORDER BY r.id"
)
"""The runs recorded as ``running`` with the process that runs them (null pid: recorded before runs kept it)."""

MARK_RUNS_INTERRUPTED = (
    "UNWIND $rows AS row\n"
    "MATCH (r:IngestRun {id: row.id})\n"
    "WHERE r.status = 'running' AND coalesce(r.pid, -1) = coalesce(row.pid, -1)\n"
    "SET r.status = 'interrupted', r.error = row.error, r.finished_at = $finished_at\n"
    "RETURN count(r) AS updated"
)
"""Mark runs ``interrupted`` (``$rows``: ``{id, pid, error}``), only while still ``running`` by the same pid."""

INGEST_RUNS = (
    "MATCH (r:IngestRun) WHERE $statuses IS NULL OR r.status IN $statuses\n"
    "RETURN r.id AS id, r.kind AS kind, r.source AS source, r.status AS status, r.host AS host, r.pid AS pid,\n"
    "       r.started_at AS started_at, r.finished_at AS finished_at, r.error AS error\n"
    "ORDER BY r.started_at DESC, r.id LIMIT $limit"
)
"""The latest ingest runs of ``$statuses`` (null: all), at most ``$limit``, newest first."""

INGEST_RUN_STATUS_COUNTS = "MATCH (r:IngestRun) RETURN r.status AS status, count(r) AS runs ORDER BY status"
"""How many ingest runs are in each status."""

HIDDEN_FILINGS = "MATCH (f:Filing) WHERE NOT EXISTS { (:Company)-[:FILED]->(f) }\nRETURN count(f) AS filings"
"""Filings written by a run that has not finished them (no ``FILED`` link yet): readers do not see them."""

# --------------------------------------------------------------------------- the item ledger (kg/ledger.py)


def ledger_state(label: str) -> str:
    """The ledger fields of the ``label`` nodes whose ``id`` is in ``$ids``."""
    return (
        "UNWIND $ids AS id\n"
        f"MATCH (n:{quote(label)} {{id: id}})\n"
        "RETURN n.id AS id, n.status AS status, n.input_digest AS input_digest, n.error AS error,\n"
        "       n.attempts AS attempts"
    )


def ledger_record(label: str) -> str:
    """MERGE one ``label`` node per ``$rows`` item (``{id, status, input_digest, error, props}``) and set
    its ledger fields, ``ledger_at = $at`` and one more attempt; returns ``updated`` (rows written)."""
    return (
        "UNWIND $rows AS row\n"
        f"MERGE (n:{quote(label)} {{id: row.id}})\n"
        "SET n += row.props, n.status = row.status, n.input_digest = row.input_digest, n.error = row.error,\n"
        "    n.ledger_at = $at, n.attempts = coalesce(n.attempts, 0) + 1\n"
        "RETURN count(n) AS updated"
    )


DELETE_CLAIMS_OF_MEMOS = "UNWIND $ids AS id\nMATCH (:Memo {id: id})-[:HAS_CLAIM]->(c:Claim)\nDETACH DELETE c"
"""Remove the claims of memos about to be written again (a redo may make fewer claims, or cite other facts)."""

# --------------------------------------------------------------------------- memo reads

LIST_FILINGS = (
    "MATCH (c:Company)-[:FILED]->(f:Filing)\n"
    "WHERE ($adshs IS NULL OR f.adsh IN $adshs) AND ($source IS NULL OR f.source = $source)\n"
    "RETURN f.adsh AS adsh, f.form AS form, f.period AS period, c.cik AS cik, c.name AS name,\n"
    "       c.sic AS sic\n"
    "ORDER BY adsh"
)

FILING_SOURCES = (
    "MATCH (:Company)-[:FILED]->(f:Filing) WHERE f.source IS NOT NULL\n"
    "RETURN f.source AS source, count(f) AS filings ORDER BY source"
)

FILING_FACT_CANDIDATES = (
    "UNWIND $adshs AS adsh\n"
    "MATCH (c:Company)-[:FILED]->(f:Filing {adsh: adsh})\n"
    "RETURN f {.adsh, .form, .period, .fy, .fp, .filed, .accepted, .source} AS filing,\n"
    "       c {.cik, .name, .sic} AS company,\n"
    "       [(f)-[:REPORTS]->(x:Fact) WHERE x.tag IN $tags\n"
    "          AND x.period_role IN ['current', 'current_ytd'] AND x.uom = 'USD'\n"
    "        | x {.key, .citation, .tag, .value, .ddate, .qtrs, .period_role, .decimals}] AS facts"
)

# Readers of filings start from (:Company)-[:FILED]->(:Filing), the link an ingest writes last for a filing
# (ingest/runs.py): a filing whose ingest died half-way is not seen, nor are its evidence chunks.

EVIDENCE_CHUNKS_PAGE = (
    "MATCH (c:Chunk) WHERE c.kind = 'evidence' AND c.id > $after\n"
    "  AND EXISTS { (:Company)-[:FILED]->(:Filing {adsh: c.adsh}) }\n"
    "WITH c ORDER BY c.id LIMIT $limit\n"
    "OPTIONAL MATCH (f:Filing {adsh: c.adsh})\n"
    "RETURN c.id AS id, c.adsh AS adsh, c.fact_key AS fact_key, c.text AS text,\n"
    "       f.accepted AS accepted, f.filed AS filed\n"
    "ORDER BY c.id"
)
"""One page of evidence sentences (keyset on ``c.id``), each with its filing's ``accepted`` and ``filed``
(when the sentence became public: :func:`retrieval.facts.fact_map.filing_available_at`)."""

DELETE_FACTS_OF_FILINGS = (
    "UNWIND $adshs AS a\n"
    "MATCH (:Filing {adsh: a})-[:REPORTS]->(x:Fact)\n"
    "CALL (x) { OPTIONAL MATCH (c:Chunk)-[:EVIDENCE_FOR]->(x) DETACH DELETE c, x }\n"
    "IN TRANSACTIONS OF 5000 ROWS"
)

# --------------------------------------------------------------------------- knowledge-graph extraction

MERGE_KG_SCHEMA = (
    "MERGE (s:KGSchema {version: $version})\n"
    "ON CREATE SET s.created_at = datetime()\n"
    "SET s.document = $document, s.entity_types = $entity_types, s.relations = $relations"
)

TEXT_CHUNKS_FOR_EXTRACTION = (
    "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk)\n"
    "WHERE c.kind = 'text' AND ($families IS NULL OR d.source_family IN $families)\n"
    "  AND ($documents IS NULL OR d.id IN $documents)\n"
    "OPTIONAL MATCH (x:Extraction {id: c.id + ':' + $suffix})\n"
    "WITH c, d, x WHERE x IS NULL OR x.status <> 'done' OR $redo\n"
    "OPTIONAL MATCH (d)-[:HAS_CHUNK]->(p:Chunk) WHERE p.kind = 'text' AND p.seq = c.seq - 1\n"
    "RETURN c.id AS id, c.sentences AS sentences, c.text AS text, d.id AS document,\n"
    "       p.sentences AS previous_sentences, x.status AS status, x {.*} AS record\n"
    "ORDER BY d.id, c.seq, c.id\n"
    "LIMIT coalesce($limit, 10000000)"
)


# --------------------------------------------------------------------------- text ingest

DELETE_STALE_TEXT_CHUNKS = (
    "UNWIND $docs AS d\n"
    "MATCH (:Document {id: d.id})-[:HAS_CHUNK]->(c:Chunk)\n"
    "WHERE c.kind = 'text' AND NOT c.id IN d.keep\n"
    "DETACH DELETE c\n"
    "RETURN count(*) AS removed"
)
"""Remove each document's text chunks whose id is not in ``keep`` (its text or the chunk settings
changed); ``$docs`` is ``[{id, keep: [chunk ids]}]``. Returns ``removed``."""


# --------------------------------------------------------------------------- entity resolution and clustering
# (seed 004, sections 3.1-3.2: generation/kgbuild/resolution.py, finkg/pipelines/clusters.py)

ENTITY_RELATION_TYPES = ("AFFECT", "INDICATE", "BELONG_TO", "EQUAL_TO", "MAY_LEAD_TO")

EXISTING_ENTITY_IDS = "UNWIND $ids AS id\nMATCH (e:Entity {id: id})\nRETURN e.id AS id"

WRITE_NEW_ENTITIES = (
    "UNWIND $rows AS row\n"
    "MERGE (e:Entity {id: row.id})\n"
    "ON CREATE SET e.name = row.name, e.type = row.type, e.key = row.key, e.aliases = []\n"
    "SET e += row.props"
)

# A surface form not yet known for the entity joins its aliases (the name itself is never an alias).
ADD_ENTITY_ALIASES = (
    "UNWIND $rows AS row\n"
    "MATCH (e:Entity {id: row.id})\n"
    "WITH e, [a IN row.names WHERE a <> e.name AND NOT a IN coalesce(e.aliases, [])] AS new\n"
    "WHERE size(new) > 0\n"
    "SET e.aliases = coalesce(e.aliases, []) + new\n"
    "RETURN count(e) AS updated"
)

# One hop per call: the caller repeats until no id has a merge record (chains A -> B -> C).
ENTITY_REDIRECTS = (
    "UNWIND $ids AS id\n"
    "MATCH (m:EntityMerge {id: id})\n"
    "OPTIONAL MATCH (m)-[:MERGED_INTO]->(s:Entity)\n"
    "RETURN id, coalesce(s.id, m.into) AS into"
)

ENTITY_RELATIONSHIP_TYPES = (
    "UNWIND $ids AS id\nMATCH (e:Entity {id: id})-[r]-()\nRETURN DISTINCT type(r) AS type ORDER BY type"
)


def move_entity_relationships(rel_type: str, direction: str) -> str:
    """Move every ``rel_type`` relationship of merged entities to their survivors, one statement per
    relationship type and direction (no APOC: a type cannot be a parameter).

    ``UNWIND $pairs`` of ``{from, into}`` entity ids. ``direction`` ``"out"`` moves
    ``(old)-[r]->(x)`` to ``(new)-[r]->(x)`` (a self-loop on ``old`` becomes one on ``new``);
    ``"in"`` moves ``(x)-[r]->(old)`` to ``(x)-[r]->(new)``. Every property is copied. A
    relationship with an ``id`` property (an extracted triple) is recreated as it is, so counts are
    preserved; one without (SAME_AS, MENTIONS, MERGED_INTO) is MERGEd, so the survivor keeps one
    per node pair. Returns ``moved``.

    Raises:
        ValueError: an invalid type name or direction.
    """
    typ = quote(rel_type)
    if direction == "out":
        match = f"MATCH (old:Entity {{id: p.from}})-[r:{typ}]->(x)\n"
        target = "CASE WHEN x = old THEN new ELSE x END AS y"
        create = f"(new)-[r2:{typ}]->(y)"
    elif direction == "in":
        match = f"MATCH (x)-[r:{typ}]->(old:Entity {{id: p.from}}) WHERE x <> old\n"
        target = "x AS y"
        create = f"(y)-[r2:{typ}]->(new)"
    else:
        raise ValueError(f"direction {direction!r}: expected 'out' or 'in'")
    return (
        "UNWIND $pairs AS p\n" + match + "MATCH (new:Entity {id: p.into})\n"
        f"WITH r, new, {target}\n"
        "CALL (r, new, y) {\n"
        "  WITH r, new, y WHERE r.id IS NOT NULL\n"
        f"  CREATE {create} SET r2 = properties(r)\n"
        "}\n"
        "CALL (r, new, y) {\n"
        "  WITH r, new, y WHERE r.id IS NULL\n"
        f"  MERGE {create} ON CREATE SET r2 = properties(r)\n"
        "}\n"
        "DELETE r\n"
        "RETURN count(*) AS moved"
    )


# After its relationships moved: the survivor takes the merged name and aliases, the merge is
# recorded as (:EntityMerge {id: merged id})-[:MERGED_INTO]->(survivor), the merged node goes.
RECORD_ENTITY_MERGES = (
    "UNWIND $pairs AS p\n"
    "MATCH (old:Entity {id: p.from})\n"
    "MATCH (new:Entity {id: p.into})\n"
    "SET new.aliases = reduce(acc = coalesce(new.aliases, []), a IN [old.name] + coalesce(old.aliases, []) |\n"
    "    CASE WHEN a IS NULL OR a = new.name OR a IN acc THEN acc ELSE acc + a END)\n"
    "MERGE (m:EntityMerge {id: p.from})\n"
    "SET m.from = p.from, m.into = p.into, m.from_name = old.name, m.type = old.type,\n"
    "    m.method = p.method, m.score = p.score, m.threshold = p.threshold, m.run = p.run,\n"
    "    m.merged_at = datetime()\n"
    "MERGE (m)-[:MERGED_INTO]->(new)\n"
    "DETACH DELETE old\n"
    "RETURN p.method AS method, count(*) AS merged"
)

ENTITIES_PAGE = (
    "MATCH (e:Entity) WHERE e.id > $after AND ($ids IS NULL OR e.id IN $ids)\n"
    "RETURN e.id AS id, e.type AS type, e.name AS name, e.key AS key,\n"
    "       CASE WHEN e.embedding_model = $model THEN e.embedding END AS embedding,\n"
    "       COUNT { (e)--() } AS degree\n"
    "ORDER BY e.id LIMIT $limit"
)

SET_ENTITY_EMBEDDINGS = (
    "UNWIND $rows AS row\n"
    "MATCH (e:Entity {id: row.id})\n"
    "CALL db.create.setNodeVectorProperty(e, 'embedding', row.embedding)\n"
    "SET e.embedding_model = $model"
)

COMPANY_IDENTIFIERS = "MATCH (c:Company) RETURN c.cik AS cik, c.name AS name, c.ticker AS ticker"

USGAAP_CONCEPTS = (
    "MATCH (c:Concept) WHERE c.version STARTS WITH 'us-gaap'\n"
    "RETURN c.key AS key, c.tag AS tag, c.label AS label ORDER BY c.key"
)

SET_ENTITY_CLUSTERS = (
    "UNWIND $rows AS row\n"
    "MATCH (e:Entity {id: row.id})\n"
    "WHERE e.cluster IS NULL OR e.cluster <> row.cluster OR e.cluster_run IS NULL OR e.cluster_run <> $run\n"
    "SET e.cluster = row.cluster, e.cluster_run = $run\n"
    "RETURN count(e) AS updated"
)


def set_triple_clusters(rel_types: Sequence[str] = ENTITY_RELATION_TYPES) -> str:
    """Set each extracted relationship's ``cluster`` to ``"<head cluster>|<tail cluster>"`` (seed 004,
    section 3.2) and ``cluster_run`` to ``$run``, committing every 5,000 relationships; only
    relationships between entities of ``$ids`` (all when null) and only where the value changes.
    Must run in an auto-commit transaction. Returns ``updated``.
    """
    types = "|".join(quote(t) for t in rel_types)
    return (
        f"MATCH (h:Entity)-[r:{types}]->(t:Entity)\n"
        "WHERE ($ids IS NULL OR (h.id IN $ids AND t.id IN $ids))\n"
        "  AND h.cluster IS NOT NULL AND t.cluster IS NOT NULL\n"
        "  AND (r.cluster IS NULL OR r.cluster <> h.cluster + '|' + t.cluster OR r.cluster_run <> $run)\n"
        "CALL (r, h, t) { SET r.cluster = h.cluster + '|' + t.cluster, r.cluster_run = $run }\n"
        "IN TRANSACTIONS OF 5000 ROWS\n"
        "RETURN count(r) AS updated"
    )


def count_triple_clusters(rel_types: Sequence[str] = ENTITY_RELATION_TYPES) -> str:
    """Count the extracted relationships among ``$ids`` (all when null) and their distinct
    ``cluster`` values; returns ``triples`` and ``clusters``."""
    types = "|".join(quote(t) for t in rel_types)
    return (
        f"MATCH (h:Entity)-[r:{types}]->(t:Entity)\n"
        "WHERE $ids IS NULL OR (h.id IN $ids AND t.id IN $ids)\n"
        "RETURN count(r) AS triples, count(DISTINCT r.cluster) AS clusters"
    )


SHOW_VECTOR_INDEX = (
    "SHOW INDEXES YIELD name, type, labelsOrTypes, properties, options, state\n"
    "WHERE name = $name RETURN name, type, labelsOrTypes, properties, options, state"
)

QUERY_VECTOR_INDEX = (
    "CALL db.index.vector.queryNodes($index, $k, $vector) YIELD node, score\nRETURN node.id AS id, score"
)

EXTRACTION_RECORDS_OF_DOCUMENTS = (
    "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk) WHERE d.id IN $documents AND c.kind = 'text'\n"
    "OPTIONAL MATCH (x:Extraction {id: c.id + ':' + $suffix})\n"
    "RETURN d.id AS document, c.id AS chunk, c.sentences AS sentences, x {.*} AS record\n"
    "ORDER BY d.id, c.seq, c.id"
)
"""Each text chunk of the documents with its (:Extraction) record for ``suffix`` (null when none)."""

EXTRACTION_RECORDS_OF_SUFFIX = (
    "MATCH (x:Extraction {suffix: $suffix})-[:FROM_CHUNK]->(c:Chunk)\n"
    "RETURN c.id AS chunk, c.sentences AS sentences, x {.*} AS record\n"
    "ORDER BY c.id"
)
"""Every stored (:Extraction) record of one schema, model and mode, with its chunk's sentences (to seed
the sentence memo of a resumed run)."""

DELETE_EXTRACTIONS_OF_MODEL = (
    "CALL () { MATCH (:Entity)-[r]->(:Entity) WHERE r.model_id = $model_id DELETE r }\n"
    "CALL () { MATCH (x:Extraction {model_id: $model_id}) DETACH DELETE x }\n"
    "CALL () { MATCH (e:Entity) WHERE NOT (e)-[:AFFECT|INDICATE|BELONG_TO|EQUAL_TO|MAY_LEAD_TO]-()\n"
    "  AND NOT (e)<-[:MERGED_INTO]-() DETACH DELETE e }"
)
"""Forget what one model extracted: its relationships and extraction records, and the entities left
with no relationship (and no merge record pointing at them)."""


# --------------------------------------------------------------------------- knowledge retrieval (seed 004 §3.2)


def triples_for_retrieval(rel_types: Sequence[str] = ENTITY_RELATION_TYPES) -> str:
    """Every extracted triple with its cluster (``"<head cluster>|<tail cluster>"``, or the head and
    tail entity ids when ``finkg cluster`` has not run), source chunk, and its stored embedding when
    ``r.embedding_model = $model`` (else null). Returns ``id, relation, head, tail, head_id, tail_id,
    cluster, chunk_id, embedding, available_at`` (the source chunk's availability time, ISO UTC; null
    when the triple has no chunk)."""
    types = "|".join(quote(t) for t in rel_types)
    return (
        f"MATCH (h:Entity)-[r:{types}]->(t:Entity)\n"
        "OPTIONAL MATCH (c:Chunk {id: r.chunk_id})\n"
        "RETURN r.id AS id, type(r) AS relation, h.name AS head, t.name AS tail, h.id AS head_id,\n"
        "       t.id AS tail_id, coalesce(r.cluster, h.id + '|' + t.id) AS cluster, r.chunk_id AS chunk_id,\n"
        "       CASE WHEN r.embedding_model = $model THEN r.embedding END AS embedding,\n"
        "       c.available_at AS available_at\n"
        "ORDER BY r.id"
    )


def entity_subgraph(rel_types: Sequence[str] = ENTITY_RELATION_TYPES) -> str:
    """The extracted triples of a subgraph, for graph analytics and export: those whose source chunk was
    available at ``$cutoff`` (ISO UTC; null: no time limit; an undated triple is left out when a cutoff is
    given) and belongs to a Document of ``$families`` / with an id in ``$documents`` (null: any). Returns
    ``id, relation, head, head_name, head_type, tail, tail_name, tail_type, chunk_id, available_at``."""
    types = "|".join(quote(t) for t in rel_types)
    return (
        f"MATCH (h:Entity)-[r:{types}]->(t:Entity)\n"
        "OPTIONAL MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk {id: r.chunk_id})\n"
        "WITH h, r, t, c, d\n"
        "WHERE ($cutoff IS NULL OR c.available_at <= $cutoff)\n"
        "  AND ($families IS NULL OR d.source_family IN $families)\n"
        "  AND ($documents IS NULL OR d.id IN $documents)\n"
        "RETURN r.id AS id, type(r) AS relation, h.id AS head, h.name AS head_name, h.type AS head_type,\n"
        "       t.id AS tail, t.name AS tail_name, t.type AS tail_type, r.chunk_id AS chunk_id,\n"
        "       c.available_at AS available_at\n"
        "ORDER BY r.id"
    )


SET_ENTITY_ANALYTICS = (
    "UNWIND $rows AS row\n"
    "MATCH (e:Entity {id: row.id})\n"
    "SET e.pagerank = row.pagerank, e.degree = row.degree, e.component = row.component,\n"
    "    e.community = row.community, e.analytics_run = $run\n"
    "RETURN count(e) AS updated"
)
"""Write each entity's graph analytics (``finkg graph analyze``) and the run that computed them."""

CLEAR_STALE_ENTITY_ANALYTICS = (
    "MATCH (e:Entity) WHERE e.analytics_run IS NOT NULL AND e.analytics_run <> $run\n"
    "CALL { WITH e REMOVE e.pagerank, e.degree, e.component, e.community, e.analytics_run }\n"
    "IN TRANSACTIONS OF 10000 ROWS"
)
"""Remove the analytics of entities an earlier run wrote and the run ``$run`` did not (the last analysis
wins, so Browser never colours by a stale community). Auto-commit (``CALL ... IN TRANSACTIONS``)."""


SET_TRIPLE_EMBEDDINGS = (
    "UNWIND $rows AS row\n"
    "MATCH (:Entity {id: row.head_id})-[r]->(:Entity {id: row.tail_id}) WHERE r.id = row.id\n"
    "CALL db.create.setRelationshipVectorProperty(r, 'embedding', row.vector)\n"
    "SET r.embedding_model = $model\n"
    "RETURN count(r) AS updated"
)
"""Store each triple's embedding (float32) and the model identity on the relationship, found from its
head and tail entities (constrained ids), so a later index load embeds nothing."""

TEXT_CHUNKS_FOR_RETRIEVAL = (
    "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk)\n"
    "WHERE c.kind = 'text' AND ($families IS NULL OR d.source_family IN $families)\n"
    "RETURN c.id AS id, c.text AS text, d.id AS document, d.source_family AS source_family,\n"
    "       c.available_at AS available_at\n"
    "ORDER BY c.id"
)
"""The text chunks the document baselines retrieve from (BM25 and dense over documents), of ``$families``
(null: any)."""

TEXT_CHUNKS_OF_KG_DOCUMENTS = (
    "MATCH (:Entity)-[r]->(:Entity) WHERE r.chunk_id IS NOT NULL\n"
    "WITH DISTINCT r.chunk_id AS source\n"
    "MATCH (d:Document)-[:HAS_CHUNK]->(:Chunk {id: source})\n"
    "WITH DISTINCT d WHERE $families IS NULL OR d.source_family IN $families\n"
    "MATCH (d)-[:HAS_CHUNK]->(c:Chunk) WHERE c.kind = 'text'\n"
    "RETURN c.id AS id, c.text AS text, d.id AS document, d.source_family AS source_family,\n"
    "       c.available_at AS available_at\n"
    "ORDER BY c.id"
)
"""The text chunks of the documents the knowledge graph's triples come from (a relationship's
``chunk_id``): the corpus the document baselines share with triple retrieval (seed 004, Table 2)."""

COMPANY_FILINGS = (
    "MATCH (c:Company)-[:FILED]->(f:Filing)\n"
    "WHERE c.cik = $cik OR toLower(c.name) CONTAINS toLower($name)\n"
    "RETURN c.cik AS cik, c.name AS name, f.adsh AS adsh, f.form AS form, f.period AS period, f.filed AS filed,\n"
    "       f.accepted AS accepted\n"
    "ORDER BY f.period DESC, f.filed DESC, f.adsh DESC"
)
"""The filings of the companies a question names, by CIK (``$cik``, an integer or null) or by a
case-insensitive part of the name, latest period first."""

COMPANY_CONCEPT_FACTS = (
    "MATCH (c:Company)-[:FILED]->(f:Filing)-[:REPORTS]->(x:Fact)\n"
    "WHERE (c.cik = $cik OR ($name IS NOT NULL AND toLower(c.name) CONTAINS toLower($name)))\n"
    "  AND x.tag IN $tags AND x.ddate = $ddate AND x.uom = $uom\n"
    "RETURN c.cik AS cik, c.name AS company, c.sic AS sic, f.adsh AS adsh, f.form AS form, f.filed AS filed,\n"
    "       f.accepted AS accepted, x.key AS key, x.citation AS citation, x.tag AS tag, x.value AS value,\n"
    "       x.ddate AS ddate, x.qtrs AS qtrs, x.uom AS uom, x.decimals AS decimals, x.period_role AS period_role\n"
    "ORDER BY cik, f.filed DESC, f.adsh DESC, key"
)
"""The facts with a tag of ``$tags`` at period end ``$ddate`` (``YYYYMMDD``) in unit ``$uom`` that the filings
of a company report, the company named by CIK (``$cik``, an integer or null) or by a case-insensitive part of its
name (``$name`` or null); comparatives included (a 10-Q states the prior year's figures too). The analyst agent's
``fact_lookup`` (:mod:`generation.agent.facts`) resolves synonyms and picks among them."""


COMPANY_MATCHES = (
    "MATCH (c:Company) WHERE c.cik = $cik OR toLower(c.name) CONTAINS toLower($name)\n"
    "   OR toLower(coalesce(c.ticker, '')) = toLower($name)\n"
    "RETURN c.cik AS cik, c.name AS name ORDER BY c.name LIMIT 10"
)
"""Companies named by CIK (``$cik``, an integer or null), ticker, or a case-insensitive part of the name."""

FACT_HISTORY = (
    "MATCH (c:Company {cik: $cik})-[:FILED]->(f:Filing)-[:REPORTS]->(x:Fact)\n"
    "WHERE x.tag IN $tags AND ($uom IS NULL OR x.uom = $uom)\n"
    "RETURN x.key AS key, x.tag AS tag, x.ddate AS ddate, x.qtrs AS qtrs, x.uom AS uom, x.value AS value,\n"
    "       f.adsh AS adsh, f.form AS form, f.filed AS filed\n"
    "ORDER BY ddate, qtrs, filed, adsh"
)
"""Every fact of company ``$cik`` reported under one of ``$tags`` (in ``$uom``; null: any), with the filing
that reported it: a fact's history across filings (``finkg facts history``). Only filings linked by
``FILED`` (complete ones) count."""


# --------------------------------------------------------------------------- reports (seed 004 §3.3)

DELETE_REPORT_LINKS = "MATCH (:Report {id: $id})-[c:CITES]->() DELETE c"
"""Remove a report's citation links before it is written again (a redo replaces them)."""

# --------------------------------------------------------------------------- AKShare indicators and financial facts
# (seed 004, sections 2 and 3.3: ingest/market/akshare.py, finkg/pipelines/indicators.py, retrieval/facts/indicators.py)

INDICATOR_SERIES = (
    "MATCH (i:Indicator {code: $code})-[:HAS_OBSERVATION]->(o:Observation)\n"
    "WHERE o.available_at <= $cutoff AND o.date >= date($start)\n"
    "RETURN i.name AS name, i.unit AS unit, i.frequency AS frequency, o.date AS date, o.value AS value\n"
    "ORDER BY o.date"
)
"""The observations of Indicator ``$code`` dated on or after ``$start`` (ISO date) and available at ``$cutoff``
(ISO UTC): ``name, unit, frequency, date, value`` by date (a report's chart of a cited indicator)."""

INDICATOR_FACT_ROWS = (
    "MATCH (i:Indicator) WHERE $codes IS NULL OR i.code IN $codes\n"
    "CALL (i) {\n"
    "  MATCH (i)-[:HAS_OBSERVATION]->(o:Observation) WHERE o.available_at <= $cutoff\n"
    "  WITH o ORDER BY o.date DESC LIMIT 1\n"
    "  WITH o WHERE $oldest IS NULL OR o.date >= date($oldest)\n"
    "  RETURN o\n"
    "}\n"
    "CALL (i, o) {\n"
    "  OPTIONAL MATCH (i)-[:HAS_OBSERVATION]->(p:Observation)\n"
    "  WHERE p.date < o.date AND p.available_at <= $cutoff\n"
    "  WITH p ORDER BY p.date DESC LIMIT 1\n"
    "  RETURN p {.id, .date, .value} AS previous\n"
    "}\n"
    "CALL (i, o) {\n"
    "  UNWIND $months AS m\n"
    "  CALL (i, o, m) {\n"
    "    WITH o.date - duration({months: m}) AS day, date.truncate('month', o.date) - duration({months: m}) AS month\n"
    "    OPTIONAL MATCH (i)-[:HAS_OBSERVATION]->(q:Observation)\n"
    "    WHERE q.available_at <= $cutoff AND CASE i.frequency\n"
    "      WHEN 'monthly' THEN date.truncate('month', q.date) = month\n"
    "      ELSE q.date <= day AND q.date >= day - duration({days: $max_gap_days}) END\n"
    "    WITH q ORDER BY q.date DESC LIMIT 1\n"
    "    RETURN q {.id, .date, .value, months: m} AS back\n"
    "  }\n"
    "  RETURN collect(back) AS lookbacks\n"
    "}\n"
    "RETURN i {.code, .name, .unit, .frequency, .category, .source_function} AS indicator,\n"
    "       o {.id, .date, .value, .available_at} AS latest, previous, lookbacks\n"
    "ORDER BY i.code"
)
"""For each Indicator of ``$codes`` (all when null): its latest Observation available at ``$cutoff`` (an ISO UTC
string; ``available_at <= $cutoff``), the observation before it, and for each ``m`` of ``$months`` the
observation ``m`` months earlier (monthly series: the same calendar month; daily series: the last one on or
before the day, at most ``$max_gap_days`` before it), each also available at ``$cutoff``. Indicators with no
available observation, or whose latest one is dated before ``$oldest`` (an ISO date; null: no limit), give no
row. Returns ``indicator``, ``latest``, ``previous`` (null when none) and
``lookbacks`` (``[{id, date, value, months}]``, missing ones left out)."""


def string_literal(value: str) -> str:
    """``value`` as a single-quoted Cypher string literal (backslashes and quotes escaped), for the
    statements a person pastes into Neo4j Browser, where no parameters can travel."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def report_browser_query(report_id: str | None = None) -> str:
    """The statement a person pastes into Neo4j Browser to see a report and what it cites (all reports
    when ``report_id`` is None); the id is quoted as a Cypher string literal."""
    if report_id is None:
        return "MATCH (r:Report)-[c:CITES]->(x) RETURN r, c, x"
    return f"MATCH (r:Report {{id: {string_literal(report_id)}}})-[c:CITES]->(x) RETURN r, c, x"


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


# --------------------------------------------------------------------------- hybrid retrieval (seed 002 §3.2, seed 000 §3.3)

HYBRID_CHUNKS_PAGE = (
    "MATCH (c:Chunk) WHERE c.id > $after\n"
    "  AND ($corpus IS NULL OR c.corpus = $corpus) AND ($kinds IS NULL OR c.kind IN $kinds)\n"
    "  AND (coalesce(c.kind, '') <> 'evidence' OR EXISTS { (:Company)-[:FILED]->(:Filing {adsh: c.adsh}) })\n"
    "OPTIONAL MATCH (d:Document)-[:HAS_CHUNK]->(c)\n"
    "WITH c, d WHERE $families IS NULL OR coalesce(c.source_family, d.source_family) IN $families\n"
    "WITH c, d ORDER BY c.id LIMIT $limit\n"
    "RETURN c.id AS id, c.text AS text, coalesce(c.document_id, d.id) AS document,\n"
    "       coalesce(c.source_family, d.source_family) AS source_family, c.available_at AS available_at,\n"
    "       coalesce(d.tickers, CASE WHEN d.ticker IS NULL THEN [] ELSE [d.ticker] END) AS tickers,\n"
    "       CASE WHEN c.embedding_model = $model THEN c.embedding END AS embedding\n"
    "ORDER BY c.id"
)
"""One page (keyset on ``c.id`` after ``$after``, at most ``$limit`` chunks) of the chunks
hybrid retrieval indexes: of ``$corpus`` (``Chunk.corpus``; null: any), ``$kinds`` and ``$families`` (null:
any), with the document's tickers and the stored embedding when ``embedding_model = $model`` (else null);
an empty page means no chunk is left."""

SET_CHUNK_EMBEDDINGS = (
    "UNWIND $rows AS row\n"
    "MATCH (c:Chunk {id: row.id})\n"
    "CALL db.create.setNodeVectorProperty(c, 'embedding', row.vector)\n"
    "SET c.embedding_model = $model\n"
    "RETURN count(c) AS updated"
)
"""Store each chunk's embedding (float32 vector property) and the embedder identity ``$model``."""

READ_CORPUS_ALPHA = (
    "MATCH (c:Corpus {name: $name})\n"
    "RETURN c {.name, .hybrid_alpha, .hybrid_alpha_metric, .hybrid_alpha_queries, .hybrid_alpha_score,\n"
    "          .hybrid_alpha_step, .hybrid_alpha_swept_at, .hybrid_alpha_embedding_model} AS props"
)
"""A corpus's swept hybrid alpha and the sweep's metadata (seed 002 §5.4)."""


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
