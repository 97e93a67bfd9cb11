"""routerlab.analysis.plots: figures build from tidy data and save as PNG and SVG."""

import pandas as pd

from routerlab.analysis import plots, stats, synthetic


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


def _sample_assessments(pastrami_sample, n):
    from routerlab.analysis import pastrami

    return stats.assess(pastrami.read_dir(pastrami_sample))[:n]


def test_fixed_panel_margins_are_what_tight_layout_finds(pastrami_sample):
    # The panel skips tight_layout for speed; its fixed margins must stay what
    # tight_layout would choose, with a title and without.
    for a in _sample_assessments(pastrami_sample, 3):
        for title in ("routing, CloudLab tb1, bare-metal, 50 runs, T = 10 s, kernel 6.8, unpinned", None):
            fig = plots.pastrami_panel(a.summary, a.verdict, title=title)
            fixed = vars(fig.subplotpars).copy()
            fig.tight_layout()
            tight = vars(fig.subplotpars)
            for k in ("left", "right", "top", "bottom", "hspace"):
                assert abs(fixed[k] - tight[k]) < 2e-3, (k, fixed[k], tight[k])
            plots.plt.close(fig)


def test_panels_drawn_by_workers_are_the_panels_drawn_here(tmp_path, pastrami_sample):
    res = _sample_assessments(pastrami_sample, 5)
    here = plots.draw_panels(res, out_dir=tmp_path / "one", show=1, jobs=1)
    there = plots.draw_panels(res, out_dir=tmp_path / "two", show=1, jobs=2)
    plots.plt.close("all")
    assert [p.name for p in here] == [p.name for p in there] and len(here) == 10
    for p, q in zip(here, there):
        if p.suffix == ".png":  # SVG ids are salted at random; PNG is pixels only
            assert p.read_bytes() == q.read_bytes(), p.name
    assert not list(tmp_path.glob("two/**/*.pickle"))


def test_a_failing_panel_worker_is_reported(tmp_path, pastrami_sample):
    res = _sample_assessments(pastrami_sample, 4)
    (tmp_path / "taken").write_text("a file where the panels folder should be")
    import pytest

    with pytest.raises(RuntimeError, match=r"panel worker \d failed with exit code 1: .*FileExistsError"):
        plots.draw_panels(res, out_dir=tmp_path, subdir="taken", show=0, jobs=2)


def test_load_loss_band_is_the_student_t_interval_every_run():
    import numpy as np
    import pandas as pd

    d = pd.DataFrame({"offered_pps": np.repeat([1e5, 2e5], 4), "plr": [0.1, 0.2, 0.3, 0.4, 0.5, 0.5, 0.6, 0.8]})
    bands = []
    for _ in range(2):
        fig = plots.load_loss(d, log=False, errorbar=("ci", 95))
        (band,) = fig.axes[0].collections
        bands.append(band.get_paths()[0].vertices[:, 1])
        plots.plt.close(fig)
    np.testing.assert_array_equal(bands[0], bands[1])
    m, h = stats.mean_interval([0.1, 0.2, 0.3, 0.4])
    assert np.isclose(bands[0], m - h).any() and np.isclose(bands[0], m + h).any()


def test_a_panel_drawn_into_a_used_figure_is_the_panel_drawn_anew(tmp_path, pastrami_sample):
    # draw_panels reuses one figure for speed: nothing of the panel before may remain
    from routerlab.analysis import pastrami

    res = stats.assess(pastrami.read_dir(pastrami_sample))
    small, big = min(res, key=lambda a: a.summary.offered_pps.max()), max(res, key=lambda a: len(a.summary))
    used = plots.pastrami_panel(big.summary, big.verdict, title="the one before, with more loads")
    used = plots.pastrami_panel(small.summary, small.verdict, fig=used)
    fresh = plots.pastrami_panel(small.summary, small.verdict)
    assert used.axes[0].get_xlim() == fresh.axes[0].get_xlim()
    a, b = plots.save(used, tmp_path, "used"), plots.save(fresh, tmp_path, "fresh")
    assert a[0].read_bytes() == b[0].read_bytes()


