"""Issue 46's "Done when" for a user's own companies, end to end through the CLI.

From an empty graph, `finkg fetch` of three tickers (Tesla, Snowflake, Marvell) from saved real SEC companyfacts
responses, served at their SEC paths by the real local HTTP server of tests/test_fetch.py (provenance in
data/NOTICE.md); then, offline (EDGAR a closed port, no identity), `finkg ask` on a question about each company,
`finkg memo` on every filing and `finkg report --reader agent` on the three questions; a second fetch makes no
request. Then one company gets one filing more: the item ledger (kg/ledger.py) redoes only what depends on it (that
filing's memo, that company's report) and leaves the other companies' memos and reports as they were.

The graph is empty because it is this module's own: a second private Neo4j server (own home, own ports, as
tests/test_bulk_import.py starts one), which the `finkg` subprocesses reach through ``FINKG_NEO4J__*``. Gold values
come from a plain `json` reading of the same files (tests/test_fetch.py's ``independent_reading``), never from
finkg's code. No model is configured (no ``[llm]`` backend, no embedding model): the analyst answers these
questions by its plan, which loads neither, so the reports run without them; a question that needs the LLM stops the
batch with one line naming the setting.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_cli import finkg
from test_fetch import IDENTITY, EdgarServer, independent_reading, mismatches

from finkg.neo4j_server import LocalNeo4j, private_settings
from kg import Graph, schema

pytestmark = [pytest.mark.neo4j]

ROOT = Path(__file__).resolve().parents[1]
TSLA, SNOW, MRVL = 1318605, 1640147, 1835632
FILES = {  # the saved companyfacts responses (data/NOTICE.md)
    TSLA: ROOT / "data" / "sec-companyfacts" / "CIK0001318605-tesla-2022.json",  # Tesla, to 2022-10-24
    SNOW: ROOT / "data" / "sec-companyfacts" / "CIK0001640147-snowflake.json",  # Snowflake, to 2025-05-30
    MRVL: ROOT / "tests" / "data" / "edgar" / "companyfacts" / "CIK0001835632.json",  # Marvell, served 2026-06-08
}
TICKERS = ("TSLA", "SNOW", "MRVL")
MRVL_10K, MRVL_Q3 = "0001835632-26-000011", "0001835632-25-000197"  # its 10-K for fiscal 2026, its third quarter's 10-Q
MRVL_10Q = "0001835632-26-000019"  # Marvell's 10-Q for the quarter ended 2026-05-02, filed 2026-05-28: its latest
QUESTIONS = [
    {
        "id": "tsla-net-income",
        "question": "What was Tesla's net income in the quarter ended September 30, 2022?",
        "as_of": "2022-12-31",
        "companies": ["Tesla, Inc."],
    },
    {
        "id": "snow-revenue",
        "question": "What was Snowflake's revenue in the quarter ended April 30, 2025?",
        "as_of": "2025-06-30",
        "companies": ["SNOWFLAKE INC."],
    },
    {
        "id": "mrvl-revenue",
        "question": "What was Marvell's revenue last quarter?",
        "as_of": "2026-06-08",
        "companies": ["MARVELL TECHNOLOGY, INC"],
    },
]
ASKED = {q["id"]: cik for q, cik in zip(QUESTIONS, (TSLA, SNOW, MRVL), strict=True)}


def facts_path(cik: int) -> str:
    """The SEC URL path of a company's companyfacts."""
    return f"/api/xbrl/companyfacts/CIK{cik:010d}.json"


def json_facts(path: Path) -> dict[str, float]:
    """``{fact key: value}`` of a companyfacts file read with json and pandas alone (test_fetch's independent
    reading), keyed as finkg cites a fact: ``accession:tag:taxonomy:YYYYMMDD:quarters:USD::``."""
    out: dict[str, float] = {}
    for r in independent_reading(path).to_dict("records"):
        taxonomy, tag = str(r["concept"]).split(":")
        out[f"{r['adsh']}:{tag}:{taxonomy}:{r['ddate']}:{r['qtrs']}:USD::"] = float(r["value"])
    return out


