"""``bench calibrate``: the measuring chain against a router whose answer is known.

The router is :class:`routerlab.engines.calibration.Calibration` (the kernel behind an
nftables limit of N pps with a bucket of B packets), whose PDR@X and NDR for trials of T
seconds follow from N, B and T (``true_pdr``, ``true_ndr``). For each capacity N (a
fraction of the generator's ceiling) this runs

- a sweep: K trials at each of :data:`SWEEP_FACTORS` x N (those up to 95% of the
  ceiling), whose PDR and NDR are read as :func:`routerlab.analysis.stats.pdr_load` and
  :func:`routerlab.analysis.stats.ndr_load` read any sweep; its precision is the width of the
  bracket of loads that holds the truth, (upper - lower) / upper;
- the PDR and NDR searches (:func:`routerlab.measuring.search.run_search`: ours, and MLRsearch),
  whose stated precision is their relative width (2% by default);

and sets each answer against the truth: ``error`` = answer / truth - 1, *within* when
``|error|`` is at most the method's precision and the generator did not bound the
answer. What is written to
``out``: the sweep's ``trials.csv`` and ``experiments.csv``
(the capacity and burst in the record's notes), the searches' ``search_trials.csv`` and
``search_results.csv``, and two files of this benchmark:

- ``calibration.csv``, one row per capacity, kind and method: ``experiment``,
  ``capacity_fraction``, ``capacity_pps``, ``burst_packets``, ``duration_s`` (T),
  ``kind`` (pdr/ndr), ``method`` (sweep/routerlab/mlrsearch), ``true_pps``,
  ``found_pps``, ``upper_pps`` (the next failing load), ``error`` (ratio),
  ``precision`` (ratio), ``generator_bound``, ``within``, ``trial_seconds``,
  ``lossy_trials`` and ``disturbed_lossy`` (the method's own trials that lost packets
  where the limiter drops nothing, and those of them disturbed in every attempt:
  :func:`chain_loss`), ``router_busy`` (the router CPU's mean busy share, ratio, over the
  sweep's trials at its highest load below N: above :data:`BUSY_LIMIT` the capacity is
  beyond what the calibration router models), ``generator_ceiling_pps``, ``when`` (UTC);
- ``calibration_loss.csv``, one row per sweep load: ``experiment``, ``capacity_pps``,
  ``factor`` (load / N), ``offered_pps``, ``runs``, ``expected_loss`` (the limiter's,
  ratio), ``plr`` (mean measured), ``plr_min``, ``plr_max`` (over the trials);
- ``calibration_chain_loss.csv``, one row per capacity: the loss at loads up to the
  true NDR of each trial's duration, where the limiter passes every packet of smooth
  arrivals, so whatever is lost there is the measuring chain's (:func:`chain_loss`):
  ``experiment``, ``capacity_pps``, ``trials`` (sweep and search trials at such loads),
  ``lossy_trials``, ``disturbed_lossy`` (those of them disturbed in every attempt:
  :mod:`routerlab.measuring.validation`), ``lost`` (packets), ``by_counter``
  (``place:REASON=packets;...``, the counters that dropped them, as in a trial's ``drops``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from routerlab.defaults import CALIBRATION_FRACTIONS, PDR_FRACTION
from routerlab.errors import ParameterError
from routerlab.progress import Progress, silent

#: Loads of the sweep, as multiples of the capacity N: dense around N (the truths of a
#: 2 s trial lie 0.5-1.0% above it), half and twice N to see the whole curve.
SWEEP_FACTORS = (0.5, 0.9, 0.97, 1.03, 1.1, 1.5, 2.0)
#: The sweep keeps the loads up to this share of the generator's ceiling.
SWEEP_MAX = 0.95
#: Capacities accepted, as fractions of the ceiling: well above where the searches start
#: (:data:`routerlab.defaults.SEARCH_LOW_FRACTION`), and the truth (a little above N) below
#: what the generator can send.
FRACTION_RANGE = (0.005, 0.9)
#: Search methods: ours and MLRsearch (:mod:`routerlab.measuring.search`).
METHODS = ("routerlab", "mlrsearch")
#: The searches' relative width (their stated precision).
PRECISION = 0.02
#: The scenario the calibration runs: one flow of 64-byte frames.
SCENARIO = "single-flow"
#: The truth holds for a router whose only limit is the limiter: the kernel under it must
#: idle much of the time. Above this busy share of the router's CPU (``cpu_load``, at the
#: sweep's highest load below N) the report says the capacity is beyond the model: the
#: kernel's own queueing, behind a 256-slot input ring with the XDP generator, then loses
#: packets below N too (docs/journal/2026-11-28-generator-catch-up.md).
BUSY_LIMIT = 0.6


@dataclass
class CalibrationRun:
    """What :func:`run` measured.

    Attributes
    ----------
    ceiling_pps : float
        The generator's ceiling the capacities are fractions of.
    answers : pandas.DataFrame
        One row per capacity, kind and method (the columns of ``calibration.csv``).
    losses : pandas.DataFrame
        One row per sweep load (the columns of ``calibration_loss.csv``).
    chain : pandas.DataFrame
        One row per capacity: the chain's own loss (the columns of
        ``calibration_chain_loss.csv``, :func:`chain_loss`).
    """

    ceiling_pps: float
    answers: object
    losses: object
    chain: object

    @property
    def outside(self):
        """The answers outside their method's precision of the truth."""
        return self.answers[~self.answers["within"].astype(bool)]


