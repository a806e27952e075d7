"""Agent runs in the graph: each run a ``(:AgentRun)``, each step a ``(:Step)`` linked to the facts and chunks it
used, so an answer's computation can be walked in Neo4j Browser.

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.2 (trajectories are what experience is distilled
from; each is graded against the gold answer) and section 4.4 (every numerical claim anchored to a tool's output).
The Cypher is :mod:`kg.cypher.agent`; writes are batched (one ``UNWIND $rows`` per batch of runs and of steps).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from generation.agent.loop import AgentAnswer
from generation.agent.results import ToolResult
from kg import BatchWriter, Graph, cypher


@dataclass(frozen=True)
class StepRecord:
    """One step as stored: ``tool`` (``llm``, ``gate``, or a tool's name), ``input`` and ``output`` (JSON-able),
    ``error`` (None when it succeeded), and the fact keys, chunk ids and observation ids it used."""

    tool: str
    input: Any
    output: Any
    error: str | None = None
    facts: tuple[str, ...] = ()
    chunks: tuple[str, ...] = ()
    observations: tuple[str, ...] = ()


@dataclass
class RunRecord:
    """One agent run as stored.

    Attributes:
        id: the run's id. question: its text. answer: the answer returned (None: none). verdict: ``passed``,
        ``failed`` (the gate rejected), ``not run`` (no answer reached the gate) or ``not in graph``. model: the
        LLM's id (``deterministic`` when none ran). kind: ``ask``, ``tatqa``, ``report``. as_of: the cutoff (ISO
        text or None). props: further properties (``status``, ``split``, ``context_id``, ``grade``...; scalars or
        lists of scalars). steps: in order.
    """

    id: str
    question: str
    answer: str | None
    verdict: str
    model: str
    kind: str = "ask"
    as_of: str | None = None
    props: dict[str, Any] = field(default_factory=dict)
    steps: list[StepRecord] = field(default_factory=list)
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))


def run_id(kind: str, question: str, *parts: str) -> str:
    """A run id: ``<kind>:<12 hex digits of sha256(question, parts)>`` (the same question and parts, the same id:
    a rerun replaces the run)."""
    h = hashlib.sha256("\0".join([question, *parts]).encode()).hexdigest()[:12]
    return f"{kind}:{h}"


def used_fact_keys(result: ToolResult) -> tuple[str, ...]:
    """The fact keys a tool call read: a ``fact_lookup``'s fact, a ``ratio``'s or ``measure``'s input facts, with the components of
    a derived fact, the facts behind a ``search_evidence`` call's items."""
    if result.tool == "search_evidence" and result.ok:
        return tuple(result.detail.get("used", {}).get("Fact", ()))
    facts: list[dict[str, Any]] = []
    if result.tool == "fact_lookup" and result.ok:
        facts = [result.detail]
    elif result.tool in ("ratio", "measure") and result.ok:
        facts = list(result.detail.get("facts", []))
    keys: list[str] = []
    for f in facts:
        keys.append(str(f.get("key")))
        keys += [str(c.get("key")) for _, c in f.get("components", [])]
    return tuple(dict.fromkeys(k for k in keys if k and k != "None"))


def tool_step(result: ToolResult) -> StepRecord:
    """A tool call as a step (its facts from :func:`used_fact_keys`; a ``search_evidence`` call's chunks and
    observations too)."""
    used = result.detail.get("used", {}) if result.tool == "search_evidence" and result.ok else {}
    return StepRecord(
        result.tool,
        result.args,
        result.as_dict(),
        result.error,
        used_fact_keys(result),
        tuple(used.get("Chunk", ())),
        tuple(used.get("Observation", ())),
    )


def steps_of(answer: AgentAnswer, chunks: Sequence[str] = ()) -> list[StepRecord]:
    """The program-of-thought loop's steps (:class:`generation.agent.loop.Step`) as records; the ``llm`` steps
    used the evidence ``chunks`` (ids) the prompt held."""
    out = []
    for s in answer.steps:
        tool = s.kind
        if s.kind == "tool" and isinstance(s.output, dict):
            tool = str(s.output.get("tool") or "calculate")
        out.append(StepRecord(tool, s.input, s.output, s.error, (), tuple(chunks) if s.kind == "llm" else ()))
    return out


def verdict_of(answer: AgentAnswer) -> str:
    """``passed``, ``failed`` (the gate rejected the last attempt) or ``not run`` (no attempt reached the gate)."""
    if answer.verdict is None:
        return "not run"
    return "passed" if answer.verdict.passed else "failed"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)


def write_runs(graph: Graph, runs: Iterable[RunRecord], batch_size: int = 200) -> int:
    """Write runs and their steps (a run written again loses its old steps), batched.

    Returns:
        the number of steps written.

    Raises:
        GraphError: Neo4j is unavailable.
    """
    runs = list(runs)
    writer = BatchWriter(graph, batch_size=batch_size)
    writer.run_batches(
        cypher.WRITE_AGENT_RUNS,
        [
            {
                "id": r.id,
                "props": {
                    **r.props,
                    "question": r.question,
                    "answer": r.answer,
                    "verdict": r.verdict,
                    "model": r.model,
                    "kind": r.kind,
                    "as_of": r.as_of,
                    "created_at": r.created_at,
                    "steps": len(r.steps),
                },
            }
            for r in runs
        ],
    )
    rows = [
        {
            "run": r.id,
            "id": f"{r.id}:{i}",
            "i": i,
            "tool": s.tool,
            "input": _text(s.input),
            "output": _text(s.output),
            "error": s.error,
            "facts": list(s.facts),
            "chunks": list(s.chunks),
            "observations": list(s.observations),
        }
        for r in runs
        for i, s in enumerate(r.steps)
    ]
    return writer.run_batches(cypher.WRITE_AGENT_STEPS, rows)


def read_run(graph: Graph, run: str) -> dict[str, Any] | None:
    """One run: ``{"run": {...properties}, "steps": [{i, tool, input, output, error, used: [fact keys, chunk
    ids]}, ...]}`` in step order, or None when there is no such run."""
    rows = graph.read(cypher.AGENT_RUN, {"id": run})
    if not rows or rows[0]["run"] is None:
        return None
    return {"run": rows[0]["run"], "steps": [s for s in rows[0]["steps"] if s is not None]}


def delete_runs(graph: Graph, ids: Sequence[str]) -> None:
    """Delete runs and their steps."""
    graph.write(cypher.DELETE_AGENT_RUNS, {"ids": list(ids)})
