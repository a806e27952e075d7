"""``finkg eval agent``: issue 17's benchmark of the analyst agent in one command: finkg's own SEC questions, the
TAT-QA evaluation half, and the targets.

Source: ../shared/seeds/001_70c6b08e66b7be55.txt (FinAcumen: deterministic tools, the answer gate, experience
memory; section 5 measures each against the same questions), and issue 17's "How it is measured":

- **SEC questions** (``data/questions/sec-agent.jsonl``: a ratio, a growth between a filing's two periods, "which
  of two concepts / companies is larger") over the SEC quarter in the graph, answered by the agent's deterministic
  path (:func:`generation.agent.ask.answer_sec_question`). Each gold answer is computed here from the quarter's
  ``num.txt`` with pandas (:func:`sec_gold`, from the SEC's Financial Statement Data Sets documentation: the
  whole-entity fact, no segments, no co-registrant, USD), never through the graph or the agent: what is scored is
  whether the graph path gets the filing's number.
- **TAT-QA** (the evaluation half, a stratified sample; :func:`finkg.eval.tatqa.evaluate`): the agent, two-stage
  (today's reader), the agent with experience memory and the shuffled-memory control on the same questions; the
  paired differences against the agent.
- **Targets** (:func:`targets`): TAT-QA EM >= 40 and arithmetic EM >= 35; memory above the agent by >= 3 EM with
  the shuffled control not showing it; SEC >= 90 % exact; no returned SEC answer the gate did not pass; median
  <= 15 s per question.
"""

from __future__ import annotations

import json
import re
import statistics
import time
import zipfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from generation.agent.ask import answer_sec_question
from kg import Graph
from kg.errors import EvaluationError

SYSTEMS = ("agent", "two-stage", "agent-memory", "agent-shuffled")
"""The TAT-QA systems, the agent first (the differences are against it)."""
SEC_KINDS = ("current-ratio", "net-margin", "working-capital", "revenue-growth", "larger-concept", "larger-company")


class SecQuestionError(EvaluationError):
    """A malformed SEC question file or gold record; the message names the file and line."""


def read_sec_questions(path: Path) -> list[dict[str, Any]]:
    """The questions of a JSON-lines file (``#`` lines are comments): ``{"id", "kind", "question", "gold": {...}}``.

    Raises:
        SecQuestionError: a line that is not JSON, lacks a field or has an unknown kind (file and line named).
    """
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            q = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SecQuestionError(f"{path}:{n}: not JSON ({exc.msg})") from None
        missing = [k for k in ("id", "kind", "question", "gold") if k not in q]
        if missing:
            raise SecQuestionError(f"{path}:{n}: missing {', '.join(missing)}")
        if q["kind"] not in SEC_KINDS:
            raise SecQuestionError(f"{path}:{n}: unknown kind {q['kind']!r} (one of {', '.join(SEC_KINDS)})")
        out.append(q)
    return out


def read_num(quarter: Path) -> pd.DataFrame:
    """The whole-entity USD facts of a Financial Statement Data Sets quarter's ``num.txt`` (no segments, no
    co-registrant, a value), ``value`` as float; the other columns as text.

    Raises:
        SecQuestionError: the zip has no ``num.txt``.
    """
    with zipfile.ZipFile(quarter) as z:
        if "num.txt" not in z.namelist():
            raise SecQuestionError(f"{quarter}: no num.txt (a Financial Statement Data Sets quarter has one)")
        with z.open("num.txt") as f:
            df = pd.read_csv(f, sep="\t", dtype=str, keep_default_na=False, encoding="latin-1")
    df = df[(df.segments == "") & (df.coreg == "") & (df.uom == "USD") & (df.value != "")].copy()
    df["value"] = df["value"].astype(float)
    return df


def _value(num: pd.DataFrame, adsh: str, tag: str, ddate: str, qtrs: int) -> float:
    hit = num[(num.adsh == adsh) & (num.tag == tag) & (num.ddate == ddate) & (num.qtrs == str(qtrs))]
    if len(hit) != 1:
        raise SecQuestionError(f"num.txt has {len(hit)} facts for {adsh} {tag} {ddate} qtrs={qtrs}, not 1")
    return float(hit.value.iloc[0])


def sec_gold(q: Mapping[str, Any], num: pd.DataFrame) -> tuple[str, float | str]:
    """``(kind of answer, gold)`` of a question: ``number`` (a ratio to 2 decimals, a percent as its number, a
    difference in USD) or ``name`` (the larger concept's label or company's name), from ``num.txt`` and the
    question's ``gold`` record (filing, tags, period ends, spans).

    Raises:
        SecQuestionError: the record does not name exactly one fact of ``num.txt``.
    """
    g, kind = q["gold"], q["kind"]
    try:
        if kind in ("current-ratio", "net-margin"):
            top = _value(num, g["adsh"], g["numerator"], g["ddate"], g["qtrs"])
            bottom = _value(num, g["adsh"], g["denominator"], g["ddate"], g["qtrs"])
            return "number", round(top / bottom * (100 if kind == "net-margin" else 1), 2)
        if kind == "working-capital":
            a = _value(num, g["adsh"], g["minuend"], g["ddate"], 0)
            return "number", a - _value(num, g["adsh"], g["subtrahend"], g["ddate"], 0)
        if kind == "revenue-growth":
            now = _value(num, g["adsh"], g["tag"], g["ddate"], 1)
            before = _value(num, g["adsh"], g["tag"], g["ddate_before"], 1)
            return "number", round((now - before) / abs(before) * 100, 2)
        if kind == "larger-concept":
            a, b = (_value(num, g["adsh"], t, g["ddate"], 0) for t in (g["a"], g["b"]))
            return "name", g["labels"][g["a"] if a > b else g["b"]]
        sizes = [(_value(num, c["adsh"], g["tag"], c["ddate"], 0), c["name"]) for c in g["companies"]]
        return "name", max(sizes)[1]
    except KeyError as exc:
        raise SecQuestionError(f"question {q['id']}: its gold record lacks {exc}") from None


