"""Benchmarks: ``bench ...``, each printing a figure; the work and the report are in
:mod:`routerlab.benchmarks` (one module per benchmark), imported when a command runs."""

from __future__ import annotations

import importlib
from pathlib import Path

import click

from routerlab import defaults
from routerlab.errors import RouterlabError
from routerlab.cli.app import bench_app
from routerlab.cli.common import err, fail, generator_option, PATH, progress, resumable, SEARCH_KIND, testbed_settings

#: The folder option of the benchmarks that read the published PASTRAMI set.
pastrami_data = click.option("--data", type=PATH, help="PASTRAMI folder (default: $ROUTERLAB_PASTRAMI_DIR or the cache).")


def _run_and_report(benchmark, **kw):
    """Run a benchmark module's ``run`` and print its ``report``; a failure is one line, exit 1."""
    try:
        res = benchmark.run(**kw)
    except (RouterlabError, RuntimeError) as e:
        fail(str(e), 1)
    click.echo(benchmark.report(res))


def _timed_on_pastrami(name: str, repeat_help: str, doc: str):
    """Add ``bench NAME``: the benchmark :mod:`routerlab.benchmarks`.NAME run over the
    PASTRAMI set (``--data``) with ``--repeat`` runs, and its report printed."""
    def command(data, repeat):
        _run_and_report(importlib.import_module(f"routerlab.benchmarks.{name}"), data_dir=data, repeat=repeat)

    command.__doc__ = doc
    repeat = click.option("--repeat", type=click.IntRange(min=1), default=5, help=repeat_help)
    return bench_app.command(name)(pastrami_data(repeat(command)))


bench_assess = _timed_on_pastrami(
    "assess", "Timed repetitions; the best is reported.",
    "Time assessing every PASTRAMI experiment (parse, then analysis) and print the figures.")


@bench_app.command("generators")
@click.option("--duration", type=float, default=2.0, help="Seconds per trial.")
@click.option("--runs", type=click.IntRange(min=1), default=3, help="Trials per generator and rate.")
@click.option("--csv", type=PATH, help="Also write every trial to this CSV.")
def bench_generators(duration, runs, csv):
    """Ceilings of rlgen and the XDP generator, and the rate precision of each (and of trafgen, tcpreplay) at 25/50/75/100% of a ceiling (needs root)."""
    from routerlab.testbed import capabilities
    from routerlab.benchmarks import generators

    try:
        capabilities.require_root()
        ceil, df = generators.run(duration=duration, runs=runs)
    except RouterlabError as e:
        fail(str(e), 1)
    if csv:
        df.to_csv(csv, index=False)
    click.echo(generators.report(ceil, df))


@bench_app.command("engines")
@click.option("--out", type=PATH, default=Path("runs/bench-engines"), help="Folder for the search trials and results.")
@click.option("--duration", type=float, default=2.0, help="Seconds per final trial.")
@click.option("--engine", multiple=True, default=["linux", "nft", "ebpf"],
              help="Engines (first = reference); nft runs 50 rules, the others single-flow, unless --scenario.")
@click.option("--scenario", help="One scenario for every engine (e.g. single-flow-fw50 with nft, ebpf, vpp).")
@click.option("--repeats", type=click.IntRange(min=1), default=defaults.SEARCH_REPEATS, show_default=True,
              help="Searches of each engine, each on a fresh testbed: the answer is their median, and two engines "
                   "are ranked only where every repeat of one is above every repeat of the other.")
@generator_option
def bench_engines(out, duration, engine, scenario, repeats):
    """PDR@0.5% of several engines measured in one run, each searched --repeats times, as ratios to the first, ranked where their repeats separate (needs root)."""
    from routerlab.benchmarks import engines

    scenario_for = {e: scenario for e in engine} if scenario else None
    with resumable("searches", code=1):
        ceil, df = engines.run(tuple(engine), scenario_for, out=out, duration=duration, repeats=repeats,
                               settings=testbed_settings(), announce=err.print)
    click.echo(engines.report(ceil, df))


@bench_app.command("install")
@click.option("--bundles", type=PATH, help="A folder of bundles, each beside its .sha256 [default: "
                                           "$ROUTERLAB_ENGINE_BUNDLES].")
