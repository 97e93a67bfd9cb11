"""The kernel's housekeeping threads kept off the router's CPU while a testbed is up, with
this machine's own kernel threads: moved when it comes up, given back when it goes down,
after a kill -9 by routerlab clean, and once only when two testbeds overlap.

Needs root (moving kernel threads, network namespaces) and a kernel thread that may run on
the router's CPU and another; skipped otherwise, with that reason."""

import os
import subprocess
import sys
import textwrap

import pytest

from routerlab import housekeeping, testbed
from routerlab.errors import ParameterError

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: moving kernel threads")

ROUTER_CPU = testbed.Testbed.router_cpu


@pytest.fixture
def threads():
    """The movable kernel threads now, by pid, with their sets; skips when there are none."""
    if (os.cpu_count() or 1) <= ROUTER_CPU:
        pytest.skip(f"needs CPU {ROUTER_CPU}, the router's")
    found = {t.pid: t for t in housekeeping.movable(ROUTER_CPU)}
    if not found:
        pytest.skip(f"no kernel thread here may run on CPU {ROUTER_CPU} and another: nothing to move")
    return found


def sets(pids):
    """The CPU sets of the threads still alive among ``pids`` now."""
    out = {}
    for pid in pids:
        try:
            out[pid] = frozenset(os.sched_getaffinity(pid))
        except OSError:
            pass
    return out


def test_the_router_cpu_is_left_to_the_router_while_up_and_given_back_after(threads):
    with testbed.Testbed() as tb:
        now = sets(threads)
        assert now and all(ROUTER_CPU not in s for s in now.values())
        assert housekeeping.movable(ROUTER_CPU) == []
        assert set(tb.housekept) >= {threads[p].name for p in now}
        assert f"kernel threads kept off CPU {ROUTER_CPU}: " in tb.chain()
    after = sets(threads)
    assert after == {p: threads[p].cpus for p in after}


def test_wired_straight_to_the_sink_the_generators_cpu_is_kept_free(threads):
    """Measuring the generator's ceiling, the router's CPU idles: the threads go there."""
    gen_cpu = testbed.Testbed.gen_cpu
    with testbed.Testbed(direct=True) as tb:
        assert tb.kept_cpu == gen_cpu != ROUTER_CPU
        now = sets(threads)
        assert now and all(gen_cpu not in s and ROUTER_CPU in s for s in now.values())
        assert f"kernel threads kept off CPU {gen_cpu}: " in tb.chain()
    after = sets(threads)
    assert after == {p: threads[p].cpus for p in after}


def test_two_testbeds_at_once_give_the_cpus_back_when_both_are_down(threads):
    outer = testbed.Testbed()
    with outer:
        with testbed.Testbed():
            pass
        assert all(ROUTER_CPU not in s for s in sets(threads).values())  # the outer one still holds them
    assert sets(threads) == {p: threads[p].cpus for p in sets(threads)}


def test_leave_mode_moves_nothing(threads, monkeypatch):
    monkeypatch.setenv("ROUTERLAB_HOUSEKEEPING", "leave")
    with testbed.Testbed() as tb:
        assert sets(threads) == {p: threads[p].cpus for p in sets(threads)}
        assert tb.housekept == [] and "kernel threads left where they were (leave)" in tb.chain()
    monkeypatch.setenv("ROUTERLAB_HOUSEKEEPING", "pin")
    with pytest.raises(ParameterError, match="ROUTERLAB_HOUSEKEEPING.*move, leave.*'pin'"):
        housekeeping.mode()


RUN = textwrap.dedent("""
    import sys, time
    from routerlab import testbed
    with testbed.Testbed(prefix=sys.argv[1]):
        print("up", flush=True)
        time.sleep(60)
""")


def test_a_killed_run_s_threads_get_their_cpus_back_from_clean(threads):
    prefix = "rl" + os.urandom(3).hex()
    p = subprocess.Popen([sys.executable, "-c", RUN, prefix], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "up"
        assert all(ROUTER_CPU not in s for s in sets(threads).values())
    finally:
        p.kill()
        p.wait()
    assert all(ROUTER_CPU not in s for s in sets(threads).values())  # kill -9 leaves them moved...
    removed = testbed.clean()
    after = sets(threads)
    assert after == {p: threads[p].cpus for p in after}  # ...and routerlab clean gives them back
    assert any("CPUs given back" in r for r in removed)
