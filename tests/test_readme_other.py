"""Every number the README of microbench, fast-reroute and docs/testbed.md states, recomputed from its files (see readme_checks)."""

import io
import re

import pandas as pd
import pytest

from routerlab import datasets
from routerlab.benchmarks import forwarding
from readme_checks import (the_testbed_doc, CODE_ALONE, D, HALTING, KERNEL_PATHS, LAG_CODE, MORNING, POLL_CODE,
                           POLL_COMPARISON_CODE, POLLING, PREVIOUS, VETH, VETH_BEFORE, VETH_CODE_ALONE, VETH_SHARED,
                           committed, pct, pps, previous_files, says, sig2, span, trials, veth_as_shared, when_range,
                           attempts, superseded)


def test_microbench_testbed_rows_give_no_ratio_to_a_limited_pdr(tmp_path):
    searches = datasets.read_searches([D / "testbed-click"])
    pdr = datasets.search_pdr(searches)
    table, _, _ = forwarding.summary(datasets.read_microbench(D / "microbench", "forwarding"), pdr)
    tb = table[table["where"] == "testbed (PDR@0.5%)"].set_index("engine")
    known = tb[~tb["at_least"]].sort_values("ratio_to_fastest", ascending=False)
    fastest = known.index[0]
    assert known.loc[fastest, "ratio_to_fastest"] == 1
    names = {"ebpf": "ebpf, testbed", "fastclick-dpdk": "fastclick-dpdk, testbed", "click": "click, testbed",
             "linux": "linux, testbed", "fastclick": "fastclick (AF_PACKET), testbed"}
    names[fastest] += " (PDR@0.5%)"  # the first testbed row, the one the ratios are to
    rows = []
    for engine, r in known.iterrows():
        rows.append(f"| {names[engine]} | {r['mpps']:.3f} | {r['ratio_to_fastest']:.2f} | |")
    for engine, r in tb[tb["at_least"]].iterrows():
        rows.append(f"| {names[engine]} | at least {r['mpps']:.3f} ({r['bound']}) | none: a lower bound | |")
    says("microbench", *rows)
    text = (D / "microbench" / "README.md").read_text()
    assert [text.index(x) for x in rows] == sorted(text.index(x) for x in rows)  # fastest first, bounds last
    says("microbench", f"on the testbed to the fastest router whose PDR is its own ({fastest} here)")
    ceiling = searches["generator_ceiling_pps"].unique()
    assert len(ceiling) == 1
    day = pd.to_datetime(searches["when"]).min()
    says("microbench", f"(one run, {day:%Y-%m-%d}, the searches' generator ceiling {ceiling[0] / 1e3:.0f} kpps)")
    # the one lower bound: the generator bounded fastclick-dpdk's search; every other search failed at a load
    # below the ceiling (none passed at the ceiling)
    limited = tb[tb["at_least"]]
    assert list(limited.index) == ["fastclick-dpdk"] and limited.loc["fastclick-dpdk", "bound"] == \
        "limited by the generator"
    r = searches[(searches["kind"] == "pdr") & (searches["method"] == "routerlab")].set_index("engine")
    assert (r.drop("fastclick-dpdk")["upper_pps"] < ceiling[0]).all()
    says("microbench", "one answer is a lower bound and has no ratio: the generator, not the router, bounded the "
                       "search of FastClick on DPDK's af_xdp driver (at least "
                       f"{limited.loc['fastclick-dpdk', 'mpps'] * 1e3:.0f} kpps); every other search failed at a load "
                       "below the ceiling")
    says("microbench", f"so the testbed's ratios are to {fastest}, the fastest whose PDR is the router's own "
                       f"({known.loc[fastest, 'mpps'] * 1e3:.0f} kpps)")
    f = datasets.read_microbench(D / "microbench", "forwarding").groupby("engine")["mpps"].median()
    ratio = known.loc["fastclick", "mpps"] / known.loc["click", "mpps"]
    assert ratio < 1  # "none of its lead is left"
    # the runs these files replaced: the polling run with the earlier lag rule (POLLING) and the run with idle CPUs
    # halting (HALTING), for the ratio then
    then = {}
    for key, commit in (("polling", POLLING), ("halting", HALTING)):
        folder = tmp_path / key
        folder.mkdir()
        previous_files("testbed-click", folder, ("search_results.csv", "search_trials.csv"), commit=commit)
        s = datasets.read_searches([folder])
        p = datasets.search_pdr(s).set_index("engine")
        assert not p.loc[["click", "fastclick"], "at_least"].any()
        then[key] = (p.loc["fastclick", "pdr_pps"] / p.loc["click", "pdr_pps"], pd.to_datetime(s["when"]).min())
    assert f"{then['polling'][1]:%Y-%m-%d}" == f"{day:%Y-%m-%d}" and then["polling"][1] < day
    says("microbench", f"FastClick on AF_PACKET carries {ratio:.2f} times what Click carries in this run "
                       f"({then['polling'][0]:.2f} in the run these files replaced, that morning with the earlier lag "
                       f"rule, in git at commit {POLLING[:7]}; {then['halting'][0]:.2f} on "
                       f"{then['halting'][1]:%Y-%m-%d}, with the testbed's idle CPUs halting): none of its "
                       f"{f['fastclick'] / f['click']:.2f}× lead in memory is left")
    assert (ratio - 1) * (then["halting"][0] - 1) < 0  # "which of the two carries more differs"
    # FastClick's answer lies below the load at which Click passed: not within one search step of it
    assert r.loc["fastclick", "upper_pps"] < r.loc["click", "lower_pps"]


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


# docs/testbed.md on testbed-veth: the run its files replaced (VETH_SHARED, beside other work on CPU 1) and the
# measurement alone that replaced them (the current files)

VETH_NAMES = {"linux-single-flow": "linux", "nft-single-flow-fw0": "nft, empty chain",
              "nft-single-flow-fw5": "nft, 5 rules", "nft-single-flow-fw50": "nft, 50 rules",
              "ebpf-single-flow": "ebpf, no rules", "ebpf-single-flow-fw50": "ebpf, 50 rules"}


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """testbed-veth as the run of 2026-11-25 09:19 UTC left it (commit VETH_SHARED), in a folder of its own."""
    return veth_as_shared(tmp_path_factory.mktemp("veth-shared"))


@pytest.fixture(scope="module")
def previous_run(tmp_path_factory):
    """testbed-veth as the run of 2026-11-23 22:48 UTC left it (commit PREVIOUS), which the run of 09:19 replaced."""
    return previous_files(VETH, tmp_path_factory.mktemp("veth-previous"), ("trials.csv", "experiments.csv"))


