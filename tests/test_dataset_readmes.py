"""Every number a dataset README states, recomputed from the dataset's own files (and, for
how a file was made, from the code that made it), so that the text and the data cannot
drift apart. Each test builds the README's sentence from the data and looks for it in the
README (whitespace folded), so a changed number fails here until the text says it."""

import functools
import inspect
import io
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from routerlab import comparison, datasets, stats, traffic
from routerlab.benchmarks import forwarding

D = datasets.datasets_dir()
KERNEL_PATHS = ["linux-single-flow", "nft-single-flow-fw0", "nft-single-flow-fw5", "nft-single-flow-fw50",
                "ebpf-single-flow", "ebpf-single-flow-fw50"]


def says(name: str, *phrases: str):
    """Each phrase is in ``datasets/<name>/README.md``, whitespace folded."""
    text = " ".join((D / name / "README.md").read_text().split())
    for phrase in phrases:
        assert " ".join(phrase.split()) in text, f"datasets/{name}/README.md does not say: {phrase}"


def trials(name: str) -> pd.DataFrame:
    """A dataset's trials with their loss, CPU and steal; generator-limited ones marked."""
    t = datasets.read(D / name).trials
    return t.assign(loss=1 - t["rx"] / t["tx"], limited=t["generator_limited"].astype(bool),
                    rx_pps=t["rx"] / t["duration_s"])


def per_load(name: str) -> pd.DataFrame:
    """Per experiment and load, the trials the generator delivered (as the statistics
    count them): n, mean and worst loss, median throughput (pps), mean CPU, mean and
    largest steal."""
    t = trials(name)
    return (t[~t["limited"]].groupby(["experiment", "offered_pps"])
            .agg(n=("loss", "size"), loss=("loss", "mean"), worst=("loss", "max"), rx_pps=("rx_pps", "median"),
                 cpu=("cpu_load", "mean"), steal=("steal", "mean"), steal_max=("steal", "max")))


def span(values, fmt) -> str:
    """``lo-hi`` of the values, each written with ``fmt``; one value when they round alike."""
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else f"{lo}-{hi}"


def pct(digits=0):
    return lambda x: f"{100 * x:.{digits}f}"


def when_range(stamps) -> str:
    t = pd.to_datetime(pd.Series(stamps))
    return f"{t.min():%H:%M}-{t.max():%H:%M}"


# -- testbed-veth ------------------------------------------------------------------------

VETH = "testbed-veth"
VETH_NAMES = {"linux-single-flow": "linux", "nft-single-flow-fw0": "nft, empty chain",
              "nft-single-flow-fw5": "nft, 5 rules", "nft-single-flow-fw50": "nft, 50 rules",
              "ebpf-single-flow": "ebpf, no rules", "ebpf-single-flow-fw50": "ebpf, 50 rules",
              "click-single-flow": "click"}
#: The commit that holds this dataset's previous sweeps (2026-11-23, 20:53 UTC), which the README compares with.
VETH_BEFORE = "c31633184400de83e91442d3e6362e7390f7332f"
#: The commit the run of 2026-11-23 22:48 UTC measured with.
VETH_CODE = "cf089af1998346533d848a4514f8f4488217b754"


def sig2(ratio) -> str:
    """A loss ratio as a percentage with two significant digits, positional ("0.0076",
    "0.12", "7.2", "18"); "0" for none."""
    v = 100 * float(ratio)
    if v == 0:
        return "0"
    return f"{v:.{max(0, 1 - int(np.floor(np.log10(abs(v)))))}f}"


def pps(x) -> str:
    return f"{x:,.0f}"


@functools.lru_cache(maxsize=None)
def veth():
    """The dataset's trials, drops, per-sweep assessments (by experiment) and ceiling."""
    t = datasets.read(D / VETH).trials
    a = {x.experiment: x for x in stats.assess(t)}
    ceiling = datasets.read_experiments(D / VETH)["generator_ceiling_pps"].unique()
    assert len(ceiling) == 1
    return t, datasets.read_drops([D / VETH]), a, float(ceiling[0])


def kept_trials() -> pd.DataFrame:
    """The sweep trials the statistics count (generator-limited ones left out)."""
    t = veth()[0]
    return t[~t["generator_limited"].astype(bool)]


def committed(path: str, commit: str) -> str:
    """A file as it was at ``commit`` (git history: a checkout only)."""
    root = D.parent
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("git history is not here (not a git checkout, or no git)")
    if subprocess.run(["git", "-C", str(root), "cat-file", "-e", f"{commit}^{{commit}}"]).returncode:
        pytest.skip(f"commit {commit[:7]} is not in this clone (a shallow clone)")
    return subprocess.run(["git", "-C", str(root), "show", f"{commit}:{path}"],
                          capture_output=True, text=True, check=True).stdout


def veth_searches() -> pd.DataFrame:
    return datasets.read_searches([D / VETH])


def veth_search_trials() -> pd.DataFrame:
    p = pd.read_csv(D / VETH / "search_trials.csv")
    return p.assign(loss=p["lost"] / p["tx"])


def test_veth_what_where_when_how():
    t, _, _, ceiling = veth()
    e = datasets.read_experiments(D / VETH)
    loads = t.groupby("experiment")["offered_pps"].nunique()
    assert (t.groupby(["experiment", "offered_pps"]).size() == 10).all()
    assert (loads.drop("click-single-flow") == 10).all()
    says(VETH, f"{len(t)} sweep trials ({len(loads) - 1} experiments × 10 loads × K = 10, plus Click: "
               f"{loads['click-single-flow']} loads × 10)")
    # the ceiling is traffic.ceiling's median; its runs and duration are the function's defaults
    p = inspect.signature(traffic.ceiling).parameters
    says(VETH, f"(median of {p['runs'].default} runs of {p['duration_s'].default:g} s, generator straight "
               f"into the sink): {pps(ceiling)} pps")
    for col in ("kernel", "cpu", "pinning"):
        assert e[col].nunique() == 1
    says(VETH, f"kernel {e['kernel'].iloc[0]}", f"2 vCPUs ({e['cpu'].iloc[0]})",
         f"`{e['pinning'].iloc[0]}`", f"Click {e.set_index('engine').loc['click', 'engine_version']}")
    assert "from its own veth ring" in e["pinning"].iloc[0]
    sweeps = t[t["experiment"] != "click-single-flow"]
    day = pd.to_datetime(t["started_at"]).dt.strftime("%Y-%m-%d").unique()
    assert len(day) == 1
    r = veth_searches()
    says(VETH, f"**When:** {day[0]}, sweeps from {when_range(t['started_at']).replace('-', ' to ')} UTC "
               f"(Click last, from {when_range(t[t['experiment'] == 'click-single-flow']['started_at']).split('-')[0]})",
         f"searches and benchmarks recorded from {when_range(r['when']).replace('-', ' to ')} UTC")
    assert when_range(sweeps["started_at"]).split("-")[1] < when_range(r["when"]).split("-")[0]
    # the interruption: the one long gap between successive trials, in the sweep the README names
    gaps = t.assign(at=pd.to_datetime(t["started_at"])).sort_values("at").groupby("experiment")["at"].diff()
    longest = gaps.groupby(t["experiment"]).max().dt.total_seconds()
    assert longest.idxmax() == "nft-single-flow-fw0" and (longest.drop("nft-single-flow-fw0") < 10).all()
    says(VETH, "stopped once, during the sweep of nft with an empty chain",
         f"that sweep's trials have a gap of {longest.max():.0f} s")
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
    notes = e["notes"].str.extract(r"steal_threshold=([\d.]+); max_repeats=(\d+)").astype(float)
    assert notes.nunique().eq(1).all()
    says(VETH, f"steal above {100 * notes[0].iloc[0]:g}% is measured again, up to {notes[1].iloc[0]:.0f} times",
         f"commit {VETH_CODE[:7]}")
    assert (e["notes"].str.contains("loss_attribution=on")).all()


def test_veth_code_commit_is_in_history():
    committed("README.md", VETH_CODE)  # skips outside a checkout; fails when the commit is unknown there


def test_veth_files():
    t, d, _, _ = veth()
    says(VETH, f"`drops.csv` | {len(d):,} rows")
    assert set(d["experiment"]) == set(t["experiment"])  # sweeps only: searches carry a `drops` column
    sup = pd.read_csv(D / VETH / "superseded_trials.csv")
    ssup = pd.read_csv(D / VETH / "superseded_search_trials.csv")
    says(VETH, f"the {len(sup)} attempts that were measured again", f"the {len(ssup)} search trials measured again")
    s = pd.read_csv(D / VETH / "search_trials.csv")
    g = pd.read_csv(D / VETH / "generators.csv")
    says(VETH, f"{len(g)} trials of {g['generator'].nunique()} generators")
    # not re-measured: the file is the one the previous measurement committed
    assert (D / VETH / "generators.csv").read_text() == committed(f"datasets/{VETH}/generators.csv", VETH_BEFORE)
    # the columns the table names are there
    for c in ("attempt", "disturbed", "lost", "lost_attributed", "lost_unexplained", "trace_missed", "drops"):
        assert c in t.columns and c in s.columns
    assert (t["lost"] == t["tx"] - t["rx"]).all()
    assert (t["lost"] == t["lost_attributed"] + t["lost_unexplained"]).all()


