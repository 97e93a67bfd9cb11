"""The Click course: every solution passes its check and every skeleton as shipped fails
it, from memory and (as root) on the testbed; a student's mistakes are reported as Click
reports them, with the file, the line and a hint; ``routerlab click`` and ``routerlab
measure --config`` around them. Parts that need Click skip with the reason where it is
not built (and fail under ROUTERLAB_REQUIRE_ENGINES=1)."""

import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from conftest import engine_marks
from routerlab.course import clickexercises as ce
from routerlab.course import clickrouter
from routerlab.measuring import measurement
from routerlab.cli import app
from routerlab.errors import ParameterError

needs_click, on_testbed = engine_marks("click", clickrouter.click_binary)

ROUTERS = [e for e in ce.EXERCISES if e != "measure"]
runner = CliRunner()


# -- the exercises as files (no Click needed) --------------------------------------------------

@pytest.mark.parametrize("exercise", ce.EXERCISES)
def test_each_exercise_has_its_statement_time_and_data(exercise):
    folder = ce.exercises_dir() / exercise
    readme = (folder / "README.md").read_text()
    minutes = ce.exercise_data(exercise)["minutes"]
    assert f"Time: about {minutes} minutes." in readme
    # the p4lang tutorials' order, with what to read and what the check expects
    sections = ("## Introduction", "## What to read", "## Steps", "## What the check expects",
                "## Food for thought", "## Troubleshooting", "## Automated tests")
    places = [readme.find(s) for s in sections]
    assert -1 not in places and places == sorted(places), dict(zip(sections, places))
    overview = (ce.exercises_dir() / "README.md").read_text()
    assert re.search(rf"`{exercise}/` \|.*\| about {minutes} min \|", overview), "routers/exercises/README.md table"


@pytest.mark.parametrize("exercise", ROUTERS)
def test_the_skeletons_todos_are_the_readmes_steps(exercise):
    folder = ce.exercises_dir() / exercise
    skeleton = (folder / f"{exercise}.click").read_text()
    todos = [int(n) for n in re.findall(r"TODO (\d+):", skeleton)]
    assert todos == list(range(1, len(todos) + 1)) and todos
    steps = [int(n) for n in re.findall(r"^\d+\. TODO (\d+):", (folder / "README.md").read_text(), re.M)]
    assert steps == todos
    assert (folder / "solution" / f"{exercise}.click").is_file()
    assert "TODO" not in (folder / "solution" / f"{exercise}.click").read_text()


def test_a_firewall_case_becomes_the_frame_it_names():
    from routerlab.course.checks import parse

    p = parse(ce.parse_case("tcp 192.0.2.7 > 10.71.0.5:80", sport=2004))
    assert (p["IP"].src, p["IP"].dst, p["TCP"].sport, p["TCP"].dport) == ("192.0.2.7", "10.71.0.5", 2004, 80)
    assert parse(ce.parse_case("icmp-reply 10.70.1.2 > 10.71.0.5"))["ICMP"].type == 0
    with pytest.raises(ValueError, match="not a packet"):
        ce.parse_case("tcp from anywhere")


def test_unknown_exercise_and_missing_config_are_named(tmp_path):
    with pytest.raises(ParameterError, match=r"no exercise 'router'; did you mean iprouter\? \(the exercises: forward, iprouter"):
        ce.check("router")
    with pytest.raises(ParameterError, match=r"--config: .*nope\.click: no such file"):
        ce.config_path("forward", tmp_path / "nope.click")


# -- with Click, from memory -----------------------------------------------------------------

@needs_click
@pytest.mark.parametrize("exercise", ce.EXERCISES)
def test_solutions_pass_from_memory(exercise):
    results = ce.check(exercise, solution=True, memory=True)
    assert len(results) >= 5
    failed = [(r.name, r.detail) for r in results if not r.passed and not r.skipped]
    assert not failed
    # only the measure exercise's load trial needs the testbed
    assert [r.name for r in results if r.skipped] == ([results[-1].name] if exercise == "measure" else [])


@needs_click
@pytest.mark.parametrize("exercise", ce.EXERCISES)
def test_skeletons_as_shipped_fail_from_memory(exercise):
    results = ce.check(exercise, memory=True)
    assert results[0].passed, results[0].detail  # a skeleton runs: it just does not do the job
    assert sum(not r.passed and not r.skipped for r in results) >= 3


def _bad(tmp_path, text):
    path = tmp_path / "bad.click"
    path.write_text("// a student's forward\ndefine($IN_DEV in0, $OUT_DEV out0);\n" + text)
    return path


