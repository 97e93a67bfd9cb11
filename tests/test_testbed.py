"""The namespace testbed, for real: topology up and down, forwarding, counters, clean-up.

Needs root (network namespaces); skipped otherwise, with that reason."""

import json
import re
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import checked_engine, engine_absent, trial_in_background

from routerlab import engines
from routerlab.engines import kernel
from routerlab.analysis import scenarios
from routerlab.testbed import traffic
from routerlab.testbed import capabilities, cleanup, interface, namespaces, shell
from routerlab.testbed.settings import Settings
from routerlab import errors
from routerlab.errors import NeedsRoot, ParameterError

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: network namespaces and veth")


def our_namespaces(prefix):
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(prefix)]


def sink_ring_packets(tb) -> int:
    """Packets the sink's veth delivered through its own NAPI ring (ethtool's veth stats)."""
    stats = shell.nsexec(tb.ns_sink, "ethtool", "-S", tb.sink_if)
    return int(re.search(r"rx_queue_0_xdp_packets: (\d+)", stats).group(1))


def test_topology_up_and_down_leaves_nothing():
    tb = namespaces.NamespaceTestbed()
    with tb:
        assert sorted(our_namespaces(tb.prefix)) == sorted(tb.namespaces)
        assert tb.state_file.is_file()
        # the DUT's two links are up with their addresses; IPv6 is off
        addrs = json.loads(shell.sh("ip", "-n", tb.ns_dut, "-j", "addr", "show"))
        v4 = {a["ifname"]: [i["local"] for i in a["addr_info"] if i["family"] == "inet"] for a in addrs}
        assert v4[tb.dut_in] == ["10.70.1.1"] and v4[tb.dut_out] == ["10.70.2.1"]
        assert not any(i["family"] == "inet6" for a in addrs for i in a["addr_info"])
    assert our_namespaces(tb.prefix) == [] and not tb.state_file.exists()


def test_host_is_untouched():
    before = shell.sh("ip", "-j", "link", "show")
    routes = shell.sh("ip", "route", "show")
    with namespaces.NamespaceTestbed():
        pass
    assert shell.sh("ip", "-j", "link", "show") == before and shell.sh("ip", "route", "show") == routes


@pytest.mark.parametrize("engine, scenario", [("linux", "single-flow"), ("nft", "single-flow-fw5"),
                                              ("ebpf", "single-flow-fw5"), ("linux", "multi-flow")])
def test_forwarding_and_counters_add_up(engine, scenario):
    sc = scenarios.load(scenario)
    eng = checked_engine(engine, sc)
    spec = traffic.TrafficSpec(flows=sc.flows)
    with namespaces.NamespaceTestbed() as tb:
        eng.bring_up(tb, sc)
        f0, q0 = eng.forwarded(tb), sink_ring_packets(tb)
        r = traffic.run_trial(tb, 20_000, 0.5, spec)
        f1, q1 = eng.forwarded(tb), sink_ring_packets(tb)
        # the trial says how long the router's queue lasts at its load, and its CPU's longest stop
        assert r.queue_ms == pytest.approx(tb.router_queue / 20_000 * 1e3) and r.cpu_stop_ms >= 0 and r.gen_late_ms >= 0
        # the sink took every packet from its own veth ring, none from the router's backlog
        assert q1 - q0 == r.rx
        # what the kernel counted as offered is what the generator sent, at the requested rate
        assert r.tx == r.kernel_tx > 0.95 * 10_000
        # forwarding works: at a low load nearly everything arrives (a vCPU stall of the VM
        # can cost a few packets, which is why this is not ==)
        assert 0.98 * r.tx <= r.rx <= r.tx, r
        assert f1 - f0 == r.rx  # exact: the engine's own forwarded counter matches the sink
        if not eng.kernel_forwarding:
            assert kernel.guard_count(tb) == 0  # the kernel forwarded nothing for the engine