#: The four datasets the morning's run made besides testbed-veth, measured again alone from 21:39 UTC (CODE_ALONE),
#: and the files each had at commit MORNING (the morning's run).
FOUR = {"testbed-click": ("trials.csv", "experiments.csv", "search_results.csv", "search_trials.csv", "drops.csv",
                          "superseded_trials.csv", "superseded_search_trials.csv"),
        "click-course": ("trials.csv", "experiments.csv", "drops.csv", "superseded_trials.csv"),
        "testbed-bmv2": ("trials.csv", "experiments.csv", "search_results.csv", "search_trials.csv", "drops.csv",
                         "superseded_search_trials.csv"),
        "comparison": ("trials.csv", "experiments.csv", "drops.csv", "superseded_trials.csv", "cells.csv")}


@pytest.fixture(scope="module")
def morning_four(tmp_path_factory):
    """The four datasets as the morning's run left them (commit MORNING), each in a folder of its own."""
    return {name: previous_files(name, tmp_path_factory.mktemp(name), files, commit=MORNING)
            for name, files in FOUR.items()}


#: The five testbed datasets the runs with idle CPUs polling replaced, as the runs alone of 2026-11-25 with idle CPUs
#: halting left them (commit HALTING): testbed-veth's from 18:47 UTC (VETH_CODE_ALONE), the four others' from 21:39
#: UTC (CODE_ALONE).
HALTING_FILES = {**FOUR, "testbed-bmv2": FOUR["testbed-click"], VETH: FOUR["testbed-click"]}


@pytest.fixture(scope="module")
def halting(tmp_path_factory):
    """The five datasets with idle CPUs halting (commit HALTING), each in a folder of its own."""
    return {name: previous_files(name, tmp_path_factory.mktemp(f"halting-{name}"), files, commit=HALTING)
            for name, files in HALTING_FILES.items()}


#: The five testbed datasets the current files replaced, as the runs with idle CPUs polling and the earlier lag rule
#: left them (commit POLLING): testbed-click, click-course, testbed-bmv2 and testbed-veth at POLL_CODE, the comparison
#: at POLL_COMPARISON_CODE.
POLLING_FILES = {**{n: ("trials.csv", "experiments.csv", "superseded_trials.csv", "search_results.csv",
                        "search_trials.csv") for n in ("testbed-click", "testbed-bmv2", VETH)},
                 **{n: ("trials.csv", "experiments.csv", "superseded_trials.csv") for n in ("click-course",
                                                                                            "comparison")}}


@pytest.fixture(scope="module")
def polling(tmp_path_factory):
    """The five datasets with idle CPUs polling and the earlier lag rule (commit POLLING), each in a folder of its
    own."""
    return {name: previous_files(name, tmp_path_factory.mktemp(f"polling-{name}"), files, commit=POLLING)
            for name, files in POLLING_FILES.items()}


def the_run_began(first: pd.Timestamp, doc_time: str) -> bool:
    """A run's start as the text gives it (HH:MM, the script's own log) against its first record (a search's end or
    a trial's start): a few minutes before it, at most."""
    began = pd.Timestamp(f"{first:%Y-%m-%d} {doc_time}", tz="UTC")
    return first - pd.Timedelta(minutes=5) < began <= first


def delivered(folder) -> pd.DataFrame:
    """A testbed-veth's sweep trials the generator delivered, with their loss and load as a fraction of the ceiling."""
    t = datasets.read(folder).trials
    ceiling = datasets.read_experiments(folder)["generator_ceiling_pps"].unique()
    assert len(ceiling) == 1
    t = t[~t["generator_limited"].astype(bool)]
    return t.assign(loss=1 - t["rx"] / t["tx"], frac=(t["offered_pps"] / ceiling[0]).round(2))


def frac(f) -> str:
    """A fraction of the ceiling as the text writes it: 0.05, 0.15, 0.2, 1.0."""
    return f"{f:.1f}" if round(f, 1) == f else f"{f:.2f}"


def busy(x) -> str:
    """A CPU busy share: whole percent from 10%, else one decimal."""
    return f"{100 * x:.0f}" if x >= 0.1 else f"{100 * x:.1f}"


def lowest_cpu(t: pd.DataFrame) -> pd.Series:
    """Each sweep's mean CPU 1 busy share at its lowest load."""
    low = t[t["offered_pps"] == t.groupby("experiment")["offered_pps"].transform("min")]
    return low.groupby("experiment", sort=False)["cpu_load"].mean()


