"""Every number the README of testbed-click states, recomputed from its files (see readme_checks)."""

import io
import re

import numpy as np
import pandas as pd

from routerlab import datasets, stats
from routerlab.validation import TrialValidation
from readme_checks import CODE, D, PREVIOUS, VETH_CODE, committed, pct, per_load, pps, says, sig2, span, trials, when_range


CLICK = "testbed-click"
DPDK, FC = "fastclick-dpdk-single-flow", "fastclick-single-flow"
WORDS = {1: "One", 2: "Two", 3: "Three", 4: "Four", 5: "Five"}


def click_searches() -> pd.DataFrame:
    return datasets.read_searches([D / CLICK])


def search_trials() -> pd.DataFrame:
    return pd.read_csv(D / CLICK / "search_trials.csv")


def notes(e: pd.DataFrame) -> dict:
    """Each sweep's notes (``key=value; ...``) as a dict, by engine."""
    return {row.engine: dict(kv.split("=", 1) for kv in row.notes.split("; ")) for row in e.itertuples()}


def why(rows: pd.DataFrame) -> pd.Series:
    """What disturbed each row, in the validation's words ("" for nothing)."""
    v = TrialValidation()
    return pd.Series([v.why_disturbed(r) for r in rows.to_dict("records")], index=rows.index, dtype=str)


def says_command(command: str):
    """The README's code block gives ``command``, its lines continued with ``\\``."""
    text = " ".join((D / CLICK / "README.md").read_text().replace("\\\n", " ").split())
    assert " ".join(command.split()) in text, f"datasets/{CLICK}/README.md does not give the command: {command}"


def frac(load, ceiling) -> str:
    return f"{load / ceiling:.2g}"


def test_click_where_when_how():
    e = datasets.read_experiments(D / CLICK)
    r = click_searches()
    t = trials(CLICK)
    for col in ("kernel", "cpu", "pinning", "generator_ceiling_pps", "engine_version"):
        assert e[col].nunique() == 1
    cpus = int(re.fullmatch(r".* x(\d+)", e["cpu"].iloc[0]).group(1))
    says(CLICK, f"kernel {e['kernel'].iloc[0]}, {cpus} vCPUs ({e['cpu'].iloc[0]})", f"`{e['pinning'].iloc[0]}`",
         f"FastClick {e['engine_version'].iloc[0]}")
    days = set(pd.to_datetime(t["started_at"]).dt.strftime("%Y-%m-%d")) | set(pd.to_datetime(r["when"]).dt.strftime("%Y-%m-%d"))
    assert len(days) == 1
    says(CLICK, f"**When:** {days.pop()}: the searches {when_range(r['when'])} UTC (when each one finished), the "
                f"sweeps' trials {when_range(t['started_at'])} UTC (code: commit {CODE[:7]})")
    # the validation the README describes is the one of the commit measured
    assert "def why_disturbed" in committed("lib/routerlab/validation.py", CODE)
    assert r["generator_ceiling_pps"].nunique() == 1
    ceiling = e["generator_ceiling_pps"].iloc[0]
    says(CLICK, f"`bench engines` measures the generator's ceiling itself at its start "
                f"({pps(r['generator_ceiling_pps'].iloc[0])} pps)",
         f"the sweeps use the ceiling measured at the start of the run, {pps(ceiling)} pps")
    # the commands, as run with --out datasets/testbed-click
    engines = e["engine"].tolist()
    for row in e.itertuples():
        head, out = row.command.split(" --out ")
        assert " " not in out  # --out is the last argument
        says_command(head.replace(f"--engine {row.engine} ", "--engine E ") + " --out datasets/testbed-click")
    assert all(f"--ceiling {ceiling:.0f} " in c for c in e["command"])
    says(CLICK, f"# E = {', '.join(engines)}")
    p = search_trials()
    assert set(p[p["phase"] == "final"]["duration"]) == {1.0}
    says_command("routerlab bench engines " + " ".join(f"--engine {x}" for x in r["engine"])
                 + " --duration 1 --out datasets/testbed-click")
    # trial validation: the same in every sweep and search
    n = notes(e)
    for key in ("steal_threshold", "probe_period_ms", "max_repeats"):
        assert len({x[key] for x in n.values()}) == 1 and (r[key].astype(str) == n["fastclick"][key]).all()
    assert n["fastclick"]["loss_attribution"] == "on"
    says(CLICK, f"A trial is measured again, up to {n['fastclick']['max_repeats']} times, when its steal is above "
                f"{float(n['fastclick']['steal_threshold']):.0%}",
         "longer than the probe's period and than the router's queue lasts at that load",
         f"A probe on the router's CPU wakes every {float(n['fastclick']['probe_period_ms']):.0f} ms",
         f"the queue is {n['fastclick']['router_queue_packets']} packets for fastclick (the CPU backlog that feeds "
         f"its socket) and {n['fastclick-dpdk']['router_queue_packets']} for fastclick-dpdk (its AF_XDP ring)")
    q = r.set_index("engine")["router_queue_packets"]
    assert q["fastclick"] == int(n["fastclick"]["router_queue_packets"])
    assert q["fastclick-dpdk"] == int(n["fastclick-dpdk"]["router_queue_packets"])
    # files
    loads = t.groupby("engine")["offered_pps"].nunique()
    runs = t.groupby(["engine", "offered_pps"]).size()
    assert loads.nunique() == 1 and runs.nunique() == 1
    says(CLICK, f"the {len(t)} sweep trials ({len(loads)} engines × {loads.iloc[0]} loads × {runs.iloc[0]})")
    for col in ("lost", "lost_attributed", "lost_unexplained", "trace_missed", "drops", "cpu_stop_ms", "gen_late_ms",
                "queue_ms", "attempt", "disturbed"):
        assert col in t.columns
    sup = pd.read_csv(D / CLICK / "superseded_trials.csv")
    ssup = pd.read_csv(D / CLICK / "superseded_search_trials.csv")
    says(CLICK, f"the {len(sup)} sweep attempts and the {len(ssup)} search attempts that were measured again")