#: Takes CPU argv[1] above the probe's priority for each of argv[3:] seconds, argv[2]
#: seconds apart.
HOG = textwrap.dedent("""
    import os, sys, time
    os.sched_setaffinity(0, {int(sys.argv[1])})
    for hold in sys.argv[3:]:
        time.sleep(float(sys.argv[2]))
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(2))
        end = time.monotonic() + float(hold)
        while time.monotonic() < end:
            pass
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
""")


def test_the_stop_probe_sees_the_router_cpu_taken_away():
    """A task above the probe's priority that keeps the router's CPU for 30 ms, then 20 ms,
    makes two stops the probe must report, the longest and both added up; a quiet CPU gives
    a shorter longest; the probe leaves nothing running."""
    with namespaces.NamespaceTestbed() as tb:
        with traffic.cpu_stops(tb, tb.router_cpu) as quiet:
            time.sleep(0.3)
        with traffic.cpu_stops(tb, tb.router_cpu) as taken:
            subprocess.run([sys.executable, "-c", HOG, str(tb.router_cpu), "0.2", "0.03", "0.02"], check=True)
            time.sleep(0.1)
        assert taken["max_stop_ms"] >= 25 and quiet["max_stop_ms"] < taken["max_stop_ms"], (quiet, taken)
        # each stop reads up to one period (2 ms) short
        assert taken["stops"] >= 2 and taken["stopped_ms"] >= taken["max_stop_ms"] + 15, taken
        assert tb.procs == []
    assert not subprocess.run(["pgrep", "-f", "rlstop-"], capture_output=True).stdout


@pytest.mark.parametrize("apart_s", [0.2, 1.0])
def test_the_generator_reports_its_lags_and_their_sum(apart_s):
    """The generator's CPU taken for 30 ms, then 20 ms, in a trial: its worst lag and the
    lags added up say so. A second apart it has made the first up (a lag of d takes about
    20 d at its catch-up pace) and falls behind twice; 0.2 s apart the second hold comes
    while it makes up the first, and still counts in full."""
    traffic.generator_binary(), traffic.stop_probe_binary()  # built before the clock starts
    with namespaces.NamespaceTestbed() as tb:
        engines.get("linux").start(tb, scenarios.load("single-flow"))
        hog = subprocess.Popen([sys.executable, "-c", HOG, str(tb.gen_cpu), str(apart_s), "0.03", "0.02"])
        try:
            r = traffic.run_trial(tb, 20_000, 3.0, traffic.TrafficSpec())
        finally:
            hog.wait()
        assert r.gen_late_ms >= 25 and r.gen_lagged_ms >= 45, r
        assert not r.generator_limited, r


def test_rlgen_makes_a_lag_up_at_a_twentieth_above_the_rate():
    """At 100,000 pps, rlgen is stopped for 200 ms, 400 ms into a 1.5-s trial: it then owes
    20,000 frames and makes them up at 1.05 times the rate, never faster, the rest of them
    after the trial's end. Between a count of the sink taken at the end of the stop and
    one taken 50 ms after, the sink gains no more than 1.05 times the rate over that time
    (and a few batches), where its catch-up at 1.5 times the rate (earlier on 2026-12-07)
    added nearly half the rate more, and sending what it owed at once (before that) the
    20,000 within some tens of ms. It still sends the whole trial's frames, reports the
    lag, and is not generator-limited: a hold is not a slow generator."""
    rate, stop_s, catchup = 100_000, 0.2, 1.05
    traffic.generator_binary()  # built before the clock starts
    with namespaces.NamespaceTestbed(direct=True, generator="rlgen") as tb:
        with trial_in_background(tb, "rlgen", rate, 1.5) as (pid, done):
            time.sleep(0.4)
            os.kill(pid, signal.SIGSTOP)
            time.sleep(stop_s)
            a = tb.sink_count()
            a0 = time.monotonic()
            os.kill(pid, signal.SIGCONT)
            time.sleep(0.05)
            b = tb.sink_count()
            a1 = time.monotonic()
        r = done["r"]
    ran_s, owed, slack = a1 - a0, rate * stop_s, 4 * traffic.BURST
    held_up = f"the test was held up ({ran_s:.3f} s between counts): it cannot tell"
    assert owed > (catchup - 1) * rate * ran_s + slack, held_up
    assert (1.5 - catchup) * rate * ran_s > slack, held_up
    assert b - a <= catchup * rate * ran_s + slack, (b - a, ran_s)
    assert r.tx >= 150_000 and r.rx >= 0.99 * r.tx and r.gen_late_ms > 0.8 * stop_s * 1e3, r
    assert not r.generator_limited, r


