"""Document-level retrieval over the text chunks: the BM25 and dense baselines of TFR.

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, section 4.2 and Table 2 ("BM25 Retrieve" and "Dense
Retrieve": document-level retrieval baselines, Roberts et al. 2020 and Lewis et al. 2020). BM25 is bm25s
(Lucene's BM25 variant, k1 = 1.5, b = 0.75) over the chunks' lower-cased word tokens with English stop
words removed; dense is the cosine similarity of the chunk and query embeddings from the configured encoder
(the same one the triples use), exhaustive in memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kg import Graph, cypher
from retrieval.contract import AsOf, Undated, as_of_cutoff, available
from retrieval.embeddings import Embedder


@dataclass(frozen=True)
class Passage:
    """A text chunk as document retrieval returns it: ``id`` (the Chunk id), ``text``, the Document id,
    its source family and availability time (ISO UTC)."""

    id: str
    text: str
    document: str = ""
    source_family: str = ""
    available_at: str | None = None


@dataclass(frozen=True)
class ScoredPassage:
    """A retrieved passage and its score (BM25 score or cosine similarity)."""

    passage: Passage
    score: float


class DocumentIndex:
    """BM25 and dense retrieval over a fixed list of passages.

    Args:
        passages: the corpus; embedder: the dense encoder (None: :meth:`dense` raises).
        undated: what an ``as_of`` retrieval does with passages without ``available_at``: ``drop`` (the
            graph's chunks) or ``keep`` (one question's own context; see :mod:`retrieval.contract`).

    Raises:
        ValueError: an empty corpus.
    """

    def __init__(
        self, passages: Sequence[Passage], embedder: Embedder | None = None, undated: Undated = "keep"
    ) -> None:
        if not passages:
            raise ValueError("no passages to index: ingest text first (`finkg ingest text ...`)")
        import bm25s  # lazy: commands that never rank documents do not pay for loading it

        self.passages = list(passages)
        self.embedder = embedder
        self._bm25 = bm25s.BM25()
        self._bm25.index(
            bm25s.tokenize([p.text for p in self.passages], stopwords="en", show_progress=False), show_progress=False
        )
        self._vectors: np.ndarray | None = None
        self.undated: Undated = undated

    def allowed(self, as_of: AsOf | None) -> np.ndarray:
        """Boolean mask of the passages available at ``as_of`` (all when None).

        Raises:
            RetrievalError: an unreadable ``as_of``.
        """
        if as_of is None:
            return np.ones(len(self.passages), dtype=bool)
        cutoff = as_of_cutoff(as_of)
        return np.array([available(p.available_at, cutoff, self.undated) for p in self.passages], dtype=bool)

    @classmethod
    def from_graph(
        cls,
        graph: Graph,
        embedder: Embedder | None = None,
        families: Sequence[str] | None = None,
        extracted: bool = False,
    ) -> DocumentIndex:
        """The text chunks in the graph (of ``families`` when given; with ``extracted``, only of documents
        that the knowledge graph's triples come from, so document and triple retrieval draw on the same
        corpus, as in seed 004's Table 2, and text ingested for other jobs, e.g. tweets, stays out).

        Raises:
            ValueError: no chunk matches.
        """
        query = cypher.TEXT_CHUNKS_OF_KG_DOCUMENTS if extracted else cypher.TEXT_CHUNKS_FOR_RETRIEVAL
        rows = graph.read(query, {"families": list(families) if families else None})
        if not rows and extracted:
            raise ValueError("no text chunks of documents with extracted triples: run `finkg extract` first")
        return cls(
            [
                Passage(
                    r["id"],
                    r["text"] or "",
                    r["document"],
                    r["source_family"] or "",
                    str(r["available_at"]) if r["available_at"] is not None else None,
                )
                for r in rows
            ],
            embedder,
            undated="drop",
        )

    def bm25(self, query: str, k: int, *, as_of: AsOf | None = None) -> list[ScoredPassage]:
        """The ``k`` passages with the highest BM25 score for ``query`` (score > 0 only), best first; with
        ``as_of``, only passages available then (the others are removed before ranking)."""
        import bm25s

        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        k = min(k, len(self.passages))
        if k <= 0:
            return []
        mask = self.allowed(as_of)
        k = min(k, int(mask.sum()))
        if k <= 0:
            return []
        if as_of is None:
            docs, scores = self._bm25.retrieve(tokens, k=k, show_progress=False)
        else:  # bm25s: a zero weight removes a passage before the top-k is taken
            docs, scores = self._bm25.retrieve(tokens, k=k, show_progress=False, weight_mask=mask.astype(np.float32))
        return [
            ScoredPassage(self.passages[int(i)], float(s)) for i, s in zip(docs[0], scores[0]) if s > 0 and mask[int(i)]
        ]

    def vectors(self) -> np.ndarray:
        """The passages' unit embeddings, ``(n, d)`` float32 (encoded on first use).

        Raises:
            ValueError: the index has no embedder.
        """
        if self.embedder is None:
            raise ValueError("dense document retrieval needs an embedder ([embedding] model_path)")
        if self._vectors is None:
            self._vectors = self.embedder.encode([p.text for p in self.passages])
        return self._vectors

    def dense(self, query: str, k: int, *, as_of: AsOf | None = None) -> list[ScoredPassage]:
        """The ``k`` passages most similar to ``query`` (cosine), best first; with ``as_of``, only passages
        available then."""
        sims = self.vectors() @ self.embedder.encode([query])[0]  # type: ignore[union-attr]
        mask = self.allowed(as_of)
        order = [i for i in np.lexsort((np.arange(len(sims)), -sims)) if mask[i]][:k]
        return [ScoredPassage(self.passages[int(i)], float(sims[i])) for i in order]
