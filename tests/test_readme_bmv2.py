"""Every number the README of testbed-bmv2 states, recomputed from its files (see readme_checks)."""

import subprocess

import numpy as np
import pandas as pd
import pytest

from routerlab import datasets, defaults, stats, testbed, traffic
from routerlab.engines import bmv2 as bmv2_engine
from routerlab.validation import TrialValidation
from readme_checks import (idle_code_revised, lag_rule_changed, the_testbed_doc, superseded, why, BMV2, CODE_ALONE, D, HALTING, LAG_CODE, POLL_CODE,
                           POLLING, VETH, check_superseded_searches, committed, loss_rows, pct, per_load,
                           pps, previous_files, says, sig2, span, trials, attempts, notes, one, search_trials,
                           statistics_paragraph_exists)

SWEEP = "bmv2-single-flow"
#: the validation's added-up columns, new since the halting files (0a3e268, 8d9f526)
TOTALS = ["cpu_stops", "cpu_stopped_ms", "gen_lagged_ms"]
#: every file of the dataset, as the halting measurement and the polling one left them (commits HALTING, POLLING)
FILES = ("trials.csv", "experiments.csv", "search_results.csv", "search_trials.csv", "drops.csv",
         "superseded_trials.csv", "superseded_search_trials.csv")
#: the datasets ``scripts/remeasure-testbed.sh OUT`` measures, in its order: one run measured all five
FIVE = ("testbed-click", "click-course", BMV2, VETH, "comparison")
IDLE_POLL = f"; {testbed.IDLE_NOTE}poll ("
WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


def hhmm(stamps) -> str:
    """The minutes of some stamps, ``a``, ``a and b`` or ``a, b and c`` (each once)."""
    m = sorted({f"{x:%H:%M}" for x in pd.to_datetime(pd.Series(stamps))})
    return m[0] if len(m) == 1 else f"{', '.join(m[:-1])} and {m[-1]}"


def listed(items) -> str:
    """``a``, ``a and b`` or ``a, b and c``."""
    items = list(items)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def searches(folder=None) -> pd.DataFrame:
    return datasets.read_searches([folder or D / BMV2]).set_index("engine")


def script_block(script: str) -> str:
    return script.split("if want testbed-bmv2; then")[1].split("\nfi\n")[0]


def old_rule(rows: pd.DataFrame) -> pd.Series:
    """Whether the rule of the halting run (CODE_ALONE) would have found each row disturbed: the longest stop or
    lag alone (no totals), a lag too only when it outlasts the router's queue."""
    w = why(rows.drop(columns=[c for c in TOTALS if c in rows.columns]))
    return pd.Series([any(p and not (p.startswith("generator fell behind") and r["gen_late_ms"] <= r["queue_ms"])
                          for p in x.split("; ")) for x, (_, r) in zip(w, rows.iterrows())], index=rows.index)


def poll_rule(rows: pd.DataFrame) -> pd.Series:
    """Whether the rule before LAG_CODE (the polling files' code: totals, but a lag had to outlast the queue)
    would have found each row disturbed."""
    w = why(rows)
    return pd.Series([any(p and not (p.startswith("generator fell behind") and r["gen_late_ms"] <= r["queue_ms"])
                          for p in x.split("; ")) for x, (_, r) in zip(w, rows.iterrows())], index=rows.index)


