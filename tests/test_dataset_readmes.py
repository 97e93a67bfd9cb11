"""Every number a dataset README states, recomputed from the dataset's own files (and, for
how a file was made, from the code that made it), so that the text and the data cannot
drift apart. Each test builds the README's sentence from the data and looks for it in the
README (whitespace folded), so a changed number fails here until the text says it."""

import inspect

import numpy as np
import pandas as pd
import pytest

from routerlab import comparison, datasets, stats, traffic
from routerlab.benchmarks import forwarding

D = datasets.datasets_dir()
KERNEL_PATHS = ["linux-single-flow", "nft-single-flow-fw0", "nft-single-flow-fw5", "nft-single-flow-fw50",
                "ebpf-single-flow", "ebpf-single-flow-fw50"]


def says(name: str, *phrases: str):
    """Each phrase is in ``datasets/<name>/README.md``, whitespace folded."""
    text = " ".join((D / name / "README.md").read_text().split())
    for phrase in phrases:
        assert " ".join(phrase.split()) in text, f"datasets/{name}/README.md does not say: {phrase}"


def trials(name: str) -> pd.DataFrame:
    """A dataset's trials with their loss, CPU and steal; generator-limited ones marked."""
    t = datasets.read(D / name).trials
    return t.assign(loss=1 - t["rx"] / t["tx"], limited=t["generator_limited"].astype(bool),
                    rx_pps=t["rx"] / t["duration_s"])


def per_load(name: str) -> pd.DataFrame:
    """Per experiment and load, the trials the generator delivered (as the statistics
    count them): n, mean and worst loss, median throughput (pps), mean CPU, mean and
    largest steal."""
    t = trials(name)
    return (t[~t["limited"]].groupby(["experiment", "offered_pps"])
            .agg(n=("loss", "size"), loss=("loss", "mean"), worst=("loss", "max"), rx_pps=("rx_pps", "median"),
                 cpu=("cpu_load", "mean"), steal=("steal", "mean"), steal_max=("steal", "max")))


def span(values, fmt) -> str:
    """``lo-hi`` of the values, each written with ``fmt``; one value when they round alike."""
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else f"{lo}-{hi}"


def pct(digits=0):
    return lambda x: f"{100 * x:.{digits}f}"


def when_range(stamps) -> str:
    t = pd.to_datetime(pd.Series(stamps))
    return f"{t.min():%H:%M}-{t.max():%H:%M}"


# -- testbed-veth ------------------------------------------------------------------------


def test_veth_files_and_ceiling():
    t = trials("testbed-veth")
    loads = t.groupby("experiment")["offered_pps"].nunique()
    runs = t.groupby(["experiment", "offered_pps"]).size()
    assert (runs == 10).all() and (loads.drop("click-single-flow") == 10).all()
    says("testbed-veth", f"{len(t)} sweep trials ({len(loads) - 1} experiments × 10 loads × K = 10, plus Click: "
                         f"{loads['click-single-flow']} loads × 10)")
    assert (t["engine_forwarded"] == t["rx"]).all()  # "equal to rx in every trial"
    ceiling = datasets.read_experiments(D / "testbed-veth")["generator_ceiling_pps"].unique()
    assert len(ceiling) == 1
    # the ceiling is traffic.ceiling's median; its runs and duration are the function's defaults
    p = inspect.signature(traffic.ceiling).parameters
    says("testbed-veth", f"(median of {p['runs'].default} runs of {p['duration_s'].default:g} s, generator straight "
                         f"into the sink): {ceiling[0]:,.0f} pps", f"--ceiling {ceiling[0]:.0f}")
    sweeps = t[t["experiment"] != "click-single-flow"]
    says("testbed-veth", f"sweeps from {when_range(sweeps['started_at']).replace('-', ' to ')} UTC")


