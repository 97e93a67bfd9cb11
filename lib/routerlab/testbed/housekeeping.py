"""The kernel's housekeeping threads, kept off the router's CPU while a testbed is up.

Unbound kernel threads (``kdamond``, ``kswapd``, ``kcompactd``, ``khugepaged``, the RCU
grace-period threads...) run on any CPU. On a kernel without preemption (this machine's
is ``PREEMPT_NONE``) one of them keeps its CPU until it gives it up, whatever the
real-time priority of the thread that should run: ``kdamond.0`` (DAMON's monitor, as
the machine is set up) held the router's CPU several times per trial, the router's receive
thread waiting meanwhile, for as long as its 256-slot ring lasts near the calibration
router's capacities, so the ring overflowed whatever the router did
(docs/journal/2026-11-28-housekeeping-off-the-router-cpu.md). Benchmarking setups move
such threads to housekeeping CPUs (isolcpus, tuna, CSIT's CPU isolation); the testbed does
that for its lifetime only: every kernel thread whose allowed CPUs include the router's
CPU and at least one other loses the router's CPU, and gets its own set back when the last
testbed that moved it goes down. Per-CPU threads (``ksoftirqd/1``, ``kworker/1:0``) and
those the kernel does not let move (unbound workqueue workers) stay where they are.

What was moved, and the set each had, is in :data:`STATE` with the testbeds that hold it
(process id and start time, so a later process given the same id is not taken for one),
written before a thread is moved: a killed run's threads get their sets back from
``routerlab clean`` (or from the next testbed's release), and two testbeds at once give
them back only once both are down.
``ROUTERLAB_HOUSEKEEPING=leave`` leaves every thread where it is. The environment record
names the threads moved.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path

from routerlab import processes
from routerlab.errors import ParameterError

#: What the testbed moved, the sets to give back and the testbeds holding them (JSON).
STATE = Path(os.environ.get("ROUTERLAB_STATE_DIR", "/run/routerlab")) / "housekeeping.json"
#: Ways to treat the housekeeping threads: ``move`` (the default) or ``leave``.
MODES = ("move", "leave")
#: Flags of a task (``/proc/PID/stat``, field 9): a kernel thread; one the kernel pins itself.
PF_KTHREAD, PF_NO_SETAFFINITY = 0x00200000, 0x04000000
#: Kernel threads not moved: kthreadd (every new kernel thread would start on its set).
KEPT = ("kthreadd",)


def mode() -> str:
    """``ROUTERLAB_HOUSEKEEPING`` (default ``move``), checked."""
    m = os.environ.get("ROUTERLAB_HOUSEKEEPING", "move")
    if m not in MODES:
        raise ParameterError("ROUTERLAB_HOUSEKEEPING", f"must be one of {', '.join(MODES)}, got {m!r}")
    return m


@dataclass(frozen=True)
class Thread:
    """A kernel thread: its pid, name, start time (clock ticks since boot, which tells it
    from a later thread with the same pid) and the CPUs it may run on."""

    pid: int
    name: str
    start: int
    cpus: frozenset[int]


def _stat(pid: int) -> tuple[str, str, list[str]] | None:
    """(name, state, the fields after the state) of ``/proc/PID/stat``, or None (gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the name is in parentheses and may hold spaces: the fields after it are split
    rest = stat[stat.rindex(")") + 2:].split()
    return stat[stat.index("(") + 1:stat.rindex(")")], rest[0], rest[1:]


def _start(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot), None when it is gone or a
    zombie."""
    st = _stat(pid)
    return None if st is None or st[1] in "ZX" else int(st[2][18])


def _thread(pid: int) -> Thread | None:
    """The kernel thread ``pid``, or None when it is not one (or gone)."""
    st = _stat(pid)
    if st is None:
        return None
    flags, start = int(st[2][5]), int(st[2][18])
    if not flags & PF_KTHREAD or flags & PF_NO_SETAFFINITY:
        return None
    try:
        cpus = frozenset(os.sched_getaffinity(pid))
    except OSError:
        return None
    return Thread(pid, st[0], start, cpus)


def movable(cpu: int) -> list[Thread]:
    """The kernel threads that may run on ``cpu`` and on another CPU, and may be moved."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            t = _thread(int(d.name))
            if t and cpu in t.cpus and len(t.cpus) > 1 and t.name not in KEPT:
                out.append(t)
    return sorted(out, key=lambda t: t.pid)


@contextlib.contextmanager
def _state():
    """The state, locked against other testbeds (a lock file beside it), as a dict to
    change in place; written back (whole, by rename) however the block ends, so that a
    thread recorded before an interruption is not lost."""
    STATE.parent.mkdir(parents=True, exist_ok=True)
    with open(STATE.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            st = json.loads(STATE.read_text())
            if not isinstance(st, dict):
                st = {}
        except (OSError, ValueError):
            st = {}
        st = {"moved": dict(st.get("moved") or {}), "holders": list(st.get("holders") or [])}
        try:
            yield st
        finally:
            if st["moved"] or st["holders"]:
                processes.write_state(STATE, st)
            else:
                STATE.unlink(missing_ok=True)


def _alive(holder) -> bool:
    """Whether a holder's process is alive: the same process, not a later one given its id."""
    if not isinstance(holder, dict) or not isinstance(holder.get("pid"), int):
        return False
    return _start(holder["pid"]) == holder.get("start")


def hold(cpu: int, holder: str) -> list[str]:
    """Move the housekeeping threads off ``cpu`` for the testbed ``holder`` (a name of
    its own, e.g. ``"<pid>/<testbed prefix>"``: a process may bring up testbeds one inside
    another) until :func:`release`. Returns the names of the threads off ``cpu`` now, for
    this testbed or one still up; empty in ``leave`` mode."""
    if mode() == "leave":
        return []
    me = os.getpid()
    with _state() as st:
        _give_back_if_unheld(st)
        if not any(h.get("id") == holder for h in st["holders"]):
            st["holders"].append({"id": holder, "pid": me, "start": _start(me)})
        for t in movable(cpu):
            key, before = str(t.pid), st["moved"].get(str(t.pid))
            if before is None or before.get("start") != t.start:
                # recorded before it moves: an interrupted hold still gives it back
                st["moved"][key] = {"name": t.name, "start": t.start, "cpus": sorted(t.cpus)}
            try:
                os.sched_setaffinity(t.pid, t.cpus - {cpu})
            except OSError:  # gone, or the kernel keeps it
                if before is None:
                    del st["moved"][key]
        return sorted(m["name"] for pid, m in st["moved"].items()
                      if (t := _thread(int(pid))) is not None and t.start == m["start"] and cpu not in t.cpus)


def release(holder: str) -> list[str]:
    """The testbed ``holder`` is down: give the moved threads their sets back when no
    other live testbed holds them. Returns the names given back (idempotent)."""
    if not STATE.exists():
        return []
    with _state() as st:
        st["holders"] = [h for h in st["holders"] if not (isinstance(h, dict) and h.get("id") == holder)]
        return _give_back_if_unheld(st)


def _give_back_if_unheld(st: dict) -> list[str]:
    """Drop dead holders; with none left, give every moved thread its set back."""
    st["holders"] = [h for h in st["holders"] if _alive(h)]
    if st["holders"]:
        return []
    names = []
    for pid, m in st["moved"].items():
        t = _thread(int(pid))
        if t is not None and t.start == m.get("start"):
            with contextlib.suppress(OSError):
                os.sched_setaffinity(t.pid, m["cpus"])
                names.append(m["name"])
    st["moved"] = {}
    return sorted(names)


def clean() -> list[str]:
    """For ``routerlab clean``: give back what testbeds no longer alive moved."""
    if not STATE.exists():
        return []
    with _state() as st:
        return _give_back_if_unheld(st)
