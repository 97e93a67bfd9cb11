"""The user cache: what routerlab builds from its own sources on this machine (the
generator, the CPU-stop probe, the BPF programs, compiled P4 and Click packages), under
``$XDG_CACHE_HOME/routerlab`` (``~/.cache/routerlab``). Never committed; safe to delete."""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Callable

from routerlab.errors import RouterlabError


def folder(kind: str) -> Path:
    """The cache's folder for one kind of build (``bin``, ``bpf``, ``p4``, ...), made if absent."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    # the XDG spec: an empty or relative XDG_CACHE_HOME is to be ignored
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    d = root / "routerlab" / kind
    d.mkdir(parents=True, exist_ok=True)
    return d


def built(kind: str, name: str, source: bytes, command: Callable[[Path, Path], list[str]], *,
          key: bytes = b"", suffix: str = "") -> Path:
    """Path of the C file ``source`` built by ``command(src, out)`` (an argv) into the
    cache, named by a hash of the source and ``key`` (anything else the build depends on),
    so an unchanged program is never rebuilt. Built at first use, each build from its own
    copy of the source into its own file, which then takes the final name at once: runs
    building together never read a half-written file."""
    d = folder(kind)
    tag = hashlib.sha256(source + key).hexdigest()[:12]
    out = d / f"{name}-{tag}{suffix}"
    if out.is_file():
        return out
    with tempfile.TemporaryDirectory(dir=d, prefix=f".{name}-") as tmp:
        src, obj = Path(tmp) / f"{name}.c", Path(tmp) / f"{name}{suffix}"
        src.write_bytes(source)
        argv = command(src, obj)
        try:
            p = subprocess.run(argv, capture_output=True, text=True)
        except OSError as e:
            raise RouterlabError(f"building {name}.c: cannot run {argv[0]}: {e}") from e
        if p.returncode != 0:
            raise RouterlabError(f"building {name}.c failed ({' '.join(argv)}, exit {p.returncode}):\n"
                                 f"{p.stderr or p.stdout}")
        os.replace(obj, out)
    return out


def bpf_object(name: str, include: Path | None = None) -> Path:
    """``lib/routerlab/bpf/<name>.c`` compiled with clang for BPF, cached by the source's
    hash, so an unchanged program is not rebuilt. ``include``: a folder searched for
    headers first (a CO-RE program's ``vmlinux.h``; part of the cache key, since the
    header names the kernel it came from)."""
    import shutil
    from importlib import resources

    from routerlab.errors import EngineNotFound

    if not shutil.which("clang"):
        raise EngineNotFound(f"{name}: clang is not installed (Debian package clang): run scripts/setup.sh")
    src = resources.files("routerlab").joinpath(f"bpf/{name}.c").read_bytes()
    first = [f"-I{include}"] if include else []
    return built("bpf", name, src, lambda c, out: [
        "clang", "-O2", "-g", "-target", "bpf", *first, f"-I/usr/include/{os.uname().machine}-linux-gnu",
        "-c", str(c), "-o", str(out)], key=str(include).encode() if include else b"", suffix=".o")


def compiled(name: str, libs: tuple[str, ...] = ()) -> Path:
    """Path of our C program ``csrc/<name>.c`` compiled (gcc -O2, linked with ``libs``,
    e.g. ``("-lbpf",)``) into the user cache (:func:`built`); built at first use."""
    import shutil
    from importlib import resources

    cc = shutil.which(os.environ.get("CC", "gcc")) or shutil.which("cc")
    if not cc:
        raise RouterlabError(f"no C compiler (gcc) to build {name}.c: run scripts/setup.sh")
    src = resources.files("routerlab").joinpath(f"csrc/{name}.c").read_bytes()
    return built("bin", name, src, lambda c, out: [cc, "-O2", "-Wall", "-o", str(out), str(c), *libs],
                 key=" ".join(libs).encode())
