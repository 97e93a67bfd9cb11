"""Every number the README of testbed-click states, recomputed from its files (see readme_checks)."""

import numpy as np
import pandas as pd

from routerlab import datasets, stats
from readme_checks import D, VETH_CODE, pct, per_load, pps, says, sig2, span, trials, veth, when_range


CLICK = "testbed-click"


def click_searches() -> pd.DataFrame:
    return datasets.read_searches([D / CLICK])


def test_click_where_when_how():
    e = datasets.read_experiments(D / CLICK)
    r = click_searches()
    t = trials(CLICK)
    for col in ("kernel", "cpu", "pinning", "generator_ceiling_pps"):
        assert e[col].nunique() == 1
    says(CLICK, f"kernel {e['kernel'].iloc[0]}, 2 vCPUs ({e['cpu'].iloc[0]})", f"`{e['pinning'].iloc[0]}`",
         f"FastClick {e['engine_version'].iloc[0]}")
    assert e["engine_version"].nunique() == 1
    says(CLICK, f"the searches {when_range(r['when'])} UTC (when each one finished), the sweeps' trials "
                f"{when_range(t['started_at'])} UTC", f"code: commit {VETH_CODE[:7]}")
    assert pd.to_datetime(t["started_at"]).min() > pd.to_datetime(veth()[0]["started_at"]).max()
    assert r["generator_ceiling_pps"].nunique() == 1
    says(CLICK, f"`bench engines` measures the generator's ceiling itself at its start "
                f"({pps(r['generator_ceiling_pps'].iloc[0])} pps)",
         f"the ceiling measured at the start of the run, {pps(e['generator_ceiling_pps'].iloc[0])} pps",
         f"--ceiling {e['generator_ceiling_pps'].iloc[0]:.0f}")
    assert e["generator_ceiling_pps"].iloc[0] == veth()[3]
    for row in e.itertuples():
        assert row.command.startswith(f"routerlab measure --engine {row.engine} --scenario single-flow "
                                      "--loads-frac 0.05,0.1,0.15,0.2,0.3,0.4,0.5,0.6,0.8,1.0 --ceiling 397735 "
                                      "--runs 10 --duration 1 --out ")
    says(CLICK, f"the {len(t)} sweep trials (2 engines × 10 loads × 10)")


def test_click_pdr_table_never_sets_a_lower_bound_against_another():
    r = click_searches()
    pdr = datasets.search_pdr(r).set_index("engine")
    click = pdr.loc["click", "pdr_pps"]
    for row in r.itertuples():
        ratio = "none: a lower bound" if pdr.loc[row.engine, "at_least"] else f"{row.lower_pps / click:.2f}"
        says(CLICK, f"| {row.engine} | {row.answer} | {ratio} |")
    says(CLICK, f"(generator ceiling {r['generator_ceiling_pps'].iloc[0]:,.0f} pps)")
    assert pdr["at_least"].sum() == 3 and not pdr.loc[["click", "fastclick"], "at_least"].any()
    says(CLICK, "Three answers are lower bounds",
         f"carry {pdr.loc['fastclick', 'pdr_pps'] / click:.2f} times what Click carries",
         f"On AF_PACKET it gains a little over Click here ({pdr.loc['fastclick', 'pdr_pps'] / click:.2f})")
    assert r.set_index("engine").loc[["linux", "ebpf"], "upper_pps"].isna().all()


def test_click_why_only_fastclick_dpdk_was_bounded_by_the_generator():
    r = click_searches().set_index("engine")
    assert r.index[r["generator_bound"]].tolist() == ["fastclick-dpdk"]
    p = pd.read_csv(D / CLICK / "search_trials.csv")
    dpdk = p[p["engine"] == "fastclick-dpdk"]
    upper = r.loc["fastclick-dpdk", "upper_pps"]
    at = dpdk[np.isclose(dpdk["load"], upper)]
    assert at["generator_limited"].all()
    full = dpdk[dpdk["duration"] == 1.0]
    lim = full[full["generator_limited"]]
    assert (lim["tx"] < lim["load"] * lim["duration"]).all()
    says(CLICK, f"all {len(at)} trials at its failing load ({pps(upper)} pps) were generator-limited",
         f"and so were {len(lim)} of its {len(full)} full-duration trials, which offered "
         f"{pps(lim['tx'].min())}-{pps(lim['tx'].max())} pps where more was asked")
    # nobody else's search saw a limited trial
    assert not p[p["engine"] != "fastclick-dpdk"]["generator_limited"].any()


