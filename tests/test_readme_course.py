"""Every number the README of click-course states, recomputed from its files (see readme_checks)."""

import io
import re

import pandas as pd
import pytest

from routerlab import datasets, stats
from routerlab.validation import TrialValidation
from readme_checks import (CODE, D, PREVIOUS, VETH, VETH_CODE, committed, loss_rows, pct, per_load, pps, says, sig2,
                           span, when_range)


COURSE = "click-course"
COURSE_NAMES = {"your-router": "your router (exercise 2)", "click-reference": "Click reference router",
                "linux-kernel": "Linux kernel"}


def course():
    t = datasets.read(D / COURSE).trials
    return t, {a.experiment: a for a in stats.assess(t)}


def superseded():
    """The attempts measured again, each with what disturbed it, in words and in short."""
    sup = pd.read_csv(D / COURSE / "superseded_trials.csv")
    why = [TrialValidation().why_disturbed(r) for r in sup.to_dict("records")]
    short = [" and ".join(k for k, w in (("steal", "steal "), ("stop", "router CPU stopped"),
                                          ("lag", "generator fell behind")) if w in y) for y in why]
    return sup.assign(why=why, cause=short)


def loss(t):
    return 1 - t["rx"] / t["tx"]


def pdr_text(a, r) -> str:
    return (f"at least {pps(a.summary['offered_pps'].max())} pps (no load failed)"
            if r["pdr_status"] == "at_least_max" else f"{pps(r['pdr_pps'])} pps")


def test_course_where_when_how():
    import hashlib

    t, _ = course()
    e = datasets.read_experiments(D / COURSE).set_index("experiment")
    for col in ("kernel", "cpu", "pinning", "generator_ceiling_pps"):
        assert e[col].nunique() == 1
    says(COURSE, f"kernel {e['kernel'].iloc[0]}, 2 vCPUs ({e['cpu'].iloc[0]})", f"`{e['pinning'].iloc[0]}`",
         f"Click is {e.loc['your-router', 'engine_version']}")
    cfg = D.parent / "routers" / "exercises" / "iprouter" / "solution" / "iprouter.click"
    sha = e.loc["your-router", "notes"].split("click_config_sha256=")[1].split(";")[0]
    says(COURSE, f"(sha256 prefix `{sha}`)")
    # the configuration each Click ran, and where, as the records name them
    cc = {x: e.loc[x, "notes"].split("click_config=")[1].split(";")[0] for x in ("your-router", "click-reference")}
    says(COURSE, f"| `your-router` | userlevel Click running the course's solution of exercise 2 | `{cc['your-router']}`",
         f"| `click-reference` | userlevel Click running routerlab's reference router | `{cc['click-reference']}` with",
         f"a KVM guest (`{e['where'].iloc[0].split()[0]}`)")
    assert list(e["engine"]) == ["click", "click", "linux"] and e["where"].nunique() == 1
    if cfg.exists():  # a checkout; an installed package carries the dataset, not necessarily the exercises
        assert hashlib.sha256(cfg.read_bytes()).hexdigest().startswith(sha)
    at = pd.to_datetime(t["started_at"])
    assert at.dt.date.nunique() == 1
    says(COURSE, f"{at.min():%Y-%m-%d}, {when_range(t['started_at'])} UTC (first and last trial start)",
         *(f"`{x}` {when_range(g['started_at'])}" for x, g in t.groupby("experiment", sort=False)),
         f"re-measurement of every testbed dataset on {at.min():%Y-%m-%d}", f"code: commit {CODE[:7]}")
    ceiling = e["generator_ceiling_pps"].iloc[0]
    fracs = sorted(t["offered_pps"].unique() / ceiling)
    says(COURSE, f"{t['offered_pps'].nunique()} loads (fractions {fracs[0]:.2f}-{fracs[-1]:.1f} of the generator "
                 f"ceiling measured at the start of the run, {pps(ceiling)} pps), "
                 f"{t.groupby(['experiment', 'offered_pps']).size().max()} "
                 f"trials of {t['duration_s'].max():.0f} s each")
    # the validation's settings, as each experiment's notes record them
    notes = [dict(kv.strip().split("=", 1) for kv in n.split(";") if "=" in kv) for n in e["notes"]]
    for key in ("router_queue_packets", "steal_threshold", "probe_period_ms", "max_repeats", "loss_attribution"):
        assert len({n[key] for n in notes}) == 1, key
    n = notes[0]
    assert n["loss_attribution"] == "on"
    says(COURSE, f"up to {n['max_repeats']} times, when its steal is above {100 * float(n['steal_threshold']):.0f}%",
         f"(the router's queue: {n['router_queue_packets']} packets; the stop probe's period: "
         f"{float(n['probe_period_ms']):.0f} ms;")
    text = " ".join((D / COURSE / "README.md").read_text().replace("\\\n", " ").split())
    for exp, row in e.iterrows():
        cmd = row["command"].replace(row["command"].split("--out ")[1], f"datasets/{COURSE}")
        assert f"--ceiling {ceiling:.0f}" in cmd
        assert " ".join(cmd.split()) in text, cmd
    says(COURSE, f"`trials.csv` | {len(t)} trials (3 routers × 9 loads × 5)")
    assert (t.groupby(["experiment", "offered_pps"]).size() == 5).all() and t["experiment"].nunique() == 3
    assert t["offered_pps"].nunique() == 9
    for c in ("cpu_stop_ms", "gen_late_ms", "queue_ms", "attempt", "disturbed", "lost", "lost_attributed",
              "lost_unexplained", "trace_missed", "drops"):
        assert c in t.columns
    says(COURSE, f"`superseded_trials.csv` | the {len(superseded())} attempts that trial validation measured again")


