"""The 100GE comparison tables: colours, the published data, our tables from a dataset,
and the plan's grey cells with their reasons."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from routerlab import comparison, datasets, plots, scenarios


@pytest.mark.parametrize("loss, colour", [(0.0, "green"), (-0.1, "green"), (0.01, "yellow"), (4.99, "yellow"), (5.0, "red"),
                                          (80.0, "red"), (np.nan, "grey")])
def test_colours_follow_the_source(loss, colour):
    assert comparison.colour(loss) == colour


def test_published_tables_render_with_the_right_colours():
    pub = comparison.published()
    assert set(pub["scenario"]) == set(comparison.SCENARIOS)
    not_tested = pub[pub["loss_pct"].isna()]
    assert len(not_tested) and (not_tested["colour"] == "grey").all()
    fig = plots.loss_tables(pub, x_label="Mpps")
    # every table cell is coloured as its number says
    for ax in fig.axes:
        for tbl in ax.tables:
            for (row, col), cell in tbl.get_celld().items():
                if row == 0 or col < 0:
                    continue
                text = cell.get_text().get_text()
                want = plots.COLOURS[comparison.colour(float(text.rstrip("%")) if text else np.nan)]
                assert np.allclose(cell.get_facecolor()[:3], plt.matplotlib.colors.to_rgb(want))
    plt.close(fig)


def _fake_dataset(tmp_path):
    """A small dataset in our format: two loads of one cell, plus a grey cell."""
    exp = "nft-single-flow-fw50"
    trials = pd.DataFrame({"experiment": exp, "offered_pps": [1000.0] * 3 + [2000.0] * 3, "trial": [0, 1, 2] * 2,
                           "tx": [1000] * 6, "rx": [1000, 1000, 1000, 990, 980, 970]})
    experiments = pd.DataFrame({"experiment": [exp], "engine": ["nft"], "generator_ceiling_pps": [10000.0],
                                "source": ["test"], "where": ["test"], "when": ["2026-11-22"]})
    datasets.write(datasets.Dataset(trials, experiments), tmp_path)
    pd.DataFrame([{"engine": "linux", "scenario": "single-flow-fw50", "runnable": False,
                   "reason": "engine linux does not support firewall"}]).to_csv(tmp_path / "cells.csv", index=False)
    return tmp_path


def test_our_tables_from_a_dataset(tmp_path):
    df = comparison.ours(_fake_dataset(tmp_path))
    cell = df[(df["router"] == "nft") & (df["offered"] == 0.2)].iloc[0]
    assert cell["loss_pct"] == pytest.approx(2.0) and cell["colour"] == "yellow" and cell["runs"] == 3
    assert cell["ci95_pct"] == pytest.approx(4.303 * 1.0 / np.sqrt(3), rel=1e-3)  # t(0.975, 2) * sd / sqrt(3)
    assert df[(df["router"] == "nft") & (df["offered"] == 0.1)]["colour"].iloc[0] == "green"
    grey = df[df["router"] == "linux"].iloc[0]
    assert grey["colour"] == "grey" and "firewall" in grey["reason"]
    assert comparison.grid(df, "single_flow_50fw").loc["linux"].isna().all()


def test_a_trial_that_received_more_than_was_sent_is_not_clipped(tmp_path):
    folder = _fake_dataset(tmp_path)
    ds = datasets.read(folder)
    ds.trials.loc[ds.trials["offered_pps"] == 1000.0, "rx"] = [1003, 1000, 1000]  # a few extra packets counted
    datasets.write(ds, folder)
    cell = comparison.ours(folder).query("router == 'nft' and offered == 0.1").iloc[0]
    assert cell["loss_pct"] == pytest.approx(-0.1)  # mean of -0.3%, 0, 0: kept negative, as stats does
    assert cell["colour"] == "green"  # nothing lost


def test_orderings_rank_by_the_highest_clean_load():
    df = pd.DataFrame({"scenario": "s", "router": ["a", "a", "b", "b"], "offered": [1, 2, 1, 2],
                       "loss_pct": [0.0, 3.0, 0.0, 0.1]})
    o = comparison.orderings(df, df)
    assert o.iloc[0, 2] == "b (2) > a (1)"


def test_plan_greys_what_an_engine_cannot_do():
    plan = comparison.cell_plan(("linux", "nft"), ("single-flow-fw50", "gre-multiflow-fw50"))
    why = {(r.engine, r.scenario): r.reason for r in plan.itertuples() if not r.runnable}
    assert "firewall" in why["linux", "single-flow-fw50"]
    assert "gre" in why["nft", "gre-multiflow-fw50"]
    assert plan[(plan["engine"] == "nft") & (plan["scenario"] == "single-flow-fw50")]["runnable"].all()
    assert scenarios.load(comparison.SCENARIOS["ddos_drop_50pct"]).drop_share == 0.5


def test_a_failing_cell_turns_grey_with_its_reason_and_the_rest_goes_on(tmp_path, monkeypatch):
    from routerlab import measuring
    from routerlab.errors import RouterlabError

    done = []

    def fake_measure(engine, scenario, out, **kw):
        if engine == "nft" and scenario == "single-flow-fw50":
            raise RouterlabError("nft did not become ready")
        done.append((engine, scenario))
        return out

    monkeypatch.setattr(measuring, "measure", fake_measure)
    comparison.campaign(tmp_path, ("linux", "nft"), ("single-flow-fw50", "ddos-drop50"), ceiling_pps=1e5)
    cells = pd.read_csv(tmp_path / "cells.csv").set_index(["engine", "scenario"])
    assert cells.loc[("nft", "single-flow-fw50"), "reason"] == "failed: nft did not become ready"
    assert not cells.loc[("nft", "single-flow-fw50"), "runnable"]
    assert done == [("nft", "ddos-drop50")]  # linux has no firewall: grey, never started


def test_heatmap_draws_every_measured_cell(tmp_path):
    df = comparison.ours(_fake_dataset(tmp_path))
    fig = plots.loss_heatmap(df)
    assert fig.axes[0].get_ylabel() == "" and len(fig.axes[0].texts) == 2  # two loads of one cell, annotated
    plt.close(fig)
