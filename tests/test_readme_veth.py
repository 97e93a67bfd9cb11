"""Every number the README of testbed-veth states, recomputed from its files (see readme_checks)."""

import inspect

import numpy as np
import pandas as pd
import pytest

from routerlab import datasets, search, stats, testbed, traffic
from readme_checks import (superseded, why, CODE, D, KERNEL_PATHS, VETH, VETH_BEFORE, VETH_CODE_ALONE, VETH_SHARED,
                           assessed, check_superseded_searches, committed, pct, pps, says, sig2, span,
                           veth, veth_as_shared, when_range)


VETH_NAMES = {"linux-single-flow": "linux", "nft-single-flow-fw0": "nft, empty chain",
              "nft-single-flow-fw5": "nft, 5 rules", "nft-single-flow-fw50": "nft, 50 rules",
              "ebpf-single-flow": "ebpf, no rules", "ebpf-single-flow-fw50": "ebpf, 50 rules",
              "click-single-flow": "click"}
CLICK = "click-single-flow"
#: The kernel paths as a sentence names them.
SPOKEN = {"linux-single-flow": "linux", "nft-single-flow-fw0": "nft with an empty chain",
          "nft-single-flow-fw5": "nft with 5 rules", "nft-single-flow-fw50": "nft with 50 rules",
          "ebpf-single-flow": "ebpf with no rules", "ebpf-single-flow-fw50": "ebpf with 50 rules"}


def listed(names) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def one(x) -> str:
    """A number of milliseconds (or a percentage) with one decimal."""
    return f"{x:.1f}"


def kept_trials() -> pd.DataFrame:
    """The sweep trials the statistics count (generator-limited ones left out)."""
    t = veth()[0]
    return t[~t["generator_limited"].astype(bool)]


def veth_searches() -> pd.DataFrame:
    return datasets.read_searches([D / VETH])


def notes(e) -> dict:
    """An experiment's ``notes`` as a dict of text values."""
    return dict(kv.split("=", 1) for kv in e["notes"].split("; "))


def steal_threshold() -> float:
    """The validation's steal threshold (a ratio), the same in every experiment's notes."""
    s = {float(notes(x)["steal_threshold"]) for _, x in datasets.read_experiments(D / VETH).iterrows()}
    assert len(s) == 1
    return s.pop()


def lowest(t: pd.DataFrame) -> pd.DataFrame:
    """Each sweep's trials at its lowest load."""
    return t[t["offered_pps"] == t.groupby("experiment")["offered_pps"].transform("min")]


def with_frac(t: pd.DataFrame, ceiling: float) -> pd.DataFrame:
    return t.assign(frac=(t["offered_pps"] / ceiling).round(2))


@pytest.fixture
def previous(tmp_path):
    """The files this data replaced, the morning run's (commit VETH_SHARED), in a folder of their own."""
    return veth_as_shared(tmp_path)


def morning(previous):
    """The replaced run's trials, assessments (by experiment) and ceiling."""
    return assessed(previous)


def test_veth_what_where_when_how():
    t, _, _, ceiling = veth()
    e = datasets.read_experiments(D / VETH)
    for col in ("kernel", "cpu", "pinning"):
        assert e[col].nunique() == 1
    says(VETH, f"kernel {e['kernel'].iloc[0]}) with 2 vCPUs ({e['cpu'].iloc[0]})", f"`{e['pinning'].iloc[0]}`",
         f"Click {e.set_index('engine').loc['click', 'engine_version']}")
    assert "from its own veth ring" in e["pinning"].iloc[0]
    assert all(notes(x)["napi"] == "threaded, pinned" for _, x in e[e["engine"] == "ebpf"].iterrows())
    sweeps = t[t["experiment"] != CLICK]
    rules = {eng: sorted(int(x) for x in g.str.extract(r"rules=(\d+)")[0])
             for eng, g in e.groupby("engine")["scenario"]}
    assert rules["nft"] == [0, 5, 50] and rules["ebpf"] == [0, 50] and rules["linux"] == [0]
    says(VETH, f"nftables with an empty forward chain, {rules['nft'][1]} rules and {rules['nft'][2]} rules (`nft`)",
         f"routerlab's XDP router (`ebpf`), with no rules and with {rules['ebpf'][1]} rules")
    cl = t[t["experiment"] == CLICK]["offered_pps"]
    says(VETH, f"at fixed loads from {cl.min() / 1e3:.0f} to {cl.max() / 1e3:.0f} kpps")
    assert (e["frame_size"] == 64).all() and e["scenario"].str.contains("flows=single").all()
    says(VETH, f"Frames are {e['frame_size'].iloc[0]} B, one flow.")
    day = pd.to_datetime(t["started_at"]).dt.strftime("%Y-%m-%d").unique()
    assert len(day) == 1
    r = veth_searches()
    assert pd.to_datetime(r["when"]).dt.strftime("%Y-%m-%d").eq(day[0]).all()
    says(VETH, f"**When:** {day[0]}, sweeps from {when_range(t['started_at']).replace('-', ' to ')} UTC "
               f"(Click last, from {when_range(t[t['experiment'] == CLICK]['started_at']).split('-')[0]})",
         f"searches and benchmarks recorded from {when_range(r['when']).replace('-', ' to ')} UTC",
         f"Code: commit {VETH_CODE_ALONE[:7]}.")
    assert when_range(sweeps["started_at"]).split("-")[1] < when_range(r["when"]).split("-")[0]
    # the script, as it was at that commit, measures only the datasets named after OUT
    script = committed("scripts/remeasure-testbed.sh", VETH_CODE_ALONE)
    assert "Name some datasets after OUT to measure only" in script and "if want testbed-veth; then" in script
    says(VETH, "`scripts/remeasure-testbed.sh OUT testbed-veth` measured this dataset and no other")
    # the other testbed datasets were measured in other runs: none of their trials falls within this one
    first, last = pd.to_datetime(t["started_at"]).min(), pd.to_datetime(r["when"]).max()
    for other in ("testbed-click", "click-course", "testbed-bmv2", "comparison"):
        at = pd.to_datetime(datasets.read(D / other).trials["started_at"])
        assert (at.max() < first) or (at.min() > last), other
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
    # measured once, when the script started, and given to every sweep and search of this dataset
    assert script.count("measuring.generator_ceiling()") == 1
    assert script.index("measuring.generator_ceiling()") < script.index("if want testbed-veth; then")
    block = script.split("if want testbed-veth; then")[1].split("\nfi\n")[0]
    assert block.count('--ceiling "$C"') == 3 and block.count("$R measure") == 3
    says(VETH, "measured once when the script started, with `measuring.generator_ceiling()`")
    for bench in ("bench search --duration 1", "bench engines --duration 1"):
        assert f'$R {bench} --out "$V"' in block
        says(VETH, f"`routerlab {bench}`")
    # the commands, as experiments.csv recorded them (with the scratch folder), in the README's one form
    forms = set()
    for row in e.itertuples():
        cmd = row.command.replace(row.command.split("--out ")[1], f"datasets/{VETH}")
        if row.engine == "click":
            says(VETH, cmd)
        else:
            forms.add(cmd.replace(f"--engine {row.engine} --scenario {row.scenario.split(':')[0]}",
                                  "--engine E --scenario S"))
    assert len(forms) == 1
    paths = [f"{x.engine} {x.scenario.split(':')[0]}" for x in e.itertuples() if x.engine != "click"]
    says(VETH, f"Sweeps, for each of {', '.join(paths[:-1])} and {paths[-1]}:")
    text = " ".join((D / VETH / "README.md").read_text().replace("\\\n", " ").split())
    assert " ".join(forms.pop().split()) in text
    assert f"--ceiling {ceiling:.0f}" in text
    says(VETH, f"--search both --duration 1 --ceiling {ceiling:.0f} --out datasets/{VETH}")
    assert set(r["experiment"]) >= {f"{x.engine}-{x.scenario.split(':')[0]}" for x in e.itertuples()
                                    if x.engine != "click"}


