"""Rate search for PDR@X% and NDR on the testbed, and the MLRsearch comparison.

Our search bisects in log space between a low load and the generator's ceiling: first
with short trials down to the precision (cheap), then at full duration it confirms both
ends of that bracket, widening where a short-trial answer does not hold and bisecting
again. A load
*passes* when its trial's loss ratio is at most X (PDR) or it lost no packet (NDR). A
generator-limited trial never passes or fails for the router: its load becomes the upper
end of what can be measured, and the result says so.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from routerlab import defaults
from routerlab.engines.base import Engine

from routerlab.measuring import drops, record
from routerlab.analysis import datasets, stats
from routerlab.analysis.repeats import repeat_of
from routerlab.testbed import traffic
from routerlab.testbed import namespaces
from routerlab.errors import ParameterError, ToolMissing
from routerlab.analysis.scenarios import Scenario
from routerlab.testbed.interface import Testbed
from routerlab.testbed.settings import Settings
from routerlab.measuring.validation import SUPERSEDED_SEARCH_TRIALS, TrialValidation


@dataclass
class Probe:
    """One search trial: load (pps), duration (s), counts, and whether it passed."""

    method: str
    phase: str
    load: float
    duration: float
    tx: int
    rx: int
    passed: bool
    generator_limited: bool

    @classmethod
    def from_row(cls, q) -> "Probe":
        """The trial as a row of ``search_trials.csv`` holds it (a namedtuple of
        ``DataFrame.itertuples``), its flags read however pandas typed them."""
        return cls(q.method, q.phase, float(q.load), float(q.duration), int(q.tx), int(q.rx),
                   bool(stats.flag([q.passed])[0]), bool(stats.flag([q.generator_limited])[0]))


@dataclass
class SearchResult:
    """Outcome of one search.

    Attributes
    ----------
    kind : {"pdr", "ndr"}
    lower : float or None
        Highest load (pps) that passed at full duration: the answer. None if even the
        lowest load failed.
    upper : float or None
        Lowest load that failed at full duration above ``lower`` (None: none failed up to
        the ceiling; the answer is then "at least lower").
    precision : float
        Relative width the search stopped at: (upper - lower) / upper (NaN when either
        end is None).
    trial_seconds : float
        Sum of the trial durations spent.
    probes : list of Probe
        Every trial, in order.
    repeat : int
        Which repeat of its experiment's search it is (0-based; see :func:`run_search`).
    """

    method: str
    kind: str
    lower: float | None
    upper: float | None
    precision: float
    trial_seconds: float
    probes: list[Probe] = field(default_factory=list)
    limited_by_generator: bool = False
    repeat: int = 0

    @property
    def generator_bound(self) -> bool:
        """Whether the generator, not the router, bounded the answer (a trial at ``upper``
        was generator-limited): the router then carries at least ``lower``
        (:func:`routerlab.analysis.stats.generator_bound`). ``limited_by_generator`` says only that
        some trial of the search was limited."""
        return stats.generator_bound([p.load for p in self.probes], [p.generator_limited for p in self.probes],
                                     self.upper)


Measure = Callable[[float, float], tuple[int, int, bool]]


def passes(kind: str, tx: int, rx: int, pdr: float) -> bool:
    """The search criterion for one trial: loss ratio <= pdr (PDR), or rx >= tx (NDR).

    Per trial, not per load: a search passes a load on its median trial (at least half of
    the final trials pass, as MLRsearch with exceed ratio 0.5), which a single lossy trial
    cannot fail. A sweep's PDR (:func:`routerlab.analysis.stats.pdr_load`) tests the *mean* loss of
    each load's K trials instead, which one bad trial can raise above X. The two agree
    when the trials of a load agree."""
    return rx >= tx if kind == "ndr" else (1 - rx / tx) <= pdr


def bisect(measure: Measure, *, kind: str, lo: float, hi: float, pdr: float = stats.PDR_FRACTION,
           precision: float = 0.02, short_duration: float = 0.5, final_duration: float = 2.0,
           final_trials: int = 3) -> SearchResult:
    """Our PDR/NDR search (see the module docstring).

    Parameters
    ----------
    measure : callable
        ``measure(load_pps, duration_s) -> (tx, rx, generator_limited)``.
    kind : {"pdr", "ndr"}
    lo, hi : float
        Search range in pps (``hi``: the generator's ceiling).
    precision : float
        Stop when (upper - lower) / upper <= precision.
    final_trials : int
        Trials per load at full duration; the load passes when at least half of them pass
        (the median trial: the criterion MLRsearch applies with exceed ratio 0.5, so both
        searches answer the same question). One trial is too noisy on a machine with
        steal time. Trials of a load stop once the rest could not change its answer.
    """
    if kind not in ("pdr", "ndr"):
        raise ParameterError("kind", f"must be pdr or ndr, got {kind!r}")
    if not 0 < lo < hi:
        raise ParameterError("lo", f"need 0 < lo < hi, got {lo:g}, {hi:g}")
    if not 0 < precision < 0.5:
        raise ParameterError("precision", f"must be in (0, 0.5), got {precision:g}")
    if final_trials < 1:
        raise ParameterError("final_trials", f"must be at least 1, got {final_trials}")
    probes: list[Probe] = []
    limited = False

    def trial(load, dur, phase):
        # the load passes when at least half of n trials pass: trials stop as soon as the
        # rest cannot change that (two of three that agree decide it)
        nonlocal limited
        n = final_trials if phase == "final" else 1
        good = bad = 0
        while 2 * good < n and 2 * bad <= n:
            tx, rx, lim = measure(load, dur)
            limited |= lim
            ok = (not lim) and passes(kind, tx, rx, pdr)
            good, bad = good + ok, bad + (not ok)
            probes.append(Probe("routerlab", phase, load, dur, tx, rx, ok, lim))
        return 2 * good >= n

    def narrow(low, high, dur, width, phase):
        # low passes (or is None), high fails (or is None): bisect geometrically
        # (a tolerance, so that a bracket widened to exactly the width counts as narrow)
        while low is not None and high is not None and (high - low) / high > width * (1 + 1e-9):
            mid = math.sqrt(low * high)
            if trial(mid, dur, phase):
                low = mid
            else:
                high = mid
        return low, high

    # a bracket as narrow as the precision with short trials, which cost a fraction of a
    # final one each
    if not trial(lo, short_duration, "short"):
        low, high = lo, min(lo / (1 - precision), hi)  # short trials failed: full duration decides lo
    elif trial(hi, short_duration, "short"):
        low, high = hi, None  # the whole range passes: the ceiling is the candidate
    else:
        low, high = narrow(lo, hi, short_duration, precision, "short")
    # full duration: confirm both ends, widening where the short answer does not hold, by
    # steps that start at the precision and double
    step, high_final = precision, False
    if low is not None:
        while not trial(low, final_duration, "final"):
            high, high_final = low, True
            if low <= lo:
                low = None
                break
            low, step = max(low * (1 - step), lo), min(2 * step, 0.5)
    step = precision
    if low is not None and high is not None and not high_final:  # a high that failed at full duration holds
        while trial(high, final_duration, "final"):
            low, high = high, (min(high / (1 - step), hi) if high < hi else None)
            step = min(2 * step, 0.5)
            if high is None:
                break
    low, high = narrow(low, high, final_duration, precision, "final")
    width = (high - low) / high if low is not None and high is not None else float("nan")
    return SearchResult("routerlab", kind, low, high, width, sum(p.duration for p in probes), probes, limited)


def require_mlrsearch():
    """Stop with one line before any measuring when the MLRsearch package, which the
    ``mlrsearch`` method drives, is not installed.

    Raises
    ------
    ToolMissing
        Naming the package and the extra that installs it.
    """
    import importlib.util

    if importlib.util.find_spec("MLRsearch") is None:
        raise ToolMissing("the mlrsearch method needs the MLRsearch package, which is not installed: "
                          "pip install 'routerlab[mlrsearch]' (or leave the method out: --method routerlab)")


def mlrsearch(measure: Measure, *, kind: str, lo: float, hi: float, pdr: float = stats.PDR_FRACTION,
              precision: float = 0.02, short_duration: float = 0.5, final_duration: float = 2.0,
              final_trials: int = 3) -> SearchResult:
    """The same search done by the MLRsearch package (PyPI), driving the same measure.

    Goal: ``final_trials`` full-duration trials' worth of time (duration sum), judged at
    exceed ratio 0.5 (a load is a lower bound when most of that time passed the loss
    target: MLRsearch's counterpart of our pooled trials), the same relative width and
    initial duration.
    """
    from MLRsearch import AbstractMeasurer, Config, MeasurementResult, MultipleLossRatioSearch, SearchGoal

    probes: list[Probe] = []
    limited = False

    class _Measurer(AbstractMeasurer):
        def measure(self, intended_duration, intended_load):
            nonlocal limited
            tx, rx, lim = measure(intended_load, intended_duration)
            limited |= lim
            probes.append(Probe("mlrsearch", "mlr", intended_load, intended_duration, tx, rx,
                                (not lim) and passes(kind, tx, rx, pdr), lim))
            return MeasurementResult(intended_duration=intended_duration, intended_load=intended_load,
                                     offered_count=tx, forwarding_count=min(rx, tx))

    goal = SearchGoal(loss_ratio=0.0 if kind == "ndr" else pdr, exceed_ratio=0.5 if final_trials > 1 else 0.0,
                      relative_width=precision, initial_trial_duration=short_duration,
                      final_trial_duration=final_duration, duration_sum=final_duration * final_trials,
                      preceding_targets=2, fail_fast=False)
    config = Config()
    config.goals = [goal]
    config.min_load = lo
    config.max_load = hi
    config.warmup_duration = 0.0
    config.search_duration_max = 3600.0
    res = MultipleLossRatioSearch(config).search(_Measurer(), debug=lambda msg: None)[goal]
    low = res.relevant_lower_bound.float_load if res.relevant_lower_bound else None
    high = res.relevant_upper_bound.float_load if res.relevant_upper_bound else None
    width = (high - low) / high if low and high else float("nan")
    return SearchResult("mlrsearch", kind, low, high, width, sum(p.duration for p in probes), probes, limited)


def testbed_measure(tb: Testbed, spec: traffic.TrafficSpec, validation: TrialValidation | None = None,
                    attempts: list | None = None, counter: drops.DropCounter | None = None) -> Measure:
    """A :data:`Measure` that runs real trials on ``tb``, each validated: a disturbed trial
    is measured again (``validation``, default :class:`routerlab.measuring.validation.TrialValidation`)
    and answers with the attempt kept. Every attempt's row
    (:meth:`routerlab.measuring.validation.TrialValidation.attempts`) is appended to ``attempts``
    with ``probe`` (0-based count of the calls before it: the probe it belongs to) and
    ``kept``; with a drop ``counter``, each row carries the trial's loss attribution."""
    validation = validation or TrialValidation()
    calls = 0

    def measure(load, duration):
        nonlocal calls

        def trial():
            return traffic.run_trial(tb, load, duration, spec, drops=counter,
                                     probe_period_ms=validation.probe_period_ms).row()

        for row, kept in validation.attempts(trial):
            if attempts is not None:
                attempts.append({"probe": calls, "kept": kept, **row})
        calls += 1
        return row["tx"], row["rx"], row["generator_limited"]
    return measure


def run_search(eng: Engine, sc: Scenario, out, *, kind: str = "both", pdr: float = stats.PDR_FRACTION,
               ceiling_pps: float, final_duration: float = 2.0, precision: float = 0.02, methods=("routerlab",),
               experiment: str = "", final_trials: int = 3, repeats: int = 1, resume: bool = False,
               validation: TrialValidation | None = None, settings: Settings | None = None,
               announce: Callable[[str], None] | None = None) -> list[SearchResult]:
    """Search PDR and/or NDR of an engine (resolved and checked by
    :func:`routerlab.measuring.measurement.measure`) ``repeats`` times, each repeat on a
    fresh testbed with the engine started again (so that a repeat sees what changes
    between runs, not only between trials); write every probe and the results to
    ``out/search_trials.csv`` and ``out/search_results.csv``, each repeat as it finishes,
    with its number in their ``repeat`` column. A disturbed trial is measured again
    (``validation``): each probe says which attempt it is and whether it was disturbed,
    the attempts it replaced are in ``out/superseded_search_trials.csv``, and the results
    carry the threshold and the limit. ``settings`` say how the testbed is made (None: the
    environment's).

    With ``resume``, the repeats ``out`` already holds for this experiment, searched with
    the same kind, methods, ceiling, precision and trials, are kept and read back (an
    interrupted run loses only the repeat it was in); otherwise, or when they were searched
    otherwise, the experiment's earlier searches are replaced. ``announce`` is told each
    repeat's answer. Returns every repeat's results, in order.
    """
    kinds = ["pdr", "ndr"] if kind == "both" else [kind]
    if repeats < 1:
        raise ParameterError("repeats", f"must be at least 1, got {repeats}")
    if "mlrsearch" in methods:
        require_mlrsearch()
    announce = announce or (lambda msg: None)
    engine = eng.name
    spec = traffic.TrafficSpec.for_scenario(sc)
    experiment = experiment or f"{engine}-{sc.name}"
    validation = validation or TrialValidation()
    wanted = {(k, m) for k in kinds for m in methods}
    done = _finished(out, experiment, wanted, ceiling_pps, precision, final_duration, final_trials, pdr) \
        if resume else {}
    done = {i: r for i, r in done.items() if i < repeats}
    if done:
        announce(f"{experiment}: resuming, {len(done)} of its {repeats} repeats already in {out}")
    if _forget(out, experiment, keep=set(done)):
        announce(f"{experiment}: searches of it in {out} made otherwise (or not asked for now) replaced")
    results = []
    for i in range(repeats):
        if i in done:
            results += done[i]
            continue
        found = []
        attempts: list[dict] = []
        with namespaces.make(settings) as tb, drops.attached(tb, router := tb.router(eng)) as counter:
            facts = {**router.bring_up(tb, sc), "loss_attribution": "on" if counter is not None else "off"}
            queue = facts["router_queue_packets"]
            if not (i and _recorded(out, experiment)):
                # a search is an experiment like a sweep: the same environment record, written first
                record.write(out, experiment, router, tb, sc, ceiling_pps, facts, validation)
            measure = testbed_measure(tb, spec, validation, attempts, counter)
            for k in kinds:
                for m in methods:
                    fn = bisect if m == "routerlab" else mlrsearch
                    t0 = time.perf_counter()
                    r = fn(measure, kind=k, lo=ceiling_pps * defaults.SEARCH_LOW_FRACTION, hi=ceiling_pps, pdr=pdr,
                           precision=precision, final_duration=final_duration, final_trials=final_trials)
                    r.wall_seconds = time.perf_counter() - t0
                    r.repeat = i
                    found.append(r)
            router.stop(tb)
        _write(out, experiment, engine, sc, found, ceiling_pps, final_trials, attempts, validation, queue,
               precision=precision, final_duration=final_duration, repeat=i, pdr=pdr)
        results += found
        if repeats > 1:
            announce(f"{experiment}: repeat {i + 1}: "
                     + "; ".join(f"{r.kind.upper()} {r.method} {stats.search_answer(r.lower, r.upper, r.generator_bound)}"
                                 for r in found))
    return results


#: The columns of ``search_results.csv`` that say how a search was made: a repeat is
#: resumed only into a search made the same way.
_HOW = ("target_precision", "final_trial_s", "final_trials", "generator_ceiling_pps", "pdr")


def _finished(out, experiment, wanted, ceiling, precision, final_duration, final_trials, pdr) -> dict[int, list]:
    """The repeats of ``experiment`` that ``out`` holds whole (a result for every wanted
    kind and method), searched the way asked, read back as :class:`SearchResult` by repeat;
    empty when any repeat there was searched otherwise (they are then all measured again)."""
    path = Path(out) / "search_results.csv"
    if not path.is_file():
        return {}
    res = pd.read_csv(path)
    res = res[res["experiment"] == experiment]
    if res.empty:
        return {}
    res = datasets.with_repeats(res)
    asked = (precision, final_duration, final_trials, round(ceiling), pdr)
    for col, value in zip(_HOW, asked):
        if col not in res or not (pd.to_numeric(res[col], errors="coerce") - value).abs().le(1e-9 * max(1, value)).all():
            return {}
    trials_path = Path(out) / "search_trials.csv"
    probes = pd.read_csv(trials_path) if trials_path.is_file() else pd.DataFrame()
    if len(probes):
        probes = probes[probes["experiment"] == experiment]
        probes = datasets.with_repeats(probes)
    out_: dict[int, list] = {}
    for i, g in res.groupby("repeat"):
        if {(r.kind, r.method) for r in g.itertuples()} != wanted:
            continue
        back = []
        for r in g.itertuples():
            p = probes[(probes["repeat"] == i) & (probes["kind"] == r.kind) & (probes["method"] == r.method)] \
                if len(probes) else probes
            back.append(SearchResult(
                r.method, r.kind, None if pd.isna(r.lower_pps) else float(r.lower_pps),
                None if pd.isna(r.upper_pps) else float(r.upper_pps), float(r.precision), float(r.trial_seconds),
                [Probe.from_row(q) for q in p.itertuples()],
                bool(stats.flag([r.limited_by_generator])[0]), int(i)))
        out_[int(i)] = back
    return out_


def _recorded(out, experiment) -> bool:
    """Whether ``out/experiments.csv`` holds ``experiment``'s environment record."""
    path = Path(out) / "experiments.csv"
    return path.is_file() and (pd.read_csv(path, usecols=["experiment"])["experiment"] == experiment).any()


def _forget(out, experiment, keep: set[int]) -> bool:
    """Take ``experiment``'s searches out of ``out``'s search files but the repeats in
    ``keep``: what a search of that name measures replaces them. Whether any result was
    taken out."""
    path = Path(out) / "search_results.csv"
    gone_any = False
    if path.is_file():
        res = pd.read_csv(path)
        rep = repeat_of(res)
        gone_any = bool(((res["experiment"] == experiment) & ~rep.isin(keep)).any())
    for name in ("search_results.csv", "search_trials.csv", SUPERSEDED_SEARCH_TRIALS):
        path = Path(out) / name
        if not path.is_file():
            continue
        df = pd.read_csv(path)
        rep = repeat_of(df)
        gone = (df["experiment"] == experiment) & ~rep.isin(keep)
        if gone.any():
            tmp = path.with_suffix(".tmp")
            df[~gone].to_csv(tmp, index=False)
            tmp.replace(path)
    return gone_any


def _write(out, experiment, engine, sc, results, ceiling, final_trials, attempts=(), validation=None, queue=None,
           precision=None, final_duration=None, repeat: int = 0, pdr: float | None = None):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    probes = pd.DataFrame([{"experiment": experiment, "engine": engine, "scenario": sc.name, "repeat": repeat,
                            "kind": r.kind, **p.__dict__} for r in results for p in r.probes])
    # the measure was called once per probe, in the probes' order
    kept = [a for a in attempts if a["kept"]]
    if kept and len(kept) == len(probes):
        # probe: the trial's row within its experiment's repeat, which its superseded
        # attempts name; started_at tells two trials with the same counts apart; the rest
        # is everything the trial recorded (its CPUs, stops, lags, loss attribution), so
        # that what moves with an answer can be looked for in its trials
        skip = {"kept", "offered_pps", "duration_s", *probes.columns}
        columns = [c for c in kept[0] if c not in skip]
        probes = probes.assign(**{c: [a.get(c) for a in kept] for c in columns})
    superseded = pd.DataFrame([{"experiment": experiment, "engine": engine, "scenario": sc.name, "repeat": repeat, **a}
                               for a in attempts if not a["kept"]]).drop(columns="kept", errors="ignore")
    summary = pd.DataFrame([{"experiment": experiment, "engine": engine, "scenario": sc.name, "repeat": repeat,
                             "method": r.method,
                             "kind": r.kind, "lower_pps": r.lower, "upper_pps": r.upper, "precision": r.precision,
                             "trial_seconds": r.trial_seconds, "trials": len(r.probes),
                             "final_trials": final_trials, "target_precision": precision, "pdr": pdr,
                             "final_trial_s": final_duration,
                             "limited_by_generator": r.limited_by_generator, "generator_ceiling_pps": round(ceiling),
                             "router_queue_packets": queue, **(validation.facts() if validation else {}),
                             "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())} for r in results])
    if "router_queue_packets" in summary:
        summary["router_queue_packets"] = summary["router_queue_packets"].astype("Int64")
    for name, df in (("search_trials.csv", probes), ("search_results.csv", summary),
                     (SUPERSEDED_SEARCH_TRIALS, superseded)):
        path = out / name
        if df.empty and not path.is_file():
            continue
        if path.is_file():
            old = pd.read_csv(path)
            rep = repeat_of(old)
            df = pd.concat([old[(old["experiment"] != experiment) | (rep != repeat)], df], ignore_index=True)
            if "repeat" in df:
                df["repeat"] = repeat_of(df)
        tmp = path.with_suffix(".tmp")
        df.to_csv(tmp, index=False)
        tmp.replace(path)


def format_ratios(results: list[SearchResult]) -> list[str]:
    """Our search against MLRsearch, per kind: the ratio of their answers and of the
    trial-seconds each spent (``bench search``'s figure)."""
    lines = []
    for k in sorted({r.kind for r in results}):
        ours = [r for r in results if r.kind == k and r.method == "routerlab"]
        mlr = [r for r in results if r.kind == k and r.method == "mlrsearch"]
        if ours and mlr and ours[0].lower and mlr[0].lower:
            lines.append(f"{k.upper()}: routerlab / mlrsearch answer = {ours[0].lower / mlr[0].lower:.3f}, "
                         f"trial-seconds = {ours[0].trial_seconds / mlr[0].trial_seconds:.2f}")
    return lines


def repeated(results: list[SearchResult]) -> dict:
    """The repeats of each kind and method made one answer: ``(kind, method)`` ->
    :class:`routerlab.analysis.repeats.Repeated`, in the order first searched."""
    from routerlab.analysis.repeats import Repeated

    keys = list(dict.fromkeys((r.kind, r.method) for r in results))
    out = {}
    for k in keys:
        rs = sorted((r for r in results if (r.kind, r.method) == k), key=lambda r: r.repeat)
        out[k] = Repeated(tuple(r.lower for r in rs),
                          tuple(r.generator_bound or (r.lower is not None and r.upper is None) for r in rs),
                          tuple(r.upper for r in rs))
    return out


def format_repeated(results: list[SearchResult]) -> list[str]:
    """One line per kind and method searched more than once: the median, the range and
    the highest over the lowest (:mod:`routerlab.analysis.repeats`)."""
    lines = []
    for (kind, method), a in repeated(results).items():
        if a.n > 1:
            spread = f"; highest / lowest {a.spread:.3f}" if a.spread == a.spread else ""
            lines.append(f"{method:9} {kind.upper()}: {a.words()}{spread}")
    return lines


def format_result(results: list[SearchResult], cpus: int | None = None) -> list[str]:
    """One line per search result: the answer as :func:`routerlab.analysis.stats.search_answer`
    words it ("at least X pps (limited by the generator)" when the generator bounded it),
    the bracket, the trials spent; and where generator-limited trials were seen. ``cpus``
    (default: this machine's) adds, on 2 CPUs or fewer, that the generator and the router
    share them, so the generator's limit under a router can be below its ceiling measured
    alone."""
    import os

    cpus = cpus or os.cpu_count() or 1
    lines = []
    for r in results:
        bound = r.generator_bound
        ans = stats.search_answer(r.lower, r.upper, bound)
        if r.lower is not None and r.upper is not None and not bound:
            ans += f" (next failing {r.upper:,.0f}, width {r.precision:.1%})"
        note = ""
        if r.limited_by_generator:
            where = sorted({p.load for p in r.probes if p.generator_limited})
            note = "; generator-limited trials at " + ", ".join(f"{x:,.0f}" for x in where) + " pps" + (
                "" if bound else " (not at the failing load: they did not bound the answer)")
            if bound and cpus <= 2:
                note += (f"; the generator and the router share this machine's {cpus} CPUs, so the generator's "
                         "limit under a router can be below its ceiling measured alone")
        rep = f" (repeat {r.repeat + 1})" if any(x.repeat for x in results) else ""
        lines.append(f"{r.method:9} {r.kind.upper()}{rep}: {ans}; {len(r.probes)} trials, "
                     f"{r.trial_seconds:.1f} trial-seconds{note}")
    return lines
