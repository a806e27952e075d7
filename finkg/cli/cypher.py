"""``finkg cypher``: Cypher for exploration behind the read-only guard."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from finkg import api
from finkg.cli._common import console
from finkg.output import Format, render
from kg.cypher import EXAMPLE_QUERY
from kg.errors import GraphError


def cypher(
    query: Annotated[str, typer.Argument(help=f'A Cypher query, e.g. "{EXAMPLE_QUERY}"')],
    param: Annotated[
        list[str], typer.Option("--param", "-p", help="name=value (value parsed as JSON if it can be)")
    ] = [],
    write: Annotated[bool, typer.Option("--write", help="Allow queries that write or change the schema.")] = False,
    fmt: Annotated[Format, typer.Option("--format", help="table, json or csv")] = Format.table,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0,
            help="Seconds the server lets the query run (default: [neo4j] query_timeout, 60; 0: no limit of its own).",
        ),
    ] = None,
) -> None:
    """Run Cypher for exploration: planned with EXPLAIN first, refused unless read-only (or --write).

    The query must be at most 20,000 characters, 3,000 tokens and 64 levels deep (kg.guard's caps); the
    server stops a query (and its EXPLAIN) that runs past its time limit; Ctrl-C stops it too (server side as
    well) and exits 130. Every error is one line, exit 2."""
    params = {}
    for p in param:
        name, sep, raw = p.partition("=")
        if not sep or not name:
            raise typer.BadParameter(f"--param {p!r}: expected name=value")
        try:
            params[name] = json.loads(raw)
        except json.JSONDecodeError:
            params[name] = raw
    from neo4j.exceptions import ClientError  # here, not at the top: `finkg --help` loads no driver

    try:
        rows = api.cypher(query, params, write=write, timeout=timeout)
    except ClientError as exc:  # a syntax error, an unknown name: the server's first line, without its caret
        lines = (exc.message or "").strip().splitlines() or [""]
        raise GraphError(f"Neo4j refused the query: {exc.code}: {lines[0]}") from None
    render(rows, fmt, console)
