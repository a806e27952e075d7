"""Report batches end to end (seed 004, sections 2-3.3): real AKShare facts and a real FOMC chunk in the real
Neo4j, MiniLM for retrieval, SmolLM2 through llama.cpp for both stages (weak, but every path runs for real).

What users rely on: a Markdown report and a JSON record per question; every number verified, context or
marked; the (:Report) node linked to the facts' Observation nodes and to the chunks of the knowledge it
used; a rerun skips what is done (no LLM call); a bad batch file names its line and field.
"""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest
from conftest import minilm_dir
from test_llm import smol_gguf

from finkg.config import load_settings
from finkg.pipelines import indicators, reports
from finkg.pipelines import text as text_ingest
from generation.kgbuild.names import entity_id
from generation.kgbuild.resolution import write_entities, write_relations
from generation.llm import client_from_settings
from generation.verify.report_numbers import MARK
from kg import BatchWriter
from kg.ledger import Ledger
from retrieval.embeddings import make_embedder

ROOT = Path(__file__).resolve().parents[1]
STATEMENT = ROOT / "data" / "fomc-statements" / "statements" / "20151216.txt"
AKSHARE = sorted((ROOT / "data" / "china-bond").glob("*akshare_wide.csv")) + sorted(
    (ROOT / "data" / "china-macro").glob("*.csv")
)
QUESTIONS = [
    {
        "id": "yields-2015q2",
        "question": "How did China's treasury yields move in the second quarter of 2015?",
        "as_of": "2015-06-30",
    },
    {
        "id": "hike-2015-12",
        "question": "What did the FOMC decide in December 2015, and where was SHIBOR?",
        "as_of": "2016-01-29",
        "facts": [
            {"id": "target", "text": "The FOMC set the target range at 1/4 to 1/2 percent.", "numbers": [0.25, 0.5]}
        ],
    },
]
TRIPLES = [
    ("federal funds rate", "indicator", "AFFECT", "financial conditions", "market_status"),
    ("labor market conditions", "market_status", "INDICATE", "economic activity", "indicator"),
    ("energy prices", "indicator", "AFFECT", "inflation", "indicator"),
    ("raise the target range", "policy", "MAY_LEAD_TO", "inflation at 2 percent", "threshold_comparison"),
]


@pytest.fixture(scope="module")
def rsettings(tmp_path_factory):
    return load_settings(
        llm_backend="llama-cpp",
        llm_model_path=smol_gguf(),
        llm_n_ctx=8192,
        llm_cache_dir=tmp_path_factory.mktemp("llm-cache"),
        embedding_model_path=minilm_dir(),
        retrieval_k=3,
        retrieval_top_n=4,
        report_max_facts=12,
        report_answer_tokens=120,
    )


@pytest.fixture(scope="module")
def ready(graph, rsettings):
    """AKShare observations, one FOMC statement's chunks, and four triples sourced from its first chunk."""
    indicators.ingest_akshare_files(graph, rsettings, AKSHARE)
    text_ingest.ingest_text(graph, rsettings, [STATEMENT])
    chunk = graph.read(
        "MATCH (:Document {id: 'fomc:statement:20151216'})-[:HAS_CHUNK]->(c:Chunk {kind: 'text'}) "
        "RETURN c.id AS id ORDER BY c.seq LIMIT 1"
    )[0]["id"]
    graph.run_autocommit("MATCH (e:Entity) WHERE e.name STARTS WITH 'rpttest ' DETACH DELETE e")
    ents, rels = [], []
    for i, (h, ht, rel, t, tt) in enumerate(TRIPLES):
        h, t = f"rpttest {h}", f"rpttest {t}"
        ents += [{"type": ht, "name": h}, {"type": tt, "name": t}]
        rels.append(
            {
                "type": rel,
                "head": entity_id(ht, h),
                "tail": entity_id(tt, t),
                "id": f"rpttest-{i}",
                "props": {"chunk_id": chunk, "cluster": f"c{i % 2}"},
            }
        )
    write_entities(graph, ents)
    write_relations(graph, BatchWriter(graph), rels)
    yield chunk
    graph.run_autocommit("MATCH (e:Entity) WHERE e.name STARTS WITH 'rpttest ' DETACH DELETE e")
    graph.run_autocommit(
        "MATCH (r:Report) WHERE r.id STARTS WITH 'report:yields-2015q2' OR r.id STARTS WITH "
        "'report:hike-2015-12' DETACH DELETE r"
    )


