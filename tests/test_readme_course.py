"""Every number the README of click-course states, recomputed from its files (see readme_checks)."""

import hashlib
import math
import re

import pandas as pd
import pytest

from routerlab import datasets, stats
from routerlab.validation import TrialValidation
from readme_checks import (HALTING, CODE_ALONE, LAG_CODE, POLL_CODE, POLLING, D, assessed, committed, loss_rows, pct,
                           per_load, pps, previous_files, says, sig2, span, superseded, the_testbed_doc, when_range,
                           why, one, statistics_paragraph_exists)

#: The commit that began reading back which idle mode the kernel honours (the cpuidle driver in the record).
READ_BACK = "fbb864d2aea292e9242dd2d0809f3ddfafbb3184"


COURSE = "click-course"
COURSE_NAMES = {"your-router": "your router (exercise 2)", "click-reference": "Click reference router",
                "linux-kernel": "Linux kernel"}
CLICKS = ("your-router", "click-reference")
CLICK_WORDS = {"your-router": "the student's router", "click-reference": "the reference router"}
LINUX = "linux-kernel"
FILES = ("trials.csv", "experiments.csv", "drops.csv", "superseded_trials.csv")
ORDINAL = {1: "1st", 2: "2nd", 3: "3rd", 4: "4th"}


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


def minutes(stamps) -> str:
    """``HH:MM-HH:MM`` of the stamps, or one ``HH:MM`` when they fall in one minute."""
    r = when_range(stamps)
    lo, hi = r.split("-")
    return lo if lo == hi else r


def apart(a: float, b: float) -> tuple[str, str]:
    """Two loss ratios as percentages: two significant digits, or as many decimals as tell them apart."""
    if a == 0 or b == 0 or sig2(a) != sig2(b):
        return sig2(a), sig2(b)
    d = 1
    while f"{100 * a:.{d}f}" == f"{100 * b:.{d}f}":
        d += 1
    return f"{100 * a:.{d}f}", f"{100 * b:.{d}f}"


def share(x, ce):
    return f"{x / ce:.2g}"


def pdr_words(x, ce):
    """An assessment's PDR in pps with its share of the ceiling ``ce``; "at least" for a lower bound."""
    r = stats.records([x]).iloc[0]
    if r["pdr_status"] == "at_least_max":
        return f"at least {pps(x.summary['offered_pps'].max())} pps ({share(x.summary['offered_pps'].max(), ce)})"
    return f"{pps(r['pdr_pps'])} pps ({share(r['pdr_pps'], ce)})"


def ndr_words(x, ce):
    """An assessment's NDR in pps with its share of the ceiling ``ce``; "at least" for a lower bound."""
    s = x.ndr.status
    assert s in ("found", "at_least_max")
    return f"{'at least ' if s == 'at_least_max' else ''}{pps(x.ndr.load)} pps ({share(x.ndr.load, ce)})"


def text() -> str:
    return " ".join((D / COURSE / "README.md").read_text().split())


@pytest.fixture
def halting(tmp_path):
    """The files the polling files replaced (measured with idle CPUs halting; commit HALTING), in a folder of
    their own."""
    return previous_files(COURSE, tmp_path, files=FILES, commit=HALTING)


@pytest.fixture
def polling(tmp_path):
    """The files this run replaced (measured with idle CPUs polling and the lag rule before LAG_CODE; commit
    POLLING), in a folder of their own."""
    return previous_files(COURSE, tmp_path, files=FILES, commit=POLLING)