def test_click_pdr_table_never_sets_a_lower_bound_against_another():
    r = click_searches()
    pdr = datasets.search_pdr(r).set_index("engine")
    click = pdr.loc["click", "pdr_pps"]
    for row in r.itertuples():
        ratio = "none: a lower bound" if pdr.loc[row.engine, "at_least"] else f"{row.lower_pps / click:.2f}"
        says(CLICK, f"| {row.engine} | {row.answer} | {ratio} |")
    says(CLICK, "| engine | PDR@0.5% | ratio to click |")
    says(CLICK, f"**PDR@0.5%, in one run** (generator ceiling {r['generator_ceiling_pps'].iloc[0]:,.0f} pps)")
    bounded = pdr[pdr["at_least"]]
    assert (bounded["bound"] == "limited by the generator").all() and len(bounded) == 2
    says(CLICK, f"{WORDS[len(bounded)]} answers are lower bounds", "Both searches were stopped by the generator")
    own = pdr.index[~pdr["at_least"]].tolist()
    assert own == ["ebpf", "click", "fastclick"]
    says(CLICK, "The ratio column is to click, whose PDR, like fastclick's and ebpf's, is the router's own",
         f"FastClick's batches of 32 carry {pdr.loc['fastclick', 'pdr_pps'] / click:.2f} times what Click carries",
         f"On AF_PACKET it carries no more than Click here ({pdr.loc['fastclick', 'pdr_pps'] / click:.2f})")
    assert pdr.loc["fastclick", "pdr_pps"] <= click
    # fastclick failed at click's answer: one step of the search apart
    s = r.set_index("engine")
    assert s.loc["fastclick", "upper_pps"] == s.loc["click", "lower_pps"]
    assert np.isclose(s.loc["fastclick", "precision"], s.loc["click", "precision"])
    says(CLICK, f"the two answers are one step of the search apart (its precision, "
                f"{100 * s.loc['fastclick', 'precision']:.1f}%), as fastclick failed at "
                f"{pps(s.loc['fastclick', 'upper_pps'])} pps, click's answer")
    # ebpf's answer is its own, lost at its XDP ring
    p = search_trials()
    eb = p[(p["engine"] == "ebpf") & np.isclose(p["load"], s.loc["ebpf", "upper_pps"])]
    assert not eb["generator_limited"].any()
    failed = eb[~eb["passed"]]
    loss = sorted(failed["lost"] / failed["tx"])
    lossy = p[(p["engine"] == "ebpf") & (p["lost"] > 0)]
    assert lossy["drops"].str.fullmatch(r"dut:NOT_SPECIFIED=\d+").all()
    says(CLICK, f"ebpf's answer is its own: at {pps(s.loc['ebpf', 'upper_pps'])} pps {len(failed)} of its {len(eb)} "
                f"trials lost more than 0.5% ({' and '.join(f'{100 * x:.2f}%' for x in loss)}), all refused by the "
                f"veth's {s.loc['ebpf', 'router_queue_packets']}-packet XDP ring (`dut NOT_SPECIFIED`)")
    assert min(loss) > stats.PDR_FRACTION


