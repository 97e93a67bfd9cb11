"""The XDP generator and the XDP sink, for real: rlgen's frames paced in the program,
counted where they arrive. Needs root (network namespaces) and live frames (kernel 5.18
or later)."""

import os

import pytest
from conftest import trial_in_background

from routerlab.testbed import traffic, xdpgen
from routerlab.testbed import capabilities, namespaces, shell
from routerlab.testbed.settings import Settings
from routerlab.errors import ParameterError, RouterlabError
from routerlab.testbed.namespaces import NamespaceTestbed as TB

root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: network namespaces and BPF")
live = pytest.mark.skipif(bool(capabilities.live_frames_missing()), reason=f"{capabilities.live_frames_missing()}")


def _taken(tb, k0):
    """(taken, refused): the frames the sink's veth ring took and refused since the
    generator link's counters read ``k0`` (``xdp_xmit``, ``xdp_xmit_errors``). A sink
    whose thread a busy machine held up refuses what its 256-slot ring cannot hold: the
    kernel counts each such frame, so every frame sent is accounted for."""
    k1 = tb.tx_counters()
    return k1["tx_packets"] - k0["tx_packets"], k1["tx_dropped"] - k0["tx_dropped"]


def test_parse_the_loaders_line():
    r = xdpgen.parse("sent=10000 legit=5000 span_s=0.499950 late_ms=0.123 lagged_ms=0.000 runs=512")
    assert (r.sent, r.legit, r.span_s, r.late_ms, r.lagged_ms, r.runs) == (10000, 5000, 0.49995, 0.123, 0.0, 512)
    with pytest.raises(RouterlabError, match="unexpected output"):
        xdpgen.parse("sent=ten")


def test_the_generator_is_chosen_by_name_and_checked(monkeypatch):
    monkeypatch.setenv("ROUTERLAB_GENERATOR", "rlgen")
    assert Settings().generator == "rlgen" and not Settings().generator_asked
    # the name asked for wins over the environment's (on a machine that runs live frames)
    monkeypatch.setattr(capabilities, "live_frames_missing", lambda: None)
    assert namespaces.make(Settings.asked("xdp")).generator == "xdp"
    monkeypatch.setenv("ROUTERLAB_GENERATOR", "pktgen")
    with pytest.raises(ParameterError, match="ROUTERLAB_GENERATOR.*xdp, rlgen"):
        TB()
    with pytest.raises(ParameterError, match="ROUTERLAB_GENERATOR.*xdp, rlgen"):
        Settings()
    with pytest.raises(ParameterError, match="^generator: .*xdp, rlgen"):
        Settings(generator="pktgen")


@root
@live
def test_paced_frames_arrive_one_for_one_at_the_rate():
    """20,000 pps for 0.5 s: all 10,000 frames are sent and the XDP sink counts every
    one its ring took (on an idle machine all of them), spread over the half second in
    rlgen's bursts of 32 (not sent at once), and the trial says so as an rlgen trial
    would."""
    with TB(direct=True, generator="xdp") as tb:
        k0 = tb.tx_counters()
        r = traffic.run_trial(tb, 20000, 0.5, traffic.TrafficSpec(), probe_period_ms=None)
        taken, refused = _taken(tb, k0)
        assert (r.tx, r.kernel_tx, r.refused) == (10000, 10000, 0)
        assert r.rx == taken == 10000 - refused and refused <= 100, (taken, refused)
        assert not r.generator_limited
        # the schedule: the last burst is due 9,984 intervals after the first
        assert r.sent_pps == pytest.approx(20000, rel=0.01)


@root
@live
def test_it_sends_rlgens_frames_flows_and_drop_share():
    """Multi-flow with half the traffic meant for the firewall: the frames are rlgen's
    (254 destinations, random ports), and tx counts only those meant to pass."""
    spec = traffic.TrafficSpec(flows="multi", drop_share=0.5)
    with TB(direct=True, generator="xdp") as tb:
        lines = traffic.frames(tb, spec).splitlines()
        assert len(lines) == 1024 and {ln[0] for ln in lines} == {"0", "1"}
        assert len({ln.split()[1][60:68] for ln in lines}) == 254  # the destination addresses
        k0 = tb.tx_counters()
        r = traffic.run_trial(tb, 20480, 0.5, spec, probe_period_ms=None)
        taken, refused = _taken(tb, k0)
        legit = sum(ln[0] == "1" for ln in lines) * 10  # 10,240 frames: each template 10 times
        assert (r.tx, r.kernel_tx) == (legit, 10240)
        assert r.rx == taken == 10240 - refused and refused <= 100, (taken, refused)


