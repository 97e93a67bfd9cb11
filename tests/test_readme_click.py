"""Every number the README of testbed-click states, recomputed from its files (see readme_checks)."""

import functools
import re
import subprocess
import sys
import types

import numpy as np
import pandas as pd
import pytest

from routerlab import datasets, stats
from routerlab.validation import TrialValidation
from routerlab import defaults, traffic
from readme_checks import (idle_code_revised, lag_rule_changed, CODE_ALONE, D, HALTING, LAG_CODE, POLL_CODE, POLLING, assessed, committed, one, pct,
                           per_load, pps, previous_files, says, sig2, span, trials, when_range, why, attempts,
                           search_trials, statistics_paragraph_exists)


CLICK = "testbed-click"
DPDK, FC = "fastclick-dpdk-single-flow", "fastclick-single-flow"
WORDS = {1: "One", 2: "Two", 3: "Three", 4: "Four", 5: "Five"}
#: Every file of the dataset, as the files it replaced (commit POLLING) and the files measured with idle CPUs
#: halting (commit HALTING) held them too.
FILES = ("trials.csv", "experiments.csv", "search_results.csv", "search_trials.csv", "drops.csv",
         "superseded_trials.csv", "superseded_search_trials.csv")
#: The datasets ``scripts/remeasure-testbed.sh OUT`` measured after this one, in the same run.
LATER = ("click-course", "testbed-bmv2", "testbed-veth", "comparison")
IDLE_POLL = "; idle CPUs: poll ("


def click_searches(folder=D / CLICK) -> pd.DataFrame:
    return datasets.read_searches([folder])


def notes(e: pd.DataFrame) -> dict:
    """Each sweep's notes (``key=value; ...``) as a dict, by engine."""
    return {row.engine: dict(kv.split("=", 1) for kv in row.notes.split("; ")) for row in e.itertuples()}


def says_command(command: str):
    """The README's code block gives ``command``, its lines continued with ``\\``."""
    text = " ".join((D / CLICK / "README.md").read_text().replace("\\\n", " ").split())
    assert " ".join(command.split()) in text, f"datasets/{CLICK}/README.md does not give the command: {command}"


def frac(load, ceiling) -> str:
    return f"{load / ceiling:.2g}"


def at_load(p: pd.DataFrame, engine: str, load: float) -> pd.DataFrame:
    """A search's trials at one load (full duration and short alike)."""
    return p[(p["engine"] == engine) & np.isclose(p["load"], load)]


def brought_in(path: str, commit: str) -> str:
    """The message of the last commit up to ``commit`` that changed ``path`` (git history: a checkout only)."""
    committed(path, commit)  # skips where the history is not here
    return subprocess.run(["git", "-C", str(D.parent), "log", "-1", "--format=%B", commit, "--", path],
                          capture_output=True, text=True, check=True).stdout


def count(n: int) -> str:
    return "none" if n == 0 else str(n)


def pcts(ratios) -> str:
    """Loss ratios, smallest first, as ``a%, b% and c%``."""
    x = [sig2(v) + "%" for v in sorted(ratios)]
    return x[0] if len(x) == 1 else ", ".join(x[:-1]) + " and " + x[-1]


def set_aside(folder) -> pd.DataFrame:
    """Every attempt a folder's sweeps and searches set aside, each with the validation's reasons."""
    s = pd.concat([pd.read_csv(folder / "superseded_trials.csv"), pd.read_csv(folder / "superseded_search_trials.csv")],
                  ignore_index=True)
    return s.assign(why=why(s))


def short_lag_only(s: pd.DataFrame) -> pd.Series:
    """The attempts set aside for a lag of the generator no longer than the router's queue, and for nothing else:
    those the rule before LAG_CODE (a lag had to outlast the queue) would have kept."""
    lag_only = s["why"].map(lambda w: bool(w) and all(x.startswith("generator fell behind") for x in w.split("; ")))
    return lag_only & (s["gen_late_ms"] <= s["queue_ms"])


@functools.lru_cache(maxsize=None)
def _validation_before():
    """``routerlab.validation`` as the code these files replaced had it (POLL_CODE): the rule before LAG_CODE."""
    src = committed("lib/routerlab/validation.py", POLL_CODE)
    name = "routerlab._validation_before"
    mod = types.ModuleType(name)
    mod.__package__, mod.__file__ = "routerlab", f"lib/routerlab/validation.py@{POLL_CODE[:7]}"
    sys.modules[name] = mod  # dataclasses look their module up while the class is made
    try:
        exec(compile(src, mod.__file__, "exec"), mod.__dict__)
    finally:
        del sys.modules[name]
    return mod


def rule_before():
    """The trial validation before LAG_CODE, with its defaults (the same thresholds as now)."""
    return _validation_before().TrialValidation()


@pytest.fixture
def halting(tmp_path):
    """The files measured with idle CPUs halting (commit HALTING), in a folder of their own."""
    return previous_files(CLICK, tmp_path, files=FILES, commit=HALTING)


@pytest.fixture
def polling(tmp_path):
    """The files this data replaced, measured with idle CPUs polling and the old lag rule (commit POLLING)."""
    return previous_files(CLICK, tmp_path, files=FILES, commit=POLLING)


def test_click_where_when_how():
    e = datasets.read_experiments(D / CLICK)
    r = click_searches()
    t = trials(CLICK)
    for col in ("kernel", "cpu", "pinning", "generator_ceiling_pps", "engine_version", "versions"):
        assert e[col].nunique() == 1
    cpus = int(re.fullmatch(r".* x(\d+)", e["cpu"].iloc[0]).group(1))
    pinning = e["pinning"].iloc[0]
    # idle CPUs polled while the testbed was up (docs/testbed.md, "Idle CPUs poll")
    assert IDLE_POLL in pinning and pinning.endswith(")")
    idle = pinning.split(IDLE_POLL)[1][:-1]
    assert "/dev/cpu_dma_latency 0 us held" in idle
    says(CLICK, f"kernel {e['kernel'].iloc[0]}, {cpus} vCPUs ({e['cpu'].iloc[0]})", f"`{pinning}`",
         f"FastClick {e['engine_version'].iloc[0]}")
    says(CLICK, "While the testbed was up, idle CPUs polled instead of halting (`docs/testbed.md`, \"Idle CPUs poll\"): "
                f"the record's `pinning` ends with `idle CPUs: poll ({idle})`")
    # the searches write no record of their own: testbeds polled unless told otherwise, and the sweeps, run by
    # the same script in the same environment right after, recorded that they polled
    src = committed("lib/routerlab/testbed.py", LAG_CODE)
    assert 'os.environ.get("ROUTERLAB_CPU_IDLE", "poll")' in src
    assert pd.to_datetime(r["when"]).max() < pd.to_datetime(t["started_at"]).min()
    says(CLICK, "The searches write no record of their own: their testbeds poll unless told otherwise, and the sweeps, "
                "run by the same script in the same environment right after them, recorded that theirs polled")
    days = set(pd.to_datetime(t["started_at"]).dt.strftime("%Y-%m-%d")) | set(pd.to_datetime(r["when"]).dt.strftime("%Y-%m-%d"))
    assert len(days) == 1
    # the code, clean: a record names uncommitted changes where there were any
    assert (e["versions"] == f"routerlab: 0.1.0 (git {LAG_CODE[:7]})").all()
    says(CLICK, f"**When:** {days.pop()}: the searches {when_range(r['when'])} UTC (when each one finished), the "
                f"sweeps' trials {when_range(t['started_at'])} UTC (code: commit {LAG_CODE[:7]})")
    # the validation the README describes is the one of the commit measured
    assert "def why_disturbed" in committed("lib/routerlab/validation.py", LAG_CODE)
    # the script, as it was at that commit: with no dataset named it measures all five, testbed-click first,
    # after measuring the ceiling once, which it gives to this dataset's sweeps
    script = committed("scripts/remeasure-testbed.sh", LAG_CODE)
    blocks = re.findall(r"^if want ([\w-]+); then", script, flags=re.M)
    (every,) = re.findall(r'^ALL="([^"]+)"', script, flags=re.M)
    assert blocks == every.split() == [CLICK, *LATER]
    assert 'WANT=" ${*:-$ALL} "' in script
    assert script.count("measuring.generator_ceiling()") == 1
    assert script.index("measuring.generator_ceiling()") < script.index(f"if want {CLICK}; then")
    block = script.split(f"if want {CLICK}; then")[1].split("\nfi\n")[0]
    assert block.count('--ceiling "$C"') == 1 and "for e in fastclick fastclick-dpdk" in block
    (bench,) = [x for x in block.splitlines() if "bench engines" in x]
    assert "--ceiling" not in bench  # bench engines measures its own
    # the other four datasets were measured after this one, by the same run: the same code, later trials
    last = max(pd.to_datetime(t["started_at"]).max(), pd.to_datetime(r["when"]).max())
    for other in LATER:
        assert pd.to_datetime(pd.read_csv(D / other / "trials.csv")["started_at"]).min() > last, other
        assert (datasets.read_experiments(D / other)["versions"] == e["versions"].iloc[0]).all(), other
    same = sorted(x.parent.name for x in D.glob("*/experiments.csv")
                  if (pd.read_csv(x)["versions"] == e["versions"].iloc[0]).all())
    assert same == sorted([CLICK, *LATER]) and len(same) == 5
    says(CLICK, f"`scripts/remeasure-testbed.sh OUT` measured all {WORDS[len(same)].lower()} testbed datasets in one "
                f"run at {LAG_CODE[:7]}, from a fresh clone, this one first (then {', '.join(LATER[:-1])} and "
                f"{LATER[-1]}), with the machine to itself")
    assert r["generator_ceiling_pps"].nunique() == 1
    ceiling, own = e["generator_ceiling_pps"].iloc[0], r["generator_ceiling_pps"].iloc[0]
    assert ceiling < own
    # both ceilings: the generator straight into the sink, the script's first, bench engines' before its first search
    assert script.index("measuring.generator_ceiling()") < script.index("bench engines")
    first = pd.to_datetime(r["when"]).min()
    says(CLICK, "The script measures the generator's ceiling once when it starts, with "
                f"`measuring.generator_ceiling()`, and gives it to the sweeps: {pps(ceiling)} pps",
         f"`bench engines` measures the ceiling itself at its start: {pps(own)} pps, "
         f"{100 * (own / ceiling - 1):.0f}% more, measured the same way (the generator straight into the sink) "
         f"before its first search finished at {first:%H:%M} UTC")
    # the commands, as run with --out datasets/testbed-click
    engines = e["engine"].tolist()
    for row in e.itertuples():
        head, out = row.command.split(" --out ")
        assert " " not in out and out.endswith("/" + CLICK)  # --out is the last argument
        says_command(head.replace(f"--engine {row.engine} ", "--engine E ") + " --out datasets/testbed-click")
    assert all(f"--ceiling {ceiling:.0f} " in c for c in e["command"])
    says(CLICK, f"# E = {', '.join(engines)}")
    p = search_trials(D / CLICK)
    assert set(p[p["phase"] == "final"]["duration"]) == {1.0}
    says_command("routerlab bench engines " + " ".join(f"--engine {x}" for x in r["engine"])
                 + " --duration 1 --out datasets/testbed-click")
    # trial validation: the same in every sweep and search
    n = notes(e)
    for key in ("steal_threshold", "probe_period_ms", "max_repeats"):
        assert len({x[key] for x in n.values()}) == 1 and (r[key].astype(str) == n["fastclick"][key]).all()
    assert n["fastclick"]["loss_attribution"] == "on"
    says(CLICK, f"A trial is measured again, up to {n['fastclick']['max_repeats']} times, when its steal is above "
                f"{float(n['fastclick']['steal_threshold']):.0%}",
         "a stop longer than the probe's period and than the router's queue lasts at that load, a lag longer than "
         "the probe's period however short next to the queue, each long enough to have offered the packets lost",
         f"A probe on the router's CPU wakes every {float(n['fastclick']['probe_period_ms']):.0f} ms",
         f"the queue is {n['fastclick']['router_queue_packets']} packets for fastclick (the CPU backlog that feeds "
         f"its socket) and {n['fastclick-dpdk']['router_queue_packets']} for fastclick-dpdk (its AF_XDP ring)")
    # the rule, as the measured code has it: a stop must outlast the queue, a lag need not
    val = committed("lib/routerlab/validation.py", LAG_CODE)
    assert "if accounts(longest, total):" in val and "if accounts(lag, total, queue=None):" in val
    q = r.set_index("engine")["router_queue_packets"]
    assert q["fastclick"] == int(n["fastclick"]["router_queue_packets"])
    assert q["fastclick-dpdk"] == int(n["fastclick-dpdk"]["router_queue_packets"])
    # files
    loads = t.groupby("engine")["offered_pps"].nunique()
    runs = t.groupby(["engine", "offered_pps"]).size()
    assert loads.nunique() == 1 and runs.nunique() == 1
    says(CLICK, f"the {len(t)} sweep trials ({len(loads)} engines × {loads.iloc[0]} loads × {runs.iloc[0]})")
    for col in ("lost", "lost_attributed", "lost_unexplained", "trace_missed", "drops", "cpu_stop_ms", "gen_late_ms",
                "queue_ms", "attempt", "disturbed"):
        assert col in t.columns
    sup = pd.read_csv(D / CLICK / "superseded_trials.csv")
    ssup = pd.read_csv(D / CLICK / "superseded_search_trials.csv")
    says(CLICK, f"the {len(sup)} sweep attempts and the {len(ssup)} search attempts that were measured again")


