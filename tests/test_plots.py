"""routerlab.plots: figures build from tidy data and save as PNG and SVG."""

from routerlab import plots, stats, synthetic


def test_panel_and_save(tmp_path):
    import numpy as np

    o = np.arange(0.3e6, 1.51e6, 0.15e6)
    d = synthetic.realistic(o)
    trials = d.assign(tx=1_000_000, rx=lambda x: (1_000_000 * (1 - x.plr)).round().astype(int), trial=0)
    (a,) = stats.assess(trials)
    fig = plots.pastrami_panel(a.summary, a.verdict, title="synthetic")
    assert len(fig.axes) == 3  # PLR, Delta_UCL95 twin, delivery ratio
    paths = plots.save(fig, tmp_path, "a/b c")
    assert [p.name for p in paths] == ["a_b_c.png", "a_b_c.svg"] and all(p.stat().st_size for p in paths)
    assert plots.save(fig, "", "x") == []


def test_verdict_summary_counts():
    import pandas as pd

    recs = pd.DataFrame({"verdict": ["GOOD", "BAD", "GOOD"], "kernel": ["5.15", "5.15", "6.8"]})
    fig = plots.verdict_summary(recs, by=["kernel"])
    heights = sorted(round(p.get_height()) for p in fig.axes[0].patches)
    assert heights == [0, 1, 1, 1]
