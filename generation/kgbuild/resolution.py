"""Entity resolution for the extracted knowledge graph: one entity per real thing, across runs.

Identity: an entity's id is ``f"{type}:{normalize_name(name)}"`` (:func:`entity_id`), and
``(:Entity {id})`` is unique, so exact duplicates never exist: a second write of the same
(type, normalized name) lands on the same node (:func:`write_entities`). Beyond that,
:func:`plan_merges` finds entities that are one thing under different names, in four stages, each
only among entities of the **same type** (the type is part of an entity's identity in seed 004):

1. ``exact``: the same normalized key (entities written with another normalizer) or an id that
   already has a merge record (written past the redirect).
2. ``identifier``: the name is a company's (``company_key``: "WAL MART STORES INC" = "Wal-Mart
   Stores"), a company's ticker (``Company.ticker`` where the graph has one) or a us-gaap concept's
   label or tag ("Revenues", "Net Income Loss"): the entity gets ``(:Entity)-[:SAME_AS]->
   (:Company|:Concept)``, and entities with the same CIK or concept tag are merged. A name that
   matches two different CIKs (or tags) is ambiguous and linked to neither.
3. ``fuzzy``: rapidfuzz ``token_sort_ratio`` of the keys >= ``fuzzy_threshold`` (0-100).
4. ``embedding``: cosine similarity of the name embeddings >= ``embedding_merge_threshold``.

Default thresholds (92, 0.95) were read off ``bench/clustering.py --sweep``: among 26,624 guarded
kNN pairs of 5,000 real line-item labels, 987 pass fuzzy >= 92 and 1,170 pass embedding >= 0.95,
and 62% / 66% of them carry the same XBRL tag. That share is a floor: most of the others are one
line item under two tags ("other expense" / "other expenses", "total revenues net" / "total net
revenues"); a real miss seen is "dividends paid on common shares" / "... in common shares".

Fuzzy and embedding candidates are the pairs of the exact cosine k-nearest-neighbour graph
(``generation.kgbuild.clustering.knn``: blocking, O(n * k) comparisons instead of O(n^2)); a pair merges only
when :func:`~generation.kgbuild.names.name_guard` agrees (same numbers, same direction words: "CPI above 3%"
stays apart from "CPI above 5%", "revenue increase" from "revenue decrease"). Pairs are grouped
(union-find); each group's survivor is the entity with the most relationships (then the shortest
key, then the smallest id), and a member joins it only when it is itself similar enough **to the
survivor** (no chains of merely pairwise-similar names).

A merge (:func:`apply_merges`) keeps everything: every relationship of the merged entity moves to
the survivor with its properties (per relationship type, batched; see
``kg.cypher.move_entity_relationships``), the merged name and aliases join the survivor's
``aliases``, and ``(:EntityMerge {id: merged id, from, into, method, score, threshold, run,
merged_at})-[:MERGED_INTO]->(survivor)`` records it. The merged node is deleted; its merge record
is the redirect: :func:`resolve_ids` (used by :func:`write_entities` and
:func:`write_relations`) maps a merged id to its survivor, so a later extraction run that
produces the merged name again lands on the survivor.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rapidfuzz import fuzz

from generation.kgbuild.names import (
    ENTITY_TYPES,
    company_key,
    entity_id,
    name_guard,
    normalize_name,
    split_camel_case,
    split_id,
)
from kg import BatchWriter, Graph, WriteStats, batches, cypher
from kg.progress import Tick

__all__ = [
    "ENTITY_TYPES",
    "RELATION_TYPES",
    "Entity",
    "Merge",
    "apply_merges",
    "entity_id",
    "identifier_links",
    "normalize_name",
    "plan_merges",
    "resolve_ids",
    "write_entities",
    "write_relations",
]

RELATION_TYPES = cypher.ENTITY_RELATION_TYPES
METHODS = ("exact", "identifier", "fuzzy", "embedding")
MAX_REDIRECT_HOPS = 32
Progress = Tick  # an item-level callback (kg.progress)


@dataclass
class Entity:
    """One entity as resolution sees it.

    Attributes:
        id, type, key, name: as stored (``key`` = normalized name).
        degree: relationships of the node (survivor choice).
        identifier: ``"cik:<cik>"`` or ``"us-gaap:<tag>"`` once :func:`identifier_links` found one.
    """

    id: str
    type: str
    key: str
    name: str
    degree: int = 0
    identifier: str | None = None


@dataclass(frozen=True)
class Merge:
    """``from_id`` merges into ``into_id`` by ``method`` with ``score`` (fuzzy: 0-100, embedding:
    cosine similarity, exact/identifier: 1.0) against ``threshold`` (None for exact/identifier)."""

    from_id: str
    into_id: str
    method: str
    score: float
    threshold: float | None = None


# --------------------------------------------------------------------------- writes and redirects


def resolve_ids(graph: Graph, ids: Iterable[str], batch_size: int = 5_000) -> dict[str, str]:
    """Where each entity id lives now: itself, or the survivor its merge records lead to.

    Follows ``(:EntityMerge {id})-[:MERGED_INTO]->`` (else the record's ``into``) until an id has
    no merge record (at most 32 hops).

    Returns:
        ``{id: resolved id}`` for every input id.

    Raises:
        ValueError: a redirect cycle (a corrupted merge history), naming the ids.
    """
    resolved = {i: i for i in dict.fromkeys(ids)}
    pending = set(resolved.values())
    for _ in range(MAX_REDIRECT_HOPS):
        if not pending:
            return resolved
        hops: dict[str, str] = {}
        for batch in batches(sorted(pending), batch_size):
            for r in graph.read(cypher.ENTITY_REDIRECTS, {"ids": list(batch)}):
                hops[r["id"]] = r["into"]
        for src, cur in resolved.items():
            if cur in hops:
                resolved[src] = hops[cur]
        pending = {hops[p] for p in pending if p in hops and hops[p] != p}
    raise ValueError(f"entity merge records form a cycle (> {MAX_REDIRECT_HOPS} hops): {sorted(pending)[:5]}")


def write_entities(
    graph: Graph, entities: Iterable[Mapping[str, Any]], batch_size: int = 5_000, progress: Progress | None = None
) -> dict[str, str]:
    """Write extracted entities; each lands on the node its id resolves to.

    Args:
        entities: mappings with ``type`` (one of :data:`ENTITY_TYPES`), ``name`` and optional
            ``props`` (more properties, e.g. ``{"chunk_id": ...}``; set on every write).
        batch_size: rows per transaction.
        progress: called with the rows done after each batch.

    Returns:
        ``{entity_id(type, name): stored id}``: the stored id differs when the name was merged
        into another entity (its survivor), which then gets the name as an alias.

    Raises:
        ValueError: an unknown type or an empty name, naming the row index.
    """
    rows: dict[str, dict[str, Any]] = {}
    names: dict[str, list[str]] = defaultdict(list)
    for i, e in enumerate(entities):
        try:
            eid = entity_id(e["type"], e["name"])
        except (KeyError, ValueError) as exc:
            raise ValueError(f"entity row {i}: {exc}") from None
        typ, key = split_id(eid)
        rows.setdefault(
            eid,
            {"id": eid, "type": typ, "key": key, "name": str(e["name"]).strip(), "props": dict(e.get("props") or {})},
        )
        names[eid].append(str(e["name"]).strip())
    where = resolve_ids(graph, rows, batch_size)
    by_target: dict[str, dict[str, Any]] = {}
    aliases: dict[str, list[str]] = defaultdict(list)
    for eid, row in rows.items():
        target = where[eid]
        by_target.setdefault(target, {**row, "id": target, "key": split_id(target)[1]})
        aliases[target].extend(n for n in names[eid] if n not in aliases[target])
    targets = list(by_target.values())
    for batch in batches(targets, batch_size):
        graph.write(cypher.WRITE_NEW_ENTITIES, {"rows": list(batch)})
        graph.write(cypher.ADD_ENTITY_ALIASES, {"rows": [{"id": r["id"], "names": aliases[r["id"]]} for r in batch]})
        if progress is not None:
            progress(len(batch))
    return {eid: where[eid] for eid in rows}


def write_relations(
    graph: Graph, writer: BatchWriter, relations: Iterable[Mapping[str, Any]], progress: Progress | None = None
) -> dict[str, WriteStats]:
    """Write extracted relationships between entities, on the entities' current (resolved) ids.

    Args:
        relations: mappings with ``type`` (one of :data:`RELATION_TYPES`), ``head`` and ``tail``
            (entity ids), ``id`` (the relationship's deterministic id) and ``props`` (``chunk_id``,
            ``verified`` ...).
        writer: the batched writer (MERGE on the relationship ``id`` between the two entities).

    Returns:
        Write statistics per relationship type (rows whose entities do not exist are counted in
        ``missing_endpoints``).

    Raises:
        ValueError: an unknown relationship type or a row without ``id``, naming the row index.
    """
    rows = list(relations)
    where = resolve_ids(graph, {x for r in rows for x in (r.get("head"), r.get("tail")) if x}, writer.batch_size)
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for i, r in enumerate(rows):
        if r.get("type") not in RELATION_TYPES:
            raise ValueError(f"relation row {i}: type {r.get('type')!r} is not one of {RELATION_TYPES}")
        if not r.get("id") or not r.get("head") or not r.get("tail"):
            raise ValueError(f"relation row {i}: needs 'id', 'head' and 'tail'")
        grouped[r["type"]].append(
            {"start": where[r["head"]], "end": where[r["tail"]], "id": r["id"], "props": dict(r.get("props") or {})}
        )
    return {
        t: writer.merge_relationships(
            t, grouped[t], start=("Entity", "id"), end=("Entity", "id"), key="id", progress=progress
        )
        for t in sorted(grouped)
    }


# --------------------------------------------------------------------------- identifiers


@dataclass
class IdentifierIndex:
    """Names that identify companies and us-gaap concepts, read from the graph.

    ``names`` maps a key (normalized name) to ``(identifier, label, node key, how)`` with label
    ``Company`` (node key: cik) or ``Concept`` (node key: concept key); keys claimed by two
    identifiers are in ``ambiguous`` and map to nothing.
    """

    names: dict[str, tuple[str, str, Any, str]] = field(default_factory=dict)
    ambiguous: set[str] = field(default_factory=set)

    def add(self, key: str, ident: tuple[str, str, Any, str]) -> None:
        if not key or key in self.ambiguous:
            return
        old = self.names.get(key)
        if old is None:
            self.names[key] = ident
        elif old[0] != ident[0]:
            del self.names[key]
            self.ambiguous.add(key)

    @classmethod
    def from_graph(cls, graph: Graph) -> IdentifierIndex:
        """Company names (:func:`company_key`) and tickers; us-gaap concept labels and split tags
        (the newest version's node per tag)."""
        index = cls()
        for c in graph.read(cypher.COMPANY_IDENTIFIERS):
            ident = f"cik:{c['cik']}"
            index.add(company_key(c["name"] or ""), (ident, "Company", c["cik"], "company name"))
            if c.get("ticker"):
                index.add("$ticker:" + str(c["ticker"]).upper(), (ident, "Company", c["cik"], "ticker"))
        newest: dict[str, dict[str, Any]] = {}
        for c in graph.read(cypher.USGAAP_CONCEPTS):  # ordered by key: the last per tag is the newest
            newest[c["tag"]] = c
        for tag, c in sorted(newest.items()):
            ident = f"us-gaap:{tag}"
            index.add(normalize_name(split_camel_case(tag)), (ident, "Concept", c["key"], "concept tag"))
            if c.get("label"):
                index.add(normalize_name(c["label"]), (ident, "Concept", c["key"], "concept label"))
        return index

    def lookup(self, entity: Entity) -> tuple[str, str, Any, str] | None:
        """The identifier an entity's name names, if exactly one."""
        token = entity.name.strip().lstrip("$")
        if token.isupper() and " " not in token and (hit := self.names.get("$ticker:" + token)):
            return hit
        return self.names.get(entity.key) or self.names.get(company_key(entity.name) or "\0")


def identifier_links(graph: Graph, writer: BatchWriter, entities: Sequence[Entity]) -> int:
    """Link entities whose names are a company's or a us-gaap concept's with
    ``(:Entity)-[:SAME_AS {how}]->(:Company|:Concept)`` and set ``Entity.identifier``.

    Returns:
        The number of entities linked.
    """
    index = IdentifierIndex.from_graph(graph)
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in entities:
        hit = index.lookup(e)
        if hit is None:
            continue
        e.identifier, label, node_key, how = hit
        rows[label].append({"start": e.id, "end": node_key, "props": {"how": how}})
    for label, key in (("Company", "cik"), ("Concept", "key")):
        if rows[label]:
            writer.merge_relationships("SAME_AS", rows[label], start=("Entity", "id"), end=(label, key))
    return sum(len(v) for v in rows.values())


# --------------------------------------------------------------------------- planning


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _survivor_order(e: Entity) -> tuple:
    return (-e.degree, len(e.key), e.id)


def _group_merges(
    entities: Sequence[Entity],
    pairs: Iterable[tuple[int, int]],
    method: str,
    score: Callable[[int, int], float],
    threshold: float | None,
) -> list[Merge]:
    """Union the candidate pairs, pick each group's survivor, keep members similar to it."""
    uf = _UnionFind(len(entities))
    for a, b in pairs:
        uf.union(a, b)
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(entities)):
        groups[uf.find(i)].append(i)
    merges = []
    for members in groups.values():
        if len(members) < 2:
            continue
        s = min(members, key=lambda i: _survivor_order(entities[i]))
        for m in sorted(members, key=lambda i: entities[i].id):
            if m == s:
                continue
            value = score(m, s)
            if threshold is None or value >= threshold:
                merges.append(Merge(entities[m].id, entities[s].id, method, round(float(value), 4), threshold))
    return merges


def plan_merges(
    entities: Sequence[Entity],
    vectors: np.ndarray | None,
    neighbors: np.ndarray | None,
    method: str,
    threshold: float | None = None,
    redirected: Mapping[str, str] | None = None,
) -> list[Merge]:
    """The merges of one resolution stage among ``entities`` (all active, i.e. not merged yet).

    Args:
        entities: the entities, in the row order of ``vectors`` and ``neighbors``.
        vectors: float32 ``(n, d)`` unit-norm name embeddings (``embedding`` stage).
        neighbors: int ``(n, k)`` nearest-neighbour indices (``fuzzy``/``embedding`` candidates;
            ``generation.kgbuild.clustering.knn``).
        method: ``exact``, ``identifier``, ``fuzzy`` or ``embedding`` (see the module docstring).
        threshold: ``fuzzy``: token-sort ratio 0-100; ``embedding``: cosine similarity in (0, 1].
        redirected: for ``exact``: ``{entity id: survivor id}`` of ids that have a merge record
            (:func:`resolve_ids`); those entities merge into their survivor when it is active.

    Returns:
        Merges ``from -> into`` where every ``into`` is a survivor of this stage (never merged
        in the same stage); each pair is of the same type.

    Raises:
        ValueError: an unknown method, or a missing threshold/neighbours/vectors it needs.
    """
    n = len(entities)
    if method == "exact":
        merges = []
        position = {e.id: i for i, e in enumerate(entities)}
        for e in entities:
            target = (redirected or {}).get(e.id)
            if target and target != e.id and target in position:
                merges.append(Merge(e.id, target, "exact", 1.0, None))
        moved = {m.from_id for m in merges}
        rest = [i for i, e in enumerate(entities) if e.id not in moved]
        by_key: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i in rest:
            by_key[(entities[i].type, normalize_name(entities[i].name))].append(i)
        pairs = [(g[0], j) for g in by_key.values() for j in g[1:]]
        return merges + _group_merges(entities, pairs, "exact", lambda a, b: 1.0, None)
    if method == "identifier":
        by_ident: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i, e in enumerate(entities):
            if e.identifier:
                by_ident[(e.type, e.identifier)].append(i)
        pairs = [(g[0], j) for g in by_ident.values() for j in g[1:]]
        return _group_merges(entities, pairs, "identifier", lambda a, b: 1.0, None)
    if method not in ("fuzzy", "embedding"):
        raise ValueError(f"unknown resolution method {method!r}: expected one of {METHODS}")
    if threshold is None or neighbors is None or (method == "embedding" and vectors is None):
        raise ValueError(
            f"the {method} stage needs a threshold, neighbours{' and vectors' if method == 'embedding' else ''}"
        )
    if n < 2:
        return []
    guards = [name_guard(e.key) for e in entities]

    def score(a: int, b: int) -> float:
        if method == "fuzzy":
            return fuzz.token_sort_ratio(entities[a].key, entities[b].key)
        assert vectors is not None, "checked above for the embedding stage"
        return float(np.dot(vectors[a], vectors[b]))

    pairs = []
    for a in range(n):
        for b in neighbors[a]:
            b = int(b)
            if a < b and entities[a].type == entities[b].type and guards[a] == guards[b] and score(a, b) >= threshold:
                pairs.append((a, b))
    # Union-find joins only pairs with equal guards, so a whole group shares one guard.
    return _group_merges(entities, pairs, method, score, threshold)


# --------------------------------------------------------------------------- applying


def apply_merges(
    graph: Graph, merges: Sequence[Merge], run: str, batch_size: int = 1_000, progress: Progress | None = None
) -> Counter:
    """Carry out merges in the graph: move relationships, record, delete the merged nodes.

    Merges must be flat (no ``into`` is also a ``from``), as :func:`plan_merges` returns them.
    Each batch moves the relationships of its merged entities per relationship type and direction
    (``kg.cypher.move_entity_relationships``), then records the merges and deletes the merged
    nodes (``kg.cypher.RECORD_ENTITY_MERGES``); a batch is a few transactions, and a rerun after a
    failure redoes only what is left (moved relationships are gone from the merged node).

    Args:
        run: the resolution run id stored on each merge record.

    Returns:
        Merges done per method.

    Raises:
        ValueError: the merges are not flat.
    """
    froms = {m.from_id for m in merges}
    if chained := sorted(froms & {m.into_id for m in merges}):
        raise ValueError(f"merges must be flat; these ids are merged and survive: {chained[:5]}")
    done: Counter = Counter()
    for batch in batches(list(merges), batch_size):
        pairs = [
            {
                "from": m.from_id,
                "into": m.into_id,
                "method": m.method,
                "score": m.score,
                "threshold": m.threshold,
                "run": run,
            }
            for m in batch
        ]
        ids = [m.from_id for m in batch]
        types = [r["type"] for r in graph.read(cypher.ENTITY_RELATIONSHIP_TYPES, {"ids": ids})]
        for rel_type in types:
            for direction in ("out", "in"):
                graph.write(cypher.move_entity_relationships(rel_type, direction), {"pairs": pairs})
        for r in graph.write(cypher.RECORD_ENTITY_MERGES, {"pairs": pairs}).records:
            done[r["method"]] += r["merged"]
        if progress is not None:
            progress(len(batch))
    return done
