"""Every number the README of testbed-veth states, recomputed from its files (see readme_checks)."""

import inspect
import io

import numpy as np
import pandas as pd

from routerlab import datasets, stats, traffic
from readme_checks import (D, KERNEL_PATHS, VETH, VETH_BEFORE, VETH_CODE, committed, pct, pps, says, sig2, span, veth,
                           when_range)


VETH_NAMES = {"linux-single-flow": "linux", "nft-single-flow-fw0": "nft, empty chain",
              "nft-single-flow-fw5": "nft, 5 rules", "nft-single-flow-fw50": "nft, 50 rules",
              "ebpf-single-flow": "ebpf, no rules", "ebpf-single-flow-fw50": "ebpf, 50 rules",
              "click-single-flow": "click"}


def kept_trials() -> pd.DataFrame:
    """The sweep trials the statistics count (generator-limited ones left out)."""
    t = veth()[0]
    return t[~t["generator_limited"].astype(bool)]


def veth_searches() -> pd.DataFrame:
    return datasets.read_searches([D / VETH])


def veth_search_trials() -> pd.DataFrame:
    p = pd.read_csv(D / VETH / "search_trials.csv")
    return p.assign(loss=p["lost"] / p["tx"])


def test_veth_what_where_when_how():
    t, _, _, ceiling = veth()
    e = datasets.read_experiments(D / VETH)
    loads = t.groupby("experiment")["offered_pps"].nunique()
    assert (t.groupby(["experiment", "offered_pps"]).size() == 10).all()
    assert (loads.drop("click-single-flow") == 10).all()
    says(VETH, f"{len(t)} sweep trials ({len(loads) - 1} experiments × 10 loads × K = 10, plus Click: "
               f"{loads['click-single-flow']} loads × 10)")
    # the ceiling is traffic.ceiling's median; its runs and duration are the function's defaults
    p = inspect.signature(traffic.ceiling).parameters
    says(VETH, f"(median of {p['runs'].default} runs of {p['duration_s'].default:g} s, generator straight "
               f"into the sink): {pps(ceiling)} pps")
    for col in ("kernel", "cpu", "pinning"):
        assert e[col].nunique() == 1
    says(VETH, f"kernel {e['kernel'].iloc[0]}", f"2 vCPUs ({e['cpu'].iloc[0]})",
         f"`{e['pinning'].iloc[0]}`", f"Click {e.set_index('engine').loc['click', 'engine_version']}")
    assert "from its own veth ring" in e["pinning"].iloc[0]
    sweeps = t[t["experiment"] != "click-single-flow"]
    day = pd.to_datetime(t["started_at"]).dt.strftime("%Y-%m-%d").unique()
    assert len(day) == 1
    r = veth_searches()
    says(VETH, f"**When:** {day[0]}, sweeps from {when_range(t['started_at']).replace('-', ' to ')} UTC "
               f"(Click last, from {when_range(t[t['experiment'] == 'click-single-flow']['started_at']).split('-')[0]})",
         f"searches and benchmarks recorded from {when_range(r['when']).replace('-', ' to ')} UTC")
    assert when_range(sweeps["started_at"]).split("-")[1] < when_range(r["when"]).split("-")[0]
    # the interruption: the one long gap between successive trials, in the sweep the README names
    gaps = t.assign(at=pd.to_datetime(t["started_at"])).sort_values("at").groupby("experiment")["at"].diff()
    longest = gaps.groupby(t["experiment"]).max().dt.total_seconds()
    assert longest.idxmax() == "nft-single-flow-fw0" and (longest.drop("nft-single-flow-fw0") < 10).all()
    says(VETH, "stopped once, during the sweep of nft with an empty chain",
         f"that sweep's trials have a gap of {longest.max():.0f} s")
    # the commands, as experiments.csv recorded them (with the scratch folder), in the README's one form
    forms = set()
    for row in e.itertuples():
        cmd = row.command.replace(row.command.split("--out ")[1], f"datasets/{VETH}")
        if row.engine == "click":
            says(VETH, cmd)
        else:
            forms.add(cmd.replace(f"--engine {row.engine} --scenario {row.scenario.split(':')[0]}",
                                  "--engine E --scenario S"))
            says(VETH, f"{row.engine} {row.scenario.split(':')[0]}")
    assert len(forms) == 1
    text = " ".join((D / VETH / "README.md").read_text().replace("\\\n", " ").split())
    assert " ".join(forms.pop().split()) in text
    assert f"--ceiling {ceiling:.0f}" in text
    notes = e["notes"].str.extract(r"steal_threshold=([\d.]+); max_repeats=(\d+)").astype(float)
    assert notes.nunique().eq(1).all()
    says(VETH, f"steal above {100 * notes[0].iloc[0]:g}% is measured again, up to {notes[1].iloc[0]:.0f} times",
         f"commit {VETH_CODE[:7]}")
    assert (e["notes"].str.contains("loss_attribution=on")).all()


