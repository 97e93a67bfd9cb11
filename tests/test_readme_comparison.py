"""Every number the README of comparison states, recomputed from its files (see readme_checks)."""

import inspect
import re

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from routerlab import comparison, datasets, drops, plots, stats, traffic
from routerlab.validation import TrialValidation
from readme_checks import (BMV2, CODE_ALONE, D, HALTING, POLL_CODE, POLL_COMPARISON_CODE, VETH, committed, pct, pps,
                           previous_files, says, sig2, span, trials, attempts, notes, superseded, why)

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
#: The other testbed datasets, measured earlier the same day by the script's full run (POLL_CODE).
OTHERS = ("testbed-click", "click-course", BMV2, VETH)
#: The columns of the validation's totals of stops and lags, which the halting files lack.
TOTALS = ["cpu_stops", "cpu_stopped_ms", "gen_lagged_ms"]


@pytest.fixture(scope="module")
def ours():
    return comparison.ours(D / NAME)


@pytest.fixture(scope="module")
def halting(tmp_path_factory):
    """The files this data replaced, measured with idle CPUs halting (commit HALTING), in a folder of their own."""
    return previous_files(NAME, tmp_path_factory.mktemp("halting"),
                          ("trials.csv", "experiments.csv", "drops.csv", "cells.csv", "superseded_trials.csv"),
                          commit=HALTING)


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
    assert (measured["reason"] == "").all() and one_or_more(measured)
    one = (few["runs"] == 1).sum()
    says(NAME, f"({fr[0]:g}-{fr[-1]:.1f}, {len(fr)} loads: {pps(t['offered_pps'].min())} to "
               f"{pps(t['offered_pps'].max())} pps). Each cell measured K = 5 trials of T = 2 s, with 64-byte frames",
         f"are left out ({t['limited'].sum()} of the {len(t)}), but every one of the {len(measured)} measured cells "
         f"kept at least one: {len(few)} hold {span(few['runs'], lambda x: f'{x:.0f}')} trials ({one} of them only "
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
    says(NAME, f"**When:** {day} {at.min():%H:%M} to {at.max():%H:%M} UTC (first and last trial start)",
         f"with the code of commit {POLL_COMPARISON_CODE[:7]} (`versions` in `experiments.csv`)")
    assert (e["versions"] == f"routerlab: 0.1.0 (git {POLL_COMPARISON_CODE[:7]})").all()
    # the run's script, as it was at that commit: comparison last of all it can measure, given the one ceiling it
    # measures at its start; run here with `comparison` alone
    script = committed("scripts/remeasure-testbed.sh", POLL_COMPARISON_CODE)
    assert re.search(r'^ALL="testbed-click click-course testbed-bmv2 testbed-veth comparison"$', script, re.M)
    assert script.count("measuring.generator_ceiling()") == 1
    assert script.index("measuring.generator_ceiling()") < script.index("if want testbed-click")
    assert re.search(r'\$R compare --out "?\$O/comparison"? --ceiling "?\$C"?', script.split("if want comparison")[1])
    says(NAME, "by `scripts/remeasure-testbed.sh OUT comparison`",
         f"The generator ceiling is the one that run measured at its start: {pps(ceiling_of())} pps")
    # the four other testbed datasets: measured earlier that day by the script's full run (code POLL_CODE, the same
    # script), with that run's one ceiling, idle CPUs polling too
    assert committed("scripts/remeasure-testbed.sh", POLL_CODE) == script
    starts, ends, ceilings = [], [], set()
    for other in OTHERS:
        oe = experiments(D / other)
        assert (oe["versions"] == f"routerlab: 0.1.0 (git {POLL_CODE[:7]})").all(), other
        assert oe["pinning"].str.contains("; idle CPUs: poll (", regex=False).all(), other
        ceilings |= set(oe[oe["command"].str.contains("--ceiling")]["generator_ceiling_pps"])
        a, b = first_last(D / other)
        starts.append(a)
        ends.append(b)
    assert len(ceilings) == 1 and ceilings != {ceiling_of()}
    assert f"{min(starts):%Y-%m-%d}" == day and max(ends) < at.min()
    says(NAME, f"The other four testbed datasets were measured earlier that day ({min(starts):%H:%M}-"
               f"{max(ends):%H:%M} UTC) by the script's full run, `scripts/remeasure-testbed.sh OUT`, with code "
               f"{POLL_CODE[:7]}, idle CPUs polling too, and that run's own ceiling, {pps(ceilings.pop())} pps")
    runs = [x for x in script.splitlines() if x.startswith("$R ")]
    assert runs[-1].startswith("$R compare")
    says(NAME, "The script's commands, this one last, are in `scripts/remeasure-testbed.sh`")
    # the halting files: the day before
    h = pd.to_datetime(datasets.read(halting).trials["started_at"])
    assert h.max() < min(starts) and f"{h.min():%Y-%m-%d}" < day


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
    says(NAME, f"up to {int(n[0]['max_repeats'])} times, when its steal is above {float(n[0]['steal_threshold']):.0%}",
         f"longer than the probe's {float(n[0]['probe_period_ms']):g} ms period and than the router's queue lasts")
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
    # the words the figure writes in the grey cells, in the order of cells.csv: no cell is grey for the generator
    labels = list(dict.fromkeys(plots.grey_label(r) for r in ours["reason"] if r))
    assert labels == list(dict.fromkeys(plots.grey_label(r) for r in grey["reason"])) and gl.empty
    says(NAME, "The figure writes the reason in each grey cell (" + ", ".join(f'"{x}"' for x in labels) + ")")
    t = trials(NAME)
    lim = t[t["limited"]]
    by = lim.groupby("engine").size().sort_values(ascending=False, kind="stable")
    first = lim["offered_pps"].min()
    none = [x for x in ENGINES if x not in by.index]
    lim_cells = lim.groupby(["experiment", "offered_pps"]).size()
    says(NAME, f"{len(lim)} of the {len(t)} trials were generator-limited, from "
               f"{first / ceiling_of():.1f} of the ceiling ({pps(first)} pps) up, in {len(lim_cells)} cells: "
               + ", ".join(f"{k} {v}" for k, v in by.items()) + (f"; none of {either(x + chr(39) + 's' for x in none)}"
                                                                  if none else ""),
         "In every cell the generator delivered at least one trial, so no cell is grey for that "
         "(\"generator-limited\" in the figure when one is)")
    assert one_or_more(measured)
    full = measured[measured["offered"] == 1.0]
    says(NAME, f"{(full['runs'] < 5).sum()} of the {len(full)} cells at the ceiling kept fewer than 5")


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
               f"({span(lag['gen_late_ms'], one)} ms)")
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
    # the halting run it replaces was measured in the evening
    assert pd.to_datetime(then["started_at"]).min().hour >= 18
    says(NAME, "**Steal was lower than in the evening halting run it replaces, but not gone.**")
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
    assert len(lossless) == 1 and lossless["why"].str.startswith("steal").all()
    says(NAME, f"One of them ({lossless['experiment'].iloc[0]} at {pps(lossless['offered_pps'].iloc[0])} pps) lost "
               "nothing, disturbed by steal alone")


