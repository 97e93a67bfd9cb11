"""`make release`: the sdist and wheel of this clone, built and checked as a release.

1. HEAD is the release: tagged vX.Y.Z, where X.Y.Z is CITATION.cff's version, with no
   uncommitted changes and no untracked file where the package takes its files
   (``--snapshot`` checks a development build instead); and every notebook is of that
   release: its first cell installs the tag, its Colab badge opens the notebook at it.
2. ``python -m build``: the sdist, then the wheel built from it.
3. ``twine check --strict``: the metadata and the long description (README.md) render.
4. Each one's metadata: its name, the release's version, its licence (Apache-2.0 AND
   GPL-2.0-only) and the licence files, the text of every licence it names among them,
   Markdown as the description's type (:func:`metadata_problems`).
5. A fresh virtual environment with the wheel installed (not editable, nothing of this
   clone): ``routerlab --version`` names the version, the bundled notebooks' Colab cell
   installs the release's tag, and ``routerlab figures --only NOTEBOOK`` replays a
   notebook there, as tests/test_install.py has every notebook replay.

Everything is made in one temporary folder, removed at the end whatever happens
(failure, Ctrl-C, SIGTERM); the sdist and wheel are copied to ``dist/`` only when every
check passed. Run as ``.venv/bin/python scripts/release.py [--snapshot] [--notebook NAME]``;
build and twine are pyproject.toml's ``release`` extra, installed first when missing.

``.venv/bin/python scripts/release.py prepare`` comes before the release's commit: it
rewrites every notebook's Colab cell and badge, and the Colab links of docs/notebooks.md,
for CITATION.cff's version (:func:`prepare`).
"""

from __future__ import annotations

import argparse
import email.parser
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# this clone's routerlab (its notebooks, its CITATION.cff), whichever one the Python
# running this script has installed; put first on the path only when it is another's, as
# that path also finds lib/'s build metadata before the installed package's
_found = importlib.util.find_spec("routerlab")
if _found is None or Path(_found.origin).resolve().parent != ROOT / "lib" / "routerlab":
    sys.path.insert(0, str(ROOT / "lib"))

from routerlab.errors import RouterlabError  # noqa: E402
from routerlab.processes import signal_group  # noqa: E402
from routerlab.version import RELEASE_TAGS, citation_version  # noqa: E402

#: The licence every distribution of routerlab names (its SPDX identifier), and the files
#: it carries.
LICENSE = "Apache-2.0"
LICENSE_FILES = ("LICENSE", "NOTICE", "LICENSES/GPL-2.0-only.txt")

#: Where each licence a distribution's License-Expression may name has its text (one of
#: :data:`LICENSE_FILES`): the eBPF programs of lib/routerlab/bpf are GPL-2.0-only (NOTICE).
LICENCE_TEXTS = {"Apache-2.0": "LICENSE", "GPL-2.0-only": "LICENSES/GPL-2.0-only.txt"}

#: What a distribution takes its files from beyond the bundled folders
#: (routerlab.analysis.datasets.BUNDLED): an untracked file there would ship in it.
PACKAGED = ("lib", "README.md", "pyproject.toml", "setup.py", "MANIFEST.in", *LICENSE_FILES)

#: The hand-written page whose Colab links :func:`prepare` rewrites (README.md and
#: docs/gallery.md are routerlab gallery's).
COLAB_PAGES = ("docs/notebooks.md",)

#: The notebook replayed from the installed wheel: synthetic, so it needs no download.
NOTEBOOK = "pastrami-methodology"


class ReleaseError(Exception):
    """A check failed: the message says which and how to fix it."""


def run(cmd: list, **kw) -> subprocess.CompletedProcess:
    """Run ``cmd`` in a session of its own; a failure raises :class:`ReleaseError` with the
    end of its output. Interrupted (Ctrl-C, SIGTERM), it ends with everything it started."""
    cmd = [str(c) for c in cmd]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                          **kw) as p:
        try:
            out, err = p.communicate()
        except BaseException:
            # pip's builds and the notebook's kernel are the command's children: all go
            signal_group(p.pid, signal.SIGKILL)
            raise
    if p.returncode != 0:
        raise ReleaseError(f"{' '.join(cmd[:4])} ... failed ({p.returncode}):\n{(out + err)[-3000:]}")
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def cff_version(root: Path | None = None) -> str:
    """CITATION.cff's version (of the clone at ``root``, default this one): the release
    this tree is, or prepares (routerlab.version.citation_version, as the notebooks' Colab
    cell reads it)."""
    try:
        return citation_version(root or ROOT)
    except RouterlabError as e:
        raise ReleaseError(str(e)) from None


