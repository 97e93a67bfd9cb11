"""The user cache: what routerlab builds from its own sources on this machine (the
generator, the CPU-stop probe, the BPF programs, compiled P4 and Click packages), under
``$XDG_CACHE_HOME/routerlab`` (``~/.cache/routerlab``). Never committed; safe to delete."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Callable

from .errors import RouterlabError


def folder(kind: str) -> Path:
    """The cache's folder for one kind of build (``bin``, ``bpf``, ``p4``, ...), made if absent."""
    d = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "routerlab" / kind
    d.mkdir(parents=True, exist_ok=True)
    return d


def built(kind: str, name: str, source: bytes, command: Callable[[Path, Path], list[str]], *,
          key: bytes = b"", suffix: str = "") -> Path:
    """Path of the C file ``source`` built by ``command(src, out)`` (an argv) into the
    cache, named by a hash of the source and ``key`` (anything else the build depends on),
    so an unchanged program is never rebuilt. Built at first use; the result appears at
    once and whole, so two runs building together never read a half-written file."""
    d = folder(kind)
    tag = hashlib.sha256(source + key).hexdigest()[:12]
    out = d / f"{name}-{tag}{suffix}"
    if out.is_file():
        return out
    src = d / f"{name}-{tag}.c"
    src.write_bytes(source)
    tmp = d / f"{name}-{tag}.{os.getpid()}.tmp"
    p = subprocess.run(command(src, tmp), capture_output=True, text=True)
    if p.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise RouterlabError(f"building {name}.c failed:\n{p.stderr}")
    os.replace(tmp, out)
    return out
