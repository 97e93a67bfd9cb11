"""The machine's other work kept off the router's CPU while a testbed is up, with this
machine's own kernel threads, a process of its own outside the run and the unbound
workqueues: moved when it comes up, given back when it goes down (with what a moved
process started meanwhile), after a kill -9 by routerlab clean, and once only when two
testbeds overlap.

The tests with this machine's threads need root (moving kernel threads, network
namespaces) and a kernel thread that may run on the router's CPU and another; skipped
otherwise, with that reason. The state's bookkeeping (holders, interruptions, reused
process ids) is tested on stand-in threads, without root."""

import contextlib
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from routerlab.testbed import housekeeping
from routerlab.testbed import cleanup, namespaces
from routerlab.errors import ParameterError

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: moving kernel threads")

ROUTER_CPU = namespaces.NamespaceTestbed.router_cpu


@pytest.fixture
def threads():
    """The movable kernel threads now, by pid, with their sets; skips when there are none."""
    if (os.cpu_count() or 1) <= ROUTER_CPU:
        pytest.skip(f"needs CPU {ROUTER_CPU}, the router's")
    found = {t.pid: t for t in housekeeping.movable(ROUTER_CPU)}
    if not found:
        pytest.skip(f"no kernel thread here may run on CPU {ROUTER_CPU} and another: nothing to move")
    return found


def sets(pids):
    """The CPU sets of the threads still alive among ``pids`` now."""
    out = {}
    for pid in pids:
        try:
            out[pid] = frozenset(os.sched_getaffinity(pid))
        except OSError:
            pass
    return out


@needs_root
def test_the_router_cpu_is_left_to_the_router_while_up_and_given_back_after(threads):
    with namespaces.NamespaceTestbed() as tb:
        now = sets(threads)
        assert now and all(ROUTER_CPU not in s for s in now.values())
        assert housekeeping.movable(ROUTER_CPU) == []
        assert set(tb.housekept) >= {threads[p].name for p in now}
        assert f"kept off CPU {ROUTER_CPU}: " in tb.chain()
    after = sets(threads)
    assert after == {p: threads[p].cpus for p in after}


@needs_root
def test_wired_straight_to_the_sink_the_generators_cpu_is_kept_free(threads):
    """Measuring the generator's ceiling, the router's CPU idles: the threads go there."""
    gen_cpu = namespaces.NamespaceTestbed.gen_cpu
    with namespaces.NamespaceTestbed(direct=True) as tb:
        assert tb.kept_cpu == gen_cpu != ROUTER_CPU
        now = sets(threads)
        assert now and all(gen_cpu not in s and ROUTER_CPU in s for s in now.values())
        assert f"kept off CPU {gen_cpu}: " in tb.chain()
    after = sets(threads)
    assert after == {p: threads[p].cpus for p in after}


@needs_root
def test_two_testbeds_at_once_give_the_cpus_back_when_both_are_down(threads):
    outer = namespaces.NamespaceTestbed()
    with outer:
        with namespaces.NamespaceTestbed():
            pass
        assert all(ROUTER_CPU not in s for s in sets(threads).values())  # the outer one still holds them
    assert sets(threads) == {p: threads[p].cpus for p in sets(threads)}


@needs_root
def test_leave_mode_moves_nothing(threads, monkeypatch):
    monkeypatch.setenv("ROUTERLAB_HOUSEKEEPING", "leave")
    with namespaces.NamespaceTestbed() as tb:
        assert sets(threads) == {p: threads[p].cpus for p in sets(threads)}
        assert tb.housekept == [] and "other work left where it was (ROUTERLAB_HOUSEKEEPING=leave)" in tb.chain()
    monkeypatch.setenv("ROUTERLAB_HOUSEKEEPING", "pin")
    with pytest.raises(ParameterError, match="ROUTERLAB_HOUSEKEEPING.*move, leave.*'pin'"):
        housekeeping.mode()


