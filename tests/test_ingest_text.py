"""Text ingest (FOMC statements, filing text, tweets) on the real samples in data/, against the real Neo4j."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import minilm_dir
from test_cli import finkg

from finkg.config import ConfigError, load_settings
from finkg.pipelines.text import TextIngestOptions, ingest_text
from ingest.text.chunking import ApproxTokenCounter, chunk_sections, load_token_counter, split_sentences
from ingest.text.documents import TextFormatError, chunk_id, decode, parse_iso_utc
from ingest.text.filing_text import read_html_file, read_markdown_file
from ingest.text.fomc import read_fomc_file
from ingest.text.sources import read_source
from ingest.text.tweets import NEWS_OUTLET_ACCOUNTS, read_tweets, source_family

DATA = Path(__file__).resolve().parents[1] / "data"
FOMC = DATA / "fomc-statements"
APPLE_MD = DATA / "filings-text" / "aapl-10q-2024-06-29-excerpt.md"
NVDA_HTML = DATA / "filings-text" / "nvda-10k-excerpt.html"
TWEETS = DATA / "tweets"

FOMC_IDS = sorted(
    [f"fomc:statement:{p.name[:8]}" for p in (FOMC / "statements").iterdir()]
    + [f"fomc:implementation_note:{p.name[:8]}" for p in (FOMC / "implementation_notes").iterdir()]
)

DELETE_DOCUMENTS = (
    "UNWIND $ids AS id MATCH (d:Document {id: id}) OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk) DETACH DELETE c, d"
)


def _settings(**overrides):
    """Settings with the default [text] chunking and the approximate counter, whatever the file says."""
    return load_settings(**{"text_tokenizer": None, "text_chunk_tokens": 240, "text_chunk_overlap": 48, **overrides})


@pytest.fixture
def fresh(graph):
    """Remove the given documents (and their chunks) before the test and again after it.

    On the suite's own server (tests/conftest.py), so what is removed was loaded by this run (another test's
    load of the same shipped sample), never a user's graph."""
    ids: list[str] = []

    def use(doc_ids):
        ids.extend(doc_ids)
        graph.write(DELETE_DOCUMENTS, {"ids": list(doc_ids)})

    yield use
    if ids:
        graph.write(DELETE_DOCUMENTS, {"ids": ids})


@pytest.fixture
def tmp_runs(graph, tmp_path):
    """Delete the ingest runs of sources under ``tmp_path`` afterwards."""
    yield tmp_path
    graph.write("MATCH (r:IngestRun) WHERE r.source STARTS WITH $p DETACH DELETE r", {"p": str(tmp_path.resolve())})


# --------------------------------------------------------------------------- FOMC into the graph


def test_fomc_sample_loads_with_counts_availability_and_run(graph, fresh):
    fresh(FOMC_IDS)
    s = _settings()
    summary, warnings = ingest_text(graph, s, [FOMC])
    (row,) = summary
    assert warnings == []
    assert (row["files"], row["documents"], row["chunks"], row["sentences"]) == (20, 20, 46, 238)
    assert row["created"] == 20 + 46 and row["updated"] == 0
    got = graph.read(
        "UNWIND $ids AS id MATCH (d:Document {id: id})-[r:HAS_CHUNK]->(c:Chunk) "
        "RETURN count(DISTINCT d) AS docs, count(c) AS chunks, sum(c.n_tokens) AS tokens, "
        "sum(size(c.sentences)) AS sentences, collect(DISTINCT c.kind) AS kinds, "
        "collect(DISTINCT d.source_family) AS families, "
        "sum(CASE WHEN c.available_at = d.available_at AND c.document_id = d.id AND r.seq = c.seq "
        "THEN 1 ELSE 0 END) AS consistent",
        {"ids": FOMC_IDS},
    )
    assert got == [
        {
            "docs": 20,
            "chunks": 46,
            "tokens": row["tokens"],
            "sentences": got[0]["sentences"],
            "kinds": ["text"],
            "families": ["central_bank"],
            "consistent": 46,
        }
    ]
    assert got[0]["sentences"] >= 238  # overlapping sentences are stored in both chunks
    # availability: 14:15 New York time on the release date, in UTC (EST in December, EDT in September)
    docs = {
        r["id"]: r
        for r in graph.read(
            "UNWIND $ids AS id MATCH (d:Document {id: id}) RETURN d.id AS id, d.available_at AS at, "
            "d.published_at AS pub, d.available_at_approx AS approx, d.doc_type AS type, d.title AS title",
            {"ids": FOMC_IDS},
        )
    }
    assert docs["fomc:statement:20081216"]["at"] == "2008-12-16T19:15:00Z"
    assert docs["fomc:statement:20150917"]["at"] == "2015-09-17T18:15:00Z"
    assert docs["fomc:statement:20081216"]["approx"] is True
    assert docs["fomc:statement:20080916"]["title"] == "FOMC statement 2008-09-16"  # the file is named 20080916.xt
    assert docs["fomc:implementation_note:20151216"]["type"] == "fomc_implementation_note"
    first = graph.read(
        "MATCH (:Document {id: 'fomc:statement:20081216'})-[:HAS_CHUNK {seq: 0}]->(c) RETURN c.sentences[0] AS s"
    )
    assert first == [
        {
            "s": "The Federal Open Market Committee decided today to establish a target range for "
            "the federal funds rate of 0 to 1/4 percent."
        }
    ]
    run = graph.read(
        "MATCH (r:IngestRun {id: $id}) OPTIONAL MATCH (r)-[:LOADED]->(d:Document) "
        "RETURN r.status AS status, r.kind AS kind, r.counts AS counts, count(d) AS loaded",
        {"id": row["run"]},
    )[0]
    assert (run["status"], run["kind"], run["loaded"]) == ("done", "text-fomc", 20)
    counts = json.loads(run["counts"])
    assert (counts["documents"], counts["chunks"], counts["chunks_created"]) == (20, 46, 46)
    assert counts["tokenizer"] == "approx:words+punct" and counts["chunk_tokens"] == 240

    # re-ingesting changes nothing
    (again,), _ = ingest_text(graph, s, [FOMC])
    assert (again["created"], again["updated"], again["stale removed"], again["chunks"]) == (0, 0, 0, 46)
    assert again["run"] == row["run"]


