"""Every number the README of comparison states, recomputed from its files (see readme_checks)."""

import pandas as pd
import pytest

from routerlab import comparison, datasets
from readme_checks import BMV2, D, VETH_CODE, pps, says, sig2, span, trials, veth


@pytest.fixture(scope="module")
def ours():
    return comparison.ours(D / "comparison")


SHORT = {"single_flow_50fw": "single flow", "gre_multiflow_50fw": "GRE", "routes_900k_multiflow_50fw": "900k routes",
         "ddos_drop_50pct": "drop"}
TABLE = {"single_flow_50fw": "single flow, 50 rules", "gre_multiflow_50fw": "GRE, multi-flow, 50 rules",
         "routes_900k_multiflow_50fw": "900k routes, multi-flow, 50 rules", "ddos_drop_50pct": "50% drop"}


def test_comparison_cells_runs_and_intervals(ours):
    t = trials("comparison")
    measured = ours[ours["reason"] == ""]
    e = datasets.read_experiments(D / "comparison")
    assert (t.groupby(["experiment", "offered_pps"]).size() == 5).all() and t["offered_pps"].nunique() == 8
    assert (t["duration_s"] == 2).all()
    says("comparison", "(0.1-1.0, 8 loads). Each cell measured K = 5 trials of T = 2 s",
         f"so {(measured['runs'] < 5).sum()} of the {len(measured)} measured cells hold fewer than 5; "
         f"{(measured['runs'] == 1).sum()} hold one",
         f"{measured['uncertain'].sum()} of the {len(measured)} measured cells have an interval that reaches "
         "another colour",
         f"the start of that run: {e['generator_ceiling_pps'].iloc[0]:,.0f} pps",
         f"--ceiling {e['generator_ceiling_pps'].iloc[0]:.0f}")
    assert e["generator_ceiling_pps"].nunique() == 1 and e["generator_ceiling_pps"].iloc[0] == veth()[3]
    assert (measured["runs"] >= 1).all()  # "every measured cell kept at least one trial"
    for col in ("kernel", "cpu", "pinning"):
        assert e[col].nunique() == 1
    says("comparison", f"kernel {e['kernel'].iloc[0]}), 2 vCPUs ({e['cpu'].iloc[0]})", f"`{e['pinning'].iloc[0]}`")
    assert (e["command"].str.replace(r"--out \S+", "--out datasets/comparison", regex=True)
            == "routerlab compare --out datasets/comparison --ceiling 397735").all()


def test_comparison_when(ours):
    t = trials("comparison")
    at = pd.to_datetime(t["started_at"])
    says("comparison", f"**When:** {at.min():%Y-%m-%d %H:%M} to {at.max():%Y-%m-%d %H:%M} UTC (first and last trial "
                       f"start)", f"code: commit {VETH_CODE[:7]}")
    assert at.min() > pd.to_datetime(trials(BMV2)["started_at"]).max()


