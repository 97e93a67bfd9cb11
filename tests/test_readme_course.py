"""Every number the README of click-course states, recomputed from its files (see readme_checks)."""

import hashlib
import math
import re

import pandas as pd
import pytest

from routerlab import datasets, stats
from routerlab.validation import TrialValidation
from readme_checks import (HALTING, CODE_ALONE, POLL_CODE, D, assessed, committed, loss_rows, pct, per_load, pps,
                           previous_files, says, sig2, span, superseded, the_testbed_doc, when_range, why, one,
                           statistics_paragraph_exists)

#: The commit that began reading back which idle mode the kernel honours (the cpuidle driver in the record).
READ_BACK = "fbb864d2aea292e9242dd2d0809f3ddfafbb3184"


COURSE = "click-course"
COURSE_NAMES = {"your-router": "your router (exercise 2)", "click-reference": "Click reference router",
                "linux-kernel": "Linux kernel"}
CLICKS = ("your-router", "click-reference")
CLICK_WORDS = {"your-router": "the student's router", "click-reference": "the reference router"}
LINUX = "linux-kernel"
FILES = ("trials.csv", "experiments.csv", "drops.csv", "superseded_trials.csv")


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


def replaced(folder=None) -> pd.DataFrame:
    """The attempts measured again (this dataset's, or those of the files in ``folder``), each with what
    disturbed it, in words and in short."""
    if folder is None:
        sup = superseded(COURSE, "superseded_trials.csv")
    else:
        sup = pd.read_csv(folder / "superseded_trials.csv")
        sup = sup.assign(why=why(sup))
    return sup.assign(cause=sup["why"].map(cause))


def cell(row) -> str:
    """A table's loss cell: the mean loss with two significant digits, K where fewer than 5 trials."""
    return sig2(row["loss"]) + (f" (K={int(row['n'])})" if row["n"] < 5 else "")


def text() -> str:
    return " ".join((D / COURSE / "README.md").read_text().split())


@pytest.fixture
def halting(tmp_path):
    """The files this run replaced (measured with idle CPUs halting; commit HALTING), in a folder of their own."""
    return previous_files(COURSE, tmp_path, files=FILES, commit=HALTING)


def test_course_where_when_how():
    t, _ = course()
    e = datasets.read_experiments(D / COURSE).set_index("experiment")
    for col in ("kernel", "cpu", "pinning", "generator_ceiling_pps", "versions"):
        assert e[col].nunique() == 1
    pin = e["pinning"].iloc[0]
    says(COURSE, f"kernel {e['kernel'].iloc[0]}, 2 vCPUs ({e['cpu'].iloc[0]})", f"`{pin}`",
         f"Click is {e.loc['your-router', 'engine_version']}")
    # idle CPUs polled, as the record says
    assert pin.split("; idle CPUs: ")[1].startswith("poll (/dev/cpu_dma_latency 0 us held")
    says(COURSE, "Idle CPUs polled while the testbed was up (`docs/testbed.md`, \"Idle CPUs poll\"): the record's "
                 "pinning ends with `idle CPUs: poll (...)`.")
    # that code wrote "poll" once the file opened, reading nothing back; the read-back came with READ_BACK, and the
    # comparison's record of the same day, made with it, names the cpuidle driver that honoured the request
    code = committed("lib/routerlab/testbed.py", POLL_CODE)
    assert 'self.idle = f"poll ({CPU_LATENCY} 0 us held while up)"' in code and "cpuidle driver" not in code
    assert "cpuidle driver {driver}" in committed("lib/routerlab/testbed.py", READ_BACK)
    ce = datasets.read_experiments(D / "comparison")
    driver = {re.search(r"; idle CPUs: poll \(/dev/cpu_dma_latency 0 us held while up; (cpuidle driver \w+)\)",
                        x).group(1) for x in ce["pinning"]}
    assert len(driver) == 1
    held = {re.search(r"/dev/cpu_dma_latency (\d+) us held", x).group(1) for x in ce["pinning"]} | {
        re.search(r"/dev/cpu_dma_latency (\d+) us held", x).group(1) for x in e["pinning"]}
    assert len(held) == 1
    c_at = pd.to_datetime(datasets.read(D / "comparison").trials["started_at"])
    assert {f"{x:%Y-%m-%d}" for x in c_at} == {f"{x:%Y-%m-%d}" for x in pd.to_datetime(t["started_at"])}
    says(COURSE, f"The code of {POLL_CODE[:7]} writes `poll` once it has opened `/dev/cpu_dma_latency`, without "
                 f"reading back what the kernel honours (that came with {READ_BACK[:7]}). The comparison's record of the same "
                 f"day, made with that read-back, names `{driver.pop()}` (`datasets/comparison/experiments.csv`): on "
                 f"this machine the request held at {held.pop()} µs does make idle CPUs poll.")
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
    # the code: each record names the commit it ran
    assert e["versions"].iloc[0] == f"routerlab: 0.1.0 (git {POLL_CODE[:7]})"
    says(COURSE, f"**When:** {at.min():%Y-%m-%d}, {when_range(t['started_at'])} UTC (first and last trial start)",
         *(f"`{x}` {when_range(g['started_at'])}" for x, g in t.groupby("experiment", sort=False)),
         f"Code: commit {POLL_CODE[:7]}.")
    # the script, as it was at that commit: with no dataset named, all of them, testbed-click first, then this one
    script = committed("scripts/remeasure-testbed.sh", POLL_CODE)
    order = re.search(r'^ALL="([^"]+)"$', script, re.M).group(1).split()
    assert 'WANT=" ${*:-$ALL} "' in script and order.index(COURSE) == 1 and order[0] == "testbed-click"
    blocks = [script.index(f"if want {x}; then") for x in order]
    assert blocks == sorted(blocks)
    says(COURSE, f"`scripts/remeasure-testbed.sh OUT` (every testbed dataset: {', '.join(order)}, in that order) "
                 f"measured this dataset second, after {order[0]}, with the machine to itself",
         "(the files cannot show that; no file of the project or of /tmp changed during the run, apart from notes;")
    # the ceiling: measured once when the script started, given to each of the three commands
    assert script.count("measuring.generator_ceiling()") == 1
    assert script.index("measuring.generator_ceiling()") < blocks[0]
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
    readme = " ".join((D / COURSE / "README.md").read_text().replace("\\\n", " ").split())
    outs = {x.split("--out ")[1] for x in e["command"]}
    assert len(outs) == 1 and not outs & {f"datasets/{COURSE}"}
    says(COURSE, f"The commands ran with `--out {outs.pop()}`, a scratch folder (as `experiments.csv` records them), "
                 "and the files were copied here unchanged; above, `--out` names this folder instead.")
    for exp, row in e.iterrows():
        out = row["command"].split("--out ")[1]
        assert out.endswith(f"/{COURSE}")
        cmd = row["command"].replace(out, f"datasets/{COURSE}")
        assert f"--ceiling {c:.0f}" in cmd
        assert " ".join(cmd.split()) in readme, cmd
    says(COURSE, f"`trials.csv` | {len(t)} trials (3 routers × 9 loads × 5)")
    assert (t.groupby(["experiment", "offered_pps"]).size() == 5).all() and t["experiment"].nunique() == 3
    assert t["offered_pps"].nunique() == 9
    for col in ("cpu_stop_ms", "cpu_stops", "cpu_stopped_ms", "gen_late_ms", "gen_lagged_ms", "queue_ms", "attempt",
                "disturbed", "lost", "lost_attributed", "lost_unexplained", "trace_missed", "drops"):
        assert col in t.columns
    says(COURSE, f"`superseded_trials.csv` | the {len(replaced())} attempts that trial validation measured again")


