"""The P4 course exercises' checks: real packets through bmv2 on the namespace testbed.

Each exercise (``p4/<name>/``) has a statement (README), a skeleton with numbered TODOs,
a solution and ``entries.json``. :func:`check` compiles a program (the solution, the
skeleton or a student's file), starts simple_switch with the exercise's entries on a
fresh testbed, sends scapy-built packets from the generator side (port 0) or the sink
side (port 1) and reports which expectations pass, each with the TODO step after which
it holds. ``routerlab p4 check <name>`` prints them; CI runs them against every solution.
Without root the testbed is made in user and network namespaces of the check's own
(:mod:`routerlab.testbed.userns`). :func:`try_program` starts the same switch and sends it
packets a student describes.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Callable

from routerlab.testbed import userns
from routerlab.course.checks import ARP, at_step, counters_for, describe, expect, Expectation, extra_expectations, frame, hint, ip_checksum_right, IPV4, scapy_layers, through, try_session
from routerlab.engines import p4
from routerlab.engines.bmv2 import Bmv2
from routerlab.errors import DataFormatError, NotStarted, RouterlabError
from routerlab.testbed.namespaces import NamespaceTestbed

#: The switch's ports as the P4 checks name them: 0 towards the generator, 1 towards the sink.
PORTS = {0: "port 0", 1: "port 1"}


def _scapy():
    L = scapy_layers()
    return L["Ether"], L["IP"], L["UDP"], L["TCP"], L["GRE"]


class Run:
    """A started exercise: send frames and see where they come out."""

    def __init__(self, tb: NamespaceTestbed, engine: Bmv2):
        self.tb, self.engine = tb, engine
        #: The exercise's entries the program did not take, each with why (a skeleton's).
        self.refused: list[str] = []
        #: How many entries were written.
        self.loaded = 0
        #: The program's tables and counters (:class:`routerlab.engines.p4.Pipeline`).
        self.pipeline = None

    def send(self, frames: list[bytes], from_port: int = 0) -> dict[int, list]:
        """Frames sent into port ``from_port``; returns the scapy packets seen leaving on
        each port (0: arrived at the generator side, 1: at the sink side)."""
        Ether = _scapy()[0]
        return {port: [Ether(f) for f in fs] for port, fs in through(self.tb, frames, from_port).items()}

    def counter(self, c) -> int:
        """Packets of an instructor's counter ``c`` (:class:`routerlab.course.checks.ExtraCounter`);
        raises :class:`RouterlabError` saying why it cannot be read."""
        # looked up in the program's P4Info first: the control planes' own refusals of a
        # name or index it lacks are not all one line
        cells = self.pipeline.counters
        if c.name not in cells:
            raise RouterlabError(f"the program has no counter {c.name} (it has {', '.join(cells) or 'none'})")
        if c.index >= cells[c.name]:
            raise RouterlabError(f"{c.name} has {cells[c.name]} cells, 0-{cells[c.name] - 1}")
        return self.engine.counter(c.name, c.index)

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
        expected = expected or (f"one packet on {PORTS[leaves]}" if leaves is not None else "nothing (dropped)")
        return expect(self.send, self.hint, name, sent, from_port, leaves, expected, test)


def _check_router(run: Run) -> list[Expectation]:
    IP = _scapy()[1]
    m = NamespaceTestbed.MACS

    def routed(p, src="d1", dst="s0"):
        wrong = []
        if p[IP].ttl != 63:
            wrong.append(f"TTL {p[IP].ttl}, not 63")
        if (p.src, p.dst) != (m[src], m[dst]):
            wrong.append(f"MACs {p.src} -> {p.dst}, not {m[src]} -> {m[dst]}")
        if not ip_checksum_right(p):
            wrong.append("wrong IPv4 checksum")
        return ", ".join(wrong)
    # forward's body (TODO 1) and the table's key (TODO 2) show once apply (TODO 3) runs them
    return at_step(3, *[
        run.expect("10.71.0.5 leaves on port 1, TTL 64 -> 63, MACs rewritten, checksum right", frame("10.71.0.5"), 1,
                   routed, expected=f"it on port 1, TTL 63, MACs {m['d1']} -> {m['s0']}")[0],
        run.expect("10.71.0.200: the longer prefix (10.71.0.128/25) wins, out of port 0", frame("10.71.0.200"), 0,
                   lambda p: routed(p, "d0", "g0"), expected=f"it on port 0, TTL 63, MACs {m['d0']} -> {m['g0']}")[0],
        run.expect("TTL 1 is dropped", frame("10.71.0.5", ttl=1), None)[0],
        run.expect("no route (10.99.0.1) is dropped", frame("10.99.0.1"), None)[0]])


def _check_firewall(run: Run) -> list[Expectation]:
    cases = [("UDP to port 5000 passes", frame("10.71.0.5"), True),
             ("UDP to port 9 is dropped (priority 1)", frame("10.71.0.5", dport=9), False),
             ("TCP to port 9 passes (the rule is for UDP)", frame("10.71.0.5", proto="tcp", dport=9), True),
             ("from 192.0.2.7 is dropped (priority 2)", frame("10.71.0.5", src="192.0.2.7"), False),
             ("TTL 1 is still dropped behind the ACL", frame("10.71.0.5", ttl=1), False)]
    return at_step(2, *[run.expect(name, f, 1 if want else None)[0] for name, f, want in cases])


#: What the GRE check takes apart in the packet that arrives at the sink.
GRE_PARTS = ("outer IPv4 10.70.2.1 -> 10.70.2.2, protocol 47 (GRE)", "outer checksum right and total length = inner + 24",
             "GRE header: no flags, version 0, protocol 0x0800", "inner packet: routed (TTL 63), intact")


def _check_gre(run: Run) -> list[Expectation]:
    _, IP, UDP, _, GRE = _scapy()
    sent = frame("10.71.0.5")
    arrived, p = run.expect("the packet arrives at the sink, on port 1", sent, 1,
                            expected="one GRE packet on port 1")
    if p is None:
        return [arrived] + [Expectation(name, False, "not tried: no packet arrived at the sink", step=3)
                            for name in GRE_PARTS]
    got = f"got {describe(p)}"
    outer = p[IP]
    out = [Expectation(GRE_PARTS[0],
                       (outer.src, outer.dst, outer.proto) == ("10.70.2.1", "10.70.2.2", 47),
                       f"{got}: outer {outer.src} -> {outer.dst}, protocol {outer.proto}; "
                       "expected 10.70.2.1 -> 10.70.2.2, protocol 47")]
    length_ok = GRE in p and outer.len == p[GRE].payload.len + 24
    out.append(Expectation(GRE_PARTS[1],
                           ip_checksum_right(p) and length_ok,
                           f"{got}: checksum {'right' if ip_checksum_right(p) else 'wrong'}, total length {outer.len}"
                           + (f"; expected {p[GRE].payload.len + 24} (inner {p[GRE].payload.len} + 24)"
                              if GRE in p else "; no GRE header")))
    ok = GRE in p and p[GRE].proto == 0x0800 and bytes(p[GRE])[:2] == b"\0\0"
    out.append(Expectation(GRE_PARTS[2], ok,
                           f"{got}: GRE header {bytes(p[GRE])[:4].hex() if GRE in p else 'missing'}; "
                           "expected 00000800"))
    inner = p[GRE].payload if GRE in p else None
    ok = inner is not None and inner.dst == "10.71.0.5" and inner.ttl == 63 and UDP in inner
    out.append(Expectation(GRE_PARTS[3], ok,
                           f"{got}: inner {describe(inner) if inner is not None else 'missing'}; "
                           "expected UDP 10.70.1.2:1234 > 10.71.0.5:5000 TTL 63"))
    # the outer header (TODO 1) and GRE's (TODO 2) show once the tunnel table is applied (TODO 3)
    return [arrived] + at_step(3, *out)


def _check_shortcut(run: Run) -> list[Expectation]:
    eng = run.engine
    out = [run.expect("D1 (10.71.0.0/25) leaves on its primary, port 1", frame("10.71.0.5"), 1)[0]]
    eng.register_write("RlIngress.port_down", 1, 1)
    out += at_step(2, run.expect("port 1 down: D1 moves to its backup, port 0", frame("10.71.0.5"), 0)[0])
    eng.register_write("RlIngress.port_down", 1, 0)
    out += at_step(1, run.expect("a packet for D2 arriving from D2's next hop (port 1) is a loop: "
                                 "it leaves on the backup, port 0", frame("10.71.0.200", from_port=1), 0,
                                 from_port=1)[0])
    # TODO 1 alone keeps it there too (the loop is found again); the counter tells TODO 3
    out += at_step(1, run.expect("D2 stays on its backup afterwards, without the control plane",
                                 frame("10.71.0.201", from_port=1), 0, from_port=1)[0])
    loops = eng.counter("RlIngress.switched", 1)
    # 2 if the choice was not remembered: the second packet would have been a "new" loop
    out.append(Expectation("the switched counter saw exactly one loop", loops == 1,
                           "" if loops == 1 else f"RlIngress.switched[1] says {loops}; expected 1 (the first loop only)",
                           step=3))
    return out


CHECKS: dict[str, Callable[[Run], list[Expectation]]] = {
    "router": _check_router, "firewall": _check_firewall, "gre": _check_gre, "shortcut": _check_shortcut}


def check(exercise: str, program: str | Path | None = None, solution: bool = True,
          log: str | Path | None = None, extra: list | None = None,
          own_namespace: bool | None = None) -> list[Expectation]:
    """Run exercise ``exercise``'s check against ``program`` (a .p4 file), or against the
    exercise's solution (``solution=True``) or skeleton. Needs bmv2's logging build
    (``bmv2-log``), which logs every packet; ``log``: a file to write that log to (each
    packet's parser states, tables and actions, as ``simple_switch --log-console`` prints
    them). ``extra``: an instructor's cases (:func:`routerlab.course.checks.read_extra_checks`),
    sent after the exercise's own expectations, and the program's counters it reads
    around them (a Click handler among them raises
    :class:`~routerlab.errors.DataFormatError` before the switch starts).

    The testbed is made without CPU placement (the check looks at where packets go, not
    at how fast), in user and network namespaces of the caller's own
    (:mod:`routerlab.testbed.userns`) when ``own_namespace`` is True, or None (the default) and
    the caller is not root: no root needed."""
    _known(exercise)
    counters_for(extra, "p4")
    if userns.wanted(own_namespace):
        return userns.call("routerlab.course.p4exercises:check", exercise, str(Path(program).resolve()) if program else None,
                           solution=solution, log=str(Path(log).resolve()) if log else None, extra=extra,
                           own_namespace=False)
    try:
        with _switch(exercise, program, solution, log) as run:
            # a skeleton lacks what some entries need (a table's key, a table nothing
            # applies yet): it runs with the others, and this expectation says which
            took = Expectation(COMPILES, not run.refused, "\n".join(run.refused))
            return [took] + CHECKS[exercise](run) + extra_expectations(run.send, run.hint, extra or [], PORTS,
                                                                       read=run.counter)
    except NotStarted as e:
        # a student's program that does not compile is a result, not a crash
        return [Expectation(COMPILES, False, str(e))]


def try_program(exercise: str, lines, program: str | Path | None = None, solution: bool = False,
                own_namespace: bool | None = None, *, show: Callable[[str], None]) -> int:
    """Start exercise ``exercise``'s program (``program``, its solution or its skeleton)
    on bmv2 with its entries, as :func:`check` does (without root, in namespaces of its
    own), send it the packets ``lines`` describe, one at a time to the same switch, and
    ``show`` what came back on which port, a line at a time
    (:func:`routerlab.course.checks.try_session`). Returns the number sent; entries the
    program does not take are shown first and left out. Raises :class:`NotStarted` when
    the program does not compile. In namespaces of its own, ``lines`` and ``show`` are
    pickled to the process there: a list or a class's object, a module's function."""
    _known(exercise)
    if userns.wanted(own_namespace):
        return userns.call("routerlab.course.p4exercises:try_program", exercise, lines,
                           str(Path(program).resolve()) if program else None, solution=solution, own_namespace=False,
                           show=show)
    with _switch(exercise, program, solution) as run:
        for why in run.refused:
            show(f"left out, as the program does not take it: {why}")
        return _session(run, lines, show)


def _session(run: Run, lines, show: Callable[[str], None]) -> int:
    """:func:`routerlab.course.checks.try_session` on a started switch, where a line ``write
    {...}`` writes one table entry (runtime JSON, as in ``entries.json``) through the
    switch's control plane, P4Runtime where it runs, before the next packet."""
    def write(text: str) -> str:
        import json

        try:
            entry = json.loads(text)
        except json.JSONDecodeError as e:
            raise DataFormatError("write", None, f"not a JSON entry: {e.msg}") from None
        how = run.engine.write_entries([entry], source="write")
        return f"wrote 1 entry to {entry.get('table')} ({how})"
    return try_session(lambda frames, port: through(run.tb, frames, port, ethertypes=(IPV4, ARP)), lines, PORTS,
                       show, commands={"write": write})