def test_rlgen_slower_than_the_rate_is_generator_limited_though_every_frame_leaves():
    """Asked for twice what it can send, rlgen still sends every frame of a 0.5-s trial,
    late (it makes a lag up past the trial's end): the trial is generator-limited all the
    same, as it kept half the rate while it was behind its schedule."""
    traffic.generator_binary()
    with namespaces.NamespaceTestbed(direct=True, generator="rlgen") as tb:
        top = traffic.run_trial(tb, 0, 0.3, traffic.TrafficSpec()).sent_pps
        rate = 2 * top
        r = traffic.run_trial(tb, rate, 0.5, traffic.TrafficSpec())
    assert r.kernel_tx >= traffic.GENERATOR_TOLERANCE * rate * 0.5, (r, top)  # every frame left
    assert r.sent_pps < 0.8 * rate and r.generator_limited, (r, top)


def test_rlgen_held_up_more_than_its_catch_up_makes_up_is_generator_limited():
    """rlgen's CPU taken 3 ms in every 10 (holds too short to count as lags each): at 1.05
    times the rate it cannot make that up, falls further behind all trial long and sends
    the rest after the end. It offered less than the rate meanwhile: generator-limited."""
    traffic.generator_binary(), traffic.stop_probe_binary()
    with namespaces.NamespaceTestbed(direct=True, generator="rlgen") as tb:
        hog = subprocess.Popen([sys.executable, "-c", HOG, str(tb.gen_cpu), "0.007", *["0.003"] * 150])
        try:
            r = traffic.run_trial(tb, 50_000, 1.0, traffic.TrafficSpec())
        finally:
            hog.wait()
    assert r.gen_late_ms > 50 and r.generator_limited, r


def test_drop_scenario_counts_only_legit_traffic():
    sc = scenarios.load("ddos-drop50-fw5", routes=10)
    with namespaces.NamespaceTestbed() as tb:
        engines.get("nft").start(tb, sc)
        r = traffic.run_trial(tb, 20_000, 0.5, traffic.TrafficSpec(flows="multi", drop_share=0.5))
        assert r.tx == pytest.approx(r.kernel_tx / 2, rel=0.01)
        assert 0.98 * r.tx <= r.rx <= r.tx  # the dropped half never reaches the sink


@pytest.mark.parametrize("engine", ["ebpf", "click", "fastclick", "fastclick-dpdk", "bmv2"])
def test_gre_packets_carry_the_outer_header(engine):
    sc = scenarios.load("gre-multiflow-fw50")
    eng = checked_engine(engine, sc)
    code = textwrap.dedent("""
        import socket, struct, sys
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
        s.bind((sys.argv[1], 0)); s.settimeout(5)
        f = s.recv(2048)
        print(f[14:34].hex(), f[34:38].hex(), f[38:58].hex())
    """)
    with namespaces.NamespaceTestbed(generator="rlgen") as tb:  # captured at the sink: not behind the XDP sink
        try:
            eng.start(tb, sc)
            cap = tb.spawn(tb.ns_sink, sys.executable, "-c", code, tb.sink_if, stdout=subprocess.PIPE, text=True)
            time.sleep(0.3)
            traffic.run_trial(tb, 1000, 0.3, traffic.TrafficSpec(flows="multi"))
            outer, gre, inner = cap.communicate(timeout=10)[0].split()
        finally:
            eng.stop(tb)
    outer, inner = bytes.fromhex(outer), bytes.fromhex(inner)
    assert outer[9] == 47 and outer[12:16] == bytes([10, 70, 2, 1]) and outer[16:20] == bytes([10, 70, 2, 2])
    assert gre == "00000800"
    assert inner[16:19] == bytes([10, 71, 0]) and inner[8] == 63  # TTL decremented once


