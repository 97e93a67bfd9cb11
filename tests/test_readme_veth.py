"""Every number the README of testbed-veth states, recomputed from its files (see readme_checks)."""

import inspect
import io

import numpy as np
import pandas as pd
import pytest

from routerlab import datasets, stats, traffic
from routerlab.validation import TrialValidation
from readme_checks import (CODE, D, KERNEL_PATHS, PREVIOUS, VETH, VETH_BEFORE, VETH_CODE, check_superseded_searches,
                           committed, pct, pps, previous_files, says, sig2, span, veth, when_range)


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


def notes(e) -> dict:
    """An experiment's ``notes`` as a dict of text values."""
    return dict(kv.split("=", 1) for kv in e["notes"].split("; "))


def test_veth_what_where_when_how():
    t, _, _, ceiling = veth()
    e = datasets.read_experiments(D / VETH)
    for col in ("kernel", "cpu", "pinning"):
        assert e[col].nunique() == 1
    says(VETH, f"kernel {e['kernel'].iloc[0]}) with 2 vCPUs ({e['cpu'].iloc[0]})", f"`{e['pinning'].iloc[0]}`",
         f"Click {e.set_index('engine').loc['click', 'engine_version']}")
    assert "from its own veth ring" in e["pinning"].iloc[0]
    assert all(notes(x)["napi"] == "threaded, pinned" for _, x in e[e["engine"] == "ebpf"].iterrows())
    sweeps = t[t["experiment"] != "click-single-flow"]
    day = pd.to_datetime(t["started_at"]).dt.strftime("%Y-%m-%d").unique()
    assert len(day) == 1
    r = veth_searches()
    assert pd.to_datetime(r["when"]).dt.strftime("%Y-%m-%d").eq(day[0]).all()
    says(VETH, f"**When:** {day[0]}, sweeps from {when_range(t['started_at']).replace('-', ' to ')} UTC "
               f"(Click last, from {when_range(t[t['experiment'] == 'click-single-flow']['started_at']).split('-')[0]})",
         f"searches and benchmarks recorded from {when_range(r['when']).replace('-', ' to ')} UTC",
         f"Code: commit {CODE[:7]}.")
    assert when_range(sweeps["started_at"]).split("-")[1] < when_range(r["when"]).split("-")[0]
    # after the other testbed datasets of the same run (their trials all started earlier)
    first = pd.to_datetime(t["started_at"]).min()
    for other in ("testbed-click", "click-course", "testbed-bmv2"):
        o = pd.to_datetime(datasets.read(D / other).trials["started_at"])
        assert o.dt.strftime("%Y-%m-%d").eq(day[0]).all() and o.max() < first, other
    says(VETH, "these commands ran after those of the other testbed datasets")
    # no break: the longest gap between successive trials of a sweep
    gaps = t.assign(at=pd.to_datetime(t["started_at"])).sort_values("at").groupby("experiment")["at"].diff()
    longest = gaps.dt.total_seconds().max()
    assert longest < 10
    says(VETH, f"no two successive trials of a sweep started more than {longest:.0f} s apart")
    # the validation's settings, the same in every sweep's notes and every search's results
    n = [notes(x) for _, x in e.iterrows()]
    for k in ("steal_threshold", "probe_period_ms", "max_repeats"):
        assert len({x[k] for x in n}) == 1 and (r[k].astype(float) == float(n[0][k])).all(), k
    assert all(x["loss_attribution"] == "on" for x in n)
    says(VETH, f"up to {int(n[0]['max_repeats'])} times, when its steal is above {float(n[0]['steal_threshold']):.0%}",
         f"longer than the probe's {float(n[0]['probe_period_ms']):g} ms period and than the router's queue lasts")
    queue = {row["engine"]: notes(row)["router_queue_packets"] for _, row in e.iterrows()}
    assert queue == {"linux": "1000", "nft": "1000", "click": "1000", "ebpf": "256"}
    assert (r.set_index("engine")["router_queue_packets"].astype(str).groupby(level=0).unique().map(list).to_dict()
            == {k: [v] for k, v in queue.items() if k != "click"})
    says(VETH, f"The validation takes the router's queue as {queue['linux']} packets for linux, nft and click and "
               f"{queue['ebpf']} for ebpf (`router_queue_packets` in each experiment's `notes`)")
    # the ceiling is traffic.ceiling's median; its runs and duration are the function's defaults
    p = inspect.signature(traffic.ceiling).parameters
    says(VETH, f"(median of {p['runs'].default} runs of {p['duration_s'].default:g} s, generator straight "
               f"into the sink): {pps(ceiling)} pps")
    # measured once for the whole run: the other datasets' sweeps of that run were given the same ceiling
    for other in ("testbed-click", "click-course"):
        o = datasets.read_experiments(D / other)
        assert o["command"].str.contains(f"--ceiling {ceiling:.0f} ").any(), other
    says(VETH, "measured once when the script started, before the other datasets")
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
    says(VETH, f"--search both --duration 1 --ceiling {ceiling:.0f} --out datasets/{VETH}")
    assert set(r["experiment"]) >= {f"{x.engine}-{x.scenario.split(':')[0]}" for x in e.itertuples()
                                    if x.engine != "click"}


def test_veth_code_commit_is_in_history():
    committed("README.md", CODE)  # skips outside a checkout; fails when the commit is unknown there
    e = datasets.read_experiments(D / VETH)
    assert "probe_period_ms" in notes(e.iloc[0])  # written by the code of the stop probe (9f2de31 and later)


def search_trials() -> pd.DataFrame:
    """search_trials.csv with each row's index within its experiment (the ``probe`` of its
    superseded attempts) and the flags as booleans."""
    s = datasets.read_kind(D / VETH, "search_trials.csv")
    return s.assign(probe=s.groupby("experiment").cumcount(), loss=s["lost"] / s["tx"],
                    **{c: s[c].astype(str).str.lower() == "true" for c in ("passed", "generator_limited", "disturbed")})


def superseded(name: str) -> pd.DataFrame:
    """The replaced attempts of the sweeps (``superseded_trials.csv``) or of the searches
    (``superseded_search_trials.csv``), each with the validation's reason. Read with pandas:
    the search attempts have the columns of trials.csv and ``probe``, not those of
    search_trials.csv that ``datasets.read_kind`` expects."""
    s = pd.read_csv(D / VETH / name)
    return s.assign(why=[TrialValidation().why_disturbed(r) for r in s.to_dict("records")])