def test_veth_code_commit_is_in_history():
    committed("README.md", VETH_CODE)  # skips outside a checkout; fails when the commit is unknown there


def test_veth_files():
    t, d, _, _ = veth()
    says(VETH, f"`drops.csv` | {len(d):,} rows")
    assert set(d["experiment"]) == set(t["experiment"])  # sweeps only: searches carry a `drops` column
    sup = pd.read_csv(D / VETH / "superseded_trials.csv")
    ssup = pd.read_csv(D / VETH / "superseded_search_trials.csv")
    says(VETH, f"the {len(sup)} attempts that were measured again", f"the {len(ssup)} search trials measured again")
    s = pd.read_csv(D / VETH / "search_trials.csv")
    g = pd.read_csv(D / VETH / "generators.csv")
    says(VETH, f"{len(g)} trials of {g['generator'].nunique()} generators")
    # not re-measured: the file is the one the previous measurement committed
    assert (D / VETH / "generators.csv").read_text() == committed(f"datasets/{VETH}/generators.csv", VETH_BEFORE)
    # the columns the table names are there
    for c in ("attempt", "disturbed", "lost", "lost_attributed", "lost_unexplained", "trace_missed", "drops"):
        assert c in t.columns and c in s.columns
    assert (t["lost"] == t["tx"] - t["rx"]).all()
    assert (t["lost"] == t["lost_attributed"] + t["lost_unexplained"]).all()


def test_veth_steal_and_repeats():
    t = veth()[0]
    s = pd.read_csv(D / VETH / "search_trials.csv")
    sup = pd.read_csv(D / VETH / "superseded_trials.csv")
    # a superseded attempt is one whose steal passed the threshold; every kept repeat has one behind it
    assert (sup["steal"] > 0.02).all()
    again = t[t["attempt"] > 1]
    assert len(sup) == (again["attempt"] - 1).sum()
    says(VETH, f"{len(again)} of the {len(t)} sweep trials were ({(again['experiment'] == 'click-single-flow').sum()} "
               f"of them Click's), with {len(sup)} attempts set aside (the largest {100 * sup['steal'].max():.0f}% steal)")
    dist = t[t["disturbed"]]
    assert (dist["attempt"] == 4).all() and (dist["steal"] > 0.02).all()
    by = dist.groupby("experiment").size()
    assert set(by.index) == {"click-single-flow", "nft-single-flow-fw50"}
    says(VETH, f"{len(dist)} trials still had more than 2% after 3 repeats",
         f"({by['click-single-flow']} of Click's, {by['nft-single-flow-fw50']} of nft with 50 rules; at most "
         f"{100 * dist['steal'].max():.1f}%)")
    assert (dist["lost"] > 0).sum() == 1
    says(VETH, "all but one of them lost nothing",
         f"Mean steal per sweep was {span(t.groupby('experiment')['steal'].mean(), pct(2))}%",
         f"The searches' largest kept steal was {100 * s['steal'].max():.2f}%")


