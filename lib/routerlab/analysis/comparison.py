"""The 100GE router comparison tables, published and ours, as data.

The source ("Performance Measurements of Linux, DanOS, VyOS, VPP and Linux XDP at 100GE",
``datasets/reference/linux-danos-vyos-100ge.csv``) shows one table per scenario: rows are
routers, columns offered Mpps, cells forwarding loss, coloured green (0.0%), yellow (0.1 to
2.7%), red (larger) and grey (not tested): :data:`SOURCE_COLOURS`. Ours measures the same scenarios
(the presets the comparison's campaign file names: :func:`scenarios`) with every engine
present, at loads that are fractions of the generator's ceiling, so that a table reads the
same on any machine. A cell an engine cannot do is grey, with the reason, in ``cells.csv``.
Our tables are coloured by a rule of their own, :data:`OUR_COLOURS` (yellow below 5%), which
their figures state.

What the campaign measures (engines, scenarios, loads, runs, duration) is written once, in
``datasets/comparison/campaign.yaml`` (:func:`planned`): ``routerlab campaign run`` runs it
(checking it: :mod:`routerlab.measuring.campaignfile`), and ``routerlab compare`` and
:func:`routerlab.measuring.comparison.campaign`, which measures the cells, take their
defaults from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from routerlab import yamlfile
from routerlab.analysis import datasets, stats
from routerlab.errors import DataFormatError
from routerlab.version import project_dir

#: A dataset's campaign file (:mod:`routerlab.measuring.campaignfile` reads and checks it).
CAMPAIGN_FILE = "campaign.yaml"


def planned(folder=None) -> dict:
    """The options of the compare step of a comparison's campaign file, as written: the
    file a measured ``folder`` keeps beside its data, if it has one, else the project's
    (``datasets/comparison/campaign.yaml``, or the one bundled in a pip-installed
    routerlab): ``engines``, ``scenarios`` (published scenario name -> our preset),
    ``loads_frac`` (fractions of the generator's ceiling), ``runs`` (trials per cell and
    load), ``duration`` (seconds per trial)."""
    files = [project_dir("datasets") / "comparison" / CAMPAIGN_FILE]
    if folder is not None and (Path(folder) / CAMPAIGN_FILE).is_file():
        files.insert(0, Path(folder) / CAMPAIGN_FILE)
    for path in files:
        steps = (yamlfile.load(path, "the campaign file") or {}).get("steps") or []
        step = next((s for s in steps if isinstance(s, dict) and "compare" in s), None)
        if step is not None:
            return dict(step["compare"] or {})
    raise DataFormatError(files[-1], None, "no compare step")


def scenarios(folder=None) -> dict[str, str]:
    """The published scenarios and the preset that stands for each here (published name ->
    preset), from the comparison's campaign file (:func:`planned`)."""
    return dict(planned(folder)["scenarios"])


@dataclass(frozen=True)
class ColourRule:
    """How a table cell's loss (in percent) is coloured: green for no loss (0 or below:
    more received than sent), yellow for a loss above 0 up to ``yellow_max`` (included when
    ``inclusive``), red above, grey for a cell not tested (NaN).

    Attributes
    ----------
    yellow_max : float
        The yellow/red boundary, in percent.
    inclusive : bool
        Whether a loss of exactly ``yellow_max`` is still yellow.
    whose : str
        Whose rule it is, as a figure's legend names it.
    """

    yellow_max: float
    inclusive: bool
    whose: str

    def colour(self, loss_pct: float) -> str:
        """The colour of a loss in percent: green, yellow, red, or grey (NaN: not tested)."""
        if loss_pct is None or np.isnan(loss_pct):
            return "grey"
        if loss_pct <= 0:
            return "green"
        if loss_pct < self.yellow_max or (self.inclusive and loss_pct == self.yellow_max):
            return "yellow"
        return "red"

    def legend(self) -> str:
        """The rule in one line, for under a figure."""
        edge = f"up to {self.yellow_max:g}%" if self.inclusive else f"below {self.yellow_max:g}%"
        red = f"above {self.yellow_max:g}%" if self.inclusive else f"from {self.yellow_max:g}%"
        return f"colours, {self.whose}: green no loss, yellow {edge}, red {red}, grey not tested"


#: The source's colours: green 0.0%, yellow 0.1-2.7%, red larger (the seed notes' reading of
#: its table; 2.7% is the largest value it colours yellow, 7.2% the smallest above it). The
#: source prints one decimal, so two ranges never occur in it, and this is what we make of
#: them: a loss above 0 but below 0.1% is yellow (the source's green means "0.0%", nothing
#: lost, and a measured loss is not nothing), and a loss between 2.7% and 7.2% is red.
SOURCE_COLOURS = ColourRule(2.7, True, "the source's rule")
#: Our tables' colours: yellow below 5%, not the source's 2.7%. The committed comparison
#: dataset's facts and notes count cells by this rule; its figures say so in their legend.
OUR_COLOURS = ColourRule(5.0, False, "this dataset's rule (the source's yellow ends at 2.7%)")


