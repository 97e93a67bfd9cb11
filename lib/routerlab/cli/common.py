"""What every command shares: the consoles, failing with one line, progress bars, wide
tables, the option types, and the assessment printout of ``assess`` and ``measure``."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import click
from click.exceptions import Exit

from routerlab import defaults
from routerlab.cli.app import argument
from routerlab.errors import RouterlabError


class _Stderr:
    """The console of errors and progress (results go to stdout): rich's console, made when
    first used, since loading rich is a third of the command line's start-up and most runs
    print nothing to stderr. ``err.print(...)`` as on a console; ``err.console()`` is the
    console itself, for rich's progress bars."""

    _made = None

    def console(self):
        if _Stderr._made is None:
            from rich.console import Console

            _Stderr._made = Console(stderr=True, soft_wrap=True)
        return _Stderr._made

    def __getattr__(self, name):
        return getattr(self.console(), name)


err = _Stderr()


#: The option types shared by several commands: a path (given to the command as a Path),
#: the verdict's mode, the input format of ``assess``, the kind of search.
PATH = click.Path(path_type=Path)
MODE = click.Choice(["strict", "notebook"])
INPUT_FORMAT = click.Choice(["auto", "pastrami", "routerlab"])
SEARCH_KIND = click.Choice(defaults.SEARCH_KINDS)


#: Where a command's testbed settings wait in its click context (``ctx.meta``) until
#: :func:`testbed_settings` reads them.
SETTINGS_KEY = "routerlab.testbed.settings"


def testbed_settings():
    """The testbed settings of the running command
    (:class:`routerlab.testbed.settings.Settings`): those its ``--generator`` and
    ``--testbed`` made, else the environment's (a bad environment variable raises
    :class:`routerlab.errors.ParameterError` naming it)."""
    from routerlab.testbed.settings import Settings

    ctx = click.get_current_context()
    if SETTINGS_KEY not in ctx.meta:
        ctx.meta[SETTINGS_KEY] = Settings()
    return ctx.meta[SETTINGS_KEY]


def generator_option(f):
    """``--generator xdp|rlgen``: the generator every testbed of the command drives (default:
    ``$ROUTERLAB_GENERATOR``, else xdp where this machine can run it)."""
    def use(ctx, param, value):
        if value:
            from routerlab.testbed.settings import Settings

            ctx.meta[SETTINGS_KEY] = Settings.asked(value)  # for this command only
        return value

    return click.option("--generator", type=click.Choice(defaults.GENERATORS), expose_value=False, callback=use,
                        is_eager=True, help="Traffic generator: xdp (live XDP frames; the default where the kernel "
                                            "runs them) or rlgen (AF_PACKET).")(f)


def testbed_option(f):
    """``--testbed FILE``: every testbed of the command is the one that testbed file names
    (hosts over SSH, :mod:`routerlab.remote.sshtestbed`) instead of the namespace testbed."""
    def use(ctx, param, value):
        if value:
            from routerlab.remote import sshtestbed

            try:
                # for this command only; after --generator, which is eager
                ctx.meta[SETTINGS_KEY] = ctx.with_resource(sshtestbed.using(value, testbed_settings()))
            except RouterlabError as e:
                fail(str(e))
        return value

    return click.option("--testbed", "testbed_file", type=PATH, expose_value=False, callback=use,
                        help="A testbed file (hosts.yaml): measure on its hosts over SSH instead of the "
                             "namespace testbed.")(f)


class progress:
    """A rich progress bar on stderr, drawn from the steps a piece of work reports
    (:class:`routerlab.progress.Step`): the context value is the
    :data:`routerlab.progress.Progress` to give it.

    ``what``: the bar's label (None: each step's own ``what``, with its note after a
    colon); ``total``: the count, when known before the first step (the bar shows at
    once; else at the first step). ``unit``: what the bar counts (a sweep's "trials"),
    shown as done/total with the time left and kept on the screen when done; without
    it the bar goes when done. A step with 0 done and no fixed label starts a new bar
    (the next sweep of a comparison). ``console``: where to draw (default stderr);
    ``transient``: whether the bar goes when done (default: unless ``unit``)."""

    def __init__(self, what: str | None = None, total: int | None = None, unit: str | None = None,
                 console=None, transient: bool | None = None):
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        cols = [TextColumn("{task.description}"), BarColumn(), TextColumn(f"{{task.completed}}/{{task.total}} {unit}"),
                TimeRemainingColumn()] if unit else []
        self._p = Progress(*cols, console=console or err.console(),
                           transient=not unit if transient is None else transient)
        self._what = what
        self._task = None if total is None else self._p.add_task(what or "", total=total)
        self._started = False

    def __enter__(self):
        if self._task is not None:
            self._start()
        return self._step

    def _start(self):
        if not self._started:
            self._p.start()
            self._started = True

    def _step(self, step):
        label = self._what or (f"{step.what}: {step.note}" if step.note else step.what)
        if self._task is None or (step.done == 0 and self._what is None):
            self._task = self._p.add_task(label, total=step.total, completed=step.done or 0)
        else:
            self._p.update(self._task, completed=step.done, total=step.total, description=label)
        self._start()

    def __exit__(self, *exc):
        if self._started:
            self._p.stop()
        return False


