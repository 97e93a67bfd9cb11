"""The ``routerlab`` command line. It only collects options and calls the library."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer
import yaml
from rich.console import Console

from . import datasets, stats
from .errors import RouterlabError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Measure and teach software routers: PASTRAMI statistics, a namespace "
                       "testbed, reference routers and the figures of published work.")
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: commands that print a figure.")
app.add_typer(bench_app, name="bench")
p4_app = typer.Typer(no_args_is_help=True, help="P4 programs on bmv2: build them, check the course exercises.")
app.add_typer(p4_app, name="p4")
notebooks_app = typer.Typer(no_args_is_help=True, help="The notebooks: copy them out to edit and run.")
app.add_typer(notebooks_app, name="notebooks")
engines_app = typer.Typer(no_args_is_help=True, help="Click, FastClick, bmv2 and p4c built from pinned upstream sources.")
app.add_typer(engines_app, name="engines")
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


class _progress:
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


def _wide() -> Console:
    """A console whose tables are not cut to 80 columns when output goes to a file or pipe."""
    return Console() if sys.stdout.isatty() else Console(width=240)


def _fail(msg: str, code: int = 2):
    err.print(f"[red]routerlab: error:[/red] {msg}", highlight=False)
    raise typer.Exit(code)


@app.command()
def assess(
    paths: List[Path] = typer.Argument(..., help="PASTRAMI raw files or folders, or routerlab datasets (file or folder)."),
    mode: Mode = typer.Option(Mode.strict, help="strict = the paper's test; notebook = the authors' published notebook."),
    pdr: float = typer.Option(stats.PDR_FRACTION, help="PDR fraction (0.005 = PDR@0.5%)."),
    eta: float = typer.Option(stats.ETA, help="TIR threshold of saturation."),
    entry_multiplier: float = typer.Option(stats.ENTRY_MULTIPLIER, help="m: the candidate needs TIR < eta*m (strict mode)."),
    plr_floor: float = typer.Option(stats.PLR_FLOOR, help="PLR floor used by the verdict and log axes."),
    fmt: InputFormat = typer.Option(InputFormat.auto, "--format", help="Input format."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per line."),
):
    """GOOD/BAD verdict, PDR and saturation load of each experiment."""
    try:
        params = stats.VerdictParams(pdr=pdr, eta=eta, entry_multiplier=entry_multiplier,
                                     plr_floor=plr_floor, mode=mode.value)
    except RouterlabError as e:
        _fail(str(e))
    _print_assessments(paths, params, fmt.value, as_json)


def _print_assessments(paths: list[Path], params, fmt: str = "auto", as_json: bool = False):
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


def _parse_params(items: list[str]) -> dict:
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            _fail(f"-p {item!r}: expected name=value")
        try:
            out[name.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            out[name.strip()] = value
    return out


@app.command()
def figures(
    out: Path = typer.Option(Path("figures"), "--out", help="Output folder: executed notebooks and figures (PNG, SVG)."),
    only: List[str] = typer.Option([], "--only", help="Run only this notebook (name or unique prefix); repeatable."),
    param: List[str] = typer.Option([], "-p", "--parameter", help="name=value passed to every notebook that declares it; repeatable."),
):
    """Run every notebook with papermill in replay mode and save its figures (the main job)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from . import notebooks

    params = _parse_params(param)
    try:
        books = notebooks.list_notebooks()
    except RouterlabError as e:
        _fail(str(e))
    marks = {"ok": "[green]ok[/green]", "failed": "[red]FAILED[/red]", "skipped": "[yellow]skipped[/yellow]"}
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=err) as prog:
        task = prog.add_task("notebooks", total=len(only) if only else len(books))

        def report(r):
            prog.console.print(f"{marks[r.status]:>8} {r.name} ({r.seconds:.1f} s)"
                               + (f": {r.message}" if r.message else ""), highlight=False)
            prog.advance(task)

        try:
            results = notebooks.run_all(out, only=only or None, parameters=params, on_result=report)
        except RouterlabError as e:
            _fail(str(e))
    n = {s: sum(r.status == s for r in results) for s in ("ok", "failed", "skipped")}
    err.print(f"{n['ok']} ok, {n['failed']} failed, {n['skipped']} skipped; figures in {out.resolve()}",
              highlight=False)
    if n["failed"]:
        raise typer.Exit(1)