MISTAKES = {
    "does not parse": ("FromDevice($IN_DEV) -> in2out :: Counter( -> Queue -> ToDevice($OUT_DEV);\n",
                       [r"bad\.click:\d+: expected '\)'"]),
    "push meets pull": ("FromDevice($IN_DEV, SNIFFER true) -> ToDevice($OUT_DEV);\n",
                        [r"bad\.click:3: 'FromDevice@1 :: FromDevice' push output 0 connected to "
                         r"'ToDevice@2 :: ToDevice' pull input 0", "hint: .*put a Queue between them"]),
    "agnostic in between": ("FromDevice($IN_DEV) -> in2out :: Counter -> ToDevice($OUT_DEV);\n",
                            [r"bad\.click:3: agnostic 'in2out :: Counter' in mixed context",
                             "hint: .*put a Queue on that path"]),
    "unknown element": ("FromDevice($IN_DEV) -> Strip(14) -> CheckIPHeader\n"
                        "  -> IPFiltre(allow all) -> Queue -> ToDevice($OUT_DEV);\n",
                        [r"bad\.click:4: undeclared element 'IPFiltre'",
                         "hint: IPFiltre is not an element class of this Click build; did you mean IPFilter"]),
    "not the testbed's device": ("FromDevice($IN_DEV) -> Queue -> ToDevice($OUT_DEV);\n"
                                 "FromDevice(eth0) -> Queue -> ToDevice($IN_DEV);\n",
                                 [r"bad\.click:4: FromDevice\(eth0\): eth0 is not a device of the testbed",
                                  r"hint: write FromDevice\(\$IN_DEV\) .* \(here mem-in and mem-out\)"]),
    "no device at all": ("FromDevice() -> Queue -> ToDevice($OUT_DEV);\n",
                         [r"bad\.click:3: FromDevice\(\): which device\?"]),
}


@needs_click
@pytest.mark.parametrize("mistake", MISTAKES)
def test_a_students_mistake_is_reported_as_click_reports_it_with_a_hint(tmp_path, mistake):
    text, patterns = MISTAKES[mistake]
    path = _bad(tmp_path, text)
    results = ce.check("forward", path, memory=True)
    assert len(results) == 1 and not results[0].passed
    for pattern in patterns:
        assert re.search(pattern, results[0].detail), results[0].detail
    assert results[0].detail.endswith(ce.NOT_TRIED)  # the student learns why only one line shows
    r = runner.invoke(app, ["click", "check", "forward", "--config", str(path), "--memory"])
    assert r.exit_code == 1 and "FAIL" in r.stdout and "0 of 1 expectations pass" in r.stdout
    assert "Traceback" not in r.output and re.search(patterns[0], r.stdout)


@needs_click
def test_a_failure_says_what_was_sent_what_came_back_and_what_was_expected(tmp_path):
    # forwards in one direction only, and counts nothing
    path = _bad(tmp_path, "FromDevice($IN_DEV) -> Queue -> ToDevice($OUT_DEV);\n")
    results = {r.name: r for r in ce.check("forward", path, memory=True)}
    back = results["a frame into $OUT_DEV leaves on $IN_DEV, unchanged"]
    assert not back.passed and back.detail == (
        "sent UDP 10.70.2.2:1234 > 10.70.1.2:5000 TTL 64 into $OUT_DEV; got nothing (no FromDevice reads "
        "$OUT_DEV); expected the same frame on $IN_DEV")
    assert results["a frame into $IN_DEV leaves on $OUT_DEV, unchanged"].passed
    counter = results["in2out.count counts the frames that came in on $IN_DEV"]
    assert "No element named 'in2out'" in counter.detail and "in2out :: Counter" in counter.detail


@needs_click
def test_the_command_line_passes_a_solution_and_refuses_bad_options(tmp_path):
    r = runner.invoke(app, ["click", "check", "nat", "--solution", "--memory"])
    assert r.exit_code == 0, r.output
    assert r.stdout.count("PASS") == 7 and "7 of 7 expectations pass" in r.stdout
    r = runner.invoke(app, ["click", "check", "nat", "--memory"])
    assert r.exit_code == 1 and "FAIL" in r.stdout and "sent UDP 10.70.1.2:1234 > 10.71.0.5:5000" in r.stdout
    r = runner.invoke(app, ["click", "check", "nat", "--solution", "--config", str(tmp_path / "x.click")])
    assert r.exit_code == 2 and "give one of them" in r.stderr
    r = runner.invoke(app, ["click", "check", "bgp"])
    assert r.exit_code == 2 and "no exercise 'bgp' (the exercises: forward" in r.stderr
    r = runner.invoke(app, ["click", "list"])
    assert r.exit_code == 0 and r.stdout.splitlines()[0].startswith("1. forward") and "6. measure" in r.stdout