def test_click_replaces_the_polling_files(polling):
    """What these files replaced (commit POLLING), what differed, and what the new lag rule set aside."""
    e, pe = datasets.read_experiments(D / CLICK), datasets.read_experiments(polling)
    r, pr = click_searches(), click_searches(polling)
    t, pt = trials(CLICK), trials(datasets.read(polling).trials)
    # the same commands, the same day, idle CPUs polling too; the code before the new lag rule
    assert (pe["versions"] == f"routerlab: 0.1.0 (git {POLL_CODE[:7]})").all()
    assert pe["pinning"].str.contains(IDLE_POLL, regex=False).all()

    def form(x):
        return {y.experiment: y.command.split(" --out ")[0].replace(f"--ceiling {y.generator_ceiling_pps:.0f}", "")
                for y in x.itertuples()}
    assert form(pe) == form(e) and pr["engine"].tolist() == r["engine"].tolist()
    day = {f"{x:%Y-%m-%d}" for x in pd.to_datetime(pd.concat([pt["started_at"], pr["when"]]))}
    assert day == {f"{x:%Y-%m-%d}" for x in pd.to_datetime(t["started_at"])}
    assert pd.to_datetime(pt["started_at"]).max() < pd.to_datetime(r["when"]).min()
    says(CLICK, "These files replace those of a run of the same commands earlier that day, also with idle CPUs polling "
                f"(in git at commit {POLLING[:7]}: the searches {when_range(pr['when'])} UTC and the sweeps' trials "
                f"{when_range(pt['started_at'])} UTC, code {POLL_CODE[:7]})")
    # the rule: the one commit to validation.py between the two codes drops the queue's test for lags
    says(CLICK, lag_rule_changed())
    # the attempts set aside for a lag shorter than the queue, and for nothing else: the old rule kept them
    s = set_aside(D / CLICK)
    assert (s["why"] != "").all()
    short = s[short_lag_only(s)]
    # the same attempts as those the rule before keeps (with the same thresholds)
    assert rule_before().facts() == TrialValidation().facts()
    assert short.index.tolist() == [i for i, y in zip(s.index, s.to_dict("records")) if not rule_before().disturbed(y)]
    assert len(short) == 1
    (x,) = short.itertuples()
    assert x.steal <= 0.02 and x.cpu_stop_ms <= TrialValidation().probe_period_ms and 0 < x.lost
    assert x.engine == "click" and x.duration_s == 1.0
    p = search_trials(D / CLICK)
    kept = p[(p["experiment"] == x.experiment) & (p["probe"] == x.probe)]
    assert len(kept) == 1 and np.isclose(kept["load"].iloc[0], x.offered_pps) and not kept["passed"].iloc[0]
    says(CLICK, f"Of the {len(s)} attempts set aside here, {len(short)} was set aside for a lag shorter than the queue "
                f"alone, which the rule before would have kept: {x.engine}'s search trial at {pps(x.offered_pps)} pps, "
                f"which lost {x.lost} packets ({sig2(x.lost / x.tx)}%) behind a {one(x.gen_late_ms)}-ms lag against "
                f"{one(x.queue_ms)} ms of queue; measured again, it lost {sig2(kept['loss'].iloc[0])}% and failed")
    # every other attempt, kept or set aside, the rule before (validation.py as POLL_CODE has it) judges alike
    every = pd.concat([s, trials(CLICK), p.rename(columns={"load": "offered_pps"})], ignore_index=True)
    rows = every.to_dict("records")
    now = np.array([TrialValidation().disturbed(y) for y in rows])
    then = np.array([rule_before().disturbed(y) for y in rows])
    assert (now >= then).all() and (now != then).sum() == len(short)
    assert not rule_before().disturbed(short.iloc[0].to_dict())
    says(CLICK, "Every other attempt here, kept or set aside, the rule before would have judged alike.")
    # the other differences: the time of day, the ceilings, the testbed's code for idle CPUs
    assert pe["generator_ceiling_pps"].nunique() == 1 and pr["generator_ceiling_pps"].nunique() == 1
    says(CLICK, f"the generator's ceilings ({pps(pe['generator_ceiling_pps'].iloc[0])} pps for the sweeps then, "
                f"{pps(e['generator_ceiling_pps'].iloc[0])} now; {pps(pr['generator_ceiling_pps'].iloc[0])} and "
                f"{pps(r['generator_ceiling_pps'].iloc[0])} pps for the searches)")
    tb_old, tb_new, revised_idle = idle_code_revised()
    assert "self.hold_idle()\n            self.up()" in tb_new and "cpuidle driver" not in tb_old
    assert not pe["pinning"].str.contains("cpuidle driver").any() and e["pinning"].str.contains("cpuidle driver").all()
    says(CLICK, revised_idle)
    # linux and ebpf passed that run's ceiling; here both fail loads below this run's
    pp, pn = datasets.search_pdr(pr).set_index("engine"), datasets.search_pdr(r).set_index("engine")
    rr = r.set_index("engine")
    for x in ("linux", "ebpf"):
        assert pp.loc[x, "bound"] == "passed at the ceiling" and pn.loc[x, "bound"] == ""
        assert rr.loc[x, "upper_pps"] < rr.loc[x, "generator_ceiling_pps"]
    (then,) = pr["generator_ceiling_pps"].unique()
    says(CLICK, "The results differed too: linux's and ebpf's searches passed that run's ceiling "
                f"({pps(then)} pps); here both fail loads below this run's.")
    # the polling files replaced the halting ones (which stay in git at HALTING)
    assert f"the halting files they replace stay in git at {HALTING[:7]}" in brought_in(f"datasets/{CLICK}/trials.csv",
                                                                                       POLLING)
    says(CLICK, "The files measured with idle CPUs halting, which the polling files replaced, are compared at the end.")


