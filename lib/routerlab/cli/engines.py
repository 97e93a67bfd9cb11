"""The engines routerlab builds: ``engines install``, ``pack``, ``list``, ``remove``, ``test``, ``env``, ``run``."""

from __future__ import annotations

import click
from click.exceptions import Exit

from routerlab.errors import RouterlabError
from routerlab.cli.app import argument, engines_app
from routerlab.cli.common import err, fail, PATH


def _engine_names(names: list[str] | None) -> list[str]:
    """The engines named (checked: an unknown one exits 2 with the known ones), or all."""
    from routerlab.engines import builds

    try:
        return [builds.recipe(n).engine for n in names] if names else list(builds.recipes())
    except RouterlabError as e:
        fail(str(e))


@engines_app.command("install")
@argument("engine", nargs=-1, help="click, fastclick, bmv2, bmv2-log, p4c, vpp; default all six (with --from: "
                                   "all the bundle holds).")
@click.option("--jobs", type=int, help="Cores per build (default: all).")
@click.option("--parallel", type=int, default=2,
              help="Builds at a time; both keep the cores busy while the other configures.")
@click.option("--force", is_flag=True, help="Build again even if installed.")
@click.option("--from", "bundle", metavar="FILE|URL",
              help="Install from a bundle `routerlab engines pack` made, instead of building.")
@click.option("--sha256", help="The bundle's SHA-256, as its publisher gives it: any other is refused "
                                "(needed for a URL).")
@click.option("--testbed", "testbed_file", type=PATH,
              help="A testbed file (hosts.yaml): install on its router's host, over SSH (a bundle given "
                   "as a file is copied there).")
@click.option("--packages-only", is_flag=True,
              help="Install only the Debian packages the engines need, with apt (as root, or sudo at a "
                   "terminal), and build nothing: with --from, what installing and running the bundle's "
                   "engines needs; without, what building and running them needs. The administrator's "
                   "step: the machine's users then install the engines without root.")
def engines_install(engine, jobs, parallel, force, bundle, sha256, testbed_file, packages_only):
    """Build and install engines from their pinned sources (GitHub, or $ROUTERLAB_ENGINE_SOURCES),
    or install them from a bundle (--from) in seconds.

    Without --from, an engine that a bundle in $ROUTERLAB_ENGINE_BUNDLES (a folder of
    `engines pack` files, each beside its .sha256) holds under the key it would be built
    with comes from that bundle; the others are built. Neither needs root where the Debian
    packages are installed (--packages-only, once, as root)."""
    import time

    from routerlab.engines import builds

    if packages_only:
        _packages_only(engine, bundle, sha256, jobs is not None or parallel != 2 or force or testbed_file)
        return
    if testbed_file is not None:
        from routerlab.remote import sshtestbed

        if jobs is not None or parallel != 2:
            fail("--jobs and --parallel are the router host's own defaults with --testbed")
        try:
            sshtestbed.install_engines(testbed_file, list(engine), bundle=bundle, sha256=sha256, force=force)
        except RouterlabError as e:
            fail(str(e), 1)
        return

    t0 = time.monotonic()
    say = lambda line: click.echo(f"[{time.monotonic() - t0:6.0f} s] {line}")  # noqa: E731
    if sha256 and not bundle:
        fail("--sha256 goes with --from (the bundle it checks)")
    if bundle:
        from routerlab.engines import bundles

        if jobs is not None or parallel != 2:
            fail("--jobs and --parallel go with building; --from unpacks a bundle")
        try:
            bundles.install(bundle, sha256=sha256, names=list(engine) or None, force=force, say=say)
        except KeyboardInterrupt:
            err.print("interrupted: nothing half-installed")
            raise Exit(130)
        except RouterlabError as e:
            fail(str(e), 1)
        return
    names = _engine_names(engine)
    try:
        if not force:
            from routerlab.engines import bundles

            bundles.from_folder(names, say=say)
        results = builds.install(names, say=say, jobs=jobs, parallel=parallel, force=force)
    except KeyboardInterrupt:
        err.print("interrupted: unfinished builds removed, nothing half-installed")
        raise Exit(130)
    except RouterlabError as e:
        fail(str(e), 1)
    failed = {n: r for n, r in results.items() if isinstance(r, Exception)}
    if failed:
        fail(f"not installed: {', '.join(failed)}", 1)


def _packages_only(engine: tuple[str, ...], bundle: str | None, sha256: str | None, other_options: bool) -> None:
    """``engines install --packages-only``: the Debian packages the engines need installed
    (or the apt line to run said, in one line), nothing built or unpacked."""
    import time

    from routerlab.engines import builds, bundles

    if other_options:
        fail("--packages-only goes with the engines' names, --from and --sha256 only: it builds nothing")
    if sha256 and not bundle:
        fail("--sha256 goes with --from (the bundle it checks)")
    t0 = time.monotonic()
    say = lambda line: click.echo(f"[{time.monotonic() - t0:6.0f} s] {line}")  # noqa: E731
    try:
        if bundle:
            want = bundles.packages(bundle, sha256=sha256, names=list(engine) or None, say=say)
            whose = "the bundle's engines" + (f" {', '.join(engine)}" if engine else "")
            then = " ".join(["--from", bundle, *(["--sha256", sha256] if sha256 else []), *engine])
        else:
            names = _engine_names(engine)
            want = builds.packages(names)
            whose, then = ", ".join(names), " ".join(names)
        builds.install_debian(want, say, what=f"Debian packages of {whose}")
    except RouterlabError as e:
        fail(str(e), 1)
    click.echo(f"the {len(want)} Debian packages of {whose} are installed; any user may now run: "
               f"routerlab engines install {then}")


