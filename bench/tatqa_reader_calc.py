"""Add the ``reader-calc`` systems to a finished TAT-QA run from its ``reader`` generations, without an LLM.

``reader-calc`` (``finkg eval tatqa -s reader-calc``) makes exactly the ``reader``'s LLM call (same prompt, same
token cap) and runs the thought's ``calculate`` program with the agent's calculator
(:func:`generation.agent.thought.run_thought`); asked beside ``reader`` its calls are LLM-cache hits. For a run
whose cache is gone (one made on a lent GPU machine), this script applies the same function to the stored
``reader`` and ``reader+lora`` generations and scores them with :func:`finkg.eval.tatqa.score_text`, so
``reader-calc`` and ``reader-calc+lora`` answers are what the systems would have written on a cache hit.

    python bench/tatqa_reader_calc.py TATQA_JSON RUN_DIR OUT_DIR
    python bench/tatqa_partial.py OUT_DIR NAME --systems reader,reader+lora,reader-calc,reader-calc+lora

OUT_DIR gets the run's answers plus the derived ones, and its manifest.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
from pathlib import Path

from finkg.eval.tatqa import read_answers, score_text, write_answers
from generation.agent.thought import run_thought
from ingest.datasets.tatqa import read_tatqa

DERIVED = {"reader": "reader-calc", "reader+lora": "reader-calc+lora"}


def main(argv: list[str] | None = None) -> int:
    """Entry point (see the module doc); returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tatqa", type=Path, help="tatqa_dataset_dev.json (the run's source)")
    ap.add_argument("run", type=Path, help="the run's folder (answers.jsonl, manifest.json)")
    ap.add_argument("out", type=Path, help="a new folder for the run's and the derived answers")
    args = ap.parse_args(argv)

    contexts = {c.index: c for c in read_tatqa(args.tatqa)}
    answers = read_answers(args.run / "answers.jsonl")
    derived, changed = [], 0
    for r in answers:
        if r.system not in DERIVED or r.error is not None:
            continue
        context = contexts[r.context_index]
        index = next(i for i, q in enumerate(context.questions) if q.uid == r.question_uid)
        ran = run_thought(r.generated)
        changed += ran.replaced
        scored = score_text(DERIVED[r.system], context, index, ran.text)
        derived.append(dataclasses.replace(scored, seconds=r.seconds, model_id=r.model_id))
    args.out.mkdir(parents=True, exist_ok=True)
    if (args.run / "manifest.json").is_file():
        shutil.copy(args.run / "manifest.json", args.out / "manifest.json")
    write_answers(args.out / "answers.jsonl", [*answers, *derived])
    print(f"{len(derived)} answers derived, {changed} with the calculator's number -> {args.out / 'answers.jsonl'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