def test_veth_steal_and_repeats():
    t = veth()[0]
    s = pd.read_csv(D / VETH / "search_trials.csv")
    sup = pd.read_csv(D / VETH / "superseded_trials.csv")
    # a superseded attempt is one whose steal passed the threshold; every kept repeat has one behind it
    assert (sup["steal"] > 0.02).all()
    again = t[t["attempt"] > 1]
    assert len(sup) == (again["attempt"] - 1).sum()
    says(VETH, f"{len(again)} of the {len(t)} sweep trials were ({(again['experiment'] == 'click-single-flow').sum()} "
               f"of them Click's), with {len(sup)} attempts set aside (the largest {100 * sup['steal'].max():.0f}% steal)")
    dist = t[t["disturbed"]]
    assert (dist["attempt"] == 4).all() and (dist["steal"] > 0.02).all()
    by = dist.groupby("experiment").size()
    assert set(by.index) == {"click-single-flow", "nft-single-flow-fw50"}
    says(VETH, f"{len(dist)} trials still had more than 2% after 3 repeats",
         f"({by['click-single-flow']} of Click's, {by['nft-single-flow-fw50']} of nft with 50 rules; at most "
         f"{100 * dist['steal'].max():.1f}%)")
    assert (dist["lost"] > 0).sum() == 1
    says(VETH, "all but one of them lost nothing",
         f"Mean steal per sweep was {span(t.groupby('experiment')['steal'].mean(), pct(2))}%",
         f"The searches' largest kept steal was {100 * s['steal'].max():.2f}%")


def test_veth_ceilings_of_the_run():
    r = pd.read_csv(D / VETH / "search_results.csv")
    c = r.groupby("experiment")["generator_ceiling_pps"].first()
    ceiling = veth()[3]
    assert (c.drop([x for x in c.index if x.startswith("bench-")]) == ceiling).all()
    bench_pdr = c[[x for x in c.index if x.startswith("bench-pdr-")]].unique()
    assert len(bench_pdr) == 1
    says(VETH, f"{pps(ceiling)} pps at 22:48", f"{pps(c['bench-search-linux-single-flow'])} pps when `bench search` "
               f"started and {pps(bench_pdr[0])} pps when `bench engines` did, both after 23:11")
    assert pd.to_datetime(r[~r["experiment"].str.startswith("bench-")]["when"]).max() >= pd.Timestamp("2026-11-23T23:11Z")
    e = datasets.read_experiments(D / VETH)
    assert pd.to_datetime(e["when"]).min().strftime("%H:%M") == "22:48"


def veth_verdicts():
    a = veth()[2]
    return {e: a[e] for e in VETH_NAMES}


def test_veth_verdict_table():
    t, _, a, ceiling = veth()
    for exp, name in VETH_NAMES.items():
        x = a[exp]
        s = x.summary.set_index("offered_pps")
        over = s[s["plr"] > stats.PDR_FRACTION]
        first = (f"{sig2(over['plr'].iloc[0])}% at {pps(over.index[0])}"
                 + (f" (K={over['runs'].iloc[0]})" if over["runs"].iloc[0] < 10 else "")) if len(over) else \
            f"never (at most {sig2(s['plr'].max())}%, at {pps(s['plr'].idxmax())})"
        says(VETH, f"| {name} | **{x.verdict.label}** | {first} |")
    v = veth_verdicts()
    # what the "why" column says, checked against the verdict's own reason
    for exp in ("linux-single-flow", "nft-single-flow-fw5"):
        s = a[exp].summary
        assert "only at the highest load" in v[exp].verdict.why and s["offered_pps"].max() == ceiling
        assert s.loc[s["plr"] > stats.PDR_FRACTION, "offered_pps"].tolist() == [ceiling]
    says(VETH, "loss passes the PDR fraction only at the highest load, the generator's ceiling")
    assert "not reached" in v["ebpf-single-flow"].verdict.why
    assert a["ebpf-single-flow"].summary["offered_pps"].max() == ceiling
    says(VETH, "| ebpf, no rules | **BAD** | never", "saturation not reached in the tested range. The sweep already "
               "ends at the generator's ceiling")
    for exp in ("nft-single-flow-fw0", "ebpf-single-flow-fw50"):
        assert not v[exp].verdict.good and v[exp].verdict.still_rising
        assert "throughput still rising after the PDR load" in v[exp].verdict.why
    assert "throughput rises again after saturation" in v["nft-single-flow-fw50"].verdict.why
    assert v["click-single-flow"].verdict.good
    assert "saturation right after the PDR load" in v["click-single-flow"].verdict.why
    for exp, name in (("nft-single-flow-fw0", "nft"), ("ebpf-single-flow-fw50", "ebpf with 50 rules")):
        s = a[exp].summary.set_index("offered_pps")
        i = a[exp].verdict.candidate_index
        o = a[exp].summary["offered_pps"].iloc[i]
        says(VETH, f"{name} loses {sig2(s.loc[o, 'plr'])}% at {pps(o)} pps and still forwards "
                   f"{pps(s.loc[o, 'throughput_pps'])} pps there (TIR {a[exp].verdict.tir[i]:.2f})")
    s = a["nft-single-flow-fw50"].summary.set_index("offered_pps")
    over = s[s["plr"] > stats.PDR_FRACTION]
    assert over["throughput_pps"].is_monotonic_increasing
    cpu = kept_trials().groupby(["experiment", "offered_pps"])["cpu_load"].mean().loc["nft-single-flow-fw50"]
    says(VETH, f"nft with 50 rules forwards {', '.join(pps(x) for x in over['throughput_pps'])} pps at "
               f"{', '.join(pps(x) for x in over.index[:-1])} and {pps(over.index[-1])} offered while losing "
               f"{', '.join(sig2(x) for x in over['plr'][:-1])} and {sig2(over['plr'].iloc[-1])}%, its CPU "
               f"{span(cpu.loc[over.index], pct())}% busy")
    # "four of the BAD verdicts say the generator cannot load these routers past saturation"
    cannot = [e for e in VETH_NAMES if not v[e].verdict.good and not v[e].verdict.still_rising
              and "rises again" not in v[e].verdict.why]
    assert cannot == ["linux-single-flow", "nft-single-flow-fw5", "ebpf-single-flow"]
    assert not v["nft-single-flow-fw0"].verdict.good
    says(VETH, "Four of the BAD verdicts (linux, nft with 0 and 5 rules, ebpf with no rules)")
    lim = t[t["generator_limited"].astype(bool)].groupby(["experiment", "offered_pps"]).size()
    assert lim.to_dict() == {("click-single-flow", 400_000): 3, ("nft-single-flow-fw0", ceiling): 1}


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
    s = stats.summaries(list(a.values())).set_index(["experiment", "offered_pps"])["plr"]
    frac = pd.Series(s.index.get_level_values(1) / ceiling, index=s.index)
    exp = pd.Series(s.index.get_level_values(0), index=s.index)
    first_loss = {e: frac[(exp == e) & (s > 0)].min() for e in k}
    for e in ("linux-single-flow", "nft-single-flow-fw0", "nft-single-flow-fw5"):
        assert first_loss[e] > 0.61
    assert 0.41 < first_loss["nft-single-flow-fw50"] < 0.51
    assert all(0.19 < first_loss[e] < 0.21 for e in ("ebpf-single-flow", "ebpf-single-flow-fw50"))
    says(VETH, "Linux and nft with up to 5 rules lose nothing up to 0.6 of the ceiling, and nft with 50 rules "
               "nothing up to 0.4; the XDP router loses a little from 0.2 on")


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
    assert (x["lost_unexplained"] == 0).all() and not any(c.startswith("sink") for c in x.columns)
    says(VETH, "Every lost packet of every sweep was taken by a counter: no column of the sink, and nothing unexplained")
    # every loss of the sweeps, load by load, is what loss_places splits (its parts sum to the mean loss)
    t, d, a, _ = veth()
    lp = stats.loss_places(t, d).groupby(["experiment", "offered_pps"])["loss"].sum()
    plr = stats.summaries(list(a.values())).set_index(["experiment", "offered_pps"])["plr"]
    assert np.allclose(lp, plr.reindex(lp.index), atol=1e-12)


