"""``bench chain``: where each CPU's time goes during a trial, by part of the measuring
chain (generator, sink, router, the stop probe), sampled with perf's software clock.

On this testbed CPU 1 should do the router's work and nothing else, and CPU 0 carry the
generator and the sink (:mod:`routerlab.testbed`). Where the engine runs an XDP program on
the router's input, the kernel's run-time statistics of that program say how much of the
router's time per packet is the program itself. One trial per engine at a fixed load,
while ``perf record -e cpu-clock`` samples both CPUs at :data:`FREQ_HZ`: each sample is
put to a part by the task it interrupted (the router's input NAPI thread and the engine's
own process are the router's). An engine that measures its own time per packet (VPP's
clocks per graph node: :meth:`routerlab.engines.base.Engine.costs`) has it beside: a
polling engine keeps its CPU busy whatever it does. The CPU time of a part is its samples over the frequency;
its share, that time over the trial's window (the samples taken from the trial's start
to its end, its set-up and counter reads included; an idle CPU is not always sampled, so
shares of the samples taken would overstate the busy parts); per packet, that time over
the packets the trial offered. The generator spins on its CPU, whatever the rate: its
share is what the sink leaves it, not a cost per packet.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from routerlab.errors import ToolMissing

#: Samples per second and CPU: not a divisor of the generator's burst periods at round
#: rates, so sampling does not lock onto them.
FREQ_HZ = 3989
#: Seconds perf is given to start sampling before the trial.
PERF_START_S = 0.5
#: The parts of the chain, as the report orders them. ``softirq``: receive work the kernel
#: ran in whatever task it interrupted (rlgen's chain: the router's and the sink's, RPS
#: on the router's CPU), not told apart.
PARTS = ("router", "generator", "sink", "softirq", "probe", "routerlab", "other", "idle")


def part(comm: str, pid: int, sym: str, tb, engine_pid: int | None) -> str:
    """The part of the chain a sample belongs to, by the task's name (``comm``), process
    and the function it interrupted (``sym``): the router's input NAPI thread and the
    engine's process (every thread of it) are the router's."""
    if comm.startswith(f"napi/{tb.dut_in}") or (engine_pid and pid == engine_pid):
        return "router"
    if comm.startswith("ksoftirqd") or (comm == "swapper" and not any(w in sym for w in ("idle", "halt"))):
        return "softirq"
    if comm.startswith(f"napi/{tb.sink_if}"):
        return "sink"
    if comm.startswith(("rlxdpgen", "rlgen")):
        return "generator"
    if comm.startswith("rlstop"):
        return "probe"
    if comm == "swapper":
        return "idle"
    if comm in ("python", "python3", "routerlab", "ip", "ethtool", "bpftool", "nft", "taskset", "perf", "sh"):
        return "routerlab"
    return "other"


def run(engine_names=("linux", "ebpf"), load_pps: float = 200_000, duration: float = 2.0, settings=None):
    """One trial per engine at ``load_pps`` (single-flow), perf sampling both CPUs, on the
    namespace testbed with the generator and idle mode of ``settings``
    (:class:`routerlab.testbed.settings.Settings`; None: the environment's).

    Returns
    -------
    pandas.DataFrame
        One row per engine, CPU and part: engine, cpu, part, share (its CPU time over the
        trial's window, ratio in [0, 1]), ns_per_packet (that time over the packets
        offered), plus the trial's tx, rx and generator.
    """
    import pandas as pd

    from routerlab.measuring import measurement
    from routerlab.testbed import traffic
    from routerlab.testbed.namespaces import NamespaceTestbed
    from routerlab.testbed.settings import Settings

    if not shutil.which("perf"):
        raise ToolMissing("bench chain samples with perf (Debian package linux-perf)")
    settings = settings or Settings()
    rows = []
    for name in engine_names:
        eng, sc = measurement.resolve(name, "single-flow")
        with NamespaceTestbed(generator=settings.generator, cpu_idle=settings.cpu_idle) as tb, \
                tempfile.TemporaryDirectory() as work:
            eng.bring_up(tb, sc)
            data = Path(work) / "perf.data"
            cpus = f"{tb.gen_cpu},{tb.router_cpu}"
            rec = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(FREQ_HZ), "-C", cpus,
                                    "-k", "CLOCK_MONOTONIC", "-o", str(data)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            engine_pid = getattr(getattr(eng, "_proc", None), "pid", None)
            try:
                with bpf_run_time(xdp_program(tb)) as program:
                    time.sleep(PERF_START_S)
                    eng.costs(tb)  # an engine's clocks count from its last read: this trial's alone
                    t0 = time.monotonic()
                    # no speed probe: its busy loop before the traffic would be sampled as the probe's
                    r = traffic.run_trial(tb, load_pps, duration, traffic.TrafficSpec.for_scenario(sc), speed_ms=None)
                    t1 = time.monotonic()
                    own = eng.costs(tb)
            finally:
                rec.send_signal(signal.SIGINT)
                rec.wait(timeout=30)
                eng.stop(tb)
            script = subprocess.run(["perf", "script", "-i", str(data), "-F", "comm,pid,cpu,time,ip,sym"],
                                    capture_output=True, text=True, check=True).stdout
            counts: dict[tuple[int, str], int] = {}
            for line in script.splitlines():
                m = re.match(r"\s*(.*?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+\S+\s*(.*)", line)
                if not m or not t0 <= float(m.group(4)) <= t1:  # the trial's window only
                    continue
                comm, pid, cpu, _, sym = m.groups()
                key = (int(cpu), part(comm, int(pid), sym, tb, engine_pid))
                counts[key] = counts.get(key, 0) + 1
            window = t1 - t0
            for cpu in (tb.gen_cpu, tb.router_cpu):
                for p in PARTS:
                    n = counts.get((cpu, p), 0)
                    rows.append({"engine": name, "cpu": cpu, "part": p, "share": n / FREQ_HZ / window,
                                 "ns_per_packet": n / FREQ_HZ / r.tx * 1e9 if r.tx else float("nan"),
                                 "tx": r.tx, "rx": r.rx, "generator": tb.generator,
                                 "xdp_program_ns": program.get("ns_per_run"), "xdp_program_runs": program.get("runs"),
                                 "engine_graph_ns": own.get("graph")})
    return pd.DataFrame(rows)


def xdp_program(tb) -> int | None:
    """The id of the XDP program the engine attached to the router's input veth (ebpf's
    router, DPDK af_xdp's redirect), if any."""
    import json

    from routerlab.testbed.shell import sh

    link = json.loads(sh("ip", "-n", tb.ns_dut, "-j", "link", "show", "dev", tb.dut_in))[0]
    return (link.get("xdp") or {}).get("prog", {}).get("id")


@contextmanager
def bpf_run_time(prog_id: int | None):
    """The kernel's run-time statistics of BPF program ``prog_id`` over the block
    (``kernel.bpf_stats_enabled``, on for the block only): yields a dict that holds, after
    it, ``runs`` and ``ns_per_run`` (nanoseconds of the program per run)."""
    import json

    from routerlab.testbed.shell import sh

    found: dict = {}
    if prog_id is None:
        yield found
        return
    stats = Path("/proc/sys/kernel/bpf_stats_enabled")
    old = stats.read_text().strip()

    def read():
        p = json.loads(sh("bpftool", "-j", "prog", "show", "id", str(prog_id)))
        return p.get("run_time_ns", 0), p.get("run_cnt", 0)

    stats.write_text("1")
    try:
        ns0, n0 = read()
        yield found
        ns1, n1 = read()
        found.update(runs=n1 - n0, ns_per_run=(ns1 - ns0) / (n1 - n0) if n1 > n0 else None)
    finally:
        stats.write_text(old)


def report(df, load_pps: float) -> str:
    """Per engine: each CPU's time by part (percent) and per packet offered (ns)."""
    lines = [f"CPU time by part of the chain, one trial per engine at {load_pps:.0f} pps "
             f"(perf cpu-clock at {FREQ_HZ} Hz): % of the trial's time, and ns per packet offered "
             "(the generator spins: its time is what the others leave it)"]
    for (engine, gen), g in df.groupby(["engine", "generator"], sort=False):
        r0 = g.iloc[0]
        lines.append(f"{engine} ({gen} generator): {int(r0.tx)} offered, {int(r0.rx)} arrived")
        for cpu, c in g.groupby("cpu"):
            parts = [f"{row.part} {row.share:.1%} ({row.ns_per_packet:.0f} ns)" for row in c.itertuples()
                     if row.part != "idle" and (row.share > 0 or row.part in ("generator", "sink"))]
            lines.append(f"  CPU {cpu}: " + ", ".join(parts))
        ns = r0.get("xdp_program_ns")
        if ns is not None and ns == ns:  # neither None nor NaN: a program ran
            lines.append(f"  its XDP program on the router's input: {r0.xdp_program_ns:.0f} ns per run, "
                         f"{int(r0.xdp_program_runs)} runs (BPF run-time statistics)")
        own = r0.get("engine_graph_ns")
        if own is not None and own == own:
            # a polling engine's CPU share is 100% whatever it does: its own clocks say its cost
            lines.append(f"  by its own clocks: {own:.0f} ns per packet forwarded (its graph, the polling "
                         "input left out)")
    return "\n".join(lines)
