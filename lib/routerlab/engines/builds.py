"""Engines routerlab builds itself: Click, FastClick, bmv2, p4c and VPP from pinned sources.

The pins and recipes are data (``data/engine-builds.yaml``). Each engine installs into a
prefix keyed by engine, commit and recipe under :func:`engines_dir`
(``$ROUTERLAB_ENGINES_DIR``, default ``~/.local/share/routerlab/engines``). A build runs
in ``.build/<key>`` and its staged install is renamed into place only when every step
succeeded, so a failed or interrupted build never leaves anything that counts as
installed. Sources come from GitHub, or from a folder of the same tarballs named by
``$ROUTERLAB_ENGINE_SOURCES``, and are checked against the pinned SHA-256.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Callable

from routerlab import processes
from routerlab import yamlfile
from routerlab.analysis.pinned import sha256  # noqa: F401  (builds.sha256: bundles and tests use it)
from routerlab.errors import BuildFailed, DataFormatError, ParameterError, RouterlabError

SOURCES_VAR = "ROUTERLAB_ENGINE_SOURCES"
DIR_VAR = "ROUTERLAB_ENGINES_DIR"
#: Written into a prefix last, before it is renamed into place: its presence is what
#: "installed" means.
MARKER = ".routerlab-engine.json"
#: Lines of the build log shown when a step fails.
TAIL = 30
#: The variable that names a build of one's own, per engine and binary: the one place
#: these names are written (finding binaries, the listing, doctor and the engines' hints
#: read them here).
OVERRIDES = {
    "click": {"click": "ROUTERLAB_CLICK"},
    "fastclick": {"click": "ROUTERLAB_FASTCLICK"},
    "bmv2": {"simple_switch": "ROUTERLAB_SIMPLE_SWITCH", "simple_switch_CLI": "ROUTERLAB_SIMPLE_SWITCH_CLI",
             "simple_switch_grpc": "ROUTERLAB_SIMPLE_SWITCH_GRPC"},
    "bmv2-log": {"simple_switch": "ROUTERLAB_SIMPLE_SWITCH_LOG", "simple_switch_CLI": "ROUTERLAB_SIMPLE_SWITCH_CLI",
                 "simple_switch_grpc": "ROUTERLAB_SIMPLE_SWITCH_GRPC_LOG"},
    "p4c": {"p4c-bm2-ss": "ROUTERLAB_P4C", "p4c": "ROUTERLAB_P4C_DRIVER"},
    "vpp": {"vpp": "ROUTERLAB_VPP", "vppctl": "ROUTERLAB_VPPCTL"},
}


def main_binary(engine: str) -> str:
    """The binary that stands for ``engine`` when one is asked for (the first it installs:
    ``click``, ``simple_switch``, ``p4c-bm2-ss``)."""
    return next(iter(OVERRIDES[engine]))


def how_to_get(*engines: str) -> str:
    """Where users get ``engines``: the install command, or the variables naming builds
    of their own (:data:`OVERRIDES`)."""
    names = [v for e in engines for v in OVERRIDES[e].values()]
    own = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
    return (f"routerlab engines install {' '.join(engines)} "
            f"(or your own build{'s' if len(names) > 1 else ''}: {own})")


@dataclass(frozen=True)
class Source:
    """One pinned tarball: GitHub's ``archive/<commit>.tar.gz`` of ``repository``."""

    repository: str
    commit: str
    sha256: str

    @property
    def file(self) -> str:
        return f"{self.repository.split('/')[1]}-{self.commit}.tar.gz"

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repository}/archive/{self.commit}.tar.gz"

    @property
    def short(self) -> str:
        """``owner/repo@commit12``: how environment records name an engine."""
        return f"{self.repository}@{self.commit[:12]}"