def test_course_commits_are_in_history():
    for commit in (POLL_CODE, HALTING, CODE_ALONE):
        committed("README.md", commit)  # skips outside a checkout; fails when the commit is unknown there


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


def test_course_terms():
    """The terms, as README.md defines them and routerlab.stats computes them (the verdict's thresholds are the
    defaults the table's verdicts were made with)."""
    _, a = course()
    params = {x.verdict.params for x in a.values()}
    assert len(params) == 1
    v = params.pop()
    assert v.mode == "strict" and v.pdr == stats.PDR_FRACTION
    statistics_paragraph_exists()  # the section the terms cite
    says(COURSE, "The terms (`README.md`, \"The statistics, in one paragraph\"): **PDR@0.5%** is the highest offered "
                 f"load such that it and every lower load lose at most {100 * v.pdr:g}% (mean loss over the load's "
                 "trials); **NDR** is the same with no trial losing a packet.",
         f"the load after the first one whose mean loss passes {100 * v.pdr:g}% is the candidate saturation point, "
         f"and the sweep is **GOOD** when the TIR there is below {v.eta * v.entry_multiplier:g} and the TIR of every "
         f"later load below {v.eta:g}",
         "**BAD** is a verdict on the sweep, not on the router: the sweep does not show the router's capacity (no "
         "saturation after its PDR).")
    # steal in the words of the comparison's README
    steal = "`steal` is the share of both vCPUs' time that the hypervisor took during the trial."
    says("comparison", steal)
    says(COURSE, steal)
    # a kept trial is disturbed only when every attempt of it was: its earlier attempts, set aside, all were
    t = datasets.read(D / COURSE).trials
    sup = replaced()
    assert sup["disturbed"].all() and (t[t["disturbed"]]["attempt"] == 1 + TrialValidation().max_repeats).all()
    says(COURSE, "a kept trial is `disturbed` when every attempt of it was.")