def test_veth_files():
    t, d, _, _ = veth()
    says(VETH, f"`drops.csv` | {len(d):,} rows")
    assert set(d["experiment"]) == set(t["experiment"])  # sweeps only: searches carry a `drops` column
    assert set(d["place"].str.replace(r"\d+$", "N", regex=True)) == {"tg", "dut", "sink", "cpuN", "nodev"}
    assert set(d["counted_as"]) == {"loss", "design", "context"}
    sup = superseded("superseded_trials.csv")
    ssup = superseded("superseded_search_trials.csv")
    says(VETH, f"the {len(sup)} sweep attempts that were measured again (same columns)",
         f"the {len(ssup)} search attempts measured again (with `probe`")
    assert list(sup.columns[:-1]) == list(pd.read_csv(D / VETH / "trials.csv").columns)
    assert "probe" in ssup.columns and "trial" not in ssup.columns
    # probe is the row in search_trials.csv within its experiment: the kept row counts the attempts before it
    s = search_trials()
    check_superseded_searches(s, ssup)
    g = pd.read_csv(D / VETH / "generators.csv")
    says(VETH, f"{len(g)} trials of {g['generator'].nunique()} generators")
    # not re-measured: the file is the one the previous measurement committed
    assert (D / VETH / "generators.csv").read_text() == committed(f"datasets/{VETH}/generators.csv", VETH_BEFORE)
    # the columns the table names are there
    for c in ("cpu_stop_ms", "gen_late_ms", "queue_ms", "attempt", "disturbed", "lost", "lost_attributed",
              "lost_unexplained", "trace_missed", "drops"):
        assert c in t.columns and c in s.columns
    assert (t["lost"] == t["tx"] - t["rx"]).all()
    assert (t["lost"] == t["lost_attributed"] + t["lost_unexplained"]).all()
    e = datasets.read_experiments(D / VETH)
    n = [notes(x) for _, x in e.iterrows()]
    common = {k: {x[k] for x in n} for k in ("loss_attribution", "steal_threshold", "probe_period_ms", "max_repeats")}
    says(VETH, f"(`router_queue_packets={n[0]['router_queue_packets']}`, 256 for ebpf; `"
               + "; ".join(f"{k}={v.pop()}" for k, v in common.items() if len(v) == 1) + "`)")
    assert all(len(v) == 0 for v in common.values())  # each setting was one value, and the README names it
    r = veth_searches()
    assert (r["final_trials"] == 3).all() and set(r["method"]) == {"routerlab", "mlrsearch"}
    says(VETH, "`final_trials` = 3, and a load passes on its median trial")
    assert set(r[r["experiment"].str.startswith("bench-pdr-")]["method"]) == {"routerlab"}


@pytest.fixture
def previous(tmp_path):
    """The files this data replaced (commit PREVIOUS), in a folder of their own."""
    return previous_files(VETH, tmp_path)


def test_veth_cpu1_was_not_the_routers_alone(previous):
    t = veth()[0]
    lowest = t[t["offered_pps"] == t.groupby("experiment")["offered_pps"].transform("min")]
    first = t.loc[pd.to_datetime(t["started_at"]).idxmin(), "experiment"]
    assert first == "linux-single-flow"
    lx = lowest[lowest["experiment"] == first]
    says(VETH, f"In the linux sweep, which came first, it was {span(lx['cpu_load'], pct())}% at its lowest load "
               f"({pps(lx['offered_pps'].iloc[0])} pps, {lx['offered_pps'].iloc[0] / veth()[3]:.2f} of the ceiling)")
    rest = lowest[lowest["experiment"] != first].groupby("experiment")["cpu_load"].mean()
    assert len(rest) == 6 and rest.min() > 2 * lx["cpu_load"].max()
    click = lowest[lowest["experiment"] == "click-single-flow"]["offered_pps"].iloc[0]
    says(VETH, f"In the six sweeps after it, the mean at their lowest load ({pps(lx['offered_pps'].iloc[0])} pps; "
               f"Click's {pps(click)} pps) was {span(rest, pct())}%")
    # not the load: a lower load busier than a higher one, in one sweep
    lt = t[t["experiment"] == first].groupby("offered_pps")["cpu_load"]
    busy, idle = 99_022, 148_533
    assert lt.max()[busy] > 0.9 and lt.max()[idle] < 0.2
    says(VETH, f"in the linux sweep it was {span(lt.get_group(busy), pct())}% at {pps(busy)} pps and "
               f"{span(lt.get_group(idle), pct())}% at {pps(idle)} pps")
    old = datasets.read(previous).trials
    olow = old[old["offered_pps"] == old.groupby("experiment")["offered_pps"].transform("min")]
    om = olow.groupby("experiment")["cpu_load"].mean()
    assert om.max() < rest.min()
    says(VETH, f"In the data this replaces, the mean at the lowest load was {span(om, pct())}% in every sweep")


