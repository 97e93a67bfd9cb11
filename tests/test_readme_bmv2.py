"""Every number the README of testbed-bmv2 states, recomputed from its files (see readme_checks)."""

import subprocess

import numpy as np
import pandas as pd
import pytest

from routerlab import datasets, stats, testbed
from routerlab.engines import bmv2 as bmv2_engine
from routerlab.validation import TrialValidation
from readme_checks import (the_testbed_doc, superseded, why, BMV2, CODE, CODE_ALONE, D, MORNING, VETH, check_superseded_searches, committed, loss_rows,
                           pct, per_load, pps, previous_files, says, sig2, span, trials, when_range)

SWEEP = "bmv2-single-flow"


def notes(e) -> dict:
    """An experiment's ``notes`` as a dict of text values."""
    return dict(kv.split("=", 1) for kv in e["notes"].split("; "))


def one(x) -> str:
    """Milliseconds (or a percentage) with one decimal."""
    return f"{x:.1f}"


def search_trials() -> pd.DataFrame:
    """search_trials.csv with each row's index within its experiment (the ``probe`` of its
    superseded attempts), its loss ratio and the flags as booleans."""
    s = datasets.read_kind(D / BMV2, "search_trials.csv")
    return s.assign(probe=s.groupby("experiment").cumcount(), loss=s["lost"] / s["tx"],
                    **{c: s[c].astype(str).str.lower() == "true" for c in ("passed", "generator_limited", "disturbed")})


def searches() -> pd.DataFrame:
    return datasets.read_searches([D / BMV2]).set_index("engine")


def test_bmv2_where_when_how():
    e = datasets.read_experiments(D / BMV2).iloc[0]
    t = trials(BMV2)
    r = datasets.read_searches([D / BMV2])
    says(BMV2, f"kernel {e['kernel']}) with 2 vCPUs ({e['cpu']})", f"`{e['pinning']}`",
         f"(`experiments.csv`: {e['engine_version']})")
    # simple_switch is pinned to the router's CPU, the one that receives
    cpu = testbed.Testbed.__dataclass_fields__["router_cpu"].default
    assert f"router receive CPU {cpu};" in e["pinning"] and "pinned to the router's CPU" in bmv2_engine.__doc__
    says(BMV2, f"simple_switch (all its threads) runs on CPU {cpu} too")
    # the DUT's kernel forwards nothing while simple_switch runs (the engine sets it)
    engine_src = (D.parent / "lib" / "routerlab" / "engines" / "bmv2.py").read_text()
    assert '"sysctl", "-qw", "net.ipv4.ip_forward=0"' in engine_src
    says(BMV2, "the DUT's kernel does not forward (`ip_forward=0`)")
    # the build flags, as routerlab engines install builds bmv2
    builds = (D.parent / "lib" / "routerlab" / "data" / "engine-builds.yaml").read_text()
    assert "CFLAGS=-O2 CXXFLAGS=-O2" in builds and "--disable-logging-macros --disable-elogger" in builds
    says(BMV2, "bmv2 with `--disable-logging-macros --disable-elogger` and `-O2`")
    day = pd.to_datetime(t["started_at"]).min().strftime("%Y-%m-%d")
    assert pd.to_datetime(t["started_at"]).dt.strftime("%Y-%m-%d").eq(day).all()
    assert pd.to_datetime(r["when"]).dt.strftime("%Y-%m-%d").eq(day).all()
    says(BMV2, f"**When:** {day}: the sweep {when_range(t['started_at'])} UTC, "
               f"the searches {when_range(r['when'])} UTC", f"Code: commit {CODE_ALONE[:7]}.")
    # the script, as it was at that commit: four datasets in this order, this one with these two commands
    script = committed("scripts/remeasure-testbed.sh", CODE_ALONE)
    order = ["testbed-click", "click-course", "testbed-bmv2", "comparison"]
    at = [script.index(f"if want {x}; then") for x in order]
    assert at == sorted(at)
    block = script.split("if want testbed-bmv2; then")[1].split("\nfi\n")[0]
    assert ("$R measure --engine bmv2 --scenario single-flow --loads 1000,2000,3000,5000,7500,10000,15000,20000,"
            "30000,40000 --runs 10 --duration 1 --out") in block
    assert '$R bench engines --engine linux --engine bmv2 --duration 1 --out "$B"' in block
    says(BMV2, f"`scripts/remeasure-testbed.sh OUT {' '.join(order)}` measured four datasets one after another, "
               f"this one third (after `{order[1]}`, before `{order[3]}`)",
         "routerlab bench engines --engine linux --engine bmv2 --duration 1 --out datasets/testbed-bmv2")
    # the files agree: click-course's last trial before this sweep, comparison's first after these searches
    first = pd.to_datetime(datasets.read(D / BMV2).trials["started_at"]).min()
    last = pd.to_datetime(r["when"]).max()
    assert pd.to_datetime(datasets.read(D / "click-course").trials["started_at"]).max() < first
    assert pd.to_datetime(datasets.read(D / "comparison").trials["started_at"]).min() > last
    n = notes(e)
    assert n["capture_drops"] == "on" and n["egress_queue_drops"] == "on" and n["loss_attribution"] == "on"
    says(BMV2, "(`capture_drops=on` and `egress_queue_drops=on` in the notes")
    # the validation's settings, the same in the sweep's notes and in both searches' results
    for k in ("router_queue_packets", "steal_threshold", "probe_period_ms", "max_repeats"):
        assert (r[k].astype(float) == float(n[k])).all(), k
    says(BMV2, f"up to {int(n['max_repeats'])} times, when its steal is above {float(n['steal_threshold']):.0%}",
         f"longer than the probe's {float(n['probe_period_ms']):g} ms period and than the router's queue lasts",
         f"The validation takes the router's queue as {n['router_queue_packets']} packets "
         f"(`router_queue_packets={n['router_queue_packets']}` in the notes)")
    says(BMV2, f"Each command measured the generator's ceiling itself: {pps(e['generator_ceiling_pps'])} pps before "
               f"the sweep (its loads are absolute, so it only serves the record) and "
               f"{pps(r['generator_ceiling_pps'].iloc[0])} pps before the searches.")
    assert r["generator_ceiling_pps"].nunique() == 1
    loads = ",".join(f"{x:.0f}" for x in sorted(t["offered_pps"].unique()))
    assert e["command"].startswith(f"routerlab measure --engine bmv2 --scenario single-flow --loads {loads} "
                                   "--runs 10 --duration 1 --out ")
    says(BMV2, f"--loads {loads}")
    assert e["frame_size"] == 64 and "flows=single" in e["scenario"] and "routes=1," in e["scenario"]
    says(BMV2, f"Frames are {e['frame_size']} B, one flow, one route.")


