"""The Neo4j Browser workspace (kg/browser): the GRASS style sheet, the saved queries and ``finkg browser``.

The saved queries run on the real server twice: with their own example ``:param`` values against the data
loaded here, and against a small graph of every shape they read (written under a test label, removed
afterwards), where the expected rows are known.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from finkg import api
from finkg.config import Settings
from finkg.pipelines import sec
from kg import browser
from kg.guard import check_read_only, screen

ROOT = Path(__file__).resolve().parents[1]
SNOW = ROOT / "data" / "sec-companyfacts" / "CIK0001640147-snowflake.json"
QUERIES = browser.saved_queries()
NAMES = [q.name for q in QUERIES]
REQUIRED = {
    "memo-audit-trail",
    "report-citations",
    "entity-neighbourhood",
    "restated-facts",
    "top-communities",
    "indicator-around-date",
}
STYLED_LABELS = {
    "Company": "name",
    "Filing": "adsh",
    "Fact": "tag",
    "Concept": "tag",
    "Entity": "name",
    "Memo": "id",
    "Claim": "name",
    "Report": "id",
    "Indicator": "code",
    "Observation": "date",
    "Document": "id",
    "Chunk": "id",
    "IngestRun": "kind",
}
TRIPLE_TYPES = ("AFFECT", "INDICATE", "BELONG_TO", "EQUAL_TO", "MAY_LEAD_TO")


def params_in(text: str) -> set[str]:
    """The ``$name`` parameters of a query, outside comments and string literals."""
    text = re.sub(r"//[^\n]*|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", "", text)
    return set(re.findall(r"\$([A-Za-z_]\w*)", text))


# --------------------------------------------------------------------------- the files


def test_the_required_saved_queries_are_shipped():
    assert set(NAMES) >= REQUIRED


@pytest.mark.parametrize("q", QUERIES, ids=NAMES)
def test_saved_query_header_and_screen(q: browser.SavedQuery):
    assert q.source().startswith(f"// name: {q.name}\n")
    assert len(q.shows) > 40
    assert q.params, "every saved query has an example :param line"
    assert set(q.params) == params_in(q.text), "the :param lines name exactly the query's parameters"
    screen(q.text)  # the allow-list of finkg cypher: one read statement
    for line in q.param_lines():
        assert line.startswith(":param ") and " => " in line


def test_a_malformed_header_is_refused(tmp_path: Path):
    bad = tmp_path / "bad.cypher"
    bad.write_text("// name: other\n// shows: something long enough\nRETURN 1\n", encoding="utf-8")
    with pytest.raises(Exception, match="file's stem 'bad'"):
        browser.parse_saved_query(bad)
    bad.write_text("// name: bad\n// what: nothing\nRETURN 1\n", encoding="utf-8")
    with pytest.raises(Exception, match="header line"):
        browser.parse_saved_query(bad)


def test_the_grass_file_parses_as_browser_reads_it():
    text = browser.style_text()
    assert "/*" not in text and "//" not in text, "Browser's GRASS parser knows no comments"
    style = browser.parse_grass(text)
    assert {"node", "relationship"} <= set(style)
    for label, prop in STYLED_LABELS.items():
        rule = style.get(f"node.{label}")
        assert rule is not None, f"no node.{label} rule"
        assert re.fullmatch(r"#[0-9A-Fa-f]{6}", rule.get("color", "")), label
        assert re.fullmatch(r"\d+px", rule.get("diameter", "")), label
        assert "{" + prop + "}" in rule.get("caption", ""), label
    for typ in (*TRIPLE_TYPES, "FILED", "REPORTS", "OF_CONCEPT", "HAS_CLAIM", "CITES", "ABOUT", "HAS_OBSERVATION"):
        assert style[f"relationship.{typ}"]["caption"] == "<type>"
    # every caption was quoted in the file (unquoted braces are lost by Browser's parser)
    assert len(re.findall(r'caption: "[^"]+";', text)) == text.count("caption:")
    assert browser.parse_grass('node.A { caption: "{a} {b}"; color: #fff; bad }') == {
        "node.A": {"caption": "{a} {b}", "color": "#fff"}
    }


def test_docs_point_to_the_package_queries_without_copies():
    readme = (ROOT / "docs" / "queries" / "README.md").read_text(encoding="utf-8")
    for name in NAMES:
        assert f"(../../kg/browser/queries/{name}.cypher)" in readme, name
    assert list((ROOT / "docs").rglob("*.cypher")) == []


def test_every_query_has_a_linked_screenshot_that_exists():
    readme = (ROOT / "docs" / "queries" / "README.md").read_text(encoding="utf-8")
    for name in NAMES:
        assert f"(../browser/{name}.png)" in readme, name
        png = ROOT / "docs" / "browser" / f"{name}.png"
        assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png


def test_browser_url_from_the_settings(monkeypatch, tmp_path):
    for var in ("FINKG_SERVER_HTTP_PORT", "FINKG_SERVER_BOLT_PORT", "NEO4J_URI"):
        monkeypatch.delenv(var, raising=False)  # the settings below, not this shell's
    monkeypatch.setenv("FINKG_CONFIG", str(tmp_path / "none.toml"))  # nor the test run's file (its own ports)
    local = Settings.model_validate({"neo4j": {"password": "x"}, "server": {"http_port": 7575}})
    assert api.browser_url(local) == "http://127.0.0.1:7575/browser/"
    remote = Settings.model_validate({"neo4j": {"password": "x", "uri": "neo4j+s://db.example.org:7687"}})
    assert api.browser_url(remote) == "https://db.example.org:7474/browser/"
    ws = api.browser_workspace(local)
    assert ws.connect_url.endswith("?dbms=bolt%3A%2F%2Fneo4j%40127.0.0.1%3A7687&db=neo4j")
    assert ws.style_path.is_file() and [q.name for q in ws.queries] == NAMES


# --------------------------------------------------------------------------- on the real server


def test_the_grass_captions_name_properties_the_data_has(graph, settings):
    sec.ingest_companyfacts(graph, settings, [SNOW])  # Company, Filing, Fact, Concept, IngestRun (idempotent)
    rows = graph.read(
        "CALL db.schema.nodeTypeProperties() YIELD nodeLabels, propertyName "
        "RETURN nodeLabels[0] AS label, collect(propertyName) AS props"
    )
    present = {r["label"]: set(r["props"]) for r in rows}
    style = browser.parse_grass(browser.style_text())
    checked = 0
    for label in STYLED_LABELS:
        if label not in present:
            continue
        for prop in re.findall(r"\{(\w+)\}", style[f"node.{label}"]["caption"]):
            assert prop in present[label], f"node.{label} captions {{{prop}}}, which no {label} has"
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize("q", QUERIES, ids=NAMES)
def test_saved_query_runs_with_its_example_params(graph, q: browser.SavedQuery):
    params = browser.example_params(graph, q)
    assert set(params) == set(q.params)
    assert check_read_only(graph, q.text, params) == "r"  # the screen, then EXPLAIN
    rows = graph.read(q.text, params)
    if q.name in ("memo-audit-trail", "restated-facts", "indicator-around-date") and graph.read(
        "MATCH (m:Memo {id: 'structured:0001193125-09-189177'}) RETURN m.id AS id"
    ):
        assert rows, f"{q.name} finds nothing with its example in the SEC and AKShare data loaded here"


@pytest.fixture
def shapes(graph, label):
    """One small graph of every shape the saved queries read, its nodes also labelled ``label``."""
    tok = f"zb{uuid.uuid4().hex[:10]}"
    cik = random.randint(10**12, 10**13)
    graph.write(
        f"""
        CREATE (co:Company:{label} {{cik: $cik, name: $tok + ' Inc'}})
        CREATE (f1:Filing:{label} {{adsh: $tok + '-1', form: '10-Q', filed: '20200505', cik: $cik}})
        CREATE (f2:Filing:{label} {{adsh: $tok + '-2', form: '10-Q/A', filed: '20200801', cik: $cik}})
        CREATE (co)-[:FILED]->(f1), (co)-[:FILED]->(f2)
        CREATE (k:Concept:{label} {{key: $tok + ':Revenues', tag: 'Revenues'}})
        CREATE (a:Fact:{label} {{key: $tok + ':a', tag: 'Revenues', ddate: '20200331', qtrs: 1, uom: 'USD',
                                value: 100.0, adsh: $tok + '-1', cik: $cik}})
        CREATE (b:Fact:{label} {{key: $tok + ':b', tag: 'Revenues', ddate: '20200331', qtrs: 1, uom: 'USD',
                                value: 110.0, adsh: $tok + '-2', cik: $cik}})
        CREATE (s1:Fact:{label} {{key: $tok + ':s1', tag: 'Assets', ddate: '20200331', qtrs: 0, uom: 'USD',
                                 value: 5.0, adsh: $tok + '-1', cik: $cik}})
        CREATE (s2:Fact:{label} {{key: $tok + ':s2', tag: 'Assets', ddate: '20200331', qtrs: 0, uom: 'USD',
                                 value: 5.0, adsh: $tok + '-2', cik: $cik}})
        CREATE (f1)-[:REPORTS]->(a), (f2)-[:REPORTS]->(b), (f1)-[:REPORTS]->(s1), (f2)-[:REPORTS]->(s2)
        CREATE (a)-[:OF_CONCEPT]->(k), (b)-[:OF_CONCEPT]->(k)
        CREATE (m:Memo:{label} {{id: $tok + ':memo'}})-[:ABOUT]->(f1)
        CREATE (m)-[:HAS_CLAIM]->(cl:Claim:{label} {{id: $tok + ':memo:1', name: 'Revenues'}})-[:CITES]->(a)
        CREATE (d:Document:{label} {{id: $tok + ':doc'}})
        CREATE (c1:Chunk:{label} {{id: $tok + ':c1', available_at: '2015-01-01T00:00:00Z'}})
        CREATE (c2:Chunk:{label} {{id: $tok + ':c2', available_at: '2016-01-01T00:00:00Z'}})
        CREATE (d)-[:HAS_CHUNK]->(c1), (d)-[:HAS_CHUNK]->(c2)
        CREATE (e1:Entity:{label} {{id: 'policy:' + $tok + ' rate', name: $tok + ' Rate', community: $tok, pagerank: 50.0}})
        CREATE (e2:Entity:{label} {{id: 'market_status:' + $tok + ' growth', name: $tok + ' growth', community: $tok,
                                   pagerank: 40.0}})
        CREATE (e3:Entity:{label} {{id: 'indicator:' + $tok + ' jobs', name: $tok + ' jobs', community: $tok,
                                   pagerank: 30.0}})
        CREATE (e1)-[:AFFECT {{id: $tok + ':t1', chunk_id: $tok + ':c1'}}]->(e2)
        CREATE (e3)-[:MAY_LEAD_TO {{id: $tok + ':t2', chunk_id: $tok + ':c2'}}]->(e1)
        CREATE (r:Report:{label} {{id: 'report:' + $tok + ':tfr:two-stage'}})
        CREATE (r)-[:CITES {{id: $tok + ':r1', kind: 'fact'}}]->(a)
        CREATE (r)-[:CITES {{id: $tok + ':r2', kind: 'chunk'}}]->(c1)
        CREATE (r)-[:CITES {{id: $tok + ':r3', kind: 'triple', triple_id: $tok + ':t1'}}]->(e1)
        CREATE (i:Indicator:{label} {{code: $tok}})
        CREATE (i)-[:HAS_OBSERVATION]->(:Observation:{label} {{id: $tok + ':1', date: date('2015-06-29'), value: 3.6}})
        CREATE (i)-[:HAS_OBSERVATION]->(:Observation:{label} {{id: $tok + ':2', date: date('2015-07-30'), value: 3.5}})
        """,
        {"tok": tok, "cik": cik},
    )
    return tok, cik


def run(graph, name: str, **params) -> list[dict]:
    q = browser.saved_query(name)
    assert set(params) == set(q.params)
    check_read_only(graph, q.text, params)
    return graph.read(q.text, params)


def test_saved_queries_find_every_shape(graph, shapes):
    tok, cik = shapes
    rows = run(graph, "memo-audit-trail", memo_id=f"{tok}:memo")
    assert [(r["claim"]["name"], r["fact"]["value"], r["source"]["adsh"], r["c"]["cik"]) for r in rows] == [
        ("Revenues", 100.0, f"{tok}-1", cik)
    ]

    rows = run(graph, "restated-facts", cik=cik, tag=None)
    assert [(r["tag"], r["value"], r["filing"]["adsh"]) for r in rows] == [
        ("Revenues", 100.0, f"{tok}-1"),
        ("Revenues", 110.0, f"{tok}-2"),
    ]  # Assets has the same value in both filings: not a restatement
    assert run(graph, "restated-facts", cik=cik, tag="Assets") == []

    early = run(graph, "entity-neighbourhood", entity=f"{tok} RATE", as_of="2015-06-30")
    # a relationship comes back as (start, type, end)
    assert [(r["triple"][1], r["other"]["name"], r["document"]["id"]) for r in early] == [
        ("AFFECT", f"{tok} growth", f"{tok}:doc")
    ]
    later = run(graph, "entity-neighbourhood", entity=f"policy:{tok} rate", as_of="2016-06-30T00:00:00Z")
    assert sorted(r["triple"][1] for r in later) == ["AFFECT", "MAY_LEAD_TO"]
    assert run(graph, "entity-neighbourhood", entity=f"policy:{tok} rate", as_of="2014-12-31") == []

    rows = run(graph, "report-citations", report_id=f"report:{tok}:tfr:two-stage")
    cited = {r["x"].get("key") or r["x"]["id"]: r for r in rows}
    assert set(cited) == {f"{tok}:a", f"{tok}:c1", f"policy:{tok} rate"}
    assert cited[f"{tok}:a"]["company"]["cik"] == cik and cited[f"{tok}:a"]["filing"]["adsh"] == f"{tok}-1"
    assert cited[f"{tok}:c1"]["document"]["id"] == f"{tok}:doc"
    triple = cited[f"policy:{tok} rate"]
    assert triple["triple"][1] == "AFFECT" and triple["tail"]["name"] == f"{tok} growth"  # only the cited one

    rows = run(graph, "top-communities", communities=1, per_community=2)
    assert {r["community"] for r in rows} == {tok}  # pagerank far above a real analysis's (they sum to 1)
    assert [(r["e"]["name"], r["other"]["name"] if r["other"] else None) for r in rows] == [
        (f"{tok} Rate", f"{tok} growth"),  # the triple between the two top entities
        (f"{tok} growth", None),
    ]
    assert rows[0]["community_pagerank"] == pytest.approx(120.0)

    rows = run(graph, "indicator-around-date", code=tok, date="2015-07-05", days=7)
    assert [str(r["date"]) for r in rows] == ["2015-06-29"]
    assert len(run(graph, "indicator-around-date", code=tok, date="2015-07-15", days=20)) == 2


# --------------------------------------------------------------------------- the command


def finkg(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "finkg", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_finkg_browser_lists_the_url_style_and_every_query():
    """`finkg browser` reads the settings only (no server needed): the URL, the style file, every query."""
    out = finkg("browser")
    assert out.returncode == 0, out.stderr
    assert re.search(r"Neo4j Browser: https?://\S+/browser/", out.stdout)
    assert str(browser.style_path()) in out.stdout and ":style" in out.stdout
    for q in QUERIES:
        assert f"-- {q.name} (" in out.stdout and q.text in out.stdout
        for line in q.param_lines():
            assert line in out.stdout

    one = finkg("browser", "--query", "memo-audit-trail")
    assert one.returncode == 0 and "-- memo-audit-trail" in one.stdout and "-- restated-facts" not in one.stdout
    style = finkg("browser", "--style")
    assert style.returncode == 0 and style.stdout == browser.style_text()
    missing = finkg("browser", "--query", "no-such-query")
    assert missing.returncode == 2 and "memo-audit-trail" in missing.stderr