def test_course_where_when_how():
    t, _ = course()
    e = datasets.read_experiments(D / COURSE).set_index("experiment")
    for col in ("kernel", "cpu", "pinning", "generator_ceiling_pps", "versions"):
        assert e[col].nunique() == 1
    pin = e["pinning"].iloc[0]
    says(COURSE, f"kernel {e['kernel'].iloc[0]}, 2 vCPUs ({e['cpu'].iloc[0]})", f"`{pin}`",
         f"Click is {e.loc['your-router', 'engine_version']}")
    # idle CPUs polled, as the record says, and the record names the driver that honoured the request
    idle = pin.split("; idle CPUs: ")[1]
    assert idle.startswith("poll (/dev/cpu_dma_latency 0 us held")
    says(COURSE, "Idle CPUs polled while the testbed was up (`docs/testbed.md`, \"Idle CPUs poll\"): the record's "
                 "pinning ends with `idle CPUs: poll (...)`.")
    # the read-back came with READ_BACK; the code that ran (LAG_CODE) has it and wrote what it read
    assert "cpuidle driver {driver}" in committed("lib/routerlab/testbed.py", READ_BACK)
    assert "cpuidle driver {driver}" in committed("lib/routerlab/testbed.py", LAG_CODE)
    assert "cpuidle driver" not in committed("lib/routerlab/testbed.py", POLL_CODE)
    driver = re.search(r"; (cpuidle driver \w+)\)$", idle).group(1)
    held = re.search(r"/dev/cpu_dma_latency (\d+) us held", idle).group(1)
    says(COURSE, f"The code of {LAG_CODE[:7]} reads back what the kernel honours (since {READ_BACK[:7]}) and names "
                 f"the cpuidle driver that honoured the request, `{driver}`: on this machine the request held at "
                 f"{held} µs does make idle CPUs poll.")
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
    assert e["versions"].iloc[0] == f"routerlab: 0.1.0 (git {LAG_CODE[:7]})"
    says(COURSE, f"**When:** {at.min():%Y-%m-%d}, {when_range(t['started_at'])} UTC (first and last trial start)",
         ", ".join(f"`{x}` {minutes(g['started_at'])}" for x, g in t.groupby("experiment", sort=False)) + ".",
         f"Code: commit {LAG_CODE[:7]}.")
    # the script, as it was at that commit: with no dataset named, all of them, testbed-click first, then this one
    script = committed("scripts/remeasure-testbed.sh", LAG_CODE)
    order = re.search(r'^ALL="([^"]+)"$', script, re.M).group(1).split()
    assert 'WANT=" ${*:-$ALL} "' in script and order.index(COURSE) == 1 and order[0] == "testbed-click"
    blocks = [script.index(f"if want {x}; then") for x in order]
    assert blocks == sorted(blocks)
    says(COURSE, f"`scripts/remeasure-testbed.sh OUT` (every testbed dataset: {', '.join(order)}, in that order) "
                 f"measured this dataset second, after {order[0]}, in one run of all five with one ceiling, with the "
                 "machine to itself",
         "(the files cannot show that; `docs/testbed.md`, \"Other work on the machine spoils a run unseen\", says why "
         "it matters)")
    says(COURSE, f"It replaces the polling files of {POLLING[:7]} (below, \"The polling files this run replaces\"); "
                 "the files measured with idle CPUs halting are compared at the end.")
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
         f"the router's queue: {n['router_queue_packets']} packets; the stop probe's period: "
         f"{float(n['probe_period_ms']):.0f} ms;")
    # the rule that ran: a stop keeps the queue's test, a lag does not
    src = committed("lib/routerlab/validation.py", LAG_CODE)
    assert "if accounts(longest, total):" in src and "if accounts(lag, total, queue=None):" in src
    says(COURSE, "(a stop only when it may have outlasted the router's queue; a lag however short it is next to the "
                 "queue;")
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
    for commit in (LAG_CODE, POLLING, POLL_CODE, READ_BACK, HALTING, CODE_ALONE):
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
        if x.ndr.status == "found":
            ndr = f"{pps(r['ndr_pps'])} pps"
        else:
            assert x.ndr.status == "at_least_max" and x.ndr.load == c and exp == LINUX
            ndr = f"at least {pps(x.ndr.load)} pps (no trial lost)"
        says(COURSE, f"| {name} | {pdr} | {ndr} | **{v.label}** | {reason} |")


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
    assert yours.pdr.load > ref.pdr.load and yours.ndr.load > ref.ndr.load
    assert yours.verdict.label == ref.verdict.label == "GOOD"
    for x in (yours, ref):
        assert x.saturation_load == loads[x.verdict.candidate_index]
    assert loads.index(yours.saturation_load) == loads.index(ref.saturation_load) + 1
    says(COURSE, f"The student's router has the higher PDR ({pps(yours.pdr.load)} pps against {pps(ref.pdr.load)} "
                 f"pps) and the higher NDR ({pps(yours.ndr.load)} pps against {pps(ref.ndr.load)} pps); both verdicts "
                 f"are GOOD, and its candidate saturation load is one load higher ({pps(yours.saturation_load)} pps "
                 f"against {pps(ref.saturation_load)} pps).")
    nd = ref.ndr.load
    for x in (ys, rs):
        assert (x.loc[:nd, "plr"] == 0).all()
    assert rs.loc[loads[loads.index(nd) + 1], "plr"] > 0
    says(COURSE, f"Both lose nothing up to {pps(nd)} pps.")
    # past it, the student's router loses less at the first loads, then more at every load after them
    past = [o for o in loads if o > nd]
    less = [o for o in past if ys.loc[o, "plr"] < rs.loc[o, "plr"]]
    more = [o for o in past if ys.loc[o, "plr"] > rs.loc[o, "plr"]]
    assert less and more and less + more == past

    def vs(o):
        y, r = apart(ys.loc[o, "plr"], rs.loc[o, "plr"])
        return f"{y}% against {r}% at {pps(o)} pps"
    says(COURSE, f"Past it the student's router loses less at the next {len(less)} loads ("
                 + "; ".join(vs(o) for o in less) + f") and more at the {len(more)} above them ("
                 + "; ".join(vs(o) for o in more) + "), on the trials the generator delivered (K in the table).")
    py, pr = ys["throughput_pps"].idxmax(), rs["throughput_pps"].idxmax()
    assert py == pr and ys.loc[py, "throughput_pps"] > rs.loc[pr, "throughput_pps"]
    says(COURSE, f"Its throughput (offered load × (1 - mean loss)) peaks higher: {pps(ys.loc[py, 'throughput_pps'])} "
                 f"pps against {pps(rs.loc[pr, 'throughput_pps'])} pps, both at {pps(py)} pps offered.")
    # CPU 1: within a few points up to the student's PDR load, near full above it
    cy, cr = p.loc["your-router", "cpu"], p.loc["click-reference", "cpu"]
    nx = yours.pdr.load
    low = [o for o in loads if o <= nx]
    high = [o for o in loads if o > nx]
    by = [o for o in low if cy[o] > cr[o]]
    br = [o for o in low if cy[o] < cr[o]]
    assert by == low[:len(by)] and br == low[len(by):] and len(br) == 2
    says(COURSE, f"CPU 1 read within {one(100 * max(abs(cy[o] - cr[o]) for o in low))} points under the two up to "
                 f"{pps(nx)} pps (busier under the student's router up to {pps(by[-1])} pps, under the reference "
                 f"router at {pps(br[0])} and {pps(br[1])} pps), and from {pps(high[0])} pps on both read "
                 f"{span(pd.concat([cy[high], cr[high]]), pct())}%.")
    # the student's PDR load: nothing lost in the kept trials; one attempt set aside for a lag shorter than the queue
    k = kept(t)
    y = k[(k["experiment"] == "your-router") & (k["offered_pps"] == nx)]
    assert len(y) == 5 and (y["lost"] == 0).all() and not y["disturbed"].any()
    sup = replaced()
    mine = sup[(sup["experiment"] == "your-router") & (sup["offered_pps"] == nx)]
    assert len(mine) == 1
    m = mine.iloc[0]
    again = y[y["trial"] == m["trial"]].iloc[0]
    assert again["attempt"] == 2 and (y.drop(again.name)["attempt"] == 1).all()
    v = TrialValidation()
    assert m["cause"] == "lag" and m["gen_late_ms"] <= m["queue_ms"] and m["lost"] > 0
    assert m["steal"] <= v.steal_threshold and m["cpu_stop_ms"] <= v.probe_period_ms
    lag = max(m["gen_late_ms"], m["gen_lagged_ms"])
    assert lag == m["gen_late_ms"]
    bound = m["offered_pps"] * lag / 1e3
    assert m["lost"] <= bound
    says(COURSE, f"**At the student's PDR load ({pps(nx)} pps), its router lost nothing in the {len(y)} kept "
                 f"trials.** One of them took {again['attempt']} attempts: its first lost {pps(m['lost'])} packets "
                 f"({sig2(m['lost'] / m['tx'])}%), with steal of {100 * m['steal']:.1f}% and the longest stop of the "
                 f"router's CPU read {one(m['cpu_stop_ms'])} ms, while the generator lagged {m['gen_late_ms']:.2f} "
                 f"ms, shorter than the router's {one(m['queue_ms'])}-ms queue at that load; {pps(nx)} pps over "
                 f"{lag:.2f} ms is {pps(bound)} packets, as many as it lost or more, so trial validation held the lag "
                 f"against the loss and measured the trial again, and the second attempt lost nothing.")
    # the rule before LAG_CODE held a lag only when it outlasted the queue: that attempt would have been kept
    assert "if accounts(lag, total):" in committed("lib/routerlab/validation.py", POLL_CODE)
    assert "(queue is None or longest > queue)" in committed("lib/routerlab/validation.py", POLL_CODE)
    alt = t.copy()
    i = alt[(alt["experiment"] == "your-router") & (alt["offered_pps"] == nx) & (alt["trial"] == m["trial"])].index
    assert len(i) == 1
    for col in ("tx", "rx", "lost", "sent_pps", "generator_limited"):
        alt.loc[i, col] = m[col]
    alt_a = {x.experiment: x for x in stats.assess(alt)}["your-router"]
    alt_s = alt_a.summary.set_index("offered_pps")
    assert alt_a.pdr.load == nx and alt_a.ndr.load == loads[loads.index(nx) - 1]
    says(COURSE, f"Under the rule before {LAG_CODE[:7]} (a lag had to outlast the queue) that first attempt would "
                 f"have been kept: the load's mean loss would have been {sig2(alt_s.loc[nx, 'plr'])}%, the PDR the "
                 f"same, and the NDR one load lower, {pps(alt_a.ndr.load)} pps.")
    # the reference router fails the student's PDR load by a few hundred packets
    rf = loads[loads.index(ref.pdr.load) + 1]
    assert rf == nx and rs.loc[rf, "plr"] > stats.PDR_FRACTION
    r = k[(k["experiment"] == "click-reference") & (k["offered_pps"] == rf)]
    rl = r[r["lost"] > 0].sort_values("lost", ascending=False)
    assert len(r) == 5 and not r["disturbed"].any() and (rl["attempt"] == 1).all() and rl["tx"].nunique() == 1
    # the mean of the trials' loss ratios: the lossy ones sent the same count, so it passes with the pooled loss
    tx = rl["tx"].iloc[0]
    limit = math.floor(stats.PDR_FRACTION * len(r) * tx)
    margin = int(rl["lost"].sum() - limit)
    assert abs(rs.loc[rf, "plr"] - rl["lost"].sum() / tx / len(r)) < 1e-12
    passed = rl["lost"].sum() - margin
    assert passed / tx / len(r) <= stats.PDR_FRACTION < (passed + 1) / tx / len(r)
    says(COURSE, f"**The reference router fails at {pps(rf)} pps** by a few hundred packets: it lost packets there in "
                 f"{len(rl)} trials of {len(r)} ({' and '.join(pps(x) for x in rl['lost'])}), both first attempts, "
                 f"not `disturbed`, a mean of {sig2(rs.loc[rf, 'plr'])}%, above 0.5% by {pps(margin)} packets: "
                 f"{pps(margin)} fewer lost in these {len(r)} trials would have passed the load.")
    assert 100 <= margin < 1000 and len(rl) == 2
    w = rl.iloc[0]
    wl = max(w["gen_late_ms"], w["gen_lagged_ms"])
    wb = w["offered_pps"] * wl / 1e3
    assert w["gen_late_ms"] > w["queue_ms"] and w["lost"] > wb and why(rl.iloc[:1]).eq("").all()
    says(COURSE, f"In the trial that lost {pps(w['lost'])} the generator lagged {w['gen_late_ms']:.2f} ms, longer "
                 f"than the {one(w['queue_ms'])}-ms queue, but {pps(rf)} pps over {wl:.2f} ms is {pps(wb)} packets, "
                 f"fewer than it lost, so trial validation held that loss against the router.")
    below = k[(k["experiment"] == "click-reference") & (k["offered_pps"] == ref.pdr.load)]
    bl = below[below["lost"] > 0]
    assert ref.ndr.load == loads[loads.index(ref.pdr.load) - 1] and not bl["disturbed"].any()
    says(COURSE, f"One load below, at {pps(ref.pdr.load)} pps, it lost {' and '.join(pps(x) for x in bl['lost'])} "
                 f"packets in {len(bl)} trial of {len(below)} (a mean of {sig2(rs.loc[ref.pdr.load, 'plr'])}%), "
                 f"which sets its NDR at {pps(ref.ndr.load)} pps.")
    assert len(bl) == 1
    assert (t["engine_forwarded"] == t["rx"]).all()