def test_veth_code_commit_is_in_history():
    committed("README.md", VETH_CODE_ALONE)  # skips outside a checkout; fails when the commit is unknown there
    e = datasets.read_experiments(D / VETH)
    assert "probe_period_ms" in notes(e.iloc[0])  # written by the code of the stop probe (9f2de31 and later)


def search_trials() -> pd.DataFrame:
    """search_trials.csv with each row's index within its experiment (the ``probe`` of its
    superseded attempts) and the flags as booleans."""
    s = datasets.read_kind(D / VETH, "search_trials.csv")
    return s.assign(probe=s.groupby("experiment").cumcount(), loss=s["lost"] / s["tx"],
                    **{c: s[c].astype(str).str.lower() == "true" for c in ("passed", "generator_limited", "disturbed")})


def test_veth_files():
    t, d, _, _ = veth()
    says(VETH, f"`drops.csv` | {len(d):,} rows")
    assert set(d["experiment"]) == set(t["experiment"])  # sweeps only: searches carry a `drops` column
    assert set(d["place"].str.replace(r"\d+$", "N", regex=True)) == {"tg", "dut", "sink", "cpuN", "nodev"}
    assert set(d["counted_as"]) == {"loss", "design", "context"}
    sup = superseded(VETH, "superseded_trials.csv")
    ssup = superseded(VETH, "superseded_search_trials.csv")
    says(VETH, f"the {len(sup)} sweep attempts that were measured again (same columns)",
         f"the {len(ssup)} search attempts measured again (with `probe`")
    assert list(sup.columns[:-1]) == list(pd.read_csv(D / VETH / "trials.csv").columns)
    assert "probe" in ssup.columns and "trial" not in ssup.columns
    # probe is the row in search_trials.csv within its experiment: the kept row counts the attempts before it
    s = search_trials()
    check_superseded_searches(s, ssup)
    g = pd.read_csv(D / VETH / "generators.csv")
    says(VETH, f"{len(g)} trials of {g['generator'].nunique()} generators: rate error of "
               f"{', '.join(g['generator'].unique()[:-1])} and {g['generator'].unique()[-1]} at "
               + "/".join(f"{100 * f:.0f}" for f in sorted(g["fraction"].unique())) + "% of the ceiling")
    # not re-measured: the file is the one the measurement of 2026-11-23 20:53 UTC committed, and docs/testbed.md
    # describes its run
    assert (D / VETH / "generators.csv").read_text() == committed(f"datasets/{VETH}/generators.csv", VETH_BEFORE)
    doc = " ".join((D.parent / "docs" / "testbed.md").read_text().split())
    run = doc.split("Run of ")[1][:10]
    assert "datasets/testbed-veth/generators.csv" in doc
    says(VETH, f"is the run of {run} described in `docs/testbed.md`", f"from {run} (see above)")
    # the columns the table names are there
    for c in ("cpu_stop_ms", "gen_late_ms", "queue_ms", "attempt", "disturbed", "lost", "lost_attributed",
              "lost_unexplained", "trace_missed", "drops"):
        assert c in t.columns and c in s.columns
    assert (t["lost"] == t["tx"] - t["rx"]).all()
    assert (t["lost"] == t["lost_attributed"] + t["lost_unexplained"]).all()
    per = t.groupby("experiment")["offered_pps"].nunique()
    says(VETH, f"{len(t)} sweep trials (6 experiments × {per.drop(CLICK).unique()[0]} loads × K = 10, plus Click: "
               f"{per[CLICK]} loads × 10)")
    assert (t.groupby(["experiment", "offered_pps"]).size() == 10).all()
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


def test_veth_cpu1_at_the_lowest_loads(previous):
    t, _, _, ceiling = veth()
    # cpu_load is CPU 1's share of jiffies that were neither idle nor iowait: steal counts as busy; steal is the
    # share of every CPU's jiffies (the "cpu" line of /proc/stat) that the hypervisor took
    before = {"cpu1": [0] * 8, "cpu": [0] * 8}
    after = {"cpu1": [0, 0, 0, 50, 0, 0, 0, 50], "cpu": [0, 0, 0, 150, 0, 0, 0, 50]}
    assert testbed.cpu_usage(before, after, 1) == (0.5, 0.25)
    says(VETH, "`cpu_load` is CPU 1's busy share in `/proc/stat` (everything but idle and iowait: steal counts as "
               "busy), whatever ran there",
         "`steal` is the share of both vCPUs' time that the hypervisor took during the trial")
    low = lowest(t)
    m = low.groupby("experiment")["cpu_load"].mean()
    assert len(m) == 7
    kernel = low[low["experiment"] != CLICK]["offered_pps"].unique()
    assert len(kernel) == 1
    click = low[low["experiment"] == CLICK]["offered_pps"].iloc[0]
    says(VETH, f"At each sweep's lowest load ({pps(kernel[0])} pps, {kernel[0] / ceiling:.2f} of the ceiling; Click's "
               f"{pps(click)} pps) its mean was {span(m, pct())}%, and no trial read more than "
               f"{100 * low['cpu_load'].max():.0f}%")
    old = morning(previous)[0]
    olow = lowest(old)
    om = olow.groupby("experiment")["cpu_load"].mean()
    first = old.loc[pd.to_datetime(old["started_at"]).idxmin(), "experiment"]
    assert first == "linux-single-flow"
    rest = om.drop(first)
    assert len(rest) == 6 and rest.min() > 5 * m.max()
    ok = olow[olow["experiment"] != CLICK]["offered_pps"].unique()
    assert len(ok) == 1 and olow[olow["experiment"] == CLICK]["offered_pps"].iloc[0] == click
    says(VETH, f"In the morning's run it was {span(rest, pct())}% in the six sweeps after linux's "
               f"({100 * om[first]:.0f}%), at {pps(ok[0])} pps and Click's {pps(click)} pps")


def test_veth_steal(previous):
    t = veth()[0]
    thr = steal_threshold()
    sup = pd.read_csv(D / VETH / "superseded_trials.csv")
    att = pd.concat([t[["steal", "started_at"]], sup[["steal", "started_at"]]])
    hi = att[att["steal"] > thr]
    says(VETH, f"Of the {len(att):,} sweep attempts (the {len(t)} kept trials and the {len(sup)} attempts set aside), "
               f"{len(hi)} had steal above {thr:.0%} ({span(hi['steal'], pct(1))}%)")
    at = pd.to_datetime(att["started_at"]).dt.floor("min")
    minutes = pd.date_range(at.min(), at.max(), freq="min")
    struck = pd.to_datetime(hi["started_at"]).dt.floor("min").unique()
    says(VETH, f"it came and went all through the sweeps: in {len(struck)} of the {len(minutes)} minutes from "
               f"{minutes[0]:%H:%M} to {minutes[-1]:%H:%M} UTC at least one attempt had more than {thr:.0%}")
    kept = t[t["steal"] > thr]
    assert kept["disturbed"].all()
    says(VETH, f"{len(kept)} kept trials still had steal above {thr:.0%} after 3 repeats "
               f"({span(kept['steal'], pct(1))}%)")
    per = t.groupby("experiment")["steal"].mean()
    says(VETH, f"The mean steal per sweep was {span(per, pct(1))}% and the largest of a kept trial "
               f"{100 * t['steal'].max():.1f}%")
    old = morning(previous)[0]
    oper = old.groupby("experiment")["steal"].mean()
    assert oper.max() < per.min()
    says(VETH, f"in the morning's run {span(oper, pct(2))}% and {100 * old['steal'].max():.1f}%")
    s = search_trials()
    ss = pd.read_csv(D / VETH / "superseded_search_trials.csv")
    n = (s["steal"] > thr).sum() + (ss["steal"] > thr).sum()
    says(VETH, f"In the searches, {n} of the {len(s) + len(ss):,} attempts had steal above {thr:.0%} (at most "
               f"{100 * max(s['steal'].max(), ss['steal'].max()):.1f}%)")


