"""Traffic: our open-loop generators and one trial (the generator's ceiling is
:mod:`routerlab.testbed.ceiling`'s).

Two generators send the same frames (rlgen makes them: :func:`frames`): the XDP generator
(:mod:`routerlab.testbed.xdpgen`, live XDP frames, the default) and rlgen (``csrc/rlgen.c``,
AF_PACKET); the testbed says which (``Testbed.generator``), and :func:`run_trial` drives it.

Both are compiled at first use into the user cache, keyed by a hash of their source. Why
our own generators: the generators in the registries are closed-loop on veth (socket
back-pressure and silent ENOBUFS retries turn router overload into a lower sending rate,
not loss), and xdp-tools' ``xdp-trafficgen`` does not load on this kernel. ``routerlab
bench generators`` measures the candidates side by side; docs/testbed.md, "The
generator", says how.
"""

from __future__ import annotations

import logging
import select
import subprocess
import time
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path

from routerlab import cache, processes
from routerlab.defaults import BURST, STEAL_FLAG, STOP_FLOOR_MS, STOP_PROBE_PERIOD_MS
from routerlab.errors import ParameterError, RouterlabError
from routerlab.testbed.interface import DEST_NET, DROP_PORT, SINK_NET, TG_NET, Testbed
from routerlab.testbed.lifetime import OnThisMachine
from routerlab.testbed.shell import cpu_split, cpu_usage, napi_threads, run_ns, sh, task_change, task_times

#: A trial counts as generator-limited when it offered less than this share of the
#: requested packets (or its own socket refused any), or, rlgen, when it kept less than this
#: share of the rate while it was behind its schedule (:data:`BEHIND_JUDGED`).
GENERATOR_TOLERANCE = 0.995
#: rlgen makes up a lag past the trial's end, so a generator slower than the rate still
#: sends all its frames, late. When it was behind its schedule for at least this share of
#: the trial (``behind_ms`` of ``csrc/rlgen.c``: its batches a hold longer than
#: :data:`STOP_TOTAL_OVER_MS` interrupted left out), the
#: rate it kept meanwhile is judged against :data:`GENERATOR_TOLERANCE`. Making up a lag
#: at its catch-up pace it keeps more than the rate; slower than the rate, or held up so
#: often that the catch-up cannot make it up, it keeps less.
BEHIND_JUDGED = 0.1
#: Time for packets in flight to reach the sink before the counters are read, seconds.
DRAIN_S = 0.1
#: How long the stop probe may take to say it runs, seconds.
PROBE_START_S = 5.0
#: Stops (and generator lags) longer than this, milliseconds, are added up (``cpu_stops``,
#: ``cpu_stopped_ms``, ``gen_lagged_ms``). A busy router's own softirq work delays the
#: probe by up to a jiffy (3.9-4.5 ms read here at HZ=250), on a saturated CPU at nearly
#: every wake-up: added up, those would account for any loss of a saturated router.
#: With the XDP generator the stops over :data:`STOP_FLOOR_MS` are added up instead
#: (:func:`stop_total_over_ms`).
STOP_TOTAL_OVER_MS = 5.0
#: A trial's columns that say whether something other than the router held it up: the
#: probe's stops, the generator's lags and how long the router's queue lasts
#: (:class:`routerlab.measuring.validation.TrialValidation` reads them).
PROBED_FIELDS = ("cpu_stop_ms", "cpu_stops", "cpu_stopped_ms", "gen_late_ms", "gen_lagged_ms", "queue_ms")
#: A trial's columns that may explain why an answer moves from one run to the next: what
#: the router's CPU spent per packet, how much of it the hypervisor took, how fast it ran,
#: how busy the generator's and the sink's CPUs were (:class:`TrialResult` says how each
#: is measured).
SPREAD_FIELDS = ("router_ns_per_packet", "napi_ns_per_packet", "engine_ns_per_packet", "engine_wait_ms",
                 "router_steal", "cpu_speed", "memory_ns", "cpu_distance_ns", "gen_cpu_load", "sink_cpu_load")