def test_veth_validation_of_the_sweeps():
    t = veth()[0]
    sup = superseded("superseded_trials.csv")
    assert (sup["why"] != "").all() and sup["disturbed"].all()
    again = t[t["attempt"] > 1]
    assert len(sup) == (again["attempt"] - 1).sum()
    assert (again["experiment"] == "click-single-flow").sum() == 0
    says(VETH, f"{len(again)} of the {len(t)} sweep trials were measured again, with {len(sup)} attempts set aside "
               f"(`superseded_trials.csv`); none of them was Click's")
    steal = sup[sup["why"].str.contains("steal")]
    stop = sup[sup["why"].str.contains("router CPU stopped")]
    lag = sup[sup["why"].str.contains("generator fell behind")]
    assert (sup["why"].str.count(";") <= 1).all() and len(steal) + len(stop) + len(lag) > len(sup)
    one = lambda x: f"{x:.1f}"  # noqa: E731
    says(VETH, f"with two reasons for some attempts: steal above 2% in {len(steal)} "
               f"({span(steal['steal'], pct(1))}%), a stop of the router's CPU in {len(stop)} (read as "
               f"{span(stop['cpu_stop_ms'], one)} ms, against a queue of {span(stop['queue_ms'], one)} ms), a lag of "
               f"the generator in {len(lag)} ({span(lag['gen_late_ms'], one)} ms)")
    dist = t[t["disturbed"]]
    assert (dist["attempt"] == 4).all() and set(dist["experiment"]) == {"ebpf-single-flow"}
    why = pd.Series([TrialValidation().why_disturbed(r) for r in dist.to_dict("records")])
    # each trial's reasons, by the first word of each: one trial has two
    kinds = sorted(tuple(sorted(part.split(" ")[0] for part in w.split("; "))) for w in why)
    assert kinds == [("generator",), ("generator", "router"), ("steal",)], kinds
    loads = sorted(dist["offered_pps"].unique())
    says(VETH, f"{len(dist)} kept trials are still `disturbed` after 3 repeats, all of ebpf with no rules, at "
               f"{' and '.join(pps(x) for x in loads)} pps: one for steal "
               f"({100 * dist[why.str.startswith('steal').values]['steal'].iloc[0]:.1f}%), one for a lag of the "
               f"generator, one for both a stop of the router's CPU and a lag of the generator")
    says(VETH, f"the largest of a kept trial was {100 * t['steal'].max():.1f}%, and the mean per sweep "
               f"{span(t.groupby('experiment')['steal'].mean(), pct(2))}%")


def test_veth_validation_of_the_searches():
    s = search_trials()
    ss = superseded("superseded_search_trials.csv")
    assert (ss["why"] != "").all() and ss["disturbed"].all()
    n = {k: ss["why"].str.contains(p).sum() for k, p in
         (("lag", "generator fell behind"), ("stop", "router CPU stopped"), ("steal", "steal"))}
    assert sum(n.values()) > len(ss)
    says(VETH, f"{len(ss)} attempts were measured again, in {(s['attempt'] > 1).sum()} of the {len(s)} search trials: "
               f"{n['lag']} for a lag of the generator, {n['stop']} for a stop of the router's CPU, {n['steal']} "
               f"for steal (two reasons for some)")
    per = ss.groupby("engine").size()
    assert per.idxmax() == "ebpf"
    lag = ss[(ss["engine"] == "ebpf") & ss["why"].str.contains("generator fell behind")]
    says(VETH, f"{per['ebpf']} of them were ebpf's, {len(lag)} of those for a lag.")
    f = s[(s["engine"] == "ebpf") & (s["phase"] == "final")]
    longer = f[f["gen_late_ms"] > f["queue_ms"]]
    one = lambda x: f"{x:.1f}"  # noqa: E731
    says(VETH, f"In ebpf's final search trials, at {pps(f['load'].min())}-{pps(f['load'].max())} pps, its ring lasts "
               f"{span(f['queue_ms'], one)} ms, and in {len(longer)} of those {len(f)} trials the generator's worst "
               f"lag was longer (a median of {longer['gen_late_ms'].median():.1f} ms in those)")
    dist = s[s["disturbed"]]
    assert set(dist["engine"]) == {"ebpf"} and (dist["attempt"] == 4).all()
    says(VETH, f"{len(dist)} kept search trials are still `disturbed`, all ebpf's; {int(dist['passed'].sum())} of "
               f"them passed")


def test_veth_ceilings_and_the_generators_shortfall():
    r = pd.read_csv(D / VETH / "search_results.csv")
    c = r.groupby("experiment")["generator_ceiling_pps"].first()
    t, _, _, ceiling = veth()
    assert (c.drop([x for x in c.index if x.startswith("bench-")]) == ceiling).all()
    bench_pdr = c[[x for x in c.index if x.startswith("bench-pdr-")]].unique()
    assert len(bench_pdr) == 1 and ceiling not in (bench_pdr[0], c["bench-search-linux-single-flow"])
    says(VETH, "Those two measure the generator's ceiling again themselves (below).")
    says(VETH, f"{pps(ceiling)} pps when the script started (the ceiling of the sweeps and searches), "
               f"{pps(c['bench-search-linux-single-flow'])} pps when `bench search` started and {pps(bench_pdr[0])} "
               f"pps when `bench engines` did")
    lim = t[t["generator_limited"].astype(bool)]
    low = lim["offered_pps"].min()
    says(VETH, f"{len(lim)} of the {len(t)} sweep trials were generator-limited (left out of the statistics), from "
               f"{pps(low)} pps ({low / ceiling:.1f} of the ceiling) up")
    top = lim[lim["offered_pps"] == ceiling].groupby("experiment").size()
    assert sorted(top[top == 10].index) == ["ebpf-single-flow", "linux-single-flow", "nft-single-flow-fw50"]
    says(VETH, f"at {pps(ceiling)} pps all 10 trials of linux, nft with 50 rules and ebpf with no rules were")