def test_veth_ceilings_of_the_run():
    r = pd.read_csv(D / VETH / "search_results.csv")
    c = r.groupby("experiment")["generator_ceiling_pps"].first()
    ceiling = veth()[3]
    assert (c.drop([x for x in c.index if x.startswith("bench-")]) == ceiling).all()
    bench_pdr = c[[x for x in c.index if x.startswith("bench-pdr-")]].unique()
    assert len(bench_pdr) == 1
    says(VETH, f"{pps(ceiling)} pps at 22:48", f"{pps(c['bench-search-linux-single-flow'])} pps when `bench search` "
               f"started and {pps(bench_pdr[0])} pps when `bench engines` did, both after 23:11")
    assert pd.to_datetime(r[~r["experiment"].str.startswith("bench-")]["when"]).max() >= pd.Timestamp("2026-11-23T23:11Z")
    e = datasets.read_experiments(D / VETH)
    assert pd.to_datetime(e["when"]).min().strftime("%H:%M") == "22:48"


def veth_verdicts():
    a = veth()[2]
    return {e: a[e] for e in VETH_NAMES}


def test_veth_verdict_table():
    t, _, a, ceiling = veth()
    for exp, name in VETH_NAMES.items():
        x = a[exp]
        s = x.summary.set_index("offered_pps")
        over = s[s["plr"] > stats.PDR_FRACTION]
        first = (f"{sig2(over['plr'].iloc[0])}% at {pps(over.index[0])}"
                 + (f" (K={over['runs'].iloc[0]})" if over["runs"].iloc[0] < 10 else "")) if len(over) else \
            f"never (at most {sig2(s['plr'].max())}%, at {pps(s['plr'].idxmax())})"
        says(VETH, f"| {name} | **{x.verdict.label}** | {first} |")
    v = veth_verdicts()
    # what the "why" column says, checked against the verdict's own reason
    for exp in ("linux-single-flow", "nft-single-flow-fw5"):
        s = a[exp].summary
        assert "only at the highest load" in v[exp].verdict.why and s["offered_pps"].max() == ceiling
        assert s.loc[s["plr"] > stats.PDR_FRACTION, "offered_pps"].tolist() == [ceiling]
    says(VETH, "loss passes the PDR fraction only at the highest load, the generator's ceiling")
    assert "not reached" in v["ebpf-single-flow"].verdict.why
    assert a["ebpf-single-flow"].summary["offered_pps"].max() == ceiling
    says(VETH, "| ebpf, no rules | **BAD** | never", "saturation not reached in the tested range. The sweep already "
               "ends at the generator's ceiling")
    for exp in ("nft-single-flow-fw0", "ebpf-single-flow-fw50"):
        assert not v[exp].verdict.good and v[exp].verdict.still_rising
        assert "throughput still rising after the PDR load" in v[exp].verdict.why
    assert "throughput rises again after saturation" in v["nft-single-flow-fw50"].verdict.why
    assert v["click-single-flow"].verdict.good
    assert "saturation right after the PDR load" in v["click-single-flow"].verdict.why
    for exp, name in (("nft-single-flow-fw0", "nft"), ("ebpf-single-flow-fw50", "ebpf with 50 rules")):
        s = a[exp].summary.set_index("offered_pps")
        i = a[exp].verdict.candidate_index
        o = a[exp].summary["offered_pps"].iloc[i]
        says(VETH, f"{name} loses {sig2(s.loc[o, 'plr'])}% at {pps(o)} pps and still forwards "
                   f"{pps(s.loc[o, 'throughput_pps'])} pps there (TIR {a[exp].verdict.tir[i]:.2f})")
    s = a["nft-single-flow-fw50"].summary.set_index("offered_pps")
    over = s[s["plr"] > stats.PDR_FRACTION]
    assert over["throughput_pps"].is_monotonic_increasing
    cpu = kept_trials().groupby(["experiment", "offered_pps"])["cpu_load"].mean().loc["nft-single-flow-fw50"]
    says(VETH, f"nft with 50 rules forwards {', '.join(pps(x) for x in over['throughput_pps'])} pps at "
               f"{', '.join(pps(x) for x in over.index[:-1])} and {pps(over.index[-1])} offered while losing "
               f"{', '.join(sig2(x) for x in over['plr'][:-1])} and {sig2(over['plr'].iloc[-1])}%, its CPU "
               f"{span(cpu.loc[over.index], pct())}% busy")
    # "four of the BAD verdicts say the generator cannot load these routers past saturation"
    cannot = [e for e in VETH_NAMES if not v[e].verdict.good and not v[e].verdict.still_rising
              and "rises again" not in v[e].verdict.why]
    assert cannot == ["linux-single-flow", "nft-single-flow-fw5", "ebpf-single-flow"]
    assert not v["nft-single-flow-fw0"].verdict.good
    says(VETH, "Four of the BAD verdicts (linux, nft with 0 and 5 rules, ebpf with no rules)")
    lim = t[t["generator_limited"].astype(bool)].groupby(["experiment", "offered_pps"]).size()
    assert lim.to_dict() == {("click-single-flow", 400_000): 3, ("nft-single-flow-fw0", ceiling): 1}


