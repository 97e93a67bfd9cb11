"""What a trial records that may explain why answers move between runs: the router CPU's
time per packet, its own steal, its speed as the guest sees it, the other CPUs' load.

The arithmetic is checked on made-up ``/proc/stat`` samples; the speed probe and a trial
for real need root (network namespaces, a real-time priority) and are skipped otherwise."""

import os
import signal
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest
from conftest import checked_engine

from routerlab import engines
from routerlab.analysis import datasets, scenarios
from routerlab.errors import RouterlabError
from routerlab.measuring import sweep
from routerlab.testbed import interface, namespaces, shell, traffic

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: network namespaces and a real-time priority")


def sample(cpu1, all_cpus=None):
    """A :func:`routerlab.testbed.shell.cpu_times` sample whose CPU 1 (and all CPUs) read
    ``[user, nice, system, idle, iowait, irq, softirq, steal]`` ticks."""
    return {"cpu": all_cpus or [x * 2 for x in cpu1], "cpu0": [0] * 8, "cpu1": cpu1}


def test_time_per_packet_is_the_router_cpus_own_work_over_the_packets_steal_left_out():
    before = sample([100, 0, 200, 1000, 0, 0, 50, 10])
    # 1 s of the CPU: 0.3 s user, 0.1 s system, 0.05 s softirq, 0.05 s steal, the rest idle
    after = sample([130, 0, 210, 1040, 5, 0, 55, 15])
    assert shell.CLOCK_TICKS == 100  # USER_HZ, whatever the kernel's HZ
    work_s = (30 + 10 + 5) / 100
    assert traffic.ns_per_packet(before, after, 1, 450_000) == pytest.approx(work_s * 1e9 / 450_000)
    assert traffic.ns_per_packet(before, after, 1, 450_000) == 1000.0
    # nothing reached the sink: no cost per packet, not zero
    assert traffic.ns_per_packet(before, after, 1, 0) is None


def test_the_router_cpus_steal_is_its_own_not_every_cpus():
    before = sample([0] * 8, all_cpus=[0] * 8)
    after = sample([50, 0, 0, 40, 0, 0, 0, 10], all_cpus=[50, 0, 0, 140, 0, 0, 0, 10])
    split = shell.cpu_split(before, after, 1)
    assert split["steal"] == pytest.approx(0.10) and split["busy"] == pytest.approx(0.60)
    assert split["work_s"] == pytest.approx(0.5)
    # the trial's `steal` column stays the share over all CPUs
    assert shell.cpu_usage(before, after, 1) == (pytest.approx(0.60), pytest.approx(0.05))


def test_rlgen_is_judged_on_the_rate_it_kept_while_behind_its_schedule():
    """rlgen's results at 100,000 pps in a 1-s trial: making up a lag at its catch-up pace
    (1.05 times the rate) it is not generator-limited; keeping half the rate all trial long,
    or 99% of it for 0.2 s, it is; behind for less than a tenth of the trial it is not
    judged on it; the XDP generator's results carry no such times."""
    def limited(behind_ms, frames):
        res = {"behind_ms": behind_ms, "behind_frames": frames}
        return traffic._kept_less_behind(res, 100_000, 1.0)
    assert not limited(200.0, 21_000)
    assert limited(1000.0, 50_000) and limited(200.0, 19_800)
    assert not limited(99.0, 0) and not traffic._kept_less_behind({}, 100_000, 1.0)
    assert not traffic._kept_less_behind({"behind_ms": 500.0, "behind_frames": 0}, 0, 1.0)  # as fast as it can


def test_the_other_cpus_are_named_after_who_runs_there(monkeypatch):
    # the XDP generator: the sink's receive shares the generator's CPU, one column says both
    xdp = namespaces.NamespaceTestbed.__new__(namespaces.NamespaceTestbed)
    xdp.gen_cpu, xdp.router_cpu, xdp.sink_cpu = 0, 1, 0
    assert traffic.other_cpus(xdp) == {"gen": 0, "sink": None}
    # rlgen: the sink's receive on the router's CPU by default, or on one of its own
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    rlgen = namespaces.NamespaceTestbed(generator="rlgen")
    assert traffic.other_cpus(rlgen) == {"gen": 0, "sink": None}
    own = namespaces.NamespaceTestbed(generator="rlgen", sink_cpu=2)
    assert traffic.other_cpus(own) == {"gen": 0, "sink": 2}
    # a testbed whose generator and sink are on other hosts (the SSH testbed's): not read
    remote = types.SimpleNamespace(gen_cpu=0, router_cpu=0, sink_cpu=0)
    assert traffic.other_cpus(remote) == {"gen": None, "sink": None}