def test_veth_verdict_table():
    t, _, a, ceiling = veth()
    tirs = []
    for exp, name in VETH_NAMES.items():
        x = a[exp]
        v = x.verdict
        s = x.summary.set_index("offered_pps")
        over = s[s["plr"] > stats.PDR_FRACTION]
        assert len(over) and over.index[0] < ceiling
        k = lambda o: f" (K={s.loc[o, 'runs']})" if s.loc[o, "runs"] < 10 else ""  # noqa: E731
        first = f"{sig2(over['plr'].iloc[0])}% at {pps(over.index[0])}{k(over.index[0])}"
        if exp == "click-single-flow":
            assert v.good and v.why == "saturation right after the PDR load"
            says(VETH, f"| {name} | **{v.label}** | {first} | {v.why} (below) |")
            continue
        # every kernel path: BAD, still rising at the load after the crossing
        assert not v.good and v.still_rising and v.why == "throughput still rising after the PDR load"
        i = v.candidate_index
        o = x.summary["offered_pps"].iloc[i]
        assert x.summary["offered_pps"].iloc[i - 1] == over.index[0]
        tirs.append(v.tir[i])
        says(VETH, f"| {name} | **{v.label}** | {first} | {v.why}: at {pps(o)} pps{k(o)} it loses "
                   f"{sig2(s.loc[o, 'plr'])}% and forwards {pps(s.loc[o, 'throughput_pps'])} pps (TIR {v.tir[i]:.2f}) |")
    v = a["linux-single-flow"].verdict
    assert all(x >= v.params.eta * v.params.entry_multiplier for x in tirs)
    says(VETH, "The six kernel-path verdicts are BAD for one reason",
         f"throughput still grows by {span(tirs, lambda x: f'{x:.2f}')} pps per added pps (TIR), where saturation "
         f"needs less than {v.params.eta * v.params.entry_multiplier:g}",
         f"Every crossing is at a load below the generator's {pps(ceiling)} pps ceiling")
    # nft with an empty chain: two trials make the crossing, and the next two loads lose less
    s = a["nft-single-flow-fw0"].summary.set_index("offered_pps")
    cross = s[s["plr"] > stats.PDR_FRACTION].index[0]
    k = kept_trials()
    g = k[(k["experiment"] == "nft-single-flow-fw0") & (k["offered_pps"] == cross)]
    lossy = (g["lost"] / g["tx"])[g["lost"] > 0].sort_values()
    nxt = s.loc[cross:].iloc[1:3]
    assert (nxt["plr"] < stats.PDR_FRACTION).all()
    says(VETH, f"its crossing at {pps(cross)} pps is {len(lossy)} of its {len(g)} trials (they lost "
               f"{' and '.join(sig2(x) + '%' for x in lossy)}), and it lost "
               f"{' and '.join(sig2(x) + '%' for x in nxt['plr'])} at the next two loads")


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
    lim = t[t["generator_limited"].astype(bool)].groupby(["experiment", "offered_pps"]).size()
    assert all(lim.get((e, o), 0) == 10 for e in k for o in loads if o not in a[e].summary["offered_pps"].values)
    says(VETH, '"limited": every trial at that load was generator-limited.')
    s = stats.summaries(list(a.values())).set_index(["experiment", "offered_pps"])["plr"]
    frac = pd.Series(s.index.get_level_values(1) / ceiling, index=s.index).round(2)
    exp = pd.Series(s.index.get_level_values(0), index=s.index)
    first_loss = {e: frac[(exp == e) & (s > 0)].min() for e in k}
    last_clean = {e: frac[(exp == e) & (frac < first_loss[e])].max() for e in k}
    assert len({last_clean[e] for e in k[1:4]}) == 1
    says(VETH, f"Linux lost nothing up to {last_clean['linux-single-flow']:g} of the ceiling, and nft with 0, 5 and 50 "
               f"rules nothing up to {last_clean['nft-single-flow-fw0']:g}; the XDP router lost from "
               f"{first_loss['ebpf-single-flow']:g} of the ceiling with no rules and from "
               f"{first_loss['ebpf-single-flow-fw50']:g} with 50 rules")
    e50 = s.loc["ebpf-single-flow-fw50"]
    drop = [(o, n) for o, n in zip(e50.index[:-1], e50.index[1:]) if e50[n] < e50[o]]
    assert len(drop) >= 1
    o, n = drop[0]
    says(VETH, f"The XDP router with 50 rules is not monotone either: {sig2(e50[o])}% at {round(o / ceiling, 2):g}, "
               f"{sig2(e50[n])}% at {round(n / ceiling, 2):g}.")


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


VETH_PLACES = ["dut CPU_BACKLOG", "dut NOT_SPECIFIED", "dut FromDevice@4.kernel_drops", "lost_unexplained"]


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
    t, d, a, _ = veth()
    s = search_trials()
    assert (t["lost_unexplained"] == 0).all() and (s["lost_unexplained"] == 0).all()
    assert not (d[d["place"] == "sink"]["counted_as"] == "loss").any()
    says(VETH, f"`lost_unexplained` is 0 in all {len(t)} sweep trials (the generator-limited ones too) and in all "
               f"{len(s)} search trials. No counter of the sink took any.")
    # every loss of the sweeps, load by load, is what loss_places splits (its parts sum to the mean loss)
    lp = stats.loss_places(t, d).groupby(["experiment", "offered_pps"])["loss"].sum()
    plr = stats.summaries(list(a.values())).set_index(["experiment", "offered_pps"])["plr"]
    assert np.allclose(lp, plr.reindex(lp.index), atol=1e-12)


def per_trial_counters() -> pd.DataFrame:
    """Every counter of drops.csv per sweep trial (``place source reason``), 0 where it did not move."""
    d = veth()[1]
    keys = ["experiment", "offered_pps", "trial"]
    return d.assign(w=d["place"] + " " + d["source"] + " " + d["reason"]).pivot_table(
        index=keys, columns="w", values="packets", aggfunc="sum").fillna(0)