def test_course_table():
    t, a = course()
    for exp, name in COURSE_NAMES.items():
        x = a[exp]
        r = stats.records([x]).iloc[0]
        v = x.verdict
        s = x.summary.set_index("offered_pps")
        if v.candidate_index is not None:
            first, cand = s.index[v.pdr_index], s.index[v.candidate_index]
            assert not v.good and not v.still_rising
            # the first later load whose TIR is not below eta: the one the reason names
            i = next(i for i in range(v.candidate_index + 1, len(s)) if not v.tir[i] < v.params.eta)
            assert f"at {s.index[i]:.0f} pps is not below eta" in v.reason
            why = (f"{v.why}: loss first above 0.5% at {pps(first)} pps, candidate saturation {pps(cand)} pps, "
                   f"then a TIR of {v.tir[i]:.2f} at {pps(s.index[i])} pps, not below {v.params.eta:g}")
        else:
            # the kernel: loss passes 0.5% only at its highest delivered load, and the load
            # above it (the ceiling) had no trial the generator could deliver
            assert v.pdr_index == len(s) - 1 and not v.good
            top = t[t["experiment"] == exp]["offered_pps"].max()
            assert top not in s.index and t[(t["experiment"] == exp) & (t["offered_pps"] == top)][
                "generator_limited"].astype(bool).all()
            why = (f"{v.why.split(' (to do')[0]}: {sig2(s['plr'].iloc[-1])}% at {pps(s.index[-1])} pps; at "
                   f"{pps(top)} pps every trial was generator-limited, so no load after the crossing counts")
        says(COURSE, f"| {name} | {pdr_text(x, r)} | {pps(r['ndr_pps'])} pps | **{v.label}** | {why} |")