def bundled() -> tuple:
    """The folders setup.py bundles into the package (tests/test_packaging.py checks that
    setup.py's are routerlab.analysis.datasets.BUNDLED)."""
    from routerlab.analysis.datasets import BUNDLED

    return BUNDLED


def head_problems(release: str, root: Path | None = None) -> list[str]:
    """Why HEAD of the clone at ``root`` (default this one) is not release ``release``: no
    tag ``v<release>`` on it, uncommitted changes, or untracked files (not ignored ones)
    where the package takes its files (:data:`PACKAGED`, :func:`bundled`), named; each a
    sentence saying what to do. Empty when it is."""
    git = ["git", "-C", str(root or ROOT)]
    tags = run([*git, "tag", "--points-at", "HEAD", "--list", RELEASE_TAGS]).stdout.split()
    problems = []
    if f"v{release}" not in tags:
        problems.append(f"HEAD is not tagged v{release} (CITATION.cff's version; it has "
                        f"{', '.join(tags) or 'no release tag'}): commit the release, then git tag v{release}")
    if run([*git, "status", "--porcelain", "--untracked-files=no"]).stdout.strip():
        problems.append("the clone has uncommitted changes, which a release built from it would hold "
                        "but its tag would not")
    # MANIFEST.in grafts the bundled folders and setup.py copies them whole: an untracked
    # file there (ignored ones are left out) would ship in the release's sdist and wheel
    status = run([*git, "status", "--porcelain", "-z", "--untracked-files=all", "--", *PACKAGED, *bundled()]).stdout
    untracked = sorted(entry[3:] for entry in status.split("\0") if entry.startswith("?? "))
    if untracked:
        shown = ", ".join(untracked[:10]) + (f" and {len(untracked) - 10} more" if len(untracked) > 10 else "")
        problems.append(f"untracked files where the package takes its files, which the release would ship but "
                        f"its tag not hold: {shown} (commit them, remove them, or name them in .gitignore)")
    return problems


def notebook_problems(release: str, root: Path | None = None) -> list[str]:
    """Why a notebook of the clone at ``root`` (default this one) is not of release
    ``release``: its Colab cell installs another release, or its badge opens another
    (routerlab.publish.notebooks.release_problems); each a sentence, with the command
    that rewrites them."""
    from routerlab.publish import notebooks

    problems = [p for nb in notebooks.list_notebooks((root or ROOT) / "notebooks")
                for p in notebooks.release_problems(nb, release)]
    if problems:
        problems.append(f"run .venv/bin/python scripts/release.py prepare (CITATION.cff's version, {release})")
    return problems


def prepare(root: Path | None = None) -> list[Path]:
    """Make the clone at ``root`` (default this one) say CITATION.cff's release: every
    notebook's Colab cell installs its tag and its badge opens the notebook at it
    (routerlab.publish.notebooks.refresh_bootstrap), and so do the Colab links of
    :data:`COLAB_PAGES`. The files changed are returned; README.md's gallery table and
    docs/gallery.md are then `routerlab gallery`'s to redraw."""
    from routerlab.publish import notebooks

    root = root or ROOT
    release = cff_version(root)
    changed = [nb for nb in notebooks.list_notebooks(root / "notebooks") if notebooks.refresh_bootstrap(nb, release)]
    for page in COLAB_PAGES:
        path = root / page
        if path.is_file():
            text = path.read_text()
            new = notebooks.with_colab_links(text, release)
            if new != text:
                path.write_text(new)
                changed.append(path)
    return changed