def test_large_route_table_loads_in_batch():
    sc = scenarios.load("single-flow", routes=20_000)
    with namespaces.NamespaceTestbed() as tb:
        facts = engines.get("linux").start(tb, sc)
        n = len(shell.sh("ip", "-n", tb.ns_dut, "route", "show").splitlines())
    assert n >= 20_000 and facts["routes_load_s"] < 30


# a run that brings a testbed up and waits in it; "slow-down": its down says "down" and
# waits 0.5 s first; "leave": the block ends as soon as it is up
SCRIPT = textwrap.dedent("""
    import sys, time
    from routerlab.testbed import namespaces
    tb = namespaces.NamespaceTestbed(prefix=sys.argv[1], cpu_idle="poll")
    if "slow-down" in sys.argv:
        down = tb.down
        def slow_down():
            print("down", flush=True)
            time.sleep(0.5)
            down()
        tb.down = slow_down
    with tb:
        print("up", flush=True)
        time.sleep(0 if "leave" in sys.argv else 60)
""")


def _run(prefix, *how) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", SCRIPT, prefix, *how], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _start_run(prefix, *how):
    p = _run(prefix, *how)
    assert p.stdout.readline().strip() == "up"
    assert len(our_namespaces(prefix)) == 3
    return p


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_cleanup_on_signal(sig):
    prefix = "rl" + os.urandom(3).hex()
    p = _start_run(prefix)
    p.send_signal(sig)
    p.wait(timeout=20)
    assert our_namespaces(prefix) == []
    assert not (interface.STATE_DIR / f"{prefix}.json").exists()


def test_a_second_signal_during_the_clean_up_waits_for_it():
    """Ctrl-C pressed twice, or SIGTERM sent by timeout and again to its process group: the
    second comes while the testbed is being taken down, and must not stop that halfway."""
    prefix = "rl" + os.urandom(3).hex()
    p = _start_run(prefix, "slow-down")
    p.send_signal(signal.SIGTERM)
    assert p.stdout.readline().strip() == "down"
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=20)[1]
    assert our_namespaces(prefix) == [] and not (interface.STATE_DIR / f"{prefix}.json").exists()
    # and the run still ends interrupted
    assert p.returncode != 0 and "KeyboardInterrupt" in err
    # a signal that comes while a block that ended of itself is taken down: held, then raised
    prefix = "rl" + os.urandom(3).hex()
    p = _run(prefix, "slow-down", "leave")
    assert p.stdout.readline().strip() == "up" and p.stdout.readline().strip() == "down"
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=20)[1]
    assert our_namespaces(prefix) == [] and not (interface.STATE_DIR / f"{prefix}.json").exists()
    assert p.returncode != 0 and "KeyboardInterrupt: signal 2" in err, err


def test_clean_after_kill_9():
    prefix = "rl" + os.urandom(3).hex()
    p = _start_run(prefix)
    p.kill()
    p.wait()
    assert len(our_namespaces(prefix)) == 3  # kill -9 leaves them behind...
    removed = cleanup.clean()
    assert our_namespaces(prefix) == []  # ...and routerlab clean removes them
    assert any(prefix in r for r in removed)


TRIAL = textwrap.dedent("""
    import sys
    from routerlab.testbed import traffic
    from routerlab.testbed import namespaces
    with namespaces.NamespaceTestbed(prefix=sys.argv[1]) as tb:
        print("up", tb.generator, flush=True)
        traffic.run_trial(tb, 20_000, 60, traffic.TrafficSpec())
""")


