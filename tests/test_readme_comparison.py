"""Every number the README of comparison states, recomputed from its files (see readme_checks)."""

import inspect
import re

import numpy as np
import pandas as pd
import pytest

from routerlab import comparison, datasets, drops, plots
from routerlab.validation import TrialValidation
from readme_checks import (BMV2, CODE, CODE_ALONE, D, MORNING, VETH, VETH_CODE_ALONE, committed, pct, pps,
                           previous_files, says, sig2, span, trials)

NAME = "comparison"
SHORT = {"single_flow_50fw": "single flow", "gre_multiflow_50fw": "GRE", "routes_900k_multiflow_50fw": "900k routes",
         "ddos_drop_50pct": "drop"}
TABLE = {"single_flow_50fw": "single flow, 50 rules", "gre_multiflow_50fw": "GRE, multi-flow, 50 rules",
         "routes_900k_multiflow_50fw": "900k routes, multi-flow, 50 rules", "ddos_drop_50pct": "50% drop"}
#: The presets as the README's sentences name them (with / in).
SPOKEN = {"single-flow-fw50": "with one flow", "gre-multiflow-fw50": "with GRE",
          "routes900k-multiflow-fw50": "with 900k routes", "ddos-drop50": "in the drop scenario"}
ENGINES = ["nft", "ebpf", "click", "fastclick", "fastclick-dpdk", "bmv2"]
KEYS = ["experiment", "offered_pps", "trial"]


@pytest.fixture(scope="module")
def ours():
    return comparison.ours(D / NAME)


@pytest.fixture(scope="module")
def morning(tmp_path_factory):
    """The files this data replaced: the morning run's (commit MORNING), in a folder of their own."""
    return previous_files(NAME, tmp_path_factory.mktemp("morning"),
                          ("trials.csv", "experiments.csv", "drops.csv", "cells.csv", "superseded_trials.csv"),
                          commit=MORNING)


def notes(e) -> dict:
    """An experiment's ``notes`` as a dict of text values."""
    return dict(kv.split("=", 1) for kv in e["notes"].split("; "))


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


def attempts(folder=D / NAME) -> pd.DataFrame:
    """Every attempt: the kept trials and those set aside."""
    return pd.concat([datasets.read(folder).trials, pd.read_csv(folder / "superseded_trials.csv")])


def why(rows: pd.DataFrame) -> pd.Series:
    """The validation's reasons for each row (a trial or an attempt), ``; ``-separated."""
    return pd.Series([TrialValidation().why_disturbed(r) for r in rows.to_dict("records")], index=rows.index,
                     dtype=str)


def superseded() -> pd.DataFrame:
    """The attempts measured again, each with the validation's reason."""
    s = pd.read_csv(D / NAME / "superseded_trials.csv")
    return s.assign(why=why(s))


def by_reason(df: pd.DataFrame):
    """The rows disturbed by steal, by a stop of the router's CPU, by the generator's lag."""
    return (df[df["why"].str.contains("steal")], df[df["why"].str.contains("router CPU stopped")],
            df[df["why"].str.contains("generator fell behind")])


def busy(x) -> str:
    """A CPU busy share as the README writes it: whole percent from 10%, else one decimal."""
    return f"{100 * x:.0f}" if x >= 0.1 else f"{100 * x:.1f}"


def three(x) -> str:
    """A mean loss in percent with three significant digits ("0" for none)."""
    return "0" if x == 0 else f"{x:#.3g}"


def cpu_by_load(folder) -> pd.DataFrame:
    """Mean ``cpu_load`` of the delivered trials: experiments x offered pps."""
    return kept(folder).groupby(["experiment", "offered_pps"])["cpu_load"].mean().unstack()


def at_rate(cpu: pd.DataFrame, exp: str, rate: float) -> float:
    """An experiment's CPU share at a rate, interpolated linearly between its two nearest loads (the rate inside
    them)."""
    row = cpu.loc[exp].dropna()
    assert row.index.min() <= rate <= row.index.max()
    return float(np.interp(rate, row.index, row.to_numpy()))


def around(cpu: pd.DataFrame, rows: list, rate: float) -> tuple:
    """The two loads of ``cpu`` a rate lies between, each measured in every one of ``rows`` (so ``at_rate``
    interpolates between these two for each)."""
    below, above = max(x for x in cpu.columns if x <= rate), min(x for x in cpu.columns if x > rate)
    assert cpu.loc[rows, [below, above]].notna().all().all()
    return below, above