def test_click_what_bounded_the_searches():
    r = click_searches().set_index("engine")
    assert r.index[r["generator_bound"]].tolist() == ["linux", "fastclick-dpdk"]
    p = search_trials()
    # fastclick-dpdk
    dpdk = p[p["engine"] == "fastclick-dpdk"]
    upper = r.loc["fastclick-dpdk", "upper_pps"]
    at = dpdk[np.isclose(dpdk["load"], upper)]
    assert at["generator_limited"].all()
    full = dpdk[dpdk["phase"] == "final"]
    lim = full[full["generator_limited"]]
    assert (lim["tx"] < lim["load"] * lim["duration"]).all() and (lim["duration"] == 1.0).all()
    says(CLICK, f"all {len(at)} trials at its failing load ({pps(upper)} pps) were generator-limited",
         f"and so were {len(lim)} of its {len(full)} full-duration trials, which offered "
         f"{pps(lim['tx'].min())}-{pps(lim['tx'].max())} pps where more was asked")
    # linux: the generator at its failing load, and loss of its own
    lx = p[p["engine"] == "linux"]
    up = lx[np.isclose(lx["load"], r.loc["linux", "upper_pps"])]
    third = up[~up["generator_limited"]]
    assert len(third) == 1 and not third["passed"].iloc[0]
    assert third["drops"].iloc[0] == f"dut:CPU_BACKLOG={third['lost'].iloc[0]}"
    low = lx[np.isclose(lx["load"], r.loc["linux", "lower_pps"])]
    bad = low[~low["passed"]]
    assert len(bad) == 1 and not bad["generator_limited"].any() and bad["drops"].str.startswith("dut:CPU_BACKLOG=").all()
    says(CLICK, f"linux: {up['generator_limited'].sum()} of the {len(up)} trials at its failing load "
                f"({pps(r.loc['linux', 'upper_pps'])} pps) were generator-limited. The third lost "
                f"{sig2(third['lost'].iloc[0] / third['tx'].iloc[0])}% at the router's input backlog "
                f"(`dut CPU_BACKLOG`), and one of the {len(low)} trials at the answer lost "
                f"{sig2(bad['lost'].iloc[0] / bad['tx'].iloc[0])}% there")
    # every search had limited trials; only two answers were bounded by them
    n = p.groupby("engine", sort=False).agg(lim=("generator_limited", "sum"), n=("tx", "size")).loc[r.index]
    assert r["limited_by_generator"].all() and (n["lim"] > 0).all() and (n["n"] == r["trials"]).all()
    says(CLICK, "Every search had generator-limited trials: "
                + ", ".join(f"{e} {k}" for e, k in n["lim"].iloc[:-1].items())
                + f" and {n.index[-1]} {n['lim'].iloc[-1]}, of "
                + ", ".join(str(x) for x in n["n"].iloc[:-1]) + f" and {n['n'].iloc[-1]} trials",
         "Only at linux's and fastclick-dpdk's failing loads did they bound the answer")
    # in the sweeps
    t = trials(CLICK)
    lim = t[t["limited"]]
    by = lim.groupby("engine").size()
    ceiling = t["offered_pps"].max()
    says(CLICK, f"In the sweeps, {by['fastclick']} of fastclick's trials and {by['fastclick-dpdk']} of "
                f"fastclick-dpdk's were generator-limited, all at {pps(lim['offered_pps'].min())} pps "
                f"({frac(lim['offered_pps'].min(), ceiling)} of the ceiling) or more")


