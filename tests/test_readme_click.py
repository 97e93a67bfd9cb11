"""Every number the README of testbed-click states, recomputed from its files (see readme_checks)."""

import re

import numpy as np
import pandas as pd
import pytest

from routerlab import datasets, stats
from routerlab.validation import TrialValidation
from readme_checks import (CODE, CODE_ALONE, D, MORNING, assessed, committed, pct, per_load, pps, previous_files, says,
                           sig2, span, trials, when_range)


CLICK = "testbed-click"
DPDK, FC = "fastclick-dpdk-single-flow", "fastclick-single-flow"
WORDS = {1: "One", 2: "Two", 3: "Three", 4: "Four", 5: "Five"}
#: Every file of the dataset, as the morning run (commit MORNING) held them too.
FILES = ("trials.csv", "experiments.csv", "search_results.csv", "search_trials.csv", "drops.csv",
         "superseded_trials.csv", "superseded_search_trials.csv")


def click_searches() -> pd.DataFrame:
    return datasets.read_searches([D / CLICK])


def search_trials(folder=D / CLICK) -> pd.DataFrame:
    p = pd.read_csv(folder / "search_trials.csv")
    return p.assign(loss=p["lost"] / p["tx"])


def notes(e: pd.DataFrame) -> dict:
    """Each sweep's notes (``key=value; ...``) as a dict, by engine."""
    return {row.engine: dict(kv.split("=", 1) for kv in row.notes.split("; ")) for row in e.itertuples()}


def why(rows: pd.DataFrame) -> pd.Series:
    """What disturbed each row, in the validation's words ("" for nothing)."""
    v = TrialValidation()
    return pd.Series([v.why_disturbed(r) for r in rows.to_dict("records")], index=rows.index, dtype=str)


def says_command(command: str):
    """The README's code block gives ``command``, its lines continued with ``\\``."""
    text = " ".join((D / CLICK / "README.md").read_text().replace("\\\n", " ").split())
    assert " ".join(command.split()) in text, f"datasets/{CLICK}/README.md does not give the command: {command}"


def frac(load, ceiling) -> str:
    return f"{load / ceiling:.2g}"


def at_load(p: pd.DataFrame, engine: str, load: float) -> pd.DataFrame:
    """A search's trials at one load (full duration and short alike)."""
    return p[(p["engine"] == engine) & np.isclose(p["load"], load)]


@pytest.fixture
def morning(tmp_path):
    """The files this data replaced, the morning run's (commit MORNING), in a folder of their own."""
    return previous_files(CLICK, tmp_path, files=FILES, commit=MORNING)


def attempts(folder, kind="sweep") -> pd.DataFrame:
    """Every attempt of the sweeps (or the searches): the kept trials and the ones set aside."""
    if kind == "sweep":
        return pd.concat([pd.read_csv(folder / "trials.csv"), pd.read_csv(folder / "superseded_trials.csv")])
    return pd.concat([pd.read_csv(folder / "search_trials.csv"), pd.read_csv(folder / "superseded_search_trials.csv")])


def test_click_where_when_how():
    e = datasets.read_experiments(D / CLICK)
    r = click_searches()
    t = trials(CLICK)
    for col in ("kernel", "cpu", "pinning", "generator_ceiling_pps", "engine_version"):
        assert e[col].nunique() == 1
    cpus = int(re.fullmatch(r".* x(\d+)", e["cpu"].iloc[0]).group(1))
    says(CLICK, f"kernel {e['kernel'].iloc[0]}, {cpus} vCPUs ({e['cpu'].iloc[0]})", f"`{e['pinning'].iloc[0]}`",
         f"FastClick {e['engine_version'].iloc[0]}")
    days = set(pd.to_datetime(t["started_at"]).dt.strftime("%Y-%m-%d")) | set(pd.to_datetime(r["when"]).dt.strftime("%Y-%m-%d"))
    assert len(days) == 1
    says(CLICK, f"**When:** {days.pop()}: the searches {when_range(r['when'])} UTC (when each one finished), the "
                f"sweeps' trials {when_range(t['started_at'])} UTC (code: commit {CODE_ALONE[:7]})")
    # the validation the README describes is the one of the commit measured
    assert "def why_disturbed" in committed("lib/routerlab/validation.py", CODE_ALONE)
    # the script, as it was at that commit: it measures the ceiling once, then testbed-click first, given that ceiling
    script = committed("scripts/remeasure-testbed.sh", CODE_ALONE)
    blocks = re.findall(r"^if want ([\w-]+); then", script, flags=re.M)
    assert blocks[0] == CLICK and {"click-course", "testbed-bmv2", "comparison"} <= set(blocks)
    assert script.count("measuring.generator_ceiling()") == 1
    assert script.index("measuring.generator_ceiling()") < script.index(f"if want {CLICK}; then")
    block = script.split(f"if want {CLICK}; then")[1].split("\nfi\n")[0]
    assert block.count('--ceiling "$C"') == 1 and "for e in fastclick fastclick-dpdk" in block
    (bench,) = [x for x in block.splitlines() if "bench engines" in x]
    assert "--ceiling" not in bench  # bench engines measures its own
    says(CLICK, "`scripts/remeasure-testbed.sh OUT testbed-click click-course testbed-bmv2 comparison` measured this "
                "dataset first")
    # the other three datasets of that run were measured after this one
    last = max(pd.to_datetime(t["started_at"]).max(), pd.to_datetime(r["when"]).max())
    for other in ("click-course", "testbed-bmv2", "comparison"):
        assert pd.to_datetime(datasets.read(D / other).trials["started_at"]).min() > last, other
    assert r["generator_ceiling_pps"].nunique() == 1
    ceiling = e["generator_ceiling_pps"].iloc[0]
    assert ceiling != r["generator_ceiling_pps"].iloc[0]
    says(CLICK, "The script measures the generator's ceiling once when it starts, with "
                f"`measuring.generator_ceiling()`, and gives it to the sweeps: {pps(ceiling)} pps",
         f"`bench engines` measures the ceiling itself at its start ({pps(r['generator_ceiling_pps'].iloc[0])} pps)")
    # the commands, as run with --out datasets/testbed-click
    engines = e["engine"].tolist()
    for row in e.itertuples():
        head, out = row.command.split(" --out ")
        assert " " not in out  # --out is the last argument
        says_command(head.replace(f"--engine {row.engine} ", "--engine E ") + " --out datasets/testbed-click")
    assert all(f"--ceiling {ceiling:.0f} " in c for c in e["command"])
    says(CLICK, f"# E = {', '.join(engines)}")
    p = search_trials()
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


