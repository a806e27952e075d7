"""Every Cypher statement finkg runs, built by small functions (habit borrowed from
neo4j-graphrag-python's ``neo4j_queries.py``).

Labels, relationship types and property keys cannot be query parameters in Cypher, so the
builders here take them as names, validate them against :data:`IDENTIFIER` and quote them with
backticks. Values always travel as parameters (``$rows``), never inside the text.

One module per subgraph or concern; this package re-exports every name, so ``from kg.cypher import X``
works wherever ``X`` lives:

- :mod:`kg.cypher.core`: identifier quoting, batched MERGE/UNWIND writes, counts, string literals;
- :mod:`kg.cypher.schema`: constraints, indexes, the schema version;
- :mod:`kg.cypher.server`: EXPLAIN, components, running transactions;
- :mod:`kg.cypher.runs`: ingest runs and the item ledger of derived outputs;
- :mod:`kg.cypher.facts`: filings, XBRL facts, companies, fact history, AKShare indicator facts;
- :mod:`kg.cypher.text`: documents and chunks (ingest, document retrieval, hybrid);
- :mod:`kg.cypher.triples`: extraction records, entities, resolution, clustering, triple retrieval, analytics;
- :mod:`kg.cypher.reports`: report citations;
- :mod:`kg.cypher.models`: the registry of models finkg trains itself;
- :mod:`kg.cypher.feedback`: point-in-time evidence, the source memory, the market-feedback evaluation.

New statements go into the module of their subgraph (a new module for a new subgraph) and are re-exported here.
"""

from __future__ import annotations

from kg.cypher.core import (
    EXAMPLE_QUERY,
    IDENTIFIER,
    count_nodes,
    count_relationships,
    delete_nodes_in_transactions,
    matched_relationship_rows,
    merge_nodes,
    merge_relationships,
    quote,
    string_literal,
)
from kg.cypher.facts import (
    COMPANY_CONCEPT_FACTS,
    COMPANY_FILINGS,
    COMPANY_MATCHES,
    DELETE_FACTS_OF_FILINGS,
    EVIDENCE_CHUNKS_PAGE,
    FACT_HISTORY,
    FILER_TAG_VALUES,
    FILING_FACT_CANDIDATES,
    FILING_SOURCES,
    FILING_STATEMENT_FACTS,
    INDICATOR_FACT_ROWS,
    INDICATOR_SERIES,
    LIST_FILINGS,
)
from kg.cypher.feedback import (
    APPLY_MEMORY_FEEDBACK,
    DELETE_MEMORY_RUN,
    DELETE_SELECTIONS_OF_RUN,
    DELETE_STALE_SELECTED,
    EVIDENCE_SELECTIONS,
    FEEDBACK_ANCHORS,
    MEMORY_CELLS,
    MEMORY_CELLS_AS_OF,
    MEMORY_FEEDBACK_COUNTS,
    PENDING_MEMORY_FEEDBACK,
    POINT_IN_TIME_CANDIDATES,
    RECORD_MEMORY_FEEDBACK,
    memory_browser_query,
)
from kg.cypher.models import MERGE_TUNED_MODELS, TUNED_MODELS
from kg.cypher.reports import DELETE_REPORT_LINKS, report_browser_query
from kg.cypher.runs import (
    DELETE_CLAIMS_OF_MEMOS,
    HIDDEN_FILINGS,
    INGEST_RUN_STATE,
    INGEST_RUN_STATUS_COUNTS,
    INGEST_RUNS,
    MARK_RUNS_INTERRUPTED,
    RUNNING_INGEST_RUNS,
    ledger_record,
    ledger_state,
)
from kg.cypher.schema import (
    AWAIT_INDEXES,
    READ_SCHEMA_VERSION,
    RECORD_SCHEMA_VERSION,
    SHOW_CONSTRAINTS,
    SHOW_INDEXES,
    create_constraint,
    create_index,
    drop_constraint,
    drop_index,
)
from kg.cypher.server import SERVER_COMPONENTS, SHOW_TRANSACTIONS, TAGGED_TRANSACTIONS, TERMINATE_TRANSACTIONS, explain
from kg.cypher.text import (
    DELETE_STALE_TEXT_CHUNKS,
    HYBRID_CHUNKS_PAGE,
    READ_CORPUS_ALPHA,
    SET_CHUNK_EMBEDDINGS,
    TEXT_CHUNKS_FOR_RETRIEVAL,
    TEXT_CHUNKS_OF_KG_DOCUMENTS,
)
from kg.cypher.triples import (
    ADD_ENTITY_ALIASES,
    CLEAR_STALE_ENTITY_ANALYTICS,
    COMPANY_IDENTIFIERS,
    DELETE_EXTRACTIONS_OF_MODEL,
    ENTITIES_PAGE,
    ENTITY_REDIRECTS,
    ENTITY_RELATION_TYPES,
    ENTITY_RELATIONSHIP_TYPES,
    EXISTING_ENTITY_IDS,
    EXTRACTION_RECORDS_OF_DOCUMENTS,
    EXTRACTION_RECORDS_OF_SUFFIX,
    MERGE_KG_SCHEMA,
    QUERY_VECTOR_INDEX,
    RECORD_ENTITY_MERGES,
    SET_ENTITY_ANALYTICS,
    SET_ENTITY_CLUSTERS,
    SET_ENTITY_EMBEDDINGS,
    SET_TRIPLE_EMBEDDINGS,
    SHOW_VECTOR_INDEX,
    TEXT_CHUNKS_FOR_EXTRACTION,
    USGAAP_CONCEPTS,
    WRITE_NEW_ENTITIES,
    count_triple_clusters,
    entity_subgraph,
    move_entity_relationships,
    set_triple_clusters,
    triples_for_retrieval,
)

