"""One story on root. Which work needs root is said in one place, the table of
docs/setup.md's "What needs root", and that table is what the code does: each row's
command is run here as a user without root (tests/students.py), and must pass where the
row says no and be refused, naming root, where it says yes. Every other page that says
something about root for the courses (a paragraph naming root or sudo and the courses'
checks, exercises or students) links to that table in the same section, so that what a
page says sits next to the truth it can be checked against. And a command run through sudo names the virtual
environment's programs by their path: sudo's PATH has no `.venv/bin`.

Why not a list of wrong sentences to look for: it would catch only the mistakes already
made. Why not one sentence every page must repeat: pages say more than whether (how a
check runs without root); a link to the table keeps each page's words and one truth."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT, engine_absent
from students import COURSE_ENGINES, can_make_students, course_bundle, student

SETUP = ROOT / "docs" / "setup.md"
ANCHOR = "what-needs-root"
REPOSITORY = "https://github.com/routerlab/routerlab"
#: What a page says that is about root: the word, or sudo (outside code); "a non-root
#: user" names a user, not what needs root.
ROOT_WORDS = re.compile(r"(?<!non-)\b(root|sudo)\b", re.I)
#: What makes a paragraph about the courses.
COURSE_WORDS = re.compile(r"\b(exercises?|courses?|students?)\b|"
                          r"\b(the|a|an|its|their|every|each|P4|Click|course's|courses') checks?\b", re.I)


# -- the table ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    """One row of the table: what it is about, whether it needs root, the command that
    shows it, and the table's line."""

    what: str
    needs_root: bool
    command: str
    line: int


def root_table(path: Path = SETUP) -> list[Row]:
    """The rows of the "What needs root" section's table; refused (ValueError, naming the
    line) where a row's second cell is not yes or no, or its third not one command in code."""
    lines = path.read_text().splitlines()
    start = next(i for i, x in enumerate(lines) if x.strip() == "## What needs root")
    rows = []
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if line.startswith("## "):
            break
        if not line.startswith("|") or re.match(r"^\|[-| ]+\|$", line):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[:2] == ["what", "needs root"]:
            continue
        m = re.fullmatch(r"`([^`]+)`", cells[2]) if len(cells) == 3 else None
        if not m or cells[1] not in ("yes", "no"):
            raise ValueError(f"{path.name}:{i + 1}: expected | what | yes or no | `a command` |, got {line!r}")
        rows.append(Row(cells[0], cells[1] == "yes", m.group(1), i + 1))
    return rows


def command_argv(command: str, python: str) -> list[str]:
    """A row's command as the student's Python runs it: `routerlab ...` or `papermill ...`."""
    words = shlex.split(command)
    module = {"routerlab": "routerlab.cli", "papermill": "papermill"}.get(words[0])
    if module is None:
        raise ValueError(f"{command!r}: a row's command starts with routerlab or papermill")
    return [python, "-m", module, *words[1:]]


def row_problem(row: Row, p: subprocess.CompletedProcess) -> str | None:
    """What is wrong with ``row`` given how its command ended for a user without root
    (None: the row says what happened)."""
    said = (p.stdout + p.stderr).strip()
    last = said.splitlines()[-1] if said else "nothing"
    if not row.needs_root and p.returncode != 0:
        return f"setup.md:{row.line}: says no root, but `{row.command}` exited {p.returncode} without root: {last}"
    if row.needs_root and (p.returncode == 0 or not re.search(r"needs root", said)):
        return (f"setup.md:{row.line}: says root, but `{row.command}` without root "
                + ("passed" if p.returncode == 0 else f"exited {p.returncode} not naming root: {last}"))
    return None


def _engines_for(s) -> None:
    """The courses' engines installed for the student: from a bundle of them, else from a
    bundle packed here of the installed ones."""
    from routerlab.engines import bundles

    found = course_bundle()
    if found is None:
        from routerlab.engines import builds

        absent = [n for n in COURSE_ENGINES if builds.installed(n) is None]
        if absent:
            engine_absent(f"{', '.join(absent)} not installed, and no bundle of them (routerlab engines install)")
        out = s.folder("bundle") / "course.tar.gz"
        digest, _ = bundles.pack(list(COURSE_ENGINES), out)
        os.chmod(out, 0o644)
        found = out, digest
    p = s.routerlab("engines", "install", "--from", str(found[0]), "--sha256", found[1], *COURSE_ENGINES)
    assert p.returncode == 0, p.stdout + p.stderr


