"""Fast reroute with ShortCut: short real runs in namespaces (both mechanisms recover and
nothing is left behind) and the summary's arithmetic."""

import os
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from conftest import engine_absent

from routerlab.analysis import reroute
from routerlab.measuring import fastreroute
from routerlab.testbed import interface

root = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("iperf3"),
                          reason="needs root (network namespaces) and iperf3")


def left_behind(prefix):
    """Namespaces and run folders of the run ``prefix`` that still exist (other runs on the
    machine, e.g. a second test session, do not count)."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return ([line for line in out.splitlines() if line.startswith(prefix + "-")]
            + [str(p) for p in interface.STATE_DIR.glob(prefix + "*")])


@root
@pytest.mark.parametrize("variant", ["nft", "ebpf", "p4"])
def test_shortcut_recovers_before_the_control_plane_and_leaves_nothing(variant):
    ok, why = fastreroute.available_variants()
    if variant not in ok:
        engine_absent(why[variant])
    df, ev = fastreroute.run_once(variant, duration=8, fail_at=3, converge_after=3, interval=0.2)
    assert left_behind(ev["prefix"]) == []
    assert ev["looped_destinations"] >= 1  # the switch happened in the packet path, before convergence
    after = df[(df["t"] > 4.5) & (df["t"] < 6)]  # after the failure, before the control plane
    assert after["throughput_bps"].mean() > 0.3 * df[(df["t"] > 1) & (df["t"] < 3)]["throughput_bps"].mean()
    # plain fast reroute loses ~15 pings here (3 s of loop at 5/s); ShortCut at most a few,
    # which on bmv2 are its queue overflowing under the TCP transfer, not the failure
    assert ev["ping_sent"] - ev["ping_received"] <= 5


@root
def test_plain_fast_reroute_loops_until_the_control_plane():
    df, ev = fastreroute.run_once("frr", duration=8, fail_at=3, converge_after=3, interval=0.2)
    assert ev["looped_destinations"] == 0
    assert ev["ping_sent"] - ev["ping_received"] >= 10  # the loop ate the pings until convergence
    base = df[(df["t"] > 1) & (df["t"] < 3)]["throughput_bps"].mean()
    looping = df[(df["t"] > 3.6) & (df["t"] < 5.8)]["throughput_bps"].mean()
    assert looping < 0.1 * base  # the loop carries nothing
    # the path is back at convergence: the pings (one every 0.2 s) answer within a second.
    # TCP's throughput is not the test: it comes back at its next retransmission, whose
    # timeout doubles through the loop (the one due about when the control plane converges
    # can go just before it, and the next is 3.2 s later: the run once ended first)
    after = df[(df["t"] > ev["converge_s"]) & (df["t"] <= ev["converge_s"] + 1)]
    assert after["rtt_ms"].notna().any()


def test_summary_outage_recovery_and_intervals():
    t = np.round(np.arange(0.2, 20.01, 0.2), 3)
    rows = []
    for run, rec in enumerate((1.0, 2.0, 3.0)):
        thr = np.where((t > 10) & (t <= 10 + rec), 0.0, 100.0)
        rows.append(pd.DataFrame({"t": t, "throughput_bps": thr, "rtt_ms": np.where(t > 10, 5.0 + run, 1.0),
                                  "cpu_busy": 0.5, "cpu_softirq": 0.1, "variant": "x", "run": run}))
    runs = pd.DataFrame({"variant": "x", "run": [0, 1, 2], "ping_sent": 100, "ping_received": [99, 98, 97]})
    table, per_run = reroute.summary(pd.concat(rows), runs)
    # outage: the first sample back above half the level before; recovery: the 1-s moving
    # average (5 samples) back within 10% of it
    assert per_run["outage_s"].round(1).tolist() == [1.2, 2.2, 3.2]
    assert per_run["recovery_s"].round(1).tolist() == [2.0, 3.0, 4.0]
    row = table.iloc[0]
    assert row["outage_s"] == pytest.approx(2.2) and row["outage_s_ci95"] == pytest.approx(4.303 / np.sqrt(3), rel=1e-3)
    assert row["rtt_spike_ms"] == pytest.approx(5.0) and row["ping_lost"] == pytest.approx(2.0)


def test_timeseries_figure_marks_the_failure():
    import matplotlib.pyplot as plt

    from routerlab.analysis import plots

    t = np.round(np.arange(0.2, 20.01, 0.2), 3)
    df = pd.concat([pd.DataFrame({"t": t, "throughput_bps": np.where((t > 10) & (t < 12), 0.0, 1e9 * (v + 1)),
                                  "rtt_ms": 0.1, "cpu_busy": 0.5, "variant": name, "run": r})
                    for v, name in enumerate(("frr", "nft")) for r in range(2)])
    fig = plots.reroute_timeseries(df, fail_at=10.0)
    top = fig.axes[0]
    assert len(fig.axes) == 3
    lines = [line for line in top.get_lines() if len(line.get_xdata())]
    assert any(line.get_xdata()[0] == 10.0 and line.get_linestyle() == ":" for line in lines)
    # relative throughput: both variants at 1.0 before the failure, whatever their speed
    curves = [line for line in lines if len(line.get_xdata()) > 2]
    assert len(curves) == 2
    assert all(abs(y - 1.0) < 1e-9 for line in curves for x, y in zip(*line.get_data()) if 3 < x < 9)
    plt.close(fig)


def test_experiment_writes_each_run_and_resumes(tmp_path, monkeypatch):
    calls = []

    def fake_run_once(variant, **kw):
        calls.append(variant)
        return (pd.DataFrame({"t": [0.2, 0.4], "throughput_bps": [1.0, 2.0], "rtt_ms": [0.1, 0.2],
                              "cpu_busy": [0.1, 0.1]}),
                {"fail_s": 0.3, "converge_s": 0.4, "looped_destinations": 0, "ping_sent": 2, "ping_received": 2})

    monkeypatch.setattr(fastreroute, "run_once", fake_run_once)
    fastreroute.experiment(("frr", "nft"), runs=2, out=tmp_path)
    assert sorted(calls) == ["frr", "frr", "nft", "nft"] and calls[:2] == ["frr", "nft"] and calls[2:] == ["nft", "frr"]
    calls.clear()
    samples, runs = fastreroute.experiment(("frr", "nft"), runs=3, out=tmp_path)  # one more round: only it runs
    assert sorted(calls) == ["frr", "nft"]
    assert len(pd.read_csv(tmp_path / "runs.csv")) == 6 and len(samples) == 12 and len(runs) == 6