@dataclass(frozen=True)
class Recipe:
    """How one engine is built: its source, extra sources, Debian packages, steps."""

    engine: str
    source: Source
    extra: dict[str, Source]
    debian: tuple[str, ...]
    steps: tuple[tuple[str, str], ...]
    binaries: dict[str, str] = field(hash=False)
    patches: tuple[str, ...] = ()
    #: Variables an install from a bundle in another folder sets for its programs
    #: (``{prefix}``: the new prefix); not part of the key, since the build is the same.
    relocate_env: dict[str, str] = field(default_factory=dict, hash=False)
    #: Debian packages it needs to run that its shared libraries do not name.
    runtime: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The prefix's name: engine, commit and a hash of the whole recipe (its patches'
        text included)."""
        blob = json.dumps([self.source.__dict__, {k: v.__dict__ for k, v in self.extra.items()},
                           self.steps] + ([[patch_file(p).read_text() for p in self.patches]] if self.patches else []),
                          sort_keys=True)
        return f"{self.engine}-{self.source.commit[:12]}-{hashlib.sha256(blob.encode()).hexdigest()[:8]}"

    @property
    def prefix(self) -> Path:
        return engines_dir() / self.key


def patch_file(name: str):
    """A patch a recipe carries: ``data/patches/NAME`` in the package."""
    return resources.files("routerlab").joinpath("data/patches", name)


#: The top-level entry of engine-builds.yaml that is not an engine: the order in which
#: ``install`` starts builds.
ORDER = "install_order"


#: One engine's entry of engine-builds.yaml (:mod:`routerlab.yamlfile`).
SOURCE = yamlfile.Shape({"repository": str, "commit": str, "sha256": str}, required=("repository", "commit", "sha256"))
RECIPE = yamlfile.Shape({
    "source": SOURCE, "extra": (yamlfile.MapOf(SOURCE), None), "debian": yamlfile.ListOf(str),
    "patches": (yamlfile.ListOf(str), None),
    "steps": yamlfile.ListOf(yamlfile.ListOf(str, min=2, max=2, what="a pair [stage, command]")),
    "binaries": yamlfile.MapOf(str), "relocate_env": (yamlfile.MapOf(str), None), "runtime": (yamlfile.ListOf(str), None),
}, required=("source", "debian", "steps", "binaries"))


@cache
def _builds_file():
    """``data/engine-builds.yaml``: its path and its content."""
    path = resources.files("routerlab").joinpath("data/engine-builds.yaml")
    return path, yamlfile.parse(path.read_text(), path)


@cache
def recipes() -> dict[str, Recipe]:
    """Every engine's recipe, in the order of ``data/engine-builds.yaml``."""
    path, raw = _builds_file()
    out = {}
    for name, r in raw.items():
        if name == ORDER:
            continue
        yamlfile.check(r, RECIPE, path, f"engine {name}", line=yamlfile.line_of(raw, name))
        out[name] = Recipe(
            engine=name, source=Source(**r["source"]),
            extra={k: Source(**v) for k, v in (r.get("extra") or {}).items()},
            debian=tuple(r["debian"]), steps=tuple((s, " ".join(c.split())) for s, c in r["steps"]),
            binaries=dict(r["binaries"]), patches=tuple(r.get("patches") or ()),
            relocate_env=dict(r.get("relocate_env") or {}), runtime=tuple(r.get("runtime") or ()))
        missing = [p for p in out[name].patches if not patch_file(p).is_file()]
        if missing:
            raise DataFormatError(str(path), yamlfile.line_of(r, "patches"),
                                  f"engine {name}: no patch {', '.join(missing)} in data/patches")
    return out


@cache
def install_order() -> list[str]:
    """The order in which ``install`` starts builds (``install_order`` of
    ``data/engine-builds.yaml``: longest first)."""
    path, raw = _builds_file()
    order = raw.get(ORDER)
    if not isinstance(order, list) or sorted(order) != sorted(n for n in raw if n != ORDER):
        raise DataFormatError(str(path), yamlfile.line_of(raw, ORDER),
                              f"{ORDER}: expected a list naming every engine once, got {order!r}")
    return order