def test_course_click_routers():
    t, a = course()
    s = per_load(COURSE)
    yours, ref = a["your-router"], a["click-reference"]
    ys, rs = (x.summary.set_index("offered_pps") for x in (yours, ref))
    loads = list(ys.index)
    assert loads == list(rs.index)
    assert loads.index(ref.pdr.load) == loads.index(yours.pdr.load) + 1
    says(COURSE, f"The reference Click router's PDR is one load step ({pps(ref.pdr.load - yours.pdr.load)} pps) "
                 f"above the student's router's")
    for x in (yours, ref):
        assert (x.summary.set_index("offered_pps").loc[:yours.pdr.load, "plr"] == 0).all()
    says(COURSE, f"Both lose nothing up to {pps(yours.pdr.load)} pps")
    # past it: the student's router loses more up to a load, less from the next on
    more = [o for o in loads if o > yours.pdr.load and ys.loc[o, "plr"] > rs.loc[o, "plr"]]
    less = [o for o in loads if o > yours.pdr.load and ys.loc[o, "plr"] < rs.loc[o, "plr"]]
    assert more and less and max(more) < min(less) and len(more) + len(less) == len(loads) - loads.index(yours.pdr.load) - 1
    n1, n2 = more[:2]
    says(COURSE, f"Past it, up to {pps(max(more))} pps, the student's router loses more: {sig2(ys.loc[n1, 'plr'])}% at "
                 f"{pps(n1)} pps against the reference router's {sig2(rs.loc[n1, 'plr'])}%, and "
                 f"{sig2(ys.loc[n2, 'plr'])}% at {pps(n2)} pps against {sig2(rs.loc[n2, 'plr'])}%",
         f"From {pps(min(less))} pps on the student's router loses less ({span(ys.loc[less, 'plr'], pct())}% against "
         f"{span(rs.loc[less, 'plr'], pct())}%)")
    cy, cr = s.loc["your-router", "cpu"], s.loc["click-reference", "cpu"]
    says(COURSE, f"{100 * cy.loc[yours.pdr.load]:.0f}% busy under the student's router and "
                 f"{100 * cr.loc[yours.pdr.load]:.0f}% under the reference router at "
                 f"{pps(yours.pdr.load)} pps, {100 * cy.loc[n1]:.0f}% and {100 * cr.loc[n1]:.0f}% at {pps(n1)} pps",
         f"{span(pd.concat([cy.loc[n2:], cr.loc[n2:]]), pct())}% busy under both at every higher load")
    # the BAD verdicts: the throughput the reason's TIR comes from
    for x in (yours, ref):
        assert x.verdict.why == "throughput rises again after saturation"
    i, j = (next(i for i in range(v.candidate_index + 1, len(loads)) if not v.tir[i] < v.params.eta)
            for v in (yours.verdict, ref.verdict))
    assert i == j
    up, before = loads[i], loads[i - 1]
    for x in (ys, rs):
        assert x.loc[up, "throughput_pps"] > x.loc[before, "throughput_pps"] < x.loc[loads[i - 2], "throughput_pps"]
    says(COURSE, f"falls after saturation, then rises again at {pps(up)} pps",
         f"The student's router carries {pps(ys.loc[before, 'throughput_pps'])} pps at {pps(before)} pps and "
         f"{pps(ys.loc[up, 'throughput_pps'])} pps at {pps(up)} pps; the reference router "
         f"{pps(rs.loc[before, 'throughput_pps'])} pps and {pps(rs.loc[up, 'throughput_pps'])} pps")
    b = t[(t["experiment"] == "your-router") & (t["offered_pps"] == before) & ~t["generator_limited"].astype(bool)]
    says(COURSE, f"(the student's router lost {span(loss(b), pct())}% at {pps(before)} pps)")
    lim = t[t["generator_limited"].astype(bool)]
    by = lim.groupby("experiment").size()
    n = t.groupby("experiment").size()
    says(COURSE, f"{by['your-router']} of `your-router`'s {n['your-router']}, {by['click-reference']} of "
                 f"`click-reference`'s and {by['linux-kernel']} of `linux-kernel`'s, all at "
                 f"{pps(lim['offered_pps'].min())} pps and above")
    assert (t["engine_forwarded"] == t["rx"]).all()