def loss_places(folder=D / NAME) -> pd.Series:
    """Lost packets of the kept, delivered trials per engine and counter (``place reason``)."""
    k = kept(folder)
    d = datasets.read_drops([folder])
    rows = d[d["counted_as"] == "loss"].merge(k[KEYS + ["engine"]], on=KEYS)
    return rows.assign(w=rows["place"] + " " + rows["reason"]).groupby(["engine", "w"])["packets"].sum()


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
    assert measured["reason"].str.startswith("generator-limited").sum() == (measured["reason"] != "").sum()
    says(NAME, f"({fr[0]:g}-{fr[-1]:.1f}, {len(fr)} loads: {pps(t['offered_pps'].min())} to "
               f"{pps(t['offered_pps'].max())} pps). Each cell measured K = 5 trials of T = 2 s, with 64-byte frames",
         f"are left out ({t['limited'].sum()} of the {len(t)}), so {(measured['reason'] != '').sum()} of the "
         f"{len(measured)} measured cells hold no trial (grey, \"generator-limited\"), "
         f"{len(few)} hold {span(few['runs'], lambda x: f'{x:.0f}')} trials ({(few['runs'] == 1).sum()} of them only "
         "one, which has no interval: \"n=1\" in the tables)",
         f"the start of that run, before the other datasets: {pps(ceiling)} pps",
         f"--ceiling {ceiling:.0f}")
    for col in ("kernel", "cpu", "pinning"):
        assert e[col].nunique() == 1
    cpus = int(re.fullmatch(r".* x(\d+)", e["cpu"].iloc[0]).group(1))
    says(NAME, f"kernel {e['kernel'].iloc[0]}), {cpus} vCPUs ({e['cpu'].iloc[0]})", f"`{e['pinning'].iloc[0]}`")
    assert (e["command"].str.replace(r"--out \S+", "--out datasets/comparison", regex=True)
            == f"routerlab compare --out datasets/comparison --ceiling {ceiling:.0f}").all()
    assert not (e["command"].str.contains("--out datasets/comparison ")).any()  # written to a scratch folder
    # the same builds as in testbed-veth, testbed-click and testbed-bmv2 (each as datasets/ holds it now)
    built = e.drop_duplicates("engine").set_index("engine")["engine_version"]
    # the engines' versions are in engine_version; versions holds at most routerlab's own (records made since
    # datasets.code_version)
    assert e["versions"].fillna("").str.fullmatch(r"(routerlab: [^;]*)?").all()
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


def test_comparison_when(morning):
    t = trials(NAME)
    at = pd.to_datetime(t["started_at"])
    assert at.dt.strftime("%Y-%m-%d").nunique() == 1
    day = f"{at.min():%Y-%m-%d}"
    says(NAME, f"**When:** {day} {at.min():%H:%M} to {at.max():%H:%M} UTC (first and last trial start)",
         f"with the code of commit {CODE_ALONE[:7]}")
    committed("README.md", CODE_ALONE)  # skips outside a checkout; fails when the commit is unknown there
    assert all("probe_period_ms" in notes(x) for _, x in experiments().iterrows())  # the code of the stop probe
    # the run's script, as it was at that commit: the datasets it names, in this order, comparison last, each given
    # the one ceiling measured at its start
    script = committed("scripts/remeasure-testbed.sh", CODE_ALONE)
    named = ["testbed-click", "click-course", "testbed-bmv2", NAME]
    blocks = [script.index(f"if want {x}; then") for x in named]
    assert blocks == sorted(blocks) and script.count("measuring.generator_ceiling()") == 1
    assert re.search(r'\$R compare --out "?\$O/comparison"? --ceiling "?\$C"?', script.split("if want comparison")[1])
    says(NAME, "`scripts/remeasure-testbed.sh OUT " + " ".join(named) + "`, which measured `testbed-click`, "
               "`click-course`, `testbed-bmv2`, then this one",
         "The whole run's commands, this one last, are in `scripts/remeasure-testbed.sh`")
    runs = [x for x in script.splitlines() if x.startswith("$R ")]
    assert runs[-1].startswith("$R compare")
    # the other datasets of the run were measured before this one, that evening, with the same ceiling where the
    # script gave it (testbed-bmv2's sweep has fixed loads)
    first_other = None
    for other in ("testbed-click", "click-course", BMV2):
        o = pd.to_datetime(datasets.read(D / other).trials["started_at"])
        assert o.max() < at.min() and f"{o.min():%Y-%m-%d}" == day, other
        first_other = o.min() if first_other is None else min(first_other, o.min())
    for other in ("testbed-click", BMV2):
        r = datasets.read_searches([D / other])
        assert pd.to_datetime(r["when"]).max() <= at.min(), other
    for other in ("testbed-click", "click-course"):
        assert ceiling_of(D / other) == ceiling_of(), other
    # testbed-veth: measured alone earlier, by a run of its own, with its own ceiling
    v = pd.to_datetime(datasets.read(D / VETH).trials["started_at"])
    assert f"{v.min():%Y-%m-%d}" == day and v.max() < first_other
    says(NAME, f"`testbed-veth` was measured alone earlier the same evening (from {v.min():%H:%M} UTC, code "
               f"{VETH_CODE_ALONE[:7]}) by a run of its own, with its own ceiling, {pps(ceiling_of(D / VETH))} pps")
    assert ceiling_of(D / VETH) != ceiling_of()
    # the morning's run: before, the same command
    m = pd.to_datetime(datasets.read(morning).trials["started_at"])
    assert f"{m.min():%Y-%m-%d}" == day and m.max() < v.min()
    me = experiments(morning)
    assert (me["command"].str.replace(r"--out \S+ ", "", regex=True).str.replace(r"--ceiling \d+", "", regex=True)
            == e_command_form()).all()


