"""Every number the README of testbed-bmv2 states, recomputed from its files (see readme_checks)."""

import io

import pandas as pd
import pytest

from routerlab import datasets, stats
from routerlab.engines import bmv2 as bmv2_engine
from routerlab.validation import TrialValidation
from readme_checks import (BMV2, CODE, D, PREVIOUS, VETH, VETH_CODE, VETH_SHARED, check_superseded_searches, committed,
                           loss_rows, pct, per_load, pps, previous_files, says, sig2, span, trials, when_range)


def notes(e) -> dict:
    """An experiment's ``notes`` as a dict of text values."""
    return dict(kv.split("=", 1) for kv in e["notes"].split("; "))


def superseded() -> pd.DataFrame:
    """The replaced search attempts, each with the validation's reason. Read with pandas:
    ``datasets.read_kind`` expects the columns of search_trials.csv (kind, method, load),
    while the file has those of trials.csv and ``probe``."""
    s = pd.read_csv(D / BMV2 / "superseded_search_trials.csv")
    return s.assign(why=[TrialValidation().why_disturbed(r) for r in s.to_dict("records")])


def search_trials() -> pd.DataFrame:
    """search_trials.csv with each row's index within its experiment (the ``probe`` of its
    superseded attempts) and the flags as booleans."""
    s = datasets.read_kind(D / BMV2, "search_trials.csv")
    return s.assign(probe=s.groupby("experiment").cumcount(),
                    **{c: s[c].astype(str).str.lower() == "true" for c in ("passed", "generator_limited", "disturbed")})


def test_bmv2_where_when_how():
    e = datasets.read_experiments(D / BMV2).iloc[0]
    t = trials(BMV2)
    r = datasets.read_searches([D / BMV2])
    says(BMV2, f"kernel {e['kernel']}) with 2 vCPUs ({e['cpu']})", f"`{e['pinning']}`",
         f"(`experiments.csv`: {e['engine_version']})")
    day = pd.to_datetime(t["started_at"]).min().strftime("%Y-%m-%d")
    assert pd.to_datetime(r["when"]).dt.strftime("%Y-%m-%d").eq(day).all()
    says(BMV2, f"**When:** {day}: the sweep {when_range(t['started_at'])} UTC, "
               f"the searches {when_range(r['when'])} UTC",
         f"code: commit {CODE[:7]}")
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
    says(BMV2, f"{pps(e['generator_ceiling_pps'])} pps before the sweep",
         f"{pps(r['generator_ceiling_pps'].iloc[0])} pps before the searches")
    loads = ",".join(f"{x:.0f}" for x in sorted(t["offered_pps"].unique()))
    assert e["command"].startswith(f"routerlab measure --engine bmv2 --scenario single-flow --loads {loads} "
                                   "--runs 10 --duration 1 --out ")
    says(BMV2, f"--loads {loads}")


def test_bmv2_files():
    t = trials(BMV2)
    runs = t.groupby("offered_pps").size()
    assert (runs == 10).all()
    says(BMV2, f"{len(t)} sweep trials ({len(runs)} loads × K = {runs.iloc[0]})")
    assert (t["engine_forwarded"] == t["rx"]).all()
    assert {"cpu_stop_ms", "gen_late_ms", "queue_ms", "attempt", "disturbed"} <= set(t.columns)
    assert datasets.read_drops([D / BMV2])["reason"].isin(["d0.capture_drops", "egress_queue_drops"]).any()
    e = datasets.read_experiments(D / BMV2).iloc[0]
    assert {"p4_program", "entries", "entries_load_s", "steal_threshold", "probe_period_ms"} <= set(notes(e))
    # the searches: 3 final trials of 1 s; the answer's last three passed on their median, the next load's failed
    r = datasets.read_searches([D / BMV2])
    s = search_trials()
    final = s[s["phase"] == "final"]
    assert (r["final_trials"] == 3).all() and (final["duration"] == 1).all()
    says(BMV2, "(3 final trials of 1 s, a load passes on its median trial)")
    for _, x in r.iterrows():
        f = final[final["experiment"] == x["experiment"]]
        assert f[f["load"] == x["lower_pps"]].tail(3)["passed"].sum() >= 2
        assert f[f["load"] == x["upper_pps"]].tail(3)["passed"].sum() < 2
    # superseded search attempts: probe is the row in search_trials.csv, within its experiment
    old = superseded()
    says(BMV2, f"the {len(old)} search attempts that were measured again")
    check_superseded_searches(s, old)
    assert not (D / BMV2 / "superseded_trials.csv").exists() and (t["attempt"] == 1).all()
    says(BMV2, "There is no `superseded_trials.csv`: no sweep trial was measured again.")


