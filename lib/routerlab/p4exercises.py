"""The P4 course exercises' checks: real packets through bmv2 on the namespace testbed.

Each exercise (``p4/<name>/``) has a statement (README), a skeleton with numbered TODOs,
a solution and ``entries.json``. :func:`check` compiles a program (the solution, the
skeleton or a student's file), starts simple_switch with the exercise's entries on a
fresh testbed, sends scapy-built packets from the generator side (port 0) or the sink
side (port 1) and reports which expectations pass. ``routerlab p4 check <name>`` prints
them; CI runs them against every solution.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from .checks import Expectation, describe, extra_expectations, frame, hint, ip_checksum_right, scapy_layers, \
    through
from .engines import p4
from .engines.bmv2 import Bmv2
from .errors import RouterlabError
from .testbed import Testbed

#: The switch's ports as the P4 checks name them: 0 towards the generator, 1 towards the sink.
PORTS = {0: "port 0", 1: "port 1"}


def _scapy():
    L = scapy_layers()
    return L["Ether"], L["IP"], L["UDP"], L["TCP"], L["GRE"]


class Run:
    """A started exercise: send frames and see where they come out."""

    def __init__(self, tb: Testbed, engine: Bmv2):
        self.tb, self.engine = tb, engine

    def send(self, frames: list[bytes], from_port: int = 0) -> dict[int, list]:
        """Frames sent into port ``from_port``; returns the scapy packets seen leaving on
        each port (0: arrived at the generator side, 1: at the sink side)."""
        Ether = _scapy()[0]
        return {port: [Ether(f) for f in fs] for port, fs in through(self.tb, frames, from_port).items()}

    @staticmethod
    def hint(sent: bytes, from_port: int, got: dict[int, list], expected: str) -> str:
        """"sent ... into port N; got ... on port M; expected ..." for a failure."""
        return hint(sent, from_port, got, expected, PORTS)

    def expect(self, name: str, sent: bytes, leaves: int | None, test=lambda p: "", from_port: int = 0,
               expected: str = "") -> tuple[Expectation, object]:
        """Send one frame; pass when exactly one packet leaves, on port ``leaves`` only,
        and ``test`` (packet -> what is wrong, "" if nothing) finds nothing wrong with it;
        or, with ``leaves`` None, when nothing leaves. Returns the expectation and the
        packet that left (or None)."""
        got = self.send([sent], from_port)
        expected = expected or (f"one packet on {PORTS[leaves]}" if leaves is not None else "nothing (dropped)")
        if leaves is None:
            ok = not got[0] and not got[1]
            return Expectation(name, ok, "" if ok else self.hint(sent, from_port, got, expected)), None
        if len(got[leaves]) != 1 or got[1 - leaves]:
            return Expectation(name, False, self.hint(sent, from_port, got, expected)), None
        p = got[leaves][0]
        wrong = test(p)
        return (Expectation(name, not wrong, f"{wrong}: {self.hint(sent, from_port, got, expected)}" if wrong else ""),
                p)


def _check_router(run: Run) -> list[Expectation]:
    IP = _scapy()[1]
    m = Testbed.MACS

    def routed(p):
        wrong = []
        if p[IP].ttl != 63:
            wrong.append(f"TTL {p[IP].ttl}, not 63")
        if (p.src, p.dst) != (m["d1"], m["s0"]):
            wrong.append(f"MACs {p.src} -> {p.dst}, not {m['d1']} -> {m['s0']}")
        if not ip_checksum_right(p):
            wrong.append("wrong IPv4 checksum")
        return ", ".join(wrong)
    return [
        run.expect("10.71.0.5 leaves on port 1, TTL 64 -> 63, MACs rewritten, checksum right", frame("10.71.0.5"), 1,
                   routed, expected=f"it on port 1, TTL 63, MACs {m['d1']} -> {m['s0']}")[0],
        run.expect("10.71.0.200: the longer prefix (10.71.0.128/25) wins, out of port 0", frame("10.71.0.200"), 0)[0],
        run.expect("TTL 1 is dropped", frame("10.71.0.5", ttl=1), None)[0],
        run.expect("no route (10.99.0.1) is dropped", frame("10.99.0.1"), None)[0]]


def _check_firewall(run: Run) -> list[Expectation]:
    cases = [("UDP to port 5000 passes", frame("10.71.0.5"), True),
             ("UDP to port 9 is dropped (priority 1)", frame("10.71.0.5", dport=9), False),
             ("TCP to port 9 passes (the rule is for UDP)", frame("10.71.0.5", proto="tcp", dport=9), True),
             ("from 192.0.2.7 is dropped (priority 2)", frame("10.71.0.5", src="192.0.2.7"), False),
             ("TTL 1 is still dropped behind the ACL", frame("10.71.0.5", ttl=1), False)]
    return [run.expect(name, f, 1 if want else None)[0] for name, f, want in cases]


def _check_gre(run: Run) -> list[Expectation]:
    _, IP, UDP, _, GRE = _scapy()
    sent = frame("10.71.0.5")
    arrived, p = run.expect("the packet arrives at the sink, on port 1", sent, 1,
                            expected="one GRE packet on port 1")
    if p is None:
        return [arrived]
    got = f"got {describe(p)}"
    outer = p[IP]
    out = [Expectation("outer IPv4 10.70.2.1 -> 10.70.2.2, protocol 47 (GRE)",
                       (outer.src, outer.dst, outer.proto) == ("10.70.2.1", "10.70.2.2", 47),
                       f"{got}: outer {outer.src} -> {outer.dst}, protocol {outer.proto}; "
                       "expected 10.70.2.1 -> 10.70.2.2, protocol 47")]
    length_ok = GRE in p and outer.len == p[GRE].payload.len + 24
    out.append(Expectation("outer checksum right and total length = inner + 24",
                           ip_checksum_right(p) and length_ok,
                           f"{got}: checksum {'right' if ip_checksum_right(p) else 'wrong'}, total length {outer.len}"
                           + (f"; expected {p[GRE].payload.len + 24} (inner {p[GRE].payload.len} + 24)"
                              if GRE in p else "; no GRE header")))
    ok = GRE in p and p[GRE].proto == 0x0800 and bytes(p[GRE])[:2] == b"\0\0"
    out.append(Expectation("GRE header: no flags, version 0, protocol 0x0800", ok,
                           f"{got}: GRE header {bytes(p[GRE])[:4].hex() if GRE in p else 'missing'}; "
                           "expected 00000800"))
    inner = p[GRE].payload if GRE in p else None
    ok = inner is not None and inner.dst == "10.71.0.5" and inner.ttl == 63 and UDP in inner
    out.append(Expectation("inner packet: routed (TTL 63), intact", ok,
                           f"{got}: inner {describe(inner) if inner is not None else 'missing'}; "
                           "expected UDP 10.70.1.2:1234 > 10.71.0.5:5000 TTL 63"))
    return out


def _check_shortcut(run: Run) -> list[Expectation]:
    eng = run.engine
    out = [run.expect("D1 (10.71.0.0/25) leaves on its primary, port 1", frame("10.71.0.5"), 1)[0]]
    eng.register_write("RlIngress.port_down", 1, 1)
    out.append(run.expect("port 1 down: D1 moves to its backup, port 0", frame("10.71.0.5"), 0)[0])
    eng.register_write("RlIngress.port_down", 1, 0)
    out.append(run.expect("a packet for D2 arriving from D2's next hop (port 1) is a loop: "
                          "it leaves on the backup, port 0", frame("10.71.0.200", from_port=1), 0, from_port=1)[0])
    out.append(run.expect("D2 stays on its backup afterwards, without the control plane",
                          frame("10.71.0.201", from_port=1), 0, from_port=1)[0])
    loops = eng.counter("RlIngress.switched", 1)
    # 2 if the choice was not remembered: the second packet would have been a "new" loop
    out.append(Expectation("the switched counter saw exactly one loop", loops == 1,
                           f"RlIngress.switched[1] says {loops}; expected 1 (the first loop only)"))
    return out


CHECKS: dict[str, Callable[[Run], list[Expectation]]] = {
    "router": _check_router, "firewall": _check_firewall, "gre": _check_gre, "shortcut": _check_shortcut}


def check(exercise: str, program: str | Path | None = None, solution: bool = True,
          log: str | Path | None = None, extra: list | None = None) -> list[Expectation]:
    """Run exercise ``exercise``'s check against ``program`` (a .p4 file), or against the
    exercise's solution (``solution=True``) or skeleton. Needs root and bmv2's logging
    build (``bmv2-log``), which logs every packet; ``log``: a file to write that log to
    (each packet's parser states, tables and actions, as ``simple_switch --log-console``
    prints them). ``extra``: an instructor's cases
    (:func:`routerlab.checks.read_extra_checks`), sent after the exercise's own
    expectations."""
    if exercise not in CHECKS:
        from .errors import ParameterError

        raise ParameterError("exercise", f"unknown exercise {exercise!r}; known: {', '.join(CHECKS)}")
    eng = Bmv2()
    eng.log_packets = True
    eng.check()
    entries_file = p4.p4_dir() / exercise / "entries.json"
    entries = p4.read_entries(entries_file)
    with Testbed(generator="rlgen") as tb:  # checks capture at the sink: no XDP sink
        try:
            try:
                eng.run(tb, program or exercise, entries, solution=solution, source=str(entries_file))
            except RouterlabError as e:
                # a student's program that does not compile or lacks a table is a result, not a crash
                return [Expectation("compiles and takes the exercise's table entries", False, str(e))]
            run = Run(tb, eng)
            return ([Expectation("compiles and takes the exercise's table entries", True)] + CHECKS[exercise](run)
                    + extra_expectations(run.send, run.hint, extra or [], PORTS))
        finally:
            packets = eng.packet_log() if log is not None else ""
            eng.stop(tb)
            if log is not None:
                try:
                    Path(log).write_text(packets)
                except OSError as e:
                    raise RouterlabError(f"--log {log}: {e.strerror}") from None
