"""The Click course exercises' checks: a student's configuration, fed real frames.

Each exercise (``routers/exercises/<name>/``) has a task statement (README), a skeleton
configuration with numbered TODOs, a solution and ``check.yaml``, the data its check
uses (addresses, routes, the firewall's policy and cases). An exercise's configuration
takes the testbed's defines (``$IN_DEV``, ``$OUT_DEV``, ``$IN_MAC``, ``$OUT_MAC``,
``$PREV_MAC``, ``$NEXT_MAC``), as routerlab's own routers do.

:func:`check` first runs Click on the configuration without running the router
(``click -q``, :func:`routerlab.course.clickrouter.static_check`), with routerlab's
stand-ins for FromDevice and ToDevice, so that a
configuration that does not parse, connects a push output to a pull input, names an
element class this Click build lacks, or names a device that is not the testbed's is
reported as Click reports it (file and line), with a hint. Then it runs the router
(:mod:`routerlab.course.clickrouter`):

- on the testbed (as root, or without root in namespaces of the check's own for the
  measure exercise, :mod:`routerlab.testbed.userns`): the engine ``click`` runs the configuration
  in the device under test's namespace, as ``routerlab measure --config`` does, and frames
  built with scapy are sent from the generator's or the sink's namespace;
- from memory (no root, no link): FromDevice and ToDevice are replaced by Unix datagram
  sockets that routerlab writes the same frames into and reads them from. Everything but
  the measure exercise's load trial can be checked this way.

:func:`try_router` starts the same router and sends it packets a student describes.

Each exercise's check returns :class:`routerlab.course.checks.Expectation` s;
``routerlab click check <exercise>`` prints them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from routerlab.testbed import userns
from routerlab.course.checks import arp_request, at_step, checksums_right, counters_for, describe, expect, Expectation, extra_expectations, frame, ip_checksum_right, parse, parse_case, scapy_layers, try_session
from routerlab.course.clickrouter import (MEMORY_DEVICES, PORTS, START, MemoryRouter, Run, TestbedRouter, click_binary,
                                         close_matches, static_check)
from routerlab.version import project_dir
from routerlab.errors import DataFormatError, NotStarted, ParameterError, RouterlabError
from routerlab.testbed.namespaces import NamespaceTestbed

#: The exercises, in the order of the course.
EXERCISES = ("forward", "iprouter", "firewall", "nat", "loadbalancer", "measure")
#: The router the measure exercise measures: the student's router of this exercise.
MEASURED = "iprouter"
# -- the exercises as files ------------------------------------------------------------------

def exercises_dir() -> Path:
    """``routers/exercises`` of the clone or of the installed package."""
    return project_dir("routers") / "exercises"


def _known(exercise: str):
    if exercise not in EXERCISES:
        near = close_matches(exercise, EXERCISES)
        raise ParameterError("exercise", f"no exercise {exercise!r}" + (f"; did you mean {near[0]}?" if near else "")
                             + f" (the exercises: {', '.join(EXERCISES)})")


def exercise_data(exercise: str) -> dict:
    """The exercise's ``check.yaml``: what its check sends and expects."""
    from routerlab import yamlfile

    _known(exercise)
    path = exercises_dir() / exercise / "check.yaml"
    data = yamlfile.load(path, "the exercise's check.yaml")
    if not isinstance(data, dict) or "minutes" not in data:
        raise DataFormatError(str(path), yamlfile.line_of(data), "expected a mapping with at least 'minutes'")
    return data


def course() -> list[tuple[str, int, Path]]:
    """The exercises in the order of the course: (name, minutes a student takes, folder)."""
    return [(name, exercise_data(name)["minutes"], exercises_dir() / name) for name in EXERCISES]


def config_path(exercise: str, config: str | Path | None = None, solution: bool = False) -> Path:
    """The configuration to check: ``config`` if given, else the exercise's solution or its
    skeleton (for the measure exercise, those of the router it measures)."""
    _known(exercise)
    if config is not None:
        path = Path(config).resolve()
        if not path.is_file():
            raise ParameterError("--config", f"{config}: no such file")
        return path
    name = MEASURED if exercise == "measure" else exercise
    path = exercises_dir() / name / ("solution" if solution else "") / f"{name}.click"
    if not path.is_file():
        raise ParameterError("--solution" if solution else "exercise", f"{path}: no such file"
                             + (" (a copy handed out without the solutions)" if solution else ""))
    return path