def test_veth_validation_of_the_sweeps():
    t = veth()[0]
    sup = superseded(VETH, "superseded_trials.csv")
    assert (sup["why"] != "").all() and sup["disturbed"].all()
    again = t[t["attempt"] > 1]
    assert len(sup) == (again["attempt"] - 1).sum()
    per = again.groupby("experiment").size()
    assert len(per) == 7
    says(VETH, f"{len(again)} of the {len(t)} sweep trials were measured again, with {len(sup)} attempts set aside "
               f"(`superseded_trials.csv`), in every sweep ({span(per, str)} trials each, Click's included)")
    steal = sup[sup["why"].str.contains("steal")]
    stop = sup[sup["why"].str.contains("router CPU stopped")]
    lag = sup[sup["why"].str.contains("generator fell behind")]
    assert sup["why"].str.count(";").max() == 2 and len(steal) + len(stop) + len(lag) > len(sup)
    says(VETH, f"with two or three reasons for some attempts: steal above 2% in {len(steal)} "
               f"({span(steal['steal'], pct(1))}%), a stop of the router's CPU in {len(stop)} (read as "
               f"{span(stop['cpu_stop_ms'], one)} ms, against a queue of {span(stop['queue_ms'], one)} ms), a lag of "
               f"the generator in {len(lag)} ({span(lag['gen_late_ms'], one)} ms)")
    dist = t[t["disturbed"]]
    assert (dist["attempt"] == 4).all() and dist["experiment"].nunique() == 7
    w = why(dist)
    with_steal = w.str.startswith("steal")
    others = dist[~with_steal].assign(why=w[~with_steal])
    assert len(others) == 2 and (others["steal"] <= steal_threshold()).all()
    stop1 = others[others["why"].str.startswith("router CPU stopped") & ~others["why"].str.contains(";")]
    lag1 = others[others["why"].str.startswith("generator fell behind")]
    assert len(stop1) == 1 and len(lag1) == 1
    says(VETH, f"{len(dist)} kept trials are still `disturbed` after 3 repeats, in every sweep: {with_steal.sum()} for "
               f"steal above 2% (some with a stop or a lag too), one for a stop of the router's CPU alone "
               f"({VETH_NAMES[stop1['experiment'].iloc[0]]}, {pps(stop1['offered_pps'].iloc[0])} pps) and one for a "
               f"lag of the generator alone ({VETH_NAMES[lag1['experiment'].iloc[0]]}, "
               f"{pps(lag1['offered_pps'].iloc[0])} pps)")
    # the statistics count them: a load's runs are its trials the generator delivered, disturbed or not
    a = veth()[2]
    k = kept_trials()
    runs = stats.summaries(list(a.values())).set_index(["experiment", "offered_pps"])["runs"]
    assert (k.groupby(["experiment", "offered_pps"]).size() == runs.reindex(k.groupby(
        ["experiment", "offered_pps"]).size().index)).all()
    assert k["disturbed"].sum() == len(dist)
    says(VETH, "The statistics below count them, as they count every kept trial the generator delivered")


def test_veth_validation_of_the_searches():
    s = search_trials()
    ss = superseded(VETH, "superseded_search_trials.csv")
    assert (ss["why"] != "").all() and ss["disturbed"].all()
    n = {k: ss["why"].str.contains(p).sum() for k, p in
         (("lag", "generator fell behind"), ("stop", "router CPU stopped"), ("steal", "steal"))}
    assert sum(n.values()) > len(ss) and ss["why"].str.count(";").max() == 2
    says(VETH, f"{len(ss)} attempts were measured again, in {(s['attempt'] > 1).sum()} of the {len(s)} search trials: "
               f"{n['steal']} for steal, {n['stop']} for a stop of the router's CPU, {n['lag']} for a lag of the "
               f"generator (two or three reasons for some)")
    per = ss.groupby("engine").size()
    assert set(per.index) == {"ebpf", "linux", "nft"}
    says(VETH, f"{per['ebpf']} of them were ebpf's, {per['linux']} linux's and {per['nft']} nft's")
    dist = s[s["disturbed"]]
    assert (dist["attempt"] == 4).all()
    w = why(dist.rename(columns={"load": "offered_pps"})).str.split(" ").str[0]
    assert set(w) == {"steal", "router", "generator"}
    # a trial kept disturbed counts like any other: it passes or fails on its loss
    judged = dist[~dist["generator_limited"]]
    assert (judged["passed"] == [search.passes(k, tx, rx, stats.PDR_FRACTION) for k, tx, rx in
                                 zip(judged["kind"], judged["tx"], judged["rx"])]).all()
    says(VETH, "A trial kept `disturbed` counts like any other: it fails when it lost more than the criterion allows")
    says(VETH, f"{len(dist)} kept search trials are still `disturbed` ({(w == 'steal').sum()} with steal above 2%, "
               f"{(w == 'router').sum()} with a stop of the router's CPU and no steal, {(w == 'generator').sum()} with "
               f"only a lag of the generator); {int(dist['passed'].sum())} of them passed")


def test_veth_ceilings_and_the_generators_shortfall(previous):
    r = pd.read_csv(D / VETH / "search_results.csv")
    c = r.groupby("experiment")["generator_ceiling_pps"].first()
    t, _, _, ceiling = veth()
    assert (c.drop([x for x in c.index if x.startswith("bench-")]) == ceiling).all()
    bench_pdr = c[[x for x in c.index if x.startswith("bench-pdr-")]].unique()
    bs = c["bench-search-linux-single-flow"]
    assert len(bench_pdr) == 1 and ceiling not in (bench_pdr[0], bs)
    says(VETH, "Those two measure the generator's ceiling again themselves (below).")
    says(VETH, f"{pps(ceiling)} pps when the script started (the ceiling of the sweeps and searches), "
               f"{pps(bs)} pps when `bench search` started and {pps(bench_pdr[0])} pps when `bench engines` did, "
               f"{100 * (bs / ceiling - 1):.0f}% higher")
    lim = t[t["generator_limited"].astype(bool)]
    g = lim.groupby("experiment")
    assert set(g.groups) == {"linux-single-flow", "nft-single-flow-fw5", CLICK}
    assert (g.size().drop(CLICK) == 1).all()
    cl = sorted(lim[lim["experiment"] == CLICK]["offered_pps"].unique())
    assert len(cl) == 2
    says(VETH, f"{len(lim)} of the {len(t)} sweep trials were generator-limited (left out of the statistics): one of "
               f"linux at {pps(g.get_group('linux-single-flow')['offered_pps'].iloc[0])} pps, one of nft with 5 rules "
               f"at {pps(g.get_group('nft-single-flow-fw5')['offered_pps'].iloc[0])} pps and "
               f"{g.size()[CLICK]} of Click's at {pps(cl[0])} and {pps(cl[1])} pps")
    old = morning(previous)[0]
    says(VETH, f"In the morning's run {int(old['generator_limited'].astype(bool).sum())} were")