def test_new_chunk_settings_replace_the_old_chunks(graph, fresh, tmp_runs):
    fresh(["fomc:statement:20081216"])
    one = tmp_runs / "statements"
    one.mkdir()
    shutil.copy(FOMC / "statements" / "20081216.txt", one)
    (first,), _ = ingest_text(graph, _settings(), [one])
    (second,), _ = ingest_text(graph, _settings(text_chunk_tokens=80, text_chunk_overlap=30), [one])
    assert first["chunks"] == 3 and second["chunks"] > 3
    assert second["stale removed"] == 3
    n = graph.read(
        "MATCH (:Document {id: 'fomc:statement:20081216'})-[:HAS_CHUNK]->(c) "
        "RETURN count(c) AS n, max(c.n_tokens) AS top"
    )
    assert n[0]["n"] == second["chunks"] and n[0]["top"] <= 80


# --------------------------------------------------------------------------- chunking


def _fomc_sections():
    return [read_fomc_file(p).sections for p in sorted((FOMC / "statements").iterdir())]


def _check_chunks(counter, budget, overlap):
    overlaps = split = 0
    for sections in _fomc_sections():
        chunks = chunk_sections(sections, counter, budget, overlap)
        sentences = [s for _, t in sections for s in split_sentences(t)]
        rebuilt: list[str] = []
        for prev, cur in zip([None, *chunks], chunks):
            assert cur.n_tokens <= budget and cur.n_tokens == counter.count(cur.text)
            assert cur.text == " ".join(cur.sentences)
            k = cur.overlap_sentences
            if prev is not None and k:
                assert list(cur.sentences[:k]) == list(prev.sentences[-k:])
                assert sum(counter.count(x) for x in cur.sentences[:k]) <= overlap
                overlaps += 1
            rebuilt.extend(cur.sentences[k:])
        # nothing lost or reordered: the non-overlapping parts give back every sentence (long ones in pieces)
        assert " ".join(rebuilt).split() == " ".join(sentences).split()
        split += len(rebuilt) - len(sentences)
    assert overlaps > 0 and split > 0  # both paths were exercised


def test_chunks_respect_budget_and_overlap_approx_counter():
    _check_chunks(ApproxTokenCounter(), 80, 30)


@pytest.mark.model
def test_chunks_respect_budget_and_overlap_minilm_tokenizer():
    counter = load_token_counter(minilm_dir())
    assert counter.count("The Committee decided today.") == 5
    _check_chunks(counter, 80, 30)


def test_chunk_settings_are_validated(graph):
    with pytest.raises(ValueError, match="chunk_overlap"):
        chunk_sections([("", "A sentence.")], ApproxTokenCounter(), 40, 20)
    with pytest.raises(ConfigError, match=r"\[text\] chunk_overlap"):
        ingest_text(graph, _settings(text_chunk_tokens=40, text_chunk_overlap=30), [FOMC])
    with pytest.raises(FileNotFoundError, match=r"tokenizer\.json"):
        load_token_counter(Path("/nonexistent/model"))


