"""A student's account installs the courses' engines without root and without a terminal,
on either route, once the administrator has installed their Debian packages
(`routerlab engines install --packages-only`); where a package is missing, the install
stops before it builds or unpacks anything, in one line naming the packages and the
`apt-get` line. Run for real as a user without root (tests/students.py: a throwaway user
when the tests run as root), its stdin not a terminal.

The build route runs on a tiny engine (the recipe handed to the command line by a small
driver), so that it takes a second; the bundle route on the shared bundle of the real
engines, and on a bundle of a manifest alone for a package that is missing."""

import dataclasses
import io
import json
import tarfile
import textwrap
from pathlib import Path

import pytest

from conftest import engine_absent, tiny_tarball
from routerlab.engines import builds, bundles
from routerlab.errors import RouterlabError
from students import COURSE_ENGINES, can_make_students, course_bundle, student

pytestmark = pytest.mark.skipif(can_make_students() is not None, reason=str(can_make_students()))

MISSING = "routerlab-no-such-package"
COMMIT = "0123456789abcdef0123456789abcdef01234567"

#: Runs routerlab's command line with `click` pinned to the recipe in argv[1] (JSON): the
#: real command, its real checks, on an engine that builds in a second.
DRIVER = textwrap.dedent("""\
    import json, sys
    from routerlab.engines import builds
    spec = json.loads(sys.argv[1])
    recipe = builds.Recipe(engine="click", source=builds.Source(**spec["source"]), extra={},
                           debian=tuple(spec["debian"]), runtime=tuple(spec["runtime"]),
                           binaries={"click": "bin/click"}, steps=tuple(tuple(s) for s in spec["steps"]))
    builds.recipes = lambda: {"click": recipe}
    from routerlab.cli import main
    sys.argv = ["routerlab", *sys.argv[2:]]
    main()
""")


@pytest.fixture
def a_student():
    with student() as s:
        yield s


def _one_line(p) -> str:
    """The error a command ended with: its stderr must be that one line."""
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 1 and len(lines) == 1, (p.returncode, p.stdout, p.stderr)
    return lines[0]


def _nothing_installed(s) -> bool:
    folder = s.home / ".local" / "share" / "routerlab" / "engines"
    return not list(folder.glob(f"*/{builds.MARKER}")) and not list(folder.glob(".build/*"))


# -- the build route, on a tiny engine ---------------------------------------------------------

def _tiny(s, debian=("coreutils",), runtime=()) -> list[str]:
    """The driver's command for a tiny `click` whose recipe names ``debian`` and ``runtime``,
    its source in a folder of the student's ($ROUTERLAB_ENGINE_SOURCES)."""
    sources = s.folder("sources")
    _, digest = tiny_tarball(sources, commit=COMMIT)
    spec = {"source": {"repository": "example/tiny", "commit": COMMIT,
                       "sha256": digest},
            "debian": list(debian), "runtime": list(runtime),
            "steps": [["configure", "test -x tiny.sh"], ["build", "true"],
                      ["install", "install -D -m 755 tiny.sh {dest}{prefix}/bin/click"]]}
    driver = s.folder("driver") / "routerlab_tiny.py"
    driver.write_text(DRIVER)
    return [s.python, str(driver), json.dumps(spec)]


def test_a_student_builds_an_engine_without_root_when_its_packages_are_there(a_student):
    s = a_student
    p = s.run([*_tiny(s), "engines", "install", "click"], ROUTERLAB_ENGINE_SOURCES=str(s.home / "sources"))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "apt" not in p.stdout + p.stderr
    assert list((s.home / ".local/share/routerlab/engines").glob(f"click-*/{builds.MARKER}"))


def test_a_missing_build_package_stops_a_students_build_in_one_line_naming_it(a_student):
    s = a_student
    p = s.run([*_tiny(s, debian=(MISSING, "coreutils")), "engines", "install", "click"],
              ROUTERLAB_ENGINE_SOURCES=str(s.home / "sources"))
    line = _one_line(p)
    assert MISSING in line and line.endswith(f"apt-get install -y --no-install-recommends {MISSING}")
    assert "coreutils" not in line  # installed: only what is missing is named
    assert _nothing_installed(s)


def test_packages_only_takes_the_build_and_the_runtime_packages_and_builds_nothing(a_student):
    """`--packages-only` checks what building and running need (the recipe's `debian` and
    `runtime`); as a user without root and without a terminal, it says the apt line."""
    s = a_student
    cmd = _tiny(s, debian=(MISSING + "-build", "coreutils"), runtime=(MISSING + "-runtime",))
    line = _one_line(s.run([*cmd, "engines", "install", "--packages-only", "click"]))
    assert f"apt-get install -y --no-install-recommends {MISSING}-build {MISSING}-runtime" in line
    assert _nothing_installed(s)
    p = s.run([*_tiny(s), "engines", "install", "--packages-only", "click"])
    assert p.returncode == 0 and "are installed" in p.stdout, p.stdout + p.stderr
    assert _nothing_installed(s)


# -- the bundle route --------------------------------------------------------------------------

