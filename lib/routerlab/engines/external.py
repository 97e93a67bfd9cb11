"""A router routerlab does not build, started by the user's own command: the ``exec``
engine (``routerlab measure --engine exec --start COMMAND``).

The commands run with ``sh -c`` in the router's namespace, the start command pinned to
the router's CPU, each with the testbed's names in its environment (:data:`VARIABLES`).
The start command is the router: it stays in the foreground while the router runs (a
script may start daemons in the background and ``wait``). The router is ready when the
ready command exits 0, or, without one, when a frame sent from the generator reaches the
sink. At the end the stop command runs, the start command's process group is stopped,
and the namespace's removal ends whatever is left in it.

By default the router captures its own packets (AF_PACKET, XDP, DPDK's af_packet): the
kernel's forwarding is off and guarded as for Click (:func:`kernel.keep_kernel_out`).
A router that configures the kernel to forward (FRR, a script of nft or tc rules) says so
with ``kernel_forwarding``: the kernel then forwards, with the scenario's route installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, fields
from pathlib import Path

from routerlab.version import project_dir
from routerlab.defaults import EXEC_READY_TIMEOUT_S
from routerlab.errors import ParameterError, RouterlabError
from routerlab.analysis.scenarios import Scenario
from routerlab.testbed.interface import DEST_NET, SINK_NET, STATE_DIR, TG_NET, Testbed
from routerlab.testbed.shell import nsexec
from routerlab.processes import stop_group
from routerlab.engines.base import Engine, register, router_names
from routerlab.engines.kernel import keep_kernel_out, kernel_forwards, sent_out

#: The variables each command finds in its environment: name -> what it holds.
VARIABLES = {
    "IN_DEV": "the router's interface towards the generator",
    "OUT_DEV": "the router's interface towards the sink",
    "IN_MAC": "IN_DEV's MAC address",
    "OUT_MAC": "OUT_DEV's MAC address",
    "PREV_MAC": "the generator's MAC address (the previous hop)",
    "NEXT_MAC": "the sink's MAC address (the next hop)",
    "IN_ADDR": "IN_DEV's IPv4 address with its prefix length",
    "OUT_ADDR": "OUT_DEV's IPv4 address with its prefix length",
    "PREV_ADDR": "the generator's IPv4 address",
    "NEXT_ADDR": "the sink's IPv4 address, the next hop",
    "DEST_NET": "the prefix the traffic goes to, routed via NEXT_ADDR",
    "MTU": "the links' MTU, bytes",
    "CPU": "the router's CPU (the start command is pinned to it)",
    "RUN_DIR": "an empty folder for the router's files (sockets, databases, logs), removed afterwards",
    "ROUTERS": "routerlab's routers/ folder (its example start scripts, e.g. routers/ovs/)",
}

#: Seconds a ready or stop command may take before it counts as failed.
COMMAND_TIMEOUT_S = 10.0
#: Lines of the router's output quoted when it fails to start.
TAIL_LINES = 5
#: The name of the drops of the router's AF_PACKET sockets among its counters, by
#: interface (``af_packet.in``, ``af_packet.out``, ``af_packet.any`` for one bound to
#: all). A full socket drops a packet by releasing its reference to a shared sk_buff,
#: which the kernel's drop tracepoint never sees, and a router's own counters may not
#: hold them (Open vSwitch's do not). Only a socket's ``sk_drops`` is read (``ss``'s
#: ``skmem`` ``d``): a socket with a ring (libpcap, DPDK's af_packet driver) counts a
#: full ring in its ``tp_drops`` only, which no tool outside it reads.
SOCKET_DROPS = "af_packet."
#: Seconds the start command's processes have between SIGTERM and SIGKILL.
STOP_GRACE_S = 5.0


@dataclass(frozen=True)
class Commands:
    """How to run a router of one's own: each field a shell command (``sh -c``).

    Attributes
    ----------
    start : str
        Starts the router and stays in the foreground while it runs.
    ready : str, optional
        Exits 0 once the router forwards; default: a frame sent through it reaches the sink.
    stop : str, optional
        Run before the start command's processes are stopped (SIGTERM, then SIGKILL).
    counters : str, optional
        Prints the router's own drop counters, one ``name value`` per line (whole
        packets since the start), read before and after each trial.
    version_command : str, optional
        Prints the router's version (its first line goes into the environment record).
    ready_timeout : float
        Seconds the router has to become ready.
    kernel_forwarding : bool
        The router makes the kernel forward (routes, nft, tc, XDP): kernel forwarding
        stays on, with the scenario's route, and nothing is guarded.
    """

    start: str
    ready: str | None = None
    stop: str | None = None
    counters: str | None = None
    version_command: str | None = None
    ready_timeout: float = EXEC_READY_TIMEOUT_S
    kernel_forwarding: bool = False

    def __post_init__(self):
        if not isinstance(self.start, str) or not self.start.strip():
            raise ParameterError("start", "the exec engine needs a start command (--start COMMAND)")
        for f in ("ready", "stop", "counters", "version_command"):
            v = getattr(self, f)
            if v is not None and (not isinstance(v, str) or not v.strip()):
                raise ParameterError(f, "must be a shell command, not empty")
        if not (isinstance(self.ready_timeout, (int, float)) and self.ready_timeout > 0):
            raise ParameterError("ready_timeout", f"must be > 0 seconds, got {self.ready_timeout!r}")
        if self.kernel_forwarding and self.ready is None:
            # the kernel forwards as soon as routerlab turns it on, before the router's own
            # set-up (nft, tc, XDP) is there: a frame getting through proves nothing
            raise ParameterError("ready", "a router that makes the kernel forward needs a ready command "
                                          "(--ready COMMAND, exiting 0 once its set-up is in place)")

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The names of its fields, as options (``ready_timeout``) and campaign keys."""
        return tuple(f.name for f in fields(cls))


