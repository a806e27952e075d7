"""Score a TAT-QA evaluation folder whose run stopped early (a device lease, a session's end) on the questions
that every named system answered, and write it as ``bench/results/<name>.json`` in the one results format.

``finkg eval tatqa --out DIR`` appends each answer to ``DIR/answers.jsonl`` as it comes, so a run cut short holds
the first N questions of the sample for each system; the paired differences of
:meth:`finkg.eval.tatqa.TatqaResults.differences` need the same questions for each system, so questions some
system has not answered are left out (their count is printed and recorded). The picture goes next to the answers
(``DIR/partial/tatqa-em-f1.png``). For a memory system (its answers name the experiences they retrieved), the
results also count the answers that retrieved one and the questions won and lost against the baseline
(``tables.memory_use``).

    python bench/tatqa_partial.py DIR NAME --systems reader,reader+lora --note "why it stopped, where it ran"

``--tokens-from RERUN``: the answers of a rerun of the same command over the same LLM cache (``--out RERUN``,
``--limit`` the questions answered), written by a finkg that records tokens per answer: every call is a cache hit
that counts the tokens of the call that produced it (:mod:`generation.llm.meter`), so each answer's ``llm_calls``,
``prompt_tokens`` and ``completion_tokens`` are copied onto DIR's answer to the same question by the same system,
after checking that the rerun generated the same text (exit status 2 otherwise, naming the first difference).

``--join OTHER:SYSTEM=ALIAS``: a system's answers from another folder of the same sample, model and LLM cache (an
earlier run of one variant, e.g. another ``--memory-solution``), scored as ``ALIAS`` beside DIR's systems on the
questions both answered. The pairing holds only when both folders asked the baseline the same prompts: the
baseline's answers must be the same texts in both folders (exit status 2 otherwise, naming the first difference).
``--pair SYSTEM:BASELINE`` adds the paired EM difference of SYSTEM against BASELINE (besides every system against
the first) to ``tables.differences``.

    python bench/tatqa_partial.py DIR NAME --systems agent,agent-memory,agent-memory-values \
        --join OTHER:agent-memory=agent-memory-values --pair agent-memory:agent-memory-values

``--by-route TATQA``: the paired differences (each system against the first, and each ``--pair``) on each of the
analyst agent's routes (:func:`finkg.eval.tatqa.agent_route`: ``count``, ``program``, ``span``, worked out from the
TAT-QA file the run asked), with the questions won and lost (``tables.route_differences``).

    python bench/tatqa_partial.py DIR NAME --systems agent,agent-memory,agent-shuffled \
        --by-route ../shared/data/tatqa/tatqa_dataset_dev.json

Exit status 2 when no question was answered by every system.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from finkg.eval.results import RESULTS_DIR
from finkg.eval.tatqa import (
    AGENT_ROUTES,
    QuestionResult,
    TatqaResults,
    em_difference,
    question_route,
    read_answers,
    retrieved_experiences,
)
from ingest.datasets.tatqa import read_tatqa


def main(argv: list[str] | None = None) -> int:
    """Entry point (see the module doc); returns the exit status."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("folder", type=Path, help="an eval folder holding answers.jsonl (and manifest.json)")
    ap.add_argument("name", help="results file stem, e.g. eval-tatqa-reader-qwen-gpu")
    ap.add_argument("--systems", required=True, help="comma-separated systems, the baseline first")
    ap.add_argument("--note", default="", help="run_note: where and how the answers were made")
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    ap.add_argument("--tokens-from", type=Path, help="a rerun's folder over the warm LLM cache (module doc)")
    ap.add_argument(
        "--join", action="append", default=[], help="OTHER:SYSTEM=ALIAS, another folder's system (module doc)"
    )
    ap.add_argument("--pair", action="append", default=[], help="SYSTEM:BASELINE, one more paired difference")
    ap.add_argument("--by-route", type=Path, metavar="TATQA", help="the run's TAT-QA file: differences per route")
    args = ap.parse_args(argv)

    systems = [s for s in args.systems.split(",") if s]
    results = read_answers(args.folder / "answers.jsonl")
    if args.tokens_from:
        try:
            results = with_tokens(results, read_answers(args.tokens_from / "answers.jsonl"))
        except ValueError as exc:
            print(f"{args.tokens_from}: {exc}", file=sys.stderr)
            return 2
    joined = []
    for spec in args.join:
        try:
            results, source = joined_results(results, spec, systems[0])
        except ValueError as exc:
            print(f"--join {spec}: {exc}", file=sys.stderr)
            return 2
        joined.append(source)
    answered: dict[str, set[str]] = {}
    for r in results:
        answered.setdefault(r.question_uid, set()).add(r.system)
    complete = {uid for uid, got in answered.items() if set(systems) <= got}
    if not complete:
        print(f"{args.folder}: no question answered by all of {systems}", file=sys.stderr)
        return 2
    kept = TatqaResults(systems, [r for r in results if r.question_uid in complete and r.system in systems])
    partial = args.folder / "partial"
    kept.save(partial)
    record = json.loads((partial / "eval-tatqa.json").read_text(encoding="utf-8"))
    manifest = args.folder / "manifest.json"
    record["name"] = args.name
    record["command"] = " ".join(["python bench/tatqa_partial.py", *(argv if argv is not None else sys.argv[1:])])
    record["parameters"] |= {
        "folder": str(args.folder),
        "questions_answered_by_all": len(complete),
        "questions_seen": len(answered),
        "tokens_from": str(args.tokens_from) if args.tokens_from else None,
        "manifest": json.loads(manifest.read_text(encoding="utf-8")) if manifest.is_file() else None,
    }
    pairs = [(system, systems[0]) for system in systems[1:]]
    for spec in args.pair:
        system, _, baseline = spec.partition(":")
        if not {system, baseline} <= set(systems):
            print(f"--pair {spec}: SYSTEM:BASELINE, both among --systems {systems}", file=sys.stderr)
            return 2
        record["tables"]["differences"] += [d for d in kept.differences(baseline) if d["system"] == system]
        pairs.append((system, baseline))
    if args.by_route:
        routes = question_routes(args.by_route)
        unknown = sorted(complete - set(routes))
        if unknown:
            print(f"--by-route {args.by_route}: no question {unknown[0]} in that file", file=sys.stderr)
            return 2
        record["tables"]["route_differences"] = route_differences(kept.results, pairs, routes)
        record["parameters"]["by_route"] = str(args.by_route)
    if joined:
        record["parameters"]["joined"] = joined
    used = memory_use(kept.results, systems)
    if used:
        record.setdefault("tables", {})["memory_use"] = used
    if args.note:
        record["run_note"] = args.note
    out = args.results_dir / f"{args.name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    picture = partial / "tatqa-em-f1.png"
    print(f"{len(complete)} of {len(answered)} questions answered by every system -> {out} ({picture})")
    return 0