def _batch(tmp_path: Path, rows) -> Path:
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_batch_writes_verified_reports_linked_in_the_graph_and_resumes(graph, rsettings, ready, tmp_path):
    client = client_from_settings(rsettings)
    ctx = reports.ReportContext(graph, rsettings, client, make_embedder(minilm_dir()), "tfr")
    questions = reports.load_questions(_batch(tmp_path, QUESTIONS))
    out = tmp_path / "reports"
    summary = reports.run_batch(questions, ctx, out)
    # an answer stage that failed (SmolLM2's cited points cut off) is a failed item, never a done one
    assert summary.done + len(summary.failed) == 2 and summary.skipped == 0
    assert all(": ReportItemFailed: the answer stage failed" in f for f in summary.failed)
    for q in QUESTIONS:
        rec = json.loads((out / f"{q['id']}.json").read_text(encoding="utf-8"))
        md = (out / f"{q['id']}.md").read_text(encoding="utf-8")
        assert md.startswith(f"# {q['question']}") and rec["report_id"] in md
        # a chart of the indicators the selected facts are about, linked from the report
        if any(f["id"].startswith("akshare:") for f in rec["selected_facts"]):
            assert rec["chart"] == f"{q['id']}.indicators.png" and f"]({rec['chart']})" in md
            assert (out / rec["chart"]).read_bytes()[:4] == b"\x89PNG"
        else:
            assert rec["chart"] is None and not (out / f"{q['id']}.indicators.png").exists()
        assert rec["facts_total"] > 0 and set(rec["facts_shown"]) >= {f["id"] for f in rec["selected_facts"]}
        assert all(f["id"].startswith(("akshare:", "extra:")) for f in rec["selected_facts"])
        # cited-points answers (the default): every claim line ends with citations of shown ids, or the failed
        # answer is recorded with its raw text, never an unexplained empty report
        if rec["answer_raw"]:
            claims = [x for x in rec["answer_raw"].splitlines() if not x.startswith("Conclusion:")]
            assert claims and all(re.search(r"\[[FK]\d+(, [FK]\d+)*\][.!?]$", x) for x in claims)
            assert not rec["invalid_citations"]
        else:
            assert rec["calls"]["answer"]["error"] and rec["calls"]["answer"]["raw"]
            assert rec["status"] == "failed" and rec["error"].startswith("the answer stage failed")
        # every number is verified against a fact, context, or marked right after it in the gated text; a sentence
        # with a mark is withheld: the published answer carries no mark, the withheld claims are listed with reasons
        for c in rec["numbers"]:
            assert c["status"] in ("verified", "context", "unverified")
            if c["status"] == "unverified":
                assert c["text"] + MARK in rec["answer_gated"]
                assert any(f"no fact carries {c['text']}" in w["reasons"] for w in rec["withheld"])
            if c["status"] == "verified":
                assert c["fact_id"] in {f["id"] for f in rec["selected_facts"]}
        assert MARK not in rec["answer"] and "[unsupported:" not in rec["answer"]
        # the answer gate's verdict is recorded: passed only with no unverified number and no unsupported claim
        gate = rec["gate"]
        assert gate["passed"] == (not gate["unverified_numbers"] and not gate["unsupported_claims"])
        assert gate["verdict"] == ("passed" if gate["passed"] else "could not verify")
        assert gate["passed"] == (not rec["withheld"]) and gate["withheld_claims"] == len(rec["withheld"])
        assert all(f"[unsupported: {u['why']}]" in rec["answer_gated"] for u in gate["unsupported_claims"])
        assert "Answer gate: " in md and all(w["claim"] in md for w in rec["withheld"])
        # every retrieval call ran as of the question's date, and nothing published later reached the report
        cutoff = f"{q['as_of']}T23:59:59Z"
        assert [(c["stage"], c["as_of"], c["as_of_from"]) for c in rec["retrieval_calls"]] == [
            ("K1", cutoff, "question"),
            ("K2", cutoff, "question"),
        ]
        assert all(k["available_at"] and k["available_at"] <= cutoff for k in rec["k1"] + rec["k2"])
        if q["as_of"] < "2015-12-16":  # this test's triples come from the FOMC statement of 2015-12-16
            assert not any(k["id"].startswith("rpttest-") for k in rec["k1"] + rec["k2"])
            continue
        # TFR: k knowledge items, each with its cluster, weight and source chunk
        assert len(rec["k2"]) == 3 and all(k["cluster"] and k["cluster_weight"] is not None for k in rec["k2"])
        # each triple's source chunk is the one its relationship records, and that chunk exists (the graph may
        # hold other extracted triples besides this test's four, so TFR may retrieve those too)
        sources = graph.read(
            "UNWIND $ids AS id MATCH ()-[r]->() WHERE r.id = id MATCH (c:Chunk {id: r.chunk_id}) "
            "RETURN r.id AS id, c.id AS chunk",
            {"ids": [k["id"] for k in rec["k2"]]},
        )
        assert {x["id"]: x["chunk"] for x in sources} == {k["id"]: k["chunk_id"] for k in rec["k2"]}
        links = graph.read(
            "MATCH (r:Report {id: $id})-[c:CITES]->(x) RETURN labels(x)[0] AS label, c.kind AS kind, count(*) AS n",
            {"id": rec["report_id"]},
        )
        got = {(x["label"], x["kind"]): x["n"] for x in links}
        assert got[("Chunk", "triple")] == 3 and got[("Entity", "triple")] == 3
        observations = sum(len([c for c in f["cites"] if c[0] == "Observation"]) for f in rec["selected_facts"])
        assert got.get(("Observation", "fact"), 0) == observations
    # a rerun skips the questions done and retries the failed ones (answered from the LLM cache)
    calls = client.usage.calls
    again = reports.run_batch(questions, ctx, out)
    assert (again.done + len(again.failed), again.skipped) == (len(summary.failed), summary.done)
    assert client.usage.calls == calls
    # a redo is answered from the LLM cache: the same reports, no backend call
    redo = reports.run_batch(questions[:1], ctx, out, redo=True)
    assert redo.done + len(redo.failed) == 1 and client.usage.calls == calls


