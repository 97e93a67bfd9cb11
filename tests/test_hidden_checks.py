"""An instructor's hidden checks beyond the link a packet leaves by: the fields of the
packet that leaves (TTL, addresses, ports, checksums, ICMP type and code) and how much the
router's counters go up (Click handlers, P4 counters). The file's mistakes with file and
line; the expectations through a real router (Click from memory, bmv2 on the testbed),
passing with the solution and failing, with what was sent, what came back and what was
expected, against a router broken on purpose, in every output format."""

import json
import re

import pytest
from click.testing import CliRunner

from conftest import engine_marks
from routerlab import engines
from routerlab.cli.app import app
from routerlab.course import checks
from routerlab.course import clickexercises as ce
from routerlab.course import clickrouter
from routerlab.errors import DataFormatError

needs_click, _ = engine_marks("click", clickrouter.click_binary)
_, needs_bmv2 = engine_marks("bmv2", lambda: engines.get("bmv2").check())

IPROUTER = """\
cases:
  - send: "udp 10.70.1.2:1234 > 10.71.200.3:53"
    leaves: out
    expect: {ttl: 63, src: 10.70.1.2, dst: 10.71.200.3, sport: 1234, dport: 53, checksum: valid}
  - send: "udp 10.70.1.2 > 10.71.0.5 ttl 1"
    leaves: in
    expect: {icmp: {type: 11, code: 0}, dst: 10.70.1.2, checksum: valid}
    why: "time exceeded"
  - {send: "udp 10.70.1.2 > 10.99.3.3", leaves: in, expect: {icmp: {type: 3}, src: 10.70.1.1}}
  - {send: "tcp 10.70.2.2 > 10.71.9.77:22", from: out, leaves: in, expect: {ttl: 63, dport: 22, checksum: valid}}
counters:
  - {handler: out/sent.count, increase: 1, why: "one case leaves on out"}
  - {handler: back/sent.count, increase: 3}
"""

NAMES = [
    "extra: udp 10.70.1.2:1234 > 10.71.200.3:53 into $IN_DEV leaves on $OUT_DEV with ttl 63, src 10.70.1.2, "
    "dst 10.71.200.3, sport 1234, dport 53, checksum valid",
    "extra: udp 10.70.1.2 > 10.71.0.5 ttl 1 into $IN_DEV leaves on $IN_DEV with ICMP type 11 code 0, dst 10.70.1.2, "
    "checksum valid (time exceeded)",
    "extra: udp 10.70.1.2 > 10.99.3.3 into $IN_DEV leaves on $IN_DEV with ICMP type 3, src 10.70.1.1",
    "extra: tcp 10.70.2.2 > 10.71.9.77:22 into $OUT_DEV leaves on $IN_DEV with ttl 63, dport 22, checksum valid",
    "extra: out/sent.count goes up by 1 while the extra cases run (one case leaves on out)",
    "extra: back/sent.count goes up by 3 while the extra cases run"]

#: What the first case says when the TTL is not decremented.
NO_TTL = ("ttl 64 (expected 63): sent UDP 10.70.1.2:1234 > 10.71.200.3:53 TTL 64 into $IN_DEV; got UDP "
          "10.70.1.2:1234 > 10.71.200.3:53 TTL 64 on $OUT_DEV; expected one packet on $OUT_DEV with ttl 63, "
          "src 10.70.1.2, dst 10.71.200.3, sport 1234, dport 53, checksum valid")


