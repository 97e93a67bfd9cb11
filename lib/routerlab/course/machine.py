"""What the courses ask of a student's machine, measured on one: each check's time and
memory as the user who runs it (a student has no root), the disk the course's software
takes, and what each route to the courses' engines costs (time, memory, disk).

:func:`measure` runs the solution of every exercise of both tracks through
``routerlab click check`` and ``routerlab p4 check`` (``--format json``), as a student
would; takes the instructor's bundle route (:func:`bundle_route`: the installed engines
packed, then installed from the bundle into an empty folder) and, when asked, the
source-build route (:func:`build_route`: the engines built cold into an empty folder);
and writes what it saw to ``facts.json`` in a folder (``datasets/course-machine``
is the committed one). The instructor's guide, ``docs/course.md``, is rendered from the
template ``data/course.md.j2`` over those facts (:func:`guide`): it cites every measured
number as a field, as a dataset's NOTES.md does (:func:`routerlab.publish.templates.typed_numbers`
refuses one typed by hand), and ``routerlab course guide --check`` fails where the
committed guide differs from its facts.
"""

from __future__ import annotations

import getpass
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

from routerlab import errors, processes
from routerlab.errors import DataFormatError, RouterlabError
from routerlab.progress import Progress, silent, Step

#: The courses' exercises as their checks name them: (track, exercise), in course order
#: (as ``handout.exercises()`` reads them from the tracks, which a test compares: imported,
#: they would make the command line's chain of imports one too long).
EXERCISES = [("click", e) for e in ("forward", "iprouter", "firewall", "nat", "loadbalancer", "measure")] + \
    [("p4", e) for e in ("router", "firewall", "gre", "shortcut")]
#: The engines the courses run (bmv2's logging build for the P4 checks).
ENGINES = ("click", "bmv2-log", "p4c")
FACTS = "facts.json"
#: How a child process runs routerlab's command line (the measured commands are its).
CLI = [sys.executable, "-m", "routerlab.cli"]
#: Seconds between two looks at a route's engines folder for its peak disk: often for a
#: bundle's install, which takes seconds; seldom for builds, whose trees du takes a while over.
DISK_EVERY_S = {"bundle": 0.2, "builds": 15.0}
#: Seconds a measured command is given to stop after Ctrl-C (it removes its unfinished
#: builds) before it is killed.
STOP_GRACE_S = 60.0


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


def _measured(cmd: list[str], env: dict, *, watch: Path | None = None, every: float = 1.0) -> dict:
    """Run ``cmd`` with ``env`` in a child process, as this user, and measure it: its exit
    status (``exit``), wall seconds (``wall_seconds``), the peak memory in MiB of the
    largest process it ran (``peak_mib``: wait4's ``ru_maxrss`` covers the child and every
    descendant it waited for, a compiler among them), and with ``watch`` the peak disk in
    MiB under that folder (``peak_disk_mib``: sampled every ``every`` seconds and at the
    end); its output's text (``out``, ``err``). Ctrl-C is passed on to the child (SIGINT),
    which is waited for (:data:`STOP_GRACE_S`, then killed) before this returns."""
    peaks: list[float] = []
    done = threading.Event()

    def sample():  # in a thread of its own, so that the child's end is seen at once
        while True:
            peaks.append(_mib(watch))
            if done.wait(every):
                return

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, text=True, env=env,
                             preexec_fn=processes.dies_with_parent(signal.SIGINT))
        sampler = threading.Thread(target=sample, daemon=True) if watch is not None else None
        if sampler:
            sampler.start()
        try:
            # wait4's usage is the child's own and its waited-for descendants': ru_maxrss is
            # the peak of the largest of them (KiB on Linux)
            _, status, usage = os.wait4(p.pid, 0)
            wall = time.monotonic() - t0
        except BaseException:
            # interrupted (Ctrl-C): the child stops as at Ctrl-C, and is gone before the
            # caller removes the folders it works in
            _stop(p)
            raise
        finally:
            done.set()
            if sampler:
                sampler.join()
        p.returncode = os.waitstatus_to_exitcode(status)
        if watch is not None:
            peaks.append(_mib(watch))
        out.seek(0)
        err.seek(0)
        return {"exit": p.returncode, "wall_seconds": round(wall, 2), "peak_mib": round(usage.ru_maxrss / 1024, 1),
                **({"peak_disk_mib": max(peaks)} if watch is not None else {}), "out": out.read(), "err": err.read()}