def recipe(engine: str) -> Recipe:
    """One engine's recipe; an unknown name is refused with the known ones."""
    known = recipes()
    if engine not in known:
        raise ParameterError("engine", f"unknown engine {engine!r}; known: {', '.join(known)}")
    return known[engine]


def engines_dir() -> Path:
    """Where installed engines live: ``$ROUTERLAB_ENGINES_DIR`` or the user's data folder."""
    env = os.environ.get(DIR_VAR)
    if env:
        return Path(env).expanduser().resolve()
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "routerlab" / "engines"


def usable_engines_dir() -> Path:
    """:func:`engines_dir`, refused when its path has white space: Click's scripts
    (``click-compile``, ``click-buildtool``) and p4c's preprocessor call split it there."""
    base = engines_dir()
    if re.search(r"\s", str(base)):
        raise RouterlabError(f"the engines folder {base} has white space in its path, where Click's scripts and "
                             f"p4c break: set ${DIR_VAR} to a folder without")
    odd = sorted(set(re.sub(r"[\w./+@:-]", "", str(base))))
    if odd:
        # Click's scripts and the wrappers of a bundle's install name the folder in shell
        raise RouterlabError(f"the engines folder {base} has {' '.join(odd)} in its path, which shell scripts "
                             f"naming it would take as syntax: set ${DIR_VAR} to a folder without")
    return base


def _sudo_user_dir() -> Path | None:
    """Under sudo, the invoking user's engines folder: engines a user installed are found
    when the testbed then runs with sudo (whose HOME is root's)."""
    user = os.environ.get("SUDO_USER")
    if not user or os.environ.get(DIR_VAR) or os.environ.get("XDG_DATA_HOME"):
        return None
    home = Path(os.path.expanduser(f"~{user}"))
    return home / ".local" / "share" / "routerlab" / "engines" if home.is_absolute() else None


def installed(engine: str) -> Path | None:
    """The prefix of ``engine`` built from its current pin, or None."""
    r = recipe(engine)
    for base in (engines_dir(), _sudo_user_dir()):
        if base is not None and (base / r.key / MARKER).is_file():
            return base / r.key
    return None


def record(engine: str) -> dict | None:
    """What an installed engine's marker says (commit, source, times), or None."""
    prefix = installed(engine)
    return json.loads((prefix / MARKER).read_text()) if prefix else None


def installed_binary(engine: str, binary: str) -> Path | None:
    """``binary`` of an installed ``engine``, or None."""
    prefix = installed(engine)
    rel = recipe(engine).binaries.get(binary)
    if prefix and rel and (prefix / rel).is_file():
        return prefix / rel
    return None


#: Where an install from a bundle keeps a program it starts through a wrapper (the
#: wrapper tells it where its files are now: routerlab.engines.bundles), under the prefix.
WRAPPED = Path("libexec") / "routerlab-relocated"


def program_env(path: str | Path) -> dict[str, str]:
    """The variables the wrapper of a program installed from a bundle sets (its install's
    ``relocate_env``, ``{prefix}`` the install's folder), for running the program itself
    (:func:`real_program`) as the wrapper would; {} for any other program."""
    path = Path(path)
    if real_program(path) == path:
        return {}
    prefix = path.parent.parent
    try:
        env = json.loads((prefix / MARKER).read_text())["bundle"]["relocate_env"]
    except (OSError, KeyError, TypeError, json.JSONDecodeError):
        return {}
    return {k: v.replace("{prefix}", str(prefix)) for k, v in env.items()}


def real_program(path: str | Path) -> Path:
    """The program file behind ``path``: itself, or, for a program an install from a
    bundle wrapped, the binary the wrapper runs (read it, not the script)."""
    path = Path(path)
    wrapped = path.parent.parent / WRAPPED / path.name
    return wrapped if wrapped.is_file() else path


