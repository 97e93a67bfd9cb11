"""``bench idle``: how idle CPUs wait, side by side in one run. The same sweep with idle
CPUs polling (the CPU latency request held at 0 µs, the testbed's default) and with the
kernel's idle states, interleaved round by round so that both meet the same host.

Each trial is measured once (no repeat of a disturbed trial), so what the host does shows
in the numbers rather than in the repeats that hide it. The sweeps are the experiments
``<engine>-<scenario>-<mode>-<round>`` of one dataset folder, at the same loads in pps
(one generator ceiling, measured first in the default mode).

A sweep counts for the mode its CPUs were in, as its environment record says it
(:attr:`routerlab.testbed.namespaces.NamespaceTestbed.idle_held`), not the mode it asked for: a poll that
could not be held, or "os" while another process held the request at 0 µs, is left out
and named. Per mode the report gives the mean steal (share of CPU time the hypervisor
took, over all CPUs), the share of trials with steal above the validation threshold, the
trials that lost packets and the mean loss ratio, per load and over the loads both modes
measured; steal and loss also as ratios, poll over os.
"""

from __future__ import annotations

import math
from pathlib import Path

from routerlab.errors import DataFormatError
from routerlab.progress import Progress, silent

#: The defaults of ``bench idle``: loads as fractions of the generator's ceiling, trials per
#: load, seconds per trial, and rounds (one sweep per mode each).
LOADS_FRAC = "0.04,0.1,0.2"
RUNS = 10
DURATION_S = 2.0
ROUNDS = 2
#: The order of the modes within a round (:data:`routerlab.testbed.settings.CPU_IDLE_MODES`).
MODES = ("os", "poll")


def run(engine: str, scenario: str = "single-flow", out=Path("runs/bench-idle"), *, loads_frac: str = LOADS_FRAC,
        ceiling_pps: float | None = None, runs: int = RUNS, duration: float = DURATION_S, rounds: int = ROUNDS,
        announce=None, settings=None, progress: Progress = silent):
    """Sweep ``engine`` in ``scenario`` ``rounds`` times in each idle mode, alternating, into
    the dataset ``out`` (each sweep resumed if there), and return :func:`read` of it. One
    generator ceiling for all: ``ceiling_pps``, else the one the first sweep recorded, else
    measured now in the default mode of ``settings`` (the testbed's,
    :class:`routerlab.testbed.settings.Settings`; None: the environment's). Needs root.
    ``progress`` is told each sweep's trials."""
    from dataclasses import replace

    from routerlab.measuring import measurement
    from routerlab.testbed.settings import Settings

    settings = settings or Settings()
    _, sc = measurement.resolve(engine, scenario, settings=settings)
    name = f"{engine}-{sc.name}"
    ceiling = (ceiling_pps or measurement.recorded_ceiling(out, f"{name}-{MODES[0]}-1", settings)
               or measurement.generator_ceiling(sc, announce, settings))
    for r in range(1, rounds + 1):
        for mode in MODES:
            measurement.measure(measurement.Request(engine, sc, out, loads_frac=loads_frac, ceiling_pps=ceiling,
                                                    runs=runs, duration=duration, experiment=f"{name}-{mode}-{r}",
                                                    max_repeats=0, settings=replace(settings, cpu_idle=mode)),
                                announce=announce, progress=progress)
    return read(out, name)


def read(folder, name: str | None = None):
    """The trials of every ``<name>-<mode>-<round>`` sweep in ``folder`` (all names when
    None), with columns ``mode`` (asked), ``round``, ``idle`` (how the environment record
    says the CPUs idled), ``held`` (the mode they were in: the first word of ``idle``),
    ``flagged`` (steal above the threshold) and ``loss`` (ratio)."""
    import pandas as pd

    from routerlab.analysis import datasets, stats
    from routerlab.testbed.namespaces import IDLE_NOTE

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
    idle = pinning.fillna("").str.extract(f"{IDLE_NOTE}(.*)$")[0]
    t["idle"] = t["experiment"].map(idle).fillna("not recorded")
    t["held"] = t["idle"].str.extract(r"^(os|poll) ")[0]
    t["round"] = t["round"].astype(int)
    t["flagged"] = stats.flag(t["steal_flagged"]).to_numpy()
    t["loss"] = stats.trial_loss(t["tx"].to_numpy(), t["rx"].to_numpy())
    return t