def test_bmv2_files():
    t = trials(BMV2)
    runs = t.groupby("offered_pps").size()
    assert (runs == 10).all()
    says(BMV2, f"{len(t)} sweep trials ({len(runs)} loads × K = {runs.iloc[0]})")
    assert (t["engine_forwarded"] == t["rx"]).all()
    # the engine's own count: its egress counter at port 1, the port towards the sink
    src = (D.parent / "lib" / "routerlab" / "engines" / "bmv2.py").read_text()
    assert 'return self.counter("RlEgress.tx_port", 1)' in src and "1 (towards the sink)" in bmv2_engine.__doc__
    says(BMV2, "`engine_forwarded` is bmv2's own counter `RlEgress.tx_port[1]`, read through simple_switch_CLI; it "
               "equals `rx` at the sink in every trial")
    assert {"cpu_stop_ms", "gen_late_ms", "queue_ms", "attempt", "disturbed"} <= set(t.columns)
    assert datasets.read_drops([D / BMV2])["reason"].isin(["d0.capture_drops", "egress_queue_drops"]).any()
    e = datasets.read_experiments(D / BMV2).iloc[0]
    assert {"p4_program", "entries", "entries_load_s", "steal_threshold", "probe_period_ms"} <= set(notes(e))
    # the sweep's attempts measured again: same columns; each kept trial's attempt counts them
    sup = superseded(BMV2, "superseded_trials.csv")
    assert list(sup.columns[:-1]) == list(pd.read_csv(D / BMV2 / "trials.csv").columns)
    says(BMV2, f"the {len(sup)} sweep attempts that were measured again (same columns)")
    made = sup.groupby(["offered_pps", "trial"]).size()
    k = t.set_index(["offered_pps", "trial"])
    assert (k.loc[made.index, "attempt"] == made + 1).all() and (k.drop(made.index)["attempt"] == 1).all()
    # the searches: 3 final trials of 1 s; the answer's last three passed on their median, the next load's failed
    r = datasets.read_searches([D / BMV2])
    s = search_trials()
    final = s[s["phase"] == "final"]
    assert (r["final_trials"] == 3).all() and (final["duration"] == 1).all()
    says(BMV2, "(3 final trials of 1 s, a load passes on its median trial)")
    for _, x in r.iterrows():
        f = final[final["experiment"] == x["experiment"]]
        assert f[np.isclose(f["load"], x["lower_pps"])].tail(3)["passed"].sum() >= 2
        if not pd.isna(x["upper_pps"]):
            assert f[np.isclose(f["load"], x["upper_pps"])].tail(3)["passed"].sum() < 2
    # superseded search attempts: probe is the row in search_trials.csv, within its experiment
    old = superseded(BMV2, "superseded_search_trials.csv")
    says(BMV2, f"the {len(old)} search attempts that were measured again")
    check_superseded_searches(s, old)
    # (check_superseded_searches matched each attempt's probe to the row of that index, counted from 0)
    says(BMV2, "`probe` (the trial's row in `search_trials.csv`, from 0, within its experiment)")