def describe(engine: str, path: str | Path) -> str:
    """How an environment record names the build a binary belongs to.

    ``owner/repo@commit12`` for a build of the pin that ``routerlab engines install`` made;
    otherwise the binary's path and where it was found (a variable or PATH)."""
    path = Path(path).resolve()
    prefix = installed(engine) if engine in recipes() else None
    if prefix and path.is_relative_to(prefix.resolve()):
        origin = _origin(prefix)
        return recipe(engine).source.short + (f" (from {origin})" if origin.startswith("bundle") else "")
    var = next((v for b, v in OVERRIDES.get(engine, {}).items() if os.environ.get(v)
                and Path(os.environ[v]).resolve() == path), None)
    return f"own build {path} (${var})" if var else f"own build {path} (found on PATH)"


# -- installing -------------------------------------------------------------------------

def missing_packages(names: list[str]) -> list[str]:
    """The Debian build packages of ``names`` that are not installed."""
    return missing_debian(sorted({p for n in names for p in recipe(n).debian}))


def missing_debian(want: list[str]) -> list[str]:
    """The Debian packages of ``want`` that are not installed."""
    if not want or not shutil.which("dpkg-query"):
        return []  # not Debian: the build's own errors will say what is missing
    p = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Status}\n", *want],
                       capture_output=True, text=True)
    ok = {ln.split()[0] for ln in p.stdout.splitlines() if ln.endswith("install ok installed")}
    return [w for w in want if w not in ok]


def install_packages(names: list[str], say: Callable[[str], None]) -> None:
    """Install the missing Debian build packages with apt (root), or say the line to run."""
    install_debian(sorted({p for n in names for p in recipe(n).debian}), say)


def packages(names: list[str]) -> list[str]:
    """The Debian packages that building the engines ``names`` and running them need (their
    recipes' ``debian`` and ``runtime``), sorted: what a machine's administrator installs
    once (``routerlab engines install --packages-only``) so that its users build them
    without root."""
    return sorted({p for n in names for p in (*recipe(n).debian, *recipe(n).runtime)})


