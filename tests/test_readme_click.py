"""Every number the README of testbed-click states, recomputed from its files (see readme_checks)."""

import re
import subprocess

import numpy as np
import pandas as pd
import pytest

from routerlab import datasets, stats
from routerlab.validation import TrialValidation
from routerlab import defaults, traffic
from readme_checks import (CODE_ALONE, D, HALTING, POLL_CODE, POLL_COMPARISON_CODE, assessed, committed, pct, per_load,
                           pps, previous_files, says, sig2, span, trials, when_range, why, attempts, search_trials,
                           statistics_paragraph_exists)


CLICK = "testbed-click"
DPDK, FC = "fastclick-dpdk-single-flow", "fastclick-single-flow"
WORDS = {1: "One", 2: "Two", 3: "Three", 4: "Four", 5: "Five"}
#: Every file of the dataset, as the files measured with idle CPUs halting (commit HALTING) held them too.
FILES = ("trials.csv", "experiments.csv", "search_results.csv", "search_trials.csv", "drops.csv",
         "superseded_trials.csv", "superseded_search_trials.csv")
#: The datasets ``scripts/remeasure-testbed.sh OUT`` measured after this one, in the same run.
LATER = ("click-course", "testbed-bmv2", "testbed-veth")
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


@pytest.fixture
def halting(tmp_path):
    """The files this data replaced, measured with idle CPUs halting (commit HALTING), in a folder of their own."""
    return previous_files(CLICK, tmp_path, files=FILES, commit=HALTING)


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
    src = committed("lib/routerlab/testbed.py", POLL_CODE)
    assert 'os.environ.get("ROUTERLAB_CPU_IDLE", "poll")' in src
    assert pd.to_datetime(r["when"]).max() < pd.to_datetime(t["started_at"]).min()
    says(CLICK, "The searches write no record of their own: their testbeds poll unless told otherwise, and the sweeps, "
                "run by the same script in the same environment right after them, recorded that theirs polled")
    days = set(pd.to_datetime(t["started_at"]).dt.strftime("%Y-%m-%d")) | set(pd.to_datetime(r["when"]).dt.strftime("%Y-%m-%d"))
    assert len(days) == 1
    assert (e["versions"] == f"routerlab: 0.1.0 (git {POLL_CODE[:7]})").all()
    says(CLICK, f"**When:** {days.pop()}: the searches {when_range(r['when'])} UTC (when each one finished), the "
                f"sweeps' trials {when_range(t['started_at'])} UTC (code: commit {POLL_CODE[:7]})")
    # the validation the README describes is the one of the commit measured
    assert "def why_disturbed" in committed("lib/routerlab/validation.py", POLL_CODE)
    # the script, as it was at that commit: with no dataset named it measures all five, testbed-click first,
    # after measuring the ceiling once, which it gives to this dataset's sweeps
    script = committed("scripts/remeasure-testbed.sh", POLL_CODE)
    blocks = re.findall(r"^if want ([\w-]+); then", script, flags=re.M)
    (every,) = re.findall(r'^ALL="([^"]+)"', script, flags=re.M)
    assert blocks == every.split() and blocks[0] == CLICK and blocks[1:4] == list(LATER)
    assert 'WANT=" ${*:-$ALL} "' in script
    assert script.count("measuring.generator_ceiling()") == 1
    assert script.index("measuring.generator_ceiling()") < script.index(f"if want {CLICK}; then")
    block = script.split(f"if want {CLICK}; then")[1].split("\nfi\n")[0]
    assert block.count('--ceiling "$C"') == 1 and "for e in fastclick fastclick-dpdk" in block
    (bench,) = [x for x in block.splitlines() if "bench engines" in x]
    assert "--ceiling" not in bench  # bench engines measures its own
    # the other datasets of that run were measured after this one, with the same code; the comparison,
    # the script's fifth, by a separate run with other code
    last = max(pd.to_datetime(t["started_at"]).max(), pd.to_datetime(r["when"]).max())
    for other in LATER:
        assert pd.to_datetime(datasets.read(D / other).trials["started_at"]).min() > last, other
        assert (datasets.read_experiments(D / other)["versions"] == e["versions"].iloc[0]).all(), other
    same = sorted(x.parent.name for x in D.glob("*/experiments.csv")
                  if (pd.read_csv(x)["versions"] == e["versions"].iloc[0]).all())
    assert same == sorted([CLICK, *LATER])
    (fifth,) = [x for x in every.split() if x not in same]
    assert (datasets.read_experiments(D / fifth)["versions"] == f"routerlab: 0.1.0 (git {POLL_COMPARISON_CODE[:7]})").all()
    says(CLICK, f"`scripts/remeasure-testbed.sh OUT` measured this dataset first of the {WORDS[len(same)].lower()} "
                f"measured at {POLL_CODE[:7]} (then {', '.join(LATER[:-1])} and {LATER[-1]}; the {fifth} was measured "
                f"by a separate run, at {POLL_COMPARISON_CODE[:7]}), with the machine to itself")
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
         "longer than the probe's period and than the router's queue lasts at that load",
         f"A probe on the router's CPU wakes every {float(n['fastclick']['probe_period_ms']):.0f} ms",
         f"the queue is {n['fastclick']['router_queue_packets']} packets for fastclick (the CPU backlog that feeds "
         f"its socket) and {n['fastclick-dpdk']['router_queue_packets']} for fastclick-dpdk (its AF_XDP ring)")
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
    src = committed("lib/routerlab/search.py", POLL_CODE)
    assert "ok = (not lim) and passes(kind, tx, rx, pdr)" in src and "return 2 * good >= n" in src
    # generator-limited, as the measured code has it
    gen = committed("lib/routerlab/traffic.py", POLL_CODE)
    assert f"GENERATOR_TOLERANCE = {traffic.GENERATOR_TOLERANCE}" in gen
    assert 'limited = res["blocked"] > 0 or (requested > 0 and offered < GENERATOR_TOLERANCE * requested)' in gen
    assert "our own socket is full" in committed("lib/routerlab/csrc/rlgen.c", POLL_CODE)
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
                + f", and fastclick-dpdk {per.iloc[-1].hi} of {per.iloc[-1].n}")
    # most of it in fastclick-dpdk's search, at the loads where the generator fell short
    dh = hi[hi["engine"] == "fastclick-dpdk"]
    assert len(dh) > len(hi) / 2 and (dh["generator_limited"].astype(bool)).all()
    says(CLICK, f"{len(dh)} of the {len(hi)} were fastclick-dpdk's, all in trials the generator could not deliver")
    t = trials(CLICK)
    a = attempts(D / CLICK)
    ahi = a[a["steal"] > thr]
    assert a["steal"].median() < thr / 2
    says(CLICK, f"Of the {len(a)} sweep attempts (the {len(t)} kept trials and the {len(a) - len(t)} set aside), "
                f"{len(ahi)} had steal above {thr:.0%} (at most {100 * a['steal'].max():.1f}%); the mean steal over "
                f"all {len(a)} was {100 * a['steal'].mean():.2f}%, and half of them had "
                f"{100 * a['steal'].median():.1f}% or less")


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
    top = bounded[bounded["bound"] == "passed at the ceiling"]
    gen = bounded[bounded["bound"] == "limited by the generator"]
    assert top.index.tolist() == ["linux", "ebpf"] and gen.index.tolist() == ["fastclick-dpdk"]
    assert np.allclose(top["pdr_pps"], ceiling)
    says(CLICK, f"{WORDS[len(bounded)]} answers are lower bounds, and a lower bound is never set against another answer "
                "as a ratio")
    own = pdr.index[~pdr["at_least"]].tolist()
    assert own == ["click", "fastclick"]
    says(CLICK, f"The other {WORDS[len(own)].lower()} answers, click's and fastclick's, are the routers' own: no trial "
                "at their failing loads was generator-limited")
    p = search_trials(D / CLICK)
    s = r.set_index("engine")
    for e in own:
        assert not at_load(p, e, s.loc[e, "upper_pps"])["generator_limited"].any()
    # the limited trials of the search
    lim = p[p["generator_limited"]]
    n = lim.groupby("engine").size()
    assert set(n.index) == {"fastclick-dpdk", "click", "fastclick"}
    for e in ("click", "fastclick"):
        x = lim[lim["engine"] == e]
        assert len(x) == 1 and x["phase"].iloc[0] == "short" and np.isclose(x["load"].iloc[0], ceiling)
    # fastclick-dpdk's: full-duration trials, and short ones of which one at the ceiling
    dl = lim[lim["engine"] == "fastclick-dpdk"]
    full, short = dl[dl["phase"] == "final"], dl[dl["phase"] == "short"]
    assert len(full) + len(short) == len(dl) and len(short) == 2
    at_top = np.isclose(short["load"], ceiling)
    assert at_top.sum() == 1
    says(CLICK, f"Of the {len(p)} search trials {len(lim)} were generator-limited: click {n['click']} and fastclick "
                f"{n['fastclick']}, each its search's short trial at the ceiling, and fastclick-dpdk "
                f"{n['fastclick-dpdk']} ({len(full)} full-duration trials, and {len(short)} short ones at "
                f"{pps(short['load'][~at_top].iloc[0])} pps and at the ceiling)")