def _manifest_only_bundle(s, packages: list[str]) -> Path:
    """A bundle of `click` whose manifest lists ``packages`` and whose files are not in it:
    an install must stop at the packages, before it unpacks anything."""
    r = builds.recipe("click")
    manifest = {"format": bundles.FORMAT, "platform": dataclasses.asdict(bundles.Platform.here()),
                "packed": "2026-01-01T00:00:00+00:00",
                "engines": {"click": {"key": r.key, "repository": r.source.repository, "commit": r.source.commit,
                                      "source_sha256": r.source.sha256, "built": "2026-01-01T00:00:00+00:00",
                                      "prefix": "/nowhere/click", "packages": packages, "relocate_env": {},
                                      "files": {"bin/click": {"sha256": "0" * 64, "mode": 0o755}}}}}
    path = s.folder("bundles") / "manifest-only.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        blob = json.dumps(manifest).encode()
        info = tarfile.TarInfo(bundles.MANIFEST)
        info.size = len(blob)
        tar.addfile(info, io.BytesIO(blob))
    return path


def test_a_missing_runtime_package_stops_a_students_bundle_install_in_one_line_naming_it(a_student):
    s = a_student
    bundle = _manifest_only_bundle(s, [MISSING, "coreutils"])
    line = _one_line(s.routerlab("engines", "install", "--from", str(bundle), "click"))
    assert line.startswith(f"routerlab: error: runtime packages of the bundle's engines missing: {MISSING};")
    assert line.endswith(f"apt-get install -y --no-install-recommends {MISSING}")
    assert _nothing_installed(s)
    # the administrator's command for it names the same package, and installs nothing else
    line = _one_line(s.routerlab("engines", "install", "--packages-only", "--from", str(bundle), "click"))
    assert line.endswith(f"apt-get install -y --no-install-recommends {MISSING}")
    p = s.routerlab("engines", "install", "--packages-only", "--from", str(_manifest_only_bundle(s, ["coreutils"])))
    assert p.returncode == 0 and "are installed" in p.stdout, p.stdout + p.stderr
    assert _nothing_installed(s)


@pytest.mark.slow
def test_a_student_installs_the_courses_engines_from_the_bundle_without_root_and_checks_with_them(a_student):
    """The guide's recommended route, as a student takes it: `engines install --from FILE
    --sha256 HASH click bmv2-log p4c`, then a check that runs them."""
    found = course_bundle()
    if found is None:
        engine_absent(f"no bundle of {', '.join(COURSE_ENGINES)} under this routerlab's keys "
                      f"(${bundles.FOLDER_VAR}, or ../shared/engine-bundles beside the clone)")
    path, digest = found
    s = a_student
    p = s.routerlab("engines", "install", "--from", str(path), "--sha256", digest, *COURSE_ENGINES)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "apt" not in p.stdout + p.stderr
    listing = s.routerlab("engines", "list").stdout
    for name in COURSE_ENGINES:
        assert any(line.split()[:2] == [name, "installed"] and "bundle" in line for line in listing.splitlines()), listing
    p = s.routerlab("click", "check", "forward", "--solution")
    assert p.returncode == 0, p.stdout + p.stderr


# -- apt or sudo refusing: the same one line, with why -----------------------------------------

def _fake(folder: Path, name: str, said: str) -> None:
    """A program ``name`` in ``folder`` that says ``said`` on stderr and fails."""
    path = folder / name
    path.write_text(f"#!/bin/sh\necho '{said}' >&2\nexit 1\n")
    path.chmod(0o755)


@pytest.mark.parametrize("as_root", [True, False])
def test_apt_or_sudo_refusing_ends_in_one_line_naming_the_packages_and_why(tmp_path, monkeypatch, as_root):
    """As root, apt's own error; as a user at a terminal, sudo's refusal (not in sudoers):
    either way one line naming the packages, the apt line and the last word of the refusal.
    (Fake apt-get and sudo: nothing is installed.)"""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake(bin_dir, "apt-get", "E: Could not open lock file /var/lib/dpkg/lock-frontend")
    _fake(bin_dir, "sudo", "student is not in the sudoers file.")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setattr(builds, "missing_debian", lambda want: list(want))
    monkeypatch.setattr(builds.os, "geteuid", lambda: 0 if as_root else 1000)
    monkeypatch.setattr(builds.sys, "stdin", type("Tty", (), {"isatty": lambda self: True})())
    with pytest.raises(RouterlabError) as e:
        builds.install_debian([MISSING], lambda line: None, what="build dependencies")
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"build dependencies missing: {MISSING}; install them with: sudo apt-get install -y "
                          f"--no-install-recommends {MISSING} (")
    assert msg.endswith("E: Could not open lock file /var/lib/dpkg/lock-frontend)" if as_root
                        else "sudo apt-get update failed: student is not in the sudoers file.)")


def test_a_bundles_packages_are_what_its_engines_run_with_and_what_installs_them(a_student):
    """What `--packages-only --from` installs: the packages the manifest lists, the recipe's
    runtime packages, and patchelf, which relocates the engines (without it the install
    would stop in a traceback, not at the packages)."""
    bundle = _manifest_only_bundle(a_student, ["libfoo1"])
    got = bundles.packages(str(bundle))
    assert set(got) == {"libfoo1", "patchelf", *builds.recipe("click").runtime}
