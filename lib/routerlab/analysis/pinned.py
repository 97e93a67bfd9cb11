"""Files of another project, pinned by SHA-256 and downloaded on demand.

A reader of published data (PASTRAMI's, MoonRoute's) names what it reads in a registry
file of routerlab's (``data/<name>-registry.txt``): one file a line, its path in the
project's repository and its ``sha256:HEX``, then any field of the reader's own; ``#``
starts a comment line. The files are downloaded with pooch from the project's repository at
the pinned commit into the user cache, one folder per project and commit
(:func:`cache_dir`), each checked against its SHA-256; a failure is one line naming the
file and telling a download that failed from a file that is not the pinned one
(:func:`fetch`).
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from routerlab.errors import DataFormatError, DataUnavailable
from routerlab.progress import Progress, silent, Step

_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")


def registry_lines(name: str) -> list[list[str]]:
    """The pins of routerlab's registry file ``data/<name>`` (:func:`parse_registry`)."""
    text = resources.files("routerlab").joinpath(f"data/{name}").read_text()
    return parse_registry(text, f"lib/routerlab/data/{name}")


def parse_registry(text: str, source: str) -> list[list[str]]:
    """The pins of a registry's ``text``: one list of fields per line (the file's path,
    ``sha256:HEX``, then the reader's own fields, if any), blank lines and ``#`` comment
    lines skipped. ``source`` names the registry in errors.

    Raises
    ------
    DataFormatError
        Naming the registry and line, for a line without a path and a SHA-256.
    """
    pins = []
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) < 2 or not _SHA256.fullmatch(fields[1]):
            raise DataFormatError(source, number, "expected a path and its sha256:<64 hex digits>")
        pins.append(fields)
    return pins


def cache_dir(project: str, commit: str) -> Path:
    """The folder of the user cache (pooch's, under ``routerlab``) that holds the files of
    ``project`` at ``commit``: one per commit, so that a new pin never mixes with an old
    one's files."""
    import pooch

    return Path(pooch.os_cache("routerlab")) / f"{project}-{commit[:12]}"


def sha256(path: Path) -> str:
    """The SHA-256 (hex) of the file at ``path``, read in blocks (an archive or a tarball
    need not fit in memory twice)."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def missing(files, folder: Path) -> list[str]:
    """The files (paths relative to ``folder``) that ``folder`` does not hold, in the
    order given."""
    return [f for f in files if not (Path(folder) / f).is_file()]


def _failure(name: str, e: Exception, *, what: str, where: str, env_dir: str) -> DataUnavailable:
    """One line for a file that could not be downloaded: pooch's hash check refused it (a
    ValueError saying so), or the download itself failed (offline, no answer, not found)."""
    if isinstance(e, ValueError) and "hash" in str(e).lower():
        return DataUnavailable(f"{what}: {name} from {where} is not the file pinned in routerlab's registry "
                               f"(its SHA-256 differs); set {env_dir} to a good copy")
    return DataUnavailable(f"{what}: cannot download {name} from {where} ({type(e).__name__}); "
                           f"offline? set {env_dir} to a local copy")


def fetch(pins: dict[str, str], base_url: str, cache: Path, *, what: str, where: str, env_dir: str,
          progress: Progress = silent) -> Path:
    """Download into ``cache`` each file of ``pins`` (path -> ``sha256:HEX``, in the
    order to fetch them) that it does not hold yet, from ``base_url`` + its path, each
    checked against its SHA-256; the first that fails stops the download, those before it
    stay. ``progress`` is told the files to fetch (``what``, 0 of them done), then each as
    it arrives.

    ``what`` starts every error (``"PASTRAMI data"``), ``where`` names the repository and
    commit (``"netgroup/pastrami@c4a152c"``), ``env_dir`` the variable that names a local
    copy instead.

    Raises
    ------
    DataUnavailable
        In one line naming the file: it could not be downloaded, or it is not the file
        pinned (its SHA-256 differs; pooch deletes it).
    """
    import pooch

    pup = pooch.create(path=cache, base_url=base_url, registry=dict(pins), retry_if_failed=1)
    todo = missing(pins, cache)
    if todo:
        progress(Step(f"fetching {what}", 0, len(todo)))
    for i, f in enumerate(todo):
        try:
            pup.fetch(f, downloader=pooch.HTTPDownloader(timeout=30, progressbar=False))
        except Exception as e:  # noqa: BLE001 - any failure of the download becomes one line
            raise _failure(f, e, what=what, where=where, env_dir=env_dir) from None
        progress(Step(f"fetching {what}", i + 1, len(todo)))
    return cache