def test_veth_click():
    t = trials("testbed-veth")
    c = t[t["experiment"] == "click-single-flow"]
    s = per_load("testbed-veth").loc["click-single-flow"]
    upto = s.loc[:150_000]
    says("testbed-veth",
         f"**Click** ({when_range(c['started_at'])} UTC",
         f"at most {100 * upto['loss'].max():.2f}% loss up to 150 kpps, "
         f"with the CPU {100 * s.loc[150_000, 'cpu']:.0f}% busy",
         f"throughput falls to {s.loc[200_000, 'rx_pps'] / 1e3:.0f} kpps at 200 kpps offered and "
         f"{s.loc[300_000, 'rx_pps'] / 1e3:.0f} kpps at 300 kpps, with the CPU {100 * s.loc[200_000, 'cpu']:.0f}% busy",
         f"equals the sink's count in all {len(c)} trials")
    assert c[c["offered_pps"] == 400_000]["limited"].all() and 400_000 not in s.index
    assert (c["engine_forwarded"] == c["rx"]).all()
    assert stats.assess(c)[0].verdict.good  # "the one GOOD sweep"
    assert not any(a.verdict.good for a in stats.assess(t[t["experiment"] != "click-single-flow"]))


def test_veth_kernel_paths_loss_cpu_and_steal():
    t = trials("testbed-veth")
    s = per_load("testbed-veth")
    ceiling = 412_357
    band = s[(s.index.get_level_values(1) >= 0.15 * ceiling - 1) & (s.index.get_level_values(1) <= 0.5 * ceiling + 1)]
    band = band.loc[KERNEL_PATHS]
    worst = band.groupby(level=0)["loss"].max()
    says("testbed-veth",
         f"Between 15% and 50% of the generator's ceiling, each sweep's worst mean loss is "
         f"{span(worst, lambda x: f'{100 * x:.1f}' if x < 0.1 else f'{100 * x:.0f}')}%, with the router's CPU only "
         f"{span(band['cpu'], pct())}% busy")
    k = t[t["experiment"].isin(KERNEL_PATHS)]
    mean_steal = k.groupby("experiment")["steal"].mean()
    flagged = k.groupby("experiment")["steal_flagged"].mean()
    assert (k["steal_flagged"] == (k["steal"] > 0.02)).all()  # "more than 2% steal is flagged"
    says("testbed-veth",
         f"Mean steal time during the trials was {100 * mean_steal.min():.1f}-{100 * mean_steal.max():.0f}%, up to "
         f"{100 * k['steal'].max():.0f}% in single trials",
         f"most are ({span(flagged, pct())}% of each sweep's trials)")


def test_veth_ebpf_with_50_rules():
    s = per_load("testbed-veth").loc["ebpf-single-flow-fw50"]
    worst = s.loc[[164_943, 206_178]]
    above = s.loc[206_179:]
    says("testbed-veth",
         f"it loses {span([worst['loss'].iloc[0]], pct())}% and {span([worst['loss'].iloc[1]], pct())}% at 164,943 and "
         f"206,178 pps with its CPU {span(worst['cpu'], pct())}% busy",
         f"{span([worst['steal'].iloc[0]], pct())}% and {span([worst['steal'].iloc[1]], pct())}% in the mean and "
         f"{100 * worst['steal_max'].max():.0f}% in one trial",
         f"with steal at {span(above['steal'], pct(1)).replace('.0', '')}%, its loss falls back to "
         f"{span(above['loss'], pct())}% with the CPU {span(above['cpu'], pct())}% busy")
    # those two loads had the sweep's highest steal
    assert set(s["steal"].nlargest(2).index) == {164_943, 206_178}


