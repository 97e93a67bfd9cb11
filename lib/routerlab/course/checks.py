"""What the course exercises' checks are made of, for the P4 and the Click track alike.

An :class:`Expectation` is one named behaviour that passed or failed, with a one-line hint
(what was sent, what came back, what was expected). The frames a check sends are built
with scapy (:func:`frame`, :func:`arp_request`) and addressed as the namespace testbed
addresses them: port 0 is the device under test's link towards the generator, port 1 its
link towards the sink. :func:`through` sends frames into one port of a testbed's device
under test and returns what left on each port; :func:`describe` says in one line what a
frame is, for the hints.

An instructor's hidden checks (:func:`read_extra_checks`, ``--extra-checks FILE`` of both
tracks' ``check``) are cases in the form of the firewall exercise's: a packet written in
one line (:func:`parse_case`), the link it goes in by and the link it must leave by, or
none, and what the packet that leaves must carry (TTL, addresses, ports, checksums, ICMP
type and code: :data:`FIELDS`); and counters of the router (a Click handler, a P4
counter) with how much they must go up while the cases run. :func:`extra_expectations`
sends them after the exercise's own checks.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from routerlab import yamlfile
from routerlab.errors import ValueRefused
from routerlab.testbed import probe
from routerlab.testbed.namespaces import NamespaceTestbed

#: The device under test's links as an extra case names them: "in" is port 0 (towards the
#: generator), "out" port 1 (towards the sink).
SIDES = {"in": 0, "out": 1}
#: What an extra case may say: the packet, where it goes in (default "in"), where it must
#: leave ("in", "out" or "nowhere"), optionally why, and what the packet that leaves must
#: carry (:data:`FIELDS`).
CASE_KEYS = ("send", "from", "leaves", "why", "expect")


def _single(value):
    if isinstance(value, (dict, list)):
        raise ValueRefused("a single value")


def _whole(lo: int, hi: int):
    """A check of one value: a whole number from ``lo`` to ``hi``."""
    def check(value):
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise ValueRefused(f"a whole number {lo}-{hi}")
    return check


def _address(value):
    import ipaddress

    try:
        ipaddress.IPv4Address(value if isinstance(value, str) else None)
    except ValueError:
        raise ValueRefused("an IPv4 address, e.g. 10.70.1.2") from None


def _checksum(value):
    if value != "valid":
        try:
            _whole(0, 0xFFFF)(value)
        except ValueRefused:
            raise ValueRefused("valid, or the IPv4 header checksum as a whole number 0-65535") from None


#: What a case's ``expect`` may say of the packet that leaves: its IPv4 header's TTL,
#: source and destination address; its UDP or TCP source and destination port; its
#: checksums (``valid``: the IPv4 header's and the UDP, TCP or ICMP one recompute to what
#: came; a number: the IPv4 header checksum field); its ICMP type and (optionally) code.
FIELDS = yamlfile.Shape({"ttl": _whole(0, 255), "src": _address, "dst": _address, "sport": _whole(0, 65535),
                         "dport": _whole(0, 65535), "checksum": _checksum,
                         "icmp": yamlfile.Shape({"type": _whole(0, 255), "code": _whole(0, 255)}, required=("type",))})
#: What an extra counter may say: a Click handler (``handler``) or a P4 counter
#: (``counter``, at ``index``, 0 by default), how much it must go up while the cases run
#: (``increase``, packets) and, optionally, why.
COUNTER = yamlfile.Shape({"handler": str, "counter": str, "index": _whole(0, 2**32 - 1),
                          "increase": _whole(0, 2**63), "why": _single}, required=("increase",))

#: An instructor's file of extra cases (:func:`read_extra_checks`): cases, and counters.
EXTRA_CHECKS = yamlfile.Shape({
    "cases": yamlfile.ListOf(
        yamlfile.Shape({**dict.fromkeys(CASE_KEYS, _single), "expect": FIELDS}, required=("send", "leaves")),
        min=1, each="case {n}", what="a list of at least one case"),
    "counters": yamlfile.ListOf(COUNTER, min=1, each="counter {n}", what="a list of at least one counter")},
    required=("cases",), what="a mapping with the key cases (and optionally counters)")

#: EtherTypes of the frames a check looks at: IPv4 and ARP (the kernels' own chatter,
#: IPv6 and LLDP, is never ours).
IPV4, ARP = 0x0800, 0x0806


@dataclass
class Expectation:
    """One expectation of an exercise's check and whether it held.

    Attributes
    ----------
    name : str
        What is expected, as the student reads it.
    passed : bool
        It held.
    detail : str
        For a failure, the hint: what was sent, what came back, what was expected (it
        may span lines, e.g. a configuration's error messages).
    skipped : str
        Non-empty when the expectation was not tried, saying why (e.g. it needs root);
        it then does not count as passed.
    at : float
        When it was decided (``time.monotonic()``, seconds): an expectation's duration
        is the time since the one before it (:func:`durations`).
    step : int or None
        The exercise's numbered TODO after which it holds: the highest one it needs
        (:func:`steps`). 0: no one TODO's, about the file as a whole (it starts, it
        compiles); None: an instructor's extra case.
    """

    name: str
    passed: bool
    detail: str = ""
    skipped: str = ""
    at: float = field(default_factory=time.monotonic, repr=False, compare=False)
    step: int | None = 0

    @property
    def result(self) -> str:
        """``passed``, ``failed`` or ``skipped``."""
        return "passed" if self.passed else "skipped" if self.skipped else "failed"

    @classmethod
    def not_run(cls, name: str, why: str) -> "Expectation":
        return cls(name, False, skipped=why)


def at_step(step: int, *expectations: Expectation) -> list[Expectation]:
    """The expectations, each marked as holding after TODO ``step`` (:attr:`Expectation.step`)."""
    for e in expectations:
        e.step = step
    return list(expectations)


@dataclass
class Step:
    """The expectations that hold after a run of an exercise's numbered TODOs: ``first``
    to ``last`` (a TODO no expectation sees on its own is folded into the next one that
    is seen); both 0 for the file as a whole, None for an instructor's extra cases."""

    first: int | None
    last: int | None
    expectations: list[Expectation]

    @property
    def label(self) -> str:
        if self.last is None:
            return "extra checks"
        if self.last == 0:
            return "the file as a whole"
        return f"TODO {self.first}" + (f"-{self.last}" if self.last != self.first else "")

    @property
    def passed(self) -> int:
        return sum(e.passed for e in self.expectations)

    @property
    def done(self) -> bool:
        return self.passed == len(self.expectations)