def test_the_testbed_doc_states_the_largest_steal_of_a_trial(shared, morning_four, halting):
    doc = the_testbed_doc()
    old = pd.read_csv(io.StringIO(committed("datasets/testbed-click/trials.csv", VETH_BEFORE)))
    assert f"({100 * old['steal'].max():.0f}% in one trial of `datasets/testbed-click` as measured on " \
           f"{pd.to_datetime(old['started_at']).min():%Y-%m-%d}, commit {VETH_BEFORE[:7]})" in doc
    # the run the morning's datasets replaced, then the morning's (testbed-veth as VETH_SHARED holds it), then the
    # measurement alone that replaced testbed-veth's
    old = pd.read_csv(io.StringIO(committed("datasets/testbed-veth/trials.csv", PREVIOUS)))
    olds = pd.read_csv(io.StringIO(committed("datasets/testbed-veth/superseded_trials.csv", PREVIOUS)))
    oldd = old[old["disturbed"]]
    assert f"in the run of {pd.to_datetime(old['started_at']).min():%Y-%m-%d %H:%M} UTC, {(old['attempt'] > 1).sum()} " \
           f"of `datasets/testbed-veth`'s {len(old)} sweep trials had more than 2% and were measured again (one " \
           f"attempt had {100 * olds['steal'].max():.0f}%), {len(oldd)} still had more after 3 repeats (at most " \
           f"{100 * oldd['steal'].max():.1f}%)" in doc
    click = datasets.read(morning_four["testbed-click"]).trials  # testbed-click as the morning's run left it
    morning = datasets.read(shared).trials
    every = before = pd.concat([morning, pd.read_csv(shared / "superseded_trials.csv")])
    kept = morning[morning["steal"] > 0.02]
    assert len(kept) == 1
    at = pd.to_datetime(morning["started_at"])
    assert pd.to_datetime(click["started_at"]).max() < at.min()  # the same run, before testbed-veth
    assert f"In the re-measurement of {at.min():%Y-%m-%d %H:%M} UTC, " \
           f"{(every['steal'] > 0.02).sum()} of its {len(every)} sweep attempts had more than 2% (at most " \
           f"{100 * every['steal'].max():.1f}%), {len(kept)} kept trial still had " \
           f"({100 * kept['steal'].max():.1f}%), and no kept trial of that run's `datasets/testbed-click` had more " \
           f"than {100 * click['steal'].max():.1f}%; those files have since been replaced, testbed-veth's in git at " \
           f"commit {VETH_SHARED[:7]}, testbed-click's at commit {MORNING[:7]}" in doc
    alone = trials(datasets.read(halting[VETH]).trials)
    every = pd.concat([alone, pd.read_csv(halting[VETH] / "superseded_trials.csv")])
    kept = alone[alone["steal"] > 0.02]
    assert (kept["attempt"] == 4).all() and kept["disturbed"].all()  # measured again 3 times, each time with steal
    at = pd.to_datetime(alone["started_at"])
    assert at.dt.strftime("%Y-%m-%d").unique().tolist() == [f"{pd.to_datetime(morning['started_at']).min():%Y-%m-%d}"]
    sweeps = alone["experiment"].nunique()
    assert kept["experiment"].nunique() == sweeps  # "in every one of its sweeps"
    assert (every["steal"] > 0.02).mean() > 10 * (before["steal"] > 0.02).mean()  # "much more"
    assert f"in testbed-veth's measurement alone from {at.min():%H:%M} UTC (in git at commit {HALTING[:7]}), " \
           f"{(every['steal'] > 0.02).sum()} of its {pps(len(every))} sweep attempts had more than 2% (at most " \
           f"{100 * every['steal'].max():.1f}%), and {len(kept)} kept trials, in every one of its {sweeps} sweeps, " \
           f"still had more after 3 repeats (at most {100 * kept['steal'].max():.1f}%)" in doc
    # the four others', measured alone later that evening, against their morning's run
    four = {"now": {n: halting[n] for n in FOUR}, "then": morning_four}
    a = {k: pd.concat([attempts(f) for f in x.values()]) for k, x in four.items()}
    kept = {n: datasets.read(halting[n]).trials for n in FOUR}
    kept = pd.concat([t[t["steal"] > 0.02].assign(name=n) for n, t in kept.items()])
    assert (kept["attempt"] == 4).all() and kept["disturbed"].all()
    assert kept["name"].nunique() == len(FOUR)  # "in each of the four"
    first = min(first_record(halting[n]) for n in FOUR)
    assert f"{first:%Y-%m-%d}" == f"{at.min():%Y-%m-%d}" and the_run_began(first, "21:39")
    assert f"in the measurement alone of testbed-click, click-course, testbed-bmv2 and comparison from 21:39 UTC (in " \
           f"git at commit {HALTING[:7]}), {(a['now']['steal'] > 0.02).sum()} of their {pps(len(a['now']))} sweep attempts had more " \
           f"than 2% (at most {100 * a['now']['steal'].max():.1f}%; {(a['then']['steal'] > 0.02).sum()} of " \
           f"{pps(len(a['then']))} in their morning run), and {len(kept)} kept trials, in each of the four, still had " \
           f"more after 3 repeats (at most {100 * kept['steal'].max():.1f}%)" in doc


POLLED = ("testbed-click", "click-course", "testbed-bmv2", VETH, "comparison")


def test_the_testbed_doc_states_the_steal_with_idle_cpus_polling(halting, polling):
    """"Steal time": the five datasets measured again with idle CPUs polling in one run at LAG_CODE (the current
    files), against the same five with idle CPUs halting (HALTING) and the polling runs with the earlier lag rule
    that these files replaced (POLLING)."""
    doc = the_testbed_doc()
    for n in POLLED:
        assert datasets.read_experiments(D / n)["pinning"].str.contains("idle CPUs: poll").all(), n
        assert datasets.read_experiments(polling[n])["pinning"].str.contains("idle CPUs: poll").all(), n
        assert not datasets.read_experiments(halting[n])["pinning"].str.contains("idle CPUs").any(), n
        assert datasets.read_experiments(D / n)["versions"].str.contains(f"(git {LAG_CODE[:7]})", regex=False).all()
    now = pd.concat([attempts(D / n) for n in POLLED])
    before = pd.concat([attempts(polling[n]) for n in POLLED])
    then = pd.concat([attempts(halting[n]) for n in POLLED])
    kept = pd.concat([datasets.read(D / n).trials for n in POLLED])
    kept = kept[kept["steal"] > 0.02]
    first = min(first_record(D / n) for n in POLLED)
    assert the_run_began(first, "14:51")
    assert min(first_record(polling[n]) for n in POLLED) < first  # "earlier that day"
    ceiling = set().union(*(sweep_ceilings(D / n) for n in POLLED))
    assert len(ceiling) == 1
    still = (f"{len(kept)} kept trials still had more after 3 repeats (at most {100 * kept['steal'].max():.1f}%)"
             if len(kept) else "no kept trial still had more after 3 repeats")
    phrase = (f"With idle CPUs polling, in the re-measurement of the five testbed datasets on {first:%Y-%m-%d} "
              f"(one run from 14:51 UTC at code {LAG_CODE[:7]}, its sweeps given a ceiling of "
              f"{pps(ceiling.pop())} pps; the current files), {pps((now['steal'] > 0.02).sum())} of their "
              f"{pps(len(now))} sweep attempts had more than 2% (at most {100 * now['steal'].max():.1f}%), against "
              f"{pps((then['steal'] > 0.02).sum())} of {pps(len(then))} with the CPUs halting the evening before and "
              f"{pps((before['steal'] > 0.02).sum())} of {pps(len(before))} in the polling runs these files replaced, "
              f"earlier that day (in git at commit {POLLING[:7]}), and {still}")
    assert " ".join(phrase.split()) in doc, phrase
    # "less steal, not none"
    assert (now["steal"] > 0.02).mean() < (then["steal"] > 0.02).mean() / 2 and (now["steal"] > 0.02).any()
    # the attempts the run measured again (sweeps and searches) whose only reason was a lag of the generator no longer
    # than the queue: the rule before c3e008e held a lag only when it outlasted the queue, and would have kept them
    files = ("superseded_trials.csv", "superseded_search_trials.csv")
    sup = pd.concat([superseded(n, f) for n in POLLED for f in files if (D / n / f).exists()], ignore_index=True)
    assert (sup["why"] != "").all()  # each was disturbed by the rule that measured it
    short = sup[sup["why"].str.startswith("generator fell behind") & ~sup["why"].str.contains(";")
                & (sup["gen_late_ms"] <= sup["queue_ms"])]
    phrase = (f"of the {pps(len(sup))} attempts it measured again (sweeps and searches), {len(short)} were disturbed "
              "by nothing but a lag no longer than the queue, which the earlier rule would have kept")
    assert " ".join(phrase.split()) in doc, phrase


