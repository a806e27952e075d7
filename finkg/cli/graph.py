"""``finkg graph analyze | export``: the extracted knowledge graph through networkx."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from finkg import api
from finkg.cli._common import FormatOption, console, day, progress
from finkg.output import Format, render

app = typer.Typer(help="Graph analytics of the extracted triples (networkx) and exports for Gephi or yEd.")

AsOfOption = Annotated[
    str | None,
    typer.Option("--as-of", help="Only triples whose source was public by the end of this day (YYYY-MM-DD, UTC)."),
]
FamilyOption = Annotated[
    list[str], typer.Option("--family", "-f", help="Only triples from documents of this source family (repeatable).")
]
DocumentOption = Annotated[
    list[str], typer.Option("--document", "-d", help="Only triples from this Document id (repeatable).")
]


class ExportFormat(StrEnum):
    graphml = "graphml"
    gexf = "gexf"


@app.command()
def analyze(
    as_of: AsOfOption = None,
    family: FamilyOption = [],
    document: DocumentOption = [],
    top: Annotated[int, typer.Option(min=1, help="Entities shown per community.")] = 5,
    communities: Annotated[int, typer.Option(min=1, help="Communities shown, largest first.")] = 10,
    alpha: Annotated[float, typer.Option(help="PageRank damping factor.")] = 0.85,
    seed: Annotated[int, typer.Option(help="Louvain's random seed (same seed, same communities).")] = 0,
    resolution: Annotated[float, typer.Option(help="Louvain resolution (above 1: smaller communities).")] = 1.0,
    write: Annotated[
        bool, typer.Option("--write/--no-write", help="Store the figures on the Entity nodes (default).")
    ] = True,
    fmt: FormatOption = Format.table,
) -> None:
    """PageRank, degree, connected components and Louvain communities of the extracted triples.

    Written back as Entity properties pagerank, degree, component, community (so Neo4j Browser can size
    and colour by them); prints the top entities of each community.
    """
    with progress() as p:
        result = api.graph_analyze(
            as_of=day(as_of, "--as-of"),
            families=family or None,
            documents=document or None,
            alpha=alpha,
            seed=seed,
            resolution=resolution,
            write=write,
            progress=p,
        )
    render(result.rows(), fmt, console, title="finkg graph analyze")
    render(result.analysis.top(top, communities), fmt, console, title="communities, top entities by PageRank")


@app.command("export")
def export_(
    out: Annotated[Path, typer.Argument(help="The file to write (e.g. fomc.graphml).", dir_okay=False)],
    export_format: Annotated[ExportFormat, typer.Option("--format", help="graphml or gexf")] = ExportFormat.graphml,
    as_of: AsOfOption = None,
    family: FamilyOption = [],
    document: DocumentOption = [],
) -> None:
    """Write the extracted triples as GraphML or GEXF (Gephi, yEd), with each entity's figures.

    An empty subgraph is an error and writes nothing.
    """
    summary = api.graph_export(
        out,
        fmt=export_format.value,
        as_of=day(as_of, "--as-of"),
        families=family or None,
        documents=document or None,
    )
    render(summary.rows(), Format.table, console, title="finkg graph export")
