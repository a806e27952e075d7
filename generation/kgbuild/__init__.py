"""Knowledge-graph build (seed 004 sections 3.1-3.2): schema, LLM triple extraction and verification, entity names, resolution, clustering."""