def test_click_steal():
    thr = float(notes(datasets.read_experiments(D / CLICK))["fastclick"]["steal_threshold"])
    r = click_searches()
    k = search_trials()
    s = attempts(D / CLICK, "search")
    hi = s[s["steal"] > thr]
    per = s.groupby("engine", sort=False).agg(n=("steal", "size"), hi=("steal", lambda x: (x > thr).sum()))
    per = per.loc[r["engine"]]
    assert r.sort_values("when")["engine"].iloc[-1] == "fastclick-dpdk" and per.loc["fastclick-dpdk", "hi"] == 0
    says(CLICK, f"Of the {len(s)} search attempts (the {len(k)} kept trials and the {len(s) - len(k)} set aside), "
                f"{len(hi)} had steal above {thr:.0%} (at most {100 * s['steal'].max():.1f}%): "
                + ", ".join(f"{e} {x.hi} of {x.n}" for e, x in per.iloc[:-1].iterrows())
                + f", and fastclick-dpdk, searched last, none of {per.loc['fastclick-dpdk', 'n']}")
    t = trials(CLICK)
    a = attempts(D / CLICK)
    ahi = a[a["steal"] > thr]
    at = pd.to_datetime(a["started_at"]).dt.floor("min")
    minutes = pd.date_range(at.min(), at.max(), freq="min")
    struck = set(pd.to_datetime(ahi["started_at"]).dt.floor("min"))
    assert struck == set(minutes)
    says(CLICK, f"Of the {len(a)} sweep attempts (the {len(t)} kept trials and the {len(a) - len(t)} set aside), "
                f"{len(ahi)} had steal above {thr:.0%} (at most {100 * a['steal'].max():.1f}%), in every minute from "
                f"{minutes[0]:%H:%M} to {minutes[-1]:%H:%M} UTC")


def test_click_pdr_table_never_sets_a_lower_bound_against_another():
    r = click_searches()
    pdr = datasets.search_pdr(r).set_index("engine")
    click = pdr.loc["click", "pdr_pps"]
    for row in r.itertuples():
        ratio = "none: a lower bound" if pdr.loc[row.engine, "at_least"] else f"{row.lower_pps / click:.2f}"
        says(CLICK, f"| {row.engine} | {row.answer} | {ratio} |")
    says(CLICK, "| engine | PDR@0.5% | ratio to click |")
    says(CLICK, f"**PDR@0.5%, in one run** (generator ceiling {r['generator_ceiling_pps'].iloc[0]:,.0f} pps)")
    bounded = pdr[pdr["at_least"]]
    assert (bounded["bound"] == "limited by the generator").all() and bounded.index.tolist() == ["fastclick-dpdk"]
    says(CLICK, f"{WORDS[len(bounded)]} answer is a lower bound")
    own = pdr.index[~pdr["at_least"]].tolist()
    assert own == ["linux", "ebpf", "click", "fastclick"]
    says(CLICK, f"The other {WORDS[len(own)].lower()} answers are the routers' own: no trial at their failing loads was "
                "generator-limited")
    p = search_trials()
    s = r.set_index("engine")
    for e in own:
        assert not at_load(p, e, s.loc[e, "upper_pps"])["generator_limited"].any()
    # the limited trials of the search
    lim = p[p["generator_limited"]]
    n = lim.groupby("engine").size()
    assert set(n.index) == {"fastclick-dpdk", "click", "fastclick"}
    ceiling = s["generator_ceiling_pps"].iloc[0]
    for e in ("click", "fastclick"):
        x = lim[lim["engine"] == e]
        assert len(x) == 1 and x["phase"].iloc[0] == "short" and np.isclose(x["load"].iloc[0], ceiling)
    # fastclick-dpdk's: full-duration trials, and short ones of which one at the ceiling
    dl = lim[lim["engine"] == "fastclick-dpdk"]
    full, short = dl[dl["phase"] == "final"], dl[dl["phase"] == "short"]
    assert len(full) + len(short) == len(dl) and len(short) == 2
    top = np.isclose(short["load"], ceiling)
    assert top.sum() == 1
    says(CLICK, f"Of the {len(p)} search trials {len(lim)} were generator-limited: click {n['click']} and fastclick "
                f"{n['fastclick']}, each its search's short trial at the ceiling, and fastclick-dpdk "
                f"{n['fastclick-dpdk']} ({len(full)} full-duration trials, and {len(short)} short ones at "
                f"{pps(short['load'][~top].iloc[0])} pps and at the ceiling)")


