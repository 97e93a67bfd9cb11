"""Every number the README of comparison states, recomputed from its files (see readme_checks)."""

import inspect
import re
import subprocess

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from routerlab import comparison, datasets, drops, plots, stats, traffic
from routerlab.validation import TrialValidation
from readme_checks import (BMV2, CODE_ALONE, D, HALTING, LAG_CODE, POLL_COMPARISON_CODE, POLLING, VETH, committed,
                           one, pct, pps, previous_files, says, sig2, span, trials, attempts, notes, superseded, why)

NAME = "comparison"
SHORT = {"single_flow_50fw": "single flow", "gre_multiflow_50fw": "GRE", "routes_900k_multiflow_50fw": "900k routes",
         "ddos_drop_50pct": "drop"}
TABLE = {"single_flow_50fw": "single flow, 50 rules", "gre_multiflow_50fw": "GRE, multi-flow, 50 rules",
         "routes_900k_multiflow_50fw": "900k routes, multi-flow, 50 rules", "ddos_drop_50pct": "50% drop"}
#: The presets as the README's sentences name them.
SPOKEN = {"single-flow-fw50": "with one flow", "gre-multiflow-fw50": "with GRE",
          "routes900k-multiflow-fw50": "with 900k routes", "ddos-drop50": "in the drop scenario"}
ENGINES = ["nft", "ebpf", "click", "fastclick", "fastclick-dpdk", "bmv2"]
KEYS = ["experiment", "offered_pps", "trial"]
#: The other testbed datasets, measured before this one by the same run (LAG_CODE), in this order.
OTHERS = ("testbed-click", "click-course", BMV2, VETH)
#: The columns of the validation's totals of stops and lags, which the halting files lack.
TOTALS = ["cpu_stops", "cpu_stopped_ms", "gen_lagged_ms"]
#: The dataset's files, as this folder holds them and as the commits before held them.
FILES = ("trials.csv", "experiments.csv", "drops.csv", "cells.csv", "superseded_trials.csv")


@pytest.fixture(scope="module")
def ours():
    return comparison.ours(D / NAME)


@pytest.fixture(scope="module")
def halting(tmp_path_factory):
    """The files this data replaced, measured with idle CPUs halting (commit HALTING), in a folder of their own."""
    return previous_files(NAME, tmp_path_factory.mktemp("halting"), FILES, commit=HALTING)


@pytest.fixture(scope="module")
def polling(tmp_path_factory):
    """The files this data replaced: measured with idle CPUs polling and the lag rule before LAG_CODE (a lag had to
    outlast the router's queue), by a run of the comparison alone at POLL_COMPARISON_CODE (commit POLLING)."""
    return previous_files(NAME, tmp_path_factory.mktemp("polling"), FILES, commit=POLLING)


def short_lag(s: pd.DataFrame) -> pd.Series:
    """The rows (with the validation's ``why``) held disturbed for a lag of the generator no longer than the router's
    queue: the rule before LAG_CODE did not hold such a lag against a loss."""
    return s["why"].str.contains("generator fell behind") & (s["gen_late_ms"] <= s["queue_ms"])


def before(rows: pd.DataFrame) -> pd.Series:
    """Whether the rule before LAG_CODE held each row (with ``why``) disturbed: for a reason other than a lag no
    longer than the queue (the one reason the rules judge apart)."""
    return rows.apply(lambda y: any(part and not (part.startswith("generator fell behind")
                                                  and y["gen_late_ms"] <= y["queue_ms"])
                                    for part in y["why"].split("; ")), axis=1)


def experiments(folder=D / NAME) -> pd.DataFrame:
    return datasets.read_experiments(folder)


def ceiling_of(folder=D / NAME) -> float:
    c = experiments(folder)["generator_ceiling_pps"].unique()
    assert len(c) == 1
    return float(c[0])


def kept(folder=D / NAME) -> pd.DataFrame:
    """The kept trials the generator delivered (what the tables count), with their engine."""
    t = datasets.read(folder).trials
    return t[~t["generator_limited"].astype(bool)]


def by_reason(df: pd.DataFrame):
    """The rows disturbed by steal, by a stop of the router's CPU, by the generator's lag."""
    return (df[df["why"].str.contains("steal")], df[df["why"].str.contains("router CPU stopped")],
            df[df["why"].str.contains("generator fell behind")])


def three(x) -> str:
    """A mean loss in percent with three significant digits ("0" for none)."""
    return "0" if x == 0 else f"{x:#.3g}"


def loss_places(folder=D / NAME) -> pd.Series:
    """Lost packets of the kept, delivered trials per engine and counter (``place reason``)."""
    k = kept(folder)
    d = datasets.read_drops([folder])
    rows = d[d["counted_as"] == "loss"].merge(k[KEYS + ["engine"]], on=KEYS)
    return rows.assign(w=rows["place"] + " " + rows["reason"]).groupby(["engine", "w"])["packets"].sum()


def one_or_more(cells) -> bool:
    """Every cell kept at least one delivered trial."""
    return bool((cells["runs"] >= 1).all())


def first_last(folder) -> tuple:
    """A dataset's first and last record: trial starts, and its searches' ends where it has them."""
    at = list(pd.to_datetime(datasets.read(folder).trials["started_at"]))
    if (folder / "search_results.csv").exists():
        at += list(pd.to_datetime(datasets.read_searches([folder])["when"]))
    return min(at), max(at)


def test_comparison_what_and_where(ours):
    t = trials(NAME)
    measured = ours[ours["offered"].notna()]
    with_trials = measured[measured["reason"] == ""]
    few = with_trials[with_trials["runs"] < 5]  # the cells that kept some of their 5 trials, not all
    assert (few["runs"] >= 1).all()
    e = experiments()
    ceiling = ceiling_of()
    assert (t.groupby(["experiment", "offered_pps"]).size() == 5).all() and t["offered_pps"].nunique() == 8
    assert (t["duration_s"] == 2).all() and (e["frame_size"] == 64).all()
    fr = sorted(measured["offered"].unique())
    assert (fr[0], fr[-1], len(fr)) == (0.1, 1.0, 8)
    none = measured[measured["reason"] != ""]
    assert none["reason"].str.startswith("generator-limited").all() and (none["runs"] == 0).all()
    one = (few["runs"] == 1).sum()
    says(NAME, f"({fr[0]:g}-{fr[-1]:.1f}, {len(fr)} loads: {pps(t['offered_pps'].min())} to "
               f"{pps(t['offered_pps'].max())} pps). Each cell measured K = 5 trials of T = 2 s, with 64-byte frames",
         f"are left out ({t['limited'].sum()} of the {len(t)}), and {len(none)} of the {len(measured)} measured cells "
         f"kept none, so they are grey (below); {len(few)} hold {span(few['runs'], lambda x: f'{x:.0f}')} trials "
         f"({one} of them only "
         "one, which has no interval: \"n=1\" in the tables)",
         f"--ceiling {ceiling:.0f}")
    for col in ("kernel", "cpu", "pinning"):
        assert e[col].nunique() == 1
    cpus = int(re.fullmatch(r".* x(\d+)", e["cpu"].iloc[0]).group(1))
    pinning = e["pinning"].iloc[0]
    # idle CPUs polled: the testbed held the CPU latency request at 0 us
    assert re.search(r"; idle CPUs: poll \(/dev/cpu_dma_latency 0 us held while up[;)]", pinning)
    says(NAME, f"kernel {e['kernel'].iloc[0]}), {cpus} vCPUs ({e['cpu'].iloc[0]})", f"`{pinning}`",
         "idle CPUs poll while a testbed is up (`docs/testbed.md`, \"Idle CPUs poll\")")
    doc = D.parent / "docs" / "testbed.md"
    if doc.exists():
        assert "\n## Idle CPUs poll\n" in doc.read_text()
    assert (e["command"].str.replace(r"--out \S+", "--out datasets/comparison", regex=True)
            == f"routerlab compare --out datasets/comparison --ceiling {ceiling:.0f}").all()
    assert not (e["command"].str.contains("--out datasets/comparison ")).any()  # written to a scratch folder
    outs = set(e["command"].str.extract(r"--out (\S+)")[0])
    assert len(outs) == 1
    says(NAME, f"It ran with `--out {outs.pop()}`, a scratch folder (as `experiments.csv` records it), and the files "
               "were copied here unchanged; above, `--out` names this folder instead.")
    # the same builds as in testbed-veth, testbed-click and testbed-bmv2 (each as datasets/ holds it now)
    built = e.drop_duplicates("engine").set_index("engine")["engine_version"]
    assert (e["engine_version"].fillna("") != "").all()
    says(NAME, "builds them (`engine_version` in `experiments.csv`, the same builds as in `testbed-veth`, "
               "`testbed-click` and `testbed-bmv2`)", "holds each cell's record: the engine's version,")
    for other, engines in ((VETH, ["click"]), ("testbed-click", ["fastclick", "fastclick-dpdk"]), (BMV2, ["bmv2"])):
        there = experiments(D / other).drop_duplicates("engine").set_index("engine")["engine_version"]
        for eng in engines:
            assert built[eng] == there[eng] and (e[e["engine"] == eng]["engine_version"] == built[eng]).all(), eng
    # bmv2's route tables, with 900k routes
    b = notes(e.set_index("experiment").loc["bmv2-routes900k-multiflow-fw50"])
    says(NAME, f"(with 900k routes: {int(b['entries']):,} entries in {float(b['entries_load_s']):.1f} s)",
         f"It also holds only {int(b['routes_loaded']):,} of the 900k routes")