def test_bmv2_searches():
    r = searches()
    ceiling = r["generator_ceiling_pps"].iloc[0]
    assert not r["generator_bound"].any()
    says(BMV2, f"| linux | {r.loc['linux', 'answer']} |", f"| bmv2 (router.p4) | {r.loc['bmv2', 'answer']} |",
         f"a generator ceiling of {pps(ceiling)} pps")
    # linux: a lower bound (the search passed the ceiling last), so the ratio is an upper bound
    assert pd.isna(r.loc["linux", "upper_pps"]) and r.loc["linux", "lower_pps"] == ceiling
    says(BMV2, f"carries at most {100 * r.loc['bmv2', 'lower_pps'] / r.loc['linux', 'lower_pps']:.1f}% of what "
               f"Linux carries")
    s = search_trials()
    ls = s[(s["engine"] == "linux") & (s["phase"] == "final")]
    assert not s[s["engine"] == "linux"]["generator_limited"].any()
    says(BMV2, "None of its trials was generator-limited.")
    loads = list(ls["load"])
    assert loads == [ceiling] * 3 + [ceiling / 2] * 3 + [ceiling] * 3
    first, half, again = ls.iloc[:3], ls.iloc[3:6], ls.iloc[6:]
    bad = first[~first["passed"]]
    assert half["passed"].sum() >= 2 and (again["lost"] == 0).all()
    says(BMV2, f"its first three 1-s trials at {pps(ceiling)} pps passed {int(first['passed'].sum())} of 3 (the other "
               f"two lost {' and '.join(sig2(x) for x in bad['loss'][:-1])}% and {sig2(bad['loss'].iloc[-1])}%); it "
               f"then passed {pps(ceiling / 2)} pps and went back to the ceiling, where three more trials lost nothing")
    # bmv2: its one generator-limited trial, far above the answer; its precision and failing load
    lim = s[s["generator_limited"]]
    assert len(lim) == 1 and lim["engine"].iloc[0] == "bmv2" and lim["duration"].iloc[0] == 0.5
    assert np.isclose(lim["load"].iloc[0], ceiling) and lim["load"].iloc[0] > 10 * r.loc["bmv2", "upper_pps"]
    assert r.loc["bmv2", "limited_by_generator"] and not r.loc["linux", "limited_by_generator"]
    says(BMV2, f"Its one generator-limited trial was a {lim['duration'].iloc[0]:g}-s trial at the ceiling",
         f"Its precision is {100 * r.loc['bmv2', 'precision']:.1f}%: it failed {pps(r.loc['bmv2', 'upper_pps'])} pps.")


def test_bmv2_linux_in_testbed_veth():
    """The Linux searches of testbed-veth as it is now: measured alone earlier the same evening."""
    vt = datasets.read(D / VETH).trials
    vr = datasets.read_searches([D / VETH])
    began, done = pd.to_datetime(vt["started_at"]).min(), pd.to_datetime(vr["when"]).max()
    ours = pd.to_datetime(trials(BMV2)["started_at"]).min()
    assert began.date() == ours.date() and done < ours
    lx = vr[(vr["engine"] == "linux") & (vr["kind"] == "pdr") & (vr["method"] == "routerlab")].sort_values("when")
    assert len(lx) == 3
    says(BMV2, f"**In `testbed-veth`, measured alone earlier that evening** ({began:%H:%M}-{done:%H:%M} UTC), Linux's "
               f"PDR@0.5% searches answered {', '.join(lx['answer'].iloc[:-1])} and {lx['answer'].iloc[-1]}, with "
               f"generator ceilings of {', '.join(pps(x) for x in lx['generator_ceiling_pps'].iloc[:-1])} and "
               f"{pps(lx['generator_ceiling_pps'].iloc[-1])} pps")
    bound = (lx["upper_pps"].isna() & np.isclose(lx["lower_pps"], lx["generator_ceiling_pps"])) | lx["generator_bound"]
    # each lower bound with its reason, as the answers word it, in the order the answers come
    b = datasets.search_pdr(lx)
    assert list(b["at_least"]) == list(bound)
    why_at_least = b[b["at_least"]]["bound"]
    count = ["no", "one", "two", "three"]
    says(BMV2, f"there too, {count[len(why_at_least)]} of the three answers are lower bounds: "
               + ", ".join(f"{count[n]} {x}" for x, n in why_at_least.value_counts(sort=False).items()) + ".")


def bmv2_row(s, lo, hi):
    g = s.loc[lo:hi]
    # "= offered" only where the median trial carried every packet offered
    carried = "= offered" if (g["rx_pps"].round() >= g.index).all() else span(g["rx_pps"], pps)
    loss, worst = span(g["loss"], sig2), span(g["worst"], sig2)
    pc = "" if loss == "0" else "%"
    loads = f"{lo:,}" if lo == hi else f"{lo:,}-{hi:,}"
    return f"| {loads} | {loss}{pc} | {worst}{pc if worst != '0' else ''} | {carried} | {span(g['cpu'], pct())}% |"


