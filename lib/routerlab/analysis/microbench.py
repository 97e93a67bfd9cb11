"""The in-memory microbenchmarks' tables (``datasets/microbench/``): Click and FastClick
forwarding next to the MoonRoute poster's table (:func:`summary`), FastClick by batch size
(:func:`batch_table`), and what FastPath's header-action consolidation saves
(:func:`reductions`). :mod:`routerlab.measuring.microbench` measures them."""

from __future__ import annotations

import pandas as pd

from routerlab.analysis import datasets


def summary(raw, testbed_pdr=None):
    """The MoonRoute comparison from forwarding rows (``forwarding.csv``: in-memory
    single-route forwarding of Click and FastClick, :func:`routerlab.measuring.microbench.forwarding`):
    per engine the median Mpps over the repeats and, if given, testbed PDRs (``testbed_pdr``:
    a DataFrame as :func:`routerlab.analysis.datasets.search_pdr` makes), each as a ratio to
    the fastest (none for a PDR that is only a lower bound: ``at_least`` is true, and
    ``bound`` says why); next to the published table. Returns (ours, published, raw)."""
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


def batch_table(df):
    """Per batch size (``burst``): Mpps (median of the repeats), instructions per packet,
    the repeats, and the ratio to the fastest size (in [0, 1])."""
    t = (df.groupby("burst").agg(mpps=("mpps", "median"), instructions_per_packet=("instructions_per_packet", "first"),
                                 repeats=("mpps", "size"))
           .reset_index())
    t["ratio_to_best"] = t["mpps"] / t["mpps"].max()
    return t


def reductions(df):
    """Reduction in cost per later packet from consolidation, by NF and chain length:
    ``1 - consolidated / chain`` (a ratio; negative = consolidation costs more)."""
    later = df[df["packet"] == "later"].pivot_table(index=["nf", "actions"], columns="variant",
                                                   values=["instructions", "ns"], aggfunc="median")
    out = later["instructions"][["chain", "consolidated"]].rename(columns=lambda c: f"{c}_instructions")
    out["reduction_instructions"] = 1 - later["instructions"]["consolidated"] / later["instructions"]["chain"]
    out["reduction_ns"] = 1 - later["ns"]["consolidated"] / later["ns"]["chain"]
    return out.reset_index()
