"""What every engine is: the :class:`Engine` contract, the table each engine adds itself
to (:func:`register`; :mod:`routerlab.engines.registry` finds them by name), and finding an engine's binaries (:func:`find_binary`:
a variable naming one's own build, else what ``routerlab engines install`` built, else
PATH)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import ClassVar

from routerlab import processes
from routerlab.errors import EngineNotFound, ParameterError
from routerlab.analysis.scenarios import Scenario
from routerlab.testbed.interface import Testbed, VETH_RING_SIZE
from routerlab.testbed.shell import sh
from routerlab.engines import builds


class Engine:
    """Base class. Subclasses set :attr:`name`, :attr:`features` and implement start/stop."""

    name: ClassVar[str] = ""
    #: Scenario features supported ("routes", "firewall", "drop", "gre").
    features: ClassVar[set[str]] = set()
    #: True when the Linux kernel itself forwards (linux, nft).
    kernel_forwarding: ClassVar[bool] = False
    #: Where users get the engine.
    where: ClassVar[str] = ""
    #: Why the engine runs on the namespace testbed only ("" if it runs on any testbed):
    #: a testbed beyond one machine starts engines on the router's host alone.
    one_machine: ClassVar[str] = ""

    def check(self, sc: Scenario | None = None):
        """Raise :class:`EngineNotFound` if missing, :class:`ParameterError` if ``sc`` needs
        a feature this engine lacks."""
        if sc is not None:
            missing = sc.features - self.features
            if missing:
                raise ParameterError("scenario", f"engine {self.name} does not support "
                                     f"{', '.join(sorted(missing))} (scenario {sc.name})")

    def version(self) -> str:
        return sh("uname", "-r").strip()

    def settings(self) -> dict:
        """The keyword arguments that make this engine again elsewhere (the router's host
        of a testbed beyond one machine: :mod:`routerlab.remote.sshtestbed`); none by default."""
        return {}

    def use_config(self, path):
        """Run the router configuration ``path`` of one's own instead of routerlab's (the
        engines that run a configuration file: click, fastclick)."""
        raise ParameterError("config", f"engine {self.name} runs no configuration file of yours "
                                       "(click and fastclick do)")

    def start(self, tb: Testbed, sc: Scenario) -> dict:
        """Configure the router; return facts for the environment record."""
        raise NotImplementedError

    def bring_up(self, tb: Testbed, sc: Scenario) -> dict:
        """Start the router (:meth:`start`) and tell the testbed how many packets its queue
        holds (:meth:`queue_packets`), which every trial's validation needs; return the
        facts for the environment record, ``router_queue_packets`` among them."""
        facts = self.start(tb, sc)
        tb.pin_receive()
        tb.router_queue = self.queue_packets(tb)
        tb.router_pids = self.pids()
        return {**facts, "router_queue_packets": tb.router_queue}

    def pids(self) -> list[int]:
        """The engine's own processes while it runs (``self._proc``, which :meth:`start`
        spawns; their children count too, :func:`routerlab.testbed.shell.task_times`):
        none for the kernel's paths."""
        p = getattr(self, "_proc", None)
        return [p.pid] if p is not None and p.poll() is None else []

    def queue_packets(self, tb: Testbed) -> int:
        """Packets the router holds while its CPU is stopped, before it drops: the first
        queue on its CPU that fills. With the XDP generator, the ring of the router's input
        veth (:data:`routerlab.testbed.interface.VETH_RING_SIZE`), which the generator's redirects
        fill while the router's NAPI thread cannot run, for every engine. With rlgen, by
        default the per-CPU backlog that RPS feeds on the router's CPU
        (``net.core.netdev_max_backlog``), which every engine behind RPS (the kernel and
        the user-space engines' sockets alike) is fed from."""
        if tb.generator == "xdp":
            return VETH_RING_SIZE
        return netdev_max_backlog()

    def forwarded(self, tb: Testbed) -> int | None:
        """The engine's own count of forwarded packets (None if it keeps none)."""
        return None

    def drop_counters(self, tb: Testbed) -> dict[str, int]:
        """The engine's own counters of packets it dropped, by name, where it keeps them
        cheaply ({} if not): read before and after each trial by :mod:`routerlab.measuring.drops`."""
        return {}

    def costs(self, tb: Testbed) -> dict[str, float]:
        """The router's CPU time per packet, ns, by stage of the engine, as the engine
        itself measures it, since the last call ({} where it does not): read around every
        trial of a sweep into ``engine_costs.csv``. For an engine that polls (VPP) the
        CPU's busy share says nothing of its cost; its own clocks do."""
        return {}

    def stop(self, tb: Testbed):
        """Undo what :meth:`start` did that the namespaces' removal would not."""

    def stop_process(self, timeout: float = 5.0):
        """Stop the engine's own process (``self._proc``: SIGTERM, then SIGKILL after
        ``timeout`` seconds) and close its log (``self._log``); safe to call twice."""
        p = getattr(self, "_proc", None)
        if p is not None:
            processes.stop(p, timeout)
        log = getattr(self, "_log", None)
        if log is not None and not log.closed:
            log.close()