def test_bmv2_sweep():
    t = trials(BMV2)
    s = per_load(BMV2).loc[SWEEP]
    assert not t["limited"].any()
    says(BMV2, "The sweep (no trial was generator-limited):")
    says(BMV2, bmv2_row(s, 1_000, 2_000), bmv2_row(s, 3_000, 10_000), bmv2_row(s, 15_000, 15_000),
         bmv2_row(s, 20_000, 20_000), bmv2_row(s, 30_000, 30_000), bmv2_row(s, 40_000, 40_000))
    assert (s.loc[:2_000, "worst"] == 0).all() and (s.loc[3_000:, "loss"] > 0).all()
    assert list(s.index) == [1_000, 2_000, 3_000, 5_000, 7_500, 10_000, 15_000, 20_000, 30_000, 40_000]
    x = stats.assess(datasets.read(D / BMV2).trials)[0]
    v = x.verdict
    summ = x.summary.set_index("offered_pps")
    first = summ[summ["plr"] > stats.PDR_FRACTION].index[0]
    o = list(summ.index)
    assert v.still_rising and o[v.candidate_index - 1] == first
    says(BMV2, f"Its verdict is **{v.label}** ({v.why})",
         f"on this grid its PDR@0.5% is {pps(x.pdr.load)} pps and loss first passes 0.5% at {pps(first)} pps, but from "
         f"{pps(first)} to {pps(o[v.candidate_index])} pps the throughput rose by {v.tir[v.candidate_index]:.3f} pps "
         f"per pps of added load (TIR), not below the {v.params.eta * v.params.entry_multiplier:g} that saturation "
         f"needs")
    sat = x.saturation_load
    assert v.saturation_index == v.candidate_index + 1 and sat == o[-1]
    tp = summ["throughput_pps"]
    assert tp.loc[sat] < tp.loc[o[v.candidate_index]]
    says(BMV2, f"The test finds saturation one load later, at {pps(sat)} pps, where the throughput (offered × "
               f"(1 - mean loss)) fell from {pps(tp.loc[o[v.candidate_index]])} to {pps(tp.loc[sat])} pps.")
    # the median trial
    med = t[~t["limited"]].groupby("offered_pps")["loss"].median()
    fails = med[med > stats.PDR_FRACTION]
    f0 = fails.index[0]
    assert list(fails.index) == [x for x in med.index if x >= f0]
    passing = med[med.index < f0]
    says(BMV2, f"The median trial lost {sig2(med.loc[passing.index[-1]])}% at {pps(passing.index[-1])} pps and "
               f"{span(fails, sig2)}% at {pps(f0)}-{pps(fails.index[-1])} pps: on its median trial the sweep passes "
               f"every load up to {pps(passing.index[-1])} pps and fails from {pps(f0)} pps, where "
               f"{(t[t['offered_pps'] == f0]['loss'] > stats.PDR_FRACTION).sum()} of the "
               f"{(t['offered_pps'] == f0).sum()} trials lost more than 0.5%")
    r = searches()
    assert r.loc["bmv2", "lower_pps"] > f0
    assert pd.to_datetime(r["when"]).min() > pd.to_datetime(t["started_at"]).max()  # later in the same run
    st = search_trials()
    ans = st[(st["engine"] == "bmv2") & (st["phase"] == "final") & np.isclose(st["load"], r.loc["bmv2", "lower_pps"])]
    ok = ans[ans["passed"]]
    assert len(ans) == 3 and len(ok) == 2
    says(BMV2, f"The search, which passes a load on its median trial, found {r.loc['bmv2', 'answer']}, above that "
               f"load: two of its three 1-s trials there lost {' and '.join(sig2(x) + '%' for x in ok['loss'])}.")
    assert (t[t["offered_pps"] == f0]["loss"] > ok["loss"].max()).sum() > 5
    says(BMV2, f"These files do not say why the search's trials at {pps(r.loc['bmv2', 'lower_pps'])} pps, later in "
               f"the same run, lost less than most of the sweep's at {pps(f0)} pps")