def test_comparison_when(halting):
    t = trials(NAME)
    e = experiments()
    at = pd.to_datetime(t["started_at"])
    assert at.dt.strftime("%Y-%m-%d").nunique() == 1
    day = f"{at.min():%Y-%m-%d}"
    says(NAME, f"**When:** {day} {at.min():%H:%M} to {at.max():%H:%M} UTC (first and last trial start), with the code "
               f"of commit {LAG_CODE[:7]} (`versions` in `experiments.csv`)")
    assert (e["versions"] == f"routerlab: 0.1.0 (git {LAG_CODE[:7]})").all()
    # the run's script, as it was at that commit: all five datasets, comparison last, given the one ceiling it
    # measures at its start
    script = committed("scripts/remeasure-testbed.sh", LAG_CODE)
    assert re.search(r'^ALL="testbed-click click-course testbed-bmv2 testbed-veth comparison"$', script, re.M)
    assert re.search(r'^WANT=" \$\{\*:-\$ALL\} "$', script, re.M)
    assert script.count("measuring.generator_ceiling()") == 1
    assert script.index("measuring.generator_ceiling()") < script.index("if want testbed-click")
    blocks = [script.index(f"if want {x}; then") for x in OTHERS + (NAME,)]
    assert blocks == sorted(blocks)
    assert re.search(r'\$R compare --out "?\$O/comparison"? --ceiling "?\$C"?', script.split("if want comparison")[1])
    # the four other testbed datasets: measured before this one by the same run (the same code, the same ceiling,
    # idle CPUs polling), one after the other in the script's order
    starts, ends, ceilings = [], [], set()
    for other in OTHERS:
        oe = experiments(D / other)
        assert (oe["versions"] == f"routerlab: 0.1.0 (git {LAG_CODE[:7]})").all(), other
        assert oe["pinning"].str.contains("; idle CPUs: poll (", regex=False).all(), other
        ceilings |= set(oe[oe["command"].str.contains("--ceiling")]["generator_ceiling_pps"])
        a, b = first_last(D / other)
        starts.append(a)
        ends.append(b)
    assert all(b < a for b, a in zip(ends, starts[1:])) and ends[-1] < at.min()
    assert ceilings == {ceiling_of()} and f"{min(starts):%Y-%m-%d}" == day
    says(NAME, "by `scripts/remeasure-testbed.sh OUT`, which measured all five testbed datasets in one run from a fresh "
               f"clone, this one last: {', '.join(OTHERS[:-1])} and {OTHERS[-1]} before it (their records "
               f"{min(starts):%H:%M}-{max(ends):%H:%M} UTC), with the code of that commit too",
         f"The generator ceiling is the one that run measured at its start: {pps(ceiling_of())} pps, which the other "
         "datasets' commands with `--ceiling` were given too")
    runs = [x for x in script.splitlines() if x.startswith("$R ")]
    assert runs[-1].startswith("$R compare")
    says(NAME, "The script's commands, this one last, are in `scripts/remeasure-testbed.sh`")
    # the halting files: the day before
    h = pd.to_datetime(datasets.read(halting).trials["started_at"])
    assert h.max() < min(starts) and f"{h.min():%Y-%m-%d}" < day


def test_comparison_replaces_the_polling_files(polling):
    """What these files replaced (commit POLLING), what differed, and what the new lag rule set aside."""
    e, pe = experiments(), experiments(polling)
    t, pt = trials(NAME), trials(datasets.read(polling).trials)
    # the comparison alone, earlier that day, idle CPUs polling too: the same cells, commands, builds and generator
    assert (pe["versions"] == f"routerlab: 0.1.0 (git {POLL_COMPARISON_CODE[:7]})").all()
    assert pe["pinning"].str.contains("; idle CPUs: poll (", regex=False).all()
    assert set(pe["pinning"]) == set(e["pinning"])

    def form(x):
        return list(x["command"].str.replace(r"--out \S+ --ceiling \d+", "", regex=True))
    for col in ("experiment", "engine_version", "generator", "kernel", "scenario"):
        assert list(pe[col]) == list(e[col]), col
    assert form(pe) == form(e)
    pat, at = pd.to_datetime(pt["started_at"]), pd.to_datetime(t["started_at"])
    assert f"{pat.min():%Y-%m-%d}" == f"{at.min():%Y-%m-%d}" and pat.max() < at.min()
    assert "by `scripts/remeasure-testbed.sh OUT comparison`" in " ".join(
        committed(f"datasets/{NAME}/README.md", POLLING).split())
    says(NAME, f"These files replace those of the comparison's measurement earlier that day, also with idle CPUs "
               f"polling (in git at commit {POLLING[:7]}: {pat.min():%H:%M}-{pat.max():%H:%M} UTC, code "
               f"{POLL_COMPARISON_CODE[:7]}, by `scripts/remeasure-testbed.sh OUT comparison` alone), with the same "
               "command (its `--out` and `--ceiling` aside), engine builds and generator")
    # the code: the trial validation's rule for lags, a message of calibrate.py and the script's header comment
    committed("lib/routerlab/validation.py", POLL_COMPARISON_CODE)  # skips where the history is not here
    names = subprocess.run(["git", "-C", str(D.parent), "diff", "--name-only", POLL_COMPARISON_CODE, LAG_CODE, "--",
                            "lib", "scripts"], capture_output=True, text=True, check=True).stdout.split()
    assert sorted(names) == ["lib/routerlab/benchmarks/calibrate.py", "lib/routerlab/validation.py",
                             "scripts/remeasure-testbed.sh"]
    old, new = (committed("lib/routerlab/validation.py", c) for c in (POLL_COMPARISON_CODE, LAG_CODE))
    assert "if accounts(lag, total):" in old and "(queue is None or longest > queue)" in old
    assert "if accounts(lag, total, queue=None):" in new
    s_old, s_new = (committed("scripts/remeasure-testbed.sh", c) for c in (POLL_COMPARISON_CODE, LAG_CODE))
    assert [x for x in s_old.splitlines() if not x.startswith("#")] == [x for x in s_new.splitlines()
                                                                        if not x.startswith("#")]
    c_old, c_new = (committed("lib/routerlab/benchmarks/calibrate.py", c).splitlines()
                    for c in (POLL_COMPARISON_CODE, LAG_CODE))
    assert len(c_old) == len(c_new) and all(a.strip().startswith('"') and b.strip().startswith('"')
                                            for a, b in zip(c_old, c_new) if a != b)
    says(NAME, f"The code differs in the trial validation's rule alone (besides a message of `routerlab bench "
               f"calibrate` and the script's header comment: `git diff {POLL_COMPARISON_CODE[:7]} {LAG_CODE[:7]} -- lib "
               f"scripts`): since {LAG_CODE[:7]} a lag of the generator is held against a loss it can account for "
               "however short the lag is next to the router's queue, where before it had to outlast the queue")
    # the attempts set aside for a lag shorter than the queue; those set aside for nothing else the old rule kept
    s = superseded(NAME, "superseded_trials.csv")
    sl = s[short_lag(s)]
    alone = sl[~before(sl)]
    again = alone.groupby(KEYS).size()
    # every other attempt, kept or set aside, the rule before judges alike
    every = pd.concat([s, t.assign(why=why(t))], ignore_index=True)
    differ = every[(every["why"] != "") != before(every)]
    assert (s["why"] != "").all()
    sl = s[short_lag(s)]
    alone = sl[~before(sl)]
    keys = alone.groupby(KEYS).size().index
    kept_ = t.set_index(KEYS).loc[keys]
    assert (kept_["lost"] >= 0).all() and not kept_["disturbed"].any()
    clean, lossy = kept_[kept_["lost"] == 0], kept_[kept_["lost"] > 0]
    says(NAME, f"Of the {len(s)} attempts set aside here, {len(sl)} were held disturbed for a lag of the generator no "
               f"longer than the router's queue, {len(alone)} of them (in {len(keys)} trials) for that alone, which the "
               f"rule before would have kept: lags of {span(alone['gen_late_ms'], one)} ms against "
               f"{span(alone['queue_ms'], one)} ms of queue, with {span(alone['lost'], pps)} packets lost; measured "
               f"again, {len(clean)} of those {len(keys)} trials kept an attempt that lost nothing, {len(lossy)} one that "
               f"lost {span(lossy['lost'], pps)} packets.")
    # every other attempt, kept or set aside, the rule before judges alike: the rules differ only in a lag no
    # longer than the queue, which the rule before did not hold against a loss
    every = pd.concat([s, t.assign(why=why(t))], ignore_index=True)
    assert ((every["why"] != "") != before(every)).sum() == len(alone)
    says(NAME, "Every other attempt here, kept or set aside, the rule before would have judged alike.")
    # the other differences: the time of day, the ceiling; and what the validation met
    limit = TrialValidation().steal_threshold
    a, pa = attempts(D / NAME), attempts(polling)
    says(NAME, f"The two runs differed too in the time of day and the generator's ceiling ({pps(ceiling_of(polling))} "
               f"pps then, {pps(ceiling_of())} now, so each fraction of it is a load "
               f"{ceiling_of() / ceiling_of(polling) - 1:.1%} higher now). Steal was above 2% in "
               f"{(pa['steal'] > limit).sum()} of the {len(pa):,} attempts then, {(a['steal'] > limit).sum()} of the "
               f"{len(a):,} now; {(pt['attempt'] > 1).sum()} trials were measured again then, {(t['attempt'] > 1).sum()} "
               f"now, and {pt['disturbed'].sum()} were kept `disturbed` then, {t['disturbed'].sum()} now.")


