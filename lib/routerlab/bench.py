"""Benchmarks: commands that print a figure. Targets live here, never in unit tests."""

from __future__ import annotations

import time

from . import pastrami, stats

#: Analysis-time budget for assessing the whole published PASTRAMI set (issue target).
ASSESS_BUDGET_S = 1.0


def _best(fn, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def assess_all(data_dir=None, repeat: int = 5) -> dict:
    """Time parsing and assessing every PASTRAMI experiment, in both verdict modes.

    Analysis is timed two ways in the same run: one batched :func:`stats.assess` over
    the whole trial table, and one call per experiment (what a per-file loop costs).

    Returns
    -------
    dict
        ``experiments``, ``trials``, ``parse_s``, ``analysis_s`` (batched, strict),
        ``analysis_notebook_s``, ``per_experiment_s``, ``good_strict``, ``good_notebook``.
    """
    folder = pastrami.locate(data_dir)
    parse_s, trials = _best(lambda: pastrami.read_dir(folder), 1)
    analysis_s, res = _best(lambda: stats.assess(trials, mode="strict"), repeat)
    nb_s, res_nb = _best(lambda: stats.assess(trials, mode="notebook"), repeat)
    groups = [g for _, g in trials.groupby("experiment", sort=False)]
    per_s, _ = _best(lambda: [stats.assess(g) for g in groups], max(1, repeat // 2))
    return {
        "folder": str(folder), "experiments": len(res), "trials": len(trials),
        "parse_s": parse_s, "analysis_s": analysis_s, "analysis_notebook_s": nb_s,
        "per_experiment_s": per_s,
        "good_strict": sum(a.verdict.good for a in res),
        "good_notebook": sum(a.verdict.good for a in res_nb),
    }


def format_assess(r: dict) -> str:
    """The benchmark's report, one figure a line."""
    return "\n".join([
        f"PASTRAMI data          {r['folder']}",
        f"experiments, trials    {r['experiments']}, {r['trials']}",
        f"parse (read raw files) {r['parse_s']:.3f} s",
        f"analysis, batched      {r['analysis_s']:.3f} s (strict), {r['analysis_notebook_s']:.3f} s (notebook)",
        f"analysis, per file     {r['per_experiment_s']:.3f} s  "
        f"(batched is {r['per_experiment_s'] / r['analysis_s']:.1f}x faster)",
        f"budget                 {ASSESS_BUDGET_S:.1f} s -> analysis uses {r['analysis_s'] / ASSESS_BUDGET_S:.1%} of it",
        f"GOOD verdicts          {r['good_strict']} strict, {r['good_notebook']} notebook "
        f"(of {r['experiments']})",
    ])


def _run_external(tb, gen: str, rate: float, duration: float, workdir) -> tuple[int, float]:
    """Run trafgen or tcpreplay at ``rate`` pps for ``duration`` s; returns (kernel-counted
    packets offered, wall seconds)."""
    import subprocess
    from pathlib import Path

    from .testbed import Testbed

    from .traffic import udp_frame, write_pcap

    # rlgen's single-flow frame, on the direct wire (the sink holds 10.70.1.1)
    frame = udp_frame(Testbed.mac(tb.ns_tg, tb.tg_if), Testbed.mac(tb.ns_sink, tb.sink_if), "10.70.1.2", "10.70.1.1")
    n = int(rate * duration)
    workdir = Path(workdir)
    if gen == "trafgen":
        conf = workdir / "frame.cfg"
        conf.write_text("{ " + ", ".join(f"0x{b:02x}" for b in frame) + " }\n")
        cmd = ["trafgen", "--dev", tb.tg_if, "--conf", str(conf), "--rate", f"{int(rate)}pps",
               "--num", str(n), "--cpus", "1", "--no-sock-mem"]
    else:
        pcap = workdir / "frame.pcap"
        write_pcap(pcap, [frame])
        cmd = ["tcpreplay", "-q", "-i", tb.tg_if, f"--pps={rate:.0f}", f"--loop={n}", "--preload-pcap", str(pcap)]
    k0 = tb.tx_counters()
    t0 = time.perf_counter()
    p = tb.spawn(tb.ns_tg, *cmd, cpu=tb.gen_cpu, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=duration * 5 + 30)
    wall = time.perf_counter() - t0
    tb.procs.remove(p)
    k1 = tb.tx_counters()
    if p.returncode != 0:
        raise RuntimeError(f"{gen} failed: {err.strip()[:300]}")
    return (k1["tx_packets"] - k0["tx_packets"]) + (k1["tx_dropped"] - k0["tx_dropped"]), wall


def generators(duration: float = 2.0, fractions=(0.25, 0.5, 0.75, 1.0), runs: int = 3,
               candidates=("rlgen", "trafgen", "tcpreplay")):
    """How precisely each generator hits a requested rate, open loop, into the sink.

    The ceiling is rlgen's own (as fast as it can, wired straight to the sink); each
    candidate is then asked for a fraction of it. The achieved rate is counted by the
    kernel (packets put on the wire or refused by the sink, per wall-clock second of the
    generator's run), so every candidate is measured the same way, side by side.

    Returns
    -------
    (float, pandas.DataFrame)
        The ceiling (pps) and one row per trial: generator, fraction, requested_pps,
        achieved_pps, rate_error (achieved / requested - 1).
    """
    import shutil
    import tempfile

    import pandas as pd

    from . import traffic
    from .testbed import Testbed

    rows = []
    with Testbed(direct=True) as tb, tempfile.TemporaryDirectory() as work:
        ceil = sorted(traffic.run_trial(tb, 0, duration, traffic.TrafficSpec()).sent_pps for _ in range(3))[1]
        for frac in fractions:
            rate = frac * ceil
            for gen in candidates:
                if gen != "rlgen" and not shutil.which(gen):
                    continue
                for k in range(runs):
                    if gen == "rlgen":
                        r = traffic.run_trial(tb, rate, duration, traffic.TrafficSpec())
                        achieved = r.kernel_tx / duration
                    else:
                        offered, wall = _run_external(tb, gen, rate, duration, work)
                        achieved = offered / wall
                    rows.append({"generator": gen, "fraction": frac, "trial": k, "requested_pps": rate,
                                 "achieved_pps": achieved, "rate_error": achieved / rate - 1})
    return ceil, pd.DataFrame(rows)


def format_generators(ceil: float, df) -> str:
    """Median rate error per generator and fraction of the ceiling, as a table."""
    tab = (df.groupby(["generator", "fraction"])["rate_error"].median().unstack("fraction") * 100)
    tab.columns = [f"{c:.0%} of ceiling" for c in tab.columns]
    lines = [f"generator ceiling (rlgen, straight into the sink): {ceil:.0f} pps",
             "median rate error, % (achieved / requested - 1), counted by the kernel:",
             tab.round(2).to_string()]
    return "\n".join(lines)


def engines_pdr(engine_names=("linux", "nft", "ebpf"), scenario_for=None, *, out, duration: float = 2.0,
                pdr: float = stats.PDR_FRACTION):
    """PDR@X of several engines measured in one run, as ratios to the first (linux).

    ``scenario_for`` maps an engine to its scenario name (default: nft gets
    ``single-flow-fw50``, the others ``single-flow``). Search results are written to ``out``.
    """
    import pandas as pd

    from . import measuring

    scenario_for = scenario_for or {"nft": "single-flow-fw50"}
    # one ceiling for every engine, so the ratios compare like with like
    ceil = measuring.generator_ceiling()
    rows = []
    for name in engine_names:
        sname = scenario_for.get(name, "single-flow")
        (r,) = measuring.measure(name, sname, out, search="pdr", pdr=pdr, ceiling_pps=ceil, duration=duration,
                                 experiment=f"bench-pdr-{name}-{sname}")
        rows.append({"engine": name, "scenario": sname, "pdr_pps": r.lower, "upper_pps": r.upper,
                     "trial_seconds": r.trial_seconds})
    df = pd.DataFrame(rows)
    df["ratio_to_first"] = df["pdr_pps"] / df["pdr_pps"].iloc[0]
    return ceil, df


def forwarding_table(engine_names=("click", "fastclick"), testbed_pdr=None, **kw):
    """The MoonRoute comparison: in-memory single-route forwarding (Mpps, median of the
    repeats) of Click and FastClick, and, if given, testbed PDRs (``testbed_pdr``: a
    DataFrame with ``engine`` and ``pdr_pps``), each as a ratio to the fastest; next to the
    published table. Returns (ours, published, rows of every repeat)."""
    import pandas as pd

    from . import microbench

    rows = []
    for name in engine_names:
        rows += microbench.forwarding(name, **kw)
    return forwarding_summary(pd.DataFrame(rows), testbed_pdr)


def forwarding_summary(raw, testbed_pdr=None):
    """:func:`forwarding_table` from the rows of earlier runs (``forwarding.csv``)."""
    import pandas as pd

    from . import datasets

    ours = (raw.groupby("engine", sort=False)
               .agg(mpps=("mpps", "median"), instructions_per_packet=("instructions_per_packet", "first"))
               .reset_index())
    ours.insert(1, "where", "in memory")
    if testbed_pdr is not None and len(testbed_pdr):
        tb = testbed_pdr.assign(where="testbed (PDR@0.5%)", mpps=testbed_pdr["pdr_pps"] / 1e6)
        ours = pd.concat([ours, tb[["engine", "where", "mpps"]]], ignore_index=True)
    ours["ratio_to_fastest"] = ours["mpps"] / ours.groupby("where")["mpps"].transform("max")
    pub = datasets.reference("moonroute-comparison")
    pub = pub.assign(ratio_to_fastest=pub["mpps"] / pub["mpps"].max())
    return ours, pub, raw


def format_forwarding(ours, pub) -> str:
    lines = ["ours (this machine):", ours.to_string(index=False, float_format=lambda x: f"{x:.3f}"),
             "", "published (MoonRoute poster, 10GE, DPDK, one core):",
             pub[["router", "mpps", "ratio_to_fastest", "notes"]].to_string(index=False,
                                                                             float_format=lambda x: f"{x:.2f}")]
    return "\n".join(lines)


def format_batch(df) -> str:
    t = (df.groupby("burst").agg(mpps=("mpps", "median"), instructions_per_packet=("instructions_per_packet", "first"))
           .reset_index())
    best = t.loc[t["mpps"].idxmax()]
    t["ratio_to_best"] = t["mpps"] / best["mpps"]
    fewest = t.loc[t["instructions_per_packet"].idxmin()]
    return (t.to_string(index=False, float_format=lambda x: f"{x:.3f}")
            + f"\nfastest batch size: {int(best['burst'])} ({best['mpps']:.2f} Mpps); fewest instructions "
              f"per packet: {int(fewest['burst'])}; published claim: 128")


def format_consolidation(df) -> str:
    from . import datasets, microbench

    red = microbench.reductions(df)
    pub = datasets.reference("fastpath-consolidation")
    pub = pub.pivot_table(index=["nf", "header_actions"], columns="platform", values="cycle_reduction_pct")
    red["published_BESS_pct"] = [pub["BESS"].get((r.nf, r.actions)) for r in red.itertuples()]
    red["published_OpenNetVM_pct"] = [pub["OpenNetVM"].get((r.nf, r.actions)) for r in red.itertuples()]
    first = df[df["packet"] == "first"].groupby(["nf", "actions", "variant"])["instructions"].first().unstack()
    lines = ["instructions per later packet, and the reduction from consolidation (ours: Click, callgrind):",
             red.to_string(index=False, float_format=lambda x: f"{x:.3f}" if abs(x) < 10 else f"{x:.0f}"),
             "", "instructions per first packet of a flow:",
             first.to_string(float_format=lambda x: f"{x:.0f}")]
    return "\n".join(lines)