@click.option("--build", "build", multiple=True, metavar="ENGINE",
              help="Also build ENGINE cold from its pin (no compiler cache: minutes).")
def bench_install(bundles, build):
    """What the engines cost a new machine: engines install from bundles into an empty
    engines folder next to tar's unpacking of them, and cold builds next to their targets."""
    import os

    from routerlab.benchmarks import install
    from routerlab.benchmarks.startup import command

    folder = bundles or os.environ.get("ROUTERLAB_ENGINE_BUNDLES")
    if not folder and not build:
        fail("--bundles: give a folder of bundles (or set ROUTERLAB_ENGINE_BUNDLES), or --build ENGINE")
    try:
        bundled = install.from_bundles(folder, command()) if folder else None
        built = {e: install.cold_build(e, command()) for e in build}
    except RouterlabError as e:
        fail(str(e), 1)
    click.echo(install.report(bundled, built))


@bench_app.command("chain")
@click.option("--engine", multiple=True, default=["linux", "ebpf"], help="Engines to run, one trial each.")
@click.option("--load", type=float, default=200_000, help="Offered load of each trial, pps.")
@click.option("--duration", type=float, default=2.0, help="Seconds per trial.")
@generator_option
def bench_chain(engine, load, duration):
    """Where each CPU's time goes during a trial: router, generator, sink (perf; needs root)."""
    from routerlab.benchmarks import chain

    try:
        df = chain.run(tuple(engine), load, duration, settings=testbed_settings())
    except RouterlabError as e:
        fail(str(e), 1)
    click.echo(chain.report(df, load))


@bench_app.command("entries")
@click.option("--scenario", default="routes900k-multiflow-fw50", show_default=True,
              help="Scenario whose table entries are loaded.")
@click.option("--control", "controls", multiple=True, type=click.Choice(["p4runtime", "thrift"]),
              default=["p4runtime", "thrift"], show_default=True, help="Control planes, one fresh switch each.")
def bench_entries(scenario, controls):
    """Time to load a scenario's table entries into bmv2 over P4Runtime and over the Thrift CLI, next to their floors (needs root)."""
    from routerlab.benchmarks import entries

    try:
        res = entries.run(scenario, tuple(controls), announce=err.print)
    except RouterlabError as e:
        fail(str(e), 1)
    click.echo(entries.report(res))


@bench_app.command("forwarding")
@click.option("--engine", multiple=True, default=["click", "fastclick"], help="Click flavours to run from memory.")
@click.option("--packets", type=int, default=2_000_000, help="Packets per timed run.")
@click.option("--repeats", type=click.IntRange(min=1), default=3, help="Timed runs per engine.")
@click.option("--testbed-pdr", type=PATH, help="A search_results.csv whose PDR rows join the table (its folder's "
                                               "search_trials.csv tells which the generator bounded).")
@click.option("--out", type=PATH, help="Also write every run to OUT/forwarding.csv, with its environment.")
def bench_forwarding(engine, packets, repeats, testbed_pdr, out):
    """MoonRoute comparison: single-route forwarding in Mpps, in memory (and on the testbed)."""
    from routerlab.measuring import microbench
    from routerlab.benchmarks import forwarding

    try:
        ours, pub, raw = forwarding.table(tuple(engine), forwarding.testbed_pdr(testbed_pdr), packets=packets,
                                          repeats=repeats)
    except RouterlabError as e:
        fail(str(e), 1)
    if out:
        microbench.save(raw, out, "forwarding", engine)
    click.echo(forwarding.report(ours, pub))


