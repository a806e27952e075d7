"""The batched writer against the real Neo4j: idempotence, counts, batches, failures."""

from __future__ import annotations

import pytest

from kg import BatchWriter, Graph, cypher


def rows(n: int, **extra):
    return [{"key": f"k{i}", "value": i, **extra} for i in range(n)]


def count(graph: Graph, label: str) -> int:
    return graph.read(cypher.count_nodes(label))[0]["n"]


def test_same_rows_twice_give_same_graph_and_no_new_writes(graph, keyed_label):
    writer = BatchWriter(graph, batch_size=7)
    first = writer.merge_nodes(keyed_label, rows(50), key="key")
    assert (first.rows, first.written, first.created, first.updated) == (50, 50, 50, 0)
    assert first.batches == 8  # ceil(50 / 7): one transaction per batch
    second = writer.merge_nodes(keyed_label, rows(50), key="key")
    assert (second.rows, second.written, second.created, second.updated) == (50, 50, 0, 0)
    assert second.unchanged == 50
    assert count(graph, keyed_label) == 50


def test_changed_properties_count_as_updated_and_null_never_erases(graph, keyed_label):
    writer = BatchWriter(graph)
    writer.merge_nodes(keyed_label, rows(10, unit="USD"), key="key")
    changed = rows(10, unit="USD")
    changed[3]["value"] = 333
    changed[4]["unit"] = None  # dropped from SET: the stored "USD" stays
    stats = writer.merge_nodes(keyed_label, changed, key="key")
    assert (stats.created, stats.updated, stats.unchanged) == (0, 1, 9)
    got = graph.read(
        f"MATCH (n:{keyed_label}) WHERE n.key IN ['k3', 'k4'] RETURN n.key AS k, n.value AS v, n.unit AS u ORDER BY k"
    )
    assert got == [{"k": "k3", "v": 333, "u": "USD"}, {"k": "k4", "v": 4, "u": "USD"}]


def test_duplicate_keys_in_a_batch_keep_the_last_row(graph, keyed_label):
    stats = BatchWriter(graph).merge_nodes(
        keyed_label, [{"key": "a", "v": 1}, {"key": "b", "v": 2}, {"key": "a", "v": 3}], key="key"
    )
    assert (stats.rows, stats.duplicates, stats.created) == (3, 1, 2)
    assert graph.read(f"MATCH (n:{keyed_label} {{key: 'a'}}) RETURN n.v AS v") == [{"v": 3}]


def test_composite_key(graph, label):
    writer = BatchWriter(graph, batch_size=2)
    data = [{"adsh": "0001", "tag": t, "qtrs": q, "value": 1.5} for t in ("Assets", "Revenues") for q in (0, 1)]
    assert writer.merge_nodes(label, data, key=("adsh", "tag", "qtrs")).created == 4
    assert writer.merge_nodes(label, data, key=("adsh", "tag", "qtrs")).created == 0
    assert count(graph, label) == 4


def test_relationships_are_idempotent_and_missing_endpoints_are_reported(graph, keyed_label):
    writer = BatchWriter(graph, batch_size=3)
    writer.merge_nodes(keyed_label, rows(5), key="key")
    rels = [{"start": f"k{i}", "end": f"k{i + 1}", "props": {"w": i}} for i in range(4)]
    rels.append({"start": "k0", "end": "nope", "props": {"w": 9}})
    ends = (keyed_label, "key")
    first = writer.merge_relationships("NEXT", rels, start=ends, end=ends)
    assert (first.rows, first.written, first.created, first.missing_endpoints) == (5, 4, 4, 1)
    assert first.missing_examples == [{"start": {"key": "k0"}, "end": {"key": "nope"}}]
    again = writer.merge_relationships("NEXT", rels, start=ends, end=ends)
    assert (again.created, again.updated, again.unchanged, again.missing_endpoints) == (0, 0, 4, 1)
    rels[0]["props"] = {"w": 100}
    assert writer.merge_relationships("NEXT", rels[:1], start=ends, end=ends).updated == 1
    n = graph.read(f"MATCH (:{keyed_label})-[r:NEXT]->(:{keyed_label}) RETURN count(r) AS n")
    assert n == [{"n": 4}]


def test_keyed_relationships_allow_parallel_edges(graph, keyed_label):
    writer = BatchWriter(graph)
    writer.merge_nodes(keyed_label, rows(2), key="key")
    ends = (keyed_label, "key")
    rels = [{"start": "k0", "end": "k1", "id": f"t{i}", "props": {"chunk_id": f"c{i}"}} for i in range(3)]
    assert writer.merge_relationships("AFFECT", rels, start=ends, end=ends, key="id").created == 3
    assert writer.merge_relationships("AFFECT", rels, start=ends, end=ends, key="id").created == 0


@pytest.mark.parametrize(
    "bad_rows, message",
    [
        ([{"value": 1}], "row 0: missing key property 'key'"),
        ([{"key": "a"}, {"key": None}], "row 1: key property 'key' is null"),
    ],
)
def test_bad_rows_name_the_row(graph, label, bad_rows, message):
    with pytest.raises(ValueError, match=message):
        BatchWriter(graph).merge_nodes(label, bad_rows, key="key")


def test_injection_through_a_label_is_refused(graph):
    with pytest.raises(ValueError, match="invalid Cypher identifier"):
        BatchWriter(graph).merge_nodes("X) DETACH DELETE (n", [{"key": 1}], key="key")


def test_progress_is_reported_per_batch(graph, keyed_label):
    seen: list[int] = []
    BatchWriter(graph, batch_size=4).merge_nodes(keyed_label, rows(10), key="key", progress=seen.append)
    assert seen == [4, 4, 2]


def test_concurrent_batches_count_exactly(graph, keyed_label):
    """Two transactions in flight: every row written once, counts exact, reruns create nothing."""
    writer = BatchWriter(graph, batch_size=100, workers=2)
    data = rows(1_000)
    first = writer.merge_nodes(keyed_label, data, key="key")
    assert (first.rows, first.written, first.created, first.batches) == (1_000, 1_000, 1_000, 10)
    ends = (keyed_label, "key")
    rels = [{"start": f"k{i}", "end": f"k{(i * 7) % 1_000}", "id": str(i)} for i in range(1_000)]
    assert writer.merge_relationships("LINK", rels, start=ends, end=ends, key="id").created == 1_000
    again = writer.merge_nodes(keyed_label, data, key="key")
    assert (again.created, again.updated, again.unchanged) == (0, 0, 1_000)
    assert count(graph, keyed_label) == 1_000