@engines_app.command("pack")
@argument("engine", nargs=-1, help="click, fastclick, bmv2, bmv2-log, p4c, vpp; default every one installed.")
@click.option("--out", type=PATH, required=True,
              help="The bundle file to write (a .tar.gz).")
def engines_pack(engine, out):
    """Pack installed engines into one bundle that `engines install --from` installs anywhere
    (same Debian release and architecture) in seconds; print its SHA-256 and size."""
    from routerlab.engines import builds, bundles

    names = _engine_names(engine) if engine else [n for n in builds.recipes() if builds.installed(n)]
    if not names:
        fail("no engine is installed to pack; run: routerlab engines install", 1)
    try:
        digest, size = bundles.pack(names, out, say=lambda line: err.print(line, highlight=False))
    except RouterlabError as e:
        fail(str(e), 1)
    click.echo(f"{out}: {size / 1e6:.1f} MB, sha256 {digest}")
    click.echo(f"install it with: routerlab engines install --from {out.name} --sha256 {digest}")


@engines_app.command("list")
def engines_list():
    """Each engine: installed or not, its pinned commit, its prefix, and what overrides it."""
    import pandas as pd

    from routerlab.engines import builds

    rows = pd.DataFrame(builds.listing())
    click.echo(rows.rename(columns={"installed": "status"}).to_string(index=False))


@engines_app.command("remove")
@argument("engine", nargs=-1, help="click, fastclick, bmv2, bmv2-log, p4c, vpp; default all six.")
def engines_remove(engine):
    """Remove installed engines (every build of them); the compiler cache stays."""
    from routerlab.engines import builds

    removed = builds.remove(_engine_names(engine), say=click.echo)
    for p in removed:
        click.echo(f"removed {p}")
    if not removed:
        click.echo("nothing installed to remove")


@engines_app.command("test")
@argument("engine", nargs=-1, help="click, fastclick, p4c (its bmv2 suite, on routerlab's bmv2), vpp (test/run_tests.py: "
                                   "IPv4, the ACL plug-in, af_packet and af_xdp); default all four.")
@click.option("--test", "tests", multiple=True, metavar="FILE",
              help="One test of the suite, as a path under its test/ folder (p4c: under testdata/, e.g. "
                   "p4_16_samples/arith-bmv2.p4; vpp: FILE[.CLASS[.TEST]] of test/, e.g. test_ip4.TestIPv4; "
                   "repeatable); default all (vpp: the files of what routerlab uses).")
def engines_test(engine, tests):
    """Run each engine's own upstream test suite against its install: per suite run, passed,
    skipped, failed as upstream expects (named with why) and failed; exit 1 when one failed."""
    import time

    from routerlab.engines import upstream

    names = list(engine) or list(upstream.SUITES)
    t0 = time.monotonic()
    say = lambda line: err.print(f"[{time.monotonic() - t0:4.0f} s] {line}", highlight=False)  # noqa: E731
    try:
        runs = upstream.run(names, tests=list(tests) or None, say=say)
    except KeyboardInterrupt:
        raise Exit(130)
    except RouterlabError as e:
        fail(str(e))
    click.echo(upstream.report(runs))
    if not all(r.ok for r in runs):
        raise Exit(1)


@engines_app.command("env")
@click.option("--log-build/--no-log-build", default=None,
              help="bmv2's logging build (bmv2-log) or bmv2 [default: bmv2-log where installed].")
def engines_env(log_build):
    """Print the shell lines (export PATH, PYTHONPATH) that make routerlab's p4c, bmv2 and
    PI's P4Runtime Python modules the ones found: eval "$(routerlab engines env)"."""
    from routerlab.engines import environment

    try:
        click.echo(environment.exports(log_build), nl=False)
    except RouterlabError as e:
        fail(str(e))


@engines_app.command("run", context_settings={"ignore_unknown_options": True})
@click.option("--isolated", is_flag=True,
              help="In network, PID and mount namespaces of its own (a user namespace too without root), "
                   "where sudo runs its command as it is: for scripts that create interfaces or kill switches.")
@click.option("--log-build/--no-log-build", default=None,
              help="bmv2's logging build (bmv2-log) or bmv2 [default: bmv2-log where installed].")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def engines_run(isolated, log_build, command):
    """Run COMMAND with routerlab's engines first in PATH and PI's P4Runtime modules in
    PYTHONPATH; exit with its status. For p4lang/tutorials: in exercises/basic,
    routerlab engines run --isolated -- make test."""
    from routerlab.engines import environment

    try:
        code = environment.run(list(command), isolated=isolated, log_build=log_build)
    except RouterlabError as e:
        fail(str(e))
    raise SystemExit(code)
