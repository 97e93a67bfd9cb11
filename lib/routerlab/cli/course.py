"""The courses' machine and the instructor's guide: ``course measure``, ``course guide``."""

from __future__ import annotations

import difflib
from pathlib import Path

import click

from routerlab.errors import RouterlabError
from routerlab.cli.app import course_app
from routerlab.cli.common import err, fail, PATH

#: Where the committed facts and guide are, in a clone.
FACTS_DIR, GUIDE = Path("datasets/course-machine"), Path("docs/course.md")


@course_app.command("measure")
@click.option("--out", type=PATH, default=FACTS_DIR, show_default=True,
              help="Folder to write facts.json to (readers.csv, if there, is kept).")
def course_measure(out):
    """Run every exercise's solution check as this user and measure the course's disk: what a student's machine needs."""
    from routerlab.course import machine

    try:
        machine.measure(out, progress=lambda step: err.print(f"[{step.done + 1}/{step.total}] {step.what}",
                                                             highlight=False))
    except RouterlabError as e:
        fail(str(e))
    click.echo(f"{Path(out) / machine.FACTS}")


@course_app.command("guide")
@click.option("--facts", "folder", type=PATH, default=FACTS_DIR, show_default=True,
              help="Folder with facts.json (routerlab course measure) and readers.csv.")
@click.option("--out", type=PATH, default=GUIDE, show_default=True, help="The guide to write.")
@click.option("--check", is_flag=True, help="Write nothing: fail, printing the diff, where --out differs.")
def course_guide(folder, out, check):
    """Render the instructor's guide (docs/course.md) from the measured facts."""
    from routerlab.course import machine

    try:
        text = machine.guide(machine.read_facts(folder), machine.read_readers(folder))
    except RouterlabError as e:
        fail(str(e))
    if check:
        old = Path(out).read_text() if Path(out).is_file() else ""
        if old != text:
            click.echo("".join(difflib.unified_diff(old.splitlines(True), text.splitlines(True), str(out),
                                                    "regenerated")))
            fail(f"{out} differs from what {folder} gives: run routerlab course guide", code=1)
        click.echo(f"{out}: ok")
        return
    Path(out).write_text(text)
    click.echo(str(out))
