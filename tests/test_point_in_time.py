"""Point-in-time evidence (seed 000, section 3.3) on real tweets (tests/data/market_tweets, stocknet-dataset),
against the real Neo4j: future exclusion at the one-second boundary, anchor / URL / near-duplicate removal,
the 20% peer cap, stored selections and the audit that must catch a planted future document."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from test_cli import finkg

from finkg.config import load_settings
from finkg.pipelines.text import TextIngestOptions, ingest_text
from ingest.text.tweets import read_tweets
from kg import BatchWriter
from retrieval.text.point_in_time import (
    Anchor,
    Candidate,
    EvidenceInputError,
    EvidenceSelection,
    SelectedEvidence,
    audit_evidence,
    build_pool,
    delete_selections,
    filter_candidates,
    load_candidates,
    load_sectors,
    near_duplicate_score,
    prepare_evidence,
    store_selections,
)

TWEETS = Path(__file__).resolve().parent / "data" / "market_tweets"
FILES = sorted(p for p in TWEETS.rglob("*") if p.is_file())
SECTORS = load_sectors()
DECISION = "2015-07-21T20:00:00Z"  # 16:00 New York: the close of the MSFT earnings day


def _candidates() -> list[Candidate]:
    out = []
    for d in read_tweets(FILES).documents:
        text = d.sections[0][1]
        out.append(
            Candidate(
                id=f"chunk-of:{d.id}",
                document_id=d.id,
                text=text,
                source_family=d.source_family,
                available_at=d.available_at,
                tickers=tuple(d.props["tickers"]),
            )
        )
    return out


CANDIDATES = _candidates()


def _by_author(author: str, day: str = "2015-07-21") -> Candidate:
    docs = {d.id: d for d in read_tweets(FILES).documents}
    (c,) = [c for c in CANDIDATES if docs[c.document_id].props["author"] == author and c.available_at.startswith(day)]
    return c


def _anchor(c: Candidate, decision_time: str = DECISION, **kw) -> Anchor:
    return Anchor(
        id=c.id,
        ticker="MSFT",
        event_time=c.available_at,
        text=c.text,
        document_id=c.document_id,
        decision_time=decision_time,
        **kw,
    )


def _raw_times() -> dict[str, datetime]:
    """Tweet document id -> created_at, read from the raw JSON lines (independently of the reader)."""
    times = {}
    for f in FILES:
        for line in f.read_text(encoding="utf-8").splitlines():
            o = json.loads(line)
            times[f"tweet:{o['id_str']}"] = datetime.strptime(o["created_at"], "%a %b %d %H:%M:%S %z %Y")
    return times


# --------------------------------------------------------------------------- the rules, in memory


def test_future_documents_are_excluded_at_the_one_second_boundary_and_never_scored():
    anchor_c = _by_author("IBD_KShreve")
    selerity = _by_author("ymscapital")  # RT @Selerity ... Q4 revenues beat, 20:05:16 UTC
    assert selerity.available_at == "2015-07-21T20:05:16Z"
    seen_by_scorer: list[str] = []

    def scorer(anchor, cands):
        seen_by_scorer.extend(c.id for c in cands)
        return [1.0] * len(cands)

    at = prepare_evidence(_anchor(anchor_c, "2015-07-21T20:05:16Z"), CANDIDATES, SECTORS, scorer, pool_size=50)
    before = prepare_evidence(_anchor(anchor_c, "2015-07-21T20:05:15Z"), CANDIDATES, SECTORS, scorer, pool_size=50)
    assert selerity.id in {c.id for c in at.candidates}
    assert before.removed_ids[selerity.id] == "future"
    assert before.removed["future"] == at.removed["future"] + 1
    # the count agrees with the raw files' created_at, and the scorer never saw a future passage
    cut = datetime(2015, 7, 21, 20, 5, 15, tzinfo=UTC)
    raw = _raw_times()
    assert before.removed["future"] == sum(raw[c.document_id] > cut for c in CANDIDATES) == 15
    future_ids = {c.id for c in CANDIDATES if raw[c.document_id] > datetime(2015, 7, 21, 20, 5, 16, tzinfo=UTC)}
    assert future_ids and not future_ids & set(seen_by_scorer)


def test_anchor_exact_url_and_near_duplicates_are_removed():
    anchor_c = _by_author("IBD_KShreve")
    retweet = _by_author("rohit_bmw")  # "RT @IBD_KShreve: <the anchor's text>", same t.co link
    result = filter_candidates(_anchor(anchor_c), CANDIDATES, SECTORS)
    assert result.removed_ids[anchor_c.id] == "anchor"
    assert result.removed_ids[retweet.id] == "exact_url"
    # without the shared link the retweet is still caught, as a near-duplicate (ratio 100 after normalizing)
    no_link = Anchor(
        id="headline-only",
        ticker="MSFT",
        event_time="2015-07-21T16:12:20Z",
        decision_time=DECISION,
        text="$MSFT in cup w/ handle base ahead of earnings after the close; 49.64 buy point",
    )
    assert filter_candidates(no_link, CANDIDATES, SECTORS).removed_ids[retweet.id] == "near_duplicate"
    # two outlets' copies of one headline with different short links: ratio 95 >= 90
    qp_msft, qp_tech = _by_author("QP_MSFT", "2015-07-20"), _by_author("QP_Technology", "2015-07-20")
    assert near_duplicate_score(qp_msft.text, qp_tech.text) >= 90
    res = filter_candidates(_anchor(qp_msft), CANDIDATES, SECTORS)
    assert res.removed_ids[qp_tech.id] == "near_duplicate" and res.removed["near_duplicate"] == 1
    # different tweets about the same spam link with other tickers (ratio 84) are not near-duplicates
    assert (
        near_duplicate_score(
            "$MU Micron Technology Inc http://t.co/RUzsdeDOYZ  $AAPL $BAC",
            "$TWTR Twitter Inc http://t.co/RUzsdeDOYZ $AAPL $BAC",
        )
        < 90
    )
    # seven copies of one spam retweet take one place; unrelated sectors are no candidates
    assert result.removed["pool_duplicate"] == 9
    assert all(c.id not in result.removed_ids for c in result.eligible)
    assert set(result.removed) >= {"future", "anchor", "exact_url", "title_duplicate", "near_duplicate", "unrelated"}
    assert sum(result.removed.values()) + len(result.eligible) == len(CANDIDATES)


def test_title_duplicates_are_removed():
    anchor_c = _by_author("IBD_KShreve")
    other = _by_author("ymscapital")
    titled = Candidate(
        **{**other.__dict__, "title": "MICROSOFT:  Q4 revenues beat estimates!", "available_at": "2015-07-21T19:00:00Z"}
    )
    anchor = _anchor(anchor_c, title="Microsoft Q4 revenues beat estimates")
    assert filter_candidates(anchor, [titled], SECTORS).removed == {
        **{r: 0 for r in filter_candidates(anchor, [], SECTORS).removed},
        "title_duplicate": 1,
    }


def test_same_sector_peers_fill_at_most_20_percent_of_the_pool():
    anchor_c = _by_author("IBD_KShreve")
    filtered = filter_candidates(_anchor(anchor_c), CANDIDATES, SECTORS)
    peers = filtered.peers
    assert len(peers) == 11 and len(filtered.eligible) == 29  # GOOG/INTC/FB/T tweets filed under GE and JPM
    for c in filtered.eligible:
        tickers = set(c.tickers)
        assert ("MSFT" in tickers) != (c.id in peers)
        if c.id in peers:
            assert any(SECTORS.get(t) == "Technology" for t in tickers)
    # peers score highest: the cap, not the score, limits them to floor(0.2 * 20) = 4
    scores = [1.0 if c.id in peers else 0.5 for c in filtered.eligible]
    pool = build_pool(filtered, scores, pool_size=20, peer_share=0.2)
    assert (len(pool.candidates), len(pool.peers), pool.removed["peer_cap"], pool.removed["pool_size"]) == (20, 4, 7, 2)
    assert [c.id in pool.peers for c in pool.candidates[:4]] == [True] * 4  # the kept peers are the best ones
    # a short pool: 3 company passages leave no room for a peer (1 of 4 would be 25%)
    company = [c for c in filtered.eligible if c.id not in peers][:3]
    short = build_pool(
        filter_candidates(_anchor(anchor_c), company + [c for c in CANDIDATES if c.id in peers], SECTORS),
        None,
        pool_size=20,
    )
    assert len(short.candidates) == 3 and short.peers == set() and short.removed["peer_cap"] == 11
    eight = [c for c in filtered.eligible if c.id not in peers][:8]
    mid = build_pool(
        filter_candidates(_anchor(anchor_c), eight + [c for c in CANDIDATES if c.id in peers], SECTORS),
        None,
        pool_size=20,
    )
    assert len(mid.peers) == 2 and len(mid.candidates) == 10 and mid.peer_share == 0.2


def test_bad_inputs_name_the_item_and_field(tmp_path):
    c = CANDIDATES[0]
    naive = Candidate(**{**c.__dict__, "available_at": "2015-07-21T19:00:00"})
    with pytest.raises(EvidenceInputError, match=rf"candidate {c.id}: available_at: .* has no timezone"):
        filter_candidates(_anchor(_by_author("IBD_KShreve")), [naive], SECTORS)
    with pytest.raises(EvidenceInputError, match="given twice"):
        filter_candidates(_anchor(_by_author("IBD_KShreve")), [c, c], SECTORS)
    with pytest.raises(EvidenceInputError, match="missing field 'available_at'"):
        Candidate.from_row({"id": "x", "document_id": "d", "text": "t", "source_family": "news"})
    bad = tmp_path / "StockTable.tsv"
    bad.write_text("Sector\tSymbol\tCompany\nTechnology\t$MSFT\tMicrosoft\n\t$XOM\tExxon\n", encoding="utf-8")
    with pytest.raises(EvidenceInputError, match=rf"{bad}:3: expected a sector and a symbol"):
        load_sectors(bad)
    bad.write_text(
        "Sector\tSymbol\tCompany\nTechnology\t$MSFT\tMicrosoft\nServices\t$MSFT\tMicrosoft\n", encoding="utf-8"
    )
    with pytest.raises(EvidenceInputError, match=rf"{bad}:3: MSFT listed again with another sector"):
        load_sectors(bad)
    assert len(SECTORS) == 88 and SECTORS["MSFT"] == "Technology" and SECTORS["XOM"] == "Basic Matierials"


# --------------------------------------------------------------------------- in the graph


@pytest.fixture(scope="module")
def tweets_in_graph(graph):
    """The tweet sample ingested as Documents and Chunks (the real text ingest); removed before (another test of
    this run may have loaded it: the suite's own server, tests/conftest.py) and afterwards, with its ingest run."""
    ids = [d.id for d in read_tweets(FILES).documents]
    drop = "UNWIND $ids AS id MATCH (d:Document {id: id}) OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk) DETACH DELETE c, d"
    graph.write(drop, {"ids": ids})
    settings = load_settings(text_tokenizer=None, text_chunk_tokens=240, text_chunk_overlap=48)
    (row,), _ = ingest_text(graph, settings, [TWEETS], TextIngestOptions(kind="tweets"))
    assert row["documents"] == len(ids) == 66
    yield ids
    graph.write(drop, {"ids": ids})
    graph.write("MATCH (r:IngestRun) WHERE r.source STARTS WITH $p DETACH DELETE r", {"p": str(TWEETS.resolve())})


def _chunk_in_graph(graph, candidate: Candidate) -> str:
    """The id of the chunk the ingest wrote for ``candidate``'s tweet."""
    (row,) = graph.read(
        "MATCH (:Document {id: $d})-[:HAS_CHUNK]->(c:Chunk) RETURN c.id AS id", {"d": candidate.document_id}
    )
    return row["id"]


@pytest.fixture
def run(graph):
    name = f"test-{uuid.uuid4().hex[:8]}"
    yield name
    delete_selections(graph, name)


def test_candidates_from_the_graph_stop_at_the_decision_time(graph, tweets_in_graph):
    anchor = _anchor(_by_author("IBD_KShreve"), "2015-07-21T20:05:16Z")
    loaded = load_candidates(graph, anchor, SECTORS)
    assert loaded and max(c.available_at for c in loaded) == "2015-07-21T20:05:16Z"
    assert {c.document_id for c in loaded} <= {c.document_id for c in CANDIDATES}
    earlier = load_candidates(graph, _anchor(_by_author("IBD_KShreve"), "2015-07-21T20:05:15Z"), SECTORS)
    assert len(earlier) == len(loaded) - 1


def test_stored_selections_audit_at_zero_and_a_planted_future_document_is_caught(graph, tweets_in_graph, run):
    writer = BatchWriter(graph)
    anchor = _anchor(_by_author("IBD_KShreve"))
    pool = prepare_evidence(
        anchor,
        load_candidates(graph, anchor, SECTORS),
        SECTORS,
        scorer=lambda a, cs: [near_duplicate_score(a.text, c.text) / 100 for c in cs],
    )
    top = [SelectedEvidence(c.id, i, c.score, c.score) for i, c in enumerate(pool.candidates[:5], start=1)]
    first = store_selections(writer, [EvidenceSelection(run, pool, tuple(top))])
    assert (first["selections"], first["links"], first["missing_chunks"]) == (1, 5, 0)
    again = store_selections(writer, [EvidenceSelection(run, pool, tuple(top))])
    assert again["created"] == 0 and again["stale_links_removed"] == 0  # a rerun creates nothing
    node = graph.read("MATCH (s:EvidenceSelection {id: $id}) RETURN s {.*} AS s", {"id": f"{run}|{anchor.id}"})[0]["s"]
    assert node["decision_time"] == DECISION and node["removed_future"] == pool.removed["future"] == 0
    audit = audit_evidence(graph, run)
    assert (audit.selections, audit.selected, audit.future, audit.near_duplicate) == (1, 5, 0, 0)
    out = finkg("audit", "evidence", "--run", run)
    assert out.returncode == 0, out.stderr
    assert "future documents" in out.stdout and "0.00%" in out.stdout

    # planted: a passage published after the decision time, and the anchor's own retweet
    late, retweet = _chunk_in_graph(graph, _by_author("ymscapital")), _chunk_in_graph(graph, _by_author("rohit_bmw"))
    planted = (*top[:3], SelectedEvidence(late, 4, 0.9), SelectedEvidence(retweet, 5, 0.8))
    stats = store_selections(writer, [EvidenceSelection(run, pool, planted)])
    assert stats["stale_links_removed"] == 2
    audit = audit_evidence(graph, run)
    assert (audit.selected, audit.future, audit.near_duplicate) == (5, 1, 1)
    assert f"{audit.future_rate:.2%}" == "20.00%"
    assert {e["chunk_id"]: e["problem"] for e in audit.examples} == {late: "future", retweet: "near_duplicate"}
    out = finkg("audit", "evidence", "--run", run)
    assert out.returncode == 1
    assert "20.00%" in out.stdout and "not available at their decision time" in out.stderr
