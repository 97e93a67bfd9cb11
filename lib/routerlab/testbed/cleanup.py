"""What a testbed leaves behind when its run dies, removed: processes, namespaces, run
folders, BPF pins, a host's journalled set-up, the CPUs of the work kept off the router's."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from routerlab import processes
from routerlab.testbed import capabilities, hostchanges, housekeeping
from routerlab.testbed.interface import BPF_PINS, NS_RE, STATE_DIR
from routerlab.testbed import shell
from routerlab.testbed.shell import sh


def clean(all_runs: bool = False) -> list[str]:
    """Remove what crashed runs left: their processes, namespaces, folders, BPF pins and
    shared memory.

    A run whose owning process is still alive is left alone unless ``all_runs``.
    Only names routerlab makes (``rl`` + 6 hex digits, then ``-`` and a role or what the
    run named: namespaces, run folders, BPF pins, shared memory) are touched.

    Returns
    -------
    list of str
        What was removed, one item per namespace or process.
    """
    capabilities.require_root()
    try:
        removed = [f"CPUs given back to {name}" for name in housekeeping.clean()]
    except OSError as e:  # the rest of the clean-up goes on
        removed = [f"housekeeping's CPUs not given back: {e}"]
    live = set()
    if STATE_DIR.is_dir():
        for f in STATE_DIR.glob("rl*.json"):
            if f.name.endswith("-changes.json"):  # a host's journal: restored below
                continue
            st = processes.read_state(f, drop_unreadable=True)
            if st is None:
                continue
            if not all_runs and processes.owner_alive(st):
                live.add(st["prefix"])
                continue
            removed += [f"process {pid}" for pid in processes.kill_left(st)]
            f.unlink(missing_ok=True)
    # a testbed host's own set-up (routerlab.testbed.hostchanges), after its processes stopped
    removed += hostchanges.restore_left(STATE_DIR, processes.alive)
    names = sh("ip", "netns", "list", check=False).split("\n")
    for line in names:
        name = line.split(" ")[0].strip()
        m = NS_RE.match(name)
        if m and m.group(1) not in live:
            shell.delete_namespace(name)
            removed.append(f"namespace {name}")
    # run folders of engines (Click configs, bmv2 sockets), DPDK's runtime files (FastClick)
    # and pinned BPF programs (the drop counter: attached until its pins are removed)
    for base in (STATE_DIR, Path("/var/run/dpdk"), BPF_PINS):
        if base.is_dir():
            for d in base.glob("rl*"):
                m = re.match(r"(rl[0-9a-f]{6})(-|$)", d.name)
                if d.is_dir() and m and m.group(1) not in live:
                    # processes a testbed host ran for the run (routerlab.remote.hostrun notes each)
                    for note in d.glob("*.proc"):
                        pid = note.read_text().strip()
                        if pid.isdigit() and processes.alive(pid):
                            processes.kill_group(int(pid))
                            removed.append(f"process {pid}")
                    shutil.rmtree(d, ignore_errors=True)
                    removed.append(f"folder {d}")
    # the shared memory of a VPP that was killed (its API segments, named after the run)
    for f in Path("/dev/shm").glob("rl*"):
        m = re.match(r"(rl[0-9a-f]{6})-", f.name)
        if m and m.group(1) not in live and f.is_file():
            f.unlink(missing_ok=True)
            removed.append(f"shared memory {f.name}")
    return removed