def test_veth_loss_per_load_table():
    _, _, a, ceiling = veth()
    k = [e for e in VETH_NAMES if e != "click-single-flow"]
    says(VETH, "| load (share of ceiling, pps) | " + " | ".join(VETH_NAMES[e] for e in k) + " |")
    t = veth()[0]
    loads = sorted(t[t["experiment"].isin(k)]["offered_pps"].unique())
    for o in loads:
        cells = []
        for e in k:
            s = a[e].summary.set_index("offered_pps")
            if o not in s.index:
                cells.append("limited")
                continue
            c = sig2(s.loc[o, "plr"])
            cells.append(c + (f" (K={s.loc[o, 'runs']})" if s.loc[o, "runs"] < 10 else ""))
        says(VETH, f"| {round(o / ceiling, 2):g} ({pps(o)}) | " + " | ".join(cells) + " |")
    s = stats.summaries(list(a.values())).set_index(["experiment", "offered_pps"])["plr"]
    frac = pd.Series(s.index.get_level_values(1) / ceiling, index=s.index)
    exp = pd.Series(s.index.get_level_values(0), index=s.index)
    first_loss = {e: frac[(exp == e) & (s > 0)].min() for e in k}
    for e in ("linux-single-flow", "nft-single-flow-fw0", "nft-single-flow-fw5"):
        assert first_loss[e] > 0.61
    assert 0.41 < first_loss["nft-single-flow-fw50"] < 0.51
    assert all(0.19 < first_loss[e] < 0.21 for e in ("ebpf-single-flow", "ebpf-single-flow-fw50"))
    says(VETH, "Linux and nft with up to 5 rules lose nothing up to 0.6 of the ceiling, and nft with 50 rules "
               "nothing up to 0.4; the XDP router loses a little from 0.2 on")


def veth_lost_by_place():
    """Per sweep, the kept trials' lost packets: total, per counter that took them
    (``place reason``), unexplained and trace_missed."""
    t, d, _, _ = veth()
    keys = ["experiment", "offered_pps", "trial"]
    kept = kept_trials()
    rows = d[d["counted_as"] == "loss"].merge(kept[keys], on=keys)
    by = rows.assign(w=rows["place"] + " " + rows["reason"]).pivot_table(
        index="experiment", columns="w", values="packets", aggfunc="sum").fillna(0)
    tot = kept.groupby("experiment")[["lost", "lost_unexplained", "trace_missed"]].sum()
    return tot.join(by).fillna(0)


VETH_PLACES = ["dut CPU_BACKLOG", "dut NOT_SPECIFIED", "dut FromDevice@4.kernel_drops", "dut out/Queue@1.drops",
               "lost_unexplained"]


def test_veth_where_the_loss_went_table():
    x = veth_lost_by_place()
    assert set(x.columns) == {"lost", "trace_missed"} | set(VETH_PLACES)  # no other place took loss

    def cell(n, lost):
        return "0" if n == 0 else f"{pps(n)} ({sig2(n / lost)}%)"

    says(VETH, "| sweep | lost | " + " | ".join(c if c != "lost_unexplained" else "no counter (`lost_unexplained`)"
                                                for c in VETH_PLACES) + " | `trace_missed` |")
    for exp, name in VETH_NAMES.items():
        r = x.loc[exp]
        says(VETH, f"| {name} | {pps(r['lost'])} | " + " | ".join(cell(r[c], r["lost"]) for c in VETH_PLACES)
             + f" | {pps(r['trace_missed'])} |")
    assert (x["lost_unexplained"] == 0).all() and not any(c.startswith("sink") for c in x.columns)
    says(VETH, "Every lost packet of every sweep was taken by a counter: no column of the sink, and nothing unexplained")
    # every loss of the sweeps, load by load, is what loss_places splits (its parts sum to the mean loss)
    t, d, a, _ = veth()
    lp = stats.loss_places(t, d).groupby(["experiment", "offered_pps"])["loss"].sum()
    plr = stats.summaries(list(a.values())).set_index(["experiment", "offered_pps"])["plr"]
    assert np.allclose(lp, plr.reindex(lp.index), atol=1e-12)