def published() -> pd.DataFrame:
    """The published tables in long form: scenario, router, offered (Mpps), loss_pct
    (NaN = not tested), colour (by :data:`SOURCE_COLOURS`)."""
    df = datasets.reference("linux-danos-vyos-100ge").rename(columns={"offered_mpps": "offered"})
    df["colour"] = [SOURCE_COLOURS.colour(x) for x in df["loss_pct"]]
    return df


def ours(folder) -> pd.DataFrame:
    """Our tables in long form from a measured folder, one row per cell.

    Columns: scenario (published name), router (engine), offered (fraction of the
    ceiling), offered_pps, loss_pct (mean of the K trials; a trial that received more than
    was sent keeps its negative loss, as in :mod:`routerlab.analysis.stats`), ci95_pct (half-width
    of the Student-t interval, :func:`routerlab.analysis.stats.mean_interval`; NaN for one run),
    runs, trial_loss (each trial's loss ratio, in the order of the trials: the K-th trials
    of a row's loads give one capacity, :func:`repeated_capacity`), more_received
    (trials with rx > tx: a counting error to report, not a zero),
    colour, colour_low and colour_high (the colours at the interval's two ends),
    uncertain (they differ: the interval crosses a colour boundary), reason (why a cell
    is grey: an engine that cannot do the scenario, from ``cells.csv``, or a load every
    trial of which the generator could not offer), and the row's PASTRAMI verdict
    (``verdict``: GOOD/BAD; ``verdict_why``, its reason in a few words, and
    ``verdict_reason``, the full sentence; both with what to do when it could not judge).
    """
    folder = Path(folder)
    ds = datasets.read(folder)
    meta = ds.experiments.set_index("experiment")
    back = {v: k for k, v in scenarios(folder).items()}
    limited = ds.trials.get("generator_limited", pd.Series(False, index=ds.trials.index))
    limited = stats.flag(limited)
    verdicts = {a.experiment: a.verdict for a in stats.assess(ds.trials)}
    rows = []
    for exp, g in ds.trials.groupby("experiment", sort=False):
        ceiling = float(meta.loc[exp, "generator_ceiling_pps"])
        engine = meta.loc[exp, "engine"]
        sname = exp[len(engine) + 1:]
        v = verdicts.get(exp)
        row = {"scenario": back.get(sname, sname), "router": engine, "verdict": v.label if v else "",
               "verdict_why": v.why if v else "", "verdict_reason": v.explained if v else ""}
        for load, t in g.groupby("offered_pps"):
            cell = {**row, "offered": round(load / ceiling, 4), "offered_pps": load}
            t = t[~limited[t.index]]
            if not len(t):
                rows.append({**cell, "loss_pct": np.nan, "ci95_pct": np.nan, "runs": 0, "more_received": 0,
                             "reason": "generator-limited: the generator could not offer this load in any trial"})
                continue
            if "trial" in t:
                t = t.sort_values("trial", kind="stable")
            losses = stats.trial_loss(t["tx"].to_numpy(), t["rx"].to_numpy())
            plr, half = stats.mean_interval(losses)
            rows.append({**cell, "loss_pct": 100 * plr, "ci95_pct": 100 * half, "runs": len(t),
                         "more_received": int((t["rx"] > t["tx"]).sum()), "reason": "",
                         "trial_loss": tuple(float(x) for x in losses)})
    cells = datasets.read_kind(folder, "cells.csv", missing_ok=True)
    for c in cells.itertuples():
        if not c.runnable:
            rows.append({"scenario": back.get(c.scenario, c.scenario), "router": c.engine, "verdict": "",
                         "verdict_why": "", "verdict_reason": "", "offered": np.nan, "offered_pps": np.nan,
                         "loss_pct": np.nan, "ci95_pct": np.nan, "runs": 0, "more_received": 0, "reason": c.reason})
    df = pd.DataFrame(rows)
    df["colour"] = [OUR_COLOURS.colour(x) for x in df["loss_pct"]]
    # the colours at the interval's ends; a cell with one run has no interval, only its colour
    ends = list(zip(df["loss_pct"], df["ci95_pct"], df["colour"]))
    df["colour_low"] = [OUR_COLOURS.colour(m - h) if not np.isnan(h) else c for m, h, c in ends]
    df["colour_high"] = [OUR_COLOURS.colour(m + h) if not np.isnan(h) else c for m, h, c in ends]
    df["uncertain"] = df["colour_low"] != df["colour_high"]
    return df