def test_a_failed_item_is_recorded_failed_with_its_error_and_retried(graph, rsettings, ready, tmp_path):
    settings = rsettings.model_copy(update={"report": rsettings.report.model_copy(update={"answer_format": "text"})})
    ctx = reports.ReportContext(graph, settings, client_from_settings(settings), make_embedder(minilm_dir()), "none")
    questions = reports.load_questions(_batch(tmp_path, [{**QUESTIONS[0], "id": "ledger-retry"}]))
    out = tmp_path / "reports"
    stem = reports.report_stem(questions[0], ctx)
    (out / f"{stem}.md").mkdir(parents=True)  # a real error after generation: the report cannot be written
    rid = f"report:ledger-retry:{ctx.system}:{ctx.mode}"
    ledger = Ledger(graph, "Report")
    try:
        first = reports.run_batch(questions, ctx, out)
        assert first.done == 0 and len(first.failed) == 1 and "IsADirectoryError" in first.failed[0]
        state = ledger.state([rid])[rid]
        assert state["status"] == "failed" and "IsADirectoryError" in state["error"] and state["input_digest"]
        second = reports.run_batch(questions, ctx, out)  # retried, not skipped (it fails again here)
        assert (second.skipped, len(second.failed)) == (0, 1) and ledger.state([rid])[rid]["attempts"] == 2
        (out / f"{stem}.md").rmdir()
        third = reports.run_batch(questions, ctx, out)
        assert (third.done, third.skipped, third.failed) == (1, 0, [])
        state = ledger.state([rid])[rid]
        assert (state["status"], state["error"], state["attempts"]) == ("done", "", 3)
        assert json.loads((out / f"{stem}.json").read_text(encoding="utf-8"))["status"] == "done"
        assert reports.run_batch(questions, ctx, out).skipped == 1  # done from the same facts: skipped
    finally:
        graph.run_autocommit("MATCH (r:Report {id: $id}) DETACH DELETE r", {"id": rid})