# -- the checks ------------------------------------------------------------------------------

def _one_out(run: Run, name: str, sent: bytes, port: int, out_port: int, want: str,
             test: Callable[[object], str] = lambda p: "") -> tuple[Expectation, object]:
    """Send one frame; pass when exactly one frame leaves, on ``out_port`` only, and
    ``test`` finds nothing wrong with it (:func:`routerlab.course.checks.expect`)."""
    return expect(run.send, run.hint, name, sent, port, out_port, want, test)


def _nothing_out(run: Run, name: str, sent: bytes, port: int) -> Expectation:
    """Send one frame; pass when nothing leaves."""
    return expect(run.send, run.hint, name, sent, port, None, "nothing (dropped)")[0]


def _across(port: int, sport: int = 1234) -> bytes:
    """A UDP frame into ``port`` from the host on that side to one beyond the other."""
    return frame("10.71.0.5", src="10.70.1.2", sport=sport) if port == 0 else \
        frame("10.70.1.2", src="10.70.2.2", sport=sport, from_port=1)


def _check_forward(run: Run, data: dict) -> list[Expectation]:
    out = []
    for port in (0, 1):
        f = _across(port)
        e, _ = _one_out(run, f"a frame into {PORTS[port]} leaves on {PORTS[1 - port]}, unchanged", f, port, 1 - port,
                        f"the same frame on {PORTS[1 - port]}",
                        lambda p, f=f: "" if bytes(p) == f else "the frame was changed")
        out += at_step(2 if port == 0 else 3, e)
    n = data["burst"]
    for port, counter in ((0, data["counters"]["in"]), (1, data["counters"]["out"])):
        run.send([_across(port, sport=2000 + i) for i in range(n)], port)
        value, why = run.handler(f"{counter}.count")
        want = n + 1  # the first expectation sent one frame each way
        out.append(Expectation(f"{counter}.count counts the frames that came in on {PORTS[port]}",
                               value == str(want),
                               "" if value == str(want) else
                               f"sent {want} frames into {PORTS[port]}; {counter}.count "
                               + (f"says {value}" if value is not None else f"cannot be read: {why}")
                               + f"; expected {want} (name the Counter '{counter} :: Counter')",
                               step=1 if port == 0 else 3))
    return out


def _routed(p, src_mac: str, dst_mac: str, ttl: int) -> str:
    """What is wrong with a routed packet (TTL, checksum, MACs), or ""."""
    IP = scapy_layers()["IP"]
    if IP not in p:
        return "not IPv4"
    wrong = []
    if p[IP].ttl != ttl:
        wrong.append(f"TTL {p[IP].ttl}, not {ttl}")
    if not checksums_right(p):
        wrong.append("wrong checksum")
    if (p.src, p.dst) != (src_mac, dst_mac):
        wrong.append(f"Ethernet {p.src} -> {p.dst}, not {src_mac} -> {dst_mac}")
    return ", ".join(wrong)


def _icmp_error(p, kind: tuple[int, int], to: str, router: set[str], sent_dst: str) -> str:
    L = scapy_layers()
    if L["ICMP"] not in p:
        return "not ICMP"
    ic, ip = p[L["ICMP"]], p[L["IP"]]
    wrong = []
    if (ic.type, ic.code) != kind:
        wrong.append(f"type {ic.type} code {ic.code}, not {kind[0]}/{kind[1]}")
    if ip.dst != to or ip.src not in router:
        wrong.append(f"{ip.src} > {ip.dst}, not a router address > {to}")
    if L["IPerror"] not in p or p[L["IPerror"]].dst != sent_dst:
        wrong.append("does not quote the packet's header")
    if not checksums_right(p):
        wrong.append("wrong checksum")
    return ", ".join(wrong)