def test_click_terms():
    statistics_paragraph_exists()  # the section the terms cite
    a = stats.assess(datasets.read(D / CLICK).trials)
    p = a[0].verdict.params
    assert all(x.verdict.params == p for x in a) and p.mode == "strict"
    assert (p.pdr, p.eta, p.entry_multiplier) == (defaults.PDR_FRACTION, defaults.ETA, defaults.ENTRY_MULTIPLIER)
    runs = trials(CLICK).groupby(["experiment", "offered_pps"]).size()
    n = click_searches()["final_trials"]
    assert runs.nunique() == 1 and n.nunique() == 1
    n = int(n.iloc[0])
    # the search's rule, as the measured code has it: a limited trial fails, a load passes on half its trials
    src = committed("lib/routerlab/search.py", LAG_CODE)
    assert "ok = (not lim) and passes(kind, tx, rx, pdr)" in src and "return 2 * good >= n" in src
    # generator-limited, as the measured code has it
    gen = committed("lib/routerlab/traffic.py", LAG_CODE)
    assert f"GENERATOR_TOLERANCE = {traffic.GENERATOR_TOLERANCE}" in gen
    assert 'limited = res["blocked"] > 0 or (requested > 0 and offered < GENERATOR_TOLERANCE * requested)' in gen
    assert "our own socket is full" in committed("lib/routerlab/csrc/rlgen.c", LAG_CODE)
    says(CLICK, "**Terms** (the main `README.md`, \"The statistics, in one paragraph\", defines the first three):",
         f"**PDR@{p.pdr:.1%}** (PDR): the highest load such that it and every lower load lose at most {p.pdr:.1%} "
         f"(the *PDR fraction*). A sweep tests the mean loss of each load's {runs.iloc[0]} trials. A search judges "
         f"each trial on its own and passes a load when at least {-(-n // 2)} of its {n} trials pass (its median "
         "trial), a generator-limited trial counting as failed.",
         "**TIR**: how much the throughput (offered × (1 - mean loss)) grows per pps of load added, between two "
         "successive loads.",
         f"**Verdict** (`routerlab.stats.assess`): take a sweep's first load whose mean loss is above {p.pdr:.1%}; "
         f"the load after it is the candidate saturation point. **GOOD** when the TIR is below "
         f"{p.eta * p.entry_multiplier:g} there and below {p.eta:g} at every later load; **BAD** when it is not, or "
         f"when no load (or only the highest) lost more than {p.pdr:.1%} on average. It is a verdict on the sweep, "
         "not on the router.",
         f"**Generator-limited**: a trial in which the generator offered less than "
         f"{100 * traffic.GENERATOR_TOLERANCE:g}% of the packets asked for, or its own socket refused sends "
         "(`routerlab.traffic`). A sweep's statistics leave such trials out; a search counts them as failed.")
    # a sweep's statistics leave generator-limited trials out
    t = trials(CLICK)
    assert stats.summaries(a)["runs"].sum() == (~t["limited"]).sum() < len(t)


def test_click_steal():
    thr = float(notes(datasets.read_experiments(D / CLICK))["fastclick"]["steal_threshold"])
    r = click_searches()
    k = search_trials(D / CLICK)
    s = attempts(D / CLICK, "search")
    hi = s[s["steal"] > thr]
    per = s.groupby("engine", sort=False).agg(n=("steal", "size"), hi=("steal", lambda x: (x > thr).sum()))
    per = per.loc[r["engine"]]
    says(CLICK, f"Of the {len(s)} search attempts (the {len(k)} kept trials and the {len(s) - len(k)} set aside), "
                f"{len(hi)} had steal above {thr:.0%} (at most {100 * s['steal'].max():.1f}%): "
                + ", ".join(f"{e} {count(x.hi)} of {x.n}" for e, x in per.iloc[:-1].iterrows())
                + f", and {per.index[-1]} {count(per.iloc[-1].hi)} of {per.iloc[-1].n}")
    # most of it in ebpf's search: its attempts set aside, and its kept trials, each disturbed to the last attempt
    eh = hi[hi["engine"] == "ebpf"]
    assert len(eh) > len(hi) / 2
    es = pd.read_csv(D / CLICK / "superseded_search_trials.csv")
    es = es[es["engine"] == "ebpf"]
    ek = k[(k["engine"] == "ebpf") & (k["steal"] > thr)]
    assert (es["steal"] > thr).sum() + len(ek) == len(eh)
    assert ek["disturbed"].all() and (ek["attempt"] == 1 + TrialValidation().max_repeats).all()
    says(CLICK, f"{len(eh)} of the {len(hi)} were in ebpf's search: {(es['steal'] > thr).sum()} of its {len(es)} "
                f"attempts set aside, and {len(ek)} of its kept trials, each still `disturbed` after "
                f"{1 + TrialValidation().max_repeats} attempts")
    t = trials(CLICK)
    a = attempts(D / CLICK)
    ahi = a[a["steal"] > thr]
    assert a["steal"].median() == 0
    says(CLICK, f"Of the {len(a)} sweep attempts (the {len(t)} kept trials and the {len(a) - len(t)} set aside), "
                f"{len(ahi)} had steal above {thr:.0%} (at most {100 * a['steal'].max():.1f}%); the mean steal over "
                f"all {len(a)} was {100 * a['steal'].mean():.2f}%, and at least half of them had none")


def test_click_pdr_table_never_sets_a_lower_bound_against_another():
    r = click_searches()
    pdr = datasets.search_pdr(r).set_index("engine")
    click = pdr.loc["click", "pdr_pps"]
    assert not pdr.loc["click", "at_least"]
    for row in r.itertuples():
        ratio = "none: a lower bound" if pdr.loc[row.engine, "at_least"] else f"{row.lower_pps / click:.2f}"
        says(CLICK, f"| {row.engine} | {row.answer} | {ratio} |")
    says(CLICK, "| engine | PDR@0.5% | ratio to click |")
    ceiling = r["generator_ceiling_pps"].iloc[0]
    says(CLICK, f"**PDR@0.5%, in one run** (generator ceiling {pps(ceiling)} pps)")
    bounded = pdr[pdr["at_least"]]
    assert bounded.index.tolist() == ["fastclick-dpdk"] and (bounded["bound"] == "limited by the generator").all()
    own = pdr.index[~pdr["at_least"]].tolist()
    assert own == ["linux", "ebpf", "click", "fastclick"] and (pdr.loc[own, "bound"] == "").all()
    says(CLICK, f"{WORDS[len(bounded)]} answer is a lower bound, {bounded.index[0]}'s (below), and a lower bound is "
                f"never set against another answer as a ratio. The other {WORDS[len(own)].lower()} answers are the "
                "routers' own: no trial at their failing loads was generator-limited.")
    p = search_trials(D / CLICK)
    s = r.set_index("engine")
    for e in own:
        assert not at_load(p, e, s.loc[e, "upper_pps"])["generator_limited"].any()
    # the limited trials of the search
    lim = p[p["generator_limited"]]
    n = lim.groupby("engine").size()
    assert set(n.index) == {"linux", "click", "fastclick-dpdk"}
    top = pd.Series(np.isclose(lim["load"], ceiling), index=lim.index)
    ll = lim[lim["engine"] == "linux"]
    assert top[ll.index].all() and (ll["phase"] == "short").sum() == 1
    cl = lim[lim["engine"] == "click"]
    assert len(cl) == 1 and cl["phase"].iloc[0] == "short" and top[cl.index].all()
    # fastclick-dpdk's: full-duration trials, and short ones of which one at the ceiling
    dl = lim[lim["engine"] == "fastclick-dpdk"]
    full, short = dl[dl["phase"] == "final"], dl[dl["phase"] == "short"]
    assert len(full) + len(short) == len(dl) and len(short) == 2
    at_top = np.isclose(short["load"], ceiling)
    assert at_top.sum() == 1
    says(CLICK, f"Of the {len(p)} search trials {len(lim)} were generator-limited: linux {n['linux']} (its short trial "
                f"and {(ll['phase'] == 'final').sum()} full-duration ones at the ceiling), click {n['click']} (its short "
                f"trial at the ceiling) and fastclick-dpdk {n['fastclick-dpdk']} ({len(full)} full-duration trials, "
                f"and {len(short)} short ones at {pps(short['load'][~at_top].iloc[0])} pps and at the ceiling)")


