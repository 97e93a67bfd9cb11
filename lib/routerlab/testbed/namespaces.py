"""The namespace testbed: generator -> device under test -> sink, on veth links.

Three network namespaces joined by two veth pairs::

    <p>-tg  [<p>g0 10.70.1.2] ---- [<p>d0 10.70.1.1]  <p>-dut  [<p>d1 10.70.2.1] ---- [<p>s0 10.70.2.2]  <p>-sink

``<p>`` is a per-run prefix (``rl`` + 6 hex digits), so two runs never collide and
clean-up touches only what routerlab made. With ``direct=True`` the generator is wired
straight to the sink (to measure the generator's own ceiling).

The generator (``generator``, one of :data:`GENERATORS`): ``xdp`` (the default) sends live
XDP frames redirected into the generator's veth (:mod:`routerlab.testbed.xdpgen`); ``rlgen``
sends through an AF_PACKET socket (:mod:`routerlab.testbed.traffic`). Where the XDP generator
cannot run (:func:`live_frames_missing`), a testbed asked for it says why in one line and
takes rlgen.

CPU placement, on which every number depends: on veth the whole path would run on the
sending CPU unless told otherwise.

- With the XDP generator the router's CPU (``router_cpu``) does the router's work and
  nothing else. The generator and the sink share ``gen_cpu``: the sink counts and drops
  in XDP (``bpf/xdp_sink.c``, a per-CPU count), its veth's NAPI polled by a thread pinned
  to ``gen_cpu`` at real-time priority (:data:`RECEIVE_PRIORITY`), so it takes its packets
  as they come and the generator, which spins, runs in what is left. The router's input veth receives through
  NAPI (GRO on, which a veth needs to take redirected frames), polled by a thread pinned
  to ``router_cpu`` at real-time priority (:data:`RECEIVE_PRIORITY`), above the engine's
  own process; its 256-slot ring (:data:`VETH_RING_SIZE`) is the router's first queue.
- With rlgen the router's receive processing is moved to ``router_cpu`` by RPS on the
  DUT's ingress veth (engines that need NAPI use threaded NAPI pinned there); the sink
  drops at nft ingress behind a counter, its receive work on ``sink_cpu`` (by default the
  router's), from its own input queue (its veth's NAPI ring), not from the router's: see
  :meth:`Testbed._sink_queue`.

With either generator, the kernel's housekeeping threads (``kdamond``, ``kswapd``...) are
kept off ``router_cpu`` while the testbed is up (:mod:`routerlab.testbed.housekeeping`): on this
kernel, without preemption, one of them in kernel code keeps the router's receive thread
waiting longer than the router's ring lasts. Wired straight to the sink (``direct``) they
are kept off the generator's CPU instead (:attr:`Testbed.kept_cpu`).

Static neighbour entries replace ARP; IPv6 is off on test links.

Idle CPUs poll while a testbed is up (``cpu_idle="poll"``, the default): it holds the
kernel's CPU latency request (PM QoS, ``/dev/cpu_dma_latency``) at 0 µs, so an idle CPU
spins in the cpuidle POLL state instead of halting. In a virtual machine a halted vCPU
goes back to the hypervisor, and waking it costs a host scheduling delay that the guest
counts as steal; with packets arriving every few microseconds that happens all the time.
The request is the kernel's to drop when the file closes, so a killed run leaves nothing
behind. It is taken when the testbed is entered (``with Testbed() as tb``), so every
testbed polls, those that bring their own topology (:mod:`routerlab.measuring.fastreroute`) too.
``ROUTERLAB_CPU_IDLE=os`` leaves idle to the kernel; :mod:`routerlab.benchmarks.idle`
measures both side by side.

Nothing is left behind: :class:`Testbed` is a context manager that removes its namespaces
and processes on normal exit, on exceptions, on SIGINT and SIGTERM; each run writes a
state file under ``/run/routerlab`` so that :func:`clean` removes what a killed run left.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from routerlab import cache
from routerlab.errors import NeedsRoot, ParameterError
from routerlab.testbed import capabilities, cleanup, housekeeping, settings, shell, userns
from routerlab.testbed.interface import PREFIX_RE, SINK_NET, STATE_DIR, TG_NET
from routerlab.testbed.settings import default_cpu_idle, default_generator
from routerlab.testbed.shell import link_stats, napi_threads, nsexec, sh, u64, veth_queue_counters

#: ethtool's names of the TSO features (the kernel's NETIF_F_ALL_TSO).
TSO_FEATURES = ("tso", "tx-tcp6-segmentation", "tx-tcp-ecn-segmentation", "tx-tcp-mangleid-segmentation")
#: What the environment record's ``pinning`` says before a testbed's idle mode
#: (:attr:`Testbed.idle_held`); :mod:`routerlab.benchmarks.idle` reads it back.
IDLE_NOTE = "idle CPUs: "
#: Slots of a veth's XDP receive ring (VETH_RING_SIZE in drivers/net/veth.c): where frames
#: redirected into a veth, and sk_buffs sent to one that receives through NAPI, wait.
VETH_RING_SIZE = 256
#: Real-time priority (SCHED_FIFO, the lowest) of the NAPI threads of the router's input
#: and of the sink: above every ordinary task on their CPUs, as a NIC's interrupt work is.
#: The sink's goes before the generator, which spins on the same CPU; the router's before
#: the engine's own process (a polling DPDK thread never sleeps), and before anything
#: else ordinary on the router's CPU, so its 256-slot ring does not fill while it waits
#: for the CPU. The CPU-stop probe runs above them (SCHED_FIFO 2, ``csrc/rlstop.c``).
RECEIVE_PRIORITY = 1


def make(**kw):
    """A testbed for a measurement: the namespace testbed (:class:`Testbed`), or inside a
    :func:`use` block the one it names (a testbed beyond one machine,
    :mod:`routerlab.remote.sshtestbed`), with the same parameters."""
    factory = settings.factory()
    return factory(**kw) if factory is not None else NamespaceTestbed(**kw)



@dataclass
class NamespaceTestbed:
    """A generator, a device under test and a sink in their own namespaces.

    Parameters
    ----------
    mtu : int
        MTU of the test links, bytes.
    direct : bool
        Wire the generator straight to the sink (no DUT), to measure the generator.
    gen_cpu, router_cpu : int
        CPUs for the generator process and for the router's receive processing.
    sink_cpu : int, optional
        CPU for the sink's receive processing (default: the generator's with the XDP
        generator, the router's with rlgen; see the module's text).
    generator : str, optional
        "xdp" or "rlgen" (:data:`GENERATORS`). Default: :func:`default_generator`. A
        testbed asked for "xdp" where it cannot run takes rlgen (:func:`runnable`).
    prefix : str, optional
        Name prefix (``rl`` + 6 hex digits); random by default.
    router_queue : int, optional
        Packets the router holds while its CPU is stopped before it drops, set when the
        engine starts on it (:meth:`routerlab.engines.Engine.bring_up`): a trial that lost
        packets while its router CPU stopped longer than this queue lasts at the offered
        load, no more than were offered meanwhile, is disturbed
        (:class:`routerlab.measuring.validation.TrialValidation`).
    cpu_idle : str, optional
        "poll": idle CPUs poll while the testbed is up (see the module's text); "os": the
        kernel's idle states. Default: :func:`default_cpu_idle`. Where the latency request
        cannot be held (no such file, no permission) or has no effect, the testbed runs
        anyway and :attr:`idle_held` says so.
    placement : bool
        Place the work on CPUs (the default): the receive processing on ``router_cpu``,
        the housekeeping threads off it, idle CPUs polling; what every measurement needs.
        False: none of it, for checks of where packets go (the courses'); with rlgen only.
        It is then the only testbed a user namespace of one's own can make
        (:mod:`routerlab.testbed.userns`), and in one a testbed with placement refuses to start.
    """

    mtu: int = 1500
    direct: bool = False
    gen_cpu: int = 0
    router_cpu: int = 1
    sink_cpu: int | None = None
    router_queue: int | None = None
    prefix: str = field(default_factory=lambda: "rl" + secrets.token_hex(3))
    cpu_idle: str = field(default_factory=default_cpu_idle)
    generator: str = field(default_factory=default_generator)
    placement: bool = True
    procs: list = field(default_factory=list, repr=False)
    #: Fixed, locally administered MACs by interface role (suffix of the name): table
    #: entries written as data (the P4 exercises) can name them. Each testbed is its own
    #: L2 domain, so concurrent testbeds do not clash.
    MACS: ClassVar[dict[str, str]] = {"g0": "02:72:6c:01:00:02", "d0": "02:72:6c:01:00:01",
                                      "d1": "02:72:6c:02:00:01", "s0": "02:72:6c:02:00:02"}
    _old_handlers: dict = field(default_factory=dict, repr=False)
    _up: bool = field(default=False, repr=False)
    _latency_fd: int | None = field(default=None, init=False, repr=False)
    _sink_map: int | None = field(default=None, init=False, repr=False)
    #: The kernel threads kept off :attr:`kept_cpu` while up (:mod:`routerlab.testbed.housekeeping`).
    housekept: list = field(default_factory=list, init=False, repr=False)
    #: :func:`routerlab.testbed.housekeeping.mode` when the testbed came up.
    housekeeping_mode: str = field(default="", init=False, repr=False)
    #: How idle CPUs waited while up, as the environment record says it ("poll (...)" or
    #: "os (...)", with what the kernel honoured; set when the testbed comes up).
    idle_held: str = field(default="", init=False, repr=False)

    def __post_init__(self):
        if not PREFIX_RE.match(self.prefix):
            raise ParameterError("prefix", f"must match {PREFIX_RE.pattern}, got {self.prefix!r}")
        if not 576 <= self.mtu <= 9000:
            raise ParameterError("mtu", f"must be 576..9000 bytes, got {self.mtu}")
        ncpu = os.cpu_count() or 1
        self.generator = capabilities.runnable(settings._GENERATOR.checked("generator", self.generator))
        if self.sink_cpu is None:
            self.sink_cpu = self.gen_cpu if self.generator == "xdp" else self.router_cpu
        for name, cpu in (("gen_cpu", self.gen_cpu), ("router_cpu", self.router_cpu), ("sink_cpu", self.sink_cpu)):
            if not 0 <= cpu < ncpu:
                raise ParameterError(name, f"CPU {cpu} does not exist (this machine has {ncpu})")
        settings._IDLE.checked("cpu_idle", self.cpu_idle)
        if not self.placement and self.generator != "rlgen":
            raise ParameterError("generator", "a testbed without CPU placement sends with rlgen; "
                                 f"{self.generator!r} needs the placement")

    # names -----------------------------------------------------------------------
    @property
    def ns_tg(self):
        return f"{self.prefix}-tg"

    @property
    def ns_dut(self):
        return f"{self.prefix}-dut"

    @property
    def ns_sink(self):
        return f"{self.prefix}-sink"

    @property
    def tg_if(self):
        return f"{self.prefix}g0"

    @property
    def dut_in(self):
        return f"{self.prefix}d0"

    @property
    def dut_out(self):
        return f"{self.prefix}d1"

    @property
    def sink_if(self):
        return f"{self.prefix}s0"

    @property
    def namespaces(self):
        return [self.ns_tg, self.ns_sink] + ([] if self.direct else [self.ns_dut])

    @property
    def kept_cpu(self) -> int:
        """The CPU the kernel's housekeeping threads are kept off while up
        (:mod:`routerlab.testbed.housekeeping`): the router's; wired straight to the sink, the
        generator's, the router's CPU then being idle or the sink's."""
        return self.gen_cpu if self.direct else self.router_cpu

    @property
    def _holder(self) -> str:
        """Who holds the housekeeping threads off the router's CPU (:mod:`routerlab.testbed.housekeeping`)."""
        return f"{os.getpid()}/{self.prefix}"

    @property
    def state_file(self) -> Path:
        return STATE_DIR / f"{self.prefix}.json"

    # lifecycle ---------------------------------------------------------------------
    def __enter__(self):
        self._may_start()
        self._install_signal_handlers()
        try:
            self._place()
            self.up()
        except BaseException:
            self.down()
            self._restore_signal_handlers()
            raise
        return self

    def _may_start(self):
        """Refuse, in one line, to start where this testbed cannot."""
        capabilities.require_root()
        if self.placement and userns.inside():
            raise NeedsRoot("a testbed for measuring needs root of the machine: in a user namespace the "
                            "receive work cannot be placed on its CPU (only checks run there, placement=False)")

    def _place(self):
        """Before the testbed comes up: idle CPUs polling, housekeeping off the router's CPU."""
        if self.placement:
            self.hold_idle()
            self.housekeeping_mode = housekeeping.mode()
            self.housekept = housekeeping.hold(self.kept_cpu, self._holder)
        else:
            self.idle_held = "os (no CPU placement: a testbed for checks)"

    def __exit__(self, *exc):
        self.down()
        self._restore_signal_handlers()
        return False

    def _install_signal_handlers(self):
        def raise_interrupt(signum, frame):
            raise KeyboardInterrupt(f"signal {signum}")

        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                self._old_handlers[sig] = signal.signal(sig, raise_interrupt)
            except ValueError:  # not the main thread: the caller handles signals
                pass

    def _restore_signal_handlers(self):
        for sig, h in self._old_handlers.items():
            signal.signal(sig, h)
        self._old_handlers.clear()

    def _write_state(self):
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        state = {"prefix": self.prefix, "pid": os.getpid(), "namespaces": self.namespaces,
                 "procs": [p.pid for p in self.procs if p.poll() is None], "started": time.time()}
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        os.replace(tmp, self.state_file)

    def up(self):
        """Create namespaces, links, addresses, neighbours, sink counter and CPU placement."""
        self._up = True
        self._write_state()  # first, so that a crash right now is still cleaned up
        for ns in self.namespaces:
            sh("ip", "netns", "add", ns)
            for k in ("all", "default"):
                nsexec(ns, "sysctl", "-qw", f"net.ipv6.conf.{k}.disable_ipv6=1")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        far_ns, far_if = (self.ns_sink, self.sink_if) if self.direct else (self.ns_dut, self.dut_in)
        self._veth(self.ns_tg, self.tg_if, far_ns, far_if)
        if not self.direct:
            self._veth(self.ns_dut, self.dut_out, self.ns_sink, self.sink_if)
        # addresses: on the direct wire the sink takes the DUT's address on the tg side
        sh("ip", "-n", self.ns_tg, "addr", "add", f"{TG_NET}.2/24", "dev", self.tg_if)
        if self.direct:
            sh("ip", "-n", self.ns_sink, "addr", "add", f"{TG_NET}.1/24", "dev", self.sink_if)
        else:
            sh("ip", "-n", self.ns_dut, "addr", "add", f"{TG_NET}.1/24", "dev", self.dut_in)
            sh("ip", "-n", self.ns_dut, "addr", "add", f"{SINK_NET}.1/24", "dev", self.dut_out)
            sh("ip", "-n", self.ns_sink, "addr", "add", f"{SINK_NET}.2/24", "dev", self.sink_if)
            # the sink does not answer ARP: the DUT knows its MAC statically
            sh("ip", "-n", self.ns_dut, "neigh", "replace", f"{SINK_NET}.2", "lladdr",
               self.mac(self.ns_sink, self.sink_if), "dev", self.dut_out, "nud", "permanent")
            sh("ip", "-n", self.ns_dut, "neigh", "replace", f"{TG_NET}.2", "lladdr",
               self.mac(self.ns_tg, self.tg_if), "dev", self.dut_in, "nud", "permanent")
        sh("ip", "-n", self.ns_tg, "neigh", "replace", f"{TG_NET}.1", "lladdr",
           self.mac(far_ns, far_if), "dev", self.tg_if, "nud", "permanent")
        if self.generator == "xdp":
            self._xdp_chain(far_ns, far_if)
            return
        self.count_at_sink()
        if not self.placement:
            return
        # the router's (or, direct, the sink's) receive work runs on router_cpu, not on the generator's
        self.set_rps(far_ns, far_if, self.router_cpu)
        if not self.direct:
            self._sink_queue()

    def count_at_sink(self):
        """rlgen's sink: the sink's interface drops everything at nft ingress, counting it
        (:meth:`sink_count`), so that it never becomes the bottleneck."""
        nsexec(self.ns_sink, "nft", "-f", "-", input=(
            "table netdev rlsink {\n  counter rx { }\n"
            f"  chain in {{ type filter hook ingress device \"{self.sink_if}\" priority -500; "
            "counter name \"rx\" drop; }\n}\n"))

    def _xdp_chain(self, far_ns: str, far_if: str):
        """The XDP generator's chain: the XDP sink on the sink's veth, its NAPI thread on
        ``sink_cpu`` above the generator; the router's input veth receiving through NAPI,
        its thread on ``router_cpu`` (see the module's text)."""
        sh("ip", "-n", self.ns_sink, "link", "set", "dev", self.sink_if, "xdpdrv",
           "obj", str(cache.bpf_object("xdp_sink")), "sec", "xdp")
        prog = json.loads(sh("ip", "-n", self.ns_sink, "-j", "link", "show", "dev", self.sink_if))[0]["xdp"]["prog"]["id"]
        (self._sink_map,) = json.loads(sh("bpftool", "-j", "prog", "show", "id", str(prog)))["map_ids"]
        if not self.direct:
            # a veth takes redirected frames only while it receives through NAPI: GRO asks for it
            nsexec(self.ns_dut, "ethtool", "-K", self.dut_in, "gro", "on")
            # the router sends 64-byte frames the sink's ring may aggregate: no TSO on its side
            nsexec(self.ns_dut, "ethtool", "-K", self.dut_out, *[a for f in TSO_FEATURES for a in (f, "off")])
        self.pin_receive()

    def pin_receive(self):
        """With the XDP generator: put the NAPI polling of the sink's veth on ``sink_cpu``
        and that of the router's input veth on ``router_cpu`` (threaded NAPI), both at
        real-time priority :data:`RECEIVE_PRIORITY`. Again after an engine attached
        programs of its own (a veth may make its NAPI anew then). No-op with rlgen."""
        if self.generator != "xdp":
            return
        places = [(self.ns_sink, self.sink_if, self.sink_cpu)]
        if not self.direct:
            places.append((self.ns_dut, self.dut_in, self.router_cpu))
        for ns, dev, cpu in places:
            self.set_rps(ns, dev, None)
            nsexec(ns, "sh", "-c", f"echo 1 > /sys/class/net/{dev}/threaded")
            for pid in napi_threads(dev):
                sh("taskset", "-pc", str(cpu), pid)
                sh("chrt", "-f", "-p", str(RECEIVE_PRIORITY), pid)

    def hold_idle(self):
        """Hold the CPU latency request at 0 µs for ``cpu_idle="poll"`` until :meth:`down`
        (taken when the testbed is entered), and set :attr:`idle_held` from what the kernel
        honours then: a request of 0 µs held by another process makes "os" poll too, and
        without a cpuidle driver a request changes nothing."""
        self.release_idle()
        driver = capabilities.cpuidle_driver()
        if self.cpu_idle == "poll":
            try:
                self._latency_fd = os.open(capabilities.CPU_LATENCY, os.O_WRONLY | os.O_CLOEXEC)
                os.write(self._latency_fd, (0).to_bytes(4, "little", signed=True))
            except OSError as e:
                self.release_idle()
                self.idle_held = f"os (poll asked; {capabilities.CPU_LATENCY}: {e.strerror})"
                return
        now = capabilities.cpu_latency_us()
        if driver == "none":
            self.idle_held = f"os ({self.cpu_idle} asked; no cpuidle driver: idle CPUs halt whatever is asked)"
        elif self.cpu_idle == "poll":
            self.idle_held = (f"poll ({capabilities.CPU_LATENCY} 0 us held while up; cpuidle driver {driver})" if now == 0 else
                              f"os (poll asked; {capabilities.CPU_LATENCY} reads {now} us after writing 0)")
        elif now == 0:
            self.idle_held = f"poll (os asked; another process holds {capabilities.CPU_LATENCY} at 0 us)"
        else:
            self.idle_held = f"os (the kernel's idle states; cpuidle driver {driver})"

    def release_idle(self):
        """Drop this testbed's CPU latency request, if it holds one."""
        fd, self._latency_fd = self._latency_fd, None
        if fd is not None:
            os.close(fd)

    def _sink_queue(self):
        """Give the sink's receive its own input queue: the sink's veth NAPI ring.

        Without it the router's forwarded packets enter the sink through the backlog of the
        CPU that forwarded them, the router's: the router's input queue then also holds its
        output, and when it overflowed 41-49% of the loss was the sink's side of it (testbed-veth,
        2026-11-23). With GRO on the sink's veth, the veth delivers to its own 256-slot ring,
        polled right after the router's batch on the same CPU; a veth uses that ring only
        for packets it may aggregate, which needs TSO off on the sending side (the DUT's
        output link; nothing a 64-byte frame uses). Same engines, A/B interleaved 3 times
        (2026-11-23): no sink drop left, linux at 0.6 of the ceiling lost 0-0.05% instead of
        0.15-5.3%, at 0.8 2.4-5.7% instead of 10.7-26.6%.
        """
        nsexec(self.ns_sink, "ethtool", "-K", self.sink_if, "gro", "on")
        nsexec(self.ns_dut, "ethtool", "-K", self.dut_out, *[a for f in TSO_FEATURES for a in (f, "off")])
        # RPS would put the sink's packets back into a backlog, so it is only used to move
        # the sink's work to another CPU (its backlog is then that CPU's, not the router's)
        self.set_rps(self.ns_sink, self.sink_if, self.sink_cpu if self.sink_cpu != self.router_cpu else None)

    def _veth(self, ns_a, a, ns_b, b):
        sh("ip", "link", "add", a, "address", self.MACS[a[-2:]], "netns", ns_a, "mtu", str(self.mtu),
           "type", "veth", "peer", "name", b, "address", self.MACS[b[-2:]], "netns", ns_b, "mtu", str(self.mtu))
        for ns, dev in ((ns_a, a), (ns_b, b)):
            sh("ip", "-n", ns, "link", "set", dev, "up")

    def link_name(self, dev: str) -> str:
        """A link's name as datasets record it: without this testbed's prefix ("d0", "s0"),
        so that counters of different runs line up."""
        return dev.removeprefix(self.prefix)

    @staticmethod
    def set_rps(ns: str, dev: str, cpu: int | None):
        """Steer the receive processing of ``dev`` to ``cpu`` (RPS); None: no RPS."""
        mask = 0 if cpu is None else 1 << cpu
        nsexec(ns, "sh", "-c", f"echo {mask:x} > /sys/class/net/{dev}/queues/rx-0/rps_cpus")

    @staticmethod
    def mac(ns: str, dev: str) -> str:
        return json.loads(sh("ip", "-n", ns, "-j", "link", "show", "dev", dev))[0]["address"]

    def spawn(self, ns: str, *args: str, cpu: int | None = None, **kw) -> subprocess.Popen:
        """Start a process in namespace ``ns`` (optionally pinned to ``cpu``); it is killed by
        :meth:`down` and by :func:`clean` if this run dies."""
        cmd = ["ip", "netns", "exec", ns] + (["taskset", "-c", str(cpu)] if cpu is not None else []) + list(args)
        p = subprocess.Popen(cmd, start_new_session=True, **kw)
        self.procs.append(p)
        self._write_state()
        return p

    def down(self):
        """Remove every process, link and namespace of this run, and drop its CPU latency
        request and give the housekeeping threads their CPUs back (idempotent)."""
        self.release_idle()
        try:
            if not self._up:
                return
            for p in self.procs:
                cleanup._kill_group(p.pid)
            for p in self.procs:
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
            self.procs.clear()
            for ns in self.namespaces:
                cleanup._delete_ns(ns)
            self.state_file.unlink(missing_ok=True)
            self._up = False
        finally:
            # after the namespaces: a failure here must not leave them behind
            if self.placement:
                housekeeping.release(self._holder)

    # what a measurement asks of the testbed, the same beyond one machine ---------------
    @property
    def probe_ns(self) -> str:
        """The namespace the CPU-stop probe of the router's CPU runs in (any of this
        machine's; beyond one machine, one on the router's host)."""
        return self.ns_tg

    def cpu_times(self) -> dict[str, list[int]]:
        """:func:`cpu_times` of the machine the router runs on."""
        return shell.cpu_times()

    def program(self, name: str) -> str:
        """The path of one of our C programs (``rlgen``, ``rlstop``) where the testbed
        runs it, built if needed."""
        return str(cache.compiled(name))

    @property
    def pin_name(self) -> str:
        """The folder under :data:`BPF_PINS` where this testbed's BPF objects are pinned."""
        return self.prefix

    def own_device(self, dev: str) -> bool:
        """Whether ``dev`` (in one of this testbed's namespaces) is one of its links."""
        return dev.startswith(self.prefix)

    def router(self, engine):
        """The engine as the testbed drives it: ``engine`` itself here; beyond one machine,
        one that runs it on the router's host."""
        return engine

    def environment(self) -> dict:
        """Columns of the environment record this testbed sets beyond the machine's own
        (:func:`routerlab.analysis.datasets.record_environment`): none here."""
        return {"setting": "network namespaces, veth"}

    # measurement helpers --------------------------------------------------------------
    def sink_count(self) -> int:
        """Packets counted by the sink so far (its XDP program's count, or its nft counter)."""
        if self.generator == "xdp":
            values = json.loads(sh("bpftool", "-j", "map", "lookup", "id", str(self._sink_map),
                                   "key", "0", "0", "0", "0"))
            return sum(u64(v["value"]) for v in values["values"])
        out = json.loads(nsexec(self.ns_sink, "nft", "-j", "list", "counter", "netdev", "rlsink", "rx"))
        return next(o["counter"]["packets"] for o in out["nftables"] if "counter" in o)

    def tx_counters(self) -> dict:
        """The generator link's counters: tx_packets, and tx_dropped, refused by the
        receiving side at enqueue. With the XDP generator they are the redirects the
        receiving veth's ring took (its ``xdp_xmit``) and refused (``xdp_xmit_errors``)."""
        if self.generator == "xdp":
            c = veth_queue_counters(self.ns_tg, self.tg_if)
            return {"tx_packets": c.get("xdp_xmit", 0), "tx_dropped": c.get("xdp_xmit_errors", 0)}
        return link_stats(self.ns_tg, self.tg_if)

    def chain(self) -> str:
        """How generator, router and sink were placed, as the environment record's
        ``pinning`` says it (the idle mode follows)."""
        kept = (f"; kernel threads kept off CPU {self.kept_cpu}: {', '.join(self.housekept)}" if self.housekept
                else f"; no kernel thread to keep off CPU {self.kept_cpu}" if self.housekeeping_mode == "move"
                else "; kernel threads left where they were (ROUTERLAB_HOUSEKEEPING=leave)")
        return self._placement() + kept

    def _placement(self) -> str:
        if self.generator == "xdp":
            return (f"generator CPU {self.gen_cpu} (live XDP frames); router CPU {self.router_cpu} "
                    f"(its input veth's NAPI thread pinned there at SCHED_FIFO {RECEIVE_PRIORITY}, ring of {VETH_RING_SIZE}); "
                    f"sink CPU {self.sink_cpu} "
                    f"(XDP count and drop, its NAPI thread pinned there at SCHED_FIFO {RECEIVE_PRIORITY})")
        return (f"generator CPU {self.gen_cpu}; router receive CPU {self.router_cpu}; sink receive CPU {self.sink_cpu} "
                f"{'from its own veth ring' if self.sink_cpu == self.router_cpu else 'from its backlog (RPS)'}, "
                "drops at nft ingress")


