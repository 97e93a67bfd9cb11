"""FD.io VPP as a routerlab engine: the router FD.io CSIT measures, on the testbed's veths.

VPP runs in the router's namespace with a ``startup.conf`` routerlab writes
(:func:`startup_conf`): its main core on the router's CPU, no DPDK and no hugepages, only
the plug-ins it uses. Its interfaces take the testbed's veths through **af_xdp** (an XDP
program on each veth redirects every frame into VPP's AF_XDP socket: the kernel never sees
them, the fair input next to the XDP router), or through **af_packet**
(``vpp-af-packet``: a packet socket, VPP's slowest input). The interfaces, the route the
traffic takes and a scenario's firewall (the ACL plug-in) are CLI commands run one by one
(:func:`setup_commands`), so that an error names the command; a scenario's fill routes
are one CLI file VPP executes at once (:func:`fill_routes`), so that a table of 900,000
routes loads in seconds, not in the minutes one API call a route would take.

VPP's main thread polls its inputs: while it runs, the router's CPU is busy all the time,
whatever the load (the environment record says so). Its own counters, read around every
trial, explain what it drops: the error counters of its graph nodes (``show errors``),
its interfaces' rx-miss and tx-error, and the frames its input veth's XDP program could
not redirect into its socket (the veth's own drop count).
The time each graph node spends per packet, from VPP's own clocks (``show runtime``), is
recorded with every trial of a sweep (:meth:`VppEngine.costs`, ``engine_costs.csv``).

memif, VPP's shared-memory interface, connects VPP to another process, not to a network
device: the testbed's links are veths, so there is no memif input here (the build has the
plug-in, for a user's own set-ups, and the testbed leaves it off).
"""

from __future__ import annotations

import ipaddress
import re
import shutil
import subprocess
import time
from pathlib import Path

from routerlab.errors import EngineNotFound, ParameterError, RouterlabError
from routerlab.analysis.scenarios import Scenario
from routerlab.testbed.interface import DEST_NET, FILL_NET, SINK_NET, STATE_DIR, TG_NET, Testbed, \
    VETH_RING_SIZE
from routerlab.testbed.shell import nsexec, veth_queue_counters
from routerlab.engines import builds
from routerlab.engines.base import Engine, find_binary, register, router_names
from routerlab.engines.kernel import keep_kernel_out
from routerlab.engines.rules import Rule, firewall

#: The plug-ins routerlab's VPP loads (every other one stays off): the inputs, the
#: firewall and ping (for a person checking the router by hand).
PLUGINS = ("af_xdp_plugin.so", "af_packet_plugin.so", "acl_plugin.so", "ping_plugin.so")
#: Slots of each AF_XDP ring VPP makes (its default is 512): the same as DPDK's af_xdp
#: driver, so that VPP and fastclick-dpdk queue alike.
AF_XDP_RING = 2048
#: VPP's packet buffers (a count); its main heap and its statistics segment (sizes,
#: reserved: only what is used is memory). A route table of 900,000 routes outgrows the
#: segment's default 32 MB with its counters, and VPP then aborts, out of memory.
BUFFERS = 16384
MAIN_HEAP = "2G"
STATS_SEGMENT = "512M"
#: Seconds VPP may take to answer on its CLI socket after it started.
START_S = 30
#: The names VPP gives the router's two interfaces.
IN, OUT = "in", "out"


def startup_conf(folder: Path, cpu: int, plugin_dir: Path, prefix: str) -> str:
    """The ``startup.conf`` of a VPP in ``folder``: main core ``cpu``, no DPDK, 4 KiB pages
    (no hugepages), its sockets, log and shared memory named after the run (``prefix``),
    only :data:`PLUGINS`."""
    plugins = "\n".join(f"  plugin {p} {{ enable }}" for p in PLUGINS)
    return (f"# startup.conf -- written by routerlab (routerlab.engines.vpp.startup_conf)\n"
            f"unix {{\n  nodaemon\n  cli-listen {folder}/cli.sock\n  runtime-dir {folder}\n"
            f"  log {folder}/vpp.log\n  cli-no-pager\n}}\n"
            f"api-segment {{ prefix {prefix} }}\n"
            f"socksvr {{ socket-name {folder}/api.sock }}\n"
            f"statseg {{ socket-name {folder}/stats.sock page-size 4k size {STATS_SEGMENT} }}\n"
            f"cpu {{ main-core {cpu} }}\n"
            f"memory {{ main-heap-size {MAIN_HEAP} main-heap-page-size 4k }}\n"
            f"buffers {{ buffers-per-numa {BUFFERS} page-size 4k }}\n"
            f"plugins {{\n  path {plugin_dir}\n  plugin default {{ disable }}\n{plugins}\n}}\n")