def host_disturbed(answers):
    """Per answer (rows of ``calibration.csv``), whether it missed on a disturbed host:
    outside its precision, below the truth (or none found), not bound by the generator,
    and every one of its method's trials that lost packets where the limiter drops
    nothing was disturbed in every attempt (``lossy_trials`` > 0 and equal to
    ``disturbed_lossy``). The loads that kept failing were then never measured on a quiet
    machine: steal above the threshold, or stops and lags that can account for the loss
    (:mod:`routerlab.measuring.validation`), came with every attempt. That is consistent with the
    host causing the miss, not proof of it: a steal-flagged trial may also hide loss of
    the chain's own. A loss in a trial no disturbance came with, or an answer above the
    truth, is the chain's. Trials between the true NDR and the true PDR (0.5% apart at
    2 s) are not looked at, since the limiter itself drops a little there. False where the
    counts are missing (a table from before they were written)."""
    import pandas as pd

    a = answers
    if not {"lossy_trials", "disturbed_lossy"} <= set(a.columns):
        return pd.Series(False, index=a.index)
    lossy, disturbed = a["lossy_trials"].fillna(0), a["disturbed_lossy"].fillna(0)
    low = a["found_pps"].isna() | (a["found_pps"] < a["true_pps"])
    return (~a["within"].astype(bool) & ~a["generator_bound"].astype(bool) & low
            & (lossy > 0) & (disturbed == lossy))


def check_fractions(fractions) -> list[float]:
    """The capacities, as fractions of the ceiling, checked and without repeats (in the
    order given)."""
    lo, hi = FRACTION_RANGE
    out = []
    for f in fractions:
        if not (isinstance(f, (int, float)) and not isinstance(f, bool) and lo <= f <= hi):
            raise ParameterError("--capacity", f"a capacity is a fraction of the generator's ceiling in "
                                 f"[{lo}, {hi}], got {f!r}")
        if f not in out:
            out.append(float(f))
    if not out:
        raise ParameterError("--capacity", "give at least one capacity")
    return out


def sweep_loads(capacity_pps: int, ceiling_pps: float) -> list[int]:
    """The sweep's loads, pps: :data:`SWEEP_FACTORS` x N, those up to
    :data:`SWEEP_MAX` of the ceiling."""
    return [round(x * capacity_pps) for x in SWEEP_FACTORS if x * capacity_pps <= SWEEP_MAX * ceiling_pps]


