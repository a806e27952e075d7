"""`finkg ingest sec --bulk` (neo4j-admin database import) against the transactional load, on a real second
server (own home, own ports), with the shipped 2009q3 quarter (data/sec-fsds/2009q3.zip, MANIFEST).

The transactional load goes into the server's default database ``neo4j``; the bulk import goes into a new
database ``bulkcheck`` of the same home while the server runs and serves ``neo4j``; then the server is
restarted serving ``bulkcheck``. Gold is the transactional path (the code under test is the bulk path):
every node and relationship per label and type, every property of every Company, Filing, Concept, Fact
and Chunk, the endpoints of every relationship, the run record (less its times and process).
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest
from conftest import free_port

from finkg import api
from finkg.config import Settings
from finkg.neo4j_server import DatabaseExists, DatabaseInUse, LocalNeo4j, ServerError, private_settings
from finkg.pipelines.bulk import BulkImportError
from ingest.sec.fsds import FsdsFormatError
from kg import Graph, schema

pytestmark = pytest.mark.neo4j

DATA = Path(__file__).resolve().parents[1] / "data" / "sec-fsds"
QUARTER = DATA / "2009q3.zip"
DAILY = DATA / "20250404.zip"
PASSWORD = "bulk-check-pw"
KEYS = {"Company": "cik", "Filing": "adsh", "Concept": "key", "Fact": "key", "Chunk": "id", "IngestRun": "id"}
RELS = {
    "REPORTS": ("Filing", "Fact"),
    "OF_CONCEPT": ("Fact", "Concept"),
    "EVIDENCE_FOR": ("Chunk", "Fact"),
    "FILED": ("Company", "Filing"),
    "LOADED": ("IngestRun", "Filing"),
}
VOLATILE = {"started_at", "finished_at", "pid", "proc_start", "counts"}  # a run's times and process


def snapshot(g: Graph) -> dict:
    """Everything the comparison looks at, read with this test's own Cypher."""
    out: dict = {
        "labels": {r["l"]: r["n"] for r in g.read("MATCH (n) UNWIND labels(n) AS l RETURN l, count(*) AS n")},
        "types": {r["t"]: r["n"] for r in g.read("MATCH ()-[r]->() RETURN type(r) AS t, count(*) AS n")},
    }
    for label, key in KEYS.items():
        rows = g.read(f"MATCH (n:{label}) RETURN n.{key} AS k, properties(n) AS p")
        out[label] = {r["k"]: r["p"] for r in rows}
    for rel, (a, b) in RELS.items():
        rows = g.read(f"MATCH (a:{a})-[:{rel}]->(b:{b}) RETURN a.{KEYS[a]} AS s, b.{KEYS[b]} AS e")
        out[rel] = sorted((r["s"], r["e"]) for r in rows)
    return out


@pytest.fixture(scope="module")
def home(tmp_path_factory, settings) -> Path:
    return tmp_path_factory.mktemp("bulk") / "neo4j"


def server_settings(home: Path, ports: tuple[int, int], database: str = "neo4j") -> Settings:
    return private_settings(home, PASSWORD, ports=ports, heap="768m", pagecache="256m", database=database)


@pytest.fixture(scope="module")
def loaded(home, settings):
    """The transactional load served in ``neo4j``, a bulk import into ``bulkcheck`` made while it runs,
    and the snapshots of ``neo4j`` before and after that import. The server is left running."""
    ports = (free_port(), free_port())
    s = server_settings(home, ports)
    server = LocalNeo4j(s)
    server.start()
    try:
        with Graph(s.uri, "neo4j", PASSWORD) as g:
            schema.apply_schema(g)
            api.ingest_sec([QUARTER], graph=g, settings=s)
            before = snapshot(g)
            result = api.ingest_sec_bulk([QUARTER], database="bulkcheck", settings=s)
            after = snapshot(g)
    except BaseException:
        server.stop()
        raise
    yield {"settings": s, "server": server, "ports": ports, "before": before, "after": after, "result": result}
    server.stop()


@pytest.fixture(scope="module")
def compared(loaded, home, settings):
    """The server restarted serving ``bulkcheck`` (schema applied as `finkg db init` does) and its snapshot."""
    loaded["server"].stop()
    s = server_settings(home, loaded["ports"], database="bulkcheck")
    server = LocalNeo4j(s)
    server.start()
    try:
        with Graph(s.uri, "neo4j", PASSWORD, database="bulkcheck") as g:
            schema.apply_schema(g)
            yield {"bulk": snapshot(g), "settings": s, "graph": g}
    finally:
        server.stop()