def test_bmv2_searches():
    r = datasets.read_searches([D / BMV2]).set_index("engine")
    assert not r["generator_bound"].any()
    says(BMV2, f"| linux | {r.loc['linux', 'answer']} |", f"| bmv2 (router.p4) | {r.loc['bmv2', 'answer']} |",
         f"a generator ceiling of {r['generator_ceiling_pps'].iloc[0]:,.0f} pps")
    s = search_trials()
    lim = s[s["generator_limited"]]
    n = lim.groupby("engine").size()
    assert ((lim["load"] - r["generator_ceiling_pps"].iloc[0]).abs() < 1).all()
    assert lim["load"].min() > r["lower_pps"].max() and lim["load"].min() > r["upper_pps"].max()
    assert r["limited_by_generator"].astype(str).str.lower().eq("true").all()
    says(BMV2, f"its limited trials ({n['linux']} of linux's, {n['bmv2']} of bmv2's) were at the ceiling, above both "
               f"answers (`search_results.csv` marks both searches `limited_by_generator` for them)")
    says(BMV2, f"carries {100 * r.loc['bmv2', 'lower_pps'] / r.loc['linux', 'lower_pps']:.1f}% of what Linux carries")


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
    s = per_load(BMV2).loc["bmv2-single-flow"]
    assert not t["limited"].any()
    says(BMV2, "The sweep (no trial was generator-limited):")
    says(BMV2, bmv2_row(s, 1_000, 7_500), bmv2_row(s, 10_000, 10_000), bmv2_row(s, 15_000, 20_000),
         bmv2_row(s, 30_000, 30_000), bmv2_row(s, 40_000, 40_000))
    assert (s.loc[:7_500, "worst"] == 0).all() and (s.loc[10_000:, "loss"] > 0).all()
    x = stats.assess(datasets.read(D / BMV2).trials)[0]
    v = x.verdict
    summ = x.summary.set_index("offered_pps")
    first = summ[summ["plr"] > stats.PDR_FRACTION].index[0]
    o = list(summ.index)
    assert x.saturation_load is None and v.still_rising and o[v.candidate_index - 1] == first
    says(BMV2, f"Its verdict is **{v.label}** ({v.why})",
         f"on this grid its PDR@0.5% is {pps(x.pdr.load)} pps and loss first passes 0.5% at {pps(first)} pps, but from "
         f"{pps(first)} to {pps(o[v.candidate_index])} pps the throughput rose by {v.tir[v.candidate_index]:.3f} pps "
         f"per pps of added load (TIR), not below the {v.params.eta * v.params.entry_multiplier:g} that saturation "
         f"needs")
    # the mean is not monotone; single trials make it at 15,000 and 20,000 pps; the median trial
    assert s.loc[20_000, "loss"] > s.loc[30_000, "loss"]
    says(BMV2, f"The mean loss does not rise steadily with the load: {sig2(s.loc[20_000, 'loss'])}% at 20,000 pps, "
               f"{sig2(s.loc[30_000, 'loss'])}% at 30,000 pps",
         f"At 15,000 and 20,000 pps two trials make most of it (the worst lost {sig2(s.loc[15_000, 'worst'])}% and "
         f"{sig2(s.loc[20_000, 'worst'])}%)")
    for load in (15_000, 20_000):
        top2 = t[t["offered_pps"] == load]["loss"].nlargest(2).sum()
        assert top2 > 0.5 * t[t["offered_pps"] == load]["loss"].sum()
    med = t[~t["limited"]].groupby("offered_pps")["loss"].median()
    assert (med.loc[[15_000, 20_000]] < stats.PDR_FRACTION).all()
    assert (s.loc[[15_000, 20_000], "loss"] > stats.PDR_FRACTION).all()
    says(BMV2, f"The median trial lost {span(med.loc[15_000:30_000], sig2)}% at 15,000-30,000 pps and "
               f"{sig2(med.loc[40_000])}% at 40,000 pps")
    assert (med.loc[:30_000] <= stats.PDR_FRACTION).all() and med.loc[40_000] > stats.PDR_FRACTION
    r = datasets.read_searches([D / BMV2]).set_index("engine")
    assert 30_000 > r.loc["bmv2", "lower_pps"] > 20_000
    says(BMV2, f"the sweep passes every load up to 30,000 pps and fails at 40,000 pps; the search, which passes a "
               f"load on its median trial, found {r.loc['bmv2', 'answer']}")