def acl_rules(rules: list[Rule], policy: str) -> list[str]:
    """A scenario's firewall as ACL plug-in rules (``permit``/``deny`` and matches), in
    order, ending with the policy. The plug-in has no "port not equal": a negated port
    becomes two permit ranges around it, then the policy's deny."""
    out = []
    for r in rules:
        action = "permit" if r.action == "accept" else "deny"
        m = [f"src {r.saddr}" if r.saddr else "src 0.0.0.0/0", f"dst {r.daddr}" if r.daddr else "dst 0.0.0.0/0"]
        if r.proto:
            m.append(f"proto {dict(udp=17, tcp=6)[r.proto]}")
        ranges = [None]
        if r.dport:
            lo, hi = r.dport
            ranges = [(0, lo - 1), (hi + 1, 65535)] if r.dport_negate else [(lo, hi)]
            ranges = [(a, b) for a, b in ranges if a <= b]
        for pr in ranges:
            out.append(" ".join([action, *m] + ([f"dport {pr[0]}-{pr[1]}"] if pr else [])))
    out.append(("permit" if policy == "accept" else "deny") + " src 0.0.0.0/0 dst 0.0.0.0/0")
    return out


def setup_commands(tb: Testbed, sc: Scenario, input: str) -> list[str]:
    """The CLI commands that make VPP the router of ``sc`` on ``tb``: its two interfaces
    on the router's veths (``input``: af_xdp or af_packet) with the veths' own MAC
    addresses and the testbed's addresses, static neighbours as on every engine, the route
    to the destinations and the firewall. The fill routes are :func:`fill_routes`."""
    names = router_names(tb)
    lines = []
    for name, dev, mac in ((IN, tb.dut_in, names["IN_MAC"]), (OUT, tb.dut_out, names["OUT_MAC"])):
        if input == "af_xdp":
            lines.append(f"create interface af_xdp host-if {dev} name {name} num-rx-queues all "
                         f"rx-queue-size {AF_XDP_RING} tx-queue-size {AF_XDP_RING} mac-reuse")
        else:
            lines.append(f"create host-interface name {dev} hw-addr {mac}")
            lines.append(f"set interface name host-{dev} {name}")
    lines += [f"set interface mtu packet {tb.mtu} {IN}", f"set interface mtu packet {tb.mtu} {OUT}",
              f"set interface ip address {IN} {TG_NET}.1/24", f"set interface ip address {OUT} {SINK_NET}.1/24",
              f"set interface state {IN} up", f"set interface state {OUT} up",
              f"set ip neighbor {IN} {TG_NET}.2 {names['PREV_MAC']} static",
              f"set ip neighbor {OUT} {SINK_NET}.2 {names['NEXT_MAC']} static",
              f"ip route add {DEST_NET}.0/24 via {SINK_NET}.2 {OUT}"]
    rules, policy = firewall(sc)
    if rules:
        lines.append("set acl-plugin acl " + ", ".join(acl_rules(rules, policy)) + " tag routerlab")
        lines.append(f"set acl-plugin interface {IN} input acl 0")
    return lines


def fill_routes(sc: Scenario) -> str:
    """The CLI file of ``sc``'s ``routes - 1`` fill routes, which VPP executes at once."""
    base = int(FILL_NET.network_address)
    return "".join(f"ip route add {ipaddress.IPv4Address(base + i)}/32 via {SINK_NET}.2 {OUT}\n"
                   for i in range(sc.routes - 1))


def parse_interfaces(text: str) -> dict[str, dict[str, int]]:
    """``show interface``: interface -> counter -> packets (rx packets, tx packets, drops,
    rx-miss, tx-error, ...; bytes left out)."""
    out: dict[str, dict[str, int]] = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"^(\S+)\s+\d+\s+(up|down)\s", line)
        if m:
            current = out.setdefault(m.group(1), {})
            line = line[m.end():]
        c = re.search(r"([a-z][\w-]*(?: [a-z][\w-]*)?)\s+(\d+)\s*$", line)
        if current is not None and c and "bytes" not in c.group(1):
            current[c.group(1)] = int(c.group(2))
    return out


