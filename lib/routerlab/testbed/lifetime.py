"""What the testbeds share beyond the interface they offer (:mod:`routerlab.testbed.interface`).

:class:`Lifetime`, for every testbed: the names its prefix gives, its life as a ``with``
block that SIGINT and SIGTERM end as Ctrl-C does (so that its ``down`` runs), and the state
file by which ``routerlab clean`` finds what a killed run left.

:class:`OnThisMachine`, for the testbeds made of network namespaces of this machine (the
namespace testbed, the fast-reroute network): their namespaces made and removed, their
processes, idle CPUs held polling and the machine's other work kept off the router's
CPU while up (:mod:`routerlab.testbed.namespaces` says why).

Mixins, not testbeds: a testbed class takes the one it needs and declares its own
parameters (``prefix``, ``direct``, the CPUs...).
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

from routerlab import cache, processes
from routerlab.errors import NeedsRoot, ParameterError
from routerlab.testbed import capabilities, housekeeping, shell, userns
from routerlab.testbed.interface import PREFIX_RE, STATE_DIR
from routerlab.testbed.shell import nsexec, sh


def new_prefix() -> str:
    """A fresh run prefix: ``rl`` and 6 random hex digits (:data:`PREFIX_RE`)."""
    return "rl" + secrets.token_hex(3)


def check_prefix(prefix: str):
    """Refuse a prefix :data:`PREFIX_RE` does not match (clean-up would not know its names)."""
    if not PREFIX_RE.match(prefix):
        raise ParameterError("prefix", f"must match {PREFIX_RE.pattern}, got {prefix!r}")


def check_mtu(mtu: int):
    """Refuse an MTU of the test links outside 576..9000 bytes."""
    if not 576 <= mtu <= 9000:
        raise ParameterError("mtu", f"must be 576..9000 bytes, got {mtu}")


def check_cpus(**cpus: int):
    """Refuse a CPU (by parameter name: number) this machine does not have."""
    ncpu = os.cpu_count() or 1
    for name, cpu in cpus.items():
        if not 0 <= cpu < ncpu:
            raise ParameterError(name, f"CPU {cpu} does not exist (this machine has {ncpu})")


def _prefixed(suffix: str) -> property:
    """A name of the testbed's: its prefix followed by ``suffix``."""
    return property(lambda self: f"{self.prefix}{suffix}")


@dataclass
class Lifetime:
    """A testbed's names, its ``with`` block and its state file.

    The class using it has ``prefix`` and ``direct``, and ``_may_start`` (refuse, in one
    line, to start where it cannot), ``_place`` (before it comes up), ``up`` and ``down``
    (idempotent) of its own.
    """

    #: The processes :meth:`spawn` started, ended by :meth:`down`.
    procs: list = field(default_factory=list, init=False, repr=False)
    #: How idle CPUs waited while up, as the environment record says it.
    idle_held: str = field(default="", init=False, repr=False)
    _old_handlers: dict = field(default_factory=dict, init=False, repr=False)
    _up: bool = field(default=False, init=False, repr=False)

    # names: the prefix and a role's suffix ("<p>-dut", "<p>d0": see routerlab.testbed.namespaces)
    ns_tg, ns_dut, ns_sink = (_prefixed(f"-{role}") for role in ("tg", "dut", "sink"))
    tg_if, dut_in, dut_out, sink_if = (_prefixed(link) for link in ("g0", "d0", "d1", "s0"))

    @property
    def namespaces(self) -> list[str]:
        return [self.ns_tg, self.ns_sink] + ([] if self.direct else [self.ns_dut])

    @property
    def pin_name(self) -> str:
        """The folder under :data:`routerlab.testbed.interface.BPF_PINS` where this
        testbed's BPF objects are pinned."""
        return self.prefix

    def own_device(self, dev: str) -> bool:
        """Whether ``dev`` (in one of this testbed's namespaces) is one of its links."""
        return dev.startswith(self.prefix)

    def link_name(self, dev: str) -> str:
        """A link's name as datasets record it: without this testbed's prefix ("d0", "s0"),
        so that counters of different runs line up."""
        return dev.removeprefix(self.prefix)

    # lifecycle ---------------------------------------------------------------------
    def __enter__(self):
        self._may_start()
        self._install_signal_handlers()
        try:
            self._place()
            self.up()
        except BaseException:
            self._down_holding_signals(raise_held=False)
            raise
        return self

    def __exit__(self, *exc):
        self._down_holding_signals(raise_held=exc[0] is None)
        return False

    def _down_holding_signals(self, raise_held: bool):
        """:meth:`down` with SIGINT and SIGTERM held until it has run, then the handlers
        from before the block. A second signal (Ctrl-C pressed twice, or ``timeout`` and
        its process group both sending SIGTERM) would otherwise stop the clean-up halfway
        and leave namespaces behind. A signal held is raised as KeyboardInterrupt once
        ``down`` is done, when ``raise_held`` (no exception already on its way out)."""
        held = []
        for sig in self._old_handlers:
            signal.signal(sig, lambda signum, frame: held.append(signum))
        try:
            self.down()
        finally:
            self._restore_signal_handlers()
        if held and raise_held:
            raise KeyboardInterrupt(f"signal {held[0]}")

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

    # the state file -------------------------------------------------------------------
    @property
    def state_file(self) -> Path:
        return STATE_DIR / f"{self.prefix}.json"

    def _state(self) -> dict:
        """What :func:`routerlab.testbed.cleanup.clean` needs to remove what this run left,
        should it die: its namespaces and its live processes, by this process."""
        return {"prefix": self.prefix, "pid": os.getpid(), "namespaces": self.namespaces,
                "procs": [p.pid for p in self.procs if p.poll() is None], "started": time.time()}

    def _write_state(self):
        processes.write_state(self.state_file, self._state())


