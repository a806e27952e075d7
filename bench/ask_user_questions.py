"""Issue 44: analyst questions in users' own words (data/questions/sec-user.jsonl), two systems in one run on the
same items: the current answer engine of this checkout and the baseline, today's `finkg ask` at commit cd12569.

Loads the shipped 2009q3 quarter into the configured Neo4j when it is not there, then asks every question of the
chosen half (``--split test`` by default; ``--split dev`` to develop) of each system, each in a subprocess of its
own with the same settings and environment (``PYTHONPATH`` = that system's source tree: this checkout, or a git
worktree of the baseline commit at ``--base-dir``, made once with ``git worktree add``). Scores every answer:
**correct** (1 % relative tolerance; compare: the winner and the difference; rank: the order; an ``abstain`` gold:
correct when it abstains), **abstained** (no answer, or a status other than ``answered``), **wrong with the gate
passed** (answered, not correct), and seconds per question. Prints a table per system and per kind (Wilson 95 %
intervals) and writes ``bench/results/ask-user-questions-<split>.json`` (per-question rows and the summary).
Answers are checkpointed in ``--out`` (a killed run resumes there).

    python bench/ask_user_questions.py [--split test|dev] [--out DIR] [--systems baseline,current] [--limit N]
    python bench/ask_user_questions.py --split dev --questions data/questions/sec-user-dev2.jsonl \
        --name ask-user-questions-dev2     # more development questions (scripts/make_user_questions.py --seed 45)

Answer reading: the engine's ``SecAnswer`` may carry ``value`` (the number in the question's unit), ``unit`` and
``pick`` (companies chosen for compare and rank, EDGAR names, in order); they are used when present, else the
``answer`` text is parsed (numbers such as ``USD 1,234``, ``23.4%``, ``1.52``; a company by the case-insensitive
containment of its EDGAR name's first distinctive word).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from finkg.eval.results import write_result

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "data" / "questions" / "sec-user.jsonl"
QUARTER = ROOT / "data" / "sec-fsds" / "2009q3.zip"
RESULTS = ROOT / "bench" / "results"
BASE_COMMIT = "cd12569"
BASE_DIR = Path("/tmp/finkg-base")
TOLERANCE = 0.01  # relative
CATEGORIES = ("correct", "abstained", "wrong_gate_passed")

# The worker each system runs in its own process: questions in on stdin, answers out on stdout (JSON lines).
WORKER = r"""
import json, signal, sys, time
from finkg.api import open_graph
from finkg.config import load_settings
import generation.agent.ask as ask

timeout = float(sys.argv[1])

def alarm(signum, frame):
    raise TimeoutError(f"no answer in {timeout:g} s")

signal.signal(signal.SIGALRM, alarm)
graph = open_graph(load_settings())
print(json.dumps({"ready": ask.__file__}), flush=True)
for line in sys.stdin:
    q = json.loads(line)
    t0 = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        a = ask.answer_sec_question(graph, q["question"])
        row = {"status": a.status, "answer": a.answer, "value": getattr(a, "value", None),
               "unit": getattr(a, "unit", None), "pick": getattr(a, "pick", None),
               "reasons": [str(r) for r in (a.reasons or [])][:3]}
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        row = {"status": "error", "answer": None, "value": None, "unit": None, "pick": None,
               "reasons": [f"{type(exc).__name__}: {exc}"[:500]]}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    row["id"] = q["id"]
    row["seconds"] = time.perf_counter() - t0
    print(json.dumps(row, default=str), flush=True)