def test_veth_where_kernel_path_loss_went():
    t, d, _, _ = veth()
    keys = ["experiment", "offered_pps", "trial"]
    kernel = KERNEL_PATHS[:4]
    x = veth_lost_by_place().loc[kernel]
    assert (x["dut CPU_BACKLOG"] == x["lost"]).all()
    kept = kept_trials()
    ctx = d[d["counted_as"] == "context"].merge(kept[keys], on=keys)
    c = ctx.pivot_table(index="experiment", columns=["place", "reason"], values="packets", aggfunc="sum").loc[kernel]
    # CPU 1's softnet drop counter and the DUT veth's rx drops took every lost packet
    assert (c[("cpu1", "dropped")] == x["lost"]).all() and (c[("dut", "d0.rx_dropped")] == x["lost"]).all()
    says(VETH, f"CPU 1's softnet `dropped` counter and the DUT veth's `d0.rx_dropped` (context rows) each counted "
               f"exactly the lost packets of these sweeps ({', '.join(pps(n) for n in x['lost'])})")
    # the sink: only its counting drop
    sink = d[(d["place"] == "sink") & d["experiment"].isin(kernel)]
    assert set(sink["reason"]) == {"NETFILTER_DROP"} and (sink["counted_as"] == "design").all()
    says(VETH, "The sink no longer shares that queue, and none of its counters moved except its counting drop")
    tm = kept.groupby("experiment")["trace_missed"]
    says(VETH, f"`trace_missed` is {span(tm.sum().loc[kernel], pps)} packets per kernel-path sweep, "
               f"in {span((tm.apply(lambda s: (s > 0).mean())).loc[kernel], pct())}% of its trials")
    assert (tm.sum().drop(kernel) == 0).all()


def test_veth_where_xdp_loss_went():
    t, d, _, _ = veth()
    keys = ["experiment", "offered_pps", "trial"]
    x = veth_lost_by_place().loc[["ebpf-single-flow", "ebpf-single-flow-fw50"]]
    assert (x["dut NOT_SPECIFIED"] == x["lost"]).all()
    rows = d[d["experiment"].str.startswith("ebpf")]
    nodev = rows[rows["place"] == "nodev"]
    rows = rows[rows["place"] != "nodev"]
    per = rows.assign(w=rows["place"] + " " + rows["source"] + " " + rows["reason"]).pivot_table(
        index=keys, columns="w", values="packets", aggfunc="sum").fillna(0)
    # trial by trial, the DUT's NOT_SPECIFIED drops are the generator veth's tx_dropped, and nothing else moved
    assert set(per.columns) == {"dut kfree_skb NOT_SPECIFIED", "tg link g0.tx_dropped", "sink kfree_skb NETFILTER_DROP"}
    assert (per["dut kfree_skb NOT_SPECIFIED"] == per["tg link g0.tx_dropped"]).all()
    lost = t[t["experiment"].str.startswith("ebpf")].set_index(keys)
    assert (per["dut kfree_skb NOT_SPECIFIED"].reindex(lost.index).fillna(0) == lost["lost"]).all()
    says(VETH, f"in each of the {int((per['dut kfree_skb NOT_SPECIFIED'] > 0).sum())} ebpf trials that lost packets, "
               f"the generator-side veth's `g0.tx_dropped` (a context row) equals the DUT's NOT_SPECIFIED drops")
    assert (nodev["counted_as"] == "context").all()
    says(VETH, f"the tracer also saw {nodev['packets'].sum()} drops with no device, `nodev`, in "
               f"{len(nodev.drop_duplicates(keys))} trials")
    _, _, a, ceiling = veth()
    cpu = kept_trials().groupby(["experiment", "offered_pps"])["cpu_load"].mean()
    s = stats.summaries(list(a.values())).set_index(["experiment", "offered_pps"])["plr"]
    band = [(e, o) for e, o in cpu.index if e.startswith("ebpf") and 0.19 < o / ceiling < 0.51]
    assert (s.loc[band] > 0).all()
    says(VETH, f"at 0.2-0.5 of the ceiling is its input ring overflowing while its CPU is "
               f"{span(cpu.loc[band], pct())}% busy")


def test_veth_click():
    t, d, a, _ = veth()
    c = t[t["experiment"] == "click-single-flow"]
    kept = c[~c["generator_limited"].astype(bool)]
    s = a["click-single-flow"].summary.set_index("offered_pps")
    cpu = kept.groupby("offered_pps")["cpu_load"].mean()
    worst = (c["lost"] / c["tx"]).groupby(c["offered_pps"]).max()
    zero = s[s["plr"] == 0].index
    assert (zero == s.index[:len(zero)]).all()
    first = s.index[len(zero)]
    lossy = c[(c["offered_pps"] == first) & (c["lost"] > 0)]
    assert len(lossy) == 1
    pdr = a["click-single-flow"].pdr.load
    assert pdr == first
    nxt = s.index[s.index.get_loc(pdr) + 1]
    says(VETH,
         f"**Click** ({when_range(c['started_at'])} UTC",
         f"no loss up to {pps(zero.max())} pps, with the CPU {100 * cpu.loc[zero.max()]:.0f}% busy",
         f"{sig2(s.loc[first, 'plr'])}% at {pps(first)} pps ({lossy['lost'].iloc[0]} packets, all in one trial, taken "
         f"with {100 * lossy['steal'].iloc[0]:.1f}% steal after three repeats)",
         f"its PDR@0.5% on this grid is {pps(pdr)} pps",
         f"{sig2(s.loc[nxt, 'plr'])}% at {pps(nxt)} pps (one trial lost {sig2(worst.loc[nxt])}%)")
    assert lossy["disturbed"].iloc[0] and lossy["attempt"].iloc[0] == 4
    after = s.loc[nxt:].iloc[1:]
    assert after["throughput_pps"].max() < s.loc[nxt, "throughput_pps"]
    says(VETH, f"throughput (offered × (1 - mean loss)) falls from {pps(s.loc[nxt, 'throughput_pps'])} pps there to "
               + ", ".join(pps(x) for x in after["throughput_pps"]) + " pps at "
               + ", ".join(pps(x) for x in after.index[:-1]) + f" and {pps(after.index[-1])} offered, with the CPU "
               f"{span(cpu.loc[nxt:], pct())}% busy",
         f"equals the sink's count in all {len(c)} trials",
         f"{int(c['generator_limited'].sum())} trials at 400,000 pps were generator-limited")
    assert (c["engine_forwarded"] == c["rx"]).all()
    assert c.loc[c["generator_limited"].astype(bool), "offered_pps"].eq(400_000).all()
    # every packet reached the DUT: its drop of the kernel's copy (design) counted nearly all that was sent
    dut = d[(d["experiment"] == "click-single-flow") & (d["place"] == "dut") & (d["reason"] == "NETFILTER_DROP")]
    share = dut["packets"].sum() / c["tx"].sum()
    says(VETH, f"(`counted_as=design`) counted {100 * share:.2f}% of the packets sent")
    x = veth_lost_by_place().loc["click-single-flow"]
    other = x["lost"] - x["dut FromDevice@4.kernel_drops"]
    says(VETH, f"That took all but {pps(other)} of Click's {pps(x['lost'])} lost packets; its output `Queue` dropped "
               f"{pps(x['dut out/Queue@1.drops'])} and CPU 1's backlog {pps(x['dut CPU_BACKLOG'])}")
    assert other == x["dut out/Queue@1.drops"] + x["dut CPU_BACKLOG"]