def test_comparison_in_words(ours):
    m = ours[ours["reason"] == ""]

    def cells(router, scen=None):
        d = m[m["router"] == router]
        return d if scen is None else d[d["scenario"].isin(scen)]

    cap = comparison.capacity(ours).set_index(["scenario", "router"])
    others = ["gre_multiflow_50fw", "routes_900k_multiflow_50fw", "ddos_drop_50pct"]
    assert (cap.loc[[(s, "ebpf") for s in others], "status"] == "at_least_max").all()
    assert cap.loc[("single_flow_50fw", "ebpf"), "capacity"] == cap.loc[("single_flow_50fw", "nft"), "capacity"] == 0.6
    ebpf = cells("ebpf").set_index(["scenario", "offered"])["loss_pct"]
    assert (ebpf.xs(0.1, level="offered") == 0).all()
    up = ebpf[(ebpf.index.get_level_values("offered") >= 0.2)]
    one_high = up[(up.index.get_level_values("scenario") == "single_flow_50fw")
                  & (up.index.get_level_values("offered") > 0.6)]
    rest = up.drop(one_high.index)
    says("comparison", f"and {span(rest, lambda x: sig2(x / 100))}% from 20% up, except with one flow above 60% "
                       f"({sig2(one_high.iloc[0] / 100)}% at 80%, {sig2(one_high.iloc[1] / 100)}% at the ceiling)")
    d = comparison_lost_by_place()
    assert set(d.loc["ebpf"].index) == {"dut NOT_SPECIFIED"}
    dp = cells("fastclick-dpdk").set_index(["scenario", "offered"])
    one = dp.loc["single_flow_50fw"]
    assert (one.loc[:0.8, "loss_pct"] == 0).all()
    others_dp = dp.drop("single_flow_50fw", level="scenario")["loss_pct"]
    assert (others_dp <= 0.5).all()
    says("comparison", f"(at most {others_dp.max():.3f}%, with GRE at the ceiling)",
         f"With one flow at the ceiling it lost {sig2(one.loc[1.0, 'loss_pct'] / 100)}% in the "
         f"{one.loc[1.0, 'runs']} trials the generator could deliver, and at 80% only one of 5 trials was delivered")
    assert one.loc[0.8, "runs"] == 1 and others_dp.idxmax() == ("gre_multiflow_50fw", 1.0)
    nft = cells("nft").set_index(["scenario", "offered"])["loss_pct"]
    r9, sf = nft.loc["routes_900k_multiflow_50fw"], nft.loc["single_flow_50fw"]
    assert cap.loc[("routes_900k_multiflow_50fw", "nft"), "capacity"] == cap.loc[("single_flow_50fw", "nft"), "capacity"]
    says("comparison", f"({r9.loc[0.6]:.0f}% at 60%, then {r9.loc[0.8]:.1f}% at 80%); with one flow it loses "
                       f"{sf.loc[0.6]:.2f}% at 60% and {sf.loc[0.8]:.0f}% at 80%")
    bmv2 = cells("bmv2").set_index(["scenario", "offered"])["loss_pct"]
    at01, at02 = bmv2.xs(0.1, level="offered"), bmv2.xs(0.2, level="offered")
    says("comparison", f"It loses {span(at01, lambda x: sig2(x / 100))}% already at 10% of the ceiling "
                       f"({pps(m[m['offered'] == 0.1]['offered_pps'].iloc[0])} pps), and "
                       f"{span(at02, lambda x: f'{x:.0f}')}% at 20%",
         f"its PDR in `testbed-bmv2` is {datasets.read_searches([D / BMV2]).set_index('engine').loc['bmv2', 'answer']}")
    full = m[m["offered"] == 1.0]
    green = full[full["colour"] == "green"]
    yellow = full[full["colour"] == "yellow"]
    assert list(zip(green["router"], green["scenario"])) == [("fastclick-dpdk", "routes_900k_multiflow_50fw"),
                                                             ("fastclick-dpdk", "ddos_drop_50pct")]
    assert sorted(zip(yellow["router"], yellow["scenario"])) == sorted(
        [("ebpf", s) for s in others] + [("fastclick-dpdk", "gre_multiflow_50fw")])
    assert (full.drop(green.index).drop(yellow.index)["colour"] == "red").all()
    says("comparison", f"**At full load only {['no', 'one', 'two', 'three'][len(green)]} cells are green**",
         f"fractions of a {m['offered_pps'].max() / 1e3:.0f} kpps generator")


def comparison_lost_by_place() -> pd.Series:
    """Lost packets of the kept trials per engine and counter (``place reason``)."""
    t = trials("comparison")
    e = datasets.read_experiments(D / "comparison").set_index("experiment")["engine"]
    keys = ["experiment", "offered_pps", "trial"]
    d = datasets.read_drops([D / "comparison"])
    rows = d[d["counted_as"] == "loss"].merge(t[~t["limited"]][keys], on=keys)
    return rows.assign(engine=rows["experiment"].map(e), w=rows["place"] + " " + rows["reason"]) \
        .groupby(["engine", "w"])["packets"].sum()


