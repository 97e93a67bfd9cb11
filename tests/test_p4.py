"""P4 programs on bmv2: entries as data, compiling with p4c, the course exercises' checks
with real packets, and the engine on the testbed. Parts that need p4c or bmv2 skip with
the reason where they are not built."""

import json
import os
import re
import time

import pytest

from routerlab import engines
from routerlab.course import p4exercises
from routerlab.analysis import scenarios
from routerlab.testbed import traffic, userns
from routerlab.testbed import cleanup, namespaces
from routerlab.engines import p4
from routerlab.errors import DataFormatError, EngineNotFound, RouterlabError

try:
    p4.p4c()
    P4C = None
except EngineNotFound as e:
    P4C = str(e)
needs_p4c = pytest.mark.engine_absent(f"p4c not built: {P4C}") if P4C else pytest.mark.skipif(False, reason="")

try:
    _bmv2 = engines.get("bmv2")
    _bmv2.control = "p4runtime"  # every P4 test runs over P4Runtime: simple_switch_grpc must be there
    _bmv2.check()
    BMV2 = None
except RouterlabError as e:
    BMV2 = str(e)
needs_bmv2 = pytest.mark.engine_absent(f"bmv2 not built: {BMV2}") if BMV2 else \
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root: network namespaces")
try:
    engines.find_binary("bmv2-log", "simple_switch_grpc")
    BMV2_LOG = None
except RouterlabError as e:
    BMV2_LOG = str(e)
# the course's checks run bmv2's logging build where it is (else bmv2's, with little in its log)
needs_bmv2_log = pytest.mark.engine_absent(f"bmv2's logging build not built: {BMV2_LOG}") if BMV2_LOG else \
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root: network namespaces")
# the course's checks run without root, in user and network namespaces of their own
USERNS = userns.missing()
needs_bmv2_check = pytest.mark.engine_absent(f"bmv2 not built: {BMV2}") if BMV2 else \
    pytest.mark.skipif(os.geteuid() != 0 and USERNS is not None, reason=f"needs root or user namespaces: {USERNS}")


# -- entries as data (no compiler needed) ---------------------------------------------------

def test_negated_port_rule_becomes_the_two_ranges_around_it():
    entries, routes = p4.scenario_entries(scenarios.load("ddos-drop50-fw5"), route_limit=10)
    acl = [e for e in entries if e["table"] == "RlIngress.acl"]
    allow = [e for e in acl if e["action_name"] == "RlIngress.acl_allow" and not e.get("default_action")]
    assert [e["match"]["meta.dstPort"] for e in allow] == [[0, 8], [10, 65535]]
    assert acl[-1] == {"table": "RlIngress.acl", "default_action": True, "action_params": {},
                       "action_name": "RlIngress.acl_deny"}  # the policy of the drop scenario
    priorities = [e["priority"] for e in acl if "priority" in e]
    # first rule first: the largest number wins (P4Runtime's rule), every one above 0
    assert priorities == sorted(set(priorities), reverse=True) and priorities[-1] > 0
    assert routes == 10 and sum(e["table"] == "RlIngress.ipv4_lpm" for e in entries) == 10


def test_program_follows_the_scenario():
    assert p4.program_for(scenarios.load("single-flow")) == "router"
    assert p4.program_for(scenarios.load("single-flow-fw50")) == "firewall"
    assert p4.program_for(scenarios.load("gre-multiflow-fw50")) == "gre"


def test_values_become_integers_and_must_fit():
    assert p4._int("10.71.0.1", 32) == 0x0A470001
    assert p4._int("02:72:6c:01:00:02", 48) == 0x02726C010002
    assert p4._int("0x800", 16) == 0x800
    with pytest.raises(ValueError, match="does not fit"):
        p4._int(512, 9)


# -- with the compiler -------------------------------------------------------------------------