def wide():
    """A rich console whose tables are not cut to 80 columns when output goes to a file or pipe."""
    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=240)


@contextlib.contextmanager
def resumable(what: str = "trials", code: int = 2):
    """Around a measurement: Ctrl-C says that finished ``what`` are kept (a rerun resumes)
    and exits 130; a library error fails with its one line and exit ``code``."""
    try:
        yield
    except KeyboardInterrupt:
        err.print(f"interrupted: finished {what} are kept; run the same command again to resume")
        raise Exit(130)
    except RouterlabError as e:
        fail(str(e), code)


def fail(msg: str, code: int = 2):
    from rich.markup import escape

    # the message is text, not markup: "routerlab[mlrsearch]" or "[1, 2]" must show as written
    err.print(f"[red]routerlab: error:[/red] {escape(msg)}", highlight=False)
    raise Exit(code)


def print_assessments(paths: list[Path], params, fmt: str = "auto", as_json: bool = False):
    """One line (or JSON object) per experiment of ``paths``: verdict, PDR, saturation; in
    text, the verdict's reason (and what to do) on indented lines below it (:func:`verdict_lines`).
    The experiments come from :func:`routerlab.analysis.assessment.assess_inputs`, one
    line each as it is judged; an input that cannot be read is an error line on stderr
    and exit status 1 after the others. A copy of the PASTRAMI set without its archive
    is no error: the archive is named in one warning line on stderr (the experiments only
    it holds are left out), the files there are judged, and the exit status is what they
    give (0 when each could be read)."""
    from routerlab.analysis.assessment import assess_inputs, Unreadable

    pdr = params.pdr
    failed = 0
    if not as_json:
        click.echo(f"{'verdict':7}  {'PDR@' + format(pdr, '.2%'):>16}  {'saturation':>12}  loads  runs  file")
    for item in assess_inputs(paths, params, fmt):
        if isinstance(item, Unreadable):
            failed += 1
            err.print(f"[red]routerlab: error:[/red] {item.error}", highlight=False)
            continue
        a, name, places = item.assessment, item.name, item.loss_at
        rec = a.record()
        if as_json:
            click.echo(json.dumps({"file": name, **rec, **({} if places is None else {"loss_at": places})}))
        else:
            sat = f"{a.saturation_load:.0f}" if a.saturation_load is not None else "-"
            runs = str(rec["runs_min"]) if rec["runs_min"] == rec["runs_max"] else f"{rec['runs_min']}-{rec['runs_max']}"
            click.echo(f"{rec['verdict']:7}  {str(a.pdr):>16}  {sat:>12}  {rec['loads']:5}  {runs:>4}  {name}")
            for line in verdict_lines(a.verdict, a.notes, reached_ceiling=item.reached_ceiling):
                click.echo(line)
            if places is not None:
                where = ", ".join(f"{k} {v:.3%}" for k, v in places["places"].items())
                click.echo(f"{'':9}loss at: " + (f"{where} (worst load, {places['offered_pps']:,.0f} pps)"
                                                if where else "nothing lost, in any trial"))
    if failed:
        raise Exit(1)