def test_course_linux_kernel():
    t, a = course()
    s = per_load(COURSE).loc["linux-kernel"]
    lk = a["linux-kernel"]
    k = t[t["experiment"] == "linux-kernel"]
    ok = k[~k["generator_limited"].astype(bool)]
    top = ok["offered_pps"].max()
    lossy = ok[(ok["lost"] > 0) & (ok["offered_pps"] < top)]
    assert len(lossy) == 1 and lossy["disturbed"].all()
    one = lossy.iloc[0]
    assert lk.pdr.load == ok["offered_pps"][ok["offered_pps"] < top].max()
    says(COURSE, f"The kernel loses nothing up to {pps(lk.pdr.load)} pps, except {one['lost']} packets in one trial at "
                 f"{pps(one['offered_pps'])} pps")
    at_top = ok[ok["offered_pps"] == top].sort_values("lost")
    assert (at_top["drops"].str.fullmatch(r"dut:CPU_BACKLOG=\d+")).all()
    says(COURSE, f"Its PDR, {pps(lk.pdr.load)} pps, rests on the {len(at_top)} trials the generator delivered at "
                 f"{pps(top)} pps. They lost {' and '.join(sig2(x) + '%' for x in loss(at_top))}, "
                 f"all at the DUT's input backlog")
    # their lags: the packets offered during each, the most a lag can account for
    v = TrialValidation()
    assert all(v.why_disturbed(r) == "" for r in at_top.to_dict("records"))
    bound = at_top["offered_pps"] * at_top["gen_late_ms"] / 1e3
    assert (bound < at_top["lost"]).all() and (at_top["gen_late_ms"] > at_top["queue_ms"]).all()
    says(COURSE, f"Their generator lags ({' and '.join(f'{x:.1f}' for x in at_top['gen_late_ms'])} ms) account for at "
                 f"most {' and '.join(pps(x) for x in bound)} of the {' and '.join(pps(x) for x in at_top['lost'])} "
                 f"packets lost")
    r = stats.records(list(a.values())).set_index("experiment")
    assert r.loc["linux-kernel", "pdr_status"] == "found"
    ratio = (r["pdr_pps"] / r.loc["linux-kernel", "pdr_pps"]).round(2)
    says(COURSE, f"`PDR / Linux's` column is {ratio['your-router']:.2f} for the student's router and "
                 f"{ratio['click-reference']:.2f} for the reference router")
    assert lk.ndr.load == ok["offered_pps"][ok["offered_pps"] < one["offered_pps"]].max()
    says(COURSE, f"The kernel's NDR, {pps(lk.ndr.load)} pps, is set by that one trial at {pps(one['offered_pps'])} pps, "
                 f"which stayed `disturbed`")
    busy = s.loc[(s.index > lk.pdr.load / 2) & (s.index <= lk.pdr.load)]
    busy = busy[busy["cpu"] > 0.9]
    below = s.loc[s.index < busy.index.min()]
    assert (busy["loss"] == 0).all() and (below["cpu"] < 0.5).all()
    says(COURSE, f"The router's CPU reads {span(busy['cpu'], pct())}% busy under the kernel at "
                 f"{pps(busy.index.min())}-{pps(busy.index.max())} pps, where it loses nothing "
                 f"({100 * below['cpu'].iloc[-1]:.0f}% at {pps(below.index[-1])} pps)")
    ceiling = k["offered_pps"].max()
    c = k[k["offered_pps"] == ceiling]
    assert c["generator_limited"].astype(bool).all()
    says(COURSE, f"At {pps(ceiling)} pps, the ceiling, it delivered none of the kernel's {len(c)} trials; it sent "
                 f"{span(c['sent_pps'], pps)} pps in them")