def steps(results: list[Expectation]) -> list[Step]:
    """The expectations by TODO step, in the order of the steps: the file as a whole,
    TODO 1, 2... (a TODO no expectation is marked with joins the next: "TODO 3-5"), then
    extra cases; within a step, in the check's order. With no expectation marked with a
    TODO, the file as a whole alone (and the extra cases after it)."""
    numbered = sorted({r.step for r in results if r.step})
    out = []
    if any(r.step == 0 for r in results):
        out.append(Step(0, 0, [r for r in results if r.step == 0]))
    first = 1
    for n in numbered:
        out.append(Step(first, n, [r for r in results if r.step == n]))
        first = n + 1
    if any(r.step is None for r in results):
        out.append(Step(None, None, [r for r in results if r.step is None]))
    return out


def standing(results: list[Expectation]) -> str:
    """Where a student is, in one line, in the order of the TODOs: the steps that pass
    up to the first that does not, that one as next with its count, then the rest with
    theirs ("TODO 1-2 pass; next: TODO 3 (0 of 1 pass); then TODO 4-5 (1 of 5), TODO 6
    (0 of 4)"), after what fails of the file as a whole; "" when the check marks no TODO."""
    groups = steps(results)
    todo = [s for s in groups if s.last]
    if not todo:
        return ""
    whole = [f"the file as a whole: {s.passed} of {len(s.expectations)} pass" for s in groups
             if s.last == 0 and not s.done]
    first = next((i for i, s in enumerate(todo) if not s.done), None)
    if first is None:
        return "; ".join(whole + ["every TODO passes"])
    parts = whole + ([f"{', '.join(s.label for s in todo[:first])} pass"] if first else [])
    parts.append(f"next: {todo[first].label} ({todo[first].passed} of {len(todo[first].expectations)} pass)")
    if todo[first + 1:]:
        parts.append("then " + ", ".join(f"{s.label} ({s.passed} of {len(s.expectations)})" for s in todo[first + 1:]))
    return "; ".join(parts)


def durations(results: list[Expectation], started: float) -> list[float]:
    """Each expectation's duration, seconds: the time from the one before it (the first
    from ``started``, a ``time.monotonic()`` reading) to its own decision."""
    out, before = [], started
    for r in results:
        out.append(max(0.0, r.at - before))
        before = max(before, r.at)
    return out