def test_veth_where_kernel_path_loss_went():
    t, d, _, _ = veth()
    keys = ["experiment", "offered_pps", "trial"]
    kernel = KERNEL_PATHS[:4]
    x = veth_lost_by_place().loc[kernel]
    assert (x["dut CPU_BACKLOG"] == x["lost"]).all()
    kept = kept_trials()
    ctx = d[d["counted_as"] == "context"].merge(kept[keys], on=keys)
    c = ctx.pivot_table(index="experiment", columns=["place", "reason"], values="packets", aggfunc="sum").loc[kernel]
    # CPU 1's softnet drop counter and the DUT veth's rx drops took every lost packet
    assert (c[("cpu1", "dropped")] == x["lost"]).all() and (c[("dut", "d0.rx_dropped")] == x["lost"]).all()
    says(VETH, f"CPU 1's softnet `dropped` counter and the DUT veth's `d0.rx_dropped` (context rows) each counted "
               f"exactly the lost packets of these sweeps ({', '.join(pps(n) for n in x['lost'])})")
    # the sink: only its counting drop
    sink = d[(d["place"] == "sink") & d["experiment"].isin(kernel)]
    assert set(sink["reason"]) == {"NETFILTER_DROP"} and (sink["counted_as"] == "design").all()
    says(VETH, "The sink no longer shares that queue, and none of its counters moved except its counting drop")
    tm = kept.groupby("experiment")["trace_missed"]
    says(VETH, f"`trace_missed` is {span(tm.sum().loc[kernel], pps)} packets per kernel-path sweep, "
               f"in {span((tm.apply(lambda s: (s > 0).mean())).loc[kernel], pct())}% of its trials")
    assert (tm.sum().drop(kernel) == 0).all()


def test_veth_where_xdp_loss_went():
    t, d, _, _ = veth()
    keys = ["experiment", "offered_pps", "trial"]
    x = veth_lost_by_place().loc[["ebpf-single-flow", "ebpf-single-flow-fw50"]]
    assert (x["dut NOT_SPECIFIED"] == x["lost"]).all()
    rows = d[d["experiment"].str.startswith("ebpf")]
    nodev = rows[rows["place"] == "nodev"]
    rows = rows[rows["place"] != "nodev"]
    per = rows.assign(w=rows["place"] + " " + rows["source"] + " " + rows["reason"]).pivot_table(
        index=keys, columns="w", values="packets", aggfunc="sum").fillna(0)
    # trial by trial, the DUT's NOT_SPECIFIED drops are the generator veth's tx_dropped, and nothing else moved
    assert set(per.columns) == {"dut kfree_skb NOT_SPECIFIED", "tg link g0.tx_dropped", "sink kfree_skb NETFILTER_DROP"}
    assert (per["dut kfree_skb NOT_SPECIFIED"] == per["tg link g0.tx_dropped"]).all()
    lost = t[t["experiment"].str.startswith("ebpf")].set_index(keys)
    assert (per["dut kfree_skb NOT_SPECIFIED"].reindex(lost.index).fillna(0) == lost["lost"]).all()
    says(VETH, f"in each of the {int((per['dut kfree_skb NOT_SPECIFIED'] > 0).sum())} ebpf trials that lost packets, "
               f"the generator-side veth's `g0.tx_dropped` (a context row) equals the DUT's NOT_SPECIFIED drops")
    assert (nodev["counted_as"] == "context").all()
    says(VETH, f"the tracer also saw {nodev['packets'].sum()} drops with no device, `nodev`, in "
               f"{len(nodev.drop_duplicates(keys))} trials")
    _, _, a, ceiling = veth()
    cpu = kept_trials().groupby(["experiment", "offered_pps"])["cpu_load"].mean()
    s = stats.summaries(list(a.values())).set_index(["experiment", "offered_pps"])["plr"]
    band = [(e, o) for e, o in cpu.index if e.startswith("ebpf") and 0.19 < o / ceiling < 0.51]
    assert (s.loc[band] > 0).all()
    says(VETH, f"at 0.2-0.5 of the ceiling is its input ring overflowing while its CPU is "
               f"{span(cpu.loc[band], pct())}% busy")


