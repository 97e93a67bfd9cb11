"""The loss tables of the 100GE comparison: per scenario, routers against offered load,
each cell a loss coloured by a rule (:mod:`routerlab.analysis.comparison`), its interval
hatched where it reaches another colour, grey where a router was not tested; and the same
cells as one heat map. Each function takes tidy data and returns a Figure
(:func:`routerlab.analysis.plots.save` writes it)."""

from __future__ import annotations

import re
import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

#: The comparison tables' cell colours (green no loss, yellow small, red large, grey not
#: tested; the rules of :mod:`routerlab.analysis.comparison` choose: ``SOURCE_COLOURS``, ``OUR_COLOURS``).
COLOURS = {"green": "#5cb85c", "yellow": "#f0c419", "red": "#d9534f", "grey": "#c8c8c8"}

#: What a hatched cell and "n=1" mean, written under a table that has one.
UNCERTAIN_NOTE = "hatched: the 95% interval reaches the hatch's colour"
SINGLE_RUN_NOTE = "n=1: one run, no interval"


def grey_label(reason: str) -> str:
    """A grey cell's reason in a few words, to write in the cell (the full reason goes in
    the caption): "no firewall, gre" for an engine that does not support them, "generator-
    limited", "failed"."""
    if not reason:
        return ""
    if reason.startswith("generator-limited"):
        return "generator-limited"
    if reason.startswith("failed"):
        return "failed"
    m = re.search(r"does not support ([^(]+)", reason)
    return "no " + m.group(1).strip() if m else "not run"


def _cell_text(cell: pd.Series, show_ci: bool) -> str:
    """What one table cell says: the loss, its interval (or that it has none), trials that
    received more than was sent; a grey cell's reason in a few words."""
    v = cell["loss_pct"]
    if np.isnan(v):
        return grey_label(cell.get("reason", "")) if "reason" in cell else "not tested"
    # below 0.1% two decimals, so that a yellow cell never reads 0.0% (nor 0.00%)
    text = "<0.01%" if 0 < v < 0.005 else f"{v:.2f}%" if 0 < v < 0.1 else f"{v:.1f}%"
    runs = cell.get("runs", np.nan)
    if runs == 1:
        text += "\nn=1"
    elif show_ci and not np.isnan(cell.get("ci95_pct", np.nan)):
        text += f"\n±{cell['ci95_pct']:.1f}"
    if cell.get("more_received", 0) > 0:
        text += f"\nrx>tx in {int(cell['more_received'])}"
    return text


def _caption(d: pd.DataFrame, rows: list[str]) -> list[str]:
    """The lines under one table: each row's verdict with its reason, why each grey cell is
    grey, and what hatching and n=1 mean where they occur."""
    lines = []
    if "verdict" in d:
        for r in rows:
            v = d[d["router"] == r].iloc[0]
            if v["verdict"]:
                lines.append(f"{r}: {v['verdict']}, {v['verdict_why']}")
    if "reason" in d:
        # one line per reason, naming the rows (and loads) it greys
        grey = d[d["reason"].fillna("") != ""]
        for reason, g in grey.groupby("reason", sort=False):
            where = []
            for r, gr in g.groupby("router", sort=False):
                at = gr["offered"].dropna()
                where.append(r + (f" at {', '.join(f'{x:g}' for x in at)}" if len(at) else ""))
            lines.append(f"grey ({'; '.join(where)}): {reason}")
    marks = []
    if d.get("uncertain", pd.Series(False, index=d.index)).astype(bool).any():
        marks.append(UNCERTAIN_NOTE)
    if (d.get("runs", pd.Series(np.nan, index=d.index)) == 1).any():
        marks.append(SINGLE_RUN_NOTE)
    return lines + (["; ".join(marks)] if marks else [])


