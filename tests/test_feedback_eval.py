"""The prequential market-feedback evaluation (seed 000, sections 3-4) end to end on a tiny real slice: the four
MSFT news-outlet tweets of July 2015 (tests/data/feedback_tweets) as anchors, every tweet as evidence, real
MSFT and S&P 500 prices (tests/data/market), the real Neo4j, MiniLM and SmolLM2 through llama.cpp."""

from __future__ import annotations

import json
import uuid
from datetime import date
from pathlib import Path

import pandas as pd
import pytest
from conftest import minilm_dir
from test_cli import finkg
from test_llm import smol_gguf

from finkg.config import load_settings
from finkg.eval.feedback import (
    CONDITIONS,
    FeedbackEvalError,
    FeedbackOptions,
    condition_runs,
    predictions_path,
    read_records,
    reset_run,
    run_evaluation,
    summarize,
)
from generation.feedback.reader import FrozenReader
from generation.llm import LlamaCppBackend, LLMCache, LLMClient
from ingest.text.tweets import read_tweets
from retrieval.embeddings import make_embedder
from retrieval.text.point_in_time import to_utc

DATA = Path(__file__).resolve().parent / "data"
TWEETS = DATA / "feedback_tweets"
PRICES, MARKET = DATA / "market" / "prices", DATA / "market" / "index" / "sp500.csv"


def _options(out: Path, run: str, **kw) -> FeedbackOptions:
    base = dict(
        tweets=TWEETS,
        prices=PRICES,
        market=MARKET,
        tickers=("MSFT",),
        start=date(2015, 7, 1),
        end=date(2015, 7, 31),
        out=out,
        run=run,
        conditions=CONDITIONS,
        shuffles=1,
    )
    return FeedbackOptions(**{**base, **kw})


@pytest.fixture(scope="module")
def evaluated(graph, tmp_path_factory):
    """One evaluation of the slice with all four conditions (one seed per shuffled control); its memory,
    selections and the tweets it added to the graph are removed afterwards."""
    ids = [d.id for d in read_tweets(sorted(p for p in TWEETS.rglob("*") if p.is_file())).documents]
    present = {
        r["id"] for r in graph.read("UNWIND $ids AS id MATCH (d:Document {id: id}) RETURN d.id AS id", {"ids": ids})
    }
    settings = load_settings(text_tokenizer=None, text_chunk_tokens=240, text_chunk_overlap=48)
    client = LLMClient(
        LlamaCppBackend(smol_gguf(), n_ctx=2048, n_threads=2), cache=LLMCache(tmp_path_factory.mktemp("feedback-cache"))
    )
    reader = FrozenReader(client, max_tokens=128)
    embedder = make_embedder(minilm_dir())
    options = _options(tmp_path_factory.mktemp("feedback-out"), f"t{uuid.uuid4().hex[:8]}")
    summary = run_evaluation(graph, settings, options, reader, embedder)
    result = summarize(graph, options, settings)
    yield {
        "settings": settings,
        "options": options,
        "summary": summary,
        "result": result,
        "reader": reader,
        "embedder": embedder,
        "client": client,
    }
    reset_run(graph, options, condition_runs(options.run, options.conditions, options.shuffles), {})
    added = [i for i in ids if i not in present]
    graph.write(
        "UNWIND $ids AS id MATCH (d:Document {id: id}) OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk) DETACH DELETE c, d",
        {"ids": added},
    )


def _records(ev) -> dict[str, list[dict]]:
    o = ev["options"]
    return {
        cr.name: read_records(predictions_path(o.out, cr)) for cr in condition_runs(o.run, o.conditions, o.shuffles)
    }


