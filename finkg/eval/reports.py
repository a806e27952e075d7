"""``finkg eval reports``: TFR against its baselines and no retrieval, on the same questions (seed 004, Table 2).

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, sections 4.1-4.2 and Table 2: the same generator with
each retrieval system (TFR, dense triples, BM25 documents, dense documents, no retrieval), scored against
reference analyses with ROUGE-L, BERTScore and an LLM judge's 0-5 consistency with the reference
conclusion and with the reference text (the paper's GLM4-Score), via :mod:`finkg.eval.metrics.text`.

Each system's reports are written by :func:`finkg.pipelines.reports.run_batch` into ``DIR/<system>/`` (resumable:
a rerun scores what is there and generates only what is missing); only questions with a ``reference``
are scored. Besides the text metrics, each row counts the report numbers verified against a fact and
those marked ``[unverified]``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from finkg.config import Settings
from finkg.eval.metrics.text import BertScoreModel, score_texts, summarize
from finkg.eval.results import write_result
from finkg.pipelines.reports import ReportContext, ReportQuestion, report_stem, run_batch
from kg import Graph
from kg.progress import StageProgress
from retrieval.embeddings import Embedder

TUNED_VARIANT = "lora"
"""The report variant of the LoRA-tuned writer: its systems are named ``<system>+lora``, its report ids end
``:lora`` (``finkg eval reports --adapter``)."""

SYSTEM_NAMES = {
    "tfr": "TFR (cluster-weighted triples)",
    "dense-triples": "dense triples",
    "bm25-docs": "BM25 documents",
    "dense-docs": "dense documents",
    "none": "no retrieval",
}


def evaluate_reports(
    graph: Graph,
    settings: Settings,
    client: Any,
    embedder: Embedder,
    questions: Sequence[ReportQuestion],
    systems: Sequence[str],
    out: Path,
    bertscore: BertScoreModel | None = None,
    judge: Any = None,
    progress: StageProgress | None = None,
    results_dir: Path | None = None,
    tuned: Any = None,
) -> list[dict[str, Any]]:
    """Generate (or reuse) every system's reports and score them against the references; the rows are also
    written in the one results format (:mod:`finkg.eval.results`) as ``eval-reports.json`` in
    ``results_dir`` (e.g. ``bench/results``), else in ``out``.

    Args:
        questions: the batch; those without ``reference`` are generated but not scored.
        systems: retrieval systems (:data:`retrieval.knowledge.SYSTEMS`), two-stage generation.
        bertscore: a loaded BERTScore model (None: not computed); judge: an LLM client for the 0-5
            consistency ratings (None: not computed).
        tuned: a second LLM client, the same model with a LoRA adapter (``finkg train reader``): every system
            is also run with it as ``<system>+lora`` (reports in ``out/<system>+lora``, ids tagged ``lora``),
            on the same questions, scored by the same metrics and judge (seed 004 §4.3: SFT before/after).

    Returns:
        One row per system: questions scored, ROUGE-L P/R/F1, BERTScore P/R/F1, judge scores (conclusion,
        text) and malformed judge answers, report numbers verified / marked unverified.

    Raises:
        ValueError: no question has a reference.
    """
    scored = [q for q in questions if q.reference]
    if not scored:
        raise ValueError("no question has a 'reference': nothing to score against")
    rows = []
    writers = [(client, "")] + ([(tuned, TUNED_VARIANT)] if tuned is not None else [])
    for system, (writer, variant) in ((system, w) for system in systems for w in writers):
        ctx = ReportContext(graph, settings, writer, embedder, system, "two-stage", progress=progress, variant=variant)
        label = f"{system}+{variant}" if variant else system
        folder = out / label
        summary = run_batch(questions, ctx, folder, progress=progress)
        # a failed answer stage leaves its record (an empty answer, scored as such); any other failure stops
        hard = [f for f in summary.failed if ": ReportItemFailed: " not in f]
        if hard:
            raise RuntimeError(f"{system}: {len(hard)} report(s) failed: {hard[0]}")
        records = [json.loads((folder / (report_stem(q, ctx) + ".json")).read_text(encoding="utf-8")) for q in scored]
        tick = progress(f"score {label}", len(scored)) if progress else None
        scores = score_texts(
            [r["answer_raw"] for r in records],
            [q.reference or "" for q in scored],
            [q.conclusion or q.reference or "" for q in scored],
            bertscore=bertscore,
            judge=judge,
            progress=tick,
        )
        (folder / "scores.json").write_text(
            json.dumps([{"id": q.id, **asdict(s)} for q, s in zip(scored, scores)], ensure_ascii=False, indent=1),
            encoding="utf-8",
        )
        name = SYSTEM_NAMES.get(system, system) + (" + LoRA-tuned reader" if variant else "")
        row = {"system": name, "model_id": writer.model_id, **summarize(scores)}
        row["numbers verified"] = sum(c["status"] == "verified" for r in records for c in r["numbers"])
        row["numbers unverified"] = sum(c["status"] == "unverified" for r in records for c in r["numbers"])
        rows.append(row)
    write_result(
        "eval-reports",
        {
            "questions": [q.id for q in scored],
            "systems": list(systems),
            "mode": "two-stage",
            "writer": client.model_id,
            "tuned_writer": tuned.model_id if tuned is not None else None,
            "bertscore": bertscore.description if bertscore else None,
            "judge": getattr(judge, "model_id", None) if judge else None,
        },
        {"texts": len(scored), **{f"{r['system']}_judge_conclusion": r.get("judge_conclusion") for r in rows}},
        tables={"systems": rows},
        directory=results_dir or out,
    )
    return rows