def test_click_linux_and_ebpf():
    r = click_searches().set_index("engine")
    p = search_trials(D / CLICK)
    ceiling = r["generator_ceiling_pps"].iloc[0]
    fin = p[p["phase"] == "final"]
    # linux: the ceiling failed, two of its trials generator-limited
    lx = fin[fin["engine"] == "linux"]
    top = lx[np.isclose(lx["load"], ceiling)]
    tl, tu = top[top["generator_limited"]], top[~top["generator_limited"]]
    assert len(top) == 3 and len(tl) == 2 and len(tu) == 1 and not tu["passed"].any()
    says(CLICK, f"linux failed the search's ceiling ({pps(ceiling)} pps) on its three trials there: {len(tl)} were "
                f"generator-limited (the generator offered {' and '.join(pps(x) for x in sorted(tl['tx']))} packets) "
                f"and the third lost {sig2(tu['loss'].iloc[0])}%")
    ans, up = at_load(lx, "linux", r.loc["linux", "lower_pps"]), at_load(lx, "linux", r.loc["linux", "upper_pps"])
    assert len(ans) == len(up) == 3 and ans["passed"].sum() == 2 and up["passed"].sum() == 1
    bad = up[~up["passed"]]
    dist = bad[bad["disturbed"]]
    assert len(dist) == 1 and not ans["disturbed"].any() and not up[up["passed"]]["disturbed"].any()
    assert (dist["steal"] > 0.02).all() and (dist["attempt"] == 1 + TrialValidation().max_repeats).all()
    above = lx[lx["load"] > r.loc["linux", "upper_pps"] * (1 + 1e-9)]
    al = above[~np.isclose(above["load"], ceiling)]
    assert al["load"].nunique() == 1 and len(al) == 3 and not al["passed"].any() and not al["disturbed"].any()
    says(CLICK, f"It passed its answer, {pps(r.loc['linux', 'lower_pps'])} pps, on 2 of 3 trials ({pcts(ans['loss'])}) "
                f"and failed {pps(r.loc['linux', 'upper_pps'])} pps on 2 of 3 ({pcts(up['loss'])}). One of the two "
                f"that failed was kept `disturbed` (steal {100 * dist['steal'].iloc[0]:.1f}%) after "
                f"{dist['attempt'].iloc[0]} attempts; the load above, {pps(al['load'].iloc[0])} pps, failed on three "
                f"trials not kept `disturbed` ({pcts(al['loss'])})")
    lossy = p[(p["engine"] == "linux") & (p["lost"] > 0)]
    assert lossy["drops"].str.fullmatch(r"dut:CPU_BACKLOG=\d+").all()
    says(CLICK, "linux lost its packets at the router CPU's input backlog (`CPU_BACKLOG`)")
    # ebpf: its answer and failing load, none of their trials disturbed
    eb = p[p["engine"] == "ebpf"]
    ea, eu = at_load(eb, "ebpf", r.loc["ebpf", "lower_pps"]), at_load(eb, "ebpf", r.loc["ebpf", "upper_pps"])
    assert len(ea) == len(eu) == 3 and ea["passed"].sum() == 2 and eu["passed"].sum() == 1
    assert not ea["disturbed"].any() and not eu["disturbed"].any()
    assert eb[eb["lost"] > 0]["drops"].str.fullmatch(r"dut:NOT_SPECIFIED=\d+").all()
    lossless = eb[eb["lost"] == 0]["load"].max()
    assert (eb[eb["load"] > lossless]["lost"] > 0).all()
    says(CLICK, f"ebpf passed its answer, {pps(r.loc['ebpf', 'lower_pps'])} pps, on 2 of 3 trials ({pcts(ea['loss'])}) "
                f"and failed {pps(r.loc['ebpf', 'upper_pps'])} pps on 2 of 3 ({pcts(eu['loss'])}), none kept "
                "`disturbed`; the kernel dropped its packets with no reason given (`NOT_SPECIFIED`), and every trial of "
                f"its search above {pps(lossless)} pps lost some")
    # a load ebpf's search failed at first, on trials kept disturbed, and passed when it came back to it
    ef = eb[eb["phase"] == "final"]
    again = ef.groupby("load").size()
    (load,) = again[again == 6].index
    g = ef[np.isclose(ef["load"], load)].sort_values("probe")
    first, then = g.iloc[:3], g.iloc[3:]
    fd = first[~first["passed"]]
    assert first["passed"].sum() == 1 and fd["disturbed"].all() and len(fd) == 2
    assert (then["lost"] == 0).all() and then["passed"].all() and not then["disturbed"].any()
    assert (ef[(ef["probe"] > first["probe"].max()) & (ef["probe"] < then["probe"].min())]["load"] < load).all()
    says(CLICK, f"ebpf's search failed {pps(load)} pps at first, on two trials kept `disturbed` (steal "
                f"{' and '.join(f'{100 * x:.1f}%' for x in sorted(fd['steal']))}; they lost {pcts(fd['loss'])}), and "
                "passed it when it came back to it, on three lossless trials")


def test_click_fastclick_dpdk_search():
    r = click_searches().set_index("engine")
    p = search_trials(D / CLICK)
    dpdk = p[p["engine"] == "fastclick-dpdk"]
    upper = r.loc["fastclick-dpdk", "upper_pps"]
    at = at_load(p, "fastclick-dpdk", upper)
    full = dpdk[dpdk["phase"] == "final"]
    lim = full[full["generator_limited"]]
    assert (lim["tx"] < lim["load"] * lim["duration"]).all() and (lim["duration"] == 1.0).all()
    assert r.loc["fastclick-dpdk", "generator_bound"]
    # the failing load: two of its trials generator-limited, so the generator decided it
    n = int(r.loc["fastclick-dpdk", "final_trials"])
    al = at[at["generator_limited"]]
    assert len(at) == n and (at["phase"] == "final").all() and len(al) == 2 and at[~at["generator_limited"]]["passed"].all()
    says(CLICK, f"fastclick-dpdk's failing load ({pps(upper)} pps) failed on {len(al)} of its {n} trials, both "
                f"generator-limited (they offered {' and '.join(pps(x) for x in sorted(al['tx']))} packets; the third "
                "passed), and a generator-limited trial counts as failed, so the generator bounds this answer "
                "(`routerlab.stats.generator_bound`, from `search_trials.csv`)")
    says(CLICK, f"{len(lim)} of the search's {len(full)} full-duration trials were generator-limited, offering "
                f"{pps(lim['tx'].min())}-{pps(lim['tx'].max())} pps where more was asked")
    # its own loss, in the kept trials the generator delivered: none
    assert (dpdk[~dpdk["generator_limited"]]["lost"] == 0).all()
    says(CLICK, "In the kept trials the generator delivered, the router lost no packet.")
    # the generator-limited full-duration trials: losses at its ring, after the generator's lags
    ll = lim[lim["lost"] > 0]
    assert ll["drops"].str.fullmatch(r"dut:FromDPDKDevice@4\.hw_dropped=\d+").all()
    assert (ll["gen_late_ms"] > ll["queue_ms"]).all()
    at_ans = ll[np.isclose(ll["load"], r.loc["fastclick-dpdk", "lower_pps"])]
    assert len(at_ans) == 1
    says(CLICK, f"In {len(ll)} of the {len(lim)} generator-limited full-duration trials it lost packets at its AF_XDP "
                f"ring (FromDPDKDevice's `hw_dropped`), {span(ll['loss'], sig2)}%, after the generator had fallen "
                f"behind by {span(ll['gen_late_ms'], lambda x: f'{x:.0f}')} ms (a generator that falls behind sends "
                f"what it owes at once, a burst); one of them was at the answer, {pps(at_ans['load'].iloc[0])} pps: "
                f"{pps(at_ans['tx'].iloc[0])} packets offered, {sig2(at_ans['loss'].iloc[0])}% lost",
         "These files cannot separate the router's own limit from the bursts after a lag")
    ss = pd.read_csv(D / CLICK / "superseded_search_trials.csv")
    assert (ss["engine"] != "fastclick-dpdk").all()
    says(CLICK, "No attempt of its search was set aside.")
    says(CLICK, f"So its PDR is at least {pps(r.loc['fastclick-dpdk', 'lower_pps'])} pps, and these files cannot say "
                "how far above")


def test_click_click_and_fastclick(halting, tmp_path):
    r = click_searches().set_index("engine")
    p = search_trials(D / CLICK)
    parts = []
    for e in ("click", "fastclick"):
        u = at_load(p, e, r.loc[e, "upper_pps"])
        bad = u[~u["passed"]]
        assert len(u) == 3 and not u["disturbed"].any() and len(bad) >= 2
        ans = at_load(p, e, r.loc[e, "lower_pps"])
        assert len(ans) == 3 and not ans["disturbed"].any() and ans["passed"].sum() == 2
        parts.append((r.loc[e, "upper_pps"], bad, ans))
    (cu, cb, ca), (fu, fb, fa) = parts
    says(CLICK, "No trial at click's and fastclick's failing loads or at their answers was kept `disturbed`: "
                f"click failed {pps(cu)} pps with {WORDS[len(cb)].lower()} trials losing {pcts(cb['loss'])}, "
                f"fastclick failed {pps(fu)} pps with {WORDS[len(fb)].lower()} losing {pcts(fb['loss'])}")
    cfail, ffail = ca[~ca["passed"]], fa[~fa["passed"]]
    says(CLICK, f"click passed its answer, {pps(r.loc['click', 'lower_pps'])} pps, on 2 of 3 trials (the third lost "
                f"{sig2(cfail['loss'].iloc[0])}%), fastclick its own, {pps(r.loc['fastclick', 'lower_pps'])} pps, on "
                f"2 of 3 too (the third lost {sig2(ffail['loss'].iloc[0])}%)")
    ratio = r.loc["fastclick", "lower_pps"] / r.loc["click", "lower_pps"]
    w = click_searches(halting).set_index("engine")
    was = w.loc["fastclick", "lower_pps"] / w.loc["click", "lower_pps"]
    (tmp_path / "polling").mkdir()
    o = click_searches(previous_files(CLICK, tmp_path / "polling", files=FILES, commit=POLLING)).set_index("engine")
    before = o.loc["fastclick", "lower_pps"] / o.loc["click", "lower_pps"]
    assert ratio < 1 < was and before < 1  # which carries more differs from run to run
    says(CLICK, f"On the same AF_PACKET capture, FastClick's batches of 32 carried {ratio:.2f} times what Click carried "
                f"in this run ({was:.2f} with the CPUs halting, compared at the end, and {before:.2f} in the polling "
                "run these files replace); which carries more differs from run to run")
    # precision: the relative gap between the answer and the failing load above it
    cf = r.loc[["click", "fastclick"]]
    assert np.allclose(cf["precision"], (cf["upper_pps"] - cf["lower_pps"]) / cf["upper_pps"])
    # a trial that failed below an answer
    fin = p[p["engine"].isin(["click", "fastclick"]) & (p["phase"] == "final")]
    below = fin[(fin["load"] < fin["engine"].map(r["lower_pps"])) & ~fin["passed"]]
    assert len(below) == 1
    (b,) = below.itertuples()
    n = (np.isclose(fin["load"], b.load) & (fin["engine"] == b.engine)).sum()
    says(CLICK, f"The searches' precision ({100 * cf.loc['click', 'precision']:.1f}% for click, "
                f"{100 * cf.loc['fastclick', 'precision']:.1f}% for fastclick) is the gap between the answer and the "
                "failing load above it, as a share of that load, where each search stopped; it is not how closely a "
                f"second search would agree: below its answer, one of {b.engine}'s {n} trials at {pps(b.load)} pps lost "
                f"{sig2(b.loss)}%")