def test_veth_searches():
    r = datasets.read_searches([D / "testbed-veth"])
    ours = r[(r["method"] == "routerlab") & ~r["experiment"].str.startswith("bench-")]
    names = {"linux-single-flow": "linux, single flow", "nft-single-flow-fw0": "nft, empty chain",
             "nft-single-flow-fw5": "nft, 5 rules", "nft-single-flow-fw50": "nft, 50 rules",
             "ebpf-single-flow": "ebpf, no rules", "ebpf-single-flow-fw50": "ebpf, 50 rules"}
    for exp, name in names.items():
        a = ours[ours["experiment"] == exp].set_index("kind")["answer"].str.removesuffix(" pps")
        says("testbed-veth", f"| {name} | {a['pdr']} | {a['ndr']} |")
    linux = r[(r["engine"] == "linux") & (r["kind"] == "pdr") & (r["method"] == "routerlab")]["answer"]
    says("testbed-veth", f"linux PDR came out at {', '.join(linux.str.removesuffix(' pps')[:-1])} and "
                         f"{linux.iloc[-1]} in three runs")
    b = r[r["experiment"] == "bench-search-linux-single-flow"].set_index(["kind", "method"])
    for kind in ("ndr", "pdr"):
        o, m = b.loc[(kind, "routerlab")], b.loc[(kind, "mlrsearch")]
        says("testbed-veth",
             f"| {kind.upper()} answer | {o['answer']} ({o['trials']} trials, {o['trial_seconds']:g} trial-s) | "
             f"{m['answer']} ({m['trials']} trials, {m['trial_seconds']:g} trial-s) | "
             f"{o['lower_pps'] / m['lower_pps']:.3f} answer, {o['trial_seconds'] / m['trial_seconds']:.2f} trial-seconds |")
    p = pd.read_csv(D / "testbed-veth" / "search_trials.csv")
    p = p[(p["experiment"] == "bench-search-linux-single-flow") & (p["kind"] == "pdr") & (p["duration"] == 1.0)]
    failed = p[(p["method"] == "routerlab") & p["load"].between(181_000, 182_000)]
    passed = p[(p["method"] == "mlrsearch") & (p["load"].between(349_000, 357_000))].groupby("load")["passed"].mean()
    assert len(failed) == 3 and not failed["passed"].any() and (passed >= 0.5).all()
    says("testbed-veth", f"{failed['load'].iloc[0]:,.0f} pps failed all 3 trials, while "
                         f"{passed.index[0]:,.0f} and {passed.index[1]:,.0f} pps passed")


# -- testbed-click -----------------------------------------------------------------------


def test_click_pdr_table_never_sets_a_limited_answer_against_another():
    r = datasets.read_searches([D / "testbed-click"])
    linux = r.set_index("engine").loc["linux", "lower_pps"]
    for row in r.itertuples():
        ratio = "none: a lower bound" if row.generator_bound else f"{row.lower_pps / linux:.2f}"
        says("testbed-click", f"| {row.engine} | {row.answer} | {ratio} |")
    says("testbed-click", f"(generator ceiling {r['generator_ceiling_pps'].iloc[0]:,.0f} pps)",
         f"--ceiling {r['generator_ceiling_pps'].iloc[0]:.0f}")
    says("testbed-click", f"the searches {when_range(r['when'])} UTC (when each one finished), the sweeps' trials "
                          f"{when_range(trials('testbed-click')['started_at'])} UTC")


def test_click_why_only_fastclick_dpdk_was_bounded_by_the_generator():
    r = datasets.read_searches([D / "testbed-click"]).set_index("engine")
    p = pd.read_csv(D / "testbed-click" / "search_trials.csv")
    dpdk = p[p["engine"] == "fastclick-dpdk"]
    upper = r.loc["fastclick-dpdk", "upper_pps"]
    at = dpdk[np.isclose(dpdk["load"], upper)]
    above = dpdk[(dpdk["load"] > upper * 1.0001) & (dpdk["phase"] == "final")]
    lim = dpdk[dpdk["generator_limited"] & (dpdk["duration"] == 1.0)]
    assert (dpdk["rx"] == dpdk["tx"]).all()  # "not one of its trials lost a packet"
    says("testbed-click",
         f"{at['generator_limited'].sum()} of the {len(at)} trials at its failing load ({upper:,.0f} pps) were limited, "
         f"and {above['generator_limited'].sum()} of the {len(above)} full-duration trials above it",
         f"Its PDR is at least {r.loc['fastclick-dpdk', 'lower_pps']:,.0f} pps",
         f"its limited full-duration trials offered {lim['tx'].min():,}-{lim['tx'].max():,} pps")
    first = {e: p[p["engine"] == e].iloc[1] for e in ("click", "fastclick")}  # the probe at the ceiling
    assert all(f["generator_limited"] and f["duration"] == 0.5 for f in first.values())
    assert all(not p[(p["engine"] == e) & (p["load"] != first[e]["load"])]["generator_limited"].any() for e in first)
    fc = p[(p["engine"] == "fastclick") & np.isclose(p["load"], r.loc["fastclick", "upper_pps"])]
    says("testbed-click",
         f"the first 0.5 s probe at the ceiling ({first['click']['load']:,.0f} pps), where they lost "
         f"{100 * (1 - first['click']['rx'] / first['click']['tx']):.0f}% and "
         f"{100 * (1 - first['fastclick']['rx'] / first['fastclick']['tx']):.0f}% anyway",
         "(fastclick: " + ", ".join(f"{100 * x:.1f}%" for x in sorted(1 - fc["rx"] / fc["tx"])[:-1])
         + f" and {100 * max(1 - fc['rx'] / fc['tx']):.1f}% at {r.loc['fastclick', 'upper_pps']:,.0f} pps, none limited)")
    assert not fc["generator_limited"].any() and not fc["passed"].any()