def test_the_new_columns_are_written_and_an_older_trials_file_still_reads(tmp_path):
    for col in traffic.SPREAD_FIELDS:
        assert col in sweep.TRIAL_FIELDS and col in datasets.TRIAL_COLUMNS, col
        assert not datasets.TRIAL_COLUMNS[col][0], f"{col} must not be required: older datasets lack it"
        assert col in traffic.TrialResult.__dataclass_fields__, col
    (tmp_path / "trials.csv").write_text("experiment,offered_pps,trial,tx,rx,cpu_load,steal\n"
                                         "linux-single-flow,1000,0,1000,1000,0.2,0.0\n")
    t = datasets.read(tmp_path).trials
    assert len(t) == 1 and "cpu_speed" not in t


def speeds(tb, n=3, **kw):
    return statistics.median(traffic.cpu_speed(tb, tb.router_cpu, **kw) for _ in range(n))


@needs_root
def test_the_speed_probe_reads_the_router_cpu_and_drops_when_it_is_shared():
    """The router's CPU alone gives a positive speed; an ordinary busy loop pinned there
    halves what the probe reads as an ordinary task, and leaves it as it was at its
    real-time priority (the guest's own tasks do not slow it, only the host can)."""
    traffic.stop_probe_binary()
    with namespaces.NamespaceTestbed() as tb:
        alone = speeds(tb)
        assert alone > 0
        hog = subprocess.Popen(["taskset", "-c", str(tb.router_cpu), "sh", "-c", "while :; do :; done"])
        try:
            shared = speeds(tb, priority=0)
            above = speeds(tb)
        finally:
            hog.kill()
            hog.wait()
        assert shared < 0.7 * alone, (alone, shared)
        assert above > 0.85 * alone, (alone, above)
        assert tb.procs == []


SPIN_WITH_CHILD = """
import os, subprocess, sys, threading, time
os.sched_setaffinity(0, {0})
threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
spin = "import time\\nt = time.time()\\nwhile time.time() - t < 30: pass"
child = subprocess.Popen([sys.executable, "-c", spin])
exec(spin)
child.wait()
"""