def test_course_linux_kernel():
    t, a = course()
    p = per_load(t).loc[LINUX]
    lk = a[LINUX]
    c = ceiling()
    v = TrialValidation()
    k = kept(t)
    k = k[k["experiment"] == LINUX]
    assert (p["loss"] == 0).all() and (k["lost"] == 0).all() and p.index.max() == c and lk.ndr.load == c
    assert stats.records([lk]).iloc[0]["pdr_status"] == "at_least_max" and lk.ndr.status == "at_least_max"
    assert a["your-router"].pdr.load > a["click-reference"].pdr.load
    says(COURSE, f"**The Linux kernel** loses nothing in any trial the generator delivered, up to the generator's "
                 f"ceiling: its NDR and its PDR are only lower bounds (at least {pps(c)} pps, the highest load), above "
                 f"the Click routers' PDRs of {pps(a['your-router'].pdr.load)} and "
                 f"{pps(a['click-reference'].pdr.load)} pps.")
    # the notebook's column: a lower bound is set against nothing
    nb = (D.parent / "notebooks" / "click-measure.ipynb")
    if nb.exists():
        assert "none: Linux's PDR is a lower bound" in nb.read_text()
    says(COURSE, "The notebook's `PDR / Linux's` column says \"none: Linux's PDR is a lower bound\"")
    # one kept trial lost packets: one the generator could not deliver, not disturbed
    mine = t[t["experiment"] == LINUX]
    lossy = mine[mine["lost"] > 0]
    assert len(lossy) == 1 and not lossy["disturbed"].any() and why(lossy).eq("").all()
    w = lossy.iloc[0]
    assert bool(w["generator_limited"])
    # its stop may have outlasted the queue, but accounts for fewer packets than it lost; its lag is not judged
    P = v.probe_period_ms
    total = max(w["cpu_stop_ms"] + P, w["cpu_stopped_ms"] + w["cpu_stops"] * P)
    bound = w["offered_pps"] * total / 1e3
    assert w["cpu_stop_ms"] > P and total > w["queue_ms"] and w["lost"] > bound and w["steal"] <= v.steal_threshold
    assert total == w["cpu_stop_ms"] + P
    assert "generator fell behind" in v.why_disturbed({**w.to_dict(), "generator_limited": False})
    says(COURSE, f"Of its {len(mine)} kept trials one lost packets: {pps(w['lost'])} ({sig2(w['lost'] / w['tx'])}%) "
                 f"at {pps(w['offered_pps'])} pps, in a trial the generator could not deliver (left out of the "
                 f"statistics, below), its {ORDINAL[int(w['attempt'])]} attempt, not `disturbed`: steal "
                 f"{100 * w['steal']:.1f}%, and the longest stop of the router's CPU read {w['cpu_stop_ms']:.2f} ms, "
                 f"which with the probe's {P:.0f}-ms period could account for {pps(bound)} packets, fewer than it "
                 f"lost (a generator-limited trial is not judged on its lag).")
    # the lossy attempts set aside: each held against a stop (some against more); the kept ones lost nothing
    sup = replaced()
    ls = sup[(sup["experiment"] == LINUX) & (sup["lost"] > 0)]
    assert ls["cause"].str.contains("stop").all() and (ls["cause"] != "stop").any()
    assert {w for x in ls["cause"] for w in x.split(" and ") if w != "stop"} == {"steal", "lag"}
    keys = set(zip(sup[sup["experiment"] == LINUX]["offered_pps"], sup[sup["experiment"] == LINUX]["trial"]))
    redone = mine[[(o, tr) in keys for o, tr in zip(mine["offered_pps"], mine["trial"])]]
    assert len(redone) == (mine["attempt"] > 1).sum() and (redone.drop(w.name)["lost"] == 0).all()
    assert w.name in redone.index
    says(COURSE, f"Trial validation set aside {len(ls)} lossy attempts of the kernel (at "
                 f"{span(ls['offered_pps'], pps)} pps, {span(ls['lost'], pps)} packets each), each held against a "
                 f"stop of the router's CPU (read {span(ls['cpu_stop_ms'], one)} ms, against queues of "
                 f"{span(ls['queue_ms'], one)} ms), some also against steal or a lag; the attempts kept in their "
                 f"place lost nothing, but for the one above.")
    # CPU 1 under the kernel
    assert p["cpu"].is_monotonic_increasing
    says(COURSE, f"**CPU 1 under the kernel** rises with the load, from {100 * p['cpu'].iloc[0]:.0f}% at "
                 f"{pps(p.index[0])} pps to {100 * p['cpu'].iloc[-1]:.0f}% at {pps(p.index[-1])} pps (the table); its "
                 f"busiest kept trial the generator delivered read {100 * k['cpu_load'].max():.1f}%.")
    every = per_load(t)
    clean = [o for o in p.index if (every.xs(o, level="offered_pps")["loss"] == 0).all()]
    nd = max(clean)
    assert clean == [o for o in p.index if o <= nd]
    times = [every.loc[(x, nd), "cpu"] / p.loc[nd, "cpu"] for x in CLICKS]
    says(COURSE, f"At {pps(nd)} pps, the highest load where no router lost a packet, the Click routers kept CPU 1 "
                 f"{span(times, one)} times as busy as the kernel did.")