def _check_iprouter(run: Run, data: dict) -> list[Expectation]:
    L = scapy_layers()
    m = NamespaceTestbed.MACS
    addr = data["addresses"]
    router = set(addr.values())
    mac = {"in": (m["d0"], m["g0"]), "out": (m["d1"], m["s0"])}
    port_of = {"in": 0, "out": 1}
    out = []
    for side in ("in", "out"):
        p = port_of[side]
        sent = arp_request(addr[side], src="10.70.1.2" if side == "in" else "10.70.2.2", from_port=p)

        def arp_ok(pkt, side=side):
            a = pkt[L["ARP"]] if L["ARP"] in pkt else None
            if a is None or a.op != 2:
                return "not an ARP reply"
            return "" if (a.psrc, a.hwsrc) == (addr[side], mac[side][0]) else f"says {a.psrc} is-at {a.hwsrc}"
        out += at_step(2, _one_out(run, f"answers ARP for {addr[side]} on {PORTS[p]}: is-at {mac[side][0]}", sent, p,
                                   p, f"an ARP reply {addr[side]} is-at {mac[side][0]} on {PORTS[p]}", arp_ok)[0])
    for r in data["routes"]:
        leave = port_of[r["via"]]
        come = 1 - leave  # from the other side: a router forwards between its links
        src = "10.70.2.2" if come == 1 else "10.70.1.2"
        sent = frame(r["example"], src=src, from_port=come)
        smac, dmac = mac[r["via"]]
        name = (f"{r['example']} (route {r['prefix']}) leaves on {PORTS[leave]}: TTL 64 -> 63, checksum right, "
                f"Ethernet {smac} -> {dmac}" + (f"; {r['note']}" if r.get("note") else ""))
        out += at_step(5, _one_out(run, name, sent, come, leave, f"it on {PORTS[leave]}, TTL 63, {smac} -> {dmac}",
                                   lambda p, smac=smac, dmac=dmac: _routed(p, smac, dmac, 63))[0])
    dst = data["routes"][-1]["example"]
    # the untouched skeleton drops it too, so it belongs to no TODO: it must keep holding
    out += at_step(0, _nothing_out(run, "a packet with a wrong IP header checksum is dropped",
                                   frame(dst, bad_checksum=True), 0))
    icmp = len(out)
    out.append(_one_out(run, "TTL 1: dropped, and ICMP time exceeded (11/0) goes back to the sender on $IN_DEV",
                        frame(dst, ttl=1), 0, 0, "ICMP 11/0 from a router address to 10.70.1.2, quoting the packet",
                        lambda p: _icmp_error(p, (11, 0), "10.70.1.2", router, dst))[0])
    nr = data["no_route"]
    out.append(_one_out(run, f"no route ({nr}): dropped, and ICMP net unreachable (3/0) goes back to the sender",
                        frame(nr), 0, 0, "ICMP 3/0 from a router address to 10.70.1.2, quoting the packet",
                        lambda p: _icmp_error(p, (3, 0), "10.70.1.2", router, nr))[0])
    fragments = _check_fragmentation(run, data, dst, mac["out"], router)
    out += at_step(5, *fragments[:1]) + at_step(6, *fragments[1:])

    def echo_reply(p):
        if L["ICMP"] not in p or p[L["ICMP"]].type != 0:
            return "not an ICMP echo reply"
        return "" if p[L["IP"]].src == addr["in"] and checksums_right(p) else "wrong source or checksum"
    out.append(_one_out(run, f"a ping to {addr['in']} is answered (ICMP echo reply)",
                        frame(addr["in"], proto="icmp"), 0, 0, f"an ICMP echo reply from {addr['in']}",
                        echo_reply)[0])
    at_step(6, *out[icmp:icmp + 2], out[-1])
    return out