@notebooks_app.command("copy")
def notebooks_copy(
    dest: Path = typer.Argument(..., help="Folder to put the notebooks in (created)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace notebooks already there."),
):
    """Copy every notebook into DEST, editable: how a course hands them to students."""
    from . import notebooks

    try:
        written = notebooks.copy_notebooks(dest, overwrite=overwrite)
    except RouterlabError as e:
        _fail(str(e))
    for p in written:
        typer.echo(f"copied {p}")
    kept = len(notebooks.list_notebooks()) - len(written)
    if kept:
        typer.echo(f"kept {kept} notebook(s) already in {dest} (--overwrite replaces them)")
    typer.echo(f"open them with: jupyter lab {dest}")


@app.command("fetch-pastrami")
def fetch_pastrami():
    """Download the published PASTRAMI raw data (107 files, pinned by commit and hash) into the cache."""
    from . import pastrami

    try:
        path = pastrami.fetch()
    except RouterlabError as e:
        _fail(str(e), 1)
    typer.echo(str(path))


@bench_app.command("assess")
def bench_assess(
    data: Optional[Path] = typer.Option(None, help="PASTRAMI folder (default: $ROUTERLAB_PASTRAMI_DIR or the cache)."),
    repeat: int = typer.Option(5, min=1, help="Timed repetitions; the best is reported."),
):
    """Time assessing every PASTRAMI experiment (parse, then analysis) and print the figures."""
    from . import bench

    try:
        res = bench.assess_all(data, repeat=repeat)
    except RouterlabError as e:
        _fail(str(e), 1)
    typer.echo(bench.format_assess(res))


@bench_app.command("generators")
def bench_generators(
    duration: float = typer.Option(2.0, help="Seconds per trial."),
    runs: int = typer.Option(3, min=1, help="Trials per generator and rate."),
    csv: Optional[Path] = typer.Option(None, help="Also write every trial to this CSV."),
):
    """Rate precision of rlgen, trafgen and tcpreplay at 25/50/75/100% of the ceiling (needs root)."""
    from . import bench, testbed

    try:
        testbed.require_root()
        ceil, df = bench.generators(duration=duration, runs=runs)
    except RouterlabError as e:
        _fail(str(e), 1)
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
    from . import bench

    try:
        ceil, df = bench.engines_pdr(tuple(engine), out=out, duration=duration)
    except RouterlabError as e:
        _fail(str(e), 1)
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
    from . import bench

    try:
        pdr = None
        if testbed_pdr:
            pdr = datasets.search_pdr(datasets.read_kind(testbed_pdr.parent, testbed_pdr.name))
        ours, pub, raw = bench.forwarding_table(tuple(engine), pdr, packets=packets, repeats=repeats)
    except RouterlabError as e:
        _fail(str(e), 1)
    if out:
        from . import microbench

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
    from . import bench, microbench

    try:
        size_list = [int(x) for x in sizes.split(",")]
    except ValueError:
        _fail(f"--sizes: expected integers separated by commas, got {sizes!r}")
    with _progress(f"{engine} batch sizes", len(size_list)) as advance:
        try:
            df = microbench.batch_sizes(engine, size_list, progress=advance, packets=packets, repeats=repeats)
        except RouterlabError as e:
            _fail(str(e), 1)
    if out:
        microbench.save(df, out, "batch", microbench.environment("batch", [engine], " ".join(sys.argv)))
    typer.echo(bench.format_batch(df))


