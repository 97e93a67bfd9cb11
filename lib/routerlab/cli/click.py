"""The Click course: ``click check``, ``click try``, ``click list``, ``click copy``, ``click doc``."""

from __future__ import annotations

import functools
import os
import subprocess

import click
from click.exceptions import Exit

from routerlab.cli.app import argument, click_app
from routerlab.cli.copying import copy_options, say_written
from routerlab.cli.common import checked_file, err, exercise_options, extra_checks_option, fail, format_option, read_extra, report_check, run_try, students_file


#: EXERCISE, the student's .click file and --solution, of ``click check`` and ``click try``.
_exercise = functools.partial(exercise_options, "Exercise, as `routerlab click list` names it (forward, iprouter, ...).",
                              "--config", "Your .click file (default: the exercise's skeleton, as you edited it).")


@click_app.command("check")
@_exercise("Check")
@click.option("--memory/--testbed", default=None,
              help="Run the router from memory (no root: FromDevice and ToDevice become sockets) or on the "
                   "testbed (root). Default: the testbed as root, else memory.")
@extra_checks_option("in = $IN_DEV, out = $OUT_DEV")
@format_option
def click_check(exercise, config, solution, memory, extra, fmt):
    """Send real frames through your Click configuration and say which expectations pass."""
    from routerlab.course import clickexercises
    from routerlab.testbed import userns

    config = _config(exercise, config, solution)
    extra = read_extra(extra)
    if memory is None and os.geteuid() != 0:
        err.print("no root: on a testbed in user and network namespaces of this check's own"
                  if exercise == "measure" and userns.missing() is None else
                  "no root: checking from memory (FromDevice and ToDevice replaced by sockets); "
                  "as root the check runs on the testbed's links", highlight=False)
    report_check(lambda: clickexercises.check(exercise, config, solution=solution, memory=memory, extra=extra), fmt,
                 {"track": "click", "exercise": exercise, "checked": checked_file(config, solution)})


@click_app.command("try")
@_exercise("Try", packets=True)
@click.option("--memory/--testbed", default=None,
              help="Run the router from memory (no root) or on the testbed (root). Default: the testbed as root, "
                   "else memory.")
def click_try(exercise, packets, config, solution, memory):
    """Start your router and send it packets you describe; print what came back on which link."""
    from routerlab.course import clickexercises

    config = _config(exercise, config, solution)
    run_try(packets, lambda lines: clickexercises.try_router(exercise, lines, config, solution=solution,
                                                             memory=memory, show=click.echo))


@click_app.command("list")
def click_list():
    """The exercises in the order of the course, with the time each takes and its folder."""
    from routerlab.course import clickexercises
    from routerlab.errors import RouterlabError

    try:
        course = clickexercises.course()
    except RouterlabError as e:
        fail(str(e))
    for i, (name, minutes, folder) in enumerate(course, 1):
        click.echo(f"{i}. {name:13} about {minutes:3} min  {folder}")


@click_app.command("copy")
@copy_options
def click_copy(dest, solutions, overwrite):
    """Copy the exercises out to edit them (a pip install keeps them inside the package). Check a copy with `routerlab click check EXERCISE --config FILE`, or from the exercise's folder without --config (the measure exercise uses iprouter's)."""
    from routerlab.course import handout

    say_written(dest, lambda: handout.copy_track("click", dest, solutions=solutions, overwrite=overwrite))


@click_app.command("doc")
@argument("element", help="Element class, e.g. IPFilter or FromDevice; 'language' for the Click language.")
def click_doc(element):
    """Show an element's manual page, as installed with this Click build."""
    from routerlab.course import clickrouter
    from routerlab.errors import RouterlabError

    try:
        page = clickrouter.element_doc(element)
    except RouterlabError as e:
        fail(str(e))
    try:
        raise Exit(subprocess.call(["man", "-l", str(page)]))
    except FileNotFoundError:
        fail(f"'man' is not installed; the page is {page}")


def _config(exercise: str, config, solution: bool):
    """--config, or the exercise's file in the working folder (a copy), or None."""
    from routerlab.course import clickexercises

    name = clickexercises.MEASURED if exercise == "measure" else exercise
    return students_file(config, solution, name, ".click",
                         lambda given: clickexercises.config_path(exercise, given, solution), "--config")