def test_ids_are_deterministic_and_per_document():
    a = read_source(FOMC).documents
    b = read_source(FOMC).documents
    assert [d.id for d in a] == [d.id for d in b] == FOMC_IDS
    counter = ApproxTokenCounter()
    ids_a = [chunk_id(d.id, c.text) for d in a for c in chunk_sections(d.sections, counter, 240, 48)]
    ids_b = [chunk_id(d.id, c.text) for d in b for c in chunk_sections(d.sections, counter, 240, 48)]
    assert ids_a == ids_b and len(set(ids_a)) == len(ids_a)
    assert chunk_id("fomc:statement:20081216", "Same words.") != chunk_id("fomc:statement:20090318", "Same words.")
    assert chunk_id("d", "x", 1) != chunk_id("d", "x")  # a repeated text within one document
    assert ids_a[0].startswith("text:") and len(ids_a[0]) == 5 + 32


# --------------------------------------------------------------------------- filings


def test_markdown_sections_tables_and_deadline_estimate():
    doc = read_markdown_file(APPLE_MD)
    titles = [t for t, _ in doc.sections]
    assert titles == [
        "cover",
        "PART I — FINANCIAL INFORMATION / Item 1. Financial Statements",
        "PART I — FINANCIAL INFORMATION / Item 2. Management’s Discussion and Analysis of Financial Condition "
        "and Results of Operations",
        "PART I — FINANCIAL INFORMATION / Item 3. Quantitative and Qualitative Disclosures About Market Risk",
        "PART I — FINANCIAL INFORMATION / Item 4. Controls and Procedures",
    ]
    text = dict(doc.sections)
    item1 = text[titles[1]].split("\n")
    assert "Products | $61,564 | $60,584 | $224,908 | $230,901" in item1
    assert "Other income/(expense), net | 142 | (265) | 250 | (594)" in item1
    assert not any("Q3 2024 Form 10-Q |" in line for line in item1)  # running page footer dropped
    assert "<div" not in " ".join(text.values())
    assert (doc.id, doc.source_family, doc.doc_type) == (
        "sec_filing:aapl-10q-2024-06-29-excerpt.md",
        "sec_filing",
        "10-Q",
    )
    assert (
        doc.props.items()
        >= {"ticker": "AAPL", "period_end": "2024-06-29", "filer_category": "Large accelerated filer"}.items()
    )
    # no acceptance time: the 40-day deadline of a large accelerated filer, 17:30 New York, flagged
    assert (doc.available_at, doc.available_at_approx, doc.availability_basis) == (
        "2024-08-08T21:30:00Z",
        True,
        "filing-deadline-estimate",
    )
    assert doc.published_at is None
    exact = read_markdown_file(APPLE_MD, accepted=parse_iso_utc("2024-08-02T18:04:57-04:00"))
    assert (exact.available_at, exact.available_at_approx, exact.published_at) == (
        "2024-08-02T22:04:57Z",
        False,
        "2024-08-02T22:04:57Z",
    )


def test_html_cleaning_drops_hidden_xbrl_scripts_and_styles(tmp_path):
    raw = NVDA_HTML.read_text(encoding="utf-8")
    assert "ix:header" in raw and "http://fasb.org/us-gaap/2022#" in raw
    injected = raw.replace(
        "<body>",
        "<body><script>var tracking = 'SCRIPTTEXT';</script><style>.x{color:red} STYLETEXT</style>"
        "<div style='display: none'>HIDDENTEXT</div>",
        1,
    )
    assert injected != raw
    copy = tmp_path / "nvda-10k-excerpt.html"
    copy.write_text(injected, encoding="utf-8")
    for doc in (read_html_file(NVDA_HTML), read_html_file(copy)):
        body = "\n".join(t for _, t in doc.sections)
        for gone in ("SCRIPTTEXT", "STYLETEXT", "HIDDENTEXT", "http://fasb.org", "0001045810", "FYfalse"):
            assert gone not in body
        assert [t for t, _ in doc.sections] == ["cover", "PART I / ITEM 1A. RISK FACTORS"]
        lines = dict(doc.sections)["cover"].split("\n")
        assert "Common Stock, $0.001 par value per share | NVDA | The Nasdaq Global Select Market" in lines
        assert "For the fiscal year ended January 29, 2023" in lines
        assert dict(doc.sections)["PART I / ITEM 1A. RISK FACTORS"].startswith("In evaluating NVIDIA, the following")
        assert (
            doc.props.items()
            >= {"form": "10-K", "period_end": "2023-01-29", "ticker": "NVDA", "company": "NVIDIA CORP"}.items()
        )
        assert doc.available_at == "2023-03-30T21:30:00Z"  # 60 days after the period, large accelerated filer


