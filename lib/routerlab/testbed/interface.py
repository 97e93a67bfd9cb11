"""What a measurement asks of a testbed, whichever it is: the :class:`Testbed` protocol, and the
address plan and names every testbed shares.

Three implementations: the namespace testbed on this machine
(:class:`routerlab.testbed.namespaces.NamespaceTestbed`), the SSH testbed over several hosts
(:class:`routerlab.remote.sshtestbed.SshTestbed`) and the fast-reroute network
(:class:`routerlab.measuring.fastreroute.RerouteNet`), none a subclass of another; what they
share beyond the protocol is in :mod:`routerlab.testbed.lifetime`. A sweep, a search, trial
validation and loss attribution call only what the protocol names.
"""

from __future__ import annotations

import ipaddress
import os
import re
import subprocess
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

STATE_DIR = Path(os.environ.get("ROUTERLAB_STATE_DIR", "/run/routerlab"))
#: Where a run pins its BPF objects (routerlab.measuring.drops), one folder per testbed prefix.
BPF_PINS = Path("/sys/fs/bpf/routerlab")
PREFIX_RE = re.compile(r"^rl[0-9a-f]{6}$")
NS_RE = re.compile(r"^(rl[0-9a-f]{6})-(tg|dut|sink|src|dst|r[1-4])$")

#: Addresses inside the testbed (only ever configured inside its own namespaces).
TG_NET, SINK_NET = "10.70.1", "10.70.2"
#: Destinations the traffic is sent to: one /24 behind the sink.
DEST_NET = "10.71.0"
#: The UDP port the generator sends a scenario's dropped share to (the firewall denies it).
DROP_PORT = 9
#: Where the fill routes of a large route table go, behind the sink (every engine, and a
#: host's journal of changes, which refuses a host that already routes there).
FILL_NET = ipaddress.ip_network("10.128.0.0/9")
#: Slots of a veth's XDP receive ring (VETH_RING_SIZE in drivers/net/veth.c): where frames
#: redirected into a veth, and sk_buffs sent to one that receives through NAPI, wait. The
#: router's first queue on every testbed made of veth links.
VETH_RING_SIZE = 256
#: Real-time priority (SCHED_FIFO, the lowest) of the NAPI threads of the router's input
#: and of the sink: above every ordinary task on their CPUs, as a NIC's interrupt work is.
#: The sink's goes before the generator, which spins on the same CPU; the router's before
#: the engine's own process (a polling DPDK thread never sleeps), and before anything
#: else ordinary on the router's CPU (with either generator, for an engine that receives
#: through threaded NAPI), so its 256-slot ring does not fill while it waits
#: for the CPU. The CPU-stop probe runs above them (SCHED_FIFO 2, ``csrc/rlstop.c``).
RECEIVE_PRIORITY = 1


