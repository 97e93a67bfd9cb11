"""Commands a testbed runs, and the counters it reads: links, CPUs, veth queues, NAPI threads."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time

from routerlab.errors import TestbedError

#: What journals each command :func:`sh` runs, before and after it (``before(argv, input)``,
#: ``after(ok)``): a testbed host's open journal of changes sets it
#: (:mod:`routerlab.testbed.hostchanges`); None, the rule, journals nothing.
journal = None


def sh(*args: str, input: str | None = None, check: bool = True, timeout: float = 120) -> str:
    """Run a command (argv), return its stdout; raise :class:`TestbedError` naming it.
    On a host of a testbed beyond one machine, what it changes is journalled first
    (:mod:`routerlab.testbed.hostchanges`)."""
    if journal is not None:
        journal.before(list(args), input)
    # a command that times out or is interrupted may have changed something: its undo stays
    p = subprocess.run(list(args), input=input, capture_output=True, text=True, timeout=timeout)
    if journal is not None:
        journal.after(p.returncode == 0)
    if check and p.returncode != 0:
        raise TestbedError(f"{' '.join(args)[:200]}: {p.stderr.strip() or p.stdout.strip()}")
    return p.stdout


def nsexec(ns: str, *args: str, **kw) -> str:
    """Run a command inside namespace ``ns``."""
    return sh("ip", "netns", "exec", ns, *args, **kw)


def link_stats(ns: str, dev: str) -> dict:
    """Kernel counters of a link (packets, drops), as ints."""
    out = json.loads(sh("ip", "-n", ns, "-s", "-j", "link", "show", "dev", dev))
    s = out[0]["stats64"]
    return {"rx_packets": s["rx"]["packets"], "rx_dropped": s["rx"]["dropped"],
            "tx_packets": s["tx"]["packets"], "tx_dropped": s["tx"]["dropped"]}


def cpu_times() -> dict[str, list[int]]:
    """Per-CPU jiffies from /proc/stat: name -> [user, nice, system, idle, iowait, irq, softirq, steal]."""
    out = {}
    with open("/proc/stat") as fh:
        for line in fh:
            if line.startswith("cpu"):
                parts = line.split()
                out[parts[0]] = [int(x) for x in parts[1:9]]
    return out


#: The unit of :func:`cpu_times`: clock ticks per second (USER_HZ, 100 on Linux whatever
#: the kernel's HZ).
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_usage(before: dict, after: dict, cpu: int) -> tuple[float, float]:
    """Busy fraction of ``cpu`` (ratio in [0, 1]: everything but idle and iowait) and the
    steal fraction over all CPUs between two :func:`cpu_times` samples."""
    busy = cpu_split(before, after, cpu)["busy"]
    da = [a - b for a, b in zip(after["cpu"], before["cpu"])]
    steal = da[7] / (sum(da) or 1)
    return busy, steal


def cpu_split(before: dict, after: dict, cpu: int) -> dict[str, float]:
    """How ``cpu`` spent the time between two :func:`cpu_times` samples.

    Returns
    -------
    dict
        ``busy``: everything but idle and iowait, steal included (ratio in [0, 1], as
        :func:`cpu_usage` has it); ``steal``: the time the hypervisor ran something else
        while this CPU had work (ratio in [0, 1], of this CPU alone); ``work_s``: the CPU's
        own work, user, nice, system, irq and softirq time (seconds; steal left out), to
        one clock tick (1 / :data:`CLOCK_TICKS` s).
    """
    d = [a - b for a, b in zip(after[f"cpu{cpu}"], before[f"cpu{cpu}"])]
    total = sum(d) or 1
    return {"busy": (total - d[3] - d[4]) / total, "steal": d[7] / total,
            "work_s": (d[0] + d[1] + d[2] + d[5] + d[6]) / CLOCK_TICKS}


def veth_queue_counters(ns: str, dev: str) -> dict[str, int]:
    """A veth's per-queue counters (``ethtool -S``: ``rx_queue_0_xdp_drops``, ...), each
    summed over its queues, by name without the queue (``xdp_drops``)."""
    out: dict[str, int] = {}
    for line in nsexec(ns, "ethtool", "-S", dev).splitlines():
        m = re.match(r"\s*(?:rx|tx)_queue_\d+_(\w+):\s*(\d+)", line)
        if m:
            out[m.group(1)] = out.get(m.group(1), 0) + int(m.group(2))
    return out


def receive_in_thread(ns: str, dev: str, cpu: int, priority: int) -> None:
    """Make ``dev`` (in namespace ``ns``) receive through threaded NAPI, its threads pinned
    to ``cpu`` at real-time priority ``priority`` (SCHED_FIFO)."""
    nsexec(ns, "sh", "-c", f"echo 1 > /sys/class/net/{dev}/threaded")
    for pid in napi_threads(dev):
        sh("taskset", "-pc", str(cpu), pid)
        sh("chrt", "-f", "-p", str(priority), pid)


def napi_threads(dev: str, timeout_s: float = 1.0) -> list[str]:
    """The pids of the threaded NAPI kthreads of ``dev`` (``napi/<dev>-<id>``), waiting up
    to ``timeout_s`` for the kernel to start them."""
    deadline = time.monotonic() + timeout_s
    while True:
        pids = sh("pgrep", "-f", f"napi/{dev}-", check=False).split()
        if pids or time.monotonic() > deadline:
            if not pids:
                raise TestbedError(f"no threaded NAPI kthread for {dev}")
            return pids
        time.sleep(0.05)


def run_ns(pids) -> int | None:
    """How long the tasks ``pids`` have run so far, added up (nanoseconds, the scheduler's
    own clock, :func:`task_times`: exact, where ``/proc/stat`` samples at the tick); None
    when none of them is there."""
    times = task_times(pids)
    return sum(run for run, _ in times.values()) if times else None


def task_times(pids) -> dict[tuple[int, int], tuple[int, int]]:
    """The scheduler's clocks of every thread of the processes ``pids`` and of their
    descendants (``/proc/<pid>/task/<tid>/schedstat``, the children from
    ``.../children``): (thread id, its start time in clock ticks since boot, so that a
    reused id is another thread) -> (how long it has run, how long it has waited ready to
    run while another task had its CPU), nanoseconds. A process gone by now gives nothing."""
    out, todo, seen = {}, [int(p) for p in pids], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            base = f"/proc/{pid}/task/{tid}"
            try:
                with open(f"{base}/stat") as fh:
                    start = int(fh.read().rsplit(")", 1)[1].split()[19])  # field 22, after the name
                with open(f"{base}/schedstat") as fh:
                    run, wait = fh.read().split()[:2]
                out[(int(tid), start)] = (int(run), int(wait))
                with open(f"{base}/children") as fh:
                    todo += [int(c) for c in fh.read().split()]
            except (OSError, ValueError, IndexError):
                continue
    return out


def task_change(before: dict, after: dict) -> tuple[int, int] | None:
    """How long the threads of two :func:`task_times` readings ran and waited between
    them (ns, ns), added up over the threads alive at both (one started or ended between
    them is left out); None when no thread is in both."""
    common = before.keys() & after.keys()
    if not common:
        return None
    return (sum(after[t][0] - before[t][0] for t in common), sum(after[t][1] - before[t][1] for t in common))


def u64(value) -> int:
    """A per-CPU value as bpftool's JSON gives it: a number, or its bytes in hex."""
    if isinstance(value, int):
        return value
    return int.from_bytes(bytes(int(b, 16) for b in value), "little")


def own_namespace(ns: str) -> bool:
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


def delete_namespace(ns: str):
    """Delete the named network namespace ``ns``, killing what still runs in it first (unless
    it is this process's own or the machine's first: :func:`own_namespace`)."""
    if own_namespace(ns):
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
