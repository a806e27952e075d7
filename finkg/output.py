"""Rendering query results for people (rich tables) and for programs (JSON, CSV), and progress.

On a terminal, tables fit the window and long jobs show rich progress bars. When stdout is a
file, a pipe or a CI log, tables keep their full width (no 80-column squeeze) and long jobs log one progress line per stage every ``interval_s`` seconds
(stage, done/total, rate, ETA) on stderr.
"""

from __future__ import annotations

import csv
import io
import json
import time as _time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime, time
from enum import StrEnum
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from kg import atomic
from kg.progress import Advance, StageProgress


def write_text_atomic(path: Path, text: str) -> Path:
    """Replace ``path`` with ``text`` (UTF-8), whole or not at all: the text goes to a uniquely named
    ``<name>.<random>.part`` beside it, which is then renamed over ``path`` (a process killed mid-write leaves
    the old file or none, never half of one, so a rerun that trusts an existing output file never trusts a
    truncated one; two runs writing it at once both finish). Returns ``path``.

    Raises:
        OSError: the folder cannot be written."""
    return atomic.write_text(path, text)


#: Console width when the output is not a terminal: wide enough that no table cell wraps.
PIPE_WIDTH = 10_000


def make_console(*, stderr: bool = False) -> Console:
    """A console for command output: the terminal's width on a terminal; otherwise
    :data:`PIPE_WIDTH`, whatever ``COLUMNS`` says (full-width tables in files and CI logs)."""
    console = Console(stderr=stderr)
    if not console.is_terminal:
        console = Console(stderr=stderr, width=PIPE_WIDTH)
    return console


class Format(StrEnum):
    """Output formats of ``finkg cypher`` and other listing commands."""

    table = "table"
    json = "json"
    csv = "csv"


def _plain(value: Any) -> Any:
    """Neo4j temporal and spatial values to strings; containers recursively."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "iso_format"):
        return value.iso_format()
    if isinstance(value, (date, datetime, time)):
        return value.isoformat()
    return str(value)


def _cell(value: Any) -> str:
    value = _plain(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)


def render(records: Sequence[dict[str, Any]], fmt: Format, console: Console, title: str | None = None) -> None:
    """Print ``records`` (a list of dicts with the same keys) as a table, JSON or CSV."""
    columns = list(records[0].keys()) if records else []
    if fmt is Format.json:
        console.print_json(json.dumps([_plain(r) for r in records], ensure_ascii=False))
        return
    if fmt is Format.csv:
        buf = io.StringIO()
        writer = csv.writer(buf)
        writer.writerow(columns)
        for r in records:
            writer.writerow([_cell(r.get(c)) for c in columns])
        console.out(buf.getvalue(), end="", highlight=False)
        return
    table = Table(title=title, show_lines=False)
    for c in columns:
        table.add_column(c, overflow="fold")
    for r in records:
        table.add_row(*(_cell(r.get(c)) for c in columns))
    console.print(table)
    console.print(f"[dim]{len(records)} row{'s' if len(records) != 1 else ''}[/dim]")


class RateColumn(ProgressColumn):
    """Rows per second of a task: rows done over its elapsed time."""

    def render(self, task: Task) -> Text:
        speed = task.completed / task.elapsed if task.elapsed else None
        return Text(f"{speed:>9,.0f} rows/s" if speed else "        - rows/s", style="progress.data.speed")


class TokenRateColumn(ProgressColumn):
    """LLM completion tokens per second of a task whose ``tokens`` field counts them (blank otherwise)."""

    def render(self, task: Task) -> Text:
        tokens = task.fields.get("tokens")
        if tokens is None:
            return Text("")
        speed = tokens / task.elapsed if task.elapsed else 0.0
        return Text(f"{tokens:,} tok {speed:5.1f} tok/s", style="progress.data.speed")


def progress_bar(console: Console) -> Progress:
    """A progress display for long work: description, bar, done/total, rows/s, LLM tokens/s (tasks
    that count tokens), elapsed."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TokenRateColumn(),
        TimeElapsedColumn(),
        console=console,
    )