def e_command_form() -> str:
    """This run's command without its folder and ceiling."""
    c = experiments()["command"].str.replace(r"--out \S+ ", "", regex=True).str.replace(r"--ceiling \d+", "",
                                                                                          regex=True).unique()
    assert len(c) == 1
    return c[0]


def test_comparison_how():
    e = experiments()
    n = [notes(x) for _, x in e.iterrows()]
    for k in ("steal_threshold", "probe_period_ms", "max_repeats", "loss_attribution"):
        assert len({x[k] for x in n}) == 1, k
    assert n[0]["loss_attribution"] == "on"
    says(NAME, f"up to {int(n[0]['max_repeats'])} times, when its steal is above {float(n[0]['steal_threshold']):.0%}",
         f"longer than the probe's {float(n[0]['probe_period_ms']):g} ms period and than the router's queue lasts")
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
    s = superseded()
    d = datasets.read_drops([D / NAME])
    assert len(t) == len(e) * 8 * 5 and len(e) == 23
    says(NAME, f"the {len(t)} kept trials ({len(e)} rows of engine and scenario × {t['offered_pps'].nunique()} "
               f"loads × K = {t.groupby(['experiment', 'offered_pps']).size().max()})",
         f"the {len(s)} attempts that were measured again (same columns)", f"`drops.csv` | {len(d):,} rows")
    assert list(s.columns[:-1]) == list(pd.read_csv(D / NAME / "trials.csv").columns)
    for c in ("cpu_stop_ms", "gen_late_ms", "queue_ms", "attempt", "disturbed", "lost", "lost_attributed",
              "lost_unexplained", "trace_missed", "drops"):
        assert c in t.columns
    assert (t["lost"] == t["tx"] - t["rx"]).all()
    assert (t["lost"] == t["lost_attributed"] + t["lost_unexplained"]).all()
    cells = datasets.read_kind(D / NAME, "cells.csv")
    assert len(cells) == 28 and set(cells["engine"]) == {"linux", *ENGINES}


def test_comparison_cpu1(morning):
    new, old = cpu_by_load(D / NAME), cpu_by_load(morning)
    e = experiments().set_index("experiment")["engine"]
    lo = sorted(old.columns)[:2]  # the morning's two lowest loads, inside this run's range
    at = {r: pd.Series({x: at_rate(new, x, r) for x in new.index}) for r in lo}
    then = {r: old[r] for r in lo}

    def rows(*engines):
        return [x for x in new.index if e[x] in engines]

    nft, one, nine = rows("nft"), "nft-single-flow-fw50", "nft-routes900k-multiflow-fw50"
    (a0, b0), (a1, b1) = around(new, list(new.index), lo[0]), around(new, list(new.index), lo[1])
    assert a0 == min(new.columns) and b0 == a1  # this run's lowest load, below the morning's
    says(NAME, "`cpu_load` is CPU 1's busy share in `/proc/stat` (steal counts as busy), whatever ran there",
         f"at the morning's lowest load, {pps(lo[0])} pps, interpolated linearly between this run's {pps(a0)} and "
         f"{pps(b0)} pps (at {pps(a0)} pps itself nft read {span(new.loc[nft, a0], busy)}%):")
    says(NAME, f"nft read {span(at[lo[0]][nft], busy)}%, against {span(then[lo[0]][nft], busy)}% in the morning "
               f"({busy(then[lo[0]][one])}% with one flow and {busy(then[lo[0]][nine])}% with 900k routes). At "
               f"{pps(lo[1])} pps (interpolated between {pps(a1)} and {pps(b1)} pps) it read "
               f"{span(at[lo[1]][nft], busy)}%, against {span(then[lo[1]][nft], busy)}%")
    eb = rows("ebpf")
    says(NAME, f"ebpf read {span(at[lo[0]][eb], busy)}%, against {span(then[lo[0]][eb], busy)}%")
    assert (then[lo[0]][eb] > at[lo[0]][eb]).all() and (then[lo[1]][nft] > 5 * at[lo[1]][nft]).all()
    cl = rows("click", "fastclick")
    up = [x for x in cl if at[lo[1]][x] > then[lo[1]][x]]
    down = [x for x in cl if x not in up]
    sc = kept().drop_duplicates("experiment").set_index("experiment")["scenario"]
    # lower now only in the drop scenario, for both engines
    assert set(sc[down]) == {"ddos-drop50"} and {e[x] for x in down} == {"click", "fastclick"}
    says(NAME, f"click and fastclick read {span(at[lo[0]][cl], busy)}%, against {span(then[lo[0]][cl], busy)}%; at "
               f"{pps(lo[1])} pps {span(at[lo[1]][cl], busy)}%, against {span(then[lo[1]][cl], busy)}% (higher now in "
               f"{len(up)} of the {len(cl)} rows: all but the drop scenario's)")
    dp, bm = rows("fastclick-dpdk"), rows("bmv2")
    for folder in (D / NAME, morning):  # every trial, delivered or not
        every = datasets.read(folder).trials
        assert (every[every["engine"] == "fastclick-dpdk"]["cpu_load"] == 1).all()
    says(NAME, f"fastclick-dpdk polls, so it reads {100 * new.loc[dp].min().min():.0f}% at every load, in both runs",
         f"reads {span(at[lo[0]][bm], busy)}% at {pps(lo[0])} pps ({span(then[lo[0]][bm], busy)}% in the morning)")
    # the headline: at the lowest load less busy in every row but fastclick-dpdk's and bmv2's, most under nft
    ratio = then[lo[0]] / at[lo[0]]
    assert (ratio[nft + eb + cl] > 1).all() and ratio[nft].max() > 5 * ratio.drop(nft).max()
    says(NAME, "**CPU 1 was less busy at the lowest load than in the morning, most under nft.**")
    # testbed-veth, alone that evening: CPU 1 at its sweeps' lowest loads
    v = datasets.read(D / VETH).trials
    low = v[v["offered_pps"] == v.groupby("experiment")["offered_pps"].transform("min")]
    says(NAME, f"`testbed-veth`, measured alone earlier that evening, read CPU 1 "
               f"{span(low.groupby('experiment')['cpu_load'].mean(), pct())}% busy at its sweeps' lowest loads")