def every_attempt(folder) -> pd.DataFrame:
    """Every attempt of a folder, kept or set aside, sweep or search, with a search trial's ``load`` as its
    ``offered_pps``."""
    s = search_trials(folder).rename(columns={"load": "offered_pps"})
    parts = [datasets.read(folder).trials, pd.read_csv(folder / "superseded_trials.csv"), s,
             pd.read_csv(folder / "superseded_search_trials.csv")]
    return pd.concat(parts, ignore_index=True)


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
    # idle CPUs polled while the testbed was up: the pinning's last part says so
    assert IDLE_POLL in e["pinning"] and e["pinning"].endswith(")")
    idle = testbed.IDLE_NOTE + e["pinning"].split("; " + testbed.IDLE_NOTE)[1]
    assert idle.startswith(f"{testbed.IDLE_NOTE}poll (/dev/cpu_dma_latency 0 us held while up; cpuidle driver ")
    says(BMV2, f"the record's last part, `{idle}`, says that while the testbed was up, idle CPUs polled instead of "
               f"halting")
    # the DUT's kernel forwards nothing while simple_switch runs (the engine sets it)
    engine_src = (D.parent / "lib" / "routerlab" / "engines" / "bmv2.py").read_text()
    assert '"sysctl", "-qw", "net.ipv4.ip_forward=0"' in engine_src
    says(BMV2, "the DUT's kernel does not forward (`ip_forward=0`)")
    # the build flags, as routerlab engines install builds bmv2
    builds = (D.parent / "lib" / "routerlab" / "data" / "engine-builds.yaml").read_text()
    assert "CFLAGS=-O2 CXXFLAGS=-O2" in builds and "--disable-logging-macros --disable-elogger" in builds
    says(BMV2, "bmv2 with `--disable-logging-macros --disable-elogger` and `-O2`")
    start, done = pd.to_datetime(t["started_at"]), pd.to_datetime(r["when"])
    day = f"{start.min():%Y-%m-%d}"
    assert start.dt.strftime("%Y-%m-%d").eq(day).all() and done.dt.strftime("%Y-%m-%d").eq(day).all()
    assert done.min() > start.max()
    says(BMV2, f"**When:** {day}: the sweep's trials started {start.min():%H:%M}-{start.max():%H:%M} UTC, the searches "
               f"finished at {hhmm(done)} UTC.", f"Code: commit {LAG_CODE[:7]}.")
    # the record names that commit, with nothing uncommitted
    assert e["versions"] == f"routerlab: 0.1.0 (git {LAG_CODE[:7]})"
    says(BMV2, f"`versions` in `experiments.csv`: `routerlab: 0.1.0 (git {LAG_CODE[:7]})`")
    # the script, as it was at that commit: every dataset by default, in this order, this one with two commands
    script = committed("scripts/remeasure-testbed.sh", LAG_CODE)
    order = script.split('ALL="')[1].split('"')[0].split()
    assert tuple(order) == FIVE and 'WANT=" ${*:-$ALL} "' in script
    at = [script.index(f"if want {x}; then") for x in order]
    assert at == sorted(at)
    i = order.index(BMV2)
    # one run measured all five: each one's record names the same code
    for other in FIVE:
        assert (datasets.read_experiments(D / other)["versions"] == e["versions"]).all(), other
    says(BMV2, f"`scripts/remeasure-testbed.sh OUT` measures every testbed dataset one after another "
               f"({', '.join(f'`{x}`' for x in order[:-1])} and `{order[-1]}`); one run of it at {LAG_CODE[:7]}, "
               f"from a fresh clone, measured all {WORDS[len(FIVE)]}, this one {['first', 'second', 'third', 'fourth'][i]}, "
               f"after `{order[i - 1]}` and before `{order[i + 1]}`")
    block = script_block(script)
    assert ("$R measure --engine bmv2 --scenario single-flow --loads 1000,2000,3000,5000,7500,10000,15000,20000,"
            "30000,40000 --runs 10 --duration 1 --out") in block
    assert '$R bench engines --engine linux --engine bmv2 --duration 1 --out "$B"' in block
    says(BMV2, "routerlab bench engines --engine linux --engine bmv2 --duration 1 --out datasets/testbed-bmv2")
    # the files agree: click-course's last trial before this sweep, testbed-veth's first after these searches
    assert pd.to_datetime(datasets.read(D / order[i - 1]).trials["started_at"]).max() < start.min()
    assert pd.to_datetime(datasets.read(D / order[i + 1]).trials["started_at"]).min() > done.max()
    # the other datasets' sweeps were given the script's ceiling (click-course's record, the one before, shows it);
    # these two commands measured their own
    assert '--ceiling "$C"' in script and "--ceiling" not in block
    cc = datasets.read_experiments(D / order[i - 1])
    (c,) = cc["generator_ceiling_pps"].unique()
    assert cc["command"].str.contains(f"--ceiling {c:.0f} ", regex=False).all()
    says(BMV2, f"Neither command was given the ceiling the script measured at its start for the other datasets' "
               f"sweeps ({pps(c)} pps, as `{order[i - 1]}`'s `experiments.csv` records it): each measured the "
               f"generator's ceiling itself")
    n = notes(e)
    assert n["capture_drops"] == "on" and n["egress_queue_drops"] == "on" and n["loss_attribution"] == "on"
    says(BMV2, "(`capture_drops=on` and `egress_queue_drops=on` in the notes")
    # the validation's settings, the same in the sweep's notes and in both searches' results
    for k in ("router_queue_packets", "steal_threshold", "probe_period_ms", "max_repeats"):
        assert (r[k].astype(float) == float(n[k])).all(), k
    # the rule, as the measured code has it: a stop must outlast the queue, a lag need not
    val = committed("lib/routerlab/validation.py", LAG_CODE)
    assert "if accounts(longest, total):" in val and "if accounts(lag, total, queue=None):" in val
    says(BMV2, f"up to {int(n['max_repeats'])} times, when its steal is above {float(n['steal_threshold']):.0%}",
         f"a stop longer than the probe's {float(n['probe_period_ms']):g} ms period and than the router's queue "
         f"lasts at that load, a lag longer than the probe's period however short next to the queue, and the loss "
         f"no more than the packets offered during it or, if more, during all the stops (or lags) over "
         f"{traffic.STOP_TOTAL_OVER_MS:g} ms added up",
         f"The validation takes the router's queue as {n['router_queue_packets']} packets "
         f"(`router_queue_packets={n['router_queue_packets']}` in the notes)")
    assert r["generator_ceiling_pps"].nunique() == 1
    says(BMV2, f"{pps(e['generator_ceiling_pps'])} pps before the sweep (its loads are absolute, so it only serves "
               f"the record) and {pps(r['generator_ceiling_pps'].iloc[0])} pps before the searches.")
    loads = ",".join(f"{x:.0f}" for x in sorted(t["offered_pps"].unique()))
    assert e["command"].startswith(f"routerlab measure --engine bmv2 --scenario single-flow --loads {loads} "
                                   "--runs 10 --duration 1 --out ")
    assert e["command"].endswith(f"/{BMV2}")
    runs = e["command"].split("--runs ")[1].split(" --out ")[0]
    says(BMV2, f"--loads {loads}", f"--runs {runs} --out datasets/{BMV2}")
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
    cols = ["cpu_stop_ms", "cpu_stops", "cpu_stopped_ms", "gen_late_ms", "gen_lagged_ms", "queue_ms", "attempt",
            "disturbed"]
    assert set(cols) <= set(t.columns)
    says(BMV2, f"and the validation's ({', '.join(f'`{c}`' for c in cols)})")
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
    s = search_trials(D / BMV2)
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
    says(BMV2, f"the {len(old)} search attempt{'s that were' if len(old) != 1 else ' that was'} measured again")
    check_superseded_searches(s, old)
    # (check_superseded_searches matched each attempt's probe to the row of that index, counted from 0)
    says(BMV2, "`probe` (the trial's row in `search_trials.csv`, from 0, within its experiment)")


def test_bmv2_searches():
    r = searches()
    ceiling = r["generator_ceiling_pps"].iloc[0]
    assert not r["generator_bound"].any() and not r["limited_by_generator"].any()
    says(BMV2, f"| linux | {r.loc['linux', 'answer']} |", f"| bmv2 (router.p4) | {r.loc['bmv2', 'answer']} |",
         f"a generator ceiling of {pps(ceiling)} pps")
    # linux: a lower bound (the search passed the ceiling last), so the ratio is an upper bound
    assert pd.isna(r.loc["linux", "upper_pps"]) and r.loc["linux", "lower_pps"] == ceiling
    says(BMV2, f"carries at most {100 * r.loc['bmv2', 'lower_pps'] / r.loc['linux', 'lower_pps']:.1f}% of what "
               f"Linux carries")
    s = search_trials(D / BMV2)
    lx = s[s["engine"] == "linux"]
    assert not lx["generator_limited"].any()
    says(BMV2, "None of its trials was generator-limited.")
    short, final = lx[lx["phase"] == "short"], lx[lx["phase"] == "final"]
    assert list(final["load"]) == [ceiling] * 3 and (final["lost"] == 0).all()
    at = short[np.isclose(short["load"], ceiling)]
    assert len(at) == 1 and at["passed"].all() and short["passed"].all() and (at["lost"] == 0).all()
    assert len(short) == 2 and short.index[1] == at.index[0] and list(lx.index[:2]) == list(short.index)
    says(BMV2, f"Its first trial was a {short['duration'].iloc[0]:g}-s trial at {pps(short['load'].iloc[0])} pps; its "
               f"second went to the ceiling: that {at['duration'].iloc[0]:g}-s trial and then its three 1-s trials at "
               f"{pps(ceiling)} pps lost nothing")
    # bmv2: none of its trials generator-limited, not even the short one at the ceiling, which lost nearly all
    b = s[s["engine"] == "bmv2"]
    assert not b["generator_limited"].any()
    top = b[np.isclose(b["load"], ceiling)]
    assert len(top) == 1 and (top["phase"] == "short").all() and not top["passed"].any()
    says(BMV2, f"None of its {len(b)} trials was generator-limited, its {top['duration'].iloc[0]:g}-s trial at the "
               f"ceiling included (it lost {sig2(top['loss'].iloc[0])}%), and `search_results.csv` marks neither "
               f"search `limited_by_generator`.",
         f"Its precision is {100 * r.loc['bmv2', 'precision']:.1f}%: it failed {pps(r.loc['bmv2', 'upper_pps'])} pps.")


