"""Statistics of router benchmarking: loss, intervals, throughput, TIR, PDR/NDR, verdict.

Conventions (the PASTRAMI paper's, made explicit):

- A *trial* sends ``tx`` packets at an offered load ``O`` (packets per second, pps) for
  ``duration`` seconds and sees ``rx`` of them at the sink. Its packet loss ratio is
  ``1 - rx/tx``, a ratio in [0, 1] that may be slightly negative when the receiver
  counts a few extra packets (rx > tx); it is kept as it is, never clipped.
- Per offered load, over ``K`` trials: the mean packet loss ratio ``PLR``, its sample
  standard deviation (ddof = 1) and a two-sided Student-t interval
  ``PLR +/- t * sd / sqrt(K)`` with ``t = scipy.stats.t.ppf(0.975, df)`` and, by
  default, ``df = K - 1``. The authors' notebook used a table indexed by ``K``
  (``df = K``); ``df_convention="k"`` reproduces that and is used by ``mode="notebook"``.
- Delivery ratio ``DR = 1 - PLR``; throughput ``T(O) = O * (1 - PLR)`` in pps.
- Along a sweep with loads ascending, the throughput increase ratio
  ``TIR_i = (T(O_i) - T(O_{i-1})) / (O_i - O_{i-1})`` (dimensionless).
- ``PDR@X`` is the highest tested load such that it and every lower load have
  ``PLR <= X``; ``NDR`` is the same with "no trial lost a packet" (rx >= tx in every
  trial). Both are :class:`RateBound` values that say when the answer lies outside the
  tested range.
- The PLR floor (1e-6) is used only for log-scale display and inside the verdict.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Literal

import numpy as np
import pandas as pd
from scipy.special import stdtrit

from routerlab.defaults import ENTRY_MULTIPLIER, ETA, PDR_FRACTION, PLR_FLOOR  # noqa: F401  (part of stats' API)
from routerlab.errors import ParameterError

Mode = Literal["strict", "notebook"]
DfConvention = Literal["k-1", "k"]

#: Column names of a per-load summary, in order (see :func:`summarize`).
SUMMARY_COLUMNS = [
    "offered_pps", "runs", "plr", "plr_sd", "t_quantile", "ci_half_width",
    "lcl95", "ucl95", "delta_ucl95", "dr", "throughput_pps", "lossless", "tir",
]


@dataclass(frozen=True)
class VerdictParams:
    """Parameters of the PASTRAMI saturation test.

    Attributes
    ----------
    pdr : float
        PDR fraction, a ratio in (0, 1): 0.005 is PDR@0.5%.
    eta : float
        TIR threshold below which the throughput counts as saturated.
    entry_multiplier : float
        ``m``: the first (candidate) saturation load must have ``TIR < eta * m``.
    plr_floor : float
        Mean PLR values below this are raised to it inside the test (and on log axes).
    mode : {"strict", "notebook"}
        ``strict`` is the paper's algorithm; ``notebook`` reproduces the authors'
        published notebook, whose entry test accepts the candidate unconditionally.
    """

    pdr: float = PDR_FRACTION
    eta: float = ETA
    entry_multiplier: float = ENTRY_MULTIPLIER
    plr_floor: float = PLR_FLOOR
    mode: Mode = "strict"

    def __post_init__(self):
        if not 0 < self.pdr < 1:
            raise ParameterError("pdr", f"must be a fraction in (0, 1), got {self.pdr!r}")
        if not self.eta > 0:
            raise ParameterError("eta", f"must be positive, got {self.eta!r}")
        if not self.entry_multiplier >= 1:
            raise ParameterError("entry_multiplier", f"must be >= 1, got {self.entry_multiplier!r}")
        if not 0 < self.plr_floor < self.pdr:
            raise ParameterError("plr_floor", f"must be in (0, pdr), got {self.plr_floor!r}")
        if self.mode not in ("strict", "notebook"):
            raise ParameterError("mode", f"must be 'strict' or 'notebook', got {self.mode!r}")


@dataclass(frozen=True)
class RateBound:
    """A rate found by a threshold along a sweep (PDR or NDR).

    Attributes
    ----------
    load : float or None
        The rate in pps: the answer when ``status == "found"``, the highest tested load
        when ``status == "at_least_max"``, ``None`` when ``status == "below_range"``.
    status : {"found", "below_range", "at_least_max"}
        ``below_range``: the lowest tested load already fails the criterion;
        ``at_least_max``: no tested load fails, the true value is at least ``load``.
    """

    load: float | None
    status: Literal["found", "below_range", "at_least_max"]

    def __str__(self) -> str:
        if self.status == "below_range":
            return "below the tested range"
        if self.status == "at_least_max":
            return f">= {self.load:.0f} pps (at least the highest load)"
        return f"{self.load:.0f} pps"


@dataclass(frozen=True)
class Verdict:
    """Outcome of the PASTRAMI saturation test on one sweep.

    Attributes
    ----------
    good : bool
        True when the PDR load is representative: saturation follows right after it.
    reason : str
        One sentence saying why, with the loads (pps) and TIR values involved.
    pdr_index, candidate_index, saturation_index : int or None
        Positions (in ascending load order) of the first load whose mean PLR exceeds
        the PDR fraction, of the load after it (the candidate saturation point), and of
        the saturation point the test detected (equal to the candidate iff GOOD).
    tir : tuple of float
        TIR values the test used (computed from floored PLR), NaN where not computed.
    params : VerdictParams
        The parameters the test ran with.
    """

    good: bool
    reason: str
    pdr_index: int | None
    candidate_index: int | None
    saturation_index: int | None
    tir: tuple[float, ...]
    params: VerdictParams

    @property
    def label(self) -> str:
        """``"GOOD"`` or ``"BAD"``."""
        return "GOOD" if self.good else "BAD"

    @property
    def advice(self) -> str:
        """What to measure next when the sweep could not be judged (empty otherwise): a
        sweep that never saturates, or saturates only at its highest load, needs loads up
        to the generator's ceiling, or a search."""
        if self.pdr_index is None:
            return ("saturation was not reached: offer loads up to the generator's ceiling "
                    "(routerlab measure --loads-frac ...,1.0) or search for the PDR (routerlab measure --search pdr)")
        if self.candidate_index is None:
            return ("loss first passes the PDR fraction at the highest load: add loads above it, up to the "
                    "generator's ceiling, so that the load after the crossing is tested")
        return ""

    @property
    def still_rising(self) -> bool:
        """Throughput still rises at the candidate saturation load, the load after the PDR
        crossing: its TIR is not below eta * m (the paper's Fig 6 BAD case)."""
        c, p = self.candidate_index, self.params
        return c is not None and not self.tir[c] < p.eta * p.entry_multiplier

    @property
    def why(self) -> str:
        """The reason in a few words, for a figure or a table's caption (the full sentence,
        with loads and TIR values, is :attr:`reason`); with what to do, in a few words too,
        when the sweep could not be judged."""
        if self.pdr_index is None:
            return ("saturation not reached in the tested range "
                    "(to do: loads up to the generator's ceiling, or a search)")
        if self.candidate_index is None:
            return "loss passes the PDR fraction only at the highest load (to do: loads above it)"
        if self.good:
            return "saturation right after the PDR load"
        if self.params.mode == "strict" and self.still_rising:
            return "throughput still rising after the PDR load"
        return "throughput rises again after saturation"

    @property
    def explained(self) -> str:
        """The verdict with its reason, and what to do when there is something to do:
        how a verdict is shown wherever it is shown."""
        return f"{self.label}: {self.reason}" + (f". To do: {self.advice}" if self.advice else "")