def _fragments(parts: list, sent) -> str:
    """What is wrong with ``parts`` (scapy packets, in the order they left) as the
    fragments of ``sent`` routed one hop, or ""."""
    IP = scapy_layers()["IP"]
    if any(IP not in p for p in parts):
        return "not all IPv4"
    ips = sorted((p[IP] for p in parts), key=lambda ip: ip.frag)
    whole, data, at = IP(bytes(sent)[14:]), b"", 0
    for i, ip in enumerate(ips):
        last = i == len(ips) - 1
        if ip.frag * 8 != at:
            return f"fragment offsets {[x.frag * 8 for x in ips]}: not one after the other"
        if bool(ip.flags.MF) == last:
            return "the more-fragments flag is wrong" + (" on the last" if last else f" on fragment {i + 1}")
        if ip.id != whole.id or ip.ttl != whole.ttl - 1 or (ip.src, ip.dst) != (whole.src, whole.dst):
            return "the fragments do not keep the packet's identification, addresses and TTL - 1"
        chunk = bytes(ip.payload)[:ip.len - ip.ihl * 4]
        data, at = data + chunk, at + len(chunk)
    if data != bytes(whole.payload):
        return "the fragments do not reassemble to the packet's payload"
    return ""


def _check_fragmentation(run: Run, data: dict, dst: str, macs: tuple[str, str], router: set[str]) -> list[Expectation]:
    """IPFragmenter($MTU) on the way out, with the MTU ``check.yaml`` gives the router
    (below the links'): a larger packet leaves in fragments; with DF set, it is dropped
    and ICMP fragmentation needed (3/4) goes back."""
    if "mtu" not in data:
        return []
    mtu, size = data["mtu"], data["large_packet"]
    IP = scapy_layers()["IP"]
    out = []
    sent = frame(dst, size=size)
    got = run.send([sent], 0)
    parts = got[1]
    hint = run.hint(sent, 0, got, f"fragments of at most {mtu} bytes on {PORTS[1]}")
    if len(parts) < 2 or got[0]:
        detail = hint
    else:
        too_big = [p[IP].len for p in parts if IP in p and p[IP].len > mtu]
        wrong = ((f"a fragment of {too_big[0]} bytes, over the MTU" if too_big else _fragments(parts, sent))
                 or next((w for w in (_routed_fragment(p, *macs) for p in parts) if w), ""))
        detail = f"{wrong}: {hint}" if wrong else ""
    out.append(Expectation(f"a {size:,}-byte packet to {dst} leaves on {PORTS[1]} in fragments of at most $MTU "
                           f"({mtu}) bytes that reassemble to it, each with TTL 63 and the link's Ethernet header",
                           not detail, detail))
    out.append(_one_out(run, f"a {size:,}-byte packet to {dst} with don't-fragment set: dropped, and ICMP "
                             "fragmentation needed (3/4) goes back to the sender", frame(dst, size=size, df=True), 0, 0,
                        "ICMP 3/4 from a router address to 10.70.1.2, quoting the packet",
                        lambda p: _icmp_error(p, (3, 4), "10.70.1.2", router, dst))[0])
    return out


def _routed_fragment(p, src_mac: str, dst_mac: str) -> str:
    """What is wrong with a fragment's IPv4 header checksum and Ethernet header, or ""."""
    wrong = []
    if not ip_checksum_right(p):
        wrong.append("wrong IPv4 checksum")
    if (p.src, p.dst) != (src_mac, dst_mac):
        wrong.append(f"Ethernet {p.src} -> {p.dst}, not {src_mac} -> {dst_mac}")
    return ", ".join(wrong)