def test_baselines_and_single_stage_share_the_batch_interface(graph, rsettings, ready, tmp_path):
    client = client_from_settings(rsettings)
    embedder = make_embedder(minilm_dir())
    questions = reports.load_questions(_batch(tmp_path, QUESTIONS))
    for system, mode in (("bm25-docs", "two-stage"), ("none", "single-stage")):
        ctx = reports.ReportContext(graph, rsettings, client, embedder, system, mode)
        summary = reports.run_batch(questions, ctx, tmp_path / "out")
        # every item is written whole; one whose answer SmolLM2 left malformed at the 120-token cap is recorded
        # failed with the answer stage's error (and retried next run), never counted done
        assert summary.done + len(summary.failed) == 2
        assert all("the answer stage failed" in f for f in summary.failed), summary.failed
        early, late = (
            json.loads((tmp_path / "out" / f"{q['id']}.{system}.{mode}.json").read_text(encoding="utf-8"))
            for q in QUESTIONS
        )
        assert sum(rec["status"] == "failed" for rec in (early, late)) == len(summary.failed)
        for rec in (early, late):
            assert rec["system"] == system and rec["mode"] == mode
        if system == "none":
            assert late["k1"] == [] and "select" not in late["calls"]
            assert len(late["selected_facts"]) == len(late["facts_shown"])  # single stage: all of F
        else:
            assert late["k2"] and all(k["kind"] == "passage" for k in late["k2"])
            # the only text with triples is the FOMC statement of 2015-12-16: nothing for a 2015-06-30 question
            assert early["k1"] == [] and early["k2"] == []
            assert [c["as_of"] for c in early["retrieval_calls"]] == ["2015-06-30T23:59:59Z"] * 2
    with pytest.raises(ValueError, match="unknown mode"):
        reports.ReportContext(graph, rsettings, client, embedder, "none", "three-stage")


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"id": "a b", "question": "What?"}', "questions.jsonl:2: field 'id'"),
        ('{"id": "x", "question": "What?", "as_of": "2015-13-01"}', "questions.jsonl:2: field 'as_of'"),
        ('{"id": "ok", "question": "Again?"}', "questions.jsonl:2: field 'id': 'ok' repeats line 1"),
        ('{"id": "y", "question": "What?", "facts": [{"id": "f"}]}', "questions.jsonl:2: field 'facts.0.text'"),
        ("not json", "questions.jsonl:2"),
    ],
)
def test_bad_batch_lines_name_the_line_and_field(tmp_path, line, message):
    path = tmp_path / "questions.jsonl"
    path.write_text('{"id": "ok", "question": "Fine?"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(reports.BatchFileError, match=message.replace("?", r"\?")):
        reports.load_questions(path)


def test_eval_reports_scores_systems_against_references(graph, rsettings, ready, tmp_path):
    """finkg eval reports on one question with a reference: the reports are generated once per system
    (a rerun reuses them) and scored with ROUGE-L, BERTScore (MiniLM) and the judge (SmolLM2)."""
    from finkg.eval import reports as report_eval
    from finkg.eval.metrics.text import BertScoreModel

    q = {
        **QUESTIONS[0],
        "reference": "The 10-year yield was 3.60% on 2015-06-30, little changed over three months, "
        "while short-term yields fell.",
        "conclusion": "Short-term yields fell.",
    }
    questions = reports.load_questions(_batch(tmp_path, [q]))
    client = client_from_settings(rsettings)
    bert = BertScoreModel(minilm_dir())
    rows = report_eval.evaluate_reports(
        graph,
        rsettings,
        client,
        make_embedder(minilm_dir()),
        questions,
        ["none", "bm25-docs"],
        tmp_path / "eval",
        bertscore=bert,
        judge=client,
    )
    assert [r["system"] for r in rows] == ["no retrieval", "BM25 documents"]
    for r in rows:
        assert r["texts"] == 1 and 0 <= r["rouge_l_f1"] <= 1 and 0 <= r["bertscore_f1"] <= 1
        # the judge's rating is a number 0-5 or counted as malformed, never silently 0
        assert (r["judge_text"] is None and r["judge_text_malformed"] == 1) or 0 <= r["judge_text"] <= 5
    scores = json.loads((tmp_path / "eval" / "none" / "scores.json").read_text(encoding="utf-8"))
    assert scores[0]["id"] == "yields-2015q2"
    # a written answer has a BERTScore above 0; a failed one (SmolLM2 can run out of tokens inside the JSON)
    # scores 0 and its failure is on record
    rec = json.loads(next((tmp_path / "eval" / "none").glob("yields-2015q2*.json")).read_text(encoding="utf-8"))
    if rec["answer_raw"].strip():
        assert scores[0]["bertscore"]["f1"] > 0
    else:
        assert scores[0]["bertscore"]["f1"] == 0 and rec["calls"]["answer"]["error"]
    calls = client.usage.calls
    report_eval.evaluate_reports(
        graph,
        rsettings,
        client,
        make_embedder(minilm_dir()),
        questions,
        ["none"],
        tmp_path / "eval",
        bertscore=bert,
        judge=None,
    )
    assert client.usage.calls == calls  # the reports were reused, nothing generated again
    # a second writer (`finkg eval reports --adapter`: the LoRA-tuned model; here a second client of the same
    # base) runs the same systems as <system>+lora, its reports beside the base's in the folder and the graph
    second = client_from_settings(rsettings)
    rows = report_eval.evaluate_reports(
        graph,
        rsettings,
        client,
        make_embedder(minilm_dir()),
        questions,
        ["none"],
        tmp_path / "eval",
        tuned=second,
    )
    assert [r["system"] for r in rows] == ["no retrieval", "no retrieval + LoRA-tuned reader"]
    # only the second writer wrote (from the answer cache here: same model id; a tuned model's id differs)
    assert client.usage.calls == calls and second.usage.calls + second.usage.cache_hits > 0
    assert [p.name for p in (tmp_path / "eval" / "none+lora").glob("*.json") if p.name != "scores.json"] == [
        "yields-2015q2.none.two-stage.lora.json"
    ]
    ids = {
        r["id"]
        for r in graph.read("MATCH (r:Report) WHERE r.id STARTS WITH 'report:yields-2015q2:none' RETURN r.id AS id")
    }
    assert {"report:yields-2015q2:none:two-stage", "report:yields-2015q2:none:two-stage:lora"} <= ids
    with pytest.raises(ValueError, match="no question has a 'reference'"):
        report_eval.evaluate_reports(
            graph,
            rsettings,
            client,
            make_embedder(minilm_dir()),
            reports.load_questions(_batch(tmp_path, QUESTIONS[1:])),
            ["none"],
            tmp_path / "eval",
        )


def test_finkg_report_command_runs_a_batch_and_names_bad_lines(graph, rsettings, ready, tmp_path):
    import os
    import subprocess
    import sys

    env = {
        **os.environ,
        "FINKG_LLM_BACKEND": "llama-cpp",
        "FINKG_LLM_MODEL_PATH": str(rsettings.llm.model_path),
        "FINKG_LLM_N_CTX": "8192",
        "FINKG_LLM_CACHE_DIR": str(rsettings.llm.cache_dir),
        "FINKG_EMBEDDING_MODEL_PATH": str(minilm_dir()),
        "FINKG_REPORT_MAX_FACTS": "12",
        "FINKG_REPORT_ANSWER_TOKENS": "120",
        "COLUMNS": "200",
    }
    batch = _batch(tmp_path, QUESTIONS[:1])
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "finkg",
            "report",
            "--batch",
            str(batch),
            "--out",
            str(tmp_path / "r"),
            "--system",
            "none",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    assert "reports written" in run.stdout and "MATCH (r:Report)-[c:CITES]->(x)" in run.stdout
    assert (tmp_path / "r" / "yields-2015q2.none.two-stage.md").is_file()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "ok", "question": "Fine?"}\n{"id": "ok", "question": "Again?"}\n', encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "finkg", "report", "--batch", str(bad)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert run.returncode == 2 and "bad.jsonl:2: field 'id': 'ok' repeats line 1" in run.stderr