def write(tmp_path, text, name="hidden.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def solution_with(tmp_path, *replacements) -> str:
    """The iprouter solution with ``(old, new)`` replacements, each of text it holds."""
    text = (ce.exercises_dir() / "iprouter" / "solution" / "iprouter.click").read_text()
    for old, new in replacements:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "broken.click"
    path.write_text(text)
    return str(path)


def extra(results):
    return [r for r in results if r.step is None]


# -- the file (no engine) --------------------------------------------------------------------

def test_the_fields_and_counters_are_read_in_the_files_order(tmp_path):
    cases = checks.read_extra_checks(write(tmp_path, IPROUTER + "  - {counter: RlIngress.dropped, increase: 2}\n"
                                                              "  - {counter: RlIngress.dropped, index: 3, increase: 0}\n"))
    assert [c.expect for c in cases] == [
        (("ttl", 63), ("src", "10.70.1.2"), ("dst", "10.71.200.3"), ("sport", 1234), ("dport", 53),
         ("checksum", "valid")),
        (("icmp", (11, 0)), ("dst", "10.70.1.2"), ("checksum", "valid")),
        (("icmp", (3, None)), ("src", "10.70.1.1")),
        (("ttl", 63), ("dport", 22), ("checksum", "valid"))]
    assert [(c.label, c.increase, c.why, c.line) for c in cases.counters] == [
        ("out/sent.count", 1, "one case leaves on out", 12), ("back/sent.count", 3, "", 13),
        ("RlIngress.dropped[0]", 2, "", 14), ("RlIngress.dropped[3]", 0, "", 15)]
    # the source port the line gives; 3000 + the case's number where it gives none
    ports = [checks.parse(c.frame)["IP"].payload.sport for c in cases]
    assert ports == [1234, 3002, 3003, 3004]


def test_a_field_is_checked_against_the_packet_that_leaves():
    L = checks.scapy_layers()
    sent = checks.parse(checks.frame("10.71.0.5", ttl=63, sport=1234, dport=53))
    assert checks.field_faults(sent, (("ttl", 63), ("sport", 1234), ("dport", 53), ("checksum", "valid"))) == ""
    assert checks.field_faults(sent, (("checksum", sent[L["IP"]].chksum),)) == ""
    assert checks.field_faults(sent, (("ttl", 64), ("src", "10.70.1.1"), ("icmp", (11, 0)))) == (
        "ttl 63 (expected 64), src 10.70.1.2 (expected 10.70.1.1), not ICMP (expected ICMP type 11 code 0)")
    spoilt = checks.parse(checks.frame("10.71.0.5", bad_checksum=True))
    ip = spoilt[L["IP"]]
    assert checks.field_faults(spoilt, (("checksum", "valid"),)) == (
        f"IPv4 header checksum 0x{ip.chksum:04x}, recomputes to 0x{ip.chksum ^ 0x5A5A:04x}")
    echo = checks.parse(checks.frame("10.70.1.1", proto="icmp"))
    assert checks.field_faults(echo, (("icmp", (0, None)), ("sport", 1))) == (
        "ICMP type 8 code 0 (expected ICMP type 0), sport none: no UDP or TCP header (expected 1)")
    wrong_icmp = bytearray(bytes(echo))
    wrong_icmp[14 + 20 + 2] ^= 0xFF  # the ICMP checksum's first byte
    assert re.fullmatch(r"ICMP checksum 0x[0-9a-f]{4}, recomputes to 0x[0-9a-f]{4}",
                        checks.field_faults(checks.parse(bytes(wrong_icmp)), (("checksum", "valid"),)))


@pytest.mark.parametrize("text, line, message", [
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out,\n     expect: {tll: 63}}\n", 3,
     "case 1: expect: unknown key 'tll'; allowed: ttl, src, dst, sport, dport, checksum, icmp"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out, expect: {ttl: sixty}}\n", 2,
     "case 1: expect: ttl: 'sixty' is not allowed; allowed: a whole number 0-255"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out, expect: {ttl: 256}}\n", 2,
     "case 1: expect: ttl: 256 is not allowed; allowed: a whole number 0-255"),
    ("cases:\n  - send: 'udp 10.70.1.2 > 10.71.0.5'\n    leaves: out\n    expect:\n      dport: true\n", 5,
     "case 1: expect: dport: True is not allowed; allowed: a whole number 0-65535"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out, expect: {src: 10.70.1}}\n", 2,
     "case 1: expect: src: '10.70.1' is not allowed; allowed: an IPv4 address"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out, expect: {checksum: right}}\n", 2,
     "case 1: expect: checksum: 'right' is not allowed; allowed: valid, or the IPv4 header checksum"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: in, expect: {icmp: {code: 0}}}\n", 2,
     "case 1: expect: icmp: missing key(s) type; required: type"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: in, expect: {icmp: 11}}\n", 2,
     "case 1: expect: icmp: 11 is not allowed; allowed: a mapping with the keys type, code"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: in, expect: 63}\n", 2,
     "case 1: expect: 63 is not allowed; allowed: a mapping with the keys ttl, src"),
    ("cases:\n  - send: 'udp 10.70.1.2 > 10.71.0.5'\n    leaves: nowhere\n    expect: {ttl: 63}\n", 4,
     "case 1: expect is about the packet that leaves: leaves must be in or out, not nowhere"),
    ("cases:\n  - {send: 'udp 10.70.1.2:0 > 10.71.0.5', leaves: out}\n", 2, "a port is 1-65535"),
    ("cases:\n  - {send: 'icmp-echo 10.70.1.2:7 > 10.71.0.5', leaves: out}\n", 2, "ICMP has no port"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out}\ncounters:\n  - {handler: out/sent.count}\n", 4,
     "counter 1: missing key(s) increase; required: increase"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out}\ncounters:\n  - {increase: 1}\n", 4,
     "counter 1: give handler (a Click handler, e.g. out/sent.count) or counter (a P4 counter"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out}\ncounters:\n"
     "  - {handler: a.count, increase: 1}\n  - {handler: a.count, counter: RlIngress.dropped, increase: 1}\n", 5,
     "counter 2: give handler"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out}\ncounters:\n"
     "  - handler: a.count\n    increase: 1\n    index: 2\n", 6,
     "counter 1: index is a P4 counter's; a Click handler has none"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out}\ncounters:\n  - {handler: a.count, increase: -1}\n",
     4, "counter 1: increase: -1 is not allowed; allowed: a whole number 0-"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out}\ncounters:\n  - {handler: a.count, equals: 3}\n",
     4, "counter 1: unknown key 'equals'; allowed: handler, counter, index, increase, why"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out}\ncounters: []\n", 3,
     "counters: [] is not allowed; allowed: a list of at least one counter"),
])
def test_a_mistake_in_a_field_or_counter_names_file_and_line(tmp_path, text, line, message):
    path = write(tmp_path, text)
    with pytest.raises(DataFormatError) as e:
        checks.read_extra_checks(path)
    assert (e.value.source, e.value.line) == (str(path), line), e.value
    assert message in e.value.message, e.value.message