def test_veth_verdict_table():
    _, _, a, ceiling = veth()
    k = kept_trials()
    tirs, crossings, shares = [], [], []
    for exp, name in VETH_NAMES.items():
        x = a[exp]
        v = x.verdict
        s = x.summary.set_index("offered_pps")
        over = s[s["plr"] > stats.PDR_FRACTION]
        runs = lambda o: f" (K={s.loc[o, 'runs']})" if s.loc[o, "runs"] < 10 else ""  # noqa: E731
        first = f"{sig2(over['plr'].iloc[0])}% at {pps(over.index[0])}{runs(over.index[0])}"
        if exp == CLICK:
            assert v.good and v.why == "saturation right after the PDR load"
            says(VETH, f"| {name} | **{v.label}** | {first} | {v.why} (below) |")
            continue
        assert not v.good
        if v.candidate_index is None:
            # the crossing is at the highest load, the generator's ceiling: nothing above it to judge
            assert exp == "linux-single-flow" and over.index[0] == s.index.max() == ceiling
            assert v.why == "loss passes the PDR fraction only at the highest load (to do: loads above it)"
            says(VETH, f"| {name} | **{v.label}** | {first} | {v.why}, which is the generator's ceiling |")
            continue
        # the other kernel paths: BAD, still rising at the load after the crossing
        assert v.still_rising and v.why == "throughput still rising after the PDR load"
        i = v.candidate_index
        o = x.summary["offered_pps"].iloc[i]
        assert x.summary["offered_pps"].iloc[i - 1] == over.index[0]
        tirs.append(v.tir[i])
        crossings.append(over.index[0])
        g = k[(k["experiment"] == exp) & (k["offered_pps"] == over.index[0])]
        shares.append(g[g["disturbed"]]["lost"].sum() / g["lost"].sum())
        says(VETH, f"| {name} | **{v.label}** | {first} | {v.why}: at {pps(o)} pps{runs(o)} it loses "
                   f"{sig2(s.loc[o, 'plr'])}% and forwards {pps(s.loc[o, 'throughput_pps'])} pps "
                   f"(TIR {v.tir[i]:.2f}) |")
    v = a["linux-single-flow"].verdict
    p = v.params
    assert len(tirs) == 5 and all(x >= p.eta * p.entry_multiplier for x in tirs)
    says(VETH, f"Linux's verdict is BAD because its mean loss first passes 0.5% at its highest load, the generator's "
               f"{pps(ceiling)}-pps ceiling: no load above it could be offered to judge saturation.",
         f"The other five kernel-path verdicts are BAD for one reason: at the load right after the crossing, "
         f"throughput still grows by {span(tirs, lambda x: f'{x:.2f}')} pps per added pps (TIR), where saturation "
         f"needs less than {p.eta * p.entry_multiplier:g}",
         f"Their crossings are at {span(crossings, pps)} pps "
         f"({span([c / ceiling for c in crossings], lambda x: f'{x:.1f}')} of the ceiling)")
    # none saturates below the ceiling: throughput rises at every step of load
    top = []
    for e in KERNEL_PATHS:
        s = a[e].summary
        assert s["throughput_pps"].is_monotonic_increasing and s["offered_pps"].max() == ceiling, e
        top.append(s["throughput_pps"].iloc[-1])
    says(VETH, f"In every kernel-path sweep the throughput (offered × (1 - mean loss)) rose at every step of load up "
               f"to the ceiling, where they forwarded {span(top, pps)} pps: none saturated below it")
    # how much of each crossing the trials kept disturbed (all of them for steal) carried
    five = [e for e in KERNEL_PATHS if e != "linux-single-flow"]
    assert all(k[(k["experiment"] == e) & (k["offered_pps"] == c) & k["disturbed"]]["steal"].gt(0.02).all()
               for e, c in zip(five, crossings))
    says(VETH, "Of the packets lost at each crossing, the trials kept `disturbed` (for steal above 2%) lost: "
               + "; ".join(f"{VETH_NAMES[e]} {pct()(x) + '%' if x else 'none'}" for e, x in zip(five, shares)))
    # loss that does not grow with the load
    plr = {e: a[e].summary.set_index("offered_pps")["plr"] for e in KERNEL_PATHS}
    n5, n50, e0 = plr["nft-single-flow-fw5"], plr["nft-single-flow-fw50"], plr["ebpf-single-flow"]
    l5 = [194_270, 233_123, 310_831]
    assert n5[l5[0]] > n5[l5[1]] > n5[l5[2]] == 0
    assert n50[155_416] > 0.005 and n50[194_270] == 0
    assert e0.idxmax() == 155_416 and e0[ceiling] < e0[155_416] / 5
    runs5 = a["nft-single-flow-fw5"].summary.set_index("offered_pps").loc[l5[2], "runs"]
    says(VETH, f"nft with 5 rules lost {sig2(n5[l5[0]])}% at {pps(l5[0])} pps, {sig2(n5[l5[1]])}% at {pps(l5[1])} and "
               f"{sig2(n5[l5[2]])} at {pps(l5[2])} pps (K={runs5}); "
               f"nft with 50 rules {sig2(n50[155_416])}% at {pps(155_416)} pps and {sig2(n50[194_270])} at "
               f"{pps(194_270)}; "
               f"ebpf with no rules lost the most at {pps(155_416)} pps ({sig2(e0[155_416])}%) and "
               f"{sig2(e0[ceiling])}% at {pps(ceiling)}")


def test_veth_loss_per_load_table():
    _, _, a, ceiling = veth()
    k = [e for e in VETH_NAMES if e != CLICK]
    says(VETH, f"| sweep | verdict | mean loss first above {stats.PDR_FRACTION:.1%} at (pps) | why |")
    says(VETH, "| load (share of ceiling, pps) | " + " | ".join(VETH_NAMES[e] for e in k) + " |")
    t = veth()[0]
    loads = sorted(t[t["experiment"].isin(k)]["offered_pps"].unique())
    for o in loads:
        cells = []
        for e in k:
            s = a[e].summary.set_index("offered_pps")
            assert o in s.index  # no load where every trial was generator-limited
            c = sig2(s.loc[o, "plr"])
            cells.append(c + (f" (K={s.loc[o, 'runs']})" if s.loc[o, "runs"] < 10 else ""))
        says(VETH, f"| {round(o / ceiling, 2):g} ({pps(o)}) | " + " | ".join(cells) + " |")
    s = stats.summaries(list(a.values())).set_index(["experiment", "offered_pps"])["plr"]
    frac = pd.Series(s.index.get_level_values(1) / ceiling, index=s.index).round(2)
    exp = pd.Series(s.index.get_level_values(0), index=s.index)
    first_loss = {e: frac[(exp == e) & (s > 0)].min() for e in k}
    last_clean = {e: frac[(exp == e) & (frac < first_loss[e])].max() for e in k}
    same = ["linux-single-flow", "nft-single-flow-fw5", "nft-single-flow-fw50"]
    assert len({last_clean[e] for e in same}) == 1 and first_loss["ebpf-single-flow"] == first_loss[
        "ebpf-single-flow-fw50"]
    says(VETH, f"Linux and nft with 5 and 50 rules lost nothing up to {last_clean['linux-single-flow']:g} of the "
               f"ceiling, nft with an empty chain nothing up to {last_clean['nft-single-flow-fw0']:g}; the XDP router "
               f"lost from {first_loss['ebpf-single-flow']:g} of the ceiling with and without rules")
    # below 0.3 of the ceiling, every lossy trial was kept disturbed, for steal
    kt = with_frac(kept_trials(), ceiling)
    kt = kt[kt["experiment"].isin(k)]
    lossy = kt[kt["lost"] > 0]
    clean_first = lossy[~lossy["disturbed"]]["frac"].min()
    below = lossy[lossy["frac"] < clean_first]
    assert below["disturbed"].all() and (below["steal"] > steal_threshold()).all()
    first_pps = kt[kt["frac"] == clean_first]["offered_pps"].iloc[0]
    says(VETH, f"Below {clean_first:g} of the ceiling ({pps(first_pps)} pps) only {len(below)} trials lost packets, "
               f"each kept `disturbed` with steal above 2% ({span(below['steal'], pct(1))}%)")
    by = lossy[~lossy["disturbed"]].groupby("experiment")["offered_pps"].min()
    assert by.min() == first_pps
    says(VETH, "Of the trials not kept `disturbed`, the first to lose packets were at "
               + "; ".join(f"{pps(o)} pps for " + listed(SPOKEN[e] for e in KERNEL_PATHS if by.get(e) == o)
                           for o in sorted(by.unique())))


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


def lossy_at_backlog(band):
    """The trials of ``band`` that lost packets; each lost them at the DUT's backlog only."""
    lossy = band[band["lost"] > 0]
    assert lossy["drops"].str.fullmatch(r"dut:CPU_BACKLOG=\d+").all()
    return lossy


def morning_band(previous):
    """The morning run's kept trials of linux and nft with 0 and 5 rules at 0.4-0.6 of its ceiling, where they
    lost packets at low loads; this run's kept trials of the same paths at the loads that bracket those in pps."""
    ceiling = veth()[3]
    old, _, oc = morning(previous)
    low3 = KERNEL_PATHS[:3]
    ok = with_frac(old[~old["generator_limited"].astype(bool)], oc)
    ob = ok[ok["experiment"].isin(low3) & ok["frac"].between(0.4, 0.6)]
    k = kept_trials()
    loads = np.sort(k[k["experiment"].isin(low3)]["offered_pps"].unique())
    lo, hi = loads[loads <= ob["offered_pps"].min()].max(), loads[loads >= ob["offered_pps"].max()].min()
    nb = k[k["experiment"].isin(low3) & k["offered_pps"].between(lo, hi)]
    assert round(lo / ceiling, 2) == 0.5 and round(hi / ceiling, 2) == 0.8
    return ob, nb, oc


