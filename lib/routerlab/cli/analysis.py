"""Analysis: ``assess`` and ``fetch-pastrami``."""

from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from .. import defaults
from ..errors import RouterlabError
from .app import app
from .common import InputFormat, Mode, fail, print_assessments

@app.command()
def assess(
    paths: List[Path] = typer.Argument(..., help="PASTRAMI raw files or folders, or routerlab datasets (file or folder)."),
    mode: Mode = typer.Option(Mode.strict, help="strict = the paper's test; notebook = the authors' published notebook."),
    pdr: float = typer.Option(defaults.PDR_FRACTION, help="PDR fraction (0.005 = PDR@0.5%)."),
    eta: float = typer.Option(defaults.ETA, help="TIR threshold of saturation."),
    entry_multiplier: float = typer.Option(defaults.ENTRY_MULTIPLIER, help="m: the candidate needs TIR < eta*m (strict mode)."),
    plr_floor: float = typer.Option(defaults.PLR_FLOOR, help="PLR floor used by the verdict and log axes."),
    fmt: InputFormat = typer.Option(InputFormat.auto, "--format", help="Input format."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per line."),
):
    """GOOD/BAD verdict, PDR and saturation load of each experiment."""
    from .. import stats

    try:
        params = stats.VerdictParams(pdr=pdr, eta=eta, entry_multiplier=entry_multiplier,
                                     plr_floor=plr_floor, mode=mode.value)
    except RouterlabError as e:
        fail(str(e))
    print_assessments(paths, params, fmt.value, as_json)


@app.command("fetch-pastrami")
def fetch_pastrami():
    """Download the published PASTRAMI raw data (107 files, pinned by commit and hash) into the cache."""
    from .. import pastrami

    try:
        path = pastrami.fetch()
    except RouterlabError as e:
        fail(str(e), 1)
    typer.echo(str(path))
