"""P4 programs on bmv2: ``p4 build``, ``p4 check``, ``p4 try``, ``p4 run``, ``p4 copy``."""

from __future__ import annotations

import functools
import os

import click

from routerlab.errors import RouterlabError
from routerlab.cli.app import argument, p4_app
from routerlab.cli.copying import copy_options, say_written
from routerlab.cli.common import checked_file, err, exercise_options, extra_checks_option, fail, format_option, packets_argument, PATH, read_extra, report_check, run_try, students_file


@p4_app.command("build")
@argument("program", nargs=-1, help="Programs (router, firewall, gre, shortcut) or .p4 files; default all.")
@click.option("--skeletons/--no-skeletons", default=True,
              help="Also compile the course skeletons (they compile; they do not pass).")
def p4_build(program, skeletons):
    """Compile the P4 programs with p4c-bm2-ss (output in the user cache, not the checkout)."""
    from routerlab.engines import p4

    names = list(program) or list(p4.PROGRAMS)
    try:
        for name in names:
            click.echo(f"{p4.source(name)}: {p4.compile_program(name)}")
            if skeletons and name in p4.PROGRAMS:
                click.echo(f"{p4.source(name, solution=False)}: {p4.compile_program(name, solution=False)}")
    except RouterlabError as e:
        fail(str(e))


#: EXERCISE, the student's .p4 file and --solution, of ``p4 check`` and ``p4 try``.
_exercise = functools.partial(exercise_options, "Exercise: router, firewall, gre or shortcut.", "--program",
                              "Your .p4 file (default: the exercise's skeleton).")


@p4_app.command("check")
@_exercise("Check")
@click.option("--log", type=PATH, metavar="FILE",
              help="Write bmv2's log of every packet the check sent (parser states, tables, actions) to FILE.")
@extra_checks_option("in = port 0, out = port 1")
@format_option
def p4_check(exercise, program, solution, log, extra, fmt):
    """Send real packets through your program on bmv2 and say which expectations pass."""
    from routerlab.course import p4exercises

    program = _program(exercise, program, solution)
    extra = read_extra(extra)
    _say_namespaces()
    if log:
        err.print(f"bmv2's log of every packet: {log}", highlight=False)
    report_check(lambda: p4exercises.check(exercise, program, solution=solution, log=log, extra=extra), fmt,
                 {"track": "p4", "exercise": exercise, "checked": checked_file(program, solution)})


@p4_app.command("try")
@_exercise("Try", packets=True)
def p4_try(exercise, packets, program, solution):
    """Start your program on bmv2 with the exercise's entries and send it packets you describe; print what came back on which port.

    A line 'write {...}' (one table entry, JSON as in entries.json) writes it over
    P4Runtime before the next packet."""
    from routerlab.course import p4exercises

    program = _program(exercise, program, solution)
    _say_namespaces()
    run_try(packets, lambda lines: p4exercises.try_program(exercise, lines, program, solution=solution,
                                                           show=click.echo), commands=("write",))


@p4_app.command("run")
@argument("program", type=PATH, help="A .p4 file for v1model (e.g. a p4lang/tutorials exercise, unmodified).")
@packets_argument
@click.option("--entries", type=PATH, required=True, metavar="FILE",
              help="Table entries in the runtime-JSON format of p4lang/tutorials (sN-runtime.json) "
                   "or of the course (entries.json).")
def p4_run(program, packets, entries):
    """Start PROGRAM on bmv2 with the entries of FILE (over P4Runtime where simple_switch_grpc
    is installed) and send it packets you describe; print what came back on which port
    (port 0: towards the generator, 1: towards the sink)."""
    from routerlab.course import p4exercises

    _say_namespaces()
    run_try(packets, lambda lines: p4exercises.run_program(program, entries, lines, show=click.echo),
            commands=("write",))


@p4_app.command("copy")
@copy_options
def p4_copy(dest, solutions, overwrite):
    """Copy the exercises (and include/) out to edit them (a pip install keeps them inside the package). Check a copy with `routerlab p4 check EXERCISE --program FILE`, or from the exercise's folder without --program."""
    from routerlab.course import handout

    say_written(dest, lambda: handout.copy_track("p4", dest, solutions=solutions, overwrite=overwrite))


def _say_namespaces():
    if os.geteuid() != 0:
        err.print("no root: bmv2 runs on a testbed in user and network namespaces of this command's own",
                  highlight=False)


def _program(exercise: str, program, solution: bool):
    """--program, or the exercise's file in the working folder (a copy), or None."""
    from routerlab.engines import p4

    if exercise not in p4.PROGRAMS:
        fail(f"unknown exercise {exercise!r}; known: {', '.join(p4.PROGRAMS)}")
    return students_file(program, solution, exercise, ".p4", lambda given: p4.source(given or exercise, solution),
                         "--program")
