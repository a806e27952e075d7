"""The ``finkg`` command line: one module per command group, each a thin layer over :mod:`finkg.api`.

Commands parse their arguments, call the API and print; they hold no formula, no Cypher and no
loop over data. Heavy libraries (torch, scikit-learn, the Neo4j driver, pandas) are imported
inside the commands, so ``finkg --help`` and ``finkg --version`` start fast.

Exit codes: 0 done; 1 a command's own failure status (an audit found future documents, a report
batch had failed questions); 2 a :class:`kg.errors.FinkgError` (its message on one line, no
traceback), a Neo4j ``ClientError``, a refused write or a usage error; 3 ``finkg neo4j status``
on a stopped server; 130 interrupted. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.markup import escape

from finkg import __version__
from finkg.cli import (
    agent,
    audit,
    browser,
    config,
    cypher,
    db,
    facts,
    fetch,
    graph,
    ingest,
    kg,
    memo,
    models,
    neo4j,
    report,
    train,
)
from finkg.cli import eval as eval_
from finkg.cli._common import console, err

__all__ = ["app", "console", "err", "main"]

app = typer.Typer(
    help="finkg: a knowledge-graph-centric financial analysis engine on Neo4j.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="markdown",
)


def _print_version(value: bool) -> None:
    if value:
        print(f"finkg {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", help="Print the version and exit.", callback=_print_version, is_eager=True)
    ] = False,
) -> None:
    return None


# Top-level commands, then the groups, in the order `finkg --help` has always listed them.
app.command()(config.init)
app.command("config")(config.show_config)
app.command()(memo.memo)
app.command()(kg.extract)
app.command()(cypher.cypher)
app.command("cluster")(kg.cluster)
app.command("report")(report.report)
app.command("ask")(agent.ask)
app.add_typer(facts.app, name="facts")
app.command("browser")(browser.browser)
app.add_typer(neo4j.app, name="neo4j")
app.add_typer(db.app, name="db")
app.add_typer(ingest.app, name="ingest")
app.command("fetch")(fetch.fetch)
app.add_typer(eval_.app, name="eval")
app.add_typer(models.app, name="models")
app.add_typer(audit.app, name="audit")
app.add_typer(graph.app, name="graph")
app.add_typer(train.app, name="train")
app.add_typer(agent.experience_app, name="experience")


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` (typer turns Ctrl-C into ``Exit(130)``) was caused by a KeyboardInterrupt."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def main() -> None:
    """Console entry point: runs the app and turns finkg's own errors into one line on stderr.

    A :class:`kg.errors.FinkgError` prints ``error: <message>`` and exits with its ``exit_code`` (2);
    a Neo4j ``ClientError`` prints its code and message and exits 2; Ctrl-C prints ``interrupted``
    and exits 130. Any other exception is a bug and keeps its traceback.
    """
    from kg.errors import FinkgError

    try:
        app()
    except FinkgError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err.print("interrupted", highlight=False)
        sys.exit(130)
    except SystemExit as exc:
        if exc.code == 130 and _interrupted(exc):
            err.print("interrupted", highlight=False)
        raise
    except Exception as exc:
        from neo4j.exceptions import ClientError

        if not isinstance(exc, ClientError):
            raise
        # Cypher syntax, unknown procedure, constraint violation ...
        err.print(f"[red]Neo4j refused the query:[/red] {exc.code}: {escape(str(exc.message))}", soft_wrap=True)
        sys.exit(2)