#: A trial's columns that the speed probe gives (:func:`machine_speed`), None where it ran none.
SPEED_FIELDS = ("cpu_speed", "memory_ns", "cpu_distance_ns")
#: How long the speed probe works on the router's CPU before each trial's traffic starts,
#: milliseconds (:func:`cpu_speed`; its whole cost, the process started and ended, is
#: about 5 ms more).
SPEED_PROBE_MS = 15.0
#: A trial's columns that say where its lost packets went (:mod:`routerlab.measuring.drops`).
ATTRIBUTED_FIELDS = ("lost", "lost_attributed", "lost_unexplained", "trace_missed", "drops")


def _csum(b: bytes) -> int:
    """The Internet checksum (RFC 1071) of ``b`` (even length)."""
    import struct

    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def udp_frame(src_mac: str, dst_mac: str, src_ip: str, dst_ip: str, sport: int = 5000, dport: int = 5001) -> bytes:
    """A 60-byte Ethernet/IPv4/UDP frame (64 bytes on the wire with the FCS), as rlgen
    sends it, with correct IPv4 and UDP checksums: for other generators and for feeding
    routers from memory."""
    import ipaddress
    import struct

    def mac(m):
        return bytes(int(x, 16) for x in m.split(":"))

    src, dst = ipaddress.IPv4Address(src_ip).packed, ipaddress.IPv4Address(dst_ip).packed
    payload = b"routerlab!".ljust(18, b"\0")
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + len(payload), 0, 0, 64, 17, 0, src, dst))
    ip[10:12] = _csum(bytes(ip)).to_bytes(2, "big")
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    pseudo = src + dst + struct.pack("!BBH", 0, 17, len(udp))
    udp = udp[:6] + (_csum(pseudo + udp) or 0xFFFF).to_bytes(2, "big") + udp[8:]
    return mac(dst_mac) + mac(src_mac) + b"\x08\x00" + bytes(ip) + udp


def write_pcap(path: Path, frames) -> Path:
    """Write Ethernet ``frames`` (bytes, in order) as a classic pcap file."""
    import struct

    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    out += [struct.pack("<IIII", 0, 0, len(f), len(f)) + f for f in frames]
    Path(path).write_bytes(b"".join(out))
    return Path(path)


def generator_binary() -> Path:
    """Path of the compiled generator (``csrc/rlgen.c``), building it if needed."""
    return cache.compiled("rlgen")


def stop_probe_binary() -> Path:
    """Path of the compiled CPU-stop probe (``csrc/rlstop.c``), building it if needed."""
    return cache.compiled("rlstop")


def stop_total_over_ms(generator: str) -> float:
    """The stops added up in a trial's ``cpu_stops`` and ``cpu_stopped_ms``: those longer
    than this, milliseconds. With the XDP generator the router's receive is a thread
    below the probe, which it delays by one NAPI poll at most, while a stop of a
    millisecond overflows the 256-slot ring at the loads that matter: the stop floor
    (:data:`STOP_FLOOR_MS`; docs/journal/2026-11-28-housekeeping-off-the-router-cpu.md). With rlgen the receive is
    softirq work that delays the probe up to a jiffy: :data:`STOP_TOTAL_OVER_MS`."""
    return STOP_FLOOR_MS if generator == "xdp" else STOP_TOTAL_OVER_MS


