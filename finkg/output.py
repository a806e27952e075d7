"""Rendering query results for people (rich tables) and for programs (JSON, CSV)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from datetime import date, datetime, time
from enum import Enum
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


class Format(str, Enum):
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
