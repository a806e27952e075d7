"""TF-IDF retrieval over evidence sentences (the Text RAG systems' retriever).

Source: ../shared/seeds/003_2b4a46a307636297.txt, "Compared systems": "Text RAG retrieves the top
30 evidence sentences with a TF-IDF vectorizer and cosine similarity"; the query "contains the
issuer name, CIK, accession number, quarter, and the specific financial concepts expected in the
memo". scikit-learn's ``TfidfVectorizer`` (L2-normalized rows, so a dot product is the cosine).
Tokens keep hyphens and digits, so an accession number or a CIK is one token.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kg import Graph, cypher
from retrieval.facts import concepts as cc

TOKEN_PATTERN = r"(?u)\b\w[\w\-]*\w\b|\b\w\b"


@dataclass(frozen=True)
class Hit:
    """One retrieved evidence sentence: rank (1-based), cosine score, chunk id, fact key, text."""

    rank: int
    score: float
    chunk_id: str
    fact_key: str
    adsh: str
    text: str


class EvidenceIndex:
    """A TF-IDF index over evidence chunks.

    Args:
        chunks: rows with ``id, adsh, fact_key, text`` (e.g. from :func:`load_evidence`).

    Raises:
        ValueError: ``chunks`` is empty (there is nothing to retrieve from; ingest first).
    """

    def __init__(self, chunks: Sequence[dict[str, Any]]):
        if not chunks:
            raise ValueError("no evidence chunks in the graph: run `finkg ingest sec ...` first")
        from sklearn.feature_extraction.text import TfidfVectorizer  # imported on use: ~3 s

        self.chunks = list(chunks)
        self.vectorizer = TfidfVectorizer(token_pattern=TOKEN_PATTERN, lowercase=True, sublinear_tf=True)
        self.matrix = self.vectorizer.fit_transform(c["text"] for c in self.chunks)

    def __len__(self) -> int:
        return len(self.chunks)

    def search(self, query: str, k: int = 30) -> list[Hit]:
        """The ``k`` chunks with the highest cosine similarity to ``query`` (ties by chunk order)."""
        query_vector: Any = self.vectorizer.transform([query])
        scores = (self.matrix @ query_vector.T).toarray().ravel()
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]
        return [
            Hit(
                i + 1,
                float(scores[j]),
                self.chunks[j]["id"],
                self.chunks[j]["fact_key"],
                self.chunks[j]["adsh"],
                self.chunks[j]["text"],
            )
            for i, j in enumerate(top)
        ]


def memo_query(filing: dict[str, Any], concepts: Sequence[str] = cc.REQUIRED) -> str:
    """The paper's retrieval query: issuer name, CIK, accession number, quarter, expected concepts
    (their synonym tags and labels)."""
    words = [
        filing.get("name", ""),
        f"CIK {filing.get('cik', '')}",
        f"accession {filing['adsh']}",
        f"fiscal {filing.get('fy') or ''} {filing.get('fp') or ''}",
        str(filing.get("form", "")),
    ]
    for name in concepts:
        c = cc.BY_NAME[name]
        words.append(c.label)
        words.extend(c.synonyms)
    return " ".join(w for w in words if w)


def load_evidence(
    graph: Graph, page: int = 50_000, progress: Callable[[int], None] | None = None
) -> list[dict[str, Any]]:
    """Every evidence chunk in the graph, read in pages of ``page`` rows (keyset pagination)."""
    rows: list[dict[str, Any]] = []
    after = ""
    while True:
        got = graph.read(cypher.EVIDENCE_CHUNKS_PAGE, {"after": after, "limit": page})
        if not got:
            return rows
        rows.extend(got)
        after = got[-1]["id"]
        if progress:
            progress(len(got))
