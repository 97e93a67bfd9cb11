"""What a testbed leaves behind when its run dies, removed: processes, namespaces, run
folders, BPF pins, a host's journalled set-up, the housekeeping threads' CPUs."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from routerlab.testbed import capabilities, hostchanges, housekeeping
from routerlab.testbed.interface import BPF_PINS, NS_RE, STATE_DIR
from routerlab.testbed.shell import sh

def stop_group(pid: int, grace_s: float = 5.0):
    """Stop the process group ``pid`` leads: SIGTERM, then SIGKILL if any of it is still
    there after ``grace_s`` seconds (a router given time to exit cleanly)."""
    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.05)
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_group(pid: int):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.05)


def _own_namespace(ns: str) -> bool:
    """Whether the named namespace ``ns`` is this process's own or the machine's first (a
    handle a testbed host attached to itself, :mod:`routerlab.remote.sshtestbed`): deleting it
    must not kill what runs there."""
    try:
        ino = os.stat(f"/run/netns/{ns}").st_ino
    except OSError:
        return False
    for p in ("self", "1"):
        try:
            if os.stat(f"/proc/{p}/ns/net").st_ino == ino:
                return True
        except OSError:  # the machine's first process may be out of reach (another PID namespace)
            continue
    return False


def _delete_ns(ns: str):
    if _own_namespace(ns):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        return
    # processes still inside the namespace (e.g. orphaned daemons) are killed first
    pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
    for pid in pids:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def clean(all_runs: bool = False) -> list[str]:
    """Remove what crashed runs left: their processes, namespaces, folders and BPF pins.

    A run whose owning process is still alive is left alone unless ``all_runs``.
    Only names routerlab makes (``rl`` + 6 hex digits + ``-tg|-dut|-sink``) are touched.

    Returns
    -------
    list of str
        What was removed, one item per namespace or process.
    """
    capabilities.require_root()
    try:
        removed = [f"kernel thread {name}'s CPUs given back" for name in housekeeping.clean()]
    except OSError as e:  # the rest of the clean-up goes on
        removed = [f"kernel threads' CPUs not given back: {e}"]
    live = set()
    if STATE_DIR.is_dir():
        for f in STATE_DIR.glob("rl*.json"):
            if f.name.endswith("-changes.json"):  # a host's journal: restored below
                continue
            try:
                st = json.loads(f.read_text())
            except (OSError, json.JSONDecodeError):
                f.unlink(missing_ok=True)
                continue
            if not all_runs and _alive(st.get("pid")):
                live.add(st["prefix"])
                continue
            for pid in st.get("procs", []):
                if _alive(pid):
                    _kill_group(pid)
                    removed.append(f"process {pid}")
            f.unlink(missing_ok=True)
    # a testbed host's own set-up (routerlab.testbed.hostchanges), after its processes stopped
    removed += hostchanges.restore_left(STATE_DIR, _alive)
    names = sh("ip", "netns", "list", check=False).split("\n")
    for line in names:
        name = line.split(" ")[0].strip()
        m = NS_RE.match(name)
        if m and m.group(1) not in live:
            _delete_ns(name)
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
                        if pid.isdigit() and _alive(pid):
                            _kill_group(int(pid))
                            removed.append(f"process {pid}")
                    shutil.rmtree(d, ignore_errors=True)
                    removed.append(f"folder {d}")
    return removed


def _alive(pid) -> bool:
    if not pid:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