def test_bmv2_validation_of_the_sweep():
    t = trials(BMV2)
    e = datasets.read_experiments(D / BMV2).iloc[0]
    v = TrialValidation()
    sup = superseded(BMV2, "superseded_trials.csv")
    again = t[t["attempt"] > 1]
    assert sup.groupby(["offered_pps", "trial"]).ngroups == len(again)
    assert sup["why"].str.fullmatch(r"steal \S+ > 2\.0%").all()
    says(BMV2, f"**The sweep: {len(again)} of the {len(t)} trials measured again**, with {len(sup)} attempts set aside "
               f"(`superseded_trials.csv`), every one for steal above 2% ({span(sup['steal'], pct(1))}%); no stop or "
               f"lag accounted for a loss.")
    low = again[again["offered_pps"] <= 2_000]
    assert (sup[sup["offered_pps"] <= 2_000]["lost"] == 0).all() and (t[t["offered_pps"] <= 2_000]["lost"] == 0).all()
    assert sorted(t[t["offered_pps"] <= 2_000]["offered_pps"].unique()) == [1_000, 2_000]
    says(BMV2, f"{len(low)} of those {len(again)} trials ({(sup['offered_pps'] <= 2_000).sum()} of the {len(sup)} "
               f"attempts) were at 1,000 and 2,000 pps, where no trial lost a packet.")
    dist = t[t["disturbed"].astype(bool)]
    assert (dist["attempt"] == 4).all() and why(dist).str.fullmatch(r"steal \S+ > 2\.0%").all()
    per = dist.groupby("offered_pps").size()
    assert list(per.index) == [1_000, 2_000, 40_000]
    says(BMV2, f"{len(dist)} kept trials are still `disturbed` after 3 repeats, all for steal "
               f"({span(dist['steal'], pct(1))}%): {per[1_000]} at 1,000 pps, {per[2_000]} at 2,000 pps and "
               f"{per[40_000]} at 40,000 pps.",
         f"The mean steal of a kept trial was {100 * t['steal'].mean():.2f}%.")
    # the queue: the kernel's backlog, long at these loads
    lossy = t[t["lost"] > 0]
    q = int(notes(e)["router_queue_packets"])
    assert ((lossy["queue_ms"] - q / lossy["offered_pps"] * 1e3).abs() < 1e-3).all()
    assert lossy["cpu_stop_ms"].max() + v.probe_period_ms < lossy["queue_ms"].min()
    assert lossy["gen_late_ms"].max() < lossy["queue_ms"].min()
    says(BMV2, f"bmv2's queue** is taken as the kernel's {q}-packet backlog, which lasts "
               f"{span(lossy['queue_ms'], lambda x: f'{x:.0f}')} ms at the loads that lost packets "
               f"({pps(lossy['offered_pps'].min())}-{pps(lossy['offered_pps'].max())} pps)",
         f"(at most {one(lossy['cpu_stop_ms'].max())} ms and {one(lossy['gen_late_ms'].max())} ms)")
    d = datasets.read_drops([D / BMV2])
    assert not d["reason"].str.contains("BACKLOG").any()
    says(BMV2, "bmv2 does not lose packets in that backlog but at its capture socket and egress queue")
    # with no queue at all: the lossy trials not already disturbed that a stop would have caught
    clean = lossy[~lossy["disturbed"].astype(bool)]
    caught = clean[[v.disturbed({**r, "queue_ms": 0.0}) for r in clean.to_dict("records")]]
    assert why(caught.assign(queue_ms=0.0)).str.startswith("router CPU stopped").all()
    says(BMV2, f"Had the queue counted as nothing, {len(caught)} more of the {len(lossy)} lossy trials would have been "
               f"measured again ({span(caught['lost'], lambda x: f'{x:.0f}')} packets lost at "
               f"{span(caught['offered_pps'], pps)} pps, behind stops read as {span(caught['cpu_stop_ms'], one)} ms)")


def test_bmv2_validation_of_the_searches():
    old = superseded(BMV2, "superseded_search_trials.csv")
    assert (old["why"] != "").all() and old["disturbed"].all()
    says(BMV2, f"**The searches: {len(old)} attempts measured again.**")
    s = search_trials()
    b, bs = old[old["engine"] == "bmv2"], s[s["engine"] == "bmv2"]
    assert b["why"].str.fullmatch(r"steal \S+ > 2\.0%").all()
    bd = bs[bs["disturbed"]]
    assert bd["load"].nunique() == 1 and not bd["passed"].any()
    says(BMV2, f"bmv2's search repeated {len(b)} attempts, in {b['probe'].nunique()} of its {len(bs)} trials, every "
               f"one for steal above 2% ({span(b['steal'], pct(1))}%); {len(bd)} of its kept trials are still "
               f"`disturbed`, both at {pps(bd['load'].iloc[0])} pps, both failed")
    lx, ls = old[old["engine"] == "linux"], s[s["engine"] == "linux"]
    says(BMV2, f"Linux's search repeated {len(lx)} attempts, in {lx['probe'].nunique()} of its {len(ls)} trials")
    stop, lag = lx[lx["why"].str.contains("router CPU stopped")], lx[lx["why"].str.contains("generator fell behind")]
    steal = lx[lx["why"].str.contains("steal")]
    assert (lx["why"].str.contains("router CPU stopped") | lx["why"].str.contains("generator fell behind")
            | lx["why"].str.contains("steal")).all()
    says(BMV2, f"steal above 2% in {len(steal)}, a stop of the router's CPU in {len(stop)} (read as "
               f"{span(stop['cpu_stop_ms'], one)} ms, against a queue of {span(stop['queue_ms'], one)} ms), a lag of "
               f"the generator in {len(lag)} ({span(lag['gen_late_ms'], one)} ms)")
    lost = lx[lx["lost"] > 0]
    assert (lost["drops"].str.fullmatch(r"dut:CPU_BACKLOG=\d+")).all() and lx[lx["lost"] == 0]["drops"].isna().all()
    says(BMV2, "Those that lost packets lost them in the kernel's backlog (`dut CPU_BACKLOG`).")
    ld = ls[ls["disturbed"]]
    assert (ld["attempt"] == 4).all()
    says(BMV2, f"{len(ld)} of linux's kept trials are still `disturbed`, at "
               f"{' and '.join(pps(x) for x in sorted(ld['load'].unique()))} pps; {int(ld['passed'].sum())} of them "
               f"passed.")