def test_bmv2_validation_of_the_sweep():
    t = trials(BMV2)
    e = datasets.read_experiments(D / BMV2).iloc[0]
    v = TrialValidation()
    assert (t["attempt"] == 1).all() and not t["disturbed"].astype(bool).any()
    assert not any(v.disturbed(r) for r in t.to_dict("records"))
    says(BMV2, f"The largest steal was {100 * t['steal'].max():.1f}%", "No kept trial is `disturbed`.")
    lossy = t[t["lost"] > 0]
    q = int(notes(e)["router_queue_packets"])
    assert ((lossy["queue_ms"] - q / lossy["offered_pps"] * 1e3).abs() < 1e-3).all()
    assert lossy["cpu_stop_ms"].max() + v.probe_period_ms < lossy["queue_ms"].min()
    assert lossy["gen_late_ms"].max() < lossy["queue_ms"].min()
    says(BMV2, f"bmv2's queue is taken as the kernel's {q}-packet backlog, which lasts "
               f"{span(lossy['queue_ms'], lambda x: f'{x:.0f}')} ms at the loads that lost packets "
               f"({pps(lossy['offered_pps'].min())}-{pps(lossy['offered_pps'].max())} pps)",
         f"(at most {lossy['cpu_stop_ms'].max():.1f} ms and {lossy['gen_late_ms'].max():.1f} ms)")
    d = datasets.read_drops([D / BMV2])
    assert not d["reason"].str.contains("BACKLOG").any()
    says(BMV2, "bmv2 does not lose packets in that backlog but at its capture socket and egress queue")
    # with no queue at all
    caught = lossy[[v.disturbed({**r, "queue_ms": 0.0}) for r in lossy.to_dict("records")]]
    assert len(caught) == 1 and caught["gen_late_ms"].iloc[0] <= v.probe_period_ms
    c = caught.iloc[0]
    says(BMV2, f"Had the queue counted as nothing, {len(caught)} of the {len(lossy)} lossy trials would have been "
               f"measured again ({c['lost']:.0f} packets lost at {pps(c['offered_pps'])} pps, behind a stop read as "
               f"{c['cpu_stop_ms']:.1f} ms)")