def filings_of(path: Path) -> dict[str, str]:
    """``{accession: form}`` of every filing with an entry in a companyfacts file (json alone)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    return {
        e["accn"]: e["form"]
        for tags in doc["facts"].values()
        for concept in tags.values()
        for unit in concept["units"].values()
        for e in unit
    }


def without_filing(path: Path, adsh: str, out: Path) -> Path:
    """A companyfacts response as SEC served it before filing ``adsh`` was made: the saved (later) response with
    every entry of that filing taken out (companyfacts lists each value under each filing that reported it, so a
    filing adds exactly its own entries). Written to ``out``."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    for tags in doc["facts"].values():
        for tag in list(tags):
            units = tags[tag]["units"]
            for unit in list(units):
                units[unit] = [e for e in units[unit] if e["accn"] != adsh]
                if not units[unit]:
                    del units[unit]
            if not units:
                del tags[tag]
    out.write_text(json.dumps(doc), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def empty(tmp_path_factory) -> Iterator[tuple[Graph, dict[str, str]]]:
    """This module's own Neo4j (schema applied as `finkg db init` does) and the environment that points a `finkg`
    subprocess at it (no ``[llm]``, no ``[embedding]``: none is needed)."""
    password = secrets.token_urlsafe(16)
    s = private_settings(tmp_path_factory.mktemp("own-companies") / "neo4j", password, heap="768m", pagecache="256m")
    env = {
        "FINKG_NEO4J__URI": s.uri,
        "FINKG_NEO4J__USER": "neo4j",
        "FINKG_NEO4J__PASSWORD": password,
        "FINKG_NEO4J__DATABASE": "neo4j",
        "FINKG_LLM__CACHE_DIR": str(tmp_path_factory.mktemp("llm-cache")),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    server = LocalNeo4j(s)
    server.start()
    try:
        with Graph(s.uri, "neo4j", password) as g:
            schema.apply_schema(g)
            yield g, env
    finally:
        server.stop()


@pytest.fixture
def graph_env(empty) -> tuple[Graph, dict[str, str]]:
    """The module's graph, emptied for each test."""
    g, env = empty
    g.run_autocommit("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS")
    assert g.read("MATCH (n) RETURN count(n) AS n") == [{"n": 0}]
    return g, env


@pytest.fixture(autouse=True)
def _no_outside_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's own edgartools and finkg settings never reach these subprocesses (nor a model of theirs)."""
    for var in list(os.environ):
        if (
            var.startswith(("FINKG_EDGAR_", "EDGAR_", "FINKG_LLM_", "FINKG_EMBEDDING_"))
            and var != "FINKG_LLM__CACHE_DIR"
        ):
            monkeypatch.delenv(var)


def edgar(server: EdgarServer | None, cache: Path) -> dict[str, str]:
    """``[edgar]`` for a subprocess: the cache, and the local server as EDGAR; None: offline (no identity, and EDGAR
    a closed port, so a request could not succeed)."""
    url = server.url if server else "http://127.0.0.1:9"
    env = {"FINKG_EDGAR__CACHE_DIR": str(cache), "FINKG_EDGAR__DATA_URL": url, "FINKG_EDGAR__BASE_URL": url}
    return {**env, "FINKG_EDGAR__IDENTITY": IDENTITY} if server else env


def run(*args: str, env: dict[str, str]) -> str:
    """``finkg *args``; it must succeed. Returns its standard output."""
    res = finkg(*args, env=env)
    assert res.returncode == 0, f"finkg {' '.join(args)}: {res.stderr[-3000:]}"
    return res.stdout


def table(stdout: str) -> list[dict[str, str]]:
    """The rows of a table the CLI prints (``finkg fetch``'s, ``finkg memo``'s) as ``{column: cell}``."""
    lines = [x for x in stdout.splitlines() if x.startswith(("┃", "│"))]
    head = [c.strip() for c in lines[0].strip("┃").split("┃")]
    return [dict(zip(head, [c.strip() for c in x.strip("│").split("│")], strict=True)) for x in lines[1:]]


def rows(stdout: str) -> dict[str, str]:
    """A two-column table of the CLI (``finkg report``'s summary) as ``{first cell: second cell}``."""
    cells = [[c.strip() for c in x.strip("│").split("│")] for x in stdout.splitlines() if x.startswith("│")]
    return {c[0]: c[1] for c in cells if len(c) == 2}


def answer_gold(derivation: dict[str, Any], facts: dict[str, float]) -> float:
    """The answer a one-operand derivation must give: the json value of the fact its operand cites."""
    [operand] = derivation["operands"].values()
    return facts[operand["fact_key"]]


def nodes(graph: Graph, label: str, key: str = "id") -> dict[str, dict[str, Any]]:
    """Every ``label`` node's properties by ``key`` (a ledger node's status, input digest, attempts and times)."""
    return {r["k"]: r["p"] for r in graph.read(f"MATCH (n:{label}) RETURN n.{key} AS k, properties(n) AS p")}


def company_facts(graph: Graph, cik: int) -> list[dict[str, Any]]:
    """Every fact of a company's filings in the graph: key and value, by key."""
    return graph.read(
        "MATCH (:Company {cik: $cik})-[:FILED]->(:Filing)-[:REPORTS]->(x:Fact) RETURN x.key AS k, x.value AS v "
        "ORDER BY k",
        {"cik": cik},
    )


def files(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``folder``: its bytes and modification time (ns)."""
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()
    }


def test_three_tickers_from_an_empty_graph_to_answers_memos_and_reports_offline(graph_env, tmp_path):
    graph, neo4j = graph_env
    cache = tmp_path / "edgar"
    server = EdgarServer({facts_path(cik): path for cik, path in FILES.items()})
    try:
        first = run("fetch", *TICKERS, "--no-filings", env={**neo4j, **edgar(server, cache)})
        assert server.requests == [facts_path(TSLA), facts_path(SNOW), facts_path(MRVL)]  # tickers: no request
        assert set(server.user_agents) == {IDENTITY}
        assert [(r["company"], r["from"]) for r in table(first)] == [(t, "EDGAR") for t in TICKERS]
        second = run("fetch", *TICKERS, "--no-filings", env={**neo4j, **edgar(server, cache)})
        assert len(server.requests) == 3  # the second fetch: 0 requests, all three from the cache
        assert [(r["from"], r["loaded"], r["facts new"]) for r in table(second)] == [("cache", "unchanged", "0")] * 3
    finally:
        server.close()
    for cik, path in FILES.items():
        assert (cache / "companyfacts" / f"CIK{cik:010d}.json").read_bytes() == path.read_bytes()
        assert mismatches(graph, cik, independent_reading(path)).empty, cik  # every USD fact, exactly

    offline = {**neo4j, **edgar(None, cache)}
    [row] = table(run("fetch", "--offline", "MRVL", "--no-filings", env=offline))  # the cache alone, no identity
    assert (row["from"], row["loaded"], row["facts new"]) == ("cache", "unchanged", "0")

    facts = {cik: json_facts(path) for cik, path in FILES.items()}
    want = {  # gold: the value the filing reported, read from the json
        "tsla-net-income": facts[TSLA]["0000950170-22-019867:NetIncomeLoss:us-gaap:20220930:1:USD::"],
        "snow-revenue": facts[SNOW][
            "0001640147-25-000110:RevenueFromContractWithCustomerExcludingAssessedTax:us-gaap:20250430:1:USD::"
        ],
        "mrvl-revenue": facts[MRVL][
            f"{MRVL_10Q}:RevenueFromContractWithCustomerExcludingAssessedTax:us-gaap:20260502:1:USD::"
        ],
    }
    assert want == {"tsla-net-income": 3_292_000_000, "snow-revenue": 1_042_074_000, "mrvl-revenue": 2_417_800_000}

    for q in QUESTIONS:
        got = json.loads(run("ask", q["question"], "--format", "json", env=offline))
        assert got["status"] == "answered" and got["verdict"]["passed"], got
        assert got["derivation"]["result"] == want[q["id"]] == answer_gold(got["derivation"], facts[ASKED[q["id"]]])
    # the fiscal date as Marvell's 10-Q states it (a 52/53-week quarter ended Saturday May 2, not FSDS's April 30)
    got = json.loads(
        run("ask", "What was Marvell's revenue in the quarter ended May 2, 2026?", "--format", "json", env=offline)
    )
    assert got["status"] == "answered" and got["verdict"]["passed"], got
    assert got["derivation"]["result"] == want["mrvl-revenue"] == answer_gold(got["derivation"], facts[MRVL])
    # a fourth quarter, which no 10-K reports: the fiscal year less its nine months, both facts cited (gold: the json's
    # year and nine months, the filings' figures; Tesla reported 17,719 and Snowflake 986.8 million for these quarters)
    fourth = {
        "What was Tesla's revenue in the fourth quarter of 2021?": (
            TSLA,
            "Revenues",
            "20211231",
            "20210930",
            17_719_000_000,
        ),
        "What was Snowflake's revenue for the quarter ended January 31, 2025?": (
            SNOW,
            "RevenueFromContractWithCustomerExcludingAssessedTax",
            "20250131",
            "20241031",
            986_770_000,
        ),
    }
    for question, (cik, tag, year_end, nine_end, reported) in fourth.items():
        got = json.loads(run("ask", question, "--format", "json", env=offline))
        assert got["status"] == "answered" and got["verdict"]["passed"], got
        [operand] = got["derivation"]["operands"].values()
        (plus, year), (minus, nine) = ((c["sign"], c["fact_key"]) for c in operand["components"])
        assert (plus, minus) == (1, -1)
        assert year.split(":")[1:5] == [tag, "us-gaap", year_end, "4"]
        assert nine.split(":")[1:5] == [tag, "us-gaap", nine_end, "3"]
        assert got["derivation"]["result"] == facts[cik][year] - facts[cik][nine] == reported

    memos = tmp_path / "memos"
    [summary] = table(run("memo", "--all", "-o", str(memos), env=offline))
    made = nodes(graph, "Memo")
    assert summary["written"] == str(len(made)) and summary["already done"] == "0"
    assert (summary["repaired"], summary["unsupported"]) == ("0", "0")
    for cik, path in FILES.items():
        forms = filings_of(path)
        periodic = {a for a, form in forms.items() if form in ("10-K", "10-Q")}
        mine = {m["adsh"] for m in made.values() if m["adsh"] in forms}
        # every 10-K and 10-Q; Tesla's 10-K for 2011 is superseded by its 10-K/A of the same period, which has the memo
        assert periodic - mine == ({"0001193125-12-081990"} if cik == TSLA else set()), cik
    assert all(m["status"] == "done" and m["input_digest"] for m in made.values())
    claims = [json.loads(x) for x in (memos / "structured" / "claims.jsonl").read_text().splitlines()]
    stated = [c for c in claims if c["kind"] == "fact" and c["value"] is not None]
    everything = {k: v for f in facts.values() for k, v in f.items()}
    assert len(stated) > 500 and all(c["value"] == everything[c["citations"]] for c in stated)  # each as filed
    assert "Revenue was $2,418 million for the three months ended 2026-05-02" in (
        memos / "structured" / f"{MRVL_10Q}.md"
    ).read_text(encoding="utf-8")

    batch = tmp_path / "questions.jsonl"
    batch.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    reports = tmp_path / "reports"
    done = rows(
        run(
            "report",
            "--batch",
            str(batch),
            "--reader",
            "agent",
            "--system",
            "none",
            "--out",
            str(reports),
            "--yes",
            env=offline,
        )
    )
    assert done["answered by the agent (gate passed)"] == "3" and done["tokens (backend)"] == "0"  # no LLM call
    for q in QUESTIONS:
        rec = json.loads((reports / f"{q['id']}.none.agent.json").read_text(encoding="utf-8"))
        assert rec["status"] == "done" and rec["gate"]["passed"] and rec["route"] == "plan"
        assert rec["derivation"]["result"] == want[q["id"]]
        assert (rec["model_id"], rec["embedder"], rec["facts_shown"]) == ("none", None, [])  # no model was loaded


def test_an_added_filing_redoes_only_what_depends_on_it(graph_env, tmp_path):
    """Marvell's companyfacts before its 10-Q of 2026-05-28, then as SEC served it after: a `finkg fetch --refresh`
    of Marvell adds that filing's facts and touches nothing else; `finkg memo --all` then writes that filing's memo
    only, and `finkg report` redoes Marvell's report only (its facts changed), as the ledger decides."""
    graph, neo4j = graph_env
    later = FILES[MRVL]
    earlier = without_filing(later, MRVL_10Q, tmp_path / "CIK0001835632.earlier.json")
    assert set(filings_of(later)) - set(filings_of(earlier)) == {MRVL_10Q}
    cache = tmp_path / "edgar"
    server = EdgarServer({facts_path(TSLA): FILES[TSLA], facts_path(SNOW): FILES[SNOW], facts_path(MRVL): earlier})
    try:
        run("fetch", *TICKERS, "--no-filings", env={**neo4j, **edgar(server, cache)})
    finally:
        server.close()
    assert mismatches(graph, MRVL, independent_reading(earlier)).empty
    offline = {**neo4j, **edgar(None, cache)}
    memos, reports = tmp_path / "memos", tmp_path / "reports"
    batch = tmp_path / "questions.jsonl"
    batch.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    report = ("report", "--batch", str(batch), "--reader", "agent", "--system", "none", "--out", str(reports), "--yes")
    run("memo", "--all", "-o", str(memos), env=offline)
    run(*report, env=offline)
    before = {label: nodes(graph, label) for label in ("Memo", "Report", "IngestRun")}
    filings_before = nodes(graph, "Filing", "adsh")
    memo_files, report_files = files(memos / "structured"), files(reports)
    facts_before = {cik: company_facts(graph, cik) for cik in FILES}
    old_answer = json.loads((reports / "mrvl-revenue.none.agent.json").read_text(encoding="utf-8"))
    # the last quarter then: the fourth of the fiscal year ended 2026-01-31, which the 10-K does not report: the year
    # (its 10-K) less its nine months (the third quarter's 10-Q, ended Saturday 2025-11-01)
    revenue = "RevenueFromContractWithCustomerExcludingAssessedTax:us-gaap"
    year, nine = (
        json_facts(earlier)[f"{MRVL_10K}:{revenue}:20260131:4:USD::"],
        json_facts(earlier)[f"{MRVL_Q3}:{revenue}:20251101:3:USD::"],
    )
    assert old_answer["derivation"]["result"] == year - nine
    assert old_answer["gate"]["passed"]
    [operand] = old_answer["derivation"]["operands"].values()
    assert [(c["sign"], c["fact_key"]) for c in operand["components"]] == [
        (1, f"{MRVL_10K}:{revenue}:20260131:4:USD::"),
        (-1, f"{MRVL_Q3}:{revenue}:20251101:3:USD::"),
    ]  # what it walks back to

    # a later day: EDGAR serves Marvell's companyfacts with the new 10-Q. edgartools' HTTP cache (``_tcache``, 30 s for
    # companyfacts) has long expired by then: emptied here, so its answer never stands in for the request (another
    # server alone did not make sure of it: a port the first server freed can be given to the second, and the run
    # failed once so on loaded cores)
    shutil.rmtree(cache / "_tcache", ignore_errors=True)
    server = EdgarServer({facts_path(MRVL): later})
    try:
        out = run("fetch", "--refresh", "MRVL", "--no-filings", env={**neo4j, **edgar(server, cache)})
        assert server.requests == [facts_path(MRVL)]
    finally:
        server.close()
    new_facts = {k: v for k, v in json_facts(later).items() if k.startswith(MRVL_10Q)}
    [row] = table(out)
    assert (row["company"], row["from"], row["loaded"]) == ("MRVL", "EDGAR", "yes")
    assert row["facts new"] == str(len(new_facts))  # the 10-Q's
    assert mismatches(graph, MRVL, independent_reading(later)).empty
    for cik in (TSLA, SNOW):  # the other companies' facts are as they were
        assert company_facts(graph, cik) == facts_before[cik]
    runs_now = nodes(graph, "IngestRun")
    assert {k: v for k, v in runs_now.items() if k in before["IngestRun"]} == before["IngestRun"]  # none touched
    filings_now = nodes(graph, "Filing", "adsh")
    assert set(filings_now) - set(filings_before) == {MRVL_10Q}
    assert {k: filings_now[k] for k in filings_before} == filings_before

    [summary] = table(run("memo", "--all", "-o", str(memos), env=offline))
    assert (summary["written"], summary["already done"]) == ("1", str(len(before["Memo"])))
    memo_now = nodes(graph, "Memo")
    assert set(memo_now) - set(before["Memo"]) == {f"structured:{MRVL_10Q}"}
    assert {k: memo_now[k] for k in before["Memo"]} == before["Memo"]  # ledger digests, attempts, times: unchanged
    after = files(memos / "structured")
    kept = {
        k: v for k, v in memo_files.items() if not k.startswith("claims.")
    }  # the run's gathered claims are rewritten
    assert {k: after[k] for k in kept} == kept  # every earlier memo file: the same bytes, never rewritten
    assert set(after) - set(memo_files) == {f"{MRVL_10Q}.md", f"claims/{MRVL_10Q}.jsonl"}

    done = rows(run(*report, env=offline))
    assert (done["skipped (already done)"], done["answered by the agent (gate passed)"]) == ("2", "1")
    report_now = nodes(graph, "Report")
    changed = {k for k in before["Report"] if report_now[k] != before["Report"][k]}
    assert changed == {"report:mrvl-revenue:none:agent"}  # Tesla's and Snowflake's reports untouched
    assert {k: v for k, v in files(reports).items() if not k.startswith("mrvl-")} == {
        k: v for k, v in report_files.items() if not k.startswith("mrvl-")
    }
    rec = json.loads((reports / "mrvl-revenue.none.agent.json").read_text(encoding="utf-8"))
    assert (
        rec["derivation"]["result"]
        == json_facts(later)[f"{MRVL_10Q}:RevenueFromContractWithCustomerExcludingAssessedTax:us-gaap:20260502:1:USD::"]
    )  # up to date: the new quarter's revenue


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def graph_state(graph: Graph) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every node (labels, properties) and every relationship (type, properties, ends) of the graph."""
    nodes = graph.read("MATCH (n) RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS p ORDER BY id")
    rels = graph.read(
        "MATCH (a)-[r]->(b) RETURN elementId(r) AS id, type(r) AS type, properties(r) AS p, elementId(a) AS a, "
        "elementId(b) AS b ORDER BY id"
    )
    return nodes, rels


def watermark(graph: Graph, cik: int) -> dict[str, Any]:
    """A company's companyfacts watermark: the SHA-256 of the response its facts were loaded from, and the run."""
    [row] = graph.read(
        "MATCH (c:Company {cik: $cik}) RETURN c.companyfacts_sha256 AS sha256, c.companyfacts_run AS run", {"cik": cik}
    )
    return row


def test_a_fetch_the_cache_serves_writes_nothing_and_a_changed_response_loads(graph_env, tmp_path):
    """Marvell's companyfacts as SEC served it before its 10-Q of 2026-05-28. A fetch killed after the load and before
    the company's watermark (the response's SHA-256) is set loads the file again when rerun (nothing new) and sets it;
    then a fetch from the cache, and one --offline, neither read nor write it: every node and relationship of the
    graph, properties included (the ingest run's times too), is as it was. A changed response (SEC's of 2026-06-08,
    with that 10-Q, into another cache, no --refresh) is loaded (that 10-Q's facts), and --refresh loads an unchanged
    one again, as before."""
    graph, neo4j = graph_env
    later = FILES[MRVL]
    earlier = without_filing(later, MRVL_10Q, tmp_path / "CIK0001835632.earlier.json")
    cache = tmp_path / "edgar"
    server = EdgarServer({facts_path(MRVL): earlier})
    try:
        env = {**neo4j, **edgar(server, cache)}
        killed = finkg("fetch", "MRVL", "--no-filings", env={**env, "FINKG_TEST_KILL_AT": "companyfacts-watermark"})
        assert killed.returncode == -9, killed.stderr[-3000:]
        assert mismatches(graph, MRVL, independent_reading(earlier)).empty  # the load itself finished
        assert watermark(graph, MRVL) == {"sha256": None, "run": None}
        [rerun] = table(run("fetch", "MRVL", "--no-filings", env=env))
        assert (rerun["from"], rerun["loaded"], rerun["facts new"]) == ("cache", "yes", "0")
        assert watermark(graph, MRVL) == {"sha256": sha256(earlier), "run": rerun["run"]}

        before = graph_state(graph)
        [again] = table(run("fetch", "MRVL", "--no-filings", env=env))
        assert server.requests == [facts_path(MRVL)]
        assert (again["from"], again["loaded"], again["facts new"], again["run"]) == (
            "cache",
            "unchanged",
            "0",
            rerun["run"],
        )
        assert {k: again[k] for k in ("filings", "rows", "kept")} == {k: rerun[k] for k in ("filings", "rows", "kept")}
        assert graph_state(graph) == before  # nothing written
    finally:
        server.close()
    [offline] = table(run("fetch", "--offline", "MRVL", "--no-filings", env={**neo4j, **edgar(None, cache)}))
    assert (offline["loaded"], offline["facts new"]) == ("unchanged", "0")
    assert graph_state(graph) == before

    server = EdgarServer({facts_path(MRVL): later})  # another day, another cache: a changed response
    try:
        env = {**neo4j, **edgar(server, tmp_path / "edgar-later")}
        [changed] = table(run("fetch", "MRVL", "--no-filings", env=env))
        added = {k for k in json_facts(later) if k.startswith(MRVL_10Q)}
        assert (changed["from"], changed["loaded"], changed["facts new"]) == ("EDGAR", "yes", str(len(added)))
        assert mismatches(graph, MRVL, independent_reading(later)).empty
        assert watermark(graph, MRVL) == {"sha256": sha256(later), "run": changed["run"]}
        [refreshed] = table(run("fetch", "--refresh", "MRVL", "--no-filings", env=env))
        assert (refreshed["loaded"], refreshed["facts new"]) == ("yes", "0")  # --refresh loads as it did
    finally:
        server.close()


def one_line_error(res: Any) -> str:
    """The one line a `finkg` command refused with (exit 2, no traceback; the cost estimate and progress lines that
    come before it on standard error are not errors)."""
    assert res.returncode == 2, res.stdout[-2000:] + res.stderr[-2000:]
    assert "Traceback" not in res.stderr and "failed:" not in res.stderr
    lines = [x for x in res.stderr.splitlines() if x.startswith("error")]
    assert len(lines) == 1, res.stderr
    return lines[0]


def test_a_report_needs_a_model_only_when_it_calls_one(graph_env, tmp_path):
    """With no ``[llm]`` backend and no embedding model configured: the analyst's plan answers a question and its report
    is written (no LLM call, nothing encoded, the record says so); a question only the LLM can read stops the batch
    with one line naming ``[llm] backend`` (its report not written), and so does the two-stage reader, which always
    calls the LLM, before any question."""
    graph, neo4j = graph_env
    cache = tmp_path / "edgar"
    server = EdgarServer({facts_path(SNOW): FILES[SNOW]})
    try:
        run("fetch", "SNOW", "--no-filings", env={**neo4j, **edgar(server, cache)})
    finally:
        server.close()
    offline = {**neo4j, **edgar(None, cache)}
    q = QUESTIONS[1]  # Snowflake's revenue in the quarter ended April 30, 2025: the plan's
    liquidity = {**q, "id": "snow-liquidity", "question": "What does Snowflake say about its liquidity?"}  # the LLM's
    reports = tmp_path / "reports"

    def report(rows_: list[dict[str, Any]], *options: str) -> Any:
        batch = tmp_path / f"{rows_[0]['id']}.jsonl"
        batch.write_text("".join(json.dumps(r) + "\n" for r in rows_), encoding="utf-8")
        return finkg(
            "report", "--batch", str(batch), "--system", "none", "--out", str(reports), "--yes", *options, env=offline
        )

    res = report([q], "--reader", "agent")
    assert res.returncode == 0, res.stderr[-3000:]
    done = rows(res.stdout)
    assert (done["answered by the agent (gate passed)"], done["tokens (backend)"], done["failed"]) == ("1", "0", "0")
    rec = json.loads((reports / "snow-revenue.none.agent.json").read_text(encoding="utf-8"))
    assert rec["status"] == "done" and rec["route"] == "plan" and rec["gate"]["passed"]
    revenue = "0001640147-25-000110:RevenueFromContractWithCustomerExcludingAssessedTax:us-gaap:20250430:1:USD::"
    assert rec["derivation"]["result"] == json_facts(FILES[SNOW])[revenue] == 1_042_074_000
    assert (rec["model_id"], rec["embedder"], rec["facts_shown"]) == ("none", None, [])
    assert rec["facts_total"] > 0  # F was gathered, not ranked: nothing read it

    line = one_line_error(report([liquidity], "--reader", "agent"))
    assert line.startswith("error: no LLM configured: set [llm] backend"), line
    assert not (reports / "snow-liquidity.none.agent.json").exists()
    failed = graph.read("MATCH (r:Report {id: 'report:snow-liquidity:none:agent'}) RETURN r.status AS s")
    assert failed == [{"s": "failed"}]  # recorded in the ledger: a rerun with an LLM configured makes it

    line = one_line_error(report([q], "--reader", "two-stage"))
    assert line.startswith("error: no LLM configured: set [llm] backend"), line
    assert sorted(p.name for p in reports.iterdir()) == ["snow-revenue.none.agent.json", "snow-revenue.none.agent.md"]
