"""What every command shares: the consoles, failing with one line, progress bars, wide
tables, the option types, and the assessment printout of ``assess`` and ``measure``."""

from __future__ import annotations

import contextlib
import json
import sys
from enum import Enum
from pathlib import Path

import typer
import yaml
from rich.console import Console

from .. import datasets, stats
from ..errors import RouterlabError

#: Errors and progress go to stderr; results to stdout.
err = Console(stderr=True, soft_wrap=True)


class Mode(str, Enum):
    strict = "strict"
    notebook = "notebook"


class InputFormat(str, Enum):
    auto = "auto"
    pastrami = "pastrami"
    routerlab = "routerlab"


class SearchKind(str, Enum):
    pdr = "pdr"
    ndr = "ndr"
    both = "both"


class progress:
    """A rich progress bar; the context value advances it to (done, total)."""

    def __init__(self, what: str, total: int):
        from rich.progress import Progress

        self._p = Progress(console=err, transient=True)
        self._task = self._p.add_task(what, total=total)

    def __enter__(self):
        self._p.start()
        return lambda done, total: self._p.update(self._task, completed=done)

    def __exit__(self, *exc):
        self._p.stop()
        return False


def wide() -> Console:
    """A console whose tables are not cut to 80 columns when output goes to a file or pipe."""
    return Console() if sys.stdout.isatty() else Console(width=240)


@contextlib.contextmanager
def resumable(what: str = "trials", code: int = 2):
    """Around a measurement: Ctrl-C says that finished ``what`` are kept (a rerun resumes)
    and exits 130; a library error fails with its one line and exit ``code``."""
    try:
        yield
    except KeyboardInterrupt:
        err.print(f"interrupted: finished {what} are kept; run the same command again to resume")
        raise typer.Exit(130)
    except RouterlabError as e:
        fail(str(e), code)


def fail(msg: str, code: int = 2):
    err.print(f"[red]routerlab: error:[/red] {msg}", highlight=False)
    raise typer.Exit(code)


def print_assessments(paths: list[Path], params, fmt: str = "auto", as_json: bool = False):
    """One line (or JSON object) per experiment of ``paths``: verdict, PDR, saturation."""
    pdr = params.pdr
    failed = 0
    if not as_json:
        typer.echo(f"{'verdict':7}  {'PDR@' + format(pdr, '.2%'):>16}  {'saturation':>12}  loads  runs  file")
    for label, trials, error in datasets.iter_inputs(paths, fmt):
        if error is not None:
            failed += 1
            err.print(f"[red]routerlab: error:[/red] {error}", highlight=False)
            continue
        for a in stats.assess(trials, params=params):
            rec = a.record()
            name = label if a.experiment == Path(label).stem or a.experiment == "experiment" else f"{label}::{a.experiment}"
            if as_json:
                typer.echo(json.dumps({"file": name, **rec}))
            else:
                sat = f"{a.saturation_load:.0f}" if a.saturation_load is not None else "-"
                runs = str(rec["runs_min"]) if rec["runs_min"] == rec["runs_max"] else f"{rec['runs_min']}-{rec['runs_max']}"
                typer.echo(f"{rec['verdict']:7}  {str(a.pdr):>16}  {sat:>12}  {rec['loads']:5}  {runs:>4}  {name}")
    if failed:
        raise typer.Exit(1)


def parse_params(items: list[str]) -> dict:
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            fail(f"-p {item!r}: expected name=value")
        try:
            out[name.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            out[name.strip()] = value
    return out