@pytest.mark.parametrize("track, exercise, counter, message", [
    ("click", "iprouter", "{counter: RlIngress.dropped, index: 1, increase: 1}",
     "counter 1: the Click track reads a handler (handler: ELEMENT.HANDLER, e.g. out/sent.count), not a P4 counter"),
    ("p4", "router", "{handler: out/sent.count, increase: 1}",
     "counter 1: the P4 track reads a counter of the program (counter: NAME, e.g. RlIngress.dropped, and index: N), "
     "not a Click handler")])
def test_a_counter_of_the_other_track_stops_the_check_before_it_runs(tmp_path, track, exercise, counter, message):
    path = write(tmp_path, f"cases:\n  - {{send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out}}\ncounters:\n  - {counter}\n")
    r = CliRunner().invoke(app, [track, "check", exercise, "--solution", "--extra-checks", str(path)])
    assert r.exit_code == 2, r.output
    assert f"{path}:4: {message}" in " ".join(r.output.split()), r.output


def test_a_bad_field_stops_either_check_before_it_runs(tmp_path):
    path = write(tmp_path, "cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out,\n     expect: {ttl: 63, "
                           "sorce: 10.70.1.2}}\n")
    for track, exercise in (("click", "iprouter"), ("p4", "router")):
        r = CliRunner().invoke(app, [track, "check", exercise, "--solution", "--extra-checks", str(path)])
        assert r.exit_code == 2
        assert f"--extra-checks: {path}:3: case 1: expect: unknown key 'sorce'" in r.output, r.output


