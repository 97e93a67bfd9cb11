"""The machine's other work, kept off the router's CPU while a testbed is up.

Unbound kernel threads (``kdamond``, ``kswapd``, ``kcompactd``, ``khugepaged``, the RCU
grace-period threads...) run on any CPU. On a kernel without preemption (this machine's
is ``PREEMPT_NONE``) one of them keeps its CPU until it gives it up, whatever the
real-time priority of the thread that should run: ``kdamond.0`` (DAMON's monitor, as
the machine is set up) held the router's CPU several times per trial, the router's receive
thread waiting meanwhile, for as long as its 256-slot ring lasts near the calibration
router's capacities, so the ring overflowed whatever the router did
(docs/journal/2026-11-28-housekeeping-off-the-router-cpu.md). Other processes do the same:
this machine's own agent (its init, ``process_api``) runs worker threads above nice 0
that held the router's CPU in kernel code, often enough that the XDP router lost a share
of its load near the loss criterion at any load
(docs/journal/2026-12-07-the-machine-s-agent-on-the-router-cpu.md); the unbound
workqueues' workers too. Benchmarking setups move such work to housekeeping CPUs
(isolcpus, tuna, cset shield, CSIT's CPU isolation); the testbed does that for its
lifetime only:

- every kernel thread, and every thread of a process outside the run's own (the process
  that brings the testbed up and its descendants, which place themselves), whose allowed
  CPUs include the router's CPU and at least one other loses the router's CPU;
- the unbound workqueues' CPU mask (:data:`WORKQUEUE_MASK`) loses it too;

and each gets its own set back when the last testbed that moved it goes down, unless it
has been placed elsewhere meanwhile; so do the threads and processes a moved process
started meanwhile, which inherited its narrowed set. Per-CPU
threads (``ksoftirqd/1``, ``kworker/1:0``), those the kernel does not let move and a
process pinned to the router's CPU alone stay where they are.

What was moved, and the set each had, is in :data:`STATE` with the testbeds that hold it
(thread id and start time, so a later thread given the same id is not taken for one),
written before a thread is moved: a killed run's threads get their sets back from
``routerlab clean`` (or from the next testbed's release), and two testbeds at once give
them back only once both are down.
``ROUTERLAB_HOUSEKEEPING=leave`` leaves everything where it is. The environment record
names what was moved.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path

from routerlab import processes
from routerlab.errors import ParameterError

#: What the testbed moved, the sets to give back and the testbeds holding them (JSON).
STATE = Path(os.environ.get("ROUTERLAB_STATE_DIR", "/run/routerlab")) / "housekeeping.json"
#: Ways to treat the other work: ``move`` (the default) or ``leave``.
MODES = ("move", "leave")
#: Flags of a task (``/proc/PID/stat``, field 9): a kernel thread; one the kernel pins itself.
PF_KTHREAD, PF_NO_SETAFFINITY = 0x00200000, 0x04000000
#: Kernel threads not moved: kthreadd (every new kernel thread would start on its set).
KEPT = ("kthreadd",)
#: Where the unbound workqueues' workers may run (a hex CPU mask; absent on older kernels).
WORKQUEUE_MASK = Path("/sys/devices/virtual/workqueue/cpumask")
#: How :func:`hold` names the unbound workqueues among what it moved.
WORKQUEUES = "unbound workqueues"
#: How :func:`hold` names the threads of other processes among what it moved: one name
#: for them all, so that the environment record stays the same from one experiment to the
#: next (the state file names each with its process).
OTHERS = "other processes"


def mode() -> str:
    """``ROUTERLAB_HOUSEKEEPING`` (default ``move``), checked."""
    m = os.environ.get("ROUTERLAB_HOUSEKEEPING", "move")
    if m not in MODES:
        raise ParameterError("ROUTERLAB_HOUSEKEEPING", f"must be one of {', '.join(MODES)}, got {m!r}")
    return m


@dataclass(frozen=True)
class Thread:
    """A thread: its id, name (a kernel thread's own; :data:`OTHERS` for another's), start
    time (clock ticks since boot, which tells it from a later thread with the same id), the
    CPUs it may run on and, for a thread of user space found by :func:`movable`, its
    process as ``name (pid N)``."""

    pid: int
    name: str
    start: int
    cpus: frozenset[int]
    process: str = ""


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


def _thread(tid: int) -> Thread | None:
    """The thread ``tid`` (kernel or not), or None when it is gone or the kernel keeps it
    where it is."""
    st = _stat(tid)
    if st is None:
        return None
    flags, start = int(st[2][5]), int(st[2][18])
    if flags & PF_NO_SETAFFINITY:
        return None
    try:
        cpus = frozenset(os.sched_getaffinity(tid))
    except OSError:
        return None
    return Thread(tid, st[0] if flags & PF_KTHREAD else OTHERS, start, cpus)


@dataclass(frozen=True)
class Process:
    """A process as ``/proc/PID/stat`` has it: its parent's pid, its start time (clock
    ticks since boot), its name and whether it is a kernel thread."""

    parent: int
    start: int
    name: str
    kernel: bool


def _processes() -> dict[int, Process]:
    """Every process there is now, by pid."""
    out = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and (st := _stat(int(d.name))) is not None:
            out[int(d.name)] = Process(int(st[2][0]), int(st[2][18]), st[0], bool(int(st[2][5]) & PF_KTHREAD))
    return out


def _tids(pid: int) -> list[int]:
    """The thread ids of process ``pid`` (none when it is gone)."""
    try:
        return sorted(int(t.name) for t in Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return []


def _own(procs: dict[int, Process]) -> set[int]:
    """The process running this and its descendants: the run's own, which place themselves."""
    children: dict[int, list[int]] = {}
    for pid, p in procs.items():
        children.setdefault(p.parent, []).append(pid)
    own, todo = set(), [os.getpid()]
    while todo:
        p = todo.pop()
        own.add(p)
        todo += children.get(p, [])
    return own


