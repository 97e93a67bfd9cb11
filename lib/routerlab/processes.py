"""Processes routerlab starts and must not leave behind, in one place: a child that dies with
its parent, a process group stopped (SIGTERM, a grace period, SIGKILL), state files whose
owner may be dead. (An error sent from one process to another is the error tree's:
:func:`routerlab.errors.error_record`.)

Why one module: a measurement, a build and a testbed host each start processes that must
end when they end, however they end (Ctrl-C, an exception, ``kill -9``); each stopped them
with its own copy of the same few lines.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable


#: prctl(2)'s option that sets the signal a process gets when its parent ends.
PR_SET_PDEATHSIG = 1

#: Seconds between SIGTERM and SIGKILL for the processes of a run torn down (or left by a
#: dead one): they get no time to exit cleanly, only to be signalled in turn.
KILL_GRACE_S = 0.05

#: What an absent process group raises when signalled, and one out of this process's reach.
GONE = (ProcessLookupError, PermissionError)


def _libc_prctl():
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


#: Looked up here, in the parent: a child forked from threads must not import or load.
_PRCTL = _libc_prctl()


def dies_with_parent(sig: int = signal.SIGTERM) -> Callable[[], None]:
    """A ``preexec_fn`` for :class:`subprocess.Popen`: the child is sent ``sig`` when the
    thread that started it ends (prctl PR_SET_PDEATHSIG), even killed (-9), so that nothing
    it runs outlives its owner. SIGKILL for a child that blocks the signals it could be
    asked to stop with (``unshare --fork``)."""
    def preexec():  # pragma: no cover - runs in the child
        if _PRCTL is not None:
            _PRCTL(PR_SET_PDEATHSIG, sig)

    return preexec


def alive(pid) -> bool:
    """Whether process ``pid`` (an int, or its digits; None or 0 for none) exists; one out
    of this process's reach (another user's) exists."""
    if not pid:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_group(pgid: int, sig: int, *, gone=GONE) -> bool:
    """Send ``sig`` to process group ``pgid``; False when it raised one of ``gone`` (no such
    group, by default also one out of reach)."""
    try:
        os.killpg(pgid, sig)
    except gone:
        return False
    return True


def group_gone(pgid: int, timeout_s: float, *, poll_s: float = 0.05, gone=GONE) -> bool:
    """Wait up to ``timeout_s`` seconds, looking every ``poll_s``, until no process of group
    ``pgid`` is left (one not yet reaped counts as left); whether none is. Signalling it
    raising one of ``gone`` means none is."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not signal_group(pgid, 0, gone=gone):
            return True
        time.sleep(poll_s)
    return False


def stop_group(pgid: int, grace_s: float = 5.0, *, first: int = signal.SIGTERM, gone=GONE,
               until: Callable[[float], bool] | None = None, settle_s: float = 0.0) -> None:
    """Stop the process group ``pgid`` leads: ``first`` (SIGTERM), then SIGKILL if it has not
    ended within ``grace_s`` seconds (a router given time to exit cleanly), or at once if
    the wait is interrupted (Ctrl-C).

    ``until(seconds)`` waits for the end and says whether it came (default: no process of
    the group left, :func:`group_gone`); ``gone``: what signalling an ended group raises
    (nothing more is done then); ``settle_s``: seconds to wait after SIGKILL for the group
    to be gone."""
    if not signal_group(pgid, first, gone=gone):
        return
    ended = False
    try:
        ended = until(grace_s) if until is not None else group_gone(pgid, grace_s, gone=gone)
    finally:
        if not ended and signal_group(pgid, signal.SIGKILL, gone=gone) and settle_s:
            group_gone(pgid, settle_s, gone=gone)


def kill_group(pgid: int) -> None:
    """Kill the process group ``pgid`` leads (SIGTERM, SIGKILL :data:`KILL_GRACE_S` later):
    a run's processes torn down, or those a dead run left."""
    stop_group(pgid, KILL_GRACE_S, settle_s=KILL_GRACE_S)


def ended_within(proc: subprocess.Popen) -> Callable[[float], bool]:
    """An ``until`` for :func:`stop_group`: waits for ``proc`` itself to end (and reaps it)."""
    def wait(timeout_s: float) -> bool:
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return False
        return True

    return wait


def stop(proc: subprocess.Popen, grace_s: float = 5.0) -> None:
    """Stop one process that is ours (not its group): SIGTERM, then SIGKILL if it has not
    ended within ``grace_s`` seconds; reaped either way."""
    if proc.poll() is not None:
        return
    proc.terminate()
    reap(proc, grace_s)


def reap(proc: subprocess.Popen, grace_s: float = 0.0) -> None:
    """Let one process of ours that was told to end (its input closed, its connection asked
    to exit) end within ``grace_s`` seconds, else SIGKILL it; reaped either way."""
    if not ended_within(proc)(grace_s):
        proc.kill()
        proc.wait()


# state files ---------------------------------------------------------------------------
def write_state(path: Path, state: dict) -> None:
    """Write ``state`` as JSON to ``path`` (its folder made if need be) at once: a reader
    (``routerlab clean``, another run) sees the old file or the new one, never half of one.
    A state file names its owner's process as ``pid``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state))
    os.replace(tmp, path)


def read_state(path: Path, *, drop_unreadable: bool = False) -> dict | None:
    """The state a state file holds, or None when it cannot be read or is not JSON (then
    removed if ``drop_unreadable``: a file its owner died while writing by other means)."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError):
        if drop_unreadable:
            Path(path).unlink(missing_ok=True)
        return None


def owner_alive(state: dict, is_alive: Callable[[object], bool] = alive) -> bool:
    """Whether the process that owns ``state`` (its ``pid``) is alive: while it is, what
    the file lists is in use, not left behind."""
    return is_alive(state.get("pid"))


def kill_left(state: dict) -> list[int]:
    """Kill the process groups a state file lists (``procs``) that are still alive; returns
    their ids."""
    killed = []
    for pid in state.get("procs", []):
        if alive(pid):
            kill_group(pid)
            killed.append(pid)
    return killed