def test_click_generator_in_the_sweeps():
    t = trials(CLICK)
    lim = t[t["limited"]]
    by = lim.groupby("engine").size()
    ceiling = t["offered_pps"].max()
    says(CLICK, f"In the sweeps, {by['fastclick']} of fastclick's trials and {by['fastclick-dpdk']} of "
                f"fastclick-dpdk's were generator-limited, all at {pps(lim['offered_pps'].min())} pps "
                f"({frac(lim['offered_pps'].min(), ceiling)} of the ceiling) or more")
    # the generator fell short with other routers too: linux's and click's searches at the ceiling, fastclick's sweep
    p = search_trials(D / CLICK)
    (top,) = click_searches()["generator_ceiling_pps"].unique()
    sl = p[p["generator_limited"] & (p["engine"] != "fastclick-dpdk")]
    assert np.allclose(sl["load"], top) and set(sl["engine"]) == {"linux", "click"}
    ls, cs = sl[sl["engine"] == "linux"], sl[sl["engine"] == "click"]
    assert (ls["phase"] == "short").sum() == 1 and len(cs) == 1 and (cs["phase"] == "short").all()
    says(CLICK, "The router's receive work may slow the generator here too, and fastclick-dpdk's answer stays a lower "
                "bound: what this testbed could offer it, not what it can forward",
         f"The generator fell short with other routers too (linux's search: its short trial and "
         f"{(ls['phase'] == 'final').sum()} full-duration trials at the ceiling; click's: its short trial at the "
         f"ceiling; {by['fastclick']} of fastclick's sweep trials); why is not in these files")


def test_click_sweeps():
    t = trials(CLICK)
    a = {x.experiment: x for x in stats.assess(datasets.read(D / CLICK).trials)}
    s = per_load(CLICK)
    dpdk, fc = s.loc[DPDK], s.loc[FC]
    ceiling = t["offered_pps"].max()
    says(CLICK, f"**The sweeps** (ceiling {pps(ceiling)} pps)")
    # fastclick-dpdk: every load has delivered trials, none lost a packet; generator-limited only at the top
    d = t[t["experiment"] == DPDK]
    assert len(dpdk) == d["offered_pps"].nunique() and (dpdk["worst"] == 0).all()
    dl = d[d["limited"]]
    top = dpdk.index.max()
    assert set(dl["offered_pps"]) == {top} == {ceiling}
    lossy = dl[dl["lost"] > 0]
    assert lossy["drops"].str.fullmatch(r"dut:FromDPDKDevice@4\.hw_dropped=\d+").all()
    says(CLICK, f"lost no packet in any trial the generator delivered, up to the ceiling, {pps(top)} pps, where "
                f"{len(dl)} of the {(d['offered_pps'] == top).sum()} trials were generator-limited; no trial below it "
                f"was. {len(lossy)} of those {len(dl)} lost packets at its AF_XDP ring, {span(lossy['loss'], sig2)}%.")
    vd, vf = a[DPDK].verdict, a[FC].verdict
    assert not vd.good and vf.good
    says(CLICK, f"Its verdict is **{vd.label}** ({vd.why.split(' (to do')[0]})")
    # fastclick's verdict: the candidate saturation point is the load after the first failing one
    o = a[FC].summary.sort_values("offered_pps")["offered_pps"].to_numpy()
    first, cand = vf.pdr_index, vf.candidate_index
    vp = vf.params
    assert cand == first + 1 == vf.saturation_index and vf.tir[cand] < 0 < vp.eta * vp.entry_multiplier
    assert all(x < vp.eta for x in vf.tir[cand + 1:]) and o[first - 1] == a[FC].pdr.load
    says(CLICK, f"**`fastclick` (AF_PACKET)** is **{vf.label}**: its mean loss first passed {vp.pdr:.1%} at "
                f"{pps(o[first])} pps, and at the next load, {pps(o[cand])} pps, the candidate saturation point, its "
                f"TIR was {vf.tir[cand]:.2f} (below {vp.eta * vp.entry_multiplier:g}; negative: the throughput fell), "
                f"and at every later load below {vp.eta:g} (Terms, above)")
    # fastclick: lossless loads, then the crossing
    fz = fc[fc["worst"] == 0].index
    assert (fz == fc.index[:len(fz)]).all()
    pdr = a[FC].pdr
    assert pdr.status == "found" and pdr.load == fz.max()
    nxt = fc.index[fc.index.get_loc(pdr.load) + 1]
    at = t[(t["experiment"] == FC) & (t["offered_pps"] == nxt)]
    assert fc.loc[nxt, "loss"] > stats.PDR_FRACTION and not at["disturbed"].any() and not at["limited"].any()
    over = (at["loss"] > stats.PDR_FRACTION).sum()
    says(CLICK, f"It lost nothing up to {pps(fz.max())} pps ({frac(fz.max(), ceiling)} of the ceiling), with its CPU "
                f"{100 * fc.loc[fz.max(), 'cpu']:.0f}% busy. At {pps(nxt)} pps {(at['lost'] > 0).sum()} of "
                f"{len(at)} trials lost packets ({span(at[at['lost'] > 0]['loss'], sig2)}%; {over} of them more than "
                f"0.5%), a mean of {sig2(fc.loc[nxt, 'loss'])}%, so the sweep's PDR@0.5% is {pps(pdr.load)} pps")
    # the throughput from the crossing on: it peaked at the first failing load, then fell at every load
    summ = a[FC].summary.set_index("offered_pps")
    thr = summ["throughput_pps"]
    peak = thr.idxmax()
    after = fc.index[fc.index.get_loc(peak) + 1:]
    assert peak == nxt and (np.diff(thr[[peak, *after]].to_numpy()) < 0).all()
    k = fc.loc[after, "n"]
    few = [(int(k[x]), x) for x in after if k[x] < 10]
    assert few
    says(CLICK, f"The throughput (offered × (1 - mean loss)) peaked there, at {pps(thr[peak])} pps at {pps(peak)} pps "
                f"offered, and fell to {', '.join(pps(thr[x]) for x in after[:-1])} and {pps(thr[after[-1]])} pps at "
                f"{', '.join(pps(x) for x in after[:-1])} and {pps(after[-1])} pps ({few[0][0]} trials the generator "
                f"could offer at {pps(few[0][1])} pps"
                + "".join(f", {m} at {pps(x)}" for m, x in few[1:])
                + f"), with its CPU {span(fc.loc[after, 'cpu'], pct())}% busy")
    # the search against the sweep: the search's answer between the sweep's PDR and its first failing load
    r = click_searches().set_index("engine")
    f = r.loc["fastclick", "lower_pps"]
    assert pdr.load < f < nxt
    says(CLICK, f"The fastclick search's answer ({pps(f)} pps) lies between the sweep's PDR@0.5% ({pps(pdr.load)} pps) "
                f"and its first failing load ({pps(nxt)} pps): the two agree, at the sweep's coarser step")
    # near the knee: lossless trials and trials over the PDR fraction at one load, in the sweep and in the search
    zero = (at["lost"] == 0).sum()
    assert zero > 0 and over > 0
    p = search_trials(D / CLICK)
    k3 = at_load(p, "fastclick", r.loc["fastclick", "upper_pps"])
    assert (k3["lost"] == 0).any() and (k3["loss"] > stats.PDR_FRACTION).any()
    n3 = int(r.loc["fastclick", "final_trials"])
    assert len(k3) == n3 and len(at) == 10
    assert (at["duration_s"] == 1.0).all() and (k3["duration"] == 1.0).all()
    says(CLICK, "comes and goes from one 1-second trial to the next")
    says(CLICK, f"at {pps(nxt)} pps {zero} of the sweep's {len(at)} trials lost nothing and {over} lost more than 0.5%, "
                f"and the search's {len(k3)} trials at {pps(r.loc['fastclick', 'upper_pps'])} pps, its failing load, "
                f"lost {pcts(k3['loss'])}",
         f"A search decides a load on its {n3} trials, {-(-n3 // 2)} of which must pass, where the sweep takes the mean "
         f"loss of {len(at)}")
    assert (t["engine_forwarded"] == t["rx"]).all()
    says(CLICK, "In every trial, FastClick's own counter (`out/sent.count`) equals the sink's count")