"""


# ---------------------------------------------------------------------------------------------------------------
# scoring (no Neo4j needed)
# ---------------------------------------------------------------------------------------------------------------
NUMBER = re.compile(r"(?<![\w.])(USD\s?|\$\s?)?([-−]?)\(?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\)?\s*(%|x\b|×)?", re.I)
MONTH = "January|February|March|April|May|June|July|August|September|October|November|December"
DATES = re.compile(
    rf"\b(?:{MONTH})\.?\s+\d{{1,2}},?\s+\d{{4}}|\b(?:{MONTH})\s+\d{{4}}|\b[QH][1-4]\s*(?:FY)?\s*\d{{4}}"
    r"|\b\d{4}-\d{2}-\d{2}\b|(?<![\d,.$])\b(?:19[5-9]\d|20[0-4]\d)\b(?![\d,.%]|\s*%)",
    re.I,
)
GENERIC = {"THE", "AND", "OF", "J", "P", "C", "H", "R", "W", "V", "F", "E", "I", "T", "A", "L", "M"}


def numbers(text: str) -> list[tuple[float, str]]:
    """Numbers in an answer text with their unit (``usd``, ``%``, ``x`` or ``""``), dates and years left out:
    ``USD 1,234`` -> ``(1234.0, "usd")``, ``(5.2)%`` -> ``(-5.2, "%")``."""
    out = []
    for m in NUMBER.finditer(DATES.sub(" ", text or "")):
        usd, sign, whole, frac, suffix = m.groups()
        v = float(whole.replace(",", "") + (frac or ""))
        raw = m.group(0).strip()
        if sign or ("(" in raw and ")" in raw):
            v = -v
        unit = "usd" if usd else (suffix or "").lower().replace("×", "x")
        out.append((v, unit))
    return out


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=1e-9)


def unit_of(answer: dict) -> str | None:
    """USD, % or x as far as the answer says (its ``unit``, else its text), else None."""
    u = answer.get("unit")
    if u:
        u = str(u).strip().lower()
        if u.startswith(("usd", "$", "dollar")):
            return "USD"
        if u in ("%", "percent", "pct", "points", "pp", "percentage points"):
            return "%"
        if u in ("x", "times", "ratio", "multiple"):
            return "x"
        return u
    text = answer.get("answer") or ""
    if re.search(r"\bUSD\b|\$", text):
        return "USD"
    nums = numbers(text)
    if nums and nums[0][1] in ("%", "x"):
        return nums[0][1]
    return None


def company_key(edgar: str) -> str:
    """The first distinctive word of an EDGAR name (``J P MORGAN CHASE & CO`` -> ``morgan``)."""
    words = re.sub(r"[^A-Z0-9&' ]", " ", edgar.upper()).split()
    for w in words:
        if w not in GENERIC and len(w.strip("'&")) >= 2:
            return w.lower()
    return words[0].lower() if words else edgar.lower()


def mentioned_at(text: str, edgar: str) -> int:
    """Where the company's key word first appears in the text (case-insensitive), -1 when nowhere."""
    m = re.search(rf"(?<![a-z0-9]){re.escape(company_key(edgar))}", (text or "").lower())
    return m.start() if m else -1


def same_company(picked: str, edgar: str) -> bool:
    return picked.strip().upper() == edgar.strip().upper() or company_key(picked) == company_key(edgar)


def number_of(answer: dict, want: str) -> float | None:
    """The answer's number: ``value`` when present, else the text's first number in the unit wanted (``USD 1``,
    ``1%``, ``1x``), else its first number without a unit."""
    if answer.get("value") is not None:
        try:
            return float(answer["value"])
        except (TypeError, ValueError):
            return None
    nums = numbers(answer.get("answer") or "")
    for unit in (want.lower(), ""):
        hits = [v for v, u in nums if u == unit]
        if hits:
            return hits[0]
    return None


def answered(answer: dict) -> bool:
    return answer.get("status") == "answered" and answer.get("answer") is not None


def judge(q: dict, answer: dict) -> tuple[str, bool]:
    """``(category, correct)`` of one answer to one question; category is one of :data:`CATEGORIES`."""
    gold = q["gold"]
    if gold == "abstain":
        return ("correct", True) if not answered(answer) else ("wrong_gate_passed", False)
    if not answered(answer):
        return "abstained", False
    ok = is_correct(q, answer)
    return ("correct" if ok else "wrong_gate_passed"), ok


