"""`finkg db init` semantics: idempotent, versioned, conflicts named."""

from __future__ import annotations

import uuid

import pytest

from kg import SchemaConflict, cypher, schema
from kg.schema import SchemaObject, SchemaStep


def definitions(graph):
    shown = schema.show_schema(graph)
    cons = {(c["name"], c["type"], tuple(c["labelsOrTypes"]), tuple(c["properties"])) for c in shown["constraints"]}
    idx = {
        (i["name"], i["type"], tuple(i["labelsOrTypes"] or ()), tuple(i["properties"] or ())) for i in shown["indexes"]
    }
    return cons, idx


def test_db_init_twice_gives_the_same_constraints_and_indexes(graph):
    schema.apply_schema(graph)
    first = definitions(graph)
    report = schema.apply_schema(graph)
    assert report.created == [] and report.dropped == []
    assert sorted(report.unchanged) == sorted(schema.target_objects())
    assert definitions(graph) == first
    names = {c[0] for c in first[0]} | {i[0] for i in first[1]}
    assert set(schema.target_objects()) <= names
    assert schema.current_version(graph) == schema.STEPS[-1].version


@pytest.fixture
def own_schema(graph):
    """A throw-away schema record and label; its objects are dropped afterwards."""
    tag = uuid.uuid4().hex[:8]
    made: list[str] = []
    yield f"test-{tag}", f"T{tag}", made
    for name in made:
        graph.run_autocommit(cypher.drop_constraint(name))
        graph.run_autocommit(cypher.drop_index(name))
    graph.write("MATCH (s:FinkgSchema {name: $n}) DELETE s", {"n": f"test-{tag}"})


def test_versions_add_and_drop_objects(graph, own_schema):
    name, lab, made = own_schema
    a = SchemaObject(f"{lab.lower()}_a", "unique", lab, ("a",))
    b = SchemaObject(f"{lab.lower()}_b", "range", lab, ("b",))
    made += [a.name, b.name]
    v1 = (SchemaStep(1, "a and b", (a, b)),)
    assert sorted(schema.apply_schema(graph, v1, name=name).created) == sorted([a.name, b.name])
    v2 = (*v1, SchemaStep(2, "drop b", drops=(b.name,)))
    report = schema.apply_schema(graph, v2, name=name)
    assert (report.version_before, report.version_after, report.dropped) == (1, 2, [b.name])
    cons, idx = definitions(graph)
    assert a.name in {c[0] for c in cons} and b.name not in {i[0] for i in idx}
    with pytest.raises(SchemaConflict, match="newer than this code"):
        schema.apply_schema(graph, v1, name=name)


def test_a_name_reused_with_another_definition_is_a_named_conflict(graph, own_schema):
    name, lab, made = own_schema
    obj = SchemaObject(f"{lab.lower()}_k", "unique", lab, ("k",))
    made.append(obj.name)
    graph.run_autocommit(cypher.create_constraint(obj.name, "unique", lab + "Other", ["k"]))
    with pytest.raises(SchemaConflict, match=f"{obj.name}: exists as .* on \\['{lab}Other'\\]"):
        schema.apply_schema(graph, (SchemaStep(1, "k", (obj,)),), name=name)


def test_an_equivalent_object_under_another_name_is_not_silently_skipped(graph, own_schema):
    name, lab, made = own_schema
    other = f"{lab.lower()}_other"
    mine = SchemaObject(f"{lab.lower()}_mine", "unique", lab, ("k",))
    made += [other, mine.name]
    graph.run_autocommit(cypher.create_constraint(other, "unique", lab, ["k"]))
    with pytest.raises(SchemaConflict, match=f"{mine.name}: not created"):
        schema.apply_schema(graph, (SchemaStep(1, "k", (mine,)),), name=name)


def test_names_must_be_unique_across_steps():
    o = SchemaObject("x_unique", "unique", "X", ("k",))
    with pytest.raises(SchemaConflict, match="used twice"):
        schema._check_steps((SchemaStep(1, "a", (o,)), SchemaStep(2, "b", (o,))))


def test_vector_index_statement_validates_dimensions():
    with pytest.raises(ValueError, match="dimensions"):
        cypher.create_index("v", "vector", "Chunk", ["embedding"])
    stmt = cypher.create_index("v", "vector", "Chunk", ["embedding"], dimensions=384)
    assert "`vector.dimensions`: 384" in stmt and "'cosine'" in stmt
