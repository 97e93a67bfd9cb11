"""Every number the README of microbench, fast-reroute and docs/testbed.md states, recomputed from its files (see readme_checks)."""

import io

import pandas as pd
import pytest

from routerlab import datasets
from routerlab.benchmarks import forwarding
from readme_checks import D, PREVIOUS, VETH_BEFORE, committed, pct, says, span, trials


def test_microbench_testbed_rows_give_no_ratio_to_a_limited_pdr():
    searches = datasets.read_searches([D / "testbed-click"])
    pdr = datasets.search_pdr(searches)
    table, _, _ = forwarding.summary(datasets.read_microbench(D / "microbench", "forwarding"), pdr)
    tb = table[table["where"] == "testbed (PDR@0.5%)"].set_index("engine")
    names = {"ebpf": "ebpf, testbed (PDR@0.5%)", "fastclick-dpdk": "fastclick-dpdk, testbed", "click": "click, testbed",
             "linux": "linux, testbed", "fastclick": "fastclick (AF_PACKET), testbed"}
    for engine, name in names.items():
        r = tb.loc[engine]
        if r["at_least"]:
            says("microbench", f"| {name} | at least {r['mpps']:.3f} ({r['bound']}) | none: a lower bound | |")
        else:
            says("microbench", f"| {name} | {r['mpps']:.3f} | {r['ratio_to_fastest']:.2f} | |")
    ceiling = searches["generator_ceiling_pps"].unique()
    assert len(ceiling) == 1
    day = pd.to_datetime(searches["when"]).min()
    says("microbench", f"(one run, {day:%Y-%m-%d}, generator ceiling {ceiling[0] / 1e3:.0f} kpps)")
    limited = tb[tb["at_least"]]
    assert set(limited.index) == {"linux", "fastclick-dpdk"} and (limited["bound"] == "limited by the generator").all()
    says("microbench", f"their PDRs are at least {tb.loc['linux', 'mpps'] * 1e3:.0f} and "
                       f"{tb.loc['fastclick-dpdk', 'mpps'] * 1e3:.0f} kpps, so they have no ratio")
    known = tb[~tb["at_least"]]
    assert known["ratio_to_fastest"].idxmax() == "ebpf"
    says("microbench", f"the fastest whose PDR is the router's own ({known.loc['ebpf', 'mpps'] * 1e3:.0f} kpps)")
    says("microbench", f"FastClick on AF_PACKET carries {known.loc['fastclick', 'mpps'] / known.loc['click', 'mpps']:.2f} "
                       "times what Click carries, one search step apart")
    # one step: fastclick's failing load is click's answer
    r = searches[(searches["kind"] == "pdr") & (searches["method"] == "routerlab")].set_index("engine")
    assert r.loc["fastclick", "upper_pps"] == r.loc["click", "lower_pps"]


def test_microbench_in_memory_and_batch_tables():
    f = datasets.read_microbench(D / "microbench", "forwarding").groupby("engine").agg(
        med=("mpps", "median"), lo=("mpps", "min"), hi=("mpps", "max"), ipp=("instructions_per_packet", "first"))
    fast, click = f.loc["fastclick"], f.loc["click"]
    says("microbench",
         f"| FastClick, in memory (batches of 32) | {fast['med']:.2f} ({fast['lo']:.2f}-{fast['hi']:.2f}) | 1.00 | "
         f"{fast['ipp']:,.0f} |",
         f"| Click, in memory | {click['med']:.2f} ({click['lo']:.2f}-{click['hi']:.2f}) | "
         f"{click['med'] / fast['med']:.2f} | {click['ipp']:,.0f} |",
         f"FastClick leads Click by {fast['med'] / click['med']:.2f}× in time and by {click['ipp'] / fast['ipp']:.2f}× "
         "in instructions")
    b = datasets.read_microbench(D / "microbench", "batch")
    t = b.groupby("burst").agg(mpps=("mpps", "median"), ipp=("instructions_per_packet", "first"), n=("mpps", "size"))
    best = t["mpps"].idxmax()
    says("microbench", "| batch | " + " | ".join(str(x) for x in t.index) + " |",
         f"| Mpps (median of {t['n'].iloc[0]}) | "
         + " | ".join(f"**{m:.2f}**" if s == best else f"{m:.2f}" for s, m in t["mpps"].items()) + " |",
         "| instructions/packet | " + " | ".join(f"{x:,.0f}" for x in t["ipp"]) + " |",
         f"Time is best at {best}, and 128 is {100 * (1 - t.loc[128, 'mpps'] / t.loc[best, 'mpps']):.0f}% slower "
         f"than {best}")


def test_microbench_consolidation_table():
    from routerlab import microbench

    c = datasets.read_microbench(D / "microbench", "consolidation")
    for r in microbench.reductions(c).itertuples():
        red = 100 * r.reduction_instructions
        text = f"{red:.0f}%".replace("-", "−")
        says("microbench", f"| {r.nf} | {r.actions} | {r.chain_instructions:,.0f} | {r.consolidated_instructions:,.0f} | "
                           + (f"**{text}**" if r.nf != "IPFilter" and r.actions > 1 else text) + " |")
    red = microbench.reductions(c)
    rewriting = red[red["nf"] != "IPFilter"].set_index("actions")
    says("microbench", f"reduce by more than published: {span(rewriting.loc[2, 'reduction_instructions'], pct())}% for 2 "
                       f"actions and {span(rewriting.loc[3, 'reduction_instructions'], pct())}% for 3",
         f"for the rewriting NFs ({span(rewriting[rewriting.index >= 2]['reduction_ns'], pct())}% reduction)",
         f"medians of {c['repeat'].nunique()} runs")
    first = c[c["packet"] == "first"].groupby(["nf", "actions", "variant"])["instructions"].first().unstack("variant")
    extra = first["consolidated"] - first["chain"]
    says("microbench", f"cost {extra.min():.0f}-{extra.max():.0f} instructions more with the cache")


