"""Evaluations and benchmarks' shared metrics: one module per benchmark."""
