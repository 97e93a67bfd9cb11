"""``bench engines``: the PDR of several engines measured in one run, each searched several
times, as ratios of medians to the first, ranked where their repeats separate."""

from __future__ import annotations

from routerlab import defaults
from routerlab.analysis import stats


def run(engine_names=("linux", "nft", "ebpf"), scenario_for=None, *, out, duration: float = 2.0,
        pdr: float = stats.PDR_FRACTION, repeats: int = defaults.SEARCH_REPEATS, settings=None, announce=None):
    """PDR@X of several engines measured in one run, each searched ``repeats`` times (each
    on a fresh testbed; the engines in turn: every engine's first repeat, then every
    engine's second...), as ratios of medians to the first (linux), ranked only where the
    repeats separate (:mod:`routerlab.analysis.repeats`). Earlier searches of these
    experiments in ``out`` are replaced (the ceiling is measured anew).

    ``scenario_for`` maps an engine to its scenario name (default: nft gets
    ``single-flow-fw50``, the others ``single-flow``). Search results are written to ``out``.
    ``settings``: the testbed's (:class:`routerlab.testbed.settings.Settings`; None: the
    environment's). ``announce`` is told each repeat's answer.

    Returns
    -------
    (float, pandas.DataFrame)
        The generator's ceiling (pps) and one row per engine, in the order given:
        scenario, pdr_pps (the median of the repeats), low_pps and high_pps (the lowest
        and highest repeat), repeats, spread (highest / lowest), upper_pps (the median of
        the next failing loads), trial_seconds (all repeats'), generator_bound (any
        repeat's answer a lower bound), answer (as :meth:`routerlab.analysis.repeats.Repeated.words`
        words it), rank and ties (:func:`routerlab.analysis.repeats.rank`), ratio_to_first
        (:func:`ratios`).
    """
    import numpy as np
    import pandas as pd

    from routerlab.analysis import repeats as rep
    from routerlab.measuring import measurement, search
    from routerlab.testbed.settings import Settings

    settings = settings or Settings()
    scenario_for = scenario_for or {"nft": "single-flow-fw50"}
    # one ceiling for every engine, so the ratios compare like with like
    ceil = measurement.generator_ceiling(settings=settings)
    rows, answers, found = [], {}, {}
    say = announce or (lambda msg: None)

    def told(msg):  # a repeat taken up where this run left its engine is no news
        if ": resuming, " not in msg:
            say(msg)
    # the engines' repeats in turn (each engine's i-th repeat, then the next i), so that a
    # machine drifting during the run moves every engine alike instead of separating them;
    # each request resumes the repeats this run already measured of its engine
    for i in range(1, repeats + 1):
        for name in engine_names:
            sname = scenario_for.get(name, "single-flow")
            found[name] = measurement.measure(
                measurement.Request(name, sname, out, search="pdr", pdr=pdr, ceiling_pps=ceil, duration=duration,
                                    experiment=f"bench-pdr-{name}-{sname}", repeats=i, settings=settings),
                announce=told)
    for name in engine_names:
        sname = scenario_for.get(name, "single-flow")
        res = found[name]
        a = answers[name] = search.repeated(res)[("pdr", "routerlab")]
        uppers = [r.upper for r in res if r.upper is not None]
        rows.append({"engine": name, "scenario": sname, "pdr_pps": a.median, "low_pps": a.low,
                     "high_pps": a.highest_seen, "repeats": a.n, "spread": a.spread,
                     "upper_pps": float(np.median(uppers)) if uppers else float("nan"),
                     "trial_seconds": sum(r.trial_seconds for r in res), "generator_bound": a.lower_bound,
                     "answer": a.words()})
    ranked = rep.rank(answers).set_index("label")[["rank", "ties"]]
    df = pd.DataFrame(rows).join(ranked, on="engine")
    df.attrs["order"] = rep.order(answers)
    return ceil, ratios(df)


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
    """The ceiling, one line per engine, the ranking (engines ordered only where their
    repeats separate), each engine's spread next to its goal
    (:data:`routerlab.analysis.repeats.SPREAD_GOAL`), then the chain's target: the
    ceiling over the best PDR next to :data:`CEILING_OVER_BEST`, and the answers the
    generator bounded."""
    from routerlab.analysis import repeats as rep

    bound = df["generator_bound"].astype(bool)
    best = df["pdr_pps"][~bound].max()  # a lower bound is no router's answer
    ratio = f"{ceil / best:.2f}x" if best > 0 else "none (no engine's own answer)"
    shown = df.drop(columns=["answer", "ties"], errors="ignore")
    lines = [f"generator ceiling: {ceil:.0f} pps",
             shown.to_string(index=False, float_format=lambda x: f"{x:.3f}" if x < 10 else f"{x:.0f}")]
    if "rank" in df:
        order = df.attrs.get("order") or " ".join(df.sort_values("rank")["engine"])
        lines.append(f"ranking (> where every repeat of one is above every repeat of the other, ≈ a tie): {order}")
        ties = [f"{e} with {t}" for e, t in zip(df["engine"], df["ties"]) if t]
        if ties:
            lines.append("ties (their repeats overlap, so no order between them holds): " + "; ".join(ties))
    if "spread" in df:
        over = [f"{e} {s:.3f}" for e, s in zip(df["engine"], df["spread"]) if s == s]
        if over:
            lines.append(f"spread, highest / lowest repeat (goal: at most {rep.SPREAD_GOAL:g}): " + ", ".join(over))
    lines.append(f"ceiling / best PDR: {ratio} (target: at least {CEILING_OVER_BEST:g}x); "
                 f"answers bounded by the generator: {int(bound.sum())} (target: 0)")
    return "\n".join(lines)
