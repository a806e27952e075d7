"""``finkg neo4j``: the local Neo4j server (no Docker needed)."""

from __future__ import annotations

import typer

from finkg.cli._common import FormatOption, console, settings
from finkg.output import Format, render

app = typer.Typer(help="The local Neo4j server (no Docker needed).", no_args_is_help=True)


@app.command("start")
def neo4j_start() -> None:
    """Assemble Neo4j from Maven Central on first use, start it, wait until Bolt answers."""
    from finkg.neo4j_server import LocalNeo4j

    server = LocalNeo4j(settings())
    with console.status("starting Neo4j") as status:
        st, started = server.start(progress=lambda msg: status.update(msg))
    if started:
        console.print(f"Neo4j {st.version} started (pid {st.pid}): {st.bolt_uri}, Browser {st.browser_url}")
    else:
        console.print(f"Neo4j is already running (pid {st.pid}): {st.bolt_uri}; nothing to do")


@app.command("stop")
def neo4j_stop() -> None:
    """Stop the local Neo4j server (SIGTERM, then wait)."""
    from finkg.neo4j_server import LocalNeo4j

    if LocalNeo4j(settings()).stop():
        console.print("Neo4j stopped")
    else:
        console.print("Neo4j was not running")


@app.command("status")
def neo4j_status(fmt: FormatOption = Format.table) -> None:
    """Show whether the local server runs, its pid, addresses and home; exit 3 when stopped."""
    from finkg.neo4j_server import LocalNeo4j

    st = LocalNeo4j(settings()).status()
    row = {
        "running": st.running,
        "pid": st.pid,
        "version": st.version,
        "bolt": st.bolt_uri,
        "browser": st.browser_url,
        "home": str(st.home),
    }
    render([row], fmt, console)
    if not st.running:
        raise typer.Exit(3)