def _check_firewall(run: Run, data: dict) -> list[Expectation]:
    out = []
    # every case in one go: a frame that passes comes out unchanged, so it names its case
    sent = [parse_case(case["send"], sport=2000 + i) for i, case in enumerate(data["cases"])]
    got = run.send(sent, 0)
    came = [bytes(p) for p in got[1]]
    denied = 0
    for case, f in zip(data["cases"], sent):
        want = case["verdict"]
        passed = f in came
        ok = passed == (want == "pass")
        denied += want == "drop"
        expected = f"it on {PORTS[1]}, unchanged" if want == "pass" else "nothing (denied)"
        out.append(Expectation(f"{case['send']}: {'passes' if want == 'pass' else 'is denied'} ({case['why']})", ok,
                               "" if ok else run.hint(f, 0, {0: [], 1: [parse(f)] if passed else []}, expected)))
    strays = [p for p in got[1] if bytes(p) not in sent] + got[0]
    if strays:
        out.append(Expectation("nothing else leaves: every frame that passes is one that was sent, unchanged", False,
                               f"got {describe(strays[0])}" + (f" and {len(strays) - 1} more" if len(strays) > 1 else "")
                               + " besides the frames sent"))
    at_step(1, *out)
    counter = data["counter"]
    value, why = run.handler(f"{counter}.count")
    out.append(Expectation(f"{counter}.count counts the packets the policy denied ({denied} here)",
                           value == str(denied),
                           "" if value == str(denied) else
                           f"{counter}.count " + (f"says {value}" if value is not None else f"cannot be read: {why}")
                           + f"; expected {denied} (name the Counter '{counter} :: Counter')", step=2))
    back = frame("10.70.1.2", src="10.71.0.5", from_port=1)
    out += at_step(3, _one_out(run, f"the way back is open: a packet into {PORTS[1]} leaves on {PORTS[0]}, "
                                    "unchanged", back, 1, 0, f"the same frame on {PORTS[0]}",
                               lambda p: "" if bytes(p) == back else "the frame was changed")[0])
    return out


def _l4(p):
    L = scapy_layers()
    return p[L["TCP"]] if L["TCP"] in p else p[L["UDP"]] if L["UDP"] in p else None


def _check_nat(run: Run, data: dict) -> list[Expectation]:
    L = scapy_layers()
    m = NamespaceTestbed.MACS
    public, (lo, hi) = data["public"], data["ports"]
    host, hport = data["inside"]["host"], data["inside"]["port"]
    server, sport = data["server"]["host"], data["server"]["port"]

    def mapped(p):
        l4 = _l4(p)
        if l4 is None:
            return "neither TCP nor UDP"
        wrong = []
        if p[L["IP"]].src != public or not lo <= l4.sport <= hi:
            wrong.append(f"from {p[L['IP']].src}:{l4.sport}, not {public}:{lo}-{hi}")
        if (p[L["IP"]].dst, l4.dport) != (server, sport):
            wrong.append(f"to {p[L['IP']].dst}:{l4.dport}, not {server}:{sport}")
        if not checksums_right(p):
            wrong.append("wrong IP or transport checksum")
        if (p.src, p.dst) != (m["d1"], m["s0"]):
            wrong.append(f"Ethernet {p.src} -> {p.dst}, not {m['d1']} -> {m['s0']}")
        return ", ".join(wrong)

    out = []
    first = None
    for proto in ("udp", "tcp"):
        sent = frame(server, src=host, proto=proto, sport=hport, dport=sport)
        e, p = _one_out(run, f"{proto.upper()} {host}:{hport} > {server}:{sport} leaves on {PORTS[1]} from "
                             f"{public}, port {lo}-{hi}, checksums right",
                        sent, 0, 1, f"it on {PORTS[1]} from {public}:{lo}-{hi}", mapped)
        out.append(e)
        if proto == "udp" and e.passed:
            first = p
    name = f"the reply ({server}:{sport} > {public}:<mapped port>) comes back on {PORTS[0]} to {host}:{hport}"
    if first is None:
        out.append(Expectation(name, False, "not tried: the first UDP packet was not mapped", step=3))
    else:
        reply = frame(public, src=server, sport=sport, dport=_l4(first).sport, from_port=1)

        def back(p):
            l4 = _l4(p)
            if l4 is None or (p[L["IP"]].dst, l4.dport, p[L["IP"]].src, l4.sport) != (host, hport, server, sport):
                return "not mapped back"
            if (p.src, p.dst) != (m["d0"], m["g0"]):
                return f"Ethernet {p.src} -> {p.dst}, not {m['d0']} -> {m['g0']}"
            return "" if checksums_right(p) else "wrong IP or transport checksum"
        out += at_step(3, _one_out(run, name, reply, 1, 0, f"it on {PORTS[0]} to {host}:{hport}", back)[0])
        again = frame(server, src=host, sport=hport, dport=sport)
        out.append(_one_out(run, "the same flow again keeps its public port", again, 0, 1,
                            f"it from {public}:{_l4(first).sport}",
                            lambda p: "" if _l4(p) and _l4(p).sport == _l4(first).sport else
                            f"public port {_l4(p).sport if _l4(p) else '-'}, not {_l4(first).sport}")[0])
        other = frame(server, src=host, sport=hport + 1, dport=sport)
        out.append(_one_out(run, f"another inside port ({hport + 1}) gets another public port", other, 0, 1,
                            f"it from {public} with a port other than {_l4(first).sport}",
                            lambda p: "" if _l4(p) and _l4(p).sport != _l4(first).sport else "the same public port")[0])
    at_step(2, *(e for e in out if e.step != 3))
    stray = frame(public, src=server, sport=sport, dport=data["stray_port"], from_port=1)
    # the untouched skeleton drops it too (TODO 1's "drop" keeps it so): no TODO's own
    out += at_step(0, _nothing_out(run, f"a packet from outside that no flow expects ({server}:{sport} > "
                                 f"{public}:{data['stray_port']}) is dropped", stray, 1))
    return out


