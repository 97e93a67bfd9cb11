"""Every number the README of click-course states, recomputed from its files (see readme_checks)."""

import hashlib
import re

import pandas as pd
import pytest

from routerlab import datasets, stats, testbed
from routerlab.validation import TrialValidation
from readme_checks import (the_testbed_doc, CODE, CODE_ALONE, D, MORNING, assessed, committed, loss_rows, pct, per_load,
                           pps, previous_files, says, sig2, span, superseded, when_range, why)


COURSE = "click-course"
COURSE_NAMES = {"your-router": "your router (exercise 2)", "click-reference": "Click reference router",
                "linux-kernel": "Linux kernel"}
CLICKS = ("your-router", "click-reference")
LINUX = "linux-kernel"


def course():
    t = datasets.read(D / COURSE).trials
    return t, {a.experiment: a for a in stats.assess(t)}


def ceiling() -> float:
    c = datasets.read_experiments(D / COURSE)["generator_ceiling_pps"].unique()
    assert len(c) == 1
    return float(c[0])


def kept(t: pd.DataFrame) -> pd.DataFrame:
    """The trials the statistics count: those the generator delivered, with their loss."""
    k = t[~t["generator_limited"].astype(bool)]
    return k.assign(loss=1 - k["rx"] / k["tx"])


def cause(text: str) -> str:
    """The validation's reasons in short: steal, stop, lag, joined by " and "."""
    return " and ".join(k for k, w in (("steal", "steal "), ("stop", "router CPU stopped"),
                                        ("lag", "generator fell behind")) if w in text)


def replaced() -> pd.DataFrame:
    """The attempts measured again, each with what disturbed it, in words and in short."""
    sup = superseded(COURSE, "superseded_trials.csv")
    return sup.assign(cause=sup["why"].map(cause))


def cell(row) -> str:
    """A table's loss cell: the mean loss with two significant digits, K where fewer than 5 trials."""
    return sig2(row["loss"]) + (f" (K={int(row['n'])})" if row["n"] < 5 else "")


def one(x) -> str:
    return f"{x:.1f}"


@pytest.fixture
def previous(tmp_path):
    """The morning's files this run replaced (commit MORNING), in a folder of their own."""
    return previous_files(COURSE, tmp_path, files=("trials.csv", "experiments.csv", "drops.csv",
                                                   "superseded_trials.csv"), commit=MORNING)