def install_debian(want: list[str], say: Callable[[str], None], what: str = "build dependencies") -> None:
    """Install the Debian packages of ``want`` that are missing with apt (root, or sudo at
    a terminal); else raise, in one line naming them and the ``apt-get`` line that an
    administrator runs (also when apt or sudo refused)."""
    missing = missing_debian(want)
    if not missing:
        return
    line = "apt-get install -y --no-install-recommends " + " ".join(missing)
    ask = f"{what} missing: {' '.join(missing)}; install them with: sudo {line}"
    # as scripts/setup.sh does: root runs apt itself, a person at a terminal is asked by
    # sudo; without a terminal sudo could only hang or fail, so the line is said instead
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    if not shutil.which("apt-get") or (sudo and not (shutil.which("sudo") and sys.stdin.isatty())):
        raise RouterlabError(ask)
    say(f"apt: installing {' '.join(missing)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (sudo + ["apt-get", "update", "-q"], sudo + line.split()):
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            # a user sudo refuses (not in sudoers) or apt's own error: its last line says why
            said = (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1].strip()
            raise RouterlabError(f"{ask} ({' '.join(cmd[:len(sudo) + 2])} failed: {said})")


def fetch(src: Source) -> tuple[Path, str]:
    """The pinned tarball, checked: from ``$ROUTERLAB_ENGINE_SOURCES`` or downloaded.

    Returns the file and where it came from. A tarball whose SHA-256 is not the pinned
    one is refused, naming both."""
    folder = os.environ.get(SOURCES_VAR)
    if folder:
        path = Path(folder) / src.file
        if not path.is_file():
            raise RouterlabError(f"{src.file} not found in {folder} (${SOURCES_VAR})")
        origin = str(path)
    else:
        path = engines_dir() / ".sources" / src.file
        origin = src.url
        # two recipes may pin one tarball (bmv2, bmv2-log), and their builds run at once
        with _Lock(f"download-{src.file}", lambda line: None):
            if not path.is_file():
                path.parent.mkdir(parents=True, exist_ok=True)
                part = path.with_suffix(".part")
                _download(src.url, part, f"offline? set {SOURCES_VAR} to a folder holding {src.file}")
                got = sha256(part)
                if got != src.sha256:  # never cached: the next try downloads again
                    part.unlink()
                    raise RouterlabError(f"refused {src.url}: its sha256 is {got}, the pin says {src.sha256}")
                os.replace(part, path)
    got = sha256(path)
    if got != src.sha256:
        raise RouterlabError(f"refused {path}: its sha256 is {got}, the pin says {src.sha256}")
    return path, origin


class _Lock:
    """An exclusive lock per engine, so two installs never build into one prefix (or per
    download, so two builds never write one tarball)."""

    def __init__(self, engine: str, say: Callable[[str], None]):
        self.path = engines_dir() / ".locks" / f"{engine}.lock"
        self.engine, self.say = engine, say

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.f = open(self.path, "a+")
        try:
            fcntl.flock(self.f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.f.seek(0)
            self.say(f"{self.engine}: another install is running (pid {self.f.read().strip() or '?'}); waiting for it")
            fcntl.flock(self.f, fcntl.LOCK_EX)
        self.f.seek(0)
        self.f.truncate()
        self.f.write(str(os.getpid()))
        self.f.flush()
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.f, fcntl.LOCK_UN)
        self.f.close()


#: Running build steps and downloads, so that Ctrl-C can stop their whole process groups.
_running: set[subprocess.Popen] = set()
_running_lock = threading.Lock()
#: Set on Ctrl-C: no build starts another step.
_stopping = threading.Event()


#: Runs one step ($1) as a session leader that takes its whole process group down when it
#: gets SIGTERM: from Ctrl-C handling, or from the kernel when routerlab dies (even by
#: kill -9), so no make goes on building into a folder nobody owns.
_SUPERVISOR = 'trap "trap - TERM INT; kill -TERM -- -$$ 2>/dev/null; exit 143" TERM INT; bash -ec "$1" & wait $!'

#: Each step and download: sent SIGTERM when routerlab ends, even killed (-9).
_die_with_parent = processes.dies_with_parent(signal.SIGTERM)


#: Downloads a URL (argv 1) to a file (argv 2). It runs in a process of its own, so that
#: Ctrl-C stops it at once: a thread blocked in a read could only be waited for.
_DOWNLOADER = """
import shutil, sys, urllib.error, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=60) as r, open(sys.argv[2], "wb") as f:
        shutil.copyfileobj(r, f)
except (urllib.error.URLError, OSError) as e:
    sys.exit(str(getattr(e, "reason", e)))
"""


def _download(url: str, part: Path, hint: str) -> None:
    """Download ``url`` to ``part``. A failed, stopped (Ctrl-C, :func:`_stop_running`) or
    interrupted download leaves no ``part`` behind."""
    if _stopping.is_set():
        raise RouterlabError(f"download of {url} not started: stopping")
    p = subprocess.Popen([sys.executable, "-c", _DOWNLOADER, url, str(part)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, start_new_session=True,
                         preexec_fn=_die_with_parent)
    with _running_lock:
        _running.add(p)
    try:
        err = p.communicate()[1]
    finally:
        with _running_lock:
            _running.discard(p)
        if p.poll() is None:  # interrupted here (Ctrl-C in this thread)
            p.kill()
            p.wait()
        if p.returncode != 0 or _stopping.is_set():
            part.unlink(missing_ok=True)
    if p.returncode < 0 or _stopping.is_set():
        raise RouterlabError(f"download of {url} stopped")
    if p.returncode != 0:
        reason = (err.strip().splitlines() or ["no reason given"])[-1]
        raise RouterlabError(f"could not download {url} ({reason}); {hint}")


def _run_step(cmd: str, cwd: Path, env: dict, log: Path) -> int:
    if _stopping.is_set():
        return -signal.SIGINT
    with open(log, "a") as out:
        out.write(f"\n$ {cmd}\n")
        out.flush()
        p = subprocess.Popen(["bash", "-c", _SUPERVISOR, "routerlab-step", cmd], cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True,
                             preexec_fn=_die_with_parent)
        with _running_lock:
            _running.add(p)
        try:
            code = p.wait()
            # the step's shell has exited; what it started may still be dying (and writing)
            _group_gone(p.pid, 30)
            return code
        finally:
            with _running_lock:
                _running.discard(p)


#: What signalling a build's process group that has ended raises (one out of reach is not
#: a build's).
_GONE = (ProcessLookupError,)


def _group_gone(pgid: int, timeout: float) -> bool:
    """Wait until no process of group ``pgid`` is left (compilers finish writing first)."""
    return processes.group_gone(pgid, timeout, poll_s=0.1, gone=_GONE)


def _stop_running() -> None:
    """Stop every running step's and download's whole process group: SIGTERM, then SIGKILL
    after 10 s."""
    with _running_lock:
        procs = list(_running)
    for p in procs:  # all first, so that their grace periods run together
        processes.signal_group(p.pid, signal.SIGTERM, gone=_GONE)
    for p in procs:
        processes.ended_within(p)(10)
        if not _group_gone(p.pid, 10):
            processes.signal_group(p.pid, signal.SIGKILL, gone=_GONE)
            _group_gone(p.pid, 5)


def _tail(log: Path, n: int = TAIL) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-n:]) if log.is_file() else "(no output)"


