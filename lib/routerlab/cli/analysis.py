"""Analysis: ``assess`` and ``fetch-pastrami``."""

from __future__ import annotations

import click

from routerlab import defaults
from routerlab.errors import RouterlabError
from routerlab.cli.app import app, argument
from routerlab.cli.common import fail, INPUT_FORMAT, MODE, PATH, print_assessments, progress


@app.command()
@argument("paths", nargs=-1, required=True, type=PATH,
          help="PASTRAMI raw files or folders, or routerlab datasets (file or folder).")
@click.option("--mode", type=MODE, default="strict",
              help="strict = the paper's test; notebook = the authors' published notebook.")
@click.option("--pdr", type=float, default=defaults.PDR_FRACTION, help="PDR fraction (0.005 = PDR@0.5%).")
@click.option("--eta", type=float, default=defaults.ETA, help="TIR threshold of saturation.")
@click.option("--entry-multiplier", type=float, default=defaults.ENTRY_MULTIPLIER,
              help="m: the candidate needs TIR < eta*m (strict mode).")
@click.option("--plr-floor", type=float, default=defaults.PLR_FLOOR, help="PLR floor used by the verdict and log axes.")
@click.option("--format", "fmt", type=INPUT_FORMAT, default="auto", help="Input format.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def assess(paths, mode, pdr, eta, entry_multiplier, plr_floor, fmt, as_json):
    """GOOD/BAD verdict, PDR and saturation load of each experiment."""
    from routerlab.analysis import stats

    try:
        params = stats.VerdictParams(pdr=pdr, eta=eta, entry_multiplier=entry_multiplier,
                                     plr_floor=plr_floor, mode=mode)
    except RouterlabError as e:
        fail(str(e))
    print_assessments(list(paths), params, fmt, as_json)


@app.command("fetch-pastrami")
def fetch_pastrami():
    """Download the published PASTRAMI raw data (its raw files and misure.zip, pinned by commit and SHA-256) into the cache."""
    from rich import get_console

    from routerlab.analysis import pastrami

    try:
        # on stdout, where this command has always drawn it
        with progress(console=get_console(), transient=False) as shown:
            path = pastrami.fetch(progress=shown)
    except RouterlabError as e:
        fail(str(e), 1)
    click.echo(str(path))