#: Where a host that is itself a network namespace of a larger machine (the SSH testbed's
#: test hosts) is told the machine's backlog, which only the machine's own namespace shows.
BACKLOG_VAR = "ROUTERLAB_NETDEV_MAX_BACKLOG"


def netdev_max_backlog() -> int:
    """The per-CPU backlog's length, packets (``net.core.netdev_max_backlog``: the
    machine's, one for every namespace). A namespace other than the machine's own does not
    show it; there :data:`BACKLOG_VAR` must say it."""
    try:
        return int(Path("/proc/sys/net/core/netdev_max_backlog").read_text())
    except FileNotFoundError:
        value = os.environ.get(BACKLOG_VAR, "")
        if not value.isdigit():
            raise ParameterError(BACKLOG_VAR, "this network namespace does not show net.core.netdev_max_backlog "
                                              "(the machine's own does): set it to the machine's value") from None
        return int(value)


def router_names(tb: Testbed) -> dict[str, str]:
    """The router's interfaces and its neighbours' MAC addresses on ``tb``, and the links'
    MTU, by the names Click configurations take as defines and the ``exec`` engine's
    commands as variables: IN_DEV, OUT_DEV, IN_MAC, OUT_MAC, PREV_MAC, NEXT_MAC, MTU."""
    return {"IN_DEV": tb.dut_in, "OUT_DEV": tb.dut_out,
            "IN_MAC": tb.mac(tb.ns_dut, tb.dut_in), "OUT_MAC": tb.mac(tb.ns_dut, tb.dut_out),
            "PREV_MAC": tb.mac(tb.ns_tg, tb.tg_if), "NEXT_MAC": tb.mac(tb.ns_sink, tb.sink_if),
            "MTU": str(tb.mtu)}


#: Every engine by name; each engine's module adds its classes with :func:`register`.
ENGINES: dict[str, type[Engine]] = {}


def register(cls: type[Engine]) -> type[Engine]:
    """Add an engine class to the registry (a class decorator)."""
    ENGINES[cls.name] = cls
    return cls



def find_binary(engine: str, binary: str) -> str:
    """An engine's binary: the variable naming a build of one's own
    (:data:`builds.OVERRIDES`, e.g. ``$ROUTERLAB_CLICK``) if set, else the build
    ``routerlab engines install`` made, else PATH.

    ``engine`` is the installable engine the binary belongs to (click, fastclick, bmv2,
    bmv2-log, p4c). FastClick is never looked up on PATH, where ``click`` is Click (its
    variable is ROUTERLAB_FASTCLICK), nor bmv2's logging build."""
    var = builds.OVERRIDES[engine][binary]
    path = os.environ.get(var)
    if path:
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise EngineNotFound(f"{engine}: {var}={path} is not an executable file")
        return path
    found = builds.installed_binary(engine, binary)
    if found:
        return str(found)
    # FastClick's click is not Click's; a simple_switch on PATH may lack the logging macros
    if engine not in ("fastclick", "bmv2-log"):
        on_path = shutil.which(binary)
        if on_path:
            return on_path
    raise EngineNotFound(f"{engine}: not installed (run: routerlab engines install {engine}); "
                         f"or name your own {binary} with {var}")
