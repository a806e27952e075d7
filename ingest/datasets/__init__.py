"""Evaluation datasets (TAT-QA) read into finkg's fact and passage types."""
