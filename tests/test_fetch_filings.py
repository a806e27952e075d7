"""`finkg fetch`'s filing index, watermark and filing text against a real local HTTP server serving SEC responses
saved by edgartools' own tests (tests/data/edgar, provenance in data/NOTICE.md) at the SEC's URL paths; every request
edgartools makes is counted at the server. Expected values come from a plain `json` reading of the same files."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from test_cli import finkg
from test_fetch import EdgarServer, _env

DATA = Path(__file__).resolve().parent / "data" / "edgar"
AAPL_CIK = 320193
AAPL_INDEX = DATA / "submissions" / "CIK0000320193.json"  # Apple's submissions as SEC served them on 2026-03-05
AAPL_INDEX_PATH = "/submissions/CIK0000320193.json"
AAPL_10Q = "0000320193-25-000057"  # the 10-Q for the quarter ended 2025-03-29, filed 2025-05-02
AAPL_DOC_PATH = "/Archives/edgar/data/320193/000032019325000057/aapl-20250329.htm"
AAPL_DOC = DATA / AAPL_DOC_PATH.lstrip("/")
ALZN_CIK = 1677077
ALZN_INDEX_PATH = "/submissions/CIK0001677077.json"
ALZN_MARCH = DATA / "submissions" / "CIK0001677077.json"  # Alzamend Neuro's submissions, served 2026-03-10
ALZN_JUNE = DATA / "submissions" / "CIK0001677077.2026-06-20.json"  # the same, served 2026-06-20
CARBO_CIK = 1009672
CARBO_INDEX_PATH = "/submissions/CIK0001009672.json"
CARBO_PAGE_PATH = "/submissions/CIK0001009672-submissions-001.json"
CARBO_INDEX = DATA / "submissions" / "CIK0001009672.json"  # CARBO Ceramics' submissions, served 2026-02-08
CARBO_PAGE = DATA / "submissions" / "CIK0001009672-submissions-001.json"  # the older page they list
NEW_YORK = ZoneInfo("America/New_York")


def listed(path: Path, forms: tuple[str, ...] = ("10-K", "10-Q")) -> dict[str, dict]:
    """The filings of ``forms`` in a submissions file, read with json alone: ``{accession: fields}``. An older page
    of an index (``CIK##########-submissions-###.json``) has the same columns at its top level."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    recent = doc["filings"]["recent"] if "filings" in doc else doc
    return {
        adsh: {"form": form, "filed": filed, "period": period or None, "document": doc, "accepted": accepted}
        for adsh, form, filed, period, doc, accepted in zip(
            recent["accessionNumber"],
            recent["form"],
            recent["filingDate"],
            recent["reportDate"],
            recent["primaryDocument"],
            recent["acceptanceDateTime"],
            strict=True,
        )
        if form in forms
    }


def as_utc(wall: str, zone: str) -> str:
    """SEC's ``acceptanceDateTime`` (labelled Z) read as a wall time in ``zone``, as ISO UTC."""
    naive = datetime.fromisoformat(wall.removesuffix("Z"))
    return naive.replace(tzinfo=ZoneInfo(zone)).astimezone(ZoneInfo("UTC")).strftime("%Y-%m-%dT%H:%M:%SZ")


def stored(graph, cik: int) -> dict[str, dict]:
    rows = graph.read(
        "MATCH (:Company {cik: $cik})-[:SUBMITTED]->(s:Submission) "
        "RETURN s.adsh AS adsh, s.form AS form, s.filed AS filed, s.period AS period, "
        "s.primary_document AS document, s.accepted AS accepted",
        {"cik": cik},
    )
    return {r.pop("adsh"): r for r in rows}


def watermarks(graph, cik: int) -> dict[str, str]:
    rows = graph.read(
        "MATCH (:Company {cik: $cik})-[:FETCHED_UP_TO]->(w:EdgarWatermark) RETURN w.form AS form, w.adsh AS adsh",
        {"cik": cik},
    )
    return {r["form"]: r["adsh"] for r in rows}


def forget(graph, cik: int) -> None:
    """Remove what earlier tests fetched of company ``cik`` (the suite's graph lives for the session)."""
    graph.write(
        "MATCH (:Company {cik: $cik})-[:SUBMITTED]->(s:Submission) "
        "OPTIONAL MATCH (s)-[:HAS_DOCUMENT]->(d:Document) OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk) "
        "OPTIONAL MATCH (r:IngestRun)-[:LOADED]->(d) DETACH DELETE s, d, c, r",
        {"cik": cik},
    )
    graph.write("MATCH (:Company {cik: $cik})-[:FETCHED_UP_TO]->(w) DETACH DELETE w", {"cik": cik})


def expected(rows: dict[str, dict], zone: str, since: str = "", until: str = "9999") -> dict[str, dict]:
    """What the graph must hold of ``rows`` (:func:`listed`) in the window: acceptance times read in ``zone``, as UTC;
    an empty primary document (a filing of the 1990s may name none) is none."""
    return {
        adsh: {**f, "document": f["document"] or None, "accepted": as_utc(f["accepted"], zone)}
        for adsh, f in rows.items()
        if since <= f["filed"] <= until
    }


def row_of(stdout: str, company: str) -> list[str]:
    """The cells of ``company``'s row in the 'finkg fetch: filings' table."""
    table = stdout.split("finkg fetch: filings", 1)[1]
    line = next(x for x in table.splitlines() if x.strip("│ ").startswith(company))
    return [c.strip() for c in line.strip("│").split("│")]


def fetch_once(index: Path, cache: Path):
    """``finkg fetch 1677077 --no-facts --no-text`` against a server that serves ``index`` as Alzamend's submissions;
    it must succeed with that one request."""
    server = EdgarServer({ALZN_INDEX_PATH: index})
    try:
        res = finkg("fetch", "1677077", "--no-facts", "--no-text", env=_env(server, cache))
        assert res.returncode == 0, res.stderr
        assert server.requests == [ALZN_INDEX_PATH]
    finally:
        server.close()
    return res


@pytest.fixture
def apple():
    server = EdgarServer({AAPL_INDEX_PATH: AAPL_INDEX, AAPL_DOC_PATH: AAPL_DOC})
    yield server
    server.close()


def test_the_filing_index_equals_the_submissions_file_and_a_second_fetch_adds_only_new_filings(graph, apple, tmp_path):
    forget(graph, AAPL_CIK)
    env = _env(apple, tmp_path / "edgar")
    everything = listed(AAPL_INDEX)
    assert len(everything) == 44  # 10-K and 10-Q filings of Apple in the file

    # since the first day of the index's recent part (its older page, 1994 to 2015-03-11, is not served here)
    first = finkg("fetch", "AAPL", "--no-facts", "--no-text", "--since", "2015-03-12", "--until", "2025-04-30", env=env)
    assert first.returncode == 0, first.stderr
    assert apple.requests == [AAPL_INDEX_PATH]  # the index once; the ticker was resolved without a request
    assert (tmp_path / "edgar" / "submissions" / "CIK0000320193.json").read_bytes() == AAPL_INDEX.read_bytes()
    # acceptance times: SEC's wall times labelled Z are New York time in this response (Apple files at 06:00)
    want = expected(everything, "America/New_York", until="2025-04-30")
    assert len(want) == 40 and stored(graph, AAPL_CIK) == want
    assert want["0000320193-25-000008"]["accepted"] == "2025-01-31T11:01:27Z"  # 06:01:27 EST
    assert watermarks(graph, AAPL_CIK) == {"10-K": "0000320193-24-000123", "10-Q": "0000320193-25-000008"}
    assert row_of(first.stdout, "AAPL")[4:10] == ["44", "40", "0", "4", "0", "0"]  # listed new unchanged skipped..

    # the watermark: only the 10-Q filed after it (up to --until) is new, and its text is read
    second = finkg("fetch", "AAPL", "--no-facts", "--until", "2025-06-30", env=env)
    assert second.returncode == 0, second.stderr
    assert apple.requests == [AAPL_INDEX_PATH, AAPL_DOC_PATH]  # the index from the cache, the new 10-Q's document
    assert stored(graph, AAPL_CIK) == expected(everything, "America/New_York", until="2025-06-30")
    assert row_of(second.stdout, "AAPL")[4:9] == ["44", "1", "40", "3", "1"]
    assert watermarks(graph, AAPL_CIK)["10-Q"] == AAPL_10Q
    docs = graph.read(
        "MATCH (c:Company {cik: $cik})-[:SUBMITTED]->(s:Submission)-[:HAS_DOCUMENT]->(d:Document)"
        "-[:HAS_CHUNK]->(k:Chunk) "
        "RETURN s.adsh AS adsh, d.id AS doc, d.available_at AS doc_at, d.form AS form, d.period_end AS period, "
        "collect(DISTINCT k.available_at) AS chunk_at, count(k) AS chunks, "
        "sum(size([t IN [k.text] WHERE t CONTAINS 'iPhone'])) AS iphone",
        {"cik": AAPL_CIK},
    )
    assert len(docs) == 1, docs
    [d] = docs
    assert d["adsh"] == AAPL_10Q and d["doc"] == f"sec_filing:{AAPL_10Q}_aapl-20250329.htm"
    assert d["doc_at"] == "2025-05-02T10:00:46Z" and d["chunk_at"] == ["2025-05-02T10:00:46Z"]  # 06:00:46 EDT
    assert (d["form"], d["period"]) == ("10-Q", "2025-03-29")
    assert d["chunks"] > 20 and d["iphone"] > 0  # the 10-Q's text, MD&A included
    chunks = d["chunks"]

    # the same again: no request, nothing new, no text read twice
    third = finkg("fetch", "AAPL", "--no-facts", "--until", "2025-06-30", env=env)
    assert third.returncode == 0, third.stderr
    assert apple.requests == [AAPL_INDEX_PATH, AAPL_DOC_PATH]
    assert row_of(third.stdout, "AAPL")[4:9] == ["44", "0", "41", "3", "0"]
    n = graph.read("MATCH (d:Document {id: $id})-[:HAS_CHUNK]->(k) RETURN count(k) AS n", {"id": d["doc"]})
    assert n == [{"n": chunks}]

    # offline: the rest of the index from the cache; no request
    offline = finkg("fetch", "AAPL", "--no-facts", "--no-text", "--offline", env=_env(apple, tmp_path / "edgar", None))
    assert offline.returncode == 0, offline.stderr
    assert apple.requests == [AAPL_INDEX_PATH, AAPL_DOC_PATH]
    assert stored(graph, AAPL_CIK) == expected(everything, "America/New_York")
    assert row_of(offline.stdout, "AAPL")[4:8] == ["44", "3", "41", "0"]


def test_since_and_forms_filter_the_index(graph, apple, tmp_path):
    forget(graph, AAPL_CIK)
    env = _env(apple, tmp_path / "edgar")
    tenk = finkg("fetch", "AAPL", "--no-facts", "--no-text", "--forms", "10-K", "--since", "2020-01-01", env=env)
    assert tenk.returncode == 0, tenk.stderr
    want = expected(listed(AAPL_INDEX, ("10-K",)), "America/New_York", since="2020-01-01")
    assert sorted(f["filed"] for f in want.values()) == [
        f"{y}-{md}"
        for y, md in [
            (2020, "10-30"),
            (2021, "10-29"),
            (2022, "10-28"),
            (2023, "11-03"),
            (2024, "11-01"),
            (2025, "10-31"),
        ]
    ]
    assert stored(graph, AAPL_CIK) == want

    eightk = finkg(
        "fetch", "AAPL", "--no-facts", "--forms", "8-K", "--since", "2025-10-01", "--until", "2025-12-31", env=env
    )
    assert eightk.returncode == 0, eightk.stderr
    want |= expected(listed(AAPL_INDEX, ("8-K",)), "America/New_York", since="2025-10-01", until="2025-12-31")
    assert stored(graph, AAPL_CIK) == want and len(want) == 6 + 2
    assert watermarks(graph, AAPL_CIK) == {"10-K": "0000320193-25-000079", "8-K": "0001140361-25-044561"}
    assert apple.requests == [AAPL_INDEX_PATH]  # 8-K text is never read; the index came from the cache

    bad = finkg("fetch", "AAPL", "--since", "2025-02-30", env=env)
    assert bad.returncode == 2 and "--since '2025-02-30'" in bad.stderr and "Traceback" not in bad.stderr
    empty = finkg("fetch", "AAPL", "--no-facts", "--forms", "10-K,", env=env)
    assert empty.returncode == 2 and "--forms" in empty.stderr and len(empty.stderr.strip().splitlines()) == 1


def test_a_later_index_adds_only_the_new_filing(graph, tmp_path):
    """Two real responses of Alzamend Neuro's submissions, 2026-03-10 and 2026-06-20: the second adds one 10-Q.
    SEC changed the zone behind its 'Z' in between (New York, then UTC): both read to the same UTC times."""
    forget(graph, ALZN_CIK)
    march, june = listed(ALZN_MARCH), listed(ALZN_JUNE)
    assert set(june) - set(march) == {"0001214659-26-003166"}
    fetch_once(ALZN_MARCH, tmp_path / "march")
    assert stored(graph, ALZN_CIK) == expected(march, "America/New_York")
    second = fetch_once(ALZN_JUNE, tmp_path / "june")  # another cache: the watermark in the graph decides
    assert row_of(second.stdout, "1677077")[4:8] == [str(len(june)), "1", str(len(march)), "0"]
    assert stored(graph, ALZN_CIK) == expected(june, "UTC")  # the earlier filings' times unchanged, read as UTC now
    assert watermarks(graph, ALZN_CIK)["10-Q"] == "0001214659-26-003166"


@pytest.mark.reliability("crash")
def test_a_fetch_killed_before_the_text_then_rerun_equals_a_clean_fetch(graph, apple, tmp_path):
    forget(graph, AAPL_CIK)
    env = _env(apple, tmp_path / "edgar")
    args = ("fetch", "AAPL", "--no-facts", "--since", "2025-04-01", "--until", "2025-06-30")
    killed = finkg(*args, env={**env, "FINKG_TEST_KILL_AT": "edgar-text"})  # SIGKILL after the index, before text
    assert killed.returncode == -9, killed.stderr
    assert list(stored(graph, AAPL_CIK)) == [AAPL_10Q] and watermarks(graph, AAPL_CIK) == {}

    again = finkg(*args, env=env)
    assert again.returncode == 0, again.stderr
    assert apple.requests == [AAPL_INDEX_PATH, AAPL_DOC_PATH]
    assert row_of(again.stdout, "AAPL")[4:9] == ["44", "0", "1", "43", "1"]  # nothing new: the text is read now
    assert stored(graph, AAPL_CIK) == expected(listed(AAPL_INDEX), "America/New_York", "2025-04-01", "2025-06-30")
    assert watermarks(graph, AAPL_CIK) == {"10-Q": AAPL_10Q}
    linked = graph.read(
        "MATCH (:Submission {adsh: $adsh})-[:HAS_DOCUMENT]->(d:Document)-[:HAS_CHUNK]->(k) "
        "RETURN count(DISTINCT d) AS docs, count(k) AS chunks, min(k.available_at) AS at",
        {"adsh": AAPL_10Q},
    )
    assert linked[0]["docs"] == 1 and linked[0]["chunks"] > 20 and linked[0]["at"] == "2025-05-02T10:00:46Z"


def test_an_older_page_of_the_index_is_fetched_when_the_window_reaches_it(graph, tmp_path):
    """CARBO Ceramics' submissions (1,000 recent filings from 2003-12-09) list one older page (205 filings, 1996-06-03
    to 2003-12-08), both real responses SEC served on 2026-02-08. A window after the page's last filing does not ask
    for it; the whole index (no --since, no watermark) does, offline refused in one line while the page is not in the
    cache, then fetched where edgartools asks for it and kept beside the index: its 10-K and 10-Q filings are indexed
    as a json reading of the page has them; a later fetch (the watermark in the recent part) asks for nothing."""
    forget(graph, CARBO_CIK)
    recent, older = listed(CARBO_INDEX), listed(CARBO_PAGE)
    assert (len(recent), len(older)) == (65, 28) and not set(recent) & set(older)
    assert max(f["filed"] for f in older.values()) < "2004-01-01" <= min(f["filed"] for f in recent.values())
    cache = tmp_path / "edgar"
    server = EdgarServer({CARBO_INDEX_PATH: CARBO_INDEX, CARBO_PAGE_PATH: CARBO_PAGE})
    try:
        env = _env(server, cache)
        since = finkg("fetch", "1009672", "--no-facts", "--no-text", "--since", "2004-01-01", env=env)
        assert since.returncode == 0, since.stderr
        assert server.requests == [CARBO_INDEX_PATH]  # the window does not reach the older page
        assert stored(graph, CARBO_CIK) == expected(recent, "America/New_York")
        assert row_of(since.stdout, "1009672")[4:8] == ["65", "65", "0", "0"]
        assert row_of(since.stdout, "1009672")[-2] == "0 of 1"  # older pages read of those listed

        forget(graph, CARBO_CIK)  # no watermark: the whole index
        offline = finkg("fetch", "1009672", "--no-facts", "--no-text", "--offline", env=_env(server, cache, None))
        assert offline.returncode == 2 and "Traceback" not in offline.stderr
        [line] = [x for x in offline.stderr.splitlines() if x.startswith("error")]
        assert "CIK0001009672-submissions-001.json" in line and "without --offline" in line, line
        assert stored(graph, CARBO_CIK) == {} and server.requests == [CARBO_INDEX_PATH]  # nothing written

        whole = finkg("fetch", "1009672", "--no-facts", "--no-text", env=env)
        assert whole.returncode == 0, whole.stderr
        assert server.requests == [CARBO_INDEX_PATH, CARBO_PAGE_PATH]  # the index from the cache, the page now
        page = cache / "submissions" / "CIK0001009672-submissions-001.json"  # beside the index, as edgartools keeps it
        assert page.read_bytes() == CARBO_PAGE.read_bytes()
        want = expected({**recent, **older}, "America/New_York")
        assert len(want) == 93 and stored(graph, CARBO_CIK) == want
        assert want["0000950134-03-003746"] == {  # the 10-K for 2002, a .txt filing of the older page
            "form": "10-K",
            "filed": "2003-03-12",
            "period": "2002-12-31",
            "document": "d03686e10vk.txt",
            "accepted": "2003-03-12T19:23:10Z",  # 14:23:10 EST
        }
        row = row_of(whole.stdout, "1009672")
        assert (row[2], row[4:8], row[-2]) == ("EDGAR", ["93", "93", "0", "0"], "1 of 1")

        again = finkg("fetch", "1009672", "--no-facts", "--no-text", env=env)
        assert again.returncode == 0, again.stderr
        assert server.requests == [CARBO_INDEX_PATH, CARBO_PAGE_PATH]
        row = row_of(again.stdout, "1009672")
        assert (row[2], row[4:8], row[-2]) == ("cache", ["93", "0", "93", "0"], "1 of 1")
    finally:
        server.close()
