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
none; :func:`extra_expectations` sends them after the exercise's own checks.
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
#: leave ("in", "out" or "nowhere") and, optionally, why.
CASE_KEYS = ("send", "from", "leaves", "why")


def _single(value):
    if isinstance(value, (dict, list)):
        raise ValueRefused("a single value")


#: An instructor's file of extra cases (:func:`read_extra_checks`): one key, cases.
EXTRA_CHECKS = yamlfile.Shape({"cases": yamlfile.ListOf(
    yamlfile.Shape(dict.fromkeys(CASE_KEYS, _single), required=("send", "leaves")),
    min=1, each="case {n}", what="a list of at least one case")}, required=("cases",))

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
    IP = scapy_layers()["IP"]
    p = IP(bytes(pkt[IP]))
    p.chksum = None
    return IP(bytes(p)).chksum == pkt[IP].chksum


def checksums_right(pkt) -> bool:
    """The IPv4 header checksum and, for TCP and UDP, the transport checksum (over the
    pseudo-header: what a NAT must fix) are right."""
    L = scapy_layers()
    if not ip_checksum_right(pkt):
        return False
    for name in ("TCP", "UDP"):
        if name in pkt:
            p = L["IP"](bytes(pkt[L["IP"]]))
            want = p[name].chksum
            p[name].chksum = None
            return L["IP"](bytes(p))[name].chksum == want
    return True


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


_CASE = re.compile(r"\s*(udp|tcp|icmp-echo|icmp-reply)\s+([\d.]+)\s*-?>\s*([\d.]+)(?::(\d+))?(?:\s+ttl\s+(\d+))?\s*")


def parse_case(text: str, from_port: int = 0, sport: int = 1234) -> bytes:
    """A frame from a line such as ``"tcp 10.70.1.2 > 10.71.0.5:22"`` or ``"udp 10.70.1.2 >
    10.71.0.5 ttl 1"`` (udp, tcp; icmp-echo, icmp-reply without a port; the port 5000 and
    the TTL 64 when not given; ``->`` for ``>`` too), from source port (or ICMP
    identifier) ``sport``, into port ``from_port``. Raises ValueError naming what it
    expected."""
    m = _CASE.fullmatch(text)
    if not m:
        raise ValueError(f"not a packet: {text!r} (expected e.g. 'tcp 10.70.1.2 > 10.71.0.5:22' "
                         "or 'udp 10.70.1.2 > 10.71.0.5 ttl 1')")
    proto, src, dst, port, ttl = m.groups()
    import ipaddress

    for addr in (src, dst):
        try:
            ipaddress.IPv4Address(addr)
        except ValueError:
            raise ValueError(f"not a packet: {text!r} ({addr} is not an IPv4 address)") from None
    ttl = int(ttl) if ttl else 64
    if not 0 <= ttl <= 255 or (port and not 0 < int(port) < 65536):
        raise ValueError(f"not a packet: {text!r} (a port is 1-65535, a TTL 0-255)")
    if proto.startswith("icmp"):
        if port:
            raise ValueError(f"not a packet: {text!r} (ICMP has no port)")
        return frame(dst, src=src, proto="icmp", icmp_type=8 if proto == "icmp-echo" else 0, sport=sport,
                     from_port=from_port, ttl=ttl)
    return frame(dst, src=src, proto=proto, sport=sport, dport=int(port or 5000), from_port=from_port, ttl=ttl)


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
    (``from_port``), the port it must leave by (``leaves``, None: nowhere), ``why``, and
    the frame itself."""

    send: str
    from_port: int
    leaves: int | None
    why: str
    frame: bytes = field(repr=False)


def read_extra_checks(path) -> list[ExtraCase]:
    """An instructor's cases from a YAML file: a mapping whose one key, ``cases``, lists
    mappings of :data:`CASE_KEYS`, e.g. ``{send: "udp 10.70.1.2 > 10.71.0.77", leaves:
    out, why: "inside 10.71.0.0/16"}``. Raises :class:`routerlab.errors.DataFormatError`
    naming the file, the line and what is wrong (an unknown key among them)."""
    from routerlab.errors import DataFormatError

    path = str(path)
    doc = yamlfile.load(path, "the extra checks")
    yamlfile.check(doc, EXTRA_CHECKS, path)
    out = []
    for i, case in enumerate(doc["cases"], 1):
        def bad(key, why):
            return DataFormatError(path, yamlfile.line_of(case, key), f"case {i}: {why}")

        side = case.get("from", "in")
        if side not in SIDES:
            raise bad("from", f"from must be in or out, got {side!r}")
        leaves = case["leaves"]
        if leaves not in (*SIDES, "nowhere"):
            raise bad("leaves", f"leaves must be in, out or nowhere, got {leaves!r}")
        send = str(case["send"])
        try:
            f = parse_case(send, from_port=SIDES[side], sport=3000 + i)
        except ValueError as e:
            raise bad("send", str(e)) from None
        out.append(ExtraCase(send, SIDES[side], SIDES.get(leaves),
                             "" if case.get("why") is None else str(case["why"]), f))
    return out


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


def extra_expectations(send, hint, cases: list[ExtraCase], ports: dict[int, str]) -> list[Expectation]:
    """Each case sent on its own: ``send(frames, port)`` returns what left on each port
    (scapy packets), ``hint(sent, port, got, expected)`` says what happened in the track's
    words. A case passes when exactly one packet leaves, by its ``leaves`` port, or none
    leaves at all for ``nowhere``. ``ports`` names the ports as the track does ($IN_DEV,
    port 0...)."""
    out = []
    for c in cases:
        where = f"leaves on {ports[c.leaves]}" if c.leaves is not None else "is dropped"
        name = f"extra: {c.send} into {ports[c.from_port]} {where}" + (f" ({c.why})" if c.why else "")
        expected = f"one packet on {ports[c.leaves]}" if c.leaves is not None else "nothing (dropped)"
        e, _ = expect(send, hint, name, c.frame, c.from_port, c.leaves, expected)
        e.step = None
        out.append(e)
    return out
