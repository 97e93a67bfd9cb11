"""Fast reroute with and without ShortCut, over time, on Linux routers in namespaces.

The topology (the Mininet case of the fast-reroute poster), every link with MTU 850::

    src -- R1 -- R2 -- R4 -- dst
           |           |
           +--- R3 ----+

R1 reaches dst through R2 (primary) and has R3 as its alternative. R2 reaches dst through
R4 and holds a pre-installed failover route back through R1 (metric 100). The reverse
path, dst -> src, goes R4 -> R3 -> R1 and never crosses the failing link.

At ``fail_at`` seconds the link R2-R4 fails. R2's kernel drops the primary route at once,
and its failover route sends the packets back to R1, which still routes them to R2. They
loop until their TTL runs out. ``converge_after`` seconds later the "control plane" (a
scripted route update) moves R1 to R3, and plain fast reroute recovers then. ShortCut on
R1 sees a packet for dst arrive from R2, its own next hop towards dst, and switches dst to
R3 at once. It does this in the packet path, in one of two ways:

- ``nft``: a prerouting rule adds the destination to a dynamic set;
- ``ebpf``: a tc program writes it into a BPF map (``lib/routerlab/bpf/shortcut_tc.c``).

Either way, packets for a destination in the set or map get a firewall mark, and a policy
rule routes that mark through R3. The variant ``p4`` runs R1 as bmv2 with
``p4/shortcut``: not done yet.

Per sample (every ``interval`` seconds) we record:
- the transfer's throughput (iperf3, TCP);
- ping's round-trip time;
- the host's CPU busy and softirq fractions from /proc/stat. The routers are namespaces of
  this host, so their forwarding work is the softirq share.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from routerlab.analysis import datasets
from routerlab.analysis.reroute import VARIANTS
from routerlab.errors import EngineNotFound, ParameterError, RouterlabError
from routerlab.progress import Progress, silent, Step
from routerlab.testbed.lifetime import OnThisMachine, check_cpus, check_mtu, check_prefix, new_prefix
from routerlab.testbed.settings import checked_cpu_idle, environment_cpu_idle
from routerlab.testbed.shell import nsexec, sh

MARK = 0x5C
DST_NET = "10.80.9.0/24"
SRC_NET = "10.80.0.0/24"
DST_HOST = "10.80.9.2"
#: Links: (router a, router b, subnet); a gets .1 (or its router number), b the other.
LINKS = [("src", "r1", "10.80.0"), ("r1", "r2", "10.80.12"), ("r1", "r3", "10.80.13"),
         ("r2", "r4", "10.80.24"), ("r3", "r4", "10.80.34"), ("r4", "dst", "10.80.9")]


def _host(node: str, net: str) -> str:
    """A node's address on a link: routers rN get .N, src/dst get .100/.2."""
    if node.startswith("r"):
        return f"{net}.{node[1]}"
    return f"{net}.100" if node == "src" else f"{net}.2"