def test_veth_where_kernel_path_loss_went(previous):
    t, d, a, ceiling = veth()
    keys = ["experiment", "offered_pps", "trial"]
    kernel = KERNEL_PATHS[:4]
    x = veth_lost_by_place().loc[kernel]
    assert (x["dut CPU_BACKLOG"] == x["lost"]).all()
    # trial by trial, in every trial (limited ones too): the backlog's drops are the lost packets, and the
    # three context counters count the same packets
    c = per_trial_counters().loc[kernel]
    lost = t.set_index(keys).loc[kernel, "lost"]
    assert (c["dut kfree_skb CPU_BACKLOG"].reindex(lost.index).fillna(0) == lost).all()
    for ctx in ("cpu1 softnet dropped", "dut link d0.rx_dropped", "tg link g0.tx_dropped"):
        assert (c[ctx] == c["dut kfree_skb CPU_BACKLOG"]).all(), ctx
    says(VETH, "Three context counters each counted exactly the same packets, trial by trial: CPU 1's softnet "
               "`dropped`, the DUT veth's `d0.rx_dropped` and the generator veth's `g0.tx_dropped`.")
    # the sink: only its counting drop
    sink = d[(d["place"] == "sink") & d["experiment"].isin(kernel)]
    assert set(sink["reason"]) == {"NETFILTER_DROP"} and (sink["counted_as"] == "design").all()
    says(VETH, "none of its counters moved except its counting drop")
    # low loads: linux, nft with 0 and 5 rules, up to 0.6 of the ceiling
    low3 = KERNEL_PATHS[:3]
    k = kept_trials()
    k = k.assign(frac=(k["offered_pps"] / ceiling).round(2))
    first = {e: k[(k["experiment"] == e) & (k["lost"] > 0)]["offered_pps"].min() for e in low3}
    assert first["nft-single-flow-fw0"] == first["nft-single-flow-fw5"]
    top = {e: a[e].summary["throughput_pps"].max() for e in low3}
    assert all(top[e] > 1.05 * first[e] for e in low3)
    says(VETH, f"Linux lost packets from {pps(first['linux-single-flow'])} pps "
               f"({first['linux-single-flow'] / ceiling:.1f} of the ceiling), nft with 0 and 5 rules from "
               f"{pps(first['nft-single-flow-fw0'])} pps ({first['nft-single-flow-fw0'] / ceiling:.1f}), well under the "
               f"{span(top.values(), pps)} pps they forward at higher loads")
    assert min(first.values()) / ceiling == pytest.approx(0.4, abs=0.005)
    band = k[k["experiment"].isin(low3) & k["frac"].between(0.4, 0.6)]
    lossy = band[band["lost"] > 0]
    assert (lossy["drops"].str.fullmatch(r"dut:CPU_BACKLOG=\d+")).all() and not lossy["disturbed"].any()
    longer = lossy[lossy["gen_late_ms"] > lossy["queue_ms"]]
    assert (longer["lost"] > longer["offered_pps"] * longer["gen_late_ms"] / 1e3).all()
    one = lambda v: f"{v:.1f}"  # noqa: E731
    says(VETH, f"The {len(lossy)} trials that lost packets at 0.4-0.6 of the ceiling lost them at the backlog too, each "
               f"with CPU 1 {span(lossy['cpu_load'], pct())}% busy",
         f"In {len(longer)} of them the generator's worst lag ({span(longer['gen_late_ms'], one)} ms) was longer than "
         f"the backlog lasts at the load ({span(lossy['queue_ms'], one)} ms), but each lost more than the packets "
         f"offered during that lag")
    old = datasets.read(previous).trials
    oc = float(datasets.read_experiments(previous)["generator_ceiling_pps"].iloc[0])
    ob = old[old["experiment"].isin(low3) & (old["offered_pps"] / oc).round(2).between(0.4, 0.6)]
    assert ob["lost"].sum() == 0
    says(VETH, f"the same three paths lost nothing at 0.4-0.6 of its ceiling "
               f"({pps(ob['offered_pps'].min())}-{pps(ob['offered_pps'].max())} pps), with CPU 1 "
               f"{100 * ob['cpu_load'].mean():.0f}% busy on average")
    # nft with 50 rules saturates from its first lossy load
    s50 = a["nft-single-flow-fw50"].summary.set_index("offered_pps")
    f50 = k[(k["experiment"] == "nft-single-flow-fw50") & (k["lost"] > 0)]["offered_pps"].min()
    after = s50.loc[f50:, "throughput_pps"]
    assert after.max() < 0.8 * s50.index.max()
    says(VETH, f"nft with 50 rules saturates there: from {pps(f50)} pps on it forwards {span(after, pps)} pps")
    tm = kept_trials().groupby("experiment")["trace_missed"]
    says(VETH, f"`trace_missed` is {span(tm.sum().loc[kernel], pps)} packets per kernel-path sweep, "
               f"in {span((tm.apply(lambda s: (s > 0).mean())).loc[kernel], pct())}% of its trials")
    assert (tm.sum().drop(kernel) == 0).all() and (t[~t["experiment"].isin(kernel)]["trace_missed"] == 0).all()
    kk = kept_trials()
    struck = kk[kk["experiment"].isin(kernel) & (kk["trace_missed"] > 0)]
    share = struck["trace_missed"] / struck["rx"]
    says(VETH, f"In the trials it struck it was a median {span(share.groupby(struck['experiment']).median(), pct(2))}% "
               f"of the sink's packets per sweep, and at most {100 * share.max():.0f}%.")


def test_veth_where_xdp_loss_went():
    t, d, _, ceiling = veth()
    keys = ["experiment", "offered_pps", "trial"]
    ebpf = ["ebpf-single-flow", "ebpf-single-flow-fw50"]
    x = veth_lost_by_place().loc[ebpf]
    assert (x["dut NOT_SPECIFIED"] == x["lost"]).all()
    rows = d[d["experiment"].isin(ebpf)]
    nodev = rows[rows["place"] == "nodev"]
    per = per_trial_counters().loc[ebpf]
    per = per.loc[:, (per != 0).any()]
    # trial by trial, the DUT's NOT_SPECIFIED drops are the generator veth's tx_dropped, and nothing else moved
    assert set(per.columns) == {"dut kfree_skb NOT_SPECIFIED", "tg link g0.tx_dropped", "sink kfree_skb NETFILTER_DROP",
                                "nodev kfree_skb NOT_SPECIFIED"}
    assert (per["dut kfree_skb NOT_SPECIFIED"] == per["tg link g0.tx_dropped"]).all()
    lost = t[t["experiment"].isin(ebpf)].set_index(keys)
    assert (per["dut kfree_skb NOT_SPECIFIED"].reindex(lost.index).fillna(0) == lost["lost"]).all()
    says(VETH, f"in each of the {int((per['dut kfree_skb NOT_SPECIFIED'] > 0).sum())} ebpf trials that lost packets, "
               f"the generator-side veth's `g0.tx_dropped` (a context row) equals the DUT's NOT_SPECIFIED drops")
    assert (nodev["counted_as"] == "context").all()
    e = datasets.read_experiments(D / VETH)
    kernel = e["kernel"].iloc[0]
    ring = notes(e[e["engine"] == "ebpf"].iloc[0])["router_queue_packets"]
    says(VETH, f"On this kernel ({'.'.join(kernel.split('.')[:2])}) a veth whose peer runs XDP hands each packet to the "
               f"peer's {ring}-entry ring")
    says(VETH, f"the tracer also saw {nodev['packets'].sum()} drops with no device, `nodev`, in "
               f"{len(nodev.drop_duplicates(keys))} trials: context rows")
    # low fractions of the ceiling: the ring against the generator's worst lag
    k = kept_trials()
    k = k.assign(frac=(k["offered_pps"] / ceiling).round(2))
    e = k[k["experiment"] == "ebpf-single-flow"]
    q = e.groupby("frac")["queue_ms"].first()
    assert np.allclose(q, 256 / q.index.map(lambda f: e[e["frac"] == f]["offered_pps"].iloc[0]) * 1e3, atol=1e-3)
    clean, lossy = e[e["frac"].isin([0.05, 0.1])], e[e["frac"].isin([0.15, 0.2])]
    assert (clean["lost"] == 0).all() and (clean["gen_late_ms"] < clean["queue_ms"]).all()
    assert (lossy["gen_late_ms"] > lossy["queue_ms"]).all()
    n = lossy.groupby("frac")["lost"].apply(lambda s: (s > 0).sum())
    assert n.nunique() == 1 and lossy.groupby("frac").size().eq(10).all()
    one = lambda v: f"{v:.1f}"  # noqa: E731
    says(VETH, f"at 0.05 and 0.1 of the ceiling it lasts {' and '.join(one(v) for v in q.loc[[0.05, 0.1]])} ms, no "
               f"trial's worst generator lag was longer (at most {clean['gen_late_ms'].max():.1f} ms), and no trial "
               f"lost a packet",
         f"At 0.15 and 0.2 it lasts {' and '.join(one(v) for v in q.loc[[0.15, 0.2]])} ms, every trial's worst lag was "
         f"longer ({span(lossy['gen_late_ms'], one)} ms), and {n.iloc[0]} of the 10 trials at each load lost packets "
         f"({span(lossy[lossy['lost'] > 0]['lost'], pps)} each), with CPU 1 {span(lossy['cpu_load'], pct())}% busy")
    assert lossy["cpu_load"].max() < 0.9
    e50 = k[k["experiment"] == "ebpf-single-flow-fw50"]
    low = e50[e50["offered_pps"] == e50["offered_pps"].min()]
    l10 = e50[(e50["frac"] == 0.1) & (e50["lost"] > 0)]
    assert len(l10) == 1 and (e50[e50["frac"] < 0.1]["lost"] == 0).all()
    assert (e50[e50["frac"] >= 0.15]["lost"] > 0).all()
    says(VETH, f"With 50 rules, CPU 1 was {span(low['cpu_load'], pct())}% busy from the lowest load (above); one trial "
               f"lost {l10['lost'].iloc[0]} packets at 0.1 of the ceiling, and every trial from 0.15 on lost packets")


