"""``routerlab report``: a dataset's README, facts and figures, generated from its files."""

from __future__ import annotations

import time

import click

from routerlab.errors import RouterlabError
from routerlab.cli.app import app, argument
from routerlab.cli.common import err, fail, PATH


@app.command()
@argument("folders", nargs=-1, type=PATH,
          help="Dataset folders (each with experiments.csv); with --check, default: every committed dataset.")
@click.option("--check", is_flag=True,
              help="Write nothing: regenerate each README.md and facts.json in memory and fail, printing the "
                   "diff, where they differ from the folder's.")
@click.option("--since", type=PATH, metavar="FACTS",
              help="An earlier run's facts.json (or its folder): print what changed since, field by field.")
@click.option("--figures/--no-figures", "draw", default=True, help="Draw the figures the README links.")
def report(folders, check, since, draw):
    """Generate DIR/README.md, DIR/facts.json and DIR/figures/ from a dataset's files and its NOTES.md."""
    from routerlab.analysis import datasets
    from routerlab.publish import report as rep

    if not folders and not check:
        fail("report: name a dataset folder, or give --check to check every committed dataset")
    if since is not None and len(folders) != 1:
        fail("--since: name exactly one dataset folder to compare with")
    start = time.perf_counter()
    try:
        if check:
            folders = folders or datasets.committed()
            bad = 0
            for folder in folders:
                diffs = rep.check(folder)
                bad += bool(diffs)
                click.echo(f"{folder}: {'differs' if diffs else 'ok'}")
                for d in diffs:
                    click.echo(d)
            err.print(f"{len(folders)} datasets checked in {time.perf_counter() - start:.1f} s; "
                      f"{bad} differ" + (" (run routerlab report on each and read the diff)" if bad else ""),
                      highlight=False)
            if bad:
                raise SystemExit(1)
            return
        for folder in folders:
            w = rep.write(folder, draw=draw)
            click.echo(f"{w.readme}, {w.facts.name}" + (f", {len(w.figures)} figures" if w.figures else ""))
        if since is not None:
            _print_changes(since, folders[0])
    except RouterlabError as e:
        fail(str(e), 1)


def _print_changes(since, folder):
    import json
    from pathlib import Path

    from routerlab.publish import facts, report as rep

    def load(p):
        p = Path(p)
        p = p / rep.FACTS if p.is_dir() else p
        try:
            return json.loads(p.read_text())
        except (OSError, ValueError) as e:
            fail(f"--since: {p}: {e}", 1)

    diff = facts.changes(load(since), load(folder))
    click.echo(f"{len(diff)} facts changed since {since}")
    for path, old, new in diff:
        click.echo(f"  {path}: {old!r} -> {new!r}")
