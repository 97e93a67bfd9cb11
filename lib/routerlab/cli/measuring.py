"""Measuring on the testbed: ``measure``, ``compare``, ``reroute``, ``clean``, ``doctor``."""

from __future__ import annotations

from pathlib import Path

import click
from click.exceptions import Exit

from routerlab import defaults
from routerlab.errors import RouterlabError
from routerlab.cli.app import app, argument
from routerlab.cli.common import err, fail, generator_option, PATH, print_assessments, progress, resumable, SEARCH_KIND, testbed_option, testbed_settings, wide


@app.command()
@click.option("--engine", required=True, help="Router engine: linux, nft, ebpf (click, fastclick, bmv2 where built), "
                                              "exec (a router of your own, started by --start), or a plug-in's.")
@click.option("--scenario", default="single-flow", help="Scenario preset name or YAML file.")
@click.option("--loads", help="Offered loads in pps, comma-separated.")
@click.option("--loads-frac", help="Offered loads as fractions of the generator's measured ceiling.")
@click.option("--runs", type=int, default=10, help="Trials per load (K).")
@click.option("--duration", type=float, default=2.0, help="Seconds per trial (T).")
@click.option("--out", type=PATH, required=True, help="Dataset folder (created, or resumed if it holds this experiment).")
@click.option("--rules", type=int, help="Override: firewall rules.")
@click.option("--routes", type=int, help="Override: route-table size.")
@click.option("--frame-size", type=int, help="Override: frame size on the wire, bytes.")
@click.option("--experiment", default="", show_default=False, help="Experiment id (default ENGINE-SCENARIO).")
@click.option("--config", type=PATH, help="Your own router configuration for the engine to run (click, fastclick), "
                                          "e.g. a course exercise's router.")
@click.option("--ceiling", type=float, help="Generator ceiling in pps, if known (skips measuring it).")
@click.option("--search", type=SEARCH_KIND, help="Search for PDR/NDR instead of a fixed sweep.")
@click.option("--pdr", type=float, default=defaults.PDR_FRACTION, help="PDR fraction for --search and the verdict.")
@click.option("--repeats", type=click.IntRange(min=1),
              help=f"--search: searches, each on a fresh testbed; the answer is their median and range "
                   f"[default: {defaults.SEARCH_REPEATS}].")
@click.option("--steal-threshold", type=float,
              help="A trial with more CPU steal than this (ratio) is disturbed and measured again "
                   "(default: the threshold of the steal_flagged column).")
@click.option("--max-repeats", type=click.IntRange(min=0), default=defaults.MAX_REPEATS,
              help="Repeats of a disturbed trial at most.")
@click.option("--start", help="exec: the shell command that starts your router in the router's namespace and stays "
                                "in the foreground; it finds $IN_DEV, $OUT_DEV, $NEXT_MAC, $RUN_DIR... in its "
                                "environment (docs/engines.md lists them).")
@click.option("--ready", help="exec: a shell command that exits 0 once the router forwards "
                              "(default: a frame from the generator reaches the sink).")
@click.option("--ready-timeout", type=click.FloatRange(min=0, min_open=True),
              help=f"exec: seconds the router has to become ready [default: {defaults.EXEC_READY_TIMEOUT_S:g}].")
@click.option("--stop", help="exec: a shell command run before the router's processes are stopped.")
@click.option("--counters", help="exec: a shell command printing the router's own drop counters, 'name count' per line.")
@click.option("--version-command", help="exec: a shell command printing the router's version, for the record.")
@click.option("--kernel-forwarding/--no-kernel-forwarding", default=False,
              help="exec: the router makes the kernel forward (nft, tc, routes): leave kernel forwarding on "
                   "(needs --ready).")
@click.option("--control", type=click.Choice(["p4runtime", "thrift"]),
              help="bmv2: its control plane [default: p4runtime where simple_switch_grpc is installed].")
@generator_option
@testbed_option
def measure(engine, scenario, loads, loads_frac, runs, duration, out, rules, routes, frame_size, experiment, config,
            ceiling, search, pdr, repeats, steal_threshold, max_repeats, start, ready, ready_timeout, stop, counters,
            version_command, kernel_forwarding, control):
    """Measure a router on the namespace testbed (or on hosts over SSH, --testbed): a fixed
    sweep or a PDR/NDR search.

    Any router can be measured with --engine exec: your --start command runs it in the
    router's namespace (e.g. Open vSwitch: see routers/ovs/)."""
    from routerlab.measuring import measurement, search as search_mod
    from routerlab.analysis import stats

    with resumable("trials"):
        router = None
        if any(v is not None for v in (start, ready, stop, counters, version_command, ready_timeout)) \
                or kernel_forwarding:
            from routerlab.engines.external import Commands

            router = Commands(start=start, ready=ready, stop=stop, counters=counters,
                              version_command=version_command,
                              ready_timeout=ready_timeout or defaults.EXEC_READY_TIMEOUT_S,
                              kernel_forwarding=kernel_forwarding)
        request = measurement.Request(engine, scenario, out, loads=loads, loads_frac=loads_frac, runs=runs,
                                      duration=duration, search=search, pdr=pdr, ceiling_pps=ceiling,
                                      experiment=experiment, rules=rules, routes=routes, frame_size=frame_size,
                                      config=config, router=router, control=control,
                                      steal_threshold=steal_threshold, max_repeats=max_repeats, repeats=repeats,
                                      settings=testbed_settings())
        with progress(unit="trials") as trials:
            res = measurement.measure(request, announce=err.print, progress=trials)
    if search is not None:
        for line in search_mod.format_result(res) + search_mod.format_repeated(res):
            click.echo(line)
        return
    print_assessments([out], stats.VerdictParams(pdr=pdr), "routerlab")


