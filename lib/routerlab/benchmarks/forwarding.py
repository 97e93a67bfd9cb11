"""``bench forwarding`` and ``bench batch``: Click and FastClick forwarding from memory
(:func:`routerlab.measuring.microbench.forwarding`), next to the MoonRoute poster's table and, for
FastClick, against its batch size."""

from __future__ import annotations


def table(engine_names=("click", "fastclick"), testbed_pdr=None, **kw):
    """The MoonRoute comparison: in-memory single-route forwarding (Mpps, median of the
    repeats) of Click and FastClick, and, if given, testbed PDRs (``testbed_pdr``: a
    DataFrame as :func:`routerlab.analysis.datasets.search_pdr` makes), each as a ratio to the
    fastest (none for a PDR that is only a lower bound: ``at_least`` is true, and ``bound``
    says why); next to the published table. Returns (ours, published, rows of every repeat)."""
    import pandas as pd

    from routerlab.measuring import microbench

    rows = []
    for name in engine_names:
        rows += microbench.forwarding(name, **kw)
    return summary(pd.DataFrame(rows), testbed_pdr)


def testbed_pdr(results_csv=None):
    """The testbed PDRs (:func:`routerlab.analysis.datasets.search_pdr`) of the searches whose
    ``search_results.csv`` is given, to join the table; None without one."""
    if results_csv is None:
        return None
    from pathlib import Path

    from routerlab.analysis import datasets

    return datasets.search_pdr(datasets.read_searches([Path(results_csv).parent]))


def summary(raw, testbed_pdr=None):
    """:func:`table` from the rows of earlier runs (``forwarding.csv``)."""
    import pandas as pd

    from routerlab.analysis import datasets

    ours = (raw.groupby("engine", sort=False)
               .agg(mpps=("mpps", "median"), instructions_per_packet=("instructions_per_packet", "first"))
               .reset_index())
    ours.insert(1, "where", "in memory")
    ours["at_least"] = False
    ours["bound"] = ""
    if testbed_pdr is not None and len(testbed_pdr):
        bounded = testbed_pdr.get("at_least", testbed_pdr.get("generator_bound", False))
        tb = testbed_pdr.assign(where="testbed (PDR@0.5%)", mpps=testbed_pdr["pdr_pps"] / 1e6, at_least=bounded,
                                bound=testbed_pdr.get("bound", "limited by the generator"))
        tb["bound"] = tb["bound"].where(tb["at_least"].astype(bool), "")
        ours = pd.concat([ours, tb[["engine", "where", "mpps", "at_least", "bound"]]], ignore_index=True)
    # a PDR that is only a lower bound (the generator bounded it, or it passed at the
    # ceiling) gets no ratio, and the others are ratios to the fastest whose PDR was the router's own
    ours["at_least"] = ours["at_least"].astype(bool)
    known = ours["mpps"].where(~ours["at_least"])
    ours["ratio_to_fastest"] = known / known.groupby(ours["where"]).transform("max")
    pub = datasets.reference("moonroute-comparison")
    pub = pub.assign(ratio_to_fastest=pub["mpps"] / pub["mpps"].max())
    return ours, pub, raw


def report(ours, pub) -> str:
    """Our table, then the published one."""
    lines = ["ours (this machine):", ours.to_string(index=False, float_format=lambda x: f"{x:.3f}"),
             "", "published (MoonRoute poster, 10GE, DPDK, one core):",
             pub[["router", "mpps", "ratio_to_fastest", "notes"]].to_string(index=False,
                                                                             float_format=lambda x: f"{x:.2f}")]
    return "\n".join(lines)


def batch_table(df):
    """Per batch size (``burst``): Mpps (median of the repeats), instructions per packet,
    the repeats, and the ratio to the fastest size (in [0, 1])."""
    t = (df.groupby("burst").agg(mpps=("mpps", "median"), instructions_per_packet=("instructions_per_packet", "first"),
                                 repeats=("mpps", "size"))
           .reset_index())
    t["ratio_to_best"] = t["mpps"] / t["mpps"].max()
    return t


def batch_report(df) -> str:
    """Mpps (median) and instructions per packet by batch size (``burst``), the fastest and
    the cheapest size, and the published claim (128)."""
    t = batch_table(df).drop(columns="repeats")
    best = t.loc[t["mpps"].idxmax()]
    fewest = t.loc[t["instructions_per_packet"].idxmin()]
    return (t.to_string(index=False, float_format=lambda x: f"{x:.3f}")
            + f"\nfastest batch size: {int(best['burst'])} ({best['mpps']:.2f} Mpps); fewest instructions "
              f"per packet: {int(fewest['burst'])}; published claim: 128")
