"""``bench install``: what the engines cost a new machine, next to floors measured in the
same run: ``routerlab engines install`` from a folder of bundles into an empty engines
folder, against unpacking the same bundles with tar; and, asked for, a cold build of one
engine from its pin (no compiler cache) against its target.

Each runs the command a user runs, in a temporary engines folder of its own, which goes
afterwards: the engines folder in use is not touched.
"""

from __future__ import annotations

import os
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from routerlab.errors import RouterlabError

#: Targets, seconds of wall time: every bundled engine installed on a new machine, and a
#: cold build of VPP on two cores.
INSTALL_TARGET_S = 120.0
BUILD_TARGET_S = {"vpp": 25 * 60.0}


def _timed(argv: list[str], env: dict) -> float:
    """Seconds ``argv`` took; a run that fails is an error naming its last output."""
    t0 = time.perf_counter()
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    took = time.perf_counter() - t0
    if p.returncode != 0:
        raise RouterlabError(f"{' '.join(argv[:4])} ... exited {p.returncode}: {p.stdout.strip()[-500:]}")
    return took


def from_bundles(folder: Path, command: list[str]) -> dict:
    """``engines install`` (``command`` starts routerlab) of every engine a bundle in
    ``folder`` holds under the key this routerlab builds (on this platform), into an empty
    engines folder, and the floor: ``tar -xzf`` of the same bundles. Returns seconds of
    each and the bundles used; none that such an install would take is an error."""
    from routerlab.engines import bundles

    folder = Path(folder)
    files = sorted(p for p in folder.glob("*.tar.gz") if p.with_name(p.name + ".sha256").is_file())
    if not files:
        raise RouterlabError(f"{folder}: no bundle beside its .sha256 ({bundles.FOLDER_VAR})")
    from routerlab.engines import builds

    names, other = set(), set()
    here = bundles.Platform.here()
    for f in files:
        try:
            with tarfile.open(f, "r:gz") as tar:
                m = bundles.read_manifest(tar, f)
        except (tarfile.TarError, OSError, EOFError) as e:
            raise RouterlabError(f"{f}: not a readable bundle ({e})") from None
        theirs = bundles.Platform(**m["platform"])
        for n, e in m["engines"].items():
            # only what the install takes from a bundle: an engine it would build is no install
            ok = (theirs.os, theirs.release, theirs.arch) == (here.os, here.release, here.arch) \
                and e["key"] == builds.recipe(n).key
            (names if ok else other).add(n)
    if not names:
        raise RouterlabError(f"{folder}: no bundle holds an engine under the key this routerlab builds "
                             f"(it holds {', '.join(sorted(other)) or 'none'} under others)")
    with tempfile.TemporaryDirectory(prefix="rl-bench-install-") as tmp:
        env = {**os.environ, "ROUTERLAB_ENGINES_DIR": f"{tmp}/engines", bundles.FOLDER_VAR: str(folder)}
        install_s = _timed([*command, "engines", "install", *sorted(names)], env)
        (Path(tmp) / "tar").mkdir()
        t0 = time.perf_counter()
        for f in files:
            p = subprocess.run(["tar", "-xzf", str(f), "-C", f"{tmp}/tar"], capture_output=True, text=True)
            if p.returncode != 0:
                raise RouterlabError(f"tar -xzf {f} failed: {p.stderr.strip()[-300:]}")
        floor_s = time.perf_counter() - t0
    return {"engines": sorted(names), "bundles": [f.name for f in files], "install_s": install_s, "tar_s": floor_s}


def cold_build(engine: str, command: list[str]) -> float:
    """Seconds of ``engines install ENGINE`` from its pin into an empty engines folder with
    the compiler cache off."""
    with tempfile.TemporaryDirectory(prefix="rl-bench-build-") as tmp:
        env = {**os.environ, "ROUTERLAB_ENGINES_DIR": f"{tmp}/engines", "CCACHE_DISABLE": "1"}
        env.pop("ROUTERLAB_ENGINE_BUNDLES", None)
        return _timed([*command, "engines", "install", engine], env)


def report(bundled: dict | None, built: dict[str, float]) -> str:
    """One line for the install from bundles (its time, its floor, their ratio, the target)
    and one per cold build (its time against its target, as a ratio)."""
    lines = []
    if bundled:
        lines.append(f"engines install from {', '.join(bundled['bundles'])} ({', '.join(bundled['engines'])}): "
                     f"{bundled['install_s']:.1f} s; floor (tar -xzf of the same): {bundled['tar_s']:.1f} s; "
                     f"ratio {bundled['install_s'] / bundled['tar_s']:.2f}; target: under {INSTALL_TARGET_S:.0f} s "
                     f"({'met' if bundled['install_s'] < INSTALL_TARGET_S else 'NOT met'})")
    for engine, s in built.items():
        target = BUILD_TARGET_S.get(engine)
        lines.append(f"cold build of {engine} ({os.cpu_count()} cores, no compiler cache): {s:.0f} s"
                     + (f"; target: under {target:.0f} s, ratio {s / target:.2f} "
                        f"({'met' if s < target else 'NOT met'})" if target else ""))
    return "\n".join(lines)