def run_program(program: str | Path, entries_file: str | Path, lines, own_namespace: bool | None = None, *,
                show: Callable[[str], None]) -> int:
    """Start ``program`` (any .p4 file for v1model, e.g. a p4lang/tutorials exercise as it
    is) on bmv2 with the table entries of ``entries_file`` (routerlab's ``entries.json`` or
    a tutorials ``sN-runtime.json``), written over P4Runtime where ``simple_switch_grpc``
    is installed; send it the packets ``lines`` describe and ``show`` what came back on
    which port, as :func:`try_program` does. The switch has two ports: 0 towards the
    generator, 1 towards the sink; what a program sends to another port is lost. Every
    entry is checked against the program before the first is written: one that does not
    fit raises :class:`~routerlab.errors.DataFormatError` naming it and the file."""
    if userns.wanted(own_namespace):
        return userns.call("routerlab.course.p4exercises:run_program", str(Path(program).resolve()),
                           str(Path(entries_file).resolve()), lines, own_namespace=False, show=show)
    with _switch(None, program, True, entries_file=entries_file, strict=True) as run:
        show(f"{Path(program).name} runs on bmv2 ({run.engine.control_plane()}) with "
             f"{run.loaded} table entries from {entries_file}")
        return _session(run, lines, show)


#: The first expectation of every P4 check.
COMPILES = "compiles and takes the exercise's table entries"


