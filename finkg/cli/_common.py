"""What every command module shares: the output consoles, the settings loader, option parsing, progress and
the cost gate of long LLM batches."""

from __future__ import annotations

import sys
from datetime import date
from typing import TYPE_CHECKING, Annotated

import typer

from finkg.output import Format, make_console, progress_bar, stage_progress

if TYPE_CHECKING:
    from rich.progress import Progress

    from finkg.config import Settings
    from finkg.cost import BatchCost, Estimate

console = make_console()
err = make_console(stderr=True)

#: The ``--format`` option of listing commands.
FormatOption = Annotated[Format, typer.Option("--format", help="table, json or csv")]

#: The ``--yes`` option of the long LLM batches (:func:`batch_cost`).
YesOption = Annotated[
    bool,
    typer.Option(
        "--yes",
        "-y",
        help="Start without asking even when the batch is estimated above [batch] confirm_above_hours (or, with no "
        "rate measured for the model, above [batch] confirm_above_items).",
    ),
]

_bars: list[Progress] = []  # the progress bar on screen (a terminal), paused while a question is asked


def settings() -> Settings:
    """Settings for this command (environment over settings file over defaults)."""
    from finkg.config import load_settings

    return load_settings()


def progress():
    """The command line's progress display (:func:`finkg.output.stage_progress` on stdout's console)."""
    if not console.is_terminal:
        return stage_progress(console)
    bar = progress_bar(console)
    _bars.append(bar)  # the latest is the one on screen (a command shows one)
    return stage_progress(console, bar=bar)


def batch_cost(command: str, unit: str, yes: bool) -> BatchCost:
    """The cost gate of a long LLM batch (:class:`finkg.cost.BatchCost`): before it starts, one line on stderr
    with its size and estimated time; above the ``[batch]`` limits, a question on a terminal (no: exit 1) or,
    when stdin is not a terminal, a refusal with exit 2 telling to pass ``--yes``; with ``yes``, no question."""
    from finkg.cost import BatchCost

    def confirm(estimate: Estimate) -> None:
        err.print(estimate.line(), highlight=False, markup=False, soft_wrap=True)
        if yes or estimate.ask is None:
            return
        if not sys.stdin.isatty():
            err.print(
                f"error: {command} not started: {estimate.ask}; pass --yes to start it",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
            raise typer.Exit(2)
        bar = _bars[-1] if _bars else None
        if bar is not None:
            bar.stop()
        try:
            typer.confirm(f"{estimate.ask}: start it?", abort=True, err=True)
        finally:
            if bar is not None:
                bar.start()

    return BatchCost(command, unit, confirm)


def day(value: str | None, option: str) -> date | None:
    """``YYYY-MM-DD`` to a date (None stays None); a bad value is a usage error naming the option."""
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"{option} {value!r}: expected YYYY-MM-DD") from None
