"""Router engines: one interface for the Linux kernel, nftables, eBPF/XDP and external
engines (Click, FastClick, bmv2 in later modules).

An engine turns a :class:`~routerlab.scenarios.Scenario` into its own configuration in
the testbed's DUT namespace, states which scenario features it supports, reports its
own forwarded counter and stops cleanly. An external engine's binary is found on PATH or
through ``ROUTERLAB_<ENGINE>``. For every engine that is not the kernel itself, anything
the engine leaves to the kernel's forwarding path is dropped and counted by a guard
table, so the kernel never does an engine's job unnoticed.
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import struct
import subprocess
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import ClassVar

from .errors import EngineNotFound, ParameterError, RouterlabError
from .scenarios import Scenario
from .testbed import DEST_NET, SINK_NET, Testbed, nsexec, sh

#: Where the fill routes of a large table point: host routes that no traffic uses.
FILL_NET = ipaddress.ip_network("10.128.0.0/9")


@dataclass(frozen=True)
class Rule:
    """One firewall rule, engine-neutral. Ports in host order; ``None`` = any."""

    action: str                 # "drop" or "accept"
    saddr: str | None = None    # CIDR
    daddr: str | None = None    # CIDR
    proto: str | None = None    # "udp" / "tcp"
    dport: tuple[int, int] | None = None
    dport_negate: bool = False


def firewall(sc: Scenario) -> tuple[list[Rule], str]:
    """The rule list of a scenario and its default policy ("accept" or "drop").

    The traffic traverses every rule: the first ``rules - 1`` never match it (another
    source, another port), as in the published 50-rule tests. With ``drop_share`` the
    policy is deny and the last rule accepts only the traffic that should pass (not to
    the drop port); without it the policy is accept.
    """
    from .traffic import TrafficSpec

    rules = [Rule("drop", saddr=f"192.0.2.{i % 250 + 1}/32", proto="udp", dport=(1000 + i, 1000 + i))
             for i in range(max(sc.rules - 1, 0))]
    if sc.drop_share:
        port = TrafficSpec.DROP_PORT
        rules.append(Rule("accept", daddr=f"{DEST_NET}.0/24", proto="udp", dport=(port, port), dport_negate=True))
        return rules, "drop"
    if sc.rules:
        rules.append(Rule("drop", saddr="192.0.2.254/32", proto="udp", dport=(999, 999)))
    return rules, "accept"


def nft_ruleset(sc: Scenario) -> str:
    """nftables forward-chain ruleset of a scenario (table inet rlfw)."""
    rules, policy = firewall(sc)
    lines = []
    for r in rules:
        m = []
        if r.saddr:
            m.append(f"ip saddr {r.saddr}")
        if r.daddr:
            m.append(f"ip daddr {r.daddr}")
        if r.dport:
            lo, hi = r.dport
            ports = str(lo) if lo == hi else f"{lo}-{hi}"
            m.append(f"{r.proto or 'udp'} dport {'!= ' if r.dport_negate else ''}{ports}")
        elif r.proto:
            m.append(f"meta l4proto {r.proto}")
        lines.append(f"    {' '.join(m)} {r.action}")
    return ("table inet rlfw {\n  chain forward_filter {\n"
            f"    type filter hook forward priority 0; policy {policy};\n"
            + "\n".join(lines) + "\n  }\n}\n")


def install_routes(tb: Testbed, sc: Scenario) -> float:
    """The route the traffic uses, plus ``routes - 1`` fill routes loaded in netlink batches.

    Returns the seconds the fill routes took (:mod:`routerlab.netlink_routes`: many route
    requests per send, errors read back; ``ip route`` once per route would take hours).
    """
    import sys

    sh("ip", "-n", tb.ns_dut, "route", "replace", f"{DEST_NET}.0/24", "via", f"{SINK_NET}.2", "dev", tb.dut_out)
    n = sc.routes - 1
    if n <= 0:
        return 0.0
    if n > FILL_NET.num_addresses:
        raise ParameterError("routes", f"at most {FILL_NET.num_addresses} fill routes")
    t0 = time.perf_counter()
    nsexec(tb.ns_dut, sys.executable, "-m", "routerlab.netlink_routes", str(FILL_NET.network_address), str(n),
           f"{SINK_NET}.2", tb.dut_out, timeout=900)
    return time.perf_counter() - t0


def compile_bpf(name: str) -> Path:
    """Compile ``lib/routerlab/bpf/<name>.c`` with clang for BPF; the object is cached in
    the user cache by the source's hash, so an unchanged program is not rebuilt."""
    import hashlib

    if not shutil.which("clang"):
        raise EngineNotFound(f"{name}: clang is not installed (Debian package clang): run scripts/setup.sh")
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "routerlab" / "bpf"
    cache.mkdir(parents=True, exist_ok=True)
    src = resources.files("routerlab").joinpath(f"bpf/{name}.c").read_bytes()
    obj = cache / f"{name}-{hashlib.sha256(src).hexdigest()[:12]}.o"
    if not obj.is_file():
        c = cache / f"{name}.c"
        c.write_bytes(src)
        p = subprocess.run(["clang", "-O2", "-g", "-target", "bpf", f"-I/usr/include/{os.uname().machine}-linux-gnu",
                            "-c", str(c), "-o", str(obj)], capture_output=True, text=True)
        if p.returncode != 0:
            raise RouterlabError(f"compiling {name}.c failed:\n{p.stderr}")
    return obj


