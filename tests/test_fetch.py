"""`finkg fetch` through edgartools against a real local HTTP server that serves saved SEC responses at the SEC's
URL paths (tests/data/edgar, provenance in data/NOTICE.md); edgartools is pointed at it by ``[edgar] data_url``
and ``base_url`` (its EDGAR_DATA_URL and EDGAR_BASE_URL), and every request it makes is counted at the server.
No network: an unknown path answers 404 here."""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pandas as pd
import pytest
from test_cli import finkg

from retrieval.facts.history import find_company

ROOT = Path(__file__).resolve().parents[1]
LPA = ROOT / "tests" / "data" / "edgar" / "companyfacts" / "CIK0001997711.json"  # Logistic Properties of the Americas
LPA_CIK = 1997711
FACTS_PATH = "/api/xbrl/companyfacts/CIK0001997711.json"
IDENTITY = "finkg tests finkg-tests@example.com"


class EdgarServer:
    """A real HTTP server on 127.0.0.1 serving files at SEC URL paths; ``requests`` lists every path asked."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files
        self.requests: list[str] = []
        self.user_agents: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(self.path)
                server.user_agents.append(self.headers.get("User-Agent", ""))
                path = server.files.get(self.path)
                if path is None:
                    self.send_error(404)
                    return
                body = path.read_bytes()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def sec() -> Iterator[EdgarServer]:
    server = EdgarServer({FACTS_PATH: LPA})
    yield server
    server.close()


def _env(sec: EdgarServer, cache: Path, identity: str | None = IDENTITY) -> dict[str, str]:
    env = {
        "FINKG_EDGAR__CACHE_DIR": str(cache),
        "FINKG_EDGAR__DATA_URL": sec.url,
        "FINKG_EDGAR__BASE_URL": sec.url,
    }
    if identity is not None:
        env["FINKG_EDGAR__IDENTITY"] = identity
    return env


@pytest.fixture(autouse=True)
def _no_outside_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's own edgartools and finkg settings never reach these subprocesses."""
    for var in list(os.environ):
        if var.startswith(("FINKG_EDGAR_", "EDGAR_")):
            monkeypatch.delenv(var)