def parse_errors(text: str) -> dict[tuple[str, str, str], int]:
    """``show errors``: (node, reason, severity) -> count."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^\s*(\d+)\s+(\S+)\s+(.+?)\s+(error|warn|info|unknown)\s*$", line)
        if m:
            key = (m.group(2), m.group(3), m.group(4))
            out[key] = out.get(key, 0) + int(m.group(1))
    return out


def parse_runtime(text: str) -> dict[str, tuple[int, float, bool]]:
    """``show runtime``: graph node -> (packets, clocks per packet, polling) for the nodes
    that handled packets. A polling input node's clocks include its empty polls."""
    out = {}
    for line in text.splitlines():
        m = re.match(r'^\s*(\S+)\s+("[^"]*"|\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.e+-]+)\s+([\d.e+-]+)\s*$', line)
        if m and int(m.group(4)) > 0:
            out[m.group(1)] = (int(m.group(4)), float(m.group(6)), m.group(2) == "polling")
    return out


def parse_frequency(text: str) -> float:
    """``show cpu``: the clock VPP counts in (its base frequency), Hz."""
    m = re.search(r"Base frequency:\s*([\d.]+)\s*GHz", text)
    if not m:
        raise RouterlabError(f"vpp: `show cpu` gives no base frequency: {text.strip()[-300:]}")
    return float(m.group(1)) * 1e9


#: Error counters of VPP's nodes that count no dropped packet: af_xdp's transmit and
#: receive count each time they had to wake the kernel (a system call), and each such
#: call that failed, after which the packets stay in the ring for the next one;
#: af_packet counts the blocks of its ring it took, full or timed out.
NOT_DROPS = ("syscall required", "syscall failures", "timed out block", "total received block")


#: What a configuration command prints when it succeeded: the index of a new ACL, the
#: name of a new af_packet or af_xdp interface.
QUIET = re.compile(r"^(ACL index:\s*\d+|host-\S+|in|out)\s*$", re.M)