def test_click_sweeps():
    t = trials("testbed-click")
    s = per_load("testbed-click")
    dpdk, fc = s.loc["fastclick-dpdk-single-flow"], s.loc["fastclick-single-flow"]
    assert (dpdk["worst"] == 0).all()
    top = t[(t["experiment"] == "fastclick-dpdk-single-flow") & (t["offered_pps"] == t["offered_pps"].max())]
    assert top["limited"].all()
    says("testbed-click", f"loses nothing up to {dpdk.index.max() / 1e3:.0f} kpps")
    ceiling_row = t[(t["experiment"] == "fastclick-single-flow") & (t["offered_pps"] == t["offered_pps"].max())]
    low = fc.loc[[38_180, 57_271]]
    says("testbed-click",
         f"loses {span(fc.loc[:190_902, 'loss'], pct())}% up to 190 kpps",
         f"{fc.loc[229_083, 'rx_pps'] / 1e3:.0f} kpps carried at 229 kpps offered, "
         f"{fc.iloc[-1]['rx_pps'] / 1e3:.0f} kpps at 382 kpps (the median of the {int(fc.iloc[-1]['n'])} trials the "
         f"generator could offer; the other {int(ceiling_row['limited'].sum())} were generator-limited)",
         f"({span(low['loss'], pct(1))}% mean, up to {100 * low['worst'].max():.0f}% in a trial) came with "
         f"{span(low['steal'], pct())}% steal time")
    assert (t["engine_forwarded"] == t["rx"]).all()


# -- testbed-bmv2 ------------------------------------------------------------------------


def test_bmv2_searches_and_sweep():
    r = datasets.read_searches([D / "testbed-bmv2"]).set_index("engine")
    assert not r["generator_bound"].any()
    says("testbed-bmv2", f"| linux | {r.loc['linux', 'answer']} | 1.00 |",
         f"| bmv2 (router.p4) | {r.loc['bmv2', 'answer']} | "
         f"{r.loc['bmv2', 'lower_pps'] / r.loc['linux', 'lower_pps']:.3f} |",
         f"a generator ceiling of {r['generator_ceiling_pps'].iloc[0]:,.0f} pps")
    t = trials("testbed-bmv2")
    s = per_load("testbed-bmv2").loc["bmv2-single-flow"]
    assert len(t) == 100 and (t["engine_forwarded"] == t["rx"]).all()
    lim = t[t["limited"]]
    assert len(lim) == 1 and lim["offered_pps"].iloc[0] == 20_000
    says("testbed-bmv2", "(the one trial the generator could not deliver, at 20,000 pps, left out)")

    def row(lo, hi):
        g = s.loc[lo:hi]
        carried = "= offered" if (g["rx_pps"] >= g.index * 0.99).all() else span(g["rx_pps"], lambda x: f"{x:,.0f}")
        loss = span(g["loss"], lambda x: "0" if x == 0 else f"{100 * x:.1f}" if x < 0.1 else f"{100 * x:.0f}")
        worst = span(g["worst"], lambda x: "0" if x == 0 else f"{100 * x:.1f}" if x < 0.1 else f"{100 * x:.0f}")
        pc = "" if loss == "0" else "%"
        loads = f"{lo:,}" if lo == hi else f"{lo:,}-{hi:,}"
        return f"| {loads} | {loss}{pc} | {worst}{pc} | {carried} | {span(g['cpu'], pct())}% |"

    says("testbed-bmv2", row(1_000, 2_000), row(3_000, 7_500), row(10_000, 15_000), row(20_000, 20_000),
         row(30_000, 40_000))
    says("testbed-bmv2", f"(mean steal {span(s['steal'], pct())}% here)",
         f"loss at 1-2 kpps is 0 in all {int(s.loc[1_000:2_000, 'n'].sum())} trials")
    assert (s.loc[1_000:2_000, "worst"] == 0).all()
    assert not stats.assess(t)[0].verdict.good


