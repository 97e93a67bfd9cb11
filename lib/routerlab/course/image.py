"""The course image: the clone's ``Containerfile`` built with Podman into a container with
routerlab, the courses' engines (from a bundle, not built), JupyterLab and a non-root
user, and the options a container of it is started with.

The build's context is staged in a folder of its own: routerlab's wheel, a bundle of the
installed course engines (:func:`routerlab.engines.bundles.pack`) and the course's Debian
package list, so that the image holds the clone's code as committed and nothing of its
virtual environment. Where no container registry is reachable, the base image is made
from Debian's packages (:func:`base`)."""

from __future__ import annotations

import itertools
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

from routerlab import cache, errors, version
from routerlab.engines import builds, bundles
from routerlab.errors import RouterlabError
from routerlab.testbed import userns

#: The image's name; its tags are routerlab's version and ``latest``.
IMAGE = "routerlab-course"
#: Where the release's image is published (``.github/workflows/course-image.yml`` pushes
#: it on a release's tag): what Codespaces and a course's autograder pull.
REGISTRY = "ghcr.io/routerlab"
#: The label the Containerfile puts on its images (and their layers), by which
#: :func:`prune` finds them.
LABEL = "org.routerlab.image=course"
#: The base the Containerfile names (its ``FROM``), under the name a registry gives it.
BASE = "docker.io/library/debian:bookworm"
#: The Debian suite of :data:`BASE`, and where :func:`base` takes its packages from.
SUITE = "bookworm"
MIRRORS = ("deb http://deb.debian.org/debian bookworm main",
           "deb http://deb.debian.org/debian bookworm-updates main",
           "deb http://deb.debian.org/debian-security bookworm-security main")
#: The image's user, who runs every check, and its home's course folder.
USER, COURSE_DIR = "student", "/home/student/course"
#: The engines the courses run (as ``routerlab.course.machine.ENGINES``).
ENGINES = ("click", "bmv2-log", "p4c")
#: The files of the clone the build reads, besides the wheel and the bundle.
CONTAINERFILE, PACKAGES = "Containerfile", "scripts/course-packages.txt"
#: Numbers the containers :func:`run` starts, within this process.
_runs = itertools.count()
#: The capability to raise resource limits (linux/capability.h).
CAP_SYS_RESOURCE = 24


def run_options(engine: str = "podman") -> list[str]:
    """What ``podman run`` (or ``docker run``) needs for the checks in the image: the
    options that let its user make namespaces (:data:`routerlab.testbed.userns.CONTAINER_OPTIONS`)."""
    return list(userns.CONTAINER_OPTIONS[engine])


def published(release: str | None = None) -> str:
    """The published image of ``release`` (default: this routerlab's, :func:`routerlab.version.release`)."""
    return f"{REGISTRY}/{IMAGE}:{release or version.release()}"


def devcontainer(release: str | None = None) -> dict:
    """The browser route's ``.devcontainer/devcontainer.json``: Codespaces (or VS Code's
    Dev Containers) starts the published image of ``release`` with Docker's
    :func:`run_options`, as its non-root user, and starts JupyterLab on port 8888 once
    the container is up (forwarded to the student's browser, private to them)."""
    return {
        "name": "routerlab course",
        "image": published(release),
        "runArgs": run_options("docker"),
        "remoteUser": USER,
        "containerUser": USER,
        "forwardPorts": [8888],
        "portsAttributes": {"8888": {"label": "JupyterLab", "onAutoForward": "notify"}},
        "postStartCommand": "nohup jupyter lab --no-browser --ip=127.0.0.1 --port=8888 "
                            "--ServerApp.root_dir=${containerWorkspaceFolder} > /tmp/jupyterlab.log 2>&1 &",
        "customizations": {"vscode": {"extensions": ["ms-toolsai.jupyter", "ms-python.python"]}},
    }


def devcontainer_json(release: str | None = None) -> str:
    """:func:`devcontainer` as the file holds it."""
    import json

    return json.dumps(devcontainer(release), indent=2) + "\n"


def podman() -> list[str]:
    """``podman`` with the global options this machine needs to start any container:
    ``--runtime runc`` where the cgroups are hybrid (v1 controllers with a v2 hierarchy
    that has controllers of its own), which crun refuses to run under."""
    if not shutil.which("podman"):
        raise RouterlabError("podman is not installed: apt-get install podman (or build with docker, "
                             f"as {CONTAINERFILE}'s first lines say)")
    cmd = ["podman"]
    unified = Path("/sys/fs/cgroup/unified/cgroup.controllers")
    if unified.is_file() and unified.read_text().strip() and shutil.which("runc"):
        cmd += ["--runtime", "runc"]
    return cmd