def loaded_programs(name: str) -> int:
    """How many BPF programs named ``name`` the kernel holds now."""
    return sum(p.get("name") == name for p in json.loads(shell.sh("bpftool", "-j", "prog", "show")))


def test_kill_9_mid_trial_leaves_no_generator_or_xdp_program_once_cleaned():
    prefix = "rl" + os.urandom(3).hex()
    # an earlier test's programs go with its namespace, which the kernel releases in the
    # background: let them go first (at most 10 s), so that they are not counted as ours
    deadline = time.monotonic() + 10
    while any(loaded_programs(n) for n in ("xdp_gen", "xdp_sink")) and time.monotonic() < deadline:
        time.sleep(0.2)
    before = {n: loaded_programs(n) for n in ("xdp_gen", "xdp_sink")}
    p = subprocess.Popen([sys.executable, "-c", TRIAL, prefix], stdout=subprocess.PIPE, text=True)
    try:
        up, generator = p.stdout.readline().split()
        assert up == "up"
        time.sleep(1.5)  # the trial under way
        if generator == "xdp":
            assert loaded_programs("xdp_gen") > before["xdp_gen"] and loaded_programs("xdp_sink") > before["xdp_sink"]
    finally:
        p.kill()
        p.wait()
    cleanup.clean()
    assert our_namespaces(prefix) == []
    # the kernel releases a deleted namespace's devices, and the programs on them, in the
    # background (an earlier test's too, counted in before): wait for it, at most 10 s
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        after = {n: loaded_programs(n) for n in ("xdp_gen", "xdp_sink")}
        if all(after[n] <= before[n] for n in after):
            break
        time.sleep(0.2)
    assert all(after[n] <= before[n] for n in after), (before, after)


def held_latency():
    """The CPU latency request the kernel honours now, µs; skips where it cannot be read or
    something else holds it at 0 already (a hold of ours would not show)."""
    now = capabilities.cpu_latency_us()
    if now is None:
        pytest.skip(f"needs {capabilities.CPU_LATENCY} (the kernel's PM QoS CPU latency request)")
    if now == 0:
        pytest.skip(f"another process holds {capabilities.CPU_LATENCY} at 0 us: a hold of the testbed's would not show")
    return now


def test_idle_cpus_poll_while_up_and_the_kernel_drops_the_request_after():
    before = held_latency()
    with namespaces.NamespaceTestbed(cpu_idle="poll") as tb:
        assert capabilities.cpu_latency_us() == 0
        assert tb.idle_held == (f"poll ({capabilities.CPU_LATENCY} 0 us held while up; "
                                f"cpuidle driver {capabilities.cpuidle_driver()})")
    assert capabilities.cpu_latency_us() == before
    with namespaces.NamespaceTestbed(cpu_idle="os") as tb:
        assert capabilities.cpu_latency_us() == before and tb.idle_held.startswith("os (the kernel's idle states; ")


def test_os_mode_says_when_another_process_makes_the_cpus_poll():
    held_latency()
    fd = os.open(capabilities.CPU_LATENCY, os.O_WRONLY)
    try:
        os.write(fd, (0).to_bytes(4, "little"))
        with namespaces.NamespaceTestbed(cpu_idle="os") as tb:
            assert tb.idle_held == f"poll (os asked; another process holds {capabilities.CPU_LATENCY} at 0 us)"
    finally:
        os.close(fd)


def test_a_testbed_that_fails_to_come_up_drops_its_request(monkeypatch):
    before = held_latency()

    def broken(*args):
        assert capabilities.cpu_latency_us() == 0  # the request was taken before the topology
        raise RuntimeError("a link could not be made")

    monkeypatch.setattr(namespaces.NamespaceTestbed, "_veth", broken)
    tb = namespaces.NamespaceTestbed(cpu_idle="poll")
    with pytest.raises(RuntimeError, match="a link could not be made"):
        with tb:
            pass
    assert capabilities.cpu_latency_us() == before and our_namespaces(tb.prefix) == []