def test_comparison_halting_run(halting, tmp_path):
    """The halting files came last in a run of four datasets, after testbed-click, click-course and testbed-bmv2 as
    HALTING holds them, with the ceiling that run gave testbed-click and click-course."""
    h = pd.to_datetime(datasets.read(halting).trials["started_at"])
    named = ["testbed-click", "click-course", BMV2]
    for other in named:
        (tmp_path / other).mkdir()
        folder = previous_files(other, tmp_path / other, ("trials.csv", "experiments.csv"), commit=HALTING)
        o = pd.to_datetime(datasets.read(folder).trials["started_at"])
        assert o.max() < h.min() and f"{o.min():%Y-%m-%d}" == f"{h.min():%Y-%m-%d}", other
        if other != BMV2:  # testbed-bmv2's sweep has fixed loads
            assert ceiling_of(folder) == ceiling_of(halting), other
    script = committed("scripts/remeasure-testbed.sh", CODE_ALONE)
    blocks = [script.index(f"if want {x}; then") for x in named + [NAME]]
    assert blocks == sorted(blocks)
    says(NAME, "by `scripts/remeasure-testbed.sh OUT " + " ".join(named + [NAME]) + "` (this dataset last)")


def test_comparison_how():
    e = experiments()
    n = [notes(x) for _, x in e.iterrows()]
    for k in ("steal_threshold", "probe_period_ms", "max_repeats", "loss_attribution"):
        assert len({x[k] for x in n}) == 1, k
    assert n[0]["loss_attribution"] == "on"
    # the rule of the measured code: a stop must outlast the queue, a lag need not (LAG_CODE)
    src = committed("lib/routerlab/validation.py", LAG_CODE)
    assert "if accounts(longest, total):" in src and "if accounts(lag, total, queue=None):" in src
    says(NAME, f"up to {int(n[0]['max_repeats'])} times, when its steal is above {float(n[0]['steal_threshold']):.0%}",
         f"That is: the longest stop is longer than the probe's {float(n[0]['probe_period_ms']):g} ms period and than "
         "the router's queue lasts, or the longest lag is longer than the probe's period, however short next to the "
         "queue; and the loss is no more than")
    # the totals of stops and lags are recorded (their floor, 5 ms, is the code's)
    t = datasets.read(D / NAME).trials
    assert t[TOTALS].notna().all().all()
    says(NAME, f"the packets offered during the trial's stops (or lags) over {traffic.STOP_TOTAL_OVER_MS:g} ms added "
               "up (during the longest, if that is more)")
    queue = {}
    for _, x in e.iterrows():
        queue.setdefault(x["engine"], set()).add(notes(x)["router_queue_packets"])
    assert all(len(v) == 1 for v in queue.values())
    queue = {k: v.pop() for k, v in queue.items()}
    big = [k for k in ENGINES if queue[k] == "1000"]
    assert big == ["nft", "click", "fastclick", "bmv2"]
    says(NAME, f"The validation takes the router's queue as 1000 packets for {', '.join(big[:-1])} and {big[-1]}, "
               f"{queue['ebpf']} for ebpf and {queue['fastclick-dpdk']} for fastclick-dpdk")
    # the command's defaults, and the scenarios' rules
    p = inspect.signature(comparison.campaign).parameters
    says(NAME, f"# the defaults: K={p['runs'].default}, T={p['duration'].default:g} s, {len(p['fractions'].default)} "
               "loads")
    rules = {int(re.search(r"rules=(\d+)", x).group(1)) for x in e["scenario"]}
    assert len(rules) == 1
    says(NAME, f"because each has {rules.pop()} rules")
    b = notes(e.set_index("experiment").loc["bmv2-routes900k-multiflow-fw50"])
    assert f"capped at {int(b['routes_loaded'])}" in b["routes_note"]
    says(NAME, f"the {int(b['routes_loaded']):,}-route cap")


def test_comparison_files():
    t = trials(NAME)
    e = experiments()
    s = superseded(NAME, "superseded_trials.csv")
    d = datasets.read_drops([D / NAME])
    assert len(t) == len(e) * 8 * 5 and len(e) == 23
    says(NAME, f"the {len(t)} kept trials ({len(e)} rows of engine and scenario × {t['offered_pps'].nunique()} "
               f"loads × K = {t.groupby(['experiment', 'offered_pps']).size().max()})",
         f"the {len(s)} attempts that were measured again (same columns)", f"`drops.csv` | {len(d):,} rows")
    assert list(s.columns[:-1]) == list(pd.read_csv(D / NAME / "trials.csv").columns)
    for c in ("cpu_stop_ms", "gen_late_ms", "queue_ms", "attempt", "disturbed", "lost", "lost_attributed",
              "lost_unexplained", "trace_missed", "drops", *TOTALS):
        assert c in t.columns
    says(NAME, "`cpu_stop_ms`, `cpu_stops`, `cpu_stopped_ms`, `gen_late_ms`, `gen_lagged_ms`, `queue_ms`, `attempt`, "
               "`disturbed`")
    assert (t["lost"] == t["tx"] - t["rx"]).all()
    assert (t["lost"] == t["lost_attributed"] + t["lost_unexplained"]).all()
    cells = datasets.read_kind(D / NAME, "cells.csv")
    assert len(cells) == 28 and set(cells["engine"]) == {"linux", *ENGINES}
    # the folder holds these five files and the README, nothing else
    assert sorted(p.name for p in (D / NAME).iterdir()) == sorted(
        ["README.md", "trials.csv", "superseded_trials.csv", "drops.csv", "experiments.csv", "cells.csv"])


def either(names) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def both(names) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def test_comparison_grey_cells(ours):
    cells = datasets.read_kind(D / NAME, "cells.csv")
    grey = cells[~cells["runnable"].astype(str).str.lower().eq("true")]
    assert set(grey[grey["engine"] == "linux"]["scenario"]) == set(cells["scenario"])
    assert grey["reason"].str.contains("firewall").sum() == 4
    assert list(zip(grey[grey["engine"] != "linux"]["engine"], grey[grey["engine"] != "linux"]["scenario"])) \
        == [("nft", "gre-multiflow-fw50")]
    gre = cells[(cells["scenario"] == "gre-multiflow-fw50") & cells["runnable"].astype(str).str.lower().eq("true")]
    says(NAME, f"GRE is filled by the engines that build the header themselves: {both(gre['engine'])}")
    measured = ours[ours["offered"].notna()]
    gl = measured[measured["reason"].str.startswith("generator-limited")]
    # the words the figure writes in the grey cells: those of cells.csv, and "generator-limited" for the cells whose
    # every trial the generator fell short of
    labels = list(dict.fromkeys(plots.grey_label(r) for r in grey["reason"])) + ["generator-limited"]
    assert set(labels) == {plots.grey_label(r) for r in ours["reason"] if r}
    assert {plots.grey_label(r) for r in gl["reason"]} == {"generator-limited"} and (gl["runs"] == 0).all()
    says(NAME, "The figure writes the reason in each grey cell (" + ", ".join(f'"{x}"' for x in labels) + ")")
    t = trials(NAME)
    lim = t[t["limited"]]
    by = lim.groupby("engine").size().sort_values(ascending=False, kind="stable")
    first = lim["offered_pps"].min()
    none = [x for x in ENGINES if x not in by.index]
    lim_cells = lim.groupby(["experiment", "offered_pps"]).size()
    full = measured[measured["offered"] == 1.0]
    assert (gl["offered"] == 1.0).all()
    says(NAME, f"{len(lim)} of the {len(t)} trials were generator-limited, from "
               f"{first / ceiling_of():.1f} of the ceiling ({pps(first)} pps) up, in {len(lim_cells)} cells: "
               + ", ".join(f"{k} {v}" for k, v in by.items()) + (f"; none of {either(x + chr(39) + 's' for x in none)}"
                                                                  if none else ""),
         f"{(full['runs'] < 5).sum()} of the {len(full)} cells at the ceiling kept fewer than 5, and {len(gl)} of them "
         "none: " + ", ".join(f"{r} {SPOKEN[comparison.SCENARIOS[s]]}" for s, r in zip(gl["scenario"], gl["router"]))
         + ". Those are grey (\"generator-limited\" in the figure); every other cell kept at least one trial.")
    assert one_or_more(measured[measured["reason"] == ""])


def test_comparison_validation():
    t = trials(NAME)
    s = superseded(NAME, "superseded_trials.csv")
    assert (s["why"] != "").all() and s["disturbed"].all()
    again = t[t["attempt"] > 1]
    assert len(s) == (again["attempt"] - 1).sum()
    made = s.groupby(KEYS).size()
    assert (again.set_index(KEYS).loc[made.index, "attempt"] == made + 1).all()
    says(NAME, f"{len(again)} of the {len(t)} kept trials were measured again, with {len(s)} attempts set aside "
               "(`superseded_trials.csv`)")
    steal, stop, lag = by_reason(s)
    one = lambda x: f"{x:.1f}"  # noqa: E731
    says(NAME, f"steal above 2% in {len(steal)} ({span(steal['steal'], pct(1))}%), "
               f"a stop of the router's CPU in {len(stop)} (read as {span(stop['cpu_stop_ms'], one)} ms, against a "
               f"queue of {span(stop['queue_ms'], one)} ms), a lag of the generator in {len(lag)} "
               f"({span(lag['gen_late_ms'], one)} ms; {short_lag(s).sum()} of them no longer than the router's queue)")
    dist = t[t["disturbed"]].assign(why=lambda x: why(x))
    assert (dist["attempt"] == 4).all() and (dist["why"] != "").all() and not dist["limited"].any()
    says(NAME, "They count in the tables like every kept trial.")
    # "They count in the tables like every kept trial": comparison.ours counts every delivered kept trial
    o = comparison.ours(D / NAME).set_index(["router", "scenario", "offered"])
    back = {v: k for k, v in comparison.SCENARIOS.items()}
    k = kept().groupby(["engine", "scenario", "offered_pps"]).size()
    for (eng, sc_, load), _ in dist.groupby(["engine", "scenario", "offered_pps"]):
        assert o.loc[(eng, back[sc_], round(load / ceiling_of(), 2)), "runs"] == k[eng, sc_, load]