@needs_p4c
@pytest.mark.parametrize("program", p4.PROGRAMS)
@pytest.mark.parametrize("solution", [True, False], ids=["solution", "skeleton"])
def test_every_program_compiles(program, solution):
    out = p4.compile_program(program, solution)
    assert json.loads(out.read_text())["pipelines"]


@needs_p4c
@pytest.mark.parametrize("program", p4.PROGRAMS)
def test_exercise_entries_match_the_compiled_program(program):
    pipe = p4.Pipeline(p4.compile_program(program))
    path = p4.p4_dir() / program / "entries.json"
    cmds = p4.cli_commands(p4.read_entries(path), pipe, str(path))
    assert cmds and all(c.split()[0] in ("table_add", "table_set_default") for c in cmds)


@needs_p4c
@pytest.mark.parametrize("name", list(scenarios.presets()))
def test_scenario_entries_match_the_compiled_program(name):
    sc = scenarios.load(name)
    pipe = p4.Pipeline(p4.compile_program(p4.program_for(sc)))
    entries, _ = p4.scenario_entries(sc, route_limit=5)
    cmds = p4.cli_commands(entries, pipe, name)
    assert len(cmds) == len(entries)


@needs_p4c
def test_bad_entries_are_named():
    pipe = p4.Pipeline(p4.compile_program("firewall"))
    good = {"table": "RlIngress.acl", "match": {"meta.dstPort": [9, 9]}, "priority": 1,
            "action_name": "RlIngress.acl_deny", "action_params": {}}
    with pytest.raises(DataFormatError, match=r"table_entries\[0\]: unknown table 'RlIngress.nope'"):
        p4.cli_commands([{**good, "table": "RlIngress.nope"}], pipe)
    with pytest.raises(DataFormatError, match="no field hdr.ipv4.ttl"):
        p4.cli_commands([{**good, "match": {"hdr.ipv4.ttl": [1, 255]}}], pipe)
    with pytest.raises(DataFormatError, match="needs a priority"):
        p4.cli_commands([{k: v for k, v in good.items() if k != "priority"}], pipe)
    with pytest.raises(DataFormatError, match="takes parameters"):
        p4.cli_commands([{**good, "action_params": {"x": 1}}], pipe)
    with pytest.raises(DataFormatError, match=r"priority 0: expected a whole number from 1"):
        p4.cli_commands([{**good, "priority": 0}], pipe)
    with pytest.raises(DataFormatError, match=r"range 9..8 is empty"):
        p4.cli_commands([{**good, "match": {"meta.dstPort": [9, 8]}}], pipe)
    # the CLI's smallest number wins: priorities turn around bmv2's pivot, as its P4Runtime server does
    assert p4.cli_commands([good, {**good, "priority": 7}], pipe) == [
        f"table_add RlIngress.acl RlIngress.acl_deny 0x0&&&0x0 0x0&&&0x0 0x0&&&0x0 9->9 => {2**31 - 2}",
        f"table_add RlIngress.acl RlIngress.acl_deny 0x0&&&0x0 0x0&&&0x0 0x0&&&0x0 9->9 => {2**31 - 8}"]
    refused = []
    assert p4.cli_commands([{**good, "table": "RlIngress.nope"}, good], pipe, refused=refused) == [
        f"table_add RlIngress.acl RlIngress.acl_deny 0x0&&&0x0 0x0&&&0x0 0x0&&&0x0 9->9 => {2**31 - 2}"]
    assert len(refused) == 1 and "table_entries[0]" in refused[0]