def test_veth_where_kernel_path_loss_went(previous):
    t, d, _, ceiling = veth()
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
    # low loads, then and now, in pps
    ob, nb, _ = morning_band(previous)
    olossy = lossy_at_backlog(ob)
    says(VETH, f"In the morning's run, linux and nft with 0 and 5 rules lost packets at "
               f"{pps(ob['offered_pps'].min())}-{pps(ob['offered_pps'].max())} pps (0.4-0.6 of its ceiling) in "
               f"{len(olossy)} of their {len(ob)} trials there, {sig2(ob['lost'].sum() / ob['tx'].sum())}% of the "
               f"packets offered, each lossy trial with CPU 1 {span(olossy['cpu_load'], pct())}% busy")
    lo, hi = nb["offered_pps"].min(), nb["offered_pps"].max()
    lossy = lossy_at_backlog(nb)
    says(VETH, f"In this run, at {pps(lo)}-{pps(hi)} pps ({lo / ceiling:.1f}-{hi / ceiling:.1f} of its ceiling, "
               f"around those loads), they lost packets in {len(lossy)} of {len(nb)} trials, "
               f"{sig2(nb['lost'].sum() / nb['tx'].sum())}% of the packets offered, with CPU 1 "
               f"{span(lossy['cpu_load'], pct())}% busy in those")
    dist = lossy[lossy["disturbed"]]
    clean = lossy[~lossy["disturbed"]]
    thr = steal_threshold()
    assert (clean["steal"] <= thr).all()
    assert (dist["steal"] > thr).sum() > len(lossy) / 2
    says(VETH, f"{len(dist)} of those {len(lossy)} were kept `disturbed` ({(dist['steal'] > thr).sum()} of them with "
               f"steal above 2%); the other {len(clean)} lost {span(clean['lost'], pps)} packets each, with steal "
               f"below 2% and no stop or lag that could account for the loss",
         "All of it was dropped where the morning's was: at the backlog (`dut CPU_BACKLOG` in `drops.csv`)")
    tm = kept_trials().groupby("experiment")["trace_missed"]
    says(VETH, f"`trace_missed` is {span(tm.sum().loc[kernel], pps)} packets per kernel-path sweep, "
               f"in {span((tm.apply(lambda s: (s > 0).mean())).loc[kernel], pct())}% of its trials")
    assert (t[~t["experiment"].isin(kernel)]["trace_missed"] == 0).all()
    kk = kept_trials()
    struck = kk[kk["experiment"].isin(kernel) & (kk["trace_missed"] > 0)]
    share = struck["trace_missed"] / struck["rx"]
    says(VETH, f"In the trials it struck it was a median {span(share.groupby(struck['experiment']).median(), pct(2))}% "
               f"of the sink's packets per sweep, and at most {100 * share.max():.0f}%.")


def test_veth_where_xdp_loss_went(previous):
    t, d, _, ceiling = veth()
    keys = ["experiment", "offered_pps", "trial"]
    ebpf = ["ebpf-single-flow", "ebpf-single-flow-fw50"]
    x = veth_lost_by_place().loc[ebpf]
    assert (x["dut NOT_SPECIFIED"] == x["lost"]).all()
    rows = d[d["experiment"].isin(ebpf)]
    nodev = rows[rows["place"] == "nodev"]
    squeeze = rows[(rows["source"] == "softnet") & (rows["reason"] == "time_squeeze")]
    per = per_trial_counters().loc[ebpf]
    per = per.loc[:, (per != 0).any()]
    # trial by trial, the DUT's NOT_SPECIFIED drops are the generator veth's tx_dropped, and no other drop counted
    assert set(per.columns) == {"dut kfree_skb NOT_SPECIFIED", "tg link g0.tx_dropped", "sink kfree_skb NETFILTER_DROP",
                                "nodev kfree_skb NOT_SPECIFIED", "cpu1 softnet time_squeeze"}
    assert (per["dut kfree_skb NOT_SPECIFIED"] == per["tg link g0.tx_dropped"]).all()
    lost = t[t["experiment"].isin(ebpf)].set_index(keys)
    assert (per["dut kfree_skb NOT_SPECIFIED"].reindex(lost.index).fillna(0) == lost["lost"]).all()
    says(VETH, f"in each of the {int((per['dut kfree_skb NOT_SPECIFIED'] > 0).sum())} ebpf trials that lost packets, "
               f"the generator-side veth's `g0.tx_dropped` (a context row) equals the DUT's NOT_SPECIFIED drops")
    assert (nodev["counted_as"] == "context").all() and (squeeze["counted_as"] == "context").all()
    e = datasets.read_experiments(D / VETH)
    kernel = e["kernel"].iloc[0]
    ring = notes(e[e["engine"] == "ebpf"].iloc[0])["router_queue_packets"]
    says(VETH, f"On this kernel ({'.'.join(kernel.split('.')[:2])}) a veth whose peer runs XDP hands each packet to "
               f"the peer's {ring}-entry ring")
    says(VETH, f"the tracer also saw {nodev['packets'].sum()} drops with no device, `nodev`, in "
               f"{len(nodev.drop_duplicates(keys))} trials, and CPU 1's softnet `time_squeeze`, its receive work "
               f"running out of its budget rather than a drop, moved in {len(squeeze.drop_duplicates(keys))} trials: "
               f"context rows")
    # low loads: the ring against the generator's worst lag, now and in the morning's run
    k = with_frac(kept_trials(), ceiling)
    e = k[k["engine"] == "ebpf"]
    q = e.groupby("frac")["queue_ms"].first()
    assert np.allclose(q, 256 / q.index.map(lambda f: e[e["frac"] == f]["offered_pps"].iloc[0]) * 1e3, atol=1e-3)
    says(VETH, f"The ring holds {ring} packets.")
    clean, band = e[e["frac"].isin([0.05, 0.1])], e[e["frac"].isin([0.15, 0.2])]
    assert (clean["lost"] == 0).all()
    lp = e.groupby("frac")["offered_pps"].first()
    says(VETH, f"At 0.05 and 0.1 of the ceiling ({pps(lp[0.05])} and {pps(lp[0.1])} pps) it lasts "
               f"{' and '.join(one(v) for v in q.loc[[0.05, 0.1]])} ms, and no trial lost a packet, with or "
               f"without rules")
    longer = band[band["gen_late_ms"] > band["queue_ms"]]
    lossy = band[band["lost"] > 0]
    thr = steal_threshold()
    assert lossy["disturbed"].all() and (lossy["steal"] > thr).all()
    says(VETH, f"At 0.15 and 0.2 ({pps(lp[0.15])} and {pps(lp[0.2])} pps) it lasts "
               f"{' and '.join(one(v) for v in q.loc[[0.15, 0.2]])} ms; the generator's worst lag was longer in "
               f"{len(longer)} of those {len(band)} trials, and {len(lossy)} trials lost packets "
               f"({span(lossy['lost'], pps)} each), every one kept `disturbed` with steal above 2%")
    old, _, oc = morning(previous)
    ok = with_frac(old[~old["generator_limited"].astype(bool)], oc)
    oe = ok[ok["engine"] == "ebpf"]
    ob = oe[oe["frac"].isin([0.15, 0.2])]
    assert (ob["gen_late_ms"] > ob["queue_ms"]).all()
    o0 = ob[ob["experiment"] == "ebpf-single-flow"]
    n0 = o0[o0["lost"] > 0].groupby("offered_pps").size()
    assert n0.nunique() == 1 and len(n0) == 2 and o0.groupby("offered_pps").size().eq(10).all()
    says(VETH, f"In the morning's run, at {pps(ob['offered_pps'].min())} and {pps(ob['offered_pps'].max())} pps "
               f"(0.15 and 0.2 of its ceiling), every trial's worst lag was longer than the ring lasted "
               f"({span(ob['gen_late_ms'], one)} ms), and ebpf with no rules lost packets in {n0.iloc[0]} of the 10 "
               f"trials at each")
    olow, nlow = oe[oe["frac"] <= 0.2], e[e["frac"] <= 0.2]
    assert olow["gen_late_ms"].median() > nlow["gen_late_ms"].median()
    says(VETH, f"the median worst lag at 0.05-0.2 of the ceiling was {olow['gen_late_ms'].median():.1f} ms then and "
               f"{nlow['gen_late_ms'].median():.1f} ms now")
    o50, n50 = (x[(x["experiment"] == "ebpf-single-flow-fw50") & (x["frac"] <= 0.2)] for x in (oe, e))
    says(VETH, f"With 50 rules, CPU 1 was {span(o50['cpu_load'], pct())}% busy at each load up to 0.2 of the ceiling "
               f"then and {span(n50['cpu_load'], pct())}% now")