@root
@live
def test_a_lag_is_made_up_at_one_and_a_half_times_the_rate():
    """At 100,000 pps, the generator is stopped for 50 ms, 400 ms into a 1.5-s trial, and
    again for 300 ms while it makes that lag up: it then owes over 30,000 frames, and makes
    them up at 1.5 times the rate too (over about 600 ms), never at once. Between a count of
    the sink taken just before the second stop and one taken 50 ms after its resume, the
    sink gains no more than 1.5 times the rate over the time the generator ran between the
    two (and a ring and a few bursts), where sending what it owed at once would have added
    the 30,000. All 150,000 are sent within the trial, the sink counts every frame its
    ring took, and the lag is reported.

    The bounds use the times the test really took (its sleeps and the counts' bpftool
    calls last longer on a busy machine). The first stop puts a catch-up under way at the
    second: before 2026-12-02 the program sent a stop during a catch-up at once."""
    import signal
    import time

    rate, stop_s = 100_000, 0.3
    with TB(direct=True, generator="xdp") as tb:
        k0 = tb.tx_counters()
        with trial_in_background(tb, "rlxdpgen", rate, 1.5) as (pid, done):
            time.sleep(0.4)
            os.kill(pid, signal.SIGSTOP)
            time.sleep(0.05)
            os.kill(pid, signal.SIGCONT)  # 5,000 frames owed, made up over about 100 ms
            a0 = time.monotonic()
            a = tb.sink_count()
            os.kill(pid, signal.SIGSTOP)
            a1 = time.monotonic()
            time.sleep(stop_s)
            b0 = time.monotonic()
            os.kill(pid, signal.SIGCONT)
            time.sleep(0.05)
            b = tb.sink_count()
            b1 = time.monotonic()
        r = done["r"]
        taken, refused = _taken(tb, k0)
    ran_s = (a1 - a0) + (b1 - b0)  # the most the generator may have run between the counts
    owed = rate * (b0 - a1)
    # frames sent before the first count may wait in the sink's ring; the program sends up
    # to 4 bursts of its catch-up at once (CATCHUP_BEHIND_BURSTS), and a burst more at each
    # end of the two stretches
    slack = namespaces.VETH_RING_SIZE + 4 * traffic.BURST + 4 * traffic.BURST
    assert owed > 0.5 * rate * ran_s + slack, f"the test was held up ({ran_s:.3f} s between counts): it cannot tell"
    assert b - a <= 1.5 * rate * ran_s + slack, (b - a, ran_s)
    assert r.tx == r.kernel_tx == 150_000 and r.gen_late_ms > 0.8 * stop_s * 1e3, r
    assert r.rx == taken == 150_000 - refused and refused <= 1500, (taken, refused)


@root
@live
def test_frames_reach_every_engine_through_its_receive():
    """Through the kernel router: the router rewrites frames in place (MACs, TTL) before
    their pages come back to the generator's pool, and the program writes the headers
    again, so every frame is addressed to the router and forwarded. The router's input
    veth is polled on the router's CPU and the sink's on the generator's, each above what
    shares its CPU."""
    from routerlab import engines
    from routerlab.analysis import scenarios

    eng, sc = engines.get("linux"), scenarios.load("single-flow")
    with TB(generator="xdp") as tb:
        eng.bring_up(tb, sc)
        assert tb.router_queue == namespaces.VETH_RING_SIZE
        for dev, cpu in ((tb.dut_in, tb.router_cpu), (tb.sink_if, tb.gen_cpu)):
            for pid in shell.napi_threads(dev):
                assert os.sched_getaffinity(int(pid)) == {cpu}
        # the router's receive goes before its engine's process, the sink's before the generator
        for pid in shell.napi_threads(tb.dut_in) + shell.napi_threads(tb.sink_if):
            assert os.sched_getscheduler(int(pid)) == os.SCHED_FIFO
            assert os.sched_getparam(int(pid)).sched_priority == namespaces.RECEIVE_PRIORITY
        r = traffic.run_trial(tb, 20000, 0.5, traffic.TrafficSpec())
        assert r.tx == 10000 and r.rx >= 0.99 * r.tx


@root
def test_without_live_frames_it_says_so_and_takes_rlgen(monkeypatch, caplog):
    monkeypatch.setattr(capabilities, "live_frames_missing", lambda: "live XDP frames need kernel 5.18 or later, this is 5.10")
    with TB(direct=True, generator="xdp") as tb:
        assert tb.generator == "rlgen" and tb.sink_cpu == tb.router_cpu
        assert "rlgen" in traffic.generator_record(tb)
    said = [r.getMessage() for r in caplog.records if r.name.startswith("routerlab")]
    assert len(said) == 1 and "\n" not in said[0] and "kernel 5.18" in said[0] and "measuring with rlgen" in said[0]


@root
def test_the_live_frames_check_tells_what_the_kernel_does():
    # the check tries live frames on this kernel: where it refuses them, the XDP
    # generator's own loader is refused the same way; where it runs them, so does the loader
    refused = capabilities.live_frames_refused()
    missing = capabilities.live_frames_missing()
    if missing and not refused:
        pytest.skip(missing)  # the loader cannot be built here
    with TB(direct=True, generator="rlgen") as tb:
        tb.generator = "xdp"  # the loader, asked directly, whatever the check said
        tb.sink_cpu = tb.gen_cpu
        try:
            xdpgen.run(tb, 1000, 0.05, traffic.frames(tb, traffic.TrafficSpec()))
            ran = None
        except RouterlabError as e:
            ran = str(e)
    if refused:
        assert ran is not None and "live frames failed" in ran and refused.rsplit(": ", 1)[1] in ran, (refused, ran)
    else:
        assert ran is None, ran