@needs_click
def test_element_manuals_come_from_this_click_build():
    assert clickrouter.element_doc("FromDevice").name == "FromDevice.u.7click.gz"
    assert clickrouter.element_doc("language").name == "click.5"
    with pytest.raises(ParameterError, match="did you mean IPFilter"):
        clickrouter.element_doc("IPFiltr")


@needs_click
def test_measure_takes_a_configuration_of_ones_own_only_where_it_can(tmp_path):
    mine = ce.config_path("iprouter", solution=True)
    eng, sc = measurement.resolve("click", "single-flow", mine)
    assert eng.own_config == mine and not eng.features
    with pytest.raises(ParameterError, match="does not support firewall"):
        measurement.resolve("click", "single-flow-fw5", mine)  # its own rules, not the scenario's
    with pytest.raises(ParameterError, match="engine linux runs no configuration file of yours"):
        measurement.resolve("linux", "single-flow", mine)
    with pytest.raises(ParameterError, match="no such file"):
        measurement.resolve("click", "single-flow", tmp_path / "none.click")


# -- with Click, on the testbed ---------------------------------------------------------------

@on_testbed
@pytest.mark.parametrize("exercise", ce.EXERCISES)
def test_solutions_pass_on_the_testbed(exercise):
    results = ce.check(exercise, solution=True, memory=False)
    assert all(r.passed for r in results), [(r.name, r.detail or r.skipped) for r in results if not r.passed]


@on_testbed
def test_a_skeleton_fails_on_the_testbed_as_from_memory():
    on_links = ce.check("forward", memory=False)
    in_memory = ce.check("forward", memory=True)
    assert [r.passed for r in on_links] == [r.passed for r in in_memory] == [True, False, False, False, False]


def test_check_data_is_well_formed():
    for exercise in ce.EXERCISES:
        data = yaml.safe_load((ce.exercises_dir() / exercise / "check.yaml").read_text())
        assert isinstance(data["minutes"], int)
    cases = ce.exercise_data("firewall")["cases"]
    assert {c["verdict"] for c in cases} == {"pass", "drop"} and all(c["why"] for c in cases)


# -- grading output ------------------------------------------------------------------------

@needs_click
@pytest.mark.parametrize("solution, code", [(True, 0), (False, 1)])
def test_the_check_reports_to_a_grader_in_junit_and_json(solution, code):
    """JUnit XML as a grader's tools read it (junitparser), and JSON: one test case per
    expectation, failures with what was sent and what came back, and the exit status."""
    import json

    import junitparser
    from click.testing import CliRunner

    from routerlab.cli.app import app

    args = ["click", "check", "forward", "--memory"] + (["--solution"] if solution else [])
    r = CliRunner().invoke(app, args + ["--format", "junit"])
    assert r.exit_code == code, r.output
    xml = r.stdout[r.stdout.index("<?xml"):]
    doc = junitparser.JUnitXml.fromstring(xml)
    suites = [doc] if isinstance(doc, junitparser.TestSuite) else list(doc)
    assert len(suites) == 1
    suite = suites[0]
    cases = list(suite)
    assert suite.name == "routerlab.click.forward" and suite.tests == len(cases) >= 3
    failed = [c for c in cases if c.result and isinstance(c.result[0], junitparser.Failure)]
    assert bool(failed) == (not solution) and suite.failures == len(failed)
    for c in failed:
        assert c.result[0].message and c.result[0].text
    assert all(c.time >= 0 for c in cases) and suite.time >= 0

    r = CliRunner().invoke(app, args + ["--format", "json"])
    assert r.exit_code == code
    data = json.loads(r.stdout[r.stdout.index("{"):])
    assert (data["track"], data["exercise"], data["checked"]) == ("click", "forward", "solution" if solution else "skeleton")
    assert data["total"] == len(cases) == len(data["expectations"])
    assert data["failed"] == len(failed) and data["passed"] + data["failed"] + data["skipped"] == data["total"]
    assert {e["result"] for e in data["expectations"]} <= {"passed", "failed", "skipped"}
    assert data["seconds"] == pytest.approx(sum(e["seconds"] for e in data["expectations"]), abs=0.01)
    # by TODO step, as the text report groups them
    assert [s["step"] for s in data["steps"]] == ["the file as a whole", "TODO 1", "TODO 2", "TODO 3"]
    assert sum(s["total"] for s in data["steps"]) == data["total"]
    assert {e["step"] for e in data["expectations"]} == {0, 1, 2, 3}
    assert (data["progress"] == "every TODO passes") == solution
    assert {c.name: [p.value for p in c.child(junitparser.Properties)] if c.child(junitparser.Properties) else None
            for c in cases} == {e["name"]: [str(e["step"])] for e in data["expectations"]}