def is_correct(q: dict, answer: dict) -> bool:
    gold, kind = q["gold"], q["kind"]
    text = answer.get("answer") or ""
    if kind in ("value", "ratio", "change", "difference"):
        want = gold["unit"]
        got_unit = unit_of(answer)
        if want == "USD" and got_unit in ("%", "x"):
            return False
        if want in ("%", "x") and got_unit == "USD":
            return False  # a ratio question answered with an amount
        v = number_of(answer, want)
        if v is None:
            return False
        if kind == "difference":
            return close(abs(v), abs(gold["value"]))
        return close(v, gold["value"])
    if kind == "compare":
        winner = gold["winner"]
        loser = next(c["name"] for c in q["companies"] if c["cik"] != gold["winner_cik"])
        pick = answer.get("pick")
        if pick:
            if not same_company(str(pick[0]), winner):
                return False
        else:
            w, lo = mentioned_at(text, winner), mentioned_at(text, loser)
            if w < 0 or (0 <= lo < w):
                return False
        if gold["unit"] == "points" and unit_of(answer) == "USD":
            return False
        if answer.get("value") is not None:
            return close(float(answer["value"]), gold["difference"])
        return any(close(abs(v), gold["difference"]) for v, _ in numbers(text))
    if kind == "rank":
        order = gold["order"]
        pick = answer.get("pick")
        if pick:
            return len(pick) == len(order) and all(same_company(str(p), o) for p, o in zip(pick, order, strict=True))
        at = [mentioned_at(text, o) for o in order]
        return all(x >= 0 for x in at) and at == sorted(at)
    raise ValueError(f"unknown kind {kind!r}")


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson 95 % interval of k successes in n, as fractions."""
    if n == 0:
        return 0.0, 0.0
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def summarize(rows: list[dict]) -> dict[str, Any]:
    n = len(rows)
    out: dict[str, Any] = {"n": n}
    for cat in CATEGORIES:
        k = sum(r["category"] == cat for r in rows)
        lo, hi = wilson(k, n)
        out[cat] = {"count": k, "rate": k / n if n else 0.0, "wilson95": [lo, hi]}
    out["errors"] = sum(r["status"] == "error" for r in rows)
    secs = [r["seconds"] for r in rows if r.get("seconds") is not None]
    out["median_seconds"] = statistics.median(secs) if secs else None
    return out


# ---------------------------------------------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------------------------------------------
def load_questions(split: str, path: Path = QUESTIONS) -> list[dict]:
    lines = path.read_text(encoding="utf-8").splitlines()
    qs = [json.loads(x) for x in lines if x.strip() and not x.startswith("#")]
    return [q for q in qs if q["split"] == split]


def ensure_loaded() -> None:
    """The shipped quarter in the configured Neo4j (as tests/test_agent_ask.py's ``loaded`` fixture does)."""
    from finkg.api import open_graph
    from finkg.config import load_settings
    from finkg.pipelines.sec import ingest_sec
    from ingest.runs import host, process_alive
    from retrieval.facts.fact_map import list_filings

    settings = load_settings()
    with open_graph(settings) as graph:
        while len(list_filings(graph, source=QUARTER.name)) != 435:
            # another process loading the quarter now (its run is `running` and its process alive): wait for it
            live = [
                r
                for r in graph.read(
                    "MATCH (r:IngestRun {status: 'running'}) WHERE r.source ENDS WITH $name "
                    "RETURN r.pid AS pid, r.proc_start AS started, r.host AS host",
                    {"name": QUARTER.name},
                )
                if r["host"] == host() and r["pid"] and process_alive(int(r["pid"]), r["started"])
            ]
            if not live:
                ingest_sec(graph, settings, [QUARTER])
                break
            print(f"waiting for the ingest of {QUARTER.name} by process {live[0]['pid']}", flush=True)
            time.sleep(30)


def ensure_base(base_dir: Path, commit: str) -> None:
    if (base_dir / "generation" / "agent" / "ask.py").exists():
        return
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base_dir), commit], check=True)