def test_click_sweeps():
    t = trials(CLICK)
    a = {x.experiment: x for x in stats.assess(datasets.read(D / CLICK).trials)}
    s = per_load(CLICK)
    dpdk, fc = s.loc[DPDK], s.loc[FC]
    lim = t[t["limited"]].groupby(["experiment", "offered_pps"]).size()
    ceiling = t["offered_pps"].max()
    says(CLICK, f"**The sweeps** (ceiling {pps(ceiling)} pps)")
    # fastclick-dpdk: nothing lost in a delivered trial; the top loads all limited
    assert (dpdk["worst"] == 0).all()
    top = dpdk.index.max()
    gone = sorted(set(t[t["experiment"] == DPDK]["offered_pps"]) - set(dpdk.index))
    assert all(lim.loc[(DPDK, x)] == 10 for x in gone) and all(x > top for x in gone)
    g = t[(t["experiment"] == DPDK) & t["offered_pps"].isin(gone)]
    says(CLICK, f"lost no packet in any trial the generator delivered, up to {pps(top)} pps "
                f"({frac(top, ceiling)} of the ceiling, where {lim.loc[(DPDK, top)]} of the 10 trials was "
                f"generator-limited). At {' and '.join(pps(x) for x in gone)} pps all 10 trials were "
                f"generator-limited (they offered {pps((g['tx'] / g['duration_s']).min())}-"
                f"{pps((g['tx'] / g['duration_s']).max())} pps)")
    vd, vf = a[DPDK].verdict, a[FC].verdict
    says(CLICK, f"Its verdict is **{vd.label}** ({vd.why.split(' (to do')[0]})",
         f"**`fastclick` (AF_PACKET)** is **{vf.label}** ({vf.why})")
    # fastclick: the first lossy load, one trial
    fz = fc[fc["worst"] == 0].index
    assert (fz == fc.index[:len(fz)]).all()
    nxt = fc.index[len(fz)]
    at = t[(t["experiment"] == FC) & (t["offered_pps"] == nxt)]
    lossy = at[at["lost"] > 0]
    assert len(lossy) == 1 and len(at) == 10
    one = lossy.iloc[0]
    pdr = a[FC].pdr
    assert pdr.status == "found" and pdr.load == fz.max() and fc.loc[nxt, "loss"] > stats.PDR_FRACTION
    says(CLICK, f"lost nothing up to {pps(fz.max())} pps, with its CPU {100 * fc.loc[fz.max(), 'cpu']:.0f}% busy. At "
                f"{pps(nxt)} pps one trial of {len(at)} lost {sig2(one['loss'])}% ({pps(one['lost'])} packets) and the "
                f"other {len(at) - 1} nothing: a mean of {100 * fc.loc[nxt, 'loss']:.2f}%, just over the PDR fraction, "
                f"so the sweep's PDR@0.5% is {pps(pdr.load)} pps")
    # its lag was not held against it: the loss is more than the lag's packets
    offered = nxt * one["gen_late_ms"] / 1e3
    assert one["lost"] > offered and one["gen_late_ms"] > one["queue_ms"] and why(lossy).iloc[0] == ""
    says(CLICK, f"That trial's generator fell {one['gen_late_ms']:.1f} ms behind, but the lag is not held against it: "
                f"the trial lost more than the {pps(offered)} packets offered in {one['gen_late_ms']:.1f} ms")
    # the throughput after it
    summ = a[FC].summary.set_index("offered_pps")
    thr = summ["throughput_pps"]
    l2, l3, l4, l5, l6 = fc.index[len(fz) + 1:len(fz) + 6]
    at2 = t[(t["experiment"] == FC) & (t["offered_pps"] == l2)]
    assert thr[l2] > thr[nxt] and a[FC].verdict.still_rising
    says(CLICK, f"At {pps(l2)} pps {(at2['lost'] > 0).sum()} of {len(at2)} trials lost packets (a mean of "
                f"{sig2(fc.loc[l2, 'loss'])}%), and the throughput (offered × (1 - mean loss)) still rose, to "
                f"{pps(thr[l2])} pps")
    assert thr[l3] < thr[l2] and thr[l4] < thr[l3] and thr[l5] > thr[l4] and thr[l6] < thr[l5]
    assert (fc.loc[[l3, l4], "n"] == 10).all() and fc.loc[[l5, l6], "n"].tolist() == [4, 3]
    says(CLICK, f"It then fell to {pps(thr[l3])} and {pps(thr[l4])} pps at {pps(l3)} and {pps(l4)} offered, rose "
                f"again to {pps(thr[l5])} pps at {pps(l5)} (only {fc.loc[l5, 'n']} trials the generator could offer) "
                f"and was {pps(thr[l6])} pps at {pps(l6)} ({fc.loc[l6, 'n']} trials), with its CPU "
                f"{span(fc.loc[[l3, l4, l5, l6], 'cpu'], pct())}% busy")
    last = sorted(set(t[t["experiment"] == FC]["offered_pps"]) - set(fc.index))
    assert last == [ceiling] and lim.loc[(FC, ceiling)] == 10
    says(CLICK, f"At {pps(ceiling)} pps all 10 trials were generator-limited.")
    # the search against the sweep
    r = click_searches().set_index("engine")
    says(CLICK, f"The fastclick search's answer ({pps(r.loc['fastclick', 'lower_pps'])} pps) is "
                f"{r.loc['fastclick', 'lower_pps'] / pdr.load:.1f} times the sweep's PDR ({pps(pdr.load)} pps): a "
                f"search passes a load on the median of its {r.loc['fastclick', 'final_trials']} trials, a sweep on the "
                f"mean of its {len(at)}")
    assert (t["engine_forwarded"] == t["rx"]).all()