def test_course_where_the_loss_went():
    t, _ = course()
    by = loss_rows(COURSE).groupby(["experiment", "reason"])["packets"].sum()
    lost = t.groupby("experiment")["lost"].sum()
    assert (t["lost_unexplained"] == 0).all() and (by.groupby(level=0).sum() == lost).all()
    says(COURSE, f"(`drops.csv`, all {len(t)} trials, generator-limited ones included)")
    clicks = ("your-router", "click-reference")
    fd = {e: by[e][by[e].index.str.startswith("FromDevice@")].iloc[0] for e in clicks}
    q = {e: by[e, "out/Queue@1.drops"] for e in clicks}
    bl = {e: by[e, "CPU_BACKLOG"] for e in clicks}
    for e in clicks:
        assert set(by[e].index) == {by[e].index[by[e].index.str.startswith("FromDevice@")][0], "out/Queue@1.drops",
                                    "CPU_BACKLOG"}
    says(COURSE, f"the student's router {pps(fd['your-router'])} of {pps(lost['your-router'])}, the reference router "
                 f"{pps(fd['click-reference'])} of {pps(lost['click-reference'])}",
         f"backlog ({pps(bl['your-router'])} and {pps(bl['click-reference'])})",
         f"output `Queue` ({pps(q['your-router'])} and {pps(q['click-reference'])})",
         f"The kernel's {pps(lost['linux-kernel'])} lost packets were all dropped at that backlog")
    assert list(by["linux-kernel"].index) == ["CPU_BACKLOG"]


def test_course_trial_validation():
    t, _ = course()
    sup = superseded()
    assert (sup["why"] != "").all() and len(sup) == (t["attempt"] - 1).sum()
    n = sup.groupby("experiment").size().reindex(list(COURSE_NAMES), fill_value=0)
    says(COURSE, f"row of `superseded_trials.csv`) measured {len(sup)} attempts again: {n['your-router']} of "
                 f"`your-router`, {n['linux-kernel']} of `linux-kernel`, none of `click-reference`")
    assert n["click-reference"] == 0

    def rng(x, fmt=pps):
        return span(x, fmt)

    def loads(x):
        u = sorted(x.unique())
        return pps(u[0]) if len(u) == 1 else f"{pps(u[0])} and {pps(u[1])}" if len(u) == 2 and len(x) == 2 \
            else f"{pps(u[0])}-{pps(u[-1])}"

    g = {c: x for c, x in sup.groupby("cause")}
    assert set(g) == {"steal", "steal and stop", "stop", "lag", "stop and lag"}
    st = g["steal"]
    assert (st["lost"] == 0).all()
    says(COURSE, f"| steal above 2% ({rng(st['steal'], pct(1))}%) | {len(st)} | {loads(st['offered_pps'])} pps | 0 |")
    x = g["steal and stop"]
    says(COURSE, f"| steal and a stop of the router's CPU | {len(x)} | {loads(x['offered_pps'])} pps | "
                 f"{rng(x['lost'])} |")
    x = g["stop"]
    says(COURSE, f"| a stop of the router's CPU (read {rng(x['cpu_stop_ms'], lambda v: f'{v:.1f}')} ms, queue "
                 f"{rng(x['queue_ms'], lambda v: f'{v:.1f}')} ms) | {len(x)} | {loads(x['offered_pps'])} pps | "
                 f"{rng(x['lost'])} |")
    x = g["lag"]
    says(COURSE, f"| a lag of the generator ({rng(x['gen_late_ms'], lambda v: f'{v:.1f}')} ms, queue "
                 f"{rng(x['queue_ms'], lambda v: f'{v:.1f}')} ms) | {len(x)} | {loads(x['offered_pps'])} pps | "
                 f"{rng(x['lost'])} |")
    x = g["stop and lag"]
    says(COURSE, f"| a stop of the router's CPU and a lag of the generator | {len(x)} | {loads(x['offered_pps'])} pps | "
                 f"{rng(x['lost'])} |")
    # the lossy attempts replaced, and what was kept of their trials
    keys = ["experiment", "offered_pps", "trial"]
    lossy = sup[sup["lost"] > 0]
    assert set(lossy["experiment"]) == {"linux-kernel"}
    kept = t.merge(lossy[keys].drop_duplicates(), on=keys)
    lim = kept["generator_limited"].astype(bool)
    assert (kept.loc[~lim, "lost"] == 0).all() and lim.sum() == 1
    says(COURSE, f"The {len(lossy)} lossy attempts replaced were all the kernel's, in {len(kept)} trials. The attempt "
                 f"kept of {(~lim).sum()} of them lost nothing; that of the eighth, at "
                 f"{pps(kept.loc[lim, 'offered_pps'].iloc[0])} "
                 f"pps, was generator-limited")
    assert len(kept) == 8
    dist = t[t["disturbed"]]
    assert set(dist["experiment"]) == {"linux-kernel"} and dist["offered_pps"].nunique() == 1
    attempts = 1 + TrialValidation().max_repeats
    assert (dist["attempt"] == attempts).all() and (dist["steal"] > 0.02).all() and len(dist) == 3
    says(COURSE, f"Of the kept trials, {len(dist)} are still `disturbed`: all the kernel's at "
                 f"{pps(dist['offered_pps'].iloc[0])} pps, after {attempts} attempts, with steal of "
                 f"{rng(dist['steal'], pct(1))}%")
    lost = dist[dist["lost"] > 0]
    assert len(lost) == 1 and (dist["lost"] == 0).sum() == len(dist) - 1
    w = lost.iloc[0]
    assert "router CPU stopped" in TrialValidation().why_disturbed(w.to_dict())
    says(COURSE, f"Two of them lost nothing. The third lost {w['lost']} packets, and the router's CPU also stopped "
                 f"{w['cpu_stop_ms']:.1f}-{w['cpu_stop_ms'] + 2:.1f} ms against a {w['queue_ms']:.1f}-ms queue")


