"""``search_evidence(query, as_of)``: the retrieval contract as an agent tool, point in time.

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.4 ("Grounded Data Retrieval": every lookup runs in
the tool backend, the model only names what it wants) and ../shared/seeds/000_79d55a8598b40f79.txt, section 3.3
(future documents are excluded before scoring). The tool searches any number of
:class:`retrieval.contract.Retriever` sources (XBRL and indicator facts, knowledge-graph triples, text chunks)
as of a time and returns each item with its id, kind, text and ``available_at``.

Point in time, twice over: the cutoff is the earlier of the LLM's ``as_of`` and the question's own date
(``ceiling``: the agent can never look past the question), every source removes later items before scoring (the
contract), and the tool drops any item dated after the cutoff again before returning (an item never appears
before its date, whatever a source does). Deterministic: fact lookups (which do not rank, every fact scores
1.0) are ranked here by the query's words they contain (ties: the lookup's order; facts sharing no word are
left out); triples and chunks keep their retriever's order; the sources are interleaved round-robin, an id
returned once, at most ``k`` items.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from generation.agent.gate import evidence_numbers
from generation.agent.results import ToolError, ToolResult, tool_call
from kg.errors import RetrievalError
from retrieval.contract import AsOf, Evidence, Retriever, as_of_cutoff, available

MAX_K = 10
"""The most items one call returns."""

SEARCH_EVIDENCE_SCHEMA: dict[str, Any] = {
    "description": (
        "Search the evidence public by as_of: XBRL and indicator facts, knowledge-graph triples, text chunks. "
        "Returns items with id, kind, text and available_at (never later than as_of or the question's date)."
    ),
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "what to look for, e.g. 'current assets Johnson & Johnson'"},
        "as_of": {"type": "string", "description": "YYYY-MM-DD: only evidence public by the end of that day"},
        "k": {"type": "integer", "description": f"items to return, 1 to {MAX_K} (default 5)"},
    },
    "required": ["query", "as_of"],
}

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "and",
        "or",
        "in",
        "on",
        "at",
        "to",
        "for",
        "by",
        "with",
        "what",
        "how",
        "is",
        "are",
        "was",
        "were",
        "did",
        "does",
        "do",
        "its",
        "it",
        "their",
        "from",
        "as",
    ]
)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and (len(w) > 2 or w.isdigit())}


class ScopedRetriever:
    """A :class:`retrieval.contract.Retriever` with fixed filters (e.g. a company-fact lookup bound to the companies
    a question names); a call's own filters are added to them."""

    def __init__(self, retriever: Retriever, filters: Mapping[str, Any], name: str | None = None) -> None:
        self.retriever, self.filters = retriever, dict(filters)
        self.name = name or str(getattr(retriever, "name", type(retriever).__name__))

    def search(
        self, query: str, *, as_of: AsOf | None, k: int | None = None, filters: Mapping[str, Any] | None = None
    ) -> list[Evidence]:
        """The wrapped retriever's ``search`` with the fixed filters (see the contract)."""
        return self.retriever.search(query, as_of=as_of, k=k, filters={**self.filters, **(filters or {})})


def _ranked_facts(items: list[Evidence], query: str) -> list[Evidence]:
    words = _words(query)
    scored = [(len(words & _words(e.text)), i, e) for i, e in enumerate(items)]
    return [e for n, _, e in sorted(scored, key=lambda t: (-t[0], t[1])) if n > 0]


def evidence_links(e: Evidence) -> dict[str, list[str]]:
    """The graph nodes behind an item: ``{"Fact": [keys], "Observation": [ids], "Chunk": [ids]}`` (a fact's cited
    nodes, a chunk itself, a triple's source chunk)."""
    out: dict[str, list[str]] = {"Fact": [], "Observation": [], "Chunk": []}
    if e.kind == "fact":
        for label, _, key in e.metadata.get("cites", ()) or ():
            if label in out:
                out[label].append(str(key))
    elif e.kind == "chunk":
        out["Chunk"].append(e.id)
    elif e.kind == "triple" and e.source_key:
        out["Chunk"].append(e.source_key)
    return out


def search_evidence(
    sources: Sequence[Retriever], query: str, as_of: str, k: int = 5, *, ceiling: AsOf | None = None
) -> ToolResult:
    """Search ``sources`` for ``query`` as of ``as_of`` (see the module doc).

    Args:
        sources: the retrievers searched (facts, triples, chunks), in the order they are interleaved.
        query: what to look for. as_of: ``YYYY-MM-DD`` (or an ISO time): the cutoff the LLM asks for.
        k: items to return, 1 to :data:`MAX_K`. ceiling: the question's date; the cutoff used is the earlier of the
            two (None: ``as_of`` alone).

    Returns:
        :class:`ToolResult`: ``value`` the items (``{id, kind, text, available_at, source_key, source}``, best first),
        ``numbers`` every number their texts state, ``detail`` ``{as_of: the cutoff used, returned, used: {Fact,
        Observation, Chunk}: the graph nodes behind the items}``; an error result for an empty query, a ``k`` out of
        range or an ``as_of`` that is not a date.

    Raises:
        GraphError, RetrievalError: a source failed (Neo4j unavailable ...): the machinery, not the LLM's input.
    """
    args = {"query": query, "as_of": as_of, "k": k}

    def body() -> ToolResult:
        if not isinstance(query, str) or not query.strip():
            raise ToolError("query must be non-empty text naming what to look for")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise ToolError(f"k must be a whole number from 1 to {MAX_K}, got {k!r}")
        try:
            cutoff = as_of_cutoff(as_of if isinstance(as_of, str) else None)
        except RetrievalError:
            raise ToolError(
                f"as_of must be a date YYYY-MM-DD (the question's date or earlier), got {as_of!r}"
            ) from None
        if ceiling is not None:
            cutoff = min(cutoff, as_of_cutoff(ceiling))
        lists: list[list[tuple[str, Evidence]]] = []
        for src in sources:
            name = str(getattr(src, "name", None) or getattr(src, "system", None) or type(src).__name__)
            got = [e for e in src.search(query, as_of=cutoff) if available(e.available_at, cutoff, "keep")]
            facts = _ranked_facts([e for e in got if e.kind == "fact"], query)
            lists.append([(name, e) for e in facts + [e for e in got if e.kind != "fact"]])
        picked: list[tuple[str, Evidence]] = []
        seen: set[str] = set()
        for rank in range(max((len(x) for x in lists), default=0)):
            for got in lists:
                if rank < len(got) and got[rank][1].id not in seen and len(picked) < k:
                    seen.add(got[rank][1].id)
                    picked.append(got[rank])
        items = [
            {
                "id": e.id,
                "kind": e.kind,
                "text": e.text,
                "available_at": e.available_at,
                "source_key": e.source_key,
                "source": name,
            }
            for name, e in picked
        ]
        used: dict[str, list[str]] = {"Fact": [], "Observation": [], "Chunk": []}
        for _, e in picked:
            for label, keys in evidence_links(e).items():
                used[label] += [x for x in keys if x not in used[label]]
        numbers = tuple(evidence_numbers([e.text for _, e in picked]))
        return ToolResult(
            "search_evidence", args, items, numbers, {"as_of": cutoff, "returned": len(items), "used": used}
        )

    return tool_call("search_evidence", args, body)