def test_no_skeleton_points_to_its_solution():
    """A student opens the skeleton; an answer a line away is no exercise (Click's and P4's)."""
    from routerlab.engines import p4

    skeletons = [ce.config_path(e) for e in ce.EXERCISES] + [p4.source(n, solution=False) for n in p4.PROGRAMS]
    assert len(skeletons) == len(ce.EXERCISES) + len(p4.PROGRAMS)
    for path in skeletons:
        assert "solution" not in path.read_text().lower(), path


@needs_click
def test_a_router_that_fragments_to_the_links_mtu_not_its_own_fails_the_fragmentation_checks(tmp_path):
    """IPFragmenter(1500) where the exercise asks for IPFragmenter($MTU): the check gives
    the router an MTU of 1000, so the 1,400-byte packet must leave in fragments, and with
    don't-fragment set be answered with ICMP fragmentation needed."""
    config = tmp_path / "iprouter.click"
    config.write_text(ce.config_path("iprouter", solution=True).read_text().replace("IPFragmenter($MTU)",
                                                                                   "IPFragmenter(1500)"))
    results = ce.check("iprouter", config, memory=True)
    failed = {r.name.split(":")[0].split(" leaves")[0]: r.detail for r in results if not r.passed}
    assert list(failed) == ["a 1,400-byte packet to 10.71.0.5", "a 1,400-byte packet to 10.71.0.5 with don't-fragment set"], \
        failed
    assert failed["a 1,400-byte packet to 10.71.0.5"] == (
        "sent UDP 10.70.1.2:1234 > 10.71.0.5:5000 TTL 64 into $IN_DEV; got UDP 10.70.1.2:1234 > 10.71.0.5:5000 TTL 63 "
        "on $OUT_DEV; expected fragments of at most 1000 bytes on $OUT_DEV")
    assert failed["a 1,400-byte packet to 10.71.0.5 with don't-fragment set"].startswith("sent UDP 10.70.1.2:1234 > 10.71.0.5:5000 TTL 64")


@needs_click
@pytest.mark.parametrize("exercise", ce.EXERCISES)
def test_what_the_untouched_skeleton_passes_is_what_its_readme_says_is_given(exercise):
    readme = (ce.exercises_dir() / exercise / "README.md").read_text()
    section = readme.split("### Given with the skeleton\n", 1)[1].split("\n## ", 1)[0]
    said = [line[2:] for line in section.splitlines() if line.startswith("- ")]
    results = ce.check(exercise, memory=True)
    assert results[0].passed  # Click takes it
    assert [r.name for r in results[1:] if r.passed] == said


# -- step by step ----------------------------------------------------------------------------

STEPS = Path(__file__).parent / "data" / "iprouter-steps"


@needs_click
@pytest.mark.parametrize("after, progress", [
    (0, "next: TODO 1-2 (0 of 2 pass); then TODO 3-5 (0 of 5), TODO 6 (0 of 4)"),
    # TODO 1 alone shows through TODO 2's ARP answers: the check names them together
    (1, "next: TODO 1-2 (0 of 2 pass); then TODO 3-5 (0 of 5), TODO 6 (0 of 4)"),
    (2, "TODO 1-2 pass; next: TODO 3-5 (0 of 5 pass); then TODO 6 (0 of 4)"),
    (3, "TODO 1-2 pass; next: TODO 3-5 (0 of 5 pass); then TODO 6 (0 of 4)"),
    (4, "TODO 1-2 pass; next: TODO 3-5 (0 of 5 pass); then TODO 6 (0 of 4)"),
    (5, "TODO 1-2, TODO 3-5 pass; next: TODO 6 (0 of 4 pass)"),
    (6, "every TODO passes")])
