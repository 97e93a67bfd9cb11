"""Figures. Each function takes tidy data (long-form DataFrames) and returns a Figure;
:func:`save` writes it. No statistics are computed here beyond what drawing needs."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from routerlab.defaults import PDR_FRACTION, PLR_FLOOR
from routerlab.analysis import stats
from routerlab.analysis.stats import Verdict

#: Axis labels, with units, of the tidy columns.
AXIS_LABELS = {"offered_pps": "offered load (pps)", "plr": "PLR (mean loss ratio)", "dr": "delivery ratio",
               "throughput_pps": "throughput (pps)", "cpu_load": "router CPU busy fraction"}

#: Height (PLR) at which the step markers are drawn, as in the paper's figures.
PDR_STEP_LEVEL = 1e-3
SATURATION_STEP_LEVEL = 5e-2


#: Size of a PASTRAMI panel (inches) and its margins at that size: what ``tight_layout``
#: finds for every one of the 107 published experiments, with a title and without. The
#: panel's geometry does not change from one experiment to the next (figure size, axis
#: limits, label texts), so the margins are fixed here rather than measured on every panel,
#: which took a third of a panel's time (tests/test_plots.py checks them against
#: ``tight_layout``).
PANEL_SIZE = (6.4, 8.0)
#: Panels a worker process of :func:`draw_panels` must have to be worth starting: it
#: costs a Python start-up with matplotlib and pandas, some 3 s of CPU, the price of
#: about ten panels drawn here.
PANELS_PER_WORKER = 20
PANEL_MARGINS = {"left": 0.1213, "right": 0.8819, "bottom": 0.0731}
PANEL_TOP = {True: {"top": 0.9369, "hspace": 0.0708}, False: {"top": 0.9731, "hspace": 0.0678}}


def pastrami_panel(summary: pd.DataFrame, verdict: Verdict, *, title: str | None = None,
                   delta_cap: float = 2.0, figsize=PANEL_SIZE, fig=None):
    """One experiment in the PASTRAMI paper's style (Figs 9-122).

    Top: mean PLR on a log axis (floored at the verdict's PLR floor) with the upper 95%
    band (a load with one run, which has none, drawn hollow), the normalised half-width
    Delta_UCL95 on a second axis (capped), the PDR line, step markers from the PDR crossing
    and from the detected saturation, the GOOD/BAD label and why (:attr:`Verdict.why`).
    Bottom: delivery ratio (linear, 0.7-1.01) with the ``1 - pdr`` line.

    Parameters
    ----------
    summary : pandas.DataFrame
        Per-load statistics from :func:`routerlab.analysis.stats.summarize`.
    verdict : Verdict
        Its verdict (:func:`routerlab.analysis.stats.saturation_verdict`).
    title : str, optional
        Figure title (the experiment's set-up).
    delta_cap : float
        Cap of the Delta_UCL95 axis (the paper's 2).
    fig : matplotlib.figure.Figure, optional
        A figure this function returned before, to draw this panel into in place of the
        old one: half the cost of a new figure, whose axes, ticks and tick labels would
        all be built and laid out again (:func:`draw_panels` draws a hundred this way).
    """
    p = verdict.params
    o = summary["offered_pps"].to_numpy()
    plr = np.maximum(summary["plr"].to_numpy(), p.plr_floor)
    ucl = np.maximum(summary["ucl95"].fillna(summary["plr"]).to_numpy(), plr)
    delta = np.minimum(summary["delta_ucl95"].to_numpy(), delta_cap)

    if fig is None or not hasattr(fig, "_panel_axes"):
        fig, (ax1, bx1) = plt.subplots(2, 1, figsize=figsize, sharex=True,
                                       gridspec_kw={"height_ratios": [3, 2]})
        fig._panel_axes = (ax1, ax1.twinx(), bx1)
    ax1, ax2, bx1 = fig._panel_axes
    for ax in fig._panel_axes:
        for artist in [*ax.lines, *ax.collections, *ax.texts]:
            artist.remove()
        if ax.get_legend():
            ax.get_legend().remove()
        ax.dataLim.set_points(np.array([[np.inf, np.inf], [-np.inf, -np.inf]]))
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
    # the verdict always says why (and, when the sweep could not be judged, what to do)
    ax1.text(0.02, 0.86, "\n".join(textwrap.wrap(verdict.why, 60)), transform=ax1.transAxes, fontsize=7,
             va="top", color="darkgreen" if verdict.good else "darkred",
             bbox=dict(facecolor="white", alpha=0.8, edgecolor="none"))
    single = summary["runs"].to_numpy() < 2 if "runs" in summary else np.zeros(len(o), dtype=bool)
    if single.any():
        ax1.plot(o[single], plr[single], "o", mfc="white", mec="tab:blue", ms=7, ls="none",
                 label="one run: no interval")
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
    if title or fig._suptitle is not None:
        fig.suptitle(title or "", fontsize=9)
    bx1.relim()
    bx1.autoscale_view()
    if tuple(figsize) == PANEL_SIZE:
        fig.subplots_adjust(**PANEL_MARGINS, **PANEL_TOP[bool(title)])
    else:
        fig.tight_layout()
    return fig


def load_loss(data: pd.DataFrame, *, x: str = "offered_pps", y: str = "plr", hue: str | None = None,
              style: str | None = None, log: bool = True, floor: float = PLR_FLOOR, ax=None,
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
    errorbar : optional
        Band around each line, as seaborn takes it; ``("ci", 95)`` is the project's 95%
        Student-t interval of the mean (:func:`routerlab.analysis.stats.mean_interval`), not
        seaborn's bootstrap, so the band is the one every table shows and the same on every run.
    """
    if errorbar == ("ci", 95):
        errorbar = _t_interval
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


def sweeps(curves: pd.DataFrame, records: pd.DataFrame, *, pdr: float = PDR_FRACTION, floor: float = PLR_FLOOR,
           ceiling: float | None = None, title: str | None = None):
    """Testbed sweeps side by side: mean PLR against offered load, one line per experiment
    with its 95% interval as a band, its PASTRAMI verdict and why in the legend.

    A load with one run has no interval: it is drawn hollow. A load whose interval contains
    the PDR fraction is ringed: whether it passes, which the verdict and the PDR depend on,
    is uncertain there.

    Parameters
    ----------
    curves : pandas.DataFrame
        Per-load statistics of every sweep (:func:`routerlab.analysis.stats.summaries`): experiment,
        offered_pps, plr, lcl95, ucl95, runs.
    records : pandas.DataFrame
        One row per sweep (:func:`routerlab.analysis.stats.records`): experiment, verdict, why.
    pdr : float
        The PDR fraction (a ratio), drawn as a line.
    ceiling : float, optional
        The generator's ceiling in pps, drawn as a dotted line.
    """
    rec = records.set_index("experiment")
    fig, ax = plt.subplots(figsize=(9, 4.5 + 0.18 * (len(rec) + 4)), layout="constrained")
    colours = dict(zip(rec.index, sns.color_palette(n_colors=len(rec))))
    for exp in rec.index:
        c = curves[curves["experiment"] == exp].sort_values("offered_pps")
        o = c["offered_pps"].to_numpy()
        m = np.maximum(c["plr"].to_numpy(), floor)
        lo = np.maximum(c["lcl95"].to_numpy(), floor)
        hi = np.maximum(c["ucl95"].to_numpy(), floor)
        col = colours[exp]
        ax.plot(o, m, "-", color=col, lw=1.5,
                label=f"{exp}: {rec.loc[exp, 'verdict']}, {rec.loc[exp, 'why']}")
        ax.fill_between(o, lo, hi, color=col, alpha=0.15, lw=0)
        single = c["runs"].to_numpy() < 2
        ax.plot(o[~single], m[~single], "o", color=col, ms=4)
        ax.plot(o[single], m[single], "o", mfc="white", mec=col, ms=6, ls="none")
        crosses = stats.crosses(c["lcl95"], c["ucl95"], pdr)
        ax.plot(o[crosses], m[crosses], "o", mfc="none", mec="black", ms=10, mew=1, ls="none")
    ax.plot([], [], "o", mfc="white", mec="gray", ls="none", label="one run: no interval")
    ax.plot([], [], "o", mfc="none", mec="black", ms=10, ls="none", label=f"95% interval contains PLR = {pdr:.1%}")
    ax.axhline(pdr, color="gray", ls="--", lw=1, label=f"PLR = {pdr:.1%}")
    if ceiling:
        ax.axvline(ceiling, color="gray", ls=":", label="generator ceiling")
    ax.set_yscale("log")
    ax.set_ylim(floor / 2, 1.5)
    ax.set_xlabel(AXIS_LABELS["offered_pps"])
    ax.set_ylabel(f"mean PLR, band: 95% interval (log, floor {floor:g})")
    ax.grid(True, alpha=0.4)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=1, frameon=False)
    ax.set_title(title or "Loss against offered load, each sweep with its PASTRAMI verdict", fontsize=10)
    return fig


def loss_places(places: pd.DataFrame, *, ncols: int = 2, title: str | None = None):
    """Where loss happened: per experiment, one stacked bar per offered load, each part the
    mean loss ratio one counter took (:func:`routerlab.analysis.stats.loss_places`), the part no
    counter explains on top, hatched. A negative unexplained part (counters took more than
    was lost) is not drawn; its load is marked with an asterisk under the bar."""
    from routerlab.analysis.stats import UNEXPLAINED

    exps = list(dict.fromkeys(places["experiment"]))
    places_all = sorted(set(places["where"]) - {UNEXPLAINED}) + [UNEXPLAINED]
    colours = dict(zip(places_all[:-1], sns.color_palette("tab10", max(1, len(places_all) - 1))))
    colours[UNEXPLAINED] = "lightgrey"
    nrows = -(-len(exps) // ncols)
    fig, axes = plt.subplots(nrows, min(ncols, len(exps)), figsize=(6.0 * min(ncols, len(exps)), 3.2 * nrows),
                             squeeze=False, layout="constrained")
    for ax, exp in zip(axes.flat, exps):
        d = places[places["experiment"] == exp].pivot_table(index="offered_pps", columns="where", values="loss")
        d = d.reindex(columns=[c for c in places_all if c in d.columns])
        bottom = np.zeros(len(d))
        labels = [f"{o / 1000:.0f}k" for o in d.index]
        for col in d.columns:
            v = d[col].clip(lower=0).to_numpy() * 100
            ax.bar(labels, v, bottom=bottom, color=colours[col], label=col,
                   hatch="//" if col == UNEXPLAINED else None, edgecolor="grey" if col == UNEXPLAINED else None)
            bottom += v
        if UNEXPLAINED in d:
            for x, neg in enumerate(d[UNEXPLAINED].to_numpy() < 0):
                if neg:
                    ax.annotate("*", (x, 0), ha="center", va="top", fontsize=9, xytext=(0, -10),
                                textcoords="offset points")
        if not bottom.any():
            ax.text(0.5, 0.5, "no loss", transform=ax.transAxes, ha="center", va="center", color="grey")
        ax.set_ylim(bottom=0, top=max(bottom.max() * 1.1, 0.01))
        ax.set_title(exp, fontsize=9)
        ax.set_xlabel("offered load (pps)")
        ax.set_ylabel("mean loss (% of offered)")
        ax.tick_params(axis="x", labelsize=7, rotation=45)
        ax.grid(True, axis="y", alpha=0.4)
    for ax in list(axes.flat)[len(exps):]:
        ax.set_visible(False)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[c], hatch="//" if c == UNEXPLAINED else None)
               for c in places_all]
    fig.legend(handles, places_all, loc="outside lower center", ncols=min(4, len(places_all)), fontsize=8)
    fig.suptitle(title or "Where the lost packets went (by the counter that dropped them; * = counters "
                 "took more than was lost)", fontsize=10)
    return fig


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
                subdir: str = "panels", jobs: int | None = None) -> list[Path]:
    """Draw (and save) the PASTRAMI panel of every assessment; display the first ``show``.

    Parameters
    ----------
    assessments : list of routerlab.analysis.stats.Assessment
        The experiments.
    titles : dict, optional
        experiment id -> figure title.
    out_dir : path-like, optional
        Folder to save into (``out_dir/subdir/<experiment>.png|svg``); empty: only the
        first ``show`` are drawn.
    show : int
        How many figures stay open for display (a notebook shows them); the others are
        only saved, so a hundred panels do not fill memory or the notebook.
    jobs : int, optional
        Worker processes that draw and save the panels not shown. Default: the CPUs this
        process may use, but no more than one per :data:`PANELS_PER_WORKER` panels. A panel
        costs about a third of a second of one CPU, most of it in rendering PNG and SVG,
        so a hundred of them are worth spreading; a handful are not.

    Returns
    -------
    list of pathlib.Path
        The files written, in the order of ``assessments``.
    """
    titles = titles or {}
    out = Path(out_dir) / subdir if out_dir else None
    todo = [(a.summary, a.verdict, titles.get(a.experiment, a.experiment), out, a.experiment)
            for a in assessments[show:]] if out else []
    jobs = min(jobs or min(len(os.sched_getaffinity(0)), len(todo) // PANELS_PER_WORKER), len(todo))
    with _PanelWorkers(todo, jobs) as workers:
        paths = []
        for a in assessments[:show]:
            fig = pastrami_panel(a.summary, a.verdict, title=titles.get(a.experiment, a.experiment))
            paths += save(fig, out, a.experiment)
        done = workers.results() if jobs > 1 else _save_panels(todo)
    return paths + [p for ps in done for p in ps]


class _PanelWorkers:
    """``n`` Python processes that each draw and save every n-th panel of ``todo``.

    Plain subprocesses rather than :mod:`multiprocessing`: its spawn start method runs the
    caller's main script again in every worker (a script without a ``__main__`` guard would
    fail), and fork would copy a Jupyter kernel's threads mid-flight. The jobs go through a
    pickle file; the workers draw off screen with the caller's matplotlib style, and are
    killed if the caller stops (Ctrl-C) before they are done.
    """

    def __init__(self, todo: list, n: int):
        self.todo, self.n, self.procs = todo, n, []

    def __enter__(self):
        if self.n < 2:
            return self
        import pickle
        import subprocess
        import sys
        import tempfile

        self.dir = tempfile.TemporaryDirectory(prefix="routerlab-panels-")
        rc = {k: v for k, v in plt.rcParams.items() if k not in ("backend", "backend_fallback")}
        for i in range(self.n):
            job = Path(self.dir.name) / f"{i}.pickle"
            job.write_bytes(pickle.dumps((rc, self.todo[i::self.n])))
            self.procs.append(subprocess.Popen(
                [sys.executable, "-c", "import sys; from routerlab.analysis.plots import _panel_worker; _panel_worker(sys.argv[1])",
                 str(job)], stderr=subprocess.PIPE, env={**os.environ, "MPLBACKEND": "agg"}))
        return self

    def results(self) -> list[list[Path]]:
        """Each panel's files, in the order of ``todo``, once every worker has finished."""
        import pickle

        shares = []
        for i, proc in enumerate(self.procs):
            _, stderr = proc.communicate()
            if proc.returncode != 0:
                tail = stderr.decode(errors="replace").strip().splitlines()[-1:] or ["(no message)"]
                raise RuntimeError(f"panel worker {i} failed with exit code {proc.returncode}: {tail[0]}")
            shares.append(pickle.loads((Path(self.dir.name) / f"{i}.out").read_bytes()))
        out = [None] * len(self.todo)
        for i, share in enumerate(shares):
            out[i::self.n] = share
        return out

    def __exit__(self, *exc):
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if self.procs:
            self.dir.cleanup()
        return False


def _panel_worker(job: str):
    """Entry point of a :class:`_PanelWorkers` process: draw and save the panels of ``job``."""
    import pickle

    rc, todo = pickle.loads(Path(job).read_bytes())
    plt.rcParams.update(rc)
    Path(job).with_suffix(".out").write_bytes(pickle.dumps(_save_panels(todo)))


def _save_panels(todo) -> list[list[Path]]:
    """Draw and save the panels of ``todo`` one after another in one reused figure; each
    panel's files."""
    fig, done = None, []
    try:
        for summary, verdict, title, out, name in todo:
            fig = pastrami_panel(summary, verdict, title=title, fig=fig)
            done.append(save(fig, out, name))
    finally:
        if fig is not None:
            plt.close(fig)
    return done


def model_curves(curves: pd.DataFrame, *, log: bool = False, floor: float = PLR_FLOOR, title: str | None = None):
    """Load-loss models (Figs 3-5): delivery ratio on top, PLR below (linear or log).

    Parameters
    ----------
    curves : pandas.DataFrame
        Output of :mod:`routerlab.analysis.synthetic` (columns offered_pps, plr, dr, model);
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
    published table (``router``, ``ratio_to_fastest``). A row of ours with ``at_least``
    (a PDR that is only a lower bound) has no bar: its lower bound, and why (``bound``, else
    "limited by the generator"), is written in its place."""
    df = pd.concat([ours.assign(source="ours, " + ours["where"], router=ours["engine"]),
                    # lower-cased, so that each published router stands next to our engine of that name
                    published.assign(source="published (MoonRoute poster)",
                                     router=published["router"].str.lower())], ignore_index=True)
    fig, ax = plt.subplots(figsize=(8, 3.6))
    sns.barplot(df, x="router", y="ratio_to_fastest", hue="source", ax=ax)
    routers = list(dict.fromkeys(df["router"]))
    for r in ours[ours.get("at_least", pd.Series(False, index=ours.index)).astype(bool)].itertuples():
        ax.text(routers.index(r.engine), 0.03,
                f"{r.where}: at least {r.mpps:.3f} Mpps\n({getattr(r, 'bound', '') or 'limited by the generator'})",
                rotation=90, ha="center", va="bottom", fontsize=7)
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




def _t_interval(x) -> tuple[float, float]:
    """Student-t 95% interval of the mean of ``x`` (seaborn's bootstrap is slow for long
    time series, and the t interval is the project's convention)."""
    from routerlab.analysis.stats import mean_interval

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


def pdr_comparison(curves: pd.DataFrame, records: pd.DataFrame, *, labels: dict | None = None,
                   pdr: float = PDR_FRACTION, floor: float = PLR_FLOOR, title: str | None = None):
    """Routers side by side in one figure: mean PLR against offered load, one line per
    router, each router's PDR marked on its line; and the PDRs as bars with the verdicts.

    Parameters
    ----------
    curves : pandas.DataFrame
        Per-load statistics of every router (:func:`routerlab.analysis.stats.summaries`).
    records : pandas.DataFrame
        One row per router (:func:`routerlab.analysis.stats.records`): ``verdict``, ``pdr_pps`` and,
        written beside the verdict, ``why``.
    labels : dict, optional
        experiment id -> the name drawn (default: the id), in the order drawn.
    pdr : float
        The PDR fraction (a ratio: 0.005 is PDR@0.5%), drawn as a horizontal line.
    """
    labels = labels or {e: e for e in records["experiment"]}
    rec = records.set_index("experiment")
    colours = dict(zip(labels, sns.color_palette(n_colors=len(labels))))
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    for exp, name in labels.items():
        c = curves[curves["experiment"] == exp].sort_values("offered_pps")
        ax.plot(c["offered_pps"], np.maximum(c["plr"], floor), "o-", color=colours[exp], ms=4, label=name)
        found = rec.loc[exp, "pdr_pps"]
        if pd.notna(found):
            ax.axvline(found, color=colours[exp], ls=":", lw=1.2)
    ax.axhline(pdr, color="gray", ls="--", lw=1, label=f"PLR = {pdr:.1%}")
    ax.set_yscale("log")
    ax.set_ylim(floor / 2, 1.5)
    ax.set_xlabel(AXIS_LABELS["offered_pps"])
    ax.set_ylabel(f"{AXIS_LABELS['plr']} (log, floored at {floor:g})")
    ax.grid(True, alpha=0.4)
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title("loss against load; dotted: each router's PDR", fontsize=9)
    names = list(labels.values())
    # a sweep in which no load failed has a PDR of at least its highest load: a lower bound,
    # drawn as a hatched bar to that load and written "at least"
    at_least = {e: pd.isna(rec.loc[e, "pdr_pps"]) and rec.get("pdr_status", pd.Series(dtype=str)).get(e) == "at_least_max"
                for e in labels}
    values = [rec.loc[e, "pdr_pps"] if pd.notna(rec.loc[e, "pdr_pps"])
              else curves.loc[curves["experiment"] == e, "offered_pps"].max() if at_least[e] else 0 for e in labels]
    bars = bx.barh(names, values, color=[colours[e] for e in labels])
    for bar, e in zip(bars, labels):
        if at_least[e]:
            bar.set_alpha(0.45)
            bar.set_hatch("//")
    for i, exp in enumerate(labels):
        verdict = v = rec.loc[exp, "verdict"]
        if "why" in rec:
            v += ": " + "\n   ".join(textwrap.wrap(rec.loc[exp, "why"], 45))
        text = (f" at least {values[i]:,.0f} pps (no load failed), {v}" if at_least[exp]
                else f" {values[i]:,.0f} pps, {v}" if values[i] else f" no PDR found, {v}")
        bx.text(values[i], i, text, va="center", fontsize=8, color="darkgreen" if verdict == "GOOD" else "darkred")
    bx.invert_yaxis()
    bx.set_xlim(0, max(values + [1]) * 2.2)
    bx.set_xlabel(f"PDR@{pdr:.1%} (pps)")
    bx.set_title("PDR and PASTRAMI verdict", fontsize=9)
    bx.grid(True, axis="x", alpha=0.4)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def _grouped_bars(ax, df: pd.DataFrame, *, x: str, hue: str, y: str = "mpps", err: str = "sd_mpps"):
    """Bars of ``y`` grouped by ``x``, one per ``hue`` in order of appearance, each with
    its ± ``err`` bar (given, not estimated)."""
    groups = list(dict.fromkeys(df[hue]))
    xs = sorted(df[x].unique())
    width = 0.8 / len(groups)
    palette = sns.color_palette(n_colors=len(groups))
    for i, (g, colour) in enumerate(zip(groups, palette)):
        d = df[df[hue] == g].set_index(x).reindex(xs)
        pos = np.arange(len(xs)) - 0.4 + width * (i + 0.5)
        ax.bar(pos, d[y], width, yerr=d[err], color=colour, label=g, capsize=2,
               error_kw={"elinewidth": 0.8})
    ax.set_xticks(np.arange(len(xs)), [f"{v:g}" for v in xs])


def moonroute_cores(df: pd.DataFrame, *, line_rate_mpps: float):
    """The MoonRoute authors' core-scaling figure: Mpps (± the authors' standard deviation
    over runs) against cores, one bar per CPU frequency and traffic, with the ports' line
    rate (Mpps) dashed."""
    return _moonroute_bars(df, "cores", line_rate_mpps, figsize=(8, 3.8), xlabel="cores",
                           title="MoonRoute against cores: the authors' data (emmericp/MoonRoute-data)")


def _moonroute_bars(df: pd.DataFrame, x: str, line_rate_mpps: float, *, figsize, xlabel: str, title: str):
    fig, ax = plt.subplots(figsize=figsize)
    _grouped_bars(ax, df, x=x, hue="series")
    ax.axhline(line_rate_mpps, color="gray", ls="--", lw=1, label=f"line rate ({line_rate_mpps:.2f} Mpps)")
    ax.set(xlabel=xlabel, ylabel="throughput (Mpps)", title=title)
    ax.legend(fontsize=8, ncols=3, loc="upper left")
    ax.set_ylim(0, line_rate_mpps * 1.3)
    fig.tight_layout()
    return fig


def moonroute_batch(authors: pd.DataFrame, ours: pd.DataFrame, *, tx_batches: list[int]):
    """The MoonRoute authors' batch-size figure beside routerlab's FastClick sweep, in Mpps.

    Left: MoonRoute's Mpps (± the standard deviation over runs) against its receive batch
    size, one line per transmit batch size of ``tx_batches``. Right: FastClick forwarding
    from memory (``ours``: ``burst``, ``mpps``, every repeat; band = their range) against
    its batch size. Both x axes in packets, log 2."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    ax = axes[0]
    for tx in tx_batches:
        d = authors[authors["tx_batch"] == tx].sort_values("rx_batch")
        ax.errorbar(d["rx_batch"], d["mpps"], yerr=d["sd_mpps"], marker="o", ms=3, capsize=2, label=f"TX batch {tx}")
    ax.set(xlabel="MoonRoute RX batch size (packets)", ylabel="throughput (Mpps)",
           title="MoonRoute, one core: the authors' data")
    ax.legend(fontsize=8)
    sns.lineplot(ours, x="burst", y="mpps", errorbar=("pi", 100), marker="o", ax=axes[1])
    engine = ours["engine"].iloc[0] if "engine" in ours else "FastClick"
    axes[1].set(xlabel=f"{engine} batch size (packets)", title=f"{engine} from memory: routerlab's sweep")
    for a in axes:
        a.set_xscale("log", base=2)
        a.grid(True, alpha=0.4)
    axes[0].set_ylim(bottom=0)
    fig.tight_layout()
    return fig


def moonroute_freq(df: pd.DataFrame, *, line_rate_mpps: float):
    """The MoonRoute authors' CPU-frequency figure: Mpps (± the tables' standard
    deviation) against the core's frequency (GHz), one bar per traffic, with one port's
    line rate (Mpps) dashed."""
    return _moonroute_bars(df, "ghz", line_rate_mpps, figsize=(9, 3.8), xlabel="CPU frequency (GHz)",
                           title="MoonRoute against CPU frequency, one core: the authors' data")