def tracer_misses(t: pd.DataFrame) -> str:
    """How often the tracer missed on the kernel-forwarding sweeps of a testbed-veth (not ebpf's, an XDP path):
    the share of trials, the median share of the sink's packets by sweep, the largest share of a trial."""
    kernel = t[t["experiment"].isin(KERNEL_PATHS[:4])]
    struck = kernel[kernel["trace_missed"] > 0]
    share = struck["trace_missed"] / struck["rx"]
    ebpf = t[t["experiment"].str.startswith("ebpf-")]
    assert len(ebpf) and (ebpf["trace_missed"] == 0).all()  # "never seen on XDP paths"
    return f"{span(struck.groupby('experiment').size() / kernel.groupby('experiment').size(), pct())}%, a median " \
           f"{span(share.groupby(struck['experiment']).median(), pct(2))}% and at most {100 * share.max():.1f}%"


def test_the_testbed_doc_states_how_often_the_tracer_missed(shared, halting, polling):
    doc = the_testbed_doc()
    morning, alone = datasets.read(shared).trials, trials(datasets.read(halting[VETH]).trials)
    before, now = trials(datasets.read(polling[VETH]).trials), trials(VETH)
    day = f"{pd.to_datetime(morning['started_at']).min():%Y-%m-%d}"
    assert f"{pd.to_datetime(alone['started_at']).min():%Y-%m-%d}" == day
    at, at_now = pd.to_datetime(before["started_at"]).min(), pd.to_datetime(now["started_at"]).min()
    assert f"{at:%Y-%m-%d}" == f"{at_now:%Y-%m-%d}"
    phrase = (f"{tracer_misses(morning)} in its re-measurement of {day} "
              f"{pd.to_datetime(morning['started_at']).min():%H:%M} UTC (the files in git at commit {VETH_SHARED[:7]}), "
              f"{tracer_misses(alone)} in its measurement alone from "
              f"{pd.to_datetime(alone['started_at']).min():%H:%M} UTC the same day (in git at commit {HALTING[:7]}), "
              f"{tracer_misses(before)} in its re-measurement with idle CPUs polling of {at:%Y-%m-%d %H:%M} UTC (in "
              f"git at commit {POLLING[:7]}), and {tracer_misses(now)} in that of {at_now:%H:%M} UTC the same day, "
              f"polling too (code {LAG_CODE[:7]}: the current files)")
    assert " ".join(phrase.split()) in doc, phrase


def test_the_testbed_doc_states_what_other_work_did_to_the_run(shared, previous_run, morning_four):
    doc = the_testbed_doc()
    morning = datasets.read(shared).trials
    at = pd.to_datetime(morning["started_at"])
    day = f"{at.min():%Y-%m-%d}"
    # the run: testbed-click, click-course, testbed-bmv2 (as MORNING holds them), testbed-veth (as VETH_SHARED holds
    # it), comparison (as MORNING holds it)
    starts = [pd.to_datetime(datasets.read(morning_four[x]).trials["started_at"])
              for x in ("testbed-click", "click-course", "testbed-bmv2", "comparison")]
    starts += [at, pd.to_datetime(datasets.read_searches([morning_four["testbed-click"], shared])["when"])]
    first, last = min(s.min() for s in starts), max(s.max() for s in starts)
    assert last == starts[3].max()  # the comparison came last
    m = re.search(r"In the re-measurement of (\d{4}-\d\d-\d\d) \((\d\d:\d\d)-(\d\d:\d\d) UTC\), CPU 1 read ([\d-]+)% "
                  r"busy at the lowest loads of most sweeps from about (\d\d:\d\d)", doc)
    assert m, "docs/testbed.md no longer says when CPU 1 was busy"
    assert m[1] == day and m[3] == f"{last:%H:%M}"
    # the run's first record is the first search's end: it began a few minutes before
    began = pd.Timestamp(f"{day} {m[2]}", tz="UTC")
    assert first - pd.Timedelta(minutes=5) < began <= first
    low = morning[morning["offered_pps"] == morning.groupby("experiment")["offered_pps"].transform("min")]
    lead = morning.loc[at.idxmin(), "experiment"]
    assert lead == "linux-single-flow"
    lx = low[low["experiment"] == lead]
    rest = lowest_cpu(morning).drop(lead)
    assert len(rest) == 6 and rest.min() > 2 * lx["cpu_load"].max()
    assert m[4] == span(rest, pct())
    # from about: the first trial of a kernel-path sweep at 0.2 of the ceiling or less that read over half busy
    ceiling = datasets.read_experiments(shared)["generator_ceiling_pps"].iloc[0]
    k = morning[morning["experiment"].isin(KERNEL_PATHS) & (morning["offered_pps"] <= 0.2 * ceiling + 1)]
    assert m[5] == f"{at.min():%H:%M}" == f"{pd.to_datetime(k[k['cpu_load'] > 0.5]['started_at']).min():%H:%M}"
    click = low[low["experiment"] == "click-single-flow"]["offered_pps"].iloc[0]
    lt = morning[morning["experiment"] == lead].groupby("offered_pps")["cpu_load"]
    hot, cool = 99_022, 148_533
    assert lt.max()[hot] > 0.9 and lt.max()[cool] < 0.2
    old = datasets.read(previous_run).trials
    om = lowest_cpu(old)
    assert om.max() < rest.min()
    fw0 = low[low["experiment"] == "nft-single-flow-fw0"]
    rate = lx["offered_pps"].iloc[0]
    for phrase in (f"in that run's `datasets/testbed-veth` (since replaced by the measurement alone below; in git at "
                   f"commit {VETH_SHARED[:7]}), the linux sweep, which came first, read {span(lx['cpu_load'], pct())}% "
                   f"at its lowest load ({pps(rate)} pps, {rate / ceiling:.2f} of the ceiling), and the six sweeps "
                   f"after it a mean of {span(rest, pct())}% at theirs ({pps(rate)} pps; Click's {pps(click)} pps)",
                   f"It did not follow the load: in the linux sweep it was {span(lt.get_group(hot), pct())}% at "
                   f"{pps(hot)} pps and {span(lt.get_group(cool), pct())}% at {pps(cool)} pps",
                   f"In the data that run replaced ({pd.to_datetime(old['started_at']).min():%Y-%m-%d}, in git at "
                   f"commit {PREVIOUS[:7]}), the mean at the lowest load was {span(om, pct(1))}% in every sweep",
                   # measured alone at 10:32, in no dataset: the 1.5% (at most 2.1%) is the doc's own
                   f"nft with an empty chain at {pps(fw0['offered_pps'].iloc[0])} pps (10 trials of 1 s) kept CPU 1 "
                   f"1.5% busy (at most 2.1%) and lost nothing; in the run, the same load had read "
                   f"{100 * fw0['cpu_load'].mean():.0f}% ({span(fw0['cpu_load'], pct())}%)"):
        assert " ".join(phrase.split()) in doc, phrase