def verdict_lines(verdict, notes=(), width: int = 100, reached_ceiling: float | None = None) -> list[str]:
    """The lines under a verdict's line in ``assess`` and ``measure``: why (its reason);
    for a sweep that could not be judged, what to do; and the assessment's notes (loads
    with one trial, which have no interval; trials left out as generator-limited).
    Indented, so that the verdict lines still start each experiment.

    ``reached_ceiling``: the generator's ceiling (pps) when the sweep's loads already
    reached it; then the advice to add loads up to it is replaced by what it means."""
    import textwrap

    def block(label, text):
        return textwrap.wrap(f"{label}: {text}", width, initial_indent=" " * 9,
                             subsequent_indent=" " * (11 + len(label)))

    lines = block("why", verdict.reason)
    if verdict.advice and reached_ceiling:
        reached = f"the loads already reach the generator's ceiling ({reached_ceiling:,.0f} pps): "
        lines += block("to do", reached + (
            "this router is not saturated by what this generator can send, so its PDR is at least "
            "the highest load; a faster generator (or a costlier scenario) is needed to find it"
            if verdict.pdr_index is None else
            "no load above the crossing can be offered to judge saturation; a faster generator "
            "(or a costlier scenario) is needed for a verdict"))
    elif verdict.advice:
        lines += block("to do", verdict.advice)
    for note in notes:
        lines += block("note", note)
    return lines


#: How a check reports (``--format``): text for a person, JSON or JUnit XML for a grader.
CHECK_FORMATS = ("text", "json", "junit")


def format_option(f):
    """``--format text|json|junit`` of ``click check`` and ``p4 check``."""
    return click.option("--format", "fmt", type=click.Choice(CHECK_FORMATS), default="text", show_default=True,
                        help="text for you; json or junit (JUnit XML) on stdout for a grader. Exit status: 0 every "
                             "expectation passed, 1 one failed or was not tried, 2 the check could not run, 130 "
                             "interrupted.")(f)


def extra_checks_option(ports: str):
    """``--extra-checks FILE`` of ``click check`` and ``p4 check``; ``ports`` says what
    "in" and "out" are in the track."""
    return click.option("--extra-checks", "extra", type=PATH, metavar="FILE",
                        help="An instructor's cases the students did not see, checked after the exercise's own: "
                             "YAML with cases, each with send (a packet, e.g. 'udp 10.70.1.2 > 10.71.0.5:53'), "
                             f"from (in|out), leaves (in|out|nowhere), optionally expect (header fields, ICMP type "
                             f"and code) and why ({ports}); and optionally counters, each to go up by a number "
                             "(routers/exercises/README.md, 'Hidden checks').")


def read_extra(path):
    """The cases of ``--extra-checks``, or None; a bad file exits 2 naming file, line and
    what is wrong."""
    if path is None:
        return None
    from routerlab.course.checks import read_extra_checks

    try:
        return read_extra_checks(path)
    except RouterlabError as e:
        fail(f"--extra-checks: {e}")


def packets_argument(f):
    """The PACKET arguments of ``click try`` and ``p4 try``."""
    return argument("packets", nargs=-1, metavar="[PACKET]...",
                    help="Packets to send, each one argument: 'udp 10.70.1.2 > 10.71.0.5 ttl 1', "
                         "'tcp 10.70.1.2 -> 10.71.0.5:22', 'icmp-echo 10.70.1.2 > 10.70.1.1', 'arp 10.70.1.1'; "
                         "'out:' in front sends it in from the sink's side. None: type them, one a line "
                         "(an empty line or Ctrl-D ends), or pipe them in.")(f)


def exercise_options(exercise_help: str, option: str, file_help: str, verb: str, *, packets: bool = False):
    """What every exercise command of a track (``check``, ``try``) takes, in this order:
    EXERCISE (``exercise_help``), for a try its PACKETs (``packets``), the student's file
    (``option``, e.g. ``--config``: ``file_help``) and ``--solution`` (``verb`` the
    reference solution instead)."""
    def decorate(f):
        f = click.option("--solution", is_flag=True, help=f"{verb} the reference solution instead.")(f)
        f = click.option(option, type=PATH, help=file_help)(f)
        if packets:
            f = packets_argument(f)
        return argument("exercise", help=exercise_help)(f)

    return decorate


def run_try(packets: tuple[str, ...], run, commands: tuple[str, ...] = ()):
    """``click try`` and ``p4 try``: check each PACKET argument (a bad one exits 2 naming
    it; one starting with a word of ``commands`` is the session's to check), then
    ``run(lines)`` (no PACKET: :class:`TypedLines`), which sends them and shows what
    came back. A router that does not start exits 1 with its messages, one that could not
    be tried (no such exercise or file, no engine) 2, Ctrl-C 130."""
    from routerlab.course.checks import packet_line
    from routerlab.errors import NotStarted

    for text in packets:
        if text.split(" ", 1)[0] in commands:
            continue
        try:
            packet_line(text)
        except ValueError as e:
            fail(f"PACKET {text!r}: {e}")
    try:
        run(list(packets) or TypedLines())
    except KeyboardInterrupt:
        raise Exit(130)
    except NotStarted as e:
        fail(str(e), code=1)
    except RouterlabError as e:
        fail(str(e))