def test_comparison_intervals(ours):
    m = ours[ours["reason"] == ""]
    u = m[m["uncertain"]]
    # the colours, as routerlab.comparison gives them
    assert [comparison.colour(x) for x in (0.0, 1e-9, 4.99, 5.0, np.nan)] == ["green", "yellow", "yellow", "red", "grey"]
    assert (m["colour"] == m["loss_pct"].map(comparison.colour)).all()
    says(NAME, "coloured as the published tables are: green for no loss, yellow for a loss above 0 and below 5%, red "
               "for 5% or more, grey for a cell with no trial (`routerlab.comparison`)")
    says(NAME, f"{len(u)} of the {len(m)} cells with trials have an interval that reaches another colour")
    yg = u[(u["colour"] == "yellow") & (u["colour_low"] == "green")]
    both_ = yg[yg["colour_high"] == "red"]
    yr = u[(u["colour"] == "yellow") & (u["colour_low"] == "yellow")]
    ry = u[(u["colour"] == "red") & (u["colour_low"] == "yellow")]
    rg = u[(u["colour"] == "red") & (u["colour_low"] == "green")]
    assert len(yg) + len(yr) + len(ry) + len(rg) == len(u) and (yr["colour_high"] == "red").all()
    assert ry.index.intersection(rg.index).empty
    says(NAME, f"{len(yg)} yellow cells reach green ({len(both_)} of them reach red as well; the figure hatches those "
               f"green), {len(yr)} yellow cell{'s' if len(yr) != 1 else ''} reach{'' if len(yr) != 1 else 'es'} red, "
               f"{len(ry)} red cell{'s' if len(ry) != 1 else ''} reach{'' if len(ry) != 1 else 'es'} yellow only and "
               f"{len(rg)} more reach{'' if len(rg) != 1 else 'es'} green")


def figure_cells(ours) -> tuple:
    """The figure the notebook draws from these files (plots.loss_tables, as notebooks/router-comparison.ipynb calls
    it): its hatched cells by (colour, hatch colour), its "n=1" cells, and the words in its grey cells."""
    fig = plots.loss_tables(ours, x_label="offered load (fraction of the generator's ceiling)",
                            title="Ours (namespace testbed)", show_ci=True)

    def name(rgb):
        hit = [k for k, v in plots.COLOURS.items() if np.allclose(rgb[:3], plt.matplotlib.colors.to_rgb(v))]
        assert len(hit) == 1
        return hit[0]

    hatched, single, words = {}, 0, set()
    captions = " ".join(t.get_text() for ax in fig.axes for t in ax.texts)
    for ax in fig.axes:
        for tbl in ax.tables:
            for (row, col), cell in tbl.get_celld().items():
                if row == 0 or col < 0:
                    continue
                face, text = name(cell.get_facecolor()), cell.get_text().get_text()
                single += text.endswith("\nn=1")
                if face == "grey":
                    words.add(text)
                if cell.get_hatch():
                    key = (face, name(cell.get_hatchcolor()))
                    hatched[key] = hatched.get(key, 0) + 1
    plt.close(fig)
    return hatched, single, words, " ".join(captions.split())


def test_comparison_figure(ours):
    """What the README says the figure shows: the hatches, the "n=1" cells, the grey cells' words."""
    hatched, single, words, captions = figure_cells(ours)
    m = ours[ours["reason"] == ""]
    u = m[m["uncertain"]]
    yg = u[(u["colour"] == "yellow") & (u["colour_low"] == "green")]
    assert sum(hatched.values()) == len(u) and hatched.get(("yellow", "green"), 0) == len(yg)
    assert hatched.get(("yellow", "red"), 0) == len(u[(u["colour"] == "yellow") & (u["colour_low"] == "yellow")])
    assert single == (m["runs"] == 1).sum()
    assert words == {plots.grey_label(r) for r in ours["reason"] if r}
    says(NAME, "the figure hatches each in that colour", "\"n=1\" in the tables")
    # and each grey cell's reason in full under its table
    for reason in set(ours["reason"]) - {""}:
        assert reason in captions, reason
    says(NAME, "and in full under each table")


def test_comparison_steal(halting):
    t = trials(NAME)
    every, then = attempts(D / NAME), attempts(halting)
    limit = TrialValidation().steal_threshold
    assert all(float(notes(x)["steal_threshold"]) == limit for _, x in experiments().iterrows())
    high = every["steal"] > limit
    says(NAME, f"{high.sum()} of the {len(every):,} attempts (the {len(t)} kept trials and the {len(every) - len(t)} "
               f"set aside) had more than {limit:.0%} (at most {100 * every['steal'].max():.1f}%; "
               f"{100 * every['steal'].mean():.2f}% on average), against {(then['steal'] > limit).sum()} of "
               f"{len(then):,} (at most {100 * then['steal'].max():.1f}%; {100 * then['steal'].mean():.2f}% on "
               "average) with the CPUs halting")
    assert high.mean() < (then["steal"] > limit).mean() / 2 and every["steal"].mean() < then["steal"].mean() / 2
    # the halting run (the files the polling ones replaced) was measured in the evening
    assert pd.to_datetime(then["started_at"]).min().hour >= 18
    says(NAME, "**Steal was lower than in the evening halting run, but not gone.**")
    # by scenario, in the order measured, each run
    part = {}
    for label, a in (("now", every), ("then", then)):
        at = pd.to_datetime(a["started_at"])
        order = at.groupby(a["scenario"]).min().sort_values().index
        assert list(order) == ["single-flow-fw50", "gre-multiflow-fw50", "routes900k-multiflow-fw50", "ddos-drop50"]
        part[label] = {s: a[a["scenario"] == s] for s in order}
        part[label + "_at"] = at
    now = part["now"]
    first = pd.to_datetime(now["single-flow-fw50"]["started_at"])
    last = pd.to_datetime(now["ddos-drop50"]["started_at"])
    says(NAME, "By scenario, in the order measured: " + ", ".join(
        f"{(g['steal'] > limit).sum()} of {'the ' if i == 0 else ''}{len(g)}{' attempts' if i == 0 else ''} "
        f"{SPOKEN[s]}" + (f" ({first.min():%H:%M}-{first.max():%H:%M} UTC)" if i == 0 else "")
        for i, (s, g) in enumerate(list(now.items())[:3]))
        + f" and {(now['ddos-drop50']['steal'] > limit).sum()} of {len(now['ddos-drop50'])} in the drop scenario "
          f"(from {last.min():%H:%M} UTC); with the CPUs halting "
        + ", ".join(f"{(g['steal'] > limit).sum()} of {len(g)}" for g in list(part["then"].values())[:3])
        + f" and {(part['then']['ddos-drop50']['steal'] > limit).sum()} of {len(part['then']['ddos-drop50'])}")
    # the drop scenario: more attempts above the threshold than with the CPUs halting, the one scenario so
    more = [s for s in now if (now[s]["steal"] > limit).sum() > (part["then"][s]["steal"] > limit).sum()]
    assert more == ["ddos-drop50"]
    says(NAME, "more than with the CPUs halting in the drop scenario only")
    k, hk = t[t["steal"] > limit], trials(datasets.read(halting).trials)
    says(NAME, f"{len(k)} of the {len(t)} kept trials still had more than 2% (at most {100 * k['steal'].max():.1f}%), "
               f"against {(hk['steal'] > limit).sum()} with the CPUs halting")


def test_comparison_disturbed():
    t = trials(NAME)
    dist = t[t["disturbed"]].assign(why=lambda x: why(x))
    n = dist.groupby("engine").size()
    sc = dist.groupby("scenario").size()
    says(NAME, f"{len(dist)} kept trials are still `disturbed` after 3 repeats, at "
               f"{span(dist['offered_pps'], pps)} pps: " + ", ".join(
                   f"{sc.get(s, 0)} {SPOKEN[s]}" for s in ("single-flow-fw50", "gre-multiflow-fw50",
                                                          "routes900k-multiflow-fw50"))
         + f" and {sc.get('ddos-drop50', 0)} {SPOKEN['ddos-drop50']}; "
         + ", ".join(f"{k} {n.get(k, 0)}" for k in ENGINES))
    with_steal = dist[dist["why"].str.startswith("steal")]
    rest = dist.drop(with_steal.index)
    assert (rest["steal"] <= TrialValidation().steal_threshold).all()
    assert rest["why"].str.contains("router CPU stopped|generator fell behind").all()
    by = rest.groupby("engine").size().sort_values(ascending=False, kind="stable")
    says(NAME, f"{len(with_steal)} of them for steal above 2% ({span(with_steal['steal'], pct(1))}%); the other "
               f"{len(rest)} ({', '.join(f'{k} {v}' for k, v in by.items())}) for a stop of the router's CPU or a lag "
               "of the generator only")
    lossless = dist[dist["lost"] == 0]
    assert len(lossless) > 1 and (lossless["why"].str.startswith("steal") & ~lossless["why"].str.contains(";")).all()
    says(NAME, f"{len(lossless)} of them ("
               + both(f"{x.experiment} at {pps(x.offered_pps)} pps" for x in lossless.itertuples())
               + ") lost nothing, disturbed by steal alone")