def test_bulk_import_leaves_the_served_database_untouched(loaded):
    assert loaded["after"] == loaded["before"]
    r = loaded["result"]
    assert r.report is not None and r.report.database == "bulkcheck"
    # kept facts of 2009q3 (MANIFEST: 126,650 rows): 103,293 of the registrants, each with its evidence chunk,
    # and 3,629 of co-registrant legal entities (coreg set), which get no evidence sentence
    assert r.nodes["Fact"] == 106_922 and r.nodes["Chunk"] == 103_293
    assert r.report.nodes == sum(r.nodes.values()) and r.report.relationships == sum(r.relationships.values())
    assert not r.folder.exists()  # the temporary CSV folder is removed


def test_bulk_equals_the_transactional_load(loaded, compared):
    tx, bulk = loaded["before"], compared["bulk"]
    assert bulk["labels"] == tx["labels"]
    assert bulk["types"] == tx["types"]
    assert tx["labels"]["Fact"] == 106_922 and tx["labels"]["Filing"] == 435
    for label in ("Company", "Filing", "Concept", "Fact", "Chunk"):
        assert bulk[label] == tx[label], label  # every property of every node, types included
    for rel in RELS:
        assert bulk[rel] == tx[rel], rel
    (rid,) = tx["IngestRun"]
    strip = {k: v for k, v in tx["IngestRun"][rid].items() if k not in VOLATILE}
    assert {k: v for k, v in bulk["IngestRun"][rid].items() if k not in VOLATILE} == strip
    assert json.loads(bulk["IngestRun"][rid]["counts"]) == json.loads(tx["IngestRun"][rid]["counts"])
    assert strip["status"] == "done" and strip["sha256"] == hashlib.sha256(QUARTER.read_bytes()).hexdigest()


def test_a_memo_on_the_imported_graph_equals_the_transactional_one(loaded, compared, tmp_path):
    walmart = "0001193125-09-189177"
    with Graph(compared["settings"].uri, "neo4j", PASSWORD, database="bulkcheck") as g:
        api.memo_batch([walmart], out=tmp_path / "bulk", graph=g, settings=compared["settings"])
    claims = (tmp_path / "bulk" / "structured" / "claims.jsonl").read_text().splitlines()
    rows = [json.loads(x) for x in claims]
    assert len(rows) == 13 and {r["status"] for r in rows} == {"exact"}  # as tests/test_memos.py on the tx load
    md = (tmp_path / "bulk" / "structured" / f"{walmart}.md").read_text()
    assert md.startswith("# Desk-risk memo: WAL MART STORES INC")


def served_and_other(s: Settings) -> tuple[str, str]:
    """The database the module's server serves now (``neo4j``, or ``bulkcheck`` once compared) and the other one."""
    served = LocalNeo4j(s).served_database()
    assert served in ("neo4j", "bulkcheck")
    return served, "bulkcheck" if served == "neo4j" else "neo4j"


def test_an_existing_database_is_refused_without_force(loaded):
    s = loaded["settings"]
    _, other = served_and_other(s)
    with pytest.raises(DatabaseExists, match=rf"'{other}' already exists.*--force"):
        api.ingest_sec_bulk([DAILY], database=other, settings=s)


def test_the_served_database_is_refused_even_with_force(loaded):
    s = loaded["settings"]
    served, _ = served_and_other(s)
    with pytest.raises(DatabaseInUse, match=rf"'{served}' is the one the running server .* never touches it"):
        api.ingest_sec_bulk([DAILY], database=served, force=True, settings=s)
    with pytest.raises(ServerError, match="database name 'system'"):
        api.ingest_sec_bulk([DAILY], database="system", settings=s)


def test_a_malformed_archive_is_a_named_error_and_imports_nothing(loaded, tmp_path):
    s = loaded["settings"]
    truncated = tmp_path / "2009q3-truncated.zip"
    truncated.write_bytes(QUARTER.read_bytes()[:1_000_000])
    with pytest.raises(FsdsFormatError, match=r"2009q3-truncated\.zip: not a ZIP archive"):
        api.ingest_sec_bulk([truncated], database="badinput", settings=s)
    no_num = tmp_path / "no-num.zip"
    with zipfile.ZipFile(QUARTER) as src, zipfile.ZipFile(no_num, "w") as dst:
        dst.writestr("sub.txt", src.read("sub.txt"))
    with pytest.raises(FsdsFormatError, match=r"no-num.zip: member num.txt is missing"):
        api.ingest_sec_bulk([no_num], database="badinput", settings=s)
    with pytest.raises(BulkImportError, match="also in"):
        api.ingest_sec_bulk([DAILY, DAILY], database="badinput", settings=s)
    assert not LocalNeo4j(s).database_exists("badinput")