# -- comparison --------------------------------------------------------------------------


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
         f"The generator ceiling was measured once at the start: {e['generator_ceiling_pps'].iloc[0]:,.0f} pps",
         f"--ceiling {e['generator_ceiling_pps'].iloc[0]:.0f}")
    assert e["generator_ceiling_pps"].nunique() == 1


def test_comparison_when(ours):
    t = trials("comparison")
    t["at"] = pd.to_datetime(t["started_at"])
    late = t["at"] >= pd.Timestamp("2026-11-22T12:50Z")
    first = t[~late]
    early = first[first["experiment"] != "fastclick-dpdk-ddos-drop50"]
    assert set(t[late]["experiment"]) == {"fastclick-dpdk-ddos-drop50", "bmv2-ddos-drop50"}
    dpdk = t[t["experiment"] == "fastclick-dpdk-ddos-drop50"]
    bmv2 = t[t["experiment"] == "bmv2-ddos-drop50"]
    says("comparison",
         f"{early['experiment'].nunique()} cells {when_range(early['started_at'])} UTC",
         f"started at {dpdk['at'].min():%H:%M} and was interrupted after {(~late[dpdk.index]).sum()} trials",
         f"resumed {when_range(dpdk[late[dpdk.index]]['started_at'])} UTC, and bmv2 in the drop scenario ran "
         f"{when_range(bmv2['started_at'])} UTC")


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


def test_comparison_in_words(ours):
    def cells(router, lo=0, hi=1, scen=None):
        d = ours[(ours["router"] == router) & ours["offered"].between(lo, hi) & (ours["reason"] == "")]
        return d if scen is None else d[d["scenario"].isin(scen)]

    ebpf = cells("ebpf", 0.1, 0.2)
    one_gre = cells("ebpf", 0.1, 0.2, ["single_flow_50fw", "gre_multiflow_50fw"])
    fmt = lambda x: f"{x:.2f}" if x < 0.1 else f"{x:.1f}" if x < 1 else f"{x:.0f}"  # noqa: E731
    nft = cells("nft", 0.1, 0.2)
    says("comparison",
         f"{span(ebpf['loss_pct'], fmt)}% at 10-20% of the ceiling "
         f"({span(one_gre['loss_pct'], fmt)}% with one flow or GRE)",
         f"cleaner up to 20% of the ceiling: at most {nft['loss_pct'].max():.2f}%",
         f"nft keeps ≤ {nft[nft['scenario'] == 'routes_900k_multiflow_50fw']['loss_pct'].max():.2f}% loss up to 20%",
         f"({span(nft[nft['scenario'] == 'single_flow_50fw']['loss_pct'], lambda x: f'{x:.2f}')}% in the "
         "single-flow table)")
    cap = comparison.capacity(ours).set_index(["scenario", "router"])["capacity"]
    gre = cells("fastclick-dpdk", scen=["gre_multiflow_50fw"]).set_index("offered")
    says("comparison",
         f"PDR@0.5% at {100 * cap['single_flow_50fw', 'fastclick-dpdk']:.0f}% of the ceiling with one flow and "
         f"{100 * cap['routes_900k_multiflow_50fw', 'fastclick-dpdk']:.0f}% with 900k routes. With GRE it is "
         f"{100 * cap['gre_multiflow_50fw', 'fastclick-dpdk']:.0f}%: it loses {gre.loc[0.4, 'loss_pct']:.1f}% at 40% and "
         f"nothing at 50%", f"(its interval at 40%, ±{gre.loc[0.4, 'ci95_pct']:.1f}, reaches from green to red)")
    assert gre.loc[0.5, "loss_pct"] == 0 and (gre.loc[0.4, "colour_low"], gre.loc[0.4, "colour_high"]) == ("green", "red")
    drop = ours[(ours["router"] == "fastclick-dpdk") & (ours["scenario"] == "ddos_drop_50pct")].set_index("offered")
    assert drop.loc[0.8, "reason"].startswith("generator-limited") and drop.loc[1.0, "runs"] == 1
    assert (drop["loss_pct"].dropna() <= 0.5).all()
    says("comparison", "at 100% in one trial of 5, which lost nothing")
    assert drop.loc[1.0, "loss_pct"] == 0
    bmv2 = cells("bmv2")
    assert (bmv2["colour"] == "red").all()
    says("comparison", f"even 10% of the ceiling ({bmv2[bmv2['offered'] == 0.1]['offered_pps'].iloc[0] / 1e3:.0f} kpps)")
    full = ours[(ours["offered"] == 1.0) & (ours["colour"] == "green")]
    assert list(zip(full["router"], full["scenario"], full["runs"])) == [("fastclick-dpdk", "ddos_drop_50pct", 1)]
    says("comparison", "**At full load only one cell is green**, fastclick-dpdk in the drop scenario, and from a "
                       "single run")


