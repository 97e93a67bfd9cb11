"""What the courses ask of a student's machine, measured on one: each check's time and
memory as the user who runs it (a student has no root), and the disk the course's
software takes.

:func:`measure` runs the solution of every exercise of both tracks through
``routerlab click check`` and ``routerlab p4 check`` (``--format json``), as a student
would, and writes what it saw to ``facts.json`` in a folder (``datasets/course-machine``
is the committed one). The instructor's guide, ``docs/course.md``, is rendered from the
template ``data/course.md.j2`` over those facts (:func:`guide`): it cites every measured
number as a field, as a dataset's NOTES.md does (:func:`routerlab.publish.templates.typed_numbers`
refuses one typed by hand), and ``routerlab course guide --check`` fails where the
committed guide differs from its facts.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from routerlab.errors import DataFormatError, RouterlabError
from routerlab.progress import Progress, silent, Step

#: The courses' exercises as their checks name them: (track, exercise), in course order.
EXERCISES = [("click", e) for e in ("forward", "iprouter", "firewall", "nat", "loadbalancer", "measure")] + \
    [("p4", e) for e in ("router", "firewall", "gre", "shortcut")]
#: The engines the courses run (bmv2's logging build for the P4 checks).
ENGINES = ("click", "bmv2-log", "p4c")
FACTS = "facts.json"


def _mib(path: Path) -> float:
    """Disk used under ``path`` (``du``, MiB), or 0 where it is not there."""
    if not path.exists():
        return 0.0
    out = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True).stdout.split()
    return round(int(out[0]) / 1024, 1) if out else 0.0


def _os_name() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return platform.system()


def _memory_gib() -> float:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    return 0.0


def run_check(track: str, exercise: str, cache: str | None = None) -> dict:
    """One solution's check as a student runs it (``routerlab TRACK check EXERCISE
    --solution --format json``, in a child process; ``cache``: its ``XDG_CACHE_HOME``):
    its exit status, counts, the check's own seconds, the wall seconds of the command and
    the peak memory (MiB) of the largest process it ran (the check, Click, bmv2 or p4c)."""
    cmd = [sys.executable, "-m", "routerlab.cli", track, "check", exercise, "--solution", "--format", "json"]
    env = dict(os.environ, **({"XDG_CACHE_HOME": cache} if cache else {}))
    t0 = time.monotonic()
    with tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        out = p.stdout.read()
        p.stdout.close()
        # wait4's usage is the child's own and its waited-for descendants': ru_maxrss is
        # the peak of the largest of them (KiB on Linux)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - t0
        err.seek(0)
        said = err.read()
    try:
        data = json.loads(out[out.index("{"):])
    except ValueError:
        raise RouterlabError(f"{' '.join(cmd[2:])}: no JSON (exit {p.returncode}): {said.strip()[-300:]}") from None
    return {"track": track, "exercise": exercise, "exit": p.returncode, "passed": data["passed"],
            "total": data["total"], "check_seconds": data["seconds"], "wall_seconds": round(wall, 2),
            "peak_mib": round(usage.ru_maxrss / 1024, 1)}


def measure(folder: str | Path, progress: Progress = silent) -> dict:
    """Run every exercise's solution check (:data:`EXERCISES`) as this user, twice: first
    with an empty cache, as a student's first check (the P4 program compiled, our C
    programs built), then again; and measure the disk of the course's software. Write and
    return the facts (``facts.json`` in ``folder``). ``progress`` is told each check as
    it starts (the checks done before it, of all)."""

    from routerlab.engines import builds
    from routerlab.version import code_version

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    checks = []
    with tempfile.TemporaryDirectory(prefix="routerlab-course-") as cache:
        for i, (track, exercise) in enumerate(EXERCISES):
            progress(Step(f"{track} check {exercise}", i, len(EXERCISES)))
            first = run_check(track, exercise, cache)
            again = run_check(track, exercise, cache)
            checks.append({**again, "first_wall_seconds": first["wall_seconds"], "first_exit": first["exit"],
                           "peak_mib": max(first["peak_mib"], again["peak_mib"])})
    engines = {}
    for name in ENGINES:
        where = builds.installed(name)
        engines[name] = _mib(where) if where else None
    facts = {
        "measured": {"started": started, "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                     "command": "routerlab course measure", "routerlab": code_version(),
                     "as_root": os.geteuid() == 0},
        "machine": {"os": _os_name(), "kernel": platform.release(), "cpus": os.cpu_count(),
                    "memory_gib": _memory_gib(), "python": platform.python_version()},
        "checks": checks,
        "disk_mib": {"venv": _mib(Path(sys.prefix)), "engines": engines,
                     "engines_total": round(sum(v for v in engines.values() if v), 1)},
    }
    (folder / FACTS).write_text(json.dumps(facts, indent=1) + "\n")
    return facts


def read_facts(folder: str | Path) -> dict:
    """The facts :func:`measure` wrote in ``folder``."""
    path = Path(folder) / FACTS
    try:
        return json.loads(path.read_text())
    except OSError as e:
        raise DataFormatError(str(path), None, e.strerror or str(e)) from None
    except json.JSONDecodeError as e:
        raise DataFormatError(str(path), e.lineno, f"not valid JSON: {e.msg}") from None


READERS = "readers.csv"


def read_readers(folder: str | Path) -> list[dict]:
    """First-time readers of an exercise, as recorded in ``readers.csv`` in ``folder``
    (reader, exercise, started, finished: ISO 8601 UTC, check_runs, passed, how), each
    with ``minutes`` from start to finish; [] when there is no such file."""
    import csv
    from datetime import datetime

    path = Path(folder) / READERS
    if not path.is_file():
        return []
    out = []
    with open(path, newline="") as f:
        for line, row in enumerate(csv.DictReader(f), 2):
            try:
                t0, t1 = (datetime.fromisoformat(row[k].replace("Z", "+00:00")) for k in ("started", "finished"))
                out.append({**row, "check_runs": int(row["check_runs"]), "minutes": (t1 - t0).total_seconds() / 60})
            except (KeyError, ValueError, AttributeError) as e:
                raise DataFormatError(str(path), line, f"expected reader, exercise, started, finished (ISO 8601), "
                                      f"check_runs, passed, how: {e}") from None
    return out


def _template() -> str:
    from importlib.resources import files

    return files("routerlab").joinpath("data", "course.md.j2").read_text()


def guide(facts: dict, readers: list[dict] | None = None, template: str | None = None) -> str:
    """The instructor's guide (``docs/course.md``) rendered over ``facts`` and the
    first-time ``readers`` (:func:`read_readers`).

    Raises :class:`DataFormatError` naming the template's line for a number typed by hand
    or a field the facts do not have."""
    from routerlab.publish import templates

    text = _template() if template is None else template
    return templates.render_cited(text, {**facts, "readers": readers or []}, "course.md.j2",
                               "the course's facts").rstrip() + "\n"