def test_comparison_where_the_loss_went():
    t = trials("comparison")
    e = datasets.read_experiments(D / "comparison").set_index("experiment")
    k = t[~t["limited"]].assign(engine=lambda x: x["experiment"].map(e["engine"]))
    tot = k.groupby("engine")[["lost", "lost_unexplained"]].sum()
    where = {"nft": "dut CPU_BACKLOG", "ebpf": "dut NOT_SPECIFIED (the XDP ring)",
             "click": "FromDevice's capture socket (`kernel_drops`), its output Queue",
             "fastclick": "FromDevice's capture socket (`kernel_drops`), its output Queue",
             "fastclick-dpdk": "FromDPDKDevice `hw_dropped` (its AF_XDP ring)",
             "bmv2": "simple_switch's capture socket (`d0.capture_drops`)"}
    for eng, w in where.items():
        says("comparison", f"| {eng} | {pps(tot.loc[eng, 'lost'])} | {w} | {pps(tot.loc[eng, 'lost_unexplained'])} |")
    # the places named are the counters that took (nearly) all of each engine's loss
    d = comparison_lost_by_place()
    share = d / d.groupby(level=0).transform("sum")
    top = {"nft": ["dut CPU_BACKLOG"], "ebpf": ["dut NOT_SPECIFIED"],
           "click": ["dut FromDevice@4.kernel_drops", "dut out/Queue@1.drops"],
           "fastclick": ["dut FromDevice@4.kernel_drops", "dut out/Queue@1.drops"],
           "fastclick-dpdk": ["dut FromDPDKDevice@4.hw_dropped"], "bmv2": ["dut d0.capture_drops"]}
    for eng, places in top.items():
        assert share.loc[eng].loc[places].sum() > 0.999, eng
    # the small remainders of nft, click and fastclick are all in the drop scenario
    un = k.groupby(["engine", "scenario"])["lost_unexplained"].sum()
    small = un.loc[["nft", "click", "fastclick"]]
    assert (small[small != 0].index.get_level_values("scenario") == "ddos-drop50").all()
    assert (un.loc[["ebpf", "fastclick-dpdk"]] == 0).all()
    says("comparison", "no counter read for these files saw "
                       f"{100 * tot.loc['bmv2', 'lost_unexplained'] / tot.loc['bmv2', 'lost']:.1f}% of its lost packets")


def test_comparison_verdicts(ours):
    v = comparison.verdicts(ours)
    why = ours[["scenario", "router", "verdict_why"]].drop_duplicates()
    v = v[v["verdict"] != ""].merge(why, on=["scenario", "router"])
    good = v[v["verdict"] == "GOOD"]
    says("comparison", f"{len(good)} of the {len(v)} rows are **GOOD**", f"{len(v) - len(good)} are **BAD**")
    for (verdict, why), g in v.groupby(["verdict", "verdict_why"], sort=False):
        rows = "; ".join(f"{r} ({', '.join(SHORT[s] for s in gr['scenario'])})"
                         for r, gr in g.groupby("router", sort=False))
        says("comparison", f"- {verdict}, {why}: {rows}")


def test_comparison_rankings_are_pdrs(ours):
    pub = comparison.published()
    ranking = comparison.orderings(pub, ours).set_index(["scenario", "source"]).iloc[:, 0]
    for label, df in (("published", pub), ("ours", ours)):
        cap = comparison.capacity(df)
        for s, table_name in TABLE.items():
            c = cap[cap["scenario"] == s]
            text = ranking[s, label]
            below = c[c["status"] == "below_range"]["router"].tolist()
            if below:
                text += f"; {', '.join(below)} {'loses' if len(below) == 1 else 'lose'} more at the lowest load"
            says("comparison", text)
            assert ("| " + table_name + " | ") in " ".join((D / "comparison" / "README.md").read_text().split())