@dataclass
class OnThisMachine(Lifetime):
    """A testbed made of network namespaces of this machine.

    The class using it has ``gen_cpu``, ``router_cpu``, ``direct``, ``placement`` (False:
    no CPU placement, for checks of where packets go) and ``cpu_idle`` ("poll" or "os"),
    and an ``up`` that makes its namespaces first (:meth:`_add_namespaces`).
    """

    _latency_fd: int | None = field(default=None, init=False, repr=False)
    #: The machine's other work kept off :attr:`kept_cpu` while up (:mod:`routerlab.testbed.housekeeping`).
    housekept: list = field(default_factory=list, init=False, repr=False)
    #: :func:`routerlab.testbed.housekeeping.mode` when the testbed came up.
    housekeeping_mode: str = field(default="", init=False, repr=False)

    @property
    def kept_cpu(self) -> int:
        """The CPU the machine's other work is kept off while up
        (:mod:`routerlab.testbed.housekeeping`): the router's; wired straight to the sink, the
        generator's, the router's CPU then being idle or the sink's."""
        return self.gen_cpu if self.direct else self.router_cpu

    @property
    def _holder(self) -> str:
        """Who holds the other work off the router's CPU (:mod:`routerlab.testbed.housekeeping`)."""
        return f"{os.getpid()}/{self.prefix}"

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

    def _add_namespaces(self):
        """Make this testbed's namespaces, IPv6 off and loopback up in each (the state
        file is written first, so that a crash right now is still cleaned up)."""
        self._up = True
        self._write_state()
        for ns in self.namespaces:
            sh("ip", "netns", "add", ns)
            for k in ("all", "default"):
                nsexec(ns, "sysctl", "-qw", f"net.ipv6.conf.{k}.disable_ipv6=1")
            sh("ip", "-n", ns, "link", "set", "lo", "up")

    def spawn(self, ns: str, *args: str, cpu: int | None = None, **kw) -> subprocess.Popen:
        """Start a process in namespace ``ns`` (optionally pinned to ``cpu``); it is killed by
        :meth:`down` and by :func:`routerlab.testbed.cleanup.clean` if this run dies."""
        cmd = ["ip", "netns", "exec", ns] + (["taskset", "-c", str(cpu)] if cpu is not None else []) + list(args)
        p = subprocess.Popen(cmd, start_new_session=True, **kw)
        self.procs.append(p)
        self._write_state()
        return p

    def down(self):
        """Remove every process, link and namespace of this run, and drop its CPU latency
        request and give the other work its CPUs back (idempotent)."""
        self.release_idle()
        try:
            if not self._up:
                return
            for p in self.procs:
                processes.kill_group(p.pid)
            for p in self.procs:
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
            self.procs.clear()
            for ns in self.namespaces:
                shell.delete_namespace(ns)
            self.state_file.unlink(missing_ok=True)
            self._up = False
        finally:
            # after the namespaces: a failure here must not leave them behind
            if self.placement:
                housekeeping.release(self._holder)

    def _kept(self) -> str:
        """Where the machine's other work was while up, as the environment
        record's ``pinning`` ends."""
        return (f"; kept off CPU {self.kept_cpu}: {', '.join(self.housekept)}" if self.housekept
                else f"; nothing to keep off CPU {self.kept_cpu}" if self.housekeeping_mode == "move"
                else "; other work left where it was (ROUTERLAB_HOUSEKEEPING=leave)")

    # what a measurement asks of a testbed on this machine ---------------------------------
    @property
    def probe_ns(self) -> str:
        """The namespace the CPU-stop probe of the router's CPU runs in: any of this
        machine's (the first)."""
        return self.namespaces[0]

    def cpu_times(self) -> dict[str, list[int]]:
        """:func:`routerlab.testbed.shell.cpu_times` of this machine, where the router runs."""
        return shell.cpu_times()

    def program(self, name: str) -> str:
        """The path of one of our C programs (``rlgen``, ``rlstop``), built if needed."""
        return str(cache.compiled(name))

    def router(self, engine):
        """The engine as the testbed drives it: ``engine`` itself."""
        return engine

    def environment(self) -> dict:
        """Columns of the environment record this testbed sets beyond the machine's own
        (:func:`routerlab.analysis.datasets.record_environment`)."""
        return {"setting": "network namespaces, veth"}

    @staticmethod
    def mac(ns: str, dev: str) -> str:
        """The MAC address of ``dev`` in namespace ``ns``, as the kernel has it."""
        return json.loads(sh("ip", "-n", ns, "-j", "link", "show", "dev", dev))[0]["address"]