# --------------------------------------------------------------------------- tweets


def test_tweet_family_split_duplicates_and_times():
    files = sorted(p for p in TWEETS.rglob("*") if p.is_file())
    result = read_tweets(files)
    assert (len(result.files), len(result.documents), result.duplicates, result.bad_lines) == (4, 27, 2, [])
    families = {d.id: d.source_family for d in result.documents}
    news = sorted(d.props["author"] for d in result.documents if d.source_family == "news")
    assert news == ["ForTraders"] * 4 and sum(f == "social" for f in families.values()) == 23
    assert source_family("SeekingAlpha") == source_family("seekingalpha") == "news"
    assert source_family("stockwire24") == source_family("jpmorgan") == "social"  # aggregator, company
    assert len(NEWS_OUTLET_ACCOUNTS) == len({k.lower() for k in NEWS_OUTLET_ACCOUNTS})
    tweet = next(d for d in result.documents if d.id == "tweet:456755280626192386")
    assert (tweet.available_at, tweet.props["author"], tweet.props["news_outlet"]) == (
        "2014-04-17T11:25:19Z",
        "ForTraders",
        "4-traders (MarketScreener)",
    )
    ids_in = {
        t: {
            json.loads(line)["id_str"]
            for f in (TWEETS / t).iterdir()
            for line in f.read_text(encoding="utf-8").splitlines()
        }
        for t in ("GE", "MSFT")
    }
    both = ids_in["GE"] & ids_in["MSFT"]
    assert len(both) == 2  # filed under both tickers: one Document each, tickers merged
    assert all({"GE", "MSFT"} <= set(d.props["tickers"]) for d in result.documents if d.id[6:] in both)
    assert all(len(d.sections) == 1 and d.available_at == d.published_at for d in result.documents)


def test_tweets_in_graph_by_family(graph, fresh):
    ids = [d.id for d in read_tweets(sorted(p for p in TWEETS.rglob("*") if p.is_file())).documents]
    fresh(ids)
    (row,), warnings = ingest_text(graph, _settings(), [TWEETS], TextIngestOptions(kind="tweets"))
    assert (row["documents"], row["chunks"], row["duplicates"], row["created"]) == (27, 27, 2, 54)
    assert row["families"] == "news 4, social 23" and warnings == []
    got = graph.read(
        "UNWIND $ids AS id MATCH (d:Document {id: id})-[:HAS_CHUNK]->(c:Chunk) "
        "RETURN c.source_family AS family, count(*) AS n ORDER BY family",
        {"ids": ids},
    )
    assert got == [{"family": "news", "n": 4}, {"family": "social", "n": 23}]


# --------------------------------------------------------------------------- bad input


def test_bad_inputs_name_file_and_line(tmp_path):
    latin = tmp_path / "20081216.txt"
    latin.write_bytes(b"The Committee decided\ntoday to act.\nCaf\xe9 prices rose.\n")
    with pytest.raises(TextFormatError, match=rf"{latin}:3: not valid UTF-8 \(byte 0xe9 at column 4\)"):
        read_fomc_file(latin)
    empty = tmp_path / "20090318.txt"
    empty.write_text("  \n\n", encoding="utf-8")
    with pytest.raises(TextFormatError, match=rf"{empty}: empty file"):
        read_fomc_file(empty)
    with pytest.raises(TextFormatError, match="not a calendar date"):
        read_fomc_file(tmp_path.joinpath("20081399.txt"))
    odd = tmp_path / "notes.docx"
    odd.write_text("x", encoding="utf-8")
    with pytest.raises(TextFormatError, match="pass --kind"):
        read_source(odd)
    undated = tmp_path / "memo.md"
    undated.write_text("# Outlook\n\nRevenue grew.\n", encoding="utf-8")
    with pytest.raises(TextFormatError, match=rf"{undated}: no acceptance time given .* pass --accepted"):
        read_markdown_file(undated)
    with pytest.raises(ValueError, match="no time zone"):
        parse_iso_utc("2024-08-02T18:04:57")
    with pytest.raises(TextFormatError, match="declares an unknown encoding"):
        decode(tmp_path / "x.html", b'<?xml version="1.0" encoding="klingon-8"?><html/>', sniff_declared=True)