def test_comparison_verdicts(ours):
    v = comparison.verdicts(ours)
    why_ = ours[["scenario", "router", "verdict_why"]].drop_duplicates()
    v = v[v["verdict"] != ""].merge(why_, on=["scenario", "router"])
    good = v[v["verdict"] == "GOOD"]
    says(NAME, f"{len(good)} of the {len(v)} rows are **GOOD**", f"{len(v) - len(good)} are **BAD**")
    # the verdict as the README defines it: the code's "PDR load" is the crossing, and the TIR it tests the next load's
    p = stats.VerdictParams()
    says(NAME, "GOOD when the throughput stops growing right after the *crossing*, the first load whose mean loss "
               f"passes {100 * p.pdr:g}% (the reasons below call it \"the PDR load\"): at the next load it grows by "
               f"less than {p.eta * p.entry_multiplier:g} pps per pps of load added, and by less than {p.eta:g} at "
               "every later load; BAD when it does not.")
    for a in stats.assess(kept()):
        if a.verdict.pdr_index is not None:
            assert a.verdict.candidate_index in (None, a.verdict.pdr_index + 1)
            s_ = a.summary["plr"].to_numpy()
            assert s_[a.verdict.pdr_index] > p.pdr and (s_[:a.verdict.pdr_index] <= p.pdr).all()
    for (verdict, w), g in v.groupby(["verdict", "verdict_why"], sort=False):
        rows = "; ".join(f"{r} ({', '.join(SHORT[s] for s in gr['scenario'])})"
                         for r, gr in g.groupby("router", sort=False))
        says(NAME, f"- {verdict}, {w}: {rows}")
    # the rows where saturation was not reached passed every load the tables hold, up to 0.8 of the ceiling; at the
    # ceiling the generator delivered none of their trials (grey)
    open_ = v[v["verdict_why"].str.startswith("saturation not reached")]
    assert set(open_["router"]) == {"fastclick-dpdk"}
    row = ours[(ours["router"] == "fastclick-dpdk") & ours["scenario"].isin(open_["scenario"])
               & ours["offered"].notna()]
    held = row[row["reason"] == ""]
    grey_ = row[row["reason"] != ""]
    assert (grey_["offered"] == 1.0).all() and len(grey_) == len(open_) and (grey_["runs"] == 0).all()
    top = held[held["offered"] == held["offered"].max()]
    assert top["offered"].nunique() == 1 and (held.groupby("scenario")["offered"].max() == top["offered"].iloc[0]).all()
    cap = comparison.capacity(ours).set_index(["scenario", "router"])
    assert (cap.loc[[(s, "fastclick-dpdk") for s in open_["scenario"]], "status"] == "at_least_max").all()
    assert (cap.loc[[(s, "fastclick-dpdk") for s in open_["scenario"]], "capacity"] == top["offered"].iloc[0]).all()
    says(NAME, f"The {len(open_)} rows where saturation was not reached, fastclick-dpdk "
               f"{both(SPOKEN[comparison.SCENARIOS[s]] for s in open_['scenario'])}, lost at most "
               f"{held['loss_pct'].max():.3g}% at any load the tables hold, up to {top['offered'].iloc[0]:g} of the "
               f"ceiling ({pps(top['offered_pps'].iloc[0])} pps; {both(f'{x:.0f}' for x in top['runs'])} trials there); "
               f"at the ceiling the generator delivered none of the 5 in each (grey).")
    # the trials left out there (generator-limited), which the tables do not count
    t = trials(NAME)
    out = t[t["limited"] & (t["engine"] == "fastclick-dpdk") & (t["offered_pps"] == ceiling_of())
            & t["scenario"].isin(["routes900k-multiflow-fw50", "ddos-drop50"])]
    r9 = out[out["scenario"] == "routes900k-multiflow-fw50"]
    dr = out[out["scenario"] == "ddos-drop50"]
    assert len(r9) == len(dr) == 5 and (r9["lost"] > 0).all() and (r9["loss"] > 0.005).all()
    dl = dr[dr["lost"] > 0].sort_values("lost", ascending=False)
    says(NAME, f"The {len(r9) + len(dr)} trials at the ceiling, left out (generator-limited), were sent at "
               f"{span(out['sent_pps'], pps)} pps; with 900k routes each lost "
               f"{span(r9['loss'], lambda x: f'{100 * x:.2g}')}% ({span(r9['lost'], pps)} packets), in the drop "
               f"scenario {len(dl)} of the {len(dr)} lost packets (" + both(pps(x) for x in dl["lost"]) + ").")
    # bmv2: GOOD in every scenario, with no PDR: it fails the lowest load and saturates right after it
    bm = v[v["router"] == "bmv2"]
    assert (bm["verdict"] == "GOOD").all() and (bm["verdict_why"] == "saturation right after the PDR load").all()
    assert (cap.xs("bmv2", level="router")["status"] == "below_range").all()
    lowest = ours[ours["router"] == "bmv2"].dropna(subset=["offered"])
    lowest = lowest[lowest["offered"] == lowest["offered"].min()]
    assert (lowest["loss_pct"] > 100 * stats.PDR_FRACTION).all() and lowest["offered_pps"].nunique() == 1
    says(NAME, f"bmv2's {len(bm)} rows are GOOD with no PDR: each loses more than {100 * stats.PDR_FRACTION:g}% "
               f"already at the lowest load "
               f"({pps(lowest['offered_pps'].iloc[0])} pps) and saturates right after it, so there GOOD says that the "
               "sweep shows bmv2 saturated, with its capacity below the lowest load.")


def test_comparison_non_monotone_rows(ours):
    m = ours[ours["reason"] == ""]
    falls = []
    for (s, r), g in m.groupby(["scenario", "router"], sort=False):
        g = g.sort_values("offered")
        for (_, a), (_, b) in zip(g.iloc[:-1].iterrows(), g.iloc[1:].iterrows()):
            if b["loss_pct"] < a["loss_pct"]:
                inside = a["loss_pct"] - a["ci95_pct"] <= b["loss_pct"] <= a["loss_pct"] + a["ci95_pct"]
                falls.append((s, r, a, b, inside))
    rows = {(s, r) for s, r, *_ in falls}
    out = [x for x in falls if not x[4]]
    says(NAME, f"the mean loss falls from one load to the next higher one {len(falls)} times, in {len(rows)} of the "
               f"{m.groupby(['scenario', 'router']).ngroups} rows. In "
               + (f"all {len(falls)}" if not out else f"{len(falls) - len(out)} of them")
               + " the lower mean lies inside the 95% interval of the load before it")
    for s, r, a, b, _ in out:
        says(NAME, f"{r} {SPOKEN[comparison.SCENARIOS[s]]}, {three(a['loss_pct'])}% at {a['offered']:g} of the "
                   f"ceiling, {three(b['loss_pct'])}% at {b['offered']:g} (the interval at {a['offered']:g} is "
                   f"{three(a['loss_pct'] - a['ci95_pct'])}-{three(a['loss_pct'] + a['ci95_pct'])}%)")


def test_comparison_rankings_are_pdrs(ours):
    pub = comparison.published()
    ranking = comparison.orderings(pub, ours).set_index(["scenario", "source"]).iloc[:, 0]
    on, at_least = [], []
    for label, df in (("published", pub), ("ours", ours)):
        cap = comparison.capacity(df)
        for s, table_name in TABLE.items():
            c = cap[cap["scenario"] == s]
            text = ranking[s, label]
            if label == "ours":  # "≥": on how many trials, where the generator delivered fewer than 5 at that load
                for r in c[c["status"] == "at_least_max"].itertuples():
                    at_least.append((s, r.router, r.capacity))
                    n = df[(df["scenario"] == s) & (df["router"] == r.router) & (df["offered"] == r.capacity)]["runs"]
                    if int(n.iloc[0]) < 5:
                        k = int(n.iloc[0])
                        old = f"{r.router} (≥{r.capacity:g})"
                        assert old in text
                        text = text.replace(old, f"{r.router} (≥{r.capacity:g}, on {k} trial{'s' if k > 1 else ''})")
                        on.append((k, s, r.router, r.capacity))
            below = c[c["status"] == "below_range"]["router"].tolist()
            if below:
                text += f"; {', '.join(below)} {'loses' if len(below) == 1 else 'lose'} more at the lowest load"
            says(NAME, f"| {table_name} | " if label == "published" else f"| {text} |", text)
    assert "≥" in " ".join(ranking[:, "ours"]) and len(on) == 1
    # each "≥" stops below the ceiling, where the generator delivered none of the row's trials (a grey cell)
    caps = {x[2] for x in at_least}
    assert len(caps) == 1 and len({x[1] for x in at_least}) == 1
    for s, r, _ in at_least:
        top = ours[(ours["scenario"] == s) & (ours["router"] == r) & (ours["offered"] == 1.0)]
        assert len(top) == 1 and top["reason"].iloc[0].startswith("generator-limited") and top["runs"].iloc[0] == 0
    says(NAME, "\"≥\" marks a router that passed every load the tables hold for it, whose capacity is only known to "
               f"be at least that load: here {at_least[0][1]} "
               f"{both(SPOKEN[comparison.SCENARIOS[s]] for s, _, _ in at_least)}, at {caps.pop():g}, as the generator "
               "delivered none of its trials at the ceiling (grey).")
    (k, s, r, frac), = on
    runs = trials(NAME).groupby(["experiment", "offered_pps"]).size().max()
    t = trials(NAME)
    left = t[t["limited"] & (t["experiment"] == f"{r}-{comparison.SCENARIOS[s]}")
             & np.isclose(t["offered_pps"], frac * ceiling_of())]
    assert len(left) == runs - k and (left["lost"] == 0).all()
    says(NAME, f"\"on {k} trials\": at {frac:g} of the ceiling {SPOKEN[comparison.SCENARIOS[s]]} the generator "
               f"delivered {k} of the {runs} trials to {r}, and the \"≥\" rests on them (the {runs - k} left out lost "
               "nothing).")