def test_course_per_load_table():
    t, _ = course()
    p = per_load(t)
    c = ceiling()
    runs = t.groupby(["experiment", "offered_pps"]).size().unique()
    assert len(runs) == 1
    says(COURSE, f"over the trials the generator delivered (K: how many, where fewer than {runs[0]}).")
    # "CPU 1" is the router's CPU, as the records place it, and the sink's; CPU 0 (the generator's) is named only there
    pin = datasets.read_experiments(D / COURSE)["pinning"].iloc[0]
    assert "router receive CPU 1;" in pin and "sink receive CPU 1 " in pin
    says(COURSE, "CPU 1 is the router's CPU; the sink's receive work runs there too (the placement above), so its busy "
                 "share includes the sink's:")
    assert set(re.findall(r"CPU (\d+)", text())) == {"0", "1"} and text().count("CPU 0") == pin.count("CPU 0")
    for o in sorted(t["offered_pps"].unique()):
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
    says(COURSE, f"Both lose nothing up to {pps(yours.ndr.load)} pps.")
    # past the NDR, the student's router loses more at the first loads, then less at every load after them
    past = [o for o in loads if o > yours.ndr.load]
    more = [o for o in past if ys.loc[o, "plr"] > rs.loc[o, "plr"]]
    less = [o for o in past if ys.loc[o, "plr"] < rs.loc[o, "plr"]]
    assert more and less and more + less == past

    def vs(o):
        return f"{sig2(ys.loc[o, 'plr'])}% against {sig2(rs.loc[o, 'plr'])}% at {pps(o)} pps"
    top = past[-1]
    k_top = (int(ys.loc[top, "runs"]), int(rs.loc[top, "runs"]))
    assert k_top[0] == k_top[1] < 5
    says(COURSE, f"Past it the student's router loses more at the next {len(more)} loads ("
                 + "; ".join(vs(o) for o in more) + f") and less at the {len(less)} above them ("
                 + "; ".join(vs(o) for o in less) + f", on {k_top[0]} trials each).")
    py, pr = ys["throughput_pps"].idxmax(), rs["throughput_pps"].idxmax()
    assert py == pr and ys.loc[py, "throughput_pps"] < rs.loc[pr, "throughput_pps"]
    says(COURSE, f"Its throughput (offered load × (1 - mean loss)) peaks lower: {pps(ys.loc[py, 'throughput_pps'])} pps "
                 f"against {pps(rs.loc[pr, 'throughput_pps'])} pps, both at {pps(py)} pps offered.")
    # CPU 1: alike at the lowest loads, the student's router busier at its NDR load, both near full from the PDR on
    cy, cr = p.loc["your-router", "cpu"], p.loc["click-reference", "cpu"]
    nd, nx = yours.ndr.load, yours.pdr.load
    low = [o for o in loads if o < nd]
    assert all(abs(cy[o] - cr[o]) < 0.05 for o in low) and cy[nd] - cr[nd] > 0.05
    says(COURSE, f"CPU 1 read within {100 * max(abs(cy[o] - cr[o]) for o in low):.0f} points under the two up to "
                 f"{pps(low[-1])} pps; at {pps(nd)} pps the student's router kept it busier ({100 * cy[nd]:.0f}% "
                 f"against {100 * cr[nd]:.0f}%), and from {pps(nx)} pps on both read "
                 f"{span(pd.concat([cy[nx:], cr[nx:]]), pct())}%.")
    # the student's PDR load: two lossy trials, one of them kept disturbed; a third lossy in every attempt but its last
    k = kept(t)
    y = k[(k["experiment"] == "your-router") & (k["offered_pps"] == nx)]
    lossy = y[y["lost"] > 0]
    clean, dist = lossy[~lossy["disturbed"]], lossy[lossy["disturbed"]]
    assert len(clean) == len(dist) == 1 and (why(dist).map(cause) == "steal").all() and why(clean).eq("").all()
    c, w = clean.iloc[0], dist.iloc[0]
    assert c["attempt"] == 1
    sup = replaced()
    mine = sup[(sup["experiment"] == "your-router") & (sup["offered_pps"] == nx)]
    before = mine[mine["trial"] == w["trial"]]
    assert len(before) == w["attempt"] - 1 and (before["lost"] > 0).all()
    # the mean passes by a few packets: the trials offered the same count, so the mean loss is the pooled one
    assert y["tx"].nunique() == 1 and abs(ys.loc[nx, "plr"] - y["lost"].sum() / y["tx"].sum()) < 1e-12
    margin = math.floor(stats.PDR_FRACTION * y["tx"].sum() - y["lost"].sum()) + 1
    assert ys.loc[nx, "plr"] <= stats.PDR_FRACTION < (y["lost"].sum() + margin) / y["tx"].sum()
    assert (y.drop(lossy.index)["lost"] == 0).all()
    says(COURSE, f"**At the student's PDR load ({pps(nx)} pps), {len(lossy)} trials of {len(y)} lost packets**: "
                 f"{pps(c['lost'])} ({sig2(c['loss'])}%) in a trial not `disturbed` (its first attempt), and "
                 f"{pps(w['lost'])} ({sig2(w['loss'])}%) in one kept `disturbed`, with steal of "
                 f"{100 * w['steal']:.1f}%, after {w['attempt']} attempts; the {len(before)} before it, set aside, "
                 f"lost {span(before['lost'], pps)} packets each. The mean, {sig2(ys.loc[nx, 'plr'])}%, stays below "
                 f"0.5% by {pps(margin)} packets: {pps(margin)} more lost in these {len(y)} trials would have failed "
                 f"the load.")
    # another trial there: lossy in every attempt that was set aside, lossless in the one kept
    other = mine[mine["trial"] != w["trial"]]
    assert other["trial"].nunique() == 1
    o = y[y["trial"] == other["trial"].iloc[0]].iloc[0]
    assert o["lost"] == 0 and not o["disturbed"] and o["attempt"] == len(other) + 1 == 1 + TrialValidation().max_repeats
    assert (other["lost"] > 0).all() and (other["cause"] == "steal").all()
    # any one of those set-aside attempts, kept in place of the lossless one, would have failed the load
    assert other["lost"].min() > margin
    says(COURSE, f"Another trial there lost {span(other['lost'], pps)} packets in each of its first {len(other)} "
                 f"attempts, each set aside for steal above 2% ({span(other['steal'], pct(1))}%), and nothing in the "
                 f"{o['attempt']}th, which was kept.")
    r = k[(k["experiment"] == "click-reference") & (k["offered_pps"] == nx)]
    rl = r[r["lost"] > 0]
    assert not rl["disturbed"].any() and (r["attempt"] == 1).all()
    says(COURSE, f"The reference router lost packets there in {len(rl)} trials of {len(r)} ({span(rl['lost'], pps)} "
                 f"packets), none `disturbed`, a mean of {sig2(rs.loc[nx, 'plr'])}%.")
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
    # one lossy trial in all: held against the router, it sets the NDR
    lossy = t[(t["experiment"] == LINUX) & (t["lost"] > 0)]
    assert len(lossy) == 1 and not lossy["disturbed"].any() and why(lossy).eq("").all()
    w = kept(lossy).iloc[0]
    assert w["offered_pps"] == p.index[p.index.get_loc(lk.ndr.load) + 1] and w["attempt"] == 1
    d = loss_rows(COURSE)
    d = d[(d["experiment"] == LINUX)]
    assert list(d["reason"].unique()) == ["CPU_BACKLOG"] and d["packets"].sum() == w["lost"]
    assert w["cpu_stop_ms"] <= TrialValidation().probe_period_ms < w["queue_ms"] and w["gen_late_ms"] < w["queue_ms"]
    says(COURSE, f"Of its {len(t[t['experiment'] == LINUX])} trials one lost packets: {pps(w['lost'])} "
                 f"({sig2(w['loss'])}%) at {pps(w['offered_pps'])} pps, all at the DUT's input backlog, in its first "
                 f"attempt, not `disturbed`: steal {100 * w['steal']:.1f}%, the longest stop of the router's CPU the "
                 f"probe read {one(w['cpu_stop_ms'])} ms (a stop no longer than the probe's "
                 f"{TrialValidation().probe_period_ms:.0f}-ms period never counts as a disturbance), the generator's "
                 f"worst lag {one(w['gen_late_ms'])} ms, against a {one(w['queue_ms'])}-ms queue.")
    assert (k[k["offered_pps"] == c]["lost"] == 0).all() and len(k[k["offered_pps"] == c]) == 5
    says(COURSE, f"At the ceiling, {pps(c)} pps, none of its {len(k[k['offered_pps'] == c])} trials lost a packet.")
    # CPU 1 under the kernel
    assert p["cpu"].is_monotonic_increasing
    says(COURSE, f"**CPU 1 under the kernel** rises with the load, from {100 * p['cpu'].iloc[0]:.0f}% at "
                 f"{pps(p.index[0])} pps to {100 * p['cpu'].iloc[-1]:.0f}% at {pps(p.index[-1])} pps (the table); its "
                 f"busiest kept trial read {100 * k['cpu_load'].max():.1f}%.")
    clicks = per_load(t)
    nd = a["your-router"].ndr.load
    assert (clicks.xs(nd, level="offered_pps")["loss"] == 0).all()
    times = [clicks.loc[(x, nd), "cpu"] / p.loc[nd, "cpu"] for x in CLICKS]
    says(COURSE, f"At {pps(nd)} pps, where no router lost a packet, the Click routers kept CPU 1 "
                 f"{span(times, one)} times as busy as the kernel did")