def test_veth_click():
    t, d, a, _ = veth()
    c = t[t["experiment"] == "click-single-flow"]
    kept = c[~c["generator_limited"].astype(bool)]
    s = a["click-single-flow"].summary.set_index("offered_pps")
    cpu = kept.groupby("offered_pps")["cpu_load"].mean()
    worst = (c["lost"] / c["tx"]).groupby(c["offered_pps"]).max()
    zero = s[s["plr"] == 0].index
    assert (zero == s.index[:len(zero)]).all()
    first = s.index[len(zero)]
    lossy = c[(c["offered_pps"] == first) & (c["lost"] > 0)]
    assert len(lossy) == 1
    pdr = a["click-single-flow"].pdr.load
    assert pdr == first
    nxt = s.index[s.index.get_loc(pdr) + 1]
    says(VETH,
         f"**Click** ({when_range(c['started_at'])} UTC",
         f"no loss up to {pps(zero.max())} pps, with the CPU {100 * cpu.loc[zero.max()]:.0f}% busy",
         f"{sig2(s.loc[first, 'plr'])}% at {pps(first)} pps ({lossy['lost'].iloc[0]} packets, all in one trial, taken "
         f"with {100 * lossy['steal'].iloc[0]:.1f}% steal after three repeats)",
         f"its PDR@0.5% on this grid is {pps(pdr)} pps",
         f"{sig2(s.loc[nxt, 'plr'])}% at {pps(nxt)} pps (one trial lost {sig2(worst.loc[nxt])}%)")
    assert lossy["disturbed"].iloc[0] and lossy["attempt"].iloc[0] == 4
    after = s.loc[nxt:].iloc[1:]
    assert after["throughput_pps"].max() < s.loc[nxt, "throughput_pps"]
    says(VETH, f"throughput (offered × (1 - mean loss)) falls from {pps(s.loc[nxt, 'throughput_pps'])} pps there to "
               + ", ".join(pps(x) for x in after["throughput_pps"]) + " pps at "
               + ", ".join(pps(x) for x in after.index[:-1]) + f" and {pps(after.index[-1])} offered, with the CPU "
               f"{span(cpu.loc[nxt:], pct())}% busy",
         f"equals the sink's count in all {len(c)} trials",
         f"{int(c['generator_limited'].sum())} trials at 400,000 pps were generator-limited")
    assert (c["engine_forwarded"] == c["rx"]).all()
    assert c.loc[c["generator_limited"].astype(bool), "offered_pps"].eq(400_000).all()
    # every packet reached the DUT: its drop of the kernel's copy (design) counted nearly all that was sent
    dut = d[(d["experiment"] == "click-single-flow") & (d["place"] == "dut") & (d["reason"] == "NETFILTER_DROP")]
    share = dut["packets"].sum() / c["tx"].sum()
    says(VETH, f"(`counted_as=design`) counted {100 * share:.2f}% of the packets sent")
    x = veth_lost_by_place().loc["click-single-flow"]
    other = x["lost"] - x["dut FromDevice@4.kernel_drops"]
    says(VETH, f"That took all but {pps(other)} of Click's {pps(x['lost'])} lost packets; its output `Queue` dropped "
               f"{pps(x['dut out/Queue@1.drops'])} and CPU 1's backlog {pps(x['dut CPU_BACKLOG'])}")
    assert other == x["dut out/Queue@1.drops"] + x["dut CPU_BACKLOG"]