def test_veth_searches():
    r = veth_searches()
    ours = r[(r["method"] == "routerlab") & ~r["experiment"].str.startswith("bench-")]
    for exp, name in VETH_NAMES.items():
        if exp == "click-single-flow":
            continue
        a = ours[ours["experiment"] == exp].set_index("kind")["answer"]
        says(VETH, f"| {name} | {a['pdr']} | {a['ndr']} |")
    found = r[r["upper_pps"].notna() & ~r["generator_bound"]]
    mine = found[found["method"] == "routerlab"]
    says(VETH, f"Precision (upper/lower - 1) is {span(mine['precision'], pct(1))}%")
    assert (r["final_trials"] == 3).all()
    bounds = ours["answer"].str.startswith("at least")
    assert bounds.sum() * 2 == len(ours)
    says(VETH, "Half of the answers are lower bounds")
    ndr = ours[ours["engine"] == "ebpf"].query("kind == 'ndr'")["answer"].str.removesuffix(" pps")
    says(VETH, f"The XDP router's NDR is low ({' and '.join(ndr)} pps)")
    linux = r[(r["engine"] == "linux") & (r["kind"] == "pdr") & (r["method"] == "routerlab")].sort_values("when")
    assert linux["answer"].str.startswith("at least").all()
    says(VETH, f"linux {', '.join(linux['answer'].str.replace(r' pps.*', '', regex=True).iloc[:-1])} and "
               f"{linux['answer'].str.replace(r' pps.*', '', regex=True).iloc[-1]} pps in three searches between "
               f"{when_range(linux['when']).replace('-', ' and ')}")
    for eng, exp in (("nft, 50 rules", "nft-single-flow-fw50"), ("ebpf, no rules", "ebpf-single-flow")):
        a = r[(r["experiment"] == exp) & (r["kind"] == "pdr")]["answer"].iloc[0]
        b = r[(r["experiment"] == f"bench-pdr-{exp}")]["answer"].iloc[0]
        says(VETH, f"{eng}: {a.split(' (')[0]}, then {b.split(' (')[0]}")
    x = r[(r["experiment"] == "nft-single-flow-fw50") & (r["kind"] == "pdr")].iloc[0]
    y = r[r["experiment"] == "bench-pdr-nft-single-flow-fw50"].iloc[0]
    says(VETH, f"{100 * (x['lower_pps'] / y['lower_pps'] - 1):.1f}% apart where each search's precision is "
               f"{100 * max(x['precision'], y['precision']):.1f}%")
    p = veth_search_trials()
    kernel = p[p["engine"].isin(["linux", "nft"])]
    places = kernel["drops"].dropna().str.replace(r"=\d+", "", regex=True).str.split(";").explode()
    assert set(places) == {"dut:CPU_BACKLOG"}
    xdp = p[(p["engine"] == "ebpf")]["drops"].dropna().str.replace(r"=\d+", "", regex=True)
    assert set(xdp) == {"dut:NOT_SPECIFIED"}
    assert (p["lost_unexplained"] == 0).all()
    says(VETH, "no counter left a packet of theirs unexplained")


def test_veth_against_mlrsearch():
    r = veth_searches()
    b = r[r["experiment"] == "bench-search-linux-single-flow"].set_index(["kind", "method"])
    says(VETH, f"ceiling {pps(b['generator_ceiling_pps'].iloc[0])} pps):")
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
    says(VETH, "three are lower bounds where the generator could not deliver the load above")
    p = veth_search_trials()
    p = p[(p["experiment"] == "bench-search-linux-single-flow") & (p["kind"] == "ndr")]
    ours, theirs = b.loc[("ndr", "routerlab")], b.loc[("ndr", "mlrsearch")]
    assert theirs["lower_pps"] > ours["upper_pps"]
    says(VETH, f"MLRsearch passed {pps(theirs['lower_pps'])} pps, above the {pps(ours['upper_pps'])} pps our search failed")
    mine = p[(p["method"] == "routerlab") & (p["phase"] == "final")]
    at = mine[np.isclose(mine["load"], ours["upper_pps"])]
    assert len(at) == 3 and at["passed"].sum() == 1
    says(VETH, f"at {pps(ours['upper_pps'])} pps our three trials lost {', '.join(sig2(x) for x in at['loss'].iloc[:-1])} "
               f"and {sig2(at['loss'].iloc[-1])}%")
    lossy = mine[~mine["generator_limited"]].groupby("load")["lost"].agg(lambda s: (s > 0).any())
    low = lossy[lossy].index.min()
    assert lossy[lossy.index >= low].all() and not lossy[lossy.index < low].any()
    worst_small = mine[(mine["lost"] > 0) & ~mine["generator_limited"]]["loss"].min()
    says(VETH, f"at every load our search tried from {pps(low)} pps up at least one trial lost packets, as few as "
               f"{sig2(worst_small)}%")
    them = p[(p["method"] == "mlrsearch") & np.isclose(p["load"], theirs["lower_pps"])]
    assert (them["lost"] == 0).all()
    says(VETH, f"MLRsearch's {len(them)} trials at {pps(theirs['lower_pps'])} pps lost nothing")


def test_veth_against_the_previous_measurement():
    old = pd.read_csv(io.StringIO(committed("datasets/testbed-veth/trials.csv", VETH_BEFORE)))
    olde = pd.read_csv(io.StringIO(committed("datasets/testbed-veth/experiments.csv", VETH_BEFORE)))
    oldd = pd.read_csv(io.StringIO(committed("datasets/testbed-veth/drops.csv", VETH_BEFORE)))
    t, _, a, ceiling = veth()
    e = datasets.read_experiments(D / VETH)
    start = pd.to_datetime(old["started_at"])
    says(VETH, f"({start.min():%Y-%m-%d}, from {start.min():%H:%M} UTC, commit {VETH_BEFORE[:7]}")
    assert start.min() < pd.to_datetime(t["started_at"]).min()
    keys = ["experiment", "offered_pps", "trial"]
    okept = old[~old["generator_limited"].astype(bool)]
    loss = oldd[oldd["counted_as"] == "loss"].merge(okept[keys], on=keys)
    kern = okept[okept["experiment"].isin(KERNEL_PATHS[:4])]
    sink = loss[loss["place"] == "sink"].groupby("experiment")["packets"].sum()
    share = sink / kern.groupby("experiment")["lost"].sum()
    says(VETH, f"{span(share, pct())}% of each kernel-path sweep's loss was the sink's (`sink CPU_BACKLOG`)")
    c = okept[okept["experiment"] == "click-single-flow"]
    says(VETH, f"no counter explained {pps(c['lost_unexplained'].sum())} of Click's {pps(c['lost'].sum())} lost packets")
    oc = float(olde["generator_ceiling_pps"].unique()[0])
    assert (old["attempt"] == 1).all()
    says(VETH, f"the generator's ceiling was {pps(oc)} pps then and {pps(ceiling)} now",
         f"against {(t['attempt'] > 1).sum()} now")
    oa = {x.experiment: x for x in stats.assess(old)}
    says(VETH, f"Click's PDR@0.5% on the same grid was {pps(oa['click-single-flow'].pdr.load)} pps then and is "
               f"{pps(a['click-single-flow'].pdr.load)} now")
    # the same Click and the same configuration both times
    oe, ne = olde.set_index("experiment").loc["click-single-flow"], e.set_index("experiment").loc["click-single-flow"]
    assert oe["engine_version"] == ne["engine_version"]
    assert oe["notes"].split("; ")[0] == ne["notes"].split("; ")[0] == "click_config=routers/click/iprouter.click"
    assert sorted(old[old["experiment"] == "click-single-flow"]["offered_pps"].unique()) == \
        sorted(c["offered_pps"].unique()) == sorted(t[t["experiment"] == "click-single-flow"]["offered_pps"].unique())


# -- testbed-click -----------------------------------------------------------------------

CLICK = "testbed-click"


def click_searches() -> pd.DataFrame:
    return datasets.read_searches([D / CLICK])


def test_click_where_when_how():
    e = datasets.read_experiments(D / CLICK)
    r = click_searches()
    t = trials(CLICK)
    for col in ("kernel", "cpu", "pinning", "generator_ceiling_pps"):
        assert e[col].nunique() == 1
    says(CLICK, f"kernel {e['kernel'].iloc[0]}, 2 vCPUs ({e['cpu'].iloc[0]})", f"`{e['pinning'].iloc[0]}`",
         f"FastClick {e['engine_version'].iloc[0]}")
    assert e["engine_version"].nunique() == 1
    says(CLICK, f"the searches {when_range(r['when'])} UTC (when each one finished), the sweeps' trials "
                f"{when_range(t['started_at'])} UTC", f"code: commit {VETH_CODE[:7]}")
    assert pd.to_datetime(t["started_at"]).min() > pd.to_datetime(veth()[0]["started_at"]).max()
    assert r["generator_ceiling_pps"].nunique() == 1
    says(CLICK, f"`bench engines` measures the generator's ceiling itself at its start "
                f"({pps(r['generator_ceiling_pps'].iloc[0])} pps)",
         f"the ceiling measured at the start of the run, {pps(e['generator_ceiling_pps'].iloc[0])} pps",
         f"--ceiling {e['generator_ceiling_pps'].iloc[0]:.0f}")
    assert e["generator_ceiling_pps"].iloc[0] == veth()[3]
    for row in e.itertuples():
        assert row.command.startswith(f"routerlab measure --engine {row.engine} --scenario single-flow "
                                      "--loads-frac 0.05,0.1,0.15,0.2,0.3,0.4,0.5,0.6,0.8,1.0 --ceiling 397735 "
                                      "--runs 10 --duration 1 --out ")
    says(CLICK, f"the {len(t)} sweep trials (2 engines × 10 loads × 10)")