def _known(exercise: str):
    if exercise not in CHECKS:
        from routerlab.errors import ParameterError

        raise ParameterError("exercise", f"unknown exercise {exercise!r}; known: {', '.join(CHECKS)}")


@contextmanager
def _switch(exercise: str | None, program, solution: bool, log: str | Path | None = None,
            entries_file: str | Path | None = None, strict: bool = False):
    """bmv2's logging build running ``program`` with the exercise's entries (or those of
    ``entries_file``) on a testbed without placement, as a :class:`Run`; taken down after,
    ``log`` written then. ``strict``: an entry that does not fit the program is an error
    (:class:`~routerlab.errors.DataFormatError`, nothing written), not left out."""
    eng = Bmv2()
    eng.log_packets = True
    eng.check()
    entries_file = entries_file or p4.p4_dir() / exercise / "entries.json"
    entries = p4.read_entries(entries_file)
    with NamespaceTestbed(generator="rlgen", placement=False) as tb:  # checks capture at the sink: no XDP sink
        try:
            refused = None if strict else []
            # NotStarted when the program does not compile or does not take the entries
            facts = eng.run(tb, program or exercise, entries, solution=solution, source=str(entries_file),
                            refused=refused)
            run = Run(tb, eng)
            run.refused = refused or []
            run.loaded = facts["entries"]
            run.pipeline = p4.Pipeline(p4.compile_program(program or exercise, solution))  # compiled already
            yield run
        finally:
            packets = eng.packet_log() if log is not None else ""
            eng.stop(tb)
            if log is not None:
                try:
                    Path(log).write_text(packets)
                except OSError as e:
                    raise RouterlabError(f"--log {log}: {e.strerror}") from None