def test_course_generator_limited():
    t, _ = course()
    lim = t[t["generator_limited"].astype(bool)]
    by = lim.groupby("experiment").size().reindex(list(COURSE_NAMES), fill_value=0)
    n = t.groupby("experiment").size()
    assert by[LINUX] == 0 and lim["offered_pps"].nunique() == 1
    says(COURSE, f"{by['your-router']} of `your-router`'s {n['your-router']}, {by['click-reference']} of "
                 f"`click-reference`'s and none of `linux-kernel`'s, all at {pps(lim['offered_pps'].min())} pps, "
                 f"the ceiling",
         f"In them it sent {span(lim['sent_pps'], pps)} pps, and its worst lag was {span(lim['gen_late_ms'], one)} ms",
         f"Under the kernel it delivered all {n[LINUX]}, the ceiling's too")
    assert lim["offered_pps"].min() == ceiling()
    assert (t[(t["experiment"] == LINUX) & (t["offered_pps"] == ceiling())]["generator_limited"] == False).all()  # noqa


def test_course_where_the_loss_went():
    t, _ = course()
    by = loss_rows(COURSE).groupby(["experiment", "reason"])["packets"].sum()
    lost = t.groupby("experiment")["lost"].sum()
    assert (t["lost_unexplained"] == 0).all() and (by.groupby(level=0).sum() == lost).all()
    says(COURSE, f"(`drops.csv`, all {len(t)} trials, generator-limited ones included)")
    fd = {e: by[e][by[e].index.str.startswith("FromDevice@")].iloc[0] for e in CLICKS}
    bl = {e: by[e, "CPU_BACKLOG"] for e in CLICKS}
    fdname = {e: by[e].index[by[e].index.str.startswith("FromDevice@")][0] for e in CLICKS}
    assert set(by["your-router"].index) == {fdname["your-router"], "out/Queue@1.drops", "CPU_BACKLOG"}
    assert set(by["click-reference"].index) == {fdname["click-reference"], "CPU_BACKLOG"}
    says(COURSE, f"the student's router {pps(fd['your-router'])} of {pps(lost['your-router'])}, the reference router "
                 f"{pps(fd['click-reference'])} of {pps(lost['click-reference'])}",
         f"backlog ({pps(bl['your-router'])} and {pps(bl['click-reference'])})",
         f"the student's router's output `Queue` ({pps(by['your-router', 'out/Queue@1.drops'])})",
         f"The kernel's {pps(lost[LINUX])} lost packets were all dropped at that backlog")
    assert list(by[LINUX].index) == ["CPU_BACKLOG"]
    tm = t.groupby("experiment")["trace_missed"].sum()
    assert (tm[list(CLICKS)] == 0).all() and (t["lost"] == t["tx"] - t["rx"]).all()
    says(COURSE, f"was {pps(tm[LINUX])} packets in the kernel's trials and none in Click's")