def sweep_answer(loads, plr, lossless, truth: float, kind: str, pdr: float = PDR_FRACTION) -> dict:
    """A sweep's PDR or NDR against the truth.

    Parameters
    ----------
    loads, plr, lossless : array-like
        Per load (pps): the mean loss ratio and whether every trial lost nothing.
    truth : float
        The true value, pps.
    kind : {"pdr", "ndr"}
    pdr : float
        X of PDR@X, a ratio.

    Returns
    -------
    dict
        ``found_pps`` (None below the range), ``upper_pps`` (the next load; None when
        none failed), ``precision`` (the width of the bracket of loads around the truth,
        (upper - lower) / upper; NaN when the truth is outside the loads), ``error`` and
        ``within`` (:func:`judge`).
    """
    import numpy as np

    from routerlab.analysis import stats

    bound = stats.pdr_load(loads, plr, pdr) if kind == "pdr" else stats.ndr_load(loads, lossless)
    grid = np.sort(np.asarray(loads, dtype=float))
    below, above = grid[grid <= truth], grid[grid > truth]
    precision = (above[0] - below[-1]) / above[0] if len(below) and len(above) else float("nan")
    found = bound.load if bound.status == "found" else None
    upper = None
    if found is not None:
        upper = float(grid[np.searchsorted(grid, found, side="right")])
    return {"found_pps": found, "upper_pps": upper, "precision": precision,
            **judge(found, truth, precision, generator_bound=False)}


def judge(found: float | None, truth: float, precision: float, *, generator_bound: bool) -> dict:
    """``error`` = found / truth - 1 (NaN without an answer) and ``within``: an answer
    the generator did not bound, within ``precision`` (a ratio) of the truth."""
    if found is None or (isinstance(found, float) and math.isnan(found)):
        return {"error": float("nan"), "within": False}
    error = found / truth - 1
    return {"error": error, "within": bool(not generator_bound and abs(error) <= precision)}


