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
#: The commit that holds the sweeps of 2026-11-22, which the README compares with.
VETH_BEFORE = "61fbfd7645376d82bd71ba8255a1f476ab169728"
#: The commit the run of 2026-11-23 measured with (/tmp/veth-new/commit at the time).
VETH_CODE = "24930a33b2ea3ec4f342fb6ff9391a75dca0174f"


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
    sweeps = t[t["experiment"] != "click-single-flow"]
    day = pd.to_datetime(t["started_at"]).dt.strftime("%Y-%m-%d").unique()
    assert len(day) == 1
    r = datasets.read_searches([D / VETH])
    says(VETH, f"**When:** {day[0]}, sweeps from {when_range(t['started_at']).replace('-', ' to ')} UTC "
               f"(Click last, from {when_range(t[t['experiment'] == 'click-single-flow']['started_at']).split('-')[0]})",
         f"searches and benchmarks recorded from {when_range(r['when']).replace('-', ' to ')} UTC")
    assert when_range(sweeps["started_at"]).split("-")[1] < when_range(r["when"]).split("-")[0]
    # the commands, as experiments.csv recorded them: the kernel paths' one form, and Click's
    forms = set()
    for row in e.itertuples():
        if row.engine == "click":
            says(VETH, row.command)
        else:
            forms.add(row.command.replace(f"--engine {row.engine} --scenario {row.scenario.split(':')[0]}",
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
    assert not (D / VETH / "superseded_trials.csv").exists()
    assert (t["attempt"] == 1).all() and not t["disturbed"].any()
    s = pd.read_csv(D / VETH / "search_trials.csv")
    assert (s["attempt"] == 1).all() and not s["disturbed"].any()
    g = pd.read_csv(D / VETH / "generators.csv")
    says(VETH, f"{len(g)} trials of {g['generator'].nunique()} generators")
    # the columns the table names are there
    for c in ("attempt", "disturbed", "lost", "lost_attributed", "lost_unexplained", "trace_missed", "drops"):
        assert c in t.columns and c in s.columns
    assert (t["lost"] == t["tx"] - t["rx"]).all()
    assert (t["lost"] == t["lost_attributed"] + t["lost_unexplained"]).all()


def test_veth_steal_and_repeats():
    t = veth()[0]
    s = pd.read_csv(D / VETH / "search_trials.csv")
    mean = t.groupby("experiment")["steal"].mean()
    assert (t["steal_flagged"] == (t["steal"] > 0.02)).all() and not t["steal_flagged"].any()
    says(VETH, f"Mean steal per sweep was {span(mean, pct(2))}%, and the largest in one trial "
               f"{100 * t['steal'].max():.2f}% (searches: {100 * s['steal'].max():.2f}%)",
         f"none of the {len(t)} sweep trials and {len(s)} search trials passed it")


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
    # what the "why" column says, checked against the verdict's own account
    assert not v["linux-single-flow"].verdict.good and v["linux-single-flow"].pdr.status == "at_least_max"
    assert a["linux-single-flow"].summary["offered_pps"].max() == ceiling
    for exp in ("nft-single-flow-fw0", "nft-single-flow-fw5"):
        s = a[exp].summary
        assert not a[exp].verdict.good and (s["plr"] > stats.PDR_FRACTION).sum() == 1
        assert s.loc[s["plr"] > stats.PDR_FRACTION, "offered_pps"].iloc[0] == ceiling
    for exp in ("ebpf-single-flow", "ebpf-single-flow-fw50"):
        assert not a[exp].verdict.good and a[exp].verdict.still_rising
    for exp in ("nft-single-flow-fw50", "click-single-flow"):
        assert a[exp].verdict.good
    lim = t[t["generator_limited"].astype(bool)].groupby(["experiment", "offered_pps"]).size()
    says(VETH, f"all {lim.loc[('nft-single-flow-fw0', 479_042)]} trials at 479,042 pps were generator-limited "
               f"(left out), and {lim.loc[('nft-single-flow-fw0', ceiling)]} of 10 at the ceiling")
    # "the kernel paths lose nothing up to 0.3 of the ceiling; the XDP router loses a little from 0.2 on"
    s = stats.summaries(list(a.values())).set_index(["experiment", "offered_pps"])["plr"]
    frac = s.index.get_level_values(1) / ceiling
    kern = s.index.get_level_values(0).isin(KERNEL_PATHS[:4])
    xdp = s.index.get_level_values(0).str.startswith("ebpf")
    assert (s[kern & (frac < 0.31)] == 0).all() and (s[kern & (frac > 0.39) & (frac < 0.41)] > 0).any()
    assert (s[xdp & (frac > 0.19)] > 0).all() and (s[xdp & (frac < 0.19)] == 0).all()
    says(VETH, "The kernel paths lose nothing up to 0.3 of the ceiling; the XDP router loses a little from 0.2 on")
    assert (t[t["experiment"] == "nft-single-flow-fw0"].groupby("offered_pps")["generator_limited"].sum() == 10).sum() == 1
    l = a["linux-single-flow"].summary.set_index("offered_pps")
    says(VETH, f"linux forwards every load up to the ceiling with at most {sig2(l['plr'].max())}% mean loss")
    for exp, name in (("ebpf-single-flow", "ebpf"), ("ebpf-single-flow-fw50", "ebpf with 50 rules")):
        s = a[exp].summary.set_index("offered_pps")
        i = a[exp].verdict.candidate_index
        o = a[exp].summary["offered_pps"].iloc[i]
        says(VETH, f"{name} loses {sig2(s.loc[o, 'plr'])}% at {pps(o)} pps and still forwards "
                   f"{pps(s.loc[o, 'throughput_pps'])} pps there (TIR {a[exp].verdict.tir[i]:.2f})")
    for exp in ("nft-single-flow-fw50",):
        s = a[exp].summary.set_index("offered_pps")
        o = a[exp].saturation_load
        after = s.loc[o:]
        says(VETH, f"nft with 50 rules forwards {pps(s['throughput_pps'].max())} pps at most "
                   f"(at {pps(s['throughput_pps'].idxmax())} offered), then "
                   f"{', '.join(pps(x) for x in after['throughput_pps'])} pps at "
                   f"{' and '.join(pps(x) for x in after.index)}")
        cpu = kept_trials().groupby(["experiment", "offered_pps"])["cpu_load"].mean().loc[exp]
        says(VETH, f"its CPU {span(cpu.loc[o:], pct())}% busy")


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


def test_veth_where_the_loss_went_table():
    x = veth_lost_by_place()
    cols = ["dut CPU_BACKLOG", "sink CPU_BACKLOG", "dut NOT_SPECIFIED", "lost_unexplained"]
    assert set(x.columns) == {"lost", "lost_unexplained", "trace_missed"} | set(cols)  # no other place took loss

    def cell(n, lost):
        return "0" if n == 0 else f"{pps(n)} ({sig2(n / lost)}%)"

    for exp, name in VETH_NAMES.items():
        r = x.loc[exp]
        says(VETH, f"| {name} | {pps(r['lost'])} | " + " | ".join(cell(r[c], r["lost"]) for c in cols)
             + f" | {pps(r['trace_missed'])} |")
    # every loss of the sweeps, load by load, is what loss_places splits (its parts sum to the mean loss)
    t, d, a, _ = veth()
    lp = stats.loss_places(t, d).groupby(["experiment", "offered_pps"])["loss"].sum()
    plr = stats.summaries(list(a.values())).set_index(["experiment", "offered_pps"])["plr"]
    assert np.allclose(lp, plr.reindex(lp.index), atol=1e-12)


def test_veth_where_kernel_path_loss_went():
    t, d, _, _ = veth()
    keys = ["experiment", "offered_pps", "trial"]
    kernel = ["linux-single-flow", "nft-single-flow-fw0", "nft-single-flow-fw5", "nft-single-flow-fw50"]
    x = veth_lost_by_place().loc[kernel]
    kept = kept_trials()
    ctx = d[d["counted_as"] == "context"].merge(kept[keys], on=keys)
    c = ctx.pivot_table(index="experiment", columns=["place", "reason"], values="packets", aggfunc="sum").loc[kernel]
    # CPU 1's softnet drop counter took every lost packet, the tracer's misses included
    assert (c[("cpu1", "dropped")] == x["lost"]).all()
    # the unexplained ones are the sink veth's rx drops the tracer did not see
    miss = c[("sink", "s0.rx_dropped")] - x["sink CPU_BACKLOG"]
    assert (miss == x["lost_unexplained"]).all() and (c[("dut", "d0.rx_dropped")] == x["dut CPU_BACKLOG"]).all()
    says(VETH, f"CPU 1's softnet `dropped` counter (a context row) counted exactly the lost packets "
               f"of each of these sweeps ({', '.join(pps(n) for n in x['lost'])})",
         f"the {' and '.join(pps(n) for n in x['lost_unexplained'] if n)} packets no traced reason explains "
         f"are exactly the sink veth's `s0.rx_dropped` minus its traced CPU_BACKLOG")
    share = x["sink CPU_BACKLOG"] / x["lost"]
    says(VETH, f"the sink's share is {span(share, pct())}% of each sweep's loss")
    lp = stats.loss_places(t, d)
    lp = lp[lp["experiment"].isin(kernel)].pivot_table(index=["experiment", "offered_pps"], columns="where",
                                                        values="loss", aggfunc="sum").fillna(0)
    lp = lp[lp.sum(axis=1) > 0]
    per_load = lp["sink CPU_BACKLOG"] / lp.sum(axis=1)
    says(VETH, f"load by load it is {span(per_load, pct())}%")
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
    per = rows.assign(w=rows["place"] + " " + rows["source"] + " " + rows["reason"]).pivot_table(
        index=keys, columns="w", values="packets", aggfunc="sum").fillna(0)
    # trial by trial, the DUT's NOT_SPECIFIED drops are the generator veth's tx_dropped, and nothing else moved
    assert set(per.columns) == {"dut kfree_skb NOT_SPECIFIED", "tg link g0.tx_dropped", "sink kfree_skb NETFILTER_DROP"}
    assert (per["dut kfree_skb NOT_SPECIFIED"] == per["tg link g0.tx_dropped"]).all()
    lost = t[t["experiment"].str.startswith("ebpf")].set_index(keys)
    assert (per["dut kfree_skb NOT_SPECIFIED"].reindex(lost.index).fillna(0) == lost["lost"]).all()
    says(VETH, f"in each of the {int((per['dut kfree_skb NOT_SPECIFIED'] > 0).sum())} ebpf trials that lost packets "
               f"the two are equal")
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
    s = a["click-single-flow"].summary.set_index("offered_pps")
    cpu = c.groupby("offered_pps")["cpu_load"].mean()
    worst = (1 - c["rx"] / c["tx"]).groupby(c["offered_pps"]).max()
    zero = s[s["plr"] == 0].index
    assert (zero == s.index[:len(zero)]).all()
    o = a["click-single-flow"].saturation_load
    after = s.loc[o:]
    says(VETH,
         f"**Click** ({when_range(c['started_at'])} UTC",
         f"no loss up to {pps(zero.max())} pps, with the CPU {100 * cpu.loc[zero.max()]:.0f}% busy",
         f"{sig2(s.loc[200_000, 'plr'])}% at 200,000 pps (one trial lost {sig2(worst.loc[200_000])}%)",
         f"{sig2(s.loc[250_000, 'plr'])}% at 250,000 pps",
         f"throughput (offered × (1 - mean loss)) falls from {pps(s.loc[250_000, 'throughput_pps'])} pps there to "
         + ", ".join(f"{pps(x)}" for x in after["throughput_pps"]) + " pps at "
         + " and ".join(f"{pps(x)}" for x in after.index) + f" offered, with the CPU "
         f"{span(cpu.loc[250_000:], pct())}% busy",
         f"equals the sink's count in all {len(c)} trials")
    assert (c["engine_forwarded"] == c["rx"]).all() and not c["generator_limited"].any()
    says(VETH, f"its PDR@0.5% on this grid is {pps(a['click-single-flow'].pdr.load)} pps",
         "No Click trial was generator-limited")
    # every packet reached the DUT: its drop of the kernel's copy (design) counted nearly all that was sent
    dut = d[(d["experiment"] == "click-single-flow") & (d["place"] == "dut") & (d["reason"] == "NETFILTER_DROP")]
    share = dut["packets"].sum() / c["tx"].sum()
    says(VETH, f"the DUT's drop of the kernel's copy of each packet counted {100 * share:.2f}% of the packets sent")
    x = veth_lost_by_place().loc["click-single-flow"]
    says(VETH, f"{pps(x['lost_unexplained'])} of Click's {pps(x['lost'])} lost packets")


def test_veth_searches():
    r = datasets.read_searches([D / VETH])
    ours = r[(r["method"] == "routerlab") & ~r["experiment"].str.startswith("bench-")]
    for exp, name in VETH_NAMES.items():
        if exp == "click-single-flow":
            continue
        a = ours[ours["experiment"] == exp].set_index("kind")["answer"]
        says(VETH, f"| {name} | {a['pdr']} | {a['ndr']} |")
    assert not r["generator_bound"].any()
    found = r[r["upper_pps"].notna()]
    mine = found[found["method"] == "routerlab"]
    says(VETH, f"Precision (upper/lower - 1) is {span(mine['precision'], pct(1))}%")
    assert (r["final_trials"] == 3).all()
    linux = r[(r["engine"] == "linux") & (r["kind"] == "pdr") & (r["method"] == "routerlab")].sort_values("when")
    says(VETH, f"linux's PDR came out at {', '.join(linux['answer'].str.removesuffix(' pps').iloc[:-1])} and "
               f"{linux['answer'].iloc[-1]} in three searches between {when_range(linux['when']).replace('-', ' and ')}")
    for eng, exp in (("nft, 50 rules", "nft-single-flow-fw50"), ("ebpf, no rules", "ebpf-single-flow")):
        a = r[(r["experiment"] == exp) & (r["kind"] == "pdr")]["answer"].iloc[0]
        b = r[(r["experiment"] == f"bench-pdr-{exp}")]["answer"].iloc[0]
        says(VETH, f"{eng}: {a}, then {b}")
    nd = ours.set_index(["experiment", "kind"])["lower_pps"]
    assert nd[("linux-single-flow", "ndr")] > nd[("linux-single-flow", "pdr")]
    p = pd.read_csv(D / VETH / "search_trials.csv")
    p = p.assign(loss=p["lost"] / p["tx"])
    lx = p[(p["experiment"] == "linux-single-flow") & (p["kind"] == "pdr") & (p["phase"] == "final")]
    at = lx[np.isclose(lx["load"], linux["upper_pps"].iloc[0])]
    says(VETH, f"at {pps(at['load'].iloc[0])} pps its three trials lost "
               f"{', '.join(sig2(x) for x in at['loss'].iloc[:-1])} and {sig2(at['loss'].iloc[-1])}%")
    t = veth()[0]
    sw = t[(t["experiment"] == "linux-single-flow")]
    says(VETH, f"no linux sweep trial lost more than {sig2((sw['lost'] / sw['tx']).max())}%")
    kernel = p[p["engine"].isin(["linux", "nft"]) & ~p["generator_limited"]]
    places = kernel["drops"].dropna().str.replace(r"=\d+", "", regex=True).str.split(";").explode()
    assert set(places) == {"dut:CPU_BACKLOG", "sink:CPU_BACKLOG"}
    xdp = p[(p["engine"] == "ebpf")]["drops"].dropna().str.replace(r"=\d+", "", regex=True)
    assert set(xdp) == {"dut:NOT_SPECIFIED"}
    un = p.groupby("experiment")["lost_unexplained"].sum()
    says(VETH, f"no counter explains {span(un[un > 0], pps)} packets in two of the searches")
    assert (un >= 0).all() and (un > 0).sum() == 2


def test_veth_against_mlrsearch():
    r = datasets.read_searches([D / VETH])
    b = r[r["experiment"] == "bench-search-linux-single-flow"].set_index(["kind", "method"])
    for kind in ("ndr", "pdr"):
        o, m = b.loc[(kind, "routerlab")], b.loc[(kind, "mlrsearch")]
        # an answer that is only a lower bound is set against nothing
        ratio = f"{o['lower_pps'] / m['lower_pps']:.3f}" if not np.isnan(m["upper_pps"]) else "none (a lower bound)"
        says(VETH,
             f"| {kind.upper()} answer | {o['answer']} ({o['trials']} trials, {o['trial_seconds']:g} trial-s) | "
             f"{m['answer']} ({m['trials']} trials, {m['trial_seconds']:g} trial-s) | "
             f"{ratio} answer, {o['trial_seconds'] / m['trial_seconds']:.2f} trial-seconds |")
    p = pd.read_csv(D / VETH / "search_trials.csv")
    p = p[(p["experiment"] == "bench-search-linux-single-flow") & (p["duration"] == 1.0)]
    p = p.assign(loss=p["lost"] / p["tx"])
    top = b.loc[("pdr", "mlrsearch"), "lower_pps"]
    at = p[(p["kind"] == "pdr") & np.isclose(p["load"], top)]
    ours, theirs = at[at["method"] == "routerlab"], at[at["method"] == "mlrsearch"]
    assert len(ours) == len(theirs) == 3 and not ours["passed"].any() and theirs["passed"].sum() == 2
    says(VETH, f"At {pps(top)} pps our three full-duration trials lost {', '.join(sig2(x) for x in ours['loss'])}% "
               f"and MLRsearch's, in the same run, {', '.join(sig2(x) for x in theirs['loss'])}%")
    nd = p[(p["kind"] == "ndr")]
    mine = nd[(nd["method"] == "routerlab") & np.isclose(nd["load"], b.loc[("ndr", "routerlab"), "lower_pps"])]
    them = nd[(nd["method"] == "mlrsearch") & (nd["load"] > b.loc[("ndr", "mlrsearch"), "lower_pps"])]
    assert mine["passed"].sum() == 2 and not them.groupby("load")["passed"].median().astype(bool).any()
    says(VETH, f"our NDR load passed 2 of its 3 trials (one lost {sig2(mine['loss'].max())}%), while MLRsearch "
               f"failed every load above its answer on losses as small as {sig2(them[~them['passed']]['loss'].min())}%")


def test_veth_against_2026_11_22():
    old = pd.read_csv(io.StringIO(committed("datasets/testbed-veth/trials.csv", VETH_BEFORE)))
    olde = pd.read_csv(io.StringIO(committed("datasets/testbed-veth/experiments.csv", VETH_BEFORE)))
    t, _, _, ceiling = veth()
    oc = float(olde["generator_ceiling_pps"].unique()[0])
    half = oc / 2

    def worst_upto(trials):
        k = trials[trials["experiment"].isin(KERNEL_PATHS)]
        s = stats.summaries(stats.assess(k))
        return s[s["offered_pps"] <= half + 1].groupby("experiment")["plr"].max()

    def steal(trials):
        k = trials[trials["experiment"].isin(KERNEL_PATHS)]
        return k.groupby("experiment")["steal"].mean(), (k["steal"] > 0.02).mean()

    wo, wn = worst_upto(old), worst_upto(t)
    (so, fo), (sn, fn) = steal(old), steal(t)
    says(VETH, f"up to {pps(half)} pps, half of that day's ceiling ({pps(oc)} pps), each kernel-path sweep's worst "
               f"mean loss was {span(wo, sig2)}% then and is {span(wn, sig2)}% now",
         f"mean steal per sweep was {span(so, pct(1))}% then ({100 * fo:.0f}% of trials above 2%) and "
         f"{span(sn, pct(2))}% now ({100 * fn:.0f}%)",
         f"the kernel build ({olde['kernel'].iloc[0]}, now {datasets.read_experiments(D / VETH)['kernel'].iloc[0]}) "
         f"and the generator's ceiling ({pps(oc)} pps, now {pps(ceiling)})")
    assert olde["when"].str.startswith("2026-11-22").all()


# -- testbed-click -----------------------------------------------------------------------


def test_click_pdr_table_never_sets_a_limited_answer_against_another():
    r = datasets.read_searches([D / "testbed-click"])
    linux = r.set_index("engine").loc["linux", "lower_pps"]
    for row in r.itertuples():
        ratio = "none: a lower bound" if row.generator_bound else f"{row.lower_pps / linux:.2f}"
        says("testbed-click", f"| {row.engine} | {row.answer} | {ratio} |")
    says("testbed-click", f"(generator ceiling {r['generator_ceiling_pps'].iloc[0]:,.0f} pps)",
         f"--ceiling {r['generator_ceiling_pps'].iloc[0]:.0f}")
    says("testbed-click", f"the searches {when_range(r['when'])} UTC (when each one finished), the sweeps' trials "
                          f"{when_range(trials('testbed-click')['started_at'])} UTC")


def test_click_why_only_fastclick_dpdk_was_bounded_by_the_generator():
    r = datasets.read_searches([D / "testbed-click"]).set_index("engine")
    p = pd.read_csv(D / "testbed-click" / "search_trials.csv")
    dpdk = p[p["engine"] == "fastclick-dpdk"]
    upper = r.loc["fastclick-dpdk", "upper_pps"]
    at = dpdk[np.isclose(dpdk["load"], upper)]
    above = dpdk[(dpdk["load"] > upper * 1.0001) & (dpdk["phase"] == "final")]
    lim = dpdk[dpdk["generator_limited"] & (dpdk["duration"] == 1.0)]
    assert (dpdk["rx"] == dpdk["tx"]).all()  # "not one of its trials lost a packet"
    says("testbed-click",
         f"{at['generator_limited'].sum()} of the {len(at)} trials at its failing load ({upper:,.0f} pps) were limited, "
         f"and {above['generator_limited'].sum()} of the {len(above)} full-duration trials above it",
         f"Its PDR is at least {r.loc['fastclick-dpdk', 'lower_pps']:,.0f} pps",
         f"its limited full-duration trials offered {lim['tx'].min():,}-{lim['tx'].max():,} pps")
    first = {e: p[p["engine"] == e].iloc[1] for e in ("click", "fastclick")}  # the probe at the ceiling
    assert all(f["generator_limited"] and f["duration"] == 0.5 for f in first.values())
    assert all(not p[(p["engine"] == e) & (p["load"] != first[e]["load"])]["generator_limited"].any() for e in first)
    fc = p[(p["engine"] == "fastclick") & np.isclose(p["load"], r.loc["fastclick", "upper_pps"])]
    says("testbed-click",
         f"the first 0.5 s probe at the ceiling ({first['click']['load']:,.0f} pps), where they lost "
         f"{100 * (1 - first['click']['rx'] / first['click']['tx']):.0f}% and "
         f"{100 * (1 - first['fastclick']['rx'] / first['fastclick']['tx']):.0f}% anyway",
         "(fastclick: " + ", ".join(f"{100 * x:.1f}%" for x in sorted(1 - fc["rx"] / fc["tx"])[:-1])
         + f" and {100 * max(1 - fc['rx'] / fc['tx']):.1f}% at {r.loc['fastclick', 'upper_pps']:,.0f} pps, none limited)")
    assert not fc["generator_limited"].any() and not fc["passed"].any()


def test_click_sweeps():
    t = trials("testbed-click")
    s = per_load("testbed-click")
    dpdk, fc = s.loc["fastclick-dpdk-single-flow"], s.loc["fastclick-single-flow"]
    assert (dpdk["worst"] == 0).all()
    top = t[(t["experiment"] == "fastclick-dpdk-single-flow") & (t["offered_pps"] == t["offered_pps"].max())]
    assert top["limited"].all()
    says("testbed-click", f"loses nothing up to {dpdk.index.max() / 1e3:.0f} kpps")
    ceiling_row = t[(t["experiment"] == "fastclick-single-flow") & (t["offered_pps"] == t["offered_pps"].max())]
    low = fc.loc[[38_180, 57_271]]
    says("testbed-click",
         f"loses {span(fc.loc[:190_902, 'loss'], pct())}% up to 190 kpps",
         f"{fc.loc[229_083, 'rx_pps'] / 1e3:.0f} kpps carried at 229 kpps offered, "
         f"{fc.iloc[-1]['rx_pps'] / 1e3:.0f} kpps at 382 kpps (the median of the {int(fc.iloc[-1]['n'])} trials the "
         f"generator could offer; the other {int(ceiling_row['limited'].sum())} were generator-limited)",
         f"({span(low['loss'], pct(1))}% mean, up to {100 * low['worst'].max():.0f}% in a trial) came with "
         f"{span(low['steal'], pct())}% steal time")
    assert (t["engine_forwarded"] == t["rx"]).all()


# -- testbed-bmv2 ------------------------------------------------------------------------


def test_bmv2_searches_and_sweep():
    r = datasets.read_searches([D / "testbed-bmv2"]).set_index("engine")
    assert not r["generator_bound"].any()
    says("testbed-bmv2", f"| linux | {r.loc['linux', 'answer']} | 1.00 |",
         f"| bmv2 (router.p4) | {r.loc['bmv2', 'answer']} | "
         f"{r.loc['bmv2', 'lower_pps'] / r.loc['linux', 'lower_pps']:.3f} |",
         f"a generator ceiling of {r['generator_ceiling_pps'].iloc[0]:,.0f} pps")
    t = trials("testbed-bmv2")
    s = per_load("testbed-bmv2").loc["bmv2-single-flow"]
    assert len(t) == 100 and (t["engine_forwarded"] == t["rx"]).all()
    lim = t[t["limited"]]
    assert len(lim) == 1 and lim["offered_pps"].iloc[0] == 20_000
    says("testbed-bmv2", "(the one trial the generator could not deliver, at 20,000 pps, left out)")

    def row(lo, hi):
        g = s.loc[lo:hi]
        carried = "= offered" if (g["rx_pps"] >= g.index * 0.99).all() else span(g["rx_pps"], lambda x: f"{x:,.0f}")
        loss = span(g["loss"], lambda x: "0" if x == 0 else f"{100 * x:.1f}" if x < 0.1 else f"{100 * x:.0f}")
        worst = span(g["worst"], lambda x: "0" if x == 0 else f"{100 * x:.1f}" if x < 0.1 else f"{100 * x:.0f}")
        pc = "" if loss == "0" else "%"
        loads = f"{lo:,}" if lo == hi else f"{lo:,}-{hi:,}"
        return f"| {loads} | {loss}{pc} | {worst}{pc} | {carried} | {span(g['cpu'], pct())}% |"

    says("testbed-bmv2", row(1_000, 2_000), row(3_000, 7_500), row(10_000, 15_000), row(20_000, 20_000),
         row(30_000, 40_000))
    says("testbed-bmv2", f"(mean steal {span(s['steal'], pct())}% here)",
         f"loss at 1-2 kpps is 0 in all {int(s.loc[1_000:2_000, 'n'].sum())} trials")
    assert (s.loc[1_000:2_000, "worst"] == 0).all()
    assert not stats.assess(t)[0].verdict.good


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
         f"The generator ceiling was measured once at the start: {e['generator_ceiling_pps'].iloc[0]:,.0f} pps",
         f"--ceiling {e['generator_ceiling_pps'].iloc[0]:.0f}")
    assert e["generator_ceiling_pps"].nunique() == 1


def test_comparison_when(ours):
    t = trials("comparison")
    t["at"] = pd.to_datetime(t["started_at"])
    late = t["at"] >= pd.Timestamp("2026-11-22T12:50Z")
    first = t[~late]
    early = first[first["experiment"] != "fastclick-dpdk-ddos-drop50"]
    assert set(t[late]["experiment"]) == {"fastclick-dpdk-ddos-drop50", "bmv2-ddos-drop50"}
    dpdk = t[t["experiment"] == "fastclick-dpdk-ddos-drop50"]
    bmv2 = t[t["experiment"] == "bmv2-ddos-drop50"]
    says("comparison",
         f"{early['experiment'].nunique()} cells {when_range(early['started_at'])} UTC",
         f"started at {dpdk['at'].min():%H:%M} and was interrupted after {(~late[dpdk.index]).sum()} trials",
         f"resumed {when_range(dpdk[late[dpdk.index]]['started_at'])} UTC, and bmv2 in the drop scenario ran "
         f"{when_range(bmv2['started_at'])} UTC")


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


def test_comparison_in_words(ours):
    def cells(router, lo=0, hi=1, scen=None):
        d = ours[(ours["router"] == router) & ours["offered"].between(lo, hi) & (ours["reason"] == "")]
        return d if scen is None else d[d["scenario"].isin(scen)]

    ebpf = cells("ebpf", 0.1, 0.2)
    one_gre = cells("ebpf", 0.1, 0.2, ["single_flow_50fw", "gre_multiflow_50fw"])
    fmt = lambda x: f"{x:.2f}" if x < 0.1 else f"{x:.1f}" if x < 1 else f"{x:.0f}"  # noqa: E731
    nft = cells("nft", 0.1, 0.2)
    says("comparison",
         f"{span(ebpf['loss_pct'], fmt)}% at 10-20% of the ceiling "
         f"({span(one_gre['loss_pct'], fmt)}% with one flow or GRE)",
         f"cleaner up to 20% of the ceiling: at most {nft['loss_pct'].max():.2f}%",
         f"nft keeps ≤ {nft[nft['scenario'] == 'routes_900k_multiflow_50fw']['loss_pct'].max():.2f}% loss up to 20%",
         f"({span(nft[nft['scenario'] == 'single_flow_50fw']['loss_pct'], lambda x: f'{x:.2f}')}% in the "
         "single-flow table)")
    cap = comparison.capacity(ours).set_index(["scenario", "router"])["capacity"]
    gre = cells("fastclick-dpdk", scen=["gre_multiflow_50fw"]).set_index("offered")
    says("comparison",
         f"PDR@0.5% at {100 * cap['single_flow_50fw', 'fastclick-dpdk']:.0f}% of the ceiling with one flow and "
         f"{100 * cap['routes_900k_multiflow_50fw', 'fastclick-dpdk']:.0f}% with 900k routes. With GRE it is "
         f"{100 * cap['gre_multiflow_50fw', 'fastclick-dpdk']:.0f}%: it loses {gre.loc[0.4, 'loss_pct']:.1f}% at 40% and "
         f"nothing at 50%", f"(its interval at 40%, ±{gre.loc[0.4, 'ci95_pct']:.1f}, reaches from green to red)")
    assert gre.loc[0.5, "loss_pct"] == 0 and (gre.loc[0.4, "colour_low"], gre.loc[0.4, "colour_high"]) == ("green", "red")
    drop = ours[(ours["router"] == "fastclick-dpdk") & (ours["scenario"] == "ddos_drop_50pct")].set_index("offered")
    assert drop.loc[0.8, "reason"].startswith("generator-limited") and drop.loc[1.0, "runs"] == 1
    assert (drop["loss_pct"].dropna() <= 0.5).all()
    says("comparison", "at 100% in one trial of 5, which lost nothing")
    assert drop.loc[1.0, "loss_pct"] == 0
    bmv2 = cells("bmv2")
    assert (bmv2["colour"] == "red").all()
    says("comparison", f"even 10% of the ceiling ({bmv2[bmv2['offered'] == 0.1]['offered_pps'].iloc[0] / 1e3:.0f} kpps)")
    full = ours[(ours["offered"] == 1.0) & (ours["colour"] == "green")]
    assert list(zip(full["router"], full["scenario"], full["runs"])) == [("fastclick-dpdk", "ddos_drop_50pct", 1)]
    says("comparison", "**At full load only one cell is green**, fastclick-dpdk in the drop scenario, and from a "
                       "single run")


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
            says("microbench", f"| {name} | at least {r['mpps']:.3f} (limited by the generator) | none: a lower bound | |")
        else:
            says("microbench", f"| {name} | {r['mpps']:.3f} | {r['ratio_to_fastest']:.2f} | |")
    says("microbench", f"its PDR is at least {tb.loc['fastclick-dpdk', 'mpps'] * 1e3:.0f} kpps")


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
    veth, click = (trials(n)["steal"].max() for n in ("testbed-veth", "testbed-click"))
    assert f"({100 * click:.0f}% in `datasets/testbed-click`)" in doc
    assert f"(in `datasets/testbed-veth`, re-measured on 2026-11-23, no trial had more than {100 * veth:.2f}%)" in doc
