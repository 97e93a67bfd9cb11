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

    from routerlab.analysis import microbench as microbench_tables
    from routerlab.measuring import microbench

    rows = []
    for name in engine_names:
        rows += microbench.forwarding(name, **kw)
    return microbench_tables.summary(pd.DataFrame(rows), testbed_pdr)


def testbed_pdr(results_csv=None):
    """The testbed PDRs (:func:`routerlab.analysis.datasets.search_pdr`) of the searches whose
    ``search_results.csv`` is given, to join the table; None without one."""
    if results_csv is None:
        return None
    from pathlib import Path

    from routerlab.analysis import datasets

    return datasets.search_pdr(datasets.read_searches([Path(results_csv).parent]))


def report(ours, pub) -> str:
    """Our table, then the published one."""
    lines = ["ours (this machine):", ours.to_string(index=False, float_format=lambda x: f"{x:.3f}"),
             "", "published (MoonRoute poster, 10GE, DPDK, one core):",
             pub[["router", "mpps", "ratio_to_fastest", "notes"]].to_string(index=False,
                                                                             float_format=lambda x: f"{x:.2f}")]
    return "\n".join(lines)


def batch_report(df) -> str:
    """Mpps (median) and instructions per packet by batch size (``burst``), the fastest and
    the cheapest size, and the published claim (128)."""
    from routerlab.analysis import microbench as microbench_tables

    t = microbench_tables.batch_table(df).drop(columns="repeats")
    best = t.loc[t["mpps"].idxmax()]
    fewest = t.loc[t["instructions_per_packet"].idxmin()]
    return (t.to_string(index=False, float_format=lambda x: f"{x:.3f}")
            + f"\nfastest batch size: {int(best['burst'])} ({best['mpps']:.2f} Mpps); fewest instructions "
              f"per packet: {int(fewest['burst'])}; published claim: 128")