def test_fast_reroute_table():
    from routerlab import fastreroute

    samples, runs = datasets.read_fast_reroute(D / "fast-reroute")
    summary, per_run = fastreroute.summary(samples, runs)
    before = samples[(samples["t"] > 2) & (samples["t"] <= 10)].groupby(["variant", "run"])["throughput_bps"].mean()
    names = {"frr": "frr", "nft": "nft", "ebpf": "ebpf", "p4": "p4 (bmv2)"}

    def pm(m, h, digits):
        return "0" if m == 0 and h == 0 else f"{m:.{digits}f} ± {h:.{digits}f}"

    for r in summary.itertuples():
        recovered = r.runs - r.unrecovered_runs
        rec = pm(r.recovery_s, r.recovery_s_ci95, 1) + (f" ({recovered} of {r.runs} runs)" if r.unrecovered_runs else "")
        says("fast-reroute",
             f"| {names[r.variant]} | {before.loc[r.variant].mean() / 1e9:.2f} | "
             f"**{pm(r.outage_s, r.outage_s_ci95, 2)}** | "
             f"{rec} | {pm(r.rtt_spike_ms, r.rtt_spike_ms_ci95, 2 if r.rtt_spike_ms < 10 else 1)} | "
             f"{pm(r.load_spike, r.load_spike_ci95, 2)} | {pm(r.ping_lost, r.ping_lost_ci95, 1)} |")
    assert (runs.groupby("variant").size() == 10).all()
    assert (runs[runs["variant"] != "frr"]["looped_destinations"] == 1).all()
    assert (runs[runs["variant"] == "frr"]["looped_destinations"] == 0).all()
    says("fast-reroute", "The variants, 10 runs each", "(about 25 of 150)")


def test_bmv2_route_loading_recorded_in_the_comparison():
    e = datasets.read_experiments(D / "comparison").set_index("experiment")
    notes = dict(kv.split("=", 1) for kv in e.loc["bmv2-routes900k-multiflow-fw50", "notes"].split("; "))
    says("testbed-bmv2", f"it loaded {int(notes['entries']):,} entries in {float(notes['entries_load_s']):.1f} s")
    assert notes["routes_loaded"] == "100000"


def test_the_testbed_doc_states_the_largest_steal_of_a_trial():
    doc = " ".join((D.parent / "docs" / "testbed.md").read_text().split()) if (D.parent / "docs").is_dir() else None
    if doc is None:
        pytest.skip("docs/ is not installed with the package: only a checkout has it")
    old = pd.read_csv(io.StringIO(committed("datasets/testbed-click/trials.csv", VETH_BEFORE)))
    assert f"({100 * old['steal'].max():.0f}% in one trial of `datasets/testbed-click` as measured on " \
           f"{pd.to_datetime(old['started_at']).min():%Y-%m-%d}, commit {VETH_BEFORE[:7]})" in doc
    # the run these datasets replaced, then this one
    old = pd.read_csv(io.StringIO(committed("datasets/testbed-veth/trials.csv", PREVIOUS)))
    olds = pd.read_csv(io.StringIO(committed("datasets/testbed-veth/superseded_trials.csv", PREVIOUS)))
    oldd = old[old["disturbed"]]
    assert f"in the run of {pd.to_datetime(old['started_at']).min():%Y-%m-%d %H:%M} UTC, {(old['attempt'] > 1).sum()} " \
           f"of `datasets/testbed-veth`'s {len(old)} sweep trials had more than 2% and were measured again (one " \
           f"attempt had {100 * olds['steal'].max():.0f}%), {len(oldd)} still had more after 3 repeats (at most " \
           f"{100 * oldd['steal'].max():.1f}%)" in doc
    veth, click = trials("testbed-veth"), trials("testbed-click")
    every = pd.concat([veth, pd.read_csv(D / "testbed-veth" / "superseded_trials.csv")])
    kept = veth[veth["steal"] > 0.02]
    assert f"In the re-measurement of {pd.to_datetime(veth['started_at']).min():%Y-%m-%d %H:%M} UTC, " \
           f"{(every['steal'] > 0.02).sum()} of its {len(every)} sweep attempts had more than 2% (at most " \
           f"{100 * every['steal'].max():.1f}%), {len(kept)} kept trial still has ({100 * kept['steal'].max():.1f}%), " \
           f"and no kept trial of `datasets/testbed-click` has more than {100 * click['steal'].max():.1f}%" in doc


def test_the_testbed_doc_states_how_often_the_tracer_missed():
    doc = " ".join((D.parent / "docs" / "testbed.md").read_text().split()) if (D.parent / "docs").is_dir() else None
    if doc is None:
        pytest.skip("docs/ is not installed with the package: only a checkout has it")
    t = trials("testbed-veth")
    kernel = t[t["experiment"].isin(["linux-single-flow", "nft-single-flow-fw0", "nft-single-flow-fw5",
                                     "nft-single-flow-fw50"])]
    struck = kernel[kernel["trace_missed"] > 0]
    share = struck["trace_missed"] / struck["rx"]
    assert f"and {span(struck.groupby('experiment').size() / kernel.groupby('experiment').size(), pct())}%, a median " \
           f"{span(share.groupby(struck['experiment']).median(), pct(2))}% and at most {100 * share.max():.1f}% in its " \
           f"re-measurement of {pd.to_datetime(t['started_at']).min():%Y-%m-%d}" in doc
    ebpf = t[t["experiment"].str.startswith("ebpf-")]
    assert (ebpf["trace_missed"] == 0).all()  # "never seen on XDP paths"
