"""``bench consolidation``: FastPath's header-action consolidation
(:func:`routerlab.measuring.microbench.consolidation`), our reductions next to the published ones."""

from __future__ import annotations


def report(df) -> str:
    """Instructions per later packet and the reduction from consolidation, by NF and chain
    length, beside BESS's and OpenNetVM's published reductions; then instructions per
    first packet."""
    from routerlab.analysis import datasets
    from routerlab.analysis import microbench

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