def test_veth_searches():
    r = veth_searches()
    ours = r[(r["method"] == "routerlab") & ~r["experiment"].str.startswith("bench-")]
    for exp, name in VETH_NAMES.items():
        if exp == "click-single-flow":
            continue
        a = ours[ours["experiment"] == exp].set_index("kind")["answer"]
        says(VETH, f"| {name} | {a['pdr']} | {a['ndr']} |")
    found = r[r["upper_pps"].notna() & ~r["generator_bound"]]
    mine = found[found["method"] == "routerlab"]
    says(VETH, f"Precision (upper/lower - 1) is {span(mine['precision'], pct(1))}%")
    assert (r["final_trials"] == 3).all()
    bounds = ours["answer"].str.startswith("at least")
    assert bounds.sum() * 2 == len(ours)
    says(VETH, "Half of the answers are lower bounds")
    ndr = ours[ours["engine"] == "ebpf"].query("kind == 'ndr'")["answer"].str.removesuffix(" pps")
    says(VETH, f"The XDP router's NDR is low ({' and '.join(ndr)} pps)")
    linux = r[(r["engine"] == "linux") & (r["kind"] == "pdr") & (r["method"] == "routerlab")].sort_values("when")
    assert linux["answer"].str.startswith("at least").all()
    says(VETH, f"linux {', '.join(linux['answer'].str.replace(r' pps.*', '', regex=True).iloc[:-1])} and "
               f"{linux['answer'].str.replace(r' pps.*', '', regex=True).iloc[-1]} pps in three searches between "
               f"{when_range(linux['when']).replace('-', ' and ')}")
    for eng, exp in (("nft, 50 rules", "nft-single-flow-fw50"), ("ebpf, no rules", "ebpf-single-flow")):
        a = r[(r["experiment"] == exp) & (r["kind"] == "pdr")]["answer"].iloc[0]
        b = r[(r["experiment"] == f"bench-pdr-{exp}")]["answer"].iloc[0]
        says(VETH, f"{eng}: {a.split(' (')[0]}, then {b.split(' (')[0]}")
    x = r[(r["experiment"] == "nft-single-flow-fw50") & (r["kind"] == "pdr")].iloc[0]
    y = r[r["experiment"] == "bench-pdr-nft-single-flow-fw50"].iloc[0]
    says(VETH, f"{100 * (x['lower_pps'] / y['lower_pps'] - 1):.1f}% apart where each search's precision is "
               f"{100 * max(x['precision'], y['precision']):.1f}%")
    p = veth_search_trials()
    kernel = p[p["engine"].isin(["linux", "nft"])]
    places = kernel["drops"].dropna().str.replace(r"=\d+", "", regex=True).str.split(";").explode()
    assert set(places) == {"dut:CPU_BACKLOG"}
    xdp = p[(p["engine"] == "ebpf")]["drops"].dropna().str.replace(r"=\d+", "", regex=True)
    assert set(xdp) == {"dut:NOT_SPECIFIED"}
    assert (p["lost_unexplained"] == 0).all()
    says(VETH, "no counter left a packet of theirs unexplained")


def test_veth_against_mlrsearch():
    r = veth_searches()
    b = r[r["experiment"] == "bench-search-linux-single-flow"].set_index(["kind", "method"])
    says(VETH, f"ceiling {pps(b['generator_ceiling_pps'].iloc[0])} pps):")
    bound = 0
    for kind in ("ndr", "pdr"):
        o, m = b.loc[(kind, "routerlab")], b.loc[(kind, "mlrsearch")]
        # an answer that is only a lower bound is set against nothing
        ratio = f"{o['lower_pps'] / m['lower_pps']:.3f}" if not (o["generator_bound"] or m["generator_bound"]) \
            else "none: a lower bound"
        bound += int(o["generator_bound"]) + int(m["generator_bound"])
        says(VETH,
             f"| {kind.upper()} answer | {o['answer']} ({o['trials']} trials, {o['trial_seconds']:g} trial-s) | "
             f"{m['answer']} ({m['trials']} trials, {m['trial_seconds']:g} trial-s) | "
             f"{ratio} | {o['trial_seconds'] / m['trial_seconds']:.2f} |")
    assert bound == 3
    says(VETH, "three are lower bounds where the generator could not deliver the load above")
    p = veth_search_trials()
    p = p[(p["experiment"] == "bench-search-linux-single-flow") & (p["kind"] == "ndr")]
    ours, theirs = b.loc[("ndr", "routerlab")], b.loc[("ndr", "mlrsearch")]
    assert theirs["lower_pps"] > ours["upper_pps"]
    says(VETH, f"MLRsearch passed {pps(theirs['lower_pps'])} pps, above the {pps(ours['upper_pps'])} pps our search failed")
    mine = p[(p["method"] == "routerlab") & (p["phase"] == "final")]
    at = mine[np.isclose(mine["load"], ours["upper_pps"])]
    assert len(at) == 3 and at["passed"].sum() == 1
    says(VETH, f"at {pps(ours['upper_pps'])} pps our three trials lost {', '.join(sig2(x) for x in at['loss'].iloc[:-1])} "
               f"and {sig2(at['loss'].iloc[-1])}%")
    lossy = mine[~mine["generator_limited"]].groupby("load")["lost"].agg(lambda s: (s > 0).any())
    low = lossy[lossy].index.min()
    assert lossy[lossy.index >= low].all() and not lossy[lossy.index < low].any()
    worst_small = mine[(mine["lost"] > 0) & ~mine["generator_limited"]]["loss"].min()
    says(VETH, f"at every load our search tried from {pps(low)} pps up at least one trial lost packets, as few as "
               f"{sig2(worst_small)}%")
    them = p[(p["method"] == "mlrsearch") & np.isclose(p["load"], theirs["lower_pps"])]
    assert (them["lost"] == 0).all()
    says(VETH, f"MLRsearch's {len(them)} trials at {pps(theirs['lower_pps'])} pps lost nothing")


