"""The routes to the courses' engines, measured (routerlab.course.machine): a command's
time, the peak memory of its largest process and the peak disk of a folder; the bundle
route taken for real on Click; the source-build route on a tiny engine; a build route
measured before kept until measured again; and the guide giving each route's numbers, or
saying it was not measured and how to measure it."""

import copy
import json
import os
import signal
import sys
import threading
import time

import pytest

from conftest import ROOT, engine_absent, tiny_tarball
from routerlab.course import machine
from routerlab.engines import builds
from routerlab.errors import RouterlabError

FACTS = ROOT / "datasets" / "course-machine"


def test_a_command_is_measured_by_its_largest_process_and_its_peak_disk(tmp_path):
    """The peak memory is a descendant's (a grandchild holding 200 MiB), not the child's;
    the peak disk is that of a file written and removed while the command ran."""
    watch = tmp_path / "folder"
    watch.mkdir()
    grandchild = "b = bytearray(200 * 2**20); b[::4096] = b'x' * len(b[::4096])"
    child = (f"import subprocess, sys, time, pathlib\n"
             f"subprocess.run([sys.executable, '-c', {grandchild!r}], check=True)\n"
             f"f = pathlib.Path({str(watch / 'big')!r}); f.write_bytes(bytes(30 * 2**20)); time.sleep(1); f.unlink()\n")
    r = machine._measured([sys.executable, "-c", child], dict(os.environ), watch=watch, every=0.1)
    assert r["exit"] == 0, r["err"]
    assert r["peak_mib"] >= 200
    assert r["peak_disk_mib"] >= 30 > machine._mib(watch)
    assert r["wall_seconds"] > 0
    r = machine._measured([sys.executable, "-c", "import sys; print('out'); sys.exit(3)"], dict(os.environ))
    assert r["exit"] == 3 and r["out"] == "out\n" and "peak_disk_mib" not in r


def test_ctrl_c_stops_the_measured_command_and_waits_for_it(tmp_path):
    """Ctrl-C while a command is measured: the command is sent SIGINT (a build removes its
    unfinished folders then) and is gone before the interruption goes on."""
    said = tmp_path / "said"
    child = (f"import os, pathlib, signal, sys, time\n"
             f"p = pathlib.Path({str(said)!r})\n"
             f"def stop(*_): p.write_text(f'{{os.getpid()}} stopped'); sys.exit(130)\n"
             f"signal.signal(signal.SIGINT, stop)\n"
             f"p.write_text(str(os.getpid()))\n"
             f"time.sleep(60)\n")
    main = threading.main_thread().ident
    gave_up = threading.Event()

    def ctrl_c():
        # once the child runs (a busy machine may take seconds to start it), Ctrl-C, sent
        # to the main thread itself: a signal another thread takes would not end its wait
        deadline = time.monotonic() + 60
        while not said.exists() and time.monotonic() < deadline and not gave_up.is_set():
            time.sleep(0.05)
        if not gave_up.is_set():
            signal.pthread_kill(main, signal.SIGINT)

    # Ctrl-C as a user's shell delivers it, whatever handler an earlier test left
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    sender = threading.Thread(target=ctrl_c, daemon=True)
    sender.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            machine._measured([sys.executable, "-c", child], dict(os.environ))
    finally:
        gave_up.set()
        sender.join()
        signal.signal(signal.SIGINT, before)
    pid, word = said.read_text().split()
    assert word == "stopped"
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid), 0)


@pytest.mark.slow
def test_the_bundle_route_packs_the_installed_engine_and_installs_it_into_an_empty_folder(tmp_path, monkeypatch):
    if builds.installed("click") is None:
        engine_absent("click not installed (routerlab engines install click)")
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the route's folders, to see that they go
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    route = machine.bundle_route(("click",), command="test")
    assert route["engines"] == ["click"] and route["measured"]["command"] == "test"
    assert route["measured"]["as_root"] == (os.geteuid() == 0)
    assert route["pack"]["seconds"] > 0 and route["bundle_mib"] > 0
    got = route["install"]
    assert got["command"] == "routerlab engines install --from FILE --sha256 HASH click"
    assert got["seconds"] > 0 and got["peak_mib"] > 0
    assert 0 < got["disk_mib"] <= got["folder_mib"] <= got["peak_disk_mib"]
    assert list(tmp_path.iterdir()) == []


#: Runs routerlab's command line with `click` pinned to the recipe in argv[1] (JSON).
DRIVER = """\
import json, sys
from routerlab.engines import builds
spec = json.loads(sys.argv[1])
builds.recipes = lambda: {"click": builds.Recipe(engine="click", source=builds.Source(**spec["source"]), extra={},
    debian=tuple(spec["debian"]), binaries={"click": "bin/click"}, steps=tuple(tuple(s) for s in spec["steps"]))}
from routerlab.cli import main
sys.argv = ["routerlab", *sys.argv[2:]]
main()
"""