@runtime_checkable
class Testbed(Protocol):
    """What a sweep, a search, trial validation and loss attribution (and the engines and
    benchmarks they run) ask of a testbed: a generator, a router (the device under test)
    and a sink, each in a network namespace of its own (on this machine, or on a host of
    a testbed beyond it), named after the run's prefix.

    A testbed is used as a context manager: up inside the ``with`` block, nothing of it
    left after. One beyond one machine may also bring its own loss attribution
    (``drop_counter(engine)``, :func:`routerlab.measuring.drops.attached`).
    """

    #: The run's name prefix, ``rl`` + 6 hex digits (:data:`PREFIX_RE`): every name the
    #: testbed makes starts with it, so runs never collide and clean-up finds what a
    #: killed run left.
    prefix: str
    #: True: the generator is wired straight to the sink, no router between them (to
    #: measure the generator's own ceiling).
    direct: bool
    #: What sends the traffic: "xdp" or "rlgen" (:data:`routerlab.defaults.GENERATORS`).
    generator: str
    #: MTU of the test links, bytes.
    mtu: int
    #: The CPU the generator runs on (of the generator's machine).
    gen_cpu: int
    #: The CPU that does the router's work (of the router's machine): the one the CPU-stop
    #: probe watches, whose busy and steal shares a trial records.
    router_cpu: int
    #: Packets the router holds while its CPU is stopped before it drops, set when the
    #: engine starts (:meth:`routerlab.engines.Engine.bring_up`); None before.
    router_queue: int | None
    #: The processes of a user-space engine (its own, started by :meth:`spawn`), set when
    #: it starts (:meth:`routerlab.engines.Engine.bring_up`): a trial reads the scheduler's
    #: clocks of their threads. Empty for the kernel's paths, before, and where the router
    #: is another machine's.
    router_pids: list[int]
    #: The processes :meth:`spawn` started that the testbed ends when it goes down (a
    #: caller that waited for one to end takes it out).
    procs: list[subprocess.Popen]
    #: How idle CPUs waited while up, as the environment record's ``pinning`` says it
    #: ("poll (...)" or "os (...)").
    idle_held: str
    #: The testbed's network namespaces, named ``<prefix>-<role>``: loss attribution names
    #: a place by that role.
    namespaces: list[str]
    #: The namespaces of the generator, the router and the sink.
    ns_tg: str
    ns_dut: str
    ns_sink: str
    #: The links: the generator's output, the router's input and output, the sink's input
    #: (interface names, in the namespace of their role).
    tg_if: str
    dut_in: str
    dut_out: str
    sink_if: str
    #: The namespace the CPU-stop probe of the router's CPU runs in (on the router's machine).
    probe_ns: str
    #: The folder under :data:`BPF_PINS` where the testbed's BPF objects are pinned.
    pin_name: str

    def __enter__(self) -> Testbed:
        """Bring the testbed up (refused in one line where it cannot start); SIGINT and
        SIGTERM then end the block as Ctrl-C does."""

    def __exit__(self, *exc) -> bool:
        """Take the testbed down: its processes, links and namespaces (and whatever it
        changed on a host) removed; exceptions pass on."""

    def spawn(self, ns: str, *args: str, cpu: int | None = None, **kw) -> subprocess.Popen:
        """Start the command ``args`` in namespace ``ns`` (pinned to ``cpu`` if given; ``kw``
        as for :class:`subprocess.Popen`), ended with the testbed (listed in :attr:`procs`)."""

    def sink_count(self) -> int:
        """Packets the sink has counted since the testbed came up."""

    def tx_counters(self) -> dict[str, int]:
        """The generator link's counters, packets: ``tx_packets`` sent, ``tx_dropped`` refused
        by the receiving side at enqueue."""

    def cpu_times(self) -> dict[str, list[int]]:
        """Per-CPU jiffies of the router's machine
        (:func:`routerlab.testbed.shell.cpu_times`)."""

    def program(self, name: str) -> str:
        """The path of one of our C programs (``rlgen``, ``rlstop``) where the testbed runs
        it, built if needed."""

    def chain(self) -> str:
        """Where generator, router and sink ran (hosts, CPUs, receive paths, the kernel's
        housekeeping threads), as the environment record's ``pinning`` says it."""

    def environment(self) -> dict[str, str]:
        """Columns of the environment record the testbed sets beyond the measuring
        machine's own (:func:`routerlab.analysis.datasets.record_environment`)."""

    def router(self, engine: Any) -> Any:
        """The engine as the testbed drives it: the engine itself on this machine; one
        that runs it on the router's host beyond it."""

    def own_device(self, dev: str) -> bool:
        """Whether the interface ``dev`` (in one of the testbed's namespaces) is one of its links."""

    def link_name(self, dev: str) -> str:
        """A link's name as datasets record it ("d0", "s0"...), the same in every run."""

    def mac(self, ns: str, dev: str) -> str:
        """The MAC address of the interface ``dev`` in namespace ``ns``."""

    def pin_receive(self) -> None:
        """Place the receive work of the router's input and of the sink on their CPUs
        again, after an engine attached programs of its own (a no-op where there is
        nothing to place)."""
