"""Cluster-weighted triple retrieval, TFR (seed 004 section 3.2) and dense triples."""