@bench_app.command("batch")
@click.option("--engine", default="fastclick", help="Click flavour (FastClick batches; Click does not).")
@click.option("--sizes", default="1,2,4,8,16,32,64,128,256", help="Batch sizes, comma-separated.")
@click.option("--packets", type=int, default=2_000_000, help="Packets per timed run.")
@click.option("--repeats", type=click.IntRange(min=1), default=3, help="Timed runs per size.")
@click.option("--out", type=PATH, help="Also write every run to OUT/batch.csv, with its environment.")
def bench_batch(engine, sizes, packets, repeats, out):
    """Forwarding from memory against batch size (is 128 best?)."""
    from routerlab.measuring import microbench
    from routerlab.benchmarks import forwarding

    try:
        size_list = [int(x) for x in sizes.split(",")]
    except ValueError:
        fail(f"--sizes: expected integers separated by commas, got {sizes!r}")
    _microbench(f"{engine} batch sizes", len(size_list), "batch", engine, out, forwarding.batch_report,
                lambda advance: microbench.batch_sizes(engine, size_list, progress=advance, packets=packets,
                                                       repeats=repeats))


@bench_app.command("consolidation")
@click.option("--nf", multiple=True, default=["IPFilter", "MazuNAT", "Maglev"], help="Network functions to chain.")
@click.option("--repeats", type=click.IntRange(min=1), default=3, help="Timed runs per configuration.")
@click.option("--out", type=PATH, help="Also write every run to OUT/consolidation.csv, with its environment.")
@click.option("--engine", default="click", help="click or fastclick: both load routerlab's element package.")
def bench_consolidation(nf, repeats, out, engine):
    """FastPath header-action consolidation: NF chains of 1-3, plain and behind a per-flow cache."""
    from routerlab.measuring import microbench
    from routerlab.benchmarks import consolidation

    _microbench("consolidation", len(nf) * 3 * 2, "consolidation", engine, out, consolidation.report,
                lambda advance: microbench.consolidation(tuple(nf), repeats=repeats, progress=advance, engine=engine))


def _microbench(label: str, total: int, name: str, engine: str, out, report, run):
    """Run a microbenchmark under a progress bar (``run(advance)`` returns its rows), save
    them as ``out/name.csv`` with their environment record when ``out`` is given, and
    print ``report(rows)``; a failure is one line, exit 1."""
    from routerlab.measuring import microbench

    with progress(label, total) as advance:
        try:
            df = run(advance)
        except RouterlabError as e:
            fail(str(e), 1)
    if out:
        microbench.save(df, out, name, [engine])
    click.echo(report(df))


@bench_app.command("search")
@click.option("--engine", default="linux", help="Engine to search.")
@click.option("--scenario", default="single-flow", help="Scenario preset.")
@click.option("--out", type=PATH, default=Path("runs/bench-search"), help="Folder for the search trials and results.")
@click.option("--duration", type=float, default=2.0, help="Seconds per final trial.")
@click.option("--kind", type=SEARCH_KIND, default="both", help="pdr, ndr or both.")
@generator_option
def bench_search(engine, scenario, out, duration, kind):
    """Our PDR/NDR search and MLRsearch (PyPI) on the same testbed: answers and trial-seconds (needs root)."""
    from routerlab.measuring import search
    from routerlab.benchmarks import search as bench

    try:
        search.require_mlrsearch()
    except RouterlabError as e:
        fail(str(e), 1)
    with resumable("searches", code=1):
        res = bench.run(engine, scenario, out, kind=kind, duration=duration, announce=click.echo,
                        settings=testbed_settings())
    click.echo(bench.report(res))


@bench_app.command("calibrate")
@click.option("--capacity", type=float, multiple=True, default=list(defaults.CALIBRATION_FRACTIONS),
              help="Capacities of the calibration router, as fractions of the generator's ceiling (repeatable).")
@click.option("--duration", type=float, default=2.0,
              help="Seconds per sweep trial and per final search trial (the truth depends on it).")
@click.option("--runs", type=click.IntRange(min=1), default=3, help="Sweep trials per load (K).")
@click.option("--method", multiple=True, default=["routerlab", "mlrsearch"],
              help="Search methods: routerlab, mlrsearch (repeatable).")
@click.option("--ceiling", type=float, help="Generator ceiling in pps, if known (skips measuring it).")
@click.option("--out", type=PATH, default=Path("runs/bench-calibrate"),
              help="Folder for the trials, searches and calibration tables.")