def _stop(p: subprocess.Popen) -> None:
    """Stop the child ``p`` as Ctrl-C does (SIGINT: it removes what it had not finished)
    and reap it; killed after :data:`STOP_GRACE_S`."""
    try:
        p.send_signal(signal.SIGINT)
        deadline = time.monotonic() + STOP_GRACE_S
        while not os.waitpid(p.pid, os.WNOHANG)[0]:
            if time.monotonic() > deadline:
                p.kill()
                os.waitpid(p.pid, 0)
                break
            time.sleep(0.1)
    except ChildProcessError:
        pass  # reaped already
    p.returncode = -signal.SIGINT


def run_check(track: str, exercise: str, cache: str | None = None) -> dict:
    """One solution's check as a student runs it (``routerlab TRACK check EXERCISE
    --solution --format json``, in a child process; ``cache``: its ``XDG_CACHE_HOME``):
    its exit status, counts, the check's own seconds, the wall seconds of the command and
    the peak memory (MiB) of the largest process it ran (the check, Click, bmv2 or p4c)."""
    cmd = [*CLI, track, "check", exercise, "--solution", "--format", "json"]
    r = _measured(cmd, dict(os.environ, **({"XDG_CACHE_HOME": cache} if cache else {})))
    out = r["out"]
    try:
        data = json.loads(out[out.index("{"):])
    except ValueError:
        raise RouterlabError(f"{' '.join(cmd[2:])}: no JSON (exit {r['exit']}): {r['err'].strip()[-300:]}") from None
    return {"track": track, "exercise": exercise, "exit": r["exit"], "passed": data["passed"],
            "total": data["total"], "check_seconds": data["seconds"], "wall_seconds": r["wall_seconds"],
            "peak_mib": r["peak_mib"]}


def _stamp(started: str, command: str) -> dict:
    """What a measurement records of how, where and when it was made: its start and end
    (ISO 8601 UTC), the command, the routerlab that ran it, the user and the machine."""
    from routerlab.version import code_version

    return {"started": started, "finished": _now(), "command": command, "routerlab": code_version(),
            "as_root": os.geteuid() == 0, "user": getpass.getuser(), "machine": _machine()}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _machine() -> dict:
    return {"os": _os_name(), "kernel": platform.release(), "cpus": os.cpu_count(),
            "memory_gib": _memory_gib(), "python": platform.python_version()}


def _route_env(engines_dir: Path) -> dict:
    """This process's environment with the engines folder set to ``engines_dir`` and no
    folder of bundles: an engine is then built, or taken from the bundle named, only."""
    from routerlab.engines import builds, bundles

    env = {k: v for k, v in os.environ.items() if k != bundles.FOLDER_VAR}
    return {**env, builds.DIR_VAR: str(engines_dir)}


def _ran(what: str, r: dict) -> None:
    """Raise, naming the command and the last line it said, unless ``r`` (:func:`_measured`) exited 0."""
    errors.check_exit(what, r["exit"], r["err"], r["out"])


def _installed_mib(folder: Path, engines) -> float:
    """Disk (MiB) of the installs of ``engines`` in the engines folder ``folder``."""
    from routerlab.engines import builds

    return round(sum(_mib(folder / builds.recipe(n).key) for n in engines), 1)


def bundle_route(engines=ENGINES, command: str = "routerlab course measure",
                 progress: Progress = silent) -> dict:
    """The instructor's bundle route, taken as this user: ``routerlab engines pack ENGINES
    --out FILE`` of the engines installed here (the instructor's side, once), then
    ``routerlab engines install --from FILE --sha256 HASH ENGINES`` into an empty engines
    folder (each student's side). Returns, with :func:`_stamp`'s record (``command``: what
    ran this): each command's wall seconds and peak memory (MiB), the bundle's size (MiB),
    and the install's disk (MiB) after it and at its peak. Raises naming the command that
    failed (an engine not installed: ``routerlab engines install``)."""
    started = _now()
    engines = list(engines)
    with tempfile.TemporaryDirectory(prefix="routerlab-course-bundle-") as tmp:
        bundle, target = Path(tmp) / "engines.tar.gz", Path(tmp) / "engines"
        progress(Step("bundle route: routerlab engines pack", 0, 2))
        pack = _measured([*CLI, "engines", "pack", *engines, "--out", str(bundle)], dict(os.environ))
        _ran(f"routerlab engines pack {' '.join(engines)}", pack)
        from routerlab.engines import builds

        digest = builds.sha256(bundle)
        progress(Step("bundle route: routerlab engines install --from", 1, 2))
        install = _measured([*CLI, "engines", "install", "--from", str(bundle), "--sha256", digest, *engines],
                            _route_env(target), watch=target, every=DISK_EVERY_S["bundle"])
        _ran(f"routerlab engines install --from {bundle.name}", install)
        return {"measured": _stamp(started, command), "engines": engines,
                "pack": {"command": f"routerlab engines pack {' '.join(engines)} --out FILE",
                         "seconds": pack["wall_seconds"], "peak_mib": pack["peak_mib"]},
                "bundle_mib": round(bundle.stat().st_size / 2**20, 1),
                "install": {"command": f"routerlab engines install --from FILE --sha256 HASH {' '.join(engines)}",
                            "seconds": install["wall_seconds"], "peak_mib": install["peak_mib"],
                            "disk_mib": _installed_mib(target, engines), "folder_mib": _mib(target),
                            "peak_disk_mib": install["peak_disk_mib"]}}