def test_click_fastclick_dpdk_search():
    r = click_searches().set_index("engine")
    p = search_trials()
    dpdk = p[p["engine"] == "fastclick-dpdk"]
    upper = r.loc["fastclick-dpdk", "upper_pps"]
    at = at_load(p, "fastclick-dpdk", upper)
    full = dpdk[dpdk["phase"] == "final"]
    lim = full[full["generator_limited"]]
    assert (lim["tx"] < lim["load"] * lim["duration"]).all() and (lim["duration"] == 1.0).all()
    assert r.loc["fastclick-dpdk", "generator_bound"]
    # the failing load: one trial passed, one generator-limited, one delivered that lost more than the PDR
    # fraction; a load passes when at least half its trials pass (routerlab.search), a limited trial failing,
    # so the limited one decided it
    n = int(r.loc["fastclick-dpdk", "final_trials"])
    assert len(at) == n and (at["phase"] == "final").all()
    ok, gl = at[at["passed"]], at[at["generator_limited"]]
    own = at[~at["passed"] & ~at["generator_limited"]]
    assert len(ok) == 1 and len(gl) == 1 and len(own) == 1 and not gl["passed"].any()
    assert (~ok["generator_limited"]).all() and (ok["loss"] <= stats.PDR_FRACTION).all()
    assert (own["loss"] > stats.PDR_FRACTION).all()
    need = -(-n // 2)
    assert len(ok) < need <= len(ok) + len(gl)
    says(CLICK, f"A generator-limited trial decided fastclick-dpdk's failing load ({pps(upper)} pps: {len(ok)} passed, "
                f"{len(gl)} generator-limited, {len(own)} lost {sig2(own['loss'].iloc[0])}%): a load passes when at "
                f"least {need} of its {n} trials pass, and a generator-limited trial counts as failed, so the generator "
                "bounds this answer (`routerlab.stats.generator_bound`, from `search_trials.csv`)")
    assert gl["drops"].str.fullmatch(r"dut:FromDPDKDevice@4\.hw_dropped=\d+").all()
    says(CLICK, f"The limited trial lost {sig2(gl['loss'].iloc[0])}% of what it sent, at its AF_XDP ring too")
    says(CLICK, f"{len(lim)} of the search's {len(full)} full-duration trials were generator-limited, offering "
                f"{pps(lim['tx'].min())}-{pps(lim['tx'].max())} pps where more was asked")
    # its own loss, in trials the generator delivered
    own = dpdk[~dpdk["generator_limited"] & (dpdk["loss"] > stats.PDR_FRACTION)].sort_values("load")
    assert len(own) == 3 and not own["passed"].any() and not own["disturbed"].any()
    assert own["drops"].str.fullmatch(r"dut:FromDPDKDevice@4\.hw_dropped=\d+").all()
    assert np.isclose(own["load"], upper).any()
    says(CLICK, "The router lost packets at these loads too: in trials the generator delivered, it lost "
                + ", ".join(f"{sig2(x.loss)}% at {pps(x.load)} pps" for x in own.iloc[:-1].itertuples())
                + f" and {sig2(own['loss'].iloc[-1])}% at {pps(own['load'].iloc[-1])} pps, all at its AF_XDP ring "
                  "(FromDPDKDevice's `hw_dropped`)")
    says(CLICK, f"So its PDR is at least {pps(r.loc['fastclick-dpdk', 'lower_pps'])} pps, and these files cannot say "
                "how far above")


def test_click_the_steal_shaped_linux_and_ebpf():
    r = click_searches().set_index("engine")
    p = search_trials()
    thr = r["steal_threshold"].iloc[0]
    # linux: its failing load failed on two trials kept disturbed
    up = at_load(p, "linux", r.loc["linux", "upper_pps"])
    failed, passed = up[~up["passed"]], up[up["passed"]]
    assert len(up) == 3 and len(failed) == 2 and failed["disturbed"].all() and (failed["steal"] > thr).all()
    says(CLICK, f"linux failed {pps(r.loc['linux', 'upper_pps'])} pps on {len(failed)} of its {len(up)} trials there, "
                f"both kept `disturbed` (steal {' and '.join(f'{100 * x:.1f}%' for x in sorted(failed['steal']))}); the "
                f"third lost {sig2(passed['loss'].iloc[0])}%")
    # ebpf: every trial it failed between a load failed by trials not disturbed and one passed losslessly
    eb = p[(p["engine"] == "ebpf") & (p["phase"] == "final")]
    clean_fail = eb[~eb["passed"] & ~eb["disturbed"]].groupby("load").size()
    hi = min(x for x, n in clean_fail.items() if n >= 2)
    g = eb.groupby("load")
    lossless = [x for x, y in g if len(y) == 3 and (y["lost"] == 0).all() and x < hi]
    lo = max(lossless)
    between = eb[(eb["load"] > lo) & (eb["load"] < hi) & ~eb["passed"]]
    assert between["disturbed"].all() and (between["steal"] > thr).all()
    assert lo < r.loc["ebpf", "lower_pps"] < hi and not r.loc["ebpf", "generator_bound"]
    says(CLICK, f"ebpf failed {pps(hi)} pps on trials not kept `disturbed` and passed {pps(lo)} pps on three "
                f"lossless trials. Every trial it failed between those two loads was kept `disturbed`, with steal of "
                f"{span(between['steal'], pct(1))}%, and its answer is {pps(r.loc['ebpf', 'lower_pps'])} pps")
    assert (r.loc["ebpf", "lower_pps"] - lo) < (hi - lo) / 10
    # the answers whose failing load failed only on trials kept disturbed
    shaped = [e for e in ("linux", "ebpf", "click", "fastclick")
              if (lambda u: u[~u["passed"]]["disturbed"].all())(at_load(p, e, r.loc[e, "upper_pps"]))]
    assert shaped == ["linux", "ebpf"]
    says(CLICK, f"The steal shaped {WORDS[len(shaped)].lower()} of those four answers")
    says(CLICK, "These two answers say as much about the steal of those minutes as about the routers.")
    # click and fastclick: their failing loads failed on trials not disturbed, their answers passed undisturbed
    parts = []
    for e in ("click", "fastclick"):
        u = at_load(p, e, r.loc[e, "upper_pps"])
        bad = u[~u["passed"] & ~u["disturbed"]]
        assert len(bad) >= 2 and len(u) == 3
        assert not at_load(p, e, r.loc[e, "lower_pps"])["disturbed"].any()
        parts.append((e, r.loc[e, "upper_pps"], len(bad), sorted(bad["loss"])))
    (_, cu, cn, cl), (_, fu, fn, fl) = parts
    says(CLICK, "Click's and fastclick's were set by trials not kept `disturbed`: "
                f"click failed {pps(cu)} pps with {cn} such trials losing {' and '.join(sig2(x) + '%' for x in cl)}, "
                f"fastclick failed {pps(fu)} pps with {fn} losing {' and '.join(sig2(x) + '%' for x in fl)}")
    ratio = r.loc["fastclick", "lower_pps"] / r.loc["click", "lower_pps"]
    prec = r.loc[["click", "fastclick"], "precision"]
    assert np.isclose(prec.iloc[0], prec.iloc[1])
    says(CLICK, f"On the same AF_PACKET capture, FastClick's batches of 32 carry {ratio:.2f} times what Click carries "
                f"here: the two answers are {100 * (ratio - 1):.0f}% apart, where each search's precision is "
                f"{100 * prec.iloc[0]:.1f}%")
    says(CLICK, f"On AF_PACKET it carries {ratio:.2f} times what Click carries.")


def test_click_generator_in_the_sweeps():
    t = trials(CLICK)
    lim = t[t["limited"]]
    by = lim.groupby("engine").size()
    ceiling = t["offered_pps"].max()
    says(CLICK, f"In the sweeps, {by['fastclick']} of fastclick's trials and {by['fastclick-dpdk']} of "
                f"fastclick-dpdk's were generator-limited, all at {pps(lim['offered_pps'].min())} pps "
                f"({frac(lim['offered_pps'].min(), ceiling)} of the ceiling) or more")


def test_click_sweeps():
    t = trials(CLICK)
    a = {x.experiment: x for x in stats.assess(datasets.read(D / CLICK).trials)}
    s = per_load(CLICK)
    dpdk, fc = s.loc[DPDK], s.loc[FC]
    lim = t[t["limited"]].groupby(["experiment", "offered_pps"]).size()
    ceiling = t["offered_pps"].max()
    says(CLICK, f"**The sweeps** (ceiling {pps(ceiling)} pps)")
    # fastclick-dpdk: nothing lost in a delivered trial; the top loads all limited
    assert (dpdk["worst"] == 0).all()
    top = dpdk.index.max()
    gone = sorted(set(t[t["experiment"] == DPDK]["offered_pps"]) - set(dpdk.index))
    assert all(lim.loc[(DPDK, x)] == 10 for x in gone) and all(x > top for x in gone)
    part = [x for x in dpdk.index if (DPDK, x) in lim.index]
    assert len(part) == 1
    g = t[(t["experiment"] == DPDK) & t["offered_pps"].isin(gone)]
    says(CLICK, f"lost no packet in any trial the generator delivered, up to {pps(top)} pps "
                f"({frac(top, ceiling)} of the ceiling); {lim.loc[(DPDK, part[0])]} of the 10 trials at "
                f"{pps(part[0])} pps was generator-limited. At {' and '.join(pps(x) for x in gone)} pps all 10 trials "
                f"were generator-limited (they offered {pps((g['tx'] / g['duration_s']).min())}-"
                f"{pps((g['tx'] / g['duration_s']).max())} pps)")
    vd, vf = a[DPDK].verdict, a[FC].verdict
    says(CLICK, f"Its verdict is **{vd.label}** ({vd.why.split(' (to do')[0]})",
         f"**`fastclick` (AF_PACKET)** is **{vf.label}** ({vf.why})")
    assert vf.good
    # fastclick: lossless loads, then lossy loads under the PDR fraction, then the crossing
    fz = fc[fc["worst"] == 0].index
    assert (fz == fc.index[:len(fz)]).all()
    pdr = a[FC].pdr
    assert pdr.status == "found"
    under = fc[(fc.index > fz.max()) & (fc.index <= pdr.load)]
    assert (under["loss"] <= stats.PDR_FRACTION).all() and len(under) == 2
    ut = t[(t["experiment"] == FC) & t["offered_pps"].isin(under.index) & (t["lost"] > 0)]
    nlossy = ut.groupby("offered_pps").size()
    assert (under["n"] == 10).all()
    says(CLICK, f"It lost nothing up to {pps(fz.max())} pps, with its CPU {100 * fc.loc[fz.max(), 'cpu']:.0f}% busy. "
                f"At {' and '.join(pps(x) for x in under.index)} pps {' and '.join(str(nlossy[x]) for x in under.index)} "
                f"of the 10 trials lost packets (a mean of {' and '.join(sig2(x) + '%' for x in under['loss'])}, under "
                f"the PDR fraction); {ut['disturbed'].sum()} of those {len(ut)} trials were kept `disturbed`, and the "
                f"other {(~ut['disturbed']).sum()} lost {span(ut[~ut['disturbed']]['lost'], pps)} packets each")
    nxt = fc.index[fc.index.get_loc(pdr.load) + 1]
    at = t[(t["experiment"] == FC) & (t["offered_pps"] == nxt)]
    assert fc.loc[nxt, "loss"] > stats.PDR_FRACTION
    says(CLICK, f"At {pps(nxt)} pps {(at['lost'] > 0).sum()} of {len(at)} trials lost packets, a mean of "
                f"{sig2(fc.loc[nxt, 'loss'])}%, so the sweep's PDR@0.5% is {pps(pdr.load)} pps")
    # the throughput from the crossing on: it fell at every step
    summ = a[FC].summary.set_index("offered_pps")
    thr = summ["throughput_pps"]
    after = fc.index[fc.index.get_loc(nxt) + 1:]
    assert len(after) == 4 and (np.diff(thr[[nxt, *after]].to_numpy()) < 0).all()
    assert thr[nxt] == thr.max()
    k = fc.loc[after, "n"]
    assert (k.iloc[:2] == 10).all() and (k.iloc[2:] < 10).all()
    says(CLICK, f"The throughput (offered × (1 - mean loss)) was {pps(thr[nxt])} pps there and fell to "
                f"{', '.join(pps(thr[x]) for x in after[:-1])} and {pps(thr[after[-1]])} pps at "
                f"{', '.join(pps(x) for x in after[:2])}, {pps(after[2])} ({k.iloc[2]} trials the generator could "
                f"offer) and {pps(after[3])} pps ({k.iloc[3]} trials), with its CPU "
                f"{span(fc.loc[after, 'cpu'], pct())}% busy")
    # the search against the sweep
    r = click_searches().set_index("engine")
    f = r.loc["fastclick", "lower_pps"]
    assert pdr.load < f < nxt
    says(CLICK, f"The fastclick search's answer ({pps(f)} pps) lies between the sweep's PDR ({pps(pdr.load)} pps) and "
                f"the sweep's next load ({pps(nxt)} pps): the search and the sweep agree")
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
    assert steal.sum() + stop.sum() + lag.sum() > len(sup) and w.str.count(";").max() == 1
    says(CLICK, f"In the sweeps, {len(again)} of the {len(t)} trials were measured again (fastclick "
                f"{per['fastclick']}, fastclick-dpdk {per['fastclick-dpdk']}), and {len(sup)} attempts were set aside: "
                f"{steal.sum()} with steal above 2% ({span(sup[steal]['steal'], pct(1))}%), {stop.sum()} with a stop of "
                f"the router's CPU and {lag.sum()} with a lag of the generator (two reasons for some)")
    dist = t[t["disturbed"]]
    wd = why(dist)
    assert (wd.str.startswith("steal")).all() and (dist["attempt"] == 1 + TrialValidation().max_repeats).all()
    dn = dist.groupby("engine").size()
    says(CLICK, f"{len(dist)} kept sweep trials are still `disturbed` after {dist['attempt'].iloc[0]} attempts, all "
                f"for steal ({span(dist['steal'], pct(1))}%): {dn['fastclick']} of fastclick's, "
                f"{dn['fastclick-dpdk']} of fastclick-dpdk's")
    assert (why(t[~t["disturbed"]]) == "").all() and (t[~t["disturbed"]]["steal"] <= 0.02).all()
    says(CLICK, "The statistics count them, as they count every kept trial the generator delivered; no other kept "
                "sweep trial had steal above 2%")
    # the statistics' runs are the delivered trials, disturbed ones included
    runs = stats.summaries([x for x in stats.assess(datasets.read(D / CLICK).trials)])
    assert runs["runs"].sum() == (~t["limited"]).sum()
    # the searches
    p = search_trials()
    ssup = pd.read_csv(D / CLICK / "superseded_search_trials.csv")
    sw = why(ssup)
    assert ssup["disturbed"].all() and (sw != "").all()
    assert len(ssup) == (p["attempt"] - 1).sum()
    per = ssup.groupby("engine", sort=False).size()
    assert per.index.tolist() == click_searches()["engine"].tolist()
    st, sp, lg = (sw.str.contains("steal"), sw.str.contains("router CPU stopped"), sw.str.contains("generator fell behind"))
    says(CLICK, f"In the searches, {(p['attempt'] > 1).sum()} of the {len(p)} trials were measured again, and "
                f"{len(ssup)} attempts were set aside ("
                + ", ".join(f"{e} {n}" for e, n in per.items())
                + f"): {st.sum()} with steal above 2%, {sp.sum()} with a stop of the router's CPU, {lg.sum()} with a lag "
                  "of the generator")
    dist = p[p["disturbed"]]
    dw = why(dist)
    hi = dist["steal"] > 0.02
    alone = dist[~hi]
    assert len(alone) == 1 and dw[~hi].iloc[0].startswith("router CPU stopped") and ";" not in dw[~hi].iloc[0]
    assert "fastclick-dpdk" not in set(dist["engine"])
    says(CLICK, f"{len(dist)} kept search trials are still `disturbed` ({hi.sum()} with steal above 2%, {len(alone)} with "
                f"a stop of the router's CPU alone; none of fastclick-dpdk's); {int(dist['passed'].sum())} of them passed")
    judged = dist[~dist["generator_limited"]]
    assert (judged["passed"] == (judged["loss"] <= stats.PDR_FRACTION)).all()
    says(CLICK, "A trial kept `disturbed` counts like any other: it fails when it lost more than 0.5%.")


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
    assert dl["limited"].all()
    says(CLICK, f"fastclick-dpdk lost {pps(lost['fastclick-dpdk'])}, all counted by FromDPDKDevice's `hw_dropped`",
         "the DUT veth's `d0.rx_dropped` counted the same number), all in generator-limited trials",
         "No packet is unexplained, and the drop tracer missed none")
    r = click_searches().set_index("engine")
    assert r.loc["fastclick-dpdk", "lower_pps"] > r[~r["generator_bound"]].loc[["click", "fastclick"], "lower_pps"].max()
    says(CLICK, f"FastClick on DPDK carries the most of the user-space routers here (at least "
                f"{pps(r.loc['fastclick-dpdk', 'lower_pps'])} pps, limited by the generator, against "
                f"{pps(r.loc['fastclick', 'lower_pps'])} on AF_PACKET)")
    # the searches of click and fastclick lost at their capture socket, all but a few
    p = search_trials()
    cf = p[p["engine"].isin(["click", "fastclick"]) & (p["lost"] > 0)]
    counters = cf["drops"].str.split(";").explode().str.split("=", expand=True)
    counters[1] = counters[1].astype(int)
    counters["engine"] = cf.loc[counters.index, "engine"]
    assert set(counters[0]) == {"dut:FromDevice@4.kernel_drops", "dut:CPU_BACKLOG", "dut:out/Queue@1.drops"}
    total = counters.groupby("engine")[1].sum()
    assert (total == cf.groupby("engine")["lost"].sum()).all()
    rest = counters[counters[0] != "dut:FromDevice@4.kernel_drops"].groupby("engine")[1].sum()
    assert (rest < total / 100).all()
    says(CLICK, "In their searches both lost nearly all their packets at the capture socket (FromDevice's "
                f"`kernel_drops`): click all but {pps(rest['click'])} of {pps(total['click'])}, fastclick all but "
                f"{pps(rest['fastclick'])} of {pps(total['fastclick'])}; the rest at the router CPU's input backlog and "
                "in the output `Queue`")


def test_click_compared_with_the_morning(morning):
    was = datasets.read_searches([morning]).set_index("engine")
    now = click_searches().set_index("engine")
    assert was.index.tolist() == now.index.tolist()
    says(CLICK, "| engine | PDR@0.5%, morning | PDR@0.5%, evening |")
    for e in now.index:
        says(CLICK, f"| {e} | {was.loc[e, 'answer']} | {now.loc[e, 'answer']} |")
    ot, oa, oc = assessed(morning)
    nt, na, nc = assessed(D / CLICK)
    olde, newe = datasets.read_experiments(morning), datasets.read_experiments(D / CLICK)
    ostart = pd.to_datetime(ot["started_at"])
    assert max(ostart.max(), pd.to_datetime(was["when"]).max()) < pd.to_datetime(now["when"]).min()
    day = set(ostart.dt.strftime("%Y-%m-%d")) | set(pd.to_datetime(was["when"]).dt.strftime("%Y-%m-%d"))
    assert day == set(pd.to_datetime(nt["started_at"]).dt.strftime("%Y-%m-%d"))
    # the same validation settings; the same kernel
    assert notes(olde) == notes(newe)
    assert olde["kernel"].iloc[0] == newe["kernel"].iloc[0]
    says(CLICK, f"The replaced files (in git at commit {MORNING[:7]}) were measured the same day, {day.pop()}, with "
                f"code {CODE[:7]} and the same trial validation settings, on the same kernel: the searches "
                f"{when_range(was['when'])} UTC and the sweeps' trials {when_range(ot['started_at'])} UTC")
    s_was, s_now = was["generator_ceiling_pps"].iloc[0], now["generator_ceiling_pps"].iloc[0]
    says(CLICK, f"The generator's ceiling, measured alone, was {pps(s_was)} pps for the searches then ({pps(s_now)} "
                f"now) and {pps(oc)} pps for the sweeps ({pps(nc)} now)")
    # the same commands, each with its own ceiling
    def form(e):
        return {x.experiment: x.command.split(" --out ")[0].replace(f"--ceiling {x.generator_ceiling_pps:.0f}", "")
                for x in e.itertuples()}
    assert form(olde) == form(newe)
    assert set(ot["offered_pps"]).isdisjoint(set(nt["offered_pps"]))
    says(CLICK, "The sweeps ran the same fractions of each ceiling, so the same fraction is a different load.")
    # steal then and now
    thr = 0.02
    osw, oss = attempts(morning), attempts(morning, "search")
    nsw, nss = attempts(D / CLICK), attempts(D / CLICK, "search")
    says(CLICK, f"in the morning {(osw['steal'] > thr).sum()} of the {len(osw)} sweep attempts and "
                f"{'none' if (oss['steal'] > thr).sum() == 0 else (oss['steal'] > thr).sum()} of the {len(oss)} search "
                f"attempts had steal above 2% (at most {100 * osw['steal'].max():.1f}% and "
                f"{100 * oss['steal'].max():.1f}%); in the evening {(nsw['steal'] > thr).sum()} of {len(nsw)} and "
                f"{(nss['steal'] > thr).sum()} of {len(nss)}")
    assert now.loc["linux", "lower_pps"] < was.loc["linux", "lower_pps"]
    assert now.loc["ebpf", "lower_pps"] < was.loc["ebpf", "lower_pps"]
    says(CLICK, "The linux and ebpf answers fell where the evening's steal set them (above).")
    # FastClick against Click
    rw = was.loc["fastclick", "lower_pps"] / was.loc["click", "lower_pps"]
    rn = now.loc["fastclick", "lower_pps"] / now.loc["click", "lower_pps"]
    assert rw < 1 < rn
    says(CLICK, f"FastClick on AF_PACKET against Click: {rw:.2f} then, {rn:.2f} now. Click's answer fell "
                f"{100 * (1 - now.loc['click', 'lower_pps'] / was.loc['click', 'lower_pps']):.0f}% "
                f"({pps(was.loc['click', 'lower_pps'])} → {pps(now.loc['click', 'lower_pps'])} pps), fastclick's "
                f"{100 * (1 - now.loc['fastclick', 'lower_pps'] / was.loc['fastclick', 'lower_pps']):.1f}%")
    # fastclick's sweep then and now
    vo, vn = oa[FC], na[FC]
    assert not vo.verdict.good and vn.verdict.good
    ok = ot.assign(loss=ot["lost"] / ot["tx"])
    ok = ok[(ok["experiment"] == FC) & ~ok["generator_limited"].astype(bool)]
    cross = vo.summary.set_index("offered_pps")
    first_over = cross[cross["plr"] > stats.PDR_FRACTION].index[0]
    at = ok[ok["offered_pps"] == first_over]
    lossy = at[at["lost"] > 0]
    assert len(lossy) == 1 and len(at) == 10
    says(CLICK, f"fastclick's sweep was **{vo.verdict.label}** then ({vo.verdict.why}), with a PDR@0.5% of "
                f"{pps(vo.pdr.load)} pps ({frac(vo.pdr.load, oc)} of its ceiling), set by one trial of {len(at)} that "
                f"lost {sig2(lossy['loss'].iloc[0])}% at {pps(first_over)} pps: "
                f"{vo.pdr.load / was.loc['fastclick', 'lower_pps']:.2f} times its search's answer")
    says(CLICK, f"It is **{vn.verdict.label}** now, with a PDR@0.5% of {pps(vn.pdr.load)} pps "
                f"({frac(vn.pdr.load, nc)}), and its search agrees with it")
    to, tn = vo.summary.set_index("offered_pps")["throughput_pps"], vn.summary.set_index("offered_pps")["throughput_pps"]
    says(CLICK, f"Its throughput peaked at {pps(to.max())} pps then (at {pps(to.idxmax())} pps offered) and at "
                f"{pps(tn.max())} pps now (at {pps(tn.idxmax())})")

    def first_clean_loss(tt):
        k = tt[(tt["experiment"] == FC) & ~tt["generator_limited"].astype(bool) & (tt["lost"] > 0) & ~tt["disturbed"]]
        return k["offered_pps"].min()

    fo, fn = first_clean_loss(ot), first_clean_loss(nt)
    assert fn < fo
    says(CLICK, f"fastclick's first loss in a trial not kept `disturbed` came at a lower load now ({pps(fn)} pps) than "
                f"then ({pps(fo)} pps)")
    # CPU 1 at the lowest load
    def low(tt):
        x = tt[(tt["experiment"] == FC)]
        x = x[x["offered_pps"] == x["offered_pps"].min()]
        return x["offered_pps"].iloc[0], x["cpu_load"].mean()

    (lo_o, co), (lo_n, cn) = low(ot), low(nt)
    assert abs(co - cn) < 0.01
    assert (ot[ot["experiment"] == DPDK]["cpu_load"] == 1).all() and (nt[nt["experiment"] == DPDK]["cpu_load"] == 1).all()
    says(CLICK, f"CPU 1 at fastclick's lowest load was {100 * co:.0f}% busy then ({pps(lo_o)} pps) and "
                f"{100 * cn:.0f}% now ({pps(lo_n)} pps)")
    # fastclick-dpdk's sweep: nothing lost in a delivered trial, then or now
    for tt in (ot, nt):
        x = tt[(tt["experiment"] == DPDK) & ~tt["generator_limited"].astype(bool)]
        assert (x["lost"] == 0).all()
    says(CLICK, "fastclick-dpdk lost no packet in a sweep trial the generator delivered, then or now.")
    assert (ot["lost_unexplained"] == 0).all() and (nt["lost_unexplained"] == 0).all()
    says(CLICK, f"{(ot['attempt'] > 1).sum()} sweep trials were measured again then, {(nt['attempt'] > 1).sum()} now. "
                "No lost packet was unexplained then or now.")
    assert (nsw["steal"] > thr).sum() > 10 * (osw["steal"] > thr).sum() and oc != nc
    says(CLICK, "the evening run had the machine to itself but far more steal, and the two runs' ceilings and loads "
                "differ")


def test_click_set_up():
    e = datasets.read_experiments(D / CLICK)
    t = trials(CLICK)
    # the engines as the measured commit pins them
    pins = committed("lib/routerlab/data/engine-builds.yaml", CODE_ALONE)
    commit = dict(re.findall(r"repository: (\S+)\n\s+commit: ([0-9a-f]{12})", pins))
    assert e["engine_version"].iloc[0] == f"tbarbette/fastclick@{commit['tbarbette/fastclick']}"
    (dpdk,) = re.findall(r"DPDK ([\d.]+) from Debian", pins)
    says(CLICK, f"FastClick tbarbette/fastclick@{commit['tbarbette/fastclick']} and Click "
                f"kohler/click@{commit['kohler/click']} as `routerlab engines install` builds them, FastClick against "
                f"Debian's dpdk-dev {dpdk}")
    # frames, batches, CPUs
    assert (e["frame_size"] == 64).all() and e["notes"].str.contains("batches of 32").all()
    says(CLICK, f"({e['frame_size'].iloc[0]}-byte frames, one flow, one route)", "`fastclick` is AF_PACKET with batches of 32")
    gen, router = re.fullmatch(r"generator CPU (\d); router receive CPU (\d); .*", e["pinning"].iloc[0]).groups()
    cpus = int(re.fullmatch(r".* x(\d+)", e["cpu"].iloc[0]).group(1))
    says(CLICK, f"`-l {router}`, so it polls CPU {router} (100% busy by design)",
         f"The generator and the router share this machine's {cpus} vCPUs: the generator is pinned to CPU {gen} and "
         f"the router to CPU {router}")
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