@generator_option
def bench_calibrate(capacity, duration, runs, method, ceiling, out):
    """Sweep and PDR/NDR searches against a router of known capacity (nftables limit): truth, answers, errors; exit 1 when one is outside its precision (needs root)."""
    from click.exceptions import Exit

    from routerlab.measuring import search
    from routerlab.benchmarks import calibrate

    if "mlrsearch" in method:
        try:
            search.require_mlrsearch()
        except RouterlabError as e:
            fail(str(e), 1)
    with resumable("trials and searches", code=1), progress(unit="trials") as trials:
        res = calibrate.run(list(capacity), out=out, duration=duration, runs=runs, methods=tuple(method),
                            ceiling_pps=ceiling, announce=err.print, settings=testbed_settings(), progress=trials)
    click.echo(calibrate.report(res))
    if len(res.outside):
        raise Exit(1)


@bench_app.command("idle")
@click.option("--engine", default="linux", show_default=True, help="Engine to sweep.")
@click.option("--scenario", default="single-flow", show_default=True, help="Scenario preset or YAML file.")
@click.option("--loads-frac", default="0.04,0.1,0.2", show_default=True,
              help="Offered loads, fractions of the generator's ceiling.")
@click.option("--ceiling", type=float, help="Generator ceiling in pps, if known (skips measuring it).")
@click.option("--runs", type=click.IntRange(min=1), default=10, show_default=True, help="Trials per load (K) in each sweep.")
@click.option("--duration", type=float, default=2.0, show_default=True, help="Seconds per trial (T).")
@click.option("--rounds", type=click.IntRange(min=1), default=2, show_default=True,
              help="Sweeps in each idle mode, alternating.")
@click.option("--out", type=PATH, default=Path("runs/bench-idle"), show_default=True,
              help="Dataset folder of the sweeps (resumed if there).")
@click.option("--report-only", type=PATH, help="Measure nothing: report the sweeps NAME-os-N, NAME-poll-N in this "
                                               "folder (every NAME).")
@generator_option
def bench_idle(engine, scenario, loads_frac, ceiling, runs, duration, rounds, out, report_only):
    """The same sweep with idle CPUs polling (the testbed's default) and in the kernel's idle states, alternating: steal, trials above the steal threshold and loss side by side, as ratios (needs root, unless --report-only)."""
    from routerlab.benchmarks import idle

    if report_only is not None:
        try:
            trials = idle.read(report_only)
        except RouterlabError as e:
            fail(str(e), 1)
    else:
        with resumable("trials", code=1), progress(unit="trials") as shown:
            trials = idle.run(engine, scenario, out, loads_frac=loads_frac, ceiling_pps=ceiling, runs=runs,
                              duration=duration, rounds=rounds, announce=err.print, settings=testbed_settings(),
                              progress=shown)
    click.echo(idle.report(trials))


bench_startup = _timed_on_pastrami(
    "startup", "Runs of each command; the median is reported.",
    "Wall time of `routerlab --help` and `routerlab assess` on the PASTRAMI set, next to a bare numpy start-up and a "
    "plain numpy parse.")


@bench_app.command("repeat")
@click.option("--engine", help="Engine to sweep twice (needed unless --report-only).")
@click.option("--scenario", help="Scenario preset or YAML file (default single-flow; with --report-only, every "
                                 "scenario in the folder).")
@click.option("--loads-frac", default="0.04,0.08,0.12,0.16,0.2", help="Offered loads, fractions of the generator's ceiling.")
@click.option("--ceiling", type=float, help="Generator ceiling in pps, if known (skips measuring it).")
@click.option("--runs", type=click.IntRange(min=1), default=5, help="Trials per load (K) in each sweep.")
@click.option("--duration", type=float, default=1.0, help="Seconds per trial (T).")
@click.option("--out", type=PATH, help="Dataset folder of the two sweeps, or of --campaign's searches (resumed if "
                                       "there) [default: runs/bench-repeat, runs/bench-repeat-searches].")
@click.option("--report-only", type=PATH, help="Measure nothing: report every pair of sweeps NAME-first, NAME-second "
                                               "in this folder (--engine, --scenario pick some); with --searches, "
                                               "every search of the folder searched more than once.")
