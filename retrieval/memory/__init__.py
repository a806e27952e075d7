"""The market-feedback source memory (seed 000 section 3.5), a reranker of evidence."""
