"""An instructor's hidden checks (``--extra-checks FILE``) for both tracks: the file's
form, with file and line for every mistake; the cases sent through a real router after the
exercise's own (Click from memory, bmv2 on the testbed), a wrong one reported with what
was sent, what came back and what was expected; the grading output carrying them."""

import json

import pytest
from click.testing import CliRunner

from conftest import engine_marks
from routerlab.course import checks
from routerlab import engines
from routerlab.course import clickexercises as ce
from routerlab.course import clickrouter
from routerlab.cli.app import app
from routerlab.errors import DataFormatError

needs_click, _ = engine_marks("click", clickrouter.click_binary)

IPROUTER = """\
# an instructor's cases for iprouter: addresses the README's routes cover, not in check.yaml
cases:
  - {send: "udp 10.70.1.2 > 10.71.200.3", leaves: out, why: "inside 10.71.0.0/16"}
  - {send: "udp 10.70.2.2 > 10.71.9.77:53", from: out, leaves: in, why: "the longer prefix"}
  - send: "tcp 10.70.1.2 > 10.70.2.9:80"
    leaves: out
"""


def three_pass_then_the_wrong_one(extra, names, detail):
    """The extra expectations: named so, the last case (a wrong one) failing with ``detail``."""
    assert [r.name for r in extra] == names
    assert [r.passed for r in extra] == [True, True, True, False]
    assert extra[3].detail == detail


def write(tmp_path, text, name="extra.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_the_cases_are_read_with_their_ports(tmp_path):
    cases = checks.read_extra_checks(write(tmp_path, IPROUTER))
    assert [(c.send, c.from_port, c.leaves, c.why) for c in cases] == [
        ("udp 10.70.1.2 > 10.71.200.3", 0, 1, "inside 10.71.0.0/16"),
        ("udp 10.70.2.2 > 10.71.9.77:53", 1, 0, "the longer prefix"),
        ("tcp 10.70.1.2 > 10.70.2.9:80", 0, 1, "")]
    p = checks.parse(cases[1].frame)
    assert (p["IP"].dst, p["UDP"].dport, p.dst) == ("10.71.9.77", 53, "02:72:6c:02:00:01")  # into port 1's MAC
    ttl = checks.parse(checks.parse_case("udp 10.70.1.2 > 10.71.0.5 ttl 1"))
    assert ttl["IP"].ttl == 1 and ttl["UDP"].dport == 5000


@pytest.mark.parametrize("text, line, message", [
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out}\nhidden: true\n", 3,
     "the file: unknown key 'hidden'; allowed: cases"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out}\n  - {send: 'udp 10.70.1.2 > 10.71.0.5',\n"
     "     leave: out}\n", 4, "case 2: unknown key 'leave'; allowed: send, from, leaves, why"),
    ("cases:\n  - {send: 'udp 10.70.1.2 to 10.71.0.5', leaves: out}\n", 2, "case 1: not a packet: "),
    ("cases:\n  - {send: 'icmp-echo 10.70.1.2 > 10.71.0.5:7', leaves: out}\n", 2, "ICMP has no port"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5 ttl 300', leaves: out}\n", 2, "a TTL 0-255"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5'}\n", 2, "case 1: missing key(s) leaves; required: send, leaves"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: sink}\n", 2,
     "case 1: leaves must be in, out or nowhere, got 'sink'"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out, from: left}\n", 2,
     "case 1: from must be in or out, got 'left'"),
    ("cases: []\n", 1, "cases: [] is not allowed; allowed: a list of at least one case"),
    ("cases:\n  - {send: [1, 2], leaves: out}\n", 2, "case 1: send: [1, 2] is not allowed; allowed: a single value"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out\n", 3, "expected ',' or '}'"),
    ("- just a list\n", 1, "the file: ['just a list'] is not allowed; allowed: a mapping with the key cases"),
    ("cases:\n  - {send: 'udp 10.70.1 > 10.71.0.5', leaves: out}\n", 2, "10.70.1 is not an IPv4 address"),
    ("cases:\n  - {send: 'udp 10.70.1.2 > 999.1.1.1', leaves: out}\n", 2, "999.1.1.1 is not an IPv4 address"),
])
def test_a_mistake_in_the_file_names_file_and_line(tmp_path, text, line, message):
    path = write(tmp_path, text)
    with pytest.raises(DataFormatError) as e:
        checks.read_extra_checks(path)
    assert (e.value.source, e.value.line) == (str(path), line)
    assert message in e.value.message, e.value.message


def test_a_bad_file_stops_the_check_before_it_runs(tmp_path):
    path = write(tmp_path, "cases:\n  - {send: 'udp 10.70.1.2 > 10.71.0.5', leaves: out, verdict: pass}\n")
    for track, exercise in (("click", "iprouter"), ("p4", "router")):
        r = CliRunner().invoke(app, [track, "check", exercise, "--solution", "--extra-checks", str(path)])
        assert r.exit_code == 2
        assert f"--extra-checks: {path}:2: case 1: unknown key 'verdict'" in r.output, r.output
    r = CliRunner().invoke(app, ["click", "check", "iprouter", "--extra-checks", str(tmp_path / "none.yaml")])
    assert r.exit_code == 2 and "none.yaml: cannot read the extra checks (No such file or directory)" in r.output