def test_the_scheduler_clocks_every_thread_of_a_process_and_its_children():
    # a busy parent with a sleeping thread and a busy child, all on one CPU: together they
    # run at most the time that passed, and each busy one waits while the other runs
    p = subprocess.Popen([sys.executable, "-c", SPIN_WITH_CHILD], start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while len(shell.task_times([p.pid])) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        t0, before = time.monotonic(), shell.task_times([p.pid])
        time.sleep(0.6)
        after, elapsed = shell.task_times([p.pid]), time.monotonic() - t0
    finally:
        os.killpg(p.pid, signal.SIGKILL)  # the child too: it would spin on for half a minute
        p.wait()
    # the parent's two threads and its child's
    assert len(before) == 3 and len({tid for tid, _ in before}) == 3, before
    ran, waited = shell.task_change(before, after)
    assert 0.05 < ran / 1e9 < elapsed + 0.05, (ran, elapsed)
    assert waited / 1e9 > 0.1, (waited, elapsed)
    assert shell.task_change(before, {}) is None and shell.task_times([p.pid]) == {}


@needs_root
def test_a_trial_records_what_could_explain_its_spread():
    sc = scenarios.load("single-flow")
    with namespaces.NamespaceTestbed() as tb:
        engines.get("linux").start(tb, sc)
        r = traffic.run_trial(tb, 20_000, 0.5, traffic.TrafficSpec())
        assert r.rx > 0.98 * r.tx
        # /proc/stat samples at the tick: a light trial's work may fall between ticks (0)
        assert r.router_ns_per_packet >= 0 and 0 <= r.router_steal <= 1 and r.cpu_speed > 0, r
        # a load from a cache, not a page walk: some ns, below a microsecond
        assert 1 < r.memory_ns < 1000, r
        if tb.generator == "xdp":
            # the router's NAPI thread, timed by the scheduler's own clock, did the forwarding:
            # some hundreds of ns a packet at this load, never nothing
            assert 10 < r.napi_ns_per_packet < 100_000, r
            # the XDP generator spins on its CPU, where the sink's receive runs too
            assert r.gen_cpu_load > 0.5 and r.sink_cpu_load is None, r
        if traffic.other_cpus(tb)["gen"] is not None:
            # a cache line between two CPUs of one machine: tens to hundreds of ns, not µs
            assert 5 < r.cpu_distance_ns < 5000, r
        # the kernel forwards: no engine's own threads to clock
        assert r.engine_ns_per_packet is None and r.engine_wait_ms is None, r
        none = traffic.run_trial(tb, 20_000, 0.3, traffic.TrafficSpec(), speed_ms=None)
        assert none.cpu_speed is None and none.memory_ns is None and none.cpu_distance_ns is None
        assert tb.procs == []


@needs_root
def test_the_xdp_routers_receive_with_rlgen_is_above_ordinary_tasks_and_clocked():
    """With rlgen the XDP router receives through its input veth's threaded NAPI, pinned to
    the router's CPU at the receive's real-time priority, as with the XDP generator: an
    ordinary task woken on that CPU kept it waiting while its ring overflowed
    (docs/journal/2026-12-07-the-machine-s-agent-on-the-router-cpu.md). Its time per packet
    is clocked by the scheduler as the XDP generator's testbed clocks it."""
    sc = scenarios.load("single-flow")
    eng = checked_engine("ebpf", sc)
    with namespaces.NamespaceTestbed(generator="rlgen") as tb:
        eng.start(tb, sc)
        try:
            pids = [int(p) for p in shell.napi_threads(tb.dut_in)]
            assert pids
            for pid in pids:
                assert os.sched_getscheduler(pid) == os.SCHED_FIFO, pid
                assert os.sched_getparam(pid).sched_priority == interface.RECEIVE_PRIORITY
                assert os.sched_getaffinity(pid) == {tb.router_cpu}
            r = traffic.run_trial(tb, 20_000, 0.5, traffic.TrafficSpec())
            assert r.rx > 0.98 * r.tx and 10 < r.napi_ns_per_packet < 100_000, r
        finally:
            eng.stop(tb)


@needs_root
def test_the_distance_probe_times_a_cache_line_between_two_cpus_and_leaves_nothing_behind():
    """A round trip of one cache line between the router's CPU and another is timed by
    two pinned processes; the partner never outlives the probe; the router's own CPU as
    the partner (both spinning at real-time priority on one CPU would never end) is refused."""
    if os.cpu_count() < 2:
        pytest.skip("the distance probe needs two CPUs; this machine has one")
    with namespaces.NamespaceTestbed() as tb:
        other = next(c for c in range(os.cpu_count()) if c != tb.router_cpu)
        got = traffic.machine_speed(tb, tb.router_cpu, 5, memory_mb=None, beside=other)
        assert got["cpu_speed"] > 0 and got["memory_ns"] is None and 5 < got["cpu_distance_ns"] < 5000, got
        assert traffic.machine_speed(tb, tb.router_cpu, 5, memory_mb=None)["cpu_distance_ns"] is None
        with pytest.raises(RouterlabError, match="--pingpong-cpu another CPU than N"):
            traffic.machine_speed(tb, tb.router_cpu, 5, memory_mb=None, beside=tb.router_cpu)
        assert tb.procs == []


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except FileNotFoundError:
        return True


def test_a_killed_distance_probe_leaves_no_partner_spinning():
    """The probe killed while it passes the line (a crash, or its trial ended by Ctrl-C):
    its partner on the other CPU goes with it. At an ordinary priority, so that a partner
    left behind would not take a CPU from the machine."""
    if os.cpu_count() < 2:
        pytest.skip("the distance probe needs two CPUs; this machine has one")
    probe = subprocess.Popen([str(traffic.stop_probe_binary()), "--cpu", "1", "--speed-ms", "300",
                              "--pingpong-cpu", "0", "--priority", "0"], stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 5
        partners = []
        while not partners and time.monotonic() < deadline and probe.poll() is None:
            time.sleep(0.02)
            partners = [int(x) for x in Path(f"/proc/{probe.pid}/task/{probe.pid}/children").read_text().split()]
        assert partners, "the probe started no ping-pong partner"
        probe.kill()
        probe.wait()
        deadline = time.monotonic() + 2
        while not _gone(partners[0]) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _gone(partners[0]), f"the ping-pong partner {partners[0]} outlived its killed probe"
    finally:
        probe.kill()
        probe.wait()