def verdicts(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (scenario, router) of :func:`ours`: its PASTRAMI verdict with the full
    reason (``verdict_reason``), and, for a row or cells that are grey, why (``grey``: each
    reason once, with the loads it greys when not the whole row)."""
    rows = []
    for (s, r), g in df.groupby(["scenario", "router"], sort=False):
        grey = []
        for reason, gr in g[g["reason"] != ""].groupby("reason", sort=False):
            at = gr["offered"].dropna()
            grey.append((f"at {', '.join(f'{x:g}' for x in at)}: " if len(at) else "") + reason)
        rows.append({"scenario": s, "router": r, "verdict": g["verdict"].iloc[0],
                     "verdict_reason": g["verdict_reason"].iloc[0], "grey": "; ".join(grey)})
    return pd.DataFrame(rows)


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
    """Per scenario and router, PDR@``limit_pct``: the highest offered load such that it and
    every lower load lose at most ``limit_pct`` percent (:func:`routerlab.analysis.stats.pdr_load`,
    the one definition). A load not tested in the published table (NaN loss: "loss already
    high") fails; a cell of ours not measured (grey, with a ``reason``) is left out.
    Columns: scenario, router, capacity (NaN when even the lowest load fails, or nothing
    was tested), status (:class:`routerlab.analysis.stats.RateBound`'s)."""
    rows = []
    for (s, r), g in df.groupby(["scenario", "router"], sort=False):
        g = g.dropna(subset=["offered"])
        if "reason" in g:
            g = g[g["reason"].fillna("") == ""]
        bound = (stats.pdr_load(g["offered"], g["loss_pct"].to_numpy() / 100, limit_pct / 100) if len(g)
                 else stats.RateBound(None, "below_range"))
        rows.append({"scenario": s, "router": r, "capacity": np.nan if bound.load is None else bound.load,
                     "status": bound.status if len(g) else "not tested"})
    return pd.DataFrame(rows)


def repeated_capacity(df: pd.DataFrame, limit_pct: float = 0.5) -> dict:
    """Per (scenario, router) of :func:`ours`, the row's capacity once per trial index
    (its loads' first trials, their second trials...), as a
    :class:`routerlab.analysis.repeats.Repeated`: PDR@``limit_pct`` of each index's trials
    (:func:`routerlab.analysis.stats.pdr_load`), a lower bound where they passed every
    load. The K trials of a load ran one after another on one testbed, so these are slices
    of one sweep, not repeats on fresh testbeds: how far its trials spread. Only indices
    with a trial at every load of the row count; rows without ``trial_loss`` (a published
    table) are left out."""
    from routerlab.analysis.repeats import Repeated

    out = {}
    if "trial_loss" not in df:
        return out
    for (s, r), g in df.groupby(["scenario", "router"], sort=False):
        g = g.dropna(subset=["offered"])
        g = g[(g["reason"].fillna("") == "") & g["trial_loss"].map(lambda x: isinstance(x, tuple) and len(x) > 0)]
        if not len(g):
            continue
        k = min(len(x) for x in g["trial_loss"])
        bounds = [stats.pdr_load(g["offered"], np.array([x[i] for x in g["trial_loss"]]), limit_pct / 100)
                  for i in range(k)]
        out[(s, r)] = Repeated(tuple(b.load for b in bounds), tuple(b.status == "at_least_max" for b in bounds))
    return out


def orderings(published_df: pd.DataFrame, ours_df: pd.DataFrame, limit_pct: float = 0.5) -> pd.DataFrame:
    """Routers ranked per scenario by :func:`capacity`, published next to ours (one
    string per scenario, best first; routers with no load passing are left out). A router
    that passed every load it was offered is written ``(≥x)``: x, the top load, is only a
    lower bound of its capacity. The published tables (one measurement each) put ``=``
    between equal capacities and ``>`` between the others; ours, whose loads were measured
    K times each, put ``>`` only where the higher row's capacity from every trial index is
    above every one of the lower's (:func:`repeated_capacity`,
    :func:`routerlab.analysis.repeats.separated`) and ``≈``, a tie, otherwise."""
    from routerlab.analysis import repeats

    rows = []
    for label, df in (("published", published_df), ("ours", ours_df)):
        cap = capacity(df, limit_pct).dropna(subset=["capacity"])
        reps = repeated_capacity(df, limit_pct)
        for s, g in cap.groupby("scenario"):
            g = g.sort_values("capacity", ascending=False, kind="stable")
            text = ""
            for i, r in enumerate(g.itertuples()):
                at_least = "≥" if r.status == "at_least_max" else ""
                if i and reps:
                    a, b = reps.get((s, prev_router)), reps.get((s, r.router))
                    sep = " > " if a is not None and b is not None and repeats.separated(a, b) == 1 else " ≈ "
                else:
                    sep = "" if i == 0 else " = " if r.capacity == prev else " > "
                text += sep + f"{r.router} ({at_least}{r.capacity:g})"
                prev, prev_router = r.capacity, r.router
            rows.append({"scenario": s, "source": label,
                         f"ranking (PDR@{limit_pct:g}%: highest load with at most {limit_pct:g}% loss at it "
                         "and every lower load)": text})
    return pd.DataFrame(rows).sort_values(["scenario", "source"], ascending=[True, False]).reset_index(drop=True)