def test_click_trial_validation():
    t = trials(CLICK)
    sup = pd.read_csv(D / CLICK / "superseded_trials.csv")
    w = why(sup)
    # every attempt set aside was disturbed, by the validation's own rule
    assert sup["disturbed"].all() and (w != "").all()
    again = t[t["attempt"] > 1]
    assert len(sup) == (t["attempt"] - 1).sum() and (again["attempt"] == 2).all()
    assert set(sup["engine"]) == set(again["engine"]) == {"fastclick-dpdk"}
    steal, lag = sup[w.str.startswith("steal")], sup[w.str.startswith("generator fell behind")]
    assert len(steal) == 1 and len(lag) == 1 and not w.str.contains("router CPU stopped").any()
    st, lg = steal.iloc[0], lag.iloc[0]
    kept = t[(t["experiment"] == lg["experiment"]) & (t["offered_pps"] == lg["offered_pps"]) & (t["trial"] == lg["trial"])]
    assert kept["limited"].all()
    says(CLICK, f"In the sweeps, {len(again)} of the {len(t)} trials were measured again, once each, both of "
                f"fastclick-dpdk: at {pps(st['offered_pps'])} pps for steal ({100 * st['steal']:.1f}%), and at "
                f"{pps(lg['offered_pps'])} pps for a loss of {pps(lg['lost'])} packets behind a generator lag of "
                f"{lg['gen_late_ms']:.1f} ms (the queue lasts {lg['queue_ms']:.1f} ms there); the second attempt of "
                f"that trial was generator-limited")
    assert not t["disturbed"].any() and (why(t) == "").all()
    says(CLICK, "No stop of the router's CPU was held against a sweep trial",
         f"No kept sweep trial is `disturbed`, and the largest kept steal is {100 * t['steal'].max():.1f}%")
    # the searches
    p = search_trials()
    ssup = pd.read_csv(D / CLICK / "superseded_search_trials.csv")
    sw = why(ssup)
    assert ssup["disturbed"].all() and (sw != "").all()
    assert len(ssup) == (p["attempt"] - 1).sum()
    per = ssup.groupby("engine", sort=False).size()
    stop, lagged, stolen = (sw.str.contains("router CPU stopped"), sw.str.contains("generator fell behind"),
                            sw.str.contains("steal"))
    assert (stop | lagged | stolen).all() and not stolen.any()
    alone_lag, alone_stop = ssup[lagged & ~stop], ssup[stop & ~lagged]
    says(CLICK, f"In the searches, {(p['attempt'] > 1).sum()} of the {len(p)} trials were measured again, and "
                f"{len(ssup)} attempts were set aside ("
                + ", ".join(f"{e} {n}" for e, n in per.items())
                + f"; none of {' or '.join(sorted(set(p['engine']) - set(per.index)))}): "
                f"{len(alone_lag)} for a generator lag alone ({span(alone_lag['gen_late_ms'], lambda x: f'{x:.1f}')} ms), "
                f"{len(alone_stop)} for a stop of the router's CPU alone (read as "
                f"{span(alone_stop['cpu_stop_ms'], lambda x: f'{x:.1f}')} ms), {(stop & lagged).sum()} for both, and "
                f"none for steal")
    assert sorted(set(p["engine"]) - set(per.index)) == ["click", "fastclick"]
    dist = p[p["disturbed"]]
    assert len(dist) == 1
    d = dist.iloc[0]
    r = click_searches().set_index("engine")
    assert d["engine"] == "linux" and np.isclose(d["load"], r.loc["linux", "lower_pps"]) and d["passed"]
    assert d["attempt"] == 1 + TrialValidation().max_repeats and d["lost"] / d["tx"] <= stats.PDR_FRACTION
    assert "router CPU stopped" in why(dist).iloc[0]
    says(CLICK, f"{WORDS[len(dist)]} kept search trial is still `disturbed` after its {d['attempt']} attempts: "
                f"linux at its answer, {pps(d['load'])} pps, which lost {pps(d['lost'])} packets "
                f"({100 * d['lost'] / d['tx']:.2f}%, under the PDR fraction, so it passed) with its CPU stopped "
                f"{d['cpu_stop_ms']:.1f}-{d['cpu_stop_ms'] + TrialValidation().probe_period_ms:.1f} ms against a queue "
                f"of {d['queue_ms']:.1f} ms")


