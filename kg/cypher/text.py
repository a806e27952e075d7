"""The text subgraph: documents and chunks, their ingest and retrieval (BM25/dense documents, hybrid)."""

from __future__ import annotations

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

CHUNK_TEXTS = (
    "UNWIND $ids AS cid\n"
    "MATCH (c:Chunk {id: cid})\n"
    "OPTIONAL MATCH (d:Document)-[:HAS_CHUNK]->(c)\n"
    "RETURN c.id AS id, c.text AS text, coalesce(c.document_id, d.id) AS document"
)
"""The text of each chunk of ``$ids`` that exists (in the order asked) and its document's id: the pages a
question over a filing page reads (issue 46 item 4, ``finkg.api.ask_page``)."""
