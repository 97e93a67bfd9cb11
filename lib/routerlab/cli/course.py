"""The courses' machine, the instructor's guide and the handout: ``course measure``,
``course guide``, ``course handout``."""

from __future__ import annotations

import difflib
from pathlib import Path

import click

from routerlab.errors import RouterlabError
from routerlab.cli.app import course_app
from routerlab.cli.common import err, fail, PATH
from routerlab.cli.copying import dest_argument, overwrite_option, say_written

#: Where the committed facts and guide are, in a clone.
FACTS_DIR, GUIDE = Path("datasets/course-machine"), Path("docs/course.md")


@course_app.command("measure")
@click.option("--out", type=PATH, default=FACTS_DIR, show_default=True,
              help="Folder to write facts.json to (readers.csv, if there, is kept).")
@click.option("--builds", is_flag=True,
              help="Also build the courses' engines from source, cold, into an empty folder, timed: most of an "
                   "hour on every core, so run it on a quiet machine. Without it, the build route facts.json "
                   "holds already is kept.")
@click.option("--image", is_flag=True,
              help="Only take the course image's route (with Podman, as root: make image without its layer cache, "
                   "the image's size, a first check in it), keeping every other fact in --out.")
def course_measure(out, builds, image):
    """Run every exercise's solution check as this user, measure the course's disk, and take the routes to the
    courses' engines (the instructor's bundle; with --builds, the sources): what a student's machine needs."""
    from click.exceptions import Exit

    from routerlab.course import machine

    try:
        if image:
            machine.measure_image(out, say=lambda line: err.print(line, highlight=False))
            click.echo(f"{Path(out) / machine.FACTS}")
            return
        machine.measure(out, builds=builds,
                        progress=lambda step: err.print(f"[{step.done + 1}/{step.total}] {step.what}", highlight=False))
    except KeyboardInterrupt:
        err.print("interrupted: nothing written, the measured commands stopped and their folders removed")
        raise Exit(130)
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


@course_app.command("image")
@click.option("--name", default=None, metavar="NAME:TAG",
              help="The image's name (default: routerlab-course:VERSION, and :latest).")
@click.option("--bundle", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="An engines bundle (routerlab engines pack) holding click, bmv2-log and p4c; "
                   "default: a bundle of the installed ones.")
@click.option("--context", type=PATH, default=None,
              help="Stage the build's context (Containerfile, wheel, engines bundle) into this folder and keep it.")
@click.option("--stage-only", is_flag=True,
              help="Only stage the context (with --context), for docker build or another builder.")
@click.option("--base-only", is_flag=True,
              help="Only make the base image (from Debian's packages where Podman lacks it).")
def course_image(name, bundle, context, stage_only, base_only):
    """Build the course image (the clone's Containerfile) with Podman: routerlab, the courses' engines from a bundle, JupyterLab, a non-root user."""
    from routerlab.course import image

    say = lambda line: err.print(line, highlight=False)  # noqa: E731
    try:
        if base_only:
            image.base(say)
            return
        if stage_only:
            if context is None:
                fail("--stage-only needs --context DIR, the folder to stage into", code=2)
            sha = image.stage(Path(context), say, bundle)
            click.echo(f"{context} (build with --build-arg ENGINES_SHA256={sha})")
            return
        built = image.build(name, say, keep=context, bundle=bundle)
    except KeyboardInterrupt:
        from click.exceptions import Exit

        err.print("interrupted: the staged context removed (a --context folder is kept), no image tagged")
        raise Exit(130)
    except RouterlabError as e:
        fail(str(e))
    click.echo(built)


@course_app.command("handout")
@dest_argument("the course repository's files")
@overwrite_option
def course_handout(dest, overwrite):
    """Write a course repository's files without the solutions: both tracks' exercises (click/, p4/), the autograder, .github/workflows/grade.yml, which runs every exercise's check on each push, and .devcontainer/devcontainer.json (the course image in Codespaces). Commit the folder as each student's repository."""
    from routerlab.course import handout

    say_written(dest, lambda: handout.handout(dest, overwrite=overwrite))