def test_a_chart_shows_only_what_was_public_on_its_date(graph, ready):
    """The series a report draws is point in time: M2 growth as of 2015-06-30 ends with the figure published
    by then (May's, published mid-June), never June's, which came out in July."""
    from retrieval.contract import AsOfRequired
    from retrieval.facts.series import indicator_series

    rows = graph.read(
        "MATCH (:Indicator {code: 'cn_m2_yoy'})-[:HAS_OBSERVATION]->(o) RETURN toString(o.date) AS d, "
        "o.available_at AS at ORDER BY o.date"
    )
    public = [r["d"] for r in rows if r["at"] <= "2015-06-30T23:59:59Z" and r["d"] >= "2014-01-01"]
    later = [r["d"] for r in rows if r["at"] > "2015-06-30T23:59:59Z"]
    assert public and later  # the test can fail both ways
    series = indicator_series(graph, "cn_m2_yoy", as_of="2015-06-30", start=date(2014, 1, 1))
    assert series is not None and [d for d, _ in series.points] == public
    assert series.points[-1][0] < "2015-06-01" and not set(later) & {d for d, _ in series.points}
    assert indicator_series(graph, "no_such_code", as_of="2015-06-30", start=date(2014, 1, 1)) is None
    with pytest.raises(AsOfRequired):
        indicator_series(graph, "cn_m2_yoy", as_of=None, start=date(2014, 1, 1))


def test_only_picks_questions_of_the_batch_by_id_and_an_unknown_id_names_the_file():
    main = Path(__file__).resolve().parents[1] / "data" / "questions" / "main.jsonl"
    questions = reports.load_questions(main)
    picked = reports.select_questions(questions, ["jnj-2009q2", "cn-yields-2015q2"], main)
    assert [q.id for q in picked] == ["cn-yields-2015q2", "jnj-2009q2"]  # the batch's order
    assert reports.select_questions(questions, [], main) == questions
    with pytest.raises(reports.BatchFileError, match=r"main\.jsonl: no question with id 'nope'"):
        reports.select_questions(questions, ["jnj-2009q2", "nope"], main)