def test_course_against_the_data_it_replaces():
    old = pd.read_csv(io.StringIO(committed(f"datasets/{COURSE}/trials.csv", PREVIOUS)))
    olde = pd.read_csv(io.StringIO(committed(f"datasets/{COURSE}/experiments.csv", PREVIOUS)))
    olds = pd.read_csv(io.StringIO(committed(f"datasets/{COURSE}/superseded_trials.csv", PREVIOUS)))
    t, a = course()
    e = datasets.read_experiments(D / COURSE)
    assert pd.to_datetime(old["started_at"]).max() < pd.to_datetime(t["started_at"]).min()
    says(COURSE, f"(commit {PREVIOUS[:7]}) was measured on {pd.to_datetime(old['started_at']).min():%Y-%m-%d}, "
                 f"{when_range(old['started_at'])} UTC, with code {VETH_CODE[:7]}, a generator ceiling of "
                 f"{pps(olde['generator_ceiling_pps'].iloc[0])} pps and kernel {olde['kernel'].iloc[0]}")
    assert olde["kernel"].iloc[0] != e["kernel"].iloc[0]
    c0, c1 = olde["generator_ceiling_pps"].iloc[0], e["generator_ceiling_pps"].iloc[0]
    assert c0 != c1
    assert (sorted((old["offered_pps"].unique() / c0).round(2)) == sorted((t["offered_pps"].unique() / c1).round(2)))
    says(COURSE, "The loads are the same fractions of the ceiling, so they differ in pps.")
    oa = {x.experiment: x for x in stats.assess(old)}
    for exp, name in COURSE_NAMES.items():
        r0, r1 = stats.records([oa[exp]]).iloc[0], stats.records([a[exp]]).iloc[0]
        says(COURSE, f"| {name} | {pdr_text(oa[exp], r0)} | {pdr_text(a[exp], r1)} | {oa[exp].verdict.label} | "
                     f"{a[exp].verdict.label} |")
    oy, orf = (oa[x].summary.set_index("offered_pps") for x in ("your-router", "click-reference"))
    assert oa["your-router"].pdr.load == oa["click-reference"].pdr.load
    nxt = oy.index[oy.index > oa["your-router"].pdr.load].min()
    assert oy.loc[nxt, "plr"] < orf.loc[nxt, "plr"]
    says(COURSE, f"({sig2(oy.loc[nxt, 'plr'])}% against {sig2(orf.loc[nxt, 'plr'])}% at {pps(nxt)} pps)")
    ys, rs = (a[x].summary.set_index("offered_pps") for x in ("your-router", "click-reference"))
    past = ys.index[ys.index > a["your-router"].pdr.load]
    less = [o for o in past if rs.loc[o, "plr"] < ys.loc[o, "plr"]]
    assert less == [o for o in past if o <= max(less)] and all(rs.loc[o, "plr"] > ys.loc[o, "plr"] for o in past
                                                                if o > max(less))
    says(COURSE, f"it loses less than the student's router at {pps(min(less))}-{pps(max(less))} pps, and more above")
    ol, nl = oa["linux-kernel"].summary, a["linux-kernel"].summary
    ok = old[(old["experiment"] == "linux-kernel") & ~old["generator_limited"].astype(bool)]
    says(COURSE, f"The kernel lost {sig2(ol['plr'].iloc[-1])}% at {pps(ol['offered_pps'].iloc[-1])} pps then, and "
                 f"{sig2(nl['plr'].iloc[-1])}% at {pps(nl['offered_pps'].iloc[-1])} pps now "
                 f"({int(nl['runs'].iloc[-1])} trials)")
    assert (ok["offered_pps"] == ol["offered_pps"].iloc[-1]).sum() == 5
    says(COURSE, "then the generator delivered all 5 trials there")
    # the kernel's CPU at the first load of each run near 200,000 pps
    ok_old = old[~old["generator_limited"].astype(bool) & (old["experiment"] == "linux-kernel")]
    oc = ok_old.groupby("offered_pps")["cpu_load"].mean()
    nc = per_load(COURSE).loc["linux-kernel", "cpu"]
    o, n = (abs(x.index - 200_000).argmin() for x in (oc, nc))
    says(COURSE, f"Its CPU read {100 * oc.iloc[o]:.0f}% busy at {pps(oc.index[o])} pps then, "
                 f"{100 * nc.iloc[n]:.0f}% at {pps(nc.index[n])} pps now.")
    assert (olds["steal"] > 0.02).all()
    says(COURSE, f"Then {len(olds)} attempts were measured again, all for steal; now {len(superseded())}.")