def _duration(seconds: float) -> str:
    h, rest = divmod(round(seconds), 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


class _LogStage:
    """One stage's counters for :class:`LogProgress`."""

    def __init__(self, owner: LogProgress, name: str, total: int) -> None:
        self.owner, self.name, self.total = owner, name, total
        self.done = 0
        self.tokens: int | None = None
        self.started = self.last = owner.clock()
        self.logged_done = -1

    def __call__(self, n: int, /, tokens: int | None = None) -> None:
        self.done += n
        if tokens is not None:
            self.tokens = (self.tokens or 0) + tokens
        now = self.owner.clock()
        finished = self.total > 0 and self.done >= self.total
        if finished or now - self.last >= self.owner.interval_s:
            self.log(now)

    def line(self, now: float) -> str:
        elapsed = max(now - self.started, 1e-9)
        rate = self.done / elapsed
        parts = [f"{self.name}: {self.done:,}" + (f"/{self.total:,}" if self.total else "")]
        parts.append(f"{rate:,.1f}/s")
        if self.tokens is not None:
            parts.append(f"{self.tokens:,} tok {self.tokens / elapsed:,.1f} tok/s")
        if self.total and self.done < self.total and rate > 0:
            parts.append(f"ETA {_duration((self.total - self.done) / rate)}")
        parts.append(f"elapsed {_duration(elapsed)}")
        return ", ".join(parts)

    def log(self, now: float) -> None:
        self.last = now
        self.logged_done = self.done
        self.owner.write(self.line(now))


class LogProgress:
    """A :class:`kg.progress.StageProgress` that writes periodic log lines (for files and CI logs).

    Each stage logs when it opens, every ``interval_s`` seconds while it advances, when it reaches
    its total, and (if anything happened since its last line) when :meth:`close` is called:
    ``stage: done/total, rate/s[, tokens tok/s][, ETA h:mm:ss], elapsed m:ss``.
    """

    def __init__(self, console: Console, interval_s: float = 10.0, clock=_time.monotonic) -> None:
        self.console, self.interval_s, self.clock = console, interval_s, clock
        self.stages: list[_LogStage] = []

    def write(self, line: str) -> None:
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def __call__(self, stage: str, total: int, /) -> Advance:
        st = _LogStage(self, stage, total)
        self.stages.append(st)
        self.write(f"{stage}: started" + (f", {total:,} to do" if total else ""))
        return st

    def close(self) -> None:
        now = self.clock()
        for st in self.stages:
            if st.done != st.logged_done:
                st.log(now)


def bar_stage(bar: Progress) -> StageProgress:
    """A :class:`kg.progress.StageProgress` that adds a task to the rich progress ``bar`` per stage
    (LLM stages, which pass ``tokens``, show tokens/s too)."""

    def stage(name: str, total: int, /) -> Advance:
        task = bar.add_task(name, total=total or None)
        spent = 0

        def advance(n: int, /, tokens: int | None = None) -> None:
            nonlocal spent
            if tokens is None:
                bar.advance(task, n)
            else:
                spent += tokens
                bar.update(task, advance=n, tokens=spent)

        return advance

    return stage


@contextmanager
def stage_progress(
    console: Console, *, interval_s: float = 10.0, bar: Progress | None = None
) -> Iterator[StageProgress]:
    """The command line's :class:`kg.progress.StageProgress`: a rich bar when ``console`` is a
    terminal, else log lines on stderr every ``interval_s`` seconds (see :class:`LogProgress`).

    ``bar`` replaces the default :func:`progress_bar` display on a terminal (e.g. a bytes bar).
    """
    if console.is_terminal:
        with bar or progress_bar(console) as live:
            yield bar_stage(live)
        return
    log = LogProgress(make_console(stderr=True), interval_s)
    try:
        yield log
    finally:
        log.close()


def short_model_id(model_id: str, width: int = 32) -> str:
    """A model id for a title: the base's first ``width`` characters, and a LoRA adapter's tag (``+lora:<id>``)
    whole, so a tuned model's reports never look like the base's."""
    base, sep, adapter = model_id.partition("+lora:")
    return base[:width] + (f"+lora:{adapter}" if sep else "")