def test_bmv2_linux_in_testbed_veth():
    """The Linux searches of testbed-veth as it is now: measured right after this dataset, in the same run."""
    vt, ve = datasets.read(D / VETH).trials, datasets.read_experiments(D / VETH)
    vr = datasets.read_searches([D / VETH])
    began, done = pd.to_datetime(vt["started_at"]).min(), pd.to_datetime(vr["when"]).max()
    assert began > pd.to_datetime(datasets.read_searches([D / BMV2])["when"]).max()
    assert (ve["versions"] == f"routerlab: 0.1.0 (git {LAG_CODE[:7]})").all()
    assert ve["pinning"].str.contains(IDLE_POLL, regex=False).all()
    lx = vr[(vr["engine"] == "linux") & (vr["kind"] == "pdr") & (vr["method"] == "routerlab")].sort_values("when")
    assert len(lx) == 3
    b = datasets.search_pdr(lx).assign(ceiling=lx["generator_ceiling_pps"].to_numpy(),
                                       experiment=lx["experiment"].to_numpy())
    assert b["at_least"].all()
    top, lim = b[b["bound"] == "passed at the ceiling"], b[b["bound"] == "limited by the generator"]
    assert len(top) == 2 and len(lim) == 1 and (top["pdr_pps"] == top["ceiling"]).all()
    (x,) = lim.itertuples()
    assert x.experiment.startswith("bench-pdr-") and x.pdr_pps < x.ceiling  # bench engines' search
    says(BMV2, f"**In `testbed-veth`, measured right after in the same run** ({began:%H:%M}-{done:%H:%M} UTC), "
               f"Linux's three PDR@0.5% searches each gave a lower bound too: two passed at the generator's ceiling "
               f"({listed(pps(v) for v in top['ceiling'])} pps), and the third, `bench engines`' at a ceiling of "
               f"{pps(x.ceiling)} pps, answered at least {pps(x.pdr_pps)} pps, limited by the generator.")


def bmv2_row(s, sent, lo, hi):
    g, m = s.loc[lo:hi], sent.loc[lo:hi]
    # "= offered" only where the median trial carried every packet it was sent
    carried = "= offered" if (m["rx"] >= m["tx"]).all() else span(g["rx_pps"], pps)
    loss, worst = span(g["loss"], sig2), span(g["worst"], sig2)
    pc = "" if loss == "0" else "%"
    loads = pps(lo) if lo == hi else f"{pps(lo)}-{pps(hi)}"
    return f"| {loads} | {loss}{pc} | {worst}{pc if worst != '0' else ''} | {carried} | {span(g['cpu'], pct())}% |"


def table_rows(s, sent):
    """The sweep's table: each lossless run of successive loads in one row, every other load in its own."""
    o, rows, i = list(s.index), [], 0
    while i < len(o):
        j = i
        while s.loc[o[i], "worst"] == 0 and j + 1 < len(o) and s.loc[o[j + 1], "worst"] == 0:
            j += 1
        rows.append(bmv2_row(s, sent, o[i], o[j]))
        i = j + 1
    return rows


def test_bmv2_sweep():
    t = trials(BMV2)
    s = per_load(BMV2).loc[SWEEP]
    assert not t["limited"].any()
    says(BMV2, "The sweep (no trial was generator-limited):")
    o = list(s.index)
    assert o == [1_000, 2_000, 3_000, 5_000, 7_500, 10_000, 15_000, 20_000, 30_000, 40_000]
    sent = t.groupby("offered_pps")[["rx", "tx"]].median()
    says(BMV2, *table_rows(s, sent))
    # "= offered": the loads whose median trial delivered all it was sent; the generator sends whole batches
    batch = int(datasets.read_experiments(D / BMV2).iloc[0]["generator"].split("sendmmsg batch ")[1].split(")")[0])
    assert (t["tx"] == np.ceil(t["offered_pps"] * t["duration_s"] / batch) * batch).all()
    assert (t["duration_s"] == 1).all()
    full = [x for x in o if sent.loc[x, "rx"] >= sent.loc[x, "tx"]]
    assert full == o[:len(full)]
    says(BMV2, f"\"Median throughput\" is what the median trial delivered: the packets the sink received per second. "
               f"\"= offered\" means the median trial delivered every packet it was sent; the generator sends whole "
               f"{batch}-packet batches, so at {pps(full[0])}-{pps(full[-1])} pps a 1-s trial sent "
               f"{span(sent.loc[full, 'tx'], pps)} packets, a little more than the nominal load. The verdict below "
               f"uses the statistics' throughput instead: offered × (1 - mean loss), from the mean loss over the "
               f"load's trials.")
    x = stats.assess(datasets.read(D / BMV2).trials)[0]
    v = x.verdict
    summ = x.summary.set_index("offered_pps")
    first = summ[summ["plr"] > stats.PDR_FRACTION].index[0]
    assert list(summ.index) == o
    assert v.good and o[v.pdr_index] == first and v.candidate_index == v.pdr_index + 1
    c = o[v.candidate_index]
    assert v.saturation_index == v.candidate_index and x.saturation_load == c == o[-1]
    tp = summ["throughput_pps"]
    says(BMV2, f"Its verdict is **{v.label}** ({v.why})",
         f"on this grid its PDR@0.5% is {pps(x.pdr.load)} pps and loss first passes 0.5% at {pps(first)} pps; at the "
         f"next load, {pps(c)} pps, the candidate saturation point and the grid's highest, the throughput (offered × "
         f"(1 - mean loss)) rose from {pps(tp.loc[first])} to {pps(tp.loc[c])} pps, {v.tir[v.candidate_index]:.3f} "
         f"pps per pps of added load (TIR), below the {v.params.eta * v.params.entry_multiplier:g} that saturation "
         f"needs, so the test finds saturation there. No load above it was offered, so nothing here tests that the "
         f"throughput stays flat beyond it.")
    # the median trial
    med = t.groupby("offered_pps")["loss"].median()
    fails = med[med > stats.PDR_FRACTION]
    f0 = fails.index[0]
    assert list(fails.index) == [x for x in med.index if x >= f0] and f0 == first
    last = med[med.index < f0].index[-1]
    at = t[t["offered_pps"] == f0]["loss"]
    says(BMV2, f"The median trial lost {sig2(med.loc[last])}% at {pps(last)} pps and "
               f"{span(fails, sig2)}% at {pps(f0)}-{pps(fails.index[-1])} pps: on its median trial the sweep passes "
               f"every load up to {pps(last)} pps and fails from {pps(f0)} pps, where "
               f"{(at > stats.PDR_FRACTION).sum()} of the {len(at)} trials lost more than 0.5%")
    # the search agrees: its answer and its failing load lie between the sweep's last passing and first failing load
    r = searches()
    assert pd.to_datetime(r["when"]).min() > pd.to_datetime(t["started_at"]).max()  # later in the same run
    lo, hi = r.loc["bmv2", "lower_pps"], r.loc["bmv2", "upper_pps"]
    assert last < lo < hi < f0
    st = search_trials(D / BMV2)
    b = st[(st["engine"] == "bmv2") & (st["phase"] == "final")]
    ans, bad = b[np.isclose(b["load"], lo)], b[np.isclose(b["load"], hi)]
    assert len(ans) == 3 and len(bad) == 3
    says(BMV2, f"The search, which passes a load on its median trial, agrees: its answer, {r.loc['bmv2', 'answer']}, "
               f"and the load it failed, {pps(hi)} pps, both lie between those two loads. Its three 1-s trials at "
               f"{pps(lo)} pps lost {', '.join(sig2(x) + '%' for x in ans['loss'])}; at {pps(hi)} pps "
               f"{', '.join(sig2(x) + '%' for x in bad['loss'])}.")


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
    per = again.groupby("offered_pps").size()
    says(BMV2, "They were at " + listed(f"{pps(x)} pps ({n})" for x, n in per.items()) + ".")
    dist = t[t["disturbed"].astype(bool)]
    assert dist.empty and (why(t) == "").all()
    says(BMV2, "None of the kept trials is `disturbed`: each trial measured again had an undisturbed attempt within "
               "its 3 repeats.",
         f"The mean steal of a kept trial was {100 * t['steal'].mean():.2f}%, the largest "
         f"{100 * t['steal'].max():.1f}%.")
    # the queue: the kernel's backlog, long at these loads
    lossy = t[t["lost"] > 0]
    q = int(notes(e)["router_queue_packets"])
    assert ((lossy["queue_ms"] - q / lossy["offered_pps"] * 1e3).abs() < 1e-3).all()
    assert lossy["cpu_stop_ms"].max() + v.probe_period_ms < lossy["queue_ms"].min()
    says(BMV2, f"bmv2's queue** is taken as the kernel's {q}-packet backlog, which lasts "
               f"{span(lossy['queue_ms'], lambda x: f'{x:.0f}')} ms at the loads that lost packets "
               f"({pps(lossy['offered_pps'].min())}-{pps(lossy['offered_pps'].max())} pps); no lossy trial read a stop "
               f"that long (at most {one(lossy['cpu_stop_ms'].max())} ms)")
    # the lags: held however short, but each too short to have offered the packets lost
    lag = lossy[lossy["gen_late_ms"] > v.probe_period_ms]
    assert len(lag) and (lag["gen_late_ms"] < lag["queue_ms"]).all()
    assert (lag["lost"] > lag["offered_pps"] * lag[["gen_late_ms", "gen_lagged_ms"]].max(axis=1) / 1e3).all()
    says(BMV2, f"{len(lag)} lossy trials read a lag of the generator longer than the probe's period "
               f"({span(lag['gen_late_ms'], one)} ms, all shorter than the queue), and each lost more packets than were "
               f"offered during its lags")
    d = datasets.read_drops([D / BMV2])
    assert not d["reason"].str.contains("BACKLOG").any()
    says(BMV2, "bmv2 does not lose packets in that backlog but at its capture socket and egress queue")
    # with no queue at all: the lossy trials kept as clean that a stop or lag would then have caught
    clean = lossy[~lossy["disturbed"].astype(bool)]
    caught = clean[[v.disturbed({**r, "queue_ms": 0.0}) for r in clean.to_dict("records")]]
    read = clean[(clean["cpu_stop_ms"] > v.probe_period_ms) | (clean["gen_late_ms"] > v.probe_period_ms)]
    assert len(caught) == 1 and len(read) > 1
    (c,) = caught.itertuples()
    # caught by its stop alone: one stop, no lag, a loss within what was offered while the CPU may have stopped
    longest = c.cpu_stop_ms + v.probe_period_ms
    assert c.gen_late_ms <= v.probe_period_ms and c.cpu_stops == 0 and c.lost <= c.offered_pps * longest / 1e3
    assert not v.disturbed({**c._asdict(), "queue_ms": longest}) and c.queue_ms > longest
    says(BMV2, f"Had the queue counted as nothing, {len(caught)} of the {len(clean)} lossy trials kept as clean would "
               f"have been measured again: the one at {pps(c.offered_pps)} pps that lost {c.lost} packets with a stop "
               f"read as {one(c.cpu_stop_ms)} ms (up to {one(longest)} ms, during which "
               f"{pps(c.offered_pps * longest / 1e3)} packets were offered), against {c.queue_ms:.0f} ms of queue. The "
               f"other {len(read) - len(caught)} that read a stop or a lag longer than the probe's "
               f"{v.probe_period_ms:g} ms period lost more packets than were offered during their stops and lags.")