def test_click_pdr_table_never_sets_a_lower_bound_against_another():
    r = click_searches()
    pdr = datasets.search_pdr(r).set_index("engine")
    click = pdr.loc["click", "pdr_pps"]
    for row in r.itertuples():
        ratio = "none: a lower bound" if pdr.loc[row.engine, "at_least"] else f"{row.lower_pps / click:.2f}"
        says(CLICK, f"| {row.engine} | {row.answer} | {ratio} |")
    says(CLICK, f"(generator ceiling {r['generator_ceiling_pps'].iloc[0]:,.0f} pps)")
    assert pdr["at_least"].sum() == 3 and not pdr.loc[["click", "fastclick"], "at_least"].any()
    says(CLICK, "Three answers are lower bounds",
         f"carry {pdr.loc['fastclick', 'pdr_pps'] / click:.2f} times what Click carries",
         f"On AF_PACKET it gains a little over Click here ({pdr.loc['fastclick', 'pdr_pps'] / click:.2f})")
    assert r.set_index("engine").loc[["linux", "ebpf"], "upper_pps"].isna().all()


def test_click_why_only_fastclick_dpdk_was_bounded_by_the_generator():
    r = click_searches().set_index("engine")
    assert r.index[r["generator_bound"]].tolist() == ["fastclick-dpdk"]
    p = pd.read_csv(D / CLICK / "search_trials.csv")
    dpdk = p[p["engine"] == "fastclick-dpdk"]
    upper = r.loc["fastclick-dpdk", "upper_pps"]
    at = dpdk[np.isclose(dpdk["load"], upper)]
    assert at["generator_limited"].all()
    full = dpdk[dpdk["duration"] == 1.0]
    lim = full[full["generator_limited"]]
    assert (lim["tx"] < lim["load"] * lim["duration"]).all()
    says(CLICK, f"all {len(at)} trials at its failing load ({pps(upper)} pps) were generator-limited",
         f"and so were {len(lim)} of its {len(full)} full-duration trials, which offered "
         f"{pps(lim['tx'].min())}-{pps(lim['tx'].max())} pps where more was asked")
    # nobody else's search saw a limited trial
    assert not p[p["engine"] != "fastclick-dpdk"]["generator_limited"].any()


def test_click_sweeps():
    t = trials(CLICK)
    a = {x.experiment: x for x in stats.assess(datasets.read(D / CLICK).trials)}
    s = per_load(CLICK)
    dpdk, fc = s.loc["fastclick-dpdk-single-flow"], s.loc["fastclick-single-flow"]
    lim = t[t["limited"]].groupby(["experiment", "offered_pps"]).size()
    ceiling = t["offered_pps"].max()
    zero = dpdk[dpdk["worst"] == 0].index
    assert (zero == dpdk.index[:len(zero)]).all() and len(zero) == len(dpdk) - 1
    top = dpdk.index[-1]
    kept = t[(t["experiment"] == "fastclick-dpdk-single-flow") & (t["offered_pps"] == top) & ~t["limited"]]
    says(CLICK, f"loses nothing up to {pps(zero.max())} pps ({zero.max() / ceiling:.1f} of the ceiling)",
         f"At {pps(top)} pps {lim.loc[('fastclick-dpdk-single-flow', top)]} of its 10 trials were generator-limited "
         f"(left out); the 2 kept lost {' and '.join(sig2(x) for x in sorted(kept['loss']))}%, a mean of "
         f"{100 * dpdk.loc[top, 'loss']:.2f}%",
         f"At {pps(ceiling)} pps all {lim.loc[('fastclick-dpdk-single-flow', ceiling)]} were limited")
    assert len(kept) == 2 and dpdk.loc[top, "loss"] > stats.PDR_FRACTION
    vd, vf = a["fastclick-dpdk-single-flow"].verdict, a["fastclick-single-flow"].verdict
    says(CLICK, f"Its verdict is **{vd.label}** ({vd.why.split(' (to do')[0]})", f"is **{vf.label}** ({vf.why})")
    fz = fc[fc["worst"] == 0].index
    assert (fz == fc.index[:len(fz)]).all()
    nxt = fc.index[len(fz)]
    summ = a["fastclick-single-flow"].summary.set_index("offered_pps")
    after = summ.loc[nxt:].iloc[1:]
    assert after["throughput_pps"].is_monotonic_decreasing and after["throughput_pps"].max() < summ.loc[nxt, "throughput_pps"]
    says(CLICK, f"no loss up to {pps(fz.max())} pps, with its CPU {100 * fc.loc[fz.max(), 'cpu']:.0f}% busy, then "
                f"{sig2(fc.loc[nxt, 'loss'])}% at {pps(nxt)} pps",
         f"falls from {pps(summ.loc[nxt, 'throughput_pps'])} pps there to "
         + ", ".join(pps(x) for x in after["throughput_pps"][:-1]) + f" and {pps(after['throughput_pps'].iloc[-1])} pps at "
         + ", ".join(pps(x) for x in after.index[:-1]) + f" and {pps(after.index[-1])} offered (the last two with "
         + " and ".join(str(int(n)) for n in fc["n"].iloc[-2:]) + " trials the generator could offer), with its CPU "
         f"{span(fc.loc[after.index, 'cpu'], pct())}% busy")
    assert (fc["n"].iloc[:-2] == 10).all()
    assert (t["engine_forwarded"] == t["rx"]).all()
    # steal
    sup = pd.read_csv(D / CLICK / "superseded_trials.csv")
    assert (sup["steal"] > 0.02).all() and not t["disturbed"].any()
    says(CLICK, f"{(t['attempt'] > 1).sum()} trials were measured again, {len(sup)} attempts set aside, none kept "
                f"above 2%; the largest kept steal was {100 * t['steal'].max():.1f}%")
    assert len(sup) == (t["attempt"] - 1).sum()


def test_click_where_the_loss_went():
    t = trials(CLICK)
    d = datasets.read_drops([D / CLICK])
    loss = d[d["counted_as"] == "loss"]
    assert (loss["place"] == "dut").all() and (loss["source"] == "engine").all()
    by = loss.assign(engine=loss["experiment"].str.removesuffix("-single-flow")).groupby(["engine", "reason"])["packets"].sum()
    lost = t.groupby("engine")["lost"].sum()
    assert (t["lost_unexplained"] == 0).all() and (t["trace_missed"] == 0).all()
    assert (by.groupby(level=0).sum() == lost).all()
    says(CLICK, f"(`drops.csv`, all {len(t)} trials)",
         f"fastclick lost {pps(lost['fastclick'])} packets: {pps(by['fastclick', 'FromDevice@4.kernel_drops'])} at its "
         f"capture socket", f"and {pps(by['fastclick', 'out/Queue@1.drops'])} in its output `Queue`",
         f"fastclick-dpdk lost {pps(lost['fastclick-dpdk'])}, all counted by FromDPDKDevice's `hw_dropped`")
    assert by["fastclick-dpdk"].index.tolist() == ["FromDPDKDevice@4.hw_dropped"]
    ctx = d[(d["experiment"] == "fastclick-dpdk-single-flow") & (d["reason"] == "d0.rx_dropped")]["packets"].sum()
    assert ctx == lost["fastclick-dpdk"]
    r = click_searches().set_index("engine")
    says(CLICK, f"(at least {pps(r.loc['fastclick-dpdk', 'lower_pps'])} pps, limited by the generator, against "
                f"{pps(r.loc['fastclick', 'lower_pps'])} on AF_PACKET)")


# -- testbed-bmv2 ------------------------------------------------------------------------

BMV2 = "testbed-bmv2"


def test_bmv2_where_when_how():
    e = datasets.read_experiments(D / BMV2).iloc[0]
    t = trials(BMV2)
    r = datasets.read_searches([D / BMV2])
    says(BMV2, f"kernel {e['kernel']}) with 2 vCPUs ({e['cpu']})", f"`{e['pinning']}`",
         f"(`experiments.csv`: {e['engine_version']})")
    says(BMV2, f"the sweep {when_range(t['started_at'])} UTC, the searches {when_range(r['when'])} UTC",
         f"code: commit {VETH_CODE[:7]}")
    assert "capture_drops=on" in e["notes"] and "loss_attribution=on" in e["notes"]
    says(BMV2, f"{pps(e['generator_ceiling_pps'])} pps before the sweep",
         f"{pps(r['generator_ceiling_pps'].iloc[0])} pps before the searches")
    loads = ",".join(f"{x:.0f}" for x in sorted(t["offered_pps"].unique()))
    assert e["command"].startswith(f"routerlab measure --engine bmv2 --scenario single-flow --loads {loads} "
                                   "--runs 10 --duration 1 --out ")
    says(BMV2, f"--loads {loads}")