@dataclass
class RerouteNet(OnThisMachine):
    """Six namespaces (src, r1-r4, dst) joined as in the module docstring; cleaned up like
    every testbed (down, signals, ``routerlab clean``), its idle CPUs polling and the
    machine's other work kept off ``router_cpu`` while up, as on the namespace
    testbed.

    It offers what every testbed does (:class:`routerlab.testbed.interface.Testbed`), so
    that an engine runs in it (bmv2 as R1: :func:`install_p4`, with its own namespace and
    ports); the generator's, router's and sink's names are those its prefix gives, none
    of them made here. Its traffic is iperf3's, which counts for itself.
    """

    mtu: int = 850
    gen_cpu: int = 0
    router_cpu: int = 1
    router_queue: int | None = None
    router_pids: list = field(default_factory=list)
    prefix: str = field(default_factory=new_prefix)
    cpu_idle: str = field(default_factory=environment_cpu_idle)
    routers: tuple = field(default=("r1", "r2", "r3", "r4"), repr=False)
    #: What sends the traffic: iperf3, from src to dst.
    generator: ClassVar[str] = "iperf3"
    direct: ClassVar[bool] = False
    placement: ClassVar[bool] = True

    def __post_init__(self):
        check_prefix(self.prefix)
        check_mtu(self.mtu)
        check_cpus(gen_cpu=self.gen_cpu, router_cpu=self.router_cpu)
        checked_cpu_idle(self.cpu_idle)

    def ns(self, node: str) -> str:
        return f"{self.prefix}-{node}"

    def dev(self, node: str, peer: str) -> str:
        """The interface of ``node`` towards ``peer`` (15-character limit: prefix + 2 + 2)."""
        short = {"src": "s", "dst": "d"}
        return f"{self.prefix}{short.get(node, node[1])}{short.get(peer, peer[1])}"

    @property
    def namespaces(self):
        return [self.ns(n) for n in ("src", "r1", "r2", "r3", "r4", "dst")]

    def up(self):
        self._add_namespaces()
        for a, b, net in LINKS:
            da, db = self.dev(a, b), self.dev(b, a)
            sh("ip", "link", "add", da, "netns", self.ns(a), "mtu", str(self.mtu), "type", "veth",
               "peer", "name", db, "netns", self.ns(b), "mtu", str(self.mtu))
            for node, d in ((a, da), (b, db)):
                sh("ip", "-n", self.ns(node), "addr", "add", f"{_host(node, net)}/24", "dev", d)
                sh("ip", "-n", self.ns(node), "link", "set", d, "up")
        for r in self.routers:
            for k, v in (("net.ipv4.ip_forward", 1), ("net.ipv4.conf.all.rp_filter", 0),
                         ("net.ipv4.conf.default.rp_filter", 0),
                         ("net.ipv4.conf.all.ignore_routes_with_linkdown", 1)):
                nsexec(self.ns(r), "sysctl", "-qw", f"{k}={v}")
        route = lambda node, *args: sh("ip", "-n", self.ns(node), "route", "add", *args)  # noqa: E731
        route("src", "default", "via", "10.80.0.1")
        route("dst", "default", "via", "10.80.9.4")
        route("r1", DST_NET, "via", "10.80.12.2")                       # primary: R2
        route("r2", DST_NET, "via", "10.80.24.4", "metric", "10")       # primary: R4
        route("r2", DST_NET, "via", "10.80.12.1", "metric", "100")      # failover: back to R1
        route("r3", DST_NET, "via", "10.80.34.4")
        route("r4", SRC_NET, "via", "10.80.34.3")                        # reverse path avoids R2-R4
        route("r3", SRC_NET, "via", "10.80.13.1")
        route("r2", SRC_NET, "via", "10.80.12.1")
        # ShortCut's alternative for marked packets (installed for every variant; only
        # ShortCut marks): R1's table 100 goes through R3
        sh("ip", "-n", self.ns("r1"), "route", "add", DST_NET, "via", "10.80.13.3", "table", "100")
        sh("ip", "-n", self.ns("r1"), "rule", "add", "fwmark", str(MARK), "table", "100")

    # -- failure and convergence ---------------------------------------------------------------
    def fail(self):
        """The routing error: the link R2-R4 goes down (R2 loses its primary route)."""
        sh("ip", "-n", self.ns("r2"), "link", "set", self.dev("r2", "r4"), "down")

    def converge(self):
        """The control plane's answer: R1 routes dst through R3."""
        if getattr(self, "bmv2", None) is not None:
            p1, m1 = P4_PORTS["r3"], self.mac_of("r3", "r1")
            # entry 0 is dst's route: R3 becomes its primary; choice starts afresh
            self.bmv2.cli_run([f"table_modify RlIngress.routes RlIngress.set_routes 0 0 {p1} {m1} {p1} {m1}",
                               "register_write RlIngress.choice 0 0"])
            return
        sh("ip", "-n", self.ns("r1"), "route", "replace", DST_NET, "via", "10.80.13.3")

    def mac_of(self, node: str, peer: str) -> str:
        """The MAC address of ``node``'s interface towards ``peer``."""
        return self.mac(self.ns(node), self.dev(node, peer))

    # what every testbed offers -----------------------------------------------------------------
    def sink_count(self) -> int:
        """Refused: no sink counts here (iperf3 counts its own traffic)."""
        raise RouterlabError("the fast-reroute network has no packet sink: iperf3 counts its own traffic")

    def tx_counters(self) -> dict:
        """Refused: no generator link here (iperf3 counts its own traffic)."""
        raise RouterlabError("the fast-reroute network has no generator link: iperf3 counts its own traffic")

    def pin_receive(self):
        """Nothing to pin: the routers' receive work stays where the kernel puts it."""

    def chain(self) -> str:
        """Where the work ran, as an environment record's ``pinning`` says it."""
        return f"routers {', '.join(self.routers)} and iperf3 on any CPU (not pinned)" + self._kept()


