"""A student's account for the tests: a user without root and without a terminal, with a
home of its own, as a lab's machine gives a student.

As root, :func:`student` makes a throwaway user (``useradd``) and runs commands as it
(``runuser``); as any other user, it is that user, in a throwaway home. Either way the
commands run with a clean environment (no ``ROUTERLAB_*`` of the caller's), stdin from
``/dev/null``, in their own process group, which is killed if a command outlives its
timeout. The user and its home are removed afterwards, however the test ends.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from conftest import ROOT
from routerlab.course import machine

#: The courses' engines (routerlab.course.machine.ENGINES).
COURSE_ENGINES = machine.ENGINES
#: Where the shared bundles are beside a clone (.ci/run takes them from there too).
SHARED_BUNDLES = ROOT.parent / "shared" / "engine-bundles"


@dataclass
class Student:
    """A user without root: its name (None: the user running the tests), its home, and the
    Python that runs this clone's routerlab for it."""

    name: str | None
    home: Path
    python: str = sys.executable

    def env(self, **extra: str) -> dict[str, str]:
        """A clean environment, as a fresh login of the student's gives."""
        return {"HOME": str(self.home), "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                "USER": self.name or pwd.getpwuid(os.getuid()).pw_name, **extra}

    def run(self, cmd: list[str], *, cwd: Path | None = None, timeout: float = 600,
            **extra_env: str) -> subprocess.CompletedProcess:
        """Run ``cmd`` as the student, without a terminal; its output as text."""
        env = self.env(**extra_env)
        full = ["env", "-i", *(f"{k}={v}" for k, v in env.items()), *cmd]
        if self.name:
            full = ["runuser", "-u", self.name, "--", *full]
        p = subprocess.Popen(full, cwd=cwd or self.home, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout)
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)  # its own group: runuser and what it started
            p.communicate()
            raise
        return subprocess.CompletedProcess(full, p.returncode, out, err)

    def routerlab(self, *args: str, **kw) -> subprocess.CompletedProcess:
        """``routerlab ARGS`` of this clone's virtual environment, as the student runs it."""
        return self.run([self.python, "-m", "routerlab.cli", *args], **kw)

    def folder(self, name: str) -> Path:
        """A folder of the student's own, in its home."""
        path = self.home / name
        path.mkdir(parents=True, exist_ok=True)
        if self.name:
            shutil.chown(path, self.name, self.name)
        return path


@contextlib.contextmanager
def student():
    """A :class:`Student`: a throwaway user as root, else the user running the tests; its
    home is a fresh folder. Both are removed afterwards."""
    home = Path(tempfile.mkdtemp(prefix="rl-student-"))
    name = None
    try:
        if os.geteuid() == 0:
            name = f"rl-student-{secrets.token_hex(3)}"
            subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", str(home), "--shell",
                            "/usr/sbin/nologin", name], check=True, capture_output=True, text=True)
            shutil.chown(home, name, name)
            home.chmod(0o700)
        s = Student(name, home)
        if name and s.run([s.python, "-c", "import routerlab.cli"]).returncode != 0:
            s.python = _bridge(s)
        yield s
    finally:
        if name:
            subprocess.run(["userdel", "--force", name], capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


def _bridge(s: Student) -> str:
    """A Python of the student's own that runs this clone's virtual environment: where that
    environment's interpreter is out of other users' reach (a Python under root's home), a
    virtual environment of the system's Python (the same minor version, so the same ABI)
    whose site folder takes in the clone's environment's, its .pth files (routerlab's
    editable install) included."""
    import site
    import sysconfig

    system = shutil.which("python3", path="/usr/bin:/bin")
    want = f"{sys.version_info.major}.{sys.version_info.minor}"
    p = s.run([system or "python3", "-c", "import sys; print(f'{sys.version_info.major}.{sys.version_info.minor}')"])
    if p.returncode != 0 or p.stdout.strip() != want:
        raise RuntimeError(f"{sys.executable} is out of a user's reach and the system's Python is not {want}: "
                           "no Python to run this clone's routerlab as a student")
    venv = s.home / "py"
    p = s.run([system, "-m", "venv", "--without-pip", str(venv)])
    assert p.returncode == 0, p.stderr
    clone_site = [d for d in site.getsitepackages() if d.startswith(sys.prefix)][0]
    theirs = venv / Path(sysconfig.get_path("purelib")).relative_to(sys.prefix) / "routerlab-clone.pth"
    theirs.write_text(f"import site; site.addsitedir({clone_site!r})\n")
    shutil.chown(theirs, s.name, s.name)
    return str(venv / "bin" / "python")


def can_make_students() -> str | None:
    """Why no student can be made here (None: one can)."""
    if os.geteuid() == 0:
        missing = [t for t in ("useradd", "userdel", "runuser") if not shutil.which(t)]
        return f"{', '.join(missing)} not installed (passwd, util-linux)" if missing else None
    return None


def course_bundle() -> tuple[Path, str] | None:
    """A bundle holding the courses' engines under the keys this routerlab builds them
    with, and its SHA-256 (from the ``.sha256`` beside it): from ``$ROUTERLAB_ENGINE_BUNDLES``
    or the shared folder beside the clone; None when there is none."""
    from routerlab.engines import builds, bundles

    keys = {n: builds.recipe(n).key for n in COURSE_ENGINES}
    for folder in filter(None, (os.environ.get(bundles.FOLDER_VAR), str(SHARED_BUNDLES))):
        for path in sorted(Path(folder).glob("*.tar.gz")):
            digest = path.with_name(path.name + ".sha256")
            if not digest.is_file():
                continue
            with tarfile.open(path, "r:gz") as tar:
                held = bundles.read_manifest(tar, path)["engines"]
            if all(held.get(n, {}).get("key") == k for n, k in keys.items()):
                return path, digest.read_text().split()[0]
    return None
