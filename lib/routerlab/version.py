"""Which routerlab is running: its version and, run from a clone, the clone's release and
commit (:func:`code_version`: what ``routerlab --version`` prints and every environment
record names first), the release it is or prepares (:func:`release`), the clone itself
(:func:`repo_root`), and the project's folders in a clone or bundled in the package
(:func:`project_dir`). It imports nothing heavy, so that ``routerlab --version`` answers as
fast as ``--help``.

A release is a git tag ``vX.Y.Z``; setuptools-scm makes the package's version from it when
the package is built (``[tool.setuptools_scm]`` in pyproject.toml), and CITATION.cff names
it (tests/test_packaging.py checks that they agree)."""

from __future__ import annotations

import functools
from pathlib import Path

from routerlab.errors import DataUnavailable, RouterlabError

#: The version of a routerlab imported from files pip never installed (``PYTHONPATH=lib``):
#: no metadata says which it is.
NOT_INSTALLED = "0+unknown"

#: The tags that name releases: ``v`` and the version (pyproject.toml's setuptools-scm
#: reads the same ones).
RELEASE_TAGS = "v[0-9]*"


@functools.cache
def installed_version() -> str:
    """The installed package's version, from its metadata (``importlib.metadata``), which
    setuptools-scm made from the git tag when the package was built: ``0.1.0`` built at the
    tag v0.1.0, ``0.1.0.post1.dev3+g1a2b3c4`` three commits after it. An editable install
    keeps the version of the day it was installed; :func:`code_version` reads a clone's
    own. :data:`NOT_INSTALLED` when routerlab was never installed."""
    from importlib import metadata

    try:
        return metadata.version("routerlab")
    except metadata.PackageNotFoundError:
        return NOT_INSTALLED


def code_version(checkout: Path | None = None) -> str:
    """The routerlab that is running, for every environment record: its version, and in a
    git checkout the last release tag its commit descends from and the commit (``0.1.0
    (git 22b989d)``), marked ``+ uncommitted changes`` when a file of the code that
    measures (``lib``, ``routers``, ``p4``) differs from it or is new, so that a dataset
    names the code that made it. A checkout with no release tag yet gives the installed
    version (:func:`installed_version`) in its place. Read once per process: the code a
    run imported, not a commit made while it ran.

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
        return installed_version()
    if shutil.which("git") is None:
        return f"{installed_version()} (a git checkout; no git to read its commit)"

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
        return f"{installed_version()} (a git checkout; its commit could not be read)"
    # the clone's own release: an editable install's metadata is as old as the install
    tag = git("describe", "--tags", "--abbrev=0", "--match", RELEASE_TAGS, "HEAD")
    version = tag.removeprefix("v") if tag else installed_version()
    changes = git("status", "--porcelain", "--untracked-files=all", "--", "lib", "routers", "p4")
    if changes is None:
        return f"{version} (git {head}; uncommitted changes unknown)"
    return f"{version} (git {head}{' + uncommitted changes' if changes else ''})"


def release() -> str:
    """The release this routerlab is, or is being prepared as (``0.1.0``): what the
    notebooks' Colab cell installs (the tag ``v`` + it). In a clone, CITATION.cff's
    ``version``, which is written before the release's tag can be made on the commit that
    holds it; installed, the release part of the installed version (the tag it was built
    at or after).

    Raises
    ------
    RouterlabError
        CITATION.cff without a version, or a routerlab never installed outside a clone.
    """
    import re

    root = repo_root()
    if root is not None and (root / "CITATION.cff").is_file():
        return citation_version(root)
    installed = installed_version()
    if installed == NOT_INSTALLED:
        raise RouterlabError("routerlab is neither installed nor in a clone: no release to name")
    return re.match(r"\d+(\.\d+)*", installed)[0]


def citation_version(root: Path) -> str:
    """The ``version`` of the clone at ``root``'s CITATION.cff: the release it is, or
    prepares (what :func:`release` gives in a clone; scripts/release.py reads it so too).

    Raises
    ------
    RouterlabError
        When it is not a release's number (X.Y.Z).
    """
    import re

    import yaml

    cff = Path(root) / "CITATION.cff"
    version = (yaml.safe_load(cff.read_text()) or {}).get("version")
    if not re.fullmatch(r"\d+(\.\d+)*", str(version or "")):
        raise RouterlabError(f"{cff}: version must be the release's number (X.Y.Z), got {version!r}")
    return str(version)


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
