"""Node embeddings and clustering (retrieval/embeddings.py, generation/kgbuild/clustering.py, finkg/pipelines/clusters.py,
`finkg cluster`) with the real MiniLM model, real XBRL labels and the real Neo4j (seed 004, section 3.2).
"""

from __future__ import annotations

import csv
import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score
from test_cli import finkg

from finkg.pipelines import clusters as knowledge
from generation.kgbuild import resolution
from generation.kgbuild.clustering import (
    agglomerative_clusters,
    canonical_labels,
    exact_agglomerative_clusters,
    knn,
    representatives,
)
from kg import BatchWriter
from retrieval.embeddings import EmbeddingModelError, FlagEmbedder, make_embedder

QUARTER = Path(__file__).resolve().parents[1] / "data" / "sec-fsds" / "2009q3.zip"


def real_labels(n: int) -> list[str]:
    """The first ``n`` distinct line-item labels (pre.txt plabel) of the shipped 2009q3 archive."""
    seen: dict[str, None] = {}
    with zipfile.ZipFile(QUARTER) as zf, zf.open("pre.txt") as fh:
        for row in csv.DictReader(io.TextIOWrapper(fh, encoding="utf-8"), delimiter="\t", quoting=csv.QUOTE_NONE):
            seen.setdefault(row["plabel"].strip(), None)
            if len(seen) == n:
                break
    return list(seen)


# --------------------------------------------------------------------------- pure functions


def test_knn_is_exact_and_deterministic():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(300, 16)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    idx, sim = knn(x, 5, block_rows=64)
    full = x @ x.T
    np.fill_diagonal(full, -np.inf)
    expected = np.argsort(-full, axis=1, kind="stable")[:, :5]
    assert np.array_equal(idx, expected)
    assert np.allclose(sim, np.take_along_axis(full, expected, axis=1))
    again, _ = knn(x, 5, block_rows=300)
    assert np.array_equal(idx, again)


def test_labels_are_numbered_by_first_member_and_representatives_are_members():
    assert canonical_labels(np.array([7, 3, 7, 9, 3])).tolist() == [0, 1, 0, 2, 1]
    x = np.array([[1, 0], [0.8, 0.6], [0.6, 0.8], [0, 1]], dtype=np.float32)
    assert representatives(x, np.array([0, 0, 0, 1])).tolist() == [1, 3]  # the member nearest the mean


def test_bad_input_is_refused_with_the_reason():
    x = np.eye(3, dtype=np.float32)
    with pytest.raises(ValueError, match="cosine distance in"):
        agglomerative_clusters(x, 0)
    with pytest.raises(ValueError, match="NaN"):
        agglomerative_clusters(np.full((2, 2), np.nan), 0.3)
    with pytest.raises(ValueError, match="2-d"):
        knn(np.ones(3), 2)


def test_clusters_respect_the_threshold_and_are_deterministic(embedder):
    names = [
        "Net income (loss)",
        "Net income loss",
        "Total revenues",
        "Revenues, total",
        "Federal funds target rate",
        "Inventory write-down",
        "Dividends paid to preferred stockholders",
    ]
    x = embedder.encode(names)
    labels = agglomerative_clusters(x, 0.35, n_neighbors=3)
    assert labels[0] == labels[1] and labels[2] == labels[3]  # near-identical strings together
    assert len({labels[0], labels[2], labels[4], labels[5], labels[6]}) == 5  # unrelated apart
    assert np.array_equal(labels, agglomerative_clusters(x, 0.35, n_neighbors=3))
    # a threshold below the closest pair's distance leaves every name alone
    closest = 1 - max(float(x[i] @ x[j]) for i in range(len(x)) for j in range(i))
    assert agglomerative_clusters(x, closest * 0.99, n_neighbors=3).tolist() == list(range(len(names)))


def test_constrained_clustering_agrees_with_exact_clustering_on_real_labels(embedder):
    x = embedder.encode(real_labels(600))
    exact = exact_agglomerative_clusters(x, 0.35)
    constrained = agglomerative_clusters(x, 0.35, n_neighbors=15)
    # measured: identical partitions (ARI 1.0, 195 clusters each); bench/clustering.py measures 5k
    assert adjusted_rand_score(exact, constrained) > 0.99
    assert abs(len(set(exact)) - len(set(constrained))) <= 2


def test_flag_backend_loads_a_mean_pooled_directory_like_sentence_transformers(embedder):
    flag = FlagEmbedder(embedder.path, batch_size=8, device="cpu")
    assert flag.pooling == "mean" and flag.dimensions == embedder.dimensions == 384
    assert flag.identity != embedder.identity and flag.identity.lower().startswith("flag-mean:all-minilm-l6-v2@")
    texts = ["Net cash provided by operating activities", "Federal funds rate"]
    a, b = flag.encode(texts), embedder.encode(texts)
    assert a.dtype == np.float32 and np.allclose(np.linalg.norm(a, axis=1), 1, atol=1e-5)
    assert np.all(np.einsum("ij,ij->i", a, b) > 0.99)


