"""Put the agent readers' reports of one batch side by side, question by question, and write them as
``bench/results/<name>.json`` in the one results format (README table ``<name>``).

``finkg report --batch FILE --reader agent --out A`` and ``finkg report --batch FILE --reader reader-calc
--adapter ADAPTER --out B`` each write ``<id>.<reader>.json`` per question (:mod:`finkg.pipelines.reports`); this
reads them back, nothing else: per question the route, the status, the answer (cut at 80 characters) and the gate's
first reason, and per reader the counts of answered questions, answers whose every number the gate traced, LLM
calls, prompt tokens and seconds. A question missing from a folder is an error (exit status 2), so the two columns
always cover the same questions.

    python bench/report_readers.py eval-reports-agent-readers agent=/tmp/a reader-calc=/tmp/b --note "..."
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from finkg.eval.results import RESULTS_DIR, write_result


def read_folder(folder: Path, reader: str) -> dict[str, dict[str, Any]]:
    """The records ``<id>[.<system>].<reader>.json`` of a report folder by question id.

    Raises:
        ValueError: a record is not JSON or was written by another reader (the file is named).
    """
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob(f"*.{reader}.json")):
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not JSON ({exc})") from exc
        if rec.get("reader") != reader:
            raise ValueError(f"{path}: written by reader {rec.get('reader')!r}, not {reader!r}")
        out[str(rec["id"])] = rec
    return out


def question_row(rec: dict[str, Any]) -> dict[str, Any]:
    """One report as a row: route, status, answer (80 characters), the gate's first reason, calls, tokens."""
    calls = rec.get("calls", {}).get("agent", {})
    reasons = rec.get("gate", {}).get("reasons") or rec.get("reasons") or []
    return {
        "route": rec.get("route"),
        "status": rec.get("answer_status"),
        "answer": str(rec.get("answer", ""))[:80] if rec.get("answer_status") == "answered" else "",
        "reason": str(reasons[0])[:100] if reasons and rec.get("answer_status") != "answered" else "",
        "llm_calls": calls.get("llm_calls", 0),
        "prompt_tokens": calls.get("prompt_tokens", 0),
        "seconds": rec.get("seconds", 0.0),
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts over one reader's rows."""
    llm = [r for r in rows if r["route"] not in ("plan",)]
    return {
        "questions": len(rows),
        "answered": sum(r["status"] == "answered" for r in rows),
        "llm_route_questions": len(llm),
        "llm_route_answered": sum(r["status"] == "answered" for r in llm),
        "llm_calls": sum(r["llm_calls"] for r in rows),
        "prompt_tokens": sum(r["prompt_tokens"] for r in rows),
        "seconds": round(sum(r["seconds"] for r in rows), 1),
    }


def main(argv: list[str] | None = None) -> int:
    """Entry point (see the module doc); returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name", help="results file stem, e.g. eval-reports-agent-readers")
    ap.add_argument("folders", nargs="+", help="READER=FOLDER, the baseline first")
    ap.add_argument("--note", default="", help="run_note: where and how the reports were made")
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    args = ap.parse_args(argv)

    pairs = [f.split("=", 1) for f in args.folders]
    if any(len(p) != 2 for p in pairs):
        print("each folder is READER=FOLDER", file=sys.stderr)
        return 2
    try:
        got = {reader: read_folder(Path(folder), reader) for reader, folder in pairs}
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    ids = sorted(set().union(*(set(r) for r in got.values())))
    missing = [(reader, i) for reader, recs in got.items() for i in ids if i not in recs]
    if not ids or missing:
        print(f"no reports, or questions missing: {missing[:5]}", file=sys.stderr)
        return 2
    questions = [
        {"id": i, **{f"{reader}.{k}": v for reader in got for k, v in question_row(got[reader][i]).items()}}
        for i in ids
    ]
    readers = [
        {
            "reader": reader,
            "model_id": next(iter(recs.values())).get("model_id"),
            **summary([question_row(r) for r in recs.values()]),
        }
        for reader, recs in got.items()
    ]
    path = write_result(
        args.name,
        {"readers": {reader: folder for reader, folder in pairs}, "run_note": args.note},
        {f"{r['reader']}_answered": r["answered"] for r in readers},
        tables={"questions": questions, "readers": readers},
        directory=args.results_dir,
    )
    for r in readers:
        print(json.dumps(r))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