def as_json(check: dict, results: list[Expectation], started: float) -> dict:
    """A check's result for a grader: ``check`` (track, exercise, file checked) with
    counts, the total, the counts by TODO step (:func:`steps`) and the :func:`standing`
    line, and each expectation's name, result, detail (what was sent, what came back,
    what was expected, for a failure), why it was skipped, its TODO step and its seconds."""
    secs = durations(results, started)
    return {**check, "passed": sum(r.passed for r in results), "failed": sum(r.result == "failed" for r in results),
            "skipped": sum(bool(r.skipped) for r in results), "total": len(results),
            "seconds": round(sum(secs), 3),
            "steps": [{"step": s.label, "passed": s.passed, "total": len(s.expectations)} for s in steps(results)],
            "progress": standing(results),
            "expectations": [{"name": r.name, "result": r.result, "detail": r.detail, "skipped": r.skipped,
                              "step": r.step, "seconds": round(s, 3)} for r, s in zip(results, secs)]}


def as_junit(check: dict, results: list[Expectation], started: float) -> str:
    """The same as JUnit XML: one ``testsuite`` named after the track and exercise, one
    ``testcase`` per expectation, a failure's detail as its ``failure`` message and text,
    a skipped one's reason as ``skipped``."""
    import xml.etree.ElementTree as ET

    data = as_json(check, results, started)
    suite = ET.Element("testsuite", name=f"routerlab.{check['track']}.{check['exercise']}",
                       tests=str(data["total"]), failures=str(data["failed"]), errors="0",
                       skipped=str(data["skipped"]), time=f"{data['seconds']:.3f}")
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="checked", value=str(check.get("checked", "")))
    for e in data["expectations"]:
        case = ET.SubElement(suite, "testcase", classname=f"routerlab.{check['track']}.{check['exercise']}",
                             name=e["name"], time=f"{e['seconds']:.3f}")
        ET.SubElement(ET.SubElement(case, "properties"), "property", name="step", value=str(e["step"]))
        if e["result"] == "failed":
            ET.SubElement(case, "failure", message=(e["detail"].splitlines() or ["failed"])[0]).text = e["detail"]
        elif e["result"] == "skipped":
            ET.SubElement(case, "skipped", message=e["skipped"])
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"


def scapy_layers():
    """scapy's layer classes the checks use, imported on first use (scapy is slow to load)."""
    from scapy.layers.inet import GRE, ICMP, IP, TCP, UDP, IPerror  # noqa: F401
    from scapy.layers.l2 import ARP as ArpLayer, Ether

    return {"Ether": Ether, "IP": IP, "UDP": UDP, "TCP": TCP, "ICMP": ICMP, "GRE": GRE, "ARP": ArpLayer,
            "IPerror": IPerror}


def _ether(from_port: int):
    m = NamespaceTestbed.MACS
    Ether = scapy_layers()["Ether"]
    return Ether(src=m["g0"], dst=m["d0"]) if from_port == 0 else Ether(src=m["s0"], dst=m["d1"])