def run(fractions=CALIBRATION_FRACTIONS, *, out, duration: float = 2.0, runs: int = 3, methods=METHODS,
        pdr: float = PDR_FRACTION, precision: float = PRECISION, ceiling_pps: float | None = None,
        announce: Callable[[str], None] | None = None, progress: Progress = silent, settings=None) -> CalibrationRun:
    """Calibrate the measuring chain: at each capacity, a sweep and the searches against
    the calibration router, set against the truth (see the module docstring).

    Parameters
    ----------
    fractions : sequence of float
        Capacities N as fractions of the generator's ceiling (each in [0.02, 0.9]).
    out : path-like
        Folder for the trials, searches and the two tables.
    duration : float
        T: seconds per sweep trial and per final search trial; the truth depends on it
        (the burst adds B/T pps).
    runs : int
        Sweep trials per load (K).
    methods : sequence of {"routerlab", "mlrsearch"}
        Search methods.
    pdr : float
        X of PDR@X, a ratio.
    precision : float
        The searches' relative width, a ratio.
    ceiling_pps : float, optional
        The generator's ceiling if already known (several runs then share capacities);
        else measured first.
    announce : callable, optional
        Called with one line per step.
    progress : routerlab.progress.Progress, optional
        Told each sweep's trials (:func:`routerlab.measuring.sweep.run`).
    settings : routerlab.testbed.settings.Settings, optional
        The testbed's (generator, idle mode, factory); None: the environment's.

    Returns
    -------
    CalibrationRun
    """
    import pandas as pd

    from routerlab.analysis import datasets, scenarios, stats
    from routerlab.measuring import measurement, search, sweep
    from routerlab.engines.calibration import Calibration
    from routerlab.testbed.capabilities import require_root

    announce = announce or (lambda msg: None)
    fractions = check_fractions(fractions)
    if not duration > 0:
        raise ParameterError("--duration", f"must be > 0 seconds, got {duration!r}")
    if runs < 1:
        raise ParameterError("--runs", f"must be >= 1, got {runs!r}")
    unknown = [m for m in methods if m not in METHODS]
    if unknown or not methods:
        raise ParameterError("--method", f"methods are {', '.join(METHODS)}, got {', '.join(unknown) or 'none'}")
    if not 0 < precision < 0.5:
        raise ParameterError("precision", f"must be a ratio in (0, 0.5), got {precision!r}")
    stats.VerdictParams(pdr=pdr)
    if ceiling_pps is not None and not ceiling_pps > 0:
        raise ParameterError("--ceiling", f"must be > 0 pps, got {ceiling_pps!r}")
    sc = scenarios.load(SCENARIO)
    Calibration().check()  # nft is there
    require_root(settings)
    out = Path(out)
    if ceiling_pps is None:
        ceiling_pps = measurement.generator_ceiling(sc, announce, settings)
    answers, losses, chain = [], [], []
    for frac in fractions:
        eng = Calibration(capacity_pps=round(frac * ceiling_pps))
        n = eng.capacity_pps
        experiment = f"calibration-{n}pps-b{eng.burst}"
        truth = {"pdr": eng.true_pdr(duration, pdr), "ndr": eng.true_ndr(duration)}
        base = {"experiment": experiment, "capacity_fraction": frac, "capacity_pps": n, "burst_packets": eng.burst,
                "duration_s": duration}
        announce(f"capacity {frac:g} of the ceiling: {n:,} pps, burst {eng.burst} packets; true PDR@{pdr:.1%} "
                 f"{truth['pdr']:,.0f} pps, NDR {truth['ndr']:,.0f} pps for {duration:g} s trials")
        plan = sweep.SweepPlan(eng.name, sc, sweep_loads(n, ceiling_pps), runs=runs, duration=duration,
                               experiment=experiment)
        announce(f"  sweep: {len(plan.loads)} loads x {runs} runs x {duration:g} s (about {plan.seconds / 60:.1f} min)")
        sweep.run(plan, out, engine=eng, ceiling_pps=ceiling_pps, progress=progress, settings=settings)
        trials = datasets.read(out).trials
        trials = trials[trials["experiment"] == experiment]
        summary = stats.summarize(trials)
        swept = answer_counts(eng, trials, None, "sweep")
        base["router_busy"] = router_busy(trials, n)
        for kind in ("pdr", "ndr"):
            answers.append({**base, "kind": kind, "method": "sweep", "true_pps": truth[kind],
                            **sweep_answer(summary["offered_pps"], summary["plr"], summary["lossless"], truth[kind],
                                           kind, pdr),
                            "generator_bound": False, "trial_seconds": float(trials["duration_s"].sum()), **swept})
        losses.append(loss_curve(eng, trials, duration).assign(experiment=experiment, capacity_pps=n))
        announce(f"  searches: PDR and NDR, {' and '.join(methods)}")
        results = search.run_search(eng, sc, out, kind="both", pdr=pdr, ceiling_pps=ceiling_pps,
                                    final_duration=duration, precision=precision, methods=tuple(methods),
                                    experiment=experiment, settings=settings)
        probes = pd.read_csv(out / "search_trials.csv")
        probes = probes[probes["experiment"] == experiment]
        for r in results:
            answers.append({**base, "kind": r.kind, "method": r.method, "true_pps": truth[r.kind],
                            "found_pps": r.lower, "upper_pps": r.upper, "precision": precision,
                            **judge(r.lower, truth[r.kind], precision, generator_bound=r.generator_bound),
                            "generator_bound": r.generator_bound, "trial_seconds": r.trial_seconds,
                            **answer_counts(eng, trials, probes, r.method, r.kind)})
        chain.append({"experiment": experiment, "capacity_pps": n,
                      **chain_loss(eng, pd.concat([trials[CHAIN_COLUMNS], _as_trials(probes)]))})
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    table = pd.DataFrame(answers).assign(generator_ceiling_pps=round(ceiling_pps), when=when)
    curve = pd.concat(losses, ignore_index=True)[["experiment", "capacity_pps", "factor", "offered_pps", "runs",
                                                  "expected_loss", "plr", "plr_min", "plr_max"]]
    _write(out / "calibration.csv", table)
    _write(out / "calibration_loss.csv", curve)
    chain = pd.DataFrame(chain)
    _write(out / "calibration_chain_loss.csv", chain)
    return CalibrationRun(ceiling_pps, table, curve, chain)


#: What :func:`chain_loss` reads of a sweep's or a search's trials.
CHAIN_COLUMNS = ["offered_pps", "duration_s", "lost", "drops", "disturbed"]


def router_busy(trials, capacity_pps: float) -> float:
    """The router CPU's mean busy share (``cpu_load``, ratio in [0, 1]) over a sweep's
    trials at its highest load below ``capacity_pps``; NaN without such trials."""
    below = trials[trials["offered_pps"] < capacity_pps]
    if below.empty:
        return float("nan")
    top = below[below["offered_pps"] == below["offered_pps"].max()]
    return round(float(top["cpu_load"].mean()), 4)


def _as_trials(probes):
    """Search trials (``search_trials.csv``) with a sweep trial's names for :func:`chain_loss`."""
    return probes.rename(columns={"load": "offered_pps", "duration": "duration_s"})[CHAIN_COLUMNS]