def test_a_student_going_step_by_step_sees_the_steps_done_pass_and_the_next_named(after, progress):
    """iprouter as a student has it after each TODO (tests/data/iprouter-steps: each one
    starts, its later outputs connected to Discard; 0 the skeleton, 6 the solution)."""
    from routerlab.course import checks

    config = {0: None, 6: ce.config_path("iprouter", solution=True)}.get(after, STEPS / f"after-todo-{after}.click")
    results = ce.check("iprouter", config, memory=True)
    assert results[0].passed, results[0].detail  # each step's file starts
    assert checks.standing(results) == progress
    r = runner.invoke(app, ["click", "check", "iprouter", "--memory"] + (["--config", str(config)] if config else []))
    assert r.stdout.rstrip().endswith(progress[0].upper() + progress[1:])
    # the text report heads each step's expectations with its TODOs
    assert [ln.split(":")[0] for ln in r.stdout.splitlines() if re.match(r"(TODO|the file)", ln)] == [
        "the file as a whole", "TODO 1-2", "TODO 3-5", "TODO 6"]


@needs_click
@pytest.mark.parametrize("exercise", ROUTERS)
def test_every_expectation_of_a_todo_exercise_names_its_step(exercise):
    """Each expectation but Click taking the file (and what the skeleton already does)
    holds after a numbered TODO of the exercise's skeleton, the last TODO among them."""
    from routerlab.course import checks

    results = ce.check(exercise, solution=True, memory=True)
    todos = {int(n) for n in re.findall(r"TODO (\d+):", ce.config_path(exercise).read_text())}
    marked = {r.step for r in results if r.step}
    assert marked <= todos and max(marked) == max(todos), (marked, todos)
    assert [s.label for s in checks.steps(results)][0] == "the file as a whole"


def test_steps_fold_a_todo_seen_only_through_the_next_and_put_extra_cases_last():
    from routerlab.course.checks import Expectation, standing, steps

    results = [Expectation("starts", True), Expectation("a", True, step=2), Expectation("b", False, step=5),
               Expectation("c", True, step=3), Expectation("hidden", False, step=None), Expectation("d", False, step=5)]
    got = steps(results)
    assert [(s.label, [e.name for e in s.expectations], s.passed) for s in got] == [
        ("the file as a whole", ["starts"], 1), ("TODO 1-2", ["a"], 1), ("TODO 3", ["c"], 1),
        ("TODO 4-5", ["b", "d"], 0), ("extra checks", ["hidden"], 0)]
    assert standing(results) == "TODO 1-2, TODO 3 pass; next: TODO 4-5 (0 of 2 pass)"
    assert standing([Expectation("starts", True)]) == ""
    # what fails of the file as a whole comes first, even when every TODO passes
    assert standing([Expectation("compiles", False), Expectation("a", True, step=1)]) == \
        "the file as a whole: 0 of 1 pass; every TODO passes"


@needs_click
def test_a_student_tries_packets_on_the_router_and_sees_where_they_leave(capsys):
    """click try from memory: one router for every packet, so state (a NAT's mapping)
    carries from one to the next; a line that is no packet is said and skipped."""
    sent = ce.try_router("nat", ["udp 10.70.1.2 > 10.71.0.5:5000", "bogus",
                                 "out: udp 10.71.0.5 > 10.70.2.1:1024"], solution=True, memory=True, show=print)
    out = capsys.readouterr().out.splitlines()
    assert sent == 2
    assert out[0] == "sent UDP 10.70.1.2:1234 > 10.71.0.5:5000 TTL 64 into $IN_DEV"
    assert re.fullmatch(r"  left on \$OUT_DEV: UDP 10\.70\.2\.1:\d+ > 10\.71\.0\.5:5000 TTL 64", out[1]), out
    assert out[2].startswith("? not a packet: 'bogus'")
    r = runner.invoke(app, ["click", "try", "iprouter", "--solution", "--memory", "arp 10.70.1.1",
                            "icmp-echo 10.70.1.2 > 10.70.1.1"])
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[1] == ("  left on $IN_DEV: ARP reply 10.70.1.1 is-at 02:72:6c:01:00:01 "
                                        "(02:72:6c:01:00:01 -> 02:72:6c:01:00:02)")
    assert r.stdout.splitlines()[3].startswith("  left on $IN_DEV: ICMP 10.70.1.1 > 10.70.1.2 type 0 code 0")
    # typed on standard input, as at a terminal (an empty line or the end stops)
    r = runner.invoke(app, ["click", "try", "forward", "--solution", "--memory"],
                      input="udp 10.70.1.2 > 10.71.0.5\n\n")
    assert r.exit_code == 0 and r.stdout.splitlines() == [
        "sent UDP 10.70.1.2:1234 > 10.71.0.5:5000 TTL 64 into $IN_DEV",
        "  left on $OUT_DEV: UDP 10.70.1.2:1234 > 10.71.0.5:5000 TTL 64"]
    r = runner.invoke(app, ["click", "try", "forward", "--memory", "--config", "nowhere.click", "udp 1.1.1.1 > 1.1.1.2"])
    assert r.exit_code == 2 and "nowhere.click" in r.output