def build_route(engines=ENGINES, command: str = "routerlab course measure --builds",
                progress: Progress = silent) -> dict:
    """The source-build route, taken as this user: ``routerlab engines install ENGINES`` (as
    a student runs it: two builds at a time, each on every core) into an empty engines
    folder, so with an empty compiler cache, from ``$ROUTERLAB_ENGINE_SOURCES`` where set,
    else downloaded. Returns, with :func:`_stamp`'s record: its wall seconds, the peak
    memory (MiB) of its largest process (a compiler), each engine's build seconds (its
    install's record), the disk (MiB) of the engines, of the folder as the builds leave it
    (sources, compiler cache, logs) and its peak while building. Raises naming the
    command's last line when it fails (a Debian package missing: the apt line)."""
    from routerlab.engines import builds

    started = _now()
    engines = list(engines)
    with tempfile.TemporaryDirectory(prefix="routerlab-course-builds-") as tmp:
        target = Path(tmp) / "engines"
        progress(Step(f"build route: routerlab engines install {' '.join(engines)}", 0, 1))
        r = _measured([*CLI, "engines", "install", *engines], _route_env(target), watch=target,
                      every=DISK_EVERY_S["builds"])
        _ran(f"routerlab engines install {' '.join(engines)}", r)
        each = {}
        for n in engines:
            record = json.loads((target / builds.recipe(n).key / builds.MARKER).read_text())
            each[n] = round(sum(record["seconds"].values()), 1)
        return {"measured": _stamp(started, command), "engines": engines,
                "sources": "$ROUTERLAB_ENGINE_SOURCES" if os.environ.get(builds.SOURCES_VAR) else "GitHub",
                "jobs": len(os.sched_getaffinity(0)),
                "install": {"command": f"routerlab engines install {' '.join(engines)}",
                            "seconds": r["wall_seconds"], "peak_mib": r["peak_mib"],
                            "disk_mib": _installed_mib(target, engines), "folder_mib": _mib(target),
                            "peak_disk_mib": r["peak_disk_mib"]},
                "build_seconds": each}


def image_route(command: str = "routerlab course measure --image", say: Callable[[str], None] = lambda line: None) -> dict:
    """The course image's route, taken here with Podman (as root): the image built as
    ``make image`` builds it, none of an earlier build's layers reused (the base image
    made already, the engines from a bundle of the installed ones); its size, unpacked,
    which is what a student's machine pulls and keeps; and a first check in a new
    container of it, as its user (``routerlab p4 check router --solution``: bmv2 and p4c
    in the user namespaces the container's options allow), from ``podman run`` to the
    check's end. Returns the seconds and MiB with :func:`_stamp`'s record; the image is
    removed afterwards."""
    from routerlab.course import image

    started = _now()
    name = f"{image.IMAGE}:measure"
    image.base(say)
    try:
        t0 = time.monotonic()
        image.build(name, say, no_cache=True)
        built = time.monotonic() - t0
        size = image.size_mib(name)
        check = ["routerlab", "p4", "check", "router", "--solution"]
        t0 = time.monotonic()
        p = image.run(name, check, timeout=600)
        first = time.monotonic() - t0
        _ran(f"{' '.join(check)} in the image", {"exit": p.returncode, "err": p.stderr, "out": p.stdout})
    finally:
        image.remove(name)
    return {"measured": _stamp(started, command), "engines": list(image.ENGINES),
            "build": {"command": "make image", "seconds": round(built, 1)},
            "image_mib": size,
            "first_check": {"command": " ".join(check), "seconds": round(first, 1),
                            "options": " ".join(image.run_options())}}