def test_click_trial_validation():
    t = trials(CLICK)
    sup = pd.read_csv(D / CLICK / "superseded_trials.csv")
    w = why(sup)
    # every attempt set aside was disturbed, by the validation's own rule
    assert sup["disturbed"].all() and (w != "").all()
    again = t[t["attempt"] > 1]
    assert len(sup) == (t["attempt"] - 1).sum()
    per = again.groupby("engine").size()
    steal, stop, lag = (w.str.contains("steal"), w.str.contains("router CPU stopped"),
                        w.str.contains("generator fell behind"))
    says(CLICK, f"In the sweeps, {len(again)} of the {len(t)} trials were measured again (fastclick "
                f"{per['fastclick']}, fastclick-dpdk {per['fastclick-dpdk']}), and {len(sup)} attempts were set aside: "
                f"{steal.sum()} with steal above 2% ({span(sup[steal]['steal'], pct(1))}%), {stop.sum()} with a stop of "
                f"the router's CPU and {count(lag.sum())} with a lag of the generator"
                + (" (two reasons for some)" if steal.sum() + stop.sum() + lag.sum() > len(sup) else ""))
    dist = t[t["disturbed"]]
    wd = why(dist)
    assert len(dist) == 1 and (wd == f"steal {dist['steal'].iloc[0]:.1%} > 2.0%").all()
    assert (dist["attempt"] == 1 + TrialValidation().max_repeats).all() and dist["limited"].all()
    (x,) = dist.itertuples()
    says(CLICK, f"One kept sweep trial is still `disturbed` after {x.attempt} attempts, for steal "
                f"({100 * x.steal:.1f}%): {x.engine}'s at {pps(x.offered_pps)} pps, generator-limited too, so the "
                "statistics leave it out; no other kept sweep trial had steal above 2%")
    assert (why(t[~t["disturbed"]]) == "").all() and (t[~t["disturbed"]]["steal"] <= 0.02).all()
    # the statistics' runs are the delivered trials
    runs = stats.summaries([x for x in stats.assess(datasets.read(D / CLICK).trials)])
    assert runs["runs"].sum() == (~t["limited"]).sum()
    # the searches
    p = search_trials(D / CLICK)
    ssup = pd.read_csv(D / CLICK / "superseded_search_trials.csv")
    sw = why(ssup)
    assert ssup["disturbed"].all() and (sw != "").all()
    assert len(ssup) == (p["attempt"] - 1).sum()
    per = ssup.groupby("engine", sort=False).size()
    order = click_searches()["engine"].tolist()
    assert per.index.tolist() == [e for e in order if e in per.index]
    st, sp, lg = (sw.str.contains("steal"), sw.str.contains("router CPU stopped"), sw.str.contains("generator fell behind"))
    says(CLICK, f"In the searches, {(p['attempt'] > 1).sum()} of the {len(p)} trials were measured again, and "
                f"{len(ssup)} attempts were set aside ("
                + ", ".join(f"{e} {n}" for e, n in per.items())
                + f"): {st.sum()} with steal above 2%, {sp.sum()} with a stop of the router's CPU, {lg.sum()} with a lag "
                  "of the generator")
    dist = p[p["disturbed"]]
    dn = dist.groupby("engine").size()
    assert (dist["steal"] > 0.02).all() and (dist["attempt"] == 1 + TrialValidation().max_repeats).all()
    assert dn.to_dict() == {"linux": 1, "ebpf": dn["ebpf"]}
    ld = dist[dist["engine"] == "linux"]
    assert np.isclose(ld["load"].iloc[0], click_searches().set_index("engine").loc["linux", "upper_pps"])
    says(CLICK, f"{WORDS[len(dist)]} kept search trials are still `disturbed` after "
                f"{1 + TrialValidation().max_repeats} attempts, each with steal above 2%: linux's at "
                f"{pps(ld['load'].iloc[0])} pps and {WORDS[dn['ebpf']].lower()} of ebpf's")
    judged = p[~p["generator_limited"]]
    assert (judged["passed"] == (judged["loss"] <= stats.PDR_FRACTION)).all()
    says(CLICK, "A trial kept `disturbed` counts like any other: it fails when it lost more than 0.5%")


def test_click_where_the_loss_went():
    t = trials(CLICK)
    d = datasets.read_drops([D / CLICK])
    loss = d[d["counted_as"] == "loss"]
    assert (loss["place"] == "dut").all()
    by = loss.assign(engine=loss["experiment"].str.removesuffix("-single-flow")).groupby(["engine", "reason"])["packets"].sum()
    lost = t.groupby("engine")["lost"].sum()
    assert (t["lost_unexplained"] == 0).all() and (t["trace_missed"] == 0).all()
    assert (by.groupby(level=0).sum() == lost).all()
    assert sorted(by["fastclick"].index) == ["CPU_BACKLOG", "FromDevice@4.kernel_drops", "out/Queue@1.drops"]
    says(CLICK, f"(`drops.csv`, all {len(t)} trials)",
         f"fastclick lost {pps(lost['fastclick'])} packets: {pps(by['fastclick', 'FromDevice@4.kernel_drops'])} at its "
         f"capture socket", f"{pps(by['fastclick', 'out/Queue@1.drops'])} in its output `Queue`")
    fc = d[d["experiment"] == FC]
    backlog = fc[(fc["reason"] == "CPU_BACKLOG") & (fc["counted_as"] == "loss")]
    assert fc[fc["reason"] == "g0.tx_dropped"]["packets"].sum() == backlog["packets"].sum()
    says(CLICK, f"and {pps(backlog['packets'].sum())} refused at the router CPU's input backlog (`dut CPU_BACKLOG`, in "
                f"{len(backlog)} trials at {pps(backlog['offered_pps'].min())} pps or more; the generator's "
                f"`g0.tx_dropped` counted the same number)")
    assert by["fastclick-dpdk"].index.tolist() == ["FromDPDKDevice@4.hw_dropped"]
    ctx = d[(d["experiment"] == DPDK) & (d["reason"] == "d0.rx_dropped")]["packets"].sum()
    assert ctx == lost["fastclick-dpdk"]
    dl = t[(t["experiment"] == DPDK) & (t["lost"] > 0)]
    assert dl["limited"].all() and dl["offered_pps"].nunique() == 1
    says(CLICK, f"fastclick-dpdk lost {pps(lost['fastclick-dpdk'])}, all counted by FromDPDKDevice's `hw_dropped`",
         f"the DUT veth's `d0.rx_dropped` counted the same number), in {len(dl)} trials at "
         f"{pps(dl['offered_pps'].iloc[0])} pps, all generator-limited",
         "No packet is unexplained, and the drop tracer missed none")
    r = click_searches().set_index("engine")
    assert r.loc["fastclick-dpdk", "lower_pps"] > r.loc[["click", "fastclick"], "lower_pps"].max()
    says(CLICK, f"FastClick on DPDK carries the most of the user-space routers here (at least "
                f"{pps(r.loc['fastclick-dpdk', 'lower_pps'])} pps, limited by the generator, against "
                f"{pps(r.loc['fastclick', 'lower_pps'])} on AF_PACKET and {pps(r.loc['click', 'lower_pps'])} for Click)")
    # the searches of click and fastclick lost at their capture socket, all but a few
    p = search_trials(D / CLICK)
    cf = p[p["engine"].isin(["click", "fastclick"]) & (p["lost"] > 0)]
    counters = cf["drops"].str.split(";").explode().str.split("=", expand=True)
    counters[1] = counters[1].astype(int)
    counters["engine"] = cf.loc[counters.index, "engine"]
    total = counters.groupby("engine")[1].sum()
    assert (total == cf.groupby("engine")["lost"].sum()).all()
    rest = counters[counters[0] != "dut:FromDevice@4.kernel_drops"]
    assert (rest.groupby("engine")[1].sum() < total / 100).all()
    where = {e: sorted(set(x[0])) for e, x in rest.groupby("engine")}
    assert where == {"click": ["dut:CPU_BACKLOG"], "fastclick": ["dut:CPU_BACKLOG"]}
    rs = rest.groupby("engine")[1].sum()
    says(CLICK, "In their searches both AF_PACKET routers lost nearly all their packets at the capture socket (FromDevice's "
                f"`kernel_drops`): click all but {pps(rs['click'])} of {pps(total['click'])} and fastclick all but "
                f"{pps(rs['fastclick'])} of {pps(total['fastclick'])}, which the router CPU's input backlog refused")