@needs_click
def test_the_cases_run_after_the_exercises_own_checks_in_the_click_track(tmp_path):
    wrong = IPROUTER + '  - {send: "udp 10.70.1.2 > 10.71.0.5", leaves: nowhere, why: "a wrong case"}\n'
    results = ce.check("iprouter", solution=True, memory=True, extra=checks.read_extra_checks(write(tmp_path, wrong)))
    own = ce.check("iprouter", solution=True, memory=True)
    assert [r.name for r in results[:len(own)]] == [r.name for r in own] and all(r.passed for r in own)
    three_pass_then_the_wrong_one(results[len(own):], [
        "extra: udp 10.70.1.2 > 10.71.200.3 into $IN_DEV leaves on $OUT_DEV (inside 10.71.0.0/16)",
        "extra: udp 10.70.2.2 > 10.71.9.77:53 into $OUT_DEV leaves on $IN_DEV (the longer prefix)",
        "extra: tcp 10.70.1.2 > 10.70.2.9:80 into $IN_DEV leaves on $OUT_DEV",
        "extra: udp 10.70.1.2 > 10.71.0.5 into $IN_DEV is dropped (a wrong case)"],
        "sent UDP 10.70.1.2:3004 > 10.71.0.5:5000 TTL 64 into $IN_DEV; got UDP "
        "10.70.1.2:3004 > 10.71.0.5:5000 TTL 63 on $OUT_DEV; expected nothing (dropped)")


@needs_click
def test_a_skeleton_fails_the_hidden_cases_and_a_grader_reads_them(tmp_path):
    path = write(tmp_path, IPROUTER)
    r = CliRunner().invoke(app, ["click", "check", "iprouter", "--memory", "--extra-checks", str(path),
                                 "--format", "json"])
    assert r.exit_code == 1
    data = json.loads(r.stdout[r.stdout.index("{"):])
    extra = [e for e in data["expectations"] if e["name"].startswith("extra: ")]
    assert len(extra) == 3 and all(e["result"] == "failed" and e["detail"].startswith("sent ") for e in extra)
    r = CliRunner().invoke(app, ["click", "check", "iprouter", "--memory", "--solution", "--extra-checks",
                                 str(path), "--format", "junit"])
    assert r.exit_code == 0 and r.stdout.count('<testcase classname="routerlab.click.iprouter" name="extra: ') == 3


_, needs_bmv2 = engine_marks("bmv2", lambda: engines.get("bmv2").check())


@needs_bmv2
def test_the_cases_run_after_the_exercises_own_checks_in_the_p4_track(tmp_path):
    from routerlab.course import p4exercises

    path = write(tmp_path, """\
cases:
  - {send: "udp 10.70.1.2 > 10.71.0.77", leaves: out, why: "10.71.0.0/24"}
  - {send: "tcp 10.70.1.2 > 10.71.0.129:80", leaves: in, why: "10.71.0.128/25, the longer prefix"}
  - {send: "udp 10.70.1.2 > 10.71.1.1", leaves: nowhere, why: "no route"}
  - {send: "udp 10.70.1.2 > 10.71.0.77 ttl 1", leaves: out, why: "a wrong case: TTL 1 is dropped"}
""")
    results = p4exercises.check("router", solution=True, extra=checks.read_extra_checks(path))
    three_pass_then_the_wrong_one([r for r in results if r.name.startswith("extra: ")], [
        "extra: udp 10.70.1.2 > 10.71.0.77 into port 0 leaves on port 1 (10.71.0.0/24)",
        "extra: tcp 10.70.1.2 > 10.71.0.129:80 into port 0 leaves on port 0 (10.71.0.128/25, the longer prefix)",
        "extra: udp 10.70.1.2 > 10.71.1.1 into port 0 is dropped (no route)",
        "extra: udp 10.70.1.2 > 10.71.0.77 ttl 1 into port 0 leaves on port 1 (a wrong case: TTL 1 is dropped)"],
        "sent UDP 10.70.1.2:3004 > 10.71.0.77:5000 TTL 1 into port 0; got nothing; expected one packet on port 1")
    assert results[:-4] and all(r.passed for r in results[:-4])


@needs_click
def test_the_readmes_example_passes_with_the_iprouter_solution(tmp_path):
    readme = (ce.exercises_dir() / "README.md").read_text()
    section = readme.split("### Hidden checks", 1)[1].split("\n## ", 1)[0]
    block = section.split("    cases:\n", 1)[1].split("\n\n", 1)[0]
    path = write(tmp_path, "cases:\n" + "\n".join(line[4:] for line in block.splitlines()) + "\n")
    cases = checks.read_extra_checks(path)
    assert len(cases) == 4
    results = ce.check("iprouter", solution=True, memory=True, extra=cases)
    assert all(r.passed for r in results), [(r.name, r.detail) for r in results if not r.passed]