def alone_against_morning(morning_folder, alone_folder) -> list:
    """docs/testbed.md's phrases on what the measurement alone (``alone_folder``, the files at HALTING) showed against
    the morning's run."""
    then, now = delivered(morning_folder), delivered(alone_folder)
    c_then = datasets.read_experiments(morning_folder)["generator_ceiling_pps"].iloc[0]
    c_now = datasets.read_experiments(alone_folder)["generator_ceiling_pps"].iloc[0]
    at = pd.to_datetime(now["started_at"])
    assert f"{at.min():%Y-%m-%d}" == f"{pd.to_datetime(then['started_at']).min():%Y-%m-%d}"
    committed("scripts/remeasure-testbed.sh", VETH_CODE_ALONE)  # the commit that measured it, in this clone
    cpu_then, cpu_now = lowest_cpu(then), lowest_cpu(now)
    low_then, low_now = (x[x["experiment"].isin(KERNEL_PATHS)]["offered_pps"].min() for x in (then, now))
    assert (then.groupby("experiment")["frac"].min()[KERNEL_PATHS] == 0.05).all()
    assert (now.groupby("experiment")["frac"].min()[KERNEL_PATHS] == 0.05).all()
    ck = "click-single-flow"
    assert then[then["experiment"] == ck]["offered_pps"].min() == now[now["experiment"] == ck]["offered_pps"].min()
    phrases = [f"({at.min():%Y-%m-%d} from {at.min():%H:%M} UTC, code {VETH_CODE_ALONE[:7]}: the files in git at "
               f"commit {HALTING[:7]}), with a generator ceiling of {pps(c_now)} pps against the morning's {pps(c_then)}, so each "
               f"fraction of the ceiling was {1 - c_now / c_then:.0%} fewer pps",
               f"At the lowest load of each kernel-path sweep (0.05 of the ceiling, {pps(low_now)} pps), CPU 1's mean "
               f"busy share was {span(cpu_now[KERNEL_PATHS], busy)}%, against {span(cpu_then[KERNEL_PATHS], busy)}% "
               f"in the morning ({pps(low_then)} pps); Click's, at "
               f"{pps(now[now['experiment'] == ck]['offered_pps'].min())} pps, {busy(cpu_now[ck])}% against "
               f"{busy(cpu_then[ck])}%"]
    assert cpu_now[KERNEL_PATHS].max() < cpu_then[KERNEL_PATHS].drop("linux-single-flow").min() / 5
    by = ["experiment", "frac"]
    lost_then, lost_now = (x[x["experiment"].isin(KERNEL_PATHS)].groupby(by).agg(lost=("lost", "sum"),
                                                                                 loss=("loss", "mean"))
                           for x in (then, now))
    assert set(lost_then.index) <= set(lost_now.index)  # every load the morning delivered, delivered alone too
    assert sorted(set(lost_now.index) - set(lost_then.index)) == [
        ("ebpf-single-flow", 1.0), ("linux-single-flow", 1.0), ("nft-single-flow-fw50", 1.0)]
    phrases.append("A load where the generator delivered no trial (1.0 in the morning for linux, nft with 50 rules and "
                   "ebpf with no rules) is not listed")
    was = lost_then[lost_then["lost"] > 0]
    again = lost_now.loc[was.index]
    higher = again[again["loss"] >= was["loss"]]
    names = {**VETH_NAMES, "nft-single-flow-fw0": "nft with an empty chain"}
    phrases.append(f"The morning's kernel-path sweeps lost packets at {len(was)} loads (a sweep at a fraction of the "
                   f"ceiling); alone, they lost packets at {(again['lost'] > 0).sum()} of these, with a lower mean "
                   f"loss at {len(was) - len(higher)} of the {len(was)} (all but "
                   + "; ".join(f"{names[e]} at {frac(f)}: {sig2(again.loc[(e, f), 'loss'])}% against "
                               f"{sig2(was.loc[(e, f), 'loss'])}%" for e, f in higher.index) + ")")
    row = "| sweep | CPU 1 at the lowest load, morning | alone | loads with loss (of the ceiling), morning | alone |"
    phrases.append(row)
    for e in KERNEL_PATHS:
        fr = [", ".join(frac(f) for f in x.loc[e].index[x.loc[e]["lost"] > 0]) for x in (lost_then, lost_now)]
        phrases.append(f"| {VETH_NAMES[e]} | {busy(cpu_then[e])}% | {busy(cpu_now[e])}% | {fr[0]} | {fr[1]} |")
    # lost alone where the morning delivered trials and lost none
    fresh = lost_now[(lost_now["lost"] > 0) & lost_then.reindex(lost_now.index)["lost"].eq(0)]
    assert sorted(fresh.index) == [("linux-single-flow", 0.3), ("linux-single-flow", 0.4), ("linux-single-flow", 0.5),
                                   ("nft-single-flow-fw5", 0.3), ("nft-single-flow-fw50", 0.3)]
    t = now.set_index(by).loc[fresh.index]
    t = t[t["lost"] > 0]
    d = t[t["disturbed"]]
    assert (d["steal"] > 0.02).all() and (t.drop(d.index)["steal"] <= 0.02).all()
    phrases.append(f"Alone, they also lost packets at {len(fresh)} loads where the morning's had delivered trials and "
                   f"lost none (linux at 0.3-0.5, nft with 5 and 50 rules at 0.3): {len(t)} trials, {len(d)} of them "
                   f"kept `disturbed` after 3 repeats, with steal of {span(d['steal'], pct(1))}%")
    # the linux sweep at 0.5 of the ceiling alone, and the morning's at the load nearest in pps (0.4 of its ceiling)
    a, b = (x[x["experiment"] == "linux-single-flow"] for x in (now, then))
    a = a[a["frac"] == 0.5]
    gap = (b["offered_pps"] - a["offered_pps"].iloc[0]).abs()
    b = b[gap == gap.min()]
    phrases.append(f"Alone, the linux sweep read CPU 1 {busy(a['cpu_load'].mean())}% busy at "
                   f"{pps(a['offered_pps'].iloc[0])} pps ({frac(a['frac'].iloc[0])} of its ceiling); the morning's "
                   f"read {busy(b['cpu_load'].mean())}% at {pps(b['offered_pps'].iloc[0])} pps "
                   f"({frac(b['frac'].iloc[0])} of its)")
    return phrases


def test_the_testbed_doc_states_what_the_measurement_alone_showed(shared, halting):
    doc = the_testbed_doc()
    for phrase in alone_against_morning(shared, halting[VETH]):
        assert " ".join(phrase.split()) in doc, phrase


