"""``bench idle``: how idle CPUs wait, side by side in one run. The same sweep with idle
CPUs polling (the CPU latency request held at 0 µs, the testbed's default) and with the
kernel's idle states, interleaved round by round so that both meet the same host.

Each trial is measured once (no repeat of a disturbed trial), so what the host does shows
in the numbers rather than in the repeats that hide it. The sweeps are the experiments
``<engine>-<scenario>-<mode>-<round>`` of one dataset folder, at the same loads in pps.

Per mode the report gives the mean steal (share of CPU time the hypervisor took, over all
CPUs), the share of trials with steal above the validation threshold, the share
``disturbed``, and per load the trials that lost packets and the mean loss ratio; then
each as a ratio, poll over os.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import DataFormatError

#: The defaults of ``bench idle``: loads as fractions of the generator's ceiling, trials per
#: load, seconds per trial, and rounds (one sweep per mode each).
LOADS_FRAC = "0.1,0.25,0.5"
RUNS = 10
DURATION_S = 2.0
ROUNDS = 2
#: The order of the modes within a round (:data:`routerlab.testbed.CPU_IDLE_MODES`).
MODES = ("os", "poll")


def run(engine: str, scenario: str = "single-flow", out=Path("runs/bench-idle"), *, loads_frac: str = LOADS_FRAC,
        ceiling_pps: float | None = None, runs: int = RUNS, duration: float = DURATION_S, rounds: int = ROUNDS,
        announce=None):
    """Sweep ``engine`` in ``scenario`` ``rounds`` times in each idle mode, alternating, into
    the dataset ``out`` (each sweep resumed if there), and return :func:`read` of it. One
    generator ceiling for all (``ceiling_pps``, else one recorded, else measured). Needs root."""
    from .. import measuring, testbed

    _, sc = measuring.resolve(engine, scenario)
    name = f"{engine}-{sc.name}"
    ceiling = ceiling_pps or measuring.recorded_ceiling(out)
    for r in range(1, rounds + 1):
        for mode in MODES:
            with testbed.cpu_idle(mode):
                measuring.measure(engine, sc, out, loads_frac=loads_frac, ceiling_pps=ceiling, runs=runs,
                                  duration=duration, experiment=f"{name}-{mode}-{r}", max_repeats=0,
                                  announce=announce)
            ceiling = ceiling or measuring.recorded_ceiling(out)
    return read(out, name)


def read(folder, name: str | None = None):
    """The trials of every ``<name>-<mode>-<round>`` sweep in ``folder`` (all names when
    None), with columns ``mode``, ``round``, ``idle`` (as the environment record says the
    CPUs idled: a poll that could not be held reads "os (poll asked; ...)") and ``loss``
    (ratio)."""
    import pandas as pd

    from .. import datasets, stats

    ds = datasets.read(folder)
    t = ds.trials
    parts = t["experiment"].str.extract(r"^(?P<name>.+)-(?P<mode>os|poll)-(?P<round>\d+)$")
    t = t.join(parts)
    t = t[t["mode"].notna() & ((t["name"] == name) if name else True)].copy()
    if t.empty:
        raise DataFormatError(Path(folder) / "trials.csv", None,
                              f"no sweep named {name or '<name>'}-os-N or -poll-N (bench idle's)")
    rec = ds.experiments.set_index("experiment")
    pinning = rec["pinning"] if "pinning" in rec else pd.Series("", index=rec.index, dtype=str)
    idle = pinning.fillna("").str.extract(r"idle CPUs: (.*)$")[0]
    t["idle"] = t["experiment"].map(idle).fillna("not recorded")
    t["round"] = t["round"].astype(int)
    t["loss"] = stats.trial_loss(t["tx"].to_numpy(), t["rx"].to_numpy())
    return t


def summary(trials):
    """Per mode and load: trials, mean steal, shares flagged and disturbed, lossy trials,
    mean loss; and a row per mode over all loads (``offered_pps`` NaN)."""
    import pandas as pd

    def agg(g):
        return pd.Series({"trials": len(g), "steal": g["steal"].mean(), "flagged": g["steal_flagged"].astype(bool).mean(),
                          "disturbed": g["disturbed"].fillna(False).astype(bool).mean(),
                          "lossy": int((g["lost"] > 0).sum()), "loss": g["loss"].mean()})

    per_load = trials.groupby(["mode", "offered_pps"]).apply(agg, include_groups=False).reset_index()
    overall = trials.groupby("mode").apply(agg, include_groups=False).reset_index()
    overall["offered_pps"] = float("nan")
    return pd.concat([per_load, overall], ignore_index=True)


def _ratio(poll: float, os_: float) -> str:
    if os_ == 0:
        return "-" if poll == 0 else "inf"
    return f"{poll / os_:.2f}x"


def report(trials) -> str:
    """The side-by-side table and the ratios poll / os."""
    import pandas as pd

    s = summary(trials)
    lines = []
    for mode in MODES:
        held = sorted(trials.loc[trials["mode"] == mode, "idle"].unique())
        rounds = trials.loc[trials["mode"] == mode, "round"].nunique()
        lines.append(f"{mode}: {int((trials['mode'] == mode).sum())} trials in {rounds} round{'s' * (rounds != 1)}; "
                     f"idle CPUs: {'; '.join(held)}")
    rows = []
    # loads ascending, then the row over all loads
    for load, g in s.groupby(s["offered_pps"].fillna(float("inf")), sort=True):
        by = g.set_index("mode")
        if not set(MODES) <= set(by.index):
            continue
        o, p = by.loc["os"], by.loc["poll"]
        rows.append({"load pps": "all" if load == float("inf") else f"{load:,.0f}", "trials": f"{o.trials:.0f}/{p.trials:.0f}",
                     "steal os": f"{o.steal:.2%}", "steal poll": f"{p.steal:.2%}", "ratio": _ratio(p.steal, o.steal),
                     "flagged os": f"{o.flagged:.0%}", "flagged poll": f"{p.flagged:.0%}",
                     "lossy os": f"{o.lossy:.0f}", "lossy poll": f"{p.lossy:.0f}",
                     "loss os": f"{o.loss:.3%}", "loss poll": f"{p.loss:.3%}", "loss ratio": _ratio(p.loss, o.loss)})
    if rows:
        lines += pd.DataFrame(rows).to_string(index=False).splitlines()
    lines.append("steal: share of CPU time the hypervisor took (all CPUs), mean per trial; flagged: steal above the "
                 "validation threshold; lossy: trials that lost packets; loss: mean loss ratio; ratio: poll / os. "
                 "Each trial measured once, modes alternating round by round.")
    return "\n".join(lines)