def test_bmv2_validation_of_the_searches():
    old = superseded()
    assert (old["why"] != "").all() and old["disturbed"].all()
    per = old.groupby("engine").size()
    says(BMV2, f"The searches: {len(old)} attempts measured again.")
    b = old[old["engine"] == "bmv2"]
    assert len(b) == 1 and b["why"].str.fullmatch(r"steal \S+ > 2\.0%").all()
    s = search_trials()
    bk = s[(s["experiment"] == b["experiment"].iloc[0]) & (s["probe"] == b["probe"].iloc[0])].iloc[0]
    assert not bk["passed"] and not bk["disturbed"] and b["lost"].iloc[0] > 0
    says(BMV2, f"bmv2's search repeated {per['bmv2']} attempt: a {b['duration_s'].iloc[0]:g}-s trial at "
               f"{pps(b['offered_pps'].iloc[0])} pps with steal of {100 * b['steal'].iloc[0]:.1f}%; it failed again "
               f"when repeated")
    lx = old[old["engine"] == "linux"]
    ls = s[s["engine"] == "linux"]
    says(BMV2, f"Linux's search repeated {per['linux']} attempts, in {lx['probe'].nunique()} of its {len(ls)} trials")
    stop, lag = lx[lx["why"].str.contains("router CPU stopped")], lx[lx["why"].str.contains("generator fell behind")]
    steal = lx[lx["why"].str.contains("steal")]
    assert (lx["why"].str.contains("router CPU stopped") | lx["why"].str.contains("generator fell behind")
            | lx["why"].str.contains("steal")).all()
    one = lambda x: f"{x:.1f}"  # noqa: E731
    says(BMV2, f"steal above 2% in {len(steal)}, a stop of the router's CPU in {len(stop)} (read as "
               f"{span(stop['cpu_stop_ms'], one)} ms, against a queue of {span(stop['queue_ms'], one)} ms), a lag of "
               f"the generator in {len(lag)} ({span(lag['gen_late_ms'], one)} ms)")
    assert (lx["drops"].str.fullmatch(r"dut:CPU_BACKLOG=\d+")).all()
    says(BMV2, f"All {len(lx)} lost their packets in the kernel's backlog (`dut CPU_BACKLOG`).")
    # kept, and still disturbed
    dist = s[s["disturbed"]]
    assert set(dist["engine"]) == {"linux"} and (dist["attempt"] == 4).all()
    says(BMV2, f"{len(dist)} of linux's kept search trials, at "
               f"{', '.join(pps(x) for x in dist['load'].iloc[:-1])} and {pps(dist['load'].iloc[-1])} pps; "
               f"{int(dist['passed'].sum())} of them passed")
    r = datasets.read_searches([D / BMV2]).set_index("engine")
    ans = ls[(ls["phase"] == "final") & (ls["load"] == r.loc["linux", "lower_pps"])].tail(3)
    assert ans["passed"].all() and (ans["attempt"] > 1).sum() == 1
    rep = lx[lx["probe"] == ans[ans["attempt"] > 1]["probe"].iloc[0]]
    assert len(rep) == 1 and rep["why"].str.startswith("generator fell behind").all()
    says(BMV2, f"Linux's answer, {r.loc['linux', 'answer']}, passed after one of its {len(ans)} final trials was "
               f"measured again (a {rep['gen_late_ms'].iloc[0]:.1f}-ms lag of the generator, "
               f"{pps(rep['lost'].iloc[0])} packets lost)")


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
    assert low["lost"].sum() == cap[cap["offered_pps"] < first_egr]["packets"].sum()
    says(BMV2, f"Every packet lost at {pps(lossy[0])}-{pps(max(x for x in lossy if x < first_egr))} pps "
               f"({pps(low['lost'].sum())}) was counted there")
    by = egr.groupby("offered_pps")["packets"].sum()
    assert list(by.index) == [x for x in lossy if x >= first_egr]
    top = by.index[-1]
    says(BMV2, f"**At its egress queue, from {pps(first_egr)} pps on.**",
         f"It dropped {', '.join(pps(x) for x in by.iloc[:-1])} and {pps(by.iloc[-1])} packets at "
         f"{', '.join(pps(x) for x in by.index[:-1])} and {pps(top)} pps: "
         f"{100 * by.iloc[-1] / t[t['offered_pps'] == top]['lost'].sum():.0f}% of the loss at {pps(top)} pps")


def test_bmv2_route_tables():
    e = datasets.read_experiments(D / "comparison").set_index("experiment")
    n = notes(e.loc["bmv2-routes900k-multiflow-fw50"])
    assert int(n["routes_loaded"]) == bmv2_engine.ROUTE_LIMIT and "routes_note" in n
    says(BMV2, f"caps route tables at {bmv2_engine.ROUTE_LIMIT:,} entries",
         "`routes_loaded` and `routes_note` in the comparison's `experiments.csv` say so")


@pytest.fixture
def previous(tmp_path):
    """The files this data replaced (commit PREVIOUS), in a folder of their own."""
    return previous_files(BMV2, tmp_path)