def _check_loadbalancer(run: Run, data: dict) -> list[Expectation]:
    L = scapy_layers()
    m = NamespaceTestbed.MACS
    vip, backends = data["vip"], data["backends"]
    nflows, k = data["flows"], data["packets_per_flow"]
    flows = [(f"10.70.1.{2 + i % 4}", 3000 + i, "udp" if i % 2 == 0 else "tcp") for i in range(nflows)]
    frames = [frame(vip, src=s, sport=sp, dport=80, proto=pr) for _ in range(k) for s, sp, pr in flows]
    got = run.send(frames, 0)
    seen: dict[tuple, list] = {}
    bad = []
    for p in got[1]:
        l4 = _l4(p)
        if L["IP"] not in p or l4 is None:
            bad.append(describe(p))
            continue
        seen.setdefault((p[L["IP"]].src, l4.sport), []).append(p)
        wrong = _routed(p, m["d1"], m["s0"], p[L["IP"]].ttl) or ("" if p[L["IP"]].dst in backends and l4.dport == 80
                                                               else f"to {p[L['IP']].dst}:{l4.dport}")
        if wrong:
            bad.append(f"{describe(p)}: {wrong}")
    total = len(frames)
    name = (f"each of {total} packets for {vip} ({nflows} flows x {k}) leaves on {PORTS[1]} to a backend "
            f"({', '.join(backends)}), port kept, checksums right")
    ok = len(got[1]) == total and not got[0] and not bad
    out = [Expectation(name, ok, "" if ok else
                       f"sent {total} packets for {vip} into {PORTS[0]}; got {len(got[1])} on {PORTS[1]}, "
                       f"{len(got[0])} on {PORTS[0]}" + (f"; first wrong: {bad[0]}" if bad else "")
                       + f"; expected {total} on {PORTS[1]}, each to a backend")]
    split = {key: sorted({p[L["IP"]].dst for p in ps}) for key, ps in seen.items()}
    moved = {key: dsts for key, dsts in split.items() if len(dsts) > 1}
    complete = len(seen) == nflows
    # a flow left going to the service address itself goes to no backend at all
    elsewhere = sorted({d for dsts in split.values() for d in dsts} - set(backends))
    sticky = complete and not moved and not elsewhere
    out.append(Expectation("every packet of a flow goes to the same backend", sticky,
                           "" if sticky else "; ".join(filter(None, (
                               f"{len(moved)} of {len(seen)} flows seen went to more than one backend, e.g. "
                               f"{next(iter(moved))[0]}:{next(iter(moved))[1]} to {', '.join(next(iter(moved.values())))}"
                               if moved else "",
                               f"only {len(seen)} of {nflows} flows came out" if not complete else "",
                               f"packets went to {', '.join(elsewhere)}, not a backend" if elsewhere else "")))))
    used = {}
    for dsts in split.values():
        for d in dsts:
            used[d] = used.get(d, 0) + 1
    at_least = data["spread_at_least"]
    out.append(Expectation(f"the {nflows} flows spread over at least {at_least} of the {len(backends)} backends "
                           f"(a hash of addresses and ports)", len(used) >= at_least,
                           f"flows per backend: {', '.join(f'{d} {n}' for d, n in sorted(used.items())) or 'none'}"))
    at_step(2, *out)
    if seen:
        (client, cport), ps = next(iter(seen.items()))
        backend = ps[0][L["IP"]].dst
        reply = frame(client, src=backend, sport=80, dport=cport, proto="udp", from_port=1)

        def from_vip(p):
            l4 = _l4(p)
            if l4 is None or (p[L["IP"]].src, l4.sport, p[L["IP"]].dst, l4.dport) != (vip, 80, client, cport):
                return "source not mapped back to the service address"
            if (p.src, p.dst) != (m["d0"], m["g0"]):
                return f"Ethernet {p.src} -> {p.dst}, not {m['d0']} -> {m['g0']}"
            return "" if checksums_right(p) else "wrong IP or transport checksum"
        out += at_step(3, _one_out(run, f"a backend's reply leaves on {PORTS[0]} with {vip}:80 as its source", reply,
                                   1, 0, f"it on {PORTS[0]} from {vip}:80 to {client}:{cport}", from_vip)[0])
    else:
        out.append(Expectation(f"a backend's reply leaves on {PORTS[0]} with {vip} as its source", False,
                               "not tried: no packet reached a backend", step=3))
    other = data["not_for_vip"]
    sent = frame(other, dport=80)
    out.append(_one_out(run, f"a packet not for the service ({other}) leaves on {PORTS[1]}, its destination kept",
                        sent, 0, 1, f"it on {PORTS[1]} to {other}",
                        lambda p: "" if L["IP"] in p and p[L["IP"]].dst == other else "destination changed")[0])
    return out