def test_comparison_in_words(ours, halting):
    m = ours[ours["reason"] == ""]
    cap = comparison.capacity(ours)
    found = cap.dropna(subset=["capacity"])
    pcap = comparison.capacity(comparison.published())
    ceiling = ceiling_of()

    def cells(router):
        return m[m["router"] == router].set_index(["scenario", "offered"])

    def load(frac):
        return pps(m[m["offered"] == frac]["offered_pps"].iloc[0])

    def spoken(s):
        return SPOKEN[comparison.SCENARIOS[s]]

    rank = found.assign(r=found.groupby("scenario")["capacity"].rank(method="min", ascending=False))
    rank = rank.set_index(["scenario", "router"])
    # FastClick on DPDK: first everywhere, alone but with GRE, where ebpf ties it; DANOS leads three published tables
    firsts = rank[rank["r"] == 1].reset_index().groupby("scenario")["router"].apply(sorted).to_dict()
    alone = [s for s in SHORT if firsts[s] == ["fastclick-dpdk"]]
    tied = {s: v for s, v in firsts.items() if s not in alone}
    assert tied == {"gre_multiflow_50fw": ["ebpf", "fastclick-dpdk"]}
    ptop = pcap.dropna(subset=["capacity"]).sort_values("capacity").groupby("scenario").tail(1)
    assert (ptop["router"] == "DANOS").sum() == 3
    says(NAME, "**FastClick on DPDK leads here, as DANOS (DPDK) leads three of the four published tables.**",
         "(`fastclick-dpdk`) is first in every scenario: alone " + ", ".join(spoken(s) for s in alone[:-1])
         + f" and {spoken(alone[-1])}, tied with ebpf in the GRE table "
           f"({rank.loc[('gre_multiflow_50fw', 'fastclick-dpdk'), 'capacity']:g})")
    dp = cells("fastclick-dpdk")
    offered = dp.index.get_level_values("offered")
    clean = max(f for f in sorted(set(offered)) if (dp[offered <= f]["loss_pct"] == 0).all())
    drop = dp.loc["ddos_drop_50pct"]["loss_pct"]
    drop_clean = max(f for f in drop.index if (drop[drop.index <= f] == 0).all())
    assert drop_clean > clean
    says(NAME, f"It loses nothing up to {clean:g} of the ceiling ({load(clean)} pps) in any scenario, and nothing in "
               f"the drop scenario up to {drop_clean:g} ({load(drop_clean)} pps)")
    t = trials(NAME)
    lim = t[t["limited"]]
    by = lim.groupby("engine").size()
    assert by.idxmax() == "fastclick-dpdk" and (by.drop("fastclick-dpdk") < by["fastclick-dpdk"]).all()
    low = lim[lim["engine"] == "fastclick-dpdk"]["offered_pps"].min()
    says(NAME, "Its receive runs on the generator's CPU (\"CPU placement\"), and the generator fell short under it "
               f"more often than under any other engine ({by['fastclick-dpdk']} of the {len(lim)} trials it could not "
               f"deliver, from {low / ceiling:g} of the ceiling up), so its top loads rest on fewer trials.")
    # where it is first alone, it passes 0.8 of the ceiling, above every other engine's PDR
    below = sorted(f for f in set(offered) if f < 1.0)[-1]
    at = dp.xs(below, level="offered").loc[alone]
    others = found[found["router"] != "fastclick-dpdk"]["capacity"].max()
    assert (at["loss_pct"] <= 100 * stats.PDR_FRACTION).all() and others < below
    says(NAME, f"Where it is first alone, it passes {below:g} of the ceiling ({load(below)} pps), "
               + ", ".join(f"on {r.runs:.0f} trials {spoken(s)} ("
                           + ("losing nothing" if r.loss_pct == 0 else f"{sig2(r.loss_pct / 100)}%") + ")"
                           for s, r in at.iterrows())
               + f", and no other engine passes a load above {others:g}.")
    assert set(loss_places().loc["fastclick-dpdk"].index) == {"dut FromDPDKDevice@4.hw_dropped"}
    says(NAME, "Every packet it lost was at FromDPDKDevice's `hw_dropped` (its AF_XDP ring).")
    # nft: second in each of its three scenarios, at the same load; tied with ebpf in the drop scenario
    nr = rank.xs("nft", level="router")
    assert len(nr) == 3 and (nr["r"] == 2).all() and nr["capacity"].nunique() == 1
    nc = nr["capacity"].iloc[0]
    tied_nft = found[(found["capacity"] == nc) & (found["router"] != "nft") & found["scenario"].isin(nr.index)]
    assert list(zip(tied_nft["router"], tied_nft["scenario"])) == [("ebpf", "ddos_drop_50pct")]
    says(NAME, f"**nft is second in each of its three scenarios, at {nc:g} of the ceiling ({load(nc)} pps)**, in the "
               "drop scenario tied with ebpf")
    nft = cells("nft")["loss_pct"]
    after = sorted(x for x in set(m["offered"]) if x > nc)[0]
    says(NAME, f"At {after:g} ({load(after)} pps) it loses " + ", ".join(
        f"{sig2(nft[s, after] / 100)}% {spoken(s)}"
        for s in ("single_flow_50fw", "routes_900k_multiflow_50fw", "ddos_drop_50pct")))
    # ebpf: tied first with GRE (where Linux-XDP leads the published table), tied second in the drop scenario, third
    # in the other two, behind fastclick-dpdk and nft
    er = rank.xs("ebpf", level="router")
    assert er.loc["gre_multiflow_50fw", "r"] == 1 and er.loc["ddos_drop_50pct", "r"] == 2
    third = ["single_flow_50fw", "routes_900k_multiflow_50fw"]
    assert (er.loc[third, "r"] == 3).all() and er.loc[third, "capacity"].nunique() == 1
    for s in third:
        assert set(rank.xs(s, level="scenario").query("r < 3").index) == {"fastclick-dpdk", "nft"}
    assert ptop.set_index("scenario").loc["gre_multiflow_50fw", "router"] == "Linux-XDP"
    says(NAME, f"**The XDP router (`ebpf`) ties first in the GRE table ({er.loc['gre_multiflow_50fw', 'capacity']:g}), "
               f"as Linux-XDP leads the published one, ties second in the drop scenario "
               f"({er.loc['ddos_drop_50pct', 'capacity']:g}), and is third with one flow and with 900k routes "
               f"({er.loc[third[0], 'capacity']:g}), behind fastclick-dpdk and nft.**")
    eb = cells("ebpf")["loss_pct"]
    upto = eb[eb.index.get_level_values("offered") <= 0.8]
    top = eb.xs(1.0, level="offered")
    says(NAME, f"Its loss is small but comes early: at most {upto.max():.2f}% up to 0.8 of the ceiling in every "
               f"scenario, {span(top, lambda x: f'{x:.1f}')}% at the ceiling")
    # every lost packet of ebpf: dut NOT_SPECIFIED, trial by trial the generator's g0.tx_dropped
    k = kept()
    ek = k[k["engine"] == "ebpf"]
    assert set(loss_places().loc["ebpf"].index) == {"dut NOT_SPECIFIED"}
    assert (ek["lost_unexplained"] == 0).all()
    d = datasets.read_drops([D / NAME])
    d = d[d["experiment"].str.startswith("ebpf-")]
    ring = d[(d["counted_as"] == "loss")].groupby(KEYS)["packets"].sum()
    refused = d[(d["place"] == "tg") & (d["reason"] == "g0.tx_dropped")].set_index(KEYS)["packets"].sort_index()
    assert ring.index.equals(refused.index) and (ring == refused).all()
    q = experiments().set_index("engine").loc["ebpf", "notes"].iloc[0]
    slots = int(notes({"notes": q})["router_queue_packets"])
    ql = ek.groupby("offered_pps")["queue_ms"].first()
    r1, r2 = sorted(ql.index)[:2]
    assert abs(ql[r1] - 1e3 * slots / r1) < 0.01
    says(NAME, f"veth refusing frames because the {slots}-slot XDP ring in front of the router was full. That ring "
               f"lasts {ql[r1]:.1f} ms at {pps(r1)} pps and {ql[r2]:.1f} ms at {pps(r2)} pps")
    lows = ek[ek["offered_pps"].isin([r1, r2])]
    assert (lows["lost"] == 0).all()
    hk = kept(halting)
    hlo = sorted(hk["offered_pps"].unique())[:2]
    he = hk[(hk["engine"] == "ebpf") & hk["offered_pps"].isin(hlo)]
    hl = he[he["lost"] > 0]
    assert hl["experiment"].nunique() == 1
    says(NAME, f"At these two loads ebpf lost no packet in any of its {len(lows)} trials; with the CPUs halting, at "
               f"{pps(hlo[0])} and {pps(hlo[1])} pps, in {len(hl)} of its {len(he)}, {SPOKEN[hl['scenario'].iloc[0]]}")
    # click and fastclick: behind ebpf everywhere, last of the engines with a PDR in every scenario
    cf = found[found["router"].isin(["click", "fastclick"])]
    c = found.set_index(["scenario", "router"])["capacity"]
    for s_ in SHORT:
        for r in ("click", "fastclick"):
            assert c[s_, r] < c[s_, "ebpf"], (s_, r)
    lasts_ = found[found.groupby("scenario")["capacity"].transform("min") == found["capacity"]]
    assert set(lasts_["router"]) <= {"click", "fastclick"} and set(lasts_["scenario"]) == set(SHORT)
    parts = []
    for s_, g in lasts_.groupby("scenario", sort=False):
        parts.append(f"{' and '.join(g['router'])} {spoken(s_)} ({g['capacity'].iloc[0]:g})")
    says(NAME, f"**click and fastclick are at {span(cf['capacity'], lambda x: f'{x:g}')}, behind ebpf in every "
               "scenario and last of the engines with a PDR**: " + ", ".join(parts) + ".")
    # bmv2
    bmv2 = cells("bmv2")["loss_pct"]
    b1, b2 = bmv2.xs(0.1, level="offered"), bmv2.xs(0.2, level="offered")
    says(NAME, f"It loses {span(b1, lambda x: f'{x:.1f}')}% already at 10% of the ceiling ({load(0.1)} pps), and "
               f"{span(b2, lambda x: f'{x:.0f}')}% at 20%",
         f"its PDR in `testbed-bmv2` is {datasets.read_searches([D / BMV2]).set_index('engine').loc['bmv2', 'answer']}")
    assert (cap[cap["router"] == "bmv2"]["status"] == "below_range").all()
    says(NAME, "**bmv2 fails the lowest load in every scenario.**")
    # at full load
    full = ours[(ours["offered"] == 1.0)]
    done = full[full["reason"] == ""]
    assert full.drop(done.index)["reason"].str.startswith("generator-limited").all()
    red, yellow, green = (done[done["colour"] == c] for c in ("red", "yellow", "green"))
    assert len(red) + len(yellow) + len(green) == len(done) and len(green) == 0
    says(NAME, f"**At full load no cell is green, {len(yellow)} yellow.** The generator delivered trials at the "
               f"ceiling in {len(done)} of the {len(full)} rows: {len(red)} red "
               f"({span(red['loss_pct'], lambda x: f'{x:.1f}')}%), {len(yellow)} yellow "
               f"({span(yellow['loss_pct'], lambda x: f'{x:.2g}')}%: "
               + both(f"{r.router} {spoken(r.scenario)}" for r in yellow.itertuples())
               + f"); the other {len(full) - len(done)} are grey (generator-limited, above)",
         f"fractions of a {ceiling / 1e3:.0f} kpps generator")
    pub = comparison.published()
    tops = pub[pub["offered"] == pub.groupby("scenario")["offered"].transform("max")]
    assert tops["colour"].isin(["red", "grey"]).all()