def loss_tables(df: pd.DataFrame, *, x_label: str, title: str | None = None, show_ci: bool = True,
                legend: str | None = None):
    """The 100GE source's tables: one per scenario, rows = routers, columns = offered load,
    cells = loss in percent coloured green, yellow, red, or grey (not tested, with why in
    the cell), as ``df``'s ``colour`` says; ``legend``, the rule that chose them (e.g.
    ``routerlab.analysis.comparison.SOURCE_COLOURS.legend()``), is written under the tables.

    ``df`` is long: scenario, router, offered, loss_pct (NaN = grey), colour
    (a rule of :mod:`routerlab.analysis.comparison`); and where it has them (our tables,
    :func:`routerlab.analysis.comparison.ours`): ``ci95_pct`` (written under the loss when
    ``show_ci``), ``runs`` (one run: "n=1", no interval), ``more_received``,
    ``uncertain`` with ``colour_low``/``colour_high`` (a cell whose interval crosses a
    colour boundary is hatched in the other colour), ``reason`` (why a cell is grey) and
    ``verdict``/``verdict_why`` (each row's PASTRAMI verdict, beside its name and, with its
    reason, under the table).
    """
    import textwrap

    from matplotlib.colors import to_rgb

    scen = list(dict.fromkeys(df["scenario"]))
    parts = []
    for s in scen:
        d = df[df["scenario"] == s]
        rows = list(dict.fromkeys(d["router"]))
        caption = [w for line in _caption(d, rows) for w in textwrap.wrap(line, 150, subsequent_indent="    ")]
        parts.append((s, d, rows, caption))
    row_h, line_h = 0.3 if show_ci else 0.22, 0.16
    heights = [(len(rows) + 1) * row_h + len(caption) * line_h + 0.1 for _, _, rows, caption in parts]
    fig = plt.figure(figsize=(10, sum(heights) + 0.45 * len(parts) + 0.5), layout="constrained")
    axes = fig.subplots(len(parts), 1, squeeze=False, height_ratios=heights)[:, 0]
    for ax, (s, d, rows, caption), h in zip(axes, parts, heights):
        cols = sorted(d["offered"].dropna().unique())
        cap_frac = (len(caption) * line_h + 0.1) / h
        ax.axis("off")
        ax.set_title(f"{s}  (columns: {x_label})", fontsize=9)
        if caption:
            ax.text(0, cap_frac - 0.05 / h, "\n".join(caption), transform=ax.transAxes, va="top", ha="left",
                    fontsize=7, linespacing=1.3)
        if not cols:
            continue
        cells, faces, hatches = [], [], []
        for r in rows:
            line, face, hatch = [], [], []
            for c in cols:
                hit = d[(d["router"] == r) & (d["offered"] == c)]
                cell = hit.iloc[0] if len(hit) else pd.Series({"loss_pct": np.nan, "reason": "not run"})
                if not len(hit) and "reason" in d:
                    # a row measured at other loads, or not at all: say which
                    whole = d[(d["router"] == r) & d["offered"].isna()]
                    cell["reason"] = whole["reason"].iloc[0] if len(whole) else "not run"
                elif not len(hit):
                    cell = pd.Series({"loss_pct": np.nan})
                line.append(_cell_text(cell, show_ci))
                colour = cell.get("colour", "grey") if len(hit) else "grey"
                face.append(to_rgb(COLOURS[colour]))
                other = None
                if bool(cell.get("uncertain", False)):
                    other = cell["colour_high"] if cell["colour_low"] == colour else cell["colour_low"]
                hatch.append(other)
            cells.append(line)
            faces.append(face)
            hatches.append(hatch)
        labels = [f"{r}  {d[d['router'] == r]['verdict'].iloc[0]}".rstrip() if "verdict" in d else r for r in rows]
        t = ax.table(cellText=cells, cellColours=faces, rowLabels=labels, colLabels=[f"{c:g}" for c in cols],
                     cellLoc="center", bbox=[0, cap_frac, 1, 1 - cap_frac])
        t.auto_set_font_size(False)
        t.set_fontsize(7 if show_ci else 8)
        for i, hatch in enumerate(hatches):
            for j, other in enumerate(hatch):
                if other is not None:
                    cell = t[i + 1, j]
                    cell.set_hatch("////")
                    cell.set_hatchcolor(COLOURS[other])
    fig.suptitle(title or "Forwarding loss", fontsize=11)
    if legend:
        fig.supxlabel(legend, fontsize=8)
    return fig


def loss_heatmap(df: pd.DataFrame, *, floor: float = 0.01):
    """All scenarios in one heatmap: rows scenario/router (with the row's verdict and why,
    where ``df`` has them), columns offered load, colour = loss in percent on a log scale
    (the colour floored at ``floor``, the number written as it is); blank = not tested."""
    from matplotlib.colors import LogNorm

    d = df.dropna(subset=["offered"]).copy()
    d["row"] = d["scenario"] + " / " + d["router"]
    if "verdict" in d:
        # the reason without its advice: the tables' captions carry that
        d["row"] += ": " + d["verdict"] + ", " + d["verdict_why"].str.split(" (to do", regex=False).str[0]
    g = d.pivot_table(index="row", columns="offered", values="loss_pct", aggfunc="mean", sort=False)
    fig, ax = plt.subplots(figsize=(11, 0.3 * len(g) + 2.2))
    # a log colour scale needs a positive value: the colour is floored, the number written is not
    sns.heatmap(g.clip(lower=floor), norm=LogNorm(vmin=floor, vmax=100), cmap="RdYlGn_r", ax=ax,
                cbar_kws={"label": "loss (%)"}, annot=g.round(1), fmt="g", annot_kws={"fontsize": 7})
    ax.set(xlabel="offered load (fraction of the generator's ceiling)", ylabel="")
    # not the tables' three colours: say so, so that no one reads yellow here as theirs
    ax.set_title("colour: loss on a log scale (not the tables' green/yellow/red rule)", fontsize=9)
    # seaborn turns long row names upright when they seem to overlap; they read across
    ax.tick_params(axis="y", rotation=0, labelsize=8)
    fig.tight_layout()
    return fig