def _build_env(root: Path) -> dict:
    env = dict(os.environ, LC_ALL="C")
    if shutil.which("ccache"):
        # the build folder's name is the same for every build of a key, and paths are
        # rewritten relative to it, so a rebuild hits the compiler cache
        env.update(CCACHE_DIR=str(engines_dir() / ".ccache"), CCACHE_BASEDIR=str(root),
                   CCACHE_NOHASHDIR="true", CCACHE_MAXSIZE=env.get("CCACHE_MAXSIZE", "5G"),
                   # configure and CMake both take the compiler (and its launcher) from these
                   CC=env.get("CC", "ccache gcc"), CXX=env.get("CXX", "ccache g++"))
    return env


def _unpack(tarball: Path, into: Path) -> None:
    into.mkdir(parents=True)
    p = subprocess.run(["tar", "-xzf", str(tarball), "-C", str(into), "--strip-components=1", "--no-same-owner"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RouterlabError(f"unpacking {tarball} failed: {p.stderr.strip()[-500:]}")


def build(engine: str, *, say: Callable[[str], None] = lambda line: None, jobs: int | None = None,
          force: bool = False) -> Path:
    """Install ``engine`` from its pin unless it is installed; return its prefix.

    One line per stage with the elapsed time goes to ``say``; the full output goes to a
    log file under ``<engines dir>/.logs``. Raises :class:`BuildFailed` with the log's
    last lines and its path when a step fails."""
    r = recipe(engine)
    usable_engines_dir()
    jobs = jobs or len(os.sched_getaffinity(0)) or 1
    with _Lock(engine, say):
        if installed(engine) and not force:
            say(f"{engine}: installed ({r.source.short}) in {r.prefix}")
            return r.prefix
        t0 = time.monotonic()
        root = engines_dir() / ".build" / r.key
        logs = engines_dir() / ".logs"
        logs.mkdir(parents=True, exist_ok=True)
        log = logs / f"{engine}-{datetime.now().strftime('%Y%m%dT%H%M%S')}.log"
        # what interrupted builds left behind, of this recipe or an older one (not another
        # engine's whose name starts with this one's: bmv2-log's is not bmv2's)
        for stale in (engines_dir() / ".build").glob(f"{engine}-*"):
            if re.fullmatch(rf"{re.escape(engine)}-[0-9a-f]{{12}}-[0-9a-f]{{8}}", stale.name):
                shutil.rmtree(stale, ignore_errors=True)
        stage_times: dict[str, float] = {}

        def stage(name: str, t: float):
            stage_times[name] = stage_times.get(name, 0) + time.monotonic() - t
            say(f"{engine}: {name} done ({time.monotonic() - t0:.0f} s elapsed)")

        try:
            t = time.monotonic()
            tarball, origin = fetch(r.source)
            extras = {k: fetch(s) for k, s in r.extra.items()}
            stage("fetch", t)
            t = time.monotonic()
            _unpack(tarball, root / "src")
            for k, (path, _) in extras.items():
                _unpack(path, root / "extra" / k)
            for p in r.patches:
                with resources.as_file(patch_file(p)) as f:
                    if _run_step(f"patch -p1 --forward --batch -i {shlex.quote(str(f))}", root / "src", os.environ.copy(),
                                 log) != 0:
                        raise BuildFailed(f"{engine}: patch {p} does not apply; last {TAIL} lines of {log}:\n"
                                          f"{_tail(log)}")
            stage("unpack", t)
            (root / "build").mkdir()
            dest = root / "dest"
            values = {"prefix": str(r.prefix), "dest": str(dest), "build": str(root / "build"), "jobs": str(jobs),
                      **{f"extra.{k}": str(root / "extra" / k) for k in r.extra}}
            env = _build_env(root)
            say(f"{engine}: building {r.source.short} (log: {log})")
            steps = list(r.steps)
            for i, (name, cmd) in enumerate(steps):
                t = time.monotonic()
                for k, v in values.items():
                    cmd = cmd.replace("{" + k + "}", shlex.quote(v))
                if _run_step(cmd, root / "src", env, log) != 0:
                    raise BuildFailed(f"{engine}: {name} failed; last {TAIL} lines of {log}:\n{_tail(log)}\n"
                                      f"{engine}: full log: {log}")
                if i + 1 == len(steps) or steps[i + 1][0] != name:
                    stage(name, t)
                else:
                    stage_times[name] = stage_times.get(name, 0) + time.monotonic() - t
            staged = dest / r.prefix.relative_to("/")
            for b, rel in r.binaries.items():
                if not (staged / rel).is_file():
                    raise BuildFailed(f"{engine}: the build did not install {rel}; log: {log}")
            (staged / MARKER).write_text(json.dumps({
                "engine": engine, "repository": r.source.repository, "commit": r.source.commit,
                "sha256": r.source.sha256, "source": origin, "key": r.key,
                "extra": {k: s.short for k, s in r.extra.items()},
                "built": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "seconds": {k: round(v, 1) for k, v in stage_times.items()}, "jobs": jobs, "log": str(log),
            }, indent=1) + "\n")
            if r.prefix.exists():  # a forced rebuild replaces the old prefix, marker first
                _discard(r.prefix)
            os.rename(staged, r.prefix)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        say(f"{engine}: installed {r.source.short} in {r.prefix} ({time.monotonic() - t0:.0f} s)")
        return r.prefix


def install(names: list[str] | None = None, *, say: Callable[[str], None] = lambda line: None, jobs: int | None = None,
            parallel: int = 2, force: bool = False) -> dict[str, Path | Exception]:
    """Install several engines, ``parallel`` builds at a time (longest first), each with
    ``jobs`` cores; return each engine's prefix or the error that stopped it.

    Debian build packages are installed first (or the apt line is raised). Ctrl-C stops
    every running build and leaves nothing installed that was not finished."""
    names = list(dict.fromkeys(names or recipes()))
    for n in names:
        recipe(n)
    install_packages([n for n in names if force or not installed(n)], say)
    # an engine installed already still needs what its recipe says it runs with
    install_debian(sorted({p for n in names if not force and installed(n) for p in recipe(n).runtime}), say,
                   what="runtime packages of the installed engines")
    rank = {n: i for i, n in enumerate(install_order())}
    order = sorted(names, key=lambda n: rank.get(n, len(rank)))
    results: dict[str, Path | Exception] = {}
    lock = threading.Lock()
    _stopping.clear()

    def one(n):
        try:
            res: Path | Exception = build(n, say=say, jobs=jobs, force=force)
        except Exception as e:  # noqa: BLE001 - a thread's error must reach the user, not a traceback
            res = e if isinstance(e, RouterlabError) else BuildFailed(f"{n}: {type(e).__name__}: {e}")
            if not _stopping.is_set():
                say(str(res))  # at once: the other builds may run for a long while yet
        with lock:
            results[n] = res

    pool = ThreadPoolExecutor(max_workers=max(1, parallel))
    futures = [pool.submit(one, n) for n in order]
    try:
        for f in futures:
            while not f.done():
                time.sleep(0.2)
            f.result()
    except KeyboardInterrupt:
        _stopping.set()
        for f in futures:
            f.cancel()
        _stop_running()
        pool.shutdown(wait=True)
        raise
    pool.shutdown(wait=True)
    return {n: results[n] for n in names}


def _discard(prefix: Path) -> None:
    """Remove an installed prefix so that no interruption leaves it counting as installed:
    its marker goes first."""
    (prefix / MARKER).unlink(missing_ok=True)
    shutil.rmtree(prefix)


def remove(names: list[str] | None = None, *, say: Callable[[str], None] = lambda line: None) -> list[Path]:
    """Remove every installed build (any commit or recipe) of ``names`` (default all)."""
    names = list(dict.fromkeys(names or recipes()))
    for n in names:
        recipe(n)
    removed = []
    base = engines_dir()
    for n in names:
        with _Lock(n, say):
            for p in sorted(base.glob(f"{n}-*")):
                if (p / MARKER).is_file() and json.loads((p / MARKER).read_text()).get("engine") == n:
                    _discard(p)
                    removed.append(p)
    return removed


def listing() -> list[dict]:
    """One row per engine: installed or not, its pinned commit, its prefix, where it came
    from (a source build, a bundle), what overrides it; then a row per install of another
    pin (a bundle's), which is never taken for the pinned engine."""
    rows = []
    for name, r in recipes().items():
        prefix = installed(name)
        over = [f"${v}={os.environ[v]}" for v in OVERRIDES.get(name, {}).values() if os.environ.get(v)]
        rows.append({"engine": name, "installed": "installed" if prefix else "not installed",
                     "commit": r.source.short, "prefix": str(prefix or r.prefix),
                     "from": _origin(prefix) if prefix else "", "overridden by": ", ".join(over)})
    base = engines_dir()
    current = {r.key for r in recipes().values()}
    for marker in sorted(base.glob(f"*/{MARKER}")) if base.is_dir() else []:
        try:
            rec = json.loads(marker.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if rec.get("bundle") and marker.parent.name not in current:
            rows.append({"engine": rec.get("engine", "?"), "installed": "another pin",
                         "commit": f"{rec.get('repository')}@{str(rec.get('commit'))[:12]}",
                         "prefix": str(marker.parent), "from": _origin(marker.parent), "overridden by": ""})
    return rows


def _origin(prefix: Path) -> str:
    """Where an installed engine came from: ``source build`` or ``bundle <sha256, 12>``."""
    try:
        b = json.loads((prefix / MARKER).read_text()).get("bundle")
    except (OSError, json.JSONDecodeError):
        return "?"
    return f"bundle {b['sha256'][:12]}" if b else "source build"


if __name__ == "__main__":  # pragma: no cover
    sys.exit("use: routerlab engines install")
