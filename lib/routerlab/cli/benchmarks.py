"""Benchmarks: ``bench ...``, each printing a figure."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from .. import datasets
from ..errors import RouterlabError
from .app import bench_app
from .common import SearchKind, fail, progress, resumable

@bench_app.command("assess")
def bench_assess(
    data: Optional[Path] = typer.Option(None, help="PASTRAMI folder (default: $ROUTERLAB_PASTRAMI_DIR or the cache)."),
    repeat: int = typer.Option(5, min=1, help="Timed repetitions; the best is reported."),
):
    """Time assessing every PASTRAMI experiment (parse, then analysis) and print the figures."""
    from .. import bench

    try:
        res = bench.assess_all(data, repeat=repeat)
    except RouterlabError as e:
        fail(str(e), 1)
    typer.echo(bench.format_assess(res))


@bench_app.command("generators")
def bench_generators(
    duration: float = typer.Option(2.0, help="Seconds per trial."),
    runs: int = typer.Option(3, min=1, help="Trials per generator and rate."),
    csv: Optional[Path] = typer.Option(None, help="Also write every trial to this CSV."),
):
    """Rate precision of rlgen, trafgen and tcpreplay at 25/50/75/100% of the ceiling (needs root)."""
    from .. import bench, testbed

    try:
        testbed.require_root()
        ceil, df = bench.generators(duration=duration, runs=runs)
    except RouterlabError as e:
        fail(str(e), 1)
    if csv:
        df.to_csv(csv, index=False)
    typer.echo(bench.format_generators(ceil, df))


@bench_app.command("engines")
def bench_engines(
    out: Path = typer.Option(Path("runs/bench-engines"), help="Folder for the search trials and results."),
    duration: float = typer.Option(2.0, help="Seconds per final trial."),
    engine: List[str] = typer.Option(["linux", "nft", "ebpf"], help="Engines (first = reference); nft runs 50 rules."),
):
    """PDR@0.5% of several engines measured in one run, as ratios to the first (needs root)."""
    from .. import bench

    with resumable("searches", code=1):
        ceil, df = bench.engines_pdr(tuple(engine), out=out, duration=duration)
    typer.echo(f"generator ceiling: {ceil:.0f} pps")
    typer.echo(df.to_string(index=False, float_format=lambda x: f"{x:.3f}" if x < 10 else f"{x:.0f}"))


@bench_app.command("forwarding")
def bench_forwarding(
    engine: List[str] = typer.Option(["click", "fastclick"], help="Click flavours to run from memory."),
    packets: int = typer.Option(2_000_000, help="Packets per timed run."),
    repeats: int = typer.Option(3, min=1, help="Timed runs per engine."),
    testbed_pdr: Optional[Path] = typer.Option(None, help="A search_results.csv whose PDR rows join the table."),
    out: Optional[Path] = typer.Option(None, help="Also write every run to OUT/forwarding.csv, with its environment."),
):
    """MoonRoute comparison: single-route forwarding in Mpps, in memory (and on the testbed)."""
    from .. import bench

    try:
        pdr = None
        if testbed_pdr:
            pdr = datasets.search_pdr(datasets.read_kind(testbed_pdr.parent, testbed_pdr.name))
        ours, pub, raw = bench.forwarding_table(tuple(engine), pdr, packets=packets, repeats=repeats)
    except RouterlabError as e:
        fail(str(e), 1)
    if out:
        from .. import microbench

        microbench.save(raw, out, "forwarding", microbench.environment("forwarding", engine, " ".join(sys.argv)))
    typer.echo(bench.format_forwarding(ours, pub))


@bench_app.command("batch")
def bench_batch(
    engine: str = typer.Option("fastclick", help="Click flavour (FastClick batches; Click does not)."),
    sizes: str = typer.Option("1,2,4,8,16,32,64,128,256", help="Batch sizes, comma-separated."),
    packets: int = typer.Option(2_000_000, help="Packets per timed run."),
    repeats: int = typer.Option(3, min=1, help="Timed runs per size."),
    out: Optional[Path] = typer.Option(None, help="Also write every run to OUT/batch.csv, with its environment."),
):
    """Forwarding from memory against batch size (is 128 best?)."""
    from .. import bench, microbench

    try:
        size_list = [int(x) for x in sizes.split(",")]
    except ValueError:
        fail(f"--sizes: expected integers separated by commas, got {sizes!r}")
    with progress(f"{engine} batch sizes", len(size_list)) as advance:
        try:
            df = microbench.batch_sizes(engine, size_list, progress=advance, packets=packets, repeats=repeats)
        except RouterlabError as e:
            fail(str(e), 1)
    if out:
        microbench.save(df, out, "batch", microbench.environment("batch", [engine], " ".join(sys.argv)))
    typer.echo(bench.format_batch(df))


@bench_app.command("consolidation")
def bench_consolidation(
    nf: List[str] = typer.Option(["IPFilter", "MazuNAT", "Maglev"], help="Network functions to chain."),
    repeats: int = typer.Option(3, min=1, help="Timed runs per configuration."),
    out: Optional[Path] = typer.Option(None, help="Also write every run to OUT/consolidation.csv, with its environment."),
    engine: str = typer.Option("click", help="click or fastclick: both load routerlab's element package."),
):
    """FastPath header-action consolidation: NF chains of 1-3, plain and behind a per-flow cache."""
    from .. import bench, microbench

    n = len(nf) * 3 * 2
    with progress("consolidation", n) as advance:
        try:
            df = microbench.consolidation(tuple(nf), repeats=repeats, progress=advance, engine=engine)
        except RouterlabError as e:
            fail(str(e), 1)
    if out:
        microbench.save(df, out, "consolidation", microbench.environment("consolidation", [engine],
                                                                         " ".join(sys.argv)))
    typer.echo(bench.format_consolidation(df))


@bench_app.command("search")
def bench_search(
    engine: str = typer.Option("linux", help="Engine to search."),
    scenario: str = typer.Option("single-flow", help="Scenario preset."),
    out: Path = typer.Option(Path("runs/bench-search"), help="Folder for the search trials and results."),
    duration: float = typer.Option(2.0, help="Seconds per final trial."),
    kind: SearchKind = typer.Option(SearchKind.both, help="pdr, ndr or both."),
):
    """Our PDR/NDR search and MLRsearch (PyPI) on the same testbed: answers and trial-seconds (needs root)."""
    from .. import measuring, search

    with resumable("searches", code=1):
        res = measuring.measure(engine, scenario, out, search=kind.value, duration=duration,
                                methods=("routerlab", "mlrsearch"), experiment=f"bench-search-{engine}-{scenario}",
                                announce=typer.echo)
    for line in search.format_result(res) + search.format_ratios(res):
        typer.echo(line)
