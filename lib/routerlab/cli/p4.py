"""P4 programs on bmv2: ``p4 build``, ``p4 check``."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..errors import RouterlabError
from .app import p4_app
from .common import fail, report_check

@p4_app.command("build")
def p4_build(
    program: List[str] = typer.Argument(None, help="Programs (router, firewall, gre, shortcut) or .p4 files; default all."),
    skeletons: bool = typer.Option(True, help="Also compile the course skeletons (they compile; they do not pass)."),
):
    """Compile the P4 programs with p4c-bm2-ss (output in the user cache, not the checkout)."""
    from ..engines import p4

    names = program or list(p4.PROGRAMS)
    try:
        for name in names:
            typer.echo(f"{p4.source(name)}: {p4.compile_program(name)}")
            if skeletons and name in p4.PROGRAMS:
                typer.echo(f"{p4.source(name, solution=False)}: {p4.compile_program(name, solution=False)}")
    except RouterlabError as e:
        fail(str(e))


@p4_app.command("check")
def p4_check(
    exercise: str = typer.Argument(..., help="Exercise: router, firewall, gre or shortcut."),
    program: Optional[Path] = typer.Option(None, help="Your .p4 file (default: the exercise's skeleton)."),
    solution: bool = typer.Option(False, "--solution", help="Check the reference solution instead."),
):
    """Send real packets through your program on bmv2 and say which expectations pass."""
    from .. import p4exercises

    report_check(lambda: p4exercises.check(exercise, program, solution=solution))