def test_every_condition_has_a_record_per_anchor_and_the_metrics_table_has_every_condition(evaluated):
    s, result = evaluated["summary"], evaluated["result"]
    assert s.anchors == 4 and s.done == 4 and s.anchor_counts["found"] == 4 and s.reader_calls >= 1
    assert s.records == 4 * 4 and s.cache_hits + s.reader_calls == 16
    records = _records(evaluated)
    assert set(records) == {"no-memory", "memory", "shuffled-label-1", "shuffled-event-type-1"}
    for rows in records.values():
        assert [r["prediction_day"] for r in rows] == ["2015-07-13", "2015-07-16", "2015-07-23", "2015-07-23"]
        assert all(r["status"] in ("ok", "failed") and (r["status"] == "ok") == bool(r["predictions"]) for r in rows)
    assert [row["condition"] for row in result["conditions"]] == list(CONDITIONS)
    for row in result["conditions"]:
        assert row["anchors"] == 4 and 0.0 <= row["macro_f1"] <= 1.0 and "rank_ic_3d" in row
    strategies = [p["strategy"] for p in result["portfolio"]]
    assert strategies[:2] == ["market proxy (sp500)", "equal-weight universe"]
    assert set(strategies[2:]) == set(records)
    out = evaluated["options"].out
    for name in (
        "metrics.json",
        "event_metrics.csv",
        "event_metrics_by_run.csv",
        "portfolio.csv",
        "audit.csv",
        "manifest.json",
    ):
        assert (out / name).is_file(), name
    stored = json.loads((out / "metrics.json").read_text())
    assert stored["audit"]["future_rate"] == 0.0 and len(stored["by_run"]) == 4
    # the equity curves: a column of daily net returns per strategy, the same days the portfolio table counts
    daily = pd.read_csv(out / "equity_daily_returns.csv", index_col="session")
    assert list(daily.columns) == strategies
    for p in result["portfolio"]:
        assert daily[p["strategy"]].notna().sum() == p["days"]
    png = (out / "equity.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_no_chunk_dated_after_the_decision_reaches_the_reader(graph, evaluated):
    audit = evaluated["result"]["audit"]
    assert audit["selected"] > 0 and audit["future"] == 0 and audit["future_rate"] == 0.0
    records = _records(evaluated)
    shown_ids = sorted({c["id"] for rows in records.values() for r in rows for c in r["context"]})
    times = {
        r["id"]: r["t"]
        for r in graph.read(
            "UNWIND $ids AS id MATCH (c:Chunk {id: id}) RETURN c.id AS id, c.available_at AS t", {"ids": shown_ids}
        )
    }
    assert len(times) == len(shown_ids)
    first = records["memory"][0]
    msft = graph.read(
        "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk) WHERE 'MSFT' IN d.tickers AND c.available_at > $t "
        "RETURN c.id AS id",
        {"t": first["decision_time"]},
    )
    later = [r["id"] for r in msft]
    assert len(later) > 30  # most of the slice lies after the first anchor's decision: the check is not empty
    for rows in records.values():
        for r in rows:
            shown = [c["id"] for c in r["context"]]
            assert all(to_utc(times[i]) <= to_utc(r["decision_time"]) for i in shown), r["anchor_id"]
            assert r["chunk_id"] not in shown
    assert not {c["id"] for c in first["context"]} & set(later)


def test_memory_is_updated_only_from_matured_labels(graph, evaluated):
    run = evaluated["options"].run + ".memory"
    rows = graph.read(
        "MATCH (f:SourceMemoryFeedback {run: $run}) RETURN f.anchor_id AS anchor, f.horizon AS h, "
        "f.matured_at AS matured, f.applied_at AS applied",
        {"run": run},
    )
    records = _records(evaluated)["memory"]
    decisions = [r["decision_time"] for r in records]
    assert rows, "the memory run recorded no feedback"
    for row in rows:
        if row["applied"] is not None:
            assert row["matured"] <= row["applied"]
            assert row["applied"] in decisions  # applied at a later anchor's decision, never earlier
        else:
            assert row["matured"] > decisions[-1]  # still pending: it matures after the last decision
    first = records[0]["anchor_id"]
    by = {(r["anchor"], r["h"]): r for r in rows}
    if (first, "5D") in by:  # the 5D label of 2015-07-10 matures at the 2015-07-17 close
        assert by[(first, "5D")]["matured"] == "2015-07-17T20:00:00Z"
        assert by[(first, "5D")]["applied"] != records[1]["decision_time"] == "2015-07-15T20:00:00Z"
    assert all(r["applied"] is None for r in rows if r["anchor"] == records[-1]["anchor_id"])


def test_a_rerun_skips_done_anchors_and_makes_no_llm_call(graph, evaluated):
    ev = evaluated
    calls = ev["client"].backend.calls
    lines = {k: len(v) for k, v in _records(ev).items()}
    again = run_evaluation(graph, ev["settings"], ev["options"], ev["reader"], ev["embedder"])
    assert (again.skipped, again.done, again.reader_calls, again.cache_hits) == (4, 0, 0, 0)
    assert ev["client"].backend.calls == calls
    assert {k: len(v) for k, v in _records(ev).items()} == lines


def test_an_interrupted_run_is_compared_on_the_anchors_every_condition_has_done(graph, evaluated, tmp_path):
    """A run stopped between the condition runs of one anchor: the metrics compare the conditions on the
    anchors all of them have done, and count the records left out."""
    import dataclasses
    import shutil

    ev = evaluated
    options = dataclasses.replace(ev["options"], out=tmp_path / "cut")
    shutil.copytree(ev["options"].out, options.out)
    memory = predictions_path(options.out, condition_runs(options.run, ["memory"], 1)[0])
    memory.write_text("".join(memory.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
    result = summarize(graph, options, ev["settings"])
    assert (result["anchors"], result["records_not_compared"]) == (3, 3)
    assert all(row["anchors"] == 3 for row in result["conditions"])
    assert ev["result"]["anchors"] == 4 and ev["result"]["records_not_compared"] == 0


def test_bad_inputs_name_the_path_or_field(tmp_path):
    with pytest.raises(FeedbackEvalError, match="nowhere: prices folder not found"):
        _options(tmp_path, "x", prices=tmp_path / "nowhere").check()
    with pytest.raises(FeedbackEvalError, match=r"unknown ticker 'FOO': no price file .*FOO\.csv"):
        _options(tmp_path, "x", tickers=("FOO",)).check()
    with pytest.raises(FeedbackEvalError, match=r"unknown ticker 'BABA': no tweets folder .*feedback_tweets/BABA"):
        _options(tmp_path, "x", tickers=("BABA",)).check()
    with pytest.raises(FeedbackEvalError, match="--conditions"):
        _options(tmp_path, "x", conditions=("memory", "oracle")).check()
    with pytest.raises(FeedbackEvalError, match="--run"):
        _options(tmp_path, "a|b").check()
    out = finkg(
        "eval",
        "feedback",
        "--tweets",
        str(TWEETS),
        "--prices",
        str(tmp_path / "nowhere"),
        "--market",
        str(MARKET),
        "--tickers",
        "MSFT",
        "--out",
        str(tmp_path / "o"),
    )
    assert out.returncode == 2 and "nowhere: prices folder not found" in out.stderr
    out = finkg(
        "eval",
        "feedback",
        "--tweets",
        str(TWEETS),
        "--prices",
        str(PRICES),
        "--market",
        str(MARKET),
        "--tickers",
        "MSFT,FOO",
        "--out",
        str(tmp_path / "o"),
    )
    assert out.returncode == 2 and "unknown ticker 'FOO'" in out.stderr and "FOO.csv" in out.stderr
