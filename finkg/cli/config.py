"""``finkg init`` and ``finkg config``: the settings file and the settings in effect."""

from __future__ import annotations

from typing import Annotated

import typer

from finkg.cli._common import FormatOption, console, settings
from finkg.output import Format, render


def init(force: Annotated[bool, typer.Option(help="Overwrite an existing settings file.")] = False) -> None:
    """Write a commented settings file with a freshly generated Neo4j password."""
    from finkg.config import write_settings_file

    path, written = write_settings_file(force=force)
    if written:
        console.print(f"wrote {path} (mode 600)")
    else:
        console.print(f"{path} exists; kept it (--force overwrites)")


def show_config(
    action: Annotated[str, typer.Argument(help="show (the default): every setting in effect")] = "show",
    fmt: FormatOption = Format.table,
) -> None:
    """Show where the settings file is and every setting in effect, with its source (env, file, installed,
    default); secrets masked."""
    from finkg.config import config_path, effective_settings
    from finkg.neo4j_server import LocalNeo4j

    if action != "show":
        raise typer.BadParameter(f"unknown action {action!r}; use `finkg config show`", param_hint="ACTION")
    s = settings()
    rows = [
        {"setting": "settings file", "value": str(config_path()), "source": ""},
        {"setting": "neo4j uri (in use)", "value": s.uri, "source": ""},
        *effective_settings(s),
        {"setting": "neo4j browser", "value": LocalNeo4j(s).browser_url, "source": ""},
    ]
    render(rows, fmt, console)
