"""The 100GE router comparison tables, published and ours.

The source ("Performance Measurements of Linux, DanOS, VyOS, VPP and Linux XDP at 100GE",
``datasets/reference/linux-danos-vyos-100ge.csv``) shows one table per scenario: rows are
routers, columns offered Mpps, cells forwarding loss, coloured green (0.0%), yellow (above 0
and below 5%), red (5% or more) and grey (not tested). Ours measures the same scenarios
(the presets named below) with every engine present, at loads that are fractions of the
generator's ceiling, so that a table reads the same on any machine. A cell an engine
cannot do is grey, with the reason, in ``cells.csv``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import datasets, scenarios, stats
from .errors import EngineNotFound, ParameterError, RouterlabError

#: Published scenario -> our preset.
SCENARIOS = {"single_flow_50fw": "single-flow-fw50", "gre_multiflow_50fw": "gre-multiflow-fw50",
             "routes_900k_multiflow_50fw": "routes900k-multiflow-fw50", "ddos_drop_50pct": "ddos-drop50"}
ENGINES = ("linux", "nft", "ebpf", "click", "fastclick", "fastclick-dpdk", "bmv2")
FRACTIONS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)


def colour(loss_pct: float) -> str:
    """The source's colour for a loss in percent: green 0.0 (or below: more received than
    sent), yellow (0, 5), red >= 5, grey for a cell not tested (NaN)."""
    if loss_pct is None or np.isnan(loss_pct):
        return "grey"
    if loss_pct <= 0:
        return "green"
    return "yellow" if loss_pct < 5 else "red"


def published() -> pd.DataFrame:
    """The published tables in long form: scenario, router, offered (Mpps), loss_pct
    (NaN = not tested), colour."""
    df = datasets.reference("linux-danos-vyos-100ge").rename(columns={"offered_mpps": "offered"})
    df["colour"] = [colour(x) for x in df["loss_pct"]]
    return df


def cell_plan(engine_names=ENGINES, scenario_names=tuple(SCENARIOS.values())) -> pd.DataFrame:
    """Which (engine, scenario) cells can run here, and why not where not: engine, scenario,
    runnable, reason."""
    from . import measuring

    rows = []
    for sname in scenario_names:
        sc = scenarios.load(sname)
        for e in engine_names:
            try:
                measuring.resolve(e, sc)
                rows.append({"engine": e, "scenario": sname, "runnable": True, "reason": ""})
            except (EngineNotFound, ParameterError) as err:
                rows.append({"engine": e, "scenario": sname, "runnable": False, "reason": str(err)})
    return pd.DataFrame(rows)


def campaign(out, engine_names=ENGINES, scenario_names=tuple(SCENARIOS.values()), *, fractions=FRACTIONS,
            runs: int = 5, duration: float = 2.0, ceiling_pps: float | None = None, announce=None) -> Path:
    """Measure every runnable cell into the dataset ``out`` (resuming what is there) and
    write ``cells.csv`` with the reason for every cell not run. Needs root."""
    from . import measuring

    announce = announce or (lambda msg: None)
    # one ceiling (64-byte frames) for every cell: the tables' columns are its fractions;
    # a resumed campaign keeps the one it started with, so its loads stay the same
    ceiling_pps = ceiling_pps or measuring.recorded_ceiling(out)
    if ceiling_pps is None:
        ceiling_pps = measuring.generator_ceiling(announce=announce)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    plan = cell_plan(engine_names, scenario_names)
    plan.to_csv(out / "cells.csv", index=False)
    announce(f"{int(plan['runnable'].sum())} cells to measure, {int((~plan['runnable']).sum())} grey")
    for i, row in enumerate(plan.itertuples()):
        if not row.runnable:
            continue
        try:
            measuring.measure(row.engine, row.scenario, out, loads_frac=",".join(map(str, fractions)),
                              ceiling_pps=ceiling_pps, runs=runs, duration=duration,
                              experiment=f"{row.engine}-{row.scenario}", announce=announce)
        except RouterlabError as e:
            # an engine that fails in one scenario (e.g. cannot load 900k routes in time) is a
            # grey cell with its reason, not the end of the campaign
            plan.loc[i, ["runnable", "reason"]] = [False, f"failed: {e}"]
            plan.to_csv(out / "cells.csv", index=False)
            announce(f"{row.engine}-{row.scenario}: failed: {e}")
    return out


def ours(folder) -> pd.DataFrame:
    """Our tables in long form from a measured folder: scenario (published name), router
    (engine), offered (fraction of the ceiling), offered_pps, loss_pct (mean of the K
    trials), ci95_pct (half-width of the Student-t interval), runs, colour; grey rows for
    the cells not run, with their reason."""
    folder = Path(folder)
    ds = datasets.read(folder)
    meta = ds.experiments.set_index("experiment")
    back = {v: k for k, v in SCENARIOS.items()}
    rows = []
    for exp, g in ds.trials.groupby("experiment", sort=False):
        g = g[~g.get("generator_limited", pd.Series(False, index=g.index)).astype(bool)]
        ceiling = float(meta.loc[exp, "generator_ceiling_pps"])
        engine = meta.loc[exp, "engine"]
        sname = exp[len(engine) + 1:]
        for load, t in g.groupby("offered_pps"):
            # a trial that received more than was sent keeps its negative loss (stats' rule)
            plr, half = stats.mean_interval(stats.trial_loss(t["tx"].to_numpy(), t["rx"].to_numpy()))
            rows.append({"scenario": back.get(sname, sname), "router": engine, "offered": round(load / ceiling, 2),
                         "offered_pps": load, "loss_pct": 100 * plr, "ci95_pct": 100 * half,
                         "runs": len(t), "reason": ""})
    cells = datasets.read_kind(folder, "cells.csv", missing_ok=True)
    for c in cells.itertuples():
        if not c.runnable:
            rows.append({"scenario": back.get(c.scenario, c.scenario), "router": c.engine, "offered": np.nan,
                         "offered_pps": np.nan, "loss_pct": np.nan, "ci95_pct": np.nan, "runs": 0,
                         "reason": c.reason})
    df = pd.DataFrame(rows)
    df["colour"] = [colour(x) for x in df["loss_pct"]]
    return df


def grid(df: pd.DataFrame, scenario: str) -> pd.DataFrame:
    """One scenario as the source draws it: routers x offered, loss in percent (NaN = grey)."""
    d = df[df["scenario"] == scenario]
    g = d.dropna(subset=["offered"]).pivot_table(index="router", columns="offered", values="loss_pct",
                                                 aggfunc="mean")
    for r in d.loc[d["offered"].isna(), "router"]:
        if r not in g.index:
            g.loc[r] = np.nan
    return g


def capacity(df: pd.DataFrame, limit_pct: float = 0.5) -> pd.DataFrame:
    """Per scenario and router, the highest offered load with loss below ``limit_pct``
    (NaN if none, or not tested)."""
    ok = df[df["loss_pct"] < limit_pct]
    cap = ok.groupby(["scenario", "router"])["offered"].max()
    allr = df[["scenario", "router"]].drop_duplicates().set_index(["scenario", "router"])
    return allr.join(cap.rename("capacity")).reset_index()


def orderings(published_df: pd.DataFrame, ours_df: pd.DataFrame, limit_pct: float = 0.5) -> pd.DataFrame:
    """Routers ranked per scenario by :func:`capacity`, published next to ours (one
    string per scenario, best first; routers not tested are left out)."""
    rows = []
    for label, df in (("published", published_df), ("ours", ours_df)):
        cap = capacity(df, limit_pct).dropna(subset=["capacity"])
        for s, g in cap.groupby("scenario"):
            g = g.sort_values("capacity", ascending=False)
            rows.append({"scenario": s, "source": label,
                         "ranking (highest load with < 0.5% loss)": " > ".join(
                             f"{r.router} ({r.capacity:g})" for r in g.itertuples())})
    return pd.DataFrame(rows).sort_values(["scenario", "source"], ascending=[True, False]).reset_index(drop=True)
