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


def show_config(fmt: FormatOption = Format.table) -> None:
    """Show where the settings file is and every setting in effect (the password masked)."""
    from finkg.config import config_path
    from finkg.neo4j_server import LocalNeo4j

    s = settings()
    rows = [
        {"setting": "settings file", "value": str(config_path())},
        {"setting": "neo4j uri (in use)", "value": s.uri},
    ]
    for name, value in s.model_dump().items():
        if name == "neo4j_password":
            value = "(set)" if value else "(not set: run `finkg init` or set NEO4J_PASSWORD)"
        rows.append({"setting": name, "value": "" if value is None else str(value)})
    rows.append({"setting": "neo4j browser", "value": LocalNeo4j(s).browser_url})
    render(rows, fmt, console)