def test_veth_click(previous):
    t, d, a, _ = veth()
    c = t[t["experiment"] == CLICK]
    kept = c[~c["generator_limited"].astype(bool)]
    s = a[CLICK].summary.set_index("offered_pps")
    cpu = kept.groupby("offered_pps")["cpu_load"].mean()
    zero = s[s["plr"] == 0].index
    first = s[s["plr"] > 0].index[0]
    assert (s.loc[:first].iloc[:-1]["plr"] == 0).all()
    lossy1 = c[(c["offered_pps"] == first) & (c["lost"] > 0)]
    assert len(lossy1) == 1 and lossy1["attempt"].iloc[0] == 1 and not lossy1["disturbed"].iloc[0]
    pdr = a[CLICK].pdr.load
    between = s.loc[first:pdr].iloc[1:-1]
    assert (between["plr"] == 0).all() and len(between) == 2
    at = c[(c["offered_pps"] == pdr) & (c["lost"] > 0)]
    assert not at["disturbed"].any() and (at["attempt"] == 1).all()
    says(VETH,
         f"**Click** ({when_range(c['started_at'])} UTC) forwards with no loss up to {pps(zero[zero < first].max())} "
         f"pps. At {pps(first)} pps one trial lost {lossy1['lost'].iloc[0]} packets (a mean of "
         f"{sig2(s.loc[first, 'plr'])}%), "
         f"at {pps(between.index[0])} and {pps(between.index[1])} pps none did, and at {pps(pdr)} pps {len(at)} of 10 "
         f"trials lost packets (a mean of {sig2(s.loc[pdr, 'plr'])}%): its PDR@0.5% on this grid is {pps(pdr)} pps. "
         f"None of those {len(lossy1) + len(at)} lossy trials was measured again.")
    nxt = s.index[s.index.get_loc(pdr) + 1]
    says(VETH, f"Then it saturates: {sig2(s.loc[nxt, 'plr'])}% at {pps(nxt)} pps")
    after = s.loc[nxt:].iloc[1:]
    assert after["throughput_pps"].is_monotonic_decreasing
    assert after["throughput_pps"].max() < s.loc[nxt, "throughput_pps"]
    says(VETH, f"throughput (offered × (1 - mean loss)) falls from {pps(s.loc[nxt, 'throughput_pps'])} pps there to "
               + ", ".join(pps(x) for x in after["throughput_pps"][:-1])
               + f" and {pps(after['throughput_pps'].iloc[-1])}"
               + " pps at " + ", ".join(pps(x) for x in after.index[:-1]) + f" and {pps(after.index[-1])} offered, "
               f"with the CPU {span(cpu.loc[nxt:], pct())}% busy")
    old = morning(previous)[0]
    oc = old[old["experiment"] == CLICK]
    o5 = oc[oc["offered_pps"] == oc["offered_pps"].min()]["cpu_load"].mean()
    assert o5 > 5 * cpu.iloc[0]
    says(VETH, f"Up to {pps(pdr)} pps its CPU was {span(cpu.loc[:pdr], pct())}% busy ({100 * cpu.iloc[0]:.0f}% at "
               f"{pps(cpu.index[0])} pps; {100 * o5:.0f}% in the morning's run)")
    lim = c[c["generator_limited"].astype(bool)]
    says(VETH, f"equals the sink's count in all {len(c)} trials",
         f"{len(lim)} trials at {pps(lim['offered_pps'].min())}-{pps(lim['offered_pps'].max())} pps were "
         f"generator-limited (left out)")
    assert (c["engine_forwarded"] == c["rx"]).all()
    e = datasets.read_experiments(D / VETH).set_index("experiment").loc[CLICK]
    assert notes(e)["capture"].startswith("AF_PACKET")
    # every packet reached the DUT: its drop of the kernel's copy (design) counted nearly all that was sent
    dut = d[(d["experiment"] == CLICK) & (d["place"] == "dut") & (d["reason"] == "NETFILTER_DROP")]
    assert (dut["counted_as"] == "design").all()
    share = dut["packets"].sum() / c["tx"].sum()
    says(VETH, f"(`counted_as=design`) counted {100 * share:.2f}% of the packets sent")
    x = veth_lost_by_place().loc[CLICK]
    other = x["lost"] - x["dut FromDevice@4.kernel_drops"]
    assert other == x["dut CPU_BACKLOG"] + x["dut out/Queue@1.drops"]
    says(VETH, f"That took all but {pps(other)} of Click's {pps(x['lost'])} lost packets; CPU 1's backlog took "
               f"{pps(x['dut CPU_BACKLOG'])} and Click's output `Queue` {pps(x['dut out/Queue@1.drops'])}.")
    q = kept[kept["drops"].fillna("").str.contains("out/Queue")]
    ql = sorted(q["offered_pps"].unique())
    assert len(ql) == 2
    says(VETH, f"The `Queue` dropped packets only at {pps(ql[0])} and {pps(ql[1])} pps")


