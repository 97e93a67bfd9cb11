"""Campaign files: ``campaign show`` (the steps, checked, and how long they take) and
``campaign run`` (the steps, in order, into one dataset folder); the work is in
:mod:`routerlab.publish.campaign`."""

from __future__ import annotations

import click

from routerlab.errors import RouterlabError
from routerlab.cli.app import argument, campaign_app
from routerlab.cli.common import err, fail, generator_option, PATH, progress, resumable, testbed_option, testbed_settings

campaign_file = argument("file", type=PATH, help="A campaign file (YAML), e.g. datasets/testbed-bmv2/campaign.yaml, or the dataset folder that holds one.")


def _minutes(seconds: float) -> str:
    return f"about {seconds / 60:.1f} min" if seconds >= 60 else f"about {seconds:.0f} s"


def _plan(c, finished=frozenset()) -> list[str]:
    """The campaign's steps as the commands they equal, each with its estimate, then the
    total (and what is left when ``finished`` step numbers are done)."""
    from routerlab.publish import campaign

    lines = []
    estimates = campaign.estimate(c)
    for e in estimates:
        cost = (f"{e.trials} {e.unit}, {e.trial_seconds:.0f} s + {e.overhead_seconds:.0f} s around them: "
                f"{_minutes(e.seconds)}")
        if e.step is None:
            lines.append(f"the generator's ceiling, measured once for the steps that take it: {_minutes(e.seconds)}")
            continue
        done = " (finished)" if e.step.number in finished else ""
        lines += [f"step {e.step.number} of {len(c.steps)}{done}: {e.step.command('C' if c.ceiling else None)}",
                  f"    {cost}"]
    total = sum(e.seconds for e in estimates)
    left = sum(e.seconds for e in estimates if e.step is not None and e.step.number not in finished)
    lines.append(f"estimated total: {_minutes(total)} ({sum(e.trial_seconds for e in estimates):.0f} s of trials, "
                 f"{sum(e.overhead_seconds for e in estimates):.0f} s around them: "
                 f"{campaign.TRIAL_GAP_S:g} s per trial, {campaign.BRING_UP_S:g} s per testbed, "
                 f"{campaign.CEILING_S:g} s per ceiling)"
                 + (f"; {_minutes(left)} left" if finished else ""))
    return lines


@campaign_app.command("show")
@campaign_file
def campaign_show(file):
    """The campaign's steps, checked, as the routerlab commands they equal (C: the ceiling measured at the start), and how long they take (no root needed)."""
    from routerlab.publish import campaign

    try:
        c = campaign.load(file)
    except RouterlabError as e:
        fail(str(e))
    click.echo(f"{c.path} ({c.label})")
    click.echo(c.description)
    for line in _plan(c):
        click.echo(line)


@campaign_app.command("run")
@campaign_file
@click.option("--out", type=PATH, required=True, help="Dataset folder (created, or resumed if it holds this campaign or an earlier version of it with fewer steps).")
@generator_option
@testbed_option
def campaign_run(file, out):
    """Run a campaign file's steps in order into one dataset folder; run again, it resumes (needs root)."""
    from routerlab.publish import campaign

    def say(msg):
        err.print(msg, markup=False, highlight=False)

    with resumable("steps and trials"), progress(unit="trials") as trials:
        c = campaign.load(file)
        state = campaign.Progress.read(out, c)
        for line in _plan(c, {f["step"] for f in state.finished}):
            say(line)
        campaign.run(c, out, announce=say, report=click.echo, settings=testbed_settings(), progress=trials)