def answer_counts(eng, trials, probes, method: str, kind: str | None = None) -> dict:
    """``lossy_trials`` and ``disturbed_lossy`` of :func:`chain_loss` for one answer, over
    its own method's trials: the sweep's ``trials`` for ``method`` "sweep" (its PDR and
    NDR share them), else the search trials (``probes``, rows of ``search_trials.csv`` of
    one experiment) of that ``method`` and ``kind``."""
    if method == "sweep":
        own = trials[CHAIN_COLUMNS]
    else:
        own = _as_trials(probes[(probes["method"] == method) & (probes["kind"] == kind)])
    chain = chain_loss(eng, own)
    return {"lossy_trials": chain["lossy_trials"], "disturbed_lossy": chain["disturbed_lossy"]}


def chain_loss(eng, trials) -> dict:
    """The loss of ``trials`` (sweep or search trials on the calibration router ``eng``;
    columns ``offered_pps``, ``duration_s``, ``lost``, ``drops``) at loads up to the true
    NDR of their duration. There the limiter passes every packet of smooth arrivals, so a
    packet lost is the measuring chain's: the router's input queue overflowing while its
    CPU was held up (``tg:g0.xdp_xmit_errors`` with the XDP generator, ``dut:CPU_BACKLOG``
    with rlgen), or arrivals bunched beyond the limiter's bucket
    (``dut:NETFILTER_DROP``). Returns ``trials`` (how many were at such loads),
    ``lossy_trials``, ``disturbed_lossy`` (those of them kept ``disturbed``: every attempt
    was, :mod:`routerlab.measuring.validation`; 0 without that column), ``lost`` (packets) and
    ``by_counter`` (``place:REASON=packets;...``, largest first; ``unexplained`` for loss
    no counter took)."""
    from routerlab.measuring.drops import parse_summary

    # .loc with a list of booleans: an empty list given to [] would select no columns
    below = trials.loc[[o <= eng.true_ndr(d) for o, d in zip(trials["offered_pps"], trials["duration_s"])]]
    counts: dict[str, int] = {}
    for summary, lost in zip(below["drops"], below["lost"]):
        named = parse_summary(summary)
        for name, n in named.items():
            counts[name] = counts.get(name, 0) + n
        if lost > sum(named.values()):
            counts["unexplained"] = counts.get("unexplained", 0) + int(lost - sum(named.values()))
    lossy = below["lost"] > 0
    disturbed = below["disturbed"].fillna(False).astype(bool) if "disturbed" in below else False
    return {"trials": len(below), "lossy_trials": int(lossy.sum()), "disturbed_lossy": int((lossy & disturbed).sum()),
            "lost": int(below["lost"].clip(lower=0).sum()),
            "by_counter": ";".join(f"{k}={v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))}


def loss_curve(eng, trials, duration: float):
    """Per sweep load: the limiter's expected loss next to the measured mean, lowest and
    highest (ratios); ``trials`` are one sweep's (columns offered_pps, tx, rx)."""
    from routerlab.analysis import stats

    loss = trials.assign(_loss=stats.trial_loss(trials["tx"].to_numpy(), trials["rx"].to_numpy()))
    g = loss.groupby("offered_pps")["_loss"]
    curve = g.agg(runs="size", plr="mean", plr_min="min", plr_max="max").reset_index()
    curve["factor"] = curve["offered_pps"] / eng.capacity_pps
    curve["expected_loss"] = [eng.expected_loss(o, duration) for o in curve["offered_pps"]]
    return curve


def _write(path: Path, df):
    """Write ``df`` to ``path``, replacing the rows of its experiments that were there."""
    import pandas as pd

    if path.is_file():
        old = pd.read_csv(path)
        df = pd.concat([old[~old["experiment"].isin(df["experiment"])], df], ignore_index=True)
    tmp = path.with_suffix(".tmp")
    df.to_csv(tmp, index=False)
    tmp.replace(path)


def report(res: CalibrationRun) -> str:
    """The answers per capacity (truth, found, error, precision, trial-seconds), the loss
    along each sweep, the chain's own loss, and which answers lie outside their precision."""
    from routerlab.measuring.drops import parse_summary

    a = res.answers
    host = host_disturbed(a)
    lines = [f"generator ceiling: {res.ceiling_pps:,.0f} pps"]
    for (exp, frac, n, burst, dur), rows in a.groupby(["experiment", "capacity_fraction", "capacity_pps",
                                                       "burst_packets", "duration_s"], sort=False):
        lines += ["", f"capacity {frac:g} of the ceiling = {n:,} pps, burst {burst} packets, {dur:g} s trials"]
        busy = rows["router_busy"].iloc[0] if "router_busy" in rows else float("nan")
        if not _missing(busy):
            lines.append(f"  router CPU busy {busy:.0%} just below N"
                         + (f": above {BUSY_LIMIT:.0%}, beyond the calibration router's model (the kernel under "
                            "the limiter is a second bottleneck; its own queue loses packets below N)"
                            if busy > BUSY_LIMIT else ""))
        lines.append(f"  {'kind':4} {'method':9} {'true pps':>9} {'found pps':>10} {'next fail':>10} {'error':>7} "
                     f"{'precision':>9}  {'within':9} {'trial-s':>7}")
        for r in rows.itertuples():
            found = "-" if _missing(r.found_pps) else f"{r.found_pps:,.0f}"
            upper = "-" if _missing(r.upper_pps) else f"{r.upper_pps:,.0f}"
            err = "-" if _missing(r.error) else f"{r.error:+.2%}"
            prec = "-" if _missing(r.precision) else f"{r.precision:.1%}"
            within = ("yes" if r.within else "no (gen.)" if r.generator_bound
                      else "no (host)" if host[r.Index] else "no")
            lines.append(f"  {r.kind.upper():4} {r.method:9} {r.true_pps:9,.0f} {found:>10} {upper:>10} {err:>7} "
                         f"{prec:>9}  {within:9} {r.trial_seconds:7.1f}")
        curve = res.losses[res.losses["experiment"] == exp]
        lines.append("  sweep loss, % (load/N: expected, measured mean [lowest-highest trial]):")
        lines += [f"    {c.factor:4.2f}: {c.expected_loss:6.2%}, {c.plr:6.2%} [{c.plr_min:.2%}-{c.plr_max:.2%}]"
                  for c in curve.itertuples()]
        for c in res.chain[res.chain["experiment"] == exp].itertuples():
            where = (f"{c.lossy_trials} of {c.trials} trials, {c.lost:,} packets: "
                     + ", ".join(f"{k.replace(':', ' ')} {v:,}" for k, v in parse_summary(c.by_counter).items())
                     + (f"; {c.disturbed_lossy} of those trials disturbed in every attempt"
                        if getattr(c, "disturbed_lossy", 0) else "")
                     if c.lossy_trials else f"none in {c.trials} trials")
            lines.append(f"  lost where the limiter drops nothing (loads up to the true NDR): {where}")
    bad = res.outside
    lines.append("")
    if len(bad):
        if res.chain["lossy_trials"].sum():
            lines.append("Loss where the limiter drops nothing is the measuring chain's, not the limiter's: "
                         "tg g0.xdp_xmit_errors (the XDP generator's chain) or dut CPU_BACKLOG (rlgen's) is the "
                         "router's input queue overflowing while its CPU was held up; "
                         "dut NETFILTER_DROP there is the limiter meeting arrivals bunched beyond its bucket "
                         "(routerlab.engines.calibration). A trial disturbed in every attempt had steal above "
                         "the threshold, or lost packets that stops of its router CPU (the longest longer than "
                         "the router's queue lasts) or lags of the generator can account for, each time it was "
                         "measured (routerlab.measuring.validation).")
        lines.append(f"{len(bad)} of {len(a)} answers lie outside their precision of the truth: "
                     + "; ".join(f"{r.capacity_fraction:g} {r.kind.upper()} {r.method}" for r in bad.itertuples()))
        if host.any():
            lines.append(f"{host.sum()} of them (\"no (host)\") missed on a disturbed host: below the truth, and "
                         "every trial of their method that lost packets where the limiter drops nothing was "
                         "disturbed in every attempt, so those loads were never measured on a quiet machine. "
                         "Measure again when the host is quieter (steal under the threshold, no long CPU stops "
                         "or generator lags).")
    else:
        lines.append(f"all {len(a)} answers lie within their precision of the truth")
    return "\n".join(lines)


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))