def test_veth_searches():
    r = veth_searches()
    _, _, a, ceiling = veth()
    ours = r[(r["method"] == "routerlab") & ~r["experiment"].str.startswith("bench-")]
    for exp, name in VETH_NAMES.items():
        if exp == CLICK:
            continue
        x = ours[ours["experiment"] == exp].set_index("kind")
        assert x.loc["ndr", "lower_pps"] <= x.loc["pdr", "lower_pps"]
        says(VETH, f"| {name} | {x.loc['pdr', 'answer']} | {x.loc['ndr', 'answer']} |")
    says(VETH, "Every NDR is at or below its PDR")
    s = search_trials()
    mine = s[(s["method"] == "routerlab")]
    assert set(mine[mine["phase"] == "short"]["duration"]) == {0.5}
    assert set(mine[mine["phase"] == "final"]["duration"]) == {1}
    assert (r["final_trials"] == 3).all()
    says(VETH, f"short trials of 0.5 s first, then 1 s trials at full duration, {r['final_trials'].iloc[0]} trials per "
               f"load, passing a load on its median trial")
    found = ours[ours["upper_pps"].notna()]
    says(VETH, f"Precision (1 - lower/upper) is {span(found['precision'], pct(1))}% for every answer it found")
    # the lower bounds: no failure up to the ceiling, and one bounded by the generator
    bound = ours[ours["upper_pps"].isna()]
    assert np.allclose(bound["lower_pps"], ceiling)
    none_failed = bound[~bound["generator_bound"]]
    assert sorted(zip(none_failed["experiment"], none_failed["kind"])) == [
        ("linux-single-flow", "pdr"), ("nft-single-flow-fw0", "pdr"), ("nft-single-flow-fw5", "pdr")]
    gb = bound[bound["generator_bound"]]
    assert list(zip(gb["experiment"], gb["kind"])) == [("linux-single-flow", "ndr")]
    says(VETH, f"Of these answers, {len(bound)} are lower bounds: the PDR searches of linux and of nft with 0 and 5 "
               "rules failed "
               f"no load up to the generator's {pps(ceiling)}-pps ceiling, and neither did linux's NDR search, some of "
               f"whose trials were generator-limited")
    lim = ours[ours["limited_by_generator"].astype(str).str.lower() == "true"]
    assert list(lim["experiment"]) == ["linux-single-flow"]
    # the XDP router without rules: the lowest answers, in a search of disturbed trials
    e0 = ours[ours["experiment"] == "ebpf-single-flow"].set_index("kind")
    assert set(ours.nsmallest(2, "lower_pps")["experiment"]) == {"ebpf-single-flow"}
    sw = a["ebpf-single-flow"].summary.set_index("offered_pps")["plr"]
    clean_to = sw[sw.index > e0["lower_pps"].max()]
    o = clean_to[clean_to <= 0.005].index.max()
    assert (sw.loc[:o] <= 0.005).all()
    f = s[(s["experiment"] == "ebpf-single-flow") & (s["phase"] == "final")]
    fd = f[f["disturbed"]]
    assert len(fd) > len(f) / 2
    when = pd.to_datetime(e0["when"].iloc[0])
    thr = steal_threshold()
    says(VETH, f"ebpf with no rules has the lowest answers, {e0.loc['pdr', 'answer']} and {e0.loc['ndr', 'answer']}, "
               f"though its sweep's mean loss stayed below 0.5% up to {pps(o)} pps. Its searches (recorded at "
               f"{when:%H:%M} UTC) kept {len(fd)} of their {len(f)} final trials `disturbed`, "
               f"{(fd['steal'] > thr).sum()} of them with steal above 2% (at most {100 * fd['steal'].max():.1f}%)")
    pf = f[(f["kind"] == "pdr") & np.isclose(f["load"], e0.loc["pdr", "upper_pps"])]
    assert len(pf) == 3 and pf["disturbed"].all() and not pf["passed"].any()
    says(VETH, f"Its PDR search failed {pps(e0.loc['pdr', 'upper_pps'])} pps on three trials all kept `disturbed` "
               f"(they lost {', '.join(sig2(x) + '%' for x in sorted(pf['loss'])[:-1])} and "
               f"{sig2(sorted(pf['loss'])[-1])}%)")
    # the same routers searched again by the benchmarks, each with its own ceiling
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
    says(VETH, f"{100 * abs(y['lower_pps'] / x['lower_pps'] - 1):.0f}% apart where each search's precision is at most "
               f"{100 * max(x['precision'], y['precision']):.1f}%")
    x = r[(r["experiment"] == "ebpf-single-flow") & (r["kind"] == "pdr")].iloc[0]
    y = r[r["experiment"] == "bench-pdr-ebpf-single-flow"].iloc[0]
    yf = s[(s["experiment"] == "bench-pdr-ebpf-single-flow") & (s["phase"] == "final")]
    says(VETH, f"{y['lower_pps'] / x['lower_pps']:.1f} times as high; that search, too, kept "
               f"{int(yf['disturbed'].sum())} of its {len(yf)} final trials `disturbed`")
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
    assert (b["final_trials"] == 3).all()
    says(VETH, f"same criterion: {b['final_trials'].iloc[0]} trials' worth of full-duration time, median trial; "
               f"ceiling {pps(ceiling)} pps):")
    assert not b["generator_bound"].any()
    for kind in ("ndr", "pdr"):
        o, m = b.loc[(kind, "routerlab")], b.loc[(kind, "mlrsearch")]
        says(VETH,
             f"| {kind.upper()} answer | {o['answer']} ({o['trials']} trials, {o['trial_seconds']:g} trial-s) | "
             f"{m['answer']} ({m['trials']} trials, {m['trial_seconds']:g} trial-s) | "
             f"{o['lower_pps'] / m['lower_pps']:.3f} | {o['trial_seconds'] / m['trial_seconds']:.2f} |")
    says(VETH, "No answer here is a lower bound")
    # both PDR rows carry limited_by_generator for one trial each, below or at no failed load of the answer
    st = search_trials()
    st = st[(st["experiment"] == "bench-search-linux-single-flow") & (st["kind"] == "pdr")]
    lim = {m: st[(st["method"] == m) & st["generator_limited"].astype(bool)] for m in ("routerlab", "mlrsearch")}
    assert b.loc[("pdr", "routerlab"), "limited_by_generator"] and b.loc[("pdr", "mlrsearch"), "limited_by_generator"]
    assert all(len(x) == 1 for x in lim.values())
    ol, ml = lim["routerlab"].iloc[0], lim["mlrsearch"].iloc[0]
    assert np.isclose(ol["load"], b.loc[("pdr", "routerlab"), "lower_pps"]) and ol["duration"] == 1
    assert ml["duration"] == 0.5 and np.isclose(ml["load"], ceiling)
    for m in ("routerlab", "mlrsearch"):
        x = st[(st["method"] == m) & np.isclose(st["load"], b.loc[("pdr", m), "upper_pps"])]
        assert (~x["passed"]).sum() >= 2 and not x["generator_limited"].astype(bool).any()
    says(VETH, f"`search_results.csv` flags both PDR rows `limited_by_generator`, for one generator-limited trial in "
               f"each search: ours the 1-s trial that lost {sig2(ol['loss'])}% at {pps(ol['load'])} pps, MLRsearch's a "
               f"0.5-s trial at {pps(ml['load'])} pps; each search then failed a load above its answer in trials the "
               f"generator delivered")
    mp, mn = b.loc[("pdr", "mlrsearch")], b.loc[("ndr", "mlrsearch")]
    assert mp["lower_pps"] < mn["lower_pps"]
    says(VETH, f"MLRsearch's PDR ({pps(mp['lower_pps'])} pps) is below its own NDR ({pps(mn['lower_pps'])} pps)")
    p = search_trials()
    p = p[p["experiment"] == "bench-search-linux-single-flow"]
    # the order the searches ran in is the order of their trials in the file (one measure per probe)
    order = list(dict.fromkeys(zip(p["kind"], p["method"])))
    assert order == [("pdr", "routerlab"), ("pdr", "mlrsearch"), ("ndr", "routerlab"), ("ndr", "mlrsearch")]
    mlr = p[(p["kind"] == "pdr") & (p["method"] == "mlrsearch") & (p["duration"] == 1)]
    md = mlr[mlr["disturbed"]]
    failed = md[~md["passed"]]
    thr = steal_threshold()
    assert (failed["steal"] > thr).all()
    says(VETH, f"Its PDR search ran second, right after ours: {len(md)} of its {len(mlr)} 1-s trials were kept "
               f"`disturbed` ({(md['steal'] > thr).sum()} of them with steal above 2%), and the {len(failed)} of those "
               f"that failed, at {span(failed['load'], pps)} pps, all had steal above 2%")
    at = mlr[np.isclose(mlr["load"], mp["upper_pps"])]
    assert len(at) == 2 and not at["disturbed"].any() and not at["passed"].any()
    says(VETH, f"it stopped at {pps(mp['lower_pps'])} pps because two 1-s trials at {pps(mp['upper_pps'])} pps lost "
               f"{' and '.join(sig2(x) + '%' for x in sorted(at['loss']))} with nothing seen to disturb them")
    ours = b.loc[("pdr", "routerlab")]
    fin = p[(p["kind"] == "pdr") & (p["method"] == "routerlab") & (p["phase"] == "final")]
    top = fin[np.isclose(fin["load"], ours["lower_pps"])]
    nd = b.loc[("ndr", "routerlab")]
    nfin = p[(p["kind"] == "ndr") & (p["method"] == "routerlab") & (p["phase"] == "final")]
    ntop = nfin[np.isclose(nfin["load"], nd["lower_pps"])]
    assert len(ntop) == 3 and (ntop["lost"] == 0).all() and len(top) == 3
    says(VETH, f"Our PDR search, just before, had passed {pps(ours['lower_pps'])} pps (its three 1-s trials there "
               f"lost {', '.join(sig2(x) + '%' for x in top['loss'].iloc[:-1])} and {sig2(top['loss'].iloc[-1])}%), "
               f"and our NDR search, right after, passed {pps(nd['lower_pps'])} pps with three lossless 1-s trials")
    assert nd["lower_pps"] > mp["upper_pps"]
    says(VETH, f"lost {span(at['loss'], lambda x: sig2(x))}% at {pps(mp['upper_pps'])} pps and then nothing at "
               f"{pps(nd['lower_pps'])} pps")


def nsteal_max_check(old, t) -> bool:
    """This run had more steal than the morning's: in every sweep's mean, and in its largest."""
    return (t.groupby("experiment")["steal"].mean().min() > old.groupby("experiment")["steal"].mean().max()
            and t["steal"].max() > old["steal"].max())