def question_routes(path: Path) -> dict[str, str]:
    """Question uid -> the analyst agent's route for it (:func:`finkg.eval.tatqa.agent_route`) for every question of
    the TAT-QA file ``path``.

    Raises:
        IngestError: a malformed TAT-QA file (named).
    """
    return {q.uid: question_route(c, q) for c in read_tatqa(path) for q in c.questions}


def route_differences(
    results: list[QuestionResult], pairs: list[tuple[str, str]], routes: dict[str, str]
) -> list[dict[str, object]]:
    """For each ``(system, baseline)`` of ``pairs`` and each route of :data:`finkg.eval.tatqa.AGENT_ROUTES` with
    questions: ``{"system", "baseline", "route", "questions", "em_diff", "ci_low", "ci_high", "won", "lost"}``,
    the EM difference in points with its 95 % paired bootstrap interval and the questions won and lost, on the
    questions both answered (``routes``: question uid -> route, :func:`question_routes`)."""
    em = {(r.system, r.question_uid): r.em for r in results}
    rows: list[dict[str, object]] = []
    for system, baseline in pairs:
        for route in AGENT_ROUTES:
            both = [
                (em[(system, uid)], em[(baseline, uid)])
                for (who, uid) in em
                if who == baseline and routes.get(uid) == route and (system, uid) in em
            ]
            if both:
                won, lost = sum(a > b for a, b in both), sum(a < b for a, b in both)
                row = {"system": system, "baseline": baseline, "route": route, **em_difference(both)}
                rows.append({**row, "won": won, "lost": lost})
    return rows