def test_course_generator_limited():
    t, _ = course()
    c = ceiling()
    lim = t[t["generator_limited"].astype(bool)]
    by = lim.groupby("experiment").size().reindex(list(COURSE_NAMES), fill_value=0)
    n = t.groupby("experiment").size()
    yl = lim[lim["experiment"] == "your-router"].groupby("offered_pps").size()
    others = lim[lim["experiment"] != "your-router"]
    assert (others["offered_pps"] == c).all() and len(yl) == 2 and yl.index.max() == c
    says(COURSE, f"{by['your-router']} of `your-router`'s {n['your-router']} ("
                 + ", ".join(f"{k} at {pps(o)} pps" for o, k in yl.items()) + f"), {by['click-reference']} of "
                 f"`click-reference`'s and {by[LINUX]} of `linux-kernel`'s, all at {pps(c)} pps, the ceiling.",
         f"In them it sent {span(lim['sent_pps'], pps)} pps, and its worst lag was {span(lim['gen_late_ms'], one)} ms.")


def test_course_where_the_loss_went():
    t, _ = course()
    by = loss_rows(COURSE).groupby(["experiment", "reason"])["packets"].sum()
    lost = t.groupby("experiment")["lost"].sum()
    assert (t["lost_unexplained"] == 0).all() and (by.groupby(level=0).sum() == lost).all()
    says(COURSE, f"(`drops.csv`, all {len(t)} trials, generator-limited ones included)")
    fdname = {e: by[e].index[by[e].index.str.startswith("FromDevice@")][0] for e in CLICKS}
    assert list(by["your-router"].index) == [fdname["your-router"]]
    assert set(by["click-reference"].index) == {fdname["click-reference"], "out/Queue@1.drops", "CPU_BACKLOG"}
    fd = {e: by[e, fdname[e]] for e in CLICKS}
    assert fd["your-router"] == lost["your-router"]
    says(COURSE, f"All {pps(lost['your-router'])} packets the student's router lost went to its capture socket "
                 f"(FromDevice's `kernel_drops`); of the reference router's {pps(lost['click-reference'])}, "
                 f"{pps(fd['click-reference'])} went there, the rest to the DUT's input backlog "
                 f"({pps(by['click-reference', 'CPU_BACKLOG'])}) and its output `Queue` "
                 f"({pps(by['click-reference', 'out/Queue@1.drops'])}).",
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
             "lag": "a lag of the generator (read {} ms, queue {} ms)",
             "stop and lag": "a stop of the router's CPU and a lag of the generator"}

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
        elif c == "lag":
            w = w.format(span(x["gen_late_ms"], one), span(x["queue_ms"], one))
        rows[c] = f"| {w} | {len(x)} | {(x['lost'] > 0).sum()} | {loads(x['offered_pps'])} | {span(x['lost'], pps)} |"
    return rows