@pytest.mark.slow
@pytest.mark.skipif(can_make_students() is not None, reason=str(can_make_students()))
def test_what_needs_root_is_what_the_code_does():
    """Each row of docs/setup.md's table, run as a user without root in a clone of its own:
    passes where the row says no, is refused naming root where it says yes. Its PATH is
    Debian's for a user, without /usr/sbin, where Debian keeps ip and ethtool."""
    rows = root_table()
    assert rows and {r.needs_root for r in rows} == {True, False}
    with student() as s:
        _engines_for(s)
        clone = s.folder("clone")
        os.symlink(ROOT / "notebooks", clone / "notebooks")
        problems = []
        for row in rows:
            p = s.run(command_argv(row.command, s.python), cwd=clone, timeout=300,
                      PATH="/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games")
            problems.append(row_problem(row, p))
    assert [x for x in problems if x] == []


@pytest.mark.slow
@pytest.mark.skipif(can_make_students() is not None, reason=str(can_make_students()))
def test_a_students_p4_check_runs_with_debians_path_for_a_user():
    """Debian's PATH for a user who is not root (/etc/login.defs ENV_PATH, /etc/profile) has
    no /usr/sbin; a student's P4 check must run with it."""
    with student() as s:
        _engines_for(s)
        p = s.routerlab("p4", "check", "router", "--solution", PATH="/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games")
    assert p.returncode == 0, p.stdout + p.stderr


def test_the_table_check_can_fail(tmp_path):
    """A row whose claim the run contradicts is named with its line; a row the run bears
    out is not; a table cell that is neither yes nor no is refused."""
    ok, refused = subprocess.CompletedProcess([], 0, "5 of 5 pass", ""), \
        subprocess.CompletedProcess([], 2, "", "routerlab: error: the testbed needs root (network namespaces)")
    other = subprocess.CompletedProcess([], 2, "", "routerlab: error: ethtool is not installed")
    free, needs = Row("a check", False, "routerlab p4 check router", 7), Row("measuring", True, "routerlab measure", 8)
    assert row_problem(free, ok) is None and row_problem(needs, refused) is None
    assert row_problem(free, refused).startswith("setup.md:7: says no root, but `routerlab p4 check router` exited 2")
    assert row_problem(needs, ok) == "setup.md:8: says root, but `routerlab measure` without root passed"
    assert "not naming root: routerlab: error: ethtool" in row_problem(needs, other)
    page = tmp_path / "setup.md"
    page.write_text("# x\n\n## What needs root\n\n| what | needs root | run |\n|---|---|---|\n"
                    "| a check | no | `routerlab click check forward` |\n| measuring | sometimes | `routerlab measure` |\n")
    with pytest.raises(ValueError, match=r"setup\.md:8: expected"):
        root_table(page)
    assert command_argv("routerlab p4 check router", "py") == ["py", "-m", "routerlab.cli", "p4", "check", "router"]


# -- the pages -------------------------------------------------------------------------------------

def pages() -> list[Path]:
    """The pages a reader of the courses meets: the README, CONTRIBUTING.md, the site's pages
    (not the journal's dated records, nor setup.md, which holds the table), the exercises'
    and the P4 programs' READMEs, the notebooks (their Markdown cells)."""
    docs = [p for p in sorted((ROOT / "docs").glob("*.md")) if p != SETUP]
    readmes = sorted((ROOT / "routers").rglob("README.md")) + sorted((ROOT / "p4").rglob("README.md"))
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *docs, *readmes, *sorted((ROOT / "notebooks").glob("*.ipynb"))]


def _markdown(path: Path) -> str:
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text())["cells"]
        return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return path.read_text()


