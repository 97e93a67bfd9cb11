"""Which routerlab is running: its version and, run from a clone, the clone's commit
(:func:`code_version`: what ``routerlab --version`` prints and every environment record
names first), the clone itself (:func:`repo_root`), and the project's folders in a clone or
bundled in the package (:func:`project_dir`). It imports nothing heavy, so that
``routerlab --version`` answers as fast as ``--help``."""

from __future__ import annotations

import functools
from pathlib import Path

from routerlab import __version__
from routerlab.errors import DataUnavailable


def code_version(checkout: Path | None = None) -> str:
    """The routerlab that is running, for every environment record: its version, and in a
    git checkout the commit (``0.1.0 (git 22b989d)``), marked ``+ uncommitted changes``
    when a file of the code that measures (``lib``, ``routers``, ``p4``) differs from it or
    is new, so that a dataset names the code that made it. Read once per process: the code
    a run imported, not a commit made while it ran.

    ``checkout``: the clone to read (default: the one this package is installed from,
    :func:`repo_root`; a package installed from PyPI or a wheel has none and gives its
    version alone). Where git cannot tell (missing, too slow, refusing the folder), it
    says so rather than guess."""
    if checkout is None:
        return _running_code_version()
    return _read_code_version(Path(checkout))


@functools.cache
def _running_code_version() -> str:
    return _read_code_version(repo_root())


def _read_code_version(root: Path | None) -> str:
    import shutil
    import subprocess

    if root is None or not (root / ".git").exists():
        return __version__
    if shutil.which("git") is None:
        return f"{__version__} (a git checkout; no git to read its commit)"

    def git(*args) -> str | None:
        # safe.directory: root may read a checkout of another user's (git refuses it otherwise);
        # --no-optional-locks: never take the index lock from under a user's own git command
        try:
            r = subprocess.run(["git", "--no-optional-locks", "-c", f"safe.directory={root}", "-C", str(root), *args],
                               capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return r.stdout.strip() if r.returncode == 0 else None

    head = git("rev-parse", "--short=7", "HEAD")
    if not head:
        return f"{__version__} (a git checkout; its commit could not be read)"
    changes = git("status", "--porcelain", "--untracked-files=all", "--", "lib", "routers", "p4")
    if changes is None:
        return f"{__version__} (git {head}; uncommitted changes unknown)"
    return f"{__version__} (git {head}{' + uncommitted changes' if changes else ''})"


def repo_root() -> Path | None:
    """The project checkout this package was installed from (editable install), if any."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        # the checkout whose lib/routerlab is this very package, not any project above a venv
        if (parent / "pyproject.toml").is_file() and (parent / "lib" / "routerlab") == here.parent:
            return parent
    return None

def project_dir(name: str) -> Path:
    """One of the project's folders (``datasets``, ``notebooks``, ``routers``, ``p4``).

    In a clone (an editable install) the clone's own folder, so that an edit there takes
    effect; in a pip-installed routerlab (Colab, a course) the copy bundled in the package
    at build time. Both are read-only inputs: measurements go to folders the user names."""
    root = repo_root()
    if root is not None and (root / name).is_dir():
        return root / name
    from importlib import resources

    bundled = Path(str(resources.files("routerlab"))) / "_bundle" / name
    if bundled.is_dir():
        return bundled
    raise DataUnavailable(f"{name}/ not found: neither in a clone nor bundled in this routerlab package "
                          f"({bundled.parent}); reinstall routerlab from its repository")