def test_click_where_the_loss_went():
    t = trials(CLICK)
    d = datasets.read_drops([D / CLICK])
    loss = d[d["counted_as"] == "loss"]
    assert (loss["place"] == "dut").all()
    by = loss.assign(engine=loss["experiment"].str.removesuffix("-single-flow")).groupby(["engine", "reason"])["packets"].sum()
    lost = t.groupby("engine")["lost"].sum()
    assert (t["lost_unexplained"] == 0).all() and (t["trace_missed"] == 0).all()
    assert (by.groupby(level=0).sum() == lost).all()
    assert sorted(by["fastclick"].index) == ["CPU_BACKLOG", "FromDevice@4.kernel_drops", "out/Queue@1.drops"]
    says(CLICK, f"(`drops.csv`, all {len(t)} trials)",
         f"fastclick lost {pps(lost['fastclick'])} packets: {pps(by['fastclick', 'FromDevice@4.kernel_drops'])} at its "
         f"capture socket", f"{pps(by['fastclick', 'out/Queue@1.drops'])} in its output `Queue`")
    fc = d[d["experiment"] == FC]
    backlog = fc[(fc["reason"] == "CPU_BACKLOG") & (fc["counted_as"] == "loss")]
    assert fc[fc["reason"] == "g0.tx_dropped"]["packets"].sum() == backlog["packets"].sum()
    says(CLICK, f"and {pps(backlog['packets'].sum())} refused at the router CPU's input backlog (`dut CPU_BACKLOG`, in "
                f"{len(backlog)} trials at {pps(backlog['offered_pps'].min())} pps or more; the generator's "
                f"`g0.tx_dropped` counted the same number)")
    assert by["fastclick-dpdk"].index.tolist() == ["FromDPDKDevice@4.hw_dropped"]
    ctx = d[(d["experiment"] == DPDK) & (d["reason"] == "d0.rx_dropped")]["packets"].sum()
    assert ctx == lost["fastclick-dpdk"]
    dl = t[(t["experiment"] == DPDK) & (t["lost"] > 0)]
    assert dl["limited"].all()
    says(CLICK, f"fastclick-dpdk lost {pps(lost['fastclick-dpdk'])}, all counted by FromDPDKDevice's `hw_dropped`",
         "the DUT veth's `d0.rx_dropped` counted the same number), all in generator-limited trials",
         "No packet is unexplained, and the drop tracer missed none")
    r = click_searches().set_index("engine")
    says(CLICK, f"(at least {pps(r.loc['fastclick-dpdk', 'lower_pps'])} pps, limited by the generator, against "
                f"{pps(r.loc['fastclick', 'lower_pps'])} on AF_PACKET)")
    assert r.loc["fastclick-dpdk", "lower_pps"] > r[~r["generator_bound"]].loc[["click", "fastclick"], "lower_pps"].max()
    # the searches of click and fastclick lost at their capture socket
    p = search_trials()
    cf = p[p["engine"].isin(["click", "fastclick"]) & (p["lost"] > 0)]
    counters = cf["drops"].str.split(";").explode().str.split("=", expand=True)
    counters[1] = counters[1].astype(int)
    other = counters[counters[0] != "dut:FromDevice@4.kernel_drops"]
    assert (other[0] == "dut:out/Queue@1.drops").all()
    assert set(cf.loc[other.index, "engine"]) == {"click"}
    says(CLICK, f"In their searches both lost their packets at the capture socket (FromDevice's `kernel_drops`), all "
                f"but {pps(other[1].sum())}, which Click's output `Queue` dropped")