# -- ShortCut ---------------------------------------------------------------------------------

def nft_shortcut(net: RerouteNet) -> str:
    """R1's ShortCut in nftables: a packet for dst from R2 (R1's next hop) adds its
    destination to the dynamic set looped; packets to a looped destination are marked."""
    return (
        "table ip shortcut {\n"
        "  set looped { type ipv4_addr; flags dynamic; size 4096; }\n"
        "  chain pre {\n"
        "    type filter hook prerouting priority mangle - 1;\n"
        f"    iifname \"{net.dev('r1', 'r2')}\" ip daddr {DST_NET} add @looped {{ ip daddr }}\n"
        f"    ip daddr @looped meta mark set {MARK}\n"
        "  }\n}\n")


#: bmv2's port numbers on R1.
P4_PORTS = {"src": 0, "r2": 1, "r3": 2}


def install_p4(net: RerouteNet):
    """R1 becomes bmv2 running shortcut.p4: dst with R2 as primary and R3 as backup, src
    straight out of its port. Its neighbours learn R1's MACs statically: bmv2 answers no ARP."""
    from routerlab.engines.bmv2 import Bmv2

    r1 = net.ns("r1")
    # veth leaves TCP checksums to "hardware" (CHECKSUM_PARTIAL); bmv2 captures and resends
    # frames as bytes, so such a checksum would arrive unfinished and the receiver would
    # drop the segment. Senders finish their checksums themselves on every link.
    for a, b, _ in LINKS:
        for node, peer in ((a, b), (b, a)):
            sh("ip", "netns", "exec", net.ns(node), "ethtool", "-K", net.dev(node, peer), "tx", "off")
    macs = {peer: net.mac_of("r1", peer) for peer in P4_PORTS}
    for peer, addr in (("src", "10.80.0.1"), ("r2", "10.80.12.1"), ("r3", "10.80.13.1")):
        sh("ip", "-n", net.ns(peer), "neigh", "replace", addr, "lladdr", macs[peer], "dev", net.dev(peer, "r1"),
           "nud", "permanent")
    m = {peer: net.mac_of(peer, "r1") for peer in P4_PORTS}
    entries = [
        {"table": "RlIngress.routes", "match": {"hdr.ipv4.dstAddr": ["10.80.9.0", 24]},
         "action_name": "RlIngress.set_routes",
         "action_params": {"d": 0, "p1": P4_PORTS["r2"], "m1": m["r2"], "p2": P4_PORTS["r3"], "m2": m["r3"]}},
        {"table": "RlIngress.routes", "match": {"hdr.ipv4.dstAddr": ["10.80.0.0", 24]},
         "action_name": "RlIngress.set_routes",
         "action_params": {"d": 1, "p1": P4_PORTS["src"], "m1": m["src"], "p2": P4_PORTS["src"], "m2": m["src"]}},
    ] + [{"table": "RlIngress.port_mac", "match": {"standard_metadata.egress_spec": port},
          "action_name": "RlIngress.set_src", "action_params": {"src": macs[peer]}} for peer, port in P4_PORTS.items()]
    eng = Bmv2()
    eng.check()
    eng.run(net, "shortcut", entries, source="fast-reroute R1", ns=r1, cpu=None,
            ports={port: net.dev("r1", peer) for peer, port in P4_PORTS.items()})
    net.bmv2 = eng


class Frr:
    """Plain fast reroute: R1 has no ShortCut."""

    def check(self):
        pass

    def install(self, net: RerouteNet):
        pass

    def looped(self, net: RerouteNet) -> int:
        """Destinations ShortCut has switched on R1."""
        return 0

    def flush(self, net: RerouteNet):
        """The control plane has converged: ShortCut's switches are no longer needed."""


