"""The course image (Containerfile, `make image`): built with Podman on a base made from
Debian's packages, as no registry is reachable here; in a container of it, as its non-root
user, every solution's check passes and every skeleton's fails, with JUnit a grader's tools
read; JupyterLab starts; a container started without the options the checks need, or with
no engines, ends a check with one line saying what to add."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import ROOT, podman_or_skip
from routerlab.course import image, machine



def _packages(path: Path) -> list[str]:
    return [x.strip() for x in path.read_text().splitlines() if x.strip() and not x.strip().startswith("#")]


def test_course_packages_are_among_the_set_up_ones():
    """The image installs no Debian package that scripts/setup.sh does not: a clone's
    machine runs what the image runs."""
    course = _packages(ROOT / image.PACKAGES)
    assert course and set(course) <= set(_packages(ROOT / "scripts/debian-packages.txt"))


def test_image_runs_the_engines_the_course_measures():
    assert image.ENGINES == machine.ENGINES



def test_devcontainer_is_the_librarys():
    """The browser route: `.devcontainer/devcontainer.json` is what the library writes for
    this release (the handout writes the same), so the file, the image's user and the
    options the checks need cannot drift apart; the container it describes is run in
    :func:`test_the_devcontainer_as_written_starts_jupyterlab_and_runs_a_check`."""
    text = (ROOT / ".devcontainer/devcontainer.json").read_text()
    assert text == image.devcontainer_json()


def _podman_or_skip():
    podman_or_skip("the course image's test")
    from routerlab.engines import builds

    absent = [n for n in image.ENGINES if builds.installed(n) is None]
    if absent:
        from conftest import engine_absent

        engine_absent(f"{', '.join(absent)} not installed: the image takes a bundle of the installed engines")


@pytest.fixture(scope="module")
def built():
    """The course image, built as `make image` builds it (the base first, from Debian's
    packages where Podman lacks it), under a test tag removed afterwards."""
    _podman_or_skip()
    name = f"{image.IMAGE}:test-{os.getpid()}"
    lines: list[str] = []
    built = image.build(name, lines.append)
    assert built == name
    import subprocess

    # an earlier build's layers (this test's last run, a course's last image) are gone
    left = subprocess.run(image.podman() + ["images", "--quiet", "--filter", "dangling=true",
                                            "--filter", f"label={image.LABEL}"], capture_output=True, text=True)
    assert left.returncode == 0 and not left.stdout.strip(), left.stdout
    yield name
    subprocess.run(image.podman() + ["rmi", "--force", name], capture_output=True)
    image.prune()


def _junit(xml: str):
    import junitparser

    doc = junitparser.JUnitXml.fromstring(xml)
    suites = [doc] if isinstance(doc, junitparser.TestSuite) else list(doc)
    return [c for s in suites for c in s]


def _errors(stderr: str) -> list[str]:
    """The error lines of a command's stderr (its notes for a person are the others)."""
    return [x for x in stderr.splitlines() if x.startswith("routerlab: error:")]


def test_every_solution_passes_and_every_skeleton_fails_as_the_student(built, tmp_path):
    """In one container, as `student`: each exercise's check on its solution (exit 0, no
    failed case) and on its skeleton as shipped (exit 1, a failed case), in JUnit."""
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o777)  # the container's user is not the test's
    script = "; ".join(
        f"routerlab {t} check {e}{' --solution' if kind == 'solution' else ''} --format junit "
        f"> /out/{t}-{e}-{kind}.xml 2>/out/{t}-{e}-{kind}.err; echo $? > /out/{t}-{e}-{kind}.rc"
        for t, e in machine.EXERCISES for kind in ("solution", "skeleton"))
    p = image.run(built, ["bash", "-c", f"id -un > /out/user; {script}"],
                  options=image.run_options() + ["--volume", f"{out}:/out"], timeout=1800)
    assert p.returncode == 0, p.stderr[-2000:]
    assert (out / "user").read_text().strip() == image.USER
    for t, e in machine.EXERCISES:
        for kind, rc in (("solution", 0), ("skeleton", 1)):
            stem = out / f"{t}-{e}-{kind}"
            got = int((stem.with_suffix(".rc")).read_text())
            assert got == rc, f"{t} {e} {kind}: exit {got}: {stem.with_suffix('.err').read_text()[-1500:]}"
            cases = _junit(stem.with_suffix(".xml").read_text())
            failed = [c for c in cases if c.result and type(c.result[0]).__name__ == "Failure"]
            assert cases and bool(failed) == (kind == "skeleton"), f"{t} {e} {kind}: {[c.name for c in failed]}"