def test_veth_click(previous):
    t, d, a, _ = veth()
    c = t[t["experiment"] == "click-single-flow"]
    kept = c[~c["generator_limited"].astype(bool)]
    s = a["click-single-flow"].summary.set_index("offered_pps")
    cpu = kept.groupby("offered_pps")["cpu_load"].mean()
    loss = c["lost"] / c["tx"]
    worst = loss.groupby(c["offered_pps"]).max()
    zero = s[s["plr"] == 0].index
    assert (zero == s.index[:len(zero)]).all()
    first = s.index[len(zero)]
    lossy = c[(c["offered_pps"] == first) & (c["lost"] > 0)]
    assert len(lossy) == 1 and lossy["attempt"].iloc[0] == 1 and not lossy["disturbed"].iloc[0]
    pdr = a["click-single-flow"].pdr.load
    assert pdr == first
    nxt = s.index[s.index.get_loc(pdr) + 1]
    at = loss[c["offered_pps"] == nxt]
    n = (at.map(sig2) == sig2(worst.loc[nxt])).sum()
    n_worst = "one trial" if n == 1 else f"{n} trials"
    says(VETH,
         f"**Click** ({when_range(c['started_at'])} UTC) forwards with no loss up to {pps(zero.max())} pps, and "
         f"{sig2(s.loc[first, 'plr'])}% at {pps(first)} pps ({lossy['lost'].iloc[0]} packets, all in one trial, which "
         f"the validation did not repeat): its PDR@0.5% on this grid is {pps(pdr)} pps",
         f"{sig2(s.loc[nxt, 'plr'])}% at {pps(nxt)} pps ({n_worst} lost {sig2(worst.loc[nxt])}%)")
    after = s.loc[nxt:].iloc[1:]
    assert after["throughput_pps"].max() < s.loc[nxt, "throughput_pps"]
    says(VETH, f"throughput (offered × (1 - mean loss)) falls from {pps(s.loc[nxt, 'throughput_pps'])} pps there to "
               + ", ".join(pps(x) for x in after["throughput_pps"][:-1]) + f" and {pps(after['throughput_pps'].iloc[-1])}"
               + " pps at " + ", ".join(pps(x) for x in after.index[:-1]) + f" and {pps(after.index[-1])} offered, "
               f"with the CPU {span(cpu.loc[nxt:], pct())}% busy")
    old = datasets.read(previous).trials
    oc = old[old["experiment"] == "click-single-flow"]
    o5 = oc[oc["offered_pps"] == oc["offered_pps"].min()]["cpu_load"].mean()
    assert cpu.loc[:first].min() > 5 * o5
    says(VETH, f"Up to {pps(first)} pps its CPU was {span(cpu.loc[:first], pct())}% busy at every load, "
               f"{pps(cpu.index[0])} pps included ({100 * o5:.0f}% at {pps(oc['offered_pps'].min())} pps in the data "
               f"this replaces)")
    lim = c[c["generator_limited"].astype(bool)]
    says(VETH, f"equals the sink's count in all {len(c)} trials",
         f"{len(lim)} trials at {pps(lim['offered_pps'].min())}-{pps(lim['offered_pps'].max())} pps were "
         f"generator-limited (left out)")
    assert (c["engine_forwarded"] == c["rx"]).all()
    e = datasets.read_experiments(D / VETH).set_index("experiment").loc["click-single-flow"]
    assert notes(e)["capture"].startswith("AF_PACKET")
    # every packet reached the DUT: its drop of the kernel's copy (design) counted nearly all that was sent
    dut = d[(d["experiment"] == "click-single-flow") & (d["place"] == "dut") & (d["reason"] == "NETFILTER_DROP")]
    assert (dut["counted_as"] == "design").all()
    share = dut["packets"].sum() / c["tx"].sum()
    says(VETH, f"(`counted_as=design`) counted {100 * share:.2f}% of the packets sent")
    x = veth_lost_by_place().loc["click-single-flow"]
    other = x["lost"] - x["dut FromDevice@4.kernel_drops"]
    assert other == x["dut CPU_BACKLOG"] and "dut out/Queue@1.drops" not in set(d["place"] + " " + d["reason"])
    says(VETH, f"That took all but {pps(other)} of Click's {pps(x['lost'])} lost packets; CPU 1's backlog took those "
               f"{pps(x['dut CPU_BACKLOG'])}, and its output `Queue` dropped none.")