@click.option("--searches", is_flag=True, help="With --report-only: the folder's repeated searches, not its sweeps.")
@click.option("--campaign", "campaign_file", type=PATH,
              help="Searches instead of a sweep: the search steps of this campaign file (or dataset folder), each "
                   "searched --repeats times into --out; per search, the spread next to its goal and what moved "
                   "with it.")
@click.option("--repeats", type=click.IntRange(min=2), default=5, show_default=True,
              help="With --campaign: searches of each step, each on a fresh testbed.")
@generator_option
def bench_repeat(engine, scenario, loads_frac, ceiling, runs, duration, out, report_only, searches, campaign_file,
                 repeats):
    """The same sweep twice in a row: per load, whether the second mean lies in the first's 95% interval, and the share of loads where it does; with --campaign, a campaign's searches repeated: each one's spread and its recorded cause (needs root, unless --report-only)."""
    from routerlab.benchmarks import repeat

    ctx = click.get_current_context()

    def given(name):
        return ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE

    if campaign_file is not None and report_only is not None:
        fail("--campaign: measures; --report-only FOLDER --searches reports what a folder holds: give one")
    if campaign_file is None and given("repeats"):
        fail("--repeats: goes with --campaign (a sweep's trials per load are --runs)")
    if campaign_file is not None or searches:
        for name in ("engine", "scenario", "loads_frac", "ceiling", "runs", "duration"):
            if given(name):
                fail(f"--{name.replace('_', '-')}: a sweep's option; --campaign's searches take theirs from the "
                     "campaign file")
        from routerlab.publish import campaign

        try:
            if report_only is not None:
                rows = repeat.searches(report_only)
            elif campaign_file is None:
                fail("--searches: give --report-only FOLDER, or --campaign FILE to measure")
            else:
                c = campaign.searches_only(campaign.load(campaign_file), repeats)
                out = out or Path("runs/bench-repeat-searches")
                with resumable("searches", code=1):
                    campaign.run(c, out, announce=err.print, report=click.echo, settings=testbed_settings())
                rows = repeat.searches(out)
        except RouterlabError as e:
            fail(str(e), 1)
        click.echo(repeat.search_report(rows))
        return
    if report_only is not None:
        try:
            res = repeat.read(report_only, engine, scenario)
        except RouterlabError as e:
            fail(str(e), 1)
    elif engine is None:
        fail("--engine: give the engine to sweep (or --report-only FOLDER)")
    else:
        with resumable("trials", code=1), progress(unit="trials") as trials:
            res = repeat.run(engine, scenario or "single-flow", out or Path("runs/bench-repeat"), loads_frac=loads_frac, ceiling_pps=ceiling,
                             runs=runs, duration=duration, announce=err.print, settings=testbed_settings(),
                             progress=trials)
    click.echo(repeat.report(res))


@bench_app.command("report")
@click.option("--repeat", type=click.IntRange(min=1), default=3, help="Timed runs of each; the median is reported.")
def bench_report(repeat):
    """Time `routerlab report --check` of every committed dataset, next to its floor and target."""
    from routerlab.benchmarks import report

    _run_and_report(report, repeat=repeat)


@bench_app.command("ssh")
@click.option("--testbed", "testbed_file", type=PATH, required=True, help="The testbed file (hosts.yaml) of the hosts.")
@click.option("--out", type=PATH, default=Path("runs/bench-ssh"), help="Folder for both testbeds' datasets.")
@click.option("--trials", type=click.IntRange(min=2), default=20, help="Trials of the sweep on each testbed.")
@click.option("--duration", type=float, default=0.5, help="Seconds per sweep trial.")
@click.option("--capacity", type=click.IntRange(min=1000), default=30000,
              help="The calibration router's capacity for the search, pps.")
def bench_ssh(testbed_file, out, trials, duration, capacity):
    """The SSH testbed next to the namespace testbed: seconds per trial next to the trial's own, and the same search's answer against a known truth (needs root here and on the hosts)."""
    from routerlab.testbed import capabilities
    from routerlab.benchmarks import ssh

    try:
        capabilities.require_root()
    except RouterlabError as e:
        fail(str(e), 1)
    _run_and_report(ssh, testbed_file=testbed_file, out=out, trials=trials, duration=duration, capacity_pps=capacity)