def test_bmv2_against_the_previous_measurement(previous):
    oe, ne = datasets.read_experiments(previous).iloc[0], datasets.read_experiments(D / BMV2).iloc[0]
    assert oe["engine_version"] == ne["engine_version"]
    on = notes(oe)
    assert "probe_period_ms" not in on and "egress_queue_drops" not in on
    ot = datasets.read(previous).trials
    assert "cpu_stop_ms" not in ot.columns
    day = pd.to_datetime(ot["started_at"]).min().strftime("%Y-%m-%d")
    oldr = datasets.read_searches([previous]).set_index("engine")
    says(BMV2, f"The data this replaces ({day}, code {VETH_CODE[:7]}; in git at commit {PREVIOUS[:7]}) had the same "
               f"bmv2 and p4c builds, kernel {oe['kernel']}, generator ceilings of "
               f"{pps(oe['generator_ceiling_pps'])} pps "
               f"(sweep) and {pps(oldr['generator_ceiling_pps'].iloc[0])} pps (searches), and neither the stop probe "
               f"nor the egress queue counter")
    r = datasets.read_searches([D / BMV2]).set_index("engine")
    assert oldr.loc["linux", "generator_bound"] and not r.loc["linux", "generator_bound"]
    says(BMV2, f"bmv2's search answer: {oldr.loc['bmv2', 'answer']} then, {r.loc['bmv2', 'answer']} now.",
         f"Linux's: {oldr.loc['linux', 'answer']} then, {r.loc['linux', 'answer']} now.")
    ox, nx = stats.assess(ot)[0], stats.assess(datasets.read(D / BMV2).trials)[0]
    says(BMV2, f"The sweep's verdict was {ox.verdict.label}, its PDR@0.5% {pps(ox.pdr.load)} pps; now "
               f"{nx.verdict.label}, {pps(nx.pdr.load)} pps.")
    om = ox.summary.set_index("offered_pps")["plr"]
    nm = nx.summary.set_index("offered_pps")["plr"]
    assert (nm.loc[[15_000, 20_000]] > om.loc[[15_000, 20_000]]).all()
    assert (nm.loc[[30_000, 40_000]] < om.loc[[30_000, 40_000]]).all()
    says(BMV2, f"Mean loss at 15,000 and 20,000 pps rose from {sig2(om.loc[15_000])}% and {sig2(om.loc[20_000])}% to "
               f"{sig2(nm.loc[15_000])}% and {sig2(nm.loc[20_000])}%; at 30,000 and 40,000 pps it fell from "
               f"{sig2(om.loc[30_000])}% and {sig2(om.loc[40_000])}% to {sig2(nm.loc[30_000])}% and "
               f"{sig2(nm.loc[40_000])}%.")
    nt = trials(BMV2)
    assert nt["lost_unexplained"].sum() == 0
    says(BMV2, f"Then {pps(ot['lost_unexplained'].sum())} lost packets were unexplained: the egress queue counter did "
               "not exist yet. Now none.")


def test_bmv2_points_at_the_other_work_on_the_machine():
    """The pointer at docs/testbed.md's account of the other work in this run, seen in the testbed-veth measured
    right after this dataset (as commit VETH_SHARED holds it: the current one is a later measurement, alone)."""
    doc_path = D.parent / "docs" / "testbed.md"
    if not doc_path.exists():
        pytest.skip("docs/ is not installed with the package: only a checkout has it")
    doc = " ".join(doc_path.read_text().split())
    section = "Other work on the machine spoils a run unseen"
    assert f"- **{section}.** " in doc and f"`datasets/testbed-veth` (since replaced" in doc
    then = pd.read_csv(io.StringIO(committed(f"datasets/{VETH}/trials.csv", VETH_SHARED)))
    began = pd.to_datetime(then["started_at"]).min()
    done = max(pd.to_datetime(trials(BMV2)["started_at"]).max(),
               pd.to_datetime(datasets.read_searches([D / BMV2])["when"]).max())
    assert done <= began < done + pd.Timedelta(minutes=1)  # right after
    assert pd.to_datetime(trials(VETH)["started_at"]).min() > began + pd.Timedelta(hours=6)
    says(BMV2, f"`docs/testbed.md` (\"{section}\") says what that did to the router's CPU in the same run's "
               f"`testbed-veth`, measured right after this dataset (from {began:%H:%M} UTC; those files have since "
               f"been replaced by a measurement alone, and are in git at commit {VETH_SHARED[:7]})")