def test_course_where_when_how():
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
    cc = {x: e.loc[x, "notes"].split("click_config=")[1].split(";")[0] for x in CLICKS}
    says(COURSE, f"| `your-router` | userlevel Click running the course's solution of exercise 2 | `{cc['your-router']}`",
         f"| `click-reference` | userlevel Click running routerlab's reference router | `{cc['click-reference']}` with",
         f"a KVM guest (`{e['where'].iloc[0].split()[0]}`)")
    assert list(e["engine"]) == ["click", "click", "linux"] and e["where"].nunique() == 1
    assert (e["frame_size"] == 64).all() and e["scenario"].str.startswith("single-flow:").all()
    assert e["scenario"].str.contains("flows=single").all() and e["scenario"].str.contains("routes=1,").all()
    says(COURSE, f"(scenario `single-flow`: {e['frame_size'].iloc[0]}-byte frames, one UDP flow")
    if cfg.exists():  # a checkout; an installed package carries the dataset, not necessarily the exercises
        assert hashlib.sha256(cfg.read_bytes()).hexdigest().startswith(sha)
    at = pd.to_datetime(t["started_at"])
    assert at.dt.date.nunique() == 1
    says(COURSE, f"**When:** {at.min():%Y-%m-%d}, {when_range(t['started_at'])} UTC (first and last trial start)",
         *(f"`{x}` {when_range(g['started_at'])}" for x, g in t.groupby("experiment", sort=False)),
         f"Code: commit {CODE_ALONE[:7]}.")
    # the script, as it was at that commit: the datasets named, testbed-click first, then this one
    script = committed("scripts/remeasure-testbed.sh", CODE_ALONE)
    assert script.index("if want testbed-click; then") < script.index("if want click-course; then") \
        < script.index("if want testbed-bmv2; then")
    says(COURSE, "`scripts/remeasure-testbed.sh OUT testbed-click click-course testbed-bmv2 comparison` measured "
                 "this dataset second, after testbed-click, with the machine to itself")
    # the ceiling: measured once when the script started, given to each of the three commands
    assert script.count("measuring.generator_ceiling()") == 1
    assert script.index("measuring.generator_ceiling()") < script.index("if want testbed-click; then")
    block = script.split("if want click-course; then")[1].split("\nfi\n")[0]
    assert block.count('--ceiling "$C"') == 3 and block.count("$R measure") == 3
    c = ceiling()
    fracs = sorted(t["offered_pps"].unique() / c)
    says(COURSE, f"{t['offered_pps'].nunique()} loads (fractions {fracs[0]:.2f}-{fracs[-1]:.1f} of the generator "
                 f"ceiling measured once when the script started, {pps(c)} pps), "
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
        assert f"--ceiling {c:.0f}" in cmd
        assert " ".join(cmd.split()) in text, cmd
    says(COURSE, f"`trials.csv` | {len(t)} trials (3 routers × 9 loads × 5)")
    assert (t.groupby(["experiment", "offered_pps"]).size() == 5).all() and t["experiment"].nunique() == 3
    assert t["offered_pps"].nunique() == 9
    for col in ("cpu_stop_ms", "gen_late_ms", "queue_ms", "attempt", "disturbed", "lost", "lost_attributed",
                "lost_unexplained", "trace_missed", "drops"):
        assert col in t.columns
    says(COURSE, f"`superseded_trials.csv` | the {len(replaced())} attempts that trial validation measured again")


def test_course_code_commit_is_in_history():
    committed("README.md", CODE_ALONE)  # skips outside a checkout; fails when the commit is unknown there


def test_course_table():
    t, a = course()
    c = ceiling()
    for exp, name in COURSE_NAMES.items():
        x = a[exp]
        r = stats.records([x]).iloc[0]
        v = x.verdict
        s = x.summary.set_index("offered_pps")
        if exp in CLICKS:
            assert v.good and v.candidate_index == v.pdr_index + 1
            first, cand = s.index[v.pdr_index], s.index[v.candidate_index]
            entry = v.params.eta * v.params.entry_multiplier
            assert v.tir[v.candidate_index] < entry
            assert all(v.tir[i] < v.params.eta for i in range(v.candidate_index + 1, len(s)))
            assert r["pdr_status"] == "found" and r["pdr_pps"] == s.index[v.pdr_index - 1]
            pdr = f"{pps(r['pdr_pps'])} pps"
            reason = (f"{v.why}: loss first above 0.5% at {pps(first)} pps, candidate saturation {pps(cand)} pps with "
                      f"a TIR of {v.tir[v.candidate_index]:.2f} (below {entry:g}), every later TIR below "
                      f"{v.params.eta:g}")
        else:
            # the kernel: no load's mean loss passes 0.5%, and its highest load is the ceiling
            assert not v.good and v.pdr_index is None and r["pdr_status"] == "at_least_max"
            assert (s["plr"] <= v.params.pdr).all() and s.index.max() == c
            pdr = f"at least {pps(s.index.max())} pps (no load failed)"
            reason = (f"{v.why.split(' (to do')[0]}: no load's mean loss is above {100 * v.params.pdr:.1f}%, up to "
                      f"{pps(c)} pps, the generator's ceiling")
        says(COURSE, f"| {name} | {pdr} | {pps(r['ndr_pps'])} pps | **{v.label}** | {reason} |")


def test_course_per_load_table():
    t, _ = course()
    p = per_load(t)
    c = ceiling()
    runs = t.groupby(["experiment", "offered_pps"]).size().unique()
    assert len(runs) == 1
    says(COURSE, f"over the trials the generator delivered (K: how many, where fewer than {runs[0]}):")
    # "CPU 1" is the router's CPU, as the records place it; CPU 0 (the generator's) is named only there
    pin = datasets.read_experiments(D / COURSE)["pinning"].iloc[0]
    assert "router receive CPU 1;" in pin
    text = " ".join((D / COURSE / "README.md").read_text().split())
    assert set(re.findall(r"CPU (\d+)", text)) == {"0", "1"} and text.count("CPU 0") == pin.count("CPU 0")
    loads = sorted(t["offered_pps"].unique())
    for o in loads:
        cells = []
        for exp in COURSE_NAMES:
            r = p.loc[(exp, o)]
            cells += [cell(r), f"{100 * r['cpu']:.0f}%"]
        says(COURSE, f"| {o / c:.2g} ({pps(o)}) | " + " | ".join(cells) + " |")


def test_course_click_routers():
    t, a = course()
    p = per_load(t)
    yours, ref = a["your-router"], a["click-reference"]
    ys, rs = (x.summary.set_index("offered_pps") for x in (yours, ref))
    loads = list(ys.index)
    assert loads == list(rs.index)
    assert yours.pdr.load == ref.pdr.load and yours.ndr.load == ref.ndr.load
    assert yours.verdict.label == ref.verdict.label and yours.saturation_load == ref.saturation_load
    says(COURSE, f"They have the same PDR ({pps(yours.pdr.load)} pps), the same NDR ({pps(yours.ndr.load)} pps), "
                 f"the same verdict and the same saturation load ({pps(yours.saturation_load)} pps)")
    for x in (ys, rs):
        assert (x.loc[:yours.ndr.load, "plr"] == 0).all() and x.loc[loads[loads.index(yours.ndr.load) + 1], "plr"] > 0
    says(COURSE, f"Both lose nothing up to {pps(yours.ndr.load)} pps")
    # past the NDR, the student's router loses more at every load but the highest
    past = [o for o in loads if o > yours.ndr.load]
    more = [o for o in past if ys.loc[o, "plr"] > rs.loc[o, "plr"]]
    assert more == past[:-1] and ys.loc[past[-1], "plr"] < rs.loc[past[-1], "plr"]
    n1, n2, n3 = more[:3]
    says(COURSE, f"From {pps(more[0])} to {pps(more[-1])} pps the student's router loses more at every load: "
                 f"{sig2(ys.loc[n1, 'plr'])}% against {sig2(rs.loc[n1, 'plr'])}% at {pps(n1)} pps, "
                 f"{sig2(ys.loc[n2, 'plr'])}% against {sig2(rs.loc[n2, 'plr'])}% at {pps(n2)} pps, "
                 f"{100 * ys.loc[n3, 'plr']:.1f}% against {100 * rs.loc[n3, 'plr']:.1f}% at {pps(n3)} pps")
    top = past[-1]
    says(COURSE, f"At {pps(top)} pps it loses less ({sig2(ys.loc[top, 'plr'])}% against {sig2(rs.loc[top, 'plr'])}%), "
                 f"on {int(ys.loc[top, 'runs'])} trials against the reference router's {int(rs.loc[top, 'runs'])}")
    py, pr = ys["throughput_pps"].idxmax(), rs["throughput_pps"].idxmax()
    assert py == pr and ys.loc[py, "throughput_pps"] < rs.loc[pr, "throughput_pps"]
    says(COURSE, f"peaks lower: {pps(ys.loc[py, 'throughput_pps'])} pps against {pps(rs.loc[pr, 'throughput_pps'])} pps, "
                 f"both at {pps(py)} pps offered")
    cy, cr = p.loc["your-router", "cpu"], p.loc["click-reference", "cpu"]
    nd, nx = yours.ndr.load, yours.pdr.load
    assert cy[nd] > cr[nd] and cy[nx] > cr[nx]
    sat = yours.saturation_load
    says(COURSE, f"At the same load it keeps CPU 1 busier: {100 * cy[nd]:.0f}% against {100 * cr[nd]:.0f}% at "
                 f"{pps(nd)} pps, {100 * cy[nx]:.0f}% against {100 * cr[nx]:.0f}% at {pps(nx)} pps; from "
                 f"{pps(sat)} pps on, both read {span(pd.concat([cy[sat:], cr[sat:]]), pct())}%")
    # the student's PDR load: one lossy trial, kept disturbed, whose earlier attempts lost too
    k = kept(t)
    y = k[(k["experiment"] == "your-router") & (k["offered_pps"] == nx)]
    lossy = y[y["lost"] > 0]
    assert len(lossy) == 1 and lossy["disturbed"].all() and (why(lossy).map(cause) == "steal").all()
    w = lossy.iloc[0]
    sup = replaced()
    before = sup[(sup["experiment"] == "your-router") & (sup["offered_pps"] == nx) & (sup["trial"] == w["trial"])]
    assert len(before) == w["attempt"] - 1 and (before["lost"] > 0).all()
    # the mean passes because the others lost nothing; one more trial losing as much would fail it
    assert (y.drop(lossy.index)["lost"] == 0).all() and abs(ys.loc[nx, "plr"] - y["loss"].mean()) < 1e-12
    assert ys.loc[nx, "plr"] <= stats.PDR_FRACTION < 2 * w["loss"] / len(y)
    says(COURSE, f"**At the student's PDR load ({pps(nx)} pps), one trial of {len(y)} lost {sig2(w['loss'])}%** "
                 f"({pps(w['lost'])} packets). It was kept `disturbed`, with steal of {100 * w['steal']:.1f}%, after "
                 f"{w['attempt']} attempts; the {len(before)} attempts before it, set aside, lost "
                 f"{span(before['lost'], pps)} packets each. The other {len(y) - 1} trials lost nothing, so the mean, "
                 f"{sig2(ys.loc[nx, 'plr'])}%, stays below 0.5%; one more trial like that one would have put it above.")
    r = k[(k["experiment"] == "click-reference") & (k["offered_pps"] == nx) & (k["lost"] > 0)]
    assert len(r) == 1 and not r["disturbed"].any()
    says(COURSE, f"The reference router lost {pps(r['lost'].iloc[0])} packets there, in one trial not `disturbed`")
    # what decides the verdicts
    b = k[(k["experiment"] == "your-router") & (k["offered_pps"] == loads[6])]
    says(COURSE, f"(the student's router lost {span(b['loss'], pct())}% at {pps(loads[6])} pps alone), so with "
                 f"{t.groupby(['experiment', 'offered_pps']).size().max()} trials a load a verdict can turn on a few")
    assert rs.loc[py:, "throughput_pps"].is_monotonic_decreasing
    rise = [o for o in ys.loc[py:].index[1:] if ys.loc[o, "tir"] > 0]
    assert len(rise) == 1 and ys.loc[rise[0], "tir"] < yours.verdict.params.eta
    says(COURSE, f"alone it falls at every load after {pps(py)} pps, but for a rise of the student's router's at "
                 f"{pps(rise[0])} pps ({int(ys.loc[rise[0], 'runs'])} trials), with a TIR of "
                 f"{ys.loc[rise[0], 'tir']:.2f}, below {yours.verdict.params.eta:g}.")
    assert (t["engine_forwarded"] == t["rx"]).all()


def test_course_linux_kernel():
    t, a = course()
    p = per_load(t).loc[LINUX]
    lk = a[LINUX]
    c = ceiling()
    k = kept(t)
    k = k[k["experiment"] == LINUX]
    assert lk.ndr.load == p.index[(p["loss"] > 0).argmax() - 1] and (p.loc[:lk.ndr.load, "loss"] == 0).all()
    assert (p["loss"] < 0.005).all() and p.index.max() == c
    says(COURSE, f"**The Linux kernel** loses nothing up to {pps(lk.ndr.load)} pps, and its mean loss stays below 0.5% "
                 f"at every load up to the generator's ceiling")
    # a lower bound is set against no other answer as a ratio: it is only above theirs
    assert a["your-router"].pdr.load == a["click-reference"].pdr.load < c
    says(COURSE, f"so its PDR is only a lower bound (at least {pps(c)} pps), above the Click routers' "
                 f"{pps(a['your-router'].pdr.load)} pps.")
    # the notebook's column: a lower bound is set against nothing
    nb = (D.parent / "notebooks" / "click-measure.ipynb")
    if nb.exists():
        assert "none: Linux's PDR is a lower bound" in nb.read_text()
    assert stats.records([lk]).iloc[0]["pdr_status"] == "at_least_max"
    says(COURSE, "The notebook's `PDR / Linux's` column says \"none: Linux's PDR is a lower bound\"")
    lossy_loads = p[p["loss"] > 0]
    assert not lossy_loads["loss"].is_monotonic_increasing
    l = list(lossy_loads.index)
    says(COURSE, f"Its loss does not grow with the load: {sig2(p.loc[l[0], 'loss'])}% at {pps(l[0])} pps, "
                 f"{sig2(p.loc[l[1], 'loss'])}% at {pps(l[1])}, {sig2(p.loc[l[2], 'loss'])}% at {pps(l[2])} and "
                 f"{sig2(p.loc[l[3], 'loss'])}% at {pps(l[3])} pps")
    lossy = k[k["lost"] > 0]
    clean = lossy[~lossy["disturbed"]].sort_values("offered_pps")
    assert len(clean) == 2
    says(COURSE, f"{len(lossy)} of its trials lost packets, {lossy['disturbed'].sum()} of them kept `disturbed`. "
                 f"The other two lost {pps(clean['lost'].iloc[0])} packets at {pps(clean['offered_pps'].iloc[0])} pps "
                 f"and {pps(clean['lost'].iloc[1])} at {pps(clean['offered_pps'].iloc[1])} pps")
    w = clean.iloc[1]
    bound = w["offered_pps"] * w["gen_late_ms"] / 1e3
    assert why(clean).eq("").all() and w["gen_late_ms"] > w["queue_ms"] and bound < w["lost"]
    says(COURSE, f"the second's generator lag ({one(w['gen_late_ms'])} ms) accounts for at most {pps(bound)} of them")
    first = l[0]
    f = k[k["offered_pps"] == first]
    fd = f[f["disturbed"]]
    assert (f["lost"] > 0).all() and (why(fd).map(cause) == "steal and stop").all()
    says(COURSE, f"At {pps(first)} pps all {len(f)} trials lost packets, {len(fd)} of them kept `disturbed` with steal "
                 f"of {span(fd['steal'], pct(1))}% and a stop of the router's CPU of "
                 f"{span(fd['cpu_stop_ms'], one)} ms against a {one(fd['queue_ms'].iloc[0])}-ms queue")
    # CPU 1 under the kernel
    assert p["cpu"].loc[lk.ndr.load:].is_monotonic_increasing
    up = p.loc[p.index > lk.ndr.load, "cpu"]
    says(COURSE, f"**CPU 1 under the kernel** rises with the load: {span(p.loc[:lk.ndr.load, 'cpu'], pct())}% "
                 f"up to {pps(lk.ndr.load)} pps, then " + ", ".join(f"{100 * x:.0f}%" for x in up.iloc[:-1])
         + f" and {100 * up.iloc[-1]:.0f}% (the table)")
    says(COURSE, f"No kept trial read more than {100 * k['cpu_load'].max():.0f}%.")
    clicks = per_load(t)
    nd = a["your-router"].ndr.load
    assert (clicks.xs(nd, level="offered_pps")["loss"] == 0).all()
    times = [clicks.loc[(x, nd), "cpu"] / p.loc[nd, "cpu"] for x in CLICKS]
    says(COURSE, f"At {pps(nd)} pps, where no router lost a packet, the Click routers kept CPU 1 "
                 f"{span(times, lambda x: f'{x:.0f}')} times as busy as the kernel did")
    # `steal` is the hypervisor's share of all CPUs' time; `cpu_load` is CPU 1's share of everything but idle
    # and iowait, its own steal included (routerlab.testbed.cpu_usage here; test_course_against_the_morning checks
    # that it read them alike at both measured commits)
    before = {"cpu": [0] * 8, "cpu0": [0] * 8, "cpu1": [0] * 8}
    after = {"cpu": [0, 0, 0, 190, 0, 0, 0, 10], "cpu0": [0, 0, 0, 100, 0, 0, 0, 0], "cpu1": [0, 0, 0, 90, 0, 0, 0, 10]}
    assert testbed.cpu_usage(before, after, 1) == (0.1, 0.05)
    lo = p.index.min()
    says(COURSE, f"At the lowest load the kernel's {100 * p.loc[lo, 'cpu']:.0f}% came with a mean steal (both vCPUs) of "
                 f"{100 * p.loc[lo, 'steal']:.1f}%; `cpu_load` counts CPU 1's part of it as busy.")


def test_course_generator_limited():
    t, _ = course()
    lim = t[t["generator_limited"].astype(bool)]
    by = lim.groupby("experiment").size().reindex(list(COURSE_NAMES), fill_value=0)
    n = t.groupby("experiment").size()
    assert by[LINUX] == 0
    says(COURSE, f"{by['your-router']} of `your-router`'s {n['your-router']}, {by['click-reference']} of "
                 f"`click-reference`'s and none of `linux-kernel`'s, all at {pps(lim['offered_pps'].min())} pps and above",
         f"In them it sent {span(lim['sent_pps'], pps)} pps, and its worst lag was {span(lim['gen_late_ms'], one)} ms",
         f"Under the kernel it delivered all {n[LINUX]}, the ceiling's too")
    assert (t[(t["experiment"] == LINUX) & (t["offered_pps"] == ceiling())]["generator_limited"] == False).all()  # noqa


def test_course_where_the_loss_went():
    t, _ = course()
    by = loss_rows(COURSE).groupby(["experiment", "reason"])["packets"].sum()
    lost = t.groupby("experiment")["lost"].sum()
    assert (t["lost_unexplained"] == 0).all() and (by.groupby(level=0).sum() == lost).all()
    says(COURSE, f"(`drops.csv`, all {len(t)} trials, generator-limited ones included)")
    fd = {e: by[e][by[e].index.str.startswith("FromDevice@")].iloc[0] for e in CLICKS}
    q = {e: by[e, "out/Queue@1.drops"] for e in CLICKS}
    bl = {e: by[e, "CPU_BACKLOG"] for e in CLICKS}
    for e in CLICKS:
        assert set(by[e].index) == {by[e].index[by[e].index.str.startswith("FromDevice@")][0], "out/Queue@1.drops",
                                    "CPU_BACKLOG"}
    says(COURSE, f"the student's router {pps(fd['your-router'])} of {pps(lost['your-router'])}, the reference router "
                 f"{pps(fd['click-reference'])} of {pps(lost['click-reference'])}",
         f"backlog ({pps(bl['your-router'])} and {pps(bl['click-reference'])})",
         f"output `Queue` ({pps(q['your-router'])} and {pps(q['click-reference'])})",
         f"The kernel's {pps(lost[LINUX])} lost packets were all dropped at that backlog")
    assert list(by[LINUX].index) == ["CPU_BACKLOG"]
    tm = t.groupby("experiment")["trace_missed"].sum()
    assert (tm[list(CLICKS)] == 0).all() and (t["lost"] == t["tx"] - t["rx"]).all()
    says(COURSE, f"was {pps(tm[LINUX])} packets in the kernel's trials and none in Click's")


def test_course_trial_validation():
    t, _ = course()
    sup = replaced()
    assert (sup["why"] != "").all() and len(sup) == (t["attempt"] - 1).sum()
    n = sup.groupby("experiment").size().reindex(list(COURSE_NAMES), fill_value=0)
    tr = (t["attempt"] > 1).groupby(t["experiment"]).sum()
    assert n["click-reference"] == 0
    says(COURSE, f"row of `superseded_trials.csv`) measured {len(sup)} attempts again, in {tr.sum()} trials: "
                 f"{n['your-router']} of `your-router` ({tr['your-router']} trials), {n[LINUX]} of `linux-kernel` "
                 f"({tr[LINUX]} trials), none of `click-reference`")
    steal = pd.concat([t["steal"], sup["steal"]])
    says(COURSE, f"{(steal > 0.02).sum()} of the {len(steal)} attempts (kept or set aside) had steal above 2%")

    def loads(x):
        u = sorted(x.unique())
        return f"{pps(u[0])} pps" if len(u) == 1 else f"{pps(u[0])}-{pps(u[-1])} pps"

    g = {c: x for c, x in sup.groupby("cause")}
    words = {"steal": "steal above 2% ({})", "steal and stop": "steal and a stop of the router's CPU",
             "steal and lag": "steal and a lag of the generator",
             "steal and stop and lag": "steal, a stop of the router's CPU and a lag of the generator",
             "stop": "a stop of the router's CPU (read {} ms, queue {} ms)",
             "stop and lag": "a stop of the router's CPU and a lag of the generator"}
    assert set(g) == set(words)
    for c, x in g.items():
        w = words[c]
        if c == "steal":
            w = w.format(span(x["steal"], pct(1)) + "%")
        elif c == "stop":
            w = w.format(span(x["cpu_stop_ms"], one), span(x["queue_ms"], one))
        says(COURSE, f"| {w} | {len(x)} | {(x['lost'] > 0).sum()} | {loads(x['offered_pps'])} | "
                     f"{span(x['lost'], pps)} |")
    dist = t[t["disturbed"]]
    dn = dist.groupby("experiment").size()
    dc = why(dist).map(cause)
    assert set(dc) == {"steal", "steal and stop", "stop", "lag"}
    one_stop, one_lag = dist[dc == "stop"], dist[dc == "lag"]
    assert len(one_stop) == len(one_lag) == 1
    attempts = 1 + TrialValidation().max_repeats
    assert (dist["attempt"] == attempts).all()
    says(COURSE, f"Of the kept trials, {len(dist)} are still `disturbed` after the last attempt: {dn['your-router']} of "
                 f"`your-router` and {dn[LINUX]} of `linux-kernel`: {dc.str.startswith('steal').sum()} for steal above "
                 f"2% (with a stop of the router's CPU in {(dc == 'steal and stop').sum()}), one for a stop alone "
                 f"({pps(one_stop['offered_pps'].iloc[0])} pps) and one for a lag of the generator alone "
                 f"({pps(one_lag['offered_pps'].iloc[0])} pps). {(dist['lost'] == 0).sum()} of the {len(dist)} lost "
                 f"nothing.")


def test_course_against_the_morning(previous):
    old, oa, oc = assessed(previous)
    oe = datasets.read_experiments(previous)
    t, a = course()
    e = datasets.read_experiments(D / COURSE)
    c = ceiling()
    start = pd.to_datetime(old["started_at"])
    assert start.max() < pd.to_datetime(t["started_at"]).min()
    for col in ("kernel", "engine_version"):
        assert list(oe[col]) == list(e[col]), col
    says(COURSE, f"The data this run replaces was measured the same day ({start.min():%Y-%m-%d}), "
                 f"{when_range(old['started_at'])} UTC, with code {CODE[:7]} (in git at commit {MORNING[:7]}), on the "
                 f"same kernel and Click, with a generator ceiling of {pps(oc)} pps; this run's is {pps(c)} pps, "
                 f"{100 * (1 - c / oc):.0f}% lower.")

    def form(x):
        return {r.experiment: r.command.split(" --out ")[0].replace(f"--ceiling {r.generator_ceiling_pps:.0f}", "")
                for r in x.itertuples()}
    assert form(oe) == form(e)
    assert sorted((old["offered_pps"].unique() / oc).round(2)) == sorted((t["offered_pps"].unique() / c).round(2))
    says(COURSE, "The commands were the same, with the same fractions of each run's ceiling, so the loads differ in pps.")
    # the code that reads cpu_load and steal, the same at both commits
    def reader(commit):
        src = committed("lib/routerlab/testbed.py", commit)
        return src[src.index("def cpu_times"):src.index("@dataclass\nclass Testbed")]
    assert reader(CODE) == reader(CODE_ALONE) and "def cpu_usage" in reader(CODE_ALONE)
    says(COURSE, "The code changed between the two commits, but not how `cpu_load` and `steal` are read "
                 "(`routerlab.testbed.cpu_times` and `cpu_usage` are the same at both).")
    op, npl = per_load(old), per_load(t)
    lo_o, lo_n = old["offered_pps"].min(), t["offered_pps"].min()

    def first_loss(x, ex):
        k = kept(x)
        return k[(k["experiment"] == ex) & (k["lost"] > 0)]["offered_pps"].min()

    def pdr(x):
        r = stats.records([x]).iloc[0]
        return (f"at least {pps(x.summary['offered_pps'].max())} pps (no load failed)"
                if r["pdr_status"] == "at_least_max" else f"{pps(r['pdr_pps'])} pps")

    says(COURSE, f"| router | CPU 1 at the lowest load ({pps(lo_o)} → {pps(lo_n)} pps), then → now |")
    for exp, name in COURSE_NAMES.items():
        says(COURSE, f"| {name} | {100 * op.loc[(exp, lo_o), 'cpu']:.0f}% → {100 * npl.loc[(exp, lo_n), 'cpu']:.0f}% | "
                     f"{pps(first_loss(old, exp))} → {pps(first_loss(t, exp))} | {pdr(oa[exp])} → {pdr(a[exp])} | "
                     f"{pps(oa[exp].ndr.load)} pps → {pps(a[exp].ndr.load)} pps | {oa[exp].verdict.label} → "
                     f"{a[exp].verdict.label} |")
    # the kernel, load by load
    ol, nl = op.loc[LINUX], npl.loc[LINUX]
    ofr, nfr = sorted(old["offered_pps"].unique()), sorted(t["offered_pps"].unique())
    for o, n in zip(ofr, nfr):
        assert round(o / oc, 2) == round(n / c, 2)

        def val(x, load, f):
            return ("-" if load not in x.index else f(x.loc[load])
                    + (f" (K={int(x.loc[load, 'n'])})" if x.loc[load, "n"] < 5 else ""))
        says(COURSE, f"| {n / c:.2g} | {pps(o)} → {pps(n)} | {val(ol, o, lambda r: sig2(r['loss']))} → "
                     f"{val(nl, n, lambda r: sig2(r['loss']))} | {val(ol, o, lambda r: f'{100 * r.cpu:.0f}%')} → "
                     f"{val(nl, n, lambda r: f'{100 * r.cpu:.0f}%')} |")
    # CPU 1 at the lowest load, both runs
    cl_o = [op.loc[(x, lo_o), "cpu"] for x in CLICKS]
    cl_n = [npl.loc[(x, lo_n), "cpu"] for x in CLICKS]
    # "much the same": within 5 points of CPU 1 for each router
    assert all(abs(op.loc[(x, lo_o), "cpu"] - npl.loc[(x, lo_n), "cpu"]) < 0.05 for x in COURSE_NAMES)
    says(COURSE, f"read much the same in both runs ({span(cl_o, pct())}% under Click then, {span(cl_n, pct())}% now; "
                 f"the kernel {100 * ol.loc[lo_o, 'cpu']:.0f}% then, {100 * nl.loc[lo_n, 'cpu']:.0f}% now)")
    # the morning's kernel at 99-100%: a step in time; alone, at the nearest loads, far less
    busy = ol[(ol["cpu"] > 0.98)]
    assert list(busy.index) == ofr[4:7] and (busy["loss"] == 0).all()
    ko = old[(old["experiment"] == LINUX)]
    says(COURSE, f"**The kernel's {span(busy['cpu'], pct())}% busy CPU 1 at {pps(busy.index.min())}-"
                 f"{pps(busy.index.max())} pps does not hold alone.**")
    before = ko[ko["offered_pps"] == ofr[3]].sort_values("started_at")
    b4, last = before.iloc[:4], before.iloc[4]
    at = ko[ko["offered_pps"].isin(busy.index)].sort_values("started_at")
    assert (b4["cpu_load"] < 0.3).all() and 0.5 < last["cpu_load"] < 0.9 and (at["cpu_load"] > 0.97).all()
    hm = lambda x: f"{pd.Timestamp(x):%H:%M:%S}"  # noqa: E731
    says(COURSE, f"Then CPU 1 read {span(b4['cpu_load'], pct())}% in the first four trials at {pps(ofr[3])} pps "
                 f"({hm(b4['started_at'].iloc[0])}-{hm(b4['started_at'].iloc[-1])} UTC), "
                 f"{100 * last['cpu_load']:.0f}% in the fifth ({hm(last['started_at'])}) and "
                 f"{span(at['cpu_load'], pct())}% in every trial from {hm(at['started_at'].iloc[0])} to "
                 f"{hm(at['started_at'].iloc[-1])}, at {pps(busy.index.min())}-{pps(busy.index.max())} pps, with no loss")
    near = sorted({nfr[abs(pd.Series(nfr) - o).argmin()] for o in busy.index})
    kn = kept(t)
    kn = kn[(kn["experiment"] == LINUX) & kn["offered_pps"].isin(near)]
    says(COURSE, f"Alone, at the loads nearest to those ({pps(near[0])}-{pps(near[-1])} pps), it read "
                 f"{span(nl.loc[near, 'cpu'], pct())}% ({span(kn['cpu_load'], pct())}% in single trials)")
    # the kernel lost more around 200,000 pps alone
    f = kept(t)
    f = f[(f["experiment"] == LINUX) & (f["offered_pps"] == near[0])]
    assert (f["lost"] > 0).all() and (ol.loc[busy.index, "loss"] == 0).all()
    fd = f[f["disturbed"]]
    assert (why(fd).map(cause) == "steal and stop").all()
    says(COURSE, f"nothing at {pps(busy.index.min())}-{pps(busy.index.max())} pps then; alone, every trial at "
                 f"{pps(near[0])} pps lost packets (a mean of {sig2(nl.loc[near[0], 'loss'])}%), {len(fd)} of the "
                 f"{len(f)} kept `disturbed` for steal above 2% and a stop of the router's CPU")
    failed = ol[ol["loss"] > 0.005]
    assert len(failed) == 1 and (nl["loss"] < 0.005).all() and (nl["n"] == 5).all()
    undelivered = [o for o in ofr if o not in ol.index]
    assert undelivered == [ofr[-1]]
    says(COURSE, f"Its PDR rose because alone no load's mean loss passed {100 * a[LINUX].verdict.params.pdr:.1f}%: "
                 f"in the morning only the {failed.index[0] / oc:.1f} load did, on the {failed['n'].iloc[0]} trials "
                 f"the generator delivered there ({pps(failed.index[0])} pps); alone the generator delivered every "
                 f"trial, at up to {pps(c)} pps.")
    # the Click routers
    for x in CLICKS:
        assert round(first_loss(old, x) / oc, 2) == round(first_loss(t, x) / c, 2) == 0.3
    says(COURSE, f"first lost packets at the same share of the ceiling in both runs, "
                 f"{first_loss(old, 'your-router') / oc:.1f} ({pps(first_loss(old, 'your-router'))} pps then, "
                 f"{pps(first_loss(t, 'your-router'))} now)")
    tirs = []
    for x in CLICKS:
        v = oa[x].verdict
        i = next(i for i in range(v.candidate_index + 1, len(v.tir)) if not v.tir[i] < v.params.eta)
        tirs.append((oa[x].summary["offered_pps"].iloc[i], v.tir[i]))
        assert v.why == "throughput rises again after saturation"
    assert tirs[0][0] == tirs[1][0]
    says(COURSE, f"in the morning their throughput rose again at {pps(tirs[0][0])} pps (a TIR of {tirs[0][1]:.2f} and "
                 f"{tirs[1][1]:.2f}), which made both verdicts BAD")
    assert oa["click-reference"].pdr.load > oa["your-router"].pdr.load
    assert list(oa["your-router"].summary["offered_pps"]).index(oa["click-reference"].pdr.load) == \
        list(oa["your-router"].summary["offered_pps"]).index(oa["your-router"].pdr.load) + 1
    says(COURSE, "Then the reference router's PDR was one load step above the student's router's; now they are equal.")
    # steal, validation
    osup = pd.read_csv(previous / "superseded_trials.csv")
    sup = replaced()
    os_, ns_ = pd.concat([old["steal"], osup["steal"]]), pd.concat([t["steal"], sup["steal"]])
    says(COURSE, f"{(ns_ > 0.02).sum()} of the {len(ns_)} attempts had steal above 2% alone, {(os_ > 0.02).sum()} of the "
                 f"{len(os_)} in the morning. Trial validation measured {len(sup)} attempts again alone, {len(osup)} in "
                 f"the morning; {t['disturbed'].sum()} kept trials are still `disturbed` alone, "
                 f"{old['disturbed'].sum()} in the morning.")
    assert (old["lost_unexplained"] == 0).all() and (t["lost_unexplained"] == 0).all()
    od = loss_rows_of(previous)
    nd = loss_rows(COURSE).groupby(["experiment", "reason"])["packets"].sum()
    assert set(od.index) == set(nd.index)
    says(COURSE, "No lost packet was unexplained then or now, and the places that took them are the same")
    says(COURSE, f"So, as far as these files tell, forwarding at {pps(near[0])}-{pps(near[-1])} pps kept CPU 1 "
                 f"{span(nl.loc[near, 'cpu'], pct())}% busy under the kernel when it had the machine to itself, and the "
                 f"morning's {span(busy['cpu'], pct())}% at {pps(busy.index.min())}-{pps(busy.index.max())} pps was more "
                 f"than the kernel's own forwarding needs at such loads.")
    # the Click routers: lossless up to 0.2 of the ceiling in both runs (and CPU 1 at the lowest load, above)
    for x, ce in ((old, oc), (t, c)):
        k = kept(x)
        k = k[k["experiment"].isin(CLICKS)]
        assert (k[k["offered_pps"] <= 0.2 * ce + 1]["lost"] == 0).all()
        assert (k[(k["offered_pps"] > 0.2 * ce + 1) & (k["offered_pps"] < 0.31 * ce)]["lost"] > 0).any()
    says(COURSE, "CPU 1 at their lowest load is alike in both runs, and both runs lost nothing up to 0.2 of the ceiling.")


def loss_rows_of(folder) -> pd.Series:
    """Packets lost per experiment and counter, from a folder's drops.csv."""
    d = datasets.read_drops([folder])
    return d[d["counted_as"] == "loss"].groupby(["experiment", "reason"])["packets"].sum()


def test_course_points_at_the_other_work_on_the_machine():
    """The pointer at docs/testbed.md's section on other work on the machine (its text is another README's
    to keep; this checks only that the section the README names is there)."""
    doc = the_testbed_doc()
    for section in ("Other work on the machine spoils a run unseen", "Disturbed trials are measured again",
                    "Where each lost packet went"):
        assert f"**{section}.**" in doc or f"## {section}" in doc or section in doc, section
        says(COURSE, f"\"{section}\"")