def test_course_trial_validation():
    t, _ = course()
    sup = replaced()
    assert (sup["why"] != "").all() and len(sup) == (t["attempt"] - 1).sum()
    n = sup.groupby("experiment").size().reindex(list(COURSE_NAMES), fill_value=0)
    tr = (t["attempt"] > 1).groupby(t["experiment"]).sum()
    says(COURSE, f"row of `superseded_trials.csv`) measured {len(sup)} attempts again, in {tr.sum()} trials: "
                 + ", ".join(f"{n[x]} of `{x}` ({tr[x]} trial{'s' if tr[x] != 1 else ''})" for x in COURSE_NAMES)
                 + ".")
    steal = pd.concat([t["steal"], sup["steal"]])
    says(COURSE, f"{(steal > 0.02).sum()} of the {len(steal)} attempts (kept or set aside) had steal above 2%, "
                 f"at most {100 * steal.max():.1f}%")
    rows = causes_table(sup)
    for row in rows.values():
        says(COURSE, row)
    # the table's rows are all there, in the README's order, and nothing else is
    body = text()
    at = [body.index(" ".join(r.split())) for r in rows.values()]
    assert len(set(at)) == len(rows)
    dist = t[t["disturbed"].astype(bool)]
    assert dist.empty
    says(COURSE, "Of the kept trials, none is still `disturbed` after the last attempt.")


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


def all_attempts(trials, sup) -> pd.Series:
    return attempts_of(trials.assign(experiment="all"), sup.assign(experiment="all")).loc["all"]


def form(x):
    """Each experiment's command without its ceiling and its output folder."""
    return {r.experiment: r.command.split(" --out ")[0].replace(f"--ceiling {r.generator_ceiling_pps:.0f}", "")
            for r in x.itertuples()}


