"""Metrics shared by evaluations: TAT-QA EM/F1, ROUGE-L, BERTScore, LLM judge."""