def test_a_missing_model_is_named_with_the_setting(tmp_path):
    with pytest.raises(EmbeddingModelError, match=r"\[embedding\] model_path"):
        make_embedder(None)
    with pytest.raises(EmbeddingModelError, match=str(tmp_path / "nope")):
        make_embedder(tmp_path / "nope")
    with pytest.raises(EmbeddingModelError, match="backend"):
        make_embedder(tmp_path, backend="openai")


# --------------------------------------------------------------------------- graph


def test_cluster_ids_triple_clusters_vector_index_and_a_rerun_that_changes_nothing(graph, settings, embedder, tok):
    writer = BatchWriter(graph, batch_size=100)
    names = [
        f"net income {tok}",
        f"net income attributable to parent {tok}",
        f"federal funds rate {tok}",
        f"federal funds target rate {tok}",
        f"inventory write down {tok}",
    ]
    ids = list(resolution.write_entities(graph, [{"type": "indicator", "name": n} for n in names]))
    resolution.write_relations(
        graph,
        writer,
        [
            {
                "type": "AFFECT",
                "head": ids[2],
                "tail": ids[0],
                "id": f"t1{tok}",
                "props": {"chunk_id": "c", "verified": True},
            },
            {
                "type": "AFFECT",
                "head": ids[3],
                "tail": ids[1],
                "id": f"t2{tok}",
                "props": {"chunk_id": "c", "verified": True},
            },
        ],
    )
    s = settings.model_copy(
        update={
            "cluster_distance_threshold": 0.35,
            "cluster_embedding_merge_threshold": 1.0,
            "cluster_fuzzy_threshold": 100.0,
        }
    )
    first = knowledge.run_cluster(graph, s, ids=ids, embedder=embedder)
    assert first.entities == 5 and first.embedded == 5 and sum(first.merges.values()) == 0
    rows = graph.read(
        "MATCH (e:Entity) WHERE e.id IN $ids RETURN e.id AS id, e.cluster AS c, e.cluster_run AS run, "
        "e.embedding_model AS model, size(e.embedding) AS dims",
        {"ids": ids},
    )
    cl = {r["id"]: r["c"] for r in rows}
    assert {r["run"] for r in rows} == {first.run} and {r["model"] for r in rows} == {embedder.identity}
    assert {r["dims"] for r in rows} == {384}
    assert cl[ids[2]] == cl[ids[3]] and cl[ids[0]] != cl[ids[2]] and cl[ids[4]] not in (cl[ids[0]], cl[ids[2]])
    assert set(cl.values()) <= set(ids)  # a cluster is named by its most central member
    triples = graph.read(
        "MATCH (h)-[r:AFFECT]->(t) WHERE r.id ENDS WITH $t RETURN r.id AS id, r.cluster AS c, "
        "h.cluster AS h, t.cluster AS tc ORDER BY id",
        {"t": tok},
    )
    assert [r["c"] for r in triples] == [f"{r['h']}|{r['tc']}" for r in triples] and first.triples == 2
    # the vector index answers: an entity's own vector finds it first
    vec = graph.read("MATCH (e:Entity {id: $id}) RETURN e.embedding AS v", {"id": ids[2]})[0]["v"]
    hits = knowledge.query_similar(graph, vec, k=3)
    assert hits[0]["id"] == ids[2] and hits[0]["score"] == pytest.approx(1.0, abs=1e-3)
    # rerun on unchanged entities: nothing embedded, nothing written
    second = knowledge.run_cluster(graph, s, ids=ids, embedder=embedder)
    assert (second.embedded, second.updated, second.run) == (0, 0, first.run)
    assert second.clusters == first.clusters


def test_a_vector_index_of_other_dimensions_is_reported(graph):
    knowledge.ensure_vector_index(graph, 384)
    with pytest.raises(knowledge.VectorIndexMismatch, match=r"384 dimensions .* makes 768: drop it"):
        knowledge.ensure_vector_index(graph, 768)


def test_cli_cluster_prints_the_closing_table_and_reruns_without_embedding(graph, settings, embedder, tok, tmp_path):
    ids = list(
        resolution.write_entities(
            graph,
            [
                {"type": "policy", "name": f"{w} {tok}"}
                for w in ("rate cut", "reserve requirement ratio cut", "quantitative easing")
            ],
        )
    )
    (tmp_path / "ids.txt").write_text("\n".join(ids) + "\n")
    env = {"FINKG_EMBEDDING_MODEL_PATH": str(embedder.path), "HF_HUB_OFFLINE": "1"}
    out = finkg("cluster", "--ids", str(tmp_path / "ids.txt"), env=env)
    assert out.returncode == 0, out.stderr
    assert "│ entities" in out.stdout and "│ embedded                  │ 3" in out.stdout
    again = finkg("cluster", "--ids", str(tmp_path / "ids.txt"), env=env)
    assert again.returncode == 0 and "│ embedded                  │ 0" in again.stdout
    for figure in ("merges: fuzzy", "clusters", "singleton clusters", "largest cluster", "seconds"):
        assert figure in again.stdout
    bad = finkg("cluster", env={"FINKG_EMBEDDING_MODEL_PATH": str(tmp_path / "missing")})
    assert bad.returncode == 2 and "[embedding] model_path" in bad.stderr and "Traceback" not in bad.stderr