def share(x) -> str:
    """A counter's share of an engine's counted loss, as the README's table writes it."""
    return "all" if x == 1 else f"{100 * x:.1f}%" if x >= 0.1 else f"{sig2(x)}%"


#: The counters that took each engine's loss.
PLACES = {"nft": {"dut CPU_BACKLOG"}, "ebpf": {"dut NOT_SPECIFIED"},
          "click": {"dut FromDevice@4.kernel_drops", "dut CPU_BACKLOG", "dut out/Queue@1.drops"},
          "fastclick": {"dut FromDevice@4.kernel_drops", "dut CPU_BACKLOG", "dut out/Queue@1.drops"},
          "fastclick-dpdk": {"dut FromDPDKDevice@4.hw_dropped"},
          "bmv2": {"dut d0.capture_drops", "dut egress_queue_drops", "dut CPU_BACKLOG"}}


def test_comparison_where_the_loss_went(halting):
    k = kept()
    tot = k.groupby("engine")[["lost", "lost_unexplained"]].sum()
    d = loss_places()
    sh = d / d.groupby(level=0).transform("sum")
    click_like = ("FromDevice's capture socket, `kernel_drops` ({}); dut CPU_BACKLOG and the output Queue, the rest")
    where = {
        "nft": f"dut CPU_BACKLOG ({share(sh['nft', 'dut CPU_BACKLOG'])})",
        "ebpf": f"dut NOT_SPECIFIED, the XDP ring ({share(sh['ebpf', 'dut NOT_SPECIFIED'])})",
        "click": click_like.format(share(sh["click", "dut FromDevice@4.kernel_drops"])),
        "fastclick": click_like.format(share(sh["fastclick", "dut FromDevice@4.kernel_drops"])),
        "fastclick-dpdk": f"FromDPDKDevice `hw_dropped`, its AF_XDP ring "
                          f"({share(sh['fastclick-dpdk', 'dut FromDPDKDevice@4.hw_dropped'])})",
        "bmv2": f"simple_switch's capture socket, `d0.capture_drops` ({share(sh['bmv2', 'dut d0.capture_drops'])}); "
                f"its egress queues, `egress_queue_drops` ({share(sh['bmv2', 'dut egress_queue_drops'])}); "
                "dut CPU_BACKLOG, the rest"}
    for eng, w in where.items():
        says(NAME, f"| {eng} | {pps(tot.loc[eng, 'lost'])} | {w} | {pps(tot.loc[eng, 'lost_unexplained'])} |")
    # the places named are every counter that took loss, in this run and with the CPUs halting
    then = loss_places(halting)
    for eng, places in PLACES.items():
        assert set(d.loc[eng].index) == places and set(then.loc[eng].index) == places, eng
    says(NAME, "The same counters took the loss with the CPUs halting, engine by engine.")
    # every remainder is in the drop scenario
    un = k.groupby(["engine", "scenario"])[["lost", "lost_unexplained", "trace_missed"]].sum()
    nz = un[un["lost_unexplained"] != 0]
    assert (nz.index.get_level_values("scenario") == "ddos-drop50").all()
    assert set(nz.index.get_level_values("engine")) == {"nft", "click", "fastclick", "bmv2"}
    zero = k[(k["engine"] == "nft") & (k["lost"] == 0)]
    assert (zero["lost_unexplained"] > 0).any() and (k["lost_unexplained"] < 0).any()
    says(NAME, "| engine | lost | where (share of the counted loss) | lost minus attributed (`lost_unexplained`) |",
         f"negative, or more than was lost (nft trials that lost nothing have up to "
         f"{pps(zero['lost_unexplained'].max())} there)")
    says(NAME, "Every non-zero count in the last column is in the drop scenario",
         "No lost packet of any other scenario is unexplained")
    n = un.loc[("nft", "ddos-drop50")]
    assert n["lost_unexplained"] > 0 and abs(n["trace_missed"] / n["lost_unexplained"] - 1) < 0.1
    says(NAME, f"in the same trials it missed {pps(n['trace_missed'])} of the sink's packets (`trace_missed`), close "
               f"to nft's {pps(n['lost_unexplained'])}")
    says(NAME, f"({n['lost_unexplained'] / n['lost']:.0%} of the {pps(n['lost'])} packets nft lost in that scenario)")
    neg = nz.drop(("nft", "ddos-drop50"))
    assert (neg["lost_unexplained"] < 0).all()
    says(NAME, f"The negative counts of click, fastclick and bmv2 are at most "
               f"{(-neg['lost_unexplained'] / neg['lost']).max():.2%} of their loss in that scenario")
    # the firewall's own count for nft and ebpf; the estimate at the legitimate share for the others
    assert set(drops.FIREWALL_DROPS) == {"nft", "ebpf"}
    says(NAME, "by the firewall's own count where it has one (nft, ebpf), else at the legitimate share, 50% (click, "
               "fastclick, bmv2), an estimate")
    share_ = {float(re.search(r"drop_share=([\d.]+)", x).group(1))
              for x in experiments().set_index("experiment").loc[[f"{x}-ddos-drop50" for x in ENGINES], "scenario"]}
    assert len(share_) == 1
    says(NAME, f"the error of the {share_.pop():.0%} estimate")


def pdr_cells(folder) -> dict:
    """Each row's PDR@0.5% in pps as the README's last table writes it ("<" below the lowest
    load, "≥" at least the top load offered), and the load (None below the lowest)."""
    o = comparison.ours(folder)
    loads = o.dropna(subset=["offered"]).groupby(["scenario", "router"])
    out = {}
    for r in comparison.capacity(o).itertuples():
        if r.status == "not tested":
            continue
        at = loads.get_group((r.scenario, r.router)).set_index("offered")["offered_pps"]
        if r.status == "below_range":
            out[r.scenario, r.router] = (f"<{pps(at.min())}", None, None)
        else:
            out[r.scenario, r.router] = (("≥" if r.status == "at_least_max" else "") + pps(at[r.capacity]),
                                         float(at[r.capacity]), r.capacity)
    return out