def test_click_linux_and_ebpf_passed_at_the_ceiling():
    r = click_searches().set_index("engine")
    p = search_trials(D / CLICK)
    ceiling = r["generator_ceiling_pps"].iloc[0]
    parts = {}
    for e in ("linux", "ebpf"):
        assert np.isnan(r.loc[e, "upper_pps"]) and np.isclose(r.loc[e, "lower_pps"], ceiling)
        x = p[(p["engine"] == e)]
        # the search went straight to the ceiling: a short trial at 1% of it, one at it, then the final trials there
        assert set(np.round(x["load"] / ceiling, 6)) == {0.01, 1.0}
        final = x[(x["phase"] == "final")]
        assert np.allclose(final["load"], ceiling) and len(final) == r.loc[e, "final_trials"]
        assert not final["generator_limited"].any() and not final["disturbed"].any()
        parts[e] = final
    lf, ef = parts["linux"], parts["ebpf"]
    need = -(-len(ef) // 2)
    assert ef["passed"].sum() >= need and lf["passed"].all()
    says(CLICK, f"linux and ebpf passed the search's ceiling ({pps(ceiling)} pps), the only load their searches tried "
                "besides a short trial at 1% of it, so no failing load bounds their answers: each carries at least the "
                "generator's ceiling")
    lossy = lf[lf["lost"] > 0]
    assert len(lossy) == 1 and (lossy["drops"] == f"dut:CPU_BACKLOG={lossy['lost'].iloc[0]}").all()
    says(CLICK, f"linux's {len(lf)} trials there lost {', '.join(sig2(x) for x in lf['loss'].iloc[:-1])} and "
                f"{sig2(lf['loss'].iloc[-1])}% (at the router CPU's input backlog)")
    failed = ef[~ef["passed"]]
    assert len(failed) == 1 and ef["drops"].str.fullmatch(r"dut:NOT_SPECIFIED=\d+").all()
    says(CLICK, f"ebpf's lost {', '.join(sig2(x) for x in ef['loss'].iloc[:-1])} and {sig2(ef['loss'].iloc[-1])}% "
                f"({len(ef) - len(failed)} of {len(ef)} passed, as a load must; the kernel dropped the packets with no "
                "reason given, `NOT_SPECIFIED`)")


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
    # the failing load: every trial generator-limited, so the generator decided it
    n = int(r.loc["fastclick-dpdk", "final_trials"])
    assert len(at) == n and (at["phase"] == "final").all() and at["generator_limited"].all()
    says(CLICK, f"fastclick-dpdk's failing load ({pps(upper)} pps) failed on {WORDS[n].lower()} generator-limited "
                f"trials: they offered {pps(at['tx'].min())}-{pps(at['tx'].max())} pps, and a generator-limited "
                "trial counts as failed, so the generator bounds this answer (`routerlab.stats.generator_bound`, from "
                "`search_trials.csv`)")
    says(CLICK, f"{len(lim)} of the search's {len(full)} full-duration trials were generator-limited, offering "
                f"{pps(lim['tx'].min())}-{pps(lim['tx'].max())} pps where more was asked")
    # the answer: a load passed with a generator-limited trial among its three
    ans = at_load(p, "fastclick-dpdk", r.loc["fastclick-dpdk", "lower_pps"])
    assert len(ans) == n and ans["passed"].sum() == n - 1 and ans[~ans["passed"]]["generator_limited"].all()
    # its own loss, in the kept trials the generator delivered
    own = dpdk[~dpdk["generator_limited"] & (dpdk["lost"] > 0)]
    assert len(own) == 1 and own["passed"].all() and (own["loss"] <= stats.PDR_FRACTION).all()
    assert own["drops"].str.fullmatch(r"dut:FromDPDKDevice@4\.hw_dropped=\d+").all()
    says(CLICK, f"In the kept trials the generator delivered, the router lost packets once: {pps(own['lost'].iloc[0])} "
                f"({sig2(own['loss'].iloc[0])}%) at {pps(own['load'].iloc[0])} pps, at its AF_XDP ring "
                "(FromDPDKDevice's `hw_dropped`), and that trial passed")
    # the generator-limited full-duration trials: losses at the same ring, after the generator's lags
    ll = lim[lim["lost"] > 0]
    assert ll["drops"].str.fullmatch(r"dut:FromDPDKDevice@4\.hw_dropped=\d+").all()
    assert (ll["gen_late_ms"] > ll["queue_ms"]).all()
    at_ans = ll[np.isclose(ll["load"], r.loc["fastclick-dpdk", "lower_pps"])]
    assert len(at_ans) == 1
    says(CLICK, f"In {len(ll)} of the {len(lim)} generator-limited full-duration trials it lost packets at the same "
                f"ring, {span(ll['loss'], sig2)}%, after the generator had fallen behind by "
                f"{span(ll['gen_late_ms'], lambda x: f'{x:.0f}')} ms (a generator that falls behind sends what it owes "
                f"at once, a burst); one of them was at the answer, {pps(at_ans['load'].iloc[0])} pps: "
                f"{pps(at_ans['tx'].iloc[0])} packets offered, {sig2(at_ans['loss'].iloc[0])}% lost",
         "These files cannot separate the router's own limit from the bursts after a lag")
    # the attempts set aside at a load the generator delivered
    ss = pd.read_csv(D / CLICK / "superseded_search_trials.csv")
    sd = ss[(ss["engine"] == "fastclick-dpdk") & ~ss["generator_limited"].astype(bool) & (ss["lost"] > 0)]
    sw = why(sd)
    assert sw.str.startswith("generator fell behind").all() and sd["offered_pps"].nunique() == 1
    says(CLICK, f"{WORDS[len(sd)]} attempts at {pps(sd['offered_pps'].iloc[0])} pps lost "
                f"{' and '.join(sig2(x) + '%' for x in sd['lost'] / sd['tx'])} while the generator fell behind by "
                f"{' and '.join(f'{x:.0f}' for x in sd['gen_late_ms'])} ms (its queue lasts "
                f"{sd['queue_ms'].iloc[0]:.1f} ms), and were measured again")
    says(CLICK, f"So its PDR is at least {pps(r.loc['fastclick-dpdk', 'lower_pps'])} pps, and these files cannot say "
                "how far above")


def test_click_click_and_fastclick(halting):
    r = click_searches().set_index("engine")
    p = search_trials(D / CLICK)
    parts = []
    for e in ("click", "fastclick"):
        u = at_load(p, e, r.loc[e, "upper_pps"])
        bad = u[~u["passed"]]
        assert len(u) == 3 and not u["disturbed"].any() and len(bad) >= 2
        ans = at_load(p, e, r.loc[e, "lower_pps"])
        assert not ans["disturbed"].any() and ans["passed"].sum() >= 2
        parts.append((r.loc[e, "upper_pps"], bad, ans))
    (cu, cb, ca), (fu, fb, fa) = parts
    says(CLICK, "No trial at their failing loads or at their answers was kept `disturbed`: "
                f"click failed {pps(cu)} pps with {WORDS[len(cb)].lower()} trials losing "
                f"{', '.join(sig2(x) + '%' for x in sorted(cb['loss'])[:-1])} and {sig2(sorted(cb['loss'])[-1])}%, "
                f"fastclick failed {pps(fu)} pps with {WORDS[len(fb)].lower()} losing "
                f"{' and '.join(sig2(x) + '%' for x in sorted(fb['loss']))}")
    cfail = ca[~ca["passed"]]
    assert len(cfail) == 1 and (fa["lost"] == 0).all()
    says(CLICK, f"click passed its answer, {pps(r.loc['click', 'lower_pps'])} pps, on 2 of 3 trials (the third lost "
                f"{sig2(cfail['loss'].iloc[0])}%), fastclick its own, {pps(r.loc['fastclick', 'lower_pps'])} pps, on "
                "three lossless trials")
    ratio = r.loc["fastclick", "lower_pps"] / r.loc["click", "lower_pps"]
    w = click_searches(halting).set_index("engine")
    was = w.loc["fastclick", "lower_pps"] / w.loc["click", "lower_pps"]
    assert ratio < 1 < was  # which carries more differs from run to run
    says(CLICK, f"On the same AF_PACKET capture, FastClick's batches of 32 carried {ratio:.2f} times what Click carried "
                f"in this run ({was:.2f} with the CPUs halting, compared at the end); which carries more differs from "
                "run to run")
    # precision: the relative gap between the answer and the failing load above it
    cf = r.loc[["click", "fastclick"]]
    assert np.allclose(cf["precision"], (cf["upper_pps"] - cf["lower_pps"]) / cf["upper_pps"])
    # a trial that failed below fastclick's answer
    sf = p[(p["engine"] == "fastclick") & (p["phase"] == "final") & (p["load"] < r.loc["fastclick", "lower_pps"])]
    below = sf[~sf["passed"]]
    assert below["load"].nunique() == 1 and len(below) == 1
    n = (np.isclose(sf["load"], below["load"].iloc[0])).sum()
    says(CLICK, f"The searches' precision ({100 * cf.loc['click', 'precision']:.1f}% for click, "
                f"{100 * cf.loc['fastclick', 'precision']:.1f}% for fastclick) is the gap between the answer and the "
                "failing load above it, as a share of that load, where each search stopped; it is not how closely a "
                f"second search would agree: below its answer, one of fastclick's {n} trials at "
                f"{pps(below['load'].iloc[0])} pps lost {sig2(below['loss'].iloc[0])}%")


def test_click_generator_in_the_sweeps():
    t = trials(CLICK)
    lim = t[t["limited"]]
    by = lim.groupby("engine").size()
    ceiling = t["offered_pps"].max()
    says(CLICK, f"In the sweeps, {by['fastclick']} of fastclick's trials and {by['fastclick-dpdk']} of "
                f"fastclick-dpdk's were generator-limited, all at {pps(lim['offered_pps'].min())} pps "
                f"({frac(lim['offered_pps'].min(), ceiling)} of the ceiling) or more")
    # the generator fell short with click and fastclick too: each search's one short trial at the ceiling,
    # and fastclick's sweep trials
    p = search_trials(D / CLICK)
    (top,) = click_searches()["generator_ceiling_pps"].unique()
    sl = p[p["generator_limited"] & p["engine"].isin(["click", "fastclick"])]
    assert sorted(sl["engine"]) == ["click", "fastclick"] and (sl["phase"] == "short").all()
    assert np.allclose(sl["load"], top)
    assert "click" not in by.index
    says(CLICK, "The router's receive work may slow the generator here too, and fastclick-dpdk's answer stays a lower "
                "bound: what this testbed could offer it, not what it can forward",
         "The generator fell short with click and fastclick too (each search's short trial at the ceiling, and "
         f"{by['fastclick']} of fastclick's sweep trials); why is not in these files")


def test_click_sweeps():
    t = trials(CLICK)
    a = {x.experiment: x for x in stats.assess(datasets.read(D / CLICK).trials)}
    s = per_load(CLICK)
    dpdk, fc = s.loc[DPDK], s.loc[FC]
    lim = t[t["limited"]].groupby(["experiment", "offered_pps"]).size()
    ceiling = t["offered_pps"].max()
    says(CLICK, f"**The sweeps** (ceiling {pps(ceiling)} pps)")
    # fastclick-dpdk: every load has delivered trials; nothing lost in them below the top load
    assert len(dpdk) == t[t["experiment"] == DPDK]["offered_pps"].nunique()
    zero = dpdk[dpdk["worst"] == 0].index
    top = dpdk.index.max()
    assert (zero == dpdk.index[:-1]).all()
    below = zero.max()
    say_lim = {x: lim.loc[(DPDK, x)] for x in dpdk.index if (DPDK, x) in lim.index}
    assert sorted(say_lim) == [below, top]
    says(CLICK, f"lost no packet in any trial the generator delivered up to {pps(below)} pps "
                f"({frac(below, ceiling)} of the ceiling), where {say_lim[below]} of the 10 trials was generator-limited")
    tt = t[(t["experiment"] == DPDK) & (t["offered_pps"] == top) & ~t["limited"]]
    lossy = tt[tt["lost"] > 0]
    assert len(lossy) == 1 and not lossy["disturbed"].any()
    assert lossy["drops"].str.fullmatch(r"dut:FromDPDKDevice@4\.hw_dropped=\d+").all()
    says(CLICK, f"At {pps(top)} pps, the ceiling, {say_lim[top]} trials were generator-limited, and {len(lossy)} of the "
                f"{len(tt)} delivered lost packets: {pps(lossy['lost'].iloc[0])} ({sig2(lossy['loss'].iloc[0])}%) at its "
                f"AF_XDP ring, a mean of {sig2(dpdk.loc[top, 'loss'])}% over the {int(dpdk.loc[top, 'n'])}")
    vd, vf = a[DPDK].verdict, a[FC].verdict
    assert not vd.good and vf.good
    says(CLICK, f"Its verdict is **{vd.label}** ({vd.why.split(' (to do')[0]})")
    # fastclick's verdict: the candidate saturation point is the load after the first failing one
    o = a[FC].summary.sort_values("offered_pps")["offered_pps"].to_numpy()
    first, cand = vf.pdr_index, vf.candidate_index
    vp = vf.params
    assert cand == first + 1 == vf.saturation_index and vf.tir[cand] < vp.eta * vp.entry_multiplier
    assert all(x < vp.eta for x in vf.tir[cand + 1:]) and o[first - 1] == a[FC].pdr.load
    says(CLICK, f"**`fastclick` (AF_PACKET)** is **{vf.label}**: its mean loss first passed {vp.pdr:.1%} at "
                f"{pps(o[first])} pps, and at the next load, {pps(o[cand])} pps, the candidate saturation point, its "
                f"TIR was {vf.tir[cand]:.2f} (below {vp.eta * vp.entry_multiplier:g}), and at every later load below "
                f"{vp.eta:g} (Terms, above)")
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
    # the throughput from the crossing on
    summ = a[FC].summary.set_index("offered_pps")
    thr = summ["throughput_pps"]
    peak = thr.idxmax()
    after = fc.index[fc.index.get_loc(peak) + 1:]
    assert peak > nxt and (np.diff(thr[[peak, *after]].to_numpy()) < 0).all()
    k = fc.loc[after, "n"]
    assert (k.iloc[:-1] == 10).all() and k.iloc[-1] < 10
    says(CLICK, f"The throughput (offered × (1 - mean loss)) peaked at {pps(thr[peak])} pps at {pps(peak)} pps offered "
                f"and fell to {', '.join(pps(thr[x]) for x in after[:-1])} and {pps(thr[after[-1]])} pps at "
                f"{', '.join(pps(x) for x in after[:-1])} and {pps(after[-1])} pps ({k.iloc[-1]} trials the generator "
                f"could offer), with its CPU {span(fc.loc[after, 'cpu'], pct())}% busy")
    # the search against the sweep
    r = click_searches().set_index("engine")
    f = r.loc["fastclick", "lower_pps"]
    assert pdr.load < nxt < f
    p = search_trials(D / CLICK)
    sp = p[(p["engine"] == "fastclick") & (p["phase"] == "final") & (p["load"] < nxt)]
    assert sp.empty
    says(CLICK, f"The fastclick search's answer ({pps(f)} pps) lies above the sweep's first failing load ({pps(nxt)} pps): "
                f"{100 * (f / nxt - 1):.1f}% above it. The two disagree there")
    # near the knee: lossless trials and trials over the PDR fraction at one load, in the sweep and in the search
    zero = (at["lost"] == 0).sum()
    assert zero > 0 and over > 0
    sf = p[(p["engine"] == "fastclick") & (p["phase"] == "final")]
    knee = sf[sf["load"] > nxt]["load"].min()
    k3 = sf[np.isclose(sf["load"], knee)].sort_values("loss")
    assert (k3["lost"] == 0).any() and (k3["loss"] > stats.PDR_FRACTION).any() and knee < f
    n3 = int(r.loc["fastclick", "final_trials"])
    assert len(k3) == n3 and len(at) == 10
    assert (at["duration_s"] == 1.0).all() and (k3["duration"] == 1.0).all()
    says(CLICK, "comes and goes from one 1-second trial to the next")
    says(CLICK, f"at {pps(nxt)} pps {zero} of the sweep's {len(at)} trials lost nothing and {over} lost more than 0.5%, "

                f"and the search's {len(k3)} trials at {pps(knee)} pps lost "
                f"{', '.join(sig2(x) for x in k3['loss'].iloc[:-1])} and {sig2(k3['loss'].iloc[-1])}%",
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
                f"the router's CPU and {lag.sum()} with a lag of the generator"
                + (" (two reasons for some)" if steal.sum() + stop.sum() + lag.sum() > len(sup) else ""))
    dist = t[t["disturbed"]]
    wd = why(dist)
    assert (wd.str.startswith("steal")).all() and (dist["attempt"] == 1 + TrialValidation().max_repeats).all()
    dn = dist.groupby("engine").size()
    says(CLICK, f"{WORDS[len(dist)]} kept sweep trials are still `disturbed` after {dist['attempt'].iloc[0]} attempts, "
                f"all for steal ({span(dist['steal'], pct(1))}%): {dn['fastclick']} of fastclick's, "
                f"{dn['fastclick-dpdk']} of fastclick-dpdk's")
    assert (why(t[~t["disturbed"]]) == "").all() and (t[~t["disturbed"]]["steal"] <= 0.02).all()
    says(CLICK, "The statistics count them, as they count every kept trial the generator delivered; no other kept "
                "sweep trial had steal above 2%")
    # the statistics' runs are the delivered trials, disturbed ones included
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
    assert len(dist) == 1 and dist["generator_limited"].all() and (dist["steal"] > 0.02).all()
    says(CLICK, f"One kept search trial is still `disturbed`: fastclick-dpdk's at {pps(dist['load'].iloc[0])} pps "
                f"(steal {100 * dist['steal'].iloc[0]:.1f}%), generator-limited too")
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
    dd, dg = dl[~dl["limited"]], dl[dl["limited"]]
    assert len(dd) == len(dg) == 1
    says(CLICK, f"fastclick-dpdk lost {pps(lost['fastclick-dpdk'])}, all counted by FromDPDKDevice's `hw_dropped`",
         "the DUT veth's `d0.rx_dropped` counted the same number), in "
         f"{len(dl)} trials at {pps(dl['offered_pps'].min())} pps: {pps(dd['lost'].iloc[0])} in a trial the generator "
         f"delivered and {pps(dg['lost'].iloc[0])} in a generator-limited one",
         "No packet is unexplained, and the drop tracer missed none")
    assert dl["offered_pps"].nunique() == 1
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
    assert where == {"click": ["dut:out/Queue@1.drops"], "fastclick": ["dut:CPU_BACKLOG"]}
    rs = rest.groupby("engine")[1].sum()
    says(CLICK, "In their searches both AF_PACKET routers lost nearly all their packets at the capture socket (FromDevice's "
                f"`kernel_drops`): click all but {pps(rs['click'])} of {pps(total['click'])}, which its output `Queue` "
                f"dropped, fastclick all but {pps(rs['fastclick'])} of {pps(total['fastclick'])}, refused at the "
                "router CPU's input backlog")


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
    says(CLICK, f"It replaces a run of the same commands on {next(iter(day))} with idle CPUs halting (compared at the "
                "end)")
    says(CLICK, f"The replaced files (in git at commit {HALTING[:7]}) were measured on {day.pop()} with idle CPUs "
                f"halting (code {CODE_ALONE[:7]}, before the change), with the machine to itself too, the same trial "
                f"validation thresholds (not the same rule: below), kernel and engines: the searches "
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
    # linux and ebpf: then set by trials kept disturbed, now passed at the ceiling
    pw, pn = datasets.search_pdr(was.reset_index()).set_index("engine"), datasets.search_pdr(now.reset_index()).set_index("engine")
    for e in ("linux", "ebpf"):
        u = at_load(op, e, was.loc[e, "upper_pps"])
        assert not pw.loc[e, "at_least"] and u[~u["passed"]]["disturbed"].any()
        assert pn.loc[e, "bound"] == "passed at the ceiling" and now.loc[e, "lower_pps"] > was.loc[e, "lower_pps"]
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
    assert np.isclose(e_top["load"].iloc[0], s_was) and np.isclose(l_top["load"].iloc[0], s_was) and s_was > s_now
    assert (e_top["steal"] <= thr).all() and (e_low["steal"] <= thr).all()

    def losses(x):
        return ", ".join(f"{sig2(v)}%" for v in x["loss"].iloc[:-1]) + f" and {sig2(x['loss'].iloc[-1])}%"

    says(CLICK, f"linux's and ebpf's answers then ({pps(was.loc['linux', 'lower_pps'])} and "
                f"{pps(was.loc['ebpf', 'lower_pps'])} pps) were set where trials kept `disturbed` failed, but trials not "
                f"kept `disturbed` failed loads too. ebpf failed {pps(e_low['load'].iloc[0])} pps on three such trials "
                f"(they lost {losses(e_low)}, with steal at most {100 * e_low['steal'].max():.1f}%), "
                f"{100 * e_low['load'].iloc[0] / now.loc['ebpf', 'lower_pps']:.0f}% of the load it now passes, and "
                f"{pps(s_was)} pps, the ceiling then, on three more ({losses(e_top)}). linux failed {pps(s_was)} pps, "
                f"above this run's ceiling, on three such trials too ({losses(l_top)}). Polling, both passed the "
                f"ceiling, {pps(s_now)} pps.")
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
    otop = ox[ox["offered_pps"] < oc]["offered_pps"].max()
    ntop = nx["offered_pps"].max()
    assert abs(otop / ntop - 1) < 0.02
    ot_at, nt_at = ol[ol["offered_pps"] == otop], nl[nl["offered_pps"] == ntop]
    says(CLICK, f"It had {len(ol)} generator-limited trials then and {len(nl)} now. At about the "
                f"same load, {pps(otop)} pps then and {pps(ntop)} now, {len(ot_at)} of 10 were generator-limited then "
                f"and {len(nt_at)} of 10 now")
    assert (ox[~ox["generator_limited"].astype(bool)]["lost"] == 0).all()
    nd = nx[~nx["generator_limited"].astype(bool) & (nx["lost"] > 0)]
    assert len(nd) == 1
    says(CLICK, "Then it lost no packet in a trial the generator delivered (none was delivered above "
                f"{pps(ox[~ox['generator_limited'].astype(bool)]['offered_pps'].max())} pps); now it lost "
                f"{pps(nd['lost'].iloc[0])} in one, at {pps(nd['offered_pps'].iloc[0])} pps")
    assert (ot["lost_unexplained"] == 0).all() and (nt["lost_unexplained"] == 0).all()
    says(CLICK, "No lost packet was unexplained then or now.")
    # what else differed between the two runs
    t0, t1 = min(ostart.min(), pd.to_datetime(was["when"]).min()), ostart.max()
    n0 = min(pd.to_datetime(nt["started_at"]).min(), pd.to_datetime(now["when"]).min())
    n1 = pd.to_datetime(nt["started_at"]).max()
    assert t0.hour >= 18 and n1.hour < 12  # evening then, morning now
    says(CLICK, f"the day and the time of day: {t0:%Y-%m-%d} in the evening ({t0:%H:%M}-{t1:%H:%M} UTC) then, "
                f"{n0:%Y-%m-%d} in the morning ({n0:%H:%M}-{n1:%H:%M} UTC) now;")
    # the validation's rule: totals of stops and lags since two commits between the two codes
    added = {"0a3e268": "adds up the stops and the lags", "8d9f526": "Only stops and lags over 5 ms are added up"}
    for c, what in added.items():
        committed("lib/routerlab/validation.py", c)  # skips where the history is not here
        root = str(D.parent)
        assert subprocess.run(["git", "-C", root, "merge-base", "--is-ancestor", c, POLL_CODE]).returncode == 0
        assert subprocess.run(["git", "-C", root, "merge-base", "--is-ancestor", c, CODE_ALONE]).returncode == 1
        assert what in subprocess.run(["git", "-C", root, "log", "-1", "--format=%s", c], capture_output=True,
                                      text=True, check=True).stdout
    assert "cpu_stopped_ms" not in committed("lib/routerlab/validation.py", CODE_ALONE)
    val = committed("lib/routerlab/validation.py", POLL_CODE)
    assert "total = max(longest, " in val and "total = max(lag, " in val  # a total is never less than the longest
    assert "STOP_TOTAL_OVER_MS = 5.0" in committed("lib/routerlab/traffic.py", POLL_CODE)
    cols = ("cpu_stops", "gen_lagged_ms")
    for f in ("trials.csv", "search_trials.csv", "superseded_trials.csv", "superseded_search_trials.csv"):
        assert not set(cols) & set(pd.read_csv(halting / f, nrows=0).columns), f
        assert set(cols) <= set(pd.read_csv(D / CLICK / f, nrows=0).columns), f
    says(CLICK, f"the code: {CODE_ALONE[:7]} then, {POLL_CODE[:7]} now. Since {' and '.join(added)} the trial "
                "validation also adds up the router CPU's stops and the generator's lags over 5 ms and holds the total "
                "against a loss, where before it held only the longest (the halting files have no "
                f"`{cols[0]}` or `{cols[1]}` columns). A total is never less than the longest, so the rule now can only "
                "flag more attempts, never fewer;")
    (gw,), (gn,) = olde["generator"].unique(), newe["generator"].unique()
    bw, bn = gw.split(" (")[0], gn.split(" (")[0]
    assert bw != bn and gw.split(" (")[1] == gn.split(" (")[1]
    says(CLICK, f"the generator's build: {bw} then, {bn} now.")


def test_click_set_up():
    e = datasets.read_experiments(D / CLICK)
    t = trials(CLICK)
    # the engines as the measured commit pins them
    pins = committed("lib/routerlab/data/engine-builds.yaml", POLL_CODE)
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
        says(CLICK, f"it was measured on {day} (`docs/testbed.md`, \"CPU placement\")")
        idle = doc.split("## Idle CPUs poll")[1].split("## ")[0]
        assert "bench idle" in idle and "alternating" in idle
        says(CLICK, "Nor can they show that the machine ran nothing else either time. The same change measured side by "
                    "side, alternating, is in `docs/testbed.md` (\"Idle CPUs poll\")")