def test_bmv2_where_the_loss_went():
    t, loss = trials(BMV2), loss_rows(BMV2)
    assert set(loss["reason"]) == {"d0.capture_drops", "egress_queue_drops"} and set(loss["source"]) == {"engine"}
    assert (t["lost_unexplained"] == 0).all() and loss["packets"].sum() == t["lost"].sum()
    cap, egr = loss[loss["reason"] == "d0.capture_drops"], loss[loss["reason"] == "egress_queue_drops"]
    says(BMV2, f"The sweep lost {pps(t['lost'].sum())} packets, and `lost_unexplained` is 0 in every trial: "
               f"{pps(cap['packets'].sum())} at the capture socket (`d0.capture_drops`), {pps(egr['packets'].sum())} "
               f"at the egress queue (`egress_queue_drops`). No kernel drop reason counted loss.")
    lossy = sorted(t[t["lost"] > 0]["offered_pps"].unique())
    assert sorted(cap["offered_pps"].unique()) == lossy
    says(BMV2, f"**At its capture socket, from {pps(lossy[0])} pps on.**")
    first_egr = egr["offered_pps"].min()
    low = t[t["offered_pps"] < first_egr]
    top_low = max(x for x in lossy if x < first_egr)
    assert low["lost"].sum() == cap[cap["offered_pps"] < first_egr]["packets"].sum()
    band = t[(t["offered_pps"] >= lossy[0]) & (t["offered_pps"] <= top_low)]
    hit = band[band["lost"] > 0]
    batch = int(datasets.read_experiments(D / BMV2).iloc[0]["generator"].split("sendmmsg batch ")[1].split(")")[0])
    whole = hit[hit["lost"] % batch == 0]
    says(BMV2, f"Every packet lost at {pps(lossy[0])}-{pps(top_low)} pps ({pps(low['lost'].sum())}) was counted there, "
               f"in {len(hit)} of those {len(band)} trials; {len(whole)} of the {len(hit)} lost "
               f"{', '.join(f'{x:.0f}' for x in sorted(whole['lost'].unique())[:-1])} or "
               f"{sorted(whole['lost'].unique())[-1]:.0f} packets, whole multiples of the generator's {batch}-packet "
               f"batch (`sendmmsg batch {batch}` in `experiments.csv`)")
    by = egr.groupby("offered_pps")["packets"].sum()
    assert list(by.index) == [x for x in lossy if x >= first_egr]
    top = by.index[-1]
    says(BMV2, f"**At its egress queue, from {pps(first_egr)} pps on.**",
         f"It dropped {', '.join(pps(x) for x in by.iloc[:-1])} and {pps(by.iloc[-1])} packets at "
         f"{', '.join(pps(x) for x in by.index[:-1])} and {pps(top)} pps: "
         f"{100 * by.iloc[-1] / t[t['offered_pps'] == top]['lost'].sum():.0f}% of the loss at {pps(top)} pps")
    # the queue's size, as the engine's account of bmv2's source gives it
    assert "queue is full (64 packets)" in " ".join(bmv2_engine.queue_reads.__doc__.split())
    says(BMV2, "egress queue (64 packets) will not take and counts it nowhere")


def test_bmv2_route_tables():
    e = datasets.read_experiments(D / "comparison")
    # bmv2's cells whose scenario has 900,000 routes (routes900k-multiflow-fw50 and ddos-drop50)
    big = e[(e["engine"] == "bmv2") & e["scenario"].str.contains("routes=900000,")]
    assert len(big) == 2
    n = [notes(x) for _, x in big.iterrows()]
    assert all(int(x["routes_loaded"]) == bmv2_engine.ROUTE_LIMIT and "routes_note" in x for x in n)
    says(BMV2, f"In the comparison's two 900k-route cells on bmv2 it loaded "
               f"{span([int(x['entries']) for x in n], lambda v: f'{v:,}')} entries in "
               f"{span([float(x['entries_load_s']) for x in n], one)} s (`datasets/comparison/experiments.csv`)",
         f"caps route tables at {bmv2_engine.ROUTE_LIMIT:,} entries",
         "`routes_loaded` and `routes_note` in the comparison's `experiments.csv` say so")


def test_bmv2_points_at_the_testbed_doc():
    doc = the_testbed_doc()
    for section in ("Where each lost packet went", "Disturbed trials are measured again",
                    "Other work on the machine spoils a run unseen"):
        assert section in doc, section
        says(BMV2, f"`docs/testbed.md`, \"{section}\"")


@pytest.fixture
def morning(tmp_path):
    """The files this data replaced, the morning run's (commit MORNING), in a folder of their own."""
    return previous_files(BMV2, tmp_path, files=("trials.csv", "experiments.csv", "search_results.csv",
                                                 "search_trials.csv", "drops.csv", "superseded_search_trials.csv"),
                          commit=MORNING)


