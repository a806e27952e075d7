"""One retrieval interface over the knowledge sources the generators use: TFR and its baselines.

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, section 3.2 (TFR, cluster-weighted triples) and Table 2
(baselines: BM25 over documents, dense over documents, dense over triples, and no retrieval). Every
system returns the same :class:`Knowledge` items, so the two-stage generator and the evaluation swap them
by name (:data:`SYSTEMS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from retrieval.contract import AsOf, Evidence, as_of_cutoff
from retrieval.text.documents import DocumentIndex, ScoredPassage
from retrieval.triples.tfr import ScoredTriple, TripleIndex

SYSTEMS = ("tfr", "dense-triples", "bm25-docs", "dense-docs", "none")
"""``tfr``: cluster-weighted triples (section 3.2); ``dense-triples``: top-k triples; ``bm25-docs`` and
``dense-docs``: top-k text chunks; ``none``: no retrieval."""


@dataclass(frozen=True)
class Knowledge:
    """One retrieved piece of knowledge.

    Attributes:
        id: the triple's relationship id or the chunk id. kind: ``triple`` or ``passage``.
        text: what the LLM is shown. score: cosine similarity or BM25 score.
        cluster, cluster_weight: the triple's cluster and its TFR weight (None otherwise).
        chunk_id: the source chunk (a triple's provenance, or the passage itself).
        head_id, tail_id: a triple's entity ids (None for passages).
        available_at: when its source became available (ISO UTC; None when undated).
    """

    id: str
    kind: str
    text: str
    score: float
    cluster: str | None = None
    cluster_weight: float | None = None
    chunk_id: str | None = None
    head_id: str | None = None
    tail_id: str | None = None
    available_at: str | None = None


def _from_triple(s: ScoredTriple) -> Knowledge:
    t = s.triple
    return Knowledge(
        t.id, "triple", t.text, s.score, t.cluster, s.cluster_weight, t.chunk_id, t.head_id, t.tail_id, t.available_at
    )


def _from_passage(s: ScoredPassage) -> Knowledge:
    return Knowledge(
        s.passage.id, "passage", s.passage.text, s.score, chunk_id=s.passage.id, available_at=s.passage.available_at
    )


class KnowledgeRetriever:
    """Retrieves ``k`` knowledge items for a query with one of :data:`SYSTEMS`.

    Args:
        system: a name from :data:`SYSTEMS`.
        k: items per query; top_n: TFR's candidate pool (n >> k); temperature: TFR's softmax temperature.
        triples: the triple index (``tfr``, ``dense-triples``); documents: the chunk index (``*-docs``).

    Raises:
        ValueError: an unknown system, or the index the system needs is missing.
    """

    def __init__(
        self,
        system: str,
        k: int = 10,
        top_n: int = 100,
        temperature: float = 0.1,
        triples: TripleIndex | None = None,
        documents: DocumentIndex | None = None,
    ) -> None:
        if system not in SYSTEMS:
            raise ValueError(f"unknown retrieval system {system!r}: one of {', '.join(SYSTEMS)}")
        if system in ("tfr", "dense-triples") and (triples is None or len(triples) == 0):
            raise ValueError(
                f"retrieval system {system!r} needs extracted triples: run `finkg extract` and `finkg cluster` first"
            )
        if system.endswith("-docs") and documents is None:
            raise ValueError(f"retrieval system {system!r} needs text chunks: run `finkg ingest text` first")
        self.system, self.k, self.top_n, self.temperature = system, k, top_n, temperature
        self.triples, self.documents = triples, documents

    def retrieve(self, query: str, *, as_of: AsOf | None) -> list[Knowledge]:
        """The knowledge for ``query`` that was available at ``as_of``, best first (TFR: grouped by cluster
        weight). Later items are removed before scoring (:mod:`retrieval.contract`).

        Raises:
            AsOfRequired: ``as_of`` is None (a report or an answer must say when it is written).
        """
        return self._retrieve(query, as_of_cutoff(as_of), self.k)

    def _retrieve(self, query: str, as_of: str, k: int) -> list[Knowledge]:
        if self.system == "none" or k <= 0:
            return []
        triples, documents = self.triples, self.documents
        if self.system == "tfr":
            assert triples is not None  # checked in __init__
            return [
                _from_triple(s)
                for s in triples.cluster_weighted(query, k, max(self.top_n, k), self.temperature, as_of=as_of)
            ]
        if self.system == "dense-triples":
            assert triples is not None  # checked in __init__
            return [_from_triple(s) for s in triples.dense(query, k, as_of=as_of)]
        assert documents is not None  # checked in __init__
        if self.system == "bm25-docs":
            return [_from_passage(s) for s in documents.bm25(query, k, as_of=as_of)]
        return [_from_passage(s) for s in documents.dense(query, k, as_of=as_of)]

    def search(
        self, query: str, *, as_of: AsOf | None, k: int | None = None, filters: Mapping[str, Any] | None = None
    ) -> list[Evidence]:
        """:meth:`retrieve` under the :class:`retrieval.contract.Retriever` contract (one :class:`Evidence` per item).

        Args:
            k: items (default: the retriever's ``k``). filters: ``{"kind": "triple" | "chunk"}`` keeps one kind.

        Raises:
            AsOfRequired: ``as_of`` is None.
        """
        items = self._retrieve(query, as_of_cutoff(as_of), self.k if k is None else k)
        out = [
            Evidence(
                id=x.id,
                text=x.text,
                score=x.score,
                kind="triple" if x.kind == "triple" else "chunk",
                source_key=x.chunk_id,
                available_at=x.available_at,
                metadata={"cluster": x.cluster, "cluster_weight": x.cluster_weight, "retriever": self.system},
            )
            for x in items
        ]
        wanted = (filters or {}).get("kind")
        return [e for e in out if wanted is None or e.kind == wanted]