def test_a_killed_run_leaves_no_latency_request():
    before = held_latency()
    prefix = "rl" + os.urandom(3).hex()
    p = _start_run(prefix)
    try:
        assert capabilities.cpu_latency_us() == 0
    finally:
        p.kill()
        p.wait()
    # before clean(): the kernel drops it with the dead process's file, no clean-up needed
    assert capabilities.cpu_latency_us() == before
    cleanup.clean()


def test_a_request_that_cannot_be_held_or_has_no_effect_is_said(monkeypatch):
    monkeypatch.setattr(capabilities, "CPU_LATENCY", Path("/nonexistent/cpu_dma_latency"))
    with namespaces.NamespaceTestbed(cpu_idle="poll") as tb:
        assert tb.idle_held == "os (poll asked; /nonexistent/cpu_dma_latency: No such file or directory)"
    monkeypatch.undo()
    monkeypatch.setattr(capabilities, "CPUIDLE_DRIVER", Path("/nonexistent/current_driver"))
    with namespaces.NamespaceTestbed(cpu_idle="poll") as tb:
        assert tb.idle_held == "os (poll asked; no cpuidle driver: idle CPUs halt whatever is asked)"


def test_clean_leaves_live_runs_alone():
    with namespaces.NamespaceTestbed() as tb:
        cleanup.clean()
        assert sorted(our_namespaces(tb.prefix)) == sorted(tb.namespaces)


def test_bad_parameters_are_named():
    with pytest.raises(ParameterError, match="mtu"):
        namespaces.NamespaceTestbed(mtu=10)
    with pytest.raises(ParameterError, match="router_cpu"):
        namespaces.NamespaceTestbed(router_cpu=999)
    with pytest.raises(ParameterError, match="engine"):
        engines.get("danos")
    with pytest.raises(ParameterError, match="scenario"):
        scenarios.load("warp-speed")
    with pytest.raises(ParameterError, match="rate"):
        traffic.run_trial(None, -5, 1, traffic.TrafficSpec())


def test_unsupported_feature_is_refused():
    with pytest.raises(ParameterError, match="does not support gre"):
        engines.get("nft").check(scenarios.load("gre-multiflow-fw50"))