def test_click_sweeps():
    t = trials(CLICK)
    a = {x.experiment: x for x in stats.assess(datasets.read(D / CLICK).trials)}
    s = per_load(CLICK)
    dpdk, fc = s.loc["fastclick-dpdk-single-flow"], s.loc["fastclick-single-flow"]
    lim = t[t["limited"]].groupby(["experiment", "offered_pps"]).size()
    ceiling = t["offered_pps"].max()
    zero = dpdk[dpdk["worst"] == 0].index
    assert (zero == dpdk.index[:len(zero)]).all() and len(zero) == len(dpdk) - 1
    top = dpdk.index[-1]
    kept = t[(t["experiment"] == "fastclick-dpdk-single-flow") & (t["offered_pps"] == top) & ~t["limited"]]
    says(CLICK, f"loses nothing up to {pps(zero.max())} pps ({zero.max() / ceiling:.1f} of the ceiling)",
         f"At {pps(top)} pps {lim.loc[('fastclick-dpdk-single-flow', top)]} of its 10 trials were generator-limited "
         f"(left out); the 2 kept lost {' and '.join(sig2(x) for x in sorted(kept['loss']))}%, a mean of "
         f"{100 * dpdk.loc[top, 'loss']:.2f}%",
         f"At {pps(ceiling)} pps all {lim.loc[('fastclick-dpdk-single-flow', ceiling)]} were limited")
    assert len(kept) == 2 and dpdk.loc[top, "loss"] > stats.PDR_FRACTION
    vd, vf = a["fastclick-dpdk-single-flow"].verdict, a["fastclick-single-flow"].verdict
    says(CLICK, f"Its verdict is **{vd.label}** ({vd.why.split(' (to do')[0]})", f"is **{vf.label}** ({vf.why})")
    fz = fc[fc["worst"] == 0].index
    assert (fz == fc.index[:len(fz)]).all()
    nxt = fc.index[len(fz)]
    summ = a["fastclick-single-flow"].summary.set_index("offered_pps")
    after = summ.loc[nxt:].iloc[1:]
    assert after["throughput_pps"].is_monotonic_decreasing and after["throughput_pps"].max() < summ.loc[nxt, "throughput_pps"]
    says(CLICK, f"no loss up to {pps(fz.max())} pps, with its CPU {100 * fc.loc[fz.max(), 'cpu']:.0f}% busy, then "
                f"{sig2(fc.loc[nxt, 'loss'])}% at {pps(nxt)} pps",
         f"falls from {pps(summ.loc[nxt, 'throughput_pps'])} pps there to "
         + ", ".join(pps(x) for x in after["throughput_pps"][:-1]) + f" and {pps(after['throughput_pps'].iloc[-1])} pps at "
         + ", ".join(pps(x) for x in after.index[:-1]) + f" and {pps(after.index[-1])} offered (the last two with "
         + " and ".join(str(int(n)) for n in fc["n"].iloc[-2:]) + " trials the generator could offer), with its CPU "
         f"{span(fc.loc[after.index, 'cpu'], pct())}% busy")
    assert (fc["n"].iloc[:-2] == 10).all()
    assert (t["engine_forwarded"] == t["rx"]).all()
    # steal
    sup = pd.read_csv(D / CLICK / "superseded_trials.csv")
    assert (sup["steal"] > 0.02).all() and not t["disturbed"].any()
    says(CLICK, f"{(t['attempt'] > 1).sum()} trials were measured again, {len(sup)} attempts set aside, none kept "
                f"above 2%; the largest kept steal was {100 * t['steal'].max():.1f}%")
    assert len(sup) == (t["attempt"] - 1).sum()


def test_click_where_the_loss_went():
    t = trials(CLICK)
    d = datasets.read_drops([D / CLICK])
    loss = d[d["counted_as"] == "loss"]
    assert (loss["place"] == "dut").all() and (loss["source"] == "engine").all()
    by = loss.assign(engine=loss["experiment"].str.removesuffix("-single-flow")).groupby(["engine", "reason"])["packets"].sum()
    lost = t.groupby("engine")["lost"].sum()
    assert (t["lost_unexplained"] == 0).all() and (t["trace_missed"] == 0).all()
    assert (by.groupby(level=0).sum() == lost).all()
    says(CLICK, f"(`drops.csv`, all {len(t)} trials)",
         f"fastclick lost {pps(lost['fastclick'])} packets: {pps(by['fastclick', 'FromDevice@4.kernel_drops'])} at its "
         f"capture socket", f"and {pps(by['fastclick', 'out/Queue@1.drops'])} in its output `Queue`",
         f"fastclick-dpdk lost {pps(lost['fastclick-dpdk'])}, all counted by FromDPDKDevice's `hw_dropped`")
    assert by["fastclick-dpdk"].index.tolist() == ["FromDPDKDevice@4.hw_dropped"]
    ctx = d[(d["experiment"] == "fastclick-dpdk-single-flow") & (d["reason"] == "d0.rx_dropped")]["packets"].sum()
    assert ctx == lost["fastclick-dpdk"]
    r = click_searches().set_index("engine")
    says(CLICK, f"(at least {pps(r.loc['fastclick-dpdk', 'lower_pps'])} pps, limited by the generator, against "
                f"{pps(r.loc['fastclick', 'lower_pps'])} on AF_PACKET)")
