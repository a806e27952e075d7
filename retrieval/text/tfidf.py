"""TF-IDF retrieval over evidence sentences (the Text RAG systems' retriever).

Source: ../shared/seeds/003_2b4a46a307636297.txt, "Compared systems": "Text RAG retrieves the top
30 evidence sentences with a TF-IDF vectorizer and cosine similarity"; the query "contains the
issuer name, CIK, accession number, quarter, and the specific financial concepts expected in the
memo". scikit-learn's ``TfidfVectorizer`` (L2-normalized rows, so a dot product is the cosine).
Tokens keep hyphens and digits, so an accession number or a CIK is one token.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kg import Graph, cypher
from kg.errors import RetrievalError
from kg.progress import Tick
from retrieval.contract import AsOf, Evidence, as_of_cutoff
from retrieval.facts import concepts as cc
from retrieval.facts.fact_map import filing_available_at

TOKEN_PATTERN = r"(?u)\b\w[\w\-]*\w\b|\b\w\b"


@dataclass(frozen=True)
class Hit:
    """One retrieved evidence sentence: rank (1-based), cosine score, chunk id, fact key, text, and when
    its filing became public (ISO UTC)."""

    rank: int
    score: float
    chunk_id: str
    fact_key: str
    adsh: str
    text: str
    available_at: str | None = None


class EvidenceIndex:
    """A point-in-time TF-IDF index over evidence chunks (:class:`retrieval.contract.Retriever`).

    A query names its ``as_of``; the chunks public later (their filing's acceptance, see
    :func:`retrieval.facts.fact_map.filing_available_at`; undated ones never) are removed first, and the
    TF-IDF statistics (document frequencies, row norms) are those of the chunks that remain, exactly as
    a ``TfidfVectorizer`` fitted on them alone would give: terms are counted once for every chunk, then
    each as-of subset gets its own IDF (cached per subset, so memos of filings public at the same moment
    share it). When every chunk is available the index is the plain fit over all of them.

    Args:
        chunks: rows with ``id, adsh, fact_key, text`` and ``available_at`` (e.g. from :func:`load_evidence`;
            a row without ``available_at`` is undated).

    Raises:
        ValueError: ``chunks`` is empty (there is nothing to retrieve from; ingest first).
    """

    def __init__(self, chunks: Sequence[dict[str, Any]]):
        if not chunks:
            raise ValueError("no evidence chunks in the graph: run `finkg ingest sec ...` first")
        from sklearn.feature_extraction.text import CountVectorizer  # imported on use: ~3 s

        self.chunks = list(chunks)
        float64: Any = np.float64  # TfidfVectorizer's count dtype: the same float64 arithmetic, bit for bit
        self.counter = CountVectorizer(token_pattern=TOKEN_PATTERN, lowercase=True, dtype=float64)
        counts: Any = self.counter.fit_transform(c["text"] for c in self.chunks)
        self.counts: Any = counts.tocsr()
        times = [(c.get("available_at") or None, i) for i, c in enumerate(self.chunks)]
        dated = sorted((t, i) for t, i in times if t is not None)
        self._times = [t for t, _ in dated]
        self._order = np.asarray([i for _, i in dated], dtype=np.int64)
        self._subsets: dict[int, tuple[np.ndarray, Any, Any, np.ndarray | None]] = {}

    def __len__(self) -> int:
        return len(self.chunks)

    def _subset(self, cutoff: str) -> tuple[np.ndarray, Any, Any, np.ndarray | None]:
        """Rows (ascending) available at ``cutoff``, the TF-IDF transformer fitted on them, their matrix and
        the terms they contain (None: every row, so every term)."""
        from sklearn.feature_extraction.text import TfidfTransformer

        n = bisect.bisect_right(self._times, cutoff)
        if n not in self._subsets:
            rows = np.sort(self._order[:n])
            counts = self.counts if len(rows) == len(self.chunks) else self.counts[rows]
            tfidf = TfidfTransformer(sublinear_tf=True)
            matrix = tfidf.fit_transform(counts) if len(rows) else None
            seen = None
            if len(rows) < len(self.chunks):
                seen = np.zeros(counts.shape[1], dtype=bool)
                seen[counts.indices] = True
            if len(self._subsets) >= 8:
                self._subsets.pop(next(iter(self._subsets)))
            self._subsets[n] = (rows, tfidf, matrix, seen)
        return self._subsets[n]

    def hits(self, query: str, k: int = 30, *, as_of: AsOf | None) -> list[Hit]:
        """The ``k`` chunks public at ``as_of`` with the highest cosine similarity to ``query`` (ties by
        chunk order).

        Raises:
            AsOfRequired: ``as_of`` is None (a memo's is its filing's acceptance time).
        """
        rows, tfidf, matrix, seen = self._subset(as_of_cutoff(as_of))
        if len(rows) == 0 or k <= 0:
            return []
        counts = self.counter.transform([query])
        if seen is not None:  # the vocabulary of the subset: the terms it contains
            counts = counts.multiply(seen).tocsr()
            counts.eliminate_zeros()  # no stored zeros: sublinear tf takes their log
        query_vector: Any = tfidf.transform(counts)
        scores = (matrix @ query_vector.T).toarray().ravel()
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]
        out = []
        for i, j in enumerate(top):
            c = self.chunks[int(rows[j])]
            out.append(
                Hit(i + 1, float(scores[j]), c["id"], c["fact_key"], c["adsh"], c["text"], c.get("available_at"))
            )
        return out

    def search(
        self, query: str, *, as_of: AsOf | None, k: int | None = None, filters: Mapping[str, Any] | None = None
    ) -> list[Evidence]:
        """:meth:`hits` under the :class:`retrieval.contract.Retriever` contract (``k`` default 30; no filters).

        Raises:
            AsOfRequired: ``as_of`` is None. RetrievalError: a filter is given.
        """
        if filters:
            raise RetrievalError(f"TF-IDF evidence retrieval takes no filters, got {sorted(filters)}")
        return [
            Evidence(
                id=h.chunk_id,
                text=h.text,
                score=h.score,
                kind="chunk",
                source_key=h.fact_key,
                available_at=h.available_at,
                source_family="sec",
                metadata={"adsh": h.adsh, "rank": h.rank, "retriever": "tfidf"},
            )
            for h in self.hits(query, 30 if k is None else k, as_of=as_of)
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


def load_evidence(graph: Graph, page: int = 50_000, progress: Tick | None = None) -> list[dict[str, Any]]:
    """Every evidence chunk in the graph (``id, adsh, fact_key, text, available_at``: its filing's
    :func:`retrieval.facts.fact_map.filing_available_at`), read in pages of ``page`` rows (keyset pagination)."""
    rows: list[dict[str, Any]] = []
    after = ""
    while True:
        got = graph.read(cypher.EVIDENCE_CHUNKS_PAGE, {"after": after, "limit": page})
        if not got:
            return rows
        rows.extend(
            {
                "id": r["id"],
                "adsh": r["adsh"],
                "fact_key": r["fact_key"],
                "text": r["text"],
                "available_at": filing_available_at(r["accepted"], r["filed"]),
            }
            for r in got
        )
        after = got[-1]["id"]
        if progress:
            progress(len(got))