class NftShortCut(Frr):
    """ShortCut in nftables (:func:`nft_shortcut`)."""

    def install(self, net):
        nsexec(net.ns("r1"), "nft", "-f", "-", input=nft_shortcut(net))

    def looped(self, net):
        out = json.loads(nsexec(net.ns("r1"), "nft", "-j", "list", "set", "ip", "shortcut", "looped"))
        return sum(len(o["set"].get("elem", [])) for o in out["nftables"] if "set" in o)

    def flush(self, net):
        nsexec(net.ns("r1"), "nft", "flush", "set", "ip", "shortcut", "looped")


class EbpfShortCut(Frr):
    """ShortCut as a tc ingress BPF program on R1's three links (``bpf/shortcut_tc.c``)."""

    def check(self):
        self.object()

    @staticmethod
    def object() -> Path:
        """Compile ``bpf/shortcut_tc.c`` (cached by source hash)."""
        from routerlab import cache

        return cache.bpf_object("shortcut_tc")

    @staticmethod
    def _maps(net) -> dict[str, int]:
        from routerlab.engines.ebpf import map_ids

        out = json.loads(sh("ip", "netns", "exec", net.ns("r1"), "tc", "-j", "filter", "show", "dev",
                            net.dev("r1", "r2"), "ingress"))
        return map_ids(next(f["options"]["prog"]["id"] for f in out if "options" in f and "prog" in f["options"]))

    def install(self, net):
        r1, obj = net.ns("r1"), self.object()
        for peer in ("src", "r2", "r3"):
            dev = net.dev("r1", peer)
            sh("ip", "netns", "exec", r1, "tc", "qdisc", "add", "dev", dev, "clsact")
            sh("ip", "netns", "exec", r1, "tc", "filter", "add", "dev", dev, "ingress", "bpf", "da", "obj", str(obj),
               "sec", "tc")
        # the protected destination and the ifindex of R1's next hop towards it (R2)
        ifindex = json.loads(sh("ip", "-n", r1, "-j", "link", "show", net.dev("r1", "r2")))[0]["ifindex"]
        key = [f"0x{b:02x}" for b in (24).to_bytes(4, "little") + bytes([10, 80, 9, 0])]
        val = [f"0x{b:02x}" for b in ifindex.to_bytes(4, "little")]
        sh("bpftool", "map", "update", "id", str(self._maps(net)["rl_protected"]), "key", *key, "value", *val)

    def looped(self, net):
        return len(json.loads(sh("bpftool", "-j", "map", "dump", "id", str(self._maps(net)["rl_looped"]))))

    def flush(self, net):
        mid = self._maps(net)["rl_looped"]
        for e in json.loads(sh("bpftool", "-j", "map", "dump", "id", str(mid))):
            key = e["key"] if isinstance(e["key"], list) else [f"0x{b:02x}" for b in int(e["key"]).to_bytes(4, "little")]
            sh("bpftool", "map", "delete", "id", str(mid), "key", *key, check=False)


class P4ShortCut(Frr):
    """R1 is bmv2 running ``p4/shortcut`` (:func:`install_p4`); its switches are a counter.
    Its register keeps the switch after convergence (the route no longer loops)."""

    def check(self):
        from routerlab.engines.bmv2 import Bmv2

        Bmv2().check()

    def install(self, net):
        install_p4(net)

    def looped(self, net):
        return net.bmv2.counter("RlIngress.switched", 1)


#: Each variant of the experiment and what R1 runs for it.
SHORTCUTS = {"frr": Frr(), "nft": NftShortCut(), "ebpf": EbpfShortCut(), "p4": P4ShortCut()}


def shortcut(variant: str) -> Frr:
    """The ShortCut implementation of ``variant``; an unknown name is refused with the known ones."""
    if variant not in SHORTCUTS:
        raise ParameterError("variant", f"unknown variant {variant!r}; known: {', '.join(SHORTCUTS)}")
    return SHORTCUTS[variant]


def variants_to_run(variants=None, announce=None) -> tuple[str, ...]:
    """The variants asked for, or (None) every one this machine can run, each left out
    announced with why (``announce``, one line each)."""
    if variants:
        return tuple(variants)
    variants, why = available_variants()
    for v, reason in why.items():
        (announce or (lambda msg: None))(f"variant {v} left out: {reason}")
    return tuple(variants)


def available_variants() -> tuple[list[str], dict[str, str]]:
    """The variants this machine can run, and why the others cannot."""
    ok, why = [], {}
    for v in VARIANTS:
        try:
            shortcut(v).check()
            ok.append(v)
        except RouterlabError as e:
            why[v] = str(e)
    return ok, why