def with_loss(t: pd.DataFrame) -> pd.DataFrame:
    return t.assign(loss=t["lost"] / t["tx"])


def test_bmv2_against_the_morning(morning):
    oe, ne = datasets.read_experiments(morning).iloc[0], datasets.read_experiments(D / BMV2).iloc[0]
    ot, nt = with_loss(datasets.read(morning).trials), trials(BMV2)
    o_r, n_r = datasets.read_searches([morning]).set_index("engine"), searches()
    # no superseded_trials.csv then: no sweep trial was measured again
    with pytest.raises(subprocess.CalledProcessError):
        committed(f"datasets/{BMV2}/superseded_trials.csv", MORNING)
    assert (ot["attempt"] == 1).all()
    start = pd.to_datetime(ot["started_at"])
    assert start.max() < pd.to_datetime(nt["started_at"]).min()
    says(BMV2, f"The data this replaces was measured the same day ({start.min():%Y-%m-%d}), the sweep "
               f"{when_range(ot['started_at'])} UTC and the searches {when_range(o_r['when'])} UTC, with code "
               f"{CODE[:7]} (in git at commit {MORNING[:7]})")
    assert oe["engine_version"] == ne["engine_version"] and oe["kernel"] == ne["kernel"]
    assert oe["command"].split(" --out ")[0] == ne["command"].split(" --out ")[0]
    assert sorted(ot["offered_pps"].unique()) == sorted(nt["offered_pps"].unique())
    says(BMV2, "Same bmv2 and p4c builds, same kernel, same commands.",
         "The sweep's loads are absolute, so both sweeps offered the same loads")
    oc, nc = o_r["generator_ceiling_pps"].iloc[0], n_r["generator_ceiling_pps"].iloc[0]
    assert oe["generator_ceiling_pps"] > ne["generator_ceiling_pps"] and oc > nc
    says(BMV2, f"({pps(oe['generator_ceiling_pps'])} → {pps(ne['generator_ceiling_pps'])} pps before the sweep, "
               f"{pps(oc)} → {pps(nc)} pps before the searches)")
    o_first = sorted(set(datasets.read_kind(morning, "search_trials.csv")["load"].round()))
    n_first = sorted(set(search_trials()["load"].round()))
    assert o_first != n_first
    # the table
    says(BMV2, f"| bmv2's PDR@0.5% (search) | {o_r.loc['bmv2', 'answer']} | {n_r.loc['bmv2', 'answer']} |",
         f"| Linux's PDR@0.5% (search) | {o_r.loc['linux', 'answer']} | {n_r.loc['linux', 'answer']} |")
    ox, nx = stats.assess(ot)[0], stats.assess(datasets.read(D / BMV2).trials)[0]
    says(BMV2, f"| sweep: verdict, PDR@0.5% | {ox.verdict.label}, {pps(ox.pdr.load)} pps | {nx.verdict.label}, "
               f"{pps(nx.pdr.load)} pps |")
    fo, fn = ot[ot["lost"] > 0]["offered_pps"].min(), nt[nt["lost"] > 0]["offered_pps"].min()
    says(BMV2, f"| sweep: first load with loss | {pps(fo)} pps | {pps(fn)} pps |",
         f"| sweep: trials that lost packets | {(ot['lost'] > 0).sum()} of {len(ot)} | {(nt['lost'] > 0).sum()} of "
         f"{len(nt)} |")
    od, nd = datasets.read_drops([morning]), datasets.read_drops([D / BMV2])
    oq = od[(od["reason"] == "egress_queue_drops") & (od["counted_as"] == "loss")]["packets"].sum()
    nq = nd[(nd["reason"] == "egress_queue_drops") & (nd["counted_as"] == "loss")]["packets"].sum()
    says(BMV2, f"| sweep: packets lost (at the egress queue) | {pps(ot['lost'].sum())} ({pps(oq)}) | "
               f"{pps(nt['lost'].sum())} ({pps(nq)}) |")
    om = ox.summary.set_index("offered_pps")["plr"]
    nm = nx.summary.set_index("offered_pps")["plr"]
    says(BMV2, f"| mean loss at 30,000 and 40,000 pps | {sig2(om.loc[30_000])}% and {sig2(om.loc[40_000])}% | "
               f"{sig2(nm.loc[30_000])}% and {sig2(nm.loc[40_000])}% |")
    orx = ot.assign(rx_pps=ot["rx"] / ot["duration_s"]).groupby("offered_pps")["rx_pps"].median()
    nrx = nt.groupby("offered_pps")["rx_pps"].median()
    says(BMV2, f"| median throughput at 40,000 pps | {pps(orx.loc[40_000])} pps | {pps(nrx.loc[40_000])} pps |")
    ocpu, ncpu = ot.groupby("offered_pps")["cpu_load"], nt.groupby("offered_pps")["cpu_load"]
    lo = min(nt["offered_pps"])

    def rng(g):
        return f"{100 * g.mean().loc[lo]:.0f}% ({span(g.get_group(lo), pct())}%)"

    says(BMV2, f"| CPU 1 busy at {pps(lo)} pps: mean (range) | {rng(ocpu)} | {rng(ncpu)} |",
         f"| CPU 1 busy at 30,000 and 40,000 pps (mean) | {100 * ocpu.mean().loc[30_000]:.0f}% and "
         f"{100 * ocpu.mean().loc[40_000]:.0f}% | {100 * ncpu.mean().loc[30_000]:.0f}% and "
         f"{100 * ncpu.mean().loc[40_000]:.0f}% |",
         f"| steal of a kept sweep trial: mean, largest | {100 * ot['steal'].mean():.2f}%, "
         f"{100 * ot['steal'].max():.1f}% | {100 * nt['steal'].mean():.2f}%, {100 * nt['steal'].max():.1f}% |",
         f"| sweep trials measured again | {(ot['attempt'] > 1).sum()} | {(nt['attempt'] > 1).sum()} |")
    # what the comparison says
    assert nt["lost"].sum() > ot["lost"].sum()
    either = [x for x in om.index if om.loc[x] > 0 or nm.loc[x] > 0]
    higher = [x for x in either if nm.loc[x] > om.loc[x]]
    lower = [x for x in either if x not in higher]
    assert lower == [15_000]
    says(BMV2, f"Of the {len(either)} loads where either run lost packets ({pps(either[0])}-{pps(either[-1])} pps), "
               f"the mean loss was higher now at {len(higher)}; at {pps(lower[0])} pps it was "
               f"{sig2(om.loc[lower[0]])}% then and {sig2(nm.loc[lower[0]])}% now")
    assert ox.pdr.load < nx.pdr.load and om.loc[lower[0]] > stats.PDR_FRACTION > nm.loc[lower[0]]
    at = ot[ot["offered_pps"] == lower[0]]["loss"]
    assert not ot["generator_limited"].astype(bool).any() and np.isclose(at.mean(), om.loc[lower[0]])
    rest = at.drop(at.idxmax())  # the morning's trials there but its worst
    assert rest.mean() < stats.PDR_FRACTION < at.mean()
    says(BMV2, f"the morning's mean there passed {100 * stats.PDR_FRACTION:g}% because of its worst trial "
               f"({sig2(at.max())}%; without it the mean is {sig2(rest.mean())}%)")
    omed = ot.groupby("offered_pps")["loss"].median()
    nmed = nt.groupby("offered_pps")["loss"].median()
    more = [x for x in omed.index if nmed.loc[x] > omed.loc[x]]
    assert more == [x for x in omed.index if x >= more[0]]
    says(BMV2, f"The median trial lost more now at every load from {pps(more[0])} pps (at {pps(lower[0])} pps "
               f"{sig2(nmed.loc[lower[0]])}% against {sig2(omed.loc[lower[0]])}%).")
    assert (ot["lost_unexplained"] == 0).all() and (nt["lost_unexplained"] == 0).all()
    says(BMV2, "Neither run left a lost packet unexplained.")
    # why: not shown; what differs
    says(BMV2, f"At {pps(lo)} pps CPU 1's mean was {100 * ocpu.mean().loc[lo]:.0f}% then and "
               f"{100 * ncpu.mean().loc[lo]:.0f}% now")
    band = [x for x in omed.index if x <= 7_500]
    ob, nb = ot[ot["offered_pps"].isin(band)], nt[nt["offered_pps"].isin(band)]
    busy = ob[ob["cpu_load"] > nb["cpu_load"].max()]
    assert (busy["lost"] == 0).all()
    says(BMV2, f"at {pps(band[0])}-{pps(band[-1])} pps {len(busy)} of the morning's {len(ob)} trials read more than "
               f"any of this run's ({100 * nb['cpu_load'].max():.0f}%), at most {100 * busy['cpu_load'].max():.0f}%, "
               f"and none of them lost a packet")
    assert (ncpu.mean().loc[[30_000, 40_000]] > ocpu.mean().loc[[30_000, 40_000]]).all()
    says(BMV2, f"the steal ({nt['steal'].mean() / ot['steal'].mean():.0f} times as high on average now), the "
               f"generator's ceiling (lower now) and the router's CPU at the highest loads (busier now at the same "
               f"loads)")
    assert n_r.loc["linux", "lower_pps"] > o_r.loc["linux", "lower_pps"]
    # now: the search ended passing the ceiling (no failing load, not the generator's doing); then: its own answer
    nb = datasets.search_pdr(n_r.reset_index()).set_index("engine")
    ob = datasets.search_pdr(o_r.reset_index()).set_index("engine")
    assert nb.loc["linux", "bound"] == "passed at the ceiling" and n_r.loc["linux", "lower_pps"] == nc
    assert ob.loc["linux", "bound"] == ""
    says(BMV2, f"Linux, in the same searches, did better alone: it passed at the generator's ceiling now (at least "
               f"{pps(n_r.loc['linux', 'lower_pps'])} pps), against {o_r.loc['linux', 'answer']} in the morning.")