def test_veth_against_the_previous_measurement():
    old = pd.read_csv(io.StringIO(committed("datasets/testbed-veth/trials.csv", VETH_BEFORE)))
    olde = pd.read_csv(io.StringIO(committed("datasets/testbed-veth/experiments.csv", VETH_BEFORE)))
    oldd = pd.read_csv(io.StringIO(committed("datasets/testbed-veth/drops.csv", VETH_BEFORE)))
    t, _, a, ceiling = veth()
    e = datasets.read_experiments(D / VETH)
    start = pd.to_datetime(old["started_at"])
    says(VETH, f"({start.min():%Y-%m-%d}, from {start.min():%H:%M} UTC, commit {VETH_BEFORE[:7]}")
    assert start.min() < pd.to_datetime(t["started_at"]).min()
    keys = ["experiment", "offered_pps", "trial"]
    okept = old[~old["generator_limited"].astype(bool)]
    loss = oldd[oldd["counted_as"] == "loss"].merge(okept[keys], on=keys)
    kern = okept[okept["experiment"].isin(KERNEL_PATHS[:4])]
    sink = loss[loss["place"] == "sink"].groupby("experiment")["packets"].sum()
    share = sink / kern.groupby("experiment")["lost"].sum()
    says(VETH, f"{span(share, pct())}% of each kernel-path sweep's loss was the sink's (`sink CPU_BACKLOG`)")
    c = okept[okept["experiment"] == "click-single-flow"]
    says(VETH, f"no counter explained {pps(c['lost_unexplained'].sum())} of Click's {pps(c['lost'].sum())} lost packets")
    oc = float(olde["generator_ceiling_pps"].unique()[0])
    assert (old["attempt"] == 1).all()
    says(VETH, f"the generator's ceiling was {pps(oc)} pps then and {pps(ceiling)} now",
         f"against {(t['attempt'] > 1).sum()} now")
    oa = {x.experiment: x for x in stats.assess(old)}
    says(VETH, f"Click's PDR@0.5% on the same grid was {pps(oa['click-single-flow'].pdr.load)} pps then and is "
               f"{pps(a['click-single-flow'].pdr.load)} now")
    # the same Click and the same configuration both times
    oe, ne = olde.set_index("experiment").loc["click-single-flow"], e.set_index("experiment").loc["click-single-flow"]
    assert oe["engine_version"] == ne["engine_version"]
    assert oe["notes"].split("; ")[0] == ne["notes"].split("; ")[0] == "click_config=routers/click/iprouter.click"
    assert sorted(old[old["experiment"] == "click-single-flow"]["offered_pps"].unique()) == \
        sorted(c["offered_pps"].unique()) == sorted(t[t["experiment"] == "click-single-flow"]["offered_pps"].unique())
