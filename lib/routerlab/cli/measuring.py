"""Measuring on the testbed: ``measure``, ``compare``, ``reroute``, ``clean``, ``doctor``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from .. import defaults
from ..errors import RouterlabError
from .app import app
from .common import SearchKind, err, fail, print_assessments, progress, resumable, wide

@app.command()
def measure(
    engine: str = typer.Option(..., help="Router engine: linux, nft, ebpf (click, fastclick, bmv2 where built)."),
    scenario: str = typer.Option("single-flow", help="Scenario preset name or YAML file."),
    loads: Optional[str] = typer.Option(None, help="Offered loads in pps, comma-separated."),
    loads_frac: Optional[str] = typer.Option(None, help="Offered loads as fractions of the generator's measured ceiling."),
    runs: int = typer.Option(10, help="Trials per load (K)."),
    duration: float = typer.Option(2.0, help="Seconds per trial (T)."),
    out: Path = typer.Option(..., help="Dataset folder (created, or resumed if it holds this experiment)."),
    rules: Optional[int] = typer.Option(None, help="Override: firewall rules."),
    routes: Optional[int] = typer.Option(None, help="Override: route-table size."),
    frame_size: Optional[int] = typer.Option(None, help="Override: frame size on the wire, bytes."),
    experiment: str = typer.Option("", help="Experiment id (default ENGINE-SCENARIO)."),
    config: Optional[Path] = typer.Option(None, help="Your own router configuration for the engine to run "
                                                     "(click, fastclick), e.g. a course exercise's router."),
    ceiling: Optional[float] = typer.Option(None, help="Generator ceiling in pps, if known (skips measuring it)."),
    search: Optional[SearchKind] = typer.Option(None, help="Search for PDR/NDR instead of a fixed sweep."),
    pdr: float = typer.Option(defaults.PDR_FRACTION, help="PDR fraction for --search and the verdict."),
    steal_threshold: Optional[float] = typer.Option(
        None, help="A trial with more CPU steal than this (ratio) is disturbed and measured again "
                   "(default: the threshold of the steal_flagged column)."),
    max_repeats: int = typer.Option(defaults.MAX_REPEATS, min=0, help="Repeats of a disturbed trial at most."),
):
    """Measure a router on the namespace testbed: a fixed sweep or a PDR/NDR search."""
    from .. import measuring, search as search_mod, stats

    with resumable("trials"):
        res = measuring.measure(engine, scenario, out, loads=loads, loads_frac=loads_frac, runs=runs,
                                duration=duration, search=search.value if search else None, pdr=pdr,
                                ceiling_pps=ceiling, experiment=experiment, rules=rules, routes=routes,
                                frame_size=frame_size, config=config, announce=err.print,
                                steal_threshold=steal_threshold, max_repeats=max_repeats)
    if search is not None:
        for line in search_mod.format_result(res):
            typer.echo(line)
        return
    print_assessments([out], stats.VerdictParams(pdr=pdr), "routerlab")


@app.command()
def clean(all_runs: bool = typer.Option(False, "--all", help="Also remove runs whose process is still alive.")):
    """Remove namespaces, links and processes that a crashed run left behind."""
    from .. import testbed

    try:
        removed = testbed.clean(all_runs=all_runs)
    except RouterlabError as e:
        fail(str(e))
    for r in removed:
        typer.echo(f"removed {r}")
    if not removed:
        typer.echo("nothing to clean")


@app.command()
def doctor(only: List[str] = typer.Argument(None, help="Check only these (e.g. click bmv2 p4c); default everything.")):
    """Report which engines, generators and kernel features are present, and what is missing.

    Exits 1 when something asked for (default: everything but the optional comparison
    generators) is missing. Engines show their upstream repository and commit."""
    from rich.table import Table

    from .. import doctor as doc

    checks = doc.report()
    if only:
        unknown = sorted(set(only) - {c.name for c in checks})
        if unknown:
            fail(f"nothing called {', '.join(unknown)} to check; known: {', '.join(c.name for c in checks)}")
        checks = [c for c in checks if c.name in only]
    table = Table("", "", "status", "version / what to do", box=None)
    missing = []
    for c in checks:
        table.add_row(c.group, c.name, "[green]ok[/green]" if c.ok else "[yellow]missing[/yellow]", c.detail)
        if not c.ok and (only or not c.optional):
            missing.append(c.name)
    wide().print(table)
    if missing:
        err.print(f"missing: {', '.join(missing)}", highlight=False)
        raise typer.Exit(1)


@app.command()
def compare(
    out: Path = typer.Option(Path("runs/comparison"), help="Dataset folder (resumed if it holds some cells)."),
    engine: List[str] = typer.Option(list(defaults.COMPARISON_ENGINES),
                                     help="Engines (rows of the tables); those not built become grey cells."),
    scenario: List[str] = typer.Option(list(defaults.COMPARISON_SCENARIOS.values()), help="Scenario presets (one table each)."),
    loads_frac: str = typer.Option(",".join(map(str, defaults.COMPARISON_FRACTIONS)),
                                   help="Offered loads, fractions of the generator's ceiling."),
    runs: int = typer.Option(5, help="Trials per cell (K)."),
    duration: float = typer.Option(2.0, help="Seconds per trial (T)."),
    ceiling: Optional[float] = typer.Option(None, help="Generator ceiling in pps, if known (skips measuring it)."),
):
    """Measure the 100GE comparison tables on the testbed: every engine in every scenario."""
    from .. import comparison

    try:
        fracs = [float(x) for x in loads_frac.split(",")]
    except ValueError:
        fail(f"--loads-frac: expected numbers separated by commas, got {loads_frac!r}")
    with resumable("trials"):
        comparison.campaign(out, tuple(engine), tuple(scenario), fractions=fracs, runs=runs, duration=duration,
                           ceiling_pps=ceiling, announce=err.print)
    ours = comparison.ours(out)
    typer.echo(comparison.orderings(comparison.published(), ours).to_string(index=False))


@app.command()
def reroute(
    out: Path = typer.Option(Path("runs/fast-reroute"), help="Folder for samples.csv, runs.csv, experiments.csv."),
    variant: List[str] = typer.Option([], help="frr, nft (ShortCut in nftables), ebpf (in eBPF), p4 (on bmv2); "
                                                "default: every one this machine can run."),
    runs: int = typer.Option(10, min=1, help="Runs per variant."),
    duration: float = typer.Option(30.0, help="Seconds per run."),
    fail_at: float = typer.Option(10.0, help="Seconds into a run when the link fails."),
    converge_after: float = typer.Option(5.0, help="Seconds from the failure to the control plane's update."),
):
    """The fast-reroute experiment: throughput, RTT and load over time, with and without ShortCut."""
    from .. import fastreroute

    if not variant:
        variant, why = fastreroute.available_variants()
        for v, reason in why.items():
            err.print(f"variant {v} left out: {reason}")
    n = runs * len(variant)
    with resumable("runs"):
        with progress("fast reroute runs", n) as advance:
            samples, facts = fastreroute.experiment(tuple(variant), runs, out=out, progress=advance,
                                                    duration=duration, fail_at=fail_at,
                                                    converge_after=converge_after)
    fastreroute.record_environment(out, command=" ".join(sys.argv), when=str(facts["started_at"].min()))
    table, _ = fastreroute.summary(samples, facts, fail_at=fail_at)
    typer.echo(table.to_string(index=False, float_format=lambda x: f"{x:.3g}"))