@register
class VppEngine(Engine):
    """VPP with af_xdp inputs (see the module's text)."""

    name = "vpp"
    features = {"routes", "firewall", "drop"}
    where = builds.how_to_get("vpp")
    #: How VPP takes the veths: af_xdp or af_packet.
    input = "af_xdp"
    #: Whether the kernel gets, and drops, its own copy of every packet VPP takes (an
    #: AF_PACKET socket is a tap: :func:`routerlab.engines.kernel.keep_kernel_out`); with
    #: af_xdp the kernel never sees them.
    kernel_copy_dropped = False

    def binary(self) -> str:
        return find_binary("vpp", "vpp")

    def vppctl(self) -> str:
        return find_binary("vpp", "vppctl")

    def check(self, sc=None):
        self.binary()
        self.vppctl()
        self.plugin_dir()
        super().check(sc)

    def plugin_dir(self) -> Path:
        """The folder of VPP's plug-ins, beside its binary; each of :data:`PLUGINS` must be
        there."""
        # bin/vpp's prefix (an install from a bundle may run it through a wrapper there)
        prefix = Path(self.binary()).resolve().parent.parent
        found = sorted(prefix.glob("lib*/vpp_plugins")) + sorted(prefix.glob("lib*/*/vpp_plugins"))
        if not found:
            raise EngineNotFound(f"vpp: no vpp_plugins folder under {prefix}")
        missing = [p for p in PLUGINS if not (found[0] / p).is_file()]
        if missing:
            raise EngineNotFound(f"vpp: plug-in(s) {', '.join(missing)} missing from {found[0]}: "
                                 "this VPP was built without them (routerlab engines install vpp builds them)")
        return found[0]

    def version(self):
        """The build, by upstream repository and commit (or the path of one's own)."""
        return builds.describe("vpp", self.binary())

    def cli(self, *command: str, timeout: float = 60) -> str:
        """Run one VPP CLI command on the running router; its output. A command VPP
        refuses raises, with VPP's words."""
        try:
            p = subprocess.run([self.vppctl(), "-s", str(self._folder / "cli.sock"), *command],
                               capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RouterlabError(f"vpp: `{' '.join(command)}` got no answer within {timeout:.0f} s: VPP's main "
                                 "thread is stuck") from None
        text = p.stdout + p.stderr
        if p.returncode != 0 or re.search(r"^unknown input", text, re.M):
            raise RouterlabError(f"vpp: `{' '.join(command)}` failed: {text.strip()[-500:]}")
        return p.stdout

    def configure(self, command: str, timeout: float = 60):
        """Run one CLI command that changes VPP's configuration; these print nothing
        unless VPP refused them, and then its words are the error (but the index the ACL
        plug-in gives a new list, :data:`QUIET`)."""
        out = QUIET.sub("", self.cli(*command.split(), timeout=timeout)).strip()
        if out:
            raise RouterlabError(f"vpp: `{command}` failed: {' '.join(out.split())[-500:]}")

    def _fail(self, what: str) -> RouterlabError:
        """The error for a VPP that stopped or did not answer: ``what``, and the line of its
        output or log that says why (the run's folder goes when the engine stops)."""
        lines = []
        for f in (self._folder / "vpp.out", self._folder / "vpp.log"):
            if f.is_file():
                lines += [ln.strip() for ln in f.read_text(errors="replace").splitlines() if ln.strip()]
        why = next((ln for ln in reversed(lines) if re.search(r"error|fail|unknown|invalid|cannot|not found", ln, re.I)),
                   lines[-1] if lines else "no output")
        why = re.sub(r"^vpp\[\d+\]: ", "", why)
        return RouterlabError(f"vpp: {what}: {why}")

    def start(self, tb: Testbed, sc: Scenario) -> dict:
        """Start VPP as the router of ``sc`` on ``tb``; one that does not start or refuses
        its configuration is stopped, its run folder removed, and the error names why."""
        self.check(sc)
        try:
            return self._start(tb, sc)
        except BaseException:
            self.stop(tb)
            raise

    def _start(self, tb: Testbed, sc: Scenario) -> dict:
        keep_kernel_out(tb)
        self._veth = "driver: veth" in nsexec(tb.ns_dut, "ethtool", "-i", tb.dut_in)
        self._folder = folder = STATE_DIR / f"{tb.prefix}-{self.name}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        (folder / "startup.conf").write_text(startup_conf(folder, tb.router_cpu, self.plugin_dir(), tb.prefix))
        self._log = open(folder / "vpp.out", "w")
        self._proc = tb.spawn(tb.ns_dut, self.binary(), "-c", str(folder / "startup.conf"), cpu=tb.router_cpu,
                              stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_S
        while True:
            if self._proc.poll() is not None:
                raise self._fail(f"exited ({self._proc.returncode}) while starting")
            try:
                self.cli("show", "version", timeout=5)
                break
            except RouterlabError:
                if time.monotonic() > deadline:
                    raise self._fail(f"did not answer on its CLI socket within {START_S} s") from None
                time.sleep(0.2)
        commands = setup_commands(tb, sc, self.input)
        (folder / "setup.cli").write_text(f"# written by routerlab (routerlab.engines.vpp): {sc.describe()}\n"
                                          + "\n".join(commands) + "\n")
        for command in commands:  # one by one: VPP's error then names the command it refused
            if self._proc.poll() is not None:
                raise self._fail(f"exited before `{command}`")
            self.configure(command)
        t0 = time.perf_counter()
        if sc.routes > 1:
            (folder / "routes.cli").write_text(fill_routes(sc))
            self.configure(f"exec {folder / 'routes.cli'}", timeout=120 + sc.routes / 5_000)
        load_s = time.perf_counter() - t0
        if self._proc.poll() is not None:
            raise self._fail("exited while being configured")
        ifs = parse_interfaces(self.cli("show", "interface"))
        for name, dev in ((IN, tb.dut_in), (OUT, tb.dut_out)):
            if name not in ifs:
                raise RouterlabError(f"vpp: could not take {dev} ({self.input}): it has only "
                                     f"{', '.join(ifs)}")
        self._hz = parse_frequency(self.cli("show", "cpu"))
        self.cli("clear", "runtime")
        return {"vpp_input": self.input, "vpp_startup": f"main-core {tb.router_cpu}, no DPDK, 4k pages, "
                f"{BUFFERS} buffers", "vpp_rx_mode": "polling: VPP's main thread keeps the router's CPU 100% busy",
                "routes_load_s": round(load_s, 2),
                **({"af_xdp_ring": AF_XDP_RING} if self.input == "af_xdp" else {})}

    def queue_packets(self, tb):
        """With af_xdp, the AF_XDP socket's receive ring (:data:`AF_XDP_RING`), unless the
        XDP generator's veth ring on the router's CPU fills first; with af_packet, as for
        every engine behind a socket (:meth:`Engine.queue_packets`)."""
        if self.input == "af_xdp" and tb.generator != "xdp":
            return AF_XDP_RING
        if self.input == "af_xdp":
            return VETH_RING_SIZE
        return super().queue_packets(tb)

    def counters(self) -> dict[str, dict[str, int]]:
        """VPP's interface counters: interface -> counter -> packets."""
        return parse_interfaces(self.cli("show", "interface"))

    def forwarded(self, tb):
        return self.counters().get(OUT, {}).get("tx packets", 0)

    def drop_counters(self, tb):
        """What VPP dropped since it started, by name: every graph node's error counter of
        severity error (``node:reason``) but :data:`NOT_DROPS` and the firewall's (which
        counts what it checked, permitted and denied, all as errors: its denials are a
        scenario's design, and one of a packet meant to pass shows as loss unexplained),
        its interfaces' rx-miss and tx-error, and, where its input is a veth, the frames the
        veth could not redirect into its socket (``in:redirect refused``)."""
        out = {}
        for (node, reason, severity), n in parse_errors(self.cli("show", "errors")).items():
            if severity == "error" and reason not in NOT_DROPS and not node.startswith("acl-plugin"):
                out[f"{node}:{reason}"] = n
        for name, c in self.counters().items():
            for k in ("rx-miss", "tx-error"):
                if c.get(k):
                    out[f"{name}:{k}"] = c[k]
        if self.input == "af_xdp" and self._veth:
            # frames the input veth's XDP program could not redirect into VPP's socket (its
            # ring full): freed as XDP buffers, never as sk_buffs (veth consumes an sk_buff
            # before it redirects its data), so the kernel's drop tracer never sees them
            out["in:redirect refused"] = veth_queue_counters(tb.ns_dut, tb.dut_in).get("drops", 0)
        return out

    def runtime(self) -> dict[str, tuple[int, float, bool]]:
        """What each graph node that handled packets did since the last call (``show
        runtime``, then cleared): packets, clocks per packet, polling."""
        out = parse_runtime(self.cli("show", "runtime"))
        self.cli("clear", "runtime")
        return out

    def costs(self, tb):
        """VPP's time per packet, ns, by graph node since the last call, from its own
        clocks (``show runtime``): each node that handled packets, and ``graph`` their sum
        over the packets forwarded, the polling input left out; the input node, whose
        clocks include its empty polls at any load below VPP's limit, is named so."""
        nodes = self.runtime()
        ns = 1e9 / self._hz
        out = {(f"{n} (with empty polls)" if polling else n): c * ns for n, (_, c, polling) in nodes.items()}
        forwarded = nodes.get("ip4-rewrite", (0, 0.0, False))[0]
        if forwarded:
            out["graph"] = sum(p * c for p, c, polling in nodes.values() if not polling) * ns / forwarded
        return out

    def stop(self, tb):
        if self.input == "af_xdp" and getattr(self, "_proc", None) is not None and self._proc.poll() is None:
            # VPP takes its XDP programs off the devices only when it deletes the interfaces,
            # not when it exits: a host's own network devices would keep redirecting into a
            # socket nobody reads
            for name in (IN, OUT):
                try:
                    self.cli("delete", "interface", "af_xdp", name, timeout=10)
                except RouterlabError:
                    pass  # not made, or VPP stuck: the namespace's removal takes the program
        self.stop_process()
        shutil.rmtree(STATE_DIR / f"{tb.prefix}-{self.name}", ignore_errors=True)
        # VPP removes its API segments when it exits; one that had to be killed leaves them
        for f in Path("/dev/shm").glob(f"{tb.prefix}-*"):
            f.unlink(missing_ok=True)


@register
class VppAfPacketEngine(VppEngine):
    """VPP with af_packet inputs: a packet socket on each veth, VPP's slowest input."""

    name = "vpp-af-packet"
    input = "af_packet"
    kernel_copy_dropped = True