def ebpf_at_two_tenths(folder) -> pd.Series:
    """ebpf's mean loss per row at 0.2 of the ceiling, after checking that every lost packet there is the XDP
    ring's refusal (``dut NOT_SPECIFIED``)."""
    t = delivered(folder)
    t = t[(t["engine"] == "ebpf") & (t["frac"] == 0.2)]
    assert t["experiment"].nunique() >= 2 and (t["lost_unexplained"] == 0).all()
    d = datasets.read_drops([folder])
    d = d[d["experiment"].isin(t["experiment"]) & (d["offered_pps"] == t["offered_pps"].iloc[0])
          & (d["counted_as"] == "loss")]
    assert set(zip(d["place"], d["reason"])) == {("dut", "NOT_SPECIFIED")}
    return t.groupby("experiment")["loss"].mean()


def test_the_testbed_doc_states_ebpfs_loss_at_low_loads(tmp_path, morning_four, halting):
    doc = the_testbed_doc()
    then = previous_files("comparison", tmp_path, ("trials.csv", "experiments.csv", "drops.csv"))
    # 2026-11-23 (PREVIOUS), the morning's beside other work (MORNING), the comparison alone, testbed-veth alone (both
    # with idle CPUs halting, HALTING)
    folders = (then, morning_four["comparison"], halting["comparison"], halting[VETH])
    runs = [ebpf_at_two_tenths(x) for x in folders]
    at = []
    for x in folders:
        t = delivered(x)
        at.append(t[(t["engine"] == "ebpf") & (t["frac"] == 0.2)]["offered_pps"].iloc[0])
    begun = [pd.to_datetime(datasets.read(x).trials["started_at"]).min() for x in folders]
    assert f"{begun[1]:%Y-%m-%d}" == f"{begun[2]:%Y-%m-%d}" == f"{begun[3]:%Y-%m-%d}"
    phrase = (f"({span(runs[0], sig2)}% at 0.2 of the ceiling in the comparison of {begun[0]:%Y-%m-%d}; "
              f"{span(runs[1], sig2)}% at 0.2 ({pps(at[1])} pps) in that of {begun[1]:%Y-%m-%d %H:%M} UTC, which ran "
              f"beside other work, in git at commit {MORNING[:7]}: see \"Other work on the machine spoils a run "
              f"unseen\"; {span(runs[2], sig2)}% at 0.2 ({pps(at[2])} pps) in its measurement alone from "
              f"{begun[2]:%H:%M} UTC; {span(runs[3], sig2)}% at 0.2 ({pps(at[3])} pps) in `datasets/testbed-veth`, "
              f"measured alone from {begun[3]:%H:%M} UTC; the two in git at commit {HALTING[:7]}, measured with idle "
              f"CPUs halting) is that ring refusing packets")
    assert " ".join(phrase.split()) in doc, phrase


# docs/testbed.md on the four other datasets of the morning's run (commit MORNING) and their measurement alone (the
# current files)

ENGINES = ("nft", "ebpf", "click", "fastclick", "fastclick-dpdk", "bmv2")
POLLS = "fastclick-dpdk"  # polls: CPU 1 reads 100% busy at every load


def first_record(folder) -> pd.Timestamp:
    """A dataset's first record: its first trial's start, or its first search's end."""
    at = [pd.to_datetime(datasets.read(folder).trials["started_at"]).min()]
    if (folder / "search_results.csv").exists():
        at.append(pd.to_datetime(datasets.read_searches([folder])["when"]).min())
    return min(at)


def low_loss(t: pd.DataFrame) -> pd.DataFrame:
    """The trials at 0.2 of the ceiling or less that lost packets."""
    return t[(t["frac"] <= 0.2) & (t["lost"] > 0)]