def test_bmv2_searches():
    r = datasets.read_searches([D / BMV2]).set_index("engine")
    assert r.loc["linux", "generator_bound"] and not r.loc["bmv2", "generator_bound"]
    says(BMV2, f"| linux | {r.loc['linux', 'answer']} |", f"| bmv2 (router.p4) | {r.loc['bmv2', 'answer']} |",
         f"a generator ceiling of {r['generator_ceiling_pps'].iloc[0]:,.0f} pps")
    assert r.loc["bmv2", "lower_pps"] < 0.1 * r.loc["linux", "lower_pps"]
    says(BMV2, "carries less than a tenth of it")


def bmv2_row(s, lo, hi):
    g = s.loc[lo:hi]
    carried = "= offered" if (g["rx_pps"] >= g.index * 0.99).all() else span(g["rx_pps"], pps)
    loss, worst = span(g["loss"], sig2), span(g["worst"], sig2)
    pc = "" if loss == "0" else "%"
    loads = f"{lo:,}" if lo == hi else f"{lo:,}-{hi:,}"
    return f"| {loads} | {loss}{pc} | {worst}{pc if worst != '0' else ''} | {carried} | {span(g['cpu'], pct())}% |"


def test_bmv2_sweep():
    t = trials(BMV2)
    s = per_load(BMV2).loc["bmv2-single-flow"]
    assert len(t) == 100 and (t["engine_forwarded"] == t["rx"]).all()
    assert not t["limited"].any() and (t["attempt"] == 1).all()
    says(BMV2, f"the largest steal was {100 * t['steal'].max():.1f}%")
    says(BMV2, bmv2_row(s, 1_000, 7_500), bmv2_row(s, 10_000, 20_000), bmv2_row(s, 30_000, 30_000),
         bmv2_row(s, 40_000, 40_000))
    assert (s.loc[:7_500, "worst"] == 0).all() and (s.loc[10_000:, "loss"] > 0).all()
    x = stats.assess(datasets.read(D / BMV2).trials)[0]
    summ = x.summary.set_index("offered_pps")
    first = summ[summ["plr"] > stats.PDR_FRACTION].index[0]
    says(BMV2, f"Its verdict is **{x.verdict.label}** ({x.verdict.why})",
         f"on this grid its PDR@0.5% is {pps(x.pdr.load)} pps, loss first passes 0.5% at {pps(first)} pps, and at "
         f"{pps(x.saturation_load)} pps it is saturated")


def test_bmv2_where_the_loss_went():
    t = trials(BMV2)
    d = datasets.read_drops([D / BMV2])
    loss = d[d["counted_as"] == "loss"]
    assert set(loss["reason"]) == {"d0.capture_drops"}
    assert (t["trace_missed"] == 0).all()
    low, high = t[t["offered_pps"] <= 20_000], t[t["offered_pps"] >= 30_000]
    assert (low["lost_unexplained"] == 0).all() and low["lost"].sum() == loss[loss["offered_pps"] <= 20_000]["packets"].sum()
    says(BMV2, f"Every packet lost at 10,000-20,000 pps ({pps(low['lost'].sum())}) was counted there")
    assert low[low["offered_pps"] < 10_000]["lost"].sum() == 0
    un = high.groupby("offered_pps")["lost_unexplained"].sum()
    says(BMV2, f"At 30,000 and 40,000 pps the capture socket took {pps(high['lost_attributed'].sum())} of the "
               f"{pps(high['lost'].sum())} lost packets; no counter read for these files explains the other "
               f"{pps(high['lost_unexplained'].sum())} ({' and '.join(pps(x) for x in un)})")
    # "no kernel counter or drop tracepoint saw them": nothing but capture drops and design rows at those loads
    other = d[(d["offered_pps"] >= 30_000) & ~d["counted_as"].isin(["loss", "design"])]
    assert other.empty


def test_bmv2_against_the_previous_measurement():
    old = pd.read_csv(io.StringIO(committed(f"datasets/{BMV2}/trials.csv", VETH_BEFORE)))
    olde = pd.read_csv(io.StringIO(committed(f"datasets/{BMV2}/experiments.csv", VETH_BEFORE)))
    oldr = pd.read_csv(io.StringIO(committed(f"datasets/{BMV2}/search_results.csv", VETH_BEFORE)))
    assert "9674187f" in olde["engine_version"].iloc[0] and "9674187f" in \
        datasets.read_experiments(D / BMV2)["engine_version"].iloc[0]
    day = pd.to_datetime(old["started_at"]).min().strftime("%Y-%m-%d")
    ok = old[~old["generator_limited"].astype(bool)]
    lo = ok[(ok["offered_pps"] >= 3_000) & (ok["offered_pps"] <= 7_500)]
    ol = (lo["tx"] - lo["rx"]).groupby(lo["offered_pps"]).sum() / lo.groupby("offered_pps")["tx"].sum()
    osteal = old.groupby("offered_pps")["steal"].mean()
    new = trials(BMV2)
    r = datasets.read_searches([D / BMV2]).set_index("engine")
    opdr = oldr.set_index("engine").loc["bmv2", "lower_pps"]
    says(BMV2, f"The previous data ({day}, commit {VETH_BEFORE[:7]}",
         f"Then bmv2 lost {span(ol, lambda x: f'{100 * x:.1f}')}% at 3,000-7,500 pps and its PDR was {pps(opdr)} pps, "
         f"with mean steal of {span(osteal, pct(1))}% per load",
         f"now it loses nothing up to 7,500 pps and its PDR is {r.loc['bmv2', 'answer']}, with mean steal of at most "
         f"{100 * new.groupby('offered_pps')['steal'].mean().max():.2f}%")
    assert "drops" not in old.columns  # "No counter was read then"


# -- click-course ------------------------------------------------------------------------

COURSE = "click-course"
COURSE_NAMES = {"your-router": "your router (exercise 2)", "click-reference": "Click reference router",
                "linux-kernel": "Linux kernel"}


def course():
    t = datasets.read(D / COURSE).trials
    return t, {a.experiment: a for a in stats.assess(t)}


def test_course_where_when_how():
    import hashlib

    t, _ = course()
    e = datasets.read_experiments(D / COURSE).set_index("experiment")
    for col in ("kernel", "cpu", "pinning", "generator_ceiling_pps"):
        assert e[col].nunique() == 1
    says(COURSE, f"kernel {e['kernel'].iloc[0]}, 2 vCPUs ({e['cpu'].iloc[0]})", f"`{e['pinning'].iloc[0]}`",
         f"Click is {e.loc['your-router', 'engine_version']}")
    cfg = D.parent / "routers" / "exercises" / "iprouter" / "solution" / "iprouter.click"
    sha = e.loc["your-router", "notes"].split("click_config_sha256=")[1].split(";")[0]
    says(COURSE, f"(sha256 prefix `{sha}`)")
    if cfg.exists():  # a checkout; an installed package carries the dataset, not necessarily the exercises
        assert hashlib.sha256(cfg.read_bytes()).hexdigest().startswith(sha)
    at = t.assign(at=pd.to_datetime(t["started_at"]))
    says(COURSE, f"{at['at'].min():%Y-%m-%d}, {when_range(t['started_at'])} UTC (first and last trial start)",
         *(f"`{x}` {when_range(g['started_at'])}" for x, g in t.groupby("experiment", sort=False)),
         f"code: commit {VETH_CODE[:7]}")
    ceiling = e["generator_ceiling_pps"].iloc[0]
    assert ceiling == veth()[3]
    says(COURSE, f"{t['offered_pps'].nunique()} loads", f"the start of the run, {pps(ceiling)} pps")
    text = " ".join((D / COURSE / "README.md").read_text().replace("\\\n", " ").split())
    for exp, row in e.iterrows():
        cmd = row["command"].replace(row["command"].split("--out ")[1], f"datasets/{COURSE}")
        assert " ".join(cmd.split()) in text, cmd
    says(COURSE, f"`trials.csv` | {len(t)} trials (3 routers × 9 loads × 5)")
    assert (t.groupby(["experiment", "offered_pps"]).size() == 5).all()


def test_course_table():
    t, a = course()
    for exp, name in COURSE_NAMES.items():
        x = a[exp]
        r = stats.records([x]).iloc[0]
        pdr = (f"at least {pps(x.summary['offered_pps'].max())} pps (no load failed)"
               if r["pdr_status"] == "at_least_max" else f"{pps(r['pdr_pps'])} pps")
        says(COURSE, f"| {name} | {pdr} | {pps(r['ndr_pps'])} pps | **{x.verdict.label}** | {x.verdict.why.split(' (to do')[0]}")
    for exp in ("your-router", "click-reference"):
        s = a[exp].summary.set_index("offered_pps")
        first = s[s["plr"] > stats.PDR_FRACTION].index[0]
        cand = s.index[a[exp].verdict.candidate_index]
        says(COURSE, f"loss first above 0.5% at {pps(first)} pps")
        if a[exp].verdict.good:
            assert a[exp].saturation_load == cand
            says(COURSE, f"saturation at {pps(cand)} pps |")
        else:
            says(COURSE, f"at the candidate saturation, {pps(cand)} pps, TIR is "
                         f"{a[exp].verdict.tir[a[exp].verdict.candidate_index]:.2f}, not below 0.3")
    lk = a["linux-kernel"].summary
    assert lk["plr"].iloc[:-1].eq(0).all() and lk["offered_pps"].max() == veth()[3]
    says(COURSE, f"it loses {sig2(lk['plr'].iloc[-1])}% at the ceiling",
         f"with at most {sig2(lk['plr'].max())}% mean loss")