def summary(trials):
    """Per mode held and load: ``trials``, mean ``steal``, share ``flagged``, ``lossy``
    trials and mean ``loss``; then per mode a row over the loads both modes measured
    (``offered_pps`` NaN). Trials whose CPUs were not in the mode asked are left out."""
    import pandas as pd

    t = trials[trials["held"] == trials["mode"]]
    both = set.intersection(*(set(t.loc[t["mode"] == m, "offered_pps"]) for m in MODES))
    named = dict(trials=("loss", "size"), steal=("steal", "mean"), flagged=("flagged", "mean"),
                 lossy=("lost", lambda s: int((s > 0).sum())), loss=("loss", "mean"))
    per_load = t.groupby(["mode", "offered_pps"]).agg(**named).reset_index()
    overall = t[t["offered_pps"].isin(both)].groupby("mode").agg(**named).reset_index()
    overall["offered_pps"] = math.nan
    return pd.concat([per_load, overall], ignore_index=True)


def _ratio(poll: float, os_: float) -> str:
    """poll / os as "0.08x"; "-" when both are 0 or either is unknown."""
    if math.isnan(poll) or math.isnan(os_) or (poll == 0 and os_ == 0):
        return "-"
    return "inf" if os_ == 0 else f"{poll / os_:.2f}x"


def report(trials) -> str:
    """Per mode the trials counted and how their CPUs idled; the side-by-side table (loads
    ascending, then all loads both modes measured) and the ratios poll / os; what was left out."""
    import pandas as pd

    lines = []
    for mode in MODES:
        asked = trials[trials["mode"] == mode]
        counted = asked[asked["held"] == mode]
        rounds = counted["round"].nunique()
        lines.append(f"{mode}: {len(counted)} trials in {rounds} round{'s' * (rounds != 1)}"
                     + (f"; idle CPUs: {'; '.join(sorted(counted['idle'].unique()))}" if len(counted) else ""))
        for idle, g in asked[asked["held"] != mode].groupby("idle"):
            lines.append(f"  left out: {len(g)} trials of {', '.join(sorted(g['experiment'].unique()))}, "
                         f"idle CPUs: {idle}")
    s = summary(trials)
    rows, one_mode = [], []
    for load, g in s.groupby(s["offered_pps"].fillna(math.inf), sort=True):
        by = g.set_index("mode")
        if not set(MODES) <= set(by.index):
            one_mode.append(f"{load:,.0f} pps ({', '.join(by.index)} only)")
            continue
        o, p = by.loc["os"], by.loc["poll"]
        rows.append({"load pps": "all" if load == math.inf else f"{load:,.0f}",
                     "trials": f"{o.trials:.0f}/{p.trials:.0f}",
                     "steal os": f"{o.steal:.2%}", "steal poll": f"{p.steal:.2%}", "ratio": _ratio(p.steal, o.steal),
                     "flagged os": f"{o.flagged:.0%}", "flagged poll": f"{p.flagged:.0%}",
                     "lossy os": f"{o.lossy:.0f}", "lossy poll": f"{p.lossy:.0f}",
                     "loss os": f"{o.loss:.3%}", "loss poll": f"{p.loss:.3%}", "loss ratio": _ratio(p.loss, o.loss)})
    if rows:
        lines += pd.DataFrame(rows).to_string(index=False).splitlines()
    else:
        lines.append("no load measured in both modes: nothing to compare")
    if one_mode:
        lines.append("measured in one mode only, not compared (nor in 'all'): " + "; ".join(one_mode))
    lines.append("steal: share of CPU time the hypervisor took (all CPUs), mean per trial; flagged: steal above the "
                 "validation threshold; lossy: trials that lost packets; loss: mean loss ratio; ratio: poll / os. "
                 "Each trial measured once, modes alternating round by round.")
    return "\n".join(lines)