def _sysctl(ns: str, **kv):
    for k, v in kv.items():
        nsexec(ns, "sysctl", "-qw", f"{k.replace('__', '.')}={v}")


def guard_count(tb: Testbed) -> int:
    """Packets the kernel would have forwarded for a non-kernel engine (dropped by the guard)."""
    out = json.loads(nsexec(tb.ns_dut, "nft", "-j", "list", "counter", "inet", "rlguard", "guarded"))
    return next(o["counter"]["packets"] for o in out["nftables"] if "counter" in o)


def install_guard(tb: Testbed):
    nsexec(tb.ns_dut, "nft", "-f", "-", input=(
        "table inet rlguard {\n  counter guarded { }\n"
        "  chain guard { type filter hook forward priority -400; counter name \"guarded\" drop; }\n}\n"))


class Engine:
    """Base class. Subclasses set :attr:`name`, :attr:`features` and implement start/stop."""

    name: ClassVar[str] = ""
    #: Scenario features supported ("routes", "firewall", "drop", "gre").
    features: ClassVar[set[str]] = set()
    #: True when the Linux kernel itself forwards (linux, nft).
    kernel_forwarding: ClassVar[bool] = False
    #: Binaries an external engine needs (looked up on PATH or ROUTERLAB_<ENGINE>).
    binaries: ClassVar[tuple[str, ...]] = ()
    #: Where users get the engine.
    where: ClassVar[str] = ""

    def check(self, sc: Scenario | None = None):
        """Raise :class:`EngineNotFound` if missing, :class:`ParameterError` if ``sc`` needs
        a feature this engine lacks."""
        for b in self.binaries:
            find_binary(self.name, b)
        if sc is not None:
            missing = sc.features - self.features
            if missing:
                raise ParameterError("scenario", f"engine {self.name} does not support "
                                     f"{', '.join(sorted(missing))} (scenario {sc.name})")

    def version(self) -> str:
        return sh("uname", "-r").strip()

    def start(self, tb: Testbed, sc: Scenario) -> dict:
        """Configure the router; return facts for the environment record."""
        raise NotImplementedError

    def forwarded(self, tb: Testbed) -> int | None:
        """The engine's own count of forwarded packets (None if it keeps none)."""
        return None

    def stop(self, tb: Testbed):
        """Undo what :meth:`start` did that the namespaces' removal would not."""

    def stop_process(self, timeout: float = 5.0):
        """Stop the engine's own process (``self._proc``: SIGTERM, then SIGKILL after
        ``timeout`` seconds) and close its log (``self._log``); safe to call twice."""
        p = getattr(self, "_proc", None)
        if p is not None and p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        log = getattr(self, "_log", None)
        if log is not None and not log.closed:
            log.close()


