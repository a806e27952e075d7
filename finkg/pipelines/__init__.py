"""Pipelines that bind the settings to the rooms: ingest runs, KG build, memo and report batches."""