OUTSIDER = textwrap.dedent("""
    import json, os, subprocess, sys, threading, time
    fifo, out = sys.argv[1], sys.argv[2]
    with open(fifo) as f:  # blocks until the test opens it to write
        f.read()
    ready = threading.Event()
    tid = {}
    def thread():
        tid["t"] = threading.get_native_id()
        ready.set()
        time.sleep(300)
    threading.Thread(target=thread, daemon=True).start()
    ready.wait()
    child = subprocess.Popen(["sleep", "300"])
    with open(out + ".tmp", "w") as f:
        json.dump({"thread": tid["t"], "child": child.pid}, f)
    os.rename(out + ".tmp", out)
    time.sleep(300)
""")


@pytest.fixture
def outsider(tmp_path):
    """A process of this machine outside the run's own (reparented away from this one),
    waiting, when its fifo is written to, to start a thread and a child process and write
    their ids: (its pid, the fifo, the file of the ids)."""
    if (os.cpu_count() or 1) <= ROUTER_CPU:
        pytest.skip(f"needs CPU {ROUTER_CPU}, the router's")
    fifo, out, mine, script = tmp_path / "go", tmp_path / "started.json", tmp_path / "outsider", tmp_path / "outsider.py"
    os.mkfifo(fifo)
    script.write_text(OUTSIDER)
    # started twice removed, its parent gone at once: not a descendant of this process
    subprocess.run(["sh", "-c", f"setsid {sys.executable} {script} {fifo} {out} & echo $! > {mine}"], check=True)
    pid = int(mine.read_text())
    deadline = time.monotonic() + 10
    # waiting on its fifo when the testbed comes up
    while not (str(script).encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
               and Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "S"):
        assert time.monotonic() < deadline, "the outsider did not start"
        time.sleep(0.01)
    yield pid, fifo, out
    with contextlib.suppress(OSError, ValueError):
        os.kill(json.loads(out.read_text())["child"], 9)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, 9)


@needs_root
def test_another_process_leaves_the_router_cpu_and_what_it_starts_meanwhile_gets_it_back(outsider):
    pid, fifo, out = outsider
    full = frozenset(os.sched_getaffinity(pid))
    assert ROUTER_CPU in full and len(full) > 1
    own = os.sched_getaffinity(os.getpid())
    with namespaces.NamespaceTestbed() as tb:
        assert os.sched_getaffinity(pid) == full - {ROUTER_CPU}
        assert housekeeping.OTHERS in tb.housekept
        state = json.loads(housekeeping.STATE.read_text())
        assert state["moved"][str(pid)]["process"].endswith(f"(pid {pid})"), state["moved"].get(str(pid))
        assert os.sched_getaffinity(os.getpid()) == own, "the run's own process was moved"
        with open(fifo, "w") as f:
            f.write("go\n")
        deadline = time.monotonic() + 10
        while not out.exists():
            assert time.monotonic() < deadline, "the outsider started nothing"
            time.sleep(0.02)
        started = json.loads(out.read_text())
        # inherited from the moved process: its new thread, its new child
        assert os.sched_getaffinity(started["thread"]) == full - {ROUTER_CPU}
        assert os.sched_getaffinity(started["child"]) == full - {ROUTER_CPU}
    assert os.sched_getaffinity(pid) == full
    assert os.sched_getaffinity(started["thread"]) == full
    assert os.sched_getaffinity(started["child"]) == full


@needs_root
def test_the_unbound_workqueues_leave_the_router_cpu_and_get_it_back(threads):
    if not housekeeping.WORKQUEUE_MASK.exists():
        pytest.skip(f"this kernel has no {housekeeping.WORKQUEUE_MASK}")
    mask = housekeeping.WORKQUEUE_MASK.read_text()
    if ROUTER_CPU not in housekeeping._mask_cpus(mask) or len(housekeeping._mask_cpus(mask)) < 2:
        pytest.skip(f"the unbound workqueues may not run on CPU {ROUTER_CPU} and another (mask {mask.strip()})")
    with namespaces.NamespaceTestbed() as tb:
        assert housekeeping.WORKQUEUES in tb.housekept
        assert housekeeping._mask_cpus(housekeeping.WORKQUEUE_MASK.read_text()) == housekeeping._mask_cpus(mask) - {ROUTER_CPU}
    assert housekeeping.WORKQUEUE_MASK.read_text() == mask


