"""bmv2's simple_switch as a routerlab engine, running the programs of ``p4/``.

The switch runs in the DUT namespace with the two testbed links as ports 0 (towards the
generator) and 1 (towards the sink), pinned to the router's CPU. Its control plane is one
of two (:attr:`Bmv2.control`):

- ``p4runtime`` (the default where ``simple_switch_grpc`` is installed): the switch is
  ``simple_switch_grpc`` started without a program; routerlab sets the pipeline, writes
  the table entries and reads the counters over P4Runtime
  (:mod:`routerlab.engines.p4runtime`), on a Unix socket of the run's own folder, so that
  no TCP port can be taken already;
- ``thrift``: ``simple_switch`` with the program, entries and counters through
  ``simple_switch_CLI`` (the Thrift runtime CLI).

Registers are written through the Thrift CLI either way (bmv2's P4Runtime server does
not write registers); ``simple_switch_grpc`` serves Thrift too. As for Click, kernel forwarding is
off in the DUT and the DUT's ingress drops what the switch captured, so the kernel never
processes the same packets.

bmv2 is a reference model, not a fast path: expect tens of kpps.
"""

from __future__ import annotations

import functools
import logging
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from routerlab import defaults
from routerlab.errors import EngineNotFound, NotAnswering, NotStarted, RouterlabError
from routerlab.analysis.scenarios import Scenario
from routerlab.testbed.interface import STATE_DIR, Testbed
from routerlab.testbed.shell import nsexec
from routerlab.engines import builds, p4
from routerlab.engines.capture import CaptureDrops
from routerlab.engines.base import Engine, find_binary, register
from routerlab.engines.kernel import keep_kernel_out

THRIFT_PORT = 9090  # each testbed has its own namespace, so one port serves all

#: The control planes :attr:`Bmv2.control` can name.
CONTROLS = ("p4runtime", "thrift")

#: The Thrift runtime CLI loads entries one command at a time: 100k routes took 52 s on
#: 2026-11-22 and 14.5 s on 2026-11-23 on the same development machine, where 900k would
#: take 2 to 8 minutes. With it, larger tables are capped at this size; the environment
#: record says so, with the load time measured in that run. P4Runtime loads them all.
ROUTE_LIMIT = 100_000


@functools.cache
def cli_python() -> str:
    """A Python that can run simple_switch_CLI (it needs the ``thrift`` module)."""
    for py in (sys.executable, "/usr/bin/python3"):
        if Path(py).is_file() and subprocess.run([py, "-c", "import thrift"], capture_output=True).returncode == 0:
            return py
    raise EngineNotFound("bmv2: simple_switch_CLI needs the Python thrift module (Debian package python3-thrift)")


#: The counters of every program in ``p4/`` (p4/include/common.p4 and each program's
#: ingress) that together account for a packet between simple_switch's ports.
QUEUE_COUNTERS = ("RlIngress.rx_port", "RlIngress.dropped", "RlEgress.tx_port")


def queue_reads(pipe: p4.Pipeline, ports: list[int]) -> list[tuple[str, int, int]]:
    """The counter reads ``(counter, index, sign)`` whose signed sum is the packets simple_switch's egress queues
    dropped: received on ``ports`` (``rx_port``, at the start of ingress) minus dropped by the
    program (``dropped``, every cell: each ``mark_to_drop`` in ``p4/`` counts its reason)
    minus sent (``tx_port``, in egress). A packet that ingress sends to a port whose egress
    queue is full (64 packets) is dropped there and counted nowhere: ``SimpleSwitch::enqueue``
    ignores the queue's refusal (bmv2's targets/simple_switch/simple_switch.cpp and
    include/bm/bm_sim/queueing.h). Measured on 2026-11-25 at the generator's full rate, 3
    trials: this sum equalled the loss no other counter explained, to the packet (849-1,339).
    A packet still inside the switch when the counters are read counts here too, so the
    reads come after the trial's drain. Empty (not read) for a program without these counters.
    """
    if any(name not in pipe.counters for name in QUEUE_COUNTERS):
        return []
    rx, dropped, tx = QUEUE_COUNTERS
    return ([(rx, p, 1) for p in ports] + [(dropped, i, -1) for i in range(pipe.counters[dropped])]
            + [(tx, p, -1) for p in ports])