def causes_table(sup: pd.DataFrame) -> dict:
    """The README's rows of the table of attempts measured again, by cause."""
    words = {"steal": "steal above 2% ({})", "steal and stop": "steal and a stop of the router's CPU",
             "steal and lag": "steal and a lag of the generator",
             "steal and stop and lag": "steal, a stop of the router's CPU and a lag of the generator",
             "stop": "a stop of the router's CPU (read {} ms, queue {} ms)",
             "lag": "a lag of the generator", "stop and lag": "a stop of the router's CPU and a lag of the generator"}

    def loads(x):
        u = sorted(x.unique())
        return f"{pps(u[0])} pps" if len(u) == 1 else f"{pps(u[0])}-{pps(u[-1])} pps"
    rows = {}
    for c, x in sup.groupby("cause"):
        w = words[c]
        if c == "steal":
            w = w.format(span(x["steal"], pct(1)) + "%")
        elif c == "stop":
            w = w.format(span(x["cpu_stop_ms"], one), span(x["queue_ms"], one))
        rows[c] = f"| {w} | {len(x)} | {(x['lost'] > 0).sum()} | {loads(x['offered_pps'])} | {span(x['lost'], pps)} |"
    return rows


def test_course_trial_validation():
    t, _ = course()
    sup = replaced()
    assert (sup["why"] != "").all() and len(sup) == (t["attempt"] - 1).sum()
    n = sup.groupby("experiment").size().reindex(list(COURSE_NAMES), fill_value=0)
    tr = (t["attempt"] > 1).groupby(t["experiment"]).sum()
    says(COURSE, f"row of `superseded_trials.csv`) measured {len(sup)} attempts again, in {tr.sum()} trials: "
                 + ", ".join(f"{n[x]} of `{x}` ({tr[x]} trials)" for x in COURSE_NAMES) + ".")
    steal = pd.concat([t["steal"], sup["steal"]])
    says(COURSE, f"{(steal > 0.02).sum()} of the {len(steal)} attempts (kept or set aside) had steal above 2%, "
                 f"at most {100 * steal.max():.1f}%")
    for row in causes_table(sup).values():
        says(COURSE, row)
    dist = t[t["disturbed"]]
    dn = dist.groupby("experiment").size()
    assert list(dn.index) == ["your-router"]
    dc = why(dist).map(cause)
    assert (dc == "steal").all()
    attempts = 1 + TrialValidation().max_repeats
    assert (dist["attempt"] == attempts).all()
    d = dist.sort_values("offered_pps")
    says(COURSE, f"Of the kept trials, {len(dist)} are still `disturbed` after the last attempt, both of `your-router` "
                 f"and for steal above 2% ({span(d['steal'], pct(1))}%): at {pps(d['offered_pps'].iloc[0])} pps, "
                 f"where it lost nothing, and at {pps(d['offered_pps'].iloc[1])} pps (above).")
    assert len(dist) == 2 and d["lost"].iloc[0] == 0 and d["lost"].iloc[1] > 0


def loss_rows_of(folder) -> pd.Series:
    """Packets lost per experiment and counter, from a folder's drops.csv."""
    d = datasets.read_drops([folder])
    return d[d["counted_as"] == "loss"].groupby(["experiment", "reason"])["packets"].sum()


def attempts_of(trials: pd.DataFrame, sup: pd.DataFrame) -> pd.DataFrame:
    """Per experiment: attempts (kept and set aside), those with steal above 2%, mean and largest steal, attempts
    set aside (and the trials they were in), kept trials still disturbed."""
    allx = pd.concat([trials[["experiment", "steal"]], sup[["experiment", "steal"]]])
    g = allx.groupby("experiment")["steal"]
    out = pd.DataFrame({"n": g.size(), "high": g.apply(lambda s: int((s > 0.02).sum())), "mean": g.mean(),
                        "max": g.max()})
    out["again"] = sup.groupby("experiment").size().reindex(out.index, fill_value=0)
    out["trials"] = (trials["attempt"] > 1).groupby(trials["experiment"]).sum().reindex(out.index, fill_value=0)
    out["disturbed"] = trials["disturbed"].astype(bool).groupby(trials["experiment"]).sum()
    return out