def note(command: str) -> str:
    """A command as a JSON string whose ``;`` are escaped (``\\u003b``): lossless, and safe
    in the environment record's notes, which ``; `` separates."""
    return json.dumps(command).replace(";", "\\u003b")


def tail(path: Path, n: int = TAIL_LINES) -> str:
    """The last ``n`` non-empty lines of a log, joined with `` | `` for one line of error."""
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return " | ".join(lines[-n:]) if lines else "(no output)"


@register
class ExecEngine(Engine):
    name = "exec"
    features: set[str] = set()
    where = "a router of your own, started by your command: --engine exec --start COMMAND"
    commands: Commands | None = None

    @property
    def one_machine(self) -> str:
        if self.commands is not None and self.commands.ready is None:
            return ("without --ready its readiness probe sends a frame from the generator's namespace and waits "
                    "for the sink's count, which are on other hosts: give --ready, a command that exits 0 once "
                    "your router forwards")
        return ""

    def use_commands(self, commands: Commands):
        """Run the router ``commands`` describe. A router that forwards through the kernel
        takes the scenario's routes too; any other is given one route's worth of traffic
        and configured by its own commands, so scenarios with firewalls, tunnels or
        route tables are refused."""
        self.commands = commands
        self.features = {"routes"} if commands.kernel_forwarding else set()
        # what routerlab.measuring.drops counts as design: the kernel's copy of a captured packet
        self.kernel_copy_dropped = not commands.kernel_forwarding
        # loss: what the input socket of a capturing router dropped. A socket on the
        # output side or on every interface only sees copies of what the router sent (the
        # sink sends nothing back), and with kernel forwarding a socket is a tap: context
        self.untraced_counters = () if commands.kernel_forwarding else (SOCKET_DROPS + "in",)

    #: Counters whose drops routerlab.measuring.drops counts as loss (the rest are context).
    untraced_counters: tuple[str, ...] = ()

    def check(self, sc: Scenario | None = None):
        if sc is not None and self.commands is None:
            raise ParameterError("start", "the exec engine needs a start command (--start COMMAND)")
        super().check(sc)

    def version(self) -> str:
        if self.commands is None:
            return "a router of your own (--engine exec --start COMMAND)"
        if self.commands.version_command is None:
            return "not given (--version-command)"
        p = self._run(None, "version_command")
        first = (p.stdout or p.stderr).strip().splitlines()
        if p.returncode != 0 or not first:
            raise RouterlabError(f"exec: the version command exited {p.returncode}: {self.commands.version_command}")
        return first[0]

    def environment(self, tb: Testbed) -> dict[str, str]:
        """The values of :data:`VARIABLES` on the testbed ``tb``."""
        return {
            **router_names(tb),
            "IN_ADDR": f"{TG_NET}.1/24", "OUT_ADDR": f"{SINK_NET}.1/24",
            "PREV_ADDR": f"{TG_NET}.2", "NEXT_ADDR": f"{SINK_NET}.2", "DEST_NET": f"{DEST_NET}.0/24",
            "CPU": str(tb.router_cpu), "RUN_DIR": str(self._folder), "ROUTERS": str(project_dir("routers")),
        }

    def _run(self, tb: Testbed | None, what: str, timeout: float = COMMAND_TIMEOUT_S) -> subprocess.CompletedProcess:
        """Run the command ``what`` (a field of :class:`Commands`) with ``sh -c``: in the
        router's namespace with the testbed's variables once the router is started, else
        (the version command asked for before) where routerlab runs, with ``ROUTERS``."""
        cmd = getattr(self.commands, what)
        env = getattr(self, "_env", None)
        where = ["ip", "netns", "exec", self._ns] if env is not None else []
        env = env if env is not None else {**os.environ, "ROUTERS": str(project_dir("routers"))}
        try:
            return subprocess.run([*where, "sh", "-c", cmd], env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            name = what.replace("_command", "")
            raise RouterlabError(f"exec: the {name} command did not finish within {timeout:g} s: {cmd}") from None

    def start(self, tb: Testbed, sc: Scenario) -> dict:
        try:
            return self._start(tb, sc)
        except BaseException:
            self.stop(tb)  # its stop command, its processes and its folder, whatever failed
            raise

    def _start(self, tb: Testbed, sc: Scenario) -> dict:
        c = self.commands
        facts = kernel_forwards(tb, sc) if c.kernel_forwarding else {}
        if not c.kernel_forwarding:
            keep_kernel_out(tb)
        self._folder = STATE_DIR / f"{tb.prefix}-exec"
        shutil.rmtree(self._folder, ignore_errors=True)
        self._folder.mkdir(parents=True)
        self._ns = tb.ns_dut
        self._env = {**os.environ, **self.environment(tb)}
        self._log_path = self._folder / "router.log"
        self._log = open(self._log_path, "w")
        self._proc = tb.spawn(tb.ns_dut, "sh", "-c", c.start, cpu=tb.router_cpu, env=self._env,
                              stdout=self._log, stderr=subprocess.STDOUT)
        t0 = time.monotonic()
        probe = None if c.ready else _Probe(tb)
        while True:
            rc = self._proc.poll()
            if rc is not None:
                raise RouterlabError(f"exec: the start command exited with status {rc} before the router was "
                                     f"ready; its last output: {tail(self._log_path)}")
            left = c.ready_timeout - (time.monotonic() - t0)
            if self._ready(tb, probe, max(left, 0.1)):
                break
            if time.monotonic() - t0 > c.ready_timeout:
                how = f"the ready command ({c.ready}) never exited 0" if c.ready else \
                    "no frame sent from the generator reached the sink"
                raise RouterlabError(f"exec: the router was not ready after {c.ready_timeout:g} s: {how}; "
                                     f"its last output: {tail(self._log_path)}")
            time.sleep(0.2)
        facts.update({"exec_start": note(c.start), "ready": "command" if c.ready else "probe",
                      "ready_s": round(time.monotonic() - t0, 2),
                      "kernel_forwarding": "on" if c.kernel_forwarding else "off"})
        if c.counters:
            self.drop_counters(tb)  # a broken counters command is refused before any trial
        return facts

    def _ready(self, tb: Testbed, probe: "_Probe | None", left: float) -> bool:
        """Whether the router forwards now: its ready command exits 0 (a command that
        takes longer than the time left counts as not yet), or the probe gets through."""
        if probe is not None:
            return probe.through()
        try:
            return self._run(tb, "ready", timeout=min(COMMAND_TIMEOUT_S, left)).returncode == 0
        except RouterlabError:
            return False

    def _alive(self):
        """Refuse to go on measuring a router whose start command has ended: its trials
        would measure nothing at all."""
        p = getattr(self, "_proc", None)
        if p is not None and p.poll() is not None:
            raise RouterlabError(f"exec: the start command exited with status {p.returncode} during the "
                                 f"measurement; its last output: {tail(self._log_path)}")

    def drop_counters(self, tb: Testbed) -> dict[str, int]:
        """The drops of the router's AF_PACKET sockets (:data:`SOCKET_DROPS`) and the
        counters the counters command prints (``name value`` per line)."""
        self._alive()
        out = socket_drops(tb)
        if self.commands is None or self.commands.counters is None:
            return out
        p = self._run(tb, "counters")
        if p.returncode != 0:
            raise RouterlabError(f"exec: the counters command exited {p.returncode}: "
                                 f"{(p.stderr or p.stdout).strip()[-300:]}")
        for i, line in enumerate(p.stdout.splitlines(), 1):
            if not line.strip():
                continue
            m = re.fullmatch(r"\s*(\S+)\s+(\d+)\s*", line)
            if not m:
                raise RouterlabError(f"exec: the counters command's line {i} is not 'name count': {line!r}")
            if m.group(1).startswith(SOCKET_DROPS):
                raise RouterlabError(f"exec: the counters command's line {i} names {m.group(1)}: names starting "
                                     f"{SOCKET_DROPS} are routerlab's own")
            out[m.group(1)] = int(m.group(2))
        return out

    def forwarded(self, tb: Testbed) -> int:
        """What left the router towards the sink, by the kernel's count of OUT_DEV."""
        self._alive()
        return sent_out(tb)

    def stop(self, tb: Testbed):
        """Run the stop command (a failure or a timeout of it is written to the router's
        log: stopping goes on), stop the start command's processes (SIGTERM, then SIGKILL
        after :data:`STOP_GRACE_S`), close the log and remove the router's folder."""
        p = getattr(self, "_proc", None)
        if self.commands and self.commands.stop and p is not None and p.poll() is None:
            try:
                r = self._run(tb, "stop")
                failed = f"exited {r.returncode}: {(r.stderr or r.stdout).strip()[-300:]}" if r.returncode else ""
            except RouterlabError as e:
                failed = str(e)
            log = getattr(self, "_log", None)
            if failed and log is not None and not log.closed:
                self._log.write(f"routerlab: the stop command {failed}\n")
        if p is not None and p.poll() is None:
            stop_group(p.pid, STOP_GRACE_S)
            p.wait()
        self.stop_process()
        if getattr(self, "_folder", None):
            shutil.rmtree(self._folder, ignore_errors=True)


def socket_drops(tb: Testbed) -> dict[str, int]:
    """What the AF_PACKET sockets in the router's namespace dropped since they were opened
    (``ss``'s ``d`` of ``skmem``: the socket's sk_drops), by the interface each is bound
    to (``in``, ``out``, ``any``): {} when the router opened none."""
    names = {tb.dut_in: "in", tb.dut_out: "out", "*": "any"}
    out: dict[str, int] = {}
    for line in nsexec(tb.ns_dut, "ss", "-0", "-a", "-m", "-n").splitlines()[1:]:
        m = re.match(r"p_\w+\s+\S+\s+\d+\s+\d+\s+(\S+)\s.*skmem:\(.*[(,]d(\d+)[,)]", line)
        if m:
            dev = m.group(1).rsplit(":", 1)[-1]
            key = SOCKET_DROPS + names.get(dev, dev)
            out[key] = out.get(key, 0) + int(m.group(2))
    return out


class _Probe:
    """Whether the router forwards yet: one frame from the generator to DEST_NET per call,
    seen by the sink's counter."""

    def __init__(self, tb: Testbed):
        from routerlab.testbed.traffic import udp_frame

        self.tb = tb
        self.frame = udp_frame(tb.mac(tb.ns_tg, tb.tg_if), tb.mac(tb.ns_dut, tb.dut_in),
                               f"{TG_NET}.2", f"{DEST_NET}.1")

    def through(self) -> bool:
        from routerlab.testbed.probe import send_frames

        before = self.tb.sink_count()
        send_frames(self.tb.ns_tg, self.tb.tg_if, [self.frame], gap=0)
        deadline = time.monotonic() + 0.2
        while time.monotonic() < deadline:
            if self.tb.sink_count() > before:
                return True
            time.sleep(0.02)
        return False