# -- microbench --------------------------------------------------------------------------


def test_microbench_testbed_rows_give_no_ratio_to_a_limited_pdr():
    pdr = datasets.search_pdr(datasets.read_searches([D / "testbed-click"]))
    table, _, _ = forwarding.summary(datasets.read_microbench(D / "microbench", "forwarding"), pdr)
    tb = table[table["where"] == "testbed (PDR@0.5%)"].set_index("engine")
    names = {"fastclick-dpdk": "fastclick-dpdk, testbed (PDR@0.5%)", "click": "click, testbed",
             "linux": "linux, testbed", "fastclick": "fastclick (AF_PACKET), testbed", "ebpf": "ebpf, testbed"}
    for engine, name in names.items():
        r = tb.loc[engine]
        if r["at_least"]:
            says("microbench", f"| {name} | at least {r['mpps']:.3f} (limited by the generator) | none: a lower bound | |")
        else:
            says("microbench", f"| {name} | {r['mpps']:.3f} | {r['ratio_to_fastest']:.2f} | |")
    says("microbench", f"its PDR is at least {tb.loc['fastclick-dpdk', 'mpps'] * 1e3:.0f} kpps")


def test_microbench_in_memory_and_batch_tables():
    f = datasets.read_microbench(D / "microbench", "forwarding").groupby("engine").agg(
        med=("mpps", "median"), lo=("mpps", "min"), hi=("mpps", "max"), ipp=("instructions_per_packet", "first"))
    fast, click = f.loc["fastclick"], f.loc["click"]
    says("microbench",
         f"| FastClick, in memory (batches of 32) | {fast['med']:.2f} ({fast['lo']:.2f}-{fast['hi']:.2f}) | 1.00 | "
         f"{fast['ipp']:,.0f} |",
         f"| Click, in memory | {click['med']:.2f} ({click['lo']:.2f}-{click['hi']:.2f}) | "
         f"{click['med'] / fast['med']:.2f} | {click['ipp']:,.0f} |",
         f"FastClick leads Click by {fast['med'] / click['med']:.2f}× in time and by {click['ipp'] / fast['ipp']:.2f}× "
         "in instructions")
    b = datasets.read_microbench(D / "microbench", "batch")
    t = b.groupby("burst").agg(mpps=("mpps", "median"), ipp=("instructions_per_packet", "first"), n=("mpps", "size"))
    best = t["mpps"].idxmax()
    says("microbench", "| batch | " + " | ".join(str(x) for x in t.index) + " |",
         f"| Mpps (median of {t['n'].iloc[0]}) | "
         + " | ".join(f"**{m:.2f}**" if s == best else f"{m:.2f}" for s, m in t["mpps"].items()) + " |",
         "| instructions/packet | " + " | ".join(f"{x:,.0f}" for x in t["ipp"]) + " |",
         f"Time is best at {best}, and 128 is {100 * (1 - t.loc[128, 'mpps'] / t.loc[best, 'mpps']):.0f}% slower "
         f"than {best}")