def test_bmv2_validation_of_the_searches():
    old = superseded(BMV2, "superseded_search_trials.csv")
    assert (old["why"] != "").all() and old["disturbed"].all()
    s = search_trials(D / BMV2)
    b, bs = old[old["engine"] == "bmv2"], s[s["engine"] == "bmv2"]
    lx, ls = old[old["engine"] == "linux"], s[s["engine"] == "linux"]
    assert len(b) == len(old) == 1 and lx.empty
    (x,) = b.itertuples()
    assert x.why == f"steal {x.steal:.1%} > 2.0%" and not bs["disturbed"].any()
    says(BMV2, f"**The searches: {len(old)} attempt measured again**, bmv2's, in {b['probe'].nunique()} of its "
               f"{len(bs)} trials, for steal above 2% ({100 * x.steal:.2f}%); none of its kept trials is `disturbed`.")
    # it also read a lag shorter than the queue, too short to have offered what it lost
    assert v_lag(x) and x.gen_late_ms <= x.queue_ms and x.lost > x.offered_pps * x.gen_lagged_ms / 1e3
    kept = bs[bs["probe"] == x.probe]
    assert len(kept) == 1 and kept["passed"].all() and np.isclose(kept["load"].iloc[0], x.offered_pps)
    three = bs[np.isclose(bs["load"], x.offered_pps)]
    assert len(three) == 3 and three["passed"].all() and x.lost / x.tx > stats.PDR_FRACTION
    says(BMV2, f"That attempt, a 1-s trial at {pps(x.offered_pps)} pps, lost {pps(x.lost)} packets "
               f"({sig2(x.lost / x.tx)}%) and would have failed; it also read a {one(x.gen_late_ms)}-ms lag of the "
               f"generator ({one(x.gen_lagged_ms)} ms in all), shorter than the {one(x.queue_ms)}-ms queue, but only "
               f"{pps(x.offered_pps * x.gen_lagged_ms / 1e3)} packets were offered during its lags, fewer than it "
               f"lost, so the steal alone set it aside. The attempt kept in its place lost "
               f"{sig2(kept['loss'].iloc[0])}% and passed, as did the load's other two trials.")
    # linux: nothing set aside, nothing disturbed; one trial read a lag longer than its queue but lost nothing
    assert not ls["disturbed"].any() and (ls["attempt"] == 1).all()
    big = ls[ls["gen_late_ms"] > ls["queue_ms"]]
    assert len(big) == 2 and (big["lost"] == 0).all() and (big["phase"] == "final").all()
    assert big["queue_ms"].nunique() == 1
    says(BMV2, f"Linux's search measured none of its {len(ls)} trials again, and none of its kept trials is "
               f"`disturbed`: two of its 1-s trials at the ceiling read lags of the generator "
               f"({listed(one(x) for x in sorted(big['gen_late_ms']))} ms) longer than the "
               f"{one(big['queue_ms'].iloc[0])}-ms queue, but lost nothing, and a stop or a lag is held only against a "
               f"loss.")