# -- one run -------------------------------------------------------------------------------------

def _cpu() -> tuple[int, int, int]:
    """(total, busy, softirq) jiffies of all CPUs from /proc/stat."""
    f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = f[3] + f[4]
    return sum(f[:8]), sum(f[:8]) - idle, f[6]


def run_once(variant: str, *, duration: float = 30.0, fail_at: float = 10.0, converge_after: float = 5.0,
             interval: float = 0.2) -> tuple[pd.DataFrame, dict]:
    """One run: samples every ``interval`` s (t, throughput_bps, rtt_ms, cpu_busy,
    cpu_softirq) and facts (looped destinations, ping losses). Needs root, iperf3."""
    sc = shortcut(variant)
    for tool, pkg in (("iperf3", "iperf3"), ("ping", "iputils-ping")):
        if not shutil.which(tool):
            raise EngineNotFound(f"{tool} is not installed (Debian package {pkg})")
    if not 0 < fail_at < duration or converge_after < 0:
        raise ParameterError("fail_at", f"must lie inside the run (0 < fail_at < duration = {duration})")
    with RerouteNet() as net:
        sc.install(net)
        srv = net.spawn(net.ns("dst"), "iperf3", "-s", "-1", "-B", DST_HOST, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        cli = net.spawn(net.ns("src"), "iperf3", "-c", DST_HOST, "-t", str(duration), "-i", str(interval), "-J",
                        "--connect-timeout", "3000", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # a count, not a deadline: with -w, ping exits at the first ICMP error (the loop's
        # "time to live exceeded")
        ping = net.spawn(net.ns("src"), "ping", "-D", "-n", "-i", str(interval), "-W", str(max(interval, 0.2)),
                         "-c", str(int(duration / interval)), DST_HOST, stdout=subprocess.PIPE, text=True)
        t0 = time.time()
        cpu, stop = [], threading.Event()

        def sample_cpu():
            last = _cpu()
            while not stop.wait(interval):
                now = _cpu()
                dt = max(now[0] - last[0], 1)
                cpu.append((time.time() - t0, (now[1] - last[1]) / dt, (now[2] - last[2]) / dt))
                last = now

        th = threading.Thread(target=sample_cpu, daemon=True)
        th.start()
        events = {"prefix": net.prefix}
        time.sleep(max(0.0, fail_at - (time.time() - t0)))
        net.fail()
        events["fail_s"] = time.time() - t0
        time.sleep(max(0.0, fail_at + converge_after - (time.time() - t0)))
        looped = sc.looped(net)
        net.converge()
        sc.flush(net)
        events["converge_s"] = time.time() - t0
        events["looped_destinations"] = looped
        out, err = cli.communicate(timeout=duration + 30)
        ping_out = ping.communicate(timeout=duration + 10)[0]
        stop.set()
        th.join()
        try:
            srv.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass  # a server whose client never finished cleanly: leaving the net kills it
        if getattr(net, "bmv2", None) is not None:
            net.bmv2.stop(net)
    if not out.strip():
        raise RouterlabError(f"iperf3 gave no result: {err.strip()[-300:]}")
    rep = json.loads(out)
    if "error" in rep and not rep.get("intervals"):
        raise RouterlabError(f"iperf3: {rep['error']}")
    thr = pd.DataFrame([{"t": iv["sum"]["end"], "throughput_bps": iv["sum"]["bits_per_second"]}
                        for iv in rep["intervals"]])
    # iperf3's clock starts at its connection, a little after t0: shift to ours
    start = rep["start"]["timestamp"]["timesecs"] - t0
    thr["t"] = thr["t"] + max(start, 0)
    pings = [(float(m.group(1)) - t0, float(m.group(2)))
             for m in re.finditer(r"^\[(\d+\.\d+)\].*time=([\d.]+) ms", ping_out, re.M)]
    sent = re.search(r"(\d+) packets transmitted, (\d+) received", ping_out)
    grid = np.arange(interval, duration + 1e-9, interval)
    df = pd.DataFrame({"t": np.round(grid, 3)})
    df["throughput_bps"] = np.interp(grid, thr["t"], thr["throughput_bps"], left=np.nan, right=np.nan)
    rtt = pd.Series({round(round(t / interval) * interval, 3): r for t, r in pings})
    df["rtt_ms"] = df["t"].map(rtt)
    c = pd.DataFrame(cpu, columns=["t", "cpu_busy", "cpu_softirq"])
    df["cpu_busy"] = np.interp(grid, c["t"], c["cpu_busy"]) if len(c) else np.nan
    df["cpu_softirq"] = np.interp(grid, c["t"], c["cpu_softirq"]) if len(c) else np.nan
    events["ping_sent"], events["ping_received"] = (int(sent.group(1)), int(sent.group(2))) if sent else (0, 0)
    return df, events


def experiment(variants=VARIANTS, runs: int = 10, *, out=None, progress: Progress = silent,
               **kw) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``runs`` runs of each variant, interleaved (the variant order rotates each round, so
    drifts in the host spread evenly). Returns (samples, runs): long tables with
    ``variant`` and ``run``. ``progress`` is told each run as it ends (done of all the
    runs, those of an earlier, resumed experiment counted done).

    With ``out``, every finished run is appended to ``out/samples.csv`` and
    ``out/runs.csv`` at once, and runs already there are skipped: an interrupted
    experiment resumes where it stopped.
    """
    samples, facts = [], []
    have = set()
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        if (out / "runs.csv").is_file() and (out / "samples.csv").is_file():
            old_samples, old_runs = datasets.read_fast_reroute(out)
            have = set(zip(old_runs["variant"], old_runs["run"]))
            facts.append(old_runs)
            samples.append(old_samples)
    total = runs * len(variants)
    done = sum((v, r) in have for v in variants for r in range(runs))
    for r in range(runs):
        order = list(variants[r % len(variants):]) + list(variants[:r % len(variants)])
        for v in order:
            if (v, r) in have:
                continue
            df, ev = run_once(v, **kw)
            df = df.assign(variant=v, run=r)
            fact = pd.DataFrame([{"variant": v, "run": r, **ev,
                                  "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}])
            samples.append(df)
            facts.append(fact)
            if out is not None:
                for name, part in (("samples.csv", df), ("runs.csv", fact)):
                    path = out / name
                    part.to_csv(path, mode="a", header=not path.is_file(), index=False)
            done += 1
            progress(Step(f"{v} run {r}", done, total))
    return pd.concat(samples, ignore_index=True), pd.concat(facts, ignore_index=True)


def _p4_builds() -> dict[str, str]:
    """The p4 variant's engines (bmv2's simple_switch, p4c) by upstream repository and
    commit, or why they are not there."""

    from routerlab.engines import builds
    from routerlab.engines.base import find_binary

    out = {}
    for engine in ("bmv2", "p4c"):
        try:
            out[engine] = builds.describe(engine, find_binary(engine, builds.main_binary(engine)))
        except RouterlabError as e:
            out[engine] = f"not available ({e})"
    return out


def record_environment(out, command: str | None = None, when: str | None = None, settings=None) -> dict:
    """Write the experiment's environment record to ``out/experiments.csv``
    (:func:`routerlab.analysis.datasets.record_environment`): iperf3 is its traffic generator; the
    versions of nft and of the p4 variant's bmv2 and p4c; the idle mode its testbeds were
    asked for (``settings``' (:class:`routerlab.testbed.settings.Settings`), None: the
    environment's); the command. ``when``: the first
    run's start (default now); ``command`` defaults to how this process was started
    (:func:`routerlab.analysis.datasets.invocation`)."""
    from routerlab.testbed.namespaces import IDLE_NOTE
    from routerlab.testbed.settings import environment_cpu_idle

    iperf = sh("iperf3", "--version", check=False).splitlines()[0] if shutil.which("iperf3") else ""
    versions = {"nft": sh("nft", "--version", check=False).strip(), **_p4_builds()}
    return datasets.record_environment(
        out, "fast-reroute", "routerlab fast-reroute experiment (Linux routers in network namespaces, veth, MTU 850)",
        when=when, generator=iperf, versions="; ".join(f"{k}: {v}" for k, v in versions.items()), command=command or datasets.invocation(),
        notes=f"{IDLE_NOTE}{settings.cpu_idle if settings else environment_cpu_idle()} asked (routerlab.testbed)")