class Linux(Engine):
    name = "linux"
    features = {"routes"}
    kernel_forwarding = True
    where = "the Linux kernel (always present)"

    def start(self, tb, sc):
        _sysctl(tb.ns_dut, net__ipv4__ip_forward=1, net__ipv4__conf__all__rp_filter=0,
                net__ipv4__conf__default__rp_filter=0, net__ipv4__conf__all__send_redirects=0)
        t = install_routes(tb, sc)
        return {"routes_load_s": round(t, 2)}

    def forwarded(self, tb):
        from .testbed import link_stats

        return link_stats(tb.ns_dut, tb.dut_out)["tx_packets"]


class Nft(Linux):
    name = "nft"
    features = {"routes", "firewall", "drop"}
    where = "nftables (Debian package nftables)"

    def version(self):
        return sh("nft", "--version").strip()

    def start(self, tb, sc):
        facts = super().start(tb, sc)
        # with 0 rules the forward hook is still there (empty chain): the cost of nftables itself
        nsexec(tb.ns_dut, "nft", "-f", "-", input=nft_ruleset(sc))
        return facts


class Ebpf(Engine):
    name = "ebpf"
    features = {"routes", "firewall", "drop", "gre"}
    where = "clang and libbpf-dev (Debian), compiled from lib/routerlab/bpf at set-up"

    def check(self, sc=None):
        if not shutil.which("clang"):
            raise EngineNotFound("ebpf: clang is not installed (Debian package clang): run scripts/setup.sh")
        if not Path("/usr/include/bpf/bpf_helpers.h").is_file():
            raise EngineNotFound("ebpf: libbpf headers missing (Debian package libbpf-dev)")
        if not shutil.which("bpftool"):
            raise EngineNotFound("ebpf: bpftool is not installed (Debian package bpftool)")
        super().check(sc)

    def version(self):
        return "xdp_router (" + sh("clang", "--version").splitlines()[0] + ")"

    @staticmethod
    def objects() -> dict[str, Path]:
        """Compile the XDP programs (cached by source hash)."""
        return {name: compile_bpf(name) for name in ("xdp_router", "xdp_pass")}

    def start(self, tb, sc):
        # bpf_fib_lookup needs forwarding enabled on the ingress device; the guard table
        # makes sure the kernel itself forwards nothing (it drops and counts).
        _sysctl(tb.ns_dut, net__ipv4__ip_forward=1, net__ipv4__conf__all__rp_filter=0,
                net__ipv4__conf__default__rp_filter=0, net__ipv4__conf__all__send_redirects=0)
        install_guard(tb)
        t = install_routes(tb, sc)
        objs = self.objects()
        sh("ip", "-n", tb.ns_sink, "link", "set", "dev", tb.sink_if, "xdpdrv", "obj", str(objs["xdp_pass"]), "sec", "xdp")
        sh("ip", "-n", tb.ns_dut, "link", "set", "dev", tb.dut_in, "xdpdrv", "obj", str(objs["xdp_router"]), "sec", "xdp")
        # with XDP the veth receives through NAPI, not the backlog: RPS does not apply, so the
        # NAPI poll runs in its own thread, pinned to the router's CPU
        nsexec(tb.ns_dut, "sh", "-c", f"echo 1 > /sys/class/net/{tb.dut_in}/threaded")
        self._pin_napi(tb)
        self._configure(tb, sc)
        return {"routes_load_s": round(t, 2), "xdp_mode": "native (veth)", "napi": "threaded, pinned"}

    def _pin_napi(self, tb):
        for _ in range(20):
            pids = sh("pgrep", "-f", f"napi/{tb.dut_in}-", check=False).split()
            if pids:
                for pid in pids:
                    sh("taskset", "-pc", str(tb.router_cpu), pid)
                return
            time.sleep(0.05)
        raise RouterlabError(f"no threaded NAPI kthread for {tb.dut_in}")

    def _maps(self, tb) -> dict[str, int]:
        link = json.loads(sh("ip", "-n", tb.ns_dut, "-j", "-d", "link", "show", "dev", tb.dut_in))[0]
        prog_id = link["xdp"]["prog"]["id"]
        ids = json.loads(sh("bpftool", "-j", "prog", "show", "id", str(prog_id)))["map_ids"]
        names = {}
        for i in ids:
            m = json.loads(sh("bpftool", "-j", "map", "show", "id", str(i)))
            names[m["name"]] = i
        return names

    def _configure(self, tb, sc):
        maps = self._maps(tb)
        rules, policy = firewall(sc)

        def ip_mask(cidr):
            if not cidr:
                return 0, 0
            n = ipaddress.ip_network(cidr)
            return (struct.unpack("<I", n.network_address.packed)[0],
                    struct.unpack("<I", n.netmask.packed)[0])

        for i, r in enumerate(rules):
            s, sm = ip_mask(r.saddr)
            d, dm = ip_mask(r.daddr)
            lo, hi = r.dport or (0, 65535)
            proto = {"udp": 17, "tcp": 6, None: 0}[r.proto]
            val = struct.pack("<IIIIHHBBBB", s, sm, d, dm, lo, hi, proto, int(r.action == "accept"),
                              int(r.dport_negate), 0)
            self._update(maps["rl_rules"], i, val)
        gre_src = struct.unpack("<I", ipaddress.IPv4Address(f"{SINK_NET}.1").packed)[0]
        gre_dst = struct.unpack("<I", ipaddress.IPv4Address(f"{SINK_NET}.2").packed)[0]
        cfg = struct.pack("<IIIII", len(rules), int(policy == "accept"), int(sc.gre), gre_src, gre_dst)
        self._update(maps["rl_config"], 0, cfg)

    @staticmethod
    def _update(map_id: int, key: int, value: bytes):
        k = [f"0x{b:02x}" for b in struct.pack("<I", key)]
        v = [f"0x{b:02x}" for b in value]
        sh("bpftool", "map", "update", "id", str(map_id), "key", *k, "value", *v)

    def stats(self, tb) -> dict[str, int]:
        """The program's counters summed over CPUs: rx, fwd, fw_drop, pass, err."""
        mid = self._maps(tb)["rl_stats"]
        out = {}
        for e in json.loads(sh("bpftool", "-j", "map", "dump", "id", str(mid))):
            key = e.get("key")
            k = int(key) if isinstance(key, int) else int.from_bytes(bytes(int(x, 16) for x in key), "little")
            vals = e.get("values") or e.get("formatted", {}).get("values")
            total = 0
            for v in vals:
                val = v["value"]
                total += val if isinstance(val, int) else int.from_bytes(bytes(int(x, 16) for x in val), "little")
            out[["rx", "fwd", "fw_drop", "pass", "err"][k]] = total
        return out

    def forwarded(self, tb):
        return self.stats(tb)["fwd"]