def test_without_root_says_so(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(NeedsRoot, match="needs root"):
        capabilities.require_root()


def test_sweep_writes_as_it_goes_and_resumes(tmp_path):
    from routerlab.analysis import datasets
    from routerlab.measuring import sweep

    plan = sweep.SweepPlan("linux", scenarios.load("single-flow"), [5_000, 10_000], runs=2, duration=0.2)
    sweep.run(plan, tmp_path, ceiling_pps=400_000)
    ds = datasets.read(tmp_path)
    assert len(ds.trials) == 4 and ds.experiments["generator_ceiling_pps"].iloc[0] == 400_000
    assert ds.experiments["kernel"].iloc[0] == os.uname().release
    assert ds.experiments["command"].iloc[0] == datasets.invocation()  # how it was started
    # an interrupted sweep: drop the last trial, run again, only that one is measured anew
    lines = (tmp_path / "trials.csv").read_text().splitlines()
    (tmp_path / "trials.csv").write_text("\n".join(lines[:-1]) + "\n")
    sweep.run(plan, tmp_path, ceiling_pps=400_000)
    t = datasets.read(tmp_path).trials
    assert len(t) == 4 and sorted(zip(t.offered_pps, t.trial)) == [(5000, 0), (5000, 1), (10000, 0), (10000, 1)]


def test_route_loader_reports_refused_routes():
    sc = scenarios.load("single-flow", routes=1_000)
    with namespaces.NamespaceTestbed() as tb:
        engines.get("linux").start(tb, sc)
        with pytest.raises(errors.TestbedError, match="refused 999 of 999"):
            kernel.install_routes(tb, sc)  # the same routes again: the kernel refuses each one


def test_resume_refuses_a_different_configuration(tmp_path):
    from routerlab.measuring import sweep

    sweep.run(sweep.SweepPlan("linux", scenarios.load("single-flow"), [5_000], runs=1, duration=0.2,
                              experiment="x"), tmp_path, ceiling_pps=400_000)
    other = sweep.SweepPlan("nft", scenarios.load("single-flow"), [5_000], runs=1, duration=0.2, experiment="x")
    with pytest.raises(ParameterError, match="would mix them"):
        sweep.run(other, tmp_path, ceiling_pps=400_000)
    # measured with the XDP generator (where it runs), resumed with rlgen: refused, naming the
    # generator to give, and its ceiling is not rlgen's
    from routerlab.measuring import measurement

    if capabilities.runnable(Settings().generator) == "xdp":
        with pytest.raises(ParameterError, match="--generator xdp"):
            sweep.run(sweep.SweepPlan("linux", scenarios.load("single-flow"), [5_000], runs=1, duration=0.2,
                                      experiment="x"), tmp_path, ceiling_pps=400_000,
                      settings=Settings.asked("rlgen"))
        assert measurement.recorded_ceiling(tmp_path, "x", Settings.asked("rlgen")) is None
        assert measurement.recorded_ceiling(tmp_path, "x") == 400_000


@pytest.mark.parametrize("engine", ["click", "fastclick", "fastclick-dpdk", "bmv2"])
def test_external_engines_stop_cleanly_on_ctrl_c(engine):
    """Ctrl-C reaches the engine's process group: it exits within 5 s, and stop() leaves
    no run folder (nor DPDK runtime files) behind."""
    eng = engines.get(engine)
    try:
        eng.check()
    except Exception as e:  # noqa: BLE001
        engine_absent(str(e))
    with namespaces.NamespaceTestbed() as tb:
        eng.start(tb, scenarios.load("single-flow"))
        t0 = time.monotonic()
        os.killpg(eng._proc.pid, signal.SIGINT)
        eng._proc.wait(timeout=10)
        assert time.monotonic() - t0 < 5
        eng.stop(tb)
        assert not list(interface.STATE_DIR.glob(f"{tb.prefix}-*"))
        assert not (Path("/var/run/dpdk") / tb.prefix).exists()


def test_a_search_writes_the_environment_record_a_sweep_writes(tmp_path):
    """A search is an experiment: its folder's experiments.csv holds its record (pinning,
    the generator's ceiling, the engine's notes), as a sweep's does, so a dataset's report
    can say how each of its searches was made."""
    from routerlab.analysis import datasets
    from routerlab.measuring import measurement

    measurement.measure(measurement.Request("linux", "single-flow", tmp_path, search="pdr", duration=0.2,
                                            ceiling_pps=20000, experiment="search-record", repeats=1))
    e = datasets.read_experiments(tmp_path).set_index("experiment")
    assert "search-record" in e.index
    rec = e.loc["search-record"]
    assert rec["engine"] == "linux" and rec["generator_ceiling_pps"] == 20000
    # the XDP generator's record names the sink's CPU, rlgen's the sink's receive CPU
    assert "router" in rec["pinning"] and re.search(r"sink (receive )?CPU", rec["pinning"]), rec["pinning"]
    assert "router_queue_packets=" in rec["notes"]
    res = datasets.read_kind(tmp_path, "search_results.csv").set_index("experiment")
    assert (res.loc["search-record", "target_precision"], res.loc["search-record", "final_trial_s"]) == (0.02, 0.2)
    # each trial names its row and its start, so two with the same counts are told apart
    probes = datasets.read_kind(tmp_path, "search_trials.csv")
    assert probes["probe"].tolist() == list(range(len(probes))) and probes["started_at"].notna().all()