def test_comparison_steal(morning):
    t = trials(NAME)
    every, then = attempts(), attempts(morning)
    limit = TrialValidation().steal_threshold
    assert all(float(notes(x)["steal_threshold"]) == limit for _, x in experiments().iterrows())
    high = every["steal"] > limit
    says(NAME, f"{high.sum()} of the {len(every):,} attempts (the {len(t)} kept trials and the {len(every) - len(t)} "
               f"set aside) had more than {limit:.0%} (at most {100 * every['steal'].max():.1f}%), against "
               f"{(then['steal'] > limit).sum()} of {len(then):,} in the morning run")
    # by scenario, in the order measured
    at = pd.to_datetime(every["started_at"])
    order = at.groupby(every["scenario"]).min().sort_values().index
    part = []
    for s in order:
        g = every[every["scenario"] == s]
        part.append(f"{(g['steal'] > limit).sum()} of {len(g)} {SPOKEN[s]}")
    first, last = order[0], order[-1]
    ft = at[every["scenario"] == first]
    head = part[0].replace(" of ", " of the ", 1).replace(" with ", " attempts with ", 1)
    says(NAME, f"Most were in the scenarios measured first: {head} "
               f"({ft.min():%H:%M}-{ft.max():%H:%M} UTC), {part[1]}, {part[2]} and {part[3]} "
               f"(measured last, from {at[every['scenario'] == last].min():%H:%M} UTC)")
    share = [(every[every["scenario"] == s]["steal"] > limit).mean() for s in order]
    assert share == sorted(share, reverse=True)


def test_comparison_grey_cells(ours):
    cells = datasets.read_kind(D / NAME, "cells.csv")
    grey = cells[~cells["runnable"].astype(str).str.lower().eq("true")]
    assert set(grey[grey["engine"] == "linux"]["scenario"]) == set(cells["scenario"])
    assert grey["reason"].str.contains("firewall").sum() == 4
    assert list(zip(grey[grey["engine"] != "linux"]["engine"], grey[grey["engine"] != "linux"]["scenario"])) \
        == [("nft", "gre-multiflow-fw50")]
    gre = cells[(cells["scenario"] == "gre-multiflow-fw50") & cells["runnable"].astype(str).str.lower().eq("true")]
    says(NAME, f"GRE is filled by the engines that build the header themselves: {', '.join(gre['engine'][:-1])} and "
               f"{gre['engine'].iloc[-1]}")
    measured = ours[ours["offered"].notna()]
    gl = measured[measured["reason"].str.startswith("generator-limited")]
    full = measured[measured["offered"] == 1.0]
    # in the order of cells.csv, then the generator-limited cells
    unfit = [plots.grey_label(r) for r in grey["reason"]]
    labels = list(dict.fromkeys(unfit + [plots.grey_label(r) for r in ours["reason"] if r]))
    assert labels[-1] == "generator-limited"
    says(NAME, "The figure writes the reason in each grey cell (" + ", ".join(f'"{x}"' for x in labels) + ")")
    assert (gl["offered"] == 1.0).all()
    says(NAME, f"(\"generator-limited\"): {len(gl)} cells, all at the ceiling, where "
               f"{(full['reason'] != '').sum()} of the {len(full)} rows are grey")
    t = trials(NAME)
    lim = t[t["limited"]]
    by = lim.groupby("engine").size().sort_values(ascending=False, kind="stable")
    first = lim["offered_pps"].min()
    none = [x for x in ENGINES if x not in by.index]
    assert none == ["nft", "ebpf"]
    says(NAME, f"{len(lim)} of the {len(t)} trials were generator-limited, from "
               f"{first / ceiling_of():.1f} of the ceiling ({pps(first)} pps) up: "
               + ", ".join(f"{k} {v}" for k, v in by.items()) + f"; none of {none[0]}'s or {none[1]}'s")


