"""Desk-risk memos (seed 003): claims, drafts of the four systems, rendering, LLM prose."""
