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