def test_course_in_words():
    t, a = course()
    s = per_load(COURSE)
    yours, ref = a["your-router"], a["click-reference"]
    assert yours.pdr.load == ref.pdr.load
    for x in (yours, ref):
        assert (x.summary.set_index("offered_pps").loc[:x.pdr.load, "plr"] == 0).all()
    nxt = yours.summary["offered_pps"][yours.summary["offered_pps"] > yours.pdr.load].min()
    ly = yours.summary.set_index("offered_pps").loc[nxt, "plr"]
    lr = ref.summary.set_index("offered_pps").loc[nxt, "plr"]
    assert ly < lr
    says(COURSE, f"{sig2(ly)}% at {pps(nxt)} pps against the reference router's {sig2(lr)}%")
    cy, cr = s.loc["your-router", "cpu"], s.loc["click-reference", "cpu"]
    says(COURSE, f"{100 * cy.loc[yours.pdr.load]:.0f}% busy under the student's router and "
                 f"{100 * cr.loc[yours.pdr.load]:.0f}% under the reference router at {pps(yours.pdr.load)} pps",
         f"{span(pd.concat([cy.loc[nxt:], cr.loc[nxt:]]), pct())}% busy under both at every higher load")
    lim = t[t["generator_limited"].astype(bool)]
    by = lim.groupby("experiment").size()
    assert (lim["offered_pps"] == lim["offered_pps"].max()).all() and "linux-kernel" not in by
    says(COURSE, f"{by['your-router']} of `your-router`'s {len(t[t['experiment'] == 'your-router'])} and "
                 f"{by['click-reference']} of `click-reference`'s, all at the ceiling")
    assert (t["engine_forwarded"] == t["rx"]).all()


def test_course_where_the_loss_went_and_steal():
    t, _ = course()
    d = datasets.read_drops([D / COURSE])
    loss = d[d["counted_as"] == "loss"]
    by = loss.groupby(["experiment", "reason"])["packets"].sum()
    lost = t.groupby("experiment")["lost"].sum()
    assert (t["lost_unexplained"] == 0).all() and (by.groupby(level=0).sum() == lost).all()
    fd = {e: by[e][by[e].index.str.startswith("FromDevice@")].iloc[0] for e in ("your-router", "click-reference")}
    q = {e: by[e, "out/Queue@1.drops"] for e in fd}
    says(COURSE, f"the student's router {pps(fd['your-router'])} of {pps(lost['your-router'])}, the reference router "
                 f"{pps(fd['click-reference'])} of {pps(lost['click-reference'])}",
         f"output `Queue` ({pps(q['your-router'])} and {pps(q['click-reference'])})",
         f"{pps(by['your-router', 'CPU_BACKLOG'])} at the DUT's input backlog",
         f"The kernel's {pps(lost['linux-kernel'])} lost packets were all dropped at that backlog")
    assert "CPU_BACKLOG" not in by["click-reference"] and list(by["linux-kernel"].index) == ["CPU_BACKLOG"]
    sup = pd.read_csv(D / COURSE / "superseded_trials.csv")
    assert (sup["steal"] > 0.02).all() and len(sup) == (t["attempt"] - 1).sum()
    dist = t[t["disturbed"]]
    assert set(dist["experiment"]) == {"click-reference"} and (dist["lost"] == 0).all()
    says(COURSE, f"the {len(sup)} attempts measured again", f"{len(sup)} attempts had more than 2% steal and were "
                 f"measured again (the largest {100 * sup['steal'].max():.0f}%); {len(dist)} trials of the reference "
                 f"router still had more after 3 repeats", f"(at most {100 * dist['steal'].max():.1f}%)")


# -- comparison --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ours():
    return comparison.ours(D / "comparison")


SHORT = {"single_flow_50fw": "single flow", "gre_multiflow_50fw": "GRE", "routes_900k_multiflow_50fw": "900k routes",
         "ddos_drop_50pct": "drop"}
TABLE = {"single_flow_50fw": "single flow, 50 rules", "gre_multiflow_50fw": "GRE, multi-flow, 50 rules",
         "routes_900k_multiflow_50fw": "900k routes, multi-flow, 50 rules", "ddos_drop_50pct": "50% drop"}


def test_comparison_cells_runs_and_intervals(ours):
    t = trials("comparison")
    measured = ours[ours["reason"] == ""]
    e = datasets.read_experiments(D / "comparison")
    assert (t.groupby(["experiment", "offered_pps"]).size() == 5).all() and t["offered_pps"].nunique() == 8
    assert (t["duration_s"] == 2).all()
    says("comparison", "(0.1-1.0, 8 loads). Each cell measured K = 5 trials of T = 2 s",
         f"so {(measured['runs'] < 5).sum()} of the {len(measured)} measured cells hold fewer than 5; "
         f"{(measured['runs'] == 1).sum()} hold one",
         f"{measured['uncertain'].sum()} of the {len(measured)} measured cells have an interval that reaches "
         "another colour",
         f"the start of that run: {e['generator_ceiling_pps'].iloc[0]:,.0f} pps",
         f"--ceiling {e['generator_ceiling_pps'].iloc[0]:.0f}")
    assert e["generator_ceiling_pps"].nunique() == 1 and e["generator_ceiling_pps"].iloc[0] == veth()[3]
    assert (measured["runs"] >= 1).all()  # "every measured cell kept at least one trial"
    for col in ("kernel", "cpu", "pinning"):
        assert e[col].nunique() == 1
    says("comparison", f"kernel {e['kernel'].iloc[0]}), 2 vCPUs ({e['cpu'].iloc[0]})", f"`{e['pinning'].iloc[0]}`")
    assert (e["command"].str.replace(r"--out \S+", "--out datasets/comparison", regex=True)
            == "routerlab compare --out datasets/comparison --ceiling 397735").all()


def test_comparison_when(ours):
    t = trials("comparison")
    at = pd.to_datetime(t["started_at"])
    says("comparison", f"**When:** {at.min():%Y-%m-%d %H:%M} to {at.max():%Y-%m-%d %H:%M} UTC (first and last trial "
                       f"start)", f"code: commit {VETH_CODE[:7]}")
    assert at.min() > pd.to_datetime(trials(BMV2)["started_at"]).max()