def test_course_against_halting(halting):
    old, oa, oc = assessed(halting)
    oe = datasets.read_experiments(halting)
    t, a = course()
    e = datasets.read_experiments(D / COURSE)
    c = ceiling()
    start = pd.to_datetime(old["started_at"])
    assert start.max() < pd.to_datetime(t["started_at"]).min()
    for col in ("kernel", "engine_version"):
        assert list(oe[col]) == list(e[col]), col
    # how idle CPUs waited: the old records predate the "idle CPUs:" part, their code the latency request
    # the old records name no version (CODE_ALONE is the commit their README and tests named)
    assert (oe["versions"].fillna("") == "").all()
    assert "idle CPUs" not in oe["pinning"].iloc[0] and oe["pinning"].nunique() == 1
    assert e["pinning"].iloc[0].startswith(oe["pinning"].iloc[0] + "; idle CPUs: poll (")
    assert "cpu_dma_latency" not in committed("lib/routerlab/testbed.py", CODE_ALONE)
    assert "cpu_dma_latency" in committed("lib/routerlab/testbed.py", POLL_CODE)
    says(COURSE, f"The files this run replaces were measured on {start.min():%Y-%m-%d}, {when_range(old['started_at'])} "
                 f"UTC, with code {CODE_ALONE[:7]} (in git at commit {HALTING[:7]}), on the same kernel and Click, with "
                 f"idle CPUs halting: that code had no CPU latency request, and their records' pinning ends before "
                 f"`idle CPUs`.")
    says(COURSE, f"Their generator ceiling was {pps(oc)} pps; this run's is {pps(c)} pps, {100 * (1 - c / oc):.0f}% "
                 f"lower. The ceiling varies between runs")

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
    assert reader(CODE_ALONE) == reader(POLL_CODE) and "def cpu_usage" in reader(POLL_CODE)
    says(COURSE, "`cpu_load` and `steal` were read the same way at both commits (`routerlab.testbed.cpu_times` and "
                 "`cpu_usage` are the same).")
    # trial validation adds up stops and lags since: the old files lack those columns
    totals = ("cpu_stops", "cpu_stopped_ms", "gen_lagged_ms")
    assert not set(totals) & set(old.columns) and set(totals) <= set(t.columns)
    assert "cpu_stopped_ms" not in committed("lib/routerlab/validation.py", CODE_ALONE)
    assert "cpu_stopped_ms" in committed("lib/routerlab/validation.py", POLL_CODE)
    says(COURSE, "Between the two commits trial validation began adding up the stops of the router's CPU and the "
                 "generator's lags over 5 ms (" + ", ".join(f"`{x}`" for x in totals) + ", columns the halting files do "
                 "not have): with them it can hold more lossy attempts `disturbed`, never fewer.")
    gens = [x["generator"].unique() for x in (oe, e)]
    assert all(len(g) == 1 for g in gens) and gens[0][0] != gens[1][0]
    says(COURSE, f"The generator is another build (`generator`: {gens[0][0].split(' (')[0]} then, "
                 f"{gens[1][0].split(' (')[0]} now).")

    # the answers
    def share(x, ce):
        return f"{x / ce:.2g}"

    def pdr(x, ce):
        r = stats.records([x]).iloc[0]
        if r["pdr_status"] == "at_least_max":
            return f"at least {pps(x.summary['offered_pps'].max())} pps ({share(x.summary['offered_pps'].max(), ce)})"
        return f"{pps(r['pdr_pps'])} pps ({share(r['pdr_pps'], ce)})"
    for exp, name in COURSE_NAMES.items():
        assert oa[exp].verdict.label == a[exp].verdict.label
        says(COURSE, f"| {name} | {pdr(oa[exp], oc)} → {pdr(a[exp], c)} | {pps(oa[exp].ndr.load)} pps "
                     f"({share(oa[exp].ndr.load, oc)}) → {pps(a[exp].ndr.load)} pps ({share(a[exp].ndr.load, c)}) | "
                     f"{oa[exp].verdict.label} → {a[exp].verdict.label} |")

    # steal and trial validation, per router and in all
    osup, nsup = replaced(halting), replaced()
    ox, nx = attempts_of(old, osup), attempts_of(t, nsup)
    oall = attempts_of(old.assign(experiment="all"), osup.assign(experiment="all")).loc["all"]
    nall = attempts_of(t.assign(experiment="all"), nsup.assign(experiment="all")).loc["all"]

    def row(name, o, n):
        i = {k: (int(o[k]), int(n[k])) for k in ("n", "high", "again", "trials", "disturbed")}
        return (f"| {name} | {i['n'][0]} → {i['n'][1]} | {i['high'][0]} → {i['high'][1]} | {100 * o['mean']:.1f}% → "
                f"{100 * n['mean']:.1f}% | {100 * o['max']:.1f}% → {100 * n['max']:.1f}% | {i['again'][0]} "
                f"({i['trials'][0]}) → {i['again'][1]} ({i['trials'][1]}) | {i['disturbed'][0]} → "
                f"{i['disturbed'][1]} |")
    for exp, name in COURSE_NAMES.items():
        says(COURSE, row(name, ox.loc[exp], nx.loc[exp]))
    says(COURSE, row("all three", oall, nall))
    # steal fell under the kernel, not under Click
    assert nx.loc[LINUX, "high"] < ox.loc[LINUX, "high"] and nx.loc[LINUX, "mean"] < ox.loc[LINUX, "mean"]
    assert all(nx.loc[x, "high"] >= ox.loc[x, "high"] and nx.loc[x, "mean"] > ox.loc[x, "mean"] for x in CLICKS)
    # the closing summary: the kernel's sweep measured again less often, lossy in fewer trials (below)
    assert nx.loc[LINUX, "again"] < ox.loc[LINUX, "again"]
    says(COURSE, "So the kernel's sweep met less steal than in the halting run, was measured again less often and lost "
                 "packets in fewer trials; the Click routers' sweeps met more steal")

    # the loads nearest in pps (within 3%): loss and CPU 1, then and now
    op, npl = per_load(old), per_load(t)
    ofr, nfr = sorted(old["offered_pps"].unique()), sorted(t["offered_pps"].unique())
    pairs = [(min(ofr, key=lambda o: abs(o - n)), n) for n in nfr]
    pairs = [(o, n) for o, n in pairs if abs(n / o - 1) < 0.03]
    assert len(pairs) == 3
    for o, n in pairs:
        cells = []
        for exp in COURSE_NAMES:
            ro, rn = op.loc[(exp, o)], npl.loc[(exp, n)]
            cells += [f"{cell(ro)} → {cell(rn)}", f"{100 * ro['cpu']:.0f}% → {100 * rn['cpu']:.0f}%"]
        says(COURSE, f"| {pps(o)} ({share(o, oc)}) → {pps(n)} ({share(n, c)}) | " + " | ".join(cells) + " |")
    # the Click routers: loss not lower at these loads, CPU 1 near full in both runs
    both = [(x, o, n) for x in CLICKS for o, n in pairs]
    assert all(op.loc[(x, o), "loss"] > stats.PDR_FRACTION and npl.loc[(x, n), "loss"] > stats.PDR_FRACTION
               for x, o, n in both)
    cpus = [v for x, o, n in both for v in (op.loc[(x, o), "cpu"], npl.loc[(x, n), "cpu"])]
    up = [(x, o, n) for x, o, n in both if npl.loc[(x, n), "loss"] > op.loc[(x, o), "loss"]]
    down = [(x, o, n) for x, o, n in both if (x, o, n) not in up]
    assert len(down) == 1
    x, o, n = down[0]
    # the polling loads are higher in some pairs; the top pair kept fewer trials then than now
    higher = [n / o - 1 for o, n in pairs if n > o]
    assert higher and len(higher) < len(pairs)
    ko_, kn_ = ({int(q.loc[(y, pairs[-1][i]), "n"]) for y in CLICKS} for i, q in ((0, op), (1, npl)))
    assert len(ko_) == len(kn_) == 1
    ko_, kn_ = ko_.pop(), kn_.pop()
    assert ko_ != kn_
    says(COURSE, f"At these loads the polling run lost more in {len(up)} of the {len(both)} cases, at loads up to "
                 f"{100 * max(higher):.1f}% higher (at the top pair on {kn_} trials against {ko_}), and less in one "
                 f"({CLICK_WORDS[x]} at {pps(o)} → {pps(n)} pps: "
                 f"{100 * op.loc[(x, o), 'loss']:.1f}% → {100 * npl.loc[(x, n), 'loss']:.1f}%), with CPU 1 "
                 f"{span(cpus, pct())}% busy in both runs")
    says(COURSE, f"the Click routers' sweeps met more steal, lost more in {len(up)} of the {len(both)} cases where "
                 "they saturate (above)")
    # the kernel: busier at every one of these loads
    ratio = [npl.loc[(LINUX, n), "cpu"] / op.loc[(LINUX, o), "cpu"] for o, n in pairs]
    assert min(ratio) > 1.4
    says(COURSE, f"under the kernel CPU 1 read {span(ratio, one)} times as busy as then")
    # but the halting run's kernel readings do not rise with the load up to the first of these loads; this run's do
    early = [o for o in ofr if o <= pairs[0][0]]
    readings = [op.loc[(LINUX, o), "cpu"] for o in early]
    assert not pd.Series(readings).is_monotonic_increasing and npl.loc[LINUX, "cpu"].is_monotonic_increasing
    says(COURSE, f"But the halting run's readings under the kernel do not rise with the load up to {pps(early[-1])} "
                 f"pps ({', '.join(f'{100 * r:.0f}%' for r in readings)} at {pps(early[0])}-{pps(early[-1])} pps), as "
                 "this run's do, so they look unreliable, and so do these ratios.")

    # the Click routers' answers: consistent with the halting run's, the grid moved
    ys_o, ys_n = oa["your-router"], a["your-router"]

    def first_loss(x, ex):
        k = kept(x)
        return k[(k["experiment"] == ex) & (k["lost"] > 0)]["offered_pps"].min()

    def first_fail(x, ex):
        s = x[ex].summary
        return s[s["plr"] > stats.PDR_FRACTION]["offered_pps"].min()
    for x in CLICKS:
        assert oa[x].ndr.load == ys_o.ndr.load and a[x].ndr.load == ys_n.ndr.load
        assert oa[x].pdr.load == ys_o.pdr.load and a[x].pdr.load == ys_n.pdr.load
        assert first_loss(old, x) == first_loss(old, "your-router") and first_fail(oa, x) == first_fail(oa, "your-router")
    fl, ff = first_loss(old, "your-router"), first_fail(oa, "your-router")
    assert ys_o.ndr.load < ys_n.ndr.load < fl and ys_o.pdr.load < ys_n.pdr.load < ff
    assert not [o for o in ofr if ys_o.ndr.load < o < fl] and not [o for o in ofr if ys_o.pdr.load < o < ff]
    says(COURSE, f"this run's NDR, {pps(ys_n.ndr.load)} pps, lies below the first load where the halting run lost "
                 f"packets ({pps(fl)} pps), and its PDR, {pps(ys_n.pdr.load)} pps, below the first load where the "
                 f"halting run's mean loss passed 0.5% ({pps(ff)} pps). The halting run measured no load between "
                 f"{pps(ys_o.ndr.load)} and {pps(fl)} pps, nor between {pps(ys_o.pdr.load)} and {pps(ff)} pps")
    # the highest throughput, at nearly the same offered load
    peaks = []
    for x in CLICKS:
        so, sn = oa[x].summary.set_index("offered_pps"), a[x].summary.set_index("offered_pps")
        po, pn = so["throughput_pps"].idxmax(), sn["throughput_pps"].idxmax()
        peaks.append((po, pn, so.loc[po, "throughput_pps"], sn.loc[pn, "throughput_pps"]))
    assert peaks[0][:2] == peaks[1][:2] and peaks[0][:2] in pairs
    change = [abs(q[3] / q[2] - 1) for q in peaks]
    says(COURSE, f"Their highest throughput moved by {span(change[:1], pct(1))}% and {span(change[1:], pct(1))}%: "
                 + ", ".join(f"{CLICK_WORDS[x]} {pps(q[2])} → {pps(q[3])} pps" for x, q in zip(CLICKS, peaks))
                 + f", both at {pps(peaks[0][0])} → {pps(peaks[0][1])} pps offered.")

    # steal: down under the kernel, up under Click
    says(COURSE, f"Under the kernel, attempts with steal above 2% fell from {ox.loc[LINUX, 'high']} of "
                 f"{ox.loc[LINUX, 'n']} to {nx.loc[LINUX, 'high']} of {nx.loc[LINUX, 'n']}, and its kept trials still "
                 f"`disturbed` from {ox.loc[LINUX, 'disturbed']} to {nx.loc[LINUX, 'disturbed']}; under the two Click "
                 f"routers they rose from {ox.loc[CLICKS[0], 'high']} and {ox.loc[CLICKS[1], 'high']} to "
                 f"{nx.loc[CLICKS[0], 'high']} and {nx.loc[CLICKS[1], 'high']}.")

    # the kernel: its loss then and now
    ko, kn = kept(old), kept(t)
    ko, kn = ko[ko["experiment"] == LINUX], kn[kn["experiment"] == LINUX]
    lo, ln = ko[ko["lost"] > 0], kn[kn["lost"] > 0]
    lo_loads = sorted(lo["offered_pps"].unique())
    assert len(ln) == 1
    # the loads both runs covered: up to this run's ceiling
    above = lo[lo["offered_pps"] > c]
    within = lo[lo["offered_pps"] <= c]
    assert above["offered_pps"].nunique() == 1 and above["offered_pps"].iloc[0] not in nfr
    says(COURSE, f"**At the loads both runs covered, the kernel lost packets in {len(ln)} trial instead of "
                 f"{len(within)}.**")
    says(COURSE, f"With idle CPUs halting the kernel lost packets in {len(lo)} trials at {len(lo_loads)} loads "
                 f"({pps(lo_loads[0])}-{pps(lo_loads[-1])} pps), {int(lo['disturbed'].sum())} of them kept "
                 f"`disturbed`; {len(above)} of the {len(lo)} were at {pps(above['offered_pps'].iloc[0])} pps, above "
                 f"this run's ceiling, a load this run never offered. Up to {pps(c)} pps it is {len(within)} trials "
                 f"({int(within['disturbed'].sum())} of them kept `disturbed`) against {len(ln)}, not `disturbed`.")
    ol, nl = op.loc[LINUX], npl.loc[LINUX]
    o5, n5 = next((o, n) for o, n in pairs if ol.loc[o, "loss"] > 0)
    assert nl.loc[n5, "loss"] == 0
    says(COURSE, f"at {pps(o5)} pps then it lost a mean of {sig2(ol.loc[o5, 'loss'])}%, at {pps(n5)} pps now nothing")
    says(COURSE, f"Its NDR rose from {share(oa[LINUX].ndr.load, oc)} of the ceiling to {share(a[LINUX].ndr.load, c)} "
                 f"({pps(oa[LINUX].ndr.load)} to {pps(a[LINUX].ndr.load)} pps); its PDR is a lower bound, the ceiling, "
                 f"both times.")
    assert len(ln) == 1 and not ln["disturbed"].any()
    for x in (oa, a):
        assert stats.records([x[LINUX]]).iloc[0]["pdr_status"] == "at_least_max"
    assert oa[LINUX].summary["offered_pps"].max() == oc
    # CPU 1 at the lowest load: polling does not read as busy
    lo_o, lo_n = ofr[0], nfr[0]
    assert npl.loc[(LINUX, lo_n), "cpu"] < 0.1
    says(COURSE, f"At the lowest load ({pps(lo_o)} → {pps(lo_n)} pps) CPU 1 read "
                 + ", ".join(f"{100 * op.loc[(x, lo_o), 'cpu']:.0f}% → {100 * npl.loc[(x, lo_n), 'cpu']:.0f}%"
                             for x in COURSE_NAMES)
                 + f" (the student's router, the reference router, the kernel): in these three cells, at loads "
                   f"{100 * (1 - lo_n / lo_o):.0f}% apart, idle polling did not show as busy time.")
    # no cell's reading rose by more than a few points there
    assert all(npl.loc[(x, lo_n), "cpu"] - op.loc[(x, lo_o), "cpu"] < 0.05 for x in COURSE_NAMES)
    # generator-limited trials
    lim_o = old[old["generator_limited"].astype(bool)].groupby("experiment").size()
    lim_n = t[t["generator_limited"].astype(bool)].groupby("experiment").size()
    assert LINUX not in lim_o.index and LINUX not in lim_n.index
    says(COURSE, f"The generator fell short in {lim_o['your-router']} and {lim_o['click-reference']} of the Click "
                 f"routers' trials then, {lim_n['your-router']} and {lim_n['click-reference']} now, and in none of the "
                 f"kernel's either time")
    # where the loss went: the same places, but for the reference router's Queue
    od, nd = loss_rows_of(halting), loss_rows(COURSE).groupby(["experiment", "reason"])["packets"].sum()
    assert (old["lost_unexplained"] == 0).all() and (t["lost_unexplained"] == 0).all()
    assert set(nd.index) <= set(od.index) and set(od.index) - set(nd.index) == {("click-reference", "out/Queue@1.drops")}
    says(COURSE, f"No lost packet was unexplained then or now, and the same counters took them, but the reference "
                 f"router's output `Queue`: {pps(od['click-reference', 'out/Queue@1.drops'])} packets then, none now.")


def test_course_points_at_the_testbed_doc():
    """The pointers at docs/testbed.md's sections (their text is another README's to keep; this checks only that
    each section the README names is there)."""
    doc = the_testbed_doc()
    for section in ("Idle CPUs poll", "Other work on the machine spoils a run unseen",
                    "Disturbed trials are measured again", "Where each lost packet went",
                    "The machine's speed changes between runs", "Steal time"):
        assert f"**{section}.**" in doc or f"## {section}" in doc, section
        says(COURSE, f"\"{section}\"")
