"""What every command module shares: the output consoles, the settings loader, option parsing."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Annotated

import typer

from finkg.output import Format, make_console, stage_progress

if TYPE_CHECKING:
    from finkg.config import Settings

console = make_console()
err = make_console(stderr=True)

#: The ``--format`` option of listing commands.
FormatOption = Annotated[Format, typer.Option("--format", help="table, json or csv")]


def settings() -> Settings:
    """Settings for this command (environment over settings file over defaults)."""
    from finkg.config import load_settings

    return load_settings()


def progress():
    """The command line's progress display (:func:`finkg.output.stage_progress` on stdout's console)."""
    return stage_progress(console)


def day(value: str | None, option: str) -> date | None:
    """``YYYY-MM-DD`` to a date (None stays None); a bad value is a usage error naming the option."""
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"{option} {value!r}: expected YYYY-MM-DD") from None
