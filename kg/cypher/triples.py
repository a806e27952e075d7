"""The knowledge-graph subgraph: extraction records, entities, resolution, clustering, triple retrieval and analytics (seed 004 §3.1-3.2)."""

from __future__ import annotations

from collections.abc import Sequence

from kg.cypher.core import quote

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
    "OPTIONAL MATCH (d)-[:HAS_CHUNK]->(p:Chunk) WHERE p.kind = 'text' AND p.seq = c.seq - 1\n"
    "RETURN c.id AS id, c.sentences AS sentences, d.id AS document, p.sentences AS previous_sentences,\n"
    "       x {.status, .input_digest} AS state, CASE WHEN x.status <> 'done' THEN x {.*} END AS record\n"
    "ORDER BY d.id, c.seq, c.id"
)
"""Each text chunk of the selected documents with its (:Extraction) ledger state for ``suffix``, and its record
only where not done (a stored stage a resumed run may go on from; nulls when none): the pipeline decides which
are pending (:func:`kg.ledger.is_pending`: a chunk's input digest is computed from its sentences, which Cypher
cannot hash)."""


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


def delete_stale_triples(rel_types: Sequence[str] = ENTITY_RELATION_TYPES) -> str:
    """Per ``$rows`` item ``{extraction_id, chunk, keep}``: delete the relationships the chunk's earlier
    extraction (``extraction_id``) wrote that its new one does not (``id`` not in ``keep``), found through the
    entities the chunk mentions; returns ``updated`` (relationships deleted, for :meth:`kg.BatchWriter.run_batches`)."""
    types = "|".join(quote(t) for t in rel_types)
    return (
        "UNWIND $rows AS row\n"
        "MATCH (:Chunk {id: row.chunk})-[:MENTIONS]->(:Entity)-[r:" + types + "]->(:Entity)\n"
        "WHERE r.extraction_id = row.extraction_id AND NOT r.id IN row.keep\n"
        "WITH DISTINCT r DELETE r\n"
        "RETURN count(*) AS updated"
    )


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
