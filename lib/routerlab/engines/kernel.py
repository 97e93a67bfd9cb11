"""The Linux kernel as the router: plain forwarding (``linux``) and with an nftables
firewall (``nft``), and the kernel set-up other engines share: the routes of a scenario,
sysctls, and the guard table that keeps the kernel from forwarding an engine's packets."""

from __future__ import annotations

import json
import time

from routerlab.errors import ParameterError
from routerlab.analysis.scenarios import Scenario
from routerlab.testbed.interface import DEST_NET, FILL_NET, SINK_NET, Testbed
from routerlab.testbed.shell import nsexec, sh
from routerlab.engines.base import Engine, register
from routerlab.engines.rules import nft_ruleset



def install_routes(tb: Testbed, sc: Scenario) -> float:
    """The route the traffic uses, plus ``routes - 1`` fill routes loaded in netlink batches.

    Returns the seconds the fill routes took (:mod:`routerlab.testbed.netlink_routes`: many route
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
    nsexec(tb.ns_dut, sys.executable, "-m", "routerlab.testbed.netlink_routes", str(FILL_NET.network_address), str(n),
           f"{SINK_NET}.2", tb.dut_out, timeout=900)
    return time.perf_counter() - t0


def sysctl(ns: str, **kv):
    for k, v in kv.items():
        nsexec(ns, "sysctl", "-qw", f"{k.replace('__', '.')}={v}")


def guard_count(tb: Testbed) -> int:
    """Packets the kernel would have forwarded for a non-kernel engine (dropped by the guard)."""
    out = json.loads(nsexec(tb.ns_dut, "nft", "-j", "list", "counter", "inet", "rlguard", "guarded"))
    return next(o["counter"]["packets"] for o in out["nftables"] if "counter" in o)


def keep_kernel_out(tb: Testbed, ns: str | None = None, devices: list[str] | None = None):
    """For a router that captures its packets itself (AF_PACKET, libpcap, as Click, bmv2 and
    Open vSwitch's userspace datapath do): kernel forwarding off in namespace ``ns``
    (default the DUT's), and the ingress of each of ``devices`` (default both router
    interfaces) dropping what the capture already took. Without the drop the kernel
    processes every packet too, on the same CPU (receive livelock), and answers them; on
    the sink side as well, since a router may take packets there (a NAT's replies). In the
    DUT's namespace the guard table (:func:`install_guard`) counts anything the kernel
    still forwards."""
    ns = ns or tb.ns_dut
    devices = devices or [tb.dut_in, tb.dut_out]
    nsexec(ns, "sysctl", "-qw", "net.ipv4.ip_forward=0")
    nsexec(ns, "nft", "-f", "-", input="table netdev rlcapture {\n" + "".join(
        f"  chain in{i} {{ type filter hook ingress device \"{dev}\" priority 0; drop; }}\n"
        for i, dev in enumerate(devices)) + "}\n")
    if ns == tb.ns_dut:
        install_guard(tb)


def kernel_forwards(tb: Testbed, sc: Scenario) -> dict:
    """The DUT's kernel as the router: forwarding on, no reverse-path filter or redirects,
    the scenario's routes; returns the facts for the record (``routes_load_s``)."""
    sysctl(tb.ns_dut, net__ipv4__ip_forward=1, net__ipv4__conf__all__rp_filter=0,
           net__ipv4__conf__default__rp_filter=0, net__ipv4__conf__all__send_redirects=0)
    return {"routes_load_s": round(install_routes(tb, sc), 2)}


def sent_out(tb: Testbed) -> int:
    """Packets the DUT sent towards the sink, by the kernel's count of its output link."""
    from routerlab.testbed.shell import link_stats

    return link_stats(tb.ns_dut, tb.dut_out)["tx_packets"]


def install_guard(tb: Testbed):
    nsexec(tb.ns_dut, "nft", "-f", "-", input=(
        "table inet rlguard {\n  counter guarded { }\n"
        "  chain guard { type filter hook forward priority -400; counter name \"guarded\" drop; }\n}\n"))


@register
class Linux(Engine):
    name = "linux"
    features = {"routes"}
    kernel_forwarding = True
    where = "the Linux kernel (always present)"

    def start(self, tb, sc):
        return kernel_forwards(tb, sc)

    def forwarded(self, tb):
        return sent_out(tb)


@register
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