def trial_loss(tx, rx) -> np.ndarray:
    """Packet loss ratio of each trial, ``1 - rx/tx`` (may be < 0 when rx > tx).

    Parameters
    ----------
    tx, rx : array-like of int
        Packets offered (sent or refused at the router's input) and packets received.

    Raises
    ------
    ParameterError
        If any trial offered no packets; the message names the first such row.
    """
    tx = np.asarray(tx, dtype=float)
    rx = np.asarray(rx, dtype=float)
    bad = ~(tx > 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ParameterError("tx", f"row {row}: offered packets must be > 0, got {tx[row]:g}")
    return 1.0 - rx / tx


def t_quantile(k, confidence: float = 0.95, df_convention: DfConvention = "k-1"):
    """Two-sided Student-t quantile for ``k`` trials: ``t.ppf((1 + confidence) / 2, df)``,
    computed with ``scipy.special.stdtrit`` (the same number, without loading
    ``scipy.stats``, which alone takes a second to import).

    ``df = k - 1`` by default (the textbook interval for a mean of ``k`` samples);
    ``df_convention="k"`` uses ``df = k`` as the PASTRAMI notebook's table did. Returns
    NaN where ``df < 1`` (a single trial has no interval).
    """
    if df_convention not in ("k-1", "k"):
        raise ParameterError("df_convention", f"must be 'k-1' or 'k', got {df_convention!r}")
    if not 0 < confidence < 1:
        raise ParameterError("confidence", f"must be in (0, 1), got {confidence!r}")
    k = np.asarray(k, dtype=float)
    df = k - 1 if df_convention == "k-1" else k
    with np.errstate(invalid="ignore"):
        q = stdtrit(np.where(df >= 1, df, np.nan), (1 + confidence) / 2)
    return q if q.ndim else float(q)


def mean_interval(x, confidence: float = 0.95, df_convention: DfConvention = "k-1") -> tuple[float, float]:
    """Mean of the values of ``x`` that are not NaN, and the half-width of its Student-t
    interval ``t * sd / sqrt(K)`` (sd with ddof 1). The half-width is NaN for fewer than
    two values; the mean is NaN for none. :func:`summarize` gives the same interval for
    every load of a sweep at once."""
    x = np.asarray(x, dtype=float)
    x = x[~np.isnan(x)]
    if len(x) == 0:
        return (np.nan, np.nan)
    if len(x) < 2:
        return (float(x.mean()), np.nan)
    return (float(x.mean()), float(t_quantile(len(x), confidence, df_convention) * x.std(ddof=1) / np.sqrt(len(x))))


def crosses(lcl95, ucl95, level: float = PDR_FRACTION) -> np.ndarray:
    """Whether each load's 95% interval of the mean loss contains ``level`` (a ratio; the
    PDR fraction by default): whether the load passes PDR@X is uncertain there."""
    return (np.asarray(lcl95, dtype=float) <= level) & (np.asarray(ucl95, dtype=float) > level)


def throughput_increase_ratio(offered, plr) -> np.ndarray:
    """TIR of each load against the one before it; NaN for the first.

    Parameters
    ----------
    offered : array-like
        Offered loads in pps, strictly ascending.
    plr : array-like
        Mean packet loss ratio at each load.

    Returns
    -------
    numpy.ndarray
        ``(T(O_i) - T(O_{i-1})) / (O_i - O_{i-1})`` with ``T(O) = O * (1 - PLR)``.
    """
    o = np.asarray(offered, dtype=float)
    t = o * (1 - np.asarray(plr, dtype=float))
    out = np.full(o.shape, np.nan)
    if o.size > 1:
        do = np.diff(o)
        if (do <= 0).any():
            raise ParameterError("offered", "loads must be strictly ascending for TIR")
        out[1:] = np.diff(t) / do
    return out


def summarize(
    trials: pd.DataFrame,
    *,
    load: str = "offered_pps",
    tx: str = "tx",
    rx: str = "rx",
    by: str | list[str] | None = None,
    confidence: float = 0.95,
    df_convention: DfConvention = "k-1",
    plr_floor: float = 1e-6,
) -> pd.DataFrame:
    """Per-load statistics of a sweep (one row per offered load, loads ascending).

    Trials at the same load are pooled, whatever their order in the input.

    Parameters
    ----------
    trials : pandas.DataFrame
        One row per trial (long form), with the columns named by ``load``, ``tx``, ``rx``.
    load, tx, rx : str
        Column names: offered load (pps), packets offered, packets received.
    by : str or list of str, optional
        Columns that identify a sweep (e.g. ``"experiment"``); each is summarised alone.
    confidence : float
        Level of the two-sided interval (0.95 gives the 95% limits).
    df_convention : {"k-1", "k"}
        Degrees of freedom of the t quantile (see :func:`t_quantile`).
    plr_floor : float
        Floor of the PLR in the denominator of ``delta_ucl95``, so that a load with no
        loss gives a finite value; display only.

    Returns
    -------
    pandas.DataFrame
        Columns ``by`` + :data:`SUMMARY_COLUMNS`: ``runs`` (K), ``plr`` (mean loss
        ratio), ``plr_sd`` (ddof 1; NaN for K = 1), ``t_quantile``, ``ci_half_width``,
        ``lcl95``/``ucl95`` (interval limits, unclipped; NaN for K = 1),
        ``delta_ucl95`` = (UCL - PLR) / max(PLR, floor), ``dr`` = 1 - PLR,
        ``throughput_pps`` = O (1 - PLR), ``lossless`` (every trial had rx >= tx) and
        ``tir`` along each sweep.
    """
    keys = [] if by is None else ([by] if isinstance(by, str) else list(by))
    missing = [c for c in keys + [load, tx, rx] if c not in trials.columns]
    if missing:
        raise ParameterError("trials", f"missing column(s) {', '.join(missing)}")
    df = pd.DataFrame({k: trials[k] for k in keys})
    df["offered_pps"] = trials[load].astype(float)
    df["_loss"] = trial_loss(trials[tx].to_numpy(), trials[rx].to_numpy())
    df["_lossless"] = trials[rx].to_numpy() >= trials[tx].to_numpy()
    g = df.groupby(keys + ["offered_pps"], sort=True)
    out = g.agg(runs=("_loss", "size"), plr=("_loss", "mean"), plr_sd=("_loss", "std"),
                lossless=("_lossless", "all")).reset_index()
    k = out["runs"].to_numpy()
    out["t_quantile"] = t_quantile(k, confidence, df_convention)
    out["ci_half_width"] = out["t_quantile"] * out["plr_sd"] / np.sqrt(k)
    out["lcl95"] = out["plr"] - out["ci_half_width"]
    out["ucl95"] = out["plr"] + out["ci_half_width"]
    out["delta_ucl95"] = out["ci_half_width"] / np.maximum(out["plr"], plr_floor)
    out["dr"] = 1 - out["plr"]
    out["throughput_pps"] = out["offered_pps"] * out["dr"]
    # TIR within each sweep: rows are sorted by keys then load, so a shift per group works.
    dt = out["throughput_pps"].diff()
    do = out["offered_pps"].diff()
    first = np.ones(len(out), dtype=bool)
    if keys and len(out):
        first[1:] = (out[keys].iloc[1:].to_numpy() != out[keys].iloc[:-1].to_numpy()).any(axis=1)
    elif len(out):
        first[1:] = False
    out["tir"] = np.where(first, np.nan, dt / do)
    return out[keys + SUMMARY_COLUMNS]


def _first_failure(passes: np.ndarray, offered: np.ndarray) -> RateBound:
    fails = np.flatnonzero(~passes)
    if fails.size == 0:
        return RateBound(float(offered[-1]), "at_least_max")
    if fails[0] == 0:
        return RateBound(None, "below_range")
    return RateBound(float(offered[fails[0] - 1]), "found")


def _ascending(offered, *others):
    o = np.asarray(offered, dtype=float)
    if o.size == 0:
        raise ParameterError("offered", "no loads given")
    order = np.argsort(o, kind="stable")
    o = o[order]
    if (np.diff(o) == 0).any():
        raise ParameterError("offered", "repeated loads: pool their trials first (summarize)")
    return (o, *(np.asarray(x)[order] for x in others))


def pdr_load(offered, plr, fraction: float = PDR_FRACTION) -> RateBound:
    """PDR@X: the highest load such that it and every lower load have ``PLR <= fraction``.

    ``plr`` is the *mean* over the K trials of each load of a sweep. A search
    (:func:`routerlab.measuring.search.passes`) judges each trial on its own and passes a load on its
    median trial instead; the two agree when the trials of a load agree.

    Parameters
    ----------
    offered : array-like
        Offered loads in pps (any order, no repeats).
    plr : array-like
        Mean packet loss ratio at each load (raw, not floored).
    fraction : float
        X as a ratio: 0.005 for PDR@0.5%.
    """
    o, p = _ascending(offered, plr)
    return _first_failure(p <= fraction, o)


def ndr_load(offered, lossless) -> RateBound:
    """NDR: the highest load such that it and every lower load lost no packet in any trial.

    Parameters
    ----------
    offered : array-like
        Offered loads in pps (any order, no repeats).
    lossless : array-like of bool
        Whether every trial at that load had rx >= tx.
    """
    o, ok = _ascending(offered, lossless)
    return _first_failure(ok.astype(bool), o)


def generator_bound(loads, generator_limited, upper) -> bool:
    """Whether a search's answer is the generator's limit rather than the router's.

    A search (:mod:`routerlab.measuring.search`) answers the highest load that passed below the lowest
    load that failed at full duration (``upper``), and a trial the generator could not
    deliver counts as failed. So the generator bounds the answer when a trial at ``upper``
    was generator-limited, or when no load failed (``upper`` None or NaN) and a trial was
    limited: the router then carries *at least* the answer. A generator-limited trial at
    another load (a first short probe at the ceiling) does not bound the answer.

    Parameters
    ----------
    loads : array-like
        Offered load of each trial of the search, pps.
    generator_limited : array-like of bool
        Whether the generator could not keep that trial's rate.
    upper : float or None
        The search's lowest failing load, pps (None or NaN: none failed).
    """
    loads = np.asarray(loads, dtype=float)
    limited = np.asarray(generator_limited, dtype=bool)
    if upper is None or np.isnan(upper):
        return bool(limited.any())
    return bool(limited[np.isclose(loads, upper, rtol=1e-9, atol=0)].any())


#: Why a search's answer is only a lower bound, as every table says it (:func:`bound_reason`).
LIMITED_BY_GENERATOR = "limited by the generator"
PASSED_AT_CEILING = "passed at the ceiling"


def bound_reason(bounded: bool, upper) -> str:
    """Why a search's answer is only a lower bound: :data:`LIMITED_BY_GENERATOR` when the
    generator bounded it (:func:`generator_bound`), else :data:`PASSED_AT_CEILING` when no
    load failed (``upper``, the lowest failing load in pps, None or NaN); "" for an answer
    that is the router's own."""
    if bounded:
        return LIMITED_BY_GENERATOR
    return PASSED_AT_CEILING if upper is None or np.isnan(upper) else ""


def search_answer(lower, upper, bounded: bool) -> str:
    """A search's answer in words, as every table, figure and command shows it: ``X pps``;
    ``at least X pps (limited by the generator)`` when the generator bounded it (see
    :func:`generator_bound`), which is never to be set against another engine as a ratio;
    ``at least X pps (passed at the ceiling)`` when no failing load bounds it; or ``below the search range``.

    Parameters
    ----------
    lower, upper : float or None
        The answer and the lowest failing load, pps (None or NaN: none).
    bounded : bool
        Whether the generator bounded the answer.
    """
    if lower is None or np.isnan(lower):
        return "below the search range"
    why = bound_reason(bounded, upper)
    return f"at least {lower:,.0f} pps ({why})" if why else f"{lower:,.0f} pps"


def flag(values) -> pd.Series:
    """A true/false column as routerlab's CSV files hold it (``True``/``False``, or
    ``1``/``0``) as booleans; anything else is false."""
    return pd.Series(values).astype(str).str.lower().isin(["true", "1"])


def searches_bound(results: pd.DataFrame, trials: pd.DataFrame | None) -> np.ndarray:
    """:func:`generator_bound` of every search of one dataset: ``results`` as in
    ``search_results.csv``, ``trials`` as in ``search_trials.csv`` (a search is its
    experiment, kind and method). Without the trials, the results' own
    ``limited_by_generator`` flag (a limited trial was seen anywhere) stands in. A search
    repeated (a ``repeat`` column) is judged repeat by repeat."""
    flags = flag(results["limited_by_generator"]).to_numpy()
    if trials is None or not len(trials):
        return flags
    keys = ["experiment", "kind", "method"] + (["repeat"] if "repeat" in results and "repeat" in trials else [])
    lim = flag(trials["generator_limited"])
    groups = dict(iter(trials.assign(_lim=lim).groupby(keys)))
    out = []
    for flagged, row in zip(flags, results[keys + ["upper_pps"]].itertuples(index=False)):
        t = groups.get(tuple(row[:-1]))
        out.append(flagged if t is None else generator_bound(t["load"], t["_lim"], row[-1]))
    return np.array(out, dtype=bool)


def saturation_verdict(offered, plr, params: VerdictParams | None = None, **overrides) -> Verdict:
    """The PASTRAMI GOOD/BAD verdict: is PDR@X representative of the router's saturation?

    Find the first load whose mean PLR (floored at ``plr_floor``) exceeds the PDR
    fraction; the load after it is the candidate saturation point. In ``strict`` mode the
    sweep is GOOD iff the TIR at the candidate is below ``eta * m`` and every later TIR
    is below ``eta``. In ``notebook`` mode the candidate is accepted unconditionally (as
    the authors' published notebook does through Python's operator precedence) and only
    the later TIRs are tested. No load above the threshold, or a first exceedance at the
    highest load (no candidate), is BAD with that reason.

    Parameters
    ----------
    offered : array-like
        Offered loads in pps (any order, no repeats).
    plr : array-like
        Mean packet loss ratio at each load.
    params : VerdictParams, optional
        Test parameters; keyword ``overrides`` replace single fields
        (``pdr``, ``eta``, ``entry_multiplier``, ``plr_floor``, ``mode``).
    """
    params = replace(params or VerdictParams(), **overrides)
    o, p = _ascending(offered, plr)
    p = np.maximum(p.astype(float), params.plr_floor)
    n = o.size
    tir = np.full(n, np.nan)
    above = np.flatnonzero(p > params.pdr)
    pct = f"{params.pdr:.2%}"
    if above.size == 0:
        return Verdict(False, f"no load has mean PLR above {pct}: saturation not reached in "
                       f"the tested range (highest load {o[-1]:.0f} pps)", None, None, None,
                       tuple(tir), params)
    first = int(above[0])
    if first + 1 >= n:
        return Verdict(False, f"mean PLR first exceeds {pct} at the highest load ({o[first]:.0f} "
                       "pps): no candidate saturation load after it", first, None, None,
                       tuple(tir), params)
    cand = first + 1
    t = o * (1 - p)
    tir[cand:] = (t[cand:] - t[cand - 1:-1]) / (o[cand:] - o[cand - 1:-1])
    eta, entry = params.eta, params.eta * params.entry_multiplier

    in_sat, sat = False, None
    for i in range(cand, n):
        if in_sat:
            passes = tir[i] < eta
        else:
            passes = True if params.mode == "notebook" else tir[i] < entry
        if passes:
            if not in_sat:
                sat = i
            in_sat = True
        else:
            in_sat, sat = False, None

    good = sat == cand
    head = f"mean PLR first exceeds {pct} at {o[first]:.0f} pps; candidate saturation {o[cand]:.0f} pps"
    if good:
        entry_txt = ("accepted unconditionally (notebook mode)" if params.mode == "notebook"
                     else f"TIR {tir[cand]:.3g} < eta*m = {entry:g}")
        later = (f"every later TIR < eta = {eta:g}" if cand + 1 < n
                 else "no load after it to test against eta (it is the highest)")
        reason = f"{head}: {entry_txt}, {later}"
    elif params.mode == "strict" and not tir[cand] < entry:
        reason = (f"{head}: TIR there is {tir[cand]:.3g}, not below eta*m = {entry:g} "
                  "(throughput still rising after the PDR load)")
    else:
        later = [i for i in range(cand + 1, n) if not tir[i] < eta]
        i = later[0]
        reason = (f"{head}: TIR {tir[i]:.3g} at {o[i]:.0f} pps is not below eta = {eta:g} "
                  "(throughput rises again after saturation)")
    return Verdict(good, reason, first, cand, sat, tuple(tir), params)


@dataclass
class Assessment:
    """Everything routerlab says about one sweep (one experiment).

    Attributes
    ----------
    experiment : str
        Experiment identifier.
    summary : pandas.DataFrame
        Per-load statistics (see :func:`summarize`).
    verdict : Verdict
        The PASTRAMI verdict.
    pdr : RateBound
        PDR at the verdict's PDR fraction.
    ndr : RateBound
        No-drop rate.
    notes : list of str
        Caveats, e.g. loads with a single trial (no interval).
    """

    experiment: str
    summary: pd.DataFrame
    verdict: Verdict
    pdr: RateBound
    ndr: RateBound
    notes: list[str] = field(default_factory=list)

    @property
    def saturation_load(self) -> float | None:
        """Detected saturation load in pps (None when none was detected)."""
        i = self.verdict.saturation_index
        return None if i is None else float(self.summary["offered_pps"].iloc[i])

    def record(self) -> dict:
        """A flat, JSON-serialisable description (one line of ``routerlab assess``)."""
        return {
            "experiment": self.experiment,
            "verdict": self.verdict.label,
            "mode": self.verdict.params.mode,
            "pdr_pps": self.pdr.load if self.pdr.status == "found" else None,
            "pdr_status": self.pdr.status,
            "ndr_pps": self.ndr.load if self.ndr.status == "found" else None,
            "ndr_status": self.ndr.status,
            "saturation_pps": self.saturation_load,
            "loads": int(len(self.summary)),
            "runs_min": int(self.summary["runs"].min()),
            "runs_max": int(self.summary["runs"].max()),
            "reason": self.verdict.reason,
            "why": self.verdict.why,
            "advice": self.verdict.advice,
            "notes": list(self.notes),
            "params": asdict(self.verdict.params),
        }


def assess(
    trials: pd.DataFrame,
    *,
    experiment: str = "experiment",
    load: str = "offered_pps",
    tx: str = "tx",
    rx: str = "rx",
    params: VerdictParams | None = None,
    df_convention: DfConvention | None = None,
    **overrides,
) -> list[Assessment]:
    """Summarise and judge every experiment (sweep) in a long-form trial table.

    Parameters
    ----------
    trials : pandas.DataFrame
        One row per trial; ``experiment`` names the column that identifies a sweep
        (absent: the whole table is one sweep named ``"experiment"``).
    params : VerdictParams, optional
        Verdict parameters; keyword ``overrides`` replace single fields.
    df_convention : {"k-1", "k"}, optional
        Degrees of freedom of the interval; default ``"k-1"``, or ``"k"`` in notebook
        mode (the authors' table), so notebook-mode bands match their figures.

    Returns
    -------
    list of Assessment
        One per experiment, in order of first appearance.
    """
    params = replace(params or VerdictParams(), **overrides)
    dfc = df_convention or ("k" if params.mode == "notebook" else "k-1")
    excluded = {}
    if "generator_limited" in trials.columns:
        # a trial the generator could not deliver measures the generator, not the router
        lim = flag(trials["generator_limited"])
        if lim.any():
            exp_col = trials[experiment] if experiment in trials.columns else pd.Series("experiment", trials.index)
            for (name, o), n in trials[lim].groupby([exp_col[lim], trials.loc[lim, load]]).size().items():
                excluded.setdefault(str(name), []).append(f"{n} at {o:.0f} pps")
            trials = trials[~lim]
    if experiment not in trials.columns:
        trials = trials.assign(**{experiment: "experiment"})
    # a trial that received more than it sent keeps its negative loss, and is reported: the
    # sink counted packets that were not sent (duplicates, counters read at different
    # moments), which is not a router that lost nothing
    more = {}
    extra = trials[rx].to_numpy() > trials[tx].to_numpy()
    if extra.any():
        for (name, o), n in trials[extra].groupby([experiment, load]).size().items():
            more.setdefault(str(name), []).append(f"{n} at {o:.0f} pps")
    summ = summarize(trials, load=load, tx=tx, rx=rx, by=experiment, df_convention=dfc,
                     plr_floor=params.plr_floor)
    order = pd.unique(trials[experiment])
    out = []
    # summarize sorts by experiment, so each experiment's loads are one run of rows; slicing
    # them costs a tenth of a groupby with a column dropped from every group.
    names = summ[experiment].to_numpy()
    body = summ.drop(columns=experiment)
    starts = np.flatnonzero(np.r_[True, names[1:] != names[:-1]]) if len(names) else np.array([], int)
    for start, end in zip(starts, np.r_[starts[1:], len(names)]):
        name = names[start]
        s = body.iloc[start:end].reset_index(drop=True)
        o = s["offered_pps"].to_numpy()
        notes = []
        if str(name) in excluded:
            notes.append("generator-limited trials left out (not router loss): " + ", ".join(excluded[str(name)]))
        if str(name) in more:
            notes.append("rx > tx (negative loss, kept as it is) in trials: " + ", ".join(more[str(name)]))
        single = o[s["runs"].to_numpy() < 2]
        if single.size:
            notes.append("one trial only at " + ", ".join(f"{x:g}" for x in single)
                         + " pps: no confidence interval there")
        out.append(Assessment(
            experiment=str(name), summary=s,
            verdict=saturation_verdict(o, s["plr"].to_numpy(), params),
            pdr=pdr_load(o, s["plr"].to_numpy(), params.pdr),
            ndr=ndr_load(o, s["lossless"].to_numpy()),
            notes=notes))
    rank = {str(n): i for i, n in enumerate(order)}
    out.sort(key=lambda a: rank[a.experiment])
    return out


def representative_pair(assessments: list[Assessment]) -> list[Assessment]:
    """A GOOD experiment and a BAD one whose throughput still rises after its PDR load
    (the paper's Fig 6 contrast), chosen deterministically: the first of each kind."""
    good = next((a for a in assessments if a.verdict.good), None)
    bad = next((a for a in assessments if not a.verdict.good and a.verdict.still_rising), None)
    bad = bad or next((a for a in assessments if not a.verdict.good), None)
    return [a for a in (good, bad) if a is not None]


def records(assessments: list[Assessment]) -> pd.DataFrame:
    """One row per experiment (:meth:`Assessment.record`, without the nested params)."""
    return pd.DataFrame([{k: v for k, v in a.record().items() if k not in ("params", "notes")}
                         | {"notes": "; ".join(a.notes)} for a in assessments])


def summaries(assessments: list[Assessment]) -> pd.DataFrame:
    """Every per-load summary stacked, with the experiment and its verdict as columns (long form)."""
    return pd.concat([a.summary.assign(experiment=a.experiment, verdict=a.verdict.label) for a in assessments],
                     ignore_index=True)


#: The label of the loss no counter accounts for, in :func:`loss_places`.
UNEXPLAINED = "unexplained"


def loss_places(trials: pd.DataFrame, drops: pd.DataFrame) -> pd.DataFrame:
    """Where each load's loss happened: the mean loss ratio (in [0, 1], of the packets
    offered) that each counter took, per experiment and load.

    Parameters
    ----------
    trials : pandas.DataFrame
        Trials with ``experiment``, ``offered_pps``, ``trial``, ``tx`` and
        ``lost_unexplained`` (a testbed dataset's ``trials.csv``).
    drops : pandas.DataFrame
        Every counter that moved in those trials (``drops.csv``: experiment, offered_pps,
        trial, place, reason, packets, counted_as); only the ``loss`` rows count.

    Returns
    -------
    pandas.DataFrame
        experiment, offered_pps, ``where`` ("dut CPU_BACKLOG", ..., and
        :data:`UNEXPLAINED`), ``loss`` (mean over the load's trials; a trial where that
        counter did not move adds 0) and ``trials``. ``unexplained`` is negative where the
        counters took more packets than were lost (a counter that also counts packets the
        sink still received). Generator-limited trials are left out, as in :func:`assess`.
    """
    keys = ["experiment", "offered_pps", "trial"]
    t = trials[keys + ["tx", "lost_unexplained"]
               + (["generator_limited"] if "generator_limited" in trials else [])].copy()
    if "generator_limited" in t:
        t = t[~flag(t.pop("generator_limited")).to_numpy()]
    t = t[pd.to_numeric(t["lost_unexplained"], errors="coerce").notna()]
    lost = drops[drops["counted_as"] == "loss"].assign(where=lambda d: d["place"] + " " + d["reason"])
    # every kept trial gets a row before its unexplained share is set: a trial where no
    # counter moved (all of its loss unexplained) must not lose that loss
    per_trial = (lost.pivot_table(index=keys, columns="where", values="packets", aggfunc="sum")
                 .reindex(t.set_index(keys).index).fillna(0))
    per_trial[UNEXPLAINED] = t.set_index(keys)["lost_unexplained"].astype(float)
    ratios = per_trial.div(t.set_index(keys)["tx"].astype(float).clip(lower=1), axis=0)
    means = ratios.groupby(level=["experiment", "offered_pps"]).mean()
    counts = ratios.groupby(level=["experiment", "offered_pps"]).size().rename("trials")
    out = means.stack().rename("loss").reset_index().rename(columns={"level_2": "where"})
    out.columns = ["experiment", "offered_pps", "where", "loss"]
    return out.merge(counts.reset_index(), on=["experiment", "offered_pps"])