def test_comparison_validation():
    t = trials(NAME)
    s = superseded()
    assert (s["why"] != "").all() and s["disturbed"].all()
    again = t[t["attempt"] > 1]
    assert len(s) == (again["attempt"] - 1).sum()
    made = s.groupby(KEYS).size()
    assert (again.set_index(KEYS).loc[made.index, "attempt"] == made + 1).all()
    says(NAME, f"{len(again)} of the {len(t)} kept trials were measured again, with {len(s)} attempts set aside "
               "(`superseded_trials.csv`)")
    steal, stop, lag = by_reason(s)
    assert s["why"].str.count(";").max() == 2 and len(steal) + len(stop) + len(lag) > len(s)
    one = lambda x: f"{x:.1f}"  # noqa: E731
    says(NAME, f"with two or three reasons for some attempts: steal above 2% in {len(steal)} "
               f"({span(steal['steal'], pct(1))}%), "
               f"a stop of the router's CPU in {len(stop)} (read as {span(stop['cpu_stop_ms'], one)} ms, against a "
               f"queue of {span(stop['queue_ms'], one)} ms), a lag of the generator in {len(lag)} "
               f"({span(lag['gen_late_ms'], one)} ms)")
    dist = t[t["disturbed"]].assign(why=lambda x: why(x))
    assert (dist["attempt"] == 4).all() and (dist["why"] != "").all() and not dist["limited"].any()
    n = dist.groupby("engine").size()
    sc = dist.groupby("scenario").size()
    says(NAME, f"{len(dist)} kept trials are still `disturbed` after 3 repeats, at "
               f"{span(dist['offered_pps'], pps)} pps: " + ", ".join(
                   f"{sc.get(s, 0)} {SPOKEN[s]}" for s in ("single-flow-fw50", "gre-multiflow-fw50",
                                                          "routes900k-multiflow-fw50"))
         + f" and {sc['ddos-drop50']} {SPOKEN['ddos-drop50']}; " + ", ".join(f"{k} {n[k]}" for k in ENGINES))
    with_steal = dist[dist["why"].str.startswith("steal")]
    rest = dist.drop(with_steal.index)
    assert (rest["steal"] <= TrialValidation().steal_threshold).all() and set(rest["engine"]) == {"ebpf"}
    assert rest["why"].str.contains("router CPU stopped|generator fell behind").all()
    says(NAME, f"{len(with_steal)} of them for steal above 2% ({span(with_steal['steal'], pct(1))}%); the other "
               f"{len(rest)}, all ebpf's, for a stop of the router's CPU or a lag of the generator")
    # "They count in the tables like every kept trial": comparison.ours counts every delivered kept trial
    o = comparison.ours(D / NAME).set_index(["router", "scenario", "offered"])
    back = {v: k for k, v in comparison.SCENARIOS.items()}
    k = kept().groupby(["engine", "scenario", "offered_pps"]).size()
    for (eng, sc_, load), _ in dist.groupby(["engine", "scenario", "offered_pps"]):
        assert o.loc[(eng, back[sc_], round(load / ceiling_of(), 2)), "runs"] == k[eng, sc_, load]
    says(NAME, "They count in the tables like every kept trial.")


def test_comparison_intervals(ours):
    m = ours[ours["reason"] == ""]
    u = m[m["uncertain"]]
    says(NAME, f"{len(u)} of the {len(m)} cells with trials have an interval that reaches another colour")
    yg = u[(u["colour"] == "yellow") & (u["colour_low"] == "green")]
    both = yg[yg["colour_high"] == "red"]
    yr = u[(u["colour"] == "yellow") & (u["colour_low"] == "yellow")]
    ry = u[(u["colour"] == "red") & (u["colour_low"] == "yellow")]
    rg = u[(u["colour"] == "red") & (u["colour_low"] == "green")]
    assert len(yg) + len(yr) + len(ry) + len(rg) == len(u) and (yr["colour_high"] == "red").all()
    # "yellow only": the red cells of ry reach no lower; those of rg, apart from them, pass through yellow too
    assert ry.index.intersection(rg.index).empty
    says(NAME, f"{len(yg)} yellow cells reach green ({len(both)} of them reach red as well; the figure hatches those "
               f"green), {len(yr)} yellow cell{'s' if len(yr) != 1 else ''} reaches red, {len(ry)} red cells reach "
               f"yellow only and {len(rg)} more reach green")


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
    # the one row where saturation was not reached lost nothing at any load the generator could offer
    open_ = v[v["verdict_why"].str.startswith("saturation not reached")]
    assert list(zip(open_["router"], open_["scenario"])) == [("fastclick-dpdk", "ddos_drop_50pct")]
    row = ours[(ours["router"] == "fastclick-dpdk") & (ours["scenario"] == "ddos_drop_50pct") & ours["offered"].notna()]
    done = row[row["reason"] == ""]
    assert (done["loss_pct"] == 0).all() and (row.drop(done.index)["reason"].str.startswith("generator-limited")).all()
    says(NAME, "The one row where saturation was not reached, fastclick-dpdk in the drop scenario, lost nothing at any "
               f"load the generator could offer (up to {done['offered'].max():g} of the ceiling)")


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
    assert len(out) == 1
    s, r, a, b, _ = out[0]
    says(NAME, f"the mean loss falls from one load to the next higher one {len(falls)} times, in {len(rows)} of the "
               f"{m.groupby(['scenario', 'router']).ngroups} rows. In {len(falls) - 1} of them the lower mean lies "
               "inside the 95% interval of the load before it",
         f"The one that does not: {r} in the {SHORT[s]} scenario, {three(a['loss_pct'])}% at {a['offered']:g} of the "
         f"ceiling, {three(b['loss_pct'])}% at {b['offered']:g} (the interval at {a['offered']:g} is "
         f"{three(a['loss_pct'] - a['ci95_pct'])}-{three(a['loss_pct'] + a['ci95_pct'])}%)")