def read_checkpoint(path: Path) -> dict[str, dict]:
    done: dict[str, dict] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a kill
            done[row["id"]] = row
    return done


def run_system(name: str, source: Path, qs: list[dict], out: Path, timeout: float, progress: Any) -> dict[str, dict]:
    """Every question not yet answered by ``name`` (checkpointed in ``out/<name>.jsonl``), in one subprocess."""
    ckpt = out / f"{name}.jsonl"
    done = read_checkpoint(ckpt)
    todo = [q for q in qs if q["id"] not in done]
    task = progress.add_task(name, total=len(qs), completed=len(qs) - len(todo))
    if not todo:
        return done
    env = dict(os.environ)
    env["PYTHONPATH"] = str(source) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    with (
        (out / f"{name}.stderr").open("a", encoding="utf-8") as err,
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(timeout)],
            cwd=source,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            bufsize=1,
        ) as proc,
    ):
        assert proc.stdin is not None and proc.stdout is not None

        def feed() -> None:
            assert proc.stdin is not None
            for q in todo:
                proc.stdin.write(json.dumps({"id": q["id"], "question": q["question"]}) + "\n")
            proc.stdin.close()

        threading.Thread(target=feed, daemon=True).start()
        with ckpt.open("a", encoding="utf-8") as f:
            for line in proc.stdout:
                row = json.loads(line)
                if "ready" in row:
                    (out / f"{name}.source").write_text(row["ready"] + "\n", encoding="utf-8")
                    continue
                f.write(json.dumps(row) + "\n")
                f.flush()
                done[row["id"]] = row
                progress.advance(task)
        if proc.wait() != 0:
            raise SystemExit(f"{name}: the worker exited with {proc.returncode}; see {out / (name + '.stderr')}")
    return done