def limits() -> list[str]:
    """``--ulimit`` options a container may start with here. Podman sets a container's
    open files to 1048576 and its processes to the caller's own limit by default, which
    the runtime fails to set where the caller may not raise limits (no CAP_SYS_RESOURCE):
    there, open files get this process's hard limit and processes Podman's usual 32768."""
    caps = next((line.split()[1] for line in Path("/proc/self/status").read_text().splitlines()
                 if line.startswith("CapEff:")), "0")
    if int(caps, 16) >> CAP_SYS_RESOURCE & 1:
        return []
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    limit = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    nproc = 32768 if limit == resource.RLIM_INFINITY else min(32768, limit)
    return ["--ulimit", f"nofile={hard}:{hard}", "--ulimit", f"nproc={nproc}:{nproc}"]


def exists(name: str) -> bool:
    """Whether Podman holds an image ``name`` locally."""
    return subprocess.run(podman() + ["image", "exists", name], capture_output=True).returncode == 0


def base(say: Callable[[str], None] = print, *, force: bool = False) -> None:
    """Make :data:`BASE` from Debian's packages (``mmdebstrap``, minbase variant, into a
    tarball imported under that name), unless Podman already holds it."""
    if exists(BASE) and not force:
        say(f"base image {BASE}: already here")
        return
    if not shutil.which("mmdebstrap"):
        raise RouterlabError(f"no {BASE} here and mmdebstrap is not installed to make it: "
                             f"apt-get install mmdebstrap, or podman pull {BASE}")
    with tempfile.TemporaryDirectory(prefix="rl-base-") as tmp:
        tar = Path(tmp) / "base.tar"
        say(f"base image {BASE}: made from Debian's packages (mmdebstrap {SUITE})")
        _run(["mmdebstrap", "--quiet", "--variant=minbase", "--include=ca-certificates", SUITE, str(tar),
              *MIRRORS], "mmdebstrap")
        _run(podman() + ["import", "--quiet", "--change", 'CMD ["bash"]', str(tar), BASE], "podman import")


def _pip_certificates() -> Path:
    """The certificate bundle pip uses here: ``$PIP_CERT``, pip's configured ``cert``, or
    certifi's (pip's own default)."""
    p = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.cert"], capture_output=True, text=True)
    for candidate in (os.environ.get("PIP_CERT"), p.stdout.strip() if p.returncode == 0 else None):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    try:
        import certifi
    except ImportError:  # pip's own copy of it
        from pip._vendor import certifi
    return Path(certifi.where())


def tag() -> str:
    """The image's version tag: routerlab's version with what a tag may not hold replaced."""
    v = version.installed_version()
    return re.sub(r"[^A-Za-z0-9_.-]", "-", v)[:128]


def stage(context: Path, say: Callable[[str], None] = print, bundle: Path | None = None) -> str:
    """Write the build's context into ``context``: the Containerfile, the package list,
    routerlab's wheel (built from the clone), the certificates pip trusts here, and
    ``engines.tar.gz``: ``bundle`` (an ``engines pack`` file holding the course engines)
    or else a bundle of the installed course engines. Returns the bundle's SHA-256."""
    root = version.repo_root()
    if root is None or not (root / CONTAINERFILE).is_file():
        raise RouterlabError(f"the course image is built from a clone of routerlab (its {CONTAINERFILE}); "
                             "this routerlab is installed from a package")
    if bundle is not None:
        _course_bundle(Path(bundle))
    context.mkdir(parents=True, exist_ok=True)
    for name in (CONTAINERFILE, PACKAGES):
        shutil.copy(root / name, context / Path(name).name)
    # pip in the build trusts what pip here does (a proxy's own authority, say)
    shutil.copy(_pip_certificates(), context / "ca-certificates.crt")
    say("routerlab's wheel: built from the clone")
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(context), str(root)],
         "pip wheel")
    out = context / "engines.tar.gz"
    if bundle is None:
        bundle = packed(say)
    shutil.copy(bundle, out)
    say(f"engines bundle: {bundle}")
    return builds.sha256(out)


def _course_bundle(bundle: Path) -> None:
    """Refuse, in one line naming the file, what is not an engines bundle holding the
    course engines."""
    import tarfile

    try:
        with tarfile.open(bundle) as tar:
            held = bundles.read_manifest(tar, bundle)["engines"]
    except (OSError, tarfile.TarError) as e:
        why = str(e).splitlines()[0].rstrip(":")  # tarfile lists each compression it tried
        raise RouterlabError(f"{bundle}: not an engines bundle (routerlab engines pack): {why}") from None
    lacking = [n for n in ENGINES if n not in held]
    if lacking:
        raise RouterlabError(f"{bundle}: holds no {', '.join(lacking)}; the course image needs {', '.join(ENGINES)}")