def _sections(text: str) -> list[list[tuple[int, str]]]:
    """The page's prose, section by section (a heading starts one), each a list of blocks
    (a paragraph, a list item, a table row) with its first line: code (fenced, or indented
    four spaces after a blank line) and comments left out."""
    text = re.sub(r"<!--.*?-->", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    sections: list[list] = [[]]
    current, fenced, indented, after_blank = None, False, False, True
    for no, line in enumerate(text.splitlines(), 1):
        if re.match(r"^\s*(```|~~~)", line):
            fenced, current = not fenced, None
            continue
        if fenced:
            continue
        if not line.strip():
            current, after_blank, indented = None, True, False
            continue
        if indented or (current is None and after_blank and re.match(r"^ {4,}", line)):
            indented, after_blank = True, False
            continue  # an indented code block, to its blank line
        if line.startswith("#"):
            sections.append([])
            current, after_blank = None, False
            continue  # a heading: its words are the section's name, not a statement
        if current is None or re.match(r"^\s*([-*+]|\d+\.)\s|^\s*\||^#", line):
            current = [no, line]
            sections[-1].append(current)
        else:
            current[1] += "\n" + line
        after_blank = False
    return [[(no, block) for no, block in section] for section in sections if section]


def _links_to_table(block: str, page: Path, setup: Path) -> bool:
    for target in re.findall(r"\]\(\s*<?([^)\s>]+)>?\s*\)", block):
        path, _, anchor = target.partition("#")
        if anchor != ANCHOR:
            continue
        if path == f"{REPOSITORY}/blob/main/docs/setup.md" or (path and (page.parent / path).resolve() == setup):
            return True
    return False


def root_section_problems(page: Path, setup: Path = SETUP) -> list[str]:
    """Each section of ``page`` that names root or sudo (outside code) together with the
    courses (their checks, exercises, students) in one paragraph, and does not link to
    the table anywhere in the section: named by that paragraph's line."""
    problems = []
    for section in _sections(_markdown(page)):
        if any(_links_to_table(block, page, setup) for _, block in section):
            continue
        for no, block in section:
            prose = re.sub(r"`[^`]*`", " ", block)
            if ROOT_WORDS.search(prose) and COURSE_WORDS.search(prose):
                name = page.relative_to(ROOT) if page.is_relative_to(ROOT) else page.name
                problems.append(f"{name}:{no}: says what needs root for the courses, and its section has no "
                                f"link to docs/setup.md#{ANCHOR}: {' '.join(block.split())[:100]}")
                break
    return problems


def _venv_programs() -> set[str]:
    return {p.name for p in (Path(sys.prefix) / "bin").iterdir()}


def sudo_problems(page: Path, programs: set[str] | None = None) -> list[str]:
    """Each `sudo PROGRAM` of ``page`` (code included) whose PROGRAM is one of the virtual
    environment's (``programs``) named without its path: sudo would not find it, or would
    find the system's (python3) without routerlab."""
    programs = _venv_programs() if programs is None else programs
    problems = []
    for no, line in enumerate(_markdown(page).splitlines(), 1):
        for m in re.finditer(r"\bsudo\s+(?:-\S+\s+)*([^\s`'\")]+)", line):
            if "/" not in m.group(1) and m.group(1) in programs:
                name = page.relative_to(ROOT) if page.is_relative_to(ROOT) else page.name
                problems.append(f"{name}:{no}: `sudo {m.group(1)}`: sudo's PATH has no .venv/bin; "
                                f"write sudo .venv/bin/{m.group(1)}")
    return problems


def _problems_by_page() -> dict[str, list[str]]:
    out = {}
    for page in pages():
        found = root_section_problems(page) + sudo_problems(page)
        if found:
            out[str(page.relative_to(ROOT))] = found
    return out


def test_every_page_that_says_what_needs_root_for_the_courses_links_to_the_table():
    """(In the section that says it.) And no page runs a venv program through sudo by its
    bare name. The instructor's guide is read as generated, docs/course.md."""
    found = _problems_by_page()
    assert found == {}, "\n".join(x for p in found.values() for x in p)


def test_the_page_checks_can_fail(tmp_path):
    """A section on root and the courses without the link is named by its paragraph; with
    the link (relative or GitHub's) in the section, in code, or not about the courses, it
    is not; a bare venv program after sudo is named, one by its path is not."""
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text("# Page\n\nIntro.\n\n## One\n\nThe checks need root\nfor the last exercise.\n\n"
                    "## Two\n\n- The P4 checks need no root.\n- [What needs root](setup.md#what-needs-root).\n\n"
                    f"## Three\n\nA student needs no root ([why]({REPOSITORY}/blob/main/docs/setup.md#what-needs-root)).\n\n"
                    "## Four\n\nMeasuring needs root.\n\n```bash\nrouterlab click check forward   # no root\n```\n\n"
                    "    sudo routerlab measure   # the exercise's step three\n"
                    "    for the course, as root\n\n"
                    "Run `sudo .venv/bin/routerlab measure` for the course.\n")
    setup = page.parent / "setup.md"
    probs = root_section_problems(page, setup)
    assert len(probs) == 1 and probs[0].startswith("page.md:7: says what needs root for the courses"), probs
    assert sudo_problems(page, {"routerlab", "python3"}) == [
        "page.md:27: `sudo routerlab`: sudo's PATH has no .venv/bin; write sudo .venv/bin/routerlab"]
    # a link to another anchor of setup.md is not the table
    page.write_text("The checks need no root ([set up](setup.md#the-documentation-site)).\n")
    assert len(root_section_problems(page, setup)) == 1