def main() -> None:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.table import Table
    from rich.text import Text

    class Rate(ProgressColumn):
        def render(self, task: Any) -> Text:
            return Text(f"{task.speed:.2f} q/s" if task.speed else "- q/s")

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=("test", "dev"), default="test")
    ap.add_argument("--out", type=Path, default=None, help="run folder (checkpoints); default out/ask-user-<split>")
    ap.add_argument("--systems", default="baseline,current", help="comma-separated: baseline, current")
    ap.add_argument("--base-dir", type=Path, default=BASE_DIR, help=f"git worktree of {BASE_COMMIT}")
    ap.add_argument("--limit", type=int, default=0, help="only the first N questions (a smoke run)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per question before it counts as error")
    ap.add_argument("--results-dir", type=Path, default=RESULTS)
    ap.add_argument("--questions", type=Path, default=QUESTIONS, help="question file (default: the shipped set)")
    ap.add_argument("--name", default=None, help="results name (default ask-user-questions-<split>)")
    args = ap.parse_args()
    console = Console()
    qs = load_questions(args.split, args.questions.resolve())
    if args.limit:
        qs = qs[: args.limit]
    out = args.out or ROOT / "out" / f"ask-user-{args.split}"
    out.mkdir(parents=True, exist_ok=True)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    sources = {"current": ROOT, "baseline": args.base_dir}
    if "baseline" in systems:
        ensure_base(args.base_dir, BASE_COMMIT)
    console.print(f"{len(qs)} {args.split} questions; systems {', '.join(systems)}; run folder {out}")
    ensure_loaded()
    answers: dict[str, dict[str, dict]] = {}
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        Rate(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as progress:
        for s in systems:
            answers[s] = run_system(s, sources[s], qs, out, args.timeout, progress)

    rows: list[dict] = []
    for s in systems:
        for q in qs:
            a = answers[s].get(q["id"])
            if a is None:
                continue
            cat, ok = judge(q, a)
            rows.append(
                {
                    "id": q["id"],
                    "kind": q["kind"],
                    "system": s,
                    "status": a.get("status"),
                    "answer": a.get("answer"),
                    "value": a.get("value"),
                    "correct": ok,
                    "category": cat,
                    "seconds": a.get("seconds"),
                    "reasons": a.get("reasons"),
                }
            )
    summary = {s: summarize([r for r in rows if r["system"] == s]) for s in systems}
    kinds = sorted({q["kind"] for q in qs})
    by_kind = {
        s: {k: summarize([r for r in rows if r["system"] == s and r["kind"] == k]) for k in kinds} for s in systems
    }

    def pct(c: dict) -> str:
        lo, hi = c["wilson95"]
        return f"{c['count']} ({100 * c['rate']:.1f} % [{100 * lo:.0f}, {100 * hi:.0f}])"

    table = Table(title=f"ask: analyst questions in users' words, {args.split} half ({len(qs)} questions)")
    for col in ("system", "n", "correct", "abstained", "wrong, gate passed", "errors", "median s"):
        table.add_column(col, justify="right" if col not in ("system",) else "left")
    for s in systems:
        m = summary[s]
        med = f"{m['median_seconds']:.2f}" if m["median_seconds"] is not None else "-"
        table.add_row(s, str(m["n"]), *(pct(m[c]) for c in CATEGORIES), str(m["errors"]), med)
    console.print(table)
    kt = Table(title="by kind: correct / abstained / wrong with the gate passed")
    kt.add_column("kind")
    for s in systems:
        kt.add_column(s, justify="right")
    for k in kinds:
        cells = []
        for s in systems:
            m = by_kind[s][k]
            cells.append(
                f"{m['correct']['count']}/{m['abstained']['count']}/{m['wrong_gate_passed']['count']} of {m['n']}"
            )
        kt.add_row(k, *cells)
    console.print(kt)

    def head(path: Path) -> str:
        r = subprocess.run(["git", "-C", str(path), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()  # fmt: skip
        return r.stdout.strip() + ("+uncommitted" if dirty else "")

    systems_run = {
        s: {"source": str(sources[s]), "commit": head(sources[s]) if (sources[s] / ".git").exists() else None}
        for s in systems
    }
    label = {"baseline": f"today's finkg ask ({BASE_COMMIT})", "current": "the answer engine (this checkout)"}

    def cell(m: dict[str, Any], key: str) -> str:
        lo, hi = m[key]["wilson95"]
        return f"{m[key]['count']} ({100 * m[key]['rate']:.1f} % [{100 * lo:.0f}, {100 * hi:.0f}])"

    split_label = args.split if args.questions.resolve() == QUESTIONS else f"{args.split} ({args.questions.name})"
    system_rows = [
        {
            "split": split_label,
            "system": label.get(s, s),
            "n": summary[s]["n"],
            "correct": cell(summary[s], "correct"),
            "abstained": cell(summary[s], "abstained"),
            "wrong, gate passed": cell(summary[s], "wrong_gate_passed"),
            "median s": "n/a" if summary[s]["median_seconds"] is None else f"{summary[s]['median_seconds']:.2f}",
        }
        for s in systems
    ]

    def counts(m: dict[str, Any]) -> str:
        return f"{m['correct']['count']}/{m['abstained']['count']}/{m['wrong_gate_passed']['count']} of {m['n']}"

    kind_rows = [{"kind": k, **{label.get(s, s): counts(by_kind[s][k]) for s in systems}} for k in kinds]
    parameters = {
        "split": args.split,
        "questions": str(
            args.questions.resolve().relative_to(ROOT)
            if args.questions.resolve().is_relative_to(ROOT)
            else args.questions
        ),
        "n": len(qs),
        "tolerance": TOLERANCE,
        "systems": systems_run,
        "cores": os.cpu_count(),
        **({"limit": args.limit} if args.limit else {}),
    }
    path = write_result(
        args.name or f"ask-user-questions-{args.split}",
        parameters,
        {"summary": summary, "by_kind": by_kind},
        tables={"systems": system_rows, "kinds": kind_rows, "rows": rows},
        directory=args.results_dir,
    )
    console.print(f"wrote {path}")


if __name__ == "__main__":
    main()