def test_click_compared_with_the_replaced_data(tmp_path):
    def old(name):
        return committed(f"datasets/{CLICK}/{name}", PREVIOUS)

    for name in ("search_results.csv", "search_trials.csv"):
        (tmp_path / name).write_text(old(name))
    was = datasets.read_searches([tmp_path]).set_index("engine")
    now = click_searches().set_index("engine")
    assert was.index.tolist() == now.index.tolist()
    for e in now.index:
        says(CLICK, f"| {e} | {was.loc[e, 'answer']} | {now.loc[e, 'answer']} |")
    olde = pd.read_csv(io.StringIO(old("experiments.csv")))
    oldt = pd.read_csv(io.StringIO(old("trials.csv")))
    newe = datasets.read_experiments(D / CLICK)
    days = set(pd.to_datetime(oldt["started_at"]).dt.strftime("%Y-%m-%d")) | set(pd.to_datetime(was["when"]).dt.strftime("%Y-%m-%d"))
    assert len(days) == 1
    # the old validation had no probe: only steal
    assert "probe_period_ms" not in olde["notes"].iloc[0] and "probe_period_ms" in newe["notes"].iloc[0]
    oldsup = pd.read_csv(io.StringIO(old("superseded_trials.csv")))
    assert olde["notes"].str.contains("steal_threshold=0.02").all() and (oldsup["steal"] > 0.02).all()
    says(CLICK, f"The replaced files (commit {PREVIOUS[:7]}) were measured on {days.pop()} with code {VETH_CODE[:7]}, "
                "whose validation measured a trial again for steal only")
    s_was, s_now = was["generator_ceiling_pps"].iloc[0], now["generator_ceiling_pps"].iloc[0]
    w_was, w_now = olde["generator_ceiling_pps"].iloc[0], newe["generator_ceiling_pps"].iloc[0]
    assert s_now > s_was and w_now > w_was
    assert set(oldt["offered_pps"]) != set(trials(CLICK)["offered_pps"])
    assert olde["kernel"].nunique() == 1 and olde["kernel"].iloc[0] != newe["kernel"].iloc[0]
    says(CLICK, f"the generator's ceiling, measured alone, was {pps(s_now)} pps for the searches ({pps(s_was)} then) and {pps(w_now)} "
                f"pps for the sweeps ({pps(w_was)} then), so the sweeps' loads differ too",
         f"The kernel was {olde['kernel'].iloc[0]} then.")
    says(CLICK, f"FastClick on AF_PACKET against Click: "
                f"{was.loc['fastclick', 'lower_pps'] / was.loc['click', 'lower_pps']:.2f} then, "
                f"{now.loc['fastclick', 'lower_pps'] / now.loc['click', 'lower_pps']:.2f} now")
    # the sweeps then and now
    va = {x.experiment: x for x in stats.assess(oldt)}
    vn = {x.experiment: x for x in stats.assess(datasets.read(D / CLICK).trials)}
    ot = oldt.assign(loss=1 - oldt["rx"] / oldt["tx"])
    nt = trials(CLICK)

    def lossless_up_to(tt, exp):
        g = tt[(tt["experiment"] == exp) & ~tt["generator_limited"].astype(bool)].groupby("offered_pps")["loss"].max()
        z = g[g == 0].index
        assert (z == g.index[:len(z)]).all()
        return z.max()

    o_fc, n_fc = lossless_up_to(ot, FC), lossless_up_to(nt, FC)
    says(CLICK, f"fastclick's sweep was **{va[FC].verdict.label}** then, with no loss up to {pps(o_fc)} pps "
                f"({frac(o_fc, w_was)} of its ceiling); it is **{vn[FC].verdict.label}** now, with no loss up to "
                f"{pps(n_fc)} pps ({frac(n_fc, w_now)})")
    od = ot[(ot["experiment"] == DPDK) & ~ot["generator_limited"].astype(bool)]
    lossy = od[od["lost"] > 0]
    assert len(lossy) == 1
    x = lossy.iloc[0]
    n_at = (od["offered_pps"] == x["offered_pps"]).sum()
    assert not (nt[(nt["experiment"] == DPDK) & ~nt["limited"]]["lost"] > 0).any()
    says(CLICK, f"fastclick-dpdk's sweep lost {sig2(x['loss'])}% in one of the {n_at} delivered trials at "
                f"{pps(x['offered_pps'])} pps ({frac(x['offered_pps'], w_was)} of its ceiling) then; now it lost "
                "nothing in any delivered trial")
    says(CLICK, f"{(oldt['attempt'] > 1).sum()} sweep trials were measured again then, all for steal; "
                f"{(nt['attempt'] > 1).sum()} now")