def test_course_points_at_the_other_work_on_the_machine():
    """The pointer at docs/testbed.md's account of the other work in this run, which began after this dataset, and
    the kernel measured alone that evening at the load nearest to where it reads 99-100% busy here."""
    doc_path = D.parent / "docs" / "testbed.md"
    if not doc_path.exists():
        pytest.skip("docs/ is not installed with the package: only a checkout has it")
    doc = " ".join(doc_path.read_text().split())
    section = "Other work on the machine spoils a run unseen"
    assert f"- **{section}.** " in doc
    m = re.search(r"In the re-measurement of (\d{4}-\d\d-\d\d) \(\d\d:\d\d-\d\d:\d\d UTC\), CPU 1 read [\d-]+% busy "
                  r"at the lowest loads of most sweeps from about (\d\d:\d\d)", doc)
    assert m, "docs/testbed.md no longer says when CPU 1 was busy"
    t, _ = course()
    at = pd.to_datetime(t["started_at"])
    assert f"{at.min():%Y-%m-%d}" == m[1] and f"{at.max():%H:%M}" < m[2]  # "later in the same run"
    says(COURSE, f"`docs/testbed.md` (\"{section}\") shows kept the router's CPU busy later in the same run, from "
                 f"about {m[2]}")
    k = per_load(COURSE).loc["linux-kernel"]
    busy = k[(k["cpu"] > 0.9) & (k["loss"] == 0)]
    v = datasets.read(D / VETH).trials
    v = v[(v["experiment"] == "linux-single-flow") & ~v["generator_limited"].astype(bool)]
    assert pd.to_datetime(v["started_at"]).min() > at.max() + pd.Timedelta(hours=6)  # "that evening", alone
    cpu = v.groupby("offered_pps")["cpu_load"].mean()
    near = cpu.index[abs(cpu.index - busy.index.min()).argmin()]
    phrase = f"read CPU 1 {100 * cpu[near]:.0f}% busy at {pps(near)} pps"
    assert phrase in doc
    says(COURSE, f"Measured alone on the machine that evening, the kernel's sweep in `datasets/testbed-veth` {phrase} "
                 "(the same section)")