def _tiny_engine(tmp_path, monkeypatch, debian=("coreutils",), build="sleep 1"):
    """`click` pinned to a tiny engine, here and in the route's child (machine.CLI)."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    sources = tmp_path / "sources"
    sources.mkdir()
    _, digest = tiny_tarball(sources, commit=commit)
    spec = {"source": {"repository": "example/tiny", "commit": commit,
                       "sha256": digest},
            "debian": list(debian),
            "steps": [["configure", "test -x tiny.sh"], ["build", build],
                      # and 2 MiB of data, so that its disk shows in MiB
                      ["install", "install -D -m 755 tiny.sh {dest}{prefix}/bin/click "
                                  "&& head -c 2097152 /dev/urandom > {dest}{prefix}/data"]]}
    recipe = builds.Recipe(engine="click", source=builds.Source(**spec["source"]), extra={}, debian=tuple(debian),
                           binaries={"click": "bin/click"}, steps=tuple(tuple(s) for s in spec["steps"]))
    monkeypatch.setattr(builds, "recipes", lambda: {"click": recipe})
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    monkeypatch.setattr(machine, "CLI", [sys.executable, str(driver), json.dumps(spec)])
    monkeypatch.setenv(builds.SOURCES_VAR, str(sources))
    monkeypatch.setenv("ROUTERLAB_ENGINE_BUNDLES", str(tmp_path / "no-bundles"))  # the route must not take one


def test_the_build_route_builds_into_an_empty_folder_and_reads_each_build_time(tmp_path, monkeypatch):
    _tiny_engine(tmp_path, monkeypatch)
    route = machine.build_route(("click",), command="routerlab course measure --builds")
    assert route["sources"] == "$ROUTERLAB_ENGINE_SOURCES" and route["jobs"] >= 1
    got = route["install"]
    assert got["command"] == "routerlab engines install click"
    assert got["seconds"] >= route["build_seconds"]["click"] > 0  # the build step sleeps
    assert 0 < got["disk_mib"] <= got["folder_mib"] <= got["peak_disk_mib"]


def test_a_build_route_that_fails_names_the_command_and_its_last_line(tmp_path, monkeypatch):
    _tiny_engine(tmp_path, monkeypatch, build="false")
    with pytest.raises(RouterlabError, match=r"^routerlab engines install click exited 1: routerlab: error: "
                                             r"not installed: click$"):
        machine.build_route(("click",))


def test_a_build_route_measured_before_is_kept_until_measured_again(tmp_path, monkeypatch):
    before = {"measured": {"started": "2026-01-01T00:00:00Z"}, "install": {"seconds": 1800.0}}
    (tmp_path / machine.FACTS).write_text(json.dumps({"routes": {"builds": before}}))
    monkeypatch.setattr(machine, "bundle_route", lambda **kw: {"taken": "now"})
    monkeypatch.setattr(machine, "build_route", lambda **kw: {"built": "now"})
    assert machine.take_routes(tmp_path, builds=False, command="c") == {"bundle": {"taken": "now"}, "builds": before}
    assert machine.take_routes(tmp_path, builds=True, command="c") == {"bundle": {"taken": "now"},
                                                                       "builds": {"built": "now"}}
    assert machine.take_routes(tmp_path / "none", builds=False, command="c") == {"bundle": {"taken": "now"}}


def test_the_guide_gives_each_routes_numbers_or_how_to_measure_it():
    facts = machine.read_facts(FACTS)
    assert facts["routes"]["bundle"]["install"]["seconds"] > 0
    without = copy.deepcopy(facts)
    without["routes"].pop("builds", None)
    text = machine.guide(without)
    assert "| building from sources | none | not measured yet |" in text
    assert "`routerlab course measure --builds` measures it" in text
    with_builds = copy.deepcopy(without)
    with_builds["routes"]["builds"] = {
        **copy.deepcopy(facts["routes"]["bundle"]), "sources": "GitHub", "jobs": 2,
        "install": {"command": "routerlab engines install click bmv2-log p4c", "seconds": 2520.0, "peak_mib": 1900.0,
                    "disk_mib": 122.0, "folder_mib": 3400.0, "peak_disk_mib": 7100.0},
        "build_seconds": {"click": 360.0, "bmv2-log": 1500.0, "p4c": 2400.0}}
    with_builds["routes"]["image"] = {
        "measured": copy.deepcopy(facts["routes"]["bundle"]["measured"]), "engines": list(machine.ENGINES),
        "build": {"command": "make image", "seconds": 250.0}, "image_mib": 1917.0,
        "first_check": {"command": "routerlab p4 check router --solution", "seconds": 6.4,
                        "options": "--security-opt systempaths=unconfined"}}
    text = machine.guide(with_builds)
    assert "not measured yet" not in text
    assert "| the course image | `make image`: 4 min, an image of 1917 MiB | pulling that image; its first check in " \
           "a new container 6 s |" in text
    assert "| building from sources | none | 42 min | 1900 | 122 (the folder as the builds leave it: 3400) | 7100 |" in text
    assert "click 6 min, bmv2-log 25 min, p4c 40 min of building" in text


def test_the_measured_exercises_are_the_courses():
    """machine.EXERCISES (written out, for the command line's import chain) is every
    exercise of both tracks, in course order, as the tracks' own lists give them."""
    from routerlab.course import handout

    assert machine.EXERCISES == handout.exercises()


def test_the_guides_autograder_is_the_handouts():
    """The guide shows the workflow file a handout holds, whole."""
    from routerlab.course import handout

    text = machine.guide(machine.read_facts(FACTS))
    assert "```yaml\n" + handout.workflow().read_text() + "```" in text
