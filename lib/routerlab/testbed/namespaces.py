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
  :meth:`NamespaceTestbed._sink_queue`.

With either generator, the machine's other work (the kernel's housekeeping threads
``kdamond``, ``kswapd``..., other processes' threads, the unbound workqueues) is kept off
``router_cpu`` while the testbed is up (:mod:`routerlab.testbed.housekeeping`): on this
kernel, without preemption, one of them in kernel code keeps the router's receive thread
waiting longer than the router's ring lasts. Wired straight to the sink (``direct``) they
are kept off the generator's CPU instead (:attr:`NamespaceTestbed.kept_cpu`).

Static neighbour entries replace ARP; IPv6 is off on test links.

Idle CPUs poll while a testbed is up (``cpu_idle="poll"``, the default): it holds the
kernel's CPU latency request (PM QoS, ``/dev/cpu_dma_latency``) at 0 µs, so an idle CPU
spins in the cpuidle POLL state instead of halting. In a virtual machine a halted vCPU
goes back to the hypervisor, and waking it costs a host scheduling delay that the guest
counts as steal; with packets arriving every few microseconds that happens all the time.
The request is the kernel's to drop when the file closes, so a killed run leaves nothing
behind. It is taken when the testbed is entered (``with NamespaceTestbed() as tb``), so every
testbed polls, those that bring their own topology (:mod:`routerlab.measuring.fastreroute`) too.
``ROUTERLAB_CPU_IDLE=os`` leaves idle to the kernel; :mod:`routerlab.benchmarks.idle`
measures both side by side.

Nothing is left behind: :class:`NamespaceTestbed` is a context manager that removes its namespaces
and processes on normal exit, on exceptions, on SIGINT and SIGTERM; each run writes a
state file under ``/run/routerlab`` so that :func:`clean` removes what a killed run left.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import ClassVar

from routerlab import cache
from routerlab.errors import ParameterError
from routerlab.testbed import capabilities, settings
from routerlab.testbed.interface import RECEIVE_PRIORITY, SINK_NET, TG_NET, VETH_RING_SIZE
from routerlab.testbed.lifetime import OnThisMachine, check_cpus, check_mtu, check_prefix, new_prefix
from routerlab.testbed.settings import Settings, environment_cpu_idle, environment_generator
from routerlab.testbed.shell import link_stats, nsexec, receive_in_thread, sh, u64, veth_queue_counters

#: ethtool's names of the TSO features (the kernel's NETIF_F_ALL_TSO).
TSO_FEATURES = ("tso", "tx-tcp6-segmentation", "tx-tcp-ecn-segmentation", "tx-tcp-mangleid-segmentation")
#: What the environment record's ``pinning`` says before a testbed's idle mode
#: (:attr:`NamespaceTestbed.idle_held`); :mod:`routerlab.benchmarks.idle` reads it back.
IDLE_NOTE = "idle CPUs: "


def make(settings: Settings | None = None, **kw):
    """A testbed for a measurement made with ``settings`` (None: the environment's): the
    namespace testbed (:class:`NamespaceTestbed`) with their generator and idle mode, or
    the one their factory makes (a testbed beyond one machine,
    :mod:`routerlab.remote.sshtestbed`), with the same parameters."""
    settings = settings or Settings()
    if settings.factory is not None:
        return settings.factory(**kw)
    return NamespaceTestbed(**{"generator": settings.generator, "cpu_idle": settings.cpu_idle, **kw})



@dataclass
class NamespaceTestbed(OnThisMachine):
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
        "xdp" or "rlgen" (:data:`GENERATORS`). Default: ``ROUTERLAB_GENERATOR``, else
        "xdp" (:func:`routerlab.testbed.settings.environment_generator`). A
        testbed asked for "xdp" where it cannot run takes rlgen (:func:`runnable`).
    prefix : str, optional
        Name prefix (``rl`` + 6 hex digits); random by default.
    router_queue : int, optional
        Packets the router holds while its CPU is stopped before it drops, set when the
        engine starts on it (:meth:`routerlab.engines.Engine.bring_up`): a trial that lost
        packets while its router CPU stopped longer than this queue lasts at the offered
        load, no more than were offered meanwhile, is disturbed
        (:class:`routerlab.measuring.validation.TrialValidation`).
    router_pids : list of int, optional
        A user-space engine's own processes, set when it starts
        (:meth:`routerlab.engines.Engine.bring_up`): each trial reads how long their
        threads ran and waited for a CPU.
    cpu_idle : str, optional
        "poll": idle CPUs poll while the testbed is up (see the module's text); "os": the
        kernel's idle states. Default: ``ROUTERLAB_CPU_IDLE``, else "poll". Where the latency request
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
    router_pids: list[int] = field(default_factory=list)
    prefix: str = field(default_factory=new_prefix)
    cpu_idle: str = field(default_factory=environment_cpu_idle)
    generator: str = field(default_factory=environment_generator)
    placement: bool = True
    #: Fixed, locally administered MACs by interface role (suffix of the name): table
    #: entries written as data (the P4 exercises) can name them. Each testbed is its own
    #: L2 domain, so concurrent testbeds do not clash.
    MACS: ClassVar[dict[str, str]] = {"g0": "02:72:6c:01:00:02", "d0": "02:72:6c:01:00:01",
                                      "d1": "02:72:6c:02:00:01", "s0": "02:72:6c:02:00:02"}
    _sink_map: int | None = field(default=None, init=False, repr=False)

    def __post_init__(self):
        check_prefix(self.prefix)
        check_mtu(self.mtu)
        self.generator = capabilities.runnable(settings.checked_generator(self.generator))
        if self.sink_cpu is None:
            self.sink_cpu = self.gen_cpu if self.generator == "xdp" else self.router_cpu
        check_cpus(gen_cpu=self.gen_cpu, router_cpu=self.router_cpu, sink_cpu=self.sink_cpu)
        settings.checked_cpu_idle(self.cpu_idle)
        if not self.placement and self.generator != "rlgen":
            raise ParameterError("generator", "a testbed without CPU placement sends with rlgen; "
                                 f"{self.generator!r} needs the placement")

    def up(self):
        """Create namespaces, links, addresses, neighbours, sink counter and CPU placement."""
        self._add_namespaces()
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
            receive_in_thread(ns, dev, cpu, RECEIVE_PRIORITY)

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

    @staticmethod
    def set_rps(ns: str, dev: str, cpu: int | None):
        """Steer the receive processing of ``dev`` to ``cpu`` (RPS); None: no RPS."""
        mask = 0 if cpu is None else 1 << cpu
        nsexec(ns, "sh", "-c", f"echo {mask:x} > /sys/class/net/{dev}/queues/rx-0/rps_cpus")

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
        return self._placement() + self._kept()

    def _placement(self) -> str:
        if self.generator == "xdp":
            return (f"generator CPU {self.gen_cpu} (live XDP frames); router CPU {self.router_cpu} "
                    f"(its input veth's NAPI thread pinned there at SCHED_FIFO {RECEIVE_PRIORITY}, ring of {VETH_RING_SIZE}); "
                    f"sink CPU {self.sink_cpu} "
                    f"(XDP count and drop, its NAPI thread pinned there at SCHED_FIFO {RECEIVE_PRIORITY})")
        return (f"generator CPU {self.gen_cpu}; router receive CPU {self.router_cpu}; sink receive CPU {self.sink_cpu} "
                f"{'from its own veth ring' if self.sink_cpu == self.router_cpu else 'from its backlog (RPS)'}, "
                "drops at nft ingress")