def test_comparison_against_halting(halting):
    he, ne = experiments(halting), experiments()
    assert list(he["engine_version"]) == list(ne["engine_version"]) and set(he["kernel"]) == set(ne["kernel"])
    ht = datasets.read(halting).trials
    at = pd.to_datetime(ht["started_at"])
    says(NAME, f"The files measured with idle CPUs halting, which the polling files replaced, were measured the day "
               f"before ({at.min():%Y-%m-%d}), from {at.min():%H:%M} to "
               f"{at.max():%H:%M} UTC, with the machine to itself too, by "
               "`scripts/remeasure-testbed.sh OUT testbed-click click-course testbed-bmv2 comparison` (this dataset "
               f"last), in git at commit {HALTING[:7]}, with the same engine builds on the same kernel, and a "
               f"generator ceiling of {pps(ceiling_of(halting))} pps")
    # idle CPUs halted then: the record names no idle mode (the code before the change did not hold the request)
    assert not he["pinning"].str.contains("idle CPUs").any() and ne["pinning"].str.contains("idle CPUs: poll").all()
    # the lag rule then: a lag, as a stop, had to outlast the queue (as at POLL_COMPARISON_CODE; not since LAG_CODE)
    hv = committed("lib/routerlab/validation.py", CODE_ALONE)
    assert "and accounts(lag):" in hv and "(queue is None or ms > queue)" in hv
    says(NAME, "The code differs in three more ways: the lag rule (a lag of the generator had to outlast the router's "
               "queue then, as in the polling files: above), the validation now adds up the stops and lags")
    # the validation's totals: not recorded then, so those trials were judged on the longest stop or lag alone
    assert not set(TOTALS) & set(ht.columns)
    says(NAME, "the halting files have no `cpu_stops`, `cpu_stopped_ms` or `gen_lagged_ms`")
    hg, ng = he["generator"].unique(), ne["generator"].unique()
    assert len(hg) == len(ng) == 1 and hg[0] != ng[0]
    says(NAME, f"the generator's build (`{hg[0].split(' (')[0]}` then, `{ng[0].split(' (')[0]}` now)")
    says(NAME, f"This run's ceiling is {1 - ceiling_of() / ceiling_of(halting):.0%} lower")
    assert ceiling_of() < ceiling_of(halting)
    then, now = pdr_cells(halting), pdr_cells(D / NAME)
    assert then.keys() == now.keys()
    for eng in ENGINES:
        row = [f"{then[s, eng][0]} → {now[s, eng][0]}" if (s, eng) in now else "grey" for s in SHORT]
        says(NAME, f"| {eng} | " + " | ".join(row) + " |")
    both_ = [x for x in now if then[x][1] is not None and now[x][1] is not None]
    higher = [x for x in both_ if now[x][1] > then[x][1]]
    lower = [x for x in both_ if now[x][1] < then[x][1]]
    frac_up = [x for x in both_ if now[x][2] > then[x][2]]
    frac_down = [x for x in both_ if now[x][2] < then[x][2]]
    says(NAME, f"Of the {len(both_)} rows with a PDR both times, {len(higher)} are higher now in pps and "
               f"{len(lower)} lower" + (f", {len(both_) - len(higher) - len(lower)} the same" if
                                        len(both_) > len(higher) + len(lower) else ""),
         f"as a fraction of each run's ceiling, {len(frac_up)} higher, {len(frac_down)} lower and "
         f"{len(both_) - len(frac_up) - len(frac_down)} the same")
    for x in lower:
        says(NAME, f"{x[1]} {SPOKEN[comparison.SCENARIOS[x[0]]]} ({then[x][0]} → {now[x][0]} pps)")
    assert set(frac_down) <= set(lower)
    says(NAME, f"The {len(lower)} lower in pps:", "lower as a fraction too: " + both(
        f"{r} {SPOKEN[comparison.SCENARIOS[s]]}" for s, r in frac_down))
    assert all(then[s, "bmv2"][1] is None and now[s, "bmv2"][1] is None for s in SHORT)
    says(NAME, "bmv2 failed its lowest load both times")
    ov, nv = comparison.verdicts(comparison.ours(halting)), comparison.verdicts(comparison.ours(D / NAME))
    ov, nv = ov[ov["verdict"] != ""]["verdict"], nv[nv["verdict"] != ""]["verdict"]
    hk, nk = trials(ht), trials(NAME)
    hs = pd.read_csv(halting / "superseded_trials.csv")
    ns = pd.read_csv(D / NAME / "superseded_trials.csv")
    hg_cells = comparison.ours(halting)["reason"].str.startswith("generator-limited").sum()
    ng_cells = comparison.ours(D / NAME)["reason"].str.startswith("generator-limited").sum()
    says(NAME, f"The verdicts were {(ov == 'GOOD').sum()} GOOD and {(ov == 'BAD').sum()} BAD, now "
               f"{(nv == 'GOOD').sum()} and {(nv == 'BAD').sum()}",
         f"{hk['limited'].sum()} trials were generator-limited then ({hg_cells} grey cells), {nk['limited'].sum()} "
         f"now ({ng_cells})",
         f"The validation measured {(hk['attempt'] > 1).sum()} trials again then ({len(hs)} attempts), "
         f"{(nk['attempt'] > 1).sum()} now ({len(ns)} attempts), and kept {hk['disturbed'].sum()} `disturbed` then, "
         f"{nk['disturbed'].sum()} now")
    # the lowest loads: lossy trials of the engines other than bmv2
    part = []
    for folder in (halting, D / NAME):
        k = kept(folder)
        lo = sorted(k["offered_pps"].unique())[:2]
        x = k[k["offered_pps"].isin(lo) & (k["engine"] != "bmv2")]
        lossy = x[x["lost"] > 0]
        part.append((lo, len(x), lossy))
    (hlo, hn, hl), (nlo, nn, nl) = part
    assert len(nl) < len(hl)
    says(NAME, f"At each run's two lowest loads, the engines other than bmv2 lost packets in {len(hl)} of their {hn} "
               f"trials with the CPUs halting (at {pps(hlo[0])} and {pps(hlo[1])} pps; {hl['disturbed'].sum()} of "
               f"them kept `disturbed`) and in " + (f"{len(nl)} of {nn} now (at {pps(nlo[0])} and {pps(nlo[1])} pps; "
                                                   f"{nl['disturbed'].sum()} of them kept `disturbed`)" if len(nl) else
                                                   f"none of {nn} now (at {pps(nlo[0])} and {pps(nlo[1])} pps)")
               + f": these loads are {1 - nlo[0] / hlo[0]:.0%} lower "
               "now, so the counts are not of the same test")
    assert abs(nlo[1] / hlo[1] - nlo[0] / hlo[0]) < 0.001
    assert (hk["attempt"] > 1).sum() > (nk["attempt"] > 1).sum() and hk["disturbed"].sum() > nk["disturbed"].sum()
    # the orderings: fastclick-dpdk first everywhere (tied with ebpf with GRE now) and nft second in its three, both
    # times; ebpf from last with GRE to tied first, and ahead of click in every table now (tied or behind then)
    ranks = {}
    for label, folder in (("then", halting), ("now", D / NAME)):
        c = comparison.capacity(comparison.ours(folder)).dropna(subset=["capacity"])
        ranks[label] = c.assign(r=c.groupby("scenario")["capacity"].rank(method="min", ascending=False)).set_index(
            ["scenario", "router"])["r"]
        last = c.groupby("scenario")["capacity"].transform("min") == c["capacity"]
        ranks[label + "_last"] = set(zip(c[last]["scenario"], c[last]["router"]))
        assert (ranks[label].xs("fastclick-dpdk", level="router") == 1).all()
        assert (ranks[label].xs("nft", level="router") == 2).all() and len(ranks[label].xs("nft", level="router")) == 3
    firsts_now = {x for x, r in ranks["now"].items() if r == 1}
    assert {x for x in firsts_now if x[1] != "fastclick-dpdk"} == {("gre_multiflow_50fw", "ebpf")}
    assert {x for x, r in ranks["then"].items() if r == 1} == {(s, "fastclick-dpdk") for s in SHORT}
    assert ("gre_multiflow_50fw", "ebpf") in ranks["then_last"]
    for s in SHORT:
        assert ranks["then"][s, "ebpf"] >= ranks["then"][s, "click"]
        assert ranks["now"][s, "ebpf"] < ranks["now"][s, "click"]
    says(NAME, "the orderings moved: fastclick-dpdk first in every table both times (with GRE now tied with ebpf), nft "
               "second in its three both times, but ebpf from last with GRE to tied first, and ahead of click in every "
               "table now, level with or behind it then")
    # the halting code: the testbed held no CPU latency request yet
    assert "cpu_dma_latency" not in committed("lib/routerlab/testbed.py", CODE_ALONE)
    assert "cpu_dma_latency" in committed("lib/routerlab/testbed.py", LAG_CODE)
    says(NAME, f"Its idle CPUs halted (its `pinning` names no idle mode: code {CODE_ALONE[:7]}, before the testbed "
               "held the latency request)")
    colours = []
    for folder in (halting, D / NAME):
        m = comparison.ours(folder)
        m = m[m["reason"] == ""]
        c = m["colour"].value_counts()
        assert c.sum() == len(m)
        colours.append(f"{c.get('green', 0)} green, {c.get('yellow', 0)} yellow and {c.get('red', 0)} red of {len(m)}")
    says(NAME, f"Of the cells with trials, {colours[0].replace(' green', ' were green', 1)} with the CPUs halting; "
               f"{colours[1]} now")
    limit = TrialValidation().steal_threshold
    says(NAME, f"the ceiling ({pps(ceiling_of(halting))} → {pps(ceiling_of())} pps, so lower loads at the same "
               f"fraction)", f"({(attempts(halting)['steal'] > limit).sum()} → {(attempts(D / NAME)['steal'] > limit).sum()} "
                             "attempts above 2%)")
    hd, nd_ = (a_[a_["scenario"] == "ddos-drop50"] for a_ in (attempts(halting), attempts(D / NAME)))
    assert (nd_["steal"] > limit).sum() > (hd["steal"] > limit).sum()
    says(NAME, "**What the two runs can tell.** Against the evening halting run, fewer attempts met steal "
               f"above 2% ({(attempts(halting)['steal'] > limit).sum()} → {(attempts(D / NAME)['steal'] > limit).sum()} "
               f"attempts above 2%), though more in the drop scenario ({(hd['steal'] > limit).sum()} → "
               f"{(nd_['steal'] > limit).sum()}), fewer trials were measured again or kept `disturbed`")
