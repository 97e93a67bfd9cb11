"""The firewall rule model every engine shares, and its renderings into nftables and Click
syntax. A scenario's rules (:func:`firewall`) are engine-neutral: each engine renders the
same list (the eBPF engine packs it into a map, bmv2 into table entries)."""

from __future__ import annotations

from dataclasses import dataclass

from routerlab.analysis.scenarios import Scenario
from routerlab.testbed.interface import DEST_NET, DROP_PORT


@dataclass(frozen=True)
class Rule:
    """One firewall rule, engine-neutral. Ports in host order; ``None`` = any."""

    action: str                 # "drop" or "accept"
    saddr: str | None = None    # CIDR
    daddr: str | None = None    # CIDR
    proto: str | None = None    # "udp" / "tcp"
    dport: tuple[int, int] | None = None
    dport_negate: bool = False

    def address_matches(self, src: str, dst: str) -> list[str]:
        """The rule's matches on addresses in an engine's syntax, source first: ``src`` and
        ``dst`` are the words before each prefix (nft's ``ip saddr``, Click's ``src net``)."""
        return [f"{word} {net}" for word, net in ((src, self.saddr), (dst, self.daddr)) if net]


def firewall(sc: Scenario) -> tuple[list[Rule], str]:
    """The rule list of a scenario and its default policy ("accept" or "drop").

    The traffic traverses every rule: the first ``rules - 1`` never match it (another
    source, another port), as in the published 50-rule tests. With ``drop_share`` the
    policy is deny and the last rule accepts only the traffic that should pass (not to
    the drop port); without it the policy is accept.
    """
    rules = [Rule("drop", saddr=f"192.0.2.{i % 250 + 1}/32", proto="udp", dport=(1000 + i, 1000 + i))
             for i in range(max(sc.rules - 1, 0))]
    if sc.drop_share:
        port = DROP_PORT
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
        m = r.address_matches("ip saddr", "ip daddr")
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


def click_ipfilter(rule: Rule) -> str:
    """One rule as an IPFilter line of Click (``allow``/``deny`` and a pattern)."""
    parts = rule.address_matches("src net", "dst net")
    if rule.proto:
        parts.append(rule.proto)
    if rule.dport:
        lo, hi = rule.dport
        ports = f"dst port {lo}" if lo == hi else f"(dst port >= {lo} && dst port <= {hi})"
        parts.append(f"not {ports}" if rule.dport_negate else ports)
    action = "allow" if rule.action == "accept" else "deny"
    return f"{action} {' && '.join(parts) or 'all'}"
