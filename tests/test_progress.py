"""The progress protocol: the library reports steps to the callable it is given and prints
nothing; the command line draws them, and shows the library's warnings as it printed them."""

import io
import logging
import os

import pytest

from routerlab.progress import silent, Step

root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces)")


def test_a_step_is_a_value_and_silent_takes_any():
    s = Step("linux single-flow @ 5000 pps", 1, 4)
    assert (s.what, s.done, s.total, s.note) == ("linux single-flow @ 5000 pps", 1, 4, "")
    assert s == Step("linux single-flow @ 5000 pps", 1, 4) and hash(s) == hash(Step("linux single-flow @ 5000 pps", 1, 4))
    with pytest.raises(AttributeError):
        s.done = 2
    assert silent(s) is None and silent(Step("x")) is None


@root
def test_a_sweep_reports_one_step_per_trial_and_prints_nothing(tmp_path, capfd):
    from routerlab.analysis import scenarios
    from routerlab.measuring import sweep

    plan = sweep.SweepPlan("linux", scenarios.load("single-flow"), [5_000, 10_000], runs=2, duration=0.2)
    steps = []
    sweep.run(plan, tmp_path, ceiling_pps=400_000, progress=steps.append)
    assert steps[0] == Step("linux single-flow", 0, 4)
    trials = [s for s in steps[1:] if not s.note]
    assert [(s.done, s.total) for s in trials] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert [s.what for s in trials] == ["linux single-flow @ 5000 pps"] * 2 + ["linux single-flow @ 10000 pps"] * 2
    # a repeated attempt says why, without counting a trial done
    assert all(s.note.startswith("repeating, ") for s in steps[1:] if s.note)
    out = capfd.readouterr()
    assert out.out == ""
    # resumed with nothing left to measure: no step at all
    steps.clear()
    sweep.run(plan, tmp_path, ceiling_pps=400_000, progress=steps.append)
    assert steps == []


def test_the_command_lines_bar_draws_the_steps():
    from rich.console import Console

    from routerlab.cli.common import progress

    screen = io.StringIO()
    console = Console(file=screen, width=120, force_terminal=False)
    with progress(unit="trials", console=console) as shown:
        shown(Step("linux single-flow", 0, 2))
        shown(Step("linux single-flow @ 5000 pps", 1, 2))
        shown(Step("linux single-flow @ 5000 pps", 1, 2, "repeating, steal 6%"))
        shown(Step("linux single-flow @ 10000 pps", 2, 2))
        # the next sweep (a comparison's next cell) is a bar of its own
        shown(Step("click single-flow", 0, 3))
        shown(Step("click single-flow @ 5000 pps", 1, 3))
    text = screen.getvalue()
    assert "linux single-flow @ 10000 pps" in text and "2/2 trials" in text
    assert "click single-flow @ 5000 pps" in text and "1/3 trials" in text
    # nothing reported, nothing drawn (a sweep resumed with every trial done)
    screen = io.StringIO()
    with progress(unit="trials", console=Console(file=screen)):
        pass
    assert screen.getvalue() == ""


def test_a_fixed_label_bar_counts_the_steps():
    from rich.console import Console

    from routerlab.cli.common import progress

    screen = io.StringIO()
    with progress("fast reroute runs", 3, console=Console(file=screen, width=100), transient=False) as shown:
        for i in range(3):
            shown(Step(f"variant run {i}", i + 1, 3))
    text = screen.getvalue()
    assert "fast reroute runs" in text and "variant run" not in text and "100%" in text


def test_the_command_line_shows_the_librarys_warnings_on_stderr_as_written(monkeypatch):
    """What the library once printed on stderr (the XDP generator replaced by rlgen) is a
    warning of logging now; a command shows it on stderr, one line, as it was."""
    from click.testing import CliRunner

    from routerlab.cli.app import app
    from routerlab.testbed import capabilities

    missing = "live XDP frames need kernel 5.18 or later, this is 4.19 (a test)"
    monkeypatch.setattr(capabilities, "live_frames_missing", lambda: missing)
    monkeypatch.setattr(capabilities, "_told", set())

    @app.command("test-progress-warn", hidden=True)
    def warn():
        capabilities.runnable("xdp")

    try:
        r = CliRunner().invoke(app, ["test-progress-warn"])
    finally:
        app.commands.pop("test-progress-warn")
    assert r.exit_code == 0, r.output
    assert r.stderr == f"routerlab: the XDP generator cannot run here ({missing}): measuring with rlgen\n"
    assert r.stdout == ""


def test_library_warnings_reach_stderr_without_the_command_line():
    """A notebook or script that configured no logging still sees them on stderr, as the
    print they replaced wrote them (Python's last-resort handler: the message alone)."""
    import subprocess
    import sys

    code = ("from routerlab.testbed import capabilities as c; c.live_frames_missing = lambda: 'no frames here'; "
            "print(c.runnable('xdp'))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "rlgen\n"
    assert p.stderr == "routerlab: the XDP generator cannot run here (no frames here): measuring with rlgen\n"


def test_no_logging_handler_is_left_twice():
    from routerlab.cli.app import show_warnings

    show_warnings()
    show_warnings()
    handlers = [h for h in logging.getLogger("routerlab").handlers if type(h).__name__ == "_Warnings"]
    assert len(handlers) == 1