def independent_reading(path: Path) -> pd.DataFrame:
    """The USD facts of a companyfacts file read with json and pandas alone (none of finkg's code): one row per
    (accession, concept, end date, quarters), the first entry of a key kept, as SEC lists them."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    rows = [
        {
            "adsh": e["accn"],
            "concept": f"{taxonomy}:{tag}",
            "unit": unit,
            "start": e.get("start"),
            "end": e["end"],
            "value": e["val"],
        }
        for taxonomy, tags in doc["facts"].items()
        for tag, concept in tags.items()
        for unit, entries in concept["units"].items()
        for e in entries
    ]
    df = pd.DataFrame(rows)
    df = df[df["unit"] == "USD"].copy()
    end, start = pd.to_datetime(df["end"]), pd.to_datetime(df["start"])
    df["ddate"] = end.dt.strftime("%Y%m%d")
    df["qtrs"] = ((end - start).dt.days / 91.3).round().fillna(0).astype(int)
    return df.drop_duplicates(["adsh", "concept", "ddate", "qtrs"])[["adsh", "concept", "ddate", "qtrs", "value"]]


def mismatches(graph, cik: int, expected: pd.DataFrame) -> pd.DataFrame:
    got = pd.DataFrame(
        graph.read(
            "MATCH (:Company {cik: $cik})-[:FILED]->(f:Filing)-[:REPORTS]->(x:Fact) "
            "RETURN f.adsh AS adsh, x.concept AS concept, x.ddate AS ddate, x.qtrs AS qtrs, x.value AS value",
            {"cik": cik},
        ),
        columns=["adsh", "concept", "ddate", "qtrs", "value"],
    )
    both = expected.merge(got, on=["adsh", "concept", "ddate", "qtrs"], how="outer", indicator=True)

    def same(a: float, b: float) -> bool:
        if pd.isna(a) or pd.isna(b):
            return pd.isna(a) and pd.isna(b)
        return math.isclose(float(a), float(b), rel_tol=0, abs_tol=0)

    differs = [not same(a, b) for a, b in zip(both["value_x"], both["value_y"])]
    return both[(both["_merge"] != "both") | pd.Series(differs, index=both.index)]


def test_fetch_by_ticker_equals_the_file_then_the_cache_makes_no_request(graph, sec, tmp_path):
    before = graph.read("MATCH (c:Company {cik: $cik}) RETURN count(c) AS n", {"cik": LPA_CIK})
    assert before == [{"n": 0}]  # this company is not in the graph yet
    cache = tmp_path / "edgar"

    first = finkg("fetch", "--no-filings", "LPA", env=_env(sec, cache))
    assert first.returncode == 0, first.stderr
    assert sec.requests == [FACTS_PATH]  # one request, for companyfacts; the ticker was resolved without one
    assert sec.user_agents == [IDENTITY]
    saved = cache / "companyfacts" / "CIK0001997711.json"
    assert saved.read_bytes() == LPA.read_bytes()  # the response as served, in edgartools' local-storage layout
    assert "EDGAR" in first.stdout and "1997711" in first.stdout

    expected = independent_reading(LPA)
    assert len(expected) == 691
    assert mismatches(graph, LPA_CIK, expected).empty
    filings = graph.read(
        "MATCH (:Company {cik: $cik})-[:FILED]->(f:Filing) RETURN f.adsh AS adsh, f.form AS form ORDER BY adsh",
        {"cik": LPA_CIK},
    )
    doc = json.loads(LPA.read_text(encoding="utf-8"))
    accessions = {
        e["accn"] for tags in doc["facts"].values() for c in tags.values() for u in c["units"].values() for e in u
    }
    assert {f["adsh"] for f in filings} == accessions  # every filing, also one with no USD fact (cover page only)
    # the ticker it was fetched by names it from now on (finkg facts history --company LPA, the analyst)
    assert graph.read("MATCH (c:Company {cik: $cik}) RETURN c.ticker AS t", {"cik": LPA_CIK}) == [{"t": "LPA"}]
    assert find_company(graph, "lpa")[0] == LPA_CIK

    second = finkg("fetch", "--no-filings", "LPA", env=_env(sec, cache))
    assert second.returncode == 0, second.stderr
    assert sec.requests == [FACTS_PATH]  # 0 requests: the company came from the cache
    assert "cache" in second.stdout

    offline = finkg("fetch", "--no-filings", "--offline", "CIK0001997711", env=_env(sec, cache, identity=None))
    assert offline.returncode == 0, offline.stderr
    assert sec.requests == [FACTS_PATH]
    assert mismatches(graph, LPA_CIK, expected).empty  # the same file again changes nothing

    # --refresh goes to edgartools again: its HTTP cache answers within its freshness window, else SEC does
    refreshed = finkg("fetch", "--no-filings", "--refresh", "LPA", env=_env(sec, cache))
    assert refreshed.returncode == 0, refreshed.stderr
    assert "EDGAR" in refreshed.stdout and sec.requests in ([FACTS_PATH], [FACTS_PATH, FACTS_PATH])
    assert mismatches(graph, LPA_CIK, expected).empty


def test_a_missing_identity_is_one_line_and_exit_2(sec, tmp_path):
    res = finkg("fetch", "--no-filings", "LPA", env=_env(sec, tmp_path / "edgar", identity=None))
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert "[edgar] identity" in lines[0] and "Traceback" not in res.stderr
    assert sec.requests == []


def test_an_identity_without_an_email_is_refused(sec, tmp_path):
    res = finkg("fetch", "--no-filings", "LPA", env=_env(sec, tmp_path / "edgar", identity="finkg"))
    assert res.returncode == 2 and "not a name and an email" in res.stderr
    assert sec.requests == []


def test_offline_names_a_company_not_in_the_cache(sec, tmp_path):
    res = finkg("fetch", "--no-filings", "--offline", "LPA", env=_env(sec, tmp_path / "edgar"))
    assert res.returncode == 2
    assert "not in the EDGAR cache" in res.stderr and "without --offline" in res.stderr
    said = [line for line in res.stderr.splitlines() if not line.startswith("fetch (SEC EDGAR)")]  # progress lines
    assert len(said) == 1 and said[0].startswith("error: LPA: CIK 1997711"), res.stderr
    assert sec.requests == []


def test_a_company_edgar_does_not_have_is_named(sec, tmp_path):
    res = finkg("fetch", "--no-filings", "1234567", env=_env(sec, tmp_path / "edgar"))
    assert res.returncode == 2, res.stderr
    assert "no companyfacts for CIK 1234567" in res.stderr and "Traceback" not in res.stderr
    assert sec.requests == ["/api/xbrl/companyfacts/CIK0001234567.json"]  # a 404 is not retried
    assert not (tmp_path / "edgar" / "companyfacts" / "CIK0001234567.json").exists()


SNOW = ROOT / "data" / "sec-companyfacts" / "CIK0001640147-snowflake.json"  # edgartools' test data (data/NOTICE.md)
SNOW_CIK = 1640147
SNOW_PATH = "/api/xbrl/companyfacts/CIK0001640147.json"


@pytest.mark.reliability("crash")
def test_a_fetch_killed_mid_write_then_rerun_equals_a_clean_fetch(graph, tmp_path):
    server = EdgarServer({SNOW_PATH: SNOW})
    try:
        env = _env(server, tmp_path / "edgar")
        killed = finkg(
            "fetch", "--no-filings", "SNOW", env={**env, "FINKG_TEST_KILL_AT": "facts"}
        )  # SIGKILL before the facts
        assert killed.returncode == -9, killed.stderr
        assert server.requests == [SNOW_PATH]
        assert (tmp_path / "edgar" / "companyfacts" / "CIK0001640147.json").read_bytes() == SNOW.read_bytes()

        again = finkg("fetch", "--no-filings", "SNOW", "1640147", env=env)  # the same company twice: loaded once
        assert again.returncode == 0, again.stderr
        assert server.requests == [SNOW_PATH]  # the rerun reads the cache
        assert again.stdout.count("CIK0001640147.json") == 1
    finally:
        server.close()
    assert mismatches(graph, SNOW_CIK, independent_reading(SNOW)).empty
    runs = graph.read(
        "MATCH (r:IngestRun {kind: 'sec-companyfacts'}) WHERE r.source ENDS WITH 'CIK0001640147.json' "
        "RETURN r.status AS status",
    )
    assert runs == [{"status": "done"}]
