"""The figures and the notebooks: ``figures`` (the main job), ``gallery``, ``notebooks copy``."""

from __future__ import annotations

import os
import time
from pathlib import Path

import click
from click.exceptions import Exit

from routerlab.errors import RouterlabError
from routerlab.cli.app import app, argument, notebooks_app
from routerlab.cli.common import err, fail, parse_params, PATH


@app.command()
@click.option("--out", type=PATH, default=Path("figures"),
              help="Output folder: executed notebooks and figures (PNG, SVG).")
@click.option("--only", multiple=True, help="Run only this notebook (name or unique prefix); repeatable.")
@click.option("-p", "--parameter", "param", multiple=True,
              help="name=value passed to every notebook that declares it; repeatable.")
@click.option("--jobs", "-j", type=click.IntRange(min=1),
              help="Notebooks run at the same time (default: the CPUs this process may use).")
def figures(out, only, param, jobs):
    """Run every notebook with papermill in replay mode and save its figures (the main job)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from routerlab.publish import notebooks

    params = parse_params(param)
    try:
        books = notebooks.list_notebooks()
    except RouterlabError as e:
        fail(str(e))
    marks = {"ok": "[green]ok[/green]", "failed": "[red]FAILED[/red]", "skipped": "[yellow]skipped[/yellow]"}
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=err.console()) as prog:
        task = prog.add_task("notebooks", total=len(only) if only else len(books))

        def report(r):
            prog.console.print(f"{marks[r.status]:>8} {r.name} ({r.seconds:.1f} s)"
                               + (f": {r.message}" if r.message else ""), highlight=False)
            prog.advance(task)

        t0 = time.perf_counter()
        try:
            results = notebooks.run_all(out, only=list(only) or None, parameters=params, on_result=report, jobs=jobs)
        except RouterlabError as e:
            fail(str(e))
        wall = time.perf_counter() - t0
    n = {s: sum(r.status == s for r in results) for s in ("ok", "failed", "skipped")}
    err.print(f"{n['ok']} ok, {n['failed']} failed, {n['skipped']} skipped; figures in {out.resolve()}",
              highlight=False)
    # The benchmark of the main job: its wall time next to its floor in this run, the
    # longest notebook's own time (the job cannot end before its slowest notebook).
    if results:
        at_once = min(jobs or len(os.sched_getaffinity(0)), len(results))
        longest = max(results, key=lambda r: r.seconds)
        err.print(f"routerlab figures: {wall:.1f} s wall for {len(results)} notebooks, {at_once} at a time; "
                  f"the longest, {longest.name}, took {longest.seconds:.1f} s of it: {wall / longest.seconds:.2f}x "
                  "that floor", highlight=False)
    if n["failed"]:
        raise Exit(1)


@app.command()
@click.option("--check", is_flag=True,
              help="Draw nothing: say whether every figure set was drawn from the data now committed.")
@click.option("--only", multiple=True, help="Draw only this figure set (notebook name); repeatable.")
@click.option("--pastrami-dir", type=PATH,
              help="A local copy of the PASTRAMI raw files (default: $ROUTERLAB_PASTRAMI_DIR, else the download cache).")
def gallery(check, only, pastrami_dir):
    """Draw every figure set into docs/gallery/ (with docs/gallery.md and the README's table), each
    from only the data it names; or --check that they are current."""
    from routerlab.publish import gallery as gal

    try:
        if check:
            problems = gal.check()
            for line in problems:
                click.echo(line)
            if problems:
                err.print("the gallery is not current: run routerlab gallery", highlight=False)
                raise Exit(1)
            click.echo(f"gallery current: {len(gal.figure_sets())} figure sets")
            return
        t0 = time.perf_counter()
        sets = gal.build(str(pastrami_dir) if pastrami_dir else None, list(only) or None,
                         progress=lambda step: err.print(f"drawing {step.what}...", highlight=False))
    except RouterlabError as e:
        fail(str(e), 1)
    n = sum(len(s.images) for s in sets)
    click.echo(f"{len(sets)} figure sets, {n} figures in {gal.FOLDER}; {gal.PAGE} and README.md's table "
               f"written ({time.perf_counter() - t0:.0f} s)")


@notebooks_app.command("copy")
@argument("dest", type=PATH, help="Folder to put the notebooks in (created).")
@click.option("--overwrite", is_flag=True, help="Replace notebooks already there.")
def notebooks_copy(dest, overwrite):
    """Copy every notebook into DEST, editable: how a course hands them to students."""
    from routerlab.publish import notebooks

    try:
        written = notebooks.copy_notebooks(dest, overwrite=overwrite)
    except RouterlabError as e:
        fail(str(e))
    for p in written:
        click.echo(f"copied {p}")
    kept = len(notebooks.list_notebooks()) - len(written)
    if kept:
        click.echo(f"kept {kept} notebook(s) already in {dest} (--overwrite replaces them)")
    click.echo(f"open them with: jupyter lab {dest}")