def test_veth_searches():
    r = veth_searches()
    t, _, a, ceiling = veth()
    ours = r[(r["method"] == "routerlab") & ~r["experiment"].str.startswith("bench-")]
    answers = {}
    for exp, name in VETH_NAMES.items():
        if exp == "click-single-flow":
            continue
        x = ours[ours["experiment"] == exp].set_index("kind")
        answers[exp] = x["lower_pps"]
        says(VETH, f"| {name} | {x.loc['pdr', 'answer']} | {x.loc['ndr', 'answer']} |")
    found = r[r["upper_pps"].notna() & ~r["generator_bound"]]
    mine = found[found["method"] == "routerlab"]
    says(VETH, f"Precision (1 - lower/upper) is {span(mine['precision'], pct(1))}% for every answer it found")
    assert not ours["generator_bound"].any() and (ours["upper_pps"] < ceiling).all()
    says(VETH, f"None of these answers is a lower bound: every search failed a load below the generator's "
               f"{pps(ceiling)} pps ceiling")
    s = search_trials()
    lim = ours[ours["limited_by_generator"].astype(str).str.lower() == "true"]
    for _, x in lim.iterrows():
        tr = s[(s["experiment"] == x["experiment"]) & (s["kind"] == x["kind"]) & (s["method"] == "routerlab")]
        assert tr["generator_limited"].any()
        assert not tr[np.isclose(tr["load"], x["upper_pps"]) & tr["generator_limited"]].shape[0]
    says(VETH, f"{len(lim)} of the {len(ours)} had generator-limited trials (`limited_by_generator`), none at the load "
               f"that failed")
    ebpf = ours[ours["engine"] == "ebpf"]["lower_pps"]
    assert ebpf.max() < ours[ours["engine"] != "ebpf"]["lower_pps"].min()
    first = {e: round(a[e].summary.query("plr > 0")["offered_pps"].min() / ceiling, 2)
             for e in ("ebpf-single-flow", "ebpf-single-flow-fw50")}
    says(VETH, f"The XDP router's answers are the lowest: its ring overflows from {first['ebpf-single-flow']:g} of the "
               f"ceiling with no rules and from {first['ebpf-single-flow-fw50']:g} with 50 rules (above)")
    # NDR above PDR
    above = [e for e, x in answers.items() if x["ndr"] > x["pdr"]]
    assert above == KERNEL_PATHS[:3]
    says(VETH, "For linux and nft with 0 and 5 rules the NDR is above the PDR")
    lx = s[(s["experiment"] == "linux-single-flow") & (s["phase"] == "final")]
    load = answers["linux-single-flow"]["ndr"]
    assert load > answers["linux-single-flow"]["pdr"]
    at = lx[np.isclose(lx["load"], load)]
    p3 = at[at["kind"] == "pdr"]
    n3 = at[at["kind"] == "ndr"]
    assert len(p3) == 3 and p3["passed"].sum() < 2 and len(n3) == 6

    def losses(g):
        return ", ".join(sig2(x) + "%" for x in g["loss"].iloc[:-1]) + f" and {sig2(g['loss'].iloc[-1])}%"

    first, second = n3.iloc[:3], n3.iloc[3:]
    assert first["passed"].sum() < 2 and second["passed"].sum() >= 2
    says(VETH, f"linux's PDR search failed {pps(load)} pps (its three trials there lost {losses(p3)}), and its NDR "
               f"search failed that load once ({losses(first)}) and passed it the second time ({losses(second)})")
    # the same routers searched again, each with its own ceiling
    c = r.groupby("experiment")["generator_ceiling_pps"].first()
    says(VETH, f"each with its own ceiling ({pps(c['bench-search-linux-single-flow'])} and "
               f"{pps(c['bench-pdr-linux-single-flow'])} pps)")
    linux = r[(r["engine"] == "linux") & (r["kind"] == "pdr") & (r["method"] == "routerlab")].sort_values("when")
    assert list(linux["experiment"]) == ["linux-single-flow", "bench-search-linux-single-flow",
                                         "bench-pdr-linux-single-flow"]
    ans = linux["answer"].str.replace(r" pps$", "", regex=True)
    says(VETH, f"linux {ans.iloc[0]}, then {ans.iloc[1]}, then {ans.iloc[2]}")
    for eng, exp in (("nft, 50 rules", "nft-single-flow-fw50"), ("ebpf, no rules", "ebpf-single-flow")):
        x = r[(r["experiment"] == exp) & (r["kind"] == "pdr")].iloc[0]
        y = r[r["experiment"] == f"bench-pdr-{exp}"].iloc[0]
        says(VETH, f"{eng}: {x['answer']}, then {y['answer']}")
    x = r[(r["experiment"] == "nft-single-flow-fw50") & (r["kind"] == "pdr")].iloc[0]
    y = r[r["experiment"] == "bench-pdr-nft-single-flow-fw50"].iloc[0]
    says(VETH, f"{100 * abs(y['lower_pps'] / x['lower_pps'] - 1):.0f}% apart where each search's precision is "
               f"{100 * max(x['precision'], y['precision']):.1f}%")
    b = linux.iloc[-1]
    sw = a["linux-single-flow"].summary.set_index("offered_pps")
    worst = sw[sw["plr"] > stats.PDR_FRACTION].index[-1]
    at_sweep = t[(t["experiment"] == "linux-single-flow") & (t["offered_pps"] == worst)]["started_at"]
    says(VETH, f"Linux passed {pps(b['lower_pps'])} pps at {pd.to_datetime(b['when']):%H:%M}, though at "
               f"{pd.to_datetime(at_sweep).min():%H:%M} its sweep lost {sig2(sw.loc[worst, 'plr'])}% at {pps(worst)} pps")
    kernel = s[s["engine"].isin(["linux", "nft"])]
    places = kernel["drops"].dropna().str.replace(r"=\d+", "", regex=True).str.split(";").explode()
    assert set(places) == {"dut:CPU_BACKLOG"}
    xdp = s[(s["engine"] == "ebpf")]["drops"].dropna().str.replace(r"=\d+", "", regex=True)
    assert set(xdp) == {"dut:NOT_SPECIFIED"}
    assert (s["lost_unexplained"] == 0).all()
    says(VETH, "no counter left a packet of theirs unexplained")