def test_comparison_verdicts(ours):
    v = comparison.verdicts(ours)
    why_ = ours[["scenario", "router", "verdict_why"]].drop_duplicates()
    v = v[v["verdict"] != ""].merge(why_, on=["scenario", "router"])
    good = v[v["verdict"] == "GOOD"]
    says(NAME, f"{len(good)} of the {len(v)} rows are **GOOD**", f"{len(v) - len(good)} are **BAD**")
    for (verdict, w), g in v.groupby(["verdict", "verdict_why"], sort=False):
        rows = "; ".join(f"{r} ({', '.join(SHORT[s] for s in gr['scenario'])})"
                         for r, gr in g.groupby("router", sort=False))
        says(NAME, f"- {verdict}, {w}: {rows}")
    # the rows where saturation was not reached passed every load, up to the ceiling
    open_ = v[v["verdict_why"].str.startswith("saturation not reached")]
    assert set(open_["router"]) == {"fastclick-dpdk"}
    row = ours[(ours["router"] == "fastclick-dpdk") & ours["scenario"].isin(open_["scenario"])
               & ours["offered"].notna()]
    assert (row["reason"] == "").all() and row["offered"].max() == 1.0
    cap = comparison.capacity(ours).set_index(["scenario", "router"])
    assert (cap.loc[[(s, "fastclick-dpdk") for s in open_["scenario"]], "status"] == "at_least_max").all()
    top = row[row["offered"] == 1.0]
    assert (top["runs"] == 1).all()
    says(NAME, f"The {len(open_)} rows where saturation was not reached, fastclick-dpdk "
               f"{both(SPOKEN[comparison.SCENARIOS[s]] for s in open_['scenario'])}, lost at most "
               f"{row['loss_pct'].max():.3g}% at any load, up to the ceiling, where the generator delivered "
               f"{top['runs'].iloc[0]:.0f} trial of 5 in each.")
    # the trials left out there (generator-limited), which the tables do not count
    t = trials(NAME)
    out = t[t["limited"] & (t["engine"] == "fastclick-dpdk")]
    r9 = out[out["scenario"] == "routes900k-multiflow-fw50"]
    dr = out[out["scenario"] == "ddos-drop50"]
    assert len(r9) == len(dr) == 5 - 1 and (r9["lost"] > 0).all() and (r9["loss"] > 0.005).all()
    dl = dr[dr["lost"] > 0].sort_values("lost", ascending=False)
    says(NAME, f"The tables leave out the other {len(r9)} of each (generator-limited): with 900k routes they were sent "
               f"at {span(r9['sent_pps'], pps)} pps and each lost {span(r9['loss'], lambda x: f'{100 * x:.2g}')}% "
               f"({span(r9['lost'], pps)} packets); in the drop scenario {len(dl)} of the {len(dr)} lost packets ("
               + both(pps(x) for x in dl["lost"]) + ").")
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
    on = set()
    for label, df in (("published", pub), ("ours", ours)):
        cap = comparison.capacity(df)
        for s, table_name in TABLE.items():
            c = cap[cap["scenario"] == s]
            text = ranking[s, label]
            if label == "ours":  # "≥": on how many trials, where the generator delivered fewer than 5 at that load
                for r in c[c["status"] == "at_least_max"].itertuples():
                    n = df[(df["scenario"] == s) & (df["router"] == r.router) & (df["offered"] == r.capacity)]["runs"]
                    if int(n.iloc[0]) < 5:
                        k = int(n.iloc[0])
                        old = f"{r.router} (≥{r.capacity:g})"
                        assert old in text
                        text = text.replace(old, f"{r.router} (≥{r.capacity:g}, on {k} trial{'s' if k > 1 else ''})")
                        on.add(k)
            below = c[c["status"] == "below_range"]["router"].tolist()
            if below:
                text += f"; {', '.join(below)} {'loses' if len(below) == 1 else 'lose'} more at the lowest load"
            says(NAME, f"| {table_name} | " if label == "published" else f"| {text} |", text)
    assert "≥" in " ".join(ranking[:, "ours"]) and len(on) == 1
    k = on.pop()
    runs = trials(NAME).groupby(["experiment", "offered_pps"]).size().max()
    says(NAME, f"\"on {k} trial\": at the ceiling the generator delivered {k} of the {runs} trials, and the \"≥\" "
               f"rests on it alone (the {runs - k} left out: above).")
    says(NAME, "\"≥\" marks a router that passed every load it was offered")


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

    rank = found.assign(r=found.groupby("scenario")["capacity"].rank(method="min", ascending=False))
    rank = rank.set_index(["scenario", "router"])
    # the kernel-bypass path: first, alone, everywhere, as DANOS leads three published tables
    assert (rank.xs("fastclick-dpdk", level="router")["r"] == 1).all() and (rank["r"] == 1).sum() == 4
    ptop = pcap.dropna(subset=["capacity"]).sort_values("capacity").groupby("scenario").tail(1)
    assert (ptop["router"] == "DANOS").sum() == 3
    says(NAME, "(`fastclick-dpdk`) is first in every scenario, alone")
    dp = cells("fastclick-dpdk")
    offered = dp.index.get_level_values("offered")
    clean = max(f for f in sorted(set(offered)) if (dp[offered <= f]["loss_pct"] == 0).all())
    says(NAME, f"It loses nothing up to {clean:g} of the ceiling ({load(clean)} pps) in any scenario")
    drop = dp.loc["ddos_drop_50pct"]
    assert (drop["loss_pct"] == 0).all() and drop.index.max() == 1.0
    t = trials(NAME)
    left = t[t["limited"] & (t["engine"] == "fastclick-dpdk") & (t["scenario"] == "ddos-drop50")]
    says(NAME, f"and nothing in the drop scenario at any load, up to the ceiling (where the generator delivered "
               f"{drop.loc[1.0, 'runs']:.0f} of the 5 trials; {(left['lost'] > 0).sum()} of the {len(left)} left out "
               "lost packets)")
    lim = t[t["limited"]]
    says(NAME, f"which is why the generator falls short under it at the top loads "
               f"({(lim['engine'] == 'fastclick-dpdk').sum()} of the {len(lim)} trials it could not deliver)")
    # its first place does not rest on the ceiling: it passes 0.8 on 5 delivered trials everywhere, above every other
    # engine's PDR
    below = sorted(f for f in set(offered) if f < 1.0)[-1]
    at = dp.xs(below, level="offered")
    others = found[found["router"] != "fastclick-dpdk"]["capacity"].max()
    assert (at["runs"] == 5).all() and len(at) == 4 and (at["loss_pct"] <= 0.5).all() and others < below
    says(NAME, f"Its first place does not: at {below:g} of the ceiling ({load(below)} pps), where the generator "
               f"delivered all 5 trials in every scenario, it loses at most {at['loss_pct'].max():.2f}%, and no other "
               f"engine passes a load above {others:g}.")
    assert set(loss_places().loc["fastclick-dpdk"].index) == {"dut FromDPDKDevice@4.hw_dropped"}
    # nft: second in each of its three scenarios, at the same load; tied with ebpf in the drop scenario
    nr = rank.xs("nft", level="router")
    assert len(nr) == 3 and (nr["r"] == 2).all() and nr["capacity"].nunique() == 1
    nc = nr["capacity"].iloc[0]
    tied = found[(found["capacity"] == nc) & (found["router"] != "nft")]
    assert list(zip(tied["router"], tied["scenario"])) == [("ebpf", "ddos_drop_50pct")]
    says(NAME, f"**nft is second in each of its three scenarios, at {nc:g} of the ceiling ({load(nc)} pps)**, in the "
               "drop scenario tied with ebpf")
    nft = cells("nft")["loss_pct"]
    after = sorted(x for x in set(m["offered"]) if x > nc)[0]
    says(NAME, f"At {after:g} ({load(after)} pps) it loses " + ", ".join(
        f"{sig2(nft[s, after] / 100)}% {SPOKEN[comparison.SCENARIOS[s]]}"
        for s in ("single_flow_50fw", "routes_900k_multiflow_50fw", "ddos_drop_50pct")))
    # ebpf: second with GRE (where Linux-XDP leads the published table), tied second in the drop scenario, last in
    # the other two; its loss small but early
    er = rank.xs("ebpf", level="router")
    assert er.loc["gre_multiflow_50fw", "r"] == 2 and er.loc["ddos_drop_50pct", "r"] == 2
    last = found.groupby("scenario")["capacity"].transform("min") == found["capacity"]
    lasts = found[last].groupby("scenario")["router"].apply(sorted).to_dict()
    assert lasts["single_flow_50fw"] == lasts["routes_900k_multiflow_50fw"] == ["ebpf"]
    assert ptop.set_index("scenario").loc["gre_multiflow_50fw", "router"] == "Linux-XDP"
    says(NAME, f"**The XDP router (`ebpf`) is second in the GRE table ({er.loc['gre_multiflow_50fw', 'capacity']:g}), "
               f"as Linux-XDP leads the published one, tied second in the drop scenario "
               f"({er.loc['ddos_drop_50pct', 'capacity']:g}), and last with one flow and with 900k routes "
               f"({span(er.loc[['single_flow_50fw', 'routes_900k_multiflow_50fw'], 'capacity'], lambda x: f'{x:g}')})"
               ".**")
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
    low = ek[ek["offered_pps"].isin([r1, r2])]
    lossy = low[low["lost"] > 0]
    assert lossy["experiment"].nunique() == 1 and lossy["offered_pps"].nunique() == 1 and len(lossy) == 1
    x = lossy.iloc[0]
    assert x["disturbed"] and x["steal"] > TrialValidation().steal_threshold
    says(NAME, f"At these two loads ebpf lost packets in one trial of its {len(low)}, "
               f"{SPOKEN[x['scenario']]} at {pps(x['offered_pps'])} pps, kept `disturbed` with steal above 2% "
               f"({100 * x['steal']:.1f}%)")
    hk = kept(halting)
    hlo = sorted(hk["offered_pps"].unique())[:2]
    he = hk[(hk["engine"] == "ebpf") & hk["offered_pps"].isin(hlo)]
    hl = he[he["lost"] > 0]
    assert hl["experiment"].nunique() == 1
    says(NAME, f"with the CPUs halting, at {pps(hlo[0])} and {pps(hlo[1])} pps, in {len(hl)} of its {len(he)}, "
               f"{SPOKEN[hl['scenario'].iloc[0]]}")
    # click and fastclick: between
    cf = found[found["router"].isin(["click", "fastclick"])]
    lasts_ = found[found.groupby("scenario")["capacity"].transform("min") == found["capacity"]]
    cf_last = lasts_[lasts_["router"].isin(["click", "fastclick"])]
    assert set(cf_last["scenario"]) == {"gre_multiflow_50fw", "ddos_drop_50pct"} and len(cf_last) == 2
    says(NAME, f"**click and fastclick are at {span(cf['capacity'], lambda x: f'{x:g}')}**: ahead of ebpf with one "
               "flow and with 900k routes, behind it with GRE and in the drop scenario, where they come last of the "
               "engines with a PDR: " + ", ".join(f"{r.router} {SPOKEN[comparison.SCENARIOS[r.scenario]]} "
                                                 f"({r.capacity:g})" for r in cf_last.itertuples()) + ".")
    c = found.set_index(["scenario", "router"])["capacity"]
    for s_, ahead in (("single_flow_50fw", True), ("routes_900k_multiflow_50fw", True), ("gre_multiflow_50fw", False),
                      ("ddos_drop_50pct", False)):
        for r in ("click", "fastclick"):
            assert (c[s_, r] > c[s_, "ebpf"]) == ahead, (s_, r)
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
    assert len(done) == len(full)
    red, yellow, green = (done[done["colour"] == c] for c in ("red", "yellow", "green"))
    assert len(red) + len(yellow) + len(green) == len(done) and len(green) == 1
    g = green.iloc[0]
    says(NAME, f"**At full load {len(green)} cell is green, {len(yellow)} yellow.** The generator delivered trials at "
               f"the ceiling in all {len(full)} rows: {len(red)} red ({span(red['loss_pct'], lambda x: f'{x:.1f}')}%), "
               f"{len(yellow)} yellow ({span(yellow['loss_pct'], lambda x: f'{x:.2g}')}%) and {g['router']} in the "
               f"{SHORT[g['scenario']]} scenario green, from {g['runs']:.0f} trial",
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
    assert n["lost_unexplained"] > n["lost"]
    says(NAME, f"more than the {pps(n['lost'])} packets nft lost in that scenario")
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
    says(NAME, f"The data this replaces was measured the day before ({at.min():%Y-%m-%d}), from {at.min():%H:%M} to "
               f"{at.max():%H:%M} UTC, with the machine to itself too, by "
               "`scripts/remeasure-testbed.sh OUT testbed-click click-course testbed-bmv2 comparison` (this dataset "
               f"last), in git at commit {HALTING[:7]}, with the same engine builds on the same kernel, and a "
               f"generator ceiling of {pps(ceiling_of(halting))} pps")
    # idle CPUs halted then: the record names no idle mode (the code before the change did not hold the request)
    assert not he["pinning"].str.contains("idle CPUs").any() and ne["pinning"].str.contains("idle CPUs: poll").all()
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
               f"them kept `disturbed`) and in {len(nl)} of {nn} now (at {pps(nlo[0])} and {pps(nlo[1])} pps; "
               f"{nl['disturbed'].sum()} of them kept `disturbed`): these loads are {1 - nlo[0] / hlo[0]:.0%} lower "
               "now, so the counts are not of the same test")
    assert abs(nlo[1] / hlo[1] - nlo[0] / hlo[0]) < 0.001
    assert (hk["attempt"] > 1).sum() > (nk["attempt"] > 1).sum() and hk["disturbed"].sum() > nk["disturbed"].sum()
    # the orderings: fastclick-dpdk first everywhere and nft second in its three, both times; ebpf from last with GRE
    # to second, fastclick from last with one flow to third
    ranks = {}
    for label, folder in (("then", halting), ("now", D / NAME)):
        c = comparison.capacity(comparison.ours(folder)).dropna(subset=["capacity"])
        ranks[label] = c.assign(r=c.groupby("scenario")["capacity"].rank(method="min", ascending=False)).set_index(
            ["scenario", "router"])["r"]
        last = c.groupby("scenario")["capacity"].transform("min") == c["capacity"]
        ranks[label + "_last"] = set(zip(c[last]["scenario"], c[last]["router"]))
        assert (ranks[label].xs("fastclick-dpdk", level="router") == 1).all()
        assert (ranks[label].xs("nft", level="router") == 2).all() and len(ranks[label].xs("nft", level="router")) == 3
    assert ("gre_multiflow_50fw", "ebpf") in ranks["then_last"] and ranks["now"]["gre_multiflow_50fw", "ebpf"] == 2
    assert ("single_flow_50fw", "fastclick") in ranks["then_last"]
    assert ranks["now"]["single_flow_50fw", "fastclick"] == 3
    says(NAME, "the orderings moved: fastclick-dpdk first in every table both times, nft second in its three both "
               "times, but ebpf from last with GRE to second, and fastclick from last with one flow to third")
    # the halting code: the testbed held no CPU latency request yet
    assert "cpu_dma_latency" not in committed("lib/routerlab/testbed.py", CODE_ALONE)
    assert "cpu_dma_latency" in committed("lib/routerlab/testbed.py", POLL_COMPARISON_CODE)
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
    says(NAME, "**What the two runs can tell.** Against the evening halting run it replaces, fewer attempts met steal "
               f"above 2% ({(attempts(halting)['steal'] > limit).sum()} → {(attempts(D / NAME)['steal'] > limit).sum()} "
               f"attempts above 2%), though more in the drop scenario ({(hd['steal'] > limit).sum()} → "
               f"{(nd_['steal'] > limit).sum()}), fewer trials were measured again or kept `disturbed`")