@app.command()
@click.option("--all", "all_runs", is_flag=True, help="Also remove runs whose process is still alive.")
@click.option("--testbed", "testbed_file", type=PATH,
              help="A testbed file (hosts.yaml): undo what killed runs left on each of its hosts.")
def clean(all_runs, testbed_file):
    """Remove namespaces, links and processes that a crashed run left behind (with
    --testbed, on every host of a testbed file, and restore what their set-up changed)."""
    from routerlab.testbed import cleanup

    try:
        if testbed_file is not None:
            from routerlab.remote import sshtestbed

            removed = sshtestbed.clean(testbed_file, all_runs=all_runs)
        else:
            removed = cleanup.clean(all_runs=all_runs)
    except RouterlabError as e:
        fail(str(e))
    for r in removed:
        click.echo(r if r.startswith("could not") else f"removed {r}")
    if not removed:
        click.echo("nothing to clean")


@app.command()
@argument("only", nargs=-1, help="Check only these (e.g. click bmv2 p4c); default everything.")
@click.option("--testbed", "testbed_file", type=PATH,
              help="A testbed file (hosts.yaml): the same report from each of its hosts, over SSH.")
def doctor(only, testbed_file):
    """Report which engines, generators and kernel features are present, and what is missing.

    Exits 1 when something asked for (default: everything but the optional comparison
    generators) is missing (with --testbed: on the router's host). Engines show their
    upstream repository and commit."""
    from rich.table import Table

    if testbed_file is not None:
        from routerlab.remote import sshtestbed

        try:
            reports = sshtestbed.on_hosts(testbed_file, ["doctor", *only])
        except RouterlabError as e:
            fail(str(e), 1)
        for host, roles, rc, text in reports:
            click.echo(f"== host {host} ({roles})")
            click.echo(text.rstrip())
        # the engines are the router host's: the others' missing engines do not matter
        if any(rc for _, roles, rc, _ in reports if "router" in roles):
            raise Exit(1)
        return

    from routerlab.measuring import doctor as doc

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
        raise Exit(1)


#: Where ``compare`` takes the options not given from (its help shows it as their default).
FROM_CAMPAIGN = "datasets/comparison/campaign.yaml"


@app.command()
@click.option("--out", type=PATH, default=Path("runs/comparison"), help="Dataset folder (resumed if it holds some cells).")
@click.option("--engine", multiple=True, show_default=FROM_CAMPAIGN,
              help="Engines (rows of the tables); those not built become grey cells.")
@click.option("--scenario", multiple=True, show_default=FROM_CAMPAIGN, help="Scenario presets (one table each).")
@click.option("--loads-frac", show_default=FROM_CAMPAIGN, help="Offered loads, fractions of the generator's ceiling.")
@click.option("--runs", type=click.IntRange(min=1), show_default=FROM_CAMPAIGN, help="Trials per cell (K).")
@click.option("--duration", type=float, show_default=FROM_CAMPAIGN, help="Seconds per trial (T).")
@click.option("--ceiling", type=float, help="Generator ceiling in pps, if known (skips measuring it).")
@generator_option
@testbed_option
def compare(out, engine, scenario, loads_frac, runs, duration, ceiling):
    """Measure the 100GE comparison tables on the testbed: every engine in every scenario, as the comparison's campaign file says unless told otherwise."""
    from routerlab.analysis import comparison as tables
    from routerlab.measuring import comparison

    fracs = None
    if loads_frac is not None:
        try:
            fracs = [float(x) for x in loads_frac.split(",")]
        except ValueError:
            fail(f"--loads-frac: expected numbers separated by commas, got {loads_frac!r}")
    with resumable("trials"), progress(unit="trials") as trials:
        # what is not given (None) comes from the campaign file
        comparison.campaign(out, tuple(engine) or None, tuple(scenario) or None, fractions=fracs, runs=runs,
                            duration=duration, ceiling_pps=ceiling, announce=err.print, settings=testbed_settings(),
                            progress=trials)
    ours = tables.ours(out)
    click.echo(tables.orderings(tables.published(), ours).to_string(index=False))


@app.command()
@click.option("--out", type=PATH, default=Path("runs/fast-reroute"),
              help="Folder for samples.csv, runs.csv, experiments.csv.")
@click.option("--variant", multiple=True, help="frr, nft (ShortCut in nftables), ebpf (in eBPF), p4 (on bmv2); "
                                               "default: every one this machine can run.")
@click.option("--runs", type=click.IntRange(min=1), default=10, help="Runs per variant.")
@click.option("--duration", type=float, default=30.0, help="Seconds per run.")
@click.option("--fail-at", type=float, default=10.0, help="Seconds into a run when the link fails.")
@click.option("--converge-after", type=float, default=5.0,
              help="Seconds from the failure to the control plane's update.")
def reroute(out, variant, runs, duration, fail_at, converge_after):
    """The fast-reroute experiment: throughput, RTT and load over time, with and without ShortCut."""
    from routerlab.analysis import reroute
    from routerlab.measuring import fastreroute

    variant = fastreroute.variants_to_run(variant, err.print)
    n = runs * len(variant)
    with resumable("runs"):
        with progress("fast reroute runs", n) as advance:
            samples, facts = fastreroute.experiment(tuple(variant), runs, out=out, progress=advance,
                                                    duration=duration, fail_at=fail_at,
                                                    converge_after=converge_after)
    fastreroute.record_environment(out, when=str(facts["started_at"].min()))
    table, _ = reroute.summary(samples, facts, fail_at=fail_at)
    click.echo(table.to_string(index=False, float_format=lambda x: f"{x:.3g}"))