def test_microbench_consolidation_table():
    from routerlab import microbench

    c = datasets.read_microbench(D / "microbench", "consolidation")
    for r in microbench.reductions(c).itertuples():
        red = 100 * r.reduction_instructions
        text = f"{red:.0f}%".replace("-", "−")
        says("microbench", f"| {r.nf} | {r.actions} | {r.chain_instructions:,.0f} | {r.consolidated_instructions:,.0f} | "
                           + (f"**{text}**" if r.nf != "IPFilter" and r.actions > 1 else text) + " |")
    red = microbench.reductions(c)
    rewriting = red[red["nf"] != "IPFilter"].set_index("actions")
    says("microbench", f"reduce by more than published: {span(rewriting.loc[2, 'reduction_instructions'], pct())}% for 2 "
                       f"actions and {span(rewriting.loc[3, 'reduction_instructions'], pct())}% for 3",
         f"for the rewriting NFs ({span(rewriting[rewriting.index >= 2]['reduction_ns'], pct())}% reduction)",
         f"medians of {c['repeat'].nunique()} runs")
    first = c[c["packet"] == "first"].groupby(["nf", "actions", "variant"])["instructions"].first().unstack("variant")
    extra = first["consolidated"] - first["chain"]
    says("microbench", f"cost {extra.min():.0f}-{extra.max():.0f} instructions more with the cache")


def test_fast_reroute_table():
    from routerlab import fastreroute

    samples, runs = datasets.read_fast_reroute(D / "fast-reroute")
    summary, per_run = fastreroute.summary(samples, runs)
    before = samples[(samples["t"] > 2) & (samples["t"] <= 10)].groupby(["variant", "run"])["throughput_bps"].mean()
    names = {"frr": "frr", "nft": "nft", "ebpf": "ebpf", "p4": "p4 (bmv2)"}

    def pm(m, h, digits):
        return "0" if m == 0 and h == 0 else f"{m:.{digits}f} ± {h:.{digits}f}"

    for r in summary.itertuples():
        recovered = r.runs - r.unrecovered_runs
        rec = pm(r.recovery_s, r.recovery_s_ci95, 1) + (f" ({recovered} of {r.runs} runs)" if r.unrecovered_runs else "")
        says("fast-reroute",
             f"| {names[r.variant]} | {before.loc[r.variant].mean() / 1e9:.2f} | "
             f"**{pm(r.outage_s, r.outage_s_ci95, 2)}** | "
             f"{rec} | {pm(r.rtt_spike_ms, r.rtt_spike_ms_ci95, 2 if r.rtt_spike_ms < 10 else 1)} | "
             f"{pm(r.load_spike, r.load_spike_ci95, 2)} | {pm(r.ping_lost, r.ping_lost_ci95, 1)} |")
    assert (runs.groupby("variant").size() == 10).all()
    assert (runs[runs["variant"] != "frr"]["looped_destinations"] == 1).all()
    assert (runs[runs["variant"] == "frr"]["looped_destinations"] == 0).all()
    says("fast-reroute", "The variants, 10 runs each", "(about 25 of 150)")


def test_bmv2_route_loading_recorded_in_the_comparison():
    e = datasets.read_experiments(D / "comparison").set_index("experiment")
    notes = dict(kv.split("=", 1) for kv in e.loc["bmv2-routes900k-multiflow-fw50", "notes"].split("; "))
    says("testbed-bmv2", f"it loaded {int(notes['entries']):,} entries in {float(notes['entries_load_s']):.1f} s")
    assert notes["routes_loaded"] == "100000"


def test_the_testbed_doc_states_the_largest_steal_of_a_trial():
    doc = " ".join((D.parent / "docs" / "testbed.md").read_text().split()) if (D.parent / "docs").is_dir() else None
    if doc is None:
        pytest.skip("docs/ is not installed with the package: only a checkout has it")
    veth, click = (trials(n)["steal"].max() for n in ("testbed-veth", "testbed-click"))
    assert f"({100 * veth:.0f}% in `datasets/testbed-veth`, {100 * click:.0f}% in `datasets/testbed-click`)" in doc