__all__ = [
    "ADD_ENTITY_ALIASES",
    "APPLY_MEMORY_FEEDBACK",
    "AWAIT_INDEXES",
    "CLEAR_STALE_ENTITY_ANALYTICS",
    "COMPANY_CONCEPT_FACTS",
    "COMPANY_FILINGS",
    "COMPANY_IDENTIFIERS",
    "COMPANY_MATCHES",
    "DELETE_CLAIMS_OF_MEMOS",
    "DELETE_EXTRACTIONS_OF_MODEL",
    "DELETE_FACTS_OF_FILINGS",
    "DELETE_MEMORY_RUN",
    "DELETE_REPORT_LINKS",
    "DELETE_SELECTIONS_OF_RUN",
    "DELETE_STALE_SELECTED",
    "DELETE_STALE_TEXT_CHUNKS",
    "ENTITIES_PAGE",
    "ENTITY_REDIRECTS",
    "ENTITY_RELATIONSHIP_TYPES",
    "ENTITY_RELATION_TYPES",
    "EVIDENCE_CHUNKS_PAGE",
    "EVIDENCE_SELECTIONS",
    "EXAMPLE_QUERY",
    "EXISTING_ENTITY_IDS",
    "EXTRACTION_RECORDS_OF_DOCUMENTS",
    "EXTRACTION_RECORDS_OF_SUFFIX",
    "FACT_HISTORY",
    "FEEDBACK_ANCHORS",
    "FILER_TAG_VALUES",
    "FILING_FACT_CANDIDATES",
    "FILING_SOURCES",
    "FILING_STATEMENT_FACTS",
    "HIDDEN_FILINGS",
    "HYBRID_CHUNKS_PAGE",
    "IDENTIFIER",
    "INDICATOR_FACT_ROWS",
    "INDICATOR_SERIES",
    "INGEST_RUNS",
    "INGEST_RUN_STATE",
    "INGEST_RUN_STATUS_COUNTS",
    "LIST_FILINGS",
    "MARK_RUNS_INTERRUPTED",
    "MEMORY_CELLS",
    "MEMORY_CELLS_AS_OF",
    "MEMORY_FEEDBACK_COUNTS",
    "MERGE_KG_SCHEMA",
    "MERGE_TUNED_MODELS",
    "PENDING_MEMORY_FEEDBACK",
    "POINT_IN_TIME_CANDIDATES",
    "QUERY_VECTOR_INDEX",
    "READ_CORPUS_ALPHA",
    "READ_SCHEMA_VERSION",
    "RECORD_ENTITY_MERGES",
    "RECORD_MEMORY_FEEDBACK",
    "RECORD_SCHEMA_VERSION",
    "RUNNING_INGEST_RUNS",
    "SERVER_COMPONENTS",
    "SET_CHUNK_EMBEDDINGS",
    "SET_ENTITY_ANALYTICS",
    "SET_ENTITY_CLUSTERS",
    "SET_ENTITY_EMBEDDINGS",
    "SET_TRIPLE_EMBEDDINGS",
    "SHOW_CONSTRAINTS",
    "SHOW_INDEXES",
    "SHOW_TRANSACTIONS",
    "SHOW_VECTOR_INDEX",
    "TAGGED_TRANSACTIONS",
    "TERMINATE_TRANSACTIONS",
    "TEXT_CHUNKS_FOR_EXTRACTION",
    "TEXT_CHUNKS_FOR_RETRIEVAL",
    "TEXT_CHUNKS_OF_KG_DOCUMENTS",
    "TUNED_MODELS",
    "USGAAP_CONCEPTS",
    "WRITE_NEW_ENTITIES",
    "count_nodes",
    "count_relationships",
    "count_triple_clusters",
    "create_constraint",
    "create_index",
    "delete_nodes_in_transactions",
    "drop_constraint",
    "drop_index",
    "entity_subgraph",
    "explain",
    "ledger_record",
    "ledger_state",
    "matched_relationship_rows",
    "memory_browser_query",
    "merge_nodes",
    "merge_relationships",
    "move_entity_relationships",
    "quote",
    "report_browser_query",
    "set_triple_clusters",
    "string_literal",
    "triples_for_retrieval",
]