def v_lag(x) -> bool:
    """Whether an attempt read a lag of the generator longer than the probe's period."""
    return x.gen_late_ms > TrialValidation().probe_period_ms


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
    by = egr.groupby("offered_pps")["packets"].sum()
    only = [x for x in lossy if x not in by.index]
    n_only = t[t["offered_pps"].isin(only)]["lost"].sum()
    assert n_only == cap[cap["offered_pps"].isin(only)]["packets"].sum()
    says(BMV2, f"Every packet lost at {listed(pps(x) for x in only)} pps ({pps(n_only)}) was counted there.")
    # below the first load with egress-queue loss, few trials lost packets, and few
    first_egr = by.index[0]
    band = t[t["offered_pps"] < first_egr]
    hit = band[band["lost"] > 0]
    per = hit.groupby("offered_pps")["lost"].apply(lambda x: listed(f"{v:.0f}" for v in x))
    quiet = [x for x in band["offered_pps"].unique() if x > hit["offered_pps"].min() and x not in per.index]
    says(BMV2, f"Below {pps(first_egr)} pps {len(hit)} of the {len(band)} trials lost packets: "
               + "; ".join(f"{v} at {pps(x)} pps" for x, v in per.items())
               + f"; none at {listed(pps(x) for x in quiet)} pps.")
    # the egress queue: at few loads, more at the top
    top = by.index[-1]
    gaps = [x for x in lossy if first_egr < x < top and x not in by.index]
    says(BMV2, f"**At its egress queue, at {listed(pps(x) for x in by.index)} pps.**",
         f"It dropped {listed(pps(x) for x in by)} packets at {listed(pps(x) for x in by.index)} pps (none at "
         f"{listed(pps(x) for x in gaps)} pps): {100 * by.iloc[-1] / t[t['offered_pps'] == top]['lost'].sum():.0f}% of "
         f"the loss at {pps(top)} pps")
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
    # the same run: the comparison's, the last of the five, right after testbed-veth
    ct = pd.to_datetime(datasets.read(D / "comparison").trials["started_at"])
    assert (e["versions"] == f"routerlab: 0.1.0 (git {LAG_CODE[:7]})").all()
    assert ct.min() > pd.to_datetime(datasets.read(D / VETH).trials["started_at"]).max()
    says(BMV2, f"In the comparison's two 900k-route cells on bmv2 it loaded "
               f"{span([int(x['entries']) for x in n], lambda v: f'{v:,}')} entries in "
               f"{span([float(x['entries_load_s']) for x in n], one)} s (`datasets/comparison/experiments.csv`, "
               f"the same run, last: {ct.min():%Y-%m-%d %H:%M}-{ct.max():%H:%M} UTC)",
         f"routerlab chose to cap bmv2's route tables at {bmv2_engine.ROUTE_LIMIT:,} entries (`ROUTE_LIMIT` in "
         f"`lib/routerlab/engines/bmv2.py`), to keep the loading short: a 900k-route scenario on bmv2 loads "
         f"{bmv2_engine.ROUTE_LIMIT // 1000}k routes",
         "`routes_loaded` and `routes_note` in the comparison's `experiments.csv` say so")


def test_bmv2_terms():
    x = stats.assess(datasets.read(D / BMV2).trials)[0]
    p = x.verdict.params
    assert (p.eta, p.entry_multiplier) == (defaults.ETA, defaults.ENTRY_MULTIPLIER)
    statistics_paragraph_exists()  # the section the terms cite
    assert x.verdict.good
    says(BMV2, "**Terms** (the main `README.md`, \"The statistics, in one paragraph\", defines them):",
         "**K** = the trials the statistics count at that load (generator-limited ones left out).",
         f"**PDR@{defaults.PDR_FRACTION:.1%}** (PDR): the highest load such that it and every lower load lose at most "
         f"{defaults.PDR_FRACTION:.1%} (the *PDR fraction*): on average over the load's trials in a sweep, on the "
         f"median trial in a search.",
         f"**Verdict**: take the sweep's first load whose mean loss is above {defaults.PDR_FRACTION:.1%}; the load "
         f"after it is the candidate saturation point. **GOOD** when the TIR is below {p.eta * p.entry_multiplier:g} "
         f"there (and below {p.eta:g} at every later load); **BAD** when it is not, or when no load (or only the "
         f"highest) lost more than {defaults.PDR_FRACTION:.1%} on average. It is a verdict on the sweep, not on the "
         f"router: \"GOOD\" below means the sweep showed bmv2 saturating right after the load where its loss first "
         f"passed {defaults.PDR_FRACTION:.1%}, not that bmv2 forwards well.")


def test_bmv2_points_at_the_testbed_doc():
    doc = the_testbed_doc()
    for section in ("Where each lost packet went", "Disturbed trials are measured again", "Idle CPUs poll",
                    "Other work on the machine spoils a run unseen", "The machine's speed changes between runs"):
        assert section in doc, section
        says(BMV2, f"`docs/testbed.md`, \"{section}\"")


@pytest.fixture
def halting(tmp_path):
    """The files measured with idle CPUs halting (commit HALTING), in a folder of their own."""
    return previous_files(BMV2, tmp_path, files=FILES, commit=HALTING)


@pytest.fixture
def polling(tmp_path):
    """The files this data replaced, measured with idle CPUs polling and the old lag rule (commit POLLING)."""
    return previous_files(BMV2, tmp_path, files=FILES, commit=POLLING)


