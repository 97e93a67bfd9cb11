"""The XDP generator and the XDP sink, for real: frames paced in the program, counted
where they arrive. Needs root (network namespaces) and live frames (kernel 5.18 or later)."""

import os

import pytest

from routerlab import testbed, xdpgen
from routerlab.errors import RouterlabError
from routerlab.testbed import Testbed as TB
from routerlab.traffic import udp_frame

root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: network namespaces and BPF")


def test_parse_the_loaders_line():
    r = xdpgen.parse("sent=10000 span_s=0.499950 late_ms=0.123 lagged_ms=0.000 runs=512")
    assert (r.sent, r.span_s, r.late_ms, r.lagged_ms, r.runs) == (10000, 0.49995, 0.123, 0.0, 512)
    with pytest.raises(RouterlabError, match="unexpected output"):
        xdpgen.parse("sent=ten")


@root
def test_paced_frames_arrive_one_for_one_at_the_rate():
    """20,000 pps for 0.5 s: every one of the 10,000 frames reaches the XDP sink, spread
    over the half second (not sent in a burst), and nothing stays attached afterwards."""
    with TB(direct=True) as tb:
        frame = udp_frame(TB.mac(tb.ns_tg, tb.tg_if), TB.mac(tb.ns_sink, tb.sink_if),
                          "10.70.1.2", "10.70.1.1")
        with xdpgen.sink(tb.ns_sink, tb.sink_if) as count:
            r = xdpgen.run(tb, 20000, 0.5, frame)
            import time
            time.sleep(0.05)
            assert r.sent == 10000 and count() == 10000
        # the schedule: the last frame is due 9,999 intervals after the first
        assert r.span_s == pytest.approx(9999 / 20000, rel=0.01)
        assert r.runs > r.sent  # early runs were dropped, not sent
        assert "xdp" not in testbed.sh("ip", "-n", tb.ns_sink, "-j", "link", "show", "dev", tb.sink_if)


@root
def test_frames_reach_the_kernel_router_whole():
    """A router that passes the generator's frames to the stack rewrites them in place
    (MACs, TTL) before their pages come back to the generator's pool: the program writes
    the headers again, so every frame is addressed to the router and forwarded. Without
    that, nearly every frame after the first few arrived addressed to the sink and was
    dropped at the router as not for this host."""
    from routerlab import engines, scenarios

    eng, sc = engines.get("linux"), scenarios.load("single-flow")
    with TB() as tb:
        eng.bring_up(tb, sc)
        # a veth takes XDP redirects with GRO on (its NAPI ring) or an XDP program attached
        testbed.nsexec(tb.ns_dut, "ethtool", "-K", tb.dut_in, "gro", "on")
        frame = udp_frame(TB.mac(tb.ns_tg, tb.tg_if), TB.mac(tb.ns_dut, tb.dut_in), "10.70.1.2", "10.71.0.1")
        before = tb.sink_count()
        r = xdpgen.run(tb, 20000, 0.5, frame)
        import time
        time.sleep(0.1)
        assert r.sent == 10000 and tb.sink_count() - before >= 0.99 * r.sent