def test_comparison_rankings_are_pdrs(ours):
    pub = comparison.published()
    ranking = comparison.orderings(pub, ours).set_index(["scenario", "source"]).iloc[:, 0]
    for label, df in (("published", pub), ("ours", ours)):
        cap = comparison.capacity(df)
        for s, table_name in TABLE.items():
            c = cap[cap["scenario"] == s]
            text = ranking[s, label]
            below = c[c["status"] == "below_range"]["router"].tolist()
            if below:
                text += f"; {', '.join(below)} {'loses' if len(below) == 1 else 'lose'} more at the lowest load"
            says(NAME, f"| {table_name} | " if label == "published" else f"| {text} |", text)
    assert "≥" in " ".join(ranking[:, "ours"])
    says(NAME, "\"≥\" marks a router that passed every load it was offered")


def test_comparison_in_words(ours, morning):
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
    assert (dp.loc["ddos_drop_50pct", "loss_pct"] == 0).all()
    assert set(loss_places().loc["fastclick-dpdk"].index) == {"dut FromDPDKDevice@4.hw_dropped"}
    top = ours[(ours["router"] == "fastclick-dpdk") & (ours["offered"] == 1.0)]
    grey = top[top["reason"].str.startswith("generator-limited")]["scenario"]
    assert set(grey) == {"single_flow_50fw", "ddos_drop_50pct"}
    says(NAME, "At the ceiling the generator could not offer the load in any trial with one flow or in the drop "
               "scenario")
    # nft: second in each of its three scenarios
    nr = rank.xs("nft", level="router")
    assert len(nr) == 3 and (nr["r"] == 2).all()
    nc = nr["capacity"]
    assert nc["routes_900k_multiflow_50fw"] == nc["ddos_drop_50pct"] > nc["single_flow_50fw"]
    says(NAME, f"**nft is second in each of its three scenarios**: {nc['single_flow_50fw']:g} of the ceiling "
               f"({load(nc['single_flow_50fw'])} pps) with one flow, {nc['ddos_drop_50pct']:g} "
               f"({load(nc['ddos_drop_50pct'])} pps) with 900k routes and in the drop scenario")
    nft = cells("nft")["loss_pct"]
    after, then = round(nc["single_flow_50fw"] + 0.1, 2), round(nc["single_flow_50fw"] + 0.2, 2)
    says(NAME, f"With one flow it loses {sig2(nft['single_flow_50fw', after] / 100)}% at {after:g} ({load(after)} "
               f"pps); with 900k routes {sig2(nft['routes_900k_multiflow_50fw', after] / 100)}% there and "
               f"{sig2(nft['routes_900k_multiflow_50fw', then] / 100)}% at {then:g}")
    t = trials(NAME)
    order = pd.to_datetime(t["started_at"]).groupby(t["scenario"]).min().sort_values().index
    assert order[0] == "single-flow-fw50"
    says(NAME, "the single-flow rows were measured first, with the most steal (above)")
    # ebpf: last with GRE, tied with click for third in the other three; fastclick last in those
    er = rank.xs("ebpf", level="router")
    last = found.groupby("scenario")["capacity"].transform("min") == found["capacity"]
    lasts = found[last].groupby("scenario")["router"].apply(sorted).to_dict()
    assert lasts == {"gre_multiflow_50fw": ["ebpf"], "single_flow_50fw": ["fastclick"],
                     "routes_900k_multiflow_50fw": ["fastclick"], "ddos_drop_50pct": ["fastclick"]}
    for s in ("single_flow_50fw", "routes_900k_multiflow_50fw", "ddos_drop_50pct"):
        assert er.loc[s, "r"] == 3 and rank.loc[(s, "click"), "capacity"] == er.loc[s, "capacity"]
        assert (found[found["scenario"] == s]["capacity"] == er.loc[s, "capacity"]).sum() == 2
    fc = found[found["router"] == "fastclick"].set_index("scenario")["capacity"].drop("gre_multiflow_50fw")
    says(NAME, f"**The XDP router (`ebpf`) is last in the GRE table ({er.loc['gre_multiflow_50fw', 'capacity']:g}) "
               "and tied with click for third in the other three.**",
         f"In those three, fastclick is last here ({span(fc, lambda x: f'{x:g}')})")
    pc = pcap.set_index(["scenario", "router"])["capacity"]
    assert ptop.set_index("scenario").loc["gre_multiflow_50fw", "router"] == "Linux-XDP"
    for s in ("single_flow_50fw", "routes_900k_multiflow_50fw", "ddos_drop_50pct"):
        assert (pc.loc[s].dropna() > pc[s, "Linux-XDP"]).sum() in (1, 2)  # second or third
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
    assert lossy["experiment"].nunique() == 1 and lossy["offered_pps"].nunique() == 1
    where = low[(low["experiment"] == lossy["experiment"].iloc[0])
                & (low["offered_pps"] == lossy["offered_pps"].iloc[0])]
    assert lossy["disturbed"].all() and (lossy["steal"] > TrialValidation().steal_threshold).all()
    says(NAME, f"At these two loads ebpf lost packets only {SPOKEN[lossy['scenario'].iloc[0]]} at "
               f"{pps(lossy['offered_pps'].iloc[0])} pps, in {len(lossy)} of its {len(where)} trials, each kept "
               f"`disturbed` with steal above 2% ({span(lossy['steal'], pct(1))}%)")
    mk = kept(morning)
    mlo = sorted(mk["offered_pps"].unique())[:2]
    me = mk[(mk["engine"] == "ebpf") & mk["offered_pps"].isin(mlo)]
    ml = me[me["lost"] > 0]
    assert ml["scenario"].nunique() == 4
    says(NAME, f"In the morning run, at {pps(mlo[0])} and {pps(mlo[1])} pps, it lost packets in {len(ml)} of its "
               f"{len(me)} trials there, in all four scenarios")
    # bmv2
    bmv2 = cells("bmv2")["loss_pct"]
    b1, b2 = bmv2.xs(0.1, level="offered"), bmv2.xs(0.2, level="offered")
    says(NAME, f"It loses {span(b1, lambda x: f'{x:.0f}')}% already at 10% of the ceiling ({load(0.1)} pps), and "
               f"{span(b2, lambda x: f'{x:.0f}')}% at 20%",
         f"its PDR in `testbed-bmv2` is {datasets.read_searches([D / BMV2]).set_index('engine').loc['bmv2', 'answer']}")
    assert (cap[cap["router"] == "bmv2"]["status"] == "below_range").all()
    says(NAME, "**bmv2 fails the lowest load in every scenario.**")
    # at full load
    full = ours[(ours["offered"] == 1.0)]
    done = full[full["reason"] == ""]
    red, yellow = done[done["colour"] == "red"], done[done["colour"] == "yellow"]
    assert len(red) + len(yellow) == len(done) and len(yellow) == 1
    y = yellow.iloc[0]
    says(NAME, "**At full load one cell is yellow, none green.** The generator delivered trials at the ceiling in "
               f"{len(done)} of the {len(full)} rows: {len(red)} red ({span(red['loss_pct'], lambda x: f'{x:.1f}')}%) "
               f"and {y['router']} in the {SHORT[y['scenario']]} scenario, yellow ({y['loss_pct']:.1f}%); the other "
               f"{len(full) - len(done)} are grey",
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


def test_comparison_where_the_loss_went(morning):
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
    # the places named are every counter that took loss, in this run and in the morning's
    then = loss_places(morning)
    for eng, places in PLACES.items():
        assert set(d.loc[eng].index) == places and set(then.loc[eng].index) == places, eng
    says(NAME, "The same counters took the loss in the morning run, engine by engine.")
    # every remainder is in the drop scenario
    un = k.groupby(["engine", "scenario"])[["lost", "lost_unexplained", "trace_missed"]].sum()
    nz = un[un["lost_unexplained"] != 0]
    assert (nz.index.get_level_values("scenario") == "ddos-drop50").all()
    assert set(nz.index.get_level_values("engine")) == {"nft", "click", "fastclick", "bmv2"}
    says(NAME, "Every non-zero count in the last column is in the drop scenario",
         "No lost packet of any other scenario is unexplained")
    n = un.loc[("nft", "ddos-drop50")]
    assert n["lost_unexplained"] > 0 and abs(n["trace_missed"] / n["lost_unexplained"] - 1) < 0.1
    says(NAME, f"in the same trials it missed {pps(n['trace_missed'])} of the sink's packets (`trace_missed`), close "
               f"to nft's {pps(n['lost_unexplained'])}")
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
            out[r.scenario, r.router] = (f"<{pps(at.min())}", None)
        else:
            out[r.scenario, r.router] = (("≥" if r.status == "at_least_max" else "") + pps(at[r.capacity]),
                                         float(at[r.capacity]))
    return out


def test_comparison_against_the_morning(morning):
    me, ne = experiments(morning), experiments()
    assert list(me["engine_version"]) == list(ne["engine_version"]) and set(me["kernel"]) == set(ne["kernel"])
    mt = datasets.read(morning).trials
    at = pd.to_datetime(mt["started_at"])
    says(NAME, f"The data this replaces was measured the same day ({at.min():%Y-%m-%d}), from {at.min():%H:%M} to "
               f"{at.max():%H:%M} UTC, with code {CODE[:7]} (in git at commit {MORNING[:7]}), with the same engine "
               f"builds on the same kernel, and a generator ceiling of {pps(ceiling_of(morning))} pps")
    assert f"{at.min():%Y-%m-%d}" == f"{pd.to_datetime(trials(NAME)['started_at']).min():%Y-%m-%d}"
    doc = D.parent / "docs" / "testbed.md"
    if doc.exists():
        assert "Other work on the machine spoils a run unseen" in " ".join(doc.read_text().split())
    says(NAME, "It ran beside other work on CPU 1, the router's CPU (`docs/testbed.md`, \"Other work on the machine "
               "spoils a run unseen\")")
    says(NAME, f"This run's ceiling is {1 - ceiling_of() / ceiling_of(morning):.0%} lower")
    assert ceiling_of() < ceiling_of(morning)
    then, now = pdr_cells(morning), pdr_cells(D / NAME)
    assert then.keys() == now.keys()
    for eng in ENGINES:
        row = [f"{then[s, eng][0]} → {now[s, eng][0]}" if (s, eng) in now else "grey" for s in SHORT]
        says(NAME, f"| {eng} | " + " | ".join(row) + " |")
    both = [x for x in now if then[x][1] is not None and now[x][1] is not None]
    higher = [x for x in both if now[x][1] > then[x][1]]
    lower = [x for x in both if now[x][1] < then[x][1]]
    assert len(higher) + len(lower) == len(both)
    single = [x for x in lower if x[0] == "single_flow_50fw"]
    others = [x for x in lower if x[0] != "single_flow_50fw"]
    assert {r for _, r in single} == {"nft", "ebpf", "click", "fastclick"}
    assert others == [("routes_900k_multiflow_50fw", "fastclick"), ("ddos_drop_50pct", "fastclick")]
    says(NAME, f"Of the {len(both)} rows with a PDR both times, {len(higher)} are higher now in pps and {len(lower)} "
               "lower: all four single-flow rows of nft, ebpf, click and fastclick, and fastclick with 900k routes and "
               "in the drop scenario")
    assert all(then[s, "bmv2"][1] is None and now[s, "bmv2"][1] is None for s in SHORT)
    says(NAME, "bmv2 failed its lowest load both times")
    ov, nv = comparison.verdicts(comparison.ours(morning)), comparison.verdicts(comparison.ours(D / NAME))
    ov, nv = ov[ov["verdict"] != ""]["verdict"], nv[nv["verdict"] != ""]["verdict"]
    mk, nk = datasets.read(morning).trials, trials(NAME)
    ms = pd.read_csv(morning / "superseded_trials.csv")
    ns = pd.read_csv(D / NAME / "superseded_trials.csv")
    says(NAME, f"The verdicts were {(ov == 'GOOD').sum()} GOOD and {(ov == 'BAD').sum()} BAD, now "
               f"{(nv == 'GOOD').sum()} and {(nv == 'BAD').sum()}",
         f"{mk['generator_limited'].astype(bool).sum()} trials were generator-limited then, {nk['limited'].sum()} now",
         f"The validation measured {(mk['attempt'] > 1).sum()} trials again then ({len(ms)} attempts), "
         f"{(nk['attempt'] > 1).sum()} now ({len(ns)} attempts), and kept {mk['disturbed'].sum()} `disturbed` then, "
         f"{nk['disturbed'].sum()} now")
    # the lowest loads: lossy trials of the engines other than bmv2
    part = []
    for folder in (morning, D / NAME):
        k = kept(folder)
        lo = sorted(k["offered_pps"].unique())[:2]
        x = k[k["offered_pps"].isin(lo) & (k["engine"] != "bmv2")]
        lossy = x[x["lost"] > 0]
        part.append((lo, len(x), lossy))
    (mlo, mn, ml), (nlo, nn, nl) = part
    assert (nl[nl["disturbed"]]["steal"] > TrialValidation().steal_threshold).all()
    assert len(nl) < len(ml) and nl["disturbed"].sum() > len(nl) / 2
    says(NAME, "at each run's two lowest loads fewer trials lost packets, most of them kept `disturbed`")
    says(NAME, f"At each run's two lowest loads, the engines other than bmv2 lost packets in {len(ml)} of their {mn} "
               f"trials in the morning (at {pps(mlo[0])} and {pps(mlo[1])} pps; {ml['disturbed'].sum()} of them kept "
               f"`disturbed`) and in {len(nl)} of {nn} now (at {pps(nlo[0])} and {pps(nlo[1])} pps; "
               f"{nl['disturbed'].sum()} of them kept `disturbed`, each with steal above 2%)")
    limit = TrialValidation().steal_threshold
    says(NAME, f"the ceiling ({pps(ceiling_of(morning))} → {pps(ceiling_of())} pps, so lower loads at the same "
               f"fraction) and the steal ({(attempts(morning)['steal'] > limit).sum()} → "
               f"{(attempts()['steal'] > limit).sum()} attempts above 2%)")