def test_bmv2_replaces_the_polling_files(polling):
    """What these files replaced (commit POLLING), what differed, and what the new lag rule set aside."""
    pe, e = datasets.read_experiments(polling).iloc[0], datasets.read_experiments(D / BMV2).iloc[0]
    pt, t = trials(datasets.read(polling).trials), trials(BMV2)
    pr, r = searches(polling), searches()
    # the same commands, the same day, idle CPUs polling too; the code before the new lag rule
    assert pe["versions"] == f"routerlab: 0.1.0 (git {POLL_CODE[:7]})" and IDLE_POLL in pe["pinning"]
    assert pe["command"].split(" --out ")[0] == e["command"].split(" --out ")[0]
    assert pe["engine_version"] == e["engine_version"] and pe["kernel"] == e["kernel"]
    ps, pd_ = pd.to_datetime(pt["started_at"]), pd.to_datetime(pr["when"])
    assert {f"{x:%Y-%m-%d}" for x in pd.concat([ps, pd_])} == {f"{x:%Y-%m-%d}" for x in pd.to_datetime(t["started_at"])}
    says(BMV2, f"These files replace those of a run of the same commands earlier that day, also with idle CPUs polling "
               f"(in git at commit {POLLING[:7]}: the sweep's trials started {ps.min():%H:%M}-{ps.max():%H:%M} UTC, "
               f"the searches finished at {hhmm(pd_)} UTC; code {POLL_CODE[:7]})")
    # the rule: the one commit to validation.py between the two codes drops the queue's test for lags
    says(BMV2, lag_rule_changed())
    # the attempts set aside here for a lag no longer than the queue: none; the rule before judges all alike
    s = pd.concat([pd.read_csv(D / BMV2 / "superseded_trials.csv"),
                   pd.read_csv(D / BMV2 / "superseded_search_trials.csv")], ignore_index=True)
    w = why(s)
    assert (w != "").all()
    short = [any(p.startswith("generator fell behind") for p in x.split("; ")) and g <= q
             for x, g, q in zip(w, s["gen_late_ms"], s["queue_ms"])]
    assert sum(short) == 0
    now = every_attempt(D / BMV2)
    assert ((why(now) != "") == poll_rule(now)).all()
    says(BMV2, f"None of the {len(s)} attempts set aside here was set aside for a lag shorter than the queue, and the "
               f"rule before would have judged every attempt here alike, kept or set aside.")
    # the rule now, on that run's attempts: one it kept would have been measured again
    then = every_attempt(polling)
    wt = why(then)
    diff = then[(wt != "") != poll_rule(then)]
    assert len(diff) == 1
    (x,) = diff.itertuples()
    assert wt[x.Index].startswith("generator fell behind") and ";" not in wt[x.Index]
    assert x.engine == "linux" and x.phase == "short" and x.passed and not x.disturbed and x.attempt == 1
    assert np.isclose(x.offered_pps, pr.loc["linux", "generator_ceiling_pps"]) and x.gen_late_ms <= x.queue_ms
    says(BMV2, f"The rule now would have judged one attempt of that run otherwise: Linux's {x.duration:g}-s search "
               f"trial at that run's ceiling ({pps(x.offered_pps)} pps), which lost {pps(x.lost)} packets "
               f"({sig2(x.lost / x.tx)}%) behind a {one(x.gen_late_ms)}-ms lag against {one(x.queue_ms)} ms of queue, "
               f"passed and was kept; now it would have been measured again. Every other attempt of that run it "
               f"would have judged alike.")
    # what else differed: the time of day, the ceilings, the testbed's code for idle CPUs
    says(BMV2, f"the generator's ceilings ({pps(pe['generator_ceiling_pps'])} pps before the sweep then, "
               f"{pps(e['generator_ceiling_pps'])} now; {pps(pr['generator_ceiling_pps'].iloc[0])} and "
               f"{pps(r['generator_ceiling_pps'].iloc[0])} pps before the searches)")
    tb_old, tb_new, revised_idle = idle_code_revised()
    assert "cpuidle driver" not in tb_old and "cpuidle driver" not in pe["pinning"] and "cpuidle driver" in e["pinning"]
    says(BMV2, revised_idle)
    # what came out differently
    px, nx = stats.assess(datasets.read(polling).trials)[0], stats.assess(datasets.read(D / BMV2).trials)[0]
    up = r.loc["bmv2", "lower_pps"] / pr.loc["bmv2", "lower_pps"] - 1
    assert up > 0 and nx.pdr.load > px.pdr.load
    pb, nb = datasets.search_pdr(pr.reset_index()).set_index("engine"), datasets.search_pdr(r.reset_index()).set_index("engine")
    assert pb.loc["linux", "bound"] == nb.loc["linux", "bound"] == "passed at the ceiling"
    says(BMV2, f"bmv2's search answered {pps(pr.loc['bmv2', 'lower_pps'])} pps then and "
               f"{pps(r.loc['bmv2', 'lower_pps'])} now ({100 * up:.0f}% more), and the sweep's verdict was "
               f"**{px.verdict.label}** with a PDR@0.5% of {pps(px.pdr.load)} pps then, **{nx.verdict.label}** with "
               f"{pps(nx.pdr.load)} pps now; Linux passed each run's ceiling. These files cannot say what made the "
               f"difference.")
    # the polling files replaced the halting ones (which stay in git at HALTING)
    msg = subprocess.run(["git", "-C", str(D.parent), "log", "-1", "--format=%B", POLLING, "--",
                          f"datasets/{BMV2}/trials.csv"], capture_output=True, text=True, check=True).stdout
    assert f"the halting files they replace stay in git at {HALTING[:7]}" in msg
    says(BMV2, "The files measured with idle CPUs halting, which the polling files replaced, are compared at the end.")


def with_loss(t: pd.DataFrame) -> pd.DataFrame:
    return t.assign(loss=t["lost"] / t["tx"], rx_pps=t["rx"] / t["duration_s"])