def read_metadata(dist: Path) -> email.message.Message:
    """The core metadata of a wheel (``*.dist-info/METADATA``) or sdist (``PKG-INFO``)."""
    if dist.suffix == ".whl":
        with zipfile.ZipFile(dist) as z:
            (name,) = [n for n in z.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
            text = z.read(name).decode()
    else:
        with tarfile.open(dist) as t:
            (member,) = [m for m in t.getmembers() if re.fullmatch(r"[^/]+/PKG-INFO", m.name)]
            text = t.extractfile(member).read().decode()
    return email.parser.Parser().parsestr(text)


def licence_files_in(dist: Path) -> set[str]:
    """The licence files a distribution carries, by their path in the project
    (``LICENSES/GPL-2.0-only.txt``): a wheel's under ``*.dist-info/licenses/``, an sdist's
    under its top folder."""
    if dist.suffix == ".whl":
        with zipfile.ZipFile(dist) as z:
            names = z.namelist()
        return {m[1] for n in names if (m := re.fullmatch(r"[^/]+\.dist-info/licenses/(.+)", n))}
    with tarfile.open(dist) as t:
        names = [m.name for m in t.getmembers() if m.isfile()]
    return {n.split("/", 1)[1] for n in names if n.split("/", 1)[-1] in LICENSE_FILES}


def metadata_problems(dist: Path, version: str | None = None) -> list[str]:
    """What is wrong with a wheel's or sdist's metadata, one sentence each (empty: nothing):
    not routerlab, not ``version`` (when given), no ``License-Expression`` naming
    :data:`LICENSE`, a licence in it whose text (:data:`LICENCE_TEXTS`) it does not carry,
    a licence file of :data:`LICENSE_FILES` not named or not carried, a description that
    is not Markdown."""
    meta = read_metadata(dist)
    problems = []
    if meta["Name"] != "routerlab":
        problems.append(f"{dist.name}: Name is {meta['Name']!r}, not routerlab")
    if version is not None and meta["Version"] != version:
        problems.append(f"{dist.name}: Version is {meta['Version']!r}, not the release's {version!r}")
    expression = meta["License-Expression"] or ""
    if LICENSE not in re.split(r"[\s()]+", expression):
        problems.append(f"{dist.name}: License-Expression is {expression!r}, which does not name {LICENSE} "
                        "(pyproject.toml's license)")
    named, carried = set(meta.get_all("License-File") or []), licence_files_in(dist)
    for licence in sorted(set(re.split(r"[\s()]+", expression)) - {"AND", "OR", "WITH", ""}):
        if LICENCE_TEXTS.get(licence) not in carried:
            problems.append(f"{dist.name}: License-Expression names {licence}, whose text it does not carry "
                            f"({LICENCE_TEXTS.get(licence) or 'routerlab keeps no text of it'})")
    for f in LICENSE_FILES:
        if f not in named:
            problems.append(f"{dist.name}: its metadata names no License-File {f} (pyproject.toml's license-files)")
        if f not in carried:
            problems.append(f"{dist.name}: does not carry {f}")
    if meta["Description-Content-Type"] != "text/markdown":
        problems.append(f"{dist.name}: Description-Content-Type is {meta['Description-Content-Type']!r}, "
                        "not text/markdown (README.md)")
    return problems


def ensure_tools():
    """build and twine in this Python (pyproject.toml's ``release`` extra), installed when missing."""
    if all(importlib.util.find_spec(m) for m in ("build", "twine")):
        return
    reqs = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["release"]
    print(f"release: installing {', '.join(reqs)} (pyproject.toml's release extra)", flush=True)
    run([sys.executable, "-m", "pip", "install", "-q", *reqs])


def clean_env(venv: Path) -> dict:
    """The environment of a user's shell with ``venv`` active: nothing of this clone's
    (with lib/ on PYTHONPATH pip would take routerlab for installed), as in tests/test_install.py."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ROUTERLAB_", "VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = f"{venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"
    return env


def replay_from_wheel(wheel: Path, version: str, release: str, notebook: str, tmp: Path):
    """Install ``wheel`` into a fresh venv in ``tmp`` and check it as a user gets it: its
    version, its notebooks' Colab cell (installing the tag ``v<release>``), and
    ``routerlab figures --only notebook`` from an empty folder."""
    venv, work = tmp / "venv", tmp / "work"
    run([sys.executable, "-m", "venv", venv])
    env = clean_env(venv)
    print(f"release: installing {wheel.name} into a fresh venv", flush=True)
    run([venv / "bin" / "python", "-m", "pip", "install", "-q", wheel], env=env)
    work.mkdir()
    said = run([venv / "bin" / "routerlab", "--version"], env=env, cwd=work).stdout.strip()
    if said != f"routerlab {version}":
        raise ReleaseError(f"the installed wheel says {said!r}, not 'routerlab {version}'")
    cell = run([venv / "bin" / "python", "-c", "import json, routerlab.publish.notebooks as n; "
                f"print(''.join(json.load(open(n.notebooks_dir() / '{notebook}.ipynb'))['cells'][0]['source']))"],
               env=env, cwd=work).stdout
    if f"@v{release}\"" not in cell:
        raise ReleaseError(f"the wheel's {notebook}.ipynb does not install v{release} in Colab: run "
                           ".venv/bin/python scripts/release.py prepare\n" + cell)
    print(f"release: replaying {notebook} from the installed wheel", flush=True)
    run([venv / "bin" / "routerlab", "figures", "--only", notebook, "--out", work / "figures"], env=env, cwd=work)
    if not list((work / "figures" / notebook).glob("*.png")):
        raise ReleaseError(f"routerlab figures --only {notebook} drew no figure from the installed wheel")


def release(*, snapshot: bool = False, notebook: str = NOTEBOOK, dist_dir: Path | None = None) -> list[Path]:
    """Build, check and replay (the module's steps); the sdist and wheel copied into
    ``dist_dir`` (default: the clone's ``dist/``), their paths returned. ``snapshot``: a
    development build of whatever HEAD and the tree hold, its version not checked against
    CITATION.cff's."""
    dist_dir = dist_dir or ROOT / "dist"
    release_version = cff_version()
    if not snapshot:
        problems = head_problems(release_version)
        if problems:
            raise ReleaseError("not a release: " + "; ".join(problems) + " (--snapshot checks a development build)")
    problems = notebook_problems(release_version)
    if problems:
        raise ReleaseError(f"the notebooks are not of release {release_version}: " + "; ".join(problems))
    ensure_tools()
    tmp = Path(tempfile.mkdtemp(prefix="routerlab-release-"))
    try:
        out = tmp / "dist"
        print("release: building the sdist and, from it, the wheel", flush=True)
        # run from the temporary folder: from the clone, its build/ folder would shadow the build module
        run([sys.executable, "-m", "build", "--outdir", out, ROOT], cwd=tmp)
        (sdist,), (wheel,) = sorted(out.glob("*.tar.gz")), sorted(out.glob("*.whl"))
        run([sys.executable, "-m", "twine", "check", "--strict", sdist, wheel], cwd=tmp)
        version = read_metadata(wheel)["Version"]
        expected = None if snapshot else release_version
        problems = metadata_problems(sdist, expected) + metadata_problems(wheel, expected)
        if read_metadata(sdist)["Version"] != version:
            problems.append(f"the sdist's version {read_metadata(sdist)['Version']} is not the wheel's {version}")
        if problems:
            raise ReleaseError("\n".join(problems))
        replay_from_wheel(wheel, version, release_version, notebook, tmp)
        dist_dir.mkdir(exist_ok=True)
        kept = [Path(shutil.copy2(f, dist_dir / f.name)) for f in (sdist, wheel)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("step", nargs="?", choices=["prepare"],
                        help="prepare: before the release's commit, make every notebook's Colab cell and badge "
                             "(and docs/notebooks.md's Colab links) name CITATION.cff's version; build nothing")
    parser.add_argument("--snapshot", action="store_true",
                        help="check a development build: HEAD need not be the tagged release")
    parser.add_argument("--notebook", default=NOTEBOOK, help="the notebook replayed from the installed wheel")
    args = parser.parse_args(argv)

    def terminated(signum, frame):
        # SIGTERM ends the run as Ctrl-C does: through `finally`, which removes the temporary folder
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, terminated)
    if args.step == "prepare":
        try:
            changed = prepare()
        except (ReleaseError, RouterlabError) as e:
            print(f"release: {e}", file=sys.stderr)
            return 1
        for f in changed:
            print(f"release: rewritten {f.relative_to(ROOT)}")
        print(f"release: every notebook installs and opens v{cff_version()}"
              + ("" if changed else " already") + "; then run routerlab gallery (README.md, docs/gallery.md)")
        return 0
    try:
        kept = release(snapshot=args.snapshot, notebook=args.notebook)
    except (ReleaseError, RouterlabError) as e:
        print(f"release: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("release: interrupted; its temporary folder is removed, dist/ untouched", file=sys.stderr)
        return 130
    for f in kept:
        print(f"release: {f.relative_to(ROOT) if f.is_relative_to(ROOT) else f}")
    print("release: built and checked" + (" (a development build)" if args.snapshot else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