def _check_measure(run: Run, data: dict) -> list[Expectation]:
    out = [Expectation(f"{MEASURED}: {e.name}", e.passed, e.detail, e.skipped)
           for e in _check_iprouter(run, exercise_data(MEASURED))]
    pps, seconds = data["trial"]["pps"], data["trial"]["seconds"]
    # as root on the machine's testbed, as routerlab measure --config runs it; without root
    # on one in namespaces of the check's own, not placed on CPUs
    name = f"on the testbed: {seconds} s at {pps:,} pps of the generator's traffic lose nothing"
    router = run.router
    if not isinstance(router, TestbedRouter):
        why = userns.missing() if os.geteuid() != 0 else None
        out.append(Expectation.not_run(name, f"needs the testbed, which without root needs a user namespace: {why}"
                                       if why else "needs the testbed: check without --memory"))
        return out
    from routerlab.testbed import traffic

    # the CPU-stop and speed probes run at real-time priority, which a user namespace
    # cannot take; a trial that lost nothing needs no explaining
    placed = router.tb.placement
    r = traffic.run_trial(router.tb, pps, seconds, traffic.TrafficSpec(),
                          probe_period_ms=traffic.STOP_PROBE_PERIOD_MS if placed else None,
                          speed_ms=traffic.SPEED_PROBE_MS if placed else None)
    ok = r.rx == r.tx and not r.generator_limited
    out.append(Expectation(name, ok, "" if ok else
                           f"sent {r.tx} UDP packets 10.70.1.2 > 10.71.0.1 into {PORTS[0]} at {pps} pps; "
                           f"{r.rx} reached the sink" + (" (the generator fell behind)" if r.generator_limited else "")
                           + f"; expected all {r.tx}"))
    return out


CHECKS: dict[str, Callable[[Run, dict], list[Expectation]]] = {
    "forward": _check_forward, "iprouter": _check_iprouter, "firewall": _check_firewall, "nat": _check_nat,
    "loadbalancer": _check_loadbalancer, "measure": _check_measure}


#: Said under a configuration that does not start: the exercise's other checks need it.
NOT_TRIED = "(the exercise's other checks were not tried: the router has to start first)"