# -- through Click ---------------------------------------------------------------------------

@needs_click
def test_fields_icmp_and_counters_pass_with_the_iprouter_solution(tmp_path):
    results = extra(ce.check("iprouter", solution=True, memory=True,
                             extra=checks.read_extra_checks(write(tmp_path, IPROUTER))))
    assert [r.name for r in results] == NAMES
    assert all(r.passed for r in results), [(r.name, r.detail) for r in results if not r.passed]


@needs_click
def test_a_router_that_does_not_decrement_the_ttl_fails_the_fields_and_counters(tmp_path):
    """DecIPTTL replaced by CheckIPHeader: the TTL stays, no time exceeded comes back."""
    broken = solution_with(tmp_path, ("ttl0 :: DecIPTTL", "ttl0 :: CheckIPHeader"),
                           ("ttl1 :: DecIPTTL", "ttl1 :: CheckIPHeader"))
    results = extra(ce.check("iprouter", broken, memory=True,
                             extra=checks.read_extra_checks(write(tmp_path, IPROUTER))))
    assert [r.passed for r in results] == [False, False, True, False, False, False], \
        [(r.name, r.detail) for r in results]
    assert results[0].detail == NO_TTL
    assert results[1].detail == (
        "sent UDP 10.70.1.2:3002 > 10.71.0.5:5000 TTL 1 into $IN_DEV; got UDP 10.70.1.2:3002 > 10.71.0.5:5000 TTL 1 "
        "on $OUT_DEV; expected one packet on $IN_DEV with ICMP type 11 code 0, dst 10.70.1.2, checksum valid")
    assert results[3].detail.startswith("ttl 64 (expected 63): sent TCP 10.70.2.2:3004 > 10.71.9.77:22 TTL 64")
    # the TTL 1 packet left on out as well: out went up by 2, back by 2
    for r, name, up, want in ((results[4], "out/sent.count", 2, 1), (results[5], "back/sent.count", 2, 3)):
        m = re.fullmatch(rf"sent the 4 extra cases; {name} went from (\d+) to (\d+) \(up by {up}\); "
                         rf"expected it to go up by {want}", r.detail)
        assert m and int(m.group(2)) - int(m.group(1)) == up, r.detail


@needs_click
def test_a_wrong_icmp_type_a_spoilt_checksum_and_a_missing_counter_are_each_named(tmp_path):
    broken = solution_with(tmp_path, ("ttl0[1]  -> ICMPError(in_if, timeexceeded)",
                                      "ttl0[1]  -> ICMPError(in_if, unreachable, host)"),
                           ("ttl1[1]  -> ICMPError(out_if, timeexceeded)",
                            "ttl1[1]  -> ICMPError(out_if, unreachable, host)"),
                           ("-> EtherEncap(0x0800, out_if, $NEXT_MAC)",
                            "-> StoreData(10, \\<0000>) -> EtherEncap(0x0800, out_if, $NEXT_MAC)"),
                           ("out  :: Out($OUT_DEV)", "sink :: Out($OUT_DEV)"), ("-> out;", "-> sink;"))
    results = extra(ce.check("iprouter", broken, memory=True,
                             extra=checks.read_extra_checks(write(tmp_path, IPROUTER))))
    assert [r.passed for r in results] == [False, False, True, True, False, True], \
        [(r.name, r.detail) for r in results]
    assert re.fullmatch(r"IPv4 header checksum 0x0000, recomputes to 0x[0-9a-f]{4}: sent UDP 10\.70\.1\.2:1234 > "
                        r"10\.71\.200\.3:53 TTL 64 into \$IN_DEV; got .* on \$OUT_DEV; expected one packet on "
                        r"\$OUT_DEV with ttl 63, .*", results[0].detail), results[0].detail
    assert results[1].detail.startswith("ICMP type 3 code 1 (expected ICMP type 11 code 0): sent UDP 10.70.1.2:3002 > "
                                        "10.71.0.5:5000 TTL 1 into $IN_DEV; got ICMP ")
    assert results[4].detail == ("sent the 4 extra cases; out/sent.count cannot be read: No element named 'out/sent'; "
                                 "expected it to go up by 1")