class TypedLines:
    """The packet lines typed on standard input for ``click try`` and ``p4 try``: at a
    terminal after a ``packet>`` prompt, until an empty line or its end (Ctrl-D); else
    until its end, blank lines passed on. An object, not a generator, so that it pickles
    to a session in namespaces of its own (:mod:`routerlab.testbed.userns`), which then
    reads the standard input it inherits."""

    def __iter__(self):
        prompt = sys.stdin.isatty()
        while True:
            if prompt:
                click.echo("packet> ", nl=False)
            line = sys.stdin.readline()
            if not line.strip() and (not line or prompt):
                return
            yield line


def students_file(given, solution: bool, name: str, suffix: str, shipped, option: str) -> Path | None:
    """The file a check or a try runs: ``given`` (the track's ``option``, which
    ``--solution`` excludes); else, unless the solution is asked for, the exercise's file
    in the working folder, as ``routerlab click copy`` lays it out (``NAME.SUFFIX``
    there, or ``NAME/NAME.SUFFIX``), when it is not the shipped skeleton itself; else
    None (the skeleton). Says on stderr which file it is (``shipped(given)`` gives the
    path of the shipped one)."""
    if given is not None and solution:
        fail(f"{option} and --solution: give one of them")
    if given is None and not solution:
        here = Path.cwd()
        for c in (here / f"{name}{suffix}", here / name / f"{name}{suffix}"):
            if c.is_file() and c.resolve() != Path(shipped(None)).resolve():
                given = c
                break
    try:
        err.print(f"checking {Path(shipped(given)).resolve()}", highlight=False, markup=False)
    except RouterlabError as e:
        fail(str(e))
    return given


def checked_file(given, solution: bool) -> str:
    """What a check checked, for a grader: the student's file, or the exercise's
    ``solution`` or ``skeleton``."""
    return str(given) if given else "solution" if solution else "skeleton"


def report_check(run, fmt: str = "text", check: dict | None = None):
    """Run an exercise's check (``run()`` returns its expectations) and report them in
    ``fmt`` (:data:`CHECK_FORMATS`; ``check`` names the track, the exercise and what was
    checked, for json and junit); exit with 0 only when every one passed, 1 otherwise;
    Ctrl-C exits 130, a check that could not run exits 2 with its error in one line."""
    import time

    from routerlab.course.checks import as_json, as_junit

    started = time.monotonic()
    try:
        results = run()
    except KeyboardInterrupt:
        raise Exit(130)
    except RouterlabError as e:
        fail(str(e))
    check = check or {"track": "check", "exercise": "check"}
    if fmt == "json":
        click.echo(json.dumps(as_json(check, results, started), indent=1))
    elif fmt == "junit":
        click.echo(as_junit(check, results, started), nl=False)
    else:
        print_expectations(results)
    if not all(r.passed for r in results):
        raise Exit(1)


def print_expectations(results) -> int:
    """PASS, FAIL or SKIP and the name of each expectation of an exercise's check
    (:class:`routerlab.course.checks.Expectation`), a failure's hint below it, under a heading
    per TODO step (:func:`routerlab.course.checks.steps`), then a count and where the student
    is (:func:`routerlab.course.checks.standing`); returns the exit status: 0 only when every
    expectation passed."""
    from rich.console import Console

    from routerlab.course.checks import standing, steps

    out = Console(soft_wrap=True, highlight=False)
    groups = steps(results)
    for step in groups:
        if len(groups) > 1:
            out.print(f"[bold]{step.label}[/bold]: {step.passed} of {len(step.expectations)} pass", markup=True)
        for r in step.expectations:
            mark = "[green]PASS[/green]" if r.passed else "[yellow]SKIP[/yellow]" if r.skipped else "[red]FAIL[/red]"
            out.print(f"{mark}  {r.name}", markup=True)
            for line in (r.skipped or r.detail).splitlines():
                out.print(f"      {line}", style="dim", markup=False)
    passed = sum(r.passed for r in results)
    skipped = sum(bool(r.skipped) for r in results)
    where = standing(results)
    click.echo(f"{passed} of {len(results)} expectations pass"
               + (f" ({skipped} not tried: see SKIP)" if skipped else "") + (f". {where[0].upper()}{where[1:]}" if where else ""))
    return 0 if passed == len(results) else 1


def parse_params(items: list[str]) -> dict:
    import yaml

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