def memory_use(results: list[QuestionResult], systems: list[str]) -> list[dict[str, object]]:
    """For each system after the baseline (``systems[0]``) whose answers name the experiences they retrieved
    (:func:`finkg.eval.tatqa.retrieved_experiences`): its answers, how many retrieved at least one experience, and
    the questions it ``won`` (EM above the baseline's on the same question) and ``lost``, in all and among those that
    retrieved one (a question that retrieved none is asked exactly as the baseline asks it)."""
    base = {r.question_uid: r.em for r in results if r.system == systems[0]}
    rows: list[dict[str, object]] = []
    for system in systems[1:]:
        mine = [(r, retrieved_experiences(r.generated)) for r in results if r.system == system]
        if not any(ids is not None for _, ids in mine):
            continue
        hit = [r for r, ids in mine if ids]
        rows.append(
            {
                "system": system,
                "against": systems[0],
                "answers": len(mine),
                "retrieved": len(hit),
                "won": sum(r.em > base[r.question_uid] for r, _ in mine),
                "lost": sum(r.em < base[r.question_uid] for r, _ in mine),
                "won_retrieved": sum(r.em > base[r.question_uid] for r in hit),
                "lost_retrieved": sum(r.em < base[r.question_uid] for r in hit),
            }
        )
    return rows


def joined_results(
    results: list[QuestionResult], spec: str, baseline: str
) -> tuple[list[QuestionResult], dict[str, object]]:
    """``results`` with another folder's system joined under an alias (``spec``: ``OTHER:SYSTEM=ALIAS``, module
    doc), and what was joined (``{"folder", "system", "alias", "manifest"}``).

    Raises:
        ValueError: a malformed spec, an alias already among the results, no answer of SYSTEM in OTHER, or a
            question whose ``baseline`` answer differs between the folders (not the same prompts: not paired).
    """
    folder, _, rest = spec.rpartition(":")
    system, _, alias = rest.partition("=")
    if not (folder and system and alias):
        raise ValueError("expected OTHER:SYSTEM=ALIAS")
    if any(r.system == alias for r in results):
        raise ValueError(f"{alias!r} is already a system of the folder")
    other = read_answers(Path(folder) / "answers.jsonl")
    mine = {r.question_uid: r.generated for r in results if r.system == baseline}
    for r in other:
        if r.system == baseline and r.question_uid in mine and mine[r.question_uid] != r.generated:
            raise ValueError(f"{baseline} answered {r.question_uid} otherwise in {folder}: not the same prompts")
    theirs = [dataclasses.replace(r, system=alias) for r in other if r.system == system]
    if not theirs:
        raise ValueError(f"{folder} has no answer of {system!r}")
    manifest = Path(folder) / "manifest.json"
    return [*results, *theirs], {
        "folder": folder,
        "system": system,
        "alias": alias,
        "manifest": json.loads(manifest.read_text(encoding="utf-8")) if manifest.is_file() else None,
    }


def with_tokens(results: list[QuestionResult], rerun: list[QuestionResult]) -> list[QuestionResult]:
    """``results`` with the token counts of ``rerun``'s answer to the same (system, question) (module doc);
    answers the rerun did not reach keep theirs.

    Raises:
        ValueError: a rerun answer whose generated text differs from the run's (the cache did not answer it).
    """
    by = {(r.system, r.question_uid): r for r in rerun}
    out = []
    for r in results:
        again = by.get((r.system, r.question_uid))
        if again is None:
            out.append(r)
            continue
        if again.generated != r.generated:
            raise ValueError(f"{r.system} answered {r.question_uid} otherwise in the rerun: not the same LLM cache")
        counts = {k: getattr(again, k) for k in ("llm_calls", "prompt_tokens", "completion_tokens")}
        out.append(dataclasses.replace(r, **counts))
    return out


if __name__ == "__main__":
    raise SystemExit(main())
