"""Handing the courses out (``routerlab.course.handout``): ``click copy`` and ``p4 copy``
copy a track's exercises without the solutions (with them for the instructor), keep a
student's work, refuse a DEST that is a file in one line, and a copy is checked with
``--config``/``--program`` or from inside it; ``course handout`` writes both tracks and
the autograder without a solution, and the checks run on a handout's files with no
solution anywhere (the autograder's run is in test_course_workflow.py)."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import engine_marks, p4_check_engines
from routerlab.cli.app import app
from routerlab.course import clickexercises as ce, image
from routerlab.course import clickrouter, handout
from routerlab.engines import p4
from routerlab.errors import RouterlabError

ROUTERLAB = str(Path(sys.executable).parent / "routerlab")
#: What each track's exercise folder holds besides the student's file and its README.
DATA = {"click": "check.yaml", "p4": "entries.json"}


needs_click, _ = engine_marks("click", clickrouter.click_binary)
needs_p4, _ = engine_marks("bmv2's logging build and p4c", p4_check_engines)


def exercises(track):
    return [e for t, e in handout.exercises() if t == track]


def shipped_solution(track: str, exercise: str) -> Path:
    """The reference solution of an exercise, from the clone or the package."""
    f = handout.graded_file(track, exercise)
    return handout.track_dir(track) / f.parent / "solution" / f.name


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.mark.parametrize("track", handout.TRACKS)
def test_copy_hands_out_the_exercises_without_solutions_and_keeps_a_students_work(tmp_path, track):
    dest = tmp_path / "course"
    r = invoke(track, "copy", dest)
    assert r.exit_code == 0, r.stderr
    for exercise in exercises(track):
        assert (dest / exercise / "README.md").is_file() and (dest / exercise / DATA[track]).is_file()
        assert (dest / handout.graded_file(track, exercise)).is_file()
    assert (dest / "README.md").is_file() and (track != "p4" or (dest / "include" / "common.p4").is_file())
    assert not list(dest.rglob("solution"))
    assert r.stdout == f"{sum(1 for f in dest.rglob('*') if f.is_file())} files written to {dest}\n"

    mine = dest / handout.graded_file(track, exercises(track)[0])
    mine.write_text("// mine")
    r = invoke(track, "copy", dest)
    assert (r.exit_code, r.stdout) == (0, f"0 files written to {dest} (all there already: --overwrite)\n")
    r = invoke(track, "copy", dest, "--solutions")
    assert r.exit_code == 0 and mine.read_text() == "// mine"
    # the measure exercise's is iprouter's
    solutions = {shipped_solution(track, e): handout.graded_file(track, e) for e in exercises(track)}
    assert r.stdout == f"{len(solutions)} files written to {dest}\n" and len(solutions) >= 4
    for shipped, f in solutions.items():
        assert (dest / f.parent / "solution" / f.name).read_bytes() == shipped.read_bytes()
    invoke(track, "copy", dest, "--overwrite")
    assert mine.read_bytes() == (handout.track_dir(track) / mine.relative_to(dest)).read_bytes()


@pytest.mark.parametrize("command", [["click", "copy"], ["p4", "copy"], ["course", "handout"]])
def test_a_file_for_dest_is_refused_in_one_line(tmp_path, command):
    (tmp_path / "taken").write_text("")
    r = invoke(*command, tmp_path / "taken")
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr == f"routerlab: error: DEST: {tmp_path / 'taken'} is a file, not a folder\n"
    r = invoke(*command, tmp_path / "taken" / "below")
    assert r.exit_code == 2 and r.stderr == f"routerlab: error: DEST: {tmp_path / 'taken' / 'below'}: Not a directory\n"


def test_the_handout_has_both_tracks_and_the_autograder_and_no_solution(tmp_path):
    r = invoke("course", "handout", tmp_path / "repo")
    assert r.exit_code == 0, r.stderr
    repo = tmp_path / "repo"
    assert (repo / handout.WORKFLOW_AT).read_text() == handout.workflow().read_text()
    for track, exercise in handout.exercises():
        assert (repo / track / handout.graded_file(track, exercise)).is_file()
        assert (repo / track / exercise / DATA[track]).is_file()
    assert (repo / handout.DEVCONTAINER_AT).read_text() == image.devcontainer_json()
    assert not list(repo.rglob("solution"))
    assert {p.name for p in repo.iterdir()} == {".github", ".devcontainer", *handout.TRACKS}
    (repo / "click" / "nat" / "nat.click").write_text("// mine")
    r = invoke("course", "handout", repo)
    assert r.stdout.startswith("0 files written") and (repo / "click" / "nat" / "nat.click").read_text() == "// mine"


@pytest.mark.slow
def test_the_autograder_ships_in_the_wheel(wheel):
    """A pip-installed routerlab hands out the same workflow as a clone (package data)."""
    with zipfile.ZipFile(wheel) as z:
        assert z.read("routerlab/data/course/grade.yml") == handout.workflow().read_bytes()


def check(args, cwd):
    """``routerlab ...`` run by the installed command in ``cwd``: (exit status, stderr)."""
    p = subprocess.run([ROUTERLAB, *args], cwd=cwd, capture_output=True, text=True)
    return p.returncode, p.stderr


@needs_p4
def test_a_p4_copy_is_checked_by_path_and_from_inside_it(tmp_path):
    course = tmp_path / "course"
    invoke("p4", "copy", course, "--solutions")
    assert check(["p4", "check", "router", "--program", course / "router/solution/router.p4"], tmp_path)[0] == 0
    status, said = check(["p4", "check", "router"], course / "router")
    assert status == 1 and f"checking {course / 'router' / 'router.p4'}\n" in said


@needs_click
def test_a_click_copy_is_checked_from_inside_it(tmp_path):
    course = tmp_path / "course"
    invoke("click", "copy", course, "--solutions")
    status, said = check(["click", "check", "forward"], course / "forward")
    assert status == 1 and f"checking {course / 'forward' / 'forward.click'}\n" in said
    shutil.copyfile(course / "forward/solution/forward.click", course / "forward/forward.click")
    assert check(["click", "check", "forward"], course / "forward")[0] == 0


@pytest.fixture
def handed_out(tmp_path, monkeypatch):
    """A handout whose student's files are the solutions, and the courses' exercises read
    from it rather than from the clone: no solution is anywhere a check could read one."""
    repo = tmp_path / "repo"
    handout.handout(repo)
    for track, exercise in handout.exercises():
        if exercise != "measure":  # it checks iprouter's file
            shutil.copyfile(shipped_solution(track, exercise), repo / track / handout.graded_file(track, exercise))
    monkeypatch.setattr(ce, "exercises_dir", lambda: repo / "click")
    monkeypatch.setenv("ROUTERLAB_P4_DIR", str(repo / "p4"))  # in a check's namespaces' child too
    assert not list(repo.rglob("solution"))
    return repo


@pytest.mark.slow
@needs_click
@pytest.mark.parametrize("exercise", ce.EXERCISES)
def test_a_click_check_needs_no_solution(handed_out, exercise):
    config = handed_out / "click" / handout.graded_file("click", exercise)
    results = ce.check(exercise, config, memory=True)
    assert [(r.name, r.detail) for r in results if not r.passed and not r.skipped] == []
    # the check reads the handout's files: the solution asked for is not there
    with pytest.raises(RouterlabError, match=r"/repo/click/\w+/solution/\w+\.click: no such file \(a copy handed out without the solutions\)$"):
        ce.check(exercise, solution=True, memory=True)


@pytest.mark.slow
@needs_p4
@pytest.mark.parametrize("exercise", p4.PROGRAMS)
def test_a_p4_check_needs_no_solution(handed_out, exercise):
    from routerlab.course import p4exercises

    program = handed_out / "p4" / handout.graded_file("p4", exercise)
    results = p4exercises.check(exercise, program, solution=False)
    assert [(r.name, r.detail) for r in results if not r.passed] == []
    with pytest.raises(RouterlabError, match=rf"/repo/p4/{exercise}/solution/{exercise}\.p4: no such P4 file \(a copy handed out without the solutions\)$"):
        p4exercises.check(exercise, solution=True)