def test_course_against_polling(polling):
    old, oa, oc = assessed(polling)
    oe = datasets.read_experiments(polling)
    t, a = course()
    e = datasets.read_experiments(D / COURSE)
    c = ceiling()
    # the files of POLLING: measured at POLL_CODE, idle CPUs polling, before this run
    assert set(oe["versions"]) == {f"routerlab: 0.1.0 (git {POLL_CODE[:7]})"}
    assert oe["pinning"].str.contains("; idle CPUs: poll (/dev/cpu_dma_latency 0 us held while up)", regex=False).all()
    assert "cpuidle driver" not in " ".join(oe["pinning"]) and e["pinning"].str.contains("cpuidle driver").all()
    start = pd.to_datetime(old["started_at"])
    now = pd.to_datetime(t["started_at"])
    assert start.max() < now.min() and start.dt.date.nunique() == 1
    assert form(oe) == form(e) and list(oe["kernel"]) == list(e["kernel"])
    assert set(oe["generator"]) == set(e["generator"]) and oe["generator"].nunique() == 1
    assert sorted((old["offered_pps"].unique() / oc).round(2)) == sorted((t["offered_pps"].unique() / c).round(2))
    block = [committed("scripts/remeasure-testbed.sh", x).split("if want click-course; then")[1].split("\nfi\n")[0]
             for x in (POLL_CODE, LAG_CODE)]
    assert block[0] == block[1]
    says(COURSE, f"These files replace those in git at {POLLING[:7]}, measured with idle CPUs polling too, on "
                 f"{start.min():%Y-%m-%d}, {when_range(old['started_at'])} UTC, with code {POLL_CODE[:7]} and a "
                 f"generator ceiling of {pps(oc)} pps, by the same script, commands and generator build (the same "
                 f"fractions of each run's ceiling; this run's ceiling is {100 * (c / oc - 1):.0f}% higher, so its "
                 "loads are too).")
    hours = (now.min() - start.min()).total_seconds() / 3600
    says(COURSE, f"What differed: the time of day (this run began {hours:.1f} hours later), the ceiling, and the code.")
    # the lag rule: at LAG_CODE a lag is held however short it is next to the queue; at POLL_CODE it had to outlast it
    new, before = (committed("lib/routerlab/validation.py", x) for x in (LAG_CODE, POLL_CODE))
    assert "if accounts(lag, total, queue=None):" in new and "if accounts(lag, total):" in before
    assert "if accounts(longest, total):" in new and "if accounts(longest, total):" in before
    says(COURSE, f"At {LAG_CODE[:7]} trial validation holds a lag of the generator against a loss it can account for "
                 "however short the lag is next to the router's queue; before, the lag had to outlast the queue "
                 "(stops keep that test).")
    # the attempts that rule measured again and the rule before would have kept: a lag alone, no longer than the queue
    sup = replaced()
    lag = sup[sup["cause"].str.contains("lag")]
    short = lag[lag["gen_late_ms"] <= lag["queue_ms"]]
    assert (short["cause"] == "lag").all() and len(short) == 1
    s = short.iloc[0]
    assert s["experiment"] == "your-router" and s["offered_pps"] == a["your-router"].pdr.load
    says(COURSE, f"That rule measured {len(short)} attempt again that the rule before would have kept: the "
                 f"student's router's at {pps(s['offered_pps'])} pps (above).")
    says(COURSE, f"Since {READ_BACK[:7]} the record also reads back the idle mode the kernel honours.")
    osup = replaced(polling)
    o, n = all_attempts(old, osup), all_attempts(t, sup)
    says(COURSE, f"Steal was above 2% in {int(o['high'])} of {int(o['n'])} attempts then, {int(n['high'])} of "
                 f"{int(n['n'])} now.")
    for exp, name in COURSE_NAMES.items():
        says(COURSE, f"| {name} | {pdr_words(oa[exp], oc)} → {pdr_words(a[exp], c)} | {ndr_words(oa[exp], oc)} → "
                     f"{ndr_words(a[exp], c)} | "
                     f"{oa[exp].verdict.label} → {a[exp].verdict.label} |")


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
    assert "cpu_dma_latency" in committed("lib/routerlab/testbed.py", LAG_CODE)
    says(COURSE, f"The files the polling files replaced were measured on {start.min():%Y-%m-%d}, "
                 f"{when_range(old['started_at'])} UTC, with code {CODE_ALONE[:7]} (in git at commit {HALTING[:7]}), "
                 f"on the same kernel and Click, with idle CPUs halting: that code had no CPU latency request, and "
                 f"their records' pinning ends before `idle CPUs`.")
    says(COURSE, f"Their generator ceiling was {pps(oc)} pps; this run's is {pps(c)} pps, {100 * (1 - c / oc):.0f}% "
                 f"lower. The ceiling varies between runs")
    assert form(oe) == form(e)
    assert sorted((old["offered_pps"].unique() / oc).round(2)) == sorted((t["offered_pps"].unique() / c).round(2))
    says(COURSE, "The commands were the same, with the same fractions of each run's ceiling, so the loads differ in pps.")

    # the code that reads cpu_load and steal, the same at both commits
    def reader(commit):
        src = committed("lib/routerlab/testbed.py", commit)
        return src[src.index("def cpu_times"):src.index("@dataclass\nclass Testbed")]
    assert reader(CODE_ALONE) == reader(LAG_CODE) and "def cpu_usage" in reader(LAG_CODE)
    says(COURSE, "`cpu_load` and `steal` were read the same way at both commits (`routerlab.testbed.cpu_times` and "
                 "`cpu_usage` are the same).")
    # trial validation adds up stops and lags since, and holds a lag however short: the old files lack the totals
    totals = ("cpu_stops", "cpu_stopped_ms", "gen_lagged_ms")
    assert not set(totals) & set(old.columns) and set(totals) <= set(t.columns)
    vo, vn = (committed("lib/routerlab/validation.py", x) for x in (CODE_ALONE, LAG_CODE))
    assert "cpu_stopped_ms" not in vo and "cpu_stopped_ms" in vn
    assert "queue=None" not in vo and "if accounts(lag, total, queue=None):" in vn
    says(COURSE, "Between the two commits trial validation began adding up the stops of the router's CPU and the "
                 "generator's lags over 5 ms (" + ", ".join(f"`{x}`" for x in totals) + ", columns the halting files do "
                 "not have) and holding a lag however short it is next to the queue: with them it can hold more lossy "
                 "attempts `disturbed`, never fewer.")
    gens = [x["generator"].unique() for x in (oe, e)]
    assert all(len(g) == 1 for g in gens) and gens[0][0] != gens[1][0]
    says(COURSE, f"The generator is another build (`generator`: {gens[0][0].split(' (')[0]} then, "
                 f"{gens[1][0].split(' (')[0]} now).")

    # the answers
    for exp, name in COURSE_NAMES.items():
        assert oa[exp].verdict.label == a[exp].verdict.label
        says(COURSE, f"| {name} | {pdr_words(oa[exp], oc)} → {pdr_words(a[exp], c)} | {ndr_words(oa[exp], oc)} → "
                     f"{ndr_words(a[exp], c)} | "
                     f"{oa[exp].verdict.label} → {a[exp].verdict.label} |")

    # steal and trial validation, per router and in all
    osup, nsup = replaced(halting), replaced()
    ox, nx = attempts_of(old, osup), attempts_of(t, nsup)
    oall, nall = all_attempts(old, osup), all_attempts(t, nsup)

    def row(name, o, n):
        i = {k: (int(o[k]), int(n[k])) for k in ("n", "high", "again", "trials", "disturbed")}
        return (f"| {name} | {i['n'][0]} → {i['n'][1]} | {i['high'][0]} → {i['high'][1]} | {100 * o['mean']:.1f}% → "
                f"{100 * n['mean']:.1f}% | {100 * o['max']:.1f}% → {100 * n['max']:.1f}% | {i['again'][0]} "
                f"({i['trials'][0]}) → {i['again'][1]} ({i['trials'][1]}) | {i['disturbed'][0]} → "
                f"{i['disturbed'][1]} |")
    for exp, name in COURSE_NAMES.items():
        says(COURSE, row(name, ox.loc[exp], nx.loc[exp]))
    says(COURSE, row("all three", oall, nall))
    # steal fell under the kernel; under Click it was low both times
    assert nx.loc[LINUX, "high"] < ox.loc[LINUX, "high"] and nx.loc[LINUX, "mean"] < ox.loc[LINUX, "mean"]
    assert all(ox.loc[x, "mean"] < 0.02 and nx.loc[x, "mean"] < 0.02 for x in CLICKS)
    says(COURSE, f"Under the kernel, attempts with steal above 2% fell from {ox.loc[LINUX, 'high']} of "
                 f"{ox.loc[LINUX, 'n']} to {nx.loc[LINUX, 'high']} of {nx.loc[LINUX, 'n']}, and its kept trials still "
                 f"`disturbed` from {ox.loc[LINUX, 'disturbed']} to {nx.loc[LINUX, 'disturbed']}; under the two Click "
                 f"routers (the student's, the reference) attempts with steal above 2% went from "
                 f"{ox.loc[CLICKS[0], 'high']} and {ox.loc[CLICKS[1], 'high']} to "
                 f"{nx.loc[CLICKS[0], 'high']} and {nx.loc[CLICKS[1], 'high']}.")

    # the loads nearest in pps: none within 6%; those within 11%, this run's the higher
    op, npl = per_load(old), per_load(t)
    ofr, nfr = sorted(old["offered_pps"].unique()), sorted(t["offered_pps"].unique())
    gap = min(abs(n / o - 1) for o in ofr for n in nfr)
    pairs = [(min(ofr, key=lambda o: abs(o - n)), n) for n in nfr]
    pairs = [(o, n) for o, n in pairs if abs(n / o - 1) < 0.11]
    assert len(pairs) == 3 and all(n > o for o, n in pairs)
    assert not [(o, n) for o in ofr for n in nfr if abs(n / o - 1) < 0.11 and (o, n) not in pairs]
    higher = [n / o - 1 for o, n in pairs]
    says(COURSE, f"No load of one run lies closer than {100 * gap:.1f}% in pps to a load of the other. Those within "
                 f"11% of each other, this run's {span(higher, pct(1))}% higher (share of each run's ceiling): mean "
                 f"loss (%) and CPU 1, then → now:")
    for o, n in pairs:
        cells = []
        for exp in COURSE_NAMES:
            ro, rn = op.loc[(exp, o)], npl.loc[(exp, n)]
            cells += [f"{cell(ro)} → {cell(rn)}", f"{100 * ro['cpu']:.0f}% → {100 * rn['cpu']:.0f}%"]
        says(COURSE, f"| {pps(o)} ({share(o, oc)}) → {pps(n)} ({share(n, c)}) | " + " | ".join(cells) + " |")

    # the kernel: its loss then and now
    ko, kn = kept(old), kept(t)
    ko, kn = ko[ko["experiment"] == LINUX], kn[kn["experiment"] == LINUX]
    lo, ln = ko[ko["lost"] > 0], kn[kn["lost"] > 0]
    lo_loads = sorted(lo["offered_pps"].unique())
    assert ln.empty
    above = lo[lo["offered_pps"] > c]
    within = lo[lo["offered_pps"] <= c]
    assert above["offered_pps"].nunique() == 1 and above["offered_pps"].iloc[0] not in nfr
    says(COURSE, f"**At the loads both runs covered, the kernel lost packets in no delivered trial instead of "
                 f"{len(within)}.**")
    says(COURSE, f"With idle CPUs halting the kernel lost packets in {len(lo)} trials at {len(lo_loads)} loads "
                 f"({pps(lo_loads[0])}-{pps(lo_loads[-1])} pps), {int(lo['disturbed'].sum())} of them kept "
                 f"`disturbed`; {len(above)} of the {len(lo)} were at {pps(above['offered_pps'].iloc[0])} pps, above "
                 f"this run's ceiling, a load this run never offered. Up to {pps(c)} pps it is {len(within)} trials "
                 f"({int(within['disturbed'].sum())} of them kept `disturbed`) against none.")
    ol, nl = op.loc[LINUX], npl.loc[LINUX]
    o5, n5 = next((o, n) for o, n in pairs if ol.loc[o, "loss"] > 0)
    assert nl.loc[n5, "loss"] == 0
    says(COURSE, f"At the nearest loads, at {pps(o5)} pps then it lost a mean of {sig2(ol.loc[o5, 'loss'])}%, at "
                 f"{pps(n5)} pps now nothing.")
    assert oa[LINUX].ndr.status == "found" and a[LINUX].ndr.status == "at_least_max"
    says(COURSE, f"Its NDR rose from {share(oa[LINUX].ndr.load, oc)} of the ceiling to at least "
                 f"{share(a[LINUX].ndr.load, c)} ({pps(oa[LINUX].ndr.load)} pps to at least {pps(a[LINUX].ndr.load)} "
                 f"pps, a lower bound); its PDR is a lower bound, the ceiling, both times.")
    for x in (oa, a):
        assert stats.records([x[LINUX]]).iloc[0]["pdr_status"] == "at_least_max"
    assert oa[LINUX].summary["offered_pps"].max() == oc

    # the Click routers' answers against the halting run's
    def first_loss(x, ex, undisturbed=False):
        k = kept(x)
        k = k[(k["experiment"] == ex) & (k["lost"] > 0)]
        if undisturbed:
            k = k[~k["disturbed"].astype(bool)]
        return k["offered_pps"].min()

    def first_fail(x, ex):
        s = x[ex].summary
        return s[s["plr"] > stats.PDR_FRACTION]["offered_pps"].min()
    y, r = "your-router", "click-reference"
    assert a[r].ndr.load < first_loss(old, r) and a[r].pdr.load < first_fail(oa, r)
    says(COURSE, f"The reference router's fit the halting run's: this run's NDR, {pps(a[r].ndr.load)} pps, lies below "
                 f"the first load where the halting run lost packets ({pps(first_loss(old, r))} pps), and its PDR, "
                 f"{pps(a[r].pdr.load)} pps, below the first load where the halting run's mean loss passed 0.5% "
                 f"({pps(first_fail(oa, r))} pps).")
    fy = first_loss(old, y)
    w = kept(old)
    w = w[(w["experiment"] == y) & (w["offered_pps"] == fy) & (w["lost"] > 0)]
    assert len(w) == 1 and w["disturbed"].all() and (why(w).map(cause) == "steal").all()
    w = w.iloc[0]
    assert a[y].pdr.load < first_fail(oa, y) and a[y].ndr.load > fy and first_fail(oa, y) == first_fail(oa, r)
    assert a[y].ndr.load < first_loss(old, y, undisturbed=True)
    says(COURSE, f"The student's router's PDR, {pps(a[y].pdr.load)} pps, lies below that load too, but its NDR, "
                 f"{pps(a[y].ndr.load)} pps, above the halting run's first lossy load, {pps(fy)} pps, where one trial "
                 f"lost {pps(w['lost'])} packets and was kept `disturbed` for steal of {100 * w['steal']:.1f}% after "
                 f"{w['attempt']} attempts; the halting run's first load where the student's router lost packets in a "
                 f"trial not `disturbed` is {pps(first_loss(old, y, undisturbed=True))} pps.")
    # at the nearest loads: more loss, fewer packets delivered, CPU 1 near full
    both = [(x, o, n) for x in CLICKS for o, n in pairs]
    assert all(npl.loc[(x, n), "loss"] > op.loc[(x, o), "loss"] for x, o, n in both)
    assert all(n * (1 - npl.loc[(x, n), "loss"]) < o * (1 - op.loc[(x, o), "loss"]) for x, o, n in both)
    cpus = [v for x, o, n in both for v in (op.loc[(x, o), "cpu"], npl.loc[(x, n), "cpu"])]
    says(COURSE, f"At the nearest loads (the third table) the Click routers lost more in this run in all {len(both)} "
                 f"cases, at loads {span(higher, pct(1))}% higher, with CPU 1 {span(cpus, pct())}% busy in both runs, "
                 f"and delivered fewer packets in all {len(both)} (offered load × (1 - mean loss)).")
    peaks = []
    for x in CLICKS:
        so, sn = oa[x].summary.set_index("offered_pps"), a[x].summary.set_index("offered_pps")
        po, pn = so["throughput_pps"].idxmax(), sn["throughput_pps"].idxmax()
        peaks.append((po, pn, so.loc[po, "throughput_pps"], sn.loc[pn, "throughput_pps"]))
    assert peaks[0][:2] == peaks[1][:2]
    pn = peaks[0][1]
    nxt = nfr[nfr.index(pn) + 1]
    says(COURSE, "Their highest throughput: " + ", ".join(f"{CLICK_WORDS[x]} {pps(q[2])} → {pps(q[3])} pps"
                                                         for x, q in zip(CLICKS, peaks))
         + f", at {pps(peaks[0][0])} → {pps(pn)} pps offered; this run measured no load between {pps(pn)} and "
           f"{pps(nxt)} pps.")

    # the kernel's CPU 1: busier at every one of these loads
    ratio = [npl.loc[(LINUX, n), "cpu"] / op.loc[(LINUX, o), "cpu"] for o, n in pairs]
    assert min(ratio) > 1.4
    says(COURSE, f"At the nearest loads, under the kernel CPU 1 read {span(ratio, one)} times as busy as then")
    # but the halting run's kernel readings do not rise with the load up to the first of these loads; this run's do
    early = [o for o in ofr if o <= pairs[0][0]]
    readings = [op.loc[(LINUX, o), "cpu"] for o in early]
    assert not pd.Series(readings).is_monotonic_increasing and npl.loc[LINUX, "cpu"].is_monotonic_increasing
    says(COURSE, f"But the halting run's readings under the kernel do not rise with the load up to {pps(early[-1])} "
                 f"pps ({', '.join(f'{100 * r:.0f}%' for r in readings)} at {pps(early[0])}-{pps(early[-1])} pps), as "
                 "this run's do, so they look unreliable, and so do these ratios.")
    # CPU 1 at the lowest load: a few points apart at most
    lo_o, lo_n = ofr[0], nfr[0]
    assert all(abs(npl.loc[(x, lo_n), "cpu"] - op.loc[(x, lo_o), "cpu"]) < 0.05 for x in COURSE_NAMES)
    says(COURSE, f"At the lowest load ({pps(lo_o)} → {pps(lo_n)} pps) CPU 1 read "
                 + ", ".join(f"{100 * op.loc[(x, lo_o), 'cpu']:.0f}% → {100 * npl.loc[(x, lo_n), 'cpu']:.0f}%"
                             for x in COURSE_NAMES)
                 + f" (the student's router, the reference router, the kernel): in these three cells, at loads "
                   f"{100 * (1 - lo_n / lo_o):.0f}% apart, idle polling did not show as more than a few points of "
                   f"busy time.")
    # generator-limited trials
    lim_o = old[old["generator_limited"].astype(bool)].groupby("experiment").size()
    lim_n = t[t["generator_limited"].astype(bool)].groupby("experiment").size()
    assert LINUX not in lim_o.index
    says(COURSE, f"The generator fell short in {lim_o[y]} and {lim_o[r]} of the Click routers' trials then, "
                 f"{lim_n[y]} and {lim_n[r]} now, and in none of the kernel's then, {lim_n[LINUX]} now.")
    # where the loss went: the same places, but for the student's router's backlog and Queue
    od, nd = loss_rows_of(halting), loss_rows(COURSE).groupby(["experiment", "reason"])["packets"].sum()
    assert (old["lost_unexplained"] == 0).all() and (t["lost_unexplained"] == 0).all()
    gone = set(od.index) - set(nd.index)
    assert set(nd.index) <= set(od.index) and gone == {(y, "CPU_BACKLOG"), (y, "out/Queue@1.drops")}
    says(COURSE, f"No lost packet was unexplained then or now. The same counters took them, but for the student's "
                 f"router's input backlog and output `Queue`: {pps(od[y, 'CPU_BACKLOG'])} and "
                 f"{pps(od[y, 'out/Queue@1.drops'])} packets then, none now.")
    # the closing summary
    assert nx.loc[LINUX, "again"] < ox.loc[LINUX, "again"] and len(within) > len(ln)
    says(COURSE, "So the kernel's sweep met less steal than in the halting run, was measured again less often and lost "
                 "packets in fewer trials; the Click routers' sweeps met about as little steal, lost more at loads "
                 f"{span(higher, pct(1))}% higher, and kept their verdicts.")


def test_course_points_at_the_testbed_doc():
    """The pointers at docs/testbed.md's sections (their text is another README's to keep; this checks only that
    each section the README names is there)."""
    doc = the_testbed_doc()
    for section in ("Idle CPUs poll", "Other work on the machine spoils a run unseen",
                    "Disturbed trials are measured again", "Where each lost packet went",
                    "The machine's speed changes between runs", "Steal time"):
        assert f"**{section}.**" in doc or f"## {section}" in doc, section
        says(COURSE, f"\"{section}\"")