def movable(cpu: int) -> list[Thread]:
    """The threads that may run on ``cpu`` and on another CPU and may be moved: kernel
    threads, and the threads of processes outside the run's own (:func:`_own`)."""
    procs = _processes()
    own, out = _own(procs), []
    for pid, p in procs.items():
        if pid in own:
            continue
        for tid in _tids(pid):
            t = _thread(tid)
            if t and cpu in t.cpus and len(t.cpus) > 1 and t.name not in KEPT:
                out.append(t if p.kernel else replace(t, process=f"{p.name} (pid {pid})"))
    return sorted(out, key=lambda t: t.pid)


def _mask_cpus(mask: str) -> set[int]:
    """The CPUs of a hex CPU mask as the kernel writes it (``3``, ``ff,ffffffff``)."""
    n = int(mask.strip().replace(",", ""), 16)
    return {i for i in range(n.bit_length()) if n >> i & 1}


def _mask(cpus) -> str:
    """A hex CPU mask of ``cpus`` as the kernel reads it: 32-bit groups, commas between."""
    digits = f"{sum(1 << c for c in cpus):x}"
    digits = digits.zfill(-(-len(digits) // 8) * 8)
    return ",".join(digits[i:i + 8] for i in range(0, len(digits), 8)).lstrip("0,") or "0"


def _hold_workqueues(st: dict, cpu: int) -> bool:
    """Take ``cpu`` out of the unbound workqueues' mask (its old value recorded first);
    whether they are off it now."""
    try:
        now = WORKQUEUE_MASK.read_text().strip()
    except OSError:
        return False
    cpus = _mask_cpus(now)
    if cpu not in cpus:
        return "workqueues" in st
    if len(cpus) < 2:
        return False
    st.setdefault("workqueues", now)
    try:
        WORKQUEUE_MASK.write_text(_mask(cpus - {cpu}) + "\n")
    except OSError:
        return False
    return True


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
        st = {"moved": dict(st.get("moved") or {}), "holders": list(st.get("holders") or []),
              **{k: st[k] for k, kind in (("workqueues", str), ("since", int), ("held", list))
                 if isinstance(st.get(k), kind)}}
        try:
            yield st
        finally:
            if st["moved"] or st["holders"] or "workqueues" in st:
                processes.write_state(STATE, st)
            else:
                STATE.unlink(missing_ok=True)


def _alive(holder) -> bool:
    """Whether a holder's process is alive: the same process, not a later one given its id."""
    if not isinstance(holder, dict) or not isinstance(holder.get("pid"), int):
        return False
    return _start(holder["pid"]) == holder.get("start")


def hold(cpu: int, holder: str) -> list[str]:
    """Move the machine's other work off ``cpu`` for the testbed ``holder`` (a name of
    its own, e.g. ``"<pid>/<testbed prefix>"``: a process may bring up testbeds one inside
    another) until :func:`release`. Returns the names of what is off ``cpu`` now, for
    this testbed or one still up (kernel threads by name, :data:`OTHERS`, :data:`WORKQUEUES`),
    each once; empty in ``leave`` mode."""
    if mode() == "leave":
        return []
    me = os.getpid()
    with _state() as st:
        _give_back_if_unheld(st)
        if not any(h.get("id") == holder for h in st["holders"]):
            st["holders"].append({"id": holder, "pid": me, "start": _start(me)})
        # what moved processes start from now on inherits the narrowed set: given back too
        st.setdefault("since", _ticks_now())
        st["held"] = sorted(set(st.get("held", [])) | {cpu})
        for t in movable(cpu):
            key, before = str(t.pid), st["moved"].get(str(t.pid))
            if before is None or before.get("start") != t.start:
                # recorded before it moves: an interrupted hold still gives it back
                st["moved"][key] = {"name": t.name, "start": t.start, "cpus": sorted(t.cpus)}
                if t.process:
                    st["moved"][key]["process"] = t.process
            try:
                os.sched_setaffinity(t.pid, t.cpus - {cpu})
            except OSError:  # gone, or the kernel keeps it
                if before is None:
                    del st["moved"][key]
        names = {m["name"] for pid, m in st["moved"].items()
                 if (t := _thread(int(pid))) is not None and t.start == m["start"] and cpu not in t.cpus}
        return sorted(names) + ([WORKQUEUES] if _hold_workqueues(st, cpu) else [])


def release(holder: str) -> list[str]:
    """The testbed ``holder`` is down: give the moved threads their sets back when no
    other live testbed holds them. Returns the names given back (idempotent)."""
    if not STATE.exists():
        return []
    with _state() as st:
        st["holders"] = [h for h in st["holders"] if not (isinstance(h, dict) and h.get("id") == holder)]
        return _give_back_if_unheld(st)


def _give_back_if_unheld(st: dict) -> list[str]:
    """Drop dead holders; with none left, give every moved thread its set back, and the
    unbound workqueues their mask."""
    st["holders"] = [h for h in st["holders"] if _alive(h)]
    if st["holders"]:
        return []
    names = []
    if (mask := st.get("workqueues")) is not None:
        try:
            WORKQUEUE_MASK.write_text(f"{mask}\n")
            names.append(WORKQUEUES)
        except FileNotFoundError:  # not this kernel's any more: nothing to give back
            pass
        except OSError:
            mask = None  # kept in the state for the next release or routerlab clean
        if mask is not None:
            del st["workqueues"]
    held = set(st.get("held", []))
    for pid, m in st["moved"].items():
        t = _thread(int(pid))
        # a thread placed elsewhere meanwhile (by itself or its owner) is left there
        if t is not None and t.start == m.get("start") and _narrowed(t.cpus, set(m["cpus"]), held):
            with contextlib.suppress(OSError):
                os.sched_setaffinity(t.pid, m["cpus"])
                names.append(m["name"])
    names += _give_back_inherited(st)
    st["moved"] = {}
    st.pop("since", None)
    st.pop("held", None)
    return sorted(set(names))


def _narrowed(now: set[int], before: set[int], held: set[int]) -> bool:
    """Whether a set ``now`` is ``before`` with some of the ``held`` CPUs taken out, as
    holding them leaves it (and not a set its thread was given since)."""
    return now < before and before - now <= held


def _ticks_now() -> int:
    """Now, in clock ticks since boot (the unit of a task's start time in ``/proc``)."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))


def _give_back_inherited(st: dict) -> list[str]:
    """The threads started while the work was held off ``st["held"]``, in a moved process
    or in a process a moved one started (or a descendant of such), inherited a narrowed
    set: each still on it gets the set its moved process, or nearest moved ancestor, had.
    A process that has its own set (started before the hold and not moved, or placed
    since) breaks the line. Returns :data:`OTHERS` when it gave any back."""
    since, held, moved = st.get("since"), set(st.get("held", [])), st["moved"]
    if since is None or not held or not moved:
        return []
    procs = {pid: p for pid, p in _processes().items() if not p.kernel}

    def origin(pid) -> set[int] | None:
        """The set the threads of ``pid`` had before the hold, if they inherited a narrowed one."""
        while (p := procs.get(pid)) is not None:
            if (m := moved.get(str(pid))) is not None and m.get("start") == p.start:
                return set(m["cpus"])
            if p.start < since:
                return None
            pid = p.parent
        return None

    out = []
    for pid in procs:
        if (cpus := origin(pid)) is None:
            continue
        for tid in _tids(pid):
            t = _thread(tid)
            if t is None or t.start < since or (str(tid) in moved and moved[str(tid)].get("start") == t.start):
                continue
            if _narrowed(set(t.cpus), cpus, held):
                with contextlib.suppress(OSError):
                    os.sched_setaffinity(tid, cpus)
                    out.append(OTHERS)
    return out


def clean() -> list[str]:
    """For ``routerlab clean``: give back what testbeds no longer alive moved."""
    if not STATE.exists():
        return []
    with _state() as st:
        return _give_back_if_unheld(st)
