"""The experience memory's hit rate against the bank's size, seed 001's Figure 4(a) on finkg's TAT-QA split: how
many of the evaluated questions retrieve at least one experience as the bank grows (the memory can change an
answer only on a hit; a miss gets the agent's answer unchanged).

The queries are the questions of the stratified 300-question sample of TAT-QA's evaluation half (the sample of
``finkg eval tatqa --half eval --sample 300`` and ``finkg eval agent``) that reach the memory
(:func:`finkg.eval.tatqa.agent_route` ``program``: not counted, arithmetic by
:func:`generation.agent.questions.needs_arithmetic`), each embedded as the agent embeds it
(:func:`generation.agent.memory.query_text` over the question and its evidence). The bank
snapshots are the first ``n`` arithmetic questions of the training half in the order ``finkg experience learn``
learns them, every ``--step`` up to all of them (:func:`finkg.eval.memory_hits.hit_rates`; seed 001's nine
thresholds). The baseline, measured in the same run: the bank stored in Neo4j now, retrieved through its vector
index exactly as the evaluation retrieves (``ExperienceMemory.retrieve``, tau 0.65, top 5): its hit rate beside
the snapshot of the same number of learned questions (they differ only by merged near-duplicates and the index's
approximate search).

``--route span``: the same for the quoted questions (:func:`finkg.eval.tatqa.agent_route` ``span``, every answer
type) against the span route's bank (``finkg experience learn --route span``; retrieval reads a question's own
route only).

    python bench/memory_hit_rate.py ../shared/data/tatqa/tatqa_dataset_dev.json
    python bench/memory_hit_rate.py ../shared/data/tatqa/tatqa_dataset_dev.json --route span
    python bench/memory_hit_rate.py tatqa_dataset_dev.json --step 50 --no-graph      # without Neo4j

Writes ``bench/results/memory-hit-rate.json`` and the picture ``docs/memory-hit-rate.png`` (``--route span``:
``memory-hit-rate-span``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from rich.console import Console

from finkg.api import open_graph
from finkg.config import load_settings
from finkg.eval.experience import learning_order
from finkg.eval.memory_hits import SEED_THRESHOLDS, hit_rates
from finkg.eval.results import write_result
from finkg.eval.tatqa import agent_evidence, of_answer_types, question_route, stratified_sample
from finkg.plots import hit_rate_curves
from generation.agent.memory import ROUTES, THRESHOLD, TOP_K, ExperienceMemory, list_experiences, query_text
from ingest.datasets.tatqa import TatqaContext, TatqaQuestion, read_tatqa, split_contexts
from retrieval.embeddings import make_embedder

DOCS = Path(__file__).resolve().parents[1] / "docs"


def with_evidence(items: list[tuple[TatqaContext, TatqaQuestion]]) -> list[tuple[TatqaQuestion, str]]:
    """Each question with its evidence text (table rows and paragraphs: the context the agent and ``finkg experience
    learn`` embed after the question, :func:`generation.agent.memory.query_text`)."""
    out = []
    for c, q in items:
        cells, paragraphs, _ = agent_evidence(q.question, c.facts, c.passages, {c.table_uid: c.table})
        out.append((q, "\n".join(cells + paragraphs)))
    return out


def evaluated(
    contexts: list[TatqaContext], chosen: set[str], route: str = "program"
) -> list[tuple[TatqaContext, TatqaQuestion]]:
    """The questions of ``chosen`` that reach the memory of ``route`` in ``finkg eval tatqa``
    (:func:`finkg.eval.tatqa.agent_route`), in file order."""
    return [(c, q) for c in contexts for q in c.questions if q.uid in chosen and question_route(c, q) == route]


def main(argv: list[str] | None = None) -> int:
    """Entry point (see the module doc); returns the exit status."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("tatqa", type=Path, help="a TAT-QA JSON file (split by context into training and evaluation)")
    ap.add_argument("--sample", type=int, default=300, help="the stratified sample of the evaluation half")
    ap.add_argument("--step", type=int, default=25, help="training questions between two bank snapshots")
    ap.add_argument("--no-graph", action="store_true", help="skip the stored bank (no Neo4j needed)")
    ap.add_argument("--route", choices=ROUTES, default="program", help="the agent route whose memory is measured")
    args = ap.parse_args(argv)
    console = Console()
    settings = load_settings()
    train, evaluation = split_contexts(read_tatqa(args.tatqa))
    chosen = stratified_sample(evaluation, args.sample)
    if args.route == "program":  # the arithmetic questions, as the record of this bench has always had them
        chosen = of_answer_types(evaluation, ["arithmetic"], chosen)
    queries = with_evidence(evaluated(evaluation, chosen, args.route))
    learned = with_evidence(learning_order(train, args.route))
    if not queries or not learned:
        console.print(f"{args.tatqa}: no evaluated or no training question reaches the memory", style="red")
        return 2
    embedder = make_embedder(
        settings.embedding.model_path,
        settings.embedding.backend,
        settings.embedding.batch_size,
        settings.embedding.device,
    )
    q_vec = np.asarray(embedder.encode([query_text(q.question, context) for q, context in queries]))
    bank_vec = np.asarray(embedder.encode([query_text(q.question, context) for q, context in learned]))
    sizes = sorted({*range(0, len(learned) + 1, args.step), len(learned)})

    stored: dict[str, float | int] = {}
    if not args.no_graph:
        with open_graph(settings) as g:
            entries = [e for e in list_experiences(g, "train") if e["route"] == args.route]
            memory = ExperienceMemory(g, embedder, THRESHOLD, TOP_K)
            exclude = [c.table_uid for c in evaluation]
            hits = sum(
                bool(memory.retrieve(q.question, context, exclude_contexts=exclude, route=args.route))
                for q, context in queries
            )
        n_learned = sum(len(e.get("sources") or [e["id"]]) for e in entries)
        stored = {"entries": len(entries), "learned_questions": n_learned, "hit_rate": hits / len(queries)}
        if n_learned <= len(learned):
            sizes = sorted({*sizes, n_learned})
    rows = hit_rates(q_vec, bank_vec, sizes, SEED_THRESHOLDS)
    at = f"{THRESHOLD:.2f}"
    for r in rows:
        console.print(f"{r['entries']:4d} learned questions: hit rate at tau {at} {100 * r['hit_rate'][at]:.1f} %")
    if stored:
        # no snapshot of that size when the bank holds more questions than this file's training half (another file)
        projected = next((r["hit_rate"][at] for r in rows if r["entries"] == stored["learned_questions"]), None)
        if projected is not None:
            stored["projected_hit_rate"] = projected
        console.print(
            f"stored bank: {stored['entries']} experiences from {stored['learned_questions']} learned questions: "
            f"hit rate {100 * stored['hit_rate']:.1f} % through the vector index "
            f"(snapshot of the same size: {'none' if projected is None else f'{100 * projected:.1f} %'})",
            highlight=False,
        )
    name = "memory-hit-rate" + ("" if args.route == "program" else f"-{args.route}")
    picture = DOCS / f"{name}.png"
    what = "arithmetic" if args.route == "program" else "quoted (span route)"
    hit_rate_curves(
        [(r["entries"], r["hit_rate"]) for r in rows],
        picture,
        title=f"Experience memory hit rate on {len(queries)} evaluated {what} questions (TAT-QA eval half)",
        highlight=at,
        measured=(int(stored["learned_questions"]), float(stored["hit_rate"])) if stored else None,
    )
    full = rows[-1]["hit_rate"][at]
    out = write_result(
        name,
        {
            "tatqa": str(args.tatqa),
            "route": args.route,
            "sample": args.sample,
            "step": args.step,
            "thresholds": list(SEED_THRESHOLDS),
            "embedding_model": str(settings.embedding.model_path),
        },
        {
            "queries": len(queries),
            "training_questions": len(learned),
            "hit_rate_full_bank_at_065": full,
            "stored_bank": stored or None,
            "ratio_full_over_stored_x": round(full / stored["hit_rate"], 2) if stored and stored["hit_rate"] else None,
        },
        tables={
            "snapshots": [{"entries": r["entries"], **{f"tau_{k}": v for k, v in r["hit_rate"].items()}} for r in rows]
        },
    )
    console.print(f"wrote {out} and {picture}", highlight=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