def test_malformed_tweet_lines_are_recorded_and_the_rest_kept(tmp_path):
    day = tmp_path / "MSFT" / "2014-04-17"
    day.parent.mkdir()
    lines = (TWEETS / "MSFT" / "2014-04-17").read_text(encoding="utf-8").splitlines()
    no_user = json.loads(lines[1])
    del no_user["user"]
    day.write_text(
        "\n".join([lines[0], '{"created_at": "Thu Apr 17', json.dumps(no_user), *lines[2:]]) + "\n", encoding="utf-8"
    )
    result = read_tweets([day])
    assert len(result.documents) == len(lines) - 1
    assert [str(b) for b in result.bad_lines] == [
        f"{day}:2: not JSON: Unterminated string starting at (column 16)",
        f"{day}:3: missing field 'user.screen_name'",
    ]


def test_failed_source_is_recorded_then_a_fixed_rerun_completes(graph, fresh, tmp_runs):
    fresh(["fomc:statement:20081216"])
    folder = tmp_runs / "statements"
    folder.mkdir()
    bad = folder / "20081216.txt"
    bad.write_bytes((FOMC / "statements" / "20081216.txt").read_bytes() + b"\n\xff\xfe\n")
    with pytest.raises(TextFormatError, match=rf"{bad}:\d+: not valid UTF-8"):
        ingest_text(graph, _settings(), [folder])
    failed = graph.read(
        "MATCH (r:IngestRun) WHERE r.source = $s RETURN r.status AS status, r.error AS error",
        {"s": str(folder.resolve())},
    )
    assert len(failed) == 1 and failed[0]["status"] == "failed" and str(bad) in failed[0]["error"]
    assert graph.read("MATCH (d:Document {id: 'fomc:statement:20081216'}) RETURN d.id") == []
    shutil.copy(FOMC / "statements" / "20081216.txt", bad)
    (row,), _ = ingest_text(graph, _settings(), [folder])
    status = graph.read("MATCH (r:IngestRun {id: $id}) RETURN r.status AS s", {"id": row["run"]})
    assert status == [{"s": "done"}] and row["documents"] == 1


def test_cli_ingests_and_reports_bad_input_in_one_line(graph, tmp_runs, fresh):
    tmp_path = tmp_runs
    out = finkg("ingest", "text", str(APPLE_MD), "--accepted", "2024-08-02T18:04:57-04:00")
    assert out.returncode == 0, out.stderr
    assert "Text ingest" in out.stdout and "aapl-10q-2024-06-29-excerpt.md" in out.stdout
    bad = tmp_path / "20081216.txt"
    bad.write_bytes(b"ok\n\xff\n")
    out = finkg("ingest", "text", str(bad))
    assert out.returncode == 2
    assert f"{bad}:2: not valid UTF-8" in out.stderr.replace("\n", "") and "Traceback" not in out.stderr
    out = finkg("ingest", "text", str(APPLE_MD), str(NVDA_HTML), "--accepted", "2024-08-02T18:04:57-04:00")
    assert out.returncode == 2 and "--accepted" in out.stderr
    # a bad tweet line is skipped, named on stderr, and counted; the good line is loaded
    day = tmp_path / "GE" / "2014-04-17"
    day.parent.mkdir()
    good = (TWEETS / "GE" / "2014-04-17").read_text(encoding="utf-8").splitlines()[0]
    fresh([f"tweet:{json.loads(good)['id_str']}"])
    day.write_text(good + "\n{not json\n", encoding="utf-8")
    out = finkg("ingest", "text", str(day.parent))
    assert out.returncode == 0, out.stderr
    assert f"skipped: {day}:2: not JSON" in out.stderr.replace("\n", "")
    run = graph.read(
        "MATCH (r:IngestRun {source: $s}) RETURN r.status AS status, r.counts AS counts",
        {"s": str(day.parent.resolve())},
    )
    counts = json.loads(run[0]["counts"])
    assert run[0]["status"] == "done" and (counts["documents"], counts["bad_lines"]) == (1, 1)
    assert counts["bad_line_examples"] == [
        f"{day}:2: not JSON: Expecting property name enclosed in double quotes (column 2)"
    ]


def test_docstring_examples_hold():
    import doctest

    from ingest.text import chunking, filing_text, fomc
    from ingest.text import documents as text

    for module in (chunking, filing_text, fomc, text):
        failed, tried = doctest.testmod(module)
        assert tried > 0 and failed == 0, module.__name__