def exact(answer: str | None, kind: str, gold: float | str) -> bool:
    """Whether an answer equals the gold: a name case-blind, a number within half a cent of it (the answers are
    rounded to 2 decimals)."""
    if answer is None:
        return False
    if kind == "name":
        return answer.strip().lower() == str(gold).strip().lower()
    digits = re.sub(r"[^\d.\-]", "", answer)
    try:
        return abs(float(digits) - float(gold)) <= 0.005 + 1e-9 * abs(float(gold))
    except ValueError:
        return False


def run_sec(
    graph: Graph,
    questions: Sequence[Mapping[str, Any]],
    num: pd.DataFrame,
    advance: Callable[[int], None] = lambda _n: None,
) -> list[dict[str, Any]]:
    """Answer each question with the agent's deterministic path and score it: rows ``{"id", "kind", "question",
    "answer", "status", "gold", "exact", "gate_passed", "seconds"}`` (``gate_passed`` None when no answer was
    returned).

    Raises:
        SecQuestionError: a gold record names no single fact. GraphError: Neo4j is unavailable.
    """
    rows = []
    for q in questions:
        kind, gold = sec_gold(q, num)
        t0 = time.perf_counter()
        got = answer_sec_question(graph, q["question"])
        seconds = time.perf_counter() - t0
        passed = None if got.answer is None else bool(got.verdict is not None and got.verdict.passed)
        rows.append(
            {
                "id": q["id"],
                "kind": q["kind"],
                "question": q["question"],
                "answer": got.answer,
                "status": got.status,
                "gold": gold,
                "exact": exact(got.answer, kind, gold),
                "gate_passed": passed,
                "seconds": round(seconds, 3),
            }
        )
        advance(1)
    return rows


def _row(rows: Sequence[Mapping[str, Any]], system: str, kind: str = "all") -> Mapping[str, Any] | None:
    return next((r for r in rows if r["system"] == system and r["answer_type"] == kind and r["questions"]), None)


def _diff(diffs: Sequence[Mapping[str, Any]], system: str) -> Mapping[str, Any] | None:
    return next((d for d in diffs if d["system"] == system and d["answer_type"] == "all"), None)


def targets(
    tatqa_rows: Sequence[Mapping[str, Any]],
    differences: Sequence[Mapping[str, Any]],
    sec_rows: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """Issue 17's targets against what was measured: rows ``{"target", "measured", "met"}`` (``met`` None when the
    part was not run); differences are :meth:`finkg.eval.tatqa.TatqaResults.differences` against the agent."""
    out: list[dict[str, Any]] = []

    def add(target: str, measured: str, met: bool | None) -> None:
        out.append({"target": target, "measured": measured, "met": met})

    agent, arith = _row(tatqa_rows, "agent"), _row(tatqa_rows, "agent", "arithmetic")
    add(
        "TAT-QA EM >= 40 (agent)",
        f"{agent['em']:.1f} [{agent['em_ci_low']:.1f}, {agent['em_ci_high']:.1f}] on {agent['questions']}"
        if agent
        else "not run",
        agent["em"] >= 40 if agent else None,
    )
    add(
        "TAT-QA arithmetic EM >= 35 (agent)",
        f"{arith['em']:.1f} on {arith['questions']}" if arith else "not run",
        arith["em"] >= 35 if arith else None,
    )
    memory, shuffled = _diff(differences, "agent-memory"), _diff(differences, "agent-shuffled")
    add(
        "memory - agent >= +3 EM, shuffled control below +3",
        (
            f"memory {memory['em_diff']:+.1f} [{memory['ci_low']:+.1f}, {memory['ci_high']:+.1f}], shuffled "
            f"{shuffled['em_diff']:+.1f} [{shuffled['ci_low']:+.1f}, {shuffled['ci_high']:+.1f}]"
        )
        if memory and shuffled
        else "not run",
        memory["em_diff"] >= 3 and shuffled["em_diff"] < 3 if memory and shuffled else None,
    )
    right = sum(r["exact"] for r in sec_rows)
    add(
        "SEC questions >= 90 % exact",
        f"{right} of {len(sec_rows)} ({100 * right / len(sec_rows):.1f} %)" if sec_rows else "not run",
        right / len(sec_rows) >= 0.9 if sec_rows else None,
    )
    returned = [r for r in sec_rows if r["answer"] is not None]
    ungated = sum(not r["gate_passed"] for r in returned)
    add(
        "0 returned SEC answers the gate did not pass",
        f"{ungated} of {len(returned)} returned" if sec_rows else "not run",
        ungated == 0 if sec_rows else None,
    )
    seconds = agent.get("median_seconds") if agent else None
    add(
        "median <= 15 s per TAT-QA question (agent)",
        f"{seconds:.1f} s" if seconds is not None else "not run",
        seconds <= 15 if seconds is not None else None,
    )
    return out


def sec_summary(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per kind of SEC question and ``all``: ``{"kind", "questions", "exact", "exact_pct", "median_ms"}``."""
    out = []
    for kind in ("all", *SEC_KINDS):
        group = [r for r in rows if kind == "all" or r["kind"] == kind]
        if not group:
            continue
        right = sum(r["exact"] for r in group)
        out.append(
            {
                "kind": kind,
                "questions": len(group),
                "exact": right,
                "exact_pct": round(100 * right / len(group), 1),
                "median_ms": round(1000 * statistics.median(r["seconds"] for r in group), 1),
            }
        )
    return out