def test_click_compared_with_halting(halting):
    was = click_searches(halting).set_index("engine")
    now = click_searches().set_index("engine")
    assert was.index.tolist() == now.index.tolist()
    ot, oa, oc = assessed(halting)
    nt, na, nc = assessed(D / CLICK)
    olde, newe = datasets.read_experiments(halting), datasets.read_experiments(D / CLICK)
    # then the CPUs halted: the record says nothing of idle CPUs, and the code had no latency request
    assert not olde["pinning"].str.contains("idle CPUs").any() and newe["pinning"].str.contains(IDLE_POLL, regex=False).all()
    assert "cpu_dma_latency" not in committed("lib/routerlab/testbed.py", CODE_ALONE)
    # those records name no code version: the commit that brought the files in says which code measured them
    assert (olde["versions"].fillna("") == "").all()
    msg = brought_in(f"datasets/{CLICK}/trials.csv", HALTING)
    assert f"code {CODE_ALONE[:7]}" in msg and "with the machine to itself" in msg
    ostart = pd.to_datetime(ot["started_at"])
    day = set(ostart.dt.strftime("%Y-%m-%d")) | set(pd.to_datetime(was["when"]).dt.strftime("%Y-%m-%d"))
    assert len(day) == 1
    # the same validation settings; the same kernel and engines
    assert notes(olde) == notes(newe)
    assert olde["kernel"].iloc[0] == newe["kernel"].iloc[0]
    assert olde["engine_version"].iloc[0] == newe["engine_version"].iloc[0]
    says(CLICK, "## Compared with idle CPUs halting")
    says(CLICK, f"The files measured with idle CPUs halting (in git at commit {HALTING[:7]}) were measured on "
                f"{day.pop()} (code {CODE_ALONE[:7]}, before the change), with the machine to itself too, the same "
                "trial validation thresholds (not the same rule: below), kernel and engines: the searches "
                f"{when_range(was['when'])} UTC and the sweeps' trials {when_range(ot['started_at'])} UTC")
    s_was, s_now = was["generator_ceiling_pps"].iloc[0], now["generator_ceiling_pps"].iloc[0]
    says(CLICK, f"The generator's ceiling, measured alone, was {pps(s_was)} pps for the searches then ({pps(s_now)} "
                f"now) and {pps(oc)} pps for the sweeps ({pps(nc)} now)")

    def form(e):
        return {x.experiment: x.command.split(" --out ")[0].replace(f"--ceiling {x.generator_ceiling_pps:.0f}", "")
                for x in e.itertuples()}
    assert form(olde) == form(newe)
    assert set(ot["offered_pps"]).isdisjoint(set(nt["offered_pps"]))
    says(CLICK, "The sweeps ran the same fractions of each ceiling, so the same fraction is a different load.")
    says(CLICK, "| engine | PDR@0.5%, halting | PDR@0.5%, polling |")
    for e in now.index:
        says(CLICK, f"| {e} | {was.loc[e, 'answer']} | {now.loc[e, 'answer']} |")
    # steal then and now
    thr = 0.02
    osw, oss = attempts(halting), attempts(halting, "search")
    nsw, nss = attempts(D / CLICK), attempts(D / CLICK, "search")
    says(CLICK, f"Steal: halting, {(oss['steal'] > thr).sum()} of the {len(oss)} search attempts and "
                f"{(osw['steal'] > thr).sum()} of the {len(osw)} sweep attempts had steal above 2% (at most "
                f"{100 * oss['steal'].max():.1f}% and {100 * osw['steal'].max():.1f}%); polling, "
                f"{(nss['steal'] > thr).sum()} of {len(nss)} and {(nsw['steal'] > thr).sum()} of {len(nsw)} (at most "
                f"{100 * nss['steal'].max():.1f}% and {100 * nsw['steal'].max():.1f}%)")
    says(CLICK, f"The sweep attempts' mean steal was {100 * osw['steal'].mean():.2f}% then and "
                f"{100 * nsw['steal'].mean():.2f}% now, the search attempts' {100 * oss['steal'].mean():.2f}% and "
                f"{100 * nss['steal'].mean():.2f}%")
    # repeats and disturbed trials
    op, np_ = search_trials(halting), search_trials(D / CLICK)
    says(CLICK, f"Measured again: {(ot['attempt'] > 1).sum()} of the {len(ot)} sweep trials then "
                f"({len(osw) - len(ot)} attempts set aside), {(nt['attempt'] > 1).sum()} now ({len(nsw) - len(nt)}); "
                f"{(op['attempt'] > 1).sum()} of the {len(op)} search trials then ({len(oss) - len(op)} set aside), "
                f"{(np_['attempt'] > 1).sum()} of {len(np_)} now ({len(nss) - len(np_)})")
    says(CLICK, f"Kept `disturbed`: {ot['disturbed'].sum()} sweep trials and {op['disturbed'].sum()} search trials then, "
                f"{nt['disturbed'].sum()} and {np_['disturbed'].sum()} now. These counts are not like for like: the "
                "validation's rule changed between the two runs (below), and the change can only flag more attempts, "
                "never fewer.")
    # linux and ebpf: then set by trials kept disturbed; now higher, each set by a failing load
    pw, pn = datasets.search_pdr(was.reset_index()).set_index("engine"), datasets.search_pdr(now.reset_index()).set_index("engine")
    for e in ("linux", "ebpf"):
        u = at_load(op, e, was.loc[e, "upper_pps"])
        assert not pw.loc[e, "at_least"] and u[~u["passed"]]["disturbed"].any()
        assert not pn.loc[e, "at_least"] and now.loc[e, "upper_pps"] > 0
        assert now.loc[e, "lower_pps"] > was.loc[e, "lower_pps"]
    # but trials not kept disturbed failed loads too, then: loads that failed on three such trials
    fin = op[(op["phase"] == "final") & op["engine"].isin(["linux", "ebpf"])]
    clean = {}
    for (e, load), g in fin.groupby(["engine", "load"], sort=False):
        for k in range(0, len(g), 3):  # a load tried again is three trials more, in order
            three = g.iloc[k:k + 3]
            if len(three) == 3 and not three["disturbed"].any() and three["passed"].sum() < 2:
                clean.setdefault(e, []).append(three)
    assert sorted(clean) == ["ebpf", "linux"] and len(clean["ebpf"]) == 2 and len(clean["linux"]) == 1
    (e_low, e_top), (l_top,) = sorted(clean["ebpf"], key=lambda x: x["load"].iloc[0]), clean["linux"]
    assert np.isclose(e_top["load"].iloc[0], s_was) and np.isclose(l_top["load"].iloc[0], s_was)
    assert (e_top["steal"] <= thr).all() and (e_low["steal"] <= thr).all()

    def losses(x):
        return ", ".join(f"{sig2(v)}%" for v in x["loss"].iloc[:-1]) + f" and {sig2(x['loss'].iloc[-1])}%"

    says(CLICK, f"linux's and ebpf's answers then ({pps(was.loc['linux', 'lower_pps'])} and "
                f"{pps(was.loc['ebpf', 'lower_pps'])} pps) were set where trials kept `disturbed` failed, but trials not "
                f"kept `disturbed` failed loads too. ebpf failed {pps(e_low['load'].iloc[0])} pps on three such trials "
                f"(they lost {losses(e_low)}, with steal at most {100 * e_low['steal'].max():.1f}%), "
                f"{100 * e_low['load'].iloc[0] / now.loc['ebpf', 'lower_pps']:.0f}% of its answer now, and "
                f"{pps(s_was)} pps, the ceiling then, on three more ({losses(e_top)}). linux failed {pps(s_was)} pps on "
                f"three such trials too ({losses(l_top)}). Now both answers are higher, each set by a failing load: "
                f"{pps(now.loc['linux', 'lower_pps'])} and {pps(now.loc['ebpf', 'lower_pps'])} pps.")
    # click and fastclick: the routers' own answers both times, set by trials not kept disturbed
    for e in ("click", "fastclick"):
        assert not pw.loc[e, "at_least"] and not pn.loc[e, "at_least"]
        for p, s in ((op, was), (np_, now)):
            u = at_load(p, e, s.loc[e, "upper_pps"])
            assert (~u["passed"] & ~u["disturbed"]).sum() >= 2
    rw = was.loc["fastclick", "lower_pps"] / was.loc["click", "lower_pps"]
    rn = now.loc["fastclick", "lower_pps"] / now.loc["click", "lower_pps"]
    assert rn < 1 < rw
    dc = now.loc["click", "lower_pps"] / was.loc["click", "lower_pps"] - 1
    df = now.loc["fastclick", "lower_pps"] / was.loc["fastclick", "lower_pps"] - 1
    assert dc > 0 > df
    says(CLICK, f"FastClick on AF_PACKET against Click: {rw:.2f} then, {rn:.2f} now. Click's answer rose "
                f"{100 * dc:.0f}% ({pps(was.loc['click', 'lower_pps'])} → {pps(now.loc['click', 'lower_pps'])} pps), "
                f"fastclick's fell {100 * -df:.0f}% ({pps(was.loc['fastclick', 'lower_pps'])} → "
                f"{pps(now.loc['fastclick', 'lower_pps'])} pps)")
    # fastclick-dpdk's search: a lower bound both times
    assert pw.loc["fastclick-dpdk", "bound"] == pn.loc["fastclick-dpdk", "bound"] == "limited by the generator"

    def full_limited(p):
        x = p[(p["engine"] == "fastclick-dpdk") & (p["phase"] == "final")]
        return int(x["generator_limited"].sum()), len(x)

    says(CLICK, "Both answers were the routers' own both times, set by trials not kept `disturbed`; which of the two "
                "carries more on AF_PACKET differs from run to run, and these files cannot say why")
    (lo, no), (ln, nn) = full_limited(op), full_limited(np_)
    says(CLICK, f"fastclick-dpdk's search was limited by the generator both times: {lo} of its {no} full-duration trials "
                f"were generator-limited then, {ln} of {nn} now")
    # fastclick's sweep then and now
    vo, vn = oa[FC], na[FC]
    assert vo.verdict.good and vn.verdict.good
    assert np.isclose(vo.pdr.load / oc, vn.pdr.load / nc)
    says(CLICK, f"fastclick's sweep was **{vo.verdict.label}** both times, its PDR@0.5% at "
                f"{frac(vo.pdr.load, oc)} of each ceiling: {pps(vo.pdr.load)} pps then, {pps(vn.pdr.load)} now")

    def lossy_below(tt, load):
        x = tt[(tt["experiment"] == FC) & (tt["offered_pps"] <= load) & (tt["lost"] > 0)]
        return x

    before = lossy_below(ot, vo.pdr.load)
    ofirst = before["offered_pps"].min()
    nfirst = nt[(nt["experiment"] == FC) & (nt["lost"] > 0)]["offered_pps"].min()
    assert lossy_below(nt, vn.pdr.load).empty and ofirst < vn.pdr.load < nfirst
    says(CLICK, f"Halting, it lost packets from {pps(ofirst)} pps on ({len(before)} trials at or below its PDR load, "
                f"{before['disturbed'].sum()} of them kept `disturbed`); polling, it lost none up to "
                f"{pps(vn.pdr.load)} pps")
    to, tn = vo.summary.set_index("offered_pps")["throughput_pps"], vn.summary.set_index("offered_pps")["throughput_pps"]
    says(CLICK, f"Its throughput peaked at {pps(to.max())} pps then (at {pps(to.idxmax())} pps offered) and at "
                f"{pps(tn.max())} pps now (at {pps(tn.idxmax())})")
    # fastclick-dpdk's sweep: generator-limited trials then and now
    def dlim(tt):
        x = tt[(tt["experiment"] == DPDK)]
        return x, x[x["generator_limited"].astype(bool)]

    assert not oa[DPDK].verdict.good and not na[DPDK].verdict.good
    assert oa[DPDK].verdict.pdr_index is None and na[DPDK].verdict.pdr_index is None
    says(CLICK, f"fastclick-dpdk's sweep was **{oa[DPDK].verdict.label}** both times (saturation not reached in the "
                "tested range)")
    (ox, ol), (nx, nl) = dlim(ot), dlim(nt)
    # then: every trial from one load on was limited (and one more below); now: only at the highest load
    whole = ox.groupby("offered_pps")["generator_limited"].apply(lambda x: x.astype(bool).all())
    from_ = whole[whole].index.min()
    assert whole[whole.index >= from_].all() and len(ol[ol["offered_pps"] < from_]) > 0
    assert set(nl["offered_pps"]) == {nx["offered_pps"].max()}
    says(CLICK, f"It had {len(ol)} generator-limited trials then, every trial at {pps(from_)} pps and above "
                f"({frac(from_, oc)} of that ceiling) among them, and {len(nl)} now, all at "
                f"{pps(nx['offered_pps'].max())} pps")
    od, nd = ox[~ox["generator_limited"].astype(bool)], nx[~nx["generator_limited"].astype(bool)]
    assert (od["lost"] == 0).all() and (nd["lost"] == 0).all()
    ntop = nd[nd["offered_pps"] == nx["offered_pps"].max()]
    says(CLICK, "Neither time did it lose a packet in a trial the generator delivered: then none was delivered above "
                f"{pps(od['offered_pps'].max())} pps, now {len(ntop)} were at {pps(nx['offered_pps'].max())} pps")
    assert (ot["lost_unexplained"] == 0).all() and (nt["lost_unexplained"] == 0).all()
    says(CLICK, "No lost packet was unexplained then or now.")
    # what else differed between the two runs
    t0, t1 = min(ostart.min(), pd.to_datetime(was["when"]).min()), ostart.max()
    n0 = min(pd.to_datetime(nt["started_at"]).min(), pd.to_datetime(now["when"]).min())
    n1 = pd.to_datetime(nt["started_at"]).max()
    assert t0.hour >= 18 and 12 <= n0.hour and n1.hour < 18  # evening then, afternoon now
    says(CLICK, f"the day and the time of day: {t0:%Y-%m-%d} in the evening ({t0:%H:%M}-{t1:%H:%M} UTC) then, "
                f"{n0:%Y-%m-%d} in the afternoon ({n0:%H:%M}-{n1:%H:%M} UTC) now;")
    # the validation's rule: totals of stops and lags since two commits between the two codes, and the lag's rule
    added = {"0a3e268": "adds up the stops and the lags", "8d9f526": "Only stops and lags over 5 ms are added up",
             LAG_CODE[:7]: "however short the lag is next to the router's queue"}
    root = str(D.parent)
    for c, what in added.items():
        committed("lib/routerlab/validation.py", c)  # skips where the history is not here
        assert subprocess.run(["git", "-C", root, "merge-base", "--is-ancestor", c, LAG_CODE]).returncode == 0
        assert subprocess.run(["git", "-C", root, "merge-base", "--is-ancestor", c, CODE_ALONE]).returncode == 1
        assert what in subprocess.run(["git", "-C", root, "log", "-1", "--format=%s", c], capture_output=True,
                                      text=True, check=True).stdout
    assert "cpu_stopped_ms" not in committed("lib/routerlab/validation.py", CODE_ALONE)
    val = committed("lib/routerlab/validation.py", LAG_CODE)
    assert "total = max(longest, " in val and "total = max(lag, " in val  # a total is never less than the longest
    assert "if accounts(lag, total, queue=None):" in val  # a lag need not outlast the queue
    assert "STOP_TOTAL_OVER_MS = 5.0" in committed("lib/routerlab/traffic.py", LAG_CODE)
    cols = ("cpu_stops", "gen_lagged_ms")
    for f in ("trials.csv", "search_trials.csv", "superseded_trials.csv", "superseded_search_trials.csv"):
        assert not set(cols) & set(pd.read_csv(halting / f, nrows=0).columns), f
        assert set(cols) <= set(pd.read_csv(D / CLICK / f, nrows=0).columns), f
    says(CLICK, f"the code: {CODE_ALONE[:7]} then, {LAG_CODE[:7]} now. Since 0a3e268 and 8d9f526 the trial "
                "validation also adds up the router CPU's stops and the generator's lags over 5 ms and holds the total "
                "against a loss, where before it held only the longest (the halting files have no "
                f"`{cols[0]}` or `{cols[1]}` columns), and since {LAG_CODE[:7]} it holds a lag against a loss however "
                "short the lag is next to the router's queue. A total is never less than the longest, and a lag no "
                "longer needs to outlast the queue, so the rule now can only flag more attempts, never fewer;")
    (gw,), (gn,) = olde["generator"].unique(), newe["generator"].unique()
    bw, bn = gw.split(" (")[0], gn.split(" (")[0]
    assert bw != bn and gw.split(" (")[1] == gn.split(" (")[1]
    says(CLICK, f"the generator's build: {bw} then, {bn} now.")


