"""``finkg browser``: the Neo4j Browser workspace (the Browser address, the style sheet, the saved queries)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from finkg import api

if TYPE_CHECKING:
    from kg.browser import SavedQuery


def _print_query(q: SavedQuery) -> None:
    """One saved query: its name, what it shows, the ``:param`` lines to paste, and its text."""
    typer.echo(f"-- {q.name} ({q.path})")
    typer.echo(f"   {q.shows}")
    if q.params:
        typer.echo("   params (paste into Browser first):")
        for line in q.param_lines():
            typer.echo(f"     {line}")
    typer.echo("")
    typer.echo(q.text)
    typer.echo("")


def browser(
    query: Annotated[
        str | None, typer.Option("--query", "-q", help="Print only this saved query (its name, e.g. memo-audit-trail).")
    ] = None,
    style: Annotated[
        bool, typer.Option("--style", help="Print the GRASS style sheet's text only (e.g. > finkg.grass).")
    ] = False,
    names: Annotated[bool, typer.Option("--names", help="Print only the saved queries' names.")] = False,
) -> None:
    """The Neo4j Browser workspace: the Browser URL, the style sheet and the saved queries.

    Loading the style: open `:style` in Browser and drop the .grass file on that frame, or type `:style`
    followed by the text of `finkg browser --style`. Running a saved query: paste its `:param` lines, then
    the query (or drop the .cypher file on Browser's Favorites drawer).
    """
    if style:
        typer.echo(api.browser_style(), nl=False)
        return
    if query is not None:
        _print_query(api.browser_query(query))
        return
    ws = api.browser_workspace()
    if names:
        for q in ws.queries:
            typer.echo(q.name)
        return
    typer.echo(f"Neo4j Browser: {ws.url}")
    typer.echo(f"  connect to {ws.bolt_uri} as {ws.user}, database {ws.database} (password: `finkg config`)")
    typer.echo(f"  or open {ws.connect_url} (fills in the connect form)")
    typer.echo("")
    typer.echo(f"Style sheet: {ws.style_path}")
    typer.echo("  load it: type :style in Browser and drop the file on that frame,")
    typer.echo("  or type :style followed by the text of `finkg browser --style` (`:style reset` undoes it)")
    typer.echo("")
    typer.echo(f"Saved queries ({len(ws.queries)}; `finkg browser --query NAME` prints one):")
    typer.echo("")
    for q in ws.queries:
        _print_query(q)