ENGINES: dict[str, type[Engine]] = {e.name: e for e in (Linux, Nft, Ebpf)}


def register(cls: type[Engine]) -> type[Engine]:
    """Add an engine class (used by the Click, FastClick and bmv2 modules)."""
    ENGINES[cls.name] = cls
    return cls


def get(name: str) -> Engine:
    """An engine by name; unknown names are refused with the list of known ones."""
    if name not in ENGINES:
        raise ParameterError("engine", f"unknown engine {name!r}; known: {', '.join(ENGINES)}")
    return ENGINES[name]()


def find_binary(engine: str, binary: str, var: str | None = None) -> str:
    """An engine's binary: ``$ROUTERLAB_<NAME>`` (a build of one's own) if set, else the
    build ``routerlab engines install`` made, else PATH.

    ``engine`` is the installable engine the binary belongs to (click, fastclick, bmv2,
    p4c). ``var`` names the variable when it differs from the binary's name (FastClick's
    binary is also called ``click``: ROUTERLAB_FASTCLICK); FastClick is never looked up
    on PATH, where ``click`` is Click."""
    from . import builds

    var = var or "ROUTERLAB_" + binary.upper().replace("-", "_")
    path = os.environ.get(var)
    if path:
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise EngineNotFound(f"{engine}: {var}={path} is not an executable file")
        return path
    found = builds.installed_binary(engine, binary)
    if found:
        return str(found)
    if engine != "fastclick":
        on_path = shutil.which(binary)
        if on_path:
            return on_path
    raise EngineNotFound(f"{engine}: not installed (run: routerlab engines install {engine}); "
                         f"or name your own {binary} with {var}")


# External engines register themselves when their module is imported (they import this one
# for the base class, so it is imported by module, not by name: safe in either order).
from . import bmv2, clickrouter  # noqa: E402,F401