@bench_app.command("consolidation")
def bench_consolidation(
    nf: List[str] = typer.Option(["IPFilter", "MazuNAT", "Maglev"], help="Network functions to chain."),
    repeats: int = typer.Option(3, min=1, help="Timed runs per configuration."),
    out: Optional[Path] = typer.Option(None, help="Also write every run to OUT/consolidation.csv, with its environment."),
):
    """FastPath header-action consolidation: NF chains of 1-3, plain and behind a per-flow cache."""
    from . import bench, microbench

    n = len(nf) * 3 * 2
    with _progress("consolidation", n) as advance:
        try:
            df = microbench.consolidation(tuple(nf), repeats=repeats, progress=advance)
        except RouterlabError as e:
            _fail(str(e), 1)
    if out:
        microbench.save(df, out, "consolidation", microbench.environment("consolidation", ["click"],
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
    from . import measuring, search

    try:
        res = measuring.measure(engine, scenario, out, search=kind.value, duration=duration,
                                methods=("routerlab", "mlrsearch"), experiment=f"bench-search-{engine}-{scenario}",
                                announce=typer.echo)
    except RouterlabError as e:
        _fail(str(e), 1)
    for line in search.format_result(res):
        typer.echo(line)
    for k in {r.kind for r in res}:
        ours, mlr = [r for r in res if r.kind == k and r.method == "routerlab"], [r for r in res if r.kind == k and r.method == "mlrsearch"]
        if ours and mlr and ours[0].lower and mlr[0].lower:
            typer.echo(f"{k.upper()}: routerlab / mlrsearch answer = {ours[0].lower / mlr[0].lower:.3f}, "
                       f"trial-seconds = {ours[0].trial_seconds / mlr[0].trial_seconds:.2f}")



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
    ceiling: Optional[float] = typer.Option(None, help="Generator ceiling in pps, if known (skips measuring it)."),
    search: Optional[SearchKind] = typer.Option(None, help="Search for PDR/NDR instead of a fixed sweep."),
    pdr: float = typer.Option(stats.PDR_FRACTION, help="PDR fraction for --search and the verdict."),
):
    """Measure a router on the namespace testbed: a fixed sweep or a PDR/NDR search."""
    from . import measuring, search as search_mod

    try:
        res = measuring.measure(engine, scenario, out, loads=loads, loads_frac=loads_frac, runs=runs,
                                duration=duration, search=search.value if search else None, pdr=pdr,
                                ceiling_pps=ceiling, experiment=experiment, rules=rules, routes=routes,
                                frame_size=frame_size, announce=err.print)
    except KeyboardInterrupt:
        err.print("interrupted: finished trials are kept; run the same command again to resume")
        raise typer.Exit(130)
    except RouterlabError as e:
        _fail(str(e))
    if search is not None:
        for line in search_mod.format_result(res):
            typer.echo(line)
        return
    _print_assessments([out], stats.VerdictParams(pdr=pdr), "routerlab")


@app.command()
def clean(all_runs: bool = typer.Option(False, "--all", help="Also remove runs whose process is still alive.")):
    """Remove namespaces, links and processes that a crashed run left behind."""
    from . import testbed

    try:
        removed = testbed.clean(all_runs=all_runs)
    except RouterlabError as e:
        _fail(str(e))
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

    from . import doctor as doc

    checks = doc.report()
    if only:
        unknown = sorted(set(only) - {c.name for c in checks})
        if unknown:
            _fail(f"nothing called {', '.join(unknown)} to check; known: {', '.join(c.name for c in checks)}")
        checks = [c for c in checks if c.name in only]
    table = Table("", "", "status", "version / what to do", box=None)
    missing = []
    for c in checks:
        table.add_row(c.group, c.name, "[green]ok[/green]" if c.ok else "[yellow]missing[/yellow]", c.detail)
        if not c.ok and (only or not c.optional):
            missing.append(c.name)
    _wide().print(table)
    if missing:
        err.print(f"missing: {', '.join(missing)}", highlight=False)
        raise typer.Exit(1)


@app.command()
def compare(
    out: Path = typer.Option(Path("runs/comparison"), help="Dataset folder (resumed if it holds some cells)."),
    engine: List[str] = typer.Option(list(("linux", "nft", "ebpf", "click", "fastclick", "fastclick-dpdk", "bmv2")),
                                     help="Engines (rows of the tables); those not built become grey cells."),
    scenario: List[str] = typer.Option(["single-flow-fw50", "gre-multiflow-fw50", "routes900k-multiflow-fw50",
                                        "ddos-drop50"], help="Scenario presets (one table each)."),
    loads_frac: str = typer.Option("0.1,0.2,0.3,0.4,0.5,0.6,0.8,1.0", help="Offered loads, fractions of the generator's ceiling."),
    runs: int = typer.Option(5, help="Trials per cell (K)."),
    duration: float = typer.Option(2.0, help="Seconds per trial (T)."),
    ceiling: Optional[float] = typer.Option(None, help="Generator ceiling in pps, if known (skips measuring it)."),
):
    """Measure the 100GE comparison tables on the testbed: every engine in every scenario."""
    from . import comparison

    try:
        fracs = [float(x) for x in loads_frac.split(",")]
    except ValueError:
        _fail(f"--loads-frac: expected numbers separated by commas, got {loads_frac!r}")
    try:
        comparison.campaign(out, tuple(engine), tuple(scenario), fractions=fracs, runs=runs, duration=duration,
                           ceiling_pps=ceiling, announce=err.print)
    except KeyboardInterrupt:
        err.print("interrupted: finished trials are kept; run the same command again to resume")
        raise typer.Exit(130)
    except RouterlabError as e:
        _fail(str(e))
    ours = comparison.ours(out)
    typer.echo(comparison.orderings(comparison.published(), ours).to_string(index=False))


@app.command()
def reroute(
    out: Path = typer.Option(Path("runs/fast-reroute"), help="Folder for samples.csv, runs.csv, environment.csv."),
    variant: List[str] = typer.Option([], help="frr, nft (ShortCut in nftables), ebpf (in eBPF), p4 (on bmv2); "
                                                "default: every one this machine can run."),
    runs: int = typer.Option(10, min=1, help="Runs per variant."),
    duration: float = typer.Option(30.0, help="Seconds per run."),
    fail_at: float = typer.Option(10.0, help="Seconds into a run when the link fails."),
    converge_after: float = typer.Option(5.0, help="Seconds from the failure to the control plane's update."),
):
    """The fast-reroute experiment: throughput, RTT and load over time, with and without ShortCut."""
    from . import fastreroute

    if not variant:
        variant, why = fastreroute.available_variants()
        for v, reason in why.items():
            err.print(f"variant {v} left out: {reason}")
    n = runs * len(variant)
    try:
        with _progress("fast reroute runs", n) as advance:
            samples, facts = fastreroute.experiment(tuple(variant), runs, out=out, progress=advance,
                                                    duration=duration, fail_at=fail_at,
                                                    converge_after=converge_after)
    except KeyboardInterrupt:
        err.print("interrupted: finished runs are kept; run the same command again to resume")
        raise typer.Exit(130)
    except RouterlabError as e:
        _fail(str(e))
    fastreroute.save_environment(out, command=" ".join(sys.argv), when=str(facts["started_at"].min()))
    table, _ = fastreroute.summary(samples, facts, fail_at=fail_at)
    typer.echo(table.to_string(index=False, float_format=lambda x: f"{x:.3g}"))


@p4_app.command("build")
def p4_build(
    program: List[str] = typer.Argument(None, help="Programs (router, firewall, gre, shortcut) or .p4 files; default all."),
    skeletons: bool = typer.Option(True, help="Also compile the course skeletons (they compile; they do not pass)."),
):
    """Compile the P4 programs with p4c-bm2-ss (output in the user cache, not the checkout)."""
    from .engines import p4

    names = program or list(p4.PROGRAMS)
    try:
        for name in names:
            typer.echo(f"{p4.source(name)}: {p4.compile_program(name)}")
            if skeletons and name in p4.PROGRAMS:
                typer.echo(f"{p4.source(name, solution=False)}: {p4.compile_program(name, solution=False)}")
    except RouterlabError as e:
        _fail(str(e))


@p4_app.command("check")
def p4_check(
    exercise: str = typer.Argument(..., help="Exercise: router, firewall, gre or shortcut."),
    program: Optional[Path] = typer.Option(None, help="Your .p4 file (default: the exercise's skeleton)."),
    solution: bool = typer.Option(False, "--solution", help="Check the reference solution instead."),
):
    """Send real packets through your program on bmv2 and say which expectations pass."""
    from . import p4exercises

    try:
        results = p4exercises.check(exercise, program, solution=solution)
    except KeyboardInterrupt:
        raise typer.Exit(130)
    except RouterlabError as e:
        _fail(str(e))
    for r in results:
        mark = "[green]PASS[/green]" if r.passed else "[red]FAIL[/red]"
        Console(soft_wrap=True).print(f"{mark}  {r.name}" + (f"  [dim]({r.detail})[/dim]" if r.detail else ""),
                                      highlight=False)
    failed = sum(not r.passed for r in results)
    typer.echo(f"{len(results) - failed} of {len(results)} expectations pass")
    if failed:
        raise typer.Exit(1)


def _engine_names(names: list[str] | None) -> list[str]:
    from .engines import builds

    for n in names or []:
        if n not in builds.recipes():
            _fail(f"unknown engine {n!r}; known: {', '.join(builds.recipes())}")
    return list(names or builds.recipes())


@engines_app.command("install")
def engines_install(
    engine: List[str] = typer.Argument(None, help="click, fastclick, bmv2, p4c; default all four."),
    jobs: Optional[int] = typer.Option(None, help="Cores per build (default: all)."),
    parallel: int = typer.Option(2, help="Builds at a time; both keep the cores busy while the other configures."),
    force: bool = typer.Option(False, "--force", help="Build again even if installed."),
):
    """Build and install engines from their pinned sources (GitHub, or $ROUTERLAB_ENGINE_SOURCES)."""
    import time

    from .engines import builds

    names = _engine_names(engine)
    t0 = time.monotonic()
    say = lambda line: typer.echo(f"[{time.monotonic() - t0:6.0f} s] {line}")  # noqa: E731
    try:
        results = builds.install(names, say=say, jobs=jobs, parallel=parallel, force=force)
    except KeyboardInterrupt:
        err.print("interrupted: unfinished builds removed, nothing half-installed")
        raise typer.Exit(130)
    except RouterlabError as e:
        _fail(str(e), 1)
    failed = {n: r for n, r in results.items() if isinstance(r, Exception)}
    if failed:
        _fail(f"not installed: {', '.join(failed)}", 1)


@engines_app.command("list")
def engines_list():
    """Each engine: installed or not, its pinned commit, its prefix, and what overrides it."""
    import pandas as pd

    from .engines import builds

    rows = pd.DataFrame(builds.listing())
    rows["installed"] = rows["installed"].map({True: "installed", False: "not installed"})
    typer.echo(rows.rename(columns={"installed": "status"}).to_string(index=False))


@engines_app.command("remove")
def engines_remove(engine: List[str] = typer.Argument(None, help="click, fastclick, bmv2, p4c; default all four.")):
    """Remove installed engines (every build of them); the compiler cache stays."""
    from .engines import builds

    removed = builds.remove(_engine_names(engine))
    for p in removed:
        typer.echo(f"removed {p}")
    if not removed:
        typer.echo("nothing installed to remove")


def main():  # pragma: no cover - console entry for `python -m routerlab`
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