@contextmanager
def cpu_stops(tb: Testbed, cpu: int, period_ms: float = STOP_PROBE_PERIOD_MS):
    """Probe ``cpu`` for stops while the block runs (``csrc/rlstop.c``: a task of the
    real-time priority SCHED_FIFO 2, above every ordinary task and the router's receive
    thread (:data:`routerlab.testbed.interface.RECEIVE_PRIORITY`), that wakes every ``period_ms``
    on it).

    Yields a dict that holds, after the block, ``max_stop_ms``: the longest any wake-up
    waited for the CPU, milliseconds; ``stops``: the wake-ups later than
    :func:`stop_total_over_ms` for the testbed's generator; ``stopped_ms``: their lateness
    added up, milliseconds.
    The probe is one of the testbed's processes, so the testbed's clean-up removes it if
    the run dies.
    """
    p = tb.spawn(tb.probe_ns, tb.program("rlstop"), "--cpu", str(cpu), "--period-ms", str(period_ms),
                 "--total-over-ms", str(stop_total_over_ms(tb.generator)), "--max-seconds", "3600",
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    found = {}
    try:
        ready, _, _ = select.select([p.stdout], [], [], PROBE_START_S)
        if not ready or p.stdout.readline().strip() != "ready":
            p.kill()
            _, err = p.communicate()
            raise RouterlabError(f"the CPU-stop probe did not start on CPU {cpu}: {err.strip() or 'no answer'}")
        yield found
        p.terminate()
        try:
            out, err = p.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            raise RouterlabError(f"the CPU-stop probe on CPU {cpu} did not stop within 5 s of SIGTERM") from None
        res = _results(out)
        if "max_stop_ms" not in res:
            raise RouterlabError(f"the CPU-stop probe on CPU {cpu} gave no result ({p.returncode}): {err.strip()}")
        found.update(max_stop_ms=res["max_stop_ms"], stops=int(res["stops"]), stopped_ms=res["stopped_ms"])
    finally:
        processes.reap(p)
        if p in tb.procs:
            tb.procs.remove(p)


#: MiB the memory probe walks (:func:`machine_speed`): a quarter of this machine's 32-MiB
#: last-level cache, which another guest on the host shares; its pages fit the TLB's
#: reach, so a load costs the cache's latency, not a page walk (64 MiB cost 35 times as much).
MEMORY_PROBE_MB = 8.0


def machine_speed(tb: Testbed, cpu: int, ms: float = SPEED_PROBE_MS, priority: int = 2,
                  memory_mb: float | None = MEMORY_PROBE_MB, beside: int | None = None) -> dict:
    """How fast ``cpu`` and the memory behind it run as the guest sees them, in one probe:
    ``cpu_speed`` (:func:`cpu_speed`) and ``memory_ns``, nanoseconds per load of a walk
    along one random cycle through ``memory_mb`` MiB, one load per cache line, each
    depending on the last (``csrc/rlstop.c --memory-mb``), for ``ms`` milliseconds more.
    The register loop of ``cpu_speed`` does not see the cache and memory the host shares
    with other guests; this walk does: a neighbour that evicts the last-level cache or
    takes the memory's bandwidth makes its loads longer.

    With ``beside`` (another CPU of this machine) also ``cpu_distance_ns``, nanoseconds
    for one cache line to go from ``cpu`` to ``beside`` and back, passed between two
    processes pinned there for ``ms`` milliseconds more (``csrc/rlstop.c --pingpong-cpu``):
    how near the host runs the two virtual CPUs (one core's hyperthreads, one chiplet's
    cores, two chiplets), which neither the loop nor the walk can see and which every
    packet one of them writes and the other reads pays.

    Each None where not measured (``memory_mb`` or ``beside`` None, or a probe of an
    older routerlab)."""
    extra = ["--memory-mb", f"{memory_mb:g}"] if memory_mb else []
    extra += ["--pingpong-cpu", str(beside)] if beside is not None else []
    p = tb.spawn(tb.probe_ns, tb.program("rlstop"), "--cpu", str(cpu), "--speed-ms", str(ms),
                 "--priority", str(priority), *extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait = (1 + bool(memory_mb) + (beside is not None)) * ms / 1e3 + PROBE_START_S
    try:
        out, err = p.communicate(timeout=wait)
    except subprocess.TimeoutExpired:
        raise RouterlabError(f"the speed probe on CPU {cpu} did not answer within {wait:g} s") from None
    finally:
        processes.reap(p)
        if p in tb.procs:
            tb.procs.remove(p)
    res = _results(out)
    if "speed" in res:
        if p.returncode != 0:
            # what explains a spread must not stop the measurement: a part that failed is left empty
            logging.getLogger(__name__).warning(f"routerlab: the speed probe on CPU {cpu}: {err.strip()}")
        return {"cpu_speed": res["speed"], "memory_ns": res.get("memory_ns"), "cpu_distance_ns": res.get("pingpong_ns")}
    if p.returncode == 1 and "unrecognized option" in err:
        logging.getLogger(__name__).warning(f"routerlab: the CPU-stop probe on CPU {cpu} is older than this routerlab "
                                            f"({err.strip().splitlines()[0]}): cpu_speed and what follows it left empty")
        return dict.fromkeys(SPEED_FIELDS)
    raise RouterlabError(f"the speed probe on CPU {cpu} gave no result ({p.returncode}): {err.strip()}")


def cpu_speed(tb: Testbed, cpu: int, ms: float = SPEED_PROBE_MS, priority: int = 2) -> float | None:
    """How fast ``cpu`` runs as the guest sees it: a fixed loop timed on it for ``ms``
    milliseconds (``csrc/rlstop.c --speed-ms``), in loop iterations per microsecond of
    wall time (each a 64-bit multiply and an add that depend on the one before; on
    x86-64 about 4 cycles, so 4 times the speed is about the clock in MHz).

    The probe runs where the CPU-stop probe does (:func:`cpu_stops`), at the same
    real-time priority ``priority`` (SCHED_FIFO; 0: an ordinary task), so that the
    guest's own tasks on ``cpu`` (a polling engine) do not slow it: it drops when the
    host slows the virtual CPU (a lower clock, a hyperthread or cache shared with
    another guest, time taken away that steal may not count). The guest's
    ``/proc/cpuinfo`` cannot tell: its MHz is the host's nominal clock (2596 MHz here,
    without cpufreq), read once at boot.

    None where the probe is too old to know the mode (a testbed host with an older
    routerlab, which the SSH testbed names when it comes up).
    """
    return machine_speed(tb, cpu, ms, priority, memory_mb=None)["cpu_speed"]


def router_napi(tb: Testbed) -> list[str]:
    """The pids of the threaded NAPI of the router's input veth on a namespace testbed,
    where it has one: with the XDP generator (:meth:`routerlab.testbed.namespaces.NamespaceTestbed.pin_receive`
    puts it on the router's CPU), where the kernel's paths (linux, nft, the XDP router) do
    all their work for a packet, from its arrival to its hand-over to the output veth;
    with rlgen, the XDP router's (:mod:`routerlab.engines.ebpf` pins it there). Empty
    elsewhere (rlgen's backlog, a direct chain, a testbed beyond one machine)."""
    dev = getattr(tb, "dut_in", None)
    # the kernel threads are found by name on this machine: a remote host's are not here
    if not isinstance(tb, OnThisMachine) or getattr(tb, "direct", True) or not dev or not hasattr(tb, "ns_dut"):
        return []
    try:
        return napi_threads(dev, timeout_s=0)
    except RouterlabError:
        return []


def ns_per_packet(before: dict, after: dict, cpu: int, packets: int) -> float | None:
    """The own work of ``cpu`` between two :func:`routerlab.testbed.shell.cpu_times`
    samples (user, nice, system, irq and softirq time; steal left out:
    :func:`routerlab.testbed.shell.cpu_split`) per packet of ``packets``, nanoseconds;
    None when no packet came. Time, not cycles: this virtual machine has no hardware
    counters (``perf`` sees none). In units of one clock tick (10 ms) of work; on a kernel
    that accounts CPU time by sampling at its tick (``CONFIG_TICK_CPU_ACCOUNTING``, this
    one's), work in bursts shorter than a tick is counted where the ticks land, so one
    trial's reading (and its ``cpu_load``) can be far off the work done."""
    if packets <= 0:
        return None
    return round(cpu_split(before, after, cpu)["work_s"] * 1e9 / packets, 1)


def other_cpus(tb: Testbed) -> dict[str, int | None]:
    """The CPUs whose busy share a trial records beside the router's: ``gen`` the
    generator's (with the XDP generator also the sink's), ``sink`` the sink's receive
    CPU where it has one of its own (neither the generator's nor the router's). None
    where a CPU is the router's, another's already, or not on the machine whose
    :meth:`~routerlab.testbed.interface.Testbed.cpu_times` are read (the SSH testbed's
    generator and sink hosts)."""
    if not isinstance(tb, OnThisMachine):
        return {"gen": None, "sink": None}
    gen = tb.gen_cpu if tb.gen_cpu != tb.router_cpu else None
    sink = getattr(tb, "sink_cpu", None)
    return {"gen": gen, "sink": sink if sink not in (tb.gen_cpu, tb.router_cpu) else None}


def program_version(name: str) -> str:
    """A version string of one of our C programs (``rlgen``, ``rlstop``): its name and the
    hash of its source, building it if needed."""
    return f"{name} " + cache.compiled(name).name.split("-", 1)[1]


def generator_version() -> str:
    """A version string: the generator's name and the hash of its source."""
    return program_version("rlgen")


def generator_record(tb: Testbed) -> str:
    """The generator ``tb`` drives, as the environment record's ``generator`` says it."""
    if tb.generator == "xdp":
        from routerlab.testbed import xdpgen

        return f"xdp: {xdpgen.version()} (live XDP frames, rlgen's frames, paced in the program, open loop)"
    return generator_version() + f" (AF_PACKET, open loop, sendmmsg batch {BURST})"


@dataclass
class TrafficSpec:
    """What the generator sends.

    Attributes
    ----------
    flows : {"single", "multi"}
        ``single``: one destination, fixed ports; ``multi``: 254 destinations in one /24,
        random ports.
    frame_size : int
        Frame size on the wire in bytes (64 = minimum, FCS included).
    drop_share : float
        Share of packets addressed to a port the firewall drops (ratio in [0, 1)).
    """

    flows: str = "single"
    frame_size: int = 64
    drop_share: float = 0.0

    #: UDP port of the packets the firewall is meant to drop.
    DROP_PORT = DROP_PORT

    @classmethod
    def for_scenario(cls, sc) -> "TrafficSpec":
        """The traffic a :class:`~routerlab.analysis.scenarios.Scenario` asks for."""
        return cls(flows=sc.flows, frame_size=sc.frame_size, drop_share=sc.drop_share)


@dataclass
class TrialResult:
    """One trial's counters. Packets in counts, rates in pps, fractions in [0, 1].

    ``tx`` is what was offered to the router (put on the wire or refused at its input;
    with the XDP generator, the frames it redirected towards the router; only traffic
    that should pass when part of it is meant to be dropped) and ``rx`` what reached the
    sink; ``lost = tx - rx``. ``kernel_tx`` is what the receiving side counted taken or
    refused (with the XDP generator, its veth ring's ``xdp_xmit`` and ``xdp_xmit_errors``). ``cpu_stop_ms`` is the longest the router's CPU
    stopped during the trial (:func:`cpu_stops`, milliseconds; None when not probed),
    ``cpu_stops`` how many wake-ups of the probe were later than
    :func:`stop_total_over_ms` and ``cpu_stopped_ms`` their lateness added up
    (milliseconds), ``gen_late_ms`` how far behind its schedule the generator fell at worst
    (milliseconds: it then catches up, rlgen at 1.05 times the rate, the XDP generator at
    1.5 times), ``gen_lagged_ms``
    the same added up over every time it fell more than :data:`STOP_TOTAL_OVER_MS` behind
    (milliseconds of load made up late; rlgen's lag counts a later hold within it too) and ``queue_ms`` how long the
    router's queue (``Testbed.router_queue`` packets) lasts at the offered load
    (milliseconds; None when unknown): a stop or a lag longer than that loses packets
    whatever the router does (:class:`routerlab.measuring.validation.TrialValidation`).

    What may explain why answers move between runs (:data:`SPREAD_FIELDS`; each None
    when not measured): ``router_ns_per_packet``, the router CPU's own work during the
    trial (user, system, irq and softirq time; steal left out) per packet the sink
    received (nanoseconds, time and not cycles: no hardware counters here; from
    ``/proc/stat``, sampled at the kernel's tick: :func:`ns_per_packet`; None when ``rx``
    is 0); ``napi_ns_per_packet``, how long the threaded NAPI of the router's input veth
    ran per packet the sink received (nanoseconds, the scheduler's exact clock:
    :func:`router_napi`; None where there is none); ``engine_ns_per_packet``, how long
    a user-space engine's own threads ran per packet the sink received (nanoseconds, the
    same clock: :attr:`Testbed.router_pids`; None for the kernel's paths) and
    ``engine_wait_ms``, how long they waited, ready to run, while something else had
    their CPU (milliseconds, added up over the threads: the engine's packets wait in its
    sockets meanwhile), both read just before the generator starts and just after it
    ends, over the threads alive at both readings;
    ``router_steal``, the steal share of the router's CPU alone (ratio in [0, 1];
    ``steal`` is all CPUs'); ``cpu_speed``, how fast the router's CPU ran just before the
    traffic started (loop iterations per microsecond: :func:`cpu_speed`; it drops when
    the host slows the virtual CPU, which steal need not show); ``memory_ns``, how long
    a load of a walk through :data:`MEMORY_PROBE_MB` MiB took just after (nanoseconds:
    :func:`machine_speed`; it grows when another guest takes the cache or memory the host
    shares, which the loop of ``cpu_speed`` does not see); ``cpu_distance_ns``, how long
    a cache line took to go from the router's CPU to the generator's and back just after
    (nanoseconds: :func:`machine_speed`; it says how near the host ran the two virtual
    CPUs; None where the generator is not on the router's machine or on its CPU);
    ``gen_cpu_load``, the
    busy share of the generator's CPU (ratio in [0, 1]; with the XDP generator the sink
    shares it) and ``sink_cpu_load`` that of the sink's receive CPU where it has its own
    (:func:`other_cpus`: None on the SSH testbed, whose generator and sink are on other
    hosts). The loss
    attribution (``lost_attributed``,
    ``lost_unexplained``, ``trace_missed``, ``drops``: see
    :class:`routerlab.measuring.drops.Attribution`) is there when the trial was run with a drop
    counter, empty otherwise; ``drop_rows`` holds its every counter (drops.csv) and is not
    part of :meth:`row`.
    """

    offered_pps: float
    duration_s: float
    tx: int
    rx: int
    sent_pps: float
    refused: int
    generator_limited: bool
    cpu_load: float
    steal: float
    steal_flagged: bool
    kernel_tx: int
    started_at: str
    lost: int = 0
    cpu_stop_ms: float | None = None
    cpu_stops: int | None = None
    cpu_stopped_ms: float | None = None
    gen_late_ms: float | None = None
    gen_lagged_ms: float | None = None
    queue_ms: float | None = None
    router_ns_per_packet: float | None = None
    napi_ns_per_packet: float | None = None
    engine_ns_per_packet: float | None = None
    engine_wait_ms: float | None = None
    router_steal: float | None = None
    cpu_speed: float | None = None
    memory_ns: float | None = None
    cpu_distance_ns: float | None = None
    gen_cpu_load: float | None = None
    sink_cpu_load: float | None = None
    lost_attributed: int | None = None
    lost_unexplained: int | None = None
    trace_missed: int | None = None
    drops: str = ""
    drop_rows: list = field(default_factory=list, repr=False)

    def row(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "drop_rows"}


def run_trial(tb: Testbed, rate_pps: float, duration_s: float, spec: TrafficSpec,
              batch: int = BURST, drops=None, probe_period_ms: float | None = STOP_PROBE_PERIOD_MS,
              speed_ms: float | None = SPEED_PROBE_MS) -> TrialResult:
    """Send ``rate_pps`` for ``duration_s`` through the testbed and count what arrives.

    ``rate_pps = 0`` sends as fast as the generator can (ceiling measurement).
    ``drops``: a :class:`routerlab.measuring.drops.DropCounter` attached to ``tb``, whose counters
    are read before and after the trial to attribute its loss; None (benchmarks of the
    generator) skips it. ``probe_period_ms``: the period of the CPU-stop probe run on the
    router's CPU for the trial (:func:`cpu_stops`); None runs none and leaves
    ``cpu_stop_ms``, ``cpu_stops`` and ``cpu_stopped_ms`` None (to measure the probe's own
    cost). ``speed_ms``: how long the speed probe works on the router's CPU before the
    traffic starts (:func:`cpu_speed`, outside the trial's CPU times); None runs none and
    leaves ``cpu_speed`` None.
    """
    if rate_pps < 0:
        raise ParameterError("rate", f"must be >= 0 pps, got {rate_pps}")
    if duration_s <= 0:
        raise ParameterError("duration", f"must be > 0 s, got {duration_s}")
    args = rlgen_args(tb, spec) + ["--rate", f"{rate_pps:.3f}", "--duration", f"{duration_s:.3f}",
                                   "--batch", str(batch), "--lag-over-ms", str(STOP_TOTAL_OVER_MS)]
    xdp = tb.generator == "xdp"
    if xdp:
        from routerlab.testbed import xdpgen

        xdpgen.loader(), xdpgen.program()  # built (first use only) before the trial starts
        sent_frames = frames(tb, spec)
    if probe_period_ms is not None or speed_ms is not None:
        tb.program("rlstop")  # built (first use only) before the CPU times start
    d0 = drops.read() if drops is not None else None
    speed = (machine_speed(tb, tb.router_cpu, speed_ms, beside=other_cpus(tb)["gen"]) if speed_ms is not None
             else dict.fromkeys(SPEED_FIELDS))
    napi = router_napi(tb)
    n0 = run_ns(napi)
    engine_pids = getattr(tb, "router_pids", ())
    e0 = task_times(engine_pids)
    k0, s0, c0 = tb.tx_counters(), tb.sink_count(), tb.cpu_times()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with cpu_stops(tb, tb.router_cpu, probe_period_ms) if probe_period_ms is not None else nullcontext({}) as stops:
        if xdp:
            res = _xdp_results(xdpgen.run(tb, rate_pps, duration_s, sent_frames, batch), rate_pps, duration_s, batch)
        else:
            res = _rlgen_results(tb, args, duration_s)
    c1 = tb.cpu_times()
    n1 = run_ns(napi)
    engine = task_change(e0, task_times(engine_pids))
    time.sleep(DRAIN_S)
    k1, s1 = tb.tx_counters(), tb.sink_count()
    kernel_tx = (k1["tx_packets"] - k0["tx_packets"]) + (k1["tx_dropped"] - k0["tx_dropped"])
    offered = res["sent"] + res["refused"]
    if spec.drop_share:
        tx = int(res["legit_sent"] + res["legit_refused"])
    else:
        tx = int(res["sent"]) if xdp else kernel_tx
    busy, steal = cpu_usage(c0, c1, tb.router_cpu)
    others = {f"{role}_cpu_load": round(cpu_split(c0, c1, cpu)["busy"], 4) if cpu is not None else None
              for role, cpu in other_cpus(tb).items()}
    requested = res["requested"]
    limited = res["blocked"] > 0 or (requested > 0 and offered < GENERATOR_TOLERANCE * requested) \
        or _kept_less_behind(res, rate_pps, duration_s)
    found = {}
    if drops is not None:
        a = drops.attribute(d0, drops.read(), tx=tx, rx=s1 - s0, offered=int(res["sent"]) if xdp else int(kernel_tx),
                            drop_share=spec.drop_share)
        found = {"lost_attributed": a.lost_attributed, "lost_unexplained": a.lost_unexplained,
                 "trace_missed": a.trace_missed, "drops": a.drops, "drop_rows": a.rows}
    return TrialResult(
        offered_pps=rate_pps, duration_s=duration_s, tx=tx, rx=s1 - s0,
        sent_pps=offered / res["elapsed"], refused=int(res["refused"]),
        generator_limited=bool(limited), cpu_load=round(busy, 4), steal=round(steal, 4),
        steal_flagged=steal > STEAL_FLAG, kernel_tx=int(kernel_tx), started_at=started,
        lost=tx - (s1 - s0), cpu_stop_ms=stops.get("max_stop_ms"), cpu_stops=stops.get("stops"),
        cpu_stopped_ms=stops.get("stopped_ms"), gen_late_ms=res["max_late_ms"], gen_lagged_ms=res["lagged_ms"],
        queue_ms=round(tb.router_queue / rate_pps * 1e3, 3) if tb.router_queue and rate_pps > 0 else None,
        router_ns_per_packet=ns_per_packet(c0, c1, tb.router_cpu, s1 - s0),
        napi_ns_per_packet=round((n1 - n0) / (s1 - s0), 2) if n0 is not None and n1 is not None and s1 > s0 else None,
        engine_ns_per_packet=round(engine[0] / (s1 - s0), 2) if engine is not None and s1 > s0 else None,
        engine_wait_ms=round(engine[1] / 1e6, 3) if engine is not None else None,
        router_steal=round(cpu_split(c0, c1, tb.router_cpu)["steal"], 4), **speed, **others, **found)


def rlgen_args(tb: Testbed, spec: TrafficSpec) -> list[str]:
    """rlgen's command line for the frames of ``spec`` on ``tb`` (addresses, flows, size,
    drop share), without rate and duration."""
    dst_mac = tb.mac(tb.ns_sink if tb.direct else tb.ns_dut, tb.sink_if if tb.direct else tb.dut_in)
    args = [tb.program("rlgen"), "--ifname", tb.tg_if, "--smac", tb.mac(tb.ns_tg, tb.tg_if),
            "--dmac", dst_mac, "--src", f"{TG_NET}.2",
            "--dst", f"{SINK_NET}.2" if tb.direct else f"{DEST_NET}.1",
            "--frame-size", str(spec.frame_size), "--dport", "5001", "--sport", "5000"]
    if spec.flows == "multi":
        args += ["--dst-count", "254", "--random-ports"]
    if spec.drop_share:
        args += ["--drop-share", str(spec.drop_share), "--drop-dport", str(TrafficSpec.DROP_PORT)]
    return args


def frames(tb: Testbed, spec: TrafficSpec) -> str:
    """The frames rlgen sends for ``spec`` on ``tb``, as it prints them (``--print-frames``:
    one per line, 1 or 0 for meant to pass the firewall or not, then the frame in hex)."""
    return sh(*rlgen_args(tb, spec), "--print-frames")


def _rlgen_results(tb: Testbed, args: list[str], duration_s: float) -> dict[str, float]:
    p = tb.spawn(tb.ns_tg, *args, cpu=tb.gen_cpu, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=duration_s * 3 + 10)
    finally:
        if p in tb.procs:
            tb.procs.remove(p)
    if p.returncode != 0:
        raise RouterlabError(f"traffic generator failed ({p.returncode}): {err.strip()}")
    return _results(out)


def _kept_less_behind(res: dict, rate_pps: float, duration_s: float) -> bool:
    """Whether rlgen, behind its schedule for at least :data:`BEHIND_JUDGED` of the trial,
    kept less than :data:`GENERATOR_TOLERANCE` of the rate meanwhile (``res``: its results;
    the XDP generator's have no such times)."""
    behind_s = res.get("behind_ms", 0) / 1e3
    return (rate_pps > 0 and behind_s >= BEHIND_JUDGED * duration_s
            and res["behind_frames"] < GENERATOR_TOLERANCE * rate_pps * behind_s)


def _xdp_results(r, rate_pps: float, duration_s: float, burst: int) -> dict[str, float]:
    """An :class:`routerlab.testbed.xdpgen.XdpRun` in rlgen's terms. Nothing is refused at the
    generator: a redirect the router's ring cannot take is the router's (the ring's
    ``xdp_xmit_errors``). Its elapsed time is the span from its first frame to its last,
    one burst's interval added (N frames in bursts of B span N - B intervals)."""
    elapsed = r.span_s + (burst / rate_pps if rate_pps > 0 else 0)
    return {"sent": r.sent, "refused": 0, "blocked": 0, "legit_sent": r.legit, "legit_refused": 0,
            "elapsed": elapsed or duration_s, "requested": round(rate_pps * duration_s) if rate_pps > 0 else 0,
            "max_late_ms": r.late_ms, "lagged_ms": r.lagged_ms}


def _results(out: str) -> dict[str, float]:
    """The ``RESULT-<name>=<value>`` lines our C programs print, as name -> number."""
    return {k.removeprefix("RESULT-"): float(v) for k, v in
            (line.split("=", 1) for line in out.splitlines() if line.startswith("RESULT-"))}