def frame(dst: str, *, src: str = "10.70.1.2", ttl: int = 64, proto: str = "udp", sport: int = 1234,
          dport: int = 5000, from_port: int = 0, icmp_type: int = 8, bad_checksum: bool = False,
          size: int | None = None, df: bool = False) -> bytes:
    """An Ethernet/IPv4 frame addressed to the device under test's port ``from_port``.

    ``proto`` is "udp", "tcp" (a SYN) or "icmp" (type ``icmp_type``: 8 echo request, 0
    echo reply); ``bad_checksum`` spoils the IPv4 header checksum; ``size``: the IPv4
    packet's total length in bytes (its payload padded; default: a short payload);
    ``df``: the don't-fragment flag set."""
    L = scapy_layers()
    if proto == "udp":
        l4 = L["UDP"](sport=sport, dport=dport)
    elif proto == "tcp":
        l4 = L["TCP"](sport=sport, dport=dport, flags="S")
    elif proto == "icmp":
        l4 = L["ICMP"](type=icmp_type, id=sport, seq=1)
    else:
        raise ValueError(f"proto must be udp, tcp or icmp, got {proto!r}")
    ip = L["IP"](src=src, dst=dst, ttl=ttl, flags="DF" if df else 0)
    payload = b"routerlab" * 2
    if size is not None:
        payload = (b"routerlab" * (size // 9 + 1))[:size - len(ip / l4)]
    if bad_checksum:
        ip.chksum = L["IP"](bytes(ip / l4 / payload)).chksum ^ 0x5A5A
    return bytes(_ether(from_port) / ip / l4 / payload)


def arp_request(target: str, *, src: str = "10.70.1.2", from_port: int = 0) -> bytes:
    """A broadcast ARP request "who has ``target``, tell ``src``" into port ``from_port``."""
    L = scapy_layers()
    eth = _ether(from_port)
    return bytes(L["Ether"](src=eth.src, dst="ff:ff:ff:ff:ff:ff")
                 / L["ARP"](op=1, hwsrc=eth.src, psrc=src, pdst=target))


def parse(data: bytes):
    """A frame as a scapy packet."""
    return scapy_layers()["Ether"](data)


def ip_checksum_right(pkt) -> bool:
    """Whether the IPv4 header checksum of ``pkt`` (a scapy packet with an IP layer) is
    the one its header gives."""
    carried, recomputed = _ip_checksum(pkt)
    return carried == recomputed


def _ip_checksum(pkt) -> tuple[int, int]:
    """The IPv4 header checksum ``pkt`` carries and the one its header recomputes to."""
    IP = scapy_layers()["IP"]
    p = IP(bytes(pkt[IP]))
    p.chksum = None
    return pkt[IP].chksum, IP(bytes(p)).chksum


def checksums_right(pkt) -> bool:
    """The IPv4 header checksum and, for TCP and UDP, the transport checksum (over the
    pseudo-header: what a NAT must fix) are right."""
    return not checksum_faults(pkt, icmp=False)


def checksum_faults(pkt, icmp: bool = True) -> list[str]:
    """Each checksum of ``pkt`` (a scapy packet with an IP layer) that does not recompute
    to what it carries, in words ("IPv4 header checksum 0x0000, recomputes to 0x1c46"):
    the IPv4 header's, then the TCP or UDP one (over the pseudo-header) or, with ``icmp``,
    the ICMP message's."""
    from scapy.utils import checksum

    L = scapy_layers()
    ip = pkt[L["IP"]]
    out = []
    carried, recomputed = _ip_checksum(pkt)
    if carried != recomputed:
        out.append(f"IPv4 header checksum 0x{carried:04x}, recomputes to 0x{recomputed:04x}")
    for name in ("TCP", "UDP"):
        if name in pkt:
            p = L["IP"](bytes(ip))
            got = p[name].chksum
            p[name].chksum = None
            want = L["IP"](bytes(p))[name].chksum
            if want != got:
                out.append(f"{name} checksum 0x{got:04x}, recomputes to 0x{want:04x}")
            return out
    if icmp and L["ICMP"] in pkt:
        # over the ICMP message as it came (scapy would rebuild a quoted header)
        data = bytes(ip)[ip.ihl * 4:ip.len]
        want = checksum(data[:2] + b"\0\0" + data[4:])
        if int.from_bytes(data[2:4], "big") != want:
            out.append(f"ICMP checksum 0x{int.from_bytes(data[2:4], 'big'):04x}, recomputes to 0x{want:04x}")
    return out


def describe(pkt) -> str:
    """A frame in one line: ARP, or protocol, addresses, ports, TTL (an ICMP message with
    its type and code)."""
    L = scapy_layers()
    if not hasattr(pkt, "haslayer"):
        pkt = parse(pkt)
    if L["ARP"] in pkt:
        a = pkt[L["ARP"]]
        return (f"ARP who-has {a.pdst} tell {a.psrc}" if a.op == 1 else f"ARP reply {a.psrc} is-at {a.hwsrc}") + \
            f" ({pkt.src} -> {pkt.dst})"
    if L["IP"] not in pkt:
        return f"frame of type 0x{pkt.type:04x}, {len(pkt)} bytes"
    ip = pkt[L["IP"]]
    if L["ICMP"] in pkt:
        what = f"ICMP {ip.src} > {ip.dst} type {pkt[L['ICMP']].type} code {pkt[L['ICMP']].code}"
    elif L["TCP"] in pkt or L["UDP"] in pkt:
        l4 = pkt[L["TCP"]] if L["TCP"] in pkt else pkt[L["UDP"]]
        what = f"{'TCP' if L['TCP'] in pkt else 'UDP'} {ip.src}:{l4.sport} > {ip.dst}:{l4.dport}"
    else:
        what = f"IPv4 protocol {ip.proto} {ip.src} > {ip.dst}"
    return f"{what} TTL {ip.ttl}"


def through(tb: NamespaceTestbed, frames: list[bytes], from_port: int = 0, *,
            ethertypes: tuple[int, ...] = (IPV4,)) -> dict[int, list[bytes]]:
    """Send ``frames`` into the device under test's port ``from_port`` (0: from the
    generator, 1: from the sink); returns the frames of ``ethertypes`` that left it on
    each port meanwhile (port 0 arrives at the generator, port 1 at the sink)."""
    ends = {0: (tb.ns_tg, tb.tg_if), 1: (tb.ns_sink, tb.sink_if)}
    return probe.exchange(tb, ends[from_port], frames, ends, ethertypes=ethertypes)


_CASE = re.compile(r"\s*(udp|tcp|icmp-echo|icmp-reply)\s+([\d.]+)(?::(\d+))?\s*-?>\s*([\d.]+)(?::(\d+))?"
                   r"(?:\s+ttl\s+(\d+))?\s*")


def parse_case(text: str, from_port: int = 0, sport: int = 1234) -> bytes:
    """A frame from a line such as ``"tcp 10.70.1.2 > 10.71.0.5:22"`` or ``"udp 10.70.1.2 >
    10.71.0.5 ttl 1"`` (udp, tcp; icmp-echo, icmp-reply without a port; the port 5000 and
    the TTL 64 when not given; ``->`` for ``>`` too), from source port (or ICMP
    identifier) ``sport`` unless the line gives one (``"udp 10.70.1.2:1234 > ..."``),
    into port ``from_port``. Raises ValueError naming what it expected."""
    m = _CASE.fullmatch(text)
    if not m:
        raise ValueError(f"not a packet: {text!r} (expected e.g. 'tcp 10.70.1.2 > 10.71.0.5:22' "
                         "or 'udp 10.70.1.2 > 10.71.0.5 ttl 1')")
    proto, src, source_port, dst, port, ttl = m.groups()
    import ipaddress

    for addr in (src, dst):
        try:
            ipaddress.IPv4Address(addr)
        except ValueError:
            raise ValueError(f"not a packet: {text!r} ({addr} is not an IPv4 address)") from None
    ttl = int(ttl) if ttl else 64
    if not 0 <= ttl <= 255 or any(p and not 0 < int(p) < 65536 for p in (port, source_port)):
        raise ValueError(f"not a packet: {text!r} (a port is 1-65535, a TTL 0-255)")
    if proto.startswith("icmp"):
        if port or source_port:
            raise ValueError(f"not a packet: {text!r} (ICMP has no port)")
        return frame(dst, src=src, proto="icmp", icmp_type=8 if proto == "icmp-echo" else 0, sport=sport,
                     from_port=from_port, ttl=ttl)
    return frame(dst, src=src, proto=proto, sport=int(source_port or sport), dport=int(port or 5000),
                 from_port=from_port, ttl=ttl)


#: The address of the host on each side of the device under test, which sends an ARP request.
HOSTS = {0: "10.70.1.2", 1: "10.70.2.2"}


def packet_line(text: str) -> tuple[bytes, int]:
    """A packet to try and the port it goes in by, from a line: :func:`parse_case`'s form
    (``"udp 10.70.1.2 > 10.71.0.5 ttl 1"``) or ``"arp 10.70.1.1"`` (who has it, asked by
    the host on that side), after ``"out:"`` to send it in from the sink's side (port 1;
    ``"in:"``, port 0, is the default). Raises ValueError naming what it expected."""
    side, colon, rest = text.partition(":")
    port = 0
    if colon and side.strip() in SIDES:
        port, text = SIDES[side.strip()], rest
    m = re.fullmatch(r"\s*arp\s+([\d.]+)\s*", text)
    if m:
        import ipaddress

        try:
            ipaddress.IPv4Address(m.group(1))
        except ValueError:
            raise ValueError(f"not a packet: {text.strip()!r} ({m.group(1)} is not an IPv4 address)") from None
        return arp_request(m.group(1), src=HOSTS[port], from_port=port), port
    try:
        return parse_case(text, from_port=port), port
    except ValueError as e:
        raise ValueError(f"{e}; or 'arp 10.70.1.1', and 'out:' in front to send from the sink's side") from None


def try_session(send, lines, ports: dict[int, str], show, commands: dict | None = None) -> int:
    """Send each packet of ``lines`` (:func:`packet_line`; blank lines and ``#`` comments
    skipped) with ``send(frames, port)``, which returns what left on each port, and
    ``show`` (called with one line of text) in words what went in and what came back on
    which port; a line that is no packet is shown with why and skipped. ``lines``: any
    iterable of text lines (the command line gives the ones typed on standard input,
    :class:`routerlab.cli.common.TypedLines`). ``commands``: lines whose first word is
    one of its keys go to its function with the rest of the line, and what it returns is
    shown (an error is shown with ``?`` and the session goes on). Returns the number of
    packets sent."""
    from routerlab.errors import RouterlabError

    sent = 0
    for line in lines:
        if not line.strip() or line.strip().startswith("#"):
            continue
        word, _, rest = line.strip().partition(" ")
        if commands and word in commands:
            try:
                show(commands[word](rest.strip()))
            except RouterlabError as e:
                show(f"? {e}")
            continue
        try:
            frame_, port = packet_line(line.strip())
        except ValueError as e:
            show(f"? {e}")
            continue
        got = send([frame_], port)
        sent += 1
        show(f"sent {describe(frame_)} into {ports[port]}")
        for p in (0, 1):
            for f in got[p]:
                show(f"  left on {ports[p]}: {describe(f)}")
        if not got[0] and not got[1]:
            show("  nothing came back (dropped, or sent nowhere)")
    return sent


@dataclass(frozen=True)
class ExtraCase:
    """One of an instructor's cases: the packet line ``send``, the port it goes in by
    (``from_port``), the port it must leave by (``leaves``, None: nowhere), ``why``, the
    frame itself, and what the packet that leaves must carry (``expect``: pairs of a
    :data:`FIELDS` name and its value in the file's order, ICMP's as (type, code or None))."""

    send: str
    from_port: int
    leaves: int | None
    why: str
    frame: bytes = field(repr=False)
    expect: tuple = ()


@dataclass(frozen=True)
class ExtraCounter:
    """A counter an instructor's file reads before and after its cases: a Click handler
    (``name``, e.g. ``out/sent.count``; ``index`` None) or a P4 counter (``name`` as the
    program's P4Info gives it, e.g. ``RlIngress.dropped``, at ``index``); ``increase``:
    how much it must go up (packets) while the cases run; ``why``; where it is written
    (``source``, ``line``) and its number ``n`` among the counters, for an error."""

    name: str
    index: int | None
    increase: int
    why: str
    source: str
    line: int | None
    n: int

    @property
    def label(self) -> str:
        """The counter as the track names it: ``out/sent.count``, ``RlIngress.dropped[1]``."""
        return self.name if self.index is None else f"{self.name}[{self.index}]"


class ExtraChecks(list):
    """An instructor's cases (:class:`ExtraCase`, in the file's order), with the counters
    read around them (``counters``, :class:`ExtraCounter`)."""

    def __init__(self, cases=(), counters=()):
        super().__init__(cases)
        self.counters = list(counters)


def read_extra_checks(path) -> ExtraChecks:
    """An instructor's cases from a YAML file: a mapping whose key ``cases`` lists mappings
    of :data:`CASE_KEYS`, e.g. ``{send: "udp 10.70.1.2:1234 > 10.71.0.77:53", leaves: out,
    expect: {ttl: 63, sport: 1234, checksum: valid}, why: "inside 10.71.0.0/16"}``, and
    whose optional key ``counters`` lists mappings of :data:`COUNTER`'s keys, e.g.
    ``{handler: out/sent.count, increase: 1}``. Raises
    :class:`routerlab.errors.DataFormatError` naming the file, the line and what is wrong
    (an unknown key among them)."""
    from routerlab.errors import DataFormatError

    path = str(path)
    doc = yamlfile.load(path, "the extra checks")
    yamlfile.check(doc, EXTRA_CHECKS, path)
    out = ExtraChecks()
    for i, case in enumerate(doc["cases"], 1):
        def bad(key, why):
            return DataFormatError(path, yamlfile.line_of(case, key), f"case {i}: {why}")

        side = case.get("from", "in")
        if side not in SIDES:
            raise bad("from", f"from must be in or out, got {side!r}")
        leaves = case["leaves"]
        if leaves not in (*SIDES, "nowhere"):
            raise bad("leaves", f"leaves must be in, out or nowhere, got {leaves!r}")
        fields = case.get("expect") or {}
        if fields and leaves == "nowhere":
            raise bad("expect", "expect is about the packet that leaves: leaves must be in or out, not nowhere")
        send = str(case["send"])
        try:
            f = parse_case(send, from_port=SIDES[side], sport=3000 + i)
        except ValueError as e:
            raise bad("send", str(e)) from None
        expect = tuple((k, (v["type"], v.get("code")) if k == "icmp" else v) for k, v in fields.items())
        out.append(ExtraCase(send, SIDES[side], SIDES.get(leaves),
                             "" if case.get("why") is None else str(case["why"]), f, expect))
    for i, c in enumerate(doc.get("counters") or [], 1):
        line = yamlfile.line_of(c)
        if ("handler" in c) == ("counter" in c):
            raise DataFormatError(path, line, f"counter {i}: give handler (a Click handler, e.g. out/sent.count) "
                                              "or counter (a P4 counter, e.g. RlIngress.dropped), one of them")
        if "handler" in c and "index" in c:
            raise DataFormatError(path, yamlfile.line_of(c, "index"),
                                  f"counter {i}: index is a P4 counter's; a Click handler has none")
        out.counters.append(ExtraCounter(c.get("handler") or c["counter"], None if "handler" in c else c.get("index", 0),
                                         c["increase"], "" if c.get("why") is None else str(c["why"]), path, line, i))
    return out


def counters_for(extra, track: str) -> list[ExtraCounter]:
    """The counters of ``extra`` (:func:`read_extra_checks`'s; none for a plain list of
    cases), each one that ``track`` reads: a Click handler for "click", a P4 counter for
    "p4". Raises :class:`routerlab.errors.DataFormatError` naming the file and line of
    one it does not read, before anything runs."""
    from routerlab.errors import DataFormatError

    counters = getattr(extra, "counters", [])
    for c in counters:
        if (c.index is None) != (track == "click"):
            raise DataFormatError(c.source, c.line, f"counter {c.n}: " + (
                "the Click track reads a handler (handler: ELEMENT.HANDLER, e.g. out/sent.count), not a P4 counter"
                if track == "click" else
                "the P4 track reads a counter of the program (counter: NAME, e.g. RlIngress.dropped, and index: N), "
                "not a Click handler"))
    return counters


def field_faults(pkt, fields: tuple) -> str:
    """What ``pkt`` (a scapy packet) carries that a case's ``expect`` (``fields``,
    :attr:`ExtraCase.expect`) does not, each as "NAME ACTUAL (expected VALUE)" (a checksum
    as :func:`checksum_faults` says it); "" when it carries them all."""
    L = scapy_layers()
    if not fields:
        return ""
    if L["IP"] not in pkt:
        return "not IPv4"
    ip = pkt[L["IP"]]  # the outer header: an ICMP error's own, not the one it quotes
    wrong = []
    for name, want in fields:
        if name == "checksum":
            if want == "valid":
                wrong += checksum_faults(pkt)
            elif ip.chksum != want:
                wrong.append(f"IPv4 header checksum 0x{ip.chksum:04x} (expected 0x{want:04x})")
        elif name == "icmp":
            got = (pkt[L["ICMP"]].type, pkt[L["ICMP"]].code) if L["ICMP"] in pkt else None
            if got is None or got[0] != want[0] or want[1] not in (None, got[1]):
                wrong.append(("not ICMP" if got is None else f"ICMP type {got[0]} code {got[1]}")
                             + f" (expected {_fields_text([(name, want)])})")
        elif name in ("sport", "dport"):
            l4 = pkt[L["TCP"]] if L["TCP"] in pkt else pkt[L["UDP"]] if L["UDP"] in pkt else None
            if l4 is None or getattr(l4, name) != want:
                wrong.append(f"{name} " + ("none: no UDP or TCP header" if l4 is None else str(getattr(l4, name)))
                             + f" (expected {want})")
        elif getattr(ip, name) != want:  # ttl, src, dst
            wrong.append(f"{name} {getattr(ip, name)} (expected {want})")
    return ", ".join(wrong)


def _fields_text(fields) -> str:
    """A case's ``expect`` in words: "ttl 63, src 10.70.1.1, checksum valid, ICMP type 11 code 0"."""
    def one(name, value):
        if name == "icmp":
            return f"ICMP type {value[0]}" + (f" code {value[1]}" if value[1] is not None else "")
        return f"checksum 0x{value:04x}" if name == "checksum" and value != "valid" else f"{name} {value}"
    return ", ".join(one(n, v) for n, v in fields)


def hint(sent: bytes, port: int, got: dict[int, list], expected: str, ports: dict[int, str], note: str = "") -> str:
    """A failure in one line: "sent ... into P; got ... on Q[ note]; expected ..."; ``got``
    is what left on each port (scapy packets), ``ports`` names the ports as the track
    does, ``note`` is added after what came back."""
    back = "; ".join(describe(got[p][0]) + (f" (and {len(got[p]) - 1} more)" if len(got[p]) > 1 else "")
                     + f" on {ports[p]}" for p in (0, 1) if got[p]) or "nothing"
    return f"sent {describe(sent)} into {ports[port]}; got {back}{note}; expected {expected}"


def expect(send, hint, name: str, sent: bytes, port: int, leaves: int | None, expected: str,
           test=lambda p: "") -> tuple[Expectation, object]:
    """Send one frame into ``port``: ``send(frames, port)`` returns what left on each
    port (scapy packets), ``hint(sent, port, got, expected)`` says what happened in the
    track's words. With ``leaves`` a port, pass when exactly one packet leaves, by it
    only, and ``test`` (packet -> what is wrong, "" if nothing) finds nothing wrong with
    it; with ``leaves`` None, when nothing leaves. Returns the expectation and the packet
    that left (None when it failed before looking at one)."""
    got = send([sent], port)
    if leaves is None:
        ok = not got[0] and not got[1]
        return Expectation(name, ok, "" if ok else hint(sent, port, got, expected)), None
    if len(got[leaves]) != 1 or got[1 - leaves]:
        return Expectation(name, False, hint(sent, port, got, expected)), None
    p = got[leaves][0]
    wrong = test(p)
    return Expectation(name, not wrong, f"{wrong}: {hint(sent, port, got, expected)}" if wrong else ""), p


def extra_expectations(send, hint, cases: list[ExtraCase], ports: dict[int, str], read=None) -> list[Expectation]:
    """Each case sent on its own: ``send(frames, port)`` returns what left on each port
    (scapy packets), ``hint(sent, port, got, expected)`` says what happened in the track's
    words. A case passes when exactly one packet leaves, by its ``leaves`` port, carrying
    what its ``expect`` says (:func:`field_faults`), or none leaves at all for
    ``nowhere``. ``ports`` names the ports as the track does ($IN_DEV, port 0...).

    Then each of the file's counters (``cases.counters``, :func:`counters_for`), read
    with ``read(counter)`` (its value, a whole number or its text; raises
    :class:`routerlab.errors.RouterlabError` when the router has no such counter) before
    the first case and after the last: it passes when it went up by its ``increase``."""
    counters = getattr(cases, "counters", [])
    before = [_count(read, c) for c in counters]
    out = []
    for c in cases:
        where = f"leaves on {ports[c.leaves]}" if c.leaves is not None else "is dropped"
        carrying = f" with {_fields_text(c.expect)}" if c.expect else ""
        name = f"extra: {c.send} into {ports[c.from_port]} {where}{carrying}" + (f" ({c.why})" if c.why else "")
        expected = (f"one packet on {ports[c.leaves]}{carrying}" if c.leaves is not None else "nothing (dropped)")
        e, _ = expect(send, hint, name, c.frame, c.from_port, c.leaves, expected,
                      lambda p, c=c: field_faults(p, c.expect))
        e.step = None
        out.append(e)
    for c, (was, why) in zip(counters, before):
        now, why = _count(read, c) if why is None else (None, why)
        up = None if why else now - was
        sent = f"sent the {len(cases)} extra case{'s' if len(cases) != 1 else ''}; {c.label} "
        detail = "" if up == c.increase else sent + (f"cannot be read: {why}" if why else
                                                     f"went from {was} to {now} (up by {up})") \
            + f"; expected it to go up by {c.increase}"
        out.append(Expectation(f"extra: {c.label} goes up by {c.increase} while the extra cases run"
                               + (f" ({c.why})" if c.why else ""), not detail, detail, step=None))
    return out


def _count(read, counter: ExtraCounter) -> tuple[int | None, str | None]:
    """(counter's value, None), or (None, why it cannot be read) (:func:`extra_expectations`)."""
    from routerlab.errors import RouterlabError

    try:
        value = read(counter)
    except RouterlabError as e:
        return None, str(e)
    try:
        return int(str(value).strip()), None
    except ValueError:
        return None, f"it says {' '.join(str(value).split())[:60]!r}, not a whole number"
