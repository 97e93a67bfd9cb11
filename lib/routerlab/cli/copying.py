"""What the commands that copy the courses out share (``click copy``, ``p4 copy``,
``course handout``): DEST and the copy's options, and the one line that says what was
written. It imports no copying itself (each command imports
:mod:`routerlab.course.handout`), so that a command's chain of imports stays short."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import click

from routerlab.cli.app import argument
from routerlab.cli.common import fail, PATH
from routerlab.errors import RouterlabError

#: ``--overwrite``: a file already there is a student's work, kept without it.
overwrite_option = click.option("--overwrite", is_flag=True, help="Replace files already there.")


def dest_argument(what: str):
    """DEST, the folder ``what`` goes into (made if missing)."""
    return argument("dest", type=PATH, help=f"Folder to copy {what} into (created).")


def copy_options(f):
    """DEST, ``--solutions`` and ``--overwrite`` of ``click copy`` and ``p4 copy``."""
    f = overwrite_option(f)
    f = click.option("--solutions", is_flag=True, help="Copy the solutions too (the instructor's copy).")(f)
    return dest_argument("the exercises")(f)


def say_written(dest: Path, write: Callable[[], list[Path]]):
    """Run ``write()``, which returns the files it wrote, and say how many on one line
    (none: they were all there); a library error fails with its one line."""
    try:
        written = write()
    except RouterlabError as e:
        fail(str(e))
    click.echo(f"{len(written)} files written to {dest}" + ("" if written else " (all there already: --overwrite)"))
