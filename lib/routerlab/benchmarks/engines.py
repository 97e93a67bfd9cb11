"""``bench engines``: the PDR of several engines measured in one run, as ratios to the first."""

from __future__ import annotations

from routerlab.analysis import stats


def run(engine_names=("linux", "nft", "ebpf"), scenario_for=None, *, out, duration: float = 2.0,
        pdr: float = stats.PDR_FRACTION, settings=None):
    """PDR@X of several engines measured in one run, as ratios to the first (linux).

    ``scenario_for`` maps an engine to its scenario name (default: nft gets
    ``single-flow-fw50``, the others ``single-flow``). Search results are written to ``out``.
    ``settings``: the testbed's (:class:`routerlab.testbed.settings.Settings`; None: the
    environment's).

    Returns
    -------
    (float, pandas.DataFrame)
        The generator's ceiling (pps) and one row per engine: scenario, pdr_pps,
        upper_pps (the next failing load), trial_seconds, generator_bound, answer (as
        :func:`routerlab.analysis.stats.search_answer` words it), ratio_to_first (:func:`ratios`).
    """
    import pandas as pd

    from routerlab.measuring import measurement
    from routerlab.testbed.settings import Settings

    settings = settings or Settings()
    scenario_for = scenario_for or {"nft": "single-flow-fw50"}
    # one ceiling for every engine, so the ratios compare like with like
    ceil = measurement.generator_ceiling(settings=settings)
    rows = []
    for name in engine_names:
        sname = scenario_for.get(name, "single-flow")
        (r,) = measurement.measure(measurement.Request(name, sname, out, search="pdr", pdr=pdr, ceiling_pps=ceil,
                                                       duration=duration, experiment=f"bench-pdr-{name}-{sname}",
                                                       settings=settings))
        rows.append({"engine": name, "scenario": sname, "pdr_pps": r.lower, "upper_pps": r.upper,
                     "trial_seconds": r.trial_seconds, "generator_bound": r.generator_bound,
                     "answer": stats.search_answer(r.lower, r.upper, r.generator_bound)})
    return ceil, ratios(pd.DataFrame(rows))


def ratios(df):
    """``ratio_to_first`` of each engine's ``pdr_pps``: none (NaN) for a PDR the generator
    bounded (``generator_bound``: a lower bound is never set against another engine), nor
    for any when the first's was."""
    known = df["pdr_pps"].where(~df["generator_bound"].astype(bool))
    return df.assign(ratio_to_first=known / known.iloc[0])


#: The chain's target: the generator's ceiling at least this many times the best PDR of
#: one run, so that no engine's answer is the generator's.
CEILING_OVER_BEST = 2.0


def report(ceil: float, df) -> str:
    """The ceiling, one line per engine, then the chain's target: the ceiling over the
    best PDR next to :data:`CEILING_OVER_BEST`, and the answers the generator bounded."""
    bound = df["generator_bound"].astype(bool)
    best = df["pdr_pps"][~bound].max()  # a lower bound is no router's answer
    ratio = f"{ceil / best:.2f}x" if best > 0 else "none (no engine's own answer)"
    return (f"generator ceiling: {ceil:.0f} pps\n"
            + df.to_string(index=False, float_format=lambda x: f"{x:.3f}" if x < 10 else f"{x:.0f}")
            + f"\nceiling / best PDR: {ratio} (target: at least {CEILING_OVER_BEST:g}x); "
              f"answers bounded by the generator: {int(bound.sum())} (target: 0)")