def test_click_set_up():
    e = datasets.read_experiments(D / CLICK)
    t = trials(CLICK)
    # the engines as the measured commit pins them
    pins = committed("lib/routerlab/data/engine-builds.yaml", LAG_CODE)
    commit = dict(re.findall(r"repository: (\S+)\n\s+commit: ([0-9a-f]{12})", pins))
    assert e["engine_version"].iloc[0] == f"tbarbette/fastclick@{commit['tbarbette/fastclick']}"
    (dpdk,) = re.findall(r"DPDK ([\d.]+) from Debian", pins)
    says(CLICK, f"FastClick tbarbette/fastclick@{commit['tbarbette/fastclick']} and Click "
                f"kohler/click@{commit['kohler/click']} as `routerlab engines install` builds them, FastClick against "
                f"Debian's dpdk-dev {dpdk}")
    # frames, batches, CPUs
    assert (e["frame_size"] == 64).all() and e["notes"].str.contains("batches of 32").all()
    n = notes(e)
    assert "AF_PACKET" in n["fastclick"]["capture"] and "af_xdp" in n["fastclick-dpdk"]["capture"]
    says(CLICK, f"({e['frame_size'].iloc[0]}-byte frames, one flow, one route)",
         f"`fastclick` is AF_PACKET with batches of 32, running `{n['fastclick']['click_config']}`",
         f"`fastclick-dpdk` is DPDK's af_xdp driver on the veth links, running `{n['fastclick-dpdk']['click_config']}`")
    gen, router = re.fullmatch(r"generator CPU (\d); router receive CPU (\d); .*", e["pinning"].iloc[0]).groups()
    cpus = int(re.fullmatch(r".* x(\d+)", e["cpu"].iloc[0]).group(1))
    says(CLICK, f"`-l {router}`, so it polls CPU {router} (100% busy by design)",
         f"The generator and the router share this machine's {cpus} vCPUs: the generator is pinned to CPU {gen} and "
         f"the router to CPU {router}, but the")
    assert (t[t["engine"] == "fastclick-dpdk"]["cpu_load"] == 1.0).all()
    assert stats.PDR_FRACTION == 0.005
    says(CLICK, "PDR@0.5% searches of linux, ebpf, click, fastclick and fastclick-dpdk, all in one run")
    assert click_searches()["engine"].tolist() == ["linux", "ebpf", "click", "fastclick", "fastclick-dpdk"]
    # the measurement docs/testbed.md gives for fastclick-dpdk's generator
    if (D.parent / "docs").is_dir():
        doc = " ".join((D.parent / "docs" / "testbed.md").read_text().split())
        placement = doc.split("## CPU placement")[1].split("## ")[0]
        (day,) = set(re.findall(r"Measured on (\d{4}-\d\d-\d\d)", placement))
        says(CLICK, f"a possible cause, which these files do not show, was measured on {day} (`docs/testbed.md`, "
                    "\"CPU placement\")")
        idle = doc.split("## Idle CPUs poll")[1].split("## ")[0]
        assert "bench idle" in idle and "alternating" in idle
        says(CLICK, "Nor can they show that the machine ran nothing else either time. The same change measured side by "
                    "side, alternating, is in `docs/testbed.md` (\"Idle CPUs poll\")")
