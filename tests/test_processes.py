"""routerlab.processes on real processes: a group that ignores SIGTERM killed after its grace,
a child that dies with its parent, state files whose owner is dead, errors rebuilt in
another process. No root needed; each test takes a second or two at most."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from routerlab import errors, processes
from routerlab.errors import DataFormatError, ParameterError, RouterlabError

#: A process that ignores SIGTERM, starts a child in its group that ignores it too, says
#: "ready" with the child's pid, and waits.
STUBBORN = textwrap.dedent("""
    import signal, subprocess, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # inherits SIG_IGN
    print("ready", child.pid, flush=True)
    time.sleep(60)
""")

#: A parent that starts a child (with the parent-death signal if argv[1] says so), prints
#: the child's pid and ends at once.
PARENT = textwrap.dedent("""
    import signal, subprocess, sys
    from routerlab import processes
    dies = processes.dies_with_parent(signal.SIGKILL) if sys.argv[1] == "dies" else None
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], preexec_fn=dies,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    print(child.pid, flush=True)
""")


def _gone(pid: int) -> bool:
    """No process ``pid``, or only its exit status left (a zombie nobody reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _wait_gone(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if _gone(pid):
            return True
        time.sleep(0.02)
    return False


def _stubborn():
    p = subprocess.Popen([sys.executable, "-c", STUBBORN], stdout=subprocess.PIPE, text=True, start_new_session=True)
    word, child = p.stdout.readline().split()
    assert word == "ready"
    return p, int(child)


def test_a_group_that_ignores_sigterm_is_killed_after_the_grace():
    p, child = _stubborn()
    try:
        t0 = time.monotonic()
        processes.stop_group(p.pid, 0.5, until=processes.ended_within(p))
        took = time.monotonic() - t0
        assert p.wait(timeout=5) == -signal.SIGKILL
        assert 0.5 <= took < 3, took
        assert _wait_gone(child, 5), "the leader's child, in its group, outlived the SIGKILL"
    finally:
        processes.signal_group(p.pid, signal.SIGKILL)
        p.wait()


def test_a_group_that_honours_sigterm_is_not_waited_for():
    p = subprocess.Popen([sys.executable, "-c", "import time; print('ready', flush=True); time.sleep(60)"],
                         stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert p.stdout.readline().strip() == "ready"
    t0 = time.monotonic()
    processes.stop_group(p.pid, 30, until=processes.ended_within(p))
    assert time.monotonic() - t0 < 5
    assert p.wait(timeout=1) == -signal.SIGTERM


def test_kill_group_and_a_group_that_is_gone():
    p, child = _stubborn()
    processes.kill_group(p.pid)
    assert p.wait(timeout=5) == -signal.SIGKILL
    assert _wait_gone(child, 5)
    # an ended group (its one process reaped): nothing to signal, nothing raised
    p = subprocess.Popen(["true"], start_new_session=True)
    p.wait()
    assert processes.group_gone(p.pid, 1)
    assert not processes.signal_group(p.pid, signal.SIGTERM)
    processes.stop_group(p.pid, 1)
    processes.kill_group(p.pid)


def test_stop_one_process_that_ignores_sigterm():
    p = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                          "print('ready', flush=True); time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    processes.stop(p, 0.3)
    assert p.returncode == -signal.SIGKILL
    processes.stop(p, 0.3)  # twice: nothing more


@pytest.mark.parametrize("dies", [True, False])
def test_the_parent_death_signal_kills_a_child_when_its_parent_dies(dies):
    out = subprocess.run([sys.executable, "-c", PARENT, "dies" if dies else "lives"], capture_output=True, text=True,
                         check=True).stdout
    child = int(out)
    try:
        # without the signal the orphan lives on: the test tells the two apart
        assert _wait_gone(child, 5 if dies else 1) is dies
    finally:
        if not _gone(child):
            os.kill(child, signal.SIGKILL)


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_a_state_file_of_a_dead_owner_is_seen_as_dead(tmp_path):
    mine, theirs = tmp_path / "run" / "rl000001.json", tmp_path / "run" / "rl000002.json"
    processes.write_state(mine, {"pid": os.getpid(), "procs": []})
    processes.write_state(theirs, {"pid": _dead_pid(), "procs": []})
    assert sorted(f.name for f in mine.parent.iterdir()) == ["rl000001.json", "rl000002.json"]  # no .tmp left
    assert processes.owner_alive(processes.read_state(mine))
    assert not processes.owner_alive(processes.read_state(theirs))
    assert not processes.owner_alive({})
    assert processes.alive(str(os.getpid())) and not processes.alive(None)


def test_a_state_file_is_replaced_whole(tmp_path):
    f = tmp_path / "rl000001.json"
    processes.write_state(f, {"pid": 1, "procs": [1, 2]})
    processes.write_state(f, {"pid": 2})
    assert json.loads(f.read_text()) == {"pid": 2}


def test_an_unreadable_state_file_is_none_and_dropped_if_asked(tmp_path):
    f = tmp_path / "rl000001.json"
    f.write_text('{"pid": 12')  # its writer died half-way
    assert processes.read_state(f) is None and f.exists()
    assert processes.read_state(f, drop_unreadable=True) is None and not f.exists()
    assert processes.read_state(f) is None


def test_kill_left_kills_the_live_groups_a_dead_run_listed():
    p, child = _stubborn()
    dead = _dead_pid()
    try:
        assert processes.kill_left({"pid": dead, "procs": [p.pid, dead]}) == [p.pid]
        assert p.wait(timeout=5) == -signal.SIGKILL
        assert _wait_gone(child, 5)
    finally:
        processes.signal_group(p.pid, signal.SIGKILL)
        p.wait()


#: A child that raises the error argv[1] names and sends its record on stdout as JSON.
RAISER = textwrap.dedent("""
    import json, sys
    from routerlab import errors, processes
    made = {"parameter": lambda: errors.ParameterError("--rate", "must be > 0"),
            "needs_root": lambda: errors.NeedsRoot("the testbed needs root"),
            "data": lambda: errors.DataFormatError("a.csv", 3, "no tx column"),
            "bug": lambda: ZeroDivisionError("division by zero")}
    try:
        raise made[sys.argv[1]]()
    except Exception as e:
        print(json.dumps(errors.error_record(e)))
""")


def _record_from_a_child(which: str) -> dict:
    return json.loads(subprocess.run([sys.executable, "-c", RAISER, which], capture_output=True, text=True,
                                     check=True).stdout)


@pytest.mark.parametrize("which, cls, message", [
    ("parameter", ParameterError, "--rate: must be > 0"),
    ("needs_root", errors.NeedsRoot, "the testbed needs root"),
    ("data", DataFormatError, "a.csv:3: no tx column"),
    ("bug", RouterlabError, "division by zero"),  # not a RouterlabError: the base class
])
def test_an_error_round_trips_to_the_same_class_and_message(which, cls, message):
    e = errors.rebuilt_error(_record_from_a_child(which))
    assert type(e) is cls and str(e) == message


def test_an_error_from_another_host_is_named_by_it_and_built_by_its_class():
    e = errors.rebuilt_error(_record_from_a_child("parameter"), source="host dut")
    assert type(e) is ParameterError and e.name == "host dut" and str(e) == "host dut: --rate: must be > 0"
    e = errors.rebuilt_error(_record_from_a_child("needs_root"), source="host dut")
    assert type(e) is errors.NeedsRoot and str(e) == "host dut: the testbed needs root"
    # no file or line in a record: a data file's error comes back as the base class
    e = errors.rebuilt_error(_record_from_a_child("data"), source="host dut")
    assert type(e) is RouterlabError and str(e) == "host dut: a.csv:3: no tx column"


@pytest.mark.parametrize("kind, cls", [
    ("EngineNotFound", errors.EngineNotFound),  # a bare name: one of routerlab.errors
    ("internal", RouterlabError),
    ("OSError", RouterlabError),
    ("os:getcwd", RouterlabError),  # a name that is not a class of routerlab's errors
    ("no.such.module:Thing", RouterlabError),
    ("", RouterlabError),
])
def test_an_error_class_is_one_of_routerlabs_or_the_base(kind, cls):
    assert errors.error_class(kind) is cls


def test_reap_waits_for_a_process_told_to_end_then_kills_it(tmp_path):
    """A process told to end (its input closed) is waited for, within the grace; one that
    does not end is killed; both are reaped."""
    import subprocess
    import sys
    import time

    ends = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    ends.stdin.close()
    started = time.monotonic()
    processes.reap(ends, 10)
    assert ends.returncode == 0 and time.monotonic() - started < 10
    stays = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    processes.reap(stays, 0.2)
    assert stays.returncode == -9


def test_a_failed_command_is_one_line_naming_it_its_status_and_its_last_words():
    errors.check_exit("true", 0, "ignored\n", "")
    for err, out, said in (("warning: x\nerror: the last\n", "", "error: the last"),
                           ("", "out first\nout last\n", "out last"), (None, None, "nothing said")):
        with pytest.raises(errors.RouterlabError) as e:
            errors.check_exit("podman build", 125, err, out)
        assert str(e.value) == f"podman build exited 125: {said}"