@needs_click
@pytest.mark.parametrize("fmt", ["text", "json", "junit"])
def test_a_failed_field_reads_the_same_in_every_output(tmp_path, fmt):
    broken = solution_with(tmp_path, ("ttl1 :: DecIPTTL", "ttl1 :: CheckIPHeader"))
    path = write(tmp_path, IPROUTER)
    r = CliRunner().invoke(app, ["click", "check", "iprouter", "--memory", "--config", broken, "--extra-checks",
                                 str(path), "--format", fmt])
    assert r.exit_code == 1, r.output
    if fmt == "json":
        data = json.loads(r.stdout[r.stdout.index("{"):])
        got = {e["name"]: (e["result"], e["detail"]) for e in data["expectations"]}
        assert got[NAMES[0]] == ("failed", NO_TTL)
        assert got[NAMES[3]][0] == "passed"  # the way back, on in, decrements
    elif fmt == "junit":
        assert f'message="{NO_TTL.replace(">", "&gt;")}"' in r.stdout, r.stdout
    else:
        assert NO_TTL in " ".join(r.stdout.split())


# -- through bmv2 ----------------------------------------------------------------------------

ROUTER = """\
cases:
  - send: "udp 10.70.1.2:1234 > 10.71.0.77:53"
    leaves: out
    expect: {ttl: 63, src: 10.70.1.2, dst: 10.71.0.77, sport: 1234, dport: 53, checksum: valid}
  - {send: "udp 10.70.1.2 > 10.71.0.77 ttl 1", leaves: nowhere}
  - {send: "udp 10.70.1.2 > 10.71.1.1", leaves: nowhere}
counters:
  - {counter: RlIngress.dropped, index: 1, increase: 1, why: "TTL 1"}
  - {counter: RlIngress.dropped, index: 2, increase: 1}
  - {counter: RlIngress.rx_port, increase: 3}
  - {counter: RlIngress.dropped, index: 4, increase: 0}
"""


@needs_bmv2
def test_fields_and_counters_through_bmv2_pass_with_the_solution_and_fail_without_the_ttl(tmp_path):
    from routerlab.course import p4exercises
    from routerlab.engines import p4

    hidden = checks.read_extra_checks(write(tmp_path, ROUTER))
    results = extra(p4exercises.check("router", solution=True, extra=hidden))
    assert [r.passed for r in results] == [True] * 6 + [False], [(r.name, r.detail) for r in results]
    assert results[6].detail == ("sent the 3 extra cases; RlIngress.dropped[4] cannot be read: RlIngress.dropped has "
                                 "4 cells, 0-3; expected it to go up by 0")
    # the solution, the TTL neither decremented nor its drop counted
    broken = tmp_path / "router.p4"
    text = p4.source("router", solution=True).read_text()
    for old in ("hdr.ipv4.ttl = hdr.ipv4.ttl - 1;", "dropped.count(DROP_TTL);"):
        assert old in text
        text = text.replace(old, "")
    broken.write_text(text)
    results = extra(p4exercises.check("router", broken, solution=False, extra=hidden))
    assert [r.passed for r in results] == [False, True, True, False, True, True, False]
    assert results[0].detail == (
        "ttl 64 (expected 63): sent UDP 10.70.1.2:1234 > 10.71.0.77:53 TTL 64 into port 0; got UDP 10.70.1.2:1234 > "
        "10.71.0.77:53 TTL 64 on port 1; expected one packet on port 1 with ttl 63, src 10.70.1.2, dst 10.71.0.77, "
        "sport 1234, dport 53, checksum valid")
    assert re.fullmatch(r"sent the 3 extra cases; RlIngress.dropped\[1\] went from 0 to 0 \(up by 0\); "
                        r"expected it to go up by 1", results[3].detail), results[3].detail