def _lab_answers(port: int) -> str:
    """Python that waits (a minute at most) for JupyterLab's API on the container's
    loopback ``port`` and prints its answer; it exits naming the wait when none comes."""
    return ("import urllib.request, time\n"
            "for _ in range(120):\n"
            "    try:\n"
            f"        print(urllib.request.urlopen('http://127.0.0.1:{port}/api').read().decode()); break\n"
            "    except OSError:\n"
            "        time.sleep(0.5)\n"
            "else:\n"
            "    raise SystemExit('JupyterLab did not answer')\n")


def test_jupyterlab_starts(built):
    """The image's own command (its CMD, as `podman run` without one runs it) serves
    JupyterLab: its API answers on the container's loopback."""
    import shlex
    import subprocess

    p = subprocess.run(image.podman() + ["image", "inspect", "--format", "{{json .Config.Cmd}}", built],
                       capture_output=True, text=True)
    cmd = shlex.join(json.loads(p.stdout))
    assert "jupyter lab" in cmd
    probe = _lab_answers(8888)
    p = image.run(built, ["bash", "-c", f"{cmd} >/tmp/lab.log 2>&1 & "
                          f"python3 -c \"{probe}\" || {{ cat /tmp/lab.log; exit 1; }}"], timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "version" in json.loads(p.stdout.strip().splitlines()[-1])


def test_without_the_options_a_check_says_what_to_add(built):
    """Started without the options, the P4 check (which needs namespaces of its own)
    ends with exit status 2 and one line naming the option to add; the Click checks, run
    from memory, still pass."""
    p = image.run(built, ["routerlab", "p4", "check", "router", "--solution"], options=[], timeout=300)
    assert p.returncode == 2, p.stdout + p.stderr
    errors = _errors(p.stderr)
    assert len(errors) == 1 and errors[0].endswith("start it with " + " ".join(image.run_options("podman"))), p.stderr
    p = image.run(built, ["routerlab", "click", "check", "forward", "--solution"], options=[], timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr


def test_without_engines_a_check_says_what_to_install(built):
    p = image.run(built, ["routerlab", "click", "check", "forward", "--solution"],
                  env={"ROUTERLAB_ENGINES_DIR": "/tmp/no-engines"}, timeout=300)
    assert p.returncode == 2, p.stdout + p.stderr
    errors = _errors(p.stderr)
    assert len(errors) == 1 and "routerlab engines install" in errors[0], p.stderr


def test_the_devcontainer_as_written_starts_jupyterlab_and_runs_a_check(built):
    """The browser route as `.devcontainer/devcontainer.json` says it (its image here the
    one just built): its run options and user, its start command (with the workspace
    folder Codespaces would substitute); JupyterLab then answers and a P4 check passes."""
    conf = json.loads((ROOT / ".devcontainer/devcontainer.json").read_text())
    start = conf["postStartCommand"].replace("${containerWorkspaceFolder}", image.COURSE_DIR)
    probe = _lab_answers(conf["forwardPorts"][0])
    p = image.run(built, ["bash", "-c", f"{start}\npython3 -c \"{probe}\" || {{ cat /tmp/jupyterlab.log; exit 1; }}\n"
                          "routerlab p4 check router --solution"],
                  options=conf["runArgs"], user=conf["remoteUser"], timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "Every TODO passes" in p.stdout