def test_bmv2_against_halting(halting):
    oe, ne = datasets.read_experiments(halting).iloc[0], datasets.read_experiments(D / BMV2).iloc[0]
    ot, nt = with_loss(datasets.read(halting).trials), trials(BMV2)
    o_r, n_r = datasets.read_searches([halting]).set_index("engine"), searches()
    # then: the machine to itself, CPUs halting (the pinning had no idle part), code 0d06652 (readme_checks' record)
    assert "idle CPUs" not in oe["pinning"] and IDLE_POLL in ne["pinning"]
    start = pd.to_datetime(ot["started_at"])
    assert start.max() < pd.to_datetime(nt["started_at"]).min()
    says(BMV2, f"The files measured with idle CPUs halting were measured on {start.min():%Y-%m-%d} from "
               f"{start.min():%H:%M} UTC with code {CODE_ALONE[:7]} (in git at commit "
               f"{HALTING[:7]}), also with the machine to itself (the files cannot show that either), while idle CPUs "
               f"halted: its `pinning` has no "
               f"`{testbed.IDLE_NOTE.strip()}` part.")
    assert oe["engine_version"] == ne["engine_version"] and oe["kernel"] == ne["kernel"]
    assert oe["command"].split(" --out ")[0] == ne["command"].split(" --out ")[0]
    assert sorted(ot["offered_pps"].unique()) == sorted(nt["offered_pps"].unique())
    says(BMV2, "Same bmv2 and p4c builds, same kernel, same commands, so both sweeps offered the same loads",
         f"| | idle CPUs halting ({start.min():%Y-%m-%d}) | idle CPUs polling "
         f"({pd.to_datetime(nt['started_at']).min():%Y-%m-%d}) |")
    # the generator's build differs (it counts its lags now)
    og, ng = oe["generator"].split()[1], ne["generator"].split()[1]
    assert og != ng
    rlgen = committed("lib/routerlab/csrc/rlgen.c", LAG_CODE)
    assert "RESULT-lagged_ms" in rlgen and "RESULT-lagged_ms" not in committed("lib/routerlab/csrc/rlgen.c", CODE_ALONE)
    assert "cpu_stopped_ms" not in committed("lib/routerlab/validation.py", CODE_ALONE)
    says(BMV2, f"the code differs in three ways: the generator's build (`rlgen {og}` then, `rlgen {ng}` now), which "
               f"now also adds up its lags; the validation, which now adds up the stops and the lags; and, since "
               f"{LAG_CODE[:7]}, the validation's lag rule (above).")
    o_loads = sorted(set(datasets.read_kind(halting, "search_trials.csv")["load"].round()))
    assert o_loads != sorted(set(search_trials(D / BMV2)["load"].round()))
    says(BMV2, "the searches, which start from the ceiling, tried different loads")
    oc, nc = o_r["generator_ceiling_pps"].iloc[0], n_r["generator_ceiling_pps"].iloc[0]
    assert oe["generator_ceiling_pps"] > ne["generator_ceiling_pps"] and oc > nc
    # the validation's totals and its lag rule, new now, decide nothing here: the rule then agrees
    nsup, nss = superseded(BMV2, "superseded_trials.csv"), superseded(BMV2, "superseded_search_trials.csv")
    every = every_attempt(D / BMV2)
    assert set(TOTALS) <= set(every.columns)
    assert ((why(every) != "") == old_rule(every)).all()
    says(BMV2, "Judged by the rule then (the longest stop or lag alone, a lag only when it outlasts the queue), every "
               "attempt of this run would have been judged the same.")
    # the table
    drop = 1 - ne["generator_ceiling_pps"] / oe["generator_ceiling_pps"]
    drop_s = 1 - nc / oc
    says(BMV2, f"| generator's ceiling before the sweep, before the searches | {pps(oe['generator_ceiling_pps'])} and "
               f"{pps(oc)} pps | {pps(ne['generator_ceiling_pps'])} and {pps(nc)} pps |")
    says(BMV2, f"| bmv2's PDR@0.5% (search) | {o_r.loc['bmv2', 'answer']} | {n_r.loc['bmv2', 'answer']} |",
         f"| Linux's PDR@0.5% (search) | {o_r.loc['linux', 'answer']} | {n_r.loc['linux', 'answer']} |")
    ox, nx = stats.assess(ot)[0], stats.assess(datasets.read(D / BMV2).trials)[0]
    says(BMV2, f"| sweep: verdict, PDR@0.5% | {ox.verdict.label}, {pps(ox.pdr.load)} pps | {nx.verdict.label}, "
               f"{pps(nx.pdr.load)} pps |")
    oa, na = attempts(halting), attempts(D / BMV2)
    thr = float(notes(ne)["steal_threshold"])
    assert thr == float(notes(oe)["steal_threshold"])
    says(BMV2, f"| sweep attempts: mean steal; above {thr:.0%} | {100 * oa['steal'].mean():.2f}%; "
               f"{(oa['steal'] > thr).sum()} of {len(oa)} | {100 * na['steal'].mean():.2f}%; "
               f"{(na['steal'] > thr).sum()} of {len(na)} |",
         f"| steal of a kept sweep trial: mean, largest | {100 * ot['steal'].mean():.2f}%, "
         f"{100 * ot['steal'].max():.1f}% | {100 * nt['steal'].mean():.2f}%, {100 * nt['steal'].max():.1f}% |")
    osup = pd.read_csv(halting / "superseded_trials.csv")
    od_, nd_ = ot["disturbed"].astype(bool).sum(), nt["disturbed"].astype(bool).sum()
    says(BMV2, f"| sweep trials measured again (attempts set aside); kept `disturbed` | {(ot['attempt'] > 1).sum()} "
               f"({len(osup)}); {od_} | {(nt['attempt'] > 1).sum()} ({len(nsup)}); {nd_} |")
    oss = pd.read_csv(halting / "superseded_search_trials.csv")
    says(BMV2, f"| search attempts measured again (bmv2, linux) | {len(oss)} ({(oss['engine'] == 'bmv2').sum()}, "
               f"{(oss['engine'] == 'linux').sum()}) | {len(nss)} ({(nss['engine'] == 'bmv2').sum()}, "
               f"{(nss['engine'] == 'linux').sum()}) |")
    fo, fn = ot[ot["lost"] > 0]["offered_pps"].min(), nt[nt["lost"] > 0]["offered_pps"].min()
    says(BMV2, f"| sweep: first load with loss | {pps(fo)} pps | {pps(fn)} pps |",
         f"| sweep: trials that lost packets | {(ot['lost'] > 0).sum()} of {len(ot)} | {(nt['lost'] > 0).sum()} of "
         f"{len(nt)} |")
    od, nd = datasets.read_drops([halting]), datasets.read_drops([D / BMV2])
    oq = od[(od["reason"] == "egress_queue_drops") & (od["counted_as"] == "loss")]["packets"].sum()
    nq = nd[(nd["reason"] == "egress_queue_drops") & (nd["counted_as"] == "loss")]["packets"].sum()
    says(BMV2, f"| sweep: packets lost (at the egress queue) | {pps(ot['lost'].sum())} ({pps(oq)}) | "
               f"{pps(nt['lost'].sum())} ({pps(nq)}) |")
    om = ox.summary.set_index("offered_pps")["plr"]
    nm = nx.summary.set_index("offered_pps")["plr"]
    omed, nmed = ot.groupby("offered_pps")["loss"].median(), nt.groupby("offered_pps")["loss"].median()
    for x in (15_000, 20_000, 30_000, 40_000):
        says(BMV2, f"| mean (median) loss at {pps(x)} pps | {sig2(om.loc[x])}% ({sig2(omed.loc[x])}%) | "
                   f"{sig2(nm.loc[x])}% ({sig2(nmed.loc[x])}%) |")
    orx, nrx = ot.groupby("offered_pps")["rx_pps"].median(), nt.groupby("offered_pps")["rx_pps"].median()
    says(BMV2, f"| median throughput at 30,000 and 40,000 pps | {pps(orx.loc[30_000])} and "
               f"{pps(orx.loc[40_000])} pps | "
               f"{pps(nrx.loc[30_000])} and {pps(nrx.loc[40_000])} pps |")
    ocpu, ncpu = ot.groupby("offered_pps")["cpu_load"], nt.groupby("offered_pps")["cpu_load"]
    lo = min(nt["offered_pps"])

    def rng(g):
        return f"{100 * g.mean().loc[lo]:.0f}% ({span(g.get_group(lo), pct())}%)"

    says(BMV2, f"| CPU 1 busy at {pps(lo)} pps: mean (range) | {rng(ocpu)} | {rng(ncpu)} |",
         f"| CPU 1 busy at 30,000 and 40,000 pps (mean) | {100 * ocpu.mean().loc[30_000]:.0f}% and "
         f"{100 * ocpu.mean().loc[40_000]:.0f}% | {100 * ncpu.mean().loc[30_000]:.0f}% and "
         f"{100 * ncpu.mean().loc[40_000]:.0f}% |")

    # steal and the repeats it causes
    assert na["steal"].mean() < oa["steal"].mean() and (na["steal"] > thr).sum() < (oa["steal"] > thr).sum()
    says(BMV2, f"The steal fell: the sweep's attempts read {100 * oa['steal'].mean():.2f}% on average then and "
               f"{100 * na['steal'].mean():.2f}% now, and {(oa['steal'] > thr).sum()} of {len(oa)} against "
               f"{(na['steal'] > thr).sum()} of {len(na)} were above {thr:.0%}.")
    # the steal, by load: fewer attempts above the threshold now at every load but some
    above = pd.DataFrame({"then": oa.groupby("offered_pps")["steal"].apply(lambda x: f"{(x > thr).sum()} of {len(x)}"),
                          "now": na.groupby("offered_pps")["steal"].apply(lambda x: f"{(x > thr).sum()} of {len(x)}")})
    share = pd.DataFrame({"then": oa.groupby("offered_pps")["steal"].apply(lambda x: (x > thr).mean()),
                          "now": na.groupby("offered_pps")["steal"].apply(lambda x: (x > thr).mean())})
    shown = share[(share > 0).any(axis=1)]
    but = list(shown[shown["now"] >= shown["then"]].index)
    assert len(share) > len(shown) and 0 < len(but) < len(shown) / 2
    says(BMV2, f"By load, the attempts above {thr:.0%} then and now: "
               + ", ".join(f"{pps(x)} pps {above.loc[x, 'then']} and {above.loc[x, 'now']}" for x in shown.index)
               + f" (none at {' or '.join(pps(x) for x in share.index.difference(shown.index))} pps either time): "
               f"a smaller share now at every load but {listed(pps(x) for x in but)} pps.")
    assert (nt["attempt"] > 1).sum() < (ot["attempt"] > 1).sum() and len(nss) < len(oss) and nd_ < od_
    says(BMV2, "**What differed between the runs.**",
         f"Fewer were measured again too ({(ot['attempt'] > 1).sum()} sweep trials then, {(nt['attempt'] > 1).sum()} "
         f"now; {len(oss)} search attempts then, {len(nss)} now), and fewer sweep trials were kept `disturbed` "
         f"({od_} then, {'none' if nd_ == 0 else nd_} now)")
    assert (nss["engine"] == "linux").sum() == 0 < (oss["engine"] == "linux").sum()
    says(BMV2, f"Linux's search set no attempt aside now ({(oss['engine'] == 'linux').sum()} then).")
    # the loss at the low loads
    band = [x for x in nm.index if fo <= x <= 10_000]
    ob, nb = ot[ot["offered_pps"].isin(band)], nt[nt["offered_pps"].isin(band)]
    ol, nl = ob[ob["lost"] > 0], nb[nb["lost"] > 0]
    assert len(nl) < len(ol) and nl["lost"].sum() < ol["lost"].sum()
    says(BMV2, f"The loss at the low loads fell too: at {pps(band[0])}-{pps(band[-1])} pps {len(ol)} of the {len(ob)} "
               f"trials lost packets then ({pps(ol['lost'].sum())} in all), {len(nl)} now ({pps(nl['lost'].sum())}).")
    # where the mean loss fell and where it rose
    either = [x for x in om.index if om.loc[x] > 0 or nm.loc[x] > 0]
    lower = [x for x in either if nm.loc[x] < om.loc[x]]
    higher = [x for x in either if nm.loc[x] > om.loc[x]]
    assert len(lower) + len(higher) == len(either) and 0 < len(higher) < len(lower)
    says(BMV2, f"Of the {len(either)} loads where either sweep lost packets ({pps(either[0])}-{pps(either[-1])} pps), "
               f"the mean loss was lower now at {len(lower)}, all but {listed(pps(x) for x in higher)} pps, where it "
               f"was " + listed(f"{sig2(om.loc[x])}%" for x in higher) + " then and "
               + listed(f"{sig2(nm.loc[x])}%" for x in higher) + " now.")
    # the two highest loads: ranges then and now
    g30, g40 = nt[nt["offered_pps"] == 30_000]["loss"], nt[nt["offered_pps"] == 40_000]["loss"]
    o30, o40 = ot[ot["offered_pps"] == 30_000]["loss"], ot[ot["offered_pps"] == 40_000]["loss"]
    says(BMV2, f"At 30,000 pps its trials lost {span(g30, sig2)}% now against {span(o30, sig2)}% then, at "
               f"40,000 pps {span(g40, sig2)}% against {span(o40, sig2)}%.")
    # the verdicts differ now
    assert (nx.pdr.load, nx.verdict.label) != (ox.pdr.load, ox.verdict.label)
    says(BMV2, f"The sweep's verdict and PDR@0.5% differ: {ox.verdict.label}, {pps(ox.pdr.load)} pps then; "
               f"{nx.verdict.label}, {pps(nx.pdr.load)} pps now.")
    # the search's answer for bmv2 rose though the ceilings fell
    rise = n_r.loc["bmv2", "lower_pps"] / o_r.loc["bmv2", "lower_pps"] - 1
    assert rise > 0 and drop > 0 and drop_s > 0
    says(BMV2, f"bmv2's search answered {100 * rise:.0f}% higher now, while the generator's ceiling, measured by the "
               f"same commands, was {100 * drop:.0f}% lower before the sweep and {100 * drop_s:.0f}% lower before the "
               f"searches.")
    o_fail, n_fail = om[om > stats.PDR_FRACTION].index[0], nm[nm > stats.PDR_FRACTION].index[0]
    assert o_r.loc["bmv2", "lower_pps"] > o_fail and nx.pdr.load < n_r.loc["bmv2", "lower_pps"] < n_fail
    says(BMV2, f"Then the search's answer ({o_r.loc['bmv2', 'answer']}) lay above the sweep's first failing load "
               f"({pps(o_fail)} pps); now it ({n_r.loc['bmv2', 'answer']}) lies between the sweep's PDR@0.5% "
               f"({pps(nx.pdr.load)} pps) and its first failing load ({pps(n_fail)} pps).")
    # Linux: a lower bound both times, so not comparable
    ob_ = datasets.search_pdr(o_r.reset_index()).set_index("engine")
    nb_ = datasets.search_pdr(n_r.reset_index()).set_index("engine")
    assert ob_.loc["linux", "bound"] == nb_.loc["linux", "bound"] == "passed at the ceiling"
    says(BMV2, "Linux's answer is a lower bound both times (passed at the ceiling), each at its own ceiling, so the "
               "two do not compare.")
    assert (ot["lost_unexplained"] == 0).all() and (nt["lost_unexplained"] == 0).all()
    says(BMV2, "Neither run left a lost packet unexplained.")
    # polling idle CPUs do not count as busy: CPU 1 at the lowest load reads little both times
    assert ncpu.mean().loc[lo] < 0.25 and ocpu.mean().loc[lo] < 0.25
    says(BMV2, f"At {pps(lo)} pps CPU 1's mean was {100 * ocpu.mean().loc[lo]:.0f}% then and "
               f"{100 * ncpu.mean().loc[lo]:.0f}% now: the polling does not show as busy.")
    # one caveat for every difference: time apart, code, ceilings
    gap = pd.to_datetime(nt["started_at"]).min() - start.min()
    assert drop > 0.1 and drop_s > 0.1
    says(BMV2, f"**What the files cannot say.** Every difference above is one between two runs; none is shown to be "
               f"an effect of polling. The runs were {gap.total_seconds() / 3600:.1f} hours apart",
         f"and their generator ceilings were {100 * drop:.0f}% and {100 * drop_s:.0f}% apart, a sign that the "
         f"machine's speed differed too")
    assert not ol["disturbed"].astype(bool).any()
    says(BMV2, f"Nor does steal above the threshold explain the loss at the low loads then: the {len(ol)} lossy trials "
               f"at {pps(band[0])}-{pps(band[-1])} pps then were all kept as clean (not `disturbed`).")