def test_veth_against_the_previous_measurement(previous):
    old, oa, oc = morning(previous)
    oe, ne = datasets.read_experiments(previous), datasets.read_experiments(D / VETH)
    t, _, a, ceiling = veth()
    start = pd.to_datetime(old["started_at"])
    assert start.max() < pd.to_datetime(t["started_at"]).min()
    assert oe["kernel"].nunique() == 1 and oe["kernel"].iloc[0] == ne["kernel"].iloc[0]
    says(VETH, f"The data this replaces was measured the same day ({start.min():%Y-%m-%d}), from {start.min():%H:%M} "
               f"UTC, with code {CODE[:7]} (in git at commit {VETH_SHARED[:7]}), on the same kernel, with a generator "
               f"ceiling of {pps(oc)} pps")
    assert ceiling < oc
    says(VETH, f"this run's ceiling is {pps(ceiling)} pps, {100 * (1 - ceiling / oc):.0f}% lower")
    # the same commands, each with its own ceiling (the same fractions of it) and scratch folder
    def form(e):
        return {x.experiment: x.command.split(" --out ")[0].replace(f"--ceiling {x.generator_ceiling_pps:.0f}", "")
                for x in e.itertuples()}
    assert form(oe) == form(ne)
    says(VETH, "It replaces a run of the same commands made that morning beside other work (compared at the end)",
         "The kernel paths ran the same fractions of each run's ceiling, so the same fraction is a different load: "
         "the table compares loads in pps.")
    ol, nl = (lowest(x[x["experiment"] != CLICK])["offered_pps"].unique() for x in (old, t))
    assert len(ol) == len(nl) == 1
    says(VETH, f"| sweep | first load with loss (pps), then → now | the same, in a trial not kept `disturbed` | "
               f"PDR@0.5% (search), then → now | CPU 1 busy at the lowest load ({pps(ol[0])} → {pps(nl[0])} pps), "
               f"mean, then → now |")
    r0, r1 = datasets.read_searches([previous]), datasets.read_searches([D / VETH])
    olow, nlow = (lowest(x).groupby("experiment")["cpu_load"].mean() for x in (old, t))

    def first_loss(trials, exp, clean=False):
        k = trials[(trials["experiment"] == exp) & ~trials["generator_limited"].astype(bool) & (trials["lost"] > 0)]
        return k[~k["disturbed"]]["offered_pps"].min() if clean else k["offered_pps"].min()

    for e, name in VETH_NAMES.items():
        if e == CLICK:
            continue
        fo, fn = oa[e].summary.query("plr > 0")["offered_pps"].min(), a[e].summary.query("plr > 0")["offered_pps"].min()
        assert fo == first_loss(old, e) and fn == first_loss(t, e)
        co, cn = first_loss(old, e, clean=True), first_loss(t, e, clean=True)
        po = r0[(r0["experiment"] == e) & (r0["kind"] == "pdr")].iloc[0]
        pn = r1[(r1["experiment"] == e) & (r1["kind"] == "pdr")].iloc[0]
        says(VETH, f"| {name} | {pps(fo)} → {pps(fn)} | {pps(co)} → {pps(cn)} | {po['answer']} → "
                   f"{pn['answer']} | "
                   f"{100 * olow[e]:.0f}% → {100 * nlow[e]:.0f}% |")
    o, n = oe.set_index("experiment").loc[CLICK], ne.set_index("experiment").loc[CLICK]
    assert o["engine_version"] == n["engine_version"]
    assert notes(o)["click_config"] == notes(n)["click_config"] == "routers/click/iprouter.click"
    assert sorted(old[old["experiment"] == CLICK]["offered_pps"].unique()) == \
        sorted(t[t["experiment"] == CLICK]["offered_pps"].unique())
    says(VETH, f"Click, on the same grid of loads both times: first loss at {pps(first_loss(old, CLICK))} pps then and "
               f"{pps(first_loss(t, CLICK))} now, a PDR@0.5% of {pps(oa[CLICK].pdr.load)} pps then and "
               f"{pps(a[CLICK].pdr.load)} now, and CPU 1 {100 * olow[CLICK]:.0f}% busy at "
               f"{pps(t[t['experiment'] == CLICK]['offered_pps'].min())} pps then and {100 * nlow[CLICK]:.0f}% now.")
    assert (old["lost_unexplained"] == 0).all() and (t["lost_unexplained"] == 0).all()
    says(VETH, "No lost packet was unexplained then or now.")
    # what the comparison answers: the search answers of linux and nft with 0 and 5 rules, then and now
    three = [e for e in KERNEL_PATHS[:3]]
    po = r0[r0["experiment"].isin(three) & (r0["kind"] == "pdr")]
    pn = r1[r1["experiment"].isin(three) & (r1["kind"] == "pdr")]
    assert pn["upper_pps"].isna().all() and not pn["generator_bound"].any() and np.allclose(pn["lower_pps"], ceiling)
    assert po["upper_pps"].notna().all() and (po["upper_pps"] < ceiling).all()
    says(VETH, f"their PDR searches, which failed {span(po['upper_pps'], pps)} pps then, failed nothing up to "
               f"{pps(ceiling)} pps now")
    ob, nb, _ = morning_band(previous)
    lost_now, lost_then = nb["lost"].sum() / nb["tx"].sum(), ob["lost"].sum() / ob["tx"].sum()
    assert lost_now < lost_then / 3
    assert nsteal_max_check(old, t)
    lossy = nb[nb["lost"] > 0]
    # and they lost, a little, below the loads where they lost in the morning
    below = with_frac(kept_trials(), ceiling)
    below = below[below["experiment"].isin(KERNEL_PATHS[:3]) & (below["offered_pps"] < nb["offered_pps"].min())]
    bl = below.groupby(["experiment", "offered_pps"]).apply(lambda g: (g["lost"] / g["tx"]).mean())
    first_then = min(first_loss(old, e) for e in KERNEL_PATHS[:3])
    assert bl[bl > 0].index.get_level_values(1).min() < first_then
    says(VETH, f"Linux and nft with 0 and 5 rules also lost below the loads where the morning's loss began "
               f"({pps(first_then)} pps), a little: at "
               f"most {sig2(bl.max())}% on average at a load below {pps(nb['offered_pps'].min())} pps")
    says(VETH, f"linux and nft with 0 and 5 rules lost far less around the loads where they lost in the morning "
               f"({sig2(lost_now)}% of the packets offered against {sig2(lost_then)}%, above), though this run had "
               f"more steal",
         f"mostly in trials with steal above 2%, and in {(~lossy['disturbed']).sum()} trials with no disturbance seen",
         "The XDP router's loss at 0.15-0.2 of the ceiling came, in the morning, in trials whose generator lagged "
         "longer than its ring lasted; here the lag was shorter, and it lost there only in trials kept `disturbed`")
    osteal = old.groupby("experiment")["steal"].mean()
    nsteal = t.groupby("experiment")["steal"].mean()
    says(VETH, f"the generator's ceiling ({pps(oc)} → {pps(ceiling)} pps) and the steal (a mean of "
               f"{span(osteal, pct(2))}% per sweep → {span(nsteal, pct(1))}%)")
    e0 = "ebpf-single-flow"
    p0 = r0[(r0["experiment"] == e0) & (r0["kind"] == "pdr")].iloc[0]
    p1 = r1[(r1["experiment"] == e0) & (r1["kind"] == "pdr")].iloc[0]
    assert p1["lower_pps"] < p0["lower_pps"]
    rose = [e for e in KERNEL_PATHS if r1[(r1["experiment"] == e) & (r1["kind"] == "pdr")]["lower_pps"].iloc[0]
            > r0[(r0["experiment"] == e) & (r0["kind"] == "pdr")]["lower_pps"].iloc[0]]
    assert rose == [e for e in KERNEL_PATHS if e != e0]
    says(VETH, f"ebpf with no rules is the exception: its search answer fell ({pps(p0['lower_pps'])} → "
               f"{pps(p1['lower_pps'])} pps)")
