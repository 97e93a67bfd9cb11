"""bench chain: each perf sample put to its part of the measuring chain."""

from types import SimpleNamespace

import pandas as pd

from routerlab.benchmarks import chain

TB = SimpleNamespace(dut_in="rl0a0b0cd0", sink_if="rl0a0b0cs0")


def test_each_sample_goes_to_its_part():
    def part(comm, pid=100, sym="", engine_pid=None):
        return chain.part(comm, pid, sym, TB, engine_pid)

    assert part("napi/rl0a0b0cd0-1012") == "router"  # the router's input NAPI thread
    assert part("eal-intr-thread", pid=4242, engine_pid=4242) == "router"  # any thread of the engine
    assert part("napi/rl0a0b0cs0-1011") == "sink"
    assert part("rlxdpgen-4ca921bbe") == part("rlgen-e3e9f54f0") == "generator"
    assert part("rlstop-0dfe7f46") == "probe"
    assert part("swapper", 0, "poll_idle") == part("swapper", 0, "pv_native_safe_halt") == "idle"
    # receive work run in the idle task's place (rlgen's chain: RPS)
    assert part("swapper", 0, "ip_forward") == part("ksoftirqd/1", 20) == "softirq"
    assert part("kdamond.0") == "other"


def test_the_report_shows_the_generators_and_the_sinks_share_of_each_cpu():
    rows = [{"engine": "linux", "cpu": cpu, "part": p, "share": share, "ns_per_packet": ns, "tx": 400_000,
             "rx": 399_000, "generator": "xdp", "xdp_program_ns": None, "xdp_program_runs": None}
            for cpu, p, share, ns in ((0, "generator", 0.9, 4500.0), (0, "sink", 0.05, 250.0), (0, "idle", 0.0, 0.0),
                                      (1, "router", 0.19, 950.0), (1, "generator", 0.0, 0.0), (1, "sink", 0.0, 0.0))]
    text = chain.report(pd.DataFrame(rows), 200_000)
    assert "linux (xdp generator): 400000 offered, 399000 arrived" in text
    assert "  CPU 1: router 19.0% (950 ns), generator 0.0% (0 ns), sink 0.0% (0 ns)" in text
    ebpf = pd.DataFrame(rows).assign(engine="ebpf", xdp_program_ns=85.4, xdp_program_runs=400_000)
    assert "  its XDP program on the router's input: 85 ns per run, 400000 runs" in chain.report(ebpf, 200_000)
