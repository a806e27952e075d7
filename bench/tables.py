"""Regenerate the benchmark and evaluation tables of README.md and the docs site from ``bench/results/*.json``.

Every generated table sits between two markers in README.md or a page of ``docs/``::

    <!-- table:NAME -->
    ...generated...
    <!-- /table:NAME -->

and NAME is a key of :data:`TABLES`, or ``sources``: the page's one provenance table (each results file the
page's other tables read, once, with its date, git commit, machine and command), so a table itself ends with
a one-line pointer to its file instead of a repeated footer. ``python bench/tables.py`` rewrites what is
between each pair of markers in every target (README.md and ``docs/**/*.md``) from the results files (the
one results format of :mod:`finkg.eval.results`) and leaves everything else as it is; running it twice
changes nothing. ``python bench/tables.py --check`` changes nothing and exits 1 when a table in any target
differs from what the results files give (it names the files and tables), so CI can tell a page that was
edited by hand or not regenerated after a rerun.

A results file says how it was measured (date, commit, machine, command). A file whose figures were typed in
rather than written by its command (it has ``provenance``: the four once imported from an earlier README) is
refused (exit 2): rerun its command or retire it and the tables that read it. Commands recorded with the paths of the machine they ran on show the public data
sets as ``$TATQA_DEV`` (TAT-QA's ``tatqa_dataset_dev.json``) and ``$MARKET`` (the stocknet prices and tweets
with the S&P 500 index); the results files keep the commands as run.

    python bench/tables.py                 # rewrite README.md and docs/**/*.md
    python bench/tables.py --check         # exit 1 if any of them is out of date
    python bench/tables.py --readme R.md --results-dir DIR   # one file only

Errors (exit 2, the message names the file): a marker without its closing marker or naming no known
table, a results file a table needs that does not exist or is not JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
RESULTS = ROOT / "bench" / "results"
SOURCES = "sources"  # the per-page provenance table (not in TABLES: it renders from the page's other tables)

OPEN = re.compile(r"<!-- table:(?P<name>[\w.-]+) -->")
BLOCK = re.compile(
    r"(?P<open><!-- table:(?P<name>[\w.-]+) -->\n)(?P<body>.*?)(?P<close><!-- /table:(?P=name) -->)", re.S
)


class TablesError(Exception):
    """A README marker or a results file the tables cannot be generated from (the message names it)."""


@dataclass(frozen=True)
class Cell:
    """A rendered cell: ``text``, and ``value`` (a number) when the cell takes part in bolding the best."""

    text: str
    value: float | None = None


def num(value: Any, fmt: str) -> Cell:
    """A number formatted with ``fmt`` (``"n/a"`` for None); its value for bolding is the rounded one."""
    if value is None or (isinstance(value, float) and value != value):
        return Cell("n/a")
    text = format(value, fmt)
    try:
        return Cell(text, float(text.replace(",", "")))
    except ValueError:
        return Cell(text)


@dataclass(frozen=True)
class Column:
    """A table column: its header (str, or a function of the rows), the cell of a row, and whether the
    best (largest) value of the column is bold (ties all bold; cells without a value never)."""

    header: str | Callable[[list[dict[str, Any]]], str]
    cell: Callable[[dict[str, Any]], Cell | str]
    bold_max: bool = False


@dataclass(frozen=True)
class Table:
    """A README table: the results files it reads (``bench/results/<name>.json``), how to get its rows
    from them, and its columns."""

    results: Sequence[str]
    rows: Callable[[dict[str, dict[str, Any]]], list[dict[str, Any]]]
    columns: Sequence[Column] = field(default_factory=list)
    provenance_per_row: bool = False


# --------------------------------------------------------------------------- provenance lines


def short_sha(sha: str) -> str:
    """``76ba5ba`` (``-dirty`` kept) from a full sha."""
    base, dirty = (sha[:-6], "-dirty") if sha.endswith("-dirty") else (sha, "")
    return base[:7] + dirty


def machine_text(machine: dict[str, Any]) -> str:
    """``2 cores, 15.6 GiB RAM, Intel(R) Xeon(R) ...`` (``machine not recorded: NOTE`` when unknown)."""
    if not machine.get("cores"):
        return "machine not recorded" + (f": {machine['note']}" if machine.get("note") else "")
    parts = [f"{machine['cores']} cores"]
    if machine.get("ram_gib"):
        parts.append(f"{machine['ram_gib']} GiB RAM")
    if machine.get("cpu"):
        parts.append(machine["cpu"])
    if machine.get("device"):
        parts.append(f"GPU: {machine['device']}")
    return ", ".join(parts)


PUBLIC_PATHS = (
    (re.compile(r"(?:\.\./|/work/)shared/data/tatqa/tatqa_dataset_dev\.json"), "$TATQA_DEV"),
    (re.compile(r"(?:\.\./|/work/)shared/data/sec-fsds/"), "data/sec-fsds/"),
    (re.compile(r"(?:\.\./|/work/)shared/data/market"), "$MARKET"),
)


def public_command(command: str) -> str:
    """``command`` with the paths of the machine it ran on replaced by the names the docs use for the public
    data sets (``$TATQA_DEV``, ``$MARKET``; the shipped ``data/sec-fsds/``)."""
    for pattern, name in PUBLIC_PATHS:
        command = pattern.sub(name, command)
    return command


def provenance_line(record: dict[str, Any]) -> str:
    """The line under a table: the results file it comes from, and when it was measured."""
    return f"_From `bench/results/{record['name']}.json`, measured {str(record.get('date', '?'))[:10]}._"


def source_row(record: dict[str, Any]) -> dict[str, str]:
    """A row of a page's sources table: file, how it was made, date, commit, machine and command."""
    return {
        "file": f"`bench/results/{record['name']}.json`",
        "kind": "measured",
        "date": str(record.get("date", "?"))[:10],
        "commit": f"`{short_sha(record.get('git_sha', '?'))}`",
        "machine": machine_text(record.get("machine", {})),
        "command": f"`{public_command(str(record.get('command', '?')))}`",
    }


# --------------------------------------------------------------------------- the tables


def _single(name: str, key: str) -> Callable[[dict[str, dict[str, Any]]], list[dict[str, Any]]]:
    return lambda records: list(records[name].get("tables", {}).get(key, []))


# the columns of a `finkg eval reports` results file (its `systems` table)
REPORT_COLUMNS = [
    Column("system", lambda r: str(r["system"])),
    Column("ROUGE-L F1", lambda r: num(r.get("rouge_l_f1"), ".3f"), bold_max=True),
    Column("BERTScore F1", lambda r: num(r.get("bertscore_f1"), ".3f"), bold_max=True),
    Column("judge (conclusion)", lambda r: num(r.get("judge_conclusion"), ".2f"), bold_max=True),
    Column("judge (text)", lambda r: num(r.get("judge_text"), ".2f"), bold_max=True),
    Column(
        "numbers verified / unverified",
        lambda r: f"{r.get('numbers verified', 'n/a')} / {r.get('numbers unverified', 'n/a')}",
    ),
]


def _reports_like(name: str) -> Table:
    """A table of `finkg eval reports` results (bench/results/<name>.json): :data:`REPORT_COLUMNS`."""
    return Table([name], _single(name, "systems"), REPORT_COLUMNS)


REPORTS_READER = _reports_like("eval-reports-reader")
REPORTS_READER_E3 = _reports_like("eval-reports-reader-e3")
REPORTS_READER_QWEN = _reports_like("eval-reports-reader-qwen")

TATQA_NAMES = {
    "two-stage": "two-stage (BM25 over the context's paragraphs)",
    "agent-memory": "agent + experience memory",
    "agent-shuffled": "agent + shuffled memory (control)",
    "agent-memory-program": "agent + memory, solutions as programs (with values)",
    "agent-shuffled-program": "agent + shuffled memory, solutions as programs (control)",
    "agent-memory-expression": "agent + memory, solutions as expressions (no values)",
    "agent-shuffled-expression": "agent + shuffled memory, solutions as expressions (control)",
    "single-stage": "single-stage",
    "facts-only": "facts only (no passages)",
    "no-retrieval": "no retrieval",
    "whole-context": "whole context",
    "reader": "reader (seed 004 prompt), base",
    "reader+lora": "reader, LoRA-tuned",
    "reader-calc": "reader + calculator, base",
    "reader-calc+lora": "reader + calculator, LoRA-tuned",
    "reader-form": "reader, base, answer-form prompt",
    "reader-calc-form": "reader + calculator, base, answer-form prompt",
    "reader-form+lora": "reader, LoRA-tuned, answer-form prompt",
    "reader-calc-form+lora": "reader + calculator, LoRA-tuned, answer-form prompt",
    "agent+lora": "agent, LoRA-tuned reader",
    "engine-without-forms": "engine without the forms rule (count tool + reader-calc, LoRA)",
    "engine": "answer engine (count tool + forms rule + reader-calc, LoRA)",
    "engine-untuned": "answer engine with the untuned model (control)",
}