def test_comparison_in_words(ours):
    m = ours[ours["reason"] == ""]

    def cells(router, scen=None):
        d = m[m["router"] == router]
        return d if scen is None else d[d["scenario"].isin(scen)]

    cap = comparison.capacity(ours).set_index(["scenario", "router"])
    others = ["gre_multiflow_50fw", "routes_900k_multiflow_50fw", "ddos_drop_50pct"]
    assert (cap.loc[[(s, "ebpf") for s in others], "status"] == "at_least_max").all()
    assert cap.loc[("single_flow_50fw", "ebpf"), "capacity"] == cap.loc[("single_flow_50fw", "nft"), "capacity"] == 0.6
    ebpf = cells("ebpf").set_index(["scenario", "offered"])["loss_pct"]
    assert (ebpf.xs(0.1, level="offered") == 0).all()
    up = ebpf[(ebpf.index.get_level_values("offered") >= 0.2)]
    one_high = up[(up.index.get_level_values("scenario") == "single_flow_50fw")
                  & (up.index.get_level_values("offered") > 0.6)]
    rest = up.drop(one_high.index)
    says("comparison", f"and {span(rest, lambda x: sig2(x / 100))}% from 20% up, except with one flow above 60% "
                       f"({sig2(one_high.iloc[0] / 100)}% at 80%, {sig2(one_high.iloc[1] / 100)}% at the ceiling)")
    d = comparison_lost_by_place()
    assert set(d.loc["ebpf"].index) == {"dut NOT_SPECIFIED"}
    dp = cells("fastclick-dpdk").set_index(["scenario", "offered"])
    one = dp.loc["single_flow_50fw"]
    assert (one.loc[:0.8, "loss_pct"] == 0).all()
    others_dp = dp.drop("single_flow_50fw", level="scenario")["loss_pct"]
    assert (others_dp <= 0.5).all()
    says("comparison", f"(at most {others_dp.max():.3f}%, with GRE at the ceiling)",
         f"With one flow at the ceiling it lost {sig2(one.loc[1.0, 'loss_pct'] / 100)}% in the "
         f"{one.loc[1.0, 'runs']} trials the generator could deliver, and at 80% only one of 5 trials was delivered")
    assert one.loc[0.8, "runs"] == 1 and others_dp.idxmax() == ("gre_multiflow_50fw", 1.0)
    nft = cells("nft").set_index(["scenario", "offered"])["loss_pct"]
    r9, sf = nft.loc["routes_900k_multiflow_50fw"], nft.loc["single_flow_50fw"]
    assert cap.loc[("routes_900k_multiflow_50fw", "nft"), "capacity"] == cap.loc[("single_flow_50fw", "nft"), "capacity"]
    says("comparison", f"({r9.loc[0.6]:.0f}% at 60%, then {r9.loc[0.8]:.1f}% at 80%); with one flow it loses "
                       f"{sf.loc[0.6]:.2f}% at 60% and {sf.loc[0.8]:.0f}% at 80%")
    bmv2 = cells("bmv2").set_index(["scenario", "offered"])["loss_pct"]
    at01, at02 = bmv2.xs(0.1, level="offered"), bmv2.xs(0.2, level="offered")
    says("comparison", f"It loses {span(at01, lambda x: sig2(x / 100))}% already at 10% of the ceiling "
                       f"({pps(m[m['offered'] == 0.1]['offered_pps'].iloc[0])} pps), and "
                       f"{span(at02, lambda x: f'{x:.0f}')}% at 20%",
         f"its PDR in `testbed-bmv2` is {datasets.read_searches([D / BMV2]).set_index('engine').loc['bmv2', 'answer']}")
    full = m[m["offered"] == 1.0]
    green = full[full["colour"] == "green"]
    yellow = full[full["colour"] == "yellow"]
    assert list(zip(green["router"], green["scenario"])) == [("fastclick-dpdk", "routes_900k_multiflow_50fw"),
                                                             ("fastclick-dpdk", "ddos_drop_50pct")]
    assert sorted(zip(yellow["router"], yellow["scenario"])) == sorted(
        [("ebpf", s) for s in others] + [("fastclick-dpdk", "gre_multiflow_50fw")])
    assert (full.drop(green.index).drop(yellow.index)["colour"] == "red").all()
    says("comparison", f"**At full load only {['no', 'one', 'two', 'three'][len(green)]} cells are green**",
         f"fractions of a {m['offered_pps'].max() / 1e3:.0f} kpps generator")


def comparison_lost_by_place() -> pd.Series:
    """Lost packets of the kept trials per engine and counter (``place reason``)."""
    t = trials("comparison")
    e = datasets.read_experiments(D / "comparison").set_index("experiment")["engine"]
    keys = ["experiment", "offered_pps", "trial"]
    d = datasets.read_drops([D / "comparison"])
    rows = d[d["counted_as"] == "loss"].merge(t[~t["limited"]][keys], on=keys)
    return rows.assign(engine=rows["experiment"].map(e), w=rows["place"] + " " + rows["reason"]) \
        .groupby(["engine", "w"])["packets"].sum()


def test_comparison_where_the_loss_went():
    t = trials("comparison")
    e = datasets.read_experiments(D / "comparison").set_index("experiment")
    k = t[~t["limited"]].assign(engine=lambda x: x["experiment"].map(e["engine"]))
    tot = k.groupby("engine")[["lost", "lost_unexplained"]].sum()
    where = {"nft": "dut CPU_BACKLOG", "ebpf": "dut NOT_SPECIFIED (the XDP ring)",
             "click": "FromDevice's capture socket (`kernel_drops`), its output Queue",
             "fastclick": "FromDevice's capture socket (`kernel_drops`), its output Queue",
             "fastclick-dpdk": "FromDPDKDevice `hw_dropped` (its AF_XDP ring)",
             "bmv2": "simple_switch's capture socket (`d0.capture_drops`)"}
    for eng, w in where.items():
        says("comparison", f"| {eng} | {pps(tot.loc[eng, 'lost'])} | {w} | {pps(tot.loc[eng, 'lost_unexplained'])} |")
    # the places named are the counters that took (nearly) all of each engine's loss
    d = comparison_lost_by_place()
    share = d / d.groupby(level=0).transform("sum")
    top = {"nft": ["dut CPU_BACKLOG"], "ebpf": ["dut NOT_SPECIFIED"],
           "click": ["dut FromDevice@4.kernel_drops", "dut out/Queue@1.drops"],
           "fastclick": ["dut FromDevice@4.kernel_drops", "dut out/Queue@1.drops"],
           "fastclick-dpdk": ["dut FromDPDKDevice@4.hw_dropped"], "bmv2": ["dut d0.capture_drops"]}
    for eng, places in top.items():
        assert share.loc[eng].loc[places].sum() > 0.999, eng
    # the small remainders of nft, click and fastclick are all in the drop scenario
    un = k.groupby(["engine", "scenario"])["lost_unexplained"].sum()
    small = un.loc[["nft", "click", "fastclick"]]
    assert (small[small != 0].index.get_level_values("scenario") == "ddos-drop50").all()
    assert (un.loc[["ebpf", "fastclick-dpdk"]] == 0).all()
    says("comparison", "no counter read for these files saw "
                       f"{100 * tot.loc['bmv2', 'lost_unexplained'] / tot.loc['bmv2', 'lost']:.1f}% of its lost packets")


def test_comparison_verdicts(ours):
    v = comparison.verdicts(ours)
    why = ours[["scenario", "router", "verdict_why"]].drop_duplicates()
    v = v[v["verdict"] != ""].merge(why, on=["scenario", "router"])
    good = v[v["verdict"] == "GOOD"]
    says("comparison", f"{len(good)} of the {len(v)} rows are **GOOD**", f"{len(v) - len(good)} are **BAD**")
    for (verdict, why), g in v.groupby(["verdict", "verdict_why"], sort=False):
        rows = "; ".join(f"{r} ({', '.join(SHORT[s] for s in gr['scenario'])})"
                         for r, gr in g.groupby("router", sort=False))
        says("comparison", f"- {verdict}, {why}: {rows}")


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
            says("comparison", text)
            assert ("| " + table_name + " | ") in " ".join((D / "comparison" / "README.md").read_text().split())


# -- microbench --------------------------------------------------------------------------


def test_microbench_testbed_rows_give_no_ratio_to_a_limited_pdr():
    pdr = datasets.search_pdr(datasets.read_searches([D / "testbed-click"]))
    table, _, _ = forwarding.summary(datasets.read_microbench(D / "microbench", "forwarding"), pdr)
    tb = table[table["where"] == "testbed (PDR@0.5%)"].set_index("engine")
    names = {"fastclick-dpdk": "fastclick-dpdk, testbed (PDR@0.5%)", "click": "click, testbed",
             "linux": "linux, testbed", "fastclick": "fastclick (AF_PACKET), testbed", "ebpf": "ebpf, testbed"}
    for engine, name in names.items():
        r = tb.loc[engine]
        if r["at_least"]:
            says("microbench", f"| {name} | at least {r['mpps']:.3f} ({r['bound']}) | none: a lower bound | |")
        else:
            says("microbench", f"| {name} | {r['mpps']:.3f} | {r['ratio_to_fastest']:.2f} | |")
    says("microbench", f"its PDR is at least {tb.loc['fastclick-dpdk', 'mpps'] * 1e3:.0f} kpps",
         f"at least {tb.loc['linux', 'mpps'] * 1e3:.0f} kpps, the generator's ceiling in that run")
    known = tb[~tb["at_least"]]
    assert known["ratio_to_fastest"].idxmax() == "fastclick" and set(known.index) == {"click", "fastclick"}
    assert tb.loc[["linux", "ebpf"], "bound"].eq("nothing failed up to the ceiling").all()
    says("microbench", f"FastClick on AF_PACKET carries {known.loc['fastclick', 'mpps'] / known.loc['click', 'mpps']:.2f} "
                       "times what Click carries")


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
    veth, click = trials("testbed-veth"), trials("testbed-click")
    sup = pd.read_csv(D / "testbed-veth" / "superseded_trials.csv")
    dist = veth[veth["disturbed"]]
    assert f"{(veth['attempt'] > 1).sum()} of `datasets/testbed-veth`'s {len(veth)} sweep trials had more than 2% and " \
           f"were measured again (one attempt had {100 * sup['steal'].max():.0f}%), {len(dist)} still had more after " \
           f"3 repeats (at most {100 * dist['steal'].max():.1f}%), and no trial of `datasets/testbed-click` had more " \
           f"than {100 * click['steal'].max():.1f}%" in doc
    assert pd.to_datetime(veth["started_at"]).min().strftime("%Y-%m-%d %H:%M") == "2026-11-23 22:48"
