"""Handing the courses out: a track's exercises copied out of the package to edit
(``routerlab click copy``, ``routerlab p4 copy``), and a course repository's first commit
without the solutions (``routerlab course handout``).

A pip-installed routerlab keeps the exercises inside the package; a course needs them in
a folder a student edits, or in a Git repository per student (GitHub Classroom's way).
:func:`copy_track` copies one track's folder (task statements, skeletons, check data, the
P4 track's ``include/``), leaving the ``solution/`` folders out unless asked for: the
instructor's copy has them, the students' does not. A file already there is a student's
work and is kept unless ``overwrite``.

:func:`handout` writes both tracks without solutions, ``click/`` and ``p4/``; the
autograder's GitHub Actions workflow at ``.github/workflows/grade.yml``
(``data/course/grade.yml``, :func:`workflow`), which checks each exercise's file in the
course image, as the students check it themselves: the checks read only the exercise's
data (``check.yaml``, ``entries.json``) and the student's file, never a solution; and the
course image's ``.devcontainer/devcontainer.json``, with which a student opens the
repository in Codespaces.
"""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path, PurePosixPath

from routerlab.errors import ParameterError

#: The tracks, as the command line names them: their folder in a handout has the same name.
TRACKS = ("click", "p4")
#: Where a course repository keeps the autograder (GitHub reads workflows from there).
WORKFLOW_AT = PurePosixPath(".github/workflows/grade.yml")
#: Where it keeps the browser route's container (Codespaces, VS Code read it from there).
DEVCONTAINER_AT = PurePosixPath(".devcontainer/devcontainer.json")
#: What a copy leaves out besides the solutions: what a clone's own runs leave lying
#: (the package's build leaves them out too, setup.py's LEFT_OUT).
_LEFT_OUT_PARTS = frozenset({"__pycache__", "build", ".ipynb_checkpoints"})
_LEFT_OUT_SUFFIXES = (".pyc", ".tmp")


def _known(track: str):
    if track not in TRACKS:
        raise ParameterError("track", f"no track {track!r} (the tracks: {', '.join(TRACKS)})")


def track_dir(track: str) -> Path:
    """The track's exercises as shipped: ``routers/exercises`` (Click) or ``p4`` (P4), of
    the clone or of the installed package."""
    _known(track)
    if track == "click":
        from routerlab.course.clickexercises import exercises_dir

        return exercises_dir()
    from routerlab.engines.p4 import p4_dir

    return p4_dir()


def exercises() -> list[tuple[str, str]]:
    """Every exercise of the courses as (track, exercise), in the order of the courses:
    the Click track's ``clickexercises.EXERCISES``, then the P4 programs, ``p4.PROGRAMS``."""
    from routerlab.course.clickexercises import EXERCISES
    from routerlab.engines.p4 import PROGRAMS

    return [("click", e) for e in EXERCISES] + [("p4", e) for e in PROGRAMS]


def graded_file(track: str, exercise: str) -> PurePosixPath:
    """The student's file an exercise's check grades, relative to the track's folder of a
    copy (``forward/forward.click``); the measure exercise measures the router of
    iprouter, so its file is iprouter's."""
    _known(track)
    if (track, exercise) not in exercises():
        raise ParameterError("exercise", f"no {track} exercise {exercise!r}")
    if track == "click":
        from routerlab.course.clickexercises import MEASURED

        name = MEASURED if exercise == "measure" else exercise
        return PurePosixPath(name, f"{name}.click")
    return PurePosixPath(exercise, f"{exercise}.p4")


def _copied(rel: Path, solutions: bool) -> bool:
    """Whether a copy takes the file at ``rel`` (relative to the track's folder)."""
    if not solutions and "solution" in rel.parts:
        return False
    return not (_LEFT_OUT_PARTS & set(rel.parts)) and not rel.name.endswith(_LEFT_OUT_SUFFIXES)


def _folder(dest: Path, name: str = "DEST") -> Path:
    """``dest`` made (with its parents) if missing; a file there is refused, naming it."""
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise ParameterError(name, f"{dest} is a file, not a folder")
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ParameterError(name, f"{e.filename or dest}: {e.strerror}") from None
    return dest


def _copy(src: Path, target: Path, overwrite: bool) -> bool:
    """Copy one file unless ``target`` is there and not to be overwritten; whether it was."""
    if target.exists() and not overwrite:
        return False
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
    except OSError as e:
        raise ParameterError("DEST", f"{e.filename or target}: {e.strerror}") from None
    return True


def copy_track(track: str, dest: str | Path, *, solutions: bool = False, overwrite: bool = False) -> list[Path]:
    """Copy the track's exercises (``click``: every exercise's README, skeleton and
    ``check.yaml``, and the track's README; ``p4``: every exercise's README, skeleton and
    ``entries.json``, ``include/`` and the README) into ``dest``, made if missing, with
    the ``solution/`` folders only if ``solutions``. A file already there is kept (a
    student's work) unless ``overwrite``; returns the files written. Raises
    :class:`~routerlab.errors.ParameterError` naming ``DEST`` when it is a file or cannot
    be written."""
    src = track_dir(track)
    dest = _folder(dest)
    written = []
    for f in sorted(src.rglob("*")):
        rel = f.relative_to(src)
        if f.is_file() and _copied(rel, solutions) and _copy(f, dest / rel, overwrite):
            written.append(dest / rel)
    return written


def workflow() -> Path:
    """The autograder's GitHub Actions workflow as shipped (``data/course/grade.yml``)."""
    return Path(str(resources.files("routerlab"))) / "data" / "course" / "grade.yml"


def handout(dest: str | Path, *, overwrite: bool = False) -> list[Path]:
    """A course repository's files, without the solutions, in ``dest``: each track's
    exercises in a folder of the track's name (``click/``, ``p4/``,
    :func:`copy_track`) and the autograder at :data:`WORKFLOW_AT`. A file already there is
    kept unless ``overwrite``; returns the files written. The repository also gets, at
    :data:`DEVCONTAINER_AT`, the course image as Codespaces starts it
    (:func:`routerlab.course.image.devcontainer`)."""
    dest = _folder(dest)
    written = [f for track in TRACKS for f in copy_track(track, dest / track, overwrite=overwrite)]
    target = dest / WORKFLOW_AT
    if _copy(workflow(), target, overwrite):
        written.append(target)
    target = dest / DEVCONTAINER_AT
    if overwrite or not target.exists():
        from routerlab.course import image

        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(image.devcontainer_json())
        except OSError as e:
            raise ParameterError("DEST", f"{e.filename or target}: {e.strerror}") from None
        written.append(target)
    return written
