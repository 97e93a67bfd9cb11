"""An XDP router compiled from ``lib/routerlab/bpf/`` (the kernel's FIB, its own firewall
map and GRE encapsulation), and the BPF compiler every BPF program of routerlab uses."""

from __future__ import annotations

import ipaddress
import json
import shutil
import struct
from pathlib import Path

from routerlab import cache
from routerlab.errors import EngineNotFound
from routerlab.testbed.interface import RECEIVE_PRIORITY, SINK_NET, VETH_RING_SIZE
from routerlab.testbed.shell import receive_in_thread, sh
from routerlab.engines.base import Engine, register
from routerlab.engines.kernel import install_guard, install_routes, sysctl
from routerlab.engines.rules import firewall


def map_ids(prog_id: int) -> dict[str, int]:
    """The maps of a loaded BPF program: map name -> map id (bpftool)."""
    ids = json.loads(sh("bpftool", "-j", "prog", "show", "id", str(prog_id)))["map_ids"]
    return {json.loads(sh("bpftool", "-j", "map", "show", "id", str(i)))["name"]: i for i in ids}


@register
class Ebpf(Engine):
    name = "ebpf"
    features = {"routes", "firewall", "drop", "gre"}
    where = "clang and libbpf-dev (Debian), compiled from lib/routerlab/bpf at set-up"
    one_machine = ("its redirects into a veth need an XDP program on the sink's side of the link, which it "
                   "attaches itself")

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
        return {name: cache.bpf_object(name) for name in ("xdp_router", "xdp_pass")}

    def start(self, tb, sc):
        # bpf_fib_lookup needs forwarding enabled on the ingress device; the guard table
        # makes sure the kernel itself forwards nothing (it drops and counts).
        sysctl(tb.ns_dut, net__ipv4__ip_forward=1, net__ipv4__conf__all__rp_filter=0,
               net__ipv4__conf__default__rp_filter=0, net__ipv4__conf__all__send_redirects=0)
        install_guard(tb)
        t = install_routes(tb, sc)
        objs = self.objects()
        if tb.generator != "xdp":
            # a veth takes the router's redirects only with an XDP program (the XDP
            # generator's testbed has its XDP sink there)
            sh("ip", "-n", tb.ns_sink, "link", "set", "dev", tb.sink_if, "xdpdrv", "obj", str(objs["xdp_pass"]),
               "sec", "xdp")
        sh("ip", "-n", tb.ns_dut, "link", "set", "dev", tb.dut_in, "xdpdrv", "obj", str(objs["xdp_router"]), "sec", "xdp")
        # with XDP the veth receives through NAPI, not the backlog: RPS does not apply, so the
        # NAPI poll runs in its own thread, pinned to the router's CPU at the receive's
        # real-time priority, as the XDP generator's testbed puts it: as an ordinary task it
        # waited behind another task that woke on the router's CPU, its ring overflowing
        # (docs/journal/2026-12-07-the-machine-s-agent-on-the-router-cpu.md)
        receive_in_thread(tb.ns_dut, tb.dut_in, tb.router_cpu, RECEIVE_PRIORITY)
        self._configure(tb, sc)
        return {"routes_load_s": round(t, 2), "xdp_mode": "native (veth)",
                "napi": f"threaded, pinned, SCHED_FIFO {RECEIVE_PRIORITY}"}

    def queue_packets(self, tb):
        """The veth's XDP receive ring (the kernel's VETH_RING_SIZE): with XDP the packets
        wait there for the NAPI thread, not in the backlog."""
        return VETH_RING_SIZE

    def _maps(self, tb) -> dict[str, int]:
        link = json.loads(sh("ip", "-n", tb.ns_dut, "-j", "-d", "link", "show", "dev", tb.dut_in))[0]
        return map_ids(link["xdp"]["prog"]["id"])

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

    def drop_counters(self, tb):
        """fw_drop (the firewall's XDP_DROP), err (XDP_ABORTED) and pass (handed to the
        kernel, whose guard table then drops it)."""
        s = self.stats(tb)
        return {k: s.get(k, 0) for k in ("fw_drop", "err", "pass")}
