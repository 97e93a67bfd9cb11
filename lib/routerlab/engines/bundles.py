"""Engine bundles: the engines ``routerlab engines install`` built, packed once into one
file (``routerlab engines pack``) and installed from it anywhere in seconds
(``routerlab engines install --from FILE|URL``).

A bundle is a gzip'd tar: ``routerlab-bundle.json`` first (the manifest), then each
engine's prefix under its key. The manifest names, per engine, its pin (repository,
commit) and recipe key, the prefix it was built in, the Debian packages its binaries'
shared libraries come from, and every file with its SHA-256 and mode (symbolic links with
their target); and once, the platform it was built on (Debian release, architecture,
glibc). Binaries and shared libraries are stripped; build folders and the compiler cache
are not in it.

Installing checks the bundle's hash (``--sha256``), its platform, and every file against
the manifest while unpacking into a staging folder, and moves each engine into place only
then, under its own key, as a source build does: an interrupted install leaves nothing
that counts as installed. It is relocated on the way: absolute library search paths
become relative to each binary (``$ORIGIN``, with patchelf) and text files that name the
build's prefix (scripts, ``click-buildtool``, ``simple_switch_CLI``, libtool files) name the
new one. p4c finds its include files relative to its binary (``<prefix>/p4include``).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
import zlib
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from routerlab.errors import RouterlabError
from routerlab.engines import builds

#: The manifest's name in a bundle, and the version of its format.
MANIFEST = "routerlab-bundle.json"
FORMAT = 1
#: Where ``install --from URL`` keeps what it downloaded.
DOWNLOADS = ".bundles"
#: A folder of bundles (each beside its ``.sha256``) that ``routerlab engines install``
#: takes an engine from before building it (:func:`from_folder`).
FOLDER_VAR = "ROUTERLAB_ENGINE_BUNDLES"


@dataclass(frozen=True)
class Platform:
    """What a build runs on: the Debian (or Ubuntu) release, the architecture, glibc."""

    os: str
    release: str
    arch: str
    glibc: str

    @classmethod
    def here(cls) -> "Platform":
        fields = {}
        for line in Path("/etc/os-release").read_text().splitlines():
            k, _, v = line.partition("=")
            fields[k] = v.strip().strip('"')
        arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True).stdout.strip() \
            if shutil.which("dpkg") else os.uname().machine
        return cls(fields.get("ID", "?"), fields.get("VERSION_ID", "?"), arch,
                   os.confstr("CS_GNU_LIBC_VERSION").split()[-1])

    def __str__(self) -> str:
        return f"{self.os} {self.release} {self.arch} (glibc {self.glibc})"


def _is_elf(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def _elf_kind(path: Path) -> str:
    """``exec`` or ``dyn`` (executables and shared libraries, which strip and patchelf
    take), or ``other`` (objects, archives' members are not ELF files)."""
    with open(path, "rb") as f:
        head = f.read(18)
    return {2: "exec", 3: "dyn"}.get(int.from_bytes(head[16:18], "little"), "other")


def _packages(elfs: list[Path], prefixes: tuple[Path, ...]) -> list[str]:
    """The Debian packages the shared libraries of ``elfs`` come from (``ldd``, then
    ``dpkg -S``), leaving out the engine's own libraries (inside any of ``prefixes``)."""
    libs = set()
    own = [p.resolve() for p in prefixes]
    for f in elfs:
        out = subprocess.run(["ldd", str(f)], capture_output=True, text=True).stdout
        gone = re.findall(r"^\s*(\S+) => not found", out, re.M)
        if gone:
            raise RouterlabError(f"{f.name} needs {', '.join(gone)}, which this machine does not have: "
                                 "a bundle of it would not run")
        for m in re.finditer(r"=>\s+(/\S+)", out):
            lib = Path(m.group(1))
            if not any(lib.resolve().is_relative_to(o) for o in own):
                libs.add(str(lib))
    if not libs or not shutil.which("dpkg"):
        return []
    pkgs, unowned = set(), []
    for lib in sorted(libs):
        # a merged /usr: dpkg may know the library under the other of its two paths
        alt = lib[4:] if lib.startswith("/usr/") else "/usr" + lib
        for path in (lib, alt, str(Path(lib).resolve())):
            p = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
            if p.returncode == 0:
                pkgs.add(p.stdout.split(":")[0].split(",")[0].strip())
                break
        else:
            unowned.append(lib)
    if unowned:
        raise RouterlabError(f"no Debian package owns {', '.join(unowned)}: a bundle could not say how to get them")
    return sorted(pkgs)


#: Libraries that load others at run time, which ``ldd`` cannot see: DPDK's EAL loads its
#: drivers from its PMD folder (dlopen); fastclick-dpdk binds the testbed's veth links with
#: the af_xdp one and keeps its packets in the ring mempool's (without it: "Could not
#: allocate packet MBuf pools ... error 22"). A package matching a key (its version suffix
#: kept) brings those.
LOADED_AT_RUN_TIME = {r"librte-eal(\d+)": ("librte-net-af-xdp{0}", "librte-mempool-ring{0}")}


def with_loaded(packages) -> list[str]:
    """``packages`` and those their libraries load at run time (:data:`LOADED_AT_RUN_TIME`),
    sorted: what a machine needs for the engines to run as where they were built."""
    out = set(packages)
    for p in packages:
        for pattern, loaded in LOADED_AT_RUN_TIME.items():
            m = re.fullmatch(pattern, p)
            if m:
                out.update(name.format(*m.groups()) for name in loaded)
    return sorted(out)


def _inside(rel: str, link: str) -> bool:
    """Whether the link ``rel`` -> ``link`` (both relative to an engine's prefix) stays
    inside it."""
    if os.path.isabs(link):
        return False
    return not os.path.normpath(os.path.join(os.path.dirname(rel), link)).startswith("..")


def _files(tree: Path) -> dict[str, dict]:
    """Every file and link of ``tree`` (the marker left out): relative path -> sha256 and
    mode, or link target. A link out of the tree (Click's ``share/click/src`` into its
    build folder, gone after the build) is removed: a bundle holds only its own files."""
    out = {}
    for p in sorted(tree.rglob("*")):
        rel = str(p.relative_to(tree))
        if rel == builds.MARKER:
            continue
        if p.is_symlink():
            if not _inside(rel, os.readlink(p)):
                p.unlink()
                continue
            out[rel] = {"link": os.readlink(p)}
        elif p.is_file():
            out[rel] = {"sha256": builds.sha256(p), "mode": p.stat().st_mode & 0o7777}
    return out


def pack(names: list[str], out: Path, say: Callable[[str], None] = lambda line: None) -> tuple[str, int]:
    """Write one bundle of the installed engines ``names`` to ``out``; return its SHA-256
    and size in bytes. An engine not installed from its current pin is refused."""
    out = Path(out)
    names = list(dict.fromkeys(names))
    plat = Platform.here()
    manifest = {"format": FORMAT, "platform": asdict(plat), "engines": {},
                "packed": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    with tempfile.TemporaryDirectory(prefix="rl-pack-", dir=out.parent if out.parent.is_dir() else None) as tmp:
        stage = Path(tmp)
        for n in names:
            prefix = builds.installed(n)
            if prefix is None:
                raise RouterlabError(f"{n}: not installed from its pin; run: routerlab engines install {n}")
            record = json.loads((prefix / builds.MARKER).read_text())
            if record.get("engine") != n or record.get("key", prefix.name) != prefix.name:
                raise RouterlabError(f"{prefix / builds.MARKER} says engine {record.get('engine')!r}, key "
                                     f"{record.get('key')!r}: not {n} in {prefix.name}; reinstall it")
            copy = stage / prefix.name
            shutil.copytree(prefix, copy, symlinks=True)
            # an engine installed from a bundle is packed as it was built: a bundle of it
            # then installs as the first did (its programs unwrapped, its build's folder named)
            built_in = (record.get("bundle") or {}).get("built_in") or str(prefix)
            _unrelocate(copy, Path(built_in), prefix)
            elfs = [p for p in copy.rglob("*") if p.is_file() and not p.is_symlink() and _is_elf(p)]
            for p in elfs:
                if _elf_kind(p) in ("exec", "dyn"):
                    subprocess.run(["strip", "--strip-unneeded", str(p)], capture_output=True)
            say(f"{n}: {prefix.name}, {len(elfs)} binaries and libraries stripped")
            manifest["engines"][n] = {
                "key": prefix.name, "repository": record["repository"], "commit": record["commit"],
                "source_sha256": record["sha256"], "built": record["built"], "prefix": built_in,
                "packages": with_loaded(set(_packages([p for p in elfs if _elf_kind(p) in ("exec", "dyn")], (copy, prefix)))
                                   | set(builds.recipe(n).runtime)),
                "relocate_env": builds.recipe(n).relocate_env,
                "files": _files(copy),
            }
        part = out.with_name(out.name + ".part")
        try:
            with tarfile.open(part, "w:gz", compresslevel=6) as tar:
                blob = json.dumps(manifest, indent=1).encode()
                info = tarfile.TarInfo(MANIFEST)
                info.size, info.mtime = len(blob), int(time.time())
                tar.addfile(info, io.BytesIO(blob))
                for n, m in manifest["engines"].items():
                    tar.add(stage / m["key"], arcname=m["key"], filter=_without_marker)
            os.replace(part, out)
        finally:
            part.unlink(missing_ok=True)
    return builds.sha256(out), out.stat().st_size


def _without_marker(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return None if info.name.endswith("/" + builds.MARKER) else info


def _fetch(source: str, say: Callable[[str], None]) -> tuple[Path, str]:
    """The bundle as a local file: ``source`` itself, or downloaded from a URL."""
    if re.match(r"^[a-z]+://", source):
        name = re.sub(r"[^\w.-]", "_", source.rstrip("/").rsplit("/", 1)[-1]) or "bundle.tar.gz"
        path = builds.engines_dir() / DOWNLOADS / name
        path.parent.mkdir(parents=True, exist_ok=True)
        say(f"downloading {source}")
        part = path.with_name(path.name + ".part")
        try:
            builds._download(source, part, "check the address, or download it yourself and give the file")
        except RouterlabError as e:
            raise RouterlabError(str(e).replace("could not download", "cannot reach")) from None
        os.replace(part, path)
        return path, source
    path = Path(source).expanduser()
    if not path.is_file():
        raise RouterlabError(f"--from {source}: no such file")
    return path, str(path.resolve())


def read_manifest(tar: tarfile.TarFile, path: Path) -> dict:
    """The manifest of an open bundle, checked for its format."""
    try:
        first = tar.next()
        if first is None or first.name != MANIFEST:
            raise RouterlabError(f"{path}: not a routerlab engine bundle (it does not start with {MANIFEST})")
        manifest = json.loads(tar.extractfile(first).read())
    except (EOFError, zlib.error, tarfile.ReadError) as e:
        raise RouterlabError(f"{path}: truncated or corrupted ({type(e).__name__}: {e}): nothing installed") from None
    except (json.JSONDecodeError, tarfile.TarError, OSError, AttributeError) as e:
        raise RouterlabError(f"{path}: not a routerlab engine bundle (no readable {MANIFEST}: {e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise RouterlabError(f"{path}: a bundle of format {manifest.get('format') if isinstance(manifest, dict) else None!r}; "
                             f"this routerlab reads {FORMAT}")
    _check_manifest(manifest, path)
    return manifest


#: What a manifest's engine entry holds, and of what type.
ENTRY = {"key": str, "repository": str, "commit": str, "source_sha256": str, "built": str, "prefix": str,
         "packages": list, "relocate_env": dict, "files": dict}


def _check_manifest(m: dict, path: Path) -> None:
    """Refuse a manifest that is not what :func:`pack` writes, naming the bundle and the
    field: an install trusts nothing it has not checked."""
    def bad(what):
        raise RouterlabError(f"{path}: its {MANIFEST} is not valid: {what}")

    plat = m.get("platform")
    if not isinstance(plat, dict) or set(plat) != {"os", "release", "arch", "glibc"}:
        bad("platform")
    if not isinstance(m.get("engines"), dict) or not m["engines"]:
        bad("engines")
    known = builds.recipes()
    for n, e in m["engines"].items():
        if n not in known:
            bad(f"engine {n!r} is none of {', '.join(known)}")
        if not isinstance(e, dict) or set(e) != set(ENTRY) or not all(isinstance(e[k], t) for k, t in ENTRY.items()):
            bad(f"engine {n}: its fields")
        if not re.fullmatch(rf"{re.escape(n)}-{re.escape(e['commit'][:12])}-[0-9a-f]{{8}}", e["key"]) \
                or not re.fullmatch(r"[0-9a-f]{40}", e["commit"]):
            bad(f"engine {n}: key {e['key']!r} is not {n}-<commit>-<recipe hash>")
        odd = [p for p in e["packages"] if not (isinstance(p, str) and re.fullmatch(r"[a-z0-9][a-z0-9+.-]+", p))]
        if odd:
            bad(f"engine {n}: package {odd[0]!r} is not a Debian package name")
        for rel, f in e["files"].items():
            parts = Path(rel).parts
            if not rel or os.path.isabs(rel) or ".." in parts or rel != os.path.normpath(rel) \
                    or parts[0] == "libexec" and rel.startswith(str(builds.WRAPPED)):
                bad(f"engine {n}: file {rel!r}")
            if "link" in f:
                if not isinstance(f["link"], str) or not _inside(rel, f["link"]):
                    bad(f"engine {n}: link {rel} -> {f.get('link')!r} leaves the engine's folder")
            elif not (isinstance(f.get("sha256"), str) and isinstance(f.get("mode"), int)):
                bad(f"engine {n}: file {rel}")


#: What installing a bundle needs besides its engines' own packages: patchelf, with which
#: their programs are made to find their libraries where they are put (:func:`_relocate`).
INSTALL_NEEDS = ("patchelf",)


def _opened(source: str, sha256: str | None, say: Callable[[str], None]) -> tuple[Path, str, str]:
    """The bundle at ``source`` (a file or a URL, downloaded) as a local file, its SHA-256
    checked against ``sha256`` where given: the file, where it came from, its SHA-256."""
    is_url = bool(re.match(r"^[a-z]+://", source))
    if is_url and not sha256:
        raise RouterlabError(f"--from {source}: a bundle from the network needs its SHA-256 (--sha256), "
                             "as its publisher gives it")
    path, origin = _fetch(source, say)
    got = builds.sha256(path)
    if sha256 and got != sha256.lower():
        if is_url:
            path.unlink(missing_ok=True)  # never kept: the next try downloads again
        raise RouterlabError(f"{path}: its SHA-256 is {got}, not {sha256} (--sha256): refused")
    say(f"{path.name}: SHA-256 {got}" + (" (as --sha256 says)" if sha256 else ""))
    return path, origin, got


def _chosen(manifest: dict, names: list[str] | None, path: Path) -> tuple[dict[str, dict], Platform]:
    """The manifest's entries of the engines ``names`` (all it holds for none), and the
    platform it was built on; refused when that is not this machine's or it lacks one."""
    theirs, here = Platform(**manifest["platform"]), Platform.here()
    if (theirs.os, theirs.release, theirs.arch) != (here.os, here.release, here.arch):
        raise RouterlabError(f"{path}: built for {theirs}, and this machine is {here}: build the engines "
                             "from source instead (routerlab engines install)")
    engines = manifest["engines"]
    names = list(dict.fromkeys(names or ()))
    unknown = sorted(set(names) - set(engines))
    if unknown:
        raise RouterlabError(f"{path}: holds {', '.join(engines)}, not {', '.join(unknown)}")
    return {n: m for n, m in engines.items() if not names or n in names}, theirs


def _needs(chosen: dict[str, dict]) -> list[str]:
    """The Debian packages that installing the engines ``chosen`` (manifest entries) and
    running them need, sorted: their libraries' packages and those these load at run time,
    their recipes' runtime packages and :data:`INSTALL_NEEDS`."""
    # what a bundle packed before LOADED_AT_RUN_TIME, or before its recipe's runtime
    # packages changed (the key does not hash them), did not list
    wanted = {p for m in chosen.values() for p in m["packages"]} | {p for n in chosen for p in builds.recipe(n).runtime}
    return with_loaded(wanted | set(INSTALL_NEEDS))


def packages(source: str, *, sha256: str | None = None, names: list[str] | None = None,
             say: Callable[[str], None] = lambda line: None) -> list[str]:
    """The Debian packages that installing the engines of the bundle at ``source`` (or those
    of ``names`` among them) and running them need: what a machine's administrator installs
    once (``routerlab engines install --packages-only --from``) so that its users install
    the bundle without root. Checks the bundle's hash (``sha256``) and platform as
    :func:`install` does; installs nothing."""
    path, _, _ = _opened(source, sha256, say)
    try:
        with tarfile.open(path, "r:gz") as tar:
            manifest = read_manifest(tar, path)
    except (tarfile.TarError, OSError, EOFError) as e:
        raise RouterlabError(f"{path}: not a readable bundle ({e})") from None
    return _needs(_chosen(manifest, names, path)[0])


def install(source: str, *, sha256: str | None = None, names: list[str] | None = None,
            force: bool = False, say: Callable[[str], None] = lambda line: None) -> dict[str, Path]:
    """Install the engines of the bundle at ``source`` (a file or a URL), or those of
    ``names`` among them; return each one's prefix.

    Raises
    ------
    RouterlabError
        A hash other than ``sha256``; a bundle of another platform; a corrupted or
        truncated bundle, a file the manifest lists missing from it or with another hash
        (naming it; nothing is installed); packages that running or installing the engines
        needs (:func:`packages`) missing where they cannot be installed (with the
        ``apt-get install`` line, before anything is unpacked).
    """
    t0 = time.monotonic()
    builds.usable_engines_dir()
    path, origin, got = _opened(source, sha256, say)
    try:
        tar = tarfile.open(path, "r:gz")
    except (tarfile.TarError, OSError, EOFError) as e:
        raise RouterlabError(f"{path}: not a readable bundle ({e})") from None
    with tar:
        manifest = read_manifest(tar, path)
        chosen, theirs = _chosen(manifest, names, path)
        builds.install_debian(_needs(chosen), say, what="runtime packages of the bundle's engines")
        base = builds.engines_dir()
        staging = base / ".build"
        staging.mkdir(parents=True, exist_ok=True)
        done = {}
        for n, m in chosen.items():
            dest = base / m["key"]
            r = builds.recipes()[n]
            same_source = (m["repository"], m["commit"], m["source_sha256"]) == \
                (r.source.repository, r.source.commit, r.source.sha256)
            if m["key"] == r.key and not same_source:
                raise RouterlabError(f"{path}: {n} is under this routerlab's key {r.key} but from "
                                     f"{m['repository']}@{m['commit'][:12]}: refused")
            pinned = m["key"] == r.key
            with builds._Lock(n, say):
                if (dest / builds.MARKER).is_file() and not force:
                    say(f"{n}: {dest.name} is installed already; kept (--force replaces it)")
                    continue
                stage = Path(tempfile.mkdtemp(prefix=f"{m['key']}-bundle-", dir=staging))
                try:
                    _unpack(tar, path, m, stage / "tree")
                    tree = stage / "tree"
                    _relocate(tree, Path(m["prefix"]), dest, m["relocate_env"])
                    (tree / builds.MARKER).write_text(json.dumps({
                        "engine": n, "repository": m["repository"], "commit": m["commit"],
                        "sha256": m["source_sha256"], "key": m["key"], "built": m["built"],
                        "bundle": {"sha256": got, "from": origin, "packed": manifest.get("packed"),
                                   "built_in": m["prefix"], "platform": str(theirs),
                                   "relocate_env": m["relocate_env"],
                                   "installed": datetime.now(timezone.utc).isoformat(timespec="seconds")},
                    }, indent=1) + "\n")
                    if dest.exists():
                        # the old install goes aside first: a kill now leaves it, not nothing
                        (dest / builds.MARKER).unlink(missing_ok=True)
                        os.rename(dest, stage / "old")
                    os.rename(tree, dest)
                finally:
                    shutil.rmtree(stage, ignore_errors=True)
            done[n] = dest
            say(f"{n}: installed {m['repository']}@{m['commit'][:12]} from the bundle in {dest}"
                + ("" if pinned else " (another pin than this routerlab's recipe: kept under its own key, "
                                     "not used for the pinned engine)"))
    say(f"installed {len(done)} engine(s) from {path.name} in {time.monotonic() - t0:.1f} s")
    return done


def from_folder(names: list[str], *, folder: str | Path | None = None,
                say: Callable[[str], None] = lambda line: None) -> dict[str, Path]:
    """Install each engine of ``names`` that is not installed from a bundle in ``folder``
    (default ``$ROUTERLAB_ENGINE_BUNDLES``; none: nothing) that holds it under the key
    ``routerlab engines install`` would build, checked against the ``.sha256`` file beside
    the bundle; return those installed. An engine whose pin or recipe changed has another
    key, so it is never taken from a bundle made before: it is left to be built, and the
    log says why.

    Raises
    ------
    RouterlabError
        The folder named is not one; a bundle there is corrupted or fails its hash.
    """
    folder = folder or os.environ.get(FOLDER_VAR)
    if not folder:
        return {}
    where = Path(folder).expanduser()
    if not where.is_dir():
        raise RouterlabError(f"${FOLDER_VAR}={folder}: no such folder")
    want = {n: builds.recipe(n).key for n in dict.fromkeys(names) if not builds.installed(n)}
    done: dict[str, Path] = {}
    elsewhere: dict[str, str] = {}
    # the newest first: of two bundles holding an engine under the same key, either will do
    for path in sorted(where.glob("*.tar.gz"), key=lambda p: p.stat().st_mtime, reverse=True):
        if not want:
            break
        digest_file = path.with_name(path.name + ".sha256")
        if not digest_file.is_file():
            say(f"{path.name}: no {digest_file.name} beside it: not used")
            continue
        digest = (digest_file.read_text().split() or [""])[0]
        try:
            with tarfile.open(path, "r:gz") as tar:
                manifest = read_manifest(tar, path)
        except (tarfile.TarError, OSError, EOFError) as e:
            raise RouterlabError(f"{path}: not a readable bundle ({e})") from None
        theirs, here = Platform(**manifest["platform"]), Platform.here()
        if (theirs.os, theirs.release, theirs.arch) != (here.os, here.release, here.arch):
            say(f"{path.name}: built for {theirs}, not this machine ({here}): not used")
            continue
        held = manifest["engines"]
        hits = [n for n, key in want.items() if held.get(n, {}).get("key") == key]
        for n in want:
            if n in held and n not in hits:
                elsewhere.setdefault(n, f"{path.name} holds it as {held[n]['key']}")
        if hits:
            say(f"{', '.join(hits)}: from the bundle {path} (${FOLDER_VAR})")
            done.update(install(str(path), sha256=digest, names=hits, say=say))
            for n in hits:
                want.pop(n)
    for n, key in want.items():
        say(f"{n}: no bundle in {where} holds {key}"
            + (f" ({elsewhere[n]}: another pin or recipe)" if n in elsewhere else "") + ": building it")
    return done


def _unpack(tar: tarfile.TarFile, path: Path, m: dict, stage: Path) -> None:
    """Unpack engine ``m``'s files into ``stage``, each checked against the manifest
    (whose paths and links :func:`_check_manifest` kept inside the engine): anything else
    in the bundle under its key is refused."""
    key, files = m["key"], m["files"]
    seen = set()
    stage.mkdir(parents=True)
    root = stage.resolve()
    try:
        for member in tar:
            if not (member.name == key or member.name.startswith(key + "/")):
                continue
            rel = member.name[len(key) + 1:]
            if not rel or member.isdir():
                continue
            if rel not in files or rel in seen:
                raise RouterlabError(f"{path}: {member.name} is not in the bundle's manifest"
                                     + (" (twice)" if rel in seen else "") + ": refused")
            target = stage / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.parent.resolve().is_relative_to(root):  # through a link of its own
                raise RouterlabError(f"{path}: {member.name} would be written outside its engine: refused")
            want = files[rel]
            if "link" in want:
                if not member.issym() or member.linkname != want["link"]:
                    raise RouterlabError(f"{path}: {member.name} is not the link the manifest lists: refused")
                os.symlink(member.linkname, target)
            else:
                if not member.isreg():
                    raise RouterlabError(f"{path}: {member.name} is not a regular file: refused")
                f = tar.extractfile(member)
                h = hashlib.sha256()
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                with os.fdopen(fd, "wb") as out:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        h.update(block)
                        out.write(block)
                if h.hexdigest() != want["sha256"]:
                    raise RouterlabError(f"{path}: {member.name} has SHA-256 {h.hexdigest()}, the manifest says "
                                         f"{want['sha256']}: refused")
                os.chmod(target, want["mode"] & 0o777)
            seen.add(rel)
    except (tarfile.TarError, OSError, EOFError, zlib.error, KeyError) as e:
        raise RouterlabError(f"{path}: truncated or corrupted ({type(e).__name__}: {e}): nothing installed") from None
    missing = sorted(set(files) - seen)
    if missing:
        raise RouterlabError(f"{path}: {key}/{missing[0]} is in the manifest but not in the bundle"
                             + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "") + ": refused")


#: Where a wrapped program's binary goes, under the prefix (its name is kept: a process
#: is still called what it was).
WRAPPED = builds.WRAPPED


def _relocate(tree: Path, old: Path, new: Path, env: dict[str, str] | None = None) -> None:
    """Make the engine unpacked in ``tree`` (built in ``old``) work from ``new``: ELF
    search paths inside ``old`` relative to each binary (``$ORIGIN``), ``old`` replaced by
    ``new`` in text files, p4c's include folders beside its ``bin/``, and each program of
    ``bin/`` that names ``old`` started through a wrapper setting ``env`` (the recipe's
    ``relocate_env``, ``{prefix}`` the new prefix) unless the caller set them."""
    old_b, new_b = str(old).encode(), str(new).encode()
    for p in sorted(tree.rglob("*")):
        if p.is_symlink() or not p.is_file():
            continue
        if _is_elf(p):
            if _elf_kind(p) not in ("exec", "dyn"):
                continue
            r = subprocess.run(["patchelf", "--print-rpath", str(p)], capture_output=True, text=True)
            rpath = r.stdout.strip()
            # a program that names its build's folder elsewhere than in its search path
            if env and p.parent == tree / "bin" and old_b in p.read_bytes().replace(rpath.encode(), b""):
                p = _wrap(tree, p, new, env)
            if r.returncode != 0 or str(old) not in rpath:
                continue
            rel_dir = os.path.relpath(old, old / p.parent.relative_to(tree))
            parts = [("$ORIGIN/" + os.path.normpath(os.path.join(rel_dir, os.path.relpath(e, old))))
                     if Path(e).is_relative_to(old) else e for e in rpath.split(":") if e]
            r = subprocess.run(["patchelf", "--set-rpath", ":".join(parts), str(p)], capture_output=True, text=True)
            if r.returncode != 0:
                raise RouterlabError(f"patchelf could not relocate {p.relative_to(tree)}: {r.stderr.strip()}")
            continue
        _replace_in_text(p, old_b, new_b)
    # p4c looks for its include files beside its binary's folder before the built-in path
    for name in ("p4include", "p4_14include"):
        if (tree / "share" / "p4c" / name).is_dir() and not (tree / name).exists():
            (tree / name).symlink_to(Path("share") / "p4c" / name)


def _unrelocate(tree: Path, built_in: Path, here: Path) -> None:
    """Undo in ``tree`` (a copy of an engine installed in ``here`` from a bundle built in
    ``built_in``) what :func:`_relocate` did that a later install would do again: each
    wrapped program back in ``bin/`` in place of its wrapper, and ``here`` named as
    ``built_in`` again in text files. Search paths stay relative to their binaries."""
    wrapped = tree / WRAPPED
    if wrapped.is_dir():
        for real in sorted(wrapped.iterdir()):
            program = tree / "bin" / real.name
            os.replace(real, program)
            _move_origin(program, wrapped, program.parent)
        wrapped.rmdir()
        if not any(wrapped.parent.iterdir()):
            wrapped.parent.rmdir()
    if built_in == here:
        return
    for p in sorted(tree.rglob("*")):
        if not (p.is_symlink() or not p.is_file() or _is_elf(p)):
            _replace_in_text(p, str(here).encode(), str(built_in).encode())


def _replace_in_text(p: Path, old: bytes, new: bytes) -> None:
    """``old`` replaced by ``new`` in file ``p`` if it is text (no NUL in its first 8 KiB)
    and names it, its mode kept."""
    data = p.read_bytes()
    if old in data and b"\0" not in data[:8192]:
        mode = p.stat().st_mode
        p.write_bytes(data.replace(old, new))
        os.chmod(p, mode)


def _move_origin(program: Path, was: Path, now: Path) -> None:
    """Keep the ``$ORIGIN``-relative search paths of ``program``, moved from folder ``was``
    to folder ``now``, pointing at the same folders."""
    r = subprocess.run(["patchelf", "--print-rpath", str(program)], capture_output=True, text=True)
    if r.returncode != 0 or "$ORIGIN" not in r.stdout:
        return
    parts = [("$ORIGIN/" + os.path.relpath(os.path.normpath(os.path.join(was, e.removeprefix("$ORIGIN/"))), now))
             if e.startswith("$ORIGIN/") else e for e in r.stdout.strip().split(":") if e]
    r = subprocess.run(["patchelf", "--set-rpath", ":".join(parts), str(program)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RouterlabError(f"patchelf could not move {program.name}'s search path: {r.stderr.strip()}")


def _wrap(tree: Path, program: Path, new: Path, env: dict[str, str]) -> Path:
    """Move ``program`` to :data:`WRAPPED` and put a script in its place that sets ``env``
    (where not set already) and runs it; return where the program is now."""
    import shlex

    real = tree / WRAPPED / program.name
    real.parent.mkdir(parents=True, exist_ok=True)
    os.replace(program, real)
    _move_origin(real, program.parent, real.parent)  # a search path relative to it already
    sets = "".join(f'[ -n "${{{k}+set}}" ] || {{ {k}={shlex.quote(v.replace("{prefix}", str(new)))}; export {k}; }}\n'
                   for k, v in sorted(env.items()))
    program.write_text("#!/bin/sh\n# Installed from a routerlab bundle away from the folder it was built in "
                       "(routerlab.engines.bundles):\n# these tell the program where its files are now.\n"
                       f"{sets}exec {shlex.quote(str(new / WRAPPED / program.name))} \"$@\"\n")
    os.chmod(program, 0o755)
    return real


def bundle_of(prefix: Path) -> dict | None:
    """What the marker of an installed engine says of the bundle it came from (None: a
    source build)."""
    try:
        return json.loads((prefix / builds.MARKER).read_text()).get("bundle")
    except (OSError, json.JSONDecodeError):
        return None
