"""The XDP generator and the XDP sink, for real: rlgen's frames paced in the program,
counted where they arrive. Needs root (network namespaces) and live frames (kernel 5.18
or later)."""

import os

import pytest

from routerlab import testbed, traffic, xdpgen
from routerlab.errors import ParameterError, RouterlabError
from routerlab.testbed import Testbed as TB

root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: network namespaces and BPF")
live = pytest.mark.skipif(bool(testbed.live_frames_missing()), reason=f"{testbed.live_frames_missing()}")


def test_parse_the_loaders_line():
    r = xdpgen.parse("sent=10000 legit=5000 span_s=0.499950 late_ms=0.123 lagged_ms=0.000 runs=512")
    assert (r.sent, r.legit, r.span_s, r.late_ms, r.lagged_ms, r.runs) == (10000, 5000, 0.49995, 0.123, 0.0, 512)
    with pytest.raises(RouterlabError, match="unexpected output"):
        xdpgen.parse("sent=ten")


def test_the_generator_is_chosen_by_name_and_checked(monkeypatch):
    monkeypatch.setenv("ROUTERLAB_GENERATOR", "rlgen")
    assert testbed.default_generator() == "rlgen"
    with testbed.generator("xdp"):
        assert TB().generator == "xdp"
    monkeypatch.setenv("ROUTERLAB_GENERATOR", "pktgen")
    with pytest.raises(ParameterError, match="ROUTERLAB_GENERATOR.*xdp, rlgen"):
        TB()


@root
@live
def test_paced_frames_arrive_one_for_one_at_the_rate():
    """20,000 pps for 0.5 s: every one of the 10,000 frames reaches the XDP sink, spread
    over the half second in rlgen's bursts of 32 (not sent at once), and the trial says
    so as an rlgen trial would."""
    with TB(direct=True, generator="xdp") as tb:
        r = traffic.run_trial(tb, 20000, 0.5, traffic.TrafficSpec(), probe_period_ms=None)
        assert (r.tx, r.rx, r.kernel_tx, r.refused) == (10000, 10000, 10000, 0)
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
        r = traffic.run_trial(tb, 20480, 0.5, spec, probe_period_ms=None)
        legit = sum(ln[0] == "1" for ln in lines) * 10  # 10,240 frames: each template 10 times
        assert (r.tx, r.rx) == (legit, 10240)


@root
@live
def test_a_lag_is_made_up_at_one_and_a_half_times_the_rate():
    """Stopped for 200 ms, 400 ms into a trial at 100,000 pps, the generator owes 20,000
    frames when it resumes. It makes them up at 1.5 times the rate (over about 400 ms):
    100 ms after it resumes the sink holds about 40,000 + 15,000 frames, where sending
    what it owed at once would have made it 40,000 + 20,000 + 10,000. All 150,000 arrive
    in the end, and the lag is reported."""
    import signal
    import threading
    import time

    with TB(direct=True, generator="xdp") as tb:
        done = {}
        t = threading.Thread(target=lambda: done.update(r=traffic.run_trial(
            tb, 100_000, 1.5, traffic.TrafficSpec(), probe_period_ms=None)))
        t.start()
        try:
            deadline = time.monotonic() + 10
            while not (gen := [p for p in list(tb.procs) if "rlxdpgen" in " ".join(map(str, p.args))]):
                assert time.monotonic() < deadline, "the generator did not start"
                time.sleep(0.005)
            c0 = tb.sink_count()
            while tb.sink_count() == c0:  # its first frames: the schedule has started
                time.sleep(0.001)
            time.sleep(0.4)
            os.kill(gen[0].pid, signal.SIGSTOP)
            time.sleep(0.2)
            os.kill(gen[0].pid, signal.SIGCONT)
            time.sleep(0.1)
            after = tb.sink_count() - c0
        finally:
            t.join(30)
        r = done["r"]
        assert 50_000 < after < 62_500, after
        assert r.rx == r.tx == 150_000 and r.gen_late_ms > 150


@root
@live
def test_frames_reach_every_engine_through_its_receive():
    """Through the kernel router: the router rewrites frames in place (MACs, TTL) before
    their pages come back to the generator's pool, and the program writes the headers
    again, so every frame is addressed to the router and forwarded. The router's input
    veth is polled on the router's CPU and the sink's on the generator's, each above what
    shares its CPU."""
    from routerlab import engines, scenarios

    eng, sc = engines.get("linux"), scenarios.load("single-flow")
    with TB(generator="xdp") as tb:
        eng.bring_up(tb, sc)
        assert tb.router_queue == testbed.VETH_RING_SIZE
        for dev, cpu in ((tb.dut_in, tb.router_cpu), (tb.sink_if, tb.gen_cpu)):
            for pid in testbed.napi_threads(dev):
                assert os.sched_getaffinity(int(pid)) == {cpu}
        # the router's receive goes before its engine's process, the sink's before the generator
        for pid in testbed.napi_threads(tb.dut_in) + testbed.napi_threads(tb.sink_if):
            assert os.sched_getscheduler(int(pid)) == os.SCHED_FIFO
            assert os.sched_getparam(int(pid)).sched_priority == testbed.RECEIVE_PRIORITY
        r = traffic.run_trial(tb, 20000, 0.5, traffic.TrafficSpec())
        assert r.tx == 10000 and r.rx >= 0.99 * r.tx


@root
def test_without_live_frames_it_says_so_and_takes_rlgen(monkeypatch, capsys):
    monkeypatch.setattr(testbed, "live_frames_missing", lambda: "live XDP frames need kernel 5.18 or later, this is 5.10")
    with TB(direct=True, generator="xdp") as tb:
        assert tb.generator == "rlgen" and tb.sink_cpu == tb.router_cpu
        assert "rlgen" in traffic.generator_record(tb)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "kernel 5.18" in err and "measuring with rlgen" in err
