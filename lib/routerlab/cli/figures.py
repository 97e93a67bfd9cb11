"""The figures and the notebooks: ``figures`` (the main job), ``notebooks copy``."""

from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from ..errors import RouterlabError
from .app import app, notebooks_app
from .common import err, fail, parse_params

@app.command()
def figures(
    out: Path = typer.Option(Path("figures"), "--out", help="Output folder: executed notebooks and figures (PNG, SVG)."),
    only: List[str] = typer.Option([], "--only", help="Run only this notebook (name or unique prefix); repeatable."),
    param: List[str] = typer.Option([], "-p", "--parameter", help="name=value passed to every notebook that declares it; repeatable."),
):
    """Run every notebook with papermill in replay mode and save its figures (the main job)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from .. import notebooks

    params = parse_params(param)
    try:
        books = notebooks.list_notebooks()
    except RouterlabError as e:
        fail(str(e))
    marks = {"ok": "[green]ok[/green]", "failed": "[red]FAILED[/red]", "skipped": "[yellow]skipped[/yellow]"}
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=err) as prog:
        task = prog.add_task("notebooks", total=len(only) if only else len(books))

        def report(r):
            prog.console.print(f"{marks[r.status]:>8} {r.name} ({r.seconds:.1f} s)"
                               + (f": {r.message}" if r.message else ""), highlight=False)
            prog.advance(task)

        try:
            results = notebooks.run_all(out, only=only or None, parameters=params, on_result=report)
        except RouterlabError as e:
            fail(str(e))
    n = {s: sum(r.status == s for r in results) for s in ("ok", "failed", "skipped")}
    err.print(f"{n['ok']} ok, {n['failed']} failed, {n['skipped']} skipped; figures in {out.resolve()}",
              highlight=False)
    if n["failed"]:
        raise typer.Exit(1)


@notebooks_app.command("copy")
def notebooks_copy(
    dest: Path = typer.Argument(..., help="Folder to put the notebooks in (created)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace notebooks already there."),
):
    """Copy every notebook into DEST, editable: how a course hands them to students."""
    from .. import notebooks

    try:
        written = notebooks.copy_notebooks(dest, overwrite=overwrite)
    except RouterlabError as e:
        fail(str(e))
    for p in written:
        typer.echo(f"copied {p}")
    kept = len(notebooks.list_notebooks()) - len(written)
    if kept:
        typer.echo(f"kept {kept} notebook(s) already in {dest} (--overwrite replaces them)")
    typer.echo(f"open them with: jupyter lab {dest}")