def test_click_set_up():
    e = datasets.read_experiments(D / CLICK)
    t = trials(CLICK)
    # the engines as the measured commit pins them
    pins = committed("lib/routerlab/data/engine-builds.yaml", CODE)
    commit = dict(re.findall(r"repository: (\S+)\n\s+commit: ([0-9a-f]{12})", pins))
    assert e["engine_version"].iloc[0] == f"tbarbette/fastclick@{commit['tbarbette/fastclick']}"
    (dpdk,) = re.findall(r"DPDK ([\d.]+) from Debian", pins)
    says(CLICK, f"FastClick tbarbette/fastclick@{commit['tbarbette/fastclick']} and Click "
                f"kohler/click@{commit['kohler/click']} as `routerlab engines install` builds them, FastClick against "
                f"Debian's dpdk-dev {dpdk}")
    # frames, batches, CPUs
    assert (e["frame_size"] == 64).all() and e["notes"].str.contains("batches of 32").all()
    says(CLICK, f"({e['frame_size'].iloc[0]}-byte frames, one flow, one route)", "`fastclick` is AF_PACKET with batches of 32")
    gen, router = re.fullmatch(r"generator CPU (\d); router receive CPU (\d); .*", e["pinning"].iloc[0]).groups()
    cpus = int(re.fullmatch(r".* x(\d+)", e["cpu"].iloc[0]).group(1))
    says(CLICK, f"`-l {router}`, so it polls CPU {router} (100% busy by design)",
         f"The generator and the router share this machine's {cpus} vCPUs: the generator is pinned to CPU {gen} and "
         f"the router to CPU {router}")
    assert (t[t["engine"] == "fastclick-dpdk"]["cpu_load"] == 1.0).all()
    assert stats.PDR_FRACTION == 0.005
    says(CLICK, "PDR@0.5% searches of linux, ebpf, click, fastclick and fastclick-dpdk, all in one run",
         "which one lossy trial raises above 0.5%")
    assert click_searches()["engine"].tolist() == ["linux", "ebpf", "click", "fastclick", "fastclick-dpdk"]
    # the measurement docs/testbed.md gives for fastclick-dpdk's generator
    if (D.parent / "docs").is_dir():
        doc = " ".join((D.parent / "docs" / "testbed.md").read_text().split())
        placement = doc.split("## CPU placement")[1].split("## ")[0]
        (day,) = set(re.findall(r"Measured on (\d{4}-\d\d-\d\d)", placement))
        says(CLICK, f"it was measured on {day} (`docs/testbed.md`, \"CPU placement\")")
    # the comparison table's columns
    old = pd.read_csv(io.StringIO(committed(f"datasets/{CLICK}/trials.csv", PREVIOUS)))
    says(CLICK, f"| engine | PDR@0.5%, {pd.to_datetime(old['started_at']).min():%Y-%m-%d} | "
                f"PDR@0.5%, {pd.to_datetime(t['started_at']).min():%Y-%m-%d} |")