RUN = textwrap.dedent("""
    import sys, time
    from routerlab.testbed import namespaces
    with namespaces.NamespaceTestbed(prefix=sys.argv[1]):
        print("up", flush=True)
        time.sleep(60)
""")


@needs_root
def test_a_killed_run_s_threads_get_their_cpus_back_from_clean(threads):
    prefix = "rl" + os.urandom(3).hex()
    p = subprocess.Popen([sys.executable, "-c", RUN, prefix], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "up"
        assert all(ROUTER_CPU not in s for s in sets(threads).values())
    finally:
        p.kill()
        p.wait()
    assert all(ROUTER_CPU not in s for s in sets(threads).values())  # kill -9 leaves them moved...
    removed = cleanup.clean()
    after = sets(threads)
    assert after == {p: threads[p].cpus for p in after}  # ...and routerlab clean gives them back
    assert any("CPUs given back" in r for r in removed)


# -- the bookkeeping, on stand-in threads (no root) ---------------------------------------------

class Threads:
    """Stand-in kernel threads: pid -> Thread, whose CPU sets housekeeping changes."""

    def __init__(self, monkeypatch, tmp_path, n=3, fail_at=None, mask=None):
        self.t = {pid: housekeeping.Thread(pid, f"kthread{pid}", 100 + pid, frozenset({0, 1})) for pid in range(1, n + 1)}
        self.moves, self.fail_at = 0, fail_at
        monkeypatch.setattr(housekeeping, "STATE", tmp_path / "housekeeping.json")
        monkeypatch.setattr(housekeeping, "_thread", lambda pid: self.t.get(pid))
        monkeypatch.setattr(housekeeping, "movable", lambda cpu: [t for t in self.t.values()
                                                                  if cpu in t.cpus and len(t.cpus) > 1])
        monkeypatch.setattr(housekeeping.os, "sched_setaffinity", self.set)
        # no real process is a stand-in's child (the real ones: test_another_process_...)
        monkeypatch.setattr(housekeeping, "_give_back_inherited", lambda st: [])
        # the unbound workqueues' mask: a file of the test's (none unless ``mask`` is given)
        monkeypatch.setattr(housekeeping, "WORKQUEUE_MASK", tmp_path / "workqueue-cpumask")
        if mask is not None:
            housekeeping.WORKQUEUE_MASK.write_text(mask + "\n")

    def set(self, pid, cpus):
        self.moves += 1
        if self.moves == self.fail_at:
            raise KeyboardInterrupt("Ctrl-C in the middle of the moves")
        t = self.t[pid]
        self.t[pid] = housekeeping.Thread(pid, t.name, t.start, frozenset(cpus))

    def cpus(self):
        return {pid: set(t.cpus) for pid, t in self.t.items()}


def test_threads_are_given_back_when_the_last_holder_goes(monkeypatch, tmp_path):
    th = Threads(monkeypatch, tmp_path)
    assert housekeeping.hold(1, "a") == ["kthread1", "kthread2", "kthread3"]
    assert th.cpus() == {1: {0}, 2: {0}, 3: {0}}
    assert housekeeping.hold(1, "b") == ["kthread1", "kthread2", "kthread3"]  # already off: still said
    assert housekeeping.release("a") == [] and th.cpus() == {1: {0}, 2: {0}, 3: {0}}
    assert housekeeping.release("b") == ["kthread1", "kthread2", "kthread3"]
    assert th.cpus() == {1: {0, 1}, 2: {0, 1}, 3: {0, 1}} and not housekeeping.STATE.exists()
    assert housekeeping.release("b") == []  # idempotent


def test_a_holder_whose_process_id_was_given_to_another_process_is_dead(monkeypatch, tmp_path):
    th = Threads(monkeypatch, tmp_path)
    housekeeping.hold(1, "a")
    st = json.loads(housekeeping.STATE.read_text())
    # the same process id, started at another time: a later process, not the holder
    st["holders"].append({"id": "killed", "pid": os.getpid(), "start": 1})
    housekeeping.STATE.write_text(json.dumps(st))
    assert housekeeping.release("a") == ["kthread1", "kthread2", "kthread3"]
    assert th.cpus() == {1: {0, 1}, 2: {0, 1}, 3: {0, 1}}


def test_an_interrupted_hold_still_gives_back_what_it_moved(monkeypatch, tmp_path):
    th = Threads(monkeypatch, tmp_path, fail_at=2)
    with pytest.raises(KeyboardInterrupt):
        housekeeping.hold(1, "a")
    assert th.cpus() == {1: {0}, 2: {0, 1}, 3: {0, 1}}
    # the second was recorded, not moved: nothing to give it back
    assert housekeeping.release("a") == ["kthread1"]
    assert th.cpus() == {1: {0, 1}, 2: {0, 1}, 3: {0, 1}}


def test_a_thread_whose_pid_was_reused_is_not_given_a_set(monkeypatch, tmp_path):
    th = Threads(monkeypatch, tmp_path)
    housekeeping.hold(1, "a")
    th.t[2] = housekeeping.Thread(2, "another", 999, frozenset({0}))  # thread 2 ended, its pid reused
    assert housekeeping.release("a") == ["kthread1", "kthread3"] and th.cpus()[2] == {0}


def test_a_spoilt_state_file_is_started_afresh(monkeypatch, tmp_path):
    th = Threads(monkeypatch, tmp_path)
    housekeeping.STATE.write_text("[1, 2")
    assert housekeeping.hold(1, "a") == ["kthread1", "kthread2", "kthread3"]
    assert housekeeping.release("a") == ["kthread1", "kthread2", "kthread3"] and th.cpus()[1] == {0, 1}


def test_the_workqueues_mask_is_given_back_and_kept_until_it_can_be(monkeypatch, tmp_path):
    th = Threads(monkeypatch, tmp_path, mask="3")
    assert housekeeping.hold(1, "a") == ["kthread1", "kthread2", "kthread3", housekeeping.WORKQUEUES]
    assert housekeeping.WORKQUEUE_MASK.read_text() == "1\n"
    assert json.loads(housekeeping.STATE.read_text())["workqueues"] == "3"
    # the mask cannot be written back now: it stays in the state, for release or clean
    monkeypatch.setattr(housekeeping, "WORKQUEUE_MASK", tmp_path)  # a folder: writing it fails
    assert housekeeping.release("a") == ["kthread1", "kthread2", "kthread3"] and th.cpus()[1] == {0, 1}
    assert json.loads(housekeeping.STATE.read_text())["workqueues"] == "3"
    monkeypatch.setattr(housekeeping, "WORKQUEUE_MASK", tmp_path / "workqueue-cpumask")
    assert housekeeping.clean() == [housekeeping.WORKQUEUES]
    assert housekeeping.WORKQUEUE_MASK.read_text() == "3\n" and not housekeeping.STATE.exists()


def test_a_thread_placed_elsewhere_meanwhile_is_left_there(monkeypatch, tmp_path):
    th = Threads(monkeypatch, tmp_path)
    housekeeping.hold(1, "a")
    th.set(2, {1})  # its owner pinned it to CPU 1 while the testbed was up
    assert housekeeping.release("a") == ["kthread1", "kthread3"]
    assert th.cpus() == {1: {0, 1}, 2: {1}, 3: {0, 1}}


def test_a_mask_is_written_as_the_kernel_reads_it():
    assert housekeeping._mask({0}) == "1" and housekeeping._mask({0, 1}) == "3"
    # beyond 32 CPUs, 32-bit groups with commas, as the kernel prints and parses them
    assert housekeeping._mask(set(range(40))) == "ff,ffffffff" and housekeeping._mask({35}) == "8,00000000"
    assert housekeeping._mask_cpus(housekeeping._mask({1, 33, 70})) == {1, 33, 70}
