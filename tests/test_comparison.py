"""The 100GE comparison tables: colours, the published data, our tables from a dataset,
and the plan's grey cells with their reasons."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from routerlab.analysis import comparison
from routerlab.measuring import comparison as measured
from routerlab.analysis import datasets, losstables, scenarios, stats


@pytest.mark.parametrize("loss, colour", [(0.0, "green"), (-0.1, "green"), (0.01, "yellow"), (0.1, "yellow"),
                                          (2.7, "yellow"), (2.71, "red"), (7.2, "red"), (80.0, "red"), (np.nan, "grey")])
def test_published_colours_follow_the_source(loss, colour):
    """The source: green 0.0%, yellow 0.1-2.7%, red larger; a loss it never prints (above 0,
    below 0.1) is yellow, one above 2.7 red."""
    assert comparison.SOURCE_COLOURS.colour(loss) == colour


@pytest.mark.parametrize("loss, colour", [(0.0, "green"), (-0.1, "green"), (0.01, "yellow"), (2.71, "yellow"),
                                          (4.99, "yellow"), (5.0, "red"), (np.nan, "grey")])
def test_our_colours_keep_their_own_rule(loss, colour):
    assert comparison.OUR_COLOURS.colour(loss) == colour


def test_each_rule_says_itself():
    assert "yellow up to 2.7%, red above 2.7%" in comparison.SOURCE_COLOURS.legend()
    assert "yellow below 5%, red from 5%" in comparison.OUR_COLOURS.legend()
    assert "not the source" in comparison.OUR_COLOURS.legend() or "source's yellow" in comparison.OUR_COLOURS.legend()


def test_published_table_colours_match_the_seed_notes():
    """Every value the source prints falls in the colour the seed notes give it."""
    pub = comparison.published().dropna(subset=["loss_pct"])
    want = np.where(pub["loss_pct"] == 0, "green", np.where(pub["loss_pct"] <= 2.7, "yellow", "red"))
    assert (pub["colour"] == want).all()
    assert set(pub.loc[pub["colour"] == "yellow", "loss_pct"]) >= {0.1, 2.7}


def test_published_tables_render_with_the_right_colours():
    pub = comparison.published()
    assert set(pub["scenario"]) == set(comparison.scenarios())
    not_tested = pub[pub["loss_pct"].isna()]
    assert len(not_tested) and (not_tested["colour"] == "grey").all()
    fig = losstables.loss_tables(pub, x_label="Mpps", legend=comparison.SOURCE_COLOURS.legend())
    assert fig.get_supxlabel() == comparison.SOURCE_COLOURS.legend()
    # every table cell is coloured as its number says
    for ax in fig.axes:
        for tbl in ax.tables:
            for (row, col), cell in tbl.get_celld().items():
                if row == 0 or col < 0:
                    continue
                text = cell.get_text().get_text()
                loss = np.nan if text == "not tested" else float(text.rstrip("%"))
                want = losstables.COLOURS[comparison.SOURCE_COLOURS.colour(loss)]
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
    df = comparison.ours(folder)
    cell = df.query("router == 'nft' and offered == 0.1").iloc[0]
    assert cell["loss_pct"] == pytest.approx(-0.1)  # mean of -0.3%, 0, 0: kept negative, as stats does
    assert cell["colour"] == "green"  # nothing lost
    # and reported, in the data and in the cell: more received than sent is a counting error
    assert cell["more_received"] == 1 and df.query("offered == 0.2")["more_received"].iloc[0] == 0
    fig = losstables.loss_tables(df, x_label="fraction")
    assert "-0.1%\n±0.4\nrx>tx in 1" in _texts(fig)
    plt.close(fig)


def _texts(fig):
    return [c.get_text().get_text() for ax in fig.axes for t in ax.tables for c in t.get_celld().values()]


def _cells(fig):
    """(row label, column label) -> table cell, of the first table."""
    t = fig.axes[0].tables[0]
    cells = t.get_celld()
    return {(cells[r, -1].get_text().get_text(), cells[0, c].get_text().get_text()): cell
            for (r, c), cell in cells.items() if r > 0 and c >= 0}


def test_each_row_carries_its_verdict_each_cell_its_interval(tmp_path):
    df = comparison.ours(_fake_dataset(tmp_path))
    nft = df[df["router"] == "nft"]
    # 0% then 2% mean loss: past 0.5% at the highest load, so no candidate saturation load
    assert set(nft["verdict"]) == {"BAD"} and set(nft["verdict_why"]) == {
        "loss passes the PDR fraction only at the highest load (to do: loads above it)"}
    assert nft["verdict_reason"].iloc[0].startswith("BAD: mean PLR first exceeds 0.50% at the highest load (2000 pps)")
    cell = nft[nft["offered"] == 0.2].iloc[0]
    # 2.0% +- 2.48: from below 0 (green) to 4.5% (yellow), so the cell is drawn hatched
    assert (cell["colour_low"], cell["colour"], cell["colour_high"]) == ("green", "yellow", "yellow")
    assert cell["uncertain"] and not nft[nft["offered"] == 0.1]["uncertain"].iloc[0]
    fig = losstables.loss_tables(df, x_label="fraction")
    cells = _cells(fig)
    hatched = cells["nft  BAD", "0.2"]
    assert hatched.get_hatch() == "////"
    assert np.allclose(hatched.get_hatchcolor()[:3], plt.matplotlib.colors.to_rgb(losstables.COLOURS["green"]))
    assert cells["nft  BAD", "0.1"].get_hatch() is None
    assert cells["nft  BAD", "0.2"].get_text().get_text() == "2.0%\n±2.5"
    # the grey row says why in its cells, and fully under the table
    assert cells["linux", "0.1"].get_text().get_text() == "no firewall"
    caption = "\n".join(t.get_text() for t in fig.axes[0].texts)
    assert "nft: BAD, loss passes the PDR fraction only at the highest load" in caption
    assert "grey (linux): engine linux does not support firewall" in caption
    assert losstables.UNCERTAIN_NOTE in caption
    plt.close(fig)
    v = comparison.verdicts(df).set_index("router")
    assert v.loc["nft", "verdict"] == "BAD" and v.loc["linux", "grey"] == "engine linux does not support firewall"


def test_a_cell_with_one_run_has_no_interval_and_says_so(tmp_path):
    folder = _fake_dataset(tmp_path)
    ds = datasets.read(folder)
    ds.trials = ds.trials.drop(index=[4, 5])  # one trial left at 2000 pps
    datasets.write(ds, folder)
    df = comparison.ours(folder)
    cell = df.query("router == 'nft' and offered == 0.2").iloc[0]
    assert cell["runs"] == 1 and np.isnan(cell["ci95_pct"]) and not cell["uncertain"]
    fig = losstables.loss_tables(df, x_label="fraction")
    assert _cells(fig)["nft  BAD", "0.2"].get_text().get_text() == "1.0%\nn=1"
    assert losstables.SINGLE_RUN_NOTE in "\n".join(t.get_text() for t in fig.axes[0].texts)
    plt.close(fig)


def test_a_load_the_generator_could_not_offer_is_grey_with_why(tmp_path):
    folder = _fake_dataset(tmp_path)
    ds = datasets.read(folder)
    ds.trials["generator_limited"] = ds.trials["offered_pps"] == 2000.0
    datasets.write(ds, folder)
    df = comparison.ours(folder)
    cell = df.query("router == 'nft' and offered == 0.2").iloc[0]
    assert np.isnan(cell["loss_pct"]) and cell["colour"] == "grey" and cell["reason"].startswith("generator-limited")
    # not a failure of the router: its PDR is at least the load below
    cap = comparison.capacity(df).set_index("router")
    assert cap.loc["nft", "capacity"] == 0.1 and cap.loc["nft", "status"] == "at_least_max"
    fig = losstables.loss_tables(df, x_label="fraction")
    assert _cells(fig)["nft  BAD", "0.2"].get_text().get_text() == "generator-limited"
    plt.close(fig)


def test_the_tables_titles_captions_and_tables_do_not_overlap(tmp_path):
    df = pd.concat([comparison.ours(_fake_dataset(tmp_path)),
                    comparison.ours(_fake_dataset(tmp_path)).assign(scenario="gre_multiflow_50fw")])
    fig = losstables.loss_tables(df, x_label="offered load (fraction of the generator's ceiling)", title="Ours")
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    boxes = [("suptitle", fig._suptitle.get_window_extent(r))]
    for i, ax in enumerate(fig.axes):
        boxes += [(f"title {i}", ax.title.get_window_extent(r)), (f"table {i}", ax.tables[0].get_window_extent(r))]
        boxes += [(f"caption {i}", t.get_window_extent(r)) for t in ax.texts]
    for j, (a, box) in enumerate(boxes):
        for b, other in boxes[j + 1:]:
            assert not box.overlaps(other), f"{a} overlaps {b}"
    plt.close(fig)


def test_orderings_rank_by_the_highest_clean_load():
    df = pd.DataFrame({"scenario": "s", "router": ["a", "a", "b", "b"], "offered": [1, 2, 1, 2],
                       "loss_pct": [0.0, 3.0, 0.0, 0.1]})
    o = comparison.orderings(df, df)
    # b passed every load: its capacity is only known to be at least the top one
    assert o.iloc[0, 2] == "b (≥2) > a (1)"


def test_capacity_is_the_pdr_on_a_non_monotone_row():
    # a passes at 0.3 above a failing 0.2: its capacity is 0.1 ("that load and every lower
    # one"), not 0.3; b passes at exactly 0.5%; c fails from the lowest load; d has a load the
    # published table did not test (loss already high), which fails
    rows = {"a": [0.0, 3.0, 0.0], "b": [0.5, 0.6, 0.0], "c": [0.7, 0.0, 0.0], "d": [0.0, np.nan, 0.0]}
    df = pd.DataFrame([{"scenario": "s", "router": r, "offered": o, "loss_pct": x}
                       for r, xs in rows.items() for o, x in zip((0.1, 0.2, 0.3), xs)])
    cap = comparison.capacity(df).set_index("router")
    assert cap["capacity"].to_dict() == pytest.approx({"a": 0.1, "b": 0.1, "c": np.nan, "d": 0.1}, nan_ok=True)
    assert cap.loc["c", "status"] == "below_range"
    # the same as stats' PDR of the row, the one definition
    assert stats.pdr_load([0.1, 0.2, 0.3], np.array(rows["a"]) / 100, 0.005).load == 0.1
    assert comparison.orderings(df, df).iloc[0, 2] == "a (0.1) = b (0.1) = d (0.1)"


def test_plan_greys_what_an_engine_cannot_do():
    plan = measured.cell_plan(("linux", "nft"), ("single-flow-fw50", "gre-multiflow-fw50"))
    why = {(r.engine, r.scenario): r.reason for r in plan.itertuples() if not r.runnable}
    assert "firewall" in why["linux", "single-flow-fw50"]
    assert "gre" in why["nft", "gre-multiflow-fw50"]
    assert plan[(plan["engine"] == "nft") & (plan["scenario"] == "single-flow-fw50")]["runnable"].all()
    assert scenarios.load(comparison.scenarios()["ddos_drop_50pct"]).drop_share == 0.5


def test_a_failing_cell_turns_grey_with_its_reason_and_the_rest_goes_on(tmp_path, monkeypatch):
    from routerlab.measuring import measurement
    from routerlab.errors import RouterlabError

    done = []

    def fake_measure(request, **kw):
        if request.engine == "nft" and request.scenario == "single-flow-fw50":
            raise RouterlabError("nft did not become ready")
        done.append((request.engine, request.scenario))
        return request.out

    monkeypatch.setattr(measurement, "measure", fake_measure)
    measured.campaign(tmp_path, ("linux", "nft"), ("single-flow-fw50", "ddos-drop50"), ceiling_pps=1e5)
    cells = pd.read_csv(tmp_path / "cells.csv").set_index(["engine", "scenario"])
    assert cells.loc[("nft", "single-flow-fw50"), "reason"] == "failed: nft did not become ready"
    assert not cells.loc[("nft", "single-flow-fw50"), "runnable"]
    assert done == [("nft", "ddos-drop50")]  # linux has no firewall: grey, never started


def test_heatmap_draws_every_measured_cell(tmp_path):
    df = comparison.ours(_fake_dataset(tmp_path))
    fig = losstables.loss_heatmap(df)
    assert fig.axes[0].get_ylabel() == "" and len(fig.axes[0].texts) == 2  # two loads of one cell, annotated
    plt.close(fig)


def test_a_measured_folder_names_its_scenarios_by_its_own_campaign_file(tmp_path):
    """The published names of a comparison come from the compare step of the campaign file
    kept beside its data (a campaign of one's own may map other names), else the project's."""
    import yaml

    import shutil

    d = datasets.datasets_dir()
    shutil.copytree(d / "comparison", tmp_path / "c")
    path = tmp_path / "c" / "campaign.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["steps"][0]["compare"]["scenarios"] = {"my_name": "single-flow-fw50", **{
        k: v for k, v in doc["steps"][0]["compare"]["scenarios"].items() if v != "single-flow-fw50"}}
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert "my_name" in set(comparison.ours(tmp_path / "c")["scenario"])
    assert "my_name" not in set(comparison.ours(d / "comparison")["scenario"])


def _modules(root, release, **files):
    base = root / "lib" / "modules" / release
    base.mkdir(parents=True)
    for name, text in files.items():
        (base / name.replace("_", ".")).write_text(text)


def test_the_kernel_module_check_reads_this_machine(tmp_path, monkeypatch):
    """What the notebook says of GRE is what the machine running it finds: loaded, built in,
    loadable, absent, or unknown (no module lists, as in a container)."""
    import os

    from routerlab.measuring import doctor

    release = os.uname().release
    assert doctor.kernel_module("ip_gre", tmp_path) == "unknown"
    _modules(tmp_path, release, modules_dep="kernel/net/ipv4/ip_tunnel.ko.zst:\n")
    assert doctor.kernel_module("ip_gre", tmp_path) == "absent"
    (tmp_path / "lib" / "modules" / release / "modules.dep").write_text(
        "kernel/net/ipv4/ip_gre.ko.zst: kernel/net/ipv4/gre.ko.zst\nkernel/net/ipv4/gre.ko.zst:\n")
    assert doctor.kernel_module("ip_gre", tmp_path) == "loadable"
    (tmp_path / "lib" / "modules" / release / "modules.builtin").write_text("kernel/net/ipv4/ip_gre.ko\n")
    assert doctor.kernel_module("ip_gre", tmp_path) == "built in"
    (tmp_path / "sys" / "module" / "ip_gre").mkdir(parents=True)
    assert doctor.kernel_module("ip_gre", tmp_path) == "loaded"
    # gre.ko is not ip_gre.ko
    assert doctor.kernel_module("gre", tmp_path) == "loadable"


@pytest.mark.parametrize("state, says", [("absent", "has no GRE module"), ("loaded", "has its GRE module (ip_gre) loaded"),
                                         ("unknown", "no module list")])
def test_the_gre_sentence_is_this_machines(monkeypatch, state, says):
    from routerlab.measuring import doctor
    from routerlab import engines

    monkeypatch.setattr(doctor, "kernel_module", lambda name, root=None: state)
    text = measured.gre_here()
    assert says in text
    gre = [n for n, cls in engines.classes().items() if "gre" in cls.features]
    assert gre and all(n in text for n in gre) and "nft" in text


def test_our_orderings_rank_only_rows_whose_repeats_separate():
    # each row's sweep at three loads, three trials each: the K-th trials are a repeat
    def row(router, losses):
        return [{"scenario": "s", "router": router, "offered": o, "loss_pct": 100 * sum(ls) / len(ls),
                 "trial_loss": tuple(ls), "reason": ""} for o, ls in zip((0.1, 0.2, 0.3), losses)]

    steady_high = row("a", [(0, 0, 0), (0, 0, 0), (0.1, 0.1, 0.1)])       # 0.2 in every repeat
    steady_low = row("b", [(0, 0, 0), (0.1, 0.1, 0.1), (0.1, 0.1, 0.1)])  # 0.1 in every repeat
    moving = row("c", [(0, 0, 0), (0, 0.1, 0.1), (0.1, 0.1, 0.1)])        # 0.2 once, 0.1 twice
    df = pd.DataFrame(steady_high + steady_low)
    assert comparison.orderings(df, df).iloc[1, 2] == "a (0.2) > b (0.1)"
    reps = comparison.repeated_capacity(df)
    assert reps[("s", "a")].values == (0.2, 0.2, 0.2) and reps[("s", "b")].values == (0.1, 0.1, 0.1)
    df = pd.DataFrame(steady_high + moving)
    # the mean loss puts c's capacity at 0.1, but one repeat of it reached 0.2: a tie
    assert comparison.orderings(df, df).iloc[1, 2] == "a (0.2) ≈ c (0.1)"
    # the published table (one measurement) keeps its strict order
    assert comparison.orderings(df.drop(columns="trial_loss"), df).iloc[0, 2] == "a (0.2) > c (0.1)"