def measure_image(folder: str | Path, say: Callable[[str], None] = lambda line: None) -> dict:
    """Take the course image's route (:func:`image_route`) into the facts in ``folder``,
    keeping everything else they hold (measured as a student, without root: Podman
    builds the image as root here). Returns the facts written."""
    facts = read_facts(folder)
    facts.setdefault("routes", {})["image"] = image_route(say=say)
    (Path(folder) / FACTS).write_text(json.dumps(facts, indent=1) + "\n")
    return facts


def measure(folder: str | Path, progress: Progress = silent, builds: bool = False) -> dict:
    """Run every exercise's solution check (:data:`EXERCISES`) as this user, twice: first
    with an empty cache, as a student's first check (the P4 program compiled, our C
    programs built), then again; measure the disk of the course's software; take the
    bundle route (:func:`bundle_route`) and, with ``builds``, the source-build route
    (:func:`build_route`: most of an hour on both cores). Without ``builds``, the build
    route that ``facts.json`` in ``folder`` holds already is kept, with its own record of
    when and how it was made. Write and return the facts. ``progress`` is told each step
    as it starts (the steps done before it, of all)."""
    from routerlab.engines import builds as engine_builds
    from routerlab.version import code_version

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    command = "routerlab course measure" + (" --builds" if builds else "")
    started = _now()
    steps = len(EXERCISES) + 1 + builds
    checks = []
    with tempfile.TemporaryDirectory(prefix="routerlab-course-") as cache:
        for i, (track, exercise) in enumerate(EXERCISES):
            progress(Step(f"{track} check {exercise}", i, steps))
            first = run_check(track, exercise, cache)
            again = run_check(track, exercise, cache)
            checks.append({**again, "first_wall_seconds": first["wall_seconds"], "first_exit": first["exit"],
                           "peak_mib": max(first["peak_mib"], again["peak_mib"])})
    engines = {}
    for name in ENGINES:
        where = engine_builds.installed(name)
        engines[name] = _mib(where) if where else None
    routes = take_routes(folder, builds=builds, command=command,
                         progress=lambda step: progress(Step(step.what, len(EXERCISES) + step.done, steps)))
    facts = {
        "measured": {"started": started, "finished": _now(), "command": command, "routerlab": code_version(),
                     "as_root": os.geteuid() == 0, "user": getpass.getuser()},
        "machine": _machine(),
        "checks": checks,
        "disk_mib": {"venv": _mib(Path(sys.prefix)), "engines": engines,
                     "engines_total": round(sum(v for v in engines.values() if v), 1)},
        "routes": routes,
    }
    (folder / FACTS).write_text(json.dumps(facts, indent=1) + "\n")
    return facts


def take_routes(folder: str | Path, *, builds: bool, command: str, progress: Progress = silent) -> dict:
    """The routes to the courses' engines, taken now: the bundle route, and with ``builds``
    the source-build route; without it, the build route of the facts in ``folder`` (measured
    before, with its own record), if they hold one. ``progress`` is told each route as it
    starts."""
    progress(Step("the instructor's bundle route", 0, 1 + builds))
    routes = {"bundle": bundle_route(command=command)}
    if builds:
        progress(Step("the source-build route", 1, 2))
        routes["builds"] = build_route(command=command)
    else:
        try:
            kept = (read_facts(folder).get("routes") or {}).get("builds")
        except DataFormatError:  # no facts there yet
            kept = None
        if kept:
            routes["builds"] = kept
    try:  # taken as root, by measure_image
        kept = (read_facts(folder).get("routes") or {}).get("image")
    except DataFormatError:
        kept = None
    if kept:
        routes["image"] = kept
    return routes


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
    # a route not measured (yet) is None, which the guide says
    routes = {"bundle": None, "builds": None, "image": None, **(facts.get("routes") or {})}
    from routerlab.course import image

    container = {"name": image.IMAGE, "published": image.published(), "user": image.USER,
                 "course_dir": image.COURSE_DIR, "podman": " ".join(image.run_options("podman")),
                 "docker": " ".join(image.run_options("docker"))}
    from importlib import resources

    # handout.workflow()'s file, read here: importing handout would make the command
    # line's chain of imports one too long (tests/test_course_machine.py compares them)
    workflow = (resources.files("routerlab") / "data" / "course" / "grade.yml").read_text()
    return templates.render_cited(text, {**facts, "routes": routes, "readers": readers or [], "container": container,
                                         "workflow": workflow},
                                  "course.md.j2", "the course's facts").rstrip() + "\n"
