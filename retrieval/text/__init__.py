"""Text retrieval: TF-IDF evidence, BM25/dense documents, hybrid BM25+dense, reranking, point-in-time pools."""
