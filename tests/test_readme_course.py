"""Every number the README of click-course states, recomputed from its files (see readme_checks)."""

import pandas as pd

from routerlab import datasets, stats
from readme_checks import D, VETH_CODE, pct, per_load, pps, says, sig2, span, veth, when_range


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