def _tatqa_rows(name: str, key: str = "rows") -> Callable[[dict[str, dict[str, Any]]], list[dict[str, Any]]]:
    """One row per system from the record ``name``'s :meth:`finkg.eval.tatqa.TatqaResults.rows` (system x answer
    type), kept in its table ``key`` (``rows`` for ``finkg eval tatqa``, ``tatqa`` for ``finkg eval agent``)."""

    def rows(records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for r in records[name].get("tables", {}).get(key, []):
            out.setdefault(r["system"], {"system": r["system"]})[r["answer_type"]] = r
        return list(out.values())

    return rows


def _tatqa_header(kind: str, metric: str) -> Callable[[list[dict[str, Any]]], str]:
    def header(rows: list[dict[str, Any]]) -> str:
        counts = sorted({r[kind]["questions"] for r in rows if kind in r})
        return f"{kind} {metric} ({', '.join(str(c) for c in counts)})" if counts else f"{kind} {metric}"

    return header


def _tatqa_ci(kind: str, metric: str) -> Callable[[dict[str, Any]], Cell]:
    def cell(r: dict[str, Any]) -> Cell:
        row = r.get(kind, {})
        low, high = row.get(f"{metric}_ci_low"), row.get(f"{metric}_ci_high")
        if row.get(metric) is None:
            return Cell("n/a")
        text = f"{row[metric]:.1f} [{low:.1f}, {high:.1f}]" if low is not None else f"{row[metric]:.1f}"
        return Cell(text, row[metric])

    return cell


def tatqa_ci_table(name: str, tokens: bool = False, key: str = "rows") -> Table:
    """EM and F1 with 95 % bootstrap intervals per system, from the record ``name`` of ``finkg eval tatqa`` (or
    ``finkg eval agent``: ``key`` ``tatqa``); ``tokens``: also the median LLM calls and prompt tokens per answer
    (recorded since stop 34)."""
    columns = [
        Column("system", lambda r: TATQA_NAMES.get(r["system"], r["system"])),
        Column(_tatqa_header("all", "EM"), _tatqa_ci("all", "em")),
        Column("F1", _tatqa_ci("all", "f1")),
        Column(_tatqa_header("arithmetic", "EM"), _tatqa_ci("arithmetic", "em")),
        Column(_tatqa_header("span", "EM"), _tatqa_ci("span", "em")),
        Column("answer errors", lambda r: num(r.get("all", {}).get("errors"), "d")),
        Column("median s / answer", lambda r: num(r.get("all", {}).get("median_seconds"), ".1f")),
    ]
    if tokens:
        columns += [
            Column("median LLM calls / answer", lambda r: num(r.get("all", {}).get("median_llm_calls"), ".1f")),
            Column(
                "median prompt tokens / answer", lambda r: num(r.get("all", {}).get("median_prompt_tokens"), ",.0f")
            ),
        ]
    return Table([name], _tatqa_rows(name, key), columns)


def _tatqa_differences(name: str, types: tuple[str, ...] = ()) -> Table:
    """Paired EM differences (95 % paired bootstrap) of each system against the first, from the record ``name``
    (only the answer types ``types`` when given)."""

    def rows(records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        diffs = records[name].get("tables", {}).get("differences", [])
        return [d for d in diffs if not types or d["answer_type"] in types]

    return Table(
        [name],
        rows,
        [
            Column("system", lambda r: TATQA_NAMES.get(r["system"], r["system"])),
            Column("against", lambda r: TATQA_NAMES.get(r["baseline"], r["baseline"])),
            Column("answer type", lambda r: str(r["answer_type"])),
            Column("questions", lambda r: num(r.get("questions"), "d")),
            Column(
                "EM difference [95 %]", lambda r: Cell(f"{r['em_diff']:+.1f} [{r['ci_low']:+.1f}, {r['ci_high']:+.1f}]")
            ),
        ],
    )


# the analyst agent against whole-context on a stratified sample (issue 17), with 95 % bootstrap intervals
TATQA_AGENT = tatqa_ci_table("eval-tatqa-agent")
# the agent with the experience memory and its shuffled control (issue 17; seed 001, section 4.2)
TATQA_MEMORY = tatqa_ci_table("eval-tatqa-memory")
TATQA_MEMORY_DIFF = _tatqa_differences("eval-tatqa-memory")
# the quoting agent, its memory and the shuffled control on 300 questions of the evaluation half (issue 17)
TATQA_300 = tatqa_ci_table("eval-tatqa-300")
TATQA_300_DIFF = _tatqa_differences("eval-tatqa-300")
# the two-stage reader (seed 004) against the agent, one run on the first 162 of the same 300 (stop 34)
TATQA_300_TWO_STAGE = tatqa_ci_table("eval-tatqa-300-two-stage", tokens=True)
TATQA_300_TWO_STAGE_DIFF = _tatqa_differences("eval-tatqa-300-two-stage")
# the base and the LoRA-tuned reader on the same questions, alone and inside the agent (issue 18; seed 004)
TATQA_READER = tatqa_ci_table("eval-tatqa-reader")
TATQA_READER_DIFF = _tatqa_differences("eval-tatqa-reader")
# the same, with the three-epoch adapter (seed 004's default), the reader alone
TATQA_READER_E3 = tatqa_ci_table("eval-tatqa-reader-e3")
TATQA_READER_E3_DIFF = _tatqa_differences("eval-tatqa-reader-e3")
TATQA_AGENT_SMOLLM2_E3 = tatqa_ci_table("eval-tatqa-agent-smollm2-e3")
TATQA_AGENT_SMOLLM2_E3_DIFF = _tatqa_differences("eval-tatqa-agent-smollm2-e3")
# Qwen2.5-Coder-1.5B, base and LoRA-tuned on a GPU (the device tool), the reader alone on the device
TATQA_READER_QWEN = tatqa_ci_table("eval-tatqa-reader-qwen-gpu")
TATQA_READER_QWEN_DIFF = _tatqa_differences("eval-tatqa-reader-qwen-gpu")
# the same adapter inside the analyst agent, served by llama.cpp here (GGUF LoRA on the Q4_K_M base)
TATQA_AGENT_QWEN_LORA = tatqa_ci_table("eval-tatqa-agent-qwen-lora")
TATQA_AGENT_QWEN_LORA_DIFF = _tatqa_differences("eval-tatqa-agent-qwen-lora")
# the tuned Qwen reader with and without the calculator on all 300, served by llama.cpp here; and against the agent
TATQA_READER_CALC = tatqa_ci_table("eval-tatqa-reader-calc-qwen-lora")
TATQA_READER_CALC_DIFF = _tatqa_differences("eval-tatqa-reader-calc-qwen-lora")
TATQA_READER_CALC_VS_AGENT = _tatqa_differences("eval-tatqa-reader-calc-vs-agent")
# the answer engine on the frozen test questions (150 of the evaluation half outside the development sample)
TATQA_TEST_ENGINE = tatqa_ci_table("eval-tatqa-test-engine", tokens=True)
# the engine with the table-forms rule against the engine without it, on the same frozen test questions
TATQA_TEST_ENGINE_FORMS = tatqa_ci_table("eval-tatqa-test-engine-forms", tokens=True)
TATQA_TEST_ENGINE_FORMS_DIFF = _tatqa_differences("eval-tatqa-test-engine-forms", ("all", "arithmetic", "span"))
# the untuned control of the engine on the test questions its (stopped) run answered
TATQA_TEST_ENGINE_CONTROL = tatqa_ci_table("eval-tatqa-test-engine-control", tokens=True)
TATQA_TEST_ENGINE_CONTROL_DIFF = _tatqa_differences("eval-tatqa-test-engine-control", ("all",))
# the second frozen test list, scored once (stop 50)
TATQA_TEST2_ENGINE = tatqa_ci_table("eval-tatqa-test2-engine", tokens=True)
# the analyst agent (tuned model) beside the engine on the second list's questions its stopped run answered
TATQA_TEST2_AGENT = tatqa_ci_table("eval-tatqa-test2-agent", tokens=True)
TATQA_TEST2_AGENT_DIFF = _tatqa_differences("eval-tatqa-test2-agent", ("all", "arithmetic", "span"))
TATQA_TEST2_MEMORY = tatqa_ci_table("eval-tatqa-test2-memory", tokens=True)
TATQA_TEST2_MEMORY_DIFF = _tatqa_differences("eval-tatqa-test2-memory", ("all", "arithmetic"))


def _page_questions(name: str) -> Table:
    """The page reader's counts on one part of the FinanceBench page questions (``bench/page_questions.py``)."""
    return Table(
        [name],
        lambda records: [r for r in records[name].get("tables", {}).get("page-questions", []) if r["questions"]],
        [
            Column(key, lambda r, key=key: str(r[key]))
            for key in ("system", "questions", "correct", "abstained", "wrong", "median_s")
        ],
    )


PAGE_QUESTIONS_GATED = _page_questions("page-questions-gated")
PAGE_QUESTIONS_DEV_EXTRA = _page_questions("page-questions-dev-extra")
PAGE_QUESTIONS_DEV_GATED = _page_questions("page-questions-dev-gated")
# the table-forms rule on the training half and the development sample (never the test questions)
TATQA_FORMS = Table(
    ["tatqa-forms"],
    lambda records: records["tatqa-forms"].get("tables", {}).get("tatqa-forms", []),
    [Column(key, lambda r, key=key: str(r[key])) for key in ("part", "form", "questions", "read", "answered", "em")],
)
# Qwen2.5-Coder-1.5B base and LoRA-tuned in one run, served by llama.cpp here (Q4_K_M + the shipped GGUF LoRA)
TATQA_READER_QWEN_CPU = tatqa_ci_table("eval-tatqa-reader-qwen-cpu")
TATQA_READER_QWEN_CPU_DIFF = _tatqa_differences("eval-tatqa-reader-qwen-cpu")
TATQA_READER_FORM = tatqa_ci_table("eval-tatqa-reader-form")
TATQA_READER_FORM_DIFF = _tatqa_differences("eval-tatqa-reader-form", ("all", "arithmetic"))
TATQA_READER_FORM_VS_TUNED = _tatqa_differences("eval-tatqa-reader-form-vs-tuned", ("all", "span", "arithmetic"))
# the memory whose entries carry a worked solution, on the arithmetic questions of the same 300 (stop 37)
TATQA_MEMORY_PROGRAMS = tatqa_ci_table("eval-tatqa-memory-programs", tokens=True)
TATQA_MEMORY_PROGRAMS_DIFF = _tatqa_differences("eval-tatqa-memory-programs", ("arithmetic",))

# the same stratum with a 150-question bank (stop 38)
TATQA_MEMORY_150 = tatqa_ci_table("eval-tatqa-memory-150", tokens=True)
TATQA_MEMORY_150_DIFF = _tatqa_differences("eval-tatqa-memory-150", ("arithmetic",))


def _memory_use(name: str) -> Table:
    """A memory run's answers that retrieved an experience and the questions won / lost against the agent
    (``tables.memory_use`` of ``bench/tatqa_partial.py``)."""
    return Table(
        [name],
        _single(name, "memory_use"),
        [
            Column("system", lambda r: TATQA_NAMES.get(r["system"], r["system"])),
            Column("answers", lambda r: num(r["answers"], "d")),
            Column("retrieved an experience", lambda r: num(r["retrieved"], "d")),
            Column("won against the agent", lambda r: num(r["won"], "d")),
            Column("lost", lambda r: num(r["lost"], "d")),
            Column(
                "won / lost where nothing was retrieved",
                lambda r: f"{r['won'] - r['won_retrieved']} / {r['lost'] - r['lost_retrieved']}",
            ),
        ],
    )


def _route_differences(name: str) -> Table:
    """Paired EM differences on each of the analyst agent's routes, with the questions won and lost
    (``tables.route_differences`` of ``bench/tatqa_partial.py --by-route``)."""
    return Table(
        [name],
        _single(name, "route_differences"),
        [
            Column("system", lambda r: TATQA_NAMES.get(r["system"], r["system"])),
            Column("against", lambda r: TATQA_NAMES.get(r["baseline"], r["baseline"])),
            Column("agent route", lambda r: str(r["route"])),
            Column("questions", lambda r: num(r["questions"], "d")),
            Column(
                "EM difference [95 %]", lambda r: Cell(f"{r['em_diff']:+.1f} [{r['ci_low']:+.1f}, {r['ci_high']:+.1f}]")
            ),
            Column("won", lambda r: num(r["won"], "d")),
            Column("lost", lambda r: num(r["lost"], "d")),
        ],
    )


TATQA_MEMORY_150_USE = _memory_use("eval-tatqa-memory-150")
# the same bank, each entry's worked solution shown as its expression over operand names, no values (stop 39)
TATQA_MEMORY_EXPRESSION = tatqa_ci_table("eval-tatqa-memory-expression", tokens=True)
TATQA_MEMORY_EXPRESSION_DIFF = _tatqa_differences("eval-tatqa-memory-expression", ("arithmetic",))
TATQA_MEMORY_EXPRESSION_USE = _memory_use("eval-tatqa-memory-expression")
# every question of the sample that reads the memory: the 128 arithmetic and the 17 others on the program route
TATQA_MEMORY_STRATUM = tatqa_ci_table("eval-tatqa-memory-stratum", tokens=True)
TATQA_MEMORY_STRATUM_DIFF = _tatqa_differences("eval-tatqa-memory-stratum", ("all",))
# both forms on the questions both runs answered (bench/tatqa_partial.py --join: the agent's answers identical)
TATQA_MEMORY_FORMS = tatqa_ci_table("eval-tatqa-memory-forms")
TATQA_MEMORY_FORMS_DIFF = _tatqa_differences("eval-tatqa-memory-forms", ("arithmetic",))
# the memory on both LLM routes (program of thought and quoting), all 300 questions of the sample (stop 40)
TATQA_MEMORY_ROUTES = tatqa_ci_table("eval-tatqa-memory-routes", tokens=True)
TATQA_MEMORY_ROUTES_DIFF = _tatqa_differences("eval-tatqa-memory-routes", ("all",))
TATQA_MEMORY_ROUTES_BY_ROUTE = _route_differences("eval-tatqa-memory-routes")
TATQA_MEMORY_ROUTES_USE = _memory_use("eval-tatqa-memory-routes")


# the memory's hit rate against the bank's size (seed 001, Figure 4(a)): bench/memory_hit_rate.py
def _hit_rate(name: str) -> Table:
    """The hit rate at six thresholds every 50 learned questions, for the whole training half and at the stored
    bank's size (the picture has every snapshot), from the record ``name`` of ``bench/memory_hit_rate.py``."""

    def rows(records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        record = records[name]
        snapshots = record.get("tables", {}).get("snapshots", [])
        stored = (record.get("figures", {}).get("stored_bank") or {}).get("learned_questions")
        last = snapshots[-1]["entries"] if snapshots else None
        return [r for r in snapshots if r["entries"] % 50 == 0 or r["entries"] in (last, stored)]

    return Table(
        [name],
        rows,
        [
            Column("training questions learned", lambda r: num(r["entries"], "d")),
            *(
                Column(f"tau {t}", lambda r, t=t: num(100 * r[f"tau_{t}"], ".1f"))
                for t in ("0.55", "0.60", "0.65", "0.70", "0.75", "0.80")
            ),
        ],
    )


MEMORY_HIT_RATE = _hit_rate("memory-hit-rate")
MEMORY_HIT_RATE_SPAN = _hit_rate("memory-hit-rate-span")

# `finkg eval agent`: the issue-17 benchmark in one command (TAT-QA systems, SEC questions, the targets)
EVAL_AGENT_TATQA = tatqa_ci_table("eval-agent", tokens=True, key="tatqa")
EVAL_AGENT_DIFF = _tatqa_differences("eval-agent", ("all", "arithmetic"))
EVAL_AGENT_TARGETS = Table(
    ["eval-agent"],
    lambda records: records["eval-agent"].get("tables", {}).get("targets", []),
    [
        Column("target (issue 17)", lambda r: str(r["target"])),
        Column("measured", lambda r: str(r["measured"])),
        Column("met", lambda r: {True: "yes", False: "**no**", None: "not run"}[r["met"]]),
    ],
)
EVAL_AGENT_SEC = Table(
    ["eval-agent"],
    lambda records: records["eval-agent"].get("tables", {}).get("sec_summary", []),
    [
        Column("SEC question kind", lambda r: str(r["kind"])),
        Column("questions", lambda r: num(r.get("questions"), "d")),
        Column("exact", lambda r: num(r.get("exact"), "d")),
        Column("exact %", lambda r: num(r.get("exact_pct"), ".1f")),
        Column("median ms / question", lambda r: num(r.get("median_ms"), ".1f")),
    ],
)

ASK_USER_SPLITS = (
    "ask-user-questions-test",
    "ask-user-questions-dev",
    "ask-user-questions-dev2",
    "ask-user-questions-dev3",
    "ask-user-questions-2009q3-dev-seeds",
)
ASK_USER = Table(
    list(ASK_USER_SPLITS),
    lambda records: [row for name in ASK_USER_SPLITS for row in records[name].get("tables", {}).get("systems", [])],
    [
        Column(key, lambda r, key=key: str(r[key]))
        for key in ("split", "system", "n", "correct", "abstained", "wrong, gate passed", "median s")
    ],
)
ASK_USER_KINDS = Table(
    ["ask-user-questions-test"],
    lambda records: records["ask-user-questions-test"].get("tables", {}).get("kinds", []),
    [
        Column("kind (test half)", lambda r: str(r["kind"])),
        Column(
            "today's finkg ask: correct/abstained/wrong", lambda r: str(r.get("today's finkg ask (cd12569)", "n/a"))
        ),
        Column(
            "answer engine: correct/abstained/wrong", lambda r: str(r.get("the answer engine (this checkout)", "n/a"))
        ),
    ],
)

ASK_DEV_PROBES = (
    ("ask-dev-exhaustive", "value and ratio measures, one plain phrasing"),
    ("ask-dev-phrasings", "ratio measures, three drawn phrasings each"),
    ("ask-dev-elements", "33 line items beyond the catalog"),
    ("ask-dev-exhaustive-2010q2", "value and ratio measures, one plain phrasing"),
    ("ask-dev-phrasings-2010q2", "ratio measures, three drawn phrasings each"),
    ("ask-dev-elements-2010q2", "33 line items beyond the catalog"),
    ("ask-dev-exhaustive-2010q1", "value and ratio measures, one plain phrasing"),
    ("ask-dev-exhaustive-annual-2010q1", "10-Ks: value and ratio measures over the fiscal year, one plain phrasing"),
    ("ask-dev-phrasings-annual-2010q1", "10-Ks: ratio measures, three drawn phrasings each"),
    ("ask-dev-exhaustive-more", "twelve catalog measures the question sets never ask, one plain phrasing"),
    ("ask-dev-phrasings-more", "nine of them (before DIO, pretax and EBITDA margin), three drawn phrasings each"),
    ("ask-dev-exhaustive-more-2010q2", "nine catalog measures the question sets never ask, one plain phrasing"),
    ("ask-dev-exhaustive-more-2010q1", "nine catalog measures the question sets never ask, one plain phrasing"),
    ("ask-dev-exhaustive-more-annual-2010q1", "10-Ks: the same nine over the fiscal year, one plain phrasing"),
    ("ask-dev-ttm-2010q2", "trailing twelve months (10-Ks of 2010q1 in the graph too), drawn phrasings"),
    ("ask-dev-span-change", "how much balances changed over the year to date, drawn phrasings"),
    ("ask-dev-span-change-2010q2", "how much balances changed over the year to date, drawn phrasings"),
    ("ask-dev-elements-phrasings", "33 line items, one drawn phrasing each (a fresh draw, seed 34)"),
    ("ask-dev-operations", "sums of two companies' amounts and yes/no thresholds, drawn names and measures"),
)


def _described_rows(
    described: Sequence[tuple[str, str]], rows_of: Callable[[dict[str, Any]], list[dict[str, Any]]]
) -> Callable[[dict[str, dict[str, Any]]], list[dict[str, Any]]]:
    """The rows of results files named in ``described`` (``(name, what)``), each of ``rows_of(record)`` with the
    file's description (``what``) and commit (``sha``)."""

    def rows(records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {**row, "what": what, "sha": records[name].get("git_sha", "?")}
            for name, what in described
            for row in rows_of(records[name])
        ]

    return rows


def _probe_figures(record: dict[str, Any]) -> list[dict[str, Any]]:
    quarter = str(record.get("parameters", {}).get("quarter", "2009q3.zip")).removesuffix(".zip")
    return [{"quarter": quarter, **record.get("figures", {})}]


def _peer_rows(records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (engine, kind) of the peer probes (a company's peers; industries, no company named): this checkout's
    engine and the one before peers (ca81aa1), on the same items."""
    out = []
    for name, engine in (
        ("ask-dev-peers", "with peers"),
        ("ask-dev-peers-baseline", "before peers (ca81aa1)"),
        ("ask-dev-peers-industries", "with peers"),
        ("ask-dev-peers-industries-baseline", "before peers (ca81aa1)"),
    ):
        rec = records[name]
        for row in rec["tables"]["kinds"]:
            out.append({**row, "engine": engine, "sha": rec.get("git_sha", "?")})
        figures = rec["figures"]
        out.append({"kind": "all", "questions": figures["questions"], "correct": figures["correct"],
                    "abstained": figures["abstained"], "wrong, gate passed": figures["wrong_gate_passed"],
                    "engine": engine, "sha": rec.get("git_sha", "?")})  # fmt: skip
    return out


ASK_DEV_PEERS = Table(
    ["ask-dev-peers", "ask-dev-peers-baseline", "ask-dev-peers-industries", "ask-dev-peers-industries-baseline"],
    _peer_rows,
    [
        *(
            Column(key, lambda r, key=key: str(r[key]))
            for key in ("engine", "kind", "questions", "correct", "abstained", "wrong, gate passed")
        ),
        Column("commit", lambda r: f"`{str(r['sha'])[:7]}`"),
    ],
)


def _absent_rows(records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (engine, how the company was named) of the probe of companies the graph does not hold
    (``bench/ask_dev_absent.py``): this checkout's engine and the one before the ticker table's other companies
    (5ac5372), on the same items. Correct: not answered; wrong: answered with a graph company's figure."""
    out = []
    for name, engine in (("ask-dev-absent", "now"), ("ask-dev-absent-baseline", "before (5ac5372)")):
        rec = records[name]
        rows = [*rec["tables"]["by how named"]]
        figures = rec["figures"]
        rows.append({"kind": "all", "questions": figures["questions"], "correct": figures["correct"],
                     "wrong, gate passed": figures["wrong_gate_passed"]})  # fmt: skip
        out += [{**r, "engine": engine, "sha": rec.get("git_sha", "?")} for r in rows]
    return out


ASK_DEV_ABSENT = Table(
    ["ask-dev-absent", "ask-dev-absent-baseline"],
    _absent_rows,
    [
        Column("engine", lambda r: str(r["engine"])),
        Column("company named by", lambda r: str(r["kind"])),
        Column("questions", lambda r: str(r["questions"])),
        Column("refused or asked back (correct)", lambda r: str(r["correct"])),
        Column("answered (wrong, gate passed)", lambda r: str(r["wrong, gate passed"])),
        Column("commit", lambda r: f"`{str(r['sha'])[:7]}`"),
    ],
)


ASK_DEV = Table(
    [name for name, _ in ASK_DEV_PROBES],
    _described_rows(ASK_DEV_PROBES, _probe_figures),
    [
        *(
            Column(header, lambda r, key=key: str(r[key]))
            for header, key in (
                ("quarter (development half)", "quarter"),
                ("questions asked", "what"),
                ("questions", "questions"),
                ("companies", "companies"),
                ("correct", "correct"),
                ("abstained", "abstained"),
                ("wrong, gate passed", "wrong_gate_passed"),
            )
        ),
        Column("median s", lambda r: num(r.get("median_seconds"), ".2f")),
        Column("commit", lambda r: f"`{short_sha(str(r['sha']))}`"),
    ],
)

ASK_USER_NEW_QUARTERS = (
    ("ask-user-questions-2010q2-dev", "2010q2, seeds 53-60, first run"),
    ("ask-user-questions-2010q2-dev-rerun", "2010q2, seeds 53-60 again, after the fix of its wrong answer"),
    ("ask-user-questions-2010q2-fresh", "2010q2, seeds 61-68, drawn after the fixes, unread before the run"),
    ("ask-user-questions-2010q1-dev", "2010q1, seeds 80-87, unread before the run"),
)


ASK_USER_NEW_QUARTER = Table(
    [name for name, _ in ASK_USER_NEW_QUARTERS],
    _described_rows(ASK_USER_NEW_QUARTERS, lambda record: record.get("tables", {}).get("systems", [])),
    [
        Column("new quarter (development half), questions in users' words", lambda r: str(r["what"])),
        *(Column(key, lambda r, key=key: str(r[key])) for key in ("n", "correct", "abstained", "wrong, gate passed")),
        Column("median s", lambda r: str(r["median s"])),
        Column("commit", lambda r: f"`{short_sha(str(r['sha']))}`"),
    ],
)

DEMO_REPORTS = Table(
    ["demo-reports"],
    lambda records: records["demo-reports"].get("tables", {}).get("demo-reports", []),
    [
        Column("report", lambda r: str(r["report"])),
        Column("companies", lambda r: str(r["companies"])),
        Column("published: numbers verified", lambda r: str(r["published_verified"])),
        Column("published: unverified", lambda r: str(r["published_unverified"])),
        Column("published: unsupported claims", lambda r: str(r["published_unsupported"])),
        Column("model's answer: unverified", lambda r: str(r["model_unverified"])),
        Column("model's answer: unsupported claims", lambda r: str(r["model_unsupported"])),
        Column("claims withheld", lambda r: str(r["withheld_claims"])),
        Column("knowledge about another subject", lambda r: str(r["off_subject_knowledge"])),
    ],
)


def _ci(row: dict[str, Any], key: str, fmt: str = ".1f", unit: str = "%") -> Cell:
    """``mean unit [low, high]`` from ``<key>_mean``, ``<key>_ci_low``, ``<key>_ci_high``."""
    mean = row.get(f"{key}_mean")
    if mean is None:
        return Cell(str(row.get(f"{key}_text", "n/a")))
    low, high = row.get(f"{key}_ci_low"), row.get(f"{key}_ci_high")
    text = f"{format(mean, fmt)}{unit}"
    if low is not None and high is not None:
        text += f" [{format(low, fmt)}, {format(high, fmt)}]"
    return Cell(text, float(format(mean, fmt)))


def _memo_eval_rows(records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """finkg's systems from ``memo-eval.json``, then seed 003's reported figures (Tables 6 and 11)."""
    tables = records["memo-eval"].get("tables", {})
    rows = [dict(r, source="finkg, independent gold") for r in tables.get("systems", [])]
    for r in tables.get("seed_003", []):
        rows.append(
            {
                "system": r["system"],
                "source": "seed 003, Tables 6 and 11 (fixture)",
                "filings": "300 fixture memos",
                "exact_rate_mean": 100 * r["exact"],
                "completeness_text": "n/a (tasks with all tags)",
                "ms_mean": r["ms"],
            }
        )
    return rows


def _misses(row: dict[str, Any]) -> str:
    if "miss_wrong_fact" not in row:
        return ""
    return " / ".join(str(row.get(f"miss_{k}", 0)) for k in ("wrong_fact", "rounding", "miscopied", "missing", "extra"))


MEMO_EVAL = Table(
    ["memo-eval"],
    _memo_eval_rows,
    [
        Column("system", lambda r: str(r["system"])),
        Column("source", lambda r: str(r["source"])),
        Column("filings", lambda r: f"{r['filings']} ({r['memos']})" if "memos" in r else str(r["filings"])),
        Column("exact-number rate [95% CI]", lambda r: _ci(r, "exact_rate")),
        Column("completeness [95% CI]", lambda r: _ci(r, "completeness")),
        Column("ms / memo [95% CI]", lambda r: _ci(r, "ms", ".2f", "")),
        Column("misses: wrong fact / rounding / miscopied / missing / extra", _misses),
    ],
)


def _paired(row: dict[str, Any]) -> str:
    """A paired difference ``+0.016 [+0.011, +0.022]`` from ``mean``, ``ci_low``, ``ci_high`` (3 places)."""
    return f"{row['mean']:+.3f} [{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]"


TRAIN_EMBEDDER = Table(
    ["train-embedder"],
    _single("train-embedder", "differences"),
    [
        Column("system", lambda r: str(r["system"])),
        Column("metric", lambda r: str(r["metric"])),
        Column("MiniLM (base)", lambda r: num(r.get("base"), ".3f")),
        Column("tuned", lambda r: num(r.get("tuned"), ".3f")),
        Column("tuned - base [95% paired CI]", _paired),
    ],
)


RERANK_NAMES = {
    "hybrid": "hybrid, every question (no reranking)",
    "hybrid (rerank sample)": "hybrid order (the reranked questions)",
    "hybrid+rerank": "hybrid top-20 reranked by the cross-encoder",
    "hybrid+shuffled": "the same top-20 in a random order (control)",
}


def _interval(row: dict[str, Any], key: str) -> Cell:
    """``value [low, high]`` (3 places) from ``key``, ``<key>_ci_low``, ``<key>_ci_high``; ``ndcg@10``'s
    interval fields are plain ``ci_low`` and ``ci_high``."""
    value = row.get(key)
    if value is None:
        return Cell("n/a")
    prefix = "" if key == "ndcg@10" else f"{key}_"
    low, high = row.get(f"{prefix}ci_low"), row.get(f"{prefix}ci_high")
    text = f"{value:.3f}" + (f" [{low:.3f}, {high:.3f}]" if low is not None and high is not None else "")
    return Cell(text, round(float(value), 3))


TRAIN_RERANKER = Table(
    ["train-reranker"],
    _single("train-reranker", "systems"),
    [
        Column("order of the passages", lambda r: RERANK_NAMES.get(r["system"], r["system"])),
        Column("questions", lambda r: num(r.get("queries"), ",")),
        Column("NDCG@10 [95% CI]", lambda r: _interval(r, "ndcg@10")),
        Column("Recall@10 [95% CI]", lambda r: _interval(r, "recall@10")),
        Column("MRR@10 [95% CI]", lambda r: _interval(r, "mrr@10")),
    ],
)

TRAIN_RERANKER_DIFF = Table(
    ["train-reranker"],
    _single("train-reranker", "differences"),
    [
        Column("reranked against", lambda r: RERANK_NAMES.get(r["baseline"], r["baseline"])),
        Column("metric", lambda r: str(r["metric"])),
        Column("against", lambda r: num(r.get("baseline_value"), ".3f")),
        Column("reranked", lambda r: num(r.get("system_value"), ".3f")),
        Column("difference [95% paired CI]", _paired),
    ],
)


def _memo_causes_rows(records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Structured+Verifier's misses from ``memo-eval.json`` (``tables.misses``), grouped by cause."""
    from finkg.eval.memo_accuracy import top_causes_of_records  # only this table needs finkg

    return top_causes_of_records(records["memo-eval"].get("tables", {}).get("misses", []), "structured+verifier")


MEMO_CAUSES = Table(
    ["memo-eval"],
    _memo_causes_rows,
    [
        Column("cause", lambda r: str(r["cause"])),
        Column("items", lambda r: str(r["items"])),
        Column("detail", lambda r: str(r["detail"])),
        Column("misses", lambda r: str(r["count"])),
        Column("filings", lambda r: str(r["filings"])),
        Column("gold tags", lambda r: str(r["gold_tags"])),
        Column("example filing", lambda r: f"`{r['example']}`"),
    ],
)


def _reader_rows(records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**rec.get("machine", {}), **rec.get("parameters", {}), **rec.get("figures", {})} for rec in records.values()
    ]


TRAIN_READER = Table(
    ["train-reader-e1", "train-reader", "train-reader-e3-shipped", "train-reader-qwen-gpu"],
    _reader_rows,
    [
        Column("machine", lambda r: str(r.get("device") or f"{r.get('cores', '?')} CPU cores")),
        Column("epochs asked", lambda r: num(r.get("epochs"), "g")),
        Column("base", lambda r: Path(str(r.get("base_model", "?"))).name),
        Column("LoRA", lambda r: f"r {r.get('r')}, alpha {r.get('alpha')}, {'/'.join(r.get('target_modules', []))}"),
        Column("lr, batch", lambda r: f"{r.get('learning_rate')}, {r.get('batch_size')}"),
        Column("examples", lambda r: str(r.get("examples"))),
        Column("steps run / one epoch", lambda r: f"{r.get('steps')} / {r.get('steps_per_epoch')}"),
        Column("epochs done", lambda r: num(r.get("epochs_done"), ".3f")),
        Column("loss first -> last", lambda r: f"{r.get('loss_first')} -> {r.get('loss_last')}"),
        Column("s / step", lambda r: num(r.get("seconds_per_step"), ".2f")),
    ],
)


# The benchmarks: one line each, (what was measured, the baseline measured in the same run, the ratio).
def _f(figures: dict[str, Any], key: str, fmt: str) -> str:
    value = figures.get(key)
    return "n/a" if value is None else format(value, fmt)


def _pct(value: float | None) -> str:
    """A fraction as a percentage with one decimal (``"n/a"`` for None)."""
    return "n/a" if value is None else f"{100 * value:.1f} %"


HEADLINES: dict[str, Callable[[dict[str, Any], dict[str, Any]], tuple[str, str, str]]] = {
    "write_throughput": lambda f, p: (
        f"batched writes: {_f(f, 'batched_all_rows_per_s', ',.0f')} rows/s "
        f"({p.get('nodes', 0):,} SEC facts, {p.get('rels', 0):,} relationships)",
        f"one transaction per row: {_f(f, 'row_all_rows_per_s', ',.0f')} rows/s "
        f"({p.get('row_fraction', 1):.0%} sample)",
        f"{_f(f, 'ratio_all_rows_x', '.1f')}x",
    ),
    "ingest_and_memos": lambda f, p: (
        f"{p.get('quarter')} ingest end to end {_f(f, 'ingest_total_s', '.1f')} s; "
        f"Structured+Verifier {_f(f, 'memos_per_s', ',.0f')} memos/s",
        f"pandas parsing num.txt alone {_f(f, 'pandas_parse_s', '.1f')} s; fact-map reads alone",
        f"{_f(f, 'ratio_ingest_over_pandas_x', '.1f')}x; {_f(f, 'ratio_memo_over_read_x', '.1f')}x",
    ),
    "llm_throughput": lambda f, p: (
        f"{f.get('best_server_path')}: {_f(f, 'best_server_tokens_per_s', '.2f')} tokens/s; finkg llama-cpp "
        f"{_f(f, 'client_tokens_per_s', '.2f')} ({p.get('model')}, {p.get('prompts')} extraction prompts x 2)",
        f"raw llama.cpp, one call at a time: {_f(f, 'raw_tokens_per_s', '.2f')} tokens/s",
        f"{_f(f, 'ratio_best_server_over_raw_x', '.2f')}x (client overhead {_f(f, 'client_overhead_pct', '+.1f')} %)",
    ),
    "two_servers": lambda f, p: (
        f"base + LoRA llama-servers side by side, {_f(f, 'best_threads_per_server', 'd')} thread(s) each (the "
        f"shared_threads default here: {_f(f, 'shared_threads', 'd')}): {_f(f, 'best_tokens_per_s', '.2f')} tokens/s "
        f"({p.get('model')}, {p.get('prompts')} prompts x 2 servers x 2 rounds)",
        f"[llm] threads = {p.get('configured_threads')} each: {_f(f, 'configured_tokens_per_s', '.2f')} tokens/s",
        f"{_f(f, 'ratio_best_over_configured_x', '.2f')}x",
    ),
    "extraction": lambda f, p: (
        f"`finkg extract` of {p.get('statements')} FOMC statements ({p.get('backend')}, {p.get('in_flight')} in "
        f"flight, filter on, no verification): {_f(f, 'wall_min', '.1f')} min, {_f(f, 'llm_calls', ',')} calls, "
        f"{_f(f, 'finkg_tokens_per_s', '.1f')} tokens/s; P / R {_f(f, 'gold_precision', '.3f')} / "
        f"{_f(f, 'gold_recall', '.3f')} on the {len(p.get('gold_statements') or [])} gold statements",
        f"raw llama.cpp one call at a time ({p.get('baseline_calls')} of the prompts): "
        f"{_f(f, 'raw_tokens_per_s', '.1f')} tokens/s, all prompts about {_f(f, 'raw_all_prompts_min', '.0f')} min",
        f"{_f(f, 'ratio_raw_over_finkg_x', '.2f')}x",
    ),
    "clustering": lambda f, p: (
        f"{_f(f, 'largest_n', ',')} entities clustered in {_f(f, 'largest_cluster_s', '.1f')} s, "
        f"peak RSS {_f(f, 'largest_peak_rss_mb', ',.0f')} MB",
        f"exact clustering at {_f(f, 'exact_n', ',')}: ARI {_f(f, 'ari_vs_exact', '.3f')}",
        f"exact / kNN-constrained seconds {_f(f, 'ratio_exact_over_constrained_s_x', '.1f')}x",
    ),
    "tfr_retrieval": lambda f, p: (
        f"TFR p50 {_f(f, 'tfr_p50_ms', '.1f')} / p95 {_f(f, 'tfr_p95_ms', '.1f')} ms over "
        f"{_f(f, 'xbrl_triples', ',')} XBRL triples (query encoding included)",
        f"dense top-k p50 {_f(f, 'dense_p50_ms', '.1f')} / p95 {_f(f, 'dense_p95_ms', '.1f')} ms",
        f"{_f(f, 'ratio_tfr_over_dense_p50_x', '.2f')}x",
    ),
    "hybrid_latency": lambda f, p: (
        f"hybrid p50 {_f(f, 'hybrid_asof_p50_ms', '.1f')} / p95 {_f(f, 'hybrid_asof_p95_ms', '.1f')} ms on "
        f"as-of pools of {_f(f, 'chunks_indexed', ',')} SEC sentences (query vector given)",
        f"BM25 alone p50 {_f(f, 'bm25_asof_p50_ms', '.1f')} ms",
        f"{_f(f, 'ratio_hybrid_over_bm25_asof_p50_x', '.2f')}x",
    ),
    "agent-latency": lambda f, p: (
        f"analyst agent, one TAT-QA question at a time: median {_f(f, 'one_median_s', '.1f')} s "
        f"(p90 {_f(f, 'one_p90_s', '.1f')}) over {f.get('questions')} questions, "
        f"{_f(f, 'median_prompt_tokens', ',.0f')} prompt tokens (target <= 15 s)",
        f"{p.get('workers')} in flight: median {_f(f, 'many_median_s', '.1f')} s per answer, "
        f"{_f(f, 'many_wall_s_per_answer', '.1f')} s of wall clock per answer "
        f"({_f(f, 'one_wall_s_per_answer', '.1f')} one at a time)",
        f"{_f(f, 'ratio_many_over_one_median_x', '.2f')}x latency, "
        f"{_f(f, 'ratio_throughput_many_over_one_x', '.2f')}x throughput",
    ),
    "memory-hit-rate": lambda f, p: (
        f"experience memory hit rate (tau 0.65) on {f.get('queries')} evaluated TAT-QA arithmetic questions: "
        f"{_pct(f.get('hit_rate_full_bank_at_065'))} with all {f.get('training_questions')} training questions learned",
        f"the stored bank ({(f.get('stored_bank') or {}).get('entries')} experiences from "
        f"{(f.get('stored_bank') or {}).get('learned_questions')} learned questions) through the vector index: "
        f"{_pct((f.get('stored_bank') or {}).get('hit_rate'))} (its snapshot: "
        f"{_pct((f.get('stored_bank') or {}).get('projected_hit_rate'))})",
        f"{_f(f, 'ratio_full_over_stored_x', '.2f')}x",
    ),
    "market_labels": lambda f, p: (
        f"{_f(f, 'vectorized_rows', ',')} residual labels ({f.get('tickers')} tickers x 3 horizons) in "
        f"{_f(f, 'vectorized_s', '.2f')} s, vectorized",
        f"per-anchor loop: {_f(f, 'naive_us_per_item', '.0f')} us per label, "
        f"{_f(f, 'naive_extrapolated_s', '.1f')} s extrapolated; {f.get('label_mismatches')} label mismatches",
        f"{_f(f, 'speedup_x', ',.0f')}x",
    ),
    "bulk-import": lambda f, p: (
        f"bulk import of {p.get('quarter')} ({_f(f, 'facts', ',')} facts): {_f(f, 'bulk_s', '.1f')} s, "
        f"{_f(f, 'bulk_facts_per_s', ',.0f')} facts/s (CSV, neo4j-admin, schema); counts equal: {f.get('counts_equal')}",
        f"transactional `finkg ingest sec`: {_f(f, 'tx_s', '.1f')} s, {_f(f, 'tx_facts_per_s', ',.0f')} facts/s",
        f"{_f(f, 'ratio_tx_over_bulk_s_x', '.2f')}x ({_f(f, 'ratio_marginal_x', '.2f')}x in marginal facts/s)",
    ),
    "feedback_eval": lambda f, p: (
        f"source-memory update {_f(f, 'batched_ms_per_label', '.2f')} ms per matured label, batched "
        f"({_f(f, 'events', ',')} labels)",
        f"one write per label: {_f(f, 'loop_ms_per_label', '.2f')} ms",
        f"{_f(f, 'ratio_loop_over_batched_x', '.1f')}x",
    ),
}


def _benchmark_rows(records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for name, headline in HEADLINES.items():
        record = records.get(name)
        if record is None:
            continue
        what, baseline, ratio = headline(record.get("figures", {}), record.get("parameters", {}))
        rows.append(
            {
                "name": name,
                "what": what,
                "baseline": baseline,
                "ratio": ratio,
                "measured": f"{str(record.get('date', '?'))[:10]}, `{short_sha(record.get('git_sha', '?'))}`, "
                f"{record.get('machine', {}).get('cores', '?')} cores / {record.get('machine', {}).get('ram_gib', '?')} GiB",
                "record": record,
            }
        )
    return rows


BENCHMARKS = Table(
    list(HEADLINES),
    _benchmark_rows,
    [
        Column("benchmark", lambda r: f"`bench/{r['name'].replace('-', '_')}.py`"),
        Column("measured", lambda r: r["what"]),
        Column("baseline, same run", lambda r: r["baseline"]),
        Column("ratio", lambda r: r["ratio"]),
        Column("date, commit, machine", lambda r: r["measured"]),
    ],
    provenance_per_row=True,
)

BULK = Table(
    ["bulk-import"],
    _single("bulk-import", "paths"),
    [
        Column("path", lambda r: str(r["path"])),
        Column("seconds", lambda r: num(r.get("seconds"), ".1f")),
        Column("facts/s", lambda r: num(r.get("facts_per_s"), ",.0f"), bold_max=True),
        Column("where the time goes", lambda r: str(r["parts"])),
    ],
)

BULK_SCALE = Table(
    ["bulk-import"],
    _single("bulk-import", "scale"),
    [
        Column("num.txt rows per quarter (assumed)", lambda r: f"{r['num.txt rows per quarter']:,}"),
        Column("facts kept, 60 quarters", lambda r: f"{r['facts kept (60 quarters)']:,}"),
        Column("bulk, hours", lambda r: num(r.get("bulk h"), ".1f")),
        Column("transactional, hours (lower bound)", lambda r: num(r.get("transactional h"), ".1f")),
    ],
)

# `finkg fetch` against the local SEC server, then one new filing: incremental update against a full rebuild
FETCH_UPDATE = Table(
    ["fetch-update"],
    _single("fetch-update", "fetch-update"),
    [
        Column("step", lambda r: str(r["step"])),
        *(
            Column(key, lambda r, key=key: "" if r[key] is None else f"{r[key]:,}")
            for key in ("requests", "bytes", "facts", "memos written")
        ),
        Column("seconds", lambda r: num(r["seconds"], ".2f")),
    ],
)

RELIABILITY = Table(
    ["reliability"],
    _single("reliability", "families"),
    [
        Column("family", lambda r: f"`{r['family']}`"),
        Column("what is attacked", lambda r: str(r.get("what", ""))),
        Column("attempts", lambda r: num(r.get("attempts"), ",")),
        Column("handled", lambda r: num(r.get("handled"), ",")),
        Column("mishandled", lambda r: num(r.get("mishandled"), ",")),
        Column("skipped", lambda r: num(r.get("skipped"), ",")),
        Column("seconds", lambda r: num(r.get("seconds"), ".0f")),
    ],
)

LLM_PATHS = Table(
    ["llm_throughput"],
    _single("llm_throughput", "paths"),
    [
        Column("path", lambda r: str(r["path"])),
        Column("calls in flight", lambda r: num(r.get("in_flight"), "d")),
        Column("completion tokens", lambda r: num(r.get("completion_tokens"), ",")),
        Column("seconds", lambda r: num(r.get("seconds"), ".1f")),
        Column("tokens/s", lambda r: num(r.get("tokens_per_s"), ".2f"), bold_max=True),
        Column("x raw llama.cpp", lambda r: num(r.get("x_raw"), ".2f")),
        Column("answers equal to raw", lambda r: str(r.get("answers_equal_raw", "n/a"))),
    ],
)


def _pr(row: dict[str, Any], stage: str) -> str:
    p, r = row.get(f"{stage}_precision"), row.get(f"{stage}_recall")
    return "-" if p is None else f"{p:.3f} / {r:.3f}"


EXTRACTION_LADDER = Table(
    ["extraction_ladder"],
    _single("extraction_ladder", "steps"),
    [
        Column("step", lambda r: str(r["step"])),
        Column("seconds", lambda r: num(r.get("wall_s"), ".1f")),
        Column("LLM calls", lambda r: num(r.get("llm_calls"), ",")),
        Column("sentences sent", lambda r: num(r.get("sentences_sent"), ",")),
        Column("completion tokens", lambda r: num(r.get("completion_tokens"), ",")),
        Column("s / statement", lambda r: num(r.get("s_per_statement"), ".1f")),
        Column("P / R proposed", lambda r: _pr(r, "proposed")),
        Column("P / R after verification", lambda r: _pr(r, "verified")),
    ],
)

REPORT_READERS = Table(
    ["eval-reports-agent-readers"],
    _single("eval-reports-agent-readers", "readers"),
    [
        Column("reader", lambda r: str(r["reader"])),
        Column("model", lambda r: "LoRA-tuned" if "+lora:" in str(r.get("model_id")) else "untuned"),
        Column("answered (gate passed)", lambda r: f"{r['answered']} of {r['questions']}"),
        Column("LLM-route questions answered", lambda r: f"{r['llm_route_answered']} of {r['llm_route_questions']}"),
        Column("LLM calls", lambda r: num(r.get("llm_calls"), ",")),
        Column("prompt tokens", lambda r: num(r.get("prompt_tokens"), ",")),
    ],
)


def _report_reader_cell(reader: str) -> Callable[[dict[str, Any]], str]:
    def cell(r: dict[str, Any]) -> str:
        status, answer, reason = r[f"{reader}.status"], r[f"{reader}.answer"], r[f"{reader}.reason"]
        said = f": {answer}" if answer else (f" ({reason})" if reason else "")
        return f"{r[f'{reader}.route']}, {status}{said}".replace("|", "/")

    return cell


REPORT_READERS_QUESTIONS = Table(
    ["eval-reports-agent-readers"],
    _single("eval-reports-agent-readers", "questions"),
    [
        Column("question", lambda r: f"`{r['id']}`"),
        Column("agent (tool loop, untuned)", _report_reader_cell("agent")),
        Column("reader-calc (tuned reader, calculator, gate)", _report_reader_cell("reader-calc")),
    ],
)

HYBRID_LATENCY = Table(
    ["hybrid_latency"],
    _single("hybrid_latency", "latency"),
    [
        Column("pool", lambda r: f"{r['pool']} ({r['pool_chunks_mean']:,.0f} chunks on average)"),
        Column("system", lambda r: str(r["system"])),
        Column("p50 ms", lambda r: num(r.get("p50_ms"), ".1f")),
        Column("p95 ms", lambda r: num(r.get("p95_ms"), ".1f")),
        Column("mean ms", lambda r: num(r.get("mean_ms"), ".1f")),
        Column("p50 / BM25 p50", lambda r: num(r.get("p50_over_bm25_p50"), ".2f")),
    ],
)

STARTUP = Table(
    ["startup"],
    _single("startup", "startup"),
    [
        Column("command", lambda r: f"`{r['command']}`"),
        Column("median s", lambda r: num(r.get("median s"), ".2f")),
        Column("importing the heavy libraries up front (baseline), s", lambda r: num(r.get("baseline s"), ".1f")),
    ],
)


SEC_TRUST_FIGURES = (
    ("filings in the quarter", "filings"),
    ("co-registrant filings", "coregistrant_filings"),
    ("... with memo facts", "coregistrant_filings_with_memo_facts"),
    ("... through the `ParentCompany` member", "coregistrant_entity_parentcompany"),
    ("filings with a revenue", "filings_with_revenue"),
    ("... from the income statement's top revenue line", "revenue_from_income_statement_line"),
    ("filings reporting none of the canonical revenue tags", "filings_without_canonical_revenue_tag"),
    ("derived total liabilities", "derived_liabilities"),
    ("... with items between liabilities and equity", "derived_liabilities_with_mezzanine_items"),
    ("filings with a `prevrpt` (amended)", "prevrpt_filings"),
    ("... resolved to their amendment in the quarter", "superseded_resolved_to_amendment"),
    ("... flagged as amended later, outside the graph", "amended_later_outside_graph"),
    ("plausibility (scale) flags", "plausibility_flags"),
    ('memos labelled "insufficient data"', "memos_insufficient_data"),
)

SEC_TRUST = Table(
    ["sec_trust"],
    lambda records: [
        {"what": what, "value": records["sec_trust"].get("figures", {}).get(key)} for what, key in SEC_TRUST_FIGURES
    ],
    [Column("on the shipped 2009q3 quarter", lambda r: r["what"]), Column("count", lambda r: num(r["value"], ","))],
)


def _all_row(record: dict[str, Any], system: str, key: str = "rows") -> dict[str, Any]:
    """The ``all`` row of ``system`` in a TAT-QA record's table ``key`` (empty when absent)."""
    for r in record.get("tables", {}).get(key, []):
        if r["system"] == system and r["answer_type"] == "all":
            return r
    return {}


def _em(record: dict[str, Any], system: str) -> str:
    r = _all_row(record, system)
    if not r:
        return "n/a"
    return f"EM {r['em']:.1f} [{r['em_ci_low']:.1f}, {r['em_ci_high']:.1f}] on {r['questions']} questions"


def _memo_exact(record: dict[str, Any]) -> str:
    rate = record["figures"]["systems"]["structured+verifier"]["exact_rate"]
    memos = record["figures"]["systems"]["structured+verifier"]["memos"]
    return f"{100 * rate['mean']:.1f} % [{100 * rate['ci_low']:.1f}, {100 * rate['ci_high']:.1f}] of {memos} memos"


def _sec_exact(record: dict[str, Any]) -> str:
    rows = [r for r in record.get("tables", {}).get("sec_summary", []) if r["kind"] == "all"]
    return f"{rows[0]['exact']} of {rows[0]['questions']}" if rows else "n/a"


# The README's headline figures: (what, results file, the figure read from it).
def _ask_user(record: dict[str, Any]) -> str:
    m = record["figures"]["summary"]["current"]
    base = record["figures"]["summary"].get("baseline")
    text = (
        f"{m['correct']['count']} of {m['n']} ({100 * m['correct']['rate']:.1f} %) / "
        f"{m['wrong_gate_passed']['count']} wrong"
    )
    if base:
        text += f" (today's `finkg ask` at cd12569: {base['correct']['count']} / {base['wrong_gate_passed']['count']})"
    return text


def _page_reader(record: dict[str, Any]) -> str:
    r = record["figures"]["reader"]
    return f"{r['correct']['count']} / {r['wrong']['count']} of {r['n']} ({r['abstained']['count']} refused)"


HEADLINE_FIGURES: list[tuple[str, str, Callable[[dict[str, Any]], str]]] = [
    (
        "risk memos: numbers stated exactly, against a gold computed outside finkg (2009q3)",
        "memo-eval",
        _memo_exact,
    ),
    ("SEC questions answered exactly by `finkg ask` (no LLM; 2009q3 10-Qs)", "eval-agent", _sec_exact),
    (
        "analyst questions in users' words, test half: correct / wrong with the gate passed (`finkg ask`, no LLM)",
        "ask-user-questions-test",
        _ask_user,
    ),
    (
        "TAT-QA, the analyst agent with Qwen2.5-Coder-1.5B (development sample)",
        "eval-tatqa-memory-routes",
        lambda r: _em(r, "agent"),
    ),
    (
        "TAT-QA, LoRA-tuned Qwen reader + calculator (the same sample)",
        "eval-tatqa-reader-calc-qwen-lora",
        lambda r: _em(r, "reader-calc+lora"),
    ),
    (
        "TAT-QA, the answer engine on 150 frozen test questions (never tuned on; forms rule + tuned reader)",
        "eval-tatqa-test-engine-forms",
        lambda r: _em(r, "engine"),
    ),
    (
        "TAT-QA, the same engine on a second list of 150 test questions, scored once",
        "eval-tatqa-test2-engine",
        lambda r: _em(r, "engine"),
    ),
    (
        "questions over a filing page (FinanceBench, test part): correct / wrong with the gate passed",
        "page-questions-gated",
        _page_reader,
    ),
    (
        "triple extraction from all FOMC statements (llama-server, 2 cores)",
        "extraction",
        lambda r: (
            f"{r['figures']['wall_min']:.1f} min for {r['parameters'].get('statements')} statements; "
            f"P / R {r['figures']['gold_precision']:.3f} / {r['figures']['gold_recall']:.3f} on the gold set"
        ),
    ),
    (
        "hybrid retrieval over 100,000 SEC sentences, as-of pools",
        "hybrid_latency",
        lambda r: f"p50 {r['figures']['hybrid_asof_p50_ms']:.1f} ms / p95 {r['figures']['hybrid_asof_p95_ms']:.1f} ms",
    ),
    (
        "bulk import against transactional ingest of a quarter",
        "bulk-import",
        lambda r: (
            f"{r['figures']['bulk_facts_per_s']:,.0f} against {r['figures']['tx_facts_per_s']:,.0f} facts/s "
            f"({r['figures']['ratio_tx_over_bulk_s_x']:.2f}x)"
        ),
    ),
    (
        "reliability attacks handled (kill -9, guard, hostile input, limits, secrets)",
        "reliability",
        lambda r: f"{r['figures']['total_handled']} of {r['figures']['total_attempts']}",
    ),
    ("`finkg --help` start-up (median)", "startup", lambda r: f"{r['figures']['help_median_s']:.2f} s"),
]


def _headline_rows(records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"what": what, "figure": figure(records[name]), "name": name, "record": records[name]}
        for what, name, figure in HEADLINE_FIGURES
        if name in records
    ]


HEADLINE = Table(
    [name for _, name, _ in HEADLINE_FIGURES],
    _headline_rows,
    [
        Column("what", lambda r: r["what"]),
        Column("figure", lambda r: r["figure"]),
        Column("results file", lambda r: f"`bench/results/{r['name']}.json`"),
        Column("measured", lambda r: str(r["record"].get("date", "?"))[:10]),
    ],
    provenance_per_row=True,
)

TABLES: dict[str, Table] = {
    "headline": HEADLINE,
    "hybrid-latency": HYBRID_LATENCY,
    "startup": STARTUP,
    "sec-trust": SEC_TRUST,
    "eval-reports-agent-readers": REPORT_READERS,
    "eval-reports-agent-readers-questions": REPORT_READERS_QUESTIONS,
    "eval-reports-reader": REPORTS_READER,
    "eval-reports-reader-e3": REPORTS_READER_E3,
    "eval-reports-reader-qwen": REPORTS_READER_QWEN,
    "eval-tatqa-agent": TATQA_AGENT,
    "eval-tatqa-memory": TATQA_MEMORY,
    "eval-tatqa-memory-diff": TATQA_MEMORY_DIFF,
    "eval-tatqa-300": TATQA_300,
    "eval-tatqa-300-diff": TATQA_300_DIFF,
    "eval-tatqa-300-two-stage": TATQA_300_TWO_STAGE,
    "eval-tatqa-300-two-stage-diff": TATQA_300_TWO_STAGE_DIFF,
    "eval-tatqa-reader": TATQA_READER,
    "eval-tatqa-reader-diff": TATQA_READER_DIFF,
    "eval-tatqa-reader-e3": TATQA_READER_E3,
    "eval-tatqa-reader-e3-diff": TATQA_READER_E3_DIFF,
    "eval-tatqa-agent-smollm2-e3": TATQA_AGENT_SMOLLM2_E3,
    "eval-tatqa-agent-smollm2-e3-diff": TATQA_AGENT_SMOLLM2_E3_DIFF,
    "eval-tatqa-reader-qwen-gpu": TATQA_READER_QWEN,
    "eval-tatqa-reader-qwen-gpu-diff": TATQA_READER_QWEN_DIFF,
    "eval-tatqa-agent-qwen-lora": TATQA_AGENT_QWEN_LORA,
    "eval-tatqa-agent-qwen-lora-diff": TATQA_AGENT_QWEN_LORA_DIFF,
    "eval-tatqa-test-engine": TATQA_TEST_ENGINE,
    "eval-tatqa-test-engine-forms": TATQA_TEST_ENGINE_FORMS,
    "eval-tatqa-test-engine-forms-diff": TATQA_TEST_ENGINE_FORMS_DIFF,
    "tatqa-forms": TATQA_FORMS,
    "eval-tatqa-test2-engine": TATQA_TEST2_ENGINE,
    "eval-tatqa-test2-agent": TATQA_TEST2_AGENT,
    "eval-tatqa-test2-agent-diff": TATQA_TEST2_AGENT_DIFF,
    "eval-tatqa-test2-memory": TATQA_TEST2_MEMORY,
    "eval-tatqa-test2-memory-diff": TATQA_TEST2_MEMORY_DIFF,
    "page-questions-gated": PAGE_QUESTIONS_GATED,
    "page-questions-dev-extra": PAGE_QUESTIONS_DEV_EXTRA,
    "page-questions-dev-gated": PAGE_QUESTIONS_DEV_GATED,
    "eval-tatqa-test-engine-control": TATQA_TEST_ENGINE_CONTROL,
    "eval-tatqa-test-engine-control-diff": TATQA_TEST_ENGINE_CONTROL_DIFF,
    "eval-tatqa-reader-calc-qwen-lora": TATQA_READER_CALC,
    "eval-tatqa-reader-calc-qwen-lora-diff": TATQA_READER_CALC_DIFF,
    "eval-tatqa-reader-calc-vs-agent": TATQA_READER_CALC_VS_AGENT,
    "eval-tatqa-reader-qwen-cpu": TATQA_READER_QWEN_CPU,
    "eval-tatqa-reader-qwen-cpu-diff": TATQA_READER_QWEN_CPU_DIFF,
    "eval-tatqa-reader-form": TATQA_READER_FORM,
    "eval-tatqa-reader-form-diff": TATQA_READER_FORM_DIFF,
    "eval-tatqa-reader-form-vs-tuned": TATQA_READER_FORM_VS_TUNED,
    "eval-tatqa-memory-programs": TATQA_MEMORY_PROGRAMS,
    "eval-tatqa-memory-programs-diff": TATQA_MEMORY_PROGRAMS_DIFF,
    "memory-hit-rate": MEMORY_HIT_RATE,
    "memory-hit-rate-span": MEMORY_HIT_RATE_SPAN,
    "eval-tatqa-memory-150": TATQA_MEMORY_150,
    "eval-tatqa-memory-150-diff": TATQA_MEMORY_150_DIFF,
    "eval-tatqa-memory-150-use": TATQA_MEMORY_150_USE,
    "eval-tatqa-memory-expression": TATQA_MEMORY_EXPRESSION,
    "eval-tatqa-memory-expression-diff": TATQA_MEMORY_EXPRESSION_DIFF,
    "eval-tatqa-memory-expression-use": TATQA_MEMORY_EXPRESSION_USE,
    "eval-tatqa-memory-stratum": TATQA_MEMORY_STRATUM,
    "eval-tatqa-memory-stratum-diff": TATQA_MEMORY_STRATUM_DIFF,
    "eval-tatqa-memory-forms": TATQA_MEMORY_FORMS,
    "eval-tatqa-memory-forms-diff": TATQA_MEMORY_FORMS_DIFF,
    "eval-tatqa-memory-routes": TATQA_MEMORY_ROUTES,
    "eval-tatqa-memory-routes-diff": TATQA_MEMORY_ROUTES_DIFF,
    "eval-tatqa-memory-routes-by-route": TATQA_MEMORY_ROUTES_BY_ROUTE,
    "eval-tatqa-memory-routes-use": TATQA_MEMORY_ROUTES_USE,
    "eval-agent-targets": EVAL_AGENT_TARGETS,
    "eval-agent-tatqa": EVAL_AGENT_TATQA,
    "eval-agent-diff": EVAL_AGENT_DIFF,
    "eval-agent-sec": EVAL_AGENT_SEC,
    "ask-user-questions": ASK_USER,
    "ask-user-questions-kinds": ASK_USER_KINDS,
    "ask-dev-probes": ASK_DEV,
    "ask-dev-peers": ASK_DEV_PEERS,
    "ask-dev-absent": ASK_DEV_ABSENT,
    "ask-user-questions-new-quarters": ASK_USER_NEW_QUARTER,
    "demo-reports": DEMO_REPORTS,
    "train-embedder": TRAIN_EMBEDDER,
    "train-reranker": TRAIN_RERANKER,
    "train-reranker-diff": TRAIN_RERANKER_DIFF,
    "train-reader": TRAIN_READER,
    "benchmarks": BENCHMARKS,
    "bulk-import": BULK,
    "bulk-scale": BULK_SCALE,
    "fetch-update": FETCH_UPDATE,
    "reliability": RELIABILITY,
    "llm-throughput": LLM_PATHS,
    "extraction-ladder": EXTRACTION_LADDER,
    "memo-eval": MEMO_EVAL,
    "memo-eval-causes": MEMO_CAUSES,
}


# --------------------------------------------------------------------------- rendering


def load_records(names: Sequence[str], directory: Path, required: bool) -> dict[str, dict[str, Any]]:
    """``{name: record}`` of ``directory/<name>.json``; a missing file raises TablesError when ``required``, a
    file whose figures were typed in (``provenance``) always."""
    out = {}
    for name in names:
        path = directory / f"{name}.json"
        if not path.is_file():
            if required:
                raise TablesError(f"{path}: no such results file (run the benchmark or evaluation first)")
            continue
        try:
            out[name] = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise TablesError(f"{path}: not JSON ({exc})") from exc
        if isinstance(out[name], dict) and out[name].get("provenance"):
            raise TablesError(
                f"{path}: figures typed in, not written by its command (provenance: {out[name]['provenance'][:80]}...);"
                " rerun the command or retire the file and its tables"
            )
    return out


def render(name: str, directory: Path = RESULTS) -> str:
    """The Markdown of table ``name`` (rows, then its provenance lines), without the markers.

    Raises:
        TablesError: unknown table, or a results file it needs is missing or not JSON.
    """
    if name not in TABLES:
        raise TablesError(f"unknown table {name!r} (known: {', '.join(TABLES)})")
    spec = TABLES[name]
    records = load_records(spec.results, directory, required=not spec.provenance_per_row)
    rows = spec.rows(records)
    if not rows:
        raise TablesError(f"{directory}: no rows for table {name!r} in {', '.join(spec.results)}")
    cells = [[c.cell(r) for c in spec.columns] for r in rows]
    cells = [[c if isinstance(c, Cell) else Cell(c) for c in row] for row in cells]
    for j, column in enumerate(spec.columns):
        values = [row[j].value for row in cells if row[j].value is not None]
        if column.bold_max and len(values) > 1:
            best = max(values)
            for row in cells:
                if row[j].value == best:
                    row[j] = Cell(f"**{row[j].text}**", row[j].value)
    headers = [c.header(rows) if callable(c.header) else c.header for c in spec.columns]
    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "---|" * len(headers),
        *("| " + " | ".join(c.text.replace("|", "\\|") for c in row) + " |" for row in cells),
        "",
    ]
    if spec.provenance_per_row:
        machines = {machine_text(r["record"].get("machine", {})) for r in rows}
        lines.append(
            "_Generated from `bench/results/<benchmark>.json` (`python bench/tables.py`); each file keeps the "
            "command, parameters and every figure. Machine: " + "; ".join(sorted(machines)) + "._"
        )
    else:
        lines += [provenance_line(records[n]) for n in spec.results]
    return "\n".join(lines) + "\n"


def render_sources(names: Sequence[str], directory: Path = RESULTS) -> str:
    """The Markdown of a page's ``sources`` table: every results file the tables ``names`` read, once, in the
    order they first appear, with how it was made, its date, commit, machine and command.

    Raises:
        TablesError: a table name is unknown, or see :func:`load_records`.
    """
    files: list[str] = []
    for name in names:
        if name not in TABLES:
            raise TablesError(f"unknown table {name!r} (known: {', '.join(TABLES)})")
        files += [f for f in TABLES[name].results if f not in files]
    records = load_records(files, directory, required=False)
    rows = [source_row(records[f]) for f in files if f in records]
    if not rows:
        raise TablesError(f"{directory}: no results files for the sources table (no other table on the page)")
    keys = ("file", "kind", "date", "commit", "machine", "command")
    lines = [
        "| results file | figures | date | commit | machine | command |",
        "|" + "---|" * len(keys),
        *("| " + " | ".join(r[k].replace("|", "\\|") for k in keys) + " |" for r in rows),
        "",
        "_Each file keeps its command, parameters and every figure; `python bench/tables.py` regenerates the "
        "tables of this page from them._",
    ]
    return "\n".join(lines) + "\n"


def update(text: str, directory: Path = RESULTS, source: str = "README.md") -> tuple[str, list[str]]:
    """``text`` with every marked table regenerated (the ``sources`` table from the others of ``text``), and
    the names of the tables that changed.

    Raises:
        TablesError: an opening marker without its closing marker (named with its line), or see :func:`render`.
    """
    closed = {m.start("open") for m in BLOCK.finditer(text)}
    for m in OPEN.finditer(text):
        if m.start() not in closed:
            line = text.count("\n", 0, m.start()) + 1
            raise TablesError(f"{source}:{line}: <!-- table:{m['name']} --> has no <!-- /table:{m['name']} -->")
    names = [m["name"] for m in BLOCK.finditer(text) if m["name"] != SOURCES]
    changed: list[str] = []

    def replace(m: re.Match[str]) -> str:
        body = render_sources(names, directory) if m["name"] == SOURCES else render(m["name"], directory)
        if body != m["body"]:
            changed.append(m["name"])
        return m["open"] + body + m["close"]

    return BLOCK.sub(replace, text), changed


def targets() -> list[Path]:
    """The files whose tables are generated: README.md and every Markdown page of ``docs/``."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def display_name(path: Path) -> str:
    """``path`` relative to the repository root when it is inside it, else as given (how messages name a page)."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a target is out of date; write nothing")
    ap.add_argument("--readme", type=Path, action="append", help="only this file (repeatable; default: all targets)")
    ap.add_argument("--results-dir", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    files = args.readme or targets()
    stale: list[str] = []
    total = 0
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
            new, changed = update(text, args.results_dir, display_name(path))
        except (TablesError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        total += len(BLOCK.findall(text))
        if args.check:
            if changed:
                stale.append(f"{display_name(path)}: {', '.join(changed)}")
            continue
        if new != text:
            path.write_text(new, encoding="utf-8")
        if changed:
            print(f"{display_name(path)}: regenerated {', '.join(changed)}")
    if stale:
        print("out of date (run python bench/tables.py): " + "; ".join(stale), file=sys.stderr)
        return 1
    print(f"{total} tables up to date in {len(files)} files" if args.check else f"{total} tables in {len(files)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