def test_a_remote_uri_is_refused_and_csv_only_writes_the_files(loaded, tmp_path):
    s = loaded["settings"].model_copy(
        update={"neo4j": loaded["settings"].neo4j.model_copy(update={"uri": "neo4j+s://abc.databases.neo4j.io"})}
    )
    with pytest.raises(BulkImportError, match=r"not the local server.*--csv-only"):
        api.ingest_sec_bulk([DAILY], database="remote", settings=s)
    r = api.ingest_sec_bulk([DAILY], database="remote", csv_dir=tmp_path / "csv", csv_only=True, settings=s)
    assert r.report is None and r.nodes["Fact"] > 0
    header = next((tmp_path / "csv").glob("*-facts.csv")).read_text().splitlines()[0]
    assert header.startswith(":ID(Fact),key:string,") and "value:double" in header and "qtrs:long" in header


def test_force_replaces_a_database_that_is_not_served(loaded, compared):
    """After the comparison (the server is stopped): --force replaces ``bulkcheck`` with the daily file."""
    s = compared["settings"]
    assert LocalNeo4j(s).stop()  # it served bulkcheck for the comparison
    r = api.ingest_sec_bulk([DAILY], database="bulkcheck", force=True, settings=s)
    assert r.report is not None and r.report.nodes == sum(r.nodes.values()) < loaded["result"].report.nodes


@pytest.mark.parametrize(
    "uri", ["neo4j+s://abc123.databases.neo4j.io", "neo4j://core1.example.org:7687", "bolt+ssc://10.0.0.5:7687"]
)
def test_cluster_and_aura_uris_are_accepted(uri):
    """What the README's scale section tells a user to set: [neo4j] uri with a routing or TLS scheme and a
    database name. The driver is built without connecting (no server is reached here)."""
    s = Settings.model_validate({"neo4j": {"password": "x", "uri": uri, "database": "edgar"}})
    assert s.uri == uri
    g = api.open_graph(s)
    assert (g.uri, g.database) == (uri, "edgar")
    g.close()


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path):
    """The command line: bulk options without --bulk, and a refused name, each exit 2 with one line."""
    from test_cli import finkg

    out = finkg("ingest", "sec", str(DAILY), "--force")
    assert out.returncode == 2 and "go with --bulk" in out.stderr
    out = finkg("ingest", "sec", "--bulk", str(DAILY), "--database", "system", env={"FINKG_SERVER_HOME": str(tmp_path)})
    assert out.returncode == 2 and "database name 'system'" in out.stderr
    assert not any(tmp_path.iterdir())  # refused before anything was written


def _whole_read_csv(folder: Path, path: Path) -> list[str]:
    """The CSV files of one archive as the bulk import wrote them before it streamed (git 6aefdc6): the archive
    read whole (:func:`ingest.sec.fsds.read_fsds`), its rows made at once (:func:`ingest.sec.fsds.graph_rows`),
    every file written from all its rows; the merged labels after. Returns the file names."""
    from ingest.sec.fsds import graph_rows, read_fsds
    from kg.bulk import ImportFiles

    files = ImportFiles(folder)
    nodes, rels = graph_rows(read_fsds(path))
    merged = {}
    for n in nodes:
        if n.label in ("Company", "Filing", "Concept"):
            merged[n.label] = (n.key, {r[n.key]: {k: v for k, v in r.items() if v is not None} for r in n.rows})
        else:
            files.add_nodes(n.label, n.key, n.rows, f"000-{n.stage}")
    for r in rels:
        files.add_relationships(r.type, r.start[0], r.end[0], r.rows, f"000-{r.stage}")
    for label, (key, rows) in merged.items():
        files.add_nodes(label, key, rows.values(), label.lower())
    return [f.path.name for f in files.files]


@pytest.mark.reliability("input")
def test_the_streamed_bulk_csv_equals_the_whole_read_byte_for_byte(settings, tmp_path):
    """The bulk import streams an archive a group of facts at a time (27 groups of 4,000 here): its CSV files are
    those the whole read wrote, byte for byte, on the shipped 2009q3 quarter (but the run record's times and
    process)."""
    small = settings.model_copy(deep=True)
    small.writer.batch_size = 1_000
    result = api_bulk(small, tmp_path / "streamed")
    names = _whole_read_csv(tmp_path / "whole", QUARTER)
    streamed = sorted(p.name for p in (tmp_path / "streamed").iterdir())
    assert streamed[: len(names)] == names and streamed[len(names) :] == ["0009-ingest-runs.csv", "0010-loaded.csv"]
    for name in names:
        assert (tmp_path / "streamed" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name
    assert result.facts == 106_922


def api_bulk(settings: Settings, folder: Path):
    """``finkg ingest sec --bulk --csv FOLDER --csv-only`` of the quarter under ``settings``."""
    from finkg.pipelines.bulk import bulk_import_sec

    return bulk_import_sec(settings, [QUARTER], database="streamcheck", csv_dir=folder, csv_only=True)
