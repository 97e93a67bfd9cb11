"""The fast-reroute experiment's results (``datasets/fast-reroute/``): per variant, how long
the outage and the recovery lasted, and the spikes in RTT and load, with their intervals
over the runs. :mod:`routerlab.measuring.fastreroute` measures them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from routerlab.analysis import stats

VARIANTS = ("frr", "nft", "ebpf", "p4")


def summary(samples: pd.DataFrame, runs: pd.DataFrame, *, fail_at: float = 10.0, within: float = 0.10,
            window: float = 1.0):
    """Per variant, with Student-t 95% intervals over the runs:

    - ``outage_s``: from the failure until throughput is back above half its mean before
      the failure (connectivity restored);
    - ``recovery_s``: from the failure until the ``window``-second moving average of
      throughput is back within ``within`` of its mean before the failure (the issue's
      definition). On a busy VM, 1-second throughput varies by 20-30% without any failure,
      so this one is noisy;
    - ``rtt_spike_ms``: the largest RTT after the failure minus the median before;
    - ``load_spike``: the largest CPU busy fraction after the failure minus the mean before;
    - ``ping_lost``: ping probes without a reply in the run.

    Before = the samples from 2 s to the failure. NaN where a run never got back.
    """
    per_run = []
    for (v, r), g in samples.groupby(["variant", "run"]):
        g = g.sort_values("t")
        step = float(g["t"].diff().median() or 0.2)
        before = g[(g["t"] > 2) & (g["t"] <= fail_at)]
        base = before["throughput_bps"].mean()
        after = g["t"] > fail_at
        roll = g["throughput_bps"].rolling(max(1, int(round(window / step))), min_periods=1).mean()

        def first(mask):
            t = g.loc[after & mask, "t"]
            return float(t.iloc[0] - fail_at) if len(t) else np.nan

        outage = first(g["throughput_bps"] >= 0.5 * base)
        # the moving average must also have started after the failure, so that it does not
        # simply carry the level from before
        recovery = first((roll >= (1 - within) * base) & (g["t"] >= fail_at + window))
        per_run.append({"variant": v, "run": r, "outage_s": outage, "recovery_s": recovery,
                        "rtt_spike_ms": g.loc[after, "rtt_ms"].max() - before["rtt_ms"].median(),
                        "load_spike": g.loc[after, "cpu_busy"].max() - before["cpu_busy"].mean()})
    pr = pd.DataFrame(per_run).merge(runs[["variant", "run", "ping_sent", "ping_received"]], on=["variant", "run"])
    pr["ping_lost"] = pr["ping_sent"] - pr["ping_received"]
    rows = []
    for v, g in pr.groupby("variant", sort=False):
        row = {"variant": v, "runs": len(g)}
        for col in ("outage_s", "recovery_s", "rtt_spike_ms", "load_spike", "ping_lost"):
            row[col], row[f"{col}_ci95"] = stats.mean_interval(g[col])
        row["unrecovered_runs"] = int(g["recovery_s"].isna().sum())
        rows.append(row)
    return pd.DataFrame(rows), pr