@needs_p4c
def test_entries_are_checked_against_the_p4info():
    json_path = p4.compile_program("router")
    info = p4.p4info_of(json_path)
    assert info.is_file() and "RlIngress.ipv4_lpm" in info.read_text()
    pipe = p4.Pipeline(info)
    assert pipe.tables["RlIngress.ipv4_lpm"].keys[0] == p4.Field("hdr.ipv4.dstAddr", "lpm", 32)
    assert pipe.actions["RlIngress.forward"] == [("src", 48), ("dst", 48), ("port", 9)]
    e, = p4.parse_entries([{"table": "RlIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.71.0.77", 24]},
                            "action_name": "RlIngress.forward",
                            "action_params": {"src": "02:00:00:00:00:01", "dst": "02:00:00:00:00:02", "port": 1}}],
                          pipe)
    assert e.key[0].values == (0x0A470000, 24)  # the host bits beyond the prefix are cleared, as P4Runtime wants
    assert e.params[2] == ("port", 1, 9)


@needs_p4c
def test_entries_become_p4runtime_updates():
    """Wildcards are left out, as P4Runtime requires; the priority is kept (the largest
    wins there); a default action is a MODIFY of the table's default entry."""
    from finsy import P4Schema
    from finsy.proto import p4r

    from routerlab.engines.p4runtime import table_entry

    json_path = p4.compile_program("firewall")
    pipe = p4.Pipeline(json_path)
    schema = P4Schema(p4.p4info_of(json_path))
    entries = [{"table": "RlIngress.acl", "match": {"meta.dstPort": [9, 9], "hdr.ipv4.protocol": [17, 255]},
                "priority": 5, "action_name": "RlIngress.acl_deny", "action_params": {}},
               {"table": "RlIngress.acl", "default_action": True, "action_name": "RlIngress.acl_allow",
                "action_params": {}}]
    insert, default = [table_entry(e).encode_update(schema) for e in p4.parse_entries(entries, pipe)]
    assert insert.type == p4r.Update.INSERT and insert.entity.table_entry.priority == 5
    fields = {schema.tables["RlIngress.acl"].match_fields[m.field_id].name: m
              for m in insert.entity.table_entry.match}
    assert sorted(fields) == ["hdr.ipv4.protocol", "meta.dstPort"]  # the source and destination: wildcards
    assert fields["meta.dstPort"].range.low == fields["meta.dstPort"].range.high == b"\x09"
    assert default.type == p4r.Update.MODIFY and default.entity.table_entry.is_default_action


@needs_p4c
def test_a_compile_error_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.p4"
    bad.write_text('#include "common.p4"\ncontrol X() { apply { nonsense; } }\n')
    with pytest.raises(RouterlabError, match=r"^p4c-bm2-ss failed: .*bad\.p4\(2\):"):  # the first line says where
        p4.compile_program(bad)


# -- with bmv2, on the testbed -------------------------------------------------------------