@register
class Bmv2(Engine):
    name = "bmv2"
    features = {"routes", "firewall", "drop", "gre"}
    #: The control planes it takes (:attr:`control`).
    controls = CONTROLS
    where = builds.how_to_get("bmv2", "p4c")
    #: Run bmv2's logging build (``bmv2-log``) logging to a file: every packet's parser
    #: states, tables and actions (:meth:`packet_log`). For the course's checks;
    #: measurements run the build without logging macros. Without the logging build
    #: (installed, or ``$ROUTERLAB_SIMPLE_SWITCH_LOG``) it runs bmv2's, whose log then
    #: has little but errors, and says so once.
    log_packets = False
    #: ``p4runtime`` or ``thrift`` (see the module's docstring); None: P4Runtime where
    #: ``simple_switch_grpc`` is installed, else Thrift.
    control: str | None = None

    def control_plane(self) -> str:
        """The control plane this run uses: :attr:`control`, checked to be there, or the
        default."""
        if self.control is not None and self.control not in CONTROLS:
            raise RouterlabError(f"bmv2: unknown control plane {self.control!r}; known: {', '.join(CONTROLS)}")
        if self.control == "thrift":
            return "thrift"
        try:
            self._binary("simple_switch_grpc")
        except EngineNotFound as e:
            if self.control == "p4runtime":
                raise EngineNotFound(f"bmv2: --control p4runtime needs simple_switch_grpc: {e}") from None
            return "thrift"
        return "p4runtime"

    def _build(self) -> str:
        """The installable engine whose binaries run: ``bmv2-log`` with
        :attr:`log_packets` where it can be found, else ``bmv2``."""
        if self.log_packets:
            try:
                find_binary("bmv2-log", "simple_switch")
                return "bmv2-log"
            except EngineNotFound as e:
                if not getattr(Bmv2, "_said_no_log_build", False):
                    Bmv2._said_no_log_build = True
                    logging.getLogger(__name__).warning(f"routerlab: {e}; running bmv2 without its logging macros, "
                                                        "whose packet log has little in it")
        return "bmv2"

    def _binary(self, binary: str) -> str:
        return find_binary(self._build(), binary)

    def switch(self) -> str:
        """The switch program of this run's control plane (:meth:`control_plane`)."""
        return self._binary("simple_switch_grpc" if self.control_plane() == "p4runtime" else "simple_switch")

    def packet_log(self) -> str:
        """simple_switch's log so far, with :attr:`log_packets`: every packet's parser
        states, tables and actions, as ``--log-console`` prints them; "" otherwise. bmv2
        keeps at most its default rotation of the file (5 MB, 3 backups), so a long run's
        start is gone."""
        path = getattr(self, "_dir", None)
        if not path:
            return ""
        files = sorted(path.glob("packets.log*"), key=lambda f: f.stat().st_mtime)
        return "".join(f.read_text(errors="replace") for f in files)

    def cli(self) -> str:
        return self._binary("simple_switch_CLI")

    def check(self, sc=None):
        self.switch()
        self.cli()
        p4.p4c()
        p4.p4_dir()
        cli_python()
        if self.control_plane() == "p4runtime":
            try:
                import finsy  # noqa: F401
            except ImportError:
                raise EngineNotFound("bmv2: P4Runtime needs the Python package finsy (pip install finsy)") from None
        super().check(sc)

    def version(self):
        """bmv2 (or its logging build), its control plane and p4c, by upstream repository
        and commit (or the paths of one's own)."""
        which = self._build()
        return (f"{which} {builds.describe(which, self.switch())}, control {self.control_plane()}; "
                f"p4c {builds.describe('p4c', p4.p4c())}")

    # running a program ------------------------------------------------------------------
    def run(self, tb: Testbed, program: str | Path, entries: list[dict], solution: bool = True,
            source: str = "entries", *, ns: str | None = None, ports: dict[int, str] | None = None,
            cpu: int | None = -1, refused: list[str] | None = None) -> dict:
        """Compile ``program``, start the switch, write ``entries`` over its control plane
        (:meth:`control_plane`); with ``refused`` (a list), an entry that does not fit the
        program is added there and left out (:func:`routerlab.engines.p4.parse_entries`)
        instead of stopping the run. Every entry is checked before the switch starts.

        By default on the testbed's DUT with ports 0 = towards the generator and 1 =
        towards the sink, pinned to the router's CPU; ``ns``, ``ports`` (port -> interface)
        and ``cpu`` (None: not pinned) place it elsewhere, e.g. as one router of the
        fast-reroute topology.
        """
        json_path = p4.compile_program(program, solution)
        self._pipe = pipe = p4.Pipeline(json_path)
        checked = p4.parse_entries(entries, pipe, source, refused)  # all of them before the first write
        control = self.control_plane()
        ns = ns or tb.ns_dut
        ports = ports or {0: tb.dut_in, 1: tb.dut_out}
        for dev in ports.values():
            # a link with an MTU below 1280 has no IPv6 at all (and no such sysctl)
            nsexec(ns, "sysctl", "-qw", f"net.ipv6.conf.{dev}.disable_ipv6=1", check=False)
        # simple_switch captures before the ingress hook
        keep_kernel_out(tb, ns, list(ports.values()))
        self._dir = STATE_DIR / f"{tb.prefix}-bmv2"
        self._dir.mkdir(parents=True, exist_ok=True)
        self._ns = ns
        log_path = self._dir / "simple_switch.log"
        self._log = open(log_path, "w")
        ifaces = [a for p, dev in sorted(ports.items()) for a in ("-i", f"{p}@{dev}")]
        # a socket file of the run's own folder: no port to find free, none left taken
        grpc = self._dir / "p4runtime.sock"
        grpc.unlink(missing_ok=True)
        # the notification socket is a file: one per run, or two runs would share it
        self._proc = tb.spawn(ns, self.switch(), *ifaces,
                              "--thrift-port", str(THRIFT_PORT), "--device-id", "0",
                              "--notifications-addr", f"ipc://{self._dir}/notifications.ipc",
                              # flushed at every message, so it can be read while the switch runs
                              *(["--log-file", str(self._dir / "packets.log"), "--log-flush"]
                                if self.log_packets else []),
                              *(["--no-p4", "--", "--grpc-server-addr", f"unix:{grpc}"] if control == "p4runtime"
                                else [str(json_path)]),
                              cpu=tb.router_cpu if cpu == -1 else cpu, stdout=self._log, stderr=subprocess.STDOUT)
        self._queue_reads = queue_reads(pipe, sorted(ports))
        if control == "p4runtime":
            from routerlab.engines.p4runtime import Session

            try:
                self._p4rt = Session(f"unix:{grpc}", p4.p4info_of(json_path), json_path, log=log_path,
                                     timeout=defaults.BMV2_ANSWER_TIMEOUT_S, alive=lambda: self._proc.poll() is None)
            except NotAnswering:
                self._exited(log_path)
                raise
            t0 = time.perf_counter()
            self._p4rt.write(checked, source)
        else:
            self._wait_for_thrift(log_path)
            t0 = time.perf_counter()
            self.cli_run([p4.cli_command(e) for e in checked], refusal=NotStarted)  # the program does not take it
        src = p4.source(program, solution).resolve()
        try:
            src = src.relative_to(p4.p4_dir().resolve().parent)
        except ValueError:  # a student's file elsewhere
            pass
        return {"p4_program": str(src), "entries": len(checked), "control": control,
                "entries_load_s": round(time.perf_counter() - t0, 2)}

    def write_entries(self, entries: list[dict], source: str = "entries") -> str:
        """Write runtime-JSON ``entries`` into the running program (each checked against its
        P4Info first); return the control plane that wrote them."""
        checked = p4.parse_entries(entries, self._pipe, source)
        if getattr(self, "_p4rt", None):
            self._p4rt.write(checked, source)
            return "P4Runtime"
        self.cli_run([p4.cli_command(e) for e in checked])
        return "Thrift runtime CLI"

    def _exited(self, log_path: Path):
        """Raise if the switch has exited, with the end of its log."""
        if self._proc.poll() is not None:
            raise RouterlabError(f"{Path(self.switch()).name} exited ({self._proc.returncode}); the end of its log "
                                 f"{log_path}:\n" + log_path.read_text()[-500:])

    def _wait_for_thrift(self, log_path: Path):
        deadline = time.monotonic() + defaults.BMV2_ANSWER_TIMEOUT_S
        while True:
            self._exited(log_path)
            out = self.cli_run(["show_ports"], check=False)
            if "Could not connect" not in out and "Error" not in out:
                return
            if time.monotonic() > deadline:
                raise RouterlabError(f"simple_switch did not answer on its Thrift port {THRIFT_PORT} within "
                                     f"{defaults.BMV2_ANSWER_TIMEOUT_S:.0f} s; its log: {log_path}")
            time.sleep(0.2)

    def cli_run(self, commands: list[str], check: bool = True, refusal: type[RouterlabError] = RouterlabError) -> str:
        """Run commands through simple_switch_CLI in the DUT; errors name the command, a
        command the switch refused as a ``refusal``."""
        p = subprocess.run(["ip", "netns", "exec", self._ns, cli_python(), self.cli(),
                            "--thrift-port", str(THRIFT_PORT)],
                           input="\n".join(commands) + "\n", capture_output=True, text=True, timeout=3600)
        out = p.stdout + p.stderr
        if check:
            # the CLI prints one "RuntimeCmd:" prompt per command, errors after it
            for i, chunk in enumerate(out.split("RuntimeCmd:")[1:len(commands) + 1]):
                if re.search(r"^(Error|Invalid)|Exception|error:", chunk.strip(), re.M):
                    raise refusal(f"simple_switch_CLI refused {commands[i]!r}: {chunk.strip()[:300]}")
            if p.returncode:
                raise RouterlabError(f"simple_switch_CLI failed ({p.returncode}): {out[-300:]}")
        return out

    def counter(self, name: str, index: int) -> int:
        """Packets of counter ``name`` (fully qualified) at ``index``."""
        if getattr(self, "_p4rt", None):
            return self._p4rt.counter(name, index)
        out = self.cli_run([f"counter_read {name} {index}"])
        m = re.search(r"packets=(\d+)", out) or re.search(r"(\d+) packets", out)
        if not m:
            raise RouterlabError(f"cannot read counter {name}[{index}]: {out[-200:]}")
        return int(m.group(1))

    def register_write(self, name: str, index: int, value: int):
        """Write a register cell, through the Thrift CLI whatever the control plane
        (bmv2's P4Runtime server does not write registers)."""
        self.cli_run([f"register_write {name} {index} {value}"])

    # the engine interface --------------------------------------------------------------------
    def start(self, tb: Testbed, sc: Scenario) -> dict:
        entries, routes = p4.scenario_entries(sc, None if self.control_plane() == "p4runtime" else ROUTE_LIMIT,
                                              macs=(tb.mac(tb.ns_dut, tb.dut_out), tb.mac(tb.ns_sink, tb.sink_if)))
        facts = self.run(tb, p4.program_for(sc), entries, source=f"scenario {sc.name}")
        facts["routes_loaded"] = routes
        try:
            self._capture = CaptureDrops(self._proc.pid, tb.ns_dut).open()
            facts["capture_drops"] = "on"
        except RouterlabError as e:
            self._capture = None
            facts["capture_drops"] = f"off: {e}"
        facts["egress_queue_drops"] = "on" if self._queue_reads else \
            f"off: the program lacks the counters {', '.join(QUEUE_COUNTERS)}"
        if routes < sc.routes:
            facts["routes_note"] = (f"{routes} of {sc.routes} routes: the Thrift runtime CLI loads entries one at a "
                                    f"time, so tables are capped at {ROUTE_LIMIT} ({facts['entries']} entries took "
                                    f"{facts['entries_load_s']:.1f} s here); P4Runtime (--control p4runtime) "
                                    "loads them all")
        return facts

    def forwarded(self, tb):
        return self.counter("RlEgress.tx_port", 1)

    def drop_counters(self, tb):
        """What simple_switch's capture socket on each link dropped (its ring was full), and
        its egress queues (``egress_queue_drops``, see :func:`queue_reads`)."""
        capture = getattr(self, "_capture", None)
        out = {f"{tb.link_name(iface)}.capture_drops": n for iface, n in capture.read().items()} if capture else {}
        reads = getattr(self, "_queue_reads", None)
        if reads and getattr(self, "_proc", None) is not None and self._proc.poll() is None and \
                getattr(self, "_p4rt", None):
            counts = self._p4rt.counters([(name, i) for name, i, _ in reads])
            out["egress_queue_drops"] = sum(sign * n for (_, _, sign), n in zip(reads, counts))
        elif reads and getattr(self, "_proc", None) is not None and self._proc.poll() is None:
            text = self.cli_run([f"counter_read {name} {i}" for name, i, _ in reads])
            counts = [int(n) for n in re.findall(r"= \(\d+ bytes, (\d+) packets\)", text)]
            if len(counts) != len(reads):
                raise RouterlabError(f"simple_switch_CLI answered {len(counts)} of {len(reads)} counter reads: "
                                     f"{text[-300:]}")
            out["egress_queue_drops"] = sum(sign * n for (_, _, sign), n in zip(reads, counts))
        return out

    def stop(self, tb):
        if getattr(self, "_p4rt", None):
            self._p4rt.close()
            self._p4rt = None
        if getattr(self, "_capture", None):
            self._capture.close()
            self._capture = None
        self.stop_process()
        if getattr(self, "_dir", None):
            shutil.rmtree(self._dir, ignore_errors=True)