def test_a_packet_line_is_what_it_says_or_is_refused_naming_it():
    from routerlab.course.checks import describe, packet_line

    f, port = packet_line("out: tcp 10.70.2.2 -> 10.70.1.2:22 ttl 3")
    assert port == 1 and describe(f) == "TCP 10.70.2.2:1234 > 10.70.1.2:22 TTL 3"
    f, port = packet_line("arp 10.70.2.1")
    assert port == 0 and describe(f).startswith("ARP who-has 10.70.2.1 tell 10.70.1.2")
    for bad in ("arp 10.70.2.300", "udp 10.70.1.2 > 10.71.0.5 ttl 300", "sideways: udp 1.1.1.1 > 2.2.2.2"):
        with pytest.raises(ValueError, match="not a packet"):
            packet_line(bad)


# -- the student's failure and routerlab's, told apart by class (no Click needed) ----------------

class _Refusing:
    """A router whose start raises ``error``, as Click refusing the configuration does
    (:class:`~routerlab.errors.NotStarted`) or as routerlab's own machinery may."""

    devices = clickrouter.MEMORY_DEVICES

    def __init__(self, error):
        self.error = error

    def __enter__(self):
        raise self.error

    def __exit__(self, *exc):
        return False


def _starting_with(monkeypatch, error):
    monkeypatch.setattr(ce, "_router", lambda *a: (_Refusing(error), {"FromDevice": []}, []))


def test_a_configuration_that_does_not_start_is_the_students_result(monkeypatch):
    import json

    from routerlab.errors import NotStarted

    _starting_with(monkeypatch, NotStarted("click exited (1): bad.click:3: syntax error"))
    [result] = ce.check("forward", memory=True)
    assert (result.name, result.passed) == (clickrouter.START, False)
    assert result.detail == f"click exited (1): bad.click:3: syntax error\n{ce.NOT_TRIED}"
    with pytest.raises(NotStarted, match="syntax error"):
        ce.try_router("forward", ["udp 10.70.1.2 > 10.71.0.5"], memory=True, show=print)
    # a grader reads it as the one expectation failing, the exit status 1
    r = runner.invoke(app, ["click", "check", "forward", "--solution", "--memory", "--format", "json"])
    assert r.exit_code == 1, r.output
    data = json.loads(r.stdout[r.stdout.index("{"):])
    assert (data["total"], data["failed"]) == (1, 1)
    assert data["expectations"][0]["result"] == "failed" and "syntax error" in data["expectations"][0]["detail"]
    r = runner.invoke(app, ["click", "try", "forward", "--solution", "--memory", "udp 10.70.1.2 > 10.71.0.5"])
    assert r.exit_code == 1 and "syntax error" in r.output


@pytest.mark.parametrize("error", ["bare", "testbed"])
def test_an_internal_failure_of_a_check_is_not_blamed_on_the_student(monkeypatch, error):
    from routerlab.errors import RouterlabError, TestbedError

    failure = RouterlabError("click: reading version: 500 internal") if error == "bare" else \
        TestbedError("ip link add: RTNETLINK answers: File exists")
    _starting_with(monkeypatch, failure)
    with pytest.raises(type(failure)) as raised:
        ce.check("forward", memory=True)
    assert raised.value is failure
    with pytest.raises(type(failure)):
        ce.try_router("forward", ["udp 10.70.1.2 > 10.71.0.5"], memory=True, show=print)
    # the check could not run: exit status 2 with the error, no expectation failed
    for fmt in ("text", "json", "junit"):
        r = runner.invoke(app, ["click", "check", "forward", "--solution", "--memory", "--format", fmt])
        assert r.exit_code == 2 and str(failure) in r.output, r.output
        assert "FAIL" not in r.output and "failed" not in r.stdout and "Traceback" not in r.output
    r = runner.invoke(app, ["click", "try", "forward", "--solution", "--memory", "udp 10.70.1.2 > 10.71.0.5"])
    assert r.exit_code == 2 and str(failure) in r.output