@needs_bmv2_check
@pytest.mark.parametrize("exercise", p4.PROGRAMS)
def test_solutions_pass_their_checks(exercise):
    """In user and network namespaces of the check's own, as a student without root runs it."""
    results = p4exercises.check(exercise, solution=True, own_namespace=True)
    assert all(r.passed for r in results), [(r.name, r.detail) for r in results if not r.passed]
    assert len(results) >= 5
    # the exercise's README says what the check expects: these, in this order
    readme = (p4.p4_dir() / exercise / "README.md").read_text()
    section = readme.split("## What the check expects", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    assert [ln[2:] for ln in section.splitlines() if ln.startswith("- ")] == [r.name for r in results]


@needs_bmv2_check
@pytest.mark.parametrize("exercise", p4.PROGRAMS)
def test_skeletons_fail_their_checks(exercise):
    results = p4exercises.check(exercise, solution=False)
    assert not all(r.passed for r in results)
    # what passes untouched is what the README says is given with the skeleton
    readme = (p4.p4_dir() / exercise / "README.md").read_text()
    section = readme.split("### Given with the skeleton\n", 1)[1].split("\n## ", 1)[0]
    assert [r.name for r in results if r.passed] == [ln[2:] for ln in section.splitlines() if ln.startswith("- ")]
    # each skeleton starts: the entries it cannot take yet are named, the rest is checked
    assert len(results) == len(p4exercises.check(exercise, solution=True))
    took = results[0]
    assert took.passed or all(re.search(r"unknown table .*\(p4c leaves out a table that nothing applies\)|has no field",
                                        line) for line in took.detail.splitlines()), took.detail


@needs_bmv2_check
def test_a_student_tries_packets_on_the_switch_without_root(capfd):
    """p4 try in namespaces of its own: the solution routes, the skeleton of the firewall
    takes the entries it can and says which it cannot."""
    from click.testing import CliRunner

    from routerlab.cli.app import app

    sent = p4exercises.try_program("router", ["udp 10.70.1.2 > 10.71.0.5", "udp 10.70.1.2 -> 10.71.0.200 ttl 1",
                                              "out: udp 10.70.2.2 > 10.71.0.200"], solution=True, own_namespace=True,
                                    show=print)
    out = capfd.readouterr().out
    assert sent == 3 and out.splitlines() == [
        "sent UDP 10.70.1.2:1234 > 10.71.0.5:5000 TTL 64 into port 0",
        "  left on port 1: UDP 10.70.1.2:1234 > 10.71.0.5:5000 TTL 63",
        "sent UDP 10.70.1.2:1234 > 10.71.0.200:5000 TTL 1 into port 0",
        "  nothing came back (dropped, or sent nowhere)",
        "sent UDP 10.70.2.2:1234 > 10.71.0.200:5000 TTL 64 into port 1",
        "  left on port 0: UDP 10.70.2.2:1234 > 10.71.0.200:5000 TTL 63"]
    p4exercises.try_program("firewall", ["udp 10.70.1.2 > 10.71.0.5:9"], own_namespace=True, show=print)
    out = capfd.readouterr().out
    assert "left out, as the program does not take it:" in out and "unknown table 'RlIngress.acl'" in out
    assert out.rstrip().endswith("left on port 1: UDP 10.70.1.2:1234 > 10.71.0.5:9 TTL 63")  # no ACL yet
    r = CliRunner().invoke(app, ["p4", "try", "router", "udp 10.70.1.2 > 10.71.0.999"])
    assert r.exit_code == 2 and "PACKET 'udp 10.70.1.2 > 10.71.0.999'" in r.output


@needs_bmv2
def test_a_p4_failure_says_what_was_sent_what_came_back_and_what_was_expected(tmp_path):
    """The router's solution with the TTL neither decremented nor checked for 1."""
    text = p4.source("router", solution=True).read_text()
    broken = tmp_path / "router.p4"
    broken.write_text(text.replace("hdr.ipv4.ttl = hdr.ipv4.ttl - 1;", "").replace("ttl <= 1", "ttl < 1"))
    results = p4exercises.check("router", broken, solution=False)
    failed = {r.name: r.detail for r in results if not r.passed}
    # without the decrement, the packets routed either way leave with TTL 64
    assert list(failed) == ["10.71.0.5 leaves on port 1, TTL 64 -> 63, MACs rewritten, checksum right",
                            "10.71.0.200: the longer prefix (10.71.0.128/25) wins, out of port 0",
                            "TTL 1 is dropped"], failed
    assert failed["TTL 1 is dropped"] == ("sent UDP 10.70.1.2:1234 > 10.71.0.5:5000 TTL 1 into port 0; got UDP "
                                          "10.70.1.2:1234 > 10.71.0.5:5000 TTL 1 on port 1; expected nothing (dropped)")
    assert failed["10.71.0.5 leaves on port 1, TTL 64 -> 63, MACs rewritten, checksum right"].startswith(
        "TTL 64, not 63: sent UDP 10.70.1.2:1234 > 10.71.0.5:5000 TTL 64 into port 0; got UDP 10.70.1.2:1234 > "
        "10.71.0.5:5000 TTL 64 on port 1; expected it on port 1, TTL 63, MACs ")


@needs_bmv2
@needs_bmv2_log
def test_a_check_can_keep_bmv2s_log_of_every_packet(tmp_path):
    """What a student debugs with: per packet, the port it came in on, the parser's states,
    the tables applied and the actions run, as `simple_switch --log-console` prints them."""
    log = tmp_path / "router.log"
    p4exercises.check("router", solution=True, log=log)
    text = log.read_text()
    assert "Processing packet received on port 0" in text
    assert "Parser 'parser': start" in text and "Applying table 'RlIngress.ipv4_lpm'" in text
    assert "Action entry is" in text


@needs_bmv2
@pytest.mark.parametrize("control", ["p4runtime", "thrift"])
@pytest.mark.parametrize("scenario", ["single-flow", "ddos-drop50-fw5"])
def test_engine_forwards_and_counts(scenario, control):
    """Over either control plane: the entries go in, the switch forwards, and its counters
    (read back over that control plane) say what the sink saw."""
    sc = scenarios.load(scenario, routes=100)
    eng = engines.get("bmv2")
    eng.control = control
    with namespaces.NamespaceTestbed() as tb:
        try:
            facts = eng.start(tb, sc)
            r = traffic.run_trial(tb, 2000, 0.5, traffic.TrafficSpec.for_scenario(sc))
            time.sleep(0.3)
            fwd = eng.forwarded(tb)
            drops = eng.drop_counters(tb)
        finally:
            eng.stop(tb)
    assert facts["routes_loaded"] == 100 and facts["control"] == control
    assert f"control {control}" in eng.version()
    assert drops["egress_queue_drops"] == 0  # at 2 kpps nothing waits in a queue
    assert fwd == r.rx  # bmv2's own count of forwarded packets is what the sink saw
    # tx counts the traffic that should pass: with 50% drop, half of what was sent
    assert r.tx == pytest.approx(r.kernel_tx * (1 - sc.drop_share), rel=0.01)
    # it forwards what it is sent: the rate it keeps is a benchmark's (bench engines), and a
    # busy machine's bmv2 can miss packets at its capture socket, so the bound is loose
    assert 0.9 * r.tx <= r.rx <= r.tx, (r.tx, r.rx, drops)


@needs_bmv2
def test_a_capped_route_table_says_how_long_its_entries_took(monkeypatch):
    """The Thrift CLI caps large tables and says so; P4Runtime loads them all."""
    from routerlab.engines import bmv2

    monkeypatch.setattr(bmv2, "ROUTE_LIMIT", 60)
    sc = scenarios.load("single-flow", routes=100)
    loaded = {}
    for control in ("thrift", "p4runtime"):
        eng = engines.get("bmv2")
        eng.control = control
        with namespaces.NamespaceTestbed() as tb:
            try:
                loaded[control] = eng.start(tb, sc)
            finally:
                eng.stop(tb)
    facts = loaded["thrift"]
    assert facts["routes_loaded"] == 60
    assert facts["routes_note"] == (f"60 of 100 routes: the Thrift runtime CLI loads entries one at a time, so tables "
                                    f"are capped at 60 ({facts['entries']} entries took {facts['entries_load_s']:.1f} s "
                                    "here); P4Runtime (--control p4runtime) loads them all")
    assert loaded["p4runtime"]["routes_loaded"] == 100 and "routes_note" not in loaded["p4runtime"]


@needs_bmv2
def test_the_p4_check_reports_to_a_grader_in_json():
    from click.testing import CliRunner

    from routerlab.cli.app import app

    r = CliRunner().invoke(app, ["p4", "check", "router", "--solution", "--format", "json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout[r.stdout.index("{"):])
    assert (data["track"], data["exercise"], data["checked"]) == ("p4", "router", "solution")
    assert data["passed"] == data["total"] >= 5 and data["failed"] == 0


# -- P4Runtime: faults -------------------------------------------------------------------------

@needs_bmv2
def test_an_entry_the_program_lacks_stops_the_run_before_anything_is_written():
    """Checked against the P4Info before the switch even starts: one error naming the
    entry and its file."""
    eng = engines.get("bmv2")
    eng.control = "p4runtime"
    entries = p4.read_entries(p4.p4_dir() / "router" / "entries.json")
    entries[1] = {**entries[1], "action_params": {**entries[1]["action_params"], "mac": "02:00:00:00:00:01"}}
    with namespaces.NamespaceTestbed(generator="rlgen", placement=False) as tb:
        try:
            with pytest.raises(DataFormatError, match=r"^my-entries.json: table_entries\[1\]: action RlIngress.forward "
                                                      r"takes parameters \['src', 'dst', 'port'\]"):
                eng.run(tb, "router", entries, source="my-entries.json")
            assert getattr(eng, "_proc", None) is None  # no switch was started
        finally:
            eng.stop(tb)


def _fake_switch(monkeypatch, tmp_path, script: str, answer_timeout: float):
    """bmv2 over P4Runtime whose simple_switch_grpc is ``script`` (a shell script's body),
    given ``answer_timeout`` seconds to answer."""
    from routerlab import defaults

    fake = tmp_path / "simple_switch_grpc"
    fake.write_text("#!/bin/sh\n" + script)
    fake.chmod(0o755)
    monkeypatch.setenv("ROUTERLAB_SIMPLE_SWITCH_GRPC", str(fake))
    monkeypatch.setattr(defaults, "BMV2_ANSWER_TIMEOUT_S", answer_timeout)
    eng = engines.get("bmv2")
    eng.control = "p4runtime"
    return eng


@needs_bmv2
def test_a_switch_that_does_not_answer_p4runtime_is_named_with_its_log(monkeypatch, tmp_path):
    eng = _fake_switch(monkeypatch, tmp_path, "echo 'listening nowhere'\nexec sleep 600\n", 2.0)
    with namespaces.NamespaceTestbed(generator="rlgen", placement=False) as tb:
        try:
            with pytest.raises(RouterlabError) as err:
                eng.run(tb, "router", [])
            pid = eng._proc.pid
        finally:
            eng.stop(tb)
    said = str(err.value)
    assert len(said.splitlines()) == 1, said
    assert re.match(r"simple_switch_grpc did not answer P4Runtime at unix:/\S+/p4runtime.sock within 2 s.*"
                    r"its log: /\S+/simple_switch.log$", said), said
    assert not os.path.exists(f"/proc/{pid}")  # stopped with the run


@needs_bmv2
def test_a_switch_that_exits_at_start_is_said_at_once(monkeypatch, tmp_path):
    eng = _fake_switch(monkeypatch, tmp_path, "echo 'no such interface' >&2\nexit 1\n", 20.0)
    t0 = time.monotonic()
    with namespaces.NamespaceTestbed(generator="rlgen", placement=False) as tb:
        try:
            with pytest.raises(RouterlabError, match=r"simple_switch_grpc exited \(1\); the end of its log .*\n"
                                                     r"no such interface"):
                eng.run(tb, "router", [])
        finally:
            eng.stop(tb)
    assert time.monotonic() - t0 < 10  # not the 20 s it would have been given to answer


KILLED_RUN = """
import sys
from routerlab import engines
from routerlab.testbed import namespaces
eng = engines.get("bmv2")
eng.control = "p4runtime"
with namespaces.NamespaceTestbed(prefix=sys.argv[1], generator="rlgen", placement=False) as tb:
    eng.run(tb, "router", [])
    print("up", eng._proc.pid, flush=True)
    import time
    time.sleep(600)
"""


@needs_bmv2
def test_a_killed_run_leaves_no_switch_once_cleaned():
    import subprocess
    import sys

    prefix = "rl" + os.urandom(3).hex()
    p = subprocess.Popen([sys.executable, "-c", KILLED_RUN, prefix], stdout=subprocess.PIPE, text=True)
    try:
        up, pid = p.stdout.readline().split()
        assert up == "up" and os.path.exists(f"/proc/{pid}")
    finally:
        p.kill()
        p.wait()
    assert os.path.exists(f"/proc/{pid}")  # kill -9 leaves the switch running...
    cleanup.clean()
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{pid}")  # ...and routerlab clean stops it


@needs_bmv2_check
def test_a_student_writes_one_entry_over_p4runtime_and_the_packet_changes(capfd):
    """The router exercise's step 5, as its README shows it."""
    readme = (p4.p4_dir() / "router" / "README.md").read_text()
    typed = [ln.strip()[len("packet> "):] for ln in readme.splitlines() if ln.strip().startswith("packet> ")]
    assert [t.split()[0] for t in typed] == ["udp", "write", "udp"]
    sent = p4exercises.try_program("router", typed, solution=True, own_namespace=True, show=print)
    out = capfd.readouterr().out.splitlines()
    assert sent == 2
    assert out == ["sent UDP 10.70.1.2:1234 > 10.71.0.77:5000 TTL 64 into port 0",
                   "  left on port 1: UDP 10.70.1.2:1234 > 10.71.0.77:5000 TTL 63",
                   "wrote 1 entry to RlIngress.ipv4_lpm (P4Runtime)",
                   "sent UDP 10.70.1.2:1234 > 10.71.0.77:5000 TTL 64 into port 0",
                   "  left on port 0: UDP 10.70.1.2:1234 > 10.71.0.77:5000 TTL 63"], out
    # a bad entry is said, and the session goes on
    p4exercises.try_program("router", ['write {"table": "RlIngress.nope"}', "udp 10.70.1.2 > 10.71.0.5"],
                            solution=True, own_namespace=True, show=print)
    out = capfd.readouterr().out
    assert "? write: table_entries[0]: unknown table 'RlIngress.nope'" in out and "left on port 1" in out


# -- the student's failure and routerlab's, told apart by class --------------------------------

@needs_bmv2_check
def test_a_program_that_does_not_compile_is_the_students_result(tmp_path):
    from click.testing import CliRunner

    from routerlab.cli.app import app

    bad = tmp_path / "router.p4"
    bad.write_text('#include "common.p4"\ncontrol X() { apply { nonsense; } }\n')
    [took] = p4exercises.check("router", bad, solution=False)
    assert (took.name, took.passed) == (p4exercises.COMPILES, False)
    assert re.match(r"p4c-bm2-ss failed: .*router\.p4\(2\):", took.detail), took.detail
    r = CliRunner().invoke(app, ["p4", "check", "router", "--program", str(bad), "--format", "json"])
    assert r.exit_code == 1, r.output
    data = json.loads(r.stdout[r.stdout.index("{"):])
    assert (data["total"], data["failed"]) == (1, 1) and "p4c-bm2-ss failed" in data["expectations"][0]["detail"]


@pytest.mark.parametrize("error", ["bare", "testbed", "student"])
def test_an_internal_failure_of_a_p4_check_is_not_blamed_on_the_student(monkeypatch, error):
    """No engine needed: the switch's start raises, as the machinery around the program may."""
    from contextlib import contextmanager

    from routerlab.errors import NotStarted, TestbedError

    failure = {"bare": RouterlabError("simple_switch exited (1); the end of its log"),
               "testbed": TestbedError("ip link add: RTNETLINK answers: File exists"),
               "student": NotStarted("p4c-bm2-ss failed: router.p4(2): syntax error")}[error]

    @contextmanager
    def starting(*args, **kwargs):
        raise failure
        yield

    monkeypatch.setattr(p4exercises, "_switch", starting)
    if error == "student":
        assert [(r.name, r.passed, r.detail) for r in p4exercises.check("router", own_namespace=False)] == \
            [(p4exercises.COMPILES, False, str(failure))]
    else:
        with pytest.raises(type(failure)) as raised:
            p4exercises.check("router", own_namespace=False)
        assert raised.value is failure