def four_against_morning(then: dict, now: dict) -> tuple:
    """docs/testbed.md's phrases on what the measurement alone of the four (``now``: the files at HALTING) showed
    against the morning's run, with the comparison table's cells by engine and the comparison's delivered trials
    (morning, alone)."""
    # the run alone: its start (the script's log, a few minutes before its first record), its code, its ceiling
    first = min(first_record(x) for x in now.values())
    assert first_record(now["testbed-click"]) == first
    committed("scripts/remeasure-testbed.sh", CODE_ALONE)  # the commit that measured it, in this clone
    assert the_run_began(first, "21:39")
    frac_sets = ("testbed-click", "click-course", "comparison")  # sweeps at fractions of the ceiling
    c_then, c_now = ({datasets.read_experiments(x[n])["generator_ceiling_pps"].iloc[0] for n in frac_sets}
                     for x in (then, now))
    assert len(c_then) == len(c_now) == 1
    c_then, c_now = c_then.pop(), c_now.pop()
    veth_then = pd.to_datetime(pd.read_csv(io.StringIO(committed(f"datasets/{VETH}/trials.csv", VETH_SHARED)))
                               ["started_at"]).min()
    phrases = [f"The run's four other datasets (`testbed-click`, `click-course`, `testbed-bmv2` and `comparison`; the "
               f"morning's files are in git at commit {MORNING[:7]}) were measured again alone too, from 21:39 UTC (code "
               f"{CODE_ALONE[:7]}: the files in git at commit {HALTING[:7]}), with a ceiling of {pps(c_now)} pps against the morning's "
               f"{pps(c_then)} for the sweeps at fractions of it, so each fraction was {1 - c_now / c_then:.0%} fewer pps "
               "(testbed-bmv2's sweep runs at fixed loads)"]
    # the three that came first in the morning, before CPU 1 was seen busy
    three = ("testbed-click", "click-course", "testbed-bmv2")
    t3 = {k: pd.concat([delivered(x[n]) for n in three]) for k, x in (("then", then), ("now", now))}
    at = pd.to_datetime(t3["then"]["started_at"])
    assert at.max() < veth_then  # before testbed-veth's, whose sweeps show CPU 1 busy from its start
    cpu = {k: lowest_cpu(v) for k, v in t3.items()}
    pol = {k: v.loc[[e for e in v.index if e.startswith(POLLS)]] for k, v in cpu.items()}
    rest = {k: v.drop(pol[k].index) for k, v in cpu.items()}
    assert (pol["then"] == 1).all() and (pol["now"] == 1).all()
    lossy = {k: low_loss(v[v["experiment"].isin(v[v["engine"] != "bmv2"]["experiment"])]) for k, v in t3.items()}
    bl = {k: v[v["engine"] == "bmv2"] for k, v in t3.items()}
    assert all(set(v["offered_pps"]) == set(bl["now"]["offered_pps"]) for v in bl.values())
    phrases.append(f"In the morning testbed-click, click-course and testbed-bmv2 came first (sweeps {when_range(at)} UTC), "
                   f"before CPU 1 was seen busy: at each sweep's lowest load it read {span(rest['then'], busy)}% then "
                   f"and {span(rest['now'], busy)}% alone (fastclick-dpdk, which polls, 100% in both), and up to 0.2 "
                   f"of the ceiling testbed-click and click-course lost packets in {len(lossy['then'])} trials then "
                   f"and {len(lossy['now'])} alone; testbed-bmv2's sweep, at fixed loads of "
                   f"{pps(bl['now']['offered_pps'].min())}-{pps(bl['now']['offered_pps'].max())} pps, in "
                   f"{bl['then']['lost'].gt(0).sum()} of {len(bl['then'])} then and {bl['now']['lost'].gt(0).sum()} of "
                   f"{len(bl['now'])} alone")
    # the comparison, last in the morning
    ct = {"then": delivered(then["comparison"]), "now": delivered(now["comparison"])}
    at = pd.to_datetime(ct["then"]["started_at"])
    assert at.min() > veth_then
    low = {k: v[v["frac"] == v["frac"].min()] for k, v in ct.items()}
    assert all(v["frac"].iloc[0] == 0.1 for v in low.values())
    phrases.append(f"The comparison came last ({when_range(at)} UTC). Per engine, CPU 1's mean at each sweep's lowest "
                   f"load (0.1 of the ceiling: {pps(low['then']['offered_pps'].iloc[0])} pps in the morning, "
                   f"{pps(low['now']['offered_pps'].iloc[0])} alone), and the trials that lost packets at 0.1 and 0.2 "
                   "of the ceiling (of them kept `disturbed`):")
    phrases.append("| comparison sweeps | CPU 1 at the lowest load, morning | alone | trials with loss at 0.1-0.2, "
                   "morning | alone |")
    rows = {}
    for eng in ENGINES:
        cells = []
        for k in ("then", "now"):
            t = ct[k][ct[k]["engine"] == eng]
            c = lowest_cpu(t)
            lo = t[t["frac"] <= 0.2]
            ll = low_loss(t)
            cells.append((c, len(lo), len(ll), int(ll["disturbed"].sum())))
        n = cells[0][0].size
        assert cells[1][0].size == n
        rows[eng] = cells
        phrases.append(f"| {eng} ({n}) | {span(cells[0][0], busy)}% | {span(cells[1][0], busy)}% | "
                       f"{cells[0][2]} of {cells[0][1]} ({cells[0][3]}) | {cells[1][2]} of {cells[1][1]} "
                       f"({cells[1][3]}) |")
    # nft: CPU 1 busy at the lowest load in two of three sweeps in the morning, the third (the last) not
    nft = lowest_cpu(ct["then"][ct["then"]["engine"] == "nft"]).sort_values()
    calm = nft.index[0]
    assert nft.iloc[0] < 0.1 < 0.5 < nft.iloc[1]
    calm_at = pd.to_datetime(ct["then"][ct["then"]["experiment"] == calm]["started_at"]).min()
    phrases.append(f"In the morning two of the three nft sweeps read CPU 1 {busy(nft.iloc[1])}% and "
                   f"{busy(nft.iloc[2])}% busy at their lowest load (the third, from {calm_at:%H:%M} UTC, "
                   f"{busy(nft.iloc[0])}%); alone, at most {busy(rows['nft'][1][0].max())}%")
    eb, ck, fc = rows["ebpf"], rows["click"], rows["fastclick"]
    assert eb[1][2] == eb[1][3]  # each of ebpf's kept disturbed
    assert fc[0][2] == 0
    phrases.append(f"ebpf lost packets at 0.1-0.2 in {eb[0][2]} trials in the morning and in {eb[1][2]} alone")
    lossy = {k: low_loss(v[v["engine"] != "bmv2"]) for k, v in ct.items()}
    d = lossy["now"][lossy["now"]["disturbed"]]
    assert (d["steal"] > 0.02).all()
    phrases.append(f"But loss at these loads did not go: alone, Click lost packets there in {ck[1][2]} trials and "
                   f"FastClick, which had lost none, in {fc[1][2]}; {len(d)} of the {len(lossy['now'])} lossy trials "
                   f"(bmv2 aside) were kept `disturbed`, each with steal above 2%, against "
                   f"{int(lossy['then']['disturbed'].sum())} of {len(lossy['then'])} in the morning")
    bm = {k: v[v["engine"] == "bmv2"] for k, v in ct.items()}
    assert all(rows["bmv2"][i][1] == rows["bmv2"][i][2] for i in (0, 1))  # every trial there lost packets
    at10 = [v[v["frac"] == 0.1].groupby("experiment")["loss"].mean() for v in bm.values()]
    phrases.append(f"bmv2 lost packets in every trial there in both runs: at 0.1 of the ceiling it already lost a "
                   f"mean of {span(at10[0], sig2)}% in the morning and {span(at10[1], sig2)}% alone")
    share = []
    for x in (now, then):
        a = pd.concat([attempts(x[n]) for n in FOUR])
        share.append((a["steal"] > 0.02).mean())
    phrases.append("These files do not separate what the other work cost the morning's routers from what the lower "
                   f"loads and the evening's steal changed: 0.1 of the ceiling was {pps(low['then']['offered_pps'].iloc[0])} "
                   f"pps in the morning and {pps(low['now']['offered_pps'].iloc[0])} alone, and alone "
                   f"{busy(share[0])}% of the four datasets' sweep attempts had steal above 2%, against "
                   f"{busy(share[1])}% in the morning (\"Steal time\", above)")
    return phrases, rows, ct


def test_the_testbed_doc_states_what_the_four_showed_alone(morning_four, halting):
    doc = the_testbed_doc()
    phrases, _, _ = four_against_morning(morning_four, {n: halting[n] for n in FOUR})
    for phrase in phrases:
        assert " ".join(phrase.split()) in doc, phrase


def test_the_testbed_doc_names_fastclick_dpdks_generator_limited_trials():
    """"CPU placement": fastclick-dpdk's generator-limited trials are in testbed-click and the comparison, and its
    search answer there is a lower bound."""
    doc = the_testbed_doc()
    assert "So fastclick-dpdk's generator-limited trials (`datasets/testbed-click`, `datasets/comparison`) are the " \
           "router's receive taking the generator's CPU, and its search answer is a lower bound" in doc
    for name in ("testbed-click", "comparison"):
        t = trials(name)
        t = t[t["engine"] == "fastclick-dpdk"]
        assert t["limited"].any() and t.groupby("experiment")["limited"].any().all(), name
    r = datasets.read_searches([D / "testbed-click"]).set_index("engine")
    assert r.loc["fastclick-dpdk", "generator_bound"]


def readme() -> str:
    path = D.parent / "README.md"
    if not path.exists():
        pytest.skip("the README is not installed with the package: only a checkout has it")
    return " ".join(path.read_text().split())


