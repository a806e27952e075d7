"""Fact lookup: canonical concepts, filing fact maps, indicator and company facts (seed 003, seed 004)."""