def packed(say: Callable[[str], None] = print) -> Path:
    """A bundle of the installed course engines, packed once per set of their builds and
    kept in the user cache: a pack's bytes differ each time (its date), and a new bundle
    would make the image's later layers again."""
    prefixes = [builds.installed(n) for n in ENGINES]
    if None in prefixes:
        lacking = [n for n, p in zip(ENGINES, prefixes) if p is None]
        raise RouterlabError(f"{', '.join(lacking)} not installed: run routerlab engines install {' '.join(ENGINES)}")
    out = cache.folder("image") / ("engines-" + "-".join(p.name for p in prefixes) + ".tar.gz")
    if out.is_file():
        say(f"engines bundle: {out} (packed before)")
        return out
    for old in out.parent.glob("engines-*.tar.gz"):  # of builds since replaced
        old.unlink()
    sha, size = bundles.pack(list(ENGINES), out, say)
    say(f"engines bundle: {', '.join(ENGINES)}, {size / 2**20:.0f} MiB")
    return out


def build(name: str | None = None, say: Callable[[str], None] = print, *, keep: Path | None = None,
          bundle: Path | None = None, no_cache: bool = False) -> str:
    """Build the course image: the base if missing (:func:`base`), the staged context
    (:func:`stage`, with ``bundle``), then ``podman build`` with the host's network (no
    bridge is made on the machine). Returns the image's name: ``name``, or by default
    :data:`IMAGE` with routerlab's version as its tag, and ``latest`` tagged too. ``keep``: stage into that folder and leave it, instead of a
    temporary one. ``no_cache``: no layer of an earlier build is reused (the base is)."""
    tags = ["--tag", name] if name else ["--tag", f"{IMAGE}:{tag()}", "--tag", f"{IMAGE}:latest"]
    name = name or f"{IMAGE}:{tag()}"
    base(say)
    with tempfile.TemporaryDirectory(prefix="rl-image-") as tmp:
        context = Path(keep) if keep else Path(tmp)
        sha = stage(context, say, bundle)
        say(f"podman build {name}")
        _run(podman() + ["build", "--network", "host", *limits(), *(["--no-cache"] if no_cache else []), "--file", str(context / CONTAINERFILE),
                         "--build-arg", f"ENGINES_SHA256={sha}", *tags, str(context)], "podman build", quiet=False)
    prune()
    return name


def size_mib(name: str) -> float:
    """The image ``name``'s size as Podman reports it (its layers unpacked), MiB."""
    p = subprocess.run(podman() + ["image", "inspect", "--format", "{{.Size}}", name], capture_output=True, text=True)
    if p.returncode:
        raise RouterlabError(f"podman image inspect {name}: {p.stderr.strip() or 'failed'}")
    return round(int(p.stdout.strip()) / 2**20, 1)


def remove(name: str) -> None:
    """Remove the image ``name`` (its tag) and what no tag then names (:func:`prune`)."""
    subprocess.run(podman() + ["rmi", "--force", name], capture_output=True)
    prune()


def prune() -> None:
    """Remove the course image's builds that no tag names any more (an earlier build's
    layers, replaced by this one's): only images of the Containerfile's label."""
    subprocess.run(podman() + ["image", "prune", "--force", "--filter", f"label={LABEL}"], capture_output=True)


def run(name: str, command: list[str], *, options: list[str] | None = None, user: str = USER,
        env: dict[str, str] | None = None, timeout: float | None = None) -> subprocess.CompletedProcess:
    """Run ``command`` in a new container of image ``name`` as ``user``, with no network
    and :func:`run_options` unless ``options`` are given; removed when it ends. Returns
    the finished process, its output captured as text."""
    opts = run_options() if options is None else options
    envs = [x for k, v in (env or {}).items() for x in ("--env", f"{k}={v}")]
    container = f"routerlab-course-{os.getpid()}-{next(_runs)}"
    try:
        return subprocess.run(podman() + ["run", "--rm", "--name", container, "--network", "none", *limits(), *opts,
                                          "--user", user, *envs, name, *command],
                              capture_output=True, text=True, timeout=timeout)
    finally:
        # a timeout or Ctrl-C kills the client, not the container it started
        subprocess.run(podman() + ["rm", "--force", "--ignore", container], capture_output=True)


def _run(cmd: list[str], what: str, quiet: bool = True) -> None:
    """Run ``cmd``; a failure raises in one line, with its last line of output (``quiet``:
    captured), or pointing to its output, which it printed."""
    p = subprocess.run(cmd, capture_output=quiet, text=True, env=dict(os.environ, BUILDAH_FORMAT="docker"))
    errors.check_exit(what, p.returncode, p.stderr if quiet else "its output is above", p.stdout)