def test_veth_against_mlrsearch():
    r = veth_searches()
    b = r[r["experiment"] == "bench-search-linux-single-flow"].set_index(["kind", "method"])
    ceiling = b["generator_ceiling_pps"].iloc[0]
    says(VETH, f"ceiling {pps(ceiling)} pps):")
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
    bounds = b[b["generator_bound"]]
    assert np.allclose(bounds["lower_pps"], ceiling)
    p = search_trials()
    p = p[p["experiment"] == "bench-search-linux-single-flow"]
    for kind, method in bounds.index:
        g = p[(p["kind"] == kind) & (p["method"] == method)]
        assert g[np.isclose(g["load"], ceiling)]["generator_limited"].any()
    says(VETH, "three are lower bounds at the generator's ceiling, where some of their trials were generator-limited")
    # the order the searches ran in is the order of their trials in the file (one measure per probe)
    order = list(dict.fromkeys(zip(p["kind"], p["method"])))
    assert order == [("pdr", "routerlab"), ("pdr", "mlrsearch"), ("ndr", "routerlab"), ("ndr", "mlrsearch")]
    ours = b.loc[("pdr", "routerlab")]
    mine = p[(p["kind"] == "pdr") & (p["method"] == "routerlab") & (p["phase"] == "final")]
    above = mine[mine["load"] >= ours["upper_pps"] - 1e-6]
    says(VETH, f"the search ran first, and {(above['lost'] > 0).sum()} of its {len(above)} final trials at "
               f"{pps(ours['upper_pps'])} pps and above lost packets")
    mlr = p[(p["kind"] == "pdr") & (p["method"] == "mlrsearch") & (p["duration"] == 1)]
    assert mlr["passed"].all() and np.allclose(mlr["load"], ceiling)
    nd = p[(p["kind"] == "ndr") & (p["method"] == "routerlab") & (p["phase"] == "final")]
    top = nd[np.isclose(nd["load"], ceiling)]
    assert len(top) == 3 and (top["lost"] == 0).all()
    says(VETH, f"then MLRsearch's PDR passed {pps(ceiling)} pps (its 1-s trials lost "
               f"{' and '.join(sig2(x) + '%' for x in mlr['loss'])}), and our NDR search passed {pps(ceiling)} pps "
               f"with three lossless 1-s trials",
         f"failed {pps(ours['upper_pps'])} pps and then passed {pps(ceiling)} pps")


def test_veth_against_the_previous_measurement(previous):
    old = datasets.read(previous).trials
    oe, ne = datasets.read_experiments(previous), datasets.read_experiments(D / VETH)
    t, _, a, ceiling = veth()
    start = pd.to_datetime(old["started_at"])
    assert start.min() < pd.to_datetime(t["started_at"]).min()
    assert oe["kernel"].nunique() == 1 and oe["kernel"].iloc[0] != ne["kernel"].iloc[0]
    oc = float(oe["generator_ceiling_pps"].unique()[0])
    assert oe["notes"].str.contains("probe_period_ms").sum() == 0 and "cpu_stop_ms" not in old.columns
    assert "gen_late_ms" not in old.columns
    osup = pd.read_csv(io.StringIO(committed(f"datasets/{VETH}/superseded_trials.csv", PREVIOUS)))
    assert (osup["steal"] > 0.02).all()
    says(VETH, f"The data this replaces ({start.min():%Y-%m-%d}, from {start.min():%H:%M} UTC, code {VETH_CODE[:7]}; "
               f"in git at commit {PREVIOUS[:7]}) was measured on kernel {oe['kernel'].iloc[0]} with a generator "
               f"ceiling of {pps(oc)} pps, without the stop probe and the generator's lag: its validation repeated "
               f"{(old['attempt'] > 1).sum()} sweep trials, all for steal.")
    oa = {x.experiment: x for x in stats.assess(old)}
    r0, r1 = datasets.read_searches([previous]), datasets.read_searches([D / VETH])
    for e, name in VETH_NAMES.items():
        if e == "click-single-flow":
            continue
        os_, ns = oa[e].summary, a[e].summary
        fo, fn = os_[os_["plr"] > 0]["offered_pps"].min(), ns[ns["plr"] > 0]["offered_pps"].min()
        po = r0[(r0["experiment"] == e) & (r0["kind"] == "pdr")].iloc[0]
        pn = r1[(r1["experiment"] == e) & (r1["kind"] == "pdr")].iloc[0]
        assert fn < fo and pn["lower_pps"] < po["lower_pps"]
        says(VETH, f"| {name} | {pps(fo)} → {pps(fn)} | {po['answer']} → {pn['answer']} |")
    says(VETH, f"Click's PDR@0.5% on its sweep grid was {pps(oa['click-single-flow'].pdr.load)} pps then and is "
               f"{pps(a['click-single-flow'].pdr.load)} pps now.",
         f"{int(old['generator_limited'].sum())} sweep trials were generator-limited then, "
         f"{int(t['generator_limited'].sum())} now.")
    assert (old["lost_unexplained"] == 0).all() and (t["lost_unexplained"] == 0).all()
    says(VETH, "No lost packet was unexplained then or now.")
    assert ceiling > oc
    says(VETH, "The ceiling is higher now, yet every kernel path loses from a lower load and every search answer is lower")
    # the same Click and the same configuration both times, on the same grid
    o, n = oe.set_index("experiment").loc["click-single-flow"], ne.set_index("experiment").loc["click-single-flow"]
    assert o["engine_version"] == n["engine_version"]
    assert notes(o)["click_config"] == notes(n)["click_config"] == "routers/click/iprouter.click"
    assert sorted(old[old["experiment"] == "click-single-flow"]["offered_pps"].unique()) == \
        sorted(t[t["experiment"] == "click-single-flow"]["offered_pps"].unique())