def test_the_readme_on_fastclick_dpdk_and_bmv2():
    text = readme()
    # fastclick-dpdk: the fastest user-space engine, by its lower bound against the others' PDRs
    pdr = datasets.read_searches([D / "testbed-click", D / "testbed-bmv2"])
    pdr = pdr[(pdr["kind"] == "pdr") & (pdr["method"] == "routerlab")].set_index("engine")["lower_pps"]
    user = ["click", "fastclick", "bmv2"]
    assert (pdr[user] < pdr["fastclick-dpdk"]).all()
    assert "This is FastClick's intended fast path: the fastest user-space engine here (`datasets/testbed-click/`)" \
           in text
    assert f"It is a reference model: a PDR@0.5% of about {pdr['bmv2'] / 1e3:.0f} kpps here " \
           "(`datasets/testbed-bmv2/`)" in text


def test_the_comparison_notebook_states_how_long_the_comparison_takes():
    import json

    path = D.parent / "notebooks" / "router-comparison.ipynb"
    if not path.exists():
        pytest.skip("notebooks/ is not installed with the package: only a checkout has it")
    md = " ".join(" ".join("".join(c["source"]).split()) for c in json.loads(path.read_text())["cells"]
                  if c["cell_type"] == "markdown")
    at = pd.to_datetime(datasets.read(D / "comparison").trials["started_at"])
    minutes = (at.max() - at.min()).total_seconds() / 60
    assert f"(root; about {round(minutes, -1):.0f} minutes with every engine)" in md


def the_run() -> dict:
    """The run the current testbed files come from (idle CPUs polling, LAG_CODE): each dataset's first and last
    record (a trial's start, a search's end), in the order it measured them."""
    runs = {}
    for n in POLLED:
        at = [pd.to_datetime(datasets.read(D / n).trials["started_at"])]
        if (D / n / "search_results.csv").exists():
            at.append(pd.to_datetime(datasets.read_searches([D / n])["when"]))
        runs[n] = (min(x.min() for x in at), max(x.max() for x in at))
    return runs


def sweep_ceilings(folder) -> set:
    """The ceilings a folder's sweeps at fractions of one (``--loads-frac``, or ``routerlab compare``) were given."""
    e = datasets.read_experiments(folder)
    given = e["command"].str.contains("--ceiling") & (e["command"].str.contains("--loads-frac")
                                                       | e["command"].str.contains("compare"))
    return set(e[given]["generator_ceiling_pps"])


def test_the_datasets_readme_and_the_script_state_the_run(polling):
    runs = the_run()
    for a, b in zip(POLLED, POLLED[1:]):
        assert runs[a][1] < runs[b][0], (a, b)  # in that order, one after the other
    first, last = runs[POLLED[0]][0], runs["comparison"][1]
    assert f"{first:%Y-%m-%d}" == f"{last:%Y-%m-%d}"
    assert the_run_began(first, "14:51")
    for n in POLLED:
        e = datasets.read_experiments(D / n)
        assert e["versions"].str.contains(f"routerlab: 0.1.0 (git {LAG_CODE[:7]})", regex=False).all(), n
        assert e["pinning"].str.contains("idle CPUs: poll").all(), n
    ceiling = set().union(*(sweep_ceilings(D / n) for n in POLLED))
    assert len(ceiling) == 1
    ceiling = ceiling.pop()
    # testbed-veth's searches of its sweeps were given it too; testbed-bmv2's sweep, at fixed loads, and the `bench`
    # searches measured their own
    bmv2 = datasets.read_experiments(D / "testbed-bmv2")
    assert not bmv2["command"].str.contains("--ceiling").any() and (bmv2["generator_ceiling_pps"] != ceiling).all()
    s = datasets.read_searches([D / n for n in POLLED])
    bench = s["experiment"].str.startswith("bench-")
    assert (s[bench]["generator_ceiling_pps"] != ceiling).all()
    assert (s[~bench]["generator_ceiling_pps"] == ceiling).all() and set(s[~bench]["experiment"]) <= set(
        datasets.read(D / VETH).trials["experiment"])
    # the files they replaced: the polling runs (POLLING: four at POLL_CODE, the comparison at POLL_COMPARISON_CODE)
    for n, folder in polling.items():
        e = datasets.read_experiments(folder)
        code = POLL_COMPARISON_CODE if n == "comparison" else POLL_CODE
        assert e["versions"].str.contains(f"routerlab: 0.1.0 (git {code[:7]})", regex=False).all(), n
        assert e["pinning"].str.contains("idle CPUs: poll").all(), n
    text = " ".join((D / "README.md").read_text().split())
    phrase = (f"The current files come from one run on {first:%Y-%m-%d}, alone on the machine and with idle CPUs "
              f"polling: testbed-click, click-course, testbed-bmv2, testbed-veth and the comparison, in that order, "
              f"from 14:51 to {last:%H:%M} UTC (code {LAG_CODE[:7]}), its sweeps at fractions of a ceiling, and "
              f"testbed-veth's searches of them, given the one it measured at its start ({pps(ceiling)} pps; "
              f"testbed-bmv2's sweep, at fixed loads, and the `bench` searches measured their own). The files they "
              f"replaced, from two runs earlier that day with idle CPUs polling too (code {POLL_CODE[:7]} and, for the "
              f"comparison, {POLL_COMPARISON_CODE[:7]}), whose trial validation held a lag of the generator against "
              f"a trial's loss only when the lag outlasted the router's queue, are in git at commit {POLLING[:7]}; "
              f"those measured with idle CPUs halting (`docs/testbed.md`, \"Idle CPUs poll\") at commit {HALTING[:7]}.")
    assert " ".join(phrase.split()) in text, phrase
    script = D.parent / "scripts" / "remeasure-testbed.sh"
    if not script.exists():
        pytest.skip("scripts/ is not installed with the package: only a checkout has it")
    head = " ".join(x.lstrip("# ") for x in script.read_text().splitlines()[1:6])
    m = re.search(r"in one run: about (an hour and a half) on 2 cores with the machine to itself \(on (\S+) at code "
                  r"(\w+), idle CPUs polling: the four others (\d+) minutes, of which testbed-veth (\d+); the "
                  r"comparison (\d+)\)", head)
    assert m, head
    assert m[2] == f"{first:%Y-%m-%d}" and m[3] == LAG_CODE[:7]
    # the four others from the run's start (its log: 14:51, as datasets/README.md says) to testbed-veth's last record;
    # testbed-veth and the comparison each from the record before it to its own last, within a minute
    began = pd.Timestamp(f"{first:%Y-%m-%d} 14:51", tz="UTC")
    four, veth_min, comparison = int(m[4]), int(m[5]), int(m[6])
    assert abs(four - (runs[VETH][1] - began).total_seconds() / 60) < 1
    assert abs(veth_min - (runs[VETH][1] - runs["testbed-bmv2"][1]).total_seconds() / 60) < 1
    assert abs(comparison - (last - runs[VETH][1]).total_seconds() / 60) < 1
    assert 75 <= four + comparison <= 105  # an hour and a half
