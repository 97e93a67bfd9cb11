"""Figures. Each function takes tidy data (long-form DataFrames) and returns a Figure;
:func:`save` writes it. No statistics are computed here beyond what drawing needs."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from .stats import Verdict

#: Axis labels, with units, of the tidy columns.
AXIS_LABELS = {"offered_pps": "offered load (pps)", "plr": "PLR (mean loss ratio)", "dr": "delivery ratio",
               "throughput_pps": "throughput (pps)", "cpu_load": "router CPU busy fraction"}

#: Height (PLR) at which the step markers are drawn, as in the paper's figures.
PDR_STEP_LEVEL = 1e-3
SATURATION_STEP_LEVEL = 5e-2


#: The comparison tables' cell colours (the source's: green 0.0, yellow below 5%, red 5% or
#: more, grey not tested; :func:`routerlab.comparison.colour` chooses).
COLOURS = {"green": "#5cb85c", "yellow": "#f0c419", "red": "#d9534f", "grey": "#c8c8c8"}


def pastrami_panel(summary: pd.DataFrame, verdict: Verdict, *, title: str | None = None,
                   delta_cap: float = 2.0, figsize=(6.4, 8.0)):
    """One experiment in the PASTRAMI paper's style (Figs 9-122).

    Top: mean PLR on a log axis (floored at the verdict's PLR floor) with the upper 95%
    band, the normalised half-width Delta_UCL95 on a second axis (capped), the PDR line,
    step markers from the PDR crossing and from the detected saturation, GOOD/BAD label.
    Bottom: delivery ratio (linear, 0.7-1.01) with the ``1 - pdr`` line.

    Parameters
    ----------
    summary : pandas.DataFrame
        Per-load statistics from :func:`routerlab.stats.summarize`.
    verdict : Verdict
        Its verdict (:func:`routerlab.stats.saturation_verdict`).
    title : str, optional
        Figure title (the experiment's set-up).
    delta_cap : float
        Cap of the Delta_UCL95 axis (the paper's 2).
    """
    p = verdict.params
    o = summary["offered_pps"].to_numpy()
    plr = np.maximum(summary["plr"].to_numpy(), p.plr_floor)
    ucl = np.maximum(summary["ucl95"].fillna(summary["plr"]).to_numpy(), plr)
    delta = np.minimum(summary["delta_ucl95"].to_numpy(), delta_cap)

    fig, (ax1, bx1) = plt.subplots(2, 1, figsize=figsize, sharex=True,
                                   gridspec_kw={"height_ratios": [3, 2]})
    ax2 = ax1.twinx()
    ax1.semilogy(o, plr, "o-", color="tab:blue", lw=2, ms=5, label="mean PLR")
    ax1.fill_between(o, plr, ucl, color="tab:blue", alpha=0.2, label="upper 95% CI")
    ax2.plot(o, delta, "s-", color="tab:red", lw=1.5, ms=4, label=r"$\Delta_{UCL95}$")
    ax1.axhline(p.pdr, color="green", ls="--", lw=1.5, label=f"PLR = {p.pdr:.1%}")
    if verdict.pdr_index is not None:
        step = np.where(np.arange(len(o)) >= verdict.pdr_index, PDR_STEP_LEVEL, np.nan)
        ax1.step(o, step, where="post", color="goldenrod", lw=3, alpha=0.6, label="past PDR")
    if verdict.saturation_index is not None:
        step = np.where(np.arange(len(o)) >= verdict.saturation_index, SATURATION_STEP_LEVEL, np.nan)
        ax1.step(o, step, where="post", color="tab:red", lw=3, alpha=0.5, label="saturation")
    ax1.set_ylim(p.plr_floor / 5, 1)
    ax2.set_ylim(0, delta_cap)
    ax1.set_ylabel("PLR (log)")
    ax2.set_ylabel(r"$\Delta_{UCL95}$ = 95% CI / mean", color="tab:red")
    ax1.grid(True, which="major", alpha=0.4)
    ax1.text(0.02, 0.93, verdict.label + (" (notebook mode)" if p.mode == "notebook" else ""),
             transform=ax1.transAxes, fontsize=12, weight="bold",
             color="darkgreen" if verdict.good else "darkred",
             bbox=dict(facecolor="white", alpha=0.8, edgecolor="none"))
    h1, l1 = ax1.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax1.legend(h1 + h2, l1 + l2, loc="lower right", fontsize=7)

    dr = summary["dr"].to_numpy()
    bx1.plot(o, dr, "o-", color="tab:blue", lw=2, ms=5, label="mean DR")
    lo = 1 - summary["ucl95"].fillna(summary["plr"]).to_numpy()
    bx1.fill_between(o, lo, dr, color="tab:blue", alpha=0.2, label="lower 95% CI")
    bx1.axhline(1 - p.pdr, color="green", ls="--", lw=1.5, label=f"DR = {1 - p.pdr:.1%}")
    bx1.set_ylim(0.7, 1.01)
    bx1.set_ylabel("delivery ratio")
    bx1.set_xlabel("offered load (pps)")
    bx1.grid(True, alpha=0.4)
    bx1.legend(loc="lower left", fontsize=7)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


def load_loss(data: pd.DataFrame, *, x: str = "offered_pps", y: str = "plr", hue: str | None = None,
              style: str | None = None, log: bool = True, floor: float = 1e-6, ax=None,
              errorbar=None, title: str | None = None):
    """PLR (or any ratio) against offered load, one line per ``hue`` (seaborn lineplot).

    Parameters
    ----------
    data : pandas.DataFrame
        Long form: one row per point (or per trial, with ``errorbar=("ci", 95)``).
    x, y, hue, style : str
        Column names. A ``model`` column starting with "synthetic" is named in the legend.
    log : bool
        Log y axis, with values floored at ``floor``.
    """
    d = data.copy()
    if log:
        d[y] = np.maximum(d[y], floor)
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
    sns.lineplot(data=d, x=x, y=y, hue=hue, style=style, marker="o", errorbar=errorbar, ax=ax)
    if log:
        ax.set_yscale("log")
        ax.set_ylim(floor / 2, 1.5)
    ax.set_xlabel(AXIS_LABELS.get(x, x))
    label = AXIS_LABELS.get(y, y)
    ax.set_ylabel(f"{label} (log, floored at {floor:g})" if log else label)
    ax.grid(True, alpha=0.4)
    if title:
        ax.set_title(title)
    return ax.figure


def verdict_summary(records: pd.DataFrame, *, by: list[str], verdict: str = "verdict"):
    """Share of GOOD verdicts by each set-up factor (one small panel per factor).

    Parameters
    ----------
    records : pandas.DataFrame
        One row per experiment with a ``verdict`` column ("GOOD"/"BAD") and set-up columns.
    by : list of str
        Set-up columns to break the verdicts down by (e.g. environment, kernel, pinning).
    """
    fig, axes = plt.subplots(1, len(by), figsize=(3.2 * len(by), 3.6), sharey=True, squeeze=False)
    for ax, col in zip(axes[0], by):
        counts = (records.assign(_n=1).pivot_table(index=col, columns=verdict, values="_n",
                                                   aggfunc="sum", fill_value=0))
        for v in ("GOOD", "BAD"):
            if v not in counts:
                counts[v] = 0
        counts = counts[["GOOD", "BAD"]]
        counts.plot.bar(stacked=True, ax=ax, color=["tab:green", "tab:red"], legend=False, rot=30)
        ax.set_title(col)
        ax.set_xlabel("")
        ax.set_ylabel("experiments")
    axes[0][-1].legend(title="verdict", fontsize=8)
    fig.tight_layout()
    return fig


def slug(text: str) -> str:
    """A file-name-safe version of ``text``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")


def save(fig, out_dir, name: str, formats=("png", "svg"), close: bool = False) -> list[Path]:
    """Save ``fig`` as ``out_dir/name.<fmt>`` for each format; returns the paths.

    An empty or None ``out_dir`` saves nothing (notebooks opened interactively)."""
    if not out_dir:
        return []
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        path = out / f"{slug(name)}.{fmt}"
        fig.savefig(path, dpi=120 if fmt == "png" else None)
        paths.append(path)
    if close:
        plt.close(fig)
    return paths


def draw_panels(assessments, *, titles: dict | None = None, out_dir=None, show: int = 4,
                subdir: str = "panels") -> list[Path]:
    """Draw (and save) the PASTRAMI panel of every assessment; display the first ``show``.

    Parameters
    ----------
    assessments : list of routerlab.stats.Assessment
        The experiments.
    titles : dict, optional
        experiment id -> figure title.
    out_dir : path-like, optional
        Folder to save into (``out_dir/subdir/<experiment>.png|svg``); empty: no files.
    show : int
        How many figures stay open for display (a notebook shows them); the rest are
        closed once saved, so a hundred panels do not fill memory or the notebook.
    """
    paths = []
    for i, a in enumerate(assessments):
        fig = pastrami_panel(a.summary, a.verdict, title=(titles or {}).get(a.experiment, a.experiment))
        if out_dir:
            paths += save(fig, Path(out_dir) / subdir, a.experiment)
        if i >= show:
            plt.close(fig)
    return paths


def model_curves(curves: pd.DataFrame, *, log: bool = False, floor: float = 1e-6, title: str | None = None):
    """Load-loss models (Figs 3-5): delivery ratio on top, PLR below (linear or log).

    Parameters
    ----------
    curves : pandas.DataFrame
        Output of :mod:`routerlab.synthetic` (columns offered_pps, plr, dr, model);
        several models may be stacked, one line each.
    log : bool
        PLR on a log axis, floored at ``floor`` (Fig 5).
    """
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.4, 6.0), sharex=True)
    d = curves.assign(offered_mpps=curves["offered_pps"] / 1e6)
    sns.lineplot(data=d, x="offered_mpps", y="dr", hue="model", ax=top)
    top.set_ylabel("delivery ratio")
    d["plr_shown"] = np.maximum(d["plr"], floor) if log else d["plr"]
    sns.lineplot(data=d, x="offered_mpps", y="plr_shown", hue="model", ax=bottom, legend=False)
    bottom.set_ylabel("PLR (log)" if log else "PLR")
    if log:
        bottom.set_yscale("log")
        bottom.set_ylim(floor / 2, 1.5)
    bottom.set_xlabel("offered load (Mpps)")
    for ax in (top, bottom):
        ax.grid(True, alpha=0.4)
    if any(str(m).startswith("synthetic") for m in curves["model"].unique()):
        top.text(0.99, 0.04, "SYNTHETIC", transform=top.transAxes, ha="right", color="gray", weight="bold")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def tir_steps(offered, tir, verdict: Verdict, *, title: str | None = None):
    """TIR at each load of a sweep with the eta and eta*m thresholds and the verdict's points."""
    o = np.asarray(offered, dtype=float) / 1e6
    t = np.asarray(tir, dtype=float)
    p = verdict.params
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    colors = ["lightgray"] * len(o)
    if verdict.candidate_index is not None:
        colors[verdict.candidate_index] = "goldenrod"
    if verdict.saturation_index is not None and verdict.saturation_index != verdict.candidate_index:
        colors[verdict.saturation_index] = "tab:red"
    ax.bar(o, np.nan_to_num(t), width=(o[1] - o[0]) * 0.6 if len(o) > 1 else 0.05, color=colors)
    # markers too: a TIR of 0 (flat throughput) has no visible bar
    ax.scatter(o, t, c=colors, edgecolors="black", zorder=3)
    ax.axhline(p.eta, color="tab:red", ls="--", label=f"eta = {p.eta:g}")
    ax.axhline(p.eta * p.entry_multiplier, color="goldenrod", ls=":", label=f"eta*m = {p.eta * p.entry_multiplier:g}")
    ax.set_xlabel("offered load (Mpps)")
    ax.set_ylabel("TIR")
    ax.legend()
    ax.set_title(title or f"{verdict.label}: {verdict.reason}", fontsize=8, wrap=True)
    fig.tight_layout()
    return fig


def ratio_bars(ours: pd.DataFrame, published: pd.DataFrame, *, title: str | None = None):
    """Throughput as a ratio to the fastest: ours (one group per ``where``) next to a
    published table (``router``, ``ratio_to_fastest``)."""
    df = pd.concat([ours.assign(source="ours, " + ours["where"], router=ours["engine"]),
                    # lower-cased, so that each published router stands next to our engine of that name
                    published.assign(source="published (MoonRoute poster)",
                                     router=published["router"].str.lower())], ignore_index=True)
    fig, ax = plt.subplots(figsize=(8, 3.6))
    sns.barplot(df, x="router", y="ratio_to_fastest", hue="source", ax=ax)
    ax.set(xlabel="router", ylabel="throughput / fastest (ratio)", ylim=(0, 1.05),
           title=title or "Single-route forwarding, 64-byte packets, as ratios to the fastest")
    ax.tick_params(axis="x", rotation=20)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def batch_curve(df: pd.DataFrame, *, claim: int | None = 128, title: str | None = None):
    """Mpps (every repeat, band = range) and instructions per packet against batch size."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    sns.lineplot(df, x="burst", y="mpps", errorbar=("pi", 100), marker="o", ax=axes[0])
    sns.lineplot(df, x="burst", y="instructions_per_packet", marker="o", ax=axes[1], errorbar=None)
    for ax, ylabel in zip(axes, ("throughput (Mpps)", "instructions per packet")):
        ax.set_xscale("log", base=2)
        ax.set(xlabel="batch size (packets)", ylabel=ylabel)
        if claim:
            ax.axvline(claim, color="gray", ls=":", label=f"published optimum ({claim})")
    axes[0].legend(fontsize=8)
    fig.suptitle(title or f"{df['engine'].iloc[0]}: forwarding from memory against batch size")
    fig.tight_layout()
    return fig


def consolidation_cost(df: pd.DataFrame, *, y: str = "instructions"):
    """Cost per packet of NF chains, plain and consolidated, by chain length: one panel per
    NF and packet kind (first / later packets of a flow)."""
    g = sns.catplot(df, x="actions", y=y, hue="variant", col="nf", row="packet", kind="bar",
                    errorbar=None, height=2.6, aspect=1.2, sharey="row")
    g.set_axis_labels("header actions (NFs in the chain)", f"{y} per packet")
    g.figure.suptitle("Cost per packet, source subtracted (Click, callgrind)", y=1.02)
    return g.figure


def reduction_bars(reductions: pd.DataFrame, published: pd.DataFrame):
    """Reduction in cost per later packet (percent): ours (instructions) next to the
    published (cycles, one bar per platform), by NF and number of header actions."""
    ours = reductions.assign(source="ours (Click, instructions)", pct=100 * reductions["reduction_instructions"])
    pub = published.rename(columns={"header_actions": "actions"}).assign(
        source=lambda d: "published, " + d["platform"] + " (cycles)", pct=lambda d: d["cycle_reduction_pct"])
    df = pd.concat([ours[["nf", "actions", "source", "pct"]], pub[["nf", "actions", "source", "pct"]]])
    df = df[df["actions"] >= 2]
    g = sns.catplot(df, x="actions", y="pct", hue="source", col="nf", kind="bar", height=3, aspect=1.1)
    g.set_axis_labels("header actions", "reduction per later packet (%)")
    return g.figure


def loss_tables(df: pd.DataFrame, *, x_label: str, title: str | None = None, show_ci: bool = False):
    """The 100GE source's tables: one per scenario, rows = routers, columns = offered load,
    cells = loss in percent coloured green (0.0), yellow (below 5), red (5 or more), grey
    (not tested). ``df`` is long: scenario, router, offered, loss_pct (NaN = not tested),
    colour (:func:`routerlab.comparison.colour`), optionally ci95_pct."""
    from matplotlib.colors import to_rgb


    scen = list(dict.fromkeys(df["scenario"]))
    fig, axes = plt.subplots(len(scen), 1, figsize=(10, 1.2 + 0.55 * df.groupby("scenario")["router"].nunique().sum()
                                                    + 0.5 * len(scen)), squeeze=False)
    for ax, s in zip(axes[:, 0], scen):
        d = df[df["scenario"] == s]
        cols = sorted(d["offered"].dropna().unique())
        rows = list(dict.fromkeys(d["router"]))
        cells, colours = [], []
        for r in rows:
            line, cl = [], []
            for c in cols:
                hit = d[(d["router"] == r) & (d["offered"] == c)]
                v = hit["loss_pct"].iloc[0] if len(hit) else np.nan
                # below 0.1% two decimals, so that a yellow cell never reads 0.0%
                text = "" if np.isnan(v) else f"{v:.2f}%" if 0 < v < 0.1 else f"{v:.1f}%"
                if show_ci and len(hit) and "ci95_pct" in hit and not np.isnan(hit["ci95_pct"].iloc[0]):
                    text += f"\n±{hit['ci95_pct'].iloc[0]:.1f}"
                line.append(text)
                cl.append(to_rgb(COLOURS["grey" if np.isnan(v) else
                                         ("green" if v == 0 else "yellow" if v < 5 else "red")]))
            cells.append(line)
            colours.append(cl)
        ax.axis("off")
        if cols:
            t = ax.table(cellText=cells, cellColours=colours, rowLabels=rows,
                         colLabels=[f"{c:g}" for c in cols], loc="center", cellLoc="center")
            t.auto_set_font_size(False)
            t.set_fontsize(8)
            t.scale(1, 1.4 if show_ci else 1.1)
        ax.set_title(f"{s}  (columns: {x_label})", fontsize=9)
    fig.suptitle(title or "Forwarding loss", fontsize=11)
    fig.tight_layout()
    return fig


def loss_heatmap(df: pd.DataFrame, *, floor: float = 0.01):
    """All scenarios in one heatmap: rows scenario/router, columns offered load, colour =
    loss in percent on a log scale (floored at ``floor``); blank = not tested."""
    from matplotlib.colors import LogNorm

    d = df.dropna(subset=["offered"]).copy()
    d["row"] = d["scenario"] + " / " + d["router"]
    g = d.pivot_table(index="row", columns="offered", values="loss_pct", aggfunc="mean")
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(g) + 1.5))
    sns.heatmap(g.clip(lower=floor), norm=LogNorm(vmin=floor, vmax=100), cmap="RdYlGn_r", ax=ax,
                cbar_kws={"label": "loss (%)"}, annot=g.round(1), fmt="g", annot_kws={"fontsize": 7})
    ax.set(xlabel="offered load (fraction of the generator's ceiling)", ylabel="")
    fig.tight_layout()
    return fig


def _t_interval(x) -> tuple[float, float]:
    """Student-t 95% interval of the mean of ``x`` (seaborn's bootstrap is slow for long
    time series, and the t interval is the project's convention)."""
    from .stats import mean_interval

    m, h = mean_interval(x)
    return (m - h, m + h)


def reroute_timeseries(samples: pd.DataFrame, *, fail_at: float = 10.0, converge_after: float | None = 5.0):
    """Throughput (relative to the run's own mean before the failure), RTT and CPU load
    over time per variant (mean over runs, band = 95% interval), a dotted line at the
    failure (and a faint one at convergence). Absolute throughput is in the samples."""
    d = samples.copy()
    # relative to each run's own mean before the failure: variants of very different speed
    # (bmv2 carries a fraction of what the kernel does) share one axis
    before = d[(d["t"] > 2) & (d["t"] <= fail_at)].groupby(["variant", "run"])["throughput_bps"].mean()
    d["throughput_rel"] = d["throughput_bps"] / d.set_index(["variant", "run"]).index.map(before)
    fig, axes = plt.subplots(3, 1, figsize=(9, 8), sharex=True)
    for ax, (col, label) in zip(axes, (("throughput_rel", "throughput / before the failure"), ("rtt_ms", "RTT (ms)"),
                                       ("cpu_busy", "CPU busy (fraction)"))):
        sns.lineplot(d, x="t", y=col, hue="variant", errorbar=_t_interval, ax=ax, lw=1)
        ax.axvline(fail_at, color="k", ls=":", lw=1.2, label="link failure")
        if converge_after is not None:
            ax.axvline(fail_at + converge_after, color="gray", ls=":", lw=0.8, label="control plane")
        ax.set(ylabel=label)
    axes[1].set_yscale("log")
    axes[-1].set(xlabel="time (s)")
    for ax in axes[1:]:
        ax.get_legend().remove()
    fig.tight_layout()
    return fig