def _sweeps():
    import pandas as pd

    rows = [{"experiment": e, "offered_pps": o, "trial": k, "tx": 10_000, "rx": round(10_000 * (1 - p))}
            for e, losses in {"flat": {100: [0, 0, 0], 200: [0, 0, 0]},
                              "lossy": {100: [0, 0.004, 0.008], 200: [0.3, 0.3, 0.3], 300: [0.5]}}.items()
            for o, ps in losses.items() for k, p in enumerate(ps)]
    return stats.assess(pd.DataFrame(rows))


def test_sweeps_carry_their_verdicts_and_show_what_has_no_interval():
    res = _sweeps()
    fig = plots.sweeps(stats.summaries(res), stats.records(res), ceiling=400)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert ("flat: BAD, saturation not reached in the tested range (to do: loads up to the generator's ceiling, "
            "or a search)") in labels
    assert "lossy: GOOD, saturation right after the PDR load" in labels
    assert "one run: no interval" in labels and "95% interval contains PLR = 0.5%" in labels
    lines = {ln.get_label(): ln for ln in fig.axes[0].lines}
    hollow = [ln for ln in fig.axes[0].lines if ln.get_markerfacecolor() == "white" and len(ln.get_xdata())]
    assert [list(ln.get_xdata()) for ln in hollow] == [[300]]  # lossy's one-run load
    ringed = [ln for ln in fig.axes[0].lines if ln.get_markerfacecolor() == "none" and len(ln.get_xdata())]
    assert [list(ln.get_xdata()) for ln in ringed] == [[100]]  # 0.4% +- 1%: crosses 0.5%
    assert "generator ceiling" in lines


def test_a_panel_says_why_and_marks_a_load_with_one_run():
    res = _sweeps()
    fig = plots.pastrami_panel(res[1].summary, res[1].verdict)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts[:2] == ["GOOD", "saturation right after the PDR load"]
    assert "one run: no interval" in fig.axes[0].get_legend_handles_labels()[1]


def test_a_pdr_the_generator_bounded_has_no_bar_but_its_lower_bound():
    import pandas as pd

    ours = pd.DataFrame({"engine": ["click", "fastclick-dpdk"], "where": "testbed (PDR@0.5%)", "mpps": [0.159, 0.331],
                         "at_least": [False, True], "ratio_to_fastest": [1.0, float("nan")]})
    pub = pd.DataFrame({"router": ["Click"], "ratio_to_fastest": [0.29]})
    fig = plots.ratio_bars(ours, pub)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts == ["testbed (PDR@0.5%): at least 0.331 Mpps\n(limited by the generator)"]
    assert fig.axes[0].texts[0].get_position()[0] == 1  # in fastclick-dpdk's column


def test_a_sweep_that_never_failed_is_drawn_as_at_least_its_highest_load():
    from routerlab.analysis import datasets, stats

    t = datasets.read(datasets.datasets_dir() / "click-course").trials
    # the kernel's sweep cut before its first lossy load: real trials of a sweep that never failed
    lin = t[t["experiment"] == "linux-kernel"]
    first_loss = lin.loc[lin["rx"] < lin["tx"], "offered_pps"].min()
    t = pd.concat([t[t["experiment"] == "your-router"], lin[lin["offered_pps"] < first_loss]])
    results = stats.assess(t)
    rec = stats.records(results).set_index("experiment")
    assert rec.loc["linux-kernel", "pdr_status"] == "at_least_max"
    assert rec.loc["your-router", "pdr_status"] != "at_least_max"
    fig = plots.pdr_comparison(stats.summaries(results), rec.reset_index(), labels={"your-router": "yours",
                                                                                     "linux-kernel": "Linux"})
    bx = fig.axes[1]
    bars = bx.patches
    top = t[t["experiment"] == "linux-kernel"]["offered_pps"].max()
    assert bars[1].get_width() == top and bars[1].get_hatch() == "//" and not bars[0].get_hatch()
    texts = [x.get_text() for x in bx.texts]
    assert texts[1].startswith(f" at least {top:,.0f} pps (no load failed), {rec.loc['linux-kernel', 'verdict']}")
    assert texts[0].startswith(f" {rec.loc['your-router', 'pdr_pps']:,.0f} pps, {rec.loc['your-router', 'verdict']}")
