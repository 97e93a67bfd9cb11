"""The courses' machine measured (routerlab.course.machine) and the instructor's guide made from
it: the committed guide is what its facts give, and the guide states no number by hand."""

from pathlib import Path

import pytest

from conftest import engine_marks
from routerlab.course import clickrouter, machine
from routerlab.errors import DataFormatError

needs_click, _ = engine_marks("click", clickrouter.click_binary)
ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "datasets" / "course-machine"


def test_the_committed_guide_is_what_its_facts_give():
    text = machine.guide(machine.read_facts(FACTS), machine.read_readers(FACTS))
    assert (ROOT / "docs" / "course.md").read_text() == text, "run: routerlab course guide"
    facts = machine.read_facts(FACTS)
    # every exercise of both tracks was measured, its solution passing
    assert [(c["track"], c["exercise"]) for c in facts["checks"]] == machine.EXERCISES
    assert all(c["exit"] == 0 and c["passed"] == c["total"] for c in facts["checks"])


def test_a_number_typed_into_the_guide_or_a_missing_field_is_refused_naming_the_line():
    facts = machine.read_facts(FACTS)
    with pytest.raises(DataFormatError, match=r"course\.md\.j2:2: the number '512' is typed by hand"):
        machine.guide(facts, [], "# guide\nStudents need 512 MiB.\n")
    assert machine.guide(facts, [], "Students need {{ disk_mib.venv | num('.0f') }} MiB (`512` is code).\n")
    with pytest.raises(DataFormatError, match=r"course\.md\.j2:2: no such field"):
        machine.guide(facts, [], "# guide\n{{ disk_mib.nothing }}\n")


def test_a_readers_record_with_a_bad_time_is_named_by_its_line(tmp_path):
    (tmp_path / "readers.csv").write_text("reader,exercise,started,finished,check_runs,passed,how\n"
                                          "a,forward,2026-11-28T08:00:00Z,2026-11-28T08:30:00Z,4,yes,timed\n"
                                          "b,forward,yesterday,2026-11-28T08:30:00Z,4,yes,timed\n")
    with pytest.raises(DataFormatError, match=r"readers\.csv:3: "):
        machine.read_readers(tmp_path)
    (tmp_path / "readers.csv").write_text("\n".join((tmp_path / "readers.csv").read_text().splitlines()[:2]) + "\n")
    assert machine.read_readers(tmp_path)[0]["minutes"] == 30
    assert machine.read_readers(tmp_path / "nowhere") == []


@needs_click
def test_a_check_is_measured_as_a_student_runs_it(tmp_path):
    got = machine.run_check("click", "forward", str(tmp_path))
    assert got["exit"] == 0 and got["passed"] == got["total"] >= 5
    assert 0 < got["check_seconds"] < got["wall_seconds"] and got["peak_mib"] > 0