def _router(exercise: str, config, solution: bool, memory: bool | None):
    """The router of a check or a try, not started: (router, the devices each element
    class uses, Click's problems with the file, each a line)."""
    _known(exercise)
    data = exercise_data(exercise)
    path = config_path(exercise, config, solution)
    click_binary()
    if memory is None:
        memory = os.geteuid() != 0
    # checks capture at the sink: no XDP sink; in a user namespace of one's own, no CPU placement
    tb = None if memory else NamespaceTestbed(generator="rlgen", placement=not userns.inside())
    devices = MEMORY_DEVICES if tb is None else (tb.dut_in, tb.dut_out)
    problems, used = static_check(path, devices)
    # the measure exercise runs the iprouter exercise's router, with its defines
    given = exercise_data(MEASURED) if exercise == "measure" else data
    router = MemoryRouter(path, given) if tb is None else TestbedRouter(path, tb, given)
    return router, used, problems


def check(exercise: str, config: str | Path | None = None, *, solution: bool = False,
          memory: bool | None = None, extra: list | None = None) -> list[Expectation]:
    """Run exercise ``exercise``'s check against ``config`` (a .click file), or against the
    exercise's solution (``solution=True``) or its skeleton.

    ``memory``: True runs the router from memory, False on the testbed (needs root);
    None (the default) chooses the testbed as root and memory otherwise. ``extra``: an
    instructor's cases (:func:`routerlab.course.checks.read_extra_checks`), sent after the
    exercise's own expectations, and the Click handlers it reads around them (a P4
    counter among them raises :class:`~routerlab.errors.DataFormatError` before the router
    starts).

    The measure exercise's load trial needs the testbed: without root (and ``memory``
    None) its check runs on one in user and network namespaces of its own
    (:mod:`routerlab.testbed.userns`), without CPU placement: a trial of the generator's traffic,
    not a measurement."""
    counters_for(extra, "click")
    if exercise == "measure" and memory is None and os.geteuid() != 0 and userns.missing() is None:
        return userns.call("routerlab.course.clickexercises:check", exercise,
                           str(Path(config).resolve()) if config else None, solution=solution, memory=False,
                           extra=extra)
    router, used, problems = _router(exercise, config, solution, memory)
    if problems:
        return [Expectation(START, False, "\n".join(problems + [NOT_TRIED]))]
    try:
        router.__enter__()
    except NotStarted as e:  # the configuration's; any other error (no root, no engine, ...) is not
        return [Expectation(START, False, f"{e}\n{NOT_TRIED}")]
    try:
        run = Run(router, used)
        return ([Expectation(START, True)] + CHECKS[exercise](run, exercise_data(exercise))
                + extra_expectations(run.send, run.hint, extra or [], PORTS, read=lambda c: _handler(run, c.name)))
    finally:
        router.__exit__(None, None, None)


def _handler(run: Run, name: str) -> str:
    """Handler ``name``'s value; raises :class:`~routerlab.errors.RouterlabError` saying why
    it cannot be read (e.g. "No element named 'out/sent'")."""
    value, why = run.handler(name)
    if value is None:
        raise RouterlabError(why)
    return value


def try_router(exercise: str, lines, config: str | Path | None = None, *, solution: bool = False,
               memory: bool | None = None, show: Callable[[str], None]) -> int:
    """Start exercise ``exercise``'s router (``config``, its solution or its skeleton, as
    :func:`check` does: from memory, or on the testbed), send it the packets ``lines``
    describe, one at a time to the same router, and ``show`` what came back on which
    link, a line at a time (:func:`routerlab.course.checks.try_session`).
    Returns the number sent. Raises :class:`routerlab.errors.NotStarted` with Click's
    messages when the router does not start."""
    router, used, problems = _router(exercise, config, solution, memory)
    if problems:
        raise NotStarted("\n".join(problems))
    router.__enter__()  # NotStarted when the configuration does not start
    try:
        return try_session(router.send, lines, PORTS, show)
    finally:
        router.__exit__(None, None, None)
